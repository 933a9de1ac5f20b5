import Foundation
import Testing

/// `--as-of TIME`: the cut-off is inclusive, compared as instants whatever the offsets, and every
/// timestamp form an export carries is read; a record without a readable timestamp is a bad line.
@Suite("Backfill: --as-of and timestamp forms")
struct AsOfTests {
    static let cutOff = "2025-06-01T00:00:00Z"

    /// One event on joke `a` with `timestamp`, run with `--as-of` the cut-off: counted (0, one
    /// hilarious), left out (65, nothing left), or bad (65, a bad line).
    enum Outcome: Sendable { case counted, leftOut, bad }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var timestamp: String
        var outcome: Outcome
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // The edge itself, in each form and offset.
        Case(name: "RFC 3339 exactly at the cut-off", timestamp: Backfill.rfc("2025-06-01T00:00:00Z"), outcome: .counted),
        Case(name: "one nanosecond after", timestamp: Backfill.rfc("2025-06-01T00:00:00.000000001Z"), outcome: .leftOut),
        Case(name: "one nanosecond before", timestamp: Backfill.rfc("2025-05-31T23:59:59.999999999Z"), outcome: .counted),
        Case(name: "same instant, -04:00", timestamp: Backfill.rfc("2025-05-31T20:00:00-04:00"), outcome: .counted),
        Case(name: "one second later, +05:30", timestamp: Backfill.rfc("2025-06-01T05:30:01+05:30"), outcome: .leftOut),
        Case(name: "lower-case t and z", timestamp: Backfill.rfc("2025-06-01t00:00:00z"), outcome: .counted),
        Case(name: "space separator", timestamp: Backfill.rfc("2025-06-01 00:00:00Z"), outcome: .counted),
        Case(name: "twelve fraction digits, beyond 9 truncated", timestamp: Backfill.rfc("2025-06-01T00:00:00.000000000999Z"),
             outcome: .counted),
        Case(name: "escaped Z", timestamp: "\"2025-06-01T00:00:00\\u005A\"", outcome: .counted),
        Case(name: "_seconds at the cut-off", timestamp: "{\"_seconds\": 1748736000, \"_nanoseconds\": 0}", outcome: .counted),
        Case(name: "_seconds, 1 ns after", timestamp: "{\"_seconds\": 1748736000, \"_nanoseconds\": 1}", outcome: .leftOut),
        Case(name: "_seconds without _nanoseconds", timestamp: "{\"_seconds\": 1748736000}", outcome: .counted),
        Case(name: "seconds/nanoseconds form", timestamp: "{\"seconds\": 1748735999, \"nanoseconds\": 999999999}",
             outcome: .counted),
        Case(name: "seconds form, after", timestamp: "{\"nanoseconds\": 0, \"seconds\": 1748736001}", outcome: .leftOut),
        Case(name: "_seconds wins over seconds", timestamp: "{\"seconds\": 1, \"_seconds\": 1748736001}", outcome: .leftOut),
        Case(name: "keys compared after unescaping", timestamp: "{\"s\\u0065conds\": 1748736000}", outcome: .counted),
        Case(name: "escaped underscore key", timestamp: "{\"\\u005fseconds\": 1748736000, \"_nanoseconds\": 5}",
             outcome: .leftOut),
        Case(name: "other keys ignored", timestamp: "{\"_seconds\": 1748736000, \"note\": [1, {\"x\": 2}], \"_nanoseconds\": 0}",
             outcome: .counted),
        Case(name: "negative seconds", timestamp: "{\"_seconds\": -1, \"_nanoseconds\": 0}", outcome: .counted),
        // Unreadable: every one is a bad line with --as-of.
        Case(name: "no offset", timestamp: Backfill.rfc("2025-06-01T00:00:00"), outcome: .bad),
        Case(name: "empty fraction", timestamp: Backfill.rfc("2025-06-01T00:00:00.Z"), outcome: .bad),
        Case(name: "February 30", timestamp: Backfill.rfc("2025-02-30T00:00:00Z"), outcome: .bad),
        Case(name: "hour 24", timestamp: Backfill.rfc("2025-06-01T24:00:00Z"), outcome: .bad),
        Case(name: "date only", timestamp: Backfill.rfc("2025-06-01"), outcome: .bad),
        Case(name: "a number", timestamp: "1748736000", outcome: .bad),
        Case(name: "null", timestamp: "null", outcome: .bad),
        Case(name: "fractional _seconds", timestamp: "{\"_seconds\": 1748736000.5}", outcome: .bad),
        Case(name: "exponent _seconds", timestamp: "{\"_seconds\": 1e9}", outcome: .bad),
        Case(name: "_seconds beyond Int64", timestamp: "{\"_seconds\": 9223372036854775808}", outcome: .bad),
        Case(name: "string _seconds", timestamp: "{\"_seconds\": \"1748736000\"}", outcome: .bad),
        Case(name: "_nanoseconds 10^9", timestamp: "{\"_seconds\": 1, \"_nanoseconds\": 1000000000}", outcome: .bad),
        Case(name: "negative _nanoseconds", timestamp: "{\"_seconds\": 1, \"_nanoseconds\": -1}", outcome: .bad),
        Case(name: "null _nanoseconds", timestamp: "{\"_seconds\": 1, \"_nanoseconds\": null}", outcome: .bad),
        Case(name: "_seconds unreadable though seconds is fine", timestamp: "{\"_seconds\": null, \"seconds\": 1}",
             outcome: .bad),
        Case(name: "only nanoseconds", timestamp: "{\"_nanoseconds\": 1}", outcome: .bad),
        Case(name: "empty object", timestamp: "{}", outcome: .bad),
        Case(name: "mixed-case key", timestamp: "{\"_Seconds\": 1}", outcome: .bad),
    ]

    @Test(arguments: cases)
    func oneEvent(_ c: Case) throws {
        let run = try Backfill.run(["--as-of", Self.cutOff],
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
            #expect(run.stderr.contains("1 left out"), "\(run.stderr)")
        case .bad:
            #expect(run.status == 65, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.counts == [0, 0, 0, 0, 1])
            // The message shows the value (issue 17, item 7).
            #expect(run.stderr.contains("a.ndjson:1: invalid record: timestamp \(c.timestamp) is not"), "\(run.stderr)")
        }
    }

    /// A missing timestamp is a bad line that `--max-invalid` can tolerate; it is never counted.
    @Test func missingTimestampCountsAgainstMaxInvalid() throws {
        let input = Backfill.event("a", "5", timestamp: Backfill.rfc("2025-01-01T00:00:00Z"))
            + Backfill.event("b", "5") + Backfill.event("c", "1", timestamp: "{\"_seconds\": \"x\"}")
        let strict = try Backfill.run(["--as-of", Self.cutOff], files: [("a.ndjson", input)])
        #expect(strict.status == 65)
        #expect(strict.stderr.contains("a.ndjson:2: invalid record: no timestamp (needed by --as-of/--since)"), "\(strict.stderr)")
        #expect(strict.stderr.contains("a.ndjson:3: invalid record: timestamp {\"_seconds\": \"x\"} is not"), "\(strict.stderr)")
        let tolerant = try Backfill.run(["--as-of", Self.cutOff, "--max-invalid", "2"], files: [("a.ndjson", input)])
        #expect(tolerant.status == 0, "\(tolerant.stderr)")
        #expect(tolerant.stdout == Backfill.document(hilarious: [("a", 1)], horrible: []))
        #expect(tolerant.counts == [1, 1, 0, 0, 2])
        // Without --as-of the same lines are fine: the timestamp is not needed.
        let plain = try Backfill.run([], files: [("a.ndjson", input)])
        #expect(plain.status == 0)
        #expect(plain.counts == [3, 3, 0, 0, 0])
    }

    /// Validity first: a record too late for the cut-off still has to be a valid record.
    @Test func invalidRecordIsBadEvenWhenItWouldBeFilteredOut() throws {
        let input = Backfill.event("a", "5", timestamp: Backfill.rfc("2025-01-01T00:00:00Z"))
            + Backfill.event("b", "5", timestamp: Backfill.rfc("2030-01-01T00:00:00Z"))
            + "{\"joke_id\": \"c\", \"rating\": 9, \"timestamp\": \"2030-01-01T00:00:00Z\"}\n"
        let run = try Backfill.run(["--as-of", Self.cutOff, "--max-invalid", "1"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.counts == [2, 1, 1, 0, 1])
    }

    /// Counts, report and summary line on a mix, and `--allow-empty` when everything is too late.
    @Test func reportAndSummaryNameWhatWasLeftOut() throws {
        let input = Backfill.event("a", "5", timestamp: Backfill.rfc("2025-01-01T00:00:00Z"))
            + Backfill.event("a", "1", timestamp: Backfill.rfc("2025-05-31T23:59:59Z"))
            + Backfill.event("b", "3", timestamp: Backfill.rfc("2025-06-01T00:00:00Z"))
            + Backfill.event("b", "1", timestamp: Backfill.rfc("2025-06-01T00:00:01Z"))
            + Backfill.event("c", "5", timestamp: "{\"_seconds\": 1748736001, \"_nanoseconds\": 0}")
        let run = try Backfill.run(["--as-of", Self.cutOff], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == Backfill.document(hilarious: [("a", 1)], horrible: [("a", 1)]))
        #expect(run.counts == [5, 3, 2, 0, 0])
        #expect(run.count("hilarious") == 1 && run.count("horrible") == 1 && run.count("neutral") == 1)
        #expect(run.stderr.contains("2 left out by filters"), "\(run.stderr)")

        let empty = try Backfill.run(["--as-of", "2020-01-01T00:00:00Z"], files: [("a.ndjson", input)])
        #expect(empty.status == 65)
        #expect(empty.stdout.isEmpty)
        #expect(empty.stderr.contains("5 left out"), "\(empty.stderr)")
        #expect(empty.count("exit_status") == 65)
        let allowed = try Backfill.run(["--as-of", "2020-01-01T00:00:00Z", "--allow-empty"], files: [("a.ndjson", input)])
        #expect(allowed.status == 0)
        #expect(allowed.stdout == Backfill.document(hilarious: [], horrible: []))
        #expect(allowed.counts == [5, 0, 5, 0, 0])
    }

    @Test(arguments: ["yesterday", "2025-06-01", "2025-06-01T00:00:00", "2025-13-01T00:00:00Z", ""])
    func badAsOfIsUsageError(_ text: String) throws {
        let run = try Backfill.run(["--as-of", text], files: [("a.ndjson", Backfill.event("a", "5"))])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
    }
}
