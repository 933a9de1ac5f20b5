import Foundation
@testable import RankingsKit

/// Runs `Aggregator.run` over `paths` and closes the files afterwards.
/// Every bad line is kept, as a run with `--report` and a large `--max-invalid` keeps them.
func runAggregator(_ paths: [String], threads: Int, pieceSize: Int64? = nil,
               chunkSize: Int = LineReader.chunkSize) throws -> AggregationResult {
    let files = try InputFile.resolve(paths)
    defer { for file in files where file.fd > 2 { close(file.fd) } }
    return try Aggregator.run(files, threads: threads, pieceSize: pieceSize, chunkSize: chunkSize, keepRefused: .max)
}

/// Builds a `Tally` from (id bytes, rating) events.
func makeTally(_ events: [([UInt8], Double)]) -> Tally {
    let tally = Tally()
    for (id, rating) in events {
        id.withUnsafeBufferPointer { tally.add(id: $0, rating: rating) }
    }
    return tally
}

func makeTally(_ events: [(String, Double)]) -> Tally { makeTally(events.map { (Array($0.0.utf8), $0.1) }) }
