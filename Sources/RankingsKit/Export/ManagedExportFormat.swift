/// A managed export's output file as one of the aggregator's inputs: read in ranges of whole
/// 32 KiB blocks through the aggregator's one descriptor, so the threads share a large file as
/// they share a large NDJSON file.
struct ManagedExportFormat: RecordFileReader {
    let entityCount: ExportEntityCount?

    init(entityCount: ExportEntityCount? = nil) { self.entityCount = entityCount }

    var splitUnit: Int64? { Int64(LogFormat.blockSize) }

    func read(_ file: InputFile, descriptor: Int32, from start: Int64, to end: Int64, scratch: RecordScratch,
              into counter: inout EventCounter, progress: ProgressCounter) throws(InputError) -> (records: Int, bytes: Int64) {
        let output = ExportOutputFile(displayPath: file.displayPath, size: file.size)
        let unit = Int64(LogFormat.blockSize)
        let blocks = start / unit ..< (end == .max ? output.blockCount : end / unit)
        var reader = ExportFileReader(buffers: scratch.export)
        let records = try withUnsafeMutablePointer(to: &counter) { (target) throws(InputError) -> Int in
            var sink = CountingSink(counter: target)
            return try reader.read(output, descriptor: descriptor, blocks: blocks, into: &sink)
        }
        let bytes = min(end, file.size) - start
        progress.add(Int(bytes))
        return (records, bytes)
    }
}

/// Hands what the export reader judged to the run's format-neutral counter.
private struct CountingSink: ExportSink {
    /// The caller's counter, borrowed for one `read`.
    let counter: UnsafeMutablePointer<EventCounter>

    mutating func event(_ event: ExportEvent, record: Int) -> BadRecord? {
        var details = ExportEventDetails(event: event)
        return counter.pointee.event(id: event.jokeID, rating: event.rating, record: record, position: event.offset,
                                     details: &details)
    }

    mutating func leftOut(record: Int) { counter.pointee.leftOut(record: record) }

    mutating func bad(record: Int, reason: BadRecord, refused: (KindWindow) -> RefusedRecord) {
        let described = counter.pointee.keepsRefusal ? refused(counter.pointee.kindWindow) : .unknown
        counter.pointee.bad(record: record, reason: reason, refused: described)
    }
}

/// An event's details for the counter, the timestamp worked out only when a selection reads it.
private struct ExportEventDetails: RatingEventDetails {
    let event: ExportEvent

    func timestamp() -> EventTime { event.timestamp }
    func deviceID() -> UnsafeBufferPointer<UInt8>? { event.deviceID }
    func eventID() -> UnsafeBufferPointer<UInt8>? { event.eventID }
    func weekID() -> UnsafeBufferPointer<UInt8>? { event.weekID }
}
