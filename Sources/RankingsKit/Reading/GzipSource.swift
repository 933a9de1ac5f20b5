import CKernels
import CZlib
import Glibc

/// Inflates a gzip stream (one or more members, as `cat a.gz b.gz` makes) with ISA-L when the
/// system has it (`Inflaters.active`), with the system zlib otherwise.
///
/// A stream that stops before a member's end, or holds bytes that are not gzip, is a
/// `corruptGzip` error naming the file: the data is bad, so retrying cannot help. Both
/// inflaters accept and refuse the same streams (the gzip fuzz target compares them).
///
/// `deferChecksums`: with ISA-L, each member's CRC-32 is handed on (`takeDeferredChecksums`)
/// for the thread that reads the inflated bytes to check, instead of computed here. A gzip run
/// waits on the inflating thread alone; the scanning thread has time to spare.
struct GzipSource<Compressed: ByteSource>: ByteSource {
    private var compressed: Compressed
    private let path: String
    /// Owns the inflater's state and the input buffer; copies of the source share it, and it
    /// frees them when the last copy goes.
    private let inflater: Inflater
    private var inputEOF = false
    private var finished = false
    /// Set after a member ends: the next input byte must start another member or be the end.
    private var betweenMembers = false
    /// Inflated bytes handed out so far, over all members.
    private var inflated: Int64 = 0
    private var deferred: [DeferredChecksum] = []

    var bytesConsumed: Int64 { compressed.bytesConsumed }
    let defersChecksums: Bool

    /// A source that checks every member's CRC-32 itself.
    init(_ compressed: Compressed, path: String, using kind: Inflaters.Kind = Inflaters.active) throws(InputError) {
        try self.init(compressed, path: path, using: kind, deferChecksums: false)
    }

    /// With `deferChecksums`, only for a reader that takes and checks them (`PrefetchSource`,
    /// through `WholeInput`): a reader that does not would accept a member whose CRC-32 is
    /// wrong. Internal for that reason.
    init(_ compressed: Compressed, path: String, using kind: Inflaters.Kind = Inflaters.active,
         deferChecksums: Bool) throws(InputError) {
        self.compressed = compressed
        self.path = path
        defersChecksums = deferChecksums && kind == .isal
        guard let inflater = Inflater(kind, checkCRC: !defersChecksums) else {
            throw .readFailed(path: path, reason: "\(kind.name) could not start")
        }
        self.inflater = inflater
    }

    mutating func takeDeferredChecksums() -> [DeferredChecksum] {
        defer { deferred = [] }
        return deferred
    }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        if finished { return 0 }
        let want = min(count, Int(UInt32.max))
        var produced = 0
        while produced < want {
            if inflater.availableInput == 0 && !inputEOF {
                let n = try compressed.read(into: inflater.input, count: Inflater.inputSize)
                if n == 0 { inputEOF = true } else { inflater.supply(n) }
            }
            if betweenMembers {
                if inflater.availableInput == 0 && inputEOF {
                    finished = true
                    break
                }
                if inflater.availableInput == 0 { continue }
                inflater.nextMember()
                betweenMembers = false
            }
            let step = inflater.inflate(into: buffer + produced, count: want - produced)
            produced += step.written
            switch step.status {
            case .progress:
                break
            case .memberEnd:
                betweenMembers = true
                if defersChecksums {
                    deferred.append(DeferredChecksum(end: inflated + Int64(produced), expected: inflater.memberCRC,
                                                     failure: .corruptGzip(path: path, reason: "corrupt gzip data: incorrect data check")))
                }
            case .stalled:
                // No progress possible: only an error when no more input will come.
                if inputEOF && step.written == 0 {
                    throw .corruptGzip(path: path, reason: "truncated gzip data")
                }
                // Never seen: input left that the inflater will not take would loop forever.
                if step.written == 0 && inflater.availableInput > 0 {
                    throw .corruptGzip(path: path, reason: "corrupt gzip data: \(inflater.kind.name) stopped")
                }
            case .corrupt(let message):
                throw .corruptGzip(path: path, reason: "corrupt gzip data: \(message)")
            }
            // Hand back what we have rather than wait for a full buffer at a member's end.
            if betweenMembers && produced > 0 { break }
        }
        inflated += Int64(produced)
        return produced
    }
}

/// A gzip member's CRC-32, for the reader of the inflated bytes to check: the CRC-32 of the
/// bytes before `end` since the previous check (or the start) must be `expected`.
struct DeferredChecksum: Sendable {
    /// Where the member ends, in bytes of the inflated stream from its start.
    let end: Int64
    let expected: UInt32
    /// What the read fails with when the bytes do not match.
    let failure: InputError
}

/// Which inflater a binary uses, for `--version` and the tests.
public enum Inflaters {
    enum Kind: Sendable, Equatable {
        case isal, zlib
        var name: String { self == .isal ? "ISA-L" : "zlib" }
    }

    /// ISA-L when libisal.so.2 loads, unless `RANKINGS_INFLATE=zlib` asks for zlib (read once:
    /// the test suite runs once more that way, so both inflaters pass every gzip test).
    static let active: Kind = {
        if let forced = getenv("RANKINGS_INFLATE"), String(cString: forced) == "zlib" { return .zlib }
        return rk_isal_available() != 0 ? .isal : .zlib
    }()

    /// Why zlib inflates: a binary compiled without ISA-L's header cannot use libisal2 even where
    /// it is installed, so installing the library would not help; only then does it say so.
    static var whyNotISAL: String {
        if rk_isal_available() != 0 { return "RANKINGS_INFLATE=zlib" }
        return rk_isal_built_in() != 0 ? "libisal.so.2 not found" : "built without ISA-L"
    }

    /// One line for `--version`: what inflates gzip in this process, and the library's version.
    public static var description: String {
        switch active {
        case .isal: "gzip: ISA-L (libisal.so.2, loaded at run time)"
        case .zlib: "gzip: zlib \(String(cString: zlibVersion())) (\(whyNotISAL))"
        }
    }
}

/// One inflate state, zlib's or ISA-L's, and its input buffer: freed exactly once, in `deinit`.
final class Inflater {
    /// Compressed input is a sixth of the output or less: 64 KiB a read is plenty, and smaller
    /// than zlib's old 256 KiB it makes room for ISA-L's state (85 KiB) in the same peak memory.
    static let inputSize = 64 << 10
    let input: UnsafeMutablePointer<UInt8>
    private let zlib: UnsafeMutablePointer<z_stream>?
    private let isal: OpaquePointer?
    let kind: Inflaters.Kind

    enum Status { case progress, memberEnd, stalled, corrupt(String) }

    init?(_ kind: Inflaters.Kind, checkCRC: Bool = true) {
        self.kind = kind
        switch kind {
        case .isal:
            guard let state = rk_isal_open(checkCRC ? 1 : 0) else { return nil }
            isal = state
            zlib = nil
        case .zlib:
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            // 15 + 16: the largest window, and the gzip wrapper only (automatic detection, + 32,
            // would read a zlib stream after a gzip member as one more member).
            guard inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                stream.deallocate()
                return nil
            }
            zlib = stream
            isal = nil
        }
        input = .allocate(capacity: Self.inputSize)
    }

    deinit {
        if let zlib {
            inflateEnd(zlib)
            zlib.deallocate()
        }
        if let isal { rk_isal_close(isal) }
        input.deallocate()
    }

    var availableInput: Int {
        if let zlib { return Int(zlib.pointee.avail_in) }
        return Int(rk_isal_avail_in(isal))
    }

    /// The first `count` bytes of `input` are the next compressed data.
    func supply(_ count: Int) {
        if let zlib {
            zlib.pointee.next_in = input
            zlib.pointee.avail_in = uInt(count)
        } else {
            rk_isal_set_input(isal, input, UInt32(count))
        }
    }

    /// The trailer's CRC-32 of the member that just ended (ISA-L without `checkCRC` only).
    var memberCRC: UInt32 { rk_isal_member_crc(isal) }

    func nextMember() {
        if let zlib { inflateReset(zlib) } else { rk_isal_next_member(isal) }
    }

    func inflate(into output: UnsafeMutableRawPointer, count: Int) -> (written: Int, status: Status) {
        if let zlib {
            zlib.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
            zlib.pointee.avail_out = uInt(count)
            let status = CZlib.inflate(zlib, Z_NO_FLUSH)
            let written = count - Int(zlib.pointee.avail_out)
            switch status {
            case Z_STREAM_END: return (written, .memberEnd)
            case Z_OK: return (written, .progress)
            case Z_BUF_ERROR: return (written, .stalled)
            default:
                let message = zlib.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                return (written, .corrupt(message))
            }
        }
        let before = rk_isal_avail_in(isal)
        var written: UInt32 = 0
        let status = rk_isal_inflate(isal, output.assumingMemoryBound(to: UInt8.self), UInt32(count), &written)
        if status < 0 { return (Int(written), .corrupt(String(cString: rk_isal_message(status)))) }
        if status == Int32(RK_ISAL_MEMBER_END) { return (Int(written), .memberEnd) }
        // As zlib's Z_BUF_ERROR: nothing consumed and nothing written.
        if written == 0 && rk_isal_avail_in(isal) == before { return (0, .stalled) }
        return (Int(written), .progress)
    }
}

/// The first two bytes of every gzip member.
enum GzipMagic {
    static func matches(_ b0: UInt8, _ b1: UInt8) -> Bool { b0 == 0x1F && b1 == 0x8B }
}
