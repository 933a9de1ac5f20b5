import CKernels
import Testing
@testable import RankingsKit

/// ISA-L's inflate and zlib's read every stream the same way: the same bytes from a good
/// stream, one member or many; the same refusal (cut short, or bad data) of a damaged one.
/// The suite's other gzip tests run with whichever the machine has, and once more in CI with
/// `RANKINGS_INFLATE=zlib`; this one puts the two side by side.
@Suite("Inflaters agree", .enabled(if: ISALAvailability.runs, ISALAvailability.reason))
struct InflaterAgreementTests {
    typealias Source = ParallelEquivalenceTests.MemorySource

    static func inflate(_ stream: [UInt8], step: Int, using kind: Inflaters.Kind) -> (output: [UInt8], error: InputError?) {
        var out: [UInt8] = []
        do {
            var source = try GzipSource(Source(bytes: stream, step: step), path: "f.gz", using: kind)
            var buffer = [UInt8](repeating: 0, count: 1000)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0.baseAddress!, count: $0.count) }
                if n == 0 { return (out, nil) }
                out += buffer[..<n]
            }
        } catch {
            return (out, error as? InputError)
        }
    }

    static func reason(_ error: InputError?) -> String {
        guard case .corruptGzip(_, let reason)? = error else { return error.map { "\($0)" } ?? "none" }
        return reason == "truncated gzip data" ? "truncated" : "corrupt"
    }

    /// Both inflaters on `stream` in reads of `step` bytes: equal verdicts, and on success equal bytes.
    static func expectAgreement(_ stream: [UInt8], step: Int, _ what: String) {
        let zlib = inflate(stream, step: step, using: .zlib)
        let isal = inflate(stream, step: step, using: .isal)
        #expect(reason(zlib.error) == reason(isal.error), "\(what): zlib \(zlib.error as Any), ISA-L \(isal.error as Any)")
        if zlib.error == nil && isal.error == nil { #expect(zlib.output == isal.output, "\(what)") }
    }

    @Test func isalIsAvailableHere() {
        // Runs where ISA-L loads or CI requires it (ISALAvailability); without it this binary
        // inflates with zlib only, and the comparisons below would compare zlib with itself.
        #expect(rk_isal_available() != 0, "libisal.so.2 did not load (\(Inflaters.whyNotISAL)): apt-get install libisal2 libisal-dev")
    }

    static let text: [UInt8] = Array((0..<3000).map { "{\"joke_id\":\"j\($0 % 37)\",\"rating\":\($0 % 5 + 1)}\n" }.joined().utf8)

    @Test func goodStreamsGiveTheSameBytes() throws {
        let one = try ScratchDirectory.gzip(Self.text)
        let many = try ScratchDirectory.gzip(Array(Self.text[..<777])) + ScratchDirectory.gzip([])
            + ScratchDirectory.gzip(Array(Self.text[777...]))
        for step in [1, 7, 4096, .max] {
            for stream in [one, many] {
                let isal = Self.inflate(stream, step: step, using: .isal)
                #expect(isal.error == nil)
                #expect(isal.output == Self.text)
                Self.expectAgreement(stream, step: step, "good, step \(step)")
            }
        }
    }

    @Test func damagedStreamsAreRefusedAlike() throws {
        let member = try ScratchDirectory.gzip(Array(Self.text[..<2000]))
        let stream = member + (try ScratchDirectory.gzip(Array(Self.text[2000..<4000])))
        // Cut at every offset near the members' edges and a sample in between.
        let cuts = Array(0..<40) + Array(stride(from: 40, to: stream.count, by: 97))
            + Array((member.count - 12)...(member.count + 12)) + Array((stream.count - 12)..<stream.count)
        for cut in cuts { Self.expectAgreement(Array(stream[..<cut]), step: 4096, "cut at \(cut)") }
        // One byte changed: header, flags, data, trailer (CRC and length).
        for at in Array(0..<12) + [20, 100, member.count - 8, member.count - 5, member.count - 4, member.count - 1] {
            for flip: UInt8 in [0x01, 0x20, 0x80, 0xFF] {
                var bad = stream
                bad[at] ^= flip
                Self.expectAgreement(bad, step: 4096, "byte \(at) ^ \(flip)")
            }
        }
        // Trailing garbage, and a zlib stream after a member.
        Self.expectAgreement(member + Array("not gzip\n".utf8), step: 4096, "garbage")
        Self.expectAgreement(member + [0], step: 1, "a zero byte")
        Self.expectAgreement(member + FuzzFindingTests.zlibStream, step: 4096, "zlib after gzip")
        Self.expectAgreement(member + [0x1F], step: 4096, "half a magic")
        Self.expectAgreement([], step: 4096, "empty")
    }
}
