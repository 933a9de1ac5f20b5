/// `--stats`: every joke's numbers, one NDJSON line per joke in ascending byte order of id,
/// for write-time counters on each joke and a community score beside a user's own.
enum JokeStats {
    /// Lines are handed to `write` in batches of about this many bytes: the file streams out,
    /// so its size, which grows with the jokes, is never held in memory.
    static let batchSize = 256 << 10

    static func write(_ tally: Tally, to write: ([UInt8]) throws(OutputError) -> Void) throws(OutputError) {
        var w = JSONWriter()
        w.bytes.reserveCapacity(batchSize + 4096)
        for entry in tally.sortedEntries() {
            let e = Int(entry)
            let c = tally.counts(e)
            guard c.ratings > 0 else { continue }
            w.raw("{\"joke_id\": ")
            tally.withID(e) { w.string(Array($0)) }
            w.raw(", \"hilarious\": ")
            w.int(c.hilarious)
            w.raw(", \"horrible\": ")
            w.int(c.horrible)
            w.raw(", \"neutral\": ")
            w.int(c.neutral)
            w.raw(", \"ratings\": ")
            w.int(c.ratings)
            w.raw(", \"mean_rating\": ")
            w.double(c.meanRating)
            w.raw("}\n")
            if w.bytes.count >= batchSize {
                try write(w.bytes)
                w.bytes.removeAll(keepingCapacity: true)
            }
        }
        if !w.bytes.isEmpty { try write(w.bytes) }
    }
}
