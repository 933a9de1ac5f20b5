import Foundation
import Testing

/// `--stats PATH`: one NDJSON line per joke with a counted event, in byte order of id, the mean
/// correctly rounded; written together with the document, so a failing run replaces neither.
@Suite("Backfill: --stats")
struct StatsTests {
    typealias E = Backfill

    static func line(_ joke: String, _ h: Int, _ b: Int, _ n: Int, _ mean: String) -> String {
        "{\"joke_id\": \"\(joke)\", \"hilarious\": \(h), \"horrible\": \(b), \"neutral\": \(n), "
            + "\"ratings\": \(h + b + n), \"mean_rating\": \(mean)}\n"
    }

    /// Means of small sets, each the nearest double to the exact quotient (as `Double(p) / Double(q)`
    /// gives for these integers), written in the shortest form that reads back the same.
    @Test func meanIsTheNearestDouble() throws {
        let groups: [(String, [String], String)] = [
            ("a", ["1", "2", "5"], "2.6666666666666665"),   // 8/3
            ("b", ["2.5", "3.5"], "3"),
            ("c", ["4", "4"], "4"),
            ("d", ["1", "1", "5"], "2.3333333333333335"),   // 7/3
            ("e", ["1", "1", "5", "5", "1"], "2.6"),         // 13/5
            ("f", ["5", "5", "5", "5", "1", "4"], "4.166666666666667"), // 25/6
            ("g", ["2.5"], "2.5"),
            ("h", ["1", "2", "2", "5", "5"], "3"),
            ("i", ["4.5", "5", "3"], "4.166666666666667"),   // 12.5/3
        ]
        let input = groups.flatMap { g in g.1.map { E.event(g.0, $0) } }.joined()
        let expected = groups.map { g -> String in
            let r = g.1.map { Double($0)! }
            return Self.line(g.0, r.filter { $0 >= 4 }.count, r.filter { $0 <= 2 }.count,
                             r.filter { $0 > 2 && $0 < 4 }.count, g.2)
        }.joined()
        for threads in ["1", "2"] {
            let run = try E.run(["--threads", threads], files: [("a.ndjson", input)], stats: true)
            #expect(run.status == 0, "\(run.stderr)")
            let got = run.stats ?? []
            #expect(firstDifference(Array(expected.utf8), got) == nil, "\(firstDifference(Array(expected.utf8), got) ?? "")")
        }
    }

    /// Byte order of id (upper case before lower, shorter prefix first, UTF-8 bytes), only jokes
    /// with a counted event, and the filters and dedupe honoured.
    @Test func orderAndSelection() throws {
        let input = E.event("b", "5", device: "D", week: "2026-W07", timestamp: E.rfc("2026-02-10T00:00:00Z"))
            + E.event("b", "1", device: "D", week: "2026-W07", timestamp: E.rfc("2026-02-11T00:00:00Z"))
            + E.event("B", "3", device: "D", week: "2026-W07", timestamp: E.rfc("2026-02-10T00:00:00Z"))
            + E.event("bb", "4", device: "D", week: "2026-W07", timestamp: E.rfc("2026-02-10T00:00:00Z"))
            + E.event("é", "2", device: "D", week: "2026-W07", timestamp: E.rfc("2026-02-10T00:00:00Z"))
            + E.event("z", "5", device: "D", week: "2026-W08", timestamp: E.rfc("2026-02-17T00:00:00Z"))
        let run = try E.run(["--week", "2026-W07", "--dedupe", "device"], files: [("a.ndjson", input)], stats: true)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = Self.line("B", 0, 0, 1, "3") + Self.line("b", 0, 1, 0, "1") + Self.line("bb", 1, 0, 0, "4")
            + Self.line("é", 0, 1, 0, "2")
        #expect(run.stats == Array(expected.utf8), "\(String(decoding: run.stats ?? [], as: UTF8.self))")
    }

    /// With --allow-empty and nothing counted, the stats file is written and empty.
    @Test func emptyRunWritesEmptyStats() throws {
        let run = try E.run(["--week", "2026-W07", "--allow-empty"], files: [("a.ndjson", E.event("a", "5"))], stats: true)
        #expect(run.status == 0)
        #expect(run.stats == [])
    }

    /// A run that fails leaves the document and the stats file exactly as they were, and no
    /// temporary file behind.
    @Test(arguments: [
        ("bad line", ["--dedupe", "device"], Int32(65)),
        ("nothing in the week", ["--week", "2026-W07"], Int32(65)),
        ("everything after --as-of", ["--as-of", "2000-01-01T00:00:00Z"], Int32(65)),
        ("missing input", ["@in/missing.ndjson"], Int32(66)),
    ])
    func failingRunKeepsBothOutputs(_ name: String, _ arguments: [String], _ status: Int32) throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in/a.ndjson", E.event("a", "5", device: "D", timestamp: E.rfc("2025-01-01T00:00:00Z"))
                                        + E.event("b", "1"))
            let oldDoc = Array("old document\n".utf8), oldStats = Array("old stats\n".utf8)
            try dir.write("out/doc.json", oldDoc)
            try dir.write("out/stats.ndjson", oldStats)
            let operands = arguments.map { $0.hasPrefix("@") ? dir.path(String($0.dropFirst())) : $0 }
            let run = try RankingsBinary.run(["aggregate", "--max-invalid", "0", "-o", dir.path("out/doc.json"),
                                              "--stats", dir.path("out/stats.ndjson")] + operands + [input])
            #expect(run.status == status, "\(name): \(run.stderrText)")
            #expect(try dir.read("out/doc.json") == oldDoc)
            #expect(try dir.read("out/stats.ndjson") == oldStats)
            #expect(try dir.listing("out") == ["doc.json", "stats.ndjson"])
        }
    }

    /// --stats in a directory that does not exist: 73, and the document is not replaced either.
    @Test func unwritableStatsKeepsTheDocument() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in/a.ndjson", E.event("a", "5"))
            let oldDoc = Array("old document\n".utf8)
            try dir.write("out/doc.json", oldDoc)
            let run = try RankingsBinary.run(["aggregate", "-o", dir.path("out/doc.json"),
                                              "--stats", dir.path("missing/stats.ndjson"), input])
            #expect(run.status == 73, "\(run.stderrText)")
            #expect(try dir.read("out/doc.json") == oldDoc)
            #expect(try dir.listing("out") == ["doc.json"])
            // And the other way round: the document cannot be created, the stats file stays.
            try dir.write("out/stats.ndjson", "old stats\n")
            let other = try RankingsBinary.run(["aggregate", "-o", dir.path("missing/doc.json"),
                                                "--stats", dir.path("out/stats.ndjson"), input])
            #expect(other.status == 73, "\(other.stderrText)")
            #expect(try dir.read("out/stats.ndjson") == Array("old stats\n".utf8))
            #expect(try dir.listing("out") == ["doc.json", "stats.ndjson"])
        }
    }

    @Test func statsMustNameItsOwnFile() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in/a.ndjson", E.event("a", "5"))
            let run = try RankingsBinary.run(["aggregate", "-o", dir.path("x"), "--stats", dir.path("x"), input])
            #expect(run.status == 64)
            let empty = try RankingsBinary.run(["aggregate", "--stats", "", input])
            #expect(empty.status == 64)
        }
    }

    /// Stats go beside a document on standard output just as well.
    @Test func statsWithDocumentOnStdout() throws {
        let run = try E.run([], files: [("a.ndjson", E.event("a", "5") + E.event("a", "2"))], stats: true)
        #expect(run.status == 0)
        #expect(run.stdout == E.document(hilarious: [("a", 1)], horrible: [("a", 1)]))
        #expect(run.stats == Array(Self.line("a", 1, 1, 0, "3.5").utf8))
    }
}
