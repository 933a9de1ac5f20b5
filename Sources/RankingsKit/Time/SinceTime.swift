/// The value of `--since`: an RFC 3339 instant, or a span before the run's `computed_at`
/// (`-30d`, `-12h`), so a scheduled monthly board needs no date arithmetic in its config.
///
/// A day is exactly 24 hours: `-30d` across a daylight-saving change is still 720 hours, not
/// 30 calendar days on some zone's clocks.
public enum SinceTime {
    /// The instant `text` names, with a relative form counted back from `computedAt`; nil when
    /// `text` is neither form (or the span is too long to be a time).
    public static func resolve(_ text: String, computedAt: Timestamp) -> Timestamp? {
        if let instant = Timestamp.parseRFC3339(text) { return instant }
        guard let seconds = relativeSeconds(text) else { return nil }
        let (start, overflow) = computedAt.seconds.subtractingReportingOverflow(seconds)
        return overflow ? nil : Timestamp(seconds: start, nanoseconds: computedAt.nanoseconds)
    }

    /// `-<digits>d` or `-<digits>h` as seconds; nothing else (no `+`, no spaces, no fraction,
    /// no other unit), so a typo is a usage error rather than a surprising window.
    static func relativeSeconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 3, b[0] == UInt8(ascii: "-") else { return nil }
        let unit: Int64
        switch b[b.count - 1] {
        case UInt8(ascii: "d"): unit = 86_400
        case UInt8(ascii: "h"): unit = 3_600
        default: return nil
        }
        var n: Int64 = 0
        for c in b[1..<(b.count - 1)] {
            let d = c &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = n.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            n = a
        }
        let (seconds, overflow) = n.multipliedReportingOverflow(by: unit)
        return overflow ? nil : seconds
    }
}
