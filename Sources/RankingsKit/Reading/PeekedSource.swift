/// Hands back bytes already read (to sniff a stream's first bytes) before reading on.
struct PeekedSource<Source: ByteSource>: ByteSource {
    var source: Source
    var peeked: [UInt8]
    var bytesConsumed: Int64 { source.bytesConsumed }

    /// Reads up to `count` leading bytes of `source` to look at.
    init(_ source: Source, peek count: Int) throws(InputError) {
        self.source = source
        peeked = []
        var byte: UInt8 = 0
        while peeked.count < count {
            let n = try self.source.read(into: &byte, count: 1)
            if n == 0 { break }
            peeked.append(byte)
        }
    }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        if !peeked.isEmpty {
            let n = min(count, peeked.count)
            peeked.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: n) }
            peeked.removeFirst(n)
            return n
        }
        return try source.read(into: buffer, count: count)
    }
}
