/// A managed export's entity by the descriptors (entity_bytes_pb2) and the rules of
/// docs/managed-exports.md, for the fuzz targets: messages parsed into lists of fields first,
/// then looked at. Shares nothing with Sources/.
enum ReferenceEntity {
    enum Verdict: Equatable {
        case undecodable
        case leftOut
        case bad(String)
        case event(id: [UInt8], joke: [UInt8], rating: Double, timestamp: Int64??, device: [UInt8]?, week: [UInt8]?)
    }

    struct Field {
        var number: UInt64
        var wire: UInt8
        var int: UInt64 = 0
        var bytes: [UInt8] = []
        /// A group's fields.
        var group: [Field] = []
    }

    struct Bad: Error {}

    /// A message's fields, top level only (groups parsed into their fields).
    static func parse(_ b: [UInt8]) throws(Bad) -> [Field] {
        var i = 0
        return try fields(b, &i, endGroup: nil, depth: 0)
    }

    static func varint(_ b: [UInt8], _ i: inout Int) throws(Bad) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<10 {
            guard i < b.count else { throw Bad() }
            let byte = b[i]
            i += 1
            if k == 9 && byte > 1 { throw Bad() }
            v |= UInt64(byte & 0x7F) << (7 * UInt64(k))
            if byte < 0x80 { return v }
        }
        throw Bad()
    }

    static func fields(_ b: [UInt8], _ i: inout Int, endGroup: UInt64?, depth: Int) throws(Bad) -> [Field] {
        var out: [Field] = []
        while i < b.count {
            let key = try varint(b, &i)
            let number = key >> 3, wire = UInt8(key & 7)
            guard number >= 1 && number < 1 << 29 else { throw Bad() }
            var f = Field(number: number, wire: wire)
            switch wire {
            case 0: f.int = try varint(b, &i)
            case 1:
                guard b.count - i >= 8 else { throw Bad() }
                for k in 0..<8 { f.int |= UInt64(b[i + k]) << (8 * UInt64(k)) }
                i += 8
            case 2:
                let length = try varint(b, &i)
                guard length <= UInt64(b.count - i) else { throw Bad() }
                f.bytes = Array(b[i..<(i + Int(length))])
                i += Int(length)
            case 3:
                guard depth < 64 else { throw Bad() }
                f.group = try fields(b, &i, endGroup: number, depth: depth + 1)
            case 4:
                guard number == endGroup else { throw Bad() }
                return out
            case 5:
                guard b.count - i >= 4 else { throw Bad() }
                i += 4
            default: throw Bad()
            }
            out.append(f)
        }
        if endGroup != nil { throw Bad() }
        return out
    }

    static let names: [[UInt8]] = ["joke_id", "rating", "timestamp", "device_id", "week_id"].map { Array($0.utf8) }

    struct Property {
        var meaning: UInt64 = 0
        var multiple = false
        var value: [Field] = []
    }

    static func judge(_ record: [UInt8]) -> Verdict {
        do throws(Bad) { return try judgeOrThrow(record) } catch { return .undecodable }
    }

    static func judgeOrThrow(_ record: [UInt8]) throws(Bad) -> Verdict {
        let top = try parse(record)
        var path: [(kind: [UInt8], id: UInt64?, name: [UInt8]?)] = []
        var hasKey = false
        var found: [[UInt8]: Property] = [:]
        for f in top {
            if f.number == 13 && f.wire == 2 {
                hasKey = true
                for r in try parse(f.bytes) where r.number == 14 && r.wire == 2 {
                    // The path's top-level elements only (group 1); other groups are checked, not read.
                    for e in try parse(r.bytes) where e.number == 1 && e.wire == 3 {
                        var kind: [UInt8]?, id: UInt64?, name: [UInt8]?
                        for x in e.group {
                            if x.number == 2 && x.wire == 2 { kind = x.bytes }
                            if x.number == 3 && x.wire == 0 { id = x.int }
                            if x.number == 4 && x.wire == 2 { name = x.bytes }
                        }
                        guard let kind else { throw Bad() }
                        path.append((kind, id, name))
                    }
                }
            }
            if (f.number == 14 || f.number == 15) && f.wire == 2 {
                var meaning: UInt64 = 0, name: [UInt8]?, multiple = false, value: [UInt8]?
                for p in try parse(f.bytes) {
                    if p.number == 1 && p.wire == 0 { meaning = p.int }
                    if p.number == 3 && p.wire == 2 { name = p.bytes }
                    if p.number == 4 && p.wire == 0 { multiple = p.int != 0 }
                    if p.number == 5 && p.wire == 2 { value = p.bytes }
                }
                guard let name else { throw Bad() }
                let parsed = try value.map { (v) throws(Bad) in try parse(v) } ?? []
                guard names.contains(name) else { continue }
                if let earlier = found[name], !(earlier.multiple && multiple) { throw Bad() }
                found[name] = Property(meaning: meaning, multiple: multiple, value: parsed)
            }
        }
        guard hasKey, let last = path.last else { throw Bad() }
        guard path.count == 1, last.kind == Array("rating_events".utf8) else { return .leftOut }

        func plain(_ p: Property?) -> [UInt8]? {
            guard let p, !p.multiple, p.meaning == 0 || p.meaning == 15 else { return nil }
            guard let v = p.value.last(where: isValueField), v.number == 3 else { return nil }
            return v.bytes
        }
        guard let jokeProperty = found[names[0]] else { return .bad("no joke_id") }
        guard let joke = plain(jokeProperty) else { return .bad("joke_id is not a string") }
        if joke.isEmpty { return .bad("joke_id is empty") }
        guard String(validating: joke, as: UTF8.self) != nil else { throw Bad() }
        if joke.count >= 1500 { return .bad("joke_id is \(joke.count) bytes: Firestore cannot query a value of 1,500 bytes or more") }
        guard let ratingProperty = found[names[1]] else { return .bad("no rating") }
        guard !ratingProperty.multiple, ratingProperty.meaning == 0, let v = ratingProperty.value.last(where: isValueField),
              v.number == 1 || v.number == 4 else { return .bad("rating is not a number") }
        let rating = v.number == 1 ? Double(Int64(bitPattern: v.int)) : Double(bitPattern: v.int)
        guard rating >= 1 && rating <= 5 else { return .bad("rating is not between 1 and 5") }

        let id: [UInt8]
        if let name = last.name { id = name } else if let number = last.id { id = Array(String(Int64(bitPattern: number)).utf8) } else { throw Bad() }
        var timestamp: Int64?? = nil
        if let t = found[names[2]] {
            if !t.multiple, t.meaning == 7, let v = t.value.last(where: isValueField), v.number == 1 {
                timestamp = .some(Int64(bitPattern: v.int))
            } else {
                timestamp = .some(nil)
            }
        }
        return .event(id: id, joke: joke, rating: rating, timestamp: timestamp, device: plain(found[names[3]]), week: plain(found[names[4]]))
    }

    /// The PropertyValue fields that set its value (the last one set wins); others are ignored.
    static func isValueField(_ f: Field) -> Bool {
        switch (f.number, f.wire) {
        case (1, 0), (2, 0), (3, 2), (4, 1), (5, 3), (8, 3), (12, 3): true
        default: false
        }
    }
}
