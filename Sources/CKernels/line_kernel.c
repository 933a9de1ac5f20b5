// The line kernel's entry and its stage 1: 64 bytes at a time (two AVX2 registers) classified
// into the bitmaps of line_index.h, with the UTF-8 check of utf8_lookup.h run only on blocks
// that hold non-ASCII bytes (or follow one that ended with some); index_block() in
// line_index.h and the walk in line_walk.c follow, with layouts (line_layout.c) in front of
// them. Every level above portable runs it.
#include "line_kernel.h"
#include "cpu_level.h"
#include "line_index.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "utf8_lookup.h"

/// A non-ASCII byte among the last three of a block may start a sequence the next block ends.
#define TAIL_MAY_CONTINUE(non_ascii) (((non_ascii) >> 61) != 0)

/// Bits of a 64-byte block from two 32-byte byte masks.
#define BITS2(lo, hi) ((uint64_t)(uint32_t)_mm256_movemask_epi8(lo) | ((uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32))

/// The bytes of a 64-byte block (`lo`, `hi`; `prev` the 32 before) where UTF-8 is not well formed.
__attribute__((target("avx2")))
static inline uint64_t utf8_error_bits(__m256i prev, __m256i lo, __m256i hi) {
    const __m256i zero = _mm256_setzero_si256();
    return ~BITS2(_mm256_cmpeq_epi8(utf8_errors_avx2(prev, lo), zero), _mm256_cmpeq_epi8(utf8_errors_avx2(lo, hi), zero));
}
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
            if (non_ascii || unfinished) k.utf8_error = utf8_error_bits(prev, lo, hi);
        }
        unfinished = block_unfinished;
        prev = hi;
        int done = index_block(ix, b, &k, &in_string);
        if (done) return done;
    }
    return -1;
}

/// Stage 1, then the walk: every line no layout answered. Kept out of `rk_scan_line` so that a
/// layout's answer pays no stack for the index.
__attribute__((noinline))
static const uint8_t *scan_walked(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found) {
    struct line_index ix;
    if (index_avx2(line, &ix) != 1) return NULL;
    return rk_walk_line(line, &ix, wanted, spans, found);
}

/// A line laid out as one the walk accepted before is answered by its layout (line_layout.c);
/// any other line by stage 1 and the walk, and when the walk accepts it, its layout is made for
/// the lines after it.
const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_layouts *layouts) {
    if (level == 0) level = rk_cpu_level();
    else if (level > rk_cpu_supported()) return NULL;
    if (level < RK_CPU_AVX2) return NULL;
    int trying = layouts != NULL && !rk_patience_resting(&layouts->patience);
    if (trying) {
        const uint8_t *end = rk_layout_scan(line, wanted, spans, found, layouts);
        if (end != NULL) {
            layouts->hits++;
            rk_patience_hit(&layouts->patience);
            return end;
        }
        rk_patience_miss(&layouts->patience);
    }
    const uint8_t *end = scan_walked(line, wanted, spans, found);
    if (trying && end != NULL) rk_layout_remember(line, (int)(end - line), wanted, spans, *found, layouts);
    return end;
}

#else

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_layouts *layouts) {
    (void)line; (void)wanted; (void)spans; (void)found; (void)level; (void)layouts;
    return 0;
}

#endif
