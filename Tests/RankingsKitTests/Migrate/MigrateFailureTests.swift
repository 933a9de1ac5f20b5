import Foundation
import Testing

/// Every documented failure status of `migrate`, and the promise that comes with all of them:
/// stdout stays empty, an `-o` target keeps its bytes (or stays absent), and no temporary file
/// is left behind.
@Suite("migrate: failure statuses leave the output untouched")
struct MigrateFailureTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int32
        /// Files to create under `in/` before the run.
        var inputs: [String: [UInt8]] = [:]
        /// Arguments after `migrate`; `@x` is the path of `x` in the scratch directory.
        var arguments: [String]
        var stdin: [UInt8]? = nil
        var testDescription: String { "\(name) → \(status)" }
    }

    static let good = Array((eventLine("a", "4") + eventLine("b", "1")).utf8)
    /// The bad line comes last, after output has already been produced.
    static let badAtEnd = Array((eventLine("a", "4") + eventLine("b", "2") + "{\"joke_id\": \"c\", \"rating\": 7}\n").utf8)
    static let threeBad = Array((eventLine("a", "5") + "nope\n[]\n{\"rating\": 1}\n").utf8)
    static let corruptGzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09]

    static let cases: [Case] = [
        Case(name: "unknown option", status: 64, inputs: ["a.ndjson": good], arguments: ["--frobnicate", "@in/a.ndjson"]),
        Case(name: "--dry-run=yes", status: 64, inputs: ["a.ndjson": good], arguments: ["--dry-run=yes", "@in/a.ndjson"]),
        Case(name: "--max-invalid -1", status: 64, inputs: ["a.ndjson": good], arguments: ["--max-invalid", "-1", "@in/a.ndjson"]),
        Case(name: "--max-invalid abc", status: 64, inputs: ["a.ndjson": good], arguments: ["--max-invalid", "abc", "@in/a.ndjson"]),
        Case(name: "--max-invalid without a value", status: 64, inputs: ["a.ndjson": good], arguments: ["@in/a.ndjson", "--max-invalid"]),
        Case(name: "--top is aggregate's", status: 64, inputs: ["a.ndjson": good], arguments: ["--top", "3", "@in/a.ndjson"]),
        Case(name: "no INPUT", status: 64, arguments: []),
        Case(name: "stdin twice", status: 64, arguments: ["-", "-"], stdin: good),
        Case(name: "a bad line with the default tolerance", status: 65, inputs: ["a.ndjson": badAtEnd], arguments: ["@in/a.ndjson"]),
        Case(name: "three bad lines, two tolerated", status: 65, inputs: ["a.ndjson": threeBad],
             arguments: ["--max-invalid", "2", "@in/a.ndjson"]),
        Case(name: "a bad line in the second input", status: 65, inputs: ["a.ndjson": good, "b.ndjson": badAtEnd],
             arguments: ["@in/a.ndjson", "@in/b.ndjson"]),
        Case(name: "a bad line on stdin", status: 65, arguments: ["-"], stdin: badAtEnd),
        Case(name: "a bad line, dry run", status: 65, inputs: ["a.ndjson": badAtEnd], arguments: ["--dry-run", "@in/a.ndjson"]),
        Case(name: "corrupt gzip", status: 65, inputs: ["a.ndjson": good, "b.ndjson.gz": corruptGzip],
             arguments: ["@in/a.ndjson", "@in/b.ndjson.gz"]),
        Case(name: "a missing file", status: 66, arguments: ["@in/missing.ndjson"]),
        Case(name: "a missing file after a good one", status: 66, inputs: ["a.ndjson": good],
             arguments: ["@in/a.ndjson", "@in/missing.ndjson"]),
        Case(name: "a missing directory", status: 66, arguments: ["@nowhere/"]),
    ]

    static let previous = Array("an older export\n".utf8)

    func resolve(_ arguments: [String], in dir: ScratchDirectory) -> [String] {
        arguments.map { $0.hasPrefix("@") ? dir.path(String($0.dropFirst())) : $0 }
    }

    func prepare(_ c: Case, in dir: ScratchDirectory) throws {
        try FileManager.default.createDirectory(atPath: dir.path("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.path("tmp"), withIntermediateDirectories: true)
        for (name, bytes) in c.inputs { try dir.write("in/\(name)", bytes) }
    }

    @Test("an existing output file keeps its bytes", arguments: cases)
    func existingOutputUnchanged(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            try prepare(c, in: dir)
            try dir.write("out/export.ndjson", Self.previous)
            let result = try Migrate.run(["-o", dir.path("out/export.ndjson")] + resolve(c.arguments, in: dir), stdin: c.stdin)
            #expect(result.status == c.status, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrText.contains("rankings: "), "every failure explains itself: \(result.stderrText)")
            #expect(try dir.read("out/export.ndjson") == Self.previous)
            #expect(try dir.listing("out") == ["export.ndjson"])
        }
    }

    @Test("an absent output file stays absent", arguments: cases)
    func absentOutputStaysAbsent(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            try prepare(c, in: dir)
            let result = try Migrate.run(["-o", dir.path("out/export.ndjson")] + resolve(c.arguments, in: dir), stdin: c.stdin)
            #expect(result.status == c.status, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing("out") == [])
        }
    }

    /// Without `-o` the output is spooled; a failure after lines were migrated must still print
    /// nothing, and the spool must not outlive the run.
    @Test("without -o, a failure prints nothing on stdout", arguments: cases)
    func failureWritesNothingToStdout(_ c: Case) throws {
        try ScratchDirectory.with { dir in
            try prepare(c, in: dir)
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = dir.path("tmp")
            let result = try Migrate.run(resolve(c.arguments, in: dir), stdin: c.stdin, environment: environment)
            #expect(result.status == c.status, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing("tmp") == [])
        }
    }

    @Test func overTheLimitSaysWhyAndCounts() throws {
        let result = try Migrate.run(["--max-invalid", "2", "-"], stdin: Self.threeBad)
        #expect(result.status == 65)
        #expect(result.stderrLines == [
            "-:2: malformed JSON: invalid literal (only true, false and null) at byte 1",
            "-:3: invalid record: the line is not a JSON object",
            "-:4: invalid record: no joke_id",
            "rankings: 1 event written (1 unchanged, 0 rewritten to 5, 0 rewritten to 1), 0 neutral dropped, 3 bad lines",
            "rankings: error: 3 bad lines, more than --max-invalid 2; nothing written",
        ])
    }

    // MARK: - 73: the output cannot be created

    @Test func outputInMissingDirectoryIs73() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            let result = try Migrate.run(["-o", dir.path("missing/export.ndjson"), input])
            #expect(result.status == 73, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing() == ["a.ndjson"])
        }
    }

    @Test func outputWhereADirectoryStandsIs73() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            try dir.write("export.ndjson/keep.txt", "keep\n")
            let result = try Migrate.run(["-o", dir.path("export.ndjson"), input])
            #expect(result.status == 73, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(try dir.listing("export.ndjson") == ["keep.txt"])
        }
    }

    /// Standard output is spooled in `$TMPDIR`; when no spool can be made there, nothing is read.
    @Test func noRoomForTheStdoutSpoolIs73() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.good)
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = dir.path("no-such-dir")
            let result = try Migrate.run([input], environment: environment)
            #expect(result.status == 73, "stderr: \(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrText.contains("a temporary file in \(dir.path("no-such-dir"))"))
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
            process.arguments = ["migrate", "-q", input]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 74)
        }
    }

    /// A directory opened as standard input opens fine and fails on the first read (EISDIR).
    @Test func readErrorIs74() throws {
        try ScratchDirectory.with { dir in
            try dir.write("out/export.ndjson", Self.previous)
            _ = ignoringBrokenPipes
            let process = Process()
            process.executableURL = RankingsBinary.url
            process.arguments = ["migrate", "-o", dir.path("out/export.ndjson"), "-"]
            process.standardInput = FileHandle(forReadingAtPath: dir.path("out"))
            let err = Pipe()
            process.standardError = err
            try process.run()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 74, "stderr: \(message)")
            #expect(message.contains("error reading -"))
            #expect(try dir.read("out/export.ndjson") == Self.previous)
            #expect(try dir.listing("out") == ["export.ndjson"])
        }
    }

    // MARK: - Help

    @Test func helpSucceedsAndMentionsEveryOption() throws {
        let result = try Migrate.run(["--help"])
        #expect(result.status == 0)
        for option in ["--output", "--dry-run", "--max-invalid", "--quiet", "INPUT"] {
            #expect(result.stdoutText.contains(option), "migrate --help does not mention \(option)")
        }
    }
}
