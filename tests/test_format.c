/* HsFormatG17 (bvp/sys/format.c) against snprintf's "%.17g": the same string for numbers of every magnitude
 * (random bit patterns: the fallback too), for random numbers in the fast path's range (1e-7 .. 1e18,
 * log-uniform, both signs), and for the rounding's edge cases (powers of ten and their neighbours, halves of
 * the last digit, 9.99..9 carrying into the exponent, integers). Prints the two times per number (not
 * asserted: bench/README.md). Exit status 1 on the first difference. */
#include "../bvp/sys/hssys.h"

#include <math.h>
#include <stdint.h>
#include <time.h>

static uint64_t state = 88172645463325252ULL;

static uint64_t Next(void) /* xorshift64 */
{
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

static int Check(double x, long *n)
{
  char a[64], b[64];
  snprintf(a, sizeof a, "%.17g", x);
  HsFormatG17(x, b);
  (*n)++;
  if (strcmp(a, b)) {
    printf("FAIL: %a: snprintf \"%s\", HsFormatG17 \"%s\"\n", x, a, b);
    return 1;
  }
  return 0;
}

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void)
{
  long   n = 0, reps = 2000000;
  double t0, t1, t2, sink = 0;
  char   buf[64];

  for (long i = 0; i < 5000000; i++) { /* every magnitude */
    uint64_t bits = Next();
    double   x;
    memcpy(&x, &bits, sizeof x);
    if (Check(x, &n))
      return 1;
  }
  for (long i = 0; i < 5000000; i++) { /* the fast path's range and a little beyond */
    double x = pow(10, -7 + 25 * ((double)(Next() >> 11) / 9007199254740992.0));
    if (Check(Next() & 1 ? -x : x, &n))
      return 1;
  }
  for (int e = -30; e <= 30; e++) { /* powers of ten, neighbours, 9.99..9, halves of the 17th digit */
    double p = pow(10, e), c[] = {p, nextafter(p, 0), nextafter(p, INFINITY), 9.9999999999999999 * p / 10,
                                  nextafter(9.9999999999999999 * p / 10, INFINITY), 1.00000000000000005 * p,
                                  1.5 * p, 0.1 * p, p / 3, 2 * p / 3};
    for (size_t j = 0; j < sizeof c / sizeof c[0]; j++)
      if (Check(c[j], &n) || Check(-c[j], &n))
        return 1;
  }
  for (long i = 0; i < 1000000; i++) /* integers, and m / 2^k with few bits (exact halves) */
    if (Check((double)(i * 7919), &n) || Check((double)(Next() >> 40) / (double)(1ULL << (Next() % 60)), &n))
      return 1;
  if (Check(0.0, &n) || Check(-0.0, &n) || Check(INFINITY, &n) || Check(-INFINITY, &n) || Check(NAN, &n) ||
      Check(5e-324, &n) || Check(1.7976931348623157e308, &n) || Check(2.2250738585072014e-308, &n))
    return 1;
  t0 = Now();
  for (long i = 0; i < reps; i++)
    sink += snprintf(buf, sizeof buf, "%.17g", 0.1 + i * 1.2345678e-3);
  t1 = Now();
  for (long i = 0; i < reps; i++)
    sink += HsFormatG17(0.1 + i * 1.2345678e-3, buf);
  t2 = Now();
  printf("format: %ld numbers as snprintf writes them; per number %.0f ns (snprintf) against %.0f ns (%.0f characters "
         "each way)\n", n, 1e9 * (t1 - t0) / reps, 1e9 * (t2 - t1) / reps, sink / 2 / reps);
  return 0;
}
