#include "log_fragment.h"

// The plain case of LogRecordReader.header in C, a block at a time; whatever it stops at is
// read by LogRecordReader.header, which words the damage.
size_t rk_log_scan_headers(const uint8_t *block, size_t size, rk_log_fragment *fragments, size_t *count) {
    size_t pos = 0, n = *count;
    while (size - pos >= RK_LOG_HEADER_SIZE) {
        const uint8_t *h = block + pos;
        uint8_t type = h[6];
        size_t length = (size_t)h[4] | (size_t)h[5] << 8;
        if (type < RK_LOG_FULL || type > RK_LOG_LAST || length > size - pos - RK_LOG_HEADER_SIZE) break;
        fragments[n].data = (uint32_t)(pos + RK_LOG_HEADER_SIZE);
        fragments[n].length = (uint32_t)length;
        fragments[n].checksum = 0;
        fragments[n].type = type;
        fragments[n].stored = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
        n++;
        pos += RK_LOG_HEADER_SIZE + length;
    }
    *count = n;
    return pos;
}
