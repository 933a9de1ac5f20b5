// Stage 1 of the line kernel, after simdjson's json_structural_indexer: a line's strings found
// 64 bytes at a time, as one bitmap of closing quotes, with the string state carried between
// blocks as one integer. Internal to CKernels: line_kernel.c classifies the bytes for each
// instruction set and calls index_block(); line_walk.c reads the line with the bitmap.
//
// Stage 1 vouches for the strings: no backslash anywhere in the line (escapes would move
// string boundaries, and are rare enough to leave to the scalar scanner), no control character
// inside a string, well-formed UTF-8 everywhere. Every byte outside the strings is the walk's
// to judge, one by one, so the walk never looks inside a string: it jumps over it.
#ifndef RANKINGS_LINE_INDEX_H
#define RANKINGS_LINE_INDEX_H

#include <stdint.h>

/// Longest line the kernel indexes, in 64-byte blocks (1024 bytes); longer lines go to the
/// scalar scanner, whose string kernel is at its best on them anyway.
#define LINE_MAX_BLOCKS 16

/// What the walk needs: bit i of word b stands for byte 64 * b + i of the line.
struct line_index {
    /// The closing quote of each string.
    uint64_t closes[LINE_MAX_BLOCKS];
    /// Offset of the line's `\n` from its start.
    int newline;
};

/// What the instruction-set part finds in one block: one bit per byte.
struct block_bits {
    uint64_t quote, newline;
    /// A byte that needs a closer look: a backslash, a control character other than `\n`, or
    /// a non-ASCII byte. Only when it is not 0 are the next three filled in.
    uint64_t rare;
    uint64_t backslash, control;
    /// Bytes where the UTF-8 lookup found an error.
    uint64_t utf8_error;
};

static inline int is_digit(uint8_t c) { return (uint8_t)(c - '0') < 10; }

/// Bit i set when bits 0...i of `x` hold an odd number of ones.
static inline uint64_t prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/// Checks block `b` and records it in the index. `in_string` carries the string state: all
/// ones when the block before ended inside a string. Returns 1 when the line's `\n` is in this
/// block, 0 to go on to the next block, -1 when the line is one the kernel declines.
__attribute__((always_inline))
static inline int index_block(struct line_index *ix, int b, const struct block_bits *k, uint64_t *in_string_carry) {
    // Bits before the `\n` (all, if it is not in this block), and the `\n`'s own bit.
    uint64_t newline_bit = k->newline & (0 - k->newline);
    uint64_t in_line = newline_bit ? newline_bit - 1 : ~(uint64_t)0;
    // Bit set: inside a string, its opening quote included, its closing quote not. Every quote
    // is a real one, since a line with a backslash is declined.
    uint64_t in_string = prefix_xor(k->quote) ^ *in_string_carry;
    *in_string_carry = (uint64_t)((int64_t)in_string >> 63);
    if (in_string & newline_bit) return -1; // the line ends inside a string
    if (k->rare & in_line) {
        if (k->backslash & in_line) return -1;
        // Checked up to and including the `\n`: a sequence cut short by it is an error there.
        if (k->utf8_error & (in_line | newline_bit)) return -1;
        if (k->control & in_line & in_string) return -1;
    }
    ix->closes[b] = k->quote & ~in_string & in_line;
    if (newline_bit) {
        ix->newline = 64 * b + __builtin_ctzll(newline_bit);
        return 1;
    }
    return 0;
}

/// Stage 2 (line_walk.c): the line's grammar, byte by byte outside its strings.
const uint8_t *rk_walk_line(const uint8_t *line, const struct line_index *ix, uint32_t wanted,
                            const uint8_t **spans, uint32_t *found);

#endif
