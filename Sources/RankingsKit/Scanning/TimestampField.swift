/// Reads an event's `timestamp` in the forms exports carry: an RFC 3339 string, BigQuery's
/// `"2026-02-12 10:00:00.000000 UTC"`, `{"_seconds": N, "_nanoseconds": N}` (firebase-admin's JSON), or `{"seconds": N, "nanoseconds": N}`.
enum TimestampField {
    /// The instant, or nil when the value is none of the readable forms. `raw` is a value the
    /// line scanner already validated, so only the shape is checked here, not JSON syntax.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>, scratch: inout ByteBuffer) -> Timestamp? {
        switch raw[0] {
        case UInt8(ascii: "\""):
            let inner = UnsafeBufferPointer(rebasing: raw[1..<(raw.count - 1)])
            if inner.firstIndex(of: UInt8(ascii: "\\")) == nil { return Timestamp.parseExportText(inner) }
            scratch.removeAll()
            guard JSONString.unescape(inner, into: &scratch, allowLoneSurrogates: false) else { return nil }
            return scratch.withBuffer { Timestamp.parseExportText($0) }
        case UInt8(ascii: "{"):
            return exportForm(raw) ?? decodeObject(raw, scratch: &scratch)
        default:
            return nil
        }
    }

    /// The exact text an export writes, `{"_seconds":N,"_nanoseconds":N}`, read without the
    /// general walk; nil sends anything else (spacing, order, other keys) to `decodeObject`.
    @inline(__always)
    private static func exportForm(_ raw: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        let secondsKey: StaticString = "{\"_seconds\":"
        let nanosKey: StaticString = ",\"_nanoseconds\":"
        var i = secondsKey.utf8CodeUnitCount
        guard raw.count > i + nanosKey.utf8CodeUnitCount + 2,
              equals(UnsafeBufferPointer(rebasing: raw[0..<i]), secondsKey) else { return nil }
        var seconds: Int64 = 0
        let secondsStart = i
        while i < raw.count, raw[i] &- UInt8(ascii: "0") < 10, i - secondsStart < 18 {
            seconds = seconds * 10 + Int64(raw[i] &- UInt8(ascii: "0"))
            i += 1
        }
        let n = nanosKey.utf8CodeUnitCount
        guard i > secondsStart, i + n < raw.count,
              equals(UnsafeBufferPointer(rebasing: raw[i..<(i + n)]), nanosKey) else { return nil }
        i += n
        var nanos: Int64 = 0
        let nanosStart = i
        while i < raw.count, raw[i] &- UInt8(ascii: "0") < 10, i - nanosStart < 9 {
            nanos = nanos * 10 + Int64(raw[i] &- UInt8(ascii: "0"))
            i += 1
        }
        // Leading zeros cannot occur: the scanner rejected them. Anything unusual goes the long way.
        guard i > nanosStart, i == raw.count - 1, raw[i] == UInt8(ascii: "}") else { return nil }
        return Timestamp(seconds: seconds, nanoseconds: Int32(nanos))
    }

    private enum Part { case seconds, nanoseconds, plainSeconds, plainNanoseconds, other }

    private static func decodeObject(_ raw: UnsafeBufferPointer<UInt8>, scratch: inout ByteBuffer) -> Timestamp? {
        // Each part: absent (nil), present but not an Int64 integer (.some(nil)), or its value.
        var parts: (Int64??, Int64??, Int64??, Int64??) = (nil, nil, nil, nil)
        var i = 1
        func skipSpace() { while i < raw.count, raw[i] == 0x20 || raw[i] == 0x09 || raw[i] == 0x0D { i += 1 } }
        while true {
            skipSpace()
            guard i < raw.count else { return nil }
            if raw[i] == UInt8(ascii: "}") { break }
            if raw[i] == UInt8(ascii: ",") { i += 1; continue }
            // A key: the scanner guaranteed a well-formed string here.
            let keyStart = i + 1
            i = endOfString(raw, from: i)
            let key = UnsafeBufferPointer(rebasing: raw[keyStart..<(i - 1)])
            let part = name(key, scratch: &scratch)
            skipSpace()
            i += 1 // ':'
            skipSpace()
            let valueStart = i
            i = endOfValue(raw, from: i)
            if part != .other {
                let value: Int64?? = .some(integer(UnsafeBufferPointer(rebasing: raw[valueStart..<i])))
                switch part {
                case .seconds: parts.0 = value
                case .nanoseconds: parts.1 = value
                case .plainSeconds: parts.2 = value
                case .plainNanoseconds: parts.3 = value
                case .other: break
                }
            }
        }
        let underscored = parts.0 != nil
        guard let secondsValue = underscored ? parts.0 : parts.2, let seconds = secondsValue else { return nil }
        var nanos: Int64 = 0
        if let nanosValue = underscored ? parts.1 : parts.3 {
            guard let n = nanosValue, (0...999_999_999).contains(n) else { return nil }
            nanos = n
        }
        return Timestamp(seconds: seconds, nanoseconds: Int32(nanos))
    }

    private static func name(_ key: UnsafeBufferPointer<UInt8>, scratch: inout ByteBuffer) -> Part {
        func part(_ bytes: UnsafeBufferPointer<UInt8>) -> Part {
            if equals(bytes, "_seconds") { return .seconds }
            if equals(bytes, "_nanoseconds") { return .nanoseconds }
            if equals(bytes, "seconds") { return .plainSeconds }
            if equals(bytes, "nanoseconds") { return .plainNanoseconds }
            return .other
        }
        // Exact bytes decide: a key that merely looks alike after Unicode folding is another key.
        if key.firstIndex(of: UInt8(ascii: "\\")) == nil { return part(key) }
        scratch.removeAll()
        guard JSONString.unescape(key, into: &scratch, allowLoneSurrogates: true) else { return .other }
        return scratch.withBuffer { part($0) }
    }

    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let n = name.utf8Start
        for i in 0..<bytes.count where bytes[i] != n[i] { return false }
        return true
    }

    /// A JSON integer (no fraction, no exponent) that fits in Int64; nil otherwise.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { i = 1 }
        guard i < text.count else { return nil }
        var v: Int64 = 0
        while i < text.count {
            let d = text[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(Int64(d)) : m.addingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            v = a
            i += 1
        }
        return v
    }

    /// Index just past the string that opens at `from`.
    private static func endOfString(_ raw: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from + 1
        while i < raw.count {
            if raw[i] == UInt8(ascii: "\\") { i += 2; continue }
            if raw[i] == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return raw.count
    }

    /// Index just past the (valid) value that starts at `from`.
    private static func endOfValue(_ raw: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        var depth = 0
        while i < raw.count {
            let c = raw[i]
            switch c {
            case UInt8(ascii: "\""):
                i = endOfString(raw, from: i)
                if depth == 0 { return i }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return i }
                depth -= 1
                if depth == 0 { return i + 1 }
            case UInt8(ascii: ","), 0x20, 0x09, 0x0D:
                if depth == 0 { return i }
            default:
                break
            }
            i += 1
        }
        return i
    }
}
