import Glibc

/// One input the run reads, opened up front so that a missing file fails the run before any
/// work is done.
public struct InputFile: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A regular uncompressed file: it can be split between threads.
        case regular
        /// A regular file starting with the gzip magic bytes.
        case gzip
        /// A pipe, a terminal, standard input: read front to back (gzip detected on the fly).
        case stream
    }

    /// The path as the user gave it (`-` for standard input), or `DIR/name` for a file found
    /// in a directory: what bad-line messages print.
    public let displayPath: String
    public let fd: Int32
    public let kind: Kind
    /// Bytes on disk, for splitting and progress; 0 for streams.
    public let size: Int64

    /// Opens `path` ("-" is standard input); a directory expands to its export files.
    public static func resolve(_ arguments: [String]) throws(InputError) -> [InputFile] {
        var files: [InputFile] = []
        for argument in arguments {
            if argument == "-" {
                files.append(InputFile(displayPath: "-", fd: 0, kind: .stream, size: 0))
                continue
            }
            var st = stat()
            guard stat(argument, &st) == 0 else {
                throw .cannotOpen(path: argument, reason: String(cString: strerror(errno)))
            }
            if st.st_mode & S_IFMT == S_IFDIR {
                for name in try exportNames(in: argument) {
                    let path = argument.hasSuffix("/") ? argument + name : argument + "/" + name
                    files.append(try open(path))
                }
            } else {
                files.append(try open(argument))
            }
        }
        return files
    }

    /// Suffixes of the files a directory contributes.
    public static let exportSuffixes = [".ndjson", ".jsonl", ".json", ".ndjson.gz", ".jsonl.gz", ".json.gz"]

    /// The export files directly in `directory`: no dot-files, no subdirectories, in byte order.
    static func exportNames(in directory: String) throws(InputError) -> [String] {
        guard let dir = opendir(directory) else {
            throw .cannotOpen(path: directory, reason: String(cString: strerror(errno)))
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name.hasPrefix(".") { continue }
            guard exportSuffixes.contains(where: { name.hasSuffix($0) }) else { continue }
            var st = stat()
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            // Follows links; a subdirectory named like an export is not read.
            if stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR { continue }
            names.append(name)
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    static func open(_ path: String) throws(InputError) -> InputFile {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .cannotOpen(path: path, reason: reason)
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw .cannotOpen(path: path, reason: "is a directory")
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            return InputFile(displayPath: path, fd: fd, kind: .stream, size: 0)
        }
        var magic: (UInt8, UInt8) = (0, 0)
        let n = withUnsafeMutableBytes(of: &magic) { pread(fd, $0.baseAddress, 2, 0) }
        if n < 0 {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .cannotOpen(path: path, reason: reason)
        }
        let gzip = n == 2 && GzipMagic.matches(magic.0, magic.1)
        return InputFile(displayPath: path, fd: fd, kind: gzip ? .gzip : .regular, size: Int64(st.st_size))
    }
}
