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

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one. */
static int Utf8Length(const unsigned char *p)
{
  int n = p[0] < 0x80 ? 1 : (p[0] >> 5) == 6 ? 2 : (p[0] >> 4) == 14 ? 3 : (p[0] >> 3) == 30 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] >> 6) != 2)
      return 0;
  return n;
}

int HsTextControl(const char *s, int *len)
{
  const unsigned char *p = (const unsigned char *)s;
  int                  n = Utf8Length(p);

  *len = n ? n : 1;
  if (*p < 0x20 || *p == 0x7f || (!n && *p >= 0x80 && *p <= 0x9f) || (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f))
    return 1;
  return n == 3 && p[0] == 0xe2 &&
         ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) || (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9));
}
