import CKernels

/// Reads what `--report` names a refused export entity by (`RefusedRecord`), from its picks
/// and, for the document's path, its key again: only for the bad records a run keeps.
///
/// The kind is Firestore's, whatever the job thinks of the entity: a rating is an integer or a
/// double property (Firestore's numbers), any value; a timestamp is a GD_WHEN property.
enum RefusedEntity {
    static func describe(_ picks: UnsafePointer<rk_picked_entity>, record: UnsafeRawBufferPointer,
                         window: KindWindow) -> RefusedRecord {
        var refused = RefusedRecord(document: document(picks, record: record))
        if let joke = ExportEventRules.plainString(EntityProto.property(.jokeID, of: picks)),
           ExportEventRules.isUTF8(joke) {
            refused.jokeID = Array(joke)
        }
        let r = EntityProto.property(.rating, of: picks)
        var rating: Double?
        if r.pointee.seen > 0, r.pointee.multiple == 0, r.pointee.meaning == EntityProto.Meaning.none {
            switch Int32(r.pointee.kind) {
            case RK_VALUE_INTEGER: rating = Double(Int64(bitPattern: r.pointee.number))
            case RK_VALUE_DOUBLE: rating = Double(bitPattern: r.pointee.number)
            default: break
            }
        }
        var timestamp: Timestamp?
        if window.readsTimestamp, case .at(let t) = ExportEventRules.timestamp(EntityProto.property(.timestamp, of: picks)) {
            timestamp = t
        }
        let week = window.week == nil ? nil : ExportEventRules.plainString(EntityProto.property(.weekID, of: picks)).map(Array.init)
        refused.kind = window.kind(rating: rating, timestamp: timestamp, week: week)
        return refused
    }

    /// `projects/P/databases/D/documents/rating_events/NAME` when the entity's key gives one:
    /// the key's app (`P`, after a partition prefix such as `dev~` or `s~`), its database id
    /// (`(default)` when it has none), no namespace, and a name (a Firestore document id; a
    /// numeric id names no Firestore document). Only top-level `rating_events` entities are
    /// refused, so the path has that one element.
    ///
    /// Reference's fields (onestore's entity.proto): app = 13, path = 14, name_space = 20,
    /// database_id = 23; the last key of the record counts, as for the path.
    static func document(_ picks: UnsafePointer<rk_picked_entity>, record: UnsafeRawBufferPointer) -> [UInt8]? {
        guard picks.pointee.path_length == 1, picks.pointee.has_name != 0 else { return nil }
        let name = UnsafeBufferPointer(start: picks.pointee.name, count: picks.pointee.name_count)
        guard !name.isEmpty, ExportEventRules.isUTF8(name) else { return nil }
        var app: UnsafeBufferPointer<UInt8>?, database: UnsafeBufferPointer<UInt8>?, namespace: UnsafeBufferPointer<UInt8>?
        do throws(ProtoWire.Malformed) {
            var wire = ProtoWire(record)
            while !wire.atEnd {
                let key = try wire.varint()
                guard key == UInt64(RK_KEY_ENTITY_KEY) else {
                    try wire.skipField(key)
                    continue
                }
                (app, database, namespace) = (nil, nil, nil)
                var reference = ProtoWire(UnsafeRawBufferPointer(try wire.bytes()))
                while !reference.atEnd {
                    let field = try reference.varint()
                    switch field {
                    case 13 << 3 | 2: app = try reference.bytes()
                    case 20 << 3 | 2: namespace = try reference.bytes()
                    case 23 << 3 | 2: database = try reference.bytes()
                    default: try reference.skipField(field)
                    }
                }
            }
        } catch {
            return nil // the decoder read the record whole; no such record reaches here
        }
        guard var project = app, !(namespace.map { !$0.isEmpty } ?? false) else { return nil }
        if let tilde = project.firstIndex(of: UInt8(ascii: "~")) { project = UnsafeBufferPointer(rebasing: project[(tilde + 1)...]) }
        let databaseID = database.map(Array.init) ?? Array("(default)".utf8)
        guard !project.isEmpty, !databaseID.isEmpty, ExportEventRules.isUTF8(project),
              databaseID.withUnsafeBufferPointer(ExportEventRules.isUTF8) else { return nil }
        return Array("projects/".utf8) + Array(project) + Array("/databases/".utf8) + databaseID
            + Array("/documents/rating_events/".utf8) + Array(name)
    }
}
