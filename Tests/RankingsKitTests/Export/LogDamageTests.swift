import Foundation
import Testing
@testable import RankingsKit

/// A catalogue of damage, each with its one outcome (after LevelDB's log_test.cc, except that
/// any damage refuses the export instead of being skipped).
@Suite("Managed export: damaged logs")
struct LogDamageTests {
    /// Writes `bytes` as the only output file of a kind folder and reads it whole (or `blocks`).
    static func read(_ bytes: [UInt8], blocks: Range<Int64>? = nil) throws -> (Result<CollectedExport, InputError>, path: String) {
        let (sink, error, path) = try readKeeping(bytes, blocks: blocks)
        return (error.map { .failure($0) } ?? .success(sink), path)
    }

    /// `read`, with what the sink was given before the damage, if any.
    static func readKeeping(_ bytes: [UInt8], blocks: Range<Int64>? = nil) throws
        -> (read: CollectedExport, error: InputError?, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Backup { kind_info (2) { kind (1) "", file (2) "output-0" } }
        let metadata = TestEntity.field(2, bytes: TestEntity.field(1, bytes: []) + TestEntity.field(2, bytes: Array("output-0".utf8)))
        try Data(metadata).write(to: folder.appendingPathComponent("all_namespaces_all_kinds.export_metadata"))
        try Data(bytes).write(to: folder.appendingPathComponent("output-0"))
        let export = try #require(try ManagedExport.open(folder.path))
        let file = export.outputFiles[0]
        var reader = ExportFileReader()
        var sink = CollectedExport()
        do throws(InputError) {
            _ = try reader.read(file, blocks: blocks ?? 0..<file.blockCount, into: &sink)
            return (sink, nil, file.displayPath)
        } catch {
            return (sink, error, file.displayPath)
        }
    }

    static func expectCorrupt(_ bytes: [UInt8], blocks: Range<Int64>? = nil, offset: Int64, _ reason: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (result, path) = try read(bytes, blocks: blocks)
        #expect(throws: InputError.corruptExport(path: path, offset: offset, reason: reason), sourceLocation: sourceLocation) {
            _ = try result.get()
        }
    }

    /// A vote sized so that, after `first`, exactly `left` bytes remain in the first block.
    static func filler(after first: [UInt8], leaving left: Int) -> [UInt8] {
        var padding = TestLog.block - first.count - 14 - left - TestEntity.vote("f").count
        while 7 + first.count + 7 + TestEntity.vote("f", padding: padding).count > TestLog.block - left { padding -= 1 }
        return TestEntity.vote("f", padding: padding)
    }

    static func ids(_ bytes: [UInt8]) throws -> [String] {
        try read(bytes).0.get().events.map(\.id)
    }

    @Test("an intact log: FULL records, and a record cut FIRST/MIDDLE/LAST over three blocks")
    func intact() throws {
        let log = TestLog.write([TestEntity.vote("a"), TestEntity.vote("b", padding: 70_000), TestEntity.vote("c")])
        #expect(try Self.ids(log) == ["a", "b", "c"])
    }

    @Test("a zero trailer of fewer than 7 bytes ends a block, and zero padding after a zero header is fine")
    func trailers() throws {
        let first = TestEntity.vote("a")
        // Leave exactly 3 bytes in the first block: the writer pads them with zeros.
        let filler = Self.filler(after: first, leaving: 3)
        var log = TestLog.write([first, filler, TestEntity.vote("b")])
        #expect(log.count > TestLog.block && log[(TestLog.block - 3)..<TestLog.block].allSatisfy { $0 == 0 })
        #expect(try Self.ids(log) == ["a", "f", "b"])
        // Preallocated: a block that is zeros from a header on, then the next block.
        log = TestLog.write([first]) + [UInt8](repeating: 0, count: TestLog.block - 7 - first.count)
        log += TestLog.write([TestEntity.vote("n")])
        #expect(try Self.ids(log) == ["a", "n"])
        // Zeros to the end of the file.
        #expect(try Self.ids(TestLog.write([first]) + [UInt8](repeating: 0, count: 100)) == ["a"])
    }

    @Test("a non-zero byte in a trailer or after a zero header")
    func dirtyTrailer() throws {
        let first = TestEntity.vote("a")
        let filler = Self.filler(after: first, leaving: 3)
        var log = TestLog.write([first, filler, TestEntity.vote("b")])
        log[TestLog.block - 2] = 1
        try Self.expectCorrupt(log, offset: Int64(TestLog.block - 3), "non-zero bytes in the block's 3-byte trailer")
        var padded = TestLog.write([first]) + [UInt8](repeating: 0, count: 200)
        padded[7 + first.count + 100] = 5
        try Self.expectCorrupt(padded, offset: Int64(7 + first.count),
                               "non-zero bytes after a zero-type header (only zeros may follow one to the block's end)")
    }

    @Test("a flipped byte is a checksum mismatch at its fragment's header")
    func flippedByte() throws {
        let a = TestEntity.vote("a"), b = TestEntity.vote("b")
        var log = TestLog.write([a, b])
        log[7 + a.count + 7 + 3] ^= 0x10
        try Self.expectCorrupt(log, offset: Int64(7 + a.count), "checksum mismatch in a \(b.count)-byte FULL fragment")
        // In the header's checksum itself.
        log = TestLog.write([a, b])
        log[1] ^= 0x01
        try Self.expectCorrupt(log, offset: 0, "checksum mismatch in a \(a.count)-byte FULL fragment")
    }

    @Test("a flipped byte in the emulator's export")
    func flippedByteInRealExport() throws {
        let root = try ExportFixtures.copy(ExportFixtures.emulator)
        defer { try? FileManager.default.removeItem(at: root) }
        let output = root.appendingPathComponent("all_namespaces/all_kinds/output-0")
        var bytes = [UInt8](try Data(contentsOf: output))
        let length = Int(bytes[4]) | Int(bytes[5]) << 8
        bytes[30] ^= 0x40
        try Data(bytes).write(to: output)
        let export = try #require(try ManagedExport.open(root.path))
        #expect(throws: InputError.corruptExport(path: output.path, offset: 0, reason: "checksum mismatch in a \(length)-byte FULL fragment")) {
            _ = try CollectedExport.read(export)
        }
    }

    @Test("a file truncated inside a fragment, inside a header, and at a block edge inside a record")
    func truncated() throws {
        let a = TestEntity.vote("a"), b = TestEntity.vote("b")
        let log = TestLog.write([a, b])
        try Self.expectCorrupt(Array(log.prefix(7 + a.count + 7 + 20)), offset: Int64(7 + a.count),
                               "record cut short: a \(b.count)-byte fragment, but the file ends 20 bytes after its header")
        try Self.expectCorrupt(Array(log.prefix(7 + a.count + 3)), offset: Int64(7 + a.count),
                               "record header cut short: the file ends 3 bytes into it")
        let long = TestLog.write([a, TestEntity.vote("long", padding: 50_000)])
        try Self.expectCorrupt(Array(long.prefix(TestLog.block)), offset: Int64(7 + a.count),
                               "record cut short: the file ends inside the record that starts here")
    }

    @Test("the emulator's export truncated part way through its large record")
    func truncatedRealExport() throws {
        let root = try ExportFixtures.copy(ExportFixtures.emulator)
        defer { try? FileManager.default.removeItem(at: root) }
        let output = root.appendingPathComponent("all_namespaces/all_kinds/output-0")
        let bytes = [UInt8](try Data(contentsOf: output))
        // Walk the headers (independently of the reader) to the record open at the 2nd block's end.
        var offset = 0, open = -1
        while offset < 2 * TestLog.block {
            if TestLog.block - offset % TestLog.block < 7 { offset += TestLog.block - offset % TestLog.block; continue }
            let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
            if bytes[offset + 6] == 2 { open = offset }
            if bytes[offset + 6] == 1 || bytes[offset + 6] == 4 { open = -1 }
            offset += 7 + length
        }
        #expect(open >= 0)
        try Data(bytes.prefix(2 * TestLog.block)).write(to: output)
        // The kind folder alone: from the root, the overall metadata's entity count refuses the
        // cut file too, once read (ExportMetadataTests).
        let export = try #require(try ManagedExport.open(output.deletingLastPathComponent().path))
        #expect(throws: InputError.corruptExport(path: output.path, offset: Int64(open),
                                                 reason: "record cut short: the file ends inside the record that starts here")) {
            _ = try CollectedExport.read(export)
        }
    }

    @Test("an impossible length and an impossible type")
    func impossibleHeaders() throws {
        let a = TestEntity.vote("a")
        var log = TestLog.write([a, TestEntity.vote("b", padding: 40_000)])
        log[4] = 0x60
        log[5] = 0xEA
        try Self.expectCorrupt(log, offset: 0, "impossible fragment length 60000: \(TestLog.block - 7) bytes are left in the block")
        log = TestLog.write([a, TestEntity.vote("b")])
        log[7 + a.count + 6] = 9
        try Self.expectCorrupt(log, offset: Int64(7 + a.count), "impossible fragment type 9")
    }

    @Test("a fragment sequence broken across a block edge")
    func brokenSequence() throws {
        let a = TestEntity.vote("a"), long = TestEntity.vote("long", padding: 40_000)
        let log = TestLog.write([a, long, TestEntity.vote("c")])
        #expect(log[7 + a.count + 6] == 2 && log[TestLog.block + 6] == 4)
        // The LAST in block 1 made FULL: the record begun in block 0 never ends.
        var full = log
        TestLog.retype(&full, at: TestLog.block, to: 1)
        try Self.expectCorrupt(full, offset: Int64(TestLog.block), "a FULL fragment inside the record that starts at byte \(7 + a.count)")
        // Read from block 1 on, the same damage is seen from the other side.
        try Self.expectCorrupt(full, blocks: 1..<2, offset: Int64(TestLog.block),
                               "a FULL fragment where the record begun in the block before continues")
        // The FIRST in block 0 made MIDDLE: a continuation with nothing to continue.
        var middle = log
        TestLog.retype(&middle, at: 7 + a.count, to: 3)
        try Self.expectCorrupt(middle, offset: Int64(7 + a.count), "a MIDDLE fragment with no FIRST fragment before it")
        // The FIRST made FULL: read whole, its half record is the first damage met; read from
        // block 1 on, that block starts with a LAST that has no FIRST.
        var orphan = log
        TestLog.retype(&orphan, at: 7 + a.count, to: 1)
        try Self.expectCorrupt(orphan, offset: Int64(7 + a.count),
                               "record 2 is not an entity: a 40016-byte field runs past the end") // the note property
        try Self.expectCorrupt(orphan, blocks: 1..<2, offset: Int64(TestLog.block), "a LAST fragment with no FIRST fragment before it")
    }

    @Test("a record that is not an entity")
    func notAnEntity() throws {
        let a = TestEntity.vote("a")
        try Self.expectCorrupt(TestLog.write([a, [0x0C]]), offset: Int64(7 + a.count),
                               "record 2 is not an entity: an end of group 1 with no start")
        try Self.expectCorrupt(TestLog.write([a, TestEntity.field(15, bytes: [])]), offset: Int64(7 + a.count),
                               "record 2 is not an entity: a property with no name")
        try Self.expectCorrupt(TestLog.write([[0x6A, 0x05, 0x01]]), offset: 0,
                               "record 1 is not an entity: a 5-byte field runs past the end")
        try Self.expectCorrupt(TestLog.write([TestEntity.field(16, bytes: [])]), offset: 0, "record 1 is not an entity: an entity with no key")
        let invalid = TestEntity.encode(path: [("rating_events", .name("x"))], [
            .init(name: "joke_id", value: .string([0xC3, 0x28])), .init(name: "rating", value: .integer(5)),
        ])
        try Self.expectCorrupt(TestLog.write([invalid]), offset: 0, "record 1 is not an entity: joke_id is not UTF-8")
    }

    @Test("an empty output file holds no records")
    func empty() throws {
        #expect(try Self.read([]).0.get() == CollectedExport())
    }

    @Test("a listed output file or kind metadata file that is missing fails on opening")
    func missingFiles() throws {
        let root = try ExportFixtures.copy(ExportFixtures.emulator)
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("all_namespaces/all_kinds")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("output-0"))
        #expect(throws: InputError.cannotOpen(path: folder.path + "/output-0",
                                              reason: "No such file or directory (listed in \(folder.path)/all_namespaces_all_kinds.export_metadata)")) {
            _ = try ManagedExport.open(root.path)
        }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("all_namespaces_all_kinds.export_metadata"))
        let overall = try #require(try FileManager.default.contentsOfDirectory(atPath: root.path).first { $0.hasSuffix(".overall_export_metadata") })
        #expect(throws: InputError.cannotOpen(path: folder.path + "/all_namespaces_all_kinds.export_metadata",
                                              reason: "No such file or directory (listed in \(root.path)/\(overall))")) {
            _ = try ManagedExport.open(root.path)
        }
    }

    /// Votes written alike, which a plain template reads, among them entities of another kind
    /// and bad ratings in the same layout, which the rules judge from the template's picks.
    static func runVote(_ n: Int) -> [UInt8] {
        TestEntity.encode(path: [(n % 97 == 50 ? "rating_eventz" : "rating_events", .name(String(format: "v%03d", n)))], [
            .init(name: "joke_id", value: .string(Array("j\(n % 10)".utf8))),
            .init(name: "rating", value: .integer(n % 89 == 40 ? 9 : Int64(n % 5 + 1))),
            .init(name: "timestamp", value: .integer(1_795_600_000_000_000 + Int64(n) * 1_000_003), meaning: 7),
        ])
    }

    @Test("votes alike: every record once, in order, numbered, with its own fields; damage among them is named where it is, after the records before it")
    func runs() throws {
        let votes = (0..<1000).map(Self.runVote)
        let log = TestLog.write(votes)
        #expect(log.count > 2 * TestLog.block)
        let (read, error, _) = try Self.readKeeping(log)
        #expect(error == nil)
        let kinds = (0..<1000).filter { $0 % 97 == 50 }, bad = (0..<1000).filter { $0 % 89 == 40 && $0 % 97 != 50 }
        let events = (0..<1000).filter { !kinds.contains($0) && !bad.contains($0) }
        #expect(read.events.map(\.id) == events.map { String(format: "v%03d", $0) })
        #expect(read.events.map(\.record) == events.map { $0 + 1 })
        #expect(read.events.map(\.jokeID) == events.map { "j\($0 % 10)" })
        #expect(read.events.map(\.rating) == events.map { Double($0 % 5 + 1) })
        #expect(read.events.map(\.timestampMicros) == events.map { 1_795_600_000_000_000 + Int64($0) * 1_000_003 })
        #expect(read.leftOut == kinds.map { $0 + 1 })
        #expect(read.bad.map(\.record) == bad.map { $0 + 1 })
        #expect(zip(read.offsets, read.offsets.dropFirst()).allSatisfy { $0 < $1 })

        // A byte of vote 700 (inside a block, past the first) changed: its checksum fails there.
        let target = votes[700]
        let at = try #require((0...(log.count - target.count)).first { log[$0..<($0 + target.count)].elementsEqual(target) })
        #expect(at / TestLog.block >= 1 && (at + target.count) / TestLog.block == at / TestLog.block)
        var damaged = log
        damaged[at + target.count - 4] ^= 0x01 // the timestamp's last byte: the layout stays
        let (before, failure, _) = try Self.readKeeping(damaged)
        guard case .corruptExport(_, let offset, let reason)? = failure else {
            Issue.record("not a corrupt export: \(String(describing: failure))")
            return
        }
        #expect(offset == Int64(at - 7))
        #expect(reason == "checksum mismatch in a \(target.count)-byte FULL fragment")
        #expect(before.events.map(\.id) == events.filter { $0 < 700 }.map { String(format: "v%03d", $0) })
    }
}
