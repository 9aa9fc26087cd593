/* hamshoot: costate schemes, docs/theory.md section 2.2 (all residuals times h).
 *
 *   kkt:             C = l+ - l- - h [Da(x_k,x_{k+1})^T JJ l+ + Db(x_{k-1},x_k)^T JJ l- + grad ell(x_k)]
 *                    (exact KKT conditions of the direct transcription with the chosen state scheme;
 *                    derivation: stationarity of the Lagrangian in x_k, JJ^T = -JJ)
 *   trapezoidal:     kkt with the midpoint discrete gradient, i.e. thesis (8.47)
 *   conserving:      C = l+ - l- - h [1/2 Abar^T JJ (l+ + l-) + gbar_ell(x_{k-1}, x_{k+1})], thesis (8.49)/(8.50)
 *                    Abar = H + r d^T/(d.d), r = g+ - g- - H d, d = (x_{k+1} - x_{k-1})/2, H = Hess E(x_k)
 *   conserving_1dof: the same with Abar = diag(Vbar'', 1/mass), thesis (8.20)/(8.21),
 *                    Vbar'' = [Vbar(q_k,q_{k+1}) - Vbar(q_{k-1},q_k)] / d_q
 *   A configuration-dependent B(q) adds one term to each (gain.c, docs/configuration-dependent-forces.md).
 *
 * Second divided differences (the outer-product term and Vbar'') are 0/0 as
 * d -> 0. For |d| <= dg_tol (1 + |x_k|) both conserving forms use
 * Abar = 2 Db(x_k, c), c = (x_{k-1} + x_{k+1})/2, the limit that keeps
 * Abar d = g+ - g- up to O(|d|^3) (for symmetric discrete gradients
 * g+ - g- = [Db(x_k,c) + Da(c,x_k)] d + O(|d|^3) and Da(c,x_k) = Db(x_k,c)).
 *
 * Newton needs dAbar/dx; through H = Hess E(x_k) that involves third
 * derivatives, taken from the problem's d3 callback (or a directional
 * difference of the Hessian when the problem has none; see HsFunctionD3).
 */
#include "hsdiscimpl.h"

/* Adds grad ell(x, t) (or its Hessian) if the problem has a running cost. */
static int EllGradAdd(HsDisc *d, double t, const double *x, double *g)
{
  double *w = d->wcs_v[11];
  if (!d->prob->ell.f)
    return HS_SUCCESS;
  HS_CB(d->prob->ell.grad(t, x, w, d->prob->ctx));
  for (int i = 0; i < d->dim; i++)
    g[i] += w[i];
  return HS_SUCCESS;
}

static int EllHessAdd(HsDisc *d, double t, const double *x, double *Hm)
{
  double *W = d->wcs_m[13];
  if (!d->prob->ell.f)
    return HS_SUCCESS;
  HS_CB(d->prob->ell.hess(t, x, W, d->prob->ctx));
  for (int i = 0; i < d->dim * d->dim; i++)
    Hm[i] += W[i];
  return HS_SUCCESS;
}

/* ---------------------------------------------------------------- kkt ---- */

static int KKTResidualWith(HsDisc *d, int k, const HsStateScheme *ss, const double *xm, const double *x0,
                           const double *xp, const double *lm, const double *lp, double *C)
{
  int     dim = d->dim, i;
  double *vp = d->wcs_v[0], *vm = d->wcs_v[1], *g = d->wcs_v[2], *t = d->wcs_v[3];
  double *Da = d->wcs_m[0], *Db = d->wcs_m[1];

  HsApplyJ(dim, lp, vp);
  HsApplyJ(dim, lm, vm);
  HS_CHK(ss->jac(d, x0, xp, Da, Db));
  HsMatTVec(dim, dim, Da, vp, g);
  HS_CHK(ss->jac(d, xm, x0, Da, Db));
  HsMatTVec(dim, dim, Db, vm, t);
  for (i = 0; i < dim; i++)
    g[i] += t[i];
  HS_CHK(EllGradAdd(d, HsDiscTime(d, k), x0, g));
  for (i = 0; i < dim; i++)
    C[i] = lp[i] - lm[i] - d->h * g[i];
  return HsDiscGainKKT(d, xm, x0, xp, lm, lp, C, NULL, NULL, NULL, NULL, NULL);
}

static int KKTJacobianWith(HsDisc *d, int k, const HsStateScheme *ss, const double *xm, const double *x0,
                           const double *xp, const double *lm, const double *lp, double *Jxm, double *Jx0, double *Jxp,
                           double *Jlm, double *Jlp)
{
  int     dim = d->dim, i, dd = dim * dim;
  double  h = d->h, *vp = d->wcs_v[0], *vm = d->wcs_v[1];
  double *Da = d->wcs_m[0], *Db = d->wcs_m[1], *Paa = d->wcs_m[2], *Pab = d->wcs_m[3], *Pbb = d->wcs_m[4];

  HsApplyJ(dim, lp, vp);
  HsApplyJ(dim, lm, vm);
  /* interval k: (x_k, x_{k+1}) */
  HS_CHK(ss->jac(d, x0, xp, Da, Db));
  HsMatTJ(dim, Da, Jlp);
  HS_CHK(ss->hessdir(d, x0, xp, vp, Paa, Pab, Pbb));
  for (i = 0; i < dd; i++)
    Jlp[i] *= -h, Jxp[i] = -h * Pab[i], Jx0[i] = Paa[i];
  HsAddDiag(dim, 1, Jlp);
  /* interval k-1: (x_{k-1}, x_k) */
  HS_CHK(ss->jac(d, xm, x0, Da, Db));
  HsMatTJ(dim, Db, Jlm);
  HS_CHK(ss->hessdir(d, xm, x0, vm, Paa, Pab, Pbb));
  HsTranspose(dim, Pab, Jxm);
  for (i = 0; i < dd; i++)
    Jlm[i] *= -h, Jxm[i] *= -h, Jx0[i] += Pbb[i];
  HsAddDiag(dim, -1, Jlm);
  HS_CHK(EllHessAdd(d, HsDiscTime(d, k), x0, Jx0));
  for (i = 0; i < dd; i++)
    Jx0[i] *= -h;
  return HsDiscGainKKT(d, xm, x0, xp, lm, lp, NULL, Jxm, Jx0, Jxp, Jlm, Jlp);
}

static int KKTResidual(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                       const double *lp, double *C)
{
  return KKTResidualWith(d, k, d->ss, xm, x0, xp, lm, lp, C);
}

static int KKTJacobian(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                       const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  return KKTJacobianWith(d, k, d->ss, xm, x0, xp, lm, lp, Jxm, Jx0, Jxp, Jlm, Jlp);
}

static int TrapResidual(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                        const double *lp, double *C)
{
  return KKTResidualWith(d, k, d->mid, xm, x0, xp, lm, lp, C);
}

static int TrapJacobian(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                        const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  return KKTJacobianWith(d, k, d->mid, xm, x0, xp, lm, lp, Jxm, Jx0, Jxp, Jlm, Jlp);
}

/* --------------------------------------------------------- conserving ---- */

/* Discrete gradient of the running cost in the conserving scheme at node k,
 * between x_{k-1} and x_{k+1} (docs/time-dependent-cost.md):
 *   gbar_ell = 1/2 [gbar ell(., t_{k+1})(x_{k-1}, x_{k+1}) + gbar ell(., t_{k-1})(x_{k-1}, x_{k+1})],
 * each a Gonzalez discrete gradient in x at a fixed time. It satisfies
 *   gbar_ell . (x_{k+1} - x_{k-1}) = ell(x_{k+1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) - Dt_k,
 *   Dt_k = 1/2 [ell(x_{k-1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) + ell(x_{k+1}, t_{k+1}) - ell(x_{k+1}, t_{k-1})],
 * so that H^d_{k+1/2} - H^d_{k-1/2} = -Dt_k / 2 exactly, the discrete form of
 * dH/dt = dH/dt|explicit = -d ell/dt, and Dt_k = 0 wherever ell(., t_{k-1}) = ell(., t_{k+1}).
 * For an autonomous ell both terms coincide and one is evaluated. */
static int EllDiscreteGradient(HsDisc *d, int k, const double *xm, const double *xp, double *g)
{
  int     dim = d->dim, i;
  double *g2 = d->wcs_v[10], *work = d->wcs_v[12]; /* work: HS_GONZALEZ_WORK(dim), wcs_v[12..15] */

  d->ell_at.t = HsDiscTime(d, k + 1);
  HS_CHK(HsGonzalezGrad(&HsEllAtFunction, dim, &d->ell_at, d->dg_tol, xm, xp, g, work));
  if (!d->prob->ell.time_dependent)
    return HS_SUCCESS;
  d->ell_at.t = HsDiscTime(d, k - 1);
  HS_CHK(HsGonzalezGrad(&HsEllAtFunction, dim, &d->ell_at, d->dg_tol, xm, xp, g2, work));
  for (i = 0; i < dim; i++)
    g[i] = 0.5 * (g[i] + g2[i]);
  return HS_SUCCESS;
}

/* Its Jacobians with respect to x_{k-1} (Da) and x_{k+1} (Db). */
static int EllDiscreteGradientJac(HsDisc *d, int k, const double *xm, const double *xp, double *Da, double *Db)
{
  int     dd  = d->dim * d->dim, i;
  double *Da2 = d->wcs_m[14], *Db2 = d->wcs_m[15];

  d->ell_at.t = HsDiscTime(d, k + 1);
  HS_CHK(HsGonzalezJacOf(d, &HsEllAtFunction, &d->ell_at, xm, xp, Da, Db));
  if (!d->prob->ell.time_dependent)
    return HS_SUCCESS;
  d->ell_at.t = HsDiscTime(d, k - 1);
  HS_CHK(HsGonzalezJacOf(d, &HsEllAtFunction, &d->ell_at, xm, xp, Da2, Db2));
  for (i = 0; i < dd; i++)
    Da[i] = 0.5 * (Da[i] + Da2[i]), Db[i] = 0.5 * (Db[i] + Db2[i]);
  return HS_SUCCESS;
}

/* The parts of AbarApply below take its arguments: w = Abar^T s; Abar itself if A != NULL; with
 * W0 != NULL the derivatives Wm, W0, Wp of w with respect to x_{k-1}, x_k, x_{k+1}; dv = d and
 * cbar = (x_{k-1} + x_{k+1})/2 precomputed. */

/* Fallback below the threshold, 1 DOF: Abar = diag(2 dVbar/db(x_k, cbar), 1/mass) (only the q-q
 * entry is a quotient). */
static int AbarFallback1(HsDisc *d, const double *x0, const double *cbar, const double *s, double *w, double *A,
                         double *Wm, double *W0, double *Wp)
{
  double vb, vab, vbb;

  HS_CHK(HsGreenspanQuotient(d, x0[0], cbar[0], NULL, NULL, &vb, NULL, &vab, &vbb));
  w[0] = 2 * vb * s[0], w[1] = s[1] / d->prob->sep.mass;
  if (A)
    A[0] = 2 * vb, A[1] = A[2] = 0, A[3] = 1 / d->prob->sep.mass;
  if (W0) {
    HsZero(4, Wm), HsZero(4, W0), HsZero(4, Wp);
    W0[0] = 2 * vab * s[0], Wm[0] = Wp[0] = vbb * s[0];
  }
  return HS_SUCCESS;
}

/* Fallback below the threshold, n DOF: Abar = 2 Db(x_k, cbar), which keeps Abar d = g+ - g- to O(|d|^3). */
static int AbarFallbackN(HsDisc *d, const double *x0, const double *cbar, const double *s, double *w, double *A,
                         double *Wm, double *W0, double *Wp)
{
  int     dim = d->dim, dd = dim * dim, i;
  double *Dap = d->wcs_m[6], *Dbp = d->wcs_m[7], *Paa = d->wcs_m[10], *Pab = d->wcs_m[11], *Pbb = d->wcs_m[12];

  HS_CHK(d->ss->jac(d, x0, cbar, Dap, Dbp));
  HsMatTVec(dim, dim, Dbp, s, w);
  for (i = 0; i < dim; i++)
    w[i] *= 2;
  if (A)
    for (i = 0; i < dd; i++)
      A[i] = 2 * Dbp[i];
  if (W0) {
    HS_CHK(d->ss->hessdir(d, x0, cbar, s, Paa, Pab, Pbb));
    HsTranspose(dim, Pab, W0);
    for (i = 0; i < dd; i++)
      W0[i] *= 2, Wm[i] = Wp[i] = Pbb[i];
  }
  return HS_SUCCESS;
}

/* 1 DOF (thesis (8.20)/(8.21)): Abar = diag(Vbar'', 1/mass), Vbar'' = (Vbar+ - Vbar-)/d_q. */
static int Abar1(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *dv, const double *s,
                 double *w, double *A, double *Wm, double *W0, double *Wp)
{
  double Vp, Vm, vap, vbp, vam, vbm, V2;

  HS_CHK(HsGreenspanQuotient(d, x0[0], xp[0], &Vp, &vap, &vbp, NULL, NULL, NULL));
  HS_CHK(HsGreenspanQuotient(d, xm[0], x0[0], &Vm, &vam, &vbm, NULL, NULL, NULL));
  V2   = (Vp - Vm) / dv[0];
  w[0] = V2 * s[0], w[1] = s[1] / d->prob->sep.mass;
  if (A)
    A[0] = V2, A[1] = A[2] = 0, A[3] = 1 / d->prob->sep.mass;
  if (W0) {
    HsZero(4, Wm), HsZero(4, W0), HsZero(4, Wp);
    Wp[0] = s[0] * (vbp - 0.5 * V2) / dv[0];
    W0[0] = s[0] * (vap - vbm) / dv[0];
    Wm[0] = s[0] * (-vam + 0.5 * V2) / dv[0];
  }
  return HS_SUCCESS;
}

/* The derivatives of w = H s + sigma d (AbarN) with H = Hess E(x_k), r = g+ - g- - H d, sigma = r.s/(d.d):
 * d sigma/dx_j = [(dr/dx_j)^T s - 2 sigma (dd/dx_j)^T d] / (d.d),
 * W_j = d(H s)/dx_j + sigma dd/dx_j + d (d sigma/dx_j)^T. */
static int AbarNDerivatives(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *dv,
                            const double *s, double sigma, double dd2, double *Wm, double *W0, double *Wp)
{
  int     dim = d->dim, dd = dim * dim, i;
  double *Hb = d->wcs_m[5], *Dap = d->wcs_m[6], *Dbp = d->wcs_m[7], *Dam = d->wcs_m[8], *Dbm = d->wcs_m[9];
  double *T = d->wcs_m[2], *Dr = d->wcs_m[3], *ds = d->wcs_v[9];

  HS_CHK(d->ss->jac(d, x0, xp, Dap, Dbp));
  HS_CHK(d->ss->jac(d, xm, x0, Dam, Dbm));
  /* x_{k+1}: dr = Db+ - H/2, dd = I/2 */
  for (i = 0; i < dd; i++)
    Dr[i] = Dbp[i] - 0.5 * Hb[i];
  HsMatTVec(dim, dim, Dr, s, ds);
  for (i = 0; i < dim; i++)
    ds[i] = (ds[i] - sigma * dv[i]) / dd2;
  HsZero(dd, Wp);
  HsAddDiag(dim, 0.5 * sigma, Wp);
  HsRank1(dim, 1, dv, ds, Wp);
  /* x_{k-1}: dr = -Da- + H/2, dd = -I/2 */
  for (i = 0; i < dd; i++)
    Dr[i] = -Dam[i] + 0.5 * Hb[i];
  HsMatTVec(dim, dim, Dr, s, ds);
  for (i = 0; i < dim; i++)
    ds[i] = (ds[i] + sigma * dv[i]) / dd2;
  HsZero(dd, Wm);
  HsAddDiag(dim, -0.5 * sigma, Wm);
  HsRank1(dim, 1, dv, ds, Wm);
  /* x_k: dr = Da+ - Db- - D3(x_k, d), dd = 0, d(Hs)/dx_k = D3(x_k, s) */
  HS_CHK(HsFunctionD3(&d->prob->E, dim, d->prob->ctx, x0, dv, T, d->wcs_d3));
  for (i = 0; i < dd; i++)
    Dr[i] = Dap[i] - Dbm[i] - T[i];
  HsMatTVec(dim, dim, Dr, s, ds);
  for (i = 0; i < dim; i++)
    ds[i] /= dd2;
  HS_CHK(HsFunctionD3(&d->prob->E, dim, d->prob->ctx, x0, s, W0, d->wcs_d3));
  HsRank1(dim, 1, dv, ds, W0);
  return HS_SUCCESS;
}

/* n DOF (docs/theory.md section 2.2): Abar = H + r d^T/(d.d), so Abar^T s = H s + sigma d, sigma = r.s/(d.d)
 * (H symmetric). */
static int AbarN(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *dv, const double *s,
                 double *w, double *A, double *Wm, double *W0, double *Wp)
{
  int     dim = d->dim, i;
  double *gp = d->wcs_v[6], *gm = d->wcs_v[7], *r = d->wcs_v[8], *Hb = d->wcs_m[5], dd2, sigma;

  HS_CB(d->prob->E.hess(x0, Hb, d->prob->ctx));
  HS_CHK(d->ss->grad(d, x0, xp, gp));
  HS_CHK(d->ss->grad(d, xm, x0, gm));
  HsMatVec(dim, dim, Hb, dv, r);
  for (i = 0; i < dim; i++)
    r[i] = gp[i] - gm[i] - r[i];
  dd2   = HsDot(dim, dv, dv);
  sigma = HsDot(dim, r, s) / dd2;
  HsMatVec(dim, dim, Hb, s, w);
  for (i = 0; i < dim; i++)
    w[i] += sigma * dv[i];
  if (A) {
    HsCopy(dim * dim, Hb, A);
    HsRank1(dim, 1 / dd2, r, dv, A);
  }
  return W0 ? AbarNDerivatives(d, xm, x0, xp, dv, s, sigma, dd2, Wm, W0, Wp) : HS_SUCCESS;
}

/* w = Abar^T s and, if W0 != NULL, its derivatives Wm, W0, Wp with respect to
 * x_{k-1}, x_k, x_{k+1}. Also returns Abar (dim x dim) if A != NULL. Below the
 * relative threshold dg_tol on d = (x_{k+1} - x_{k-1})/2 the fallbacks apply. */
static int AbarApply(HsDisc *d, int one_dof, const double *xm, const double *x0, const double *xp, const double *s,
                     double *w, double *A, double *Wm, double *W0, double *Wp)
{
  int     dim = d->dim, i;
  double *dv = d->wcs_v[4], *cbar = d->wcs_v[5], nd;

  for (i = 0; i < dim; i++)
    dv[i] = 0.5 * (xp[i] - xm[i]), cbar[i] = 0.5 * (xp[i] + xm[i]);
  nd = one_dof ? fabs(dv[0]) : HsNorm(dim, dv);
  if (nd <= d->dg_tol * (1 + (one_dof ? fabs(x0[0]) : HsNorm(dim, x0))))
    return one_dof ? AbarFallback1(d, x0, cbar, s, w, A, Wm, W0, Wp) : AbarFallbackN(d, x0, cbar, s, w, A, Wm, W0, Wp);
  return one_dof ? Abar1(d, xm, x0, xp, dv, s, w, A, Wm, W0, Wp) : AbarN(d, xm, x0, xp, dv, s, w, A, Wm, W0, Wp);
}

static int ConsResidualImpl(HsDisc *d, int k, int one_dof, const double *xm, const double *x0, const double *xp,
                            const double *lm, const double *lp, double *C)
{
  int     dim = d->dim, i;
  double *s = d->wcs_v[0], *w = d->wcs_v[1], *gl = d->wcs_v[2], *ls = d->wcs_v[3];

  for (i = 0; i < dim; i++)
    ls[i] = 0.5 * (lp[i] + lm[i]);
  HsApplyJ(dim, ls, s);
  HS_CHK(AbarApply(d, one_dof, xm, x0, xp, s, w, NULL, NULL, NULL, NULL));
  if (d->prob->ell.f) {
    HS_CHK(EllDiscreteGradient(d, k, xm, xp, gl));
    for (i = 0; i < dim; i++)
      w[i] += gl[i];
  }
  for (i = 0; i < dim; i++)
    C[i] = lp[i] - lm[i] - d->h * w[i];
  return HsDiscGainKappa(d, xm, x0, xp, lm, lp, C, NULL, NULL, NULL, NULL, NULL);
}

static int ConsJacobianImpl(HsDisc *d, int k, int one_dof, const double *xm, const double *x0, const double *xp,
                            const double *lm, const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm,
                            double *Jlp)
{
  int     dim = d->dim, dd = dim * dim, i;
  double  h = d->h, *s = d->wcs_v[0], *w = d->wcs_v[1], *ls = d->wcs_v[3];
  double *A = d->wcs_m[4], *AJ = d->wcs_m[1];

  for (i = 0; i < dim; i++)
    ls[i] = 0.5 * (lp[i] + lm[i]);
  HsApplyJ(dim, ls, s);
  HS_CHK(AbarApply(d, one_dof, xm, x0, xp, s, w, A, Jxm, Jx0, Jxp));
  HsMatTJ(dim, A, AJ);
  for (i = 0; i < dd; i++) {
    Jlp[i] = -0.5 * h * AJ[i];
    Jlm[i] = -0.5 * h * AJ[i];
    Jxm[i] *= -h, Jx0[i] *= -h, Jxp[i] *= -h;
  }
  HsAddDiag(dim, 1, Jlp);
  HsAddDiag(dim, -1, Jlm);
  if (d->prob->ell.f) {
    double *Da = d->wcs_m[2], *Db = d->wcs_m[3];
    HS_CHK(EllDiscreteGradientJac(d, k, xm, xp, Da, Db)); /* d gbar_ell / d(x_{k-1}, x_{k+1}) */
    for (i = 0; i < dd; i++)
      Jxm[i] -= h * Da[i], Jxp[i] -= h * Db[i];
  }
  return HsDiscGainKappa(d, xm, x0, xp, lm, lp, NULL, Jxm, Jx0, Jxp, Jlm, Jlp);
}

static int ConsResidual(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                        const double *lp, double *C)
{
  return ConsResidualImpl(d, k, 0, xm, x0, xp, lm, lp, C);
}
static int ConsJacobian(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                        const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  return ConsJacobianImpl(d, k, 0, xm, x0, xp, lm, lp, Jxm, Jx0, Jxp, Jlm, Jlp);
}
static int Cons1Residual(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                         const double *lp, double *C)
{
  return ConsResidualImpl(d, k, 1, xm, x0, xp, lm, lp, C);
}
static int Cons1Jacobian(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                         const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  return ConsJacobianImpl(d, k, 1, xm, x0, xp, lm, lp, Jxm, Jx0, Jxp, Jlm, Jlp);
}

const HsCostateScheme HsCostateConserving  = {"conserving", 2, 1, ConsResidual, ConsJacobian};
const HsCostateScheme HsCostateConserving1 = {"conserving_1dof", 2, 1, Cons1Residual, Cons1Jacobian};
const HsCostateScheme HsCostateTrapezoidal = {"trapezoidal", 2, 0, TrapResidual, TrapJacobian};
const HsCostateScheme HsCostateKKT         = {"kkt", 2, 0, KKTResidual, KKTJacobian};
/* The costate scheme of a constrained system: its equations are costate/constrained.c's (the formulation of
 * bvp/impls/constrained.c); the entry names it, and the diagnostics need no costate equation. */
const HsCostateScheme HsCostateConstrained = {"constrained", 2, 1, ConsResidual, ConsJacobian};
/* ... and the KKT conditions of its direct BEM transcription (H^d not conserved); the extended class's KKT form
 * (costate/constrainedext.c) uses its residual, the kkt one of the state scheme. */
const HsCostateScheme HsCostateConstrainedKKT = {"constrained_kkt", 2, 0, KKTResidual, KKTJacobian};

/* ---------------------------------------------------- terminal condition ---- */

/*@ HsDiscTerminalResidual - the transversality residual at x_N for all 2n components (the caller uses
    those of the free terminal components): the stationarity of the direct transcription's Lagrangian
    L = -h sum L^d - phi(x_N) + h sum lambda^T (JJ gbar + G u - (x_{k+1}-x_k)/h) in x_N
    (docs/transversality.md),
      R = lambda_{N-1/2} + grad phi(x_N) + h [1/2 grad ell(x_N, T) + Db(x_{N-1}, x_N)^T JJ lambda_{N-1/2}],
    with Db the state scheme's (the midpoint's for the trapezoidal costate scheme).
    Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsDiscTerminalResidual(HsDisc *d, const double *xm, const double *xN, const double *lm, double *R)
{
  const HsStateScheme *ss  = d->cs == &HsCostateTrapezoidal ? d->mid : d->ss;
  int                  dim = d->dim, i;
  double              *v = d->wcs_v[0], *g = d->wcs_v[1], *w = d->wcs_v[2], *Da = d->wcs_m[0], *Db = d->wcs_m[1];

  HsApplyJ(dim, lm, v);
  HS_CHK(ss->jac(d, xm, xN, Da, Db));
  HsMatTVec(dim, dim, Db, v, g);
  HsZero(dim, w);
  HS_CHK(EllGradAdd(d, d->prob->T, xN, w));
  for (i = 0; i < dim; i++)
    R[i] = lm[i] + d->h * (0.5 * w[i] + g[i]);
  if (d->prob->phi.f) {
    HS_CB(d->prob->phi.grad(xN, w, d->prob->ctx));
    for (i = 0; i < dim; i++)
      R[i] += w[i];
  }
  return HsDiscGainTerminal(d, xm, xN, lm, R, NULL, NULL, NULL);
}

/*@ HsDiscTerminalJacobian - the Jacobian blocks of HsDiscTerminalResidual with respect to x_{N-1}, x_N
    and lambda_{N-1/2} (2n x 2n each). Not collective. @*/
int HsDiscTerminalJacobian(HsDisc *d, const double *xm, const double *xN, const double *lm, double *Rxm, double *RxN,
                           double *Rlm)
{
  const HsStateScheme *ss  = d->cs == &HsCostateTrapezoidal ? d->mid : d->ss;
  int                  dim = d->dim, dd = dim * dim, i;
  double              *v = d->wcs_v[0], *Da = d->wcs_m[0], *Db = d->wcs_m[1], *Paa = d->wcs_m[2], *Pab = d->wcs_m[3];
  double              *Pbb = d->wcs_m[4], *W = d->wcs_m[5];

  HsApplyJ(dim, lm, v);
  HS_CHK(ss->jac(d, xm, xN, Da, Db));
  HsMatTJ(dim, Db, Rlm); /* d(Db^T JJ lambda)/dlambda = Db^T JJ */
  for (i = 0; i < dd; i++)
    Rlm[i] *= d->h;
  HsAddDiag(dim, 1, Rlm);
  HS_CHK(ss->hessdir(d, xm, xN, v, Paa, Pab, Pbb));
  HsTranspose(dim, Pab, Rxm); /* d(Db^T v)/da = Pab^T */
  HsZero(dd, RxN);
  HS_CHK(EllHessAdd(d, d->prob->T, xN, RxN));
  for (i = 0; i < dd; i++)
    Rxm[i] *= d->h, RxN[i] = d->h * (0.5 * RxN[i] + Pbb[i]);
  if (d->prob->phi.f) {
    HS_CB(d->prob->phi.hess(xN, W, d->prob->ctx));
    for (i = 0; i < dd; i++)
      RxN[i] += W[i];
  }
  return HsDiscGainTerminal(d, xm, xN, lm, NULL, Rxm, RxN, Rlm);
}

/*@ HsDiscTerminalCost - phi(x_N), 0 without a terminal cost. Not collective. @*/
int HsDiscTerminalCost(HsDisc *d, const double *xN, double *phi)
{
  *phi = 0;
  return d->prob->phi.f ? HsStatus(d->prob->phi.f(xN, phi, d->prob->ctx)) : HS_SUCCESS;
}
