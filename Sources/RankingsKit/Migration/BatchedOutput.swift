/// Somewhere migrated bytes can be written in large pieces.
protocol MigrationDestination: AnyObject {
    func writeBatch(_ bytes: UnsafeRawBufferPointer) throws(OutputError)
}

extension AtomicFile: MigrationDestination {
    /// One copy per batch into the array `write` takes: negligible next to the system call.
    func writeBatch(_ bytes: UnsafeRawBufferPointer) throws(OutputError) { try write(Array(bytes)) }
}

/// Migrated lines on their way to a destination, gathered into batches: a system call per
/// line would cost more than migrating the line.
///
/// `append` cannot throw, because `LineConsumer.line` cannot; the first failed write is kept in
/// `failure`, everything after it is discarded, and the job reports it once the file is read.
final class BatchedOutput {
    static let batchSize = 1 << 20

    private let destination: MigrationDestination
    private let batch: UnsafeMutableRawPointer
    /// Bytes waiting in `batch`; always below `batchSize` between calls.
    private var pending = 0
    private(set) var failure: OutputError?

    init(to destination: MigrationDestination) {
        self.destination = destination
        batch = .allocate(byteCount: Self.batchSize, alignment: 16)
    }

    deinit { batch.deallocate() }

    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        if pending + bytes.count > Self.batchSize {
            flush()
            // A line as large as a batch goes straight out instead of being split across two.
            if bytes.count >= Self.batchSize {
                write(bytes)
                return
            }
        }
        guard failure == nil, let source = bytes.baseAddress else { return }
        (batch + pending).copyMemory(from: source, byteCount: bytes.count)
        pending += bytes.count
    }

    func flush() {
        if pending > 0 { write(UnsafeRawBufferPointer(start: batch, count: pending)) }
        pending = 0
    }

    private func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        do { try destination.writeBatch(bytes) } catch { failure = error }
    }
}
