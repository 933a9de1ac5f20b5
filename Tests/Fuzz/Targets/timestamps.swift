/// Target 3: timestamps. An RFC 3339 text as `--as-of` reads it, and a `timestamp` value in a
/// record (string or object form, or a whole fuzzed line) as the scanner and decoder read it,
/// must give the reference's instant; then a run with `--as-of` near that instant must count,
/// filter out, or reject the line exactly as docs/aggregate.md ("Backfill") says.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimestamps(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let nudge = input.byte()
    let payload = input.rest
    switch mode % 3 {
    case 0:
        let got = Timestamp.parseRFC3339(payload).map { RefTime.Instant(seconds: $0.seconds, nanoseconds: Int64($0.nanoseconds)) }
        let want = RefTime.rfc3339(payload)
        if got != want { mismatch("RFC 3339", input: input.bytes, product: got as Any, reference: want as Any) }
    case 1:
        let line = Array("{\"joke_id\":\"j\",\"rating\":5,\"timestamp\":".utf8) + payload + Array("}".utf8)
        checkRecord(Array(line.prefix { $0 != 0x0A }), nudge: nudge, input: input.bytes)
    default:
        checkRecord(Array(payload.prefix { $0 != 0x0A }), nudge: nudge, input: input.bytes)
    }
    return 0
}

private func checkRecord(_ line: [UInt8], nudge: UInt8, input: [UInt8]) {
    guard case .valid = RefRecord.judge(line), case .object(let members)? = RefJSON.parse(line) else { return }
    let field = RefRecord.field(members, "timestamp")
    let want = field.flatMap { RefTime.timestamp($0.value) }

    // The decoder on its own.
    var validator = RecordValidator(wanted: [FieldSet(.timestamp)])
    let got: RefTime.Instant?? = withPaddedLine(line, garbage: nudge) { start, _ in
        guard case .valid = validator.judge(start) else { return .some(RefTime.Instant(seconds: -1, nanoseconds: -1)) }
        guard let t = validator.timestamp() else { return nil }
        return .some(t.map { RefTime.Instant(seconds: $0.seconds, nanoseconds: Int64($0.nanoseconds)) })
    }
    let wantOuter: RefTime.Instant?? = field == nil ? nil : .some(want)
    if got != wantOuter { mismatch("timestamp field", input: input, product: got as Any, reference: wantOuter as Any) }

    // The --as-of decision, with the cut-off at, just before or just after the event.
    let base = want ?? RefTime.Instant(seconds: Int64(Int8(bitPattern: nudge)) * 1_000_000, nanoseconds: 0)
    // One second either side of the event; at the very ends of the range only the event itself.
    var cut = base
    let roomy = base.seconds > Int64.min + 1 && base.seconds < Int64.max - 1
    switch roomy ? nudge % 5 : 0 {
    case 0: break
    case 1: if cut.nanoseconds > 0 { cut.nanoseconds -= 1 } else { cut.nanoseconds = 999_999_999; cut.seconds = cut.seconds &- 1 }
    case 2: if cut.nanoseconds < 999_999_999 { cut.nanoseconds += 1 } else { cut.nanoseconds = 0; cut.seconds = cut.seconds &+ 1 }
    case 3: cut.seconds = cut.seconds &- 1
    default: cut.seconds = cut.seconds &+ 1
    }
    let cutSeconds = cut.seconds
    var selection = EventSelection()
    selection.asOf = Timestamp(seconds: cutSeconds, nanoseconds: Int32(cut.nanoseconds))
    let worker = WorkerTally(dedupe: .none)
    var counter = RecordCounter(worker: worker, selection: selection)
    withPaddedLine(line, garbage: nudge) { start, end in counter.line(start, end, number: 1, offset: 0) }
    let product = (bad: counter.badLines.count, counted: worker.tally.totals.ratings, filtered: worker.filteredOut)
    let expected: (bad: Int, counted: Int, filtered: Int) =
        want == nil ? (1, 0, 0) : want! <= cut ? (0, 1, 0) : (0, 0, 1)
    if product != expected { mismatch("--as-of decision (cut \(cut))", input: input, product: product, reference: expected) }
}
