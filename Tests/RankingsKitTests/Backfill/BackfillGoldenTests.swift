import Foundation
import Testing

/// The backfill golden files in `sample-data/backfill/`, made from `sample-data/rating_events.ndjson`
/// by the commands in `sample-data/backfill/README.md` and checked independently by
/// `sample-data/backfill/crosscheck.py`.
@Suite("Backfill: golden documents and stats")
struct BackfillGoldenTests {
    static let sample = RankingsBinary.packageRoot.appendingPathComponent("sample-data/rating_events.ndjson").path
    static let dir = RankingsBinary.packageRoot.appendingPathComponent("sample-data/backfill")

    struct Golden: Sendable, CustomTestStringConvertible {
        var file: String
        var arguments: [String]
        /// When set, the stats golden the same run must write.
        var stats: String? = nil
        var testDescription: String { file }
    }

    static let goldens: [Golden] = [
        Golden(file: "week-2025-W42.json", arguments: ["--week", "2025-W42"]),
        Golden(file: "as-of-2025-06-01.json", arguments: ["--as-of", "2025-06-01T00:00:00Z"]),
        Golden(file: "since-30d.json", arguments: ["--since", "-30d"]),
        Golden(file: "since-30d.week-document.json", arguments: ["--since", "-30d", "--week-document"]),
        Golden(file: "dedupe-device.json", arguments: ["--dedupe", "device"]),
        Golden(file: "../expected/all_time.json", arguments: [], stats: "stats.ndjson"),
        Golden(file: "week-2025-W42.dedupe-device.json", arguments: ["--week", "2025-W42", "--dedupe", "device"],
               stats: "week-2025-W42.dedupe-device.stats.ndjson"),
    ]

    static func golden(_ name: String) throws -> [UInt8] {
        try Array(Data(contentsOf: dir.appendingPathComponent(name)))
    }

    @Test(arguments: goldens)
    func matchesGolden(_ g: Golden) throws {
        let expected = try Self.golden(g.file)
        for threads in ["1", "2"] {
            try ScratchDirectory.with { scratch in
                var words = ["aggregate", "-q", "--computed-at", fixedComputedAt, "--threads", threads,
                             "-o", scratch.path("doc.json")] + g.arguments
                if g.stats != nil { words += ["--stats", scratch.path("stats.ndjson")] }
                let run = try RankingsBinary.run(words + [Self.sample])
                #expect(run.status == 0, "\(run.stderrText)")
                #expect(run.stdout.isEmpty && run.stderr.isEmpty)
                let doc = try scratch.read("doc.json")
                #expect(firstDifference(expected, doc) == nil, "threads \(threads): \(firstDifference(expected, doc) ?? "")")
                if let stats = g.stats {
                    let want = try Self.golden(stats), got = try scratch.read("stats.ndjson")
                    #expect(firstDifference(want, got) == nil, "threads \(threads): \(firstDifference(want, got) ?? "")")
                }
            }
        }
    }

    /// The sample's report under each option: the numbers the README section quotes.
    @Test func sampleReportCounts() throws {
        let cases: [([String], [Int?])] = [
            (["--as-of", "2025-06-01T00:00:00Z"], [5000, 2376, 2624, 0, 0]),
            (["--since", "-30d"], [5000, 305, 4695, 0, 0]),
            (["--since", "2026-01-19T05:00:00Z"], [5000, 305, 4695, 0, 0]),
            (["--week", "2025-W42"], [5000, 90, 4910, 0, 0]),
            (["--dedupe", "device"], [5000, 4577, 0, 423, 0]),
            (["--dedupe", "id"], [5000, 5000, 0, 0, 0]),
            (["--week", "2025-W42", "--dedupe", "device"], [5000, 90, 4910, 0, 0]),
        ]
        for (arguments, counts) in cases {
            let run = try Backfill.run(arguments, files: [], inputs: [Self.sample])
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.counts == counts, "\(arguments)")
        }
    }

    /// `--dedupe id` on the sample given twice gives the plain all-time document.
    @Test func sampleTwiceWithDedupeIDIsTheAllTimeDocument() throws {
        let expected = try Self.golden("../expected/all_time.json")
        let run = try Backfill.run(["--dedupe", "id"], files: [], inputs: [Self.sample, Self.sample])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(firstDifference(expected, run.stdout) == nil, "\(firstDifference(expected, run.stdout) ?? "")")
        #expect(run.counts == [10000, 5000, 0, 5000, 0])
    }
}
