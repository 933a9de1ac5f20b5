// The UTF-8 lookup tables shared by the string kernel (scan_kernels.c) and the line kernel
// (line_kernel.c): Keiser and Lemire's method ("Validating UTF-8 in less than one instruction
// per byte", 2021), as simdjson's stage 1 uses it. Internal to CKernels (not in include/).
#ifndef RANKINGS_UTF8_LOOKUP_H
#define RANKINGS_UTF8_LOOKUP_H

#include <stdint.h>

// One bit per kind of UTF-8 error a byte pair can show (prev1 = the byte before, input = this byte).
#define TOO_SHORT (1 << 0)      // a lead byte followed by a lead byte or ASCII
#define TOO_LONG (1 << 1)       // ASCII followed by a continuation
#define OVERLONG_3 (1 << 2)     // E0 followed by 80..9F
#define TOO_LARGE (1 << 3)      // F4 followed by 90..BF, or F5..FF followed by 90..BF
#define SURROGATE (1 << 4)      // ED followed by A0..BF
#define OVERLONG_2 (1 << 5)     // C0 or C1 followed by a continuation
#define TOO_LARGE_1000 (1 << 6) // F5..FF followed by 80..8F
#define OVERLONG_4 (1 << 6)     // F0 followed by 80..8F
#define TWO_CONTS (1 << 7)      // a continuation followed by a continuation
#define CARRY (TOO_SHORT | TOO_LONG | TWO_CONTS)

// Indexed by prev1's high nibble.
#define TABLE_PREV_HIGH \
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, \
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS, \
    TOO_SHORT | OVERLONG_2, TOO_SHORT, TOO_SHORT | OVERLONG_3 | SURROGATE, \
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4
// Indexed by prev1's low nibble.
#define TABLE_PREV_LOW \
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, CARRY | OVERLONG_2, CARRY, CARRY, \
    CARRY | TOO_LARGE, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE, CARRY | TOO_LARGE | TOO_LARGE_1000, \
    CARRY | TOO_LARGE | TOO_LARGE_1000
// Indexed by the byte's own high nibble.
#define TABLE_INPUT_HIGH \
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, \
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, \
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT

static const uint8_t utf8_prev_high[16] = {TABLE_PREV_HIGH};
static const uint8_t utf8_prev_low[16] = {TABLE_PREV_LOW};
static const uint8_t utf8_input_high[16] = {TABLE_INPUT_HIGH};

#endif
