/// Memory one worker thread lends to every range of input that it reads, so that a run's
/// memory does not grow with its number of pieces: allocated at the worker's first piece and
/// reused for the rest. Only the worker that owns it touches it, one piece at a time.
final class RecordScratch {
    /// The line reader's buffer, for JSON lines.
    let lines: LineReader
    /// Another format's own buffers, of its own type (a managed export's read buffer and
    /// joined record).
    var kept: AnyObject?

    init(chunkSize: Int = LineReader.chunkSize) { lines = LineReader(chunkSize: chunkSize) }
}
