#ifndef RANKINGS_CPU_LEVEL_H
#define RANKINGS_CPU_LEVEL_H

/// The one place that decides which SIMD kernels the process runs (cpu_level.c). Each level
/// has every kernel of the levels below it:
/// - portable: none; the scalar scanner, the CRC-32C tables, entity templates compared byte
///   by byte;
/// - avx2: the line kernel with its layouts and the string kernel (AVX2), SSE4.2's `crc32`
///   (three fragments at a time);
/// - avx512: CRC-32C folding with VPCLMULQDQ, entity templates compared 64 bytes at a time.
/// A level is usable when the CPU (and the OS, for the registers' state) has every feature any
/// of its kernels is compiled for: `rk_cpu_features` lists them.
#define RK_CPU_PORTABLE 1
#define RK_CPU_AVX2 2
#define RK_CPU_AVX512 3

/// The level this process runs at: the CPU's, lowered by `RANKINGS_CPU=portable|avx2|avx512`.
/// Decided once, before main runs (so no thread sees it half done), and never changed.
/// Every kernel's dispatch reads it; a kernel a caller names itself (tests) runs whenever
/// `rk_cpu_supported()` allows, whatever this says.
extern int rk_cpu_chosen;
static inline int rk_cpu_level(void) { return rk_cpu_chosen; }

/// The highest level whose every feature this CPU has.
int rk_cpu_supported(void);

/// The features a level's kernels are compiled for (those of the levels below included), as
/// `target` attributes spell them, comma-separated.
const char *rk_cpu_features(int level);

/// NULL, or why the front end must refuse `RANKINGS_CPU` (an unknown value, or a level this
/// CPU lacks features for); the process then runs at portable.
const char *rk_cpu_refusal(void);

/// For `--version`: `cpu: LEVEL`, and why when it is not the CPU's own.
const char *rk_cpu_description(void);

#endif
