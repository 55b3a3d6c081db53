/* The null system call as lmbench's lat_syscall null and the reference: a C loop of
 * syscall(SYS_getppid) (never the libc wrapper). Prints the median of 11 batches of
 * ITERS calls in ns per call. Usage: lat_syscall [iters per batch, default 1000000] */
#include "common.h"
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 1000000;
    double v[11];
    for (int i = 0; i < 100000; i++) syscall(SYS_getppid); /* warm-up */
    for (int r = 0; r < 11; r++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < iters; i++) syscall(SYS_getppid);
        v[r] = (double)(now_ns() - t0) / (double)iters;
    }
    printf("%.2f\n", median(v, 11));
    return 0;
}
