import Foundation
import Testing

/// What a directory of exports contributes, and the inputs a run refuses (issue 17, items 2, 4,
/// 5, 8 and 9). Each test failed on 0.2.
@Suite("Input directories")
struct InputDirectoryTests {
    /// Runs `rankings` through `sh` so the child can get a lower open-file limit, under
    /// `timeout` as a safety net only: a run that hangs fails the test (124) instead of the suite.
    static func run(_ arguments: [String], in dir: ScratchDirectory, openFiles: Int? = nil) throws -> RankingsBinary.Result {
        let quoted = ([RankingsBinary.url.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let limit = openFiles.map { "ulimit -n \($0) && " } ?? ""
        return try RankingsBinary.run(["-c", limit + "exec timeout 60 " + quoted.joined(separator: " ")],
                                      directory: dir.url, executable: "/bin/sh")
    }

    /// Item 2: 2,000 files under the default soft limit of 1,024 open files (systemd's for services).
    @Test func readsMoreFilesThanTheOpenFileLimit() throws {
        try ScratchDirectory.with { dir in
            for i in 0..<2000 { try dir.write("in/\(String(format: "%05d", i)).ndjson", eventLine("j\(i % 7)", "5")) }
            let result = try Self.run(["aggregate", "--threads", "2", "--computed-at", fixedComputedAt,
                                       "-o", dir.path("out.json"), "--metrics", dir.path("m.prom"), "in"],
                                      in: dir, openFiles: 1024)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrText.contains("rankings: 2000 events (2000 hilarious"), "\(result.stderrText)")
            let document = String(decoding: try dir.read("out.json"), as: UTF8.self)
            #expect(document.contains("\"total_hilarious_ratings\": 2000"))
            #expect(try dir.listing().contains("m.prom"))
        }
    }

    /// Item 4: an output inside an input directory is refused up front (64), on the first run
    /// already, so that no later run reads its own document; the old output stays as it was.
    @Test func refusesAnOutputInsideAnInputDirectory() throws {
        try ScratchDirectory.with { dir in
            try dir.write("exports/a.ndjson", eventLine("j", "5"))
            for flag in ["-o", "--stats", "--report", "--metrics"] {
                let result = try Self.run(["aggregate", "--computed-at", fixedComputedAt, flag, "exports/all_time.json",
                                           "exports/"], in: dir)
                #expect(result.status == 64, "\(flag): \(result.stderrText)")
                #expect(result.stderrText.contains("exports/all_time.json is inside the input directory exports/"),
                        "\(result.stderrText)")
                #expect(try dir.listing("exports") == ["a.ndjson"])
            }
            // Named as a file input too, through another path.
            try dir.write("old.json", "{}\n")
            let named = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "-o", "./old.json",
                                      "exports/a.ndjson", "old.json"], in: dir)
            #expect(named.status == 64, "\(named.stderrText)")
            #expect(try dir.read("old.json") == Array("{}\n".utf8))
            // --metrics naming an input: the refusal (64) writes no metrics over it.
            let metrics = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "--metrics", "exports/a.ndjson",
                                        "exports/a.ndjson"], in: dir)
            #expect(metrics.status == 64, "\(metrics.stderrText)")
            #expect(try dir.read("exports/a.ndjson") == Array(eventLine("j", "5").utf8))
            // A name the directory would not read is fine.
            let fine = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "-q", "-o", "exports/all_time.out",
                                     "exports"], in: dir)
            #expect(fine.status == 0, "\(fine.stderrText)")
        }
    }

    /// Item 5: a FIFO, and a link to a device, named like exports: skipped with a warning,
    /// never read (reading either would never end).
    @Test func skipsFIFOsAndDevicesWithAWarning() throws {
        try ScratchDirectory.with { dir in
            try dir.write("exports/a.ndjson", eventLine("j", "5"))
            #expect(mkfifo(dir.path("exports/x.ndjson"), 0o600) == 0)
            try FileManager.default.createSymbolicLink(atPath: dir.path("exports/z.ndjson"), withDestinationPath: "/dev/zero")
            let result = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "-o", "out.json", "exports"], in: dir)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrLines.prefix(2) == [
                "rankings: skipped exports/x.ndjson: a FIFO, not a regular file",
                "rankings: skipped exports/z.ndjson: a device, not a regular file",
            ], "\(result.stderrText)")
            #expect(result.stderrText.contains("rankings: 1 event (1 hilarious"), "\(result.stderrText)")
        }
    }

    /// Item 8: a file that starts a JSON array, compact or pretty-printed, is refused (65) naming
    /// the file and the conversion, whatever --max-invalid says; the old output stays. A file that
    /// is only `[` or `[{` is not JSON at all, so the message never calls it "one JSON array".
    @Test(arguments: ["[{\"joke_id\": \"j\", \"rating\": 5}, {\"joke_id\": \"k\", \"rating\": 1}]\n",
                      "[\n", "[{",
                      "[\n  {\n    \"joke_id\": \"j\",\n    \"rating\": 5\n  }\n]\n",
                      "\n  [ {\"joke_id\": \"j\", \"rating\": 5} ]",
                      "\u{FEFF}[\r\n{\"joke_id\": \"j\", \"rating\": 5}\r\n]\r\n"])
    func refusesAJSONArrayFile(_ array: String) throws {
        try ScratchDirectory.with { dir in
            try dir.write("exports/a.ndjson", eventLine("j", "5"))
            try dir.write("exports/b.json", array)
            try dir.write("out.json", "old\n")
            let result = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "--max-invalid", "100",
                                       "-o", "out.json", "exports"], in: dir)
            #expect(result.status == 65, "\(result.stderrText)")
            #expect(result.stderrText.contains("exports/b.json: the file starts with a JSON array's '[', not one object per line (NDJSON); nothing written. If it is an array of objects, convert it with:"), "\(result.stderrText)")
            #expect(!result.stderrText.contains("one JSON array"), "\(result.stderrText)")
            #expect(result.stderrText.contains("jq -c '.[]' exports/b.json"), "\(result.stderrText)")
            #expect(try dir.read("out.json") == Array("old\n".utf8))
        }
    }

    /// Not an array file: an array of objects after the first line, or a first line that is an
    /// array of no objects, is a bad line.
    @Test func otherArrayLinesAreBadLines() throws {
        try ScratchDirectory.with { dir in
            try dir.write("a.ndjson", eventLine("j", "5") + "[{\"joke_id\": \"j\", \"rating\": 5}]\n")
            try dir.write("b.ndjson", "[1]\n" + eventLine("j", "5"))
            let result = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "--max-invalid", "2", "-q",
                                       "a.ndjson", "b.ndjson"], in: dir)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrText == "a.ndjson:2: invalid record: the line is not a JSON object\n"
                    + "b.ndjson:1: invalid record: the line is not a JSON object\n")
        }
    }

    /// Item 9: a directory with no file the run reads is an export that has not arrived: 66
    /// (retried), saying no file matched and which names are read; never the --allow-empty hint.
    @Test(arguments: [[], ["sub/a.ndjson"], ["export.NDJSON"], ["x.ndjson.part"], [".hidden.ndjson"]])
    func directoryWithoutExportFilesIs66(_ names: [String]) throws {
        try ScratchDirectory.with { dir in
            try FileManager.default.createDirectory(atPath: dir.path("exports"), withIntermediateDirectories: true)
            for name in names { try dir.write("exports/\(name)", eventLine("j", "5")) }
            let result = try Self.run(["aggregate", "--computed-at", fixedComputedAt, "-o", "out.json", "--metrics", "m.prom",
                                       "exports"], in: dir)
            #expect(result.status == 66, "\(result.stderrText)")
            #expect(result.stderrText.contains("exports: no file matched; a directory contributes its regular files named *.ndjson"),
                    "\(result.stderrText)")
            #expect(!result.stderrText.contains("--allow-empty"))
            #expect(try !dir.listing().contains("out.json"))
        }
    }

    /// A Firestore managed export is not NDJSON: `migrate` says so (64).
    @Test func migrateRefusesAManagedExport() throws {
        try ScratchDirectory.with { dir in
            try dir.write("export/export.overall_export_metadata", "x")
            try dir.write("export/all_namespaces/kind_rating_events/output-0", "x")
            try dir.write("kind/all_namespaces_kind_rating_events.export_metadata", "x")
            for input in ["export", "kind"] {
                let result = try Self.run(["migrate", "-o", "out.ndjson", input], in: dir)
                #expect(result.status == 64, "\(result.stderrText)")
                #expect(result.stderrText.contains("\(input) is a Firestore managed export; this command reads NDJSON files only"),
                        "\(result.stderrText)")
            }
        }
    }
}
