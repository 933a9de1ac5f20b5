import Glibc

/// What `rankings aggregate` was asked to do, already parsed and checked.
public struct AggregateOptions: Sendable {
    public var inputs: [String] = []
    public var output: String?
    public var top = 10
    public var computedAt: Timestamp
    public var maxInvalid = MaxInvalid.count(0)
    public var allowEmpty = false
    public var reportPath: String?
    public var quiet = false
    public var threads: Int = AggregateOptions.availableCores
    /// `--as-of`, `--since`, `--week`, `--dedupe`.
    public var selection = EventSelection()
    /// With `--week`: the week, and the zone whose clocks bound it (nil: America/New_York,
    /// read from the tz database only when a week needs it).
    public var week: ISOWeek?
    public var timeZone: IANAZone?
    /// `--week-document`: write the document of the week holding `computedAt` on the clocks of
    /// `timeZone`, counting what `selection` selects (no event is left out for its week_id).
    public var weekDocument = false
    /// `--stats PATH`: per-joke counts as NDJSON.
    public var statsPath: String?
    /// `--format`: our JSON document or a Firestore REST body.
    public var format = DocumentFormat.json
    /// Show a progress line (the front end sets it when stderr is a terminal).
    public var progress = false
    /// `--metrics PATH`: the run's outcome for node_exporter (see `MetricsFile`).
    public var metricsPath: String?
    /// `--max-drop PERCENT`: refuse to replace `output` with a document that lost votes.
    public var maxDrop: MaxDrop?

    public init(computedAt: Timestamp) { self.computedAt = computedAt }

    /// Cores this process may use (the affinity mask, capped by the cgroup CPU quota).
    static var availableCores: Int { AvailableCores.count }

    /// Every path the run writes, in the order they are checked.
    var outputPaths: [String] { [output, reportPath, statsPath, metricsPath].compactMap { $0 } }

    /// How many of the run's first bad lines are kept in full: without `--report`, the ten
    /// stderr shows; with it, what `MaxInvalid.kept` says.
    var refusedKept: Int { reportPath == nil ? BadLineLog.shownLimit : maxInvalid.kept }
}

/// Where a job's text goes; the front end points these at the real streams, tests at buffers.
public struct JobOutput {
    var stdout: ([UInt8]) throws(OutputError) -> Void
    var stderr: (String) -> Void
    public init(stdout: @escaping ([UInt8]) throws(OutputError) -> Void, stderr: @escaping (String) -> Void) {
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// `rankings aggregate`: inputs to rankings document, never leaving a partial output behind.
public enum AggregateJob {
    /// The run itself; `run` wraps it to record the outcome in `--metrics`, which learns the
    /// counts through `facts`.
    static func produce(_ options: AggregateOptions, output: JobOutput, facts: RunFacts) throws(JobError) {
        let started = Clock.now
        // An output that is not a regular file (a FIFO, a socket, a device, a directory) fails
        // at once, before anything is read: a FIFO's open would block the run for ever.
        if let refusal = options.outputPaths.lazy.compactMap(AtomicFile.refusal).first { throw .output(refusal) }
        let (week, weekBounds) = try documentWeek(options)
        let files: [InputFile]
        do { files = try InputFile.resolve(options.inputs, layers: true, warn: output.stderr) } catch { throw .input(error) }
        if let refusal = OwnOutputs.refusal(outputs: options.outputPaths, inputs: options.inputs, files: files) {
            throw .usage(refusal)
        }

        // Create every output's temporary file first: a run that cannot write fails at once.
        let document: AtomicFile?
        let report: AtomicFile?
        let stats: AtomicFile?
        do {
            document = try options.output.map { path throws(OutputError) in try AtomicFile(path: path) }
            report = try options.reportPath.map { path throws(OutputError) in try AtomicFile(path: path) }
            stats = try options.statsPath.map { path throws(OutputError) in try AtomicFile(path: path) }
        } catch { throw .output(error) }

        let progress = ProgressCounter()
        let meter = options.progress ? ProgressLine(counter: progress, total: files.reduce(0) { $0 + $1.size }) : nil
        let result: AggregationResult
        do {
            result = try Aggregator.run(files, threads: options.threads, selection: options.selection, progress: progress,
                                        keepRefused: options.refusedKept)
        } catch {
            meter?.finish()
            throw .input(error)
        }
        meter?.finish()

        BadLineLog.report(result.firstBadLines, count: result.badLineCount, to: output.stderr)

        let totals = result.tally.totals
        var summary = RunSummary()
        summary.validEvents = result.validEvents
        summary.countedEvents = totals.ratings
        summary.filteredOut = result.filteredOut
        summary.duplicatesRemoved = result.duplicatesRemoved
        summary.hilarious = totals.hilarious
        summary.horrible = totals.horrible
        summary.neutral = totals.neutral
        summary.badLines = result.badLineCount
        summary.leftOutDocuments = result.leftOut
        summary.replacedLines = result.replacedLines
        summary.distinctJokes = result.tally.countedJokes
        summary.inputBytes = result.inputBytes
        facts.summary = summary

        var dataError: String?
        let records = result.validEvents + result.badLineCount
        if options.maxInvalid.isExceeded(bad: result.badLineCount, records: records) {
            dataError = options.maxInvalid.refusal(bad: result.badLineCount, records: records) + "; nothing written"
        } else if totals.ratings == 0 && !options.allowEmpty {
            let why = result.validEvents == 0 ? "no valid events in the input"
                : "no events left after --as-of/--since/--week (\(result.filteredOut) left out)"
            dataError = why + "; nothing written (--allow-empty writes an empty document)"
        }
        if dataError == nil {
            facts.documentTotals = (totals.hilarious, totals.horrible)
            if let maxDrop = options.maxDrop, let path = options.output {
                dataError = ShrinkGuard.refusal(replacing: path, weekID: week?.id ?? "all_time",
                                                hilarious: totals.hilarious, horrible: totals.horrible,
                                                maxDrop: maxDrop, warn: output.stderr)
            }
        }
        summary.exitStatus = dataError == nil ? 0 : 65
        summary.seconds = Clock.seconds(since: started)

        do {
            if let report {
                try summary.writeReport(refused: result.refused, to: report.write)
                if dataError != nil { try report.commit() }
            }
            if let dataError {
                if !options.quiet { output.stderr(summary.line) }
                throw JobError.data(dataError)
            }
            let rankings = Rankings(result.tally, top: options.top)
            let bytes = RankingsDocument(weekID: week?.id ?? "all_time", rankings: rankings,
                                         computedAt: options.computedAt,
                                         weekBounds: weekBounds).bytes(in: options.format)
            // Every output is complete on disk before any replaces its target; standard output
            // (which cannot be taken back) is written once every file is in place, and a
            // failure there puts every file back: a failed run leaves every output as it was.
            try document?.write(bytes)
            if let stats { try JokeStats.write(result.tally, to: stats.write) }
            try AtomicFile.commit([document, stats, report].compactMap { $0 }) { () throws(OutputError) in
                if document == nil { try output.stdout(bytes) }
            }
        } catch let error as JobError {
            throw error
        } catch let error as OutputError {
            throw .output(error)
        } catch {
            throw .data("\(error)")
        }
        if !options.quiet { output.stderr(summary.line) }
    }

    /// The week whose document the run writes (`--week`, or `--week-document`'s week of
    /// `--computed-at`) and its bounds; nil for the all-time document.
    static func documentWeek(_ options: AggregateOptions) throws(JobError) -> (ISOWeek?, (start: Timestamp, end: Timestamp)?) {
        guard options.week != nil || options.weekDocument else { return (nil, nil) }
        // No --time-zone was given, so the command line is not at fault: the system lacks
        // the default zone's file, an input the run needs (66, recorded in --metrics).
        guard let zone = options.timeZone ?? IANAZone(identifier: IANAZone.defaultIdentifier) else {
            let option = options.week != nil ? "--week" : "--week-document"
            throw .input(.cannotOpen(path: IANAZone.databaseDirectory + "/" + IANAZone.defaultIdentifier,
                                     reason: "the default zone for \(option) is not in the time zone database"))
        }
        let week = options.week ?? ISOWeek(containing: options.computedAt, in: zone)
        let bounds = week.bounds(in: zone)
        if options.week == nil && !(Timestamp.firestoreRange.contains(bounds.start) && Timestamp.firestoreRange.contains(bounds.end)) {
            throw .usage("--week-document: the week of --computed-at \(options.computedAt.rfc3339()) (\(week.id)) "
                         + "does not lie within the years 0001 to 9999 that a Firestore Timestamp holds")
        }
        return (week, bounds)
    }
}
