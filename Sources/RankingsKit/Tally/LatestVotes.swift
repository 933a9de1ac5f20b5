/// The vote that counts for each deduplication key, kept while the input streams by.
///
/// Keys are interned (device ids and event ids once each, jokes by their `Tally` entry), and
/// each key holds one 40-byte record in chunked storage (no copying as it grows), found through
/// a 4-byte slot table: about 48–56 bytes per distinct key.
public final class LatestVotes: @unchecked Sendable {
    /// A candidate vote. Comparison picks the winner: latest timestamp, then later input.
    struct Vote {
        var seconds: Int64
        var order: UInt64
        var rating: Double
        /// Device index in the high half and joke entry in the low half (device mode); the
        /// event-id index in the high half and the joke entry in the low half (id mode).
        var key: UInt64
        var nanoseconds: Int32

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

    private static let chunkShift = 16
    private var chunks: [UnsafeMutablePointer<Vote>] = []
    public private(set) var count = 0
    private var slots: UnsafeMutablePointer<UInt32>
    private var slotMask: Int

    init(keyedByOwnerOnly: Bool) {
        self.keyedByOwnerOnly = keyedByOwnerOnly
        slotMask = 1023
        slots = .allocate(capacity: slotMask + 1)
        slots.initialize(repeating: 0, count: slotMask + 1)
    }

    deinit {
        slots.deallocate()
        for chunk in chunks { chunk.deallocate() }
    }

    @inline(__always) private func vote(_ i: Int) -> UnsafeMutablePointer<Vote> {
        chunks[i >> Self.chunkShift] + (i & ((1 << Self.chunkShift) - 1))
    }

    /// Offers a vote by `owner` for joke entry `joke`; keeps it if it beats the current one.
    /// Returns true when the key was new.
    @inline(__always)
    @discardableResult
    func offer(owner: UnsafeBufferPointer<UInt8>, joke: Int, timestamp: Timestamp?, order: UInt64, rating: Double) -> Bool {
        let ownerIndex = UInt64(owners.intern(owner).index)
        // No readable timestamp is older than any readable one.
        let candidate = Vote(seconds: timestamp?.seconds ?? .min, order: order, rating: rating,
                             key: ownerIndex << 32 | UInt64(joke), nanoseconds: timestamp?.nanoseconds ?? -1)
        return offer(candidate)
    }

    @inline(__always)
    func offer(_ candidate: Vote) -> Bool {
        let lookup = keyedByOwnerOnly ? candidate.key >> 32 : candidate.key
        var h = lookup &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        var i = Int(truncatingIfNeeded: h) & slotMask
        while true {
            let s = slots[i]
            if s == 0 { break }
            let v = vote(Int(s &- 1))
            if (keyedByOwnerOnly ? v.pointee.key >> 32 : v.pointee.key) == lookup {
                if candidate.beats(v.pointee) { v.pointee = candidate }
                return false
            }
            i = (i &+ 1) & slotMask
        }
        if count >> Self.chunkShift == chunks.count {
            chunks.append(.allocate(capacity: 1 << Self.chunkShift))
        }
        vote(count).initialize(to: candidate)
        count += 1
        slots[i] = UInt32(count)
        if count * 2 > slotMask { rehash() }
        return true
    }

    private func rehash() {
        let newMask = slotMask * 2 + 1
        slots.deallocate()
        slots = .allocate(capacity: newMask + 1)
        slots.initialize(repeating: 0, count: newMask + 1)
        slotMask = newMask
        for e in 0..<count {
            let key = vote(e).pointee.key
            let lookup = keyedByOwnerOnly ? key >> 32 : key
            var h = lookup &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            var i = Int(truncatingIfNeeded: h) & slotMask
            while slots[i] != 0 { i = (i &+ 1) & slotMask }
            slots[i] = UInt32(e + 1)
        }
    }

    /// Moves `other`'s votes in, renumbering its owners and jokes into this table's and `tally`'s.
    func merge(_ other: LatestVotes, otherTally: Tally, into tally: Tally) {
        var ownerMap = [UInt64](repeating: 0, count: other.owners.count)
        for o in 0..<other.owners.count {
            ownerMap[o] = UInt64(other.owners.withKey(o) { owners.intern($0).index })
        }
        var jokeMap = [UInt64](repeating: 0, count: otherTally.jokeCount)
        for j in 0..<otherTally.jokeCount {
            jokeMap[j] = UInt64(otherTally.withID(j) { tally.entry(for: $0) })
        }
        for e in 0..<other.count {
            var v = other.vote(e).pointee
            v.key = ownerMap[Int(v.key >> 32)] << 32 | jokeMap[Int(v.key & 0xFFFF_FFFF)]
            _ = offer(v)
        }
    }

    /// Counts each winning vote in `tally`.
    func countWinners(into tally: Tally) {
        for e in 0..<count {
            let v = vote(e).pointee
            tally.add(entry: Int(v.key & 0xFFFF_FFFF), rating: v.rating)
        }
    }
}
