import Foundation
import Testing

/// The promise that ties the two commands together: every document `rankings aggregate` writes
/// passes `rankings check` with the same `--top`, `--format` and (for a week's) `--time-zone`.
@Suite("Check: every document aggregate writes passes")
struct AggregateOutputCheckTests {
    struct Input: Sendable, CustomTestStringConvertible {
        var path: String
        var extraArguments: [String] = []
        var checkArguments: [String] = []
        var testDescription: String { ([path] + extraArguments).joined(separator: " ") }
    }

    /// Flags as `sample-data/edge-cases/README.md` gives them.
    static let inputs: [Input] = [
        Input(path: "sample-data/rating_events.ndjson"),
        Input(path: "sample-data/rating_events.ndjson", extraArguments: ["--week", "2026-W07"]),
        Input(path: "sample-data/rating_events.ndjson", extraArguments: ["--since", "-30d", "--week-document"]),
        Input(path: "sample-data/rating_events.ndjson", extraArguments: ["--week-document", "--time-zone", "Europe/Berlin"],
              checkArguments: ["--time-zone", "Europe/Berlin"]),
        Input(path: "sample-data/edge-cases/escapes.ndjson"),
        Input(path: "sample-data/edge-cases/ties.ndjson"),
        Input(path: "sample-data/edge-cases/crlf-bom-blank.ndjson"),
        Input(path: "sample-data/edge-cases/ratings.ndjson"),
        Input(path: "sample-data/edge-cases/duplicates-nested.ndjson"),
        Input(path: "sample-data/edge-cases/bad-lines.ndjson", extraArguments: ["--max-invalid", "19"]),
        Input(path: "sample-data/edge-cases/long-ids.ndjson", extraArguments: ["--max-invalid", "7"]),
    ]

    static let tops = [1, 2, 10, 1000]

    @Test("aggregate then check exits 0", arguments: inputs, tops)
    func aggregatedDocumentPasses(_ input: Input, top: Int) throws {
        for format in ["json", "firestore"] {
            try ScratchDirectory.with { dir in
                let document = dir.path("doc.json")
                let source = RankingsBinary.packageRoot.appendingPathComponent(input.path).path
                let aggregate = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--top", String(top),
                                                        "--format", format, "-o", document] + input.extraArguments + [source])
                try #require(aggregate.status == 0, "aggregate failed: \(aggregate.stderrText)")
                let check = try RankingsBinary.run(["check", "-q", "--top", String(top), "--format", format]
                                                   + input.checkArguments + [document])
                #expect(check.status == 0, "\(format)")
                #expect(check.stderrText == "", "\(format)")
            }
        }
    }

    /// The check is not vacuous on real output: one entry fewer than a full list is refused.
    @Test func aFullListFailsASmallerTop() throws {
        try ScratchDirectory.with { dir in
            let document = dir.path("doc.json")
            let source = RankingsBinary.packageRoot.appendingPathComponent("sample-data/rating_events.ndjson").path
            let aggregate = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "-o", document, source])
            try #require(aggregate.status == 0, "aggregate failed: \(aggregate.stderrText)")
            let check = try RankingsBinary.run(["check", "-q", "--top", "9", "doc.json"], directory: dir.url)
            #expect(check.status == 65)
            #expect(check.stderrLines == [
                "doc.json: $.hilarious: has 10 entries, more than --top 9",
                "doc.json: $.horrible: has 10 entries, more than --top 9",
            ])
        }
    }
}
