import Glibc
import RankingsKit

/// Placeholder until the command lands.
enum CheckCommand {
    static func run(_ words: [String]) -> Never {
        Terminal.fail(.usage("not implemented yet"))
    }
}
