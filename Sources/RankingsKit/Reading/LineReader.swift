import Glibc

/// Receives the lines a `LineReader` hands out.
protocol LineConsumer: ~Copyable {
    /// One line, without its `\n`. The byte at `end` is `\n` and `LineReader.padding` bytes
    /// after it are readable: the contract `JSONLineScanner` relies on.
    mutating func line(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, number: Int, offset: Int64)
    /// A line longer than `LineReader.maxLineLength`, skipped without being held in memory.
    mutating func overlongLine(number: Int, offset: Int64)
    /// The line that starts at `start` and ends at the first `\n` after it; a `\n` sits at
    /// `dataEnd` at the latest (a sentinel after the data read so far, unless `final`).
    /// Handles the line and returns its `\n`; or, when that `\n` is the sentinel and the
    /// stream is not `final`, does nothing and returns nil (the line is not complete yet).
    ///
    /// The default finds the end with `memchr` and calls `line(_:_:number:offset:)`; a
    /// consumer whose own scan stops at the line's end anyway overrides it to save that pass.
    mutating func line(from start: UnsafePointer<UInt8>, dataEnd: UnsafePointer<UInt8>, final: Bool,
                       number: Int, offset: Int64) -> UnsafePointer<UInt8>?
}

extension LineConsumer where Self: ~Copyable {
    @inline(__always)
    mutating func line(from start: UnsafePointer<UInt8>, dataEnd: UnsafePointer<UInt8>, final: Bool,
                              number: Int, offset: Int64) -> UnsafePointer<UInt8>? {
        let end = memchr(start, 0x0A, dataEnd - start + 1)!.assumingMemoryBound(to: UInt8.self)
        if end == dataEnd && !final { return nil }
        line(start, UnsafePointer(end), number: number, offset: offset)
        return UnsafePointer(end)
    }
}

/// Cuts a byte stream into lines using one fixed buffer.
///
/// Only whole lines are handed out; the partial line at the end of a chunk is moved to the
/// front and completed by the next read. The buffer starts at `chunkSize` and grows only for
/// a line longer than it, up to `maxLineLength`; a longer line is reported and skipped, so
/// memory never depends on the size of a file, only on its longest line.
final class LineReader {
    /// Big enough that a read(2) per chunk is noise, small enough to stay in the L2 cache.
    static let chunkSize = 256 << 10
    /// Lines longer than this are bad lines. Far above any real record (a few hundred bytes),
    /// and well past "multi-megabyte", while still bounding memory against a file with no
    /// newlines at all.
    static let maxLineLength = 256 << 20
    /// Readable bytes kept after the data, for the scanner's 16-byte loads past a line's end.
    static let padding = 64

    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int

    init(chunkSize: Int = LineReader.chunkSize) {
        capacity = chunkSize
        buffer = .allocate(capacity: capacity + Self.padding)
        buffer.initialize(repeating: 0, count: capacity + Self.padding)
    }

    deinit { buffer.deallocate() }

    /// Which lines of the stream belong to this reading.
    struct Range: Sendable {
        /// The stream starts one byte before the first byte of the range, and the line that
        /// byte belongs to is not ours (it is the previous range's last line).
        var skipFirstLine: Bool
        /// Lines starting at this stream offset or later are not ours.
        var limit: Int64
        /// The stream is the start of a file, where a UTF-8 BOM may sit.
        var atFileStart: Bool

        static let whole = Range(skipFirstLine: false, limit: .max, atFileStart: true)
        init(skipFirstLine: Bool, limit: Int64, atFileStart: Bool) {
            self.skipFirstLine = skipFirstLine
            self.limit = limit
            self.atFileStart = atFileStart
        }
    }

    /// Feeds every line of `range` in `source` to `consumer`; returns how many lines it saw.
    @discardableResult
    func read<S: ByteSource, C: LineConsumer & ~Copyable>(_ source: inout S, range: Range = .whole,
                                                     into consumer: inout C) throws(InputError) -> Int {
        var filled = 0            // valid bytes in buffer
        var pos = 0               // start of the first line not yet handed out
        var base: Int64 = 0       // stream offset of buffer[0]
        var eof = false
        var skipping = range.skipFirstLine
        var overlong = false      // dropping the rest of a line longer than maxLineLength
        var overlongStart: Int64 = 0
        var lines = 0
        var bomChecked = !range.atFileStart
        // With a BOM skipped, the first line still starts at offset 0 as far as which piece
        // owns it is concerned.
        var bomSkipped = false
        // The consumer stopped at a line that goes on past the data read so far.
        var incomplete = false

        while true {
            if !bomChecked && (filled >= 3 || eof) {
                bomChecked = true
                if filled >= 3 && buffer[0] == 0xEF && buffer[1] == 0xBB && buffer[2] == 0xBF {
                    pos = 3
                    bomSkipped = true
                }
            }
            if bomChecked {
                // The sentinel: every line in the buffer has a `\n` after it, complete or not.
                buffer[filled] = 0x0A
                let dataEnd = UnsafePointer(buffer + filled)
                while pos < filled {
                    let lineStart = base + Int64(pos)
                    let owner = bomSkipped && lines == 0 ? 0 : lineStart
                    if !skipping && !overlong && owner >= range.limit { return lines }
                    if skipping || overlong {
                        guard let nl = memchr(buffer + pos, 0x0A, filled - pos) else { break }
                        if skipping {
                            skipping = false
                        } else {
                            overlong = false
                            lines += 1
                            consumer.overlongLine(number: lines, offset: overlongStart)
                        }
                        pos = nl.assumingMemoryBound(to: UInt8.self) - buffer + 1
                        continue
                    }
                    guard let end = consumer.line(from: UnsafePointer(buffer + pos), dataEnd: dataEnd, final: eof,
                                                  number: lines + 1, offset: lineStart) else {
                        incomplete = true
                        break
                    }
                    lines += 1
                    pos = min(UnsafePointer(buffer) .distance(to: end) + 1, filled)
                }
            }
            if eof {
                if overlong {
                    lines += 1
                    consumer.overlongLine(number: lines, offset: overlongStart)
                }
                return lines
            }
            // Keep the unfinished line and make room after it.
            if pos > 0 {
                if pos < filled { memmove(buffer, buffer + pos, filled - pos) }
                base += Int64(pos)
                filled -= pos
                pos = 0
            }
            if filled == capacity {
                if skipping || overlong {
                    base += Int64(filled)
                    filled = 0
                } else if capacity < Self.maxLineLength {
                    grow()
                } else {
                    overlong = true
                    overlongStart = base
                    base += Int64(filled)
                    filled = 0
                }
            }
            // A line the consumer could not finish is scanned again from its start: read until
            // the buffer is full (or the stream ends) first, so a long line arriving in small
            // reads (64 KiB from a pipe) is scanned once per growth of the buffer, not once per
            // read, which made reading it quadratic.
            repeat {
                let n = try source.read(into: buffer + filled, count: capacity - filled)
                if n == 0 { eof = true } else { filled += n }
            } while incomplete && !eof && filled < capacity
            incomplete = false
        }
    }

    private func grow() {
        let newCapacity = min(capacity * 2, Self.maxLineLength)
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity + Self.padding)
        bigger.initialize(repeating: 0, count: newCapacity + Self.padding)
        bigger.update(from: buffer, count: capacity)
        buffer.deallocate()
        buffer = bigger
        capacity = newCapacity
    }
}
