import Foundation
import Glibc
import Testing
@testable import RankingsKit

/// What the metadata promises, held to the files (issue 26): the counts the overall metadata
/// records, each file listed once and inside the export, every listed file a regular file
/// opened without blocking. Each case has its one outcome.
@Suite("Managed export: metadata against the files")
struct ExportMetadataTests {
    static func votes(_ prefix: String, _ count: Int) -> [[UInt8]] {
        (0..<count).map { TestEntity.vote("\(prefix)\($0)", padding: $0 % 7 * 300) }
    }

    /// A fresh directory holding an export of two output files (1,200 and 300 records).
    static func export(pointer: ((inout TestExport.Pointer) -> Void)? = nil, listed: [String]? = nil,
                       _ body: (URL, [String]) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = try TestExport.write(at: root, outputs: [votes("a", 1200), votes("b", 300)], pointer: pointer, listed: listed)
        try body(root, paths)
    }

    static func overall(_ root: URL) -> String { root.appendingPathComponent(TestExport.overallName).path }
    static func kind(_ root: URL) -> String { root.appendingPathComponent(TestExport.kindMetadata).path }

    /// Opens and reads the export whole, then checks the entity counts, as a run does.
    static func readChecked(_ root: URL) throws -> Int {
        let export = try #require(try ManagedExport.open(root.path))
        let read = try CollectedExport.read(export)
        let records = read.map { $0.events.count + $0.leftOut.count + $0.bad.count }
        try ExportEntityCount.check(export.outputFiles, records: records)
        return records.reduce(0, +)
    }

    @Test("the test writer lays the overall metadata out byte for byte as the emulator did")
    func writerMatchesTheEmulator() throws {
        let root = try ExportFixtures.exportRoot(ExportFixtures.emulator)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: root.path).first { $0.hasSuffix(".overall_export_metadata") })
        let emulator = [UInt8](try Data(contentsOf: root.appendingPathComponent(name)))
        #expect(TestExport.overall([TestExport.Pointer(entities: 32, bytes: 106_331)]) == emulator)
        // And the emulator's counts are the records of its one file and that file's size.
        let export = try #require(try ManagedExport.open(root.path))
        #expect(export.outputFiles.map(\.size) == [106_331])
        #expect(export.outputFiles[0].entityCount?.entities == 32)
        #expect(try Self.readChecked(root) == 32)
    }

    @Test("counts that match: every record read, and as many as the metadata records")
    func countsMatch() throws {
        try Self.export { root, _ in
            let records = try Self.readChecked(root)
            #expect(records == 1500)
        }
    }

    @Test("an output file cut at a record boundary, which the log cannot show, is short of the recorded entities")
    func cutAtARecordBoundary() throws {
        try Self.export { root, paths in
            let kept = TestLog.write(Array(Self.votes("a", 1000)))
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: paths[0]))).starts(with: kept))
            try Data(kept).write(to: URL(fileURLWithPath: paths[0]))
            #expect(throws: InputError.incompleteExport(path: Self.overall(root), reason:
                "the 2 output files \(TestExport.kindMetadata) lists hold 1300 entities, but this metadata records 1500")) {
                _ = try Self.readChecked(root)
            }
        }
    }

    @Test("an emptied output file is short of the recorded entities")
    func emptiedFile() throws {
        try Self.export { root, paths in
            try Data().write(to: URL(fileURLWithPath: paths[1]))
            #expect(throws: InputError.incompleteExport(path: Self.overall(root), reason:
                "the 2 output files \(TestExport.kindMetadata) lists hold 1200 entities, but this metadata records 1500")) {
                _ = try Self.readChecked(root)
            }
        }
    }

    /// Real exports need not add up to the bytes their metadata records (a padded last block;
    /// Google documents neither the count nor its meaning): the export is read, the difference
    /// reported, and the entity count is what holds the files to the metadata.
    @Test("recorded bytes that are not the files' sizes: read, and reported")
    func bytesDiffer() throws {
        try Self.export(pointer: { $0.bytes! += 32_768 }) { root, paths in
            let export = try #require(try ManagedExport.open(root.path))
            let total = try paths.reduce(0) { $0 + (try Data(contentsOf: URL(fileURLWithPath: $1))).count }
            #expect(export.notes == ["\(Self.overall(root)): the 2 output files \(TestExport.kindMetadata) lists hold "
                + "\(total) bytes; this metadata records \(total + 32_768) (reported, not checked: the entity count is)"])
            #expect(try Self.readChecked(root) == 1500)
        }
    }

    /// Real exports number their outputs with gaps (output-0, output-1, output-4): the files are
    /// the ones the metadata lists, in its order, whatever their numbers.
    @Test("outputs numbered with gaps, as the metadata lists them")
    func outputsWithGaps() throws {
        try Self.export(listed: ["output-0", "output-4", "output-1"]) { root, paths in
            let folder = URL(fileURLWithPath: paths[1]).deletingLastPathComponent()
            try FileManager.default.moveItem(at: URL(fileURLWithPath: paths[1]), to: folder.appendingPathComponent("output-4"))
            try Data(TestLog.write(Array(Self.votes("c", 5)))).write(to: URL(fileURLWithPath: paths[1]))
            try Data(TestExport.overall([TestExport.Pointer(entities: 1505)])).write(to: URL(fileURLWithPath: Self.overall(root)))
            let export = try #require(try ManagedExport.open(root.path))
            #expect(export.outputFiles.map { URL(fileURLWithPath: $0.displayPath).lastPathComponent } == ["output-0", "output-4", "output-1"])
            #expect(try Self.readChecked(root) == 1505)
        }
    }

    @Test("as many bytes, another number of entities: refused once read")
    func entitiesDiffer() throws {
        try Self.export(pointer: { $0.entities = 1499 }) { root, _ in
            #expect(throws: InputError.incompleteExport(path: Self.overall(root), reason:
                "the 2 output files \(TestExport.kindMetadata) lists hold 1500 entities, but this metadata records 1499")) {
                _ = try Self.readChecked(root)
            }
        }
    }

    @Test("counts the metadata does not record are not checked; a kind folder read alone has none")
    func countsAbsent() throws {
        try Self.export(pointer: { $0.entities = nil; $0.bytes = nil }) { root, _ in
            let records = try Self.readChecked(root)
            #expect(records == 1500)
        }
        try Self.export(pointer: { $0.entities = 7 }) { root, _ in
            let folder = root.appendingPathComponent(TestExport.kindFolder)
            let export = try #require(try ManagedExport.open(folder.path))
            #expect(export.outputFiles.allSatisfy { $0.entityCount == nil })
            #expect(try Self.readChecked(folder) == 1500)
        }
    }

    @Test("a file listed twice, however spelled, and a kind metadata file listed twice")
    func listedTwice() throws {
        try Self.export(listed: ["output-0", "output-1", "output-0"]) { root, _ in
            #expect(throws: InputError.incompleteExport(path: Self.kind(root), reason: "output-0 is listed twice")) {
                _ = try ManagedExport.open(root.path)
            }
        }
        try Self.export(listed: ["output-0", "output-1", "./output-1"]) { root, paths in
            let folder = root.appendingPathComponent(TestExport.kindFolder).path
            #expect(throws: InputError.incompleteExport(path: Self.kind(root), reason:
                "./output-1 is listed twice (\(folder)/./output-1 is \(paths[1]))")) {
                _ = try ManagedExport.open(root.path)
            }
        }
        try Self.export { root, _ in
            let pointer = TestExport.Pointer(entities: 1500)
            try Data(TestExport.overall([pointer, pointer])).write(to: URL(fileURLWithPath: Self.overall(root)))
            #expect(throws: InputError.incompleteExport(path: Self.overall(root), reason: "\(TestExport.kindMetadata) is listed twice")) {
                _ = try ManagedExport.open(root.path)
            }
        }
    }

    @Test("a path that leaves the export: .., absolute, or with a NUL")
    func outsideTheExport() throws {
        try Self.export(listed: ["output-0", "../../output-1"]) { root, _ in
            #expect(throws: InputError.incompleteExport(path: Self.kind(root), reason: "\"../../output-1\" is outside the export")) {
                _ = try ManagedExport.open(root.path)
            }
        }
        for file in ["/etc/passwd", "all_namespaces/../../elsewhere/x.export_metadata", "..", "a\u{0}b", ""] {
            try Self.export { root, _ in
                try Data(TestExport.overall([TestExport.Pointer(file: file)])).write(to: URL(fileURLWithPath: Self.overall(root)))
                #expect(throws: InputError.incompleteExport(path: Self.overall(root), reason: "\"\(file)\" is outside the export")) {
                    _ = try ManagedExport.open(root.path)
                }
            }
        }
    }

    @Test("an empty overall metadata or kind metadata is damage, not an export of nothing")
    func emptyMetadata() throws {
        try Self.export { root, _ in
            try Data().write(to: URL(fileURLWithPath: Self.kind(root)))
            #expect(throws: InputError.corruptExport(path: Self.kind(root), offset: 0,
                                                     reason: "undecodable metadata: no kind described (0 bytes)")) {
                _ = try ManagedExport.open(root.path)
            }
            // Read as a kind folder on its own, with no overall metadata to count it.
            #expect(throws: InputError.corruptExport(path: Self.kind(root), offset: 0,
                                                     reason: "undecodable metadata: no kind described (0 bytes)")) {
                _ = try ManagedExport.open(root.appendingPathComponent(TestExport.kindFolder).path)
            }
            try Data().write(to: URL(fileURLWithPath: Self.overall(root)))
            #expect(throws: InputError.corruptExport(path: Self.overall(root), offset: 0,
                                                     reason: "0 records where the version and the metadata should be")) {
                _ = try ManagedExport.open(root.path)
            }
        }
    }

    @Test("the emulator's export of an empty database lists no kind folder: an export of nothing")
    func emptyDatabase() throws {
        // The emulator's 15 bytes: the version record, then an empty OverallExportMetadata.
        let emulator: [UInt8] = [0xB8, 0x6D, 0x44, 0x4E, 0x01, 0x00, 0x01, 0x33, 0x05, 0x2B, 0x28, 0x43, 0x00, 0x00, 0x01]
        #expect(TestExport.overall([]) == emulator)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data(emulator).write(to: URL(fileURLWithPath: Self.overall(root)))
        let export = try #require(try ManagedExport.open(root.path))
        #expect(export.outputFiles.isEmpty)
    }

    /// A FIFO in each of the three places, through the command (under `timeout`, so a reader
    /// that blocks fails the test instead of hanging it): 66, the path, no output.
    @Test(arguments: ["output", "kind", "overall"])
    func fifoIsRefusedWithoutBlocking(_ place: String) throws {
        try Self.export { root, paths in
            let path = switch place {
            case "output": paths[1]
            case "kind": Self.kind(root)
            default: Self.overall(root)
            }
            try FileManager.default.removeItem(atPath: path)
            #expect(mkfifo(path, 0o600) == 0)
            let listed = switch place {
            case "output": " (listed in \(Self.kind(root)))"
            case "kind": " (listed in \(Self.overall(root)))"
            default: ""
            }
            let output = root.deletingLastPathComponent().appendingPathComponent("out-\(UUID().uuidString).json").path
            let result = try RankingsBinary.run(["10", RankingsBinary.url.path, "aggregate", "-q", "-o", output, root.path],
                                                executable: "/usr/bin/timeout")
            #expect(result.status == 66, "\(result.stderrText)")
            #expect(result.stderrText == "rankings: error: cannot read \(path): not a regular file\(listed)\n")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
