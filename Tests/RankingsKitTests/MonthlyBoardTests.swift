import Foundation
import Testing

/// The monthly board beside the all-time one: RANKINGS_MONTHLY=yes in the one configuration,
/// made by the installed night in the same night as the all-time board, from the same snapshot.
/// 0.4's way of naming its file (RANKINGS_MONTHLY_OUTPUT) is carried with the WARNING where it
/// names the board's own place, and refused (78) where it names another.
@Suite struct MonthlyBoardTests {
    typealias Staging = SchedulingTests.Staging
    typealias Command = SchedulingTests.Command

    /// Both goldens from the sample with the real binary: the all-time board and the `--since
    /// -30d` one. Without Firestore the night's clock is the machine's, so the sample's votes are
    /// moved in time by as much as now is past the goldens' computed_at (no vote is within
    /// minutes of the window's start): the 30-day board then counts the golden's votes, in the
    /// week's form older app versions read. RANKINGS_EXPORTS is a `current` link, as a fetch of
    /// one's own may leave it, and a stand-in for `rankings` points it at an empty night once the
    /// first board is written: the monthly board still comes from the snapshot the night began with.
    @Test func bothBoardsFromOneSnapshotWithTheRealBinary() throws {
        try Staging.with { stage in
            let root = RankingsBinary.packageRoot
            let fetched = stage.base.appendingPathComponent("fetched")
            for night in ["night1", "empty"] {
                try FileManager.default.createDirectory(at: fetched.appendingPathComponent(night), withIntermediateDirectories: true)
            }
            let moved = try Command.run("/usr/bin/python3", ["-I", "-c", """
                import datetime, json, sys, time
                shift = int(time.time()) - int(datetime.datetime(2026, 2, 18, 5, tzinfo=datetime.timezone.utc).timestamp())
                with open(sys.argv[1]) as sample, open(sys.argv[2], "w") as out:
                    for line in sample:
                        vote = json.loads(line)
                        vote["timestamp"]["_seconds"] += shift
                        out.write(json.dumps(vote) + "\\n")
                """, root.appendingPathComponent("sample-data/rating_events.ndjson").path,
                fetched.appendingPathComponent("night1/rating_events.ndjson").path])
            #expect(moved.status == 0, "\(moved.stderrText)")
            try FileManager.default.createSymbolicLink(atPath: fetched.appendingPathComponent("current").path,
                                                       withDestinationPath: "night1")
            let binary = stage.base.appendingPathComponent("rankings-then-refetch")
            try Data("""
                #!/bin/sh
                '\(RankingsBinary.url.path)' "$@"
                status=$?
                ln -sfn empty '\(fetched.path)/current'
                exit $status

                """.utf8).write(to: binary)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary.path)
            #expect(try stage.installToRun(binary: binary).status == 0)
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": fetched.appendingPathComponent("current").path,
                "RANKINGS_MONTHLY": "yes",
            ])

            let run = try stage.runNight(["run", "--config", config.path])
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(try stage.board("all_time.json") == Staging.golden("sample-data/expected/all_time.json"))
            let monthly = try Self.json(stage.state.appendingPathComponent("monthly.json"))
            let golden = try Self.json(root.appendingPathComponent("sample-data/backfill/since-30d.week-document.json"))
            for field in ["hilarious", "horrible", "total_hilarious_ratings", "total_horrible_ratings"] {
                #expect(try Self.canonical(monthly[field]) == Self.canonical(golden[field]), "\(field)")
            }
            #expect(monthly["week_id"] is String && monthly["week_start"] is String, "the week's form: \(monthly.keys)")
            // One night, one lock, each board's report and counts beside it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.state.path).sorted()
                == [".all_time.report.json", ".all_time.stats.ndjson", ".monthly.report.json", ".monthly.stats.ndjson",
                    ".rankings-nights.json", ".rankings.lock", "all_time.json", "monthly.json"])
        }
    }

    static func json(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// A JSON value as text with its keys sorted, so two parses of equal values compare equal.
    static func canonical(_ value: Any?) throws -> String {
        guard let value else { return "absent" }
        let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        return String(decoding: data, as: UTF8.self)
    }

    /// 0.4's RANKINGS_MONTHLY_OUTPUT: where it names the 30-day board's own file the night goes on
    /// with the one WARNING; elsewhere it is 78 before anything runs, saying where the board is now.
    @Test(arguments: [true, false])
    func theMonthlyOutputOf04IsCarriedOrRefused(inPlace: Bool) throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0", "0"])
            let output = inPlace ? stage.state.appendingPathComponent("monthly.json").path : stage.base.appendingPathComponent("month.json").path
            let config = try stage.fakeConfig(fake, ["RANKINGS_MONTHLY": "yes", "RANKINGS_MONTHLY_OUTPUT": output])
            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            if inPlace {
                #expect(run.status == 0, "\(run.stderrText)")
                #expect(run.stderrText.contains("rankings-night: warning: \(config.path) holds settings of 0.4"), "\(run.stderrText)")
                #expect(run.stderrText.contains("RANKINGS_MONTHLY_OUTPUT=\(output): delete it"), "\(run.stderrText)")
                #expect(try fake.calls().count == 2)
            } else {
                #expect(run.status == 78, "\(run.stderrText)")
                #expect(run.stderrText.contains("the boards are now all_time.json and monthly.json in the state directory"),
                        "\(run.stderrText)")
                #expect(try fake.calls() == [])
                #expect(try FileManager.default.contentsOfDirectory(atPath: stage.state.path) == [])
            }
        }
    }
}
