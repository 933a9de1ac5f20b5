/// What `rankings check` was asked to do, already parsed and checked.
public struct CheckOptions: Sendable {
    /// Documents in the order given; `-` is standard input.
    public var documents: [String] = []
    public var top = 10
    public var allowExtraKeys = false
    public var quiet = false
    /// `--format firestore`: each DOC is a Firestore REST Document body.
    public var format = DocumentFormat.json
    /// `--print-firestore`: the one DOC, once valid, goes to stdout as a Firestore body.
    public var printFirestore = false
    /// `--time-zone`: the zone whose clocks bound a week's document (nil: America/New_York).
    public var timeZone: IANAZone?

    public init() {}
}

/// `rankings check`: every document read and checked, its problems printed as
/// `DOC: $.path: problem` on stderr, and one exit status for the lot.
public enum CheckJob {
    /// The exit status: 0 when every document is valid; otherwise the status of the first
    /// document that could not be read (66 missing, unopenable or a directory; 74 a read
    /// error), since then the set's validity is unknown; otherwise 65 when any has a problem.
    public static func run(_ options: CheckOptions, stderr: (String) -> Void) -> Int32 {
        let checker = DocumentChecker(top: options.top, allowExtraKeys: options.allowExtraKeys, weekZone: options.timeZone)
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
            let (problems, zoneFailure) = check(bytes, with: checker, options.format)
            for problem in problems { stderr("\(name): \(problem)") }
            if let zoneFailure {
                stderr("rankings: error: \(name): \(zoneFailure.message)")
                unreadable.append(zoneFailure)
            } else if !problems.isEmpty {
                invalid += 1
            }
        }
        if !options.quiet { stderr(summary(total: options.documents.count, invalid: invalid, unreadable: unreadable.count)) }
        if let first = unreadable.first { return first.exitStatus }
        return invalid > 0 ? 65 : 0
    }

    /// `rankings check --print-firestore DOC`: DOC (JSON document or Firestore body) checked as
    /// `run` checks it and, when valid, written to stdout as the Firestore body `aggregate
    /// --format firestore` would have written: how a publish hook gets Firestore's types
    /// (integers, Timestamps) without knowing them. Nothing reaches stdout for an invalid DOC,
    /// so a hook piping it on never uploads half a check. Same exit statuses as `run`.
    public static func printFirestore(_ options: CheckOptions, output: JobOutput) throws(JobError) -> Int32 {
        guard options.documents.count == 1, let name = options.documents.first else {
            throw .usage("--print-firestore takes exactly one DOC")
        }
        // Extra keys would be dropped from the body without a word: refused instead.
        guard !options.allowExtraKeys else { throw .usage("--print-firestore cannot be used with --allow-extra-keys") }
        let bytes: [UInt8]
        do { bytes = try DocumentFile.read(name) } catch { throw .input(error) }
        let checker = DocumentChecker(top: options.top, weekZone: options.timeZone)
        let (problems, zoneFailure) = check(bytes, with: checker, options.format)
        for problem in problems { output.stderr("\(name): \(problem)") }
        if let zoneFailure {
            output.stderr("rankings: error: \(name): \(zoneFailure.message)")
            if !options.quiet { output.stderr(summary(total: 1, invalid: 0, unreadable: 1)) }
            return zoneFailure.exitStatus
        }
        if !options.quiet { output.stderr(summary(total: 1, invalid: problems.isEmpty ? 0 : 1, unreadable: 0)) }
        guard problems.isEmpty else { return 65 }
        guard let content = DocumentContent.read(bytes), let document = RankingsDocument(checked: content) else {
            throw .data("\(name): valid, but not readable as a rankings document (please report this)")
        }
        do { try output.stdout(document.firestore()) } catch { throw .output(error) }
        return 0
    }

    /// A document's problems, and apart from them the failure to read the zone a week's
    /// document is checked against (66, like a DOC that cannot be read: its validity is unknown).
    static func check(_ bytes: [UInt8], with checker: DocumentChecker, _ format: DocumentFormat) -> ([DocumentProblem], JobError?) {
        let all = format == .firestore ? checker.firestoreProblems(in: bytes) : checker.problems(in: bytes)
        guard let zone = all.first(where: { $0.unavailableZone != nil })?.unavailableZone else { return (all, nil) }
        let failure = JobError.input(.cannotOpen(path: IANAZone.databaseDirectory + "/" + zone,
                                                 reason: "the default zone for a week's document is not in the time zone database (give --time-zone)"))
        return (all.filter { $0.unavailableZone == nil }, failure)
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
