/// A stored rankings document's content, whichever `--format` wrote it, for code that reads an
/// earlier output back (a guard comparing the new totals with the old ones, say).
public enum DocumentContent {
    /// The document in the JSON document's shape: a Firestore body (an object whose only
    /// content is `fields`) is unwrapped, values untyped. Nil when the bytes are not JSON or the
    /// body's Firestore typing is broken; the content itself is not checked (`DocumentChecker`
    /// does that).
    public static func read(_ bytes: [UInt8]) -> JSONValue? { try? parse(bytes) }

    /// Why `parse` found no document.
    enum Failure: Error {
        case notJSON(JSONSyntaxError)
        case brokenTyping
    }

    /// As `read`, saying what was wrong: callers that explain a refusal parse once.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        let parsed: JSONValue
        do { parsed = try JSONParser.parse(bytes) } catch { throw .notJSON(error) }
        guard case .object(let members) = parsed.kind,
              members.contains(where: { $0.key == Array("fields".utf8) }),
              !members.contains(where: { $0.key == Array("week_id".utf8) })
        else { return parsed }
        var body = FirestoreBody()
        guard let document = body.document(from: parsed), body.log.inDocumentOrder.isEmpty else { throw .brokenTyping }
        return document
    }
}
