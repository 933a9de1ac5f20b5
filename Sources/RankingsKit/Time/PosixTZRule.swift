/// A POSIX `TZ` rule such as `EST5EDT,M3.2.0,M11.1.0`: what a TZif file's footer says about
/// every instant after its last listed transition. Modern ("slim") tzdata lists no transitions
/// for years that follow a rule, so this is what bounds this year's weeks.
///
/// The grammar is POSIX's, with RFC 8536's extensions: rule times from -167 to 167 hours, and
/// `<...>` quoted names. Offsets here are seconds east of UTC (the text writes them west).
struct PosixTZRule: Sendable, Equatable {
    var standardOffset: Int
    var daylight: Daylight?

    struct Daylight: Sendable, Equatable {
        var offset: Int
        var start: Change
        var end: Change
    }

    /// The local moment a change happens, on the clocks in force just before it.
    struct Change: Sendable, Equatable {
        var day: Day
        /// Seconds after that day's midnight (default 02:00); may be negative or past 24 hours.
        var time: Int
    }

    enum Day: Sendable, Equatable {
        /// `Jn`: 1...365, February 29 never counted.
        case julian(Int)
        /// `n`: 0...365, February 29 counted in leap years.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    /// Nil unless `text` is the whole of a valid rule.
    init?(_ text: String) {
        var p = Parser(bytes: Array(text.utf8))
        guard let rule = p.rule(), p.atEnd else { return nil }
        self = rule
    }

    init(standardOffset: Int, daylight: Daylight?) {
        self.standardOffset = standardOffset
        self.daylight = daylight
    }

    /// Seconds east of UTC that the clocks show at `instant` (seconds since 1970-01-01Z).
    func secondsFromUTC(at instant: Int64) -> Int {
        guard let daylight else { return standardOffset }
        // The changes of the years around the instant's: a change can fall in a neighbouring
        // year (`J365/25`, `1/-1`), and the clocks follow the latest change not after it.
        let day = Self.floorDiv(instant + Int64(standardOffset), 86_400)
        let year = CivilDate.fromDays(day).year
        var latest: (at: Int64, daylight: Bool)?
        for y in (year - 1)...(year + 1) {
            let changes = [(at: moment(daylight.start, year: y, clocks: standardOffset), daylight: true),
                           (at: moment(daylight.end, year: y, clocks: daylight.offset), daylight: false)]
            for change in changes where change.at <= instant {
                // A start and an end at the same instant (all-year daylight time): no change.
                if let l = latest, l.at > change.at || (l.at == change.at && l.daylight) { continue }
                latest = change
            }
        }
        return latest?.daylight == true ? daylight.offset : standardOffset
    }

    private func moment(_ change: Change, year: Int64, clocks: Int) -> Int64 {
        Self.dayNumber(change.day, year: year) * 86_400 + Int64(change.time) - Int64(clocks)
    }

    /// Days since 1970-01-01 of `day` in `year`.
    static func dayNumber(_ day: Day, year: Int64) -> Int64 {
        let january1 = CivilDate.toDays(year: year, month: 1, day: 1)
        switch day {
        case .julian(let n):
            return january1 + Int64(n - 1) + (CivilDate.isLeap(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            return january1 + Int64(n)
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilDate.toDays(year: year, month: month, day: 1)
            // 1970-01-01 was a Thursday (4 when Sunday is 0).
            let firstWeekday = Int((first % 7 + 7 + 4) % 7)
            var d = first + Int64((weekday - firstWeekday + 7) % 7 + 7 * (week - 1))
            while d >= first + CivilDate.daysIn(year: year, month: month) { d -= 7 }
            return d
        }
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        var atEnd: Bool { i == bytes.count }
        private var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func rule() -> PosixTZRule? {
            guard name(), let std = clock(maxHours: 24) else { return nil }
            if atEnd { return PosixTZRule(standardOffset: -std, daylight: nil) }
            guard name() else { return nil }
            var dst = std - 3600
            if peek != UInt8(ascii: ",") {
                guard let d = clock(maxHours: 24) else { return nil }
                dst = d
            }
            // Daylight time without a rule is left to each implementation; tzdata never writes it.
            guard take(","), let start = change(), take(","), let end = change() else { return nil }
            return PosixTZRule(standardOffset: -std, daylight: Daylight(offset: -dst, start: start, end: end))
        }

        /// Three or more letters, or `<` three or more of letters, digits, `+`, `-` `>`.
        private mutating func name() -> Bool {
            let from = i
            if take("<") {
                while let c = peek, isAlnum(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { i += 1 }
                return i - from - 1 >= 3 && take(">")
            }
            while let c = peek, isAlpha(c) { i += 1 }
            return i - from >= 3
        }

        private mutating func change() -> Change? {
            let day: Day
            if take("J") {
                guard let n = number(maxDigits: 3), (1...365).contains(n) else { return nil }
                day = .julian(n)
            } else if take("M") {
                guard let m = number(maxDigits: 2), (1...12).contains(m), take("."),
                      let w = number(maxDigits: 1), (1...5).contains(w), take("."),
                      let d = number(maxDigits: 1), (0...6).contains(d) else { return nil }
                day = .monthWeekDay(month: m, week: w, weekday: d)
            } else {
                guard let n = number(maxDigits: 3), (0...365).contains(n) else { return nil }
                day = .zeroBased(n)
            }
            var time = 7200
            if take("/") {
                guard let t = clock(maxHours: 167) else { return nil }
                time = t
            }
            return Change(day: day, time: time)
        }

        /// `[+-]hh[:mm[:ss]]` in seconds.
        private mutating func clock(maxHours: Int) -> Int? {
            var sign = 1
            if take("-") { sign = -1 } else { _ = take("+") }
            guard let h = number(maxDigits: 3), h <= maxHours else { return nil }
            var seconds = h * 3600
            if take(":") {
                guard let m = number(maxDigits: 2), m <= 59 else { return nil }
                seconds += m * 60
                if take(":") {
                    guard let s = number(maxDigits: 2), s <= 59 else { return nil }
                    seconds += s
                }
            }
            return sign * seconds
        }

        private mutating func number(maxDigits: Int) -> Int? {
            var value = 0, count = 0
            while let c = peek, c &- UInt8(ascii: "0") < 10 {
                guard count < maxDigits else { return nil }
                value = value * 10 + Int(c - UInt8(ascii: "0"))
                count += 1
                i += 1
            }
            return count > 0 ? value : nil
        }

        private mutating func take(_ c: Unicode.Scalar) -> Bool {
            guard peek == UInt8(ascii: c) else { return false }
            i += 1
            return true
        }

        private func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) &- UInt8(ascii: "a") < 26 }
        private func isAlnum(_ c: UInt8) -> Bool { isAlpha(c) || c &- UInt8(ascii: "0") < 10 }
    }
}
