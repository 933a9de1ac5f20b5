import Foundation
import Testing

/// The monthly board beside the all-time one, as `jobs/install-monthly.sh` installs it: a second
/// run in the systemd job (a drop-in checked by `systemd-analyze verify`) and a second cron line
/// whose configuration the real wrapper reads, with the real binary, and its own lock.
@Suite struct MonthlyBoardTests {
    typealias Staging = SchedulingTests.Staging

    static let monthlyFiles: Set<String> = [
        "etc/rankings-monthly.conf",
        "etc/systemd/system/rankings.service.d/monthly.conf",
        "etc/cron.d/rankings-monthly",
        "etc/systemd/system/rankings-publish.service.d/monthly.conf",
    ]

    static func installMonthly(_ stage: Staging, _ arguments: [String] = ["install"]) throws -> SchedulingTests.Command.Result {
        try SchedulingTests.Command.run(RankingsBinary.packageRoot.appendingPathComponent("jobs/install-monthly.sh").path,
                                        arguments, environment: ["DESTDIR": stage.root.path, "PREFIX": "/usr/local"])
    }

    /// The installed monthly configuration, pointed at the test's own main configuration and
    /// output directory instead of /etc and /var/lib/rankings.
    static func monthlyConfig(_ stage: Staging, main: URL) throws -> URL {
        let text = try stage.text("etc/rankings-monthly.conf")
            .replacingOccurrences(of: "RANKINGS_INCLUDE=/etc/rankings.conf", with: "RANKINGS_INCLUDE=\(main.path)")
            .replacingOccurrences(of: "/var/lib/rankings/", with: stage.url("out").path + "/")
        let url = stage.base.appendingPathComponent("rankings-monthly.conf")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func installsItsFilesBesideTheDailyJobAndUninstallsThem() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let install = try Self.installMonthly(stage)
            #expect(install.status == 0, "\(install.stderrText)")
            #expect(try stage.files() == SchedulingTests.documentedFiles.union(Self.monthlyFiles))
            let dropIn = try stage.text("etc/systemd/system/rankings.service.d/monthly.conf")
            #expect(dropIn.contains("\nExecStart=/usr/local/bin/rankings aggregate $RANKINGS_FLAGS --max-drop 100 --allow-empty --since -30d "
                + "--output /var/lib/rankings/monthly.json ${RANKINGS_EXPORTS}\n"))
            #expect(try stage.text("etc/systemd/system/rankings-publish.service.d/monthly.conf")
                .contains("\nExecStart=/usr/bin/env $RANKINGS_PUBLISH /var/lib/rankings/monthly.json\n"))
            #expect(try stage.text("etc/cron.d/rankings-monthly")
                .contains("\nCRON_TZ=America/New_York\n0 0 * * * rankings /usr/local/libexec/rankings-cron /etc/rankings-monthly.conf\n"))
            for name in Self.monthlyFiles {
                #expect(try stage.text(name).range(of: "@[A-Z]+@", options: .regularExpression) == nil, "placeholder left in \(name)")
            }
            #expect(try Self.installMonthly(stage, ["uninstall"]).status == 0)
            #expect(try stage.files() == SchedulingTests.documentedFiles)
        }
    }

    @Test func systemdAcceptsTheServiceWithItsSecondRun() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            #expect(try Self.installMonthly(stage).status == 0)
            try stage.prepareForVerify()
            let verify = try SchedulingTests.Command.run(
                "systemd-analyze", ["verify", "--root=\(stage.root.path)", "rankings.service", "rankings.timer",
                                    "rankings-publish.service"])
            #expect(verify.status == 0)
            #expect(verify.stdoutText + verify.stderrText == "")
        }
    }

    /// Both boards from the sample, by the real wrapper and binary: the all-time golden and the
    /// `--since -30d` golden, each in its own file, each run under its own lock.
    @Test func wrapperWritesBothBoardsWithTheRealBinary() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            #expect(try Self.installMonthly(stage).status == 0)
            try FileManager.default.createDirectory(at: stage.url("out"), withIntermediateDirectories: true)
            let root = RankingsBinary.packageRoot
            let main = try stage.writeConfig([
                "RANKINGS_EXPORTS": root.appendingPathComponent("sample-data/rating_events.ndjson").path,
                "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
                "RANKINGS_FLAGS": "\"--computed-at \(fixedComputedAt)\"",
                "RANKINGS_BIN": RankingsBinary.url.path,
            ])
            let monthly = try Self.monthlyConfig(stage, main: main)

            let allTime = try stage.runWrapper(config: main)
            #expect(allTime.status == 0, "\(stage.log())")
            let month = try stage.runWrapper(config: monthly)
            #expect(month.status == 0, "\(stage.log())")

            #expect(try Data(contentsOf: stage.url("out/all_time.json"))
                == Data(contentsOf: root.appendingPathComponent("sample-data/expected/all_time.json")))
            #expect(try Data(contentsOf: stage.url("out/monthly.json"))
                == Data(contentsOf: root.appendingPathComponent("sample-data/backfill/since-30d.json")))
            #expect(FileManager.default.fileExists(atPath: stage.url("out/.rankings.lock").path))
            #expect(FileManager.default.fileExists(atPath: stage.url("out/.rankings-monthly.lock").path))
        }
    }

    /// Cron starts both at midnight: while the all-time run holds its lock, the monthly run still
    /// runs (the daily job's own second start is turned away, see SchedulingTests).
    @Test func monthlyRunIsNotTurnedAwayByTheAllTimeRunsLock() throws {
        try Staging.with { stage in
            #expect(try Self.installMonthly(stage).status == 0)
            let fake = try stage.installWithFake(plan: ["block", "0"])
            let main = try stage.fakeConfig(fake)
            let monthly = try Self.monthlyConfig(stage, main: main)
            let first = try stage.startWrapper(config: main, fake: fake)
            defer {
                try? fake.release()
                if first.isRunning { first.terminate() }
            }
            try #require(fake.waitUntilStarted(), "the all-time run never reached the job")

            let month = try stage.runWrapper(config: monthly, fake: fake)
            #expect(month.status == 0, "\(stage.log())")
            let calls = try fake.calls()
            #expect(calls.count == 2)
            #expect(calls.last == "aggregate --max-invalid 5 --max-drop 100 --allow-empty --since -30d --output \(stage.url("out/monthly.json").path) "
                + stage.url("exports").path)

            try fake.release()
            first.waitUntilExit()
            #expect(first.terminationStatus == 0)
        }
    }
}
