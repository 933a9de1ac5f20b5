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

    /// The five properties in fixed places: an entity is decoded without allocating, and an
    /// array here cost a uniqueness check and a bounds check on every property read or written.
    struct Properties {
        var jokeID = Property(), rating = Property(), timestamp = Property(), deviceID = Property(),
            weekID = Property()

        subscript(_ name: Name) -> Property {
            @inline(__always) get {
                switch name {
                case .jokeID: jokeID
                case .rating: rating
                case .timestamp: timestamp
                case .deviceID: deviceID
                case .weekID: weekID
                }
            }
            @inline(__always) set {
                switch name {
                case .jokeID: jokeID = newValue
                case .rating: rating = newValue
                case .timestamp: timestamp = newValue
                case .deviceID: deviceID = newValue
                case .weekID: weekID = newValue
                }
            }
        }
    }

    var pathLength = 0
    /// The last path element: its kind (the collection) and its name or numeric id.
    var kind = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    var name: UnsafeBufferPointer<UInt8>?
    var id: Int64?
    var properties = Properties()

    subscript(_ name: Name) -> Property? {
        let property = properties[name]
        return property.seen == 0 ? nil : property
    }
}
