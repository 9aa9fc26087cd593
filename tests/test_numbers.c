/* The text and number checks every input of hamshoot's goes through (problems/text.c, problems/problem.c; issue 38,
 * after round 22):
 *   HsTextControl  for every code point U+0080..U+10FFFF encoded in UTF-8, flagged exactly when it is a C1 control, a
 *                  format character (Unicode 14's category Cf, the list below as Python's unicodedata 14.0.0 gives
 *                  it), U+2028, U+2029 or a Default_Ignorable_Code_Point (Unicode 14's DerivedCoreProperties.txt,
 *                  the ranges not in Cf listed below), and its length the encoding's; every byte below
 *                  0x20 and 0x7f flagged, the other ASCII not; every byte 0x80..0xFF alone flagged (no UTF-8 sequence)
 *   HsTextUtf8Length  on every two-byte start 0x80..0xFF 0x01..0xFF with valid and invalid third and fourth bytes,
 *                  against an independent definition (the naive decoding's code point re-encoded in shortest form
 *                  gives the same bytes, and is a scalar value): overlong forms, surrogates, > U+10FFFF refused
 *   HsParseInt     against strtoll on random strings of digits, signs and blanks (an independent reading: strtoll's
 *                  value where the text is all one number and in range), and the edges of 32- and 64-bit ranges
 * Exit status 1 on the first difference. */
#include "../problems/hsproblem.h"
#include "../problems/hstext.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Unicode 14 category Cf (python3 -c "import unicodedata"), then the other characters that show nothing */
static const unsigned cf[][2] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
    {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},   {0x202A, 0x202E},
    {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x13438}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F}, {0x2028, 0x2029},   {0x034F, 0x034F},   {0x115F, 0x1160},   {0x3164, 0x3164},
    {0xFFA0, 0xFFA0},   {0x0080, 0x009F}, /* the C1 controls */
    /* Default_Ignorable_Code_Point (Unicode 14's DerivedCoreProperties.txt) not in Cf: U+034F and the Hangul fillers
       above, and these (variation selectors, Khmer inherent vowels, Mongolian free variation selectors, unassigned) */
    {0x17B4, 0x17B5},   {0x180B, 0x180D},   {0x180F, 0x180F},   {0x2065, 0x2065},   {0xFE00, 0xFE0F},
    {0xFFF0, 0xFFF8},   {0xE0000, 0xE0000}, {0xE0002, 0xE001F}, {0xE0080, 0xE00FF}, {0xE0100, 0xE01EF},
    {0xE01F0, 0xE0FFF},
};

static int Expected(unsigned cp)
{
  for (size_t i = 0; i < sizeof cf / sizeof cf[0]; i++)
    if (cp >= cf[i][0] && cp <= cf[i][1])
      return 1;
  return 0;
}

static int Encode(unsigned cp, char *s)
{
  if (cp < 0x800)
    return s[0] = (char)(0xC0 | cp >> 6), s[1] = (char)(0x80 | (cp & 0x3F)), s[2] = 0, 2;
  if (cp < 0x10000)
    return s[0] = (char)(0xE0 | cp >> 12), s[1] = (char)(0x80 | (cp >> 6 & 0x3F)), s[2] = (char)(0x80 | (cp & 0x3F)),
           s[3] = 0, 3;
  return s[0] = (char)(0xF0 | cp >> 18), s[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
         s[2] = (char)(0x80 | (cp >> 6 & 0x3F)), s[3] = (char)(0x80 | (cp & 0x3F)), s[4] = 0, 4;
}

/* Whether the n bytes at b are well-formed UTF-8, by an independent definition: the code point the lead byte's bit
 * pattern and the continuation bytes give, read naively, must be a scalar value (at most U+10FFFF, no surrogate) whose
 * shortest encoding (Encode) is exactly these bytes, so no overlong form */
static int WellFormed(const unsigned char *b, int n)
{
  unsigned cp;
  char     e[8];

  if (n == 1)
    return b[0] < 0x80;
  if ((n == 2 && (b[0] >> 5) != 6) || (n == 3 && (b[0] >> 4) != 14) || (n == 4 && (b[0] >> 3) != 30))
    return 0;
  cp = b[0] & (0x7fu >> n);
  for (int i = 1; i < n; i++) {
    if ((b[i] >> 6) != 2)
      return 0;
    cp = cp << 6 | (b[i] & 0x3fu);
  }
  if (cp < 0x80 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return Encode(cp, e) == n && !memcmp(e, b, (size_t)n);
}

/* Every lead byte 0x80..0xFF with every second byte, the third and fourth from a set of valid and invalid
 * continuations (the review's: C0 9B, an overlong ESC; E0 82 9B, an overlong U+009B CSI; ED A0 80, a surrogate;
 * F4 90 80 80, beyond U+10FFFF; F5..): HsTextUtf8Length is the length of the well-formed sequence, else 0, and
 * HsTextControl flags every byte that starts none (length 1). */
static int Malformed(void)
{
  static const unsigned char tails[] = {0x80, 0x9B, 0xBF, 0x41, 0xC0, 0x00};
  int                        bad = 0, checked = 0;

  for (int a = 0x80; a < 0x100; a++)
    for (int b = 1; b < 0x100; b++)
      for (size_t i = 0; i < sizeof tails; i++)
        for (size_t j = 0; j < sizeof tails; j++) {
          unsigned char s[8] = {(unsigned char)a, (unsigned char)b, tails[i], tails[j], 0};
          int           want = 0, got = HsTextUtf8Length((const char *)s), len, ctl;
          for (int n = 2; n <= 4 && !want; n++)
            if ((int)strnlen((const char *)s, 5) >= n && WellFormed(s, n))
              want = n;
          ctl = HsTextControl((const char *)s, &len);
          checked++;
          if (got != want || (!want && (!ctl || len != 1)) || (want && len != want))
            if (bad++ < 10)
              printf("FAIL: bytes %02X %02X %02X %02X: HsTextUtf8Length %d (want %d), HsTextControl %d length %d\n",
                     a, b, tails[i], tails[j], got, want, ctl, len);
        }
  printf("HsTextUtf8Length: %d byte sequences against the shortest-form decoding, %d differences\n", checked, bad);
  return bad;
}

static int Text(void)
{
  char s[8];
  int  len, bad = 0, flagged = 0;

  for (unsigned cp = 0x80; cp <= 0x10FFFF; cp++) {
    int n, got;
    if (cp >= 0xD800 && cp <= 0xDFFF) /* surrogates: not characters */
      continue;
    n   = Encode(cp, s);
    got = HsTextControl(s, &len);
    flagged += got;
    if (got != Expected(cp) || len != n || HsTextCodePoint(s, len) != cp) {
      if (bad++ < 5)
        printf("FAIL: U+%04X: HsTextControl %d (want %d), length %d (want %d), code point U+%04X\n", cp, got,
               Expected(cp), len, n, HsTextCodePoint(s, len));
    }
  }
  for (int c = 1; c < 0x100; c++) { /* single bytes (a byte 0x80.. alone is no UTF-8 sequence) */
    s[0] = (char)c, s[1] = 0;
    if (HsTextControl(s, &len) != (c < 0x20 || c == 0x7f || c >= 0x80) || len != 1)
      if (bad++ < 10)
        printf("FAIL: byte 0x%02x: HsTextControl %d, length %d\n", c, HsTextControl(s, &len), len);
  }
  printf("HsTextControl: %d code points flagged of U+0080..U+10FFFF, %d differences\n", flagged, bad);
  return bad + Malformed() != 0;
}

static uint64_t state = 88172645463325252ULL;
static uint64_t Next(void) { return state ^= state << 13, state ^= state >> 7, state ^= state << 17; }

/* strtoll's reading of s as one whole number in [lo, hi], blanks around allowed: 0 and *v, or 1 */
static int Reference(const char *s, long long lo, long long hi, long long *v)
{
  const char *p = s + strspn(s, " \t");
  char       *end;
  if (!((*p >= '0' && *p <= '9') || ((*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9')))
    return 1;
  errno = 0;
  *v    = strtoll(p, &end, 10);
  end += strspn(end, " \t");
  return *end || errno == ERANGE || *v < lo || *v > hi;
}

static int Ints(void)
{
  static const char *const edges[] = {"2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
                                      "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                                      "00000000000000000000000000042", "-0", "+0", " \t7\t ", "1 2", "--1", "+-1",
                                      "1.0", "1e5", "0x10", "", " ", "-", "+", "18446744073709551621"};
  const long long          lims[][2] = {{INT_MIN, INT_MAX}, {LLONG_MIN, LLONG_MAX}, {0, 86400}, {1, 10}};
  int                      bad       = 0, n = 0, ok = 0;
  char                     s[48];

  for (int k = 0; k < 200000 + (int)(sizeof edges / sizeof edges[0]); k++) {
    if (k < (int)(sizeof edges / sizeof edges[0]))
      snprintf(s, sizeof s, "%s", edges[k]);
    else { /* random: blanks, a sign, 1 to 25 digits, blanks, sometimes junk */
      static const char *const alpha = "  \t-+0123456789012345678901234567890123456789x.";
      int                      len   = 1 + (int)(Next() % 30);
      for (int i = 0; i < len; i++)
        s[i] = alpha[Next() % strlen(alpha)];
      s[len] = 0;
    }
    for (size_t r = 0; r < sizeof lims / sizeof lims[0]; r++) {
      long long a = 77, b = 77;
      int       ra = HsParseInt(s, lims[r][0], lims[r][1], &a), rb = Reference(s, lims[r][0], lims[r][1], &b);
      n++, ok += !ra;
      if ((ra != 0) != (rb != 0) || (!ra && a != b) || (ra && a != 77)) {
        if (bad++ < 10)
          printf("FAIL: '%s' in [%lld, %lld]: HsParseInt %d -> %lld, strtoll %d -> %lld\n", s, lims[r][0],
                 lims[r][1], ra, a, rb, b);
      }
    }
  }
  printf("HsParseInt: %d readings compared with strtoll's (%d numbers taken), %d differences\n", n, ok, bad);
  return bad != 0;
}

int main(void)
{
  int t = Text(), i = Ints();
  return t || i;
}
