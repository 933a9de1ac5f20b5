// Stage 2 of the line kernel: JSON's grammar over the bytes outside strings, which a compact
// export line has few of, jumping over each string to its closing quote in stage 1's bitmap.
// Each rule is JSONLineScanner's, but where the scanner words a reason, the walk only declines:
// it accepts a line only when the scanner would accept it as an object with the same spans, and
// leaves every other line to the scanner, so reasons and offsets stay the scanner's own.
#include <string.h>
#include "line_index.h"
#include "schema.h"

/// Deeper nesting is left to the scalar scanner (which allows 1000 levels).
#define WALK_MAX_DEPTH 64

/// JSON whitespace inside a line, as JSONLineScanner.skipSpace has it (`\n` ends the line).
static inline const uint8_t *skip_space(const uint8_t *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    return p;
}

/// How many of the 8 bytes of `w` (little-endian, from its first byte) are digits before the
/// first one that is not.
static inline int leading_digits(uint64_t w) {
    const uint64_t ones = 0x0101010101010101, high = 0x8080808080808080;
    // Bit 7 of a byte set when it is below '0' (the subtraction borrows) or above '9' (adding 0x46 carries into bit 7).
    uint64_t below = w - ones * '0';
    uint64_t above = w + ones * (0x7F - '9');
    uint64_t not_digit = (below | above | w) & high;
    // A borrow can only mark bytes above a true mark falsely, so the lowest mark is exact.
    return not_digit ? __builtin_ctzll(not_digit) >> 3 : 8;
}

/// The first byte after the run of digits at `p` (8 bytes a step: the run ends at the line's
/// `\n` at the latest, and 64 readable bytes follow it).
static inline const uint8_t *skip_digits(const uint8_t *p) {
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        int n = leading_digits(w);
        p += n;
        if (n < 8) return p;
    }
}

/// The end of the number at `p`, per RFC 8259 as JSONLineScanner.skipNumber reads it; NULL
/// where the scanner would stop with a reason (`-x`, `01`, `1.`, `1e`). What follows the
/// number is the caller's to check.
static inline const uint8_t *number_end(const uint8_t *p) {
    if (*p == '-') p++;
    if (*p == '0') {
        p++;
        if (is_digit(*p)) return NULL;
    } else if (is_digit(*p)) {
        p = skip_digits(p + 1);
    } else {
        return NULL;
    }
    if (*p == '.') {
        p++;
        if (!is_digit(*p)) return NULL;
        p = skip_digits(p + 1);
    }
    if ((*p | 0x20) == 'e') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!is_digit(*p)) return NULL;
        p = skip_digits(p + 1);
    }
    return p;
}

/// The first 8 bytes of a key as one little-endian word (the name's bytes, zeros after).
#define WORD(a, b, c, d, e, f, g, h) ((uint64_t)(a) | (uint64_t)(b) << 8 | (uint64_t)(c) << 16 | (uint64_t)(d) << 24 \
    | (uint64_t)(e) << 32 | (uint64_t)(f) << 40 | (uint64_t)(g) << 48 | (uint64_t)(h) << 56)

/// The length of each top-level key the walk reads, by field number.
static const uint8_t key_length[RK_FIELD_FIELDS + 1] = {
    [RK_FIELD_JOKE_ID] = 7, [RK_FIELD_RATING] = 6, [RK_FIELD_TIMESTAMP] = 9, [RK_FIELD_WEEK_ID] = 7,
    [RK_FIELD_DEVICE_ID] = 9, [RK_FIELD_EVENT_ID] = 2, [RK_FIELD_NAME] = 4, [RK_FIELD_FIELDS] = 6,
};

/// The field a top-level key names, or 0. Reads 9 bytes from `key`: at least its closing
/// quote, a colon, a value, a `}` and the `\n` follow it.
static inline uint32_t field_named(const uint8_t *key, long n) {
    uint64_t w;
    memcpy(&w, key, 8);
    switch (n) {
    case 2: return (w & 0xFFFF) == WORD('i', 'd', 0, 0, 0, 0, 0, 0) ? RK_FIELD_EVENT_ID : 0;
    case 4: return (w & 0xFFFFFFFF) == WORD('n', 'a', 'm', 'e', 0, 0, 0, 0) ? RK_FIELD_NAME : 0;
    case 6:
        w &= 0xFFFFFFFFFFFF;
        if (w == WORD('r', 'a', 't', 'i', 'n', 'g', 0, 0)) return RK_FIELD_RATING;
        return w == WORD('f', 'i', 'e', 'l', 'd', 's', 0, 0) ? RK_FIELD_FIELDS : 0;
    case 7:
        w &= 0xFFFFFFFFFFFFFF;
        if (w == WORD('j', 'o', 'k', 'e', '_', 'i', 'd', 0)) return RK_FIELD_JOKE_ID;
        return w == WORD('w', 'e', 'e', 'k', '_', 'i', 'd', 0) ? RK_FIELD_WEEK_ID : 0;
    case 9:
        if (w == WORD('d', 'e', 'v', 'i', 'c', 'e', '_', 'i')) return key[8] == 'd' ? RK_FIELD_DEVICE_ID : 0;
        return w == WORD('t', 'i', 'm', 'e', 's', 't', 'a', 'm') && key[8] == 'p' ? RK_FIELD_TIMESTAMP : 0;
    default: return 0;
    }
}

/// The closing quote of the string that opens at `open`. Stage 1 declined a line that ends
/// inside a string, so there is one before the `\n`.
static inline const uint8_t *string_end(const uint8_t *line, const struct line_index *ix, const uint8_t *open) {
    long from = open - line;
    long b = from >> 6;
    uint64_t m = ix->closes[b] & (~(uint64_t)1 << (from & 63));
    while (m == 0) m = ix->closes[++b];
    return line + 64 * b + __builtin_ctzll(m);
}

const uint8_t *rk_walk_line(const uint8_t *line, const struct line_index *ix, uint32_t wanted,
                            const uint8_t **spans, uint32_t *found) {
    const uint8_t *p = skip_space(line);
    if (*p != '{') return NULL;
    // Bit n set when a wanted field's key is n bytes long; the same for the keys of `fields`
    // whose typed values are wanted.
    uint32_t lengths = 0, typed_lengths = 0;
    for (uint32_t field = 1; field <= RK_FIELD_FIELDS; field++) {
        if ((wanted >> field) & 1) lengths |= (uint32_t)1 << key_length[field];
        if ((RK_FIELDS_WITH_TYPED_VALUE >> field) & 1 && (wanted >> (field + RK_FIELD_TYPED_OFFSET)) & 1)
            typed_lengths |= (uint32_t)1 << key_length[field];
    }
    // Bit d set when the container at depth d is an array.
    uint64_t arrays = 0;
    int depth = 1;
    // The wanted field whose value comes next at depth 1, and where that value started; the
    // same for a typed value at depth 2, when the object there is the top-level `fields`.
    uint32_t pending = 0, typed_pending = 0;
    const uint8_t *value_start = NULL, *typed_start = NULL;
    int in_fields = 0;
    uint32_t seen = 0;
    p = skip_space(p + 1);
    if (*p == '}') goto close;

    for (;;) {
        // A member: `"key" : value` (p at the key's quote).
        if (*p != '"') return NULL;
        {
            const uint8_t *end = string_end(line, ix, p);
            if (depth == 1) {
                // Only keys as long as a wanted one are read (a plain run wants 6 and 7 bytes).
                long n = end - p - 1;
                uint32_t field = n < 16 && (lengths >> n) & 1 ? field_named(p + 1, n) : 0;
                pending = (wanted >> field) & 1 ? field : 0;
                // The last `fields` is the document's: typed values found before it are not.
                if (pending == RK_FIELD_FIELDS) seen &= ~(RK_FIELDS_WITH_TYPED_VALUE << RK_FIELD_TYPED_OFFSET);
            } else if (depth == 2 && in_fields) {
                long n = end - p - 1;
                uint32_t field = n < 16 && (typed_lengths >> n) & 1 ? field_named(p + 1, n) : 0;
                field = (RK_FIELDS_WITH_TYPED_VALUE >> field) & 1 ? field + RK_FIELD_TYPED_OFFSET : 0;
                typed_pending = (wanted >> field) & 1 ? field : 0;
            }
            // Compact lines (what exports write) take the first branch only.
            p = end + 1;
            if (*p != ':') {
                p = skip_space(p);
                if (*p != ':') return NULL;
            }
            p++;
            if (*p <= ' ') p = skip_space(p);
        }
    value:
        // p at the first byte of a value; the kinds in the order exports use them most.
        if (depth == 1) value_start = p;
        else if (depth == 2) typed_start = p;
        if (*p == '"') {
            p = string_end(line, ix, p) + 1;
        } else if (*p == '-' || is_digit(*p)) {
            p = number_end(p);
            if (p == NULL) return NULL;
        } else if (*p == '{' || *p == '[') {
            if (depth == WALK_MAX_DEPTH - 1) return NULL;
            depth++;
            if (depth == 2) in_fields = *p == '{' && pending == RK_FIELD_FIELDS;
            if (*p == '[') {
                arrays |= (uint64_t)1 << depth;
                p = skip_space(p + 1);
                if (*p == ']') goto close;
                goto value;
            }
            arrays &= ~((uint64_t)1 << depth);
            p = skip_space(p + 1);
            if (*p == '}') goto close;
            continue;
        } else if (memcmp(p, "true", 4) == 0 || memcmp(p, "null", 4) == 0) {
            p += 4;
        } else if (memcmp(p, "false", 5) == 0) {
            p += 5;
        } else {
            return NULL;
        }
    after_value:
        if (depth == 1 && pending) {
            spans[2 * pending] = value_start;
            spans[2 * pending + 1] = p;
            seen |= (uint32_t)1 << pending;
            pending = 0;
        } else if (depth == 2 && typed_pending) {
            spans[2 * typed_pending] = typed_start;
            spans[2 * typed_pending + 1] = p;
            seen |= (uint32_t)1 << typed_pending;
            typed_pending = 0;
        }
        if (*p <= ' ') p = skip_space(p);
        if (*p == ',') {
            p++;
            if (*p <= ' ') p = skip_space(p);
            if (arrays & ((uint64_t)1 << depth)) goto value;
            continue;
        }
        if (*p != (arrays & ((uint64_t)1 << depth) ? ']' : '}')) return NULL;
    close:
        // p at the `}` or `]` that closes the container at `depth`.
        p++;
        depth--;
        if (depth > 0) goto after_value;
        p = skip_space(p);
        if (p != line + ix->newline) return NULL;
        *found = seen;
        return p;
    }
}
