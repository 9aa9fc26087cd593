/* hamshoot: problem files (.ocp), docs/problem-format.md.
 *
 * A file defines a mechanical system by its mass matrix M(q) and potential
 * V(q) as expressions (problems/expr.c); the derivatives that the energy's
 * structure formulas need (M_{,i}, M_{,ij}, M_{,ijk}, V_{,i}, V_{,ij}, V_{,ijk};
 * problems/mechanical.c) and the costs' gradients and Hessians are derived
 * symbolically once, when the file is read, into one shared expression graph,
 * and compiled into register programs (one per derivative order), so that an
 * evaluation of order k runs exactly the instructions it needs.
 *
 * Variables of the graph, at fixed indices: q_i at i, p_i at OCP_MAXN + i, t at
 * 2 OCP_MAXN, the velocities of kinetic_energy at OCP_VEL + i (these are fast:
 * set on every evaluation), then the parameters from OCP_PAR on (slow: their
 * programs' parameter-only parts run again when one is set with -p_NAME).
 */
#include "hsexpr.h"
#include "hsmechanical.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OCP_MAXN 8
#define OCP_VEL (2 * OCP_MAXN + 1) /* velocities <q>_dot (kinetic_energy only) */
#define OCP_PAR (3 * OCP_MAXN + 1) /* first parameter */
#define OCP_MAXVARS (OCP_PAR + HS_MAX_PARAMS)
#define OCP_NCONST (2 * OCP_MAXN * OCP_MAXN + 4 * OCP_MAXN + 1) /* B, R, x0, xT, T */
#define OCP_MAXLET 32                                           /* named subexpressions ('let NAME: expr') */

/* Programs of a problem: mass and potential, one per derivative order
 * k = 0..3 (the order-k derivatives only: an evaluation that adds orders at
 * the same q) and for the orders 0..k, k = 1..3 (P_*_UPTO + k - 1: a new q,
 * sharing sin, cos, ... between the orders), the running and terminal cost
 * (value, gradient, Hessian), the constant lists. */
enum { P_MASS = 0, P_POT = 4, P_ELL = 8, P_PHI = 11, P_CST = 14, P_MASS_UPTO = 15, P_POT_UPTO = 18, P_COUNT = 21 };

typedef struct {
  int            n, npar, nvars, tvar; /* nvars: OCP_PAR + npar; tvar = 2 OCP_MAXN (see above) */
  char           ss[32], cs[32];
  char          *names[OCP_MAXVARS];
  double         vars[OCP_MAXVARS];
  HsExpr        *ex;
  HsExprProgram *prog[P_COUNT];
  int            nB, nR;
  double         cst_val[OCP_NCONST];
  char          *let_name[OCP_MAXLET];
  int            let_node[OCP_MAXLET], nlet;
  char          *texts[64]; /* owned copies of names */
  int            ntexts;
} Ocp;

/* q into variables 0..n-1 and (with_p) p into OCP_MAXN..OCP_MAXN+n-1 */
static void OcpSetState(Ocp *o, const double *x, int with_p)
{
  memcpy(o->vars, x, (size_t)o->n * sizeof(double));
  if (with_p)
    memcpy(o->vars + OCP_MAXN, x + o->n, (size_t)o->n * sizeof(double));
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
static void OcpUpdate(HsProblem *p)
{
  Ocp *o = HsProblemGetMechanicalContext(p);
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
  p->T = o->cst_val[k];
  if (p->sep.available) {
    double M0;
    OcpMass(p->x0, &M0, NULL, NULL, NULL, o);
    p->sep.mass = M0;
  }
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
    int v = kind == ALLOW_Q ? i : kind == ALLOW_P ? OCP_MAXN + i : kind == ALLOW_V ? OCP_VEL + i : o->tvar;
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
      int kind = j < OCP_MAXN       ? ALLOW_Q
                 : j < 2 * OCP_MAXN ? ALLOW_P
                 : j == o->tvar     ? ALLOW_T
                 : j < OCP_PAR      ? ALLOW_V
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
  char   m[256];
  int    pos = 0, st;

  if (!text[0])
    return Fail(s, col, "%s: expected an expression", what);
  st = HsExprParse(o->ex, text, LookupName, &L, node, &pos, m, sizeof m);
  switch (st) {
  case 0:
    return 0;
  case 1:
    return Fail(s, col + pos, "%s: cannot parse '%s': %s", what, text, m);
  case 2:
    return Fail(s, col + pos, "%s: %s in '%s'", what, m, text);
  case 3:
    return Fail(s, col + pos, "%s: %s, in '%s'", what, L.why, text);
  default:
    return Fail(s, col, "%s: out of memory", what);
  }
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

/* Index of state component i of x = (q, p) among the variables. */
static int XVar(const Ocp *o, int i) { return i < o->n ? i : OCP_MAXN + i - o->n; }

/* Gradient and Hessian of a cost in the 2n state variables; programs prog[0..2]. */
static int DeriveCost(Ocp *o, int node, HsExprProgram **prog)
{
  int d = 2 * o->n, g[2 * OCP_MAXN], H[4 * OCP_MAXN * OCP_MAXN];
  for (int i = 0; i < d; i++)
    if ((g[i] = HsExprDiff(o->ex, node, XVar(o, i))) < 0)
      return -1;
  for (int i = 0; i < d; i++)
    for (int j = i; j < d; j++)
      if ((H[i * d + j] = H[j * d + i] = HsExprDiff(o->ex, g[i], XVar(o, j))) < 0)
        return -1;
  return Program(o, 1, &node, &prog[0]) || Program(o, d, g, &prog[1]) || Program(o, d * d, H, &prog[2]) ? -1 : 0;
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
  if (o->ntexts == (int)(sizeof o->texts / sizeof o->texts[0]) || !(o->texts[o->ntexts] = strdup(text)))
    return Fail(s, col, "%s: out of memory", what);
  if (j >= 0)
    o->names[j] = o->texts[o->ntexts++];
  else
    o->let_name[o->nlet++] = o->texts[o->ntexts++];
  return 0;
}

int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen)
{
  enum { K_MASS, K_V, K_B, K_R, K_X0, K_XT, K_ELL, K_T, K_PHI, K_KIN, K_COUNT };
  static const char *keys[K_COUNT] = {"mass",          "potential",     "B", "R", "x0", "xT", "running_cost", "T",
                                      "terminal_cost", "kinetic_energy"};
  FILE              *fp            = fopen(path, "r");
  Src                s             = {path, 0, msg, msglen};
  Ocp               *o             = NULL;
  HsProblem         *p             = NULL;
  char               line[4096], name[HS_NAME_LEN] = "", *text[K_COUNT] = {0}, ss[32] = "", cs[32] = "";
  int                n = 0, m = 0, N = 0, ret = 0, cols[K_COUNT] = {0}, lines[K_COUNT] = {0};
  int               *node = NULL, *cst = NULL, ncst = 0, kin = -1, mkey = K_MASS;

  *prob = NULL;
  if (!fp) {
    snprintf(msg, (size_t)msglen, "%s: cannot open problem file: %s", path, strerror(errno));
    return 2;
  }
  o = calloc(1, sizeof(*o));
  if (!o || HsExprCreate(OCP_MAXVARS, OCP_PAR, &o->ex)) {
    free(o);
    fclose(fp);
    return -1;
  }
  o->tvar           = 2 * OCP_MAXN;
  o->nvars          = OCP_PAR;
  o->names[o->tvar] = "t";
  /* pass 1: collect key/value lines; parameters are evaluated in order */
  while (!ret && fgets(line, sizeof line, fp)) {
    char *t, *colon, *key, *val, *hash = strchr(line, '#');
    int   vcol, k;
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
    for (k = 0; k < K_COUNT; k++)
      if (!strcmp(key, keys[k]))
        break;
    if (k < K_COUNT) {
      if (text[k])
        ret = Fail(&s, (int)(key - line) + 1, "'%s' is given twice", key);
      else if (!(text[k] = strdup(val)))
        ret = -1;
      lines[k] = s.line, cols[k] = vcol;
    } else if (!strcmp(key, "problem"))
      snprintf(name, sizeof name, "%s", val);
    else if (!strncmp(key, "param ", 6)) {
      char *pn = Trim(key + 6), what[96];
      int   j  = OCP_PAR + o->npar;
      snprintf(what, sizeof what, "param %s", pn);
      if (o->npar >= HS_MAX_PARAMS)
        ret = Fail(&s, 1, "too many parameters (at most %d)", HS_MAX_PARAMS);
      /* a parameter may use earlier parameters; its own name is known only afterwards */
      if (!ret)
        ret = Number(&s, o, val, vcol, what, &o->vars[j], NULL);
      if (!ret)
        ret = Name(&s, o, pn, (int)(pn - line) + 1, j, "param");
      if (!ret)
        o->npar++, o->nvars = j + 1;
    } else if (!strncmp(key, "let ", 4)) {
      char *ln = Trim(key + 4), what[96];
      int   nd;
      snprintf(what, sizeof what, "let %s", ln);
      if (o->nlet >= OCP_MAXLET)
        ret = Fail(&s, 1, "too many 'let' definitions (at most %d)", OCP_MAXLET);
      /* the expression may use coordinates, momenta, t, parameters and earlier names */
      if (!ret)
        ret = MakeExpr(&s, o, val, vcol, what, ALLOW_Q | ALLOW_P | ALLOW_T | ALLOW_V, &nd);
      if (!ret)
        ret = Name(&s, o, ln, (int)(ln - line) + 1, -1, "let");
      if (!ret)
        o->let_node[o->nlet - 1] = nd;
    } else if (!strcmp(key, "coordinates")) {
      char *items[OCP_MAXN + 1];
      int   c[OCP_MAXN + 1];
      if (n) {
        ret = Fail(&s, (int)(key - line) + 1, "'coordinates' is given twice");
        break;
      }
      n = SplitList(val, items, c, vcol, OCP_MAXN);
      if (n < 1) {
        ret = Fail(&s, vcol, "coordinates: expected 1 to %d comma-separated names", OCP_MAXN);
        break;
      }
      for (int i = 0; !ret && i < n; i++) {
        char pn[80];
        ret = Name(&s, o, items[i], c[i], i, "coordinates");
        snprintf(pn, sizeof pn, "p_%s", items[i]);
        if (!ret)
          ret = Name(&s, o, pn, c[i], OCP_MAXN + i, "coordinates");
        snprintf(pn, sizeof pn, "%s_dot", items[i]);
        if (!ret)
          ret = Name(&s, o, pn, c[i], OCP_VEL + i, "coordinates");
      }
      o->n = n;
    } else if (!strcmp(key, "controls")) {
      char *end;
      long  v = strtol(val, &end, 10);
      if (end == val || *Trim(end) || v < 1 || v > OCP_MAXN)
        ret = Fail(&s, vcol, "controls: expected an integer from 1 to %d, got '%s'", OCP_MAXN, val);
      m = (int)v;
    } else if (!strcmp(key, "N")) {
      char *end;
      long  v = strtol(val, &end, 10);
      if (end == val || *Trim(end) || v < 2 || v > 100000000)
        ret = Fail(&s, vcol, "N: expected an integer >= 2, got '%s'", val);
      N = (int)v;
    } else if (!strcmp(key, "state_scheme"))
      snprintf(ss, sizeof ss, "%s", val);
    else if (!strcmp(key, "costate_scheme"))
      snprintf(cs, sizeof cs, "%s", val);
    else
      ret = Fail(
          &s, (int)(key - line) + 1,
          "unknown key '%s' (expected problem, param NAME, let NAME, coordinates, controls, mass, potential, B, R, "
          "T, N, x0, xT, running_cost, terminal_cost, state_scheme, costate_scheme)",
          key);
  }
  fclose(fp);
  /* pass 2: the whole problem */
  if (!ret) {
    const char *missing = !n                              ? "coordinates"
                          : !m                            ? "controls"
                          : !text[K_MASS] && !text[K_KIN] ? "mass (or kinetic_energy)"
                          : !text[K_V]                    ? "potential"
                          : !text[K_B]                    ? "B"
                          : !text[K_R]                    ? "R"
                          : !text[K_X0]                   ? "x0"
                          : !text[K_XT]                   ? "xT"
                          : !text[K_T]                    ? "T"
                                                          : NULL;
    s.line              = 0;
    if (missing)
      ret = Fail(&s, 0, "missing '%s'", missing);
  }
  if (!ret) {
    int nn = n * n, total = nn + nn * n + nn * nn + nn * nn * n;
    node = calloc((size_t)total, sizeof(int));
    cst  = calloc(OCP_NCONST, sizeof(int));
    if (!node || !cst || HsProblemAllocate(name[0] ? name : path, n, m, &p))
      ret = -1;
  }
  if (!ret && text[K_MASS] && text[K_KIN]) {
    s.line = lines[K_KIN];
    ret    = Fail(&s, 1, "give either 'mass' or 'kinetic_energy', not both");
  }
  /* mass matrix: n*n entries, symmetric (checked at x0 below) */
  if (!ret && text[K_MASS]) {
    char *items[OCP_MAXN * OCP_MAXN + 1];
    int   c[OCP_MAXN * OCP_MAXN + 1], k;
    s.line = lines[K_MASS];
    k      = SplitList(text[K_MASS], items, c, cols[K_MASS], OCP_MAXN * OCP_MAXN + 1);
    if (k != n * n)
      ret = Fail(&s, cols[K_MASS], "mass: expected n*n = %d entries (row-major), found %d", n * n, k);
    for (int e = 0; !ret && e < n * n; e++)
      ret = MakeExpr(&s, o, items[e], c[e], "mass", ALLOW_Q, &node[e]);
  }
  /* or the kinetic energy T(q, qdot): M_ij = d^2 T / d qdot_i d qdot_j, which must not depend on the
   * velocities (T quadratic in them); that T has no terms of degree 0 or 1 is checked at x0 below */
  if (!ret && text[K_KIN]) {
    s.line = lines[K_KIN];
    ret    = MakeExpr(&s, o, text[K_KIN], cols[K_KIN], "kinetic_energy", ALLOW_Q | ALLOW_V, &kin);
    for (int i = 0; !ret && i < n; i++) {
      int di = HsExprDiff(o->ex, kin, OCP_VEL + i);
      for (int j = i; !ret && j < n; j++) {
        int v;
        if (di < 0 || (node[i * n + j] = node[j * n + i] = HsExprDiff(o->ex, di, OCP_VEL + j)) < 0)
          ret = -1;
        else if ((v = UsesKind(o, node[i * n + j], ALLOW_V)) >= 0)
          ret = Fail(&s, cols[K_KIN],
                     "kinetic_energy: not quadratic in the velocities: d2T/d%s d%s depends on %s (T must be "
                     "1/2 qdot^T M(q) qdot)",
                     o->names[OCP_VEL + i], o->names[OCP_VEL + j], o->names[v]);
      }
    }
  }
  /* constant lists: B (n x m), R (m x m), x0, xT (2n; '*' or 'free': a free terminal component), T */
  for (int a = K_B; !ret && a <= K_T; a++) {
    static const char *what[] = {
        "", "", "B (n x m, row-major)", "R (m x m, row-major)", "x0 (q then p)", "xT (q then p)", "", "T"};
    int   count[] = {0, 0, n * m, m * m, 2 * n, 2 * n, 0, 1};
    char *items[64];
    int   c[64], k;
    if (a == K_ELL)
      continue;
    s.line = lines[a];
    k      = SplitList(text[a], items, c, cols[a], 64);
    if (k != count[a]) {
      ret = a == K_T ? Fail(&s, cols[a], "T: expected one expression, found %d", k)
                     : Fail(&s, cols[a], "%s: expected %d entries, found %d", what[a], count[a], k);
      break;
    }
    for (int i = 0; !ret && i < k; i++) {
      double v;
      if (a == K_XT)
        p->xT_fixed[i] = !(!strcmp(items[i], "*") || !strcmp(items[i], "free"));
      if (a == K_XT && !p->xT_fixed[i]) {
        cst[ncst++] = HsExprConstant(o->ex, 0);
        continue;
      }
      ret = Number(&s, o, items[i], c[i], what[a], &v, &cst[ncst++]);
      if (!ret && a == K_T && !(v > 0))
        ret = Fail(&s, c[i], "T: the horizon must be positive, got %g", v);
    }
  }
  if (!ret) {
    double Mx[OCP_MAXN * OCP_MAXN], V0;
    int    e = 0;
    o->nB = n * m, o->nR = m * m;
    if (Program(o, ncst, cst, &o->prog[P_CST]))
      ret = -1;
    /* values at x0: M finite and symmetric there, V finite */
    mkey   = text[K_MASS] ? K_MASS : K_KIN;
    s.line = lines[mkey];
    if (!ret) {
      double x0[2 * OCP_MAXN];
      HsExprProgramSetSlow(o->prog[P_CST], o->vars);
      HsExprProgramEval(o->prog[P_CST], o->vars, o->cst_val);
      memcpy(x0, o->cst_val + n * m + m * m, 2 * (size_t)n * sizeof(double));
      OcpSetState(o, x0, 0);
      if (EvalSlow(o, n * n, node, Mx))
        ret = -1;
    }
    for (e = 0; !ret && e < n * n; e++) {
      int i = e / n, j = e % n;
      if (!isfinite(Mx[e]))
        ret =
            Fail(&s, cols[mkey], "%s: M entry (%d,%d) is not finite at the initial state x0", keys[mkey], i + 1, j + 1);
      else if (fabs(Mx[e] - Mx[j * n + i]) > 1e-12 * (fabs(Mx[e]) + fabs(Mx[j * n + i])) + 1e-300)
        ret = Fail(&s, cols[mkey], "mass: M(q) is not symmetric at x0: entry (%d,%d) = %.17g, (%d,%d) = %.17g", i + 1,
                   j + 1, Mx[e], j + 1, i + 1, Mx[j * n + i]);
    }
    /* kinetic energy: T(q0, w) = 1/2 w^T M(q0) w for two velocity vectors w (no terms of degree 0 or 1) */
    for (int trial = 0; !ret && kin >= 0 && trial < 2; trial++) {
      double w[OCP_MAXN], T0, quad = 0;
      for (int i = 0; i < n; i++)
        o->vars[OCP_VEL + i] = w[i] = trial ? 0.37 * (i + 1) : 1.0 - 0.3 * i;
      if (EvalSlow(o, 1, &kin, &T0)) {
        ret = -1;
        break;
      }
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          quad += 0.5 * w[i] * Mx[i * n + j] * w[j];
      if (!(fabs(T0 - quad) <= 1e-12 * (fabs(T0) + fabs(quad)) + 1e-300))
        ret = Fail(&s, cols[K_KIN],
                   "kinetic_energy: T = %.17g at x0 and qdot = (%g, ...), but 1/2 qdot^T M qdot = %.17g: T has "
                   "terms of degree 0 or 1 in the velocities",
                   T0, w[0], quad);
    }
    for (e = 0; !ret && e < n * n; e++)
      if (e % n < e / n)
        node[e] = node[(e % n) * n + e / n]; /* the upper triangle for both: exactly symmetric */
    if (!ret) {
      s.line = lines[K_V];
      ret    = MakeExpr(&s, o, text[K_V], cols[K_V], "potential", ALLOW_Q, &node[n * n]);
    }
    /* potential value at x0 */
    if (!ret && (EvalSlow(o, 1, &node[n * n], &V0) || !isfinite(V0)))
      ret = Fail(&s, cols[K_V], "potential: V is not finite at the initial state x0");
  }
  /* derivatives of M and V up to third order, one program per order */
  if (!ret) {
    int  nn = n * n, szM[4] = {nn, nn * n, nn * nn, nn * nn * n}, szV[4] = {1, n, nn, nn * n};
    int *Mn = node, Vn[1 + OCP_MAXN + OCP_MAXN * OCP_MAXN + OCP_MAXN * OCP_MAXN * OCP_MAXN];
    Vn[0]   = node[nn];
    if (Derive3(o, n, nn, Mn) || Derive3(o, n, 1, Vn))
      ret = -1;
    for (int k = 0, om = 0, ov = 0; !ret && k < 4; om += szM[k], ov += szV[k], k++) {
      if (Program(o, szM[k], Mn + om, &o->prog[P_MASS + k]) || Program(o, szV[k], Vn + ov, &o->prog[P_POT + k]))
        ret = -1;
      if (!ret && k > 0 &&
          (Program(o, om + szM[k], Mn, &o->prog[P_MASS_UPTO + k - 1]) ||
           Program(o, ov + szV[k], Vn, &o->prog[P_POT_UPTO + k - 1])))
        ret = -1;
    }
  }
  if (!ret && text[K_ELL]) {
    int e;
    s.line = lines[K_ELL];
    ret    = MakeExpr(&s, o, text[K_ELL], cols[K_ELL], "running_cost", ALLOW_Q | ALLOW_P | ALLOW_T, &e);
    if (!ret && DeriveCost(o, e, &o->prog[P_ELL]))
      ret = -1;
    if (!ret)
      p->ell.f = OcpEll, p->ell.grad = OcpEllGrad, p->ell.hess = OcpEllHess,
      p->ell.time_dependent = HsExprDependsOn(o->ex, e, o->tvar);
  }
  if (!ret && text[K_PHI]) {
    int e;
    s.line = lines[K_PHI];
    ret    = MakeExpr(&s, o, text[K_PHI], cols[K_PHI], "terminal_cost", ALLOW_Q | ALLOW_P, &e);
    if (!ret && DeriveCost(o, e, &o->prog[P_PHI]))
      ret = -1;
    if (!ret)
      p->phi.f = OcpPhi, p->phi.grad = OcpPhiGrad, p->phi.hess = OcpPhiHess;
  }
  if (!ret) {
    HsMechanical mech       = {n, OcpMass, OcpPotential, o, 1, 1};
    int          const_mass = 1;
    for (int e = 0; e < n * n; e++)
      const_mass &= !HsExprDependsOnFast(o->ex, node[e]);
    mech.constant_mass = const_mass;
    if (HsProblemSetMechanical(p, &mech, OcpDestroy))
      ret = -1;
    else
      o = NULL; /* owned by the problem now */
    if (!ret) {
      Ocp *oc   = HsProblemGetMechanicalContext(p);
      p->N      = N > 0 ? N : 20;
      p->update = OcpUpdate;
      for (int i = 0; i < oc->npar; i++)
        HsProblemAddParam(p, oc->names[OCP_PAR + i], "file parameter", &oc->vars[OCP_PAR + i], -1e300, 1e300);
      /* 1 DOF with a constant mass: the Greenspan scheme applies */
      if (n == 1 && const_mass)
        p->sep.available = 1, p->sep.V = OcpPotential1;
      OcpUpdate(p); /* B, R, x0, xT, T and the Greenspan mass */
      snprintf(oc->ss, sizeof oc->ss, "%s", ss[0] ? ss : (p->sep.available ? "greenspan" : "gonzalez"));
      snprintf(oc->cs, sizeof oc->cs, "%s", cs[0] ? cs : (p->sep.available ? "conserving_1dof" : "conserving"));
      p->default_state_scheme   = oc->ss;
      p->default_costate_scheme = oc->cs;
      /* the mass matrix must be positive definite at the initial state */
      {
        double E;
        s.line = lines[mkey];
        if (p->E.f(p->x0, &E, p->ctx))
          ret = Fail(&s, cols[mkey], "%s: M(q) is not positive definite at the initial state x0", keys[mkey]);
      }
    }
  }
  for (int k = 0; k < K_COUNT; k++)
    free(text[k]);
  free(node);
  free(cst);
  if (ret) {
    OcpDestroy(o);
    HsProblemDestroy(&p);
    return ret;
  }
  *prob = p;
  return 0;
}
