import Foundation
import Testing
@testable import RankingsKit

/// A line far longer than the reader's buffer, arriving in small reads as from a pipe, is
/// scanned a bounded number of times over, not once per read (which took 6 s for 250 MiB).
@Suite("Long lines in small reads")
struct LongLineTests {
    /// Counts the bytes a consumer's own scan looks at, the way `RecordCounter` scans: from the
    /// line's start to its end or to the end of the data so far.
    struct ScanCounter: LineConsumer {
        var scanned = 0
        var lengths: [Int] = []
        mutating func line(from start: UnsafePointer<UInt8>, dataEnd: UnsafePointer<UInt8>, final: Bool,
                           number: Int, offset: Int64) -> UnsafePointer<UInt8>? {
            let end = UnsafePointer(memchr(start, 0x0A, dataEnd - start + 1)!.assumingMemoryBound(to: UInt8.self))
            scanned += end - start
            if end == dataEnd && !final { return nil }
            lengths.append(end - start)
            return end
        }
        mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {}
        mutating func overlongLine(number: Int, offset: Int64) { Issue.record("overlong line \(number)") }
    }

    @Test(arguments: [4096, 65536])
    func aLongLineIsScannedAFewTimesNotOncePerRead(_ step: Int) throws {
        let length = 8 << 20
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length) + [0x0A] + Array("short\n".utf8)
        var source = ParallelEquivalenceTests.MemorySource(bytes: bytes, step: step)
        var counter = ScanCounter()
        let lines = try LineReader(chunkSize: 64 << 10).read(&source, into: &counter)
        #expect(lines == 2)
        #expect(counter.lengths == [length, 5])
        // Each growth of the buffer rescans what it holds: 2x the line at most, plus change.
        #expect(counter.scanned <= 3 * length, "scanned \(counter.scanned) bytes for a \(length)-byte line")
    }

    /// End to end: a 24 MiB record (a long string field) through standard input counts.
    @Test func aLongRecordThroughAPipeCounts() throws {
        let padding = String(repeating: "p", count: 24 << 20)
        let input = "{\"joke_id\": \"long\", \"rating\": 5, \"note\": \"\(padding)\"}\n" + eventLine("long", "1")
        let result = try RankingsBinary.run(["aggregate", "-q", "--computed-at", "2026-02-18T05:00:00Z", "-"],
                                            stdin: Data(input.utf8))
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(result.stdoutText.contains("\"long\""))
    }
}
