import Foundation
import Glibc
import Testing

/// A failed or killed run leaves every output file exactly as it was, and nothing beside them:
/// the document, `--stats` and `--report` are replaced together or not at all, whatever stops
/// the run (a full standard output, an output that cannot be put in place, any signal).
@Suite("What a failed or killed run leaves")
struct FailedRunOutputsTests {
    static let good = Array(eventLine("a", "5").utf8)
    static let oldDocument = Array("old document\n".utf8)
    static let oldStats = Array("old stats\n".utf8)
    static let oldReport = Array("old report\n".utf8)

    func previousOutputs(in dir: ScratchDirectory) throws {
        try dir.write("out/doc.json", Self.oldDocument)
        try dir.write("out/stats.ndjson", Self.oldStats)
        try dir.write("out/report.json", Self.oldReport)
    }

    func expectPreviousOutputs(in dir: ScratchDirectory, document: Bool = true) throws {
        if document { #expect(try dir.read("out/doc.json") == Self.oldDocument) }
        #expect(try dir.read("out/stats.ndjson") == Self.oldStats)
    }

    /// Standard output on /dev/full: 74, and `--stats` keeps its old bytes.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFullStdoutLeavesStatsAsTheyWere() throws {
        try ScratchDirectory.with { dir in
            try previousOutputs(in: dir)
            let input = try dir.write("in/a.ndjson", Self.good)
            _ = ignoringBrokenPipes
            let process = Process()
            process.executableURL = RankingsBinary.url
            process.arguments = ["aggregate", "-q", "--stats", dir.path("out/stats.ndjson"),
                                 "--report", dir.path("out/report.json"), input]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 74)
            try expectPreviousOutputs(in: dir, document: false)
            #expect(try dir.read("out/report.json") == Self.oldReport)
            #expect(try dir.listing("out") == ["doc.json", "report.json", "stats.ndjson"])
        }
    }

    /// The report's target becomes a directory during the run: it cannot be put in place (73),
    /// and the document and the stats, put in place before it, get their old bytes back.
    @Test func anOutputThatCannotBeCommittedLeavesTheOthersAsTheyWere() throws {
        try ScratchDirectory.with { dir in
            try previousOutputs(in: dir)
            let run = try RunningRankings(["aggregate", "-q", "-o", dir.path("out/doc.json"),
                                           "--stats", dir.path("out/stats.ndjson"),
                                           "--report", dir.path("out/report.json"), "-"])
            try FileManager.default.removeItem(atPath: dir.path("out/report.json"))
            try FileManager.default.createDirectory(atPath: dir.path("out/report.json"), withIntermediateDirectories: false)
            let result = run.finish(sending: Self.good)
            #expect(result.status == 73)
            try expectPreviousOutputs(in: dir)
            #expect(try dir.listing("out") == ["doc.json", "report.json", "stats.ndjson"])
        }
    }

    /// Any signal that ends the process, not only INT/TERM/HUP: no temporary file stays.
    @Test(arguments: [SIGUSR1, SIGALRM, SIGXCPU, SIGTERM, SIGINT, SIGHUP, SIGUSR2, SIGKILL])
    func aSignalLeavesNothingBehind(_ signal: Int32) throws {
        try ScratchDirectory.with { dir in
            try previousOutputs(in: dir)
            let run = try RunningRankings(["aggregate", "-q", "-o", dir.path("out/doc.json"),
                                           "--stats", dir.path("out/stats.ndjson"),
                                           "--report", dir.path("out/report.json"), "-"])
            let result = run.kill(signal)
            #expect(result.signaled && result.status == signal)
            try expectPreviousOutputs(in: dir)
            #expect(try dir.listing("out") == ["doc.json", "report.json", "stats.ndjson"])
        }
    }

    /// The output directory renamed during the run, then the run stopped: nothing stays in it.
    @Test func aRenamedOutputDirectoryKeepsNothingAfterASignal() throws {
        try ScratchDirectory.with { dir in
            try previousOutputs(in: dir)
            let run = try RunningRankings(["aggregate", "-q", "-o", dir.path("out/doc.json"),
                                           "--stats", dir.path("out/stats.ndjson"), "-"])
            try FileManager.default.moveItem(atPath: dir.path("out"), toPath: dir.path("moved"))
            _ = run.kill(SIGTERM)
            #expect(try dir.listing("moved") == ["doc.json", "report.json", "stats.ndjson"])
        }
    }

    /// An output name 5 bytes short of NAME_MAX is legal, and the run writes it.
    @Test func anOutputNameNearNameMaxIsWritten() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("in/a.ndjson", Self.good)
            let name = String(repeating: "d", count: 245) + ".json"
            let result = try RankingsBinary.run(["aggregate", "-q", "-o", dir.path(name), input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(try dir.listing() == [name, "in"].sorted())
        }
    }
}
