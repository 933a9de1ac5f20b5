#ifndef RANKINGS_ENTITY_TEMPLATE_H
#define RANKINGS_ENTITY_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "entity_pick.h"
#include "fast_path_patience.h"

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
    /// 1 when every record this template matches is a plain rating event as far as its layout
    /// goes (all the rules ask of the picks but for the joke id's bytes and the rating's
    /// value): then `rk_entity_read` reads only those two.
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

/// `rk_entity_pick` with templates: the same answer and the same picks for every record.
int rk_entity_pick_templated(const uint8_t *record, size_t count, rk_picked_entity *out,
                             rk_entity_templates *templates);

/// A plain rating event read from a template: its joke id (ASCII, not empty) and its rating
/// (in 1...5), and the template and record the rest is picked from when asked.
typedef struct {
    const uint8_t *joke_id;
    size_t joke_id_count;
    double rating;
    const rk_entity_template *from;
    const uint8_t *record;
    size_t count;
} rk_plain_event;

/// The export reader's fast path: `rk_entity_pick_templated` that stops short of the picks for
/// a record a plain template matches and whose own joke id and rating make it an event.
/// Returns 2 with `event` filled (the rules would judge that record this event), else what
/// `rk_entity_pick_templated` returns, with `out` filled on 1.
int rk_entity_read(const uint8_t *record, size_t count, rk_entity_templates *templates,
                   rk_plain_event *event, rk_picked_entity *out);

/// The picks `rk_entity_pick_templated` would have given for a plain event's record.
void rk_entity_template_picks(const rk_plain_event *event, rk_picked_entity *out);

#endif
