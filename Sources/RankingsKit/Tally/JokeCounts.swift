/// Everything the job knows about one joke after a run.
struct JokeCounts: Sendable, Equatable {
    var hilarious = 0
    var horrible = 0
    var neutral = 0
    /// Sum of the ratings in units of 2^-52. Every double in 1...5 is a whole multiple of
    /// 2^-52, so this sum is exact, and so the mean does not depend on the order in which
    /// threads added the events up.
    var ratingSum: UInt128 = 0

    init() {}

    var ratings: Int { hilarious + horrible + neutral }

    /// The arithmetic mean of the ratings (0 when there are none).
    /// Correctly rounded: the exact sum divided by the count, rounded once to the nearest double.
    var meanRating: Double {
        let n = UInt128(ratings)
        guard n > 0, ratingSum > 0 else { return 0 }
        // Shift the sum so the quotient has at least 65 bits (room for rounding), divide, and
        // fold a non-zero remainder into the lowest bit as a sticky bit: converting that
        // quotient to Double then rounds exactly as the true quotient would.
        let sumBits = ratingSum.bitWidth - ratingSum.leadingZeroBitCount
        let countBits = n.bitWidth - n.leadingZeroBitCount
        let shift = max(0, 65 + countBits - sumBits)
        let numerator = ratingSum << shift
        var quotient = numerator / n
        if numerator % n != 0 { quotient |= 1 }
        return Double(sign: .plus, exponent: -(shift + 52), significand: Double(quotient))
    }

    static let scale = 4_503_599_627_370_496.0 // 2^52

    @inline(__always) mutating func add(_ rating: Double) {
        // Without branches: which list a vote counts for is as good as random from one
        // event to the next, and a mispredicted branch costs more than three adds.
        let kind = RatingKind(rating)
        hilarious &+= kind == .hilarious ? 1 : 0
        horrible &+= kind == .horrible ? 1 : 0
        neutral &+= kind == .neutral ? 1 : 0
        ratingSum &+= UInt128(UInt64(rating * JokeCounts.scale))
    }

    mutating func merge(_ other: JokeCounts) {
        hilarious += other.hilarious
        horrible += other.horrible
        neutral += other.neutral
        ratingSum += other.ratingSum
    }
}
