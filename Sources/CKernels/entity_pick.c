#include "entity_pick.h"

#include <string.h>


// A cursor over one message. Every reader returns 0 on anything the Swift decoder would
// refuse (or that this walker leaves to it), 1 otherwise.
typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} wire;

static inline __attribute__((always_inline)) int varint(wire *w, uint64_t *value) {
    const uint8_t *p = w->p;
    if (p < w->end && *p < 0x80) {
        *value = *p;
        w->p = p + 1;
        return 1;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= w->end) return 0;
        uint8_t b = *p++;
        // The tenth byte may only hold the 64th bit (ProtoWire: "longer than 64 bits").
        if (shift == 63 && b > 1) return 0;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *value = v;
            w->p = p;
            return 1;
        }
    }
    return 0;
}

static inline int bytes(wire *w, const uint8_t **start, size_t *count) {
    uint64_t length;
    if (!varint(w, &length)) return 0;
    if (length > (uint64_t)(w->end - w->p)) return 0;
    *start = w->p;
    *count = (size_t)length;
    w->p += length;
    return 1;
}

// Skips a field whose key is not one picked out, after the checks ProtoWire.split makes.
// Groups are left to the Swift decoder.
static inline int skip(wire *w, uint64_t key) {
    uint64_t field = key >> 3;
    if (field == 0 || field >= (1u << 29)) return 0;
    uint64_t ignored;
    const uint8_t *start;
    size_t count;
    switch (key & 7) {
    case 0: return varint(w, &ignored);
    case 1:
        if (w->end - w->p < 8) return 0;
        w->p += 8;
        return 1;
    case 2: return bytes(w, &start, &count);
    case 5:
        if (w->end - w->p < 4) return 0;
        w->p += 4;
        return 1;
    default: return 0;
    }
}

// Inlined into its two callers: it runs once for every property value the walk reads.
static inline __attribute__((always_inline)) int value(const uint8_t *start, size_t count, rk_picked_property *out) {
    wire w = {start, start + count};
    uint8_t kind = RK_VALUE_NULL, number_form = 0;
    uint64_t number = 0;
    const uint8_t *string = NULL, *number_at = NULL;
    size_t string_count = 0;
    // A value is one field as Firestore writes it: a string with a one-byte length, an
    // integer, or a double, read in a straight line. Anything else (several fields, longer
    // lengths, damage) takes the loop below from the start.
    if (count >= 2) {
        uint8_t key = start[0];
        if (key == RK_KEY_STRING && start[1] < 0x80 && start[1] == count - 2) {
            kind = RK_VALUE_STRING;
            string = start + 2;
            string_count = count - 2;
            goto done;
        }
        if (key == RK_KEY_INT64) {
            wire v = {start + 1, start + count};
            if (varint(&v, &number) && v.p == v.end) {
                kind = RK_VALUE_INTEGER;
                number_at = start + 1;
                number_form = 1;
                goto done;
            }
            number = 0;
        } else if (key == RK_KEY_DOUBLE && count == 9) {
            memcpy(&number, start + 1, 8);
            kind = RK_VALUE_DOUBLE;
            number_at = start + 1;
            number_form = 2;
            goto done;
        }
    }
    while (w.p < w.end) {
        uint64_t key;
        if (!varint(&w, &key)) return 0;
        // Compares in the order of how common each is, not a switch (whose jump table is one
        // indirect branch per field).
        if (key == RK_KEY_STRING) {
            if (!bytes(&w, &string, &string_count)) return 0;
            kind = RK_VALUE_STRING;
        } else if (key == RK_KEY_INT64) {
            number_at = w.p;
            number_form = 1;
            if (!varint(&w, &number)) return 0;
            kind = RK_VALUE_INTEGER;
        } else if (key == RK_KEY_DOUBLE) {
            if (w.end - w.p < 8) return 0;
            memcpy(&number, w.p, 8);  // little-endian, as the wire format
            number_at = w.p;
            number_form = 2;
            w.p += 8;
            kind = RK_VALUE_DOUBLE;
        } else if (key == RK_KEY_BOOLEAN) {
            uint64_t ignored;
            if (!varint(&w, &ignored)) return 0;
            kind = RK_VALUE_BOOLEAN;
        } else if (!skip(&w, key)) {
            return 0;
        }
    }
done:
    if (out) {
        out->kind = kind;
        out->number = number;
        out->string = string;
        out->string_count = string_count;
        out->number_at = number_at;
        out->number_form = number_form;
    }
    return 1;
}

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t load32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

// Whether `count` (4 to 8) bytes at `name` are the literal `text` of that length: two
// overlapping 4-byte loads (the literal's fold to constants), not a call to memcmp.
static inline int same_short(const uint8_t *name, const char *text, size_t count) {
    return load32(name) == load32((const uint8_t *)text)
        && load32(name + count - 4) == load32((const uint8_t *)text + count - 4);
}

// The same for 9 bytes: one 8-byte load and the last byte.
static inline int same_nine(const uint8_t *name, const char *text) {
    return load64(name) == load64((const uint8_t *)text) && name[8] == (uint8_t)text[8];
}

// Which slot (schema.h's RK_SLOT_*) a property of this name fills: -1 for none.
static inline int slot(const uint8_t *name, size_t count) {
    switch (count) {
    case 6: return same_short(name, "rating", 6) ? RK_SLOT_RATING : -1;
    case 7: return same_short(name, "joke_id", 7) ? RK_SLOT_JOKE_ID : same_short(name, "week_id", 7) ? RK_SLOT_WEEK_ID : -1;
    case 9: return same_nine(name, "timestamp") ? RK_SLOT_TIMESTAMP : same_nine(name, "device_id") ? RK_SLOT_DEVICE_ID : -1;
    default: return -1;
    }
}

static int property(const uint8_t *start, size_t count, rk_picked_entity *out) {
    wire w = {start, start + count};
    uint64_t meaning = 0, multiple = 0;
    const uint8_t *name = NULL, *value_start = NULL;
    size_t name_count = 0, value_count = 0;
    int has_name = 0, has_value = 0;
    // Firestore's layout, read in a straight line: meaning (when set), name, multiple, value,
    // each once, every length and small number one byte. Anything else takes the loop below
    // from the start.
    const uint8_t *f = start, *end = start + count;
    if (end - f >= 2 && f[0] == RK_KEY_MEANING && f[1] < 0x80) {
        meaning = f[1];
        f += 2;
    }
    if (end - f >= 2 && f[0] == RK_KEY_NAME && f[1] < 0x80 && f[1] <= end - f - 2) {
        name = f + 2;
        name_count = f[1];
        has_name = 1;
        f += 2 + f[1];
        if (end - f >= 2 && f[0] == RK_KEY_MULTIPLE && f[1] < 0x80) {
            multiple = f[1] != 0;
            f += 2;
        }
        if (end - f >= 2 && f[0] == RK_KEY_VALUE && f[1] < 0x80 && f[1] <= end - f - 2) {
            value_start = f + 2;
            value_count = f[1];
            has_value = 1;
            f += 2 + f[1];
        }
        if (f == end) goto picked;
    }
    meaning = multiple = 0;
    name = value_start = NULL;
    name_count = value_count = 0;
    has_name = has_value = 0;
    while (w.p < w.end) {
        uint64_t key;
        if (!varint(&w, &key)) return 0;
        // Firestore writes name, multiple, value (meaning first, when set): compares in that
        // order, as in `value`.
        if (key == RK_KEY_NAME) {
            if (!bytes(&w, &name, &name_count)) return 0;
            has_name = 1;
        } else if (key == RK_KEY_MULTIPLE) {
            if (!varint(&w, &multiple)) return 0;
            multiple = multiple != 0;
        } else if (key == RK_KEY_VALUE) {
            if (!bytes(&w, &value_start, &value_count)) return 0;
            has_value = 1;
        } else if (key == RK_KEY_MEANING) {
            if (!varint(&w, &meaning)) return 0;
        } else if (!skip(&w, key)) {
            return 0;
        }
    }
picked:
    if (!has_name) return 0;
    int which = slot(name, name_count);
    if (which < 0) {
        // Not one the job reads; its value is still checked.
        return has_value ? value(value_start, value_count, NULL) : 1;
    }
    rk_picked_property *p = &out->properties[which];
    if (p->seen > 0 && !(multiple && p->multiple)) return 0;
    p->seen += 1;
    p->meaning = meaning;
    p->multiple = (uint8_t)multiple;
    if (has_value) return value(value_start, value_count, p);
    p->kind = RK_VALUE_NULL;
    return 1;
}

static int path(const uint8_t *start, size_t count, rk_picked_entity *out) {
    wire w = {start, start + count};
    while (w.p < w.end) {
        uint64_t key;
        if (!varint(&w, &key)) return 0;
        if (key != RK_KEY_ELEMENT_START) {
            if (!skip(&w, key)) return 0;
            continue;
        }
        const uint8_t *kind = NULL, *name = NULL;
        size_t kind_count = 0, name_count = 0;
        int has_kind = 0, has_name = 0, has_id = 0;
        uint64_t id = 0;
        const uint8_t *id_at = NULL;
        for (;;) {
            uint64_t inner;
            if (!varint(&w, &inner)) return 0;
            if (inner == RK_KEY_ELEMENT_END) break;
            if (inner == RK_KEY_ELEMENT_KIND) {
                if (!bytes(&w, &kind, &kind_count)) return 0;
                has_kind = 1;
            } else if (inner == RK_KEY_ELEMENT_NAME) {
                if (!bytes(&w, &name, &name_count)) return 0;
                has_name = 1;
            } else if (inner == RK_KEY_ELEMENT_ID) {
                id_at = w.p;
                if (!varint(&w, &id)) return 0;
                has_id = 1;
            } else if (!skip(&w, inner)) {
                return 0;
            }
        }
        if (!has_kind) return 0;
        out->path_length += 1;
        out->kind = kind;
        out->kind_count = kind_count;
        out->name = name;
        out->name_count = name_count;
        out->has_name = (uint8_t)has_name;
        out->id = (int64_t)id;
        out->id_at = id_at;
        out->has_id = (uint8_t)has_id;
    }
    return 1;
}

static int entity_key(const uint8_t *start, size_t count, rk_picked_entity *out) {
    wire w = {start, start + count};
    while (w.p < w.end) {
        uint64_t key;
        if (!varint(&w, &key)) return 0;
        if (key == RK_KEY_PATH) {
            const uint8_t *s;
            size_t n;
            if (!bytes(&w, &s, &n) || !path(s, n, out)) return 0;
        } else if (!skip(&w, key)) {
            return 0;
        }
    }
    return 1;
}

int rk_entity_pick(const uint8_t *record, size_t count, rk_picked_entity *out) {
    memset(out, 0, sizeof *out);
    wire w = {record, record + count};
    int has_key = 0;
    while (w.p < w.end) {
        uint64_t key;
        if (!varint(&w, &key)) return 0;
        const uint8_t *s;
        size_t n;
        if (key == RK_KEY_RAW_PROPERTY || key == RK_KEY_PROPERTY) {
            if (!bytes(&w, &s, &n) || !property(s, n, out)) return 0;
        } else if (key == RK_KEY_ENTITY_KEY) {
            if (!bytes(&w, &s, &n) || !entity_key(s, n, out)) return 0;
            has_key = 1;
        } else if (!skip(&w, key)) {
            return 0;
        }
    }
    return has_key && out->path_length > 0;
}
