// ISA-L's inflate behind a small interface, loaded with dlopen: Debian ships ISA-L as a shared
// library only, and the bare binary must still run (with zlib) where it is not installed.
#include "isal_inflate.h"

#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<isa-l/igzip_lib.h>)
#define RK_HAVE_ISAL_HEADER 1
#endif
#endif

#if RK_HAVE_ISAL_HEADER
#include <dlfcn.h>
#include <pthread.h>
#include <isa-l/igzip_lib.h>

static void (*init_fn)(struct inflate_state *);
static void (*reset_fn)(struct inflate_state *);
static int (*inflate_fn)(struct inflate_state *);
static int loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    // RTLD_LOCAL: its symbols serve us only. The handle is kept for the life of the process.
    void *library = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    init_fn = (void (*)(struct inflate_state *))dlsym(library, "isal_inflate_init");
    reset_fn = (void (*)(struct inflate_state *))dlsym(library, "isal_inflate_reset");
    inflate_fn = (int (*)(struct inflate_state *))dlsym(library, "isal_inflate");
    loaded = init_fn && reset_fn && inflate_fn;
}

int rk_isal_available(void) {
    pthread_once(&load_once, load);
    return loaded;
}

struct rk_isal_stream {
    struct inflate_state state;
    /// Compressed bytes of the current member handed to ISA-L so far (consumed or pending).
    uint64_t member_in;
    /// The member's first four bytes as they arrive, for `check_header`.
    uint8_t header[4];
    uint32_t header_seen;
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

rk_isal_stream *rk_isal_open(void) {
    if (!rk_isal_available()) return NULL;
    rk_isal_stream *stream = malloc(sizeof *stream);
    if (!stream) return NULL;
    init_fn(&stream->state);
    // The gzip wrapper only, with its CRC-32 and length checked, as zlib's 15 + 16 does.
    stream->state.crc_flag = ISAL_GZIP;
    stream->member_in = 0;
    stream->header_seen = 0;
    return stream;
}

void rk_isal_close(rk_isal_stream *stream) { free(stream); }

void rk_isal_set_input(rk_isal_stream *stream, const uint8_t *input, uint32_t count) {
    stream->state.next_in = (uint8_t *)input;
    stream->state.avail_in = count;
    stream->member_in += count;
}

uint32_t rk_isal_avail_in(const rk_isal_stream *stream) { return stream->state.avail_in; }

int rk_isal_inflate(rk_isal_stream *stream, uint8_t *output, uint32_t count, uint32_t *produced) {
    stream->state.next_out = output;
    stream->state.avail_out = count;
    *produced = 0;
    int status = check_header(stream);
    if (status < 0) return status;
    status = inflate_fn(&stream->state);
    *produced = count - stream->state.avail_out;
    if (status < 0) return status;
    if (stream->state.block_state == ISAL_BLOCK_FINISH) return RK_ISAL_MEMBER_END;
    return RK_ISAL_OK;
}

void rk_isal_next_member(rk_isal_stream *stream) {
    uint8_t *next_in = stream->state.next_in;
    uint32_t avail_in = stream->state.avail_in;
    reset_fn(&stream->state);
    stream->state.crc_flag = ISAL_GZIP;
    stream->state.next_in = next_in;
    stream->state.avail_in = avail_in;
    stream->member_in = avail_in;
    stream->header_seen = 0;
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
rk_isal_stream *rk_isal_open(void) { return NULL; }
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
const char *rk_isal_message(int status) { (void)status; return "ISA-L not built in"; }

#endif
