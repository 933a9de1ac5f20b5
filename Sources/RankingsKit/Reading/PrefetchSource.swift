import CKernels

/// Reads (or inflates) ahead on its own thread, so that for a pipe or a gzip file the
/// waiting and decompressing overlap with scanning instead of alternating with it.
///
/// Memory is bounded: `depth` chunks of `chunkSize` bytes circulate between the two threads.
/// Checksums the source leaves to its reader travel with the chunk whose bytes they end in.
final class Prefetcher<Source: ByteSource>: @unchecked Sendable {
    struct Chunk {
        let bytes: UnsafeMutableRawPointer
        let count: Int
        let checksums: [DeferredChecksum]
    }

    private var source: Source
    let defersChecksums: Bool
    private let condition = Condition()
    // Guarded by `condition`:
    private var ready: [Chunk] = []
    private var spare: [UnsafeMutableRawPointer] = []
    private var failure: InputError?
    private var reachedEnd = false
    private var cancelled = false
    private var producerDone = false
    private var consumed: Int64 = 0

    private let chunkSize: Int

    init(_ source: Source, chunkSize: Int = 1 << 20, depth: Int = 4) {
        self.source = source
        defersChecksums = source.defersChecksums
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

            let checksums = source.takeDeferredChecksums()
            condition.lock()
            consumed = source.bytesConsumed
            // A chunk with no bytes still carries an empty member's checksum.
            if filled > 0 || !checksums.isEmpty {
                ready.append(Chunk(bytes: chunk, count: filled, checksums: checksums))
            } else {
                spare.append(chunk)
            }
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
    func next() throws(InputError) -> Chunk? {
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
        for chunk in ready { chunk.bytes.deallocate() }
        for chunk in spare { chunk.deallocate() }
        ready = []
        spare = []
        condition.unlock()
    }
}

/// The consumer's side of a `Prefetcher`, as a `ByteSource`. It checks the checksums the
/// source deferred, over the bytes as it hands them out: a member that does not match fails
/// the read that reaches its end, and nothing after it is handed out.
struct PrefetchSource<Source: ByteSource>: ByteSource {
    let prefetcher: Prefetcher<Source>
    private var current: Prefetcher<Source>.Chunk?
    private var offset = 0
    /// Bytes handed out so far, and the CRC-32 of those since the last checksum.
    private var delivered: Int64 = 0
    private var crc: UInt32 = 0
    private var nextChecksum = 0

    init(_ prefetcher: Prefetcher<Source>) { self.prefetcher = prefetcher }

    var bytesConsumed: Int64 { prefetcher.bytesConsumed }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        while true {
            if current == nil {
                guard let chunk = try prefetcher.next() else { return 0 }
                current = chunk
                offset = 0
                nextChecksum = 0
            }
            let chunk = current!
            let n = min(count, chunk.count - offset)
            buffer.copyMemory(from: chunk.bytes + offset, byteCount: n)
            if prefetcher.defersChecksums { try check(buffer, n, chunk.checksums) }
            offset += n
            delivered += Int64(n)
            if offset == chunk.count {
                prefetcher.recycle(chunk.bytes)
                current = nil
            }
            if n > 0 || count == 0 { return n }
        }
    }

    /// Runs the CRC-32 over `bytes`, the next `count` handed out, and checks each checksum
    /// that ends within them.
    private mutating func check(_ bytes: UnsafeMutableRawPointer, _ count: Int, _ checksums: [DeferredChecksum]) throws(InputError) {
        let start = bytes.assumingMemoryBound(to: UInt8.self)
        var done = 0
        while nextChecksum < checksums.count && checksums[nextChecksum].end <= delivered + Int64(count) {
            let checksum = checksums[nextChecksum]
            let upTo = Int(checksum.end - delivered)
            crc = rk_isal_crc32(crc, start + done, UInt64(upTo - done))
            if crc != checksum.expected { throw checksum.failure }
            crc = 0
            done = upTo
            nextChecksum += 1
        }
        crc = rk_isal_crc32(crc, start + done, UInt64(count - done))
    }

    /// Returns a chunk still held, so `Prefetcher.close` can free it.
    mutating func release() {
        if let chunk = current { prefetcher.recycle(chunk.bytes) }
        current = nil
    }
}
