import CKernels
import Testing
@testable import RankingsKit

/// With ISA-L, a gzip file read ahead on a second thread has each member's CRC-32 checked by
/// the reading thread (`PrefetchSource`), not the inflating one. The checks must hold where
/// members end at a chunk's edge, inside one, in a chunk of their own (an empty member), and
/// where only the CRC-32 can see the damage (a byte changed in a stored block).
@Suite("Deferred gzip checksums", .enabled(if: ISALAvailability.runs, ISALAvailability.reason))
struct DeferredChecksumTests {
    typealias Source = ParallelEquivalenceTests.MemorySource

    /// Everything a `PrefetchSource` hands out, in reads of `step`, and the error it ends with.
    static func readAhead(_ stream: [UInt8], chunkSize: Int, step: Int) -> (output: [UInt8], error: InputError?) {
        var out: [UInt8] = []
        do {
            let gzip = try GzipSource(Source(bytes: stream, step: 4096), path: "f.gz", using: .isal, deferChecksums: true)
            #expect(gzip.defersChecksums)
            let prefetcher = Prefetcher(gzip, chunkSize: chunkSize, depth: 2)
            var ahead = PrefetchSource(prefetcher)
            defer {
                ahead.release()
                prefetcher.close()
            }
            var buffer = [UInt8](repeating: 0, count: step)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try ahead.read(into: $0.baseAddress!, count: $0.count) }
                if n == 0 { return (out, nil) }
                out += buffer[..<n]
            }
        } catch {
            return (out, error as? InputError)
        }
    }

    static let text: [UInt8] = Array((0..<400).map { "{\"joke_id\":\"j\($0 % 23)\",\"rating\":\($0 % 5 + 1)}\n" }.joined().utf8)

    /// Members of 0, 1, 2, 3, 5, 8 ... bytes, and where each one's trailer starts in the stream.
    static func members() throws -> (stream: [UInt8], trailers: [Int], ends: [Int]) {
        var stream: [UInt8] = [], trailers: [Int] = [], ends: [Int] = []
        var from = 0, a = 0, b = 1
        while from < text.count {
            let to = min(text.count, from + a)
            stream += try ScratchDirectory.gzip(Array(text[from..<to]))
            trailers.append(stream.count - 8)
            ends.append(to)
            (a, b, from) = (b, a + b, to)
        }
        return (stream, trailers, ends)
    }

    /// The CRC-32 the scanning thread runs: the standard check value, whole and continued
    /// piece by piece. Called here before any inflater has loaded ISA-L (when this test runs
    /// first), which once called through a null pointer.
    @Test func theCRCIsGzipsWholeAndInPieces() {
        let check = Array("123456789".utf8)
        #expect(check.withUnsafeBufferPointer { rk_isal_crc32(0, $0.baseAddress!, 9) } == 0xCBF4_3926)
        for cut in 0...9 {
            let crc = check.withUnsafeBufferPointer { b in
                rk_isal_crc32(rk_isal_crc32(0, b.baseAddress!, UInt64(cut)), b.baseAddress! + cut, UInt64(9 - cut))
            }
            #expect(crc == 0xCBF4_3926, "cut at \(cut)")
        }
    }

    @Test func goodMembersPassAtEveryChunkEdge() throws {
        #expect(rk_isal_available() != 0)
        let (stream, _, ends) = try Self.members()
        #expect(ends.count > 10)
        // Chunk sizes that put member ends on, before and after chunk edges, and reads shorter
        // and longer than a chunk.
        for chunkSize in [1, 2, 3, 5, 8, 13, 89, 144, 4096] {
            for step in [1, 7, 1000] {
                let (output, error) = Self.readAhead(stream, chunkSize: chunkSize, step: step)
                #expect(error == nil, "chunk \(chunkSize), step \(step): \(error as Any)")
                #expect(output == Self.text, "chunk \(chunkSize), step \(step)")
            }
        }
    }

    @Test func aWrongCRCFailsBeforeItsMemberEnds() throws {
        let (stream, trailers, ends) = try Self.members()
        for (member, trailer) in trailers.enumerated() {
            var bad = stream
            bad[trailer + 1] ^= 0x40
            for chunkSize in [1, 13, 4096] {
                let (output, error) = Self.readAhead(bad, chunkSize: chunkSize, step: 7)
                #expect(error == .corruptGzip(path: "f.gz", reason: "corrupt gzip data: incorrect data check"),
                        "member \(member), chunk \(chunkSize): \(error as Any)")
                // Nothing after the damaged member; and no more than the failing read's 7 bytes
                // short of its end, so every member before it passed.
                #expect(output.count <= ends[member] && output.count + 7 >= ends[member],
                        "member \(member), chunk \(chunkSize): \(output.count) bytes out")
                #expect(Array(Self.text[..<output.count]) == output)
            }
        }
    }

    @Test func aByteOnlyTheCRCSeesIsCaughtWithAndWithoutDeferral() throws {
        // Bytes gzip cannot compress go into stored blocks, where a changed byte inflates fine.
        var generator = SplitMix64(seed: 7)
        let noise = (0..<20_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let gz = try ScratchDirectory.gzip(noise)
        var bad = gz
        bad[gz.count / 2] ^= 0x01
        let expected = InputError.corruptGzip(path: "f.gz", reason: "corrupt gzip data: incorrect data check")
        for chunkSize in [1000, 1 << 20] {
            #expect(Self.readAhead(gz, chunkSize: chunkSize, step: 4096).output == noise)
            #expect(Self.readAhead(bad, chunkSize: chunkSize, step: 4096).error == expected)
        }
        #expect(InflaterAgreementTests.inflate(bad, step: 4096, using: .isal).error == expected)
        #expect(InflaterAgreementTests.inflate(bad, step: 4096, using: .zlib).error != nil)
    }

    /// A wrong length is caught by the inflating thread, deferred or not.
    @Test func aWrongLengthFailsDeferredToo() throws {
        let (stream, trailers, _) = try Self.members()
        var bad = stream
        bad[trailers[5] + 4] ^= 0x01
        #expect(Self.readAhead(bad, chunkSize: 64, step: 64).error
                == .corruptGzip(path: "f.gz", reason: "corrupt gzip data: incorrect data check"))
    }

    /// A member whose header carries every optional field (FEXTRA, FNAME, FCOMMENT, FHCRC),
    /// read in pieces of every size, deferred and not, with zlib too. ISA-L's own gzip mode
    /// refused such a header (FHCRC) when it was split across reads; it must pass, and a wrong
    /// header CRC must not.
    @Test func everyHeaderFieldSplitAcrossReads() throws {
        let plain = try ScratchDirectory.gzip(Array(Self.text[..<3000]))
        // `gzip -n`: a 10-byte header with no flags; the deflate data and trailer follow.
        #expect(plain[3] == 0)
        var header: [UInt8] = [0x1F, 0x8B, 8, 0x04 | 0x08 | 0x10 | 0x02, 0, 0, 0, 0, 0, 3]
        header += [5, 0] + Array("extra".utf8)
        header += Array("name.ndjson".utf8) + [0] + Array("a comment".utf8) + [0]
        let crc = header.withUnsafeBufferPointer { rk_isal_crc32(0, $0.baseAddress!, UInt64($0.count)) }
        let good = header + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF)] + plain[10...]
        var bad = good
        bad[header.count] ^= 0x01
        let stream = good + good
        for step in [1, 2, 3, 11, 4096] {
            for kind in [Inflaters.Kind.isal, .zlib] {
                let result = InflaterAgreementTests.inflate(stream, step: step, using: kind)
                #expect(result.error == nil, "\(kind.name), step \(step): \(result.error as Any)")
                #expect(result.output == Array(Self.text[..<3000]) + Array(Self.text[..<3000]))
                #expect(InflaterAgreementTests.inflate(bad, step: step, using: kind).error != nil, "\(kind.name), step \(step)")
            }
        }
        for chunkSize in [7, 4096] {
            let (output, error) = Self.readAhead(stream, chunkSize: chunkSize, step: 100)
            #expect(error == nil)
            #expect(output.count == 6000)
        }
    }
}
