/// Every way a run can fail, each with its one documented exit status (sysexits.h numbers).
public enum JobError: Error, Sendable {
    /// Bad command line (64).
    case usage(String)
    /// The data is bad: too many bad lines, no valid events, corrupt gzip (65).
    case data(String)
    case input(InputError)
    case output(OutputError)

    public var exitStatus: Int32 {
        switch self {
        case .usage: 64
        case .data: 65
        case .input(.cannotOpen): 66
        case .input(.readFailed): 74
        case .input(.corruptGzip): 65
        case .input(.noExportFiles): 66
        case .input(.jsonArray): 65
        case .input(.managedExport): 64
        case .input(.corruptExport): 65
        case .input(.incompleteExport): 65
        case .input(.unnamedChange): 65
        case .output(.cannotCreate): 73
        case .output(.writeFailed): 74
        }
    }

    public var message: String {
        switch self {
        case .usage(let m), .data(let m): m
        case .input(.cannotOpen(let path, let reason)): "cannot read \(path): \(reason)"
        case .input(.readFailed(let path, let reason)): "error reading \(path): \(reason)"
        case .input(.corruptGzip(let path, let reason)): "\(path): \(reason)"
        case .input(.noExportFiles(let directory)):
            "\(directory): no file matched; a directory contributes its regular files named "
                + InputFile.exportSuffixes.map { "*" + $0 }.joined(separator: ", ") + " (not in subdirectories, not dot-files)"
        case .input(.jsonArray(let path)):
            "\(path): the file starts with a JSON array's '[', not one object per line (NDJSON); nothing written. "
                + "If it is an array of objects, convert it with: jq -c '.[]' \(path) > NAME.ndjson"
        case .input(.managedExport(let path)):
            "\(path) is a Firestore managed export; this command reads NDJSON files only"
        case .input(.corruptExport(let path, let offset, let reason)): "\(path): corrupt export at byte \(offset): \(reason)"
        case .input(.incompleteExport(let path, let reason)): "\(path): incomplete export: \(reason)"
        case .input(.unnamedChange(let path, let line)):
            "\(path):\(line): a change file's line must start with {\"name\":\" and name its document without "
                + "escapes (the run cannot tell which document it replaces); nothing written"
        case .output(.cannotCreate(let path, let reason)): "cannot create \(path): \(reason)"
        case .output(.writeFailed(let path, let reason)): "error writing \(path): \(reason)"
        }
    }
}
