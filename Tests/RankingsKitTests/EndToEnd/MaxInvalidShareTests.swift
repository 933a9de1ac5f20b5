import Foundation
import Testing
@testable import RankingsKit

/// `--max-invalid PERCENT%`: bad lines tolerated as a share of the records read (valid events
/// plus bad lines), decided exactly: the run fails when bad × 100 > PERCENT × records.
@Suite("--max-invalid as a share")
struct MaxInvalidShareTests {
    /// `valid` good lines then `bad` bad ones, and `blank` blank lines and `leftOut` documents
    /// of another collection, which are no records.
    static func input(valid: Int, bad: Int, blank: Int = 0, leftOut: Int = 0) -> String {
        String(repeating: eventLine("j", "5"), count: valid) + String(repeating: "{\"rating\": 5}\n", count: bad)
            + String(repeating: "\n", count: blank)
            + String(repeating: "{\"name\":\"projects/p/databases/d/documents/jokes/j\",\"fields\":{}}\n", count: leftOut)
    }

    static func run(_ share: String, _ text: String, report: Bool = false) throws -> (status: Int32, stderr: [String], report: [String: Any]?) {
        try ScratchDirectory.with { dir in
            _ = try dir.write("a.ndjson", text)
            let extra = report ? ["--report", dir.path("report.json")] : []
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", share, "-o", dir.path("out.json")] + extra
                                                + [dir.path("a.ndjson")])
            // A failed run writes no document.
            #expect(FileManager.default.fileExists(atPath: dir.path("out.json")) == (result.status == 0))
            return (result.status, result.stderrLines.filter { !$0.contains(": invalid record: ") && !$0.contains("more bad lines") },
                    report ? try? ReportFile.object(at: dir.path("report.json")) : nil)
        }
    }

    struct Edge: Sendable, CustomTestStringConvertible {
        var share: String
        var valid: Int
        var bad: Int
        var blank = 0
        var leftOut = 0
        var status: Int32
        var testDescription: String { "\(share) of \(valid)+\(bad) (blank \(blank), left out \(leftOut)): \(status)" }
    }

    static let edges: [Edge] = [
        // 10,000 records at 1%: 100 bad lines are tolerated, the 101st fails.
        Edge(share: "1%", valid: 9_900, bad: 100, status: 0),
        Edge(share: "1%", valid: 9_899, bad: 101, status: 65),
        Edge(share: "1%", valid: 9_900, bad: 101, status: 65),
        // 999 records at 0.5% is 4.995: 4 tolerated, never rounded up.
        Edge(share: "0.5%", valid: 995, bad: 4, status: 0),
        Edge(share: "0.5%", valid: 994, bad: 5, status: 65),
        Edge(share: "0.500000%", valid: 994, bad: 5, status: 65),
        // 1,000 records at 0.5% is exactly 5.
        Edge(share: "0.5%", valid: 995, bad: 5, status: 0),
        Edge(share: "0%", valid: 1_000, bad: 1, status: 65),
        Edge(share: "0%", valid: 1_000, bad: 0, status: 0),
        Edge(share: "100%", valid: 1, bad: 500, status: 0),
        Edge(share: "0.000001%", valid: 99_999_999 / 1_000_000, bad: 1, status: 65),
        // Blank lines and documents of other collections are no records: 2 of 100 is over 1%.
        Edge(share: "1%", valid: 98, bad: 2, blank: 100, status: 65),
        Edge(share: "1%", valid: 98, bad: 2, leftOut: 100, status: 65),
        Edge(share: "1%", valid: 99, bad: 1, blank: 100, leftOut: 100, status: 0),
        Edge(share: "2%", valid: 98, bad: 2, status: 0),
    ]

    @Test(arguments: edges)
    func edge(_ e: Edge) throws {
        let run = try Self.run(e.share, Self.input(valid: e.valid, bad: e.bad, blank: e.blank, leftOut: e.leftOut))
        #expect(run.status == e.status, "\(run.stderr)")
    }

    @Test func theMessageSaysWhatWasReadAndTolerated() throws {
        let run = try Self.run("1%", Self.input(valid: 9_899, bad: 101))
        #expect(run.status == 65)
        #expect(run.stderr == ["rankings: error: 101 bad lines of 10000 records read, more than --max-invalid 1% "
                               + "(100 tolerated); nothing written"])
    }

    /// A share keeps every bad line for the report, on success and on failure alike.
    @Test func theReportListsEveryBadLine() throws {
        let passed = try Self.run("50%", Self.input(valid: 20, bad: 20), report: true)
        #expect(passed.status == 0)
        #expect((passed.report?["refused"] as? [Any])?.count == 20)
        let failed = try Self.run("10%", Self.input(valid: 20, bad: 20), report: true)
        #expect(failed.status == 65)
        #expect((failed.report?["refused"] as? [Any])?.count == 20)
        #expect(failed.report?["bad_lines"] as? Int == 20)
    }

    /// The count form is as it was.
    @Test func aCountStaysACount() throws {
        #expect(try Self.run("3", Self.input(valid: 1, bad: 3)).status == 0)
        let run = try Self.run("2", Self.input(valid: 1, bad: 3))
        #expect(run.status == 65)
        #expect(run.stderr == ["rankings: error: 3 bad lines, more than --max-invalid 2; nothing written"])
    }

    @Test(arguments: ["101%", "-1%", "1.%", ".5%", "1.0000001%", "%", "1%%", "1 %", "1e1%", "50 %", "1.5", "-1", "", "x%"])
    func aBadValueIsAUsageError(_ text: String) throws {
        let result = try RankingsBinary.run(["aggregate", "--max-invalid", text, "/nonexistent.ndjson"])
        #expect(result.status == 64)
        #expect(result.stderrLines.first == "rankings: error: --max-invalid takes a whole number of bad lines from 0, or a share of "
                + "the records read from 0% to 100% with at most 6 decimals, like 1% or 0.5%, not '\(text)'")
    }

    /// The arithmetic itself, at sizes no test file reaches.
    @Test func theShareIsExact() throws {
        let one = try #require(MaxInvalid("1%"))
        #expect(one.tolerated(records: 10_000) == 100)
        #expect(!one.isExceeded(bad: 100, records: 10_000) && one.isExceeded(bad: 101, records: 10_000))
        #expect(one.tolerated(records: 99) == 0)
        let tiny = try #require(MaxInvalid("0.000001%"))
        #expect(tiny.tolerated(records: 100_000_000) == 1)
        #expect(tiny.tolerated(records: 99_999_999) == 0)
        let all = try #require(MaxInvalid("100%"))
        #expect(all.tolerated(records: Int(Int32.max) * 4) == Int(Int32.max) * 4)
        #expect(!all.isExceeded(bad: Int.max / 2, records: Int.max / 2))
        #expect(MaxInvalid("0") == .count(0) && MaxInvalid("+5") == .count(5))
        #expect(MaxInvalid("2.25%")?.tolerated(records: 400) == 9)
    }
}
