import Testing
@testable import RankingsKit

/// The rule itself, without a process: which spellings are already on the binary scale.
@Suite("ScaleMigration: what happens to each rating")
struct ScaleMigrationTests {
    func action(_ text: String, _ value: Double) -> ScaleMigration.Action {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { ScaleMigration.action(rating: UnsafeBufferPointer($0), value: value) }
    }

    @Test func exactFiveAndOneAreKept() {
        #expect(action("5", 5) == .keep)
        #expect(action("1", 1) == .keep)
    }

    @Test(arguments: [("4", 4.0), ("4.0", 4), ("4.5", 4.5), ("5.0", 5), ("5e0", 5), ("0.5e1", 5), ("5E0", 5),
                      ("4.9999999999999999999", 5)])
    func otherHilariousSpellingsBecomeFive(_ text: String, _ value: Double) {
        #expect(action(text, value) == .rewriteToHilarious)
    }

    @Test(arguments: [("2", 2.0), ("2.0", 2), ("1.5", 1.5), ("1.0", 1), ("1e0", 1), ("0.2e1", 2), ("10e-1", 1)])
    func otherHorribleSpellingsBecomeOne(_ text: String, _ value: Double) {
        #expect(action(text, value) == .rewriteToHorrible)
    }

    @Test(arguments: [("3", 3.0), ("2.5", 2.5), ("3.5", 3.5), ("2.0001", 2.0001), ("3.99999", 3.99999), ("30e-1", 3)])
    func neutralVotesAreDropped(_ text: String, _ value: Double) {
        #expect(action(text, value) == .drop)
    }

    @Test func countsAddUpAndReportIsFixed() {
        var counts = MigrationCounts()
        for a in [ScaleMigration.Action.keep, .keep, .rewriteToHilarious, .rewriteToHorrible, .drop, .drop, .drop] {
            counts.count(a)
        }
        counts.badLines = 4
        #expect(counts.written == 4)
        #expect(counts.dryRunReport == Array(Migrate.report(unchanged: 2, to5: 1, to1: 1, dropped: 3, bad: 4).utf8))
        #expect(counts.summaryLine
                == "rankings: 4 events written (2 unchanged, 1 rewritten to 5, 1 rewritten to 1), 3 neutral dropped, 4 bad lines")
    }
}
