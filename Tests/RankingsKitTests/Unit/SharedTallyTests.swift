import Testing
@testable import RankingsKit

/// Memory that does not multiply with threads: workers' tables are emptied into one shared
/// table, and `--stats` leaves in bounded batches.
@Suite("Shared tally and streamed stats")
struct SharedTallyTests {
    static func ids(_ range: Range<Int>) -> [[UInt8]] { range.map { Array("joke-\($0)".utf8) } }

    @Test func flushingEmptiesTheWorkersAndAddsUp() {
        let workers = (0..<3).map { _ in WorkerTally(dedupe: .none) }
        let shared = SharedTally(workers: workers, dedupe: .none)
        for (w, worker) in workers.enumerated() {
            // Overlapping jokes: 0..<2000, 1000..<3000, 2000..<4000.
            for id in Self.ids((w * 1000)..<(w * 1000 + 2000)) {
                id.withUnsafeBufferPointer { worker.tally.add(id: $0, rating: w == 1 ? 1 : 5) }
            }
            shared.flush(worker)
            #expect(worker.tally.jokeCount == 0)
        }
        let combined = shared.combined.tally
        #expect(combined.jokeCount == 4000)
        #expect(combined.totals.ratings == 6000)
        #expect(combined.totals.horrible == 2000)
        let middle = Array("joke-1500".utf8).withUnsafeBufferPointer { combined.entry(for: $0) }
        #expect(combined.counts(middle).ratings == 2)
    }

    @Test func oneWorkerKeepsItsOwnTable() {
        let worker = WorkerTally(dedupe: .none)
        let shared = SharedTally(workers: [worker], dedupe: .none)
        Array("a".utf8).withUnsafeBufferPointer { worker.tally.add(id: $0, rating: 5) }
        shared.flush(worker)
        #expect(shared.combined === worker)
        #expect(worker.tally.jokeCount == 1)
    }

    /// 0.2 built the whole file in one buffer (2.2 GB for 5 M jokes).
    @Test func statsLeaveInBatches() throws {
        let tally = Tally()
        for id in Self.ids(0..<20_000) { id.withUnsafeBufferPointer { tally.add(id: $0, rating: 5) } }
        var batches: [[UInt8]] = []
        try JokeStats.write(tally) { (bytes: [UInt8]) throws(OutputError) in batches.append(bytes) }
        #expect(batches.count > 1)
        #expect(batches.allSatisfy { $0.count < JokeStats.batchSize + 4096 })
        #expect(batches.flatMap { $0 } == JokeStats.ndjson(tally))
        #expect(batches.flatMap { $0 }.filter { $0 == 0x0A }.count == 20_000)
    }
}
