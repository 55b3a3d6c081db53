/* lmbench lat_ctx (lmbench3 src/lat_ctx.c), re-implemented for machines without lmbench:
 * a ring of N processes joined by pipes passes a token; on every receive a process sums
 * its own SIZE-byte array, reading every 8-byte word (lmbench's bread), then writes the
 * token on. Scheduling is left as lat_ctx leaves it (SCHED_OTHER); pinning comes from the caller
 * (taskset -c CPU), inherited by the forked members.
 * Overhead ("ovr" in lat_ctx's output): the same N pipe write+read and N sums in one process
 * on its own pipe, per hop. Per switch = lap time / N − overhead per hop, lat_ctx's result.
 * Prints the median over 11 batches, in µs per switch.
 * Usage: lat_ctx SIZE_BYTES N [laps per batch, default 20000] */
#include "common.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

/* lmbench's bread (lib_timing.c), which lat_ctx calls on every receive and in its overhead
 * loop: sum every long (8-byte word) of the buffer, 128 at a time, then 16, then one by one.
 * (An earlier version here summed ints 16 at a time, which gcc -O2 may vectorize: a
 * different, faster walk than lmbench's and oscost's one load per 8-byte word.) */
/* Scalar, as lmbench builds it (-O) and as oscost's walk is: one load per word.
 * Each inner loop starts a 64-byte boundary, as oscost's (the same instructions, asm there),
 * so its 11 bytes never straddle one, and both sides' loops sit at the same place in a
 * 64-byte line: at 32 mod 64 (this file with align-loops=32, the loop at 0x17a0) the walk was
 * 4-6% slower than at 0 mod 64 on the Intel host of 2026-11-27 (overhead per hop at 64k 2.59
 * against 2.49 us, the figure 0.62-0.64 against 0.68-0.70 us; docs/SWEEP.md). Where gcc put
 * it by default here (0x1778), the 128-word loop straddled one, and on the Intel host of
 * 2026-11-26 that alone made the walk 0.316 ns per word against 0.265 (hot 1 MiB, thread CPU
 * time, medians of 11 rounds;
 * docs/SWEEP.md): a cost of where the compiler happened to place the loop, not of lat_ctx's
 * definition, and one that moves the figure at 1m-2m (the walk's speed sets how much of the
 * refill it hides). */
__attribute__((optimize("no-tree-vectorize", "align-loops=64"))) static long bread(void *buf,
                                                                                   size_t nbytes) {
    long sum = 0;
    long *p = (long *)buf;
    char *end = (char *)buf + nbytes;
    long *next;
    for (next = p + 128; (char *)next <= end; p = next, next += 128)
        for (int k = 0; k < 128; k++) sum += p[k];
    for (next = p + 16; (char *)next <= end; p = next, next += 16)
        for (int k = 0; k < 16; k++) sum += p[k];
    for (next = p + 1; (char *)next <= end; p = next, next++) sum += *p;
    return sum;
}

static int *make_data(size_t bytes) {
    int *d = malloc(bytes ? bytes : sizeof(int));
    if (!d) { perror("malloc"); exit(1); }
    memset(d, 1, bytes);
    return d;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: lat_ctx SIZE_BYTES N [laps]\n"); return 2; }
    size_t size = (size_t)atol(argv[1]);
    int n = atoi(argv[2]);
    long laps = argc > 3 ? atol(argv[3]) : 20000;
    if (n < 2 || n > 64) { fprintf(stderr, "N must be 2..64\n"); return 2; }
    int p[64][2];
    for (int i = 0; i < n; i++)
        if (pipe(p[i])) { perror("pipe"); return 1; }
    pid_t kids[64];
    for (int i = 1; i < n; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            int *d = make_data(size);
            char c;
            for (;;) {
                if (read(p[i - 1][0], &c, 1) != 1) _exit(0);
                sink += bread(d, size);
                if (write(p[i][1], &c, 1) != 1) _exit(0);
            }
        }
    }
    int *d = make_data(size);
    char c = 'x';
    /* Overhead per hop: write+read on an own pipe and one sum. */
    int own[2];
    if (pipe(own)) { perror("pipe"); return 1; }
    double ovr[11], sw[11];
    for (int r = -1; r < 11; r++) { /* r = -1: warm-up */
        uint64_t t0 = now_ns();
        for (long l = 0; l < laps; l++)
            for (int i = 0; i < n; i++) {
                if (write(own[1], &c, 1) != 1 || read(own[0], &c, 1) != 1) return 1;
                sink += bread(d, size);
            }
        double o = (double)(now_ns() - t0) / (double)laps / n;
        t0 = now_ns();
        for (long l = 0; l < laps; l++) {
            if (write(p[0][1], &c, 1) != 1 || read(p[n - 1][0], &c, 1) != 1) return 1;
            sink += bread(d, size);
        }
        double hop = (double)(now_ns() - t0) / (double)laps / n;
        if (r >= 0) { ovr[r] = o; sw[r] = hop - o; }
    }
    for (int i = 1; i < n; i++) kill(kids[i], SIGKILL);
    while (wait(NULL) > 0) {}
    double o = median(ovr, 11);
    printf("size=%zuk ovr=%.2f\n%d %.3f\n", size >> 10, o / 1000.0, n, median(sw, 11) / 1000.0);
    return 0;
}
