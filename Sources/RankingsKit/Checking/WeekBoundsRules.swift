extension DocumentChecker {
    /// `week_start` and `week_end`. A week's document (`week_id` of the form `YYYY-Www`, as the
    /// app's `getCurrentWeekId()` makes it) is what app versions from before the all-time board
    /// decode from `weekly_rankings/{week_id}`: their decoder needs both bounds, and they must be
    /// that week's. Any other document (`all_time`, `monthly`) may carry both or neither.
    func checkWeekBounds(_ fields: ObjectFields, weekID: [UInt8]?, _ log: inout ProblemLog) {
        guard let weekID, ISOWeek.hasWeekForm(weekID) else {
            checkOptionalBounds(fields, &log)
            return
        }
        let text = String(decoding: weekID, as: UTF8.self)
        let week = ISOWeek(text)
        if week == nil, let value = fields.optional("week_id") {
            let year = Int64(text.prefix(4)) ?? 0
            log.add(.root.member("week_id"), "\(text) is not an ISO week: \(text.prefix(4)) has weeks 01 to \(ISOWeek.weeks(in: year))",
                    at: value.offset)
        }
        let why = "a week's document, week_id \(text), needs week_start and week_end"
        let startValue = fields.required("week_start", &log, note: why)
        let endValue = fields.required("week_end", &log, note: why)
        let start = startValue.flatMap { log.timestamp($0, .root.member("week_start")) }
        let end = endValue.flatMap { log.timestamp($0, .root.member("week_end")) }
        if let start, let end, let endValue, end <= start {
            log.add(.root.member("week_end"), "not after week_start", at: endValue.offset)
        }
        guard let week, start != nil || end != nil else { return }
        guard let zone = weekZone ?? IANAZone.defaultZone else {
            log.add([DocumentProblem(zoneUnavailable: IANAZone.defaultIdentifier)])
            return
        }
        let expected = week.bounds(in: zone)
        let clocks = "on \(zone.identifier)'s clocks"
        if let start, let startValue, start != expected.start {
            log.add(.root.member("week_start"), "not the start of \(week.id) \(clocks): "
                    + "\(expected.start.rfc3339(milliseconds: true)) (Monday 00:00)", at: startValue.offset)
        }
        // The end this tool writes is the week's last millisecond; a writer that keeps more
        // digits, or the next Monday's midnight as an exclusive end, names the same week.
        let nextMonday = ISOWeek.instant(localDay: week.mondayDay + 7, zone: zone)
        if let end, let endValue, !(Timestamp(seconds: nextMonday.seconds - 1)...nextMonday).contains(end) {
            log.add(.root.member("week_end"), "not the end of \(week.id) \(clocks): "
                    + "\(expected.end.rfc3339(milliseconds: true)) (Sunday 23:59:59.999), or up to "
                    + "\(nextMonday.rfc3339(milliseconds: true)) (the next Monday 00:00)", at: endValue.offset)
        }
    }

    /// Both or neither: one without the other is a half-written weekly document.
    private func checkOptionalBounds(_ fields: ObjectFields, _ log: inout ProblemLog) {
        let startValue = fields.optional("week_start"), endValue = fields.optional("week_end")
        switch (startValue, endValue) {
        case (nil, nil):
            return
        case (_?, nil):
            log.add(.root.member("week_end"), "missing (week_start is present)", at: fields.closingOffset)
        case (nil, _?):
            log.add(.root.member("week_start"), "missing (week_end is present)", at: fields.closingOffset)
        case (_?, _?):
            break
        }
        let start = startValue.flatMap { log.timestamp($0, .root.member("week_start")) }
        let end = endValue.flatMap { log.timestamp($0, .root.member("week_end")) }
        if let start, let end, let endValue, end < start {
            log.add(.root.member("week_end"), "earlier than week_start", at: endValue.offset)
        }
    }
}
