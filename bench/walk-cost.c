/* What a lat_ctx walk costs by where its array lies (issue 27; docs/SWEEP.md, "Why 1m and 2m
 * read differently"). The walk is lat_ctx's and oscost's: one load and add per 8-byte word,
 * in address order, repeated; timed by the thread's CPU time (waiting does not count), best
 * or median of rounds.
 *   1. By size, 16 KiB to 64 MiB: which cache level holds the array.
 *   2. By where its pages lie (root: page frames from /proc/self/pagemap): 1 MiB of pages
 *      of a 32 MiB pool, moved into one contiguous virtual range (mremap keeps the frames):
 *      physically contiguous; every colour of the L2 its share (fits its ways); half the
 *      colours twice their ways (every page beyond them); random.
 * Build and run pinned: cc -O2 -o /tmp/walk-cost bench/walk-cost.c && taskset -c 1 /tmp/walk-cost */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define WORDS (PAGE / 8)
#define POOL 8192 /* pages: 32 MiB */
#define NP 256    /* pages walked in part 2: 1 MiB */

static volatile long sink;

static double thread_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

__attribute__((noinline, optimize("no-tree-vectorize"))) static long walk(const long *p, size_t n) {
    long s = 0;
    for (size_t k = 0; k < n; k++) s += p[k];
    return s;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long sysfs_long(const char *path) {
    FILE *f = fopen(path, "r");
    long v = 0;
    char unit = 0;
    if (!f) return 0;
    if (fscanf(f, "%ld%c", &v, &unit) < 1) v = 0;
    fclose(f);
    return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
}

static void *map(size_t bytes) {
    void *p = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(p, bytes, MADV_NOHUGEPAGE); /* 4 KiB pages, as the sweep's working sets */
    for (size_t k = 0; k < bytes / 8; k++) ((long *)p)[k] = 1;
    return p;
}

static const uint64_t *pfn_of;

static uint64_t frame(int i) { return pfn_of[i] & ((1ULL << 55) - 1); }

static int by_frame(const void *a, const void *b) {
    uint64_t x = frame(*(const int *)a), y = frame(*(const int *)b);
    return x < y ? -1 : x > y;
}

/* Move pool pages `pick` (indices) into a fresh contiguous range, in that order. */
static char *assemble(char *pool, const int *pick, char *used) {
    char *area = mmap(0, (size_t)NP * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) { perror("mmap"); exit(1); }
    for (int k = 0; k < NP; k++) {
        used[pick[k]] = 1;
        if (mremap(pool + (size_t)pick[k] * PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                   area + (size_t)k * PAGE) == MAP_FAILED) { perror("mremap"); exit(1); }
    }
    return area;
}

int main(void) {
    printf("1. by size (best of 5 rounds, ns per word):\n");
    for (size_t b = 16 << 10; b <= (size_t)64 << 20; b *= 4) {
        long *p = map(b);
        int reps = (int)(((size_t)256 << 20) / b);
        double best = 1e9;
        for (int r = 0; r < 5; r++) {
            double t0 = thread_ns();
            for (int w = 0; w < reps; w++) sink += walk(p, b / 8);
            double t = (thread_ns() - t0) / reps / (b / 8);
            if (t < best) best = t;
        }
        printf("  %6zu KiB  %.3f\n", b >> 10, best);
        munmap(p, b);
    }
    long l2 = sysfs_long("/sys/devices/system/cpu/cpu0/cache/index2/size");
    long ways = sysfs_long("/sys/devices/system/cpu/cpu0/cache/index2/ways_of_associativity");
    int colours = l2 > 0 && ways > 0 ? (int)(l2 / ways / PAGE) : 0;
    if (colours < 2 || colours > 64 || NP % colours || NP / colours > ways) {
        printf("2. by page colour: skipped (L2 %ld B, %ld ways: %d colours)\n", l2, ways, colours);
        return 0;
    }
    char *m = map((size_t)POOL * PAGE);
    static uint64_t pm[POOL];
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0 || pread(fd, pm, sizeof pm, (off_t)((uintptr_t)m / PAGE * 8)) != sizeof pm ||
        !(pm[0] & ((1ULL << 55) - 1))) {
        printf("2. by page colour: skipped (page frames need root)\n");
        return 0;
    }
    /* Each set is 1 MiB of pool pages moved (mremap keeps their frames) into one contiguous
     * virtual range, so it is walked exactly as a working set is; the sets share no page. */
    static char used[POOL];
    static int order[POOL];
    for (int i = 0; i < POOL; i++) order[i] = i;
    pfn_of = pm;
    qsort(order, POOL, sizeof(int), by_frame);
    char *sets[4] = {0};
    int pick[NP];
    /* physically contiguous: a run of NP consecutive frames, if the pool has one */
    for (int i = 0, run = 1; i + 1 < POOL && !sets[0]; i++) {
        run = frame(order[i + 1]) == frame(order[i]) + 1 ? run + 1 : 1;
        if (run == NP) {
            for (int k = 0; k < NP; k++) pick[k] = order[i + 2 - NP + k];
            sets[0] = assemble(m, pick, used);
        }
    }
    /* every colour its share, in frame order within a colour, colours interleaved */
    int share = NP / colours, got = 0;
    int count[64] = {0};
    for (int i = 0; i < POOL && got < NP; i++) {
        int c = (int)(frame(order[i]) % colours);
        if (!used[order[i]] && count[c] < share) { count[c]++; pick[got++] = order[i]; }
    }
    if (got == NP) sets[1] = assemble(m, pick, used);
    /* half the colours, twice their ways each */
    got = 0;
    for (int c = 0; c < 64; c++) count[c] = 0;
    for (int i = 0; i < POOL && got < NP; i++) {
        int c = (int)(frame(order[i]) % colours);
        if (!used[order[i]] && c < colours / 2 && count[c] < 2 * share) { count[c]++; pick[got++] = order[i]; }
    }
    if (got == NP) sets[2] = assemble(m, pick, used);
    /* random unused pages */
    srand(1);
    got = 0;
    while (got < NP) {
        int i = rand() % POOL;
        if (!used[i]) { used[i] = 1; pick[got++] = i; }
    }
    sets[3] = assemble(m, pick, used);
    const char *name[4] = {"physically contiguous", "every colour its share (fits the ways)",
                           "half the colours, twice their ways", "random pages of the pool"};
    double r[4][9];
    for (int round = 0; round < 9; round++)
        for (int s = 0; s < 4; s++) {
            if (!sets[s]) continue;
            const long *p = (const long *)sets[s];
            for (int w = 0; w < 20; w++) sink += walk(p, NP * WORDS);
            double t0 = thread_ns();
            for (int w = 0; w < 200; w++) sink += walk(p, NP * WORDS);
            r[s][round] = (thread_ns() - t0) / 200 / (NP * (double)WORDS);
        }
    printf("2. 1 MiB by where its pages lie (L2 %ld KiB, %ld ways, %d colours; median of 9 "
           "rounds (min-max), ns per word):\n", l2 >> 10, ways, colours);
    for (int s = 0; s < 4; s++) {
        if (!sets[s]) { printf("  %-40s no such pages in the pool\n", name[s]); continue; }
        qsort(r[s], 9, sizeof(double), by_value);
        printf("  %-40s %.3f (%.3f-%.3f)\n", name[s], r[s][4], r[s][0], r[s][8]);
    }
    return 0;
}
