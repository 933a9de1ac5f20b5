import Foundation
import Testing

/// `--metrics PATH` against the built binary: written on success and on every failure status the
/// job reports, the last success carried over through failures, and never a reason to fail.
@Suite("--metrics")
struct MetricsTests {
    /// A metrics file as node_exporter reads it: samples by name and labels, plus what HELP and
    /// TYPE lines say.
    struct Exposition {
        var samples: [String: String] = [:]
        var help: Set<String> = []
        var types: [String: String] = [:]

        init(_ text: String) {
            for line in text.split(separator: "\n").map(String.init) {
                let words = line.split(separator: " ", maxSplits: 3).map(String.init)
                if line.hasPrefix("# HELP ") {
                    help.insert(words[2])
                } else if line.hasPrefix("# TYPE ") {
                    types[words[2]] = words[3]
                } else if let space = line.lastIndex(of: " ") {
                    samples[String(line[..<space])] = String(line[line.index(after: space)...])
                }
            }
        }

        var names: Set<String> { Set(samples.keys.map { String($0.prefix { $0 != "{" }) }) }
        func int(_ key: String) -> Int64? { samples[key].flatMap { Int64($0) } }
    }

    static func read(_ dir: ScratchDirectory, _ name: String = "rankings.prom") throws -> Exposition {
        Exposition(String(decoding: try dir.read(name), as: UTF8.self))
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    static let earlierSuccess: Int64 = 1_700_000_000
    /// What an earlier successful run left, in the shape the binary writes.
    static let previousFile = """
    # HELP rankings_last_run_exit_status Exit status of the last run.
    # TYPE rankings_last_run_exit_status gauge
    rankings_last_run_exit_status 0
    # HELP rankings_last_success_timestamp_seconds Unix time at which a run last wrote the document.
    # TYPE rankings_last_success_timestamp_seconds gauge
    rankings_last_success_timestamp_seconds 1700000000

    """

    @Test func successRecordsTheRunAndItsCounts() throws {
        try ScratchDirectory.with { dir in
            let sample = RankingsBinary.packageRoot.appendingPathComponent("sample-data/rating_events.ndjson").path
            let before = Self.now()
            let result = try RankingsBinary.run(["aggregate", "-q", "--metrics", dir.path("rankings.prom"),
                                                 "-o", dir.path("all_time.json"), sample])
            let after = Self.now()
            #expect(result.status == 0, "\(result.stderrText)")
            let m = try Self.read(dir)
            #expect(m.int("rankings_last_run_exit_status") == 0)
            let ended = try #require(m.int("rankings_last_run_timestamp_seconds"))
            #expect((before...after).contains(ended))
            #expect(m.int("rankings_last_success_timestamp_seconds") == ended)
            #expect(m.samples["rankings_last_run_duration_seconds"].flatMap(Double.init) != nil)
            #expect(m.int("rankings_last_run_events{kind=\"hilarious\"}") == 2712)
            #expect(m.int("rankings_last_run_events{kind=\"horrible\"}") == 2162)
            #expect(m.int("rankings_last_run_events{kind=\"neutral\"}") == 126)
            #expect(m.int("rankings_last_run_bad_lines") == 0)
            #expect(m.int("rankings_last_run_jokes") == 423)
            #expect(m.int("rankings_last_run_input_bytes") == 1_264_475)
            #expect(m.int("rankings_last_run_document_ratings{kind=\"hilarious\"}") == 2712)
            #expect(m.int("rankings_last_run_document_ratings{kind=\"horrible\"}") == 2162)
            // Every metric explains itself and is a gauge: each describes the last run only.
            #expect(m.help == m.names)
            #expect(Set(m.types.keys) == m.names)
            #expect(m.types.values.allSatisfy { $0 == "gauge" })
            #expect(m.names.allSatisfy { !$0.hasSuffix("_total") })
            #expect(try dir.listing() == ["all_time.json", "rankings.prom"])
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int32
        /// Arguments after `aggregate -q --metrics PATH`; `@x` is `x` in the scratch directory.
        var arguments: [String]
        /// Whether the inputs were read to the end, so the counts are known.
        var counted: Bool
        /// Standard output is /dev/full, so writing the document there fails.
        var stdoutFull = false
        var testDescription: String { "\(name) → \(status)" }
    }

    static let failures: [Failure] = [
        Failure(name: "a bad line", status: 65, arguments: ["-o", "@out.json", "@bad.ndjson"], counted: true),
        Failure(name: "refused by --max-drop", status: 65, arguments: ["--max-drop", "1", "-o", "@big.json", "@good.ndjson"],
                counted: true),
        Failure(name: "a missing input", status: 66, arguments: ["-o", "@out.json", "@missing.ndjson"], counted: false),
        Failure(name: "an output in a missing directory", status: 73, arguments: ["-o", "@nowhere/out.json", "@good.ndjson"],
                counted: false),
        Failure(name: "a write error", status: 74, arguments: ["@good.ndjson"], counted: true, stdoutFull: true),
        Failure(name: "an output that is a directory", status: 73, arguments: ["-o", "@", "@good.ndjson"], counted: false),
    ]

    func prepare(_ dir: ScratchDirectory) throws {
        try dir.write("good.ndjson", eventLine("a", "5") + eventLine("b", "1"))
        try dir.write("bad.ndjson", eventLine("a", "5") + "nope\n")
        try dir.write("big.json", """
        {"week_id": "all_time", "hilarious": [], "horrible": [], "total_hilarious_ratings": 50, \
        "total_horrible_ratings": 50, "computed_at": "2026-02-18T05:00:00Z"}

        """)
    }

    func run(_ failure: Failure, in dir: ScratchDirectory) throws -> RankingsBinary.Result {
        let arguments = failure.arguments.map { $0.hasPrefix("@") ? dir.path(String($0.dropFirst())) : $0 }
        let words = ["aggregate", "-q", "--metrics", dir.path("rankings.prom")] + arguments
        guard failure.stdoutFull else { return try RankingsBinary.run(words) }
        // /dev/full accepts the open and fails every write with ENOSPC: a real write error.
        return try RankingsBinary.run(["-c", "exec \"$0\" \"$@\" >/dev/full", RankingsBinary.url.path] + words,
                                      executable: "/bin/sh")
    }

    @Test(arguments: failures)
    func failureCarriesTheLastSuccessOver(_ failure: Failure) throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            try dir.write("rankings.prom", Self.previousFile)
            let before = Self.now()
            let result = try run(failure, in: dir)
            #expect(result.status == failure.status, "\(result.stderrText)")
            let m = try Self.read(dir)
            #expect(m.int("rankings_last_run_exit_status") == Int64(failure.status))
            #expect(m.int("rankings_last_success_timestamp_seconds") == Self.earlierSuccess)
            #expect(try #require(m.int("rankings_last_run_timestamp_seconds")) >= before)
            #expect((m.samples["rankings_last_run_bad_lines"] != nil) == failure.counted)
            #expect(m.help == m.names)
            #expect(!result.stderrText.contains("warning"), "\(result.stderrText)")
        }
    }

    @Test(arguments: failures)
    func failureBeforeAnySuccessHasNoLastSuccess(_ failure: Failure) throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            let result = try run(failure, in: dir)
            #expect(result.status == failure.status, "\(result.stderrText)")
            let m = try Self.read(dir)
            #expect(m.int("rankings_last_run_exit_status") == Int64(failure.status))
            #expect(m.samples["rankings_last_success_timestamp_seconds"] == nil)
            #expect(m.help.contains("rankings_last_success_timestamp_seconds") == false)
        }
    }

    @Test func aMetricsFileThatCannotBeWrittenKeepsTheRunGood() throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            let result = try RankingsBinary.run(["aggregate", "-q", "--metrics", dir.path("nowhere/rankings.prom"),
                                                 "-o", dir.path("out.json"), dir.path("good.ndjson")])
            #expect(result.status == 0)
            #expect(result.stderrText.hasPrefix("rankings: warning: cannot write metrics to \(dir.path("nowhere/rankings.prom")): "),
                    "\(result.stderrText)")
            #expect(try dir.listing() == ["bad.ndjson", "big.json", "good.ndjson", "out.json"])
        }
    }

    @Test func aMetricsFileThatCannotBeWrittenKeepsAFailuresStatus() throws {
        try ScratchDirectory.with { dir in
            let result = try RankingsBinary.run(["aggregate", "-q", "--metrics", dir.path("nowhere/rankings.prom"),
                                                 dir.path("missing.ndjson")])
            #expect(result.status == 66)
            #expect(result.stderrText.contains("warning: cannot write metrics"))
        }
    }

    @Test func aUsageErrorLeavesTheMetricsFileAlone() throws {
        try ScratchDirectory.with { dir in
            try dir.write("rankings.prom", Self.previousFile)
            let result = try RankingsBinary.run(["aggregate", "--metrics", dir.path("rankings.prom"), "--top", "0", "x"])
            #expect(result.status == 64)
            #expect(try dir.read("rankings.prom") == Array(Self.previousFile.utf8))
        }
    }

    @Test func anEmptyPathWritesNoMetrics() throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            let result = try RankingsBinary.run(["aggregate", "-q", "--metrics", "", "-o", dir.path("out.json"),
                                                 dir.path("good.ndjson")], directory: dir.url)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(try dir.listing() == ["bad.ndjson", "big.json", "good.ndjson", "out.json"])
        }
    }

    /// A metrics path that is a pipe (`--metrics /dev/stdout`) is refused before anything is
    /// read (73), with no warning about the metrics it then cannot write: reading a pipe for the
    /// last success, or opening one to write, could wait for ever.
    @Test func metricsToAPipeAreRefusedAtOnce() throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            let result = try RankingsBinary.run(["aggregate", "-q", "--metrics", "/dev/stdout", "-o", dir.path("out.json"),
                                                 dir.path("good.ndjson")])
            #expect(result.status == 73, "\(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: cannot create /dev/stdout: a link to a FIFO, not a regular file"])
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing() == ["bad.ndjson", "big.json", "good.ndjson"])
        }
    }

    @Test func helpMentionsTheSafetyNet() throws {
        let text = try RankingsBinary.run(["aggregate", "--help"]).stdoutText
        #expect(text.contains("--metrics PATH"))
        #expect(text.contains("--max-drop PERCENT"))
        #expect(text.contains("65 bad data or refused by --max-drop"))
    }

    @Test func metricsMustBeItsOwnFile() throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            let result = try RankingsBinary.run(["aggregate", "--metrics", dir.path("out.json"), "-o", dir.path("out.json"),
                                                 dir.path("good.ndjson")])
            #expect(result.status == 64)
        }
    }

    /// The metrics file is written last, so a second spelling of the output's path would
    /// replace the document just written with the metrics (and disarm tomorrow's guard).
    @Test(arguments: ["./out.json", "link/out.json", "sub/../out.json"])
    func metricsMustBeItsOwnFileHoweverSpelled(_ spelling: String) throws {
        try ScratchDirectory.with { dir in
            try prepare(dir)
            try FileManager.default.createDirectory(atPath: dir.path("sub"), withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: ".")
            let before = try dir.write("out.json", "the document before\n")
            let result = try RankingsBinary.run(["aggregate", "-q", "--metrics", dir.path(spelling), "-o", before,
                                                 dir.path("good.ndjson")])
            #expect(result.status == 64, "\(result.stderrText)")
            #expect(try dir.read("out.json") == Array("the document before\n".utf8))
        }
    }
}
