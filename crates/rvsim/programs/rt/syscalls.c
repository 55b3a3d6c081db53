/* The few system hooks picolibc needs under rvsim: stdout/stderr write through the simulator's
 * program ABI (ecall a7=64, like Linux write), and _exit ends the run (ecall a7=93). */
#include <stdio.h>
#include <stdlib.h>

static long rvsim_ecall3(long n, long a, long b, long c)
{
    register long a0 __asm__("a0") = a;
    register long a1 __asm__("a1") = b;
    register long a2 __asm__("a2") = c;
    register long a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
    return a0;
}

static int rvsim_putc(char c, FILE *file)
{
    (void)file;
    rvsim_ecall3(64, 1, (long)&c, 1);
    return (unsigned char)c;
}

static FILE rvsim_stdout = FDEV_SETUP_STREAM(rvsim_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdin = &rvsim_stdout;
FILE *const stdout = &rvsim_stdout;
FILE *const stderr = &rvsim_stdout;

void _exit(int status)
{
    for (;;)
        rvsim_ecall3(93, status, 0, 0);
}
