/* hamshoot: symbolic expressions, their derivatives, and register programs
 * that evaluate them (problems/hsexpr.h).
 *
 * Why not GNU libmatheval (which the first problem-file reader used): it
 * keeps one tree per expression and per derivative, shares nothing between
 * them, does not simplify (0*g terms survive differentiation), and looks every
 * variable up by name on each evaluation. For the 3-link arm the n^2 + n^3 +
 * n^4 entries of M, M_{,i}, M_{,ij} are a few dozen distinct subexpressions
 * (cos and sin of three angle combinations times parameter products); with
 * libmatheval a step evaluation took 21x the C problem's time
 * (bench/README.md). Here the graph is hash-consed, so each such subexpression
 * is one node evaluated once per call, parameter-only subexpressions are
 * evaluated once per parameter change, and the evaluation is a flat loop over
 * register instructions. No library in Debian offers this for C (GiNaC and
 * SymEngine are C++ computer-algebra systems; libgccjit would need a compiler
 * toolchain at run time).
 */
#include "hsexpr.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  OP_CONST,
  OP_VAR,
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_NEG,
  OP_POW,
  OP_POWI,
  OP_SIN,
  OP_COS,
  OP_TAN,
  OP_ASIN,
  OP_ACOS,
  OP_ATAN,
  OP_SINH,
  OP_COSH,
  OP_TANH,
  OP_EXP,
  OP_LOG,
  OP_SQRT,
  OP_ABS,
  OP_SIGN,
  OP_STEP,
  OP_ATAN2,
  OP_MIN,
  OP_MAX,
  OP_SEL /* c > 0 ? a : b, with c in field x: derivatives of min and max */
};

typedef struct {
  int    op, a, b, x; /* operands (node ids); a is the variable index for OP_VAR */
  double c;           /* OP_CONST: the value; OP_POWI: the exponent */
  int    fast;        /* depends on a fast variable */
  int    depth;       /* 1 + the largest depth of the operands (recursions over the graph go this deep) */
  double err;         /* OP_CONST: a bound on the absolute round-off of c, half an ulp for a number of the text, the
                         operations' for a constant folded from them (FoldErr; HsExprProgramEvalBound starts from it) */
} Node;

struct HsExpr_s {
  int       nvars, nfast;
  int       W;    /* words of a dependency set: ceil(nvars / 64) */
  Node     *node;
  uint64_t *deps; /* node id's dependency set at deps[id W .. id W + W-1]: bit v set if it depends on v */
  int       nnode, cap;
  int      *hash; /* open addressing, -1 empty */
  int       hcap;
  int     **memo; /* memo[v][node] = 1 + id of d(node)/dv, 0 unknown (nvars arrays) */
  int      *memocap;
  int       zero, one;
  size_t    bytes; /* what nodes, dependency sets, hash and memos hold now (HS_EXPR_MAX_BYTES) */
  int       over;  /* a growth was refused for the budget (HsExprOverBudget) */
};

/* Whether the graph may grow by more bytes (HS_EXPR_MAX_BYTES); counts them if so. A hostile problem file can make
 * a graph grow as n^3 (a potential whose third derivatives are all distinct: 1000 coordinates in a 40 kB file would
 * take hundreds of GB, the sixth security review): the budget makes that an error before the machine runs out. */
static int Budget(HsExpr *ex, size_t more)
{
  if (ex->bytes + more > (size_t)HS_EXPR_MAX_BYTES) {
    ex->over = 1;
    return -1;
  }
  ex->bytes += more;
  return 0;
}

/* Whether node id depends on variable v. */
static int Dep(const HsExpr *ex, int id, int v) { return (int)(ex->deps[(size_t)id * ex->W + v / 64] >> (v % 64) & 1); }

static uint64_t HashKey(const Node *n)
{
  uint64_t h, cb;
  memcpy(&cb, &n->c, sizeof cb);
  h = (uint64_t)n->op * 0x9E3779B97F4A7C15ULL;
  h ^= ((uint64_t)(uint32_t)n->a + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;
  h ^= ((uint64_t)(uint32_t)n->b + 0x85EBCA77C2B2AE63ULL) * 0x94D049BB133111EBULL;
  h ^= ((uint64_t)(uint32_t)n->x + 0x27D4EB2F165667C5ULL) * 0xC2B2AE3D27D4EB4FULL;
  h ^= cb * 0xFF51AFD7ED558CCDULL;
  if (n->op == OP_CONST) { /* a constant's round-off bound is part of it (Same) */
    uint64_t eb;
    memcpy(&eb, &n->err, sizeof eb);
    h ^= eb * 0xD6E8FEB86659FD93ULL;
  }
  h ^= h >> 31;
  return h;
}

static int Same(const Node *u, const Node *v)
{
  return u->op == v->op && u->a == v->a && u->b == v->b && u->x == v->x && memcmp(&u->c, &v->c, sizeof u->c) == 0 &&
         (u->op != OP_CONST || memcmp(&u->err, &v->err, sizeof u->err) == 0);
}

static int Rehash(HsExpr *ex, int hcap)
{
  int *h;
  if (Budget(ex, (size_t)(hcap - ex->hcap) * sizeof(int)) || !(h = malloc((size_t)hcap * sizeof(int))))
    return -1;
  for (int i = 0; i < hcap; i++)
    h[i] = -1;
  for (int id = 0; id < ex->nnode; id++) {
    uint64_t k = HashKey(&ex->node[id]) & (uint64_t)(hcap - 1);
    while (h[k] >= 0)
      k = (k + 1) & (uint64_t)(hcap - 1);
    h[k] = id;
  }
  free(ex->hash);
  ex->hash = h, ex->hcap = hcap;
  return 0;
}

/* The node equal to *n, created if new (no simplification here). */
static int Intern(HsExpr *ex, Node *n)
{
  uint64_t k;
  if (n->op == OP_CONST && n->c == 0)
    n->c = 0.0; /* -0 and +0 are one node */
  if (2 * (ex->nnode + 1) > ex->hcap && Rehash(ex, 2 * ex->hcap))
    return -1;
  k = HashKey(n) & (uint64_t)(ex->hcap - 1);
  while (ex->hash[k] >= 0) {
    if (Same(&ex->node[ex->hash[k]], n)) /* a constant of one value but another bound is another node: sharing one with
                                            the larger bound had loosened every other use of the value (a folded 2 of
                                            bound 2.2 made a real rate 2e-3 y read as round-off; round 28's review) */
      return ex->hash[k];
    k = (k + 1) & (uint64_t)(ex->hcap - 1);
  }
  if (ex->nnode == ex->cap) {
    int       cap = 2 * ex->cap;
    Node     *nn;
    uint64_t *nd;
    if (Budget(ex, (size_t)(cap - ex->cap) * (sizeof(Node) + (size_t)ex->W * sizeof(uint64_t))) ||
        !(nn = realloc(ex->node, (size_t)cap * sizeof(Node))))
      return -1;
    ex->node = nn;
    nd       = realloc(ex->deps, (size_t)cap * ex->W * sizeof(uint64_t));
    if (!nd)
      return -1;
    ex->deps = nd, ex->cap = cap;
  }
  {
    uint64_t *d = ex->deps + (size_t)ex->nnode * ex->W;
    memset(d, 0, (size_t)ex->W * sizeof(uint64_t));
    n->fast = 0, n->depth = 1;
    if (n->op == OP_VAR)
      d[n->a / 64] = (uint64_t)1 << (n->a % 64), n->fast = n->a < ex->nfast;
    else if (n->op != OP_CONST) {
      const int ops[3] = {n->a, n->b, n->x};
      for (int o = 0; o < 3; o++)
        if (ops[o] >= 0) {
          for (int w = 0; w < ex->W; w++)
            d[w] |= ex->deps[(size_t)ops[o] * ex->W + w];
          n->fast |= ex->node[ops[o]].fast;
          if (ex->node[ops[o]].depth >= n->depth)
            n->depth = ex->node[ops[o]].depth + 1;
        }
    }
  }
  ex->node[ex->nnode] = *n;
  ex->hash[k]         = ex->nnode;
  return ex->nnode++;
}

/*@ HsExprConstant - the node of the constant c (one node per value and round-off bound). Not collective. Returns the node, or -1 without memory. @*/
int HsExprConstant(HsExpr *ex, double c)
{
  Node n = {OP_CONST, -1, -1, -1, c, 0, 0, DBL_EPSILON / 2 * fabs(c)}; /* as rounded from its decimal text */
  return Intern(ex, &n);
}

/* The constant c whose round-off is bounded by err (a folded one: FoldErr). */
static int ConstantErr(HsExpr *ex, double c, double err)
{
  Node n = {OP_CONST, -1, -1, -1, c, 0, 0, err};
  return Intern(ex, &n);
}

/*@ HsExprVariable - the node of variable v, 0 <= v < nvars. Not collective. Returns the node, or -1 (bad v, no memory). @*/
int HsExprVariable(HsExpr *ex, int v)
{
  Node n = {OP_VAR, v, -1, -1, 0, 0, 0, 0};
  if (v < 0 || v >= ex->nvars)
    return -1;
  return Intern(ex, &n);
}

/*@ HsExprCreate - an empty expression graph over nvars variables (any number), of which 0..nfast-1
    are fast (set on every evaluation) and nfast..nvars-1 slow (parameters: the programs' parameter-only
    parts run once per change, HsExprProgramSetSlow).

  Not collective. Returns HS_SUCCESS, HS_EINVAL (nvars < 0, nfast outside [0, nvars]) or HS_ENOMEM.
@*/
int HsExprCreate(int nvars, int nfast, HsExpr **exp)
{
  HsExpr *ex;
  *exp = NULL;
  if (nvars < 0 || nfast < 0 || nfast > nvars)
    return HS_EINVAL;
  ex = calloc(1, sizeof(*ex));
  if (!ex)
    return HS_ENOMEM;
  ex->nvars = nvars, ex->nfast = nfast;
  ex->W       = nvars > 0 ? (nvars + 63) / 64 : 1;
  ex->cap     = 256;
  ex->node    = malloc((size_t)ex->cap * sizeof(Node));
  ex->deps    = malloc((size_t)ex->cap * ex->W * sizeof(uint64_t));
  ex->memo    = calloc((size_t)nvars + 1, sizeof(int *));
  ex->memocap = calloc((size_t)nvars + 1, sizeof(int));
  ex->hcap    = 16;
  if (!ex->node || !ex->deps || !ex->memo || !ex->memocap || Rehash(ex, 512)) {
    HsExprDestroy(&ex);
    return HS_ENOMEM;
  }
  ex->zero = HsExprConstant(ex, 0);
  ex->one  = HsExprConstant(ex, 1);
  if (ex->zero < 0 || ex->one < 0) {
    HsExprDestroy(&ex);
    return HS_ENOMEM;
  }
  *exp = ex;
  return HS_SUCCESS;
}

/*@ HsExprDestroy - frees the graph and sets *ex = NULL; NULL-safe; programs made from it stay valid. Not collective. @*/
void HsExprDestroy(HsExpr **exp)
{
  HsExpr *ex;
  if (!exp || !*exp)
    return;
  ex = *exp;
  for (int v = 0; ex->memo && v < ex->nvars; v++)
    free(ex->memo[v]);
  free(ex->memo);
  free(ex->memocap);
  free(ex->deps);
  free(ex->node);
  free(ex->hash);
  free(ex);
  *exp = NULL;
}

/*@ HsExprSize - the number of nodes in the graph. Not collective. @*/
int HsExprSize(const HsExpr *ex) { return ex->nnode; }

/*@ HsExprIsConstant - 1 and its value (if value is not NULL) if node id is a numeric constant, else 0. Not collective. @*/
int HsExprIsConstant(const HsExpr *ex, int id, double *value)
{
  if (id < 0 || ex->node[id].op != OP_CONST)
    return 0;
  if (value)
    *value = ex->node[id].c;
  return 1;
}

/*@ HsExprDependsOn - 1 if node id depends (structurally) on variable v, else 0. Not collective. @*/
int HsExprDependsOn(const HsExpr *ex, int id, int v)
{
  return id >= 0 && v >= 0 && v < ex->nvars && Dep(ex, id, v);
}

/*@ HsExprDependsOnFast - 1 if node id depends on any fast variable, else 0. Not collective. @*/
int HsExprDependsOnFast(const HsExpr *ex, int id) { return id >= 0 && ex->node[id].fast; }

/* ------------------------------------------------------------ arithmetic ---- */

static double PowI(double a, int k)
{
  double r = 1, b = a;
  int    e = k < 0 ? -k : k;
  while (e) {
    if (e & 1)
      r *= b;
    b *= b;
    e >>= 1;
  }
  return k < 0 ? 1 / r : r;
}

/* One operation on values (used by constant folding and by the programs). */
static double Apply(int op, double a, double b, double x, double c)
{
  switch (op) {
  case OP_ADD:
    return a + b;
  case OP_SUB:
    return a - b;
  case OP_MUL:
    return a * b;
  case OP_DIV:
    return a / b;
  case OP_NEG:
    return -a;
  case OP_POW:
    return pow(a, b);
  case OP_POWI:
    return PowI(a, (int)c);
  case OP_SIN:
    return sin(a);
  case OP_COS:
    return cos(a);
  case OP_TAN:
    return tan(a);
  case OP_ASIN:
    return asin(a);
  case OP_ACOS:
    return acos(a);
  case OP_ATAN:
    return atan(a);
  case OP_SINH:
    return sinh(a);
  case OP_COSH:
    return cosh(a);
  case OP_TANH:
    return tanh(a);
  case OP_EXP:
    return exp(a);
  case OP_LOG:
    return log(a);
  case OP_SQRT:
    return sqrt(a);
  case OP_ABS:
    return fabs(a);
  case OP_SIGN:
    return a > 0 ? 1.0 : a < 0 ? -1.0 : 0.0;
  case OP_STEP:
    return a >= 0 ? 1.0 : 0.0;
  case OP_ATAN2:
    return atan2(a, b);
  case OP_MIN:
    return a < b ? a : b;
  case OP_MAX:
    return a > b ? a : b;
  case OP_SEL:
    return x > 0 ? a : b;
  }
  return NAN;
}

static int IsC(const HsExpr *ex, int id, double c) { return ex->node[id].op == OP_CONST && ex->node[id].c == c; }

static int Mk(HsExpr *ex, int op, int a, int b, int x, double c);
static int    ConstantErr(HsExpr *ex, double c, double err);
static double FoldErr(int op, const Node *a, const Node *b, double x, double c);

/* Canonical operand order of commutative operations: constants first, then by id. */
static int Later(const HsExpr *ex, int a, int b)
{
  int ca = ex->node[a].op == OP_CONST, cb = ex->node[b].op == OP_CONST;
  return ca != cb ? cb : a > b;
}

static int Neg(HsExpr *ex, int a) { return Mk(ex, OP_NEG, a, -1, -1, 0); }
static int Add(HsExpr *ex, int a, int b) { return Mk(ex, OP_ADD, a, b, -1, 0); }
static int Sub(HsExpr *ex, int a, int b) { return Mk(ex, OP_SUB, a, b, -1, 0); }
static int Mul(HsExpr *ex, int a, int b) { return Mk(ex, OP_MUL, a, b, -1, 0); }
static int Div(HsExpr *ex, int a, int b) { return Mk(ex, OP_DIV, a, b, -1, 0); }
static int Un(HsExpr *ex, int op, int a) { return Mk(ex, op, a, -1, -1, 0); }

/* The simplifications of Mk, by operation: each returns the simplified node, -1 on failure, or
 * NONE if no rule applies (n is then interned as it is; commutative operands may be reordered in n). */
#define NONE (-2)

static int SimplifyAdd(HsExpr *ex, Node *n)
{
  int a = n->a, b = n->b;
  if (IsC(ex, a, 0))
    return b;
  if (IsC(ex, b, 0))
    return a;
  if (ex->node[b].op == OP_NEG)
    return Sub(ex, a, ex->node[b].a);
  if (ex->node[a].op == OP_NEG)
    return Sub(ex, b, ex->node[a].a);
  if (Later(ex, a, b))
    n->a = b, n->b = a; /* commutative: one order */
  return NONE;
}

static int SimplifySub(HsExpr *ex, const Node *n)
{
  int a = n->a, b = n->b;
  if (IsC(ex, b, 0))
    return a;
  if (IsC(ex, a, 0))
    return Neg(ex, b);
  if (a == b)
    return ex->zero;
  if (ex->node[b].op == OP_NEG)
    return Add(ex, a, ex->node[b].a);
  return NONE;
}

static int SimplifyMul(HsExpr *ex, Node *n)
{
  int a = n->a, b = n->b;
  if (IsC(ex, a, 0) || IsC(ex, b, 0))
    return ex->zero;
  if (IsC(ex, a, 1))
    return b;
  if (IsC(ex, b, 1))
    return a;
  if (IsC(ex, a, -1))
    return Neg(ex, b);
  if (IsC(ex, b, -1))
    return Neg(ex, a);
  if (ex->node[a].op == OP_NEG)
    return Neg(ex, Mul(ex, ex->node[a].a, b));
  if (ex->node[b].op == OP_NEG)
    return Neg(ex, Mul(ex, a, ex->node[b].a));
  if (Later(ex, a, b))
    n->a = b, n->b = a;
  /* a constant times (constant times y): one product */
  if (ex->node[n->a].op == OP_CONST && ex->node[n->b].op == OP_MUL && ex->node[ex->node[n->b].a].op == OP_CONST)
    return Mul(ex,
               ConstantErr(ex, ex->node[n->a].c * ex->node[ex->node[n->b].a].c,
                           FoldErr(OP_MUL, &ex->node[n->a], &ex->node[ex->node[n->b].a], 0, 0)),
               ex->node[n->b].b);
  return NONE;
}

/* Division, negation, powers, selection. An integer power of an integer power is folded only while
 * the exponent stays within +-64 (beyond, pow: a huge folded exponent would loop in PowI). */
static int SimplifyOther(HsExpr *ex, const Node *n)
{
  int    a = n->a, b = n->b;
  double cb;
  switch (n->op) {
  case OP_DIV:
    if (IsC(ex, a, 0))
      return ex->zero;
    if (IsC(ex, b, 1))
      return a;
    if (a == b)
      return ex->one;
    if (ex->node[a].op == OP_NEG)
      return Neg(ex, Div(ex, ex->node[a].a, b));
    break;
  case OP_NEG:
    if (ex->node[a].op == OP_NEG)
      return ex->node[a].a;
    if (ex->node[a].op == OP_SUB)
      return Sub(ex, ex->node[a].b, ex->node[a].a);
    break;
  case OP_POW:
    if (HsExprIsConstant(ex, b, &cb)) {
      if (cb == 0)
        return ex->one;
      if (cb == 1)
        return a;
      if (cb == floor(cb) && fabs(cb) <= 64)
        return Mk(ex, OP_POWI, a, -1, -1, cb);
      if (cb == 0.5)
        return Un(ex, OP_SQRT, a);
    }
    break;
  case OP_POWI:
    if (n->c == 0)
      return ex->one;
    if (n->c == 1)
      return a;
    if (ex->node[a].op == OP_POWI && fabs(n->c * ex->node[a].c) <= 64)
      return Mk(ex, OP_POWI, ex->node[a].a, -1, -1, n->c * ex->node[a].c);
    break;
  case OP_SEL:
    if (a == b)
      return a;
    break;
  }
  return NONE;
}

/* Builds op(a, b) with light simplification; every operand id must be >= 0
 * where the operation uses it, or the result is -1 (an earlier failure). */
static int Mk(HsExpr *ex, int op, int a, int b, int x, double c)
{
  Node n      = {op, a, b, x, c, 0, 0, 0};
  int  binary = op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV || op == OP_POW || op == OP_ATAN2 ||
               op == OP_MIN || op == OP_MAX || op == OP_SEL;
  int    r;
  double ca = 0, cb = 0, cx = 0;

  if (a < 0 || (binary && b < 0) || (op == OP_SEL && x < 0))
    return -1;
  if (op != OP_SEL)
    n.x = -1;
  if (!binary)
    n.b = -1;
  /* constant folding, with the round-off of the operations folded (FoldErr): (0.1 + 0.2 - 0.3) is 5.6e-17, all of it
     round-off, which a bound of half an ulp of the result had called exact (issue 38, round 28) */
  if (HsExprIsConstant(ex, a, &ca) && (!binary || HsExprIsConstant(ex, b, &cb)) &&
      (op != OP_SEL || HsExprIsConstant(ex, x, &cx)))
    return ConstantErr(ex, Apply(op, ca, binary ? cb : 0, cx, c),
                       FoldErr(op, &ex->node[a], binary ? &ex->node[b] : NULL, cx, c));
  r = op == OP_ADD ? SimplifyAdd(ex, &n) : op == OP_SUB ? SimplifySub(ex, &n) : op == OP_MUL ? SimplifyMul(ex, &n)
                                                                                             : SimplifyOther(ex, &n);
  return r == NONE ? Intern(ex, &n) : r;
}

/* --------------------------------------------------------- derivatives ---- */

static int Deriv(HsExpr *ex, int id, int v);

static int DerivNode(HsExpr *ex, int id, int v)
{
  Node n = ex->node[id]; /* a copy: the node array may move */
  int  da, db, r;

  switch (n.op) {
  case OP_CONST:
    return ex->zero;
  case OP_VAR:
    return n.a == v ? ex->one : ex->zero;
  default:
    break;
  }
  da = Deriv(ex, n.a, v);
  db = n.b >= 0 ? Deriv(ex, n.b, v) : ex->zero;
  if (da < 0 || db < 0)
    return -1;
  switch (n.op) {
  case OP_ADD:
    return Add(ex, da, db);
  case OP_SUB:
    return Sub(ex, da, db);
  case OP_MUL:
    return Add(ex, Mul(ex, da, n.b), Mul(ex, n.a, db));
  case OP_DIV: /* (da - (a/b) db) / b */
    return Div(ex, Sub(ex, da, Mul(ex, id, db)), n.b);
  case OP_NEG:
    return Neg(ex, da);
  case OP_POWI:
    return Mul(ex, Mul(ex, HsExprConstant(ex, n.c), Mk(ex, OP_POWI, n.a, -1, -1, n.c - 1)), da);
  case OP_POW:
    if (IsC(ex, db, 0)) /* a^b with b independent of v */
      return Mul(ex, Mul(ex, n.b, Mk(ex, OP_POW, n.a, Sub(ex, n.b, ex->one), -1, 0)), da);
    return Mul(ex, id, Add(ex, Mul(ex, db, Un(ex, OP_LOG, n.a)), Div(ex, Mul(ex, n.b, da), n.a)));
  case OP_SIN:
    return Mul(ex, Un(ex, OP_COS, n.a), da);
  case OP_COS:
    return Neg(ex, Mul(ex, Un(ex, OP_SIN, n.a), da));
  case OP_TAN:
    return Mul(ex, Add(ex, ex->one, Mul(ex, id, id)), da);
  case OP_ASIN:
    return Div(ex, da, Un(ex, OP_SQRT, Sub(ex, ex->one, Mul(ex, n.a, n.a))));
  case OP_ACOS:
    return Neg(ex, Div(ex, da, Un(ex, OP_SQRT, Sub(ex, ex->one, Mul(ex, n.a, n.a)))));
  case OP_ATAN:
    return Div(ex, da, Add(ex, ex->one, Mul(ex, n.a, n.a)));
  case OP_SINH:
    return Mul(ex, Un(ex, OP_COSH, n.a), da);
  case OP_COSH:
    return Mul(ex, Un(ex, OP_SINH, n.a), da);
  case OP_TANH:
    return Mul(ex, Sub(ex, ex->one, Mul(ex, id, id)), da);
  case OP_EXP:
    return Mul(ex, id, da);
  case OP_LOG:
    return Div(ex, da, n.a);
  case OP_SQRT:
    return Div(ex, da, Mul(ex, HsExprConstant(ex, 2), id));
  case OP_ABS:
    return Mul(ex, Un(ex, OP_SIGN, n.a), da);
  case OP_SIGN:
  case OP_STEP:
    return ex->zero; /* almost everywhere */
  case OP_ATAN2:     /* atan2(a, b): (b da - a db) / (a^2 + b^2) */
    r = Sub(ex, Mul(ex, n.b, da), Mul(ex, n.a, db));
    return Div(ex, r, Add(ex, Mul(ex, n.a, n.a), Mul(ex, n.b, n.b)));
  case OP_MIN:
    return Mk(ex, OP_SEL, da, db, Sub(ex, n.b, n.a), 0);
  case OP_MAX:
    return Mk(ex, OP_SEL, da, db, Sub(ex, n.a, n.b), 0);
  case OP_SEL:
    return Mk(ex, OP_SEL, da, db, n.x, 0);
  }
  return -1;
}

static int Deriv(HsExpr *ex, int id, int v)
{
  int r;
  if (id < 0)
    return -1;
  if (!Dep(ex, id, v))
    return ex->zero;
  if (ex->memocap[v] <= id) {
    int  cap = 2 * (id + 1);
    int *m;
    if (Budget(ex, (size_t)(cap - ex->memocap[v]) * sizeof(int)) || !(m = realloc(ex->memo[v], (size_t)cap * sizeof(int))))
      return -1;
    memset(m + ex->memocap[v], 0, (size_t)(cap - ex->memocap[v]) * sizeof(int));
    ex->memo[v] = m, ex->memocap[v] = cap;
  }
  if (ex->memo[v][id])
    return ex->memo[v][id] - 1;
  r = DerivNode(ex, id, v);
  if (r < 0)
    return -1;
  ex->memo[v][id] = r + 1; /* the memo only grows: id is still inside it */
  return r;
}

/*@ HsExprDiff - d(node)/d(variable v) as a node, built symbolically with simplification and a memo
    per variable (a derivative is formed once). Not collective. Returns the node, or -1 (bad
    arguments, no memory). @*/
int HsExprDiff(HsExpr *ex, int node, int v)
{
  if (node < 0 || node >= ex->nnode || v < 0 || v >= ex->nvars)
    return -1;
  return Deriv(ex, node, v);
}

/* -------------------------------------------------------------- parser ---- */

typedef struct {
  HsExpr        *ex;
  const char    *s;
  int            pos, depth, status, errpos;
  HsExprLookupFn lookup;
  void          *lctx;
  char          *msg;
  int            msglen;
} Parser;

static const struct {
  const char *name;
  int         nargs, op;
} hs_functions[] = {
    {"sin", 1, OP_SIN},     {"cos", 1, OP_COS},   {"tan", 1, OP_TAN},   {"asin", 1, OP_ASIN}, {"acos", 1, OP_ACOS},
    {"atan", 1, OP_ATAN},   {"sinh", 1, OP_SINH}, {"cosh", 1, OP_COSH}, {"tanh", 1, OP_TANH}, {"exp", 1, OP_EXP},
    {"log", 1, OP_LOG},     {"sqrt", 1, OP_SQRT}, {"abs", 1, OP_ABS},   {"sign", 1, OP_SIGN}, {"step", 1, OP_STEP},
    {"atan2", 2, OP_ATAN2}, {"min", 2, OP_MIN},   {"max", 2, OP_MAX},   {"pow", 2, OP_POW},
};

/*@ HsExprIsReservedName - 1 if name is a function or a constant of the syntax (sin, ..., pi, e), else 0. Not collective. @*/
int HsExprIsReservedName(const char *name)
{
  for (size_t f = 0; f < sizeof hs_functions / sizeof hs_functions[0]; f++)
    if (!strcmp(name, hs_functions[f].name))
      return 1;
  return !strcmp(name, "pi") || !strcmp(name, "e");
}

static int PFail(Parser *P, int status, int pos, const char *fmt, const char *arg, int arglen)
{
  if (P->status)
    return -1;
  P->status = status, P->errpos = pos;
  snprintf(P->msg, (size_t)P->msglen, fmt, arglen, arg);
  return -1;
}

/* What is at the current position, for messages. */
static int Found(Parser *P, const char **s)
{
  const char *t = P->s + P->pos;
  int         k = 0;
  if (!*t) {
    *s = "the end of the expression";
    return (int)strlen(*s);
  }
  if (isalnum((unsigned char)*t) || *t == '_' || *t == '.')
    while (isalnum((unsigned char)t[k]) || t[k] == '_' || t[k] == '.')
      k++;
  else /* one character: a UTF-8 sequence whole (a Unicode minus had been cut to its first byte, printed alone) */
    for (k = 1; k < 4 && ((unsigned char)t[k] & 0xC0) == 0x80;)
      k++;
  *s = t;
  return k;
}

static void Skip(Parser *P)
{
  while (isspace((unsigned char)P->s[P->pos]))
    P->pos++;
}

static int Expr(Parser *P);

static int Expect(Parser *P, char c, const char *what)
{
  const char *f;
  int         k;
  Skip(P);
  if (P->s[P->pos] == c) {
    P->pos++;
    return 0;
  }
  k = Found(P, &f);
  if (!P->status) {
    char fmt[96];
    snprintf(fmt, sizeof fmt, "expected %s, found '%%.*s'", what);
    if (!P->s[P->pos])
      snprintf(fmt, sizeof fmt, "expected %s, found %%.*s", what);
    PFail(P, HS_EPARSE, P->pos, fmt, f, k);
  }
  return -1;
}

/* The decimal number at t (position start) into *v, the position moved past it; -1 after PFail. Decimal only: strtod
 * would read 0x1p3 as 8. */
static int Number(Parser *P, const char *t, int start, double *v)
{
  size_t      n   = HsDecimalLength(t, 0);
  const char *end = t + n;
  char        num[512];

  if (isalpha((unsigned char)*end) || *end == '_')
    return PFail(P, HS_EPARSE, (int)(end - P->s), "unexpected '%.*s' after a number (numbers are decimal)", end, 1);
  if (n >= sizeof num)
    return PFail(P, HS_EPARSE, start, "a number of more than 511 characters%.*s", "", 0);
  memcpy(num, t, n), num[n] = 0;
  *v = strtod(num, NULL);
  if (!isfinite(*v))
    return PFail(P, HS_EPARSE, start, "the number '%.*s' is beyond the doubles", t, (int)(n < 40 ? n : 40));
  P->pos += (int)n;
  return 0;
}

static int Primary(Parser *P)
{
  const char *t;
  int         start;
  Skip(P);
  start = P->pos;
  t     = P->s + P->pos;
  if (++P->depth > 200)
    return PFail(P, HS_EPARSE, start, "expression nested too deeply%.*s", "", 0);
  if (isdigit((unsigned char)*t) || (*t == '.' && isdigit((unsigned char)t[1]))) {
    double v;
    if (Number(P, t, start, &v))
      return -1;
    P->depth--;
    return HsExprConstant(P->ex, v);
  }
  if (isalpha((unsigned char)*t) || *t == '_') {
    int len = 0, r;
    while (isalnum((unsigned char)t[len]) || t[len] == '_')
      len++;
    P->pos += len;
    Skip(P);
    if (P->s[P->pos] == '(') {
      int    args[2], nargs = 0;
      size_t f;
      for (f = 0; f < sizeof hs_functions / sizeof hs_functions[0]; f++)
        if ((int)strlen(hs_functions[f].name) == len && !strncmp(hs_functions[f].name, t, (size_t)len))
          break;
      if (f == sizeof hs_functions / sizeof hs_functions[0])
        return PFail(P, HS_EUNKNOWN, start, "unknown function '%.*s'", t, len);
      P->pos++;
      for (;;) {
        int a = Expr(P);
        if (a < 0)
          return -1;
        if (nargs < 2)
          args[nargs] = a;
        nargs++;
        Skip(P);
        if (P->s[P->pos] != ',')
          break;
        P->pos++;
      }
      if (Expect(P, ')', "',' or ')'"))
        return -1;
      if (nargs != hs_functions[f].nargs) {
        char fmt[96];
        snprintf(fmt, sizeof fmt, "'%%.*s' takes %d argument%s, found %d", hs_functions[f].nargs,
                 hs_functions[f].nargs > 1 ? "s" : "", nargs);
        return PFail(P, HS_EPARSE, start, fmt, t, len);
      }
      P->depth--;
      return Mk(P->ex, hs_functions[f].op, args[0], nargs > 1 ? args[1] : -1, -1, 0);
    }
    {
      int nd = -1;
      r      = P->lookup ? P->lookup(t, len, P->lctx, &nd) : -1;
      if (r == 0) {
        P->depth--;
        return nd;
      }
      if (r == -3)
        return -1;
    }
    if (r == -2)
      return PFail(P, HS_EINVAL, start, "'%.*s' is not allowed here", t, len);
    if (len == 2 && !strncmp(t, "pi", 2))
      return P->depth--, HsExprConstant(P->ex, M_PI);
    if (len == 1 && *t == 'e')
      return P->depth--, HsExprConstant(P->ex, M_E);
    for (size_t f = 0; f < sizeof hs_functions / sizeof hs_functions[0]; f++)
      if ((int)strlen(hs_functions[f].name) == len && !strncmp(hs_functions[f].name, t, (size_t)len))
        return PFail(P, HS_EPARSE, P->pos, "expected '(' after the function name '%.*s'", t, len);
    return PFail(P, HS_EUNKNOWN, start, "unknown symbol '%.*s'", t, len);
  }
  if (*t == '(') {
    int r;
    P->pos++;
    r = Expr(P);
    if (r < 0 || Expect(P, ')', "')'"))
      return -1;
    P->depth--;
    return r;
  }
  {
    const char *f;
    int         k = Found(P, &f);
    if (!*t)
      return PFail(P, HS_EPARSE, start, "expected a number, a name or '(', found %.*s", f, k);
    return PFail(P, HS_EPARSE, start, "expected a number, a name or '(', found '%.*s'", f, k);
  }
}

static int Unary(Parser *P);

static int Power(Parser *P)
{
  int a = Primary(P);
  if (a < 0)
    return -1;
  Skip(P);
  if (P->s[P->pos] == '^') {
    int b;
    P->pos++;
    if (++P->depth > 200)
      return PFail(P, HS_EPARSE, P->pos, "expression nested too deeply%.*s", "", 0);
    b = Unary(P); /* right-associative; 2^-1 allowed */
    P->depth--;
    return b < 0 ? -1 : Mk(P->ex, OP_POW, a, b, -1, 0);
  }
  return a;
}

static int Unary(Parser *P)
{
  Skip(P);
  if (P->s[P->pos] == '-' || P->s[P->pos] == '+') {
    int neg = P->s[P->pos] == '-', a;
    P->pos++;
    if (++P->depth > 200)
      return PFail(P, HS_EPARSE, P->pos, "expression nested too deeply%.*s", "", 0);
    a = Unary(P);
    P->depth--;
    return a < 0 ? -1 : neg ? Neg(P->ex, a) : a;
  }
  return Power(P);
}

/* Operands per left-associative block of a long chain (see Chain). */
#define CHAIN_BLOCK 64

/* Balanced combination of the block results v[0..n-1] with op (ADD or MUL): depth log2(n). */
static int Balance(HsExpr *ex, int op, int *v, int n)
{
  while (n > 1) {
    int m = 0;
    for (int i = 0; i + 1 < n; i += 2)
      if ((v[m++] = Mk(ex, op, v[i], v[i + 1], -1, 0)) < 0)
        return -1;
    if (n % 2)
      v[m++] = v[n - 1];
    n = m;
  }
  return v[0];
}

/* A chain of next-level operands joined by c1 (operation op1: ADD or MUL) or c2 (op2: SUB or DIV).
 * Left-associative, as written, up to CHAIN_BLOCK operands; a longer chain (a sum of thousands of
 * terms) is cut into blocks of CHAIN_BLOCK, each left-associative (a block that starts with op2 starts
 * from -x or 1/x), combined by a balanced tree of op1, so that the graph's depth, which every
 * recursion over it (derivatives) follows, grows with the logarithm of the length. */
static int Chain(Parser *P, int (*next)(Parser *), char c1, int op1, char c2, int op2)
{
  int a = next(P), *blocks = NULL, nb = 0, len = 1, r;
  for (;;) {
    char c;
    if (a < 0)
      break;
    Skip(P);
    c = P->s[P->pos];
    if (c != c1 && c != c2)
      break;
    P->pos++;
    if (len == CHAIN_BLOCK) { /* close the block */
      int *nbk = realloc(blocks, sizeof(int) * (size_t)(nb + 1)), t;
      if (!nbk) {
        a = -1;
        break;
      }
      blocks = nbk, blocks[nb++] = a, len = 0;
      t      = next(P);
      a      = c == c1 ? t : op2 == OP_SUB ? Neg(P->ex, t) : Div(P->ex, P->ex->one, t);
    } else
      a = Mk(P->ex, c == c1 ? op1 : op2, a, next(P), -1, 0);
    len++;
  }
  if (a < 0 || !nb) {
    free(blocks);
    return a;
  }
  {
    int *nbk = realloc(blocks, sizeof(int) * (size_t)(nb + 1));
    if (!nbk) {
      free(blocks);
      return -1;
    }
    blocks = nbk, blocks[nb++] = a;
  }
  r = Balance(P->ex, op1, blocks, nb);
  free(blocks);
  return r;
}

static int Term(Parser *P) { return Chain(P, Unary, '*', OP_MUL, '/', OP_DIV); }

static int Expr(Parser *P) { return Chain(P, Term, '+', OP_ADD, '-', OP_SUB); }

/*@ HsExprParse - parses text (syntax: hsexpr.h) into a node; names go through lookup(name, len, lctx, &node).

  Not collective. Output: node; on failure errpos (0-based offset in text) and msg (msglen bytes)
  say what was expected or found. Returns HS_SUCCESS, HS_EPARSE (syntax), HS_EUNKNOWN (unknown name
  or function), HS_EINVAL (a known name the lookup does not allow here) or HS_ENOMEM.
@*/
int HsExprParse(HsExpr *ex, const char *text, HsExprLookupFn lookup, void *lctx, int *node, int *errpos, char *msg,
                int msglen)
{
  Parser P = {ex, text, 0, 0, 0, 0, lookup, lctx, msg, msglen};
  int    r = Expr(&P);
  if (r >= 0) {
    Skip(&P);
    if (text[P.pos]) {
      const char *f;
      int         k = Found(&P, &f);
      PFail(&P, HS_EPARSE, P.pos, "expected an operator or the end of the expression, found '%.*s'", f, k);
      r = -1;
    } else if (ex->node[r].depth > HS_EXPR_MAX_DEPTH) {
      char why[128];
      snprintf(why, sizeof why, "the expression is nested too deeply (its graph has depth %d, at most %d)",
               ex->node[r].depth, HS_EXPR_MAX_DEPTH);
      PFail(&P, HS_EPARSE, 0, "%.*s", why, (int)strlen(why));
      r = -1;
    }
  }
  if (r < 0 && !P.status) {
    snprintf(msg, (size_t)msglen, "out of memory");
    *errpos = 0;
    return HS_ENOMEM;
  }
  if (P.status) {
    *errpos = P.errpos;
    return P.status;
  }
  *node = r;
  return 0;
}

/* ------------------------------------------------------------- programs ---- */

typedef struct {
  int    op, d, a, b, x;
  double c;
} Ins;

struct HsExprProgram_s {
  double *reg;
  double *regerr; /* the constants' round-off bounds (Node.err; 0 for the other registers) */
  Ins    *ins; /* slow part first, then fast */
  int     nslow, nfast, nout, nvload;
  int    *outreg;
  int    *fastout, nfastout; /* outputs that depend on the fast variables (checked for finiteness) */
  int     slow_bad;          /* an output in the slow variables only is not finite */
  int     nreg;              /* registers (constants, variables, instructions) */
  int    *vload;             /* pairs (register, variable) of the variable nodes */
  int     nfastvars;
};

/*@ HsExprProgramCreate - a straight-line register program computing the nout nodes outs[] (repetitions
    allowed): only the nodes they need, the parameter-only ones in a slow part (HsExprProgramSetSlow),
    the rest in a fast part run by every evaluation. Not collective. Returns 0, or -1 without memory. @*/
int HsExprProgramCreate(const HsExpr *ex, int nout, const int *outs, HsExprProgram **progp)
{
  HsExprProgram *prog;
  char          *need = calloc((size_t)ex->nnode + 1, 1);
  int           *reg  = malloc(((size_t)ex->nnode + 1) * sizeof(int));
  int            nreg = 0, k;

  *progp = NULL;
  prog   = calloc(1, sizeof(*prog));
  if (!need || !reg || !prog)
    goto fail;
  for (int i = 0; i < nout; i++) {
    if (outs[i] < 0 || outs[i] >= ex->nnode)
      goto fail;
    need[outs[i]] = 1;
  }
  /* children have smaller ids than their parents: one downward sweep marks all */
  for (int id = ex->nnode - 1; id >= 0; id--)
    if (need[id] && ex->node[id].op != OP_CONST && ex->node[id].op != OP_VAR) {
      need[ex->node[id].a] = 1;
      if (ex->node[id].b >= 0)
        need[ex->node[id].b] = 1;
      if (ex->node[id].x >= 0)
        need[ex->node[id].x] = 1;
    }
  for (int id = 0; id < ex->nnode; id++) {
    reg[id] = -1;
    if (!need[id])
      continue;
    reg[id] = nreg++;
    if (ex->node[id].op == OP_VAR)
      prog->nvload++;
    else if (ex->node[id].op != OP_CONST) {
      if (ex->node[id].fast)
        prog->nfast++;
      else
        prog->nslow++;
    }
  }
  prog->nreg    = nreg;
  prog->reg     = calloc((size_t)nreg + 1, sizeof(double));
  prog->regerr  = calloc((size_t)nreg + 1, sizeof(double));
  prog->ins     = malloc(((size_t)(prog->nslow + prog->nfast) + 1) * sizeof(Ins));
  prog->outreg  = malloc(((size_t)nout + 1) * sizeof(int));
  prog->fastout = malloc(((size_t)nout + 1) * sizeof(int));
  prog->vload   = malloc(2 * ((size_t)prog->nvload + 1) * sizeof(int));
  if (!prog->reg || !prog->regerr || !prog->ins || !prog->outreg || !prog->fastout || !prog->vload)
    goto fail;
  prog->nout = nout;
  for (int i = 0; i < nout; i++) {
    prog->outreg[i] = reg[outs[i]];
    if (ex->node[outs[i]].fast)
      prog->fastout[prog->nfastout++] = i;
  }
  /* variable loads: fast ones first */
  k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int id = 0; id < ex->nnode; id++)
      if (need[id] && ex->node[id].op == OP_VAR && (ex->node[id].a < ex->nfast) == (pass == 0)) {
        prog->vload[2 * k] = reg[id], prog->vload[2 * k + 1] = ex->node[id].a, k++;
        if (pass == 0)
          prog->nfastvars++;
      }
  {
    int islow = 0, ifast = prog->nslow;
    for (int id = 0; id < ex->nnode; id++) {
      const Node *n = &ex->node[id];
      Ins        *in;
      if (!need[id])
        continue;
      if (n->op == OP_CONST) {
        prog->reg[reg[id]] = n->c, prog->regerr[reg[id]] = n->err;
        continue;
      }
      if (n->op == OP_VAR)
        continue;
      in     = n->fast ? &prog->ins[ifast++] : &prog->ins[islow++];
      in->op = n->op, in->d = reg[id], in->a = reg[n->a];
      in->b = n->b >= 0 ? reg[n->b] : 0;
      in->x = n->x >= 0 ? reg[n->x] : 0;
      in->c = n->c;
    }
  }
  free(need);
  free(reg);
  *progp = prog;
  return 0;
fail:
  free(need);
  free(reg);
  HsExprProgramDestroy(&prog);
  return -1;
}

/*@ HsExprProgramDestroy - frees a program and sets *prog = NULL; NULL-safe. Not collective. @*/
void HsExprProgramDestroy(HsExprProgram **progp)
{
  HsExprProgram *p;
  if (!progp || !*progp)
    return;
  p = *progp;
  free(p->reg);
  free(p->regerr);
  free(p->ins);
  free(p->outreg);
  free(p->fastout);
  free(p->vload);
  free(p);
  *progp = NULL;
}

/*@ HsExprProgramGetSize - instructions run per evaluation (nfast) and per parameter change (nslow). Not collective. @*/
void HsExprProgramGetSize(const HsExprProgram *prog, int *nfast, int *nslow)
{
  if (nfast)
    *nfast = prog->nfast;
  if (nslow)
    *nslow = prog->nslow;
}

static void Run(double *r, const Ins *in, const Ins *end)
{
  for (; in < end; in++) {
    switch (in->op) {
    case OP_ADD:
      r[in->d] = r[in->a] + r[in->b];
      break;
    case OP_SUB:
      r[in->d] = r[in->a] - r[in->b];
      break;
    case OP_MUL:
      r[in->d] = r[in->a] * r[in->b];
      break;
    case OP_DIV:
      r[in->d] = r[in->a] / r[in->b];
      break;
    case OP_NEG:
      r[in->d] = -r[in->a];
      break;
    case OP_SIN:
      r[in->d] = sin(r[in->a]);
      break;
    case OP_COS:
      r[in->d] = cos(r[in->a]);
      break;
    case OP_POWI:
      r[in->d] = in->c == 2 ? r[in->a] * r[in->a] : PowI(r[in->a], (int)in->c);
      break;
    default:
      r[in->d] = Apply(in->op, r[in->a], r[in->b], r[in->x], in->c);
      break;
    }
  }
}

/*@ HsExprProgramSetSlow - runs the slow part with the parameter values vars[nfast..nvars-1]. Not collective. @*/
void HsExprProgramSetSlow(HsExprProgram *p, const double *vars)
{
  for (int k = p->nfastvars; k < p->nvload; k++)
    p->reg[p->vload[2 * k]] = vars[p->vload[2 * k + 1]];
  Run(p->reg, p->ins, p->ins + p->nslow);
  p->slow_bad = 0;
  for (int i = 0, f = 0; i < p->nout; i++) {
    if (f < p->nfastout && p->fastout[f] == i) {
      f++;
      continue;
    }
    p->slow_bad |= !isfinite(p->reg[p->outreg[i]]);
  }
}

/*@ HsExprProgramEvalParts - evaluates the outputs with the fast variables vars[0..nfast-1] (the slow
    part must have run), in consecutive parts of sizes[0..nparts-1] written to dst[i] (a NULL dst[i]:
    that part is not stored). Not collective. Returns 0, or 1 if an output is not finite. @*/
int HsExprProgramEvalParts(HsExprProgram *p, const double *vars, int nparts, const int *sizes, double *const *dst)
{
  int bad = p->slow_bad, i = 0, f = 0;
  for (int k = 0; k < p->nfastvars; k++)
    p->reg[p->vload[2 * k]] = vars[p->vload[2 * k + 1]];
  Run(p->reg, p->ins + p->nslow, p->ins + p->nslow + p->nfast);
  for (int part = 0; part < nparts; part++)
    for (int e = 0; e < sizes[part]; e++, i++) {
      double v = p->reg[p->outreg[i]];
      if (dst[part])
        dst[part][e] = v;
      if (f < p->nfastout && p->fastout[f] == i) {
        f++;
        bad |= !isfinite(v);
      }
    }
  return bad;
}

/*@ HsExprProgramEval - HsExprProgramEvalParts with one part: all outputs into out. Not collective. @*/
int HsExprProgramEval(HsExprProgram *p, const double *vars, double *out)
{
  return HsExprProgramEvalParts(p, vars, 1, &p->nout, &out);
}

/* |f'| e with e = 0 exact: 0 even where f' is infinite (sqrt, asin at the ends of their domains). */
static double Prop(double fp, double e) { return e == 0 ? 0 : fabs(fp) * e; }

/* f'(a) of a function of one argument, r = f(a). */
static double Slope(int op, double a, double r)
{
  switch (op) {
  case OP_SIN:
    return cos(a);
  case OP_COS:
    return sin(a);
  case OP_TAN:
    return 1 + r * r;
  case OP_ASIN:
  case OP_ACOS:
    return 1 / sqrt(1 - a * a);
  case OP_ATAN:
    return 1 / (1 + a * a);
  case OP_SINH:
    return cosh(a);
  case OP_COSH:
    return sinh(a);
  case OP_TANH:
    return 1 - r * r;
  case OP_EXP:
    return r;
  case OP_LOG:
    return 1 / a;
  case OP_SQRT:
    return 1 / (2 * r);
  }
  return NAN; /* not reached: every other operation is handled by RunBound */
}

/* The value of one instruction into v[in->d] and a first-order bound on its absolute round-off into e[in->d], from
 * its operands' values and bounds (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.3,
 * running error analysis): the operands' errors carried through the operation's derivative, plus the operation's own
 * rounding, half an ulp (u |v|) for + - * / and sqrt (correctly rounded), one ulp (2u |v|) for the libm functions
 * and a power by repeated squaring's steps. A selection (sign, step, min, max) carries the chosen operand's bound:
 * its derivatives are taken piecewise (HsExprNonsmooth). */
static void RunBound(double *v, double *e, const Ins *in)
{
  const double u = DBL_EPSILON / 2, a = v[in->a], b = v[in->b], ea = e[in->a], eb = e[in->b];
  double       r, k = in->c, d;

  r = v[in->d] = Apply(in->op, a, b, v[in->x], in->c);
  switch (in->op) {
  case OP_ADD:
  case OP_SUB:
    d = ea + eb + u * fabs(r);
    break;
  case OP_MUL:
    d = Prop(b, ea) + Prop(a, eb) + u * fabs(r);
    break;
  case OP_DIV:
    d = (ea + Prop(r, eb)) / fabs(b) + u * fabs(r);
    break;
  case OP_NEG:
  case OP_ABS:
    d = ea;
    break;
  case OP_SIGN:
  case OP_STEP:
    d = 0;
    break;
  case OP_POWI: /* |k| |a|^(k-1) ea, and 2 log2 |k| + 1 roundings at most */
    d = Prop(fabs(k) * PowI(fabs(a), (int)k - 1), ea) + (2 * log2(fabs(k)) + 2) * u * fabs(r);
    break;
  case OP_POW: /* a^b = exp(b log a) */
    d = Prop(b * r / a, ea) + Prop(r * log(fabs(a)), eb) + 2 * u * fabs(r);
    break;
  case OP_MIN:
    d = a < b ? ea : eb;
    break;
  case OP_MAX:
    d = a > b ? ea : eb;
    break;
  case OP_SEL:
    d = v[in->x] > 0 ? ea : eb;
    break;
  case OP_ATAN2:
    d = (Prop(b, ea) + Prop(a, eb)) / (a * a + b * b) + 2 * u * fabs(r);
    break;
  default: /* one argument: f'(a) ea */
    d = Prop(Slope(in->op, a, r), ea) + (in->op == OP_SQRT ? 1 : 2) * u * fabs(r);
    break;
  }
  e[in->d] = d == d ? d : INFINITY; /* NaN (0 * inf at a singular point): no bound */
}

/* The round-off bound of a constant folded from operation op on the constants a and b (b NULL for one operand; x the
 * selector's value, c the operation's own constant), by the rules of RunBound from the operands' bounds (Node.err):
 * what the program would have bounded had the operation been left in it. */
static double FoldErr(int op, const Node *a, const Node *b, double x, double c)
{
  double v[4] = {a->c, b ? b->c : 0, x, 0}, e[4] = {a->err, b ? b->err : 0, 0, 0};
  Ins    in = {op, 3, 0, 1, 2, c};

  RunBound(v, e, &in);
  return e[3];
}

/*@ HsExprProgramEvalBound - the outputs, as HsExprProgramEval computes them (the same operations, the same bits), and
    for each a first-order bound on its absolute round-off (running error analysis, RunBound): the fast variables are
    taken as exact (they are the point asked about), the constants and the parameters as rounded from their decimal
    text (half an ulp). An output whose bound is infinite has no bound (a singular point of sqrt, log, ...). For
    tests that must tell a value that is zero but for round-off from a small one (bvp/interface/singular.c), not for
    hot loops: it allocates. The slow part must have run (HsExprProgramSetSlow). Not collective.

  Returns 0, 1 if an output is not finite, -1 without memory.
@*/
int HsExprProgramEvalBound(HsExprProgram *p, const double *vars, double *out, double *err)
{
  double *v = malloc(2 * ((size_t)p->nreg + 1) * sizeof(double)), *e = v ? v + p->nreg + 1 : NULL;
  int     bad = 0;

  if (!v)
    return -1;
  memcpy(v, p->reg, (size_t)p->nreg * sizeof(double)); /* the constants, the parameters, the slow part's values */
  /* a folded constant's own bound (regerr) where it has one */
  for (int r = 0; r < p->nreg; r++)
    e[r] = fmax(DBL_EPSILON / 2 * fabs(v[r]), p->regerr[r]);
  for (int k = 0; k < p->nfastvars; k++)
    v[p->vload[2 * k]] = vars[p->vload[2 * k + 1]], e[p->vload[2 * k]] = 0;
  for (const Ins *in = p->ins; in < p->ins + p->nslow + p->nfast; in++) /* the slow part again, for its bounds */
    RunBound(v, e, in);
  for (int i = 0; i < p->nout; i++) {
    out[i] = v[p->outreg[i]], err[i] = e[p->outreg[i]];
    bad |= !isfinite(out[i]);
  }
  free(v);
  return bad;
}

/*@ HsExprOverBudget - 1 if a growth of the graph was refused because it would have held more than HS_EXPR_MAX_BYTES
    (the caller's "out of memory" is then the budget's). Not collective. @*/
int HsExprOverBudget(const HsExpr *ex) { return ex && ex->over; }

/*@ HsExprNonsmooth - 1 if node uses abs, sign, step, min or max (or their derivatives' selections) of an argument that
    depends on a fast variable (a coordinate): its derivatives are taken piecewise (those of sign and step as 0), so a
    test of its derivatives (constant Hessian, constant gradient) cannot see the kink. 0 otherwise; -1 without memory.
    Not collective. @*/
int HsExprNonsmooth(const HsExpr *ex, int node)
{
  char *seen;
  int  *stack, top = 0, found = 0;

  if (node < 0 || node >= ex->nnode)
    return 0;
  seen  = calloc((size_t)ex->nnode, 1);
  stack = malloc(sizeof(int) * (size_t)ex->nnode);
  if (!seen || !stack) {
    free(seen), free(stack);
    return -1;
  }
  stack[top++] = node, seen[node] = 1;
  while (top && !found) {
    const Node *n = &ex->node[stack[--top]];
    const int   ops[3] = {n->a, n->b, n->x};
    if (!n->fast || n->op == OP_VAR || n->op == OP_CONST)
      continue;
    if (n->op == OP_ABS || n->op == OP_SIGN || n->op == OP_STEP || n->op == OP_MIN || n->op == OP_MAX || n->op == OP_SEL)
      found = 1;
    for (int o = 0; o < 3 && !found; o++)
      if (ops[o] >= 0 && !seen[ops[o]])
        seen[ops[o]] = 1, stack[top++] = ops[o];
  }
  free(seen), free(stack);
  return found;
}
