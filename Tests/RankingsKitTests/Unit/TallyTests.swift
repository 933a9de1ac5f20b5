import Testing
@testable import RankingsKit

/// The tally's counts per exact id, held to a dictionary, for ids its cache of recent ids holds
/// whole (8 to 24 bytes) and for the others: ids one byte apart at every position, ids whose
/// words agree but whose lengths differ, more ids than the cache has lines, and a tally emptied
/// and refilled (its entries are numbered again from 0).
@Suite("Tally")
struct TallyTests {
    /// Ids of 1 to 30 bytes, and for each, the same id with one byte changed at each position.
    static func nearIDs() -> [[UInt8]] {
        var ids: [[UInt8]] = []
        for length in 1...30 {
            let base = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            ids.append(base)
            for i in 0..<length {
                var changed = base
                changed[i] ^= 0x20
                ids.append(changed)
            }
        }
        // One byte repeated: ids of 9 to 16 bytes have the same first and last words (and no
        // middle one), as have ids of 17 to 24 bytes; enough of them that some share a line.
        for byte in UInt8.min...UInt8.max {
            for length in 8...25 { ids.append([UInt8](repeating: byte, count: length)) }
        }
        return ids
    }

    /// A tally and what it must hold, given the same events.
    struct Counted {
        let tally = Tally()
        var expected: [[UInt8]: JokeCounts] = [:]

        mutating func add(_ id: [UInt8], rating: Double) {
            id.withUnsafeBufferPointer { tally.add(id: $0, rating: rating) }
            expected[id, default: JokeCounts()].add(rating)
        }

        func check() {
            #expect(tally.jokeCount == expected.count)
            for (id, want) in expected {
                let got = id.withUnsafeBufferPointer { tally.counts(tally.entry(for: $0)) }
                #expect(got == want, "id \(String(decoding: id, as: UTF8.self))")
            }
        }
    }

    @Test func nearIDsAreCountedApart() {
        var counted = Counted()
        var random = SplitMix64(seed: 3)
        let ids = Self.nearIDs()
        for _ in 0..<5 {
            for id in ids.shuffled(using: &random) { counted.add(id, rating: Double(random.next() % 5 + 1)) }
        }
        counted.check()
    }

    @Test func moreIDsThanCacheLines() {
        var counted = Counted()
        var random = SplitMix64(seed: 5)
        for _ in 0..<50_000 {
            // Firestore-like 20-byte ids, 10,000 of them.
            let id = Array("j\(String(repeating: "0", count: 14))\(random.next() % 10_000)".utf8.suffix(20))
            counted.add(id, rating: Double(random.next() % 5 + 1))
        }
        counted.check()
    }

    @Test func anEmptiedTallyForgetsItsIDs() {
        var counted = Counted()
        let first = (0..<50).map { Array("first-joke-\($0)".utf8) }
        let second = (0..<50).map { Array("other-joke-\($0)".utf8) }
        for id in first { id.withUnsafeBufferPointer { counted.tally.add(id: $0, rating: 5) } }
        counted.tally.removeAll()
        // The second batch, then the first again: entries 0..<50 now belong to other ids.
        for id in second + first { counted.add(id, rating: 1) }
        counted.check()
    }
}
