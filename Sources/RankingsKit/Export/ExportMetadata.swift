import Glibc

/// The two metadata files of a managed export, which say which output files it has: the
/// export's completeness rests on them, not on what a directory listing happens to show.
///
/// - `NAME.overall_export_metadata` (the export's root) is a LevelDB log of two records: the
///   version, `"3"`, then an `OverallExportMetadata` message whose repeated field 1 points to
///   one `*.export_metadata` file per kind folder (field 2, relative to the root), with the
///   entity count (3) and bytes (4) written.
/// - `*.export_metadata` (in `all_namespaces/all_kinds/` or `all_namespaces/kind_K/`) is a bare
///   `Backup` message (no log framing): repeated field 2 is a `KindBackupInfo` whose repeated
///   field 2 names output files relative to the folder.
enum ExportMetadata {
    static let overallSuffix = ".overall_export_metadata"
    static let kindSuffix = ".export_metadata"
    static let supportedVersion = "3"
    /// Metadata files are a few hundred bytes; anything near this is not one.
    static let sizeLimit = 16 << 20

    /// The kind metadata files an overall metadata file lists, relative to its folder.
    static func kindFiles(overall path: String) throws(InputError) -> [String] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        guard st.st_size <= sizeLimit else {
            throw .corruptExport(path: path, offset: 0, reason: "\(st.st_size) bytes is too large for export metadata")
        }
        var collected = CollectedRecords()
        var reader = LogRecordReader(fd: fd, path: path, fileSize: Int64(st.st_size))
        _ = try reader.read(blocks: 0..<LogRecordReader.blockCount(fileSize: Int64(st.st_size)), into: &collected)
        let records = collected.records
        guard records.count == 2 else {
            throw .corruptExport(path: path, offset: 0, reason: "\(records.count) records where the version and the metadata should be")
        }
        let version = String(decoding: records[0].bytes, as: UTF8.self)
        guard version == supportedVersion else {
            throw .corruptExport(path: path, offset: records[0].offset, reason: "version \"\(version)\" (this reader knows version \(supportedVersion))")
        }
        do throws(ProtoWire.Malformed) {
            return try ProtoWire.over(records[1].bytes) { (raw) throws(ProtoWire.Malformed) in
                var files: [String] = []
                var wire = ProtoWire(raw)
                while !wire.atEnd {
                    let (field, type) = try wire.tag()
                    guard field == 1 && type == .lengthDelimited else {
                        try wire.skip(type, field: field)
                        continue
                    }
                    var pointer = ProtoWire(UnsafeRawBufferPointer(try wire.bytes()))
                    var file: String?
                    while !pointer.atEnd {
                        let (inner, innerType) = try pointer.tag()
                        if inner == 2 && innerType == .lengthDelimited {
                            file = String(decoding: try pointer.bytes(), as: UTF8.self)
                        } else {
                            try pointer.skip(innerType, field: inner)
                        }
                    }
                    guard let file else { throw ProtoWire.Malformed(reason: "an export pointer with no metadata file") }
                    files.append(file)
                }
                return files
            }
        } catch {
            throw .corruptExport(path: path, offset: records[1].offset, reason: "undecodable metadata: \(error.reason)")
        }
    }

    /// The output files a kind metadata file lists, relative to its folder, in its order.
    static func outputFiles(kind path: String) throws(InputError) -> [String] {
        guard let bytes = SmallFile.read(path, limit: sizeLimit) else {
            throw .cannotOpen(path: path, reason: access(path, R_OK) == 0 ? "not a readable metadata file" : String(cString: strerror(errno)))
        }
        do throws(ProtoWire.Malformed) {
            return try ProtoWire.over(bytes) { (raw) throws(ProtoWire.Malformed) in
                var files: [String] = []
                var wire = ProtoWire(raw)
                while !wire.atEnd {
                    let (field, type) = try wire.tag()
                    guard field == 2 && type == .lengthDelimited else {
                        try wire.skip(type, field: field)
                        continue
                    }
                    var info = ProtoWire(UnsafeRawBufferPointer(try wire.bytes()))
                    while !info.atEnd {
                        let (inner, innerType) = try info.tag()
                        if inner == 2 && innerType == .lengthDelimited {
                            files.append(String(decoding: try info.bytes(), as: UTF8.self))
                        } else {
                            try info.skip(innerType, field: inner)
                        }
                    }
                }
                return files
            }
        } catch {
            throw .corruptExport(path: path, offset: 0, reason: "undecodable metadata: \(error.reason)")
        }
    }
}

/// Every record of a small log file, copied out.
private struct CollectedRecords: LogRecordVisitor {
    var records: [(bytes: [UInt8], offset: Int64)] = []

    mutating func record(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(InputError) {
        records.append((Array(bytes), offset))
    }
}
