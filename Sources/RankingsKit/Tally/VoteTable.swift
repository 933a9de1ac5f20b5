/// A candidate vote. Comparison picks the winner: latest timestamp, then, in device mode, the
/// higher rating between equal timestamps, so the winner's joke and rating never depend on the
/// order of the input (a REST fetch is in name order, an export is not); then input order.
struct Vote {
    var seconds: Int64
    /// Input order: in id mode the rule; in device mode the last resort, between votes of the
    /// same key, instant and rating, which count alike whichever is kept.
    var order: UInt64
    /// Owner index (device or event id) in the high half, joke entry in the low half.
    var key: UInt64
    var nanoseconds: Int32
    /// Index into the table's `RatingValues`: most exports hold five, so 4 bytes stand in for
    /// an 8-byte double.
    var rating: UInt32

    /// Whether `self` beats `other` for the same key; `ratings` (the indexes' values) break
    /// ties of instant, or nil when input order does.
    @inline(__always) func beats(_ other: Vote, _ ratings: RatingValues?) -> Bool {
        if seconds != other.seconds { return seconds > other.seconds }
        if nanoseconds != other.nanoseconds { return nanoseconds > other.nanoseconds }
        if let ratings, rating != other.rating { return ratings[rating] > ratings[other.rating] }
        return order > other.order
    }
}

/// The distinct rating values of one `LatestVotes`, numbered as they come; 1...5 sit at
/// indexes 0...4 from the start. Shared with its tables, which compare votes by value.
///
/// A value, once stored, never moves (chunks of 8, 16, 32… values, allocated as needed under
/// a directory of fixed size): the run's table gains values while a worker is renumbered into
/// it, under the shared lock, while other workers compare votes of its partitions under
/// theirs, reading only values stored before.
final class RatingValues: @unchecked Sendable {
    private static let chunks = 29 // 8 · (2^29 − 1) values: about every UInt32 index
    private let directory: UnsafeMutablePointer<UnsafeMutablePointer<Double>?>
    private(set) var count = 0
    private var indexes: [Double: UInt32] = [:]

    init() {
        directory = .allocate(capacity: Self.chunks)
        directory.initialize(repeating: nil, count: Self.chunks)
        for rating in 1...5 { _ = append(Double(rating)) }
    }

    deinit {
        for c in 0..<Self.chunks { directory[c]?.deallocate() }
        directory.deallocate()
    }

    /// Chunk `c` holds indexes 8 · (2^c − 1) ..< 8 · (2^(c+1) − 1).
    @inline(__always) private func slot(_ index: Int) -> (chunk: Int, offset: Int) {
        let n = index / 8 + 1
        let chunk = Int.bitWidth - 1 - n.leadingZeroBitCount
        return (chunk, index - 8 * ((1 << chunk) - 1))
    }

    @inline(__always) subscript(index: UInt32) -> Double {
        let (chunk, offset) = slot(Int(index))
        return directory[chunk].unsafelyUnwrapped[offset]
    }

    var all: [Double] { (0..<count).map { self[UInt32($0)] } }

    @inline(__always) func index(of rating: Double) -> UInt32 {
        if rating == rating.rounded() { return UInt32(rating) - 1 }
        if let i = indexes[rating] { return i }
        let i = append(rating)
        indexes[rating] = i
        return i
    }

    private func append(_ rating: Double) -> UInt32 {
        let (chunk, offset) = slot(count)
        if directory[chunk] == nil { directory[chunk] = .allocate(capacity: 8 << chunk) }
        directory[chunk].unsafelyUnwrapped[offset] = rating
        count += 1
        return UInt32(count - 1)
    }
}

/// One partition of `LatestVotes`: 32-byte votes in fixed chunks that never move (so a vote
/// can be held by pointer), found through a 4-byte slot table kept at most 70 % full.
///
/// A worker's table is bounded: it holds at most `limit` votes, in one chunk of just that
/// size, which it keeps while it is emptied and refilled: a full-size chunk (2 MiB, a huge
/// page) per partition would add megabytes per thread that the bound never needs.
final class VoteTable: @unchecked Sendable {
    private static let chunkShift = 16
    private static let chunkSize = 1 << chunkShift
    /// Votes each chunk is allocated for: `chunkSize`, or a bounded table's `limit`.
    private let chunkLength: Int
    /// A bounded table's most votes; `Int.max` for the run's.
    private let limit: Int
    private var chunks: UnsafeMutablePointer<UnsafeMutablePointer<Vote>?>
    private var chunkCapacity = 16
    private(set) var count = 0
    private var slots: UnsafeMutablePointer<UInt32>
    private var slotMask: Int
    /// In id mode the owner alone is the key; in device mode the (device, joke) pair is.
    private let keyedByOwnerOnly: Bool

    /// The owning `LatestVotes`' rating values when they break ties (`Vote.beats`).
    private let ratingOrder: RatingValues?

    init(keyedByOwnerOnly: Bool, ratingOrder: RatingValues?, limit: Int? = nil) {
        self.keyedByOwnerOnly = keyedByOwnerOnly
        self.ratingOrder = ratingOrder
        self.limit = limit ?? .max
        chunkLength = min(limit ?? Self.chunkSize, Self.chunkSize)
        slotMask = 255
        slots = PageMemory.allocate(UInt32.self, count: slotMask + 1)
        chunks = .allocate(capacity: chunkCapacity)
        chunks.initialize(repeating: nil, count: chunkCapacity)
    }

    deinit {
        releaseSlots()
        for c in 0..<chunkCapacity {
            if let chunk = chunks[c] { PageMemory.deallocate(chunk, count: chunkLength) }
        }
        chunks.deallocate()
    }

    private func releaseSlots() {
        if slotMask >= 0 { PageMemory.deallocate(slots, count: slotMask + 1) }
        slotMask = -1
    }

    /// Whether a bounded table holds its most votes and must be emptied before the next one.
    @inline(__always) var isFull: Bool { count >= limit }

    @inline(__always) func vote(_ i: Int) -> UnsafeMutablePointer<Vote> {
        chunks[i >> Self.chunkShift].unsafelyUnwrapped + (i & (Self.chunkSize - 1))
    }

    @inline(__always) private func lookupKey(_ key: UInt64) -> UInt64 { keyedByOwnerOnly ? key >> 32 : key }

    @inline(__always) private func slot(for lookup: UInt64) -> Int {
        var h = lookup &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        return Int(truncatingIfNeeded: h) & slotMask
    }

    /// Looks `candidate`'s key up and keeps the winner; returns the key's vote.
    @inline(__always)
    @discardableResult
    func offer(_ candidate: Vote) -> UnsafeMutablePointer<Vote> {
        let lookup = lookupKey(candidate.key)
        var i = slot(for: lookup)
        while true {
            let s = slots[i]
            if s == 0 { break }
            let v = vote(Int(s &- 1))
            if lookupKey(v.pointee.key) == lookup {
                if candidate.beats(v.pointee, ratingOrder) { v.pointee = candidate }
                return v
            }
            i = (i &+ 1) & slotMask
        }
        return append(candidate, probeFrom: i)
    }

    /// Stores a vote whose key is known not to be in the table.
    @inline(__always)
    func insertNew(_ candidate: Vote) -> UnsafeMutablePointer<Vote> {
        append(candidate, probeFrom: slot(for: lookupKey(candidate.key)))
    }

    @inline(__always)
    private func append(_ candidate: Vote, probeFrom slot: Int) -> UnsafeMutablePointer<Vote> {
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
        // A bounded table's one chunk holds `limit` votes, and its owner empties it when full.
        precondition(count < limit, "a bounded vote table was not emptied when full")
        if chunks[c] == nil { chunks[c] = PageMemory.allocate(Vote.self, count: chunkLength) }
        let v = vote(count)
        v.initialize(to: candidate)
        count += 1
        slots[i] = UInt32(count)
        if count * 10 > slotMask * 7 { resize(toHold: count) }
        return v
    }

    /// Grows the slot table to hold `keys` keys under 70 % load.
    func resize(toHold keys: Int) {
        var newMask = max(slotMask, 255)
        while keys * 10 > newMask * 7 { newMask = newMask * 2 + 1 }
        guard newMask != slotMask else { return }
        releaseSlots()
        slots = PageMemory.allocate(UInt32.self, count: newMask + 1)
        slotMask = newMask
        for e in 0..<count {
            var i = slot(for: lookupKey(vote(e).pointee.key))
            while slots[i] != 0 { i = (i &+ 1) & slotMask }
            slots[i] = UInt32(e + 1)
        }
    }

    /// Moves `other`'s votes in, renumbered by `renumber`, and leaves `other` empty and usable
    /// again. A bounded `other` keeps its memory for the next votes; an unbounded one is freed
    /// as it goes, so the two tables' peaks do not add up.
    func absorb(_ other: VoteTable, renumber: (inout Vote) -> Void) {
        resize(toHold: count + other.count)
        let bounded = other.limit != .max
        if bounded {
            other.slots.update(repeating: 0, count: other.slotMask + 1)
        } else {
            other.releaseSlots()
        }
        for e in 0..<other.count {
            var v = other.vote(e).pointee
            renumber(&v)
            offer(v)
            if !bounded && ((e + 1) & (Self.chunkSize - 1) == 0 || e + 1 == other.count) {
                let c = e >> Self.chunkShift
                if let chunk = other.chunks[c] { PageMemory.deallocate(chunk, count: other.chunkLength) }
                other.chunks[c] = nil
            }
        }
        other.count = 0
        if !bounded {
            other.slotMask = 255
            other.slots = PageMemory.allocate(UInt32.self, count: other.slotMask + 1)
        }
    }

    func forEach(_ body: (Vote) -> Void) {
        for e in 0..<count { body(vote(e).pointee) }
    }
}
