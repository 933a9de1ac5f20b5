import Foundation
import Testing
@testable import RankingsKit

/// Findings of the fuzz targets (Tests/Fuzz), each kept fixed by a regular test.
@Suite("Fuzz findings")
struct FuzzFindingTests {
    /// `{"joke_id":"z","rating":5}\n` in zlib's wrapper (RFC 1950), as Python's `zlib.compress` writes it.
    static let zlibStream: [UInt8] = [
        120, 156, 171, 86, 202, 202, 207, 78, 141, 207, 76, 81, 178, 82, 170, 82, 210, 81, 42, 74, 44, 201,
        204, 75, 87, 178, 50, 173, 229, 2, 0, 124, 225, 8, 120,
    ]

    /// gzip target, finding 1: after a complete gzip member, a zlib stream was inflated as if it
    /// were another member (zlib was told to accept either wrapper) and its events counted.
    /// It is not gzip, so the input is corrupt, like any other trailing garbage.
    @Test func zlibStreamAfterAGzipMemberIsCorrupt() throws {
        let member = try ScratchDirectory.gzip(Array("{\"joke_id\":\"a\",\"rating\":5}\n".utf8))
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("export.ndjson.gz", member + Self.zlibStream)
            do {
                let result = try runAggregator([path], threads: 1)
                Issue.record("no error; \(AggregationSummary(result))")
            } catch let error as InputError {
                guard case .corruptGzip(let reported, _) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(reported == path)
            }
            // The member alone is still read.
            let alone = try dir.write("alone.ndjson.gz", member)
            #expect(AggregationSummary(try runAggregator([alone], threads: 1)).badLineCount == 0)
        }
    }

    /// The same through the command: status 65, the path named, nothing on stdout.
    @Test func zlibStreamAfterAGzipMemberFailsTheRun() throws {
        let member = try ScratchDirectory.gzip(Array("{\"joke_id\":\"a\",\"rating\":5}\n".utf8))
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("export.ndjson.gz", member + Self.zlibStream)
            let result = try RankingsBinary.run(["aggregate", path])
            #expect(result.status == 65)
            #expect(result.stderrText.contains(path))
            #expect(result.stdout.isEmpty)
        }
    }

    /// parallel target, finding 2: the first key a `ByteInterner` stored being empty trapped
    /// (no arena chunk yet), so `--dedupe device` crashed when a thread's first vote came from
    /// a record with `"device_id": ""`.
    @Test func anEmptyFirstKeyIsInterned() {
        let interner = ByteInterner()
        let empty: [UInt8] = []
        let first = empty.withUnsafeBufferPointer { interner.intern($0) }
        let again = empty.withUnsafeBufferPointer { interner.intern($0) }
        #expect(first.index == 0 && first.isNew)
        #expect(again.index == 0 && !again.isNew)
        #expect(interner.key(0).isEmpty)
    }

    @Test func dedupeDeviceCountsAnEmptyDeviceID() throws {
        let lines = "{\"joke_id\":\"a\",\"rating\":5,\"device_id\":\"\",\"timestamp\":\"2025-01-01T00:00:00Z\"}\n"
            + "{\"joke_id\":\"a\",\"rating\":1,\"device_id\":\"\",\"timestamp\":\"2025-01-02T00:00:00Z\"}\n"
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("export.ndjson", Array(lines.utf8))
            let result = try RankingsBinary.run(["aggregate", "--dedupe", "device", "--computed-at", "2026-01-01T00:00:00Z", path])
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stdoutText.contains("\"total_horrible_ratings\": 1"))
        }
    }

    /// typed_lines target, finding 3: a typed rating spelled with escapes in its string was read
    /// from the raw bytes, so `{"integerValue": "\u0035"}`, which is the string "5", was "not a
    /// number", and `{"doubleValue": "\u004eaN"}` (NaN) "not a number" instead of "not between
    /// 1 and 5". A JSON reader unescapes the string before reading the number in it.
    @Test(arguments: [
        ("{\"integerValue\": \"\\u0035\"}", nil),
        ("{\"integerValue\": \"-\\u0031\"}", "rating is not between 1 and 5"),
        ("{\"integerValue\": \"\\u0035\\ud800\"}", "rating is not a number"),
        ("{\"doubleValue\": \"\\u004eaN\"}", "rating is not between 1 and 5"),
        ("{\"doubleValue\": \"-Infinit\\u0079\"}", "rating is not between 1 and 5"),
    ] as [(String, String?)])
    func anEscapedTypedRatingIsReadUnescaped(rating: String, bad: String?) throws {
        let line = "{\"name\": \"projects/p/databases/(default)/documents/rating_events/E\", "
            + "\"fields\": {\"joke_id\": {\"stringValue\": \"j\"}, \"rating\": \(rating)}}\n"
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("typed.ndjson", Array(line.utf8))
            let summary = AggregationSummary(try runAggregator([path], threads: 1))
            if let bad {
                #expect(summary.firstBadLines.map(\.reason) == ["invalid record: \(bad)"])
                #expect(summary.totals.hilarious == 0)
            } else {
                #expect(summary.badLineCount == 0, "\(summary)")
                #expect(summary.jokes.map(\.id) == [Array("j".utf8)] && summary.totals.hilarious == 1)
            }
        }
    }
}
