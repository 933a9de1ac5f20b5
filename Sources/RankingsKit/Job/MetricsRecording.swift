/// What a run learned before it ended, for `--metrics`, whether it ends well or not.
final class RunFacts {
    /// Set once the inputs have been read to the end.
    var summary: RunSummary?
    /// Set once the document exists in memory (it may still be refused by `--max-drop`).
    var documentTotals: (hilarious: Int, horrible: Int)?
}

extension AggregateJob {
    /// Runs the job and, with `--metrics`, records its outcome on every exit status the job
    /// itself reports but 64. A usage error writes nothing: with a wrong command line the
    /// metrics path itself may be wrong (it may name an input, or sit in an input directory,
    /// which is why the run was refused), and the previous file keeps aging, which is what the
    /// alerts watch.
    public static func run(_ options: AggregateOptions, output: JobOutput) throws(JobError) {
        let started = Clock.now
        let facts = RunFacts()
        // The outcome as a value: every status the job reports is recorded below, then returned.
        let outcome = Result { () throws(JobError) in try produce(options, output: output, facts: facts) }
        var failure: JobError?
        if case .failure(let error) = outcome { failure = error }
        // Nor when the metrics path itself was refused (it is not a regular file).
        var refusedMetrics = false
        if case .output(.cannotCreate(let path, _))? = failure, path == options.metricsPath { refusedMetrics = true }
        if let path = options.metricsPath, failure?.exitStatus != 64, !refusedMetrics {
            var metrics = RunMetrics(endedAt: Clock.wallTime.seconds, durationSeconds: Clock.seconds(since: started),
                                     exitStatus: failure?.exitStatus ?? 0)
            metrics.summary = facts.summary
            metrics.documentTotals = facts.documentTotals
            if let warning = MetricsFile.write(metrics, to: path) { output.stderr(warning) }
        }
        if let failure { throw failure }
    }
}
