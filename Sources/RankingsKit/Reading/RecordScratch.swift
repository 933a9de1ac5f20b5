/// Memory one worker thread lends to every range of input that it reads, so that a run's
/// memory does not grow with its number of pieces: each format's buffers, allocated at the
/// worker's first piece of that format and reused for the rest. Only the worker that owns it
/// touches it, one piece at a time.
final class RecordScratch {
    /// The line reader's buffer, for JSON lines.
    let lines: LineReader
    /// A managed export's read buffer and joined record.
    lazy var export = LogReadBuffers()

    init(chunkSize: Int = LineReader.chunkSize) { lines = LineReader(chunkSize: chunkSize) }
}
