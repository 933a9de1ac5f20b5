#include "crc32c.h"

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

int rk_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

// The rest of one stream: words, then at most one 4-, 2- and 1-byte step (each `crc32`
// waits for the one before it, so seven byte steps cost what 21 cycles do).
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
    // Three independent streams would hide the instruction's latency; one is already several
    // GB/s, far above what decoding the entities after it needs.
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

#else

int rk_crc32c_hardware_available(void) { return 0; }

uint32_t rk_crc32c_extend_hardware(uint32_t crc, const void *data, size_t count) {
    return rk_crc32c_extend_portable(crc, data, count);
}

#endif

typedef uint32_t (*kernel_fn)(uint32_t, const void *, size_t);
static kernel_fn kernel;
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static void choose_kernel(void) {
    kernel = rk_crc32c_hardware_available() ? rk_crc32c_extend_hardware : rk_crc32c_extend_portable;
}

uint32_t rk_crc32c_extend(uint32_t crc, const void *data, size_t count) {
    pthread_once(&kernel_once, choose_kernel);
    return kernel(crc, data, count);
}

void rk_log_fragment_checksums_portable(const uint8_t *block, rk_log_fragment *f, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint32_t crc = rk_crc32c_extend_portable(0, &f[i].type, 1);
        f[i].checksum = mask(rk_crc32c_extend_portable(crc, block + f[i].data, f[i].length));
    }
}

void rk_log_fragment_checksums(const uint8_t *block, rk_log_fragment *fragments, size_t count) {
    pthread_once(&kernel_once, choose_kernel);
#if defined(__x86_64__)
    if (kernel == rk_crc32c_extend_hardware) {
        fragment_checksums_hardware(block, fragments, count);
        return;
    }
#endif
    rk_log_fragment_checksums_portable(block, fragments, count);
}
