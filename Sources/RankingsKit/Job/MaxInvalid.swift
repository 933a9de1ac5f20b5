/// `--max-invalid`: the bad lines a run tolerates before it fails (65), as a count (`5`) or as
/// a share of the records it read (`1%`, `0.5%`).
///
/// Records are valid events plus bad lines: blank lines are no records, and neither are the
/// documents of other collections left out nor the lines a later change file replaces. A share
/// is exact, never rounded up: `PERCENT%` tolerates ⌊PERCENT × records / 100⌋ bad lines, so
/// 10,000 records at `1%` tolerate 100 and the 101st fails the run, 999 at `0.5%` tolerate 4.
public enum MaxInvalid: Sendable, Equatable {
    case count(Int)
    case share(Percentage)

    /// `N` (a whole number from 0, read as before shares existed) or `PERCENT%` (0 to 100, at
    /// most six decimals); nil for anything else.
    public init?(_ text: String) {
        if text.hasSuffix("%") {
            guard let share = Percentage(String(text.dropLast())) else { return nil }
            self = .share(share)
        } else {
            guard let n = Int(text), n >= 0 else { return nil }
            self = .count(n)
        }
    }

    /// The most bad lines tolerated among `records` records.
    func tolerated(records: Int) -> Int {
        switch self {
        case .count(let n): n
        case .share(let share): Int(share.largestPart(of: Int64(records)))
        }
    }

    /// Whether `bad` bad lines among `records` records fail the run.
    func isExceeded(bad: Int, records: Int) -> Bool {
        switch self {
        case .count(let n): bad > n
        case .share(let share): share.isExceeded(by: Int64(bad), of: Int64(records))
        }
    }

    /// How many bad lines a run keeps in full for `--report`: all a run that succeeds can have,
    /// and one more, which is all a run that fails lists. A share is of records not yet read,
    /// so it keeps every one.
    var kept: Int {
        switch self {
        case .count(let n): n == .max ? .max : n + 1
        case .share: .max
        }
    }

    /// Why `bad` bad lines among `records` fail the run, for its message.
    func refusal(bad: Int, records: Int) -> String {
        switch self {
        case .count(let n):
            return counted(bad, "bad line", "bad lines") + ", more than --max-invalid \(n)"
        case .share(let share):
            return counted(bad, "bad line", "bad lines") + " of " + counted(records, "record", "records")
                + " read, more than --max-invalid \(share.text)% (\(tolerated(records: records)) tolerated)"
        }
    }
}
