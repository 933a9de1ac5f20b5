/// A deliberately plain, strict RFC 8259 reader used only as the oracle for end-to-end tests.
///
/// It shares no code with RankingsKit on purpose: a differential test is only worth something when
/// the two sides were written apart. It is written for clarity, not speed, and it only keeps what
/// the rules need — the top-level object's members, with strings as exact bytes and numbers as
/// doubles; everything nested is validated and thrown away.
enum ReferenceJSON {
    /// The spec's nesting limit: the top-level container is level 1, so 1000 levels are fine and
    /// the 1001st is a malformed line.
    static let maximumDepth = 1000

    struct Malformed: Error {}

    /// A decoded string: its UTF-8 bytes, plus whether every `\u` escape formed real Unicode.
    /// A lone surrogate cannot be UTF-8; it is kept as its generalised 3-byte form (so it still
    /// compares unequal to every real key) and flagged.
    struct DecodedString: Equatable {
        var bytes: [UInt8]
        var isValidUnicode: Bool
    }

    /// Only the two member shapes the record rules distinguish, plus "anything else".
    enum MemberValue: Equatable {
        case string(DecodedString)
        case number(Double)
        case other
    }

    struct Member: Equatable {
        var key: DecodedString
        var value: MemberValue
    }

    enum Top: Equatable {
        case object([Member])
        case notAnObject
    }

    /// Parses one line (already stripped of its `\n`); throws `Malformed` for anything that is not a
    /// single complete JSON text in valid UTF-8.
    static func parse(_ line: [UInt8]) throws -> Top {
        guard isValidUTF8(line) else { throw Malformed() }
        var reader = Reader(bytes: line)
        reader.skipWhitespace()
        let top: Top
        if reader.peek() == UInt8(ascii: "{") {
            top = .object(try reader.topLevelObject())
        } else {
            try reader.skipValue(enclosingDepth: 0)
            top = .notAnObject
        }
        reader.skipWhitespace()
        guard reader.atEnd else { throw Malformed() }
        return top
    }

    /// Strict UTF-8: no overlong forms, no encoded surrogates, nothing above U+10FFFF.
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch b {
            case 0x00...0x7F: i += 1; continue
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard i + length <= bytes.count else { return false }
            guard (low...high).contains(bytes[i + 1]) else { return false }
            for k in 2..<length where !(0x80...0xBF).contains(bytes[i + k]) { return false }
            i += length
        }
        return true
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }
        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func next() throws -> UInt8 {
            guard index < bytes.count else { throw Malformed() }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func expect(_ ascii: Unicode.Scalar) throws {
            guard try next() == UInt8(ascii: ascii) else { throw Malformed() }
        }

        mutating func skipWhitespace() {
            while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { index += 1 }
        }

        mutating func topLevelObject() throws -> [Member] {
            try expect("{")
            var members: [Member] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "}") { index += 1; return members }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw Malformed() }
                let key = try string()
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                let value: MemberValue
                switch peek() ?? 0 {
                case UInt8(ascii: "\""): value = .string(try string())
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try number())
                default: try skipValue(enclosingDepth: 1); value = .other
                }
                members.append(Member(key: key, value: value))
                skipWhitespace()
                switch try next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): return members
                default: throw Malformed()
                }
            }
        }

        /// Validates one value of any shape without recursion, so hostile nesting costs a counter,
        /// not stack.
        mutating func skipValue(enclosingDepth: Int) throws {
            var open: [UInt8] = []
            while true {
                // A value starts here.
                skipWhitespace()
                var finished = true
                switch try next() {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let opener = bytes[index - 1]
                    guard enclosingDepth + open.count + 1 <= ReferenceJSON.maximumDepth else { throw Malformed() }
                    open.append(opener)
                    skipWhitespace()
                    let closer = opener == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if peek() == closer {
                        index += 1
                        open.removeLast()
                    } else {
                        if opener == UInt8(ascii: "{") { try memberName() }
                        finished = false
                    }
                case UInt8(ascii: "\""): index -= 1; _ = try string()
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): index -= 1; _ = try number()
                case UInt8(ascii: "t"): try literal("rue")
                case UInt8(ascii: "f"): try literal("alse")
                case UInt8(ascii: "n"): try literal("ull")
                default: throw Malformed()
                }
                guard finished else { continue }
                // A value ended: close containers until one wants another element.
                closing: while let top = open.last {
                    skipWhitespace()
                    let b = try next()
                    if b == UInt8(ascii: ",") {
                        if top == UInt8(ascii: "{") { try memberName() }
                        break closing
                    } else if (top == UInt8(ascii: "{") && b == UInt8(ascii: "}"))
                                || (top == UInt8(ascii: "[") && b == UInt8(ascii: "]")) {
                        open.removeLast()
                    } else {
                        throw Malformed()
                    }
                }
                if open.isEmpty { return }
            }
        }

        mutating func memberName() throws {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw Malformed() }
            _ = try string()
            skipWhitespace()
            try expect(":")
        }

        mutating func literal(_ rest: String) throws {
            for b in rest.utf8 {
                guard try next() == b else { throw Malformed() }
            }
        }

        mutating func number() throws -> Double {
            let start = index
            if peek() == UInt8(ascii: "-") { index += 1 }
            let first = try next()
            if first == UInt8(ascii: "0") {
                // nothing: a leading zero may not be followed by more digits
            } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first) {
                skipDigits()
            } else {
                throw Malformed()
            }
            if peek() == UInt8(ascii: ".") {
                index += 1
                try requireDigits()
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                try requireDigits()
            }
            let lexeme = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let value = Double(lexeme) else { throw Malformed() }
            return value
        }

        mutating func skipDigits() {
            while let b = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) { index += 1 }
        }

        mutating func requireDigits() throws {
            let start = index
            skipDigits()
            guard index > start else { throw Malformed() }
        }

        mutating func string() throws -> DecodedString {
            try expect("\"")
            var out: [UInt8] = []
            var valid = true
            while true {
                let b = try next()
                switch b {
                case UInt8(ascii: "\""):
                    return DecodedString(bytes: out, isValidUnicode: valid)
                case 0x00..<0x20:
                    throw Malformed()
                case UInt8(ascii: "\\"):
                    let e = try next()
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var unit = try hex4()
                        if (0xD800...0xDBFF).contains(unit), peek() == UInt8(ascii: "\\"),
                           index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") {
                            let save = index
                            index += 2
                            let low = try hex4()
                            if (0xDC00...0xDFFF).contains(low) {
                                unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                index = save  // the next escape stands on its own
                            }
                        }
                        if (0xD800...0xDFFF).contains(unit) { valid = false }
                        appendUTF8(unit, to: &out)
                    default:
                        throw Malformed()
                    }
                default:
                    out.append(b)
                }
            }
        }

        mutating func hex4() throws -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                let b = try next()
                let digit: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
                default: throw Malformed()
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        /// Plain UTF-8 arithmetic; surrogates come out as their 3-byte form on purpose (see
        /// `DecodedString`).
        func appendUTF8(_ v: UInt32, to out: inout [UInt8]) {
            switch v {
            case 0..<0x80: out.append(UInt8(v))
            case 0x80..<0x800: out += [UInt8(0xC0 | v >> 6), UInt8(0x80 | v & 0x3F)]
            case 0x800..<0x10000:
                out += [UInt8(0xE0 | v >> 12), UInt8(0x80 | v >> 6 & 0x3F), UInt8(0x80 | v & 0x3F)]
            default:
                out += [UInt8(0xF0 | v >> 18), UInt8(0x80 | v >> 12 & 0x3F),
                        UInt8(0x80 | v >> 6 & 0x3F), UInt8(0x80 | v & 0x3F)]
            }
        }
    }
}
