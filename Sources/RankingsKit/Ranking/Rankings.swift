/// One entry of a leaderboard list.
public struct RankedJoke: Sendable, Equatable {
    /// The joke id's exact bytes.
    public var id: [UInt8]
    public var count: Int
    public var rank: Int
}

/// The two leaderboards the app shows, and the totals beside them.
public struct Rankings: Sendable, Equatable {
    public var hilarious: [RankedJoke]
    public var horrible: [RankedJoke]
    /// Every Hilarious / Horrible event, not only those of listed jokes.
    public var totalHilarious: Int
    public var totalHorrible: Int

    /// Entries per list accepted by `--top`.
    public static let topRange = 1...1000

    /// Lists and totals as they are, already ranked: a stored document read back.
    public init(hilarious: [RankedJoke], horrible: [RankedJoke], totalHilarious: Int, totalHorrible: Int) {
        self.hilarious = hilarious
        self.horrible = horrible
        self.totalHilarious = totalHilarious
        self.totalHorrible = totalHorrible
    }

    /// Ranks by count, highest first; ties go to the smaller id in byte order, so the result
    /// does not depend on the order of the input (the old function kept arrival order).
    public init(_ tally: Tally, top: Int) {
        var hilarious: [(id: [UInt8], count: Int)] = []
        var horrible: [(id: [UInt8], count: Int)] = []
        var totalHilarious = 0, totalHorrible = 0
        for e in 0..<tally.jokeCount {
            let c = tally.counts(e)
            totalHilarious += c.hilarious
            totalHorrible += c.horrible
            if c.hilarious > 0 { hilarious.append((tally.withID(e) { Array($0) }, c.hilarious)) }
            if c.horrible > 0 { horrible.append((tally.withID(e) { Array($0) }, c.horrible)) }
        }
        self.hilarious = Self.leaders(hilarious, top: top)
        self.horrible = Self.leaders(horrible, top: top)
        self.totalHilarious = totalHilarious
        self.totalHorrible = totalHorrible
    }

    static func leaders(_ jokes: [(id: [UInt8], count: Int)], top: Int) -> [RankedJoke] {
        let ordered = jokes.sorted { a, b in
            a.count != b.count ? a.count > b.count : a.id.lexicographicallyPrecedes(b.id)
        }
        return ordered.prefix(top).enumerated().map { RankedJoke(id: $1.id, count: $1.count, rank: $0 + 1) }
    }
}
