/// Decides whether a document is one the app's decoder accepts: the rankings document that
/// `rankings aggregate` writes, or one made some other way that should read the same.
///
/// Every problem is reported, not only the first, in document order, so one run of a CI job
/// shows everything there is to fix.
public struct DocumentChecker: Sendable {
    /// Most entries a list may have, as `--top` (`Rankings.topRange`).
    var top: Int
    /// Accept keys beyond the ones the app decodes (top level and list entries alike).
    var allowExtraKeys: Bool
    /// The zone whose clocks bound a week's document (`--time-zone`); nil for America/New_York,
    /// read from the tz database the first time a week's document needs it.
    var weekZone: IANAZone?

    /// Four times the 1 MiB a Firestore document may hold, and far beyond a full document (two
    /// lists of 1,000 entries take about 150 KB), so a bigger input is refused unread rather
    /// than parsed into memory.
    public static let maximumSize = 4 << 20

    public init(top: Int = 10, allowExtraKeys: Bool = false, weekZone: IANAZone? = nil) {
        self.top = top
        self.allowExtraKeys = allowExtraKeys
        self.weekZone = weekZone
    }

    /// The document's problems; empty when it is valid.
    public func problems(in document: [UInt8]) -> [DocumentProblem] {
        if document.count > Self.maximumSize {
            return [DocumentProblem(.root, "larger than \(Self.maximumSize) bytes, too large for a rankings document",
                                    at: 0)]
        }
        do {
            return problems(in: try JSONParser.parse(document))
        } catch {
            return [DocumentProblem(.root, "invalid JSON: \(error.reason) at " + TextPosition.describe(error.offset, in: document), at: error.offset)]
        }
    }

    func problems(in document: JSONValue) -> [DocumentProblem] {
        var log = ProblemLog()
        log.add(DuplicateKeys.problems(in: document))
        checkTopLevel(document, &log)
        return log.inDocumentOrder
    }

    /// The content rules alone, without the duplicate-key check: for a document converted from
    /// another form (a Firestore body), whose duplicates were found in its own terms.
    func contentProblems(in document: JSONValue) -> [DocumentProblem] {
        var log = ProblemLog()
        checkTopLevel(document, &log)
        return log.inDocumentOrder
    }

    static let topLevelKeys = ["week_id", "hilarious", "horrible", "total_hilarious_ratings", "total_horrible_ratings",
                               "computed_at", "week_start", "week_end", "snapshot_read_time"]

    private func checkTopLevel(_ document: JSONValue, _ log: inout ProblemLog) {
        guard case .object(let members) = document.kind else {
            log.add(.root, "expected an object, found \(document.summary)", at: document.offset)
            return
        }
        let fields = ObjectFields(document, members: members, path: .root, known: Self.topLevelKeys,
                                  allowExtraKeys: allowExtraKeys, log: &log)
        // A Firestore body checked as a JSON document: name the forgotten flag, as a JSON document
        // checked with --format firestore is told to drop it (FirestoreBody).
        let body = members.contains { $0.key == Array("fields".utf8) }
        let note = body ? "this looks like a Firestore Document body: check it with --format firestore" : nil
        let weekID = fields.required("week_id", &log, note: note).flatMap { log.nonEmptyString($0, fields.path.member("week_id")) }
        let hilariousSum = fields.required("hilarious", &log).flatMap { checkList($0, .root.member("hilarious"), &log) }
        let horribleSum = fields.required("horrible", &log).flatMap { checkList($0, .root.member("horrible"), &log) }
        checkTotal("total_hilarious_ratings", of: "hilarious", sum: hilariousSum, fields, &log)
        checkTotal("total_horrible_ratings", of: "horrible", sum: horribleSum, fields, &log)
        if let computedAt = fields.required("computed_at", &log) {
            _ = log.timestamp(computedAt, .root.member("computed_at"))
        }
        // The readTime of the snapshot the board was made from, which rankings-night writes into
        // Firestore's document so that an older night's board never replaces a newer one's.
        if let readTime = fields.optional("snapshot_read_time") {
            _ = log.timestamp(readTime, .root.member("snapshot_read_time"))
        }
        checkWeekBounds(fields, weekID: weekID, &log)
    }

    /// A total counts every rating of its kind, listed joke or not, so it is at least the sum
    /// of its list's counts (when the list could be read).
    private func checkTotal(_ key: String, of list: String, sum: Int?, _ fields: ObjectFields, _ log: inout ProblemLog) {
        let path = JSONPath.root.member(key)
        guard let value = fields.required(key, &log), let total = log.integer(value, path, atLeast: 0) else { return }
        if let sum, total < sum {
            log.add(path, "\(total) is less than the sum of the counts in \(JSONPath.root.member(list)) (\(sum))",
                    at: value.offset)
        }
    }
}
