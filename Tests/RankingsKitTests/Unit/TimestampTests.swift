import Foundation
import Testing
@testable import RankingsKit

/// `Timestamp.parseRFC3339` and `.rfc3339()`.
@Suite("RFC 3339 timestamps")
struct TimestampTests {
    static let reference: Int64 = 1_771_390_800 // 2026-02-18T05:00:00Z

    static func parse(_ s: String) -> Timestamp? { Timestamp.parseRFC3339(s) }

    @Test func zoneSpellingsOfTheSameInstant() {
        let spellings = [
            "2026-02-18T05:00:00Z", "2026-02-18t05:00:00z", "2026-02-18 05:00:00Z",
            "2026-02-18T05:00:00+00:00", "2026-02-18T05:00:00-00:00",
            "2026-02-18T00:00:00-05:00", "2026-02-18T10:30:00+05:30",
            "2026-02-17T23:00:00-06:00", "2026-02-19T04:59:00+23:59", "2026-02-17T05:01:00-23:59",
        ]
        for s in spellings {
            #expect(Self.parse(s) == Timestamp(seconds: Self.reference), "\(s)")
        }
    }

    @Test func epochAndUnixBoundaries() {
        #expect(Self.parse("1970-01-01T00:00:00Z") == Timestamp(seconds: 0))
        #expect(Self.parse("1970-01-01T00:00:01Z") == Timestamp(seconds: 1))
        #expect(Self.parse("1970-01-01T01:00:00+01:00") == Timestamp(seconds: 0))
        #expect(Self.parse("2038-01-19T03:14:08Z") == Timestamp(seconds: 2_147_483_648))
        #expect(Self.parse("9999-12-31T23:59:59Z") == Timestamp(seconds: 253_402_300_799))
    }

    @Test func datesBefore1970() {
        #expect(Self.parse("1969-12-31T23:59:59Z") == Timestamp(seconds: -1))
        #expect(Self.parse("1969-12-31T23:59:59.5Z") == Timestamp(seconds: -1, nanoseconds: 500_000_000))
        #expect(Self.parse("1970-01-01T00:00:00+00:01") == Timestamp(seconds: -60))
        #expect(Self.parse("1900-01-01T00:00:00Z") == Timestamp(seconds: -2_208_988_800))
        #expect(Self.parse("1600-03-01T00:00:00Z") == Timestamp(seconds: -11_670_912_000))
        #expect(Self.parse("0001-01-01T00:00:00Z") == Timestamp(seconds: -62_135_596_800))
        #expect(Timestamp(seconds: -1).rfc3339() == "1969-12-31T23:59:59Z")
        #expect(Timestamp(seconds: -86_400).rfc3339() == "1969-12-31T00:00:00Z")
        #expect(Timestamp(seconds: -86_401).rfc3339() == "1969-12-30T23:59:59Z")
        #expect(Timestamp(seconds: -1, nanoseconds: 500_000_000).rfc3339() == "1969-12-31T23:59:59.500Z")
        #expect(Timestamp(seconds: -2_208_988_800).rfc3339() == "1900-01-01T00:00:00Z")
        #expect(Timestamp(seconds: -62_135_596_800).rfc3339() == "0001-01-01T00:00:00Z")
    }

    @Test func fractions() {
        let base = "2026-02-18T05:00:00"
        let cases: [(String, Int32)] = [
            (".0", 0), (".5", 500_000_000), (".25", 250_000_000), (".123", 123_000_000),
            (".1234", 123_400_000), (".123456", 123_456_000), (".123456789", 123_456_789),
            (".000000001", 1), (".999999999", 999_999_999),
            // Beyond nanoseconds, digits are dropped, not rounded.
            (".1234567891", 123_456_789), (".12345678999", 123_456_789), (".999999999999", 999_999_999),
            (".000000000999", 0),
        ]
        for (fraction, nanos) in cases {
            #expect(Self.parse(base + fraction + "Z") == Timestamp(seconds: Self.reference, nanoseconds: nanos), "\(fraction)")
            #expect(Self.parse(base + fraction + "-01:00") == Timestamp(seconds: Self.reference + 3600, nanoseconds: nanos), "\(fraction)")
        }
        for bad in [".", ".Z", ",5", ".5.5", ".a", ". 5"] {
            #expect(Self.parse(base + bad + "Z") == nil, "\(bad)")
        }
    }

    @Test func leapYears() {
        #expect(Self.parse("2024-02-29T00:00:00Z") == Timestamp(seconds: 1_709_164_800))
        #expect(Self.parse("2000-02-29T12:00:00Z") != nil)
        #expect(Self.parse("2400-02-29T12:00:00Z") != nil)
        #expect(Self.parse("2023-02-29T00:00:00Z") == nil)
        #expect(Self.parse("1900-02-29T00:00:00Z") == nil)
        #expect(Self.parse("2100-02-29T00:00:00Z") == nil)
        #expect(Self.parse("2024-02-30T00:00:00Z") == nil)
        // The day after Feb 29 is March 1.
        let feb29 = Self.parse("2024-02-29T00:00:00Z")!
        #expect(Self.parse("2024-03-01T00:00:00Z") == Timestamp(seconds: feb29.seconds + 86_400))
        #expect(Timestamp(seconds: feb29.seconds).rfc3339() == "2024-02-29T00:00:00Z")
    }

    @Test func lastDayOfEveryMonth() {
        let lengths2023 = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for (year, lengths) in [(2023, lengths2023), (2024, [31, 29] + lengths2023.dropFirst(2))] {
            for (index, length) in lengths.enumerated() {
                let month = String(format: "%04d-%02d-", year, index + 1)
                #expect(Self.parse(month + String(format: "%02dT00:00:00Z", length)) != nil, "\(month)\(length)")
                #expect(Self.parse(month + String(format: "%02dT00:00:00Z", length + 1)) == nil, "\(month)\(length + 1)")
                #expect(Self.parse(month + "00T00:00:00Z") == nil, "\(month)00")
            }
        }
    }

    @Test func fieldRanges() {
        for bad in [
            "2026-00-10T00:00:00Z", "2026-13-10T00:00:00Z", "2026-02-00T00:00:00Z", "2026-01-32T00:00:00Z",
            "2026-04-31T00:00:00Z", "2026-02-18T24:00:00Z", "2026-02-18T23:60:00Z", "2026-02-18T23:59:61Z",
            "2026-02-18T05:00:00+24:00", "2026-02-18T05:00:00+05:60", "2026-02-18T05:00:00+0500",
            "2026-02-18T05:00:00+05", "2026-02-18T05:00:00+5:00", "2026-02-18T05:00:00", "2026-02-18T05:00:00 Z",
            "2026-02-18T05:00:00Z ", " 2026-02-18T05:00:00Z", "2026-02-18T05:00:00ZZ", "2026-02-18T05:00Z",
            "2026-2-18T05:00:00Z", "26-02-18T05:00:00Z", "2026/02/18T05:00:00Z", "2026-02-18_05:00:00Z",
            "2026-02-18T05-00-00Z", "2026-02-18", "", "Z", "2026-02-18T05:00:00UTC", "2026-02-18T05:00:00+05:00Z",
            "\u{FF12}026-02-18T05:00:00Z", "2026-02-1８T05:00:00Z", "-026-02-18T05:00:00Z", "2026-02-18T05:00:-1Z",
        ] {
            #expect(Self.parse(bad) == nil, "\(bad)")
        }
        for good in ["2026-01-01T00:00:00Z", "2026-12-31T23:59:59Z", "2026-04-30T12:34:56Z"] {
            #expect(Self.parse(good) != nil, "\(good)")
        }
    }

    /// RFC 3339 allows second 60 (a leap second); it is read as the first second of the next minute.
    @Test func leapSecond() {
        #expect(Self.parse("2016-12-31T23:59:60Z") == Self.parse("2017-01-01T00:00:00Z"))
    }

    @Test func formatsUTCWithOptionalMilliseconds() {
        #expect(Timestamp(seconds: Self.reference).rfc3339() == "2026-02-18T05:00:00Z")
        #expect(Timestamp(seconds: Self.reference).rfc3339(milliseconds: true) == "2026-02-18T05:00:00.000Z")
        #expect(Timestamp(seconds: Self.reference, nanoseconds: 250_000_000).rfc3339() == "2026-02-18T05:00:00.250Z")
        #expect(Timestamp(seconds: Self.reference, nanoseconds: 1_000_000).rfc3339() == "2026-02-18T05:00:00.001Z")
        // Milliseconds are truncated, and sub-millisecond parts alone are not shown.
        #expect(Timestamp(seconds: Self.reference, nanoseconds: 999_999_999).rfc3339() == "2026-02-18T05:00:00.999Z")
        #expect(Timestamp(seconds: Self.reference, nanoseconds: 999_999).rfc3339() == "2026-02-18T05:00:00Z")
        #expect(Timestamp(seconds: Self.reference, nanoseconds: 999_999).rfc3339(milliseconds: true) == "2026-02-18T05:00:00.000Z")
        #expect(Timestamp(seconds: 0).rfc3339() == "1970-01-01T00:00:00Z")
        #expect(Timestamp(seconds: 253_402_300_799).rfc3339() == "9999-12-31T23:59:59Z")
        #expect(Timestamp(seconds: 951_782_400).rfc3339() == "2000-02-29T00:00:00Z")
    }

    @Test func offsetInputsFormatAsUTC() {
        #expect(Self.parse("2026-02-18T00:00:00.123-05:00")?.rfc3339() == "2026-02-18T05:00:00.123Z")
        #expect(Self.parse("2026-01-01T01:30:00+02:00")?.rfc3339() == "2025-12-31T23:30:00Z")
        #expect(Self.parse("2024-02-28T22:00:00-03:00")?.rfc3339() == "2024-02-29T01:00:00Z")
    }

    /// Every second from year 1 to 9999 formats to text that parses back to the same instant.
    @Test func roundTripsThroughText() {
        var rng = SplitMix64(seed: 3339)
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: -62_135_596_800...253_402_300_799, using: &rng)
            let millis = Int32.random(in: 0..<1000, using: &rng)
            let t = Timestamp(seconds: seconds, nanoseconds: millis * 1_000_000)
            let text = t.rfc3339()
            #expect(Self.parse(text) == t, "\(seconds) \(millis) -> \(text)")
            #expect(Self.parse(t.rfc3339(milliseconds: true)) == t)
        }
    }

    /// Formatting agrees with Foundation's calendar arithmetic (an independent implementation).
    @Test func agreesWithFoundation() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var rng = SplitMix64(seed: 1970)
        for _ in 0..<2_000 {
            // 1583 onwards: Foundation's Gregorian calendar is Julian before October 1582.
            let seconds = Int64.random(in: -12_212_553_600...253_402_300_799, using: &rng)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
            #expect(Timestamp(seconds: seconds).rfc3339() == expected, "\(seconds)")
        }
    }

    @Test func ordering() {
        let a = Self.parse("2026-02-18T05:00:00.000000001Z")!
        let b = Self.parse("2026-02-18T05:00:00.000000002Z")!
        let c = Self.parse("2026-02-18T00:00:01-05:00")!
        #expect(a < b)
        #expect(b < c)
        #expect(Timestamp(seconds: -1, nanoseconds: 999_999_999) < Timestamp(seconds: 0))
    }

    // MARK: - The forms exporters write

    static func export(_ s: String) -> Timestamp? { Timestamp.parseExportText(Array(s.utf8)) }

    /// BigQuery's `YYYY-MM-DD HH:MM:SS[.ffffff] UTC`, at the edges of every field.
    @Test func bigQueryText() {
        let reference = Timestamp(seconds: Self.reference)
        #expect(Self.export("2026-02-18 05:00:00 UTC") == reference)
        #expect(Self.export("2026-02-18 05:00:00.000000 UTC") == reference)
        #expect(Self.export("2026-02-18 05:00:00.123456 UTC") == Timestamp(seconds: Self.reference, nanoseconds: 123_456_000))
        #expect(Self.export("2026-02-18 05:00:00.1 UTC") == Timestamp(seconds: Self.reference, nanoseconds: 100_000_000))
        #expect(Self.export("2026-02-18 05:00:00.1234567891 UTC") == Timestamp(seconds: Self.reference, nanoseconds: 123_456_789))
        #expect(Self.export("1970-01-01 00:00:00 UTC") == Timestamp(seconds: 0))
        #expect(Self.export("1969-12-31 23:59:59.999999 UTC") == Timestamp(seconds: -1, nanoseconds: 999_999_000))
        #expect(Self.export("2024-02-29 23:59:59 UTC") == Timestamp(seconds: 1_709_251_199))
        #expect(Self.export("9999-12-31 23:59:59.999999 UTC") == Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_000))
        #expect(Self.export("0001-01-01 00:00:00 UTC") == Timestamp(seconds: -62_135_596_800))
    }

    @Test(arguments: [
        "2026-02-18T05:00:00 UTC",        // BigQuery writes a space, not T
        "2026-02-18 05:00:00 utc",        // the zone's name exactly
        "2026-02-18 05:00:00UTC",
        "2026-02-18 05:00:00  UTC",
        "2026-02-18 05:00:00 UTC ",
        "2026-02-18 05:00:00. UTC",       // a point needs digits
        "2026-02-18 05:00:00Z UTC",       // one zone only
        "2026-02-18 05:00:00+00:00 UTC",
        "2026-02-18 05:00 UTC",           // seconds are required
        "2023-02-29 00:00:00 UTC",        // no such day
        "2026-02-18 24:00:00 UTC",
        "2026-13-01 00:00:00 UTC",
        " UTC", "UTC", "",
    ])
    func notBigQueryText(_ text: String) {
        #expect(Self.export(text) == nil)
    }

    /// RFC 3339 with a space for `T` (its section 5.6 allows it), in records as in options.
    @Test func rfc3339WithASpace() {
        #expect(Self.export("2026-02-18 05:00:00Z") == Timestamp(seconds: Self.reference))
        #expect(Self.export("2026-02-18 00:00:00-05:00") == Timestamp(seconds: Self.reference))
        #expect(Self.export("2026-02-18 05:00:00.000000001z") == Timestamp(seconds: Self.reference, nanoseconds: 1))
        #expect(Self.export("2026-02-18  05:00:00Z") == nil)
        #expect(Self.export("2026-02-18 05:00:00") == nil) // no zone
    }

    /// `--computed-at`, `--as-of` and `--since` stay RFC 3339: BigQuery's text is a record form.
    @Test func optionsTakeRFC3339Only() {
        #expect(Self.parse("2026-02-18 05:00:00 UTC") == nil)
    }
}
