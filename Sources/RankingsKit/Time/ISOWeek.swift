/// An ISO 8601 week such as `2026-W07`: Monday to Sunday, week 1 holding the year's first Thursday.
public struct ISOWeek: Sendable, Equatable {
    let year: Int64
    let week: Int

    /// Parses exactly `YYYY-Www`; nil for anything else, or a week the year does not have
    /// (`2026-W54`, `2025-W53`, `2026-W00`).
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard Self.hasWeekForm(b),
              let year = Int64(String(decoding: b[0..<4], as: UTF8.self)),
              let week = Int(String(decoding: b[6..<8], as: UTF8.self)),
              week >= 1, week <= ISOWeek.weeks(in: year)
        else { return nil }
        self.year = year
        self.week = week
    }

    /// Exactly `YYYY-Www` in ASCII digits, whether or not the year has that week.
    static func hasWeekForm(_ b: [UInt8]) -> Bool {
        b.count == 8 && b[4] == UInt8(ascii: "-") && b[5] == UInt8(ascii: "W")
            && b[0..<4].allSatisfy({ $0 &- 48 < 10 }) && b[6..<8].allSatisfy({ $0 &- 48 < 10 })
    }

    /// The week whose Monday-to-Sunday the clocks of `zone` show at `instant`: what the app's
    /// `getCurrentWeekId()` gives at that instant on New York's clocks. Its ISO year may differ
    /// from the calendar year (2025-12-29 is in 2026-W01, 2027-01-03 in 2026-W53).
    public init(containing instant: Timestamp, in zone: IANAZone) {
        let local = instant.seconds + Int64(zone.secondsFromUTC(at: instant.seconds))
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        // A week belongs to the ISO year holding its Thursday.
        let thursday = day - Int64(ISOWeek.weekday(day) - 1) + 3
        let year = CivilDate.fromDays(thursday).year
        self.year = year
        self.week = Int((thursday - ISOWeek.mondayOfWeekOne(year)) / 7) + 1
    }

    public var id: String {
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-W" + (week < 10 ? "0" : "") + "\(week)"
    }

    /// Day number (days since 1970-01-01) of the week's Monday.
    var mondayDay: Int64 {
        ISOWeek.mondayOfWeekOne(year) + Int64(week - 1) * 7
    }

    /// Monday 00:00:00.000 and Sunday 23:59:59.999 of the week on the clocks of `zone`.
    func bounds(in zone: IANAZone) -> (start: Timestamp, end: Timestamp) {
        let start = ISOWeek.instant(localDay: mondayDay, zone: zone)
        let next = ISOWeek.instant(localDay: mondayDay + 7, zone: zone)
        let end = next.nanoseconds >= 1_000_000
            ? Timestamp(seconds: next.seconds, nanoseconds: next.nanoseconds - 1_000_000)
            : Timestamp(seconds: next.seconds - 1, nanoseconds: next.nanoseconds + 999_000_000)
        return (start, end)
    }

    /// 1 = Monday … 7 = Sunday.
    static func weekday(_ day: Int64) -> Int {
        // 1970-01-01 was a Thursday.
        Int(((day % 7) + 7 + 3) % 7) + 1
    }

    static func mondayOfWeekOne(_ year: Int64) -> Int64 {
        let jan4 = CivilDate.toDays(year: year, month: 1, day: 4)
        return jan4 - Int64(weekday(jan4) - 1)
    }

    /// 53 when the year starts on a Thursday, or is a leap year starting on a Wednesday.
    static func weeks(in year: Int64) -> Int {
        let jan1 = weekday(CivilDate.toDays(year: year, month: 1, day: 1))
        return jan1 == 4 || (jan1 == 3 && CivilDate.isLeap(year)) ? 53 : 52
    }

    /// The instant the clocks of `zone` show midnight starting `localDay` (if a DST jump skips
    /// midnight, the first instant after it).
    static func instant(localDay: Int64, zone: IANAZone) -> Timestamp {
        let local = localDay * 86_400
        func offset(_ t: Int64) -> Int64 { Int64(zone.secondsFromUTC(at: t)) }
        var guess = local - offset(local)
        guess = local - offset(guess)
        if guess + offset(guess) != local {
            // Midnight did not exist that day: the clocks jumped past it at the moment the
            // evening's offset would have shown midnight.
            guess = local - offset(local - 86_400)
        }
        return Timestamp(seconds: guess)
    }
}
