#ifndef RANKINGS_SCAN_KERNELS_H
#define RANKINGS_SCAN_KERNELS_H

#include <stdint.h>

/// Skips the plain part of a JSON string's contents starting at `p`, which must sit at the
/// start of a UTF-8 sequence (or at an ASCII byte). Returns the first byte at or after `p`
/// that the caller's scalar step must look at; every byte before it is neither `"`, `\` nor a
/// control character, and together they form complete, well-formed UTF-8 (Unicode table 3-7).
/// The returned byte is a quote, backslash or control character, or the first byte of a
/// stretch the kernel leaves to the scalar step (never more than one block of bytes).
///
/// Reads whole blocks (32 bytes) at and after `p`, but never one that starts past the first
/// control character (the line's `\n`); the caller keeps 64 readable bytes after that `\n`.
/// Where the CPU lacks AVX2 it returns `p`: the scalar step does it all.
const uint8_t *rk_skip_string_plain(const uint8_t *p);

#endif
