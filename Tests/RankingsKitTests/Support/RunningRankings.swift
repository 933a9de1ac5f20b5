import Foundation
import Glibc

/// A `rankings` process caught in the middle of its run: started on a standard input the test
/// holds open, and returned once one of its threads waits in `read(0)`, by which time every
/// output file has been created. The test then changes the world (a signal, a renamed
/// directory) and lets it finish. No sleeps: the kernel says when the process is waiting.
///
/// Started with `posix_spawn`, every signal unblocked and at its default action, as cron or
/// systemd would start it: the test runner's threads block signals, and `Process` passes that
/// mask on, so a signal sent to such a child would wait for ever.
final class RunningRankings {
    let pid: pid_t
    private var stdinWrite: Int32

    struct SpawnFailed: Error { var code: Int32 }
    struct NeverRead: Error {}

    init(_ arguments: [String]) throws {
        _ = ignoringBrokenPipes
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SpawnFailed(code: errno) }
        stdinWrite = fds[1]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([RankingsBinary.url.path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, RankingsBinary.url.path, &actions, &attributes, argv, environ)
        close(fds[0])
        guard spawned == 0 else {
            close(fds[1])
            throw SpawnFailed(code: spawned)
        }
        pid = child
        try waitForStdinRead()
    }

    deinit {
        if stdinWrite >= 0 { close(stdinWrite) }
    }

    /// Sends `bytes`, closes standard input and waits for the exit.
    func finish(sending bytes: [UInt8] = []) -> (status: Int32, signaled: Bool) {
        _ = bytes.withUnsafeBytes { write(stdinWrite, $0.baseAddress, $0.count) }
        close(stdinWrite)
        stdinWrite = -1
        return wait()
    }

    /// Sends `signal` and waits for the process to end.
    func kill(_ signal: Int32) -> (status: Int32, signaled: Bool) {
        Glibc.kill(pid, signal)
        return wait()
    }

    /// The exit status, or the number of the signal that ended the process.
    private func wait() -> (status: Int32, signaled: Bool) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7F == 0 { return ((status >> 8) & 0xFF, false) }
        return (status & 0x7F, true)
    }

    private var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    private func waitForStdinRead() throws {
        #if arch(x86_64)
        let read = "0"
        #else
        let read = "63"
        #endif
        for _ in 0..<60_000 {
            guard isRunning else { throw NeverRead() }
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            for task in tasks {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8) else { continue }
                let fields = text.split(separator: " ")
                if fields.count > 1, fields[0] == read, fields[1] == "0x0" { return }
            }
            usleep(1000)
        }
        Glibc.kill(pid, SIGKILL)
        _ = wait()
        throw NeverRead()
    }
}
