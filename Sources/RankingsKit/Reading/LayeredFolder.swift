/// A layered night folder (issue 40): a base `STEM.ndjson` and change files
/// `STEM.changes-NNNNNN.ndjson` (six digits, from 000001), where a document in change file N
/// replaces the document of the same `name` in the base and in every change file below N. A
/// directory holding change files is read as the one snapshot they make together.
///
/// The change files (about 1 % of the base a night) are read first, into `ChangedNames`; the
/// run then reads every file as usual and skips each line a later layer replaces. A directory
/// without change files is read exactly as before: no file of it gets a layer.
enum LayeredFolder {
    /// What a file's name makes it: its stem, and its layer (0 for the base).
    struct Role: Equatable {
        var stem: Substring
        var layer: Int
    }

    static let changeMarker = ".changes-"
    static let digits = 6

    /// `STEM.ndjson(.gz)` is a base (layer 0) and `STEM.changes-NNNNNN.ndjson(.gz)` change file
    /// NNNNNN (1...999999), for any STEM; every other name is neither.
    static func role(of name: String) -> Role? {
        guard let stem = [".ndjson", ".ndjson.gz"].lazy.compactMap({ name.hasSuffix($0) ? name.dropLast($0.count) : nil }).first,
              !stem.isEmpty else { return nil }
        let tail = stem.suffix(changeMarker.count + digits)
        guard tail.count == changeMarker.count + digits, tail.hasPrefix(changeMarker) else { return Role(stem: stem, layer: 0) }
        let number = tail.dropFirst(changeMarker.count)
        guard number.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let layer = Int(number),
              layer > 0 else { return Role(stem: stem, layer: 0) }
        let base = stem.dropLast(tail.count)
        return base.isEmpty ? nil : Role(stem: base, layer: layer)
    }

    /// Gives each file of one directory (named `names[i]`) its layer when the directory holds
    /// change files of its stem, after reading those change files' names. Throws 65
    /// (`unnamedChange`) for a change file's line whose name cannot be read without decoding.
    static func attach(_ files: inout [InputFile], names: [String]) throws(InputError) {
        let roles = names.map(role(of:))
        var groups: [Substring: ChangedNames] = [:]
        for role in roles.compactMap({ $0 }) where role.layer > 0 && groups[role.stem] == nil {
            groups[role.stem] = ChangedNames()
        }
        guard !groups.isEmpty else { return }
        for (index, role) in roles.enumerated() {
            guard let role, let group = groups[role.stem] else { continue }
            if role.layer > 0 { try read(files[index], layer: role.layer, into: group) }
            files[index].layer = ChangeLayer(number: role.layer, names: group)
        }
        for group in groups.values { group.seal() }
    }

    /// Adds every document name of change file `file` to `names`.
    private static func read(_ file: InputFile, layer: Int, into names: ChangedNames) throws(InputError) {
        let opened = try file.open()
        defer { withExtendedLifetime(opened) {} }
        var collector = NameCollector(names: names, layer: layer)
        _ = try file.readLines(descriptor: opened.fd, with: LineReader(), into: &collector)
        if let line = collector.unnamedLine { throw .unnamedChange(path: file.displayPath, line: line) }
    }
}

/// Reads a change file's names: each non-blank line must start `{"name":"NAME"` with no
/// backslash in NAME, the form the fetch writes; the first that does not is remembered.
private struct NameCollector: LineConsumer {
    let names: ChangedNames
    let layer: Int
    private(set) var unnamedLine: Int?

    init(names: ChangedNames, layer: Int) {
        self.names = names
        self.layer = layer
    }

    mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
        guard unnamedLine == nil else { return }
        guard let name = ChangedNames.leadingName(start, end), !name.contains(UInt8(ascii: "\\")) else {
            if !Self.isBlank(start, end) { unnamedLine = number }
            return
        }
        names.add(name, layer: layer)
    }

    mutating func overlongLine(number: Int, offset: Int64) {
        if unnamedLine == nil { unnamedLine = number }
    }

    /// Only spaces, tabs and carriage returns: what the line rules call blank.
    private static func isBlank(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        UnsafeBufferPointer(start: start, count: end - start).allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}
