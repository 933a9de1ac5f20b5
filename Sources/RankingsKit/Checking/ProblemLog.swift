/// The problems found in one document so far, and the rules every scalar field shares.
///
/// Checks run field by field, not byte by byte, so problems are collected first and put in
/// document order at the end.
struct ProblemLog {
    private var problems: [DocumentProblem] = []

    mutating func add(_ path: JSONPath, _ message: String, at offset: Int) {
        problems.append(DocumentProblem(path, message, at: offset))
    }

    mutating func add(_ more: [DocumentProblem]) { problems += more }

    /// By offset; problems at the same byte keep the order they were found in.
    var inDocumentOrder: [DocumentProblem] {
        problems.enumerated()
            .sorted { a, b in a.element.offset != b.element.offset ? a.element.offset < b.element.offset : a.offset < b.offset }
            .map(\.element)
    }

    /// A string with at least one byte, as its bytes.
    mutating func nonEmptyString(_ value: JSONValue, _ path: JSONPath) -> [UInt8]? {
        if case .string(let bytes) = value.kind, !bytes.isEmpty { return bytes }
        add(path, "expected a non-empty string, found \(value.summary)", at: value.offset)
        return nil
    }

    /// An integer is a JSON number written without a fraction or an exponent (`3`, not `3.0` or
    /// `3e0`): what an integer-typed field in the app's decoder reads without rounding. It must
    /// also fit in 64 bits.
    mutating func integer(_ value: JSONValue, _ path: JSONPath, atLeast minimum: Int? = nil) -> Int? {
        let wanted = minimum.map { "an integer of at least \($0)" } ?? "an integer"
        guard case .number(let text) = value.kind,
              !text.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") })
        else {
            add(path, "expected \(wanted), found \(value.summary)", at: value.offset)
            return nil
        }
        guard let n = Int(String(decoding: text, as: UTF8.self)) else {
            add(path, "expected \(wanted), found \(value.summary), which does not fit in 64 bits", at: value.offset)
            return nil
        }
        if let minimum, n < minimum {
            add(path, "expected \(wanted), found \(value.summary)", at: value.offset)
            return nil
        }
        return n
    }

    /// An RFC 3339 date and time with an offset, as `Timestamp.parseRFC3339` reads it.
    mutating func timestamp(_ value: JSONValue, _ path: JSONPath) -> Timestamp? {
        if case .string(let bytes) = value.kind, let t = Timestamp.parseRFC3339(bytes) { return t }
        add(path, "expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found \(value.summary)", at: value.offset)
        return nil
    }
}
