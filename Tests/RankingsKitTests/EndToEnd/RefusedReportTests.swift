import Foundation
import Testing

/// `--report`'s `refused`: every bad line, in input order, with its document, its reason, its
/// joke id and the kind Firestore's range filters would put it in, so that the night's proof
/// adds exactly the refused documents Firestore's COUNTs still match. The reports are compared
/// as text, whole, but for the run's `seconds`.
@Suite("Run report: refused lines")
struct RefusedReportTests {
    static let prefix = "projects/p/databases/(default)/documents/"

    /// The report's text with its `seconds` value replaced, so it compares exactly.
    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
            .replacing(#/"seconds": [0-9]+\.[0-9]{3},/#, with: "\"seconds\": S,")
    }

    /// The whole report a run should write: the counts in their order, then `refused`.
    static func report(_ counts: [(String, Int)], refused: [String]) -> String {
        var text = "{\n"
        for (key, value) in counts {
            text += "  \"\(key)\": \(value),\n"
            if key == "input_bytes" { text += "  \"seconds\": S,\n" }
        }
        text += "  \"refused\": [" + (refused.isEmpty ? "]\n" : "\n    " + refused.joined(separator: ",\n    ") + "\n  ]\n")
        return text + "}\n"
    }

    static func counts(valid: Int, counted: Int? = nil, filtered: Int = 0, hilarious: Int, horrible: Int, neutral: Int = 0,
                       bad: Int, leftOut: Int = 0, replaced: Int = 0, jokes: Int, bytes: Int, status: Int = 0) -> [(String, Int)] {
        [("valid_events", valid), ("counted_events", counted ?? valid - filtered), ("filtered_out", filtered),
         ("duplicates_removed", 0), ("hilarious", hilarious), ("horrible", horrible), ("neutral", neutral),
         ("bad_lines", bad), ("left_out_documents", leftOut), ("replaced_lines", replaced), ("distinct_jokes", jokes),
         ("input_bytes", bytes), ("exit_status", status)]
    }

    /// One entry as the report writes it; nil is JSON's null.
    static func entry(_ input: String, _ line: Int, document: String? = nil, _ reason: String, joke: String? = nil,
                      kind: String? = nil) -> String {
        func quoted(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "null" }
        return "{\"input\": \"\(input)\", \"line\": \(line), \"document\": \(quoted(document)), \"reason\": \"\(reason)\", "
            + "\"joke_id\": \(quoted(joke)), \"firestore_kind\": \(quoted(kind))}"
    }

    static func typed(_ name: String, _ fields: String) -> String {
        "{\"name\":\"\(name)\",\"fields\":{\(fields)}}\n"
    }

    static let long = String(repeating: "x", count: 1500)

    /// Flat records and typed documents mixed, one bad line of each kind the rules name.
    static let mixed = eventLine("a", "5")                                                           // 1: counted
        + "oops\n"                                                                                       // 2
        + eventLine("", "4")                                                                             // 3
        + "{\"rating\": 5}\n"                                                                            // 4
        + typed(prefix + "rating_events/E1", #""joke_id":{"stringValue":"j"},"rating":{"integerValue":"7"}"#)   // 5
        + typed(prefix + "rating_events/E2", #""joke_id":{"integerValue":"3"},"rating":{"doubleValue":1.5}"#)   // 6
        + "[1]\n"                                                                                        // 7
        + #"{"joke_id": "\ud800", "rating": 2}"# + "\n"                                                  // 8
        + #"{"joke_id": "j\u00e9", "rating": "5"}"# + "\n"                                               // 9
        + #"{"n\u0061me":"projects/p/databases/(default)/documents/rating_events/E\u0033","fields":{"joke_id":{"stringValue":"k"},"rating":{"integerValue":"0"}}}"# + "\n" // 10
        + typed("rating_events/E4", #""joke_id":{"stringValue":"j"},"rating":{"integerValue":"5"}"#)    // 11
        + eventLine(long, "1")                                                                           // 12
        + typed(prefix + "rating_events/E5", #""rating":{"integerValue":2}"#)                            // 13
        + eventLine("b", "true")                                                                         // 14
        + eventLine("c", "4.5e0").replacingOccurrences(of: "\"c\"", with: "7")                           // 15
        + typed(prefix + "jokes/j", #""joke_id":{"stringValue":"j"},"rating":{"integerValue":"5"}"#)    // 16: left out
        + typed(prefix + "rating_events/E6", #""joke_id":{"stringValue":"j"},"rating":{"booleanValue":true}"#) // 17
        + typed(prefix + "rating_events/E7", #""joke_id":{"stringValue":"j"},"rating":{"integerValue":4.5}"#)  // 18

    static func mixedRefused(_ input: String) -> [String] {
        [
            entry(input, 2, "malformed JSON: unexpected character at byte 1"),
            entry(input, 3, "invalid record: joke_id is empty", joke: "", kind: "hilarious"),
            entry(input, 4, "invalid record: no joke_id", kind: "hilarious"),
            entry(input, 5, document: prefix + "rating_events/E1", "invalid record: rating is not between 1 and 5", joke: "j"),
            entry(input, 6, document: prefix + "rating_events/E2", "invalid record: joke_id is not a string", kind: "horrible"),
            entry(input, 7, "invalid record: the line is not a JSON object"),
            entry(input, 8, "invalid record: joke_id has a lone surrogate escape", kind: "horrible"),
            entry(input, 9, "invalid record: rating is not a number", joke: "j\u{E9}"),
            entry(input, 10, document: prefix + "rating_events/E3", "invalid record: rating is not between 1 and 5", joke: "k"),
            // Not a document at all: no name, and no kind any Firestore query has.
            entry(input, 11, "invalid record: name is not a Firestore document path (projects/P/databases/D/documents/...)",
                  joke: "j"),
            entry(input, 12, "invalid record: joke_id is 1500 bytes: Firestore cannot query a value of 1,500 bytes or more",
                  joke: long, kind: "horrible"),
            entry(input, 13, document: prefix + "rating_events/E5", "invalid record: no joke_id", kind: "horrible"),
            entry(input, 14, "invalid record: rating is not a number", joke: "b"),
            entry(input, 15, "invalid record: joke_id is not a string", kind: "hilarious"),
            entry(input, 17, document: prefix + "rating_events/E6", "invalid record: rating is not a number", joke: "j"),
            entry(input, 18, document: prefix + "rating_events/E7", "invalid record: rating is not a number", joke: "j"),
        ]
    }

    @Test func flatAndTypedLinesAreEachNamed() throws {
        try ScratchDirectory.with { dir in
            let input = try dir.write("a.ndjson", Self.mixed)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "16", "--report", "report.json", "a.ndjson"],
                                                directory: dir.url)
            #expect(result.status == 0, "\(result.stderrText)")
            let expected = Self.report(Self.counts(valid: 1, hilarious: 1, horrible: 0, bad: 16, leftOut: 1, jokes: 1,
                                                   bytes: Self.mixed.utf8.count),
                                       refused: Self.mixedRefused("a.ndjson"))
            #expect(Self.text(try dir.read("report.json")) == expected)
            #expect(result.stderrLines.prefix(3) == ["a.ndjson:2: malformed JSON: unexpected character at byte 1",
                                                     "a.ndjson:3: invalid record: joke_id is empty",
                                                     "a.ndjson:4: invalid record: no joke_id"])
            _ = input
        }
    }

    /// A gzip input is named as given, its lines numbered as the plain file's.
    @Test func gzipLinesAreNamedAsThePlainFile() throws {
        try ScratchDirectory.with { dir in
            let gzipped = try ScratchDirectory.gzip(Array(Self.mixed.utf8))
            _ = try dir.write("a.json.gz", gzipped)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "16", "--report", "report.json", "a.json.gz"],
                                                directory: dir.url)
            #expect(result.status == 0, "\(result.stderrText)")
            let expected = Self.report(Self.counts(valid: 1, hilarious: 1, horrible: 0, bad: 16, leftOut: 1, jokes: 1,
                                                   bytes: gzipped.count),
                                       refused: Self.mixedRefused("a.json.gz"))
            #expect(Self.text(try dir.read("report.json")) == expected)
        }
    }

    /// With `--since`, a kind needs a Firestore Timestamp at or after it: firebase-admin's
    /// object or an RFC 3339 string in a flat record, a `timestampValue` in a typed one. A vote
    /// the window refuses for want of a timestamp is in no kind.
    @Test func sinceNeedsATimestampInTheWindow() throws {
        let after = #"{"_seconds": 1770000000, "_nanoseconds": 0}"#       // 2026-02-02T02:40:00Z
        let before = #"{"_seconds": 1760000000, "_nanoseconds": 0}"#      // 2025-10-09
        let input = eventLine("a", "5").replacingOccurrences(of: "}\n", with: ", \"timestamp\": \(after)}\n")   // 1: counted
            + "{\"rating\": 5, \"timestamp\": \(after)}\n"                                                      // 2
            + "{\"rating\": 5, \"timestamp\": \(before)}\n"                                                     // 3: filtered by Firestore
            + "{\"rating\": 1, \"timestamp\": \"2026-02-10T00:00:00Z\"}\n"                                      // 4
            + eventLine("j", "5")                                                                               // 5: no timestamp
            + "{\"joke_id\": \"j\", \"rating\": 2, \"timestamp\": \"yesterday\"}\n"                             // 6
            + Self.typed(Self.prefix + "rating_events/E1",
                         #""rating":{"integerValue":"4"},"timestamp":{"timestampValue":"2026-02-03T00:00:00Z"}"#)  // 7
            + Self.typed(Self.prefix + "rating_events/E2",
                         #""joke_id":{"stringValue":"j"},"rating":{"integerValue":"5"},"timestamp":{"stringValue":"2026-03-01T00:00:00Z"}"#) // 8
            + Self.typed(Self.prefix + "rating_events/E3",
                         #""joke_id":{"stringValue":"j"},"rating":{"integerValue":"6"},"timestamp":{"timestampValue":"2026-02-03T00:00:00Z"}"#) // 9
            + Self.typed(Self.prefix + "rating_events/E4",
                         #""rating":{"integerValue":"4"},"timestamp":{"timestampValue":"2026-01-03T00:00:00Z"}"#)  // 10
        try ScratchDirectory.with { dir in
            _ = try dir.write("a.ndjson", input)
            let result = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--since", "2026-02-01T00:00:00Z",
                                                 "--max-invalid", "9", "--report", "report.json", "a.ndjson"], directory: dir.url)
            #expect(result.status == 0, "\(result.stderrText)")
            let unreadable = "invalid record: timestamp {\\\"stringValue\\\":\\\"2026-03-01T00:00:00Z\\\"} is not an RFC 3339 string "
                + "or a {seconds, nanoseconds} object"
            let expected = Self.report(Self.counts(valid: 1, hilarious: 1, horrible: 0, bad: 9, jokes: 1, bytes: input.utf8.count),
                                       refused: [
                Self.entry("a.ndjson", 2, "invalid record: no joke_id", kind: "hilarious"),
                Self.entry("a.ndjson", 3, "invalid record: no joke_id"),
                Self.entry("a.ndjson", 4, "invalid record: no joke_id", kind: "horrible"),
                Self.entry("a.ndjson", 5, "invalid record: no timestamp (needed by --as-of/--since)", joke: "j"),
                Self.entry("a.ndjson", 6, "invalid record: timestamp \\\"yesterday\\\" is not an RFC 3339 string or a "
                           + "{seconds, nanoseconds} object", joke: "j"),
                Self.entry("a.ndjson", 7, document: Self.prefix + "rating_events/E1", "invalid record: no joke_id", kind: "hilarious"),
                Self.entry("a.ndjson", 8, document: Self.prefix + "rating_events/E2", unreadable, joke: "j"),
                Self.entry("a.ndjson", 9, document: Self.prefix + "rating_events/E3", "invalid record: rating is not between 1 and 5",
                           joke: "j"),
                Self.entry("a.ndjson", 10, document: Self.prefix + "rating_events/E4", "invalid record: no joke_id"),
            ])
            #expect(Self.text(try dir.read("report.json")) == expected)
        }
    }

    /// `--as-of` bounds the kind from above as `--since` from below; `--week` asks for the
    /// week's id as a string.
    @Test func asOfAndWeekBoundTheKindToo() throws {
        func kinds(_ arguments: [String], _ input: String) throws -> [String?] {
            try ScratchDirectory.with { dir in
                _ = try dir.write("a.ndjson", input)
                let result = try RankingsBinary.run(["aggregate", "-q", "--allow-empty", "--max-invalid", "100",
                                                     "--report", "report.json"] + arguments + ["a.ndjson"], directory: dir.url)
                #expect(result.status == 0, "\(result.stderrText)")
                let refused = try ReportFile.object(at: dir.path("report.json"))["refused"] as? [[String: Any]] ?? []
                return refused.map { $0["firestore_kind"] as? String }
            }
        }
        let asOf = "{\"rating\": 5, \"timestamp\": \"2026-02-01T00:00:00Z\"}\n"
            + "{\"rating\": 5, \"timestamp\": \"2026-02-01T00:00:00.000000001Z\"}\n"
            + "{\"rating\": 2, \"timestamp\": {\"seconds\": 1769904000}}\n"
        #expect(try kinds(["--as-of", "2026-02-01T00:00:00Z"], asOf) == ["hilarious", nil, "horrible"])
        let week = "{\"rating\": 5, \"week_id\": \"2026-W07\"}\n" + "{\"rating\": 5, \"week_id\": \"2026-w07\"}\n"
            + "{\"rating\": 5}\n" + "{\"rating\": 1, \"week_id\": \"2026-W\\u0030\\u0037\"}\n"
            + Self.typed(Self.prefix + "rating_events/E", #""rating":{"integerValue":"1"},"week_id":{"stringValue":"2026-W07"}"#)
            + Self.typed(Self.prefix + "rating_events/F", #""rating":{"integerValue":"1"},"week_id":"2026-W07""#)
        #expect(try kinds(["--week", "2026-W07"], week) == ["hilarious", nil, nil, "horrible", "horrible", nil])
        #expect(try kinds([], week) == ["hilarious", "hilarious", "hilarious", "horrible", "horrible", "horrible"])
    }

    /// A layered night folder is listed in input order: its files in byte order of name (so
    /// `STEM.changes-NNNNNN.ndjson` before `STEM.ndjson`), lines in order, each line in the file
    /// that holds it; a bad line a later change replaces is no longer bad, so not listed.
    @Test func aLayeredFolderListsItsFilesInInputOrder() throws {
        typealias L = LayeredFolderTests
        var night = L.night
        night[0].1 += L.unrated("E8", "j8")
        let files = night.map { ($0.0, Array($0.1.utf8)) }
        let run = try L.run(files, ["-q", "--max-invalid", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let refused = run.report?["refused"] as? [[String: Any]] ?? []
        #expect(refused.map { $0["input"] as? String } == ["night/rating_events.changes-000002.ndjson", "night/rating_events.ndjson"])
        #expect(refused.map { $0["line"] as? Int } == [3, 7])
        #expect(refused.map { $0["document"] as? String } == [L.prefix + "E4", L.prefix + "E8"])
        #expect(refused.map { $0["joke_id"] as? String } == ["j4", "j8"])
        #expect(refused.map { $0["reason"] as? String } == ["invalid record: rating is not between 1 and 5", "invalid record: no rating"])
        #expect(refused.map { $0["firestore_kind"] is NSNull } == [true, true])
        #expect(run.count("bad_lines") == 2)
        #expect(run.count("replaced_lines") == 5)
    }

    /// The emulator's own export: each bad entity named by the document its key gives.
    @Test func aManagedExportNamesEachEntitysDocument() throws {
        try ScratchDirectory.with { dir in
            let root = try ExportFixtures.exportRoot(ExportFixtures.emulator)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "100", "--report", dir.path("report.json"),
                                                 "-o", dir.path("all_time.json"), root.path])
            #expect(result.status == 0, "\(result.stderrText)")
            let refused = try ReportFile.object(at: dir.path("report.json"))["refused"] as? [[String: Any]] ?? []
            #expect(refused.count == 18)
            let output = root.path + "/all_namespaces/all_kinds/output-0"
            #expect(Set(refused.map { $0["input"] as? String }) == [output])
            let document = "projects/rankings-fixture/databases/(default)/documents/rating_events/"
            let byName = Dictionary(uniqueKeysWithValues: refused.map {
                (($0["document"] as? String ?? "").replacingOccurrences(of: document, with: ""), $0)
            })
            #expect(byName.count == 18, "every entry names its document: \(refused)")
            func kind(_ name: String) -> String? { byName[name]?["firestore_kind"] as? String }
            func joke(_ name: String) -> String? { byName[name]?["joke_id"] as? String }
            #expect(kind("bad-no-joke") == "hilarious" && joke("bad-no-joke") == nil)
            #expect(kind("bad-empty-joke") == "hilarious" && joke("bad-empty-joke") == "")
            #expect(kind("bad-int-joke") == "hilarious")
            for name in ["bad-six", "bad-zero", "bad-nan", "bad-string", "bad-bool", "bad-null", "bad-map", "bad-array",
                         "bad-timestamp", "bad-no-rating"] {
                #expect(kind(name) == nil && joke(name) == "j1", "\(name)")
            }
            let lines = refused.compactMap { $0["line"] as? Int }
            #expect(lines.count == 18 && lines == lines.sorted())
            #expect(byName["bad-six"]?["reason"] as? String == "invalid record: rating is not between 1 and 5")
        }
    }

    /// In a managed export too, `--since` asks a timestamp property within the window, and a
    /// vote the window refuses (no timestamp) is named by its document, in no kind.
    @Test func aManagedExportUnderSince() throws {
        typealias P = TestEntity.Property
        func stamp(_ seconds: Int64) -> P { P(name: "timestamp", value: .integer(seconds * 1_000_000), meaning: 7) }
        func entity(_ id: String, _ properties: [P]) -> [UInt8] {
            TestEntity.encode(path: [("rating_events", .name(id))], properties, app: "s~jokes-app")
        }
        let joke = P(name: "joke_id", value: .string(Array("j1".utf8))), five = P(name: "rating", value: .integer(5))
        try ScratchDirectory.with { dir in
            let root = dir.url.appendingPathComponent("export")
            let outputs = try TestExport.write(at: root, outputs: [[
                entity("counted", [joke, five, stamp(1_770_000_000)]),
                entity("no-time", [joke, five]),
                entity("no-joke-in", [five, stamp(1_770_000_000)]),
                entity("no-joke-before", [five, stamp(1_760_000_000)]),
                entity("no-joke-text", [P(name: "rating", value: .double(1.5)),
                                        P(name: "timestamp", value: .string(Array("2026-02-10T00:00:00Z".utf8)))]),
            ]])
            let result = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--since", "2026-02-01T00:00:00Z",
                                                 "--max-invalid", "4", "--report", dir.path("report.json"), root.path])
            #expect(result.status == 0, "\(result.stderrText)")
            let document = "projects/jokes-app/databases/(default)/documents/rating_events/"
            let text = Self.text(try dir.read("report.json"))
            let refused = text.components(separatedBy: "\"refused\": [\n    ").last ?? ""
            #expect(refused == [
                Self.entry(outputs[0], 2, document: document + "no-time", "invalid record: no timestamp (needed by --as-of/--since)",
                           joke: "j1"),
                Self.entry(outputs[0], 3, document: document + "no-joke-in", "invalid record: no joke_id", kind: "hilarious"),
                Self.entry(outputs[0], 4, document: document + "no-joke-before", "invalid record: no joke_id"),
                Self.entry(outputs[0], 5, document: document + "no-joke-text", "invalid record: no joke_id"),
            ].joined(separator: ",\n    ") + "\n  ]\n}\n")
        }
    }

    /// A run refused for more bad lines than `--max-invalid N` lists the first N + 1 (at least
    /// the ten stderr shows): the lines within its limit and the one past it.
    @Test func aRunWithTooManyBadLinesListsTheFirstNPlusOne() throws {
        let input = (1...30).map { "{\"rating\": \($0 % 5 + 1), \"n\": \($0)}\n" }.joined()
        for (limit, listed) in [(0, 10), (9, 10), (12, 13), (29, 30), (30, 30)] {
            try ScratchDirectory.with { dir in
                _ = try dir.write("a.ndjson", input)
                let result = try RankingsBinary.run(["aggregate", "-q", "--allow-empty", "--max-invalid", String(limit),
                                                     "--report", "report.json", "a.ndjson"], directory: dir.url)
                #expect(result.status == (limit >= 30 ? 0 : 65), "\(result.stderrText)")
                let report = try ReportFile.object(at: dir.path("report.json"))
                let refused = report["refused"] as? [[String: Any]] ?? []
                #expect(refused.map { $0["line"] as? Int } == (1...listed).map { Optional($0) }, "--max-invalid \(limit)")
                #expect(report["bad_lines"] as? Int == 30)
            }
        }
    }

    /// Threads cut a large file into pieces: the list is the same, byte for byte, at any count.
    @Test func theListDoesNotDependOnThreads() throws {
        var text = ""
        var bad = 0
        var n = 0
        // About 24 MB, so two threads split it (pieces are at least 8 MiB); a bad line of
        // each kind every few thousand lines, some near where pieces may fall.
        while text.utf8.count < 24 << 20 {
            n += 1
            if n % 2_999 == 0 {
                bad += 1
                switch bad % 4 {
                case 0: text += "{\"joke_id\": \"j\(n)\", \"rating\": 9}\n"
                case 1: text += "{\"rating\": \(bad % 5 + 1), \"at\": \(n)}\n"
                case 2: text += Self.typed(Self.prefix + "rating_events/E\(n)", #""joke_id":{"stringValue":"k"},"rating":{"integerValue":"0"}"#)
                default: text += "not json \(n)\n"
                }
            } else {
                text += "{\"joke_id\": \"joke-\(n % 997)\", \"rating\": \(n % 5 + 1), \"device_id\": \"D\(n % 1013)\", \"pad\": \"0123456789\"}\n"
            }
        }
        let input = text
        let badLines = bad
        try ScratchDirectory.with { dir in
            _ = try dir.write("big.ndjson", input)
            var reports: [String] = []
            for threads in ["1", "2", "3"] {
                let result = try RankingsBinary.run(["aggregate", "-q", "--threads", threads, "--max-invalid", String(badLines),
                                                     "--report", "report-\(threads).json", "-o", "doc.json", "big.ndjson"],
                                                    directory: dir.url)
                #expect(result.status == 0, "\(result.stderrText)")
                reports.append(Self.text(try dir.read("report-\(threads).json")))
            }
            #expect(reports[1] == reports[0])
            #expect(reports[2] == reports[0])
            let refused = try ReportFile.object(at: dir.path("report-2.json"))["refused"] as? [[String: Any]] ?? []
            #expect(refused.count == badLines)
            #expect(refused.map { $0["line"] as? Int } == (1...badLines).map { Optional($0 * 2_999) })
        }
    }

    /// A run without bad lines has an empty list.
    @Test func noBadLinesNoEntries() throws {
        try ScratchDirectory.with { dir in
            let input = eventLine("a", "5")
            _ = try dir.write("a.ndjson", input)
            let result = try RankingsBinary.run(["aggregate", "-q", "--report", "report.json", "a.ndjson"], directory: dir.url)
            #expect(result.status == 0)
            #expect(Self.text(try dir.read("report.json"))
                    == Self.report(Self.counts(valid: 1, hilarious: 1, horrible: 0, bad: 0, jokes: 1, bytes: input.utf8.count), refused: []))
        }
    }
}
