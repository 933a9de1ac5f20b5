/// A valid all-time document as ordered raw JSON fragments, so that each checker test changes
/// exactly one thing and states the problem that one change causes.
struct CheckDocumentBuilder {
    var fields: [(key: String, raw: String)] = [
        ("week_id", "\"all_time\""),
        ("hilarious", "[{\"joke_id\": \"a\", \"count\": 3, \"rank\": 1}, {\"joke_id\": \"b\", \"count\": 2, \"rank\": 2}]"),
        ("horrible", "[{\"joke_id\": \"a\", \"count\": 1, \"rank\": 1}]"),
        ("total_hilarious_ratings", "7"),
        ("total_horrible_ratings", "1"),
        ("computed_at", "\"2026-02-18T05:00:00Z\""),
    ]

    /// Replaces the value of `key`, or adds it at the end when it is not there.
    func with(_ key: String, _ raw: String) -> CheckDocumentBuilder {
        var copy = self
        if let i = copy.fields.firstIndex(where: { $0.key == key }) {
            copy.fields[i].raw = raw
        } else {
            copy.fields.append((key, raw))
        }
        return copy
    }

    func without(_ key: String) -> CheckDocumentBuilder {
        var copy = self
        copy.fields.removeAll { $0.key == key }
        return copy
    }

    /// A weekly document: the base plus its bounds (2026-W07 on New York's clocks).
    var weekly: CheckDocumentBuilder {
        with("week_id", "\"2026-W07\"").bounds("2026-02-09T05:00:00.000Z", "2026-02-16T04:59:59.999Z")
    }

    func bounds(_ start: String, _ end: String) -> CheckDocumentBuilder {
        with("week_start", "\"\(start)\"").with("week_end", "\"\(end)\"")
    }

    var json: String {
        "{" + fields.map { "\"\($0.key)\": \($0.raw)" }.joined(separator: ", ") + "}"
    }

    /// One list of entries given as (id, count, rank).
    static func list(_ entries: [(String, String, String)]) -> String {
        "[" + entries.map { "{\"joke_id\": \"\($0.0)\", \"count\": \($0.1), \"rank\": \($0.2)}" }.joined(separator: ", ") + "]"
    }
}
