import Glibc

/// One output file of a managed export, checked when the export was opened (a file listed in
/// the metadata that is missing or unreadable fails the run before anything is read) and
/// opened again by each read, so an export of thousands of files needs no more descriptors
/// than there are threads.
public struct ExportOutputFile: Sendable {
    /// `DIRECTORY/…/output-N` from the directory the user gave: what messages print.
    public let displayPath: String
    /// Bytes when the export was opened: ranges are cut, and read, within these.
    public let size: Int64

    /// The file's 32 KiB blocks: ranges of these can be read independently.
    public var blockCount: Int64 { LogRecordReader.blockCount(fileSize: size) }
}

/// A Firestore (or Datastore) managed export: the folder `gcloud firestore export` writes (its
/// root, holding `NAME.overall_export_metadata`), or one kind folder of it (holding
/// `*.export_metadata`), and the output files its metadata lists, in the metadata's order.
public struct ManagedExport: Sendable {
    public let directory: String
    public let outputFiles: [ExportOutputFile]

    /// Reads `directory`'s metadata and opens every output file it lists. Nil when the directory
    /// holds no export metadata (a plain directory of NDJSON files).
    public static func open(_ directory: String) throws(InputError) -> ManagedExport? {
        let names = try DirectoryNames.visible(in: directory)
        let overall = names.filter { $0.hasSuffix(ExportMetadata.overallSuffix) }
        let kinds = names.filter { $0.hasSuffix(ExportMetadata.kindSuffix) && !$0.hasSuffix(ExportMetadata.overallSuffix) }
        var metadataFiles: [String]
        if !overall.isEmpty {
            guard overall.count == 1 else {
                throw .cannotOpen(path: directory, reason: "more than one export's metadata: \(overall.joined(separator: ", "))")
            }
            let overallPath = join(directory, overall[0])
            metadataFiles = try ExportMetadata.kindFiles(overall: overallPath).map { join(directory, $0) }
        } else if !kinds.isEmpty {
            metadataFiles = kinds.map { join(directory, $0) }
        } else {
            return nil
        }
        var files: [ExportOutputFile] = []
        for metadata in metadataFiles {
            let folder = parent(of: metadata)
            for name in try ExportMetadata.outputFiles(kind: metadata) {
                files.append(try openOutput(join(folder, name), listedIn: metadata))
            }
        }
        return ManagedExport(directory: directory, outputFiles: files)
    }

    private static func openOutput(_ path: String, listedIn metadata: String) throws(InputError) -> ExportOutputFile {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .cannotOpen(path: path, reason: "\(String(cString: strerror(errno))) (listed in \(metadata))")
        }
        defer { _ = Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw .cannotOpen(path: path, reason: "not a regular file (listed in \(metadata))")
        }
        return ExportOutputFile(displayPath: path, size: Int64(st.st_size))
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return String(path[..<slash])
    }
}
