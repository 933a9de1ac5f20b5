import Glibc

/// What `--metrics PATH` records about one run of `rankings aggregate`, for node_exporter's
/// textfile collector.
///
/// Every value describes the last run, so every metric is a gauge: a count of events in one run
/// goes up and down from night to night, which is why none of them ends in `_total`.
struct RunMetrics: Sendable {
    /// Unix time at which the run ended.
    var endedAt: Int64
    var durationSeconds: Double
    var exitStatus: Int32
    /// The run's counts; nil when the inputs were not read to the end (66, 73, a read error, a
    /// corrupt gzip), whose counts would be partial.
    var summary: RunSummary?
    /// The totals of the document the run made: written, or refused by `--max-drop`.
    var documentTotals: (hilarious: Int, horrible: Int)?

    init(endedAt: Int64, durationSeconds: Double, exitStatus: Int32) {
        self.endedAt = endedAt
        self.durationSeconds = durationSeconds
        self.exitStatus = exitStatus
    }

    /// The file in the Prometheus text exposition format (version 0.0.4). A failed run takes
    /// `lastSuccess` from the file it replaces, so "time since the last success" keeps growing
    /// through failures; there is no such line until a run has succeeded.
    func exposition(lastSuccess previous: Int64?) -> [UInt8] {
        var text = ""
        func metric(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for sample in samples { text += name + sample.labels + " " + sample.value + "\n" }
        }
        func kinds(_ values: [(String, Int)]) -> [(labels: String, value: String)] {
            values.map { ("{kind=\"\($0.0)\"}", String($0.1)) }
        }
        metric("rankings_last_run_timestamp_seconds", "Unix time at which the last run of rankings aggregate ended.",
               [("", String(endedAt))])
        metric("rankings_last_run_duration_seconds", "How long the last run took.",
               [("", format3(durationSeconds))])
        metric("rankings_last_run_exit_status",
               "Exit status of the last run: 0 written, 65 bad data or refused by --max-drop, 66 input unreadable, 73 output cannot be created, 74 I/O error.",
               [("", String(exitStatus))])
        if let success = exitStatus == 0 ? endedAt : previous {
            metric("rankings_last_success_timestamp_seconds", "Unix time at which a run last wrote the document.",
                   [("", String(success))])
        }
        if let s = summary {
            metric("rankings_last_run_events", "Events the last run counted, by kind, after filters and deduplication.",
                   kinds([("hilarious", s.hilarious), ("horrible", s.horrible), ("neutral", s.neutral)]))
            metric("rankings_last_run_bad_lines", "Bad lines in the last run's inputs.", [("", String(s.badLines))])
            metric("rankings_last_run_jokes", "Distinct jokes with at least one event counted in the last run.",
                   [("", String(s.distinctJokes))])
            metric("rankings_last_run_input_bytes", "Bytes the last run read from its inputs, as stored (compressed, for gzip).",
                   [("", String(s.inputBytes))])
        }
        if let totals = documentTotals {
            metric("rankings_last_run_document_ratings",
                   "total_hilarious_ratings and total_horrible_ratings of the document the last run made (written, or refused by --max-drop).",
                   kinds([("hilarious", totals.hilarious), ("horrible", totals.horrible)]))
        }
        return Array(text.utf8)
    }
}

/// Writes `--metrics PATH`. Unlike the other outputs it is written last, after the outcome is
/// known, and a metrics file that cannot be written never changes the run's exit status: a
/// monitoring problem must not turn a good night into a failed one.
enum MetricsFile {
    static let successName = Array("rankings_last_success_timestamp_seconds".utf8)

    /// Replaces the file at `path` atomically; returns a warning when that failed.
    static func write(_ metrics: RunMetrics, to path: String) -> String? {
        let bytes = metrics.exposition(lastSuccess: lastSuccess(in: path))
        do {
            let file = try AtomicFile(path: path)
            try file.write(bytes)
            try file.commit()
            return nil
        } catch {
            switch error {
            case .cannotCreate(_, let reason), .writeFailed(_, let reason):
                return "rankings: warning: cannot write metrics to \(path): \(reason); the run's status is unchanged"
            }
        }
    }

    /// The last success recorded in an earlier metrics file, or nil when there is none (no file,
    /// a file we cannot read, or one without the line).
    static func lastSuccess(in path: String) -> Int64? {
        // Only a regular file holds an earlier run's metrics (anything else was refused before
        // the run read its inputs). Opened without blocking and checked on the descriptor, so a
        // FIFO put there since cannot hold the run: `open` and `read` of one would wait for ever.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        // Our own file is under 2 KiB; the cap keeps a wrong path from costing memory.
        let bytes = ((try? FileDescriptor.readAll(fd, limit: 64 << 10)) ?? []).prefix(64 << 10)
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            guard line.starts(with: successName), line.count > successName.count,
                  line[line.startIndex + successName.count] == UInt8(ascii: " ") else { continue }
            let value = String(decoding: line[(line.startIndex + successName.count + 1)...], as: UTF8.self)
            if let seconds = Double(value), seconds.isFinite, seconds >= 0, seconds < 1e15 { return Int64(seconds) }
        }
        return nil
    }
}
