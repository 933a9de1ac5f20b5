import Foundation
import Testing
@testable import RankingsKit

/// `Rankings(tally, top:)`: order, ties, truncation, ranks and totals.
@Suite("Rankings")
struct RankingsTests {
    static func ids(_ list: [RankedJoke]) -> [[UInt8]] { list.map(\.id) }

    @Test func ordersByCountThenByIdBytes() {
        let tally = makeTally([
            ("b", 5), ("b", 5), ("a", 5), ("c", 5), ("c", 5), ("c", 5),
            ("B", 5), ("aa", 5), ("a b", 5),
        ])
        let r = Rankings(tally, top: 10)
        #expect(r.hilarious.map { String(decoding: $0.id, as: UTF8.self) } == ["c", "b", "B", "a", "a b", "aa"])
        #expect(r.hilarious.map(\.count) == [3, 2, 1, 1, 1, 1])
        #expect(r.hilarious.map(\.rank) == [1, 2, 3, 4, 5, 6])
        #expect(r.horrible.isEmpty)
    }

    /// Precomposed "é" and "e" + combining acute are equal as `String`s but are two jokes, and
    /// ties between them go by bytes, not by Unicode collation.
    @Test func canonicallyEquivalentIdsAreDistinctAndOrderedByBytes() {
        let precomposed: [UInt8] = [0xC3, 0xA9]          // U+00E9
        let decomposed: [UInt8] = [0x65, 0xCC, 0x81]     // "e" U+0301
        let f: [UInt8] = [0x66]                          // "f"
        let emoji: [UInt8] = [0xF0, 0x9F, 0x98, 0x80]    // U+1F600
        let private1: [UInt8] = [0xEF, 0xBC, 0xA1]       // U+FF21, BMP above the surrogates
        // Sanity: Swift's String considers the first two equal.
        #expect(String(decoding: precomposed, as: UTF8.self) == String(decoding: decomposed, as: UTF8.self))

        let tally = makeTally([(precomposed, 1), (decomposed, 1), (f, 1), (emoji, 1), (private1, 1),
                               (precomposed, 5), (decomposed, 5)])
        #expect(tally.jokeCount == 5)
        let r = Rankings(tally, top: 1000)
        // Byte order: 0x65 'e'… < 0x66 'f' < 0xC3… < 0xEF… < 0xF0…
        #expect(Self.ids(r.horrible) == [decomposed, f, precomposed, private1, emoji])
        #expect(r.horrible.map(\.rank) == [1, 2, 3, 4, 5])
        #expect(Self.ids(r.hilarious) == [decomposed, precomposed])
        #expect(r.totalHorrible == 5)
        #expect(r.totalHilarious == 2)
    }

    /// UTF-16 order (what `NSString` compares) puts U+FF21 after U+1F600's surrogates; byte order
    /// (= code point order) puts it before.
    @Test func byteOrderIsNotUTF16Order() {
        let bmpHigh: [UInt8] = Array("\u{FF21}".utf8)
        let astral: [UInt8] = Array("\u{1F600}".utf8)
        let r = Rankings(makeTally([(astral, 5), (bmpHigh, 5)]), top: 10)
        #expect(Self.ids(r.hilarious) == [bmpHigh, astral])
    }

    @Test func idsDifferingOnlyInTrailingBytesOrNULAreDistinct() {
        let tally = makeTally([([0x61], 5), ([0x61, 0x00], 5), ([0x61, 0x00, 0x00], 5), ([0x00], 5)])
        let r = Rankings(tally, top: 10)
        #expect(Self.ids(r.hilarious) == [[0x00], [0x61], [0x61, 0x00], [0x61, 0x00, 0x00]])
    }

    @Test func topOneKeepsOnlyTheLeaderButTotalsCountEverything() {
        let tally = makeTally([("x", 5), ("y", 5), ("y", 4), ("z", 1), ("z", 2), ("x", 1), ("w", 3)])
        let r = Rankings(tally, top: 1)
        #expect(r.hilarious == [RankedJoke(id: Array("y".utf8), count: 2, rank: 1)])
        #expect(r.horrible == [RankedJoke(id: Array("z".utf8), count: 2, rank: 1)])
        #expect(r.totalHilarious == 3)
        #expect(r.totalHorrible == 3)
    }

    @Test func topLargerThanJokeCountListsEveryJoke() {
        let tally = makeTally([("a", 5), ("b", 5), ("c", 1)])
        let r = Rankings(tally, top: 1000)
        #expect(r.hilarious.count == 2)
        #expect(r.horrible.count == 1)
        #expect(r.horrible[0].rank == 1)
    }

    @Test func ranksRunOneToNWithoutGapsEvenOnTies() {
        var events: [(String, Double)] = []
        for i in 0..<50 { events.append((String(format: "joke%03d", i), 5)) }
        let r = Rankings(makeTally(events), top: 20)
        #expect(r.hilarious.map(\.rank) == Array(1...20))
        #expect(r.hilarious.allSatisfy { $0.count == 1 })
        #expect(r.hilarious.map { String(decoding: $0.id, as: UTF8.self) } == (0..<20).map { String(format: "joke%03d", $0) })
        #expect(r.totalHilarious == 50)
    }

    @Test func neutralOnlyJokesAppearInNeitherList() {
        let tally = makeTally([("meh", 3), ("meh", 2.5), ("meh", 3.999), ("good", 4), ("bad", 2)])
        let r = Rankings(tally, top: 10)
        #expect(Self.ids(r.hilarious) == [Array("good".utf8)])
        #expect(Self.ids(r.horrible) == [Array("bad".utf8)])
        #expect(r.totalHilarious == 1)
        #expect(r.totalHorrible == 1)
    }

    /// 4 and above is Hilarious, 2 and below Horrible, strictly between is neutral.
    @Test func kindBoundaries() {
        let tally = makeTally([("a", 4), ("a", 5), ("a", 4.0000001), ("a", 3.9999999),
                               ("a", 2), ("a", 1), ("a", 2.0000001), ("a", 1.5)])
        let r = Rankings(tally, top: 10)
        #expect(r.totalHilarious == 3)
        #expect(r.totalHorrible == 3)
        let counts = tally.counts(0)
        #expect(counts.neutral == 2)
    }

    @Test func emptyTallyGivesEmptyLists() {
        let r = Rankings(Tally(), top: 10)
        #expect(r.hilarious.isEmpty)
        #expect(r.horrible.isEmpty)
        #expect(r.totalHilarious == 0)
        #expect(r.totalHorrible == 0)
    }

    /// The result must not depend on the order events arrived in.
    @Test func independentOfInsertionOrder() {
        var rng = SplitMix64(seed: 42)
        var events: [(String, Double)] = []
        for _ in 0..<3000 {
            events.append(("j\(Int.random(in: 0..<200, using: &rng))", Double(Int.random(in: 1...5, using: &rng))))
        }
        let forward = Rankings(makeTally(events), top: 1000)
        let shuffled = Rankings(makeTally(events.shuffled(using: &rng)), top: 1000)
        #expect(forward == shuffled)
        #expect(forward.totalHilarious == events.filter { $0.1 >= 4 }.count)
        #expect(forward.totalHorrible == events.filter { $0.1 <= 2 }.count)
    }

    /// Many distinct ids force the tally's table and counts to grow; every count must survive.
    /// (Past 512 distinct ids, `Tally.add` once wrote through the old `counts` pointer after
    /// `entry(for:)` had reallocated it.)
    @Test
    func manyDistinctIdsSurviveTableGrowth() {
        var events: [(String, Double)] = []
        for i in 0..<5000 {
            for _ in 0..<(i % 3 + 1) { events.append(("id-\(i)", 5)) }
        }
        let tally = makeTally(events)
        #expect(tally.jokeCount == 5000)
        let r = Rankings(tally, top: 1000)
        #expect(r.hilarious.count == 1000)
        #expect(r.hilarious.allSatisfy { $0.count == 3 })
        // Count-3 ids are i ≡ 2 (mod 3); the first 1000 in byte order.
        let expected = (0..<5000).filter { $0 % 3 == 2 }.map { Array("id-\($0)".utf8) }
            .sorted { $0.lexicographicallyPrecedes($1) }.prefix(1000)
        #expect(Self.ids(r.hilarious) == Array(expected))
        #expect(r.totalHilarious == events.count)
    }
}
