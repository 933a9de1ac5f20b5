/// Turns the text between a JSON string's quotes into the bytes it stands for.
enum JSONString {
    /// Appends the unescaped UTF-8 of `raw` (already validated by `JSONLineScanner`) to `out`.
    /// Returns false when a `\u` escape is a lone surrogate and `allowLoneSurrogates` is false;
    /// when allowed, a lone surrogate is written in the 3-byte form UTF-8 would give it
    /// (WTF-8), so that two different lone surrogates stay two different keys.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>, into out: inout ByteBuffer,
                         allowLoneSurrogates: Bool) -> Bool {
        var i = 0
        let n = raw.count
        while i < n {
            let c = raw[i]
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(raw, i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate counts only when a low one follows at once.
                    if i + 6 <= n, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u"),
                       case let low = hex4(raw, i + 2), (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    } else {
                        guard allowLoneSurrogates else { return false }
                    }
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    guard allowLoneSurrogates else { return false }
                }
                appendUTF8(scalar, to: &out)
            default: out.append(e) // \" \\ \/
            }
        }
        return true
    }

    private static func hex4(_ raw: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in i..<(i + 4) {
            let c = raw[k]
            let d: UInt8 = c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : (c | 0x20) - UInt8(ascii: "a") + 10
            v = v << 4 | UInt32(d)
        }
        return v
    }

    static func appendUTF8(_ scalar: UInt32, to out: inout ByteBuffer) {
        switch scalar {
        case ..<0x80:
            out.append(UInt8(scalar))
        case ..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
