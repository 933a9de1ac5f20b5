import CLinux
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
/// the new complete file, never a mix: write the new contents to a file beside the target that
/// has no name, flush it to disk, give it a name, rename it over the target, flush the directory.
///
/// The file is made up front, so a run that cannot write its output fails before it reads
/// gigabytes; until `commit`, the target is untouched. It is an unnamed file (`O_TMPFILE`), so
/// no death of the process (any signal, `kill -9`, a renamed directory) leaves anything behind;
/// it gets a short temporary name (`.rankings-` and 12 hex digits, whatever the target's length)
/// only for the instant of the rename. Where the filesystem has no unnamed files (or `/proc` is
/// missing, through which one is linked), the file is named from the start, and removed on
/// failure and on the signals that end a process by default.
///
/// Several files can be committed as one (`commit(_:)`): each replaced target keeps its old
/// contents aside (an atomic exchange of names) until every one is in place, so a failure part
/// way puts the earlier ones back.
///
/// A symbolic link is followed: the file it points to is replaced, the link stays. A target
/// that exists and is not a regular file (a FIFO, a socket, a device such as `/dev/null`, a
/// directory, or a link to one) is refused (`refusal(_:)`): renaming over it would destroy it,
/// and opening it to write in place could block the run for ever (a FIFO with no reader).
public final class AtomicFile {
    let path: String
    private var fd: Int32
    private var mode: mode_t
    /// The target's directory, held open: the file lands in the directory the run started
    /// with, even if that directory is renamed meanwhile.
    private let directory: Int32
    /// The target's name in `directory`.
    private let name: String
    /// The name the new contents have in `directory`: nil while unnamed; after an exchange
    /// with the target, the name of the old contents until `finish`.
    private var temporaryName: String?
    /// After `place`: what `restore` undoes.
    private var placed = Placement.none

    private enum Placement { case none, exchanged, created, replaced }

    /// The file a write to `path` replaces, as one spelling for every way of naming it
    /// (`out.json`, `./out.json`, a link to it, a directory reached through `..` or a link), so
    /// that a command can refuse two outputs that would land on the same file: the one written
    /// last would silently replace the other. A target that is not a regular file, which
    /// `refusal` refuses, keeps the spelling it was given.
    public static func replacedFile(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            var st = stat()
            guard stat(resolved, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return path }
            return String(cString: resolved)
        }
        // Not there yet (or a dangling link, which the rename replaces): its directory, resolved.
        let (directory, name) = split(path)
        guard let resolved = realpath(directory, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + name
    }

    /// `a/b/c` as (`a/b`, `c`); a bare name is in `.`.
    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        return (directory, String(path[path.index(after: slash)...]))
    }

    /// Why the job will not write `path`: what stands there is not a regular file (a FIFO, a
    /// socket, a device, a directory, or a link to one); nil when it is one, a link to one, or
    /// nothing (a dangling link included, which the rename replaces as it always has).
    ///
    /// Decided by `stat`, which follows links and never opens what it looks at, so it cannot
    /// block on a FIFO however the path is spelled; every output is checked so before any input
    /// is read. What appears at the path later cannot block the run either: `init` never opens
    /// the target (it writes a new file beside it and renames it into place), and the two
    /// readers of an old output (the guard's previous document, the metrics' last success) open
    /// it with `O_NONBLOCK` and check the descriptor with `fstat` before reading. (Not
    /// `O_NOFOLLOW`: a link to a regular file is a supported way to name an output.)
    public static func refusal(_ path: String) -> OutputError? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil } // absent, or unreachable: `init` says why
        let kind: String
        switch st.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFDIR: kind = "a directory"
        default: kind = "a special file"
        }
        var link = stat()
        let linked = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        return .cannotCreate(path: path, reason: (linked ? "a link to " : "") + kind + ", not a regular file")
    }

    init(path: String) throws(OutputError) {
        self.path = path
        if let refusal = Self.refusal(path) { throw refusal }
        var target = path
        if let resolved = realpath(path, nil) {
            target = String(cString: resolved)
            free(resolved)
        }
        var st = stat()
        if stat(target, &st) == 0 {
            // A regular file (`refusal` turned away the rest): the new one keeps its mode. Should
            // something else have taken its place since, the rename below still never blocks.
            mode = st.st_mode & 0o7777
        } else {
            let mask = umask(0)
            umask(mask)
            mode = 0o666 & ~mask
        }
        let parts = Self.split(target)
        name = parts.name
        directory = open(parts.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        var fd: Int32 = -1
        if Self.canLinkUnnamedFiles {
            fd = openat(directory, ".", rankings_O_TMPFILE | O_WRONLY | O_CLOEXEC, 0o600)
            // Only a filesystem without unnamed files falls back; any other error is the answer.
            if fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL {
                let reason = String(cString: strerror(errno))
                close(directory)
                throw .cannotCreate(path: path, reason: reason)
            }
        }
        if fd < 0 {
            guard let (named, temporary) = Self.createNamed(in: directory) else {
                let reason = String(cString: strerror(errno))
                close(directory)
                throw .cannotCreate(path: path, reason: reason)
            }
            fd = named
            temporaryName = temporary
        }
        self.fd = fd
    }

    deinit {
        discard()
        close(directory)
    }

    /// An unnamed file is named through `/proc/self/fd` (`linkat` with `AT_EMPTY_PATH` needs a
    /// privilege the service user lacks).
    private static let canLinkUnnamedFiles = access("/proc/self/fd", X_OK) == 0

    /// A short name no other file has: `.rankings-` and 12 hex digits.
    private static func freshName() -> String {
        var bytes: UInt64 = 0
        if getrandom(&bytes, 8, 0) != 8 {
            var t = timespec()
            clock_gettime(CLOCK_REALTIME, &t)
            bytes = UInt64(truncatingIfNeeded: t.tv_nsec) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(getpid())
        }
        let hex = String(bytes & 0xFFFF_FFFF_FFFF, radix: 16)
        return ".rankings-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// Creates a named temporary file in `directory` (registered for removal on a signal).
    private static func createNamed(in directory: Int32) -> (Int32, String)? {
        while true {
            let name = freshName()
            TemporaryFiles.register(directory: directory, name: name)
            let fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, name) }
            let error = errno
            TemporaryFiles.unregister(directory: directory, name: name)
            errno = error
            if error != EEXIST { return nil }
        }
    }

    func write(_ bytes: [UInt8]) throws(OutputError) {
        do {
            try FileDescriptor.writeAll(fd, bytes)
        } catch {
            throw .writeFailed(path: path, reason: error.reason)
        }
    }

    /// Flushes the new contents and puts them in place of the target.
    func commit() throws(OutputError) { try Self.commit([self]) }

    /// Puts every file in place of its target, or none: a failure flushing any of them leaves
    /// every target untouched, and a failure renaming one puts back the targets already replaced
    /// (where the filesystem can exchange names; everywhere Linux keeps files on disk).
    ///
    /// `last` runs once every file is in place, before the old contents are dropped: if it
    /// throws (standard output is full), every target gets its old contents back as well.
    static func commit(_ files: [AtomicFile],
                              last: () throws(OutputError) -> Void = {}) throws(OutputError) {
        for file in files { try file.flush() }
        var done: [AtomicFile] = []
        do {
            for file in files {
                try file.place()
                done.append(file)
            }
            try last()
        } catch {
            for file in done.reversed() { file.restore() }
            for file in files { file.discard() }
            throw error
        }
        for file in done { file.finish() }
    }

    private func flush() throws(OutputError) {
        guard fd >= 0 else { return }
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Gives the new contents the target's name; the old contents, if any, keep a temporary name.
    private func place() throws(OutputError) {
        guard fd >= 0 else { return }
        if temporaryName == nil {
            while true {
                let candidate = Self.freshName()
                TemporaryFiles.register(directory: directory, name: candidate)
                if linkat(AT_FDCWD, "/proc/self/fd/\(fd)", directory, candidate, AT_SYMLINK_FOLLOW) == 0 {
                    temporaryName = candidate
                    break
                }
                let error = errno
                TemporaryFiles.unregister(directory: directory, name: candidate)
                if error != EEXIST { throw .writeFailed(path: path, reason: String(cString: strerror(error))) }
            }
        }
        let temporary = temporaryName!
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        var st = stat()
        let exists = fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0
        if exists && st.st_mode & S_IFMT == S_IFDIR {
            throw .cannotCreate(path: path, reason: String(cString: strerror(EISDIR)))
        }
        if exists && st.st_mode & S_IFMT == S_IFREG
            && rankings_renameat2(directory, temporary, directory, name, rankings_RENAME_EXCHANGE) == 0 {
            placed = .exchanged
            return
        }
        guard renameat(directory, temporary, directory, name) == 0 else {
            let reason = String(cString: strerror(errno))
            throw errno == EISDIR ? .cannotCreate(path: path, reason: reason) : .writeFailed(path: path, reason: reason)
        }
        TemporaryFiles.unregister(directory: directory, name: temporary)
        temporaryName = nil
        placed = exists ? .replaced : .created
    }

    /// Undoes `place` after a later file of the same commit failed.
    private func restore() {
        switch placed {
        case .exchanged:
            if let temporaryName, rankings_renameat2(directory, temporaryName, directory, name, rankings_RENAME_EXCHANGE) == 0 {
                unlinkat(directory, temporaryName, 0)
                TemporaryFiles.unregister(directory: directory, name: temporaryName)
                self.temporaryName = nil
            }
        case .created:
            unlinkat(directory, name, 0)
        case .none, .replaced:
            break // an old target replaced without an exchange cannot come back
        }
        placed = .none
    }

    /// Drops the old contents and makes the renames durable.
    private func finish() {
        if placed == .exchanged, let temporaryName {
            unlinkat(directory, temporaryName, 0)
            TemporaryFiles.unregister(directory: directory, name: temporaryName)
            self.temporaryName = nil
        }
        placed = .none
        fsync(directory)
    }

    /// Removes the new contents; the target stays as it was.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if placed == .none, let temporaryName, TemporaryFiles.unregister(directory: directory, name: temporaryName) {
            unlinkat(directory, temporaryName, 0)
            self.temporaryName = nil
        }
    }
}

/// Temporary names to remove if the process is told to stop, from the signal handler: the
/// named fallback files, and any file during the instant of its rename.
///
/// Each is a directory descriptor and a name in it, so a directory renamed during the run does
/// not hide its files. Threads that create or finish outputs at the same time (tests do) take
/// `lock`; the signal handler cannot take a lock and only reads.
enum TemporaryFiles {
    private static let capacity = 16
    /// strdup'ed names and their directories; the handler only reads them and calls `unlinkat`,
    /// which is async-signal-safe.
    nonisolated(unsafe) private static let names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
        table.initialize(repeating: nil, count: capacity)
        return table
    }()
    nonisolated(unsafe) private static let directories: UnsafeMutablePointer<Int32> = {
        let table = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        table.initialize(repeating: -1, count: capacity)
        return table
    }()
    /// Guards the tables and `installed` between threads.
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()
    nonisolated(unsafe) private static var installed = false

    /// The signals whose default action ends the process, except those that report a crash
    /// (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE: the runtime's own) and SIGPIPE
    /// (ignored: a closed pipe is a write error).
    static let fatalSignals = [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
                               SIGXCPU, SIGXFSZ, SIGIO, SIGPWR, SIGSTKFLT, SIGSYS]

    static func register(directory: Int32, name: String) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        installHandlers()
        for i in 0..<capacity where names[i] == nil {
            directories[i] = directory
            names[i] = strdup(name)
            return
        }
    }

    /// Returns whether the name was still registered.
    @discardableResult
    static func unregister(directory: Int32, name: String) -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        for i in 0..<capacity {
            if let p = names[i], directories[i] == directory, String(cString: p) == name {
                names[i] = nil
                free(p)
                return true
            }
        }
        return false
    }

    private static func installHandlers() {
        guard !installed else { return }
        installed = true
        // Build the tables now: the handler must never be the first to touch them.
        _ = names
        _ = directories
        for signal in fatalSignals {
            // A signal the process was started with ignored (nohup's SIGHUP) stays ignored.
            let previous = Glibc.signal(signal, SIG_IGN)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            Glibc.signal(signal) { sig in
                for i in 0..<TemporaryFiles.capacity {
                    if let p = TemporaryFiles.names[i] { unlinkat(TemporaryFiles.directories[i], p, 0) }
                }
                Glibc.signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }
}
