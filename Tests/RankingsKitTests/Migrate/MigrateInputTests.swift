import Foundation
import Testing

/// Several inputs of every kind come out as one export, in the order given.
@Suite("migrate: inputs")
struct MigrateInputTests {
    static let first = Array((eventLine("a", "4") + eventLine("b", "3")).utf8)
    static let second = Array((eventLine("c", "1") + eventLine("d", "2.0")).utf8)
    static let third = Array((eventLine("e", "5")).utf8)
    static let migrated = Array((eventLine("a", "5") + eventLine("c", "1") + eventLine("d", "1") + eventLine("e", "5")).utf8)

    /// gzip bytes made by the system's `gzip`, so the test does not trust our own reading twice.
    func gzip(_ bytes: [UInt8], in dir: ScratchDirectory, as name: String) throws -> String {
        let path = try dir.write(name, bytes)
        _ = ignoringBrokenPipes
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-n", path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "gzip is needed for this test")
        return path + ".gz"
    }

    @Test func filesDirectoryAndStdinInOrder() throws {
        try ScratchDirectory.with { dir in
            let a = try dir.write("a.ndjson", Self.first)
            try dir.write("d/2.ndjson", Array(eventLine("d", "2.0").utf8))
            try dir.write("d/1.ndjson", Array(eventLine("c", "1").utf8))
            try dir.write("d/notes.txt", "not an export\n")
            let result = try Migrate.run(["-q", a, dir.path("d"), "-"], stdin: Self.third)
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(Array(result.stdout) == Self.migrated)
        }
    }

    @Test func gzipFileAndGzipOnStdin() throws {
        try ScratchDirectory.with { dir in
            let a = try gzip(Self.first, in: dir, as: "a.ndjson")
            let b = try gzip(Self.second, in: dir, as: "b.ndjson")
            let piped = try dir.read("b.ndjson.gz")
            let result = try Migrate.run(["-q", a, "-", dir.write("c.ndjson", Self.third)], stdin: piped)
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(Array(result.stdout) == Self.migrated)
            // The output is plain NDJSON, whatever the input was.
            let toFile = try Migrate.run(["-q", "-o", dir.path("out.ndjson"), a, b, dir.path("c.ndjson")])
            #expect(toFile.status == 0)
            #expect(try dir.read("out.ndjson") == Self.migrated)
        }
    }

    /// Line numbers restart with each input, and each message names its input.
    @Test func badLinesAreNumberedPerInput() throws {
        try ScratchDirectory.with { dir in
            let a = try dir.write("a.ndjson", Array((eventLine("a", "4") + "nope\n").utf8))
            let result = try Migrate.run(["--max-invalid", "2", "-q", a, "-"], stdin: Array("\n[]\n".utf8))
            #expect(result.status == 0)
            #expect(result.stderrLines == [
                "\(a):2: malformed JSON: invalid literal (only true, false and null) at byte 1",
                "-:2: invalid record: the line is not a JSON object",
            ])
            #expect(Array(result.stdout) == Array(eventLine("a", "5").utf8))
        }
    }

    /// Only the first ten bad lines are listed, as `aggregate` lists them.
    @Test func moreThanTenBadLines() throws {
        let input = Array((eventLine("a", "2") + String(repeating: "{}\n", count: 13)).utf8)
        let result = try Migrate.run(["--max-invalid", "13", "-q", "-"], stdin: input)
        #expect(result.status == 0)
        #expect(result.stderrLines == (2...11).map { "-:\($0): invalid record: no joke_id" }
                + ["rankings: 3 more bad lines not shown"])
        #expect(Array(result.stdout) == Array(eventLine("a", "1").utf8))
    }

    /// An export with nothing left to keep is migrated to an empty one, not an error.
    @Test(arguments: ["", "\n \r\n", eventLine("a", "3")])
    func nothingToKeepIsAnEmptyExport(_ text: String) throws {
        try ScratchDirectory.with { dir in
            try dir.write("out.ndjson", "old\n")
            let result = try Migrate.run(["-q", "-o", dir.path("out.ndjson"), "-"], stdin: Array(text.utf8))
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(try dir.read("out.ndjson") == [])
        }
    }

    /// Lines longer than the reader's first buffer and than one output batch survive whole.
    @Test func longLinesSurviveWhole() throws {
        let padding = String(repeating: "x", count: 3 << 20)
        let long = "{\"joke_id\": \"long\", \"pad\": \"\(padding)\", \"rating\": 4.0, \"tail\": \"\(padding)\"}\n"
        let expected = "{\"joke_id\": \"long\", \"pad\": \"\(padding)\", \"rating\": 5, \"tail\": \"\(padding)\"}\n"
        let result = try Migrate.run(["-q", "-"], stdin: Array((long + eventLine("b", "2") + long).utf8))
        #expect(result.status == 0)
        #expect(Array(result.stdout) == Array((expected + eventLine("b", "1") + expected).utf8))
    }

    /// Inputs are opened before anything is written and the output replaces its target only at
    /// the end, so an export can be migrated onto itself.
    @Test func migratingAFileOntoItself() throws {
        try ScratchDirectory.with { dir in
            let path = try dir.write("export.ndjson", Self.first + Self.second)
            let result = try Migrate.run(["-q", "-o", path, path])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(try dir.read("export.ndjson") == Array((eventLine("a", "5") + eventLine("c", "1") + eventLine("d", "1")).utf8))
            #expect(try dir.listing() == ["export.ndjson"])
        }
    }
}
