import Foundation
import Testing

/// Every documented failure status, and the promise that comes with all of them: the output path is
/// left exactly as it was, stdout stays empty, and no temporary file is left behind.
@Suite("Failure statuses leave the output untouched")
struct FailureStatusTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int32
        /// Files to create under `in/` before the run.
        var inputs: [String: [UInt8]] = [:]
        /// Arguments after `aggregate`; `@x` means the path of `x` in the scratch directory.
        var arguments: [String]
        var stdin: [UInt8]? = nil
        var testDescription: String { "\(name) → \(status)" }
    }

    static let good = Array(eventLine("a", "5").utf8)
    static let oneBad = Array((eventLine("a", "5") + "{\"joke_id\": \"a\", \"rating\": 5,}\n").utf8)
    static let threeBad = Array((eventLine("a", "5") + "nope\n[]\n{\"rating\": 1}\n").utf8)

    static let cases: [Case] = [
        Case(name: "unknown option", status: 64, inputs: ["a.ndjson": good], arguments: ["--frobnicate", "@in/a.ndjson"]),
        Case(name: "--top 0", status: 64, inputs: ["a.ndjson": good], arguments: ["--top", "0", "@in/a.ndjson"]),
        Case(name: "--top 1001", status: 64, inputs: ["a.ndjson": good], arguments: ["--top", "1001", "@in/a.ndjson"]),
        Case(name: "--top abc", status: 64, inputs: ["a.ndjson": good], arguments: ["--top", "abc", "@in/a.ndjson"]),
        Case(name: "--top without a value", status: 64, inputs: ["a.ndjson": good], arguments: ["@in/a.ndjson", "--top"]),
        Case(name: "--max-invalid -1", status: 64, inputs: ["a.ndjson": good], arguments: ["--max-invalid", "-1", "@in/a.ndjson"]),
        Case(name: "--max-invalid abc", status: 64, inputs: ["a.ndjson": good], arguments: ["--max-invalid", "abc", "@in/a.ndjson"]),
        Case(name: "--computed-at not a time", status: 64, inputs: ["a.ndjson": good], arguments: ["--computed-at", "yesterday", "@in/a.ndjson"]),
        Case(name: "--computed-at without offset", status: 64, inputs: ["a.ndjson": good],
             arguments: ["--computed-at", "2026-02-18T05:00:00", "@in/a.ndjson"]),
        Case(name: "no INPUT", status: 64, arguments: []),
        Case(name: "stdin twice", status: 64, arguments: ["-", "-"], stdin: good),
        Case(name: "a bad line with the default tolerance", status: 65, inputs: ["a.ndjson": oneBad], arguments: ["@in/a.ndjson"]),
        Case(name: "three bad lines, two tolerated", status: 65, inputs: ["a.ndjson": threeBad],
             arguments: ["--max-invalid", "2", "@in/a.ndjson"]),
        Case(name: "a bad line on stdin", status: 65, arguments: ["-"], stdin: oneBad),
        Case(name: "an empty file", status: 65, inputs: ["a.ndjson": []], arguments: ["@in/a.ndjson"]),
        Case(name: "only tolerated bad lines", status: 65, inputs: ["a.ndjson": Array("x\n[]\n".utf8)],
             arguments: ["--max-invalid", "5", "@in/a.ndjson"]),
        Case(name: "a directory with no matching files", status: 66, inputs: ["notes.txt": good], arguments: ["@in"]),
        Case(name: "a missing file", status: 66, arguments: ["@in/missing.ndjson"]),
        Case(name: "a missing file after a good one", status: 66, inputs: ["a.ndjson": good],
             arguments: ["@in/a.ndjson", "@in/missing.ndjson"]),
        Case(name: "a missing directory", status: 66, arguments: ["@nowhere/"]),
    ]

    static let previous = Array("a previous document\n".utf8)

    func resolve(_ arguments: [String], in dir: ScratchDirectory) -> [String] {
        arguments.map { $0.hasPrefix("@") ? dir.path(String($0.dropFirst())) : $0 }
    }

    func prepare(_ c: Case, in dir: ScratchDirectory) throws {
        try FileManager.default.createDirectory(atPath: dir.path("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: true)
        for (name, bytes) in c.inputs { try dir.write("in/\(name)", bytes) }
    }

    @Test("an existing output file keeps its bytes", arguments: cases)
    func existingOutputUnchanged(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            try prepare(c, in: dir)
            try dir.write("out/doc.json", Self.previous)
            let result = try RankingsBinary.run(["aggregate", "-o", dir.path("out/doc.json")] + resolve(c.arguments, in: dir),
                                                stdin: c.stdin.map { Data($0) })
            #expect(result.status == c.status, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrText.contains("rankings: "), "every failure explains itself: \(result.stderrText)")
            #expect(try dir.read("out/doc.json") == Self.previous)
            #expect(try dir.listing("out") == ["doc.json"])
        }
    }

    @Test("an absent output file stays absent", arguments: cases)
    func absentOutputStaysAbsent(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            try prepare(c, in: dir)
            let result = try RankingsBinary.run(["aggregate", "-o", dir.path("out/doc.json")] + resolve(c.arguments, in: dir),
                                                stdin: c.stdin.map { Data($0) })
            #expect(result.status == c.status, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing("out") == [])
        }
    }

    @Test("without -o, a failure prints nothing on stdout", arguments: cases)
    func failureWritesNothingToStdout(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            try prepare(c, in: dir)
            let result = try RankingsBinary.run(["aggregate"] + resolve(c.arguments, in: dir), stdin: c.stdin.map { Data($0) })
            #expect(result.status == c.status, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
        }
    }

    // MARK: - 73: the output cannot be created

    @Test func outputInMissingDirectoryIs73() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            let result = try RankingsBinary.run(["aggregate", "-o", dir.path("missing/doc.json"), input])
            #expect(result.status == 73, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing() == ["a.ndjson"])
        }
    }

    @Test func outputWhereADirectoryStandsIs73() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            try dir.write("doc.json/keep.txt", "keep\n")
            let result = try RankingsBinary.run(["aggregate", "-o", dir.path("doc.json"), input])
            #expect(result.status == 73, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing() == ["a.ndjson", "doc.json"])
            #expect(try dir.listing("doc.json") == ["keep.txt"])
            #expect(try dir.read("doc.json/keep.txt") == Array("keep\n".utf8))
        }
    }

    /// Root ignores permissions. Where the tests run as root (CI), the scratch directory is given
    /// to `nobody` and the run drops to that user, so the permission binds as for the job's user.
    private func runUnprivileged(_ dir: ScratchDirectory, _ arguments: [String]) throws -> RankingsBinary.Result {
        guard getuid() == 0 else { return try RankingsBinary.run(arguments) }
        #expect(try RankingsBinary.run(["-R", "nobody:nogroup", dir.url.path], executable: "/bin/chown").status == 0)
        return try RankingsBinary.run(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", RankingsBinary.url.path] + arguments,
                                      executable: "/usr/bin/setpriv")
    }

    @Test func outputInReadOnlyDirectoryIs73() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            try dir.write("locked/doc.json", Self.previous)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path("locked"))
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path("locked")) }
            let result = try runUnprivileged(dir, ["aggregate", "-o", dir.path("locked/doc.json"), input])
            #expect(result.status == 73, "stderr: \(result.stderrText)")
            #expect(try dir.read("locked/doc.json") == Self.previous)
            #expect(try dir.listing("locked") == ["doc.json"])
        }
    }

    @Test func unreadableInputIs66() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: input)
            let result = try runUnprivileged(dir, ["aggregate", input])
            #expect(result.status == 66, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// A gzip export cut short, through the command line: 65 naming the file, the document as it was.
    @Test func truncatedGzipIs65() throws {
        try ScratchDirectory.with { dir in
            let compressed = try ScratchDirectory.gzip(Array(String(repeating: eventLine("a", "5"), count: 200).utf8))
            let input = try dir.write("a.ndjson.gz", Array(compressed.prefix(compressed.count / 2)))
            let output = try dir.write("out.json", Self.previous)
            let result = try RankingsBinary.run(["aggregate", "-q", "-o", output, input])
            #expect(result.status == 65, "stderr: \(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: \(input): truncated gzip data"], "\(result.stderrText)")
            #expect(try dir.read("out.json") == Self.previous)
            #expect(try dir.listing() == ["a.ndjson.gz", "out.json"])
        }
    }

    /// A file whose read fails (EIO: /proc/self/mem at offset 0): the error names it and the
    /// reason, and the document stays as it was.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/mem")))
    func readErrorNamesTheFile() throws {
        try ScratchDirectory.with { dir in
            let output = try dir.write("out.json", Self.previous)
            let result = try RankingsBinary.run(["aggregate", "-q", "-o", output, "/proc/self/mem"])
            #expect(result.status == 66, "stderr: \(result.stderrText)")
            #expect(result.stderrLines == ["rankings: error: cannot read /proc/self/mem: Input/output error"], "\(result.stderrText)")
            #expect(try dir.read("out.json") == Self.previous)
            #expect(try dir.listing() == ["out.json"])
        }
    }

    // MARK: - 74: I/O errors

    /// /dev/full accepts the open and fails every write with ENOSPC: a real write error.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func writeErrorOnStdoutIs74() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            _ = ignoringBrokenPipes
            let process = Process()
            process.executableURL = RankingsBinary.url
            process.arguments = ["aggregate", "-q", input]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 74)
        }
    }

    /// Help and the version are output too: a full disk under them is 74, not a silent 0.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")),
          arguments: [["--help"], ["--version"], ["aggregate", "--help"], ["check", "--help"], ["migrate", "--help"]])
    func helpAndVersionOnAFullStdoutAre74(_ arguments: [String]) throws {
        _ = ignoringBrokenPipes
        let process = Process()
        process.executableURL = RankingsBinary.url
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 74)
    }

    // MARK: - Usage outside `aggregate`

    @Test(arguments: [[String](), ["frobnicate"], ["--frobnicate"]])
    func usageErrorsWithoutAggregateAre64(_ arguments: [String]) throws {
        let result = try RankingsBinary.run(arguments)
        #expect(result.status == 64, "stderr: \(result.stderrText)")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [["--help"], ["aggregate", "--help"], ["--version"]])
    func helpAndVersionSucceedOnStdout(_ arguments: [String]) throws {
        let result = try RankingsBinary.run(arguments)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(!result.stdout.isEmpty)
    }

    @Test func helpMentionsEveryAggregateOption() throws {
        let text = try RankingsBinary.run(["aggregate", "--help"]).stdoutText
        for option in ["--output", "--top", "--computed-at", "--max-invalid", "--allow-empty", "--report", "--quiet"] {
            #expect(text.contains(option), "aggregate --help does not mention \(option)")
        }
    }
}
