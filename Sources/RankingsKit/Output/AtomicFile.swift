import Glibc

/// Why an output could not be written.
public enum OutputError: Error, Sendable, Equatable {
    /// The file cannot be created there: missing directory, a directory in its place, no
    /// permission (status 73).
    case cannotCreate(path: String, reason: String)
    /// Writing, flushing or renaming failed part way (status 74).
    case writeFailed(path: String, reason: String)
}

/// Replaces a file so that readers (and a crash at any moment) see the old complete file or
/// the new complete file, never a mix: write a temporary file beside the target, flush it to
/// disk, rename it over the target, flush the directory.
///
/// The temporary file is made up front, so a run that cannot write its output fails before it
/// reads gigabytes; until `commit`, the target is untouched. Temporary files are removed on
/// failure and on SIGINT/SIGTERM/SIGHUP (a `kill -9` can leave one behind, never a torn target).
///
/// A symbolic link is followed: the file it points to is replaced, the link stays. A target
/// that exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) cannot be
/// replaced by renaming without destroying it, so it is opened and written directly.
public final class AtomicFile {
    public let path: String
    /// Where the data goes: the link's target for a symbolic link, else `path`.
    private let targetPath: String
    private let temporaryPath: String?
    private var fd: Int32
    private var mode: mode_t

    /// The file a write to `path` replaces, as one spelling for every way of naming it
    /// (`out.json`, `./out.json`, a link to it, a directory reached through `..` or a link), so
    /// that a command can refuse two outputs that would land on the same file: the one written
    /// last would silently replace the other. A target that is not a regular file (`/dev/null`,
    /// a terminal) is written in place, not replaced, so it keeps the spelling it was given.
    public static func replacedFile(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            var st = stat()
            guard stat(resolved, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return path }
            return String(cString: resolved)
        }
        // Not there yet (or a dangling link, which the rename replaces): its directory, resolved.
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(directory, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + name
    }

    public init(path: String) throws(OutputError) {
        self.path = path
        var target = path
        if let resolved = realpath(path, nil) {
            target = String(cString: resolved)
            free(resolved)
        }
        targetPath = target
        var st = stat()
        if stat(target, &st) == 0 {
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                throw .cannotCreate(path: path, reason: "is a directory")
            case S_IFREG:
                mode = st.st_mode & 0o7777
            default:
                let fd = open(target, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
                self.fd = fd
                mode = 0
                temporaryPath = nil
                return
            }
        } else {
            let mask = umask(0)
            umask(mask)
            mode = 0o666 & ~mask
        }
        let slash = target.lastIndex(of: "/")
        let directory = slash.map { String(target[...$0]) } ?? ""
        let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
        var template = Array((directory + "." + name + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        temporaryPath = temporary
        TemporaryFiles.register(temporary)
    }

    deinit { discard() }

    public func write(_ bytes: [UInt8]) throws(OutputError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
            }
            done += n
        }
    }

    /// Flushes the new contents and puts them in place of the target.
    public func commit() throws(OutputError) {
        guard fd >= 0 else { return }
        guard let temporaryPath else {
            // Written in place: nothing to rename.
            let closed = close(fd)
            fd = -1
            if closed != 0 { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
            return
        }
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        guard rename(temporaryPath, targetPath) == 0 else {
            let reason = String(cString: strerror(errno))
            throw errno == EISDIR ? .cannotCreate(path: path, reason: reason) : .writeFailed(path: path, reason: reason)
        }
        TemporaryFiles.unregister(temporaryPath)
        // Make the rename itself durable.
        let slash = targetPath.lastIndex(of: "/")
        let directory = slash.map { String(targetPath[...$0]) } ?? "."
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }

    /// Removes the temporary file; the target stays as it was.
    public func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if let temporaryPath, TemporaryFiles.unregister(temporaryPath) { unlink(temporaryPath) }
    }
}

/// Temporary files to remove if the process is told to stop, from the signal handler.
///
/// Threads that create or finish outputs at the same time (tests do) take `lock`; the signal
/// handler cannot take a lock and only reads.
enum TemporaryFiles {
    private static let capacity = 8
    /// strdup'ed paths; the handler only reads them and calls `unlink`, which is async-signal-safe.
    nonisolated(unsafe) private static let paths: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
        table.initialize(repeating: nil, count: capacity)
        return table
    }()
    /// Guards `paths` and `installed` between threads.
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()
    nonisolated(unsafe) private static var installed = false

    static func register(_ path: String) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        installHandlers()
        for i in 0..<capacity where paths[i] == nil {
            paths[i] = strdup(path)
            return
        }
    }

    /// Returns whether `path` was still registered.
    @discardableResult
    static func unregister(_ path: String) -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        for i in 0..<capacity {
            if let p = paths[i], String(cString: p) == path {
                paths[i] = nil
                free(p)
                return true
            }
        }
        return false
    }

    private static func installHandlers() {
        guard !installed else { return }
        installed = true
        // Build the table now: the handler must never be the first to touch it.
        _ = paths
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(signal) { sig in
                for i in 0..<TemporaryFiles.capacity {
                    if let p = TemporaryFiles.paths[i] { unlink(p) }
                }
                Glibc.signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }
}
