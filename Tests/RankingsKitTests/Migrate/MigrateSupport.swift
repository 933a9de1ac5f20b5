import Foundation

/// Shared pieces of the `rankings migrate` tests.
enum Migrate {
    /// `sample-data/migrate/NAME`.
    static func fixture(_ name: String) -> String {
        RankingsBinary.packageRoot.appendingPathComponent("sample-data/migrate/\(name)").path
    }

    static func sample(_ relative: String) -> String {
        RankingsBinary.packageRoot.appendingPathComponent("sample-data/\(relative)").path
    }

    static func bytes(at path: String) throws -> [UInt8] { try Array(Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Runs `rankings migrate ARGUMENTS`.
    static func run(_ arguments: [String], stdin: [UInt8]? = nil,
                    environment: [String: String]? = nil) throws -> RankingsBinary.Result {
        try RankingsBinary.run(["migrate"] + arguments, stdin: stdin.map { Data($0) }, environment: environment)
    }

    /// The `--dry-run` report for these counts, spelled out independently of the library.
    static func report(unchanged: Int, to5: Int, to1: Int, dropped: Int, bad: Int) -> String {
        "unchanged: \(unchanged)\nrewritten_to_5: \(to5)\nrewritten_to_1: \(to1)\ndropped_neutral: \(dropped)\nbad_lines: \(bad)\n"
    }

    /// Lines as `migrate` sees them: a leading BOM dropped, cut at `\n`, a CR kept as part of its
    /// line, and a last piece without `\n` still a line.
    static func lines(of file: [UInt8]) -> [[UInt8]] {
        var bytes = file[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if pieces.last?.isEmpty == true { pieces.removeLast() }
        return pieces
    }
}
