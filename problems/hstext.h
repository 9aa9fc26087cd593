/* hamshoot: what the readers of problem files (problems/ocp.c, problems/bodies.c) share: the located error message
 * and the trimming of a line's text. */
#ifndef HSTEXT_H
#define HSTEXT_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** "path:line:col: " and the message fmt/ap into msg (msglen bytes, truncated); returns HS_EPARSE. */
int HsTextFailV(char *msg, int msglen, const char *path, int line, int col, const char *fmt, va_list ap);
/** t without its leading and trailing white space (the trailing part is cut in place). */
char *HsTextTrim(char *t);

#ifdef __cplusplus
}
#endif
#endif
