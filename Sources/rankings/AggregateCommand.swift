import Glibc
import RankingsKit

/// `rankings aggregate`: parses its flags and hands the work to `AggregateJob`.
enum AggregateCommand {
    static let synopsis = "rankings aggregate [options] INPUT..."

    static let help = """
    usage: rankings aggregate [options] INPUT...

    Reads exports of rating_events and writes the all-time rankings document.

      INPUT               a file of JSON lines: flat records ({"joke_id": ..., "rating": 5}) and
                          Firestore typed documents ({"name": ".../documents/rating_events/ID",
                          "fields": {...}}), mixed as they come; documents of other collections
                          are left out (gzip detected by its magic bytes); a directory (its
                          regular files ending in .ndjson, .jsonl, .json or those plus .gz, not
                          recursive, names starting with '.' skipped, in byte order of name;
                          FIFOs and devices skipped with a warning; with change files
                          STEM.changes-NNNNNN.ndjson, one snapshot: a document in change file N
                          replaces the same name in STEM.ndjson and lower change files); a
                          Firestore managed export (a directory holding *.overall_export_metadata
                          or *.export_metadata: the output files its metadata lists); or '-' for
                          standard input (once).
                          See "Input formats" in rankings(1)
      -o, --output PATH   write the document to PATH atomically; without it, to standard output
      --format FORMAT     json (the default): the rankings document; firestore: the same content
                          as a Firestore REST Document body, {"fields": {...}}, with Timestamps
                          and integers typed for a PATCH of weekly_rankings/{week_id}
      --top N             entries per list, 1...1000 (default 10)
      --computed-at TIME  the document's computed_at, RFC 3339 with any offset (default: now);
                          written in UTC with Z
      --max-invalid N     bad lines tolerated before the run fails (default 0); or N%, a
                          share of the records read (valid + bad): 1% of 10,000 tolerates 100
      --allow-empty       write a document even when no event is counted (none valid, or
                          none left after --as-of/--since/--week)
      --report PATH       also write a JSON summary of the run, naming every bad line
      --threads N         threads to use (default: the cores available)
      -q, --quiet         no summary line on stderr

    Safety net (see "Monitoring" and "The guard against shrinking" in rankings(1)):
      --metrics PATH      write the run's outcome for node_exporter's textfile collector, on
                          success and failure; an empty PATH writes nothing
      --max-drop PERCENT  fail (65) rather than replace the --output document with one for the
                          same week_id whose hilarious + horrible total is more than PERCENT lower

    Backfill:
      --as-of TIME        count only events whose timestamp is at or before TIME (RFC 3339)
      --since TIME        count only events whose timestamp is at or after TIME: RFC 3339, or
                          -Nd / -Nh for N x 24 h / N hours before --computed-at (e.g. -30d)
      --week ID           count only events whose week_id is exactly ID (e.g. 2026-W07) and
                          write that week's document, with week_start and week_end
      --week-document     write the document of the ISO week holding --computed-at on the
                          clocks of --time-zone (week_id e.g. 2026-W48, week_start, week_end),
                          for weekly_rankings/{week_id}; events are counted as the other
                          options select them, not by their week_id (not with --week)
      --time-zone TZ      IANA zone for the week's bounds (default America/New_York)
      --dedupe device     one vote per (device_id, joke_id): the latest timestamp wins; a
                          timestamp that cannot be read is a bad line
      --dedupe id         one vote per event id: for overlapping export files
      --stats PATH        also write every joke's counts as NDJSON, atomically

    Exit status: 0 written; 64 usage, or an output that would be read as an input;
    65 bad data or refused by --max-drop (a file that starts a JSON array is bad data, and so is
    a change file's line whose name cannot be read);
    66 input unreadable, or a directory with no file to read; 73 output cannot be created;
    74 I/O error. On failure the output is left exactly as it was.
    """

    static func parse(_ words: [String]) throws(JobError) -> AggregateOptions? {
        var options = AggregateOptions(computedAt: now())
        // Resolved after the loop: a relative --since counts back from --computed-at, wherever it is.
        var since: String?
        var args = ArgumentList(words)
        while let option = args.nextOption() {
            switch option.name {
            case "-h", "--help":
                return nil
            case "-o", "--output":
                options.output = try args.value(for: option)
                if options.output!.isEmpty { throw .usage("--output needs a path") }
            case "--top":
                options.top = try args.integer(for: option, in: Rankings.topRange)
            case "--computed-at":
                let text = try args.value(for: option)
                guard let t = Timestamp.parseRFC3339(text) else {
                    throw .usage("--computed-at takes an RFC 3339 time like 2026-02-18T00:00:00-05:00, not '\(text)'")
                }
                options.computedAt = t
            case "--max-invalid":
                let text = try args.value(for: option)
                guard let maxInvalid = MaxInvalid(text) else {
                    throw .usage("--max-invalid takes a whole number of bad lines from 0, or a share of the records read "
                                 + "from 0% to 100% with at most \(Percentage.decimals) decimals, like 1% or 0.5%, not '\(text)'")
                }
                options.maxInvalid = maxInvalid
            case "--allow-empty":
                try args.flag(option)
                options.allowEmpty = true
            case "--report":
                options.reportPath = try args.value(for: option)
                if options.reportPath!.isEmpty { throw .usage("--report needs a path") }
            case "--as-of":
                let text = try args.value(for: option)
                guard let t = Timestamp.parseRFC3339(text) else {
                    throw .usage("--as-of takes an RFC 3339 time like 2026-02-18T00:00:00-05:00, not '\(text)'")
                }
                options.selection.asOf = t
            case "--since":
                since = try args.value(for: option)
            case "--format":
                let text = try args.value(for: option)
                guard let format = DocumentFormat(rawValue: text) else {
                    throw .usage("--format takes 'json' or 'firestore', not '\(text)'")
                }
                options.format = format
            case "--week":
                let text = try args.value(for: option)
                guard let week = ISOWeek(text) else {
                    throw .usage("--week takes an ISO week that exists, like 2026-W07, not '\(text)'")
                }
                options.week = week
                options.selection.weekID = Array(text.utf8)
            case "--week-document":
                try args.flag(option)
                options.weekDocument = true
            case "--time-zone":
                let text = try args.value(for: option)
                guard let zone = IANAZone(identifier: text) else { throw .usage(IANAZone.unknownMessage(text)) }
                options.timeZone = zone
            case "--dedupe":
                let text = try args.value(for: option)
                switch text {
                case "device": options.selection.dedupe = .device
                case "id": options.selection.dedupe = .eventID
                default: throw .usage("--dedupe takes 'device' or 'id', not '\(text)'")
                }
            case "--stats":
                options.statsPath = try args.value(for: option)
                if options.statsPath!.isEmpty { throw .usage("--stats needs a path") }
            case "--metrics":
                let path = try args.value(for: option)
                // Empty means none, so a configuration can leave RANKINGS_METRICS blank.
                options.metricsPath = path.isEmpty ? nil : path
            case "--max-drop":
                let text = try args.value(for: option)
                guard let maxDrop = MaxDrop(text) else {
                    throw .usage("--max-drop takes a percentage from 0 to 100 with at most \(MaxDrop.decimals) decimals, like 1 or 0.5, not '\(text)'")
                }
                options.maxDrop = maxDrop
            case "--threads":
                options.threads = try args.integer(for: option, in: 1...1024)
            case "-q", "--quiet":
                try args.flag(option)
                options.quiet = true
            default:
                throw .usage("unknown option \(option.name)")
            }
        }
        if options.weekDocument, let week = options.week {
            throw .usage("--week-document and --week cannot be combined: --week already writes week \(week.id)'s document")
        }
        if let since { options.selection.since = try resolveSince(since, options) }
        options.inputs = try args.inputs(named: "INPUT")
        let paths = [options.output, options.reportPath, options.statsPath, options.metricsPath].compactMap { $0 }
        if Set(paths.map(AtomicFile.replacedFile)).count < paths.count { throw .usage("--output, --report, --stats and --metrics must name different files") }
        if options.maxDrop != nil && options.output == nil { throw .usage("--max-drop compares with the --output document; give --output") }
        options.progress = Terminal.stderrIsTerminal && !options.quiet
        return options
    }

    static func run(_ words: [String]) -> Never {
        Terminal.run(words, help: help, synopsis: synopsis, parse: parse) { (options) throws(JobError) in
            try AggregateJob.run(options, output: Terminal.output)
            return 0
        }
    }

    static func resolveSince(_ text: String, _ options: AggregateOptions) throws(JobError) -> Timestamp {
        guard let t = SinceTime.resolve(text, computedAt: options.computedAt) else {
            throw .usage("--since takes an RFC 3339 time like 2026-02-18T00:00:00-05:00, or -30d / -12h, not '\(text)'")
        }
        if let asOf = options.selection.asOf, t > asOf {
            throw .usage("--since \(text) (\(t.rfc3339())) is later than --as-of (\(asOf.rfc3339())): no event could count")
        }
        return t
    }

    static func now() -> Timestamp { Clock.wallTime }
}
