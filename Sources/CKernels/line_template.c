// Templates: the walk (line_walk.c) done once per line shape instead of once per line. An
// export's lines differ in their strings and numbers, hardly ever in their shape, and the walk's
// branches, one or more per byte outside the strings, were half of a plain run's time.
//
// Why a skeleton match may stand in for the walk. The skeleton (line_index.h, written by the
// AVX-512 stage 1) keeps every byte outside strings but the digits after the first of a run
// (that one as `0`), every key and every string not right after a colon in full, and of a
// string right after a colon only its opening quote. It can be read back in one way only: a
// quote after a colon is a cut string and what follows is what followed its closing quote
// (the colon is never cut, so a colon before a quote in the skeleton was right before it in
// the line); any other quote opens a string that runs to the next quote (stage 1 declined every
// line with a backslash, so a string holds no quote); a `0` outside strings is a whole run of
// digits. So two lines with one skeleton have the same tokens outside their strings, apart from
// the strings cut and the digits of each run. The walk never looks inside a string (stage 1
// checked those), and of a run of digits it judges only whether it starts with a 0 followed by
// more digits, which stage 1 reports as `leading_zero` (such lines go to the walk). So the walk
// accepts both lines or neither, and finds the same fields at the same places in the skeleton:
// each span starts and ends at a byte the skeleton keeps (a value's first byte, the byte after
// it), checked when a template is made.
#include "line_index.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TEMPLATE_TARGET "avx512f,avx512bw,avx512vl,bmi,bmi2,popcnt"

__attribute__((target(TEMPLATE_TARGET)))
static int same_skeleton(const uint8_t *a, const uint8_t *b, int length) {
    for (int i = 0; i < length; i += 64) {
        __mmask64 m = length - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (length - i)) - 1;
        if (_mm512_mask_cmpneq_epi8_mask(m, _mm512_maskz_loadu_epi8(m, a + i), _mm512_maskz_loadu_epi8(m, b + i)))
            return 0;
    }
    return 1;
}

/// Byte offset in the line of skeleton byte `k` (which exists).
__attribute__((target(TEMPLATE_TARGET)))
static int line_offset(const struct line_skeleton *sk, unsigned k) {
    for (int b = 0;; b++) {
        unsigned in_block = (unsigned)__builtin_popcountll(sk->kept[b]);
        if (k < in_block) return 64 * b + (int)__builtin_ctzll(_pdep_u64((uint64_t)1 << k, sk->kept[b]));
        k -= in_block;
    }
}

/// Skeleton index of the line's byte at `offset`, or -1 when the skeleton leaves that byte out.
__attribute__((target(TEMPLATE_TARGET)))
static int skeleton_index(const struct line_skeleton *sk, long offset) {
    long b = offset >> 6;
    uint64_t bit = (uint64_t)1 << (offset & 63);
    if (!(sk->kept[b] & bit)) return -1;
    int k = __builtin_popcountll(sk->kept[b] & (bit - 1));
    for (long i = 0; i < b; i++) k += __builtin_popcountll(sk->kept[i]);
    return k;
}

__attribute__((target(TEMPLATE_TARGET)))
static void remember(const uint8_t *line, const struct line_skeleton *sk, uint32_t wanted, const uint8_t **spans,
                     uint32_t found, rk_line_templates *templates) {
    if (sk->length > RK_TEMPLATE_MAX || sk->leading_zero) return;
    uint16_t bounds[RK_SPANS];
    uint8_t span_of[RK_SPANS];
    uint32_t count = 0;
    for (uint32_t bits = found; bits; bits &= bits - 1) {
        int f = __builtin_ctz(bits);
        for (int end = 0; end < 2; end++) {
            int k = skeleton_index(sk, spans[2 * f + end] - line);
            if (k < 0) return;
            // Insertion sort: the kernel places them in the order the line has them.
            uint32_t i = count++;
            while (i > 0 && bounds[i - 1] > k) {
                bounds[i] = bounds[i - 1];
                span_of[i] = span_of[i - 1];
                i--;
            }
            bounds[i] = (uint16_t)k;
            span_of[i] = (uint8_t)(2 * f + end);
        }
    }
    uint32_t slot = templates->next;
    rk_line_template *t = &templates->slots[slot];
    __builtin_memcpy(t->skeleton, sk->bytes, (size_t)sk->length);
    __builtin_memcpy(t->bounds, bounds, sizeof bounds);
    __builtin_memcpy(t->span_of, span_of, sizeof span_of);
    t->bound_count = count;
    t->length = (uint32_t)sk->length;
    t->wanted = wanted;
    t->found = found;
    templates->last = slot;
    templates->next = (slot + 1) % RK_TEMPLATES;
}

__attribute__((target(TEMPLATE_TARGET)))
const uint8_t *rk_walk_line_templated(const uint8_t *line, const struct line_index *ix, const struct line_skeleton *sk,
                                      uint32_t wanted, const uint8_t **spans, uint32_t *found,
                                      rk_line_templates *templates) {
    if (!sk->leading_zero) {
        for (uint32_t slot = 0; slot < RK_TEMPLATES; slot++) {
            const rk_line_template *t = &templates->slots[slot];
            // An empty slot (length 0) must not match the empty line's empty skeleton.
            if (t->length == 0 || t->length != (uint32_t)sk->length || t->wanted != wanted
                || !same_skeleton(t->skeleton, sk->bytes, sk->length))
                continue;
            for (uint32_t i = 0; i < t->bound_count; i++) spans[t->span_of[i]] = line + line_offset(sk, t->bounds[i]);
            *found = t->found;
            templates->last = slot;
            templates->hits++;
            return line + ix->newline;
        }
    }
    const uint8_t *end = rk_walk_line(line, ix, wanted, spans, found);
    if (end != NULL) remember(line, sk, wanted, spans, *found, templates);
    return end;
}

#endif
