/// Issue 15 §2 read literally: a JSON line is a flat record, or a Firestore `Document`
/// (`{"name": …, "fields": {…}}`) whose typed values are read as proto3 JSON writes them.
/// Everything is decided on parsed, unescaped values, on top of `RefJSON`, `RefRecord` and
/// `RefTime`.
enum RefTyped {
    /// One event's every detail the counter may ask for.
    struct Event: Equatable, CustomStringConvertible {
        var id: [UInt8]
        var rating: Double
        var time: Time
        var device: [UInt8]?
        var eventID: [UInt8]?

        static func == (a: Event, b: Event) -> Bool {
            a.id == b.id && a.rating.bitPattern == b.rating.bitPattern && a.time == b.time
                && a.device == b.device && a.eventID == b.eventID
        }

        var description: String {
            "event(id: \(id), rating: \(rating), time: \(time), device: \(device.map { "\($0)" } ?? "nil"), "
                + "eventID: \(eventID.map { "\($0)" } ?? "nil"))"
        }
    }

    enum Time: Equatable { case absent, unreadable, at(RefTime.Instant) }

    enum Outcome: Equatable, CustomStringConvertible {
        case blank, malformed
        case invalid(String)
        /// A document of another collection or a subcollection: not counted, not bad.
        case leftOut
        case valid(Event)

        var description: String {
            switch self {
            case .blank: "blank"
            case .malformed: "malformed"
            case .invalid(let why): "invalid(\(why))"
            case .leftOut: "leftOut"
            case .valid(let event): "\(event)"
            }
        }
    }

    static func string(_ value: RefJSON.Value?) -> RefJSON.RefString? {
        if case .string(let s)? = value { return s }
        return nil
    }

    static func judge(_ line: [UInt8]) -> Outcome {
        if RefRecord.isBlank(line) { return .blank }
        guard let value = RefJSON.parse(line) else { return .malformed }
        guard case .object(let members) = value else { return .invalid("notObject") }
        // A top-level joke_id makes it a flat record, whatever else it holds.
        if RefRecord.field(members, "joke_id") != nil { return flat(line, members) }
        guard let name = string(RefRecord.field(members, "name")?.value),
              case .object(let fields)? = RefRecord.field(members, "fields")?.value else {
            return .invalid("missingJokeID")
        }
        return document(name: name.bytes, fields: fields)
    }

    static func flat(_ line: [UInt8], _ members: [RefJSON.Member]) -> Outcome {
        switch RefRecord.judge(line) {
        case .blank: return .blank
        case .malformed: return .malformed
        case .invalid(let why): return .invalid(why)
        case .valid(let id, let rating):
            let time: Time
            if let t = RefRecord.field(members, "timestamp") {
                time = RefTime.timestamp(t.value).map { .at($0) } ?? .unreadable
            } else {
                time = .absent
            }
            return .valid(Event(id: id, rating: rating, time: time,
                                device: string(RefRecord.field(members, "device_id")?.value)?.bytes,
                                eventID: string(RefRecord.field(members, "id")?.value)?.bytes))
        }
    }

    /// `projects/{p}/databases/{d}/documents/{collection}/{id}[/{collection}/{id}…]`.
    static func document(name: [UInt8], fields: [RefJSON.Member]) -> Outcome {
        let segments = name.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        func word(_ k: Int, _ w: String) -> Bool { segments[k] == Array(w.utf8) }
        guard segments.count >= 7, segments.count % 2 == 1, !segments.contains(where: \.isEmpty),
              word(0, "projects"), word(2, "databases"), word(4, "documents") else { return .invalid("badDocumentName") }
        guard segments.count == 7, word(5, "rating_events") else { return .leftOut }

        guard let joke = RefRecord.field(fields, "joke_id") else { return .invalid("missingJokeID") }
        guard let id = string(typed(joke.value, "stringValue")) else { return .invalid("jokeIDNotString") }
        if id.bytes.isEmpty { return .invalid("emptyJokeID") }
        if id.hasLoneSurrogate { return .invalid("jokeIDLoneSurrogate") }
        if id.bytes.count >= 1500 { return .invalid("jokeIDTooLong(bytes: \(id.bytes.count))") }
        guard let ratingField = RefRecord.field(fields, "rating") else { return .invalid("missingRating") }
        let rating: Double
        switch number(ratingField.value) {
        case .value(let v): rating = v
        case .notNumber: return .invalid("ratingNotNumber")
        case .outOfRange: return .invalid("ratingOutOfRange")
        }

        var time = Time.absent
        if let t = RefRecord.field(fields, "timestamp") {
            if let text = string(typed(t.value, "timestampValue")), !text.hasLoneSurrogate, let at = RefTime.rfc3339(text.bytes) {
                time = .at(at)
            } else {
                time = .unreadable
            }
        }
        let device = RefRecord.field(fields, "device_id").flatMap { string(typed($0.value, "stringValue"))?.bytes }
        return .valid(Event(id: id.bytes, rating: rating, time: time, device: device, eventID: segments[6]))
    }

    /// The value of a typed value `{"kind": value}`: an object of exactly that one member.
    static func typed(_ value: RefJSON.Value, _ kind: String) -> RefJSON.Value? {
        guard case .object(let members) = value, members.count == 1,
              members[0].key.bytes == Array(kind.utf8), !members[0].key.hasLoneSurrogate else { return nil }
        return members[0].value
    }

    enum Number { case value(Double), notNumber, outOfRange }

    static func inRange(_ v: Double) -> Number { v >= 1 && v <= 5 ? .value(v) : .outOfRange }

    /// `integerValue` (a decimal string, or a JSON number with no fractional part) or
    /// `doubleValue` (a JSON number, or "NaN"/"Infinity"/"-Infinity", which are out of range).
    static func number(_ value: RefJSON.Value) -> Number {
        if let integer = typed(value, "integerValue") {
            switch integer {
            case .string(let s):
                let body = s.bytes.first == UInt8(ascii: "-") ? Array(s.bytes.dropFirst()) : s.bytes
                guard !s.hasLoneSurrogate, !body.isEmpty, body.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .notNumber }
                return inRange(RefRecord.double(s.bytes))
            case .number(let text):
                let v = RefRecord.double(text)
                // Whole numbers only (as the nearest double says: 5.0 and 5e0 are whole).
                guard v.isInfinite || v == v.rounded(.towardZero) else { return .notNumber }
                return inRange(v)
            default:
                return .notNumber
            }
        }
        if let double = typed(value, "doubleValue") {
            switch double {
            case .number(let text):
                return inRange(RefRecord.double(text))
            case .string(let s):
                let special = ["NaN", "Infinity", "-Infinity"].contains { Array($0.utf8) == s.bytes }
                return special && !s.hasLoneSurrogate ? .outOfRange : .notNumber
            default:
                return .notNumber
            }
        }
        return .notNumber
    }

    /// A file's lines: tally per joke, bad line numbers, documents left out.
    struct Run: Equatable {
        var jokes: [[UInt8]: RefRecord.Counts] = [:]
        var badLines: [Int] = []
        var leftOut = 0
    }

    static func run(_ file: [UInt8]) -> Run {
        var run = Run()
        for (index, line) in RefRecord.lines(of: file).enumerated() {
            switch judge(line) {
            case .blank: break
            case .malformed, .invalid: run.badLines.append(index + 1)
            case .leftOut: run.leftOut += 1
            case .valid(let event):
                switch RefRecord.kind(event.rating) {
                case .hilarious: run.jokes[event.id, default: RefRecord.Counts()].hilarious += 1
                case .horrible: run.jokes[event.id, default: RefRecord.Counts()].horrible += 1
                case .neutral: run.jokes[event.id, default: RefRecord.Counts()].neutral += 1
                }
            }
        }
        return run
    }
}
