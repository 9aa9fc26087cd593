/* hamshoot: problem allocation, destruction, parameters and the built-in registry. */
#include "hsproblem.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/*@ HsFileOpenRegular - opens path for reading only if it is a regular file of at most max_bytes bytes (0: any
    size), so that no input can hang a run or fill its memory (docs/reliability.md): the file is opened
    non-blocking (a FIFO with no writer would block open() forever) and checked with fstat before anything is read:
    a directory, a FIFO, a socket or a device (/dev/zero, /dev/stdin on a terminal) is refused.

  Not collective. Input: path; what - what the file is for, first in a message ("-hs_init"); msg, msglen - room
  for a message. Returns the stream (fclose it), or NULL with a message naming the file and the reason.
@*/
FILE *HsFileOpenRegular(const char *path, const char *what, long long max_bytes, char *msg, size_t msglen)
{
  struct stat st;
  FILE       *f;
  int         fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), e;

  if (fd < 0) {
    snprintf(msg, msglen, "%s %s: cannot open: %s", what, path, strerror(errno));
    return NULL;
  }
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (max_bytes > 0 && (long long)st.st_size > max_bytes)) {
    e = errno;
    if (!S_ISREG(st.st_mode))
      snprintf(msg, msglen, "%s %s: not a regular file (a %s)", what, path,
               S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "FIFO" : S_ISSOCK(st.st_mode) ? "socket" : "device");
    else if (max_bytes > 0 && (long long)st.st_size > max_bytes)
      snprintf(msg, msglen, "%s %s: %lld bytes, more than the %lld such a file may have", what, path,
               (long long)st.st_size, max_bytes);
    else
      snprintf(msg, msglen, "%s %s: cannot read: %s", what, path, strerror(e));
    close(fd);
    return NULL;
  }
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || !(f = fdopen(fd, "r"))) {
    snprintf(msg, msglen, "%s %s: cannot read: %s", what, path, strerror(errno));
    close(fd);
    return NULL;
  }
  return f;
}

/*@ HsStatusString - a short English description of a status code (HS_SUCCESS, HS_EDOM, ...). Not collective. @*/
const char *HsStatusString(int status)
{
  switch (status) {
  case HS_SUCCESS:
    return "success";
  case HS_EDOM:
    return "outside the problem's domain";
  case HS_ENOCONV:
    return "local Newton did not converge";
  case HS_ESINGULAR:
    return "singular Jacobian";
  case HS_EINVAL:
    return "invalid argument";
  case HS_ENOMEM:
    return "out of memory";
  case HS_EFAILED:
    return "a problem callback failed";
  case HS_EUNKNOWN:
    return "unknown name";
  case HS_ERANGE:
    return "value out of range";
  case HS_ENOTINT:
    return "not a whole number";
  case HS_EPARSE:
    return "cannot be read";
  default:
    return "unknown status";
  }
}

/* The state- and control-sized arrays of p for n degrees of freedom and m controls, zeroed. */
static int AllocateArrays(HsProblem *p, int n, int m)
{
  double *B = calloc((size_t)n * m, sizeof(double)), *R = calloc((size_t)m * m, sizeof(double));
  double *x0 = calloc(2 * (size_t)n, sizeof(double)), *xT = calloc(2 * (size_t)n, sizeof(double));
  int    *fx = calloc(2 * (size_t)n, sizeof(int));

  if (!B || !R || !x0 || !xT || !fx) {
    free(B), free(R), free(x0), free(xT), free(fx);
    return HS_ENOMEM;
  }
  free(p->B), free(p->R), free(p->x0), free(p->xT), free(p->xT_fixed);
  p->B = B, p->R = R, p->x0 = x0, p->xT = xT, p->xT_fixed = fx;
  p->n = n, p->m = m;
  return HS_SUCCESS;
}

/*@ HsProblemAllocate - a new problem with zeroed arrays B (n x m), R (m x m), x0, xT, xT_fixed (2n),
    for the constructors of problems. Not collective.

  Input: name (copied, at most HS_NAME_LEN - 1 characters); n >= 1 degrees of freedom; m >= 1 controls.
  Returns HS_SUCCESS, HS_EINVAL (n or m < 1) or HS_ENOMEM; *prob is NULL on failure.
@*/
int HsProblemAllocate(const char *name, int n, int m, HsProblem **prob)
{
  HsProblem *p;

  *prob = NULL;
  if (n < 1 || m < 1)
    return HS_EINVAL;
  p = calloc(1, sizeof(*p));
  if (!p)
    return HS_ENOMEM;
  strncpy(p->name, name, HS_NAME_LEN - 1);
  p->last_set = -1, p->T_min = 0, p->T_max = INFINITY, p->R_scale = 1;
  if (AllocateArrays(p, n, m)) {
    HsProblemDestroy(&p);
    return HS_ENOMEM;
  }
  *prob = p;
  return HS_SUCCESS;
}

/*@ HsProblemResize - new dimensions n, m for a problem whose size is a parameter (ncar's number of
    cars): B, R, x0, xT and xT_fixed are reallocated and zeroed, for the problem's update() to fill.
    Not collective. Returns HS_SUCCESS, HS_EINVAL or HS_ENOMEM (the problem is then unchanged). @*/
int HsProblemResize(HsProblem *prob, int n, int m)
{
  if (n < 1 || m < 1)
    return HS_EINVAL;
  if (n == prob->n && m == prob->m) {
    memset(prob->B, 0, sizeof(double) * (size_t)n * m);
    memset(prob->R, 0, sizeof(double) * (size_t)m * m);
    memset(prob->x0, 0, sizeof(double) * 2 * (size_t)n);
    memset(prob->xT, 0, sizeof(double) * 2 * (size_t)n);
    memset(prob->xT_fixed, 0, sizeof(int) * 2 * (size_t)n);
    return HS_SUCCESS;
  }
  return AllocateArrays(prob, n, m);
}

/*@ HsProblemDestroy - frees a problem (and its context, through destroy_ctx) and sets *prob = NULL;
    NULL-safe. Not collective. @*/
void HsProblemDestroy(HsProblem **prob)
{
  HsProblem *p;

  if (!prob || !*prob)
    return;
  p = *prob;
  if (p->destroy_ctx)
    p->destroy_ctx(p->ctx);
  free(p->B);
  free(p->R);
  free(p->x0);
  free(p->xT);
  free(p->xT_fixed);
  free(p->u_min);
  free(p->u_max);
  free(p->params);
  free(p);
  *prob = NULL;
}

/*@ HsProblemHasEll - 1 if the problem has a running cost ell, else 0. Not collective. @*/
int HsProblemHasEll(const HsProblem *prob) { return prob->ell.f != NULL; }

/*@ HsProblemGetUserContext - the context of the problem's user: for a mechanical system the
    HsMechanical.ctx given to HsProblemSetMechanical, otherwise the callbacks' ctx. Not collective. @*/
void *HsProblemGetUserContext(const HsProblem *prob) { return prob->user_ctx ? prob->user_ctx : prob->ctx; }

/*@ HsProblemBlendTerminal - the fixed terminal components between the initial state and a goal,
    xT_i = x0_i + reach (goal_i - x0_i) (reach 0: x0, reach 1: goal); free components unchanged; for a constrained
    problem the blend moved onto its constraints (HsProblemProjectConstraints, the free components taken at x0 there;
    reach 1 gives the goal itself, which satisfies them). For continuation in "reach" (HsContinuation). Not
    collective.
@*/
void HsProblemBlendTerminal(HsProblem *prob, const double *goal, double reach)
{
  double *x;

  for (int i = 0; i < 2 * prob->n; i++)
    if (prob->xT_fixed[i])
      prob->xT[i] = prob->x0[i] + reach * (goal[i] - prob->x0[i]);
  if (prob->nc <= 0 || reach == 1 || reach == 0 || !(x = malloc(sizeof(double) * (size_t)(2 * prob->n))))
    return;
  /* A target the constraints allow: the fixed components of the projection of the blend, the free ones at their
     initial values as in the default guess (xT holds 0 there, where a constraint's gradient may vanish: a director
     (b1, b2) = 0 of |b|^2 = 1, whose Gram matrix is then singular, and the blend stayed off the constraints). A failure
     leaves the blend, which the solve's end-data check then names. */
  for (int i = 0; i < 2 * prob->n; i++)
    x[i] = prob->xT_fixed[i] ? prob->xT[i] : prob->x0[i];
  if (!HsProblemProjectConstraints(prob, x))
    for (int i = 0; i < 2 * prob->n; i++)
      if (prob->xT_fixed[i])
        prob->xT[i] = x[i];
  free(x);
}

/*@ HsProblemSetControlWeightScale - R becomes scale times the problem's own R (scale > 0; 1: the problem's own):
    the pseudo-parameter log_weight of a continuation (HsContinuation; 10^log_weight = scale). Everything that reads R
    sees the scaled one (the gain R^{-1} B^T, the direct NLP, dR/dT of a free T through R_scale), and a problem that
    evaluates R again (a parameter change, a free T on which R depends) applies it. Not collective.
@*/
void HsProblemSetControlWeightScale(HsProblem *prob, double scale)
{
  double f = scale / prob->R_scale;

  for (int i = 0; i < prob->m * prob->m; i++)
    prob->R[i] *= f;
  prob->R_scale = scale;
}

static const struct {
  const char *name;
  int (*create)(HsProblem **);
} hs_problems[] = {
    {"pendulum", HsProblemCreatePendulum},
    {"kepler", HsProblemCreateKepler},
    {"saddle", HsProblemCreateSaddle},
    {"crane", HsProblemCreateCrane},
    {"manipulator3", HsProblemCreateManipulator3},
    {"ncar", HsProblemCreateNcar},
};
#define HS_NPROBLEMS (sizeof(hs_problems) / sizeof(hs_problems[0]))

/*@ HsProblemListNames - the built-in problems' names, space-separated (from the registry table),
    for -help and error messages. Not collective. @*/
const char *HsProblemListNames(void)
{
  static char names[256];
  if (!names[0])
    for (size_t i = 0; i < HS_NPROBLEMS; i++) {
      if (i)
        strcat(names, " ");
      strcat(names, hs_problems[i].name);
    }
  return names;
}

/*@ HsProblemCreateByName - creates a built-in problem (docs/theory.md section 4) by its name.

  Not collective. Returns HS_SUCCESS, HS_EUNKNOWN (no such problem; *prob NULL) or HS_ENOMEM.
@*/
int HsProblemCreateByName(const char *name, HsProblem **prob)
{
  *prob = NULL;
  for (size_t i = 0; i < HS_NPROBLEMS; i++)
    if (!strcmp(name, hs_problems[i].name))
      return hs_problems[i].create(prob) ? HS_ENOMEM : HS_SUCCESS;
  return HS_EUNKNOWN;
}

/*@ HsProblemAddParam - registers a named parameter, settable as -p_NAME (HsProblemSetParam).

  Not collective. Input: name, help - kept as pointers (string constants or strings owned by the
  problem's context); value - where the parameter lives (in the context; must not move); min, max -
  the admissible range (inclusive). Returns HS_SUCCESS or HS_ENOMEM.
@*/
int HsProblemAddParam(HsProblem *prob, const char *name, const char *help, double *value, double min, double max)
{
  if (prob->nparams == prob->aparams) {
    int      a = prob->aparams ? 2 * prob->aparams : 8;
    HsParam *p = realloc(prob->params, sizeof(HsParam) * (size_t)a);
    if (!p)
      return HS_ENOMEM;
    prob->params = p, prob->aparams = a;
  }
  prob->params[prob->nparams++] = (HsParam){name, help, value, min, max, 0};
  return HS_SUCCESS;
}

/*@ HsProblemParamSetInteger - marks the most recently added parameter as integer-valued. Not collective. @*/
void HsProblemParamSetInteger(HsProblem *prob)
{
  if (prob->nparams > 0)
    prob->params[prob->nparams - 1].integer = 1;
}

/*@ HsProblemSetFinalTime - sets the final time T of a problem with a free final time (the solver
    does, for every iterate): prob->T, and the T that the terminal cost sees. Not collective. @*/
void HsProblemSetFinalTime(HsProblem *prob, double T)
{
  prob->T = T;
  if (prob->set_final_time)
    prob->set_final_time(prob, T);
}

/*@ HsProblemSetParam - sets a parameter by name, then forgets cached evaluations (invalidate) and
    recomputes derived data (update).

  Not collective. Returns HS_SUCCESS, HS_EUNKNOWN (no such parameter), HS_ERANGE (outside [min, max]),
  HS_ENOTINT (an integer parameter given a value that is not a whole number), HS_ENOMEM (update
  could not allocate) or, from update, HS_ERANGE with prob->why saying what the value would make
  invalid (e.g. a mass matrix that is not positive definite); the parameter is unchanged on failure.
@*/
int HsProblemSetParam(HsProblem *prob, const char *name, double value)
{
  prob->why[0] = 0;
  for (int i = 0; i < prob->nparams; i++)
    if (!strcmp(prob->params[i].name, name)) {
      if (!(value >= prob->params[i].min && value <= prob->params[i].max))
        return HS_ERANGE;
      if (prob->params[i].integer && value != floor(value))
        return HS_ENOTINT;
      double old             = *prob->params[i].value;
      *prob->params[i].value = value;
      if (prob->invalidate)
        prob->invalidate(prob);
      int    ret;
      prob->last_set = i;
      ret            = prob->update ? prob->update(prob) : HS_SUCCESS;
      prob->last_set = -1; /* the restoring update below pins nothing */
      if (ret) { /* back to the old value */
        char why[sizeof prob->why];
        memcpy(why, prob->why, sizeof why);
        *prob->params[i].value = old;
        if (prob->invalidate)
          prob->invalidate(prob);
        prob->update(prob);
        memcpy(prob->why, why, sizeof why);
        return ret == HS_ERANGE ? HS_ERANGE : HS_ENOMEM;
      }
      return HS_SUCCESS;
    }
  return HS_EUNKNOWN;
}

/*@ HsDecimalLength - the length of the decimal number at s: [sign] digits [. digits] or [sign] . digits, then an
    optional exponent e|E [sign] digits (taken only when digits follow it, so "1e" is 1 followed by "e"); 0 if s does
    not begin with one. sign 0: no leading sign (an expression's numbers, whose sign is an operator). No hexadecimal,
    no inf or nan, no leading whitespace: strtod's extensions, which no input of hamshoot's takes (docs/reliability.md).
    Not collective. @*/
size_t HsDecimalLength(const char *s, int sign)
{
  size_t i = 0, d = 0;

  if (sign && (s[i] == '+' || s[i] == '-'))
    i++;
  while (s[i] >= '0' && s[i] <= '9')
    i++, d++;
  if (s[i] == '.')
    for (i++; s[i] >= '0' && s[i] <= '9';)
      i++, d++;
  if (!d)
    return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-')
      j++;
    if (s[j] >= '0' && s[j] <= '9') {
      while (s[j] >= '0' && s[j] <= '9')
        j++;
      i = j;
    }
  }
  return i;
}

/*@ HsParseReal - the whole text s as a finite decimal number (HsDecimalLength), spaces and tabs around it allowed.
    Not collective. Output: v. Returns 0, HS_NUMBER_SYNTAX (hexadecimal "0x1p3", "1e", "1.5x", empty) or
    HS_NUMBER_NONFINITE ("nan", "inf", "1e400"); *v is left as it was unless 0 is returned. @*/
int HsParseReal(const char *s, double *v)
{
  size_t n;
  double x;

  s += strspn(s, " \t");
  n = HsDecimalLength(s, 1);
  if (!n) {
    const char *w = s + (*s == '+' || *s == '-');
    return !strncasecmp(w, "nan", 3) || !strncasecmp(w, "inf", 3) ? HS_NUMBER_NONFINITE : HS_NUMBER_SYNTAX;
  }
  if (s[n + strspn(s + n, " \t")])
    return HS_NUMBER_SYNTAX;
  x = strtod(s, NULL); /* the decimal prefix is all strtod reads: it stops where HsDecimalLength did */
  if (!isfinite(x))
    return HS_NUMBER_NONFINITE;
  *v = x;
  return 0;
}

/*@ HsParseInt - the whole text s as a whole decimal number [sign] digits in [lo, hi], spaces and tabs around it
    allowed as around a real (HsParseReal; round 13's rule for every number of hamshoot's inputs: -N had taken them and
    -hs_checkpoint_every refused them, issue 38 round 22). Not collective. Output: v. Returns 0, HS_NUMBER_SYNTAX
    ("1.5", "1e5", "0x10", "12abc", "", "-") or HS_NUMBER_RANGE (outside [lo, hi], 2^64 + 5 included: no wrap-around); *v is
    left as it was unless 0 is returned. @*/
int HsParseInt(const char *s, long long lo, long long hi, long long *v)
{
  int                neg;
  size_t             d;
  unsigned long long x = 0, cap;
  long long          y;

  s += strspn(s, " \t");
  neg = *s == '-';
  s += *s == '-' || *s == '+';
  /* the largest |v| the range allows on this side */
  cap = neg ? (lo < 0 ? (unsigned long long)(-(lo + 1)) + 1 : 0) : (hi > 0 ? (unsigned long long)hi : 0);
  for (d = 0; s[d] >= '0' && s[d] <= '9'; d++) /* past cap it stays at cap + 1: no overflow, however many digits */
    x = x > cap / 10 ? cap + 1 : 10 * x + (unsigned long long)(s[d] - '0');
  if (!d || s[d + strspn(s + d, " \t")])
    return HS_NUMBER_SYNTAX;
  if (x > cap)
    return HS_NUMBER_RANGE;
  y = !neg ? (long long)x : x ? -(long long)(x - 1) - 1 : 0;
  if (y < lo || y > hi)
    return HS_NUMBER_RANGE;
  *v = y;
  return 0;
}

/*@ HsParseRealWhy - what HsParseReal's code means, for a message "VALUE WHY". Not collective. @*/
const char *HsParseRealWhy(int code)
{
  return code == HS_NUMBER_NONFINITE ? "is not a finite number (nan, inf and values beyond 1.8e308 are refused)"
                                     : "is not a number (decimal digits, an optional point and exponent: no "
                                       "hexadecimal, no other characters)";
}
