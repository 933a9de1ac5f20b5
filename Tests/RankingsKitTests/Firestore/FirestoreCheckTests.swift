import Foundation
import Testing

/// `rankings check --format firestore`: a Firestore body is held to the JSON document's rules,
/// plus the Firestore typing the app's decoder needs, and problems name the body's own paths.
@Suite("Firestore: check --format firestore")
struct FirestoreCheckTests {
    static let golden = (try? String(contentsOf: RankingsBinary.packageRoot
        .appendingPathComponent("sample-data/firestore/all_time.json"), encoding: .utf8)) ?? ""

    func check(_ body: String, _ extra: [String] = []) throws -> RankingsBinary.Result {
        try ScratchDirectory.with { dir in
            try dir.write("body.json", body)
            return try RankingsBinary.run(["check", "-q", "--format", "firestore"] + extra + ["body.json"], directory: dir.url)
        }
    }

    /// `golden` with each (old, new) replaced once.
    static func edited(_ edits: [(String, String)]) -> String {
        var text = golden
        for (old, new) in edits {
            guard let range = text.range(of: old) else { return "edit not found: \(old)" }
            text.replaceSubrange(range, with: new)
        }
        return text
    }

    @Test func everyFirestoreGoldenPasses() throws {
        let dir = RankingsBinary.packageRoot.appendingPathComponent("sample-data/firestore")
        let run = try RankingsBinary.run(["check", "--format", "firestore", "all_time.json", "week-2025-W42.json",
                                          "since-30d.json", "since-30d.week-document.json"], directory: dir)
        #expect(run.status == 0)
        #expect(run.stderrLines == ["rankings: 4 documents checked, all valid"])
    }

    /// rankings-night writes the readTime of the board's snapshot into Firestore's document, so a
    /// document read back from Firestore passes as it is; typed like the other times.
    @Test func theSnapshotsReadTimeIsATimestamp() throws {
        let stamped = Self.edited([("\"computed_at\": {", "\"snapshot_read_time\": {\"timestampValue\": "
            + "\"2026-02-18T04:59:58.123456Z\"},\n    \"computed_at\": {")])
        let good = try check(stamped)
        #expect(good.status == 0)
        let wrong = try check(Self.edited([("\"computed_at\": {", "\"snapshot_read_time\": {\"stringValue\": "
            + "\"yesterday\"},\n    \"computed_at\": {")]))
        #expect(wrong.status == 65)
        #expect(wrong.stderrLines == ["body.json: $.fields.snapshot_read_time: expected timestampValue, found stringValue"])
    }

    @Test func theTwoFormatsAreNotConfused() throws {
        let root = RankingsBinary.packageRoot
        let json = try RankingsBinary.run(["check", "-q", "--format", "firestore", "sample-data/expected/all_time.json"],
                                          directory: root)
        #expect(json.status == 65)
        #expect(json.stderrLines.last == "sample-data/expected/all_time.json: $.fields: missing (this looks like a JSON "
            + "rankings document: check it without --format firestore)")
        let body = try RankingsBinary.run(["check", "-q", "sample-data/firestore/all_time.json"], directory: root)
        #expect(body.status == 65)
        #expect(body.stderrLines.first == "sample-data/firestore/all_time.json: $.fields: unknown key (--allow-extra-keys permits it)")
        #expect(body.stderrLines.contains("sample-data/firestore/all_time.json: $.week_id: missing (this looks like a "
            + "Firestore Document body: check it with --format firestore)"))
        let allowed = try RankingsBinary.run(["check", "-q", "--allow-extra-keys", "sample-data/firestore/all_time.json"],
                                             directory: root)
        #expect(allowed.status == 65)
        #expect(allowed.stderrLines.first == "sample-data/firestore/all_time.json: $.week_id: missing (this looks like a "
            + "Firestore Document body: check it with --format firestore)")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var edits: [(String, String)]
        var problems: [String]
        var extra: [String] = []
        var testDescription: String { name }
    }

    static let proto3Rule = "upper-case T and Z, at most 9 fraction digits, seconds 00 to 59, years 0001 to 9999"

    static let count0 = "$.fields.hilarious.arrayValue.values[0].mapValue.fields.count"

    static let cases: [Case] = [
        Case(name: "computed_at as a string, as a plain JSON upload would give",
             edits: [("\"computed_at\": {\"timestampValue\"", "\"computed_at\": {\"stringValue\"")],
             problems: ["$.fields.computed_at: expected timestampValue, found stringValue"]),
        Case(name: "timestamp without a zone",
             edits: [("\"2026-02-18T05:00:00Z\"", "\"2026-02-18T05:00:00\"")],
             problems: ["$.fields.computed_at: expected an RFC 3339 time like \"2026-02-18T05:00:00Z\", found the string \"2026-02-18T05:00:00\""]),
        // RFC 3339 allows these, proto3 JSON's Timestamp (what Firestore and Google's own
        // Document.from_json parse) does not.
    ] + ["2026-02-18t05:00:00Z", "2026-02-18T05:00:00z", "2026-02-18 05:00:00Z", "2026-02-18T05:00:00.1234567891Z",
         "2026-02-18T05:00:60Z", "0000-02-18T05:00:00Z"].map { time in
        Case(name: "timestamp Firestore refuses: \(time)", edits: [("\"2026-02-18T05:00:00Z\"", "\"\(time)\"")],
             problems: ["$.fields.computed_at: timestampValue must be written as Firestore reads it: " + proto3Rule
                 + ", found the string \"\(time)\""])
    } + [
        Case(name: "timestamps Firestore reads: an offset, a short fraction",
             edits: [("\"2026-02-18T05:00:00Z\"", "\"2026-02-18T00:00:00.5-05:00\"")], problems: []),
        Case(name: "integer that is not decimal", edits: [("{\"integerValue\": \"395\"}", "{\"integerValue\": \"3.5e2\"}")],
             problems: ["\(count0): integerValue must be a decimal integer like \"5\", found the string \"3.5e2\""]),
        Case(name: "count as a double", edits: [("{\"integerValue\": \"395\"}", "{\"doubleValue\": 395}")],
             problems: ["\(count0): expected integerValue, found doubleValue"]),
        Case(name: "proto3 also reads an int64 as a JSON number", edits: [("{\"integerValue\": \"395\"}", "{\"integerValue\": 395}")],
             problems: []),
        Case(name: "count 0, by the document's rules", edits: [("{\"integerValue\": \"395\"}", "{\"integerValue\": \"0\"}")],
             problems: ["\(count0): expected an integer of at least 1, found 0"]),
        Case(name: "rank out of order", edits: [("\"rank\": {\"integerValue\": \"2\"}", "\"rank\": {\"integerValue\": \"3\"}")],
             problems: ["$.fields.hilarious.arrayValue.values[1].mapValue.fields.rank: expected 2 (ranks run 1, 2, 3… down the list), found 3"]),
        Case(name: "total below the sum of the list",
             edits: [("\"total_hilarious_ratings\": {\"integerValue\": \"2712\"}", "\"total_hilarious_ratings\": {\"integerValue\": \"12\"}")],
             problems: ["$.fields.total_hilarious_ratings: 12 is less than the sum of the counts in $.fields.hilarious (961)"]),
        Case(name: "two value types in one value",
             edits: [("{\"stringValue\": \"all_time\"}", "{\"stringValue\": \"all_time\", \"integerValue\": \"1\"}")],
             problems: ["$.fields.week_id: expected exactly one value type (stringValue), found stringValue and integerValue"]),
        Case(name: "unknown key in a value", edits: [("{\"stringValue\": \"all_time\"}", "{\"stringValue\": \"all_time\", \"x\": 1}")],
             problems: ["$.fields.week_id: unknown key \"x\" in a Firestore value"]),
        Case(name: "a plain value where a Firestore value belongs", edits: [("{\"stringValue\": \"all_time\"}", "\"all_time\"")],
             problems: ["$.fields.week_id: expected a Firestore value like {\"stringValue\": ...}, found the string \"all_time\""]),
        Case(name: "missing field", edits: [("\"week_id\": {\"stringValue\": \"all_time\"},\n", "")],
             problems: ["$.fields.week_id: missing"]),
        Case(name: "duplicate field", edits: [("\"week_id\": {\"stringValue\": \"all_time\"},", "\"week_id\": {\"stringValue\": \"all_time\"}, \"week_id\": {\"stringValue\": \"x\"},")],
             problems: ["$.fields.week_id: duplicate key"]),
        Case(name: "extra field", edits: [("\"fields\": {", "\"fields\": {\"note\": {\"booleanValue\": true},")],
             problems: ["$.fields.note: unknown key (--allow-extra-keys permits it)"]),
        Case(name: "extra field allowed", edits: [("\"fields\": {", "\"fields\": {\"note\": {\"booleanValue\": true},")],
             problems: [], extra: ["--allow-extra-keys"]),
        Case(name: "read back from Firestore: name and times",
             edits: [("\"fields\": {", "\"name\": \"projects/p/databases/(default)/documents/weekly_rankings/all_time\", "
                 + "\"createTime\": \"2026-02-18T05:00:01.5Z\", \"updateTime\": \"2026-02-18T05:00:01.5Z\", \"fields\": {")],
             problems: []),
        Case(name: "unknown Document key", edits: [("\"fields\": {", "\"data\": 1, \"fields\": {")],
             problems: ["$.data: unknown key (a Document has only name, fields, createTime and updateTime)"]),
        Case(name: "unknown key in an arrayValue", edits: [("{\"arrayValue\": {\"values\"", "{\"arrayValue\": {\"v\": 1, \"values\"")],
             problems: ["$.fields.hilarious: unknown key \"v\" in an arrayValue (only \"values\")"]),
        Case(name: "entry not a mapValue",
             edits: [("{\"mapValue\": {\"fields\": {\"joke_id\": {\"stringValue\": \"FPxMH97MMvieSfe2dlBK\"}, \"count\": {\"integerValue\": \"395\"}, \"rank\": {\"integerValue\": \"1\"}}}}",
                      "{\"stringValue\": \"FPxMH97MMvieSfe2dlBK\"}")],
             problems: ["$.fields.hilarious.arrayValue.values[0]: expected mapValue, found stringValue"]),
    ]

    @Test(arguments: cases)
    func problemsNameTheBodysPaths(_ c: Case) throws {
        let run = try check(Self.edited(c.edits), c.extra)
        #expect(run.status == (c.problems.isEmpty ? 0 : 65), "\(run.stderrText)")
        #expect(run.stderrLines == c.problems.map { "body.json: " + $0 })
    }
}
