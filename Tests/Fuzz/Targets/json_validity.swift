/// Target 2: `check`'s document parser and `aggregate`'s line scanner must agree on whether a
/// text is JSON, within what they share: one line (no `\n`, which only the document parser
/// may see), no BOM (a file-level matter for both), nesting up to 1000. `check` also rejects a
/// lone surrogate escape, which a line accepts outside `joke_id`: such an escape is replaced
/// by an ordinary one of the same length before both parsers see the text. The reference
/// parser settles any disagreement.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONValidity(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var text = input.map { $0 == 0x0A ? 0x20 : $0 }
    if text.starts(with: [0xEF, 0xBB, 0xBF]) { return 0 }
    text = withoutLoneSurrogates(text)

    var checkAccepts = true
    do { _ = try JSONParser.parse(text) } catch { checkAccepts = false }

    var scanner = JSONLineScanner()
    let outcome = withPaddedLine(text, garbage: UInt8(size & 0xFF)) { start, _ in scanner.scan(start) }
    let scanAccepts = outcome == .object || outcome == .notObject
    // A blank line is not a JSON text; the document parser must refuse it too.
    let reference = RefJSON.parse(text) != nil

    if checkAccepts != reference || scanAccepts != reference {
        mismatch("JSON validity", input: input, product: "check \(checkAccepts), scanner \(outcome)",
                 reference: reference)
    }
    return 0
}

/// The text with each `\u` escape of a lone surrogate rewritten as `\u0041`, scanning the way
/// a JSON string reads (outside strings nothing changes).
private func withoutLoneSurrogates(_ text: [UInt8]) -> [UInt8] {
    var t = text
    var i = 0
    var inString = false
    func hex(_ at: Int) -> UInt32? {
        guard at + 4 <= t.count else { return nil }
        var v: UInt32 = 0
        for k in at..<(at + 4) {
            guard let h = RefJSON.Parser.hexValue(t[k]) else { return nil }
            v = v * 16 + h
        }
        return v
    }
    while i < t.count {
        let c = t[i]
        if !inString {
            if c == UInt8(ascii: "\"") { inString = true }
            i += 1
            continue
        }
        if c == UInt8(ascii: "\"") { inString = false; i += 1; continue }
        guard c == UInt8(ascii: "\\"), i + 1 < t.count else { i += 1; continue }
        guard t[i + 1] == UInt8(ascii: "u"), let u = hex(i + 2) else { i += 2; continue }
        if (0xD800...0xDBFF).contains(u), i + 7 < t.count, t[i + 6] == UInt8(ascii: "\\"), t[i + 7] == UInt8(ascii: "u"),
           let low = hex(i + 8), (0xDC00...0xDFFF).contains(low) {
            i += 12
            continue
        }
        if (0xD800...0xDFFF).contains(u) {
            t.replaceSubrange((i + 2)..<(i + 6), with: Array("0041".utf8))
        }
        i += 6
    }
    return t
}
