import Foundation
import Testing

/// A layered night folder (issue 40): a base and change files `STEM.changes-NNNNNN.ndjson`,
/// read by `aggregate DIR` as the one snapshot they make, the later document winning by name.
@Suite("Layered night folders")
struct LayeredFolderTests {
    static let prefix = "projects/p/databases/(default)/documents/rating_events/"
    static let base = "rating_events.ndjson"
    static func change(_ n: Int) -> String { "rating_events.changes-" + String(format: "%06d", n) + ".ndjson" }

    /// A typed line as the fetch writes it: compact, `name` first.
    static func doc(_ id: String, _ joke: String, _ rating: String) -> String {
        #"{"name":"\#(prefix)\#(id)","fields":{"joke_id":{"stringValue":"\#(joke)"},"rating":{"integerValue":"\#(rating)"}},"#
            + #""createTime":"2026-02-01T00:00:00Z","updateTime":"2026-02-01T00:00:00Z"}"# + "\n"
    }

    /// A document without a rating: a bad line.
    static func unrated(_ id: String, _ joke: String) -> String {
        #"{"name":"\#(prefix)\#(id)","fields":{"joke_id":{"stringValue":"\#(joke)"}}}"# + "\n"
    }

    /// E1 re-rated 4 -> 1; E2 re-rated twice (5 -> 1 -> 5); E3 bad in the base, good in change 2;
    /// E4 good in the base, bad (rating 9) on line 3 of change 2; E5 and a flat record kept; E6
    /// and E7 new, one in each change file.
    static let night: [(String, String)] = [
        (base, doc("E1", "j1", "4") + doc("E2", "j2", "5") + unrated("E3", "j3") + doc("E4", "j4", "5")
            + doc("E5", "j1", "5") + eventLine("j5", "5")),
        (change(1), doc("E1", "j1", "1") + doc("E2", "j2", "1") + doc("E6", "j6", "5")),
        (change(2), doc("E2", "j2", "5") + doc("E3", "j3", "5") + doc("E4", "j4", "9") + doc("E7", "j7", "1")),
    ]

    /// The one file holding what the night's layers make together, in the same order of lines
    /// within each file's survivors.
    static let merged = doc("E1", "j1", "1") + doc("E2", "j2", "5") + doc("E3", "j3", "5") + doc("E4", "j4", "9")
        + doc("E5", "j1", "5") + eventLine("j5", "5") + doc("E6", "j6", "5") + doc("E7", "j7", "1")

    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
        var report: [String: Any]?
        func count(_ key: String) -> Int? { (report?[key] as? NSNumber).map { $0.intValue } }
    }

    /// Writes `files` under `night/` in a fresh directory and runs `aggregate` there with a
    /// report, on `inputs` (default the folder), paths relative to that directory.
    static func run(_ files: [(String, [UInt8])], inputs: [String] = ["night"], _ arguments: [String] = [],
                    before: (ScratchDirectory) throws -> Void = { _ in },
                    after: (ScratchDirectory) throws -> Void = { _ in }) throws -> Run {
        try ScratchDirectory.with { dir in
            for (name, bytes) in files { try dir.write("night/" + name, bytes) }
            try before(dir)
            let result = try RankingsBinary.run(["aggregate", "--computed-at", fixedComputedAt, "--report", "report.json"]
                                                + arguments + inputs, directory: dir.url)
            let report = try? ReportFile.object(at: dir.path("report.json"))
            try after(dir)
            return Run(status: result.status, stdout: result.stdout, stderr: result.stderrText, report: report)
        }
    }

    static func run(_ files: [(String, String)], inputs: [String] = ["night"], _ arguments: [String] = []) throws -> Run {
        try run(files.map { ($0.0, Array($0.1.utf8)) }, inputs: inputs, arguments)
    }

    /// The snapshot the layers make: the board of the merged file, byte for byte; the bad line
    /// named in the change file that holds it; the base's bad line replaced, not bad.
    @Test func layersReadAsTheMergedSnapshot() throws {
        let layered = try Self.run(Self.night, ["--max-invalid", "1"])
        let single = try Self.run([("merged.ndjson", Self.merged)], ["--max-invalid", "1"])
        #expect(layered.status == 0, "\(layered.stderr)")
        #expect(single.status == 0, "\(single.stderr)")
        #expect(layered.stdout == single.stdout)
        #expect(String(decoding: layered.stdout, as: UTF8.self).contains("\"total_hilarious_ratings\": 5,\n  \"total_horrible_ratings\": 2,"),
                "\(String(decoding: layered.stdout, as: UTF8.self))")
        let lines = layered.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "night/rating_events.changes-000002.ndjson:3: invalid record: rating is not between 1 and 5",
                "\(layered.stderr)")
        #expect(lines.count == 2 && lines[1].hasPrefix("rankings: 7 events (5 hilarious, 2 horrible, 0 neutral, "
                                                      + "5 lines replaced by later change files), 1 bad line, 6 jokes, "),
                "\(layered.stderr)")
        // E1, E2, E3 and E4 of the base, E2 of change 1.
        #expect(layered.count("replaced_lines") == 5)
        #expect(single.count("replaced_lines") == 0)
        for key in ["valid_events", "counted_events", "hilarious", "horrible", "neutral", "bad_lines",
                    "left_out_documents", "distinct_jokes", "exit_status"] {
            #expect(layered.count(key) == single.count(key), "\(key)")
        }
        // The same at one thread, and with the bad line over --max-invalid: 65, named the same.
        let refused = try Self.run(Self.night, ["--threads", "1"])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("night/rating_events.changes-000002.ndjson:3: invalid record: rating is not between 1 and 5\n"),
                "\(refused.stderr)")
        #expect(refused.count("replaced_lines") == 5)
    }

    /// A change file gzip-compressed is read the same.
    @Test func aGzipChangeFile() throws {
        var files = Self.night.map { ($0.0, Array($0.1.utf8)) }
        files[1] = (Self.change(1) + ".gz", try ScratchDirectory.gzip(files[1].1))
        let layered = try Self.run(files, ["--max-invalid", "1"])
        let single = try Self.run([("merged.ndjson", Self.merged)], ["--max-invalid", "1"])
        #expect(layered.status == 0, "\(layered.stderr)")
        #expect(layered.stdout == single.stdout)
        #expect(layered.count("replaced_lines") == 5)
    }

    /// A change file's line whose name cannot be read without decoding it is refused with 65,
    /// naming the file and line, before anything is counted; the old output stays.
    @Test(arguments: [
        #"{"name":"\#(prefix)E\u0031","fields":{"joke_id":{"stringValue":"j1"},"rating":{"integerValue":"1"}}}"# + "\n",
        #"{"name":"\#(prefix)E\"1","fields":{"joke_id":{"stringValue":"j1"},"rating":{"integerValue":"1"}}}"# + "\n",
        #"{"fields":{"joke_id":{"stringValue":"j1"},"rating":{"integerValue":"1"}},"name":"\#(prefix)E1"}"# + "\n",
        #"{"name": "\#(prefix)E1","fields":{"joke_id":{"stringValue":"j1"},"rating":{"integerValue":"1"}}}"# + "\n",
        eventLine("j1", "1"),
        "{\"name\":\"" + prefix + "E1\n",
    ])
    func anEscapedOrMissingNameInAChangeIs65(_ line: String) throws {
        let files = [(Self.base, Self.doc("E1", "j1", "4")), (Self.change(1), Self.doc("E0", "j0", "5") + "\n" + line)]
        let run = try Self.run(files.map { ($0.0, Array($0.1.utf8)) }, ["-o", "out.json"],
                               before: { dir in try dir.write("out.json", "old\n") },
                               after: { dir in
                                   let kept = try dir.read("out.json")
                                   #expect(kept == Array("old\n".utf8))
                               })
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr == "rankings: error: night/rating_events.changes-000001.ndjson:3: a change file's line must start with "
                + #"{"name":" and name its document without escapes (the run cannot tell which document it replaces); "#
                + "nothing written\n", "\(run.stderr)")
    }

    /// A base line that spells its name with an escape is never replaced: it is counted, and
    /// so is the change file's document of the same name.
    @Test func anEscapedNameInTheBaseIsNeverReplaced() throws {
        let escaped = #"{"name":"\#(Self.prefix)E\u0031","fields":{"joke_id":{"stringValue":"j1"},"rating":{"integerValue":"4"}}}"# + "\n"
        let run = try Self.run([(Self.base, escaped + Self.doc("E2", "j2", "5")),
                                (Self.change(1), Self.doc("E1", "j1", "1") + Self.doc("E2", "j2", "1"))])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.count("valid_events") == 3)
        #expect(run.count("replaced_lines") == 1)
        #expect(run.count("horrible") == 2)
    }

    /// Without change files of its stem, a directory reads as it always did: every line counts,
    /// whatever other names it holds (another stem's change files, five digits, 000000); and
    /// files named by themselves are never layers.
    @Test func withoutChangeFilesNothingIsReplaced() throws {
        let same = Self.doc("E1", "j1", "5")
        let folder = try Self.run([(Self.base, same), ("rating_events.changes-00001.ndjson", same),
                                   ("rating_events.changes-000000.ndjson", same), ("other.changes-000001.ndjson", same)])
        #expect(folder.status == 0, "\(folder.stderr)")
        // The other stem's change file has nothing of its own to replace.
        #expect(folder.count("valid_events") == 4)
        #expect(folder.count("replaced_lines") == 0)
        #expect(folder.stderr.hasPrefix("rankings: 4 events (4 hilarious, 0 horrible, 0 neutral), 0 bad lines, 1 joke, "),
                "\(folder.stderr)")

        let named = try Self.run(Self.night, inputs: ["night/" + Self.base, "night/" + Self.change(1), "night/" + Self.change(2)],
                                 ["--max-invalid", "2"])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.count("valid_events") == 11)
        #expect(named.count("bad_lines") == 2)
        #expect(named.count("replaced_lines") == 0)
    }

    /// Change files with no base: the later still wins among them.
    @Test func changeFilesWithoutABase() throws {
        let run = try Self.run([(Self.change(1), Self.doc("E1", "j1", "5")), (Self.change(3), Self.doc("E1", "j1", "1"))])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.count("valid_events") == 1)
        #expect(run.count("horrible") == 1)
        #expect(run.count("replaced_lines") == 1)
    }
}
