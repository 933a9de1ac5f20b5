import Glibc

/// The vote that counts for each deduplication key, kept while the input streams by.
///
/// Keys are interned (device ids and event ids once each, jokes by their `Tally` entry), and
/// each key holds one 32-byte record in chunked storage (no copying as it grows), found
/// through a 4-byte slot table kept at most 70 % full: about 38–44 bytes per distinct key.
///
/// Exports list a device's events together (they are sorted by document id, which starts with
/// the device id), so the table remembers the current device's jokes: a repeated pair is found
/// without touching the big table, and a device seen for the first time cannot already have a
/// pair there, so its pairs are inserted without a search. Input in any other order is still
/// exact, only slower.
public final class LatestVotes: @unchecked Sendable {
    /// A candidate vote. Comparison picks the winner: latest timestamp, then later input.
    struct Vote {
        var seconds: Int64
        var order: UInt64
        /// Owner index (device or event id) in the high half, joke entry in the low half.
        var key: UInt64
        var nanoseconds: Int32
        /// Index into `ratingValues`: most exports hold five distinct ratings, so 4 bytes
        /// stand in for an 8-byte double.
        var rating: UInt32

        /// Whether `self` beats `other` for the same key.
        @inline(__always) func beats(_ other: Vote) -> Bool {
            if seconds != other.seconds { return seconds > other.seconds }
            if nanoseconds != other.nanoseconds { return nanoseconds > other.nanoseconds }
            return order > other.order
        }
    }

    /// Device ids (device mode) or event ids (id mode).
    let owners = ByteInterner()
    /// In id mode the owner alone is the key; in device mode the (device, joke) pair is.
    private let keyedByOwnerOnly: Bool

    /// The last owner looked up, its index, and whether it was new then.
    private var lastOwner: UnsafeBufferPointer<UInt8>?
    private var lastOwnerIndex: UInt64 = 0
    private var lastOwnerIsNew = false
    /// The last owner's keys so far as (joke entry, vote index), while there are few of them.
    private var recent: UnsafeMutablePointer<(joke: UInt32, vote: UInt32)>
    private var recentCount = 0
    private static let recentCapacity = 64

    /// Distinct rating values; 1...5 sit at indexes 0...4 from the start.
    private var ratingValues: [Double] = [1, 2, 3, 4, 5]
    private var ratingIndex: [Double: UInt32] = [:]

    private static let chunkShift = 16
    private static let chunkSize = 1 << chunkShift
    private var chunks: UnsafeMutablePointer<UnsafeMutablePointer<Vote>?>
    private var chunkCapacity = 64
    public private(set) var count = 0
    private var slots: UnsafeMutablePointer<UInt32>
    private var slotMask: Int

    init(keyedByOwnerOnly: Bool) {
        self.keyedByOwnerOnly = keyedByOwnerOnly
        slotMask = 1023
        slots = PageMemory.allocate(UInt32.self, count: slotMask + 1)
        chunks = .allocate(capacity: chunkCapacity)
        chunks.initialize(repeating: nil, count: chunkCapacity)
        recent = .allocate(capacity: Self.recentCapacity)
    }

    deinit {
        PageMemory.deallocate(slots, count: slotMask + 1)
        for c in 0..<chunkCapacity {
            if let chunk = chunks[c] { PageMemory.deallocate(chunk, count: Self.chunkSize) }
        }
        chunks.deallocate()
        recent.deallocate()
    }

    @inline(__always) private func vote(_ i: Int) -> UnsafeMutablePointer<Vote> {
        chunks[i >> Self.chunkShift].unsafelyUnwrapped + (i & (Self.chunkSize - 1))
    }

    @inline(__always) private func index(ofRating rating: Double) -> UInt32 {
        if rating == rating.rounded() { return UInt32(rating) - 1 }
        if let i = ratingIndex[rating] { return i }
        let i = UInt32(ratingValues.count)
        ratingValues.append(rating)
        ratingIndex[rating] = i
        return i
    }

    /// Offers a vote by `owner` for joke entry `joke`; keeps it if it beats the current one.
    @inline(__always)
    func offer(owner: UnsafeBufferPointer<UInt8>, joke: Int, timestamp: Timestamp?, order: UInt64, rating: Double) {
        if let last = lastOwner, last.count == owner.count,
           memcmp(last.baseAddress!, owner.baseAddress!, owner.count) == 0 {
            // Same owner as the line before.
        } else {
            let (index, isNew) = owners.intern(owner)
            // The interner's copy never moves, so it can stand in for the caller's bytes.
            lastOwner = owners.withKey(index) { $0 }
            lastOwnerIndex = UInt64(index)
            lastOwnerIsNew = isNew
            recentCount = 0
        }
        // No readable timestamp is older than any readable one.
        let candidate = Vote(seconds: timestamp?.seconds ?? .min, order: order,
                             key: lastOwnerIndex << 32 | UInt64(joke), nanoseconds: timestamp?.nanoseconds ?? -1,
                             rating: index(ofRating: rating))
        let lookupJoke = keyedByOwnerOnly ? 0 : UInt32(joke)
        for r in 0..<min(recentCount, Self.recentCapacity) where recent[r].joke == lookupJoke {
            let v = vote(Int(recent[r].vote))
            if candidate.beats(v.pointee) { v.pointee = candidate }
            return
        }
        let at: Int
        if lastOwnerIsNew && recentCount <= Self.recentCapacity {
            // Every key of this owner so far is in `recent`: this one is new to the table.
            at = append(candidate, probeFrom: slot(for: lookupKey(candidate.key)))
        } else {
            at = offer(candidate)
        }
        if recentCount < Self.recentCapacity { recent[recentCount] = (lookupJoke, UInt32(at)) }
        recentCount += 1
    }

    @inline(__always)
    private func lookupKey(_ key: UInt64) -> UInt64 { keyedByOwnerOnly ? key >> 32 : key }

    @inline(__always)
    private func slot(for lookup: UInt64) -> Int {
        var h = lookup &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        return Int(truncatingIfNeeded: h) & slotMask
    }

    /// Looks `candidate`'s key up and keeps the winner; returns the key's vote index.
    @inline(__always)
    @discardableResult
    private func offer(_ candidate: Vote) -> Int {
        let lookup = lookupKey(candidate.key)
        var i = slot(for: lookup)
        while true {
            let s = slots[i]
            if s == 0 { break }
            let at = Int(s &- 1)
            let v = vote(at)
            if lookupKey(v.pointee.key) == lookup {
                if candidate.beats(v.pointee) { v.pointee = candidate }
                return at
            }
            i = (i &+ 1) & slotMask
        }
        return append(candidate, probeFrom: i)
    }

    /// Stores a vote whose key is not in the table, in the first empty slot from `slot` on.
    @inline(__always)
    private func append(_ candidate: Vote, probeFrom slot: Int) -> Int {
        var i = slot
        while slots[i] != 0 { i = (i &+ 1) & slotMask }
        let c = count >> Self.chunkShift
        if c == chunkCapacity {
            let bigger = UnsafeMutablePointer<UnsafeMutablePointer<Vote>?>.allocate(capacity: chunkCapacity * 2)
            bigger.initialize(repeating: nil, count: chunkCapacity * 2)
            bigger.update(from: chunks, count: chunkCapacity)
            chunks.deallocate()
            chunks = bigger
            chunkCapacity *= 2
        }
        if chunks[c] == nil { chunks[c] = PageMemory.allocate(Vote.self, count: Self.chunkSize) }
        let at = count
        vote(at).initialize(to: candidate)
        count += 1
        slots[i] = UInt32(count)
        if count * 10 > slotMask * 7 { resize(toHold: count) }
        return at
    }

    /// Grows the slot table to hold `keys` keys under 70 % load.
    private func resize(toHold keys: Int) {
        var newMask = slotMask
        while keys * 10 > newMask * 7 { newMask = newMask * 2 + 1 }
        guard newMask != slotMask else { return }
        PageMemory.deallocate(slots, count: slotMask + 1)
        slots = PageMemory.allocate(UInt32.self, count: newMask + 1)
        slotMask = newMask
        for e in 0..<count {
            var i = slot(for: lookupKey(vote(e).pointee.key))
            while slots[i] != 0 { i = (i &+ 1) & slotMask }
            slots[i] = UInt32(e + 1)
        }
    }

    /// Moves `other`'s votes in, renumbering its owners, jokes and ratings into this table's
    /// and `tally`'s. `other` is emptied chunk by chunk as it goes, so the two never both
    /// hold everything.
    func merge(_ other: LatestVotes, otherTally: Tally, into tally: Tally) {
        var ownerMap = [UInt64](repeating: 0, count: other.owners.count)
        for o in 0..<other.owners.count {
            ownerMap[o] = UInt64(other.owners.withKey(o) { owners.intern($0).index })
        }
        var jokeMap = [UInt64](repeating: 0, count: otherTally.jokeCount)
        for j in 0..<otherTally.jokeCount {
            jokeMap[j] = UInt64(otherTally.withID(j) { tally.entry(for: $0) })
        }
        other.owners.removeAll()
        other.lastOwner = nil
        lastOwner = nil
        let ratingMap = other.ratingValues.map { index(ofRating: $0) }
        // One resize to the final size now, rather than several on the way.
        resize(toHold: count + other.count)
        PageMemory.deallocate(other.slots, count: other.slotMask + 1)
        other.slotMask = 0
        other.slots = PageMemory.allocate(UInt32.self, count: 1)
        for e in 0..<other.count {
            var v = other.vote(e).pointee
            v.key = ownerMap[Int(v.key >> 32)] << 32 | jokeMap[Int(v.key & 0xFFFF_FFFF)]
            v.rating = ratingMap[Int(v.rating)]
            offer(v)
            if (e + 1) & (Self.chunkSize - 1) == 0 || e + 1 == other.count {
                let c = e >> Self.chunkShift
                if let chunk = other.chunks[c] { PageMemory.deallocate(chunk, count: Self.chunkSize) }
                other.chunks[c] = nil
            }
        }
        other.count = 0
    }

    /// Counts each winning vote in `tally`.
    func countWinners(into tally: Tally) {
        for e in 0..<count {
            let v = vote(e).pointee
            tally.add(entry: Int(v.key & 0xFFFF_FFFF), rating: ratingValues[Int(v.rating)])
        }
    }
}
