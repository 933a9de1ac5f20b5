import Foundation
import RankingsKit
import Testing

/// `--format firestore`: the golden bodies in `sample-data/firestore/`, the same content as the
/// JSON document under every option, byte-exact joke ids, and the usual atomic-output promises.
/// (Google's own parser reads these bodies in `Tests/firestore/run.sh`.)
@Suite("Firestore: aggregate --format firestore")
struct FirestoreFormatTests {
    static let root = RankingsBinary.packageRoot
    static let sample = root.appendingPathComponent("sample-data/rating_events.ndjson").path
    static let oddIDs = root.appendingPathComponent("sample-data/firestore/odd-ids.ndjson").path

    struct Golden: Sendable, CustomTestStringConvertible {
        var file: String
        var json: String
        var arguments: [String]
        var testDescription: String { file }
    }

    static let goldens: [Golden] = [
        Golden(file: "all_time.json", json: "expected/all_time.json", arguments: []),
        Golden(file: "week-2025-W42.json", json: "backfill/week-2025-W42.json", arguments: ["--week", "2025-W42"]),
        Golden(file: "since-30d.json", json: "backfill/since-30d.json", arguments: ["--since", "-30d"]),
        Golden(file: "since-30d.week-document.json", json: "backfill/since-30d.week-document.json",
               arguments: ["--since", "-30d", "--week-document"]),
    ]

    static func read(_ relative: String) throws -> [UInt8] {
        try Array(Data(contentsOf: root.appendingPathComponent("sample-data/" + relative)))
    }

    @Test(arguments: goldens)
    func matchesGoldenAndCarriesTheJSONGoldensContent(_ g: Golden) throws {
        let expected = try Self.read("firestore/" + g.file)
        for threads in ["1", "2"] {
            let run = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--threads", threads,
                                              "--format", "firestore"] + g.arguments + [Self.sample])
            #expect(run.status == 0, "\(run.stderrText)")
            #expect(firstDifference(expected, Array(run.stdout)) == nil,
                    "threads \(threads): \(firstDifference(expected, Array(run.stdout)) ?? "")")
        }
        #expect(try FirestoreUnwrap.document(expected) == Plain(try JSONParser.parse(Self.read(g.json))))
    }

    struct Variant: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var input: String
        var testDescription: String { (arguments + [URL(fileURLWithPath: input).lastPathComponent]).joined(separator: " ") }
    }

    static let variants: [Variant] = [
        Variant(arguments: [], input: sample),
        Variant(arguments: ["--top", "1"], input: sample),
        Variant(arguments: ["--top", "1000"], input: sample),
        Variant(arguments: ["--week", "2025-W42", "--time-zone", "Europe/Berlin"], input: sample),
        Variant(arguments: ["--dedupe", "device", "--as-of", "2025-06-01T00:00:00Z"], input: sample),
        Variant(arguments: ["--top", "1000"], input: oddIDs),
        Variant(arguments: ["--computed-at", "2026-02-18T05:00:00.25-05:00"], input: sample),
        // Nothing counted: both lists empty, `{"arrayValue": {}}`.
        Variant(arguments: ["--week", "2020-W01", "--allow-empty"], input: sample),
    ]

    /// The Firestore body, unwrapped, is the JSON document's content exactly (ids as bytes).
    @Test(arguments: variants)
    func sameContentAsTheJSONDocument(_ v: Variant) throws {
        let base = ["aggregate", "-q", "--computed-at", fixedComputedAt] + v.arguments
        let json = try RankingsBinary.run(base + [v.input])
        let firestore = try RankingsBinary.run(base + ["--format", "firestore", v.input])
        #expect(json.status == 0 && firestore.status == 0, "\(firestore.stderrText)")
        #expect(try FirestoreUnwrap.document(Array(firestore.stdout)) == Plain(try JSONParser.parse(Array(json.stdout))))
        // And the explicit default is today's document.
        let explicit = try RankingsBinary.run(base + ["--format", "json", v.input])
        #expect(explicit.stdout == json.stdout)
    }

    @Test func emptyListsAreEmptyArrayValues() throws {
        let run = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--format", "firestore",
                                          "--allow-empty", "--since", "2030-01-01T00:00:00Z", Self.sample])
        #expect(run.status == 0)
        #expect(run.stdoutText == """
            {
              "fields": {
                "week_id": {"stringValue": "all_time"},
                "hilarious": {"arrayValue": {}},
                "horrible": {"arrayValue": {}},
                "total_hilarious_ratings": {"integerValue": "0"},
                "total_horrible_ratings": {"integerValue": "0"},
                "computed_at": {"timestampValue": "2026-02-18T05:00:00Z"}
              }
            }

            """)
    }

    /// `--stats` is the same file whatever the document's format; `-o` is written atomically.
    @Test func statsAndOutputFileUnaffected() throws {
        try ScratchDirectory.with { dir in
            for format in ["json", "firestore"] {
                let run = try RankingsBinary.run(["aggregate", "-q", "--computed-at", fixedComputedAt, "--format", format,
                                                  "--stats", dir.path("\(format).stats"), "-o", dir.path("\(format).doc"),
                                                  Self.sample])
                #expect(run.status == 0 && run.stdout.isEmpty, "\(run.stderrText)")
            }
            #expect(try dir.read("json.stats") == Self.read("backfill/stats.ndjson"))
            #expect(try dir.read("firestore.stats") == Self.read("backfill/stats.ndjson"))
            #expect(try dir.read("firestore.doc") == Self.read("firestore/all_time.json"))
        }
    }

    @Test func failedRunLeavesTheOldBodyInPlace() throws {
        try ScratchDirectory.with { dir in
            let old = try Self.read("firestore/all_time.json")
            let output = try dir.write("all_time.json", old)
            let input = try dir.write("bad.ndjson", "{\"joke_id\": \"a\", \"rating\": 5}\nnot json\n")
            let run = try RankingsBinary.run(["aggregate", "--format", "firestore", "-o", output, input])
            #expect(run.status == 65)
            #expect(try dir.read("all_time.json") == old)
            #expect(try dir.listing() == ["all_time.json", "bad.ndjson"])
        }
    }

    @Test(arguments: ["aggregate", "check"], ["xml", "FIRESTORE", "", "json,firestore"])
    func unknownFormatIsUsageError(command: String, format: String) throws {
        let run = try RankingsBinary.run([command, "--format", format, Self.sample])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderrText.contains("--format takes 'json' or 'firestore', not '\(format)'"), "\(run.stderrText)")
    }
}

/// A JSON value without offsets, strings and keys as bytes, for comparing content exactly.
indirect enum Plain: Equatable, CustomStringConvertible {
    case object(keys: [[UInt8]], values: [Plain])
    case array([Plain])
    case string([UInt8])
    case number(String)
    case bool(Bool)
    case null

    init(_ value: JSONValue) {
        switch value.kind {
        case .object(let members): self = .object(keys: members.map(\.key), values: members.map { Plain($0.value) })
        case .array(let elements): self = .array(elements.map(Plain.init))
        case .string(let bytes): self = .string(bytes)
        case .number(let text): self = .number(String(decoding: text, as: UTF8.self))
        case .bool(let b): self = .bool(b)
        case .null: self = .null
        }
    }

    var description: String {
        switch self {
        case .object(let keys, let values):
            "{" + zip(keys, values).map { "\(String(decoding: $0, as: UTF8.self)): \($1)" }.joined(separator: ", ") + "}"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .string(let bytes): "\(bytes)"
        case .number(let text): text
        case .bool(let b): "\(b)"
        case .null: "null"
        }
    }
}

/// The test's own reading of a Firestore body, written from the REST reference rather than from
/// the product's checker: each `{"<type>Value": x}` becomes x, integers become JSON numbers.
enum FirestoreUnwrap {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func document(_ bytes: [UInt8]) throws -> Plain {
        let body = Plain(try JSONParser.parse(bytes))
        guard case .object(let keys, let values) = body, keys == [Array("fields".utf8)] else {
            throw Failure(description: "not {\"fields\": ...}: \(body)")
        }
        return try fields(values[0])
    }

    static func fields(_ object: Plain) throws -> Plain {
        guard case .object(let keys, let values) = object else { throw Failure(description: "fields: \(object)") }
        return .object(keys: keys, values: try values.map(value))
    }

    static func value(_ wrapper: Plain) throws -> Plain {
        guard case .object(let keys, let values) = wrapper, keys.count == 1 else {
            throw Failure(description: "not a Firestore value: \(wrapper)")
        }
        let inner = values[0]
        switch (String(decoding: keys[0], as: UTF8.self), inner) {
        case ("stringValue", .string), ("timestampValue", .string):
            return inner
        case ("integerValue", .string(let digits)):
            return .number(String(decoding: digits, as: UTF8.self))
        case ("arrayValue", .object(let keys, let values)) where keys.isEmpty:
            _ = values
            return .array([])
        case ("arrayValue", .object(let keys, let values)) where keys == [Array("values".utf8)]:
            guard case .array(let elements) = values[0] else { throw Failure(description: "values: \(values[0])") }
            return .array(try elements.map(value))
        case ("mapValue", .object(let keys, let values)) where keys == [Array("fields".utf8)]:
            return try fields(values[0])
        default:
            throw Failure(description: "unexpected Firestore value \(wrapper)")
        }
    }
}

/// Reading an earlier output back gives the same content whichever format wrote it.
@Suite("Firestore: reading a stored document back")
struct DocumentContentTests {
    @Test(arguments: FirestoreFormatTests.goldens)
    func bothFormatsReadBackAlike(_ g: FirestoreFormatTests.Golden) throws {
        let body = try #require(DocumentContent.read(FirestoreFormatTests.read("firestore/" + g.file)))
        let json = try #require(DocumentContent.read(FirestoreFormatTests.read(g.json)))
        #expect(Plain(body) == Plain(json))
        #expect(Plain(json) == Plain(try JSONParser.parse(FirestoreFormatTests.read(g.json))))
    }

    @Test func brokenInputsReadAsNothing() {
        #expect(DocumentContent.read(Array("{\"fields\": {\"week_id\": \"all_time\"}}".utf8)) == nil)
        #expect(DocumentContent.read(Array("not json".utf8)) == nil)
    }
}
