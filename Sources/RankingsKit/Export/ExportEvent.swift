import CKernels

/// One rating event read from a managed export: what the NDJSON path reads from a valid line.
/// The joke id and rating are judged; the other fields are read from the entity's picks when
/// asked (for a vote read from a plain template, the picks are first taken from it then). The
/// byte buffers point into the record being read and, like the picks, are valid only during
/// the sink call that hands the event over.
struct ExportEvent {
    /// `joke_id`: a non-empty, well-formed UTF-8 string property.
    let jokeID: UnsafeBufferPointer<UInt8>
    /// `rating`: an integer or double property in 1…5, as a double.
    let rating: Double
    /// The file offset of the record's first fragment header: grows through the file, so it
    /// orders events for "the later one wins" across ranges read by different threads.
    let offset: Int64
    /// An `EntityScratch`'s picks: the record's, or filled from `plain` when asked.
    private let picks: UnsafeMutablePointer<rk_picked_entity>
    private let plain: UnsafePointer<rk_plain_event>?

    /// An event the rules judged from `picks`.
    init(jokeID: UnsafeBufferPointer<UInt8>, rating: Double, picks: UnsafeMutablePointer<rk_picked_entity>, offset: Int64) {
        (self.jokeID, self.rating, self.picks, self.plain, self.offset) = (jokeID, rating, picks, nil, offset)
    }

    /// A plain vote read from a template (`rk_entity_read`).
    init(plain: UnsafePointer<rk_plain_event>, picks: UnsafeMutablePointer<rk_picked_entity>, offset: Int64) {
        jokeID = UnsafeBufferPointer(start: plain.pointee.joke_id, count: plain.pointee.joke_id_count)
        rating = plain.pointee.rating
        (self.picks, self.plain, self.offset) = (picks, plain, offset)
    }

    /// The record's picks: taken from the template first for a plain vote.
    var details: UnsafePointer<rk_picked_entity> {
        if let plain { rk_entity_template_picks(plain, picks) }
        return UnsafePointer(picks)
    }

    /// `timestamp`: a Firestore timestamp (microseconds, as Firestore keeps them), absent, or
    /// a value of another type.
    var timestamp: EventTime { ExportEventRules.timestamp(EntityProto.property(.timestamp, of: details)) }

    /// `device_id` and `week_id`: nil unless a plain string property.
    var deviceID: UnsafeBufferPointer<UInt8>? { ExportEventRules.plainString(EntityProto.property(.deviceID, of: details)) }
    var weekID: UnsafeBufferPointer<UInt8>? { ExportEventRules.plainString(EntityProto.property(.weekID, of: details)) }

    /// The key's name, or its numeric id in decimal (written in the room after the picks): the
    /// event id of `--dedupe id`. The rules made sure the key has one or the other.
    var eventID: UnsafeBufferPointer<UInt8> {
        let p = details
        if p.pointee.has_name != 0 { return UnsafeBufferPointer(start: p.pointee.name, count: p.pointee.name_count) }
        let end = (UnsafeMutableRawPointer(picks) + MemoryLayout<rk_picked_entity>.stride + EntityScratch.idRoom)
            .assumingMemoryBound(to: UInt8.self)
        var digit = end
        let id = p.pointee.id
        var rest = id.magnitude
        repeat {
            digit -= 1
            digit.pointee = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        if id < 0 {
            digit -= 1
            digit.pointee = UInt8(ascii: "-")
        }
        return UnsafeBufferPointer(start: digit, count: end - digit)
    }
}

/// Where a managed export reader hands what it reads, record by record. `record` counts from 1
/// within the block range read (so within the output file for a range that starts at block 0).
protocol ExportSink: ~Copyable {
    /// A top-level `rating_events` entity that is a valid rating event. Returns why the run's
    /// selection refuses it (the reader then hands it to `bad`), or nil.
    mutating func event(_ event: ExportEvent, record: Int) -> BadRecord?
    /// An entity of another kind, or a `rating_events` entity under another document: not a
    /// rating event, and not a bad record either.
    mutating func leftOut(record: Int)
    /// A top-level `rating_events` entity that is not a usable event, with the NDJSON rules'
    /// reason (`BadRecord.invalid`), or one the selection refused. `refused` reads what
    /// `--report` names it by, in the run's `KindWindow`; a sink calls it only for a record it
    /// keeps, and only during this call.
    mutating func bad(record: Int, reason: BadRecord, refused: (KindWindow) -> RefusedRecord)
}
