#ifndef RANKINGS_LOG_FRAGMENT_H
#define RANKINGS_LOG_FRAGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "schema.h"

/// One fragment of a LevelDB log block (schema.h: RK_LOG_*): where its data starts in the
/// block, its length, type and stored checksum (from its header), and, filled in by
/// `rk_log_fragment_checksums`, the masked checksum its header should store.
typedef struct {
    uint32_t data;
    uint32_t length;
    uint32_t checksum;
    uint8_t type;
    uint32_t stored;
} rk_log_fragment;

/// Reads a block's fragment headers from its start into `fragments` (from index `*count`,
/// which it advances) for as long as each is plainly well formed: a type FULL to LAST and a
/// length that fits in the block. Returns the offset where it stopped: the block's end, or
/// a header it leaves to the caller's own checks (a zero trailer or type, or damage).
size_t rk_log_scan_headers(const uint8_t *block, size_t size, rk_log_fragment *fragments, size_t *count);

/// The masked CRC-32C of each fragment's type byte and data (what LevelDB's log writer
/// stores), for `count` fragments of `block`, with the process's level's kernel (cpu_level.h):
/// folding with VPCLMULQDQ at avx512, SSE4.2 three fragments at a time at avx2 (one `crc32`
/// waits three cycles for the one before it in the same stream, and three streams fill those
/// cycles), the portable tables at portable.
void rk_log_fragment_checksums(const uint8_t *block, rk_log_fragment *fragments, size_t count);

/// The same with a level's kernel named, for the tests; a level above `rk_cpu_supported()` gets
/// the tables.
void rk_log_fragment_checksums_with(int level, const uint8_t *block, rk_log_fragment *fragments, size_t count);

/// The same one fragment at a time with the portable tables: what the tests hold it to.
void rk_log_fragment_checksums_portable(const uint8_t *block, rk_log_fragment *fragments, size_t count);

#endif
