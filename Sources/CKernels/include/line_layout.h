#ifndef RANKINGS_LINE_LAYOUT_H
#define RANKINGS_LINE_LAYOUT_H

#include <stdint.h>

#include "fast_path_patience.h"
#include "schema.h"

/// Lines up to this many 64-byte blocks (with their `\n`) can have a layout; a scanner keeps
/// `RK_LAYOUTS` of them, at most one per line length.
#define RK_LAYOUT_BLOCKS 16
#define RK_LAYOUTS 8

/// A line's exact layout (line_layout.c): for each byte of a line the walk accepted, the
/// values the byte of another line may take there to be read the same way without a walk.
typedef struct {
    /// Byte i of a line laid out alike is `least[i]` to `least[i] + width[i]` (unsigned): the
    /// line's own byte (width 0), a digit, or a value string's byte; any byte past its `\n`.
    uint8_t least[RK_LAYOUT_BLOCKS * 64];
    uint8_t width[RK_LAYOUT_BLOCKS * 64];
    /// Offset in the line of each span of a found field, by index into `rk_scan_line`'s spans.
    uint16_t span_at[RK_SPANS];
    /// The `\n`'s offset + 1 (0 for an empty slot), and the fields asked for and found.
    uint32_t length;
    uint32_t wanted;
    uint32_t found;
} rk_line_layout;

/// One scanner's layouts (zeroed to start). Never shared between threads.
typedef struct {
    rk_line_layout slots[RK_LAYOUTS];
    /// Lines a layout answered (the tests check that layouts do answer).
    uint64_t hits;
    /// A line no layout answers costs an extra pass over it: after a run of them, layouts rest.
    rk_patience patience;
    /// The slot the next new length takes, and how many more lines no layout answered must go
    /// by before another layout is made (making one reads the line byte by byte: several times
    /// what matching it costs).
    uint32_t next;
    uint32_t wait;
} rk_line_layouts;

/// The line's `\n` when it matches the layout of an earlier line of its length (spans and
/// `*found` written as for that line), else NULL having decided nothing. Called by the line
/// kernel (line_kernel.c) only.
const uint8_t *rk_layout_scan(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                              rk_line_layouts *layouts);

/// Makes the layout of a line the walk accepted (its `\n` at `newline`, its spans and fields
/// as the walk gave them), in the slot of its length.
void rk_layout_remember(const uint8_t *line, int newline, uint32_t wanted, const uint8_t *const *spans,
                        uint32_t found, rk_line_layouts *layouts);

#endif
