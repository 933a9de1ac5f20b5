import Glibc

/// Counts per joke, keyed by the joke id's exact bytes (never by `String`, whose equality
/// folds canonically equivalent ids together).
///
/// An open-addressing table over a flat key arena: looking up an id already seen allocates
/// nothing; a new id costs one append to the arena. Memory grows with distinct jokes only.
public final class Tally: @unchecked Sendable {
    /// Entry index + 1 per slot; 0 is empty. Power-of-two sized, at most half full.
    private var slots: UnsafeMutablePointer<UInt32>
    private var slotMask: Int
    /// Per entry: where its id sits in `arena`, its hash, and its counts.
    private var keyOffsets: [Int] = []
    private var keyLengths: [Int] = []
    private var hashes: [UInt64] = []
    private var counts: UnsafeMutablePointer<JokeCounts>
    private var countsCapacity: Int
    public private(set) var jokeCount = 0
    private var arena: ByteBuffer

    /// One random seed per process, so no input can be crafted to collide every id, while
    /// tallies built by different threads of one run still agree on every hash.
    private static let seed: UInt64 = UInt64.random(in: .min ... .max)

    public init() {
        slotMask = 1023
        slots = .allocate(capacity: slotMask + 1)
        slots.initialize(repeating: 0, count: slotMask + 1)
        countsCapacity = 512
        counts = .allocate(capacity: countsCapacity)
        arena = ByteBuffer(capacity: 16 * 1024)
    }

    deinit {
        slots.deallocate()
        counts.deinitialize(count: jokeCount)
        counts.deallocate()
    }

    /// Counts one valid event for the joke `id`.
    @inline(__always)
    public func add(id: UnsafeBufferPointer<UInt8>, rating: Double) {
        counts[entry(for: id)].add(rating)
    }

    /// The entry index for `id`, created (with zero counts) when the id is new.
    @inline(__always)
    public func entry(for id: UnsafeBufferPointer<UInt8>) -> Int {
        let h = Self.hash(id)
        var i = Int(truncatingIfNeeded: h) & slotMask
        while true {
            let s = slots[i]
            if s == 0 { return insert(id, hash: h, at: i) }
            let e = Int(s &- 1)
            if hashes[e] == h && keyLengths[e] == id.count
                && memcmp(arena.base + keyOffsets[e], id.baseAddress!, id.count) == 0 {
                return e
            }
            i = (i &+ 1) & slotMask
        }
    }

    @inline(__always)
    public func add(entry: Int, rating: Double) { counts[entry].add(rating) }

    private func insert(_ id: UnsafeBufferPointer<UInt8>, hash h: UInt64, at slot: Int) -> Int {
        let e = jokeCount
        if e == countsCapacity {
            let bigger = UnsafeMutablePointer<JokeCounts>.allocate(capacity: countsCapacity * 2)
            bigger.moveInitialize(from: counts, count: jokeCount)
            counts.deallocate()
            counts = bigger
            countsCapacity *= 2
        }
        (counts + e).initialize(to: JokeCounts())
        keyOffsets.append(arena.count)
        keyLengths.append(id.count)
        hashes.append(h)
        arena.append(id)
        slots[slot] = UInt32(e + 1)
        jokeCount += 1
        if jokeCount * 2 > slotMask { rehash() }
        return e
    }

    private func rehash() {
        let newMask = slotMask * 2 + 1
        slots.deallocate()
        slots = .allocate(capacity: newMask + 1)
        slots.initialize(repeating: 0, count: newMask + 1)
        slotMask = newMask
        for e in 0..<jokeCount {
            var i = Int(truncatingIfNeeded: hashes[e]) & slotMask
            while slots[i] != 0 { i = (i &+ 1) & slotMask }
            slots[i] = UInt32(e + 1)
        }
    }

    /// Adds every joke of `other` into this tally.
    public func merge(_ other: Tally) {
        for e in 0..<other.jokeCount {
            other.withID(e) { id in counts[entry(for: id)].merge(other.counts[e]) }
        }
    }

    public func withID<R>(_ entry: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: arena.base + keyOffsets[entry], count: keyLengths[entry]))
    }

    public func counts(_ entry: Int) -> JokeCounts { counts[entry] }

    /// Every joke with its counts, in ascending byte order of id.
    public func sortedJokes() -> [(id: [UInt8], counts: JokeCounts)] {
        var all: [(id: [UInt8], counts: JokeCounts)] = []
        all.reserveCapacity(jokeCount)
        for e in 0..<jokeCount { all.append((withID(e) { Array($0) }, counts[e])) }
        all.sort { $0.id.lexicographicallyPrecedes($1.id) }
        return all
    }

    /// Sums over all jokes.
    public var totals: JokeCounts {
        var t = JokeCounts()
        for e in 0..<jokeCount { t.merge(counts[e]) }
        return t
    }

    /// A fast multiply-xorshift hash over 8-byte words.
    @inline(__always)
    static func hash(_ id: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let m: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = seed ^ (UInt64(id.count) &* m)
        let raw = UnsafeRawPointer(id.baseAddress!)
        var i = 0
        let n = id.count
        while i + 8 <= n {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* m
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < n {
            tail |= UInt64(id[i]) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail) &* m
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        return h
    }
}
