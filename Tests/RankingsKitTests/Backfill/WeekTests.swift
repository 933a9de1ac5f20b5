import Foundation
import Testing
@testable import RankingsKit

/// `--week ID` and `--time-zone TZ`: which IDs are weeks, where each week starts and ends on a
/// zone's clocks (the expected bounds were computed independently with Python's zoneinfo), and
/// which events are in the week.
@Suite("Backfill: --week and --time-zone")
struct WeekTests {
    struct Bounds: Sendable, CustomTestStringConvertible {
        var week: String
        var zone: String
        var start: String
        var end: String
        var why: String
        var testDescription: String { "\(week) in \(zone): \(why)" }
    }

    static let bounds: [Bounds] = [
        Bounds(week: "2025-W42", zone: "America/New_York", start: "2025-10-13T04:00:00.000Z",
               end: "2025-10-20T03:59:59.999Z", why: "EDT all week"),
        Bounds(week: "2026-W10", zone: "America/New_York", start: "2026-03-02T05:00:00.000Z",
               end: "2026-03-09T03:59:59.999Z", why: "spring forward on Sunday 2026-03-08: a 167-hour week"),
        Bounds(week: "2025-W45", zone: "America/New_York", start: "2025-11-03T05:00:00.000Z",
               end: "2025-11-10T04:59:59.999Z", why: "the week after fall back (2025-11-02)"),
        Bounds(week: "2025-W44", zone: "America/New_York", start: "2025-10-27T04:00:00.000Z",
               end: "2025-11-03T04:59:59.999Z", why: "fall back on its Sunday: a 169-hour week"),
        Bounds(week: "2020-W53", zone: "America/New_York", start: "2020-12-28T05:00:00.000Z",
               end: "2021-01-04T04:59:59.999Z", why: "week 53, ending in the next year"),
        Bounds(week: "2026-W01", zone: "America/New_York", start: "2025-12-29T05:00:00.000Z",
               end: "2026-01-05T04:59:59.999Z", why: "week 1, starting in the previous year"),
        Bounds(week: "2026-W53", zone: "America/New_York", start: "2026-12-28T05:00:00.000Z",
               end: "2027-01-04T04:59:59.999Z", why: "2026 starts on a Thursday, so it has 53 weeks"),
        Bounds(week: "2020-W53", zone: "UTC", start: "2020-12-28T00:00:00.000Z",
               end: "2021-01-03T23:59:59.999Z", why: "UTC"),
        Bounds(week: "2026-W07", zone: "UTC", start: "2026-02-09T00:00:00.000Z",
               end: "2026-02-15T23:59:59.999Z", why: "UTC"),
        Bounds(week: "2026-W07", zone: "Asia/Kolkata", start: "2026-02-08T18:30:00.000Z",
               end: "2026-02-15T18:29:59.999Z", why: "+05:30, starts the Sunday before in UTC"),
        Bounds(week: "2026-W07", zone: "America/St_Johns", start: "2026-02-09T03:30:00.000Z",
               end: "2026-02-16T03:29:59.999Z", why: "-03:30"),
        Bounds(week: "2026-W13", zone: "Europe/Berlin", start: "2026-03-22T23:00:00.000Z",
               end: "2026-03-29T21:59:59.999Z", why: "spring forward on its Sunday"),
        Bounds(week: "2025-W44", zone: "Europe/Berlin", start: "2025-10-26T23:00:00.000Z",
               end: "2025-11-02T22:59:59.999Z", why: "the week after fall back"),
        Bounds(week: "2024-W14", zone: "Australia/Lord_Howe", start: "2024-03-31T13:00:00.000Z",
               end: "2024-04-07T13:29:59.999Z", why: "a half-hour DST change on its Sunday"),
        Bounds(week: "2011-W52", zone: "Pacific/Apia", start: "2011-12-26T10:00:00.000Z",
               end: "2012-01-01T09:59:59.999Z", why: "Samoa skipped 2011-12-30: a six-day week"),
        Bounds(week: "2021-W12", zone: "Asia/Tehran", start: "2021-03-21T20:30:00.000Z",
               end: "2021-03-28T19:29:59.999Z", why: "DST began at Monday midnight: the week starts at 01:00"),
        Bounds(week: "2021-W11", zone: "Asia/Tehran", start: "2021-03-14T20:30:00.000Z",
               end: "2021-03-21T20:29:59.999Z", why: "the week before a skipped Monday midnight"),
    ]

    @Test(arguments: bounds)
    func libraryBounds(_ b: Bounds) throws {
        let week = try #require(ISOWeek(b.week))
        let zone = try #require(IANAZone(identifier: b.zone))
        let (start, end) = week.bounds(in: zone)
        #expect(start.rfc3339(milliseconds: true) == b.start)
        #expect(end.rfc3339(milliseconds: true) == b.end)
    }

    /// The document end to end: week_id, then the bounds after computed_at.
    @Test(arguments: bounds.filter { ["2026-W10", "2020-W53", "2026-W01", "2026-W07"].contains($0.week) })
    func documentCarriesBounds(_ b: Bounds) throws {
        let input = Backfill.event("a", "5", week: b.week) + Backfill.event("b", "1", week: b.week)
            + Backfill.event("c", "5", week: "2025-W01")
        let run = try Backfill.run(["--week", b.week, "--time-zone", b.zone], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = Backfill.document(week: b.week, hilarious: [("a", 1)], horrible: [("b", 1)], bounds: (b.start, b.end))
        #expect(firstDifference(expected, run.stdout) == nil, "\(firstDifference(expected, run.stdout) ?? "")")
        #expect(run.counts == [3, 2, 1, 0, 0])
    }

    @Test func defaultZoneIsNewYork() throws {
        let input = Backfill.event("a", "5", week: "2026-W10")
        let run = try Backfill.run(["--week", "2026-W10"], files: [("a.ndjson", input)])
        #expect(run.stdout == Backfill.document(week: "2026-W10", hilarious: [("a", 1)], horrible: [],
                                                 bounds: ("2026-03-02T05:00:00.000Z", "2026-03-09T03:59:59.999Z")))
    }

    @Test(arguments: ["2026-W54", "2025-W53", "2026-W00", "2026-W7", "2026-7", "26-W07", "2026-w07", "2026W07",
                      "2026-W007", " 2026-W07", "2026-W07 ", "+026-W07", "２０２６-W07", ""])
    func badWeekIsUsageError(_ id: String) throws {
        let run = try Backfill.run(["--week", id], files: [("a.ndjson", Backfill.event("a", "5", week: id))])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.report == nil)
        #expect(ISOWeek(id) == nil)
    }

    @Test(arguments: ["2020-W53", "2026-W53", "2015-W53", "2004-W53", "2026-W01", "2025-W52", "0001-W01", "9999-W52"])
    func validWeeks(_ id: String) throws {
        let week = try #require(ISOWeek(id))
        #expect(week.id == id)
    }

    @Test(arguments: ["Not/AZone", "", "america/new_york_city", "EST+5"])
    func badTimeZoneIsUsageError(_ zone: String) throws {
        let run = try Backfill.run(["--week", "2026-W07", "--time-zone", zone],
                                   files: [("a.ndjson", Backfill.event("a", "5", week: "2026-W07"))])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    /// Membership is the exact (unescaped) week_id string; anything else is not in the week, and
    /// not a bad line.
    @Test func membershipIsTheExactWeekIDString() throws {
        let lines = [
            Backfill.event("in1", "5", week: "2026-W07"),
            "{\"joke_id\": \"in2\", \"rating\": 5, \"week_id\": \"2026-\\u0057\\u00307\"}\n",
            Backfill.event("lower", "5", week: "2026-w07"),
            Backfill.event("space", "5", week: "2026-W07 "),
            Backfill.event("other", "5", week: "2026-W08"),
            Backfill.event("missing", "5"),
            "{\"joke_id\": \"number\", \"rating\": 5, \"week_id\": 202607}\n",
            "{\"joke_id\": \"null\", \"rating\": 5, \"week_id\": null}\n",
            "{\"joke_id\": \"array\", \"rating\": 5, \"week_id\": [\"2026-W07\"]}\n",
            // The timestamp says week 7, but only week_id decides.
            Backfill.event("stamped", "5", timestamp: Backfill.rfc("2026-02-10T12:00:00Z")),
        ]
        let run = try Backfill.run(["--week", "2026-W07"], files: [("a.ndjson", lines.joined())])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == Backfill.document(week: "2026-W07", hilarious: [("in1", 1), ("in2", 1)], horrible: [],
                                                 bounds: ("2026-02-09T05:00:00.000Z", "2026-02-16T04:59:59.999Z")))
        #expect(run.counts == [10, 2, 8, 0, 0])
    }

    @Test func emptyWeekIs65UnlessAllowed() throws {
        let input = Backfill.event("a", "5", week: "2026-W06")
        let run = try Backfill.run(["--week", "2026-W07"], files: [("a.ndjson", input)])
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("1 left out"), "\(run.stderr)")
        let allowed = try Backfill.run(["--week", "2026-W07", "--time-zone", "UTC", "--allow-empty"],
                                       files: [("a.ndjson", input)])
        #expect(allowed.status == 0)
        #expect(allowed.stdout == Backfill.document(week: "2026-W07", hilarious: [], horrible: [],
                                                     bounds: ("2026-02-09T00:00:00.000Z", "2026-02-15T23:59:59.999Z")))
    }

    /// Both filters together: an event must pass each.
    @Test func weekAndAsOfTogether() throws {
        let input = Backfill.event("a", "5", week: "2026-W07", timestamp: Backfill.rfc("2026-02-10T00:00:00Z"))
            + Backfill.event("b", "5", week: "2026-W07", timestamp: Backfill.rfc("2026-02-12T00:00:00Z"))
            + Backfill.event("c", "5", week: "2026-W06", timestamp: Backfill.rfc("2026-02-03T00:00:00Z"))
        let run = try Backfill.run(["--week", "2026-W07", "--as-of", "2026-02-11T00:00:00Z"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == Backfill.document(week: "2026-W07", hilarious: [("a", 1)], horrible: [],
                                                 bounds: ("2026-02-09T05:00:00.000Z", "2026-02-16T04:59:59.999Z")))
        #expect(run.counts == [3, 1, 2, 0, 0])
    }
}
