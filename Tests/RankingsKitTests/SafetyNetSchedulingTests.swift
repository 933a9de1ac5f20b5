import Foundation
import Testing

/// The safety net as the installed cron wrapper runs it: the publish hook (`RANKINGS_PUBLISH`,
/// `Tests/scheduling/fake-hook`), `RANKINGS_METRICS`, and flags given by hand, first against the
/// scripted fake `rankings`, then against the real binary.
@Suite struct SafetyNetSchedulingTests {
    typealias Staging = SchedulingTests.Staging

    /// A copy of fake-hook's state: what it will answer and whom it was called with.
    struct Hook {
        let directory: URL
        var command: String {
            RankingsBinary.packageRoot.appendingPathComponent("Tests/scheduling/fake-hook").path + " " + directory.path
        }

        init(_ stage: Staging, plan: [String] = []) throws {
            directory = stage.base.appendingPathComponent("hook")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(plan.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("plan"))
        }

        func calls() throws -> [String] {
            let url = directory.appendingPathComponent("calls")
            guard FileManager.default.fileExists(atPath: url.path) else { return [] }
            return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
        }
    }

    func config(_ stage: Staging, fake: SchedulingTests.FakeRankings, hook: Hook?,
                extra: [String: String] = [:]) throws -> URL {
        var settings = [
            "RANKINGS_EXPORTS": stage.url("exports").path,
            "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
            "RANKINGS_FLAGS": "\"--max-invalid 5\"",
            "RANKINGS_BIN": fake.executable.path,
        ]
        if let hook { settings["RANKINGS_PUBLISH"] = "\"\(hook.command)\"" }
        return try stage.writeConfig(settings.merging(extra) { $1 })
    }

    var document: String { "{\"fake\":true}" }

    @Test func hookRunsOnceAfterSuccessWithTheDocumentsPath() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let hook = try Hook(stage)
            let run = try stage.runWrapper(config: try config(stage, fake: fake, hook: hook), fake: fake)
            #expect(run.status == 0, "\(stage.log())")
            // The hook sees the new document already in place.
            #expect(try hook.calls() == ["\(stage.url("out/all_time.json").path) \(document)"])
            #expect(stage.log().contains("published \(stage.url("out/all_time.json").path)"))
        }
    }

    @Test func hookRunsOnceAfterATransientFailureAndARetry() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["74", "0"])
            let hook = try Hook(stage)
            let run = try stage.runWrapper(config: try config(stage, fake: fake, hook: hook), fake: fake)
            #expect(run.status == 0, "\(stage.log())")
            #expect(try fake.calls().count == 2)
            #expect(try hook.calls().count == 1)
        }
    }

    @Test(arguments: [["64"], ["65"], ["74", "74", "73", "66"]])
    func hookNeverRunsAfterAFailedAggregation(plan: [String]) throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: plan)
            let hook = try Hook(stage)
            let run = try stage.runWrapper(config: try config(stage, fake: fake, hook: hook), fake: fake)
            #expect(run.status == Int32(plan.last!))
            #expect(try hook.calls() == [])
            #expect(!stage.log().contains("publishing"))
        }
    }

    /// A hook may leave a process behind (an upload sent to the background); had the hook the
    /// wrapper's lock open, that process would keep it, and every later run would be turned
    /// away with 75 until it ended. The hook reports the descriptors it was given.
    @Test func theHookIsNotGivenTheLock() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let hook = stage.base.appendingPathComponent("fd-hook")
            let seen = stage.base.appendingPathComponent("descriptors")
            try Data("#!/bin/sh\nls -l /proc/$$/fd >'\(seen.path)'\n".utf8).write(to: hook)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)
            let config = try config(stage, fake: fake, hook: nil, extra: ["RANKINGS_PUBLISH": hook.path])
            let run = try stage.runWrapper(config: config, fake: fake)
            #expect(run.status == 0, "\(stage.log())")
            let descriptors = try String(contentsOf: seen, encoding: .utf8)
            #expect(!descriptors.isEmpty)
            #expect(!descriptors.contains(".rankings.lock"), "\(descriptors)")
        }
    }

    @Test func aFailingHookIsRetriedThenReportedAndLeavesTheDocument() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0", "0"])
            let hook = try Hook(stage, plan: ["1", "2", "1", "3", "0"])
            let run = try stage.runWrapper(config: try config(stage, fake: fake, hook: hook), fake: fake)
            #expect(run.status == 69, "\(stage.log())")
            #expect(try fake.calls().count == 1, "the document is written once; only the hand-over is retried")
            #expect(try hook.calls().count == 4)
            #expect(try stage.text("out/all_time.json") == document + "\n")
            #expect(stage.log().contains("publish hook failed with status 3 on try 4; no tries left"))
        }
    }

    @Test func aHookThatRecoversOnItsRetryIsASuccess() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let hook = try Hook(stage, plan: ["7", "0"])
            let run = try stage.runWrapper(config: try config(stage, fake: fake, hook: hook), fake: fake)
            #expect(run.status == 0, "\(stage.log())")
            #expect(try hook.calls().count == 2)
        }
    }

    @Test func noHookConfiguredRunsNothing() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let run = try stage.runWrapper(config: try config(stage, fake: fake, hook: nil, extra: ["RANKINGS_PUBLISH": ""]),
                                           fake: fake)
            #expect(run.status == 0, "\(stage.log())")
            #expect(!stage.log().contains("publish"))
        }
    }

    @Test func metricsPathAndFlagsGivenByHandReachTheJob() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let metrics = stage.url("out/rankings.prom").path
            let config = try config(stage, fake: fake, hook: nil, extra: ["RANKINGS_METRICS": metrics])
            let run = try Command.run(stage.wrapper.path, [config.path, "--max-drop", "100"], environment: fake.environment)
            #expect(run.status == 0, "\(stage.log())")
            #expect(try fake.calls() == [
                "aggregate --max-invalid 5 --metrics \(metrics) --max-drop 100 --output \(stage.url("out/all_time.json").path) "
                    + stage.url("exports").path,
            ])
        }
    }

    typealias Command = SchedulingTests.Command

    /// The whole net with the real binary: a good night, a night whose export lost half its votes
    /// (refused, the document and the last success kept, nothing published), then the drop
    /// accepted once by hand.
    @Test func truncatedExportIsRefusedThenAcceptedOnceByHand() throws {
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
            func metric(_ name: String) throws -> String? {
                try String(contentsOfFile: metrics, encoding: .utf8).split(separator: "\n")
                    .first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
            }

            #expect(try stage.runWrapper(config: config).status == 0, "\(stage.log())")
            let good = try Data(contentsOf: URL(fileURLWithPath: output))
            let success = try #require(try metric("rankings_last_success_timestamp_seconds"))
            #expect(try hook.calls().count == 1)

            try Data(lines.prefix(2500).joined(separator: "\n").utf8).write(to: export)
            let refused = try stage.runWrapper(config: config)
            #expect(refused.status == 65, "\(stage.log())")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == good)
            #expect(try metric("rankings_last_run_exit_status") == "65")
            #expect(try metric("rankings_last_success_timestamp_seconds") == success)
            #expect(try hook.calls().count == 1)
            #expect(stage.log().contains("rankings: error: --max-drop 1: the new document has 2434 ratings"))

            let accepted = try Command.run(stage.wrapper.path, [config.path, "--max-drop", "100"])
            #expect(accepted.status == 0, "\(stage.log())")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) != good)
            #expect(try metric("rankings_last_run_exit_status") == "0")
            #expect(try hook.calls().count == 2)
        }
    }
}
