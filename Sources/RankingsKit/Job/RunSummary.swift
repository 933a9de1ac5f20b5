/// The numbers a run reports: on stderr as one line, and with `--report` as JSON.
struct RunSummary: Sendable, Equatable {
    /// Valid records read, before filters and deduplication.
    var validEvents = 0
    /// Events that made it into the tally: hilarious + horrible + neutral.
    var countedEvents = 0
    var filteredOut = 0
    var duplicatesRemoved = 0
    var hilarious = 0
    var horrible = 0
    var neutral = 0
    var badLines = 0
    /// Documents or entities of other collections (typed lines, managed exports): not events,
    /// not bad.
    var leftOutDocuments = 0
    /// Lines of layered night folders that a later change file replaces: not events, not bad.
    var replacedLines = 0
    var distinctJokes = 0
    var inputBytes: Int64 = 0
    var seconds = 0.0
    /// 0 when the document was written, 65 when the data was rejected.
    var exitStatus: Int32 = 0

    init() {}

    var line: String {
        var text = "rankings: " + counted(validEvents, "event", "events")
            + " (\(hilarious) hilarious, \(horrible) horrible, \(neutral) neutral"
        if filteredOut > 0 { text += ", \(filteredOut) left out by filters" }
        if duplicatesRemoved > 0 { text += ", " + counted(duplicatesRemoved, "duplicate", "duplicates") + " removed" }
        if leftOutDocuments > 0 {
            text += ", " + counted(leftOutDocuments, "document", "documents") + " of other collections left out"
        }
        if replacedLines > 0 {
            text += ", " + counted(replacedLines, "line", "lines") + " replaced by later change files"
        }
        return text + "), " + counted(badLines, "bad line", "bad lines") + ", " + counted(distinctJokes, "joke", "jokes")
            + ", " + counted(inputBytes, "byte", "bytes") + " in \(format3(seconds)) s"
    }

    /// The report: the counts, then `refused`, one object per bad line in input order (each on
    /// a line of its own), as docs/aggregate.md shows it. Handed to `write` in batches of about
    /// `JokeStats.batchSize` bytes, so a report of many bad lines is never held whole.
    func writeReport(refused: [RunRefusal], to write: ([UInt8]) throws(OutputError) -> Void) throws(OutputError) {
        var w = JSONWriter()
        w.bytes.reserveCapacity(JokeStats.batchSize + 4096)
        w.raw("{\n")
        let fields: [(String, String)] = [
            ("valid_events", String(validEvents)), ("counted_events", String(countedEvents)),
            ("filtered_out", String(filteredOut)), ("duplicates_removed", String(duplicatesRemoved)),
            ("hilarious", String(hilarious)),
            ("horrible", String(horrible)), ("neutral", String(neutral)), ("bad_lines", String(badLines)),
            ("left_out_documents", String(leftOutDocuments)), ("replaced_lines", String(replacedLines)),
            ("distinct_jokes", String(distinctJokes)), ("input_bytes", String(inputBytes)),
            ("seconds", format3(seconds)), ("exit_status", String(exitStatus)),
        ]
        for (key, value) in fields {
            w.raw("  ")
            w.string(key)
            w.raw(": " + value + ",\n")
        }
        w.raw("  \"refused\": [")
        for (i, bad) in refused.enumerated() {
            w.raw(i == 0 ? "\n    " : ",\n    ")
            Self.write(bad, to: &w)
            if w.bytes.count >= JokeStats.batchSize {
                try write(w.bytes)
                w.bytes.removeAll(keepingCapacity: true)
            }
        }
        w.raw(refused.isEmpty ? "]\n}\n" : "\n  ]\n}\n")
        try write(w.bytes)
    }


    /// `{"input": …, "line": …, "document": …, "reason": …, "joke_id": …, "firestore_kind": …}`.
    private static func write(_ bad: RunRefusal, to w: inout JSONWriter) {
        func optional(_ bytes: [UInt8]?) {
            if let bytes { w.string(bytes) } else { w.raw("null") }
        }
        w.raw("{\"input\": ")
        w.string(bad.path)
        w.raw(", \"line\": ")
        w.int(bad.line)
        w.raw(", \"document\": ")
        optional(bad.record.document)
        w.raw(", \"reason\": ")
        w.string(bad.reason.message)
        w.raw(", \"joke_id\": ")
        optional(bad.record.jokeID)
        w.raw(", \"firestore_kind\": ")
        if let kind = bad.record.kind { w.string(kind.name) } else { w.raw("null") }
        w.raw("}")
    }
}

/// Seconds with three decimals, without Foundation's locale-dependent formatting.
func format3(_ x: Double) -> String {
    let millis = Int64((max(x, 0) * 1000).rounded())
    let frac = String(millis % 1000)
    return "\(millis / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
}
