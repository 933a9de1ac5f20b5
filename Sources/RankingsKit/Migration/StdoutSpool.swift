import Glibc

/// Migrated output bound for standard output, held in an unlinked temporary file until the run
/// has succeeded.
///
/// A bad line near the end of an export must leave stdout empty, and holding a whole export in
/// memory would make memory grow with the input; a file that no other process can see (it has
/// no name once created) gives both, and the system removes it when the process ends, however
/// it ends.
final class StdoutSpool: MigrationDestination {
    /// Where the spool lives, as messages name it.
    let directory: String
    private var fd: Int32

    /// Creates the spool in `$TMPDIR`, or `/tmp` when that is unset or empty.
    init(directory: String? = nil) throws(OutputError) {
        let fromEnvironment = getenv("TMPDIR").map { String(cString: $0) } ?? ""
        let dir = directory ?? (fromEnvironment.isEmpty ? "/tmp" : fromEnvironment)
        self.directory = dir
        var template = Array(((dir.hasSuffix("/") ? dir : dir + "/") + "rankings-migrate-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw .cannotCreate(path: "a temporary file in \(dir)", reason: String(cString: strerror(errno)))
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    func writeBatch(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
        do {
            try FileDescriptor.writeAll(fd, bytes)
        } catch {
            throw .writeFailed(path: "a temporary file in \(directory)", reason: error.reason)
        }
    }

    /// Hands everything spooled, in order, to `stdout` in batch-sized pieces.
    func copy(to stdout: ([UInt8]) throws(OutputError) -> Void) throws(OutputError) {
        var chunk = [UInt8](repeating: 0, count: BatchedOutput.batchSize)
        var offset: off_t = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure()
            }
            if n == 0 { return }
            offset += off_t(n)
            try stdout(n == chunk.count ? chunk : Array(chunk[..<n]))
        }
    }

    private func failure() -> OutputError {
        .writeFailed(path: "a temporary file in \(directory)", reason: String(cString: strerror(errno)))
    }
}
