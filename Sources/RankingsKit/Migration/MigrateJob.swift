import Glibc

/// What `rankings migrate` was asked to do, already parsed and checked.
public struct MigrateOptions: Sendable {
    public var inputs: [String] = []
    /// The migrated export's path, replaced atomically; nil writes it to standard output.
    public var output: String?
    /// Judge and count every line, write nothing, print the counts.
    public var dryRun = false
    public var maxInvalid = 0
    public var quiet = false

    public init() {}
}

/// `rankings migrate`: an export on the five-point scale to the same export on the binary one,
/// streamed in constant memory, with nothing written unless the whole run succeeds.
public enum MigrateJob {
    @discardableResult
    public static func run(_ options: MigrateOptions, output: JobOutput) throws(JobError) -> MigrationCounts {
        let files: [InputFile]
        do { files = try InputFile.resolve(options.inputs, managedExports: false, warn: output.stderr) } catch { throw .input(error) }

        // The destination exists before any input is read, so one that cannot be created fails
        // at once; until `commit` (or the copy to stdout) nothing outside it changes.
        var target: AtomicFile?
        var spool: StdoutSpool?
        if !options.dryRun {
            do {
                if let path = options.output { target = try AtomicFile(path: path) } else { spool = try StdoutSpool() }
            } catch { throw .output(error) }
        }
        let destination: MigrationDestination? = target ?? spool
        let batched = destination.map { BatchedOutput(to: $0) }

        let reader = LineReader()
        var migrator = LineMigrator(output: batched)
        for file in files {
            migrator.path = file.displayPath
            do {
                let opened = try file.open()
                defer { withExtendedLifetime(opened) {} }
                _ = try file.readLines(descriptor: opened.fd, with: reader, into: &migrator)
            } catch { throw .input(error) }
            if let failure = batched?.failure { throw .output(failure) }
        }
        batched?.flush()
        if let failure = batched?.failure { throw .output(failure) }

        let counts = migrator.counts
        BadLineLog.report(migrator.shownBadLines, count: counts.badLines, to: output.stderr)
        if counts.badLines > options.maxInvalid {
            if !options.quiet { output.stderr(counts.summaryLine) }
            throw .data(counted(counts.badLines, "bad line", "bad lines")
                + ", more than --max-invalid \(options.maxInvalid); nothing written")
        }

        do {
            if options.dryRun {
                try output.stdout(counts.dryRunReport)
                return counts
            }
            if let target { try target.commit() }
            if let spool { try spool.copy(to: output.stdout) }
        } catch {
            throw .output(error)
        }
        if !options.quiet { output.stderr(counts.summaryLine) }
        return counts
    }
}
