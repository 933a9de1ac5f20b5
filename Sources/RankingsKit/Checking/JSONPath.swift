/// Where in a document a problem is, written the way people read JSON paths: `$`,
/// `$.week_id`, `$.hilarious[3].count`, and `$["odd key"]` for a key that is not a plain name.
struct JSONPath: Sendable, Equatable, CustomStringConvertible {
    private(set) var description: String

    /// One step down from the root.
    enum Step: Sendable, Equatable {
        case member([UInt8])
        case element(Int)
    }

    /// The steps from the root, so a path can be rewritten into another document's terms (a
    /// Firestore body's `fields`/`mapValue`/`arrayValue` wrapping).
    private(set) var steps: [Step] = []

    static let root = JSONPath(description: "$")

    private init(description: String, steps: [Step] = []) {
        self.description = description
        self.steps = steps
    }

    func member(_ key: [UInt8]) -> JSONPath {
        if Self.isPlainName(key) {
            return JSONPath(description: description + "." + String(decoding: key, as: UTF8.self),
                            steps: steps + [.member(key)])
        }
        // Escaped as a JSON string so that quotes, control characters and the like stay on one
        // line and read back unambiguously.
        var w = JSONWriter()
        w.string(key)
        return JSONPath(description: description + "[" + String(decoding: w.bytes, as: UTF8.self) + "]",
                        steps: steps + [.member(key)])
    }

    func member(_ key: String) -> JSONPath { member(Array(key.utf8)) }

    func element(_ index: Int) -> JSONPath {
        JSONPath(description: description + "[\(index)]", steps: steps + [.element(index)])
    }

    /// ASCII letters, digits and `_`, not starting with a digit.
    static func isPlainName(_ key: [UInt8]) -> Bool {
        guard let first = key.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return key.allSatisfy { b in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: "_")
        }
    }
}
