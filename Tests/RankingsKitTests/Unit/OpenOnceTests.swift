import Foundation
import Glibc
import Testing
@testable import RankingsKit

/// Every input is opened once for reading, whatever its format and however many ranges it is
/// cut into: the aggregator opens it and hands that descriptor to the format's reader. The
/// kernel counts the opens (inotify), after the listing's own check.
@Suite("Each input opened once")
struct OpenOnceTests {
    /// Opens of one file seen by inotify since `init`. With one thread no two opens are adjacent
    /// (each is followed by its close), so the kernel's merging of identical events in a row
    /// cannot hide one.
    final class OpenCount {
        let fd: Int32

        init(_ path: String) throws {
            fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            try #require(fd >= 0)
            try #require(inotify_add_watch(fd, path, UInt32(IN_OPEN | IN_CLOSE_NOWRITE)) >= 0)
        }

        deinit { close(fd) }

        func opens() -> Int {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            var opens = 0
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { return opens }
                var at = 0
                while at < n {
                    buffer.withUnsafeBytes { raw in
                        let event = raw.loadUnaligned(fromByteOffset: at, as: inotify_event.self)
                        if event.mask & UInt32(IN_OPEN) != 0 { opens += 1 }
                        at += MemoryLayout<inotify_event>.size + Int(event.len)
                    }
                }
            }
        }
    }

    /// Lines (plain in many ranges, and gzip) and a managed export's output file in 32 KiB
    /// block ranges: one open each.
    @Test(arguments: ["plain", "gzip", "export"])
    func oneOpenPerFile(_ format: String) throws {
        try ScratchDirectory.with { dir throws in
            let text = (0..<2000).map { #"{"joke_id":"j\#($0 % 7)","rating":\#($0 % 5 + 1)}"# + "\n" }.joined()
            let path: String
            switch format {
            case "plain": path = try dir.write("votes.ndjson", text)
            case "gzip": path = try dir.write("votes.ndjson.gz", try ScratchDirectory.gzip(Array(text.utf8)))
            default:
                // A copy of its own: the shared fixture's opens by tests running beside this one
                // would count too (CI saw 2).
                path = try ExportFixtures.copy(ExportFixtures.emulator).path
            }
            defer { if format == "export" { try? FileManager.default.removeItem(atPath: path) } }
            let files = try InputFile.resolve([path])
            let watched = format == "export" ? files[0].displayPath : path
            let count = try OpenCount(watched)
            let result = try Aggregator.run(files, threads: 1, pieceSize: format == "export" ? 32 << 10 : 4096)
            #expect(result.validEvents > 0)
            #expect(count.opens() == 1)
        }
    }

    /// The file read is the file listed: one replaced in between is refused (66), not read.
    @Test func aFileReplacedAfterTheListingIsRefused() throws {
        try ScratchDirectory.with { dir throws in
            let path = try dir.write("votes.ndjson", #"{"joke_id":"a","rating":5}"# + "\n")
            let files = try InputFile.resolve([path])
            try dir.write("other.ndjson", #"{"joke_id":"b","rating":1}"# + "\n")
            #expect(rename(dir.path("other.ndjson"), path) == 0)
            #expect(throws: InputError.cannotOpen(path: path, reason: "replaced since the run listed it")) {
                try Aggregator.run(files, threads: 1)
            }
        }
    }
}
