/// UTF-8 well-formedness per Unicode's table 3-7: no overlong forms, no surrogates, nothing
/// above U+10FFFF, no truncated sequences.
enum UTF8Validation {
    /// Length of the well-formed sequence starting at `p` (whose first byte is >= 0x80), or 0.
    /// Reads at most 4 bytes; a truncated sequence meets a non-continuation byte (at the latest
    /// the line's `\n` sentinel) and is rejected there.
    @inline(__always)
    static func sequenceLength(_ p: UnsafePointer<UInt8>) -> Int {
        let b0 = p[0]
        @inline(__always) func cont(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
        switch b0 {
        case 0xC2...0xDF:
            return cont(p[1]) ? 2 : 0
        case 0xE0:
            return (0xA0...0xBF).contains(p[1]) && cont(p[2]) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF:
            return cont(p[1]) && cont(p[2]) ? 3 : 0
        case 0xED:
            return (0x80...0x9F).contains(p[1]) && cont(p[2]) ? 3 : 0
        case 0xF0:
            return (0x90...0xBF).contains(p[1]) && cont(p[2]) && cont(p[3]) ? 4 : 0
        case 0xF1...0xF3:
            return cont(p[1]) && cont(p[2]) && cont(p[3]) ? 4 : 0
        case 0xF4:
            return (0x80...0x8F).contains(p[1]) && cont(p[2]) && cont(p[3]) ? 4 : 0
        default:
            return 0
        }
    }
}
