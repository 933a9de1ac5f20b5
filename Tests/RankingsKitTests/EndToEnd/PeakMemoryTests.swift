import Foundation
import Glibc
import Testing

/// Issue 17: peak memory is a function of the distinct keys, not of the threads. The whole
/// binary, on 200,000 distinct jokes, at one thread and at eight: the kernel's maximum resident
/// set of each run, compared with a margin. Not a timing test: memory is counted, not measured
/// against a clock. (When each thread kept the distinct keys of what it read, eight threads
/// took twice the memory of one here: 60 MiB against 30.)
@Suite("Peak memory against threads")
struct PeakMemoryTests {
    /// Eight files of 25,000 jokes each, no joke in two files: each file is one piece, so eight
    /// threads each read one, and a thread that kept its keys would hold an eighth of them.
    static func files(in dir: ScratchDirectory) throws -> [String] {
        let head = Array("{\"joke_id\":\"joke-".utf8), tail = Array("\",\"rating\":5}\n".utf8)
        return try (0..<8).map { file in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(25_000 * 40)
            var digits = [UInt8](repeating: 0, count: 8)
            for joke in 0..<25_000 {
                var k = file * 1_000_000 + joke
                for d in (0..<8).reversed() {
                    digits[d] = 0x30 + UInt8(k % 10)
                    k /= 10
                }
                bytes += head
                bytes += digits
                bytes += tail
            }
            return try dir.write("part-\(file).ndjson", bytes)
        }
    }

    /// Runs `rankings` and returns its exit status and peak resident set in KiB: its own
    /// `VmHWM`, read from /proc while it runs (the high-water mark only grows, so the last
    /// reading is the peak up to a millisecond before the end, where the run only writes).
    ///
    /// Not `wait4`'s `ru_maxrss`: `posix_spawn` starts the child in the test runner's memory
    /// (vfork), and the kernel carries that memory's high-water mark into the child's maximum
    /// at exec, so the figure was the test runner's whenever other tests had made it larger
    /// (CI once saw 66 MiB at one thread and 120 MiB at eight, for runs of 35 and 38).
    static func peakKiB(_ arguments: [String]) throws -> (status: Int32, kib: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let path = RankingsBinary.url.path
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw RunningRankings.SpawnFailed(code: spawned) }
        var peak = 0
        var status: Int32 = 0
        while true {
            if let kib = highWaterKiB(child) { peak = max(peak, kib) }
            let done = waitpid(child, &status, WNOHANG)
            if done == child || (done < 0 && errno != EINTR) { break }
            usleep(1000)
        }
        return ((status >> 8) & 0xFF, peak)
    }

    /// `VmHWM` of a running process in KiB; nil once it has exited (a zombie has none).
    static func highWaterKiB(_ pid: pid_t) -> Int? {
        // read(2) until the end: /proc files say they are empty to stat, which readers that
        // size their buffer first believe.
        let fd = open("/proc/\(pid)/status", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            // "VmHWM:\t   35104 kB"
            return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Under AddressSanitizer the runs peaked at 55 and 89 MiB: its quarantine and per-thread
    /// caches, not the product's tables. The two plain suite runs of `.ci/run` measure it.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["RANKINGS_TEST_SANITIZER"] != nil,
                    "a sanitizer's allocator is not the product's"))
    func eightThreadsTakeAboutWhatOneTakes() throws {
        try ScratchDirectory.with { dir throws in
            let inputs = try Self.files(in: dir)
            func peak(_ threads: Int) throws -> Int {
                let run = try Self.peakKiB(["aggregate", "-q", "--threads", "\(threads)",
                                            "--computed-at", "2026-01-01T00:00:00Z",
                                            "-o", dir.path("out-\(threads).json")] + inputs)
                #expect(run.status == 0)
                return run.kib
            }
            let one = try peak(1), eight = try peak(8)
            // The jokes' tables are a good part of it: 200,000 jokes take about 20 MiB.
            #expect(one > 24 << 10)
            #expect(Double(eight) <= 1.3 * Double(one), "1 thread: \(one) KiB, 8 threads: \(eight) KiB")
            #expect(try dir.read("out-1.json") == dir.read("out-8.json"))
        }
    }
}
