import Glibc

/// The documents a layered night folder's change files hold: each `name`, with the highest
/// change file that holds it. Built once, before the run reads any line, then only read, by
/// every thread at once.
///
/// Keys are the name's bytes as the line spells them between `{"name":"` and the next `"`:
/// the fetch writes names first and without escapes, so a line's name is found without
/// decoding it, and a name a line spells with an escape never matches one (see `ChangeLayer`).
final class ChangedNames: @unchecked Sendable {
    private let names = ByteInterner()
    /// Per interned name: the highest change file number that holds it.
    private var latest: [Int32] = []

    init() {}

    var count: Int { names.count }

    /// A name in change file `layer` (1 or more).
    func add(_ name: UnsafeBufferPointer<UInt8>, layer: Int) {
        let (index, isNew) = names.intern(name)
        if isNew {
            latest.append(Int32(layer))
        } else {
            latest[index] = max(latest[index], Int32(layer))
        }
    }

    /// The highest change file holding `name`, 0 when none does.
    @inline(__always)
    func latestLayer(of name: UnsafeBufferPointer<UInt8>) -> Int {
        guard let index = names.index(of: name) else { return 0 }
        return Int(latest[index])
    }

    /// `{"name":` as one little-endian word, then the `"` that opens the name: how every line
    /// the fetch writes starts.
    private static let prefixWord = UInt64(littleEndian: 0x3A22_656D_616E_227B)
    static let prefixLength = 9

    /// The name a line starts with as `{"name":"NAME"`, without looking at the rest of it; nil
    /// when the line does not start so. NAME may hold a backslash (the start of an escape,
    /// maybe of an escaped quote): the caller decides what that means.
    @inline(__always)
    static func leadingName(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let from = start + prefixLength
        guard from < end, UnsafeRawPointer(start).loadUnaligned(as: UInt64.self) == prefixWord,
              start[8] == UInt8(ascii: "\""),
              let quote = memchr(from, Int32(UInt8(ascii: "\"")), end - from) else { return nil }
        return UnsafeBufferPointer(start: from, count: UnsafePointer<UInt8>(quote.assumingMemoryBound(to: UInt8.self)) - from)
    }
}

/// Where one input file stands in its layered folder: the base is layer 0, change file
/// `STEM.changes-000007.ndjson` layer 7.
struct ChangeLayer: Sendable {
    let number: Int
    let names: ChangedNames

    /// Whether a later change file holds the document this line is: the line is then no part
    /// of the snapshot. A name spelled with an escape (or not first) is never found: change
    /// files hold no such name, so such a base line is simply never replaced.
    @inline(__always)
    func replaces(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        guard let name = ChangedNames.leadingName(start, end) else { return false }
        return names.latestLayer(of: name) > number
    }
}
