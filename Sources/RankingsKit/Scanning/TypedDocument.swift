import Glibc

/// Reads a Firestore `Document` written as a JSON line, the form the REST API and Google's
/// client libraries give: `{"name": "projects/P/databases/D/documents/rating_events/ID",
/// "fields": {"joke_id": {"stringValue": "…"}, "rating": {"integerValue": "5"}, …}}`.
///
/// Only lines the line scanner accepted as JSON objects come here, so the walk below checks
/// shapes, never syntax. Values are read as proto3 JSON writes them: `stringValue`;
/// `integerValue` as a decimal string (or a JSON number); `doubleValue` as a number or
/// `"NaN"`/`"Infinity"`/`"-Infinity"`; `timestampValue` as RFC 3339. The rules and reasons
/// for `joke_id` and `rating` are the flat record's.
///
/// The common document is read from the spans the scanner already captured
/// (`judge(_:captured:)`); the walk, `judge(_:)`, reads every other line and words every
/// verdict, and is the reference the spans' reading is held to (Tests/Fuzz typed_lines).
struct TypedDocument: ~Copyable {
    enum Verdict {
        /// No string `name` with an object `fields`: not a document (the flat record's verdict stands).
        case notDocument
        /// A document of another collection, or a subcollection's.
        case leftOut
        case bad(InvalidRecord)
        /// `id` is valid until the next line.
        case valid(id: UnsafeBufferPointer<UInt8>, rating: Double)
    }

    private var decoder = RecordDecoder()
    /// The unescaped `name`, whose last segment is the event id.
    private var nameScratch = ByteBuffer(capacity: 128)
    private var keyScratch = ByteBuffer(capacity: 32)
    /// An escaped `integerValue` or `doubleValue` string, unescaped.
    private var numberScratch = ByteBuffer(capacity: 32)
    /// Spans of this document's typed values (the `{"…Value": …}` objects), for the details.
    private var timestampValue: UnsafeBufferPointer<UInt8>?
    private var deviceValue: UnsafeBufferPointer<UInt8>?
    private var weekValue: UnsafeBufferPointer<UInt8>?
    /// The last segment of `name`: in the line, or in `nameScratch` when `name` had escapes.
    private var eventIDValue: UnsafeBufferPointer<UInt8>?
    /// `projects/{p}/databases/{d}/documents/rating_events/` of the last name `eventID(ofName:)`
    /// took apart (empty before one): the documents of one export share it.
    private var collectionPath = ByteBuffer(capacity: 128)

    init() {}

    /// The verdict `judge(_:)` gives, for the common document straight from `captured` (the
    /// scanner's spans of the line, after it found no top-level `joke_id`): a plain `name` of a
    /// top-level `rating_events` document, `joke_id` as `{"stringValue":"…"}` with no quote or
    /// backslash inside and shorter than `JokeIDLimit.bytes`, `rating` as `{"integerValue":"1"}`
    /// to `"5"`, written compactly. Every other line goes to the walk.
    mutating func judge(_ line: UnsafeBufferPointer<UInt8>, captured: borrowing CapturedFields) -> Verdict {
        accept(captured) ?? judge(line)
    }

    /// `.valid` for the common document of `judge(_:captured:)`, nil for any other line.
    mutating func accept(_ captured: borrowing CapturedFields) -> Verdict? {
        guard let name = captured[.name], !captured.isEscaped(.name), let eventID = eventID(ofName: name),
              let fields = captured[.fields], fields[0] == UInt8(ascii: "{"),
              let jokeID = captured[.typedJokeID].flatMap(Self.plainStringValue),
              let rating = captured[.typedRating].flatMap(Self.smallIntegerValue) else { return nil }
        (timestampValue, deviceValue, weekValue) = (captured[.typedTimestamp], captured[.typedDeviceID], captured[.typedWeekID])
        eventIDValue = eventID
        return .valid(id: jokeID, rating: rating)
    }

    /// The id of a `name` that is a JSON string without escapes spelling
    /// `projects/{p}/databases/{d}/documents/rating_events/{id}`, each segment non-empty; nil
    /// for any other value (which may still be a document: the walk decides).
    private mutating func eventID(ofName name: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard name.count > 2, name[0] == UInt8(ascii: "\"") else { return nil }
        let path = UnsafeBufferPointer(rebasing: name[1..<(name.count - 1)])
        // The last name's collection path, a non-empty id after it, and no `/` in that id.
        let known = collectionPath.count
        if known > 0, path.count > known, collectionPath.withBuffer({ memcmp(path.baseAddress!, $0.baseAddress!, known) }) == 0 {
            let id = UnsafeBufferPointer(rebasing: path[known...])
            return memchr(id.baseAddress!, Int32(UInt8(ascii: "/")), id.count) == nil ? id : nil
        }
        guard let afterProject = Self.segment(of: path, after: "projects/"),
              let afterDatabase = Self.segment(of: UnsafeBufferPointer(rebasing: path[afterProject...]), after: "databases/")
        else { return nil }
        let rest = UnsafeBufferPointer(rebasing: path[(afterProject + afterDatabase)...])
        let collection: StaticString = "documents/rating_events/"
        let n = collection.utf8CodeUnitCount
        guard rest.count > n, memcmp(rest.baseAddress!, collection.utf8Start, n) == 0 else { return nil }
        let id = UnsafeBufferPointer(rebasing: rest[n...])
        guard memchr(id.baseAddress!, Int32(UInt8(ascii: "/")), id.count) == nil else { return nil }
        collectionPath.removeAll()
        collectionPath.append(UnsafeBufferPointer(rebasing: path[..<(path.count - id.count)]))
        return id
    }

    /// For `path` starting with `word` (which ends in `/`) then a non-empty segment and a `/`:
    /// the index just past that `/`.
    private static func segment(of path: UnsafeBufferPointer<UInt8>, after word: StaticString) -> Int? {
        let n = word.utf8CodeUnitCount
        guard path.count > n + 1, memcmp(path.baseAddress!, word.utf8Start, n) == 0,
              let slash = memchr(path.baseAddress! + n + 1, Int32(UInt8(ascii: "/")), path.count - n - 1) else { return nil }
        return UnsafeRawPointer(slash) - UnsafeRawPointer(path.baseAddress!) + 1
    }

    /// The text of `{"stringValue":"…"}` when it is the only member and holds no quote or
    /// backslash (so it is the string, unescaped), and is not empty nor too long for a joke id
    /// (the walk words that verdict).
    private static func plainStringValue(_ typed: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let open: StaticString = #"{"stringValue":""#
        let n = open.utf8CodeUnitCount
        guard typed.count > n + 2, typed.count - n - 2 < JokeIDLimit.bytes, memcmp(typed.baseAddress!, open.utf8Start, n) == 0,
              typed[typed.count - 2] == UInt8(ascii: "\""), typed[typed.count - 1] == UInt8(ascii: "}") else { return nil }
        let text = UnsafeBufferPointer(rebasing: typed[n..<(typed.count - 2)])
        let quote = memchr(text.baseAddress!, Int32(UInt8(ascii: "\"")), text.count)
        let backslash = memchr(text.baseAddress!, Int32(UInt8(ascii: "\\")), text.count)
        return quote == nil && backslash == nil ? text : nil
    }

    /// The rating of `{"integerValue":"d"}`, d a digit from 1 to 5.
    private static func smallIntegerValue(_ typed: UnsafeBufferPointer<UInt8>) -> Double? {
        let open: StaticString = #"{"integerValue":""#
        let n = open.utf8CodeUnitCount
        guard typed.count == n + 3, memcmp(typed.baseAddress!, open.utf8Start, n) == 0,
              typed[n] &- UInt8(ascii: "1") < 5, typed[n + 1] == UInt8(ascii: "\""),
              typed[n + 2] == UInt8(ascii: "}") else { return nil }
        return Double(typed[n] &- UInt8(ascii: "0"))
    }

    mutating func judge(_ line: UnsafeBufferPointer<UInt8>) -> Verdict {
        var name: UnsafeBufferPointer<UInt8>?, fields: UnsafeBufferPointer<UInt8>?
        guard let start = line.firstIndex(of: UInt8(ascii: "{")) else { return .notDocument }
        members(of: UnsafeBufferPointer(rebasing: line[start...])) { key, value in
            if key.elementsEqual("name".utf8) { name = value } else if key.elementsEqual("fields".utf8) { fields = value }
        }
        guard let name, name[0] == UInt8(ascii: "\""), let fields, fields[0] == UInt8(ascii: "{") else {
            return .notDocument
        }
        nameScratch.removeAll()
        guard JSONString.unescape(UnsafeBufferPointer(rebasing: name[1..<(name.count - 1)]), into: &nameScratch,
                                  allowLoneSurrogates: true) else { return .bad(.badDocumentName) }
        switch nameScratch.withBuffer({ Self.place(of: $0) }) {
        case .none: return .bad(.badDocumentName)
        case .some(nil): return .leftOut
        case .some(let id?): eventIDValue = nameScratch.withBuffer { UnsafeBufferPointer(rebasing: $0[id]) }
        }

        var jokeID: UnsafeBufferPointer<UInt8>?, rating: UnsafeBufferPointer<UInt8>?
        var timestamp: UnsafeBufferPointer<UInt8>?, device: UnsafeBufferPointer<UInt8>?, week: UnsafeBufferPointer<UInt8>?
        // The last of a repeated key wins, as in a flat record.
        members(of: fields) { key, value in
            switch key.count {
            case 6 where key.elementsEqual("rating".utf8): rating = value
            case 7 where key.elementsEqual("joke_id".utf8): jokeID = value
            case 7 where key.elementsEqual("week_id".utf8): week = value
            case 9 where key.elementsEqual("timestamp".utf8): timestamp = value
            case 9 where key.elementsEqual("device_id".utf8): device = value
            default: break
            }
        }
        (timestampValue, deviceValue, weekValue) = (timestamp, device, week)
        guard let jokeID else { return .bad(.missingJokeID) }
        guard let idString = only("stringValue", in: jokeID) else { return .bad(.jokeIDNotString) }
        let id: UnsafeBufferPointer<UInt8>
        switch decoder.jokeID(idString) {
        case .success(let value): id = value
        case .failure(let why): return .bad(why)
        }
        guard let rating else { return .bad(.missingRating) }
        switch number(rating) {
        case .success(let value): return .valid(id: id, rating: value)
        case .failure(let why): return .bad(why)
        }
    }

    /// Where `name` puts the document: nil when it is no document path at all; `.some(nil)`
    /// for a document outside the top-level `rating_events`; else the range of its id.
    static func place(of name: UnsafeBufferPointer<UInt8>) -> Range<Int>?? {
        // projects/{p}/databases/{d}/documents/{collection}/{id}[/{collection}/{id}...]
        var segments: [Range<Int>] = []
        var from = 0
        for i in 0...name.count where i == name.count || name[i] == UInt8(ascii: "/") {
            segments.append(from..<i)
            from = i + 1
        }
        func segment(_ k: Int, is word: String) -> Bool { name[segments[k]].elementsEqual(word.utf8) }
        guard segments.count >= 7, segments.count % 2 == 1, segments.allSatisfy({ !$0.isEmpty }),
              segment(0, is: "projects"), segment(2, is: "databases"), segment(4, is: "documents") else { return nil }
        guard segments.count == 7, segment(5, is: "rating_events") else { return .some(nil) }
        return .some(segments[6])
    }

    /// `rating`: an `integerValue` (decimal string or number) or a `doubleValue` (number, or
    /// one of the three strings proto3 JSON uses for the values a number cannot spell).
    private mutating func number(_ typed: UnsafeBufferPointer<UInt8>) -> Result<Double, InvalidRecord> {
        if let integer = only("integerValue", in: typed) {
            var digits = integer
            if integer[0] == UInt8(ascii: "\"") {
                digits = text(of: integer)
                let body = digits.first == UInt8(ascii: "-") ? digits.dropFirst() : digits[...]
                guard !body.isEmpty, body.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return .failure(.ratingNotNumber) }
            } else if !Self.isNumber(integer) {
                return .failure(.ratingNotNumber)
            }
            let v = decoder.parseNumber(digits)
            guard v == v.rounded(.towardZero) else { return .failure(.ratingNotNumber) }
            return v >= 1 && v <= 5 ? .success(v) : .failure(.ratingOutOfRange)
        }
        if let double = only("doubleValue", in: typed) {
            if double[0] == UInt8(ascii: "\"") {
                let spelled = text(of: double)
                let special = ["NaN", "Infinity", "-Infinity"].contains { spelled.elementsEqual($0.utf8) }
                return .failure(special ? .ratingOutOfRange : .ratingNotNumber)
            }
            guard Self.isNumber(double) else { return .failure(.ratingNotNumber) }
            let v = decoder.parseNumber(double)
            return v >= 1 && v <= 5 ? .success(v) : .failure(.ratingOutOfRange)
        }
        return .failure(.ratingNotNumber)
    }

    /// A JSON string's text: proto3 JSON readers unescape a string before reading the number
    /// in it, so `"\u0035"` is 5. Valid until the next call.
    private mutating func text(of string: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        let inner = UnsafeBufferPointer(rebasing: string[1..<(string.count - 1)])
        guard inner.firstIndex(of: UInt8(ascii: "\\")) != nil else { return inner }
        numberScratch.removeAll()
        // A lone surrogate stays as bytes that are no digit, so the text is no number.
        _ = JSONString.unescape(inner, into: &numberScratch, allowLoneSurrogates: true)
        return numberScratch.withBuffer { $0 }
    }

    private static func isNumber(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        value[0] == UInt8(ascii: "-") || value[0] &- UInt8(ascii: "0") < 10
    }

    /// The value of `kind` when `typed` is an object whose one member is `kind`; nil otherwise
    /// (another type, two members, not an object).
    private mutating func only(_ kind: String, in typed: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard typed[0] == UInt8(ascii: "{") else { return nil }
        var found: UnsafeBufferPointer<UInt8>?, members = 0
        self.members(of: typed) { key, value in
            members += 1
            if key.elementsEqual(kind.utf8) { found = value }
        }
        return members == 1 ? found : nil
    }

    private mutating func string(_ typed: UnsafeBufferPointer<UInt8>?, slot: Field) -> UnsafeBufferPointer<UInt8>? {
        guard let typed, let value = only("stringValue", in: typed) else { return nil }
        return decoder.string(value, slot: slot)
    }

    private mutating func members(of object: UnsafeBufferPointer<UInt8>,
                                  _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        ValidatedJSON.members(of: object, keyScratch: &keyScratch, body)
    }
}

extension TypedDocument: RatingEventDetails {
    mutating func timestamp() -> EventTime {
        guard let typed = timestampValue else { return .absent }
        if let text = only("timestampValue", in: typed), text[0] == UInt8(ascii: "\""),
           let instant = decoder.timestamp(text) {
            return .at(instant)
        }
        return .unreadable(value: ShownValue.text(typed))
    }

    mutating func deviceID() -> UnsafeBufferPointer<UInt8>? { string(deviceValue, slot: .deviceID) }
    mutating func weekID() -> UnsafeBufferPointer<UInt8>? { string(weekValue, slot: .weekID) }

    mutating func eventID() -> UnsafeBufferPointer<UInt8>? { eventIDValue }
}

/// Steps over JSON text that `JSONLineScanner` already accepted, so no rule is checked twice.
enum ValidatedJSON {
    /// Calls `body` with each member of the object that opens at `object[0]`: the key after
    /// unescaping (valid during the call; `keyScratch` holds an escaped one) and the value's
    /// JSON text.
    static func members(of object: UnsafeBufferPointer<UInt8>, keyScratch: inout ByteBuffer,
                        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        var i = 1
        while true {
            i = skipSpace(object, i)
            guard i < object.count, object[i] != UInt8(ascii: "}") else { return }
            if object[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            let keyEnd = endOfString(object, i)
            let rawKey = UnsafeBufferPointer(rebasing: object[(i + 1)..<(keyEnd - 1)])
            i = skipSpace(object, keyEnd) + 1 // past ':'
            i = skipSpace(object, i)
            let valueEnd = endOfValue(object, i)
            let value = UnsafeBufferPointer(rebasing: object[i..<valueEnd])
            i = valueEnd
            if rawKey.firstIndex(of: UInt8(ascii: "\\")) == nil {
                body(rawKey, value)
            } else {
                keyScratch.removeAll()
                // Exact bytes decide; a lone surrogate cannot spell any key we look for.
                _ = JSONString.unescape(rawKey, into: &keyScratch, allowLoneSurrogates: true)
                keyScratch.withBuffer { body($0, value) }
            }
        }
    }

    static func skipSpace(_ raw: UnsafeBufferPointer<UInt8>, _ from: Int) -> Int {
        var i = from
        while i < raw.count, raw[i] == 0x20 || raw[i] == 0x09 || raw[i] == 0x0D { i += 1 }
        return i
    }

    /// Index just past the string whose opening quote is at `from`.
    static func endOfString(_ raw: UnsafeBufferPointer<UInt8>, _ from: Int) -> Int {
        var i = from + 1
        while i < raw.count {
            if raw[i] == UInt8(ascii: "\\") { i += 2; continue }
            if raw[i] == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return raw.count
    }

    /// Index just past the value that starts at `from`.
    static func endOfValue(_ raw: UnsafeBufferPointer<UInt8>, _ from: Int) -> Int {
        guard from < raw.count else { return raw.count }
        switch raw[from] {
        case UInt8(ascii: "\""):
            return endOfString(raw, from)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var i = from
            while i < raw.count {
                switch raw[i] {
                case UInt8(ascii: "\""):
                    i = endOfString(raw, i)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default:
                    break
                }
                i += 1
            }
            return raw.count
        default:
            var i = from
            while i < raw.count {
                switch raw[i] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0D, 0x0A: return i
                default: i += 1
                }
            }
            return i
        }
    }
}
