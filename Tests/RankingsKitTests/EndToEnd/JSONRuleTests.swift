import Foundation
import Testing

/// One line per input rule, each run on its own so a failure names the rule it breaks. Every line
/// is the second line of its file, after a neutral event that keeps the run from being empty.
@Suite("Input rules, one line each")
struct JSONRuleTests {
    typealias Outcome = ReferenceAggregator.Outcome

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var line: [UInt8]
        var expected: Outcome
        var testDescription: String { name }

        init(_ name: String, _ line: String, _ expected: Outcome) {
            self.init(name, Array(line.utf8), expected)
        }
        init(_ name: String, _ line: [UInt8], _ expected: Outcome) {
            (self.name, self.line, self.expected) = (name, line, expected)
        }
    }

    static func event(_ id: String, _ kind: ReferenceAggregator.Kind) -> Outcome { .event(id: Array(id.utf8), kind: kind) }
    static func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    static let valid: [Case] = [
        Case("plain", #"{"joke_id":"a","rating":5}"#, event("a", .hilarious)),
        Case("5.0", #"{"joke_id":"a","rating":5.0}"#, event("a", .hilarious)),
        Case("5e0", #"{"joke_id":"a","rating":5e0}"#, event("a", .hilarious)),
        Case("0.5e1", #"{"joke_id":"a","rating":0.5e1}"#, event("a", .hilarious)),
        Case("4", #"{"joke_id":"a","rating":4}"#, event("a", .hilarious)),
        Case("3 is neutral", #"{"joke_id":"a","rating":3}"#, event("a", .neutral)),
        Case("2.5 is neutral", #"{"joke_id":"a","rating":2.5}"#, event("a", .neutral)),
        Case("3.5 is neutral", #"{"joke_id":"a","rating":3.5}"#, event("a", .neutral)),
        Case("2", #"{"joke_id":"a","rating":2}"#, event("a", .horrible)),
        Case("1E+0", #"{"joke_id":"a","rating":1E+0}"#, event("a", .horrible)),
        Case("rounds to 5 as a double", #"{"joke_id":"a","rating":5.0000000000000000001}"#, event("a", .hilarious)),
        Case("rounds to 1 as a double", #"{"joke_id":"a","rating":0.99999999999999999999}"#, event("a", .horrible)),
        Case("escaped keys", #"{"joke\u005fid":"a","\u0072ating":4}"#, event("a", .hilarious)),
        Case("escaped id equals raw", #"{"joke_id":"\u00e9","rating":5}"#, event("\u{E9}", .hilarious)),
        Case("surrogate pair", #"{"joke_id":"\ud83d\ude02","rating":5}"#, event("\u{1F602}", .hilarious)),
        Case("decomposed id kept as is", "{\"joke_id\":\"e\u{301}\",\"rating\":5}", event("e\u{301}", .hilarious)),
        Case("last duplicate wins", #"{"joke_id":"x","joke_id":"y","rating":1,"rating":5}"#, event("y", .hilarious)),
        Case("bad earlier duplicate ignored", #"{"rating":"bad","joke_id":"a","rating":4}"#, event("a", .hilarious)),
        Case("nested decoy ignored", #"{"meta":{"joke_id":"z","rating":1},"joke_id":"a","rating":5}"#, event("a", .hilarious)),
        Case("lone surrogate in an ignored field", #"{"joke_id":"a","rating":5,"note":"\ud800"}"#, event("a", .hilarious)),
        Case("huge number in an ignored field", #"{"joke_id":"a","rating":5,"n":1e400}"#, event("a", .hilarious)),
        Case("whitespace everywhere", " \t{ \"joke_id\" :\r\"a\" , \"rating\" : 5 } \t", event("a", .hilarious)),
        Case("DEL raw in id", "{\"joke_id\":\"a\u{7F}\",\"rating\":5}", event("a\u{7F}", .hilarious)),
        Case("U+2028 raw in id", "{\"joke_id\":\"a\u{2028}\",\"rating\":5}", event("a\u{2028}", .hilarious)),
        Case("depth 1000 is allowed", "{\"joke_id\":\"a\",\"rating\":5,\"d\":\(nested(999))}", event("a", .hilarious)),
        Case("escaped slash", #"{"joke_id":"a\/b","rating":5}"#, event("a/b", .hilarious)),
    ]

    static let invalid: [Case] = [
        Case("array", "[]", .invalidRecord),
        Case("string", #""a""#, .invalidRecord),
        Case("number", "5", .invalidRecord),
        Case("null", "null", .invalidRecord),
        Case("empty object", "{}", .invalidRecord),
        Case("no rating", #"{"joke_id":"a"}"#, .invalidRecord),
        Case("no joke_id", #"{"rating":5}"#, .invalidRecord),
        Case("empty id", #"{"joke_id":"","rating":5}"#, .invalidRecord),
        Case("numeric id", #"{"joke_id":5,"rating":5}"#, .invalidRecord),
        Case("null id", #"{"joke_id":null,"rating":5}"#, .invalidRecord),
        Case("lone high surrogate", #"{"joke_id":"\ud800","rating":5}"#, .invalidRecord),
        Case("lone low surrogate", #"{"joke_id":"a\udc00","rating":5}"#, .invalidRecord),
        Case("reversed pair", #"{"joke_id":"\ude02\ud83d","rating":5}"#, .invalidRecord),
        Case("rating string", #"{"joke_id":"a","rating":"5"}"#, .invalidRecord),
        Case("rating null", #"{"joke_id":"a","rating":null}"#, .invalidRecord),
        Case("rating true", #"{"joke_id":"a","rating":true}"#, .invalidRecord),
        Case("rating 0", #"{"joke_id":"a","rating":0}"#, .invalidRecord),
        Case("rating 0.999", #"{"joke_id":"a","rating":0.999}"#, .invalidRecord),
        Case("rating 5.001", #"{"joke_id":"a","rating":5.001}"#, .invalidRecord),
        Case("rating -5", #"{"joke_id":"a","rating":-5}"#, .invalidRecord),
        Case("rating 1e400", #"{"joke_id":"a","rating":1e400}"#, .invalidRecord),
        Case("last duplicate bad", #"{"joke_id":"a","rating":5,"rating":null}"#, .invalidRecord),
        Case("key differs in case", #"{"Joke_id":"a","rating":5}"#, .invalidRecord),
    ]

    static let malformed: [Case] = [
        Case("trailing comma", #"{"joke_id":"a","rating":5,}"#, .malformed),
        Case("single quotes", "{'joke_id':'a','rating':5}", .malformed),
        Case("NaN", #"{"joke_id":"a","rating":NaN}"#, .malformed),
        Case("Infinity", #"{"joke_id":"a","rating":Infinity}"#, .malformed),
        Case("leading zero", #"{"joke_id":"a","rating":05}"#, .malformed),
        Case("plus sign", #"{"joke_id":"a","rating":+5}"#, .malformed),
        Case("bare fraction", #"{"joke_id":"a","rating":.5}"#, .malformed),
        Case("trailing dot", #"{"joke_id":"a","rating":5.}"#, .malformed),
        Case("raw tab in string", "{\"joke_id\":\"a\tb\",\"rating\":5}", .malformed),
        Case("raw NUL in ignored string", Array(#"{"joke_id":"a","rating":5,"n":"#.utf8) + [0x22, 0x00, 0x22, 0x7D], .malformed),
        Case("bad escape", #"{"joke_id":"a\x41","rating":5}"#, .malformed),
        Case("short unicode escape", #"{"joke_id":"a","rating":5,"n":"\u12"}"#, .malformed),
        Case("trailing garbage", #"{"joke_id":"a","rating":5} x"#, .malformed),
        Case("two values", #"{"joke_id":"a","rating":5}{}"#, .malformed),
        Case("truncated", #"{"joke_id":"a","rating":5"#, .malformed),
        Case("missing colon", #"{"joke_id" "a","rating":5}"#, .malformed),
        Case("comment", #"{"joke_id":"a","rating":5} // c"#, .malformed),
        Case("capitalised literal", #"{"joke_id":"a","rating":5,"f":True}"#, .malformed),
        Case("form feed is not whitespace", "{\"joke_id\":\"a\",\u{C}\"rating\":5}", .malformed),
        Case("no-break space is not whitespace", "{\"joke_id\":\"a\",\u{A0}\"rating\":5}", .malformed),
        Case("BOM on a later line", "\u{FEFF}{\"joke_id\":\"a\",\"rating\":5}", .malformed),
        Case("lone UTF-8 lead byte", Array(#"{"joke_id":"a","rating":5,"n":""#.utf8) + [0xC3, 0x22, 0x7D], .malformed),
        Case("overlong UTF-8", Array(#"{"joke_id":"a","rating":5,"n":""#.utf8) + [0xC0, 0xAF, 0x22, 0x7D], .malformed),
        Case("UTF-8 surrogate", Array(#"{"joke_id":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#"","rating":5}"#.utf8), .malformed),
        Case("above U+10FFFF", Array(#"{"joke_id":"a","rating":5,"n":""#.utf8) + [0xF4, 0x90, 0x80, 0x80, 0x22, 0x7D], .malformed),
        Case("byte 0xFF", Array(#"{"joke_id":"a","rating":5,"n":""#.utf8) + [0xFF, 0x22, 0x7D], .malformed),
        Case("depth 1001", "{\"joke_id\":\"a\",\"rating\":5,\"d\":\(nested(1000))}", .malformed),
        Case("depth 100000 never crashes", "{\"joke_id\":\"a\",\"rating\":5,\"d\":\(nested(100_000))}", .malformed),
        Case("unclosed depth 100000", String(repeating: "[", count: 100_000), .malformed),
        Case("unclosed object nest", String(repeating: "{\"a\":", count: 50_000), .malformed),
    ]

    @Test("each line is classified as the spec says", arguments: valid + invalid + malformed)
    func classify(_ c: Case) throws {
        // The oracle must agree first, or the test itself is wrong.
        #expect(ReferenceAggregator.classify(c.line) == c.expected, "reference disagrees on \(c.name)")
        try ScratchDirectory.with { dir in
            let anchor = Array(eventLine("anchor", "3").utf8)
            let file = anchor + c.line + [0x0A]
            let input = try dir.write("line.ndjson", file)
            let result = try RankingsBinary.run(["aggregate", "-q", "--max-invalid", "1", "--top", "1000",
                                                 "--computed-at", fixedComputedAt, input])
            try #require(result.status == 0, "status \(result.status), stderr: \(result.stderrText)")
            var reference = ReferenceAggregator()
            reference.add(file: file, path: input)
            let expectedDocument = reference.document(top: 1000, computedAt: fixedComputedAt)
            #expect(firstDifference(expectedDocument, Array(result.stdout)) == nil,
                    "\(firstDifference(expectedDocument, Array(result.stdout)) ?? "")")
            switch c.expected {
            case .malformed: #expect(result.stderrText.hasPrefix("\(input):2: malformed JSON: "), "\(result.stderrText)")
            case .invalidRecord: #expect(result.stderrText.hasPrefix("\(input):2: invalid record: "), "\(result.stderrText)")
            default: #expect(result.stderr.isEmpty, "\(result.stderrText)")
            }
        }
    }
}
