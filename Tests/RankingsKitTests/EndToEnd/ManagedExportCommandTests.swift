import Foundation
import Testing

/// A damaged or half-copied managed export through `rankings aggregate` itself (issue 15): the
/// documented status, a message naming the file (and, for damage, the byte offset), and every
/// output of the run before it left byte for byte as it was. The library-level catalogue of
/// damage is `LogDamageTests`; this is what an operator sees.
@Suite("Managed export: damage through the command line")
struct ManagedExportCommandTests {
    static let folder = "export/all_namespaces/all_kinds"

    /// A copy of the emulator's export at `export/` (its 18 typed values that are not votes are
    /// bad records, hence `--max-invalid`), a first good run's document and stats beside
    /// it, then `damage`, then a second run over the same paths.
    static func rerun(after damage: (ScratchDirectory) throws -> Void) throws
        -> (result: RankingsBinary.Result, unchanged: Bool) {
        try ScratchDirectory.with { dir in
            try FileManager.default.copyItem(at: try ExportFixtures.exportRoot(ExportFixtures.emulator),
                                             to: dir.url.appendingPathComponent("export"))
            let arguments = ["aggregate", "-q", "--max-invalid", "100", "--computed-at", fixedComputedAt,
                             "-o", dir.path("all_time.json"),
                             "--stats", dir.path("stats.ndjson"), dir.path("export")]
            let first = try RankingsBinary.run(arguments)
            #expect(first.status == 0, "\(first.stderrText)")
            let before = try [dir.read("all_time.json"), dir.read("stats.ndjson")]
            try damage(dir)
            let second = try RankingsBinary.run(arguments)
            let after = try [dir.read("all_time.json"), dir.read("stats.ndjson")]
            #expect(try dir.listing() == ["all_time.json", "export", "stats.ndjson"])
            return (second, before == after)
        }
    }

    /// Rewrites one output file of the export's copy.
    static func edit(_ dir: ScratchDirectory, _ name: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = try dir.read(folder + "/" + name)
        change(&bytes)
        try dir.write(folder + "/" + name, bytes)
    }

    @Test func aFlippedByteIs65AtItsBlock() throws {
        let (result, unchanged) = try Self.rerun { dir in
            try Self.edit(dir, "output-0") { $0[40_000] ^= 0x20 }
        }
        #expect(result.status == 65, "\(result.stderrText)")
        #expect(result.stderrText.contains("output-0: corrupt export at byte 32768: "), "\(result.stderrText)")
        #expect(unchanged)
    }

    /// Rewrites the overall metadata of the export's copy to record these counts (after its
    /// output file was replaced).
    static func recount(_ dir: ScratchDirectory, entities: Int, bytes: Int) throws {
        let name = try #require(try dir.listing("export").first { $0.hasSuffix(".overall_export_metadata") })
        try dir.write("export/" + name, TestExport.overall([TestExport.Pointer(entities: Int64(entities), bytes: Int64(bytes))]))
    }

    /// Cut inside a record: the log says so; cut after one: the entity count once it is read.
    /// Either way 65 and nothing written.
    @Test(arguments: [0, 1])
    func aTruncatedOutputFileIs65(atRecordEnd: Int) throws {
        var cut = 0
        let (result, unchanged) = try Self.rerun { dir in
            try Self.edit(dir, "output-0") { bytes in
                // The first record's end (a FULL fragment at byte 0), or a third of the file.
                cut = atRecordEnd == 1 ? 7 + (Int(bytes[4]) | Int(bytes[5]) << 8) : bytes.count * 2 / 3
                bytes.removeLast(bytes.count - cut)
            }
        }
        #expect(result.status == 65, "\(result.stderrText)")
        if atRecordEnd == 1 {
            #expect(result.stderrText.hasSuffix(".overall_export_metadata: incomplete export: the output file "
                + "all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata lists hold 1 entity, "
                + "but this metadata records 32\n"), "\(result.stderrText)")
        } else {
            #expect(result.stderrText.contains("corrupt export at byte "), "\(result.stderrText)")
        }
        #expect(unchanged)
    }

    /// Other bytes than the metadata records, as many entities: read, with a note.
    @Test func aByteCountTheFilesContradictIsANoteNotAFailure() throws {
        let (result, _) = try Self.rerun { dir in try Self.recount(dir, entities: 32, bytes: 106_331 + 32_768) }
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("rankings: note: "), "\(result.stderrText)")
        #expect(result.stderrText.contains("hold 106331 bytes; this metadata records 139099 (reported, not checked"),
                "\(result.stderrText)")
    }

    /// The same bytes, another count of entities: found once the files are read.
    @Test func anEntityCountTheFilesContradictIs65() throws {
        let (result, unchanged) = try Self.rerun { dir in try Self.recount(dir, entities: 33, bytes: 106_331) }
        #expect(result.status == 65, "\(result.stderrText)")
        #expect(result.stderrText.hasSuffix(".overall_export_metadata: incomplete export: the output file "
            + "all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata lists hold 32 entities, "
            + "but this metadata records 33\n"), "\(result.stderrText)")
        #expect(unchanged)
    }

    @Test func aMissingListedFileIs66() throws {
        let (result, unchanged) = try Self.rerun { dir in
            try FileManager.default.removeItem(atPath: dir.path(Self.folder + "/output-0"))
        }
        #expect(result.status == 66, "\(result.stderrText)")
        #expect(result.stderrText.contains("all_kinds/output-0: No such file or directory (listed in "),
                "\(result.stderrText)")
        #expect(unchanged)
    }

    @Test func aMissingKindMetadataIs66() throws {
        let (result, unchanged) = try Self.rerun { dir in
            try FileManager.default.removeItem(atPath: dir.path(Self.folder + "/all_namespaces_all_kinds.export_metadata"))
        }
        #expect(result.status == 66, "\(result.stderrText)")
        #expect(result.stderrText.contains("all_namespaces_all_kinds.export_metadata: No such file or directory"),
                "\(result.stderrText)")
        #expect(unchanged)
    }
}
