/* hamshoot: problem files (.ocp), docs/problem-format.md.
 *
 * A file defines a mechanical system by its mass matrix M(q) and potential
 * V(q) as expressions (problems/expr.c); the derivatives that the energy's
 * structure formulas need (M_{,i}, M_{,ij}, M_{,ijk}, V_{,i}, V_{,ij}, V_{,ijk};
 * problems/mechanical.c) and the costs' gradients and Hessians are derived
 * symbolically once, when the file is read, into one shared expression graph,
 * and compiled into register programs (one per derivative order), so that an
 * evaluation of order k runs exactly the instructions it needs. A mass matrix
 * that does not depend on q gets no derivative programs at all.
 *
 * Variables of the graph, for n coordinates: q_i at i, p_i at n + i, t at 2n,
 * the velocities of kinetic_energy at 2n + 1 + i (these are fast: set on every
 * evaluation), then the parameters from 3n + 1 on (slow: their programs'
 * parameter-only parts run again when one is set with -p_NAME). n and the
 * number of parameters are counted in a first scan of the file, so that there
 * is no limit on either.
 *
 * Reading: OcpPrescan (sizes), OcpReadKeys (every line: parameters and 'let's
 * are parsed in order, the other keys kept as text), then the problem in steps
 * (OcpBuildMass, OcpBuildConstants, OcpCheckAtX0, OcpBuildPrograms,
 * OcpBuildCosts, OcpInstall); every error is "file:line:column: what".
 */
#include "hsexpr.h"
#include "hsmechanical.h"
#include "hsocp.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Programs of a problem: mass and potential, one per derivative order
 * k = 0..3 (the order-k derivatives only: an evaluation that adds orders at
 * the same q) and for the orders 0..k, k = 1..3 (P_*_UPTO + k - 1: a new q,
 * sharing sin, cos, ... between the orders), the running and terminal cost
 * (value, gradient, Hessian), the constant lists. */
enum { P_MASS = 0, P_POT = 4, P_ELL = 8, P_PHI = 11, P_CST = 14, P_MASS_UPTO = 15, P_POT_UPTO = 18, P_COUNT = 21 };

typedef struct {
  int            n, npar, maxpar, nvars, tvar, vel, par; /* tvar = 2n, vel = 2n + 1, par = 3n + 1 (see above) */
  char           ss[32], cs[32];
  char         **names; /* nvars: the variables' names (NULL: none yet) */
  double        *vars;  /* nvars: the variables' values (parameters: their current values) */
  HsExpr        *ex;
  HsExprProgram *prog[P_COUNT];
  int            nB, nR;
  double        *cst_val; /* B, R, x0, xT, T, then u_min and u_max (m each) if the file bounds u */
  int            bounded; /* 1: the file gave u_min or u_max (entries '*' are unbounded) */
  char         **let_name; /* named subexpressions ('let NAME: expr') */
  int           *let_node, nlet;
  double        *pmin, *pmax; /* maxpar: each parameter's admissible range (closed; see OcpRange) */
  char         **phelp;       /* maxpar: "file parameter in [a, b]" (NULL: no range given) */
  char         **texts; /* owned copies of names */
  int            ntexts;
} Ocp;

/* q into variables 0..n-1 and (with_p) p into n..2n-1 */
static void OcpSetState(Ocp *o, const double *x, int with_p)
{
  memcpy(o->vars, x, (size_t)(with_p ? 2 : 1) * (size_t)o->n * sizeof(double));
}

/* Fills the non-NULL outputs dst[k] (k = 0..3) of the function whose per-order
 * programs start at base and cumulative ones at upto: orders 0..k together
 * when order 0 is asked for, else each order on its own. */
static int EvalOrders(Ocp *o, int base, int upto, const int *sz, double *const *dst)
{
  int st = 0, hi = dst[3] ? 3 : dst[2] ? 2 : dst[1] ? 1 : 0;
  if (dst[0] && hi > 0)
    st = HsExprProgramEvalParts(o->prog[upto + hi - 1], o->vars, hi + 1, sz, dst);
  else
    for (int k = 0; k < 4; k++)
      if (dst[k])
        st |= HsExprProgramEval(o->prog[base + k], o->vars, dst[k]);
  return st ? 1 : 0; /* not finite: outside the domain */
}

static int OcpMass(const double *q, double *M, double *dM, double *d2M, double *d3M, void *ctx)
{
  Ocp    *o = ctx;
  int     n = o->n, sz[4] = {n * n, n * n * n, n * n * n * n, n * n * n * n * n};
  double *dst[4] = {M, dM, d2M, d3M};
  OcpSetState(o, q, 0);
  return EvalOrders(o, P_MASS, P_MASS_UPTO, sz, dst);
}

static int OcpPotential(const double *q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  Ocp    *o = ctx;
  int     n = o->n, sz[4] = {1, n, n * n, n * n * n};
  double *dst[4] = {V, dV, d2V, d3V};
  OcpSetState(o, q, 0);
  return EvalOrders(o, P_POT, P_POT_UPTO, sz, dst);
}

/* 1-DOF potential for the Greenspan scheme (problems whose mass is constant). */
static int OcpPotential1(double q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  return OcpPotential(&q, V, dV, d2V, d3V, HsMechanicalUserContext(ctx));
}

/* Value (k = 0), gradient (1) or Hessian (2) of the cost whose programs start at base, at (t, x). */
static int CostEval(void *ctx, int base, int k, double t, const double *x, double *out)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  OcpSetState(o, x, 1);
  o->vars[o->tvar] = t;
  return HsExprProgramEval(o->prog[base + k], o->vars, out) ? 1 : 0;
}

static int OcpEll(double t, const double *x, double *f, void *ctx) { return CostEval(ctx, P_ELL, 0, t, x, f); }
static int OcpEllGrad(double t, const double *x, double *g, void *ctx) { return CostEval(ctx, P_ELL, 1, t, x, g); }
static int OcpEllHess(double t, const double *x, double *H, void *ctx) { return CostEval(ctx, P_ELL, 2, t, x, H); }
static int OcpPhi(const double *x, double *f, void *ctx) { return CostEval(ctx, P_PHI, 0, 0, x, f); }
static int OcpPhiGrad(const double *x, double *g, void *ctx) { return CostEval(ctx, P_PHI, 1, 0, x, g); }
static int OcpPhiHess(const double *x, double *H, void *ctx) { return CostEval(ctx, P_PHI, 2, 0, x, H); }

/* After a parameter change: the programs' parameter-only parts, then B, R, x0,
 * xT, T and (1 DOF) the constant mass again. */
static int OcpUpdate(HsProblem *p)
{
  Ocp *o = HsProblemGetUserContext(p);
  int  n = o->n, k = 0;
  for (int i = 0; i < P_COUNT; i++)
    if (o->prog[i])
      HsExprProgramSetSlow(o->prog[i], o->vars);
  HsExprProgramEval(o->prog[P_CST], o->vars, o->cst_val);
  for (int i = 0; i < o->nB; i++)
    p->B[i] = o->cst_val[k++];
  for (int i = 0; i < o->nR; i++)
    p->R[i] = o->cst_val[k++];
  for (int i = 0; i < 2 * n; i++)
    p->x0[i] = o->cst_val[k++];
  for (int i = 0; i < 2 * n; i++, k++)
    p->xT[i] = p->xT_fixed[i] ? o->cst_val[k] : 0;
  p->T = o->cst_val[k++];
  for (int j = 0; o->bounded && j < p->m; j++) {
    p->u_min[j] = o->cst_val[k + j], p->u_max[j] = o->cst_val[k + p->m + j];
    if (!(p->u_min[j] <= p->u_max[j])) {
      snprintf(p->why, sizeof p->why, "u_min %g exceeds u_max %g (control %d)", p->u_min[j], p->u_max[j], j + 1);
      return HS_ERANGE; /* a parameter set u_min above u_max: HsProblemSetParam restores it */
    }
  }
  for (int i = 0; i < k; i++)
    if (!isfinite(o->cst_val[i])) {
      snprintf(p->why, sizeof p->why, "%s is not finite", i < o->nB ? "B" : i < o->nB + o->nR ? "R"
                                                                       : i < o->nB + o->nR + 2 * n ? "x0"
                                                                       : i < k - 1 ? "xT" : "T");
      return HS_ERANGE;
    }
  if (!(p->T > 0)) {
    snprintf(p->why, sizeof p->why, "the horizon T = %g is not positive", p->T);
    return HS_ERANGE;
  }
  if (p->E.f) { /* once installed (OcpInstall): M(q) positive definite at x0 */
    double E;
    if (p->E.f(p->x0, &E, p->ctx)) {
      snprintf(p->why, sizeof p->why, "the mass matrix M(q) is not positive definite at the initial state x0");
      return HS_ERANGE;
    }
  }
  if (p->sep.available) {
    double M0;
    OcpMass(p->x0, &M0, NULL, NULL, NULL, o);
    p->sep.mass = M0;
  }
  return HS_SUCCESS;
}

static void OcpDestroy(void *ctx)
{
  Ocp *o = ctx;
  if (!o)
    return;
  for (int i = 0; i < P_COUNT; i++)
    HsExprProgramDestroy(&o->prog[i]);
  HsExprDestroy(&o->ex);
  for (int i = 0; i < o->ntexts; i++)
    free(o->texts[i]);
  for (int i = 0; o->phelp && i < o->npar; i++)
    free(o->phelp[i]);
  free(o->phelp), free(o->pmin), free(o->pmax);
  free(o->texts), free(o->names), free(o->vars), free(o->cst_val), free(o->let_name), free(o->let_node);
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
  return HS_EPARSE;
}

static char *Trim(char *t)
{
  while (isspace((unsigned char)*t))
    t++;
  for (char *e = t + strlen(t); e > t && isspace((unsigned char)e[-1]);)
    *--e = 0;
  return t;
}

/* Which variables an expression may use. */
enum { ALLOW_Q = 1, ALLOW_P = 2, ALLOW_T = 4, ALLOW_V = 8 };

typedef struct {
  Ocp *o;
  int  allow;
  char why[160];
} Lookup;

/* The first variable of a kind (ALLOW_Q, ALLOW_P, ALLOW_T, ALLOW_V) that node depends on, or -1. */
static int UsesKind(const Ocp *o, int node, int kind)
{
  for (int i = 0; i < o->n || (kind == ALLOW_T && i == 0); i++) {
    int v = kind == ALLOW_Q ? i : kind == ALLOW_P ? o->n + i : kind == ALLOW_V ? o->vel + i : o->tvar;
    if (HsExprDependsOn(o->ex, node, v))
      return v;
  }
  return -1;
}

static int LookupName(const char *name, int len, void *ctx, int *node)
{
  Lookup *L = ctx;
  Ocp    *o = L->o;
  for (int j = 0; j < o->nvars; j++)
    if (o->names[j] && (int)strlen(o->names[j]) == len && !strncmp(o->names[j], name, (size_t)len)) {
      int kind = j < o->n       ? ALLOW_Q
                 : j < 2 * o->n   ? ALLOW_P
                 : j == o->tvar   ? ALLOW_T
                 : j < o->par     ? ALLOW_V
                                  : 0;
      if (kind && !(L->allow & kind)) {
        if (kind == ALLOW_V)
          snprintf(L->why, sizeof L->why, "the velocity '%.*s' is allowed only in kinetic_energy", len, name);
        else if (kind == ALLOW_P)
          snprintf(L->why, sizeof L->why, "momenta are not allowed here ('%.*s'; M and V depend on q only)", len, name);
        else if (kind == ALLOW_T)
          snprintf(L->why, sizeof L->why, "the time t is allowed only in running_cost");
        else
          snprintf(L->why, sizeof L->why, "must be constant, but depends on the coordinate '%.*s'", len, name);
        return -2;
      }
      return (*node = HsExprVariable(o->ex, j)) < 0 ? -3 : 0;
    }
  for (int j = 0; j < o->nlet; j++)
    if ((int)strlen(o->let_name[j]) == len && !strncmp(o->let_name[j], name, (size_t)len)) {
      static const int   kinds[4] = {ALLOW_Q, ALLOW_P, ALLOW_T, ALLOW_V};
      static const char *what[4]  = {"the coordinate", "the momentum", "the time", "the velocity"};
      for (int k = 0; k < 4; k++) {
        int v = UsesKind(o, o->let_node[j], kinds[k]);
        if (v >= 0 && !(L->allow & kinds[k])) {
          snprintf(L->why, sizeof L->why, "'%.*s' uses %s %s, which is not allowed here", len, name, what[k],
                   o->names[v]);
          return -2;
        }
      }
      *node = o->let_node[j];
      return 0;
    }
  return -1;
}

/* Parses text (at column col of the current line) into *node; checks that every
 * symbol is known and allowed. */
static int MakeExpr(Src *s, Ocp *o, const char *text, int col, const char *what, int allow, int *node)
{
  Lookup L = {o, allow, ""};
  char        m[256];
  int         pos = 0, st, tl;
  const char *dots;

  if (!text[0])
    return Fail(s, col, "%s: expected an expression", what);
  st = HsExprParse(o->ex, text, LookupName, &L, node, &pos, m, sizeof m);
  tl = strlen(text) > 80 ? 72 : (int)strlen(text); /* a long text is quoted by its start */
  dots = tl < (int)strlen(text) ? " ..." : "";
  switch (st) {
  case HS_SUCCESS:
    return 0;
  case HS_EPARSE:
    return Fail(s, col + pos, "%s: cannot parse '%.*s%s': %s", what, tl, text, dots, m);
  case HS_EUNKNOWN:
    return Fail(s, col + pos, "%s: %s in '%.*s%s'", what, m, tl, text, dots);
  case HS_EINVAL:
    return Fail(s, col + pos, "%s: %s, in '%.*s%s'", what, L.why, tl, text, dots);
  default:
    return Fail(s, col, "%s: out of memory", what);
  }
}

/* Splits a comma-separated list in place into *items (the trimmed entries) and *cols (their
 * columns), allocated here for all of them; returns the count, or -1 without memory. */
static int SplitList(char *t, int base_col, char ***items, int **cols)
{
  int k = 0, n = 1;
  for (const char *c = t; *c; c++)
    n += *c == ',';
  *items = malloc(sizeof(char *) * (size_t)n);
  *cols  = malloc(sizeof(int) * (size_t)n);
  if (!*items || !*cols) {
    free(*items), free(*cols);
    *items = NULL, *cols = NULL;
    return -1;
  }
  for (char *p = t;;) {
    char *c = strchr(p, ',');
    if (c)
      *c = 0;
    (*items)[k] = Trim(p);
    (*cols)[k]  = base_col + (int)((*items)[k] - t);
    k++;
    if (!c)
      break;
    p = c + 1;
  }
  return k;
}

/* Value of nodes that depend on the parameters only. */
static int EvalSlow(Ocp *o, int cnt, const int *nodes, double *v)
{
  HsExprProgram *prog;
  if (HsExprProgramCreate(o->ex, cnt, nodes, &prog))
    return -1;
  HsExprProgramSetSlow(prog, o->vars);
  HsExprProgramEval(prog, o->vars, v);
  HsExprProgramDestroy(&prog);
  return 0;
}

/* A constant expression (parameters only): its node and value. */
static int Number(Src *s, Ocp *o, const char *text, int col, const char *what, double *v, int *node)
{
  int nd, r = MakeExpr(s, o, text, col, what, 0, &nd);
  if (r)
    return r;
  if (EvalSlow(o, 1, &nd, v))
    return Fail(s, col, "%s: out of memory", what);
  if (!isfinite(*v))
    return Fail(s, col, "%s: '%s' is not a finite number", what, text);
  if (node)
    *node = nd;
  return 0;
}

/* A program over cnt nodes; its parameter-only part runs in OcpUpdate. */
static int Program(Ocp *o, int cnt, const int *nodes, HsExprProgram **prog)
{
  return HsExprProgramCreate(o->ex, cnt, nodes, prog);
}

/* Derivatives up to order 3 of the entries f[0..cnt-1] in the n coordinates, laid
 * out as [f, df (n blocks of cnt), d2f (n^2 blocks), d3f (n^3 blocks)] in out; each
 * mixed derivative is formed once (sorted indices) and shared by its permutations. */
static int Derive3(Ocp *o, int n, int cnt, int *out)
{
  int *d1 = out + cnt, *d2 = d1 + n * cnt, *d3 = d2 + n * n * cnt;
  for (int i = 0; i < n; i++)
    for (int e = 0; e < cnt; e++)
      if ((d1[i * cnt + e] = HsExprDiff(o->ex, out[e], i)) < 0)
        return -1;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++)
      for (int e = 0; e < cnt; e++)
        if ((d2[(i * n + j) * cnt + e] = d2[(j * n + i) * cnt + e] = HsExprDiff(o->ex, d1[i * cnt + e], j)) < 0)
          return -1;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++)
      for (int l = j; l < n; l++)
        for (int e = 0; e < cnt; e++) {
          int v          = HsExprDiff(o->ex, d2[(i * n + j) * cnt + e], l),
              perm[6][3] = {{i, j, l}, {i, l, j}, {j, i, l}, {j, l, i}, {l, i, j}, {l, j, i}};
          if (v < 0)
            return -1;
          for (int q = 0; q < 6; q++)
            d3[((perm[q][0] * n + perm[q][1]) * n + perm[q][2]) * cnt + e] = v;
        }
  return 0;
}

/* Gradient and Hessian of a cost in the 2n state variables (x = (q, p) are variables 0..2n-1);
 * programs prog[0..2]. */
static int DeriveCost(Ocp *o, int node, HsExprProgram **prog)
{
  int  d = 2 * o->n, *g = malloc(sizeof(int) * (size_t)(d + d * d)), *H = g + d, st = -1;
  if (!g)
    return -1;
  for (int i = 0; i < d; i++)
    if ((g[i] = HsExprDiff(o->ex, node, i)) < 0)
      goto done;
  for (int i = 0; i < d; i++)
    for (int j = i; j < d; j++)
      if ((H[i * d + j] = H[j * d + i] = HsExprDiff(o->ex, g[i], j)) < 0)
        goto done;
  st = Program(o, 1, &node, &prog[0]) || Program(o, d, g, &prog[1]) || Program(o, d * d, H, &prog[2]) ? -1 : 0;
done:
  free(g);
  return st;
}

/* Room for one more element in an array of count elements, allocated in blocks of 16 (the
 * capacity is count rounded up to a multiple of 16); returns 0 or -1. */
static int Grow(void **a, size_t size, int count)
{
  if (count % 16 == 0) {
    void *b = realloc(*a, size * (size_t)(count + 16));
    if (!b)
      return -1;
    *a = b;
  }
  return 0;
}

/* Adds a name to the variable table at index j (j < 0: to the named
 * subexpressions); returns 0 or a Fail code. */
static int Name(Src *s, Ocp *o, const char *text, int col, int j, const char *what)
{
  if (!isalpha((unsigned char)text[0]) && text[0] != '_')
    return Fail(s, col, "%s: '%s' is not a name", what, text);
  for (const char *c = text; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      return Fail(s, col, "%s: '%s' is not a name (letters, digits and '_')", what, text);
  if (!strcmp(text, "t") || HsExprIsReservedName(text))
    return Fail(s, col, "%s: the name '%s' is reserved (time, constants and functions)", what, text);
  for (int k = 0; k < o->nvars; k++)
    if (o->names[k] && !strcmp(o->names[k], text))
      return Fail(s, col, "%s: the name '%s' is already used", what, text);
  for (int k = 0; k < o->nlet; k++)
    if (!strcmp(o->let_name[k], text))
      return Fail(s, col, "%s: the name '%s' is already used", what, text);
  if (Grow((void **)&o->texts, sizeof(char *), o->ntexts) ||
      (j < 0 && (Grow((void **)&o->let_name, sizeof(char *), o->nlet) ||
                 Grow((void **)&o->let_node, sizeof(int), o->nlet))) ||
      !(o->texts[o->ntexts] = strdup(text)))
    return Fail(s, col, "%s: out of memory", what);
  if (j >= 0)
    o->names[j] = o->texts[o->ntexts++];
  else
    o->let_name[o->nlet++] = o->texts[o->ntexts++];
  return 0;
}


/* ------------------------------------------------------------ the reader ---- */

enum { K_MASS, K_V, K_B, K_R, K_X0, K_XT, K_ELL, K_T, K_PHI, K_KIN, K_UMIN, K_UMAX, K_COUNT };
static const char *const keys[K_COUNT] = {"mass",          "potential",      "B",     "R",    "x0", "xT", "running_cost",
                                          "T",             "terminal_cost",  "kinetic_energy", "u_min", "u_max"};

/* What the line-by-line pass collected: the texts of the keys built later, where they are, and the
 * scalar keys. */
typedef struct {
  char *text[K_COUNT];
  int   cols[K_COUNT], lines[K_COUNT];
  char  name[HS_NAME_LEN], ss[32], cs[32];
  int   n, m, N;
} Keys;

/* The sizes the expression graph needs: n from the first 'coordinates' line, and the number of
 * 'param' lines. The file is rewound. */
static void OcpPrescan(FILE *fp, int *n, int *npar)
{
  char  *line = NULL;
  size_t cap  = 0;

  *n = 0, *npar = 0;
  while (getline(&line, &cap, fp) > 0) {
    char *hash = strchr(line, '#'), *colon, *key;
    if (hash)
      *hash = 0;
    if (!(colon = strchr(line, ':')))
      continue;
    *colon = 0;
    key    = Trim(line);
    if (!strncmp(key, "param ", 6))
      (*npar)++;
    else if (!strcmp(key, "coordinates") && !*n) {
      *n = 1;
      for (const char *c = colon + 1; *c; c++)
        *n += *c == ',';
    }
  }
  free(line);
  rewind(fp);
}

/* A new Ocp for n coordinates and up to npar parameters, with its expression graph. */
static int OcpNew(int n, int npar, Ocp **op)
{
  Ocp *o = calloc(1, sizeof(*o));

  *op = NULL;
  if (!o)
    return HS_ENOMEM;
  o->n = n, o->maxpar = npar, o->tvar = 2 * n, o->vel = 2 * n + 1, o->par = 3 * n + 1, o->nvars = o->par;
  o->names = calloc((size_t)(o->par + npar), sizeof(char *));
  o->vars  = calloc((size_t)(o->par + npar), sizeof(double));
  o->pmin  = calloc((size_t)npar + 1, sizeof(double));
  o->pmax  = calloc((size_t)npar + 1, sizeof(double));
  o->phelp = calloc((size_t)npar + 1, sizeof(char *));
  if (!o->names || !o->vars || !o->pmin || !o->pmax || !o->phelp || HsExprCreate(o->par + npar, o->par, &o->ex)) {
    OcpDestroy(o);
    return HS_ENOMEM;
  }
  o->names[o->tvar] = "t";
  *op = o;
  return HS_SUCCESS;
}

/* The range of 'param NAME: expr in [a, b]' (or '(a, b)', '[a, b)', '(a, b]'; a, b numbers, inf or
 * -inf): cut off the value text at " in " (*val ends there), the closed range in *lo, *hi (an open
 * end is the next double inside), and its text. No range: [-1e300, 1e300], help NULL. */
static int OcpRange(Src *s, char *val, int vcol, double *lo, double *hi, char **help)
{
  char *r = NULL, *end, *end2;

  *lo = -1e300, *hi = 1e300, *help = NULL;
  for (char *c = strstr(val, "in"); c; c = strstr(c + 1, "in")) {
    const char *b = c + 2;
    while (isspace((unsigned char)*b))
      b++;
    if (c > val && isspace((unsigned char)c[-1]) && isspace((unsigned char)c[2]) && (*b == '[' || *b == '('))
      r = c;
  }
  if (!r)
    return 0;
  {
    const char *b = r + 2, *bad = "expected 'in [low, high]' with low <= high (numbers, inf or -inf), got '%s'";
    int         col = vcol + (int)(r - val);
    char        close;
    while (isspace((unsigned char)*b))
      b++;
    *lo = strtod(b + 1, &end);
    if (end == b + 1 || *(end += strspn(end, " \t")) != ',')
      return Fail(s, col, bad, r);
    *hi = strtod(end + 1, &end2);
    if (end2 == end + 1)
      return Fail(s, col, bad, r);
    end2 += strspn(end2, " \t");
    close = *end2;
    if ((close != ']' && close != ')') || *Trim(end2 + 1) || !(*lo <= *hi))
      return Fail(s, col, bad, r);
    if (*b == '(')
      *lo = nextafter(*lo, INFINITY);
    if (close == ')')
      *hi = nextafter(*hi, -INFINITY);
    if (!(*help = malloc(strlen(r) + 32)))
      return HS_ENOMEM;
    snprintf(*help, strlen(r) + 32, "file parameter %s", Trim(r));
  }
  *r = 0;
  return 0;
}

/* 'param NAME: expr [in RANGE]': a constant, in the earlier parameters; its own name is known only
 * afterwards; its value must lie in its range (OcpRange), also when set with -p_NAME. */
static int OcpParam(Src *s, Ocp *o, const char *line, char *key, char *val, int vcol)
{
  char *pn = Trim(key + 6), what[96];
  int   j  = o->par + o->npar, ret;

  snprintf(what, sizeof what, "param %s", pn);
  if (o->npar >= o->maxpar)
    return Fail(s, 1, "param %s: more parameters than the file's first reading counted", pn);
  ret = OcpRange(s, val, vcol, &o->pmin[o->npar], &o->pmax[o->npar], &o->phelp[o->npar]);
  if (!ret)
    ret = Number(s, o, Trim(val), vcol, what, &o->vars[j], NULL);
  if (!ret && !(o->vars[j] >= o->pmin[o->npar] && o->vars[j] <= o->pmax[o->npar]))
    ret = o->phelp[o->npar] ? Fail(s, vcol, "param %s: the value %g is not %s", pn, o->vars[j], o->phelp[o->npar] + 15)
                            : Fail(s, vcol, "param %s: the value %g is outside [-1e300, 1e300]", pn, o->vars[j]);
  if (!ret)
    ret = Name(s, o, pn, (int)(pn - line) + 1, j, "param");
  if (!ret)
    o->npar++, o->nvars = j + 1;
  else
    free(o->phelp[o->npar]), o->phelp[o->npar] = NULL;
  return ret;
}

/* 'let NAME: expr': a named subexpression in coordinates, momenta, t, parameters and earlier names. */
static int OcpLet(Src *s, Ocp *o, const char *line, char *key, const char *val, int vcol)
{
  char *ln = Trim(key + 4), what[96];
  int   nd, ret;

  snprintf(what, sizeof what, "let %s", ln);
  ret = MakeExpr(s, o, val, vcol, what, ALLOW_Q | ALLOW_P | ALLOW_T | ALLOW_V, &nd);
  if (!ret)
    ret = Name(s, o, ln, (int)(ln - line) + 1, -1, "let");
  if (!ret)
    o->let_node[o->nlet - 1] = nd;
  return ret;
}

/* 'coordinates: q1, q2, ...': the names q_i, p_<q_i> and <q_i>_dot. */
static int OcpCoordinates(Src *s, Ocp *o, Keys *K, const char *line, const char *key, char *val, int vcol)
{
  char **items;
  int   *c, n, ret = 0;

  if (K->n)
    return Fail(s, (int)(key - line) + 1, "'coordinates' is given twice");
  n = SplitList(val, vcol, &items, &c);
  if (n < 0)
    return HS_ENOMEM;
  if (n != o->n)
    ret = Fail(s, vcol, "coordinates: %d names, but the file's first reading counted %d", n, o->n);
  for (int i = 0; !ret && i < n; i++) {
    char pn[256];
    ret = Name(s, o, items[i], c[i], i, "coordinates");
    snprintf(pn, sizeof pn, "p_%s", items[i]);
    if (!ret)
      ret = Name(s, o, pn, c[i], n + i, "coordinates");
    snprintf(pn, sizeof pn, "%s_dot", items[i]);
    if (!ret)
      ret = Name(s, o, pn, c[i], o->vel + i, "coordinates");
  }
  free(items), free(c);
  K->n = ret ? 0 : n;
  return ret;
}

/* An integer key in [lo, hi] (controls, N). */
static int OcpInteger(Src *s, const char *what, const char *val, int vcol, long lo, long hi, int *v)
{
  char *end;
  long  x = strtol(val, &end, 10);

  if (end == val || *Trim(end) || x < lo || x > hi)
    return Fail(s, vcol, "%s: expected an integer from %ld to %ld, got '%s'", what, lo, hi, val);
  *v = (int)x;
  return 0;
}

/* 'state_scheme: NAME', 'costate_scheme: NAME': one of the schemes (whether the two go together is
 * checked by the solver, which names the file's choice as the problem's default). */
static int OcpSchemeKey(Src *s, Keys *K, const char *key, const char *val, int vcol)
{
  static const char *const ss[] = {"midpoint", "greenspan", "gonzalez", NULL},
                           *const cs[] = {"conserving", "conserving_1dof", "trapezoidal", "kkt", NULL};
  int                      state = !strcmp(key, "state_scheme");
  const char *const       *list  = state ? ss : cs;

  for (int i = 0; list[i]; i++)
    if (!strcmp(val, list[i])) {
      snprintf(state ? K->ss : K->cs, sizeof K->ss, "%s", val);
      return 0;
    }
  return Fail(s, vcol, "%s: unknown scheme '%s' (%s)", key, val,
              state ? "midpoint, greenspan or gonzalez" : "conserving, conserving_1dof, trapezoidal or kkt");
}

/* One 'key: value' line. */
static int OcpKeyLine(Src *s, Ocp *o, Keys *K, const char *line, char *key, char *val, int vcol)
{
  int k;

  for (k = 0; k < K_COUNT; k++)
    if (!strcmp(key, keys[k]))
      break;
  if (k < K_COUNT) {
    if (K->text[k])
      return Fail(s, (int)(key - line) + 1, "'%s' is given twice", key);
    K->lines[k] = s->line, K->cols[k] = vcol;
    return (K->text[k] = strdup(val)) ? 0 : HS_ENOMEM;
  }
  if ((!strcmp(key, "problem") && K->name[0]) || (!strcmp(key, "controls") && K->m) || (!strcmp(key, "N") && K->N) ||
      (!strcmp(key, "state_scheme") && K->ss[0]) || (!strcmp(key, "costate_scheme") && K->cs[0]))
    return Fail(s, (int)(key - line) + 1, "'%s' is given twice", key);
  if (!strcmp(key, "problem")) {
    if (!*val || strlen(val) >= sizeof K->name)
      return Fail(s, vcol, "problem: a name of 1 to %d characters", (int)sizeof K->name - 1);
    snprintf(K->name, sizeof K->name, "%s", val);
  } else if (!strcmp(key, "state_scheme") || !strcmp(key, "costate_scheme"))
    return OcpSchemeKey(s, K, key, val, vcol);
  else if (!strncmp(key, "param ", 6))
    return OcpParam(s, o, line, key, val, vcol);
  else if (!strncmp(key, "let ", 4))
    return OcpLet(s, o, line, key, val, vcol);
  else if (!strcmp(key, "coordinates"))
    return OcpCoordinates(s, o, K, line, key, val, vcol);
  else if (!strcmp(key, "controls"))
    return OcpInteger(s, "controls", val, vcol, 1, 100000, &K->m);
  else if (!strcmp(key, "N"))
    return OcpInteger(s, "N", val, vcol, 2, 100000000, &K->N);
  else
    return Fail(s, (int)(key - line) + 1,
                "unknown key '%s' (expected problem, param NAME, let NAME, coordinates, controls, mass, potential, B, "
                "R, T, N, x0, xT, running_cost, terminal_cost, u_min, u_max, state_scheme, costate_scheme)",
                key);
  return 0;
}

/* Pass 1: every line; parameters and 'let's are parsed in order, the other keys kept as text. */
static int OcpReadKeys(FILE *fp, Src *s, Ocp *o, Keys *K)
{
  char  *line = NULL;
  size_t cap  = 0;
  int    ret  = 0;

  while (!ret && getline(&line, &cap, fp) > 0) {
    char *t, *colon, *key, *val, *hash = strchr(line, '#');
    s->line++;
    if (hash)
      *hash = 0;
    t = Trim(line);
    if (!*t)
      continue;
    colon = strchr(t, ':');
    if (!colon) {
      ret = Fail(s, (int)(t - line) + 1, "expected 'key: value'");
      break;
    }
    *colon = 0;
    key    = Trim(t);
    val    = Trim(colon + 1);
    ret    = OcpKeyLine(s, o, K, line, key, val, (int)(val - line) + 1);
  }
  free(line);
  return ret;
}

/* The keys every file must have. */
static int OcpCheckMissing(Src *s, const Keys *K)
{
  const char *missing = !K->n                                  ? "coordinates"
                        : !K->m                                ? "controls"
                        : !K->text[K_MASS] && !K->text[K_KIN] ? "mass (or kinetic_energy)"
                        : !K->text[K_V]                        ? "potential"
                        : !K->text[K_B]                        ? "B"
                        : !K->text[K_R]                        ? "R"
                        : !K->text[K_X0]                       ? "x0"
                        : !K->text[K_XT]                       ? "xT"
                        : !K->text[K_T]                        ? "T"
                                                               : NULL;
  s->line = 0;
  return missing ? Fail(s, 0, "missing '%s'", missing) : 0;
}

/* M(q) from 'mass' (n*n entries, row-major) or from 'kinetic_energy' T(q, qdot): M_ij = d^2 T /
 * dqdot_i dqdot_j, which must not depend on the velocities (that T has no terms of degree 0 or 1
 * is checked at x0, OcpCheckAtX0). node[0..n*n-1]: the entries; *kin: T's node (-1 without). */
static int OcpBuildMass(Src *s, Ocp *o, const Keys *K, int *node, int *kin)
{
  int n = o->n, ret = 0;

  if (K->text[K_MASS] && K->text[K_KIN]) {
    s->line = K->lines[K_KIN];
    return Fail(s, 1, "give either 'mass' or 'kinetic_energy', not both");
  }
  if (K->text[K_MASS]) {
    char **items;
    int   *c, k;
    s->line = K->lines[K_MASS];
    if ((k = SplitList(K->text[K_MASS], K->cols[K_MASS], &items, &c)) < 0)
      return HS_ENOMEM;
    if (k != n * n)
      ret = Fail(s, K->cols[K_MASS], "mass: expected n*n = %d entries (row-major), found %d", n * n, k);
    for (int e = 0; !ret && e < n * n; e++)
      ret = MakeExpr(s, o, items[e], c[e], "mass", ALLOW_Q, &node[e]);
    free(items), free(c);
    return ret;
  }
  s->line = K->lines[K_KIN];
  ret     = MakeExpr(s, o, K->text[K_KIN], K->cols[K_KIN], "kinetic_energy", ALLOW_Q | ALLOW_V, kin);
  for (int i = 0; !ret && i < n; i++) {
    int di = HsExprDiff(o->ex, *kin, o->vel + i);
    for (int j = i; !ret && j < n; j++) {
      int v;
      if (di < 0 || (node[i * n + j] = node[j * n + i] = HsExprDiff(o->ex, di, o->vel + j)) < 0)
        ret = HS_ENOMEM;
      else if ((v = UsesKind(o, node[i * n + j], ALLOW_V)) >= 0)
        ret = Fail(s, K->cols[K_KIN],
                   "kinetic_energy: not quadratic in the velocities: d2T/d%s d%s depends on %s (T must be "
                   "1/2 qdot^T M(q) qdot)",
                   o->names[o->vel + i], o->names[o->vel + j], o->names[v]);
    }
  }
  return ret;
}

/* The constant lists B (n x m), R (m x m), x0, xT (2n; '*' or 'free': a free terminal component) and
 * T, as one program of constants (evaluated again after every -p_NAME, OcpUpdate). */
static int OcpBuildConstants(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  static const char *const what[] = {"",    "", "B (n x m, row-major)", "R (m x m, row-major)", "x0 (q then p)",
                                     "xT (q then p)", "", "T", "", "", "u_min (m entries, '*' for none)",
                                     "u_max (m entries, '*' for none)"};
  static const int order[] = {K_B, K_R, K_X0, K_XT, K_T, K_UMIN, K_UMAX};
  int n = o->n, m = K->m, count[] = {0, 0, n * m, m * m, 2 * n, 2 * n, 0, 1, 0, 0, m, m}, ncst = 0, ret = 0;
  int total = n * m + m * m + 4 * n + 1 + 2 * m, *cst = malloc(sizeof(int) * (size_t)total);

  o->cst_val = malloc(sizeof(double) * (size_t)total);
  if (!cst || !o->cst_val) {
    free(cst);
    return HS_ENOMEM;
  }
  o->bounded = K->text[K_UMIN] || K->text[K_UMAX];
  for (int oi = 0; !ret && oi < 7; oi++) {
    char **items;
    int    a = order[oi], *c, k;
    if (a >= K_UMIN && !K->text[a]) { /* no bound on this side */
      for (int j = 0; o->bounded && j < m; j++)
        cst[ncst++] = HsExprConstant(o->ex, a == K_UMIN ? -INFINITY : INFINITY);
      continue;
    }
    s->line = K->lines[a];
    if ((k = SplitList(K->text[a], K->cols[a], &items, &c)) < 0) {
      ret = HS_ENOMEM;
      break;
    }
    if (k != count[a])
      ret = a == K_T ? Fail(s, K->cols[a], "T: expected one expression, found %d", k)
                     : Fail(s, K->cols[a], "%s: expected %d entries, found %d", what[a], count[a], k);
    for (int i = 0; !ret && i < k; i++) {
      double v;
      if (a == K_XT && !(p->xT_fixed[i] = !(!strcmp(items[i], "*") || !strcmp(items[i], "free")))) {
        cst[ncst++] = HsExprConstant(o->ex, 0);
        continue;
      }
      if (a >= K_UMIN && !strcmp(items[i], "*")) {
        cst[ncst++] = HsExprConstant(o->ex, a == K_UMIN ? -INFINITY : INFINITY);
        continue;
      }
      ret = Number(s, o, items[i], c[i], what[a], &v, &cst[ncst++]);
      if (!ret && a == K_T && !(v > 0))
        ret = Fail(s, c[i], "T: the horizon must be positive, got %g", v);
    }
    free(items), free(c);
  }
  o->nB = n * m, o->nR = m * m;
  if (!ret && Program(o, ncst, cst, &o->prog[P_CST]))
    ret = HS_ENOMEM;
  free(cst);
  return ret;
}

/* T(q0, w) = 1/2 w^T M(q0) w for two velocity vectors w: T has no terms of degree 0 or 1. */
static int OcpCheckKinetic(Src *s, Ocp *o, const Keys *K, int kin, const double *Mx)
{
  int     n = o->n, ret = 0;
  double *w = malloc(sizeof(double) * (size_t)n);

  if (!w)
    return HS_ENOMEM;
  for (int trial = 0; !ret && trial < 2; trial++) {
    double T0, quad = 0;
    for (int i = 0; i < n; i++)
      o->vars[o->vel + i] = w[i] = trial ? 0.37 * (i + 1) : 1.0 - 0.3 * i;
    if (EvalSlow(o, 1, &kin, &T0)) {
      ret = HS_ENOMEM;
      break;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        quad += 0.5 * w[i] * Mx[i * n + j] * w[j];
    if (!(fabs(T0 - quad) <= 1e-12 * (fabs(T0) + fabs(quad)) + 1e-300))
      ret = Fail(s, K->cols[K_KIN],
                 "kinetic_energy: T = %.17g at x0 and qdot = (%g, ...), but 1/2 qdot^T M qdot = %.17g: T has "
                 "terms of degree 0 or 1 in the velocities",
                 T0, w[0], quad);
  }
  free(w);
  return ret;
}

/* At the initial state x0: M finite and symmetric (then exactly symmetric: the upper triangle for
 * both), T quadratic in the velocities; then V, which must be finite there. node[n*n]: V's node. */
static int OcpCheckAtX0(Src *s, Ocp *o, const Keys *K, int *node, int kin)
{
  int     n = o->n, mkey = K->text[K_MASS] ? K_MASS : K_KIN, ret = 0;
  double *Mx = malloc(sizeof(double) * (size_t)(n * n)), V0;

  if (!Mx)
    return HS_ENOMEM;
  s->line = K->lines[mkey];
  HsExprProgramSetSlow(o->prog[P_CST], o->vars);
  HsExprProgramEval(o->prog[P_CST], o->vars, o->cst_val);
  OcpSetState(o, o->cst_val + o->nB + o->nR, 0);
  if (EvalSlow(o, n * n, node, Mx))
    ret = HS_ENOMEM;
  for (int e = 0; !ret && e < n * n; e++) {
    int i = e / n, j = e % n;
    if (!isfinite(Mx[e]))
      ret = Fail(s, K->cols[mkey], "%s: M entry (%d,%d) is not finite at the initial state x0", keys[mkey], i + 1,
                 j + 1);
    else if (fabs(Mx[e] - Mx[j * n + i]) > 1e-12 * (fabs(Mx[e]) + fabs(Mx[j * n + i])) + 1e-300)
      ret = Fail(s, K->cols[mkey], "mass: M(q) is not symmetric at x0: entry (%d,%d) = %.17g, (%d,%d) = %.17g", i + 1,
                 j + 1, Mx[e], j + 1, i + 1, Mx[j * n + i]);
  }
  if (!ret && kin >= 0)
    ret = OcpCheckKinetic(s, o, K, kin, Mx);
  free(Mx);
  for (int e = 0; !ret && e < n * n; e++)
    if (e % n < e / n)
      node[e] = node[(e % n) * n + e / n];
  if (!ret) {
    s->line = K->lines[K_V];
    ret     = MakeExpr(s, o, K->text[K_V], K->cols[K_V], "potential", ALLOW_Q, &node[n * n]);
  }
  if (!ret && (EvalSlow(o, 1, &node[n * n], &V0) || !isfinite(V0)))
    ret = Fail(s, K->cols[K_V], "potential: V is not finite at the initial state x0");
  return ret;
}

/* Derivatives of M and V up to third order, one program per order and cumulative ones (P_*_UPTO);
 * a mass matrix that does not depend on q (*const_mass) gets its values' program only. */
static int OcpBuildPrograms(Ocp *o, const int *node, int *const_mass)
{
  int  n = o->n, nn = n * n, szM[4] = {nn, 0, 0, 0}, szV[4] = {1, n, nn, nn * n}, ret = 0; /* n <= 1000 */
  int *Mn, *Vn;

  *const_mass = 1;
  for (int e = 0; e < nn; e++)
    *const_mass &= !HsExprDependsOnFast(o->ex, node[e]);
  if (!*const_mass && n > HS_OCP_MAX_COORDINATES_MASS) /* before n^5 is formed */
    return HS_ERANGE;
  if (!*const_mass)
    szM[1] = nn * n, szM[2] = nn * nn, szM[3] = nn * nn * n;
  Mn = malloc(sizeof(int) * (size_t)(*const_mass ? nn : szM[0] + szM[1] + szM[2] + szM[3]));
  Vn = malloc(sizeof(int) * (size_t)(szV[0] + szV[1] + szV[2] + szV[3]));
  if (!Mn || !Vn) {
    free(Mn), free(Vn);
    return HS_ENOMEM;
  }
  memcpy(Mn, node, sizeof(int) * (size_t)nn);
  Vn[0] = node[nn];
  if ((!*const_mass && Derive3(o, n, nn, Mn)) || Derive3(o, n, 1, Vn))
    ret = HS_ENOMEM;
  for (int k = 0, om = 0, ov = 0; !ret && k < 4; om += szM[k], ov += szV[k], k++) {
    int mass = k == 0 || !*const_mass;
    if ((mass && Program(o, szM[k], Mn + om, &o->prog[P_MASS + k])) || Program(o, szV[k], Vn + ov, &o->prog[P_POT + k]))
      ret = HS_ENOMEM;
    if (!ret && k > 0 &&
        ((mass && Program(o, om + szM[k], Mn, &o->prog[P_MASS_UPTO + k - 1])) ||
         Program(o, ov + szV[k], Vn, &o->prog[P_POT_UPTO + k - 1])))
      ret = HS_ENOMEM;
  }
  free(Mn), free(Vn);
  return ret;
}

/* The running cost ell(q, p, t) and the terminal cost phi(q, p) with their gradients and Hessians. */
static int OcpBuildCosts(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  int e, ret = 0;

  if (K->text[K_ELL]) {
    s->line = K->lines[K_ELL];
    ret     = MakeExpr(s, o, K->text[K_ELL], K->cols[K_ELL], "running_cost", ALLOW_Q | ALLOW_P | ALLOW_T, &e);
    if (!ret && DeriveCost(o, e, &o->prog[P_ELL]))
      ret = HS_ENOMEM;
    if (!ret)
      p->ell.f = OcpEll, p->ell.grad = OcpEllGrad, p->ell.hess = OcpEllHess,
      p->ell.time_dependent = HsExprDependsOn(o->ex, e, o->tvar);
  }
  if (!ret && K->text[K_PHI]) {
    s->line = K->lines[K_PHI];
    ret     = MakeExpr(s, o, K->text[K_PHI], K->cols[K_PHI], "terminal_cost", ALLOW_Q | ALLOW_P, &e);
    if (!ret && DeriveCost(o, e, &o->prog[P_PHI]))
      ret = HS_ENOMEM;
    if (!ret)
      p->phi.f = OcpPhi, p->phi.grad = OcpPhiGrad, p->phi.hess = OcpPhiHess;
  }
  return ret;
}

/* The mechanical system into the problem (which then owns *op), its parameters, the constants at
 * the current parameters, the default schemes; M must be positive definite at x0. */
static int OcpInstall(Src *s, Ocp **op, const Keys *K, HsProblem *p, int const_mass)
{
  Ocp         *o    = *op;
  HsMechanical mech = {o->n, OcpMass, OcpPotential, o, 1, const_mass};
  int          mkey = K->text[K_MASS] ? K_MASS : K_KIN;

  if (HsProblemSetMechanical(p, &mech, OcpDestroy))
    return HS_ENOMEM;
  *op    = NULL; /* owned by the problem now */
  p->N   = K->N > 0 ? K->N : 20;
  p->update = OcpUpdate;
  if (o->bounded && (!(p->u_min = malloc(sizeof(double) * (size_t)p->m)) ||
                     !(p->u_max = malloc(sizeof(double) * (size_t)p->m))))
    return HS_ENOMEM;
  for (int i = 0; i < o->npar; i++)
    if (HsProblemAddParam(p, o->names[o->par + i], o->phelp[i] ? o->phelp[i] : "file parameter", &o->vars[o->par + i],
                          o->pmin[i], o->pmax[i]))
      return HS_ENOMEM;
  if (o->n == 1 && const_mass) /* 1 DOF with a constant mass: the Greenspan scheme applies */
    p->sep.available = 1, p->sep.V = OcpPotential1;
  if (OcpUpdate(p)) { /* B, R, x0, xT, T, the bounds, M(x0) positive definite, the Greenspan mass */
    if (!strncmp(p->why, "u_min", 5)) {
      s->line = K->lines[K->text[K_UMIN] ? K_UMIN : K_UMAX];
      return Fail(s, 1, "%s", p->why);
    }
    s->line = K->lines[mkey];
    return Fail(s, K->cols[mkey], "%s: M(q) is not positive definite at the initial state x0", keys[mkey]);
  }
  snprintf(o->ss, sizeof o->ss, "%s", K->ss[0] ? K->ss : (p->sep.available ? "greenspan" : "gonzalez"));
  snprintf(o->cs, sizeof o->cs, "%s", K->cs[0] ? K->cs : (p->sep.available ? "conserving_1dof" : "conserving"));
  p->default_state_scheme   = o->ss;
  p->default_costate_scheme = o->cs;
  return 0;
}

/*@ HsProblemReadFile - the bytes of a problem file, for HsProblemCreateFromText (so that one MPI
    rank can read the file and send the bytes to the others).

  Not collective. A problem file is text: a directory, a file larger than HS_OCP_MAX_BYTES (16 MiB;
  also an endless device such as /dev/zero) and a NUL byte (at "file:line:column") are errors.

  Input: path; msg, msglen - room for a message.
  Output: text - the bytes with a NUL appended (free() it); len - their number.

  Returns HS_SUCCESS, HS_EPARSE (see msg) or HS_ENOMEM.
@*/
int HsProblemReadFile(const char *path, char **text, size_t *len, char *msg, int msglen)
{
  FILE  *fp = fopen(path, "r");
  char  *buf;
  size_t n = 0, cap = 4096;

  *text = NULL, *len = 0;
  if (!fp) {
    snprintf(msg, (size_t)msglen, "%s: cannot open problem file: %s", path, strerror(errno));
    return HS_EPARSE;
  }
  if (!(buf = malloc(cap + 1))) {
    fclose(fp);
    return HS_ENOMEM;
  }
  for (size_t r; (r = fread(buf + n, 1, cap - n, fp)) > 0;) {
    n += r;
    if (n == cap) {
      char *b = cap >= HS_OCP_MAX_BYTES ? NULL : realloc(buf, 2 * cap + 1);
      if (!b) {
        snprintf(msg, (size_t)msglen, cap >= HS_OCP_MAX_BYTES ? "%s: larger than %d MiB: not a problem file"
                                                               : "%s: out of memory reading the file",
                 path, HS_OCP_MAX_BYTES >> 20);
        free(buf), fclose(fp);
        return cap >= HS_OCP_MAX_BYTES ? HS_EPARSE : HS_ENOMEM;
      }
      buf = b, cap *= 2;
    }
  }
  if (ferror(fp)) {
    snprintf(msg, (size_t)msglen, "%s: cannot read problem file: %s", path, strerror(errno));
    free(buf), fclose(fp);
    return HS_EPARSE;
  }
  fclose(fp);
  buf[n] = 0;
  for (size_t i = 0, line = 1, col = 1; i < n; i++, col++) {
    if (!buf[i]) {
      snprintf(msg, (size_t)msglen, "%s:%zu:%zu: a NUL byte: a problem file is text", path, line, col);
      free(buf);
      return HS_EPARSE;
    }
    if (buf[i] == '\n')
      line++, col = 0;
  }
  *text = buf, *len = n;
  return HS_SUCCESS;
}

/*@ HsProblemCreateFromText - a problem from the bytes of a problem file (docs/problem-format.md),
    as HsProblemCreateFromFile does.

  Not collective. Input: path - the file's name, for messages and as the problem's name if the file
  has no 'problem:' key; text, len - the bytes (need not end in NUL; a NUL byte is an error);
  msg, msglen - room for a message.
  Output: prob - the problem; on failure NULL and msg says "file:line:column: what is wrong".

  Returns HS_SUCCESS, HS_EPARSE or HS_ENOMEM.
@*/
int HsProblemCreateFromText(const char *path, const char *text, size_t len, HsProblem **prob, char *msg, int msglen)
{
  FILE      *fp;
  Src        s = {path, 0, msg, msglen};
  Keys       K;
  Ocp       *o    = NULL;
  HsProblem *p    = NULL;
  int       *node = NULL, kin = -1, n, npar, const_mass = 0, ret;
  const char *nul = memchr(text, 0, len);

  *prob = NULL;
  memset(&K, 0, sizeof K);
  if (nul) {
    s.line = 1;
    for (const char *c = text; c < nul; c++)
      s.line += *c == '\n';
    return Fail(&s, 1, "a NUL byte: a problem file is text");
  }
  if (!len) {
    snprintf(msg, (size_t)msglen, "%s: the problem file is empty", path);
    return HS_EPARSE;
  }
  if (!(fp = fmemopen((void *)text, len, "r")))
    return HS_ENOMEM;
  OcpPrescan(fp, &n, &npar);
  if (n > HS_OCP_MAX_COORDINATES) {
    fclose(fp);
    snprintf(msg, (size_t)msglen, "%s: coordinates: %d names, at most %d (the potential's third derivatives have n^3 entries)",
             path, n, HS_OCP_MAX_COORDINATES);
    return HS_EPARSE;
  }
  ret = OcpNew(n, npar, &o);
  if (!ret)
    ret = OcpReadKeys(fp, &s, o, &K);
  fclose(fp);
  if (!ret)
    ret = OcpCheckMissing(&s, &K);
  if (!ret && (!(node = calloc((size_t)(n * n + 1), sizeof(int))) ||
               HsProblemAllocate(K.name[0] ? K.name : path, n, K.m, &p)))
    ret = HS_ENOMEM;
  if (!ret)
    ret = OcpBuildMass(&s, o, &K, node, &kin);
  if (!ret)
    ret = OcpBuildConstants(&s, o, &K, p);
  if (!ret)
    ret = OcpCheckAtX0(&s, o, &K, node, kin);
  if (!ret)
    ret = OcpBuildPrograms(o, node, &const_mass);
  if (ret == HS_ERANGE) {
    s.line = K.lines[K.text[K_MASS] ? K_MASS : K_KIN];
    ret    = Fail(&s, 1, "M(q) depends on q: its third derivatives have n^5 entries, so at most %d coordinates (here %d)",
                  HS_OCP_MAX_COORDINATES_MASS, n);
  }
  if (!ret)
    ret = OcpBuildCosts(&s, o, &K, p);
  if (!ret)
    ret = OcpInstall(&s, &o, &K, p, const_mass);
  for (int k = 0; k < K_COUNT; k++)
    free(K.text[k]);
  free(node);
  OcpDestroy(o); /* NULL once the problem owns it */
  if (ret) {
    if (ret == HS_ENOMEM)
      snprintf(msg, (size_t)msglen, "%s: out of memory", path);
    HsProblemDestroy(&p);
    return ret == HS_ENOMEM ? HS_ENOMEM : HS_EPARSE;
  }
  *prob = p;
  return HS_SUCCESS;
}

/*@ HsProblemCreateFromFile - reads a problem file (.ocp, docs/problem-format.md): a mechanical
    system by its mass matrix (or kinetic energy) and potential, the costs, the boundary data, the
    horizon and named parameters (-p_NAME), with every derivative the schemes need derived
    symbolically (file head). HsProblemReadFile, then HsProblemCreateFromText.

  Not collective (the driver reads the file on one rank and sends the bytes to the others).

  Input: path; msg, msglen - room for a message.
  Output: prob - the problem (HsProblemDestroy frees it); on failure NULL, and msg says
          "file:line:column: what is wrong".

  Returns HS_SUCCESS, HS_EPARSE (the file cannot be opened or read as a problem; see msg) or HS_ENOMEM.
@*/
int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen)
{
  char  *text;
  size_t len;
  int    ret = HsProblemReadFile(path, &text, &len, msg, msglen);

  *prob = NULL;
  if (ret)
    return ret;
  ret = HsProblemCreateFromText(path, text, len, prob, msg, msglen);
  free(text);
  return ret;
}
