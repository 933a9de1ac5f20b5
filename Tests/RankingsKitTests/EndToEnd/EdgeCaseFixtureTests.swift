import Foundation
import Testing

/// Each fixture in `sample-data/edge-cases/` against its expected document, byte for byte.
@Suite("Edge-case fixtures")
struct EdgeCaseFixtureTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        var name: String
        var extraArguments: [String] = []
        var testDescription: String { name }
    }

    /// The flags here must match `sample-data/edge-cases/README.md`.
    static let fixtures: [Fixture] = [
        Fixture(name: "escapes"), Fixture(name: "ties"), Fixture(name: "crlf-bom-blank"),
        Fixture(name: "ratings"), Fixture(name: "duplicates-nested"),
        Fixture(name: "bad-lines", extraArguments: ["--max-invalid", "19"]),
        Fixture(name: "long-ids", extraArguments: ["--max-invalid", "7"]),
    ]

    static let directory = RankingsBinary.packageRoot.appendingPathComponent("sample-data/edge-cases")

    static func bytes(_ name: String) throws -> [UInt8] {
        try Array(Data(contentsOf: directory.appendingPathComponent(name)))
    }

    @Test("rankings reproduces the expected document", arguments: fixtures)
    func rankingsMatchesFixture(_ fixture: Fixture) throws {
        let input = Self.directory.appendingPathComponent("\(fixture.name).ndjson").path
        let expected = try Self.bytes("\(fixture.name).expected.json")
        let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "-q"]
                                            + fixture.extraArguments + [input])
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(firstDifference(expected, Array(result.stdout)) == nil,
                "\(fixture.name): \(firstDifference(expected, Array(result.stdout)) ?? "")")
    }

    /// The expected files are also checked against the reference, so a hand edit cannot drift.
    @Test("the reference agrees with each expected document", arguments: fixtures)
    func referenceMatchesFixture(_ fixture: Fixture) throws {
        var reference = ReferenceAggregator()
        reference.add(file: try Self.bytes("\(fixture.name).ndjson"), path: fixture.name)
        let expected = try Self.bytes("\(fixture.name).expected.json")
        #expect(firstDifference(expected, reference.document(top: 10, computedAt: fixedComputedAt)) == nil)
    }

    /// One more bad line than allowed fails the run, so the fixture's count is exact.
    @Test func badLinesFixtureHasExactlyNineteenBadLines() throws {
        let input = Self.directory.appendingPathComponent("bad-lines.ndjson").path
        let tooStrict = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "--max-invalid", "18", "-q", input])
        #expect(tooStrict.status == 65)
        #expect(tooStrict.stdout.isEmpty)

        let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "--max-invalid", "19", "-q", input])
        let lines = result.stderrLines
        try #require(lines.count == 11, "stderr: \(result.stderrText)")
        for (offset, line) in lines.prefix(10).enumerated() {
            let number = offset + 2
            let kind = number <= 10 ? "malformed JSON: " : "invalid record: "
            #expect(line.hasPrefix("\(input):\(number): \(kind)"), "\(line)")
        }
        #expect(lines[10] == "rankings: 9 more bad lines not shown")
    }

    /// Every joke id of 1,500 bytes or more is refused with the same reason, however it is
    /// spelled (ASCII, 2- and 4-byte characters, escapes of each); those of 1,499 bytes count.
    @Test func longIDsFixtureRefusesEveryIDOf1500Bytes() throws {
        let input = Self.directory.appendingPathComponent("long-ids.ndjson").path
        let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "--max-invalid", "7", input])
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let reason = "invalid record: joke_id is 1500 bytes: Firestore cannot query a value of 1,500 bytes or more"
        #expect(result.stderrLines.dropLast() == [2, 4, 6, 8, 10, 11, 14].map { "\(input):\($0): \(reason)" })
        #expect(result.stderrLines.last?.hasPrefix("rankings: 8 events (4 hilarious, 3 horrible, 1 neutral), 7 bad lines, 5 jokes, ") == true,
                "\(result.stderrText)")
        #expect(try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "--max-invalid", "6", "-q", input]).status == 65)
    }
}
