import Foundation
import Testing

/// Firestore typed JSON lines (issue 15, section 2): one REST `Document` per line, read beside
/// flat records with the same rules and reasons.
@Suite("Typed Firestore JSON lines")
struct TypedLineTests {
    typealias E = Backfill
    static let prefix = "projects/p/databases/(default)/documents/"

    /// A typed line: `fields` is raw JSON for the members of `fields`.
    static func document(_ name: String, _ fields: String) -> String {
        "{\"name\": \"\(name)\", \"fields\": {\(fields)}}\n"
    }

    static func event(id: String = "E1", joke: String = "{\"stringValue\": \"j\"}", rating: String) -> String {
        document(prefix + "rating_events/" + id, "\"joke_id\": \(joke), \"rating\": \(rating)")
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var line: String
        /// nil: counted as one vote for `j`; else the bad line's reason.
        var bad: String?
        var hilarious = true
        var testDescription: String { line }
    }

    static let ratings: [Case] = [
        Case(line: event(rating: "{\"integerValue\": \"5\"}")),
        Case(line: event(rating: "{\"integerValue\": 5}")),
        Case(line: event(rating: "{\"integerValue\": \"1\"}"), hilarious: false),
        Case(line: event(rating: "{\"doubleValue\": 4.5}")),
        Case(line: event(rating: "{\"doubleValue\": 1}"), hilarious: false),
        Case(line: event(rating: "{\"doubleValue\": 5e0}")),
        Case(line: event(rating: "{\"integerValue\": \"6\"}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"integerValue\": \"-1\"}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"integerValue\": \"99999999999999999999\"}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"doubleValue\": 0.5}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"doubleValue\": \"NaN\"}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"doubleValue\": \"Infinity\"}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"doubleValue\": \"-Infinity\"}"), bad: "rating is not between 1 and 5"),
        Case(line: event(rating: "{\"doubleValue\": \"5\"}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"integerValue\": \"5.0\"}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"integerValue\": \"+5\"}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"integerValue\": \"\"}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"integerValue\": 4.5}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"stringValue\": \"5\"}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"nullValue\": null}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"booleanValue\": true}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"mapValue\": {\"fields\": {}}}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"arrayValue\": {\"values\": [{\"integerValue\": \"5\"}]}}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"timestampValue\": \"2026-01-01T00:00:00Z\"}"), bad: "rating is not a number"),
        Case(line: event(rating: "{\"integerValue\": \"5\", \"doubleValue\": 5}"), bad: "rating is not a number"),
        Case(line: event(rating: "{}"), bad: "rating is not a number"),
        Case(line: event(rating: "5"), bad: "rating is not a number"),
        Case(line: document(prefix + "rating_events/E", "\"joke_id\": {\"stringValue\": \"j\"}"), bad: "no rating"),
    ]

    static let jokeIDs: [Case] = [
        Case(line: event(joke: "{\"stringValue\": \"\\u006a\"}", rating: "{\"integerValue\": \"5\"}")),
        Case(line: event(joke: "{\"stringValue\": \"\"}", rating: "{\"integerValue\": \"5\"}"), bad: "joke_id is empty"),
        Case(line: event(joke: "{\"stringValue\": \"\\ud800\"}", rating: "{\"integerValue\": \"5\"}"),
             bad: "joke_id has a lone surrogate escape"),
        Case(line: event(joke: "{\"integerValue\": \"7\"}", rating: "{\"integerValue\": \"5\"}"), bad: "joke_id is not a string"),
        Case(line: event(joke: "{\"bytesValue\": \"ag==\"}", rating: "{\"integerValue\": \"5\"}"), bad: "joke_id is not a string"),
        Case(line: event(joke: "{\"nullValue\": null}", rating: "{\"integerValue\": \"5\"}"), bad: "joke_id is not a string"),
        Case(line: event(joke: "\"j\"", rating: "{\"integerValue\": \"5\"}"), bad: "joke_id is not a string"),
        Case(line: document(prefix + "rating_events/E", "\"rating\": {\"integerValue\": \"5\"}"), bad: "no joke_id"),
        // 1,500 bytes, however spelled: Firestore cannot query it by equality.
        Case(line: event(joke: "{\"stringValue\": \"\(String(repeating: "b", count: 1500))\"}", rating: "{\"integerValue\": \"5\"}"),
             bad: "joke_id is 1500 bytes: Firestore cannot query a value of 1,500 bytes or more"),
        Case(line: event(joke: "{\"stringValue\":\"\(String(repeating: "b", count: 1501))\"}", rating: "{\"integerValue\":\"5\"}"),
             bad: "joke_id is 1501 bytes: Firestore cannot query a value of 1,500 bytes or more"),
        Case(line: event(joke: "{\"stringValue\": \"\(String(repeating: "\u{E9}", count: 750))\"}", rating: "{\"integerValue\": \"5\"}"),
             bad: "joke_id is 1500 bytes: Firestore cannot query a value of 1,500 bytes or more"),
        Case(line: event(joke: "{\"stringValue\": \"\(String(repeating: "\\u00e9", count: 750))\"}", rating: "{\"integerValue\": \"5\"}"),
             bad: "joke_id is 1500 bytes: Firestore cannot query a value of 1,500 bytes or more"),
    ]

    /// 1,499 bytes are a vote, read from the scanner's spans (compact, unescaped) or by the walk
    /// (spaced, escaped), and the same joke either way.
    @Test func aJokeIDOf1499BytesCounts() throws {
        let id = String(repeating: "\u{E9}", count: 749) + "x"
        func compact(_ n: Int, _ joke: String) -> String {
            "{\"name\":\"\(Self.prefix)rating_events/E\(n)\",\"fields\":{\"joke_id\":{\"stringValue\":\"\(joke)\"},"
                + "\"rating\":{\"integerValue\":\"5\"}}}\n"
        }
        let input = compact(1, id) + Self.event(id: "E2", joke: "{\"stringValue\": \"\(id)\"}", rating: "{\"integerValue\": \"5\"}")
            + compact(3, String(repeating: "\\u00e9", count: 749) + "x")
        let run = try E.run([], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [(id, 3)], horrible: []), "\(run.stderr)")
    }

    static let documents: [Case] = [
        // Any project and database; keys may be escaped; other members of the document are ignored.
        Case(line: "{\"createTime\": \"x\", \"n\\u0061me\": \"projects/x/databases/other/documents/rating_events/E\", "
             + "\"fields\": {\"joke_id\": {\"stringValue\": \"j\"}, \"rating\": {\"integerValue\": \"5\"}}}\n"),
        // The last of a repeated key counts, as in flat records.
        Case(line: "{\"name\": 1, \"name\": \"\(prefix)rating_events/E\", \"fields\": {\"joke_id\": {\"stringValue\": \"k\"}, "
             + "\"joke_id\": {\"stringValue\": \"j\"}, \"rating\": {\"integerValue\": \"5\"}}}\n"),
        // Not a document: the flat record's verdict stands.
        Case(line: "{\"name\": 5, \"fields\": {\"joke_id\": {\"stringValue\": \"j\"}}}\n", bad: "no joke_id"),
        Case(line: "{\"name\": \"\(prefix)rating_events/E\", \"fields\": []}\n", bad: "no joke_id"),
        Case(line: "{\"name\": \"\(prefix)rating_events/E\"}\n", bad: "no joke_id"),
        Case(line: document("rating_events/E", "\"joke_id\": {\"stringValue\": \"j\"}, \"rating\": {\"integerValue\": \"5\"}"),
             bad: "name is not a Firestore document path"),
        Case(line: document("projects/p/databases/d/documents/rating_events/", "\"joke_id\": {\"stringValue\": \"j\"}"),
             bad: "name is not a Firestore document path"),
        // Every RFC 8259 rule still holds.
        Case(line: "{\"name\": \"\(prefix)rating_events/E\", \"fields\": {\"joke_id\": {\"stringValue\": \"j\"},}}\n",
             bad: "malformed JSON: expected a string key"),
        Case(line: "{\"name\": \"\(prefix)rating_events/E\", \"fields\": {\"joke_id\": {\"stringValue\": \"j\"}, "
             + "\"rating\": {\"integerValue\": 05}}}\n", bad: "malformed JSON: number with a leading zero"),
    ]

    @Test(arguments: ratings + jokeIDs + documents)
    func rule(_ c: Case) throws {
        let run = try E.run(["--max-invalid", "1", "--allow-empty"], files: [("a.ndjson", c.line)])
        #expect(run.status == 0, "\(run.stderr)")
        if let bad = c.bad {
            #expect(run.stderr.hasPrefix("/"), "\(run.stderr)")
            #expect(run.stderr.contains("a.ndjson:1: "), "\(run.stderr)")
            #expect(run.stderr.contains(bad), "\(run.stderr)")
            #expect(run.count("bad_lines") == 1)
            #expect(run.count("valid_events") == 0)
        } else {
            #expect(run.count("bad_lines") == 0, "\(run.stderr)")
            #expect(run.stdout == (c.hilarious ? E.document(hilarious: [("j", 1)], horrible: [])
                                              : E.document(hilarious: [], horrible: [("j", 1)])), "\(run.stderr)")
        }
    }

    /// Other collections, and a `rating_events` subcollection under another document, are left
    /// out: not counted, not bad, shown in the summary line and the report.
    @Test func otherCollectionsAreLeftOut() throws {
        let fields = "\"joke_id\": {\"stringValue\": \"j\"}, \"rating\": {\"integerValue\": \"5\"}"
        let input = Self.document(Self.prefix + "jokes/j", fields)
            + Self.document(Self.prefix + "jokes/j/rating_events/E", fields)
            + Self.document(Self.prefix + "rating_events/E/votes/V", fields)
            + Self.event(rating: "{\"integerValue\": \"1\"}")
            + eventLine("j", "1")
        let run = try E.run([], files: [("a.ndjson", input)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == E.document(hilarious: [], horrible: [("j", 2)]))
        #expect(run.count("left_out_documents") == 3)
        #expect(run.count("bad_lines") == 0)
        #expect(run.stderr.contains("rankings: 2 events (0 hilarious, 2 horrible, 0 neutral, 3 documents of other collections left out)"),
                "\(run.stderr)")
    }

    /// The backfill options read the typed timestamp, device id, week id, and the event id
    /// from the document's name.
    @Test func backfillOptionsReadTypedFields() throws {
        func line(_ id: String, _ joke: String, _ rating: Int, device: String, week: String, time: String) -> String {
            Self.document(Self.prefix + "rating_events/" + id,
                          "\"joke_id\": {\"stringValue\": \"\(joke)\"}, \"rating\": {\"integerValue\": \"\(rating)\"}, "
                          + "\"device_id\": {\"stringValue\": \"\(device)\"}, \"week_id\": {\"stringValue\": \"\(week)\"}, "
                          + "\"timestamp\": {\"timestampValue\": \"\(time)\"}")
        }
        let input = line("E1", "j", 1, device: "D", week: "2026-W07", time: "2026-02-12T10:00:00.5Z")
            + line("E2", "j", 5, device: "D", week: "2026-W07", time: "2026-02-11T10:00:00Z")
            + line("E1", "k", 5, device: "F", week: "2026-W06", time: "2026-02-05T10:00:00Z")
        let device = try E.run(["--dedupe", "device"], files: [("a.ndjson", input)])
        #expect(device.stdout == E.document(hilarious: [("k", 1)], horrible: [("j", 1)]), "\(device.stderr)")
        let id = try E.run(["--dedupe", "id"], files: [("a.ndjson", input)])
        #expect(id.stdout == E.document(hilarious: [("j", 1), ("k", 1)], horrible: []), "\(id.stderr)")
        let asOf = try E.run(["--as-of", "2026-02-12T00:00:00Z"], files: [("a.ndjson", input)])
        #expect(asOf.stdout == E.document(hilarious: [("j", 1), ("k", 1)], horrible: []), "\(asOf.stderr)")
        let week = try E.run(["--week", "2026-W06"], files: [("a.ndjson", input)])
        #expect(week.count("counted_events") == 1, "\(week.stderr)")
    }

    /// A timestamp that is not a readable `timestampValue` is a bad line for the options that
    /// read it, and the message shows the typed value.
    @Test func unreadableTypedTimestampIsABadLine() throws {
        let input = Self.document(Self.prefix + "rating_events/E",
                                  "\"joke_id\": {\"stringValue\": \"j\"}, \"rating\": {\"integerValue\": \"5\"}, "
                                  + "\"timestamp\": {\"integerValue\": \"1770000000\"}")
        let plain = try E.run([], files: [("a.ndjson", input)])
        #expect(plain.status == 0, "\(plain.stderr)")
        let run = try E.run(["--as-of", "2030-01-01T00:00:00Z"], files: [("a.ndjson", input)])
        #expect(run.status == 65)
        #expect(run.stderr.contains("a.ndjson:1: invalid record: timestamp {\"integerValue\": \"1770000000\"} is not"),
                "\(run.stderr)")
    }

    /// The golden test: the sample's events as typed lines (with a few flat ones mixed in, and
    /// documents of other collections; made by sample-data/typed/make.py) give the sample's
    /// document byte for byte.
    @Test func typedSampleGivesTheSampleDocument() throws {
        let root = RankingsBinary.packageRoot
        let typed = root.appendingPathComponent("sample-data/typed/rating_events.typed.ndjson.gz").path
        let expected = try Data(contentsOf: root.appendingPathComponent("sample-data/expected/all_time.json"))
        for threads in ["1", "2"] {
            let result = try RankingsBinary.run(["aggregate", "--threads", threads, "--computed-at", fixedComputedAt, typed])
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stdout == expected)
            #expect(result.stderrText.hasPrefix("rankings: 5000 events (2712 hilarious, 2162 horrible, 126 neutral, "
                                                + "20 documents of other collections left out), 0 bad lines, 423 jokes"),
                    "\(result.stderrText)")
        }
    }
}
