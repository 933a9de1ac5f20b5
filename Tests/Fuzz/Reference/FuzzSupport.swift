import Glibc

/// A disagreement between the product and the reference: both answers on stderr, then abort,
/// which libFuzzer records as a crash and saves the input as a reproducer.
func mismatch(_ what: String, input: [UInt8], product: Any, reference: Any) -> Never {
    let shown = input.count <= 400 ? "\(input)" : "\(input.count) bytes"
    let text = "MISMATCH \(what)\n  input:     \(shown)\n  product:   \(product)\n  reference: \(reference)\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    abort()
}

/// Reads the fuzzer's bytes as a few small choices followed by the payload.
struct FuzzInput {
    var bytes: [UInt8]
    var i = 0

    init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    mutating func byte() -> UInt8 {
        guard i < bytes.count else { return 0 }
        defer { i += 1 }
        return bytes[i]
    }

    var rest: [UInt8] { Array(bytes[min(i, bytes.count)...]) }
}

/// Lays `line` out exactly as the scanner's contract requires and no further: the line, its
/// `\n`, `LineReader.padding` bytes of `garbage`, in one allocation of exactly that size, so
/// AddressSanitizer reports any read past the padding.
func withPaddedLine<R>(_ line: [UInt8], garbage: UInt8, _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> R) -> R {
    let total = line.count + 1 + LineReader.padding
    let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: total)
    defer { storage.deallocate() }
    for (k, b) in line.enumerated() { storage[k] = b }
    storage[line.count] = 0x0A
    // Garbage that would continue a JSON text if the scanner ever read past its `\n`.
    let patterns: [[UInt8]] = [Array("\"}".utf8), Array("]}".utf8), [0xFF], Array("0".utf8), Array("\\".utf8), [0x0A]]
    let pattern = patterns[Int(garbage) % patterns.count]
    for k in 0..<LineReader.padding { storage[line.count + 1 + k] = pattern[k % pattern.count] }
    return body(UnsafePointer(storage), UnsafePointer(storage + line.count))
}

/// Bytes in memory handed out in reads of the sizes the fuzzer chose: a pipe's short reads.
struct MemorySource: ByteSource {
    let data: [UInt8]
    let readSizes: [Int]
    var offset = 0
    var reads = 0
    var bytesConsumed: Int64 { Int64(offset) }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        let want = readSizes.isEmpty ? count : max(1, readSizes[reads % readSizes.count])
        reads += 1
        let n = min(count, want, data.count - offset)
        if n > 0 { data.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + offset, byteCount: n) } }
        offset += n
        return n
    }
}

/// What the product's tally holds, in the reference's terms.
func referenceView(of tally: Tally) -> [[UInt8]: RefRecord.Counts] {
    var jokes: [[UInt8]: RefRecord.Counts] = [:]
    for (id, counts) in tally.sortedJokes() where counts.ratings > 0 {
        jokes[id] = RefRecord.Counts(hilarious: counts.hilarious, horrible: counts.horrible, neutral: counts.neutral)
    }
    return jokes
}

/// A regular file for targets that need a file descriptor, reused by every run of the process.
enum ScratchFile {
    nonisolated(unsafe) static var fd: Int32 = -1

    static func holding(_ bytes: [UInt8]) -> Int32 {
        if fd < 0 {
            var template = Array("/tmp/rankings-fuzz-XXXXXX".utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            precondition(fd >= 0, "mkstemp failed")
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        }
        precondition(ftruncate(fd, 0) == 0)
        if !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, bytes.count, 0) }
            precondition(n == bytes.count)
        }
        return fd
    }
}
