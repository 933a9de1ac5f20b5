#ifndef RANKINGS_ENTITY_PICK_H
#define RANKINGS_ENTITY_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "schema.h"

/// One of the properties the job reads, as `EntityDecoder` keeps it.
typedef struct {
    uint64_t meaning;
    /// The int64Value, or the doubleValue's bits.
    uint64_t number;
    const uint8_t *string;
    size_t string_count;
    /// Where `number` was read from (entity templates read it there again), and how: 0 not
    /// read, 1 a varint, 2 eight little-endian bytes.
    const uint8_t *number_at;
    uint32_t seen;
    /// One of schema.h's RK_VALUE_*.
    uint8_t kind;
    uint8_t multiple;
    uint8_t number_form;
} rk_picked_property;

/// An entity's key path (its length, the last element) and its properties, in schema.h's
/// RK_SLOT_* order. Pointers are into the record.
typedef struct {
    size_t path_length;
    const uint8_t *kind;
    size_t kind_count;
    const uint8_t *name;
    size_t name_count;
    int64_t id;
    /// Where `id` was read from (a varint), for entity templates.
    const uint8_t *id_at;
    uint8_t has_name;
    uint8_t has_id;
    rk_picked_property properties[RK_SLOTS];
} rk_picked_entity;

/// Walks an EntityProto once and picks the key path and the properties, exactly as the Swift
/// decoder (`EntityDecoder.decodeInSwift`) does, for the entities exports are made of.
/// Returns 1 with `out` filled, or 0 for anything it does not take: every malformation, and
/// also groups other than path elements (geo points, users, references), which are well
/// formed but rare. On 0 the caller decodes the record with the Swift decoder, which gives
/// the verdict and the reason. So 1 may only ever be returned for a record the Swift decoder
/// accepts, with the same picks: the export_entity fuzz target holds the two to that.
int rk_entity_pick(const uint8_t *record, size_t count, rk_picked_entity *out);

#endif
