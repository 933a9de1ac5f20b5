import Foundation
import Testing

/// `rankings check` on a week's document (week_id `YYYY-Www`), as the app versions that read
/// `weekly_rankings/{week_id}` decode it: exit statuses and exact lines, in both formats, with
/// `--time-zone`, and without a time zone database.
@Suite("Check: a week's document")
struct WeekDocumentCheckTests {
    typealias Doc = CheckDocumentBuilder
    static let week = Doc().weekly.json
    static let missing = Doc().weekly.without("week_start").without("week_end").json
    /// 2026-W07 bounded on Berlin's clocks, as `aggregate --week 2026-W07 --time-zone Europe/Berlin` writes it.
    static let berlin = Doc().with("week_id", "\"2026-W07\"").bounds("2026-02-08T23:00:00.000Z", "2026-02-15T22:59:59.999Z").json

    func check(_ arguments: [String], files: [String: String], environment: [String: String]? = nil) throws -> RankingsBinary.Result {
        try ScratchDirectory.with { dir in
            for (name, text) in files { try dir.write(name, text) }
            return try RankingsBinary.run(["check"] + arguments, directory: dir.url, environment: environment)
        }
    }

    @Test func aWeeksDocumentMissingItsBoundsIs65() throws {
        let run = try check(["ok.json", "w.json"], files: ["ok.json": Self.week, "w.json": Self.missing])
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(run.stderrLines == [
            "w.json: $.week_start: missing (a week's document, week_id 2026-W07, needs week_start and week_end)",
            "w.json: $.week_end: missing (a week's document, week_id 2026-W07, needs week_start and week_end)",
            "rankings: 2 documents checked: 1 valid, 1 invalid",
        ])
    }

    /// The same rules on a Firestore body, with the body's paths and its own typing rules.
    @Test func aFirestoreBodyOfAWeek() throws {
        let body = try RankingsBinary.run(["check", "-q", "--print-firestore", "-"], stdin: Data(Self.week.utf8))
        #expect(body.status == 0)
        let text = body.stdoutText
        #expect(text.contains("\"week_start\": {\"timestampValue\": \"2026-02-09T05:00:00.000Z\"},\n"
                              + "    \"week_end\": {\"timestampValue\": \"2026-02-16T04:59:59.999Z\"}\n"), "\(text)")
        let noEnd = text.replacingOccurrences(of: ",\n    \"week_end\": {\"timestampValue\": \"2026-02-16T04:59:59.999Z\"}", with: "")
        let asString = text.replacingOccurrences(of: "{\"timestampValue\": \"2026-02-09T05:00:00.000Z\"}",
                                                 with: "{\"stringValue\": \"2026-02-09T05:00:00.000Z\"}")
        let wrongMonday = text.replacingOccurrences(of: "2026-02-09T05:00:00.000Z", with: "2026-02-09T00:00:00Z")
        let run = try check(["-q", "--format", "firestore", "ok.json", "no-end.json", "string.json", "monday.json"],
                            files: ["ok.json": text, "no-end.json": noEnd, "string.json": asString, "monday.json": wrongMonday])
        #expect(run.status == 65)
        #expect(run.stderrLines == [
            "no-end.json: $.fields.week_end: missing (a week's document, week_id 2026-W07, needs week_start and week_end)",
            "string.json: $.fields.week_start: expected timestampValue, found stringValue",
            "monday.json: $.fields.week_start: not the start of 2026-W07 on America/New_York's clocks: "
                + "2026-02-09T05:00:00.000Z (Monday 00:00)",
        ])
    }

    @Test func printFirestoreRefusesAWeekWithoutBounds() throws {
        let run = try RankingsBinary.run(["check", "--print-firestore", "-"], stdin: Data(Self.missing.utf8))
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(run.stderrLines.last == "rankings: 1 document checked: 0 valid, 1 invalid")
    }

    @Test func timeZoneNamesTheClocksOfTheBounds() throws {
        let files = ["ny.json": Self.week, "berlin.json": Self.berlin]
        let newYork = try check(["-q", "ny.json", "berlin.json"], files: files)
        #expect(newYork.status == 65)
        #expect(newYork.stderrLines == [
            "berlin.json: $.week_start: not the start of 2026-W07 on America/New_York's clocks: 2026-02-09T05:00:00.000Z (Monday 00:00)",
            "berlin.json: $.week_end: not the end of 2026-W07 on America/New_York's clocks: 2026-02-16T04:59:59.999Z "
                + "(Sunday 23:59:59.999), or up to 2026-02-16T05:00:00.000Z (the next Monday 00:00)",
        ])
        let berlin = try check(["-q", "--time-zone", "Europe/Berlin", "berlin.json"], files: files)
        #expect(berlin.status == 0, "\(berlin.stderrText)")
        #expect(berlin.stderr.isEmpty)
        let explicit = try check(["-q", "--time-zone", "America/New_York", "ny.json"], files: files)
        #expect(explicit.status == 0)
        let unknown = try check(["--time-zone", "Mars/Olympus", "ny.json"], files: files)
        #expect(unknown.status == 64)
        #expect(unknown.stderrLines.first == "rankings: error: --time-zone takes an IANA zone like America/New_York, not 'Mars/Olympus'")
    }

    /// Without America/New_York in the database a week's document cannot be judged: 66, like a
    /// DOC that cannot be read; the all-time document needs no zone and passes as before.
    @Test func missingDefaultZoneIs66ForAWeekOnly() throws {
        try ScratchDirectory.with { dir in
            try dir.write("zones/UTC0", "")
            try dir.write("week.json", Self.week)
            try dir.write("all_time.json", Doc().json)
            try dir.write("bad-week.json", Self.week.replacingOccurrences(of: "\"rank\": 2", with: "\"rank\": 3"))
            var environment = ProcessInfo.processInfo.environment
            environment["TZDIR"] = dir.path("zones")
            let zone = dir.path("zones") + "/America/New_York"
            let allTime = try RankingsBinary.run(["check", "all_time.json"], directory: dir.url, environment: environment)
            #expect(allTime.status == 0)
            #expect(allTime.stderrLines == ["rankings: 1 document checked, all valid"])
            let run = try RankingsBinary.run(["check", "all_time.json", "week.json", "bad-week.json"],
                                             directory: dir.url, environment: environment)
            #expect(run.status == 66)
            #expect(run.stdout.isEmpty)
            let cannot = "cannot read \(zone): the default zone for a week's document is not in the time zone database (give --time-zone)"
            #expect(run.stderrLines == [
                "rankings: error: week.json: \(cannot)",
                "bad-week.json: $.hilarious[1].rank: expected 2 (ranks run 1, 2, 3… down the list), found 3",
                "rankings: error: bad-week.json: \(cannot)",
                "rankings: 3 documents checked: 1 valid, 0 invalid, 2 unreadable",
            ])
            let utc = try RankingsBinary.run(["check", "-q", "--time-zone", "UTC", "week.json"], directory: dir.url, environment: environment)
            #expect(utc.status == 65)
            let printed = try RankingsBinary.run(["check", "-q", "--print-firestore", "week.json"], directory: dir.url, environment: environment)
            #expect(printed.status == 66)
            #expect(printed.stdout.isEmpty)
            #expect(printed.stderrLines == ["rankings: error: week.json: \(cannot)"])
        }
    }
}
