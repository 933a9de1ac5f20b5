/// A parsed JSON text, kept close to its bytes so that `rankings check` can judge it exactly.
///
/// Objects are ordered member lists, not dictionaries, so a duplicate key survives parsing and
/// can be reported. Strings are their unescaped bytes: joke ids compare byte for byte, never by
/// Swift `String` equality, which would merge canonically equivalent ids. Numbers keep their
/// text, so "is an integer" is a question about spelling (`3` is one, `3.0` is not) rather than
/// about what a `Double` happens to round to.
public struct JSONValue: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case object([JSONMember])
        case array([JSONValue])
        case string([UInt8])
        /// The number's text exactly as written (`-0`, `1e3`, `2.50`).
        case number([UInt8])
        case bool(Bool)
        case null
    }

    public var kind: Kind
    /// Byte offset of the value's first byte in the document; problems are sorted by it so they
    /// come out in document order.
    public var offset: Int
    /// Byte offset just past the value: where a problem about something missing from an object
    /// is placed.
    public var end: Int

    public init(_ kind: Kind, offset: Int, end: Int) {
        self.kind = kind
        self.offset = offset
        self.end = end
    }
}

/// One `"key": value` pair of an object, in document order.
public struct JSONMember: Sendable, Equatable {
    /// The key's unescaped bytes.
    public var key: [UInt8]
    /// Byte offset of the key's opening quote.
    var keyOffset: Int
    public var value: JSONValue

    public init(key: [UInt8], keyOffset: Int, value: JSONValue) {
        self.key = key
        self.keyOffset = keyOffset
        self.value = value
    }
}
