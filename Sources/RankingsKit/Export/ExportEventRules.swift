import CKernels
import Glibc

/// Which exported entities are rating events, and why the others are bad: the same rules and
/// reasons as a NDJSON line, applied to typed properties instead of JSON values. Written once,
/// for the picks of every record, whoever decoded it.
enum ExportEventRules {
    static let collection: StaticString = "rating_events"

    enum Verdict {
        case event(ExportEvent)
        case leftOut
        case bad(InvalidRecord)
    }

    /// Judges an entity's picks, the C walker's or the Swift decoder's alike, field by field
    /// where they lie. Throws when its joke id is not UTF-8 (a Firestore string always is, so
    /// such an entity does not decode: a corrupt export, not a bad record), or when its key has
    /// neither name nor id.
    @inline(__always)
    static func judge(_ picks: UnsafeMutablePointer<rk_picked_entity>, offset: Int64) throws(ProtoWire.Malformed) -> Verdict {
        // Top level only: the app reads db.collection("rating_events"); a subcollection of the
        // same name under a joke is another collection.
        guard picks.pointee.path_length == 1,
              Self.isCollection(UnsafeBufferPointer(start: picks.pointee.kind, count: picks.pointee.kind_count))
        else { return .leftOut }
        let joke = EntityProto.property(.jokeID, of: picks)
        guard joke.pointee.seen > 0 else { return .bad(.missingJokeID) }
        guard let jokeID = Self.plainString(joke) else { return .bad(.jokeIDNotString) }
        if jokeID.isEmpty { return .bad(.emptyJokeID) }
        guard Self.isUTF8(jokeID) else { throw ProtoWire.Malformed(reason: "joke_id is not UTF-8") }
        if jokeID.count >= JokeIDLimit.bytes { return .bad(.jokeIDTooLong(bytes: jokeID.count)) }
        let r = EntityProto.property(.rating, of: picks)
        guard r.pointee.seen > 0 else { return .bad(.missingRating) }
        guard r.pointee.multiple == 0, r.pointee.meaning == EntityProto.Meaning.none else { return .bad(.ratingNotNumber) }
        let rating: Double
        switch Int32(r.pointee.kind) {
        case RK_VALUE_INTEGER: rating = Double(Int64(bitPattern: r.pointee.number))
        case RK_VALUE_DOUBLE: rating = Double(bitPattern: r.pointee.number)
        default: return .bad(.ratingNotNumber)
        }
        // NaN fails both comparisons: out of range, as no JSON number can be.
        guard rating >= 1 && rating <= 5 else { return .bad(.ratingOutOfRange) }

        guard picks.pointee.has_name != 0 || picks.pointee.has_id != 0 else {
            throw ProtoWire.Malformed(reason: "a key with neither name nor id")
        }
        return .event(ExportEvent(jokeID: jokeID, rating: rating, picks: picks, offset: offset))
    }

    /// A string property as Firestore writes a string: not an array, not bytes (meaning BLOB),
    /// not a map (meaning ENTITY_PROTO); long strings may carry meaning TEXT. Nil for anything
    /// else, and when the entity has no such property.
    @inline(__always)
    static func plainString(_ p: UnsafePointer<rk_picked_property>) -> UnsafeBufferPointer<UInt8>? {
        guard p.pointee.seen > 0, p.pointee.multiple == 0, Int32(p.pointee.kind) == RK_VALUE_STRING,
              p.pointee.meaning == EntityProto.Meaning.none || p.pointee.meaning == EntityProto.Meaning.text
        else { return nil }
        return UnsafeBufferPointer(start: p.pointee.string, count: p.pointee.string_count)
    }

    /// Firestore keeps timestamps as microseconds since the epoch with meaning GD_WHEN.
    static func timestamp(_ p: UnsafePointer<rk_picked_property>) -> EventTime {
        guard p.pointee.seen > 0 else { return .absent }
        guard p.pointee.multiple == 0, p.pointee.meaning == EntityProto.Meaning.gdWhen, Int32(p.pointee.kind) == RK_VALUE_INTEGER
        else { return .unreadable(value: typeName(p.pointee)) }
        let (seconds, remainder) = Int64(bitPattern: p.pointee.number).quotientAndRemainder(dividingBy: 1_000_000)
        return .at(remainder < 0
            ? Timestamp(seconds: seconds - 1, nanoseconds: Int32((remainder + 1_000_000) * 1000))
            : Timestamp(seconds: seconds, nanoseconds: Int32(remainder * 1000)))
    }

    /// What Firestore type a property holds, for messages.
    static func typeName(_ property: rk_picked_property) -> String {
        let meaning = property.meaning
        if property.multiple != 0 || meaning == EntityProto.Meaning.emptyList { return "an array" }
        switch Int32(property.kind) {
        case RK_VALUE_INTEGER: return meaning == EntityProto.Meaning.gdWhen ? "a timestamp" : "an integer"
        case RK_VALUE_BOOLEAN: return "a boolean"
        case RK_VALUE_DOUBLE: return "a double"
        case RK_VALUE_POINT: return "a geo point"
        case RK_VALUE_USER: return "a user"
        case RK_VALUE_REFERENCE: return "a reference"
        case RK_VALUE_STRING:
            switch meaning {
            case EntityProto.Meaning.blob, EntityProto.Meaning.byteString: return "bytes"
            case EntityProto.Meaning.entityProto: return "a map"
            default: return "a string"
            }
        default: return "null"
        }
    }

    private static func isCollection(_ kind: UnsafeBufferPointer<UInt8>) -> Bool {
        // "rating_events" is 13 bytes: two overlapping 8-byte loads, not a call to memcmp.
        let text = collection
        guard kind.count == text.utf8CodeUnitCount else { return false }
        let p = UnsafeRawPointer(kind.baseAddress!), t = UnsafeRawPointer(text.utf8Start)
        return p.loadUnaligned(as: UInt64.self) == t.loadUnaligned(as: UInt64.self)
            && p.loadUnaligned(fromByteOffset: 5, as: UInt64.self) == t.loadUnaligned(fromByteOffset: 5, as: UInt64.self)
    }

    /// Well-formed UTF-8 per Unicode's table 3-7, bounds-checked.
    static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        // ASCII eight bytes at a time (joke ids usually are), then byte by byte.
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= n, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
            }
        }
        while i < n {
            let b0 = bytes[i]
            if b0 < 0x80 { i += 1; continue }
            func cont(_ k: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool { i + k < n && range.contains(bytes[i + k]) }
            let length: Int
            switch b0 {
            case 0xC2...0xDF: length = cont(1) ? 2 : 0
            case 0xE0: length = cont(1, 0xA0...0xBF) && cont(2) ? 3 : 0
            case 0xE1...0xEC, 0xEE...0xEF: length = cont(1) && cont(2) ? 3 : 0
            case 0xED: length = cont(1, 0x80...0x9F) && cont(2) ? 3 : 0
            case 0xF0: length = cont(1, 0x90...0xBF) && cont(2) && cont(3) ? 4 : 0
            case 0xF1...0xF3: length = cont(1) && cont(2) && cont(3) ? 4 : 0
            case 0xF4: length = cont(1, 0x80...0x8F) && cont(2) && cont(3) ? 4 : 0
            default: length = 0
            }
            if length == 0 { return false }
            i += length
        }
        return true
    }
}
