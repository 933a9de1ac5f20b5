import Foundation
import Testing

/// The fixtures in `sample-data/migrate/`, each with the exact bytes `migrate` must write, and the
/// bundled export, whose migrated form must aggregate to the bundled golden document.
@Suite("migrate: golden files")
struct MigrateGoldenTests {
    struct Golden: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [String] = []
        var report: String
        var testDescription: String { name }
    }

    static let goldens: [Golden] = [
        Golden(name: "scale", report: Migrate.report(unchanged: 2, to5: 9, to1: 7, dropped: 6, bad: 0)),
        Golden(name: "bytes", report: Migrate.report(unchanged: 1, to5: 6, to1: 4, dropped: 1, bad: 0)),
        Golden(name: "line-ends", report: Migrate.report(unchanged: 1, to5: 2, to1: 1, dropped: 1, bad: 0)),
        Golden(name: "bad-lines", arguments: ["--max-invalid", "4"],
               report: Migrate.report(unchanged: 1, to5: 1, to1: 1, dropped: 1, bad: 4)),
    ]

    @Test("stdout holds exactly the expected bytes", arguments: goldens)
    func toStdout(_ g: Golden) throws {
        let result = try Migrate.run(g.arguments + ["-q", Migrate.fixture("\(g.name).ndjson")])
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let expected = try Migrate.bytes(at: Migrate.fixture("\(g.name).expected.ndjson"))
        #expect(firstDifference(expected, Array(result.stdout)) == nil,
                "\(g.name): \(firstDifference(expected, Array(result.stdout)) ?? "")")
    }

    @Test("-o replaces the file with exactly the expected bytes, and nothing else is left", arguments: goldens)
    func toFile(_ g: Golden) throws {
        try ScratchDirectory.with { dir in
            try dir.write("out.ndjson", "an older export\n")
            let result = try Migrate.run(g.arguments + ["-q", "-o", dir.path("out.ndjson"), Migrate.fixture("\(g.name).ndjson")])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.read("out.ndjson") == Migrate.bytes(at: Migrate.fixture("\(g.name).expected.ndjson")))
            #expect(try dir.listing() == ["out.ndjson"])
        }
    }

    @Test("--dry-run prints the counts and writes nothing", arguments: goldens)
    func dryRun(_ g: Golden) throws {
        try ScratchDirectory.with { dir in
            let result = try Migrate.run(g.arguments + ["--dry-run", "-o", dir.path("out.ndjson"),
                                                        Migrate.fixture("\(g.name).ndjson")])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText == g.report)
            #expect(try dir.listing() == [])
        }
    }

    /// Output already on the binary scale is a fixed point: a second run changes nothing.
    @Test("migrating a migrated export changes nothing", arguments: goldens)
    func idempotent(_ g: Golden) throws {
        let path = Migrate.fixture("\(g.name).expected.ndjson")
        let expected = try Migrate.bytes(at: path)
        let again = try Migrate.run(["-q", path])
        #expect(again.status == 0)
        #expect(Array(again.stdout) == expected)
        let lines = Migrate.lines(of: expected).count
        #expect(try Migrate.run(["--dry-run", path]).stdoutText
                == Migrate.report(unchanged: lines, to5: 0, to1: 0, dropped: 0, bad: 0))
    }

    @Test func summaryLineOnStderr() throws {
        let result = try Migrate.run(["--max-invalid", "4", Migrate.fixture("bad-lines.ndjson")])
        #expect(result.status == 0)
        let path = Migrate.fixture("bad-lines.ndjson")
        #expect(result.stderrLines == [
            "\(path):2: malformed JSON: expected a string key at byte 30",
            "\(path):3: invalid record: the line is not a JSON object",
            "\(path):4: invalid record: rating is not between 1 and 5",
            "\(path):6: invalid record: no joke_id",
            "rankings: 3 events written (1 unchanged, 1 rewritten to 5, 1 rewritten to 1), 1 neutral dropped, 4 bad lines",
        ])
    }

    /// The bundled export: counts checked against its rating histogram (2534 × 5, 2025 × 1,
    /// 178 × 4, 137 × 2, 126 × 3), and its migrated form aggregates to the bundled document.
    @Test func bundledExportRoundTrips() throws {
        let export = Migrate.sample("rating_events.ndjson")
        #expect(try Migrate.run(["--dry-run", export]).stdoutText
                == Migrate.report(unchanged: 4559, to5: 178, to1: 137, dropped: 126, bad: 0))
        try ScratchDirectory.with { dir in
            let migrated = dir.path("binary.ndjson")
            #expect(try Migrate.run(["-q", "-o", migrated, export]).status == 0)
            let aggregated = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, migrated])
            #expect(aggregated.status == 0, "stderr: \(aggregated.stderrText)")
            let golden = try Migrate.bytes(at: Migrate.sample("expected/all_time.json"))
            #expect(firstDifference(golden, Array(aggregated.stdout)) == nil)
            #expect(Migrate.lines(of: try dir.read("binary.ndjson")).count == 4874)
        }
    }

    /// Every `aggregate` edge case, migrated, still aggregates to its golden document.
    @Test(arguments: ["escapes", "ties", "crlf-bom-blank", "ratings", "duplicates-nested", "bad-lines", "long-ids"])
    func edgeCaseFixturesRoundTrip(_ name: String) throws {
        let input = Migrate.sample("edge-cases/\(name).ndjson")
        let tolerance = ["bad-lines": ["--max-invalid", "19"], "long-ids": ["--max-invalid", "7"]][name] ?? []
        let migrated = try Migrate.run(tolerance + ["-q", input])
        #expect(migrated.status == 0, "stderr: \(migrated.stderrText)")
        let aggregated = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "-"],
                                                stdin: migrated.stdout)
        #expect(aggregated.status == 0, "stderr: \(aggregated.stderrText)")
        let golden = try Migrate.bytes(at: Migrate.sample("edge-cases/\(name).expected.json"))
        #expect(firstDifference(golden, Array(aggregated.stdout)) == nil,
                "\(name): \(firstDifference(golden, Array(aggregated.stdout)) ?? "")")
    }
}
