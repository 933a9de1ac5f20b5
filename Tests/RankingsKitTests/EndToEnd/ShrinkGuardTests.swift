import Foundation
import Testing

/// `--max-drop PERCENT` against the built binary, at its edges.
@Suite("--max-drop")
struct ShrinkGuardTests {
    /// An export with `hilarious` Hilarious, `horrible` Horrible and `neutral` neutral events.
    static func export(hilarious: Int, horrible: Int, neutral: Int = 0) -> String {
        String(repeating: eventLine("h", "5"), count: hilarious) + String(repeating: eventLine("x", "1"), count: horrible)
            + String(repeating: eventLine("n", "3"), count: neutral)
    }

    static func document(weekID: String, hilarious: Int, horrible: Int) -> String {
        """
        {
          "week_id": "\(weekID)",
          "hilarious": [],
          "horrible": [],
          "total_hilarious_ratings": \(hilarious),
          "total_horrible_ratings": \(horrible),
          "computed_at": "2026-02-18T05:00:00Z"
        }

        """
    }

    /// Runs over an export with the given counts, replacing `doc.json` (whatever the test put there).
    static func run(_ dir: ScratchDirectory, maxDrop: String, hilarious: Int, horrible: Int, neutral: Int = 0,
                    extra: [String] = []) throws -> RankingsBinary.Result {
        let input = try dir.write("in.ndjson", export(hilarious: hilarious, horrible: horrible, neutral: neutral))
        return try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--max-drop", maxDrop,
                                       "-o", dir.path("doc.json")] + extra + [input])
    }

    struct Edge: Sendable, CustomTestStringConvertible {
        var name: String
        var maxDrop: String
        var old: (hilarious: Int, horrible: Int)
        var new: (hilarious: Int, horrible: Int)
        var refused: Bool
        var testDescription: String { name }
    }

    static let edges: [Edge] = [
        Edge(name: "exactly PERCENT", maxDrop: "1", old: (600, 400), new: (600, 390), refused: false),
        Edge(name: "just over PERCENT", maxDrop: "1", old: (600, 400), new: (600, 389), refused: true),
        Edge(name: "exactly a decimal PERCENT", maxDrop: "0.5", old: (600, 400), new: (595, 400), refused: false),
        Edge(name: "just over a decimal PERCENT", maxDrop: "0.5", old: (600, 400), new: (594, 400), refused: true),
        Edge(name: "the same totals with 0", maxDrop: "0", old: (600, 400), new: (600, 400), refused: false),
        Edge(name: "the same sum, moved between kinds", maxDrop: "0", old: (600, 400), new: (500, 500), refused: false),
        Edge(name: "one vote fewer with 0", maxDrop: "0", old: (600, 400), new: (600, 399), refused: true),
        Edge(name: "growth", maxDrop: "0", old: (600, 400), new: (700, 400), refused: false),
        Edge(name: "everything gone but one vote, with 100", maxDrop: "100", old: (600, 400), new: (1, 0), refused: false),
        Edge(name: "an old document with no votes", maxDrop: "0", old: (0, 0), new: (1, 0), refused: false),
    ]

    @Test(arguments: edges)
    func edge(_ edge: Edge) throws {
        try ScratchDirectory.with { dir in
            let old = Self.document(weekID: "all_time", hilarious: edge.old.hilarious, horrible: edge.old.horrible)
            try dir.write("doc.json", old)
            // Neutral events never count toward the totals the guard compares.
            let result = try Self.run(dir, maxDrop: edge.maxDrop, hilarious: edge.new.hilarious,
                                      horrible: edge.new.horrible, neutral: 7)
            if edge.refused {
                #expect(result.status == 65, "\(result.stderrText)")
                #expect(try dir.read("doc.json") == Array(old.utf8))
            } else {
                #expect(result.status == 0, "\(result.stderrText)")
                #expect(try dir.read("doc.json") != Array(old.utf8))
                #expect(result.stderrText == "")
            }
            #expect(try dir.listing() == ["doc.json", "in.ndjson"])
        }
    }

    @Test func refusalNamesBothTotalsAndKeepsEveryOutputButReportAndMetrics() throws {
        try ScratchDirectory.with { dir in
            let old = Self.document(weekID: "all_time", hilarious: 600, horrible: 400)
            try dir.write("doc.json", old)
            try dir.write("stats.ndjson", "old stats\n")
            let result = try Self.run(dir, maxDrop: "1", hilarious: 500, horrible: 400,
                                      extra: ["--stats", dir.path("stats.ndjson"), "--report", dir.path("report.json"),
                                              "--metrics", dir.path("rankings.prom")])
            #expect(result.status == 65)
            #expect(result.stderrLines == [
                "rankings: error: --max-drop 1: the new document has 900 ratings (total_hilarious_ratings + "
                    + "total_horrible_ratings), 10.00% fewer than the 1000 in \(dir.path("doc.json")) (week_id all_time); "
                    + "nothing written. If the drop is real, see \"Accepting a drop\" in rankings(1)",
            ])
            #expect(try dir.read("doc.json") == Array(old.utf8))
            #expect(try dir.read("stats.ndjson") == Array("old stats\n".utf8))
            let report = try ReportFile.object(at: dir.path("report.json"))
            #expect(report["exit_status"] as? Int == 65)
            #expect(report["hilarious"] as? Int == 500)
            let metrics = String(decoding: try dir.read("rankings.prom"), as: UTF8.self)
            #expect(metrics.contains("\nrankings_last_run_exit_status 65\n"))
            #expect(metrics.contains("\nrankings_last_run_document_ratings{kind=\"hilarious\"} 500\n"))
            #expect(try dir.listing() == ["doc.json", "in.ndjson", "rankings.prom", "report.json", "stats.ndjson"])
        }
    }

    @Test func aDifferentWeekIsNotCompared() throws {
        try ScratchDirectory.with { dir in
            try dir.write("doc.json", Self.document(weekID: "2025-W42", hilarious: 600, horrible: 400))
            let result = try Self.run(dir, maxDrop: "1", hilarious: 1, horrible: 0)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrText == "")
        }
    }

    @Test func aWeeklyRunComparesWithTheSameWeek() throws {
        try ScratchDirectory.with { dir in
            try dir.write("doc.json", Self.document(weekID: "2025-W42", hilarious: 600, horrible: 400))
            let input = try dir.write("in.ndjson", "{\"joke_id\": \"a\", \"rating\": 5, \"week_id\": \"2025-W42\"}\n")
            let result = try RankingsBinary.run(["aggregate", "-q", "--week", "2025-W42", "--max-drop", "50",
                                                 "-o", dir.path("doc.json"), input])
            #expect(result.status == 65)
            #expect(result.stderrText.contains("(week_id 2025-W42)"))
        }
    }

    @Test func noOldDocumentIsAFirstRun() throws {
        try ScratchDirectory.with { dir in
            let result = try Self.run(dir, maxDrop: "0", hilarious: 1, horrible: 0)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrText == "")
            #expect(try dir.listing() == ["doc.json", "in.ndjson"])
        }
    }

    /// A target that is not a file (a pipe, a device) is refused before anything is read: the
    /// guard would otherwise read a pipe the run itself writes, and wait for ever.
    @Test func anOutputThatIsNotAFileIsRefused() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in.ndjson", Self.export(hilarious: 2, horrible: 1))
            let result = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--max-drop", "1",
                                                 "-o", "/dev/stdout", input])
            #expect(result.status == 73, "\(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: cannot create /dev/stdout: a link to a FIFO, not a regular file"])
            #expect(result.stdout.isEmpty)
        }
    }

    /// A damaged document must not block every night to come: the run replaces it, saying why
    /// it could not compare.
    @Test(arguments: [
        ("not JSON", "{\"week_id\": \"all_time\", \"total_hilarious_ratings\": 9", "not JSON"),
        ("an empty file", "", "not JSON"),
        ("not an object", "[1, 2]\n", "not a JSON object"),
        ("no week_id", "{\"total_hilarious_ratings\": 9, \"total_horrible_ratings\": 9}\n", "no string week_id"),
        ("a total that is not a whole number",
         "{\"week_id\": \"all_time\", \"total_hilarious_ratings\": 9.5, \"total_horrible_ratings\": 9}\n",
         "total_hilarious_ratings is not a whole number"),
    ])
    func anUnreadableOldDocumentIsReplacedWithAWarning(_ name: String, _ content: String, _ reason: String) throws {
        try ScratchDirectory.with { dir in
            try dir.write("doc.json", content)
            let result = try Self.run(dir, maxDrop: "0", hilarious: 1, horrible: 0)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrLines.count == 1)
            #expect(result.stderrText.hasPrefix("rankings: warning: --max-drop: cannot compare with \(dir.path("doc.json")) (\(reason)"),
                    "\(result.stderrText)")
            #expect(result.stderrText.hasSuffix("); replacing it\n"))
            #expect(try dir.read("doc.json") != Array(content.utf8))
        }
    }

    /// 1 of 3 is 33.333…%: refused by 33.33, and said as 33.34%, never as the allowed 33.33%.
    @Test func theRefusedShareIsRoundedUp() throws {
        try ScratchDirectory.with { dir in
            try dir.write("doc.json", Self.document(weekID: "all_time", hilarious: 2, horrible: 1))
            let result = try Self.run(dir, maxDrop: "33.33", hilarious: 1, horrible: 1)
            #expect(result.status == 65)
            #expect(result.stderrText.contains("the new document has 2 ratings (total_hilarious_ratings + "
                + "total_horrible_ratings), 33.34% fewer than the 3 in"), "\(result.stderrText)")
        }
    }

    /// The guard reads back what `--format firestore` wrote: switching formats must not disarm it.
    @Test func aFirestoreBodyIsComparedLikeTheDocument() throws {
        try ScratchDirectory.with { dir in
            let old = try dir.write("old.ndjson", Self.export(hilarious: 600, horrible: 400))
            let first = try RankingsBinary.run(["aggregate", "-q", "--format", "firestore", "-o", dir.path("doc.json"), old])
            #expect(first.status == 0, "\(first.stderrText)")
            let body = try dir.read("doc.json")
            let refused = try Self.run(dir, maxDrop: "1", hilarious: 600, horrible: 389, extra: ["--format", "firestore"])
            #expect(refused.status == 65)
            #expect(refused.stderrText.contains("the new document has 989 ratings"), "\(refused.stderrText)")
            #expect(refused.stderrText.contains("fewer than the 1000 in"), "\(refused.stderrText)")
            #expect(try dir.read("doc.json") == body)
            let accepted = try Self.run(dir, maxDrop: "1", hilarious: 600, horrible: 390, extra: ["--format", "firestore"])
            #expect(accepted.status == 0, "\(accepted.stderrText)")
        }
    }

    @Test func withoutTheOptionNothingIsCompared() throws {
        try ScratchDirectory.with { dir in
            try dir.write("doc.json", Self.document(weekID: "all_time", hilarious: 600, horrible: 400))
            let input = try dir.write("in.ndjson", Self.export(hilarious: 1, horrible: 0))
            let result = try RankingsBinary.run(["aggregate", "-q", "-o", dir.path("doc.json"), input])
            #expect(result.status == 0, "\(result.stderrText)")
        }
    }

    @Test func theLastMaxDropWins() throws {
        try ScratchDirectory.with { dir in
            try dir.write("doc.json", Self.document(weekID: "all_time", hilarious: 600, horrible: 400))
            let result = try Self.run(dir, maxDrop: "1", hilarious: 1, horrible: 0, extra: ["--max-drop", "100"])
            #expect(result.status == 0, "\(result.stderrText)")
        }
    }

    @Test(arguments: [["--max-drop", "101"], ["--max-drop", "-1"], ["--max-drop", "abc"], ["--max-drop", "1.1234567"],
                      ["--max-drop", "1e1"], ["--max-drop", ".5"], ["--max-drop", "nan"], ["--max-drop", ""]])
    func badValuesAreUsageErrors(_ arguments: [String]) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in.ndjson", Self.export(hilarious: 1, horrible: 0))
            let result = try RankingsBinary.run(["aggregate"] + arguments + ["-o", dir.path("doc.json"), input])
            #expect(result.status == 64, "\(result.stderrText)")
            #expect(try dir.listing() == ["in.ndjson"])
        }
    }

    @Test func withoutAnOutputItIsAUsageError() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in.ndjson", Self.export(hilarious: 1, horrible: 0))
            let result = try RankingsBinary.run(["aggregate", "--max-drop", "1", input])
            #expect(result.status == 64)
            #expect(result.stderrText.contains("--max-drop compares with the --output document"))
        }
    }
}
