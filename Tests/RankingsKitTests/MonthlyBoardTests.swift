import Foundation
import Testing

/// The monthly board beside the all-time one: RANKINGS_MONTHLY=yes in the one configuration,
/// made by the installed night in the same night as the all-time board, from the same snapshot,
/// and published after it. 0.3's way (an overlay configuration read by its own cron line and a
/// drop-in per unit) is gone, and what it left behind is refused, saying what to change.
@Suite struct MonthlyBoardTests {
    typealias Staging = SchedulingTests.Staging
    typealias Command = SchedulingTests.Command

    /// Both goldens from the sample with the real binary: the all-time board and the `--since
    /// -30d` one, in the week's form older app versions read. RANKINGS_EXPORTS is a `current` link, as the Firestore fetch leaves it, and a
    /// stand-in for `rankings` points it at an empty night once the first board is written, as
    /// a fetch run by hand meanwhile would: the monthly board still comes from the snapshot the
    /// night began with.
    @Test func bothBoardsFromOneSnapshotWithTheRealBinaryThenPublishedInOrder() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let root = RankingsBinary.packageRoot
            let fetched = stage.base.appendingPathComponent("fetched")
            for night in ["night1", "empty"] {
                try FileManager.default.createDirectory(at: fetched.appendingPathComponent(night), withIntermediateDirectories: true)
            }
            try FileManager.default.copyItem(at: root.appendingPathComponent("sample-data/rating_events.ndjson"),
                                             to: fetched.appendingPathComponent("night1/rating_events.ndjson"))
            try FileManager.default.createSymbolicLink(atPath: fetched.appendingPathComponent("current").path,
                                                       withDestinationPath: "night1")
            let binary = stage.base.appendingPathComponent("rankings-then-refetch")
            try Data("""
                #!/bin/sh
                '\(RankingsBinary.url.path)' "$@"
                status=$?
                # Not after the night's try of the flags on no input (its last word "-"), before any board.
                for last; do :; done
                [ "$last" = - ] || ln -sfn empty '\(fetched.path)/current'
                exit $status

                """.utf8).write(to: binary)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary.path)
            try FileManager.default.createDirectory(at: stage.url("out"), withIntermediateDirectories: true)
            let hook = try SchedulingTests.Hook(stage)
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": fetched.appendingPathComponent("current").path,
                "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
                "RANKINGS_FLAGS": "\"--computed-at \(fixedComputedAt)\"",
                "RANKINGS_MONTHLY": "yes",
                "RANKINGS_BIN": binary.path,
                "RANKINGS_PUBLISH": "\"\(hook.command)\"",
            ])

            let run = try stage.runNight(["run", "--config", config.path])
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(try Data(contentsOf: stage.url("out/all_time.json"))
                == Data(contentsOf: root.appendingPathComponent("sample-data/expected/all_time.json")))
            #expect(try Data(contentsOf: stage.url("out/monthly.json"))
                == Data(contentsOf: root.appendingPathComponent("sample-data/backfill/since-30d.week-document.json")))
            #expect(try hook.calls().map { $0.split(separator: " ").first.map(String.init) ?? "" }
                == [stage.url("out/all_time.json").path, stage.url("out/monthly.json").path])
            // One night, one lock: no second lock file as 0.3's monthly run had.
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.url("out").path).sorted()
                == [".rankings-nights.json", ".rankings.lock", "all_time.json", "monthly.json"])
        }
    }

    /// 0.3's /etc/rankings-monthly.conf, which its /etc/cron.d/rankings-monthly still hands the
    /// rankings-cron shim after an upgrade, and its RANKINGS_EXTRA_FLAGS copied into the main
    /// file: refused with 78 before anything runs, naming the line and what to write instead.
    @Test(arguments: [
        ("RANKINGS_INCLUDE=/etc/rankings.conf", "RANKINGS_MONTHLY=yes"),
        ("RANKINGS_EXTRA_FLAGS=\"--max-drop 100 --allow-empty --since -30d\"", "put the flags in RANKINGS_FLAGS"),
    ])
    func theRetiredOverlaySettingsAreRefusedSayingWhatToChange(line: String, instead: String) throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let overlay = stage.base.appendingPathComponent("rankings-monthly.conf")
            try Data("""
                # Settings for the monthly board's cron run (cron/rankings-monthly)
                \(line)

                RANKINGS_OUTPUT=\(stage.url("out/monthly.json").path)
                RANKINGS_EXPORTS=\(stage.url("exports").path)
                RANKINGS_BIN=\(fake.executable.path)

                """.utf8).write(to: overlay)
            for run in [try Command.run(stage.url("usr/local/libexec/rankings-cron").path, [overlay.path], environment: fake.environment),
                        try stage.runNight(["run", "--config", overlay.path], fake: fake)] {
                #expect(run.status == 78, "\(run.stderrText)")
                #expect(run.stderrText.contains("\(overlay.path):2: "), "\(run.stderrText)")
                #expect(run.stderrText.contains(instead), "\(run.stderrText)")
            }
            #expect(try fake.calls() == [])
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.url("out").path) == [])
        }
    }
}
