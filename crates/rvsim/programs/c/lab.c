/* The lab's own figures: a program of the course's shape (kernel() called ten times from main,
 * no start-up code, main returns to address 0) whose loop is 14 instructions run 1024 times a
 * call: 56 bytes in rv32im and 40 in rv32imc, so that it does not fit a 32-byte I-cache in
 * either encoding. The loop is aligned to 8 bytes (one 2-word line), so that where the linker
 * puts the program (the lab's build, or `sim sweep`'s) does not move it across lines; the
 * rv32imc build pads with two nops, run once a call. Under Ripes' 5-stage processor with 4
 * lines of 2 words it hits 0.5000 / 0.7498 of its fetches (the course's program: 0.5000 /
 * 0.7499); see docs/RIPES.md for the rest of the table. */
#define N 1024

int a[N], b[N];

__attribute__((noinline, optimize("align-loops=8"))) int kernel(void)
{
    int s = 0;
    for (int n = N, i = 0; n != 0; n--, i++) {
        int t = a[i] * b[i] + n;
        a[i] = t;
        s += (t ^ (s >> 3)) - (t >> 5);
    }
    return s;
}

int main(void)
{
    int t = 0;
    for (int r = 0; r < 10; r++)
        t += kernel();
    return t & 0xff;
}
