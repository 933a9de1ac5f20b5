/// The timestamp rules of docs/aggregate.md ("Backfill"), read literally: RFC 3339
/// (`T`/`t`/space, `Z`/`z`/`±HH:MM`, any number of fraction digits, beyond nine ignored),
/// BigQuery's `YYYY-MM-DD HH:MM:SS[.f…] UTC` in a record, and the two `{seconds, nanoseconds}`
/// forms.
enum RefTime {
    struct Instant: Equatable, Comparable, CustomStringConvertible {
        var seconds: Int64
        var nanoseconds: Int64
        static func < (a: Instant, b: Instant) -> Bool { (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds) }
        var description: String { "\(seconds)s+\(nanoseconds)ns" }
    }

    static let monthLengths: [Int64] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

    static func isLeap(_ y: Int64) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    /// Days from 0000-01-01 to the first day of `year` (year >= 0): 365 a year plus one per
    /// leap year before it (years 0, 4, 8… except centuries not divisible by 400).
    static func daysBefore(year y: Int64) -> Int64 {
        func ceilDiv(_ a: Int64, _ b: Int64) -> Int64 { (a + b - 1) / b }
        return 365 * y + ceilDiv(y, 4) - ceilDiv(y, 100) + ceilDiv(y, 400)
    }

    static func epochDays(year: Int64, month: Int, day: Int64) -> Int64 {
        var days = daysBefore(year: year) - daysBefore(year: 1970)
        for m in 0..<(month - 1) { days += monthLengths[m] + (m == 1 && isLeap(year) ? 1 : 0) }
        return days + day - 1
    }

    static func rfc3339(_ text: [UInt8]) -> Instant? {
        // The shape first, byte by byte: D digit, anything else literal (T and Z are checked below).
        let shape = Array("DDDD-DD-DD?DD:DD:DD".utf8)
        guard text.count > shape.count else { return nil }
        for (k, s) in shape.enumerated() {
            let c = text[k]
            switch s {
            case UInt8(ascii: "D"): guard c >= 0x30 && c <= 0x39 else { return nil }
            case UInt8(ascii: "?"): guard c == UInt8(ascii: "T") || c == UInt8(ascii: "t") || c == UInt8(ascii: " ") else { return nil }
            default: guard c == s else { return nil }
            }
        }
        func number(_ r: Range<Int>) -> Int64 { Int64(String(decoding: text[r], as: UTF8.self))! }
        let year = number(0..<4), month = number(5..<7), day = number(8..<10)
        let hour = number(11..<13), minute = number(14..<16), second = number(17..<19)
        guard month >= 1 && month <= 12 else { return nil }
        let monthLength = monthLengths[Int(month) - 1] + (month == 2 && isLeap(year) ? 1 : 0)
        guard day >= 1 && day <= monthLength, hour < 24, minute < 60, second <= 60 else { return nil }
        var rest = Array(text[19...])
        var nanos: Int64 = 0
        if rest.first == UInt8(ascii: ".") {
            let digits = Array(rest.dropFirst().prefix { $0 >= 0x30 && $0 <= 0x39 })
            guard !digits.isEmpty else { return nil }
            let nine = (digits.prefix(9) + Array(repeating: UInt8(ascii: "0"), count: 9)).prefix(9)
            nanos = Int64(String(decoding: nine, as: UTF8.self))!
            rest = Array(rest.dropFirst(1 + digits.count))
        }
        var offset: Int64
        if rest == Array("Z".utf8) || rest == Array("z".utf8) {
            offset = 0
        } else {
            guard rest.count == 6, rest[0] == UInt8(ascii: "+") || rest[0] == UInt8(ascii: "-"), rest[3] == UInt8(ascii: ":"),
                  [1, 2, 4, 5].allSatisfy({ rest[$0] >= 0x30 && rest[$0] <= 0x39 }) else { return nil }
            let oh = Int64(rest[1] - 0x30) * 10 + Int64(rest[2] - 0x30)
            let om = Int64(rest[4] - 0x30) * 10 + Int64(rest[5] - 0x30)
            guard oh < 24, om < 60 else { return nil }
            offset = (oh * 3600 + om * 60) * (rest[0] == UInt8(ascii: "-") ? -1 : 1)
        }
        let seconds = epochDays(year: year, month: Int(month), day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Instant(seconds: seconds, nanoseconds: nanos)
    }

    /// BigQuery's text: the RFC 3339 shape with a space for `T`, no zone, then ` UTC`.
    static func bigQuery(_ text: [UInt8]) -> Instant? {
        let suffix = Array(" UTC".utf8)
        guard text.count >= 19 + suffix.count, text[10] == UInt8(ascii: " "), Array(text.suffix(4)) == suffix else { return nil }
        let body = Array(text.dropLast(4))
        // Seconds or a fraction must end the body: "…:00+00:00 UTC" carries two zones.
        guard let last = body.last, last >= 0x30 && last <= 0x39 else { return nil }
        return rfc3339(body + Array("Z".utf8))
    }

    /// A JSON integer (no fraction or exponent) that fits in 64 bits.
    static func integer(_ value: RefJSON.Value) -> Int64? {
        guard case .number(let text) = value,
              !text.contains(UInt8(ascii: ".")), !text.contains(UInt8(ascii: "e")), !text.contains(UInt8(ascii: "E"))
        else { return nil }
        return Int64(String(decoding: text, as: UTF8.self))
    }

    /// The instant a `timestamp` value stands for, or nil when it is none of the readable forms.
    static func timestamp(_ value: RefJSON.Value) -> Instant? {
        switch value {
        case .string(let s):
            return s.hasLoneSurrogate ? nil : rfc3339(s.bytes) ?? bigQuery(s.bytes)
        case .object(let members):
            func last(_ name: String) -> RefJSON.Member? { RefRecord.field(members, name) }
            // `_seconds` is used when present, and then only `_nanoseconds` goes with it.
            let (secondsKey, nanosKey) = last("_seconds") != nil ? ("_seconds", "_nanoseconds") : ("seconds", "nanoseconds")
            guard let s = last(secondsKey), let seconds = integer(s.value) else { return nil }
            guard let n = last(nanosKey) else { return Instant(seconds: seconds, nanoseconds: 0) }
            guard let nanos = integer(n.value), nanos >= 0 && nanos <= 999_999_999 else { return nil }
            return Instant(seconds: seconds, nanoseconds: nanos)
        default:
            return nil
        }
    }
}
