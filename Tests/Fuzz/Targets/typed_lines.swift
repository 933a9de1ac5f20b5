/// Target 7: one JSON line, flat or a typed Firestore `Document` (and a short file mixing
/// both), judged by the product and by the reference reading of issue 15 §2. The verdict
/// (blank / malformed / invalid and why / left out / valid) must agree, and for a valid event
/// every detail the counter may ask for: joke id bytes, rating bit for bit, timestamp (absent,
/// unreadable or the instant), device id and event id. The line sits in a buffer ending
/// exactly at the scanner's padding, garbage in it; it also goes through `RecordCounter` as
/// the aggregator feeds it, and a file through `LineReader` in fuzzer-chosen chunks.

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

/// The product's answer, from its two decoders in the order `RecordCounter` uses them.
private func productOutcome(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> RefTyped.Outcome {
    var validator = RecordValidator(wanted: everyField)
    switch validator.judge(start) {
    case .blank: return .blank
    case .bad(.malformed), .bad(.overlong): return .malformed
    case .bad(.unreadableTimestamp(let value)): return .invalid("unreadableTimestamp(\(value))")
    case .bad(.invalid(.missingJokeID)):
        var typed = TypedDocument()
        switch typed.judge(UnsafeBufferPointer(start: start, count: end - start)) {
        case .notDocument: return .invalid("\(InvalidRecord.missingJokeID)")
        case .leftOut: return .leftOut
        case .bad(let why): return .invalid("\(why)")
        case .valid(let id, let rating): return event(id: id, rating: rating, details: &typed)
        }
    case .bad(.invalid(let why)): return .invalid("\(why)")
    case .valid(let id, let rating): return event(id: id, rating: rating, details: &validator)
    }
}

private func checkTypedLine(_ line: [UInt8], garbage: UInt8, input: [UInt8]) {
    let expected = RefTyped.judge(line)
    let got = withPaddedLine(line, garbage: garbage) { productOutcome($0, $1) }
    if got != expected { mismatch("typed line", input: input, product: got, reference: expected) }

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
    let bad = counter.badLines.first.map(\.line)
    if jokes != expected.jokes || counter.counter.leftOut != expected.leftOut || counter.badLines.count != expected.badLines.count
        || bad != Array(expected.badLines.prefix(BadLineLog.shownLimit)) {
        mismatch("file", input: input, product: (jokes, counter.badLines.count, bad, counter.counter.leftOut), reference: expected)
    }
}
