/// Counts per joke, keyed by the joke id's exact bytes. Memory grows with distinct jokes only.
final class Tally: @unchecked Sendable {
    private let ids = ByteInterner()
    private let recent = RecentIDs()
    private var counts: UnsafeMutablePointer<JokeCounts>
    private var countsCapacity = 512
    private let bound: TableBound
    /// Set when a new joke brings the tally to its bound: its owner must empty it (into the
    /// run's shared table) before the next event. Never set for an unbounded tally.
    private(set) var isFull = false

    convenience init() { self.init(bound: .unbounded) }

    init(bound: TableBound) {
        self.bound = bound
        counts = PageMemory.allocate(JokeCounts.self, count: countsCapacity)
    }

    deinit {
        counts.deinitialize(count: ids.count)
        PageMemory.deallocate(counts, count: countsCapacity)
    }

    var jokeCount: Int { ids.count }

    /// Counts one valid event for the joke `id`.
    @inline(__always)
    func add(id: UnsafeBufferPointer<UInt8>, rating: Double) {
        // The entry first: creating it may move `counts`.
        let e = entry(for: id)
        counts[e].add(rating)
    }

    /// The entry index for `id`, created (with zero counts) when the id is new.
    @inline(__always)
    func entry(for id: UnsafeBufferPointer<UInt8>) -> Int {
        if let e = recent.entry(for: id) { return e }
        let e = created(ids.intern(id))
        recent.remember(id, entry: e)
        return e
    }

    /// The entry for `id`, whose hash another tally of this process computed.
    @inline(__always)
    private func entry(for id: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int {
        created(ids.intern(id, hash: hash))
    }

    /// The entry, with zero counts made for it when it is new.
    @inline(__always)
    private func created(_ interned: (index: Int, isNew: Bool)) -> Int {
        let (e, isNew) = interned
        if isNew {
            if e + 1 >= bound.keys || ids.storedBytes >= bound.keyBytes { isFull = true }
            if e == countsCapacity {
                // From the kernel and back to it, as `ByteInterner`'s arrays (which see).
                let bigger = PageMemory.allocate(JokeCounts.self, count: countsCapacity * 2)
                bigger.moveInitialize(from: counts, count: e)
                PageMemory.deallocate(counts, count: countsCapacity)
                counts = bigger
                countsCapacity *= 2
            }
            (counts + e).initialize(to: JokeCounts())
        }
        return e
    }

    @inline(__always)
    func add(entry: Int, rating: Double) { counts[entry].add(rating) }

    /// Adds every joke of `other` into this tally.
    func merge(_ other: Tally) {
        for e in 0..<other.jokeCount {
            // The entry first: creating it may move `counts`.
            let mine = entry(matching: e, of: other)
            counts[mine].merge(other.counts[e])
        }
    }

    /// The entry in this tally of `other`'s entry `e`, made if new.
    func entry(matching e: Int, of other: Tally) -> Int {
        other.withID(e) { id in entry(for: id, hash: other.ids.hashOf(e)) }
    }

    /// Forgets every joke (the memory for them is kept for the next ones: a bounded tally is
    /// emptied many times and never holds more than its bound).
    func removeAll() {
        counts.deinitialize(count: ids.count)
        ids.removeAll()
        recent.removeAll()
        isFull = false
    }

    func withID<R>(_ entry: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try ids.withKey(entry, body)
    }

    func counts(_ entry: Int) -> JokeCounts { counts[entry] }

    /// Every entry, in ascending byte order of id: 4 bytes a joke, no copy of any id.
    func sortedEntries() -> [UInt32] {
        var order = (0..<UInt32(jokeCount)).map { $0 }
        order.sort { a, b in
            ids.withKey(Int(a)) { x in ids.withKey(Int(b)) { y in x.lexicographicallyPrecedes(y) } }
        }
        return order
    }

    /// Every joke with its counts, in ascending byte order of id.
    func sortedJokes() -> [(id: [UInt8], counts: JokeCounts)] {
        var all: [(id: [UInt8], counts: JokeCounts)] = []
        all.reserveCapacity(jokeCount)
        for e in 0..<jokeCount { all.append((ids.key(e), counts[e])) }
        all.sort { $0.id.lexicographicallyPrecedes($1.id) }
        return all
    }

    /// Jokes with at least one counted event (deduplication can intern a joke whose every
    /// event then lost to another).
    var countedJokes: Int {
        var n = 0
        for e in 0..<jokeCount where counts[e].ratings > 0 { n += 1 }
        return n
    }

    /// Sums over all jokes.
    var totals: JokeCounts {
        var t = JokeCounts()
        for e in 0..<jokeCount { t.merge(counts[e]) }
        return t
    }
}
