/// What one thread accumulates: its jokes (and, with `--dedupe`, its votes) until they are
/// handed to the run's shared table, and its event counters for the whole run.
final class WorkerTally: @unchecked Sendable {
    let tally: Tally
    /// Present when the run deduplicates: votes wait here until every record has been seen.
    let votes: LatestVotes?
    /// Valid events the selection left out (`--as-of`, `--since`, `--week`).
    var filteredOut = 0
    /// Valid records seen (before filters and deduplication).
    var validEvents = 0
    /// Where a bounded worker's jokes and votes go when its tables fill; nil for tables that
    /// hold every key (a run's only worker, or a test's). Unowned: the shared table owns its
    /// workers, and outlives their threads.
    private unowned(unsafe) let sink: SharedTally?

    init(dedupe: EventSelection.Dedupe, bound: TableBound = .unbounded, sink: SharedTally? = nil) {
        tally = Tally(bound: bound)
        votes = dedupe == .none ? nil : LatestVotes(keyedByOwnerOnly: dedupe == .eventID, bound: bound)
        self.sink = sink
    }

    /// Hands the jokes and votes to the shared table, leaving the tables empty: called when
    /// they fill (`Tally.isFull`, `LatestVotes.isFull`), between two events.
    func flush() { sink?.flush(self) }
}
