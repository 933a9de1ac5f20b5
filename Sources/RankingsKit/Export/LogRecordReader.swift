import CKernels
import Glibc

/// Receives the records a `LogRecordReader` owns, in file order.
protocol LogRecordVisitor: ~Copyable {
    /// `bytes` is valid only during the call; `offset` is the file offset of the record's first
    /// fragment header.
    mutating func record(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(InputError)
}

/// Reads the records of one log file whose first fragment starts in a range of whole blocks.
///
/// A range owns the records that begin inside it: it skips the continuation of a record begun in
/// the block before it, and reads past its own end to finish its last record, so ranges cut at
/// any block boundaries deliver every record exactly once (as line ranges do for NDJSON).
///
/// Any damage is fatal (`InputError.corruptExport` with the file offset): LevelDB's reader skips
/// damage to recover a database; an export with damage must not produce a smaller leaderboard.
struct LogRecordReader: ~Copyable {
    let fd: Int32
    let path: String
    let fileSize: Int64
    private let buffers: LogReadBuffers
    private var chunk: UnsafeMutableRawPointer { buffers.chunk }

    /// Blocks read per `pread`: 256 KiB, as the line reader's chunk. Large enough that the
    /// call is small beside the work on its bytes, small enough to stay in the L2 cache.
    static let chunkBlocks = 8

    /// `buffers` may be shared with other readers used one after another on the same thread
    /// (a worker's ranges), never at the same time.
    init(fd: Int32, path: String, fileSize: Int64, buffers: LogReadBuffers = LogReadBuffers()) {
        self.fd = fd
        self.path = path
        self.fileSize = fileSize
        self.buffers = buffers
    }

    static func blockCount(fileSize: Int64) -> Int64 {
        (fileSize + Int64(LogFormat.blockSize) - 1) / Int64(LogFormat.blockSize)
    }

    /// Where the reader is in the fragment sequence.
    private enum Phase {
        /// At the start of a range: the record begun before it is someone else's; skip its
        /// MIDDLE and LAST fragments.
        case skipping
        /// Between records: the next fragment must be FULL or FIRST.
        case between
        /// Inside a record begun at `start` (the file offset of its FIRST header).
        case inside(start: Int64)
    }

    /// Reads the records that begin in blocks `blocks`, returning how many there were.
    mutating func read<V: LogRecordVisitor & ~Copyable>(blocks: Range<Int64>, into visitor: inout V) throws(InputError) -> Int {
        let total = Self.blockCount(fileSize: fileSize)
        guard blocks.lowerBound < min(blocks.upperBound, total) else { return 0 }
        var phase = Phase.between
        if blocks.lowerBound > 0, try endsInsideRecord(block: blocks.lowerBound - 1) {
            phase = .skipping
        }
        var records = 0
        var block = blocks.lowerBound
        while block < total {
            let loaded = Int(min(Int64(Self.chunkBlocks), total - block))
            let offset = block * Int64(LogFormat.blockSize)
            let bytes = Int(min(Int64(loaded * LogFormat.blockSize), fileSize - offset))
            try load(offset: offset, count: bytes)
            for i in 0..<loaded {
                let blockOffset = offset + Int64(i * LogFormat.blockSize)
                let count = min(LogFormat.blockSize, bytes - i * LogFormat.blockSize)
                let owned = block + Int64(i) < blocks.upperBound
                if !owned, case .between = phase { return records }
                if !owned, case .skipping = phase { return records }
                try readBlock(chunk + i * LogFormat.blockSize, count: count, at: blockOffset, owned: owned,
                              phase: &phase, records: &records, visitor: &visitor)
            }
            block += Int64(loaded)
        }
        if case .inside(let start) = phase {
            throw corrupt(start, "record cut short: the file ends inside the record that starts here")
        }
        return records
    }

    private mutating func readBlock<V: LogRecordVisitor & ~Copyable>(
        _ base: UnsafeMutableRawPointer, count: Int, at blockOffset: Int64, owned: Bool,
        phase: inout Phase, records: inout Int, visitor: inout V
    ) throws(InputError) {
        // Headers first, then every checksum of the block in one call (three fragments at a
        // time), then the fragments in order. Damage is still reported where the walk meets
        // it: a fragment's bad checksum when the walk reaches that fragment, a bad header after
        // the fragments before it; fragments past where the walk stops are never reported.
        // A local reference: Swift 6.3's ThreadSanitizer build crashed the compiler ("Invalid
        // bitcast") on an access to `self.buffers.joined` from this ~Copyable reader.
        let buffers = self.buffers
        let (fragments, damage) = scan(base, count: count, at: blockOffset)
        rk_log_fragment_checksums(base, buffers.fragments, fragments)
        let table = buffers.fragments
        for k in 0..<fragments {
            let fragment = table[k]
            let pos = Int(fragment.data) - LogFormat.headerSize
            let here = blockOffset + Int64(pos)
            let length = Int(fragment.length)
            // Most fragments are whole records, intact, between records of the range.
            if fragment.type == RK_LOG_FULL, owned, case .between = phase, fragment.checksum == fragment.stored {
                records += 1
                try visitor.record(UnsafeRawBufferPointer(start: base + Int(fragment.data), count: length), offset: here)
                continue
            }
            let header = Header(type: LogFormat.FragmentType(fragment.type).unsafelyUnwrapped, length: length)
            if fragment.checksum != fragment.stored {
                throw corrupt(here, "checksum mismatch in a \(length)-byte \(header.type.name) fragment")
            }
            let data = UnsafeRawPointer(base + Int(fragment.data))
            switch (header.type, phase) {
            case (.zero, _):
                return
            case (.full, .between), (.first, .between):
                // A record that begins past the range's end is the next range's.
                if !owned { return }
                if header.type == .full {
                    records += 1
                    try visitor.record(UnsafeRawBufferPointer(start: data, count: length), offset: here)
                } else {
                    // Only a record cut into fragments is copied; a FULL one is read in place.
                    buffers.joined.removeAll()
                    buffers.joined.append(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: length))
                    phase = .inside(start: here)
                }
            case (.middle, .skipping):
                break
            case (.last, .skipping):
                phase = .between
            case (.middle, .inside):
                buffers.joined.append(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: length))
            case (.last, .inside(let start)):
                buffers.joined.append(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: length))
                records += 1
                phase = .between
                let joined = UnsafeRawBufferPointer(start: buffers.joined.base, count: buffers.joined.count)
                try visitor.record(joined, offset: start)
            case (.middle, .between), (.last, .between):
                throw corrupt(here, "a \(header.type.name) fragment with no FIRST fragment before it")
            case (.full, .skipping), (.first, .skipping):
                throw corrupt(here, "a \(header.type.name) fragment where the record begun in the block before continues")
            case (.full, .inside(let start)), (.first, .inside(let start)):
                throw corrupt(here, "a \(header.type.name) fragment inside the record that starts at byte \(start)")
            }
        }
        if let damage { throw damage }
    }

    /// Reads the block's headers into `buffers.fragments`, up to its zero trailer or its end,
    /// or up to the first damaged header, which is returned (not thrown: the fragments before
    /// it are read first). Checksums are not checked here.
    private func scan(_ base: UnsafeMutableRawPointer, count: Int, at blockOffset: Int64) -> (Int, InputError?) {
        // The plain headers in C; whatever it stops at (the trailer, damage) is read here.
        var found = 0
        var pos = rk_log_scan_headers(base.assumingMemoryBound(to: UInt8.self), count, buffers.fragments, &found)
        var fragments = found
        while pos < count {
            let header: Header
            do throws(InputError) {
                guard let found = try self.header(base, pos: pos, count: count, at: blockOffset, checksum: false) else { break }
                header = found
            } catch {
                return (fragments, error)
            }
            buffers.fragments[fragments] = rk_log_fragment(
                data: UInt32(pos + LogFormat.headerSize), length: UInt32(header.length), checksum: 0,
                type: header.type.raw, stored: header.stored)
            fragments += 1
            pos += LogFormat.headerSize + header.length
        }
        return (fragments, nil)
    }

    private struct Header {
        var type: LogFormat.FragmentType
        var length: Int
        var stored: UInt32 = 0
    }

    /// The checked header at `pos`, or nil where the block's remaining bytes are a zero trailer
    /// (or zero padding after a zero-type header); its fragment's checksum checked too unless
    /// `checksum` is false (the caller checks it later).
    private func header(_ base: UnsafeMutableRawPointer, pos: Int, count: Int, at blockOffset: Int64,
                        checksum: Bool = true) throws(InputError) -> Header? {
        let here = blockOffset + Int64(pos)
        let left = count - pos
        let atFileEnd = blockOffset + Int64(count) == fileSize
        if left < LogFormat.headerSize {
            if allZero(base + pos, left) { return nil }
            throw corrupt(here, atFileEnd && count < LogFormat.blockSize
                ? "record header cut short: the file ends \(left) bytes into it"
                : "non-zero bytes in the block's \(left)-byte trailer")
        }
        let p = UnsafeRawPointer(base + pos)
        let stored = UInt32(p.load(as: UInt8.self)) | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
            | UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) << 16 | UInt32(p.load(fromByteOffset: 3, as: UInt8.self)) << 24
        let length = Int(p.load(fromByteOffset: 4, as: UInt8.self)) | Int(p.load(fromByteOffset: 5, as: UInt8.self)) << 8
        let rawType = p.load(fromByteOffset: 6, as: UInt8.self)
        guard let type = LogFormat.FragmentType(rawType) else {
            throw corrupt(here, "impossible fragment type \(rawType)")
        }
        if type == .zero {
            if allZero(base + pos, left) { return nil }
            throw corrupt(here, "non-zero bytes after a zero-type header (only zeros may follow one to the block's end)")
        }
        if length > left - LogFormat.headerSize {
            if atFileEnd && count < LogFormat.blockSize {
                throw corrupt(here, "record cut short: a \(length)-byte fragment, but the file ends \(left - LogFormat.headerSize) bytes after its header")
            }
            throw corrupt(here, "impossible fragment length \(length): \(left - LogFormat.headerSize) bytes are left in the block")
        }
        if checksum && LogFormat.checksum(type: rawType, p + LogFormat.headerSize, count: length) != stored {
            throw corrupt(here, "checksum mismatch in a \(length)-byte \(type.name) fragment")
        }
        return Header(type: type, length: length, stored: stored)
    }

    /// Whether the last fragment of `block` leaves a record open (FIRST or MIDDLE), after
    /// checking every header in the block as the reader would.
    private mutating func endsInsideRecord(block: Int64) throws(InputError) -> Bool {
        let offset = block * Int64(LogFormat.blockSize)
        let count = Int(min(Int64(LogFormat.blockSize), fileSize - offset))
        try load(offset: offset, count: count)
        var pos = 0
        var open = false
        while pos < count {
            guard let header = try header(chunk, pos: pos, count: count, at: offset) else { break }
            open = header.type == .first || header.type == .middle
            pos += LogFormat.headerSize + header.length
        }
        return open
    }

    private func load(offset: Int64, count: Int) throws(InputError) {
        var done = 0
        while done < count {
            let n = pread(fd, chunk + done, count - done, off_t(offset + Int64(done)))
            if n > 0 { done += n; continue }
            if n == 0 {
                throw corrupt(offset + Int64(done), "record cut short: the file ended while being read (\(fileSize) bytes when opened)")
            }
            if errno == EINTR { continue }
            throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }

    private func allZero(_ p: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: p, count: count)
        return !bytes.contains { $0 != 0 }
    }

    private func corrupt(_ offset: Int64, _ reason: String) -> InputError {
        .corruptExport(path: path, offset: offset, reason: reason)
    }
}

/// A log reader's memory, kept apart from the reader so one thread's successive readers (one
/// per range) share it: the read buffer, and the record joined from its fragments.
final class LogReadBuffers {
    /// `LogRecordReader.chunkBlocks` blocks, 64-byte aligned.
    let chunk = UnsafeMutableRawPointer.allocate(byteCount: LogRecordReader.chunkBlocks * LogFormat.blockSize, alignment: 64)
    /// A record cut into fragments, joined; grows to the longest such record met.
    var joined = ByteBuffer(capacity: LogFormat.blockSize)
    /// One block's fragments, as many as fit (every one a bare 7-byte header at the most).
    let fragments = UnsafeMutablePointer<rk_log_fragment>.allocate(capacity: LogFormat.blockSize / LogFormat.headerSize + 1)
    /// This worker's entity picks and templates, kept across ranges and files: an export's
    /// files share their layouts.
    let entity = EntityScratch()

    deinit {
        chunk.deallocate()
        fragments.deallocate()
    }
}
