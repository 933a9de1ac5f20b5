/// Which valid events a run counts, and how repeated votes collapse: the backfill options.
/// The default selects everything and keeps every event, which costs nothing in the hot loop.
public struct EventSelection: Sendable {
    public enum Dedupe: Sendable, Equatable {
        case none
        /// One vote per (device_id, joke_id): the latest timestamp wins, then the higher rating.
        case device
        /// One vote per event `id`: the later line wins (for overlapping export files).
        case eventID
    }

    /// Count only events whose timestamp is at or before this instant.
    public var asOf: Timestamp?
    /// Count only events whose timestamp is at or after this instant (`--since`).
    public var since: Timestamp?
    /// Count only events whose `week_id` is exactly these bytes.
    public var weekID: [UInt8]?
    public var dedupe: Dedupe = .none

    init() {}

    var needsTimestamp: Bool { timeWindow || dedupe == .device }

    /// `--as-of` or `--since`: every counted event must then have a readable timestamp.
    var timeWindow: Bool { asOf != nil || since != nil }

    var wantedFields: FieldSet {
        var set = FieldSet.ratingOnly
        if needsTimestamp { set.insert(FieldSet(.timestamp)) }
        if weekID != nil { set.insert(FieldSet(.weekID)) }
        if dedupe == .device { set.insert(FieldSet(.deviceID)) }
        if dedupe == .eventID { set.insert(FieldSet(.eventID)) }
        return set
    }
}

/// Where a line sits in the whole input, for "the later one in input order wins": the file's
/// position on the command line (directory files in name order), then the line's byte offset.
struct InputOrder {
    static func make(file: Int, offset: Int64) -> UInt64 { UInt64(file) << 44 | UInt64(offset) }
}
