/// How much a worker thread's own tables may hold before they are emptied into the run's
/// shared table (`SharedTally`).
///
/// Bounding them is what keeps peak memory a function of the distinct keys, not of the cores:
/// the shared table is the only one that grows with the input, and each thread adds a fixed
/// few hundred kilobytes. (Tables emptied only at the end of a piece would hold all of that
/// piece's distinct keys, once per thread.)
/// The bound is small enough to stay in the caches and large enough that the lock is taken
/// rarely: a run over a few hundred jokes never fills it and empties once per thread.
struct TableBound: Sendable, Equatable {
    /// Distinct keys (jokes; for `--dedupe`, also votes) before the tables must be emptied.
    var keys: Int
    /// Bytes of key text (joke ids, device or event ids) before the tables must be emptied:
    /// ids have no length limit, so a count alone would not bound the memory.
    var keyBytes: Int

    /// The run's own table, or a table used alone: it holds every key.
    static let unbounded = TableBound(keys: .max, keyBytes: .max)
    /// A worker's tables in front of a shared one: about 0.5 MiB at most.
    static let worker = TableBound(keys: 4096, keyBytes: 256 << 10)
}
