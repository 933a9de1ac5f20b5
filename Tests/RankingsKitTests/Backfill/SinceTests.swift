import Foundation
import Testing

/// `--since TIME`: the lower bound is inclusive, compared as instants whatever the offsets or
/// the timestamp's form; the relative form counts whole 24-hour days or hours back from
/// `--computed-at`; a record without a readable timestamp is a bad line.
@Suite("Backfill: --since")
struct SinceTests {
    static let start = "2025-06-01T00:00:00Z"

    /// One event on joke `a` with `timestamp`, run with `--since` the start.
    static let cases: [AsOfTests.Case] = [
        .init(name: "RFC 3339 exactly at the start", timestamp: Backfill.rfc("2025-06-01T00:00:00Z"), outcome: .counted),
        .init(name: "one nanosecond before", timestamp: Backfill.rfc("2025-05-31T23:59:59.999999999Z"), outcome: .leftOut),
        .init(name: "one nanosecond after", timestamp: Backfill.rfc("2025-06-01T00:00:00.000000001Z"), outcome: .counted),
        .init(name: "same instant, -04:00", timestamp: Backfill.rfc("2025-05-31T20:00:00-04:00"), outcome: .counted),
        .init(name: "one second earlier, +05:30", timestamp: Backfill.rfc("2025-06-01T05:29:59+05:30"), outcome: .leftOut),
        .init(name: "lower-case t and z", timestamp: Backfill.rfc("2025-06-01t00:00:00z"), outcome: .counted),
        .init(name: "space separator", timestamp: Backfill.rfc("2025-06-01 00:00:00Z"), outcome: .counted),
        .init(name: "twelve fraction digits, beyond 9 truncated",
              timestamp: Backfill.rfc("2025-05-31T23:59:59.999999999999Z"), outcome: .leftOut),
        .init(name: "escaped Z", timestamp: "\"2025-06-01T00:00:00\\u005A\"", outcome: .counted),
        .init(name: "_seconds at the start", timestamp: "{\"_seconds\":1748736000,\"_nanoseconds\":0}", outcome: .counted),
        .init(name: "_seconds, 1 ns before", timestamp: "{\"_seconds\": 1748735999, \"_nanoseconds\": 999999999}",
              outcome: .leftOut),
        .init(name: "_seconds without _nanoseconds", timestamp: "{\"_seconds\": 1748736000}", outcome: .counted),
        .init(name: "seconds/nanoseconds form, 1 ns before", timestamp: "{\"seconds\": 1748735999, \"nanoseconds\": 999999999}",
              outcome: .leftOut),
        .init(name: "seconds form, after", timestamp: "{\"nanoseconds\": 0, \"seconds\": 1748736001}", outcome: .counted),
        .init(name: "_seconds wins over seconds", timestamp: "{\"seconds\": 1748736001, \"_seconds\": 1748735999}",
              outcome: .leftOut),
        .init(name: "keys compared after unescaping", timestamp: "{\"s\\u0065conds\": 1748736000}", outcome: .counted),
        .init(name: "negative seconds", timestamp: "{\"_seconds\": -1, \"_nanoseconds\": 0}", outcome: .leftOut),
        // Unreadable: a bad line with --since, as with --as-of.
        .init(name: "no offset", timestamp: Backfill.rfc("2025-06-01T00:00:00"), outcome: .bad),
        .init(name: "date only", timestamp: Backfill.rfc("2025-06-01"), outcome: .bad),
        .init(name: "a number", timestamp: "1748736000", outcome: .bad),
        .init(name: "null", timestamp: "null", outcome: .bad),
        .init(name: "fractional _seconds", timestamp: "{\"_seconds\": 1748736000.5}", outcome: .bad),
        .init(name: "_nanoseconds 10^9", timestamp: "{\"_seconds\": 1748736000, \"_nanoseconds\": 1000000000}", outcome: .bad),
        .init(name: "empty object", timestamp: "{}", outcome: .bad),
    ]

    @Test(arguments: cases)
    func oneEvent(_ c: AsOfTests.Case) throws {
        let run = try Backfill.run(["--since", Self.start],
                                   files: [("a.ndjson", Backfill.event("a", "5", timestamp: c.timestamp))])
        switch c.outcome {
        case .counted:
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == Backfill.document(hilarious: [("a", 1)], horrible: []))
            #expect(run.counts == [1, 1, 0, 0, 0])
        case .leftOut:
            #expect(run.status == 65, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.counts == [1, 0, 1, 0, 0])
            #expect(run.stderr.contains("no events left after --as-of/--since/--week (1 left out)"), "\(run.stderr)")
        case .bad:
            #expect(run.status == 65, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.counts == [0, 0, 0, 0, 1])
            // The message shows the value (issue 17, item 7).
            #expect(run.stderr.contains("a.ndjson:1: invalid record: timestamp \(c.timestamp) is not"), "\(run.stderr)")
        }
    }

    @Test func missingTimestampIsABadLine() throws {
        let input = Backfill.event("a", "5", timestamp: Backfill.rfc("2025-07-01T00:00:00Z")) + Backfill.event("b", "5")
        let strict = try Backfill.run(["--since", Self.start], files: [("a.ndjson", input)])
        #expect(strict.status == 65)
        #expect(strict.stderr.contains("a.ndjson:2: invalid record: no timestamp (needed by --as-of/--since)"), "\(strict.stderr)")
        let tolerant = try Backfill.run(["--since", Self.start, "--max-invalid", "1"], files: [("a.ndjson", input)])
        #expect(tolerant.status == 0, "\(tolerant.stderr)")
        #expect(tolerant.counts == [1, 1, 0, 0, 1])
    }

    /// Events on both sides of a window; each run names what it expects counted.
    static let window = [
        ("early", "2025-05-31T23:59:59.999999999Z"),
        ("start", "2025-06-01T00:00:00Z"),
        ("middle", "2025-06-15T12:00:00Z"),
        ("end", "2025-06-30T00:00:00Z"),
        ("late", "2025-06-30T00:00:00.000000001Z"),
    ].map { Backfill.event($0.0, "5", timestamp: Backfill.rfc($0.1)) }.joined()

    @Test func closedWindowWithAsOf() throws {
        let run = try Backfill.run(["--since", Self.start, "--as-of", "2025-06-30T00:00:00Z"],
                                   files: [("a.ndjson", Self.window)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == Backfill.document(hilarious: [("end", 1), ("middle", 1), ("start", 1)], horrible: []))
        #expect(run.counts == [5, 3, 2, 0, 0])
        #expect(run.stderr.contains("2 left out by filters"), "\(run.stderr)")

        // A window of one instant is still a window.
        let instant = try Backfill.run(["--since", Self.start, "--as-of", Self.start], files: [("a.ndjson", Self.window)])
        #expect(instant.status == 0, "\(instant.stderr)")
        #expect(instant.stdout == Backfill.document(hilarious: [("start", 1)], horrible: []))
    }

    @Test(arguments: [["--since", "2025-06-30T00:00:00.000000001Z", "--as-of", "2025-06-30T00:00:00Z"],
                      ["--as-of", "2025-06-01T00:00:00Z", "--since", "2025-06-01T00:00:00.001Z"],
                      ["--as-of", "2026-02-01T00:00:00Z", "--since", "-1h"]])
    func sinceLaterThanAsOfIsUsageError(_ arguments: [String]) throws {
        try ScratchDirectory.with { dir in
            let output = try dir.write("out.json", "old\n")
            let input = try dir.write("a.ndjson", Self.window)
            let run = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "-o", output] + arguments + [input])
            #expect(run.status == 64)
            #expect(run.stdout.isEmpty)
            #expect(run.stderrText.contains("is later than --as-of"), "\(run.stderrText)")
            #expect(try dir.read("out.json") == Array("old\n".utf8))
        }
    }

    /// Around New York's spring change (2026-03-08, 02:00 EST to 03:00 EDT): `-1d` from midnight
    /// EDT on 9 March is 24 hours back, 23:00 EST on 7 March, not midnight on 8 March; `-30d`
    /// is 720 hours, not 30 calendar days on New York's clocks.
    @Test func relativeDaysAreWholeTwentyFourHoursAcrossDaylightSaving() throws {
        let computedAt = "2026-03-09T00:00:00-04:00" // midnight EDT = 04:00Z
        let events = [
            ("before1d", "2026-03-08T03:59:59.999999999Z"), // 22:59:59.999999999 EST on 7 March
            ("at1d", "2026-03-08T04:00:00Z"), // 23:00 EST on 7 March: exactly 24 h before
            ("lateon7th", "2026-03-08T04:30:00Z"), // still 7 March in New York
            ("before30d", "2026-02-07T03:59:59Z"),
            ("at30d", "2026-02-07T04:00:00Z"), // 720 h before; 6 February, 23:00 EST
        ].map { Backfill.event($0.0, "5", timestamp: Backfill.rfc($0.1)) }.joined()

        let day = try Backfill.run(["--computed-at", computedAt, "--since", "-1d"], files: [("a.ndjson", events)])
        #expect(day.status == 0, "\(day.stderr)")
        #expect(day.counts == [5, 2, 3, 0, 0])
        #expect(try Self.countedJokes(day.stdout) == ["at1d", "lateon7th"])

        for since in ["-30d", "-720h"] {
            // --since before --computed-at on the command line: still counted back from it.
            let month = try Backfill.run(["--since", since, "--computed-at", computedAt], files: [("a.ndjson", events)])
            #expect(month.status == 0, "\(month.stderr)")
            #expect(month.counts == [5, 4, 1, 0, 0], "\(since)")
            #expect(try Self.countedJokes(month.stdout) == ["at1d", "at30d", "before1d", "lateon7th"], "\(since)")
        }
        // -24h and -1d are the same instant.
        let hours = try Backfill.run(["--computed-at", computedAt, "--since", "-24h"], files: [("a.ndjson", events)])
        #expect(hours.stdout == day.stdout)
    }

    /// Without --computed-at, the relative form counts back from the run's own time: an event an
    /// hour old is inside `-2h`, one from 1970 is not.
    @Test func relativeFormDefaultsToNow() throws {
        let recent = Date().addingTimeInterval(-3600).timeIntervalSince1970
        let input = Backfill.event("new", "5", timestamp: "{\"_seconds\": \(Int(recent))}")
            + Backfill.event("old", "5", timestamp: "{\"_seconds\": 0}")
        try ScratchDirectory.with { dir in
            let path = try dir.write("a.ndjson", input)
            let run = try RankingsBinary.run(["aggregate", "-q", "--since", "-2h", path])
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(try Self.countedJokes(Array(run.stdout)) == ["new"])
        }
    }

    @Test(arguments: ["-30", "30d", "+30d", "-30D", "-1.5d", "-d", "-30m", "-30dd", " -30d", "-30 d", "-0x1d",
                      "-99999999999999999999d", "yesterday", "2025-06-01", "2025-06-01T00:00:00", ""])
    func badSinceIsUsageError(_ text: String) throws {
        let run = try Backfill.run(["--since", text], files: [("a.ndjson", Backfill.event("a", "5"))])
        #expect(run.status == 64, "\(text): \(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("--since takes an RFC 3339 time"), "\(run.stderr)")
    }

    /// Filters first, then deduplication: a device's vote from before the window takes no part,
    /// so its later vote inside the window is not a duplicate.
    @Test func filtersBeforeDedupe() throws {
        let input = Backfill.event("a", "1", device: "D", timestamp: Backfill.rfc("2025-05-01T00:00:00Z"))
            + Backfill.event("a", "5", device: "D", timestamp: Backfill.rfc("2025-06-02T00:00:00Z"))
            + Backfill.event("b", "1", device: "D", timestamp: Backfill.rfc("2025-06-02T00:00:00Z"))
            + Backfill.event("b", "5", device: "D", timestamp: Backfill.rfc("2025-06-01T00:00:00Z"))
        let run = try Backfill.run(["--since", Self.start, "--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == Backfill.document(hilarious: [("a", 1)], horrible: [("b", 1)]))
        #expect(run.counts == [4, 2, 1, 1, 0])
    }

    @Test func combinesWithWeek() throws {
        let input = Backfill.event("a", "5", week: "2025-W22", timestamp: Backfill.rfc("2025-05-31T12:00:00Z"))
            + Backfill.event("b", "5", week: "2025-W22", timestamp: Backfill.rfc("2025-06-01T12:00:00Z"))
            + Backfill.event("c", "5", week: "2025-W23", timestamp: Backfill.rfc("2025-06-02T12:00:00Z"))
        let run = try Backfill.run(["--since", Self.start, "--week", "2025-W22"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.countedJokes(run.stdout) == ["b"])
        #expect(run.counts == [3, 1, 2, 0, 0])
    }

    /// The hilarious list's joke ids, sorted.
    static func countedJokes(_ document: [UInt8]) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any]
        let list = object?["hilarious"] as? [[String: Any]] ?? []
        return list.compactMap { $0["joke_id"] as? String }.sorted()
    }
}
