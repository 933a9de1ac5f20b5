import CKernels
import Glibc

/// Reads block ranges of a managed export's output files into an `ExportSink`: the log
/// records, each decoded as an entity and judged by the event rules. One reader per thread;
/// its buffers (256 KiB, plus the longest record cut into fragments) are reused across ranges
/// and files.
public struct ExportFileReader: ~Copyable {
    private var decoder = EntityDecoder()
    private var rules = ExportEventRules()
    private let buffers: LogReadBuffers

    public init() { buffers = LogReadBuffers() }

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
    public mutating func read<S: ExportSink & ~Copyable>(
        _ file: ExportOutputFile, descriptor: Int32, blocks: Range<Int64>? = nil, into sink: inout S
    ) throws(InputError) -> Int {
        var log = LogRecordReader(fd: descriptor, path: file.displayPath, fileSize: file.size, buffers: buffers)
        return try withUnsafeMutablePointer(to: &sink) { (target) throws(InputError) -> Int in
            var visitor = EntityVisitor(decoder: decoder, rules: rules, sink: target, path: file.displayPath,
                                        templates: buffers.entityTemplates, plain: buffers.plainEvents)
            defer { decoder = visitor.decoder }
            return try log.read(blocks: blocks ?? 0..<file.blockCount, into: &visitor)
        }
    }

    /// Opens `file` and reads it (or its `blocks`) as above.
    public mutating func read<S: ExportSink & ~Copyable>(
        _ file: ExportOutputFile, blocks: Range<Int64>? = nil, into sink: inout S
    ) throws(InputError) -> Int {
        let fd = open(file.displayPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: file.displayPath, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        return try read(file, descriptor: fd, blocks: blocks, into: &sink)
    }
}

private struct EntityVisitor<S: ExportSink & ~Copyable>: LogRecordVisitor {
    var decoder: EntityDecoder
    var rules: ExportEventRules
    /// The caller's sink, borrowed for the duration of one `read`.
    let sink: UnsafeMutablePointer<S>
    let path: String
    /// The worker's entity templates (entity_template.c), owned by its `LogReadBuffers`.
    let templates: UnsafeMutablePointer<rk_entity_templates>
    /// What `rk_entity_read` or `rk_plain_run` read of plain events, owned by the same buffers.
    let plain: UnsafeMutablePointer<rk_plain_event>
    var number = 0
    /// The C walker's picks of the record being read.
    var picks = rk_picked_entity()

    /// What the fast path made of a record.
    private enum Walked { case counted, picked, declined }

    /// A run of plain records, read by C from the block's fragments: no Swift per fragment
    /// but the handing on (the reader's switch, this visitor's call and the template search
    /// per record were 8 % of a run). Each event is handed on before the next run may make a
    /// template.
    mutating func records(_ fragments: UnsafeBufferPointer<rk_log_fragment>, block: UnsafeRawPointer,
                          blockOffset: Int64) throws(InputError) -> Int {
        let base = fragments.baseAddress.unsafelyUnwrapped
        let bytes = block.assumingMemoryBound(to: UInt8.self)
        let (sink, templates, plain) = (self.sink, self.templates, self.plain)
        var taken = 0
        return withUnsafeMutablePointer(to: &picks) { picks -> Int in
            while taken < fragments.count {
                let run = rk_plain_run(bytes, base + taken, fragments.count - taken, templates, plain)
                for i in 0..<run {
                    number += 1
                    let offset = blockOffset + Int64(base[taken + i].data) - Int64(LogFormat.headerSize)
                    sink.pointee.event(templated: TemplatedEvent(plain: plain + i, scratch: picks, offset: offset),
                                       record: number)
                }
                taken += run
                if run < Int(RK_PLAIN_RUN) { break }
            }
            return taken
        }
    }

    mutating func record(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(InputError) {
        number += 1
        do throws(ProtoWire.Malformed) {
            // Most records are plain events: read from a template that knows them for one
            // (entity_template.c), or judged from the C walker's picks, in place. The rest are
            // walked again by the decoder (its C walker, then Swift for what that leaves) and
            // judged by the rules, which word what is wrong.
            let (sink, number, templates, plain) = (self.sink, self.number, self.templates, self.plain)
            let walked = withUnsafeMutablePointer(to: &picks) { picks -> Walked in
                guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .declined }
                switch rk_entity_read(base, bytes.count, templates, plain, picks) {
                case 2:
                    // A plain template's record: only its joke id and rating were read.
                    sink.pointee.event(templated: TemplatedEvent(plain: plain, scratch: picks, offset: offset), record: number)
                    return .counted
                case 1:
                    guard let event = ExportEventRules.plainEvent(picks, offset: offset) else { return .picked }
                    sink.pointee.event(picked: event, record: number)
                    return .counted
                default:
                    return .declined
                }
            }
            switch walked {
            case .counted: return
            // What `decode` would do again: the walker took it, only the rules are left.
            case .picked: decoder.adopt(picks)
            // The walker already declined it: straight to the Swift decoder, which names why.
            case .declined: try decoder.decodeInSwift(bytes)
            }
            switch try decoder.judged(by: rules) {
            case .event(var event):
                event.offset = offset
                sink.pointee.event(event, record: number)
            case .leftOut: sink.pointee.leftOut(record: number)
            case .bad(let why): sink.pointee.bad(record: number, reason: .invalid(why))
            }
        } catch {
            throw .corruptExport(path: path, offset: offset, reason: "record \(number) is not an entity: \(error.reason)")
        }
    }
}
