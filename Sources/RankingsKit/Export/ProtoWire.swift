/// Protocol Buffers' wire format, read by hand over a borrowed buffer: the few entity fields the
/// job needs are picked out without building messages. Every read is bounds-checked; anything
/// that cannot be (a varint past ten bytes, a length past the end, wire types 6 and 7, an end
/// group that matches no start) makes the message undecodable.
struct ProtoWire {
    enum WireType: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5
    }

    struct Malformed: Error {
        var reason: String
    }

    private(set) var p: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>

    init(_ bytes: UnsafeRawBufferPointer) {
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        p = base
        end = base + bytes.count
    }

    init(start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) {
        p = start
        self.end = end
    }

    var atEnd: Bool { p >= end }

    /// Runs `body` over an array's bytes (whose own `withUnsafeBytes` only rethrows untyped).
    static func over<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(Malformed) -> T) throws(Malformed) -> T {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(Malformed) -> T in try body(raw) }
        }
        return try result.get()
    }

    /// Most varints in an entity (tags, lengths, small values) are one or two bytes: read those
    /// inline, the rest (and every error) out of line.
    @inline(__always)
    mutating func varint() throws(Malformed) -> UInt64 {
        if p < end {
            let b = p.pointee
            if b < 0x80 {
                p += 1
                return UInt64(b)
            }
            if end - p >= 2 {
                let b1 = p[1]
                if b1 < 0x80 {
                    p += 2
                    return UInt64(b & 0x7F) | UInt64(b1) << 7
                }
            }
        }
        return try longVarint()
    }

    @inline(never)
    private mutating func longVarint() throws(Malformed) -> UInt64 {
        // Up to eight bytes at once when eight are there (a timestamp's microseconds take
        // eight): the bytes up to the first without its high bit, their 7-bit groups packed
        // together in three steps (pairs, fours, eights).
        if end - p >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
            let stops = ~word & 0x8080_8080_8080_8080
            if stops != 0 {
                var x = word & (stops ^ (stops &- 1)) & 0x7F7F_7F7F_7F7F_7F7F
                x = (x & 0x007F_007F_007F_007F) | (x & 0x7F00_7F00_7F00_7F00) >> 1
                x = (x & 0x0000_3FFF_0000_3FFF) | (x & 0x3FFF_0000_3FFF_0000) >> 2
                x = (x & 0x0000_0000_0FFF_FFFF) | (x & 0x0FFF_FFFF_0000_0000) >> 4
                p += stops.trailingZeroBitCount / 8 + 1
                return x
            }
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard p < end else { throw Malformed(reason: "a varint runs past the end") }
            let b = p.pointee
            p += 1
            if shift == 63 && b > 1 { throw Malformed(reason: "a varint longer than 64 bits") }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    /// The next field's number and wire type.
    @inline(__always)
    mutating func tag() throws(Malformed) -> (field: UInt64, wire: WireType) {
        try Self.split(try varint())
    }

    /// A field's key (number << 3 | wire type) split and checked, as `tag()` does. Decoders on
    /// the hot path read the key with `varint()`, switch on the few keys they pick out (valid
    /// by construction), and split only the others, which come to the same checks in the same
    /// order.
    @inline(__always)
    static func split(_ key: UInt64) throws(Malformed) -> (field: UInt64, wire: WireType) {
        let raw = UInt8(truncatingIfNeeded: key) & 7
        guard raw <= WireType.fixed32.rawValue else { throw Malformed(reason: "wire type \(raw)") }
        let field = key >> 3
        guard field > 0 && field < 1 << 29 else { throw Malformed(reason: "field number \(field)") }
        return (field, WireType(rawValue: raw).unsafelyUnwrapped)
    }

    @inline(__always)
    mutating func bytes() throws(Malformed) -> UnsafeBufferPointer<UInt8> {
        let length = try varint()
        guard length <= UInt64(end - p) else { throw Malformed(reason: "a \(length)-byte field runs past the end") }
        let value = UnsafeBufferPointer(start: p, count: Int(length))
        p += Int(length)
        return value
    }

    @inline(__always)
    mutating func fixed64() throws(Malformed) -> UInt64 {
        guard end - p >= 8 else { throw Malformed(reason: "a fixed64 field runs past the end") }
        let value = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
        p += 8
        return UInt64(littleEndian: value)
    }

    /// Skips the field whose key was just read, after checking the key as `tag()` does; a
    /// length-delimited field (the usual one to skip) inline.
    @inline(__always)
    mutating func skipField(_ key: UInt64) throws(Malformed) {
        let (field, wire) = try Self.split(key)
        if wire == .lengthDelimited {
            _ = try bytes()
        } else {
            try skip(wire, field: field)
        }
    }

    /// Skips a field's value; for a group, everything up to its matching end.
    mutating func skip(_ wire: WireType, field: UInt64, depth: Int = 0) throws(Malformed) {
        switch wire {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .lengthDelimited: _ = try bytes()
        case .fixed32:
            guard end - p >= 4 else { throw Malformed(reason: "a fixed32 field runs past the end") }
            p += 4
        case .startGroup:
            guard depth < 64 else { throw Malformed(reason: "groups nested too deep") }
            while true {
                let (inner, innerWire) = try tag()
                if innerWire == .endGroup {
                    guard inner == field else { throw Malformed(reason: "group \(field) ended as \(inner)") }
                    return
                }
                try skip(innerWire, field: inner, depth: depth + 1)
            }
        case .endGroup:
            throw Malformed(reason: "an end of group \(field) with no start")
        }
    }
}
