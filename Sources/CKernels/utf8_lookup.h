// The one UTF-8 check of the C kernels (the string kernel, scan_kernels.c, and the line
// kernel, line_kernel.c): Keiser and Lemire's method ("Validating UTF-8 in less than one
// instruction per byte", 2021), as simdjson's stage 1 uses it. Three nibble-indexed tables
// flag each byte pair that cannot occur in well-formed UTF-8 (Unicode table 3-7); the second
// and third continuations of a sequence are found from the bytes two and three back. Internal
// to CKernels (not in include/); any kernel here that validates UTF-8 includes this.
#ifndef RANKINGS_UTF8_LOOKUP_H
#define RANKINGS_UTF8_LOOKUP_H

#include <stdint.h>

// One bit per kind of UTF-8 error a byte pair can show (prev1 = the byte before, input = this byte).
#define TOO_SHORT (1 << 0)      // a lead byte followed by a lead byte or ASCII
#define TOO_LONG (1 << 1)       // ASCII followed by a continuation
#define OVERLONG_3 (1 << 2)     // E0 followed by 80..9F
#define TOO_LARGE (1 << 3)      // F4 followed by 90..BF, or F5..FF followed by 90..BF
#define SURROGATE (1 << 4)      // ED followed by A0..BF
#define OVERLONG_2 (1 << 5)     // C0 or C1 followed by a continuation
#define TOO_LARGE_1000 (1 << 6) // F5..FF followed by 80..8F
#define OVERLONG_4 (1 << 6)     // F0 followed by 80..8F
#define TWO_CONTS (1 << 7)      // a continuation followed by a continuation
#define CARRY (TOO_SHORT | TOO_LONG | TWO_CONTS)

// Indexed by prev1's high nibble.
#define TABLE_PREV_HIGH \
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, \
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS, \
    TOO_SHORT | OVERLONG_2, TOO_SHORT, TOO_SHORT | OVERLONG_3 | SURROGATE, \
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4
// Indexed by prev1's low nibble.
#define TABLE_PREV_LOW \
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, CARRY | OVERLONG_2, CARRY, CARRY, \
    CARRY | TOO_LARGE, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000
// Indexed by the byte's own high nibble.
#define TABLE_INPUT_HIGH \
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, \
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT

static const uint8_t utf8_prev_high[16] = {TABLE_PREV_HIGH};
static const uint8_t utf8_prev_low[16] = {TABLE_PREV_LOW};
static const uint8_t utf8_input_high[16] = {TABLE_INPUT_HIGH};

#if defined(__x86_64__)
#include <immintrin.h>

/// Non-zero bytes where `v`, with `prev` the 32 bytes before it, is not well-formed UTF-8 (a
/// sequence still open at the end of `v` is not an error yet: the next block decides).
__attribute__((target("avx2")))
static inline __m256i utf8_errors_avx2(__m256i prev, __m256i v) {
    const __m256i prev_high = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)utf8_prev_high));
    const __m256i prev_low = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)utf8_prev_low));
    const __m256i input_high = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)utf8_input_high));
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    // The 1, 2 and 3 bytes before each byte of `v`, across the boundary with `prev`.
    __m256i carried = _mm256_permute2x128_si256(prev, v, 0x21);
    __m256i prev1 = _mm256_alignr_epi8(v, carried, 15);
    __m256i prev2 = _mm256_alignr_epi8(v, carried, 14);
    __m256i prev3 = _mm256_alignr_epi8(v, carried, 13);
    __m256i found = _mm256_and_si256(_mm256_and_si256(
        _mm256_shuffle_epi8(prev_high, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble)),
        _mm256_shuffle_epi8(prev_low, _mm256_and_si256(prev1, nibble))),
        _mm256_shuffle_epi8(input_high, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble)));
    // Second and third continuations are the only pairs of continuations allowed.
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80)));
    __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must_continue, found);
}
#endif

#endif
