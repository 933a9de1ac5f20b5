// The process's CPU level (cpu_level.h): the only code that asks the CPU what it has or reads
// RANKINGS_CPU.
#include "cpu_level.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// What each level's kernels are compiled for, beyond the level below (`target` attributes'
// spelling, which `__builtin_cpu_supports` shares); a test holds every `target` in the kernels
// to these lists.
#define AVX2_FEATURES(X) X("avx2") X("sse4.2")
#define AVX512_FEATURES(X) X("avx512f") X("avx512bw") X("avx512vl") X("pclmul") X("vpclmulqdq")
#define LISTED(feature) "," feature

int rk_cpu_chosen = RK_CPU_PORTABLE;
static int supported = RK_CPU_PORTABLE;
static const char *refusal;
static char description[200], refused[200];
// What the CPU lacks of each level, comma-separated (the level below's included).
static char lacks[2][160];

static void lack(int level, const char *feature) {
    for (int l = level; l <= RK_CPU_AVX512; l++) {
        char *list = lacks[l - RK_CPU_AVX2];
        snprintf(list + strlen(list), sizeof lacks[0] - strlen(list), "%s%s", *list ? ", " : "", feature);
    }
}

static const char *names[] = {[RK_CPU_PORTABLE] = "portable", [RK_CPU_AVX2] = "avx2", [RK_CPU_AVX512] = "avx512"};

__attribute__((constructor))
static void choose_level(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
#define CHECK_AVX2(feature) if (!__builtin_cpu_supports(feature)) lack(RK_CPU_AVX2, feature);
#define CHECK_AVX512(feature) if (!__builtin_cpu_supports(feature)) lack(RK_CPU_AVX512, feature);
#else
#define CHECK_AVX2(feature) lack(RK_CPU_AVX2, feature);
#define CHECK_AVX512(feature) lack(RK_CPU_AVX512, feature);
#endif
    AVX2_FEATURES(CHECK_AVX2)
    AVX512_FEATURES(CHECK_AVX512)
    supported = *lacks[0] ? RK_CPU_PORTABLE : *lacks[1] ? RK_CPU_AVX2 : RK_CPU_AVX512;
    rk_cpu_chosen = supported;
    const char *asked = getenv("RANKINGS_CPU");
    if (asked == NULL || *asked == 0) {
        if (supported == RK_CPU_AVX512) snprintf(description, sizeof description, "cpu: avx512");
        else snprintf(description, sizeof description, "cpu: %s (this CPU lacks %s)", names[supported], lacks[supported + 1 - RK_CPU_AVX2]);
        return;
    }
    int wanted = 0;
    for (int l = RK_CPU_PORTABLE; l <= RK_CPU_AVX512; l++)
        if (strcmp(asked, names[l]) == 0) wanted = l;
    if (wanted == 0) {
        snprintf(refused, sizeof refused, "RANKINGS_CPU=%.40s is not a level: portable, avx2 or avx512", asked);
    } else if (wanted > supported) {
        snprintf(refused, sizeof refused, "RANKINGS_CPU=%s: this CPU lacks %s", names[wanted], lacks[wanted - RK_CPU_AVX2]);
    }
    // A refused value runs nothing the CPU may lack; the front end stops before any work.
    if (*refused) refusal = refused;
    rk_cpu_chosen = refusal ? RK_CPU_PORTABLE : wanted;
    snprintf(description, sizeof description, "cpu: %s (RANKINGS_CPU%s)", names[rk_cpu_chosen], refusal ? " refused" : "");
}

int rk_cpu_supported(void) { return supported; }

const char *rk_cpu_features(int level) {
    if (level == RK_CPU_AVX2) return &(AVX2_FEATURES(LISTED))[1];
    if (level == RK_CPU_AVX512) return &(AVX2_FEATURES(LISTED) AVX512_FEATURES(LISTED))[1];
    return "";
}

const char *rk_cpu_refusal(void) { return refusal; }

const char *rk_cpu_description(void) { return description; }
