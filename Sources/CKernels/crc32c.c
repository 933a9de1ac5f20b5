#include "crc32c.h"
#include "cpu_level.h"
#include "log_fragment.h"

#include <pthread.h>
#include <string.h>

// The reflected Castagnoli polynomial.
#define POLY 0x82F63B78u

// table[k][b]: the CRC of byte b followed by k zero bytes, so eight bytes fold in one step.
static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++) c = (c >> 1) ^ (POLY & (0u - (c & 1)));
        table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++) table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xFF];
}

uint32_t rk_crc32c_extend_portable(uint32_t crc, const void *data, size_t count) {
    pthread_once(&table_once, make_table);
    const uint8_t *p = data;
    uint32_t c = ~crc;
    while (count > 0 && ((uintptr_t)p & 7) != 0) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
        count--;
    }
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        // Little-endian: the first byte is the lowest.
        uint32_t lo = (uint32_t)word ^ c, hi = (uint32_t)(word >> 32);
        c = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
            table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^ table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        count -= 8;
    }
    while (count-- > 0) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
    return ~c;
}

// LevelDB's mask: a CRC stored beside data that holds CRCs is rotated and offset.
static uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

#if defined(__x86_64__)
#include <immintrin.h>

// The rest of one stream: words, then at most one 4-, 2- and 1-byte step (each `crc32`
// waits for the one before it, so three steps instead of up to seven byte steps).
__attribute__((target("sse4.2")))
static uint64_t finish_hardware(uint64_t c, const uint8_t *p, size_t count) {
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        count -= 8;
    }
    if (count & 4) {
        uint32_t word;
        memcpy(&word, p, 4);
        c = __builtin_ia32_crc32si((uint32_t)c, word);
        p += 4;
    }
    if (count & 2) {
        uint16_t half;
        memcpy(&half, p, 2);
        c = __builtin_ia32_crc32hi((uint32_t)c, half);
        p += 2;
    }
    if (count & 1) c = __builtin_ia32_crc32qi((uint32_t)c, *p);
    return c;
}

__attribute__((target("sse4.2")))
uint32_t rk_crc32c_extend_hardware(uint32_t crc, const void *data, size_t count) {
    const uint8_t *p = data;
    uint64_t c = ~crc;
    while (count > 0 && ((uintptr_t)p & 7) != 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        count--;
    }
    // One stream, not three interleaved: blocks are checksummed by rk_log_fragment_checksums;
    // this serves only the fragments its header scan leaves to LogRecordReader.header.
    return ~(uint32_t)finish_hardware(c, p, count);
}

__attribute__((target("sse4.2")))
static void fragment_checksums_hardware(const uint8_t *block, rk_log_fragment *f, size_t count) {
    size_t i = 0;
    for (; i + 3 <= count; i += 3) {
        const uint8_t *p0 = block + f[i].data, *p1 = block + f[i + 1].data, *p2 = block + f[i + 2].data;
        size_t n0 = f[i].length, n1 = f[i + 1].length, n2 = f[i + 2].length;
        // Each stream starts with its fragment's type byte, as LevelDB's crc32c::Extend of the
        // type then the data does.
        uint64_t c0 = __builtin_ia32_crc32qi(0xFFFFFFFFu, f[i].type);
        uint64_t c1 = __builtin_ia32_crc32qi(0xFFFFFFFFu, f[i + 1].type);
        uint64_t c2 = __builtin_ia32_crc32qi(0xFFFFFFFFu, f[i + 2].type);
        size_t common = n0 < n1 ? n0 : n1;
        if (n2 < common) common = n2;
        common &= ~(size_t)7;
        for (size_t k = 0; k < common; k += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p0 + k, 8);
            memcpy(&w1, p1 + k, 8);
            memcpy(&w2, p2 + k, 8);
            c0 = __builtin_ia32_crc32di(c0, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        f[i].checksum = mask(~(uint32_t)finish_hardware(c0, p0 + common, n0 - common));
        f[i + 1].checksum = mask(~(uint32_t)finish_hardware(c1, p1 + common, n1 - common));
        f[i + 2].checksum = mask(~(uint32_t)finish_hardware(c2, p2 + common, n2 - common));
    }
    for (; i < count; i++) {
        uint64_t c = __builtin_ia32_crc32qi(0xFFFFFFFFu, f[i].type);
        f[i].checksum = mask(~(uint32_t)finish_hardware(c, block + f[i].data, f[i].length));
    }
}

// Folding with carry-less multiplies (VPCLMULQDQ), after Intel's "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ": a 512-bit accumulator takes 64 bytes a step, each of its
// four 128-bit lanes multiplied forward 512 bits by x^(512+31) and x^(512-33) mod P (its two
// halves; reflected, as the `crc32` instruction's bits are), then the lanes fold into the last
// and two `crc32` steps reduce its 128 bits. One fragment is one chain; successive fragments
// overlap in the core, so fragments of a few hundred bytes need no interleaving of streams.
// x^n mod P, reflected (x^0 is the top bit), for n = 512 + 31 and 512 - 33.
static const uint64_t fold_512[2] = {0x740EEF02, 0x9E4ADDF8};
// The same, n = d + 31 and d - 33, for each lane's distance d to the last: 384, 256 and 128 bits.
static const uint64_t fold_lanes[3][2] = {{0x1C291D04, 0xDDC0152B}, {0x3DA6D0CB, 0xBA4FC28E}, {0xF20C0DFE, 0x493C7D27}};

#define FOLD_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.2")))

FOLD_TARGET
static inline __m128i fold_lane(__m128i lane, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11));
}

// The `crc32` state after `c` and `count` bytes from `p`.
FOLD_TARGET
static uint32_t fold_fragment(uint32_t c, const uint8_t *p, size_t count) {
    // The bytes past a whole number of 64-byte steps go first, with `crc32`; then the state
    // joins the first step as its first four bytes (crc32(c, w) is crc32(0, w ^ c)).
    size_t head = count % 64;
    c = (uint32_t)finish_hardware(c, p, head);
    p += head;
    count -= head;
    if (count == 0) return c;
    const __m512i k = _mm512_set_epi64((long long)fold_512[1], (long long)fold_512[0], (long long)fold_512[1],
                                       (long long)fold_512[0], (long long)fold_512[1], (long long)fold_512[0],
                                       (long long)fold_512[1], (long long)fold_512[0]);
    __m512i a = _mm512_xor_si512(_mm512_loadu_si512((const void *)p), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)c)));
    for (size_t i = 64; i < count; i += 64) {
        __m512i forward = _mm512_xor_si512(_mm512_clmulepi64_epi128(a, k, 0x00), _mm512_clmulepi64_epi128(a, k, 0x11));
        a = _mm512_xor_si512(forward, _mm512_loadu_si512((const void *)(p + i)));
    }
    __m128i last = _mm512_extracti32x4_epi32(a, 3);
    last = _mm_xor_si128(last, fold_lane(_mm512_extracti32x4_epi32(a, 0), _mm_loadu_si128((const __m128i *)fold_lanes[0])));
    last = _mm_xor_si128(last, fold_lane(_mm512_extracti32x4_epi32(a, 1), _mm_loadu_si128((const __m128i *)fold_lanes[1])));
    last = _mm_xor_si128(last, fold_lane(_mm512_extracti32x4_epi32(a, 2), _mm_loadu_si128((const __m128i *)fold_lanes[2])));
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(last), hi = (uint64_t)_mm_extract_epi64(last, 1);
    return (uint32_t)__builtin_ia32_crc32di(__builtin_ia32_crc32di(0, lo), hi);
}

FOLD_TARGET
static void fragment_checksums_fold(const uint8_t *block, rk_log_fragment *f, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint32_t c = __builtin_ia32_crc32qi(0xFFFFFFFFu, f[i].type);
        f[i].checksum = mask(~fold_fragment(c, block + f[i].data, f[i].length));
    }
}

#else

uint32_t rk_crc32c_extend_hardware(uint32_t crc, const void *data, size_t count) {
    return rk_crc32c_extend_portable(crc, data, count);
}

#endif

uint32_t rk_crc32c_extend(uint32_t crc, const void *data, size_t count) {
    return rk_cpu_level() >= RK_CPU_AVX2 ? rk_crc32c_extend_hardware(crc, data, count)
                                         : rk_crc32c_extend_portable(crc, data, count);
}

void rk_log_fragment_checksums_portable(const uint8_t *block, rk_log_fragment *f, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint32_t crc = rk_crc32c_extend_portable(0, &f[i].type, 1);
        f[i].checksum = mask(rk_crc32c_extend_portable(crc, block + f[i].data, f[i].length));
    }
}

void rk_log_fragment_checksums(const uint8_t *block, rk_log_fragment *fragments, size_t count) {
    rk_log_fragment_checksums_with(rk_cpu_level(), block, fragments, count);
}

void rk_log_fragment_checksums_with(int level, const uint8_t *block, rk_log_fragment *fragments, size_t count) {
#if defined(__x86_64__)
    if (level > rk_cpu_supported()) level = RK_CPU_PORTABLE;
    if (level == RK_CPU_AVX512) {
        fragment_checksums_fold(block, fragments, count);
    } else if (level == RK_CPU_AVX2) {
        fragment_checksums_hardware(block, fragments, count);
    } else {
        rk_log_fragment_checksums_portable(block, fragments, count);
    }
#else
    (void)level;
    rk_log_fragment_checksums_portable(block, fragments, count);
#endif
}
