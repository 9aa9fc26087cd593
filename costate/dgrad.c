/* hamshoot: state schemes (discrete gradients), docs/theory.md section 2.1.
 *
 *   midpoint:  gbar = grad E(m), m = (a+b)/2
 *   greenspan: gbar = (Vbar(q_a, q_b), (p_a + p_b) / (2 mass)), n = 1
 *   gonzalez:  gbar = grad E(m) + c Delta,
 *              c = [E(b) - E(a) - grad E(m).Delta] / (Delta.Delta), Delta = b - a
 *
 * Divided differences are 0/0 as Delta -> 0: below |Delta| <= dg_tol (1 + |m|)
 * the midpoint value (and its derivatives) is used. The error of that branch
 * in the directionality identity is O(|Delta|^3), i.e. round-off for the
 * default dg_tol = 1e-6.
 */
#include "hsdiscimpl.h"

#include <math.h>
#include <string.h>

/*@ HsFunctionD3 - the third-derivative action T = D(Hess f)(x)[v], T_il = sum_j f_{,ijl}(x) v_j (dim x dim):
    F->d3 if the function supplies it, otherwise a central difference of its Hessian along v with step
    HS_D3_FD_STEP (1 + |x|) / |v| (error O(step^2)). Newton on the conserving costate scheme needs it
    (docs/theory.md section 2.2).

  Not collective. work: dim + 2 dim^2 doubles. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED.
@*/
int HsFunctionD3(const HsFunction *F, int dim, void *ctx, const double *x, const double *v, double *T, double *work)
{
  double nv, eps, *xp = work, *Hp = work + dim, *Hm = work + dim + dim * dim;
  int    i;

  if (F->d3)
    return HsStatus(F->d3(x, v, T, ctx));
  /* Central difference of the Hessian along v: error O(eps^2 |E''''|). */
  nv = HsNorm(dim, v);
  if (nv == 0) {
    HsZero(dim * dim, T);
    return HS_SUCCESS;
  }
  eps = HS_D3_FD_STEP * (1 + HsNorm(dim, x)) / nv;
  for (i = 0; i < dim; i++)
    xp[i] = x[i] + eps * v[i];
  HS_CB(F->hess(xp, Hp, ctx));
  for (i = 0; i < dim; i++)
    xp[i] = x[i] - eps * v[i];
  HS_CB(F->hess(xp, Hm, ctx));
  for (i = 0; i < dim * dim; i++)
    T[i] = (Hp[i] - Hm[i]) / (2 * eps);
  return HS_SUCCESS;
}

static int Small(int dim, const double *mid, const double *delta, double tol)
{
  return HsNorm(dim, delta) <= tol * (1 + HsNorm(dim, mid));
}

/*@ HsGonzalezGrad - the Gonzalez discrete gradient of a smooth function f (docs/theory.md section 2.1),
    g = grad f(m) + [f(b) - f(a) - grad f(m).Delta] Delta / (Delta.Delta), m = (a+b)/2, Delta = b - a,
    which satisfies g.(b - a) = f(b) - f(a) exactly; below |Delta| <= tol (1 + |m|) the midpoint
    gradient (error O(|Delta|^3) in that identity). Used for E and for the running cost ell.

  Not collective. work: HS_GONZALEZ_WORK(dim) doubles. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED.
@*/
int HsGonzalezGrad(const HsFunction *F, int dim, void *ctx, double tol, const double *a, const double *b, double *g,
                   double *work)
{
  double *mid = work, *delta = work + dim, Ea, Eb;
  int     i;

  for (i = 0; i < dim; i++)
    mid[i] = 0.5 * (a[i] + b[i]), delta[i] = b[i] - a[i];
  HS_CB(F->grad(mid, g, ctx));
  if (Small(dim, mid, delta, tol))
    return HS_SUCCESS;
  HS_CB(F->f(a, &Ea, ctx));
  HS_CB(F->f(b, &Eb, ctx));
  {
    double c = (Eb - Ea - HsDot(dim, g, delta)) / HsDot(dim, delta, delta);
    for (i = 0; i < dim; i++)
      g[i] += c * delta[i];
  }
  return HS_SUCCESS;
}

/* Everything the Gonzalez derivatives need: c, c_a = dc/da, c_b = dc/db (see
 * docs/theory.md section 2.1; N = E(b) - E(a) - grad E(m).Delta, D = Delta.Delta,
 * n_a = dN/da = -grad E(a) + grad E(m) - 1/2 H(m) Delta,
 * n_b = dN/db =  grad E(b) - grad E(m) - 1/2 H(m) Delta,
 * c_a = (n_a + 2 c Delta)/D, c_b = (n_b - 2 c Delta)/D). Returns small = 1 in
 * the fallback branch, where only mid and Hm are set. */
typedef struct {
  double *mid, *delta, *gm, *ga, *gb, *ca, *cb, *Hm;
  double  c, D;
  int     small;
} GonzalezData;

static int GonzalezPrepare(HsDisc *d, const HsFunction *F, void *ctx, const double *a, const double *b, GonzalezData *G)
{
  int    dim = d->dim, i;
  double Ea, Eb, *Hd = d->wdg_v[8];

  G->mid = d->wdg_v[0], G->delta = d->wdg_v[1], G->gm = d->wdg_v[2], G->ga = d->wdg_v[3];
  G->gb = d->wdg_v[4], G->ca = d->wdg_v[5], G->cb = d->wdg_v[6], G->Hm = d->wdg_m[0];
  for (i = 0; i < dim; i++)
    G->mid[i] = 0.5 * (a[i] + b[i]), G->delta[i] = b[i] - a[i];
  HS_CB(F->hess(G->mid, G->Hm, ctx));
  G->small = Small(dim, G->mid, G->delta, d->dg_tol);
  if (G->small)
    return HS_SUCCESS;
  HS_CB(F->f(a, &Ea, ctx));
  HS_CB(F->f(b, &Eb, ctx));
  HS_CB(F->grad(G->mid, G->gm, ctx));
  HS_CB(F->grad(a, G->ga, ctx));
  HS_CB(F->grad(b, G->gb, ctx));
  G->D = HsDot(dim, G->delta, G->delta);
  G->c = (Eb - Ea - HsDot(dim, G->gm, G->delta)) / G->D;
  HsMatVec(dim, dim, G->Hm, G->delta, Hd);
  for (i = 0; i < dim; i++) {
    double na = -G->ga[i] + G->gm[i] - 0.5 * Hd[i];
    double nb = G->gb[i] - G->gm[i] - 0.5 * Hd[i];
    G->ca[i]  = (na + 2 * G->c * G->delta[i]) / G->D;
    G->cb[i]  = (nb - 2 * G->c * G->delta[i]) / G->D;
  }
  return HS_SUCCESS;
}

static int GonzalezGrad(HsDisc *d, const double *a, const double *b, double *g)
{
  int    dim = d->dim, st;
  size_t sz  = sizeof(double) * (size_t)dim;

  if (!d->memo || dim > HS_MEMO_DIM)
    return HsGonzalezGrad(&d->prob->E, dim, d->prob->ctx, d->dg_tol, a, b, g, d->wdg_v[0]);
  for (int s = 0; s < 2; s++) /* HsDiscSetMemo */
    if (d->gvalid[s] && !memcmp(d->gkey[s], a, sz) && !memcmp(d->gkey[s] + dim, b, sz)) {
      memcpy(g, d->gval[s], sz);
      return HS_SUCCESS;
    }
  if ((st = HsGonzalezGrad(&d->prob->E, dim, d->prob->ctx, d->dg_tol, a, b, g, d->wdg_v[0])))
    return st;
  memcpy(d->gkey[d->gnext], a, sz), memcpy(d->gkey[d->gnext] + dim, b, sz), memcpy(d->gval[d->gnext], g, sz);
  d->gvalid[d->gnext] = 1, d->gnext ^= 1;
  return HS_SUCCESS;
}

/* Da = 1/2 H(m) - c I + Delta c_a^T,  Db = 1/2 H(m) + c I + Delta c_b^T for the
 * Gonzalez discrete gradient of F (the energy, or the running cost ell at a fixed time). */
int HsGonzalezJacOf(HsDisc *d, const HsFunction *F, void *ctx, const double *a, const double *b, double *Da, double *Db)
{
  GonzalezData G;
  int          dim = d->dim, i;

  HS_CHK(GonzalezPrepare(d, F, ctx, a, b, &G));
  for (i = 0; i < dim * dim; i++)
    Da[i] = Db[i] = 0.5 * G.Hm[i];
  if (G.small)
    return HS_SUCCESS;
  HsAddDiag(dim, -G.c, Da);
  HsAddDiag(dim, G.c, Db);
  HsRank1(dim, 1, G.delta, G.ca, Da);
  HsRank1(dim, 1, G.delta, G.cb, Db);
  return HS_SUCCESS;
}

/* With phi = v^T gbar = v^T grad E(m) + c (v.Delta):
 *   Paa = 1/4 D3(m,v) + Caa (v.Delta) - c_a v^T - v c_a^T
 *   Pab = 1/4 D3(m,v) + Cab (v.Delta) + c_a v^T - v c_b^T
 *   Pbb = 1/4 D3(m,v) + Cbb (v.Delta) + c_b v^T + v c_b^T
 * with (T = D3(m, Delta))
 *   Caa = [-H(a) + H(m) - T/4 + 2 Delta c_a^T + 2 c_a Delta^T - 2c I] / D
 *   Cab = [-T/4 + 2 Delta c_b^T - 2 c_a Delta^T + 2c I] / D
 *   Cbb = [ H(b) - H(m) - T/4 - 2 Delta c_b^T - 2 c_b Delta^T - 2c I] / D. */
static int GonzalezJac(HsDisc *d, const double *a, const double *b, double *Da, double *Db)
{
  return HsGonzalezJacOf(d, &d->prob->E, d->prob->ctx, a, b, Da, Db);
}

static int GonzalezHessDir(HsDisc *d, const double *a, const double *b, const double *v, double *Paa, double *Pab,
                           double *Pbb)
{
  const HsFunction *F   = &d->prob->E;
  void             *ctx = d->prob->ctx;
  GonzalezData      G;
  int               dim = d->dim, i;
  double           *Tv = d->wdg_m[1], *Td = d->wdg_m[2], *Ha = d->wdg_m[3], *Hb = d->wdg_m[4];
  double           *C = d->wdg_m[5], *fdw = d->wdg_m[6], vd;

  HS_CHK(GonzalezPrepare(d, F, ctx, a, b, &G));
  HS_CHK(HsFunctionD3(F, dim, ctx, G.mid, v, Tv, fdw));
  for (i = 0; i < dim * dim; i++)
    Paa[i] = Pab[i] = Pbb[i] = 0.25 * Tv[i];
  if (G.small)
    return HS_SUCCESS;
  HS_CHK(HsFunctionD3(F, dim, ctx, G.mid, G.delta, Td, fdw));
  HS_CB(F->hess(a, Ha, ctx));
  HS_CB(F->hess(b, Hb, ctx));
  vd = HsDot(dim, v, G.delta);

  for (i = 0; i < dim * dim; i++)
    C[i] = -Ha[i] + G.Hm[i] - 0.25 * Td[i];
  HsRank1(dim, 2, G.delta, G.ca, C);
  HsRank1(dim, 2, G.ca, G.delta, C);
  HsAddDiag(dim, -2 * G.c, C);
  for (i = 0; i < dim * dim; i++)
    Paa[i] += C[i] * vd / G.D;
  HsRank1(dim, -1, G.ca, v, Paa);
  HsRank1(dim, -1, v, G.ca, Paa);

  for (i = 0; i < dim * dim; i++)
    C[i] = -0.25 * Td[i];
  HsRank1(dim, 2, G.delta, G.cb, C);
  HsRank1(dim, -2, G.ca, G.delta, C);
  HsAddDiag(dim, 2 * G.c, C);
  for (i = 0; i < dim * dim; i++)
    Pab[i] += C[i] * vd / G.D;
  HsRank1(dim, 1, G.ca, v, Pab);
  HsRank1(dim, -1, v, G.cb, Pab);

  for (i = 0; i < dim * dim; i++)
    C[i] = Hb[i] - G.Hm[i] - 0.25 * Td[i];
  HsRank1(dim, -2, G.delta, G.cb, C);
  HsRank1(dim, -2, G.cb, G.delta, C);
  HsAddDiag(dim, -2 * G.c, C);
  for (i = 0; i < dim * dim; i++)
    Pbb[i] += C[i] * vd / G.D;
  HsRank1(dim, 1, G.cb, v, Pbb);
  HsRank1(dim, 1, v, G.cb, Pbb);
  return HS_SUCCESS;
}

static int MidpointGrad(HsDisc *d, const double *a, const double *b, double *g)
{
  double *mid = d->wdg_v[0];
  for (int i = 0; i < d->dim; i++)
    mid[i] = 0.5 * (a[i] + b[i]);
  return HsStatus(d->prob->E.grad(mid, g, d->prob->ctx));
}

static int MidpointJac(HsDisc *d, const double *a, const double *b, double *Da, double *Db)
{
  double *mid = d->wdg_v[0];
  int     i;
  for (i = 0; i < d->dim; i++)
    mid[i] = 0.5 * (a[i] + b[i]);
  HS_CB(d->prob->E.hess(mid, Da, d->prob->ctx));
  for (i = 0; i < d->dim * d->dim; i++)
    Da[i] *= 0.5, Db[i] = Da[i];
  return HS_SUCCESS;
}

static int MidpointHessDir(HsDisc *d, const double *a, const double *b, const double *v, double *Paa, double *Pab,
                           double *Pbb)
{
  double *mid = d->wdg_v[0];
  int     i;
  for (i = 0; i < d->dim; i++)
    mid[i] = 0.5 * (a[i] + b[i]);
  HS_CHK(HsFunctionD3(&d->prob->E, d->dim, d->prob->ctx, mid, v, Paa, d->wdg_m[6]));
  for (i = 0; i < d->dim * d->dim; i++)
    Paa[i] *= 0.25, Pab[i] = Pbb[i] = Paa[i];
  return HS_SUCCESS;
}

/*@ HsDiscSetMemo - on: HsGreenspanQuotient (all six values) and the Gonzalez discrete gradient (dim <= HS_MEMO_DIM)
    keep their last two results, by the bits of their arguments, and answer a repeated call from them; off (and at
    every change): forget them. The values are the same to the bit (a quotient is computed with all six values whatever
    the caller asks for, as every path computes them anyway), so only the work changes. Not collective. @*/
void HsDiscSetMemo(HsDisc *d, int on)
{
  d->memo      = on ? 1 : 0;
  d->qvalid[0] = d->qvalid[1] = d->gvalid[0] = d->gvalid[1] = 0;
}

int HsGreenspanQuotient(HsDisc *d, double a, double b, double *Vbar, double *va, double *vb, double *vaa, double *vab,
                        double *vbb);

/* HsGreenspanQuotient from the memo, or computed (all six values) and kept in the older slot. */
static int MemoQuotient(HsDisc *d, double a, double b, double *Vbar, double *va, double *vb, double *vaa, double *vab,
                        double *vbb)
{
  uint64_t key[2];
  double   v[6];
  int      st;

  memcpy(&key[0], &a, sizeof a), memcpy(&key[1], &b, sizeof b);
  for (int s = 0; s < 2; s++)
    if (d->qvalid[s] && d->qkey[s][0] == key[0] && d->qkey[s][1] == key[1]) {
      HsQuotientStore(d->qval[s], Vbar, va, vb, vaa, vab, vbb);
      return HS_SUCCESS;
    }
  d->memo = 0;
  st      = HsGreenspanQuotient(d, a, b, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  d->memo = 1;
  if (st)
    return st;
  d->qkey[d->qnext][0] = key[0], d->qkey[d->qnext][1] = key[1];
  memcpy(d->qval[d->qnext], v, sizeof v);
  d->qvalid[d->qnext] = 1, d->qnext ^= 1;
  HsQuotientStore(v, Vbar, va, vb, vaa, vab, vbb);
  return HS_SUCCESS;
}

/* Greenspan quotient Vbar(a,b) = (V(b)-V(a))/(b-a) with first and second
 * derivatives. Uses the problem's closed form if it has one; otherwise the
 * divided differences
 *   vb = (V'(b) - Vbar)/D, va = (Vbar - V'(a))/D,
 *   vbb = (V''(b) - 2 vb)/D, vaa = (2 va - V''(a))/D, vab = (vb - va)/D,
 * falling back to the midpoint Taylor values V'(m), V''(m)/2, V'''(m)/4 for
 * |D| <= dg_tol (1 + |m|). */
int HsGreenspanQuotient(HsDisc *d, double a, double b, double *Vbar, double *va, double *vb, double *vaa, double *vab,
                        double *vbb)
{
  const HsSeparable1 *S   = &d->prob->sep;
  void               *ctx = d->prob->ctx;
  double              D = b - a, mid = 0.5 * (a + b), Va, Vb, dVa, dVb, d2Va, d2Vb, q, qa, qb;

  if (d->memo)
    return MemoQuotient(d, a, b, Vbar, va, vb, vaa, vab, vbb);
  if (S->quotient)
    return HsStatus(S->quotient(a, b, Vbar, va, vb, vaa, vab, vbb, ctx));
  if (fabs(D) <= d->dg_tol * (1 + fabs(mid))) {
    double dV, d2V, d3V;
    HS_CB(S->V(mid, NULL, &dV, &d2V, &d3V, ctx));
    HsQuotientStore((const double[6]){dV, 0.5 * d2V, 0.5 * d2V, 0.25 * d3V, 0.25 * d3V, 0.25 * d3V}, Vbar, va, vb, vaa,
                    vab, vbb);
    return HS_SUCCESS;
  }
  HS_CB(S->V(a, &Va, &dVa, &d2Va, NULL, ctx));
  HS_CB(S->V(b, &Vb, &dVb, &d2Vb, NULL, ctx));
  q  = (Vb - Va) / D;
  qa = (q - dVa) / D;
  qb = (dVb - q) / D;
  HsQuotientStore((const double[6]){q, qa, qb, (2 * qa - d2Va) / D, (qb - qa) / D, (d2Vb - 2 * qb) / D}, Vbar, va, vb,
                  vaa, vab, vbb);
  return HS_SUCCESS;
}

static int GreenspanGrad(HsDisc *d, const double *a, const double *b, double *g)
{
  HS_CHK(HsGreenspanQuotient(d, a[0], b[0], &g[0], NULL, NULL, NULL, NULL, NULL));
  g[1] = 0.5 * (a[1] + b[1]) / d->prob->sep.mass;
  return HS_SUCCESS;
}

static int GreenspanJac(HsDisc *d, const double *a, const double *b, double *Da, double *Db)
{
  HS_CHK(HsGreenspanQuotient(d, a[0], b[0], NULL, &Da[0], &Db[0], NULL, NULL, NULL));
  Da[1] = Da[2] = Db[1] = Db[2] = 0;
  Da[3] = Db[3] = 0.5 / d->prob->sep.mass;
  return HS_SUCCESS;
}

static int GreenspanHessDir(HsDisc *d, const double *a, const double *b, const double *v, double *Paa, double *Pab,
                            double *Pbb)
{
  double vaa, vab, vbb;
  HS_CHK(HsGreenspanQuotient(d, a[0], b[0], NULL, NULL, NULL, &vaa, &vab, &vbb));
  HsZero(4, Paa), HsZero(4, Pab), HsZero(4, Pbb);
  Paa[0] = v[0] * vaa, Pab[0] = v[0] * vab, Pbb[0] = v[0] * vbb;
  return HS_SUCCESS;
}

const HsStateScheme HsStateMidpoint  = {"midpoint", 2, 0, MidpointGrad, MidpointJac, MidpointHessDir};
const HsStateScheme HsStateGreenspan = {"greenspan", 2, 1, GreenspanGrad, GreenspanJac, GreenspanHessDir};
const HsStateScheme HsStateGonzalez  = {"gonzalez", 2, 1, GonzalezGrad, GonzalezJac, GonzalezHessDir};
/* The state scheme of a constrained system (docs/constrained.md): in the closed-form class (constant M, linear V: E
 * quadratic) the midpoint gradient, which is then E's discrete gradient exactly, so that the diagnostics (H^d, E - W)
 * are the closed-form scheme's (costate/constrained.c) to the last bit; otherwise the Gonzalez discrete gradient, the
 * extended scheme's state scheme (costate/constrainedext.c). */
static int BemGrad(HsDisc *d, const double *a, const double *b, double *g)
{
  return d->prob->cons_extended ? GonzalezGrad(d, a, b, g) : MidpointGrad(d, a, b, g);
}
static int BemJac(HsDisc *d, const double *a, const double *b, double *Da, double *Db)
{
  return d->prob->cons_extended ? GonzalezJac(d, a, b, Da, Db) : MidpointJac(d, a, b, Da, Db);
}
static int BemHessDir(HsDisc *d, const double *a, const double *b, const double *v, double *Paa, double *Pab, double *Pbb)
{
  return d->prob->cons_extended ? GonzalezHessDir(d, a, b, v, Paa, Pab, Pbb) : MidpointHessDir(d, a, b, v, Paa, Pab, Pbb);
}
const HsStateScheme HsStateBEM = {"bem", 2, 1, BemGrad, BemJac, BemHessDir};

/*@ HsDiscGradT - the state scheme's discrete gradient of E_T = dE/dT (a free final time T on which M or V
    depends; docs/free-final-time.md): every scheme here is linear in the function it is built from, with
    a branch that depends on (a, b) only, so this is d gbar/dT at fixed (a, b) exactly:
      midpoint: grad E_T(m);  gonzalez: HsGonzalezGrad of E_T;
      greenspan: ((E_T(q_b, 0) - E_T(q_a, 0)) / (q_b - q_a), dE_T/dp(m)), the q-part dE_T/dq(q_m, 0) below
      the threshold (E = p^2/(2 mass) + V(q), so E_T(q, 0) = V_T(q) and dE_T/dp is linear in p).
    g = 0 if E does not depend on T. Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED.
@*/
int HsDiscGradT(HsDisc *d, const double *a, const double *b, double *g)
{
  const HsFunction *F   = &d->prob->E_T;
  void             *ctx = d->prob->ctx;
  double           *mid = d->wdg_v[0], *y = d->wdg_v[1], *gy = d->wdg_v[2], fa, fb;

  if (!F->f) {
    HsZero(d->dim, g);
    return HS_SUCCESS;
  }
  if (d->ss == &HsStateGonzalez)
    return HsGonzalezGrad(F, d->dim, ctx, d->dg_tol, a, b, g, d->wdg_v[0]);
  for (int i = 0; i < d->dim; i++)
    mid[i] = 0.5 * (a[i] + b[i]);
  HS_CB(F->grad(mid, g, ctx));
  if (d->ss != &HsStateGreenspan)
    return HS_SUCCESS;
  if (fabs(b[0] - a[0]) <= d->dg_tol * (1 + fabs(mid[0]))) {
    y[0] = mid[0], y[1] = 0;
    HS_CB(F->grad(y, gy, ctx));
    g[0] = gy[0];
    return HS_SUCCESS;
  }
  y[0] = a[0], y[1] = 0;
  HS_CB(F->f(y, &fa, ctx));
  y[0] = b[0];
  HS_CB(F->f(y, &fb, ctx));
  g[0] = (fb - fa) / (b[0] - a[0]);
  return HS_SUCCESS;
}
