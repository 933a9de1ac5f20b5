/// The database migration's rule for one event, from the five-point scale to the binary one:
/// Hilarious becomes `5`, Horrible becomes `1`, and a neutral vote, which the binary scale
/// cannot express, is dropped.
enum ScaleMigration {
    enum Action: Equatable, Sendable {
        /// The rating is already spelled `5` or `1`: the line goes out byte for byte.
        case keep
        /// A Hilarious rating spelled any other way (`4`, `4.5`, `5.0`, `0.5e1`) becomes `5`.
        case rewriteToHilarious
        /// A Horrible rating spelled any other way (`2`, `1.5`, `1.0`, `1e0`) becomes `1`.
        case rewriteToHorrible
        /// A neutral vote (strictly between 2 and 4) leaves the export.
        case drop
    }

    /// What to do with an event whose last `rating` is the JSON number text `raw`, worth `value`.
    ///
    /// Only the exact text `5` or `1` counts as already migrated: the binary scale writes its
    /// ratings as those integers, so `5.0` is rewritten too, which makes the output uniform and
    /// the "rewritten" counts say how many lines changed.
    @inline(__always)
    static func action(rating raw: UnsafeBufferPointer<UInt8>, value: Double) -> Action {
        switch RatingKind(value) {
        case .neutral:
            return .drop
        case .hilarious:
            return raw.count == 1 && raw[0] == hilariousDigit ? .keep : .rewriteToHilarious
        case .horrible:
            return raw.count == 1 && raw[0] == horribleDigit ? .keep : .rewriteToHorrible
        }
    }

    /// The binary scale's two ratings, as the single bytes written in place of the old value.
    static let hilariousDigit = UInt8(ascii: "5")
    static let horribleDigit = UInt8(ascii: "1")
}
