/// The spec's input and ranking rules, restated as plainly as possible, as the oracle the
/// end-to-end tests compare `rankings aggregate` against.
///
/// Joke ids are `[UInt8]` throughout: Swift `String` compares by canonical equivalence, which would
/// merge ids the spec says are different (precomposed `é` versus `e` + U+0301).
struct ReferenceAggregator {
    enum Kind: Equatable, Sendable { case hilarious, horrible, neutral }

    /// What one line of input amounts to.
    enum Outcome: Equatable, Sendable {
        case blank
        case malformed
        case invalidRecord
        case event(id: [UInt8], kind: Kind)

        var isBad: Bool { self == .malformed || self == .invalidRecord }
    }

    struct Entry: Equatable, Sendable {
        var id: [UInt8]
        var count: Int
    }

    /// The counts `--report` promises, plus the line numbers of bad lines for stderr checks.
    struct Summary: Equatable, Sendable {
        var validEvents = 0
        var hilarious = 0
        var horrible = 0
        var neutral = 0
        var badLines = 0
        var distinctJokes = 0
        var inputBytes = 0
    }

    private(set) var summary = Summary()
    /// Every bad line as (path, line number, outcome), in input order.
    private(set) var badLines: [(path: String, line: Int, outcome: Outcome)] = []
    private var hilariousCounts: [[UInt8]: Int] = [:]
    private var horribleCounts: [[UInt8]: Int] = [:]
    private var seen: Set<[UInt8]> = []

    /// Feeds one whole input file (or stdin's bytes) named `path` as the command line names it.
    mutating func add(file bytes: [UInt8], path: String) {
        summary.inputBytes += bytes.count
        for (number, line) in Self.lines(of: bytes) {
            let outcome = Self.classify(line)
            switch outcome {
            case .blank:
                break
            case .malformed, .invalidRecord:
                summary.badLines += 1
                badLines.append((path, number, outcome))
            case .event(let id, let kind):
                summary.validEvents += 1
                if seen.insert(id).inserted { summary.distinctJokes += 1 }
                switch kind {
                case .hilarious: summary.hilarious += 1; hilariousCounts[id, default: 0] += 1
                case .horrible: summary.horrible += 1; horribleCounts[id, default: 0] += 1
                case .neutral: summary.neutral += 1
                }
            }
        }
    }

    func hilariousList(top: Int) -> [Entry] { Self.ranked(hilariousCounts, top: top) }
    func horribleList(top: Int) -> [Entry] { Self.ranked(horribleCounts, top: top) }

    /// The document the spec's decided layout prescribes, byte for byte.
    func document(top: Int, computedAt: String) -> [UInt8] {
        ReferenceDocument.render(hilarious: hilariousList(top: top), horrible: horribleList(top: top),
                                 totalHilarious: summary.hilarious, totalHorrible: summary.horrible,
                                 computedAt: computedAt)
    }

    /// Splits a file into numbered lines: one leading BOM dropped, `\n` separates, one `\r` before
    /// each `\n` dropped, and a final empty piece (after a trailing `\n`) is not a line.
    static func lines(of file: [UInt8]) -> [(Int, [UInt8])] {
        var bytes = file[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if pieces.last?.isEmpty == true { pieces.removeLast() }
        let terminatedCount = bytes.last == 0x0A ? pieces.count : pieces.count - 1
        return pieces.enumerated().map { index, piece in
            var line = piece
            if index < terminatedCount, line.last == 0x0D { line.removeLast() }
            return (index + 1, line)
        }
    }

    static func classify(_ line: [UInt8]) -> Outcome {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
        guard let top = try? ReferenceJSON.parse(line) else { return .malformed }
        guard case .object(let members) = top else { return .invalidRecord }
        // Later duplicates win, so the last match is the one that counts.
        let jokeID = members.last { $0.key == plainKey("joke_id") }?.value
        let rating = members.last { $0.key == plainKey("rating") }?.value
        // Firestore cannot query a joke id of 1,500 bytes or more by equality: not a vote.
        guard case .string(let id)? = jokeID, id.isValidUnicode, !id.bytes.isEmpty, id.bytes.count < 1500,
              case .number(let value)? = rating, value >= 1, value <= 5 else { return .invalidRecord }
        let kind: Kind = value >= 4 ? .hilarious : value <= 2 ? .horrible : .neutral
        return .event(id: id.bytes, kind: kind)
    }

    private static func plainKey(_ s: String) -> ReferenceJSON.DecodedString {
        .init(bytes: Array(s.utf8), isValidUnicode: true)
    }

    private static func ranked(_ counts: [[UInt8]: Int], top: Int) -> [Entry] {
        let sorted = counts.map { Entry(id: $0.key, count: $0.value) }.sorted { a, b in
            a.count != b.count ? a.count > b.count : a.id.lexicographicallyPrecedes(b.id)
        }
        return Array(sorted.prefix(top))
    }
}
