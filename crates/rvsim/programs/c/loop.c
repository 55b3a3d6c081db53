/* A small loop-heavy program for comparing code size, I-cache behaviour and cycles between
 * builds (rv32im vs rv32imc): bitwise CRC-32, a prime sieve and an integer matrix product,
 * REPEAT times (default 1). Prints a checksum so the builds can be checked against each other. */
#ifdef NO_STDIO
/* Built without a C library (-nostdlib, as for Ripes): main returns the checksum's low byte. */
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
#else
#include <stdint.h>
#include <stdio.h>
#endif

#ifndef REPEAT
#define REPEAT 1
#endif

#define N 16
static uint8_t data[2048];
static uint8_t sieve[8192];
static int32_t a[N][N], b[N][N], c[N][N];

static uint32_t crc32(const uint8_t *p, unsigned n)
{
    uint32_t crc = 0xffffffffu;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
    return ~crc;
}

static unsigned primes(void)
{
    unsigned count = 0;
    for (unsigned i = 0; i < sizeof sieve; i++)
        sieve[i] = 1;
    for (unsigned i = 2; i < sizeof sieve; i++) {
        if (!sieve[i])
            continue;
        count++;
        for (unsigned j = i * i; j < sizeof sieve; j += i)
            sieve[j] = 0;
    }
    return count;
}

static int32_t matmul(void)
{
    int32_t trace = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int32_t s = 0;
            for (int k = 0; k < N; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    for (int i = 0; i < N; i++)
        trace += c[i][i];
    return trace;
}

int main(void)
{
    uint32_t check = 0;
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7 + 3);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = i + 2 * j;
            b[i][j] = i - j;
        }
    for (int r = 0; r < REPEAT; r++) {
        check ^= crc32(data, sizeof data);
        check += primes();
        check += (uint32_t)matmul();
        data[r % sizeof data]++;
    }
#ifdef NO_STDIO
    return (int)(check & 0xff);
#else
    printf("loop: checksum %08lx\n", (unsigned long)check);
    return 0;
#endif
}
