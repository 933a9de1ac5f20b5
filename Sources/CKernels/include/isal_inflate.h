#ifndef RANKINGS_ISAL_INFLATE_H
#define RANKINGS_ISAL_INFLATE_H

#include <stdint.h>

/// Intel ISA-L's inflate, loaded at run time from libisal.so.2 when the system has it, so one
/// binary runs everywhere and uses the faster inflate where the library is present.

/// What a step of `rk_isal_inflate` ended with; negative values are corrupt data.
enum {
    RK_ISAL_OK = 0,          // progress made, or more input needed
    RK_ISAL_MEMBER_END = 1,  // a gzip member ended, trailer checked; call rk_isal_next_member
};

/// 1 when libisal.so.2 could be loaded and has the functions we use (tried once, on first call).
int rk_isal_available(void);

/// 1 when this binary was compiled with ISA-L's header (libisal-dev), so it can use the library
/// at all; 0 when it was built without it and inflates with zlib whatever the machine has.
int rk_isal_built_in(void);

typedef struct rk_isal_stream rk_isal_stream;

/// A new inflate state for gzip members; NULL when ISA-L is not available or memory is short.
/// With `check_crc` 0 each member's CRC-32 is left to the caller (`rk_isal_member_crc`); its
/// length is always checked.
rk_isal_stream *rk_isal_open(int check_crc);
void rk_isal_close(rk_isal_stream *stream);

/// Hands the next compressed bytes to the stream; only when `rk_isal_avail_in` is 0.
void rk_isal_set_input(rk_isal_stream *stream, const uint8_t *input, uint32_t count);
uint32_t rk_isal_avail_in(const rk_isal_stream *stream);

/// Inflates into `output`; sets `*produced` to the bytes written.
int rk_isal_inflate(rk_isal_stream *stream, uint8_t *output, uint32_t count, uint32_t *produced);

/// Starts the next member after RK_ISAL_MEMBER_END, keeping the unread input.
void rk_isal_next_member(rk_isal_stream *stream);

/// After RK_ISAL_MEMBER_END: the CRC-32 the member's trailer gives for its inflated bytes.
uint32_t rk_isal_member_crc(const rk_isal_stream *stream);

/// The gzip CRC-32 of `bytes` continued from `crc` (0 to start), with ISA-L's folding code;
/// zlib's where `rk_isal_available` is not (the result is the same).
uint32_t rk_isal_crc32(uint32_t crc, const uint8_t *bytes, uint64_t count);

/// The words for a negative status, in the style of zlib's messages.
const char *rk_isal_message(int status);

#endif
