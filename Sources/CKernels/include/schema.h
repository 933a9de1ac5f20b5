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



#endif
