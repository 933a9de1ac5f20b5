import Glibc

/// The run's one table of jokes (and of deduplicated votes), and the worker threads' small
/// tables in front of it.
///
/// Each worker counts into tables of its own, without a lock, and empties them into the shared
/// table, under a lock, whenever they reach their bound (`TableBound.worker`) and once when it
/// runs out of input. So the shared table is the only one that grows with the distinct keys,
/// and each further thread costs a fixed few hundred kilobytes: peak memory is a function of
/// the distinct keys, not of the cores. The merge is associative (counts add; the latest vote
/// wins by timestamp, then rating or input order), so the order of flushes changes nothing.
///
/// With a single worker there is nothing to share: its own tables are the run's, unbounded (a
/// flush would only copy them).
final class SharedTally: @unchecked Sendable {
    /// The run's tables once every worker has flushed.
    let combined: WorkerTally
    /// One per thread; `[combined]` for one thread.
    private(set) var workers: [WorkerTally] = []
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    /// One per partition of the shared votes: the bulk of a merge (absorbing the votes) runs
    /// under these, so two workers merge different partitions at once.
    private let partitionLocks: UnsafeMutablePointer<pthread_mutex_t>

    /// - Parameter bound: how much each of several workers holds before it flushes (tests use
    ///   tiny bounds, to flush after every few events).
    init(workers count: Int, dedupe: EventSelection.Dedupe, bound: TableBound = .worker) {
        combined = WorkerTally(dedupe: dedupe)
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        partitionLocks = .allocate(capacity: LatestVotes.partitionCount)
        for p in 0..<LatestVotes.partitionCount { pthread_mutex_init(partitionLocks + p, nil) }
        workers = count <= 1 ? [combined] : (0..<count).map { _ in
            WorkerTally(dedupe: dedupe, bound: bound, sink: self)
        }
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
        for p in 0..<LatestVotes.partitionCount { pthread_mutex_destroy(partitionLocks + p) }
        partitionLocks.deallocate()
    }

    /// Moves `worker`'s jokes and votes into the shared tables and empties them (its event
    /// counters stay: `finish` sums them).
    func flush(_ worker: WorkerTally) {
        guard worker !== combined else { return }
        guard let votes = combined.votes, let theirs = worker.votes else {
            pthread_mutex_lock(lock)
            combined.tally.merge(worker.tally)
            pthread_mutex_unlock(lock)
            worker.tally.removeAll()
            return
        }
        // Renumbering touches the shared interners and jokes: one worker at a time. Then each
        // partition under its own lock, in whatever order their locks come free, so no worker
        // waits for a partition while another is free.
        pthread_mutex_lock(lock)
        let renumbering = votes.renumbering(of: theirs, otherTally: worker.tally, into: combined.tally)
        pthread_mutex_unlock(lock)
        let count = LatestVotes.partitionCount
        let first = (workers.firstIndex { $0 === worker } ?? 0) & (count - 1)
        var pending = (0..<count).map { (first + $0) & (count - 1) }
        while !pending.isEmpty {
            let free = pending.firstIndex { pthread_mutex_trylock(partitionLocks + $0) == 0 }
            let p = pending.remove(at: free ?? 0)
            // Every one busy: wait for the first.
            if free == nil { pthread_mutex_lock(partitionLocks + p) }
            votes.absorb(p, of: theirs, renumbering)
            pthread_mutex_unlock(partitionLocks + p)
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
