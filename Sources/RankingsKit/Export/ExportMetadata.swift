import Glibc

/// The two metadata files of a managed export, which say which output files it has: the
/// export's completeness rests on them, not on what a directory listing happens to show.
///
/// - `NAME.overall_export_metadata` (the export's root) is a LevelDB log of two records: the
///   version, `"3"`, then an `OverallExportMetadata` message whose repeated field 1 is a
///   `SingleExportMetadataPointer`: the kind folder's `*.export_metadata` file (2, relative to
///   the root), its entity count (3: every record of that folder's output files) and its byte
///   count (4: the sum of their sizes). 3 and 4 are optional fields (Google's descriptor in the
///   emulator gives them presence, and no documentation promises them): checked when written.
/// - `*.export_metadata` (in `all_namespaces/all_kinds/` or `all_namespaces/kind_K/`) is a bare
///   `Backup` message (no log framing): repeated field 2 is a `KindBackupInfo` whose repeated
///   field 2 names output files relative to the folder.
enum ExportMetadata {
    static let overallSuffix = ".overall_export_metadata"
    static let kindSuffix = ".export_metadata"
    static let supportedVersion = "3"
    /// Metadata files are a few hundred bytes; anything near this is not one.
    static let sizeLimit = 16 << 20

    /// What the overall metadata says of one kind folder.
    struct Pointer {
        /// The kind metadata file, relative to the export's root.
        var file: String
        var entities: Int64?
        var bytes: Int64?
    }

    /// The kind folders an overall metadata file lists, in its order.
    static func pointers(overall path: String) throws(InputError) -> [Pointer] {
        let (fd, size) = try openRegular(path, listedIn: nil)
        defer { close(fd) }
        guard size <= sizeLimit else {
            throw .corruptExport(path: path, offset: 0, reason: "\(size) bytes is too large for export metadata")
        }
        var collected = CollectedRecords()
        var reader = LogRecordReader(fd: fd, path: path, fileSize: size)
        _ = try reader.read(blocks: 0..<LogRecordReader.blockCount(fileSize: size), into: &collected)
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
                var pointers: [Pointer] = []
                var wire = ProtoWire(raw)
                while !wire.atEnd {
                    let (field, type) = try wire.tag()
                    guard field == 1 && type == .lengthDelimited else {
                        try wire.skip(type, field: field)
                        continue
                    }
                    var inner = ProtoWire(UnsafeRawBufferPointer(try wire.bytes()))
                    var file: String?
                    var entities: Int64?, bytes: Int64?
                    while !inner.atEnd {
                        switch try inner.tag() {
                        case (2, .lengthDelimited): file = String(decoding: try inner.bytes(), as: UTF8.self)
                        case (3, .varint): entities = Int64(bitPattern: try inner.varint())
                        case (4, .varint): bytes = Int64(bitPattern: try inner.varint())
                        case let (other, type): try inner.skip(type, field: other)
                        }
                    }
                    guard let file else { throw ProtoWire.Malformed(reason: "an export pointer with no metadata file") }
                    pointers.append(Pointer(file: file, entities: entities, bytes: bytes))
                }
                // None at all is what the emulator writes for an empty database: no kind folder.
                return pointers
            }
        } catch {
            throw .corruptExport(path: path, offset: records[1].offset, reason: "undecodable metadata: \(error.reason)")
        }
    }

    /// The output files a kind metadata file lists, relative to its folder, in its order, and
    /// which file the metadata is.
    static func outputFiles(kind path: String, listedIn overall: String?) throws(InputError) -> (files: [String], identity: FileIdentity) {
        let (fd, size) = try openRegular(path, listedIn: overall)
        defer { close(fd) }
        var st = stat()
        _ = fstat(fd, &st)
        let identity = FileIdentity(st)
        guard size <= sizeLimit else {
            throw .corruptExport(path: path, offset: 0, reason: "\(size) bytes is too large for export metadata")
        }
        let bytes: [UInt8]
        do { bytes = try FileDescriptor.readAll(fd, limit: sizeLimit) } catch {
            throw .readFailed(path: path, reason: error.reason)
        }
        do throws(ProtoWire.Malformed) {
            let files = try ProtoWire.over(bytes) { (raw) throws(ProtoWire.Malformed) in
                var files: [String] = []
                var kinds = 0
                var wire = ProtoWire(raw)
                while !wire.atEnd {
                    let (field, type) = try wire.tag()
                    guard field == 2 && type == .lengthDelimited else {
                        try wire.skip(type, field: field)
                        continue
                    }
                    kinds += 1
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
                // A `Backup` that describes no kind (an empty file decodes as one) is not a
                // kind folder's metadata: its folder's files would silently count as none.
                guard kinds > 0 else { throw ProtoWire.Malformed(reason: "no kind described (\(bytes.count) bytes)") }
                return files
            }
            return (files, identity)
        } catch {
            throw .corruptExport(path: path, offset: 0, reason: "undecodable metadata: \(error.reason)")
        }
    }

    /// Opens a file of the export that must be a regular file, without blocking: a FIFO put
    /// in an export's place is refused, never waited on. Returns the descriptor and the size.
    static func openRegular(_ path: String, listedIn metadata: String?) throws(InputError) -> (fd: Int32, size: Int64) {
        let listed = metadata.map { " (listed in \($0))" } ?? ""
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno)) + listed) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .cannotOpen(path: path, reason: reason + listed)
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .cannotOpen(path: path, reason: "not a regular file" + listed)
        }
        // Regular files ignore O_NONBLOCK; cleared all the same, so reads mean what they say.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (fd, Int64(st.st_size))
    }

    /// Whether a path the metadata gives stays inside the folder it is relative to: not empty,
    /// not absolute, no `..` component, no NUL (which would end the path early).
    static func staysInside(_ path: String) -> Bool {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.utf8.contains(0) else { return false }
        return !path.split(separator: "/", omittingEmptySubsequences: false).contains("..")
    }
}

/// Every record of a small log file, copied out.
private struct CollectedRecords: LogRecordVisitor {
    var records: [(bytes: [UInt8], offset: Int64)] = []

    mutating func record(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(InputError) {
        records.append((Array(bytes), offset))
    }
}
