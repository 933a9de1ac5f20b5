import Foundation
import Testing

/// `--dedupe device` and `--dedupe id`: which event wins, input order across files and
/// directories, what is a bad line in each mode, and that filters come first.
@Suite("Backfill: --dedupe")
struct DedupeTests {
    typealias E = Backfill

    func t(_ text: String) -> String { E.rfc(text) }

    // MARK: device

    @Test func latestTimestampWinsWhateverTheLineOrder() throws {
        let input = E.event("j", "1", device: "D", timestamp: t("2025-03-02T00:00:00Z"))
            + E.event("j", "5", device: "D", timestamp: t("2025-03-01T00:00:00Z"))
            + E.event("j", "1", device: "D", timestamp: "{\"_seconds\": 1740787200, \"_nanoseconds\": 1}") // 03-01 00:00:00.000000001
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [], horrible: [("j", 1)]))
        #expect(run.counts == [3, 1, 0, 2, 0])
        #expect(run.stderr.contains("2 duplicates removed"), "\(run.stderr)")
    }

    /// The three timestamp forms compare as instants: an RFC 3339 string with an offset against
    /// the object forms, to the nanosecond.
    @Test func formsCompareAsInstants() throws {
        let input = E.event("j", "5", device: "D", timestamp: t("2025-03-01T00:00:00.000000002+00:00"))
            + E.event("j", "1", device: "D", timestamp: "{\"seconds\": 1740787200, \"nanoseconds\": 1}")
            + E.event("k", "1", device: "D", timestamp: t("2025-02-28T19:00:00.5-05:00"))
            + E.event("k", "5", device: "D", timestamp: "{\"_seconds\": 1740787200, \"_nanoseconds\": 499999999}")
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [("j", 1)], horrible: [("k", 1)]))
    }

    /// Equal timestamps: the higher rating wins, whatever the order of files on the command
    /// line (0.3 let the later in input order win, so a REST fetch in name order and an
    /// export in its own order gave different documents).
    @Test func equalTimestampsHigherRatingWinsInEitherFileOrder() throws {
        let stamp = t("2025-03-01T00:00:00Z")
        let files = [("b.ndjson", E.event("j", "5", device: "D", timestamp: stamp)),
                     ("a.ndjson", E.event("j", "1", device: "D", timestamp: "{\"_seconds\": 1740787200}"))]
        let forward = try E.run(["--dedupe", "device"], files: files)
        #expect(forward.stdout == E.document(hilarious: [("j", 1)], horrible: []), "\(forward.stderr)")
        let backward = try E.run(["--dedupe", "device"], files: files, inputs: ["@in/a.ndjson", "@in/b.ndjson"])
        #expect(backward.stdout == forward.stdout, "\(backward.stderr)")
        #expect(backward.counts == [2, 1, 0, 1, 0])
        #expect(forward.counts == backward.counts)
    }

    /// Within a file, across a directory's files, from standard input: equal timestamps go to
    /// the higher rating, by value (4.5 beats 4, 2 beats 1.5), in any line order.
    @Test func equalTimestampsHigherRatingWinsInAnyLineOrder() throws {
        let stamp = t("2025-03-01T00:00:00Z")
        let lines = [E.event("j", "1", device: "D", timestamp: stamp), E.event("j", "4.5", device: "D", timestamp: stamp),
                     E.event("j", "4", device: "D", timestamp: stamp), E.event("k", "1.5", device: "D", timestamp: stamp),
                     E.event("k", "2", device: "D", timestamp: stamp), E.event("k", "1", device: "D", timestamp: stamp)]
        let expected = E.document(hilarious: [("j", 1)], horrible: [("k", 1)])
        for order in [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 0, 1, 4, 5, 3]] {
            let text = order.map { lines[$0] }.joined()
            let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", text)])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == expected, "order \(order)")
            #expect(run.counts == [6, 2, 0, 4, 0])
        }
        // Split over a directory's files (2.ndjson after 10.ndjson) and standard input.
        let files = [("dir/2.ndjson", lines[0] + lines[3]), ("dir/10.ndjson", lines[1] + lines[4])]
        let piped = try E.run(["--dedupe", "device"], files: files, inputs: ["@in/dir", "-"], stdin: lines[2] + lines[5])
        #expect(piped.stdout == expected, "\(piped.stderr)")
    }

    /// A device's latest vote is neutral: the joke gets no vote from it, though older votes were
    /// Hilarious; the neutral vote still counts as a counted event.
    @Test func neutralLatestVoteTakesTheVoteAway() throws {
        let input = E.event("j", "5", device: "D", timestamp: t("2025-01-01T00:00:00Z"))
            + E.event("j", "5", device: "D", timestamp: t("2025-01-08T00:00:00Z"))
            + E.event("j", "3", device: "D", timestamp: t("2025-01-15T00:00:00Z"))
            + E.event("j", "5", device: "E", timestamp: t("2025-01-01T00:00:00Z"))
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)], stats: true)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [("j", 1)], horrible: []))
        #expect(run.counts == [4, 2, 0, 2, 0])
        #expect(run.count("neutral") == 1 && run.count("hilarious") == 1)
        #expect(run.stats == Array(("{\"joke_id\": \"j\", \"hilarious\": 1, \"horrible\": 0, \"neutral\": 1, "
                                      + "\"ratings\": 2, \"mean_rating\": 4}\n").utf8))
    }

    /// Every device's only vote neutral: nothing to rank, but there were counted events, so the
    /// run succeeds with empty lists.
    @Test func onlyNeutralWinnersStillWriteADocument() throws {
        let input = E.event("j", "5", device: "D", timestamp: t("2025-01-01T00:00:00Z"))
            + E.event("j", "3", device: "D", timestamp: t("2025-01-02T00:00:00Z"))
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [], horrible: []))
        #expect(run.counts == [2, 1, 0, 1, 0])
    }

    /// A missing timestamp is no bad line: it loses to any readable one, even the earliest
    /// possible. An unreadable one is a bad line (issue 17, item 7): which vote wins would
    /// otherwise be a guess, and the message shows the value.
    @Test func unreadableTimestampIsABadLineMissingOneLoses() throws {
        let input = E.event("j", "1", device: "D", timestamp: "{\"_seconds\": -9223372036854775808}")
            + E.event("j", "5", device: "D")
            + E.event("j", "5", device: "D", timestamp: t("not a time"))
            + E.event("k", "1", device: "D", timestamp: "null")
            + E.event("k", "5", device: "D")
        let refused = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(refused.status == 65, "\(refused.stderr)")
        let run = try E.run(["--dedupe", "device", "--max-invalid", "2"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [("k", 1)], horrible: [("j", 1)]))
        #expect(run.counts == [3, 2, 0, 1, 2])
        #expect(run.stderr.contains(":3: invalid record: timestamp \"not a time\" is not an RFC 3339 string"), "\(run.stderr)")
        #expect(run.stderr.contains(":4: invalid record: timestamp null is not"), "\(run.stderr)")
        // With --as-of the missing one is bad too.
        let cut = try E.run(["--dedupe", "device", "--as-of", "2030-01-01T00:00:00Z", "--max-invalid", "10"],
                            files: [("a.ndjson", input)])
        #expect(cut.status == 0, "\(cut.stderr)")
        #expect(cut.stdout == E.document(hilarious: [], horrible: [("j", 1)]))
        #expect(cut.counts == [1, 1, 0, 0, 4])
    }

    /// The case of issue 17, item 7: BigQuery's text form must never let an older vote win
    /// silently. Whether it is read (another change parses it) or refused, the newer vote of
    /// device D is never replaced by the older one with exit 0.
    @Test func olderReadableVoteNeverBeatsANewerUnreadableOneSilently() throws {
        let input = E.event("j", "1", device: "D", timestamp: "{\"_seconds\": 1}")
            + E.event("j", "5", device: "D", timestamp: t("2026-02-12 10:00:00.000000 UTC+")) // no exporter's form
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("a.ndjson:2: invalid record: timestamp \"2026-02-12 10:00:00.000000 UTC+\""),
                "\(run.stderr)")
    }

    /// BigQuery's text is a readable timestamp: the newer vote in it wins over an older one in
    /// any other form, whatever the line order (0.2 read it as unreadable, so it always lost).
    @Test func bigQueryTimestampsCompareAsInstants() throws {
        let input = E.event("j", "5", device: "D", timestamp: t("2026-02-12 10:00:00.000000 UTC"))
            + E.event("j", "1", device: "D", timestamp: "{\"_seconds\": 1}")
            + E.event("k", "1", device: "D", timestamp: t("2026-02-12 10:00:00.000002 UTC"))
            + E.event("k", "5", device: "D", timestamp: t("2026-02-12T10:00:00.000001Z"))
            + E.event("m", "5", device: "D", timestamp: t("2026-02-12 10:00:00 UTC"))
            + E.event("m", "1", device: "D", timestamp: t("2026-02-12 09:59:59.999999-00:00"))
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [("j", 1), ("m", 1)], horrible: [("k", 1)]))
        // And --as-of reads them: the cut falls between k's two votes.
        let cut = try E.run(["--as-of", "2026-02-12T10:00:00.000001Z"], files: [("a.ndjson", input)])
        #expect(cut.status == 0, "\(cut.stderr)")
        #expect(cut.counts == [6, 5, 1, 0, 0])
    }

    /// Keys are (device_id, joke_id) by exact unescaped bytes.
    @Test func keysAreExactDeviceAndJoke() throws {
        let stamp = t("2025-01-01T00:00:00Z")
        let input = E.event("j", "5", device: "D", timestamp: stamp)
            + E.event("j", "5", device: "d", timestamp: stamp)
            + E.event("k", "5", device: "D", timestamp: stamp)
            + "{\"joke_id\": \"j\", \"rating\": 1, \"device_id\": \"\\u0044\", \"timestamp\": \(t("2025-01-02T00:00:00Z"))}\n"
        let run = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(run.stdout == E.document(hilarious: [("j", 1), ("k", 1)], horrible: [("j", 1)]), "\(run.stderr)")
        #expect(run.counts == [4, 3, 0, 1, 0])
    }

    @Test func missingDeviceIDIsABadLine() throws {
        let stamp = t("2025-01-01T00:00:00Z")
        let input = E.event("j", "5", device: "D", timestamp: stamp)
            + E.event("j", "1", timestamp: t("2026-01-01T00:00:00Z"))
            + "{\"joke_id\": \"j\", \"rating\": 1, \"device_id\": 7, \"timestamp\": \(t("2026-01-01T00:00:00Z"))}\n"
            + "{\"joke_id\": \"j\", \"rating\": 1, \"device_id\": null}\n"
        let strict = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(strict.status == 65)
        #expect(strict.stdout.isEmpty)
        #expect(strict.stderr.contains("a.ndjson:2: invalid record: no string device_id (needed by --dedupe device)"),
                "\(strict.stderr)")
        // Tolerated, they still take no part: the one good vote stands.
        let tolerant = try E.run(["--dedupe", "device", "--max-invalid", "3"], files: [("a.ndjson", input)])
        #expect(tolerant.status == 0, "\(tolerant.stderr)")
        #expect(tolerant.stdout == E.document(hilarious: [("j", 1)], horrible: []))
        #expect(tolerant.counts == [1, 1, 0, 0, 3])
    }

    /// A malformed or invalid line never displaces a vote, however late it claims to be.
    @Test func badLinesTakeNoPart() throws {
        let late = t("2030-01-01T00:00:00Z")
        let input = E.event("j", "5", device: "D", timestamp: t("2025-01-01T00:00:00Z"))
            + "{\"joke_id\": \"j\", \"rating\": 0, \"device_id\": \"D\", \"timestamp\": \(late)}\n"
            + "{\"joke_id\": \"j\", \"rating\": 1, \"device_id\": \"D\", \"timestamp\": \(late),}\n"
            + "{\"joke_id\": \"\", \"rating\": 1, \"device_id\": \"D\", \"timestamp\": \(late)}\n"
        let run = try E.run(["--dedupe", "device", "--max-invalid", "3"], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [("j", 1)], horrible: []))
        #expect(run.counts == [1, 1, 0, 0, 3])
    }

    /// Filters first: a later vote excluded by --as-of or --week cannot win.
    @Test func filtersApplyBeforeDeduplication() throws {
        let input = E.event("j", "5", device: "D", week: "2025-W01", timestamp: t("2025-01-01T00:00:00Z"))
            + E.event("j", "1", device: "D", week: "2025-W02", timestamp: t("2025-01-08T00:00:00Z"))
        let asOf = try E.run(["--dedupe", "device", "--as-of", "2025-01-07T23:59:59Z"], files: [("a.ndjson", input)])
        #expect(asOf.stdout == E.document(hilarious: [("j", 1)], horrible: []), "\(asOf.stderr)")
        #expect(asOf.counts == [2, 1, 1, 0, 0])
        let week = try E.run(["--dedupe", "device", "--week", "2025-W01"], files: [("a.ndjson", input)])
        #expect(week.stdout == E.document(week: "2025-W01", hilarious: [("j", 1)], horrible: [],
                                          bounds: ("2024-12-30T05:00:00.000Z", "2025-01-06T04:59:59.999Z")), "\(week.stderr)")
        #expect(week.counts == [2, 1, 1, 0, 0])
        let all = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(all.stdout == E.document(hilarious: [], horrible: [("j", 1)]))
    }

    /// Validity first: with --dedupe device, a record without a device_id is bad even when the
    /// week filter would have left it out.
    @Test func missingDeviceIDIsBadEvenOutsideTheWeek() throws {
        let input = E.event("j", "5", device: "D", week: "2025-W01") + E.event("j", "5", week: "2025-W02")
        let run = try E.run(["--dedupe", "device", "--week", "2025-W01"], files: [("a.ndjson", input)])
        #expect(run.status == 65)
        #expect(run.counts == [1, 1, 0, 0, 1])
    }

    // MARK: id

    @Test func eventIDLaterInInputWinsWhateverTheTimestamp() throws {
        let a = E.event("j", "5", id: "X", timestamp: t("2025-06-01T00:00:00Z"))
            + E.event("k", "1", id: "Y")
        let b = E.event("j", "1", id: "X", timestamp: t("2025-01-01T00:00:00Z"))
            + E.event("k", "1", id: "Y")
            + E.event("k", "5", id: "Z")
        let run = try E.run(["--dedupe", "id"], files: [("a.ndjson", a), ("b.ndjson", b)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [("k", 1)], horrible: [("j", 1), ("k", 1)]))
        #expect(run.counts == [5, 3, 0, 2, 0])
        let reversed = try E.run(["--dedupe", "id"], files: [("a.ndjson", a), ("b.ndjson", b)],
                                 inputs: ["@in/b.ndjson", "@in/a.ndjson"])
        #expect(reversed.stdout == E.document(hilarious: [("j", 1), ("k", 1)], horrible: [("k", 1)]))
    }

    /// The same export given twice counts once.
    @Test func overlappingExportsCountOnce() throws {
        let export = (0..<50).map { E.event("j\($0 % 7)", $0 % 3 == 0 ? "1" : "5", id: "e\($0)") }.joined()
        let once = try E.run([], files: [("a.ndjson", export)])
        let twice = try E.run(["--dedupe", "id"], files: [("a.ndjson", export), ("b.ndjson", export)])
        #expect(once.status == 0 && twice.status == 0)
        #expect(twice.stdout == once.stdout)
        #expect(twice.counts == [100, 50, 0, 50, 0])
    }

    @Test func missingEventIDIsABadLine() throws {
        let input = E.event("j", "5", id: "X") + E.event("j", "1") + "{\"joke_id\": \"j\", \"rating\": 1, \"id\": 1}\n"
        let run = try E.run(["--dedupe", "id"], files: [("a.ndjson", input)])
        #expect(run.status == 65)
        #expect(run.stderr.contains("a.ndjson:2: invalid record: no string id (needed by --dedupe id)"), "\(run.stderr)")
        #expect(run.stderr.contains("a.ndjson:3: invalid record: no string id"), "\(run.stderr)")
        let tolerant = try E.run(["--dedupe", "id", "--max-invalid", "2"], files: [("a.ndjson", input)])
        #expect(tolerant.stdout == E.document(hilarious: [("j", 1)], horrible: []))
        #expect(tolerant.counts == [1, 1, 0, 0, 2])
        // device_id and timestamp are not needed in this mode.
        #expect(tolerant.stderr.contains("device_id") == false)
    }

    @Test func badDedupeModeIsUsageError() throws {
        for mode in ["devices", "ID", "", "none"] {
            let run = try E.run(["--dedupe", mode], files: [("a.ndjson", E.event("j", "5", device: "D", id: "X"))])
            #expect(run.status == 64, "--dedupe \(mode): \(run.stderr)")
        }
    }

    // MARK: threads

    /// Many keys across several files, with fractional ratings: one thread and several agree
    /// byte for byte, document and stats.
    @Test(arguments: ["device", "id"])
    func threadsAgree(_ mode: String) throws {
        var rng = SplitMix64(seed: 7)
        var files: [(String, String)] = []
        let ratings = ["1", "1.5", "2", "2.5", "3", "3.5", "4", "4.5", "5"]
        // The winners, worked out plainly: key -> (seconds, input position, joke, rating, tie).
        var winners: [String: (UInt64, Int, String, Double, Double)] = [:]
        var position = 0
        for f in 0..<4 {
            var text = ""
            for _ in 0..<3000 {
                let device = "D\(rng.next() % 40)", joke = "j\(rng.next() % 30)", id = "e\(rng.next() % 2000)"
                let seconds = 1_700_000_000 + rng.next() % 50
                let rating = ratings[Int(rng.next() % 9)]
                let stamp = "{\"_seconds\": \(seconds), \"_nanoseconds\": 0}"
                text += E.event(joke, rating, device: device, id: id, timestamp: stamp)
                let key = mode == "device" ? device + "/" + joke : id
                let rank = mode == "device" ? seconds : 0
                // Device mode breaks ties of instant by the higher rating; id mode has none.
                let tie = mode == "device" ? Double(rating)! : 0
                position += 1
                if let w = winners[key], (w.0, w.4, w.1) > (rank, tie, position) { continue }
                winners[key] = (rank, position, joke, Double(rating)!, tie)
            }
            files.append(("f\(f).ndjson", text))
        }
        var hilarious: [String: Int] = [:], horrible: [String: Int] = [:]
        for w in winners.values {
            if w.3 >= 4 { hilarious[w.2, default: 0] += 1 } else if w.3 <= 2 { horrible[w.2, default: 0] += 1 }
        }
        func ranked(_ counts: [String: Int]) -> [(String, Int)] {
            Array(counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(10)).map { ($0.key, $0.value) }
        }
        let expected = E.document(hilarious: ranked(hilarious), horrible: ranked(horrible),
                                  totalHilarious: hilarious.values.reduce(0, +), totalHorrible: horrible.values.reduce(0, +))
        let one = try E.run(["--dedupe", mode, "--threads", "1"], files: files, stats: true)
        #expect(one.status == 0, "\(one.stderr)")
        #expect(firstDifference(expected, one.stdout) == nil, "\(firstDifference(expected, one.stdout) ?? "")")
        #expect(one.count("counted_events") == winners.count)
        for threads in ["2", "4"] {
            let many = try E.run(["--dedupe", mode, "--threads", threads], files: files, stats: true)
            #expect(many.stdout == one.stdout, "--threads \(threads)")
            #expect(many.stats == one.stats, "--threads \(threads)")
            #expect(many.counts == one.counts)
        }
    }
}
