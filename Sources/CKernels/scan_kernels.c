// The string-skipping kernels behind JSONLineScanner: classify a block of bytes at a time
// (quote, backslash, control character, non-ASCII) and validate the UTF-8 in it (utf8_lookup.h).
// Written for our contract: the scalar step in Swift stays the only place that decides
// anything about a byte it stops at, so every message and offset is the scalar path's by
// construction.
#include "scan_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "cpu_level.h"
#include "utf8_lookup.h"

/// Where the scalar step takes over at block `q` when the kernel cannot vouch for it: `q`
/// itself, or the lead byte of a sequence the block before left unfinished (that block was
/// validated whole, so such a lead is at most 3 bytes back and everything before it is good).
static inline const uint8_t *resume_point(const uint8_t *start, const uint8_t *q) {
    if (q == start) return q;
    if (q[-1] >= 0xC0) return q - 1;
    if (q - 2 >= start && q[-2] >= 0xE0) return q - 2;
    if (q - 3 >= start && q[-3] >= 0xF0) return q - 3;
    return q;
}

/// The block before ended inside a sequence.
static inline int ends_unfinished(const uint8_t *start, const uint8_t *q) {
    return q != start && resume_point(start, q) != q;
}

__attribute__((target("avx2")))
static const uint8_t *skip_avx2(const uint8_t *start) {
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i backslash = _mm256_set1_epi8('\\');
    const __m256i control_max = _mm256_set1_epi8(0x1F);
    __m256i prev = _mm256_setzero_si256();
    int prev_non_ascii = 0;
    const uint8_t *q = start;
    for (;;) {
        __m256i v = _mm256_loadu_si256((const __m256i *)q);
        uint32_t special = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
            _mm256_cmpeq_epi8(_mm256_min_epu8(v, control_max), v)));
        uint32_t non_ascii = (uint32_t)_mm256_movemask_epi8(v);
        if (non_ascii == 0 && !(prev_non_ascii && ends_unfinished(start, q))) {
            if (special) return q + __builtin_ctz(special);
            prev = v;
            prev_non_ascii = 0;
            q += 32;
            continue;
        }
        __m256i error = utf8_errors_avx2(prev, v);
        uint32_t bad = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(error, _mm256_setzero_si256()));
        if (special) {
            uint32_t upto = special & -special; // the first special byte
            if ((bad & (upto | (upto - 1))) == 0) return q + __builtin_ctz(special);
            return resume_point(start, q);
        }
        if (bad) return resume_point(start, q);
        prev = v;
        prev_non_ascii = 1;
        q += 32;
    }
}

// Chosen by what the CPU has, not by the process's level: a scanner uses this kernel only when
// it runs the SIMD kernels (JSONLineScanner's `simd`, off at portable), and a test that asks
// for them gets them wherever the CPU has them.
const uint8_t *rk_skip_string_plain(const uint8_t *p) { return rk_cpu_supported() >= RK_CPU_AVX2 ? skip_avx2(p) : p; }

#else

const uint8_t *rk_skip_string_plain(const uint8_t *p) { return p; }

#endif
