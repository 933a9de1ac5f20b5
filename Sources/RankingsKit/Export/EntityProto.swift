import CKernels

/// What the job reads of one exported entity (a Datastore `EntityProto`): its key path, and the
/// five properties a rating event has. Strings point into the record, valid while it is.
///
/// Field numbers are those of `storage_onestore_v3` (entity_bytes_pb2): EntityProto.key = 13,
/// property = 14, raw_property = 15 (Firestore's exports put every property there);
/// Reference.path = 14; Path.Element is group 1 with type = 2, id = 3, name = 4;
/// Property.meaning = 1, name = 3, multiple = 4, value = 5; PropertyValue.int64Value = 1,
/// booleanValue = 2, stringValue = 3, doubleValue = 4, and the groups PointValue = 5,
/// UserValue = 8, ReferenceValue = 12.
struct EntityProto {
    /// The names of the properties the job reads, in the order of `properties`.
    enum Name: Int, CaseIterable {
        case jokeID, rating, timestamp, deviceID, weekID

        var text: StaticString {
            switch self {
            case .jokeID: "joke_id"
            case .rating: "rating"
            case .timestamp: "timestamp"
            case .deviceID: "device_id"
            case .weekID: "week_id"
            }
        }
    }

    /// Property.Meaning values that change what a value is.
    enum Meaning {
        static let none: UInt64 = 0
        static let gdWhen: UInt64 = 7
        static let text: UInt64 = 15
        static let blob: UInt64 = 14
        static let byteString: UInt64 = 16
        static let entityProto: UInt64 = 19
        static let emptyList: UInt64 = 24
    }

    /// One PropertyValue: exactly one of its fields is set, or none (null).
    enum Value {
        case null
        case integer(Int64)
        case boolean
        case string(UnsafeBufferPointer<UInt8>)
        case double(Double)
        case point, user, reference
    }

    struct Property {
        var meaning: UInt64 = 0
        var value: Value = .null
        /// Firestore writes an array as one property per element, each marked multiple (an
        /// empty array as one property with meaning EMPTY_LIST); a map as a string holding an
        /// embedded EntityProto with meaning ENTITY_PROTO.
        var multiple = false
        /// Properties of this name seen: more than one that is not marked multiple cannot be.
        var seen = 0
    }

    /// The picked fields, kept in the C walker's struct: `rk_entity_pick` fills it in place,
    /// the Swift decoder through the accessors below, and the rules read it through them, so
    /// a record's picks are never copied from one form into another.
    var raw = rk_picked_entity()

    var pathLength: Int {
        get { raw.path_length }
        set { raw.path_length = newValue }
    }

    /// The last path element: its kind (the collection) and its name or numeric id.
    var kind: UnsafeBufferPointer<UInt8> {
        get { UnsafeBufferPointer(start: raw.kind, count: raw.kind_count) }
        set {
            raw.kind = newValue.baseAddress
            raw.kind_count = newValue.count
        }
    }

    var name: UnsafeBufferPointer<UInt8>? {
        get { raw.has_name != 0 ? UnsafeBufferPointer(start: raw.name, count: raw.name_count) : nil }
        set {
            raw.has_name = newValue == nil ? 0 : 1
            raw.name = newValue?.baseAddress
            raw.name_count = newValue?.count ?? 0
        }
    }

    var id: Int64? {
        get { raw.has_id != 0 ? raw.id : nil }
        set {
            raw.has_id = newValue == nil ? 0 : 1
            raw.id = newValue ?? 0
        }
    }

    /// A property slot as it stands, seen or not (the decoder's view).
    subscript(slot name: Name) -> Property {
        get {
            switch name {
            case .jokeID: Property(picked: raw.properties.0)
            case .rating: Property(picked: raw.properties.1)
            case .timestamp: Property(picked: raw.properties.2)
            case .deviceID: Property(picked: raw.properties.3)
            case .weekID: Property(picked: raw.properties.4)
            }
        }
        set {
            let picked = newValue.picked
            switch name {
            case .jokeID: raw.properties.0 = picked
            case .rating: raw.properties.1 = picked
            case .timestamp: raw.properties.2 = picked
            case .deviceID: raw.properties.3 = picked
            case .weekID: raw.properties.4 = picked
            }
        }
    }

    /// The property, nil when the entity has none of that name (the rules' view).
    subscript(_ name: Name) -> Property? {
        let property = self[slot: name]
        return property.seen == 0 ? nil : property
    }
}

extension EntityProto.Property {
    init(picked p: rk_picked_property) {
        meaning = p.meaning
        multiple = p.multiple != 0
        seen = Int(p.seen)
        // p.kind is one of entity_pick.h's RK_VALUE_* (0 null, 1 integer, 2 boolean, 3 string,
        // 4 double), or 5-7 for the groups only the Swift decoder keeps (see `picked`).
        switch p.kind {
        case 1: value = .integer(Int64(bitPattern: p.number))
        case 2: value = .boolean
        case 3: value = .string(UnsafeBufferPointer(start: p.string, count: p.string_count))
        case 4: value = .double(Double(bitPattern: p.number))
        case 5: value = .point
        case 6: value = .user
        case 7: value = .reference
        default: value = .null
        }
    }

    /// The same in the C walker's form.
    var picked: rk_picked_property {
        var p = rk_picked_property()
        p.meaning = meaning
        p.multiple = multiple ? 1 : 0
        p.seen = UInt32(truncatingIfNeeded: seen)
        switch value {
        case .null: p.kind = 0
        case .integer(let v):
            p.kind = 1
            p.number = UInt64(bitPattern: v)
        case .boolean: p.kind = 2
        case .string(let bytes):
            p.kind = 3
            p.string = bytes.baseAddress
            p.string_count = bytes.count
        case .double(let v):
            p.kind = 4
            p.number = v.bitPattern
        // Kept only by the Swift decoder; the rules treat each as "not a number/string".
        case .point: p.kind = 5
        case .user: p.kind = 6
        case .reference: p.kind = 7
        }
        return p
    }
}
