/// The JSON-lines decoder: judges each line of one piece of input and hands what it finds to
/// the format-neutral `EventCounter`: a flat record's event, a typed Firestore document's
/// event, a document of another collection (left out), or a bad line.
///
/// Flat records are judged first, by the scanner's one pass; a line without a top-level
/// `joke_id` is then a typed document, read from the spans that same pass captured (only an
/// uncommon one is walked again), so neither form pays for the other.
struct RecordCounter: LineConsumer, ~Copyable {
    var counter: EventCounter
    var badLines: BadLineLog { counter.badRecords }
    /// Set when the file's first non-blank line opens a JSON array of objects: the file is one
    /// array, not NDJSON, and the run is refused rather than counted as a few bad lines.
    private(set) var startsWithArray = false
    private var validator: RecordValidator
    private var typed = TypedDocument()
    /// Stream offset of this piece's first byte, so positions are offsets in the file.
    private let baseOffset: Int64
    /// Whether this piece starts at the file's first byte (where an array would open).
    private let atFileStart: Bool
    /// Blank lines seen so far, to know which line is the first non-blank one.
    private var blankLines = 0

    init(worker: WorkerTally, selection: EventSelection = EventSelection(), file: Int = 0, baseOffset: Int64 = 0,
         atFileStart: Bool = true) {
        counter = EventCounter(worker: worker, selection: selection, file: file)
        validator = RecordValidator(wanted: selection.wantedFields)
        self.baseOffset = baseOffset
        self.atFileStart = atFileStart
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
            counter.event(id: id, rating: rating, record: number, position: baseOffset + offset, details: &validator)
        case .blank:
            blankLines &+= 1
        case .bad(let why):
            notFlat(why, start: start, end: end, number: number, offset: offset)
        }
    }

    /// A line that is not a valid flat record: a typed document, the start of an array, or bad.
    private mutating func notFlat(_ why: BadRecord, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>,
                                  number: Int, offset: Int64) {
        if atFileStart && number == blankLines + 1 && Self.opensArray(start, end) { startsWithArray = true }
        guard why == .invalid(.missingJokeID) else { return counter.bad(record: number, reason: why) }
        switch typed.judge(UnsafeBufferPointer(start: start, count: end - start), captured: validator.fields) {
        case .notDocument: counter.bad(record: number, reason: why)
        case .leftOut: counter.leftOut(record: number)
        case .bad(let reason): counter.bad(record: number, reason: .invalid(reason))
        case .valid(let id, let rating):
            counter.event(id: id, rating: rating, record: number, position: baseOffset + offset, details: &typed)
        }
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
        counter.bad(record: number, reason: .overlong)
    }
}
