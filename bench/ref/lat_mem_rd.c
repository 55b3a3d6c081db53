/* lmbench lat_mem_rd (lmbench3 src/lat_mem_rd.c), re-implemented with its default chain
 * (stride_initialize): every STRIDE-th byte of a buffer points to the next one forward, the
 * last back to the first, and the loop follows the chain with dependent loads (unrolled).
 * Hardware prefetchers can follow a forward stride, which is why this reads lower than a
 * random chase at sizes beyond the caches. Sizes from 4 KiB to MAX_MB in powers of two and
 * the 1.5x steps between; prints "size_MB ns_per_load" lines as lat_mem_rd does.
 * Usage: lat_mem_rd MAX_MB [stride, default 64] */
#include "common.h"
#include <stdio.h>

#define ONE p = (char **)*p;
#define TEN ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE
#define HUNDRED TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN

static double run(char *buf, size_t range, size_t stride) {
    size_t i;
    for (i = stride; i < range; i += stride) *(char **)&buf[i - stride] = &buf[i];
    *(char **)&buf[i - stride] = &buf[0];
    char **p = (char **)buf;
    double v[11];
    long loads = 100000; /* per batch; rescaled after the first to about 5 ms */
    for (int r = -2; r < 11; r++) {
        uint64_t t0 = now_ns();
        for (long k = 0; k < loads / 100; k++) { HUNDRED }
        uint64_t t = now_ns() - t0;
        if (r == -2) {
            double per = (double)t / (double)loads;
            loads = (long)(5e6 / (per > 0.1 ? per : 0.1)) / 100 * 100 + 100;
        }
        if (r >= 0) v[r] = (double)t / (double)loads;
    }
    if (p == NULL) printf("impossible\n");
    return median(v, 11);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: lat_mem_rd MAX_MB [stride]\n"); return 2; }
    size_t max = (size_t)(atof(argv[1]) * 1024 * 1024);
    size_t stride = argc > 2 ? (size_t)atol(argv[2]) : 64;
    char *buf = malloc(max);
    if (!buf) { perror("malloc"); return 1; }
    printf("\"stride=%zu\n", stride);
    for (size_t s = 4096; s <= max; s *= 2) {
        printf("%.5f %.3f\n", s / 1048576.0, run(buf, s, stride));
        size_t mid = s + s / 2;
        if (mid <= max) printf("%.5f %.3f\n", mid / 1048576.0, run(buf, mid, stride));
    }
    return 0;
}
