/* hamshoot: the trajectories hamshoot writes (trajectory.csv, intervals.csv) read back: their column names and
 * the reader of -hs_init (serial, no PETSc; the libFuzzer target fuzz/fuzz_init.c runs it on any bytes).
 *
 * A reader that guesses silently is worse than none: the header's names are matched exactly (an unnamed column
 * would shift every later one, a name given twice would make one column win), every value read is a finite
 * number (an empty field is one only where hamshoot writes it: the last row's costates of the single-file format
 * of old outputs), and the time column must be the grid the data are interpolated on (HsTrajectoryCheckTime).
 * Each error names the file, the line and what is wrong (docs/reliability.md). */
#include "hstrajcsv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*@ HsColumnName - the output column of state (kind 0, i < 2n: q then p) or costate (kind 1, i < 2n) component i:
    with a problem file's coordinate names "q_NAME", "p_NAME", "lambda_q_NAME", "lambda_p_NAME"; otherwise (or
    generic) "q1".."qn", "p1".."pn", "lambda1".."lambda2n" (the outputs and the -hs_init reader). Not collective. @*/
void HsColumnName(const HsProblem *P, int kind, int i, int generic, char *buf, size_t len)
{
  int n = P->n, named = P->coord_names && !generic;
  if (kind == 0 && named)
    snprintf(buf, len, "%s_%s", i < n ? "q" : "p", P->coord_names[i % n]);
  else if (kind == 0)
    snprintf(buf, len, "%s%d", i < n ? "q" : "p", i % n + 1);
  else if (named)
    snprintf(buf, len, "lambda_%s_%s", i < n ? "q" : "p", P->coord_names[i % n]);
  else
    snprintf(buf, len, "lambda%d", i + 1);
}

/* The header: col[i] the column of component i (-1 if absent), *tcol that of "t" (-1), *ncol the number of
 * columns; an unnamed column or a name given twice is an error in msg. */
static void Header(const char *line, const HsProblem *P, int kind, int *col, int *tcol, int *ncol, const char *path,
                   char *msg, size_t msglen)
{
  char        names[2][HS_NAME_LEN + 16], tok[HS_NAME_LEN + 16];
  const char *p   = line;
  int         dim = 2 * P->n, c = 0;

  for (int i = 0; i < dim; i++)
    col[i] = -1;
  *tcol = -1;
  for (;; c++) {
    size_t len = strcspn(p, ",\n\r");
    if (!len) {
      snprintf(msg, msglen, "-hs_init %s:1: column %d of the header has no name", path, c + 1);
      break;
    }
    snprintf(tok, sizeof tok, "%.*s", (int)(len < sizeof tok - 1 ? len : sizeof tok - 1), p);
    if (!strcmp(tok, "t")) {
      if (*tcol >= 0)
        snprintf(msg, msglen, "-hs_init %s:1: the column t is given twice", path);
      *tcol = c;
    }
    for (int i = 0; i < dim && !msg[0]; i++) {
      HsColumnName(P, kind, i, 0, names[0], sizeof names[0]);
      HsColumnName(P, kind, i, 1, names[1], sizeof names[1]);
      if (strcmp(tok, names[0]) && strcmp(tok, names[1]))
        continue;
      if (col[i] >= 0)
        snprintf(msg, msglen, "-hs_init %s:1: the columns %d and %d both hold %s (a name given twice)", path,
                 col[i] + 1, c + 1, tok);
      col[i] = c;
    }
    p += len;
    if (*p != ',' || msg[0])
      break;
    p++;
  }
  *ncol = c + 1;
}

/* Whether field (len characters, spaces around allowed) is a non-finite number as the outputs print it (%.17g: nan,
 * -nan, inf, -inf): a monitored invariant's column (inv_NAME) may hold one in an output of a converged run. */
static int NonFiniteWord(const char *field, size_t len)
{
  static const char *const words[] = {"nan", "-nan", "inf", "-inf"};
  size_t                   sp      = strspn(field, " \t");

  while (len > sp && (field[len - 1] == ' ' || field[len - 1] == '\t'))
    len--;
  for (int i = 0; i < 4; i++)
    if (len - sp == strlen(words[i]) && !strncmp(field + sp, words[i], len - sp))
      return 1;
  return 0;
}

/* The comma-separated fields of a data line into v (at most ncol), empty[j] whether field j was empty. Returns
 * the number of fields, or -(field + 1) for a field that is neither empty nor a finite number (its text at *bad,
 * *badlen characters); a field of a column the reader does not use (want[j] 0) may also be a non-finite number as the
 * outputs print it (read as 0: a NaN of an invariant's column had made the output of a converged run unreadable). */
static int Row(const char *line, int ncol, const char *want, double *v, char *empty, const char **bad, size_t *badlen,
               int *why)
{
  const char *p  = line;
  int         nv = 0, more = 0;

  while (nv < ncol) {
    char   field[2 * HS_TRAJ_MAX_FIELD];
    size_t len = strcspn(p, ",\n\r"), sp = strspn(p, " \t");
    empty[nv] = (char)(sp == len); /* nothing, or only spaces */
    v[nv]     = 0;
    if (sp < len &&
        (len >= sizeof field || (memcpy(field, p, len), field[len] = 0, *why = HsParseReal(field, v + nv))) &&
        (want[nv] || len >= sizeof field || !NonFiniteWord(field, len))) {
      *bad = p, *badlen = len; /* decimal only: strtod had read 0x1p3 as 8 */
      *why = len >= sizeof field ? HS_NUMBER_SYNTAX : *why;
      return -(nv + 1);
    }
    if (sp < len && *why) /* a non-finite number in a column not read */
      v[nv] = 0, *why = 0;
    nv++;
    p += len;
    if (!(more = *p == ','))
      break;
    p++;
  }
  if (nv == ncol && more) /* a comma after the last field the header names: more fields, counted, not read */
    for (nv++; *(p += strcspn(p, ",\n\r")) == ','; p++)
      nv++;
  return nv;
}

#define HS_TRAJ_LONE_CR "a carriage return that ends no CRLF line (lines end in LF or CRLF)"

/* One line of f into *buf (capacity *cap, grown up to max + 2 bytes): 1, 0 at the end of the file, -1 for a line
 * longer than max characters (a file that is no output of hamshoot's: its longest line is about 25 characters a
 * column), -2 out of memory, -3 a NUL byte (read one byte at a time: fgets stops at no NUL, so that the rest of such a
 * line had been dropped and the next line joined to it, a row read from two lines without a word), -4 a carriage
 * return that ends no CRLF line (issue 38, round 22: the rest of its line had been dropped: a header's first row, a
 * row's later fields, without a word or with a message about something else). The line keeps its end (\n or \r\n). */
static int Line(FILE *f, char **buf, size_t *cap, size_t max)
{
  size_t n = 0;
  int    ch;

  for (;;) {
    if (*cap < n + 2) {
      size_t nc = *cap ? 2 * *cap : 4096;
      char  *b  = realloc(*buf, nc < max + 2 ? nc : max + 2);
      if (!b)
        return -2;
      *buf = b, *cap = nc < max + 2 ? nc : max + 2;
    }
    if ((ch = getc_unlocked(f)) == EOF || ch == '\n') {
      if (ch == '\n')
        (*buf)[n++] = '\n';
      (*buf)[n] = 0;
      return n ? 1 : 0;
    }
    if (!ch)
      return -3;
    if (ch == '\r') { /* only as CRLF: a lone CR had ended the fields of its line and its rest was dropped */
      int next = getc_unlocked(f);
      if (next != '\n')
        return -4;
      ungetc(next, f);
    }
    if (n >= max)
      return -1;
    (*buf)[n++] = (char)ch;
  }
}

/* Appends the wanted columns of v (and its t) to *a and *t, doubling the capacity *alloc when full. */
static int Append(double **a, double **t, int *rows, int *alloc, int w, const double *v, const int *col, int tcol)
{
  if (*rows == *alloc) {
    int     na = *alloc ? 2 * *alloc : 1024;
    double *b  = *alloc > (1 << 29) / (w + 1) ? NULL : realloc(*a, (size_t)na * (size_t)w * sizeof **a);
    if (!b)
      return HS_ENOMEM;
    *a = b;
    if (t) {
      if (!(b = realloc(*t, (size_t)na * sizeof **t)))
        return HS_ENOMEM;
      *t = b;
    }
    *alloc = na;
  }
  for (int i = 0; i < w; i++)
    (*a)[(size_t)*rows * w + i] = v[col[i]];
  if (t)
    (*t)[*rows] = tcol >= 0 ? v[tcol] : 0;
  (*rows)++;
  return HS_SUCCESS;
}

/* An empty field in a wanted column: allowed only on the last row of costates (old single-file outputs). */
static int EmptyWanted(const char *empty, const int *col, int w)
{
  for (int i = 0; i < w; i++)
    if (empty[col[i]])
      return col[i] + 1;
  return 0;
}

/*@ HsTrajectoryRead - the 2n columns of kind 0 (states, with the column t into *t if t != NULL: it must be there)
    or 1 (costates) of a CSV file hamshoot wrote (-o), from the stream f, named path in messages.

  Not collective. Output: *a (rows x 2n) and *t (rows), malloc'ed (free() them), *rows. *a is NULL with msg empty
  when the header lacks the columns and optional is set. Errors name the file and the line in msg: an unnamed or
  repeated header column, a missing column t, a value that is not a finite number, a row of another length, an
  empty field in a wanted column (except the costates of the last row). Blank lines (LF or CRLF) are skipped.
  Returns HS_SUCCESS (see msg) or HS_ENOMEM.
@*/
int HsTrajectoryRead(FILE *f, const char *path, const HsProblem *P, int kind, int optional, double **a, double **t,
                     int *rows, char *msg, size_t msglen)
{
  char   *line = NULL, c0[HS_NAME_LEN + 16], c1[HS_NAME_LEN + 16], *empty = NULL, *want = NULL;
  size_t  cap = 0;
  int     w = 2 * P->n, ncol = 0, alloc = 0, tcol = -1, have = 1, st = HS_SUCCESS, pending = 0, lineno = 1, pline = 0;
  int    *col = malloc((size_t)w * sizeof *col);
  double *v   = NULL;
  const char *bad;
  size_t      badlen;

  msg[0] = 0, *a = NULL, *rows = 0;
  if (t)
    *t = NULL;
  if (!col)
    return HS_ENOMEM;
  for (int i = 0; i < w; i++)
    col[i] = -1;
  if ((st = Line(f, &line, &cap, HS_TRAJ_MAX_HEADER)) == -1)
    snprintf(msg, msglen, "-hs_init %s:1: the header is longer than %d characters", path, HS_TRAJ_MAX_HEADER);
  else if (st == -3)
    snprintf(msg, msglen, "-hs_init %s:1: a NUL byte (not a text file written by hamshoot -o)", path);
  else if (st == -4)
    snprintf(msg, msglen, "-hs_init %s:1: %s", path, HS_TRAJ_LONE_CR);
  else if (st == 1) /* a UTF-8 byte-order mark is no part of the first name */
    Header(line + (strncmp(line, "\xef\xbb\xbf", 3) ? 0 : 3), P, kind, col, &tcol, &ncol, path, msg, msglen);
  st = st == -2 ? HS_ENOMEM : HS_SUCCESS;
  for (int i = 0; i < w; i++)
    have = have && col[i] >= 0;
  if (msg[0])
    have = 0;
  else if (!have && !optional) {
    HsColumnName(P, kind, 0, 0, c0, sizeof c0);
    HsColumnName(P, kind, w - 1, 0, c1, sizeof c1);
    snprintf(msg, msglen,
             "-hs_init %s:1: the header lacks the columns %s..%s of this problem (%s written by hamshoot -o "
             "for a problem with n = %d)",
             path, c0, c1, kind ? "an intervals.csv" : "a trajectory.csv", P->n);
  } else if (have && t && tcol < 0)
    snprintf(msg, msglen, "-hs_init %s:1: the header has no column t (a trajectory.csv written by hamshoot -o has)",
             path);
  if (have && !msg[0] &&
      (!(v = malloc((size_t)ncol * sizeof *v)) || !(empty = malloc((size_t)ncol)) || !(want = calloc((size_t)ncol, 1))))
    st = HS_ENOMEM;
  for (int i = 0; want && i < w; i++) /* the columns read: the components and t */
    want[col[i]] = 1;
  if (want && tcol >= 0)
    want[tcol] = 1;
  while (have && !msg[0] && !st) {
    int nv, why = 0, r = Line(f, &line, &cap, (size_t)ncol * HS_TRAJ_MAX_FIELD + 64);
    lineno++;
    if (r == 0)
      break;
    if (r < 0) {
      if (r == -2)
        st = HS_ENOMEM;
      else if (r == -3)
        snprintf(msg, msglen, "-hs_init %s:%d: a NUL byte (not a text file written by hamshoot -o)", path, lineno);
      else if (r == -4)
        snprintf(msg, msglen, "-hs_init %s:%d: %s", path, lineno, HS_TRAJ_LONE_CR);
      else
        snprintf(msg, msglen, "-hs_init %s:%d: longer than %d characters (%d a column)", path, lineno,
                 ncol * HS_TRAJ_MAX_FIELD + 64, HS_TRAJ_MAX_FIELD);
      break;
    }
    if (line[0] == '\n' || line[0] == 0 || (line[0] == '\r' && line[1] == '\n')) /* a blank line, LF or CRLF */
      continue;
    if (pending) /* the row before had an empty field: it was not the last */
      snprintf(msg, msglen, "-hs_init %s:%d: field %d is empty (only the last row's costates may be)", path, pline,
               pending);
    else if ((nv = Row(line, ncol, want, v, empty, &bad, &badlen, &why)) < 0)
      snprintf(msg, msglen, "-hs_init %s:%d: value %d ('%.*s') %s", path, lineno, -nv, (int)(badlen < 40 ? badlen : 40),
               bad, HsParseRealWhy(why));
    else if (nv != ncol)
      snprintf(msg, msglen, "-hs_init %s:%d: expected %d comma-separated values, found %d", path, lineno, ncol, nv);
    else if ((pending = EmptyWanted(empty, col, w)) && kind == 0)
      snprintf(msg, msglen, "-hs_init %s:%d: field %d is empty (a state must have a value)", path, lineno, pending);
    else if (t && empty[tcol])
      snprintf(msg, msglen, "-hs_init %s:%d: t is empty", path, lineno);
    else
      st = Append(a, t, rows, &alloc, w, v, col, t ? tcol : -1);
    pline = lineno;
  }
  if (msg[0] || st) {
    free(*a), *a = NULL;
    if (t)
      free(*t), *t = NULL;
    *rows = 0;
  }
  free(v), free(empty), free(want), free(col), free(line);
  return st;
}

/*@ HsTrajectoryCheckTime - whether the column t (n rows) of a trajectory.csv named path is the grid of problem P:
    t_0 = 0, strictly increasing, for a fixed final time t_N = T, and each t_k the uniform grid's k t_N / N (all to
    1e-9 relative); a trajectory of another T or problem, or sampled at other times, would be interpolated onto the
    wrong times. A free T's file ends where it ends.

  Not collective. Returns 0, or 1 with a message naming the file and line in msg.
@*/
int HsTrajectoryCheckTime(const char *path, const HsProblem *P, const double *t, int n, char *msg, size_t msglen)
{
  double T = P->free_T ? t[n - 1] : P->T, tol = 1e-9 * (fabs(T) > 1 ? fabs(T) : 1);

  if (fabs(t[0]) > tol) {
    snprintf(msg, msglen, "-hs_init %s:2: t starts at %.17g, not at 0", path, t[0]);
    return 1;
  }
  for (int k = 1; k < n; k++)
    if (!(t[k] > t[k - 1])) {
      snprintf(msg, msglen, "-hs_init %s:%d: t = %.17g does not increase (the row before has %.17g)", path, k + 2, t[k],
               t[k - 1]);
      return 1;
    }
  if (fabs(t[n - 1] - T) > tol) {
    snprintf(msg, msglen,
             "-hs_init %s:%d: t ends at %.17g, but this problem's final time is T = %.17g (a trajectory of "
             "another T or another problem)",
             path, n + 1, t[n - 1], T);
    return 1;
  }
  /* round 30: the rows are taken as the nodes t_k = k T / N of a uniform grid (the values of t are not used
     otherwise), so a time column that is not uniform (hand-edited, another program's sampling) would put each
     row's values at another time without a word: t = 3 (k/20)^2 had been read as the nodes k 3/20 */
  for (int k = 1; k < n - 1; k++)
    if (fabs(t[k] - k * (t[n - 1] / (n - 1))) > tol) {
      snprintf(msg, msglen,
               "-hs_init %s:%d: t = %.17g is not the node k T/N = %.17g of a uniform grid (the rows are read as the "
               "nodes t_k = k T/N, so a trajectory sampled at other times would be misplaced)",
               path, k + 2, t[k], k * (t[n - 1] / (n - 1)));
      return 1;
    }
  return 0;
}
