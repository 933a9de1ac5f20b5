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

    @inline(__always)
    mutating func varint() throws(Malformed) -> UInt64 {
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
        let key = try varint()
        guard let wire = WireType(rawValue: UInt8(key & 7)) else {
            throw Malformed(reason: "wire type \(key & 7)")
        }
        let field = key >> 3
        guard field > 0 && field < 1 << 29 else { throw Malformed(reason: "field number \(field)") }
        return (field, wire)
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
