import CKernels
import Glibc

/// Which exported entities are rating events, and why the others are bad: the same rules and
/// reasons as a NDJSON line, applied to typed properties instead of JSON values.
struct ExportEventRules {
    static let collection: StaticString = "rating_events"

    enum Verdict {
        case event(ExportEvent)
        case leftOut
        case bad(InvalidRecord)
    }

    /// The decimal form of a numeric key id; reused record after record.
    private let idText = DecimalScratch()

    init() {}

    /// Judges a decoded entity. Throws when its joke id is not UTF-8: a Firestore string always
    /// is, so such an entity does not decode (a corrupt export, not a bad record).
    func judge(_ entity: borrowing EntityProto) throws(ProtoWire.Malformed) -> Verdict {
        // Top level only: the app reads db.collection("rating_events"); a subcollection of the
        // same name under a joke is another collection.
        guard entity.pathLength == 1, Self.isCollection(entity.kind) else { return .leftOut }
        guard let joke = entity[.jokeID] else { return .bad(.missingJokeID) }
        guard let jokeID = Self.plainString(joke) else { return .bad(.jokeIDNotString) }
        if jokeID.isEmpty { return .bad(.emptyJokeID) }
        guard Self.isUTF8(jokeID) else { throw ProtoWire.Malformed(reason: "joke_id is not UTF-8") }
        guard let ratingProperty = entity[.rating] else { return .bad(.missingRating) }
        guard !ratingProperty.multiple, ratingProperty.meaning == EntityProto.Meaning.none else {
            return .bad(.ratingNotNumber)
        }
        let rating: Double
        switch ratingProperty.value {
        case .integer(let value): rating = Double(value)
        case .double(let value): rating = value
        default: return .bad(.ratingNotNumber)
        }
        // NaN fails both comparisons: out of range, as no JSON number can be.
        guard rating >= 1 && rating <= 5 else { return .bad(.ratingOutOfRange) }

        let eventID: UnsafeBufferPointer<UInt8>
        if let name = entity.name {
            eventID = name
        } else if let id = entity.id {
            eventID = decimal(id)
        } else {
            throw ProtoWire.Malformed(reason: "a key with neither name nor id")
        }
        return .event(ExportEvent(
            jokeID: jokeID, rating: rating, timestampProperty: entity[.timestamp],
            deviceID: entity[.deviceID].flatMap(Self.plainString), weekID: entity[.weekID].flatMap(Self.plainString),
            eventID: eventID, offset: 0))
    }

    /// The event an entity as exports hold it makes, judged straight from the C walker's
    /// picks; nil for anything else (left out, bad, a numeric id, a joke id that is not
    /// ASCII), which `judge` then words. Where this gives an event, `judge` gives the same
    /// one: the export_entity fuzz target holds the two to that. Building the properties and
    /// copying the entity and the event for `judge` took a fifth of an export's time.
    @inline(__always)
    static func plainEvent(_ picks: UnsafePointer<rk_picked_entity>, offset: Int64) -> PickedEvent? {
        // Field by field through pointers: the entity or its properties as values were copied
        // whole (256 bytes) record after record.
        guard picks.pointee.path_length == 1, picks.pointee.has_name != 0,
              isCollection(UnsafeBufferPointer(start: picks.pointee.kind, count: picks.pointee.kind_count))
        else { return nil }
        guard let jokeID = plainString(PickedEvent.property(.jokeID, of: picks)), jokeID.count > 0, isASCII(jokeID)
        else { return nil }
        let r = PickedEvent.property(.rating, of: picks)
        guard r.pointee.seen > 0, r.pointee.multiple == 0, r.pointee.meaning == EntityProto.Meaning.none else { return nil }
        let rating: Double
        switch Int32(r.pointee.kind) {
        case RK_VALUE_INTEGER: rating = Double(Int64(bitPattern: r.pointee.number))
        case RK_VALUE_DOUBLE: rating = Double(bitPattern: r.pointee.number)
        default: return nil
        }
        guard rating >= 1 && rating <= 5 else { return nil }
        return PickedEvent(picks: picks, jokeID: jokeID, rating: rating, offset: offset)
    }

    /// `plainString` on a picked property; nil when it was not seen.
    @inline(__always)
    static func plainString(_ p: UnsafePointer<rk_picked_property>) -> UnsafeBufferPointer<UInt8>? {
        guard p.pointee.seen > 0, p.pointee.multiple == 0, Int32(p.pointee.kind) == RK_VALUE_STRING,
              p.pointee.meaning == EntityProto.Meaning.none || p.pointee.meaning == EntityProto.Meaning.text
        else { return nil }
        return UnsafeBufferPointer(start: p.pointee.string, count: p.pointee.string_count)
    }

    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        var seen: UInt64 = 0
        while i + 8 <= n {
            seen |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            seen |= UInt64(bytes[i])
            i += 1
        }
        return seen & 0x8080_8080_8080_8080 == 0
    }

    /// A string property as Firestore writes a string: not an array, not bytes (meaning BLOB),
    /// not a map (meaning ENTITY_PROTO); long strings may carry meaning TEXT.
    static func plainString(_ property: EntityProto.Property) -> UnsafeBufferPointer<UInt8>? {
        guard !property.multiple, case .string(let bytes) = property.value,
              property.meaning == EntityProto.Meaning.none || property.meaning == EntityProto.Meaning.text
        else { return nil }
        return bytes
    }

    /// Firestore keeps timestamps as microseconds since the epoch with meaning GD_WHEN.
    static func timestamp(_ property: EntityProto.Property?) -> ExportEventTime {
        guard let property else { return .absent }
        guard !property.multiple, property.meaning == EntityProto.Meaning.gdWhen,
              case .integer(let micros) = property.value else { return .unreadable(value: typeName(property)) }
        let (seconds, remainder) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        return .at(remainder < 0
            ? Timestamp(seconds: seconds - 1, nanoseconds: Int32((remainder + 1_000_000) * 1000))
            : Timestamp(seconds: seconds, nanoseconds: Int32(remainder * 1000)))
    }

    /// What Firestore type a property holds, for messages.
    static func typeName(_ property: EntityProto.Property) -> String {
        if property.multiple || property.meaning == EntityProto.Meaning.emptyList { return "an array" }
        switch property.value {
        case .null: return "null"
        case .integer: return property.meaning == EntityProto.Meaning.gdWhen ? "a timestamp" : "an integer"
        case .boolean: return "a boolean"
        case .double: return "a double"
        case .point: return "a geo point"
        case .user: return "a user"
        case .reference: return "a reference"
        case .string:
            switch property.meaning {
            case EntityProto.Meaning.blob, EntityProto.Meaning.byteString: return "bytes"
            case EntityProto.Meaning.entityProto: return "a map"
            default: return "a string"
            }
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

    /// `id` in decimal, written into the scratch from its last digit back: no String per record.
    private func decimal(_ id: Int64) -> UnsafeBufferPointer<UInt8> {
        let end = idText.bytes + 24
        var p = end
        var rest = id.magnitude
        repeat {
            p -= 1
            p.pointee = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        if id < 0 {
            p -= 1
            p.pointee = UInt8(ascii: "-")
        }
        return UnsafeBufferPointer(start: p, count: end - p)
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

/// Room for an Int64 in decimal, owned by a class so the rules stay a plain value.
private final class DecimalScratch {
    let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 24)
    deinit { bytes.deallocate() }
}
