import Glibc
import RankingsKit

/// `rankings migrate`: parses its flags and hands the work to `MigrateJob`.
enum MigrateCommand {
    static let synopsis = "rankings migrate [--dry-run] [-o PATH] [options] INPUT..."

    static let help = """
    usage: rankings migrate [--dry-run] [-o PATH] [options] INPUT...

    Rewrites NDJSON exports of rating_events to the binary scale, as the database migration did:
    Hilarious ratings become 5, Horrible ratings become 1, neutral events are dropped. Only the
    rating's value changes; every other byte of a kept line stays as it was.

      INPUT               as for 'rankings aggregate': a file (gzip detected), a directory, or
                          '-' for standard input (once); all are written out in order
      -o, --output PATH   write the migrated export to PATH atomically; without it, to
                          standard output (only once the whole input has been read)
      --dry-run           write nothing; print how many lines would be kept unchanged,
                          rewritten to 5, rewritten to 1 and dropped
      --max-invalid N     bad lines tolerated (and left out) before the run fails (default 0)
      -q, --quiet         no summary line on stderr

    Exit status: 0 written; 64 usage; 65 bad data; 66 input unreadable; 73 output cannot be
    created; 74 I/O error. On failure nothing is written and the output is left as it was.
    """

    static func parse(_ words: [String]) throws(JobError) -> MigrateOptions? {
        var options = MigrateOptions()
        var args = ArgumentList(words)
        while let option = args.nextOption() {
            switch option.name {
            case "-h", "--help":
                return nil
            case "-o", "--output":
                options.output = try args.value(for: option)
                if options.output!.isEmpty { throw .usage("--output needs a path") }
            case "--dry-run":
                try args.flag(option)
                options.dryRun = true
            case "--max-invalid":
                options.maxInvalid = try args.integer(for: option, in: 0...Int.max)
            case "-q", "--quiet":
                try args.flag(option)
                options.quiet = true
            default:
                throw .usage("unknown option \(option.name)")
            }
        }
        options.inputs = try args.inputs(named: "INPUT")
        return options
    }

    static func run(_ words: [String]) -> Never {
        Terminal.run(words, help: help, synopsis: synopsis, parse: parse) { (options) throws(JobError) in
            try MigrateJob.run(options, output: Terminal.output)
            return 0
        }
    }
}
