import Glibc
import RankingsKit

/// Placeholder until the command lands.
enum MigrateCommand {
    static func run(_ words: [String]) -> Never {
        Terminal.fail(.usage("not implemented yet"))
    }
}
