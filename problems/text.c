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
