import Glibc

/// Large tables straight from the kernel, on huge pages where it offers them.
///
/// - Freeing gives the memory back at once. (malloc raises its mmap threshold after the
///   first large free, after which big blocks come from arenas that rarely shrink, so a
///   deduplicating run that frees one worker's table while growing another's would hold
///   both.)
/// - Blocks of 2 MiB and more are aligned to 2 MiB and marked for transparent huge pages:
///   the deduplication tables are read at random, and with 4 KiB pages most lookups would
///   also miss the TLB.
enum PageMemory {
    private static let hugePage = 2 << 20

    static func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let bytes = size(count, T.self)
        let huge = bytes >= hugePage
        let mapped = huge ? bytes + hugePage : bytes
        // Anonymous pages come zeroed, which is the empty state of every table here.
        guard let raw = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != MAP_FAILED else {
            fatalError("out of memory: cannot map \(bytes) bytes")
        }
        var start = raw
        if huge {
            let address = Int(bitPattern: raw)
            let aligned = (address + hugePage - 1) & ~(hugePage - 1)
            let head = aligned - address
            if head > 0 { munmap(raw, head) }
            let tail = mapped - head - bytes
            start = UnsafeMutableRawPointer(bitPattern: aligned)!
            if tail > 0 { munmap(start + bytes, tail) }
            madvise(start, bytes, MADV_HUGEPAGE)
        }
        return start.bindMemory(to: T.self, capacity: count)
    }

    static func deallocate<T>(_ pointer: UnsafeMutablePointer<T>, count: Int) {
        munmap(UnsafeMutableRawPointer(pointer), size(count, T.self))
    }

    private static func size<T>(_ count: Int, _: T.Type) -> Int {
        let bytes = max(1, count * MemoryLayout<T>.stride)
        return (bytes + 4095) & ~4095
    }
}
