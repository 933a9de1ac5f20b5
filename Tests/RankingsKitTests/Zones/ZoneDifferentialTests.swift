import Foundation
import Testing
@testable import RankingsKit

/// The zone reader against Foundation's `TimeZone`, which `rankings` used before it read the
/// system's database itself: the same offset at every instant tried, and the same week bounds.
///
/// Foundation carries its own frozen copy of the tz data (in ICU), while the system's copy is
/// updated when a country changes its clocks. So zones whose rules have been settled for years
/// are compared up to 2100, and zones whose governments change them often only up to the end
/// of 2025, on which both copies agree (the system's tzdata 2025b here); a future change there is
/// news for the system's copy, not a bug in the reader.
@Suite("Zones agree with Foundation")
struct ZoneDifferentialTests {
    static let settledUntil: Int64 = 4_102_444_800 // 2100-01-01
    static let recentUntil: Int64 = 1_767_225_600 // 2026-01-01

    static let zones: [(String, until: Int64)] = [
        "America/New_York", "America/Chicago", "America/Denver", "America/Phoenix", "America/Los_Angeles",
        "America/Anchorage", "America/Halifax", "America/St_Johns", "America/Argentina/Buenos_Aires",
        "Pacific/Honolulu", "Europe/London", "Europe/Dublin", "Europe/Lisbon", "Europe/Berlin", "Europe/Paris",
        "Asia/Jerusalem", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Shanghai", "Asia/Tokyo", "Australia/Adelaide",
        "Australia/Sydney", "Australia/Lord_Howe", "Australia/Eucla", "Pacific/Auckland", "Pacific/Chatham",
        "Pacific/Kiritimati", "Etc/GMT+12", "Etc/GMT-14", "Etc/UTC", "UTC", "GMT", "US/Eastern",
    ].map { ($0, settledUntil) } + [
        "America/Havana", "America/Mexico_City", "America/Bogota", "America/Sao_Paulo", "America/Santiago",
        "Europe/Moscow", "Europe/Istanbul", "Africa/Cairo", "Africa/Johannesburg", "Africa/Lagos", "Asia/Beirut",
        "Asia/Tehran", "Asia/Dubai", "Asia/Kabul", "Asia/Karachi", "Asia/Dhaka", "Pacific/Apia",
    ].map { ($0, recentUntil) }

    static func zone(_ name: String) -> (String, until: Int64) { zones.first { $0.0 == name }! }

    /// Random instants from 1900 on, and one second either side of every change Foundation
    /// knows of from 1970 on.
    @Test(arguments: zones)
    func offsetsAgree(_ name: String, until: Int64) throws {
        let ours = try #require(IANAZone(identifier: name))
        let theirs = try #require(TimeZone(identifier: name))
        var instants: [Int64] = []
        var random = SplitMix64(seed: name.utf8.reduce(0x5EED) { $0 &* 31 &+ UInt64($1) })
        for _ in 0..<2000 { instants.append(Int64.random(in: -2_208_988_800..<until, using: &random)) }
        var date = Date(timeIntervalSince1970: 0)
        let limit = Date(timeIntervalSince1970: Double(until))
        while let next = theirs.nextDaylightSavingTimeTransition(after: date), next < limit {
            let t = Int64(next.timeIntervalSince1970)
            instants += [t - 1, t, t + 1]
            date = next
        }
        var differences: [String] = []
        for t in instants {
            let expected = theirs.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))
            let got = ours.secondsFromUTC(at: t)
            if got != expected, differences.count < 5 {
                differences.append("\(Timestamp(seconds: t).rfc3339()): Foundation \(expected), ours \(got)")
            }
        }
        #expect(differences.isEmpty, "\(name): \(differences)")
    }

    /// Week bounds, the only thing zones are used for, for every week from 1990 on: ours, and
    /// what `ISOWeek.bounds` computed before, when it asked Foundation for the offsets.
    @Test(arguments: ["America/New_York", "Europe/Berlin", "Asia/Tehran", "Australia/Lord_Howe", "Pacific/Apia",
                      "America/Santiago", "Europe/Dublin", "America/St_Johns", "Asia/Kolkata", "UTC"].map(zone))
    func weekBoundsAgree(_ name: String, until: Int64) throws {
        let ours = try #require(IANAZone(identifier: name))
        let theirs = try #require(TimeZone(identifier: name))
        func offset(_ t: Int64) -> Int64 { Int64(theirs.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))) }
        func midnight(_ localDay: Int64) -> Int64 {
            let local = localDay * 86_400
            var guess = local - offset(local)
            guess = local - offset(guess)
            if guess + offset(guess) != local { guess = local - offset(local - 86_400) }
            return guess
        }
        var differences: [String] = []
        for year in Int64(1990)...2099 {
            for weekNumber in 1...ISOWeek.weeks(in: year) {
                let week = try #require(ISOWeek("\(year)-W\(weekNumber < 10 ? "0" : "")\(weekNumber)"))
                if (week.mondayDay + 8) * 86_400 > until { break }
                let (start, end) = week.bounds(in: ours)
                let expected = (midnight(week.mondayDay), midnight(week.mondayDay + 7) - 1)
                if (start.seconds, end.seconds) != expected || end.nanoseconds != 999_000_000, differences.count < 5 {
                    differences.append("\(week.id): Foundation \(expected), ours \((start.seconds, end.seconds))")
                }
            }
        }
        #expect(differences.isEmpty, "\(name): \(differences)")
    }
}
