import Glibc

/// Gives each distinct byte string (a joke id, a device id, an event id) a dense index.
///
/// An open-addressing table over a flat key arena: looking up a string already seen allocates
/// nothing; a new one costs one append. Keys are exact bytes: never `String`, whose equality
/// folds canonically equivalent ids together.
///
/// Its arrays come from `PageMemory`, not malloc: the run's table grows by doubling on
/// whichever thread holds the shared table's lock, and malloc, once it has raised its mmap
/// threshold, keeps each freed half in that thread's arena: peak memory would then grow with
/// the number of threads instead of being the same on any.
final class ByteInterner: @unchecked Sendable {
    /// Entry index + 1 per slot; 0 is empty. Power-of-two sized, at most half full.
    private var slots: UnsafeMutablePointer<UInt32>
    private var slotMask: Int
    /// Per entry: where its bytes sit, how many, and its hash.
    private var starts: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>>
    private var lengths: UnsafeMutablePointer<Int32>
    private var hashes: UnsafeMutablePointer<UInt64>
    private var capacity: Int
    private(set) var count = 0
    /// Bytes of all keys stored, for a table whose memory is bounded (`TableBound`).
    private(set) var storedBytes = 0
    /// Key bytes live in fixed chunks that never move, so growing costs no copy and no
    /// doubled peak; a key longer than a chunk gets a chunk of its own.
    private var arenaChunks: [(start: UnsafeMutablePointer<UInt8>, size: Int)] = []
    private var arenaFree = 0
    private var arenaNext: UnsafeMutablePointer<UInt8>?
    private static let arenaChunkSize = 256 << 10

    /// One random seed per process, so no input can be crafted to make every key collide,
    /// while interners built by different threads of one run agree on every hash.
    private static let processSeed: UInt64 = UInt64.random(in: .min ... .max)
    /// A copy of `processSeed`, so the hot path reads a field instead of checking a lazy global.
    private let seed = ByteInterner.processSeed

    init() {
        slotMask = 1023
        // Mapped pages come zeroed: every slot empty.
        slots = PageMemory.allocate(UInt32.self, count: slotMask + 1)
        capacity = 512
        starts = PageMemory.allocate(UnsafeMutablePointer<UInt8>.self, count: capacity)
        lengths = PageMemory.allocate(Int32.self, count: capacity)
        hashes = PageMemory.allocate(UInt64.self, count: capacity)
    }

    deinit { release() }

    private func release() {
        PageMemory.deallocate(slots, count: slotMask + 1)
        PageMemory.deallocate(starts, count: capacity)
        PageMemory.deallocate(lengths, count: capacity)
        PageMemory.deallocate(hashes, count: capacity)
        for chunk in arenaChunks { PageMemory.deallocate(chunk.start, count: chunk.size) }
        arenaChunks = []
    }

    /// Forgets every key, for a worker's bounded table whose keys were handed over in a
    /// merge: the slots and entry arrays are kept for the next keys (they are as large as the
    /// bound allows, no larger), and so is the first chunk of key bytes if it is an ordinary one.
    func removeAll() {
        slots.update(repeating: 0, count: slotMask + 1)
        count = 0
        storedBytes = 0
        let kept = arenaChunks.first.flatMap { $0.size == Self.arenaChunkSize ? $0 : nil }
        for chunk in arenaChunks.dropFirst(kept == nil ? 0 : 1) { PageMemory.deallocate(chunk.start, count: chunk.size) }
        arenaChunks = kept.map { [$0] } ?? []
        arenaNext = kept?.start
        arenaFree = kept?.size ?? 0
    }

    /// The index of `key`, and whether it was new.
    @inline(__always)
    func intern(_ key: UnsafeBufferPointer<UInt8>) -> (index: Int, isNew: Bool) {
        intern(key, hash: hash(key))
    }

    /// The index of `key` whose hash `h` another interner of this process already computed
    /// (all of them agree), and whether it was new: a merge hashes each key once.
    @inline(__always)
    func intern(_ key: UnsafeBufferPointer<UInt8>, hash h: UInt64) -> (index: Int, isNew: Bool) {
        var i = Int(truncatingIfNeeded: h) & slotMask
        while true {
            let s = slots[i]
            if s == 0 { return (insert(key, hash: h, at: i), true) }
            let e = Int(s &- 1)
            if hashes[e] == h && Int(lengths[e]) == key.count
                && (key.count == 0 || Self.same(starts[e], key.baseAddress!, key.count)) {
                return (e, false)
            }
            i = (i &+ 1) & slotMask
        }
    }

    /// The index of `key`, nil when it was never interned. Only reads, so threads may share an
    /// interner that no one writes to any more.
    @inline(__always)
    func index(of key: UnsafeBufferPointer<UInt8>) -> Int? {
        let h = hash(key)
        var i = Int(truncatingIfNeeded: h) & slotMask
        while true {
            let s = slots[i]
            if s == 0 { return nil }
            let e = Int(s &- 1)
            if hashes[e] == h && Int(lengths[e]) == key.count
                && (key.count == 0 || Self.same(starts[e], key.baseAddress!, key.count)) {
                return e
            }
            i = (i &+ 1) & slotMask
        }
    }

    func withKey<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: starts[index], count: Int(lengths[index])))
    }

    func key(_ index: Int) -> [UInt8] { withKey(index) { Array($0) } }

    /// The key's hash: the same in every interner of the process, so it can place a key in a
    /// partition that all threads agree on.
    @inline(__always)
    func hashOf(_ index: Int) -> UInt64 { hashes[index] }

    private func insert(_ key: UnsafeBufferPointer<UInt8>, hash h: UInt64, at slot: Int) -> Int {
        let e = count
        if e == capacity { growEntries() }
        starts[e] = store(key)
        lengths[e] = Int32(key.count)
        hashes[e] = h
        slots[slot] = UInt32(e + 1)
        count += 1
        if count * 2 > slotMask { rehash() }
        return e
    }

    private func growEntries() {
        let newCapacity = capacity * 2
        func grown<T>(_ old: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<T> {
            let new = PageMemory.allocate(T.self, count: newCapacity)
            new.moveInitialize(from: old, count: count)
            PageMemory.deallocate(old, count: capacity)
            return new
        }
        starts = grown(starts)
        lengths = grown(lengths)
        hashes = grown(hashes)
        capacity = newCapacity
    }

    private func store(_ key: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        // No chunk yet: even an empty key (an empty device_id) needs somewhere to point.
        if arenaNext == nil || key.count > arenaFree {
            let size = max(Self.arenaChunkSize, key.count)
            let chunk = PageMemory.allocate(UInt8.self, count: size)
            arenaChunks.append((chunk, size))
            arenaNext = chunk
            arenaFree = size
        }
        let at = arenaNext!
        if let base = key.baseAddress { at.update(from: base, count: key.count) }
        arenaNext = at + key.count
        arenaFree -= key.count
        storedBytes += key.count
        return at
    }

    private func rehash() {
        let newMask = slotMask * 2 + 1
        PageMemory.deallocate(slots, count: slotMask + 1)
        slots = PageMemory.allocate(UInt32.self, count: newMask + 1)
        slotMask = newMask
        for e in 0..<count {
            var i = Int(truncatingIfNeeded: hashes[e]) & slotMask
            while slots[i] != 0 { i = (i &+ 1) & slotMask }
            slots[i] = UInt32(e + 1)
        }
    }

    /// Whether the `n` bytes at `a` and `b` are equal: 8-byte words, the last one overlapping
    /// the one before, inline, because a call to `memcmp` is as dear as comparing an id.
    @inline(__always)
    static func same(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n >= 8 else { return memcmp(a, b, n) == 0 }
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        var i = 0
        while i + 8 < n {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        return ra.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == rb.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
    }

    /// A fast multiply-xorshift hash over 8-byte words.
    @inline(__always)
    func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let m: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = seed ^ (UInt64(key.count) &* m)
        let n = key.count
        guard n > 0, let base = key.baseAddress else { return h }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= n {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* m
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        if n >= 8 && i < n {
            // The last 8 bytes in one load, the ones already hashed shifted out.
            tail = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) >> UInt64(8 * (8 - (n - i)))
        } else {
            var shift: UInt64 = 0
            while i < n {
                tail |= UInt64(base[i]) << shift
                shift += 8
                i += 1
            }
        }
        h = (h ^ tail) &* m
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        return h
    }
}
