/// Writes JSON text into a byte array, escaping strings so that any parser gets back the
/// exact bytes (our ids are valid UTF-8: the scanner guarantees it).
struct JSONWriter {
    var bytes: [UInt8] = []

    mutating func raw(_ s: String) { bytes.append(contentsOf: s.utf8) }

    mutating func string(_ s: String) { string(Array(s.utf8)) }

    /// `"` and `\` escaped, control characters as short escapes or `\u00XX`, and U+2028 /
    /// U+2029 escaped too, since JavaScript string literals (and some "JSON" readers built on
    /// them) treat them as line breaks, and U+FEFF, which some readers strip. Everything else
    /// stays raw UTF-8.
    mutating func string(_ s: [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings (ids, paths, reasons) need no escape at all: copied whole.
        if !s.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0xE2 || $0 == 0xEF }) {
            bytes.append(contentsOf: s)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        var i = 0
        while i < s.count {
            let c = s[i]
            switch c {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x00..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(c >> 4)])
                bytes.append(hex[Int(c & 0xF)])
            case 0xE2 where i + 2 < s.count && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9):
                raw(s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                i += 2
            case 0xEF where i + 2 < s.count && s[i + 1] == 0xBB && s[i + 2] == 0xBF:
                // U+FEFF: some readers (Foundation among them) drop it at the start of a string.
                raw("\\ufeff")
                i += 2
            default:
                bytes.append(c)
            }
            i += 1
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func int(_ n: Int) { raw(String(n)) }

    /// The shortest text that reads back as the same double (Swift's `description` is that).
    mutating func double(_ x: Double) {
        if x == x.rounded(), abs(x) < 1e15 { raw(String(Int(x))) } else { raw(String(x)) }
    }
}
