/// Turns the lines of one piece of input into votes: scans each line, decodes the record,
/// and counts it in a `Tally`, or logs it as a bad line.
public struct RecordCounter: LineConsumer, ~Copyable {
    public let tally: Tally
    public private(set) var badLines = BadLineLog()
    private var scanner: JSONLineScanner
    private var decoder = RecordDecoder()

    public init(tally: Tally = Tally()) {
        self.tally = tally
        scanner = JSONLineScanner(wanted: .ratingOnly)
    }

    @inline(__always)
    public mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64) {
        switch scanner.scan(start, end) {
        case .blank:
            return
        case .object:
            break
        case .notObject:
            badLines.record(line: number, reason: "invalid record: \(InvalidRecord.notObject.message)")
            return
        case .malformed:
            let why = scanner.failure.message, at = scanner.failOffset + 1
            badLines.record(line: number, reason: "malformed JSON: \(why) at byte \(at)")
            return
        }
        let id: UnsafeBufferPointer<UInt8>
        switch decoder.jokeID(scanner.fields[.jokeID]) {
        case .success(let value): id = value
        case .failure(let why):
            badLines.record(line: number, reason: "invalid record: \(why.message)")
            return
        }
        switch decoder.rating(scanner.fields[.rating]) {
        case .success(let rating):
            tally.add(id: id, rating: rating)
        case .failure(let why):
            badLines.record(line: number, reason: "invalid record: \(why.message)")
        }
    }

    public mutating func overlongLine(number: Int, offset: Int64) {
        badLines.record(line: number, reason: "malformed JSON: line longer than \(LineReader.maxLineLength >> 20) MiB")
    }
}
