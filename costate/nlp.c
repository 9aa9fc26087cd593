/* hamshoot: the direct transcription as a nonlinear program, interval by
 * interval (docs/theory.md section 2; the IPOPT formulation in bvp/impls/ipopt.c
 * assembles these pieces). Serial C, no PETSc/MPI.
 *
 *   variables    x_1..x_N (nodes; x_0 is given), u_{k+1/2} (intervals, m each)
 *   objective    J^d = h sum_k L^d_k + phi(x_N),  L^d_k = 1/2 u^T R u + 1/2 (ell(x_k, t_k) + ell(x_{k+1}, t_{k+1}))
 *   constraints  c_k = x_{k+1} - x_k - h (JJ gbar(x_k, x_{k+1}) + G u_{k+1/2}) = 0   (HsDiscStateResidualU)
 *
 * With the Lagrangian sigma J^d + sum_k y_k^T c_k (IPOPT's sign convention), stationarity in u_k is
 * h R u_k - h G^T y_k = 0, i.e. R u = G^T y (G = G(qbar) for a B(q)): the multiplier y_k of c_k is the interval costate
 * lambda_{k+1/2} itself (no sign change, no factor h). Stationarity in an interior x_k is minus the
 * kkt costate residual of node k (costate.c), and in a free component of x_N the terminal residual
 * HsDiscTerminalResidual: the KKT conditions of this NLP are the `kkt` costate scheme (the
 * `trapezoidal` one for midpoint states). The second derivatives of y^T c_k come from the state
 * scheme's hessdir, which the kkt costate Jacobian also uses: the Hessian is exact.
 */
#include "hsdiscimpl.h"

/* t_k of the uniform grid (t_N = T exactly). */
static double NodeTime(const HsDisc *d, int k) { return HsDiscTime(d, k); }

/*@ HsNlpIntervalGradient - the gradient of h L^d_k with respect to x_k, x_{k+1} (2n each) and u_{k+1/2} (m):
    gk = h/2 grad ell(x_k, t_k), gk1 = h/2 grad ell(x_{k+1}, t_{k+1}), gu = h R u.

  Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED.
@*/
int HsNlpIntervalGradient(HsDisc *d, int k, const double *xk, const double *xk1, const double *u, double *gk,
                          double *gk1, double *gu)
{
  const HsProblem *P = d->prob;
  int              i, dim = d->dim;

  HsMatVec(d->m, d->m, P->R, u, gu);
  for (i = 0; i < d->m; i++)
    gu[i] *= d->h;
  for (i = 0; i < dim; i++)
    gk[i] = gk1[i] = 0;
  if (!P->ell.f)
    return HS_SUCCESS;
  HS_CB(P->ell.grad(NodeTime(d, k), xk, gk, P->ctx));
  HS_CB(P->ell.grad(NodeTime(d, k + 1), xk1, gk1, P->ctx));
  for (i = 0; i < dim; i++)
    gk[i] *= 0.5 * d->h, gk1[i] *= 0.5 * d->h;
  return HS_SUCCESS;
}

/*@ HsNlpIntervalJacobian - the Jacobian of the constraint c_k (HsDiscStateResidualU) at the control u:
    Cxk = dc/dx_k, Cxk1 = dc/dx_{k+1} (2n x 2n, as HsDiscStateJacobian, plus -h/2 (dB/dq_j u) in the
    (p, q) blocks for a B(q)), Cu = dc/du = -h G(qbar) (2n x m; its first n rows are zero).
    Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsNlpIntervalJacobian(HsDisc *d, const double *xk, const double *xk1, const double *u, double *Cxk, double *Cxk1,
                          double *Cu)
{
  int n = d->n, m = d->m;

  HS_CHK(HsDiscStateJacobian(d, xk, xk1, NULL, Cxk, Cxk1, d->wtop_m[2]));
  for (int i = 0; i < 2 * n; i++)
    for (int j = 0; j < m; j++)
      Cu[i * m + j] = i < n ? 0 : -d->h * d->Bbar[(i - n) * m + j];
  return HsDiscGainControlJacobian(d, xk, xk1, u, Cxk, Cxk1);
}

/*@ HsNlpIntervalHessian - the Hessian of sigma h L^d_k + y^T c_k, the part of the NLP's Lagrangian
    that belongs to interval k: Hkk = d2/dx_k^2, Hk1k = d2/(dx_{k+1} dx_k) (rows x_{k+1}, columns x_k),
    Hk1k1 = d2/dx_{k+1}^2 (2n x 2n each), Huu = sigma h R (m x m), Hxu (n x m) = d2/(dq du), the same
    for q_k and q_{k+1}: zero for a constant B, -h/2 (dB/dq_j^T y_p) for a B(q), whose -h y_p^T B(qbar) u
    also adds -h/4 y_p^T d2B u to the (q, q) parts of the x-blocks.

  Not collective. y: the multiplier of c_k (2n). Since y^T c_k contains -h y^T JJ gbar = h (JJ y)^T gbar,
  the x-blocks are sigma h/2 Hess ell plus h times the second derivatives of v^T gbar with v = JJ y.
  Returns HS_SUCCESS, HS_EDOM or HS_EFAILED.
@*/
int HsNlpIntervalHessian(HsDisc *d, int k, const double *xk, const double *xk1, const double *u, double sigma,
                         const double *y, double *Hkk, double *Hk1k, double *Hk1k1, double *Huu, double *Hxu)
{
  const HsProblem *P   = d->prob;
  int              dim = d->dim, dd = dim * dim, i;
  double          *v = d->wtop_v[5], *W = d->wtop_m[3], h = d->h;

  HsApplyJ(dim, y, v);
  HS_CHK(d->ss->hessdir(d, xk, xk1, v, Hkk, d->wtop_m[2], Hk1k1));
  HsTranspose(dim, d->wtop_m[2], Hk1k);
  for (i = 0; i < dd; i++)
    Hkk[i] *= h, Hk1k[i] *= h, Hk1k1[i] *= h;
  for (i = 0; i < d->m * d->m; i++)
    Huu[i] = sigma * h * P->R[i];
  HsZero(d->n * d->m, Hxu);
  HS_CHK(HsDiscGainControlHessian(d, xk, xk1, y, u, Hkk, Hk1k, Hk1k1, Hxu));
  if (!P->ell.f || sigma == 0)
    return HS_SUCCESS;
  HS_CB(P->ell.hess(NodeTime(d, k), xk, W, P->ctx));
  for (i = 0; i < dd; i++)
    Hkk[i] += 0.5 * sigma * h * W[i];
  HS_CB(P->ell.hess(NodeTime(d, k + 1), xk1, W, P->ctx));
  for (i = 0; i < dd; i++)
    Hk1k1[i] += 0.5 * sigma * h * W[i];
  return HS_SUCCESS;
}

/*@ HsNlpTerminal - the terminal cost phi(x_N), its gradient and Hessian (2n, 2n x 2n); zero without a
    terminal cost. Any output may be NULL. Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsNlpTerminal(HsDisc *d, const double *xN, double *phi, double *g, double *Hm)
{
  const HsProblem *P = d->prob;
  int              dim = d->dim, i;

  if (phi)
    *phi = 0;
  if (g)
    for (i = 0; i < dim; i++)
      g[i] = 0;
  if (Hm)
    for (i = 0; i < dim * dim; i++)
      Hm[i] = 0;
  if (!P->phi.f)
    return HS_SUCCESS;
  if (phi)
    HS_CB(P->phi.f(xN, phi, P->ctx));
  if (g)
    HS_CB(P->phi.grad(xN, g, P->ctx));
  if (Hm)
    HS_CB(P->phi.hess(xN, Hm, P->ctx));
  return HS_SUCCESS;
}
