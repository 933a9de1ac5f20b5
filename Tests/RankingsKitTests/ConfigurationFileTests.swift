import Foundation
import Testing

/// The configuration file as the installed night reads it: as data, in the KEY=VALUE syntax of
/// docs/configuration.md, by the one reader (rankings_night/settings.py, whose every rule has its
/// unit test in Tests/night/test_settings.py). What only an installed night shows is checked
/// here: a line outside the syntax stops it with 78, naming the file and line on standard error,
/// before it runs, logs, locks or writes anything, and a command smuggled into a value never
/// runs; a valid file hands the job and the steps exactly its values, and only its values.
@Suite struct ConfigurationFileTests {
    typealias Staging = SchedulingTests.Staging

    /// Lines that 0.2's `source` ran, half-ran, or read differently from systemd. `MARK` stands
    /// for a file a command smuggled into a value would create.
    static let refusedLines: [(line: String, reason: String)] = [
        ("RANKINGS_PUBLISH=/usr/local/bin/upload --project jokes (prod)", "\"(\" is not allowed"),
        ("RANKINGS_FLAGS=--max-drop;touch MARK", "\";\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop 1 & touch MARK\"", "\"&\" is not allowed"),
        ("RANKINGS_FLAGS=--quiet>MARK", "\">\" is not allowed"),
        ("RANKINGS_FLAGS=\"$(touch MARK)\"", "\"$\" is not allowed"),
        ("RANKINGS_FLAGS=\"`touch MARK`\"", "\"`\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop 1\" # the guard", "a comment after a value: put it on a line of its own"),
        ("RANKINGS_FLAGS=\"--max-drop 1\"\r", "a carriage return"),
        ("RANKINGS_FLAG=\"--max-drop 1\"", "unknown setting RANKINGS_FLAG (did you mean RANKINGS_FLAGS?)"),
        ("export RANKINGS_FLAGS=\"--max-drop 1\"", "not a KEY=VALUE line"),
        ("RANKINGS_RETRIES=eleven", "RANKINGS_RETRIES=eleven: must be a number"),
        // bash's read dropped the NUL and ran the job with --max-drop 1.
        ("RANKINGS_FLAGS=\"--max-drop 1\u{0}0\"", "byte 0x00 is not allowed in the file"),
        // 0.3's wrapper then failed every command with E2BIG, flock's reported as a held lock (75).
        ("RANKINGS_FLAGS=\"" + String(repeating: "a", count: 300_000) + "\"",
         "RANKINGS_FLAGS: a value of 300000 bytes cannot reach the steps"),
    ]

    @Test(arguments: refusedLines.indices)
    func aLineOutsideTheSyntaxIsRefusedBeforeAnythingRuns(index: Int) throws {
        let (bad, reason) = Self.refusedLines[index]
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let mark = stage.base.appendingPathComponent("MARK")
            let log = stage.base.appendingPathComponent("night.log")
            // The required settings before the bad line, the shrink guard after it: 0.2 stopped
            // reading at a syntax error and ran the job without the guard.
            let text = [
                "# written by the test",
                "RANKINGS_EXPORTS=\(stage.url("exports").path)",
                "RANKINGS_OUTPUT=\(stage.url("out/all_time.json").path)",
                "RANKINGS_BIN=\(fake.executable.path)",
                "RANKINGS_LOG_FILE=\(log.path)",
                // A step that would leave MARK, had anything run.
                "RANKINGS_FETCH=\"/usr/bin/touch \(mark.path)\"",
                bad.replacingOccurrences(of: "MARK", with: mark.path),
                "RANKINGS_FLAGS=\"--max-drop 1\"",
            ].joined(separator: "\n") + "\n"
            let config = stage.base.appendingPathComponent("rankings.conf")
            try Data(text.utf8).write(to: config)

            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == 78, "\(run.stderrText.prefix(500))")
            #expect(run.stderrText.hasPrefix("rankings-night: \(config.path):7: "), "\(run.stderrText.prefix(500))")
            #expect(run.stderrText.contains(reason), "\(run.stderrText.prefix(500))")
            #expect(try fake.calls() == [], "the job ran")
            for left in [mark, log, stage.url("out/.rankings.lock"), stage.url("out/.rankings-nights.json")] {
                #expect(!FileManager.default.fileExists(atPath: left.path), "\(left.path) was written")
            }
        }
    }

    /// Everything the syntax allows at once: comments (indented too), blank lines with blanks,
    /// trailing blanks, empty and quoted-empty values, a later line replacing an earlier one,
    /// a quoted path with spaces, flags split at runs of spaces, and every allowed punctuation
    /// mark. systemd's night reads the same file the same way (Tests/container checks that).
    static let trickyValidFile = """
        # A comment
           # an indented comment
        \t
        RANKINGS_EXPORTS=@EXPORTS@
        RANKINGS_OUTPUT="@OUTDIR@/all time.json"\("   ")
        RANKINGS_FLAGS=--quiet
        RANKINGS_FLAGS="--max-invalid  5   --time-zone=Etc/GMT+5 --computed-at 2026-02-18T05:00:00Z  --label=a,b@c%d_e.f/g"
        RANKINGS_METRICS=
        RANKINGS_PUBLISH=""
        RANKINGS_BIN=@FAKE@\("\t")
        RANKINGS_RETRY_PAUSE_SECONDS=0
        """

    @Test func aValidFileHandsTheJobExactlyItsValues() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let outDir = stage.url("out/with space")
            try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
            let text = Self.trickyValidFile
                .replacingOccurrences(of: "@EXPORTS@", with: stage.url("exports").path)
                .replacingOccurrences(of: "@OUTDIR@", with: outDir.path)
                .replacingOccurrences(of: "@FAKE@", with: fake.executable.path)
            let config = stage.base.appendingPathComponent("rankings.conf")
            // No newline after the last line: it still counts.
            try Data(text.utf8).write(to: config)

            // Settings in the environment do not count: only the file does, as under systemd.
            let run = try SchedulingTests.Command.run(
                stage.night.path, ["run", "--config", config.path],
                environment: fake.environment.merging(["RANKINGS_METRICS": "/nonexistent/env.prom",
                                                       "RANKINGS_FLAGS": "--from-the-environment"]) { $1 })
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(try fake.calls() == [
                "aggregate --computed-at T --max-invalid 5 --time-zone=Etc/GMT+5 --computed-at 2026-02-18T05:00:00Z "
                    + "--label=a,b@c%d_e.f/g --output \(outDir.path)/all time.json \(stage.url("exports").path)",
            ])
            #expect(FileManager.default.fileExists(atPath: outDir.appendingPathComponent("all time.json").path))
        }
    }

    /// Firestore's default database is named "(default)"; in double quotes the night hands it to
    /// the steps as it is, in their environment, and a command's arguments with parentheses as
    /// written (systemd's night reads them alike: Tests/container).
    @Test func parenthesesInDoubleQuotesReachTheSteps() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let seen = stage.base.appendingPathComponent("seen")
            let fetch = stage.base.appendingPathComponent("fetch")
            try Data("#!/bin/sh\nprintf '%s|%s\\n' \"$RANKINGS_FIRESTORE_DATABASE\" \"$*\" >\(seen.path)\n".utf8).write(to: fetch)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fetch.path)
            let config = try stage.fakeConfig(fake, [
                "RANKINGS_FETCH": "\"\(fetch.path) (a) b)\"",
                "RANKINGS_FIRESTORE_DATABASE": "\"(default)\"",
            ])
            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(try String(contentsOf: seen, encoding: .utf8) == "(default)|(a) b)\n")
            #expect(try fake.calls().count == 1)
        }
    }
}
