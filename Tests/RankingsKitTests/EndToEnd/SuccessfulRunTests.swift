import Foundation
import Testing

/// What a successful run promises: the document, where it goes, and the options that shape it.
@Suite("Successful runs")
struct SuccessfulRunTests {
    static let events = eventLine("b", "5") + eventLine("a", "5") + eventLine("b", "4") + eventLine("c", "1")
        + eventLine("a", "3")

    static let expected = """
        {
          "week_id": "all_time",
          "hilarious": [
            {"joke_id": "b", "count": 2, "rank": 1},
            {"joke_id": "a", "count": 1, "rank": 2}
          ],
          "horrible": [
            {"joke_id": "c", "count": 1, "rank": 1}
          ],
          "total_hilarious_ratings": 3,
          "total_horrible_ratings": 1,
          "computed_at": "2026-02-18T05:00:00Z"
        }

        """

    @Test func writesTheDecidedLayoutToStdout() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.events)
            let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText == Self.expected)
        }
    }

    @Test func replacesAnExistingOutputAndLeavesNoTemporaryFile() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.events)
            try dir.write("out/doc.json", "old\n")
            try dir.write("out/neighbour.txt", "untouched\n")
            for flag in ["-o", "--output"] {
                let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, flag, dir.path("out/doc.json"), input])
                #expect(result.status == 0, "stderr: \(result.stderrText)")
                #expect(result.stdout.isEmpty)
                #expect(try dir.read("out/doc.json") == Array(Self.expected.utf8))
                #expect(try dir.listing("out") == ["doc.json", "neighbour.txt"])
                #expect(try dir.read("out/neighbour.txt") == Array("untouched\n".utf8))
            }
        }
    }

    @Test func topLimitsEachListAndKeepsTheTotals() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.events)
            let result = try RankingsBinary.run(["aggregate", "--top", "1", "--computed-at", fixedComputedAt, input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText == """
                {
                  "week_id": "all_time",
                  "hilarious": [
                    {"joke_id": "b", "count": 2, "rank": 1}
                  ],
                  "horrible": [
                    {"joke_id": "c", "count": 1, "rank": 1}
                  ],
                  "total_hilarious_ratings": 3,
                  "total_horrible_ratings": 1,
                  "computed_at": "2026-02-18T05:00:00Z"
                }

                """)
        }
    }

    @Test(arguments: ["1", "1000"])
    func topBoundsAreAccepted(_ top: String) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.events)
            let result = try RankingsBinary.run(["aggregate", "--top", top, "-q", input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
        }
    }

    @Test func allowEmptyWritesADocumentWithEmptyLists() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("empty.ndjson", "")
            let result = try RankingsBinary.run(["aggregate", "--allow-empty", "--computed-at", fixedComputedAt, input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText == """
                {
                  "week_id": "all_time",
                  "hilarious": [],
                  "horrible": [],
                  "total_hilarious_ratings": 0,
                  "total_horrible_ratings": 0,
                  "computed_at": "2026-02-18T05:00:00Z"
                }

                """)
        }
    }

    /// Neutral events are valid events, so they alone are enough for a document.
    @Test func onlyNeutralEventsStillSucceed() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("neutral.ndjson", eventLine("a", "3") + eventLine("b", "2.5"))
            let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText.contains("\"hilarious\": [],\n  \"horrible\": [],\n"))
        }
    }

    @Test func badLinesUpToTheLimitAreTolerated() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.events + "nope\n[]\n{\"rating\": 1}\n")
            let result = try RankingsBinary.run(["aggregate", "--max-invalid", "3", "--computed-at", fixedComputedAt, input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText == Self.expected)
        }
    }

    /// The offset is applied, and the time is written in UTC with `Z`.
    @Test(arguments: ["2026-02-18T05:00:00Z", "2026-02-18T07:30:00+02:30", "2026-02-17T23:00:00-06:00",
                      "2026-02-18T05:00:00+00:00"])
    func computedAtIsNormalisedToUTC(_ time: String) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.events)
            let result = try RankingsBinary.run(["aggregate", "--computed-at", time, input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText == Self.expected)
        }
    }
}
