#ifndef RANKINGS_LINE_KERNEL_H
#define RANKINGS_LINE_KERNEL_H

#include <stdint.h>

#include "fast_path_patience.h"

/// How many span pointers `rk_scan_line` may write: two for each field number below 16.
#define RK_SPANS 32

/// Longest skeleton a template holds, and how many templates a scanner keeps.
#define RK_TEMPLATE_MAX 256
#define RK_TEMPLATES 4

/// A line shape the walk accepted (line_template.c): its skeleton, which fields it found, and
/// where each found field's span starts and ends, counted in skeleton bytes.
typedef struct {
    /// 64 bytes more than the longest, for whole-register loads.
    uint8_t skeleton[RK_TEMPLATE_MAX + 64];
    /// The spans' ends in skeleton bytes, in ascending order, and for each the index into
    /// `rk_scan_line`'s spans it gives; `bound_count` of them.
    uint16_t bounds[RK_SPANS];
    uint8_t span_of[RK_SPANS];
    uint32_t bound_count;
    /// 0 for an empty slot.
    uint32_t length;
    uint32_t wanted;
    uint32_t found;
} rk_line_template;

/// Lines up to this many 64-byte blocks (with their `\n`; all the kernel reads, so a typed
/// document with a long name or database id too) can have a layout; a scanner keeps
/// `RK_LAYOUTS` of them, at most one per line length.
#define RK_LAYOUT_BLOCKS 16
#define RK_LAYOUTS 8

/// A line's exact layout (line_layout.c): a line the templates accepted, with what another
/// line must share with it byte for byte to be read the same way without its skeleton.
typedef struct {
    /// The line, its `\n` included; bytes after it are not compared.
    uint8_t bytes[RK_LAYOUT_BLOCKS * 64];
    /// Bit i of word b stands for byte 64 * b + i. `quotes`: where the line's quotes are (no
    /// other line's may be elsewhere); `same`: the bytes that must be equal (all but what value
    /// strings hold and digits outside strings); `digits`: those digits (a digit must be there);
    /// `lead`: the first digit of each run of two or more (a `0` there goes to the skeleton).
    uint64_t quotes[RK_LAYOUT_BLOCKS];
    uint64_t same[RK_LAYOUT_BLOCKS];
    uint64_t digits[RK_LAYOUT_BLOCKS];
    uint64_t lead[RK_LAYOUT_BLOCKS];
    /// Offset in the line of each span of a found field, by index into `rk_scan_line`'s spans.
    uint16_t span_at[RK_SPANS];
    /// The `\n`'s offset + 1 (0 for an empty slot), and the fields asked for and found.
    uint32_t length;
    uint32_t wanted;
    uint32_t found;
} rk_line_layout;

/// One scanner's templates (zeroed to start), used by the AVX-512 kernel only. Never shared
/// between threads.
typedef struct {
    rk_line_template slots[RK_TEMPLATES];
    /// The slot that matched last (tried first), and the one the next new shape replaces.
    uint32_t last;
    uint32_t next;
    /// Lines answered from a template or a layout (the tests check that templates do answer),
    /// and of those, the lines a layout answered.
    uint64_t hits;
    uint64_t layout_hits;
    /// A line no template answers costs a second pass over it.
    rk_patience patience;
    /// Layouts of lines the templates answered, tried before them; with a patience of their own
    /// (when lines share a shape but not their string lengths, layouts only cost).
    rk_line_layout layouts[RK_LAYOUTS];
    rk_patience layout_patience;
    /// The slot the next new length takes, and how many more lines no layout answered must go
    /// by before another layout is made (making one reads the line byte by byte: several times
    /// what matching it costs).
    uint32_t layout_next;
    uint32_t layout_wait;
} rk_line_templates;

/// The fast path of JSONLineScanner for the common line: a JSON object with no backslash in
/// it, no control character inside a string, well-formed UTF-8, nested less than 64 levels,
/// at most 1024 bytes long. It is read as simdjson reads a document: stage 1 finds the strings
/// 64 bytes at a time (a bitmap of closing quotes, line_index.h), stage 2 checks the grammar on
/// the bytes outside them and jumps over each string (line_walk.c).
///
/// Returns the line's `\n` when it accepted the line, after writing, for every top-level key
/// it found whose field (`Field` in Fields.swift: bit `1 << field` of `wanted`) is wanted,
/// the value's first byte to `spans[2 * field]` and the byte after it to `spans[2 * field + 1]`
/// (the last of a repeated key wins), and setting bit `1 << field` of `*found`. Within the
/// last top-level `fields` object, when `fields` is wanted, its keys' values are captured the
/// same way as the typed fields (flat field + 8), so a typed Firestore document needs no
/// second pass.
///
/// Returns NULL for any other line, having decided nothing: the scalar scanner then judges
/// it, so every message, reason and offset is the scalar scanner's by construction. It only
/// accepts a line the scalar scanner would accept as an object with the same spans.
///
/// Reads whole 64-byte blocks from `line`, never one that starts past the first `\n`: the
/// caller keeps 64 readable bytes after that `\n` (LineReader.padding). `spans` holds
/// `RK_SPANS` pointers. `level` 0 means the process's (cpu_level.h); `RK_CPU_AVX2` or
/// `RK_CPU_AVX512` asks for that kernel (tests hold each to the scalar scanner), and NULL comes
/// back when the CPU lacks it. `templates`,
/// when not NULL, lets the AVX-512 kernel skip the walk for a line shaped like one it already
/// accepted (line_template.c); the answer is the same either way.
const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_templates *templates);

#endif
