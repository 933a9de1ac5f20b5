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

#if defined(__x86_64__)

int rk_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
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
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        count -= 8;
    }
    while (count-- > 0) c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
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
