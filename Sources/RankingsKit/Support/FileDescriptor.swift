import Glibc

/// A system call that failed, with its `errno`.
public struct SystemCallError: Error, Sendable {
    let code: Int32
    init(code: Int32) { self.code = code }
    /// `strerror`'s text, as every message of the program words it.
    public var reason: String { String(cString: strerror(code)) }
}

/// The loops every caller of `read(2)` and `write(2)` needs (short counts, `EINTR`), once.
public enum FileDescriptor {
    /// Writes every byte, or throws the error that stopped it.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(code: errno)
            }
            done += n
        }
    }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        let failure: SystemCallError? = bytes.withUnsafeBytes { buffer in
            do throws(SystemCallError) { try writeAll(fd, buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Reads to the end, or stops once more than `limit` bytes have come: a result longer than
    /// `limit` means "too large", and memory stays bounded whatever the file is.
    static func readAll(_ fd: Int32, limit: Int) throws(SystemCallError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(limit + 1, 64 << 10))
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, wanted) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(code: errno)
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
        }
        return bytes
    }
}
