// What reading a managed export costs before any entity is looked at, against what reading the
// same events as NDJSON costs before any line is: one thread, the reader's own pread of 256 KiB
// (LogRecordReader.chunkBlocks), then its C header scan, then its CRC-32C kernel. CPU seconds
// (user + sys) per step, the median of ROUNDS alternated rounds. The export's floor against
// NDJSON's whole run is what a per-event comparison of the two can at best come to.
//
//   export-floor ROUNDS NDJSON_FILE EXPORT_OUTPUT_FILE...
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "crc32c.h"

enum { BLOCK = 32768, CHUNK = 8 * BLOCK, STEPS = 4 };

static const char *step_names[STEPS] = {
    "NDJSON: pread", "export: pread", "export: pread + headers", "export: pread + headers + CRC-32C"};

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static unsigned long long read_file(const char *path, int step, unsigned long long *fragments_seen) {
    static unsigned char chunk[CHUNK] __attribute__((aligned(64)));
    static rk_log_fragment fragments[BLOCK / 7 + 1];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        exit(66);
    }
    unsigned long long bad = 0;
    off_t offset = 0;
    ssize_t n;
    while ((n = pread(fd, chunk, CHUNK, offset)) > 0) {
        offset += n;
        if (step < 2) continue;
        for (ssize_t b = 0; b < n; b += BLOCK) {
            size_t size = (size_t)(n - b < BLOCK ? n - b : BLOCK), count = 0;
            rk_log_scan_headers(chunk + b, size, fragments, &count);
            *fragments_seen += count;
            if (step < 3) continue;
            rk_log_fragment_checksums(chunk + b, fragments, count);
            for (size_t i = 0; i < count; i++) bad += fragments[i].checksum != fragments[i].stored;
        }
    }
    close(fd);
    return bad;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: export-floor ROUNDS NDJSON_FILE EXPORT_OUTPUT_FILE...\n");
        return 64;
    }
    int rounds = atoi(argv[1]);
    double *times = calloc((size_t)(rounds * STEPS), sizeof *times);
    unsigned long long fragments = 0, bad = 0;
    for (int round = 0; round < rounds; round++) {
        for (int step = 0; step < STEPS; step++) {
            double start = cpu_seconds();
            if (step == 0) {
                read_file(argv[2], step, &fragments);
            } else {
                for (int f = 3; f < argc; f++) bad += read_file(argv[f], step, &fragments);
            }
            times[step * rounds + round] = cpu_seconds() - start;
        }
    }
    for (int step = 0; step < STEPS; step++) {
        qsort(times + step * rounds, (size_t)rounds, sizeof *times, by_value);
        printf("| %s | %.3f |\n", step_names[step], times[step * rounds + rounds / 2]);
    }
    if (bad) fprintf(stderr, "export-floor: %llu fragments with a checksum mismatch\n", bad);
    return bad ? 65 : 0;
}
