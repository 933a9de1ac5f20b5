// Stage 1 of the line kernel for each instruction set: 64 bytes at a time classified into the
// bitmaps of line_index.h (AVX2: two 32-byte registers; SSSE3: four of 16), with the UTF-8
// lookup of utf8_lookup.h run only on blocks that hold non-ASCII bytes (or follow one that ended
// with some). What follows, index_block() in line_index.h and the walk in line_walk.c, is the
// same for both.
#include "line_kernel.h"
#include "line_index.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "simd_level.h"
#include "utf8_lookup.h"

#define BITS4(a, b, c, d) ((uint64_t)(uint16_t)_mm_movemask_epi8(a) | ((uint64_t)(uint16_t)_mm_movemask_epi8(b) << 16) \
    | ((uint64_t)(uint16_t)_mm_movemask_epi8(c) << 32) | ((uint64_t)(uint16_t)_mm_movemask_epi8(d) << 48))

/// A non-ASCII byte among the last three of a block may start a sequence the next block ends.
#define TAIL_MAY_CONTINUE(non_ascii) (((non_ascii) >> 61) != 0)

/// Non-zero bytes where `v` (with `prev` the 32 bytes before it) is not well-formed UTF-8.
__attribute__((target("avx2")))
static inline __m256i utf8_errors_avx2(__m256i prev, __m256i v) {
    const __m256i prev_high = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)utf8_prev_high));
    const __m256i prev_low = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)utf8_prev_low));
    const __m256i input_high = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)utf8_input_high));
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    __m256i carried = _mm256_permute2x128_si256(prev, v, 0x21);
    __m256i prev1 = _mm256_alignr_epi8(v, carried, 15);
    __m256i prev2 = _mm256_alignr_epi8(v, carried, 14);
    __m256i prev3 = _mm256_alignr_epi8(v, carried, 13);
    __m256i found = _mm256_and_si256(_mm256_and_si256(
        _mm256_shuffle_epi8(prev_high, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble)),
        _mm256_shuffle_epi8(prev_low, _mm256_and_si256(prev1, nibble))),
        _mm256_shuffle_epi8(input_high, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble)));
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80)));
    __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must_continue, found);
}

/// Bits of a 64-byte block from two 32-byte byte masks.
#define BITS2(lo, hi) ((uint64_t)(uint32_t)_mm256_movemask_epi8(lo) | ((uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32))
#define EQ2(c) BITS2(_mm256_cmpeq_epi8(lo, c), _mm256_cmpeq_epi8(hi, c))

__attribute__((target("avx2")))
static int index_avx2(const uint8_t *line, struct line_index *ix) {
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
    const __m256i control_max = _mm256_set1_epi8(0x1F), newline = _mm256_set1_epi8('\n');
    const __m256i zero = _mm256_setzero_si256();
    __m256i prev = zero;
    uint64_t in_string = 0;
    int unfinished = 0;
    for (int b = 0; b < LINE_MAX_BLOCKS; b++) {
        __m256i lo = _mm256_loadu_si256((const __m256i *)(line + 64 * b));
        __m256i hi = _mm256_loadu_si256((const __m256i *)(line + 64 * b + 32));
        struct block_bits k;
        k.quote = EQ2(quote);
        __m256i lo_newline = _mm256_cmpeq_epi8(lo, newline), hi_newline = _mm256_cmpeq_epi8(hi, newline);
        k.newline = BITS2(lo_newline, hi_newline);
        // Backslashes, control characters but `\n`, and non-ASCII bytes (bit 7 of the byte
        // itself) in one mask, looked at closer only when it is not empty.
        __m256i lo_control = _mm256_cmpeq_epi8(_mm256_min_epu8(lo, control_max), lo);
        __m256i hi_control = _mm256_cmpeq_epi8(_mm256_min_epu8(hi, control_max), hi);
        __m256i lo_backslash = _mm256_cmpeq_epi8(lo, backslash), hi_backslash = _mm256_cmpeq_epi8(hi, backslash);
        k.rare = BITS2(_mm256_or_si256(_mm256_or_si256(_mm256_andnot_si256(lo_newline, lo_control), lo_backslash), lo),
                       _mm256_or_si256(_mm256_or_si256(_mm256_andnot_si256(hi_newline, hi_control), hi_backslash), hi));
        int block_unfinished = TAIL_MAY_CONTINUE(k.rare);
        if (k.rare || unfinished) {
            k.rare = ~(uint64_t)0;
            k.backslash = BITS2(lo_backslash, hi_backslash);
            k.control = BITS2(lo_control, hi_control);
            k.utf8_error = 0;
            uint64_t non_ascii = BITS2(lo, hi);
            block_unfinished = TAIL_MAY_CONTINUE(non_ascii);
            if (non_ascii || unfinished) {
                k.utf8_error = ~BITS2(_mm256_cmpeq_epi8(utf8_errors_avx2(prev, lo), zero),
                                      _mm256_cmpeq_epi8(utf8_errors_avx2(lo, hi), zero));
            }
        }
        unfinished = block_unfinished;
        prev = hi;
        int done = index_block(ix, b, &k, &in_string);
        if (done) return done;
    }
    return -1;
}

__attribute__((target("ssse3")))
static inline __m128i utf8_errors_ssse3(__m128i prev, __m128i v) {
    const __m128i prev_high = _mm_loadu_si128((const __m128i *)utf8_prev_high);
    const __m128i prev_low = _mm_loadu_si128((const __m128i *)utf8_prev_low);
    const __m128i input_high = _mm_loadu_si128((const __m128i *)utf8_input_high);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    __m128i prev1 = _mm_alignr_epi8(v, prev, 15);
    __m128i prev2 = _mm_alignr_epi8(v, prev, 14);
    __m128i prev3 = _mm_alignr_epi8(v, prev, 13);
    __m128i found = _mm_and_si128(_mm_and_si128(
        _mm_shuffle_epi8(prev_high, _mm_and_si128(_mm_srli_epi16(prev1, 4), nibble)),
        _mm_shuffle_epi8(prev_low, _mm_and_si128(prev1, nibble))),
        _mm_shuffle_epi8(input_high, _mm_and_si128(_mm_srli_epi16(v, 4), nibble)));
    __m128i third = _mm_subs_epu8(prev2, _mm_set1_epi8((char)(0xE0 - 0x80)));
    __m128i fourth = _mm_subs_epu8(prev3, _mm_set1_epi8((char)(0xF0 - 0x80)));
    __m128i must_continue = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
    return _mm_xor_si128(must_continue, found);
}

/// The SSSE3 kernel computes every mask of every block: it is the fallback, kept simple.
__attribute__((target("ssse3")))
static int index_ssse3(const uint8_t *line, struct line_index *ix) {
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i control_max = _mm_set1_epi8(0x1F), newline = _mm_set1_epi8('\n');
    const __m128i zero = _mm_setzero_si128();
    __m128i prev = zero;
    uint64_t in_string = 0;
    int unfinished = 0;
    for (int b = 0; b < LINE_MAX_BLOCKS; b++) {
        const uint8_t *p = line + 64 * b;
        __m128i v0 = _mm_loadu_si128((const __m128i *)p), v1 = _mm_loadu_si128((const __m128i *)(p + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(p + 32)), v3 = _mm_loadu_si128((const __m128i *)(p + 48));
        struct block_bits k;
#define EQ4(c) BITS4(_mm_cmpeq_epi8(v0, c), _mm_cmpeq_epi8(v1, c), _mm_cmpeq_epi8(v2, c), _mm_cmpeq_epi8(v3, c))
#define CONTROL(v) _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v)
        k.quote = EQ4(quote);
        k.newline = EQ4(newline);
        k.backslash = EQ4(backslash);
        k.control = BITS4(CONTROL(v0), CONTROL(v1), CONTROL(v2), CONTROL(v3));
#undef EQ4
#undef CONTROL
        uint64_t non_ascii = BITS4(v0, v1, v2, v3);
        k.rare = ~(uint64_t)0;
        k.utf8_error = 0;
        if (non_ascii || unfinished) {
            k.utf8_error = ~BITS4(_mm_cmpeq_epi8(utf8_errors_ssse3(prev, v0), zero),
                                  _mm_cmpeq_epi8(utf8_errors_ssse3(v0, v1), zero),
                                  _mm_cmpeq_epi8(utf8_errors_ssse3(v1, v2), zero),
                                  _mm_cmpeq_epi8(utf8_errors_ssse3(v2, v3), zero));
        }
        unfinished = TAIL_MAY_CONTINUE(non_ascii);
        prev = v3;
        int done = index_block(ix, b, &k, &in_string);
        if (done) return done;
    }
    return -1;
}

typedef int (*index_fn)(const uint8_t *, struct line_index *);

static index_fn index_for(int level) { return level == 2 ? index_avx2 : level == 1 ? index_ssse3 : NULL; }

static index_fn chosen_index;
static int chosen_level;

/// Chosen before main runs, so no thread ever sees it half done.
__attribute__((constructor))
static void choose_line_kernel(void) {
    chosen_level = rk_simd_level_of_cpu();
    chosen_index = index_for(chosen_level);
}

int rk_line_kernel_level(void) { return chosen_level; }

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level) {
    // A level asked for runs only where the CPU has it (AVX2 implies SSSE3).
    index_fn index = level == 0 ? chosen_index : level <= chosen_level ? index_for(level) : NULL;
    if (index == NULL) return NULL;
    struct line_index ix;
    if (index(line, &ix) != 1) return NULL;
    return rk_walk_line(line, &ix, wanted, spans, found);
}

#else

int rk_line_kernel_level(void) { return 0; }

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level) {
    (void)line; (void)wanted; (void)spans; (void)found; (void)level;
    return 0;
}

#endif
