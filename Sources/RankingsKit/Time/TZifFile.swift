/// The UTC offsets of one zone through time, read from a compiled TZif file (RFC 8536,
/// versions 1 to 4), as `zic` writes them under /usr/share/zoneinfo.
///
/// Only the total offset matters for week bounds, so abbreviations and the standard/daylight
/// flags are not kept. Files with leap-second records (the `right/` zones) count time on a
/// different scale and are refused.
struct TZifFile: Sendable, Equatable {
    /// Instants where the offset changes, ascending.
    var transitions: [Int64]
    /// The offset from `transitions[i]` on.
    var offsets: [Int32]
    /// The offset before the first transition.
    var initialOffset: Int32
    /// The footer's rule, for instants after the last transition (version 2 and later).
    var footer: PosixTZRule?

    /// Nil unless `bytes` is a well-formed TZif file without leap seconds.
    init?(_ bytes: [UInt8]) {
        guard let v1 = Header(bytes, at: 0) else { return nil }
        var block = v1
        var timeSize = 4
        if v1.version >= 2 {
            // The 64-bit block follows the 32-bit one, which is only for old readers.
            guard let v2 = Header(bytes, at: v1.end(timeSize: 4)) else { return nil }
            block = v2
            timeSize = 8
        }
        guard block.leapCount == 0 else { return nil }
        var p = block.dataStart
        func integer(_ size: Int) -> Int64 {
            var v: UInt64 = 0
            for k in 0..<size { v = v << 8 | UInt64(bytes[p + k]) }
            p += size
            // Sign-extend from `size` bytes.
            return Int64(bitPattern: v << UInt64(64 - 8 * size)) >> Int64(64 - 8 * size)
        }
        let end = block.end(timeSize: timeSize)
        guard end <= bytes.count else { return nil }
        let times = (0..<block.timeCount).map { _ in integer(timeSize) }
        let indices = (0..<block.timeCount).map { _ in Int(integer(1) & 0xFF) }
        var typeOffsets: [Int32] = []
        for _ in 0..<block.typeCount {
            let utoff = integer(4)
            p += 2 // isdst, desigidx
            // RFC 8536: -2^31 is not a valid offset; anything else within a day or so is.
            guard utoff > Int64(Int32.min), abs(utoff) < 26 * 3600 else { return nil }
            typeOffsets.append(Int32(utoff))
        }
        guard indices.allSatisfy({ $0 < block.typeCount }), zip(times, times.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        transitions = times
        offsets = indices.map { typeOffsets[$0] }
        initialOffset = typeOffsets[0]
        footer = nil

        if v1.version >= 2 {
            // "\n" rule "\n"; an empty rule says nothing about later instants.
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\n"),
                  let close = bytes[(end + 1)...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            if close > end + 1 {
                guard let rule = PosixTZRule(String(decoding: bytes[(end + 1)..<close], as: UTF8.self)) else { return nil }
                footer = rule
            }
        }
    }

    /// A zone that has always had one offset.
    init(utcOffset: Int32) {
        transitions = []
        offsets = []
        initialOffset = utcOffset
        footer = nil
    }

    /// Seconds east of UTC that the clocks show at `instant` (seconds since 1970-01-01Z).
    func secondsFromUTC(at instant: Int64) -> Int {
        guard let last = transitions.last else { return footer?.secondsFromUTC(at: instant) ?? Int(initialOffset) }
        if instant < transitions[0] { return Int(initialOffset) }
        if instant > last, let footer { return footer.secondsFromUTC(at: instant) }
        // The last transition at or before the instant.
        var low = 0, high = transitions.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if transitions[mid] <= instant { low = mid } else { high = mid - 1 }
        }
        return Int(offsets[low])
    }

    /// The 44-byte header that starts each data block.
    private struct Header {
        var version: Int
        var dataStart: Int
        var utIndicatorCount: Int
        var standardIndicatorCount: Int
        var leapCount: Int
        var timeCount: Int
        var typeCount: Int
        var charCount: Int

        init?(_ bytes: [UInt8], at start: Int) {
            guard start + 44 <= bytes.count, Array(bytes[start..<(start + 4)]) == Array("TZif".utf8) else { return nil }
            switch bytes[start + 4] {
            case 0: version = 1
            case UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"): version = Int(bytes[start + 4] - UInt8(ascii: "0"))
            default: return nil
            }
            func count(_ k: Int) -> Int {
                let at = start + 20 + 4 * k
                return Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            }
            (utIndicatorCount, standardIndicatorCount, leapCount) = (count(0), count(1), count(2))
            (timeCount, typeCount, charCount) = (count(3), count(4), count(5))
            dataStart = start + 44
            guard typeCount >= 1, typeCount <= 256, charCount >= 1,
                  utIndicatorCount == 0 || utIndicatorCount == typeCount,
                  standardIndicatorCount == 0 || standardIndicatorCount == typeCount else { return nil }
        }

        func end(timeSize: Int) -> Int {
            dataStart + timeCount * (timeSize + 1) + typeCount * 6 + charCount
                + leapCount * (timeSize + 4) + standardIndicatorCount + utIndicatorCount
        }
    }
}
