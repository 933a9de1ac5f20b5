/// Target 7: the SIMD string kernel against the scalar path. The same line goes through
/// `JSONLineScanner` twice, once with the kernel and once without; everything the scanner
/// reports must be identical: the outcome, the reason and byte of a malformation, the line's
/// end and every captured field's span and escape flag. The first difference aborts.
///
/// The first byte picks a shape: the fuzzer's bytes as the line, or as the contents of a
/// string value (so every byte sits where the kernel works), after a plain prefix of 0-63
/// bytes (so sequences fall across the kernel's block boundaries at every offset).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSIMDScan(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let shape = input.byte()
    let payload = input.rest
    let prefix = [UInt8](repeating: UInt8(ascii: "a"), count: Int(shape >> 2))
    let line: [UInt8]
    switch shape & 3 {
    case 0: line = payload
    case 1: line = Array(#"{"joke_id":""#.utf8) + prefix + payload + Array(#"","rating":5}"#.utf8)
    case 2: line = Array(#"{"device_id":""#.utf8) + prefix + payload
    default: line = Array(#"[""#.utf8) + prefix + payload + Array(#""]"#.utf8)
    }
    let all = FieldSet(rawValue: .max)
    var scalar = JSONLineScanner(wanted: all, simd: false)
    var simd = JSONLineScanner(wanted: all, simd: true)
    withPaddedLine(line, garbage: UInt8(size & 0xFF)) { start, _ in
        let a = scalar.scan(start), b = simd.scan(start)
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
        let ra = report(scalar, a), rb = report(simd, b)
        if ra != rb { mismatch("SIMD scan", input: line, product: rb, reference: ra) }
    }
    return 0
}
