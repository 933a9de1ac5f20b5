import CKernels
import Testing
@testable import RankingsKit

/// The SIMD string kernel changes nothing the scanner reports. Each case puts a short sequence
/// at every offset of the kernel's 32-byte blocks, inside a long string, and scans the line
/// with the kernel and without; the fuzz target `simd_scan` does the same on random input.
@Suite("SIMD scanner agrees with the scalar one")
struct ScanKernelAgreementTests {
    static func report(_ line: [UInt8], simd: Bool) -> String {
        var scanner = JSONLineScanner(wanted: FieldSet(rawValue: .max), simd: simd)
        let padded = line + [0x0A] + [UInt8](repeating: UInt8(ascii: "\""), count: LineReader.padding)
        return padded.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress!
            let outcome = scanner.scan(start)
            if outcome == .malformed { return "malformed \(scanner.failure) at \(scanner.failOffset)" }
            var text = "\(outcome) end \(scanner.lineEnd! - start)"
            for field in Field.allCases where field != .none {
                if let span = scanner.fields[field] { text += " \(field) \(span.baseAddress! - start)+\(span.count)" }
            }
            return text
        }
    }

    static let pieces: [[UInt8]] = [
        [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF],
        // Not UTF-8: overlong, surrogate, above U+10FFFF, stray continuation, cut sequences, bad leads.
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0xFF], [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3, 0xA9, 0xA9], [0xE2, 0x82, 0xAC, 0x80],
        [0xC3, 0x22], [0xE2, 0x82, 0x22], [0xC3, 0x5C, 0x6E],
        // What ends or interrupts a string.
        [0x22], [0x5C, 0x6E], [0x5C, 0x75, 0x30, 0x30, 0x34, 0x31], [0x5C, 0x78], [0x01], [0x09], [0x7F],
    ]

    @Test(arguments: 0..<pieces.count)
    func everyOffsetOfABlock(_ index: Int) {
        let piece = Self.pieces[index]
        for before in 0..<70 {
            for after in [0, 1, 3, 40] {
                let a = [UInt8](repeating: UInt8(ascii: "a"), count: before)
                let z = [UInt8](repeating: UInt8(ascii: "z"), count: after)
                for line in [Array(#"{"joke_id":""#.utf8) + a + piece + z + Array(#"","rating":5}"#.utf8),
                             Array(#"{"device_id":""#.utf8) + a + piece + z,
                             Array(#"[""#.utf8) + a + piece + piece + a + piece + Array(#""]"#.utf8)] {
                    let scalar = Self.report(line, simd: false), simd = Self.report(line, simd: true)
                    #expect(scalar == simd, "piece \(piece) after \(before), \(after) more: \(line)")
                }
            }
        }
    }

    @Test func theKernelRunsHere() throws {
        // The comparison above is only worth something where the kernel runs (asked for with
        // `simd: true`, whatever RANKINGS_CPU says).
        try CPUAvailability.need(RK_CPU_AVX2)
    }
}
