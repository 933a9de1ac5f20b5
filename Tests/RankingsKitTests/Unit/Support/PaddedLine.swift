import Foundation
@testable import RankingsKit

/// Lays a line out the way `LineReader` hands it to the scanner: the line's bytes, the `\n`
/// sentinel at `end`, then `LineReader.padding` readable bytes. The padding is filled with
/// bytes that would look like JSON (`"}` …) if the scanner ever read past the sentinel.
enum PaddedLine {
    static func with<R>(_ line: [UInt8], _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        let total = line.count + 1 + LineReader.padding
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: total)
        defer { storage.deallocate() }
        storage.initialize(repeating: 0, count: total)
        line.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { storage.update(from: base, count: src.count) }
        }
        storage[line.count] = 0x0A
        for i in 0..<LineReader.padding {
            storage[line.count + 1 + i] = i % 2 == 0 ? UInt8(ascii: "\"") : UInt8(ascii: "}")
        }
        return try body(UnsafePointer(storage), UnsafePointer(storage + line.count))
    }

    /// A value's raw bytes (as the scanner would capture them), laid out with the same padding,
    /// as the buffer `RecordDecoder` takes.
    static func withValue<R>(_ raw: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try with(raw) { start, end in try body(UnsafeBufferPointer(start: start, count: end - start)) }
    }
}

/// What one `JSONLineScanner.scan` call found, copied out of the line buffer.
struct ScanResult: Equatable, CustomStringConvertible {
    var outcome: JSONLineScanner.Outcome
    /// Set only for `.malformed`.
    var failure: Malformation?
    var failOffset: Int?
    /// Raw JSON text of the captured fields (set only for `.object`).
    var jokeID: [UInt8]?
    var rating: [UInt8]?

    var description: String {
        var s = "\(outcome)"
        if let failure, let failOffset { s += " \(failure) at \(failOffset)" }
        if let jokeID { s += " joke_id=\(String(decoding: jokeID, as: UTF8.self))" }
        if let rating { s += " rating=\(String(decoding: rating, as: UTF8.self))" }
        return s
    }

    static func scan(_ line: [UInt8]) -> ScanResult {
        var scanner = JSONLineScanner()
        return PaddedLine.with(line) { start, _ in
            let outcome = scanner.scan(start)
            var result = ScanResult(outcome: outcome)
            switch outcome {
            case .malformed:
                result.failure = scanner.failure
                result.failOffset = scanner.failOffset
            case .object:
                result.jokeID = scanner.fields[.jokeID].map { Array($0) }
                result.rating = scanner.fields[.rating].map { Array($0) }
            case .blank, .notObject:
                break
            }
            return result
        }
    }

    static func scan(_ line: String) -> ScanResult { scan(Array(line.utf8)) }
}
