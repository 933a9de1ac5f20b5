import Foundation
import Testing

/// The safety net as the installed night runs it: the publish step (`RANKINGS_PUBLISH`,
/// `Tests/scheduling/fake-hook`), `RANKINGS_METRICS` and the night's own rankings-night.prom
/// beside it, and flags given by hand after `--`, against the scripted fake `rankings` and
/// against the real binary.
@Suite struct SafetyNetSchedulingTests {
    typealias Staging = SchedulingTests.Staging
    typealias Hook = SchedulingTests.Hook
    typealias Command = SchedulingTests.Command

    /// The series of a metrics file by name (labels included), as node_exporter reads them.
    static func metrics(_ path: String) throws -> [String: String] {
        var found: [String: String] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            let words = line.split(separator: " ")
            if words.count == 2 { found[String(words[0])] = String(words[1]) }
        }
        return found
    }

    /// The publish step gets the new document, already in place, as its last argument. It may
    /// leave a process behind (an upload sent to the background); had it the night's lock open,
    /// that process would keep it, and every later night would be turned away with 75 until it
    /// ended. The hook reports the descriptors it was given.
    @Test func thePublishGetsTheDocumentInPlaceAndNotTheLock() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let hook = stage.base.appendingPathComponent("fd-hook")
            let seen = stage.base.appendingPathComponent("seen")
            try Data("#!/bin/sh\n{ printf '%s %s\\n' \"$*\" \"$(head -n 1 \"$1\")\"; ls -l /proc/$$/fd; } >'\(seen.path)'\n".utf8).write(to: hook)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)
            let config = try stage.fakeConfig(fake, ["RANKINGS_PUBLISH": hook.path])
            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == 0, "\(run.stderrText)")
            let said = try String(contentsOf: seen, encoding: .utf8)
            #expect(said.hasPrefix("\(stage.url("out/all_time.json").path) {\"fake\":true}\n"), "\(said)")
            #expect(!said.contains(".rankings.lock"), "\(said)")
        }
    }

    /// Only the hand-over failing: the publish is tried again (the document is written once), the
    /// night fails with 69, the document stays, and rankings-night.prom says so: the night's exit
    /// status 69, the publish step's 69 after its 4 tries, and the last success (the alert's
    /// series) not advanced past the last night that published.
    @Test func aFailingPublishIsTriedAgainAloneThenTheNightFailsAndTheMetricsSaySo() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0", "0", "0"])
            let hook = try Hook(stage, plan: ["0", "1", "2", "1", "3", "0"])
            let metrics = stage.url("out/rankings.prom").path
            let night = stage.url("out/rankings-night.prom").path
            let config = try stage.fakeConfig(fake, ["RANKINGS_PUBLISH": "\"\(hook.command)\"", "RANKINGS_METRICS": metrics])

            #expect(try stage.runNight(["run", "--config", config.path], fake: fake).status == 0)
            let success = try #require(try Self.metrics(night)["rankings_night_last_success_timestamp_seconds"])

            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == 69, "\(run.stderrText)")
            #expect(try fake.calls().count == 2, "the document is written once a night; only the hand-over is tried again")
            #expect(try hook.calls().count == 5)
            #expect(try stage.text("out/all_time.json") == "{\"fake\":true}\n")
            #expect(run.stderrText.contains("publish: failed with status 3 on try 4; no tries left"), "\(run.stderrText)")
            let after = try Self.metrics(night)
            #expect(after["rankings_night_last_run_exit_status"] == "69")
            #expect(after["rankings_night_step_exit_status{step=\"publish\"}"] == "3")
            #expect(after["rankings_night_step_tries{step=\"publish\"}"] == "4")
            #expect(after["rankings_night_step_exit_status{step=\"aggregate\"}"] == "0")
            #expect(after["rankings_night_last_success_timestamp_seconds"] == success)
        }
    }

    /// The whole net with the real binary: a good night, a night whose export lost half its votes
    /// (refused with 65 and not tried again, the document and the last success kept, nothing
    /// published), then the drop accepted once by hand with `-- --max-drop 100`.
    @Test func aTruncatedExportIsRefusedThenAcceptedOnceByHand() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let shipped = try stage.text("etc/rankings.conf")
            #expect(shipped.contains("\nRANKINGS_FLAGS=\"--max-drop 1\"\n"))
            #expect(shipped.contains("\nRANKINGS_METRICS=\n"))
            #expect(shipped.contains("\nRANKINGS_PUBLISH=\n"))

            let sample = RankingsBinary.packageRoot.appendingPathComponent("sample-data/rating_events.ndjson")
            let lines = try String(contentsOf: sample, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            let exports = stage.base.appendingPathComponent("exports")
            try FileManager.default.createDirectory(at: exports, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: stage.url("out"), withIntermediateDirectories: true)
            let export = exports.appendingPathComponent("rating_events.ndjson")
            try FileManager.default.copyItem(at: sample, to: export)

            let hook = try Hook(stage)
            let output = stage.url("out/all_time.json").path
            let metrics = stage.url("out/rankings.prom").path
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": exports.path,
                "RANKINGS_OUTPUT": output,
                "RANKINGS_FLAGS": "\"--max-drop 1\"",
                "RANKINGS_METRICS": metrics,
                "RANKINGS_PUBLISH": "\"\(hook.command)\"",
                "RANKINGS_BIN": RankingsBinary.url.path,
            ])

            #expect(try stage.runNight(["run", "--config", config.path]).status == 0)
            let good = try Data(contentsOf: URL(fileURLWithPath: output))
            let success = try #require(try Self.metrics(metrics)["rankings_last_success_timestamp_seconds"])
            #expect(try hook.calls().count == 1)

            try Data(lines.prefix(2500).joined(separator: "\n").utf8).write(to: export)
            let refused = try stage.runNight(["run", "--config", config.path])
            #expect(refused.status == 65, "\(refused.stderrText)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == good)
            #expect(try Self.metrics(metrics)["rankings_last_run_exit_status"] == "65")
            #expect(try Self.metrics(metrics)["rankings_last_success_timestamp_seconds"] == success)
            #expect(try hook.calls().count == 1)
            #expect(refused.stderrText.contains("rankings: error: --max-drop 1: the new document has 2434 ratings"), "\(refused.stderrText)")
            #expect(refused.stderrText.components(separatedBy: "aggregate: try ").count - 1 == 1, "65 was tried again")

            let accepted = try stage.runNight(["run", "--config", config.path, "--", "--max-drop", "100"])
            #expect(accepted.status == 0, "\(accepted.stderrText)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) != good)
            #expect(try Self.metrics(metrics)["rankings_last_run_exit_status"] == "0")
            #expect(try hook.calls().count == 2)

            // Once: the next night has the guard back.
            try Data(lines.prefix(1000).joined(separator: "\n").utf8).write(to: export)
            #expect(try stage.runNight(["run", "--config", config.path]).status == 65)
        }
    }
}
