import Foundation
import Testing

/// `rankings check --print-firestore`: a stored document, JSON or body, becomes the body
/// `aggregate --format firestore` writes for the same content, and nothing else reaches stdout.
@Suite("Firestore: check --print-firestore")
struct PrintFirestoreTests {
    static let root = RankingsBinary.packageRoot
    static func golden(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(path))
    }

    /// Each JSON golden and its Firestore golden, as sample-data/firestore/README.md pairs them.
    static let pairs = [("sample-data/expected/all_time.json", "sample-data/firestore/all_time.json"),
                        ("sample-data/backfill/week-2025-W42.json", "sample-data/firestore/week-2025-W42.json"),
                        ("sample-data/backfill/since-30d.json", "sample-data/firestore/since-30d.json"),
                        ("sample-data/backfill/since-30d.week-document.json",
                         "sample-data/firestore/since-30d.week-document.json")]

    @Test(arguments: pairs)
    func aJSONDocumentBecomesItsFirestoreGolden(json: String, body: String) throws {
        let run = try RankingsBinary.run(["check", "--print-firestore", json], directory: Self.root)
        #expect(run.status == 0)
        #expect(run.stdout == (try Self.golden(body)))
        #expect(run.stderrText == "rankings: 1 document checked, all valid\n")
    }

    @Test(arguments: pairs.map(\.1))
    func aBodyComesBackByteForByte(body: String) throws {
        let run = try RankingsBinary.run(["check", "-q", "--format", "firestore", "--print-firestore", body],
                                         directory: Self.root)
        #expect(run.status == 0)
        #expect(run.stdout == (try Self.golden(body)))
        #expect(run.stderr.isEmpty)
    }

    @Test func standardInputIsReadOnce() throws {
        let run = try RankingsBinary.run(["check", "-q", "--print-firestore", "-"],
                                         stdin: try Self.golden("sample-data/expected/all_time.json"))
        #expect(run.status == 0)
        #expect(run.stdout == (try Self.golden("sample-data/firestore/all_time.json")))
    }

    @Test func anInvalidDocumentPrintsNothing() throws {
        let run = try RankingsBinary.run(["check", "-q", "--print-firestore", "-"],
                                         stdin: Data(#"{"week_id": "all_time", "hilarious": []}"#.utf8))
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(run.stderrText.contains("-: $.horrible: missing"))
    }

    @Test func aMissingDocumentIs66() throws {
        let run = try RankingsBinary.run(["check", "--print-firestore", "no-such.json"], directory: Self.root)
        #expect(run.status == 66)
        #expect(run.stdout.isEmpty)
    }

    @Test func oneDocumentOnlyAndNoExtraKeys() throws {
        let two = try RankingsBinary.run(["check", "--print-firestore", "a.json", "b.json"])
        #expect(two.status == 64)
        #expect(two.stderrText.hasPrefix("rankings: error: --print-firestore takes exactly one DOC\n"))
        let extra = try RankingsBinary.run(["check", "--print-firestore", "--allow-extra-keys", "a.json"])
        #expect(extra.status == 64)
        #expect(extra.stderrText.hasPrefix("rankings: error: --print-firestore cannot be used with --allow-extra-keys\n"))
    }
}
