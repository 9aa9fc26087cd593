/* hamshoot: the located error message and the trimming shared by the problem-file readers (problems/hstext.h). */
#include "hsproblem.h"
#include "hstext.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int HsTextFailV(char *msg, int msglen, const char *path, int line, int col, const char *fmt, va_list ap)
{
  int k = snprintf(msg, (size_t)msglen, "%s:%d:%d: ", path, line, col);

  if (k >= 0 && k < msglen)
    vsnprintf(msg + k, (size_t)(msglen - k), fmt, ap);
  return HS_EPARSE;
}

char *HsTextTrim(char *t)
{
  while (isspace((unsigned char)*t))
    t++;
  for (char *e = t + strlen(t); e > t && isspace((unsigned char)e[-1]);)
    *--e = 0;
  return t;
}

int HsTextUtf8Length(const char *s)
{
  const unsigned char *p  = (const unsigned char *)s;
  unsigned             lo = 0x80, hi = 0xbf; /* the second byte's range (RFC 3629's table) */
  int                  n;

  if (p[0] < 0x80)
    return 1;
  if (p[0] < 0xc2) /* a continuation byte alone, or C0, C1: an overlong form of U+0000..U+007F */
    return 0;
  if (p[0] < 0xe0)
    n = 2;
  else if (p[0] < 0xf0) /* E0: overlong below A0; ED: the surrogates from A0 */
    n = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
  else if (p[0] < 0xf5) /* F0: overlong below 90; F4: above U+10FFFF from 90 */
    n = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
  else
    return 0; /* F5..FF: beyond U+10FFFF, or never UTF-8 */
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (int i = 2; i < n; i++) /* stops at a NUL: never reads past the string */
    if ((p[i] >> 6) != 2)
      return 0;
  return n;
}

/* The invisible characters (issue 38, after round 22: they make two names that look the same differ): Unicode's
 * Default_Ignorable_Code_Point set (Unicode 14, DerivedCoreProperties.txt: what a renderer shows nothing for — the
 * zero-width space, non-joiner and joiner U+200B..U+200D and the marks U+200E, U+200F, the word joiner and invisible
 * operators U+2060..U+2064, U+FEFF, the Mongolian free variation selectors and vowel separator U+180B..U+180F, the
 * Khmer inherent vowels U+17B4, U+17B5, the variation selectors U+FE00..U+FE0F and U+E0100..U+E01EF, the Hangul
 * fillers U+115F, U+1160, U+3164, U+FFA0, the combining grapheme joiner U+034F, the soft hyphen, the tags and the rest
 * of U+E0000..U+E0FFF, the unassigned U+2065, U+FFF0..U+FFF8; the direction overrides and isolates among them),
 * together with the format characters (category Cf) that set lacks (the Arabic and other number signs U+0600..U+0605,
 * U+06DD, U+070F, U+0890, U+0891, U+08E2, U+110BD, U+110CD, the Egyptian format controls U+13430..U+13438, the
 * interlinear annotation marks U+FFF9..U+FFFB) and the line and paragraph separators U+2028, U+2029 (Zl, Zp). ZWNJ
 * and ZWJ are refused too, though Persian, Indic scripts and emoji sequences use them: a problem's name is a label, a
 * name that needs them is written without (UAX #31 allows them in identifiers only in contexts not checked here).
 * Closed ranges of code points. */
static const unsigned hs_invisible[][2] = {
    {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},
    {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x115F, 0x1160},   {0x17B4, 0x17B5},
    {0x180B, 0x180F},   {0x200B, 0x200F},   {0x2028, 0x202E},   {0x2060, 0x206F},   {0x3164, 0x3164},
    {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFFB},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x13438}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
};

unsigned HsTextCodePoint(const char *s, int len)
{
  const unsigned char *p  = (const unsigned char *)s;
  unsigned             cp = len > 1 ? p[0] & (0x7fu >> len) : p[0];

  for (int i = 1; i < len; i++)
    cp = cp << 6 | (p[i] & 0x3fu);
  return cp;
}

int HsTextControl(const char *s, int *len)
{
  const unsigned char *p = (const unsigned char *)s;
  int                  n = HsTextUtf8Length(s);
  unsigned             cp;

  *len = n ? n : 1;
  if (!n || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)) /* !n: a byte of no valid UTF-8 */
    return 1;
  if (n < 2)
    return 0;
  cp = HsTextCodePoint(s, n);
  for (size_t i = 0; i < sizeof hs_invisible / sizeof hs_invisible[0]; i++)
    if (cp >= hs_invisible[i][0] && cp <= hs_invisible[i][1])
      return 1;
  return 0;
}
