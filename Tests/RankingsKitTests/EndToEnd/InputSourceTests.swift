import Foundation
import Testing

/// Where events come from: stdin, several files, and directories.
@Suite("Input sources")
struct InputSourceTests {
    @Test func readsStdinAndNamesItDashInBadLines() throws {
        let input = eventLine("a", "5") + "{oops}\n" + eventLine("a", "4")
        let result = try RankingsBinary.run(["aggregate", "--max-invalid", "1", "-q", "--computed-at", fixedComputedAt, "-"],
                                            stdin: Data(input.utf8))
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        var reference = ReferenceAggregator()
        reference.add(file: Array(input.utf8), path: "-")
        #expect(Array(result.stdout) == reference.document(top: 10, computedAt: fixedComputedAt))
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrLines.first?.hasPrefix("-:2: malformed JSON: ") == true, "\(result.stderrText)")
    }

    @Test func combinesStdinWithFilesAndCountsLinesPerInput() throws {
        try ScratchDirectory.with { dir in
            let first = try dir.write("first.ndjson", eventLine("a", "5") + "bad\n")
            let last = try dir.write("last.ndjson", "\n[]\n" + eventLine("b", "1"))
            let result = try RankingsBinary.run(["aggregate", "--max-invalid", "3", "-q", "--computed-at", fixedComputedAt,
                                                 first, "-", last],
                                                stdin: Data((eventLine("a", "4") + "{\"rating\": 5}\n").utf8))
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            let places: [String] = result.stderrLines.map { String($0.prefix(while: { $0 != " " })) }
            #expect(places == ["\(first):2:", "-:2:", "\(last):2:"])
            #expect(result.stdoutText.contains("{\"joke_id\": \"a\", \"count\": 2, \"rank\": 1}"))
        }
    }

    /// One bad line per file makes stderr list the files read, in the order read.
    @Test func directoryReadsMatchingFilesInByteOrderOfName() throws {
        try ScratchDirectory.with { dir in
            let bad = eventLine("x", "5") + "not json\n"
            // Read, in byte order: upper case sorts before lower case; e + U+0301 (0x65) before é (0xC3).
            let read = ["B.json", "a.json", "a.jsonl", "a.ndjson", "b-1.ndjson", "e\u{301}.ndjson", "\u{E9}.ndjson"]
            for name in read { try dir.write("in/\(name)", bad) }
            // Skipped: hidden, other extensions, and anything in a subdirectory.
            for name in [".hidden.ndjson", ".ndjson", "notes.txt", "a.ndjson.bak", "json", "sub/deep.ndjson"] {
                try dir.write("in/\(name)", "garbage that would fail the run\n")
            }
            let result = try RankingsBinary.run(["aggregate", "--max-invalid", "7", "-q", "--computed-at", fixedComputedAt, "in"],
                                                directory: dir.url)
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            let named = result.stderrLines.map { String($0.prefix(while: { $0 != ":" })) }
            #expect(named == read.map { "in/\($0)" })
            for line in result.stderrLines { #expect(line.contains(":2: malformed JSON: "), "\(line)") }
            #expect(result.stdoutText.contains("{\"joke_id\": \"x\", \"count\": 7, \"rank\": 1}"))
        }
    }

    @Test func directoryAndFileInputsCanBeMixed() throws {
        try ScratchDirectory.with { dir in
            try dir.write("in/one.ndjson", eventLine("a", "5"))
            let loose = try dir.write("loose.ndjson", eventLine("a", "5"))
            let result = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, dir.path("in"), loose])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stdoutText.contains("{\"joke_id\": \"a\", \"count\": 2, \"rank\": 1}"))
        }
    }

    @Test func inputBytesCountEveryByteRead() throws {
        try ScratchDirectory.with { dir in
            let text = "\u{FEFF}" + eventLine("a", "5") + "\r\n  \n" + eventLine("b", "1")
            let input = try dir.write("events.ndjson", text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--report", dir.path("r.json"), input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(try ReportFile.counts(at: dir.path("r.json")).inputBytes == text.utf8.count)
        }
    }
}
