/// The LevelDB log format by its description (doc/log_format.md), for the fuzz targets: the
/// whole file in memory, walked position by position, CRC-32C bit by bit; and the writer.
/// Shares nothing with Sources/.
enum ReferenceLog {
    static let block = 32_768

    enum Damage: String {
        case checksum, length, type, cutShort = "cut short", sequence, trailer
    }

    struct Outcome: Equatable {
        var records: [(offset: Int, bytes: [UInt8])]
        var damage: (offset: Int, kind: Damage)?

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.records.map(\.offset) == b.records.map(\.offset) && a.records.map(\.bytes) == b.records.map(\.bytes)
                && a.damage?.offset == b.damage?.offset && a.damage?.kind == b.damage?.kind
        }
    }

    /// The bit-by-bit CRC of each byte value, so the reference stays fast enough to fuzz.
    static let table: [UInt32] = (0..<256).map { (byte: UInt32) in
        var crc = byte
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    static func crc32c(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = (crc >> 8) ^ table[Int((crc ^ UInt32(byte)) & 0xFF)] }
        return ~crc
    }

    static func masked(type: UInt8, _ data: ArraySlice<UInt8>) -> UInt32 {
        let crc = crc32c([type] + data)
        return ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }

    /// Every record of `file` in order, up to the first damage (when there is one).
    static func read(_ file: [UInt8]) -> Outcome {
        var out = Outcome(records: [], damage: nil)
        let n = file.count
        let lastBlockPartial = n % block != 0
        var pos = 0
        var open: (start: Int, bytes: [UInt8])?
        func fail(_ at: Int, _ kind: Damage) -> Outcome {
            out.damage = (at, kind)
            return out
        }
        while pos < n {
            let blockEnd = min((pos / block + 1) * block, n)
            let left = blockEnd - pos
            let atEndOfPartialBlock = blockEnd == n && lastBlockPartial
            if left < 7 {
                if file[pos..<blockEnd].allSatisfy({ $0 == 0 }) { pos = blockEnd; continue }
                return fail(pos, atEndOfPartialBlock ? .cutShort : .trailer)
            }
            let type = file[pos + 6]
            if type > 4 { return fail(pos, .type) }
            if type == 0 {
                if file[pos..<blockEnd].allSatisfy({ $0 == 0 }) { pos = blockEnd; continue }
                return fail(pos, .trailer)
            }
            let length = Int(file[pos + 4]) + 256 * Int(file[pos + 5])
            if length > left - 7 { return fail(pos, atEndOfPartialBlock ? .cutShort : .length) }
            let data = file[(pos + 7)..<(pos + 7 + length)]
            let stored = UInt32(file[pos]) | UInt32(file[pos + 1]) << 8 | UInt32(file[pos + 2]) << 16 | UInt32(file[pos + 3]) << 24
            if masked(type: type, data) != stored { return fail(pos, .checksum) }
            switch type {
            case 1:
                if open != nil { return fail(pos, .sequence) }
                out.records.append((pos, Array(data)))
            case 2:
                if open != nil { return fail(pos, .sequence) }
                open = (pos, Array(data))
            case 3:
                guard open != nil else { return fail(pos, .sequence) }
                open!.bytes += data
            default:
                guard let record = open else { return fail(pos, .sequence) }
                out.records.append((record.start, record.bytes + data))
                open = nil
            }
            pos += 7 + length
        }
        if let open { return fail(open.start, .cutShort) }
        return out
    }

    /// The file LevelDB's writer makes of `records`.
    static func write(_ records: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for record in records {
            var rest = record[...]
            var first = true
            repeat {
                let left = block - out.count % block
                if left < 7 {
                    out += [UInt8](repeating: 0, count: left)
                    continue
                }
                let piece = rest.prefix(left - 7)
                rest = rest.dropFirst(piece.count)
                let type: UInt8 = rest.isEmpty ? (first ? 1 : 4) : (first ? 2 : 3)
                out += header(type: type, piece) + piece
                first = false
            } while !rest.isEmpty
        }
        return out
    }

    static func header(type: UInt8, _ data: ArraySlice<UInt8>) -> [UInt8] {
        let crc = masked(type: type, data)
        return [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24),
                UInt8(data.count & 0xFF), UInt8(data.count >> 8), type]
    }
}
