/// An independent LevelDB log writer and EntityProto encoder for the tests (shares no code with
/// the reader): records cut into fragments at 32 KiB block edges, zero trailers, masked CRC-32C
/// computed bit by bit.
enum TestLog {
    static let block = 32_768

    static func crc32c(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    static func masked(type: UInt8, _ data: ArraySlice<UInt8>) -> UInt32 {
        let crc = crc32c([type] + data)
        return ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }

    static func header(type: UInt8, _ data: ArraySlice<UInt8>) -> [UInt8] {
        let crc = masked(type: type, data)
        return [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24),
                UInt8(data.count & 0xFF), UInt8(data.count >> 8), type]
    }

    /// The log file of `records`, as LevelDB's writer lays it out.
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
                let room = left - 7
                let piece = rest.prefix(room)
                rest = rest.dropFirst(piece.count)
                let type: UInt8 = rest.isEmpty ? (first ? 1 : 4) : (first ? 2 : 3)
                out += header(type: type, piece) + piece
                first = false
            } while !rest.isEmpty
        }
        return out
    }

    /// Rewrites the header at `offset` with another type (and a checksum that matches it).
    static func retype(_ bytes: inout [UInt8], at offset: Int, to type: UInt8) {
        let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
        let fixed = header(type: type, bytes[(offset + 7)..<(offset + 7 + length)])
        bytes.replaceSubrange(offset..<(offset + 7), with: fixed)
    }
}

/// Protocol Buffers encoding of the EntityProto fields the reader looks at.
enum TestEntity {
    enum Value {
        case null, integer(Int64), boolean(Bool), string([UInt8]), double(Double), point(Double, Double)
    }

    struct Property {
        var name: String
        var value: Value
        var meaning: UInt64 = 0
        var multiple = false
        /// raw_property (15), as Firestore writes; or property (14).
        var indexed = false
    }

    static func varint(_ v: UInt64) -> [UInt8] {
        var v = v
        var out: [UInt8] = []
        while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        return out + [UInt8(v)]
    }

    static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] { varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes }
    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }
    static func field(_ number: UInt64, fixed64 value: UInt64) -> [UInt8] {
        varint(number << 3 | 1) + (0..<8).map { UInt8(value >> (8 * UInt64($0)) & 0xFF) }
    }

    static func value(_ v: Value) -> [UInt8] {
        switch v {
        case .null: []
        case .integer(let i): field(1, varint: UInt64(bitPattern: i))
        case .boolean(let b): field(2, varint: b ? 1 : 0)
        case .string(let s): field(3, bytes: s)
        case .double(let d): field(4, fixed64: d.bitPattern)
        case .point(let x, let y): varint(5 << 3 | 3) + field(6, fixed64: x.bitPattern) + field(7, fixed64: y.bitPattern) + varint(5 << 3 | 4)
        }
    }

    enum ID { case name(String), id(Int64) }

    /// The key is Reference { app = 13, path = 14, name_space = 20, database_id = 23 }.
    static func encode(path: [(String, ID)], _ properties: [Property], app: String = "dev~test",
                       database: String? = nil, namespace: String? = nil) -> [UInt8] {
        var elements: [UInt8] = []
        for (kind, id) in path {
            elements += varint(1 << 3 | 3) + field(2, bytes: Array(kind.utf8))
            switch id {
            case .name(let name): elements += field(4, bytes: Array(name.utf8))
            case .id(let number): elements += field(3, varint: UInt64(bitPattern: number))
            }
            elements += varint(1 << 3 | 4)
        }
        var key = field(13, bytes: Array(app.utf8)) + field(14, bytes: elements)
        if let namespace { key += field(20, bytes: Array(namespace.utf8)) }
        if let database { key += field(23, bytes: Array(database.utf8)) }
        var out = field(13, bytes: key)
        for p in properties {
            var body = p.meaning == 0 ? [] : field(1, varint: p.meaning)
            body += field(3, bytes: Array(p.name.utf8)) + field(4, varint: p.multiple ? 1 : 0) + field(5, bytes: value(p.value))
            out += field(p.indexed ? 14 : 15, bytes: body)
        }
        return out + field(16, bytes: [])
    }

    /// A valid top-level vote.
    static func vote(_ id: String, joke: String = "j1", rating: Value = .integer(5), padding: Int = 0) -> [UInt8] {
        var properties = [Property(name: "joke_id", value: .string(Array(joke.utf8))), Property(name: "rating", value: rating)]
        if padding > 0 { properties.append(Property(name: "note", value: .string([UInt8](repeating: 0x78, count: padding)))) }
        return encode(path: [("rating_events", .name(id))], properties)
    }
}
