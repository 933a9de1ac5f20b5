/// The rankings document the app reads (`weekly_rankings/all_time`, or a week's), as JSON.
///
/// Exactly the keys the app decodes, in a fixed order and layout, one list entry per line,
/// so that documents diff well and golden files compare byte for byte.
struct RankingsDocument: Sendable {
    var weekID: String
    var rankings: Rankings
    var computedAt: Timestamp
    /// Bounds of a weekly document's ISO week; absent from the all-time document.
    var weekBounds: (start: Timestamp, end: Timestamp)?

    init(weekID: String = "all_time", rankings: Rankings, computedAt: Timestamp,
                weekBounds: (start: Timestamp, end: Timestamp)? = nil) {
        self.weekID = weekID
        self.rankings = rankings
        self.computedAt = computedAt
        self.weekBounds = weekBounds
    }

    func json() -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\n  \"week_id\": ")
        w.string(weekID)
        w.raw(",\n  \"hilarious\": ")
        list(rankings.hilarious, &w)
        w.raw(",\n  \"horrible\": ")
        list(rankings.horrible, &w)
        w.raw(",\n  \"total_hilarious_ratings\": ")
        w.int(rankings.totalHilarious)
        w.raw(",\n  \"total_horrible_ratings\": ")
        w.int(rankings.totalHorrible)
        w.raw(",\n  \"computed_at\": ")
        w.string(computedAt.rfc3339())
        if let weekBounds {
            w.raw(",\n  \"week_start\": ")
            w.string(weekBounds.start.rfc3339(milliseconds: true))
            w.raw(",\n  \"week_end\": ")
            w.string(weekBounds.end.rfc3339(milliseconds: true))
        }
        w.raw("\n}\n")
        return w.bytes
    }

    private func list(_ entries: [RankedJoke], _ w: inout JSONWriter) {
        if entries.isEmpty { w.raw("[]"); return }
        w.raw("[\n")
        for (i, entry) in entries.enumerated() {
            w.raw("    {\"joke_id\": ")
            w.string(entry.id)
            w.raw(", \"count\": ")
            w.int(entry.count)
            w.raw(", \"rank\": ")
            w.int(entry.rank)
            w.raw(i + 1 < entries.count ? "},\n" : "}\n")
        }
        w.raw("  ]")
    }
}
