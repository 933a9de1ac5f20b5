import CKernels
import Foundation
import Testing

/// The SSE4.2 kernel and the fragment kernels of each CPU level held to the portable tables (and
/// those to the standard's check value and a bit-by-bit CRC), over every length and alignment a
/// block can give them. Each kernel is asked for by level, so it runs wherever the CPU has it
/// (CPUAvailability); which level the CPU has is CPULevelTests' matter.
@Suite("CRC-32C kernels")
struct CRC32CTests {
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    @Test("the check value of \"123456789\" and of 32 zero bytes (RFC 3720)")
    func checkValues() {
        let digits = Array("123456789".utf8)
        #expect(rk_crc32c_extend_portable(0, digits, digits.count) == 0xE306_9283)
        #expect(rk_crc32c_extend(0, digits, digits.count) == 0xE306_9283)
        let zeros = [UInt8](repeating: 0, count: 32)
        #expect(rk_crc32c_extend_portable(0, zeros, 32) == 0x8A91_36AA)
        #expect(rk_crc32c_extend(0, zeros, 32) == 0x8A91_36AA)
    }

    @Test("hardware and portable agree on every length 0…300 at every alignment 0…7, and with a bitwise CRC")
    func agree() throws {
        let data = Self.bytes(400, seed: 7)
        let hardware = rk_cpu_supported() >= RK_CPU_AVX2
        data.withUnsafeBytes { raw in
            for start in 0..<8 {
                for count in 0...300 {
                    let p = raw.baseAddress! + start
                    let portable = rk_crc32c_extend_portable(0, p, count)
                    if hardware {
                        #expect(rk_crc32c_extend_hardware(0, p, count) == portable, "start \(start), count \(count)")
                    }
                    if count % 37 == 0 {
                        #expect(TestLog.crc32c(Array(data[start..<(start + count)])) == portable)
                    }
                }
            }
        }
        try CPUAvailability.need(RK_CPU_AVX2)
    }

    @Test("extending in pieces equals one pass, on a block and a half of data")
    func extend() {
        let data = Self.bytes(49_152, seed: 3)
        let whole = rk_crc32c_extend_portable(0, data, data.count)
        for cut in [0, 1, 7, 8, 4095, 32_768, 49_151] {
            data.withUnsafeBytes { raw in
                let p = raw.baseAddress!
                let head = rk_crc32c_extend(0, p, cut)
                #expect(rk_crc32c_extend(head, p + cut, data.count - cut) == whole)
                let portableHead = rk_crc32c_extend_portable(0, p, cut)
                #expect(rk_crc32c_extend_portable(portableHead, p + cut, data.count - cut) == whole)
            }
        }
    }

    @Test("a block's fragment checksums, three at a time, equal one at a time with the tables and the tests' own masked CRC")
    func fragments() {
        // Lengths 0…70 in every mix, so the three streams share 0 to 8 words and end apart.
        let data = Self.bytes(32_768, seed: 11)
        var fragments: [rk_log_fragment] = []
        var pos = 0
        var state: UInt64 = 5
        while pos < 30_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 33) % 71
            fragments.append(rk_log_fragment(data: UInt32(pos), length: UInt32(length), checksum: 0,
                                             type: UInt8(1 + (state >> 40) % 4), stored: 0))
            pos += length + 1
        }
        var fast = fragments, portable = fragments
        data.withUnsafeBufferPointer { block in
            for count in [0, 1, 2, 3, 4, 5, fragments.count] {
                rk_log_fragment_checksums(block.baseAddress!, &fast, count)
                rk_log_fragment_checksums_portable(block.baseAddress!, &portable, count)
                for i in 0..<count {
                    #expect(fast[i].checksum == portable[i].checksum, "count \(count), fragment \(i)")
                }
            }
        }
        for (i, f) in fragments.enumerated().prefix(50) {
            #expect(portable[i].checksum == TestLog.masked(type: f.type, data[Int(f.data)..<Int(f.data + f.length)]))
        }
    }

    @Test("SSE4.2's fragment kernel, on every length 0…700 and some to a block's largest, at 64 offsets, equals the tables")
    func threeStreams() throws {
        try CPUAvailability.need(RK_CPU_AVX2)
        Self.expectFragmentKernel(RK_CPU_AVX2)
    }

    @Test("folding, on every length 0…700 and some to a block's largest, at 64 offsets, equals the tables")
    func folding() throws {
        try CPUAvailability.need(RK_CPU_AVX512)
        Self.expectFragmentKernel(RK_CPU_AVX512)
    }

    static func expectFragmentKernel(_ level: Int32) {
        // Folding takes whole 64-byte steps after a head of `length % 64` bytes: every head,
        // every number of steps a block of records gives, and every offset in a step.
        let data = bytes(32_768 + 64, seed: 13)
        data.withUnsafeBufferPointer { block in
            for length in Array(0...700) + [1_023, 1_024, 1_025, 4_095, 4_096, 16_383, 32_761] {
                var fragments = (0..<64).map {
                    rk_log_fragment(data: UInt32(length % 600 % (32_768 + 64 - length - 63) + $0), length: UInt32(length), checksum: 0,
                                    type: UInt8(1 + ($0 + length) % 4), stored: 0)
                }
                var portable = fragments
                rk_log_fragment_checksums_with(level, block.baseAddress!, &fragments, fragments.count)
                rk_log_fragment_checksums_portable(block.baseAddress!, &portable, portable.count)
                #expect(fragments.map(\.checksum) == portable.map(\.checksum), "level \(level), length \(length)")
            }
        }
    }
}
