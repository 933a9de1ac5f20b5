import RankingsKit
import Testing

/// Each check of `DocumentChecker` with a document that passes it and one that fails it, and the
/// exact problem lines the failure gives.
@Suite("Check: document rules")
struct DocumentCheckerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var valid: String
        var invalid: String
        var problems: [String]
        var top = 10
        var testDescription: String { name }
    }

    typealias Doc = CheckDocumentBuilder
    /// Where the byte after `text` is, as `check` reports it: line, column (in characters) and byte.
    static func endOf(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return "line \(lines.count), column \(lines.last!.unicodeScalars.count + 1) (byte \(text.utf8.count))"
    }

    static let base = Doc()
    static let list = Doc.list

    static let cases: [Case] = [
        Case(name: "an object", valid: base.json, invalid: "[]", problems: ["$: expected an object, found an array"]),
        Case(name: "JSON at all", valid: base.json, invalid: base.json + ",",
             problems: ["$: invalid JSON: expected the end of the document, found ',' at \(endOf(base.json))"]),
        Case(name: "week_id present", valid: base.json, invalid: base.without("week_id").json, problems: ["$.week_id: missing"]),
        Case(name: "week_id a string", valid: base.weekly.json, invalid: base.with("week_id", "7").json,
             problems: ["$.week_id: expected a non-empty string, found 7"]),
        Case(name: "week_id not empty", valid: base.json, invalid: base.with("week_id", "\"\"").json,
             problems: ["$.week_id: expected a non-empty string, found an empty string"]),
        Case(name: "hilarious an array", valid: base.with("hilarious", "[]").with("total_hilarious_ratings", "0").json,
             invalid: base.with("hilarious", "null").json, problems: ["$.hilarious: expected an array, found null"]),
        Case(name: "horrible present", valid: base.json, invalid: base.without("horrible").json, problems: ["$.horrible: missing"]),
        Case(name: "at most --top entries", valid: base.with("hilarious", list([("a", "3", "1")])).json, invalid: base.json,
             problems: ["$.hilarious: has 2 entries, more than --top 1"], top: 1),
        Case(name: "entries are objects", valid: base.json, invalid: base.with("horrible", "[[\"a\", 1, 1]]").json,
             problems: ["$.horrible[0]: expected an object, found an array"]),
        Case(name: "joke_id present", valid: base.json, invalid: base.with("horrible", "[{\"count\": 1, \"rank\": 1}]").json,
             problems: ["$.horrible[0].joke_id: missing"]),
        Case(name: "joke_id a non-empty string", valid: base.json, invalid: base.with("horrible", list([("", "1", "1")])).json,
             problems: ["$.horrible[0].joke_id: expected a non-empty string, found an empty string"]),
        Case(name: "count an integer", valid: base.json, invalid: base.with("horrible", list([("a", "1.0", "1")])).json,
             problems: ["$.horrible[0].count: expected an integer of at least 1, found 1.0"]),
        Case(name: "count without an exponent", valid: base.json, invalid: base.with("horrible", list([("a", "1e0", "1")])).json,
             problems: ["$.horrible[0].count: expected an integer of at least 1, found 1e0"]),
        Case(name: "count a number", valid: base.json, invalid: base.with("horrible", list([("a", "\"1\"", "1")])).json,
             problems: ["$.horrible[0].count: expected an integer of at least 1, found the string \"1\""]),
        Case(name: "count at least 1", valid: base.json, invalid: base.with("horrible", list([("a", "0", "1")])).with("total_horrible_ratings", "0").json,
             problems: ["$.horrible[0].count: expected an integer of at least 1, found 0"]),
        Case(name: "count fits in 64 bits", valid: base.with("horrible", list([("a", "9223372036854775807", "1")]))
                .with("total_horrible_ratings", "9223372036854775807").json,
             invalid: base.with("horrible", list([("a", "9223372036854775808", "1")])).json,
             problems: ["$.horrible[0].count: expected an integer of at least 1, found 9223372036854775808, which does not fit in 64 bits"]),
        Case(name: "rank an integer", valid: base.json, invalid: base.with("horrible", list([("a", "1", "true")])).json,
             problems: ["$.horrible[0].rank: expected an integer, found true"]),
        Case(name: "ranks 1, 2, 3 in order", valid: base.json, invalid: base.with("hilarious", list([("a", "3", "1"), ("b", "2", "3")])).json,
             problems: ["$.hilarious[1].rank: expected 2 (ranks run 1, 2, 3… down the list), found 3"]),
        Case(name: "counts do not increase", valid: base.json, invalid: base.with("hilarious", list([("a", "2", "1"), ("b", "3", "2")])).json,
             problems: ["$.hilarious[1].count: greater than the count before it (2); counts must not increase"]),
        Case(name: "ties in joke id byte order",
             valid: base.with("hilarious", list([("a", "2", "1"), ("b", "2", "2")])).with("total_hilarious_ratings", "4").json,
             invalid: base.with("hilarious", list([("b", "2", "1"), ("a", "2", "2")])).with("total_hilarious_ratings", "4").json,
             problems: ["$.hilarious[1].joke_id: tied with the entry before it, so it must come after that entry's joke_id in byte order"]),
        // `e` + U+0301 (65 CC 81) sorts before precomposed `é` (C3 A9) by bytes; Swift `String`
        // would call them equal and could not order them at all.
        Case(name: "ties compare bytes, not canonical equivalence",
             valid: base.with("hilarious", list([("e\u{301}", "2", "1"), ("\u{E9}", "2", "2")])).with("total_hilarious_ratings", "4").json,
             invalid: base.with("hilarious", list([("\u{E9}", "2", "1"), ("e\u{301}", "2", "2")])).with("total_hilarious_ratings", "4").json,
             problems: ["$.hilarious[1].joke_id: tied with the entry before it, so it must come after that entry's joke_id in byte order"]),
        Case(name: "no joke twice in one list",
             valid: base.with("horrible", list([("a", "1", "1")])).json,
             invalid: base.with("hilarious", list([("a", "3", "1"), ("b", "2", "2"), ("a", "1", "3")])).json,
             problems: ["$.hilarious[2].joke_id: same joke_id as $.hilarious[0]"]),
        Case(name: "total an integer", valid: base.json, invalid: base.with("total_horrible_ratings", "1.5").json,
             problems: ["$.total_horrible_ratings: expected an integer of at least 0, found 1.5"]),
        Case(name: "total present", valid: base.json, invalid: base.without("total_hilarious_ratings").json,
             problems: ["$.total_hilarious_ratings: missing"]),
        Case(name: "total at least its list's sum", valid: base.with("total_hilarious_ratings", "5").json,
             invalid: base.with("total_hilarious_ratings", "4").json,
             problems: ["$.total_hilarious_ratings: 4 is less than the sum of the counts in $.hilarious (5)"]),
        Case(name: "computed_at RFC 3339", valid: base.with("computed_at", "\"2026-02-18T00:00:00.5-05:00\"").json,
             invalid: base.with("computed_at", "\"2026-02-18T05:00:00\"").json,
             problems: ["$.computed_at: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found the string \"2026-02-18T05:00:00\""]),
        Case(name: "computed_at a real date", valid: base.json, invalid: base.with("computed_at", "\"2026-02-30T05:00:00Z\"").json,
             problems: ["$.computed_at: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found the string \"2026-02-30T05:00:00Z\""]),
        Case(name: "week_start RFC 3339", valid: base.weekly.json, invalid: base.weekly.with("week_start", "1770613200").json,
             problems: ["$.week_start: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found 1770613200"]),
        // Another document (all_time, monthly) may carry bounds, as before: both, in order.
        Case(name: "another document's bounds: start not after end",
             valid: base.bounds("2026-02-09T05:00:00Z", "2026-02-09T05:00:00Z").json,
             invalid: base.bounds("2026-02-09T05:00:00Z", "2026-02-09T04:59:59.999Z").json,
             problems: ["$.week_end: earlier than week_start"]),
        Case(name: "another document's bounds come in pairs", valid: base.json,
             invalid: base.with("week_start", "\"2026-02-09T05:00:00.000Z\"").json,
             problems: ["$.week_end: missing (week_start is present)"]),
        Case(name: "monthly needs no bounds", valid: base.with("week_id", "\"monthly\"").json,
             invalid: base.with("week_id", "\"monthly\"").with("week_end", "\"2026-02-16T04:59:59.999Z\"").json,
             problems: ["$.week_start: missing (week_end is present)"]),
        // A week's document (week_id YYYY-Www): what the older app decodes from weekly_rankings/{week_id}.
        Case(name: "a week's document has week_end", valid: base.weekly.json, invalid: base.weekly.without("week_end").json,
             problems: ["$.week_end: missing (a week's document, week_id 2026-W07, needs week_start and week_end)"]),
        Case(name: "a week's document has both bounds", valid: base.weekly.json,
             invalid: base.weekly.without("week_start").without("week_end").json,
             problems: ["$.week_start: missing (a week's document, week_id 2026-W07, needs week_start and week_end)",
                        "$.week_end: missing (a week's document, week_id 2026-W07, needs week_start and week_end)"]),
        Case(name: "a week's week_end a time", valid: base.weekly.json, invalid: base.weekly.with("week_end", "\"2026-02-15\"").json,
             problems: ["$.week_end: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found the string \"2026-02-15\""]),
        Case(name: "a week's week_end after week_start", valid: base.weekly.json,
             invalid: base.weekly.with("week_end", "\"2026-02-09T05:00:00.000Z\"").json,
             problems: ["$.week_end: not after week_start",
                        "$.week_end: not the end of 2026-W07 on America/New_York's clocks: 2026-02-16T04:59:59.999Z "
                            + "(Sunday 23:59:59.999), or up to 2026-02-16T05:00:00.000Z (the next Monday 00:00)"]),
        Case(name: "week_start is the week's Monday 00:00 in New York",
             valid: base.weekly.with("week_start", "\"2026-02-09T00:00:00-05:00\"").json,
             invalid: base.weekly.with("week_start", "\"2026-02-09T00:00:00.000Z\"").json,
             problems: ["$.week_start: not the start of 2026-W07 on America/New_York's clocks: 2026-02-09T05:00:00.000Z (Monday 00:00)"]),
        Case(name: "week_start is the week's own Monday", valid: base.weekly.json,
             invalid: base.weekly.with("week_start", "\"2026-02-02T05:00:00.000Z\"").json,
             problems: ["$.week_start: not the start of 2026-W07 on America/New_York's clocks: 2026-02-09T05:00:00.000Z (Monday 00:00)"]),
        Case(name: "week_end no later than the next Monday 00:00",
             valid: base.weekly.with("week_end", "\"2026-02-16T05:00:00Z\"").json,
             invalid: base.weekly.with("week_end", "\"2026-02-16T05:00:00.000000001Z\"").json,
             problems: ["$.week_end: not the end of 2026-W07 on America/New_York's clocks: 2026-02-16T04:59:59.999Z "
                            + "(Sunday 23:59:59.999), or up to 2026-02-16T05:00:00.000Z (the next Monday 00:00)"]),
        Case(name: "week_end within Sunday's last second",
             valid: base.weekly.with("week_end", "\"2026-02-15T23:59:59-05:00\"").json,
             invalid: base.weekly.with("week_end", "\"2026-02-16T04:59:58.999999999Z\"").json,
             problems: ["$.week_end: not the end of 2026-W07 on America/New_York's clocks: 2026-02-16T04:59:59.999Z "
                            + "(Sunday 23:59:59.999), or up to 2026-02-16T05:00:00.000Z (the next Monday 00:00)"]),
        Case(name: "week_end keeps more digits", valid: base.weekly.with("week_end", "\"2026-02-16T04:59:59.999999Z\"").json,
             invalid: base.weekly.with("week_end", "\"2026-02-23T04:59:59.999Z\"").json,
             problems: ["$.week_end: not the end of 2026-W07 on America/New_York's clocks: 2026-02-16T04:59:59.999Z "
                            + "(Sunday 23:59:59.999), or up to 2026-02-16T05:00:00.000Z (the next Monday 00:00)"]),
        Case(name: "week 53 of a year that has it",
             valid: base.with("week_id", "\"2026-W53\"").bounds("2026-12-28T05:00:00.000Z", "2027-01-04T04:59:59.999Z").json,
             invalid: base.with("week_id", "\"2025-W53\"").bounds("2025-12-29T05:00:00.000Z", "2026-01-05T04:59:59.999Z").json,
             problems: ["$.week_id: 2025-W53 is not an ISO week: 2025 has weeks 01 to 52"]),
        Case(name: "no week 54", valid: base.weekly.json,
             invalid: base.with("week_id", "\"2026-W54\"").bounds("2027-01-04T05:00:00.000Z", "2027-01-11T04:59:59.999Z").json,
             problems: ["$.week_id: 2026-W54 is not an ISO week: 2026 has weeks 01 to 53"]),
        Case(name: "no week 00", valid: base.weekly.json, invalid: base.with("week_id", "\"2026-W00\"").json,
             problems: ["$.week_id: 2026-W00 is not an ISO week: 2026 has weeks 01 to 53",
                        "$.week_start: missing (a week's document, week_id 2026-W00, needs week_start and week_end)",
                        "$.week_end: missing (a week's document, week_id 2026-W00, needs week_start and week_end)"]),
        // Only the exact form names a week: any other id is another document, as before.
        Case(name: "the week form is exact", valid: base.with("week_id", "\"2026-w07\"").json,
             invalid: base.with("week_id", "\"2026-W07\"").json,
             problems: ["$.week_start: missing (a week's document, week_id 2026-W07, needs week_start and week_end)",
                        "$.week_end: missing (a week's document, week_id 2026-W07, needs week_start and week_end)"]),
        Case(name: "the week spanning spring forward is an hour short",
             valid: base.with("week_id", "\"2026-W10\"").bounds("2026-03-02T05:00:00.000Z", "2026-03-09T03:59:59.999Z").json,
             invalid: base.with("week_id", "\"2026-W10\"").bounds("2026-03-02T05:00:00.000Z", "2026-03-09T04:59:59.999Z").json,
             problems: ["$.week_end: not the end of 2026-W10 on America/New_York's clocks: 2026-03-09T03:59:59.999Z "
                            + "(Sunday 23:59:59.999), or up to 2026-03-09T04:00:00.000Z (the next Monday 00:00)"]),
        Case(name: "the week spanning fall back is an hour long",
             valid: base.with("week_id", "\"2025-W44\"").bounds("2025-10-27T04:00:00.000Z", "2025-11-03T04:59:59.999Z").json,
             invalid: base.with("week_id", "\"2025-W44\"").bounds("2025-10-27T04:00:00.000Z", "2025-11-03T03:59:59.999Z").json,
             problems: ["$.week_end: not the end of 2025-W44 on America/New_York's clocks: 2025-11-03T04:59:59.999Z "
                            + "(Sunday 23:59:59.999), or up to 2025-11-03T05:00:00.000Z (the next Monday 00:00)"]),
        Case(name: "no unknown keys", valid: base.json, invalid: base.with("version", "2").json,
             problems: ["$.version: unknown key (--allow-extra-keys permits it)"]),
        Case(name: "no unknown keys in entries", valid: base.json,
             invalid: base.with("horrible", "[{\"joke_id\": \"a\", \"count\": 1, \"rank\": 1, \"text\": \"…\"}]").json,
             problems: ["$.horrible[0].text: unknown key (--allow-extra-keys permits it)"]),
        Case(name: "odd keys are quoted in paths", valid: base.json, invalid: base.with("a \\\"b\\\"\\n", "0").json,
             problems: ["$[\"a \\\"b\\\"\\n\"]: unknown key (--allow-extra-keys permits it)"]),
        Case(name: "no duplicate keys", valid: base.json, invalid: base.with("horrible", "[{\"joke_id\": \"a\", \"count\": 1, \"rank\": 1, \"rank\": 1}]").json,
             problems: ["$.horrible[0].rank: duplicate key"]),
    ]

    static func lines(_ json: String, top: Int = 10, allowExtraKeys: Bool = false) -> [String] {
        DocumentChecker(top: top, allowExtraKeys: allowExtraKeys).problems(in: Array(json.utf8)).map(\.description)
    }

    @Test("the passing document has no problems", arguments: cases)
    func passes(_ c: Case) {
        #expect(Self.lines(c.valid, top: c.top) == [])
    }

    @Test("the failing document has exactly its problems", arguments: cases)
    func fails(_ c: Case) {
        #expect(Self.lines(c.invalid, top: c.top) == c.problems)
    }

    @Test func extraKeysAllowedWhenAsked() {
        let json = Self.base.with("version", "2")
            .with("horrible", "[{\"joke_id\": \"a\", \"count\": 1, \"rank\": 1, \"text\": {\"x\": []}}]").json
        #expect(Self.lines(json, allowExtraKeys: true) == [])
    }

    /// Extra keys may hold anything, but a duplicate key anywhere is still reported.
    @Test func duplicateKeysInsideExtraKeysAreStillReported() {
        let json = Self.base.with("meta", "{\"by\": [{\"x\": 1, \"x\": 2}]}").json
        #expect(Self.lines(json, allowExtraKeys: true) == ["$.meta.by[0].x: duplicate key"])
    }

    @Test func everyProblemIsReportedInDocumentOrder() {
        let json = """
        {"computed_at": "soon", "hilarious": [{"rank": 2, "count": 0, "joke_id": "a"}], "week_id": 1,
         "horrible": [], "total_horrible_ratings": -1, "extra": null}
        """
        #expect(Self.lines(json) == [
            "$.computed_at: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found the string \"soon\"",
            "$.hilarious[0].rank: expected 1 (ranks run 1, 2, 3… down the list), found 2",
            "$.hilarious[0].count: expected an integer of at least 1, found 0",
            "$.week_id: expected a non-empty string, found 1",
            "$.total_horrible_ratings: expected an integer of at least 0, found -1",
            "$.extra: unknown key (--allow-extra-keys permits it)",
            "$.total_hilarious_ratings: missing",
        ])
    }

    @Test func missingKeysComeLastInTheirUsualOrder() {
        #expect(Self.lines("{}") == [
            "$.week_id: missing", "$.hilarious: missing", "$.horrible: missing",
            "$.total_hilarious_ratings: missing", "$.total_horrible_ratings: missing", "$.computed_at: missing",
        ])
    }

    @Test func longValuesAreClippedInMessages() {
        let long = String(repeating: "x", count: 39) + "é" + String(repeating: "y", count: 10)
        #expect(Self.lines(Self.base.with("computed_at", "\"\(long)\"").json) == [
            "$.computed_at: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found the string \"\(String(repeating: "x", count: 39))\"…",
        ])
    }

    @Test func anOversizedDocumentIsRefusedUnread() {
        var bytes = Array(Self.base.json.utf8)
        bytes += Array(repeating: 0x20, count: DocumentChecker.maximumSize + 1 - bytes.count)
        #expect(DocumentChecker().problems(in: bytes).map(\.description)
                == ["$: larger than 4194304 bytes, too large for a rankings document"])
        #expect(DocumentChecker().problems(in: Array(bytes.dropLast())) == [])
    }
}
