/// Where a byte offset falls in a document as an editor shows it: line and column, both from 1,
/// the column counted in characters (UTF-8 sequences), so `check` can send the operator to the
/// spot; the byte offset stays beside them for tools.
struct TextPosition: Equatable {
    var line = 1
    var column = 1

    init(of offset: Int, in bytes: [UInt8]) {
        for byte in bytes[..<min(max(offset, 0), bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0b1100_0000 != 0b1000_0000 {
                // A continuation byte belongs to the character before it.
                column += 1
            }
        }
    }

    /// "line 5, column 3 (byte 111)".
    static func describe(_ offset: Int, in bytes: [UInt8]) -> String {
        let position = TextPosition(of: offset, in: bytes)
        return "line \(position.line), column \(position.column) (byte \(offset))"
    }
}
