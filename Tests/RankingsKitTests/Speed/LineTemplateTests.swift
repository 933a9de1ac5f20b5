import CKernels
import Testing
@testable import RankingsKit

/// The AVX-512 kernel's templates (Sources/CKernels/line_template.c) change nothing the scanner
/// reports. A template stands in for the walk when a line's skeleton matches one the walk
/// accepted, so each case here first shows the scanner a line the walk accepts (twice: the
/// second must come from the template), then a line that differs from it by one byte, one
/// shape or one number, whose answer must be the scalar scanner's. The fuzz target `simd_scan`
/// does the same from lines spliced into an export's.
@Suite("Line templates agree with the scalar scanner", .enabled(if: CPUAvailability.runs(RK_CPU_AVX512), CPUAvailability.reason(RK_CPU_AVX512)))
struct LineTemplateTests {
    static let all = FieldSet(rawValue: .max)

    static func report(_ scanner: inout JSONLineScanner, _ line: [UInt8]) -> String {
        LineKernelAgreementTests.report(&scanner, line)
    }

    static func scalar(_ line: [UInt8]) -> String {
        var scanner = JSONLineScanner(wanted: all, simd: false, lineKernel: 0)
        return report(&scanner, line)
    }

    /// A scanner that has made a template of `base` and answered it from the template once.
    static func warmed(by base: [UInt8]) -> JSONLineScanner {
        var scanner = JSONLineScanner(wanted: all, simd: true, lineKernel: RK_CPU_AVX512)
        _ = report(&scanner, base)
        _ = report(&scanner, base)
        return scanner
    }

    static func expectAgreement(after base: [UInt8], _ line: [UInt8], _ comment: @autoclosure () -> String) {
        var scanner = warmed(by: base)
        let kernel = report(&scanner, line), reference = scalar(line)
        #expect(kernel == reference, "\(comment()): \(String(decoding: line, as: UTF8.self))")
    }

    @Test func theTemplateAnswersForTheCommonShapes() {
        for line in LineKernelAgreementTests.accepted {
            let bytes = Array(line.utf8)
            var scanner = Self.warmed(by: bytes)
            #expect(scanner.templateHits == 1, "\(line)")
            #expect(Self.report(&scanner, bytes) == Self.scalar(bytes), "\(line)")
            #expect(scanner.templateHits == 2, "\(line)")
        }
    }

    @Test(arguments: 0..<LineKernelAgreementTests.accepted.count)
    func everyOneByteChangeAfterTheLine(_ index: Int) {
        let base = Array(LineKernelAgreementTests.accepted[index].utf8)
        LineKernelAgreementTests.oneByteChanges(of: base) { line, what in Self.expectAgreement(after: base, line, what) }
    }

    @Test func linesOfTheSameShapeTakeTheTemplateAndTheirOwnSpans() {
        // Other strings and numbers of other lengths: one skeleton, so the template answers,
        // and every span is the line's own.
        let base = Array(#"{"id":"e1","joke_id":"j1","rating":5,"device_id":"d","week_id":"2025-W01","timestamp":{"_seconds":1,"_nanoseconds":0}}"#.utf8)
        let same = [
            #"{"id":"event-two","joke_id":"a much longer joke id","rating":1,"device_id":"","week_id":"x","timestamp":{"_seconds":1757881625,"_nanoseconds":643273000}}"#,
            #"{"id":"","joke_id":"","rating":3,"device_id":"dd","week_id":"","timestamp":{"_seconds":0,"_nanoseconds":99}}"#,
            #"{"id":"é","joke_id":"日本","rating":0,"device_id":"😀","week_id":"[{:,}]","timestamp":{"_seconds":10,"_nanoseconds":1}}"#,
        ]
        for line in same {
            var scanner = Self.warmed(by: base)
            let bytes = Array(line.utf8)
            #expect(Self.report(&scanner, bytes) == Self.scalar(bytes), "\(line)")
            #expect(scanner.templateHits == 2, "the template answers: \(line)")
        }
    }

    @Test func whatASkeletonCannotShowGoesToTheWalk() {
        // Numbers with a leading zero read as the same skeleton as good ones; the scalar
        // scanner's verdict stands (`01` is malformed, `1.05` and `1e05` are numbers).
        let base = Array(#"{"joke_id":"j","rating":5,"n":1.5,"e":1e5}"#.utf8)
        let lines = [
            #"{"joke_id":"j","rating":05,"n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":0,"n":1.05,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":01.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":1e05}"#,
            #"{"joke_id":"j","rating":-05,"n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":00,"n":1.5,"e":1e5}"#,
        ]
        for line in lines { Self.expectAgreement(after: base, Array(line.utf8), "leading zero") }
        // A string that follows a colon is cut in the skeleton: not one that follows a space,
        // or that sits in an array; keys of the same length name other fields.
        let others = [
            #"{"joke_id": "j","rating":5,"n":1.5,"e":1e5}"#,
            #"{"week_id":"j","rating":5,"n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":[1.5],"e":1e5}"#,
            #"{"joke_id":"j","rating":"5","n":1.5,"e":1e5}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":"1e5"}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":1e5,"":""}"#,
            #"{"joke_id":"j","rating":5,"n":1.5,"e":1e5"#,
        ]
        for line in others { Self.expectAgreement(after: base, Array(line.utf8), "another shape") }
    }

    @Test func anEmptySlotMatchesNothing() {
        // The empty line's skeleton is empty, as an unused slot's is: still declined, whatever
        // is wanted (a review found it taken with nothing wanted).
        var templates = rk_line_templates()
        let spans = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: Int(RK_SPANS))
        defer { spans.deallocate() }
        var found: UInt32 = 0
        let line = [UInt8(ascii: "\n")] + [UInt8](repeating: 0, count: LineReader.padding)
        for wanted: UInt32 in [0, 1, 0xFF] {
            let end = line.withUnsafeBufferPointer { rk_scan_line($0.baseAddress!, wanted, spans, &found, RK_CPU_AVX512, &templates) }
            #expect(end == nil, "wanted \(wanted)")
        }
        #expect(templates.hits == 0)
    }

    @Test func aFileOfEverChangingShapesRestsTheTemplatesAndComesBack() {
        // Keys in another order on each of 20 lines, and a key of its own on each (an order met
        // before would be answered by the layout kept from it): no template answers, so after
        // 16 misses they rest for 1,024 lines (the AVX2 index and the walk answer), then are
        // tried again.
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
        var scanner = JSONLineScanner(wanted: Self.all, simd: true, lineKernel: RK_CPU_AVX512)
        for line in lines { #expect(Self.report(&scanner, line) == Self.scalar(line)) }
        let resting = scanner.templateHits
        let reference = Self.scalar(steady)
        for number in 0..<(Int(RK_PATIENCE_REST) + 40) {
            let answer = Self.report(&scanner, steady)
            if answer != reference { Issue.record("line \(number): \(answer)"); return }
            // Resting: no template answers, however alike the lines.
            if number < Int(RK_PATIENCE_REST) - 20 { #expect(scanner.templateHits == resting) }
        }
        #expect(scanner.templateHits >= resting + 30)
    }

    @Test func moreShapesThanTemplatesThroughOneScanner() {
        // Shapes in turn, more of them than a scanner keeps, so templates are made, matched
        // and replaced: every answer is the scalar scanner's.
        var scanner = JSONLineScanner(wanted: Self.all, simd: true, lineKernel: RK_CPU_AVX512)
        let shapes = LineKernelAgreementTests.accepted.map { Array($0.utf8) }
        #expect(shapes.count > Int(RK_TEMPLATES))
        for round in 0..<3 {
            for (index, line) in shapes.enumerated() {
                for _ in 0...round {
                    let kernel = Self.report(&scanner, line), reference = Self.scalar(line)
                    #expect(kernel == reference, "round \(round), shape \(index)")
                }
            }
        }
        #expect(scanner.templateHits > 0)
    }
}

/// Layouts (Sources/CKernels/line_layout.c): a line with the bytes of one the templates answered
/// wherever its structure is takes that line's spans without its skeleton. The one-byte changes
/// above reach them too (the warmed scanner holds the base line's layout); here, that they
/// answer, and what they must leave to the templates.
extension LineTemplateTests {
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

    @Test func aLeadingZeroIsLeftToTheTemplates() {
        // A fraction's leading 0 is fine, but a layout cannot tell it from `05`: no layout is
        // made of such a line, and a line with a 0 where the layout has a run's first digit is
        // left to the skeleton (which leaves it to the walk).
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
        // A line of the same length that cannot have a layout leaves the one there be (it
        // cleared the slot once; a review found it).
        // Taking turns with the base line, past the 64 lines a new layout waits for.
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
