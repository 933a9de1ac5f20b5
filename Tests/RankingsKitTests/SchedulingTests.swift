import Foundation
import Testing

/// The night as shipped: `jobs/install.sh` lays out the binary, the night's program and its
/// package, the unit, the timer, the cron entry and the configuration, and these tests check
/// what it installed rather than the templates, so a placeholder left unsubstituted, a link that
/// leads nowhere or a path that does not match the binary shows up here. The night's policy
/// itself (its retries, limits, history and metrics) has its unit tests in Tests/night; here it
/// runs as installed, from the staging root, with the job installed beside it: the built
/// `rankings`, or `Tests/scheduling/fake-rankings`, which scripts how each run ends (the night
/// runs the installed job, and no setting names another).
///
/// systemd itself cannot run here, so the units are checked with `systemd-analyze` (package
/// `systemd`); Tests/container runs them under a real systemd and Debian's cron.
@Suite struct SchedulingTests {
    /// The night's Python modules, as the checkout has them: every one is installed, nothing else.
    static var modules: [String] {
        let source = RankingsBinary.packageRoot.appendingPathComponent("jobs/night/rankings_night").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: source)) ?? []).filter { $0.hasSuffix(".py") }
    }

    /// What install.sh's header lists, for PREFIX=/usr/local: files, and links with the file
    /// they lead to inside the root. 0.4's rankings-fetch-firestore, rankings-publish-firestore and
    /// rankings-cron (and their links in libexec) are not among them.
    static var documentedEntries: Set<String> {
        let lib = "usr/local/lib/rankings"
        var entries: Set<String> = [
            "etc/rankings.conf",
            "etc/systemd/system/rankings.service",
            "etc/systemd/system/rankings.timer",
            "etc/cron.d/rankings",
            "etc/sysusers.d/rankings.conf",
            "etc/tmpfiles.d/rankings.conf",
            "usr/local/bin/rankings",
            "usr/local/bin/rankings-night -> \(lib)/rankings-night",
            "\(lib)/rankings-night",
        ]
        for module in modules { entries.insert("\(lib)/rankings_night/\(module)") }
        return entries
    }

    // MARK: - Install

    @Test func installLaysOutExactlyTheDocumentedFilesAndUninstallRemovesThem() throws {
        try Staging.with { stage in
            let install = try stage.install()
            #expect(install.status == 0, "\(install.stderrText)")
            #expect(Self.modules.contains("night.py"))
            #expect(try stage.entries() == Self.documentedEntries)
            #expect(try Data(contentsOf: stage.url("usr/local/bin/rankings")) == Data(contentsOf: RankingsBinary.url))
            #expect(try stage.mode("usr/local/lib/rankings/rankings-night") == 0o755)
            #expect(try stage.mode("usr/local/lib/rankings/rankings_night/night.py") == 0o644)

            let uninstall = try stage.installScript(["uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.stderrText)")
            #expect(try stage.entries() == [])
            #expect(!FileManager.default.fileExists(atPath: stage.url("usr/local/lib/rankings").path),
                    "the night's package directory outlived the uninstall")
        }
    }

    /// Each layout's paths end up in the unit, the cron line, the night's own defaults
    /// (rankings_night/paths.py) and its help, and the link leads to the program, so the
    /// installed night finds the binary and the configuration where they went.
    @Test(arguments: [
        ["PREFIX": "/usr/local"],
        ["PREFIX": "/opt/rankings", "SYSCONFDIR": "/opt/rankings/etc"],
        ["PREFIX": "/opt/r+d,2.0:x_y-z", "PKGLIBDIR": "/opt/night/lib", "BINDIR": "/opt/night/bin"],
    ])
    func installedFilesPointWhereTheBinaryWent(layout: [String: String]) throws {
        try Staging.with { stage in
            let install = try stage.installScript(["install"], layout: layout)
            #expect(install.status == 0, "\(install.stderrText)")
            let prefix = layout["PREFIX"]!
            let etc = layout["SYSCONFDIR"] ?? "/etc"
            let lib = layout["PKGLIBDIR"] ?? "\(prefix)/lib/rankings"
            let bin = layout["BINDIR"] ?? "\(prefix)/bin"
            let service = try stage.text("\(etc)/systemd/system/rankings.service")
            #expect(Self.value(of: "ExecStart", in: service) == "\(bin)/rankings-night run --config \(etc)/rankings.conf")
            #expect(try stage.activeCronLines(etc: etc) == ["0 * * * * rankings \(bin)/rankings-night cron --config \(etc)/rankings.conf"])
            let paths = try stage.text("\(lib)/rankings_night/paths.py")
            #expect(paths.contains("\nBINDIR = \"\(bin)\"\n"), "\(paths)")
            #expect(paths.contains("\nSYSCONFDIR = \"\(etc)\"\n"), "\(paths)")
            for entry in try stage.entries() where !entry.hasSuffix("bin/rankings") && !entry.contains(" -> ") {
                #expect(try stage.text("/" + entry).range(of: "@[A-Z_]+@", options: .regularExpression) == nil,
                        "placeholder left in \(entry)")
            }
            #expect(stage.url("\(bin)/rankings-night").resolvingSymlinksInPath().path
                    == stage.url("\(lib)/rankings-night").resolvingSymlinksInPath().path)

            // The installed night, through its link, with its compiled-in defaults: the
            // configuration it reads and the job it runs.
            let night = stage.url("\(bin)/rankings-night").path
            let help = try Command.run(night, ["--help"])
            #expect(help.status == 0, "\(help.stderrText)")
            #expect(help.stdoutText.contains("(default \(etc)/rankings.conf)"), "\(help.stdoutText)")
            let job = try Command.run("/usr/bin/python3", ["-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                                                           + "from rankings_night import paths; print(paths.rankings())",
                                                           stage.url(lib).path])
            #expect(job.stdoutText == "\(bin)/rankings\n", "\(job.stderrText)")
        }
    }

    /// Each path goes into a unit (split at spaces, "%" a specifier), a crontab line run by sh
    /// ("&", ";", "$" are syntax), the configuration and the night's paths.py (a Python string);
    /// 0.2 put them through sed unescaped (`/opt/r&d` became `/opt/r@BINDIR@d`) and split its
    /// table at spaces (half an install).
    @Test(arguments: [
        ["PREFIX": "/opt/r&d"], ["SYSCONFDIR": "/my etc"], ["PREFIX": "/opt/a|b"], ["BINDIR": "/opt/bin\\x"],
        ["SYSUSERSDIR": "/opt/100%"], ["UNITDIR": "/opt/$HOME"], ["SYSCONFDIR": "/etc;x"], ["PREFIX": "opt/rankings"],
        ["TMPFILESDIR": "/etc/tmp\nfiles.d"], ["PKGLIBDIR": "/opt/lib\"rankings"], ["PKGLIBDIR": "lib/rankings"],
        ["PKGLIBDIR": "/opt/night's"], ["PKGLIBDIR": "/opt/{lib}"],
    ])
    func installRefusesAPathItsFilesCannotHoldBeforeChangingAnything(layout: [String: String]) throws {
        try Staging.with { stage in
            let install = try stage.installScript(["install"], layout: layout)
            #expect(install.status == 64, "\(layout): \(install.stderrText)")
            #expect(install.stderrText.contains("\(layout.keys.first!)="), "\(install.stderrText)")
            #expect(try stage.entries() == [], "\(layout) installed something")
        }
    }

    @Test func uninstallKeepsAnEditedConfigurationUnlessPurged() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let config = stage.url("etc/rankings.conf")
            let edited = try stage.text("etc/rankings.conf") + "RANKINGS_MONTHLY=yes\n"
            try Data(edited.utf8).write(to: config)

            #expect(try stage.install().status == 0)
            #expect(try stage.text("etc/rankings.conf") == edited, "reinstall must keep the operator's settings")
            let uninstall = try stage.installScript(["uninstall"])
            #expect(uninstall.status == 0)
            #expect(uninstall.stdoutText.contains("kept /etc/rankings.conf: it was edited"), "\(uninstall.stdoutText)")
            #expect(try stage.entries() == ["etc/rankings.conf"])
            #expect(try stage.installScript(["uninstall", "--purge"]).status == 0)
            #expect(try stage.entries() == [])

            // Unedited, it goes with the rest.
            #expect(try stage.install().status == 0)
            #expect(try stage.installScript(["uninstall"]).status == 0)
            #expect(try stage.entries() == [])
        }
    }

    // MARK: - systemd and cron

    @Test func systemdAcceptsTheInstalledUnits() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            try stage.prepareForVerify()

            // verify only warns about unknown keys and bad values, so silence is the real pass
            // mark. It also checks that ExecStart='s program is there under the root (through its
            // link); the man pages of Documentation= are the package's (Tests/container).
            let verify = try Command.run("systemd-analyze",
                                         ["verify", "--man=no", "--root=\(stage.root.path)", "rankings.service", "rankings.timer"])
            #expect(verify.status == 0)
            #expect(verify.stdoutText + verify.stderrText == "")
        }
    }

    /// TimeoutStartSec= is a backstop: above what the night's own limits allow at the defaults
    /// (four tries of every step, 5 minutes apart, with the monthly board and the proof of 20,000
    /// jokes a board that night.longest_try counts), so the night's limits always speak first.
    @Test func theUnitsTimeoutIsAboveTheNightsOwnLimits() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let unit = try stage.text("etc/systemd/system/rankings.service")
            let timeout = try #require(Self.value(of: "TimeoutStartSec", in: unit))
            let hours = try #require(Int(timeout.dropLast()), "\(timeout)")
            #expect(timeout.hasSuffix("h"))
            let worst = try Command.run("/usr/bin/python3", ["-I", "-c", """
                import sys; sys.path.insert(0, sys.argv[1])
                from rankings_night import night, settings
                s = settings.from_environment({"RANKINGS_FIRESTORE_PROJECT": "p", "RANKINGS_MONTHLY": "yes"})
                tries = 1 + s.retries
                print(round(tries * night.longest_try(s) + len(night.history.STEPS) * s.retries * night.PAUSE))
                """, stage.url("usr/local/lib/rankings").path])
            let seconds = try #require(Int(worst.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)), "\(worst.stderrText)")
            #expect(seconds > 8 * 3600, "the night's limits add up to \(seconds) s")
            #expect(hours * 3600 > seconds, "TimeoutStartSec=\(timeout), the night's own limits \(seconds) s")
        }
    }

    @Test func timerFiresAtMidnightInNewYorkAcrossDaylightSaving() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let timer = try stage.text("etc/systemd/system/rankings.timer")
            let expression = try #require(Self.value(of: "OnCalendar", in: timer))
            #expect(Self.value(of: "Unit", in: timer) == "rankings.service")

            // From just before the spring change, both sides of it: midnight EST is 05:00 UTC and
            // midnight EDT is 04:00 UTC. The machine's own zone (UTC here) must not matter.
            let calendar = try Command.run(
                "systemd-analyze",
                ["calendar", "--iterations=2", "--base-time=2026-03-07 12:00:00 UTC", expression],
                environment: ["TZ": "America/New_York"])
            #expect(calendar.status == 0, "\(calendar.stderrText)")
            let lines = calendar.stdoutText.split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.hasPrefix("From now:") }
            #expect(lines == [
                "Normalized form: *-*-* 00:00:00 America/New_York",
                "Next elapse: Sun 2026-03-08 00:00:00 EST",
                "(in UTC): Sun 2026-03-08 05:00:00 UTC",
                "Iter. #2: Mon 2026-03-09 00:00:00 EDT",
                "(in UTC): Mon 2026-03-09 04:00:00 UTC",
            ])

            let next = try Command.run("systemd-analyze", ["calendar", expression],
                                       environment: ["TZ": "America/New_York"])
            let nextLine = next.stdoutText.split(separator: "\n")
                .first { $0.contains("Next elapse:") }.map(String.init) ?? ""
            #expect(nextLine.range(of: #"Next elapse: \w{3} \d{4}-\d\d-\d\d 00:00:00 E[SD]T$"#,
                                   options: .regularExpression) != nil, "\(next.stdoutText)")
        }
    }

    /// Debian's cron ignores CRON_TZ and reads times on the machine's clock, so the entry fires
    /// every hour and the night decides: in the hour after New York's midnight it runs, in any
    /// other it does nothing at all (no lock or history). Which of the two this test sees
    /// depends on when it runs; each is checked exactly. The package installs the line commented
    /// out (CRON_ACTIVE=no).
    @Test func theCronEntryFiresHourlyAndTheNightRunsOnlyInNewYorksFirstHour() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0", "0"])
            let cron = try stage.text("etc/cron.d/rankings")
            #expect(!cron.split(separator: "\n").contains { $0.hasPrefix("CRON_TZ=") }, "Debian's cron ignores CRON_TZ; the night keeps New York's hour")
            let (bin, etc) = (stage.root.path + "/usr/local/bin", stage.root.path + "/etc")
            #expect(try stage.activeCronLines() == ["0 * * * * rankings \(bin)/rankings-night cron --config \(etc)/rankings.conf"])

            let config = try stage.fakeConfig(fake)
            for _ in 0..<2 {
                let before = Self.newYorkHour()
                let first = try stage.runNight(["cron", "--config", config.path], fake: fake)
                let second = try stage.runNight(["cron", "--config", config.path], fake: fake)
                guard Self.newYorkHour() == before else { continue }    // an hour turned meanwhile
                #expect(first.status == 0, "\(first.stderrText)")
                #expect(second.status == 0, "\(second.stderrText)")
                if before == 0 {
                    #expect(try fake.calls().count == 1, "once a day")
                    #expect(FileManager.default.fileExists(atPath: stage.state.appendingPathComponent(".rankings-nights.json").path))
                } else {
                    #expect(try fake.calls() == [])
                    #expect(try FileManager.default.contentsOfDirectory(atPath: stage.state.path) == [])
                }
                break
            }
        }
        try Staging.with { (packaged: Staging) throws in
            #expect(try packaged.installScript(["install"], layout: ["CRON_ACTIVE": "no"]).status == 0)
            #expect(try packaged.activeCronLines() == [])
            #expect(try packaged.text("etc/cron.d/rankings").contains(
                "\n#0 * * * * rankings /usr/local/bin/rankings-night cron --config /etc/rankings.conf\n"))
        }
    }

    static func newYorkHour() -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/New_York")!
        return calendar.component(.hour, from: Date())
    }

    // MARK: - The night, as installed

    /// The sample's golden board by the real binary, installed beside the night, from
    /// RANKINGS_EXPORTS (no Firestore project), twice; `status` says both nights.
    @Test func theInstalledNightWritesTheSampleBoardWithTheRealBinary() throws {
        try Staging.with { stage in
            #expect(try stage.installToRun().status == 0)
            let root = RankingsBinary.packageRoot
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": root.appendingPathComponent("sample-data/rating_events.ndjson").path,
            ])
            for _ in 0..<2 {
                let run = try stage.runNight(["run", "--config", config.path])
                #expect(run.status == 0, "\(run.stderrText)")
                #expect(try stage.board("all_time.json") == Staging.golden("sample-data/expected/all_time.json"))
            }
            let status = try stage.runNight(["status", "--config", config.path])
            #expect(status.status == 0, "\(status.stderrText)")
            #expect(status.stdoutText.components(separatedBy: "  ok  ").count - 1 == 2, "\(status.stdoutText)")
        }
    }

    /// The installed job gets the night's own flags, once a board, from the night's derived paths;
    /// a status another try cannot change (64 usage, 65 data) is not tried again, nor is any with
    /// RANKINGS_RETRIES=0. The job runs without the network where the kernel lets the night make
    /// it a namespace of its own (isolate.py, installed beside the night). Retries themselves (5
    /// minutes apart, a constant) are Tests/night's.
    @Test(arguments: [
        (["0"], "3", Int32(0)), (["64", "0"], "3", 64), (["65", "0"], "3", 65), (["74", "0"], "0", 74),
    ])
    func theJobGetsTheNightsFlagsAndIsNotTriedAgainInVain(plan: [String], retries: String, status: Int32) throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: plan)
            let config = try stage.fakeConfig(fake, ["RANKINGS_RETRIES": retries])
            let run = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(run.status == status, "\(run.stderrText)")
            let state = stage.state.path
            #expect(try fake.calls() == [
                "aggregate --quiet --computed-at T --max-invalid 1% --report \(state)/.all_time.report.json "
                    + "--stats \(state)/.all_time.stats.ndjson --output \(state)/all_time.json --max-drop 1 \(stage.exports.path)",
            ])
            if status == 0 {
                let network = try String(contentsOf: fake.directory.appendingPathComponent("netns"), encoding: .utf8)
                let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
                #expect(network != ours + "\n" || run.stderrText.contains("the job runs with the network"),
                        "the job had the machine's network, and the night did not say why: \(run.stderrText)")
            } else {
                #expect(!FileManager.default.fileExists(atPath: stage.state.appendingPathComponent("all_time.json").path))
            }
        }
    }

    /// A try that may succeed again is tried again in 5 minutes; a SIGTERM in that pause stops the
    /// night at once (143), no try after it, the history saying so and the lock free.
    @Test func aStopDuringThePauseBeforeAnotherTryEndsTheNightAtOnce() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["74", "0"])
            let config = try stage.fakeConfig(fake)
            let log = stage.base.appendingPathComponent("night.err")
            let night = try stage.startNight(["run", "--config", config.path], fake: fake, stderr: log)
            defer { if night.isRunning { night.terminate() } }
            let waiting = "aggregate: failed with status 74 (I/O error) on try 1; trying again in 300s"
            try #require(Staging.waitUntil { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(waiting) },
                         "\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            let stopped = Date()
            night.terminate()
            night.waitUntilExit()
            #expect(Date().timeIntervalSince(stopped) < 10)
            #expect(night.terminationStatus == 143)
            #expect(try fake.calls().count == 1)
            let history = try Command.run(stage.night.path, ["status", "--config", config.path, "--json", "-n", "1"])
            #expect(history.stdoutText.contains("\"stopped_by\": \"SIGTERM\""), "\(history.stdoutText)")
            let free = try Command.run("/bin/sh", ["-c", "exec 9<\"$0\" && flock --nonblock 9", stage.state.appendingPathComponent(".rankings.lock").path])
            #expect(free.status == 0)
        }
    }

    /// A SIGTERM while the job runs (a hung job, `systemctl stop`) ends the job and everything it
    /// started, and the night, within seconds: 143, and the lock free for the next night.
    @Test func aStopWhileTheJobRunsEndsTheJobAndTheNight() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["block"])
            let config = try stage.fakeConfig(fake)
            let night = try stage.startNight(["run", "--config", config.path], fake: fake)
            defer {
                try? fake.release()
                if night.isRunning { night.terminate() }
            }
            try #require(fake.waitUntilStarted(), "the night never reached the job")
            let stopped = Date()
            night.terminate()
            night.waitUntilExit()
            #expect(Date().timeIntervalSince(stopped) < 10)
            #expect(night.terminationStatus == 143)
            #expect(Staging.waitUntil { !fake.jobRunning() }, "the job outlived the night")
            let free = try Command.run("/bin/sh", ["-c", "exec 9<\"$0\" && flock --nonblock 9", stage.state.appendingPathComponent(".rankings.lock").path])
            #expect(free.status == 0)
        }
    }

    @Test func aSecondNightIsTurnedAwayWhileTheFirstHoldsTheLock() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["block", "0"])
            let config = try stage.fakeConfig(fake)
            let first = try stage.startNight(["run", "--config", config.path], fake: fake)
            // On an early failure, unblock the fake too, so nothing outlives the test for long.
            defer {
                try? fake.release()
                if first.isRunning { first.terminate() }
            }
            try #require(fake.waitUntilStarted(), "the first night never reached the job")

            let second = try stage.runNight(["run", "--config", config.path], fake: fake)
            #expect(second.status == 75)
            #expect(second.stderrText.contains("another night holds \(stage.state.appendingPathComponent(".rankings.lock").path)"),
                    "\(second.stderrText)")
            #expect(try fake.calls().count == 1)

            try fake.release()
            first.waitUntilExit()
            #expect(first.terminationStatus == 0)
            #expect(try fake.calls().count == 1)
        }
    }

    /// An operator runs the night by hand as root (umask 077) where the job's user keeps its
    /// files. 0.2 ran, and left a lock and log only root could open: every later night of that
    /// user failed with 73. Root is turned away (64) before it creates anything, saying so where
    /// the operator looks (the terminal), and the user's own night goes ahead. The tests run as
    /// root; `nobody` plays the job's user.
    @Test func rootIsTurnedAwayWhereTheJobsUserKeepsItsFiles() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let config = try stage.fakeConfig(fake)
            #expect(try Command.run("/bin/chown", ["-R", "nobody:nogroup", stage.base.path]).status == 0)

            let asRoot = try Command.run("/bin/sh", ["-c", "umask 077 && exec \"$0\" run --config \"$1\"", stage.night.path, config.path],
                                         environment: fake.environment)
            #expect(asRoot.status == 64, "\(asRoot.stderrText)")
            #expect(asRoot.stderrText.contains("running as root, but \(stage.state.path) belongs to nobody"),
                    "root is not told why nothing ran: \(asRoot.stderrText)")
            #expect(try fake.calls() == [])
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.state.path) == [],
                    "root left files where the user's nights write")

            let asUser = try Command.run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
                                                     stage.night.path, "run", "--config", config.path],
                                         environment: fake.environment)
            #expect(asUser.status == 0, "\(asUser.stderrText)")
            #expect(try fake.calls().count == 1)
        }
    }

    /// The lock, the history and the metrics made by root under umask 077 were 0600 in 0.2, and
    /// the job's user could not open them (73); whoever reads them (an operator, node_exporter as
    /// the user prometheus) was locked out too. All three are 0644, whatever the umask.
    @Test func theLockHistoryAndMetricsMadeUnderAStrictUmaskStayOpenToOtherUsers() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let metrics = stage.state.appendingPathComponent("rankings.prom")
            let config = try stage.fakeConfig(fake, ["RANKINGS_METRICS": metrics.path])
            let run = try Command.run("/bin/sh", ["-c", "umask 077 && exec \"$0\" run --config \"$1\"", stage.night.path, config.path],
                                      environment: fake.environment)
            #expect(run.status == 0, "\(run.stderrText)")
            let lock = stage.state.appendingPathComponent(".rankings.lock")
            let history = stage.state.appendingPathComponent(".rankings-nights.json")
            for file in [lock, history, metrics] {
                #expect(try stage.mode(file.path) == 0o644, "\(file.lastPathComponent)")
            }
            let opened = try Command.run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
                                                     "/bin/sh", "-c", "exec 9<\"$0\" && flock --nonblock 9 && cat \"$1\" \"$2\" >/dev/null",
                                                     lock.path, history.path, metrics.path])
            #expect(opened.status == 0, "\(opened.stderrText)")
        }
    }

    /// The value of the first `Key=` line of a unit file.
    static func value(of key: String, in unit: String) -> String? {
        unit.split(separator: "\n").first { $0.hasPrefix("\(key)=") }
            .map { String($0.dropFirst(key.count + 1)) }
    }
}

extension SchedulingTests {
    /// One test's staging root (DESTDIR) plus room beside it for configs, logs and outputs.
    struct Staging {
        let base: URL
        var root: URL { base.appendingPathComponent("root") }

        static func with(_ body: (Staging) throws -> Void) throws {
            let base = FileManager.default.temporaryDirectory
                .appendingPathComponent("rankings-scheduling-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: base.appendingPathComponent("root"),
                                                    withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: base) }
            try body(Staging(base: base))
        }

        /// A path inside the staging root.
        func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }
        func text(_ relative: String) throws -> String { try String(contentsOf: url(relative), encoding: .utf8) }
        /// The permission bits of a path inside the root, or of an absolute path outside it.
        func mode(_ path: String) throws -> Int? {
            let full = path.hasPrefix(base.path) ? path : url(path).path
            return try FileManager.default.attributesOfItem(atPath: full)[.posixPermissions] as? Int
        }

        /// Runs jobs/install.sh against this root with the already built binary (or `binary`), so
        /// tests never start a release build of their own.
        func installScript(_ arguments: [String], layout: [String: String] = [:],
                           binary: URL = RankingsBinary.url) throws -> Command.Result {
            try Command.run(RankingsBinary.packageRoot.appendingPathComponent("jobs/install.sh").path, arguments,
                            environment: ["DESTDIR": root.path, "PREFIX": "/usr/local",
                                          "RANKINGS_PREBUILT": binary.path].merging(layout) { $1 })
        }

        func install() throws -> Command.Result { try installScript(["install"]) }

        /// Installs a night that runs: the root's own paths written into the files (DESTDIR=/, the
        /// PREFIX and SYSCONFDIR inside the root; nothing outside it is touched), so the installed
        /// night runs the job installed beside it, `binary`: the built `rankings`, or a stand-in.
        /// The entries are where install() puts them.
        func installToRun(binary: URL = RankingsBinary.url) throws -> Command.Result {
            try installScript(["install"], layout: ["DESTDIR": "/", "PREFIX": root.path + "/usr/local",
                                                    "SYSCONFDIR": root.path + "/etc"], binary: binary)
        }

        /// The night's state directory and the exports the fake's nights name.
        var state: URL { base.appendingPathComponent("state") }
        var exports: URL { base.appendingPathComponent("exports") }

        /// A board in the state directory, and a golden of the checkout, each without its
        /// computed_at line (a night without Firestore stamps its own clock).
        func board(_ name: String) throws -> String {
            try Self.withoutComputedAt(String(contentsOf: state.appendingPathComponent(name), encoding: .utf8))
        }
        static func golden(_ relative: String) throws -> String {
            try withoutComputedAt(String(contentsOf: RankingsBinary.packageRoot.appendingPathComponent(relative), encoding: .utf8))
        }
        static func withoutComputedAt(_ text: String) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("  \"computed_at\": ") }.joined(separator: "\n")
        }

        /// Asks `done` every 50 ms for up to 30 s: a bound, not a timing.
        static func waitUntil(_ done: () -> Bool) -> Bool {
            for _ in 0..<600 {
                if done() { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }

        /// Everything under the root but directories, as paths relative to it; a link as
        /// "LINK -> FILE", FILE being where it leads inside the root.
        func entries() throws -> Set<String> {
            let rootPath = root.resolvingSymlinksInPath().path
            var found: Set<String> = []
            for relative in FileManager.default.subpaths(atPath: root.path) ?? [] {
                let path = root.appendingPathComponent(relative).path
                let type = try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
                if type == .typeSymbolicLink {
                    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                    let inside = target.hasPrefix(rootPath + "/") ? String(target.dropFirst(rootPath.count + 1)) : "OUTSIDE:" + target
                    found.insert("\(relative) -> \(inside)")
                } else if type != .typeDirectory {
                    found.insert(relative)
                }
            }
            return found
        }

        /// The lines of the installed cron file that cron runs (not comments, not settings).
        func activeCronLines(etc: String = "/etc") throws -> [String] {
            try text("\(etc)/cron.d/rankings").split(separator: "\n").map(String.init)
                .filter { !$0.hasPrefix("#") && !$0.contains("=") }
        }

        /// A configuration in the shipped syntax, its state directory `state` unless given. Its
        /// log goes to standard error, which the tests read.
        func writeConfig(_ settings: [String: String]) throws -> URL {
            var all = settings
            all["RANKINGS_STATE_DIRECTORY"] = all["RANKINGS_STATE_DIRECTORY"] ?? state.path
            let text = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
            let config = base.appendingPathComponent("rankings.conf")
            try Data(text.utf8).write(to: config)
            return config
        }

        /// Installs a night whose job is a fake `rankings` that ends its runs as `plan` says.
        func installWithFake(plan: [String]) throws -> FakeRankings {
            let fake = try FakeRankings(directory: base.appendingPathComponent("fake"), plan: plan)
            #expect(try installToRun(binary: fake.executable).status == 0)
            for folder in [state, exports] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            return fake
        }

        func fakeConfig(_ fake: FakeRankings, _ extra: [String: String] = [:]) throws -> URL {
            try writeConfig(["RANKINGS_EXPORTS": exports.path].merging(extra) { $1 })
        }

        /// The installed command, through its link in BINDIR.
        var night: URL { url("usr/local/bin/rankings-night") }

        func runNight(_ arguments: [String], fake: FakeRankings? = nil) throws -> Command.Result {
            try Command.run(night.path, arguments, environment: fake?.environment ?? [:])
        }

        /// The night started in the background, its standard error into `stderr` when given.
        func startNight(_ arguments: [String], fake: FakeRankings, stderr: URL? = nil) throws -> Process {
            _ = ignoringBrokenPipes
            let process = Process()
            process.executableURL = night
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(fake.environment) { $1 }
            process.standardOutput = FileHandle.nullDevice
            if let stderr {
                _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
                process.standardError = try FileHandle(forWritingTo: stderr)
            } else {
                process.standardError = FileHandle.nullDevice
            }
            // Started with no signal blocked, as systemd and cron start it: this test process's
            // children inherit a mask with SIGTERM blocked.
            try process.run()
            return process
        }
    }

    /// A copy of Tests/scheduling/fake-rankings with its own plan and record of calls.
    struct FakeRankings {
        let directory: URL
        var executable: URL { directory.appendingPathComponent("rankings") }
        var environment: [String: String] { ["FAKE_RANKINGS_DIR": directory.path] }

        init(directory: URL, plan: [String]) throws {
            self.directory = directory
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let script = RankingsBinary.packageRoot.appendingPathComponent("Tests/scheduling/fake-rankings")
            try FileManager.default.copyItem(at: script, to: executable)
            // A checkout may drop the executable bit; the copy gets it back.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: executable.path)
            try Data(plan.map { $0 + "\n" }.joined().utf8).write(to: directory.appendingPathComponent("plan"))
        }

        /// The arguments of each run, the night's own --computed-at (its clock, without Firestore) as T.
        func calls() throws -> [String] {
            let url = directory.appendingPathComponent("calls")
            guard FileManager.default.fileExists(atPath: url.path) else { return [] }
            return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
                $0.replacingOccurrences(of: #"^aggregate --quiet --computed-at \S+"#, with: "aggregate --quiet --computed-at T",
                                        options: .regularExpression)
            }
        }

        /// A blocked run still waiting for ./release (its process id in ./pid is alive).
        func jobRunning() -> Bool {
            guard let text = try? String(contentsOf: directory.appendingPathComponent("pid"), encoding: .utf8),
                  let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return false }
            return kill(pid, 0) == 0
        }

        /// Polls for the blocked run's marker; bounded so a broken night fails the test instead of
        /// hanging it.
        func waitUntilStarted() -> Bool {
            let marker = directory.appendingPathComponent("started").path
            for _ in 0..<600 {
                if FileManager.default.fileExists(atPath: marker) { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }

        func release() throws {
            try Data().write(to: directory.appendingPathComponent("release"))
        }
    }

    /// Runs a program to completion, its output drained while it runs.
    enum Command {
        struct Result {
            var status: Int32
            var stdout: Data
            var stderr: Data
            var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
            var stderrText: String { String(decoding: stderr, as: UTF8.self) }
        }

        /// `program` is a path, or a name looked up on PATH; `environment` adds to ours.
        static func run(_ program: String, _ arguments: [String],
                        environment: [String: String] = [:]) throws -> Result {
            _ = ignoringBrokenPipes
            let process = Process()
            if program.contains("/") {
                process.executableURL = URL(fileURLWithPath: program)
                process.arguments = arguments
            } else {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = [program] + arguments
            }
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let outPipe = Pipe(), errPipe = Pipe()
            process.standardOutput = outPipe
            process.standardError = errPipe
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let group = DispatchGroup()
            nonisolated(unsafe) var out = Data(), err = Data()
            group.enter()
            DispatchQueue.global().async { out = outPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
            group.enter()
            DispatchQueue.global().async { err = errPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
            process.waitUntilExit()
            group.wait()
            return Result(status: process.terminationStatus, stdout: out, stderr: err)
        }
    }
}

extension SchedulingTests.Staging {
    /// Gives the staging root what `systemd-analyze verify --root` looks for outside our units.
    func prepareForVerify() throws {
        // The units' default dependencies (sysinit.target and friends) come from the host's
        // systemd; without them verify fails on the staging root before reaching our units.
        let systemUnits = ["/usr/lib/systemd/system", "/lib/systemd/system"]
            .first { FileManager.default.fileExists(atPath: $0) }
        let hostUnits = try #require(systemUnits, "no systemd unit directory on this machine")
        try FileManager.default.createDirectory(at: url("usr/lib/systemd"),
                                                withIntermediateDirectories: true)
        #expect(try SchedulingTests.Command.run("/bin/cp", ["-a", hostUnits, url("usr/lib/systemd").path]).status == 0)
    }
}
