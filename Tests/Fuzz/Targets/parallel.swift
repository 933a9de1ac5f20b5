/// Target 6: parallel equivalence. A fuzzed file, cut into pieces of a fuzzer-chosen size,
/// read in chunks of a fuzzer-chosen size by up to four threads whose own tables hold a
/// fuzzer-chosen few keys, with or without `--as-of` and `--dedupe`, must give exactly what
/// one thread reading it whole gives: the same tally, the same counts of events, the same
/// bad-line count and the same first bad lines, or the same refusal (a file that opens with
/// `[` is a JSON array, refused whole). Without options, one thread must also agree with the
/// reference.

private struct Outcome: Equatable {
    /// The refusal, when the run refused the file; then every other field is empty.
    var refusal: String?
    var jokes: [[UInt8]: RefRecord.Counts]
    var badLineCount: Int
    var firstBadLines: [String]
    var validEvents: Int
    var filteredOut: Int
    var duplicatesRemoved: Int
}

private func run(_ file: InputFile, threads: Int, selection: EventSelection, pieceSize: Int64?, chunkSize: Int,
                 bound: TableBound = .worker) -> Outcome {
    let result: AggregationResult
    do {
        result = try Aggregator.run([file], threads: threads, selection: selection, pieceSize: pieceSize,
                                    chunkSize: chunkSize, workerBound: bound)
    } catch .jsonArray(let path) {
        return Outcome(refusal: "jsonArray(\(path))", jokes: [:], badLineCount: 0, firstBadLines: [], validEvents: 0,
                       filteredOut: 0, duplicatesRemoved: 0)
    } catch {
        fatalError("reading a regular file failed: \(error)")
    }
    return Outcome(refusal: nil, jokes: referenceView(of: result.tally), badLineCount: result.badLineCount,
                   firstBadLines: result.firstBadLines.map { "\($0.path):\($0.line.line): \($0.line.reason)" },
                   validEvents: result.validEvents, filteredOut: result.filteredOut,
                   duplicatesRemoved: result.duplicatesRemoved)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParallel(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let threads = Int(input.byte() % 4) + 1
    let pieceChoice = input.byte(), chunkChoice = input.byte(), options = input.byte()
    let bytes = input.rest
    let fd = ScratchFile.holding(bytes)
    let file = InputFile(displayPath: "f", origin: .descriptor(fd), compression: .none, size: Int64(bytes.count))

    var selection = EventSelection()
    switch options % 4 {
    case 1: selection.dedupe = .device
    case 2: selection.dedupe = .eventID
    case 3: selection.asOf = Timestamp(seconds: 1_750_000_000 + Int64(options) * 100_000)
    default: break
    }
    // Mostly tiny pieces (split points inside lines and at chunk edges), sometimes large ones.
    let pieceSize = Int64(pieceChoice) * Int64(pieceChoice) / 16 + 1
    let chunkSize = Int(chunkChoice % 48) + 1
    // Mostly worker tables bounded to 1-7 keys, so they are emptied into the shared one after
    // every few events, mid-piece; sometimes the shipped bound.
    let boundChoice = Int(options >> 2) % 8
    let bound = boundChoice == 0 ? TableBound.worker : TableBound(keys: boundChoice, keyBytes: boundChoice * 16)

    // One thread, one piece, a chunk larger than any fuzzed file: the plainest reading.
    let one = run(file, threads: 1, selection: selection, pieceSize: nil, chunkSize: 16 << 10)
    let many = run(file, threads: threads, selection: selection, pieceSize: pieceSize, chunkSize: chunkSize, bound: bound)
    if many != one {
        mismatch("\(threads) threads, pieces \(pieceSize), chunk \(chunkSize), worker bound \(bound.keys) keys",
                 input: input.bytes, product: many, reference: one)
    }

    // The reference reads lines, not files: it has no notion of a file that is one array.
    if options % 4 == 0 && one.refusal == nil {
        let expected = RefRecord.run(bytes)
        let reference = (expected.jokes, expected.badLines.count, Array(expected.badLines.prefix(BadLineLog.shownLimit)))
        let product = (one.jokes, one.badLineCount, one.firstBadLines.map { Int($0.split(separator: ":")[1])! })
        if product != reference { mismatch("one thread against the reference", input: input.bytes, product: product, reference: reference) }
    }
    return 0
}
