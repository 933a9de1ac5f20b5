import Glibc

/// One output file of a managed export, checked when the export was opened (a file listed in
/// the metadata that is missing, unreadable or not a regular file fails the run before
/// anything is read) and opened again by each read, so an export of thousands of files needs
/// no more descriptors than there are threads.
struct ExportOutputFile: Sendable {
    /// `DIRECTORY/…/output-N` from the directory the user gave: what messages print.
    let displayPath: String
    /// Bytes when the export was opened: ranges are cut, and read, within these.
    let size: Int64
    /// The entity count the overall metadata records for this file's kind folder, shared by
    /// the folder's files; nil when none is recorded (a kind folder read on its own).
    let entityCount: ExportEntityCount?

    init(displayPath: String, size: Int64, entityCount: ExportEntityCount? = nil) {
        self.displayPath = displayPath
        self.size = size
        self.entityCount = entityCount
    }

    /// The file's 32 KiB blocks: ranges of these can be read independently.
    var blockCount: Int64 { LogRecordReader.blockCount(fileSize: size) }
}

/// What the overall metadata records of one kind folder's entities: every record of the
/// folder's output files is one entity, so the records read from them must add up to it. One
/// instance per kind folder, shared by its files: identity tells the folders apart.
public final class ExportEntityCount: Sendable {
    /// The overall metadata file, which records the count.
    let metadata: String
    /// The kind folder's metadata file as the overall metadata names it.
    let kind: String
    let entities: Int64

    init(metadata: String, kind: String, entities: Int64) {
        self.metadata = metadata
        self.kind = kind
        self.entities = entities
    }

    /// Refuses the export unless each kind folder's files held as many records as its
    /// metadata records. `records[i]` is how many records were read from `files[i]`, which
    /// must have been read whole.
    static func check(_ files: [ExportOutputFile], records: [Int]) throws(InputError) {
        try check(zip(files, records).map { ($0.entityCount, $1) })
    }

    /// `check` over each file's count (nil for a file without one) and records read; folders
    /// in order of their first file, so the first short folder in input order is named.
    static func check(_ files: [(count: ExportEntityCount?, records: Int)]) throws(InputError) {
        var totals: [ObjectIdentifier: (count: ExportEntityCount, files: Int, records: Int)] = [:]
        var order: [ObjectIdentifier] = []
        for (count, read) in files {
            guard let count else { continue }
            let key = ObjectIdentifier(count)
            if totals[key] == nil { order.append(key) }
            let sum = totals[key] ?? (count, 0, 0)
            totals[key] = (count, sum.files + 1, sum.records + read)
        }
        for key in order {
            let (count, files, read) = totals[key]!
            guard Int64(read) == count.entities else {
                throw .incompleteExport(path: count.metadata, reason: "\(theFiles(files)) \(count.kind) lists hold "
                    + counted(read, "entity", "entities") + ", but this metadata records \(count.entities)")
            }
        }
    }
}

/// "the output file", "the 3 output files": what a kind folder's metadata lists.
private func theFiles(_ count: Int) -> String { count == 1 ? "the output file" : "the \(count) output files" }

/// A Firestore (or Datastore) managed export: the folder `gcloud firestore export` writes (its
/// root, holding `NAME.overall_export_metadata`), or one kind folder of it (holding
/// `*.export_metadata`), and the output files its metadata lists, in the metadata's order.
///
/// Opening it proves what can be proved before reading: every listed file is a regular file
/// inside the export, listed once. What needs reading (the entity counts) is checked by whoever
/// reads the files whole (`ExportEntityCount.check`). The byte count the overall metadata
/// records beside each kind is only reported (`notes`): Google documents neither its meaning
/// nor its presence, and real exports (a padded final block) need not add up to the files'
/// sizes as the emulator's do, so holding the files to it would refuse good exports.
struct ManagedExport: Sendable {
    let directory: String
    let outputFiles: [ExportOutputFile]
    /// What the metadata records that the files do not bear out and nothing checks, in words.
    let notes: [String]

    /// Reads `directory`'s metadata and opens every output file it lists. Nil when the directory
    /// holds no export metadata (a plain directory of NDJSON files).
    static func open(_ directory: String) throws(InputError) -> ManagedExport? {
        let names = try DirectoryNames.visible(in: directory)
        let overall = names.filter { $0.hasSuffix(ExportMetadata.overallSuffix) }
        let kinds = names.filter { $0.hasSuffix(ExportMetadata.kindSuffix) && !$0.hasSuffix(ExportMetadata.overallSuffix) }
        var overallPath: String?
        var pointers: [ExportMetadata.Pointer]
        if !overall.isEmpty {
            guard overall.count == 1 else {
                throw .cannotOpen(path: directory, reason: "more than one export's metadata: \(overall.joined(separator: ", "))")
            }
            let path = DirectoryNames.join(directory, overall[0])
            overallPath = path
            pointers = try ExportMetadata.pointers(overall: path)
            for pointer in pointers where !ExportMetadata.staysInside(pointer.file) {
                throw .incompleteExport(path: path, reason: "\"\(pointer.file)\" is outside the export")
            }
        } else if !kinds.isEmpty {
            pointers = kinds.map { ExportMetadata.Pointer(file: $0) }
        } else {
            return nil
        }
        var files: [ExportOutputFile] = []
        var notes: [String] = []
        // Which file each listing names, whatever the spelling (`output-0`, `./output-0`).
        var seen: [FileIdentity: String] = [:]
        for pointer in pointers {
            let metadata = DirectoryNames.join(directory, pointer.file)
            let folder = parent(of: metadata)
            let (names, identity) = try ExportMetadata.outputFiles(kind: metadata, listedIn: overallPath)
            if let earlier = seen.updateValue(metadata, forKey: identity), let overallPath {
                throw .incompleteExport(path: overallPath, reason: twice(pointer.file, metadata, earlier))
            }
            let count = overallPath.flatMap { path in
                pointer.entities.map { ExportEntityCount(metadata: path, kind: pointer.file, entities: $0) }
            }
            var bytes: Int64 = 0
            for name in names {
                guard ExportMetadata.staysInside(name) else {
                    throw .incompleteExport(path: metadata, reason: "\"\(name)\" is outside the export")
                }
                let path = DirectoryNames.join(folder, name)
                let (file, identity) = try openOutput(path, listedIn: metadata, count: count)
                if let earlier = seen.updateValue(path, forKey: identity) {
                    throw .incompleteExport(path: metadata, reason: twice(name, path, earlier))
                }
                files.append(file)
                bytes += file.size
            }
            if let overallPath, let recorded = pointer.bytes, recorded != bytes {
                notes.append("\(overallPath): \(theFiles(names.count)) \(pointer.file) lists hold "
                    + counted(bytes, "byte", "bytes") + "; this metadata records \(recorded) (reported, not checked: the "
                    + "entity count is)")
            }
        }
        return ManagedExport(directory: directory, outputFiles: files, notes: notes)
    }

    /// Words a file listed twice: by its name, and by its other spelling if it has one.
    private static func twice(_ name: String, _ path: String, _ earlier: String) -> String {
        path == earlier ? "\(name) is listed twice" : "\(name) is listed twice (\(path) is \(earlier))"
    }

    private static func openOutput(_ path: String, listedIn metadata: String,
                                   count: ExportEntityCount?) throws(InputError) -> (ExportOutputFile, FileIdentity) {
        let (fd, size) = try ExportMetadata.openRegular(path, listedIn: metadata)
        defer { _ = Glibc.close(fd) }
        var st = stat()
        _ = fstat(fd, &st)
        return (ExportOutputFile(displayPath: path, size: size, entityCount: count), FileIdentity(st))
    }

    static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return String(path[..<slash])
    }
}
