import Foundation
import Testing

/// `--report`: the run's counts as JSON, on success and on a data failure (65). A joke with only
/// neutral events still counts as distinct: it was seen in a valid event.
@Suite("Run report")
struct ReportTests {
    static let text = "\u{FEFF}" + eventLine("a", "5") + eventLine("b", "1") + eventLine("a", "3") + eventLine("\\u00e9", "4")
        + eventLine("\u{E9}", "2.5") + eventLine("neutral-only", "3") + "\n" + "[]\n" + "{\"joke_id\": \"a\", \"rating\": 0}\n" + "oops\n"

    static let expected = ReportFile.Counts(validEvents: 6, hilarious: 2, horrible: 1, neutral: 3, badLines: 3,
                                            distinctJokes: 4, inputBytes: text.utf8.count)

    @Test func reportOnSuccess() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "3", "--report", dir.path("report.json"), input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(try ReportFile.counts(at: dir.path("report.json")) == Self.expected)
        }
    }

    @Test func reportOnTooManyBadLines() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", Self.text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "2", "-o", dir.path("doc.json"),
                                                 "--report", dir.path("report.json"), input])
            #expect(result.status == 65)
            #expect(try ReportFile.counts(at: dir.path("report.json")) == Self.expected)
            #expect(try dir.listing() == ["events.ndjson", "report.json"])
        }
    }

    @Test func reportOnNoValidEvents() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", "\n[]\n")
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "5", "--report", dir.path("report.json"), input])
            #expect(result.status == 65)
            #expect(try ReportFile.counts(at: dir.path("report.json"))
                    == ReportFile.Counts(validEvents: 0, hilarious: 0, horrible: 0, neutral: 0, badLines: 1,
                                         distinctJokes: 0, inputBytes: 4))
        }
    }

    @Test func reportAgreesWithTheReference() throws {
        var reference = ReferenceAggregator()
        reference.add(file: Array(Self.text.utf8), path: "events.ndjson")
        #expect(ReportFile.Counts(reference.summary) == Self.expected)
    }
}
