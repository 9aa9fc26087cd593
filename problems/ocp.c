/* hamshoot: problem files (.ocp), docs/problem-format.md.
 *
 * A file defines a mechanical system by its mass matrix M(q) and potential
 * V(q) as expressions (GNU libmatheval); the derivatives that the energy's
 * structure formulas need (M_{,i}, M_{,ij}, V_{,i}, V_{,ij}; problems/mechanical.c)
 * and the running cost's gradient and Hessian are derived symbolically once,
 * when the file is read. Parameters are variables of every expression and can
 * be overridden as -p_NAME.
 */
#include "hsmechanical.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <matheval.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OCP_MAXN 8
#define OCP_MAXVARS (2 * OCP_MAXN + HS_MAX_PARAMS)

/* Variable table, fixed layout: names[i] = q_i (i < OCP_MAXN), names[OCP_MAXN + i] =
 * p_<q_i>, names[2 OCP_MAXN + k] = parameter k; unused slots get names no
 * expression can use ("#i"). */
/* An expression with the indices of the variables it uses, so that an
 * evaluation passes libmatheval only those (it looks each name up per call). */
typedef struct {
  void  *f;
  int    nv;
  char **vn;
  int    idx[OCP_MAXVARS];
} Ex;

/* A scalar function of the whole state x = (q, p) with its symbolic gradient
 * and Hessian (running and terminal cost). */
typedef struct {
  Ex *f, *d[2 * OCP_MAXN], *d2[4 * OCP_MAXN * OCP_MAXN];
} StateFn;

typedef struct {
  int     n, nvars, npar;
  char    ss[32], cs[32];
  char   *names[OCP_MAXVARS];
  double  values[OCP_MAXVARS];
  Ex     *M[OCP_MAXN * OCP_MAXN], *dM[OCP_MAXN * OCP_MAXN * OCP_MAXN], *d2M[OCP_MAXN * OCP_MAXN * OCP_MAXN * OCP_MAXN];
  Ex     *V, *dV[OCP_MAXN], *d2V[OCP_MAXN * OCP_MAXN], *d3V; /* d3V: 1-DOF only (Greenspan) */
  StateFn ell, phi;                                          /* running cost, terminal cost */
  Ex     *cf[4][2 * OCP_MAXN * OCP_MAXN]; /* B, R, x0, xT entries: re-evaluated when a parameter changes */
  int     ncf[4];
  char   *texts[64]; /* owned copies of parameter names */
  int     ntexts;
} Ocp;

static void OcpSetState(Ocp *o, const double *x, int with_p)
{
  for (int i = 0; i < o->n; i++)
    o->values[i] = x[i];
  if (with_p)
    for (int i = 0; i < o->n; i++)
      o->values[OCP_MAXN + i] = x[o->n + i];
}

/* Name of state component i of x = (q, p). */
static char *XName(Ocp *o, int i) { return i < o->n ? o->names[i] : o->names[OCP_MAXN + i - o->n]; }

static double Eval(Ocp *o, Ex *e)
{
  double v[OCP_MAXVARS];
  if (!e)
    return 0.0;
  for (int k = 0; k < e->nv; k++)
    v[k] = o->values[e->idx[k]];
  return evaluator_evaluate(e->f, e->nv, e->vn, v);
}

/* Wraps an evaluator (NULL-safe); variables are looked up in the table once. */
static Ex *ExNew(Ocp *o, void *f)
{
  Ex *e;
  if (!f)
    return NULL;
  e = calloc(1, sizeof(*e));
  if (!e) {
    evaluator_destroy(f);
    return NULL;
  }
  e->f = f;
  evaluator_get_variables(f, &e->vn, &e->nv);
  for (int k = 0; k < e->nv; k++)
    for (int j = 0; j < o->nvars; j++)
      if (!strcmp(e->vn[k], o->names[j]))
        e->idx[k] = j;
  return e;
}

static void ExFree(Ex *e)
{
  if (!e)
    return;
  evaluator_destroy(e->f);
  free(e);
}

/* d f / d name, or NULL (a zero, which Eval returns without evaluating) when f
 * does not contain name: libmatheval does not simplify, and for the multibody
 * problems most entries of M_{,i} and M_{,ij} vanish. */
static Ex *Derivative(Ocp *o, Ex *e, char *name)
{
  if (!e)
    return NULL;
  for (int i = 0; i < e->nv; i++)
    if (!strcmp(e->vn[i], name))
      return ExNew(o, evaluator_derivative(e->f, name));
  return NULL;
}

static int OcpMass(const double *q, double *M, double *dM, double *d2M, void *ctx)
{
  Ocp *o = ctx;
  int  n = o->n;
  OcpSetState(o, q, 0);
  for (int k = 0; k < n * n; k++) {
    M[k] = Eval(o, o->M[k]);
    if (!isfinite(M[k]))
      return 1;
  }
  if (dM)
    for (int k = 0; k < n * n * n; k++)
      dM[k] = Eval(o, o->dM[k]);
  if (d2M)
    for (int k = 0; k < n * n * n * n; k++)
      d2M[k] = Eval(o, o->d2M[k]);
  return 0;
}

static int OcpPotential(const double *q, double *V, double *dV, double *d2V, void *ctx)
{
  Ocp *o = ctx;
  int  n = o->n;
  OcpSetState(o, q, 0);
  if (V) {
    *V = Eval(o, o->V);
    if (!isfinite(*V))
      return 1;
  }
  if (dV)
    for (int i = 0; i < n; i++)
      dV[i] = Eval(o, o->dV[i]);
  if (d2V)
    for (int i = 0; i < n * n; i++)
      d2V[i] = Eval(o, o->d2V[i]);
  return 0;
}

/* 1-DOF potential for the Greenspan scheme (problems whose mass is constant). */
static int OcpPotential1(double q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  Ocp *o       = HsMechanicalUserContext(ctx);
  o->values[0] = q;
  if (V)
    *V = Eval(o, o->V);
  if (dV)
    *dV = Eval(o, o->dV[0]);
  if (d2V)
    *d2V = Eval(o, o->d2V[0]);
  if (d3V)
    *d3V = Eval(o, o->d3V);
  return 0;
}

/* Value, gradient and Hessian of a StateFn at x (HsFunction callbacks below). */
static int StateFnValue(Ocp *o, StateFn *F, const double *x, double *f)
{
  OcpSetState(o, x, 1);
  *f = Eval(o, F->f);
  return isfinite(*f) ? 0 : 1;
}

static int StateFnGrad(Ocp *o, StateFn *F, const double *x, double *g)
{
  OcpSetState(o, x, 1);
  for (int i = 0; i < 2 * o->n; i++)
    g[i] = Eval(o, F->d[i]);
  return 0;
}

static int StateFnHess(Ocp *o, StateFn *F, const double *x, double *H)
{
  OcpSetState(o, x, 1);
  for (int i = 0; i < 4 * o->n * o->n; i++)
    H[i] = Eval(o, F->d2[i]);
  return 0;
}

/* Symbolic gradient and Hessian in the 2n state variables (F->f set). */
static void StateFnDerive(Ocp *o, StateFn *F)
{
  for (int i = 0; i < 2 * o->n; i++) {
    F->d[i] = Derivative(o, F->f, XName(o, i));
    for (int j = 0; j < 2 * o->n; j++)
      F->d2[i * 2 * o->n + j] = Derivative(o, F->d[i], XName(o, j));
  }
}

static void StateFnFree(StateFn *F)
{
  ExFree(F->f);
  for (int i = 0; i < 2 * OCP_MAXN; i++)
    ExFree(F->d[i]);
  for (int i = 0; i < 4 * OCP_MAXN * OCP_MAXN; i++)
    ExFree(F->d2[i]);
}

static int OcpEll(double t, const double *x, double *f, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  (void)t;
  return StateFnValue(o, &o->ell, x, f);
}
static int OcpEllGrad(double t, const double *x, double *g, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  (void)t;
  return StateFnGrad(o, &o->ell, x, g);
}
static int OcpEllHess(double t, const double *x, double *H, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  (void)t;
  return StateFnHess(o, &o->ell, x, H);
}
static int OcpPhi(const double *x, double *f, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  return StateFnValue(o, &o->phi, x, f);
}
static int OcpPhiGrad(const double *x, double *g, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  return StateFnGrad(o, &o->phi, x, g);
}
static int OcpPhiHess(const double *x, double *H, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  return StateFnHess(o, &o->phi, x, H);
}

/* After a parameter change: B, R, x0, xT and (1 DOF) the constant mass again. */
static void OcpUpdate(HsProblem *p)
{
  Ocp    *o     = HsProblemGetMechanicalContext(p);
  double *dst[] = {p->B, p->R, p->x0, p->xT};
  for (int a = 0; a < 4; a++)
    for (int i = 0; i < o->ncf[a]; i++)
      dst[a][i] = Eval(o, o->cf[a][i]);
  if (p->sep.available) {
    double M0;
    OcpMass(p->x0, &M0, NULL, NULL, o);
    p->sep.mass = M0;
  }
}

static void OcpDestroy(void *ctx)
{
  Ocp *o = ctx;
  if (!o)
    return;
  {
    Ex **all[] = {o->M, o->dM, o->d2M, o->dV, o->d2V};
    int  cnt[] = {OCP_MAXN * OCP_MAXN, OCP_MAXN * OCP_MAXN * OCP_MAXN, OCP_MAXN * OCP_MAXN * OCP_MAXN * OCP_MAXN,
                  OCP_MAXN, OCP_MAXN * OCP_MAXN};
    for (int a = 0; a < 5; a++)
      for (int k = 0; k < cnt[a]; k++)
        ExFree(all[a][k]);
  }
  for (int a = 0; a < 4; a++)
    for (int i = 0; i < o->ncf[a]; i++)
      ExFree(o->cf[a][i]);
  ExFree(o->V);
  ExFree(o->d3V);
  StateFnFree(&o->ell);
  StateFnFree(&o->phi);
  for (int i = 0; i < o->ntexts; i++)
    free(o->texts[i]);
  free(o);
}

/* ---------------------------------------------------------------- parser ---- */

typedef struct {
  const char *path;
  int         line;
  char       *msg;
  int         msglen;
} Src;

static int Fail(Src *s, int col, const char *fmt, ...)
{
  va_list ap;
  int     k = snprintf(s->msg, (size_t)s->msglen, "%s:%d:%d: ", s->path, s->line, col);
  va_start(ap, fmt);
  if (k >= 0 && k < s->msglen)
    vsnprintf(s->msg + k, (size_t)(s->msglen - k), fmt, ap);
  va_end(ap);
  return 2;
}

static char *Trim(char *t)
{
  while (isspace((unsigned char)*t))
    t++;
  for (char *e = t + strlen(t); e > t && isspace((unsigned char)e[-1]);)
    *--e = 0;
  return t;
}

/* Creates an evaluator from text at column col; checks that every variable is known. */
static int MakeExpr(Src *s, Ocp *o, const char *text, int col, const char *what, int allow_p, Ex **out)
{
  char  buf[1024], **vars;
  int   nv;
  void *f;

  snprintf(buf, sizeof buf, "%s", text);
  if (!buf[0])
    return Fail(s, col, "%s: expected an expression", what);
  f = evaluator_create(buf);
  if (!f)
    return Fail(s, col, "%s: cannot parse the expression '%s'", what, text);
  evaluator_get_variables(f, &vars, &nv);
  for (int i = 0; i < nv; i++) {
    int known = 0;
    for (int j = 0; j < o->nvars && !known; j++) {
      int ok = j < OCP_MAXN ? j < o->n : j < 2 * OCP_MAXN ? allow_p && j - OCP_MAXN < o->n : j - 2 * OCP_MAXN < o->npar;
      if (ok && !strcmp(vars[i], o->names[j]))
        known = 1;
    }
    if (!known) {
      int r = Fail(s, col, "%s: unknown symbol '%s' in '%s'%s", what, vars[i], text,
                   allow_p ? "" : " (momenta are not allowed here)");
      evaluator_destroy(f);
      return r;
    }
  }
  *out = ExNew(o, f);
  if (!*out)
    return Fail(s, col, "%s: out of memory", what);
  return 0;
}

/* Splits a comma-separated list in place; returns the count (at most max) or -1. */
static int SplitList(char *t, char **items, int *cols, int base_col, int max)
{
  int k = 0;
  for (char *p = t;;) {
    char *c = strchr(p, ',');
    if (k == max)
      return -1;
    if (c)
      *c = 0;
    items[k] = Trim(p);
    cols[k]  = base_col + (int)(items[k] - t);
    k++;
    if (!c)
      break;
    p = c + 1;
  }
  return k;
}

/* A constant expression (parameters only); the evaluator is returned in keep if not NULL. */
static int Number(Src *s, Ocp *o, const char *text, int col, const char *what, double *v, Ex **keep)
{
  Ex *e;
  int r = MakeExpr(s, o, text, col, what, 0, &e);
  if (r)
    return r;
  for (int i = 0; i < o->n; i++)
    for (int j = 0; j < e->nv; j++)
      if (!strcmp(e->vn[j], o->names[i])) {
        ExFree(e);
        return Fail(s, col, "%s: must be constant, but '%s' depends on the coordinate %s", what, text, o->names[i]);
      }
  *v = Eval(o, e);
  if (keep)
    *keep = e;
  else
    ExFree(e);
  if (!isfinite(*v))
    return Fail(s, col, "%s: '%s' is not a finite number", what, text);
  return 0;
}

int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen)
{
  FILE      *fp = fopen(path, "r");
  Src        s  = {path, 0, msg, msglen};
  Ocp       *o  = NULL;
  HsProblem *p  = NULL;
  char       line[4096], name[HS_NAME_LEN] = "", *mass_text[OCP_MAXN * OCP_MAXN] = {0}, *V_text = NULL;
  char      *phi_text = NULL, *B_text = NULL, *R_text = NULL, *x0_text = NULL, *xT_text = NULL, *ell_text = NULL;
  char       ss[32] = "", cs[32] = "";
  int        n = 0, m = 0, N = 0, ret = 0, cols[64], lines[16] = {0}, mass_col = 0, nmass = 0;
  double     T = 0;

  *prob = NULL;
  if (!fp) {
    snprintf(msg, (size_t)msglen, "%s: cannot open problem file: %s", path, strerror(errno));
    return 2;
  }
  o = calloc(1, sizeof(*o));
  if (!o) {
    fclose(fp);
    return -1;
  }
  for (int i = 0; i < OCP_MAXVARS; i++) {
    static char unused[OCP_MAXVARS][8];
    snprintf(unused[i], sizeof unused[i], "#%d", i);
    o->names[i] = unused[i];
  }
  o->nvars = 2 * OCP_MAXN;
  /* pass 1: collect key/value lines */
  while (fgets(line, sizeof line, fp)) {
    char *t, *colon, *key, *val, *hash = strchr(line, '#');
    int   vcol;
    s.line++;
    if (hash)
      *hash = 0;
    t = Trim(line);
    if (!*t)
      continue;
    colon = strchr(t, ':');
    if (!colon) {
      ret = Fail(&s, (int)(t - line) + 1, "expected 'key: value'");
      break;
    }
    *colon = 0;
    key    = Trim(t);
    val    = Trim(colon + 1);
    vcol   = (int)(val - line) + 1;
#define KEEP(var, idx) (free(var), var = strdup(val), lines[idx] = s.line, cols[idx] = vcol)
    if (!strcmp(key, "problem"))
      snprintf(name, sizeof name, "%s", val);
    else if (!strncmp(key, "param ", 6)) {
      char *pn = Trim(key + 6), *items[1];
      int   c[1];
      if (o->npar >= HS_MAX_PARAMS) {
        ret = Fail(&s, 1, "too many parameters (at most %d)", HS_MAX_PARAMS);
        break;
      }
      if (!isalpha((unsigned char)pn[0])) {
        ret = Fail(&s, (int)(pn - line) + 1, "expected a parameter name after 'param'");
        break;
      }
      SplitList(val, items, c, vcol, 1);
      /* a parameter may use earlier parameters; its own slot is named only afterwards */
      ret = Number(&s, o, items[0], vcol, pn, &o->values[2 * OCP_MAXN + o->npar], NULL);
      if (ret)
        break;
      o->texts[o->ntexts++]            = strdup(pn);
      o->names[2 * OCP_MAXN + o->npar] = o->texts[o->ntexts - 1];
      o->npar++;
      o->nvars = 2 * OCP_MAXN + o->npar;
      if (ret)
        break;
    } else if (!strcmp(key, "coordinates")) {
      char *items[OCP_MAXN];
      int   c[OCP_MAXN];
      if (n) {
        ret = Fail(&s, 1, "coordinates: given twice");
        break;
      }
      n = SplitList(val, items, c, vcol, OCP_MAXN);
      if (n < 1) {
        ret = Fail(&s, vcol, "coordinates: expected 1 to %d comma-separated names", OCP_MAXN);
        break;
      }
      for (int i = 0; i < n; i++) {
        char pn[80];
        if (!isalpha((unsigned char)items[i][0])) {
          ret = Fail(&s, c[i], "coordinates: '%s' is not a name", items[i]);
          break;
        }
        o->texts[o->ntexts++] = strdup(items[i]);
        o->names[i]           = o->texts[o->ntexts - 1];
        snprintf(pn, sizeof pn, "p_%s", items[i]);
        o->texts[o->ntexts++]  = strdup(pn);
        o->names[OCP_MAXN + i] = o->texts[o->ntexts - 1];
      }
      if (ret)
        break;
      o->n = n;
    } else if (!strcmp(key, "controls")) {
      char *end;
      long  v = strtol(val, &end, 10);
      if (*Trim(end) || v < 1 || v > OCP_MAXN)
        ret = Fail(&s, vcol, "controls: expected an integer from 1 to %d, got '%s'", OCP_MAXN, val);
      m = (int)v;
    } else if (!strcmp(key, "mass")) {
      char *items[OCP_MAXN * OCP_MAXN];
      int   c[OCP_MAXN * OCP_MAXN];
      char *copy = strdup(val);
      nmass      = SplitList(copy, items, c, vcol, OCP_MAXN * OCP_MAXN);
      for (int i = 0; i < nmass; i++)
        mass_text[i] = strdup(items[i]);
      free(copy);
      lines[1] = s.line, mass_col = vcol;
    } else if (!strcmp(key, "potential"))
      KEEP(V_text, 2);
    else if (!strcmp(key, "B"))
      KEEP(B_text, 3);
    else if (!strcmp(key, "R"))
      KEEP(R_text, 4);
    else if (!strcmp(key, "x0"))
      KEEP(x0_text, 5);
    else if (!strcmp(key, "xT"))
      KEEP(xT_text, 6);
    else if (!strcmp(key, "running_cost"))
      KEEP(ell_text, 7);
    else if (!strcmp(key, "T")) {
      ret = Number(&s, o, val, vcol, "T", &T, NULL);
      if (!ret && !(T > 0))
        ret = Fail(&s, vcol, "T: the horizon must be positive, got %g", T);
    } else if (!strcmp(key, "N")) {
      char *end;
      long  v = strtol(val, &end, 10);
      if (*Trim(end) || v < 2 || v > 100000000)
        ret = Fail(&s, vcol, "N: expected an integer >= 2, got '%s'", val);
      N = (int)v;
    } else if (!strcmp(key, "state_scheme"))
      snprintf(ss, sizeof ss, "%s", val);
    else if (!strcmp(key, "costate_scheme"))
      snprintf(cs, sizeof cs, "%s", val);
    else if (!strcmp(key, "terminal_cost"))
      KEEP(phi_text, 10);
    else
      ret = Fail(
          &s, 1,
          "unknown key '%s' (expected problem, param NAME, coordinates, controls, mass, potential, B, R, T, N, x0, "
          "xT, running_cost, terminal_cost, state_scheme, costate_scheme)",
          key);
    if (ret)
      break;
#undef KEEP
  }
  fclose(fp);
  /* pass 2: the whole problem */
  if (!ret) {
    const char *missing = !n         ? "coordinates"
                          : !m       ? "controls"
                          : !nmass   ? "mass"
                          : !V_text  ? "potential"
                          : !B_text  ? "B"
                          : !R_text  ? "R"
                          : !x0_text ? "x0"
                          : !xT_text ? "xT"
                          : !(T > 0) ? "T (> 0)"
                                     : NULL;
    s.line              = 0;
    if (missing)
      ret = Fail(&s, 0, "missing '%s'", missing);
  }
  if (!ret) {
    if (HsProblemAllocate(name[0] ? name : path, n, m, &p))
      ret = -1;
  }
  if (!ret && nmass != n * n)
    s.line = lines[1], ret = Fail(&s, mass_col, "mass: expected n*n = %d entries (row-major), found %d", n * n, nmass);
  for (int k = 0; !ret && k < n * n; k++) {
    s.line = lines[1];
    ret    = MakeExpr(&s, o, mass_text[k], mass_col, "mass", 0, &o->M[k]);
    for (int i = 0; !ret && i < n; i++) {
      o->dM[i * n * n + k] = Derivative(o, o->M[k], o->names[i]);
      for (int j = 0; j < n; j++)
        o->d2M[(i * n + j) * n * n + k] = Derivative(o, o->dM[i * n * n + k], o->names[j]);
    }
  }
  if (!ret) {
    s.line = lines[2];
    ret    = MakeExpr(&s, o, V_text, cols[2], "potential", 0, &o->V);
    for (int i = 0; !ret && i < n; i++) {
      o->dV[i] = Derivative(o, o->V, o->names[i]);
      for (int j = 0; j < n; j++)
        o->d2V[i * n + j] = Derivative(o, o->dV[i], o->names[j]);
    }
    if (!ret && n == 1)
      o->d3V = Derivative(o, o->d2V[0], o->names[0]);
  }
  if (!ret && ell_text) {
    s.line = lines[7];
    ret    = MakeExpr(&s, o, ell_text, cols[7], "running_cost", 1, &o->ell.f);
    if (!ret)
      StateFnDerive(o, &o->ell);
  }
  if (!ret && phi_text) {
    s.line = lines[10];
    ret    = MakeExpr(&s, o, phi_text, cols[10], "terminal_cost", 1, &o->phi.f);
    if (!ret)
      StateFnDerive(o, &o->phi);
  }
  /* constant lists: B (n x m), R (m x m), x0, xT (2n; '*' or 'free': a free terminal component) */
  {
    struct {
      char       *text;
      int         idx, count;
      double     *dst;
      const char *what;
    } lists[] = {{B_text, 3, n * m, p ? p->B : NULL, "B (n x m, row-major)"},
                 {R_text, 4, m * m, p ? p->R : NULL, "R (m x m, row-major)"},
                 {x0_text, 5, 2 * n, p ? p->x0 : NULL, "x0 (q then p)"},
                 {xT_text, 6, 2 * n, p ? p->xT : NULL, "xT (q then p)"}};
    for (int a = 0; !ret && a < 4; a++) {
      char *items[64];
      int   c[64], k;
      s.line = lines[lists[a].idx];
      k      = SplitList(lists[a].text, items, c, cols[lists[a].idx], 64);
      if (k != lists[a].count) {
        ret = Fail(&s, cols[lists[a].idx], "%s: expected %d entries, found %d", lists[a].what, lists[a].count, k);
        break;
      }
      for (int i = 0; !ret && i < k; i++) {
        if (a == 3)
          p->xT_fixed[i] = !(!strcmp(items[i], "*") || !strcmp(items[i], "free"));
        if (a == 3 && !p->xT_fixed[i]) {
          lists[a].dst[i] = 0, o->cf[a][i] = NULL, o->ncf[a] = i + 1;
          continue;
        }
        ret       = Number(&s, o, items[i], c[i], lists[a].what, &lists[a].dst[i], &o->cf[a][i]);
        o->ncf[a] = i + 1;
      }
    }
  }
  if (!ret) {
    HsMechanical mech = {n, OcpMass, OcpPotential, o};
    if (HsProblemSetMechanical(p, &mech, OcpDestroy))
      ret = -1;
    else
      o = NULL; /* owned by the problem now */
  }
  if (!ret) {
    Ocp *oc   = HsProblemGetMechanicalContext(p);
    p->T      = T;
    p->N      = N > 0 ? N : 20;
    p->update = OcpUpdate;
    for (int i = 0; i < oc->npar; i++)
      HsProblemAddParam(p, oc->names[2 * OCP_MAXN + i], "file parameter", &oc->values[2 * OCP_MAXN + i], -1e300, 1e300);
    if (oc->ell.f)
      p->ell.f = OcpEll, p->ell.grad = OcpEllGrad, p->ell.hess = OcpEllHess;
    if (oc->phi.f)
      p->phi.f = OcpPhi, p->phi.grad = OcpPhiGrad, p->phi.hess = OcpPhiHess;
    /* 1 DOF with a constant mass: the Greenspan scheme applies */
    if (n == 1) {
      char **vars;
      int    nv, dep = 0;
      vars = oc->M[0]->vn, nv = oc->M[0]->nv;
      for (int j = 0; j < nv; j++)
        dep |= !strcmp(vars[j], oc->names[0]);
      if (!dep) {
        double M0;
        OcpMass(p->x0, &M0, NULL, NULL, oc);
        p->sep.available = 1, p->sep.mass = M0, p->sep.V = OcpPotential1;
        p->update = OcpUpdate; /* a parameter change may change the constant mass */
      }
    }
    snprintf(oc->ss, sizeof oc->ss, "%s", ss[0] ? ss : (p->sep.available ? "greenspan" : "gonzalez"));
    snprintf(oc->cs, sizeof oc->cs, "%s", cs[0] ? cs : (p->sep.available ? "conserving_1dof" : "conserving"));
    p->default_state_scheme   = oc->ss;
    p->default_costate_scheme = oc->cs;
    /* the mass matrix must be positive definite at the initial state */
    {
      double E;
      s.line = lines[1];
      if (p->E.f(p->x0, &E, p->ctx))
        ret = Fail(&s, mass_col, "mass: M(q) is not positive definite at the initial state x0");
    }
  }
  for (int k = 0; k < OCP_MAXN * OCP_MAXN; k++)
    free(mass_text[k]);
  free(phi_text), free(V_text), free(B_text), free(R_text), free(x0_text), free(xT_text), free(ell_text);
  if (ret) {
    OcpDestroy(o);
    HsProblemDestroy(&p);
    return ret;
  }
  *prob = p;
  return 0;
}
