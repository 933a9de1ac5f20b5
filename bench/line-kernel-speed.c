// The line kernel alone, in one process: `rk_scan_line` at the CPU's own level over every line
// of a file held in memory, as `JSONLineScanner` calls it for a flat record (the wanted fields
// 0x786), layouts on. No read, no Swift, no tally: what a change to Sources/CKernels costs a
// line, at a noise a whole run cannot reach. Prints the best of ROUNDS passes, in seconds.
// Built by line-kernel-speed.sh against one revision's CKernels; revisions before the layouts
// had their own header (line_layout.h) kept their state in `rk_line_templates`.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "line_kernel.h"
#if __has_include("line_layout.h")
#include "line_layout.h"
typedef rk_line_layouts kernel_state;
#else
typedef rk_line_templates kernel_state;
#endif

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: line-kernel-speed FILE ROUNDS\n");
        return 64;
    }
    FILE *file = fopen(argv[1], "r");
    if (file == NULL || fseek(file, 0, SEEK_END) != 0) {
        perror(argv[1]);
        return 66;
    }
    long size = ftell(file);
    rewind(file);
    // The kernel reads whole 64-byte blocks past a line's end: the file is followed by zeros.
    uint8_t *text = aligned_alloc(64, (size_t)size + 4096);
    if (fread(text, 1, (size_t)size, file) != (size_t)size) {
        perror(argv[1]);
        return 66;
    }
    memset(text + size, 0, 4096);
    const uint8_t *spans[RK_SPANS];
    uint32_t found;
    double best = 1e9;
    for (int round = 0; round < atoi(argv[2]); round++) {
        kernel_state *state = calloc(1, sizeof *state);
        long accepted = 0;
        double start = seconds();
        for (const uint8_t *line = text; line < text + size;) {
            const uint8_t *end = rk_scan_line(line, 0x786, spans, &found, 0, state);
            if (end != NULL) accepted++;
            else end = memchr(line, '\n', (size_t)(text + size - line));
            line = end + 1;
        }
        double took = seconds() - start;
        if (took < best) best = took;
        if (round == 0) fprintf(stderr, "%ld lines accepted\n", accepted);
        free(state);
    }
    printf("%.4f\n", best);
    return 0;
}
