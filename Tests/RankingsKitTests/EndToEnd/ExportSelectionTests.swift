import Foundation
import Testing

/// The same votes as a managed export and as NDJSON give the same document under every
/// selection. Written alike, the export's votes are read from a plain entity template
/// (entity_template.c), which reads only the joke id and rating and picks the timestamp,
/// device and event id from the template when a selection asks: those must be the walk's.
/// Among the votes, some the template must hand back (a joke id that is not ASCII, a rating
/// of 0 or 9 in the same one varint byte) and one of another kind written alike.
@Suite("Managed export: selections read the same as NDJSON")
struct ExportSelectionTests {
    static let micros: Int64 = 1_795_600_000_000_000 // 2026-11-25T08:26:40Z

    struct Vote {
        var id: String
        var joke: String
        var rating: Int64
        var second: Int64
        var device: String
        var week: String
        var kind = "rating_events"
    }

    static let votes: [Vote] = (0..<400).map { n in
        var vote = Vote(id: String(format: "e%04d", n), joke: String(format: "joke-%02d", n * 7 % 13),
                        rating: Int64(n * 5 % 7 % 5 + 1), second: Int64(n * 997 % 200_000),
                        device: "dev-\(n % 9)", week: n % 3 == 0 ? "2026-W48" : "2026-W47")
        switch n {
        case 50, 51: vote.joke = "joke-é" // as many bytes as "joke-01"
        case 60: vote.rating = 0
        case 61: vote.rating = 9
        case 70: vote.kind = "rating_eventz"
        default: break
        }
        return vote
    }

    static func entity(_ v: Vote) -> [UInt8] {
        TestEntity.encode(path: [(v.kind, .name(v.id))], [
            .init(name: "joke_id", value: .string(Array(v.joke.utf8))),
            .init(name: "rating", value: .integer(v.rating)),
            .init(name: "timestamp", value: .integer(micros + v.second * 1_000_000), meaning: 7),
            .init(name: "device_id", value: .string(Array(v.device.utf8))),
            .init(name: "week_id", value: .string(Array(v.week.utf8))),
        ])
    }

    static func line(_ v: Vote) -> String? {
        guard v.kind == "rating_events" else { return nil }
        let date = Date(timeIntervalSince1970: Double(micros / 1_000_000 + v.second))
        let formatter = ISO8601DateFormatter()
        return #"{"id":"\#(v.id)","joke_id":"\#(v.joke)","rating":\#(v.rating),"timestamp":"\#(formatter.string(from: date))","device_id":"\#(v.device)","week_id":"\#(v.week)"}"#
    }

    static let selections: [[String]] = [
        [], ["--dedupe", "device"], ["--dedupe", "id"], ["--since", "2026-11-26T00:00:00Z"],
        ["--as-of", "2026-11-26T12:00:00Z"], ["--week", "2026-W48"], ["--dedupe", "device", "--week", "2026-W47"],
    ]

    @Test(arguments: selections)
    func sameDocument(selection: [String]) throws {
        try ScratchDirectory.with { dir in
            try FileManager.default.copyItem(at: try ExportFixtures.exportRoot(ExportFixtures.emulator),
                                             to: dir.url.appendingPathComponent("export"))
            let log = TestLog.write(Self.votes.map(Self.entity))
            _ = try dir.write(ManagedExportCommandTests.folder + "/output-0", log)
            try ManagedExportCommandTests.recount(dir, entities: Self.votes.count, bytes: log.count)
            _ = try dir.write("votes.ndjson", Self.votes.compactMap(Self.line).joined(separator: "\n") + "\n")
            func document(_ input: String) throws -> [UInt8] {
                let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "10", "--computed-at", fixedComputedAt,
                                                     "-o", dir.path(input + ".json")] + selection + [dir.path(input)])
                #expect(result.status == 0, "\(input) \(selection): \(result.stderrText)")
                return try dir.read(input + ".json")
            }
            let fromExport = try document("export"), fromLines = try document("votes.ndjson")
            #expect(fromExport == fromLines, "\(selection)")
            // Something was counted, so the documents say something.
            #expect(String(decoding: fromExport, as: UTF8.self).contains("joke-"), "\(selection)")
        }
    }

    /// `--dedupe device` between votes of one device on one joke at the same instant: a REST
    /// fetch (typed `Document` lines, in name order) and an export of the same collection (in
    /// its own order, here the reverse) give the same document (0.3 let the later in input
    /// order win, so they did not).
    @Test func equalTimestampsGiveOneDocumentFromRestAndExport() throws {
        let votes: [(id: String, joke: String, rating: Int64)] = [("a", "j", 1), ("b", "j", 5), ("c", "k", 5), ("d", "k", 1),
                                                                  ("e", "m", 4), ("f", "m", 2)]
        try ScratchDirectory.with { dir in
            let entities = votes.reversed().map { v in
                TestEntity.encode(path: [("rating_events", .name(v.id))], [
                    .init(name: "joke_id", value: .string(Array(v.joke.utf8))),
                    .init(name: "rating", value: .integer(v.rating)),
                    .init(name: "timestamp", value: .integer(Self.micros), meaning: 7),
                    .init(name: "device_id", value: .string(Array("D".utf8))),
                ])
            }
            try TestExport.write(at: dir.url.appendingPathComponent("export"), outputs: [entities])
            let lines = votes.map { v in
                #"{"name":"projects/p/databases/(default)/documents/rating_events/\#(v.id)","fields":{"joke_id":{"stringValue":"\#(v.joke)"},"#
                    + #""rating":{"integerValue":"\#(v.rating)"},"timestamp":{"timestampValue":"2026-11-25T08:26:40Z"},"#
                    + #""device_id":{"stringValue":"D"}},"createTime":"2026-11-25T08:26:40Z","updateTime":"2026-11-25T08:26:40Z"}"#
            }
            _ = try dir.write("rest.ndjson", lines.joined(separator: "\n") + "\n")
            func document(_ input: String) throws -> [UInt8] {
                let result = try RankingsBinary.run(["aggregate", "-q", "--dedupe", "device", "--computed-at", fixedComputedAt,
                                                     "-o", dir.path(input + ".json"), dir.path(input)])
                #expect(result.status == 0, "\(input): \(result.stderrText)")
                return try dir.read(input + ".json")
            }
            let fromExport = try document("export"), fromRest = try document("rest.ndjson")
            #expect(fromExport == fromRest)
            // The higher rating of each tie: j and k hilarious, m hilarious (4 over 2).
            let text = String(decoding: fromRest, as: UTF8.self)
            #expect(text.contains(#""total_hilarious_ratings": 3,"#), "\(text)")
        }
    }
}
