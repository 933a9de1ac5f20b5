extension DocumentChecker {
    /// Checks one leaderboard (`hilarious` or `horrible`) and returns the sum of the counts it
    /// could read, for the total beside it; nil when the list is not an array at all.
    ///
    /// The order rules compare each entry with the nearest earlier entry that had what the rule
    /// needs, so one broken entry is reported once instead of spoiling the checks after it.
    func checkList(_ list: JSONValue, _ path: JSONPath, _ log: inout ProblemLog) -> Int? {
        guard case .array(let entries) = list.kind else {
            log.add(path, "expected an array, found \(list.summary)", at: list.offset)
            return nil
        }
        if entries.count > top {
            log.add(path, "has \(entries.count) entries, more than --top \(top)", at: list.offset)
        }
        var sum = 0
        var previousCount: Int?
        var previousEntry: (id: [UInt8], count: Int)?
        var firstSeen: [[UInt8]: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let entryPath = path.element(index)
            guard case .object(let members) = entry.kind else {
                log.add(entryPath, "expected an object, found \(entry.summary)", at: entry.offset)
                continue
            }
            let fields = ObjectFields(entry, members: members, path: entryPath, known: ["joke_id", "count", "rank"],
                                      allowExtraKeys: allowExtraKeys, log: &log)
            let idValue = fields.required("joke_id", &log)
            let countValue = fields.required("count", &log)
            let rankValue = fields.required("rank", &log)
            let id = idValue.flatMap { log.nonEmptyString($0, entryPath.member("joke_id")) }
            let count = countValue.flatMap { log.integer($0, entryPath.member("count"), atLeast: 1) }
            if let rankValue, let rank = log.integer(rankValue, entryPath.member("rank")), rank != index + 1 {
                log.add(entryPath.member("rank"), "expected \(index + 1) (ranks run 1, 2, 3… down the list), found \(rank)",
                        at: rankValue.offset)
            }

            var repeated = false
            if let id, let idValue {
                if let earlier = firstSeen[id] {
                    repeated = true
                    log.add(entryPath.member("joke_id"), "same joke_id as \(path.element(earlier))", at: idValue.offset)
                } else {
                    firstSeen[id] = index
                }
            }
            if let count, let countValue {
                sum = sum.addingReportingOverflow(count).overflow ? Int.max : sum + count
                if let previousCount, count > previousCount {
                    log.add(entryPath.member("count"), "greater than the count before it (\(previousCount)); counts must not increase",
                            at: countValue.offset)
                }
                previousCount = count
            }
            if let id, let count, let idValue {
                // Equal counts are ordered by joke id bytes, smallest first, as the aggregator ranks them.
                if !repeated, let previous = previousEntry, previous.count == count,
                   !previous.id.lexicographicallyPrecedes(id) {
                    log.add(entryPath.member("joke_id"),
                            "tied with the entry before it, so it must come after that entry's joke_id in byte order",
                            at: idValue.offset)
                }
                previousEntry = (id, count)
            }
        }
        return sum
    }
}
