import Foundation
import Testing

/// `rankings check` as CI runs it: each exit status with its exact stderr, and nothing on stdout.
@Suite("Check: command line and exit statuses")
struct CheckCommandTests {
    static let valid = CheckDocumentBuilder().json
    static let invalid = CheckDocumentBuilder().with("week_id", "\"\"").json

    /// Runs `rankings check ARGS` in a scratch directory holding `files`.
    func check(_ arguments: [String], files: [String: String] = [:], stdin: String? = nil) throws -> RankingsBinary.Result {
        try ScratchDirectory.with { dir in
            for (name, text) in files { try dir.write(name, text) }
            return try RankingsBinary.run(["check"] + arguments, stdin: stdin.map { Data($0.utf8) }, directory: dir.url)
        }
    }

    @Test func validDocumentExitsZeroWithOneSummaryLine() throws {
        let result = try check(["docs/all_time.json"], files: ["docs/all_time.json": Self.valid])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["rankings: 1 document checked, all valid"])
    }

    @Test func quietValidRunPrintsNothing() throws {
        let result = try check(["-q", "a.json", "b.json"], files: ["a.json": Self.valid, "b.json": Self.valid])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.isEmpty)
    }

    @Test func invalidDocumentExits65WithItsProblemsNamedAsGiven() throws {
        let result = try check(["./ok.json", "docs/../bad.json"],
                               files: ["ok.json": Self.valid, "docs/ok.json": Self.valid,
                                       "bad.json": Self.invalid.replacingOccurrences(of: "\"rank\": 2", with: "\"rank\": 3")])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == [
            "docs/../bad.json: $.week_id: expected a non-empty string, found an empty string",
            "docs/../bad.json: $.hilarious[1].rank: expected 2 (ranks run 1, 2, 3… down the list), found 3",
            "rankings: 2 documents checked: 1 valid, 1 invalid",
        ])
    }

    @Test func quietKeepsTheProblems() throws {
        let result = try check(["-q", "bad.json"], files: ["bad.json": Self.invalid])
        #expect(result.status == 65)
        #expect(result.stderrLines == ["bad.json: $.week_id: expected a non-empty string, found an empty string"])
    }

    @Test func notJSONIsOneProblem() throws {
        let result = try check(["-q", "bad.json"], files: ["bad.json": "{\"week_id\": \"all_time\",}\n"])
        #expect(result.status == 65)
        #expect(result.stderrLines == ["bad.json: $: invalid JSON: expected a string key, found '}' at line 1, column 24 (byte 23)"])
    }

    /// Lines and columns count from 1, columns in characters: the é before the error is one column
    /// but two bytes.
    @Test func invalidJSONIsPlacedByLineAndColumn() throws {
        let text = "{\n  \"week_id\": \"é\",\n}\n"
        let result = try check(["-q", "bad.json"], files: ["bad.json": text])
        #expect(result.stderrLines == ["bad.json: $: invalid JSON: expected a string key, found '}' at line 3, column 1 (byte 21)"])
        let body = try check(["-q", "--format", "firestore", "body.json"], files: ["body.json": "{\"fields\": {\"é\": 1,}}"])
        #expect(body.stderrLines == ["body.json: $: invalid JSON: expected a string key, found '}' at line 1, column 20 (byte 20)"])
    }

    @Test func missingDocumentExits66AndTheOthersAreStillChecked() throws {
        let result = try check(["missing.json", "bad.json", "ok.json"], files: ["bad.json": Self.invalid, "ok.json": Self.valid])
        #expect(result.status == 66)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == [
            "rankings: error: cannot read missing.json: No such file or directory",
            "bad.json: $.week_id: expected a non-empty string, found an empty string",
            "rankings: 3 documents checked: 1 valid, 1 invalid, 1 unreadable",
        ])
    }

    @Test func directoryExits66() throws {
        let result = try check(["-q", "docs"], files: ["docs/a.json": Self.valid])
        #expect(result.status == 66)
        #expect(result.stderrLines == ["rankings: error: cannot read docs: Is a directory"])
    }

    @Test func standardInputIsRead() throws {
        let good = try check(["-"], stdin: Self.valid)
        #expect(good.status == 0)
        #expect(good.stderrLines == ["rankings: 1 document checked, all valid"])
        let bad = try check(["-q", "-"], stdin: Self.invalid)
        #expect(bad.status == 65)
        #expect(bad.stderrLines == ["-: $.week_id: expected a non-empty string, found an empty string"])
    }

    @Test func topSetsTheLongestListAllowed() throws {
        let files = ["a.json": Self.valid]
        let tooShort = try check(["-q", "--top", "1", "a.json"], files: files)
        #expect(tooShort.status == 65)
        #expect(tooShort.stderrLines == ["a.json: $.hilarious: has 2 entries, more than --top 1"])
        #expect(try check(["-q", "--top=2", "a.json"], files: files).status == 0)
    }

    @Test func allowExtraKeys() throws {
        let files = ["a.json": CheckDocumentBuilder().with("source", "\"backfill\"").json]
        let strict = try check(["-q", "a.json"], files: files)
        #expect(strict.status == 65)
        #expect(strict.stderrLines == ["a.json: $.source: unknown key (--allow-extra-keys permits it)"])
        #expect(try check(["-q", "--allow-extra-keys", "a.json"], files: files).status == 0)
    }

    struct Usage: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var error: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let usageErrors: [Usage] = [
        Usage(arguments: [], error: "no DOC given"),
        Usage(arguments: ["-q"], error: "no DOC given"),
        Usage(arguments: ["--strict", "a.json"], error: "unknown option --strict"),
        Usage(arguments: ["--top", "0", "a.json"], error: "--top takes a whole number from 1 to 1000, not '0'"),
        Usage(arguments: ["--top", "1001", "a.json"], error: "--top takes a whole number from 1 to 1000, not '1001'"),
        Usage(arguments: ["--top", "ten", "a.json"], error: "--top takes a whole number from 1 to 1000, not 'ten'"),
        Usage(arguments: ["a.json", "--top"], error: "--top needs a value"),
        Usage(arguments: ["--allow-extra-keys=yes", "a.json"], error: "--allow-extra-keys takes no value"),
        Usage(arguments: ["-", "-"], error: "'-' (standard input) may be given only once"),
    ]

    @Test("usage errors exit 64 before reading anything", arguments: usageErrors)
    func usageError(_ u: Usage) throws {
        let result = try check(u.arguments, files: ["a.json": Self.valid])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == [
            "rankings: error: \(u.error)", "usage: rankings check [options] DOC...", "run 'rankings --help' for more",
        ])
    }

    @Test func helpGoesToStdout() throws {
        let result = try check(["--help"])
        #expect(result.status == 0)
        #expect(result.stdoutText.hasPrefix("usage: rankings check [options] DOC...\n"))
        #expect(result.stderr.isEmpty)
    }

    /// `--` lets a document be named like an option.
    @Test func doubleDashEndsOptions() throws {
        let result = try check(["-q", "--", "-q"], files: ["-q": Self.valid])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
    }
}
