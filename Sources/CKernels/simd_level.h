#ifndef RANKINGS_SIMD_LEVEL_H
#define RANKINGS_SIMD_LEVEL_H

// Which of our SIMD kernels this x86-64 CPU runs: 2 AVX2, 1 SSSE3, 0 none. One rule for the
// string skipper and the line kernel, which each keep their pick in a pointer of their own.
static inline int rk_simd_level_of_cpu(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 2 : __builtin_cpu_supports("ssse3") ? 1 : 0;
}

#endif
