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

    /// What `rk_entity_read` makes of a record: "event JOKE RATING" when a plain template read
    /// it (with the rest of the picks, asked for, checked against the walk's), else the picks.
    static func read(_ record: [UInt8], _ templates: Templates) -> String {
        var plain = rk_plain_event(), e = rk_picked_entity(), walked = rk_picked_entity()
        return record.withUnsafeBufferPointer { buffer -> String in
            let result = rk_entity_read(buffer.baseAddress, buffer.count, templates.pointer, &plain, &e)
            guard result == 2 else { return result == 1 ? "picked" : "declined \(result)" }
            // The picks a plain event leaves to later are the walk's.
            rk_entity_template_picks(&plain, &e)
            _ = rk_entity_pick(buffer.baseAddress, buffer.count, &walked)
            let same = withUnsafeBytes(of: &e) { a in withUnsafeBytes(of: &walked) { b in a.elementsEqual(b) } }
            let joke = String(decoding: UnsafeBufferPointer(start: plain.joke_id, count: plain.joke_id_count), as: UTF8.self)
            return "event \(joke) \(plain.rating)" + (same ? "" : " (other picks)")
        }
    }

    @Test("a plain vote's template reads its joke id and rating, and hands the rest to the rules")
    func plainEvents() {
        let templates = Self.warmed(by: TestEntity.vote("event-1", joke: "joke-00001", rating: .integer(5)))
        #expect(templates.pointer.pointee.slots.0.plain == 1)
        #expect(Self.read(TestEntity.vote("event-2", joke: "joke-99999", rating: .integer(1)), templates) == "event joke-99999 1.0")
        // Same layout, but not a plain vote: a joke id that is not ASCII (or not UTF-8, which only
        // the decoder may call corrupt), a rating out of range in one varint byte.
        for record in [TestEntity.vote("event-3", joke: "joke-000é", rating: .integer(3)),
                       TestEntity.encode(path: [("rating_events", .name("event-4"))], [
                           .init(name: "joke_id", value: .string(Array("joke-0000".utf8) + [0xFF])),
                           .init(name: "rating", value: .integer(3))]),
                       TestEntity.vote("event-5", joke: "joke-00001", rating: .integer(0)),
                       TestEntity.vote("event-6", joke: "joke-00001", rating: .integer(6))] {
            let before = templates.hits
            #expect(Self.read(record, templates) == "picked")
            #expect(templates.hits == before + 1)
            #expect(Self.picks(record, templates) == Self.picks(record, nil))
        }
        // A kind of the same length is not the template's: the kind's bytes are in its mask.
        let other = TestEntity.encode(path: [("rating_eventz", .name("event-7"))], [
            .init(name: "joke_id", value: .string(Array("joke-00001".utf8))), .init(name: "rating", value: .integer(5))])
        let before = templates.hits
        #expect(Self.read(other, templates) == "picked")
        #expect(templates.hits == before)
        // Doubles: a template of their own, NaN and 5.5 handed back.
        let doubles = Self.warmed(by: TestEntity.vote("event-8", joke: "joke-00001", rating: .double(4.5)))
        #expect(Self.read(TestEntity.vote("event-9", joke: "joke-00002", rating: .double(1)), doubles) == "event joke-00002 1.0")
        for rating in [Double.nan, 5.5, 0.999, -.infinity] {
            #expect(Self.read(TestEntity.vote("event-9", joke: "joke-00002", rating: .double(rating)), doubles) == "picked")
        }
    }

    @Test("a template of what is not a plain vote never reads an event")
    func notPlain() {
        let notVotes: [[UInt8]] = [
            TestEntity.vote("v", joke: "", rating: .integer(5)),
            TestEntity.vote("v", joke: "j", rating: .string(Array("5".utf8))),
            TestEntity.vote("v", joke: "j", rating: .boolean(true)),
            TestEntity.encode(path: [("jokes", .name("j")), ("rating_events", .name("v"))], [
                .init(name: "joke_id", value: .string([0x6A])), .init(name: "rating", value: .integer(5))]),
            TestEntity.encode(path: [("rating_events", .id(7))], [
                .init(name: "joke_id", value: .string([0x6A])), .init(name: "rating", value: .integer(5))]),
            TestEntity.encode(path: [("rating_events", .name("v"))], [
                .init(name: "joke_id", value: .string([0x6A]), multiple: true), .init(name: "rating", value: .integer(5))]),
            TestEntity.encode(path: [("rating_events", .name("v"))], [
                .init(name: "joke_id", value: .string([0x6A])), .init(name: "rating", value: .integer(5), meaning: 7)]),
            TestEntity.encode(path: [("rating_events", .name("v"))], [
                .init(name: "joke_id", value: .string([0x6A]), meaning: 14), .init(name: "rating", value: .integer(5))]),
        ]
        for record in notVotes {
            let templates = Self.warmed(by: record)
            #expect(templates.hits == 1)
            #expect(templates.pointer.pointee.slots.0.plain == 0, "\(record)")
            #expect(Self.read(record, templates) == "picked", "\(record)")
        }
    }
}
