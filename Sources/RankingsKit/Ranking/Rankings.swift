/// One entry of a leaderboard list.
struct RankedJoke: Sendable, Equatable {
    /// The joke id's exact bytes.
    var id: [UInt8]
    var count: Int
    var rank: Int
}

/// The two leaderboards the app shows, and the totals beside them.
public struct Rankings: Sendable, Equatable {
    var hilarious: [RankedJoke]
    var horrible: [RankedJoke]
    /// Every Hilarious / Horrible event, not only those of listed jokes.
    var totalHilarious: Int
    var totalHorrible: Int

    /// Entries per list accepted by `--top`.
    public static let topRange = 1...1000

    /// Lists and totals as they are, already ranked: a stored document read back.
    init(hilarious: [RankedJoke], horrible: [RankedJoke], totalHilarious: Int, totalHorrible: Int) {
        self.hilarious = hilarious
        self.horrible = horrible
        self.totalHilarious = totalHilarious
        self.totalHorrible = totalHorrible
    }

    /// Ranks by count, highest first; ties go to the smaller id in byte order, so the result
    /// does not depend on the order of the input (the old function kept arrival order).
    init(_ tally: Tally, top: Int) {
        var totalHilarious = 0, totalHorrible = 0
        for e in 0..<tally.jokeCount {
            let c = tally.counts(e)
            totalHilarious += c.hilarious
            totalHorrible += c.horrible
        }
        self.hilarious = Self.leaders(Self.candidates(tally, top: top) { $0.hilarious }, top: top)
        self.horrible = Self.leaders(Self.candidates(tally, top: top) { $0.horrible }, top: top)
        self.totalHilarious = totalHilarious
        self.totalHorrible = totalHorrible
    }

    /// The top `top` jokes by `count`, ties by id: only their ids are copied, not one per joke
    /// (1 M distinct jokes copied 1 M ids, twice). Memory: 4 bytes per joke at the cut or above.
    static func candidates(_ tally: Tally, top: Int, count: (JokeCounts) -> Int) -> [(id: [UInt8], count: Int)] {
        var counts: [Int] = []
        for e in 0..<tally.jokeCount where count(tally.counts(e)) > 0 { counts.append(count(tally.counts(e))) }
        guard !counts.isEmpty else { return [] }
        counts.sort(by: >)
        let cut = counts[min(top, counts.count) - 1]
        var chosen: [UInt32] = []
        for e in 0..<tally.jokeCount where count(tally.counts(e)) >= cut { chosen.append(UInt32(e)) }
        // Ties at the cut are ordered by id here, through the tally's own copy of each id.
        chosen.sort { a, b in
            let x = count(tally.counts(Int(a))), y = count(tally.counts(Int(b)))
            if x != y { return x > y }
            return tally.withID(Int(a)) { p in tally.withID(Int(b)) { q in p.lexicographicallyPrecedes(q) } }
        }
        return chosen.prefix(top).map { e in (tally.withID(Int(e)) { Array($0) }, count(tally.counts(Int(e)))) }
    }

    static func leaders(_ jokes: [(id: [UInt8], count: Int)], top: Int) -> [RankedJoke] {
        let ordered = jokes.sorted { a, b in
            a.count != b.count ? a.count > b.count : a.id.lexicographicallyPrecedes(b.id)
        }
        return ordered.prefix(top).enumerated().map { RankedJoke(id: $1.id, count: $1.count, rank: $0 + 1) }
    }
}
