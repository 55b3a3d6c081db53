/* lmbench lat_pagefault (lmbench3 src/lat_pagefault.c), re-implemented: map a file that is
 * entirely in the page cache, read one word of every page in a random permutation of the
 * pages, unmap; the result is the time per PAGE (not per fault: with fault-around and large
 * folios one fault maps many pages). Prints the median of ROUNDS rounds in ns per page.
 * lmbench's own file is usually old and clean; this one is synced first to match.
 * Prints a second line, "pages_per_fault X", from getrusage's minor faults over the rounds.
 * The time per page depends on the file's page-cache history far more than on the pages per
 * fault: measured on a 2-vCPU KVM guest (Linux 6.18, ext4), the first process after the file
 * was written read 82-117 ns/page, the next one 36-65, and after the cache was dropped and the
 * file re-read with read(), 21 - all at 160-180 pages per fault. bench/anchors.sh therefore
 * runs one discarded pass first, as oscost's median comes from many passes over its file.
 * Usage: lat_pagefault FILE [rounds, default 11] (the file is created by the caller) */
#include "common.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: lat_pagefault FILE [rounds]\n"); return 2; }
    int rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (rounds < 1 || rounds > 101) rounds = 11;
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    struct stat st;
    fstat(fd, &st);
    long ps = sysconf(_SC_PAGESIZE);
    size_t npages = (size_t)st.st_size / (size_t)ps;
    if (npages < 2) { fprintf(stderr, "file too small\n"); return 2; }
    /* Bring the whole file into the page cache first, clean: a freshly written file's pages
     * are dirty or under writeback, and faults on them map fewer pages (measured here: about
     * twice the time per page right after writing the file). */
    fsync(fd);
    char *buf = malloc(1 << 20);
    while (read(fd, buf, 1 << 20) > 0) {}
    size_t *order = malloc(npages * sizeof *order);
    for (size_t i = 0; i < npages; i++) order[i] = i;
    srand(1);
    for (size_t i = npages - 1; i > 0; i--) { /* Fisher-Yates, like lmbench's permutation */
        size_t j = (size_t)rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    double v[101];
    volatile int sum = 0;
    struct rusage ru0, ru1;
    for (int r = -1; r < rounds; r++) {
        if (r == 0) getrusage(RUSAGE_SELF, &ru0);
        char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 1; }
        uint64_t t0 = now_ns();
        for (size_t i = 0; i < npages; i++) sum += p[order[i] * (size_t)ps];
        uint64_t t = now_ns() - t0;
        munmap(p, (size_t)st.st_size);
        if (r >= 0) v[r] = (double)t / (double)npages;
    }
    getrusage(RUSAGE_SELF, &ru1);
    long faults = ru1.ru_minflt - ru0.ru_minflt;
    printf("%.2f\n", median(v, rounds));
    /* Evidence like oscost's: pages mapped per fault (large folios and fault-around map many). */
    printf("pages_per_fault %.1f\n", faults > 0 ? (double)npages * rounds / (double)faults : 0.0);
    return 0;
}
