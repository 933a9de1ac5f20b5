/// One bad line, where it was and why; `line` counts from 1 within its file.
struct BadLine: Sendable, Equatable {
    var line: Int
    var reason: String
    /// Counted in records of a non-line format (a managed export's output file), not in lines.
    var isRecord = false
    init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    /// `PATH:N: reason` for a line, `PATH:record N: reason` for a record.
    func message(in path: String) -> String {
        "\(path):\(isRecord ? "record " : "")\(line): \(reason)"
    }
}

/// The bad lines of a piece of input: the first `keep` of them, and how many there were in all.
///
/// The first `keep` bad lines of the whole run, in input order, are always among the first
/// `keep` of each piece, whichever thread read it, so merging the pieces' logs in input order
/// gives the run's first `keep` whatever the threads: stderr shows the first
/// `shownLimit`, `--report` lists all it keeps. Memory grows with the bad lines kept only.
struct BadLineLog: Sendable {
    static let shownLimit = 10
    /// At least `shownLimit`.
    let keep: Int
    private(set) var kept: [RefusedLine] = []
    private(set) var count = 0

    init(keep: Int = BadLineLog.shownLimit) { self.keep = max(keep, Self.shownLimit) }

    /// Whether the next bad line will be kept, so its `RefusedRecord` is worth working out.
    @inline(__always) var keepsNext: Bool { kept.count < keep }

    mutating func record(line: Int, reason: BadRecord, refused: RefusedRecord) {
        count += 1
        if keepsNext { kept.append(RefusedLine(line: line, reason: reason, record: refused)) }
    }
}

extension BadLineLog {
    /// Prints the bad lines a run shows, then how many more it had: one wording for every
    /// command that reads lines.
    static func report(_ shown: [(path: String, line: BadLine)], count: Int, to stderr: (String) -> Void) {
        for bad in shown { stderr(bad.line.message(in: bad.path)) }
        if count > shown.count {
            stderr("rankings: " + counted(count - shown.count, "more bad line", "more bad lines") + " not shown")
        }
    }
}
