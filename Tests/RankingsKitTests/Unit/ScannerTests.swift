import Foundation
import Testing
@testable import RankingsKit

/// `JSONLineScanner` on lines laid out as `LineReader` hands them over, rule by rule of
/// RFC 8259, then field capture, then `RecordDecoder`.
@Suite("JSON line scanner and record decoder")
struct ScannerTests {
    struct Line: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var label: String
        init(_ text: String, _ label: String? = nil) {
            bytes = Array(text.utf8)
            self.label = label ?? text
        }
        init(bytes: [UInt8], _ label: String) {
            self.bytes = bytes
            self.label = label
        }
        var testDescription: String { label }
    }

    // MARK: Valid JSON texts

    static let validObjects: [Line] = [
        Line("{}"), Line(" \t{ }\r", "space, tab, CR around an empty object"), Line("{}\r", "CRLF ending"),
        Line(#"{"a":0}"#), Line(#"{"a":-0}"#), Line(#"{"a":10}"#), Line(#"{"a":0.5}"#), Line(#"{"a":-1.5e+10}"#),
        Line(#"{"a":1E-2}"#), Line(#"{"a":1e5}"#), Line(#"{"a":0e0}"#), Line(#"{"a":123456789012345678901234567890}"#),
        Line(#"{"a":true,"b":false,"c":null}"#), Line(#"{"a":[1,[2,{}],[],{"b":[null]}]}"#),
        Line(#"{ "a" : [ 1 , 2 ] , "b" : { } }"#),
        Line(#"{"a":"\"\\\/\b\f\n\r\t"}"#, "every short escape"),
        Line(#"{"a":"\u00e9\u00E9\uD83D\uDE00\u0000\uffff"}"#, "unicode escapes"),
        Line(#"{"a":"\ud800"}"#, "lone high surrogate escape in an ignored field"),
        Line(#"{"a":"\udc00x"}"#, "lone low surrogate escape in an ignored field"),
        Line(#"{"a":"\ud83d\u0041"}"#, "high surrogate followed by a non-surrogate"),
        Line(#"{"\ud800":1}"#, "lone surrogate in a key"),
        Line("{\"a\":\"é😀\u{10FFFF}\u{800}\u{FFFD}\"}", "raw multi-byte UTF-8"),
        Line("{\"a\":\"\u{7F}\"}", "raw DEL is not a control character"),
        Line("{\"a\":\"\(String(repeating: "x", count: 1000))\"}", "long string crosses the 16-byte fast path"),
        Line("{\"a\":\"\(String(repeating: "x", count: 15))é\(String(repeating: "y", count: 16))\"}", "non-ASCII at a block edge"),
        Line(#"{"":""}"#, "empty key and value"),
    ]

    @Test("valid object", arguments: validObjects)
    func validObject(_ line: Line) {
        let r = ScanResult.scan(line.bytes)
        #expect(r.outcome == .object, "\(r)")
    }

    static let validNonObjects: [Line] = [
        Line("[]"), Line("1"), Line("-0.0e0"), Line(#""s""#), Line("true"), Line("false"), Line("null"),
        Line(" 0 "), Line(#"[{"joke_id":"a","rating":5}]"#), Line("[[],[[]]]"),
    ]

    @Test("valid JSON that is not an object", arguments: validNonObjects)
    func validNonObject(_ line: Line) {
        let r = ScanResult.scan(line.bytes)
        #expect(r.outcome == .notObject, "\(r)")
    }

    static let blanks: [Line] = [Line("", "empty"), Line(" ", "space"), Line("\t\r  \t", "tabs, spaces and CR"), Line("\r", "CR only")]

    @Test("blank line", arguments: blanks)
    func blank(_ line: Line) {
        #expect(ScanResult.scan(line.bytes).outcome == .blank)
    }

    // MARK: Malformed lines

    struct Bad: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var failure: Malformation
        /// Byte offset from the line start, when the case pins it.
        var offset: Int?
        var label: String
        init(_ text: String, _ failure: Malformation, at offset: Int? = nil, _ label: String? = nil) {
            bytes = Array(text.utf8)
            self.failure = failure
            self.offset = offset
            self.label = label ?? text
        }
        init(bytes: [UInt8], _ failure: Malformation, at offset: Int? = nil, _ label: String) {
            self.bytes = bytes
            self.failure = failure
            self.offset = offset
            self.label = label
        }
        var testDescription: String { label }
    }

    static func inString(_ raw: [UInt8]) -> [UInt8] { Array(#"{"joke_id":"a","x":""#.utf8) + raw + Array(#"","rating":5}"#.utf8) }
    static let stringStart = #"{"joke_id":"a","x":""#.utf8.count

    static let malformed: [Bad] = [
        // Numbers
        Bad(#"{"a":01}"#, .leadingZero, at: 5), Bad(#"{"a":-01}"#, .leadingZero, at: 5), Bad(#"{"a":00}"#, .leadingZero, at: 5),
        Bad(#"{"a":-}"#, .badNumber, at: 5), Bad(#"{"a":1.}"#, .badNumber, at: 5), Bad(#"{"a":1.e5}"#, .badNumber, at: 5),
        Bad(#"{"a":.5}"#, .unexpectedCharacter, at: 5), Bad(#"{"a":1e}"#, .badNumber, at: 5), Bad(#"{"a":1e+}"#, .badNumber, at: 5),
        Bad(#"{"a":1E-}"#, .badNumber, at: 5), Bad(#"{"a":+1}"#, .unexpectedCharacter, at: 5),
        Bad(#"{"a":NaN}"#, .unexpectedCharacter, at: 5), Bad(#"{"a":Infinity}"#, .unexpectedCharacter, at: 5),
        Bad(#"{"a":-Infinity}"#, .badNumber, at: 5), Bad(#"{"a":nan}"#, .badLiteral, at: 5),
        Bad(#"{"a":0x10}"#, .expectedCommaOrBrace, at: 6), Bad(#"{"a":1.5.}"#, .expectedCommaOrBrace, at: 8),
        Bad("-", .badNumber, at: 0), Bad("01", .leadingZero, at: 0),
        // Trailing commas, structure
        Bad(#"{"a":1,}"#, .expectedKey, at: 7), Bad("[1,]", .unexpectedCharacter, at: 3), Bad(#"{"a":[1,]}"#, .unexpectedCharacter, at: 8),
        Bad("{,}", .expectedKey, at: 1), Bad("[,1]", .unexpectedCharacter, at: 1),
        Bad(#"{"a" 1}"#, .expectedColon, at: 5), Bad(#"{"a":1 "b":2}"#, .expectedCommaOrBrace, at: 7),
        Bad("[1 2]", .expectedCommaOrBracket, at: 3), Bad("[1}", .expectedCommaOrBracket, at: 2), Bad(#"{"a":1]"#, .expectedCommaOrBrace, at: 6),
        Bad("{a:1}", .expectedKey, at: 1), Bad(#"{1:1}"#, .expectedKey, at: 1),
        // Single quotes
        Bad("{'a':1}", .expectedKey, at: 1), Bad(#"{"a":'x'}"#, .unexpectedCharacter, at: 5),
        // Unexpected end
        Bad("{", .unexpectedEnd, at: 1), Bad("[", .unexpectedEnd, at: 1), Bad(#"{"a""#, .unexpectedEnd, at: 4),
        Bad(#"{"a":"#, .unexpectedEnd, at: 5), Bad(#"{"a":1"#, .unexpectedEnd, at: 6), Bad(#"{"a":1,"#, .unexpectedEnd, at: 7),
        Bad(#"{"a":"abc"#, .unterminatedString, at: 9), Bad(#"{"a\"#, .unterminatedString, at: 3),
        Bad(#"{"rating":5"#, .unexpectedEnd, at: 11),
        // Literals
        Bad(#"{"a":tru}"#, .badLiteral, at: 5), Bad(#"{"a":nul}"#, .badLiteral, at: 5), Bad(#"{"a":fals}"#, .badLiteral, at: 5),
        Bad(#"{"a":True}"#, .unexpectedCharacter, at: 5), Bad(#"{"a":falsey}"#, .expectedCommaOrBrace, at: 10),
        Bad(#"{"a":undefined}"#, .unexpectedCharacter, at: 5), Bad("tru", .badLiteral, at: 0),
        // Comments are not JSON
        Bad(#"{"a":1} // c"#, .trailingCharacters, at: 8), Bad(#"{/*c*/"a":1}"#, .expectedKey, at: 1),
        // Control characters in strings
        Bad(bytes: Array(#"{"a":"x"#.utf8) + [0x01] + Array(#""}"#.utf8), .controlCharacterInString, at: 7, "raw 0x01"),
        Bad(bytes: Array(#"{"a":"x"#.utf8) + [0x09] + Array(#""}"#.utf8), .controlCharacterInString, at: 7, "raw tab"),
        Bad(bytes: Array(#"{"a":"x"#.utf8) + [0x1F] + Array(#""}"#.utf8), .controlCharacterInString, at: 7, "raw 0x1F"),
        Bad(bytes: Array(#"{"a":"x"#.utf8) + [0x00] + Array(#""}"#.utf8), .controlCharacterInString, at: 7, "raw NUL"),
        Bad(bytes: Array(#"{"a":"x"#.utf8) + [0x0D] + Array(#""}"#.utf8), .controlCharacterInString, at: 7, "raw CR"),
        Bad(bytes: Array(#"{"x"#.utf8) + [0x0C] + Array(#"":1}"#.utf8), .controlCharacterInString, at: 3, "raw form feed in a key"),
        // Escapes
        Bad(#"{"a":"\x41"}"#, .badEscape, at: 6), Bad(#"{"a":"\U0041"}"#, .badEscape, at: 6), Bad(#"{"a":"\'"}"#, .badEscape, at: 6),
        Bad(#"{"a":"\a"}"#, .badEscape, at: 6), Bad(#"{"a":"\0"}"#, .badEscape, at: 6),
        Bad(#"{"a":"\u12G4"}"#, .badUnicodeEscape, at: 6), Bad(#"{"a":"\u12"}"#, .badUnicodeEscape, at: 6),
        Bad(#"{"a":"\u"}"#, .badUnicodeEscape, at: 6), Bad(#"{"a":"\u-123"}"#, .badUnicodeEscape, at: 6),
        Bad(#"{"\x":1}"#, .badEscape, at: 2),
        // Invalid UTF-8, inside an ignored string field
        Bad(bytes: inString([0xC0, 0x80]), .invalidUTF8, at: stringStart, "overlong C0 80"),
        Bad(bytes: inString([0xC1, 0xBF]), .invalidUTF8, at: stringStart, "overlong C1 BF"),
        Bad(bytes: inString([0xE0, 0x80, 0xAF]), .invalidUTF8, at: stringStart, "overlong E0 80 AF"),
        Bad(bytes: inString([0xF0, 0x80, 0x80, 0xAF]), .invalidUTF8, at: stringStart, "overlong F0 80 80 AF"),
        Bad(bytes: inString([0xED, 0xA0, 0x80]), .invalidUTF8, at: stringStart, "surrogate ED A0 80"),
        Bad(bytes: inString([0xED, 0xBF, 0xBF]), .invalidUTF8, at: stringStart, "surrogate ED BF BF"),
        Bad(bytes: inString([0xF4, 0x90, 0x80, 0x80]), .invalidUTF8, at: stringStart, "above U+10FFFF"),
        Bad(bytes: inString([0xF5, 0x80, 0x80, 0x80]), .invalidUTF8, at: stringStart, "F5 lead byte"),
        Bad(bytes: inString([0xF8, 0x88, 0x80, 0x80, 0x80]), .invalidUTF8, at: stringStart, "F8 lead byte"),
        Bad(bytes: inString([0xFE]), .invalidUTF8, at: stringStart, "FE"), Bad(bytes: inString([0xFF]), .invalidUTF8, at: stringStart, "FF"),
        Bad(bytes: inString([0x80]), .invalidUTF8, at: stringStart, "stray continuation byte"),
        Bad(bytes: inString([0x61, 0xBF]), .invalidUTF8, at: stringStart + 1, "stray continuation after ASCII"),
        Bad(bytes: inString([0xC3]), .invalidUTF8, at: stringStart, "2-byte sequence cut by the quote"),
        Bad(bytes: inString([0xE2, 0x82]), .invalidUTF8, at: stringStart, "3-byte sequence cut by the quote"),
        Bad(bytes: inString([0xF0, 0x9F, 0x98]), .invalidUTF8, at: stringStart, "4-byte sequence cut by the quote"),
        Bad(bytes: inString([0xF0, 0x9F, 0x98, 0x80, 0x80]), .invalidUTF8, at: stringStart + 4, "extra continuation after emoji"),
        Bad(bytes: inString([0xC3, 0x41]), .invalidUTF8, at: stringStart, "lead byte then ASCII"),
        Bad(bytes: Array(#"{"a":""#.utf8) + [0xC3], .invalidUTF8, at: 6, "lead byte right before the line end"),
        Bad(bytes: Array(#"{"a":""#.utf8) + [0xF0, 0x9F], .invalidUTF8, at: 6, "truncated emoji at the line end"),
        Bad(bytes: inString(Array(repeating: 0x61, count: 30) + [0xC0, 0x80]),
            .invalidUTF8, at: stringStart + 30, "overlong after a fast-path block"),
        // Non-ASCII outside strings
        Bad("{\"a\":é}", .nonASCIIOutsideString, at: 5), Bad("\u{FEFF}{}", .nonASCIIOutsideString, at: 0, "BOM inside the file"),
        Bad("\u{A0}{}", .nonASCIIOutsideString, at: 0, "no-break space is not JSON whitespace"),
        Bad("\u{0B}{}", .unexpectedCharacter, at: 0, "vertical tab is not JSON whitespace"),
        Bad("\u{0C}{}", .unexpectedCharacter, at: 0, "form feed is not JSON whitespace"),
        // Trailing garbage, two values
        Bad("{} x", .trailingCharacters, at: 3), Bad("{}{}", .trailingCharacters, at: 2), Bad(#"{"a":1} {"b":2}"#, .trailingCharacters, at: 8),
        Bad("1 2", .trailingCharacters, at: 2), Bad("{}]", .trailingCharacters, at: 2), Bad("{}}", .trailingCharacters, at: 2),
        Bad("[]]", .trailingCharacters, at: 2), Bad("{},", .trailingCharacters, at: 2), Bad(#""a""b""#, .trailingCharacters, at: 3),
        Bad(bytes: Array("{}".utf8) + [0x00], .trailingCharacters, at: 2, "NUL after the object"),
    ]

    @Test("malformed line", arguments: malformed)
    func malformedLine(_ bad: Bad) {
        let r = ScanResult.scan(bad.bytes)
        #expect(r.outcome == .malformed, "\(r)")
        #expect(r.failure == bad.failure, "\(r)")
        if let offset = bad.offset { #expect(r.failOffset == offset, "\(r)") }
    }

    /// Every valid UTF-8 boundary form passes where its neighbours above fail.
    @Test func utf8BoundaryFormsAreValid() {
        let forms: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],
            [0xF0, 0x90, 0x80, 0x80], [0xF3, 0xBF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for form in forms {
            let r = ScanResult.scan(Self.inString(form))
            #expect(r.outcome == .object, "\(form): \(r)")
            #expect(r.jokeID == Array(#""a""#.utf8))
        }
    }

    /// Every byte 0x00–0x1F raw in a string is malformed; every one escaped as \u00XX is fine.
    @Test func everyControlCharacter() {
        for c in UInt8(0)...UInt8(0x1F) where c != 0x0A {
            let raw = ScanResult.scan(Self.inString([c]))
            #expect(raw.outcome == .malformed && raw.failure == .controlCharacterInString, "raw \(c): \(raw)")
            let escaped = ScanResult.scan(Self.inString(Array(String(format: "\\u%04x", c).utf8)))
            #expect(escaped.outcome == .object, "escaped \(c): \(escaped)")
        }
    }

    // MARK: Nesting

    @Test func nestingOf1000IsAcceptedAnd1001IsTooDeep() {
        let arrays1000 = [UInt8](repeating: UInt8(ascii: "["), count: 1000) + [UInt8](repeating: UInt8(ascii: "]"), count: 1000)
        #expect(ScanResult.scan(arrays1000).outcome == .notObject)

        // An object holding 999 arrays is 1000 levels deep.
        let object1000 = Array(#"{"a":"#.utf8) + [UInt8](repeating: UInt8(ascii: "["), count: 999)
            + [UInt8](repeating: UInt8(ascii: "]"), count: 999) + Array(#","joke_id":"j","rating":5}"#.utf8)
        let ok = ScanResult.scan(object1000)
        #expect(ok.outcome == .object, "\(ok)")
        #expect(ok.jokeID == Array(#""j""#.utf8))

        let arrays1001 = [UInt8](repeating: UInt8(ascii: "["), count: 1001) + [UInt8](repeating: UInt8(ascii: "]"), count: 1001)
        let deep = ScanResult.scan(arrays1001)
        #expect(deep.outcome == .malformed)
        #expect(deep.failure == .tooDeep)
        #expect(deep.failOffset == 1000)

        var objects1001: [UInt8] = []
        for _ in 0..<1001 { objects1001 += Array(#"{"a":"#.utf8) }
        objects1001 += Array("1".utf8) + [UInt8](repeating: UInt8(ascii: "}"), count: 1001)
        let deepObjects = ScanResult.scan(objects1001)
        #expect(deepObjects.outcome == .malformed && deepObjects.failure == .tooDeep, "\(deepObjects)")
        #expect(deepObjects.failOffset == 1000 * 5)
    }

    @Test func hundredThousandLevelsFailWithoutCrashing() {
        let open = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let r = ScanResult.scan(open + [UInt8](repeating: UInt8(ascii: "]"), count: 100_000))
        #expect(r.outcome == .malformed && r.failure == .tooDeep)
        let unclosed = ScanResult.scan(open)
        #expect(unclosed.outcome == .malformed && unclosed.failure == .tooDeep)
        let mixed = ScanResult.scan([UInt8](repeating: UInt8(ascii: "{"), count: 100_000))
        #expect(mixed.outcome == .malformed && mixed.failure == .expectedKey)
        var objects: [UInt8] = []
        for _ in 0..<100_000 { objects += Array(#"{"a":["#.utf8) }
        let deepObjects = ScanResult.scan(objects)
        #expect(deepObjects.outcome == .malformed && deepObjects.failure == .tooDeep)
    }

    // MARK: Field capture

    static func fields(_ text: String) -> (jokeID: String?, rating: String?) {
        let r = ScanResult.scan(text)
        #expect(r.outcome == .object, "\(text): \(r)")
        return (r.jokeID.map { String(decoding: $0, as: UTF8.self) }, r.rating.map { String(decoding: $0, as: UTF8.self) })
    }

    @Test func capturesRawValueSpans() {
        #expect(Self.fields(#"{"joke_id":"abc","rating":5}"#) == (#""abc""#, "5"))
        #expect(Self.fields(#"{ "joke_id" : "abc" , "rating" : 4.5e0 }"#) == (#""abc""#, "4.5e0"))
        #expect(Self.fields("{\"rating\":\t-1\r,\"joke_id\":\"a\\\"b\"\t}\r") == (#""a\"b""#, "-1"))
        #expect(Self.fields(#"{"joke_id":{"a":[1,{}]},"rating":[1, 2]}"#) == (#"{"a":[1,{}]}"#, "[1, 2]"))
        #expect(Self.fields(#"{"joke_id":null,"rating":true}"#) == ("null", "true"))
        #expect(Self.fields(#"{"joke_id":[],"rating":{}}"#) == ("[]", "{}"))
        #expect(Self.fields(#"{"joke_id":"","rating":"5"}"#) == (#""""#, #""5""#))
        #expect(Self.fields(#"{"x":1}"#) == (nil, nil))
        #expect(Self.fields("{}") == (nil, nil))
    }

    @Test func lastDuplicateKeyWins() {
        #expect(Self.fields(#"{"joke_id":"a","joke_id":"b","rating":1,"rating":5}"#) == (#""b""#, "5"))
        #expect(Self.fields(#"{"rating":1,"joke_id":"a","rating":2,"joke_id":"b","rating":3}"#) == (#""b""#, "3"))
        #expect(Self.fields(#"{"joke_id":"a","joke_id":7}"#) == ("7", nil))
        #expect(Self.fields(#"{"joke\u005fid":"escaped","joke_id":"plain"}"#) == (#""plain""#, nil))
        #expect(Self.fields(#"{"joke_id":"plain","joke\u005fid":"escaped"}"#) == (#""escaped""#, nil))
    }

    @Test func escapedKeysAreRecognised() {
        #expect(Self.fields(#"{"joke\u005fid":"x","r\u0061ting":5}"#) == (#""x""#, "5"))
        #expect(Self.fields(#"{"joke\u005Fid":"x"}"#) == (#""x""#, nil))
        #expect(Self.fields(#"{"\u006a\u006F\u006b\u0065\u005f\u0069\u0064":"y"}"#) == (#""y""#, nil))
        // \/ unescapes to '/', not to anything wanted; a lone surrogate key spells nothing.
        #expect(Self.fields(#"{"joke\/id":"x","\ud800rating":5}"#) == (nil, nil))
    }

    @Test func nearMissKeysAreIgnored() {
        for key in ["Joke_id", "joke_id ", " joke_id", "jokeid", "joke-id", "joke_i", "joke_idd", "ratings", "Rating",
                    "joke_id\\u0000", "\\u0000joke_id", "rating\\n"] {
            #expect(Self.fields("{\"\(key)\":\"a\"}") == (nil, nil), "\(key)")
        }
    }

    @Test func nestedFieldsAreIgnored() {
        #expect(Self.fields(#"{"meta":{"joke_id":"n","rating":1},"joke_id":"t","rating":4}"#) == (#""t""#, "4"))
        #expect(Self.fields(#"{"meta":{"joke_id":"n","rating":1}}"#) == (nil, nil))
        #expect(Self.fields(#"{"x":[{"joke_id":"n"}],"y":[[{"rating":1}]]}"#) == (nil, nil))
        #expect(Self.fields(#"{"joke_id":"a","x":{"joke_id":"b","rating":2},"rating":5}"#) == (#""a""#, "5"))
        #expect(Self.fields(#"{"x":{"y":{"joke_id":"deep"}},"rating":1}"#) == (nil, "1"))
        // A key's value being an object whose own keys include joke_id.
        #expect(Self.fields(#"{"joke_id":{"joke_id":"inner"}}"#) == (#"{"joke_id":"inner"}"#, nil))
    }

    /// One scanner over many lines: nothing captured on one line leaks into the next.
    @Test func scannerIsReusableAcrossLines() {
        var scanner = JSONLineScanner()
        let lines: [(String, JSONLineScanner.Outcome, String?)] = [
            (#"{"joke_id":"a","rating":5}"#, .object, #""a""#),
            ("{}", .object, nil),
            (#"{"joke_id":"b""#, .malformed, nil),
            (#"{"rating":1}"#, .object, nil),
            ("", .blank, nil),
            (#"{"joke_id":"c"}"#, .object, #""c""#),
            ("[1]", .notObject, nil),
            (#"{"x":{"joke_id":"n"}}"#, .object, nil),
        ]
        for (text, outcome, jokeID) in lines {
            PaddedLine.with(Array(text.utf8)) { start, _ in
                let got = scanner.scan(start)
                #expect(got == outcome, "\(text)")
                if got == .object {
                    #expect(scanner.fields[.jokeID].map { String(decoding: Array($0), as: UTF8.self) } == jokeID, "\(text)")
                }
            }
        }
    }

    @Test func otherWantedFieldsAreCapturedOnlyWhenAsked() {
        let text = #"{"joke_id":"a","rating":5,"timestamp":"2026-01-01T00:00:00Z","week_id":"2026-W01","device_id":"D","id":"E"}"#
        var plain = JSONLineScanner()
        var all = JSONLineScanner(wanted: [FieldSet(.timestamp), FieldSet(.weekID), FieldSet(.deviceID), FieldSet(.eventID)])
        PaddedLine.with(Array(text.utf8)) { start, _ in
            #expect(plain.scan(start) == .object)
            #expect(plain.fields[.timestamp] == nil)
            #expect(plain.fields[.eventID] == nil)
            #expect(all.scan(start) == .object)
            func text(_ f: Field) -> String? { all.fields[f].map { String(decoding: Array($0), as: UTF8.self) } }
            #expect(text(.jokeID) == #""a""#)
            #expect(text(.rating) == "5")
            #expect(text(.timestamp) == #""2026-01-01T00:00:00Z""#)
            #expect(text(.weekID) == #""2026-W01""#)
            #expect(text(.deviceID) == #""D""#)
            #expect(text(.eventID) == #""E""#)
        }
    }

    // MARK: RecordDecoder.rating

    struct RatingCase: Sendable, CustomTestStringConvertible {
        var raw: String
        var expected: Result<Double, InvalidRecord>
        var kind: RatingKind?
        var testDescription: String { raw }
    }

    static let ratings: [RatingCase] = [
        RatingCase(raw: "5", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "5.0", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "5e0", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "5E+0", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "0.5e1", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "50e-1", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "4.99999999999999999999", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "5.0000000000000001", expected: .success(5), kind: .hilarious),
        RatingCase(raw: "4", expected: .success(4), kind: .hilarious),
        RatingCase(raw: "4.0", expected: .success(4), kind: .hilarious),
        RatingCase(raw: "3.99999999999999999999", expected: .success(4), kind: .hilarious),
        RatingCase(raw: "3.9999999", expected: .success(3.9999999), kind: .neutral),
        RatingCase(raw: "3", expected: .success(3), kind: .neutral),
        RatingCase(raw: "2.5", expected: .success(2.5), kind: .neutral),
        RatingCase(raw: "2.0000001", expected: .success(2.0000001), kind: .neutral),
        RatingCase(raw: "2", expected: .success(2), kind: .horrible),
        RatingCase(raw: "1.5", expected: .success(1.5), kind: .horrible),
        RatingCase(raw: "1", expected: .success(1), kind: .horrible),
        RatingCase(raw: "1e0", expected: .success(1), kind: .horrible),
        RatingCase(raw: "0.99999999999999999999", expected: .success(1), kind: .horrible),
        RatingCase(raw: "0.0000000000000000000000001e25", expected: .success(1), kind: .horrible),
        RatingCase(raw: "0.9", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "0.9999999", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "5.0000001", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "5.000000000000001", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "0", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "-0", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "6", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "9", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "-1", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "-5", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "10", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "1e400", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "-1e400", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: "1e-400", expected: .failure(.ratingOutOfRange)),
        RatingCase(raw: #""5""#, expected: .failure(.ratingNotNumber)),
        RatingCase(raw: "true", expected: .failure(.ratingNotNumber)),
        RatingCase(raw: "null", expected: .failure(.ratingNotNumber)),
        RatingCase(raw: "[5]", expected: .failure(.ratingNotNumber)),
        RatingCase(raw: "{}", expected: .failure(.ratingNotNumber)),
    ]

    @Test("rating value and kind", arguments: ratings)
    func rating(_ c: RatingCase) {
        var decoder = RecordDecoder()
        let got = PaddedLine.withValue(Array(c.raw.utf8)) { decoder.rating($0) }
        #expect(got == c.expected, "\(c.raw)")
        if case .success(let value) = got, let kind = c.kind {
            #expect(RatingKind(value) == kind, "\(c.raw)")
        }
    }

    /// The same ratings read through a whole line, as the job reads them.
    @Test("rating read through a scanned line", arguments: ratings)
    func ratingThroughScanner(_ c: RatingCase) {
        var decoder = RecordDecoder()
        var scanner = JSONLineScanner()
        let line = Array(#"{"joke_id":"a","rating":"#.utf8) + Array(c.raw.utf8) + [UInt8(ascii: "}")]
        PaddedLine.with(line) { start, _ in
            #expect(scanner.scan(start) == .object)
            #expect(decoder.rating(scanner.fields[.rating]) == c.expected, "\(c.raw)")
        }
    }

    @Test func missingRating() {
        var decoder = RecordDecoder()
        #expect(decoder.rating(nil) == .failure(.missingRating))
    }

    // MARK: RecordDecoder.jokeID

    static func jokeID(_ raw: String) -> Result<[UInt8], InvalidRecord> {
        var decoder = RecordDecoder()
        return PaddedLine.withValue(Array(raw.utf8)) { decoder.jokeID($0).map { Array($0) } }
    }

    @Test func jokeIDUnescaping() {
        #expect(Self.jokeID(#""abc""#) == .success(Array("abc".utf8)))
        #expect(Self.jokeID(#""\u00e9""#) == .success([0xC3, 0xA9]))
        #expect(Self.jokeID(#""\u00E9""#) == Self.jokeID("\"é\""))
        #expect(Self.jokeID(#""\ud83d\ude00""#) == .success([0xF0, 0x9F, 0x98, 0x80]))
        #expect(Self.jokeID(#""\uD83D\uDE00""#) == .success([0xF0, 0x9F, 0x98, 0x80]))
        #expect(Self.jokeID(#""\udbff\udfff""#) == .success([0xF4, 0x8F, 0xBF, 0xBF]))
        #expect(Self.jokeID(#""a\"b\\c\/d""#) == .success(Array("a\"b\\c/d".utf8)))
        #expect(Self.jokeID(#""\b\f\n\r\t""#) == .success([0x08, 0x0C, 0x0A, 0x0D, 0x09]))
        #expect(Self.jokeID(#""\u0000""#) == .success([0x00]))
        #expect(Self.jokeID(#""\u007f\u0080\u07ff\u0800\uffff""#)
                == .success([0x7F, 0xC2, 0x80, 0xDF, 0xBF, 0xE0, 0xA0, 0x80, 0xEF, 0xBF, 0xBF]))
        #expect(Self.jokeID(#""\u2028""#) == .success([0xE2, 0x80, 0xA8]))
        // Escaped and raw spellings of the same text are the same joke; canonically equivalent
        // but differently spelled text is not.
        #expect(Self.jokeID(#""e\u0301""#) == .success([0x65, 0xCC, 0x81]))
        #expect(Self.jokeID(#""e\u0301""#) != Self.jokeID(#""\u00e9""#))
    }

    @Test func jokeIDFailures() {
        #expect(Self.jokeID(#""\ud800""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""\udc00""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""a\ud83d""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""\ud83dx""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""\ud83d\u0041""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""\ude00\ud83d""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""\ud83d\ud83d""#) == .failure(.jokeIDLoneSurrogate))
        #expect(Self.jokeID(#""""#) == .failure(.emptyJokeID))
        #expect(Self.jokeID("5") == .failure(.jokeIDNotString))
        #expect(Self.jokeID("-5") == .failure(.jokeIDNotString))
        #expect(Self.jokeID("null") == .failure(.jokeIDNotString))
        #expect(Self.jokeID("true") == .failure(.jokeIDNotString))
        #expect(Self.jokeID("[]") == .failure(.jokeIDNotString))
        #expect(Self.jokeID(#"{"a":"b"}"#) == .failure(.jokeIDNotString))
        var decoder = RecordDecoder()
        #expect(decoder.jokeID(nil).map { Array($0) } == .failure(.missingJokeID))
    }

    /// 1,499 bytes of id are the most Firestore queries; counted after unescaping, so a long
    /// spelling of a short id passes and a short spelling of a long one does not.
    @Test func jokeIDLength() {
        func quoted(_ s: String) -> String { "\"" + s + "\"" }
        let a1499 = String(repeating: "a", count: 1499)
        #expect(Self.jokeID(quoted(a1499)) == .success(Array(a1499.utf8)))
        #expect(Self.jokeID(quoted(a1499 + "a")) == .failure(.jokeIDTooLong(bytes: 1500)))
        #expect(Self.jokeID(quoted(String(repeating: "\\u0061", count: 1499))) == .success(Array(a1499.utf8)))
        #expect(Self.jokeID(quoted(String(repeating: "\\u0061", count: 1500))) == .failure(.jokeIDTooLong(bytes: 1500)))
        #expect(Self.jokeID(quoted(String(repeating: "\u{E9}", count: 750))) == .failure(.jokeIDTooLong(bytes: 1500)))
        #expect(Self.jokeID(quoted(String(repeating: "\\u00e9", count: 749) + "x")).map(\.count) == .success(1499))
        #expect(Self.jokeID(quoted(String(repeating: "\\ud83d\\ude00", count: 375))) == .failure(.jokeIDTooLong(bytes: 1500)))
        // A lone surrogate is named first, as the rules' order has it.
        #expect(Self.jokeID(quoted(String(repeating: "a", count: 1600) + "\\ud800")) == .failure(.jokeIDLoneSurrogate))
        #expect(InvalidRecord.jokeIDTooLong(bytes: 1500).message
                == "joke_id is 1500 bytes: Firestore cannot query a value of 1,500 bytes or more")
    }

    /// The decoder reuses its scratch space: an escaped id must not bleed into the next one.
    @Test func jokeIDScratchIsResetBetweenCalls() {
        var decoder = RecordDecoder()
        let first = PaddedLine.withValue(Array(#""long\u0041\u0042\u0043\u0044""#.utf8)) { decoder.jokeID($0).map { Array($0) } }
        let second = PaddedLine.withValue(Array(#""\u0041""#.utf8)) { decoder.jokeID($0).map { Array($0) } }
        #expect(first == .success(Array("longABCD".utf8)))
        #expect(second == .success(Array("A".utf8)))
    }
}
