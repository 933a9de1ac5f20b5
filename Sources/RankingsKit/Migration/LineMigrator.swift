/// Migrates the lines of one run's inputs: each line is checked exactly as `rankings aggregate`
/// checks it, then written unchanged, written with its rating replaced, or left out.
///
/// A kept line is copied from the reader's buffer in at most three pieces (before the rating,
/// the new digit, after it), so every byte that is not the rating's value survives as read:
/// spacing, key escapes, field order, earlier duplicate `rating` keys, a trailing CR.
struct LineMigrator: LineConsumer, ~Copyable {
    private(set) var counts = MigrationCounts()
    /// The first `BadLineLog.shownLimit` bad lines of the whole run, with the path of each.
    private(set) var shownBadLines: [(path: String, line: BadLine)] = []
    /// The input now being read, as bad-line messages name it; line numbers restart with it.
    var path = ""

    /// Nil for a dry run: lines are judged and counted, nothing is written.
    let output: BatchedOutput?
    private var validator = RecordValidator()

    init(output: BatchedOutput?) { self.output = output }

    @inline(__always)
    mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
        // The same rules, and so the same verdicts and messages, as `rankings aggregate`.
        let value: Double
        switch validator.judge(start) {
        case .blank: return // not an event: nothing to carry over to the binary scale
        case .bad(let why): return bad(number, why.message)
        case .valid(_, let rating): value = rating
        }
        // The scanner keeps the span of the *last* `rating`, the one that counts and the one to rewrite.
        let rating = validator.fields[.rating]!
        let action = ScaleMigration.action(rating: rating, value: value)
        counts.count(action)
        guard let output else { return }
        switch action {
        case .drop:
            return
        case .keep:
            // `end` holds the line's `\n` (the reader supplies one for a last line without it).
            output.append(UnsafeRawBufferPointer(start: start, count: end - start + 1))
        case .rewriteToHilarious, .rewriteToHorrible:
            let digit = action == .rewriteToHilarious ? ScaleMigration.hilariousDigit : ScaleMigration.horribleDigit
            let valueStart = rating.baseAddress!, valueEnd = valueStart + rating.count
            output.append(UnsafeRawBufferPointer(start: start, count: valueStart - start))
            withUnsafeBytes(of: digit) { output.append($0) }
            output.append(UnsafeRawBufferPointer(start: valueEnd, count: end - valueEnd + 1))
        }
    }

    mutating func overlongLine(number: Int, offset: Int64) {
        bad(number, BadRecord.overlong.message)
    }

    private mutating func bad(_ number: Int, _ reason: String) {
        counts.badLines += 1
        if shownBadLines.count < BadLineLog.shownLimit {
            shownBadLines.append((path, BadLine(line: number, reason: reason)))
        }
    }
}
