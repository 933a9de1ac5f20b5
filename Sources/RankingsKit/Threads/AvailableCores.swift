import Glibc

/// How many cores this process may use: the CPUs of its affinity mask (`taskset`,
/// systemd's `CPUAffinity=`), capped by the CPU quota of its cgroup and of every cgroup above
/// it (`CPUQuota=`, `docker --cpus`), a fraction of a core counting as a whole one; at least 1.
enum AvailableCores {
    static var count: Int {
        var cores = affinityCount()
        if let quota = quotaCores(cgroups: SmallFile.text("/proc/self/cgroup") ?? "", mountedAt: "/sys/fs/cgroup") {
            cores = min(cores, quota)
        }
        return max(1, cores)
    }

    /// The calling thread's affinity mask as the kernel shows it (sched_getaffinity is not
    /// visible to Swift without _GNU_SOURCE); the online CPUs if /proc is not mounted.
    static func affinityCount() -> Int {
        let status = SmallFile.text("/proc/thread-self/status") ?? SmallFile.text("/proc/self/status") ?? ""
        return affinityCount(status: status) ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// The CPUs in the `Cpus_allowed:` line of a /proc status file: a hex mask in 32-bit
    /// groups separated by commas, such as `ff,ffffffff`.
    static func affinityCount(status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed:") {
            var count = 0
            for c in line.dropFirst("Cpus_allowed:".count).utf8 where c != UInt8(ascii: ",") && c != UInt8(ascii: " ")
                && c != UInt8(ascii: "\t") {
                guard let digit = Int(String(UnicodeScalar(c)), radix: 16) else { return nil }
                count += digit.nonzeroBitCount
            }
            return count > 0 ? count : nil
        }
        return nil
    }

    /// The smallest quota, in whole cores, along this process's cgroup paths (`cgroups` is
    /// the text of /proc/self/cgroup); nil when none is set. Both the unified hierarchy
    /// (`cpu.max`) and the v1 `cpu` controller (`cpu.cfs_quota_us`, `cpu.cfs_period_us`).
    static func quotaCores(cgroups: String, mountedAt root: String) -> Int? {
        var smallest: Int?
        func consider(_ cores: Int?) {
            if let cores { smallest = min(smallest ?? cores, cores) }
        }
        for line in cgroups.split(separator: "\n") {
            // hierarchy-ID:controller-list:path
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            let controllers = fields[1].split(separator: ",")
            if fields[0] == "0" && controllers.isEmpty {
                for dir in directories(from: String(fields[2]), under: root) {
                    consider(SmallFile.text(dir + "/cpu.max").flatMap(cores(cpuMax:)))
                }
            } else if controllers.contains("cpu") {
                let mount = root + "/" + fields[1]
                for dir in directories(from: String(fields[2]), under: mount) {
                    guard let quota = SmallFile.text(dir + "/cpu.cfs_quota_us"),
                          let period = SmallFile.text(dir + "/cpu.cfs_period_us") else { continue }
                    consider(cores(quota: quota, period: period))
                }
            }
        }
        return smallest
    }

    /// The cgroup's directory and each one above it up to the mount point. A path from outside
    /// the process's view (a container without its own cgroup namespace) is skipped, which
    /// leaves the mount point: there, the container's own cgroup.
    static func directories(from path: String, under root: String) -> [String] {
        var parts = path.split(separator: "/").map(String.init)
        var dirs: [String] = []
        while true {
            dirs.append(([root] + parts).joined(separator: "/"))
            if parts.isEmpty { return dirs }
            parts.removeLast()
        }
    }

    /// `cpu.max` holds "QUOTA PERIOD" in microseconds, or "max PERIOD" for no limit.
    static func cores(cpuMax text: String) -> Int? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2 else { return nil }
        return cores(quota: String(fields[0]), period: String(fields[1]))
    }

    /// Quota over period, rounded up; nil for no limit ("max", or -1 in cgroup v1).
    static func cores(quota: String, period: String) -> Int? {
        func number(_ s: String) -> Int? { Int(s.split(separator: "\n").first ?? "") }
        guard let q = number(quota), let p = number(period), q > 0, p > 0 else { return nil }
        return (q + p - 1) / p
    }
}
