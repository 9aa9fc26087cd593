/* hamshoot: the direct BEM transcription of a constrained system as a nonlinear program, interval by interval
 * (docs/constrained.md, "The direct counterpart"; the IPOPT formulation, bvp/impls/ipoptcons.c, assembles these
 * pieces). Serial C, no PETSc/MPI. The closed-form class only (constant M, quadratic Phi, linear V, affine B):
 *
 *   variables    x_1..x_N (x_0 given), u_{k+1/2} (m), gamma_{k+1/2} (nc)
 *   objective    J^d = h sum_k 1/2 u_k^T R u_k
 *   constraints  c_k = [q_{k+1} - q_k - h M^{-1} pbar;  p_{k+1} - p_k + h (grad V + G(qbar)^T gamma - B(qbar) u)]
 *                Phi(q_k) = 0 at the inner nodes
 *
 * The same interval equations as HsConsInterval's (constrained.c), with u and gamma as variables instead of
 * u = R^{-1} B(qbar)^T lp. With the Lagrangian sigma J^d + sum_k y_k^T c_k + sum_k w_k^T Phi(q_k) (IPOPT's sign
 * convention) stationarity in u_k gives R u = B(qbar)^T y_p: the multiplier y_k of c_k is the interval costate
 * lambda_{k+1/2} itself, and that of Phi(q_k) is h nu_k (docs/constrained.md's KKT conditions). Second derivatives
 * of the Lagrangian: in the class grad V is constant, Hess Phi_i constant and B affine, so y_p^T G(qbar)^T gamma
 * is bilinear in (qbar, gamma) and y_p^T B(qbar) u bilinear in (qbar, u): their only second derivatives are the
 * mixed ones (HsConsNlpIntervalHessian); w^T Phi(q_k) gives sum_i w_i Hess Phi_i (HsConsNlpNode).
 *
 * The extended class through B(q) alone (prob->cons_ext_bq: constant M, quadratic Phi, linear V, a B(q) that is not
 * affine) has the same equations: its Gonzalez state scheme is the midpoint one there, and Gbar = G(qbar). Only
 * y_p^T B(qbar) u adds second derivatives, -(h/4) sum_ia y_p,i u_a Hess B_ia in each (q, q) pair of the interval's ends
 * (HsConsNlpIntervalHessian's Hqq; docs/direct.md, "The extended class"). */
#include "hsconsimpl.h"

/* Phi, G and Hess Phi at the interval's midpoint of x0, x1 (into cs->qa, qb, Phi, G, H) and, with withB, B, dB there.
 */
static int Midpoint(HsCons *cs, const double *x0, const double *x1, int withB)
{
  HsConsMid(cs, x0, x1);
  if (cs->prob->Phi(cs->qa, cs->Phi, cs->G, cs->H, cs->prob->ctx))
    return HS_EDOM;
  return withB ? HsConsEvalB(cs, cs->qa, 0) : HS_SUCCESS;
}

/*@ HsConsNlpInterval - interval k's 2n constraints of the direct BEM transcription as an NLP (times h, the file
    head), with its control u (m) and constraint force gamma (nc) as variables:

      c = [q1 - q0 - h M^{-1} pbar;  p1 - p0 + h (grad V(qbar) + G(qbar)^T gamma - B(qbar) u)],

  x0 = x_k, x1 = x_{k+1} (2n each), and where Jx0 is given the Jacobian blocks, row-major: Jx0 = dc/dx_k,
  Jx1 = dc/dx_{k+1} (2n x 2n), Jg = dc/dgamma (2n x nc), Ju = dc/du (2n x m). Not collective. Closed-form class
  and the extended one through B(q) alone (HS_EINVAL otherwise). Returns HS_SUCCESS or HS_EDOM.
@*/
int HsConsNlpInterval(HsCons *cs, const double *x0, const double *x1, const double *u, const double *gamma, double *c,
                      double *Jx0, double *Jx1, double *Jg, double *Ju)
{
  int    n = cs->n, nc = cs->c, m = cs->m, d = 2 * n, st;
  double h = cs->h;

  if (!cs->exact && !cs->prob->cons_ext_bq)
    return HS_EINVAL;
  if ((st = Midpoint(cs, x0, x1, 1)) || (st = HsConsEvalGrad(cs, cs->qa, cs->qb)))
    return st;
  for (int i = 0; i < n; i++) {
    double f = x1[n + i] - x0[n + i] + h * cs->g[i];
    for (int j = 0; j < nc; j++)
      f += h * cs->G[j * n + i] * gamma[j];
    for (int a = 0; a < m; a++)
      f -= h * cs->B[i * m + a] * u[a];
    c[i] = x1[i] - x0[i] - h * cs->g[n + i], c[n + i] = f;
  }
  if (!Jx0)
    return HS_SUCCESS;
  memset(Jx0, 0, sizeof(double) * (size_t)(d * d));
  memset(Jx1, 0, sizeof(double) * (size_t)(d * d));
  memset(Jg, 0, sizeof(double) * (size_t)(d * nc));
  memset(Ju, 0, sizeof(double) * (size_t)(d * m));
  for (int i = 0; i < n; i++) {
    double *q0 = Jx0 + i * d, *q1 = Jx1 + i * d, *p0 = Jx0 + (n + i) * d, *p1 = Jx1 + (n + i) * d;
    q0[i] = -1, q1[i] = 1, p0[n + i] = -1, p1[n + i] = 1;
    for (int l = 0; l < n; l++) {
      double v = 0; /* d/dqbar_l of (G^T gamma - B u)_i; weight 1/2 for each end */
      for (int j = 0; j < nc; j++)
        v += gamma[j] * cs->H[(j * n + i) * n + l];
      for (int a = 0; a < m; a++)
        v -= HsConsDB(cs, cs->dB, i, a, l) * u[a];
      q0[n + l] = q1[n + l] = -0.5 * h * cs->Minv[i * n + l];
      p0[l] = p1[l] = 0.5 * h * v;
    }
    for (int j = 0; j < nc; j++)
      Jg[(n + i) * nc + j] = h * cs->G[j * n + i];
    for (int a = 0; a < m; a++)
      Ju[(n + i) * m + a] = -h * cs->B[i * m + a];
  }
  return HS_SUCCESS;
}

/*@ HsConsNlpIntervalHessian - the second derivatives of y^T c (c of HsConsNlpInterval at the control u, y its
    multiplier, 2n): the mixed ones, the same for q_k and q_{k+1} (each enters through qbar with weight 1/2),

      Hgq (nc x n):  d2/(dgamma_j dq_l) = (h/2) (Hess Phi_j y_p)_l,
      Huq (m x n):   d2/(du_a dq_l)     = -(h/2) sum_i y_p,i dB_ia/dq_l   (zero for a constant B),

  and, where Hqq is given (a B(q) that is not affine), Hqq (n x n) = d2/(dq_l dq_r) for each pair of q_k, q_{k+1}:
  -(h/4) sum_ia y_p,i u_a d2B_ia/dq_l dq_r. Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EINVAL (outside the
  class and not through B(q) alone).
@*/
int HsConsNlpIntervalHessian(HsCons *cs, const double *x0, const double *x1, const double *y, const double *u,
                             double *Hgq, double *Huq, double *Hqq)
{
  int           n = cs->n, nc = cs->c, m = cs->m, st;
  const double *yp = y + n;

  if (!cs->exact && !cs->prob->cons_ext_bq)
    return HS_EINVAL;
  if ((st = Midpoint(cs, x0, x1, 1)) || (Hqq && (st = HsConsEvalB(cs, cs->qa, 1))))
    return st;
  HsConsDBt(cs, yp, cs->Ta); /* row l: dB_l^T y_p */
  for (int l = 0; l < n; l++) {
    for (int j = 0; j < nc; j++) {
      double v = 0;
      for (int i = 0; i < n; i++)
        v += cs->H[(j * n + l) * n + i] * yp[i];
      Hgq[j * n + l] = 0.5 * cs->h * v;
    }
    for (int a = 0; a < m; a++)
      Huq[a * n + l] = -0.5 * cs->h * cs->Ta[l * m + a];
  }
  if (Hqq) {
    memset(Hqq, 0, sizeof(double) * (size_t)(n * n));
    for (int i = 0; i < n; i++)
      for (int a = 0; a < m; a++) {
        const double *d2 = cs->d2B + (size_t)(i * m + a) * n * n;
        double        w  = -0.25 * cs->h * yp[i] * u[a];
        for (int l = 0; w != 0 && l < n * n; l++)
          Hqq[l] += w * d2[l];
      }
  }
  return HS_SUCCESS;
}

/*@ HsConsNlpNode - the node constraint Phi(q) (nc values), its Jacobian G(q) (nc x n, row-major) and, where w (nc, its
    multiplier) is given, Hw = sum_i w_i Hess Phi_i(q) (n x n). Any output may be NULL but Phi. Not collective.
    Returns HS_SUCCESS or HS_EDOM.
@*/
int HsConsNlpNode(HsCons *cs, const double *q, const double *w, double *Phi, double *G, double *Hw)
{
  int n = cs->n, nc = cs->c;

  if (cs->prob->Phi(q, Phi, G, w ? cs->H : NULL, cs->prob->ctx))
    return HS_EDOM;
  for (int l = 0; w && l < n * n; l++) {
    double v = 0;
    for (int j = 0; j < nc; j++)
      v += w[j] * cs->H[j * n * n + l];
    Hw[l] = v;
  }
  return HS_SUCCESS;
}

/*@ HsConsNlpForce - gamma (nc) of interval k for given states x0, x1 and control u: the least-squares solution of
    its momentum equation, G(qbar)^T gamma = -((p1 - p0) / h + grad V(qbar) - B(qbar) u). Exact for states and a
    control that satisfy the interval's equations with some gamma (a conserving solution, a feasible point of the
    NLP), the balance of gravity at rest: a start for the NLP. Not collective. HS_SUCCESS, HS_EDOM, HS_ESINGULAR.
@*/
int HsConsNlpForce(HsCons *cs, const double *x0, const double *x1, const double *u, double *gamma)
{
  int     n = cs->n, m = cs->m, st;
  double *r = cs->cB; /* n: room */

  if ((st = Midpoint(cs, x0, x1, 1)) || (st = HsConsEvalGrad(cs, cs->qa, cs->qb)))
    return st;
  for (int i = 0; i < n; i++) {
    double f = (x1[n + i] - x0[n + i]) / cs->h + cs->g[i];
    for (int a = 0; a < m; a++)
      f -= cs->B[i * m + a] * u[a];
    r[i] = -f;
  }
  return HsConsLeastSquaresForce(cs, r, gamma);
}
