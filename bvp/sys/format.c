/* hamshoot: doubles as printf's "%.17g" writes them, faster (the output files' numbers).
 *
 * trajectory.csv and intervals.csv hold about 25 numbers per node in "%.17g" (exact on reading back).
 * glibc formats each through its multi-precision path: at N = 1e6 (kepler) the printf family was 10 % of the
 * whole process in perf (4 s of 41), at N = 1e5 11 % (0.35 s). For the numbers of that output (magnitudes
 * 1e-6 .. 1e17) the 17 significant digits come exactly from 128-bit integers: x = m 2^E, and
 * round(x 10^k) with k = 16 - floor(log10 |x|) <= 22 is m 10^k (< 2^127) shifted right by -E, rounded half
 * to even on the remainder, as glibc rounds the exact binary value. Other numbers (zero, subnormal, inf,
 * nan, magnitudes outside that range) go to snprintf. Test format_unit: the same strings as snprintf for 1.2e7
 * numbers of every magnitude and the rounding's edge cases; bench/README.md: the time.
 */
#include "hssys.h"

#include <stdint.h>
#include <string.h>

#define HS_G17_MAX_K 22 /* 10^22 < 2^74: m 10^k < 2^127 */

static const uint64_t hs_pow10[] = {1ULL,
                                    10ULL,
                                    100ULL,
                                    1000ULL,
                                    10000ULL,
                                    100000ULL,
                                    1000000ULL,
                                    10000000ULL,
                                    100000000ULL,
                                    1000000000ULL,
                                    10000000000ULL,
                                    100000000000ULL,
                                    1000000000000ULL,
                                    10000000000000ULL,
                                    100000000000000ULL,
                                    1000000000000000ULL,
                                    10000000000000000ULL,
                                    100000000000000000ULL,
                                    1000000000000000000ULL};

/* m 10^k 2^E = q + r / 2^-E (E < 0) or q (E >= 0), exactly; 0 if it does not fit. */
static int Scaled(uint64_t m, int k, int E, unsigned __int128 *q, unsigned __int128 *r)
{
  unsigned __int128 p = m;

  if (k < 0 || k > HS_G17_MAX_K || E >= 64 || E <= -127)
    return 0;
  p *= hs_pow10[k < 18 ? k : 18];
  if (k > 18)
    p *= hs_pow10[k - 18];
  if (E >= 0) {
    if (p >> (127 - E))
      return 0;
    *q = p << E, *r = 0;
  } else
    *q = p >> -E, *r = p - (*q << -E);
  return 1;
}

/* The 17 significant digits d (an integer in [1e16, 1e17)) and the decimal exponent X of |x| = d 10^(X-16) as
   "%.17g" rounds them; 0 where outside the exact range (the caller then uses snprintf). */
static int Digits(double x, uint64_t *d, int *X)
{
  uint64_t          bits, m;
  int               be, E, e10, k;
  unsigned __int128 q, r, half;

  memcpy(&bits, &x, sizeof bits);
  be = (int)((bits >> 52) & 0x7ff);
  if (be == 0 || be == 0x7ff) /* zero, subnormal, inf, nan */
    return 0;
  m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52), E = be - 1075;
  e10 = (int)(((int64_t)(E + 52) * 78913) >> 18); /* floor(log10 2^(E+52)): |x| in [2^(E+52), 2^(E+53)) */
  k   = 16 - e10;
  if (!Scaled(m, k, E, &q, &r))
    return 0;
  if (q >= hs_pow10[17] || q < hs_pow10[16]) { /* floor(log10 |x|) is e10 + 1 (or, by the estimate's round-off, - 1) */
    int up = q >= hs_pow10[17];
    e10 += up ? 1 : -1, k -= up ? 1 : -1;
    if (!Scaled(m, k, E, &q, &r) || q >= hs_pow10[17] || q < hs_pow10[16])
      return 0;
  }
  if (E < 0) { /* half to even on the exact remainder */
    half = (unsigned __int128)1 << (-E - 1);
    if (r > half || (r == half && (q & 1)))
      q++;
  }
  if (q == hs_pow10[17]) /* 9.99..95 up to 10 */
    q = hs_pow10[16], e10++;
  *d = (uint64_t)q, *X = e10;
  return 1;
}

/*@ HsFormatG17 - writes x as snprintf(buf, n, "%.17g", x) does, faster for magnitudes 1e-6 .. 1e17 (file head).

  Input: x; buf of at least 32 characters. Returns the length written (the terminating 0 not counted).
  Not collective. @*/
int HsFormatG17(double x, char *buf)
{
  uint64_t d;
  int      X, n = 0, last;
  char     dig[17];

  if (!Digits(x, &d, &X))
    return snprintf(buf, 32, "%.17g", x);
  for (int i = 16; i >= 0; i--, d /= 10)
    dig[i] = (char)('0' + d % 10);
  for (last = 16; last > 0 && dig[last] == '0'; last--) /* %g drops trailing zeros */
    ;
  if (x < 0)
    buf[n++] = '-';
  if (X < -4 || X >= 17) { /* d.ddd e+XX */
    buf[n++] = dig[0];
    if (last > 0)
      buf[n++] = '.';
    for (int i = 1; i <= last; i++)
      buf[n++] = dig[i];
    n += snprintf(buf + n, 8, "e%c%02d", X < 0 ? '-' : '+', X < 0 ? -X : X);
    return n;
  }
  if (X < 0) { /* 0.000ddd */
    buf[n++] = '0', buf[n++] = '.';
    for (int i = 0; i < -X - 1; i++)
      buf[n++] = '0';
    for (int i = 0; i <= last; i++)
      buf[n++] = dig[i];
  } else { /* ddd.ddd */
    for (int i = 0; i <= X; i++)
      buf[n++] = dig[i];
    if (last > X)
      buf[n++] = '.';
    for (int i = X + 1; i <= last; i++)
      buf[n++] = dig[i];
  }
  buf[n] = 0;
  return n;
}

/*@ HsStrAppend - appends src to the 0-terminated string in dst (a buffer of size bytes), truncating what does not fit;
  dst stays 0-terminated. Replaces PetscStrlcat, whose 3.18 version limits the copy by size - strlen(src) instead of
  the room left and so writes past dst when dst is not empty (issue 42's review found it with AddressSanitizer).

  Returns 1 if src was truncated, 0 otherwise. Not collective. @*/
int HsStrAppend(char *dst, size_t size, const char *src)
{
  size_t len, room, n;

  if (!src || !*src)
    return 0;
  if (!size)
    return 1;
  len = strnlen(dst, size);
  if (len >= size) /* not terminated: terminate it */
    len = size - 1, dst[len] = 0;
  room = size - 1 - len;
  n    = strlen(src);
  if (n > room)
    n = room;
  memcpy(dst + len, src, n);
  dst[len + n] = 0;
  return src[n] ? 1 : 0;
}
