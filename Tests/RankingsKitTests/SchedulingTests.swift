import Foundation
import Testing

/// The daily run as shipped: `jobs/install.sh` lays out the units, the cron file, the wrapper and
/// the configuration, and these tests check what it installed rather than the templates, so a
/// placeholder left unsubstituted or a path that does not match the binary shows up here.
///
/// systemd itself cannot run here, so the units are checked with `systemd-analyze` (package
/// `systemd`); the cron wrapper runs for real, against the built `rankings` and against
/// `Tests/scheduling/fake-rankings`, which scripts how each try ends.
@Suite struct SchedulingTests {
    static let documentedFiles: Set<String> = [
        "etc/rankings.conf",
        "etc/systemd/system/rankings.service",
        "etc/systemd/system/rankings.timer",
        "etc/systemd/system/rankings-publish.service",
        "etc/systemd/system/rankings-fetch.service",
        "etc/cron.d/rankings",
        "etc/sysusers.d/rankings.conf",
        "etc/tmpfiles.d/rankings.conf",
        "usr/local/bin/rankings",
        "usr/local/libexec/rankings-cron",
        "usr/local/libexec/rankings-fetch-firestore",
        "usr/local/libexec/rankings-publish-firestore",
        "usr/local/libexec/rankings_firestore.py",
        "usr/local/libexec/rankings_nights.py",
        "usr/local/libexec/rankings_snapshot.py",
    ]

    // MARK: - Install

    @Test func installLaysOutExactlyTheDocumentedFilesAndUninstallRemovesThem() throws {
        try Staging.with { stage in
            let install = try stage.install()
            #expect(install.status == 0, "\(install.stderrText)")
            #expect(try stage.files() == Self.documentedFiles)
            #expect(try Data(contentsOf: stage.url("usr/local/bin/rankings"))
                == Data(contentsOf: RankingsBinary.url))

            let uninstall = try stage.installScript(["uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.stderrText)")
            #expect(try stage.files() == [])
        }
    }

    @Test(arguments: ["/usr/local", "/opt/rankings", "/opt/r+d,2.0:x_y-z"])
    func installedFilesPointWhereTheBinaryWent(prefix: String) throws {
        try Staging.with { stage in
            #expect(try stage.install(prefix: prefix).status == 0)
            let service = try stage.text("etc/systemd/system/rankings.service")
            let cron = try stage.text("etc/cron.d/rankings")
            let wrapper = try stage.text(String(prefix.dropFirst()) + "/libexec/rankings-cron")

            #expect(Self.value(of: "ExecStart", in: service)?.hasPrefix("\(prefix)/bin/rankings aggregate ") == true)
            #expect(Self.value(of: "EnvironmentFile", in: service) == "/etc/rankings.conf")
            #expect(cron.contains("\n0 0 * * * rankings \(prefix)/libexec/rankings-cron /etc/rankings.conf\n"))
            #expect(wrapper.contains("${RANKINGS_BIN:-\(prefix)/bin/rankings}"))
            for name in try stage.files() where !name.hasSuffix("bin/rankings") {
                #expect(try stage.text(name).range(of: "@[A-Z]+@", options: .regularExpression) == nil,
                        "placeholder left in \(name)")
            }
        }
    }

    /// Each path goes into a unit (split at spaces, "%" a specifier), a crontab line run by sh
    /// ("&", ";", "$" are syntax) and the configuration; 0.2 put them through sed unescaped
    /// (`/opt/r&d` became `/opt/r@BINDIR@d`) and split its table at spaces (half an install).
    @Test(arguments: [
        ["PREFIX": "/opt/r&d"], ["SYSCONFDIR": "/my etc"], ["PREFIX": "/opt/a|b"], ["BINDIR": "/opt/bin\\x"],
        ["LIBEXECDIR": "/opt/100%"], ["UNITDIR": "/opt/$HOME"], ["SYSCONFDIR": "/etc;x"], ["PREFIX": "opt/rankings"],
        ["TMPFILESDIR": "/etc/tmp\nfiles.d"],
    ])
    func installRefusesAPathItsFilesCannotHoldBeforeChangingAnything(layout: [String: String]) throws {
        try Staging.with { stage in
            for script in ["jobs/install.sh", "jobs/install-monthly.sh"] {
                let install = try stage.installScript(["install"], layout: layout, script: script)
                #expect(install.status == 64, "\(script) \(layout): \(install.stderrText)")
                #expect(install.stderrText.contains("\(layout.keys.first!)="), "\(install.stderrText)")
                #expect(try stage.files() == [], "\(script) \(layout) installed something")
            }
        }
    }

    @Test func uninstallKeepsAnEditedConfigurationUnlessPurged() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let config = stage.url("etc/rankings.conf")
            let edited = try stage.text("etc/rankings.conf") + "RANKINGS_FLAGS=--quiet\n"
            try Data(edited.utf8).write(to: config)

            #expect(try stage.install().status == 0)
            #expect(try stage.text("etc/rankings.conf") == edited, "reinstall must keep the operator's settings")
            #expect(try stage.installScript(["uninstall"]).status == 0)
            #expect(try stage.files() == ["etc/rankings.conf"])
            #expect(try stage.installScript(["uninstall", "--purge"]).status == 0)
            #expect(try stage.files() == [])
        }
    }

    // MARK: - systemd

    @Test func systemdAcceptsTheInstalledUnits() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            try stage.prepareForVerify()

            // verify only warns about unknown keys and bad values, so silence is the real pass mark.
            let verify = try Command.run("systemd-analyze",
                                         ["verify", "--root=\(stage.root.path)", "rankings.service", "rankings.timer",
                                          "rankings-publish.service"])
            #expect(verify.status == 0)
            #expect(verify.stdoutText + verify.stderrText == "")
        }
    }

    @Test func timerFiresAtMidnightInNewYorkAcrossDaylightSaving() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let timer = try stage.text("etc/systemd/system/rankings.timer")
            let expression = try #require(Self.value(of: "OnCalendar", in: timer))
            #expect(try stage.text("etc/cron.d/rankings").contains("\nCRON_TZ=America/New_York\n"))

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

    // MARK: - Cron wrapper

    @Test func wrapperWritesTheSampleDocumentWithTheRealBinary() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let root = RankingsBinary.packageRoot
            let exports = root.appendingPathComponent("sample-data/rating_events.ndjson").path
            let computedAt = "--computed-at 2026-02-18T05:00:00Z"
            let output = stage.url("out/all_time.json")
            try FileManager.default.createDirectory(at: output.deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": exports,
                "RANKINGS_OUTPUT": output.path,
                "RANKINGS_FLAGS": "\"\(computedAt)\"",
                "RANKINGS_BIN": RankingsBinary.url.path,
            ])

            let run = try stage.runWrapper(config: config)
            #expect(run.status == 0, "\(stage.log())")

            // The lead's golden document when it is there; otherwise the binary run by hand with
            // the same arguments, which still proves the wrapper passes them through intact.
            let golden = root.appendingPathComponent("sample-data/expected/all_time.json")
            let expected: Data
            if FileManager.default.fileExists(atPath: golden.path) {
                expected = try Data(contentsOf: golden)
            } else {
                let direct = stage.url("direct.json")
                let byHand = try RankingsBinary.run(
                    ["aggregate"] + computedAt.split(separator: " ").map(String.init)
                        + ["--output", direct.path, exports])
                #expect(byHand.status == 0, "\(byHand.stderrText)")
                expected = try Data(contentsOf: direct)
            }
            #expect(try Data(contentsOf: output) == expected)
        }
    }

    @Test func wrapperRetriesATransientFailureAndThenSucceeds() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["74", "66", "0"])
            let run = try stage.runWrapper(config: try stage.fakeConfig(fake), fake: fake)
            #expect(run.status == 0, "\(stage.log())")
            let call = "aggregate --max-invalid 5 --output \(stage.url("out/all_time.json").path) \(stage.url("exports").path)"
            #expect(try fake.calls() == [call, call, call])
            #expect(try stage.text("out/all_time.json") == "{\"fake\":true}\n")
        }
    }

    @Test func wrapperStopsAfterThreeRetries() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["74", "74", "73", "66", "0"])
            let run = try stage.runWrapper(config: try stage.fakeConfig(fake), fake: fake)
            #expect(run.status == 66)
            #expect(try fake.calls().count == 4)
            #expect(!FileManager.default.fileExists(atPath: stage.url("out/all_time.json").path))
        }
    }

    @Test(arguments: [Int32(64), 65])
    func wrapperNeverRetriesUsageOrDataErrors(status: Int32) throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["\(status)", "0"])
            let run = try stage.runWrapper(config: try stage.fakeConfig(fake), fake: fake)
            #expect(run.status == status)
            #expect(try fake.calls().count == 1)
        }
    }

    @Test func secondWrapperExitsWithoutRunningWhileTheFirstHoldsTheLock() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["block", "0"])
            let config = try stage.fakeConfig(fake)
            let first = try stage.startWrapper(config: config, fake: fake)
            // On an early failure, unblock the fake too, so nothing outlives the test for long.
            defer {
                try? fake.release()
                if first.isRunning { first.terminate() }
            }
            try #require(fake.waitUntilStarted(), "the first run never reached the job")

            let second = try stage.runWrapper(config: config, fake: fake)
            #expect(second.status == 75)
            #expect(try fake.calls().count == 1)

            try fake.release()
            first.waitUntilExit()
            #expect(first.terminationStatus == 0)
            #expect(try fake.calls().count == 1)
            #expect(stage.log().contains("another run holds"))
        }
    }

    /// An operator runs the wrapper by hand as root (umask 077) where the job's user keeps its
    /// files. 0.2 ran, and left a lock and log only root could open: every later run of that
    /// user failed with 73. Now root is turned away (64) before it creates anything, and the
    /// user's own run goes ahead. The tests run as root; `nobody` plays the job's user.
    @Test func rootIsTurnedAwayWhereTheJobsUserKeepsItsFiles() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let log = stage.url("out/cron.log")
            let config = stage.base.appendingPathComponent("user.conf")
            try Data("""
                RANKINGS_EXPORTS=\(stage.url("exports").path)
                RANKINGS_OUTPUT=\(stage.url("out/all_time.json").path)
                RANKINGS_BIN=\(fake.executable.path)
                RANKINGS_LOG_FILE=\(log.path)

                """.utf8).write(to: config)
            #expect(try Command.run("/bin/chown", ["-R", "nobody:nogroup", stage.base.path]).status == 0)

            let asRoot = try Command.run("/bin/sh", ["-c", "umask 077 && exec \"$0\" \"$1\"", stage.wrapper.path, config.path],
                                         environment: fake.environment)
            #expect(asRoot.status == 64, "\(asRoot.stderrText)")
            #expect(asRoot.stderrText.contains("running as root, but \(stage.url("out").path) belongs to nobody"), "\(asRoot.stderrText)")
            #expect(try fake.calls() == [])
            #expect(try FileManager.default.contentsOfDirectory(atPath: stage.url("out").path) == [])

            let asUser = try Command.run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
                                                     stage.wrapper.path, config.path],
                                         environment: fake.environment)
            #expect(asUser.status == 0, "\(asUser.stderrText) \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            #expect(try fake.calls().count == 1)
        }
    }

    /// A lock outside the job's directory (a shared one like /run/lock) made by root under umask
    /// 077 was 0600, and the job's user could not open it (73). The wrapper makes it 0644.
    @Test func aLockMadeUnderAStrictUmaskStaysOpenToOtherUsers() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0", "0"])
            let shared = stage.base.appendingPathComponent("lock")
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: shared.path)
            let lock = shared.appendingPathComponent("rankings.lock")
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": stage.url("exports").path,
                "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
                "RANKINGS_BIN": fake.executable.path,
                "RANKINGS_LOCK_FILE": lock.path,
            ])
            let run = try Command.run("/bin/sh", ["-c", "umask 077 && exec \"$0\" \"$1\"", stage.wrapper.path, config.path],
                                      environment: fake.environment)
            #expect(run.status == 0, "\(stage.log())")
            let mode = try FileManager.default.attributesOfItem(atPath: lock.path)[.posixPermissions] as? Int
            #expect(mode == 0o644)
            let opened = try Command.run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
                                                     "/bin/sh", "-c", "exec 9<\"$0\" && flock --nonblock 9", lock.path])
            #expect(opened.status == 0, "\(opened.stderrText)")
        }
    }

    /// A log made by the wrapper under umask 077 is 0644, as its lock is: whoever reads the job's
    /// log (an operator in group adm, a log shipper) is not locked out by the caller's umask.
    @Test func aLogMadeUnderAStrictUmaskIsReadableByAll() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let config = try stage.fakeConfig(fake)
            let run = try Command.run("/bin/sh", ["-c", "umask 077 && exec \"$0\" \"$1\"", stage.wrapper.path, config.path],
                                      environment: fake.environment)
            #expect(run.status == 0, "\(stage.log())")
            let log = stage.base.appendingPathComponent("cron.log").path
            #expect(try FileManager.default.attributesOfItem(atPath: log)[.posixPermissions] as? Int == 0o644)
        }
    }

    /// A fetch that never ends is stopped at RANKINGS_FETCH_TIMEOUT_SECONDS like the fetch unit's
    /// try: each stopped try is a failed one, and after the last the wrapper exits 69 without
    /// running the job, its lock free for the next night (0.3 waited for ever, holding it).
    @Test func aHungFetchIsStoppedAtItsLimitAndTheLockIsFreed() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": stage.url("exports").path,
                "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
                "RANKINGS_BIN": fake.executable.path,
                "RANKINGS_FETCH": "\"/bin/sleep 600\"",
                "RANKINGS_FETCH_TIMEOUT_SECONDS": "1",
            ])
            // Started with no signal blocked, as cron starts it: this test process's children
            // inherit a mask with SIGTERM blocked, and the stopped try would wait for the KILL.
            let unblocked = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
            let run = try Command.run("/usr/bin/python3", ["-c", unblocked, stage.wrapper.path, config.path],
                                      environment: fake.environment)
            #expect(run.status == 69, "\(run.stderrText) \(stage.log())")
            let log = stage.log()
            #expect(log.components(separatedBy: "fetch hook failed with status 124 (stopped at its limit of 1s) on try ").count - 1 == 4, "\(log)")
            #expect(log.contains("on try 4; no tries left, the job does not run"), "\(log)")
            #expect(try fake.calls() == [])
            let lock = stage.url("out/.rankings.lock").path
            let free = try Command.run("/bin/sh", ["-c", "exec 9<\"$0\" && flock --nonblock 9", lock])
            #expect(free.status == 0)
        }
    }

    @Test func aFetchLimitThatIsNotANumberIsRefused() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let config = try stage.writeConfig([
                "RANKINGS_EXPORTS": stage.url("exports").path,
                "RANKINGS_OUTPUT": stage.url("out/all_time.json").path,
                "RANKINGS_BIN": fake.executable.path,
                "RANKINGS_FETCH_TIMEOUT_SECONDS": "25m",
            ])
            let run = try stage.runWrapper(config: config, fake: fake)
            #expect(run.status == 78)
            #expect(run.stderrText.contains("RANKINGS_FETCH_TIMEOUT_SECONDS must be a whole number of seconds above 0, not 25m"), "\(run.stderrText)")
            #expect(try fake.calls() == [])
        }
    }

    /// 75 means another run holds the lock, nothing else: flock failing to run (here: not on
    /// PATH; in 0.3, E2BIG from a 300 KB setting) is 73 with flock's status.
    @Test func flockFailingIsNotReportedAsAHeldLock() throws {
        try Staging.with { stage in
            let fake = try stage.installWithFake(plan: ["0"])
            let config = try stage.fakeConfig(fake)
            let tools = stage.base.appendingPathComponent("tools")
            try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
            for tool in ["bash", "date", "dirname", "stat", "logger", "timeout", "sleep", "head", "sed", "seq", "touch"] {
                let found = try Command.run("/bin/sh", ["-c", "command -v \"$0\"", tool]).stdoutText
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                try FileManager.default.createSymbolicLink(atPath: tools.appendingPathComponent(tool).path,
                                                           withDestinationPath: found)
            }
            let run = try Command.run(stage.wrapper.path, [config.path],
                                      environment: fake.environment.merging(["PATH": tools.path]) { $1 })
            #expect(run.status == 73, "\(stage.log())")
            #expect(stage.log().contains("cannot lock \(stage.url("out/.rankings.lock").path): flock failed with status 127; nothing was run"),
                    "\(stage.log())")
            #expect(!stage.log().contains("another run holds"))
            #expect(try fake.calls() == [])
        }
    }

    /// The wrapper stops each try where the units do: the job at rankings.service's
    /// TimeoutStartSec=, the publish hook at rankings-publish.service's, the fetch at the fetch
    /// unit's default limit.
    @Test func wrapperLimitsAreTheUnits() throws {
        try Staging.with { stage in
            #expect(try stage.install().status == 0)
            let wrapper = try stage.text("usr/local/libexec/rankings-cron")
            let job = try stage.text("etc/systemd/system/rankings.service")
            let publish = try stage.text("etc/systemd/system/rankings-publish.service")
            let fetch = try stage.text("etc/systemd/system/rankings-fetch.service")
            #expect(Self.value(of: "TimeoutStartSec", in: job) == "25min")
            #expect(Self.value(of: "TimeoutStartSec", in: publish) == "10min")
            #expect(fetch.contains("timeout --kill-after=60 $${RANKINGS_FETCH_TIMEOUT_SECONDS:-1500} $$RANKINGS_FETCH"))
            #expect(wrapper.contains("\nreadonly job_limit=1500 publish_limit=600 default_fetch_limit=1500\n"))
            #expect(wrapper.contains("timeout --kill-after=60 \"$limit\""))
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

        /// Runs jobs/install.sh against this root with the already built binary, so tests never
        /// start a release build of their own.
        func installScript(_ arguments: [String], prefix: String = "/usr/local",
                           layout: [String: String] = [:], script: String = "jobs/install.sh") throws -> Command.Result {
            try Command.run(RankingsBinary.packageRoot.appendingPathComponent(script).path, arguments,
                            environment: ["DESTDIR": root.path, "PREFIX": prefix,
                                          "RANKINGS_PREBUILT": RankingsBinary.url.path].merging(layout) { $1 })
        }

        func install(prefix: String = "/usr/local") throws -> Command.Result { try installScript(["install"], prefix: prefix) }

        /// Regular files under the root, as paths relative to it.
        func files() throws -> Set<String> {
            let rootPath = root.resolvingSymlinksInPath().path
            var found: Set<String> = []
            let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
            while let item = walker?.nextObject() as? URL {
                guard try item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
                found.insert(String(item.resolvingSymlinksInPath().path.dropFirst(rootPath.count + 1)))
            }
            return found
        }

        /// A configuration in the shipped syntax; the wrapper pauses no time between tries and
        /// logs to a file the test can read.
        func writeConfig(_ settings: [String: String]) throws -> URL {
            var all = settings
            all["RANKINGS_RETRY_PAUSE_SECONDS"] = "0"
            all["RANKINGS_LOG_FILE"] = base.appendingPathComponent("cron.log").path
            let text = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
            let config = base.appendingPathComponent("rankings.conf")
            try Data(text.utf8).write(to: config)
            return config
        }

        func log() -> String {
            (try? String(contentsOf: base.appendingPathComponent("cron.log"), encoding: .utf8)) ?? ""
        }

        /// Installs, then sets up a fake `rankings` that ends its runs as `plan` says.
        func installWithFake(plan: [String]) throws -> FakeRankings {
            #expect(try install().status == 0)
            try FileManager.default.createDirectory(at: url("out"), withIntermediateDirectories: true)
            return try FakeRankings(directory: base.appendingPathComponent("fake"), plan: plan)
        }

        func fakeConfig(_ fake: FakeRankings) throws -> URL {
            try writeConfig([
                "RANKINGS_EXPORTS": url("exports").path,
                "RANKINGS_OUTPUT": url("out/all_time.json").path,
                "RANKINGS_FLAGS": "\"--max-invalid 5\"",
                "RANKINGS_BIN": fake.executable.path,
            ])
        }

        var wrapper: URL { url("usr/local/libexec/rankings-cron") }

        func runWrapper(config: URL, fake: FakeRankings? = nil) throws -> Command.Result {
            try Command.run(wrapper.path, [config.path], environment: fake?.environment ?? [:])
        }

        func startWrapper(config: URL, fake: FakeRankings) throws -> Process {
            _ = ignoringBrokenPipes
            let process = Process()
            process.executableURL = wrapper
            process.arguments = [config.path]
            process.environment = ProcessInfo.processInfo.environment.merging(fake.environment) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
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

        func calls() throws -> [String] {
            let url = directory.appendingPathComponent("calls")
            guard FileManager.default.fileExists(atPath: url.path) else { return [] }
            return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
        }

        /// Polls for the blocked run's marker; bounded so a broken wrapper fails the test instead of
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
        // verify also checks that each command exists under the root: the publish unit's
        // /bin/sh and /usr/bin/env are on every Debian system, but not in the staging root.
        for tool in ["bin/sh", "usr/bin/env"] {
            try FileManager.default.createDirectory(at: url(tool).deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            #expect(try SchedulingTests.Command.run("/bin/cp", ["/" + tool, url(tool).path]).status == 0)
        }
    }
}
