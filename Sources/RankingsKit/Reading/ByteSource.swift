import Glibc
import Synchronization

/// Anything the job can read bytes from in chunks: a range of a file, a pipe, a gzip stream.
protocol ByteSource: SendableMetatype {
    /// Reads up to `count` bytes into `buffer`; returns 0 only at the end of the data.
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int
    /// Bytes taken from the underlying file or pipe so far (compressed bytes for gzip), for
    /// progress and the run summary.
    var bytesConsumed: Int64 { get }
    /// Whether this source leaves checksums to its reader (`GzipSource` with `deferChecksums`).
    var defersChecksums: Bool { get }
    /// The checksums to verify that came due since the last call, in order.
    mutating func takeDeferredChecksums() -> [DeferredChecksum]
}

extension ByteSource {
    var defersChecksums: Bool { false }
    mutating func takeDeferredChecksums() -> [DeferredChecksum] { [] }
}

/// A failure while reading one input, named by the path the user gave.
public enum InputError: Error, Sendable, Equatable {
    /// The input does not exist or cannot be opened or listed (status 66).
    case cannotOpen(path: String, reason: String)
    /// A read failed part way (status 74).
    case readFailed(path: String, reason: String)
    /// A gzip stream is corrupt or truncated (status 65: the data is bad, not the disk).
    case corruptGzip(path: String, reason: String)
    /// A directory given as an input holds no file the run reads (status 66: an export that
    /// has not arrived yet is worth retrying).
    case noExportFiles(directory: String)
    /// A file whose first line opens a JSON array (`[`, `[{`...), whether or not the rest makes
    /// one: not one record per line (status 65, whatever
    /// `--max-invalid` says: its events would otherwise be dropped as a few bad lines).
    case jsonArray(path: String)
    /// A Firestore managed export given to a command that reads JSON lines only (status 64).
    case managedExport(path: String)
    /// A managed export's file is damaged at `offset`: a checksum, length or fragment that
    /// cannot be, a record cut short, an entity that does not decode (status 65, like gzip).
    case corruptExport(path: String, offset: Int64, reason: String)
    /// A managed export's metadata contradicts the files it lists, or lists them in a way
    /// that cannot be a complete export (a file twice, a path that leaves the export): status
    /// 65, the export is damaged. `path` is the metadata file that says so.
    case incompleteExport(path: String, reason: String)
    /// A line of a layered folder's change file whose document name cannot be read as the
    /// fetch writes it (`{"name":"` first, no escape in the name): the run cannot know which
    /// documents it replaces (status 65).
    case unnamedChange(path: String, line: Int)
}

/// Reads an input's descriptor: a range of a regular file with `pread` from `offset`, so
/// several threads share one open file, each reading its own range; or, with no offset, a
/// stream (a pipe, standard input) front to back with `read`. Every byte read is added to the
/// run's `progress`.
struct DescriptorSource: ByteSource {
    let fd: Int32
    let path: String
    /// Where the next `pread` starts; nil for a stream.
    var offset: Int64?
    let progress: ProgressCounter
    private(set) var bytesConsumed: Int64 = 0

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        while true {
            let n = offset.map { pread(fd, buffer, count, off_t($0)) } ?? Glibc.read(fd, buffer, count)
            if n >= 0 {
                offset? += Int64(n)
                bytesConsumed += Int64(n)
                progress.add(n)
                return n
            }
            if errno == EINTR { continue }
            throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }
}

/// Bytes read from disk or pipe so far by all threads of a run, for the progress line.
final class ProgressCounter: Sendable {
    private let done = Atomic<Int64>(0)
    init() {}
    var bytesDone: Int64 { done.load(ordering: .relaxed) }
    func add(_ n: Int) { done.add(Int64(n), ordering: .relaxed) }
}
