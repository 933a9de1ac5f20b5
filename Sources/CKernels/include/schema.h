#ifndef RANKINGS_SCHEMA_H
#define RANKINGS_SCHEMA_H

// The numbers Swift and C must agree on, defined once here: Swift reads them through the
// CKernels module, and a test holds the Swift types built on them to these values.

// ---------------------------------------------------------------------------------------------
// JSON lines: the fields the line kernel captures (Fields.swift, line_walk.c).
// ---------------------------------------------------------------------------------------------



// ---------------------------------------------------------------------------------------------
// Managed exports: the entity's property slots and value kinds, the log's record format
// (EntityDecoder.swift, entity_pick.c, LogRecordReader.swift, crc32c.c).
// ---------------------------------------------------------------------------------------------



#endif
