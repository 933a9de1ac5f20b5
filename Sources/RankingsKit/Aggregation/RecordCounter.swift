/// What one thread accumulates over all the pieces it reads.
final class WorkerTally: @unchecked Sendable {
    let tally = Tally()
    /// Present when the run deduplicates: votes wait here until every line has been seen.
    let votes: LatestVotes?
    /// Valid events the selection left out (`--as-of`, `--since`, `--week`).
    var filteredOut = 0
    /// Valid records seen (before filters and deduplication).
    var validEvents = 0

    init(dedupe: EventSelection.Dedupe) {
        votes = dedupe == .none ? nil : LatestVotes(keyedByOwnerOnly: dedupe == .eventID)
    }
}

/// Turns the lines of one piece of input into votes: scans each line, decodes the record,
/// applies the run's selection, and counts it (or holds it for deduplication), or logs it as
/// a bad line.
struct RecordCounter: LineConsumer, ~Copyable {
    let worker: WorkerTally
    private(set) var badLines = BadLineLog()
    private var validator: RecordValidator
    // The selection, unpacked so the hot path reads plain values, not a struct holding an array.
    private let filters: Bool
    private let asOf: Timestamp?
    private let since: Timestamp?
    private let timeWindow: Bool
    private let needsTimestamp: Bool
    private let dedupe: EventSelection.Dedupe
    private let week: [UInt8]?
    /// Unretained: `worker` owns it for the whole run, and a retain/release pair per event
    /// measured a quarter of the deduplicating run's time.
    private let votes: Unmanaged<LatestVotes>?
    private let tally: Tally
    /// Input-order position of this piece's stream start.
    private let file: Int
    private let baseOffset: Int64

    init(worker: WorkerTally, selection: EventSelection = EventSelection(), file: Int = 0, baseOffset: Int64 = 0) {
        self.worker = worker
        filters = selection.timeWindow || selection.weekID != nil || selection.dedupe != .none
        asOf = selection.asOf
        since = selection.since
        timeWindow = selection.timeWindow
        needsTimestamp = selection.needsTimestamp
        dedupe = selection.dedupe
        week = selection.weekID
        votes = worker.votes.map { Unmanaged.passUnretained($0) }
        tally = worker.tally
        self.file = file
        self.baseOffset = baseOffset
        validator = RecordValidator(wanted: selection.wantedFields)
    }

    /// The scan itself finds where the line ends, so no separate pass looks for the `\n`.
    @inline(__always)
    mutating func line(from start: UnsafePointer<UInt8>, dataEnd: UnsafePointer<UInt8>, final: Bool,
                       number: Int, offset: Int64) -> UnsafePointer<UInt8>? {
        let verdict = validator.judge(start)
        let end = validator.lineEnd(from: start, dataEnd: dataEnd, verdict: verdict)
        // Judged on part of a line: wait for the rest, having done nothing.
        if end == dataEnd && !final { return nil }
        count(verdict, number: number, offset: offset)
        return end
    }

    mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
        count(validator.judge(start), number: number, offset: offset)
    }

    @inline(__always)
    private mutating func count(_ verdict: RecordValidator.Verdict, number: Int, offset: Int64) {
        let id: UnsafeBufferPointer<UInt8>, rating: Double
        switch verdict {
        case .blank: return
        case .bad(let why): return badLines.record(line: number, reason: why.message)
        case .valid(let validID, let validRating): (id, rating) = (validID, validRating)
        }
        if !filters {
            worker.validEvents &+= 1
            tally.add(id: id, rating: rating)
            return
        }
        selected(id: id, rating: rating, number: number, offset: offset)
    }

    /// The backfill path: every field the selection needs is checked before any filter, so a
    /// record is bad or good whatever the filters say.
    private mutating func selected(id: UnsafeBufferPointer<UInt8>, rating: Double, number: Int, offset: Int64) {
        var timestamp: Timestamp?
        if needsTimestamp {
            switch validator.timestamp() {
            case .some(let readable):
                timestamp = readable
                if readable == nil && timeWindow { return bad(number, .unreadableTimestamp) }
            case .none:
                if timeWindow { return bad(number, .missingTimestamp) }
            }
        }
        var owner: UnsafeBufferPointer<UInt8>?
        switch dedupe {
        case .none: break
        case .device:
            owner = validator.string(.deviceID)
            if owner == nil { return bad(number, .missingDeviceID) }
        case .eventID:
            owner = validator.string(.eventID)
            if owner == nil { return bad(number, .missingEventID) }
        }
        worker.validEvents &+= 1
        if let asOf, let timestamp, timestamp > asOf {
            worker.filteredOut &+= 1
            return
        }
        if let since, let timestamp, timestamp < since {
            worker.filteredOut &+= 1
            return
        }
        if let week {
            let inWeek = validator.string(.weekID).map { $0.elementsEqual(week) } ?? false
            if !inWeek {
                worker.filteredOut &+= 1
                return
            }
        }
        guard let votes, let owner else {
            tally.add(id: id, rating: rating)
            return
        }
        let joke = tally.entry(for: id)
        let order = InputOrder.make(file: file, offset: baseOffset + offset)
        let stamp = dedupe == .device ? timestamp : nil
        votes._withUnsafeGuaranteedRef { $0.offer(owner: owner, joke: joke, timestamp: stamp, order: order, rating: rating) }
    }

    private mutating func bad(_ number: Int, _ why: InvalidRecord) {
        badLines.record(line: number, reason: BadRecord.invalid(why).message)
    }

    mutating func overlongLine(number: Int, offset: Int64) {
        badLines.record(line: number, reason: BadRecord.overlong.message)
    }
}
