/* Unit tests of the expression engine (problems/expr.c): parsing and
 * precedence against C evaluations of the same formulas, every function's
 * symbolic derivative up to third order against central differences, sharing
 * of common subexpressions, simplification, the slow/fast (parameter/state)
 * split of programs, non-finite outputs, and every parser error with its
 * position. */
#include "../problems/hsexpr.h"

#include "hscheck.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* variables: x, y (fast), a, b (slow parameters) */
static const char *names[] = {"x", "y", "a", "b"};

/* x, y, a, b are variables; "r2" is the named subexpression x^2 + y^2; "bad" is not allowed */
static int Look(const char *name, int len, void *ctx, int *node)
{
  HsExpr *ex = ctx;
  for (int i = 0; i < 4; i++)
    if ((int)strlen(names[i]) == len && !strncmp(names[i], name, (size_t)len))
      return (*node = HsExprVariable(ex, i)) < 0 ? -3 : 0;
  if (len == 2 && !strncmp(name, "r2", 2)) {
    char msg[64];
    int  pos;
    return HsExprParse(ex, "x^2 + y^2", Look, ex, node, &pos, msg, sizeof msg) ? -3 : 0;
  }
  if (len == 3 && !strncmp(name, "bad", 3))
    return -2;
  return -1;
}

static int Parse(HsExpr *ex, const char *text)
{
  char msg[256];
  int  node = -1, pos;
  int  st   = HsExprParse(ex, text, Look, ex, &node, &pos, msg, sizeof msg);
  CHECK(st == 0, "parse '%s': %s", text, msg);
  return st ? -1 : node;
}

static double Value(HsExpr *ex, int node, const double *v)
{
  HsExprProgram *p;
  double         out = NAN;
  if (HsExprProgramCreate(ex, 1, &node, &p))
    return NAN;
  HsExprProgramSetSlow(p, v);
  HsExprProgramEval(p, v, &out);
  HsExprProgramDestroy(&p);
  return out;
}

/* The value at v against a C evaluation of the same formula. */
static void CheckValues(void)
{
  HsExpr *ex;
  double  v[4] = {0.7183, -0.4142, 1.25, 0.3}, x = v[0], y = v[1], a = v[2], b = v[3];
  struct {
    const char *text;
    double      value;
  } cases[] = {
      {"x + y*a - b/x", x + y * a - b / x},
      {"-x^2", -(x * x)},
      {"2^3^2", 512},
      {"2^-1", 0.5},
      {"(x - y)*(x + y)/a", (x - y) * (x + y) / a},
      {"x - y - a - b", x - y - a - b},
      {"x / y / a", x / y / a},
      {"a^2.5 + x^3 + y^-2", pow(a, 2.5) + x * x * x + 1 / (y * y)},
      {"sin(x)*cos(y) + tan(x*y) + exp(-x) + log(a) + sqrt(a + x)",
       sin(x) * cos(y) + tan(x * y) + exp(-x) + log(a) + sqrt(a + x)},
      {"asin(b) + acos(b) + atan(y) + sinh(x) + cosh(y) + tanh(x)",
       asin(b) + acos(b) + atan(y) + sinh(x) + cosh(y) + tanh(x)},
      {"abs(y) + sign(y) + step(y) + step(x)", fabs(y) - 1 + 0 + 1},
      {"atan2(y, x) + min(x, y) + max(x, a) + pow(a, x)", atan2(y, x) + y + a + pow(a, x)},
      {"pi + e + 1.5e-3 + .25", M_PI + M_E + 1.5e-3 + 0.25},
      {"+x - -y", x + y},
      {"sqrt(r2) + r2*a", sqrt(x * x + y * y) + (x * x + y * y) * a},
  };
  HsExprCreate(4, 2, &ex);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int    node = Parse(ex, cases[i].text);
    double val  = Value(ex, node, v);
    CHECK(fabs(val - cases[i].value) <= 1e-14 * (1 + fabs(cases[i].value)), "'%s' = %.17g, expected %.17g",
          cases[i].text, val, cases[i].value);
  }
  HsExprDestroy(&ex);
}

/* d/dvar of f up to third order against central differences of the next lower order. */
static void CheckDerivatives(void)
{
  const char *fs[] = {"x^3*y - a*x/y + b",
                      "sin(x*y) + cos(x)^2 - tan(y)",
                      "exp(x*y)/sqrt(x^2 + y^2 + a)",
                      "log(x^2 + 1)*asin(y/2) + acos(x/3) + atan(x*y)",
                      "sinh(x)*cosh(y) + tanh(x - y)",
                      "pow(x^2 + 1, y) + (x^2 + 1)^1.5 + abs(y)*x",
                      "atan2(y, x)*min(x, a) + max(y, b)*x^2",
                      "-1/sqrt(x^2 + y^2 + b^2)",
                      "1/(x - y) - x/y/y"};
  double      v[4] = {0.7183, -0.4142, 1.25, 0.3}, worst = 0;
  HsExpr     *ex;

  HsExprCreate(4, 2, &ex);
  for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
    int f = Parse(ex, fs[k]);
    if (f < 0)
      continue;
    /* all derivative chains of length 1..3 in (x, y), plus d/da (a parameter) */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++)
        for (int l = 0; l < 2; l++) {
          int vi = i == 2 ? 2 : i, d1 = HsExprDiff(ex, f, vi), d2 = HsExprDiff(ex, d1, j), d3 = HsExprDiff(ex, d2, l);
          int lower[3] = {f, d1, d2}, upper[3] = {d1, d2, d3}, var[3] = {vi, j, l};
          double h = 1e-5;
          for (int o = 0; o < 3; o++) {
            double vp[4], vm[4], fd, an, err;
            memcpy(vp, v, sizeof v), memcpy(vm, v, sizeof v);
            vp[var[o]] += h, vm[var[o]] -= h;
            fd    = (Value(ex, lower[o], vp) - Value(ex, lower[o], vm)) / (2 * h);
            an    = Value(ex, upper[o], v);
            err   = fabs(fd - an) / (1 + fabs(an));
            worst = fmax(worst, err);
            CHECK(err < 1e-7, "'%s': derivative of order %d in %s: %.12g vs differences %.12g", fs[k], o + 1,
                  names[var[o]], an, fd);
          }
        }
  }
  printf("symbolic derivatives up to order 3 vs central differences: worst relative error %.1e\n", worst);
  HsExprDestroy(&ex);
}

/* One node per distinct expression; simplification; derivatives that vanish. */
static void CheckSharing(void)
{
  HsExpr *ex;
  double  c;
  int     f, g, d;

  HsExprCreate(4, 2, &ex);
  f = Parse(ex, "a*sin(x + y) + b*cos(x + y)");
  g = Parse(ex, "b*cos(x + y) + a*sin(x + y)");
  CHECK(f == g && f >= 0, "commuted sum is not the same node (%d, %d)", f, g);
  CHECK(Parse(ex, "(x + y) - (x + y)") == Parse(ex, "0"), "x - x is not 0");
  CHECK(HsExprIsConstant(ex, Parse(ex, "x*0 + 1*y - y + 2*3"), &c) && c == 6, "simplification to the constant 6");
  CHECK(HsExprIsConstant(ex, HsExprDiff(ex, Parse(ex, "a*b + sin(a)"), 0), &c) && c == 0,
        "d/dx of an x-free expression is not 0");
  CHECK(HsExprDependsOn(ex, f, 0) && HsExprDependsOn(ex, f, 2) && !HsExprDependsOn(ex, Parse(ex, "a + 1"), 0),
        "dependence");
  CHECK(HsExprDependsOnFast(ex, f) && !HsExprDependsOnFast(ex, Parse(ex, "a*b")), "fast dependence");
  /* d^2/dx dy = d^2/dy dx here structurally (the memo and hash-consing share them) */
  d = HsExprDiff(ex, HsExprDiff(ex, f, 0), 1);
  CHECK(d == HsExprDiff(ex, HsExprDiff(ex, f, 1), 0), "mixed derivatives are not one node");
  {
    /* a program for f, its gradient and Hessian in (x, y): sin and cos of x + y are evaluated once */
    int            outs[7], nfast, nslow;
    HsExprProgram *p;
    outs[0] = f;
    for (int i = 0; i < 2; i++) {
      outs[1 + i] = HsExprDiff(ex, f, i);
      for (int j = 0; j < 2; j++)
        outs[3 + 2 * i + j] = HsExprDiff(ex, outs[1 + i], j);
    }
    HsExprProgramCreate(ex, 7, outs, &p);
    HsExprProgramGetSize(p, &nfast, &nslow);
    printf("a sin(x+y) + b cos(x+y), gradient and Hessian: %d instructions per evaluation, %d per parameter change\n",
           nfast, nslow);
    /* x+y, sin, cos, 2 products, sum, negation(s) and the sums of the derivatives: far fewer than 7 trees */
    CHECK(nfast <= 12, "too many instructions (%d): common subexpressions not shared", nfast);
    HsExprProgramDestroy(&p);
  }
  HsExprDestroy(&ex);
}

/* Parameter-only parts run in SetSlow; the fast part sees the new parameter. */
static void CheckSlowFast(void)
{
  HsExpr        *ex;
  HsExprProgram *p;
  double         v[4] = {0.5, 0.25, 2, 3}, out[2];
  int            outs[2], nfast, nslow;

  HsExprCreate(4, 2, &ex);
  outs[0] = Parse(ex, "(a*b + sqrt(a))*x");
  outs[1] = Parse(ex, "log(a - b)"); /* slow only */
  HsExprProgramCreate(ex, 2, outs, &p);
  HsExprProgramGetSize(p, &nfast, &nslow);
  CHECK(nfast == 1 && nslow == 5, "slow/fast split: %d fast, %d slow instructions", nfast, nslow);
  HsExprProgramSetSlow(p, v);
  CHECK(HsExprProgramEval(p, v, out) == 1, "log of a negative parameter must be reported as not finite");
  v[3] = 1;
  HsExprProgramSetSlow(p, v);
  CHECK(HsExprProgramEval(p, v, out) == 0 && fabs(out[0] - (2 + sqrt(2.0)) * 0.5) < 1e-15 && out[1] == 0,
        "after a parameter change: %.17g %.17g", out[0], out[1]);
  v[0] = 1.0 / 0.0;
  CHECK(HsExprProgramEval(p, v, out) == 1, "infinite output not reported");
  HsExprProgramDestroy(&p);
  HsExprDestroy(&ex);
}

/* HsExprProgramEvalBound: (1) on expressions that are 0 in exact arithmetic (their constants taken as the decimals
 * they are written as) the computed value is their whole round-off, and must lie within the bound at each of 2001
 * points y in [-3, 3] (not dyadic: y + 0.1 rounds) with a = 0.3 (a parameter, rounded too); several must be
 * non-zero there, or the check proves nothing. (2) The bound is not loose: on values without cancellation it is a few
 * ulps of the value (relative bounds of at most 16 u), 1e-300 sin y's too (its bound scales with it). (3) The values
 * are HsExprProgramEval's to the bit; a singular point gives no bound (INFINITY), never NaN. */
static void CheckBound(void)
{
  static const char *zero[] = {
      "(y+0.1)^2 - y^2 - 0.2*y - 0.01", "log(exp(y)) - y",           "sin(y)^2 + cos(y)^2 - 1",
      "(y + a)^2 - y^2 - 2*a*y - a^2",  "sqrt(y^2 + 1)^2 - y^2 - 1", "tan(y)*cos(y) - sin(y)",
      "cosh(y)^2 - sinh(y)^2 - 1",      "atan2(3*y, 3) - atan(y)",   "exp(y + a)/exp(a) - exp(y)",
      "pow(x, y)*pow(x, -y) - 1",       "(y+1/3)*x/x - y - 1/3",     "asin(sin(y/3)) - y/3"};
  static const char *exact[] = {"exp(y)*sin(y)^2 + y^2 + a", "1e-300*sin(y) + 2e-300", "sqrt(x^2 + y^2)*cosh(y)"};
  const double       u       = 2.220446049250313e-16 / 2;
  double             v[4]    = {0.7183, 0, 0.3, 1}, out[2], err[2], plain[2];
  int                outs[2], nonzero = 0, worst_rel_ok = 1;
  HsExpr            *ex;
  HsExprProgram     *p;

  HsExprCreate(4, 2, &ex);
  for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++) {
    int bad = 0, nz = 0;
    outs[0] = Parse(ex, zero[k]);
    outs[1] = HsExprDiff(ex, outs[0], 1); /* its y-derivative: 0 too */
    HsExprProgramCreate(ex, 2, outs, &p);
    HsExprProgramSetSlow(p, v);
    for (int i = 0; i <= 2000; i++) {
      v[1] = -3 + 6.0 * i / 2000;
      HsExprProgramEval(p, v, plain);
      CHECK(HsExprProgramEvalBound(p, v, out, err) == 0 && out[0] == plain[0] && out[1] == plain[1],
            "'%s' at y = %g: values %.17g %.17g, HsExprProgramEval's %.17g %.17g", zero[k], v[1], out[0], out[1],
            plain[0], plain[1]);
      for (int o = 0; o < 2; o++) {
        bad += !(fabs(out[o]) <= err[o]), nz += out[o] != 0;
        if (!(fabs(out[o]) <= err[o]) && bad == 1)
          printf("'%s'%s at y = %.17g: %.3g outside its bound %.3g\n", zero[k], o ? "'s derivative" : "", v[1], out[o],
                 err[o]);
      }
    }
    CHECK(bad == 0, "'%s': the round-off outside its bound at %d of 2001 points", zero[k], bad);
    nonzero += nz > 100;
    HsExprProgramDestroy(&p);
  }
  CHECK(nonzero >= 8, "only %d of the zero expressions have round-off at 100 points or more: the check is weak",
        nonzero);
  for (size_t k = 0; k < sizeof exact / sizeof exact[0]; k++) {
    outs[0] = Parse(ex, exact[k]);
    HsExprProgramCreate(ex, 1, outs, &p);
    HsExprProgramSetSlow(p, v);
    for (int i = 0; i <= 2000; i++) {
      v[1] = -3 + 6.0 * i / 2000;
      HsExprProgramEvalBound(p, v, out, err);
      if (!(err[0] > 0 && err[0] <= 16 * u * fabs(out[0])) && worst_rel_ok) {
        worst_rel_ok = 0;
        printf("'%s' at y = %g: bound %.3g of the value %.3g\n", exact[k], v[1], err[0], out[0]);
      }
    }
    HsExprProgramDestroy(&p);
  }
  CHECK(worst_rel_ok, "a bound looser than 16 u of a value without cancellation");
  outs[0] = Parse(ex, "sqrt(y - a)"), outs[1] = Parse(ex, "log(y)");
  HsExprProgramCreate(ex, 2, outs, &p);
  HsExprProgramSetSlow(p, v);
  v[1] = 0.3; /* sqrt at 0 with an argument that has round-off (a's): no bound; log(0.3) has one */
  CHECK(HsExprProgramEvalBound(p, v, out, err) == 0 && out[0] == 0 && isinf(err[0]) && isfinite(err[1]),
        "sqrt at 0: value %g bound %g; log: bound %g", out[0], err[0], err[1]);
  v[1] = 0; /* log(0) is not finite */
  CHECK(HsExprProgramEvalBound(p, v, out, err) == 1, "log(0) not reported as not finite");
  HsExprProgramDestroy(&p);
  HsExprDestroy(&ex);
}

/* Every parser error: status and position. */
static void CheckErrors(void)
{
  struct {
    const char *text;
    int         status, pos;
    const char *word;
  } cases[] = {
      {"x +", HS_EPARSE, 3, "expected a number"},      {"(x + y", HS_EPARSE, 6, "expected ')'"},
      {"sin(x", HS_EPARSE, 5, "expected ',' or ')'"},  {"x y", HS_EPARSE, 2, "expected an operator"},
      {"zz + 1", HS_EUNKNOWN, 0, "unknown symbol 'zz'"}, {"2 + foo(x)", HS_EUNKNOWN, 4, "unknown function 'foo'"},
      {"sin x", HS_EPARSE, 4, "expected '(' after"},   {"atan2(x)", HS_EPARSE, 0, "takes 2 arguments"},
      {"sin(x, y)", HS_EPARSE, 0, "takes 1 argument"}, {"x + bad", HS_EINVAL, 4, "not allowed"},
      {"3x", HS_EPARSE, 1, "after a number"},          {"x $ y", HS_EPARSE, 2, "expected an operator"},
      {"", HS_EPARSE, 0, "expected a number"},
  };
  HsExpr *ex;
  char    deep[1200];

  HsExprCreate(4, 2, &ex);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char msg[256] = "";
    int  node, pos = -1, st = HsExprParse(ex, cases[i].text, Look, ex, &node, &pos, msg, sizeof msg);
    CHECK(st == cases[i].status && pos == cases[i].pos && strstr(msg, cases[i].word),
          "'%s': status %d at %d '%s', expected %d at %d '%s'", cases[i].text, st, pos, msg, cases[i].status,
          cases[i].pos, cases[i].word);
  }
  for (int i = 0; i < 600; i++)
    deep[i] = '(';
  deep[600] = 0;
  {
    char msg[256];
    int  node, pos, st = HsExprParse(ex, deep, Look, ex, &node, &pos, msg, sizeof msg);
    CHECK(st == HS_EPARSE && strstr(msg, "nested too deeply"), "deep nesting: %d %s", st, msg);
  }
  HsExprDestroy(&ex);
  HsExprDestroy(&ex); /* NULL-safe */
  CHECK(HsExprCreate(-1, 0, &ex) == HS_EINVAL && !ex, "a negative number of variables accepted");
  CHECK(HsExprCreate(4, 5, &ex) == HS_EINVAL && !ex, "more fast than all variables accepted");
}

/* Many variables (the dependency sets span several 64-bit words): dependence, derivatives and a
 * program's fast/slow split for variables beyond the first word. */
static int LookNumbered(const char *name, int len, void *ctx, int *node)
{
  char buf[16];
  if (name[0] != 'x' || len > 8)
    return -1;
  memcpy(buf, name + 1, (size_t)len - 1), buf[len - 1] = 0;
  *node = HsExprVariable(ctx, atoi(buf)); /* x<i>: variable i */
  return *node < 0 ? -1 : 0;
}

static void CheckManyVariables(void)
{
  HsExpr        *ex;
  HsExprProgram *p;
  int            nv = 200, x199, f, d, dd, nf, ns, pos;
  double         vars[200], out[2];
  char           msg[128];

  CHECK(HsExprCreate(nv, 160, &ex) == HS_SUCCESS, "200 variables refused");
  if (!ex)
    return;
  CHECK(HsExprParse(ex, "x150 * (x3 + x199)", LookNumbered, ex, &f, &pos, msg, sizeof msg) == HS_SUCCESS, "%s", msg);
  x199 = HsExprVariable(ex, 199);
  d    = HsExprDiff(ex, f, 150);          /* x3 + x199 */
  dd = HsExprDiff(ex, f, 64);           /* 0 */
  CHECK(HsExprDependsOn(ex, f, 150) && HsExprDependsOn(ex, f, 199) && !HsExprDependsOn(ex, f, 64) &&
            !HsExprDependsOn(ex, d, 150) && HsExprIsConstant(ex, dd, NULL),
        "dependence beyond 64 variables");
  CHECK(HsExprDependsOnFast(ex, f) && !HsExprDependsOnFast(ex, x199), "fast/slow beyond 64 variables");
  for (int i = 0; i < nv; i++)
    vars[i] = 0.5 + 0.01 * i;
  {
    int outs[2] = {f, d};
    HsExprProgramCreate(ex, 2, outs, &p);
  }
  HsExprProgramSetSlow(p, vars);
  HsExprProgramEval(p, vars, out);
  HsExprProgramGetSize(p, &nf, &ns);
  CHECK(fabs(out[0] - vars[150] * (vars[3] + vars[199])) < 1e-15 && fabs(out[1] - (vars[3] + vars[199])) < 1e-15,
        "values with 200 variables: %g %g", out[0], out[1]);
  CHECK(nf == 2 && ns == 0, "fast/slow instructions with 200 variables: %d fast, %d slow", nf, ns);
  HsExprProgramDestroy(&p);
  HsExprDestroy(&ex);
}

int main(void)
{
  CheckManyVariables();
  CheckValues();
  CheckDerivatives();
  CheckSharing();
  CheckSlowFast();
  CheckBound();
  CheckErrors();
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
