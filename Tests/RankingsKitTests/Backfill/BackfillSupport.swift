import Foundation
import Testing

/// What the backfill tests share: one call that writes inline input files, runs
/// `rankings aggregate` on them and reads back what the run left, and a builder for the exact
/// bytes of an expected document, so each test states its expectation in a few lines.
enum Backfill {
    /// One event line. Pass raw JSON for `timestamp` (`"\"2026-02-18T05:00:00Z\""` or an object);
    /// nil leaves a field out.
    static func event(_ joke: String, _ rating: String, device: String? = nil, id: String? = nil,
                      week: String? = nil, timestamp: String? = nil) -> String {
        var fields = ["\"joke_id\": \"\(joke)\"", "\"rating\": \(rating)"]
        if let device { fields.append("\"device_id\": \"\(device)\"") }
        if let id { fields.append("\"id\": \"\(id)\"") }
        if let week { fields.append("\"week_id\": \"\(week)\"") }
        if let timestamp { fields.append("\"timestamp\": \(timestamp)") }
        return "{" + fields.joined(separator: ", ") + "}\n"
    }

    /// A timestamp as an RFC 3339 JSON string.
    static func rfc(_ text: String) -> String { "\"\(text)\"" }

    /// What a run left behind.
    struct Run {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
        /// `--report` as parsed JSON, when the run was asked for one and wrote it.
        var report: [String: Any]?
        /// `--stats` bytes, when asked for and written.
        var stats: [UInt8]?

        func count(_ key: String) -> Int? { (report?[key] as? NSNumber).map { $0.intValue } }

        /// The five counts the backfill adds to the report, for one-line comparisons.
        var counts: [Int?] {
            ["valid_events", "counted_events", "filtered_out", "duplicates_removed", "bad_lines"].map(count)
        }
    }

    /// Writes `files` (name → contents) into a fresh scratch directory, runs `aggregate` with
    /// `arguments` followed by the files in the order given (`inputs` overrides that: `@name` is a
    /// scratch path), with `--computed-at` fixed and a report requested, and returns the result.
    static func run(_ arguments: [String], files: [(String, String)], inputs: [String]? = nil,
                    stats: Bool = false, stdin: String? = nil) throws -> Run {
        try ScratchDirectory.with { dir in
            for (name, text) in files { try dir.write("in/\(name)", text) }
            let operands = (inputs ?? files.map { "@in/\($0.0)" }).map {
                $0.hasPrefix("@") ? dir.path(String($0.dropFirst())) : $0
            }
            var words = ["aggregate", "--computed-at", fixedComputedAt, "--report", dir.path("report.json")]
            if stats { words += ["--stats", dir.path("stats.ndjson")] }
            let result = try RankingsBinary.run(words + arguments + operands, stdin: stdin.map { Data($0.utf8) })
            let report = try? ReportFile.object(at: dir.path("report.json"))
            let statsBytes = stats ? try? dir.read("stats.ndjson") : nil
            return Run(status: result.status, stdout: Array(result.stdout), stderr: result.stderrText,
                       report: report, stats: statsBytes)
        }
    }

    /// The exact bytes of a document: `hilarious` and `horrible` are (joke, count) in ranked
    /// order; totals are their sums unless given (they differ when a list is cut by `--top`).
    static func document(week: String = "all_time", hilarious: [(String, Int)], horrible: [(String, Int)],
                         totalHilarious: Int? = nil, totalHorrible: Int? = nil,
                         bounds: (String, String)? = nil) -> [UInt8] {
        func list(_ entries: [(String, Int)]) -> String {
            if entries.isEmpty { return "[]" }
            let rows = entries.enumerated().map { i, e in
                "    {\"joke_id\": \"\(e.0)\", \"count\": \(e.1), \"rank\": \(i + 1)}"
            }
            return "[\n" + rows.joined(separator: ",\n") + "\n  ]"
        }
        var text = "{\n  \"week_id\": \"\(week)\",\n"
        text += "  \"hilarious\": \(list(hilarious)),\n  \"horrible\": \(list(horrible)),\n"
        text += "  \"total_hilarious_ratings\": \(totalHilarious ?? hilarious.reduce(0) { $0 + $1.1 }),\n"
        text += "  \"total_horrible_ratings\": \(totalHorrible ?? horrible.reduce(0) { $0 + $1.1 }),\n"
        text += "  \"computed_at\": \"\(fixedComputedAt)\""
        if let bounds { text += ",\n  \"week_start\": \"\(bounds.0)\",\n  \"week_end\": \"\(bounds.1)\"" }
        return Array((text + "\n}\n").utf8)
    }
}
