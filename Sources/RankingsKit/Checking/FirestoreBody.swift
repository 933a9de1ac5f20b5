extension DocumentChecker {
    /// The problems of a Firestore REST `Document` body (`rankings check --format firestore`):
    /// its Firestore typing is checked here, then its content is turned back into the JSON
    /// document's shape and held to exactly the same rules as a JSON document.
    ///
    /// Every problem names a path in the body (`$.fields.hilarious.arrayValue.values[3]
    /// .mapValue.fields.count`), since that is the text the operator has to fix.
    func firestoreProblems(in body: [UInt8]) -> [DocumentProblem] {
        if body.count > Self.maximumSize {
            return [DocumentProblem(.root, "larger than \(Self.maximumSize) bytes, too large for a rankings document",
                                    at: 0)]
        }
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(body)
        } catch {
            return [DocumentProblem(.root, "invalid JSON: \(error.reason) at " + TextPosition.describe(error.offset, in: body), at: error.offset)]
        }
        var conversion = FirestoreBody()
        conversion.log.add(DuplicateKeys.problems(in: parsed))
        if let document = conversion.document(from: parsed) {
            for problem in contentProblems(in: document) where !conversion.alreadyReported(problem.path) {
                if problem.unavailableZone != nil {
                    conversion.log.add([problem])
                    continue
                }
                conversion.log.add(FirestoreBody.bodyPath(problem.path), FirestoreBody.bodyPaths(in: problem.message),
                                   at: problem.offset)
            }
        }
        return conversion.log.inDocumentOrder
    }
}

/// Turns a Firestore `Document` body back into the rankings document it carries, reporting
/// what Firestore (or the app reading it) would not accept about its typing.
///
/// Each field must have the Firestore type the app's decoder reads: a Timestamp for
/// `computed_at`, an integer for a count. A value whose typing is wrong is reported here once,
/// and the content check is then silent about that path and everything under it.
struct FirestoreBody {
    /// Problems with the body's Firestore typing, by body path; the content's own problems are
    /// added by `DocumentChecker.firestoreProblems`, which also decides about extra keys.
    var log = ProblemLog()
    /// Document paths (not body paths) this conversion already reported.
    private var reported: [JSONPath] = []

    /// Firestore's value types, as the keys of a REST `Value`.
    static let valueTypes = ["nullValue", "booleanValue", "integerValue", "doubleValue", "timestampValue",
                             "stringValue", "bytesValue", "referenceValue", "geoPointValue", "arrayValue", "mapValue"]

    /// A `Document` also carries these when read back from Firestore; a write may send `name`.
    static let documentKeys = ["name", "fields", "createTime", "updateTime"]

    /// The type each field of the rankings document must have; absent for keys the app does not
    /// decode (accepted only with --allow-extra-keys, whatever their type).
    static func expectedType(at path: JSONPath) -> String? {
        let steps = path.steps
        guard case .member(let top)? = steps.first else { return nil }
        let name = String(decoding: top, as: UTF8.self)
        let isList = name == "hilarious" || name == "horrible"
        switch steps.count {
        case 1:
            switch name {
            case "week_id": return "stringValue"
            case "hilarious", "horrible": return "arrayValue"
            case "total_hilarious_ratings", "total_horrible_ratings": return "integerValue"
            case "computed_at", "week_start", "week_end", "snapshot_read_time": return "timestampValue"
            default: return nil
            }
        case 2:
            guard isList, case .element = steps[1] else { return nil }
            return "mapValue"
        case 3:
            guard isList, case .element = steps[1], case .member(let key) = steps[2] else { return nil }
            switch String(decoding: key, as: UTF8.self) {
            case "joke_id": return "stringValue"
            case "count", "rank": return "integerValue"
            default: return nil
            }
        default:
            return nil
        }
    }

    /// A path of the rankings document as the corresponding path of the body.
    static func bodyPath(_ path: JSONPath) -> JSONPath {
        var body = JSONPath.root
        for (i, step) in path.steps.enumerated() {
            switch step {
            case .member(let key): body = i == 0 ? body.member("fields").member(key)
                : body.member("mapValue").member("fields").member(key)
            case .element(let index): body = body.member("arrayValue").member("values").element(index)
            }
        }
        return body
    }

    /// A message that names another field (a total's list) names it as the body does.
    static func bodyPaths(in message: String) -> String {
        var text = message
        for list in ["hilarious", "horrible"] {
            let path = JSONPath.root.member(list)
            text = replacingAll("in \(path) (", with: "in \(bodyPath(path)) (", in: text)
        }
        return text
    }

    /// Byte-wise, because `String.replacing` would link the whole regex engine (over 1 MB) into
    /// the shipped binary for this one message.
    static func replacingAll(_ old: String, with new: String, in text: String) -> String {
        let bytes = Array(text.utf8), pattern = Array(old.utf8), replacement = Array(new.utf8)
        guard !pattern.isEmpty else { return text }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes.count - i >= pattern.count && bytes[i..<(i + pattern.count)].elementsEqual(pattern) {
                out += replacement
                i += pattern.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func alreadyReported(_ path: JSONPath) -> Bool {
        reported.contains { path.steps.starts(with: $0.steps) }
    }

    private mutating func report(_ path: JSONPath, _ message: String, at offset: Int) {
        reported.append(path)
        log.add(Self.bodyPath(path), message, at: offset)
    }

    /// The document inside `body`, or nil when there is none to check (the problem is logged).
    mutating func document(from body: JSONValue) -> JSONValue? {
        guard case .object(let members) = body.kind else {
            log.add(.root, "expected a Firestore Document object, {\"fields\": {...}}, found \(body.summary)",
                    at: body.offset)
            return nil
        }
        var fields: JSONValue?
        for member in members {
            if member.key == Array("fields".utf8) {
                fields = member.value
            } else if !Self.documentKeys.contains(where: { Array($0.utf8) == member.key }) {
                log.add(JSONPath.root.member(member.key), "unknown key (a Document has only name, fields, createTime and updateTime)",
                        at: member.keyOffset)
            }
        }
        guard let fields else {
            let plain = members.contains { $0.key == Array("week_id".utf8) }
            log.add(JSONPath.root.member("fields"), plain ? "missing (this looks like a JSON rankings document: check it without --format firestore)" : "missing",
                    at: body.end - 1)
            return nil
        }
        guard case .object(let fieldMembers) = fields.kind else {
            log.add(JSONPath.root.member("fields"), "expected an object of fields, found \(fields.summary)", at: fields.offset)
            return nil
        }
        return map(fieldMembers, in: fields, path: .root)
    }

    /// A `fields` object as a JSON object of converted values; a member whose value cannot be
    /// converted is left out (and was reported).
    private mutating func map(_ members: [JSONMember], in object: JSONValue, path: JSONPath) -> JSONValue {
        var converted: [JSONMember] = []
        for member in members {
            if let value = value(member.value, path: path.member(member.key)) {
                converted.append(JSONMember(key: member.key, keyOffset: member.keyOffset, value: value))
            }
        }
        return JSONValue(.object(converted), offset: object.offset, end: object.end)
    }

    /// One Firestore `Value` (`{"integerValue": "5"}`) as the JSON value it stands for.
    private mutating func value(_ wrapper: JSONValue, path: JSONPath) -> JSONValue? {
        let expected = Self.expectedType(at: path)
        guard case .object(let members) = wrapper.kind else {
            report(path, "expected a Firestore value like {\"\(expected ?? "stringValue")\": ...}, found \(wrapper.summary)",
                   at: wrapper.offset)
            return nil
        }
        let typed = members.filter { m in Self.valueTypes.contains { Array($0.utf8) == m.key } }
        for member in members where !typed.contains(member) {
            report(path, "unknown key \(JSONValue.quoted(member.key)) in a Firestore value", at: member.keyOffset)
        }
        guard typed.count == 1, let only = typed.first else {
            let found = typed.isEmpty ? "none" : typed.map { String(decoding: $0.key, as: UTF8.self) }.joined(separator: " and ")
            report(path, "expected exactly one value type (\(expected ?? "stringValue, integerValue, …")), found \(found)",
                   at: wrapper.offset)
            return nil
        }
        if alreadyReported(path) { return nil }
        let type = String(decoding: only.key, as: UTF8.self)
        if let expected, type != expected {
            report(path, "expected \(expected), found \(type)", at: only.keyOffset)
            return nil
        }
        return content(of: type, only.value, path: path)
    }

    static let proto3TimestampRule = "upper-case T and Z, at most 9 fraction digits, seconds 00 to 59, years 0001 to 9999"

    /// proto3 JSON's Timestamp, which Firestore (and Google's own `Document.from_json`) parses,
    /// is narrower than the RFC 3339 the content rules hold a JSON document to: a time RFC 3339
    /// allows but Firestore refuses would pass the check and fail the upload. Text that is not
    /// RFC 3339 at all is left to the content rules, which say so.
    static func readableByFirestore(timestamp text: [UInt8]) -> Bool {
        guard Timestamp.parseRFC3339(text) != nil, text.count >= 20 else { return true }
        let digits = text[20...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        let fraction = text[19] == UInt8(ascii: ".") ? digits.count : 0
        return text[10] == UInt8(ascii: "T") && text.last != UInt8(ascii: "z") && !text[17..<19].elementsEqual("60".utf8)
            && !text[0..<4].elementsEqual("0000".utf8) && fraction <= 9
    }

    private mutating func content(of type: String, _ inner: JSONValue, path: JSONPath) -> JSONValue? {
        switch (type, inner.kind) {
        case ("timestampValue", .string(let text)) where !Self.readableByFirestore(timestamp: text):
            report(path, "timestampValue must be written as Firestore reads it: " + Self.proto3TimestampRule
                   + ", found \(inner.summary)", at: inner.offset)
            return nil
        case ("stringValue", .string), ("timestampValue", .string), ("referenceValue", .string),
             ("bytesValue", .string), ("booleanValue", .bool), ("nullValue", .null), ("doubleValue", .number),
             ("doubleValue", .string):
            return inner
        case ("nullValue", .string(let text)) where text == Array("NULL_VALUE".utf8):
            return JSONValue(.null, offset: inner.offset, end: inner.end)
        case ("integerValue", .string(let text)), ("integerValue", .number(let text)):
            // proto3 JSON writes an int64 as a decimal string and reads a plain number too.
            let digits = text.first == UInt8(ascii: "-") ? text.dropFirst() : text[...]
            guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                report(path, "integerValue must be a decimal integer like \"5\", found \(inner.summary)", at: inner.offset)
                return nil
            }
            return JSONValue(.number(text), offset: inner.offset, end: inner.end)
        case ("arrayValue", .object(let members)):
            var elements: [JSONValue] = []
            for member in members {
                guard member.key == Array("values".utf8) else {
                    report(path, "unknown key \(JSONValue.quoted(member.key)) in an arrayValue (only \"values\")",
                           at: member.keyOffset)
                    return nil
                }
                guard case .array(let values) = member.value.kind else {
                    report(path, "arrayValue.values must be an array, found \(member.value.summary)", at: member.value.offset)
                    return nil
                }
                elements = []
                for (index, element) in values.enumerated() {
                    elements.append(value(element, path: path.element(index))
                        ?? JSONValue(.null, offset: element.offset, end: element.end))
                }
            }
            return JSONValue(.array(elements), offset: inner.offset, end: inner.end)
        case ("mapValue", .object(let members)):
            var fields: (members: [JSONMember], object: JSONValue)?
            for member in members {
                guard member.key == Array("fields".utf8) else {
                    report(path, "unknown key \(JSONValue.quoted(member.key)) in a mapValue (only \"fields\")",
                           at: member.keyOffset)
                    return nil
                }
                guard case .object(let fieldMembers) = member.value.kind else {
                    report(path, "mapValue.fields must be an object, found \(member.value.summary)", at: member.value.offset)
                    return nil
                }
                fields = (fieldMembers, member.value)
            }
            return map(fields?.members ?? [], in: fields?.object ?? inner, path: path)
        case ("geoPointValue", .object):
            return inner
        default:
            report(path, "\(type) cannot hold \(inner.summary)", at: inner.offset)
            return nil
        }
    }
}
