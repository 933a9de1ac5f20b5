import Foundation
import Testing

/// Thousands of seeded random lines through both `rankings aggregate` and the reference in this
/// test target; every count and every byte of the document must agree.
@Suite("Differential: rankings against the reference")
struct DifferentialTests {
    /// Three input files cut from one random stream, with the expected outcome of every line.
    struct Corpus {
        var files: [[UInt8]] = []
        var expected: [[(line: Int, outcome: ReferenceAggregator.Outcome)]] = []
    }

    static func corpus(seed: UInt64, linesPerFile: Int) -> Corpus {
        var lines = RandomEventLines(seed: seed)
        var layout = SplitMix64(seed: seed ^ 0x5EED_F11E)
        var corpus = Corpus()
        for _ in 0..<3 {
            var bytes: [UInt8] = Bool.random(using: &layout) ? [0xEF, 0xBB, 0xBF] : []
            var expected: [(Int, ReferenceAggregator.Outcome)] = []
            for number in 1...linesPerFile {
                let line = lines.line(mayStartWithBOM: number > 1)
                bytes += line.bytes
                if line.expected != .blank { expected.append((number, line.expected)) }
                // The last line sometimes has no terminator at all.
                if number < linesPerFile || Bool.random(using: &layout) {
                    bytes += Int.random(in: 0..<4, using: &layout) == 0 ? [0x0D, 0x0A] : [0x0A]
                }
            }
            corpus.files.append(bytes)
            corpus.expected.append(expected)
        }
        return corpus
    }

    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 2026]

    /// Guards the oracle itself: the reference must classify every line the way it was built.
    @Test("the reference classifies generated lines as constructed", arguments: seeds)
    func referenceMatchesConstruction(seed: UInt64) {
        let corpus = Self.corpus(seed: seed, linesPerFile: 1000)
        for (file, expected) in zip(corpus.files, corpus.expected) {
            let actual = ReferenceAggregator.lines(of: file).compactMap { number, line in
                let outcome = ReferenceAggregator.classify(line)
                return outcome == .blank ? nil : (number, outcome, line)
            }
            #expect(actual.count == expected.count)
            for (a, e) in zip(actual, expected) where a.0 != e.line || a.1 != e.outcome {
                Issue.record("seed \(seed) line \(a.0): built as \(e.outcome), reference says \(a.1): \(String(decoding: a.2, as: UTF8.self).debugDescription)")
                break
            }
        }
    }

    @Test("rankings agrees with the reference on random input", arguments: seeds)
    func rankingsMatchesReference(seed: UInt64) throws {
        let corpus = Self.corpus(seed: seed, linesPerFile: 1000)
        try ScratchDirectory.with { dir in
            // Odd seeds feed the middle file through stdin, so `-` is named in bad-line messages.
            let viaStdin = seed % 2 == 1
            var paths: [String] = []
            var reference = ReferenceAggregator()
            for (index, file) in corpus.files.enumerated() {
                let path = (viaStdin && index == 1) ? "-" : try dir.write("events-\(index).ndjson", file)
                paths.append(path)
                reference.add(file: file, path: path)
            }
            let report = dir.path("report.json")
            let result = try RankingsBinary.run(
                ["aggregate", "--top", "1000", "--max-invalid", "1000000", "--computed-at", fixedComputedAt,
                 "--report", report, "-q"] + paths,
                stdin: viaStdin ? Data(corpus.files[1]) : nil)
            try #require(result.status == 0, "stderr: \(result.stderrText)")

            let expectedDocument = reference.document(top: 1000, computedAt: fixedComputedAt)
            #expect(firstDifference(expectedDocument, Array(result.stdout)) == nil,
                    "seed \(seed): \(firstDifference(expectedDocument, Array(result.stdout)) ?? "")")

            let counts = try ReportFile.counts(at: report)
            #expect(counts == ReportFile.Counts(reference.summary), "seed \(seed)")

            // -q leaves only the bad-line listing: the first ten, then how many more.
            var expectedStderr = reference.badLines.prefix(10).map { bad in
                "\(bad.path):\(bad.line): " + (bad.outcome == .malformed ? "malformed JSON: " : "invalid record: ")
            }
            if reference.badLines.count > 10 {
                let more = reference.badLines.count - 10
                expectedStderr.append("rankings: \(more) more bad \(more == 1 ? "line" : "lines") not shown")
            }
            let stderr = result.stderrLines
            #expect(stderr.count == expectedStderr.count, "seed \(seed): \(result.stderrText)")
            for (line, prefix) in zip(stderr, expectedStderr) {
                #expect(line.hasPrefix(prefix), "seed \(seed): expected a line starting \(prefix.debugDescription), got \(line.debugDescription)")
            }

            // A short list must be exactly the head of the long one, ties broken by bytes.
            let short = try RankingsBinary.run(
                ["aggregate", "--top", "3", "--max-invalid", "1000000", "--computed-at", fixedComputedAt, "-q"] + paths,
                stdin: viaStdin ? Data(corpus.files[1]) : nil)
            #expect(short.status == 0)
            let expectedShort = reference.document(top: 3, computedAt: fixedComputedAt)
            #expect(firstDifference(expectedShort, Array(short.stdout)) == nil,
                    "seed \(seed) --top 3: \(firstDifference(expectedShort, Array(short.stdout)) ?? "")")
        }
    }
}
