import CKernels
import Testing
@testable import RankingsKit

/// The C walker (`rk_entity_pick`) held to the Swift decoder: on every entity it takes, the
/// same picks; on every one it leaves (damage, groups), the Swift decoder's verdict, which
/// `decode` then gives. The export_entity fuzz target does the same over random entities.
@Suite("Managed export: the C entity walker against the Swift decoder")
struct EntityPickTests {
    typealias P = TestEntity.Property

    /// Everything the job reads of a decoded entity, or the reason it did not decode.
    static func summary(_ record: [UInt8], swiftOnly: Bool) -> String {
        var decoder = EntityDecoder()
        return record.withUnsafeBytes { raw in
            do throws(ProtoWire.Malformed) {
                if swiftOnly { try decoder.decodeInSwift(raw) } else { try decoder.decode(raw) }
            } catch {
                return "undecodable: \(error.reason)"
            }
            let e = decoder.entity
            var text = "path \(e.pathLength) kind \(Array(e.kind)) name \(e.name.map { Array($0) } as Any) id \(e.id as Any)"
            for name in EntityProto.Name.allCases {
                let p = e[slot: name]
                guard p.seen > 0 else { continue }
                let value: String = switch p.value {
                case .null: "null"
                case .integer(let v): "int \(v)"
                case .boolean: "bool"
                case .string(let s): "string \(Array(s))"
                case .double(let d): "double \(d.bitPattern)"
                case .point: "point"
                case .user: "user"
                case .reference: "reference"
                }
                text += "; \(name) seen \(p.seen) meaning \(p.meaning) multiple \(p.multiple) \(value)"
            }
            return text
        }
    }

    static let entities: [[UInt8]] = [
        TestEntity.vote("a"),
        TestEntity.vote("b", rating: .double(2.5), padding: 300),
        TestEntity.encode(path: [("rating_events", .id(-5))], [P(name: "joke_id", value: .string([0x6A])),
                                                                P(name: "rating", value: .integer(4), indexed: true)]),
        TestEntity.encode(path: [("jokes", .name("j")), ("rating_events", .name("e"))], []),
        TestEntity.encode(path: [("rating_events", .name("t"))], [
            P(name: "joke_id", value: .string([0x6A])), P(name: "rating", value: .integer(5)),
            P(name: "timestamp", value: .integer(1_763_900_001_123_456), meaning: 7),
            P(name: "device_id", value: .string([0x64]), meaning: 15), P(name: "week_id", value: .null),
            P(name: "note", value: .boolean(true)), P(name: "tags", value: .string([1]), multiple: true),
            P(name: "tags", value: .string([2]), multiple: true)]),
        TestEntity.encode(path: [("rating_events", .name("m"))], [
            P(name: "rating", value: .integer(1), multiple: true), P(name: "rating", value: .integer(2), multiple: true)]),
        TestEntity.encode(path: [("rating_events", .name("d"))], [
            P(name: "rating", value: .integer(1)), P(name: "rating", value: .integer(2))]),
        // A geo point: well formed, left to the Swift decoder.
        TestEntity.encode(path: [("rating_events", .name("g"))], [P(name: "timestamp", value: .point(1, 2), meaning: 9)]),
        TestEntity.encode(path: [("rating_events", .name("g2"))], [P(name: "other", value: .point(1, 2))]),
        TestEntity.encode(path: [], []),
        [],
    ]

    @Test("the same picks or the same reason, on whole entities, every prefix and every byte changed")
    func agree() {
        for entity in Self.entities {
            var variants = [entity]
            for cut in 0..<entity.count { variants.append(Array(entity[..<cut])) }
            for i in entity.indices {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var changed = entity
                    changed[i] ^= flip
                    variants.append(changed)
                }
            }
            for record in variants {
                let fast = Self.summary(record, swiftOnly: false), swift = Self.summary(record, swiftOnly: true)
                #expect(fast == swift, "record \(record)")
            }
        }
    }

    @Test("the walker itself takes a plain vote and leaves a geo point and a cut record")
    func takes() {
        var picked = rk_picked_entity()
        func pick(_ record: [UInt8]) -> Int32 { record.withUnsafeBufferPointer { rk_entity_pick($0.baseAddress, $0.count, &picked) } }
        #expect(pick(Self.entities[0]) == 1)
        #expect(picked.path_length == 1 && picked.properties.1.number == 5 && picked.properties.1.seen == 1)
        #expect(pick(Self.entities[7]) == 0)
        #expect(pick(Array(Self.entities[0].dropLast())) == 0)
    }

    /// The reader's fast path on one record: the plain event from the picks, or nil.
    static func plain(_ record: [UInt8]) -> ExportEvent? {
        var picks = rk_picked_entity()
        return record.withUnsafeBytes { raw in
            withUnsafeMutablePointer(to: &picks) { p in
                guard let base = raw.baseAddress, rk_entity_pick(base.assumingMemoryBound(to: UInt8.self), raw.count, p) == 1
                else { return nil }
                return ExportEventRules.plainEvent(p, offset: 0)?.event
            }
        }
    }

    static func text(_ e: ExportEvent) -> String {
        "\(Array(e.eventID)) \(Array(e.jokeID)) \(e.rating.bitPattern) \(e.timestamp) \(e.deviceID.map { Array($0) } as Any) \(e.weekID.map { Array($0) } as Any)"
    }

    @Test("the plain-event fast path takes the common vote, and wherever it takes one, the rules give the same event")
    func plainEvents() throws {
        #expect(Self.plain(Self.entities[0]) != nil)
        #expect(Self.plain(Self.entities[1]) != nil)
        // A numeric id, a subcollection, a rating out of range, a non-ASCII joke id: left to the rules.
        #expect(Self.plain(Self.entities[2]) == nil)
        #expect(Self.plain(Self.entities[3]) == nil)
        #expect(Self.plain(TestEntity.vote("r", rating: .integer(0))) == nil)
        #expect(Self.plain(TestEntity.vote("u", joke: "é")) == nil)
        var taken = 0
        for entity in Self.entities + [TestEntity.vote("r", rating: .double(5.000001)), TestEntity.vote("u", joke: "é")] {
            var variants = [entity]
            for i in entity.indices {
                for flip: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80] {
                    var changed = entity
                    changed[i] ^= flip
                    variants.append(changed)
                }
            }
            for record in variants {
                guard let fast = Self.plain(record) else { continue }
                taken += 1
                var decoder = EntityDecoder()
                let verdict: String = record.withUnsafeBytes { raw in
                    do throws(ProtoWire.Malformed) {
                        try decoder.decodeInSwift(raw)
                        if case .event(let e) = try ExportEventRules().judge(decoder.entity) { return Self.text(e) }
                        return "not an event"
                    } catch {
                        return "undecodable"
                    }
                }
                #expect(Self.text(fast) == verdict, "record \(record)")
            }
        }
        #expect(taken > 100)
    }
}
