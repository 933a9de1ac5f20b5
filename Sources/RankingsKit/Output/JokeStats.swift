/// `--stats`: every joke's numbers, one NDJSON line per joke in ascending byte order of id,
/// for write-time counters on each joke and a community score beside a user's own.
public enum JokeStats {
    public static func ndjson(_ tally: Tally) -> [UInt8] {
        var w = JSONWriter()
        for (id, c) in tally.sortedJokes() where c.ratings > 0 {
            w.raw("{\"joke_id\": ")
            w.string(id)
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
        }
        return w.bytes
    }
}
