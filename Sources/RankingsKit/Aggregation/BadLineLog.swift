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

/// The first bad lines of a piece of input, and how many there were in all.
///
/// Only `shownLimit` are kept: the merged report shows the first ten of the whole run, and
/// those are always among the first ten of each piece, whichever thread read it.
struct BadLineLog: Sendable {
    static let shownLimit = 10
    private(set) var first: [BadLine] = []
    private(set) var count = 0

    init() {}

    mutating func record(line: Int, reason: @autoclosure () -> String) {
        count += 1
        if first.count < Self.shownLimit { first.append(BadLine(line: line, reason: reason())) }
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
