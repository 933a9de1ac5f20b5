/// Target 1: one NDJSON line (and a short file of lines) judged by the product's scanner and
/// decoder and by the reference reading of the input rules (docs/input-rules.md); every verdict, joke id,
/// rating value and kind must agree. The single line sits in a buffer that ends exactly at
/// the padding the scanner may read, with garbage in that padding; the file goes through
/// `LineReader` in fuzzer-chosen chunk and read sizes, down to a chunk exactly the file's size.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineRules(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let payload = input.rest
    if mode & 1 == 0 {
        checkLine(Array(payload.prefix { $0 != 0x0A }), garbage: mode >> 1, input: input.bytes)
    } else {
        checkFile(payload, chunkChoice: mode >> 1, input: input.bytes)
    }
    return 0
}

private func productVerdict(_ v: RecordValidator.Verdict) -> RefRecord.Verdict {
    switch v {
    case .blank: .blank
    case .bad(.malformed): .malformed
    case .bad(.overlong): .malformed
    case .bad(.invalid(let why)): .invalid("\(why)")
    // Only the counter gives this (an option needs the timestamp): never the validator, so a
    // mismatch if it ever did.
    case .bad(.unreadableTimestamp(let value)): .invalid("unreadableTimestamp(\(value))")
    case .valid(let id, let rating): .valid(id: Array(id), rating: rating)
    }
}

private func checkLine(_ line: [UInt8], garbage: UInt8, input: [UInt8]) {
    let expected = RefRecord.judge(line)
    var validator = RecordValidator()
    let (got, kind, end) = withPaddedLine(line, garbage: garbage) { start, end in
        let verdict = validator.judge(start)
        var kind: RatingKind?
        if case .valid(_, let rating) = verdict { kind = RatingKind(rating) }
        let found = validator.lineEnd(from: start, dataEnd: end, verdict: verdict)
        return (productVerdict(verdict), kind, found - start)
    }
    // Doubles compare by bits: a rating of 5 must be exactly 5.
    var same = got == expected
    if case .valid(let a, let x) = got, case .valid(let b, let y) = expected { same = a == b && x.bitPattern == y.bitPattern }
    if !same { mismatch("line verdict", input: input, product: got, reference: expected) }
    if end != line.count { mismatch("line end", input: input, product: end, reference: line.count) }
    if case .valid(_, let rating) = expected {
        let want: RatingKind = switch RefRecord.kind(rating) {
        case .hilarious: .hilarious
        case .horrible: .horrible
        case .neutral: .neutral
        }
        if kind != want { mismatch("rating kind", input: input, product: kind as Any, reference: want) }
    }
}

private func checkFile(_ file: [UInt8], chunkChoice: UInt8, input: [UInt8]) {
    let expected = RefRecord.run(file)
    // A chunk of exactly the file's size puts the last line's end at the buffer's end.
    let chunk = chunkChoice % 4 == 0 ? max(1, file.count) : Int(chunkChoice % 64) + 1
    let readSizes = chunkChoice & 0x40 != 0 ? [1, 3, 2, 7] : []
    var source = MemorySource(data: file, readSizes: readSizes)
    let worker = WorkerTally(dedupe: .none)
    var counter = RecordCounter(worker: worker)
    let reader = LineReader(chunkSize: chunk)
    let lines: Int
    do { lines = try reader.read(&source, into: &counter) } catch { mismatch("read error", input: input, product: error, reference: "none") }
    let jokes = referenceView(of: worker.tally)
    if jokes != expected.jokes { mismatch("file tally", input: input, product: jokes, reference: expected.jokes) }
    let bad = counter.badLines.kept.map(\.line)
    if counter.badLines.count != expected.badLines.count || bad != Array(expected.badLines.prefix(BadLineLog.shownLimit)) {
        mismatch("bad lines", input: input, product: (counter.badLines.count, bad), reference: expected.badLines)
    }
    let lineCount = RefRecord.lines(of: file).count
    if lines != lineCount { mismatch("line count", input: input, product: lines, reference: lineCount) }
}
