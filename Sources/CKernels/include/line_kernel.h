#ifndef RANKINGS_LINE_KERNEL_H
#define RANKINGS_LINE_KERNEL_H

#include <stdint.h>

#include "line_layout.h"
#include "schema.h"


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
/// same way as the typed fields (schema.h), so a typed Firestore document needs no second pass.
///
/// Returns NULL for any other line, having decided nothing: the scalar scanner then judges
/// it, so every message, reason and offset is the scalar scanner's by construction. It only
/// accepts a line the scalar scanner would accept as an object with the same spans.
///
/// Reads whole 64-byte blocks from `line`, never one that starts past the first `\n`: the
/// caller keeps 64 readable bytes after that `\n` (LineReader.padding). `spans` holds
/// `RK_SPANS` pointers. `level` 0 means the process's (cpu_level.h: no kernel at portable);
/// `RK_CPU_AVX2` asks for the kernel whatever the process's level (tests hold it to the scalar
/// scanner), and NULL comes back when the CPU lacks AVX2.
/// `layouts`, when not NULL, lets the kernel skip stage 1 and the walk for a line laid out as
/// one it already accepted (line_layout.h); the answer is the same either way.
const uint8_t *rk_scan_line(const uint8_t *line, uint32_t wanted, const uint8_t **spans, uint32_t *found,
                            int level, rk_line_layouts *layouts);

#endif
