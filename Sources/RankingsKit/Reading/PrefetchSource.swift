/// Reads (or inflates) ahead on its own thread, so that for a pipe or a gzip file the
/// waiting and decompressing overlap with scanning instead of alternating with it.
///
/// Memory is bounded: `depth` chunks of `chunkSize` bytes circulate between the two threads.
final class Prefetcher<Source: ByteSource>: @unchecked Sendable {
    private var source: Source
    private let condition = Condition()
    // Guarded by `condition`:
    private var ready: [(UnsafeMutableRawPointer, Int)] = []
    private var spare: [UnsafeMutableRawPointer] = []
    private var failure: InputError?
    private var reachedEnd = false
    private var cancelled = false
    private var producerDone = false
    private var consumed: Int64 = 0

    private let chunkSize: Int

    init(_ source: Source, chunkSize: Int = 1 << 20, depth: Int = 4) {
        self.source = source
        self.chunkSize = chunkSize
        for _ in 0..<depth { spare.append(.allocate(byteCount: chunkSize, alignment: 64)) }
        // Detached: `close` waits for `producerDone`, which the thread sets last.
        NativeThread(stackSize: 1 << 20) { [self] in produce() }.detach()
    }

    private func produce() {
        while true {
            condition.lock()
            while spare.isEmpty && !cancelled { condition.wait() }
            if cancelled { break }
            let chunk = spare.removeLast()
            condition.unlock()

            var filled = 0
            var error: InputError?
            do {
                // Fill the chunk unless the source pauses at the end: fewer, larger hand-offs.
                while filled < chunkSize {
                    let n = try source.read(into: chunk + filled, count: chunkSize - filled)
                    if n == 0 { break }
                    filled += n
                }
            } catch let e {
                error = e
            }

            condition.lock()
            consumed = source.bytesConsumed
            if filled > 0 { ready.append((chunk, filled)) } else { spare.append(chunk) }
            if let error { failure = error }
            if error != nil || filled < chunkSize { reachedEnd = true }
            condition.broadcast()
            if reachedEnd { break }
            condition.unlock()
        }
        producerDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next chunk in order, nil at the end; hand it back with `recycle`.
    func next() throws(InputError) -> (UnsafeMutableRawPointer, Int)? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !reachedEnd { condition.wait() }
        if !ready.isEmpty { return ready.removeFirst() }
        if let failure { throw failure }
        return nil
    }

    func recycle(_ chunk: UnsafeMutableRawPointer) {
        condition.lock()
        spare.append(chunk)
        condition.broadcast()
        condition.unlock()
    }

    var bytesConsumed: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return consumed
    }

    /// Stops the producer, waits for it, and frees every chunk.
    func close() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !producerDone { condition.wait() }
        for (chunk, _) in ready { chunk.deallocate() }
        for chunk in spare { chunk.deallocate() }
        ready = []
        spare = []
        condition.unlock()
    }
}

/// The consumer's side of a `Prefetcher`, as a `ByteSource`.
struct PrefetchSource<Source: ByteSource>: ByteSource {
    let prefetcher: Prefetcher<Source>
    private var current: (UnsafeMutableRawPointer, Int)?
    private var offset = 0

    init(_ prefetcher: Prefetcher<Source>) { self.prefetcher = prefetcher }

    var bytesConsumed: Int64 { prefetcher.bytesConsumed }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        if current == nil {
            guard let chunk = try prefetcher.next() else { return 0 }
            current = chunk
            offset = 0
        }
        let (chunk, size) = current!
        let n = min(count, size - offset)
        buffer.copyMemory(from: chunk + offset, byteCount: n)
        offset += n
        if offset == size {
            prefetcher.recycle(chunk)
            current = nil
        }
        return n
    }

    /// Returns a chunk still held, so `Prefetcher.close` can free it.
    mutating func release() {
        if let (chunk, _) = current { prefetcher.recycle(chunk) }
        current = nil
    }
}
