import Glibc

/// Decodes an exported entity's bytes into an `EntityProto`, reusing one value record after
/// record so the hot loop allocates nothing.
struct EntityDecoder {
    private(set) var entity = EntityProto()

    /// Decodes `record`; throws when it is not a well-formed EntityProto with a key.
    mutating func decode(_ record: UnsafeRawBufferPointer) throws(ProtoWire.Malformed) {
        for i in entity.properties.indices { entity.properties[i] = EntityProto.Property() }
        entity.pathLength = 0
        entity.name = nil
        entity.id = nil
        var hasKey = false
        var wire = ProtoWire(record)
        while !wire.atEnd {
            let (field, type) = try wire.tag()
            switch (field, type) {
            case (13, .lengthDelimited):
                try key(try wire.bytes())
                hasKey = true
            case (14, .lengthDelimited), (15, .lengthDelimited):
                try property(try wire.bytes())
            default:
                try wire.skip(type, field: field)
            }
        }
        guard hasKey else { throw ProtoWire.Malformed(reason: "an entity with no key") }
        guard entity.pathLength > 0 else { throw ProtoWire.Malformed(reason: "a key with an empty path") }
    }

    private mutating func key(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        while !wire.atEnd {
            let (field, type) = try wire.tag()
            if field == 14 && type == .lengthDelimited {
                try path(try wire.bytes())
            } else {
                try wire.skip(type, field: field)
            }
        }
    }

    private mutating func path(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        while !wire.atEnd {
            let (field, type) = try wire.tag()
            guard field == 1 && type == .startGroup else {
                try wire.skip(type, field: field)
                continue
            }
            var kind: UnsafeBufferPointer<UInt8>?
            var name: UnsafeBufferPointer<UInt8>?
            var id: Int64?
            while true {
                let (inner, innerType) = try wire.tag()
                if innerType == .endGroup {
                    guard inner == 1 else { throw ProtoWire.Malformed(reason: "path element ended as group \(inner)") }
                    break
                }
                switch (inner, innerType) {
                case (2, .lengthDelimited): kind = try wire.bytes()
                case (3, .varint): id = Int64(bitPattern: try wire.varint())
                case (4, .lengthDelimited): name = try wire.bytes()
                // Inside the element's group: one level down, as a skipped group's fields are.
                default: try wire.skip(innerType, field: inner, depth: 1)
                }
            }
            guard let kind else { throw ProtoWire.Malformed(reason: "a path element with no kind") }
            entity.pathLength += 1
            entity.kind = kind
            entity.name = name
            entity.id = id
        }
    }

    private mutating func property(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        var meaning: UInt64 = 0
        var name: UnsafeBufferPointer<UInt8>?
        var multiple = false
        var value: UnsafeBufferPointer<UInt8>?
        while !wire.atEnd {
            let (field, type) = try wire.tag()
            switch (field, type) {
            case (1, .varint): meaning = try wire.varint()
            case (3, .lengthDelimited): name = try wire.bytes()
            case (4, .varint): multiple = try wire.varint() != 0
            case (5, .lengthDelimited): value = try wire.bytes()
            default: try wire.skip(type, field: field)
            }
        }
        guard let name else { throw ProtoWire.Malformed(reason: "a property with no name") }
        guard let slot = Self.slot(name) else {
            // Not one the job reads; its value is still checked, so a damaged one is caught.
            if let value { _ = try Self.value(value) }
            return
        }
        var property = entity.properties[slot.rawValue]
        if property.seen > 0 && !(multiple && property.multiple) {
            throw ProtoWire.Malformed(reason: "property \(slot.text) twice")
        }
        property.seen += 1
        property.meaning = meaning
        property.multiple = multiple
        property.value = try value.map { (v) throws(ProtoWire.Malformed) in try Self.value(v) } ?? .null
        entity.properties[slot.rawValue] = property
    }

    private static func value(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) -> EntityProto.Value {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        var value = EntityProto.Value.null
        while !wire.atEnd {
            let (field, type) = try wire.tag()
            switch (field, type) {
            case (1, .varint): value = .integer(Int64(bitPattern: try wire.varint()))
            case (2, .varint):
                _ = try wire.varint()
                value = .boolean
            case (3, .lengthDelimited): value = .string(try wire.bytes())
            case (4, .fixed64): value = .double(Double(bitPattern: try wire.fixed64()))
            case (5, .startGroup):
                try wire.skip(type, field: field)
                value = .point
            case (8, .startGroup):
                try wire.skip(type, field: field)
                value = .user
            case (12, .startGroup):
                try wire.skip(type, field: field)
                value = .reference
            default: try wire.skip(type, field: field)
            }
        }
        return value
    }

    /// Which of the five names `name` is: by length first, so most other names cost one compare.
    @inline(__always)
    private static func slot(_ name: UnsafeBufferPointer<UInt8>) -> EntityProto.Name? {
        @inline(__always) func equals(_ text: StaticString) -> Bool {
            memcmp(text.utf8Start, name.baseAddress!, name.count) == 0
        }
        switch name.count {
        case 6: return equals("rating") ? .rating : nil
        case 7: return equals("joke_id") ? .jokeID : equals("week_id") ? .weekID : nil
        case 9: return equals("timestamp") ? .timestamp : equals("device_id") ? .deviceID : nil
        default: return nil
        }
    }
}
