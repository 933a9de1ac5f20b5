/// Renders the ranking document in the layout decided for issue 2, independently of RankingsKit,
/// so the end-to-end tests can demand exact bytes.
enum ReferenceDocument {
    static func render(hilarious: [ReferenceAggregator.Entry], horrible: [ReferenceAggregator.Entry],
                       totalHilarious: Int, totalHorrible: Int, computedAt: String) -> [UInt8] {
        var out = "{\n  \"week_id\": \"all_time\",\n".utf8.map { $0 }
        out += list(named: "hilarious", hilarious)
        out += list(named: "horrible", horrible)
        out += Array("  \"total_hilarious_ratings\": \(totalHilarious),\n".utf8)
        out += Array("  \"total_horrible_ratings\": \(totalHorrible),\n".utf8)
        out += Array("  \"computed_at\": \"\(computedAt)\"\n}\n".utf8)
        return out
    }

    private static func list(named name: String, _ entries: [ReferenceAggregator.Entry]) -> [UInt8] {
        if entries.isEmpty { return Array("  \"\(name)\": [],\n".utf8) }
        var out = Array("  \"\(name)\": [\n".utf8)
        for (index, entry) in entries.enumerated() {
            out += Array("    {\"joke_id\": ".utf8) + quoted(entry.id)
            out += Array(", \"count\": \(entry.count), \"rank\": \(index + 1)}".utf8)
            out += Array((index == entries.count - 1 ? "\n" : ",\n").utf8)
        }
        return out + Array("  ],\n".utf8)
    }

    /// The decided escaping: only what JSON requires, plus U+2028/U+2029 so the document is also
    /// safe to paste into JavaScript; everything else stays raw UTF-8.
    static func quoted(_ id: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        var i = 0
        while i < id.count {
            let b = id[i]
            switch b {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x08: out += Array("\\b".utf8)
            case 0x0C: out += Array("\\f".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            case 0xE2 where i + 2 < id.count && id[i + 1] == 0x80 && (id[i + 2] == 0xA8 || id[i + 2] == 0xA9):
                out += Array((id[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                i += 2
            default: out.append(b)
            }
            i += 1
        }
        out.append(UInt8(ascii: "\""))
        return out
    }
}
