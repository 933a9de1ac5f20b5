// Layouts: the walk (line_walk.c) done once per line layout instead of once per line. An
// export's lines, and the fetch hook's typed lines, mostly have the same keys in the same
// order and ids of fixed length, so they differ only in what their value strings hold and in
// their digits; matching such a line is one range check per byte, 32 bytes a step.
//
// Why a layout match may stand in for stage 1 and the walk. A layout is made from a line L0 the
// walk accepted, with L0's spans, and gives each byte of L0 up to its `\n` a range: the byte
// itself, but `0`-`9` at a digit outside strings (`1`-`9` at the first of a run of two or
// more) and ` `-0x7F, not `"` or `\`, inside a value string (one whose opening quote follows a
// colon). A line L matches when each of its bytes is in its range. Then L's first `\n` is L0's
// (no range before it holds one) and L has its quotes exactly where L0 has them, no backslash,
// and no control character or non-ASCII byte but where it equals L0: so its strings are L0's,
// with no control character in one, and its non-ASCII bytes are whole sequences of L0's (a
// sequence lies in one string, and a value string's bytes in L are ASCII): stage 1 passes L.
// Outside its strings L is L0 but for the values of digits in the same runs, and its keys are
// L0's. The walk never looks inside a string, reads keys and the bytes outside strings, and of
// a run of digits judges only whether it is one, and whether a `0` starts a run of two or more
// (a line with that is never made a layout, and L has no `0` there). So the walk accepts L as
// it accepted L0, with its spans at the same offsets.
#include <string.h>

#include "line_index.h"
#include "line_layout.h"

#if defined(__x86_64__)
#include <immintrin.h>

/// Lines no layout answered that go by after a layout is made before another may be: lines of
/// ever new layouts pay the pass that makes one on one line in 8 at most. Fewer than the
/// misses that rest layouts, so each round of tries can make one.
#define LAYOUT_WAIT (RK_PATIENCE_MISSES / 2)

/// A value string's bytes: ` ` (0x20) up to 0x7F, so `width` 0x5F (`"` and `\` are refused apart).
#define STRING_LEAST 0x20
#define STRING_WIDTH 0x5F

/// The slot holding layouts of lines with their `\n` at `newline`, or -1.
static int slot_of(const rk_line_layouts *layouts, int newline, uint32_t wanted) {
    for (int i = 0; i < RK_LAYOUTS; i++) {
        const rk_line_layout *l = &layouts->slots[i];
        if (l->length == (uint32_t)newline + 1 && l->wanted == wanted) return i;
    }
    return -1;
}

__attribute__((target("avx2")))
const uint8_t *rk_layout_scan(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                              rk_line_layouts *layouts) {
    const __m256i newline_char = _mm256_set1_epi8('\n');
    int newline = -1;
    for (int at = 0; at < RK_LAYOUT_BLOCKS * 64; at += 32) {
        uint32_t bits = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(line + at)), newline_char));
        if (bits) {
            newline = at + __builtin_ctz(bits);
            break;
        }
    }
    if (newline < 0) return NULL;
    int slot = slot_of(layouts, newline, wanted);
    if (slot < 0) return NULL;
    const rk_line_layout *l = &layouts->slots[slot];
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
    const __m256i string_width = _mm256_set1_epi8(STRING_WIDTH);
    // All ones while every byte so far is in its range and no value string holds `"` or `\`.
    __m256i good = _mm256_set1_epi8(-1);
    for (int at = 0; at <= newline; at += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(line + at));
        __m256i width = _mm256_loadu_si256((const __m256i *)(l->width + at));
        // Unsigned: v - least <= width.
        __m256i above = _mm256_sub_epi8(v, _mm256_loadu_si256((const __m256i *)(l->least + at)));
        __m256i in_range = _mm256_cmpeq_epi8(_mm256_max_epu8(above, width), width);
        // A `"` or `\` in a value string is in its range; no other byte in range is one.
        __m256i refused = _mm256_and_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
                                           _mm256_cmpeq_epi8(width, string_width));
        good = _mm256_and_si256(good, _mm256_xor_si256(in_range, refused));
    }
    if (!_mm256_testc_si256(good, _mm256_set1_epi8(-1))) return NULL;
    for (uint32_t bits = l->found; bits; bits &= bits - 1) {
        int f = __builtin_ctz(bits);
        spans[2 * f] = line + l->span_at[2 * f];
        spans[2 * f + 1] = line + l->span_at[2 * f + 1];
    }
    *found = l->found;
    return line + newline;
}

void rk_layout_remember(const uint8_t *line, int newline, uint32_t wanted, const uint8_t *const *spans,
                        uint32_t found, rk_line_layouts *layouts) {
    if (layouts->wait > 0) {
        layouts->wait--;
        return;
    }
    if (newline < 0 || newline >= RK_LAYOUT_BLOCKS * 64 || (found >> (RK_SPANS / 2)) != 0) return;
    // Made aside, so that a line that cannot have one (`1.05`) leaves the slot's layout be;
    // waited for either way, as the pass over the line is paid either way.
    layouts->wait = LAYOUT_WAIT;
    rk_line_layout made = {0};
    // Past the `\n`, to the end of its 32 bytes, any byte will do.
    memset(made.width, 0xFF, sizeof made.width);
    // The walk accepted the line, so it has no backslash: every quote opens or closes a string.
    int in_string = 0, in_value = 0;
    for (int i = 0; i <= newline; i++) {
        uint8_t c = line[i];
        made.least[i] = c;
        made.width[i] = 0;
        if (c == '"') {
            in_value = !in_string && i > 0 && line[i - 1] == ':';
            in_string = !in_string;
        } else if (in_string) {
            if (in_value) made.least[i] = STRING_LEAST, made.width[i] = STRING_WIDTH;
        } else if (is_digit(c)) {
            made.least[i] = '0', made.width[i] = 9;
            if ((i == 0 || !is_digit(line[i - 1])) && i < newline && is_digit(line[i + 1])) {
                // A line its own layout would refuse (`1.05`): the walk must judge such runs.
                if (c == '0') return;
                made.least[i] = '1', made.width[i] = 8;
            }
        }
    }
    for (uint32_t bits = found; bits; bits &= bits - 1) {
        int f = __builtin_ctz(bits);
        for (int end = 0; end < 2; end++) {
            long at = spans[2 * f + end] - line;
            if (at < 0 || at > newline) return;
            made.span_at[2 * f + end] = (uint16_t)at;
        }
    }
    made.wanted = wanted;
    made.found = found;
    made.length = (uint32_t)newline + 1;
    int slot = slot_of(layouts, newline, wanted);
    if (slot < 0) {
        slot = (int)layouts->next;
        layouts->next = (layouts->next + 1) % RK_LAYOUTS;
    }
    layouts->slots[slot] = made;
}

#endif
