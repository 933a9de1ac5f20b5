import Glibc

/// Target: the managed-export log reader. The fuzzer's bytes are read as a log file as they
/// are, or made into records that the reference writer lays out (records up to 25 KB, so
/// fragments cross block edges) and then damaged: a byte changed, the file cut, a header's
/// type rewritten with a matching checksum, zeros appended. `LogRecordReader` over the whole
/// file must give the reference's records (bytes and offsets) or its first damage (offset and
/// kind); read in block ranges cut where the fuzzer chose, the ranges' records joined must be
/// the whole file's, and the first range that fails must fail as the whole file does.

private let fd: Int32 = {
    var template = Array("/tmp/fuzz-export-log-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    precondition(fd >= 0)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    return fd
}()

private struct Collect: LogRecordVisitor {
    var records: [(offset: Int, bytes: [UInt8])] = []

    mutating func record(_ bytes: UnsafeRawBufferPointer, offset: Int64) throws(InputError) {
        records.append((Int(offset), Array(bytes)))
    }
}

private func kind(_ reason: String) -> ReferenceLog.Damage? {
    if reason.hasPrefix("checksum mismatch") { return .checksum }
    if reason.hasPrefix("impossible fragment length") { return .length }
    if reason.hasPrefix("impossible fragment type") { return .type }
    if reason.hasPrefix("record cut short") || reason.hasPrefix("record header cut short") { return .cutShort }
    if reason.hasPrefix("a FULL") || reason.hasPrefix("a FIRST") || reason.hasPrefix("a MIDDLE") || reason.hasPrefix("a LAST") { return .sequence }
    if reason.hasPrefix("non-zero bytes") { return .trailer }
    return nil
}

private func product(_ size: Int, blocks: Range<Int64>) -> ReferenceLog.Outcome {
    var reader = LogRecordReader(fd: fd, path: "log", fileSize: Int64(size))
    var collect = Collect()
    do {
        _ = try reader.read(blocks: blocks, into: &collect)
        return ReferenceLog.Outcome(records: collect.records, damage: nil)
    } catch {
        guard case .corruptExport(_, let offset, let reason) = error, let what = kind(reason) else {
            return ReferenceLog.Outcome(records: collect.records, damage: (-1, .trailer))
        }
        return ReferenceLog.Outcome(records: collect.records, damage: (Int(offset), what))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    var file: [UInt8]
    if mode & 1 == 0 {
        file = input.rest
    } else {
        var records: [[UInt8]] = []
        for _ in 0..<Int(input.byte() % 6) {
            let length = Int(input.byte()) * 100 + Int(input.byte())
            let fill = input.byte()
            records.append((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(fill)) })
        }
        file = ReferenceLog.write(records)
        let damage = input.byte(), where1 = Int(input.byte()) << 8 | Int(input.byte())
        if !file.isEmpty {
            let at = where1 * 3 % file.count
            switch damage % 6 {
            case 1: file[at] ^= max(1, input.byte())
            case 2: file.removeLast(file.count - at)
            case 3:
                // Rewrite a header's type (with a matching checksum) if `at` is on one.
                var pos = 0
                while pos + 7 <= file.count {
                    if ReferenceLog.block - pos % ReferenceLog.block < 7 { pos += ReferenceLog.block - pos % ReferenceLog.block; continue }
                    let length = Int(file[pos + 4]) + 256 * Int(file[pos + 5])
                    if pos >= at || pos + 7 + length > file.count {
                        if pos + 7 + length <= file.count {
                            let fixed = ReferenceLog.header(type: input.byte() % 5, file[(pos + 7)..<(pos + 7 + length)])
                            file.replaceSubrange(pos..<(pos + 7), with: fixed)
                        }
                        break
                    }
                    pos += 7 + length
                }
            case 4: file += [UInt8](repeating: 0, count: Int(input.byte()) * 200)
            default: break
            }
        }
    }
    precondition(ftruncate(fd, 0) == 0)
    _ = file.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }

    let reference = ReferenceLog.read(file)
    let blockCount = Int64((file.count + ReferenceLog.block - 1) / ReferenceLog.block)
    let whole = product(file.count, blocks: 0..<blockCount)
    if whole != reference {
        mismatch("whole file", input: input.bytes, product: (whole.records.map(\.offset), whole.damage as Any),
                 reference: (reference.records.map(\.offset), reference.damage as Any))
    }
    // Block ranges cut at the fuzzer's choice of boundaries.
    let cutMask = input.byte()
    var cuts: [Int64] = [0]
    for b in 1..<max(1, blockCount) where cutMask & (1 << UInt8(truncatingIfNeeded: (b - 1) % 8)) != 0 { cuts.append(b) }
    cuts.append(blockCount)
    var joined: [(offset: Int, bytes: [UInt8])] = []
    for (lower, upper) in zip(cuts, cuts.dropFirst()) where lower < upper {
        let part = product(file.count, blocks: lower..<upper)
        joined += part.records
        if let damage = part.damage {
            guard let expected = whole.damage, expected.offset == damage.offset, expected.kind == damage.kind else {
                mismatch("first failing range \(lower)..<\(upper)", input: input.bytes, product: damage, reference: whole.damage as Any)
            }
            return 0
        }
    }
    if whole.damage != nil {
        mismatch("ranges \(cuts) read a damaged file without failing", input: input.bytes, product: "no damage", reference: whole.damage as Any)
    }
    if joined.map(\.offset) != whole.records.map(\.offset) || joined.map(\.bytes) != whole.records.map(\.bytes) {
        mismatch("ranges \(cuts) joined", input: input.bytes, product: joined.map(\.offset), reference: whole.records.map(\.offset))
    }
    return 0
}
