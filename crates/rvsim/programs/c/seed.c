/* A course-style program, built the way a course or Ripes user builds it:
 *   riscv64-unknown-elf-gcc seed.c -O2 -march=rv32imc -mabi=ilp32 -nostdlib -o seed.elf
 * No start-up code and no C library: the linker's default address (0x10000), the entry point
 * is the first function (main, which -O2 places in .text.startup, ahead of .text), and main
 * returns through ra = 0 with its result in a0. */

#define N 64

int data[N];

/* Kept out of line so the program has a second function of its own. */
__attribute__((noinline)) static int checksum(const int *a, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s = s * 31 + a[i];
    return s;
}

int main(void)
{
    for (int round = 0; round < 50; round++)
        for (int i = 0; i < N; i++)
            data[i] = data[i] * 3 + i * round + (data[(i + 7) % N] >> 2);
    return checksum(data, N) & 0x7f;
}
