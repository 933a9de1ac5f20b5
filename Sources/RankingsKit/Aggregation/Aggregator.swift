import Synchronization

/// A bad line of the run as `--report` lists it.
struct RunRefusal: Sendable {
    /// The input as bad-line messages name it.
    var path: String
    /// Counted from 1 within the input: a line, or a record of a managed export's output file.
    var line: Int
    var isRecord: Bool
    var reason: BadRecord
    var record: RefusedRecord

    var badLine: BadLine {
        var bad = BadLine(line: line, reason: reason.message)
        bad.isRecord = isRecord
        return bad
    }
}

/// What a run found in its inputs.
struct AggregationResult: Sendable {
    var tally: Tally
    /// The first bad lines of the run in input order (as many as the run keeps, at least the
    /// first `BadLineLog.shownLimit`; every one when it keeps them all).
    var refused: [RunRefusal]
    var badLineCount: Int
    /// Bytes read from the inputs as stored (compressed bytes for gzip files).
    var inputBytes: Int64
    /// Valid records, before the selection's filters and deduplication.
    var validEvents = 0
    /// Valid events left out by `--as-of` / `--week`.
    var filteredOut = 0
    /// Events that lost to a later vote of the same device (or the same event id).
    var duplicatesRemoved = 0
    /// Documents or entities of other collections: neither counted nor bad.
    var leftOut = 0
    /// Lines of layered folders that a later change file replaces: neither counted nor bad.
    var replacedLines = 0

    /// The bad lines stderr shows, with the path each came from.
    var firstBadLines: [(path: String, line: BadLine)] {
        refused.prefix(BadLineLog.shownLimit).map { ($0.path, $0.badLine) }
    }
}

/// Reads every input, on every core, and adds up one `Tally`.
///
/// Files that can be split are cut into pieces at byte offsets (any offset for JSON lines, a
/// multiple of the reader's `splitUnit` for other formats); each piece owns the records that
/// start inside it, so pieces never share a record. Threads take pieces in order and feed
/// each record to an `EventCounter`; each piece keeps its own record count and bad-record
/// log, so bad records are numbered and reported exactly as a single thread would, whatever
/// the scheduling.
enum Aggregator {
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
        /// Lines or records seen, for numbering the next piece's.
        var records = 0
        var badLines = BadLineLog()
        var leftOut = 0
        var replaced = 0
        var bytes: Int64 = 0
        var error: InputError?
    }

    /// - Parameters:
    ///   - pieceSize: fixed piece size instead of the automatic one (tests use tiny pieces to
    ///     put split points inside lines and at chunk edges).
    ///   - chunkSize: the line reader's starting buffer size (tests use tiny ones).
    ///   - workerBound: how much each thread's own tables hold before they are emptied into the
    ///     run's (tests use tiny bounds, to empty them after every few events).
    ///   - keepRefused: how many of the run's first bad lines to keep in full, for `--report`
    ///     (at least the `BadLineLog.shownLimit` shown; `Int.max` keeps all).
    static func run(_ files: [InputFile], threads: Int, selection: EventSelection = EventSelection(),
                    progress: ProgressCounter = ProgressCounter(),
                    pieceSize: Int64? = nil, chunkSize: Int = LineReader.chunkSize,
                    workerBound: TableBound = .worker,
                    keepRefused: Int = BadLineLog.shownLimit) throws(InputError) -> AggregationResult {
        let pieces = plan(files, threads: threads, pieceSize: pieceSize)
        let workers = max(1, min(threads, pieces.count))
        let shared = Shared(pieces: pieces, workers: workers, dedupe: selection.dedupe, bound: workerBound)
        Workers.run(count: workers) { worker in
            let scratch = RecordScratch(chunkSize: chunkSize)
            let tally = shared.tally.workers[worker]
            while !shared.stop.load(ordering: .relaxed) {
                let index = shared.next.add(1, ordering: .relaxed).oldValue
                if index >= pieces.count { break }
                let result = read(pieces[index], of: files, shared: shared, scratch: scratch, worker: tally,
                                  selection: selection, progress: progress, keep: keepRefused)
                if result.error != nil { shared.stop.store(true, ordering: .relaxed) }
                shared.store(result, at: index)
            }
            // The rest of this thread's keys, while the others may still be reading.
            shared.tally.flush(tally)
        }
        return try merge(shared, files: files, pieces: pieces, keep: keepRefused)
    }

    static func plan(_ files: [InputFile], threads: Int, pieceSize: Int64? = nil) -> [Piece] {
        var pieces: [Piece] = []
        for (index, file) in files.enumerated() {
            guard file.canSplit, file.size > (pieceSize ?? minPieceSize), threads > 1 || pieceSize != nil else {
                pieces.append(Piece(file: index, start: 0, end: .max))
                continue
            }
            // Several pieces per thread, so a thread that finishes early finds more work.
            let wanted = max(file.size / Int64(threads * 4), minPieceSize)
            var size = max(1, pieceSize ?? min(wanted, maxPieceSize))
            if let unit = file.format.splitUnit { size = max(unit, size / unit * unit) }
            var start: Int64 = 0
            while start < file.size {
                let end = start + size >= file.size ? Int64.max : start + size
                pieces.append(Piece(file: index, start: start, end: end))
                start += size
            }
        }
        return pieces
    }

    private static func read(_ piece: Piece, of files: [InputFile], shared: Shared, scratch: RecordScratch,
                             worker: WorkerTally, selection: EventSelection, progress: ProgressCounter,
                             keep: Int) -> PieceResult {
        var result = PieceResult()
        defer { shared.files.done(piece.file) }
        do {
            let file = files[piece.file]
            let opened = try shared.files.open(piece.file, file)
            defer { withExtendedLifetime(opened) {} }
            var counter = EventCounter(worker: worker, selection: selection, file: piece.file, keep: keep)
            (result.records, result.bytes) = try file.format.read(file, descriptor: opened.fd, from: piece.start,
                                                                  to: piece.end, scratch: scratch, into: &counter,
                                                                  progress: progress)
            result.badLines = counter.badRecords
            result.leftOut = counter.leftOut
            result.replaced = counter.replaced
        } catch {
            result.error = error
        }
        return result
    }

    private static func merge(_ shared: Shared, files: [InputFile], pieces: [Piece], keep: Int) throws(InputError) -> AggregationResult {
        var results = shared.takeResults()
        // The first failure in input order, whichever thread met it first.
        for result in results {
            if let error = result?.error { throw error }
        }
        // Every piece was read (none failed), so each file's records are all of its records.
        var records = [Int](repeating: 0, count: files.count)
        for (index, piece) in pieces.enumerated() { records[piece.file] += results[index]?.records ?? 0 }
        try ExportEntityCount.check(zip(files, records).map { file, read in (file.format.entityCount, read) })
        let main = shared.tally.finish()
        let tally = main.tally
        let validEvents = main.validEvents, filteredOut = main.filteredOut
        var duplicatesRemoved = 0
        if let votes = main.votes {
            votes.countWinners(into: tally)
            duplicatesRemoved = validEvents - filteredOut - votes.count
        }
        var refused: [RunRefusal] = []
        let keep = max(keep, BadLineLog.shownLimit)
        var count = 0, leftOut = 0, replaced = 0
        var bytes: Int64 = 0
        var recordsBefore = 0
        for (index, piece) in pieces.enumerated() {
            guard let result = results[index] else { continue }
            // Its bad lines move to the run's list: each piece's own copy goes as it is read.
            results[index] = nil
            if index > 0 && pieces[index - 1].file != piece.file { recordsBefore = 0 }
            let file = files[piece.file]
            for bad in result.badLines.kept where refused.count < keep {
                refused.append(RunRefusal(path: file.displayPath, line: recordsBefore + bad.line,
                                          isRecord: !file.format.numbersLines, reason: bad.reason, record: bad.record))
            }
            count += result.badLines.count
            leftOut += result.leftOut
            replaced += result.replaced
            bytes += result.bytes
            recordsBefore += result.records
        }
        return AggregationResult(tally: tally, refused: refused, badLineCount: count, inputBytes: bytes,
                                 validEvents: validEvents, filteredOut: filteredOut, duplicatesRemoved: duplicatesRemoved,
                                 leftOut: leftOut, replacedLines: replaced)
    }

    /// State the worker threads share.
    ///
    /// Each slot of `slots` is written once, by the one thread that took its piece from
    /// `next`, and read only after every worker has been joined, so the slots need no lock
    /// (and the join orders them for ThreadSanitizer too).
    private final class Shared: @unchecked Sendable {
        let next = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let tally: SharedTally
        let files: OpenFiles
        private let slots: UnsafeMutablePointer<PieceResult?>
        private let count: Int

        init(pieces: [Piece], workers: Int, dedupe: EventSelection.Dedupe, bound: TableBound) {
            tally = SharedTally(workers: workers, dedupe: dedupe, bound: bound)
            files = OpenFiles(pieces: pieces)
            count = pieces.count
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil, count: count)
        }

        deinit {
            slots.deinitialize(count: count)
            slots.deallocate()
        }

        func store(_ result: PieceResult, at index: Int) { slots[index] = result }
        /// Only once the workers are done; the slots are left empty, so the caller holds the
        /// only copy of each result and can free it early.
        func takeResults() -> [PieceResult?] {
            (0..<count).map { index in
                defer { slots[index] = nil }
                return slots[index]
            }
        }
    }
}

/// Each input's one descriptor while its pieces are read: opened by the first of its pieces
/// taken, closed once the last is done, so a file is opened once however many threads read it,
/// and only files being read hold a descriptor (a directory of thousands of files does not).
final class OpenFiles: @unchecked Sendable {
    /// Guards both arrays; a pthread mutex, which ThreadSanitizer sees.
    private let lock = Condition()
    private var opened: [OpenedInput?]
    /// Pieces of each file not yet done.
    private var unread: [Int]

    init(pieces: [Aggregator.Piece]) {
        let files = (pieces.map(\.file).max() ?? -1) + 1
        opened = Array(repeating: nil, count: files)
        unread = Array(repeating: 0, count: files)
        for piece in pieces { unread[piece.file] += 1 }
    }

    func open(_ index: Int, _ file: InputFile) throws(InputError) -> OpenedInput {
        lock.lock()
        defer { lock.unlock() }
        if let open = opened[index] { return open }
        let open = try file.open()
        opened[index] = open
        return open
    }

    /// One piece of the file is done, read or failed.
    func done(_ index: Int) {
        lock.lock()
        unread[index] -= 1
        if unread[index] == 0 { opened[index] = nil }
        lock.unlock()
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
