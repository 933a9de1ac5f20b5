import CKernels
import CZlib
import Glibc

/// Target 5: gzip. The fuzzer's payload is compressed (in one to three members) with zlib
/// directly, then damaged: truncated, a byte changed, garbage appended; or the fuzzer's bytes
/// are read as a gzip stream as they are. Through `GzipSource` (in short reads) and through a
/// whole `aggregate` run: never a crash or a hang, only ever the corrupt-gzip error, a
/// damaged stream never passes for a good one, and a run over a corrupt stream counts nothing.
/// Every stream goes through both inflaters, ISA-L's and zlib's, which must agree.

/// The payload as gzip members split at `cuts`, and where each member ends in the result.
private func compress(_ payload: [UInt8], cuts: [Int], level: Int32) -> (stream: [UInt8], memberEnds: [Int], plainEnds: [Int]) {
    var stream: [UInt8] = [], memberEnds: [Int] = [], plainEnds: [Int] = []
    var from = 0
    for cut in cuts + [payload.count] where cut >= from {
        var z = z_stream()
        precondition(deflateInit2_(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                                   Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        var part = Array(payload[from..<cut])
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&z, uLong(part.count))) + 64)
        let produced = part.withUnsafeMutableBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { outp in
                z.next_in = inp.baseAddress
                z.avail_in = uInt(inp.count)
                z.next_out = outp.baseAddress
                z.avail_out = uInt(outp.count)
                precondition(deflate(&z, Z_FINISH) == Z_STREAM_END)
                return outp.count - Int(z.avail_out)
            }
        }
        deflateEnd(&z)
        stream += out[..<produced]
        memberEnds.append(stream.count)
        plainEnds.append(cut)
        from = cut
    }
    return (stream, memberEnds, plainEnds)
}

/// `bytes` in zlib's own wrapper (RFC 1950), which starts `78 9C`, not gzip's `1F 8B`.
private func zlibStream(_ bytes: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: Int(compressBound(uLong(bytes.count))))
    var length = uLongf(out.count)
    precondition(compress(&out, &length, bytes, uLong(bytes.count)) == Z_OK)
    return Array(out[..<Int(length)])
}

/// Everything `GzipSource` hands out before the end or its error, with ISA-L's inflate and with
/// zlib's: the two must agree (`sameVerdict`), and the answer is zlib's, as it always was.
/// `sameReason`: the stream is intact, cut short, or followed by garbage, where both must also
/// name the same kind of reason; a stream with bytes changed may be damaged and cut at once,
/// and then one inflater can see the damage before the end and the other only the end.
private func inflateWithProduct(_ stream: [UInt8], readSizes: [Int], sameReason: Bool) -> (output: [UInt8], error: InputError?) {
    let zlib = inflate(stream, readSizes: readSizes, using: .zlib)
    guard rk_isal_available() != 0 else { return zlib }
    let isal = inflate(stream, readSizes: readSizes, using: .isal)
    sameVerdict(zlib: zlib, isal: isal, stream: stream, sameReason: sameReason)
    return zlib
}

/// Both inflaters refuse the same streams, and hand out the same bytes: all of them for a good
/// stream; for a bad one, what one hands out before its error is a prefix of what the other
/// does (they buffer differently).
private func sameVerdict(zlib: (output: [UInt8], error: InputError?), isal: (output: [UInt8], error: InputError?),
                         stream: [UInt8], sameReason: Bool) {
    func kind(_ error: InputError?) -> String {
        guard case .corruptGzip(_, let reason)? = error else { return error == nil ? "none" : "\(error!)" }
        return reason == "truncated gzip data" ? "truncated" : "corrupt"
    }
    let agree: Bool
    if zlib.error == nil && isal.error == nil {
        agree = zlib.output == isal.output
    } else {
        // One known difference: a member whose trailer is cut after a wrong CRC-32. zlib checks
        // the CRC as soon as it has its 4 bytes (corrupt), ISA-L only with all 8 (truncated).
        // Both refuse the stream after the same bytes, with the same status.
        let trailer = kind(zlib.error) == "corrupt" && kind(isal.error) == "truncated" && zlib.output == isal.output
        let bothCorrupt = kind(zlib.error) != "none" && kind(isal.error) != "none"
            && isCorrupt(zlib.error) && isCorrupt(isal.error)
        agree = (kind(zlib.error) == kind(isal.error) || trailer || (!sameReason && bothCorrupt))
            && (zlib.output.starts(with: isal.output) || isal.output.starts(with: zlib.output))
    }
    if !agree {
        mismatch("ISA-L against zlib", input: stream, product: ("ISA-L", isal.output.count, isal.error as Any),
                 reference: ("zlib", zlib.output.count, zlib.error as Any))
    }
}

private func inflate(_ stream: [UInt8], readSizes: [Int], using kind: Inflaters.Kind) -> (output: [UInt8], error: InputError?) {
    var out: [UInt8] = []
    var source: GzipSource<MemorySource>
    do { source = try GzipSource(MemorySource(data: stream, readSizes: readSizes), path: "f.gz", using: kind) } catch { return ([], error) }
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
    defer { buffer.deallocate() }
    var reads = 0
    while true {
        let want = readSizes.isEmpty ? 4096 : min(4096, max(1, readSizes[reads % readSizes.count] * 5))
        reads += 1
        let n: Int
        do { n = try source.read(into: buffer, count: want) } catch { return (out, error) }
        if n == 0 { return (out, nil) }
        out += UnsafeRawBufferPointer(start: buffer, count: n)
    }
}

private func isCorrupt(_ error: InputError?) -> Bool {
    if case .corruptGzip? = error { return true }
    return false
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzip(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let mode = input.byte(), a = input.byte(), b = input.byte()
    let readSizes = mode & 0x80 != 0 ? [Int(a % 7) + 1, Int(b % 13) + 1] : []
    var payload = input.rest

    if mode % 5 == 4 {
        // The fuzzer's own bytes as the stream, behind the magic that routes a file to gzip.
        let stream = [0x1F, 0x8B] + payload
        let (_, error) = inflateWithProduct(stream, readSizes: readSizes, sameReason: false)
        if error != nil && !isCorrupt(error) { mismatch("error kind", input: input.bytes, product: error as Any, reference: "corruptGzip") }
        checkRun(stream, expectCorrupt: nil, input: input.bytes)
        return 0
    }

    payload = Array(payload.prefix(4096))
    let cuts = [Int(a) % (payload.count + 1), Int(b) * 7 % (payload.count + 1)].sorted()
    let (good, memberEnds, plainEnds) = compress(payload, cuts: mode & 0x40 != 0 ? cuts : [], level: Int32(mode >> 3 & 7) + 1)
    var stream = good
    let at = (Int(a) << 8 | Int(b)) % good.count
    enum Damage { case none, truncated(keptMembers: Int?), changed, garbage }
    let damage: Damage
    switch mode % 5 {
    case 0: damage = .none
    case 1:
        stream = Array(good[..<at])
        // Cut exactly between members: the members before the cut are a complete stream.
        let kept = at == 0 ? nil : memberEnds.firstIndex(of: at).map { $0 + 1 }
        damage = .truncated(keptMembers: kept)
    case 2:
        stream[at] ^= b | 1
        damage = .changed
    default:
        if a & 0x80 != 0 {
            // A zlib stream is not a gzip member, though zlib can read both.
            stream += zlibStream(Array(payload.prefix(Int(b % 32))))
        } else {
            // A first byte of 0 starts neither a gzip nor a zlib header.
            stream += [0] + Array(payload.prefix(Int(a % 16)))
        }
        damage = .garbage
    }

    let changed: Bool
    if case .changed = damage { changed = true } else { changed = false }
    let (output, error) = inflateWithProduct(stream, readSizes: readSizes, sameReason: !changed)
    if error != nil && !isCorrupt(error) { mismatch("error kind", input: input.bytes, product: error as Any, reference: "corruptGzip") }
    switch damage {
    case .none:
        if error != nil || output != payload { mismatch("intact stream", input: input.bytes, product: (output, error as Any), reference: payload) }
    case .truncated(let kept):
        if let kept {
            let want = Array(payload[..<plainEnds[kept - 1]])
            if error != nil || output != want { mismatch("stream cut between members", input: input.bytes, product: (output, error as Any), reference: want) }
        } else {
            // Inflated data before the cut is intact; the cut itself must be noticed.
            if !isCorrupt(error) || !payload.starts(with: output) {
                mismatch("truncated stream", input: input.bytes, product: (output, error as Any), reference: "a prefix, then corruptGzip")
            }
        }
    case .changed:
        // A changed header byte the format does not check (time, OS) may go unnoticed; a
        // changed stream that passes must still give back exactly the payload.
        if error == nil && output != payload { mismatch("changed stream passed", input: input.bytes, product: output, reference: payload) }
    case .garbage:
        if !isCorrupt(error) || output != payload { mismatch("trailing garbage", input: input.bytes, product: (output, error as Any), reference: payload) }
    }
    if mode & 0x20 != 0 {
        switch damage {
        case .none: checkRun(stream, expectCorrupt: false, input: input.bytes)
        case .garbage: checkRun(stream, expectCorrupt: true, input: input.bytes)
        case .truncated(let kept): checkRun(stream, expectCorrupt: kept == nil ? true : false, input: input.bytes)
        case .changed: checkRun(stream, expectCorrupt: error != nil, input: input.bytes)
        }
    }
    return 0
}

/// A whole run over the stream as a gzip file: the corrupt-gzip error and no result, or a
/// result; `expectCorrupt` nil when either is acceptable.
private func checkRun(_ stream: [UInt8], expectCorrupt: Bool?, input: [UInt8]) {
    let fd = ScratchFile.holding(stream)
    let file = InputFile(displayPath: "f.gz", origin: .descriptor(fd), compression: .gzip, size: Int64(stream.count))
    var corrupt = false
    do { _ = try Aggregator.run([file], threads: 1, chunkSize: 4096) } catch {
        switch error {
        case .corruptGzip: corrupt = true
        // Its text refused: a file whose first line opens a JSON array. That is judged only
        // after the whole file has been read, so only a stream that inflated whole gets there.
        case .jsonArray where expectCorrupt != true: return
        default: mismatch("run error kind", input: input, product: error, reference: "corruptGzip")
        }
    }
    if let expectCorrupt, corrupt != expectCorrupt {
        mismatch("run over gzip", input: input, product: corrupt ? "corruptGzip" : "a result", reference: expectCorrupt ? "corruptGzip" : "a result")
    }
}
