import Glibc
import RankingsKit

// A closed pipe must surface as a write error (status 74), not kill the process silently.
signal(SIGPIPE, SIG_IGN)

let help = """
usage: rankings <command> [options]

Commands:
  aggregate   turn NDJSON exports of rating_events into the rankings document
  check       check rankings documents against what the app's decoder expects
  migrate     rewrite an export to the binary scale (4 -> 5, 2 -> 1, neutral dropped)

Run 'rankings <command> --help' for a command's options; 'rankings --version' prints the version.
"""

// A CPU level the process cannot run at is an operator's mistake to hear of before any work.
if let refusal = CPULevel.refusal { Terminal.fail(.usage(refusal)) }

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "aggregate":
    AggregateCommand.run(Array(arguments.dropFirst()))
case "check":
    CheckCommand.run(Array(arguments.dropFirst()))
case "migrate":
    MigrateCommand.run(Array(arguments.dropFirst()))
case "-h", "--help", "help":
    Terminal.printAndExit(help)
case "--version":
    // What this binary found on this machine: the lines a performance report needs.
    Terminal.printAndExit("rankings \(RankingsKitVersion.string)\n\(Inflaters.description)\n\(CPULevel.description)")
case nil:
    Terminal.fail(.usage("no command given"), usage: "rankings <command> [options]")
case let other?:
    Terminal.fail(.usage("unknown command '\(other)'"), usage: "rankings <command> [options]")
}
