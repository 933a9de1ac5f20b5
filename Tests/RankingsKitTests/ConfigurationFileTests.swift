import Foundation
import Testing

/// The configuration file as the installed night reads it: as data, in the KEY=VALUE syntax of
/// docs/configuration.md, by the one reader (rankings_night/settings.py, whose every rule has its
/// unit test in Tests/night/test_settings.py). What only an installed night shows is checked
/// here: a line outside the syntax stops it with 78, naming the file and line on standard error,
/// before it runs, locks or writes anything, and a command smuggled into a value never runs; a
/// valid file hands the job exactly its values, and only its values; the shipped file holds every
/// setting there is, commented out at its default.
@Suite struct ConfigurationFileTests {
    typealias Staging = SchedulingTests.Staging
    typealias Command = SchedulingTests.Command

    /// Lines that 0.2's `source` ran, half-ran, or read differently from systemd. `MARK` stands
    /// for a file a command smuggled into a value would create.
    static let refusedLines: [(line: String, reason: String)] = [
        ("RANKINGS_FIRESTORE_TOKEN_COMMAND=/usr/local/bin/print-token --project jokes (prod)", "\"(\" is not allowed"),
        ("RANKINGS_MAX_DROP=1;touch MARK", "\";\" is not allowed"),
        ("RANKINGS_FIRESTORE_TOKEN_COMMAND=\"print-token & touch MARK\"", "\"&\" is not allowed"),
        ("RANKINGS_METRICS=/tmp/rankings.prom>MARK", "\">\" is not allowed"),
        ("RANKINGS_FIRESTORE_TOKEN_COMMAND=\"$(touch MARK)\"", "\"$\" is not allowed"),
        ("RANKINGS_FIRESTORE_TOKEN_COMMAND=\"`touch MARK`\"", "\"`\" is not allowed"),
        ("RANKINGS_MAX_DROP=1 # the guard", "a comment after a value: put it on a line of its own"),
        ("RANKINGS_MAX_DROP=1\r", "a carriage return"),
        ("RANKINGS_MAX_DROPS=1", "unknown setting RANKINGS_MAX_DROPS (did you mean RANKINGS_MAX_DROP?)"),
        ("export RANKINGS_MAX_DROP=1", "not a KEY=VALUE line"),
        ("RANKINGS_RETRIES=eleven", "RANKINGS_RETRIES=eleven: must be a whole number from 0 to 10"),
        ("RANKINGS_METRICS=rankings.prom", "RANKINGS_METRICS=rankings.prom: must be an absolute path"),
        // bash's read dropped the NUL and ran the job with --max-drop 10.
        ("RANKINGS_MAX_DROP=\"1\u{0}0\"", "byte 0x00 is not allowed in the file"),
        // 0.3's wrapper then failed every command with E2BIG, flock's reported as a held lock (75).
        ("RANKINGS_FIRESTORE_TOKEN_COMMAND=\"" + String(repeating: "a", count: 300_000) + "\"",
         "a value of 300000 bytes is longer than a program's environment holds"),
    ]

    @Test(arguments: refusedLines.indices)
    func aLineOutsideTheSyntaxIsRefusedBeforeAnythingRuns(index: Int) throws {
        let (bad, reason) = Self.refusedLines[index]
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let mark = stage.base.appendingPathComponent("MARK")
            // The required settings before the bad line, the shrink guard after it: 0.2 stopped
            // reading at a syntax error and ran the job without the guard.
            let text = [
                "# written by the test",
                "RANKINGS_EXPORTS=\(stage.exports.path)",
                "RANKINGS_STATE_DIRECTORY=\(stage.state.path)",
                bad.replacingOccurrences(of: "MARK", with: mark.path),
                "RANKINGS_MAX_DROP=1",
            ].joined(separator: "\n") + "\n"
            let config = stage.base.appendingPathComponent("rankings.conf")
            try Data(text.utf8).write(to: config)

            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == 78, "\(run.stderrText.prefix(500))")
            #expect(run.stderrText.hasPrefix("rankings-night: error: \(config.path):4: "), "\(run.stderrText.prefix(500))")
            #expect(run.stderrText.contains(reason), "\(run.stderrText.prefix(500))")
            #expect(try fake.calls() == [], "the job ran")
            #expect(!FileManager.default.fileExists(atPath: mark.path), "a command in a value ran")
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.state.path) == [], "the night wrote in its folder")
        }
    }

    /// Everything the syntax allows at once: comments (indented too), blank lines with blanks,
    /// trailing blanks, empty and quoted-empty values, a later line replacing an earlier one, a
    /// quoted path with spaces and parentheses, every allowed punctuation mark, no newline at the
    /// end. systemd's night reads the same file the same way (Tests/container checks that).
    static let trickyValidFile = """
        # A comment
           # an indented comment
        \t
        RANKINGS_EXPORTS=@EXPORTS@
        RANKINGS_STATE_DIRECTORY="@STATE@"\("   ")
        RANKINGS_MAX_DROP=7
        RANKINGS_MAX_DROP=0.5
        RANKINGS_MAX_REFUSED=2.5
        RANKINGS_METRICS=
        RANKINGS_FIRESTORE_DATABASE="(default)"
        RANKINGS_FIRESTORE_TOKEN_COMMAND="/opt/a,b@c%d_e.f/g:h+i=j-k --x (y)"
        RANKINGS_LOG_FORMAT=""
        RANKINGS_RETRIES=0\("\t")
        """

    @Test func aValidFileHandsTheJobExactlyItsValues() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let state = stage.base.appendingPathComponent("state (a) b)")
            let text = Self.trickyValidFile
                .replacingOccurrences(of: "@EXPORTS@", with: stage.exports.path)
                .replacingOccurrences(of: "@STATE@", with: state.path)
            let config = stage.base.appendingPathComponent("rankings.conf")
            try Data(text.utf8).write(to: config)

            // Settings in the environment do not count: only the file does, as under systemd.
            let run = try Command.run(
                stage.night.path, ["run", "--config", config.path],
                environment: fake.environment.merging(["RANKINGS_METRICS": "/nonexistent/env.prom",
                                                       "RANKINGS_MAX_DROP": "100"]) { $1 })
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(try fake.calls() == [
                "aggregate --quiet --computed-at T --max-invalid 2.5% --report \(state.path)/.all_time.report.json "
                    + "--stats \(state.path)/.all_time.stats.ndjson --output \(state.path)/all_time.json --max-drop 0.5 "
                    + stage.exports.path,
            ])
            #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("all_time.json").path))
            let settings = try Command.run(stage.night.path, ["settings", "--config", config.path])
            #expect(settings.status == 0, "\(settings.stderrText)")
            #expect(settings.stdoutText.contains("\nRANKINGS_FIRESTORE_TOKEN_COMMAND=\"/opt/a,b@c%d_e.f/g:h+i=j-k --x (y)\"    # \(config.path):11\n"),
                    "\(settings.stdoutText)")
            #expect(settings.stdoutText.contains("\nRANKINGS_LOG_FORMAT=plain    # \(config.path):12\n"), "\(settings.stdoutText)")
        }
    }

    /// The shipped /etc/rankings.conf holds every setting of the night's table (settings.py's
    /// TABLE, docs/configuration.md's), each once, commented out and set nowhere, so that a fresh
    /// install runs nothing until the operator names the project or the exports (78, saying so).
    /// Uncommented, each line as shipped is valid, and a setting with a default shows it.
    @Test func theShippedFileHoldsEverySettingCommentedAtItsDefault() throws {
        try Staging.with { stage in
            #expect(try stage.installToRun().status == 0)
            let shipped = try stage.text("etc/rankings.conf")
            let lines = shipped.split(separator: "\n").map(String.init)
            #expect(lines.filter { !$0.hasPrefix("#") && !$0.isEmpty } == [], "settings set in the shipped file")
            let table = try Command.run("/usr/bin/python3", ["-I", "-c", """
                import sys; sys.path.insert(0, sys.argv[1])
                from rankings_night.settings import TABLE
                for name, (_, default) in TABLE.items(): print(name, default)
                """, stage.url("usr/local/lib/rankings").path])
            let defaults = table.stdoutText.split(separator: "\n").map { line -> (String, String) in
                let words = line.split(separator: " ", maxSplits: 1).map(String.init)
                return (words[0], words.count > 1 ? words[1] : "")
            }
            #expect(defaults.count == 12, "\(table.stdoutText) \(table.stderrText)")
            var uncommented: [String] = []
            for (name, value) in defaults {
                let commented = lines.filter { $0.hasPrefix("#\(name)=") }
                #expect(commented.count == 1, "\(name): \(commented)")
                guard let line = commented.first else { continue }
                if !value.isEmpty {
                    let shown = String(line.dropFirst(name.count + 2))
                    #expect(shown == value || shown == "\"\(value)\"", "\(line): its default is \(value)")
                }
                // With a project, RANKINGS_EXPORTS is refused: each of the two sources alone.
                if name != "RANKINGS_EXPORTS" { uncommented.append(String(line.dropFirst())) }
            }
            let config = stage.base.appendingPathComponent("all.conf")
            try Data((uncommented + ["RANKINGS_STATE_DIRECTORY=\(stage.state.path)"]).joined(separator: "\n").utf8).write(to: config)
            let settings = try Command.run(stage.night.path, ["settings", "--config", config.path])
            #expect(settings.status == 0, "\(settings.stderrText)")

            let fresh = try Command.run(stage.night.path, ["run", "--config", stage.root.path + "/etc/rankings.conf"])
            #expect(fresh.status == 78)
            #expect(fresh.stderrText.contains("RANKINGS_EXPORTS is not set"), "\(fresh.stderrText)")
        }
    }
}
