/* The I-cache quiz's kind of program: a small kernel called ten times from main, built as
 * the lab builds it (no start-up code: main is entered with ra = 0 and returns there). */
#define N 256

int a[N], b[N];

__attribute__((noinline)) int kernel(void)
{
    int s = 0;
    for (int i = 0; i < N; i++) {
        a[i] = a[i] + b[i] * i;
        s += a[i] ^ (s >> 3);
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
