import Glibc

/// Why a valid JSON line is not a usable `rating_events` record.
public enum InvalidRecord: Error, Sendable, Equatable {
    case notObject
    case missingJokeID, jokeIDNotString, emptyJokeID, jokeIDLoneSurrogate
    /// A joke id of `JokeIDLimit.bytes` or more after unescaping: `bytes` is its length.
    case jokeIDTooLong(bytes: Int)
    case missingRating, ratingNotNumber, ratingOutOfRange
    case missingTimestamp, unreadableTimestamp
    case missingDeviceID, missingEventID
    /// A typed document whose `name` is not a Firestore document path.
    case badDocumentName

    var message: String {
        switch self {
        case .notObject: "the line is not a JSON object"
        case .missingJokeID: "no joke_id"
        case .jokeIDNotString: "joke_id is not a string"
        case .emptyJokeID: "joke_id is empty"
        case .jokeIDLoneSurrogate: "joke_id has a lone surrogate escape"
        case .jokeIDTooLong(let bytes):
            "joke_id is \(bytes) bytes: Firestore cannot query a value of 1,500 bytes or more"
        case .missingRating: "no rating"
        case .ratingNotNumber: "rating is not a number"
        case .ratingOutOfRange: "rating is not between 1 and 5"
        case .missingTimestamp: "no timestamp (needed by --as-of/--since)"
        case .unreadableTimestamp: "timestamp is not an RFC 3339 string or a {seconds, nanoseconds} object"
        case .missingDeviceID: "no string device_id (needed by --dedupe device)"
        case .missingEventID: "no string id (needed by --dedupe id)"
        case .badDocumentName: "name is not a Firestore document path (projects/P/databases/D/documents/...)"
        }
    }
}

/// The longest joke id a vote may have, in UTF-8 bytes after unescaping: Firestore refuses an
/// equality filter on a string of 1,500 bytes or more ("value for joke_id is too large to be
/// used in a query", measured on Google's emulator; 1,499 bytes are queried). The app's cloud
/// function never saw such a vote, and the night's proof, which counts each joke's votes by
/// equality, could not count it: it is an invalid record, in every input form.
enum JokeIDLimit {
    /// The first length refused.
    static let bytes = 1500
}

/// What the ratings app calls a vote: the rating's kind, from the value on either scale.
enum RatingKind: UInt8, Sendable {
    case horrible, neutral, hilarious

    /// 4–5 is Hilarious, 1–2 Horrible, anything strictly between is a neutral vote.
    @inline(__always) init(_ value: Double) {
        self = value >= 4 ? .hilarious : value <= 2 ? .horrible : .neutral
    }
}

/// Reads `joke_id` and `rating` out of a scanned line without building strings.
struct RecordDecoder: ~Copyable {
    /// Unescaped joke id when the raw one has escapes; reused line after line.
    private var idScratch = ByteBuffer(capacity: 256)
    /// NUL-terminated number text for `strtod`.
    private var numberScratch = ByteBuffer(capacity: 64)

    init() {}

    /// The joke id's bytes after unescaping; points into the line or into scratch storage,
    /// valid until the next call.
    ///
    /// The length limit costs the common id one comparison: unescaping never lengthens a
    /// string (an escape of 2, 6 or 12 bytes stands for 1 to 4), so an id spelled in fewer than
    /// `JokeIDLimit.bytes` bytes is always short enough, and only a longer escaped one needs
    /// its unescaped length.
    @inline(__always)
    mutating func jokeID(_ raw: UnsafeBufferPointer<UInt8>?, escaped: Bool = true) -> Result<UnsafeBufferPointer<UInt8>, InvalidRecord> {
        guard let raw else { return .failure(.missingJokeID) }
        guard raw[0] == UInt8(ascii: "\"") else { return .failure(.jokeIDNotString) }
        let inner = UnsafeBufferPointer(rebasing: raw[1..<(raw.count - 1)])
        if inner.isEmpty { return .failure(.emptyJokeID) }
        if !escaped || inner.firstIndex(of: UInt8(ascii: "\\")) == nil {
            return inner.count < JokeIDLimit.bytes ? .success(inner) : .failure(.jokeIDTooLong(bytes: inner.count))
        }
        idScratch.removeAll()
        guard JSONString.unescape(inner, into: &idScratch, allowLoneSurrogates: false) else {
            return .failure(.jokeIDLoneSurrogate)
        }
        let id = idScratch.withBuffer { $0 }
        return id.count < JokeIDLimit.bytes ? .success(id) : .failure(.jokeIDTooLong(bytes: id.count))
    }

    /// The rating as an IEEE double, checked against 1...5.
    @inline(__always)
    mutating func rating(_ raw: UnsafeBufferPointer<UInt8>?) -> Result<Double, InvalidRecord> {
        guard let raw else { return .failure(.missingRating) }
        let c = raw[0]
        // The common case by far: a single digit.
        if raw.count == 1 {
            guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return .failure(.ratingNotNumber) }
            let v = Double(c - UInt8(ascii: "0"))
            return v >= 1 && v <= 5 ? .success(v) : .failure(.ratingOutOfRange)
        }
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else {
            return .failure(.ratingNotNumber)
        }
        let v = parseNumber(raw)
        return v >= 1 && v <= 5 ? .success(v) : .failure(.ratingOutOfRange)
    }

    /// Scratch for the other string fields, one each, since several are alive at once.
    private var deviceScratch = ByteBuffer(capacity: 64)
    private var eventScratch = ByteBuffer(capacity: 128)
    private var weekScratch = ByteBuffer(capacity: 16)
    private var timestampScratch = ByteBuffer(capacity: 64)

    /// The unescaped bytes of a string field (`device_id`, `id`, `week_id`); nil when the
    /// field is missing or not a string. Valid until the next call for the same field.
    @inline(__always)
    mutating func string(_ raw: UnsafeBufferPointer<UInt8>?, slot: Field, escaped: Bool = true) -> UnsafeBufferPointer<UInt8>? {
        guard let raw, raw[0] == UInt8(ascii: "\"") else { return nil }
        let inner = UnsafeBufferPointer(rebasing: raw[1..<(raw.count - 1)])
        if !escaped || inner.firstIndex(of: UInt8(ascii: "\\")) == nil { return inner }
        func unescape(_ buffer: inout ByteBuffer) -> UnsafeBufferPointer<UInt8> {
            buffer.removeAll()
            // Lone surrogates stay distinct (WTF-8): an id is compared, never displayed.
            _ = JSONString.unescape(inner, into: &buffer, allowLoneSurrogates: true)
            return buffer.withBuffer { $0 }
        }
        switch slot {
        case .deviceID: return unescape(&deviceScratch)
        case .eventID: return unescape(&eventScratch)
        default: return unescape(&weekScratch)
        }
    }

    /// The event's instant, or nil when `raw` is none of the readable timestamp forms.
    mutating func timestamp(_ raw: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        TimestampField.decode(raw, scratch: &timestampScratch)
    }

    /// Any JSON number text (already validated) to the nearest double, as RFC 8259 readers do;
    /// glibc's `strtod` rounds correctly, so `4.99999999999999999` is 5.
    mutating func parseNumber(_ raw: UnsafeBufferPointer<UInt8>) -> Double {
        numberScratch.removeAll()
        numberScratch.append(raw)
        numberScratch.terminate()
        return numberScratch.withBuffer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count + 1) { strtod($0, nil) }
        }
    }
}
