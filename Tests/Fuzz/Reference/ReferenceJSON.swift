/// A deliberately plain RFC 8259 parser, written from the RFC's grammar for the fuzz targets to
/// compare the product against. It recurses, builds arrays and decodes UTF-8 scalar by scalar:
/// slow and obvious on purpose, and sharing nothing with `Sources/`.
enum RefJSON {
    /// A parsed value; strings keep whether a `\u` escape was a lone surrogate.
    indirect enum Value {
        case null, bool(Bool)
        case number(text: [UInt8])
        case string(RefString)
        case array([Value])
        case object([Member])
    }

    struct RefString: Equatable {
        /// The unescaped text as UTF-8; a lone surrogate escape is written as its 3-byte form.
        var bytes: [UInt8]
        var hasLoneSurrogate: Bool
    }

    struct Member {
        var key: RefString
        var value: Value
        /// Where the value's text sits in the parsed bytes.
        var valueRange: Range<Int>
    }

    /// Whitespace inside one NDJSON line: `\n` ends the line, so it is not listed here.
    static let lineSpace: Set<UInt8> = [0x20, 0x09, 0x0D]
    /// Whitespace in a whole document.
    static let documentSpace: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]

    /// The value of the whole text, or nil when it is not one JSON text within `maxDepth`.
    static func parse(_ text: [UInt8], space: Set<UInt8> = lineSpace, maxDepth: Int = 1000) -> Value? {
        var p = Parser(b: text, space: space, maxDepth: maxDepth)
        p.skipSpace()
        guard let v = p.value(depth: 1) else { return nil }
        p.skipSpace()
        return p.i == text.count ? v : nil
    }

    struct Parser {
        let b: [UInt8]
        let space: Set<UInt8>
        let maxDepth: Int
        var i = 0

        init(b: [UInt8], space: Set<UInt8>, maxDepth: Int) {
            self.b = b
            self.space = space
            self.maxDepth = maxDepth
        }

        var peek: UInt8? { i < b.count ? b[i] : nil }

        mutating func skipSpace() { while let c = peek, space.contains(c) { i += 1 } }

        mutating func eat(_ c: Character) -> Bool {
            if peek == c.asciiValue! { i += 1; return true }
            return false
        }

        mutating func value(depth: Int) -> Value? {
            guard let c = peek else { return nil }
            switch c {
            case UInt8(ascii: "{"):
                guard depth <= maxDepth else { return nil }
                i += 1
                var members: [Member] = []
                skipSpace()
                if eat("}") { return .object(members) }
                while true {
                    skipSpace()
                    guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard eat(":") else { return nil }
                    skipSpace()
                    let start = i
                    guard let v = value(depth: depth + 1) else { return nil }
                    members.append(Member(key: key, value: v, valueRange: start..<i))
                    skipSpace()
                    if eat(",") { continue }
                    return eat("}") ? .object(members) : nil
                }
            case UInt8(ascii: "["):
                guard depth <= maxDepth else { return nil }
                i += 1
                var elements: [Value] = []
                skipSpace()
                if eat("]") { return .array(elements) }
                while true {
                    skipSpace()
                    guard let v = value(depth: depth + 1) else { return nil }
                    elements.append(v)
                    skipSpace()
                    if eat(",") { continue }
                    return eat("]") ? .array(elements) : nil
                }
            case UInt8(ascii: "\""):
                return string().map { .string($0) }
            case UInt8(ascii: "t"): return word("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return word("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return word("null") ? .null : nil
            default:
                return number()
            }
        }

        mutating func word(_ w: String) -> Bool {
            let u = Array(w.utf8)
            guard i + u.count <= b.count, Array(b[i..<(i + u.count)]) == u else { return false }
            i += u.count
            return true
        }

        static func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

        /// number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT )
        mutating func number() -> Value? {
            let start = i
            _ = eat("-")
            guard Self.isDigit(peek) else { return nil }
            if eat("0") {
                if Self.isDigit(peek) { return nil }
            } else {
                while Self.isDigit(peek) { i += 1 }
            }
            if eat(".") {
                guard Self.isDigit(peek) else { return nil }
                while Self.isDigit(peek) { i += 1 }
            }
            if eat("e") || eat("E") {
                if !eat("+") { _ = eat("-") }
                guard Self.isDigit(peek) else { return nil }
                while Self.isDigit(peek) { i += 1 }
            }
            return .number(text: Array(b[start..<i]))
        }

        static func hexValue(_ c: UInt8) -> UInt32? {
            switch c {
            case 0x30...0x39: UInt32(c - 0x30)
            case 0x41...0x46: UInt32(c - 0x41 + 10)
            case 0x61...0x66: UInt32(c - 0x61 + 10)
            default: nil
            }
        }

        mutating func hex4() -> UInt32? {
            guard i + 4 <= b.count else { return nil }
            var v: UInt32 = 0
            for k in 0..<4 {
                guard let h = Self.hexValue(b[i + k]) else { return nil }
                v = v * 16 + h
            }
            i += 4
            return v
        }

        mutating func string() -> RefString? {
            i += 1
            var out = RefString(bytes: [], hasLoneSurrogate: false)
            while true {
                guard let c = peek else { return nil }
                if c == UInt8(ascii: "\"") { i += 1; return out }
                if c < 0x20 { return nil }
                if c == UInt8(ascii: "\\") {
                    i += 1
                    guard let e = peek else { return nil }
                    i += 1
                    switch e {
                    case UInt8(ascii: "\""): out.bytes.append(0x22)
                    case UInt8(ascii: "\\"): out.bytes.append(0x5C)
                    case UInt8(ascii: "/"): out.bytes.append(0x2F)
                    case UInt8(ascii: "b"): out.bytes.append(0x08)
                    case UInt8(ascii: "f"): out.bytes.append(0x0C)
                    case UInt8(ascii: "n"): out.bytes.append(0x0A)
                    case UInt8(ascii: "r"): out.bytes.append(0x0D)
                    case UInt8(ascii: "t"): out.bytes.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let u = hex4() else { return nil }
                        var scalar = u
                        if u >= 0xD800 && u <= 0xDBFF {
                            // A pair only when `\u` and a low surrogate follow at once.
                            let save = i
                            if eat("\\") && eat("u"), let low = hex4(), low >= 0xDC00 && low <= 0xDFFF {
                                scalar = 0x10000 + (u - 0xD800) * 0x400 + (low - 0xDC00)
                            } else {
                                i = save
                                out.hasLoneSurrogate = true
                            }
                        } else if u >= 0xDC00 && u <= 0xDFFF {
                            out.hasLoneSurrogate = true
                        }
                        out.bytes += RefUTF8.encode(scalar)
                    default:
                        return nil
                    }
                    continue
                }
                if c < 0x80 { out.bytes.append(c); i += 1; continue }
                guard let (_, length) = RefUTF8.decode(b, at: i) else { return nil }
                out.bytes += b[i..<(i + length)]
                i += length
            }
        }
    }
}

/// UTF-8 by the definition: a scalar's bits spread over 1–4 bytes, the shortest form only,
/// no surrogates, nothing above U+10FFFF.
enum RefUTF8 {
    static func decode(_ b: [UInt8], at i: Int) -> (UInt32, Int)? {
        let lead = b[i]
        let length: Int, initial: UInt32, minimum: UInt32
        if lead & 0xE0 == 0xC0 { (length, initial, minimum) = (2, UInt32(lead & 0x1F), 0x80) }
        else if lead & 0xF0 == 0xE0 { (length, initial, minimum) = (3, UInt32(lead & 0x0F), 0x800) }
        else if lead & 0xF8 == 0xF0 { (length, initial, minimum) = (4, UInt32(lead & 0x07), 0x10000) }
        else { return nil }
        guard i + length <= b.count else { return nil }
        var scalar = initial
        for k in 1..<length {
            guard b[i + k] & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(b[i + k] & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return nil }
        return (scalar, length)
    }

    /// Any code point, surrogates included (their 3-byte form), as bytes.
    static func encode(_ s: UInt32) -> [UInt8] {
        if s < 0x80 { return [UInt8(s)] }
        if s < 0x800 { return [UInt8(0xC0 | s >> 6), UInt8(0x80 | s & 0x3F)] }
        if s < 0x10000 { return [UInt8(0xE0 | s >> 12), UInt8(0x80 | s >> 6 & 0x3F), UInt8(0x80 | s & 0x3F)] }
        return [UInt8(0xF0 | s >> 18), UInt8(0x80 | s >> 12 & 0x3F), UInt8(0x80 | s >> 6 & 0x3F), UInt8(0x80 | s & 0x3F)]
    }
}
