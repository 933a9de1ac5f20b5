import Foundation
import Testing
@testable import RankingsKit

/// Memory that does not multiply with threads (issue 17): each worker's tables stay within a
/// fixed bound and are emptied into one shared table, which receives every key with the counts
/// one thread would find; `--stats` leaves in bounded batches.
@Suite("Shared tally and streamed stats")
struct SharedTallyTests {
    static func ids(_ range: Range<Int>) -> [[UInt8]] { range.map { Array("joke-\($0)".utf8) } }

    @Test func flushingEmptiesTheWorkersAndAddsUp() {
        let shared = SharedTally(workers: 3, dedupe: .none)
        for (w, worker) in shared.workers.enumerated() {
            // Overlapping jokes: 0..<2000, 1000..<3000, 2000..<4000.
            for id in Self.ids((w * 1000)..<(w * 1000 + 2000)) {
                id.withUnsafeBufferPointer { worker.tally.add(id: $0, rating: w == 1 ? 1 : 5) }
            }
            shared.flush(worker)
            #expect(worker.tally.jokeCount == 0)
        }
        let combined = shared.finish().tally
        #expect(combined.jokeCount == 4000)
        #expect(combined.totals.ratings == 6000)
        #expect(combined.totals.horrible == 2000)
        let middle = Array("joke-1500".utf8).withUnsafeBufferPointer { combined.entry(for: $0) }
        #expect(combined.counts(middle).ratings == 2)
    }

    @Test func oneWorkerKeepsItsOwnUnboundedTable() {
        let shared = SharedTally(workers: 1, dedupe: .none, bound: TableBound(keys: 2, keyBytes: 8))
        let worker = shared.workers[0]
        #expect(shared.combined === worker)
        for id in Self.ids(0..<10) { id.withUnsafeBufferPointer { worker.tally.add(id: $0, rating: 5) } }
        #expect(!worker.tally.isFull)
        shared.flush(worker)
        #expect(worker.tally.jokeCount == 10)
    }

    /// Events through the counter, as a reader hands them over: after every event, each
    /// worker's tables hold no more than the bound (the key bytes at most one key over), and in
    /// the end the shared table holds what a single unbounded table would.
    @Test(arguments: [EventSelection.Dedupe.none, .device, .eventID])
    func aWorkerNeverHoldsMoreThanItsBound(dedupe: EventSelection.Dedupe) {
        let bound = TableBound(keys: 8, keyBytes: 100)
        var selection = EventSelection()
        selection.dedupe = dedupe
        let shared = SharedTally(workers: 2, dedupe: dedupe, bound: bound)
        let alone = WorkerTally(dedupe: dedupe)
        var first = EventCounter(worker: shared.workers[0], selection: selection)
        var second = EventCounter(worker: shared.workers[1], selection: selection)
        var single = EventCounter(worker: alone, selection: selection)
        var random = SplitMix64(seed: 17)
        var ids: [[UInt8]] = []
        for n in 0..<3000 {
            let joke = Array("joke-\(random.next() % 300)".utf8)
            let device = Array("device-\(random.next() % 40)".utf8)
            let event = Array("\(String(decoding: device, as: UTF8.self))_\(String(decoding: joke, as: UTF8.self))".utf8)
            let rating = Double(random.next() % 5 + 1)
            let time = Timestamp(seconds: Int64(random.next() % 50), nanoseconds: 0)
            ids.append(joke)
            let toFirst = random.next() % 2 == 0
            joke.withUnsafeBufferPointer { id in
                device.withUnsafeBufferPointer { dev in
                    event.withUnsafeBufferPointer { ev in
                        var details = DecodedEventDetails(time: .at(time), device: dev, event: ev)
                        if toFirst {
                            _ = first.event(id: id, rating: rating, record: n + 1, position: Int64(n), details: &details)
                        } else {
                            _ = second.event(id: id, rating: rating, record: n + 1, position: Int64(n), details: &details)
                        }
                        _ = single.event(id: id, rating: rating, record: n + 1, position: Int64(n), details: &details)
                    }
                }
            }
            for worker in shared.workers {
                #expect(worker.tally.jokeCount < bound.keys)
                if let votes = worker.votes {
                    #expect(votes.count < bound.keys)
                    #expect(votes.owners.storedBytes < bound.keyBytes)
                }
            }
        }
        let combined = shared.finish()
        for worker in shared.workers { #expect(worker.tally.jokeCount == 0 && (worker.votes?.count ?? 0) == 0) }
        #expect(combined.validEvents == alone.validEvents)
        combined.votes?.countWinners(into: combined.tally)
        alone.votes?.countWinners(into: alone.tally)
        #expect(combined.votes?.count == alone.votes?.count)
        #expect(Self.view(combined.tally) == Self.view(alone.tally))
        #expect(Self.view(combined.tally).count == Set(ids).count)
    }

    /// The whole run, at 1, 2 and 8 threads, with the worker tables bounded to a few keys (so
    /// they are emptied every few events, mid-piece) and as shipped: every joke once, with
    /// identical counts, events and duplicates removed. 20,000 events over 5,000 jokes; under a
    /// sanitizer (`Sanitizer.isOn`) 5,000 over 1,250, still thousands of flushes a worker.
    @Test(arguments: [EventSelection.Dedupe.none, .device, .eventID])
    func everyThreadCountFindsTheSameKeys(dedupe: EventSelection.Dedupe) throws {
        let events = Sanitizer.isOn ? 5_000 : 20_000
        try ScratchDirectory.with { dir throws in
            var random = SplitMix64(seed: 23)
            var text = ""
            for n in 0..<events {
                let joke = "joke-\(random.next() % UInt64(events / 4))", device = "D\(random.next() % 300)"
                text += "{\"id\":\"\(device)_\(joke)\",\"joke_id\":\"\(joke)\",\"rating\":\(random.next() % 5 + 1),"
                    + "\"device_id\":\"\(device)\",\"timestamp\":{\"_seconds\":\(random.next() % 1000),\"_nanoseconds\":\(n)}}\n"
            }
            let path = try dir.write("events.ndjson", text)
            var selection = EventSelection()
            selection.dedupe = dedupe
            func run(_ threads: Int, _ bound: TableBound) throws -> [String] {
                let files = try InputFile.resolve([path])
                defer { for file in files where file.fd > 2 { close(file.fd) } }
                let result = try Aggregator.run(files, threads: threads, selection: selection, pieceSize: 50_000,
                                                workerBound: bound)
                return ["events \(result.validEvents) removed \(result.duplicatesRemoved)"] + Self.view(result.tally)
            }
            let one = try run(1, .worker)
            #expect(one.count > events / 5)
            for threads in [2, 8] {
                for bound in [TableBound.worker, TableBound(keys: 3, keyBytes: 40)] {
                    #expect(try run(threads, bound) == one, "threads \(threads) bound \(bound)")
                }
            }
        }
    }

    /// A tally as lines of joke id and counts, in id order.
    static func view(_ tally: Tally) -> [String] {
        tally.sortedJokes().filter { $0.counts.ratings > 0 }.map { joke in
            let c = joke.counts
            return "\(String(decoding: joke.id, as: UTF8.self)) \(c.hilarious) \(c.horrible) \(c.neutral) \(c.ratingSum)"
        }
    }

    /// 0.2 built the whole file in one buffer (2.2 GB for 5 M jokes).
    @Test func statsLeaveInBatches() throws {
        let tally = Tally()
        for id in Self.ids(0..<20_000) { id.withUnsafeBufferPointer { tally.add(id: $0, rating: 5) } }
        var batches: [[UInt8]] = []
        try JokeStats.write(tally) { (bytes: [UInt8]) throws(OutputError) in batches.append(bytes) }
        // Bound first, then asked: a closure inside #expect costs the type checker seconds here.
        let largest = batches.map(\.count).max() ?? 0
        let lines = batches.joined().filter { $0 == 0x0A }.count
        #expect(batches.count > 1)
        #expect(largest < JokeStats.batchSize + 4096)
        #expect(lines == 20_000)
    }
}
