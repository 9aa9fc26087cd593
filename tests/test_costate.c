/* Unit tests of problems/ and costate/: derivatives against finite
 * differences, discrete-gradient identities and both branches of every
 * stable divided difference, step-residual Jacobians against finite
 * differences for every state/costate scheme pair. */
#include "../costate/hscostate.h"
#include "../problems/hsmechanical.h"
#include "../problems/hsocp.h"
#include "ell_test_problem.h"

#include "hscheck.h"

#include <math.h>
#include <stdio.h>

/* Largest state dimension 2n of the problems checked here (the 20-coordinate chain: 40). */
#define TDIM 64
#include <stdlib.h>
#include <string.h>

static double MaxAbs(int n, const double *a)
{
  double m = 0;
  for (int i = 0; i < n; i++)
    m = fmax(m, fabs(a[i]));
  return m;
}

/* Non-trivial test states (q = 0.7183, not 1). */
static void TestState(const HsProblem *P, int which, double *x)
{
  int dim = 2 * P->n;
  for (int i = 0; i < dim; i++)
    x[i] = 0.7183 + 0.31 * i - 0.57 * which + 0.113 * i * which;
  if (!strcmp(P->name, "kepler"))
    x[0] += 1.3; /* keep |q| well away from 0 */
}

/* grad, Hess and D3 of E against central differences. */
static void CheckProblemDerivatives(const HsProblem *P)
{
  int           dim = 2 * P->n, i, j;
  static double x[TDIM], xp[TDIM], xm[TDIM], g[TDIM], gp[TDIM], gm[TDIM], H[TDIM * TDIM], Hp[TDIM * TDIM],
      Hm[TDIM * TDIM], T[TDIM * TDIM], v[TDIM];
  double Ep, Em;
  double err = 0, eps = 1e-6, scale;

  TestState(P, 0, x);
  P->E.grad(x, g, P->ctx);
  P->E.hess(x, H, P->ctx);
  for (j = 0; j < dim; j++) {
    memcpy(xp, x, sizeof(x)), memcpy(xm, x, sizeof(x));
    xp[j] += eps, xm[j] -= eps;
    P->E.f(xp, &Ep, P->ctx), P->E.f(xm, &Em, P->ctx);
    err = fmax(err, fabs((Ep - Em) / (2 * eps) - g[j]));
  }
  CHECK(err < 1e-8 * (1 + MaxAbs(dim, g)), "%s: grad E vs FD error %.3e", P->name, err);
  err = 0;
  for (j = 0; j < dim; j++) {
    memcpy(xp, x, sizeof(x)), memcpy(xm, x, sizeof(x));
    xp[j] += eps, xm[j] -= eps;
    P->E.grad(xp, gp, P->ctx), P->E.grad(xm, gm, P->ctx);
    for (i = 0; i < dim; i++)
      err = fmax(err, fabs((gp[i] - gm[i]) / (2 * eps) - H[i * dim + j]));
  }
  CHECK(err < 1e-8 * (1 + MaxAbs(dim * dim, H)), "%s: Hess E vs FD error %.3e", P->name, err);
  for (i = 0; i < dim; i++)
    v[i] = 0.3 - 0.17 * i;
  if (!P->E.d3)
    return; /* mechanical problems: D3 by differences of the checked Hessian */
  P->E.d3(x, v, T, P->ctx);
  for (i = 0; i < dim; i++)
    xp[i] = x[i] + eps * v[i], xm[i] = x[i] - eps * v[i];
  P->E.hess(xp, Hp, P->ctx), P->E.hess(xm, Hm, P->ctx);
  err   = 0;
  scale = 1 + MaxAbs(dim * dim, T);
  for (i = 0; i < dim * dim; i++)
    err = fmax(err, fabs((Hp[i] - Hm[i]) / (2 * eps) - T[i]));
  CHECK(err < 1e-7 * scale, "%s: D3 E vs FD error %.3e", P->name, err);
  /* The FD fallback of HsFunctionD3 (d3 = NULL) agrees with the analytic one. */
  {
    HsFunction    F = P->E;
    static double work[TDIM + 2 * TDIM * TDIM], T2[TDIM * TDIM];
    F.d3 = NULL;
    HsFunctionD3(&F, dim, P->ctx, x, v, T2, work);
    err = 0;
    for (i = 0; i < dim * dim; i++)
      err = fmax(err, fabs(T2[i] - T[i]));
    CHECK(err < 1e-7 * scale, "%s: HsFunctionD3 FD fallback error %.3e", P->name, err);
  }
}

/* Directionality gbar.(b-a) = E(b)-E(a) (energy-consistent schemes), in the
 * quotient branch and in the fallback branch, and consistency gbar -> grad E. */
static void CheckDiscreteGradient(const HsProblem *P, const char *ssname)
{
  HsDisc              *d;
  const HsStateScheme *ss;
  char                 msg[256];
  int                  dim = 2 * P->n, i, k;
  double               a[12], b[12], g[12], ga[12], Ea, Eb, dir, err;

  if (HsDiscCreate(P, ssname, "kkt", 10, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    CHECK(0, "create %s/%s: %s", P->name, ssname, msg);
    return;
  }
  ss = HsDiscGetStateScheme(d);
  TestState(P, 0, a);
  /* Steps from 0.3 (quotient branch) down to 1e-9 (fallback branch). */
  for (k = 0; k < 5; k++) {
    double step = (k == 0 ? 0.3 : k == 1 ? 1e-2 : k == 2 ? 1e-5 : k == 3 ? 5e-7 : 1e-9);
    for (i = 0; i < dim; i++)
      b[i] = a[i] + step * (0.8 - 0.37 * i);
    ss->grad(d, a, b, g);
    P->E.f(a, &Ea, P->ctx), P->E.f(b, &Eb, P->ctx);
    dir = 0;
    for (i = 0; i < dim; i++)
      dir += g[i] * (b[i] - a[i]);
    err = fabs(dir - (Eb - Ea));
    if (ss->energy_consistent)
      CHECK(err <= 4e-16 * (fabs(Ea) + fabs(Eb) + 1), "%s/%s: directionality error %.3e at step %.1e", P->name, ssname,
            err, step);
    P->E.grad(a, ga, P->ctx);
    err = 0;
    for (i = 0; i < dim; i++)
      err = fmax(err, fabs(g[i] - ga[i]));
    CHECK(err <= 5 * step * (1 + MaxAbs(dim, ga)), "%s/%s: consistency |gbar - grad E| = %.3e at step %.1e", P->name,
          ssname, err, step);
  }
  HsDiscDestroy(&d);
}

/* Central-difference check of one Jacobian block: column j of J against
 * (f(y + eps e_j) - f(y - eps e_j)) / (2 eps). */
typedef int (*ResFn)(HsDisc *, double **args, double *out);

/* The node of the costate checks: t_{k-1} = 2h, t_{k+1} = 4h differ, which
 * matters for a time-dependent running cost. */
#define TEST_NODE 3

static int StateRes(HsDisc *d, double **v, double *out) { return HsDiscStateResidual(d, v[0], v[1], v[2], out); }
static int CostRes(HsDisc *d, double **v, double *out)
{
  return HsDiscCostateResidual(d, TEST_NODE, v[0], v[1], v[2], v[3], v[4], out);
}

static double FDBlockError(HsDisc *d, ResFn f, double **args, int which, const double *J, int dim)
{
  double fp[12], fm[12], save, eps = 1e-6, err = 0;
  for (int j = 0; j < dim; j++) {
    save           = args[which][j];
    args[which][j] = save + eps;
    f(d, args, fp);
    args[which][j] = save - eps;
    f(d, args, fm);
    args[which][j] = save;
    for (int i = 0; i < dim; i++)
      err = fmax(err, fabs((fp[i] - fm[i]) / (2 * eps) - J[i * dim + j]));
  }
  return err;
}

static void CheckJacobians(const HsProblem *P, const char *ssname, const char *csname, double spread)
{
  HsDisc *d;
  char    msg[256];
  int     dim = 2 * P->n, i, b;
  double  x[3][12], l[2][12], J[5][144], *args[5], err, scale;

  if (HsDiscCreate(P, ssname, csname, 10, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    CHECK(0, "create %s/%s/%s: %s", P->name, ssname, csname, msg);
    return;
  }
  for (b = 0; b < 3; b++)
    TestState(P, b, x[b]);
  /* spread scales x_{k+1} - x_{k-1}; tiny spread exercises the second-difference fallback. */
  for (i = 0; i < dim; i++)
    x[2][i] = x[0][i] + spread * (x[2][i] - x[0][i]);
  for (i = 0; i < dim; i++)
    l[0][i] = 0.41 - 0.23 * i, l[1][i] = -0.35 + 0.19 * i;
  /* state residual of interval (x_k, x_{k+1}) */
  HsDiscStateJacobian(d, x[1], x[2], l[1], J[0], J[1], J[2]);
  args[0] = x[1], args[1] = x[2], args[2] = l[1];
  for (b = 0; b < 3; b++) {
    err   = FDBlockError(d, StateRes, args, b, J[b], dim);
    scale = 1 + MaxAbs(dim * dim, J[b]);
    CHECK(err < 1e-7 * scale, "%s %s: state Jacobian block %d FD error %.3e", P->name, ssname, b, err);
  }
  HsDiscCostateJacobian(d, TEST_NODE, x[0], x[1], x[2], l[0], l[1], J[0], J[1], J[2], J[3], J[4]);
  args[0] = x[0], args[1] = x[1], args[2] = x[2], args[3] = l[0], args[4] = l[1];
  for (b = 0; b < 5; b++) {
    err   = FDBlockError(d, CostRes, args, b, J[b], dim);
    scale = 1 + MaxAbs(dim * dim, J[b]);
    /* In the fallback branch the x-derivatives of the limit are exact only to O(|d|). */
    CHECK(err < (spread < 1e-3 && b < 3 ? 1e-4 : 1e-7) * scale,
          "%s %s/%s (spread %.0e): costate block %d FD error %.3e", P->name, ssname, csname, spread, b, err);
  }
  HsDiscDestroy(&d);
}

/* The second-difference fallback joins the quotient continuously. */
static void CheckCostateBranches(const HsProblem *P, const char *ssname, const char *csname)
{
  HsDisc *d;
  char    msg[256];
  int     dim = 2 * P->n, i;
  double  xm[12], x0[12], xp[12], lm[12], lp[12], C1[12], C2[12], err = 0;

  if (HsDiscCreate(P, ssname, csname, 10, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    CHECK(0, "create: %s", msg);
    return;
  }
  TestState(P, 0, x0);
  for (i = 0; i < dim; i++) {
    double w = 0.05 * (1 - 0.3 * i), dd = 1e-6 * (0.2 + 0.1 * i) * (1 + 3.0 * dim);
    lm[i] = 0.41 - 0.23 * i, lp[i] = -0.35 + 0.19 * i;
    /* just above the threshold: |d| ~ 1.5 dg_tol (1+|x|) */
    xm[i] = x0[i] - w + 1.5 * dd, xp[i] = x0[i] + w + 1.5 * dd;
  }
  HsDiscCostateResidual(d, 1, xm, x0, xp, lm, lp, C1);
  for (i = 0; i < dim; i++)
    xm[i] = x0[i] - 0.05 * (1 - 0.3 * i), xp[i] = 2 * x0[i] - xm[i]; /* d = 0 */
  HsDiscCostateResidual(d, 1, xm, x0, xp, lm, lp, C2);
  for (i = 0; i < dim; i++)
    err = fmax(err, fabs(C1[i] - C2[i]));
  CHECK(err < 1e-5 * HsDiscGetStep(d) && isfinite(err), "%s %s: costate residual jump across fallback %.3e", P->name,
        csname, err);
  HsDiscDestroy(&d);
}

/* Closed-form Greenspan quotient of the pendulum vs the generic quotient. */
static void CheckPendulumQuotient(HsProblem *P)
{
  HsDisc               *dc, *dg;
  HsPotentialQuotientFn q = P->sep.quotient;
  char                  msg[256];
  double                a[2]     = {0.7183, 0.2}, b[2], g1[2], g2[2], D1[4], D2[4], D3[4], D4[4], err;
  double                steps[3] = {0.4, 1e-3, 1e-9};

  HsDiscCreate(P, "greenspan", "kkt", 10, HS_DG_TOL_DEFAULT, &dc, msg, sizeof msg);
  for (int k = 0; k < 3; k++) {
    b[0] = a[0] + steps[k], b[1] = 0.5;
    P->sep.quotient = q;
    HsDiscGetStateScheme(dc)->grad(dc, a, b, g1);
    HsDiscGetStateScheme(dc)->jac(dc, a, b, D1, D2);
    P->sep.quotient = NULL;
    HsDiscCreate(P, "greenspan", "kkt", 10, HS_DG_TOL_DEFAULT, &dg, msg, sizeof msg);
    HsDiscGetStateScheme(dg)->grad(dg, a, b, g2);
    HsDiscGetStateScheme(dg)->jac(dg, a, b, D3, D4);
    HsDiscDestroy(&dg);
    err = fmax(fabs(g1[0] - g2[0]), fmax(fabs(D1[0] - D3[0]), fabs(D2[0] - D4[0])));
    /* generic quotient loses ~eps/step in its derivatives */
    CHECK(err < 1e-14 + 1e-15 / steps[k] + 1e-7, "pendulum quotient closed form vs generic at step %.0e: %.3e",
          steps[k], err);
  }
  P->sep.quotient = q;
  HsDiscDestroy(&dc);
}

static void CheckErrors(HsProblem *P, HsProblem *K)
{
  HsDisc *d;
  char    msg[256];
  CHECK(HsDiscCreate(P, "nonsense", "kkt", 10, 1e-6, &d, msg, sizeof msg) < 0 && strstr(msg, "nonsense"),
        "unknown state scheme not reported: %s", msg);
  CHECK(HsDiscCreate(P, "midpoint", "nonsense", 10, 1e-6, &d, msg, sizeof msg) < 0 && strstr(msg, "costate"),
        "unknown costate scheme not reported: %s", msg);
  CHECK(HsDiscCreate(K, "greenspan", "conserving", 10, 1e-6, &d, msg, sizeof msg) < 0 && strstr(msg, "greenspan"),
        "greenspan on kepler not rejected: %s", msg);
  CHECK(HsDiscCreate(P, "midpoint", "conserving_1dof", 10, 1e-6, &d, msg, sizeof msg) < 0,
        "conserving_1dof with midpoint states not rejected");
  CHECK(HsDiscCreate(P, "midpoint", "kkt", 1, 1e-6, &d, msg, sizeof msg) < 0 && strstr(msg, "N = 1"),
        "N = 1 not rejected: %s", msg);
  {
    double R = P->R[0];
    P->R[0]  = -1;
    CHECK(HsDiscCreate(P, "midpoint", "kkt", 10, 1e-6, &d, msg, sizeof msg) < 0 && strstr(msg, "positive definite"),
          "indefinite R not rejected: %s", msg);
    P->R[0] = R;
  }
  {
    double x[6] = {0, 0, 0, 1, 0, 0}, E;
    CHECK(K->E.f(x, &E, K->ctx) > 0, "kepler at q = 0 is not a recoverable domain error");
  }
  CHECK(d == NULL, "failed create left a non-NULL object");
}

/* Forward simulation with a given smooth control under gonzalez states: solve
 * the state equation for x_{k+1} by Newton (dense, by Gaussian elimination)
 * with lambda chosen so that u = R^{-1} B^T lambda_p equals the control
 * (lambda_p = B (B^T B)^{-1} R u); E_k - W_k must stay constant to round-off. */
/* E - W along a forward simulation under the control amplitude * sin(1.3 t + c) (1 + c). */
static void CheckForwardEnergyWork(const HsProblem *P, double amplitude)
{
  HsDisc *d;
  char    msg[256];
  int           n = P->n, m = P->m, dim = 2 * n, N = 40, k, it, i, j, c;
  static double x[TDIM], xn[TDIM], lam[TDIM], F[TDIM], A[TDIM * TDIM], B1[TDIM * TDIM], B2[TDIM * TDIM];
  double        E0, E, W = 0, w, spread = 0;
  int     newton_failed = 0;

  if (HsDiscCreate(P, "gonzalez", "conserving", N, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    CHECK(0, "create %s: %s", P->name, msg);
    return;
  }
  for (i = 0; i < dim; i++)
    x[i] = P->x0[i];
  HsDiscEnergy(d, x, &E0);
  for (k = 0; k < N; k++) {
    double t = P->T * (k + 0.5) / N, u[6], BtB[36], y[6];
    for (c = 0; c < m; c++)
      u[c] = amplitude * sin(1.3 * t + c) * (1 + c);
    /* lambda_p = B (B^T B)^{-1} R u, solved by Gaussian elimination on m x m */
    for (i = 0; i < m; i++) {
      y[i] = 0;
      for (j = 0; j < m; j++)
        y[i] += P->R[i * m + j] * u[j];
      for (j = 0; j < m; j++) {
        BtB[i * m + j] = 0;
        for (int l = 0; l < n; l++)
          BtB[i * m + j] += P->B[l * m + i] * P->B[l * m + j];
      }
    }
    for (i = 0; i < m; i++)
      for (j = i + 1; j < m; j++) {
        double f = BtB[j * m + i] / BtB[i * m + i];
        for (int l = i; l < m; l++)
          BtB[j * m + l] -= f * BtB[i * m + l];
        y[j] -= f * y[i];
      }
    for (i = m - 1; i >= 0; i--) {
      for (j = i + 1; j < m; j++)
        y[i] -= BtB[i * m + j] * y[j];
      y[i] /= BtB[i * m + i];
    }
    for (i = 0; i < n; i++) {
      lam[i]     = 0;
      lam[n + i] = 0;
      for (j = 0; j < m; j++)
        lam[n + i] += P->B[i * m + j] * y[j];
    }
    for (i = 0; i < dim; i++)
      xn[i] = x[i];
    for (it = 0; it < 30; it++) {
      HsDiscStateResidual(d, x, xn, lam, F);
      if (MaxAbs(dim, F) < 1e-14 * (1 + MaxAbs(dim, xn)))
        break;
      if (it == 29)
        newton_failed++;
      HsDiscStateJacobian(d, x, xn, lam, B1, A, B2);
      for (i = 0; i < dim; i++) /* Gaussian elimination with partial pivoting on A dx = F */
      {
        int p = i;
        for (j = i + 1; j < dim; j++)
          if (fabs(A[j * dim + i]) > fabs(A[p * dim + i]))
            p = j;
        for (j = 0; j < dim; j++) {
          double tmp     = A[i * dim + j];
          A[i * dim + j] = A[p * dim + j], A[p * dim + j] = tmp;
        }
        {
          double tmp = F[i];
          F[i] = F[p], F[p] = tmp;
        }
        for (j = i + 1; j < dim; j++) {
          double f = A[j * dim + i] / A[i * dim + i];
          for (int l = i; l < dim; l++)
            A[j * dim + l] -= f * A[i * dim + l];
          F[j] -= f * F[i];
        }
      }
      for (i = dim - 1; i >= 0; i--) {
        for (j = i + 1; j < dim; j++)
          F[i] -= A[i * dim + j] * F[j];
        F[i] /= A[i * dim + i];
      }
      for (i = 0; i < dim; i++)
        xn[i] -= F[i];
    }
    HsDiscWork(d, x, xn, lam, &w);
    W += w;
    for (i = 0; i < dim; i++)
      x[i] = xn[i];
    HsDiscEnergy(d, x, &E);
    spread = fmax(spread, fabs((E - W) - E0));
  }
  printf("%s: forward simulation, gonzalez states, 40 steps: max |(E - W) - E_0| = %.2e (E_0 = %.3g, final E = %.3g)\n",
         P->name, spread, E0, E);
  CHECK(newton_failed == 0, "%s: the forward step's Newton did not converge in %d steps", P->name, newton_failed);
  CHECK(spread <= 1e-10 * (1 + fabs(E0) + fabs(E)), "%s: E - W not conserved: %.3e", P->name, spread);
  CHECK(fabs(E - E0) > 1e-3, "%s: the control did no work (E %.3g -> %.3g): test is vacuous", P->name, E0, E);
  HsDiscDestroy(&d);
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : "problems";
  HsProblem  *P, *K;
  const char *cs_all[] = {"trapezoidal", "kkt", "conserving"};

  if (HsProblemCreateByName("pendulum", &P) || HsProblemCreateByName("kepler", &K))
    return 1;
  {
    HsProblem *Z;
    CHECK(HsProblemCreateByName("nonesuch", &Z) == HS_EUNKNOWN && Z == NULL, "unknown problem name not reported");
  }
  CheckProblemDerivatives(P);
  CheckProblemDerivatives(K);
  CheckDiscreteGradient(P, "midpoint");
  CheckDiscreteGradient(P, "greenspan");
  CheckDiscreteGradient(P, "gonzalez");
  CheckDiscreteGradient(K, "midpoint");
  CheckDiscreteGradient(K, "gonzalez");
  {
    /* Generic Greenspan quotient (no closed form) in both branches. */
    HsPotentialQuotientFn q = P->sep.quotient;
    P->sep.quotient         = NULL;
    CheckDiscreteGradient(P, "greenspan");
    CheckJacobians(P, "greenspan", "kkt", 1);
    CheckJacobians(P, "greenspan", "conserving_1dof", 1);
    P->sep.quotient = q;
  }
  CheckPendulumQuotient(P);
  for (int s = 0; s < 3; s++) {
    const char *ss = s == 0 ? "midpoint" : s == 1 ? "greenspan" : "gonzalez";
    for (int c = 0; c < 3; c++)
      CheckJacobians(P, ss, cs_all[c], 1);
    CheckJacobians(P, ss, "conserving", 1e-9);
    if (s != 1)
      for (int c = 0; c < 3; c++)
        CheckJacobians(K, ss, cs_all[c], 1);
  }
  CheckJacobians(K, "gonzalez", "conserving", 1e-9);
  CheckJacobians(P, "greenspan", "conserving_1dof", 1);
  CheckJacobians(P, "greenspan", "conserving_1dof", 1e-9);
  CheckCostateBranches(P, "greenspan", "conserving_1dof");
  CheckCostateBranches(P, "greenspan", "conserving");
  CheckCostateBranches(K, "gonzalez", "conserving");
  {
    /* Kepler without its analytic D3: Newton's conserving Jacobian via HsFunctionD3's difference. */
    HsHessDirFn d3 = K->E.d3;
    K->E.d3        = NULL;
    CheckJacobians(K, "gonzalez", "conserving", 1);
    K->E.d3 = d3;
  }
  {
    /* Running cost ell and non-trivial B, R: FD check of every scheme's Jacobian,
     * including the Gonzalez discrete gradient of ell in the conserving scheme. */
    HsProblem *KE;
    HsProblemCreateByName("kepler", &KE);
    AttachEllAndWeights(KE);
    for (int s = 0; s < 2; s++) {
      const char *ss = s == 0 ? "midpoint" : "gonzalez";
      for (int c = 0; c < 3; c++)
        CheckJacobians(KE, ss, cs_all[c], 1);
      CheckJacobians(KE, ss, "conserving", 1e-9);
    }
    {
      /* the control is u = R^{-1} B^T lambda_p */
      HsDisc *d;
      char    msg[256];
      double  lam[6] = {0.1, -0.2, 0.3, 0.7183, -0.4, 0.25}, u[3], Ru[3], BTl[3], err = 0;
      HsDiscCreate(KE, "gonzalez", "conserving", 10, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg);
      HsDiscControl(d, lam, lam, lam, u); /* a constant B: the states do not matter */
      for (int i = 0; i < 3; i++) {
        Ru[i] = BTl[i] = 0;
        for (int j = 0; j < 3; j++)
          Ru[i] += KE->R[i * 3 + j] * u[j], BTl[i] += KE->B[j * 3 + i] * lam[3 + j];
        err = fmax(err, fabs(Ru[i] - BTl[i]));
      }
      CHECK(err < 1e-14, "R u = B^T lambda_p violated by %.3e", err);
      HsDiscDestroy(&d);
    }
    /* A time-dependent running cost: every scheme's Jacobian, and the defining
     * property of the conserving scheme's time-split discrete gradient of ell
     * (costate/costate.c): with lambda = 0 the residual is C = -h gbar_ell, and
     *   gbar_ell . (x_{k+1} - x_{k-1}) = ell(x_{k+1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) - Dt_k. */
    AttachTimeDependentEll(KE);
    for (int c = 0; c < 3; c++)
      CheckJacobians(KE, "gonzalez", cs_all[c], 1);
    CheckJacobians(KE, "midpoint", "kkt", 1);
    CheckJacobians(KE, "gonzalez", "conserving", 1e-9);
    {
      HsDisc *d;
      char    msg[256];
      double  x[3][6], z[6] = {0}, C[6], Dt, lp, lm, h, lhs = 0, err;
      HsDiscCreate(KE, "gonzalez", "conserving", 10, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg);
      h = HsDiscGetStep(d);
      for (int b = 0; b < 3; b++)
        TestState(KE, b, x[b]);
      HsDiscCostateResidual(d, TEST_NODE, x[0], x[1], x[2], z, z, C);
      HsDiscEllTimeChange(d, TEST_NODE, x[0], x[2], &Dt);
      KE->ell.f((TEST_NODE + 1) * h, x[2], &lp, KE->ctx);
      KE->ell.f((TEST_NODE - 1) * h, x[0], &lm, KE->ctx);
      for (int i = 0; i < 6; i++)
        lhs += -C[i] / h * (x[2][i] - x[0][i]);
      err = fabs(lhs - (lp - lm - Dt));
      printf("time-dependent ell: gbar.(x+ - x-) = %.15f, ell+ - ell- - Dt = %.15f (Dt = %.3e), difference %.1e\n", lhs,
             lp - lm - Dt, Dt, err);
      CHECK(err < 1e-13, "time-split discrete gradient of ell: directionality error %.3e", err);
      CHECK(fabs(Dt) > 1e-3, "Dt = %.3e should not vanish for this ell", Dt);
      HsDiscDestroy(&d);
    }
    HsProblemDestroy(&KE);
  }
  {
    /* Mass-matrix problems (problems/mechanical.c): derivatives against finite
     * differences, every scheme's step Jacobian (with the analytic third
     * derivatives of the mass matrix); E - W below, with all reference problems. */
    const char *mech[] = {"crane", "manipulator3"};
    for (int q = 0; q < 2; q++) {
      HsProblem *Q;
      CHECK(HsProblemCreateByName(mech[q], &Q) == 0, "create %s", mech[q]);
      CheckProblemDerivatives(Q);
      for (int c = 0; c < 3; c++)
        CheckJacobians(Q, "gonzalez", cs_all[c], 1);
      CheckJacobians(Q, "midpoint", "kkt", 1);
      HsProblemDestroy(&Q);
    }
  }
  {
    /* A configuration-dependent B(q) (docs/configuration-dependent-forces.md, costate/gain.c): the state and
     * costate Jacobians of every scheme against differences, the conserving scheme in both branches of its
     * projection (spread 1e-9: kappa = kappa0) and continuous across them, E - W in a forward simulation. */
    const char *files[] = {"bq2", "pendulum_bq"};
    for (int q = 0; q < 2; q++) {
      HsProblem *Q;
      char       path[512], msg[512];
      snprintf(path, sizeof path, "%s/../tests/data/%s.ocp", dir, files[q]);
      CHECK(HsProblemCreateFromFile(path, &Q, msg, sizeof msg) == 0 && Q->Bq, "%s", msg);
      if (!Q)
        continue;
      for (int s = 0; s < 2; s++)
        for (int c = 0; c < 3; c++)
          CheckJacobians(Q, s ? "gonzalez" : "midpoint", cs_all[c], 1);
      CheckJacobians(Q, "gonzalez", "conserving", 1e-9);
      CheckCostateBranches(Q, "gonzalez", "conserving");
      CheckForwardEnergyWork(Q, q ? 20 : 2); /* bq2's coupled B(q) leaves its domain under amplitude 20 */
      HsProblemDestroy(&Q);
    }
  }
  {
    /* Every reference problem of docs/theory.md section 4, built in and as a problem file:
     * derivatives against finite differences, E - W conserved in a forward simulation
     * with a given control under gonzalez states (issue 4). */
    const char *names[] = {"pendulum", "kepler", "crane", "manipulator3", "manipulator3", "ncar", "ncar"};
    const char *files[] = {"pendulum", "kepler", "crane", "manipulator3", "manipulator3_kinetic", "ncar2", "ncar3"};
    for (int q = 0; q < 7; q++) {
      HsProblem *Q, *Fq;
      char       path[512], msg[512];
      CHECK(HsProblemCreateByName(names[q], &Q) == 0, "create %s", names[q]);
      if (q == 6)
        CHECK(HsProblemSetParam(Q, "cars", 3) == 0, "ncar: 3 cars");
      CheckProblemDerivatives(Q);
      CheckForwardEnergyWork(Q, 20);
      HsProblemDestroy(&Q);
      snprintf(path, sizeof path, "%s/%s.ocp", dir, files[q]);
      CHECK(HsProblemCreateFromFile(path, &Fq, msg, sizeof msg) == 0, "%s", msg);
      if (Fq) {
        CheckProblemDerivatives(Fq);
        CheckForwardEnergyWork(Fq, 20);
        HsProblemDestroy(&Fq);
      }
    }
  }
  {
    /* Larger problems (no size limit on n): ncar with 8 cars (C) and the 20-coordinate planar chain
     * file (problems/chain2d.ocp, nonlinear springs): derivatives and E - W; ncar 8 -> 3 cars
     * gives back the 3-car problem exactly. */
    HsProblem *Q, *Q3, *Fq;
    char       path[512], msg[512];
    double     x[TDIM], E1, E2;
    CHECK(HsProblemCreateByName("ncar", &Q) == 0 && HsProblemSetParam(Q, "cars", 8) == 0 && Q->n == 8,
          "ncar with 8 cars");
    CheckProblemDerivatives(Q);
    CheckForwardEnergyWork(Q, 20);
    CHECK(HsProblemSetParam(Q, "cars", 3) == 0 && HsProblemCreateByName("ncar", &Q3) == 0 &&
              HsProblemSetParam(Q3, "cars", 3) == 0,
          "ncar back to 3 cars");
    TestState(Q, 0, x);
    Q->E.f(x, &E1, Q->ctx), Q3->E.f(x, &E2, Q3->ctx);
    CHECK(Q->n == 3 && E1 == E2 && !memcmp(Q->x0, Q3->x0, 6 * sizeof(double)) && Q->B[2] == 1,
          "ncar 8 -> 3 cars: E %.17g vs %.17g", E1, E2);
    CHECK(HsProblemSetParam(Q, "cars", 2.5) == HS_ENOTINT && HsProblemSetParam(Q, "cars", 1) == HS_ERANGE &&
              Q->n == 3,
          "ncar: bad numbers of cars accepted");
    HsProblemDestroy(&Q), HsProblemDestroy(&Q3);
    snprintf(path, sizeof path, "%s/chain2d.ocp", dir);
    CHECK(HsProblemCreateFromFile(path, &Fq, msg, sizeof msg) == 0 && Fq->n == 20, "%s", msg);
    if (Fq) {
      CheckProblemDerivatives(Fq);
      CheckForwardEnergyWork(Fq, 20);
      HsProblemDestroy(&Fq);
    }
  }
  CheckErrors(P, K);
  HsProblemDestroy(&P);
  HsProblemDestroy(&K);
  CHECK(P == NULL, "destroy did not set NULL");
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
