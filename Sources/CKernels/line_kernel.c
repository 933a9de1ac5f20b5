// Stage 1 of the line kernel for each instruction set: 64 bytes at a time classified into the
// bitmaps of line_index.h (AVX-512: one register; AVX2: two of 32 bytes), with the UTF-8 lookup
// of utf8_lookup.h run only on blocks that hold non-ASCII bytes (or follow one that ended
// with some). What follows, index_block() in line_index.h and the walk in line_walk.c, is the
// same for both.
#include "line_kernel.h"
#include "cpu_level.h"
#include "line_index.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "utf8_lookup.h"

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
        uint64_t strings, line_bits;
        int done = index_block(ix, b, &k, &in_string, &strings, &line_bits);
        if (done) return done;
    }
    return -1;
}

/// AVX-512 (with VBMI2's byte compress): one 64-byte register a block, and the masks come
/// straight out of the compares. Besides the index, it writes the line's skeleton
/// (line_index.h), for the templates of line_template.c.
#define AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi2,avx2,bmi,bmi2,popcnt"

/// Stage 1 with the skeleton. With `against` NULL it writes the skeleton's bytes to `sk`;
/// otherwise it only compares them, block by block as they come out of the compress, with the
/// template's (reading back bytes just stored, at other offsets than they were stored at,
/// waited for every store: a third of the time), places the template's spans in the line as
/// their blocks go by, and leaves `sk->bytes` unwritten.
__attribute__((target(AVX512_TARGET), always_inline))
static inline int index_avx512(const uint8_t *line, struct line_index *ix, struct line_skeleton *sk,
                               const rk_line_template *against, int *matches, const uint8_t **spans) {
    const __m512i quote = _mm512_set1_epi8('"'), backslash = _mm512_set1_epi8('\\');
    const __m512i control_max = _mm512_set1_epi8(0x1F), newline = _mm512_set1_epi8('\n');
    const __m512i colon = _mm512_set1_epi8(':'), zero_char = _mm512_set1_epi8('0'), ten = _mm512_set1_epi8(10);
    const __m256i zero = _mm256_setzero_si256();
    __m256i prev = zero;
    uint64_t in_string = 0;
    int unfinished = 0;
    // Carried from one block to the next: a colon, a digit, a number's leading 0 in the last
    // byte, and the carry of the addition that finds value strings.
    uint64_t colon_carry = 0, digit_carry = 0, zero_carry = 0, leading_zero = 0;
    unsigned char add_carry = 0;
    int length = 0;
    uint64_t differs = 0;
    // The next of the template's bounds to place in the line.
    uint32_t bound = 0;
    for (int b = 0; b < LINE_MAX_BLOCKS; b++) {
        __m512i v = _mm512_loadu_si512((const void *)(line + 64 * b));
        struct block_bits k;
        k.quote = _mm512_cmpeq_epi8_mask(v, quote);
        k.newline = _mm512_cmpeq_epi8_mask(v, newline);
        uint64_t backslashes = _mm512_cmpeq_epi8_mask(v, backslash);
        uint64_t controls = _mm512_cmple_epu8_mask(v, control_max);
        uint64_t non_ascii = _mm512_movepi8_mask(v);
        k.rare = backslashes | (controls & ~k.newline) | non_ascii;
        __m256i hi = _mm512_extracti64x4_epi64(v, 1);
        int block_unfinished = TAIL_MAY_CONTINUE(non_ascii);
        if (k.rare || unfinished) {
            k.rare = ~(uint64_t)0;
            k.backslash = backslashes;
            k.control = controls;
            k.utf8_error = 0;
            if (non_ascii || unfinished) k.utf8_error = utf8_error_bits(prev, _mm512_castsi512_si256(v), hi);
        }
        unfinished = block_unfinished;
        prev = hi;
        uint64_t strings, in_line;
        int done = index_block(ix, b, &k, &in_string, &strings, &in_line);
        if (done < 0) return -1;

        // The skeleton. A value string is one whose opening quote follows a colon; adding
        // its opening quote's bit to the string bits carries through the string to its
        // closing quote, so the bits that changed are the string and that quote.
        uint64_t colons = _mm512_cmpeq_epi8_mask(v, colon);
        uint64_t value_open = k.quote & strings & (colons << 1 | colon_carry);
        colon_carry = colons >> 63;
        unsigned long long sum;
        add_carry = _addcarry_u64(add_carry, strings, value_open, &sum);
        uint64_t value_body = (strings ^ sum) & ~value_open;
        // Digits outside strings: each run keeps its first, as a `0`.
        uint64_t digits = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, zero_char), ten) & ~strings & in_line;
        uint64_t continued = digits & (digits << 1 | digit_carry);
        digit_carry = digits >> 63;
        uint64_t zeros = _mm512_cmpeq_epi8_mask(v, zero_char) & digits & ~continued;
        leading_zero |= digits & (zeros << 1 | zero_carry);
        zero_carry = zeros >> 63;
        uint64_t kept = in_line & ~value_body & ~continued;
        sk->kept[b] = kept;
        __m512i bytes = _mm512_maskz_compress_epi8(kept, _mm512_mask_mov_epi8(v, digits, zero_char));
        int count = __builtin_popcountll(kept);
        if (against == NULL) {
            _mm512_storeu_si512((void *)(sk->bytes + length), bytes);
        } else if (count == 0) {
            // Nothing kept (a block inside a string, or the `\n` at its start): nothing to compare.
        } else if (length < RK_TEMPLATE_MAX) {
            __mmask64 m = count == 64 ? ~(__mmask64)0 : ((__mmask64)1 << count) - 1;
            differs |= _mm512_mask_cmpneq_epi8_mask(m, bytes, _mm512_loadu_si512((const void *)(against->skeleton + length)));
            // The template's spans that fall in this block, placed as they go by (written
            // even if the skeleton turns out not to match: then the walk writes its own).
            while (bound < against->bound_count && against->bounds[bound] < length + count) {
                uint64_t nth = (uint64_t)1 << (against->bounds[bound] - length);
                spans[against->span_of[bound]] = line + 64 * b + __builtin_ctzll(_pdep_u64(nth, kept));
                bound++;
            }
        } else {
            differs = 1;
        }
        length += count;
        if (done) {
            sk->length = length;
            sk->leading_zero = leading_zero != 0;
            if (against) *matches = differs == 0 && (uint32_t)length == against->length;
            return 1;
        }
    }
    return -1;
}

__attribute__((target(AVX512_TARGET)))
static const uint8_t *scan_templated(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                                     rk_line_templates *templates) {
    struct line_index ix;
    struct line_skeleton sk;
    // Most lines have the shape of the line before: compared on the way.
    const rk_line_template *last = &templates->slots[templates->last];
    if (last->length > 0 && last->wanted == wanted) {
        int matches = 0;
        if (index_avx512(line, &ix, &sk, last, &matches, spans) != 1) return NULL;
        if (matches && !sk.leading_zero) {
            templates->hits++;
            *found = last->found;
            return line + ix.newline;
        }
    }
    // Another shape: the skeleton itself, for the other templates, or to make one.
    if (index_avx512(line, &ix, &sk, NULL, NULL, NULL) != 1) return NULL;
    return rk_walk_line_templated(line, &ix, &sk, wanted, spans, found, templates);
}

__attribute__((target(AVX512_TARGET)))
static const uint8_t *scan_avx512(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                                  rk_line_templates *templates) {
    struct line_index ix;
    if (templates != NULL && !rk_patience_resting(&templates->patience)) {
        // A line laid out as one the templates answered before: the layout answers
        // (line_layout.c). Otherwise the templates, and the line's layout for the next ones.
        int layouts = !rk_patience_resting(&templates->layout_patience);
        if (layouts) {
            const uint8_t *end = rk_layout_scan(line, wanted, spans, found, templates);
            if (end != NULL) {
                templates->hits++;
                templates->layout_hits++;
                rk_patience_hit(&templates->layout_patience);
                rk_patience_hit(&templates->patience);
                return end;
            }
            rk_patience_miss(&templates->layout_patience);
        }
        uint64_t hits = templates->hits;
        const uint8_t *end = scan_templated(line, wanted, spans, found, templates);
        if (templates->hits != hits) {
            rk_patience_hit(&templates->patience);
        } else {
            rk_patience_miss(&templates->patience);
        }
        if (layouts && end != NULL) rk_layout_remember(line, (int)(end - line), wanted, spans, *found, templates);
        return end;
    }
    // Without templates the skeleton is wasted work: AVX2's index, then the walk.
    if (index_avx2(line, &ix) != 1) return NULL;
    return rk_walk_line(line, &ix, wanted, spans, found);
}

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_templates *templates) {
    if (level == 0) level = rk_cpu_level();
    else if (level > rk_cpu_supported()) return NULL;
    if (level == RK_CPU_AVX512) return scan_avx512(line, wanted, spans, found, templates);
    struct line_index ix;
    if (level != RK_CPU_AVX2 || index_avx2(line, &ix) != 1) return NULL;
    return rk_walk_line(line, &ix, wanted, spans, found);
}

#else

const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_templates *templates) {
    (void)line; (void)wanted; (void)spans; (void)found; (void)level; (void)templates;
    return 0;
}

#endif
