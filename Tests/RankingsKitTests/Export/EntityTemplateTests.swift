import CKernels
import Testing
@testable import RankingsKit

/// Entity templates (Sources/CKernels/entity_template.c) give exactly the walk's picks. Each
/// case first has the templates take an entity (twice: the second must come from the
/// template), then a record that differs from it (a bit, a byte, other ids and numbers of the
/// same length), whose picks must be those `rk_entity_pick` gives that record on its own:
/// the same answer, the same offsets, the same numbers. The export_entity fuzz target does
/// the same on random entities.
@Suite("Managed export: entity templates give the walk's picks")
struct EntityTemplateTests {
    final class Templates {
        let pointer: UnsafeMutablePointer<rk_entity_templates>
        init() {
            let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<rk_entity_templates>.size, alignment: 64)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<rk_entity_templates>.size)
            pointer = raw.bindMemory(to: rk_entity_templates.self, capacity: 1)
        }
        deinit { pointer.deallocate() }
        var hits: UInt64 { pointer.pointee.hits }
    }

    /// Everything the walk gives for a record, pointers as offsets into it.
    static func picks(_ record: [UInt8], _ templates: Templates?) -> String {
        var e = rk_picked_entity()
        return record.withUnsafeBufferPointer { buffer -> String in
            let base = buffer.baseAddress
            let picked = templates.map { rk_entity_pick_templated(base, buffer.count, &e, $0.pointer) }
                ?? rk_entity_pick(base, buffer.count, &e)
            guard picked == 1, let base else { return "declined \(picked)" }
            func at(_ p: UnsafePointer<UInt8>?) -> String { p.map { "\($0 - base)" } ?? "nil" }
            var text = "path \(e.path_length) kind \(at(e.kind))+\(e.kind_count) name \(at(e.name))+\(e.name_count)"
            text += " id \(e.id) at \(at(e.id_at)) \(e.has_name) \(e.has_id)"
            withUnsafeBytes(of: e.properties) { raw in
                for p in raw.bindMemory(to: rk_picked_property.self) {
                    text += "; \(p.seen) \(p.kind) \(p.multiple) \(p.meaning) \(p.number) \(at(p.string))+\(p.string_count)"
                    text += " \(at(p.number_at)) \(p.number_form)"
                }
            }
            return text
        }
    }

    /// Templates that have taken `base` and answered it from the template once.
    static func warmed(by base: [UInt8]) -> Templates {
        let templates = Templates()
        _ = picks(base, templates)
        _ = picks(base, templates)
        return templates
    }

    static var taken: [[UInt8]] {
        (EntityPickTests.entities + [TestEntity.vote("v", rating: .integer(-300)), TestEntity.encode(
            path: [("rating_events", .id(1_000_000))], [TestEntity.Property(name: "rating", value: .double(4.5))])])
            .filter { picks($0, nil) != "declined 0" }
    }

    /// Negative numbers are ten-byte varints.
    static func hasTenByteVarint(_ record: [UInt8]) -> Bool {
        var run = 0
        for byte in record {
            run = byte >= 0x80 ? run + 1 : 0
            if run >= 9 { return true }
        }
        return false
    }

    @Test("a template answers for the entity it was made from, with the walk's picks")
    func answers() {
        #expect(Self.taken.count >= 7)
        for entity in Self.taken {
            let templates = Self.warmed(by: entity)
            #expect(templates.hits == 1, "\(entity)")
            #expect(Self.picks(entity, templates) == Self.picks(entity, nil), "\(entity)")
        }
        // Among them, numbers of ten varint bytes, whose last byte the walk judges by its value.
        #expect(Self.taken.filter(Self.hasTenByteVarint).count == 2)
    }

    @Test("every bit and byte changed after a template of the entity: the walk's own picks")
    func everyChange() {
        var answered = 0
        for entity in Self.taken {
            for i in entity.indices {
                for flip: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF] {
                    var changed = entity
                    changed[i] ^= flip
                    let templates = Self.warmed(by: entity)
                    let product = Self.picks(changed, templates), reference = Self.picks(changed, nil)
                    #expect(product == reference, "byte \(i) ^ \(flip) of \(entity)")
                    if templates.hits == 2 { answered += 1 }
                }
            }
        }
        // Strings, ids and numbers changed: those the template answers itself.
        #expect(answered > 100)
    }

    @Test("entities of ever-changing layouts rest the templates, which come back after")
    func rest() {
        let templates = Templates()
        // Event ids of 20 lengths: no template answers, so after 16 misses they rest for
        // 1,024 records (the walk answers), then are tried again.
        for length in 1...20 {
            let record = TestEntity.vote(String(repeating: "e", count: length))
            #expect(Self.picks(record, templates) == Self.picks(record, nil))
        }
        #expect(templates.hits == 0)
        let steady = TestEntity.vote("steady", joke: "joke-1", rating: .integer(3))
        let reference = Self.picks(steady, nil)
        for number in 0..<(Int(RK_PATIENCE_REST) + 40) {
            #expect(Self.picks(steady, templates) == reference)
            if number < Int(RK_PATIENCE_REST) - 20 { #expect(templates.hits == 0) }
        }
        #expect(templates.hits >= 30)
    }

    @Test("votes with other ids and numbers of the same lengths take the template")
    func sameLayout() {
        let templates = Self.warmed(by: TestEntity.vote("event-1", joke: "joke-00001", rating: .integer(5)))
        for (id, joke, rating) in [("event-2", "joke-99999", 1), ("zzzzzzz", "JOKE-ABCDE", 3), ("é-vent", "joke-0000é".dropLast(1) + "x", 127)] {
            let record = TestEntity.vote(id, joke: String(joke), rating: .integer(Int64(rating)))
            let before = templates.hits
            #expect(Self.picks(record, templates) == Self.picks(record, nil), "\(id)")
            #expect(templates.hits == before + 1, "\(id)")
        }
        // A rating that needs two varint bytes, a double, a longer id: another layout, walked.
        for record in [TestEntity.vote("event-3", joke: "joke-00001", rating: .integer(200)),
                       TestEntity.vote("event-4", joke: "joke-00001", rating: .double(5)),
                       TestEntity.vote("event-55", joke: "joke-00001", rating: .integer(5))] {
            let before = templates.hits
            #expect(Self.picks(record, templates) == Self.picks(record, nil))
            #expect(templates.hits == before)
        }
    }
}
