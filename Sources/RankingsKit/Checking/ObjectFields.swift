/// An object's members looked up by key, with the rules about which keys may be there.
///
/// Of duplicate keys the last one is checked, as most decoders keep it; the duplicate itself is
/// reported by `DuplicateKeys`.
struct ObjectFields {
    let path: JSONPath
    /// Where "missing" problems go: the object's closing brace, after everything it holds.
    let closingOffset: Int
    private var values: [[UInt8]: JSONValue] = [:]

    /// Reports every key not in `known` unless `allowExtraKeys`.
    init(_ object: JSONValue, members: [JSONMember], path: JSONPath, known: [String], allowExtraKeys: Bool,
         log: inout ProblemLog) {
        self.path = path
        closingOffset = object.end - 1
        values = Self.lastByKey(members)
        let knownKeys = Set(known.map { Array($0.utf8) })
        for member in members {
            if !allowExtraKeys && !knownKeys.contains(member.key) {
                log.add(path.member(member.key), "unknown key (--allow-extra-keys permits it)", at: member.keyOffset)
            }
        }
    }

    /// Each key's value, the last one where a key repeats: the one rule for every reader of
    /// a document's members.
    static func lastByKey(_ members: [JSONMember]) -> [[UInt8]: JSONValue] {
        var values: [[UInt8]: JSONValue] = [:]
        for member in members { values[member.key] = member.value }
        return values
    }

    func optional(_ key: String) -> JSONValue? { values[Array(key.utf8)] }

    /// `note` says why the key may be missing, when the object looks like something else.
    func required(_ key: String, _ log: inout ProblemLog, note: String? = nil) -> JSONValue? {
        if let value = optional(key) { return value }
        log.add(path.member(key), note.map { "missing (\($0))" } ?? "missing", at: closingOffset)
        return nil
    }
}
