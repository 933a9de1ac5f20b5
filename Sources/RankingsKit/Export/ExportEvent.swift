import CKernels

/// One rating event read from a managed export: what the NDJSON path reads from a valid line.
/// The byte buffers point into the record being read (or the reader's scratch) and are valid
/// only during the sink call that hands the event over.
public struct ExportEvent: ExportEventFields {
    /// `joke_id`: a non-empty, well-formed UTF-8 string property.
    public var jokeID: UnsafeBufferPointer<UInt8>
    /// `rating`: an integer or double property in 1…5, as a double.
    public var rating: Double
    /// `timestamp`: a Firestore timestamp (microseconds, as Firestore keeps them), absent, or
    /// a value of another type. Worked out when asked: a plain run never asks.
    public var timestamp: ExportEventTime { ExportEventRules.timestamp(timestampProperty) }
    /// The `timestamp` property as the entity holds it, nil when it has none. Kept raw so an
    /// event is plain bytes to copy (the decoded form holds a String for messages).
    var timestampProperty: EntityProto.Property?
    /// `device_id` and `week_id`: nil unless a plain string property.
    public var deviceID: UnsafeBufferPointer<UInt8>?
    public var weekID: UnsafeBufferPointer<UInt8>?
    /// The key's name, or its numeric id in decimal: the event id of `--dedupe id`.
    public var eventID: UnsafeBufferPointer<UInt8>
    /// The file offset of the record's first fragment header: grows through the file, so it
    /// orders events for "the later one wins" across ranges read by different threads.
    public var offset: Int64
}

/// A plain rating event (`ExportEventRules.plainEvent`) where the C walker picked it: the joke
/// id and rating judged, the other fields read from the picks only when asked (a plain run
/// never asks). Valid only during the sink call that hands it over.
public struct PickedEvent: ExportEventFields {
    let picks: UnsafePointer<rk_picked_entity>
    public let jokeID: UnsafeBufferPointer<UInt8>
    public let rating: Double
    /// As `ExportEvent.offset`.
    public let offset: Int64

    public var timestamp: ExportEventTime {
        let t = Self.property(.timestamp, of: picks)
        return ExportEventRules.timestamp(t.pointee.seen > 0 ? EntityProto.Property(picked: t.pointee) : nil)
    }

    public var deviceID: UnsafeBufferPointer<UInt8>? { ExportEventRules.plainString(Self.property(.deviceID, of: picks)) }
    public var weekID: UnsafeBufferPointer<UInt8>? { ExportEventRules.plainString(Self.property(.weekID, of: picks)) }
    /// A plain event's key always has a name.
    public var eventID: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: picks.pointee.name, count: picks.pointee.name_count) }

    /// The same event in full.
    public var event: ExportEvent {
        let t = Self.property(.timestamp, of: picks)
        return ExportEvent(jokeID: jokeID, rating: rating,
                           timestampProperty: t.pointee.seen > 0 ? EntityProto.Property(picked: t.pointee) : nil,
                           deviceID: deviceID, weekID: weekID, eventID: eventID, offset: offset)
    }

    /// A property of the picks, in place.
    static func property(_ name: EntityProto.Name, of picks: UnsafePointer<rk_picked_entity>) -> UnsafePointer<rk_picked_property> {
        UnsafeRawPointer(picks).advanced(by: MemoryLayout<rk_picked_entity>.offset(of: \.properties)!)
            .assumingMemoryBound(to: rk_picked_property.self) + name.rawValue
    }
}

/// A plain rating event read from an entity template (`rk_entity_read`, `rk_plain_run`): only
/// the joke id and rating were read; the rest is picked from the template when asked (a plain
/// run never asks).
/// Valid only during the sink call that hands it over.
public struct TemplatedEvent: ExportEventFields {
    /// What the template read, in the reader's buffers: pointers, so that the event is
    /// passed in registers (as a struct of nine words, copying it cost more than reading it).
    let plain: UnsafePointer<rk_plain_event>
    /// Where the picks go when asked for: the reader's own, unused during the sink call.
    let scratch: UnsafeMutablePointer<rk_picked_entity>
    /// As `ExportEvent.offset`.
    public let offset: Int64

    public var jokeID: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: plain.pointee.joke_id, count: plain.pointee.joke_id_count)
    }
    public var rating: Double { plain.pointee.rating }

    /// The same event with every pick.
    public var picked: PickedEvent {
        rk_entity_template_picks(plain.pointee.from, plain.pointee.record, plain.pointee.count, scratch)
        return PickedEvent(picks: scratch, jokeID: jokeID, rating: rating, offset: offset)
    }

    public var timestamp: ExportEventTime { picked.timestamp }
    public var deviceID: UnsafeBufferPointer<UInt8>? { picked.deviceID }
    public var weekID: UnsafeBufferPointer<UInt8>? { picked.weekID }
    public var eventID: UnsafeBufferPointer<UInt8> { picked.eventID }
}

/// What the counter reads of an exported event, in full (`ExportEvent`) or in place
/// (`PickedEvent`, `TemplatedEvent`).
public protocol ExportEventFields {
    var jokeID: UnsafeBufferPointer<UInt8> { get }
    var rating: Double { get }
    var timestamp: ExportEventTime { get }
    var deviceID: UnsafeBufferPointer<UInt8>? { get }
    var weekID: UnsafeBufferPointer<UInt8>? { get }
    var eventID: UnsafeBufferPointer<UInt8> { get }
    var offset: Int64 { get }
}

/// An event's `timestamp` property as the export holds it.
public enum ExportEventTime: Equatable, Sendable {
    case absent
    /// A property that is not a timestamp; `value` names its type for messages ("an integer").
    case unreadable(value: String)
    case at(Timestamp)
}

/// Where a managed export reader hands what it reads, record by record. `record` counts from 1
/// within the block range read (so within the output file for a range that starts at block 0).
public protocol ExportSink: ~Copyable {
    /// A top-level `rating_events` entity that is a valid rating event.
    mutating func event(_ event: ExportEvent, record: Int)
    /// The same for a plain event, read in place (by default, handed to `event(_:record:)`).
    mutating func event(picked: PickedEvent, record: Int)
    /// The same for a plain event read from a template (by default, handed on picked).
    mutating func event(templated: TemplatedEvent, record: Int)
    /// An entity of another kind, or a `rating_events` entity under another document: not a
    /// rating event, and not a bad record either.
    mutating func leftOut(record: Int)
    /// A top-level `rating_events` entity that is not a usable event, with the NDJSON rules'
    /// reason (`BadRecord.invalid`).
    mutating func bad(record: Int, reason: BadRecord)
}

extension ExportSink where Self: ~Copyable {
    public mutating func event(picked: PickedEvent, record: Int) { event(picked.event, record: record) }
    public mutating func event(templated: TemplatedEvent, record: Int) { event(picked: templated.picked, record: record) }
}
