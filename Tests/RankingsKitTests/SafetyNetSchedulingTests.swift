import Foundation
import Testing

/// The safety net as the installed night runs it: the night's one metrics file
/// (`RANKINGS_METRICS`), what the job is handed, and the guard's drop accepted once by hand after
/// `--`, against the scripted fake `rankings` and against the real binary.
@Suite struct SafetyNetSchedulingTests {
    typealias Staging = SchedulingTests.Staging
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

    /// The job may leave a process behind (a stand-in sent to the background); had it the night's
    /// lock open, that process would keep it, and every later night would be turned away with 75
    /// until it ended. The job reports the descriptors it was given.
    @Test func theJobIsNotHandedTheLock() throws {
        try Staging.with { stage in
            let job = stage.base.appendingPathComponent("fd-job")
            let seen = stage.base.appendingPathComponent("seen")
            try Data("#!/bin/sh\nls -l /proc/$$/fd >'\(seen.path)'\nexit 0\n".utf8).write(to: job)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: job.path)
            #expect(try stage.installToRun(binary: job).status == 0)
            let config = try stage.writeConfig(["RANKINGS_EXPORTS": stage.base.path])
            _ = try stage.runNight(["run", "--config", config.path])
            let said = try String(contentsOf: seen, encoding: .utf8)
            #expect(!said.contains(".rankings.lock"), "\(said)")
        }
    }

    /// One metrics file a night, failed nights included: its exit status, each step's, and the
    /// last success (the alert's series) carried over by a failed night, never advanced by it.
    /// 0.4's rankings-night.prom and rankings-fetch.prom beside it are gone after the first night.
    @Test func aFailedNightsMetricsSaySoAndCarryTheLastSuccessOver() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0", "66"])
            let metrics = stage.state.appendingPathComponent("rankings.prom").path
            for old in ["rankings-night.prom", "rankings-fetch.prom"] {
                try Data("rankings_night_last_run_exit_status 0\n".utf8).write(to: stage.state.appendingPathComponent(old))
            }
            let config = try stage.fakeConfig(fake, ["RANKINGS_METRICS": metrics, "RANKINGS_RETRIES": "0"])

            #expect(try stage.runNight(["run", "--config", config.path], fake: fake).status == 0)
            let success = try #require(try Self.metrics(metrics)["rankings_night_last_success_timestamp_seconds"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.state.path).filter { $0.hasSuffix(".prom") }
                == ["rankings.prom"])

            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == 66, "\(run.stderrText)")
            #expect(try String(contentsOf: stage.state.appendingPathComponent("all_time.json"), encoding: .utf8) == "{\"fake\":true}\n",
                    "the board of the night before is kept")
            let after = try Self.metrics(metrics)
            #expect(after["rankings_night_last_run_exit_status"] == "66")
            #expect(after["rankings_night_step_exit_status{step=\"aggregate\"}"] == "66")
            #expect(after["rankings_night_step_tries{step=\"aggregate\"}"] == "1")
            #expect(after["rankings_night_step_exit_status{step=\"fetch\"}"] == "-1")
            #expect(after["rankings_night_last_success_timestamp_seconds"] == success)
        }
    }

    /// The whole net with the real binary: a good night, a night whose export lost half its votes
    /// (refused with 65 and not tried again, the board and the last success kept), then the drop
    /// accepted once by hand with `-- --max-drop 100`, and the guard back the night after. The
    /// shipped file leaves the guard at its default, 1 %.
    @Test func aTruncatedExportIsRefusedThenAcceptedOnceByHand() throws {
        try Staging.with { stage in
            #expect(try stage.installToRun().status == 0)
            let shipped = try stage.text("etc/rankings.conf")
            #expect(shipped.contains("\n#RANKINGS_MAX_DROP=1\n"))

            let sample = RankingsBinary.packageRoot.appendingPathComponent("sample-data/rating_events.ndjson")
            let lines = try String(contentsOf: sample, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            try FileManager.default.createDirectory(at: stage.exports, withIntermediateDirectories: true)
            let export = stage.exports.appendingPathComponent("rating_events.ndjson")
            try FileManager.default.copyItem(at: sample, to: export)

            let output = stage.state.appendingPathComponent("all_time.json")
            let metrics = stage.state.appendingPathComponent("rankings.prom").path
            let config = try stage.writeConfig(["RANKINGS_EXPORTS": stage.exports.path, "RANKINGS_METRICS": metrics])

            #expect(try stage.runNight(["run", "--config", config.path]).status == 0)
            let good = try Data(contentsOf: output)
            let success = try #require(try Self.metrics(metrics)["rankings_night_last_success_timestamp_seconds"])

            try Data(lines.prefix(2500).joined(separator: "\n").utf8).write(to: export)
            let refused = try stage.runNight(["run", "--config", config.path])
            #expect(refused.status == 65, "\(refused.stderrText)")
            #expect(try Data(contentsOf: output) == good)
            #expect(try Self.metrics(metrics)["rankings_night_last_run_exit_status"] == "65")
            #expect(try Self.metrics(metrics)["rankings_night_last_success_timestamp_seconds"] == success)
            #expect(refused.stderrText.contains("rankings: error: --max-drop 1: the new document has 2434 ratings"), "\(refused.stderrText)")
            #expect(refused.stderrText.components(separatedBy: "aggregate: try ").count - 1 == 1, "65 was tried again")

            let accepted = try stage.runNight(["run", "--config", config.path, "--", "--max-drop", "100"])
            #expect(accepted.status == 0, "\(accepted.stderrText)")
            #expect(try Data(contentsOf: output) != good)
            #expect(try Self.metrics(metrics)["rankings_night_last_run_exit_status"] == "0")

            // Once: the next night has the guard back.
            try Data(lines.prefix(1000).joined(separator: "\n").utf8).write(to: export)
            #expect(try stage.runNight(["run", "--config", config.path]).status == 65)
        }
    }
}
