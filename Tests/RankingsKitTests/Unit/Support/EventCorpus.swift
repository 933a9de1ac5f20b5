import Foundation
@testable import RankingsKit

/// Seeded NDJSON inputs whose every line's fate is known as it is built: a vote for a joke,
/// a bad line of a known kind, or a blank line.
struct EventCorpus {
    enum Expected: Equatable {
        case vote(id: [UInt8], rating: Double)
        /// `"malformed JSON: "` or `"invalid record: "`.
        case bad(prefix: String)
        case blank
    }

    var bytes: [UInt8] = []
    /// One entry per line, in order; line n of the file is `lines[n - 1]`.
    var lines: [Expected] = []
    /// Offset of every `\n` in `bytes`.
    var newlineOffsets: [Int] = []

    struct Options {
        var lineCount = 3000
        var bom = true
        var finalNewline = false
        /// Sizes of long valid lines, placed evenly through the file.
        var longLines: [Int] = []
        /// Sizes of long bad lines (an invalid UTF-8 byte at the end of a long string).
        var longBadLines: [Int] = []
        /// Lengths of medium lines sprinkled in (one in `mediumEvery`), to exceed tiny chunks.
        var mediumLine = 0
        var mediumEvery = 0
        /// One line in `badEvery` is bad, one in `blankEvery` blank.
        var badEvery = 17
        var blankEvery = 23
        var crlfEvery = 4
    }

    /// Joke ids as JSON string content, and the bytes they stand for.
    struct GenID { var json: [UInt8]; var bytes: [UInt8] }

    static func ids(_ rng: inout SplitMix64) -> [GenID] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var ids: [GenID] = (0..<120).map { _ in
            let id = (0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] }
            return GenID(json: id, bytes: id)
        }
        let special: [(String, [UInt8])] = [
            (#"\u00e9"#, [0xC3, 0xA9]), ("é", [0xC3, 0xA9]), ("e\u{301}", [0x65, 0xCC, 0x81]),
            (#"\ud83d\ude00"#, [0xF0, 0x9F, 0x98, 0x80]), ("😀", [0xF0, 0x9F, 0x98, 0x80]),
            (#"a\"b"#, Array("a\"b".utf8)), (#"x\\y"#, Array("x\\y".utf8)), (#"tab\there"#, Array("tab\there".utf8)),
            (#"\u2028"#, [0xE2, 0x80, 0xA8]), (#"\u0000z"#, [0x00, 0x7A]), (#"sl\/ash"#, Array("sl/ash".utf8)),
        ]
        ids += special.map { GenID(json: Array($0.0.utf8), bytes: $0.1) }
        return ids
    }

    static let ratings: [(String, Double)] = [
        ("5", 5), ("1", 1), ("5", 5), ("1", 1), ("4", 4), ("2", 2), ("3", 3), ("5.0", 5),
        ("4.99999999999999999999", 5), ("1e0", 1), ("2.5", 2.5), ("0.99999999999999999999", 1), ("4.5", 4.5),
    ]

    /// JSON string content with escapes and multi-byte characters, `count` bytes or a little more.
    static func pad(_ count: Int) -> [UInt8] {
        let unit = Array(#"lorem ipsum é😀 \"q\" \\ \u0041 \ud800 / "#.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count + unit.count)
        while out.count < count { out += unit }
        return out
    }

    static func validLine(_ id: GenID, _ rating: String, template: Int) -> [UInt8] {
        let j = id.json, r = Array(rating.utf8)
        func t(_ s: String) -> [UInt8] { Array(s.utf8) }
        switch template % 5 {
        case 0: return t(#"{"joke_id":""#) + j + t(#"","rating":"#) + r + t("}")
        case 1: return t(#"{"id":"D_"#) + j + t(#"","joke_id":""#) + j + t(#"","rating":"#) + r
            + t(#","device_id":"DA306888-8708-4202-B720-67AE0B7A78CE","week_id":"2025-W37","timestamp":{"_seconds":1757881625,"_nanoseconds":643273000}}"#)
        case 2: return t("{ \"rating\" :\t") + r + t(" , \"joke_id\" : \"") + j + t("\" }")
        case 3: return t(#"{"joke_id":"decoy","meta":{"joke_id":"nested","rating":1},"joke_id":""#) + j
            + t(#"","rating":1,"rating":"#) + r + t("}")
        default: return t(#"{"joke\u005fid":""#) + j + t(#"","rating":"#) + r + t(#","extra":[1,2,{"a":null}],"s":"\ud800 ok"}"#)
        }
    }

    static func badLine(_ id: GenID, kind: Int) -> (bytes: [UInt8], prefix: String) {
        let j = id.json
        func t(_ s: String) -> [UInt8] { Array(s.utf8) }
        let malformed = "malformed JSON: ", invalid = "invalid record: "
        switch kind % 14 {
        case 0: return (t(#"{"joke_id":""#) + j + t(#"","rating":5,}"#), malformed)
        case 1: return (t(#"[{"joke_id":""#) + j + t(#"","rating":5}]"#), invalid)
        case 2: return (t(#"{"rating":5}"#), invalid)
        case 3: return (t(#"{"joke_id":""#) + j + t(#"","rating":6}"#), invalid)
        case 4: return (t(#"{"joke_id":""#) + j + t(#"","rating":"5"}"#), invalid)
        case 5: return (t(#"{"joke_id":"","rating":5}"#), invalid)
        case 6: return (t(#"{"joke_id":"\ud800","rating":5}"#), invalid)
        case 7: return (t(#"{"joke_id":""#) + j + t(#"","rating":5,"x":""#) + [0xC0, 0x80] + t(#""}"#), malformed)
        case 8: return (t(#"{"joke_id":""#) + j + t(#"","rating":05}"#), malformed)
        case 9: return (t(#"{"joke_id":""#) + j + t(#"","ra"#), malformed)
        case 10: return ([0xEF, 0xBB, 0xBF] + t(#"{"joke_id":""#) + j + t(#"","rating":5}"#), malformed)
        case 11: return (t(#"{"joke_id":""#) + j + t(#"","rating":5}{}"#), malformed)
        case 12: return (t(#"{"joke_id":""#) + j + t(#"","rating":5,"x":"a"#) + [0x01] + t(#""}"#), malformed)
        default: return (t(#"{"joke_id":5,"rating":5}"#), invalid)
        }
    }

    init(seed: UInt64, _ options: Options = Options()) {
        var rng = SplitMix64(seed: seed)
        let ids = Self.ids(&rng)
        if options.bom { bytes = [0xEF, 0xBB, 0xBF] }
        var longValid = options.longLines.makeIterator()
        var longBad = options.longBadLines.makeIterator()
        let longCount = options.longLines.count + options.longBadLines.count
        let longEvery = longCount == 0 ? Int.max : max(2, options.lineCount / (longCount + 1))
        var badKind = 0
        for number in 1...options.lineCount {
            let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
            var line: [UInt8]
            // Line 1 is always a vote, so a mishandled BOM shows up as a bad line 1.
            if number > 1 && number % longEvery == 0, let size = longValid.next() {
                let (text, value) = Self.ratings[Int.random(in: 0..<Self.ratings.count, using: &rng)]
                let head = Array(#"{"joke_id":""#.utf8) + id.json + Array(#"","pad":""#.utf8)
                line = head + Self.pad(size) + Array(#"","rating":"#.utf8) + Array(text.utf8) + [UInt8(ascii: "}")]
                lines.append(.vote(id: id.bytes, rating: value))
            } else if number > 1 && number % longEvery == 0, let size = longBad.next() {
                line = Array(#"{"joke_id":""#.utf8) + id.json + Array(#"","pad":""#.utf8) + Self.pad(size)
                    + [0xED, 0xA0, 0x80] + Array(#"","rating":5}"#.utf8)
                lines.append(.bad(prefix: "malformed JSON: "))
            } else if number > 1 && Int.random(in: 0..<options.badEvery, using: &rng) == 0 {
                let bad = Self.badLine(id, kind: badKind)
                badKind += 1
                line = bad.bytes
                lines.append(.bad(prefix: bad.prefix))
            } else if number > 1 && Int.random(in: 0..<options.blankEvery, using: &rng) == 0 {
                line = [[], [0x20, 0x20], [0x09, 0x20, 0x09]][Int.random(in: 0..<3, using: &rng)]
                lines.append(.blank)
            } else {
                let (text, value) = Self.ratings[Int.random(in: 0..<Self.ratings.count, using: &rng)]
                line = Self.validLine(id, text, template: Int.random(in: 0..<5, using: &rng))
                if options.mediumEvery > 0 && Int.random(in: 0..<options.mediumEvery, using: &rng) == 0 {
                    // Same vote, with a long ignored field in front.
                    line = Array(#"{"pad":""#.utf8) + Self.pad(Int.random(in: options.mediumLine / 2...options.mediumLine, using: &rng))
                        + Array(#"","#.utf8) + line.dropFirst()
                }
                lines.append(.vote(id: id.bytes, rating: value))
            }
            bytes += line
            if number < options.lineCount || options.finalNewline {
                if Int.random(in: 0..<options.crlfEvery, using: &rng) == 0 { bytes.append(0x0D) }
                newlineOffsets.append(bytes.count)
                bytes.append(0x0A)
            }
        }
    }

    /// Joke counts a correct run must find.
    var expectedCounts: [[UInt8]: JokeCounts] {
        var counts: [[UInt8]: JokeCounts] = [:]
        for case .vote(let id, let rating) in lines { counts[id, default: JokeCounts()].add(rating) }
        return counts
    }

    /// (line number, reason prefix) of every bad line.
    var expectedBadLines: [(line: Int, prefix: String)] {
        lines.enumerated().compactMap { index, expected in
            if case .bad(let prefix) = expected { return (index + 1, prefix) }
            return nil
        }
    }
}

/// Everything observable about an `AggregationResult`, comparable with `==`.
struct AggregationSummary: Equatable, CustomStringConvertible {
    struct Joke: Equatable { var id: [UInt8]; var counts: JokeCounts }
    struct Bad: Equatable { var path: String; var line: Int; var reason: String }

    var rankings: Rankings
    var jokes: [Joke]
    var totals: JokeCounts
    var badLineCount: Int
    var firstBadLines: [Bad]
    /// Every bad line kept, as `--report` lists it (path, number, reason, document, joke, kind).
    var refused: [String]

    init(_ result: AggregationResult) {
        rankings = Rankings(result.tally, top: 1000)
        jokes = result.tally.sortedJokes().map { Joke(id: $0.id, counts: $0.counts) }
        totals = result.tally.totals
        badLineCount = result.badLineCount
        firstBadLines = result.firstBadLines.map { Bad(path: $0.path, line: $0.line.line, reason: $0.line.reason) }
        refused = result.refused.map { r in
            let record = r.record
            return "\(r.path):\(r.line) \(r.reason.message) \(record.document ?? []) \(record.jokeID ?? []) \(String(describing: record.kind))"
        }
    }

    /// The same summary with bad-line paths renamed (for comparing runs over differently named files).
    func renamingPaths(_ rename: [String: String]) -> AggregationSummary {
        var copy = self
        copy.firstBadLines = firstBadLines.map { Bad(path: rename[$0.path] ?? $0.path, line: $0.line, reason: $0.reason) }
        copy.refused = refused.map { entry in
            rename.reduce(entry) { text, pair in text.hasPrefix(pair.key + ":") ? pair.value + text.dropFirst(pair.key.count) : text }
        }
        return copy
    }

    var description: String {
        "\(jokes.count) jokes, totals h\(totals.hilarious)/b\(totals.horrible)/n\(totals.neutral), "
            + "\(badLineCount) bad lines, first: \(firstBadLines.map { "\($0.path.split(separator: "/").last ?? ""):\($0.line) \($0.reason)" })"
    }

    /// The first difference from `other`, for a readable failure message.
    func difference(from other: AggregationSummary) -> String? {
        if self == other { return nil }
        if badLineCount != other.badLineCount { return "bad line count \(badLineCount) vs \(other.badLineCount)" }
        if firstBadLines != other.firstBadLines { return "first bad lines \(firstBadLines.map { "\($0.line) \($0.reason)" }) vs \(other.firstBadLines.map { "\($0.line) \($0.reason)" })" }
        if refused != other.refused {
            let i = Array(zip(refused, other.refused)).firstIndex { $0 != $1 } ?? min(refused.count, other.refused.count)
            return "refused line \(i) of \(refused.count) vs \(other.refused.count): "
                + "\(i < refused.count ? refused[i] : "none") vs \(i < other.refused.count ? other.refused[i] : "none")"
        }
        if totals != other.totals { return "totals \(totals) vs \(other.totals)" }
        if jokes.count != other.jokes.count { return "joke count \(jokes.count) vs \(other.jokes.count)" }
        if let i = Array(zip(jokes, other.jokes)).firstIndex(where: { $0 != $1 }) { return "joke \(i): \(jokes[i]) vs \(other.jokes[i])" }
        return "rankings differ"
    }
}
