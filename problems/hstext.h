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
/** Whether a terminal control or an invisible character starts at s (*len its bytes): a byte below 0x20 or 0x7f, a
 *  C1 control in UTF-8 (C2 80..C2 9F), a byte that starts no valid UTF-8 sequence (HsTextUtf8Length: an 8-bit C1
 *  control, 0x9B is CSI to a terminal in an 8-bit mode; an overlong form such as C0 9B, ESC, or E0 82 9B, U+009B CSI,
 *  which would pass every other check; a surrogate; beyond U+10FFFF; *len 1), or a character that shows nothing: a format character (Unicode's
 *  category Cf: the text-direction overrides and isolates U+202A..U+202E, U+2066..U+2069, the zero-width characters
 *  U+200B..U+200F, U+2060..U+2064, U+FEFF, U+180E, ...), U+2028, U+2029, or another of Unicode's
 *  Default_Ignorable_Code_Point set (U+034F, the Hangul fillers, the variation selectors, ...: text.c hs_invisible); else 0 and *len the bytes of the character at s (a valid UTF-8 sequence, or 1). s must not be at its
 *  end. */
int HsTextControl(const char *s, int *len);
/** The length (1..4) of the valid UTF-8 sequence at s, or 0 if none starts there: RFC 3629's well-formed sequences only
 *  (C0, C1, F5..FF never; E0 then A0..BF, ED then 80..9F, F0 then 90..BF, F4 then 80..8F; continuation bytes
 *  80..BF), so no overlong form, surrogate or code point beyond U+10FFFF. The one decoder of hamshoot's (the names'
 *  checks here, HsJsonString). Reads no byte past a NUL. */
int HsTextUtf8Length(const char *s);
/** The code point of the character of len bytes at s (HsTextControl's *len; one byte: its value). */
unsigned HsTextCodePoint(const char *s, int len);

#ifdef __cplusplus
}
#endif
#endif
