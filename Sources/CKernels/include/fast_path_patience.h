#ifndef RANKINGS_FAST_PATH_PATIENCE_H
#define RANKINGS_FAST_PATH_PATIENCE_H

#include <stdint.h>

/// When to stop trying a fast path that costs extra each time it fails: a line the line kernel
/// declines is scanned again; a line or an entity no template answers is walked after the
/// compare. After `RK_PATIENCE_MISSES` failures in a row (escapes on every line, keys in
/// another order on every line, ids of many lengths) the fast path rests for
/// `RK_PATIENCE_REST` items, then is tried again. Which path answers never changes the answer,
/// only the time.
typedef struct {
    uint32_t misses;
    uint32_t rest;
} rk_patience;

#define RK_PATIENCE_MISSES 16
#define RK_PATIENCE_REST 1024

/// Whether the fast path rests for this item (which counts it off the rest).
static inline int rk_patience_resting(rk_patience *patience) {
    if (patience->rest == 0) return 0;
    patience->rest--;
    return 1;
}

static inline void rk_patience_hit(rk_patience *patience) { patience->misses = 0; }

static inline void rk_patience_miss(rk_patience *patience) {
    if (++patience->misses < RK_PATIENCE_MISSES) return;
    patience->misses = 0;
    patience->rest = RK_PATIENCE_REST;
}

#endif
