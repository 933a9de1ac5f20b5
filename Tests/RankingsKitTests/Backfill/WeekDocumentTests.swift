import Foundation
import Testing
@testable import RankingsKit

/// `--week-document`: the document of the ISO week holding `--computed-at` on New York's clocks
/// (what the app's `getCurrentWeekId()` gives then), counting what the other options select. The
/// expected weeks and bounds were computed independently with Python's `zoneinfo` and
/// `isocalendar()`.
@Suite("Backfill: --week-document")
struct WeekDocumentTests {
    struct Turn: Sendable, CustomTestStringConvertible {
        var computedAt: String
        var week: String
        var start: String
        var end: String
        var why: String
        var testDescription: String { "\(computedAt): \(why)" }
    }

    static let turns: [Turn] = [
        Turn(computedAt: "2026-11-27T05:00:00Z", week: "2026-W48", start: "2026-11-23T05:00:00.000Z",
             end: "2026-11-30T04:59:59.999Z", why: "the night of Friday 27 November"),
        Turn(computedAt: "2026-11-29T23:59:59-05:00", week: "2026-W48", start: "2026-11-23T05:00:00.000Z",
             end: "2026-11-30T04:59:59.999Z", why: "Sunday 23:59:59 in New York"),
        Turn(computedAt: "2026-11-30T04:59:59.999Z", week: "2026-W48", start: "2026-11-23T05:00:00.000Z",
             end: "2026-11-30T04:59:59.999Z", why: "the week's last millisecond"),
        Turn(computedAt: "2026-11-30T00:00:00-05:00", week: "2026-W49", start: "2026-11-30T05:00:00.000Z",
             end: "2026-12-07T04:59:59.999Z", why: "Monday 00:00 in New York: the week turns"),
        Turn(computedAt: "2026-03-08T06:59:59Z", week: "2026-W10", start: "2026-03-02T05:00:00.000Z",
             end: "2026-03-09T03:59:59.999Z", why: "01:59:59 EST, just before spring forward: a 167-hour week"),
        Turn(computedAt: "2026-03-08T07:00:00Z", week: "2026-W10", start: "2026-03-02T05:00:00.000Z",
             end: "2026-03-09T03:59:59.999Z", why: "03:00 EDT, just after spring forward"),
        Turn(computedAt: "2026-03-08T23:59:59-04:00", week: "2026-W10", start: "2026-03-02T05:00:00.000Z",
             end: "2026-03-09T03:59:59.999Z", why: "Sunday 23:59:59 EDT after spring forward"),
        Turn(computedAt: "2026-03-09T04:00:00Z", week: "2026-W11", start: "2026-03-09T04:00:00.000Z",
             end: "2026-03-16T03:59:59.999Z", why: "Monday 00:00 EDT: already 04:00 UTC"),
        Turn(computedAt: "2025-11-02T05:30:00Z", week: "2025-W44", start: "2025-10-27T04:00:00.000Z",
             end: "2025-11-03T04:59:59.999Z", why: "the first 01:30 of fall back (EDT): a 169-hour week"),
        Turn(computedAt: "2025-11-02T06:30:00Z", week: "2025-W44", start: "2025-10-27T04:00:00.000Z",
             end: "2025-11-03T04:59:59.999Z", why: "the second 01:30 of fall back (EST)"),
        Turn(computedAt: "2025-11-03T04:59:59Z", week: "2025-W44", start: "2025-10-27T04:00:00.000Z",
             end: "2025-11-03T04:59:59.999Z", why: "Sunday 23:59:59 EST after fall back"),
        Turn(computedAt: "2025-11-03T05:00:00Z", week: "2025-W45", start: "2025-11-03T05:00:00.000Z",
             end: "2025-11-10T04:59:59.999Z", why: "Monday 00:00 EST after fall back"),
        Turn(computedAt: "2027-01-01T12:00:00Z", week: "2026-W53", start: "2026-12-28T05:00:00.000Z",
             end: "2027-01-04T04:59:59.999Z", why: "1 January 2027 is in 2026's week 53"),
        Turn(computedAt: "2027-01-04T04:59:59Z", week: "2026-W53", start: "2026-12-28T05:00:00.000Z",
             end: "2027-01-04T04:59:59.999Z", why: "Monday in UTC, still Sunday in New York"),
        Turn(computedAt: "2027-01-04T00:00:00-05:00", week: "2027-W01", start: "2027-01-04T05:00:00.000Z",
             end: "2027-01-11T04:59:59.999Z", why: "week 53 turns to week 1"),
        Turn(computedAt: "2025-12-28T23:59:59-05:00", week: "2025-W52", start: "2025-12-22T05:00:00.000Z",
             end: "2025-12-29T04:59:59.999Z", why: "2025 has 52 weeks"),
        Turn(computedAt: "2025-12-29T00:00:00-05:00", week: "2026-W01", start: "2025-12-29T05:00:00.000Z",
             end: "2026-01-05T04:59:59.999Z", why: "week 1 of 2026 starts in December 2025"),
        Turn(computedAt: "2026-01-01T03:00:00Z", week: "2026-W01", start: "2025-12-29T05:00:00.000Z",
             end: "2026-01-05T04:59:59.999Z", why: "New Year in UTC, New Year's Eve in New York"),
        Turn(computedAt: "2021-01-03T23:59:59-05:00", week: "2020-W53", start: "2020-12-28T05:00:00.000Z",
             end: "2021-01-04T04:59:59.999Z", why: "2020's week 53"),
    ]

    @Test(arguments: turns)
    func libraryWeekOfAnInstant(_ t: Turn) throws {
        let instant = try #require(Timestamp.parseRFC3339(Array(t.computedAt.utf8)))
        let zone = try #require(IANAZone(identifier: "America/New_York"))
        let week = ISOWeek(containing: instant, in: zone)
        #expect(week.id == t.week)
        #expect(ISOWeek(t.week) == week)
        let (start, end) = week.bounds(in: zone)
        #expect(start.rfc3339(milliseconds: true) == t.start)
        #expect(end.rfc3339(milliseconds: true) == t.end)
        #expect(start <= instant && instant <= end)
    }

    /// The whole document, byte for byte, in both formats, and `rankings check` accepts each.
    @Test(arguments: turns)
    func documentOfTheWeekOfComputedAt(_ t: Turn) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Backfill.event("a", "5", week: "2019-W01") + Backfill.event("b", "1"))
            for format in ["json", "firestore"] {
                let run = try RankingsBinary.run(["aggregate", "-q", "--week-document", "--computed-at", t.computedAt,
                                                  "--format", format, "-o", dir.path("doc.json"), input])
                #expect(run.status == 0, "\(run.stderrText)")
                #expect(run.stdout.isEmpty && run.stderr.isEmpty)
                let expected = format == "json" ? Self.document(t) : Self.body(t)
                let got = try dir.read("doc.json")
                #expect(firstDifference(expected, got) == nil, "\(format): \(firstDifference(expected, got) ?? "")")
                let check = try RankingsBinary.run(["check", "-q", "--format", format, dir.path("doc.json")])
                #expect(check.status == 0, "\(check.stderrText)")
                #expect(check.stderr.isEmpty)
            }
        }
    }

    /// What `aggregate --week-document` writes for `t` over one Hilarious event of `a` (whose
    /// week_id is another week's) and one Horrible event of `b`.
    static func document(_ t: Turn) -> [UInt8] {
        Array("""
            {
              "week_id": "\(t.week)",
              "hilarious": [
                {"joke_id": "a", "count": 1, "rank": 1}
              ],
              "horrible": [
                {"joke_id": "b", "count": 1, "rank": 1}
              ],
              "total_hilarious_ratings": 1,
              "total_horrible_ratings": 1,
              "computed_at": "\(utc(t.computedAt))",
              "week_start": "\(t.start)",
              "week_end": "\(t.end)"
            }

            """.utf8)
    }

    static func body(_ t: Turn) -> [UInt8] {
        Array("""
            {
              "fields": {
                "week_id": {"stringValue": "\(t.week)"},
                "hilarious": {"arrayValue": {"values": [
                  {"mapValue": {"fields": {"joke_id": {"stringValue": "a"}, "count": {"integerValue": "1"}, "rank": {"integerValue": "1"}}}}
                ]}},
                "horrible": {"arrayValue": {"values": [
                  {"mapValue": {"fields": {"joke_id": {"stringValue": "b"}, "count": {"integerValue": "1"}, "rank": {"integerValue": "1"}}}}
                ]}},
                "total_hilarious_ratings": {"integerValue": "1"},
                "total_horrible_ratings": {"integerValue": "1"},
                "computed_at": {"timestampValue": "\(utc(t.computedAt))"},
                "week_start": {"timestampValue": "\(t.start)"},
                "week_end": {"timestampValue": "\(t.end)"}
              }
            }

            """.utf8)
    }

    static func utc(_ text: String) -> String {
        Timestamp.parseRFC3339(Array(text.utf8))!.rfc3339()
    }

    /// Unlike --week, no event is left out for its week_id: the counts are those the other
    /// options select (here the 30 days before computed_at), as the all-time document's are.
    @Test func countsWhatTheOtherOptionsSelectNotTheWeekID() throws {
        let lines = [
            Backfill.event("in-week", "5", week: "2026-W48", timestamp: Backfill.rfc("2026-11-24T12:00:00Z")),
            Backfill.event("earlier-week", "5", week: "2026-W45", timestamp: Backfill.rfc("2026-11-05T12:00:00Z")),
            Backfill.event("no-week", "1", timestamp: Backfill.rfc("2026-11-01T12:00:00Z")),
            Backfill.event("too-old", "5", week: "2026-W40", timestamp: Backfill.rfc("2026-10-01T12:00:00Z")),
        ]
        let run = try Backfill.run(["--computed-at", "2026-11-27T05:00:00Z", "--since", "-30d", "--week-document"],
                                   files: [("a.ndjson", lines.joined())])
        #expect(run.status == 0, "\(run.stderr)")
        let plain = try Backfill.run(["--computed-at", "2026-11-27T05:00:00Z", "--since", "-30d"],
                                     files: [("a.ndjson", lines.joined())])
        let week = String(decoding: run.stdout, as: UTF8.self), allTime = String(decoding: plain.stdout, as: UTF8.self)
        #expect(week == allTime
            .replacingOccurrences(of: "\"week_id\": \"all_time\"", with: "\"week_id\": \"2026-W48\"")
            .replacingOccurrences(of: "\"computed_at\": \"2026-11-27T05:00:00Z\"\n",
                                  with: "\"computed_at\": \"2026-11-27T05:00:00Z\",\n  \"week_start\": \"2026-11-23T05:00:00.000Z\",\n"
                                      + "  \"week_end\": \"2026-11-30T04:59:59.999Z\"\n"))
        #expect(week.contains("\"joke_id\": \"earlier-week\"") && week.contains("\"joke_id\": \"no-week\""))
        #expect(!week.contains("too-old"))
        #expect(run.counts == [4, 3, 1, 0, 0])
        #expect(run.counts == plain.counts)
    }

    /// `--time-zone` moves the week's turn to that zone's midnight.
    @Test func timeZoneMovesTheTurn() throws {
        let input = [("a.ndjson", Backfill.event("a", "5"))]
        let utc = try Backfill.run(["--computed-at", "2027-01-04T04:59:59Z", "--week-document", "--time-zone", "UTC"], files: input)
        #expect(utc.status == 0, "\(utc.stderr)")
        #expect(utc.stdoutText.contains("\"week_id\": \"2027-W01\""), "\(utc.stdoutText)")
        #expect(utc.stdoutText.contains("\"week_start\": \"2027-01-04T00:00:00.000Z\",\n  \"week_end\": \"2027-01-10T23:59:59.999Z\"\n"))
        let newYork = try Backfill.run(["--computed-at", "2027-01-04T04:59:59Z", "--week-document"], files: input)
        #expect(newYork.stdoutText.contains("\"week_id\": \"2026-W53\""), "\(newYork.stdoutText)")
    }

    @Test func notWithWeek() throws {
        let run = try Backfill.run(["--week-document", "--week", "2026-W48"], files: [("a.ndjson", Backfill.event("a", "5"))])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.report == nil)
        #expect(run.stderr.hasPrefix("rankings: error: --week-document and --week cannot be combined: "
                                     + "--week already writes week 2026-W48's document\n"), "\(run.stderr)")
    }

    @Test func helpNamesTheOptions() throws {
        let aggregate = try RankingsBinary.run(["aggregate", "--help"])
        #expect(aggregate.status == 0)
        #expect(aggregate.stdoutText.contains("\n  --week-document     write the document of the ISO week holding --computed-at"))
        let check = try RankingsBinary.run(["check", "--help"])
        #expect(check.status == 0)
        #expect(check.stdoutText.contains("\n  --time-zone TZ      IANA zone whose clocks bound a week's document"))
    }

    @Test func takesNoValue() throws {
        let run = try Backfill.run(["--week-document=yes"], files: [("a.ndjson", Backfill.event("a", "5"))])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
    }

    /// A week that a Firestore Timestamp cannot bound is refused as the command line's fault.
    @Test(arguments: [("9999-12-31T12:00:00Z", "9999-W52"), ("0001-01-01T00:00:00Z", "0000-W52")])
    func aWeekBeyondFirestoreYearsIsUsage(_ computedAt: String, _ week: String) throws {
        let run = try Backfill.run(["--computed-at", computedAt, "--week-document"], files: [("a.ndjson", Backfill.event("a", "5"))])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("--week-document: the week of --computed-at \(computedAt) (\(week)) does not lie within "
                                    + "the years 0001 to 9999 that a Firestore Timestamp holds"), "\(run.stderr)")
    }

    /// The guard against shrinking compares only a document of the same week: each night of a
    /// week replaces that week's document, and at the turn a new week's document starts.
    @Test func maxDropComparesOnlyTheSameWeek() throws {
        try ScratchDirectory.with { dir in
            let two = try dir.write("two.ndjson", Backfill.event("a", "5") + Backfill.event("b", "5"))
            let one = try dir.write("one.ndjson", Backfill.event("a", "5"))
            func night(_ computedAt: String, _ input: String) throws -> RankingsBinary.Result {
                try RankingsBinary.run(["aggregate", "-q", "--week-document", "--max-drop", "10", "--computed-at", computedAt,
                                        "-o", dir.path("weekly.json"), input])
            }
            #expect(try night("2026-11-27T05:00:00Z", two).status == 0)
            let before = try dir.read("weekly.json")
            let shrunk = try night("2026-11-28T05:00:00Z", one)
            #expect(shrunk.status == 65, "\(shrunk.stderrText)")
            #expect(try dir.read("weekly.json") == before)
            let turned = try night("2026-11-30T05:00:00Z", one)
            #expect(turned.status == 0, "\(turned.stderrText)")
            #expect(String(decoding: try dir.read("weekly.json"), as: UTF8.self).contains("\"week_id\": \"2026-W49\""))
        }
    }

    /// No --time-zone and no America/New_York in the database: 66, as for --week, naming the option.
    @Test func missingDefaultZoneIs66() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Backfill.event("a", "5"))
            try dir.write("zones/UTC0", "")
            var environment = ProcessInfo.processInfo.environment
            environment["TZDIR"] = dir.path("zones")
            let run = try RankingsBinary.run(["aggregate", "-q", "--week-document", "--metrics", dir.path("m.prom"),
                                              "-o", dir.path("doc.json"), input], environment: environment)
            #expect(run.status == 66)
            #expect(run.stderrText == "rankings: error: cannot read \(dir.path("zones"))/America/New_York: "
                    + "the default zone for --week-document is not in the time zone database\n")
            #expect(!FileManager.default.fileExists(atPath: dir.path("doc.json")))
            #expect(try String(decoding: dir.read("m.prom"), as: UTF8.self).contains("rankings_last_run_exit_status 66"))
        }
    }
}

extension Backfill.Run {
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}
