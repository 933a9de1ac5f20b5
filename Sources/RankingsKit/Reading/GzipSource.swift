import CZlib
import Glibc

/// Inflates a gzip stream (one or more members, as `cat a.gz b.gz` makes) with the system zlib.
///
/// A stream that stops before a member's end, or holds bytes that are not gzip, is a
/// `corruptGzip` error naming the file: the data is bad, so retrying cannot help.
public struct GzipSource<Compressed: ByteSource>: ByteSource {
    private var compressed: Compressed
    private let path: String
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutablePointer<UInt8>
    private static var inputSize: Int { 256 << 10 }
    private var inputEOF = false
    private var finished = false
    /// Set after a member ends: the next input byte must start another member or be the end.
    private var betweenMembers = false

    public var bytesConsumed: Int64 { compressed.bytesConsumed }

    public init(_ compressed: Compressed, path: String) throws(InputError) {
        self.compressed = compressed
        self.path = path
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(capacity: Self.inputSize)
        // 15 + 16: the largest window, and the gzip wrapper only. With zlib's automatic
        // detection (+ 32) a zlib stream after a gzip member was read as one more member.
        let status = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw .readFailed(path: path, reason: "zlib could not start (status \(status))")
        }
    }

    /// Frees zlib's state; the source must not be read afterwards.
    public func close() {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
    }

    public mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        if finished { return 0 }
        stream.pointee.next_out = buffer.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(min(count, Int(UInt32.max)))
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0 && !inputEOF {
                let n = try compressed.read(into: input, count: Self.inputSize)
                if n == 0 { inputEOF = true } else {
                    stream.pointee.next_in = input
                    stream.pointee.avail_in = uInt(n)
                }
            }
            if betweenMembers {
                if stream.pointee.avail_in == 0 && inputEOF {
                    finished = true
                    break
                }
                if stream.pointee.avail_in == 0 { continue }
                inflateReset(stream)
                betweenMembers = false
            }
            let before = stream.pointee.avail_out
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                betweenMembers = true
            case Z_OK:
                break
            case Z_BUF_ERROR:
                // No progress possible: only an error when no more input will come.
                if inputEOF && stream.pointee.avail_out == before {
                    throw .corruptGzip(path: path, reason: "truncated gzip data")
                }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                throw .corruptGzip(path: path, reason: "corrupt gzip data: \(message)")
            }
            // Hand back what we have rather than wait for a full buffer at a member's end.
            if betweenMembers && stream.pointee.avail_out < uInt(count) { break }
        }
        return count - Int(stream.pointee.avail_out)
    }
}

/// The first two bytes of every gzip member.
public enum GzipMagic {
    public static func matches(_ b0: UInt8, _ b1: UInt8) -> Bool { b0 == 0x1F && b1 == 0x8B }
}
