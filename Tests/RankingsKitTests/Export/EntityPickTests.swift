import CKernels
import Testing
@testable import RankingsKit

/// The C walker (`rk_entity_pick`) held to the Swift decoder: on every entity it takes, the
/// same picks; on every one it leaves (damage, groups), the Swift decoder's verdict, which
/// `decode` then gives. And the reader's route (`EntityDecoder.decode`: a template's plain vote
/// or its picks, judged) held to the Swift decoder judged. The export_entity fuzz target does
/// the same over random entities.
@Suite("Managed export: the C entity walker against the Swift decoder")
struct EntityPickTests {
    typealias P = TestEntity.Property

    /// Everything the job reads of a decoded entity, or the reason it did not decode.
    static func summary(_ record: [UInt8], swiftOnly: Bool) -> String {
        var decoder = EntityDecoder()
        return record.withUnsafeBytes { raw in
            do throws(ProtoWire.Malformed) {
                let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
                if swiftOnly || rk_entity_pick(base, raw.count, decoder.picks) != 1 { try decoder.decodeInSwift(raw) }
            } catch {
                return "undecodable: \(error.reason)"
            }
            let e = decoder.entity
            var text = "path \(e.pathLength) kind \(Array(e.kind)) name \(e.name.map { Array($0) } as Any) id \(e.id as Any)"
            for name in EntityProto.Name.allCases {
                let p = EntityProto.property(name, of: e.raw).pointee
                guard p.seen > 0 else { continue }
                let value: String = switch Int32(p.kind) {
                case RK_VALUE_INTEGER: "int \(Int64(bitPattern: p.number))"
                case RK_VALUE_STRING: "string \(Array(UnsafeBufferPointer(start: p.string, count: p.string_count)))"
                case RK_VALUE_DOUBLE: "double \(p.number)"
                default: "kind \(p.kind)"
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

    static func text(_ verdict: ExportEventRules.Verdict) -> String {
        switch verdict {
        case .leftOut: "left out"
        case .bad(let why): "bad: \(why.message)"
        case .event(let e):
            "\(Array(e.eventID)) \(Array(e.jokeID)) \(e.rating.bitPattern) \(e.timestamp) \(e.deviceID.map { Array($0) } as Any) \(e.weekID.map { Array($0) } as Any)"
        }
    }

    /// The reader's route on `record`, with templates made from `warm` first: its verdict, and
    /// whether a plain template read it (a template's plain vote).
    static func route(_ record: [UInt8], warm: [UInt8]) -> (verdict: String, plain: Bool) {
        var decoder = EntityDecoder()
        warm.withUnsafeBytes { raw in
            _ = try? decoder.decode(raw)
            _ = try? decoder.decode(raw)
        }
        let hits = decoder.templates.pointee.hits
        return record.withUnsafeBytes { raw in
            do throws(ProtoWire.Malformed) {
                let verdict = Self.text(try decoder.decode(raw))
                let plain = decoder.templates.pointee.hits > hits && decoder.templates.pointee.slots.0.plain == 1
                return (verdict, plain && verdict.first == "[")
            } catch {
                return ("undecodable", false)
            }
        }
    }

    /// The Swift decoder alone, judged.
    static func reference(_ record: [UInt8]) -> String {
        var decoder = EntityDecoder()
        return record.withUnsafeBytes { raw in
            do throws(ProtoWire.Malformed) {
                try decoder.decodeInSwift(raw)
                return Self.text(try ExportEventRules.judge(decoder.picks, offset: 0))
            } catch {
                return "undecodable"
            }
        }
    }

    @Test("the reader's route gives the reference's verdict, from a template's plain vote, its picks, or the walk")
    func route() throws {
        let votes = [TestEntity.vote("a"), TestEntity.vote("b", rating: .double(2.5), padding: 300),
                     TestEntity.vote("r", rating: .double(5.000001)), TestEntity.vote("u", joke: "é"),
                     TestEntity.vote("r", rating: .integer(0))]
        #expect(Self.route(votes[0], warm: votes[0]) == (Self.reference(votes[0]), true))
        #expect(Self.route(votes[1], warm: votes[1]) == (Self.reference(votes[1]), true))
        // A rating out of range, a non-ASCII joke id: the template's picks, judged by the rules.
        #expect(Self.route(votes[2], warm: votes[1]).plain == false)
        #expect(Self.route(votes[4], warm: votes[0]) == ("bad: rating is not between 1 and 5", false))
        var plain = 0
        for entity in Self.entities + votes {
            var variants = [entity]
            for i in entity.indices {
                for flip: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80] {
                    var changed = entity
                    changed[i] ^= flip
                    variants.append(changed)
                }
            }
            for record in variants {
                let (verdict, fromTemplate) = Self.route(record, warm: entity)
                if fromTemplate { plain += 1 }
                #expect(verdict == Self.reference(record), "record \(record)")
            }
        }
        #expect(plain > 100)
    }
}
