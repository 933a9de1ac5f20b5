import Foundation
import Testing
@testable import RankingsKit

/// Issue 4: however the input is cut into pieces and chunks, and however many threads read it,
/// `Aggregator.run` finds exactly what one thread reading front to back finds — the same
/// rankings, totals, bad-line count and first bad lines (path, line number, reason).
@Suite("Parallel equivalence")
struct ParallelEquivalenceTests {
    // MARK: Corpora (built once)

    /// ~600 short lines: cheap enough for pieces of 1–7 bytes. Under a sanitizer (`Sanitizer.isOn`)
    /// 200, and the mixed corpus below 1,200 lines with a medium line every 50: a piece of a few
    /// bytes is a work item, and every one was most of this suite's 220 CPU-s under the two
    /// sanitizers; a third of the lines still cut every piece, chunk and bad-line path.
    static let small = EventCorpus(seed: 11, .init(lineCount: Sanitizer.isOn ? 200 : 600, bom: true, finalNewline: false,
                                                   badEvery: 9, blankEvery: 13))
    /// ~4,000 lines, some of them 2–20 KB, so tiny chunks must grow.
    static let mixed = EventCorpus(seed: 12, .init(lineCount: Sanitizer.isOn ? 1200 : 4000, bom: true, finalNewline: false,
                                                   mediumLine: 20_000, mediumEvery: Sanitizer.isOn ? 50 : 150))
    /// ~2,000 short lines around long lines of 100 KB–3 MB, one of them bad. Under a sanitizer
    /// (`Sanitizer.isOn`) 60–600 KB: still longer than every chunk size and than the pieces they
    /// are cut into, so every split and growth path runs, on a fifth of the bytes.
    static let long = EventCorpus(seed: 13, .init(lineCount: 2000, bom: true, finalNewline: false,
                                                  longLines: Sanitizer.isOn ? [60_000, 300_000, 600_000] : [100_000, 1_000_000, 3_000_000],
                                                  longBadLines: Sanitizer.isOn ? [200_000] : [300_000]))

    enum CorpusName: String, Sendable { case small, mixed, long }
    static func corpus(_ name: CorpusName) -> EventCorpus {
        switch name {
        case .small: small
        case .mixed: mixed
        case .long: long
        }
    }

    /// Runs the reference configuration (one thread, automatic pieces, default chunk) and checks
    /// it against what the corpus was built to contain.
    static func reference(_ corpus: EventCorpus, path: String) throws -> AggregationSummary {
        let summary = AggregationSummary(try runAggregator([path], threads: 1))
        let expectedBad = corpus.expectedBadLines
        #expect(summary.badLineCount == expectedBad.count)
        #expect(summary.firstBadLines.count == min(expectedBad.count, BadLineLog.shownLimit))
        for (got, expected) in zip(summary.firstBadLines, expectedBad) {
            #expect(got.path == path)
            #expect(got.line == expected.line && got.reason.hasPrefix(expected.prefix), "\(got) expected \(expected)")
        }
        let expectedCounts = corpus.expectedCounts
        #expect(summary.jokes.count == expectedCounts.count)
        for joke in summary.jokes where expectedCounts[joke.id] != joke.counts {
            Issue.record("joke \(joke.id): \(joke.counts) expected \(String(describing: expectedCounts[joke.id]))")
        }
        return summary
    }

    struct Config: Sendable, CustomTestStringConvertible {
        var corpus: CorpusName
        var threads: Int
        var pieceSize: Int64?
        var chunkSize: Int = LineReader.chunkSize
        var testDescription: String {
            "\(corpus) threads \(threads) piece \(pieceSize.map(String.init) ?? "auto") chunk \(chunkSize)"
        }
    }

    // MARK: Fixed piece and chunk sizes

    static let configs: [Config] = {
        var configs: [Config] = []
        for piece: Int64 in [1, 2, 3, 7] {
            for threads in [2, 4] { configs.append(Config(corpus: .small, threads: threads, pieceSize: piece, chunkSize: 1000)) }
        }
        configs.append(Config(corpus: .small, threads: 3, pieceSize: 1, chunkSize: 16))
        configs.append(Config(corpus: .small, threads: 1, pieceSize: 1, chunkSize: 64))
        configs.append(Config(corpus: .small, threads: 2, pieceSize: 5, chunkSize: 64))
        for piece: Int64 in [7, 64, 4096, 65536] {
            for chunk in [16, 64, 1000, LineReader.chunkSize] where piece >= 64 || chunk >= 1000 {
                configs.append(Config(corpus: .mixed, threads: piece == 4096 ? 3 : 4, pieceSize: piece, chunkSize: chunk))
            }
        }
        for threads in [1, 2, 3, 4] {
            configs.append(Config(corpus: .mixed, threads: threads, pieceSize: nil, chunkSize: 16))
        }
        configs.append(Config(corpus: .mixed, threads: 4, pieceSize: nil))
        for piece: Int64 in [65536, 1 << 20, 999_983] {
            configs.append(Config(corpus: .long, threads: 4, pieceSize: piece, chunkSize: 65536))
        }
        configs.append(Config(corpus: .long, threads: 1, pieceSize: nil, chunkSize: 16))
        configs.append(Config(corpus: .long, threads: 2, pieceSize: nil, chunkSize: 1000))
        configs.append(Config(corpus: .long, threads: 2, pieceSize: 2 << 20, chunkSize: 1000))
        configs.append(Config(corpus: .long, threads: 4, pieceSize: 4096, chunkSize: LineReader.chunkSize))
        return configs
    }()

    @Test("same result as one thread", arguments: configs)
    func matchesSingleThread(_ config: Config) throws {
        let corpus = Self.corpus(config.corpus)
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("events.ndjson", corpus.bytes)
            let expected = try Self.reference(corpus, path: path)
            let got = AggregationSummary(try runAggregator([path], threads: config.threads, pieceSize: config.pieceSize,
                                                           chunkSize: config.chunkSize))
            #expect(got == expected, "\(got.difference(from: expected) ?? "")")
        }
    }

    // MARK: Split points at, before and after line ends

    /// Piece sizes whose first split falls exactly on a `\n`, one byte before it, one byte after
    /// it (the start of the next line), and in the middle of a long line.
    static func splitSizes(_ corpus: EventCorpus, picks: [Int]) -> [Int64] {
        var sizes: Set<Int64> = []
        for pick in picks where pick < corpus.newlineOffsets.count {
            let nl = Int64(corpus.newlineOffsets[pick])
            sizes.formUnion([nl - 1, nl, nl + 1, nl + 2].filter { $0 > 0 })
        }
        return sizes.sorted()
    }

    @Test func splitsAroundLineEndsInShortLines() throws {
        let corpus = Self.mixed
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("events.ndjson", corpus.bytes)
            let expected = try Self.reference(corpus, path: path)
            for size in Self.splitSizes(corpus, picks: [0, 1, 2, 5, 40, 333]) {
                for chunk in [64, LineReader.chunkSize] {
                    let got = AggregationSummary(try runAggregator([path], threads: 4, pieceSize: size, chunkSize: chunk))
                    #expect(got == expected, "piece \(size) chunk \(chunk): \(got.difference(from: expected) ?? "")")
                }
            }
        }
    }

    @Test func splitsAroundAndInsideLongLines() throws {
        let corpus = Self.long
        // The long lines are the ones longer than 50 KB; pick the newline ending each, and the
        // one before it (which starts the long line).
        var picks: [Int] = []
        var previous = -1
        for (index, nl) in corpus.newlineOffsets.enumerated() {
            if nl - previous > 50_000 { picks += [index - 1, index] }
            previous = nl
        }
        #expect(picks.count == 8)
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("events.ndjson", corpus.bytes)
            let expected = try Self.reference(corpus, path: path)
            var sizes = Self.splitSizes(corpus, picks: picks)
            // Inside each long line.
            for index in picks where index >= 0 && index % 2 == 1 {
                sizes.append(Int64(corpus.newlineOffsets[index]) - 10_000)
            }
            for size in sizes {
                let got = AggregationSummary(try runAggregator([path], threads: 4, pieceSize: size, chunkSize: 1 << 18))
                #expect(got == expected, "piece \(size): \(got.difference(from: expected) ?? "")")
            }
        }
    }

    // MARK: Several files

    @Test(arguments: [(1, nil), (2, 64), (4, 7), (4, 4096), (3, nil)] as [(Int, Int64?)])
    func multipleFilesNumberLinesPerFile(threads: Int, pieceSize: Int64?) throws {
        // Each file has a handful of bad lines, so the first ten span all three.
        let corpora = [
            EventCorpus(seed: 21, .init(lineCount: 300, bom: true, finalNewline: false, badEvery: 80, blankEvery: 20)),
            EventCorpus(seed: 22, .init(lineCount: 200, bom: false, finalNewline: true, badEvery: 60, blankEvery: 20)),
            EventCorpus(seed: 23, .init(lineCount: 400, bom: true, finalNewline: true, badEvery: 50, blankEvery: 20)),
        ]
        try ScratchDirectory.with { dir throws in
            let paths = try corpora.enumerated().map { try dir.write("part-\($0.offset).ndjson", $0.element.bytes) }
            let got = AggregationSummary(try runAggregator(paths, threads: threads, pieceSize: pieceSize, chunkSize: 64))

            var expectedBad: [(path: String, line: Int, prefix: String)] = []
            var expectedCounts: [[UInt8]: JokeCounts] = [:]
            for (path, corpus) in zip(paths, corpora) {
                expectedBad += corpus.expectedBadLines.map { (path, $0.line, $0.prefix) }
                for (id, counts) in corpus.expectedCounts { expectedCounts[id, default: JokeCounts()].merge(counts) }
            }
            #expect(Set(expectedBad.prefix(10).map(\.path)).count == 3, "the corpus should spread bad lines over every file")
            #expect(got.badLineCount == expectedBad.count)
            #expect(got.firstBadLines.count == 10)
            for (g, e) in zip(got.firstBadLines, expectedBad) {
                #expect(g.path == e.path && g.line == e.line && g.reason.hasPrefix(e.prefix), "\(g) expected \(e)")
            }
            #expect(got.jokes.count == expectedCounts.count)
            for joke in got.jokes where expectedCounts[joke.id] != joke.counts {
                Issue.record("joke \(joke.id): \(joke.counts) expected \(String(describing: expectedCounts[joke.id]))")
            }
        }
    }

    /// A directory expands to its export files in byte order, named `DIR/name`.
    @Test func directoryInputNamesEachFile() throws {
        try ScratchDirectory.with { dir throws in
            try FileManager.default.createDirectory(atPath: dir.path("exports"), withIntermediateDirectories: false)
            try dir.write("exports/b.ndjson", Array("[1]\n".utf8))
            try dir.write("exports/a.jsonl.gz", try ScratchDirectory.gzip(Array("{\"joke_id\":\"x\",\"rating\":5}\n{}\n".utf8)))
            try dir.write("exports/.hidden.ndjson", Array("[2]\n".utf8))
            try dir.write("exports/notes.txt", Array("[3]\n".utf8))
            try dir.write("exports/B.json", Array("\n\n[4]".utf8))
            let got = AggregationSummary(try runAggregator([dir.path("exports")], threads: 2, pieceSize: 1))
            let base = dir.path("exports")
            #expect(got.firstBadLines.map(\.path) == [base + "/B.json", base + "/a.jsonl.gz", base + "/b.ndjson"])
            #expect(got.firstBadLines.map(\.line) == [3, 2, 1])
            #expect(got.totals.hilarious == 1)
        }
    }

    // MARK: gzip

    @Test func gzipGivesTheSameResultAsPlainText() throws {
        for corpus in [Self.mixed, Self.long] {
            try ScratchDirectory.with { dir throws in
                let plain = try dir.write("events.ndjson", corpus.bytes)
                let gz = try dir.write("events.ndjson.gz", try ScratchDirectory.gzip(corpus.bytes))
                let expected = try Self.reference(corpus, path: plain)
                for (threads, chunk) in [(1, LineReader.chunkSize), (4, 64), (2, 1000)] {
                    let got = AggregationSummary(try runAggregator([gz], threads: threads, pieceSize: 4096, chunkSize: chunk))
                        .renamingPaths([gz: plain])
                    #expect(got == expected, "threads \(threads) chunk \(chunk): \(got.difference(from: expected) ?? "")")
                }
            }
        }
    }

    @Test func multiMemberGzipEqualsConcatenatedText() throws {
        let parts = [
            EventCorpus(seed: 31, .init(lineCount: 500, bom: true, finalNewline: true)).bytes,
            [],
            EventCorpus(seed: 32, .init(lineCount: 700, bom: false, finalNewline: true, badEvery: 7)).bytes,
            Array("{\"joke_id\":\"tail\",\"rating\":5}".utf8), // no final newline
        ]
        try ScratchDirectory.with { dir throws in
            let plain = try dir.write("all.ndjson", parts.flatMap { $0 })
            let members = try parts.map { try ScratchDirectory.gzip($0) }
            let gz = try dir.write("all.ndjson.gz", members.flatMap { $0 })
            let expected = AggregationSummary(try runAggregator([plain], threads: 1))
            #expect(expected.badLineCount > 0)
            for chunk in [16, 4096, LineReader.chunkSize] {
                let got = AggregationSummary(try runAggregator([gz], threads: 2, chunkSize: chunk)).renamingPaths([gz: plain])
                #expect(got == expected, "chunk \(chunk): \(got.difference(from: expected) ?? "")")
            }
            // Many small members, split mid-line: gzip members need not end at line ends.
            let text = parts.flatMap { $0 }
            var manyMembers: [UInt8] = []
            var start = 0
            while start < text.count {
                let end = min(text.count, start + 997)
                manyMembers += try ScratchDirectory.gzip(Array(text[start..<end]))
                start = end
            }
            let many = try dir.write("many.ndjson.gz", manyMembers)
            let got = AggregationSummary(try runAggregator([many], threads: 1, chunkSize: 64)).renamingPaths([many: plain])
            #expect(got == expected, "\(got.difference(from: expected) ?? "")")
        }
    }

    static func expectCorrupt(_ bytes: [UInt8], _ label: String, dir: ScratchDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = try dir.write("bad-\(label).ndjson.gz", bytes)
        let ok = try dir.write("ok.ndjson", Array("{\"joke_id\":\"a\",\"rating\":5}\n".utf8))
        for paths in [[path], [ok, path]] {
            do {
                let result = try runAggregator(paths, threads: 2)
                Issue.record("\(label): no error; \(AggregationSummary(result))", sourceLocation: sourceLocation)
            } catch let error as InputError {
                guard case .corruptGzip(let reported, let reason) = error else {
                    Issue.record("\(label): \(error)", sourceLocation: sourceLocation)
                    continue
                }
                #expect(reported == path, "\(label)", sourceLocation: sourceLocation)
                #expect(!reason.isEmpty, sourceLocation: sourceLocation)
            }
        }
    }

    @Test func corruptAndTruncatedGzipNameThePath() throws {
        let text = EventCorpus(seed: 41, .init(lineCount: 3000, bom: false, finalNewline: true)).bytes
        let gz = try ScratchDirectory.gzip(text)
        #expect(gz.count > 10_000)
        try ScratchDirectory.with { dir throws in
            var flipped = gz
            for i in stride(from: gz.count / 2, to: gz.count / 2 + 64, by: 1) { flipped[i] ^= 0xA5 }
            try Self.expectCorrupt(flipped, "flipped", dir: dir)
            var crc = gz
            crc[gz.count - 6] ^= 0xFF
            try Self.expectCorrupt(crc, "crc", dir: dir)
            try Self.expectCorrupt(Array(gz.dropLast(100)), "cut100", dir: dir)
            try Self.expectCorrupt(Array(gz.prefix(gz.count / 2)), "half", dir: dir)
            try Self.expectCorrupt(Array(gz.dropLast(1)), "cut1", dir: dir)
            try Self.expectCorrupt(Array(gz.dropLast(8)), "no-trailer", dir: dir)
            try Self.expectCorrupt(Array(gz.prefix(10)), "header-only", dir: dir)
            try Self.expectCorrupt(Array(gz.prefix(2)), "magic-only", dir: dir)
            try Self.expectCorrupt(gz + Array("not gzip\n".utf8), "trailing-garbage", dir: dir)
            // A whole member then a cut one.
            try Self.expectCorrupt(gz + Array(gz.prefix(gz.count / 3)), "second-member-cut", dir: dir)
        }
    }

    // MARK: LineReader directly

    /// An in-memory source that returns at most `step` bytes per read.
    struct MemorySource: ByteSource {
        let bytes: [UInt8]
        let step: Int
        var position = 0
        var bytesConsumed: Int64 { Int64(position) }
        mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
            let n = min(count, step, bytes.count - position)
            if n > 0 { bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + position, byteCount: n) } }
            position += n
            return n
        }
    }

    struct Collector: LineConsumer {
        var lines: [(bytes: [UInt8], number: Int, offset: Int64)] = []
        var sentinelsOK = true
        mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
            if end.pointee != 0x0A { sentinelsOK = false }
            lines.append((Array(UnsafeBufferPointer(start: start, count: end - start)), number, offset))
        }
        mutating func overlongLine(number: Int, offset: Int64) { Issue.record("overlong line \(number)") }
    }

    static func readLines(_ bytes: [UInt8], chunkSize: Int, step: Int = .max) throws -> Collector {
        var source = MemorySource(bytes: bytes, step: step)
        var collector = Collector()
        let reader = LineReader(chunkSize: chunkSize)
        let count = try reader.read(&source, into: &collector)
        #expect(count == collector.lines.count)
        #expect(collector.sentinelsOK)
        return collector
    }

    /// What a correct reader hands out: split at `\n`, a BOM dropped at the start only, a last
    /// line without `\n` still counted.
    static func expectedLines(_ bytes: [UInt8]) -> [(bytes: [UInt8], offset: Int64)] {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var out: [([UInt8], Int64)] = []
        var i = start
        while i < bytes.count {
            if bytes[i] == 0x0A {
                out.append((Array(bytes[start..<i]), Int64(start)))
                start = i + 1
            }
            i += 1
        }
        if start < bytes.count { out.append((Array(bytes[start...]), Int64(start))) }
        return out
    }

    @Test func lineReaderHandsOutLinesMuchLongerThanItsChunk() throws {
        var rng = SplitMix64(seed: 51)
        var text: [UInt8] = [0xEF, 0xBB, 0xBF]
        for size in [0, 1, 15, 16, 17, 63, 64, 65, 1000, 10_000, 100_000, 5, 250_000, 3] {
            text += (0..<size).map { _ in UInt8.random(in: 0x20...0x7E, using: &rng) }
            text += Bool.random(using: &rng) ? [0x0D, 0x0A] : [0x0A]
        }
        text += Array("last line without newline".utf8)
        let expected = Self.expectedLines(text)
        for (chunk, step) in [(16, Int.max), (16, 1), (16, 7), (64, 100), (1000, Int.max), (LineReader.chunkSize, 3)] {
            let got = try Self.readLines(text, chunkSize: chunk, step: step)
            #expect(got.lines.count == expected.count, "chunk \(chunk) step \(step)")
            for (index, (g, e)) in zip(got.lines, expected).enumerated() {
                #expect(g.bytes == e.bytes && g.offset == e.offset && g.number == index + 1,
                        "chunk \(chunk) step \(step) line \(index + 1): \(g.bytes.count) bytes at \(g.offset), expected \(e.bytes.count) at \(e.offset)")
            }
        }
    }

    @Test func lineReaderEdgeCases() throws {
        func lines(_ bytes: [UInt8], chunk: Int = 16) throws -> [[UInt8]] { try Self.readLines(bytes, chunkSize: chunk).lines.map(\.bytes) }
        #expect(try lines([]) == [])
        #expect(try lines([0x0A]) == [[]])
        #expect(try lines([0x0A, 0x0A]) == [[], []])
        #expect(try lines(Array("a\r\nb".utf8)) == [Array("a\r".utf8), Array("b".utf8)])
        #expect(try lines([0xEF, 0xBB, 0xBF]) == [])
        #expect(try lines([0xEF, 0xBB, 0xBF, 0x0A]) == [[]])
        #expect(try lines([0xEF, 0xBB]) == [[0xEF, 0xBB]])
        #expect(try lines(Array("x\n\u{FEFF}y\n".utf8)) == [Array("x".utf8), Array("\u{FEFF}y".utf8)])
        #expect(try lines([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF, 0x41]) == [[0xEF, 0xBB, 0xBF, 0x41]])
        // Exactly one chunk, and one chunk plus one byte.
        let sixteen = [UInt8](repeating: 0x61, count: 15) + [0x0A]
        #expect(try lines(sixteen + sixteen) == [Array(sixteen.dropLast()), Array(sixteen.dropLast())])
        #expect(try lines([UInt8](repeating: 0x62, count: 16)) == [[UInt8](repeating: 0x62, count: 16)])
        #expect(try lines([UInt8](repeating: 0x62, count: 17)) == [[UInt8](repeating: 0x62, count: 17)])
        // A NUL byte is just a byte.
        #expect(try lines([0x00, 0x0A, 0x00]) == [[0x00], [0x00]])
    }
}
