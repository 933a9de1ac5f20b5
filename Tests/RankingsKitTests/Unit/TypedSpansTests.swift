import Foundation
import Testing
@testable import RankingsKit

/// A typed document read from the scanner's spans (`TypedDocument.judge(_:captured:)`) gives
/// what the walk (`TypedDocument.judge(_:)`) gives, on every line of the typed corpora: the
/// typed sample, the typed_lines fuzz seeds, and the typed line tests' cases, as written and
/// compact (the form the fetch hook writes, which the spans answer). The fuzz target
/// `typed_lines` does the same on random lines.
@Suite("Typed documents from the scanner's spans")
struct TypedSpansTests {
    /// Every field an option may ask for.
    static let everyField: FieldSet = [FieldSet(.jokeID), FieldSet(.rating), FieldSet(.timestamp), FieldSet(.weekID),
                                       FieldSet(.deviceID), FieldSet(.eventID)]

    static var corpus: [[UInt8]] {
        let root = RankingsBinary.packageRoot
        var lines: [[UInt8]] = []
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-dc", root.appendingPathComponent("sample-data/typed/rating_events.typed.ndjson.gz").path]
        let pipe = Pipe()
        gzip.standardOutput = pipe
        try? gzip.run()
        let sample = pipe.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        lines += sample.split(separator: 0x0A).map { Array($0) }
        let seeds = root.appendingPathComponent("Tests/Fuzz/corpus/typed_lines")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: seeds.path)) ?? [] {
            // A seed is a mode byte, then a line or a file.
            guard let seed = FileManager.default.contents(atPath: seeds.appendingPathComponent(name).path) else { continue }
            lines += seed.dropFirst().split(separator: 0x0A).map { Array($0) }
        }
        let cases = (TypedLineTests.ratings + TypedLineTests.jokeIDs + TypedLineTests.documents).map(\.line)
        for line in cases {
            let text = line.trimmingCharacters(in: .newlines)
            lines.append(Array(text.utf8))
            lines.append(Array(text.replacingOccurrences(of: ": ", with: ":").replacingOccurrences(of: ", ", with: ",").utf8))
        }
        return lines
    }

    /// The verdict and every detail, as text.
    static func answer<D: RatingEventDetails & ~Copyable>(_ verdict: TypedDocument.Verdict, _ details: inout D) -> String {
        switch verdict {
        case .notDocument: return "not a document"
        case .leftOut: return "left out"
        case .bad(let why): return "bad: \(why)"
        case .valid(let id, let rating):
            func text(_ b: UnsafeBufferPointer<UInt8>?) -> String { b.map { "\(Array($0))" } ?? "nil" }
            return "valid \(Array(id)) \(rating.bitPattern) \(details.timestamp()) device \(text(details.deviceID())) "
                + "week \(text(details.weekID())) event \(text(details.eventID()))"
        }
    }

    /// The spans' answer and the walk's for each typed line, through one validator (so its line
    /// kernel's templates and layouts answer as in a run); how many the spans answered.
    static func compare(_ lines: [[UInt8]]) -> Int {
        var validator = RecordValidator(wanted: everyField)
        var fromSpans = 0
        for line in lines where !line.contains(0x0A) {
            let padded = line + [0x0A] + [UInt8](repeating: UInt8(ascii: "\""), count: LineReader.padding)
            padded.withUnsafeBufferPointer { buffer in
                let start = buffer.baseAddress!
                guard case .bad(.invalid(.missingJokeID)) = validator.judge(start) else { return }
                let text = UnsafeBufferPointer(start: start, count: line.count)
                var spans = TypedDocument(), walk = TypedDocument(), accepting = TypedDocument()
                let got = answer(spans.judge(text, captured: validator.fields), &spans)
                let expected = answer(walk.judge(text), &walk)
                #expect(got == expected, "\(String(decoding: line, as: UTF8.self))")
                if let accepted = accepting.accept(validator.fields) {
                    fromSpans += 1
                    #expect(answer(accepted, &accepting) == expected)
                }
            }
        }
        return fromSpans
    }

    @Test func theSpansAnswerAsTheWalkOnEveryCorpusLine() {
        let lines = Self.corpus
        #expect(lines.count > 5000)
        #expect(Self.compare(lines) > 4000, "the spans answer the sample's typed events")
    }

    @Test func theFetchHooksLinesAreReadFromTheSpans() {
        // One compact line each way the spans may take it, and beside each a near miss they
        // leave to the walk.
        let name = "projects/p/databases/(default)/documents/rating_events/d_j_w"
        func line(_ name: String = name, joke: String = #"{"stringValue":"j"}"#, rating: String = #"{"integerValue":"5"}"#) -> [UInt8] {
            Array(#"{"name":"\#(name)","fields":{"joke_id":\#(joke),"rating":\#(rating),"device_id":{"stringValue":"d"},"# .utf8)
                + Array(#""timestamp":{"timestampValue":"2025-09-14T20:27:05.643273Z"}},"createTime":"2025-09-14T20:27:07Z"}"#.utf8)
        }
        let taken = [line(), line(rating: #"{"integerValue":"1"}"#), line(joke: #"{"stringValue":"日本 {x}"}"#)]
        #expect(Self.compare(taken) == taken.count)
        let walked = [
            line(rating: #"{"integerValue":"6"}"#), line(rating: #"{"integerValue":"0"}"#),
            line(rating: #"{"integerValue":"15"}"#), line(rating: #"{"integerValue":5}"#),
            line(rating: #"{"doubleValue":5}"#), line(rating: #"{"integerValue":"5","x":1}"#),
            line(joke: #"{"stringValue":""}"#), line(joke: #"{"stringValue":"a","x":"b"}"#),
            line(joke: #"{"stringValue":"\u006a"}"#), line(joke: #"{"stringValue": "j"}"#),
            line("projects/p/databases/(default)/documents/jokes/j"),
            line("projects/p/databases/(default)/documents/rating_events/d/x/y"),
            line("projects/p/databases/(default)/documents/rating_events/"),
            line("projects//databases/(default)/documents/rating_events/e"),
            line("projects/p/databases//documents/rating_events/e"),
            line("projects/p/databases/(default)/documents/rating_event/e"),
            line(#"projects/p/databases/(default)/documents/rating_events\/e"#),
            line("project/p/databases/(default)/documents/rating_events/e"),
        ]
        #expect(Self.compare(walked) == 0)
    }
}
