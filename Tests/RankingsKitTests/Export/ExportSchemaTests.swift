import CKernels
import Testing
@testable import RankingsKit

/// The managed-export numbers of schema.h (section 2) against what each side does with them:
/// the C walker and the Swift decoder put each property name in the same slot and give each
/// value the same kind, and the log constants are the format's (the test writer's own).
@Suite("Managed export: C and Swift agree on schema.h")
struct ExportSchemaTests {
    typealias P = TestEntity.Property

    static func vote(_ properties: [P]) -> [UInt8] { TestEntity.encode(path: [("rating_events", .name("e"))], properties) }

    /// The picks of `record` by the C walker (nil when it declines) and by the Swift decoder.
    static func picks(_ record: [UInt8]) -> (c: rk_picked_entity?, swift: rk_picked_entity) {
        var c = rk_picked_entity()
        let taken = record.withUnsafeBufferPointer { rk_entity_pick($0.baseAddress, $0.count, &c) } == 1
        var decoder = EntityDecoder()
        record.withUnsafeBytes { raw in try! decoder.decodeInSwift(raw) }
        return (taken ? c : nil, decoder.picks.pointee)
    }

    static func property(_ e: rk_picked_entity, _ slot: Int) -> rk_picked_property {
        withUnsafeBytes(of: e.properties) { $0.bindMemory(to: rk_picked_property.self)[slot] }
    }

    @Test("each property name fills the same slot in C and Swift, the slots of EntityProto.Name")
    func slots() throws {
        #expect(Int(RK_SLOTS) == EntityProto.Name.allCases.count)
        #expect(Set(EntityProto.Name.allCases.map(\.slot)) == Set(0..<Int(RK_SLOTS)))
        for name in EntityProto.Name.allCases {
            let (c, swift) = Self.picks(Self.vote([P(name: "\(name.text)", value: .string([0x61]))]))
            let walked = try #require(c)
            for slot in 0..<Int(RK_SLOTS) {
                #expect(Self.property(walked, slot).seen == (slot == name.slot ? 1 : 0), "\(name) in C")
                #expect(Self.property(swift, slot).seen == (slot == name.slot ? 1 : 0), "\(name) in Swift")
            }
        }
    }

    @Test("each value has the same kind in C and Swift; a geo point, which C declines, has its own in Swift")
    func kinds() throws {
        let values: [(TestEntity.Value, Int32)] = [
            (.null, RK_VALUE_NULL), (.integer(3), RK_VALUE_INTEGER), (.boolean(true), RK_VALUE_BOOLEAN),
            (.string([0x61]), RK_VALUE_STRING), (.double(2.5), RK_VALUE_DOUBLE), (.point(1, 2), RK_VALUE_POINT),
        ]
        for (value, kind) in values {
            let (c, swift) = Self.picks(Self.vote([P(name: "rating", value: value)]))
            let slot = EntityProto.Name.rating.slot
            #expect(Int32(Self.property(swift, slot).kind) == kind, "\(value) in Swift")
            if kind == RK_VALUE_POINT {
                #expect(c == nil, "the walker leaves groups to Swift")
            } else {
                #expect(Int32(Self.property(try #require(c), slot).kind) == kind, "\(value) in C")
            }
        }
    }

    @Test("the log constants are the format's: the test writer's blocks, headers and fragment types")
    func log() {
        #expect(LogFormat.blockSize == TestLog.block && LogFormat.headerSize == 7)
        // One record cut into FIRST, MIDDLE, LAST, then a FULL one, as the test writer lays them out.
        let log = TestLog.write([[UInt8](repeating: 0x61, count: 2 * TestLog.block), [0x62]])
        var types: [UInt8] = []
        log.withUnsafeBufferPointer { bytes in
            let fragments = UnsafeMutablePointer<rk_log_fragment>.allocate(capacity: TestLog.block / 7 + 1)
            defer { fragments.deallocate() }
            var block = 0
            while block < bytes.count {
                var count = 0
                _ = rk_log_scan_headers(bytes.baseAddress! + block, min(TestLog.block, bytes.count - block), fragments, &count)
                types += (0..<count).map { fragments[$0].type }
                block += TestLog.block
            }
        }
        #expect(types == [UInt8(RK_LOG_FIRST), UInt8(RK_LOG_MIDDLE), UInt8(RK_LOG_LAST), UInt8(RK_LOG_FULL)])
        #expect(types.map { LogFormat.FragmentType($0)?.name } == ["FIRST", "MIDDLE", "LAST", "FULL"])
        #expect(LogFormat.FragmentType(UInt8(RK_LOG_ZERO)) == .zero && LogFormat.FragmentType(5) == nil)
    }
}
