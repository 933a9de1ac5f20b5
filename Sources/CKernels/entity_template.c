// Entity templates: `rk_entity_pick` done once per record layout instead of once per record.
// An export's entities of one collection are written alike: the same fields in the same order,
// the same property names, and (ids being of fixed length: 20-character document ids, UUIDs,
// week ids) the same lengths; they differ in the bytes of their strings and numbers.
//
// Why a masked match may stand in for the walk. The walk (entity_pick.c) is a function of the
// record's bytes, and of only some of them: every key (tag), every length, every varint's
// continuation bits, the property names (which slot a property fills), and the meaning and
// multiple flags decide what it does and what it picks; the bytes of strings (values, key
// kinds and names, fields it skips), of doubles and fixed fields, and the value bits of the
// other varints (int64 values, key ids, booleans, skipped varints) it only ever copies or
// points at (but for a varint's tenth byte, which may only hold its 64th bit: the walk judges
// its value, so it counts whole). `describe` below reads a record
// the walk accepted field by field, as the walk does, and marks each byte: 0xFF where the walk
// depends on the byte, 0x80 where only its continuation bit counts, 0 where nothing does. A
// record of the same length that equals the template's under that mask is walked exactly as
// the template's was: same fields, same offsets, same picks but for what is read from those
// bytes (pointers into the record, numbers), which `rk_entity_pick_templated` reads. The rules
// (ExportEventRules.judge) then judge those picks as they judge the walk's.
#include "entity_template.h"

#include <string.h>

#include "cpu_level.h"

#define DEPENDS 0xFF
#define CONTINUATION 0x80
#define OPAQUE 0x00

// A cursor over one message of the record that marks the mask as it reads. Every reader
// returns 0 for what it cannot describe (then no template is made; the walk took the record,
// so that is only ever a layout this reader is stricter about than the walk).
typedef struct {
    const uint8_t *p, *end, *base;
    uint8_t *mask;
} cursor;

static int varint(cursor *c, uint64_t *value, uint8_t mark) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) return 0;
        uint8_t b = *c->p;
        // The walk judges a tenth byte by its value (it may only hold the 64th bit).
        c->mask[c->p - c->base] = shift == 63 ? DEPENDS : mark;
        c->p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *value = v;
            return 1;
        }
    }
    return 0;
}

// A length-delimited field's length (which the walk depends on) and its bytes, marked `mark`.
static int bytes(cursor *c, cursor *inner, uint8_t mark) {
    uint64_t length;
    if (!varint(c, &length, DEPENDS) || length > (uint64_t)(c->end - c->p)) return 0;
    memset(c->mask + (c->p - c->base), mark, (size_t)length);
    *inner = (cursor){c->p, c->p + length, c->base, c->mask};
    c->p += length;
    return 1;
}

// A field the walk skips (or reads only for its value): what its wire type makes of it.
static int other(cursor *c, uint64_t key) {
    uint64_t ignored;
    cursor inner;
    switch (key & 7) {
    case 0: return varint(c, &ignored, CONTINUATION);
    case 1:
    case 5: {
        size_t n = (key & 7) == 1 ? 8 : 4;
        if ((size_t)(c->end - c->p) < n) return 0;
        memset(c->mask + (c->p - c->base), OPAQUE, n);
        c->p += n;
        return 1;
    }
    case 2: return bytes(c, &inner, OPAQUE);
    default: return 0;
    }
}

static int value(cursor c) {
    while (c.p < c.end) {
        uint64_t key;
        if (!varint(&c, &key, DEPENDS)) return 0;
        // Strings, int64s, doubles and booleans are only copied; the kind is the key's.
        if (!other(&c, key)) return 0;
    }
    return 1;
}

static int property(cursor c) {
    while (c.p < c.end) {
        uint64_t key, ignored;
        cursor inner;
        if (!varint(&c, &key, DEPENDS)) return 0;
        int ok;
        if (key == RK_KEY_NAME) ok = bytes(&c, &inner, DEPENDS);
        else if (key == RK_KEY_MEANING || key == RK_KEY_MULTIPLE) ok = varint(&c, &ignored, DEPENDS);
        else if (key == RK_KEY_VALUE) ok = bytes(&c, &inner, DEPENDS) && value(inner);
        else ok = other(&c, key);
        if (!ok) return 0;
    }
    return 1;
}

static int path(cursor c) {
    while (c.p < c.end) {
        uint64_t key;
        if (!varint(&c, &key, DEPENDS)) return 0;
        if (key != RK_KEY_ELEMENT_START) {
            if (!other(&c, key)) return 0;
            continue;
        }
        for (;;) {
            uint64_t inner_key;
            if (!varint(&c, &inner_key, DEPENDS)) return 0;
            if (inner_key == RK_KEY_ELEMENT_END) break;
            // Kind, name and id are only copied.
            if (!other(&c, inner_key)) return 0;
        }
    }
    return 1;
}

static int entity_key(cursor c) {
    while (c.p < c.end) {
        uint64_t key;
        cursor inner;
        if (!varint(&c, &key, DEPENDS)) return 0;
        int ok = key == RK_KEY_PATH ? bytes(&c, &inner, DEPENDS) && path(inner) : other(&c, key);
        if (!ok) return 0;
    }
    return 1;
}

static int describe(const uint8_t *record, size_t count, uint8_t *mask) {
    cursor c = {record, record + count, record, mask};
    while (c.p < c.end) {
        uint64_t key;
        cursor inner;
        if (!varint(&c, &key, DEPENDS)) return 0;
        int ok;
        if (key == RK_KEY_RAW_PROPERTY || key == RK_KEY_PROPERTY) ok = bytes(&c, &inner, DEPENDS) && property(inner);
        else if (key == RK_KEY_ENTITY_KEY) ok = bytes(&c, &inner, DEPENDS) && entity_key(inner);
        else ok = other(&c, key);
        if (!ok) return 0;
    }
    return 1;
}

// Whether `record` equals the template's bytes wherever its mask says the walk depends on them.
static int matches_portable(const rk_entity_template *t, const uint8_t *record, size_t count) {
    size_t i = 0;
    uint64_t differs = 0;
    for (; i + 8 <= count; i += 8) {
        uint64_t a, b, m;
        memcpy(&a, record + i, 8);
        memcpy(&b, t->bytes + i, 8);
        memcpy(&m, t->mask + i, 8);
        differs |= (a ^ b) & m;
    }
    for (; i < count; i++) differs |= (uint64_t)((record[i] ^ t->bytes[i]) & t->mask[i]);
    return differs == 0;
}

#if defined(__x86_64__)
#include <immintrin.h>

// 64 bytes a step, the last step masked to the record's end (so never read past it, and the
// mask's bytes past the template's length, left from a longer one, never count). The
// differences gather in one register and are tested once: a record that reaches the compare
// nearly always matches.
__attribute__((target("avx512f,avx512bw")))
static int matches_avx512(const rk_entity_template *t, const uint8_t *record, size_t count) {
    __m512i differs = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= count; i += 64) {
        __m512i x = _mm512_xor_si512(_mm512_loadu_si512((const void *)(record + i)),
                                     _mm512_loadu_si512((const void *)(t->bytes + i)));
        // differs | (x & mask)
        differs = _mm512_ternarylogic_epi64(differs, x, _mm512_loadu_si512((const void *)(t->mask + i)), 0xF8);
    }
    if (i < count) {
        __mmask64 in = ((__mmask64)1 << (count - i)) - 1;
        __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(in, record + i), _mm512_loadu_si512((const void *)(t->bytes + i)));
        differs = _mm512_ternarylogic_epi64(differs, x, _mm512_maskz_loadu_epi8(in, t->mask + i), 0xF8);
    }
    return _mm512_test_epi8_mask(differs, differs) == 0;
}

static int matches(const rk_entity_template *t, const uint8_t *record, size_t count) {
    return rk_cpu_level() == RK_CPU_AVX512 ? matches_avx512(t, record, count) : matches_portable(t, record, count);
}
#else
static int matches(const rk_entity_template *t, const uint8_t *record, size_t count) {
    return matches_portable(t, record, count);
}
#endif

static inline const uint8_t *moved(const uint8_t *p, const uint8_t *from, const uint8_t *to) {
    return p == NULL ? NULL : to + (p - from);
}

static uint64_t read_varint(const uint8_t *p) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) return v;
    }
}

// A varint of at most 8 bytes with 8 readable bytes from `p`, in one load: the bytes up to the
// first without a continuation bit, their 7-bit groups packed together. Longer varints (a
// timestamp or id past 2^56) and varints near the record's end take `read_varint`: the same
// value without a byte-by-byte dependency chain.
static inline uint64_t read_varint_in(const uint8_t *p, const uint8_t *end) {
    if (end - p < 8) return read_varint(p);
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stops = ~w & 0x8080808080808080ULL;
    if (stops == 0) return read_varint(p);
    // Keep the bytes through the first stop (the bits below its stop bit and the stop bit).
    uint64_t x = w & (stops ^ (stops - 1)) & 0x7F7F7F7F7F7F7F7FULL;
    x = (x & 0x007F007F007F007FULL) | ((x & 0x7F007F007F007F00ULL) >> 1);
    x = (x & 0x00003FFF00003FFFULL) | ((x & 0x3FFF00003FFF0000ULL) >> 2);
    return (x & 0x000000000FFFFFFFULL) | ((x & 0x0FFFFFFF00000000ULL) >> 4);
}

// The template's picks, moved from its bytes to `record`, with the numbers read from there.
static void pick_from(const rk_entity_template *t, const uint8_t *record, size_t count, rk_picked_entity *out) {
    const uint8_t *end = record + count;
    // Copied inline in 16-byte stores, which the caller's loads of single fields forward from
    // (they do not from the 64-byte stores of a memcpy call).
    __builtin_memcpy_inline(out, &t->picks, sizeof *out);
    out->kind = moved(out->kind, t->bytes, record);
    out->name = moved(out->name, t->bytes, record);
    if (out->id_at) {
        out->id_at = moved(out->id_at, t->bytes, record);
        out->id = (int64_t)read_varint_in(out->id_at, end);
    }
    for (int i = 0; i < RK_SLOTS; i++) {
        rk_picked_property *p = &out->properties[i];
        p->string = moved(p->string, t->bytes, record);
        if (p->number_form == 0) continue;
        p->number_at = moved(p->number_at, t->bytes, record);
        if (p->number_form == 1) p->number = read_varint_in(p->number_at, end);
        else memcpy(&p->number, p->number_at, 8);
    }
}

// Whether every record a template of these picks matches is a plain rating event as far as
// its layout decides: what `ExportEventRules.judge` asks of the picks for an event, but for the
// joke id's bytes (UTF-8; here ASCII) and the rating's value (1...5), which `plain_event` checks
// per record. Every check here reads what the mask holds equal (keys, lengths, meanings,
// multiple flags) except the kind's bytes, which `remember` adds to the mask of a plain template.
static int plain_layout(const rk_picked_entity *p) {
    static const char collection[] = "rating_events";
    const rk_picked_property *joke = &p->properties[RK_SLOT_JOKE_ID], *rating = &p->properties[RK_SLOT_RATING];
    return p->path_length == 1 && p->has_name && p->kind_count == sizeof collection - 1 &&
           memcmp(p->kind, collection, sizeof collection - 1) == 0 &&
           joke->seen > 0 && !joke->multiple && joke->kind == RK_VALUE_STRING &&
           (joke->meaning == 0 || joke->meaning == 15) && joke->string_count > 0 &&
           rating->seen > 0 && !rating->multiple && rating->meaning == 0 &&
           ((rating->kind == RK_VALUE_INTEGER && rating->number_form == 1) ||
            (rating->kind == RK_VALUE_DOUBLE && rating->number_form == 2));
}

static void remember(const uint8_t *record, size_t count, const rk_picked_entity *picks, rk_entity_templates *templates) {
    if (count > RK_ENTITY_TEMPLATE_MAX) return;
    rk_entity_template *t = &templates->slots[templates->next];
    t->length = 0;
    if (!describe(record, count, t->mask)) return;
    memcpy(t->bytes, record, count);
    t->picks = *picks;
    t->picks.kind = moved(picks->kind, record, t->bytes);
    t->picks.name = moved(picks->name, record, t->bytes);
    t->picks.id_at = moved(picks->id_at, record, t->bytes);
    for (int i = 0; i < RK_SLOTS; i++) {
        t->picks.properties[i].string = moved(picks->properties[i].string, record, t->bytes);
        t->picks.properties[i].number_at = moved(picks->properties[i].number_at, record, t->bytes);
    }
    t->plain = (uint8_t)plain_layout(picks);
    // Only records of this kind then match it: a stricter mask, so still the walk's picks.
    if (t->plain) memset(t->mask + (picks->kind - record), DEPENDS, picks->kind_count);
    t->length = count;
    templates->last = templates->next;
    templates->next = (templates->next + 1) % RK_ENTITY_TEMPLATES;
}

// The template that matches `record`, the one last matched tried first, or NULL (a miss
// counted towards resting).
static inline __attribute__((always_inline)) const rk_entity_template *matching(const uint8_t *record, size_t count,
                                                                              rk_entity_templates *templates) {
    for (uint32_t i = 0; i < RK_ENTITY_TEMPLATES; i++) {
        uint32_t slot = (templates->last + i) % RK_ENTITY_TEMPLATES;
        const rk_entity_template *t = &templates->slots[slot];
        if (t->length != count || count == 0 || !matches(t, record, count)) continue;
        templates->last = slot;
        templates->hits++;
        rk_patience_hit(&templates->patience);
        return t;
    }
    rk_patience_miss(&templates->patience);
    return NULL;
}

static int walk(const uint8_t *record, size_t count, rk_picked_entity *out, rk_entity_templates *templates) {
    int picked = rk_entity_pick(record, count, out);
    if (picked == 1) remember(record, count, out, templates);
    return picked;
}

int rk_entity_pick_templated(const uint8_t *record, size_t count, rk_picked_entity *out,
                             rk_entity_templates *templates) {
    if (rk_patience_resting(&templates->patience)) return rk_entity_pick(record, count, out);
    const rk_entity_template *t = matching(record, count, templates);
    if (t == NULL) return walk(record, count, out, templates);
    pick_from(t, record, count, out);
    return 1;
}

// A plain template's record as an event: 1 when its joke id is ASCII and its rating in 1...5
// (NaN fails both comparisons, as in the rules).
static int plain_event(const rk_entity_template *t, const uint8_t *record, size_t count, rk_plain_event *event) {
    const rk_picked_property *joke = &t->picks.properties[RK_SLOT_JOKE_ID], *rating = &t->picks.properties[RK_SLOT_RATING];
    const uint8_t *id = moved(joke->string, t->bytes, record);
    uint64_t high = 0;
    size_t i = 0;
    for (; i + 8 <= joke->string_count; i += 8) {
        uint64_t word;
        memcpy(&word, id + i, 8);
        high |= word;
    }
    for (; i < joke->string_count; i++) high |= id[i];
    const uint8_t *at = moved(rating->number_at, t->bytes, record);
    double value;
    if (rating->number_form == 1) {
        value = (double)(int64_t)read_varint_in(at, record + count);
    } else {
        memcpy(&value, at, 8);
    }
    if ((high & 0x8080808080808080ULL) != 0 || !(value >= 1 && value <= 5)) return 0;
    *event = (rk_plain_event){id, joke->string_count, value, t, record, count};
    return 1;
}

int rk_entity_read(const uint8_t *record, size_t count, rk_entity_templates *templates,
                   rk_plain_event *event, rk_picked_entity *out) {
    if (rk_patience_resting(&templates->patience)) return rk_entity_pick(record, count, out);
    const rk_entity_template *t = matching(record, count, templates);
    if (t == NULL) return walk(record, count, out, templates);
    if (t->plain && plain_event(t, record, count, event)) return 2;
    pick_from(t, record, count, out);
    return 1;
}

void rk_entity_template_picks(const rk_plain_event *event, rk_picked_entity *out) {
    pick_from(event->from, event->record, event->count, out);
}
