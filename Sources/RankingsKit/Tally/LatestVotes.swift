import Glibc

/// The vote that counts for each deduplication key, kept while the input streams by.
///
/// Keys are interned (device ids and event ids once each, jokes by their `Tally` entry), and
/// each key holds one 32-byte vote in a `VoteTable`. The tables are partitioned by the hash of
/// the owner's bytes, which every thread computes alike, so merging a worker's votes into the
/// run's is one independent merge per partition, and no partition's slot table grows in one
/// step as large as a single table would.
///
/// Exports list a device's events together (they are sorted by document id, which starts with
/// the device id), so the table remembers the current device's votes: a repeated pair is found
/// without touching the big tables, and a device seen for the first time cannot already have
/// a pair there, so its pairs go in without a search. Input in any other order is still
/// exact, only slower.
final class LatestVotes: @unchecked Sendable {
    /// Device ids (device mode) or event ids (id mode).
    let owners = ByteInterner()
    private let keyedByOwnerOnly: Bool

    static let partitionBits = 2
    private let partitions: [VoteTable]

    /// The last owner looked up: its bytes (the interner's copy), index, partition, and
    /// whether it was new then.
    private var lastOwner: UnsafeBufferPointer<UInt8>?
    private var lastOwnerIndex: UInt64 = 0
    private var lastPartition: VoteTable
    private var lastOwnerIsNew = false
    /// The last owner's votes so far, by joke entry, while there are few of them.
    private var recent: UnsafeMutablePointer<(joke: UInt32, vote: UnsafeMutablePointer<Vote>)>
    private var recentCount = 0
    private static let recentCapacity = 64

    private let ratings: RatingValues
    /// What ties of instant are broken by: the ratings in device mode; nil in id mode, where
    /// the later in input order wins (of overlapping exports, the one named later).
    private let ratingOrder: RatingValues?

    /// Owner bytes before the table must be emptied (`TableBound`; `.max` for the run's table).
    private let ownerBytesLimit: Int

    /// - Parameter bound: a worker's votes are bounded (`isFull` tells when to empty them), the
    ///   run's are not.
    init(keyedByOwnerOnly: Bool, bound: TableBound = .unbounded) {
        self.keyedByOwnerOnly = keyedByOwnerOnly
        ownerBytesLimit = bound.keyBytes
        let perPartition = bound == .unbounded ? nil : max(1, bound.keys >> Self.partitionBits)
        let ratings = RatingValues()
        let ratingOrder = keyedByOwnerOnly ? nil : ratings
        self.ratings = ratings
        self.ratingOrder = ratingOrder
        partitions = (0..<(1 << Self.partitionBits)).map { _ in
            VoteTable(keyedByOwnerOnly: keyedByOwnerOnly, ratingOrder: ratingOrder, limit: perPartition)
        }
        lastPartition = partitions[0]
        recent = .allocate(capacity: Self.recentCapacity)
    }

    deinit { recent.deallocate() }

    var count: Int { partitions.reduce(0) { $0 + $1.count } }

    /// Whether the last vote brought the table to its bound: its owner must empty it (into the
    /// run's shared table) before the next vote. Only the last vote's partition can have filled.
    @inline(__always) var isFull: Bool { lastPartition.isFull || owners.storedBytes >= ownerBytesLimit }

    @inline(__always) private func partition(ofOwner index: Int, in interner: ByteInterner) -> Int {
        Int(truncatingIfNeeded: interner.hashOf(index) >> (64 - UInt64(Self.partitionBits)))
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
            lastPartition = partitions[partition(ofOwner: index, in: owners)]
            recentCount = 0
        }
        // No readable timestamp is older than any readable one.
        let candidate = Vote(seconds: timestamp?.seconds ?? .min, order: order,
                             key: lastOwnerIndex << 32 | UInt64(joke), nanoseconds: timestamp?.nanoseconds ?? -1,
                             rating: ratings.index(of: rating))
        let recentJoke = keyedByOwnerOnly ? 0 : UInt32(joke)
        for r in 0..<min(recentCount, Self.recentCapacity) where recent[r].joke == recentJoke {
            let v = recent[r].vote
            if candidate.beats(v.pointee, ratingOrder) { v.pointee = candidate }
            return
        }
        // Every key of a new owner so far is in `recent`, so this one is new to the table.
        let v = lastOwnerIsNew && recentCount <= Self.recentCapacity
            ? lastPartition.insertNew(candidate) : lastPartition.offer(candidate)
        if recentCount < Self.recentCapacity { recent[recentCount] = (recentJoke, v) }
        recentCount += 1
    }

    /// Moves `other`'s votes in, renumbering its owners, jokes and ratings into this table's
    /// and `tally`'s, partition by partition. `other` is left empty (its jokes stay in
    /// `otherTally` for the caller to empty).
    func merge(_ other: LatestVotes, otherTally: Tally, into tally: Tally) {
        let renumbering = renumbering(of: other, otherTally: otherTally, into: tally)
        for partition in 0..<partitions.count { absorb(partition, of: other, renumbering) }
    }

    /// How `other`'s owners, jokes and ratings are numbered here: the first half of a merge,
    /// which touches this table's interners and `tally` (so one thread at a time), and empties
    /// `other`'s owners.
    func renumbering(of other: LatestVotes, otherTally: Tally, into tally: Tally) -> Renumbering {
        var ownerMap = [UInt64](repeating: 0, count: other.owners.count)
        for o in 0..<other.owners.count {
            ownerMap[o] = UInt64(other.owners.withKey(o) { owners.intern($0, hash: other.owners.hashOf(o)).index })
        }
        var jokeMap = [UInt64](repeating: 0, count: otherTally.jokeCount)
        for j in 0..<otherTally.jokeCount { jokeMap[j] = UInt64(tally.entry(matching: j, of: otherTally)) }
        other.owners.removeAll()
        other.lastOwner = nil
        lastOwner = nil
        return Renumbering(owners: ownerMap, jokes: jokeMap, ratings: other.ratings.all.map { ratings.index(of: $0) })
    }

    struct Renumbering {
        let owners: [UInt64]
        let jokes: [UInt64]
        let ratings: [UInt32]
    }

    static var partitionCount: Int { 1 << partitionBits }

    /// The second half of a merge, one partition: touches only that partition of each table,
    /// so merges of different partitions may run at the same time.
    func absorb(_ partition: Int, of other: LatestVotes, _ r: Renumbering) {
        partitions[partition].absorb(other.partitions[partition]) { v in
            v.key = r.owners[Int(v.key >> 32)] << 32 | r.jokes[Int(v.key & 0xFFFF_FFFF)]
            v.rating = r.ratings[Int(v.rating)]
        }
    }

    /// Counts each winning vote in `tally`.
    func countWinners(into tally: Tally) {
        for table in partitions {
            table.forEach { v in tally.add(entry: Int(v.key & 0xFFFF_FFFF), rating: ratings[v.rating]) }
        }
    }
}
