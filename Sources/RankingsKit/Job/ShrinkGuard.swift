import Glibc

/// A percentage from 0 to 100 as an option spells it (`1`, `0.5`, `2.25`), kept as an exact
/// count of millionths of a percent, so "exactly PERCENT" and "just over" are decided without
/// rounding.
public struct Percentage: Sendable, Equatable {
    public static let decimals = 6
    static let scale: Int64 = 1_000_000
    let micropercent: Int64
    /// As given on the command line, for messages.
    let text: String

    /// `0` to `100`, with at most six decimals; nil for anything else (`-1`, `.5`, `1.`,
    /// `1e2`, `101`).
    public init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let digits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
        guard digits(parts[0]), parts[0].count <= 3 else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard parts.count == 1 || (digits(parts[1]) && fraction.count <= Self.decimals) else { return nil }
        fraction += String(repeating: "0", count: Self.decimals - fraction.count)
        guard let whole = Int64(parts[0]), let part = Int64(fraction) else { return nil }
        micropercent = whole * Self.scale + part
        guard micropercent <= 100 * Self.scale else { return nil }
        self.text = text
    }

    /// Whether `part` is more than this share of `whole`, exactly: part × 100 > PERCENT × whole.
    func isExceeded(by part: Int64, of whole: Int64) -> Bool {
        Int128(part) * 100 * Int128(Self.scale) > Int128(micropercent) * Int128(whole)
    }

    /// The most of `whole` within this share: ⌊PERCENT × whole / 100⌋, so that `isExceeded`
    /// holds from one more.
    func largestPart(of whole: Int64) -> Int64 {
        Int64(Int128(micropercent) * Int128(whole) / (100 * Int128(Self.scale)))
    }
}

/// `--max-drop PERCENT`: the largest fall, in percent of the old total, that a run may make in
/// `total_hilarious_ratings + total_horrible_ratings` of the document it replaces.
public struct MaxDrop: Sendable, Equatable {
    public static let decimals = Percentage.decimals
    let share: Percentage
    var text: String { share.text }

    /// `0` to `100`, with at most six decimals (`1`, `0.5`, `2.25`); nil for anything else.
    public init?(_ text: String) {
        guard let share = Percentage(text) else { return nil }
        self.share = share
    }

    /// Whether going from `old` to `new` loses more than the allowed share of `old`.
    func exceeded(old: Int64, new: Int64) -> Bool {
        new < old && share.isExceeded(by: old - new, of: old)
    }
}

/// Refuses to replace the document at `--output` with one that has lost votes.
///
/// All-time totals only grow in normal operation, so a large fall means a half-written export
/// or an exporter pointed at the wrong place, and the app would show the smaller, wrong
/// leaderboard. Only a document for the same `week_id` is compared: a weekly run replacing the
/// all-time document, or the reverse, is a different leaderboard, not a shrunken one.
enum ShrinkGuard {
    /// The reason to refuse the run (status 65), or nil to go ahead. `warn` hears why the old
    /// document could not be compared.
    static func refusal(replacing path: String, weekID: String, hilarious: Int, horrible: Int,
                               maxDrop: MaxDrop, warn: (String) -> Void) -> String? {
        let old: (weekID: [UInt8], total: Int64)
        switch previous(path) {
        case .absent:
            return nil
        case .unusable(let why):
            // A corrupt document must not block every night to come; the new one replaces it.
            warn("rankings: warning: --max-drop: cannot compare with \(path) (\(why)); replacing it")
            return nil
        case .document(let id, let total):
            old = (id, total)
        }
        let new = Int64(hilarious + horrible)
        guard old.weekID == Array(weekID.utf8), maxDrop.exceeded(old: old.total, new: new) else { return nil }
        // Rounded up, so a refused drop never reads as the PERCENT that would have been allowed.
        let scaled = Int128(old.total - new) * 10_000
        let hundredths = (scaled + Int128(old.total) - 1) / Int128(old.total)
        let percent = "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
        return "--max-drop \(maxDrop.text): the new document has \(new) ratings (total_hilarious_ratings + "
            + "total_horrible_ratings), \(percent)% fewer than the \(old.total) in \(path) (week_id \(weekID)); "
            + "nothing written. If the drop is real, see \"Accepting a drop\" in rankings(1)"
    }

    enum Previous {
        case absent
        case unusable(String)
        case document(weekID: [UInt8], total: Int64)
    }

    static func previous(_ path: String) -> Previous {
        // The run refused a target that is not a regular file before reading anything
        // (`AtomicFile.refusal`); one put there since is opened without blocking (a FIFO with
        // no writer would hold `open` and `read` for ever) and checked on the descriptor. It
        // holds no earlier document: the run's rename replaces it.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            return errno == ENOENT ? .absent : .unusable(String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .unusable(String(cString: strerror(errno))) }
        guard st.st_mode & S_IFMT == S_IFREG else { return .absent }
        let bytes: [UInt8]
        do {
            // One byte past the limit at most: enough to see "too large". (O_NONBLOCK does
            // nothing to a regular file's reads.)
            bytes = try FileDescriptor.readAll(fd, limit: DocumentChecker.maximumSize)
        } catch {
            return .unusable(error.reason)
        }
        if bytes.count > DocumentChecker.maximumSize { return .unusable("larger than a rankings document") }
        // Either format reads back the same: a `--format firestore` body is unwrapped to the
        // document's shape, so switching formats does not disarm the guard.
        let root: JSONValue
        do { root = try DocumentContent.parse(bytes) } catch {
            switch error {
            case .notJSON(let syntax): return .unusable("not JSON: \(syntax.reason) at byte \(syntax.offset)")
            case .brokenTyping: return .unusable("a Firestore body with broken typing")
            }
        }
        guard case .object(let members) = root.kind else { return .unusable("not a JSON object") }
        // Of duplicate keys the last counts, as `rankings check` reads them.
        let fields = ObjectFields.lastByKey(members).mapValues(\.kind)
        guard case .string(let weekID)? = fields[Array("week_id".utf8)] else { return .unusable("no string week_id") }
        var total: Int64 = 0
        for key in ["total_hilarious_ratings", "total_horrible_ratings"] {
            guard case .number(let text)? = fields[Array(key.utf8)],
                  text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let n = Int64(String(decoding: text, as: UTF8.self)) else {
                return .unusable("\(key) is not a whole number")
            }
            let (sum, overflow) = total.addingReportingOverflow(n)
            if overflow { return .unusable("totals too large") }
            total = sum
        }
        return .document(weekID: weekID, total: total)
    }
}
