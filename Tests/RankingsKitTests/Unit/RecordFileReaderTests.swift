import Foundation
import Glibc
import Testing
@testable import RankingsKit

/// The seam every format plugs into (JSON lines and managed exports are two such readers): a
/// `RecordFileReader` feeds the same `EventCounter`, its files are cut at its `splitUnit`, and
/// record numbers, bad records and records left out merge as lines do, whatever the threads
/// and pieces.
@Suite("Record files through the aggregator")
struct RecordFileReaderTests {
    /// A toy format: 4-byte records, `[joke, rating digit, kind, \n]`, kind `e` an event, `o`
    /// another collection's record, `b` a bad one, `d` an event whose device and event id are the
    /// joke byte.
    struct FixedRecords: RecordFileReader {
        var splitUnit: Int64? { 8 }

        func read(_ file: InputFile, descriptor: Int32, from start: Int64, to end: Int64, scratch: RecordScratch,
                  into counter: inout EventCounter, progress: ProgressCounter) throws(InputError) -> (records: Int, bytes: Int64) {
            var record = 0
            var offset = start
            var bytes = [UInt8](repeating: 0, count: 4)
            while offset < min(end, file.size) {
                let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 4, off_t(offset)) }
                guard n == 4 else { throw .readFailed(path: file.displayPath, reason: "short record") }
                record += 1
                bytes.withUnsafeBufferPointer { b in
                    let id = UnsafeBufferPointer(rebasing: b[0..<1])
                    var details = DecodedEventDetails(device: id, event: id)
                    switch b[2] {
                    case UInt8(ascii: "o"): counter.leftOut(record: record)
                    case UInt8(ascii: "b"): counter.bad(record: record, reason: .invalid(.ratingOutOfRange), refused: .unknown)
                    default:
                        _ = counter.event(id: id, rating: Double(b[1] - UInt8(ascii: "0")), record: record,
                                          position: offset, details: &details)
                    }
                }
                offset += 4
            }
            return (record, min(end, file.size) - start)
        }
    }

    @Test(arguments: [1, 2], [nil, 8, 16] as [Int64?])
    func recordsMergeLikeLines(threads: Int, pieceSize: Int64?) throws {
        try ScratchDirectory.with { dir throws in
            // Records 1...10: bad ones at 3 and 8, others' records at 5 and 6.
            let text = "a5e\na5e\nx0b\nb1e\nc5o\nc5o\na1e\ny9b\nb1e\na5e\n"
            try dir.write("output-0", Array(text.utf8))
            let path = dir.path("output-0")
            let file = InputFile(displayPath: path, origin: .path(path), format: FixedRecords(),
                                 compression: .none, size: Int64(text.utf8.count))
            #expect(file.canSplit)
            let result = try Aggregator.run([file, file], threads: threads, pieceSize: pieceSize)
            #expect(result.validEvents == 12)
            #expect(result.tally.totals.hilarious == 6)
            #expect(result.tally.totals.horrible == 6)
            #expect(result.leftOut == 4)
            #expect(result.badLineCount == 4)
            #expect(result.firstBadLines.map { $0.line.message(in: $0.path) } == [
                "\(path):record 3: invalid record: rating is not between 1 and 5",
                "\(path):record 8: invalid record: rating is not between 1 and 5",
                "\(path):record 3: invalid record: rating is not between 1 and 5",
                "\(path):record 8: invalid record: rating is not between 1 and 5",
            ])
            #expect(result.inputBytes == 2 * Int64(text.utf8.count))
        }
    }

    /// `--dedupe id` through the same seam: the later record of an id wins, across pieces, by
    /// the position the reader gave. (`--dedupe device` gives the same votes, no timestamps,
    /// to the higher rating, whatever the positions.)
    @Test(arguments: [1, 2])
    func dedupeUsesTheReadersPositions(threads: Int) throws {
        try ScratchDirectory.with { dir throws in
            let text = "a5d\na1d\nb1d\nb5d\n"
            try dir.write("output-0", Array(text.utf8))
            let path = dir.path("output-0")
            let file = InputFile(displayPath: path, origin: .path(path), format: FixedRecords(),
                                 compression: .none, size: Int64(text.utf8.count))
            var selection = EventSelection()
            selection.dedupe = .eventID
            let result = try Aggregator.run([file], threads: threads, selection: selection, pieceSize: 8)
            #expect(result.duplicatesRemoved == 2)
            #expect(result.tally.totals.hilarious == 1)
            #expect(result.tally.totals.horrible == 1)
            selection.dedupe = .device
            let device = try Aggregator.run([file], threads: threads, selection: selection, pieceSize: 8)
            #expect(device.duplicatesRemoved == 2)
            #expect(device.tally.totals.hilarious == 2)
            #expect(device.tally.totals.horrible == 0)
        }
    }
}
