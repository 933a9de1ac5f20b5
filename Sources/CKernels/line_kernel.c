// Stage 1 of the line kernel for each instruction set: 64 bytes at a time classified into the
// bitmaps of line_index.h (AVX2: two registers of 32 bytes; SSSE3: four of 16), with the UTF-8
// check of utf8_lookup.h run only on blocks that hold non-ASCII bytes (or follow one that
// ended with some). What follows, index_block() in line_index.h and the walk in line_walk.c,
// is the same for both. The AVX-512 level adds layouts (line_layout.c) in front of them.
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

/// AVX-512: a line laid out as one the walk accepted before is answered by its layout
/// (line_layout.c); any other line by AVX2's index and the walk, and when the walk accepts
/// it, its layout is made for the lines after it.
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,bmi,popcnt")))
static const uint8_t *scan_avx512(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                                  rk_line_layouts *layouts) {
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
    struct line_index ix;
    if (index_avx2(line, &ix) != 1) return NULL;
    const uint8_t *end = rk_walk_line(line, &ix, wanted, spans, found);
    if (trying && end != NULL) rk_layout_remember(line, (int)(end - line), wanted, spans, *found, layouts);
    return end;
}

static int avx512_usable(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi2")
        && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
}

typedef int (*index_fn)(const uint8_t *, struct line_index *);

static index_fn index_for(int level) { return level == 2 ? index_avx2 : level == 1 ? index_ssse3 : NULL; }

static int chosen_level;

/// Chosen before main runs, so no thread ever sees it half done.
__attribute__((constructor))
static void choose_line_kernel(void) {
    chosen_level = rk_simd_level_of_cpu();
    if (chosen_level == 2 && avx512_usable()) chosen_level = 3;
}

int rk_line_kernel_level(void) { return chosen_level; }

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_layouts *layouts) {
    // A level asked for runs only where the CPU has it (each implies the ones below).
    if (level == 0) level = chosen_level;
    if (level > chosen_level) return NULL;
    if (level == 3) return scan_avx512(line, wanted, spans, found, layouts);
    index_fn index = index_for(level);
    if (index == NULL) return NULL;
    struct line_index ix;
    if (index(line, &ix) != 1) return NULL;
    return rk_walk_line(line, &ix, wanted, spans, found);
}

#else

int rk_line_kernel_level(void) { return 0; }

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_layouts *layouts) {
    (void)line; (void)wanted; (void)spans; (void)found; (void)level; (void)layouts;
    return 0;
}

#endif
