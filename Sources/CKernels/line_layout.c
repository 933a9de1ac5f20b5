// Layouts: the walk (line_walk.c) done once per line layout instead of once per line. An
// export's lines, and the fetch hook's typed lines, mostly have the same keys in the same
// order and ids of fixed length, so they differ only in what their value strings hold and in
// their digits; matching such a line takes a few compares per 64 bytes.
//
// Why a layout match may stand in for stage 1 and the walk. A layout is made from a line L0 the
// walk accepted, with L0's spans. A line L of the same length matches it when L has its quotes
// exactly where L0 has them, the same bytes as L0 everywhere but inside value strings (strings
// whose opening quote follows a colon) and at digits outside strings, a digit wherever L0 has
// such a digit, no `0` where L0 has the first digit of a run of two or more, no backslash or
// non-ASCII byte, and no control character before its `\n` but where it equals L0 (which, L0
// having passed stage 1, is outside strings). Then stage 1 passes L: no backslash, ASCII only,
// and its strings are L0's (the same quotes, no backslash to move a boundary), so no control
// character sits in one. Outside its strings L is L0 but for the values of digits in the same
// runs, and its keys are L0's. The walk never looks inside a string, reads keys and the bytes
// outside strings, and of a run of digits judges only whether it is one, and whether a `0`
// starts a run of two or more (a line with that is never made a layout, and L has no `0`
// there). So the walk accepts L as it accepted L0, with its spans at the same offsets.
#include <string.h>

#include "line_index.h"
#include "line_layout.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define LAYOUT_TARGET "avx512f,avx512bw,avx512vl,bmi,popcnt"

/// Lines no layout answered that go by after a layout is made before another may be: lines of
/// ever new layouts pay the pass that makes one on one line in 8 at most. Fewer than the
/// misses that rest layouts, so each round of tries can make one.
#define LAYOUT_WAIT (RK_PATIENCE_MISSES / 2)

/// The slot holding layouts of lines with their `\n` at `newline`, or -1.
static int slot_of(const rk_line_layouts *layouts, int newline, uint32_t wanted) {
    for (int i = 0; i < RK_LAYOUTS; i++) {
        const rk_line_layout *l = &layouts->slots[i];
        if (l->length == (uint32_t)newline + 1 && l->wanted == wanted) return i;
    }
    return -1;
}

__attribute__((target(LAYOUT_TARGET)))
const uint8_t *rk_layout_scan(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                              rk_line_layouts *layouts) {
    const __m512i newline_char = _mm512_set1_epi8('\n');
    int newline = -1;
    for (int b = 0; b < RK_LAYOUT_BLOCKS; b++) {
        uint64_t bits = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512((const void *)(line + 64 * b)), newline_char);
        if (bits) {
            newline = 64 * b + __builtin_ctzll(bits);
            break;
        }
    }
    if (newline < 0) return NULL;
    int slot = slot_of(layouts, newline, wanted);
    if (slot < 0) return NULL;
    const rk_line_layout *l = &layouts->slots[slot];
    const __m512i quote = _mm512_set1_epi8('"'), backslash = _mm512_set1_epi8('\\');
    const __m512i control_max = _mm512_set1_epi8(0x1F), zero_char = _mm512_set1_epi8('0'), ten = _mm512_set1_epi8(10);
    int last = newline >> 6;
    for (int b = 0; b <= last; b++) {
        __m512i v = _mm512_loadu_si512((const void *)(line + 64 * b));
        // The block's bytes up to its `\n` (the whole block before the last), with and without it.
        uint64_t through = b < last ? ~(uint64_t)0 : (2ULL << (newline & 63)) - 1;
        uint64_t before = b < last ? ~(uint64_t)0 : (1ULL << (newline & 63)) - 1;
        uint64_t quotes = _mm512_cmpeq_epi8_mask(v, quote) & through;
        uint64_t equal = _mm512_cmpeq_epi8_mask(v, _mm512_loadu_si512((const void *)(l->bytes + 64 * b)));
        uint64_t digits = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, zero_char), ten);
        uint64_t zeros = _mm512_cmpeq_epi8_mask(v, zero_char);
        // A control character where the layout keeps the byte is the layout's own whitespace
        // (`\r`, a tab) outside strings; anywhere else it would sit in a string.
        uint64_t rare = (_mm512_cmpeq_epi8_mask(v, backslash) | _mm512_movepi8_mask(v)
                         | (_mm512_cmple_epu8_mask(v, control_max) & ~l->same[b])) & before;
        if ((quotes ^ l->quotes[b]) | (l->same[b] & ~equal) | (l->digits[b] & ~digits) | (l->lead[b] & zeros) | rare)
            return NULL;
    }
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
    // The walk accepted the line, so it has no backslash: every quote opens or closes a string.
    int in_string = 0, in_value = 0;
    for (int i = 0; i <= newline; i++) {
        uint8_t c = line[i];
        int b = i >> 6;
        uint64_t bit = 1ULL << (i & 63);
        if (c == '"') {
            made.quotes[b] |= bit;
            made.same[b] |= bit;
            in_value = !in_string && i > 0 && line[i - 1] == ':';
            in_string = !in_string;
        } else if (in_string) {
            if (!in_value) made.same[b] |= bit;
        } else if (is_digit(c)) {
            made.digits[b] |= bit;
            if ((i == 0 || !is_digit(line[i - 1])) && i < newline && is_digit(line[i + 1])) {
                // A line its own layout would refuse (`1.05`): the walk must judge such runs.
                if (c == '0') return;
                made.lead[b] |= bit;
            }
        } else {
            made.same[b] |= bit;
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
    memcpy(made.bytes, line, (size_t)newline + 1);
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
