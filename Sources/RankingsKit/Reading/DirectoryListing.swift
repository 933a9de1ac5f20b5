import Glibc

/// What a directory given as an input contributes: its regular files (links followed) whose
/// names end in one of `InputFile.exportSuffixes`, not dot-files, not recursively, in byte
/// order of name. Anything else that carries such a name (a FIFO, a device, a socket, a link
/// to one of them) is skipped, since reading it could block forever or never end.
struct DirectoryListing {
    struct Skipped {
        var name: String
        var why: String
    }

    private(set) var exportNames: [String] = []
    private(set) var skipped: [Skipped] = []
    /// The directory holds a Firestore managed export's metadata (`*.overall_export_metadata`
    /// at its root, `*.export_metadata` in one kind's folder).
    private(set) var isManagedExport = false

    static let managedExportSuffixes = [".overall_export_metadata", ".export_metadata"]

    init(_ directory: String) throws(InputError) {
        for name in try DirectoryNames.visible(in: directory) {
            if Self.managedExportSuffixes.contains(where: { name.hasSuffix($0) }) { isManagedExport = true }
            guard InputFile.exportSuffixes.contains(where: { name.hasSuffix($0) }) else { continue }
            var st = stat()
            // Follows links: what counts is what reading the name would open.
            guard stat(DirectoryNames.join(directory, name), &st) == 0 else {
                // A dangling link, or one that vanished: reading it fails clearly later.
                exportNames.append(name)
                continue
            }
            switch st.st_mode & S_IFMT {
            case S_IFREG: exportNames.append(name)
            case S_IFDIR: continue
            case S_IFIFO: skipped.append(Skipped(name: name, why: "a FIFO, not a regular file"))
            case S_IFCHR, S_IFBLK: skipped.append(Skipped(name: name, why: "a device, not a regular file"))
            case S_IFSOCK: skipped.append(Skipped(name: name, why: "a socket, not a regular file"))
            default: skipped.append(Skipped(name: name, why: "not a regular file"))
            }
        }
    }
}
