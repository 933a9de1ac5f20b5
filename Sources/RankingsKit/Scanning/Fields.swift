import CKernels

/// The members of a `rating_events` line that the job reads; all others are ignored whatever
/// they contain. A raw value is the field's number in the line kernel too (`RK_FIELD_*` in
/// schema.h, which LineSchemaTests holds these to): its span is at `2 * rawValue` and
/// `2 * rawValue + 1` of `CapturedFields.spans`.
enum Field: UInt8, Sendable, CaseIterable {
    case none = 0
    /// Top-level keys of a flat record.
    case jokeID, rating, timestamp, weekID, deviceID, eventID
    /// Top-level keys of a typed Firestore `Document`.
    case name, fields
    /// The typed values (`{"stringValue": …}`, …) under the keys of the top-level `fields`
    /// object: `typed(jokeID)` is `fields.joke_id`. Each is `typedOffset` above its flat field.
    case typedJokeID, typedRating, typedTimestamp, typedWeekID, typedDeviceID

    static let typedOffset = UInt8(RK_FIELD_TYPED_OFFSET)

    /// The typed value under the same key, for the flat fields a typed document has (not `id`).
    var typed: Field? {
        rawValue >= Field.jokeID.rawValue && rawValue <= Field.deviceID.rawValue
            ? Field(rawValue: rawValue + Field.typedOffset) : nil
    }
}

/// Which fields a run needs; the scanner captures only these, so a plain run pays for few.
struct FieldSet: OptionSet, Sendable {
    let rawValue: UInt16
    init(rawValue: UInt16) { self.rawValue = rawValue }
    init(_ field: Field) { rawValue = field == .none ? 0 : 1 << field.rawValue }

    static let ratingOnly: FieldSet = [FieldSet(.jokeID), FieldSet(.rating)]

    /// These fields, and what a typed document needs to give the same ones: its `name` and
    /// `fields`, and the typed value of each.
    var withTypedDocument: FieldSet {
        var set = union([FieldSet(.name), FieldSet(.fields)])
        for field in Field.allCases where contains(field) {
            if let typed = field.typed { set.insert(FieldSet(typed)) }
        }
        return set
    }

    @inline(__always)
    func contains(_ field: Field) -> Bool { field != .none && rawValue & (1 << field.rawValue) != 0 }

    /// The wanted top-level field spelled by `key` (already unescaped), or `.none`.
    @inline(__always)
    func field(named key: UnsafeBufferPointer<UInt8>) -> Field {
        let found = Self.flatField(named: key, orDocument: true)
        return contains(found) ? found : .none
    }

    /// The wanted typed value a key of the top-level `fields` object names, or `.none`.
    @inline(__always)
    func typedField(named key: UnsafeBufferPointer<UInt8>) -> Field {
        guard let found = Self.flatField(named: key, orDocument: false).typed else { return .none }
        return contains(found) ? found : .none
    }

    @inline(__always)
    private static func flatField(named key: UnsafeBufferPointer<UInt8>, orDocument: Bool) -> Field {
        switch key.count {
        case 2: return equals(key, "id") ? .eventID : .none
        case 4: return orDocument && equals(key, "name") ? .name : .none
        case 6: return equals(key, "rating") ? .rating : orDocument && equals(key, "fields") ? .fields : .none
        case 7: return equals(key, "joke_id") ? .jokeID : equals(key, "week_id") ? .weekID : .none
        case 9: return equals(key, "device_id") ? .deviceID : equals(key, "timestamp") ? .timestamp : .none
        default: return .none
        }
    }

    @inline(__always)
    private static func equals(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        let n = name.utf8Start
        for i in 0..<key.count where key[i] != n[i] { return false }
        return true
    }
}

/// Where each captured field's value sits in the current line: from its first byte to just
/// past its last. Valid only until the next line is scanned.
struct CapturedFields {
    /// How many span pointers `spans` holds: two for each field number below 16.
    static let spanCount = Int(RK_SPANS)

    /// The start of field `f`'s value at `2 f`, the byte after it at `2 f + 1`, as the line
    /// kernel writes them; meaningful only where `found` has bit `f`. Owned by the scanner.
    let spans: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    /// Bit `f` set when field `f` was found in the line.
    var found: UInt32 = 0
    /// Bit `f` set when field `f`'s value is a string written with escapes, so readers of the
    /// common plain string need not look for backslashes again.
    private var escapedStrings: UInt32 = 0

    init(spans: UnsafeMutablePointer<UnsafePointer<UInt8>?>) { self.spans = spans }

    @inline(__always) mutating func reset() {
        found = 0
    }

    /// After the line kernel wrote `spans` and found the fields of `found` (it accepts no escape).
    @inline(__always) mutating func setFromKernel(found: UInt32) {
        self.found = found
        escapedStrings = 0
    }

    @inline(__always) mutating func set(_ field: Field, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>,
                                        escaped: Bool = true) {
        let bit: UInt32 = 1 << field.rawValue
        escapedStrings = escaped ? escapedStrings | bit : escapedStrings & ~bit
        found |= bit
        spans[2 &* Int(field.rawValue)] = start
        spans[2 &* Int(field.rawValue) &+ 1] = end
    }

    /// Forgets the typed values found so far: a later top-level `fields` replaces them all.
    @inline(__always) mutating func dropTypedValues() {
        found &= ~(RK_FIELDS_WITH_TYPED_VALUE << RK_FIELD_TYPED_OFFSET)
    }

    /// Whether the field's value (if a string) holds an escape; true when unsure.
    @inline(__always) func isEscaped(_ field: Field) -> Bool {
        escapedStrings & (1 << field.rawValue) != 0
    }

    /// The raw JSON text of the field's value, or nil when the record lacks it.
    @inline(__always) subscript(_ field: Field) -> UnsafeBufferPointer<UInt8>? {
        guard field != .none, found & (1 << field.rawValue) != 0 else { return nil }
        let s = spans[2 &* Int(field.rawValue)]!
        return UnsafeBufferPointer(start: s, count: spans[2 &* Int(field.rawValue) &+ 1]! - s)
    }
}
