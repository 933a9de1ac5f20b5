#ifndef RANKINGS_CRC32C_H
#define RANKINGS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli), the checksum of every record in a LevelDB log (a managed export's
/// output files). `crc` is the finished CRC of the bytes before `data` (0 for none), so
/// extending in pieces equals one call over the whole: LevelDB's crc32c::Extend.

/// SSE4.2's `crc32` instruction at level avx2 and above (cpu_level.h), else the portable tables.
uint32_t rk_crc32c_extend(uint32_t crc, const void *data, size_t count);

/// Slicing-by-8 tables, on any CPU: the fallback, and what the tests hold the fast path to.
uint32_t rk_crc32c_extend_portable(uint32_t crc, const void *data, size_t count);

/// The SSE4.2 kernel; only call when `rk_cpu_supported()` is `RK_CPU_AVX2` or above.
uint32_t rk_crc32c_extend_hardware(uint32_t crc, const void *data, size_t count);

/// One fragment of a LevelDB log block: where its data starts in the block, its length, type
/// and stored checksum (from its header), and, filled in by `rk_log_fragment_checksums`, the
/// masked checksum its header should store.
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
