import Glibc

/// The names one directory holds, read once, for the two places that list a directory of
/// inputs (`DirectoryListing`, `ManagedExport`), and the paths those names make.
enum DirectoryNames {
    /// `name` within `directory`: one `/` between them, whether or not `directory` ends with
    /// one, and `directory` otherwise as given, so messages name the path the user typed.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Every name that does not start with `.`, sorted by bytes.
    static func visible(in directory: String) throws(InputError) -> [String] {
        guard let dir = opendir(directory) else {
            throw .cannotOpen(path: directory, reason: String(cString: strerror(errno)))
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = Self.name(of: entry)
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// The entry's name, read in place up to its NUL. glibc sizes each entry to its name
    /// (`d_reclen`), so the last one in its buffer may end before `d_name`'s declared 256 bytes:
    /// copying the whole field could read past the allocation.
    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let start = (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self)
        return String(cString: start)
    }
}
