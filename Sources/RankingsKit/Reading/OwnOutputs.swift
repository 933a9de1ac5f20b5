import Glibc

/// A run never reads its own outputs: `-o exports/all_time.json exports/` would work once and
/// then count its own document as an export every night after. Such a combination is refused
/// up front (64), on the first run already, whether or not the output exists yet.
enum OwnOutputs {
    /// Why the run is refused, or nil. `inputs` are the arguments as given, `files` what they
    /// resolved to.
    static func refusal(outputs: [String], inputs: [String], files: [InputFile]) -> String? {
        for output in outputs {
            var st = stat()
            // The output exists and is one of the inputs, by name or through a link.
            if stat(output, &st) == 0, st.st_mode & S_IFMT == S_IFREG {
                let identity = FileIdentity(st)
                if let file = files.first(where: { $0.identity == identity }) {
                    return "\(output) is also an input (\(file.displayPath)); a run never reads its own output"
                }
            }
            // The output would be listed by an input directory, now or once it exists.
            let name = baseName(output)
            guard !name.hasPrefix("."), InputFile.exportSuffixes.contains(where: { name.hasSuffix($0) }),
                  let parent = identity(of: directoryName(output)) else { continue }
            for input in inputs where input != "-" {
                var dir = stat()
                guard stat(input, &dir) == 0, dir.st_mode & S_IFMT == S_IFDIR, FileIdentity(dir) == parent else { continue }
                return "\(output) is inside the input directory \(input) and would be read as an export by the next run; "
                    + "write it elsewhere"
            }
        }
        return nil
    }

    private static func identity(of directory: String) -> FileIdentity? {
        var st = stat()
        guard stat(directory, &st) == 0 else { return nil }
        return FileIdentity(st)
    }

    private static func baseName(_ path: String) -> String {
        let bytes = Array(path.utf8)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(decoding: bytes[(slash + 1)...], as: UTF8.self)
    }

    private static func directoryName(_ path: String) -> String {
        let bytes = Array(path.utf8)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == 0 ? "/" : String(decoding: bytes[..<slash], as: UTF8.self)
    }
}
