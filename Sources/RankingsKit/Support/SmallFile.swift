import Glibc

/// Whole small files: zone data, and the kernel's one-line files under /proc and /sys (whose
/// reported sizes mean nothing, so this reads to the end).
enum SmallFile {
    /// The bytes of a regular file, or nil if it cannot be read or is larger than `limit`.
    static func read(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        guard let bytes = try? FileDescriptor.readAll(fd, limit: limit), bytes.count <= limit else { return nil }
        return bytes
    }

    static func text(_ path: String) -> String? {
        read(path, limit: 64 << 10).map { String(decoding: $0, as: UTF8.self) }
    }
}
