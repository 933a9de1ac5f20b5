import CKernels

/// Target 7: the SIMD kernels against the scalar path. The same line goes through
/// `JSONLineScanner` five times: with no kernel (scalar), with the kernels this CPU runs (the
/// whole-line kernel first, then the string kernel for the lines it declines), with the line
/// kernel whatever the process's level (every level above portable runs it), through a scanner
/// that has just read the line it was made from, and through one that has just read the line
/// itself with every `0` made a `1` (so the line kernel's layout of that line answers wherever
/// the fuzzer's line is laid out alike, and must refuse it where a `0` now starts a number:
/// `05` after `15`). Everything the scanner reports must be identical: the outcome, the reason
/// and byte of a malformation, the line's end and every captured field's span and escape flag.
/// The first difference aborts.
///
/// The first byte picks a shape (its low 3 bits) and a length or an offset (the rest, 0-31):
/// the fuzzer's bytes as the line; as the contents of a string value after a plain prefix (so
/// sequences fall across the kernels' block boundaries at every offset); or spliced into a
/// line as an export writes it, inserted or written over its bytes at the offset times 8, so
/// that most inputs stay near the lines the line kernel accepts.

let exportLine: [UInt8] = Array(#"{"id":"DA306888-8708-4202-B720-67AE0B7A78CE_LBcw2Dam9tSSPaIh0tG4_2025-W37","joke_id":"LBcw2Dam9tSSPaIh0tG4","rating":1,"device_id":"DA306888-8708-4202-B720-67AE0B7A78CE","week_id":"2025-W37","timestamp":{"_seconds":1757881625,"_nanoseconds":643273000}}"#.utf8)
let typedLine: [UInt8] = Array(#"{"name": "projects/p/databases/(default)/documents/rating_events/e1", "fields": {"joke_id": {"stringValue": "j"}, "rating": {"integerValue": "5"}, "tags": [1, -2.5e3, true, null]}}"#.utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSIMDScan(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let shape = input.byte()
    let payload = input.rest
    let n = Int(shape >> 3)
    let prefix = [UInt8](repeating: UInt8(ascii: "a"), count: n * 2)
    var line: [UInt8]
    // The line the warmed scanner sees first (twice), so that the line kernel has made its
    // layout and answers the fuzzer's line from it where the line is laid out alike.
    var before = exportLine
    switch shape & 7 {
    case 0: line = payload
    case 1:
        line = Array(#"{"joke_id":""#.utf8) + prefix + payload + Array(#"","rating":5}"#.utf8)
        before = Array(#"{"joke_id":""#.utf8) + prefix + Array(#"","rating":5}"#.utf8)
    case 2: line = Array(#"{"device_id":""#.utf8) + prefix + payload
    case 3: line = Array(#"[""#.utf8) + prefix + payload + Array(#""]"#.utf8)
    case 4, 5:
        let base = shape & 7 == 4 ? exportLine : typedLine
        let at = min(n * 8, base.count)
        line = Array(base[..<at]) + payload + Array(base[at...])
        before = base
    default:
        let base = shape & 7 == 6 ? exportLine : typedLine
        let at = min(n * 8, base.count)
        line = Array(base[..<at]) + payload + Array(base[min(at + payload.count, base.count)...])
        before = base
    }
    let all = FieldSet(rawValue: .max)
    var scalar = JSONLineScanner(wanted: all, simd: false, lineKernel: 0)
    var simd = JSONLineScanner(wanted: all, simd: true, lineKernel: 0)
    var avx2 = JSONLineScanner(wanted: all, simd: true, lineKernel: RK_CPU_AVX2)
    var warmed = JSONLineScanner(wanted: all, simd: true, lineKernel: RK_CPU_AVX2)
    for _ in 0..<2 { withPaddedLine(before, garbage: 0) { start, _ in _ = warmed.scan(start) } }
    var sibling = JSONLineScanner(wanted: all, simd: true, lineKernel: RK_CPU_AVX2)
    let ones = line.map { $0 == UInt8(ascii: "0") ? UInt8(ascii: "1") : $0 }
    for _ in 0..<2 { withPaddedLine(ones, garbage: 0) { start, _ in _ = sibling.scan(start) } }
    withPaddedLine(line, garbage: UInt8(size & 0xFF)) { start, _ in
        let a = scalar.scan(start), b = simd.scan(start), c = avx2.scan(start), d = warmed.scan(start)
        let e = sibling.scan(start)
        func report(_ s: borrowing JSONLineScanner, _ outcome: JSONLineScanner.Outcome) -> String {
            var text = "\(outcome)"
            if outcome == .malformed { text += " \(s.failure) at \(s.failOffset)" } else {
                text += " end \(s.lineEnd.map { $0 - start } ?? -1)"
                for field in Field.allCases where field != .none {
                    if let span = s.fields[field] {
                        text += " \(field)=\(span.baseAddress! - start)+\(span.count)\(s.fields.isEscaped(field) ? "e" : "")"
                    }
                }
            }
            return text
        }
        let ra = report(scalar, a), rb = report(simd, b), rc = report(avx2, c)
        if ra != rb { mismatch("SIMD scan", input: line, product: rb, reference: ra) }
        if ra != rc { mismatch("AVX2 line kernel", input: line, product: rc, reference: ra) }
        let rd = report(warmed, d)
        if ra != rd { mismatch("line kernel after the layout of another line", input: line, product: rd, reference: ra) }
        let re = report(sibling, e)
        if ra != re { mismatch("line kernel after the line with its 0s made 1s", input: line, product: re, reference: ra) }
    }
    return 0
}
