/// Reads what `--report` names a refused JSON line by (`RefusedRecord`): its document, its
/// joke id, and the kind Firestore's range filters would put it in, whatever the job thinks of
/// the line. Runs only for the bad lines a run keeps, so it walks the line again from the
/// start rather than asking the hot path to keep anything.
///
/// It answers Firestore's question, not the job's, so it keeps its own reading of a value: a
/// rating is any number Firestore holds (`6`, `0.5`, `{"integerValue": "7"}` included), where
/// the job asks for 1 to 5; a joke id is any string of valid Unicode (empty or over-long).
/// What is a flat record and what a typed document is decided as `RecordCounter` decides it: a
/// top-level `joke_id` makes a flat record, else a string `name` with an object `fields` a
/// typed document.
struct RefusedLineReader: ~Copyable {
    private var decoder = RecordDecoder()
    private var keyScratch = ByteBuffer(capacity: 32)
    private var textScratch = ByteBuffer(capacity: 64)
    private var timestampScratch = ByteBuffer(capacity: 64)

    init() {}

    /// Whether a line refused for `why` is a JSON object, the only kind of line that names a
    /// document, a joke or a rating.
    static func isObject(_ why: BadRecord) -> Bool {
        switch why {
        case .malformed, .overlong, .invalid(.notObject): false
        case .invalid, .unreadableTimestamp: true
        }
    }

    /// `line` (without its `\n`) is a JSON text whose value is an object, as the line scanner
    /// accepted it: the walk below checks shapes, never syntax.
    mutating func describe(_ line: UnsafeBufferPointer<UInt8>, window: KindWindow) -> RefusedRecord {
        guard let open = line.firstIndex(of: UInt8(ascii: "{")) else { return .unknown }
        let object = UnsafeBufferPointer(rebasing: line[open...])
        var joke, rating, timestamp, week, name, fields: UnsafeBufferPointer<UInt8>?
        // The last of a repeated key wins, as the job reads it.
        ValidatedJSON.members(of: object, keyScratch: &keyScratch) { key, value in
            switch key.count {
            case 4 where key.elementsEqual("name".utf8): name = value
            case 6 where key.elementsEqual("fields".utf8): fields = value
            case 6 where key.elementsEqual("rating".utf8): rating = value
            case 7 where key.elementsEqual("joke_id".utf8): joke = value
            case 7 where key.elementsEqual("week_id".utf8): week = value
            case 9 where key.elementsEqual("timestamp".utf8): timestamp = value
            default: break
            }
        }
        if joke == nil, let name, name[0] == UInt8(ascii: "\""), let fields, fields[0] == UInt8(ascii: "{") {
            return typed(name: name, fields: fields, window: window)
        }
        // A flat record: firebase-admin's JSON of the document's data, which names no document.
        let number = rating.flatMap { Self.isNumber($0) ? decoder.parseNumber($0) : nil }
        let instant = window.readsTimestamp ? timestamp.flatMap { TimestampField.decode($0, scratch: &timestampScratch) } : nil
        let weekID = window.week == nil ? nil : week.flatMap { text(of: $0, valid: false) }
        return RefusedRecord(jokeID: joke.flatMap { text(of: $0, valid: true) },
                             kind: window.kind(rating: number, timestamp: instant, week: weekID))
    }

    /// A typed document: its `name`, and the typed values of `fields` as Firestore holds them.
    private mutating func typed(name: UnsafeBufferPointer<UInt8>, fields: UnsafeBufferPointer<UInt8>,
                                window: KindWindow) -> RefusedRecord {
        var joke, rating, timestamp, week: UnsafeBufferPointer<UInt8>?
        ValidatedJSON.members(of: fields, keyScratch: &keyScratch) { key, value in
            switch key.count {
            case 6 where key.elementsEqual("rating".utf8): rating = value
            case 7 where key.elementsEqual("joke_id".utf8): joke = value
            case 7 where key.elementsEqual("week_id".utf8): week = value
            case 9 where key.elementsEqual("timestamp".utf8): timestamp = value
            default: break
            }
        }
        let number = rating.flatMap { typedNumber($0) }
        var instant: Timestamp?
        if window.readsTimestamp, let timestamp, let text = only("timestampValue", in: timestamp),
           text[0] == UInt8(ascii: "\"") {
            instant = TimestampField.decode(text, scratch: &timestampScratch)
        }
        var weekID: [UInt8]?
        if window.week != nil, let week, let text = only("stringValue", in: week) { weekID = self.text(of: text, valid: false) }
        let jokeID = joke.flatMap { only("stringValue", in: $0) }.flatMap { text(of: $0, valid: true) }
        // A `name` that is no document path names no document Firestore could hold, so no
        // COUNT of Firestore's matches the line whatever its fields say.
        guard let document = text(of: name, valid: true),
              case .some(.some) = document.withUnsafeBufferPointer({ TypedDocument.place(of: $0) }) else {
            return RefusedRecord(jokeID: jokeID)
        }
        return RefusedRecord(document: document, jokeID: jokeID, kind: window.kind(rating: number, timestamp: instant, week: weekID))
    }

    /// A typed rating as Firestore holds it: an `integerValue` (a decimal string, or a JSON
    /// number without a fraction, as the job reads one) or a `doubleValue` that is a JSON number.
    /// `"NaN"` and the infinities are doubles too, but in neither range, so nil does for them.
    private mutating func typedNumber(_ typed: UnsafeBufferPointer<UInt8>) -> Double? {
        if let integer = only("integerValue", in: typed) {
            if integer[0] == UInt8(ascii: "\"") {
                guard let digits = text(of: integer, valid: false) else { return nil }
                let body = digits.first == UInt8(ascii: "-") ? digits.dropFirst() : digits[...]
                guard !body.isEmpty, body.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
                return digits.withUnsafeBufferPointer { decoder.parseNumber($0) }
            }
            guard Self.isNumber(integer) else { return nil }
            let v = decoder.parseNumber(integer)
            return v == v.rounded(.towardZero) ? v : nil
        }
        if let double = only("doubleValue", in: typed), Self.isNumber(double) { return decoder.parseNumber(double) }
        return nil
    }

    /// The value of `kind` when `typed` is an object whose one member is `kind`.
    private mutating func only(_ kind: StaticString, in typed: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard typed[0] == UInt8(ascii: "{") else { return nil }
        var found: UnsafeBufferPointer<UInt8>?, members = 0
        let name = UnsafeBufferPointer(start: kind.utf8Start, count: kind.utf8CodeUnitCount)
        ValidatedJSON.members(of: typed, keyScratch: &keyScratch) { key, value in
            members += 1
            if key.elementsEqual(name) { found = value }
        }
        return members == 1 ? found : nil
    }

    /// A JSON string's bytes after unescaping; nil for any other value, and with `valid` for a
    /// string holding a lone surrogate (which no JSON reader turns back into these bytes).
    private mutating func text(of value: UnsafeBufferPointer<UInt8>, valid: Bool) -> [UInt8]? {
        guard value[0] == UInt8(ascii: "\"") else { return nil }
        let inner = UnsafeBufferPointer(rebasing: value[1..<(value.count - 1)])
        textScratch.removeAll()
        guard JSONString.unescape(inner, into: &textScratch, allowLoneSurrogates: !valid) else { return nil }
        return textScratch.bytes
    }

    private static func isNumber(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        value[0] == UInt8(ascii: "-") || value[0] &- UInt8(ascii: "0") < 10
    }
}
