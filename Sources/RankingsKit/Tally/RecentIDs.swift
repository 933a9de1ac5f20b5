/// A small direct-mapped cache in front of a tally's interner: ids of 8 to 24 bytes (a
/// Firestore document id is 20) with their entry, held whole in one 32-byte line.
///
/// Why: the interner finds an id through a chain of dependent loads (the slot, then the
/// entry's hash, length and start, then the stored bytes), and the input streaming through
/// the cache between two events pushes those tables out of L1, so each link waits on L2,
/// even when the input holds only a few hundred distinct jokes. A hit here is one load,
/// after one multiply.
///
/// A line holds the id's first 8 bytes, bytes 8...15 (when it is longer than 16) and its last
/// 8 bytes, with its length: for 8...24 bytes those words cover every byte, so a line that
/// matches all four is the same id.
struct RecentIDs: ~Copyable {
    private struct Line {
        var first: UInt64
        var middle: UInt64
        var last: UInt64
        /// The entry + 1 (0: an empty line), and the id's length.
        var entry: UInt32
        var length: UInt32
    }

    private static let lineCount = 4096
    private let lines: UnsafeMutablePointer<Line>

    /// From `PageMemory`, whose pages come zeroed (every line empty) and take no memory until a
    /// line on them is used: the run's combined tally, filled by merges only, never uses one.
    init() {
        lines = PageMemory.allocate(Line.self, count: Self.lineCount)
    }

    deinit { PageMemory.deallocate(lines, count: Self.lineCount) }

    /// Where `id` would sit, and its words; nil for an id this cache does not hold.
    @inline(__always)
    private func place(_ id: UnsafeBufferPointer<UInt8>) -> (line: Int, first: UInt64, middle: UInt64, last: UInt64)? {
        let n = id.count
        guard n >= 8, n <= 24, let base = id.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        let first = raw.loadUnaligned(as: UInt64.self)
        let middle = n > 16 ? raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self) : 0
        let last = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        let mixed = (first ^ (middle &* 0x9E37_79B9_7F4A_7C15) ^ (last >> 3) ^ UInt64(n)) &* 0xD6E8_FEB8_6659_FD93
        return (Int(truncatingIfNeeded: mixed >> 52), first, middle, last)
    }

    /// The entry cached for `id`, or nil.
    @inline(__always)
    func entry(for id: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let (i, first, middle, last) = place(id) else { return nil }
        let line = lines[i]
        guard line.length == UInt32(id.count) && line.first == first && line.last == last && line.middle == middle
        else { return nil }
        return Int(line.entry) - 1
    }

    /// Remembers `id`'s entry, in place of whatever its line held.
    @inline(__always)
    func remember(_ id: UnsafeBufferPointer<UInt8>, entry: Int) {
        guard let (i, first, middle, last) = place(id) else { return }
        lines[i] = Line(first: first, middle: middle, last: last, entry: UInt32(truncatingIfNeeded: entry + 1),
                        length: UInt32(id.count))
    }

    /// Forgets every id (the tally's entries were emptied).
    func removeAll() {
        lines.update(repeating: Line(first: 0, middle: 0, last: 0, entry: 0, length: 0), count: Self.lineCount)
    }
}
