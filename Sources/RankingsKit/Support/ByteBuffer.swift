/// A growable byte buffer for scratch work (unescaped strings, number text, documents),
/// reused across lines so the hot loop allocates only when a buffer must grow.
struct ByteBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        // One spare byte so a C string terminator always fits.
        base = .allocate(capacity: self.capacity + 1)
    }

    deinit { base.deallocate() }

    @inline(__always) mutating func removeAll() { count = 0 }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let src = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (base + count).update(from: src, count: bytes.count)
        count += bytes.count
    }

    /// NUL-terminates the contents (not counted) for C functions such as `strtod`.
    mutating func terminate() { base[count] = 0 }

    func withBuffer<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity + 1)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
