import Testing
@testable import RankingsKit

/// The POSIX `TZ` rules of TZif footers: each form of the grammar with a valid and an invalid
/// example, and where the changes fall.
@Suite("POSIX TZ rules")
struct PosixTZRuleTests {
    typealias Rule = PosixTZRule

    static func utc(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)!.seconds }

    @Test func standardTimeOnly() {
        #expect(Rule("UTC0") == Rule(standardOffset: 0, daylight: nil))
        #expect(Rule("EST5") == Rule(standardOffset: -18_000, daylight: nil))
        #expect(Rule("<+0530>-5:30") == Rule(standardOffset: 19_800, daylight: nil))
        #expect(Rule("<-03>3") == Rule(standardOffset: -10_800, daylight: nil))
        #expect(Rule("<+1245>-12:45:30")?.standardOffset == 45_930)
        #expect(Rule("XXX+24")?.standardOffset == -86_400)
        for bad in ["", "UTC", "UT0", "<+03-3", "<+0>-0", "EST", "EST5:", "EST5:60", "EST5:00:60", "EST25",
                    "EST-25", "EST 5", "E5T5", "EST5 ", "EST+-5", "EST1234"] {
            #expect(Rule(bad) == nil, "\(bad)")
        }
    }

    @Test func monthWeekDayForm() throws {
        let rule = try #require(Rule("EST5EDT,M3.2.0,M11.1.0"))
        #expect(rule.daylight == .init(offset: -14_400, start: .init(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200),
                                       end: .init(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)))
        // 2026: second Sunday of March is the 8th, first Sunday of November the 1st.
        #expect(rule.secondsFromUTC(at: Self.utc("2026-03-08T06:59:59Z")) == -18_000)
        #expect(rule.secondsFromUTC(at: Self.utc("2026-03-08T07:00:00Z")) == -14_400)
        #expect(rule.secondsFromUTC(at: Self.utc("2026-11-01T05:59:59Z")) == -14_400)
        #expect(rule.secondsFromUTC(at: Self.utc("2026-11-01T06:00:00Z")) == -18_000)
        // Week 5 is the last such weekday, whether the month has four or five.
        let last = try #require(Rule("CET-1CEST,M3.5.0,M10.5.0/3"))
        #expect(PosixTZRule.dayNumber(.monthWeekDay(month: 3, week: 5, weekday: 0), year: 2026)
                    == CivilDate.toDays(year: 2026, month: 3, day: 29))
        #expect(PosixTZRule.dayNumber(.monthWeekDay(month: 2, week: 5, weekday: 6), year: 2026)
                    == CivilDate.toDays(year: 2026, month: 2, day: 28))
        #expect(last.secondsFromUTC(at: Self.utc("2026-03-29T00:59:59Z")) == 3600)
        #expect(last.secondsFromUTC(at: Self.utc("2026-03-29T01:00:00Z")) == 7200)
        for bad in ["EST5EDT,M3.2.0", "EST5EDT,M13.2.0,M11.1.0", "EST5EDT,M0.2.0,M11.1.0", "EST5EDT,M3.0.0,M11.1.0",
                    "EST5EDT,M3.6.0,M11.1.0", "EST5EDT,M3.2.7,M11.1.0", "EST5EDT,M3.2,M11.1.0", "EST5EDT,M3..0,M11.1.0",
                    "EST5EDT,M3.2.0,M11.1.0,", "EST5EDT"] {
            #expect(Rule(bad) == nil, "\(bad)")
        }
    }

    @Test func julianForm() throws {
        // Jn never counts February 29: J60 is March 1 in every year.
        #expect(PosixTZRule.dayNumber(.julian(60), year: 2024) == CivilDate.toDays(year: 2024, month: 3, day: 1))
        #expect(PosixTZRule.dayNumber(.julian(60), year: 2025) == CivilDate.toDays(year: 2025, month: 3, day: 1))
        #expect(PosixTZRule.dayNumber(.julian(59), year: 2024) == CivilDate.toDays(year: 2024, month: 2, day: 28))
        #expect(PosixTZRule.dayNumber(.julian(365), year: 2024) == CivilDate.toDays(year: 2024, month: 12, day: 31))
        let rule = try #require(Rule("XST3XDT,J60/0,J300/0"))
        #expect(rule.daylight?.start.day == .julian(60))
        #expect(rule.secondsFromUTC(at: Self.utc("2024-03-01T02:59:59Z")) == -10_800)
        #expect(rule.secondsFromUTC(at: Self.utc("2024-03-01T03:00:00Z")) == -7200)
        for bad in ["XST3XDT,J0,J300", "XST3XDT,J366,J300", "XST3XDT,J,J300", "XST3XDT,J1000,J300"] {
            #expect(Rule(bad) == nil, "\(bad)")
        }
    }

    @Test func zeroBasedForm() throws {
        // n counts February 29: day 59 is February 29 in a leap year, March 1 otherwise.
        #expect(PosixTZRule.dayNumber(.zeroBased(59), year: 2024) == CivilDate.toDays(year: 2024, month: 2, day: 29))
        #expect(PosixTZRule.dayNumber(.zeroBased(59), year: 2025) == CivilDate.toDays(year: 2025, month: 3, day: 1))
        #expect(PosixTZRule.dayNumber(.zeroBased(0), year: 2025) == CivilDate.toDays(year: 2025, month: 1, day: 1))
        let rule = try #require(Rule("XST3XDT,59,300"))
        #expect(rule.daylight?.end.day == .zeroBased(300))
        for bad in ["XST3XDT,366,300", "XST3XDT,59,-1", "XST3XDT,59,3000"] {
            #expect(Rule(bad) == nil, "\(bad)")
        }
    }

    @Test func explicitAndNegativeDaylightOffsets() throws {
        // Lord Howe: daylight time is half an hour ahead.
        let howe = try #require(Rule("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0"))
        #expect(howe.standardOffset == 37_800)
        #expect(howe.daylight?.offset == 39_600)
        #expect(howe.secondsFromUTC(at: Self.utc("2026-01-15T00:00:00Z")) == 39_600)
        #expect(howe.secondsFromUTC(at: Self.utc("2026-06-15T00:00:00Z")) == 37_800)
        // Dublin: the "daylight" offset is the winter one, an hour behind standard time.
        let dublin = try #require(Rule("IST-1GMT0,M10.5.0,M3.5.0/1"))
        #expect(dublin.standardOffset == 3600)
        #expect(dublin.daylight?.offset == 0)
        #expect(dublin.secondsFromUTC(at: Self.utc("2026-01-15T00:00:00Z")) == 0)
        #expect(dublin.secondsFromUTC(at: Self.utc("2026-07-15T00:00:00Z")) == 3600)
        #expect(dublin.secondsFromUTC(at: Self.utc("2026-03-29T00:59:59Z")) == 0)
        #expect(dublin.secondsFromUTC(at: Self.utc("2026-03-29T01:00:00Z")) == 3600)
        #expect(dublin.secondsFromUTC(at: Self.utc("2026-10-25T00:59:59Z")) == 3600)
        #expect(dublin.secondsFromUTC(at: Self.utc("2026-10-25T01:00:00Z")) == 0)
        // Without an offset, daylight time is an hour ahead of standard time.
        #expect(Rule("EST5EDT,M3.2.0,M11.1.0")?.daylight?.offset == -14_400)
        #expect(Rule("EST5EDT4,M3.2.0,M11.1.0")?.daylight?.offset == -14_400)
        for bad in ["IST-1GMT25,M10.5.0,M3.5.0/1", "IST-1GM0,M10.5.0,M3.5.0/1", "IST-1<GMT0,M10.5.0,M3.5.0/1"] {
            #expect(Rule(bad) == nil, "\(bad)")
        }
    }

    @Test func transitionTimes() throws {
        // Southern hemisphere, hours past 24 and negative ones (RFC 8536's extension).
        let santiago = try #require(Rule("<-04>4<-03>,M9.1.6/24,M4.1.6/24"))
        #expect(santiago.daylight?.start.time == 86_400)
        // 2026-09-05 is the first Saturday; 24:00 of it, on -04 clocks, is 04:00Z on the 6th.
        #expect(santiago.secondsFromUTC(at: Self.utc("2026-09-06T03:59:59Z")) == -14_400)
        #expect(santiago.secondsFromUTC(at: Self.utc("2026-09-06T04:00:00Z")) == -10_800)
        #expect(santiago.secondsFromUTC(at: Self.utc("2026-01-15T00:00:00Z")) == -10_800)
        let godthab = try #require(Rule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0"))
        #expect(godthab.daylight?.start.time == -3600)
        // The last Sunday of March 2026 is the 29th; -1:00 of it is 23:00 on the 28th, -02 clocks.
        #expect(godthab.secondsFromUTC(at: Self.utc("2026-03-29T00:59:59Z")) == -7200)
        #expect(godthab.secondsFromUTC(at: Self.utc("2026-03-29T01:00:00Z")) == -3600)
        #expect(Rule("XST5XDT,M3.2.0/2:30:15,M11.1.0/167")?.daylight?.start.time == 9015)
        #expect(Rule("XST5XDT,M3.2.0/+2,M11.1.0/-167")?.daylight?.end.time == -601_200)
        for bad in ["XST5XDT,M3.2.0/168,M11.1.0", "XST5XDT,M3.2.0/,M11.1.0", "XST5XDT,M3.2.0/2:60,M11.1.0",
                    "XST5XDT,M3.2.0/-168,M11.1.0", "XST5XDT,M3.2.0/2/3,M11.1.0"] {
            #expect(Rule(bad) == nil, "\(bad)")
        }
    }

    /// `J1/0,J365/25`: daylight time all year, the end meeting the next year's start.
    @Test func daylightAllYear() throws {
        let rule = try #require(Rule("EST5EDT,0/0,J365/25"))
        for instant in ["2026-01-01T05:00:00Z", "2026-12-31T23:00:00Z", "2027-01-01T04:00:00Z", "2027-01-01T05:00:00Z",
                        "2026-07-01T00:00:00Z"] {
            #expect(rule.secondsFromUTC(at: Self.utc(instant)) == -14_400, "\(instant)")
        }
    }
}
