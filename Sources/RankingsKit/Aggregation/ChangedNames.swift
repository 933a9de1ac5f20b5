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
    /// A filter in front of `names`, built by `seal`: each name sets two bits of one word,
    /// chosen by `quickHash`. Nearly every line of a base is in no change file, and this says
    /// so with one load from a table of 2 bytes a name, instead of probing the interner's
    /// larger arrays (which cost the read about 80 ns a line).
    private var filter: UnsafeMutablePointer<UInt64>
    private var filterMask = 0

    init() {
        filter = .allocate(capacity: 1)
        filter.initialize(to: 0)
    }

    deinit { filter.deallocate() }

    var count: Int { names.count }

    /// A name in change file `layer` (1 or more); before `seal`.
    func add(_ name: UnsafeBufferPointer<UInt8>, layer: Int) {
        let (index, isNew) = names.intern(name)
        if isNew {
            latest.append(Int32(layer))
        } else {
            latest[index] = max(latest[index], Int32(layer))
        }
    }

    /// Builds the filter once every name is in: 16 bits a name (a line of no change file passes
    /// it about once in 60), at least one page.
    func seal() {
        var words = 512
        while words * 64 < names.count * 16 { words *= 2 }
        filter.deallocate()
        filter = .allocate(capacity: words)
        filter.initialize(repeating: 0, count: words)
        filterMask = words - 1
        for index in 0..<names.count {
            let h = names.withKey(index) { Self.quickHash($0.baseAddress!, $0.count) }
            filter[Int(truncatingIfNeeded: h >> 32) & filterMask] |= Self.bits(h)
        }
    }

    /// The highest change file holding `name`, 0 when none does; after `seal`.
    @inline(__always)
    func latestLayer(of name: UnsafeBufferPointer<UInt8>) -> Int {
        let h = Self.quickHash(name.baseAddress!, name.count)
        let bits = Self.bits(h)
        guard filter[Int(truncatingIfNeeded: h >> 32) & filterMask] & bits == bits,
              let index = names.index(of: name) else { return 0 }
        return Int(latest[index])
    }

    @inline(__always)
    private static func bits(_ h: UInt64) -> UInt64 { (1 << (h & 63)) | (1 << ((h >> 6) & 63)) }

    /// A hash of every byte of the name in four independent lanes of 8-byte words, so its cost
    /// is a few multiplications deep, not one per word (names are about 130 bytes, and a
    /// collection's ids may share their last bytes: `{device}_{joke}_{week}`).
    @inline(__always)
    static func quickHash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        let m: UInt64 = 0x9E37_79B9_7F4A_7C15
        @inline(__always) func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
            let x = (h ^ word) &* m
            return x ^ (x >> 29)
        }
        let raw = UnsafeRawPointer(p)
        @inline(__always) func word(_ at: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
        var a = UInt64(truncatingIfNeeded: n) &* m, b: UInt64 = 1, c: UInt64 = 2, d: UInt64 = 3
        guard n >= 8 else {
            var last: UInt64 = 0
            for i in 0..<n { last |= UInt64(p[i]) << UInt64(8 * i) }
            return mix(a, last)
        }
        var i = 0
        while i + 32 <= n {
            a = mix(a, word(i))
            b = mix(b, word(i + 8))
            c = mix(c, word(i + 16))
            d = mix(d, word(i + 24))
            i += 32
        }
        while i + 8 <= n {
            a = mix(a, word(i))
            i += 8
        }
        // The last 8 bytes, overlapping those already read.
        b = mix(b, word(n - 8))
        let h = mix(mix(a ^ (b << 21 | b >> 43), c), d)
        return h ^ (h >> 32)
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

    /// The check a line consumer makes, holding `names` unretained: the input file owns it for
    /// the whole run, and a reference counted on every line by two threads at once would cost
    /// more than the lookup itself.
    var check: LayerCheck { LayerCheck(number: number, names: Unmanaged.passUnretained(names)) }
}

/// Whether a later layer replaced a line: the one question a layered folder adds to reading a
/// line, asked only of lines that are not valid flat records.
protocol LineLayer {
    func replaces(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool
}

/// Any input outside a layered folder: nothing is ever replaced, and the check compiles away.
struct NoLayer: LineLayer {
    @inline(__always)
    func replaces(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool { false }
}

struct LayerCheck: LineLayer {
    let number: Int
    let names: Unmanaged<ChangedNames>

    /// Whether a later change file holds the document this line is: the line is then no part
    /// of the snapshot. A name spelled with an escape (or not first) is never found: change
    /// files hold no such name, so such a base line is simply never replaced.
    @inline(__always)
    func replaces(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        guard let name = ChangedNames.leadingName(start, end) else { return false }
        return names._withUnsafeGuaranteedRef { $0.latestLayer(of: name) } > number
    }
}
