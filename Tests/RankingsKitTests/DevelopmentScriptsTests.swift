import Foundation
import Testing

/// The scripts that build and check the project rather than ship with it: the container test's
/// shared root file system cache, and CI's release build step.
@Suite struct DevelopmentScriptsTests {
    /// Tests/container/rootfs.sh keeps one Debian tree per machine for every checkout's container
    /// test. Two runs at once must build it once: under 0.2 the second started its own
    /// debootstrap into the same temporary tree, deleting the first one's half-built files.
    /// Here debootstrap is a stand-in on PATH (the real one downloads a distribution) that waits
    /// until the test lets it finish, so the second run is certain to arrive while the first
    /// one builds.
    static let standIn = """
        #!/bin/sh
        # debootstrap --variant=... --include=... SUITE TARGET MIRROR, as rootfs.sh calls it
        dir=$(dirname "$0")
        shift $(($# - 2)); target=$1
        echo started >>"$dir/starts"
        mkdir -p "$target/etc"
        i=0
        while [ ! -e "$dir/release" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
        echo built >"$target/etc/built-by-stand-in"
        """

    @Test func twoRunsAtOnceBuildTheSharedTreeOnce() throws {
        let base = FileManager.default.temporaryDirectory
            .appendingPathComponent("rankings-rootfs-\(UUID().uuidString)")
        let tools = base.appendingPathComponent("tools")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let debootstrap = tools.appendingPathComponent("debootstrap")
        try Data(Self.standIn.utf8).write(to: debootstrap)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: debootstrap.path)

        let rootfs = RankingsBinary.packageRoot.appendingPathComponent("Tests/container/rootfs.sh").path
        let cache = base.appendingPathComponent("cache")
        func start(_ name: String) throws -> (Process, URL) {
            _ = ignoringBrokenPipes
            let errors = base.appendingPathComponent("\(name).err")
            let output = base.appendingPathComponent("\(name).out")
            try Data().write(to: errors)
            try Data().write(to: output)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "set -euo pipefail; source \"$1\"; container_rootfs", "bash", rootfs]
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] = tools.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["RANKINGS_CONTAINER_CACHE"] = cache.path
            process.environment = environment
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            return (process, base.appendingPathComponent(name))
        }
        func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        let starts = tools.appendingPathComponent("starts")
        /// Bounded polling, so a broken script fails the test instead of hanging it.
        func waitFor(_ condition: () -> Bool) -> Bool {
            for _ in 0..<600 {
                if condition() { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }

        let (first, firstName) = try start("first")
        defer { if first.isRunning { first.terminate() } }
        try #require(waitFor { text(starts) == "started\n" }, "the first run never started debootstrap")

        let (second, secondName) = try start("second")
        defer { if second.isRunning { second.terminate() } }
        // Either the second run waits for the first (it says so), or it starts a build of its own.
        let secondErrors = secondName.appendingPathExtension("err")
        #expect(waitFor { text(secondErrors).contains("# waiting for another run") || text(starts) != "started\n" })
        #expect(text(starts) == "started\n", "a second debootstrap started while the first one ran")

        try Data().write(to: tools.appendingPathComponent("release"))
        first.waitUntilExit()
        second.waitUntilExit()
        #expect(first.terminationStatus == 0, "\(text(firstName.appendingPathExtension("err")))")
        #expect(second.terminationStatus == 0, "\(text(secondErrors))")
        let tree = text(firstName.appendingPathExtension("out"))
        #expect(tree.hasPrefix(cache.path + "/bookworm-"))
        #expect(text(secondName.appendingPathExtension("out")) == tree)
        #expect(text(URL(fileURLWithPath: tree.trimmingCharacters(in: .newlines) + "/etc/built-by-stand-in")) == "built\n")
        #expect(text(starts) == "started\n")
    }

    /// `.ci/run` under 0.2 ran `jobs/check-binary.sh "$(jobs/build-binary.sh)"`: set -e ignores a
    /// failed command substitution inside another command's arguments, so a failed release build
    /// went on to check whatever path it had printed (an old binary), and CI could pass. Here a
    /// copy of .ci/run runs in a scratch tree whose build step prints a stale path and fails;
    /// `swift` and `apt-get` are stand-ins on PATH, so nothing is built or installed.
    @Test func ciStopsWhenTheReleaseBuildFails() throws {
        let base = FileManager.default.temporaryDirectory
            .appendingPathComponent("rankings-ci-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let record = base.appendingPathComponent("record")
        func script(_ relative: String, _ body: String) throws {
            let url = base.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("#!/bin/sh\n\(body)\n".utf8).write(to: url)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        }
        try script(".ci/run", try String(contentsOf: RankingsBinary.packageRoot.appendingPathComponent(".ci/run"), encoding: .utf8)
            .replacingOccurrences(of: "#!/usr/bin/env bash\n", with: ""))
        // The copy is run by bash, whatever its first line says.
        try script("tools/swift", "echo \"swift $*\" >>'\(record.path)'")
        try script("tools/apt-get", "exit 0")
        try script("jobs/build-binary.sh", "echo build >>'\(record.path)'; echo /stale/.build-release/rankings; exit 1")
        try script("jobs/check-binary.sh", "echo \"check $*\" >>'\(record.path)'; exit 0")

        let run = try SchedulingTests.Command.run(
            "/bin/bash", [base.appendingPathComponent(".ci/run").path],
            environment: ["PATH": base.appendingPathComponent("tools").path + ":/usr/sbin:/usr/bin:/sbin:/bin"])
        let recorded = (try? String(contentsOf: record, encoding: .utf8)) ?? ""
        #expect(run.status != 0, "\(recorded)")
        // The steps before the build are CI's business; nothing may follow the failed build.
        #expect(recorded.hasSuffix("build\n") && !recorded.contains("check"),
                "CI went on after the failed build")
    }
}
