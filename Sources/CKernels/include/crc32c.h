#ifndef RANKINGS_CRC32C_H
#define RANKINGS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli), the checksum of every fragment of a LevelDB log (log_fragment.h).
/// `crc` is the finished CRC of the bytes before `data` (0 for none), so extending in pieces
/// equals one call over the whole: LevelDB's crc32c::Extend.

/// SSE4.2's `crc32` instruction at level avx2 and above (cpu_level.h), else the portable tables.
uint32_t rk_crc32c_extend(uint32_t crc, const void *data, size_t count);

/// Slicing-by-8 tables, on any CPU: the fallback, and what the tests hold the fast path to.
uint32_t rk_crc32c_extend_portable(uint32_t crc, const void *data, size_t count);

/// The SSE4.2 kernel; only call when `rk_cpu_supported()` is `RK_CPU_AVX2` or above.
uint32_t rk_crc32c_extend_hardware(uint32_t crc, const void *data, size_t count);


#endif
