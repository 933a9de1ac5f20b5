import CKernels
import Glibc

/// Reads block ranges of a managed export's output files into an `ExportSink`: the log
/// records, each decoded as an entity and judged by the event rules. One reader per thread;
/// its buffers (256 KiB, plus the longest record cut into fragments) are reused across ranges
/// and files.
struct ExportFileReader: ~Copyable {
    private let buffers: LogReadBuffers

    init() { buffers = LogReadBuffers() }

    /// A reader over a worker's buffers, which outlive it (see `ManagedExportFormat`).
    init(buffers: LogReadBuffers) { self.buffers = buffers }

    /// Hands the records whose first fragment starts in `blocks` (of 32 KiB; clamped to the
    /// file; nil for all) of `file`, read through `descriptor` with `pread`, to `sink`,
    /// numbered from 1 within the range; returns how many records that was. A range reads past
    /// its end to finish its last record and skips the end of the record begun before it, so
    /// ranges that tile the file see every record once.
    ///
    /// Throws `InputError.corruptExport` (naming the file and byte offset) at the first damage,
    /// `.readFailed` when the disk fails; the sink may have been given records before that.
    mutating func read<S: ExportSink & ~Copyable>(
        _ file: ExportOutputFile, descriptor: Int32, blocks: Range<Int64>? = nil, into sink: inout S
    ) throws(InputError) -> Int {
        var log = LogRecordReader(fd: descriptor, path: file.displayPath, fileSize: file.size, buffers: buffers)
        return try withUnsafeMutablePointer(to: &sink) { (target) throws(InputError) -> Int in
            var visitor = EntityVisitor(decoder: EntityDecoder(scratch: buffers.entity), sink: target, path: file.displayPath)
            return try log.read(blocks: blocks ?? 0..<file.blockCount, into: &visitor)
        }
    }

}

private struct EntityVisitor<S: ExportSink & ~Copyable>: LogRecordVisitor {
    var decoder: EntityDecoder
    /// The caller's sink, borrowed for the duration of one `read`.
    let sink: UnsafeMutablePointer<S>
    let path: String
    var number = 0

    @inline(__always)
    mutating func record(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(InputError) {
        number += 1
        do throws(ProtoWire.Malformed) {
            switch try decoder.decode(bytes, offset: offset) {
            case .event(let event):
                if let why = sink.pointee.event(event, record: number) {
                    sink.pointee.bad(record: number, reason: why) { RefusedEntity.describe(event.details, record: bytes, window: $0) }
                }
            case .leftOut: sink.pointee.leftOut(record: number)
            case .bad(let why):
                let picks = UnsafePointer(decoder.picks)
                sink.pointee.bad(record: number, reason: .invalid(why)) { RefusedEntity.describe(picks, record: bytes, window: $0) }
            }
        } catch {
            throw .corruptExport(path: path, offset: offset, reason: "record \(number) is not an entity: \(error.reason)")
        }
    }
}
