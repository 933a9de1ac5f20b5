/// Why a document is not JSON, and the byte where that became certain.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    var reason: String
    /// Counts from 0, as `xxd` and `dd skip=` do.
    var offset: Int

    public init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }
}

/// A strict RFC 8259 parser for whole documents: UTF-8 only, no byte order mark, no comments, no
/// trailing commas, no leading zeros, no lone surrogates in `\u` escapes, and one value with
/// nothing after it but whitespace.
///
/// It keeps its own stack of open containers instead of recursing, and refuses nesting deeper
/// than `maximumDepth`, so a hostile document costs memory in proportion to its size, never a
/// stack overflow.
public enum JSONParser {
    static let maximumDepth = 1000

    public static func parse(_ document: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var reader = Reader(document)
        return try reader.document()
    }
}

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
private let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":")
private let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
private let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
private let minus = UInt8(ascii: "-"), plus = UInt8(ascii: "+"), dot = UInt8(ascii: ".")
private let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")

private struct Reader {
    /// The document plus one 0x00 sentinel, so UTF-8 validation may look one byte past a
    /// truncated sequence at the very end without a bounds check.
    let bytes: [UInt8]
    let end: Int
    var i = 0

    init(_ document: [UInt8]) {
        bytes = document + [0]
        end = document.count
    }

    /// A container still being filled, with the key its next value belongs to.
    struct Frame {
        var isObject: Bool
        var offset: Int
        var members: [JSONMember] = []
        var elements: [JSONValue] = []
        var key: [UInt8] = []
        var keyOffset = 0

        mutating func add(_ value: JSONValue) {
            if isObject {
                members.append(JSONMember(key: key, keyOffset: keyOffset, value: value))
            } else {
                elements.append(value)
            }
        }

        func finished(end: Int) -> JSONValue {
            JSONValue(isObject ? .object(members) : .array(elements), offset: offset, end: end)
        }
    }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
        if end >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            throw JSONSyntaxError("byte order mark (JSON text must not start with one)", at: 0)
        }
        var open: [Frame] = []
        nextValue: while true {
            skipWhitespace()
            guard i < end else { throw unexpected("a value") }
            let start = i
            var value: JSONValue
            switch bytes[i] {
            case openBrace, openBracket:
                let isObject = bytes[i] == openBrace
                guard open.count < JSONParser.maximumDepth else {
                    throw JSONSyntaxError("nested deeper than \(JSONParser.maximumDepth) levels", at: i)
                }
                i += 1
                skipWhitespace()
                if i < end && bytes[i] == (isObject ? closeBrace : closeBracket) {
                    i += 1
                    value = JSONValue(isObject ? .object([]) : .array([]), offset: start, end: i)
                } else {
                    var frame = Frame(isObject: isObject, offset: start)
                    if isObject { try memberName(into: &frame) }
                    open.append(frame)
                    continue nextValue
                }
            case quote:
                value = JSONValue(.string(try string()), offset: start, end: i)
            case minus, zero...nine:
                value = JSONValue(.number(try number()), offset: start, end: i)
            case UInt8(ascii: "t"):
                try literal("true")
                value = JSONValue(.bool(true), offset: start, end: i)
            case UInt8(ascii: "f"):
                try literal("false")
                value = JSONValue(.bool(false), offset: start, end: i)
            case UInt8(ascii: "n"):
                try literal("null")
                value = JSONValue(.null, offset: start, end: i)
            default:
                throw unexpected("a value")
            }
            // A value is complete: hand it to its container, closing containers as they end.
            while var frame = open.popLast() {
                frame.add(value)
                skipWhitespace()
                let closer = frame.isObject ? closeBrace : closeBracket
                if i < end && bytes[i] == comma {
                    i += 1
                    if frame.isObject { try memberName(into: &frame) }
                    open.append(frame)
                    continue nextValue
                }
                guard i < end && bytes[i] == closer else {
                    throw unexpected(frame.isObject ? "',' or '}'" : "',' or ']'")
                }
                i += 1
                value = frame.finished(end: i)
            }
            skipWhitespace()
            guard i == end else { throw unexpected("the end of the document") }
            return value
        }
    }

    /// Reads `"key":` and remembers the key for the value that follows.
    mutating func memberName(into frame: inout Frame) throws(JSONSyntaxError) {
        skipWhitespace()
        guard i < end && bytes[i] == quote else { throw unexpected("a string key") }
        frame.keyOffset = i
        frame.key = try string()
        skipWhitespace()
        guard i < end && bytes[i] == colon else { throw unexpected("':'") }
        i += 1
    }

    mutating func skipWhitespace() {
        while i < end {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    /// "expected X, found Y" at the current byte.
    func unexpected(_ expected: String) -> JSONSyntaxError {
        JSONSyntaxError("expected \(expected), found \(found(at: i))", at: i)
    }

    func found(at index: Int) -> String {
        guard index < end else { return "the end of the document" }
        let b = bytes[index]
        return (0x21...0x7E).contains(b) ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x" + hex(b)
    }

    func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let start = i
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in text {
            guard i < end && bytes[i] == expected else {
                throw JSONSyntaxError("invalid literal (expected \(word))", at: start)
            }
            i += 1
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, returned as written.
    mutating func number() throws(JSONSyntaxError) -> [UInt8] {
        let start = i
        if bytes[i] == minus { i += 1 }
        guard i < end && (zero...nine).contains(bytes[i]) else { throw unexpected("a digit") }
        if bytes[i] == zero {
            i += 1
            if i < end && (zero...nine).contains(bytes[i]) {
                throw JSONSyntaxError("leading zero in a number", at: i - 1)
            }
        } else {
            skipDigits()
        }
        if i < end && bytes[i] == dot {
            i += 1
            try requireDigits()
        }
        if i < end && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < end && (bytes[i] == plus || bytes[i] == minus) { i += 1 }
            try requireDigits()
        }
        return Array(bytes[start..<i])
    }

    mutating func skipDigits() {
        while i < end && (zero...nine).contains(bytes[i]) { i += 1 }
    }

    mutating func requireDigits() throws(JSONSyntaxError) {
        guard i < end && (zero...nine).contains(bytes[i]) else { throw unexpected("a digit") }
        skipDigits()
    }

    /// The unescaped bytes of the string starting at the opening quote.
    mutating func string() throws(JSONSyntaxError) -> [UInt8] {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < end else { throw JSONSyntaxError("unterminated string", at: i) }
            let b = bytes[i]
            switch b {
            case quote:
                i += 1
                return out
            case backslash:
                try escape(into: &out)
            case 0x00..<0x20:
                throw JSONSyntaxError("control character 0x\(hex(b)) in a string (write it as an escape)", at: i)
            case 0x80...:
                let length = bytes.withUnsafeBufferPointer { UTF8Validation.sequenceLength($0.baseAddress! + i) }
                guard length > 0, i + length <= end else { throw JSONSyntaxError("invalid UTF-8", at: i) }
                out.append(contentsOf: bytes[i..<(i + length)])
                i += length
            default:
                out.append(b)
                i += 1
            }
        }
    }

    mutating func escape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        let start = i
        i += 1
        guard i < end else { throw JSONSyntaxError("unterminated string", at: i) }
        let e = bytes[i]
        i += 1
        switch e {
        case quote, backslash, UInt8(ascii: "/"): out.append(e)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(escapeAt: start)
            if (0xDC00...0xDFFF).contains(scalar) {
                throw JSONSyntaxError("lone low surrogate in a \\u escape", at: start)
            }
            if (0xD800...0xDBFF).contains(scalar) {
                guard i + 1 < end && bytes[i] == backslash && bytes[i + 1] == UInt8(ascii: "u") else {
                    throw JSONSyntaxError("lone high surrogate in a \\u escape", at: start)
                }
                let lowStart = i
                i += 2
                let low = try hex4(escapeAt: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONSyntaxError("lone high surrogate in a \\u escape", at: start)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
        default:
            throw JSONSyntaxError("invalid escape (a backslash followed by \(found(at: i - 1)))", at: start)
        }
    }

    mutating func hex4(escapeAt start: Int) throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard i < end else { throw JSONSyntaxError("unterminated string", at: i) }
            let b = bytes[i]
            let digit: UInt8
            switch b {
            case zero...nine: digit = b - zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError("invalid \\u escape (four hex digits expected)", at: start)
            }
            value = value << 4 | UInt32(digit)
            i += 1
        }
        return value
    }
}
