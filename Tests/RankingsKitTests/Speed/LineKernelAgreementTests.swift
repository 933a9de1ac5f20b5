import CKernels
import Testing
@testable import RankingsKit

/// The whole-line kernel (Sources/CKernels/line_kernel.c) changes nothing the scanner reports.
/// Lines of the shapes exports write, and every one-byte change, deletion and insertion of
/// them, go through `JSONLineScanner` with the kernel (where the CPU has AVX2) and without
/// (scalar): outcome, reason and byte of a malformation, line end, every captured
/// span and escape flag must be identical. The fuzz target `simd_scan` does the same on
/// random input; these cases make sure the kernel is also the one answering for the common lines.
@Suite("Line kernel agrees with the scalar scanner")
struct LineKernelAgreementTests {
    /// Lines the kernel must accept (asserted below), each a different shape.
    static let accepted: [String] = [
        #"{"id":"DA306888-8708-4202-B720-67AE0B7A78CE_LBcw2Dam9tSSPaIh0tG4_2025-W37","joke_id":"LBcw2Dam9tSSPaIh0tG4","rating":1,"device_id":"DA306888-8708-4202-B720-67AE0B7A78CE","week_id":"2025-W37","timestamp":{"_seconds":1757881625,"_nanoseconds":643273000}}"#,
        #"{"joke_id": "j1", "rating": 4.5, "timestamp": "2026-02-12T10:00:00Z", "device_id": "d", "extra": [1, -2.5e-3, true, false, null, {"x": []}]}"#,
        #"{"name":"projects/p/databases/(default)/documents/rating_events/e1","fields":{"joke_id":{"stringValue":"j"},"rating":{"integerValue":"5"}}}"#,
        // Typed documents: as the fetch hook writes them; `name` and `fields` repeated (the
        // last counts, typed values only from the last `fields`); `fields` keys deeper down
        // or outside the top-level `fields` (not typed values); a last `fields` that is no object.
        #"{"name":"projects/p/databases/(default)/documents/rating_events/d_j_2025-W37","fields":{"joke_id":{"stringValue":"j"},"rating":{"integerValue":"1"},"device_id":{"stringValue":"d"},"week_id":{"stringValue":"2025-W37"},"timestamp":{"timestampValue":"2025-09-14T20:27:05.643273Z"}},"createTime":"2025-09-14T20:27:07.766729Z","updateTime":"2025-09-14T20:27:07.766729Z"}"#,
        #"{"name":"projects/p/databases/d/documents/rating_events/e","fields":{"joke_id":{"stringValue":"j"},"rating":{"integerValue":"5"}},"fields":{"rating":{"doubleValue":4.5},"week_id":{"stringValue":"w"}},"name":"x"}"#,
        #"{"x":{"fields":{"rating":{"integerValue":"2"}}},"fields":{"joke_id":{"mapValue":{"fields":{"rating":{"integerValue":"1"}}}},"device_id":[{"rating":1}],"id":{"stringValue":"i"},"timestamp":{"timestampValue":"2025-01-01T00:00:00Z"}}}"#,
        #"{"name":"n","fields":{"joke_id":{"stringValue":"j"},"rating":{"integerValue":"5"}},"fields":3}"#,
        "\t {\"joke_id\":\"caf\u{E9} \u{1F600}\",\"rating\":5,\"comment\":\"\u{65E5}\u{672C}\u{8A9E} [x] {y}\"} \r",
        #"{"rating":5,"joke_id":"a","joke_id":"b","rating":2}"#,
        #"{}"#,
        #"{"a":{"b":{"c":{"d":[[[[0]]]]}}},"joke_id":"x","rating":-0}"#,
        "{\"joke_id\":\"\(String(repeating: "k", count: 70))\",\"rating\":3,\"pad\":\"\(String(repeating: "p", count: 200))\"}",
    ]

    /// Lines the kernel declines, so the scalar scanner answers (each still agrees).
    static let declined: [String] = [
        #"{"joke_id":"a\"b","rating":5}"#, // an escape
        #"[{"joke_id":"a","rating":5}]"#, // not an object
        #"{"joke_id":"a","rating":05}"#,
        #"{"joke_id":"a","rating":5}x"#,
        "{\"joke_id\":\"a\tb\",\"rating\":5}",
        "",
        "   ",
        "{\"joke_id\":\"\(String(repeating: "k", count: 1100))\",\"rating\":3}", // longer than 1024 bytes
    ]

    /// Bytes that each mean something to one rule or another.
    static let interesting: [UInt8] = Array(#"{}[]:,"\ 0123456789-+.eEtfnulx"#.utf8) + [0x09, 0x0D, 0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0xFF]

    static func report(_ line: [UInt8], simd: Bool, level: Int32) -> String {
        var scanner = JSONLineScanner(wanted: FieldSet(rawValue: .max), simd: simd, lineKernel: level)
        return report(&scanner, line)
    }

    /// Everything `scanner` reports for `line` (padded with quotes, which must never be read as
    /// part of it).
    static func report(_ scanner: inout JSONLineScanner, _ line: [UInt8]) -> String {
        let padded = line + [0x0A] + [UInt8](repeating: UInt8(ascii: "\""), count: LineReader.padding)
        return padded.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress!
            let outcome = scanner.scan(start)
            if outcome == .malformed { return "malformed \(scanner.failure) at \(scanner.failOffset)" }
            var text = "\(outcome) end \(scanner.lineEnd! - start)"
            for field in Field.allCases where field != .none {
                if let span = scanner.fields[field] {
                    text += " \(field) \(span.baseAddress! - start)+\(span.count)\(scanner.fields.isEscaped(field) ? "e" : "")"
                }
            }
            return text
        }
    }

    /// The kernel where this CPU has it (asked for by level, whatever `RANKINGS_CPU` says); a CPU
    /// without shows as a cancelled or failed test below. Every level above portable runs it.
    static var levels: [Int32] { [RK_CPU_AVX2].filter { $0 <= rk_cpu_supported() } }

    static func expectAgreement(_ line: [UInt8], _ comment: @autoclosure () -> String) {
        let scalar = report(line, simd: false, level: 0)
        for level in levels {
            let kernel = report(line, simd: true, level: level)
            #expect(scalar == kernel, "level \(level), \(comment()): \(line)")
        }
    }

    /// Whether the kernel itself answered for the line (rather than handing it to the scalar scanner).
    static func kernelAccepts(_ line: [UInt8], level: Int32) -> Bool {
        let padded = line + [0x0A] + [UInt8](repeating: 0, count: LineReader.padding)
        let spans = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: Int(RK_SPANS))
        defer { spans.deallocate() }
        var found: UInt32 = 0
        return padded.withUnsafeBufferPointer { rk_scan_line($0.baseAddress!, 0xFF, spans, &found, level, nil) != nil }
    }

    @Test func theKernelAnswersForTheCommonShapes() {
        for line in Self.accepted {
            for level in Self.levels {
                #expect(Self.kernelAccepts(Array(line.utf8), level: level), "level \(level): \(line)")
            }
            Self.expectAgreement(Array(line.utf8), "as it is")
        }
        for line in Self.declined {
            for level in Self.levels {
                #expect(!Self.kernelAccepts(Array(line.utf8), level: level), "level \(level): \(line)")
            }
            Self.expectAgreement(Array(line.utf8), "as it is")
        }
    }

    @Test func theAVX2KernelRunsHere() throws { try CPUAvailability.need(RK_CPU_AVX2) }

    /// Every one-byte deletion of `base`, and every insertion and change of an interesting byte,
    /// each with what was done. Under a sanitizer (`Sanitizer.isOn`, where these two tests took 77
    /// of the AddressSanitizer run's 230 CPU seconds) each byte is inserted and changed at every
    /// third position, a different third for each byte; the plain suite tries every one.
    static func oneByteChanges(of base: [UInt8], _ body: ([UInt8], String) -> Void) {
        for position in 0...base.count {
            if position < base.count {
                var deleted = base
                deleted.remove(at: position)
                body(deleted, "byte \(position) deleted")
            }
            for (number, byte) in interesting.enumerated() where !Sanitizer.isOn || (position + number) % 3 == 0 {
                var inserted = base
                inserted.insert(byte, at: position)
                body(inserted, "\(byte) inserted at \(position)")
                if position < base.count && base[position] != byte {
                    var changed = base
                    changed[position] = byte
                    body(changed, "byte \(position) changed to \(byte)")
                }
            }
        }
    }

    @Test(arguments: 0..<accepted.count)
    func everyOneByteChange(_ index: Int) {
        Self.oneByteChanges(of: Array(Self.accepted[index].utf8)) { line, what in Self.expectAgreement(line, what) }
    }

    @Test func everyCutOfTheLine() {
        // A line cut anywhere (as the reader's sentinel cuts one that goes on past the data read
        // so far), and every prefix of the nested shapes closed in the wrong order.
        for line in Self.accepted {
            let bytes = Array(line.utf8)
            for end in 0...bytes.count {
                Self.expectAgreement(Array(bytes[0..<end]), "cut at \(end)")
                Self.expectAgreement(Array(bytes[0..<end]) + Array("}".utf8), "cut at \(end), closed")
            }
        }
    }
}

extension LineKernelAgreementTests {
    @Test func aScannerWhoseKernelRestsSaysTheSame() {
        // Lines the kernel declines, enough for it to rest, then lines it accepts, through one
        // scanner: which path judged a line must not show in any answer.
        let declined = Array(#"{"joke_id":"a\u00e9","rating":5}"#.utf8)
        let accepted = Array(Self.accepted[0].utf8)
        var lines = [[UInt8]](repeating: declined, count: Int(RK_PATIENCE_MISSES) * 2 + 3)
        lines += [[UInt8]](repeating: accepted, count: Int(RK_PATIENCE_REST) + 5)
        lines += [declined, accepted, Array("oops".utf8), accepted]
        var scalar = JSONLineScanner(wanted: FieldSet(rawValue: .max), simd: false, lineKernel: 0)
        var kernel = JSONLineScanner(wanted: FieldSet(rawValue: .max), simd: true, lineKernel: rk_cpu_supported())
        func report(_ scanner: inout JSONLineScanner, _ line: [UInt8]) -> String {
            PaddedLine.with(line) { start, _ in
                let outcome = scanner.scan(start)
                if outcome == .malformed { return "malformed \(scanner.failure) at \(scanner.failOffset)" }
                var text = "\(outcome) end \(scanner.lineEnd! - start)"
                for field in Field.allCases where field != .none {
                    if let span = scanner.fields[field] { text += " \(field) \(span.baseAddress! - start)+\(span.count)" }
                }
                return text
            }
        }
        for (number, line) in lines.enumerated() {
            let a = report(&scalar, line), b = report(&kernel, line)
            if a != b {
                Issue.record("line \(number): \(a) against \(b)")
                return
            }
        }
    }
}
