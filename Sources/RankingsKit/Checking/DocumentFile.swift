import Glibc

/// Reads a whole document to check: a file, or standard input for `-`.
///
/// Reads at most one byte more than `DocumentChecker.maximumSize`, enough for the checker to
/// refuse an oversized input without this ever holding all of it.
enum DocumentFile {
    static func read(_ path: String) throws(InputError) -> [UInt8] {
        // Standard input is the caller's to keep open; a file opened here is closed here.
        let opened = path != "-"
        let fd = opened ? open(path, O_RDONLY | O_CLOEXEC) : 0
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { if opened { close(fd) } }
        // Reading a directory fails with EISDIR only at read(2); naming it up front makes it a
        // wrong path (66) like a missing file, not an I/O error.
        var st = stat()
        if fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR {
            throw .cannotOpen(path: path, reason: String(cString: strerror(EISDIR)))
        }
        // One byte past the limit at most: enough for the caller to see "too large".
        do {
            return try FileDescriptor.readAll(fd, limit: DocumentChecker.maximumSize)
        } catch {
            throw .readFailed(path: path, reason: error.reason)
        }
    }
}
