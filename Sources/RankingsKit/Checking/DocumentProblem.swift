/// One way a document falls short of what the app's decoder expects.
public struct DocumentProblem: Sendable, Equatable, CustomStringConvertible {
    var path: JSONPath
    var message: String
    /// Byte offset the problem belongs to, so problems found by different checks can be put
    /// back in document order.
    var offset: Int
    /// The zone a week's document is bounded by, when it is missing from the time zone
    /// database: not a fault of the document, so `rankings check` reports it as unreadable
    /// input (66) rather than as a problem.
    var unavailableZone: String?

    init(_ path: JSONPath, _ message: String, at offset: Int) {
        self.path = path
        self.message = message
        self.offset = offset
    }

    init(zoneUnavailable identifier: String) {
        self.init(.root, "\(identifier) is not in the time zone database", at: 0)
        unavailableZone = identifier
    }

    /// `$.hilarious[3].count: expected an integer, found 2.5`; the front end puts the document's
    /// name in front.
    public var description: String { "\(path): \(message)" }
}

extension JSONValue {
    /// What a value is, for "expected X, found Y": short, on one line, and never the whole of a
    /// long string or number.
    var summary: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .number(let text): String(decoding: Self.clipped(text), as: UTF8.self) + (text.count > Self.shown ? "…" : "")
        case .string(let bytes) where bytes.isEmpty: "an empty string"
        case .string(let bytes):
            "the string " + Self.quoted(Self.clipped(bytes)) + (bytes.count > Self.shown ? "…" : "")
        }
    }

    /// Bytes of a string or number shown before "…".
    static let shown = 40

    /// The first `shown` bytes, cut back to a whole UTF-8 character.
    static func clipped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count > shown else { return bytes }
        var cut = shown
        while cut > 0 && bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return Array(bytes[..<cut])
    }

    static func quoted(_ bytes: [UInt8]) -> String {
        var w = JSONWriter()
        w.string(bytes)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
