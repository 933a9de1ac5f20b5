import Glibc

/// The run's one table of jokes (and of deduplicated votes), and the worker threads' small
/// tables in front of it.
///
/// Each worker counts into tables of its own, without a lock, and empties them into the shared
/// table, under a lock, whenever they reach their bound (`TableBound.worker`) and once when it
/// runs out of input. So the shared table is the only one that grows with the distinct keys,
/// and each further thread costs a fixed few hundred kilobytes: peak memory is a function of
/// the distinct keys, not of the cores. The merge is associative (counts add; the latest vote
/// wins by timestamp, then input order), so the order of flushes changes nothing.
///
/// With a single worker there is nothing to share: its own tables are the run's, unbounded (a
/// flush would only copy them).
final class SharedTally: @unchecked Sendable {
    /// The run's tables once every worker has flushed.
    let combined: WorkerTally
    /// One per thread; `[combined]` for one thread.
    private(set) var workers: [WorkerTally] = []
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    /// - Parameter bound: how much each of several workers holds before it flushes (tests use
    ///   tiny bounds, to flush after every few events).
    init(workers count: Int, dedupe: EventSelection.Dedupe, bound: TableBound = .worker) {
        combined = WorkerTally(dedupe: dedupe)
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        workers = count <= 1 ? [combined] : (0..<count).map { _ in
            WorkerTally(dedupe: dedupe, bound: bound, sink: self)
        }
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Moves `worker`'s jokes and votes into the shared tables and empties them (its event
    /// counters stay: `finish` sums them).
    func flush(_ worker: WorkerTally) {
        guard worker !== combined else { return }
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let votes = combined.votes, let theirs = worker.votes {
            votes.merge(theirs, otherTally: worker.tally, into: combined.tally)
        } else {
            combined.tally.merge(worker.tally)
        }
        worker.tally.removeAll()
    }

    /// The run's tables and counters, once every worker thread has finished: what is left in
    /// the workers' tables is flushed and their counters are added up. Call it once.
    func finish() -> WorkerTally {
        for worker in workers where worker !== combined {
            flush(worker)
            combined.validEvents += worker.validEvents
            combined.filteredOut += worker.filteredOut
        }
        return combined
    }
}
