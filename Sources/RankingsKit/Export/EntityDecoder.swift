import CKernels

/// Decodes an exported entity's bytes into its picks (`rk_picked_entity`) and judges them,
/// reusing its memory record after record so the hot loop allocates nothing.
struct EntityDecoder {
    private let scratch: EntityScratch

    /// `scratch` may be shared with other decoders used one after another on the same thread
    /// (a worker's ranges and files, whose entities share their layouts), never at once.
    init(scratch: EntityScratch = EntityScratch()) { self.scratch = scratch }

    /// The picks of the record last decoded, valid while it is.
    var picks: UnsafeMutablePointer<rk_picked_entity> { scratch.picks }
    var entity: EntityProto { EntityProto(raw: scratch.picks) }
    var templates: UnsafeMutablePointer<rk_entity_templates> { scratch.templates }

    /// The rules' verdict on `record`; throws when it is not a well-formed EntityProto with a
    /// key. `offset` is where the record starts in its file, for the event.
    ///
    /// One fast mechanism, C's entity templates (entity_template.c: a template of an earlier
    /// record's layout, else the walk, which makes one), and one reference, the Swift decoder.
    /// C gives a plain vote's joke id and rating (its template knows the rest of the rules hold)
    /// or the picks, which `ExportEventRules.judge` judges; whatever C declines (any damage, and
    /// rare shapes such as geo points) is decoded again by `decodeInSwift`, which names the
    /// damage, and judged the same way. The export_entity fuzz target holds C to the reference.
    @inline(__always)
    mutating func decode(_ record: UnsafeRawBufferPointer, offset: Int64 = 0) throws(ProtoWire.Malformed) -> ExportEventRules.Verdict {
        if let base = record.baseAddress {
            switch rk_entity_read(base.assumingMemoryBound(to: UInt8.self), record.count, scratch.templates,
                                  scratch.plain, scratch.picks) {
            case 2:
                // C checks a plain vote's joke id for ASCII and emptiness, not for length: the
                // rules judge a long one from the template's picks. (A template is shorter than
                // JokeIDLimit.bytes today, so this is never taken; the check keeps the limit in
                // Swift whatever the templates become.)
                guard scratch.plain.pointee.joke_id_count < JokeIDLimit.bytes else {
                    rk_entity_template_picks(scratch.plain, scratch.picks)
                    return try ExportEventRules.judge(scratch.picks, offset: offset)
                }
                return .event(ExportEvent(plain: scratch.plain, picks: scratch.picks, offset: offset))
            case 1: return try ExportEventRules.judge(scratch.picks, offset: offset)
            default: break
            }
        }
        try decodeInSwift(record)
        return try ExportEventRules.judge(scratch.picks, offset: offset)
    }

    /// Decodes `record` with the Swift decoder alone: the reference the C walker is held to.
    ///
    /// Each message is walked once, switching on whole keys (`number << 3 | wire type`): the
    /// fields the job reads are picked out, every other one is checked and skipped, in the
    /// order of the bytes, so the first damage met is the one reported.
    mutating func decodeInSwift(_ record: UnsafeRawBufferPointer) throws(ProtoWire.Malformed) {
        scratch.picks.pointee = rk_picked_entity()
        var hasKey = false
        var wire = ProtoWire(record)
        while !wire.atEnd {
            let key = try wire.varint()
            switch key {
            case Keys.entityKey:
                try self.key(try wire.bytes())
                hasKey = true
            case Keys.property, Keys.rawProperty:
                try property(try wire.bytes())
            default:
                try wire.skipField(key)
            }
        }
        guard hasKey else { throw ProtoWire.Malformed(reason: "an entity with no key") }
        guard entity.pathLength > 0 else { throw ProtoWire.Malformed(reason: "a key with an empty path") }
    }

    /// The keys picked out (schema.h's RK_KEY_*; `EntityProto` names the fields).
    private enum Keys {
        static let entityKey = UInt64(RK_KEY_ENTITY_KEY), property = UInt64(RK_KEY_PROPERTY)
        static let rawProperty = UInt64(RK_KEY_RAW_PROPERTY), path = UInt64(RK_KEY_PATH)
        static let elementStart = UInt64(RK_KEY_ELEMENT_START), elementEnd = UInt64(RK_KEY_ELEMENT_END)
        static let elementKind = UInt64(RK_KEY_ELEMENT_KIND), elementID = UInt64(RK_KEY_ELEMENT_ID)
        static let elementName = UInt64(RK_KEY_ELEMENT_NAME), meaning = UInt64(RK_KEY_MEANING)
        static let name = UInt64(RK_KEY_NAME), multiple = UInt64(RK_KEY_MULTIPLE), value = UInt64(RK_KEY_VALUE)
        static let int64Value = UInt64(RK_KEY_INT64), booleanValue = UInt64(RK_KEY_BOOLEAN)
        static let stringValue = UInt64(RK_KEY_STRING), doubleValue = UInt64(RK_KEY_DOUBLE)
        static let pointValue = UInt64(RK_KEY_POINT), userValue = UInt64(RK_KEY_USER)
        static let referenceValue = UInt64(RK_KEY_REFERENCE)
    }

    private mutating func key(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        while !wire.atEnd {
            let key = try wire.varint()
            if key == Keys.path {
                try path(try wire.bytes())
            } else {
                try wire.skipField(key)
            }
        }
    }

    private mutating func path(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        while !wire.atEnd {
            let key = try wire.varint()
            guard key == Keys.elementStart else {
                try wire.skipField(key)
                continue
            }
            var kind: UnsafeBufferPointer<UInt8>?
            var name: UnsafeBufferPointer<UInt8>?
            var id: Int64?
            element: while true {
                let innerKey = try wire.varint()
                switch innerKey {
                case Keys.elementEnd: break element
                case Keys.elementKind: kind = try wire.bytes()
                case Keys.elementID: id = Int64(bitPattern: try wire.varint())
                case Keys.elementName: name = try wire.bytes()
                default:
                    let (inner, innerType) = try ProtoWire.split(innerKey)
                    if innerType == .endGroup {
                        throw ProtoWire.Malformed(reason: "path element ended as group \(inner)")
                    }
                    // Inside the element's group: one level down, as a skipped group's fields are.
                    try wire.skip(innerType, field: inner, depth: 1)
                }
            }
            guard let kind else { throw ProtoWire.Malformed(reason: "a path element with no kind") }
            let entity = self.entity
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
            let key = try wire.varint()
            switch key {
            case Keys.meaning: meaning = try wire.varint()
            case Keys.name: name = try wire.bytes()
            case Keys.multiple: multiple = try wire.varint() != 0
            case Keys.value: value = try wire.bytes()
            default:
                try wire.skipField(key)
            }
        }
        guard let name else { throw ProtoWire.Malformed(reason: "a property with no name") }
        guard let slot = Self.slot(name) else {
            // Not one the job reads; its value is still checked, so a damaged one is caught.
            if let value { _ = try Self.value(value) }
            return
        }
        let property = UnsafeMutablePointer(mutating: EntityProto.property(slot, of: scratch.picks))
        if property.pointee.seen > 0 && !(multiple && property.pointee.multiple != 0) {
            throw ProtoWire.Malformed(reason: "property \(slot.text) twice")
        }
        let seen = property.pointee.seen + 1
        property.pointee = try value.map { (v) throws(ProtoWire.Malformed) in try Self.value(v) } ?? rk_picked_property()
        property.pointee.seen = seen
        property.pointee.meaning = meaning
        property.pointee.multiple = multiple ? 1 : 0
    }

    /// A PropertyValue: its kind (schema.h's RK_VALUE_*) is the field set last.
    private static func value(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtoWire.Malformed) -> rk_picked_property {
        var wire = ProtoWire(UnsafeRawBufferPointer(bytes))
        var value = rk_picked_property()
        func kind(_ kind: Int32) { value.kind = UInt8(kind) }
        while !wire.atEnd {
            let key = try wire.varint()
            switch key {
            case Keys.int64Value:
                value.number = try wire.varint()
                kind(RK_VALUE_INTEGER)
            case Keys.booleanValue:
                _ = try wire.varint()
                kind(RK_VALUE_BOOLEAN)
            case Keys.stringValue:
                let string = try wire.bytes()
                (value.string, value.string_count) = (string.baseAddress, string.count)
                kind(RK_VALUE_STRING)
            case Keys.doubleValue:
                value.number = try wire.fixed64()
                kind(RK_VALUE_DOUBLE)
            case Keys.pointValue:
                try wire.skip(.startGroup, field: 5)
                kind(RK_VALUE_POINT)
            case Keys.userValue:
                try wire.skip(.startGroup, field: 8)
                kind(RK_VALUE_USER)
            case Keys.referenceValue:
                try wire.skip(.startGroup, field: 12)
                kind(RK_VALUE_REFERENCE)
            default:
                try wire.skipField(key)
            }
        }
        return value
    }

    /// Which of the names the job reads `name` is, if any.
    private static func slot(_ name: UnsafeBufferPointer<UInt8>) -> EntityProto.Name? {
        EntityProto.Name.allCases.first {
            name.elementsEqual(UnsafeBufferPointer(start: $0.text.utf8Start, count: $0.text.utf8CodeUnitCount))
        }
    }
}

/// A decoder's memory, kept apart from it so one thread's successive decoders share it: the
/// picks (followed by room for a numeric key id in decimal, `ExportEvent.eventID`), what a
/// template read of a plain vote, and the entity templates its walker has made.
final class EntityScratch {
    let picks: UnsafeMutablePointer<rk_picked_entity>
    let plain = UnsafeMutablePointer<rk_plain_event>.allocate(capacity: 1)
    let templates: UnsafeMutablePointer<rk_entity_templates>

    /// Bytes after the picks for an Int64 in decimal.
    static let idRoom = 24

    init() {
        picks = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<rk_picked_entity>.stride + Self.idRoom,
                                                 alignment: MemoryLayout<rk_picked_entity>.alignment)
            .bindMemory(to: rk_picked_entity.self, capacity: 1)
        picks.initialize(to: rk_picked_entity())
        plain.initialize(to: rk_plain_event())
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<rk_entity_templates>.size, alignment: 64)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<rk_entity_templates>.size)
        templates = raw.bindMemory(to: rk_entity_templates.self, capacity: 1)
    }

    deinit {
        picks.deallocate()
        plain.deallocate()
        templates.deallocate()
    }
}
