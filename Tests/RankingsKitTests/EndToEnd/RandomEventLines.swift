/// Random NDJSON lines whose classification is known *by construction*, for the differential test.
///
/// Each line is built as either a valid event (and we know its id bytes and kind), a valid JSON text
/// that breaks a record rule (invalid record), or an otherwise-good line with exactly one syntax
/// defect injected (malformed). Knowing the answer up front lets the test check the reference too,
/// instead of trusting one oracle blindly.
struct RandomEventLines {
    typealias Outcome = ReferenceAggregator.Outcome

    struct Line {
        var bytes: [UInt8]
        var expected: Outcome
    }

    private var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    /// Ids chosen to trip byte-versus-String mistakes: canonically equivalent pairs, case pairs,
    /// characters that must be escaped on output, astral scalars, U+2028/9 and DEL.
    static let idPool: [String] = [
        "j1", "j2", "j3", "joke-42", "A", "a", "B", "b", "aa", "ab",
        "\u{E9}", "e\u{301}", "\u{1F602}", "\u{65E5}\u{672C}", "quote\"d", "back\\slash", "slash/",
        "new\nline", "tab\there", "\u{1}ctl", "\u{1F}", "ls\u{2028}ps\u{2029}", "del\u{7F}",
        " spaced ", "\u{3A9}mega", "\u{10FFFF}", "\u{DF}", "\u{FB01}", "I", "\u{131}",
        "cr\rlf", "\u{8}\u{C}", "null", "5", "{\"joke_id\":1}",
    ]

    static let hilariousRatings = ["4", "5", "4.0", "5.0", "5e0", "0.5e1", "4.5", "4.75", "40e-1", "5E0",
                                   "4.000", "0.4E+1", "4.9999999", "5.0000000000000000001", "500e-2"]
    static let horribleRatings = ["1", "2", "1.0", "2.0", "1e0", "1.5", "0.2e1", "20E-1", "1.999", "10e-1",
                                  "2E0", "1.00", "0.99999999999999999999", "1E+0", "2.0e-0"]
    static let neutralRatings = ["3", "2.5", "3.5", "3.0", "2.0001", "3.99999", "30e-1", "0.3e1", "2.75"]
    /// Valid JSON that is not an acceptable rating.
    static let unacceptableRatings = ["\"5\"", "\"4.0\"", "null", "true", "false", "[5]", "{\"rating\": 5}",
                                      "0", "0.99", "5.0001", "6", "-3", "-0", "-4", "1e400", "1e-400", "0.0",
                                      "5.5", "100", "-1e400"]
    /// Not JSON numbers at all, in the rating position.
    static let malformedRatings = ["NaN", "Infinity", "-Infinity", "05", "+5", ".5", "5.", "5e", "1.e1",
                                   "0x5", "4_0", "--4", "4e+", "five", "'5'", "00", "-", "5 5"]
    static let unacceptableIDs = ["\"\"", "5", "null", "true", "{\"joke_id\": \"a\"}", "[\"a\"]",
                                  "\"\\ud800\"", "\"a\\udc00b\"", "\"\\ud83dx\"", "\"\\ude02\\ud83d\"",
                                  "\"\\uD83D\\u0041\""]

    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &rng)! }

    /// One line; `mayStartWithBOM` is false for a file's first line, where a BOM would be skipped.
    mutating func line(mayStartWithBOM: Bool) -> Line {
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.66 { return validEvent() }
        if roll < 0.80 { return Line(bytes: invalidRecord(), expected: .invalidRecord) }
        if roll < 0.95 { return Line(bytes: malformed(mayStartWithBOM: mayStartWithBOM), expected: .malformed) }
        return Line(bytes: Array(pick(["", " ", "\t", "  \t ", " \r", "\t\r\t"]).utf8), expected: .blank)
    }

    // MARK: - Lines by kind

    mutating func validEvent() -> Line {
        let id = pick(Self.idPool)
        let kind = pick([ReferenceAggregator.Kind.hilarious, .horrible, .neutral])
        let ratings = kind == .hilarious ? Self.hilariousRatings : kind == .horrible ? Self.horribleRatings : Self.neutralRatings
        var members = withExtras([member("joke_id", string(id)), member("rating", Array(pick(ratings).utf8))],
                                 tagged: ["joke_id", "rating"])
        // An earlier duplicate of either key, with any value at all, must lose to the later one.
        if chance(0.15) {
            let key = pick(["joke_id", "rating"])
            let finalIndex = members.firstIndex { $0.tag == key }!
            let junk = chance(0.5) ? randomValue(depth: 0) : Array(pick(Self.unacceptableRatings + Self.unacceptableIDs).utf8)
            members.insert((nil, member(key, junk)), at: Int.random(in: 0...finalIndex, using: &rng))
        }
        return Line(bytes: object(members.map(\.bytes)), expected: .event(id: Array(id.utf8), kind: kind))
    }

    mutating func invalidRecord() -> [UInt8] {
        let id = string(pick(Self.idPool))
        let rating = Array(pick(Self.hilariousRatings + Self.neutralRatings).utf8)
        switch Int.random(in: 0..<7, using: &rng) {
        case 0:  // not an object
            let inner = object([member("joke_id", id), member("rating", rating)])
            return ws() + pick([Array("[".utf8) + inner + Array("]".utf8), Array("\"str\"".utf8),
                                Array("5".utf8), Array("null".utf8), Array("true".utf8), Array("[]".utf8)]) + ws()
        case 1: return object(withExtras([member("rating", rating)]))
        case 2: return object(withExtras([member("joke_id", id)]))
        case 3: return object(withExtras([member("joke_id", Array(pick(Self.unacceptableIDs).utf8)), member("rating", rating)]))
        case 4: return object(withExtras([member("joke_id", id), member("rating", Array(pick(Self.unacceptableRatings).utf8))]))
        case 5:  // a good value overridden by a later bad one
            if chance(0.5) {
                return object([member("joke_id", id), member("rating", rating),
                               member("rating", Array(pick(Self.unacceptableRatings).utf8))])
            }
            return object([member("joke_id", id), member("rating", rating),
                           member("joke_id", Array(pick(Self.unacceptableIDs).utf8))])
        default:  // near-miss keys are just other fields
            let near = pick(["Joke_id", "joke_id ", "jokeid", "JOKE_ID", "joke-id"])
            return object([rawMember(Array("\"\(near)\"".utf8), id), member("rating", rating)])
        }
    }

    mutating func malformed(mayStartWithBOM: Bool) -> [UInt8] {
        let good = [member("joke_id", string(pick(Self.idPool))), member("rating", Array(pick(Self.hilariousRatings).utf8))]
        let kinds = mayStartWithBOM ? 16 : 15
        switch Int.random(in: 0..<kinds, using: &rng) {
        case 0: return Array("{".utf8) + joined(good) + Array(",".utf8) + ws() + Array("}".utf8)
        case 1: return object([good[0], member("rating", Array(pick(Self.malformedRatings).utf8))])
        case 2:  // raw control character inside a string we would otherwise ignore
            let control = pick(Array(UInt8(0x00)...0x1F).filter { $0 != 0x0A })  // a raw \n would end the line
            return object(good + [member("note", Array("\"x".utf8) + [control] + Array("y\"".utf8))])
        case 3:
            let control = pick([UInt8(0x00), 0x1F, 0x0D, 0x0B, 0x09])
            return object([member("joke_id", [UInt8(ascii: "\"")] + Array("id".utf8) + [control] + [UInt8(ascii: "\"")]), good[1]])
        case 4:
            let escape = pick(["\\x41", "\\a", "\\u12G4", "\\U0041", "\\'", "\\ ", "\\u00e", "\\0"])
            return object(good + [member("note", Array("\"\(escape)\"".utf8))])
        case 5:
            let garbage = pick(["x", "}", "{}", ",", "// c", "\u{0}", "[]", "0", "\"\""])
            return object(good) + ws() + Array(garbage.utf8)
        case 6:  // invalid UTF-8 where the value is otherwise ignored
            let bad: [UInt8] = pick([[0xC3], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                                     [0xE2, 0x82], [0x80], [0xF8, 0x88, 0x80, 0x80, 0x80]])
            return object(good + [member("user", Array("\"u".utf8) + bad + Array("v\"".utf8))])
        case 7: return Array("{".utf8) + joined(good)  // never closed
        case 8:
            let key = Array("\"rating\"".utf8)
            return object([good[0], key + ws() + Array(pick(Self.hilariousRatings).utf8)])
        case 9: return Array("{".utf8) + good[0] + ws() + good[1] + Array("}".utf8)
        case 10: return object(good + [rawMember(Array(pick(["'note'", "note", "\"a\" \"b\""]).utf8), Array("1".utf8))])
        case 11:  // too deep: the top object is level 1, so 1500 arrays inside go far past 1000
            return object(good + [member("deep", Array(repeating: UInt8(ascii: "["), count: 1500)
                                                + Array(repeating: UInt8(ascii: "]"), count: 1500))])
        case 12: return object(good + [member("flag", Array(pick(["True", "NULL", "nul", "tru", "undefined"]).utf8))])
        case 13: return object(good + [member("tags", Array(pick(["[1, 2, ]", "[1 2]", "[,]", "{\"a\" 1}", "{\"a\":}"]).utf8))])
        case 14: return Array(pick(["{", "}", "\"unterminated", "[1", "{\"joke_id\": \"a\", \"rating\": 5", "-"]).utf8)
        default: return [0xEF, 0xBB, 0xBF] + object(good)
        }
    }

    // MARK: - JSON pieces

    mutating func ws() -> [UInt8] {
        chance(0.6) ? [] : Array(pick([" ", "\t", "  ", " \r ", "\r\t "]).utf8)
    }

    mutating func member(_ key: String, _ value: [UInt8]) -> [UInt8] { rawMember(string(key, escapeRate: 0.05), value) }

    mutating func rawMember(_ key: [UInt8], _ value: [UInt8]) -> [UInt8] {
        key + ws() + Array(":".utf8) + ws() + value
    }

    mutating func joined(_ members: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, m) in members.enumerated() {
            if i > 0 { out += ws() + Array(",".utf8) }
            out += ws() + m
        }
        return out + ws()
    }

    mutating func object(_ members: [[UInt8]]) -> [UInt8] {
        ws() + Array("{".utf8) + joined(members) + Array("}".utf8) + ws()
    }

    /// Up to three ignored fields, some of them decoys holding their own `joke_id` and `rating`,
    /// shuffled in among the real members.
    mutating func withExtras(_ members: [[UInt8]]) -> [[UInt8]] {
        withExtras(members, tagged: members.map { _ in nil }).map(\.bytes)
    }

    /// The same, keeping a tag on the real members so a caller can still find them after the shuffle.
    mutating func withExtras(_ members: [[UInt8]], tagged tags: [String?]) -> [(tag: String?, bytes: [UInt8])] {
        var all: [(tag: String?, bytes: [UInt8])] = Array(zip(tags, members))
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let key = pick(["user_id", "ts", "meta", "tags", "note", "source", "\u{E9}t\u{E9}", ""])
            let value = chance(0.3)
                ? object([member("joke_id", string(pick(Self.idPool))), member("rating", Array("1".utf8))])
                : randomValue(depth: 0)
            all.append((nil, member(key, value)))
        }
        all.shuffle(using: &rng)
        return all
    }

    mutating func randomValue(depth: Int) -> [UInt8] {
        let scalarKinds = depth > 3 ? 5 : 7
        switch Int.random(in: 0..<scalarKinds, using: &rng) {
        case 0: return string(pick(Self.idPool + ["", "plain text", "\u{0}nul"]))
        case 1: return Array(pick(["0", "-0", "12", "-7.25", "1e400", "6.02E+23", "-0.0e-0", "123456789012345678901234567890"]).utf8)
        case 2: return Array(pick(["true", "false", "null"]).utf8)
        case 3: return Array(pick(Self.unacceptableRatings + Self.hilariousRatings).utf8)
        case 4: return string(pick(Self.idPool), escapeRate: 0.5)
        case 5:
            let items = (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(depth: depth + 1) }
            var out = Array("[".utf8) + ws()
            for (i, item) in items.enumerated() { out += (i > 0 ? Array(",".utf8) + ws() : []) + item + ws() }
            return out + Array("]".utf8)
        default:
            let members = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                member(pick(["joke_id", "rating", "k", "joke_id"]), randomValue(depth: depth + 1))
            }
            return object(members)
        }
    }

    /// Writes `text` as a JSON string, escaping each scalar in one of its legal spellings at random.
    mutating func string(_ text: String, escapeRate: Double = 0.2) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let short: String? = switch v {
            case 0x22: "\\\""
            case 0x5C: "\\\\"
            case 0x2F: "\\/"
            case 0x08: "\\b"
            case 0x0C: "\\f"
            case 0x0A: "\\n"
            case 0x0D: "\\r"
            case 0x09: "\\t"
            default: nil
            }
            let mustEscape = v < 0x20 || v == 0x22 || v == 0x5C
            if mustEscape || chance(escapeRate) {
                if let short, chance(0.6) {
                    out += Array(short.utf8)
                } else {
                    out += unicodeEscape(v)
                }
            } else {
                out += Array(String(scalar).utf8)
            }
        }
        return out + [UInt8(ascii: "\"")]
    }

    mutating func unicodeEscape(_ v: UInt32) -> [UInt8] {
        let upper = chance(0.3)
        func hex(_ unit: UInt32) -> String {
            let digits = String(unit, radix: 16, uppercase: upper)
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }
        if v < 0x10000 { return Array(hex(v).utf8) }
        let offset = v - 0x10000
        return Array((hex(0xD800 + (offset >> 10)) + hex(0xDC00 + (offset & 0x3FF))).utf8)
    }
}
