import Glibc
import RankingsKit

/// `rankings check`: parses its flags and hands the documents to `CheckJob`.
enum CheckCommand {
    static let synopsis = "rankings check [options] DOC..."

    static let help = """
    usage: rankings check [options] DOC...

    Checks rankings documents against what the app's decoder expects. Each problem is one line on
    stderr, 'DOC: $.json.path: problem', in document order; nothing is written to stdout
    unless --print-firestore asks for it.

      DOC                 a rankings document (JSON), or '-' for standard input (once)
      --format FORMAT     json (the default), or firestore: each DOC is a Firestore REST
                          Document body as 'rankings aggregate --format firestore' writes it,
                          checked by the same rules; paths name the body's own keys
      --top N             most entries a list may have, 1...1000 (default 10)
      --time-zone TZ      IANA zone whose clocks bound a week's document (week_id 2026-W48):
                          its week_start must be that week's Monday 00:00 there, its week_end
                          the end of its Sunday (default America/New_York)
      --print-firestore   with one DOC: when it is valid, write it to stdout as the Firestore
                          REST Document body 'aggregate --format firestore' writes (counts
                          and ranks as integers, times as Timestamps), ready for a PATCH;
                          what rankings-publish-firestore uploads
      --allow-extra-keys  accept keys the app does not decode
      -q, --quiet         no summary line on stderr

    Exit status: 0 every DOC valid; 65 a DOC has a problem; 66 a DOC missing or a directory,
    or a week's DOC and no America/New_York in the time zone database (74 a read error);
    64 usage. An unreadable DOC outranks an invalid one; every DOC is still
    checked.
    """

    static func parse(_ words: [String]) throws(JobError) -> CheckOptions? {
        var options = CheckOptions()
        var args = ArgumentList(words)
        while let option = args.nextOption() {
            switch option.name {
            case "-h", "--help":
                return nil
            case "--top":
                options.top = try args.integer(for: option, in: Rankings.topRange)
            case "--format":
                let text = try args.value(for: option)
                guard let format = DocumentFormat(rawValue: text) else {
                    throw .usage("--format takes 'json' or 'firestore', not '\(text)'")
                }
                options.format = format
            case "--time-zone":
                let text = try args.value(for: option)
                guard let zone = IANAZone(identifier: text) else { throw .usage(IANAZone.unknownMessage(text)) }
                options.timeZone = zone
            case "--print-firestore":
                try args.flag(option)
                options.printFirestore = true
            case "--allow-extra-keys":
                try args.flag(option)
                options.allowExtraKeys = true
            case "-q", "--quiet":
                try args.flag(option)
                options.quiet = true
            default:
                throw .usage("unknown option \(option.name)")
            }
        }
        options.documents = try args.inputs(named: "DOC")
        return options
    }

    static func run(_ words: [String]) -> Never {
        Terminal.run(words, help: help, synopsis: synopsis, parse: parse) { (options) throws(JobError) in
            options.printFirestore ? try CheckJob.printFirestore(options, output: Terminal.output)
                : CheckJob.run(options, stderr: Terminal.printError)
        }
    }
}
