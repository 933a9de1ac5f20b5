#include "crc32c.h"

// The plain case of LogRecordReader.header in C: one Swift call per fragment, each header
// read a byte at a time with its checks, cost about as much as checking the fragment's CRC.
size_t rk_log_scan_headers(const uint8_t *block, size_t size, rk_log_fragment *fragments, size_t *count) {
    size_t pos = 0, n = *count;
    while (size - pos >= 7) {
        const uint8_t *h = block + pos;
        uint8_t type = h[6];
        size_t length = (size_t)h[4] | (size_t)h[5] << 8;
        if (type < 1 || type > 4 || length > size - pos - 7) break;
        fragments[n].data = (uint32_t)(pos + 7);
        fragments[n].length = (uint32_t)length;
        fragments[n].checksum = 0;
        fragments[n].type = type;
        fragments[n].stored = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
        n++;
        pos += 7 + length;
    }
    *count = n;
    return pos;
}
