import Testing
@testable import RankingsKit

/// Batching must never reorder, drop or split bytes, whatever the sizes of the pieces.
@Suite("Migration batching: bytes arrive whole and in order")
struct MigrationBatchingTests {
    final class Recorder: MigrationDestination {
        var writes: [[UInt8]] = []
        var failAfter = Int.max
        func writeBatch(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
            if writes.count >= failAfter { throw .writeFailed(path: "recorder", reason: "full") }
            writes.append(Array(bytes))
        }
    }

    @Test func piecesOfEverySizeArriveInOrder() {
        let recorder = Recorder()
        let output = BatchedOutput(to: recorder)
        var rng = SplitMix64(seed: 6)
        var expected: [UInt8] = []
        // Mostly line-sized pieces, with a few at and beyond a whole batch.
        let sizes = (0..<3000).map { _ in Int.random(in: 0...700, using: &rng) }
            + [BatchedOutput.batchSize - 1, BatchedOutput.batchSize, 3, BatchedOutput.batchSize + 5, 0, 9]
        for (i, size) in sizes.enumerated() {
            let piece = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ i) }
            expected += piece
            piece.withUnsafeBytes { output.append($0) }
        }
        output.flush()
        #expect(output.failure == nil)
        #expect(recorder.writes.joined().elementsEqual(expected))
        #expect(recorder.writes.allSatisfy { !$0.isEmpty })
        #expect(recorder.writes.filter { $0.count > BatchedOutput.batchSize }.count == 1)
    }

    @Test func theFirstFailureIsKeptAndNothingMoreIsWritten() {
        let recorder = Recorder()
        recorder.failAfter = 1
        let output = BatchedOutput(to: recorder)
        let line = [UInt8](repeating: 0x41, count: 1000)
        for _ in 0..<3000 { line.withUnsafeBytes { output.append($0) } }
        output.flush()
        #expect(recorder.writes.count == 1)
        #expect(output.failure == .writeFailed(path: "recorder", reason: "full"))
    }
}
