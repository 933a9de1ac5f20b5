/// What `rankings check` was asked to do, already parsed and checked.
public struct CheckOptions: Sendable {
    /// Documents in the order given; `-` is standard input.
    public var documents: [String] = []
    public var top = 10
    public var allowExtraKeys = false
    public var quiet = false
    /// `--format firestore`: each DOC is a Firestore REST Document body.
    public var format = DocumentFormat.json

    public init() {}
}

/// `rankings check`: every document read and checked, its problems printed as
/// `DOC: $.path: problem` on stderr, and one exit status for the lot.
public enum CheckJob {
    /// The exit status: 0 when every document is valid; otherwise the status of the first
    /// document that could not be read (66 missing, unopenable or a directory; 74 a read
    /// error), since then the set's validity is unknown; otherwise 65 when any has a problem.
    public static func run(_ options: CheckOptions, stderr: (String) -> Void) -> Int32 {
        let checker = DocumentChecker(top: options.top, allowExtraKeys: options.allowExtraKeys)
        var unreadable: [JobError] = []
        var invalid = 0
        for name in options.documents {
            let bytes: [UInt8]
            do {
                bytes = try DocumentFile.read(name)
            } catch {
                let failure = JobError.input(error)
                stderr("rankings: error: \(failure.message)")
                unreadable.append(failure)
                continue
            }
            let problems = options.format == .firestore ? checker.firestoreProblems(in: bytes) : checker.problems(in: bytes)
            if !problems.isEmpty { invalid += 1 }
            for problem in problems { stderr("\(name): \(problem)") }
        }
        if !options.quiet { stderr(summary(total: options.documents.count, invalid: invalid, unreadable: unreadable.count)) }
        if let first = unreadable.first { return first.exitStatus }
        return invalid > 0 ? 65 : 0
    }

    /// One line for CI logs: `rankings: 3 documents checked, all valid`, or the counts.
    static func summary(total: Int, invalid: Int, unreadable: Int) -> String {
        let documents = total == 1 ? "1 document" : "\(total) documents"
        if invalid == 0 && unreadable == 0 { return "rankings: \(documents) checked, all valid" }
        var parts = ["\(total - invalid - unreadable) valid", "\(invalid) invalid"]
        if unreadable > 0 { parts.append("\(unreadable) unreadable") }
        return "rankings: \(documents) checked: " + parts.joined(separator: ", ")
    }
}
