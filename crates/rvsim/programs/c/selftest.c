/* Self-checking C program: libc (picolibc), 64-bit arithmetic from libgcc, recursion, the heap
 * and printf. Prints one line per failure and a summary; exits with the number of failures. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond)                                              \
    do {                                                         \
        if (!(cond)) {                                           \
            printf("FAIL line %d: %s\n", __LINE__, #cond);       \
            failures++;                                          \
        }                                                        \
    } while (0)

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
    return ~crc;
}

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    CHECK(crc32((const uint8_t *)"123456789", 9) == 0xcbf43926u);
    CHECK(fib(20) == 6765);

    volatile uint64_t big = 0x123456789abcdefull;
    volatile uint64_t divisor = 1000003;
    CHECK(big / divisor == 81985283260ull);
    CHECK(big % divisor == 637115ull);
    volatile int32_t neg = -100;
    CHECK(neg / 7 == -14 && neg % 7 == -2);

    int values[] = {5, -3, 9, 0, 12, -8, 7, 1};
    const int sorted[] = {-8, -3, 0, 1, 5, 7, 9, 12};
    qsort(values, 8, sizeof values[0], cmp);
    CHECK(memcmp(values, sorted, sizeof sorted) == 0);

    char *heap = malloc(1000);
    CHECK(heap != NULL);
    if (heap) {
        memset(heap, 'x', 999);
        heap[999] = 0;
        CHECK(strlen(heap) == 999);
        free(heap);
    }

    char text[64];
    snprintf(text, sizeof text, "%d %x %s %c", -42, 0xbeef, "ok", 'z');
    CHECK(strcmp(text, "-42 beef ok z") == 0);

    printf("selftest: %d failures\n", failures);
    return failures;
}
