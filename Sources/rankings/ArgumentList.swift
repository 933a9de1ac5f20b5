import RankingsKit

/// The words after a subcommand, taken apart the way Unix tools do: `--name value`,
/// `--name=value`, `-o value`, `-ovalue`, `--` ends the options, and a lone `-` is an operand
/// (stdin). Short flags are not clustered: `-qv` is not `-q -v`.
struct ArgumentList {
    private var words: [String]
    private(set) var operands: [String] = []

    init(_ words: [String]) { self.words = words.reversed() }

    /// The next option name (with its inline `=value` split off), or nil when none is left;
    /// operands met on the way are collected in `operands`.
    mutating func nextOption() -> (name: String, inlineValue: String?)? {
        while let word = words.popLast() {
            if word == "--" {
                operands.append(contentsOf: words.reversed())
                words = []
                return nil
            }
            if word.hasPrefix("--") {
                if let eq = word.firstIndex(of: "=") {
                    return (String(word[..<eq]), String(word[word.index(after: eq)...]))
                }
                return (word, nil)
            }
            if word.hasPrefix("-") && word.count > 2 {
                // getopt's attached value: -oFILE is -o FILE.
                return (String(word.prefix(2)), String(word.dropFirst(2)))
            }
            if word.hasPrefix("-") && word.count > 1 { return (word, nil) }
            operands.append(word)
        }
        return nil
    }

    /// The value of option `name`: its inline `=value` or the next word.
    mutating func value(for option: (name: String, inlineValue: String?)) throws(JobError) -> String {
        if let inline = option.inlineValue { return inline }
        guard let word = words.popLast() else { throw .usage("\(option.name) needs a value") }
        return word
    }

    /// A whole number in `range` for option `name`.
    mutating func integer(for option: (name: String, inlineValue: String?), in range: ClosedRange<Int>) throws(JobError) -> Int {
        let text = try value(for: option)
        guard let n = Int(text), range.contains(n) else {
            throw .usage("\(option.name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return n
    }

    /// The operands, which must be at least one, with `-` (standard input) at most once.
    func inputs(named name: String) throws(JobError) -> [String] {
        if operands.isEmpty { throw .usage("no \(name) given") }
        if operands.filter({ $0 == "-" }).count > 1 { throw .usage("'-' (standard input) may be given only once") }
        return operands
    }

    /// Rejects an `=value` given to a flag that takes none.
    func flag(_ option: (name: String, inlineValue: String?)) throws(JobError) {
        guard let inline = option.inlineValue else { return }
        if option.name.hasPrefix("--") { throw .usage("\(option.name) takes no value") }
        throw .usage("unknown option \(option.name)\(inline)")
    }
}
