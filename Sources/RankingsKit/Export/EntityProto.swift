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
    /// The names of the properties the job reads, each with its slot in `rk_picked_entity`
    /// (schema.h's RK_SLOT_*).
    enum Name: CaseIterable {
        case jokeID, rating, timestamp, deviceID, weekID

        var slot: Int {
            switch self {
            case .jokeID: Int(RK_SLOT_JOKE_ID)
            case .rating: Int(RK_SLOT_RATING)
            case .timestamp: Int(RK_SLOT_TIMESTAMP)
            case .deviceID: Int(RK_SLOT_DEVICE_ID)
            case .weekID: Int(RK_SLOT_WEEK_ID)
            }
        }

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

    /// The picked fields, kept in the C walker's struct: `rk_entity_pick` fills it, the Swift
    /// decoder too (the key through the accessors below, each property as C would), and the
    /// rules read it in place, so a record's picks have one form. A property's value is its
    /// kind (schema.h's RK_VALUE_*) with the number (an int64, or a double's bits) or string.
    let raw: UnsafeMutablePointer<rk_picked_entity>

    var pathLength: Int {
        get { raw.pointee.path_length }
        nonmutating set { raw.pointee.path_length = newValue }
    }

    /// The last path element: its kind (the collection) and its name or numeric id.
    var kind: UnsafeBufferPointer<UInt8> {
        get { UnsafeBufferPointer(start: raw.pointee.kind, count: raw.pointee.kind_count) }
        nonmutating set {
            raw.pointee.kind = newValue.baseAddress
            raw.pointee.kind_count = newValue.count
        }
    }

    var name: UnsafeBufferPointer<UInt8>? {
        get { raw.pointee.has_name != 0 ? UnsafeBufferPointer(start: raw.pointee.name, count: raw.pointee.name_count) : nil }
        nonmutating set {
            raw.pointee.has_name = newValue == nil ? 0 : 1
            raw.pointee.name = newValue?.baseAddress
            raw.pointee.name_count = newValue?.count ?? 0
        }
    }

    var id: Int64? {
        get { raw.pointee.has_id != 0 ? raw.pointee.id : nil }
        nonmutating set {
            raw.pointee.has_id = newValue == nil ? 0 : 1
            raw.pointee.id = newValue ?? 0
        }
    }

    /// A property of the picks, in place.
    @inline(__always)
    static func property(_ name: Name, of picks: UnsafePointer<rk_picked_entity>) -> UnsafePointer<rk_picked_property> {
        UnsafeRawPointer(picks).advanced(by: MemoryLayout<rk_picked_entity>.offset(of: \.properties)!)
            .assumingMemoryBound(to: rk_picked_property.self) + name.slot
    }
}
