import CKernels

/// Validates one NDJSON line against RFC 8259 and notes where the top-level fields we use sit.
///
/// This is the hot loop of the job. It walks the bytes once, never builds a string, and keeps
/// no per-line allocation: nesting is tracked in a fixed 1,001-entry stack owned by the scanner.
///
/// Contract with the caller (`LineReader` keeps it): a `\n` follows the line (its real end, or
/// a sentinel after the data read so far) and at least `LineReader.padding` bytes after that
/// `\n` are readable. A line is everything before its first `\n`, and that byte stops every
/// inner loop without a bounds check: it is not JSON whitespace here (only space, tab and CR
/// are inside a line), not a string byte (control character), not a digit and not a
/// structural character. So the scanner never needs the line's end, and when it accepts a
/// line it has found it: `lineEnd`.
struct JSONLineScanner: ~Copyable {
    /// Deepest nesting accepted; one more level is a malformed line (RFC 8259 lets parsers limit it).
    static let maxDepth = 1000

    /// Which fields to capture: always `Field.jokeID` and `Field.rating`, and what a typed
    /// document needs to give the fields asked for (`FieldSet.withTypedDocument`).
    var wanted: FieldSet

    /// What the last failed `scan` found, for the message; `failOffset` counts from the line start.
    private(set) var failure: Malformation = .unexpectedEnd
    private(set) var failOffset: Int = 0
    /// Where the last line that was not malformed ended: its first `\n`.
    private(set) var lineEnd: UnsafePointer<UInt8>?

    /// Spans of the wanted fields, valid after `scan` returns `.object`. The last occurrence of
    /// a repeated key wins, as the input rules require; a typed value counts only from the
    /// last top-level `fields`.
    private(set) var fields: CapturedFields

    /// One byte per open container: `{` or `[`.
    private let stack: UnsafeMutablePointer<UInt8>
    /// Unescaped key bytes, for the rare key written with escapes (`"joke\u005fid"`).
    private var keyScratch: ByteBuffer
    /// Set by `skipString` when the string it skipped held an escape, so a key without one
    /// is compared as it stands, without a second look for backslashes.
    private var sawEscape = false
    /// The scalar scan's state at depth 2: whether the object there is the top-level `fields`,
    /// and the typed value whose key it read last and where that value starts. Kept here, not
    /// in the scan's locals, since only depth 2 reads them.
    private var inFields = false
    private var typedPending = Field.none
    private var typedStart: UnsafePointer<UInt8>?
    /// A line the kernel declines is scanned twice: after a run of them it rests a while.
    private var kernelPatience = rk_patience()
    /// Whether the SIMD kernels run (`ScanKernels`): the whole-line kernel first, and for the
    /// lines it declines, the string kernel on long strings and non-ASCII text.
    private let simd: Bool
    /// Which whole-line kernel: 0 the process's (cpu_level.h: none at portable), or `RK_CPU_AVX2`
    /// for the kernel whatever the process's level (for tests).
    private let lineKernel: Int32
    /// The layouts of lines the line kernel has accepted, so that it walks each layout once
    /// (line_layout.h); nil turns them off (for tests).
    private let kernelLayouts: UnsafeMutablePointer<rk_line_layouts>?

    init(wanted: FieldSet = .ratingOnly, simd: Bool = ScanKernels.enabled) {
        self.init(wanted: wanted, simd: simd, lineKernel: 0)
    }

    init(wanted: FieldSet, simd: Bool, lineKernel: Int32, layouts: Bool = true) {
        self.wanted = wanted.union(.ratingOnly).withTypedDocument
        self.simd = simd
        self.lineKernel = lineKernel
        if layouts {
            kernelLayouts = .allocate(capacity: 1)
            kernelLayouts!.initialize(to: rk_line_layouts())
        } else {
            kernelLayouts = nil
        }
        stack = .allocate(capacity: Self.maxDepth + 2)
        // The line kernel writes the spans it finds straight into the captured fields.
        let spans = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: CapturedFields.spanCount)
        spans.initialize(repeating: nil, count: CapturedFields.spanCount)
        fields = CapturedFields(spans: spans)
        keyScratch = ByteBuffer(capacity: 64)
    }

    /// Lines the line kernel answered from a layout without a walk (for tests).
    var layoutHits: UInt64 { kernelLayouts?.pointee.hits ?? 0 }

    deinit {
        stack.deallocate()
        fields.spans.deallocate()
        kernelLayouts?.deallocate()
    }

    enum Outcome: Equatable, Sendable {
        /// Only spaces, tabs and CRs: skipped, counts as nothing.
        case blank
        /// A valid JSON text whose value is an object; `fields` holds the captured spans.
        case object
        /// A valid JSON text that is not an object (an invalid record).
        case notObject
        /// Not a JSON text; `failure` and `failOffset` say why.
        case malformed
    }

    /// Scans the line that starts at `start` and runs to the first `\n`.
    mutating func scan(_ start: UnsafePointer<UInt8>) -> Outcome {
        fields.reset()
        if simd && rk_patience_resting(&kernelPatience) == 0 {
            var found: UInt32 = 0
            guard let end = ScanKernels.scanLine(start, wanted: wanted, spans: fields.spans, found: &found,
                                                 level: lineKernel, layouts: kernelLayouts) else {
                // Declined: `scanScalar` judges the line.
                rk_patience_miss(&kernelPatience)
                return scanScalar(start)
            }
            // The common line, accepted whole by the kernel.
            rk_patience_hit(&kernelPatience)
            fields.setFromKernel(found: found)
            lineEnd = end
            return .object
        }
        return scanScalar(start)
    }

    /// The scalar scanner: every rule and every reason.
    private mutating func scanScalar(_ start: UnsafePointer<UInt8>) -> Outcome {
        var p = skipSpace(start)
        if p.pointee == UInt8(ascii: "\n") {
            lineEnd = p
            return .blank
        }
        let isObject = p.pointee == UInt8(ascii: "{")
        var depth = 0
        // The field whose value starts next at depth 1, and where that value began.
        var pending = Field.none
        var pendingStart = p
        typedPending = .none

        valueLoop: while true {
            // p is at the first byte of a value.
            let c = p.pointee
            switch c {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth &+= 1
                if depth > Self.maxDepth { return fail(.tooDeep, p, start) }
                stack[depth] = c
                if depth == 2 { inFields = c == UInt8(ascii: "{") && pending == .fields }
                p = skipSpace(p + 1)
                if c == UInt8(ascii: "{") {
                    if p.pointee != UInt8(ascii: "}") {
                        guard let (next, field) = key(at: p, depth: depth, start: start) else {
                            return .malformed
                        }
                        p = next
                        if depth == 1 { (pending, pendingStart) = (field, p) } else if depth == 2 { (typedPending, typedStart) = (field, p) }
                        continue valueLoop
                    }
                } else if p.pointee != UInt8(ascii: "]") {
                    continue valueLoop
                }
                // An empty container closes at once.
                p += 1
                depth &-= 1
            case UInt8(ascii: "\""):
                sawEscape = false
                guard let next = skipString(p, start: start) else { return .malformed }
                p = next
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let next = skipNumber(p, start: start) else { return .malformed }
                p = next
            case UInt8(ascii: "t"):
                guard matches(p, "true") else { return fail(.badLiteral, p, start) }
                p += 4
            case UInt8(ascii: "f"):
                guard matches(p, "false") else { return fail(.badLiteral, p, start) }
                p += 5
            case UInt8(ascii: "n"):
                guard matches(p, "null") else { return fail(.badLiteral, p, start) }
                p += 4
            case UInt8(ascii: "\n"):
                return fail(.unexpectedEnd, p, start)
            default:
                return fail(c >= 0x80 ? .nonASCIIOutsideString : .unexpectedCharacter, p, start)
            }

            // After a value: close containers and move to the next member or element.
            while true {
                if depth == 1 && pending != .none {
                    // For a string value, `sawEscape` is still that string's.
                    fields.set(pending, from: pendingStart, to: p, escaped: sawEscape)
                    pending = .none
                } else if depth == 2 && typedPending != .none {
                    fields.set(typedPending, from: typedStart!, to: p, escaped: sawEscape)
                    typedPending = .none
                }
                p = skipSpace(p)
                if depth == 0 {
                    if p.pointee != UInt8(ascii: "\n") { return fail(.trailingCharacters, p, start) }
                    lineEnd = p
                    return isObject ? .object : .notObject
                }
                let container = stack[depth]
                let c = p.pointee
                if c == UInt8(ascii: ",") {
                    p = skipSpace(p + 1)
                    if container == UInt8(ascii: "{") {
                        guard let (next, field) = key(at: p, depth: depth, start: start) else {
                            return .malformed
                        }
                        p = next
                        if depth == 1 { (pending, pendingStart) = (field, p) } else if depth == 2 { (typedPending, typedStart) = (field, p) }
                    }
                    continue valueLoop
                }
                if (c == UInt8(ascii: "}") && container == UInt8(ascii: "{"))
                    || (c == UInt8(ascii: "]") && container == UInt8(ascii: "[")) {
                    p += 1
                    depth &-= 1
                    continue
                }
                if c == UInt8(ascii: "\n") { return fail(.unexpectedEnd, p, start) }
                return fail(container == UInt8(ascii: "{") ? .expectedCommaOrBrace : .expectedCommaOrBracket, p, start)
            }
        }
    }

    /// Parses `"key" :` and the space after it: where the value starts, and the wanted field the
    /// key names at the top level, or as a typed value in the top-level `fields` object
    /// (`inFields`, at depth 2); `.none` elsewhere.
    @inline(__always)
    private mutating func key(at p: UnsafePointer<UInt8>, depth: Int, start: UnsafePointer<UInt8>) -> (UnsafePointer<UInt8>, Field)? {
        guard p.pointee == UInt8(ascii: "\"") else {
            _ = fail(p.pointee == UInt8(ascii: "\n") ? .unexpectedEnd : .expectedKey, p, start)
            return nil
        }
        sawEscape = false
        guard let afterKey = skipString(p, start: start) else { return nil }
        var field = Field.none
        if depth == 1 {
            field = identify(key: p + 1, end: afterKey - 1, escaped: sawEscape, typed: false)
            // The last `fields` is the document's: typed values found before it are not.
            if field == .fields { fields.dropTypedValues() }
        } else if depth == 2 && inFields {
            field = identify(key: p + 1, end: afterKey - 1, escaped: sawEscape, typed: true)
        }
        var q = skipSpace(afterKey)
        guard q.pointee == UInt8(ascii: ":") else {
            _ = fail(q.pointee == UInt8(ascii: "\n") ? .unexpectedEnd : .expectedColon, q, start)
            return nil
        }
        q = skipSpace(q + 1)
        return (q, field)
    }

    /// Names the field a top-level key (or with `typed`, a key of `fields`) refers to,
    /// comparing after unescaping.
    @inline(__always)
    private mutating func identify(key: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, escaped: Bool, typed: Bool) -> Field {
        let raw = UnsafeBufferPointer(start: key, count: end - key)
        if !escaped { return typed ? wanted.typedField(named: raw) : wanted.field(named: raw) }
        keyScratch.removeAll()
        // The key already passed validation, so unescaping cannot fail; a lone surrogate simply
        // cannot spell one of our ASCII field names.
        guard JSONString.unescape(raw, into: &keyScratch, allowLoneSurrogates: true) else { return .none }
        return keyScratch.withBuffer { typed ? wanted.typedField(named: $0) : wanted.field(named: $0) }
    }

    @inline(__always)
    private func skipSpace(_ p: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
        var p = p
        while true {
            let c = p.pointee
            if c == 0x20 || c == 0x09 || c == 0x0D { p += 1 } else { return p }
        }
    }

    @inline(__always)
    private func matches(_ p: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
        // Reads at most 5 bytes; the sentinel and padding make that safe, and the first
        // mismatch (at the latest the sentinel) ends the comparison.
        let l = literal.utf8Start
        for i in 0..<literal.utf8CodeUnitCount where p[i] != l[i] { return false }
        return true
    }

    /// Skips a string starting at its opening quote; returns the byte after the closing quote.
    /// Checks escapes, control characters and UTF-8 as it goes.
    @inline(__always)
    private mutating func skipString(_ open: UnsafePointer<UInt8>, start: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        var p = open + 1
        while true {
            // Most bytes of an export are plain ASCII inside strings: look at 8 at a time and
            // jump straight to the first byte that needs a closer look.
            let raw = UnsafeRawPointer(p)
            let low = Self.specialBytes(raw.loadUnaligned(as: UInt64.self))
            if low != 0 {
                p += low.trailingZeroBitCount >> 3
            } else {
                let high = Self.specialBytes(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                if high == 0 {
                    p += 16
                    // A string this long is likely longer still: the kernel takes 32 bytes a step.
                    // Short strings (most keys and ids) never pay for the call.
                    if simd { p = ScanKernels.skipPlain(p) }
                    continue
                }
                p += 8 + high.trailingZeroBitCount >> 3
            }
            let c = p.pointee
            if c == UInt8(ascii: "\"") { return p + 1 }
            if c == UInt8(ascii: "\\") {
                sawEscape = true
                let e = p[1]
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    p += 2
                case UInt8(ascii: "u"):
                    guard isHex(p[2]), isHex(p[3]), isHex(p[4]), isHex(p[5]) else {
                        _ = fail(.badUnicodeEscape, p, start); return nil
                    }
                    p += 6
                default:
                    _ = fail(e == UInt8(ascii: "\n") ? .unterminatedString : .badEscape, p, start); return nil
                }
                continue
            }
            if c < 0x20 {
                _ = fail(c == UInt8(ascii: "\n") ? .unterminatedString : .controlCharacterInString, p, start)
                return nil
            }
            // c >= 0x80: text that is not ASCII; the kernel validates it a block at a time, and
            // the scalar step takes over where it stops short.
            if simd {
                let q = ScanKernels.skipPlain(p)
                if q != p { p = q; continue }
            }
            let n = UTF8Validation.sequenceLength(p)
            if n == 0 { _ = fail(.invalidUTF8, p, start); return nil }
            p += n
        }
    }

    /// Marks (bit 7 of each byte) the bytes of `w` that are a quote, a backslash, a control
    /// character or non-ASCII; 0 when there are none.
    ///
    /// Plain 64-bit arithmetic (SWAR). A borrow can mark a byte falsely only *above* a true
    /// mark, so the lowest mark, the only one the caller uses, is always exact.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22)
        let backslash = w ^ (ones &* 0x5C)
        let zeroInQuote = (quote &- ones) & ~quote
        let zeroInBackslash = (backslash &- ones) & ~backslash
        let below0x20 = w &- (ones &* 0x20)
        // `& ~w` keeps bytes >= 0x80 out of the three tests above; `| w` marks them.
        return ((zeroInQuote | zeroInBackslash | below0x20) & ~w | w) & high
    }

    /// Skips a number per RFC 8259's grammar (no leading zeros, digits on both sides of `.`).
    @inline(__always)
    private mutating func skipNumber(_ first: UnsafePointer<UInt8>, start: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        var p = first
        if p.pointee == UInt8(ascii: "-") { p += 1 }
        if p.pointee == UInt8(ascii: "0") {
            p += 1
            if isDigit(p.pointee) { _ = fail(.leadingZero, first, start); return nil }
        } else if isDigit(p.pointee) {
            p += 1
            while isDigit(p.pointee) { p += 1 }
        } else {
            _ = fail(.badNumber, first, start); return nil
        }
        if p.pointee == UInt8(ascii: ".") {
            p += 1
            guard isDigit(p.pointee) else { _ = fail(.badNumber, first, start); return nil }
            while isDigit(p.pointee) { p += 1 }
        }
        if p.pointee | 0x20 == UInt8(ascii: "e") {
            p += 1
            if p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-") { p += 1 }
            guard isDigit(p.pointee) else { _ = fail(.badNumber, first, start); return nil }
            while isDigit(p.pointee) { p += 1 }
        }
        return p
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }
    @inline(__always) private func isHex(_ c: UInt8) -> Bool {
        c &- UInt8(ascii: "0") < 10 || (c | 0x20) &- UInt8(ascii: "a") < 6
    }

    private mutating func fail(_ why: Malformation, _ p: UnsafePointer<UInt8>, _ start: UnsafePointer<UInt8>) -> Outcome {
        failure = why
        failOffset = p - start
        return .malformed
    }
}

/// Why a line is not a JSON text; each case is one RFC 8259 rule.
public enum Malformation: Sendable, Equatable {
    case unexpectedEnd, unexpectedCharacter, nonASCIIOutsideString, trailingCharacters
    case expectedKey, expectedColon, expectedCommaOrBrace, expectedCommaOrBracket
    case unterminatedString, controlCharacterInString, badEscape, badUnicodeEscape, invalidUTF8
    case leadingZero, badNumber, badLiteral, tooDeep

    var message: String {
        switch self {
        case .unexpectedEnd: "unexpected end of line"
        case .unexpectedCharacter: "unexpected character"
        case .nonASCIIOutsideString: "non-ASCII byte outside a string (a BOM is allowed only at the start of a file)"
        case .trailingCharacters: "more after the JSON value"
        case .expectedKey: "expected a string key"
        case .expectedColon: "expected ':' after a key"
        case .expectedCommaOrBrace: "expected ',' or '}'"
        case .expectedCommaOrBracket: "expected ',' or ']'"
        case .unterminatedString: "unterminated string"
        case .controlCharacterInString: "raw control character in a string"
        case .badEscape: "invalid escape in a string"
        case .badUnicodeEscape: "invalid \\u escape in a string"
        case .invalidUTF8: "invalid UTF-8"
        case .leadingZero: "number with a leading zero"
        case .badNumber: "invalid number"
        case .badLiteral: "invalid literal (only true, false and null)"
        case .tooDeep: "nested deeper than \(JSONLineScanner.maxDepth) levels"
        }
    }
}
