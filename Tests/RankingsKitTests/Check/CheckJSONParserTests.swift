import RankingsKit
import Testing

/// Every RFC 8259 rule the checker's parser enforces, each with a text that passes and one that
/// fails with its exact reason and byte.
@Suite("Check: strict JSON parsing")
struct CheckJSONParserTests {
    struct Rule: Sendable, CustomTestStringConvertible {
        var name: String
        var valid: [UInt8]
        var invalid: [UInt8]
        var reason: String
        var offset: Int
        var testDescription: String { name }

        init(_ name: String, valid: String, invalid: String, _ reason: String, at offset: Int) {
            self.init(name, valid: Array(valid.utf8), invalid: Array(invalid.utf8), reason, at: offset)
        }

        init(_ name: String, valid: [UInt8], invalid: [UInt8], _ reason: String, at offset: Int) {
            self.name = name
            self.valid = valid
            self.invalid = invalid
            self.reason = reason
            self.offset = offset
        }
    }

    static let quote = UInt8(ascii: "\"")

    static let rules: [Rule] = [
        Rule("a document is one value", valid: " {} ", invalid: "", "expected a value, found the end of the document", at: 0),
        Rule("nothing after the value", valid: "{}\n", invalid: "{} {}", "expected the end of the document, found '{'", at: 3),
        Rule("no byte order mark", valid: [0x7B, 0x7D], invalid: [0xEF, 0xBB, 0xBF, 0x7B, 0x7D],
             "byte order mark (JSON text must not start with one)", at: 0),
        Rule("only JSON whitespace", valid: "\t\r\n [ ]", invalid: "\u{0C}[]", "expected a value, found byte 0x0C", at: 0),
        Rule("no trailing comma in an object", valid: "{\"a\":1}", invalid: "{\"a\":1,}", "expected a string key, found '}'", at: 7),
        Rule("no trailing comma in an array", valid: "[1]", invalid: "[1,]", "expected a value, found ']'", at: 3),
        Rule("commas between elements", valid: "[1, 2]", invalid: "[1 2]", "expected ',' or ']', found '2'", at: 3),
        Rule("commas between members", valid: "{\"a\":1,\"b\":2}", invalid: "{\"a\":1 \"b\":2}", "expected ',' or '}', found '\"'", at: 7),
        Rule("a colon after a key", valid: "{\"a\": 1}", invalid: "{\"a\" 1}", "expected ':', found '1'", at: 5),
        Rule("keys are double-quoted strings", valid: "{\"a\":1}", invalid: "{'a':1}", "expected a string key, found '''", at: 1),
        Rule("brackets match", valid: "[{}]", invalid: "[{]}", "expected a string key, found ']'", at: 2),
        Rule("containers are closed", valid: "[[]]", invalid: "[[]", "expected ',' or ']', found the end of the document", at: 3),
        Rule("no comments", valid: "[]", invalid: "[] // x", "expected the end of the document, found '/'", at: 3),
        Rule("literals are spelled out", valid: "[true, false, null]", invalid: "[tru]", "invalid literal (expected true)", at: 1),
        Rule("literals are lower case", valid: "null", invalid: "Null", "expected a value, found 'N'", at: 0),
        Rule("no NaN", valid: "1", invalid: "NaN", "expected a value, found 'N'", at: 0),
        Rule("no leading zeros", valid: "[0, -0, 10]", invalid: "[01]", "leading zero in a number", at: 1),
        Rule("no leading plus", valid: "-1", invalid: "+1", "expected a value, found '+'", at: 0),
        Rule("a digit after the minus", valid: "-1", invalid: "-x", "expected a digit, found 'x'", at: 1),
        Rule("digits after the point", valid: "1.5", invalid: "1.", "expected a digit, found the end of the document", at: 2),
        Rule("digits before the point", valid: "0.5", invalid: ".5", "expected a value, found '.'", at: 0),
        Rule("digits in the exponent", valid: "1e+3", invalid: "1e+", "expected a digit, found the end of the document", at: 3),
        Rule("strings end", valid: "\"a\"", invalid: "\"a", "unterminated string", at: 2),
        Rule("no raw control characters in strings", valid: "\"a\\tb\"", invalid: "\"a\tb\"",
             "control character 0x09 in a string (write it as an escape)", at: 2),
        Rule("only the defined escapes", valid: "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", invalid: "\"\\x\"",
             "invalid escape (a backslash followed by 'x')", at: 1),
        Rule("\\u takes four hex digits", valid: "\"\\u00e9\\u00E9\"", invalid: "\"\\u12G4\"",
             "invalid \\u escape (four hex digits expected)", at: 1),
        Rule("a high surrogate needs its low half", valid: "\"\\ud83d\\ude00\"", invalid: "\"x\\ud83d\"",
             "lone high surrogate in a \\u escape", at: 2),
        Rule("a high surrogate followed by something else", valid: "\"\\ud83d\\ude00\"", invalid: "\"\\ud83d\\u0041\"",
             "lone high surrogate in a \\u escape", at: 1),
        Rule("no lone low surrogate", valid: "\"\\ud83d\\ude00\"", invalid: "\"\\ude00\"", "lone low surrogate in a \\u escape", at: 1),
        Rule("UTF-8 in strings", valid: [quote, 0xC3, 0xA9, quote], invalid: [quote, 0xC3, 0x28, quote], "invalid UTF-8", at: 1),
        Rule("no overlong UTF-8", valid: [quote, 0x2F, quote], invalid: [quote, 0xC0, 0xAF, quote], "invalid UTF-8", at: 1),
        Rule("no encoded surrogates", valid: [quote, 0xED, 0x9F, 0xBF, quote], invalid: [quote, 0xED, 0xA0, 0x80, quote],
             "invalid UTF-8", at: 1),
        Rule("no truncated UTF-8", valid: [quote, 0xE2, 0x82, 0xAC, quote], invalid: [quote, 0xE2, 0x82],
             "invalid UTF-8", at: 1),
        Rule("nothing above U+10FFFF", valid: [quote, 0xF4, 0x8F, 0xBF, 0xBF, quote], invalid: [quote, 0xF4, 0x90, 0x80, 0x80, quote],
             "invalid UTF-8", at: 1),
        Rule("non-ASCII only inside strings", valid: [quote, 0xC3, 0xA9, quote], invalid: [0xC3, 0xA9],
             "expected a value, found byte 0xC3", at: 0),
        Rule("nesting up to 1000 levels",
             valid: String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000),
             invalid: String(repeating: "[", count: 1001) + String(repeating: "]", count: 1001),
             "nested deeper than 1000 levels", at: 1000),
    ]

    @Test("valid text parses", arguments: rules)
    func validParses(_ rule: Rule) throws {
        #expect(throws: Never.self) { try JSONParser.parse(rule.valid) }
    }

    @Test("invalid text fails with its reason and byte", arguments: rules)
    func invalidFails(_ rule: Rule) {
        #expect(throws: JSONSyntaxError(rule.reason, at: rule.offset)) { try JSONParser.parse(rule.invalid) }
    }

    @Test func hostileNestingFailsWithoutCrashing() {
        let deep = Array(repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(throws: JSONSyntaxError("nested deeper than 1000 levels", at: 1000)) { try JSONParser.parse(deep) }
    }

    @Test func stringsAreUnescapedToBytes() throws {
        let value = try JSONParser.parse(Array("\"\\u00e9e\\u0301\\ud83d\\ude00\\n\\/\"".utf8))
        #expect(value.kind == .string([0xC3, 0xA9, 0x65, 0xCC, 0x81, 0xF0, 0x9F, 0x98, 0x80, 0x0A, 0x2F]))
    }

    @Test func numbersKeepTheirText() throws {
        let value = try JSONParser.parse(Array("[3, 3.0, -0, 1E+2]".utf8))
        guard case .array(let elements) = value.kind else { Issue.record("not an array"); return }
        #expect(elements.map(\.kind) == [.number(Array("3".utf8)), .number(Array("3.0".utf8)),
                                         .number(Array("-0".utf8)), .number(Array("1E+2".utf8))])
    }

    @Test func objectsKeepDuplicateKeysInOrderWithOffsets() throws {
        let value = try JSONParser.parse(Array("{\"a\": 1, \"a\": true}".utf8))
        guard case .object(let members) = value.kind else { Issue.record("not an object"); return }
        #expect(members == [
            JSONMember(key: [0x61], keyOffset: 1, value: JSONValue(.number([0x31]), offset: 6, end: 7)),
            JSONMember(key: [0x61], keyOffset: 9, value: JSONValue(.bool(true), offset: 14, end: 18)),
        ])
        #expect(value.offset == 0 && value.end == 19)
    }
}
