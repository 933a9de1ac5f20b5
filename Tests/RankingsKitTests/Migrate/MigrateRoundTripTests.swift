import Foundation
import Testing

/// The promise of `migrate` on random exports: the migrated export aggregates to the same
/// document as the original, has no bad lines, and differs from it line by line only in the
/// value of the rating, checked against the test target's own JSON reference.
@Suite("migrate: round trip on random exports")
struct MigrateRoundTripTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 2026]

    /// Two inputs of random lines (valid events of every kind and spelling, bad lines, blank
    /// lines), with BOMs, CRLF endings and unterminated last lines thrown in.
    static func inputs(seed: UInt64, linesPerFile: Int = 800) -> [[UInt8]] {
        var lines = RandomEventLines(seed: seed)
        var layout = SplitMix64(seed: seed ^ 0x0B1_4A2F)
        return (0..<2).map { _ in
            var bytes: [UInt8] = Bool.random(using: &layout) ? [0xEF, 0xBB, 0xBF] : []
            for number in 1...linesPerFile {
                bytes += lines.line(mayStartWithBOM: number > 1).bytes
                if number < linesPerFile || Bool.random(using: &layout) {
                    bytes += Int.random(in: 0..<4, using: &layout) == 0 ? [0x0D, 0x0A] : [0x0A]
                }
            }
            return bytes
        }
    }

    func aggregate(_ paths: [String], maxInvalid: Int) throws -> RankingsBinary.Result {
        try RankingsBinary.run(["aggregate", "-q", "--top", "1000", "--max-invalid", String(maxInvalid),
                                "--computed-at", fixedComputedAt] + paths)
    }

    @Test("aggregate(migrate(x)) == aggregate(x)", arguments: seeds)
    func aggregateIsUnchanged(seed: UInt64) throws {
        try ScratchDirectory.with { dir in
            let paths = try Self.inputs(seed: seed).enumerated().map { try dir.write("in-\($0.offset).ndjson", $0.element) }
            let migration = try Migrate.run(["-q", "--max-invalid", "1000000", "-o", dir.path("binary.ndjson")] + paths)
            try #require(migration.status == 0, "stderr: \(migration.stderrText)")

            let original = try aggregate(paths, maxInvalid: 1_000_000)
            try #require(original.status == 0, "stderr: \(original.stderrText)")
            // No tolerance: the migrated export must have no bad line at all.
            let migrated = try aggregate([dir.path("binary.ndjson")], maxInvalid: 0)
            try #require(migrated.status == 0, "stderr: \(migrated.stderrText)")
            #expect(firstDifference(Array(original.stdout), Array(migrated.stdout)) == nil,
                    "seed \(seed): \(firstDifference(Array(original.stdout), Array(migrated.stdout)) ?? "")")
        }
    }

    @Test("each kept line differs only in its rating, and the counts match the reference", arguments: seeds)
    func linesChangeOnlyInTheirRating(seed: UInt64) throws {
        let inputs = Self.inputs(seed: seed)
        try ScratchDirectory.with { dir in
            let paths = try inputs.enumerated().map { try dir.write("in-\($0.offset).ndjson", $0.element) }
            let migration = try Migrate.run(["-q", "--max-invalid", "1000000"] + paths)
            try #require(migration.status == 0, "stderr: \(migration.stderrText)")
            var output = Migrate.lines(of: Array(migration.stdout))[...]
            #expect(migration.stdout.last == 0x0A, "every written line ends in \\n")

            var unchanged = 0, to5 = 0, to1 = 0, dropped = 0, bad = 0
            for line in inputs.flatMap(Migrate.lines(of:)) {
                switch ReferenceAggregator.classify(line) {
                case .blank: continue
                case .malformed, .invalidRecord: bad += 1; continue
                case .event(_, .neutral): dropped += 1; continue
                case .event(let id, let kind):
                    guard let written = output.popFirst() else {
                        Issue.record("seed \(seed): output ends before the event \(String(decoding: line, as: UTF8.self).debugDescription)")
                        return
                    }
                    #expect(ReferenceAggregator.classify(written) == .event(id: id, kind: kind))
                    let digit = kind == .hilarious ? UInt8(ascii: "5") : UInt8(ascii: "1")
                    #expect(Self.lastRating(of: written) == (kind == .hilarious ? 5 : 1),
                            "seed \(seed): not on the binary scale: \(String(decoding: written, as: UTF8.self).debugDescription)")
                    if written == line {
                        unchanged += 1
                        continue
                    }
                    if kind == .hilarious { to5 += 1 } else { to1 += 1 }
                    #expect(Self.replacesOneSpan(of: line, with: digit, giving: written),
                            "seed \(seed): \(String(decoding: line, as: UTF8.self).debugDescription) became \(String(decoding: written, as: UTF8.self).debugDescription)")
                }
            }
            #expect(output.isEmpty, "seed \(seed): \(output.count) lines written that no event accounts for")

            let dryRun = try Migrate.run(["--dry-run", "--max-invalid", "1000000"] + paths)
            #expect(dryRun.stdoutText == Migrate.report(unchanged: unchanged, to5: to5, to1: to1, dropped: dropped, bad: bad),
                    "seed \(seed)")
        }
    }

    /// Whether `written` is `line` with one non-empty run of bytes replaced by the single byte `digit`.
    static func replacesOneSpan(of line: [UInt8], with digit: UInt8, giving written: [UInt8]) -> Bool {
        guard written.count <= line.count else { return false }
        let prefix = zip(line, written).prefix { $0 == $1 }.count
        let suffix = zip(line.reversed(), written.reversed()).prefix { $0 == $1 }.count
        for before in 0...min(prefix, written.count - 1) {
            let after = written.count - 1 - before
            if after <= suffix && written[before] == digit { return true }
        }
        return false
    }

    /// The value of the last top-level `rating`, the one that counts, read by the reference parser.
    static func lastRating(of line: [UInt8]) -> Double? {
        guard case .object(let members)? = try? ReferenceJSON.parse(line),
              case .number(let value)? = members.last(where: { $0.key.bytes == Array("rating".utf8) })?.value
        else { return nil }
        return value
    }
}
