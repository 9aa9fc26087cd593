/* hamshoot: the conserving scheme for constrained systems (hsconstrained.h; docs/constrained.md).
 *
 * The identities it rests on (docs/constrained.md, "Why H^d is exactly constant") need a constant h and M, the
 * same G(qbar) in the momentum and the adjoint constraint, the crossed products 1/2 (gamma_+ lp_- + gamma_- lp_+)
 * and c_B, and nu through the gradient on the chord G((q_{k-1} + q_{k+1}) / 2): each is exact for quadratic Phi and
 * affine B, the class problems/ocp.c admits. grad V is then constant, so the Jacobians carry no Hessian of V. */
#include "hsconsimpl.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>



/** B(q) with dB (and d2B with second) into cs->B, dB, d2B, from prob->Bq or the constant prob->B (hsconsimpl.h). */
int HsConsEvalB(HsCons *cs, const double *q, int second)
{
  const HsProblem *P = cs->prob;
  size_t           nm = (size_t)(cs->n * cs->m);

  if (!P->Bq) {
    memcpy(cs->B, P->B, sizeof(double) * nm);
    return HS_SUCCESS; /* dB, d2B stay 0 */
  }
  return P->Bq(q, cs->B, cs->dB, second ? cs->d2B : NULL, P->ctx) ? HS_EDOM : HS_SUCCESS;
}

/* y = R^{-1} B^T a (m values). */
static void RinvBt(const HsCons *cs, const double *Bm, const double *a, double *y)
{
  int n = cs->n, m = cs->m;
  for (int j = 0; j < m; j++) {
    double s = 0;
    for (int jj = 0; jj < m; jj++) {
      double t = 0;
      for (int i = 0; i < n; i++)
        t += Bm[i * m + jj] * a[i];
      s += cs->Rinv[j * m + jj] * t;
    }
    y[j] = s;
  }
}

/** T (n x m, row l = dB_l^T v): the products of the derivatives of B (at the last HsConsEvalB) with v (n). */
void HsConsDBt(const HsCons *cs, const double *v, double *T)
{
  int n = cs->n, m = cs->m;
  for (int l = 0; l < n; l++)
    for (int j = 0; j < m; j++) {
      double t = 0;
      for (int i = 0; i < n; i++)
        t += HsConsDB(cs, cs->dB, i, j, l) * v[i];
      T[l * m + j] = t;
    }
}

/*@ HsConsCreate - the constrained scheme of prob on N intervals (hsconstrained.h).

  Not collective. Needs prob->nc > 0, a constant mass matrix (M^{-1} is the momentum block of the energy's
  Hessian at x0) and R positive definite. Returns HS_SUCCESS, HS_EINVAL with msg, HS_ENOMEM.
@*/
int HsConsCreate(const HsProblem *prob, int N, HsCons **csp, char *msg, int msglen)
{
  int     n = prob->n, c = prob->nc, m = prob->m, d = 2 * n;
  size_t  sz;
  HsCons *cs;
  double *p, *Hx;

  *csp = NULL;
  if (c <= 0 || !prob->Phi || (!prob->const_mass && !prob->cons_extended) || N < 2) {
    snprintf(msg, (size_t)msglen, "the constrained scheme needs holonomic constraints (and, in closed form, a constant "
             "mass matrix)");
    return HS_EINVAL;
  }
  sz = (size_t)(n * n + m * m + c + c * n + c * n * n + c + c * n + n * m * (1 + n + n * n) + 2 * d + 2 * m +
                2 * n * m + n + 3 * n * n + 2 * n + 2 * n * m + 2 * n * n + n + d * d + 2 * d + d * d + n * m + m);
  if (!(cs = calloc(1, sizeof *cs)) || !(cs->pool = calloc(sz, sizeof(double)))) {
    free(cs);
    return HS_ENOMEM;
  }
  p = cs->pool;
  cs->Minv = p, p += n * n;
  cs->Rinv = p, p += m * m;
  cs->Phi = p, p += c;
  cs->G = p, p += c * n;
  cs->H = p, p += c * n * n;
  cs->Phi0 = p, p += c;
  cs->G0 = p, p += c * n;
  cs->B = p, p += n * m;
  cs->dB = p, p += n * m * n;
  cs->d2B = p, p += n * m * n * n;
  cs->x = p, p += d;
  cs->g = p, p += d;
  cs->ua = p, p += m;
  cs->ub = p, p += m;
  cs->wa = p, p += n * m;
  cs->wb = p, p += n * m;
  cs->cB = p, p += n;
  cs->dcda = p, p += n * n;
  cs->dcdb = p, p += n * n;
  cs->dcdc = p, p += n * n;
  cs->qa = p, p += n;
  cs->qb = p, p += n;
  cs->Ta = p, p += n * m;
  cs->Tb = p, p += n * m;
  cs->tw = p, p += 2 * d + d * d + n * m + m; /* FreeEnd: grad phi, its Hessian, dB_l^T lp rows, u */
  cs->kmu[0] = p, p += n * n;
  cs->kmu[1] = p, p += n * n;
  cs->w1 = p, p += n;
  Hx = p;
  cs->prob = prob, cs->n = n, cs->c = c, cs->m = m, cs->D = 4 * n + 2 * c, cs->r = 2 * n + c, cs->h = prob->T / N;
  cs->exact = prob->cons_extended == NULL;
  if (!cs->exact && HsConsExtSetup(cs)) {
    HsConsDestroy(&cs);
    return HS_ENOMEM;
  }
  if (prob->E.hess(prob->x0, Hx, prob->ctx)) {
    snprintf(msg, (size_t)msglen, "the energy's Hessian is not finite at x0");
    HsConsDestroy(&cs);
    return HS_EINVAL;
  }
  for (int i = 0; i < n; i++)
    for (int l = 0; l < n; l++)
      cs->Minv[i * n + l] = Hx[(n + i) * d + n + l];
  {
    gsl_matrix_view      Rv = gsl_matrix_view_array(cs->Rinv, (size_t)m, (size_t)m);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int                  st;
    memcpy(cs->Rinv, prob->R, sizeof(double) * (size_t)(m * m));
    st = gsl_linalg_cholesky_decomp1(&Rv.matrix) || gsl_linalg_cholesky_invert(&Rv.matrix);
    gsl_set_error_handler(old);
    if (st) {
      snprintf(msg, (size_t)msglen, "R is not positive definite");
      HsConsDestroy(&cs);
      return HS_EINVAL;
    }
  }
  *csp = cs;
  return HS_SUCCESS;
}

/** Frees the scheme; NULL-safe. */
void HsConsDestroy(HsCons **cs)
{
  if (!cs || !*cs)
    return;
  free((*cs)->pool);
  free((*cs)->ext);
  free(*cs);
  *cs = NULL;
}

/** The discretization the extended scheme builds on (hsconstrained.h). */
void HsConsSetDisc(HsCons *cs, HsDisc *disc) { cs->disc = disc; }

/** 1 for the exact class's closed-form scheme, 0 for the extended one. */
int HsConsIsExact(const HsCons *cs) { return cs->exact; }

/** The unknowns of one time point, 4n + 2nc. */
int HsConsBlockSize(const HsCons *cs) { return cs->D; }

/* Phi, G, H at q into cs->Phi, G, H. */
static int EvalPhi(HsCons *cs, const double *q, double *Phi, double *G, double *H)
{
  return cs->prob->Phi(q, Phi, G, H, cs->prob->ctx) ? HS_EDOM : HS_SUCCESS;
}

/** grad E at (q, p) into cs->g: grad V(q), then M^{-1} p (hsconsimpl.h). */
int HsConsEvalGrad(HsCons *cs, const double *q, const double *p)
{
  memcpy(cs->x, q, sizeof(double) * (size_t)cs->n);
  memcpy(cs->x + cs->n, p, sizeof(double) * (size_t)cs->n);
  return cs->prob->E.grad(cs->x, cs->g, cs->prob->ctx) ? HS_EDOM : HS_SUCCESS;
}

/** The midpoint configuration and momentum of an interval (z0, z1: its end points) into cs->qa, qb (hsconsimpl.h). */
void HsConsMid(HsCons *cs, const double *z0, const double *z1)
{
  for (int i = 0; i < cs->n; i++)
    cs->qa[i] = 0.5 * (z0[i] + z1[i]), cs->qb[i] = 0.5 * (z0[cs->n + i] + z1[cs->n + i]);
}

/* The interval's momentum row i, column block Jq (the configuration's columns, weight 1/2 each): the derivative of
 * h (G^T gamma - B R^{-1} B^T lp)_i in qbar; S = B R^{-1} B^T goes to Jlp. ub = R^{-1} B^T lp. */
static void MomentumRow(HsCons *cs, int i, const double *gam, double *Jq, double *Jlp)
{
  int n = cs->n, m = cs->m, c = cs->c;
  for (int l = 0; l < n; l++) {
    double v = 0;
    for (int j = 0; j < c; j++)
      v += gam[j] * cs->H[(j * n + i) * n + l];
    for (int j = 0; j < m; j++) /* d_l (B u)_i = dB_l u + B R^{-1} dB_l^T lp */
      v -= HsConsDB(cs, cs->dB, i, j, l) * cs->ub[j] + cs->B[i * m + j] * cs->wb[l * m + j];
    Jq[l] = 0.5 * cs->h * v;
  }
  for (int l = 0; l < n; l++)
    Jlp[l] = 0;
  for (int j = 0; j < m; j++) { /* S_il = sum_j B_ij (R^{-1} B^T)_jl */
    double Bij = cs->B[i * m + j];
    if (Bij == 0)
      continue;
    for (int l = 0; l < n; l++) {
      double t = 0;
      for (int jj = 0; jj < m; jj++)
        t += cs->Rinv[j * m + jj] * cs->B[l * m + jj];
      Jlp[l] -= cs->h * Bij * t;
    }
  }
}

/*@ HsConsInterval - interval k's 2n + nc equations (times h) and, where J0, J1 are given, their Jacobian blocks in
    z_k and z_{k+1}:

      q_{k+1} - q_k - h M^{-1} pbar,  p_{k+1} - p_k + h (grad V + G(qbar)^T gamma - B(qbar) u),  G(qbar) lp,
      u = R^{-1} B(qbar)^T lp.

  Not collective. Returns HS_SUCCESS or HS_EDOM (a value not finite).
@*/
int HsConsInterval(HsCons *cs, const double *z0, const double *z1, double *F, double *J0, double *J1)
{
  int           n = cs->n, c = cs->c, m = cs->m, D = cs->D, st;
  double        h = cs->h;
  const double *lp = z0 + 3 * n + c, *gam = z0 + 4 * n + c;

  if (!cs->exact)
    return HsConsExtInterval(cs, z0, z1, F, J0, J1);
  HsConsMid(cs, z0, z1);
  if ((st = EvalPhi(cs, cs->qa, cs->Phi, cs->G, cs->H)) || (st = HsConsEvalGrad(cs, cs->qa, cs->qb)) ||
      (st = HsConsEvalB(cs, cs->qa, 0)))
    return st;
  RinvBt(cs, cs->B, lp, cs->ub);
  for (int i = 0; i < n; i++) {
    double f = z1[n + i] - z0[n + i] + h * cs->g[i];
    for (int j = 0; j < c; j++)
      f += h * cs->G[j * n + i] * gam[j];
    for (int j = 0; j < m; j++)
      f -= h * cs->B[i * m + j] * cs->ub[j];
    F[i]     = z1[i] - z0[i] - h * cs->g[n + i];
    F[n + i] = f;
  }
  for (int j = 0; j < c; j++) {
    double a = 0;
    for (int l = 0; l < n; l++)
      a += cs->G[j * n + l] * lp[l];
    F[2 * n + j] = a;
  }
  if (!J0 && !J1)
    return HS_SUCCESS;
  HsConsDBt(cs, lp, cs->Tb);
  for (int l = 0; l < n; l++) /* wb_l = R^{-1} dB_l^T lp */
    for (int j = 0; j < m; j++) {
      double t = 0;
      for (int jj = 0; jj < m; jj++)
        t += cs->Rinv[j * m + jj] * cs->Tb[l * m + jj];
      cs->wb[l * m + j] = t;
    }
  memset(J0, 0, sizeof(double) * (size_t)(cs->r * D));
  memset(J1, 0, sizeof(double) * (size_t)(cs->r * D));
  for (int i = 0; i < n; i++) {
    double *r0 = J0 + i * D, *r1 = J1 + i * D, *s0 = J0 + (n + i) * D, *s1 = J1 + (n + i) * D;
    r0[i] = -1, r1[i] = 1;
    for (int l = 0; l < n; l++)
      r0[n + l] = r1[n + l] = -0.5 * h * cs->Minv[i * n + l];
    s0[n + i] = -1, s1[n + i] = 1;
    MomentumRow(cs, i, gam, s0, s0 + 3 * n + c);
    for (int l = 0; l < n; l++)
      s1[l] = s0[l];
    for (int j = 0; j < c; j++)
      s0[4 * n + c + j] = h * cs->G[j * n + i];
  }
  for (int j = 0; j < c; j++) {
    double *a0 = J0 + (2 * n + j) * D, *a1 = J1 + (2 * n + j) * D;
    for (int l = 0; l < n; l++) {
      double t = 0;
      for (int r = 0; r < n; r++)
        t += cs->H[(j * n + l) * n + r] * lp[r];
      a0[l] = a1[l] = 0.5 * t;
      a0[3 * n + c + l] = cs->G[j * n + l];
    }
  }
  return HS_SUCCESS;
}

/* The control-curvature term of node k (docs/constrained.md): with a = lp_-, b = lp_+ and B, dB, d2B at
 * c_k = (q_{k-1} + 2 q_k + q_{k+1}) / 4,
 *   c_B,l = 1/2 [(dB_l^T a) . R^{-1} B^T b + (B^T a) . R^{-1} dB_l^T b],
 * into cs->cB, and with jac its derivatives in a, b and c_k (dcda, dcdb, dcdc, row l = c_B,l). */
static void ControlCurvature(HsCons *cs, const double *a, const double *b, int jac)
{
  int n = cs->n, m = cs->m;

  RinvBt(cs, cs->B, a, cs->ua);
  RinvBt(cs, cs->B, b, cs->ub);
  HsConsDBt(cs, a, cs->Ta);
  HsConsDBt(cs, b, cs->Tb);
  for (int l = 0; l < n; l++) { /* wa_l = R^{-1} Ta_l, wb_l = R^{-1} Tb_l */
    double v = 0;
    for (int j = 0; j < m; j++) {
      double sa = 0, sb = 0;
      for (int jj = 0; jj < m; jj++)
        sa += cs->Rinv[j * m + jj] * cs->Ta[l * m + jj], sb += cs->Rinv[j * m + jj] * cs->Tb[l * m + jj];
      cs->wa[l * m + j] = sa, cs->wb[l * m + j] = sb;
      v += cs->Ta[l * m + j] * cs->ub[j] + cs->Tb[l * m + j] * cs->ua[j];
    }
    cs->cB[l] = 0.5 * v;
  }
  if (!jac)
    return;
  for (int l = 0; l < n; l++)
    for (int i = 0; i < n; i++) {
      double da = 0, db = 0, dc = 0;
      for (int j = 0; j < m; j++) {
        da += HsConsDB(cs, cs->dB, i, j, l) * cs->ub[j] + cs->B[i * m + j] * cs->wb[l * m + j];
        db += cs->B[i * m + j] * cs->wa[l * m + j] + HsConsDB(cs, cs->dB, i, j, l) * cs->ua[j];
        dc += cs->Ta[l * m + j] * cs->wb[i * m + j] + cs->Ta[i * m + j] * cs->wb[l * m + j];
      }
      for (int ii = 0; ii < n; ii++) /* d2B_{l i}: (ii, j) entries */
        for (int j = 0; j < m; j++) {
          double d2 = cs->d2B[((ii * m + j) * n + l) * n + i];
          dc += d2 * (a[ii] * cs->ub[j] + b[ii] * cs->ua[j]);
        }
      cs->dcda[l * n + i] = 0.5 * da, cs->dcdb[l * n + i] = 0.5 * db, cs->dcdc[l * n + i] = 0.5 * dc;
    }
}

/* Node k's equations of both forms (docs/constrained.md): lq_+ - lq_- - (h/2) sum_j H_j (products of gamma and lp,
 * crossed or plain) + ctrl - h Gnu^T nu, lp_+ - lp_- + (h/2) M^{-1} (lq_+ + lq_-), Phi(q_k) (cs->Phi0); ctrl the
 * control term already times h. */
static void NodeResidualBase(HsCons *cs, const double *zm, const double *z0, int crossed, const double *Gnu,
                             const double *ctrl, double *C)
{
  int           n = cs->n, c = cs->c;
  double        h = cs->h;
  const double *lqm = zm + 2 * n + c, *a = zm + 3 * n + c, *gm = zm + 4 * n + c;
  const double *lqp = z0 + 2 * n + c, *b = z0 + 3 * n + c, *gp = z0 + 4 * n + c, *nu = z0 + 2 * n;
  const double *ga = crossed ? gp : gm, *gb = crossed ? gm : gp; /* the gamma multiplying a, b */

  for (int i = 0; i < n; i++) {
    double f = lqp[i] - lqm[i] + ctrl[i], mv = 0;
    for (int j = 0; j < c; j++) {
      double Ha = 0, Hb = 0;
      for (int l = 0; l < n; l++)
        Ha += cs->H[(j * n + i) * n + l] * a[l], Hb += cs->H[(j * n + i) * n + l] * b[l];
      f -= 0.5 * h * (ga[j] * Ha + gb[j] * Hb) + h * Gnu[j * n + i] * nu[j];
    }
    for (int l = 0; l < n; l++)
      mv += cs->Minv[i * n + l] * (lqp[l] + lqm[l]);
    C[i] = f, C[n + i] = b[i] - a[i] + 0.5 * h * mv;
  }
  for (int j = 0; j < c; j++)
    C[2 * n + j] = cs->Phi0[j];
}

/* What the node equations' blocks of both forms share (memset first): the costate differences, the products with
 * the constraints' Hessians H_j in lp and gamma (crossed: gamma_+ pairs with a = lp_-, else with b = lp_+), nu's
 * column through Gnu (crossed: the chord's G, else G(q_k)) and its derivative in the configurations, the lp equation,
 * Phi(q_k)'s row. */
static void NodeJacobianBase(HsCons *cs, const double *a, const double *b, const double *gm, const double *gp,
                             const double *nu, int crossed, const double *Gnu, double *Jm, double *J0, double *Jp)
{
  int           n = cs->n, c = cs->c, D = cs->D;
  double        h = cs->h;
  const double *ga = crossed ? gp : gm, *gb = crossed ? gm : gp; /* the gamma multiplying a, b */

  memset(Jm, 0, sizeof(double) * (size_t)(cs->r * D));
  memset(J0, 0, sizeof(double) * (size_t)(cs->r * D));
  memset(Jp, 0, sizeof(double) * (size_t)(cs->r * D));
  for (int i = 0; i < n; i++) {
    double *rm = Jm + i * D, *r0 = J0 + i * D;
    rm[2 * n + c + i] = -1, r0[2 * n + c + i] = 1;
    for (int l = 0; l < n; l++) {
      double sa = 0, sb = 0, sn = 0;
      for (int j = 0; j < c; j++) {
        double Hil = cs->H[(j * n + i) * n + l];
        sa += ga[j] * Hil, sb += gb[j] * Hil, sn += nu[j] * Hil;
      }
      rm[3 * n + c + l] = -0.5 * h * sa, r0[3 * n + c + l] = -0.5 * h * sb;
      if (crossed) /* nu through the chord's G: it moves with q_{k-1}, q_{k+1} */
        rm[l] = Jp[i * D + l] = -0.5 * h * sn;
      else /* through G(q_k) */
        r0[l] = -h * sn;
    }
    for (int j = 0; j < c; j++) {
      double Ha = 0, Hb = 0;
      for (int l = 0; l < n; l++)
        Ha += cs->H[(j * n + i) * n + l] * a[l], Hb += cs->H[(j * n + i) * n + l] * b[l];
      (crossed ? r0 : rm)[4 * n + c + j] = -0.5 * h * Ha; /* d/d gamma of the gamma paired with a */
      (crossed ? rm : r0)[4 * n + c + j] = -0.5 * h * Hb;
      r0[2 * n + j]                        = -h * Gnu[j * n + i];
    }
    rm = Jm + (n + i) * D, r0 = J0 + (n + i) * D;
    r0[3 * n + c + i] = 1, rm[3 * n + c + i] = -1;
    for (int l = 0; l < n; l++)
      r0[2 * n + c + l] = rm[2 * n + c + l] = 0.5 * h * cs->Minv[i * n + l];
  }
  for (int j = 0; j < c; j++)
    for (int l = 0; l < n; l++)
      J0[(2 * n + j) * D + l] = cs->G0[j * n + l];
}

/* Node k's Jacobian blocks (HsConsNode's, after its evaluations): the shared part, then c_B's derivatives and nu's
 * through the chord (its G moves with q_{k-1}, q_{k+1}). */
static void NodeJacobian(HsCons *cs, const double *a, const double *b, const double *gm, const double *gp,
                         const double *nu, double *Jm, double *J0, double *Jp)
{
  int    n = cs->n, c = cs->c, D = cs->D;
  double h = cs->h;

  NodeJacobianBase(cs, a, b, gm, gp, nu, 1, cs->G, Jm, J0, Jp);
  for (int i = 0; i < n; i++) {
    double *rm = Jm + i * D, *r0 = J0 + i * D, *rp = Jp + i * D;
    for (int l = 0; l < n; l++) {
      rm[3 * n + c + l] += h * cs->dcda[i * n + l];
      r0[3 * n + c + l] += h * cs->dcdb[i * n + l];
      rm[l] += 0.25 * h * cs->dcdc[i * n + l], rp[l] += 0.25 * h * cs->dcdc[i * n + l];
      r0[l] += 0.5 * h * cs->dcdc[i * n + l];
    }
  }
}

/* The KKT form's control term of one interval (qbar, its lp = mu): d_l = (dB_l^T mu) . R^{-1} B^T mu, i.e.
 * d_l (1/2 mu^T S mu) with S = B R^{-1} B^T, into d (n), with jac its derivatives in mu (ddmu, row l) and in qbar
 * (ddq, row l). B, dB, d2B at qbar are evaluated here. */
static int IntervalCurvature(HsCons *cs, const double *qbar, const double *mu, double *d, double *ddmu, double *ddq)
{
  int n = cs->n, m = cs->m, st;

  if ((st = HsConsEvalB(cs, qbar, ddq != NULL)))
    return st;
  RinvBt(cs, cs->B, mu, cs->ua);
  HsConsDBt(cs, mu, cs->Ta);
  for (int l = 0; l < n; l++) {
    double v = 0;
    for (int j = 0; j < m; j++) {
      double w = 0;
      for (int jj = 0; jj < m; jj++)
        w += cs->Rinv[j * m + jj] * cs->Ta[l * m + jj];
      cs->wa[l * m + j] = w;
      v += cs->Ta[l * m + j] * cs->ua[j];
    }
    d[l] = v;
  }
  if (!ddq)
    return HS_SUCCESS;
  for (int l = 0; l < n; l++)
    for (int i = 0; i < n; i++) {
      double dm = 0, dq = 0;
      for (int j = 0; j < m; j++) {
        dm += HsConsDB(cs, cs->dB, i, j, l) * cs->ua[j] + cs->B[i * m + j] * cs->wa[l * m + j];
        dq += cs->Ta[l * m + j] * cs->wa[i * m + j];
        for (int ii = 0; ii < n; ii++)
          dq += cs->d2B[((ii * m + j) * n + l) * n + i] * mu[ii] * cs->ua[j];
      }
      ddmu[l * n + i] = dm, ddq[l * n + i] = dq;
    }
  return HS_SUCCESS;
}

/* Node k's equations in the KKT form of the direct BEM transcription (HsConsSetKKT): the costate equation with the
 * plain products 1/2 (gamma_-,i lp_- + gamma_+,i lp_+), the control term of each interval at its own midpoint, and
 * G(q_k)^T nu; the rest as HsConsNode. */
static int NodeKKT(HsCons *cs, const double *zm, const double *z0, const double *zp, double *C, double *Jm,
                   double *J0, double *Jp)
{
  int           n = cs->n, c = cs->c, D = cs->D, st;
  double        h = cs->h, *dm = cs->cB, *dp = cs->qb, *Jq[2] = {cs->dcda, cs->dcdb}, **Jmu = cs->kmu;
  const double *a = zm + 3 * n + c, *gm = zm + 4 * n + c;
  const double *b = z0 + 3 * n + c, *gp = z0 + 4 * n + c, *nu = z0 + 2 * n;

  for (int s = 0; s < 2; s++) { /* s = 0: interval k - 1/2 (mu = a), 1: k + 1/2 (mu = b) */
    for (int i = 0; i < n; i++)
      cs->qa[i] = 0.5 * ((s ? zp : zm)[i] + z0[i]);
    if ((st = IntervalCurvature(cs, cs->qa, s ? b : a, s ? dp : dm, Jm ? Jmu[s] : NULL, Jm ? Jq[s] : NULL)))
      return st;
  }
  if ((st = EvalPhi(cs, z0, cs->Phi0, cs->G0, cs->H)))
    return st;
  for (int i = 0; i < n; i++)
    cs->w1[i] = 0.5 * h * (dm[i] + dp[i]);
  NodeResidualBase(cs, zm, z0, 0, cs->G0, cs->w1, C);
  if (!Jm)
    return HS_SUCCESS;
  NodeJacobianBase(cs, a, b, gm, gp, nu, 0, cs->G0, Jm, J0, Jp);
  for (int i = 0; i < n; i++) {
    double *rm = Jm + i * D, *r0 = J0 + i * D, *rp = Jp + i * D;
    for (int l = 0; l < n; l++) {
      rm[3 * n + c + l] += 0.5 * h * Jmu[0][i * n + l];
      r0[3 * n + c + l] += 0.5 * h * Jmu[1][i * n + l];
      rm[l] += 0.25 * h * Jq[0][i * n + l];
      rp[l] += 0.25 * h * Jq[1][i * n + l];
      r0[l] += 0.25 * h * (Jq[0][i * n + l] + Jq[1][i * n + l]);
    }
  }
  return HS_SUCCESS;
}

/** Selects the KKT conditions of the direct BEM transcription (kkt = 1: plain products, each interval's own control
 *  term, G(q_k)^T nu; H^d then drifts at O(h^2)) or the conserving scheme (kkt = 0, the default). */
void HsConsSetKKT(HsCons *cs, int kkt) { cs->kkt = kkt; }

/*@ HsConsNode - node k's 2n + nc equations (times h) and, where Jm is given, their blocks in z_{k-1}, z_k, z_{k+1}:

      lq_+ - lq_- - (h/2) sum_i Hess Phi_i (gamma_+,i lp_- + gamma_-,i lp_+) + h c_B - h G(chord)^T nu_k,
      lp_+ - lp_- + (h/2) M^{-1} (lq_+ + lq_-),   Phi(q_k),

  with chord = (q_{k-1} + q_{k+1}) / 2 and c_B of ControlCurvature. Not collective. HS_SUCCESS or HS_EDOM.
@*/
int HsConsNode(HsCons *cs, int k, const double *zm, const double *z0, const double *zp, double *C, double *Jm,
               double *J0, double *Jp)
{
  int           n = cs->n, c = cs->c, st;
  double        h = cs->h;
  const double *a = zm + 3 * n + c, *gm = zm + 4 * n + c;
  const double *b = z0 + 3 * n + c, *gp = z0 + 4 * n + c, *nu = z0 + 2 * n;

  if (!cs->exact)
    return HsConsExtNode(cs, k, zm, z0, zp, C, Jm, J0, Jp);
  if (cs->kkt)
    return NodeKKT(cs, zm, z0, zp, C, Jm, J0, Jp);
  for (int i = 0; i < n; i++)
    cs->qa[i] = 0.5 * (zm[i] + zp[i]), cs->qb[i] = 0.25 * (zm[i] + 2 * z0[i] + zp[i]);
  if ((st = EvalPhi(cs, cs->qa, cs->Phi, cs->G, cs->H)) || (st = EvalPhi(cs, z0, cs->Phi0, cs->G0, NULL)) ||
      (st = HsConsEvalB(cs, cs->qb, Jm != NULL)))
    return st;
  ControlCurvature(cs, a, b, Jm != NULL);
  for (int i = 0; i < n; i++)
    cs->w1[i] = h * cs->cB[i];
  NodeResidualBase(cs, zm, z0, 1, cs->G, cs->w1, C);
  if (Jm)
    NodeJacobian(cs, a, b, gm, gp, nu, Jm, J0, Jp);
  return HS_SUCCESS;
}

/* FreeEnd's blocks (after its evaluations: G and H at qbar, G0 at q_N, B at qbar, the scratch cs->tw). */
static void FreeEndJacobian(HsCons *cs, const double *zm, const double *zN, int qfree, double *Jm, double *JN)
{
  const HsProblem *P = cs->prob;
  int              n = cs->n, c = cs->c, m = cs->m, D = cs->D, d = 2 * n;
  const double    *lp = zm + 3 * n + c, *gam = zm + 4 * n + c, *a = zN + 2 * n;
  double           h = cs->h, *Hp = cs->tw + d, *T = Hp + d * d, *u = T + n * m;

  memset(Jm, 0, sizeof(double) * (size_t)(cs->r * D));
  memset(JN, 0, sizeof(double) * (size_t)(cs->r * D));
  for (int i = 0; i < n; i++) {
    double *jm = Jm + i * D, *jn = JN + i * D, *pm = Jm + (n + i) * D, *pn = JN + (n + i) * D;
    pm[3 * n + c + i] = 1;
    for (int l = 0; l < n; l++)
      pm[2 * n + c + l] = -0.5 * h * cs->Minv[i * n + l];
    for (int col = 0; col < d; col++)
      pn[col] = Hp[(n + i) * d + col];
    if (P->xT_fixed[i]) {
      jn[i] = 1;
      continue;
    }
    jm[2 * n + c + i] = 1;
    for (int col = 0; col < d; col++)
      jn[col] = Hp[i * d + col];
    for (int j = 0; j < c; j++) {
      double hl = 0;
      for (int l = 0; l < n; l++)
        hl += cs->H[(j * n + i) * n + l] * lp[l], jn[l] += h * a[j] * cs->H[(j * n + i) * n + l];
      jm[4 * n + c + j] = 0.5 * h * hl, jn[2 * n + j] = h * cs->G0[j * n + i];
    }
    for (int l = 0; l < n; l++) { /* lp, and qbar (half to each end) */
      double v = 0, w = 0;
      for (int j = 0; j < c; j++)
        v += 0.5 * h * gam[j] * cs->H[(j * n + i) * n + l];
      for (int j = 0; j < m; j++) {
        double du = 0, tq = 0;
        for (int k = 0; k < m; k++)
          du += cs->Rinv[j * m + k] * cs->B[l * m + k], tq += cs->Rinv[j * m + k] * T[l * m + k];
        v -= 0.5 * h * (HsConsDB(cs, cs->dB, l, j, i) * u[j] + T[i * m + j] * du);
        w -= 0.5 * h * T[i * m + j] * tq;
      }
      jm[3 * n + c + l] = v, jm[l] += 0.5 * w, jn[l] += 0.5 * w;
    }
  }
  for (int j = 0; j < c; j++)
    for (int l = 0; l < n; l++)
      JN[(2 * n + j) * D + l] = qfree ? cs->G0[j * n + l] : 0;
  for (int j = 0; j < c && !qfree; j++)
    JN[(2 * n + j) * D + 2 * n + j] = 1;
}

/* The end rows of free terminal momenta (the closed form; docs/constrained.md "Free end states and terminal costs"):
 * the stationarity of the direct BEM transcription's Lagrangian in x_N, with lambda = (lq, lp), gamma of interval
 * N - 1/2 (zm), a = z_N's nu slot (nu_N with free coordinates; a dummy 0 with fixed ones), qbar the midpoint,
 * u = R^{-1} B(qbar)^T lp:
 *   q rows: q_N,i - q_T,i (fixed) or lq_i + d_i phi + (h/2)[sum_j gamma_j (Hess Phi_j lp)_i - lp^T dB_i u]
 *           + h (G(q_N)^T a)_i (free);
 *   p rows: lp - (h/2) M^{-1} lq + grad_p phi;   nc rows: Phi(q_N) (free coordinates) or a (all fixed). */
static int FreeEnd(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm, double *JN)
{
  const HsProblem *P = cs->prob;
  int              n = cs->n, c = cs->c, m = cs->m, d = 2 * n, qfree = 0, st;
  const double    *lq = zm + 2 * n + c, *lp = zm + 3 * n + c, *gam = zm + 4 * n + c, *a = zN + 2 * n;
  double           h = cs->h, *gp = cs->tw, *Hp = gp + d, *T = Hp + d * d, *u = T + n * m;

  for (int i = 0; i < n; i++)
    qfree |= !P->xT_fixed[i];
  memset(gp, 0, sizeof(double) * (size_t)(d + d * d));
  if (P->phi.f && (P->phi.grad(zN, gp, P->ctx) || (Jm && P->phi.hess(zN, Hp, P->ctx))))
    return HS_EDOM;
  for (int i = 0; i < n; i++)
    cs->qa[i] = 0.5 * (zm[i] + zN[i]);
  if ((st = EvalPhi(cs, cs->qa, cs->Phi, cs->G, cs->H)) || (st = EvalPhi(cs, zN, cs->Phi0, cs->G0, NULL)) ||
      (st = HsConsEvalB(cs, cs->qa, 0)))
    return st;
  RinvBt(cs, cs->B, lp, u);
  HsConsDBt(cs, lp, T); /* row l: dB_l^T lp */
  for (int i = 0; i < n; i++) {
    double fq = lq[i] + gp[i], fp = lp[i] + gp[n + i];
    for (int j = 0; j < c; j++) {
      double hl = 0;
      for (int l = 0; l < n; l++)
        hl += cs->H[(j * n + i) * n + l] * lp[l];
      fq += 0.5 * h * gam[j] * hl + h * cs->G0[j * n + i] * a[j];
    }
    for (int j = 0; j < m; j++)
      fq -= 0.5 * h * T[i * m + j] * u[j];
    for (int l = 0; l < n; l++)
      fp -= 0.5 * h * cs->Minv[i * n + l] * lq[l];
    F[i] = P->xT_fixed[i] ? zN[i] - P->xT[i] : fq, F[n + i] = fp;
  }
  for (int j = 0; j < c; j++)
    F[2 * n + j] = qfree ? cs->Phi0[j] : a[j];
  if (Jm)
    FreeEndJacobian(cs, zm, zN, qfree, Jm, JN);
  return HS_SUCCESS;
}

/*@ HsConsTerminal - the end condition at point N (times 1). All terminal components fixed (the natural end
    condition): q_N - q_T, p_N - p_T - G(q_T)^T alpha (alpha in z_N's nu slot), G(q_T) (lp - (h/2) M^{-1} lq +
    grad_p phi) of interval N - 1/2; free momenta (and possibly coordinates): FreeEnd's rows. Blocks in z_{N-1} (Jm)
    and z_N (JN).

  Not collective. HS_SUCCESS or HS_EDOM.
@*/
int HsConsTerminal(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm, double *JN)
{
  const HsProblem *P = cs->prob;
  int              n = cs->n, c = cs->c, D = cs->D, st;
  const double    *lq = zm + 2 * n + c, *lp = zm + 3 * n + c, *al = zN + 2 * n;
  double          *gp = cs->tw, *Hp = gp + 2 * n;

  if (!cs->exact)
    return HsConsExtTerminal(cs, zm, zN, F, Jm, JN);
  if (!P->xT_fixed[n]) /* free momenta (ocp.c: all of them, and fixed momenta fix every coordinate) */
    return FreeEnd(cs, zm, zN, F, Jm, JN);
  memset(gp, 0, sizeof(double) * (size_t)(2 * n + 4 * n * n));
  if ((st = EvalPhi(cs, P->xT, cs->Phi0, cs->G0, NULL)) ||
      (P->phi.f && (P->phi.grad(zN, gp, P->ctx) || (Jm && P->phi.hess(zN, Hp, P->ctx)))))
    return st ? st : HS_EDOM;
  for (int i = 0; i < n; i++) {
    double f = zN[n + i] - P->xT[n + i];
    for (int j = 0; j < c; j++)
      f -= cs->G0[j * n + i] * al[j];
    F[i] = zN[i] - P->xT[i], F[n + i] = f;
  }
  for (int j = 0; j < c; j++) {
    double f = 0;
    for (int l = 0; l < n; l++) {
      double ml = 0;
      for (int r = 0; r < n; r++)
        ml += cs->Minv[l * n + r] * lq[r];
      f += cs->G0[j * n + l] * (lp[l] - 0.5 * cs->h * ml + gp[n + l]);
    }
    F[2 * n + j] = f;
  }
  if (!Jm)
    return HS_SUCCESS;
  memset(Jm, 0, sizeof(double) * (size_t)(cs->r * D));
  memset(JN, 0, sizeof(double) * (size_t)(cs->r * D));
  for (int i = 0; i < n; i++) {
    JN[i * D + i] = 1, JN[(n + i) * D + n + i] = 1;
    for (int j = 0; j < c; j++)
      JN[(n + i) * D + 2 * n + j] = -cs->G0[j * n + i];
  }
  for (int j = 0; j < c; j++)
    for (int l = 0; l < n; l++) {
      double gm = 0;
      for (int r = 0; r < n; r++)
        gm += cs->G0[j * n + r] * cs->Minv[r * n + l];
      Jm[(2 * n + j) * D + 3 * n + c + l] = cs->G0[j * n + l];
      Jm[(2 * n + j) * D + 2 * n + c + l] = -0.5 * cs->h * gm;
      for (int col = 0; col < 2 * n; col++) /* grad_p phi(x_N) */
        JN[(2 * n + j) * D + col] += cs->G0[j * n + l] * Hp[(n + l) * 2 * n + col];
    }
  return HS_SUCCESS;
}

/* Rows equal to unknowns from0 .. from0 + r - 1 of z minus ref (NULL: 0), J the identity there. */
static void Identity(HsCons *cs, const double *z, int from0, const double *ref, int nref, double *F, double *J)
{
  for (int i = 0; i < cs->r; i++)
    F[i] = z[from0 + i] - (ref && i < nref ? ref[i] : 0);
  if (!J)
    return;
  memset(J, 0, sizeof(double) * (size_t)(cs->r * cs->D));
  for (int i = 0; i < cs->r; i++)
    J[i * cs->D + from0 + i] = 1;
}

/** Point 0's second group: q_0 - q0, p_0 - p0, nu_0 (a dummy); J (may be NULL) its block in z_0. */
int HsConsInitial(HsCons *cs, const double *z0, double *F, double *J)
{
  Identity(cs, z0, 0, cs->prob->x0, 2 * cs->n, F, J);
  return HS_SUCCESS;
}

/** Point N's second group: its interval slots (lq, lp, gamma: dummies) = 0; J (may be NULL) its block in z_N. */
int HsConsEnd(HsCons *cs, const double *zN, double *F, double *J)
{
  Identity(cs, zN, cs->r, NULL, 0, F, J);
  return HS_SUCCESS;
}

/** Interval diagnostics (hsconstrained.h). */
int HsConsIntervalResiduals(HsCons *cs, const double *z0, const double *z1, double r[2])
{
  int           n = cs->n, c = cs->c, st;
  const double *lp = z0 + 3 * n + c;

  HsConsMid(cs, z0, z1);
  if ((st = cs->exact ? EvalPhi(cs, cs->qa, cs->Phi, cs->G, NULL) : HsConsExtGbar(cs, z0, z1, cs->G)))
    return st;
  r[0] = r[1] = 0;
  for (int j = 0; j < c; j++) { /* Gbar (q_{k+1} - q_k) / h: Gbar M^{-1} pbar to the residual in the exact class */
    double v = 0, a = 0;
    for (int l = 0; l < n; l++)
      v += cs->G[j * n + l] * (z1[l] - z0[l]) / cs->h, a += cs->G[j * n + l] * lp[l];
    r[0] = fmax(r[0], fabs(v)), r[1] = fmax(r[1], fabs(a));
  }
  return HS_SUCCESS;
}

/** Phi and G at q (hsconstrained.h). */
int HsConsPhi(HsCons *cs, const double *q, double *Phi, double *G) { return EvalPhi(cs, q, Phi, G, NULL); }

/** Node diagnostics (hsconstrained.h). */
int HsConsNodeResiduals(HsCons *cs, const double *z, double r[3])
{
  int n = cs->n, c = cs->c, st;

  if ((st = EvalPhi(cs, z, cs->Phi0, cs->G0, NULL)) || (st = HsConsEvalGrad(cs, z, z + n)))
    return st;
  r[0] = r[1] = r[2] = 0;
  for (int j = 0; j < c; j++) {
    double v = 0, gg = 0;
    for (int l = 0; l < n; l++)
      v += cs->G0[j * n + l] * cs->g[n + l], gg += cs->G0[j * n + l] * cs->G0[j * n + l];
    r[0] = fmax(r[0], fabs(cs->Phi0[j])), r[1] = fmax(r[1], fabs(v));
    r[2] = fmax(r[2], gg > 0 ? fabs(cs->Phi0[j]) / sqrt(gg) : fabs(cs->Phi0[j]) > 0 ? INFINITY : 0);
  }
  return HS_SUCCESS;
}

/** The control of interval k, R^{-1} B(qbar)^T lp. */
int HsConsControl(HsCons *cs, const double *z0, const double *z1, double *u)
{
  int st;
  HsConsMid(cs, z0, z1);
  if ((st = HsConsEvalB(cs, cs->qa, 0)))
    return st;
  RinvBt(cs, cs->B, z0 + 3 * cs->n + cs->c, u);
  return HS_SUCCESS;
}

/** gamma (nc) with G^T gamma nearest r (n) in the least-squares sense, G = cs->G: (G G^T) gamma = G r by Cholesky
 *  (HsConsRestForce, HsConsNlpForce). HS_SUCCESS, or HS_ESINGULAR (G G^T not positive definite, gamma not finite). */
int HsConsLeastSquaresForce(HsCons *cs, const double *r, double *gamma)
{
  int     n = cs->n, c = cs->c, st;
  double *A = cs->dcda; /* c x c <= n x n: room */

  for (int i = 0; i < c; i++) {
    double v = 0;
    for (int l = 0; l < n; l++)
      v += cs->G[i * n + l] * r[l];
    gamma[i] = v;
    for (int j = 0; j < c; j++) {
      double sum = 0;
      for (int l = 0; l < n; l++)
        sum += cs->G[i * n + l] * cs->G[j * n + l];
      A[i * c + j] = sum;
    }
  }
  {
    gsl_matrix_view      Av  = gsl_matrix_view_array(A, (size_t)c, (size_t)c);
    gsl_vector_view      gv  = gsl_vector_view_array(gamma, (size_t)c);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    st = gsl_linalg_cholesky_decomp1(&Av.matrix) || gsl_linalg_cholesky_svx(&Av.matrix, &gv.vector);
    gsl_set_error_handler(old);
  }
  for (int i = 0; !st && i < c; i++)
    st = !isfinite(gamma[i]);
  return st ? HS_ESINGULAR : HS_SUCCESS;
}

/*@ HsConsRestForce - gamma of the interval between the states a and b (2n each) that balances gravity at rest in the
    least-squares sense, G(qbar)^T gamma = -grad V(qbar) (gamma = -(G G^T)^{-1} G grad V): the constraint force of the
    rest solution, a guess where none is known. Not collective. HS_SUCCESS, HS_EDOM, HS_ESINGULAR.
@*/
int HsConsRestForce(HsCons *cs, const double *a, const double *b, double *gamma)
{
  int n = cs->n, st;

  for (int i = 0; i < n; i++)
    cs->qa[i] = 0.5 * (a[i] + b[i]), cs->qb[i] = 0;
  if ((st = EvalPhi(cs, cs->qa, cs->Phi, cs->G, NULL)) || (st = HsConsEvalGrad(cs, cs->qa, cs->qb)))
    return st;
  for (int i = 0; i < n; i++)
    cs->cB[i] = -cs->g[i];
  return HsConsLeastSquaresForce(cs, cs->cB, gamma);
}
