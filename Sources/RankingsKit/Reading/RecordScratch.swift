/// Memory one worker thread lends to every piece of a record format that it reads, so that a
/// run's memory does not grow with its number of pieces: what a format would otherwise
/// allocate for each piece (a managed export's read buffer and joined record) it keeps here,
/// allocated at the worker's first piece and reused for the rest.
public final class RecordScratch {
    /// The format's own buffers, of its own type. Only the worker that owns this scratch
    /// touches it, one piece at a time.
    public var kept: AnyObject?

    public init() {}
}
