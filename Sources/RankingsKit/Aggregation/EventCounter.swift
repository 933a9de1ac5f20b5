/// An event's `timestamp` as its decoder found it.
public enum EventTime {
    /// The record has no timestamp.
    case absent
    /// The record has one that is none of the readable forms; `value` is shown in the message
    /// (its text as the input spelled it, e.g. `"2026-02-12 10:00:00.000000 UTC"`).
    case unreadable(value: String)
    case at(Timestamp)
}

/// The fields of one rating event that only some selections read. The counter asks for each
/// only when the run's options need it, so a plain run never decodes them; each answer is
/// valid until the decoder's next record.
protocol RatingEventDetails: ~Copyable {
    mutating func timestamp() -> EventTime
    /// `device_id` as bytes, nil when missing or not a string.
    mutating func deviceID() -> UnsafeBufferPointer<UInt8>?
    /// The event's own id (`id` of a flat record, the last segment of a document's name, an
    /// entity key's name or numeric id in decimal), nil when the record has none.
    mutating func eventID() -> UnsafeBufferPointer<UInt8>?
    /// `week_id` as bytes, nil when missing or not a string.
    mutating func weekID() -> UnsafeBufferPointer<UInt8>?
}

/// The format-neutral end of the pipeline: every decoder (NDJSON lines, typed Firestore
/// lines, a managed export's entities) hands it one rating event at a time, and it applies the
/// run's selection (`--as-of`, `--since`, `--week`, `--dedupe`), counts the event or holds it
/// for deduplication, and logs bad records and records left out.
///
/// One counter reads one piece of one input on one thread; `record` numbers count from 1
/// within the piece and the aggregator turns them into numbers within the file.
///
/// A record the selection refuses (no readable timestamp for `--since`, no `device_id` for
/// `--dedupe device`, ...) is handed back by `event`, not logged here: only the decoder holds
/// the record's bytes, which `--report`'s `RefusedRecord` is read from.
struct EventCounter: ~Copyable {
    let worker: WorkerTally
    private(set) var badRecords: BadLineLog
    /// Records that are not rating events and not bad either: documents or entities of other
    /// collections.
    private(set) var leftOut = 0
    /// Lines of a layered folder that a later change file replaces: not part of the snapshot.
    private(set) var replaced = 0
    // The selection, unpacked so the hot path reads plain values, not a struct holding an array.
    private let filters: Bool
    private let asOf: Timestamp?
    private let since: Timestamp?
    private let timeWindow: Bool
    private let needsTimestamp: Bool
    private let dedupe: EventSelection.Dedupe
    private let week: [UInt8]?
    /// Unretained: `worker` owns it for the whole run, so an event costs no reference count.
    private let votes: Unmanaged<LatestVotes>?
    private let tally: Tally
    /// The fields the selection reads, which a decoder may skip otherwise.
    let wantedFields: FieldSet
    /// Input-order position of this piece's input.
    private let file: Int

    /// - Parameter keep: bad records to keep in full for `--report` (at least the ten shown).
    init(worker: WorkerTally, selection: EventSelection = EventSelection(), file: Int = 0,
         keep: Int = BadLineLog.shownLimit) {
        self.worker = worker
        badRecords = BadLineLog(keep: keep)
        filters = selection.timeWindow || selection.weekID != nil || selection.dedupe != .none
        asOf = selection.asOf
        since = selection.since
        timeWindow = selection.timeWindow
        needsTimestamp = selection.needsTimestamp
        dedupe = selection.dedupe
        week = selection.weekID
        votes = worker.votes.map { Unmanaged.passUnretained($0) }
        tally = worker.tally
        wantedFields = selection.wantedFields
        self.file = file
    }

    /// A valid rating event: `id` is the joke id's bytes, `rating` in 1...5. `position` orders
    /// events within the input for "the later one wins" (a byte offset in the file, or any
    /// number that grows through the file); below 2^44.
    ///
    /// Returns why the selection refuses the record, for the caller to hand to `bad` with what
    /// it reads of the record; nil when it is counted or left out by a filter (always nil
    /// without a selection).
    @inline(__always)
    mutating func event<D: RatingEventDetails & ~Copyable>(
        id: UnsafeBufferPointer<UInt8>, rating: Double, record: Int, position: Int64, details: inout D) -> BadRecord? {
        if !filters {
            worker.validEvents &+= 1
            tally.add(id: id, rating: rating)
            if tally.isFull { worker.flush() }
            return nil
        }
        return selected(id: id, rating: rating, record: record, position: position, details: &details)
    }

    /// A record that is not a usable rating event; `reason` is worded once, by `BadRecord`.
    /// `refused` is what `--report` names it by: worked out by the caller only when
    /// `keepsRefusal` says it is kept, `RefusedRecord.unknown` otherwise.
    @inline(__always)
    mutating func bad(record: Int, reason: BadRecord, refused: RefusedRecord) {
        badRecords.record(line: record, reason: reason, refused: refused)
    }

    /// Whether the next bad record is kept for `--report`.
    var keepsRefusal: Bool { badRecords.keepsNext }

    /// The selection as Firestore's COUNTs would apply it, for a refused record's kind.
    var kindWindow: KindWindow { KindWindow(since: since, asOf: asOf, week: week) }

    /// A record of another collection or kind: not counted, not bad.
    @inline(__always)
    mutating func leftOut(record: Int) {
        leftOut &+= 1
    }

    /// A document a later change file of its layered folder replaces: not counted, not bad,
    /// not left out.
    @inline(__always)
    mutating func replaced(record: Int) {
        replaced &+= 1
    }

    /// The backfill path: every field the selection needs is checked before any filter, so a
    /// record is bad or good whatever the filters say. Returns why a record is refused.
    private mutating func selected<D: RatingEventDetails & ~Copyable>(
        id: UnsafeBufferPointer<UInt8>, rating: Double, record: Int, position: Int64, details: inout D) -> BadRecord? {
        var timestamp: Timestamp?
        if needsTimestamp {
            switch details.timestamp() {
            case .at(let readable):
                timestamp = readable
            case .unreadable(let value):
                // Every option that reads the timestamp would otherwise decide on a guess.
                return .unreadableTimestamp(value: value)
            case .absent:
                if timeWindow { return .invalid(.missingTimestamp) }
            }
        }
        var owner: UnsafeBufferPointer<UInt8>?
        switch dedupe {
        case .none: break
        case .device:
            owner = details.deviceID()
            if owner == nil { return .invalid(.missingDeviceID) }
        case .eventID:
            owner = details.eventID()
            if owner == nil { return .invalid(.missingEventID) }
        }
        worker.validEvents &+= 1
        if let asOf, let timestamp, timestamp > asOf {
            worker.filteredOut &+= 1
            return nil
        }
        if let since, let timestamp, timestamp < since {
            worker.filteredOut &+= 1
            return nil
        }
        if let week {
            let inWeek = details.weekID().map { $0.elementsEqual(week) } ?? false
            if !inWeek {
                worker.filteredOut &+= 1
                return nil
            }
        }
        guard let votes, let owner else {
            tally.add(id: id, rating: rating)
            if tally.isFull { worker.flush() }
            return nil
        }
        let joke = tally.entry(for: id)
        let order = InputOrder.make(file: file, offset: position)
        let stamp = dedupe == .device ? timestamp : nil
        let full = votes._withUnsafeGuaranteedRef {
            $0.offer(owner: owner, joke: joke, timestamp: stamp, order: order, rating: rating)
            return $0.isFull
        }
        // The votes name their jokes by this tally's entries: both are emptied together.
        if full || tally.isFull { worker.flush() }
        return nil
    }
}
