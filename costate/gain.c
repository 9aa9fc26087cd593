/* hamshoot: a configuration-dependent control matrix B(q) in the discretization
 * (docs/configuration-dependent-forces.md). Interval k uses Bbar = B(qbar), qbar = (q_k + q_{k+1})/2:
 *
 *   state        (x_{k+1} - x_k)/h = JJ gbar + [0; Bbar u],  R u = Bbar^T lambda^p,  so  G u = KK(qbar) lambda
 *                with KK(q) = [[0, 0], [0, K(q)]], K = B R^{-1} B^T;
 *   H^d          1/2 lambda_p^T K(qbar) lambda_p - 1/2 (ell_k + ell_{k+1}) + lambda^T JJ gbar;
 *   work         (q_{k+1} - q_k)^T Bbar u, so E - W stays exact for an energy-consistent state scheme.
 *
 * Everything below is written with the scalar form P(q; a, b) = a^T K(q) b (a, b in R^n) and its
 * derivatives in q: gq_j = a^T dK/dq_j b, Hqq_ij = a^T d2K/dq_i dq_j b, and the matrices Ma, Mb whose
 * column j is dK/dq_j a and dK/dq_j b (HsDiscGainForm). The costate schemes gain:
 *
 *   kkt, trapezoidal  C += h/4 [gq(qbar+; l+, l+) + gq(qbar-; l-, l-)]   (stationarity of the NLP in x_k)
 *   terminal          R -= h/4 gq(qbar; l, l)                             (stationarity in x_N)
 *   conserving        C -= h kappa, kappa = kappa0 + (r - kappa0.d) d/(d.d), kappa0 = -1/2 gq(q_k; l-, l+),
 *                     r = -1/2 [P(qbar+; l-, l+) - P(qbar-; l-, l+)], d = (x_{k+1} - x_{k-1})/2,
 *                     so kappa.d = r, which keeps H^d_{k+1/2} = H^d_{k-1/2} exactly; kappa = kappa0 below the
 *                     relative threshold dg_tol on |d| (as for Abar, costate.c).
 *
 * (l = lambda^p, l+- of the intervals k +- 1/2, qbar+- their midpoints; all residuals times h.) With a
 * constant B every function here is a no-op: the constant-B code in disc.c and costate.c is untouched.
 */
#include "hsdiscimpl.h"

#include <stdlib.h>

/*@ HsDiscGainSetup - the B(q) workspace of d (none when B is constant; then Bbar = prob->B); R^{-1}
    is filled in by HsDiscCreate's factorization of R. Not collective. Returns HS_SUCCESS or HS_ENOMEM. @*/
int HsDiscGainSetup(HsDisc *d)
{
  const HsProblem *P = d->prob;
  int              n = d->n, m = d->m, dim = d->dim, S = dim > m ? dim : m, i;
  size_t           len;
  double          *p;

  d->Bbar = P->B;
  if (!P->Bq)
    return HS_SUCCESS;
  len = (size_t)m * m + 2 * (size_t)n * m + (size_t)n * m * n + (size_t)n * m * n * n + HS_WBQ_VEC * (size_t)S +
        HS_WBQ_MAT * (size_t)n * m + HS_WK_VEC * (size_t)S + HS_WK_MAT * (size_t)dim * dim;
  d->bq_pool = p = calloc(len, sizeof(double));
  if (!p)
    return HS_ENOMEM;
  d->Rinv    = p, p += m * m;
  d->bq_Bbar = p, p += n * m;
  d->bq_B    = p, p += n * m;
  d->bq_dB   = p, p += n * m * n;
  d->bq_d2B  = p, p += n * m * n * n;
  for (i = 0; i < HS_WBQ_VEC; i++, p += S)
    d->bq_v[i] = p;
  for (i = 0; i < HS_WBQ_MAT; i++, p += n * m)
    d->bq_m[i] = p;
  for (i = 0; i < HS_WK_VEC; i++, p += S)
    d->wk_v[i] = p;
  for (i = 0; i < HS_WK_MAT; i++, p += dim * dim)
    d->wk_m[i] = p;
  HsCopy(n * m, P->B, d->bq_Bbar);
  d->Bbar = d->bq_Bbar;
  return HS_SUCCESS;
}

/*@ HsDiscGainDestroy - frees the B(q) workspace; NULL-safe. Not collective. @*/
void HsDiscGainDestroy(HsDisc *d)
{
  if (d)
    free(d->bq_pool), d->bq_pool = NULL;
}

/* The callback at q: B, and dB (order >= 1), d2B (order 2) into bq_B, bq_dB, bq_d2B. */
static int BqEval(HsDisc *d, const double *q, int order)
{
  const HsProblem *P = d->prob;
  return HsStatus(P->Bq(q, d->bq_B, order > 0 ? d->bq_dB : NULL, order > 1 ? d->bq_d2B : NULL, P->ctx));
}

/* qbar = (q_a + q_b)/2 (n values). */
static void Mid(int n, const double *xa, const double *xb, double *qbar)
{
  for (int i = 0; i < n; i++)
    qbar[i] = 0.5 * (xa[i] + xb[i]);
}

/*@ HsDiscGainSet - Bbar = B(qbar) of the interval (x_k, x_{k+1}), and the gain K = R^{-1} G^T, GK = G K
    that follow it (hsdiscimpl.h); a no-op for a constant B. Every entry point that uses Bbar, K or GK
    calls it first. Not collective. Returns HS_SUCCESS or HS_EDOM (B not finite there). @*/
int HsDiscGainSet(HsDisc *d, const double *xk, const double *xk1)
{
  int     n = d->n, m = d->m, dim = d->dim, i, j, c;
  double *qbar = d->bq_v[4], *B = d->bq_Bbar;

  if (!d->prob->Bq)
    return HS_SUCCESS;
  Mid(n, xk, xk1, qbar);
  HS_CHK(BqEval(d, qbar, 0));
  HsCopy(n * m, d->bq_B, B);
  for (i = 0; i < m; i++) /* K = R^{-1} Bbar^T in the p-columns */
    for (j = 0; j < n; j++) {
      double s = 0;
      for (c = 0; c < m; c++)
        s += d->Rinv[i * m + c] * B[j * m + c];
      d->K[i * dim + n + j] = s;
    }
  for (i = 0; i < n; i++) /* GK = Bbar K in the p-block */
    for (j = 0; j < n; j++) {
      double s = 0;
      for (c = 0; c < m; c++)
        s += B[i * m + c] * d->K[c * dim + n + j];
      d->GK[(n + i) * dim + n + j] = s;
    }
  return HS_SUCCESS;
}

/* First-derivative parts of HsDiscGainForm: alpha_a[j m + c] = (dB/dq_j^T a)_c (and b), their R^{-1}
 * images, gq, and the columns dK/dq_j a, dK/dq_j b of Ma, Mb; rho_a = R^{-1} B^T a (and b). */
static void GainFirst(HsDisc *d, const double *a, const double *b, const double *ra, const double *rb, double *gq,
                      double *Ma, double *Mb)
{
  int     n = d->n, m = d->m, i, j, c, r;
  double *B = d->bq_B, *dB = d->bq_dB, *aa = d->bq_m[0], *ab = d->bq_m[1], *Raa = d->bq_m[2], *Rab = d->bq_m[3];

  for (j = 0; j < n; j++)
    for (c = 0; c < m; c++) {
      double sa = 0, sb = 0;
      for (r = 0; r < n; r++)
        sa += a[r] * dB[(r * m + c) * n + j], sb += b[r] * dB[(r * m + c) * n + j];
      aa[j * m + c] = sa, ab[j * m + c] = sb;
    }
  for (j = 0; j < n; j++) {
    HsMatVec(m, m, d->Rinv, aa + j * m, Raa + j * m);
    HsMatVec(m, m, d->Rinv, ab + j * m, Rab + j * m);
    if (gq)
      gq[j] = HsDot(m, aa + j * m, rb) + HsDot(m, ab + j * m, ra);
    for (i = 0; i < n; i++) { /* (dK/dq_j v)_i = (dB_j rho_v)_i + (B R^{-1} dB_j^T v)_i */
      double dra = 0, drb = 0;
      for (c = 0; c < m; c++)
        dra += dB[(i * m + c) * n + j] * ra[c], drb += dB[(i * m + c) * n + j] * rb[c];
      if (Ma)
        Ma[i * n + j] = dra + HsDot(m, B + i * m, Raa + j * m);
      if (Mb)
        Mb[i * n + j] = drb + HsDot(m, B + i * m, Rab + j * m);
    }
  }
}

/* Hqq_ij = sum_rc (a_r rho_b,c + b_r rho_a,c) d2B_rc/dq_i dq_j + alpha_a,i^T R^{-1} alpha_b,j + (i <-> j). */
static void GainSecond(HsDisc *d, const double *a, const double *b, const double *ra, const double *rb, double *Hqq)
{
  int     n = d->n, m = d->m, i, j, c, r;
  double *d2B = d->bq_d2B, *aa = d->bq_m[0], *Rab = d->bq_m[3];

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      double s = HsDot(m, aa + i * m, Rab + j * m) + HsDot(m, aa + j * m, Rab + i * m);
      for (r = 0; r < n; r++)
        for (c = 0; c < m; c++)
          s += (a[r] * rb[c] + b[r] * ra[c]) * d2B[((r * m + c) * n + i) * n + j];
      Hqq[i * n + j] = s;
    }
}

/*@ HsDiscGainForm - P(q; a, b) = a^T K(q) b with K = B R^{-1} B^T and its derivatives in q (file head):
    K (n x n), P, gq (n), Hqq (n x n), Ma, Mb (n x n, column j = dK/dq_j a, dK/dq_j b); any output may
    be NULL. Uses the gain-level scratch only. Not collective. Returns HS_SUCCESS or HS_EDOM. @*/
int HsDiscGainForm(HsDisc *d, const double *q, const double *a, const double *b, double *K, double *P, double *gq,
                   double *Hqq, double *Ma, double *Mb)
{
  int     n = d->n, m = d->m, i, j;
  double *ba = d->bq_v[0], *bb = d->bq_v[1], *ra = d->bq_v[2], *rb = d->bq_v[3], *RBt = d->bq_m[4];

  HS_CHK(BqEval(d, q, Hqq ? 2 : (gq || Ma || Mb) ? 1 : 0));
  HsMatTVec(n, m, d->bq_B, a, ba);
  HsMatTVec(n, m, d->bq_B, b, bb);
  HsMatVec(m, m, d->Rinv, ba, ra);
  HsMatVec(m, m, d->Rinv, bb, rb);
  if (P)
    *P = HsDot(m, ba, rb);
  if (K) {
    for (i = 0; i < m; i++) /* RBt = R^{-1} B^T (m x n) */
      for (j = 0; j < n; j++) {
        double s = 0;
        for (int c = 0; c < m; c++)
          s += d->Rinv[i * m + c] * d->bq_B[j * m + c];
        RBt[i * n + j] = s;
      }
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++) {
        double s = 0;
        for (int c = 0; c < m; c++)
          s += d->bq_B[i * m + c] * RBt[c * n + j];
        K[i * n + j] = s;
      }
  }
  if (gq || Ma || Mb || Hqq)
    GainFirst(d, a, b, ra, rb, gq, Ma, Mb);
  if (Hqq)
    GainSecond(d, a, b, ra, rb, Hqq);
  return HS_SUCCESS;
}

/* A[j * dim + n + i] += alpha M[i * n + j] for i, j < n: M's transpose into the (q-rows, p-columns) block. */
static void AddQPTransposed(int n, double alpha, const double *M, double *A)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[j * 2 * n + n + i] += alpha * M[i * n + j];
}

/* A[i * dim + j] += alpha M[i * n + j] for i, j < n: the (q, q) block. */
static void AddQQ(int n, double alpha, const double *M, double *A)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i * 2 * n + j] += alpha * M[i * n + j];
}

/*@ HsDiscGainStateJacobian - adds the derivative of -h KK(qbar) lambda in x_k and x_{k+1} to the state
    Jacobian blocks: the (p, q) blocks gain -h/2 dK/dq_j lambda_p in column j. Not collective. @*/
int HsDiscGainStateJacobian(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *Fxk,
                            double *Fxk1)
{
  int     n = d->n, dim = d->dim;
  double *qbar = d->wk_v[0], *M = d->wk_m[0];

  if (!d->prob->Bq)
    return HS_SUCCESS;
  Mid(n, xk, xk1, qbar);
  HS_CHK(HsDiscGainForm(d, qbar, lam + n, lam + n, NULL, NULL, NULL, NULL, NULL, M));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      Fxk[(n + i) * dim + j] -= 0.5 * d->h * M[i * n + j], Fxk1[(n + i) * dim + j] -= 0.5 * d->h * M[i * n + j];
  return HS_SUCCESS;
}

/*@ HsDiscGainControlJacobian - with the control u given (the NLP): adds the derivative of -h Bbar u in
    x_k and x_{k+1}, -h/2 (dB/dq_j u) in column j of the (p, q) blocks. Not collective. @*/
int HsDiscGainControlJacobian(HsDisc *d, const double *xk, const double *xk1, const double *u, double *Cxk,
                              double *Cxk1)
{
  int     n = d->n, m = d->m, dim = d->dim;
  double *qbar = d->wk_v[0];

  if (!d->prob->Bq)
    return HS_SUCCESS;
  Mid(n, xk, xk1, qbar);
  HS_CHK(BqEval(d, qbar, 1));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int c = 0; c < m; c++)
        s += d->bq_dB[(i * m + c) * n + j] * u[c];
      Cxk[(n + i) * dim + j] -= 0.5 * d->h * s, Cxk1[(n + i) * dim + j] -= 0.5 * d->h * s;
    }
  return HS_SUCCESS;
}

/*@ HsDiscGainControlHessian - the second derivatives of -h y_p^T Bbar u (the NLP's Lagrangian, y the
    multiplier of c_k): adds -h/4 y_p^T d2B/dq_i dq_j u to the (q, q) blocks of Hkk, Hk1k, Hk1k1, and sets
    Hxu (n x m), the block d2/dq dx u shared by x_k and x_{k+1}: -h/2 (dB/dq_j^T y_p)_c. Not collective. @*/
int HsDiscGainControlHessian(HsDisc *d, const double *xk, const double *xk1, const double *y, const double *u,
                             double *Hkk, double *Hk1k, double *Hk1k1, double *Hxu)
{
  int     n = d->n, m = d->m, i, j, c, r;
  double *qbar = d->wk_v[0], *W = d->wk_m[0], h = d->h;

  if (!d->prob->Bq)
    return HS_SUCCESS;
  Mid(n, xk, xk1, qbar);
  HS_CHK(BqEval(d, qbar, 2));
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      double s = 0;
      for (r = 0; r < n; r++)
        for (c = 0; c < m; c++)
          s += y[n + r] * u[c] * d->bq_d2B[((r * m + c) * n + i) * n + j];
      W[i * n + j] = s;
    }
  AddQQ(n, -0.25 * h, W, Hkk);
  AddQQ(n, -0.25 * h, W, Hk1k);
  AddQQ(n, -0.25 * h, W, Hk1k1);
  for (j = 0; j < n; j++)
    for (c = 0; c < m; c++) {
      double s = 0;
      for (r = 0; r < n; r++)
        s += y[n + r] * d->bq_dB[(r * m + c) * n + j];
      Hxu[j * m + c] = -0.5 * h * s;
    }
  return HS_SUCCESS;
}

/*@ HsDiscGainHamiltonianGradient - adds the derivative of 1/2 lambda_p^T K(qbar) lambda_p in x_k and x_{k+1},
    1/4 gq(qbar; lambda_p, lambda_p) in the q-components, to the gradient of H^d. Not collective. @*/
int HsDiscGainHamiltonianGradient(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *gxk,
                                  double *gxk1)
{
  int     n    = d->n;
  double *qbar = d->wk_v[0], *g = d->wk_v[1];

  if (!d->prob->Bq)
    return HS_SUCCESS;
  Mid(n, xk, xk1, qbar);
  HS_CHK(HsDiscGainForm(d, qbar, lam + n, lam + n, NULL, NULL, g, NULL, NULL, NULL));
  for (int j = 0; j < n; j++)
    gxk[j] += 0.25 * g[j], gxk1[j] += 0.25 * g[j];
  return HS_SUCCESS;
}

/* sign h/4 gq(qbar; l, l) into C's q-components and its derivatives (h/8 Hqq on the two nodes of the
 * interval, h/2 Mb^T on lambda) into the blocks that are not NULL: one interval's part of the kkt and
 * terminal terms. */
static int IntervalTerm(HsDisc *d, double sign, const double *xa, const double *xb, const double *lam, double *C,
                        double *Ja, double *Jb, double *Jl)
{
  int     n    = d->n;
  double *qbar = d->wk_v[0], *g = d->wk_v[1], *Hq = d->wk_m[0], *M = d->wk_m[1], h = d->h;

  Mid(n, xa, xb, qbar);
  HS_CHK(HsDiscGainForm(d, qbar, lam + n, lam + n, NULL, NULL, g, Ja ? Hq : NULL, NULL, Jl ? M : NULL));
  for (int j = 0; C && j < n; j++)
    C[j] += sign * 0.25 * h * g[j];
  if (Ja)
    AddQQ(n, sign * 0.125 * h, Hq, Ja), AddQQ(n, sign * 0.125 * h, Hq, Jb);
  if (Jl)
    AddQPTransposed(n, sign * 0.5 * h, M, Jl);
  return HS_SUCCESS;
}

/*@ HsDiscGainKKT - the B(q) terms of the kkt and trapezoidal costate schemes at node k: adds
    h/4 [gq(qbar+; l+, l+) + gq(qbar-; l-, l-)] to C (if not NULL) and its derivatives to the Jacobian
    blocks (if Jx0 is not NULL). Not collective. @*/
int HsDiscGainKKT(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *lm, const double *lp,
                  double *C, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  if (!d->prob->Bq)
    return HS_SUCCESS;
  HS_CHK(IntervalTerm(d, 1, x0, xp, lp, C, Jx0, Jxp, Jx0 ? Jlp : NULL));
  return IntervalTerm(d, 1, xm, x0, lm, C, Jx0 ? Jxm : NULL, Jx0, Jx0 ? Jlm : NULL);
}

/*@ HsDiscGainTerminal - the B(q) term of the terminal residual: R -= h/4 gq(qbar; l, l) (if R is not NULL)
    and its derivatives in x_{N-1}, x_N, lambda_{N-1/2} (if Rxm is not NULL). Not collective. @*/
int HsDiscGainTerminal(HsDisc *d, const double *xm, const double *xN, const double *lm, double *R, double *Rxm,
                       double *RxN, double *Rlm)
{
  if (!d->prob->Bq)
    return HS_SUCCESS;
  return IntervalTerm(d, -1, xm, xN, lm, R, Rxm, Rxm ? RxN : NULL, Rxm ? Rlm : NULL);
}

/* The derivative of kappa = kappa0 + rho d/D (rho = r - kappa0.d, D = d.d) in one variable y (dim x dim,
 * into Ky): from K0y = d kappa0/dy, ry = dr/dy and s = dd/dy (d depends on x_{k+-1} as +-I/2):
 *   drho/dy = ry - K0y^T d - s kappa0,
 *   dkappa/dy = K0y + d (drho/dy)^T / D + s rho/D I - 2 s rho/D^2 d d^T. */
static void KappaDerivative(int dim, const double *dv, double D, double rho, const double *k0, const double *K0y,
                            const double *ry, double s, double *drho, double *Ky)
{
  HsMatTVec(dim, dim, K0y, dv, drho);
  for (int i = 0; i < dim; i++)
    drho[i] = ry[i] - drho[i] - s * k0[i];
  HsCopy(dim * dim, K0y, Ky);
  HsRank1(dim, 1 / D, dv, drho, Ky);
  if (s != 0) {
    HsAddDiag(dim, s * rho / D, Ky);
    HsRank1(dim, -2 * s * rho / (D * D), dv, dv, Ky);
  }
}

/* The Jacobian part of HsDiscGainKappa: J_y -= h dkappa/dy for the five variables (fallback: kappa = kappa0,
 * whose derivatives are those in x_k and the costates). H0, Ma0, Mb0 at q_k; gp, gm, Kp, Km at qbar+-. */
static void KappaJacobian(HsDisc *d, int fallback, const double *dv, double D, double rho, const double *k0,
                          const double *a, const double *b, double **J)
{
  int          n = d->n, dim = d->dim, dd = dim * dim, i, j, y;
  double      *gp = d->wk_v[4], *gm = d->wk_v[5], *ry = d->wk_v[6], *drho = d->wk_v[7];
  double      *H0 = d->wk_m[0], *Ma0 = d->wk_m[1], *Mb0 = d->wk_m[2], *Kp = d->wk_m[3], *Km = d->wk_m[4];
  double      *K0y = d->wk_m[5], *Ky = d->wk_m[6];
  const double s[5] = {-0.5, 0, 0.5, 0, 0}; /* dd/dy for y = x_{k-1}, x_k, x_{k+1}, lambda-, lambda+ */

  for (y = 0; y < 5; y++) {
    HsZero(dd, K0y);
    HsZero(dim, ry);
    if (y == 1)
      AddQQ(n, -0.5, H0, K0y);
    if (y == 3)
      AddQPTransposed(n, -0.5, Mb0, K0y); /* d gq_j / d a_i = (dK/dq_j b)_i */
    if (y == 4)
      AddQPTransposed(n, -0.5, Ma0, K0y);
    if (fallback) {
      for (i = 0; i < dd; i++)
        J[y][i] -= d->h * K0y[i];
      continue;
    }
    for (j = 0; j < n; j++) /* dr/dq: r = -1/2 [P(qbar+) - P(qbar-)] */
      ry[j] = y == 0 ? 0.25 * gm[j] : y == 1 ? -0.25 * (gp[j] - gm[j]) : y == 2 ? -0.25 * gp[j] : 0;
    for (i = 0; (y == 3 || y == 4) && i < n; i++) /* dr/da = -1/2 (K+ - K-) b, dr/db = -1/2 (K+ - K-) a */
      for (j = 0; j < n; j++)
        ry[n + i] -= 0.5 * (Kp[i * n + j] - Km[i * n + j]) * (y == 3 ? b[j] : a[j]);
    KappaDerivative(dim, dv, D, rho, k0, K0y, ry, s[y], drho, Ky);
    for (i = 0; i < dd; i++)
      J[y][i] -= d->h * Ky[i];
  }
}

/*@ HsDiscGainKappa - the B(q) term of the conserving costate schemes at node k (file head): C -= h kappa
    (if C is not NULL) and the Jacobian blocks -= h dkappa/d(x_{k-1}, x_k, x_{k+1}, lambda-, lambda+) (if
    Jx0 is not NULL). kappa.d = r exactly above the threshold; kappa = kappa0 below it. Not collective. @*/
int HsDiscGainKappa(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *lm, const double *lp,
                    double *C, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  int           n = d->n, dim = d->dim, fallback, i;
  double       *dv = d->wk_v[0], *k0 = d->wk_v[1], *qb = d->wk_v[2], *g0 = d->wk_v[3], *gp = d->wk_v[4];
  double       *gm = d->wk_v[5], D, rho = 0, Pp, Pm, *J[5] = {Jxm, Jx0, Jxp, Jlm, Jlp};
  const double *a = lm + n, *b = lp + n;

  if (!d->prob->Bq)
    return HS_SUCCESS;
  for (i = 0; i < dim; i++)
    dv[i] = 0.5 * (xp[i] - xm[i]);
  D        = HsDot(dim, dv, dv);
  fallback = sqrt(D) <= d->dg_tol * (1 + HsNorm(dim, x0));
  HS_CHK(HsDiscGainForm(d, x0, a, b, NULL, NULL, g0, Jx0 ? d->wk_m[0] : NULL, Jx0 ? d->wk_m[1] : NULL,
                        Jx0 ? d->wk_m[2] : NULL));
  HsZero(dim, k0);
  for (i = 0; i < n; i++)
    k0[i] = -0.5 * g0[i];
  if (!fallback) {
    Mid(n, x0, xp, qb);
    HS_CHK(HsDiscGainForm(d, qb, a, b, Jx0 ? d->wk_m[3] : NULL, &Pp, Jx0 ? gp : NULL, NULL, NULL, NULL));
    Mid(n, xm, x0, qb);
    HS_CHK(HsDiscGainForm(d, qb, a, b, Jx0 ? d->wk_m[4] : NULL, &Pm, Jx0 ? gm : NULL, NULL, NULL, NULL));
    rho = -0.5 * (Pp - Pm) - HsDot(dim, k0, dv);
  }
  for (i = 0; C && i < dim; i++)
    C[i] -= d->h * (k0[i] + (fallback ? 0 : rho / D * dv[i]));
  if (Jx0)
    KappaJacobian(d, fallback, dv, D, rho, k0, a, b, J);
  return HS_SUCCESS;
}
