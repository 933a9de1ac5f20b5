/// Everything the job knows about one joke after a run.
public struct JokeCounts: Sendable, Equatable {
    public var hilarious = 0
    public var horrible = 0
    public var neutral = 0
    /// Sum of the ratings in units of 2^-52. Every double in 1...5 is a whole multiple of
    /// 2^-52, so this sum is exact, and so the mean does not depend on the order in which
    /// threads added the events up.
    public var ratingSum: UInt128 = 0

    public init() {}

    public var ratings: Int { hilarious + horrible + neutral }

    /// The arithmetic mean of the ratings (0 when there are none).
    public var meanRating: Double {
        let n = ratings
        guard n > 0 else { return 0 }
        // Whole part and remainder keep the division exact until the final rounding.
        let whole = ratingSum / UInt128(n)
        let rest = ratingSum % UInt128(n)
        return (Double(whole) + Double(rest) / Double(n)) / JokeCounts.scale
    }

    static let scale = 4_503_599_627_370_496.0 // 2^52

    @inline(__always) public mutating func add(_ rating: Double) {
        switch RatingKind(rating) {
        case .hilarious: hilarious &+= 1
        case .horrible: horrible &+= 1
        case .neutral: neutral &+= 1
        }
        ratingSum &+= UInt128(UInt64(rating * JokeCounts.scale))
    }

    public mutating func merge(_ other: JokeCounts) {
        hilarious += other.hilarious
        horrible += other.horrible
        neutral += other.neutral
        ratingSum += other.ratingSum
    }
}
