import CKernels
import Testing
@testable import RankingsKit

/// The line kernel's layouts (Sources/CKernels/line_layout.c) change nothing the scanner
/// reports. A layout stands in for stage 1 and the walk when a line has the bytes of one the
/// walk accepted wherever its structure is, so each case first shows the scanner a line the
/// walk accepts (twice: the second must come from its layout), then a line that differs from
/// it by one byte, one shape or one number, whose answer must be the scalar scanner's. The
/// fuzz target `simd_scan` does the same from lines spliced into an export's.
@Suite("Line layouts agree with the scalar scanner", .enabled(if: CPUAvailability.runs(RK_CPU_AVX2), CPUAvailability.reason(RK_CPU_AVX2)))
struct LineLayoutTests {
    static let all = FieldSet(rawValue: .max)

    static func report(_ scanner: inout JSONLineScanner, _ line: [UInt8]) -> String {
        LineKernelAgreementTests.report(&scanner, line)
    }

    static func scalar(_ line: [UInt8]) -> String {
        var scanner = JSONLineScanner(wanted: all, simd: false, lineKernel: 0)
        return report(&scanner, line)
    }

    /// A scanner that has made the layout of `base` and answered it from the layout once.
    static func warmed(by base: [UInt8]) -> JSONLineScanner {
        var scanner = JSONLineScanner(wanted: all, simd: true, lineKernel: RK_CPU_AVX2)
        _ = report(&scanner, base)
        _ = report(&scanner, base)
        return scanner
    }

    static func expectAgreement(after base: [UInt8], _ line: [UInt8], _ comment: @autoclosure () -> String) {
        var scanner = warmed(by: base)
        let kernel = report(&scanner, line), reference = scalar(line)
        #expect(kernel == reference, "\(comment()): \(String(decoding: line, as: UTF8.self))")
    }

    @Test func theLayoutAnswersForTheCommonShapes() {
        for line in LineKernelAgreementTests.accepted {
            let bytes = Array(line.utf8)
            // A layout takes ASCII only in a value string: a line with other text in one is
            // walked every time (the one such shape has no other).
            let ascii = bytes.allSatisfy { $0 < 0x80 }
            var scanner = Self.warmed(by: bytes)
            #expect(scanner.layoutHits == (ascii ? 1 : 0), "\(line)")
            #expect(Self.report(&scanner, bytes) == Self.scalar(bytes), "\(line)")
            #expect(scanner.layoutHits == (ascii ? 2 : 0), "\(line)")
        }
    }

    @Test(arguments: 0..<LineKernelAgreementTests.accepted.count)
    func everyOneByteChangeAfterTheLine(_ index: Int) {
        let base = Array(LineKernelAgreementTests.accepted[index].utf8)
        LineKernelAgreementTests.oneByteChanges(of: base) { line, what in Self.expectAgreement(after: base, line, what) }
    }

    @Test func aLineLaidOutAsTheLastTakesItsLayout() {
        let base = Array(LineKernelAgreementTests.accepted[0].utf8)
        // Other ids of the same lengths, other digits, another rating.
        let alike = Array(#"{"id":"00000000-1111-2222-3333-444444444444_zzzzzzzzzzzzzzzzzzzz_1999-W01","joke_id":"zzzzzzzzzzzzzzzzzzzz","rating":5,"device_id":"00000000-1111-2222-3333-444444444444","week_id":"1999-W01","timestamp":{"_seconds":9999999999,"_nanoseconds":100000000}}"#.utf8)
        #expect(alike.count == base.count)
        var scanner = Self.warmed(by: base)
        #expect(scanner.layoutHits == 1)
        #expect(Self.report(&scanner, alike) == Self.scalar(alike))
        #expect(scanner.layoutHits == 2)
    }

    @Test func linesOfAnotherLayoutAreWalked() {
        // Strings and numbers of other lengths, strings with other text: the walk answers, with
        // every span the line's own.
        let base = Array(#"{"id":"e1","joke_id":"j1","rating":5,"device_id":"d","week_id":"2025-W01","timestamp":{"_seconds":1,"_nanoseconds":0}}"#.utf8)
        let others = [
            #"{"id":"event-two","joke_id":"a much longer joke id","rating":1,"device_id":"","week_id":"x","timestamp":{"_seconds":1757881625,"_nanoseconds":643273000}}"#,
            #"{"id":"","joke_id":"","rating":3,"device_id":"dd","week_id":"","timestamp":{"_seconds":0,"_nanoseconds":99}}"#,
            #"{"id":"é","joke_id":"日本","rating":0,"device_id":"😀","week_id":"[{:,}]","timestamp":{"_seconds":10,"_nanoseconds":1}}"#,
        ]
        for line in others {
            var scanner = Self.warmed(by: base)
            let bytes = Array(line.utf8)
            #expect(Self.report(&scanner, bytes) == Self.scalar(bytes), "\(line)")
            #expect(scanner.layoutHits == 1, "no layout answers: \(line)")
        }
        // Keys of the same length that name other fields, a string where a number was, a value
        // in an array, a space before a value: each the scalar scanner's answer.
        let near = Array(#"{"joke_id":"j","rating":5,"n":1.5,"e":1e5}"#.utf8)
        let shapes = [
            #"{"joke_id": "j","rating":5,"n":1.5,"e":1e5}"#,
            #"{"week_id":"j","rating":5,"n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":[1.5],"e":1e5}"#,
            #"{"joke_id":"j","rating":"5","n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":"1e5"}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":1e5,"":""}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":1e5"#,
            #"{"joke_id":"j","rating":05,"n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":01.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":1e05}"#,
        ]
        for line in shapes { Self.expectAgreement(after: near, Array(line.utf8), "another shape") }
    }

    @Test func anEmptySlotMatchesNothing() {
        // The empty line is as long as no unused slot: declined, whatever is wanted.
        var layouts = rk_line_layouts()
        let spans = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: Int(RK_SPANS))
        defer { spans.deallocate() }
        var found: UInt32 = 0
        let line = [UInt8(ascii: "\n")] + [UInt8](repeating: 0, count: LineReader.padding)
        for wanted: UInt32 in [0, 1, 0xFF] {
            let end = line.withUnsafeBufferPointer { rk_scan_line($0.baseAddress!, wanted, spans, &found, RK_CPU_AVX2, &layouts) }
            #expect(end == nil, "wanted \(wanted)")
        }
        #expect(layouts.hits == 0)
    }

    @Test func aFileOfEverChangingLayoutsRestsTheLayoutsAndComesBack() {
        // Keys in another order on each of 20 lines, and a key of its own on each: no layout
        // answers, so after 16 misses layouts rest for 1,024 lines (the walk answers), then are
        // tried again and made again.
        let keys = [#""joke_id":"j""#, #""rating":4"#, #""week_id":"w""#, #""device_id":"d""#, #""id":"e""#]
        var lines: [[UInt8]] = []
        var order = Array(keys.indices)
        for _ in 0..<20 {
            order = order.dropFirst() + [order[0]]
            if lines.count % 5 == 4 { order.swapAt(0, 2) }
            let own = #""n\#(lines.count)":0"#
            lines.append(Array(("{" + (order.map { keys[$0] } + [own]).joined(separator: ",") + "}").utf8))
        }
        let steady = Array(LineKernelAgreementTests.accepted[0].utf8)
        var scanner = JSONLineScanner(wanted: Self.all, simd: true, lineKernel: RK_CPU_AVX2)
        for line in lines { #expect(Self.report(&scanner, line) == Self.scalar(line)) }
        let resting = scanner.layoutHits
        let reference = Self.scalar(steady)
        for number in 0..<(Int(RK_PATIENCE_REST) + 40) {
            let answer = Self.report(&scanner, steady)
            if answer != reference { Issue.record("line \(number): \(answer)"); return }
            // Resting: no layout answers, however alike the lines.
            if number < Int(RK_PATIENCE_REST) - 20 { #expect(scanner.layoutHits == resting) }
        }
        #expect(scanner.layoutHits >= resting + 30)
    }

    @Test func moreLengthsThanSlotsThroughOneScanner() {
        // Lines of more lengths than a scanner keeps layouts for, in turn, so layouts are made,
        // matched and replaced: every answer is the scalar scanner's.
        var scanner = JSONLineScanner(wanted: Self.all, simd: true, lineKernel: RK_CPU_AVX2)
        let shapes = LineKernelAgreementTests.accepted.map { Array($0.utf8) }
        #expect(Set(shapes.map(\.count)).count > Int(RK_LAYOUTS))
        for round in 0..<3 {
            for (index, line) in shapes.enumerated() {
                for _ in 0...round {
                    let kernel = Self.report(&scanner, line), reference = Self.scalar(line)
                    #expect(kernel == reference, "round \(round), shape \(index)")
                }
            }
        }
        #expect(scanner.layoutHits > 0)
    }

    @Test func whitespaceOutsideStringsIsPartOfTheLayout() {
        // `\r` before the `\n` (a file written with CRLF) and tabs between tokens.
        let base = Array("{\"joke_id\":\"j1\",\t\"rating\":5}\r".utf8)
        let lines = ["{\"joke_id\":\"j2\",\t\"rating\":4}\r", "{\"joke_id\":\"j\r\",\t\"rating\":4}\r",
                     "{\"joke_id\":\"j2\", \"rating\":4}\r", "{\"joke_id\":\"j2\",\t\"rating\":4}\t"]
        for (index, text) in lines.enumerated() {
            var scanner = Self.warmed(by: base)
            let line = Array(text.utf8)
            #expect(Self.report(&scanner, line) == Self.scalar(line), "\(text)")
            #expect(scanner.layoutHits == (index == 0 ? 2 : 1), "only the first is laid out alike: \(text)")
        }
    }

    @Test func textOutsideValueStringsIsPartOfTheLayout() {
        // Other text in a key or in an array's string must be the layout's own bytes; a value
        // string takes ASCII only.
        let base = Array(#"{"joke_id":"j1","rating":5,"tags":["café"],"naïve":1}"#.utf8)
        let lines = [#"{"joke_id":"j2","rating":4,"tags":["café"],"naïve":2}"#, #"{"joke_id":"é","rating":4,"tags":["café"],"naïve":2}"#,
                     #"{"joke_id":"j2","rating":4,"tags":["cafè"],"naïve":2}"#, #"{"joke_id":"j2","rating":4,"tags":["café"],"naëve":2}"#]
        for (index, text) in lines.enumerated() {
            var scanner = Self.warmed(by: base)
            let line = Array(text.utf8)
            #expect(Self.report(&scanner, line) == Self.scalar(line), "\(text)")
            #expect(scanner.layoutHits == (index == 0 ? 2 : 1), "only the first is laid out alike: \(text)")
        }
    }

    @Test func aLeadingZeroIsLeftToTheWalk() {
        // A fraction's leading 0 is fine, but a layout cannot tell it from `05`: no layout is
        // made of such a line, and a line with a 0 where the layout has a run's first digit is
        // left to the walk.
        let fraction = Array(#"{"joke_id":"j","rating":1.05}"#.utf8)
        let warmed = Self.warmed(by: fraction)
        #expect(warmed.layoutHits == 0)
        let base = Array(#"{"joke_id":"j","rating":1.55,"n":12}"#.utf8)
        for text in [#"{"joke_id":"j","rating":1.05,"n":12}"#, #"{"joke_id":"j","rating":1.55,"n":02}"#,
                     #"{"joke_id":"j","rating":0.55,"n":12}"#] {
            var scanner = Self.warmed(by: base)
            let line = Array(text.utf8)
            #expect(Self.report(&scanner, line) == Self.scalar(line), "\(text)")
            #expect(scanner.layoutHits == (text.contains("0.55") ? 2 : 1), "\(text)")
        }
        // A line of the same length that cannot have a layout leaves the one there be, however
        // many lines go by between the base line's.
        var scanner = Self.warmed(by: base)
        let fractionOfBaseLength = Array(#"{"joke_id":"j","rating":1.05,"n":12}"#.utf8)
        let (fractionAnswer, expected) = (Self.scalar(fractionOfBaseLength), Self.scalar(base))
        let hits = scanner.layoutHits
        for _ in 0..<100 {
            #expect(Self.report(&scanner, fractionOfBaseLength) == fractionAnswer)
            #expect(Self.report(&scanner, base) == expected)
        }
        #expect(scanner.layoutHits == hits + 100)
    }
}
