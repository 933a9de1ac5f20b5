import Foundation
import Testing

/// The sample data set and its golden document, the lead's canonical end-to-end example.
@Suite("Golden sample document")
struct GoldenSampleTests {
    static let input = RankingsBinary.packageRoot.appendingPathComponent("sample-data/rating_events.ndjson")
    static let golden = RankingsBinary.packageRoot.appendingPathComponent("sample-data/expected/all_time.json")

    @Test func stdoutMatchesGoldenDocument() throws {
        let expected = try Array(Data(contentsOf: Self.golden))
        let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, Self.input.path])
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(firstDifference(expected, Array(result.stdout)) == nil,
                "\(firstDifference(expected, Array(result.stdout)) ?? "")")
    }

    @Test func outputFileMatchesGoldenDocument() throws {
        let expected = try Array(Data(contentsOf: Self.golden))
        try ScratchDirectory.with { dir in
            let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt,
                                                 "-o", dir.path("all_time.json"), Self.input.path])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.read("all_time.json") == expected)
            #expect(try dir.listing() == ["all_time.json"])
        }
    }

    /// Keeps the golden honest: an independent implementation must reach the same bytes.
    @Test func referenceMatchesGoldenDocument() throws {
        var reference = ReferenceAggregator()
        reference.add(file: try Array(Data(contentsOf: Self.input)), path: Self.input.path)
        #expect(reference.summary.badLines == 0)
        let expected = try Array(Data(contentsOf: Self.golden))
        #expect(firstDifference(expected, reference.document(top: 10, computedAt: fixedComputedAt)) == nil)
    }
}
