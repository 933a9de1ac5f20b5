import Foundation
import Testing

/// What goes to stderr: the first ten bad lines by `PATH:LINE`, a count of the rest, and one
/// summary line unless `--quiet`.
@Suite("Diagnostics on stderr")
struct DiagnosticsTests {
    /// 13 bad lines, alternating kinds, between good ones.
    static func thirteenBadLines() -> (text: String, bad: [(line: Int, kind: String)]) {
        var text = "", bad: [(Int, String)] = []
        for i in 0..<13 {
            text += eventLine("a", "5")
            if i % 2 == 0 { text += "{\"joke_id\": \"a\",}\n"; bad.append((2 * i + 2, "malformed JSON: ")) }
            else { text += "{\"joke_id\": \"a\"}\n"; bad.append((2 * i + 2, "invalid record: ")) }
        }
        return (text, bad)
    }

    /// A file name with a newline (or a terminal escape) cannot forge a line of the log: every
    /// path is printed with its control characters escaped, in bad-line reports and in errors.
    @Test func controlCharactersInPathsAreEscaped() throws {
        try ScratchDirectory.with { dir in
            let forged = "x.ndjson\nrankings: 0 bad lines\u{1B}[2J"
            let input = try dir.write(forged, eventLine("a", "5") + "nope\n")
            let bad = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "1", input])
            #expect(bad.status == 0, "stderr: \(bad.stderrText)")
            let escaped = dir.path("x.ndjson\\nrankings: 0 bad lines\\x1B[2J")
            #expect(bad.stderrLines.count == 1 && bad.stderrLines[0].hasPrefix("\(escaped):2: malformed JSON"),
                    "stderr: \(bad.stderrText)")
            let missing = try RankingsBinary.run(["aggregate", "-q", dir.path("gone\n.ndjson")])
            #expect(missing.status == 66)
            #expect(missing.stderrLines.count == 1, "stderr: \(missing.stderrText)")
            #expect(missing.stderrText.contains("gone\\n.ndjson"), "stderr: \(missing.stderrText)")
        }
    }

    @Test func namesTheFirstTenThenCountsTheRest() throws {
        try ScratchDirectory.with { dir in
            let (text, bad) = Self.thirteenBadLines()
            let input = try dir.write("events.ndjson", text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "13", input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            let lines = result.stderrLines
            try #require(lines.count == 11, "stderr: \(result.stderrText)")
            for (line, expected) in zip(lines, bad.prefix(10)) {
                #expect(line.hasPrefix("\(input):\(expected.line): \(expected.kind)"), "\(line)")
            }
            #expect(lines[10] == "rankings: 3 more bad lines not shown")
        }
    }

    /// One of a thing is written in the singular: "1 bad line", "1 joke", "1 more bad line".
    @Test func oneOfAThingIsSingular() throws {
        try ScratchDirectory.with { dir in
            let one = try dir.write("one.ndjson", eventLine("a", "5") + "x\n")
            let result = try RankingsBinary.run(["aggregate", "--max-invalid", "1", one])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            let summary = try #require(result.stderrLines.last)
            #expect(summary.hasPrefix("rankings: 1 event (1 hilarious, 0 horrible, 0 neutral), 1 bad line, 1 joke, "),
                    "\(summary)")
            let refused = try RankingsBinary.run(["aggregate", "-q", one])
            #expect(refused.status == 65)
            #expect(refused.stderrLines.last == "rankings: error: 1 bad line, more than --max-invalid 0; nothing written")

            let eleven = try dir.write("eleven.ndjson", eventLine("a", "5") + String(repeating: "x\n", count: 11))
            let more = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "11", eleven])
            #expect(more.status == 0, "stderr: \(more.stderrText)")
            #expect(more.stderrLines.last == "rankings: 1 more bad line not shown")

            let idLine = "{\"id\": \"e1\", \"joke_id\": \"a\", \"rating\": 5}\n"
            let twice = try dir.write("twice.ndjson", idLine + idLine)
            let deduped = try RankingsBinary.run(["aggregate", "--dedupe", "id", twice])
            #expect(deduped.stderrLines.last?.contains(", 1 duplicate removed), ") == true, "\(deduped.stderrText)")

            let migrated = try RankingsBinary.run(["migrate", "--max-invalid", "1", "-o", dir.path("out.ndjson"), one])
            #expect(migrated.stderrLines.last == "rankings: 1 event written (1 unchanged, 0 rewritten to 5, "
                + "0 rewritten to 1), 0 neutral dropped, 1 bad line")
            let migrateMore = try RankingsBinary.run(["migrate", "-q", "--max-invalid", "11", "-o", dir.path("out.ndjson"),
                                                      eleven])
            #expect(migrateMore.stderrLines.last == "rankings: 1 more bad line not shown")
        }
    }

    @Test func failingRunStillNamesBadLinesAndExplains() throws {
        try ScratchDirectory.with { dir in
            let (text, bad) = Self.thirteenBadLines()
            let input = try dir.write("events.ndjson", text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "12", input])
            #expect(result.status == 65)
            #expect(result.stdout.isEmpty)
            let lines = result.stderrLines
            #expect(lines.first?.hasPrefix("\(input):\(bad[0].line): \(bad[0].kind)") == true, "\(result.stderrText)")
            #expect(lines.contains { $0.hasPrefix("rankings: ") && !$0.contains("more bad lines not shown") },
                    "an error line explains the failure: \(result.stderrText)")
        }
    }

    @Test func exactlyTenBadLinesHaveNoCountLine() throws {
        try ScratchDirectory.with { dir in
            let text = (0..<10).map { _ in "[]\n" }.joined() + eventLine("a", "5")
            let input = try dir.write("events.ndjson", text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "10", input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stderrLines.count == 10)
            #expect(result.stderrLines.allSatisfy { $0.contains(": invalid record: ") })
        }
    }

    /// Line numbers count every line of the file, blank or not, and a BOM or CRLF does not shift them.
    @Test func lineNumbersCountBlankLinesAndIgnoreBOMAndCRLF() throws {
        try ScratchDirectory.with { dir in
            let text = "\u{FEFF}" + "\r\n" + "  \t\r\n" + "\n" + "{bad}\r\n" + eventLine("a", "5") + "[1]"
            let input = try dir.write("events.ndjson", text)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "2", input])
            #expect(result.status == 0, "stderr: \(result.stderrText)")
            #expect(result.stderrLines.count == 2)
            #expect(result.stderrLines.first?.hasPrefix("\(input):4: malformed JSON: ") == true, "\(result.stderrText)")
            #expect(result.stderrLines.last?.hasPrefix("\(input):6: invalid record: ") == true, "\(result.stderrText)")
        }
    }

    @Test func quietCleanRunIsSilent() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", eventLine("a", "5"))
            for flag in ["-q", "--quiet"] {
                let result = try RankingsBinary.run(["aggregate", flag, input])
                #expect(result.status == 0)
                #expect(result.stderr.isEmpty, "stderr: \(result.stderrText)")
            }
        }
    }

    @Test func withoutQuietThereIsOneSummaryLine() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("events.ndjson", eventLine("a", "5") + "[]\n")
            let result = try RankingsBinary.run(["aggregate", "--max-invalid", "1", input])
            #expect(result.status == 0)
            #expect(result.stderrLines.count == 2, "stderr: \(result.stderrText)")
            #expect(result.stderrText.hasSuffix("\n"))
            #expect(result.stderrLines.first?.hasPrefix("\(input):2: invalid record: ") == true)
        }
    }
}
