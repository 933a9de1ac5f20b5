import Foundation
import Testing
@testable import RankingsKit

/// The default thread count: the affinity mask, capped by the cgroup CPU quota.
@Suite("Available cores")
struct AvailableCoresTests {
    @Test func cpuMaxOfCgroupV2() {
        #expect(AvailableCores.cores(cpuMax: "max 100000\n") == nil)
        #expect(AvailableCores.cores(cpuMax: "100000 100000\n") == 1)
        #expect(AvailableCores.cores(cpuMax: "50000 100000\n") == 1)
        #expect(AvailableCores.cores(cpuMax: "150000 100000\n") == 2)
        #expect(AvailableCores.cores(cpuMax: "200000 100000") == 2)
        #expect(AvailableCores.cores(cpuMax: "200001 100000") == 3)
        #expect(AvailableCores.cores(cpuMax: "1000 1000") == 1)
        for bad in ["", "max", "100000", "x 100000", "100000 0", "0 100000", "1 2 3"] {
            #expect(AvailableCores.cores(cpuMax: bad) == nil, "\(bad)")
        }
    }

    @Test func quotaAndPeriodOfCgroupV1() {
        #expect(AvailableCores.cores(quota: "-1\n", period: "100000\n") == nil)
        #expect(AvailableCores.cores(quota: "250000\n", period: "100000\n") == 3)
        #expect(AvailableCores.cores(quota: "25000\n", period: "50000\n") == 1)
    }

    @Test func affinityMaskOfProcStatus() {
        #expect(AvailableCores.affinityCount(status: "Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == 2)
        #expect(AvailableCores.affinityCount(status: "Cpus_allowed:\tff,ffffffff\n") == 40)
        #expect(AvailableCores.affinityCount(status: "Cpus_allowed:\t00000000,00000100\n") == 1)
        #expect(AvailableCores.affinityCount(status: "Cpus_allowed:\tzz\n") == nil)
        #expect(AvailableCores.affinityCount(status: "Name:\tx\n") == nil)
    }

    /// The kernel's own status file of a process started under `taskset -c 0`.
    @Test func realAffinityMask() throws {
        _ = ignoringBrokenPipes
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        process.arguments = ["-c", "0", "cat", "/proc/thread-self/status"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let status = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(AvailableCores.affinityCount(status: status) == 1)
    }

    /// `count` itself follows the calling thread's mask: pinned to one CPU with `taskset -p`,
    /// it says 1, and with the mask back it says what it said before.
    @Test func countFollowsTheAffinityMask() throws {
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
        let tid = String(link.split(separator: "/").last!)
        let status = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
        let list = status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }!
            .split(separator: "\t").last.map(String.init)!
        let before = AvailableCores.count
        func taskset(_ cpus: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-p", "-c", cpus, tid]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        try taskset("0")
        let pinned = AvailableCores.count
        try taskset(list)
        #expect(pinned == 1)
        #expect(AvailableCores.count == before)
    }

    /// The smallest quota along the process's cgroup and the ones above it, in either hierarchy.
    @Test func quotaAlongTheCgroupPath() throws {
        try ScratchDirectory.with { scratch in
            try scratch.write("unified/system.slice/cpu.max", "max 100000\n")
            try scratch.write("unified/system.slice/rankings.service/cpu.max", "150000 100000\n")
            try scratch.write("unified/cpu.max", "max 100000\n")
            let v2 = "0::/system.slice/rankings.service\n"
            #expect(AvailableCores.quotaCores(cgroups: v2, mountedAt: scratch.path("unified")) == 2)
            try scratch.write("unified/system.slice/cpu.max", "50000 100000\n")
            #expect(AvailableCores.quotaCores(cgroups: v2, mountedAt: scratch.path("unified")) == 1)
            // A path the process cannot see (no cgroup namespace): the mount point is its cgroup.
            #expect(AvailableCores.quotaCores(cgroups: "0::/docker/abc\n", mountedAt: scratch.path("unified")) == nil)
            try scratch.write("unified/cpu.max", "300000 100000\n")
            #expect(AvailableCores.quotaCores(cgroups: "0::/docker/abc\n", mountedAt: scratch.path("unified")) == 3)

            try scratch.write("v1/cpu,cpuacct/batch/cpu.cfs_quota_us", "400000\n")
            try scratch.write("v1/cpu,cpuacct/batch/cpu.cfs_period_us", "100000\n")
            try scratch.write("v1/cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
            try scratch.write("v1/cpu,cpuacct/cpu.cfs_period_us", "100000\n")
            let v1 = "12:pids:/batch\n4:cpu,cpuacct:/batch\n1:name=systemd:/batch\n0::/batch\n"
            #expect(AvailableCores.quotaCores(cgroups: v1, mountedAt: scratch.path("v1")) == 4)
            #expect(AvailableCores.quotaCores(cgroups: "4:cpuacct,cpu:/other\n", mountedAt: scratch.path("v1")) == nil)
            #expect(AvailableCores.quotaCores(cgroups: "", mountedAt: scratch.path("v1")) == nil)
        }
    }
}
