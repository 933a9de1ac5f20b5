import Synchronization

/// What a run found in its inputs.
public struct AggregationResult: Sendable {
    public var tally: Tally
    /// The first bad lines of the run in input order, with the path each came from.
    public var firstBadLines: [(path: String, line: BadLine)]
    public var badLineCount: Int
    /// Bytes read from the inputs as stored (compressed bytes for gzip files).
    public var inputBytes: Int64
    /// Valid records, before the selection's filters and deduplication.
    public var validEvents = 0
    /// Valid events left out by `--as-of` / `--week`.
    public var filteredOut = 0
    /// Events that lost to a later vote of the same device (or the same event id).
    public var duplicatesRemoved = 0
}

/// Reads every input, on every core, and adds up one `Tally`.
///
/// Regular files are cut into pieces at byte offsets; each piece owns the lines that start
/// inside it, so pieces never share a line. Threads take pieces in order and tally them;
/// each piece keeps its own line count and bad-line log, so bad lines are numbered and
/// reported exactly as a single thread would, whatever the scheduling.
public enum Aggregator {
    /// Pieces are at most this large (fine-grained enough to balance threads) and at least
    /// `minPieceSize` (so a small file is not split for nothing).
    static let maxPieceSize: Int64 = 64 << 20
    static let minPieceSize: Int64 = 8 << 20

    struct Piece: Sendable {
        var file: Int
        var start: Int64
        var end: Int64
    }

    struct PieceResult: Sendable {
        var lines = 0
        var badLines = BadLineLog()
        var bytes: Int64 = 0
        var error: InputError?
    }

    /// - Parameters:
    ///   - pieceSize: fixed piece size instead of the automatic one (tests use tiny pieces to
    ///     put split points inside lines and at chunk edges).
    ///   - chunkSize: the line reader's starting buffer size (tests use tiny ones).
    public static func run(_ files: [InputFile], threads: Int, selection: EventSelection = EventSelection(),
                           progress: ProgressCounter = ProgressCounter(),
                           pieceSize: Int64? = nil, chunkSize: Int = LineReader.chunkSize) throws(InputError) -> AggregationResult {
        let pieces = plan(files, threads: threads, pieceSize: pieceSize)
        let workers = max(1, min(threads, pieces.count))
        let shared = Shared(pieces: pieces, workers: workers, dedupe: selection.dedupe)
        Workers.run(count: workers) { worker in
            let reader = LineReader(chunkSize: chunkSize)
            let tally = shared.tallies[worker]
            while !shared.stop.load(ordering: .relaxed) {
                let index = shared.next.add(1, ordering: .relaxed).oldValue
                if index >= pieces.count { break }
                let result = read(pieces[index], of: files[pieces[index].file], reader: reader, worker: tally,
                                  selection: selection, progress: progress)
                if result.error != nil { shared.stop.store(true, ordering: .relaxed) }
                shared.store(result, at: index)
                // Memory: a piece's keys per thread, not every key once per thread.
                shared.sink.flush(tally)
            }
        }
        return try merge(shared, files: files, pieces: pieces)
    }

    static func plan(_ files: [InputFile], threads: Int, pieceSize: Int64? = nil) -> [Piece] {
        var pieces: [Piece] = []
        for (index, file) in files.enumerated() {
            guard file.kind == .regular, file.size > (pieceSize ?? minPieceSize), threads > 1 || pieceSize != nil else {
                pieces.append(Piece(file: index, start: 0, end: .max))
                continue
            }
            // Several pieces per thread, so a thread that finishes early finds more work.
            let wanted = max(file.size / Int64(threads * 4), minPieceSize)
            let size = max(1, pieceSize ?? min(wanted, maxPieceSize))
            var start: Int64 = 0
            while start < file.size {
                let end = start + size >= file.size ? Int64.max : start + size
                pieces.append(Piece(file: index, start: start, end: end))
                start += size
            }
        }
        return pieces
    }

    static func read(_ piece: Piece, of file: InputFile, reader: LineReader, worker: WorkerTally,
                     selection: EventSelection, progress: ProgressCounter) -> PieceResult {
        var result = PieceResult()
        // Start one byte early: if that byte ends a line, our first line starts at `start`.
        let from = piece.start == 0 ? 0 : piece.start - 1
        var counter = RecordCounter(worker: worker, selection: selection, file: piece.file, baseOffset: from)
        do {
            switch file.kind {
            case .regular:
                var source = CountingSource(source: FileRangeSource(fd: file.fd, path: file.displayPath, offset: from),
                                            counter: progress)
                let range = LineReader.Range(skipFirstLine: piece.start > 0,
                                             limit: piece.end == .max ? .max : piece.end - from,
                                             atFileStart: piece.start == 0)
                result.lines = try reader.read(&source, range: range, into: &counter)
                // Count each byte of the file once, though pieces read across their ends.
                result.bytes = min(piece.end, file.size) - piece.start
            case .gzip, .stream:
                (result.lines, result.bytes) = try file.readLines(with: reader, progress: progress, into: &counter)
            }
        } catch {
            result.error = error
        }
        result.badLines = counter.badLines
        return result
    }

    private static func merge(_ shared: Shared, files: [InputFile], pieces: [Piece]) throws(InputError) -> AggregationResult {
        let results = shared.results
        // The first failure in input order, whichever thread met it first.
        for result in results {
            if let error = result?.error { throw error }
        }
        let main = shared.sink.combined
        let tally = main.tally
        var validEvents = main.validEvents, filteredOut = main.filteredOut
        for other in shared.tallies where other !== main {
            if let votes = main.votes, let otherVotes = other.votes {
                votes.merge(otherVotes, otherTally: other.tally, into: tally, threads: shared.tallies.count)
            } else {
                tally.merge(other.tally)
            }
            validEvents += other.validEvents
            filteredOut += other.filteredOut
        }
        var duplicatesRemoved = 0
        if let votes = main.votes {
            votes.countWinners(into: tally)
            duplicatesRemoved = validEvents - filteredOut - votes.count
        }
        var first: [(path: String, line: BadLine)] = []
        var count = 0
        var bytes: Int64 = 0
        var linesBefore = 0
        for (index, piece) in pieces.enumerated() {
            guard let result = results[index] else { continue }
            if index > 0 && pieces[index - 1].file != piece.file { linesBefore = 0 }
            for bad in result.badLines.first where first.count < BadLineLog.shownLimit {
                first.append((files[piece.file].displayPath, BadLine(line: linesBefore + bad.line, reason: bad.reason)))
            }
            count += result.badLines.count
            bytes += result.bytes
            linesBefore += result.lines
        }
        return AggregationResult(tally: tally, firstBadLines: first, badLineCount: count, inputBytes: bytes,
                                 validEvents: validEvents, filteredOut: filteredOut, duplicatesRemoved: duplicatesRemoved)
    }

    /// State the worker threads share.
    ///
    /// Each slot of `slots` is written once, by the one thread that took its piece from
    /// `next`, and read only after every worker has finished, so the slots need no lock. (A
    /// `Mutex` here was correct but invisible to ThreadSanitizer, whose reports then hid any
    /// real race.)
    private final class Shared: @unchecked Sendable {
        let next = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let tallies: [WorkerTally]
        let sink: SharedTally
        private let slots: UnsafeMutablePointer<PieceResult?>
        private let count: Int

        init(pieces: [Piece], workers: Int, dedupe: EventSelection.Dedupe) {
            tallies = (0..<workers).map { _ in WorkerTally(dedupe: dedupe) }
            sink = SharedTally(workers: tallies, dedupe: dedupe)
            count = pieces.count
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil, count: count)
        }

        deinit {
            slots.deinitialize(count: count)
            slots.deallocate()
        }

        func store(_ result: PieceResult, at index: Int) { slots[index] = result }
        /// Only once the workers are done.
        var results: [PieceResult?] { Array(UnsafeBufferPointer(start: slots, count: count)) }
    }
}

/// Runs `body` on `count` threads at once (the caller's thread is one of them) and waits.
///
/// Plain threads, one per worker whatever else the process runs, each with a known stack.
enum Workers {
    static func run(count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let threads = (1..<max(count, 1)).map { worker in NativeThread(stackSize: 4 << 20) { body(worker) } }
        body(0)
        for thread in threads { thread.join() }
    }
}
