import Glibc

/// Why a line is a bad line, and the one place its message is worded.
public enum BadRecord: Sendable, Equatable {
    case malformed(Malformation, byte: Int)
    case invalid(InvalidRecord)
    /// Longer than `LineReader.maxLineLength`: skipped unread.
    case overlong
    /// A timestamp an option needs (`--as-of`, `--since`, `--dedupe device`) that is none of
    /// the readable forms; `value` is its text, shown so the operator sees what the export wrote.
    case unreadableTimestamp(value: String)

    var message: String {
        switch self {
        case .malformed(let why, let byte): "malformed JSON: \(why.message) at byte \(byte)"
        case .invalid(let why): "invalid record: \(why.message)"
        case .overlong: "malformed JSON: line longer than \(LineReader.maxLineLength >> 20) MiB"
        case .unreadableTimestamp(let value):
            "invalid record: timestamp \(value) is not an RFC 3339 string or a {seconds, nanoseconds} object"
        }
    }
}

/// The input rules every command shares: a line is blank, bad, or a valid rating event with a
/// joke id and a rating. `aggregate` and `migrate` both judge lines here, so they always agree.
struct RecordValidator: ~Copyable {
    enum Verdict {
        case blank
        case bad(BadRecord)
        /// `id` points into the line or into scratch storage, valid until the next line.
        case valid(id: UnsafeBufferPointer<UInt8>, rating: Double)
    }

    private(set) var scanner: JSONLineScanner
    private(set) var decoder = RecordDecoder()

    init(wanted: FieldSet = .ratingOnly) {
        scanner = JSONLineScanner(wanted: wanted)
    }

    /// The captured top-level fields of the last line judged valid (for the options that need more).
    var fields: CapturedFields { scanner.fields }

    /// Judges the line from `start` to its first `\n`; afterwards `lineEnd(from:)` finds that `\n`.
    @inline(__always)
    mutating func judge(_ start: UnsafePointer<UInt8>) -> Verdict {
        switch scanner.scan(start) {
        case .blank: return .blank
        case .object: break
        case .notObject: return .bad(.invalid(.notObject))
        case .malformed: return .bad(.malformed(scanner.failure, byte: scanner.failOffset + 1))
        }
        let id: UnsafeBufferPointer<UInt8>
        switch decoder.jokeID(scanner.fields[.jokeID], escaped: scanner.fields.isEscaped(.jokeID)) {
        case .success(let value): id = value
        case .failure(let why): return .bad(.invalid(why))
        }
        switch decoder.rating(scanner.fields[.rating]) {
        case .success(let rating): return .valid(id: id, rating: rating)
        case .failure(let why): return .bad(.invalid(why))
        }
    }

    /// The `\n` that ends the line last judged: found by the scan, or, for a malformed line the
    /// scan abandoned part way, searched for from where it stopped.
    /// `dataEnd` is the `\n` that the caller guarantees after the data.
    @inline(__always)
    func lineEnd(from start: UnsafePointer<UInt8>, dataEnd: UnsafePointer<UInt8>, verdict: Verdict) -> UnsafePointer<UInt8> {
        if case .bad(.malformed) = verdict {
            let from = start + scanner.failOffset
            let hit = memchr(from, 0x0A, dataEnd - from + 1)!
            return UnsafePointer(hit.assumingMemoryBound(to: UInt8.self))
        }
        return scanner.lineEnd!
    }

    /// The string fields and the timestamp the backfill options read, after `judge`.
    @inline(__always)
    mutating func string(_ field: Field) -> UnsafeBufferPointer<UInt8>? {
        decoder.string(scanner.fields[field], slot: field, escaped: scanner.fields.isEscaped(field))
    }

    mutating func timestamp() -> Timestamp?? {
        guard let raw = scanner.fields[.timestamp] else { return nil }
        return .some(decoder.timestamp(raw))
    }
}

extension RecordValidator: RatingEventDetails {
    mutating func timestamp() -> EventTime {
        guard let raw = scanner.fields[.timestamp] else { return .absent }
        guard let instant = decoder.timestamp(raw) else { return .unreadable(value: ShownValue.text(raw)) }
        return .at(instant)
    }

    mutating func deviceID() -> UnsafeBufferPointer<UInt8>? { string(.deviceID) }
    mutating func eventID() -> UnsafeBufferPointer<UInt8>? { string(.eventID) }
    mutating func weekID() -> UnsafeBufferPointer<UInt8>? { string(.weekID) }
}

/// A value's JSON text as a message shows it: cut after 80 bytes (at a character boundary), so
/// one huge value cannot flood the log. The text was validated, so it holds no control bytes.
enum ShownValue {
    static let limit = 80

    static func text(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        if raw.count <= limit { return String(decoding: raw, as: UTF8.self) }
        var end = limit
        while end > 0 && raw[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: raw[0..<end]), as: UTF8.self) + "..."
    }
}
