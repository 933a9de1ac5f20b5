/// Target 7: one JSON line, flat or a typed Firestore `Document` (and a short file mixing
/// both), judged by the product and by the reference reading of issue 15 §2. The verdict
/// (blank / malformed / invalid and why / left out / valid) must agree, and for a valid event
/// every detail the counter may ask for: joke id bytes, rating bit for bit, timestamp (absent,
/// unreadable or the instant), device id and event id. The product reads a typed document as
/// `RecordCounter` does, from the spans the scanner captured, through a scanner that has just
/// read a line as the fetch hook writes it (so the line kernel's layout of that line answers
/// wherever the fuzzer's line is laid out alike); that answer must also
/// be the walk's (`TypedDocument.judge(_:)`, the scalar reading that words every verdict). The
/// line sits in a buffer ending exactly at the scanner's padding, garbage in it; it also goes
/// through `RecordCounter` as the aggregator feeds it, and a file through `LineReader` in
/// fuzzer-chosen chunks.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTypedLines(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let payload = input.rest
    if mode & 1 == 0 {
        checkTypedLine(Array(payload.prefix { $0 != 0x0A }), garbage: mode >> 1, input: input.bytes)
    } else {
        checkTypedFile(payload, chunkChoice: mode >> 1, input: input.bytes)
    }
    return 0
}

private let everyField: FieldSet = {
    var set = FieldSet.ratingOnly
    for field in [Field.timestamp, .weekID, .deviceID, .eventID] { set.insert(FieldSet(field)) }
    return set
}()

private func bytes(_ buffer: UnsafeBufferPointer<UInt8>?) -> [UInt8]? { buffer.map { Array($0) } }

/// Asks the decoder for every detail, as the counter would with every option on.
private func event<D: RatingEventDetails & ~Copyable>(id: UnsafeBufferPointer<UInt8>, rating: Double,
                                                      details: inout D) -> RefTyped.Outcome {
    let time: RefTyped.Time = switch details.timestamp() {
    case .absent: .absent
    case .unreadable: .unreadable
    case .at(let t): .at(RefTime.Instant(seconds: t.seconds, nanoseconds: Int64(t.nanoseconds)))
    }
    let id = Array(id)
    let device = bytes(details.deviceID())
    let eventID = bytes(details.eventID())
    return .valid(RefTyped.Event(id: id, rating: rating, time: time, device: device, eventID: eventID))
}

/// A line as the fetch hook writes it (also a seed), read before the fuzzer's line.
let fetchHookLine: [UInt8] = Array(#"{"name":"projects/jokes-app/databases/(default)/documents/rating_events/DA306888-8708-4202-B720-67AE0B7A78CE_LBcw2Dam9tSSPaIh0tG4_2025-W37","fields":{"joke_id":{"stringValue":"LBcw2Dam9tSSPaIh0tG4"},"rating":{"integerValue":"1"},"device_id":{"stringValue":"DA306888-8708-4202-B720-67AE0B7A78CE"},"week_id":{"stringValue":"2025-W37"},"timestamp":{"timestampValue":"2025-09-14T20:27:05.643273Z"}},"createTime":"2025-09-14T20:27:07.766729Z","updateTime":"2025-09-14T20:27:07.766729Z"}"#.utf8)

private func typedOutcome(_ verdict: TypedDocument.Verdict, _ typed: inout TypedDocument) -> RefTyped.Outcome {
    switch verdict {
    case .notDocument: return .invalid("\(InvalidRecord.missingJokeID)")
    case .leftOut: return .leftOut
    case .bad(let why): return .invalid("\(why)")
    case .valid(let id, let rating): return event(id: id, rating: rating, details: &typed)
    }
}

/// The product's answer, from its two decoders in the order `RecordCounter` uses them, and for
/// a typed document, the walk's answer too.
private func productOutcome(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> (RefTyped.Outcome, walk: RefTyped.Outcome?) {
    var validator = RecordValidator(wanted: everyField)
    for _ in 0..<2 { withPaddedLine(fetchHookLine, garbage: 0) { start, _ in _ = validator.judge(start) } }
    switch validator.judge(start) {
    case .blank: return (.blank, nil)
    case .bad(.malformed), .bad(.overlong): return (.malformed, nil)
    case .bad(.unreadableTimestamp(let value)): return (.invalid("unreadableTimestamp(\(value))"), nil)
    case .bad(.invalid(.missingJokeID)):
        let line = UnsafeBufferPointer(start: start, count: end - start)
        var typed = TypedDocument(), walk = TypedDocument()
        let spans = typedOutcome(typed.judge(line, captured: validator.fields), &typed)
        return (spans, typedOutcome(walk.judge(line), &walk))
    case .bad(.invalid(let why)): return (.invalid("\(why)"), nil)
    case .valid(let id, let rating): return (event(id: id, rating: rating, details: &validator), nil)
    }
}

private func checkTypedLine(_ line: [UInt8], garbage: UInt8, input: [UInt8]) {
    let expected = RefTyped.judge(line)
    let (got, walk) = withPaddedLine(line, garbage: garbage) { productOutcome($0, $1) }
    if got != expected { mismatch("typed line", input: input, product: got, reference: expected) }
    if let walk, got != walk { mismatch("typed line from the spans", input: input, product: got, reference: walk) }

    // The same line as the aggregator feeds it: counted, bad or left out.
    let run = RefTyped.run(line)
    let worker = WorkerTally(dedupe: .none)
    var counter = RecordCounter(worker: worker)
    withPaddedLine(line, garbage: garbage) { counter.line($0, $1, number: 1, offset: 0) }
    let jokes = referenceView(of: worker.tally)
    let seen = (jokes, counter.badLines.count, counter.counter.leftOut)
    if jokes != run.jokes || seen.1 != run.badLines.count || seen.2 != run.leftOut {
        mismatch("counted line", input: input, product: seen, reference: run)
    }
}

private func checkTypedFile(_ file: [UInt8], chunkChoice: UInt8, input: [UInt8]) {
    let expected = RefTyped.run(file)
    let chunk = chunkChoice % 4 == 0 ? max(1, file.count) : Int(chunkChoice % 64) + 1
    let readSizes = chunkChoice & 0x40 != 0 ? [1, 3, 2, 7] : []
    var source = MemorySource(data: file, readSizes: readSizes)
    let worker = WorkerTally(dedupe: .none)
    var counter = RecordCounter(worker: worker)
    let reader = LineReader(chunkSize: chunk)
    do { _ = try reader.read(&source, into: &counter) } catch { mismatch("read error", input: input, product: error, reference: "none") }
    let jokes = referenceView(of: worker.tally)
    let bad = counter.badLines.kept.map(\.line)
    if jokes != expected.jokes || counter.counter.leftOut != expected.leftOut || counter.badLines.count != expected.badLines.count
        || bad != Array(expected.badLines.prefix(BadLineLog.shownLimit)) {
        mismatch("file", input: input, product: (jokes, counter.badLines.count, bad, counter.counter.leftOut), reference: expected)
    }
}
