/// An instant, as seconds and nanoseconds since 1970-01-01T00:00:00Z. Comparable, so
/// `--as-of` and "latest vote wins" compare exactly, without floating point.
public struct Timestamp: Sendable, Hashable, Comparable {
    var seconds: Int64
    /// 0...999_999_999
    var nanoseconds: Int32

    init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.seconds != b.seconds ? a.seconds < b.seconds : a.nanoseconds < b.nanoseconds
    }

    /// 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z: what a Firestore Timestamp (and
    /// a four-digit RFC 3339 year) can hold.
    static let firestoreRange = Timestamp(seconds: -62_135_596_800)...Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_999)

    /// Whole-second UTC form, with milliseconds (truncated) when they are not zero or when
    /// `milliseconds` asks for them: `2026-02-18T05:00:00Z`, `2026-02-18T05:00:00.250Z`.
    public func rfc3339(milliseconds: Bool = false) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = CivilDate.fromDays(days)
        var s = pad(y, 4) + "-" + pad(Int64(m), 2) + "-" + pad(Int64(d), 2)
        s += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        let millis = Int64(nanoseconds / 1_000_000)
        if milliseconds || millis != 0 { s += "." + pad(millis, 3) }
        return s + "Z"
    }

    private func pad(_ n: Int64, _ width: Int) -> String {
        let digits = String(n)
        return n < 0 ? digits : String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Parses RFC 3339 (`2026-02-18T00:00:00-05:00`, `…Z`, `…t…z`, fractions of any length,
    /// a space in place of `T` as RFC 3339 allows). Nil when it is not a valid date and time.
    static func parseRFC3339<C: Collection>(_ text: C) -> Timestamp? where C.Element == UInt8 {
        let b = Array(text)
        func digits(_ at: Int, _ count: Int) -> Int64? {
            guard at + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in at..<(at + count) {
                let d = b[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                v = v * 10 + Int64(d)
            }
            return v
        }
        guard b.count >= 20,
              let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
              let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2),
              b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
              let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
              let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(year: year, month: Int(month)),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let fracStart = i
            while i < b.count, b[i] &- UInt8(ascii: "0") < 10 {
                if i - fracStart < 9 { nanos = nanos * 10 + Int64(b[i] - UInt8(ascii: "0")) }
                i += 1
            }
            guard i > fracStart else { return nil }
            for _ in min(i - fracStart, 9)..<9 { nanos *= 10 }
        }
        guard i < b.count else { return nil }
        var offset: Int64 = 0
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"),
                  let om = digits(i + 4, 2), oh <= 23, om <= 59 else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = CivilDate.toDays(year: year, month: Int(month), day: Int(day))
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        return Timestamp(seconds: local - offset, nanoseconds: Int32(nanos))
    }

    public static func parseRFC3339(_ text: String) -> Timestamp? { parseRFC3339(Array(text.utf8)) }

    /// An event's `timestamp` string in the forms exporters write: RFC 3339 (as
    /// `parseRFC3339`), or BigQuery's `YYYY-MM-DD HH:MM:SS[.ffffff] UTC` (a space between date
    /// and time, any number of fraction digits, then exactly ` UTC`).
    static func parseExportText<C: Collection>(_ text: C) -> Timestamp? where C.Element == UInt8 {
        if let t = parseRFC3339(text) { return t }
        let suffix: [UInt8] = Array(" UTC".utf8)
        var b = Array(text)
        guard b.count >= 19 + suffix.count, b[10] == UInt8(ascii: " "), b.suffix(suffix.count).elementsEqual(suffix)
        else { return nil }
        // Without the suffix, the rest must be RFC 3339 with nothing after the seconds or their
        // fraction: a zone there as well (`+00:00 UTC`) is not the form.
        b.removeLast(suffix.count)
        guard let last = b.last, last &- UInt8(ascii: "0") < 10 else { return nil }
        b.append(UInt8(ascii: "Z"))
        return parseRFC3339(b)
    }
}

/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01).
enum CivilDate {
    static func isLeap(_ y: Int64) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    static func daysIn(year: Int64, month: Int) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Counts in 400-year eras starting on March 1st, which puts the leap day last.
    static func toDays(year: Int64, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func fromDays(_ days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
