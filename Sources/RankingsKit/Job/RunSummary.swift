/// The numbers a run reports: on stderr as one line, and with `--report` as JSON.
public struct RunSummary: Sendable, Equatable {
    public var validEvents = 0
    public var hilarious = 0
    public var horrible = 0
    public var neutral = 0
    public var badLines = 0
    public var distinctJokes = 0
    public var inputBytes: Int64 = 0
    public var seconds = 0.0
    /// 0 when the document was written, 65 when the data was rejected.
    public var exitStatus: Int32 = 0

    public init() {}

    public var line: String {
        "rankings: \(validEvents) events (\(hilarious) hilarious, \(horrible) horrible, \(neutral) neutral), "
            + "\(badLines) bad lines, \(distinctJokes) jokes, \(inputBytes) bytes in \(String(format3(seconds))) s"
    }

    public func reportJSON() -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\n")
        let fields: [(String, String)] = [
            ("valid_events", String(validEvents)), ("hilarious", String(hilarious)),
            ("horrible", String(horrible)), ("neutral", String(neutral)), ("bad_lines", String(badLines)),
            ("distinct_jokes", String(distinctJokes)), ("input_bytes", String(inputBytes)),
            ("seconds", format3(seconds)), ("exit_status", String(exitStatus)),
        ]
        for (i, (key, value)) in fields.enumerated() {
            w.raw("  ")
            w.string(key)
            w.raw(": " + value + (i + 1 < fields.count ? ",\n" : "\n"))
        }
        w.raw("}\n")
        return w.bytes
    }
}

/// Seconds with three decimals, without Foundation's locale-dependent formatting.
func format3(_ x: Double) -> String {
    let millis = Int64((max(x, 0) * 1000).rounded())
    let frac = String(millis % 1000)
    return "\(millis / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
}
