import Foundation
import Testing

/// The configuration file as the installed cron wrapper reads it: as data, in the subset of
/// `KEY=VALUE` syntax that systemd's `EnvironmentFile=` reads the same way (docs/configuration.md).
/// A line outside it stops the wrapper with 78, naming the file and line, before it runs, logs,
/// locks or writes anything; a valid file hands the job exactly its values.
@Suite struct ConfigurationFileTests {
    typealias Staging = SchedulingTests.Staging

    /// Lines that 0.2's `source` ran, half-ran, or read differently from systemd. `MARK` stands
    /// for a file a command smuggled into a value would create.
    static let refusedLines: [(line: String, reason: String)] = [
        ("RANKINGS_PUBLISH=/usr/local/bin/upload --project jokes (prod)", "\"(\" is not allowed"),
        ("RANKINGS_FLAGS=--max-drop 1", "a value with spaces must be in double quotes"),
        ("RANKINGS_FLAGS=--max-drop;touch MARK", "\";\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop 1 & touch MARK\"", "\"&\" is not allowed"),
        ("RANKINGS_FLAGS=--quiet>MARK", "\">\" is not allowed"),
        ("RANKINGS_FLAGS=(--quiet)", "\"(\" is not allowed"),
        ("RANKINGS_FLAGS=\"$(touch MARK)\"", "\"$\" is not allowed"),
        ("RANKINGS_FLAGS=\"`touch MARK`\"", "\"`\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop 1\" # the guard", "a double-quoted value must end with \" at the end of the line"),
        ("RANKINGS_FLAGS='--max-drop 1'", "\"'\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop 1\"\r", "a carriage return"),
        ("RANKINGS_FLAGS=--quiet\r", "a carriage return"),
        ("RANKINGS_FLAGS=--max-drop\t1", "a value with spaces must be in double quotes"),
        ("RANKINGS_PUBLISH=upload --project jokes; touch MARK", "\";\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop\t1\"", "byte 0x09 is not allowed"),
        ("RANKINGS_FLAGS=--since=-30d~", "\"~\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop\\ 1\"", "\"\\\" is not allowed"),
        ("RANKINGS_FLAGS=\"--max-drop 1", "a double-quoted value must end with \" at the end of the line"),
        ("RANKINGS_FLAG=\"--max-drop 1\"", "unknown setting RANKINGS_FLAG"),
        ("export RANKINGS_FLAGS=\"--max-drop 1\"", "not a KEY=VALUE line"),
        ("RANKINGS_FLAGS = \"--max-drop 1\"", "not a KEY=VALUE line"),
        ("  RANKINGS_FLAGS=\"--max-drop 1\"", "not a KEY=VALUE line"),
        ("RANKINGS_EXTRA_FLAGS=\"--max-drop 100\"", "RANKINGS_EXTRA_FLAGS only in a file that starts with RANKINGS_INCLUDE"),
        ("RANKINGS_INCLUDE=/etc/rankings.conf", "RANKINGS_INCLUDE must be the first setting"),
        // bash's read dropped the NUL and ran the job with --max-drop 1.
        ("RANKINGS_FLAGS=\"--max-drop 1\u{0}0\"", "byte 0x00 is not allowed in the file"),
        ("RANKINGS_PUBLISH=\u{0}", "byte 0x00 is not allowed in the file"),
        // Parentheses only in double quotes, as spaces.
        ("RANKINGS_FIRESTORE_DATABASE=(default)", "\"(\" is not allowed"),
        // Every command the wrapper ran then failed with E2BIG, flock's reported as a held lock (75).
        ("RANKINGS_FLAGS=\"" + String(repeating: "a", count: 300_000) + "\"",
         "RANKINGS_FLAGS: a value of 300000 bytes cannot reach the job and the hooks"),
    ]

    @Test(arguments: refusedLines.indices)
    func aLineOutsideTheSyntaxIsRefusedBeforeAnythingRuns(index: Int) throws {
        let (bad, reason) = Self.refusedLines[index]
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let mark = stage.base.appendingPathComponent("MARK")
            let log = stage.base.appendingPathComponent("cron.log")
            // The required settings before the bad line, the shrink guard after it: 0.2 stopped
            // reading at a syntax error and ran the job without the guard.
            let text = [
                "# written by the test",
                "RANKINGS_EXPORTS=\(stage.url("exports").path)",
                "RANKINGS_OUTPUT=\(stage.url("out/all_time.json").path)",
                "RANKINGS_BIN=\(fake.executable.path)",
                "RANKINGS_LOG_FILE=\(log.path)",
                "RANKINGS_RETRY_PAUSE_SECONDS=0",
                bad.replacingOccurrences(of: "MARK", with: mark.path),
                "RANKINGS_FLAGS=\"--max-drop 1\"",
            ].joined(separator: "\n") + "\n"
            let config = stage.base.appendingPathComponent("rankings.conf")
            try Data(text.utf8).write(to: config)

            let run = try stage.runWrapper(config: config, fake: fake)
            #expect(run.status == 78, "\(run.stderrText)")
            #expect(run.stderrText.contains("\(config.path):7: "), "\(run.stderrText)")
            #expect(run.stderrText.contains(reason), "\(run.stderrText.prefix(500))")
            #expect(run.stderrText.contains("; nothing was run (see \"The configuration file\" in rankings(1))\n"),
                    "\(run.stderrText.prefix(500))")
            #expect(try fake.calls() == [], "the job ran")
            for left in [mark, log, stage.url("out/all_time.json"), stage.url("out/.rankings.lock")] {
                #expect(!FileManager.default.fileExists(atPath: left.path), "\(left.path) was written")
            }
        }
    }

    /// Everything the syntax allows at once: comments (indented too), blank lines with blanks,
    /// trailing blanks, empty and quoted-empty values, a later line replacing an earlier one,
    /// a quoted path with spaces, flags split at runs of spaces, and every allowed punctuation
    /// mark. systemd reads this file to the same values (Tests/container checks that).
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
        RANKINGS_LOG_FILE=@LOG@
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
                .replacingOccurrences(of: "@LOG@", with: stage.base.appendingPathComponent("cron.log").path)
            let config = stage.base.appendingPathComponent("rankings.conf")
            // No newline after the last line: it still counts.
            try Data(text.utf8).write(to: config)

            // Settings in the environment do not count: only the file does, as under systemd.
            let run = try SchedulingTests.Command.run(
                stage.wrapper.path, [config.path],
                environment: fake.environment.merging(["RANKINGS_METRICS": "/nonexistent/env.prom",
                                                       "RANKINGS_EXTRA_FLAGS": "--from-the-environment"]) { $1 })
            #expect(run.status == 0, "\(run.stderrText) \(stage.log())")
            #expect(try fake.calls() == [
                "aggregate --max-invalid 5 --time-zone=Etc/GMT+5 --computed-at 2026-02-18T05:00:00Z --label=a,b@c%d_e.f/g "
                    + "--output \(outDir.path)/all time.json \(stage.url("exports").path)",
            ])
            #expect(FileManager.default.fileExists(atPath: outDir.appendingPathComponent("all time.json").path))
        }
    }

    /// Firestore's default database is named "(default)"; in double quotes the wrapper hands it to
    /// the hooks as it is (systemd reads it alike: Tests/container's configuration check).
    @Test func parenthesesInDoubleQuotesReachTheHooks() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let seen = stage.base.appendingPathComponent("seen")
            let fetch = stage.base.appendingPathComponent("fetch")
            try Data("#!/bin/sh\nprintf '%s|%s\\n' \"$RANKINGS_FIRESTORE_DATABASE\" \"$*\" >\(seen.path)\n".utf8).write(to: fetch)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fetch.path)
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": stage.url("exports").path,
                "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
                "RANKINGS_BIN": fake.executable.path,
                "RANKINGS_FETCH": "\"\(fetch.path) (a) b)\"",
                "RANKINGS_FIRESTORE_DATABASE": "\"(default)\"",
            ])
            let run = try stage.runWrapper(config: config, fake: fake)
            #expect(run.status == 0, "\(run.stderrText) \(stage.log())")
            #expect(try String(contentsOf: seen, encoding: .utf8) == "(default)|(a) b)\n")
            #expect(try fake.calls().count == 1)
        }
    }

    /// The monthly file reads the main one first; nothing may include twice, and an include that
    /// is missing is a configuration error like a missing file.
    @Test func anIncludedFileMayNotIncludeAndMustExist() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let main = try stage.fakeConfig(fake)
            let inner = stage.base.appendingPathComponent("inner.conf")
            try Data("RANKINGS_INCLUDE=\(main.path)\n".utf8).write(to: inner)
            let outer = stage.base.appendingPathComponent("outer.conf")
            try Data("RANKINGS_INCLUDE=\(inner.path)\n".utf8).write(to: outer)
            let nested = try stage.runWrapper(config: outer, fake: fake)
            #expect(nested.status == 78)
            #expect(nested.stderrText.contains("\(inner.path):1: RANKINGS_INCLUDE in an included file"), "\(nested.stderrText)")

            let missing = stage.base.appendingPathComponent("missing.conf")
            try Data("RANKINGS_INCLUDE=\(stage.base.path)/nowhere.conf\n".utf8).write(to: missing)
            let absent = try stage.runWrapper(config: missing, fake: fake)
            #expect(absent.status == 78)
            #expect(absent.stderrText.contains("cannot read configuration \(stage.base.path)/nowhere.conf (RANKINGS_INCLUDE in \(missing.path):1)"),
                    "\(absent.stderrText)")
            #expect(try fake.calls() == [])
        }
    }
}
