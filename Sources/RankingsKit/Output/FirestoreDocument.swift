extension RankingsDocument {
    /// The document as a Firestore REST `Document` body, `{"fields": {...}}`, ready for a
    /// `PATCH` of `weekly_rankings/{week_id}`.
    ///
    /// Same keys in the same order as `json()`, each wrapped in its Firestore type: the app's
    /// decoder reads `computed_at` and the week's bounds as Timestamps and counts as integers,
    /// which a plain JSON upload would turn into a string and doubles. Integers are decimal
    /// strings, as proto3 JSON writes int64; strings use the same escaping as `json()`, so ids
    /// come back byte for byte. One list entry per line, so golden files diff well.
    func firestore() -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\n  \"fields\": {\n    \"week_id\": ")
        Self.stringValue(weekID, &w)
        w.raw(",\n    \"hilarious\": ")
        firestoreList(rankings.hilarious, &w)
        w.raw(",\n    \"horrible\": ")
        firestoreList(rankings.horrible, &w)
        w.raw(",\n    \"total_hilarious_ratings\": ")
        Self.integerValue(rankings.totalHilarious, &w)
        w.raw(",\n    \"total_horrible_ratings\": ")
        Self.integerValue(rankings.totalHorrible, &w)
        w.raw(",\n    \"computed_at\": ")
        Self.timestampValue(computedAt.rfc3339(), &w)
        if let weekBounds {
            w.raw(",\n    \"week_start\": ")
            Self.timestampValue(weekBounds.start.rfc3339(milliseconds: true), &w)
            w.raw(",\n    \"week_end\": ")
            Self.timestampValue(weekBounds.end.rfc3339(milliseconds: true), &w)
        }
        w.raw("\n  }\n}\n")
        return w.bytes
    }

    /// An empty list is `{"arrayValue": {}}`: proto3 JSON leaves out an empty repeated field,
    /// and that is how Firestore itself writes an empty array.
    private func firestoreList(_ entries: [RankedJoke], _ w: inout JSONWriter) {
        if entries.isEmpty { w.raw("{\"arrayValue\": {}}"); return }
        w.raw("{\"arrayValue\": {\"values\": [\n")
        for (i, entry) in entries.enumerated() {
            w.raw("      {\"mapValue\": {\"fields\": {\"joke_id\": ")
            w.raw("{\"stringValue\": ")
            w.string(entry.id)
            w.raw("}, \"count\": ")
            Self.integerValue(entry.count, &w)
            w.raw(", \"rank\": ")
            Self.integerValue(entry.rank, &w)
            w.raw(i + 1 < entries.count ? "}}},\n" : "}}}\n")
        }
        w.raw("    ]}}")
    }

    private static func stringValue(_ s: String, _ w: inout JSONWriter) {
        w.raw("{\"stringValue\": ")
        w.string(s)
        w.raw("}")
    }

    private static func integerValue(_ n: Int, _ w: inout JSONWriter) {
        w.raw("{\"integerValue\": \"\(n)\"}")
    }

    private static func timestampValue(_ text: String, _ w: inout JSONWriter) {
        w.raw("{\"timestampValue\": \"\(text)\"}")
    }
}
