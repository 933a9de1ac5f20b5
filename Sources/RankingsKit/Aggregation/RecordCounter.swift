/// JSON lines, plain or gzip: flat records and typed Firestore documents, mixed as they come.
/// A plain file is cut at any byte (a range owns the lines that start in it); a gzip file or a
/// stream is read whole, inflated or read ahead on a second thread while this one scans.
struct JSONLinesFormat: RecordFileReader {
    init() {}

    var splitUnit: Int64? { 1 }
    var numbersLines: Bool { true }

    func read(_ file: InputFile, descriptor: Int32, from start: Int64, to end: Int64, scratch: RecordScratch,
                     into counter: inout EventCounter, progress: ProgressCounter) throws(InputError) -> (records: Int, bytes: Int64) {
        // A file of a layered folder gets a decoder of its own type, so every other file's
        // lines never ask whether a later layer replaced them.
        if let layer = file.layer {
            return try read(file, descriptor: descriptor, from: start, to: end, scratch: scratch, into: &counter,
                            progress: progress, layer: layer.check)
        }
        return try read(file, descriptor: descriptor, from: start, to: end, scratch: scratch, into: &counter,
                        progress: progress, layer: NoLayer())
    }

    private func read<Layer: LineLayer>(_ file: InputFile, descriptor: Int32, from start: Int64, to end: Int64,
                                        scratch: RecordScratch, into counter: inout EventCounter, progress: ProgressCounter,
                                        layer: Layer) throws(InputError) -> (records: Int, bytes: Int64) {
        // Start one byte early: if that byte ends a line, our first line starts at `start`.
        let from = start == 0 ? 0 : start - 1
        // The counter moves into the decoder for the range and back out, whatever happens.
        var lines = RecordCounter(counter: counter, baseOffset: from, atFileStart: start == 0, layer: layer)
        var read: (records: Int, bytes: Int64)
        do throws(InputError) {
            if file.canSplit {
                var source = DescriptorSource(fd: descriptor, path: file.displayPath, offset: from, progress: progress)
                let range = LineReader.Range(skipFirstLine: start > 0, limit: end == .max ? .max : end - from,
                                             atFileStart: start == 0)
                // Each byte of the file counts once, though ranges read across their ends.
                read = (try scratch.lines.read(&source, range: range, into: &lines), min(end, file.size) - start)
            } else {
                (read.records, read.bytes) = try file.readLines(descriptor: descriptor, with: scratch.lines,
                                                                progress: progress, into: &lines)
            }
            if lines.startsWithArray { throw .jsonArray(path: file.displayPath) }
        } catch {
            counter = lines.counter
            throw error
        }
        counter = lines.counter
        return read
    }
}

/// The JSON-lines decoder: judges each line of one range of input and hands what it finds to
/// the format-neutral `EventCounter`: a flat record's event, a typed Firestore document's
/// event, a document of another collection (left out), or a bad line.
///
/// Flat records are judged first, by the scanner's one pass; a line without a top-level
/// `joke_id` is then a typed document, read from the spans that same pass captured (only an
/// uncommon one is walked again), so neither form pays for the other.
struct RecordCounter<Layer: LineLayer>: LineConsumer, ~Copyable {
    var counter: EventCounter
    var badLines: BadLineLog { counter.badRecords }
    /// Set when the file's first non-blank line opens a JSON array of objects: the file is one
    /// array, not NDJSON, and the run is refused rather than counted as a few bad lines.
    private(set) var startsWithArray = false
    private var validator: RecordValidator
    private var typed = TypedDocument()
    /// Reads a kept bad line again for `--report`; never touched by a good line.
    private var refusals = RefusedLineReader()
    /// Stream offset of this range's first byte, so positions are offsets in the file.
    private let baseOffset: Int64
    /// Whether this range starts at the file's first byte (where an array would open).
    private let atFileStart: Bool
    /// Blank lines seen so far, to know which line is the first non-blank one.
    private var blankLines = 0
    /// The file's layer in a layered night folder; `NoLayer` for any other input.
    private let layer: Layer

    init(counter: consuming EventCounter, baseOffset: Int64 = 0, atFileStart: Bool = true, layer: Layer) {
        validator = RecordValidator(wanted: counter.wantedFields)
        self.counter = counter
        self.baseOffset = baseOffset
        self.atFileStart = atFileStart
        self.layer = layer
    }

    /// The scan itself finds where the line ends, so no separate pass looks for the `\n`.
    @inline(__always)
    mutating func line(from start: UnsafePointer<UInt8>, dataEnd: UnsafePointer<UInt8>, final: Bool,
                       number: Int, offset: Int64) -> UnsafePointer<UInt8>? {
        let verdict = validator.judge(start)
        let end = validator.lineEnd(from: start, dataEnd: dataEnd, verdict: verdict)
        // Judged on part of a line: wait for the rest, having done nothing.
        if end == dataEnd && !final { return nil }
        count(verdict, start: start, end: end, number: number, offset: offset)
        return end
    }

    mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
        count(validator.judge(start), start: start, end: end, number: number, offset: offset)
    }

    @inline(__always)
    private mutating func count(_ verdict: RecordValidator.Verdict, start: UnsafePointer<UInt8>,
                                end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
        switch verdict {
        case .valid(let id, let rating):
            if let why = counter.event(id: id, rating: rating, record: number, position: baseOffset + offset,
                                       details: &validator) {
                refuse(why, start: start, end: end, number: number)
            }
        case .blank:
            blankLines &+= 1
        case .bad(let why):
            notFlat(why, start: start, end: end, number: number, offset: offset)
        }
    }

    /// A line that is not a valid flat record: a typed document, the start of an array, or bad.
    /// A document a later layer replaces is none of these: the snapshot does not hold it.
    /// (Only here: a flat record is never replaced, so its hot path never looks.)
    private mutating func notFlat(_ why: BadRecord, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>,
                                  number: Int, offset: Int64) {
        if layer.replaces(start, end) { return counter.replaced(record: number) }
        if atFileStart && number == blankLines + 1 && Self.opensArray(start, end) { startsWithArray = true }
        guard why == .invalid(.missingJokeID) else { return refuse(why, start: start, end: end, number: number) }
        switch typed.judge(UnsafeBufferPointer(start: start, count: end - start), captured: validator.fields) {
        case .notDocument: refuse(why, start: start, end: end, number: number)
        case .leftOut: counter.leftOut(record: number)
        case .bad(let reason): refuse(.invalid(reason), start: start, end: end, number: number)
        case .valid(let id, let rating):
            if let why = counter.event(id: id, rating: rating, record: number, position: baseOffset + offset, details: &typed) {
                refuse(why, start: start, end: end, number: number)
            }
        }
    }

    /// A bad line, with what `--report` names it by when the counter keeps it: read again from
    /// its bytes, so a good line pays nothing for it.
    private mutating func refuse(_ why: BadRecord, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, number: Int) {
        var refused = RefusedRecord.unknown
        if counter.keepsRefusal && RefusedLineReader.isObject(why) {
            refused = refusals.describe(UnsafeBufferPointer(start: start, count: end - start), window: counter.kindWindow)
        }
        counter.bad(record: number, reason: why, refused: refused)
    }

    /// Whether the line opens an array of objects: `[` followed by `{`, or by nothing on this
    /// line (a pretty-printed array). `[]` or `[1]` on a first line stay bad lines.
    private static func opensArray(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        func skipSpace(_ p: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
            var p = p
            while p < end && (p.pointee == 0x20 || p.pointee == 0x09 || p.pointee == 0x0D) { p += 1 }
            return p
        }
        let open = skipSpace(start)
        guard open < end && open.pointee == UInt8(ascii: "[") else { return false }
        let next = skipSpace(open + 1)
        return next == end || next.pointee == UInt8(ascii: "{")
    }

    mutating func overlongLine(number: Int, offset: Int64) {
        counter.bad(record: number, reason: .overlong, refused: .unknown)
    }
}

extension RecordCounter where Layer == NoLayer {
    /// A decoder with its own counter, for one whole stream of lines outside any layered folder.
    init(worker: WorkerTally, selection: EventSelection = EventSelection()) {
        self.init(counter: EventCounter(worker: worker, selection: selection), layer: NoLayer())
    }
}
