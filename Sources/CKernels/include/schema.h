#ifndef RANKINGS_SCHEMA_H
#define RANKINGS_SCHEMA_H

// The numbers Swift and C must agree on, defined once here: Swift reads them through the
// CKernels module, and a test holds the Swift types built on them to these values.

// ---------------------------------------------------------------------------------------------
// JSON lines: the fields the line kernel captures (Fields.swift, line_walk.c).
// ---------------------------------------------------------------------------------------------

// A field's number n (Swift's `Field` raw value): bit `1 << n` of the kernel's `wanted` and
// `found`, its value's span at `spans[2 n]` and `spans[2 n + 1]`.
// Top-level keys of a flat record.
#define RK_FIELD_JOKE_ID 1
#define RK_FIELD_RATING 2
#define RK_FIELD_TIMESTAMP 3
#define RK_FIELD_WEEK_ID 4
#define RK_FIELD_DEVICE_ID 5
#define RK_FIELD_EVENT_ID 6
// Top-level keys of a typed Firestore `Document`.
#define RK_FIELD_NAME 7
#define RK_FIELD_FIELDS 8
// A typed value (`{"stringValue": …}`) under a key of the top-level `fields` object is numbered
// this far above the flat field of that key; only joke_id … device_id have one (not `id`),
// so the typed numbers run from 9 to 13.
#define RK_FIELD_TYPED_OFFSET 8
#define RK_FIELDS_WITH_TYPED_VALUE 0x3Eu
// How many span pointers the kernel may write: two for each field number below 16.
#define RK_SPANS 32


// ---------------------------------------------------------------------------------------------
// Managed exports: the entity's property slots and value kinds, the log's record format
// (EntityDecoder.swift, entity_pick.c, LogRecordReader.swift, crc32c.c).
// ---------------------------------------------------------------------------------------------

/// The keys (field number << 3 | wire type) of storage_onestore_v3's EntityProto that the
/// decoders read (EntityProto.swift names the fields).
enum {
    RK_KEY_ENTITY_KEY = 13 << 3 | 2, RK_KEY_PROPERTY = 14 << 3 | 2, RK_KEY_RAW_PROPERTY = 15 << 3 | 2,
    RK_KEY_PATH = 14 << 3 | 2,
    RK_KEY_ELEMENT_START = 1 << 3 | 3, RK_KEY_ELEMENT_END = 1 << 3 | 4,
    RK_KEY_ELEMENT_KIND = 2 << 3 | 2, RK_KEY_ELEMENT_ID = 3 << 3 | 0, RK_KEY_ELEMENT_NAME = 4 << 3 | 2,
    RK_KEY_MEANING = 1 << 3 | 0, RK_KEY_NAME = 3 << 3 | 2, RK_KEY_MULTIPLE = 4 << 3 | 0, RK_KEY_VALUE = 5 << 3 | 2,
    RK_KEY_INT64 = 1 << 3 | 0, RK_KEY_BOOLEAN = 2 << 3 | 0, RK_KEY_STRING = 3 << 3 | 2, RK_KEY_DOUBLE = 4 << 3 | 1,
    RK_KEY_POINT = 5 << 3 | 3, RK_KEY_USER = 8 << 3 | 3, RK_KEY_REFERENCE = 12 << 3 | 3,
};

/// The slots of `rk_picked_entity.properties`: the five properties a rating event has, in
/// this order (EntityProto.Name reads its slot from here).
#define RK_SLOT_JOKE_ID 0
#define RK_SLOT_RATING 1
#define RK_SLOT_TIMESTAMP 2
#define RK_SLOT_DEVICE_ID 3
#define RK_SLOT_WEEK_ID 4
#define RK_SLOTS 5

/// What a picked property's value is (EntityProto's PropertyValue: the field set last). The
/// C walker gives the first five; it declines the groups, which only the Swift decoder keeps.
#define RK_VALUE_NULL 0
#define RK_VALUE_INTEGER 1
#define RK_VALUE_BOOLEAN 2
#define RK_VALUE_STRING 3
#define RK_VALUE_DOUBLE 4
#define RK_VALUE_POINT 5
#define RK_VALUE_USER 6
#define RK_VALUE_REFERENCE 7

/// The LevelDB log of an export's output files: 32 KiB blocks of fragments, each behind a
/// header of a masked CRC-32C (4 bytes), a little-endian length (2) and a type (1).
#define RK_LOG_BLOCK_SIZE 32768
#define RK_LOG_HEADER_SIZE 7
/// Fragment types. ZERO is never written: a zero header starts preallocated zeros that run to
/// the block's end. A record is one FULL fragment, or FIRST, MIDDLE..., LAST.
#define RK_LOG_ZERO 0
#define RK_LOG_FULL 1
#define RK_LOG_FIRST 2
#define RK_LOG_MIDDLE 3
#define RK_LOG_LAST 4



#endif
