import Foundation
import Testing
@testable import RankingsKit

/// The layered night folder's parts: which names are layers, and the replacement rule across
/// the split points of pieces read by several threads.
@Suite("Layered folder: names and pieces")
struct LayeredFolderUnitTests {
    @Test func roles() {
        typealias Role = LayeredFolder.Role
        #expect(LayeredFolder.role(of: "rating_events.ndjson") == Role(stem: "rating_events", layer: 0))
        #expect(LayeredFolder.role(of: "rating_events.ndjson.gz") == Role(stem: "rating_events", layer: 0))
        #expect(LayeredFolder.role(of: "rating_events.changes-000001.ndjson") == Role(stem: "rating_events", layer: 1))
        #expect(LayeredFolder.role(of: "a.b.changes-999999.ndjson.gz") == Role(stem: "a.b", layer: 999_999))
        // Not change files: the name is a base of its own stem, or nothing.
        #expect(LayeredFolder.role(of: "rating_events.changes-000000.ndjson")?.layer == 0)
        #expect(LayeredFolder.role(of: "rating_events.changes-00001.ndjson")?.layer == 0)
        #expect(LayeredFolder.role(of: "rating_events.changes-0000012.ndjson")?.layer == 0)
        #expect(LayeredFolder.role(of: "rating_events.changes-00000a.ndjson")?.layer == 0)
        #expect(LayeredFolder.role(of: "rating_events.changes-+00001.ndjson")?.layer == 0)
        #expect(LayeredFolder.role(of: ".changes-000001.ndjson") == nil)
        #expect(LayeredFolder.role(of: "rating_events.changes-000001.jsonl") == nil)
        #expect(LayeredFolder.role(of: "rating_events.json") == nil)
        #expect(LayeredFolder.role(of: ".ndjson") == nil)
    }

    /// Names of every length the hash reads differently (none, under a word, one lane, past the
    /// lanes), found with their highest layer; names one byte off are not found.
    @Test func changedNamesFindEveryLength() {
        let names = ChangedNames()
        let all: [[UInt8]] = (0..<80).map { n in (0..<n).map { i -> UInt8 in UInt8(ascii: "a") + UInt8((i * 7 + n) % 26) } }
        for (i, name) in all.enumerated() {
            name.withUnsafeBufferPointer { names.add($0, layer: 1 + i % 3) }
            name.withUnsafeBufferPointer { names.add($0, layer: 1) }
        }
        names.seal()
        #expect(names.count == all.count)
        for (i, name) in all.enumerated() {
            #expect(name.withUnsafeBufferPointer { names.latestLayer(of: $0) } == 1 + i % 3, "\(i)")
            guard !name.isEmpty else { continue }
            var other = name
            other[other.count / 2] = UInt8(ascii: "_")
            #expect(other.withUnsafeBufferPointer { names.latestLayer(of: $0) } == 0, "\(i)")
        }
    }

    /// 3,000 documents, every 7th re-rated in change 1, every 11th in change 2, a few new in each:
    /// the tally is the final snapshot's at any piece size and thread count.
    @Test(arguments: [(1, nil), (2, 997), (2, 64), (1, 301)] as [(Int, Int64?)])
    func replacementAcrossPieces(threads: Int, pieceSize: Int64?) throws {
        func line(_ n: Int, _ rating: Int) -> String {
            #"{"name":"projects/p/databases/(default)/documents/rating_events/E\#(String(format: "%05d", n))","#
                + #""fields":{"joke_id":{"stringValue":"j\#(n % 13)"},"rating":{"integerValue":"\#(rating)"}}}"# + "\n"
        }
        var final: [Int: Int] = [:]
        var layers = ["", "", ""]
        for n in 0..<3000 { layers[0] += line(n, 5); final[n] = 5 }
        for n in stride(from: 0, to: 3030, by: 7) where n < 3000 || n % 2 == 0 { layers[1] += line(n, 1); final[n] = 1 }
        for n in stride(from: 0, to: 3060, by: 11) { layers[2] += line(n, 3); final[n] = 3 }
        try ScratchDirectory.with { dir in
            try dir.write("night/rating_events.ndjson", layers[0])
            try dir.write("night/rating_events.changes-000001.ndjson", layers[1])
            try dir.write("night/rating_events.changes-000002.ndjson", layers[2])
            let files = try InputFile.resolve([dir.path("night")], layers: true)
            let result = try Aggregator.run(files, threads: threads, pieceSize: pieceSize, chunkSize: 512)
            var expected: [String: JokeCounts] = [:]
            for (n, rating) in final { expected["j\(n % 13)", default: JokeCounts()].add(Double(rating)) }
            let got = Dictionary(uniqueKeysWithValues: result.tally.sortedJokes().map { (String(decoding: $0.id, as: UTF8.self), $0.counts) })
            #expect(got == expected)
            #expect(result.badLineCount == 0)
            let lines = layers.map { $0.split(separator: "\n").count }
            #expect(result.replacedLines == lines.reduce(0, +) - final.count)
        }
    }
}
