/// The top-level keys of a `rating_events` record that the job reads; all others are ignored
/// whatever they contain.
public enum Field: UInt8, Sendable, CaseIterable {
    case none = 0
    case jokeID, rating, timestamp, weekID, deviceID, eventID

    /// The key as it appears (after unescaping) in a record.
    public var key: String {
        switch self {
        case .none: ""
        case .jokeID: "joke_id"
        case .rating: "rating"
        case .timestamp: "timestamp"
        case .weekID: "week_id"
        case .deviceID: "device_id"
        case .eventID: "id"
        }
    }
}

/// Which fields a run needs; the scanner captures only these, so a plain run pays for two.
public struct FieldSet: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ field: Field) { rawValue = field == .none ? 0 : 1 << field.rawValue }

    public static let ratingOnly: FieldSet = [FieldSet(.jokeID), FieldSet(.rating)]

    @inline(__always)
    public func contains(_ field: Field) -> Bool { field != .none && rawValue & (1 << field.rawValue) != 0 }

    /// The wanted field spelled by `key` (already unescaped), or `.none`.
    @inline(__always)
    func field(named key: UnsafeBufferPointer<UInt8>) -> Field {
        let found: Field
        switch key.count {
        case 2: found = equals(key, "id") ? .eventID : .none
        case 6: found = equals(key, "rating") ? .rating : .none
        case 7: found = equals(key, "joke_id") ? .jokeID : equals(key, "week_id") ? .weekID : .none
        case 9: found = equals(key, "device_id") ? .deviceID : equals(key, "timestamp") ? .timestamp : .none
        default: return .none
        }
        return contains(found) ? found : .none
    }

    @inline(__always)
    private func equals(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        let n = name.utf8Start
        for i in 0..<key.count where key[i] != n[i] { return false }
        return true
    }
}

/// Where each captured field's value sits in the current line: from its first byte to just
/// past its last. Valid only until the next line is scanned.
public struct CapturedFields {
    private var starts: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?,
                         UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?)
        = (nil, nil, nil, nil, nil, nil)
    private var ends: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?,
                       UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?)
        = (nil, nil, nil, nil, nil, nil)

    /// Bit `field.rawValue` set when that field's value is a string written with escapes, so
    /// readers of the common plain string need not look for backslashes again.
    private var escapedStrings: UInt8 = 0

    @inline(__always) mutating func reset() {
        starts = (nil, nil, nil, nil, nil, nil)
    }

    @inline(__always) mutating func set(_ field: Field, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>,
                                        escaped: Bool = true) {
        let bit: UInt8 = 1 << field.rawValue
        escapedStrings = escaped ? escapedStrings | bit : escapedStrings & ~bit
        switch field {
        case .none: break
        case .jokeID: starts.0 = start; ends.0 = end
        case .rating: starts.1 = start; ends.1 = end
        case .timestamp: starts.2 = start; ends.2 = end
        case .weekID: starts.3 = start; ends.3 = end
        case .deviceID: starts.4 = start; ends.4 = end
        case .eventID: starts.5 = start; ends.5 = end
        }
    }

    /// Whether the field's value (if a string) holds an escape; true when unsure.
    @inline(__always) public func isEscaped(_ field: Field) -> Bool {
        escapedStrings & (1 << field.rawValue) != 0
    }

    /// The raw JSON text of the field's value, or nil when the record lacks it.
    @inline(__always) public subscript(_ field: Field) -> UnsafeBufferPointer<UInt8>? {
        let s: UnsafePointer<UInt8>?, e: UnsafePointer<UInt8>?
        switch field {
        case .none: return nil
        case .jokeID: s = starts.0; e = ends.0
        case .rating: s = starts.1; e = ends.1
        case .timestamp: s = starts.2; e = ends.2
        case .weekID: s = starts.3; e = ends.3
        case .deviceID: s = starts.4; e = ends.4
        case .eventID: s = starts.5; e = ends.5
        }
        guard let s, let e else { return nil }
        return UnsafeBufferPointer(start: s, count: e - s)
    }
}
