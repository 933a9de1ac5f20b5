/// Target: the managed-export entity decoder and the rating_events rules. The fuzzer's bytes
/// are one record as they are, or the choices for an entity built here (path, properties with
/// names, meanings, multiple flags and typed values, some of them near the rules' edges), with
/// a byte of it changed or not. `EntityDecoder` and `ExportEventRules` must give the
/// reference's verdict: undecodable, left out, bad with the same reason, or the same event
/// (id, joke id, rating bit for bit, timestamp, device and week ids), three ways: `decode` on
/// its own (the C walk, the Swift decoder for what it declines), `decode` after templates of the
/// record before its damage (a plain template's vote, or a template's picks, judged), and
/// `decodeInSwift` alone. Apart from the reference: those templates must give the walk's own
/// picks for the damaged record, and where `rk_entity_read` reads a plain vote from one, the
/// picks it leaves for later must be the walk's.

import CKernels

private func varint(_ v: UInt64) -> [UInt8] {
    var v = v, out: [UInt8] = []
    while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
    return out + [UInt8(v)]
}
private func bytesField(_ n: UInt64, _ b: [UInt8]) -> [UInt8] { varint(n << 3 | 2) + varint(UInt64(b.count)) + b }
private func intField(_ n: UInt64, _ v: UInt64) -> [UInt8] { varint(n << 3) + varint(v) }
private func fixedField(_ n: UInt64, _ v: UInt64) -> [UInt8] { varint(n << 3 | 1) + (0..<8).map { UInt8(v >> (8 * UInt64($0)) & 0xFF) } }

/// Picks as text, pointers as offsets from `base` (the record's first byte).
private func text(of e: rk_picked_entity, base: UnsafePointer<UInt8>) -> String {
    func at(_ p: UnsafePointer<UInt8>?) -> String { p.map { "\($0 - base)" } ?? "nil" }
    var text = "path \(e.path_length) kind \(at(e.kind))+\(e.kind_count) name \(at(e.name))+\(e.name_count) id \(e.id) at \(at(e.id_at)) \(e.has_name) \(e.has_id)"
    withUnsafeBytes(of: e.properties) { raw in
        for p in raw.bindMemory(to: rk_picked_property.self) {
            text += "; \(p.seen) \(p.kind) \(p.multiple) \(p.meaning) \(p.number) \(at(p.string))+\(p.string_count) \(at(p.number_at)) \(p.number_form)"
        }
    }
    return text
}

/// Everything `rk_entity_pick` (or its templates) gives for a record, pointers as offsets.
private func picksText(_ record: [UInt8], templates: UnsafeMutablePointer<rk_entity_templates>?) -> String {
    var e = rk_picked_entity()
    return record.withUnsafeBufferPointer { buffer -> String in
        let base = buffer.baseAddress
        let picked = templates.map { rk_entity_pick_templated(base, buffer.count, &e, $0) } ?? rk_entity_pick(base, buffer.count, &e)
        guard picked == 1, let base else { return "declined \(picked)" }
        return text(of: e, base: base)
    }
}

/// Runs `body` with a reader's templates, zeroed as a reader's start.
private func withTemplates(_ body: (UnsafeMutablePointer<rk_entity_templates>) -> Void) {
    let templates = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<rk_entity_templates>.size, alignment: 64)
    defer { templates.deallocate() }
    templates.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<rk_entity_templates>.size)
    body(templates.bindMemory(to: rk_entity_templates.self, capacity: 1))
}

/// A record picked from a template of `base` (the record before the builder's damage) must get
/// exactly the walk's picks: the same answer, the same offsets, the same numbers.
private func checkTemplates(base: [UInt8], record: [UInt8], input: [UInt8]) {
    withTemplates { t in
        _ = picksText(base, templates: t)
        _ = picksText(base, templates: t)
        let product = picksText(record, templates: t), reference = picksText(record, templates: nil)
        if product != reference { mismatch("picks (entity template of the undamaged record)", input: input, product: product, reference: reference) }
    }
}

/// `rk_entity_read` after templates of `base`: where it reads a plain vote, the picks it leaves
/// for later must be the walk's.
private func checkPlainRead(base: [UInt8], record: [UInt8], input: [UInt8]) {
    withTemplates { t in
        _ = picksText(base, templates: t)
        let walked = picksText(record, templates: nil)
        record.withUnsafeBufferPointer { buffer in
            var plain = rk_plain_event(), e = rk_picked_entity()
            guard let start = buffer.baseAddress, rk_entity_read(start, buffer.count, t, &plain, &e) == 2 else { return }
            rk_entity_template_picks(&plain, &e)
            let later = text(of: e, base: start)
            if later != walked { mismatch("picks left for later by a plain vote", input: input, product: later, reference: walked) }
        }
    }
}

private func build(_ input: inout FuzzInput, before: inout [UInt8]) -> [UInt8] {
    let kinds = ["rating_events", "jokes", "rating_event", ""].map { Array($0.utf8) }
    let names = ["joke_id", "rating", "timestamp", "device_id", "week_id", "note", "Rating"].map { Array($0.utf8) }
    var elements: [UInt8] = []
    for _ in 0..<(Int(input.byte() % 3) + 1) {
        let choice = input.byte()
        elements += varint(1 << 3 | 3) + bytesField(2, kinds[Int(choice % 4)])
        switch choice >> 2 & 3 {
        case 0: elements += bytesField(4, Array("id-\(input.byte())".utf8))
        case 1: elements += intField(3, UInt64(bitPattern: Int64(Int8(bitPattern: input.byte())) * 1_000_003))
        case 2: elements += bytesField(4, [input.byte(), input.byte()])
        default: break
        }
        elements += varint(1 << 3 | 4)
    }
    var out = bytesField(13, bytesField(13, Array("dev~p".utf8)) + bytesField(14, elements))
    for _ in 0..<Int(input.byte() % 8) {
        let c = input.byte(), m = input.byte()
        var body: [UInt8] = []
        let meanings: [UInt64] = [0, 0, 0, 7, 14, 15, 19, 24, 9, 16]
        if m % 10 != 0 { body += intField(1, meanings[Int(m % 10)]) }
        body += bytesField(3, names[Int(c % 7)])
        body += intField(4, UInt64((c >> 3) & 1))
        var value: [UInt8] = []
        switch c >> 4 & 7 {
        case 0: value = []
        case 1: value = intField(1, UInt64(bitPattern: Int64(Int8(bitPattern: input.byte()))))
        case 2: value = intField(2, UInt64(input.byte() & 1))
        case 3:
            let length = Int(input.byte() % 6)
            value = bytesField(3, (0..<length).map { _ in input.byte() })
        case 4:
            let doubles: [Double] = [1, 5, 0.999, 5.000001, 3.5, .nan, .infinity, -1, 4.99999999999999999, 1e300]
            value = fixedField(4, doubles[Int(input.byte() % 10)].bitPattern)
        case 5: value = varint(5 << 3 | 3) + fixedField(6, 0) + fixedField(7, 0) + varint(5 << 3 | 4)
        case 6: value = varint(12 << 3 | 3) + bytesField(13, [0x61]) + varint(12 << 3 | 4)
        default: value = intField(1, UInt64(input.byte()) << 40)
        }
        body += bytesField(5, value)
        out += bytesField(m & 0x80 != 0 ? 14 : 15, body)
    }
    out += bytesField(16, [])
    before = out
    let damage = input.byte()
    if damage & 0xC0 == 0xC0 && !out.isEmpty {
        out[Int(input.byte()) * 7 % out.count] ^= max(1, input.byte())
    }
    return out
}

/// How the product decodes: `decode` with fresh templates, `decode` after templates of `warm`,
/// or `decodeInSwift` alone.
private enum Way { case decode, templated, swift }

private func productVerdict(_ record: [UInt8], _ way: Way, warm: [UInt8]) -> ReferenceEntity.Verdict {
    var decoder = EntityDecoder()
    if way == .templated {
        warm.withUnsafeBytes { raw in
            _ = try? decoder.decode(raw)
            _ = try? decoder.decode(raw)
        }
    }
    return record.withUnsafeBytes { raw in
        do throws(ProtoWire.Malformed) {
            let verdict: ExportEventRules.Verdict
            if way == .swift {
                try decoder.decodeInSwift(raw)
                verdict = try ExportEventRules.judge(decoder.picks, offset: 0)
            } else {
                verdict = try decoder.decode(raw)
            }
            switch verdict {
            case .leftOut: return .leftOut
            case .bad(let why): return .bad(why.message)
            case .event(let e):
                let micros: Int64??
                switch e.timestamp {
                case .absent: micros = nil
                case .unreadable: micros = .some(nil)
                case .at(let t): micros = .some(t.seconds * 1_000_000 + Int64(t.nanoseconds / 1000))
                }
                return .event(id: Array(e.eventID), joke: Array(e.jokeID), rating: e.rating, timestamp: micros,
                              device: e.deviceID.map { Array($0) }, week: e.weekID.map { Array($0) })
            }
        } catch {
            return .undecodable
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    var before: [UInt8] = []
    let record = input.byte() & 1 == 0 ? input.rest : build(&input, before: &before)
    let warm = before.isEmpty ? record : before
    checkTemplates(base: warm, record: record, input: input.bytes)
    checkPlainRead(base: warm, record: record, input: input.bytes)
    let reference = ReferenceEntity.judge(record)
    for way in [Way.decode, .templated, .swift] {
        let product = productVerdict(record, way, warm: warm)
        // Ratings compare bit for bit (NaN never reaches an event).
        var same = product == reference
        if case .event(let a, let b, let r1, let c, let d, let e) = product,
           case .event(let a2, let b2, let r2, let c2, let d2, let e2) = reference {
            same = a == a2 && b == b2 && r1.bitPattern == r2.bitPattern && c == c2 && d == d2 && e == e2
        }
        if !same {
            mismatch("verdict (\(way))", input: input.bytes, product: product, reference: reference)
        }
    }
    return 0
}
