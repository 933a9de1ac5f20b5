// ISA-L's inflate behind a small interface, loaded with dlopen: Debian ships ISA-L as a shared
// library only, and the bare binary must still run (with zlib) where it is not installed.
#include "isal_inflate.h"

#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<isa-l/igzip_lib.h>)
#define RK_HAVE_ISAL_HEADER 1
#endif
#endif

// zlib's CRC-32 (the same value as ISA-L's) for `rk_isal_crc32` where ISA-L is not there:
// nothing in the product asks then; tests that make gzip headers do. The binary links zlib.
#include <zlib.h>

#if RK_HAVE_ISAL_HEADER
#include <dlfcn.h>
#include <pthread.h>
#include <isa-l/igzip_lib.h>

static void (*init_fn)(struct inflate_state *);
static void (*reset_fn)(struct inflate_state *);
static int (*inflate_fn)(struct inflate_state *);
static int (*read_header_fn)(struct inflate_state *, struct isal_gzip_header *);
static void (*header_init_fn)(struct isal_gzip_header *);
static uint32_t (*crc_fn)(uint32_t, const unsigned char *, uint64_t);
static int loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL: its symbols serve us only. The handle is kept for the life of the process.
    void *library = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    init_fn = (void (*)(struct inflate_state *))dlsym(library, "isal_inflate_init");
    reset_fn = (void (*)(struct inflate_state *))dlsym(library, "isal_inflate_reset");
    inflate_fn = (int (*)(struct inflate_state *))dlsym(library, "isal_inflate");
    read_header_fn = (int (*)(struct inflate_state *, struct isal_gzip_header *))dlsym(library, "isal_read_gzip_header");
    header_init_fn = (void (*)(struct isal_gzip_header *))dlsym(library, "isal_gzip_header_init");
    crc_fn = (uint32_t (*)(uint32_t, const unsigned char *, uint64_t))dlsym(library, "crc32_gzip_refl");
    loaded = init_fn && reset_fn && inflate_fn && read_header_fn && header_init_fn && crc_fn;
}

int rk_isal_available(void) {
    pthread_once(&load_once, load);
    return loaded;
}

int rk_isal_built_in(void) { return 1; }

// ISA-L inflates the deflate data only (ISAL_DEFLATE); the gzip wrapper around it is read here:
// the header with ISA-L's own reader, the trailer below. ISA-L's gzip mode would also compute
// the CRC-32 on the inflating thread, the one a gzip run waits on; with `check_crc` off it is
// left to the caller (rk_isal_member_crc), which checks it on the thread that scans.
enum { PHASE_HEADER, PHASE_BODY, PHASE_TRAILER };

struct rk_isal_stream {
    struct inflate_state state;
    /// Compressed bytes of the current member handed to ISA-L so far (consumed or pending).
    uint64_t member_in;
    /// The member's first four bytes as they arrive, for `check_header`.
    uint8_t header[4];
    uint32_t header_seen;
    int check_crc;
    int phase;
    /// Kept across calls: ISA-L's header reader resumes from its fields.
    struct isal_gzip_header gzip_header;
    /// The CRC-32 of the member's output so far (when `check_crc`).
    uint32_t crc;
    uint8_t trailer[8];
    uint32_t trailer_seen;
};

// zlib refuses a bad gzip header as soon as it holds two of its bytes (the magic, then the
// method and flags); ISA-L waits for the whole header and lets reserved flags pass. These are
// zlib's checks of the fixed part, at the same moments, so both inflaters refuse the same
// streams with the same kind of error ("truncated" only where zlib says so too).
#define RK_BAD_MAGIC (-101)
#define RK_BAD_METHOD (-102)
#define RK_BAD_FLAGS (-103)

static int check_header(rk_isal_stream *stream) {
    struct inflate_state *state = &stream->state;
    // Bytes [member_in - avail_in, member_in) of the member are still at next_in; each is seen
    // here before ISA-L can take it.
    uint64_t pending_from = stream->member_in - state->avail_in;
    while (stream->header_seen < 4 && stream->header_seen < stream->member_in) {
        uint64_t at = stream->header_seen;
        stream->header[at] = at >= pending_from ? state->next_in[at - pending_from] : 0;
        stream->header_seen++;
        if (at == 1 && (stream->header[0] != 0x1F || stream->header[1] != 0x8B)) return RK_BAD_MAGIC;
        if (at == 3 && stream->header[2] != 8) return RK_BAD_METHOD;
        if (at == 3 && (stream->header[3] & 0xE0)) return RK_BAD_FLAGS;
    }
    return 0;
}

static void start_member(rk_isal_stream *stream) {
    stream->state.crc_flag = ISAL_DEFLATE;
    stream->header_seen = 0;
    stream->phase = PHASE_HEADER;
    header_init_fn(&stream->gzip_header);
    stream->crc = 0;
    stream->trailer_seen = 0;
}

rk_isal_stream *rk_isal_open(int check_crc) {
    if (!rk_isal_available()) return NULL;
    rk_isal_stream *stream = malloc(sizeof *stream);
    if (!stream) return NULL;
    init_fn(&stream->state);
    stream->member_in = 0;
    stream->check_crc = check_crc;
    start_member(stream);
    return stream;
}

void rk_isal_close(rk_isal_stream *stream) { free(stream); }

void rk_isal_set_input(rk_isal_stream *stream, const uint8_t *input, uint32_t count) {
    stream->state.next_in = (uint8_t *)input;
    stream->state.avail_in = count;
    stream->member_in += count;
}

uint32_t rk_isal_avail_in(const rk_isal_stream *stream) { return stream->state.avail_in; }

// The trailer's 8 bytes (CRC-32, then the length mod 2^32, little-endian) as they come: first
// what ISA-L already holds (header bytes it kept, then whole bytes of its bit buffer after the
// final block's last bit), then the input. The bit buffer holds 64 bits at most, so every byte
// in it belongs to the trailer and none to the next member.
static int take_trailer(rk_isal_stream *stream) {
    struct inflate_state *state = &stream->state;
    // Never seen otherwise (ISA-L keeps whole bytes, 0 to 64 bits); refused, not shifted by.
    if (state->read_in_length < 0 || state->read_in_length > 64) return ISAL_INVALID_BLOCK;
    for (int i = 0; i < state->tmp_in_size && stream->trailer_seen < 8; i++)
        stream->trailer[stream->trailer_seen++] = state->tmp_in_buffer[i];
    state->tmp_in_size = 0;
    int32_t spare_bits = state->read_in_length % 8;
    state->read_in >>= spare_bits;
    state->read_in_length -= spare_bits;
    while (state->read_in_length >= 8 && stream->trailer_seen < 8) {
        stream->trailer[stream->trailer_seen++] = (uint8_t)state->read_in;
        state->read_in >>= 8;
        state->read_in_length -= 8;
    }
    while (state->avail_in > 0 && stream->trailer_seen < 8) {
        stream->trailer[stream->trailer_seen++] = *state->next_in++;
        state->avail_in--;
    }
    return 0;
}

static uint32_t load_le32(const uint8_t *bytes) {
    return (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 | (uint32_t)bytes[3] << 24;
}

int rk_isal_inflate(rk_isal_stream *stream, uint8_t *output, uint32_t count, uint32_t *produced) {
    struct inflate_state *state = &stream->state;
    state->next_out = output;
    state->avail_out = count;
    *produced = 0;
    int status = check_header(stream);
    if (status < 0) return status;
    if (stream->phase == PHASE_HEADER) {
        status = read_header_fn(state, &stream->gzip_header);
        if (status < 0) return status;
        if (status > 0) return RK_ISAL_OK;  // the header goes on in the next input
        stream->phase = PHASE_BODY;
    }
    if (stream->phase == PHASE_BODY) {
        status = inflate_fn(state);
        *produced = count - state->avail_out;
        if (stream->check_crc) stream->crc = crc_fn(stream->crc, output, *produced);
        if (status < 0) return status;
        if (state->block_state != ISAL_BLOCK_FINISH) return RK_ISAL_OK;
        stream->phase = PHASE_TRAILER;
    }
    status = take_trailer(stream);
    if (status < 0) return status;
    if (stream->trailer_seen < 8) return RK_ISAL_OK;
    // Both are "incorrect data check", as ISA-L's own gzip mode reports either.
    if (stream->check_crc && load_le32(stream->trailer) != stream->crc) return ISAL_INCORRECT_CHECKSUM;
    if (load_le32(stream->trailer + 4) != state->total_out) return ISAL_INCORRECT_CHECKSUM;
    return RK_ISAL_MEMBER_END;
}

uint32_t rk_isal_member_crc(const rk_isal_stream *stream) { return load_le32(stream->trailer); }

uint32_t rk_isal_crc32(uint32_t crc, const uint8_t *bytes, uint64_t count) {
    // Loaded here too: a caller may reach this before any inflater loaded the library (a test
    // that made a header's CRC first called through a null pointer).
    if (!rk_isal_available()) return (uint32_t)crc32_z(crc, bytes, (size_t)count);
    return crc_fn(crc, bytes, count);
}

void rk_isal_next_member(rk_isal_stream *stream) {
    uint8_t *next_in = stream->state.next_in;
    uint32_t avail_in = stream->state.avail_in;
    reset_fn(&stream->state);
    stream->state.next_in = next_in;
    stream->state.avail_in = avail_in;
    stream->member_in = avail_in;
    start_member(stream);
}

const char *rk_isal_message(int status) {
    switch (status) {
    case RK_BAD_MAGIC: return "incorrect header check";
    case RK_BAD_METHOD: return "unknown compression method";
    case RK_BAD_FLAGS: return "unknown header flags set";
    case ISAL_INVALID_BLOCK: return "invalid block";
    case ISAL_INVALID_SYMBOL: return "invalid code";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    case ISAL_NEED_DICT: return "need dictionary";
    default: return "unknown error";
    }
}

#else

// Built without ISA-L's header: zlib only.
int rk_isal_available(void) { return 0; }
int rk_isal_built_in(void) { return 0; }
rk_isal_stream *rk_isal_open(int check_crc) { (void)check_crc; return NULL; }
void rk_isal_close(rk_isal_stream *stream) { (void)stream; }
void rk_isal_set_input(rk_isal_stream *stream, const uint8_t *input, uint32_t count) {
    (void)stream; (void)input; (void)count;
}
uint32_t rk_isal_avail_in(const rk_isal_stream *stream) { (void)stream; return 0; }
int rk_isal_inflate(rk_isal_stream *stream, uint8_t *output, uint32_t count, uint32_t *produced) {
    (void)stream; (void)output; (void)count;
    *produced = 0;
    return -1;
}
void rk_isal_next_member(rk_isal_stream *stream) { (void)stream; }
uint32_t rk_isal_member_crc(const rk_isal_stream *stream) { (void)stream; return 0; }
uint32_t rk_isal_crc32(uint32_t crc, const uint8_t *bytes, uint64_t count) {
    return (uint32_t)crc32_z(crc, bytes, (size_t)count);
}
const char *rk_isal_message(int status) { (void)status; return "ISA-L not built in"; }

#endif
