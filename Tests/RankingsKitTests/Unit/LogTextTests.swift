import Testing
@testable import RankingsKit

@Suite("Log text escaping")
struct LogTextTests {
    @Test func controlCharactersBecomeVisible() {
        #expect(LogText.escaped("a\nb") == "a\\nb")
        #expect(LogText.escaped("a\r\tb") == "a\\r\\tb")
        #expect(LogText.escaped("\u{1B}[31m") == "\\x1B[31m")
        #expect(LogText.escaped("\u{0}\u{7F}") == "\\x00\\x7F")
        #expect(LogText.escaped("next\u{85}line") == "next\\u0085line")
    }

    @Test func everythingElseIsUnchanged() {
        for text in ["plain.ndjson", "é/😀 x.ndjson", "back\\slash", "\u{2028}", ""] {
            #expect(LogText.escaped(text) == text)
        }
    }

    @Test func escapingTwiceChangesNothing() {
        let once = LogText.escaped("a\nb\u{1B}c")
        #expect(LogText.escaped(once) == once)
    }
}
