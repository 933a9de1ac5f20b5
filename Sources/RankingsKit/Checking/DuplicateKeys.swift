/// Keys that appear twice in one object, anywhere in a document.
///
/// Decoders disagree about which duplicate wins (first, last, or an error), so a document that
/// has one means different things to different readers; each repeat is a problem of its own.
/// Walks with its own stack rather than recursing, like the parser, and visits only objects and
/// arrays, so a long list of scalars costs no paths.
enum DuplicateKeys {
    static func problems(in document: JSONValue) -> [DocumentProblem] {
        var problems: [DocumentProblem] = []
        var pending: [(JSONValue, JSONPath)] = [(document, .root)]
        while let (value, path) = pending.popLast() {
            switch value.kind {
            case .object(let members):
                var seen: Set<[UInt8]> = []
                for member in members {
                    if !seen.insert(member.key).inserted {
                        problems.append(DocumentProblem(path.member(member.key), "duplicate key", at: member.keyOffset))
                    }
                    if member.value.isContainer { pending.append((member.value, path.member(member.key))) }
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() where element.isContainer {
                    pending.append((element, path.element(index)))
                }
            default:
                break
            }
        }
        return problems
    }
}

extension JSONValue {
    var isContainer: Bool {
        switch kind {
        case .object, .array: true
        default: false
        }
    }
}
