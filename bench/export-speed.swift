import Glibc

/// Reads a managed export on one thread through RankingsKit's reader and prints events per
/// second and MB per second (built and run by bench/export-speed.sh).
struct Count: ExportSink {
    var events = 0, leftOut = 0, bad = 0
    var check: UInt64 = 0
    mutating func event(_ event: ExportEvent, record: Int) {
        events += 1
        check &+= UInt64(event.jokeID.count) &+ UInt64(event.rating)
    }
    mutating func leftOut(record: Int) { leftOut += 1 }
    mutating func bad(record: Int, reason: BadRecord) { bad += 1 }
}

@main
enum ExportSpeed {
    static func now(_ clock: clockid_t = CLOCK_MONOTONIC) -> Double {
        var t = timespec()
        clock_gettime(clock, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    static func main() throws {
        let directory = CommandLine.arguments[1]
        guard let export = try ManagedExport.open(directory) else {
            print("\(directory): not a managed export")
            exit(66)
        }
        var reader = ExportFileReader()
        var count = Count()
        var bytes: Int64 = 0
        let start = now(), startCPU = now(CLOCK_THREAD_CPUTIME_ID)
        for file in export.outputFiles {
            let fd = open(file.displayPath, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { print("\(file.displayPath): cannot open"); exit(66) }
            defer { close(fd) }
            _ = try reader.read(file, descriptor: fd, into: &count)
            bytes += file.size
        }
        let seconds = now() - start, cpu = now(CLOCK_THREAD_CPUTIME_ID) - startCPU
        print("\(count.events) events, \(count.bad) bad, \(count.leftOut) left out, \(bytes) bytes in \(export.outputFiles.count) files")
        print("one thread: \(format2(seconds)) s, \(Int(Double(count.events) / seconds)) events/s, \(Int(Double(bytes) / seconds / 1e6)) MB/s (check \(count.check))")
        // On a busy machine the wall clock counts other processes' turns; the thread's CPU time does not.
        print("per CPU second: \(format2(cpu)) s of CPU, \(Int(Double(count.events) / cpu)) events/s, \(Int(Double(bytes) / cpu / 1e6)) MB/s")
    }

    static func format2(_ v: Double) -> String {
        let hundredths = Int((v * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
