import Foundation
import Testing

/// Each invalid document in `sample-data/check/` against its expected problem lines, byte for
/// byte, run from that directory so the lines name the document as `NAME.json`.
@Suite("Check: fixtures")
struct CheckFixtureTests {
    static let directory = RankingsBinary.packageRoot.appendingPathComponent("sample-data/check")

    static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(".json".count)) }.sorted()
    }()

    @Test func everyFixtureHasItsExpectedOutput() throws {
        #expect(Self.names.count >= 5)
        for name in Self.names {
            #expect(FileManager.default.fileExists(atPath: Self.directory.appendingPathComponent("\(name).expected.txt").path),
                    "\(name).json has no \(name).expected.txt")
        }
    }

    @Test("the problems are exactly the expected lines", arguments: names)
    func fixture(_ name: String) throws {
        let expected = try Data(contentsOf: Self.directory.appendingPathComponent("\(name).expected.txt"))
        let result = try RankingsBinary.run(["check", "-q", "\(name).json"], directory: Self.directory)
        #expect(result.status == (expected.isEmpty ? 0 : 65))
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText == String(decoding: expected, as: UTF8.self))
    }
}
