/// Text bound for a log, made safe: every control character (C0, DEL, C1) becomes a visible
/// escape (`\n`, `\r`, `\t`, `\x1B`, `\u0085`), so a file name or an option value holding a
/// newline or a terminal escape can neither forge a line of the log nor drive the terminal.
///
/// Backslashes are left alone: escaping is then idempotent (text escaped twice reads the
/// same), at the price that a name spelt with a literal `\n` prints like one with a newline.
public enum LogText {
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u00" + hex
            }
        }
        return out
    }

    @inline(__always)
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value <= 0x9F)
    }
}
