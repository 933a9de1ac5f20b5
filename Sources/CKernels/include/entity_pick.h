#ifndef RANKINGS_ENTITY_PICK_H
#define RANKINGS_ENTITY_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "crc32c.h"
#include "fast_path_patience.h"

/// What a value of a picked property is (EntityProto's PropertyValue: the field set last).
#define RK_VALUE_NULL 0
#define RK_VALUE_INTEGER 1
#define RK_VALUE_BOOLEAN 2
#define RK_VALUE_STRING 3
#define RK_VALUE_DOUBLE 4

/// One of the five properties the job reads, as `EntityDecoder` keeps it.
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
    uint8_t kind;
    uint8_t multiple;
    uint8_t number_form;
} rk_picked_property;

/// An entity's key path (its length, the last element) and its five properties, in the order
/// joke_id, rating, timestamp, device_id, week_id. Pointers are into the record.
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
    rk_picked_property properties[5];
} rk_picked_entity;

/// The hot path of `EntityDecoder`: walks an EntityProto once and picks the key path and the
/// five properties, exactly as the Swift decoder does, for the entities exports are made of.
/// Returns 1 with `out` filled, or 0 for anything it does not take: every malformation, and
/// also groups other than path elements (geo points, users, references), which are well
/// formed but rare. On 0 the caller decodes the record with the Swift decoder, which gives
/// the verdict and the reason. So 1 may only ever be returned for a record the Swift decoder
/// accepts, with the same picks: the export_entity fuzz target holds the two to that.
int rk_entity_pick(const uint8_t *record, size_t count, rk_picked_entity *out);

/// Entity templates (entity_template.c): the layouts `rk_entity_pick` took, each with a mask of
/// the bytes its walk depends on. A record of that length equal to one under its mask is picked
/// from the template without a walk.
#define RK_ENTITY_TEMPLATE_MAX 1024
#define RK_ENTITY_TEMPLATES 4

typedef struct {
    /// 64 bytes more than the longest, for whole-register loads.
    uint8_t bytes[RK_ENTITY_TEMPLATE_MAX + 64];
    uint8_t mask[RK_ENTITY_TEMPLATE_MAX + 64];
    /// 0 for an empty slot.
    size_t length;
    /// The walk's picks of `bytes`: its pointers point into `bytes`.
    rk_picked_entity picks;
    /// 1 when every record this template matches is a plain rating event as far as its
    /// layout goes (what `ExportEventRules.plainEvent` checks of the picks but for the joke
    /// id's bytes and the rating's value): then `rk_entity_read` reads only those two.
    uint8_t plain;
} rk_entity_template;

/// One reader's templates (zeroed to start); never shared between threads.
typedef struct {
    rk_entity_template slots[RK_ENTITY_TEMPLATES];
    /// The slot that matched last (tried first), and the one the next new layout replaces.
    uint32_t last;
    uint32_t next;
    /// Records picked from a template (the tests check that templates do answer).
    uint64_t hits;
    /// A record no template answers costs a walk after the compares.
    rk_patience patience;
} rk_entity_templates;

/// `rk_entity_pick` with templates: the same answer and the same picks, for every record.
int rk_entity_pick_templated(const uint8_t *record, size_t count, rk_picked_entity *out,
                             rk_entity_templates *templates);

/// A plain rating event read from a template: its joke id (ASCII, not empty) and its rating
/// (in 1...5), and the template and record the rest can be picked from when asked.
typedef struct {
    const uint8_t *joke_id;
    size_t joke_id_count;
    double rating;
    const rk_entity_template *from;
    const uint8_t *record;
    size_t count;
} rk_plain_event;

/// The reader's hot path: `rk_entity_pick_templated` that stops short of the picks for a
/// record a plain template matches and whose own joke id and rating make it an event. Returns
/// 2 with `event` filled (then `ExportEventRules.plainEvent` would give that event), else
/// what `rk_entity_pick_templated` returns, with `out` filled on 1.
int rk_entity_read(const uint8_t *record, size_t count, rk_entity_templates *templates,
                   rk_plain_event *event, rk_picked_entity *out);

/// The reader's run of plain records: from `fragments[0]` of `block` (at most
/// RK_PLAIN_RUN of them), for as long as each is a FULL fragment whose checksum is the one
/// stored and a plain template reads it as `rk_entity_read` would (2), fills `events` and
/// returns how many. It stops at, and leaves to the general path, the first it does not take,
/// without counting it, walking it or making a template: so every `events[i].from` stays the
/// template it names until the next call that may make one. 0 while templates rest.
#define RK_PLAIN_RUN 64
size_t rk_plain_run(const uint8_t *block, const rk_log_fragment *fragments, size_t count,
                    rk_entity_templates *templates, rk_plain_event *events);

/// The picks `rk_entity_pick_templated` would have given for a record `template` matched.
void rk_entity_template_picks(const rk_entity_template *from, const uint8_t *record, size_t count,
                              rk_picked_entity *out);

#endif
