extension RankingsDocument {
    /// The document a valid JSON text describes, read back into the form `rankings aggregate`
    /// writes from: so that `rankings check --print-firestore` gives a stored JSON document the
    /// same Firestore body `aggregate --format firestore` would have written for it.
    ///
    /// Nil unless `DocumentChecker` finds no problem in `document` with extra keys refused (the
    /// caller checks first and reports the problems); only then is every key known to be there
    /// with the type the app decodes. Times keep millisecond precision, as `json()` writes them.
    init?(checked document: JSONValue) {
        guard case .object(let members) = document.kind else { return nil }
        func member(_ key: String) -> JSONValue? { members.first { $0.key == Array(key.utf8) }?.value }
        func integer(_ value: JSONValue?) -> Int? {
            guard case .number(let text)? = value?.kind else { return nil }
            return Int(String(decoding: text, as: UTF8.self))
        }
        func timestamp(_ value: JSONValue?) -> Timestamp? {
            guard case .string(let bytes)? = value?.kind else { return nil }
            return Timestamp.parseRFC3339(bytes)
        }
        func list(_ value: JSONValue?) -> [RankedJoke]? {
            guard case .array(let entries)? = value?.kind else { return nil }
            var jokes: [RankedJoke] = []
            for entry in entries {
                guard case .object(let fields) = entry.kind,
                      case .string(let id)? = fields.first(where: { $0.key == Array("joke_id".utf8) })?.value.kind,
                      let count = integer(fields.first { $0.key == Array("count".utf8) }?.value),
                      let rank = integer(fields.first { $0.key == Array("rank".utf8) }?.value)
                else { return nil }
                jokes.append(RankedJoke(id: id, count: count, rank: rank))
            }
            return jokes
        }
        guard case .string(let weekID)? = member("week_id")?.kind,
              let hilarious = list(member("hilarious")), let horrible = list(member("horrible")),
              let totalHilarious = integer(member("total_hilarious_ratings")),
              let totalHorrible = integer(member("total_horrible_ratings")),
              let computedAt = timestamp(member("computed_at"))
        else { return nil }
        var bounds: (start: Timestamp, end: Timestamp)?
        if let start = timestamp(member("week_start")), let end = timestamp(member("week_end")) {
            bounds = (start, end)
        }
        self.init(weekID: String(decoding: weekID, as: UTF8.self),
                  rankings: Rankings(hilarious: hilarious, horrible: horrible,
                                     totalHilarious: totalHilarious, totalHorrible: totalHorrible),
                  computedAt: computedAt, weekBounds: bounds)
    }
}
