/* hamshoot: libFuzzer target of the problem-file reader and the expression engine (docs/reliability.md).
 *
 * The first byte of an input chooses what the rest is:
 *   even  the bytes of a problem file (HsProblemCreateFromText). A problem that is built is also
 *         evaluated (for n <= 32): E with gradient, Hessian and third derivative at x0, the running
 *         and terminal costs, the separable potential; then each parameter is set to 2 (and back
 *         to its value) and E is evaluated again.
 *   odd   one expression in the variables x, y, z and the parameter a (HsExprParse; the name b is
 *         known but not allowed), then its derivatives to third order in x and y (HsExprDiff) in
 *         one program, evaluated at a point.
 * Any crash, hang, leak or sanitizer report is a finding; error returns are the expected outcome
 * of most inputs. Build: cmake -DHS_FUZZ=ON with CC=clang-14; run: tools/fuzz.sh SECONDS. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hsexpr.h"
#include "hsocp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int Lookup(const char *name, int len, void *ctx, int *node)
{
  static const char names[] = "xyza";
  HsExpr           *ex      = ctx;

  if (len != 1)
    return -1; /* unknown */
  if (name[0] == 'b')
    return -2; /* known, not allowed here */
  for (int i = 0; i < 4; i++)
    if (name[0] == names[i])
      return (*node = HsExprVariable(ex, i)) < 0 ? -3 : 0;
  return -1;
}

static void FuzzExpression(const char *text)
{
  HsExpr        *ex;
  HsExprProgram *prog = NULL;
  int            node, pos, outs[15], n = 0;
  char           msg[256];
  double         vars[4] = {0.3, -1.2, 2.5, 1.5}, out[15], c;

  if (HsExprCreate(4, 3, &ex))
    return;
  if (HsExprParse(ex, text, Lookup, ex, &node, &pos, msg, sizeof msg) == 0) {
    (void)HsExprIsConstant(ex, node, &c);
    (void)HsExprDependsOnFast(ex, node);
    outs[n++] = node;
    for (int i = 0; i < 2; i++) { /* d/dx_i, d2/dx_i dx_j, d3/dx_i dx_j dx_k (i <= j <= k) */
      int d1 = HsExprDiff(ex, node, i);
      if (d1 < 0)
        break;
      outs[n++] = d1;
      for (int j = i; j < 2; j++) {
        int d2 = HsExprDiff(ex, d1, j);
        if (d2 < 0)
          break;
        outs[n++] = d2;
        for (int k = j; k < 2; k++) {
          int d3 = HsExprDiff(ex, d2, k);
          if (d3 >= 0)
            outs[n++] = d3;
        }
      }
    }
    if (!HsExprProgramCreate(ex, n, outs, &prog)) {
      int sizes[2] = {1, n - 1};
      double *dst[2] = {out, NULL};
      HsExprProgramSetSlow(prog, vars);
      (void)HsExprProgramEval(prog, vars, out);
      (void)HsExprProgramEvalParts(prog, vars, 2, sizes, dst);
      HsExprProgramDestroy(&prog);
    }
  }
  HsExprDestroy(&ex);
}

/* Every callback of a problem that was built, at x0 (t = T/2). */
static void Evaluate(HsProblem *p)
{
  int     d = 2 * p->n;
  double *g = calloc((size_t)d, sizeof(double)), *H = calloc((size_t)(d * d), sizeof(double)),
         *T = calloc((size_t)(d * d), sizeof(double)), *v = calloc((size_t)d, sizeof(double)), f;

  if (g && H && T && v) {
    for (int i = 0; i < d; i++)
      v[i] = 1.0 / (i + 1);
    (void)p->E.f(p->x0, &f, p->ctx);
    if (p->E.grad)
      (void)p->E.grad(p->x0, g, p->ctx);
    if (p->E.hess)
      (void)p->E.hess(p->x0, H, p->ctx);
    if (p->E.d3)
      (void)p->E.d3(p->x0, v, T, p->ctx);
    if (p->ell.f) {
      (void)p->ell.f(0.5 * p->T, p->x0, &f, p->ctx);
      if (p->ell.grad)
        (void)p->ell.grad(0.5 * p->T, p->x0, g, p->ctx);
      if (p->ell.hess)
        (void)p->ell.hess(0.5 * p->T, p->x0, H, p->ctx);
    }
    if (p->phi.f) {
      (void)p->phi.f(p->xT, &f, p->ctx);
      if (p->phi.grad)
        (void)p->phi.grad(p->xT, g, p->ctx);
      if (p->phi.hess)
        (void)p->phi.hess(p->xT, H, p->ctx);
    }
    if (p->free_T) { /* a free final time: the terminal cost at another T, and its T-derivatives */
      HsProblemSetFinalTime(p, 1.25 * p->T);
      if (p->phi.f)
        (void)p->phi.f(p->xT, &f, p->ctx);
      if (p->phi_T)
        (void)p->phi_T(p->xT, &f, g, &f, p->ctx);
    }
    if (p->Bq) { /* a B that depends on q: B, dB, d2B */
      double *Bv = calloc((size_t)(p->n * p->m) * (size_t)(1 + p->n + p->n * p->n), sizeof(double));
      if (Bv)
        (void)p->Bq(p->x0, Bv, Bv + p->n * p->m, Bv + p->n * p->m * (1 + p->n), p->ctx);
      free(Bv);
    }
    if (p->sep.available && p->sep.V) {
      double V[4];
      (void)p->sep.V(p->x0[0], &V[0], &V[1], &V[2], &V[3], p->ctx);
    }
  }
  free(g), free(H), free(T), free(v);
}

static void FuzzFile(const char *text, size_t len)
{
  HsProblem *p = NULL;
  char       msg[1024];

  if (HsProblemCreateFromText("fuzz.ocp", text, len, &p, msg, sizeof msg) == 0) {
    if (p->n <= 32) {
      Evaluate(p);
      for (int i = 0; i < p->nparams && i < 8; i++) {
        double old = *p->params[i].value;
        if (!HsProblemSetParam(p, p->params[i].name, 2.0)) {
          Evaluate(p);
          (void)HsProblemSetParam(p, p->params[i].name, old);
        }
      }
    }
    HsProblemDestroy(&p);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text;

  if (size < 1 || size > (1 << 20))
    return 0;
  if (!(text = malloc(size))) /* size - 1 bytes and a NUL */
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0;
  if (data[0] % 2)
    FuzzExpression(text);
  else
    FuzzFile(text, size - 1);
  free(text);
  return 0;
}
