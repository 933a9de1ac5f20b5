import Foundation
import Testing
@testable import RankingsKit

/// Typed properties against the NDJSON rules: what counts, what is bad and why, what is left out.
@Suite("Managed export: entities and event rules")
struct ExportEventRulesTests {
    typealias P = TestEntity.Property

    static func read(_ entities: [[UInt8]]) throws -> CollectedExport {
        try LogDamageTests.read(TestLog.write(entities)).0.get()
    }

    static func top(_ id: TestEntity.ID, _ properties: [P]) -> [UInt8] {
        TestEntity.encode(path: [("rating_events", id)], properties)
    }

    static let joke = P(name: "joke_id", value: .string(Array("j1".utf8)))

    @Test("a numeric key id is the event id in decimal; properties may be indexed (field 14) too")
    func numericID() throws {
        let read = try Self.read([
            Self.top(.id(1234567890123), [Self.joke, P(name: "rating", value: .integer(4), indexed: true)]),
            Self.top(.id(-5), [Self.joke, P(name: "rating", value: .double(2.5))]),
        ])
        #expect(read.events.map(\.id) == ["1234567890123", "-5"])
        #expect(read.events.map(\.rating) == [4, 2.5])
    }

    @Test("timestamps: GD_WHEN microseconds, before 1970 too; any other timestamp value is unreadable")
    func timestamps() throws {
        func vote(_ id: String, _ timestamp: P) -> [UInt8] {
            Self.top(.name(id), [Self.joke, P(name: "rating", value: .integer(5)), timestamp])
        }
        let read = try Self.read([
            vote("a", P(name: "timestamp", value: .integer(1_763_900_001_123_456), meaning: 7)),
            vote("b", P(name: "timestamp", value: .integer(-1), meaning: 7)),
            vote("c", P(name: "timestamp", value: .string(Array("2026-01-01T00:00:00Z".utf8)))),
            vote("d", P(name: "timestamp", value: .integer(5))),
            Self.top(.name("e"), [Self.joke, P(name: "rating", value: .integer(5))]),
            vote("f", P(name: "timestamp", value: .boolean(true))),
            vote("g", P(name: "timestamp", value: .string([1]), meaning: 19)),
            vote("h", P(name: "timestamp", value: .string([1]), meaning: 14)),
            vote("i", P(name: "timestamp", value: .integer(1), meaning: 7, multiple: true)),
            vote("j", P(name: "timestamp", value: .point(1, 2), meaning: 9)),
            vote("k", P(name: "timestamp", value: .null)),
            vote("l", P(name: "timestamp", value: .double(1))),
        ])
        #expect(read.events.map(\.timestampMicros) == [1_763_900_001_123_456, -1] + [Int64?](repeating: nil, count: 10))
        #expect(read.events.map(\.timestampUnreadable) == [nil, nil, "a string", "an integer", nil, "a boolean", "a map", "bytes",
                                                           "an array", "a geo point", "null", "a double"])
    }

    @Test("device_id and week_id only as plain strings (TEXT counts; bytes, arrays and numbers do not)")
    func strings() throws {
        let read = try Self.read([
            Self.top(.name("a"), [Self.joke, P(name: "rating", value: .integer(5)),
                                  P(name: "device_id", value: .string(Array("d1".utf8)), meaning: 15),
                                  P(name: "week_id", value: .string(Array("2026-W01".utf8)))]),
            Self.top(.name("b"), [Self.joke, P(name: "rating", value: .integer(5)),
                                  P(name: "device_id", value: .string(Array("d1".utf8)), meaning: 14),
                                  P(name: "week_id", value: .integer(1))]),
            Self.top(.name("c"), [Self.joke, P(name: "rating", value: .integer(5)),
                                  P(name: "device_id", value: .string(Array("d1".utf8)), multiple: true),
                                  P(name: "device_id", value: .string(Array("d2".utf8)), multiple: true)]),
        ])
        #expect(read.events.map(\.deviceID) == ["d1", nil, nil])
        #expect(read.events.map(\.weekID) == ["2026-W01", nil, nil])
    }

    @Test("bad records with the NDJSON reasons, numbered from 1 in the file")
    func bad() throws {
        func vote(_ id: String, _ properties: [P]) -> [UInt8] { Self.top(.name(id), properties) }
        let five = P(name: "rating", value: .integer(5))
        let read = try Self.read([
            vote("ok", [Self.joke, five]),
            vote("b1", [five]),
            vote("b2", [P(name: "joke_id", value: .string(Array("j1".utf8)), meaning: 14), five]),
            vote("b3", [P(name: "joke_id", value: .null), five]),
            vote("b4", [P(name: "joke_id", value: .string([])), five]),
            vote("b5", [P(name: "joke_id", value: .string(Array("j1".utf8)), meaning: 19), five]),
            vote("b6", [Self.joke]),
            vote("b7", [Self.joke, P(name: "rating", value: .integer(5), meaning: 7)]),
            vote("b8", [Self.joke, P(name: "rating", value: .boolean(true))]),
            vote("b9", [Self.joke, P(name: "rating", value: .point(1, 2), meaning: 9)]),
            vote("b10", [Self.joke, P(name: "rating", value: .integer(5), multiple: true)]),
            vote("b11", [Self.joke, P(name: "rating", value: .null, meaning: 24)]),
            vote("b12", [Self.joke, P(name: "rating", value: .integer(Int64.max))]),
            vote("b13", [Self.joke, P(name: "rating", value: .double(.infinity))]),
            vote("b14", [Self.joke, P(name: "rating", value: .double(0.999))]),
        ])
        #expect(read.events.map(\.id) == ["ok"])
        #expect(read.bad.map(\.record) == Array(2...15))
        #expect(read.bad.map(\.reason) == [
            "no joke_id", "joke_id is not a string", "joke_id is not a string", "joke_id is empty", "joke_id is not a string",
            "no rating", "rating is not a number", "rating is not a number", "rating is not a number",
            "rating is not a number", "rating is not a number",
            "rating is not between 1 and 5", "rating is not between 1 and 5", "rating is not between 1 and 5",
        ].map { "invalid record: " + $0 })
    }

    /// Firestore cannot query a joke id of 1,500 bytes or more by equality: such a vote is a bad
    /// record here too, whichever route reads it (the walk, or a template of the same layout
    /// read twice).
    @Test("a joke id of 1,500 bytes or more (UTF-8) is a bad record; 1,499 bytes count")
    func longJokeIDs() throws {
        func vote(_ id: String, _ joke: String) -> [UInt8] {
            Self.top(.name(id), [P(name: "joke_id", value: .string(Array(joke.utf8))), P(name: "rating", value: .integer(5))])
        }
        let ascii1499 = String(repeating: "a", count: 1499), ascii1500 = String(repeating: "b", count: 1500)
        let accents1499 = String(repeating: "\u{E9}", count: 749) + "x", accents1500 = String(repeating: "\u{E9}", count: 750)
        let read = try Self.read([
            vote("a1", ascii1499), vote("a2", ascii1499), vote("b1", ascii1500), vote("b2", ascii1500),
            vote("c1", accents1499), vote("d1", accents1500), vote("d2", accents1500),
        ])
        #expect(read.events.map(\.id) == ["a1", "a2", "c1"])
        #expect(read.bad.map(\.record) == [3, 4, 6, 7])
        #expect(read.bad.map(\.reason) == [String](repeating: "invalid record: joke_id is 1500 bytes: Firestore cannot query "
                                                              + "a value of 1,500 bytes or more", count: 4))
    }

    /// What `--report` names a bad entity by: the document its key gives (the app after its
    /// partition prefix, the database, `(default)` without one), the joke id, the kind by the
    /// rating Firestore holds as a number. A key with a numeric id or a namespace names no
    /// Firestore document.
    @Test("a bad entity's document, joke id and Firestore kind")
    func refusedRecords() throws {
        let unrated = [Self.joke]
        let read = try Self.read([
            TestEntity.encode(path: [("rating_events", .name("e1"))], unrated, app: "s~jokes-app"),
            TestEntity.encode(path: [("rating_events", .name("e2"))], [P(name: "rating", value: .integer(5))],
                              app: "jokes-app", database: "votes"),
            TestEntity.encode(path: [("rating_events", .id(7))], [P(name: "joke_id", value: .integer(3)),
                                                                  P(name: "rating", value: .double(1.5))]),
            TestEntity.encode(path: [("rating_events", .name("e4"))], [Self.joke, P(name: "rating", value: .integer(6))],
                              namespace: "tenant"),
            TestEntity.encode(path: [("rating_events", .name("e5"))], [Self.joke, P(name: "rating", value: .integer(4), meaning: 7)]),
            TestEntity.encode(path: [("rating_events", .name("e6"))], [P(name: "joke_id", value: .string([])),
                                                                       P(name: "rating", value: .double(4))]),
        ])
        #expect(read.bad.map(\.record) == Array(1...6))
        #expect(read.refused.map { $0.document.map { String(decoding: $0, as: UTF8.self) } } == [
            "projects/jokes-app/databases/(default)/documents/rating_events/e1",
            "projects/jokes-app/databases/votes/documents/rating_events/e2",
            nil, nil,
            "projects/test/databases/(default)/documents/rating_events/e5",
            "projects/test/databases/(default)/documents/rating_events/e6",
        ])
        #expect(read.refused.map { $0.jokeID.map { String(decoding: $0, as: UTF8.self) } } == ["j1", nil, nil, "j1", "j1", ""])
        #expect(read.refused.map(\.kind) == [nil, .hilarious, .horrible, nil, nil, .hilarious])
    }

    @Test("other kinds and rating_events under another document are left out, not bad")
    func leftOut() throws {
        let vote = [Self.joke, P(name: "rating", value: .integer(5))]
        let read = try Self.read([
            TestEntity.encode(path: [("jokes", .name("j1")), ("rating_events", .name("x"))], vote),
            TestEntity.encode(path: [("ratings_events", .name("x"))], vote),
            TestEntity.encode(path: [("rating_event", .name("x"))], vote),
            TestEntity.encode(path: [("users", .id(3))], []),
            Self.top(.name("counted"), vote),
        ])
        #expect(read.leftOut == [1, 2, 3, 4])
        #expect(read.events.map(\.record) == [5])
        #expect(read.bad.isEmpty)
    }

    @Test("a property the job reads twice without being an array does not decode")
    func twice() throws {
        let entity = Self.top(.name("x"), [Self.joke, P(name: "rating", value: .integer(5)), P(name: "rating", value: .integer(4))])
        try LogDamageTests.expectCorrupt(TestLog.write([entity]), offset: 0, "record 1 is not an entity: property rating twice")
    }
}
