import Foundation

/// Writes a managed export's metadata as the emulator lays it out, sharing no code with the
/// reader (checked against the emulator's own file in `ExportMetadataTests`): the overall
/// metadata, a log of the version and an `OverallExportMetadata`, and a kind folder's bare
/// `Backup`.
enum TestExport {
    static let kindFolder = "all_namespaces/all_kinds"
    static let kindMetadata = kindFolder + "/all_namespaces_all_kinds.export_metadata"
    static let overallName = "test.overall_export_metadata"

    /// One `SingleExportMetadataPointer`: the kind metadata file and the counts, each written
    /// only when given.
    struct Pointer {
        var file = TestExport.kindMetadata
        var entities: Int64?
        var bytes: Int64?
    }

    static func overall(_ pointers: [Pointer]) -> [UInt8] {
        var message: [UInt8] = []
        for p in pointers {
            // entity_set_spec (1) as the emulator writes it for all namespaces and kinds.
            var body = TestEntity.field(1, bytes: TestEntity.field(1, varint: 2) + TestEntity.field(3, varint: 3))
            body += TestEntity.field(2, bytes: Array(p.file.utf8))
            if let e = p.entities { body += TestEntity.field(3, varint: UInt64(e)) }
            if let b = p.bytes { body += TestEntity.field(4, varint: UInt64(b)) }
            message += TestEntity.field(1, bytes: body)
        }
        return TestLog.write([Array("3".utf8), message])
    }

    /// Backup { backup_info (1) { backup_name }, kind_info (2) { kind (1) "", file (2)… } }
    static func kind(_ files: [String]) -> [UInt8] {
        let info = TestEntity.field(1, bytes: []) + files.flatMap { TestEntity.field(2, bytes: Array($0.utf8)) }
        return TestEntity.field(1, bytes: TestEntity.field(1, bytes: Array("test".utf8))) + TestEntity.field(2, bytes: info)
    }

    /// A whole export at `root`: each element of `outputs` is one output file's records, and
    /// the overall metadata records their true counts unless `pointer` says otherwise.
    /// Returns the output files' paths.
    @discardableResult
    static func write(at root: URL, outputs: [[[UInt8]]], pointer: ((inout Pointer) -> Void)? = nil,
                      listed: [String]? = nil) throws -> [String] {
        let folder = root.appendingPathComponent(kindFolder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var paths: [String] = [], bytes = 0
        for (n, records) in outputs.enumerated() {
            let log = TestLog.write(records)
            let url = folder.appendingPathComponent("output-\(n)")
            try Data(log).write(to: url)
            paths.append(url.path)
            bytes += log.count
        }
        let names = listed ?? outputs.indices.map { "output-\($0)" }
        try Data(kind(names)).write(to: root.appendingPathComponent(kindMetadata))
        var p = Pointer(entities: Int64(outputs.reduce(0) { $0 + $1.count }), bytes: Int64(bytes))
        pointer?(&p)
        try Data(overall([p])).write(to: root.appendingPathComponent(overallName))
        return paths
    }
}
