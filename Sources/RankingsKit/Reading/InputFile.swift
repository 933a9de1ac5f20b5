import Glibc

/// One input the run reads. It is checked up front (it exists and can be opened and read), so
/// a missing file fails the run before any work is done, but it is opened again only when it
/// is read: a directory of thousands of files never holds thousands of descriptors.
///
/// Three separate facts say how to read it: its `format` (the reader that turns its bytes into
/// records), its `compression` and whether it `canSplit` (whether threads may read byte ranges
/// of it).
struct InputFile: Sendable {
    enum Compression: Sendable, Equatable {
        case none
        case gzip
        /// A stream, whose first bytes are looked at when it is read.
        case detectOnRead

        /// The one place gzip is recognised: by its magic bytes.
        static func of(_ b0: UInt8, _ b1: UInt8) -> Compression { GzipMagic.matches(b0, b1) ? .gzip : .none }
    }

    /// Where the bytes come from.
    enum Origin: Sendable, Equatable {
        /// Opened for reading when read, closed after.
        case path(String)
        /// A descriptor already open (standard input, tests), never closed here.
        case descriptor(Int32)
    }

    /// The path as the user gave it (`-` for standard input), or `DIR/name` for a file found
    /// in a directory: what bad-record messages print.
    let displayPath: String
    let origin: Origin
    /// JSON lines unless the input is a managed export's output file.
    let format: any RecordFileReader
    let compression: Compression
    /// Bytes on disk, for splitting and progress; 0 for streams.
    let size: Int64
    /// Device and inode of a regular file, to recognise the run's own outputs.
    let identity: FileIdentity?
    /// Its place in a layered night folder, for a base or change file of a directory that
    /// holds change files (`LayeredFolder`); nil for every other input.
    var layer: ChangeLayer?

    /// Threads may read byte ranges of it: a regular uncompressed file.
    var canSplit: Bool { size > 0 && compression == .none && format.splitUnit != nil }

    init(displayPath: String, origin: Origin, format: any RecordFileReader = JSONLinesFormat(),
                compression: Compression,
                size: Int64, identity: FileIdentity? = nil) {
        self.displayPath = displayPath
        self.origin = origin
        self.format = format
        self.compression = compression
        self.size = size
        self.identity = identity
    }

    /// The descriptor of an `Origin.descriptor` input; -1 for one opened when read.
    var fd: Int32 {
        if case .descriptor(let fd) = origin { return fd }
        return -1
    }

    /// Checks each argument ("-" is standard input); a directory expands to its export files.
    ///
    /// - Parameters:
    ///   - warn: told about each directory entry skipped because it is not a regular file.
    ///   - managedExports: read a Firestore managed export's directory (its output files, as its
    ///     metadata lists them); false refuses one (`migrate` rewrites JSON lines only).
    ///   - layers: read the change files of a layered night folder (`LayeredFolder`) first and
    ///     give its files their layers; false reads them as any other file.
    static func resolve(_ arguments: [String], managedExports: Bool = true, layers: Bool = false,
                               warn: (String) -> Void = { _ in }) throws(InputError) -> [InputFile] {
        var files: [InputFile] = []
        for argument in arguments {
            if argument == "-" {
                files.append(InputFile(displayPath: "-", origin: .descriptor(0), compression: .detectOnRead, size: 0))
                continue
            }
            var st = stat()
            guard stat(argument, &st) == 0 else {
                throw .cannotOpen(path: argument, reason: String(cString: strerror(errno)))
            }
            guard st.st_mode & S_IFMT == S_IFDIR else {
                files.append(try check(argument))
                continue
            }
            let listing = try DirectoryListing(argument)
            if listing.isManagedExport {
                guard managedExports, let export = try ManagedExport.open(argument) else {
                    throw .managedExport(path: argument)
                }
                for note in export.notes { warn("rankings: note: " + note) }
                for output in export.outputFiles {
                    files.append(InputFile(displayPath: output.displayPath, origin: .path(output.displayPath),
                                           format: ManagedExportFormat(entityCount: output.entityCount),
                                           compression: .none, size: output.size))
                }
                continue
            }
            for skipped in listing.skipped {
                warn("rankings: skipped \(DirectoryNames.join(argument, skipped.name)): \(skipped.why)")
            }
            if listing.exportNames.isEmpty { throw .noExportFiles(directory: argument) }
            var listed: [InputFile] = []
            for name in listing.exportNames {
                listed.append(try check(DirectoryNames.join(argument, name)))
            }
            if layers { try LayeredFolder.attach(&listed, names: listing.exportNames) }
            files += listed
        }
        return files
    }

    /// Suffixes of the files a directory contributes.
    static let exportSuffixes = [".ndjson", ".jsonl", ".json", ".ndjson.gz", ".jsonl.gz", ".json.gz"]

    /// Opens `path`, learns what it is and closes it again.
    static func check(_ path: String) throws(InputError) -> InputFile {
        let opened = try OpenedInput(path)
        let fd = opened.fd
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        if st.st_mode & S_IFMT == S_IFDIR { throw .cannotOpen(path: path, reason: "is a directory") }
        // A FIFO or a device named on the command line is read as a stream, as the user asked.
        // It stays open from here: closing a FIFO's only reader could cost its writer the data
        // (SIGPIPE), and such inputs are few, named one by one.
        guard st.st_mode & S_IFMT == S_IFREG else {
            return InputFile(displayPath: path, origin: .descriptor(opened.keep()), compression: .detectOnRead, size: 0)
        }
        var magic: (UInt8, UInt8) = (0, 0)
        let n = withUnsafeMutableBytes(of: &magic) { pread(fd, $0.baseAddress, 2, 0) }
        if n < 0 { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        let compression = n == 2 ? Compression.of(magic.0, magic.1) : .none
        return InputFile(displayPath: path, origin: .path(path), compression: compression, size: Int64(st.st_size),
                         identity: FileIdentity(st))
    }

    /// Opens the input for reading; the descriptor is closed when the result goes away
    /// (unless the input is a descriptor it was given). A listed path must still name a
    /// regular file, the one listed when the listing knew it: a file swapped for another (a
    /// night's folder replaced under `current`) is refused, and a FIFO swapped in is never
    /// waited on.
    func open() throws(InputError) -> OpenedInput {
        guard case .path(let path) = origin else { return OpenedInput(borrowing: fd) }
        let opened = try OpenedInput(path, flags: O_NONBLOCK)
        var st = stat()
        guard fstat(opened.fd, &st) == 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        guard st.st_mode & S_IFMT == S_IFREG, identity == nil || identity == FileIdentity(st) else {
            throw .cannotOpen(path: path, reason: "replaced since the run listed it")
        }
        return opened
    }
}

/// A descriptor owned for the reading of one input.
final class OpenedInput {
    let fd: Int32
    private var owned: Bool

    init(_ path: String, flags: Int32 = 0) throws(InputError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | flags)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        self.fd = fd
        owned = true
    }

    init(borrowing fd: Int32) {
        self.fd = fd
        owned = false
    }

    /// Hands the descriptor over for the rest of the process: it is no longer closed here.
    func keep() -> Int32 {
        owned = false
        return fd
    }

    deinit { if owned { close(fd) } }
}

/// Which file a path names, whatever the path.
struct FileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }
}

/// How one kind of input file turns into records: JSON lines (`JSONLinesFormat`) or a managed
/// export's output file (`ManagedExportFormat`). The aggregator opens each file once and hands
/// every range it cuts to the file's reader with that descriptor; the reader hands each record
/// to the run's `EventCounter`, which words and logs bad ones the same way for every format.
protocol RecordFileReader: Sendable {
    /// Files may be cut at multiples of this many bytes (1 for lines, a LevelDB log's 32 KiB
    /// block); nil when a file must be read whole by one thread.
    var splitUnit: Int64? { get }
    /// Bad records are numbered in lines (`PATH:N: reason`), or else in records
    /// (`PATH:record N: reason`).
    var numbersLines: Bool { get }
    /// Reads the records that *start* in `start..<end` of `file` through `descriptor`, which
    /// stays open for the whole call and is shared with other threads reading other ranges
    /// (read it with `pread` only, or as a stream when the file cannot be split). `end` is
    /// `Int64.max` for the last range; a reader reads past `end` to finish its last record.
    /// Each record goes to `counter`, numbered from 1 within the range. Returns the records
    /// seen and the stored bytes the range accounts for. `scratch` is the calling worker's,
    /// the same for every range it reads.
    func read(_ file: InputFile, descriptor: Int32, from start: Int64, to end: Int64, scratch: RecordScratch,
              into counter: inout EventCounter, progress: ProgressCounter) throws(InputError) -> (records: Int, bytes: Int64)
    /// What the file's records must add up to with other files' (a managed export's entity
    /// count for its kind folder), checked once every input has been read; nil for none.
    var entityCount: ExportEntityCount? { get }
}

extension RecordFileReader {
    var numbersLines: Bool { false }
    var entityCount: ExportEntityCount? { nil }
}
