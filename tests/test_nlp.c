/* Unit tests of the direct transcription NLP (costate/nlp.c, serial): its
 * gradient, constraint Jacobian and Hessian of the Lagrangian against central
 * differences, and its KKT conditions against the kkt (and trapezoidal) costate
 * schemes and the terminal residual: with y_k = lambda_{k+1/2}, stationarity
 * in u is R u = G^T lambda, in an interior x_k it is minus the costate
 * residual of node k, in x_N the transversality residual. */
#include "../costate/hscostate.h"
#include "../problems/hsocp.h"
#include "ell_test_problem.h"

#include "hscheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 16 /* 2n of the problems below */
#define MAXM 4

static double MaxAbs(int n, const double *a)
{
  double m = 0;
  for (int i = 0; i < n; i++)
    m = fmax(m, isnan(a[i]) ? INFINITY : fabs(a[i]));
  return m;
}

/* A point near the problem's data: nodes k-1, k, k+1, costates, controls. */
static void PointOf(const HsProblem *P, double *x3, double *l2, double *u)
{
  int dim = 2 * P->n;
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < dim; i++)
      x3[j * dim + i] = P->x0[i] + 0.05 * (i + 1) * (j + 1) + 0.02 * sin(3.0 * i + j);
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < dim; i++)
      l2[j * dim + i] = 0.37 - 0.21 * i + 0.1 * j;
  for (int i = 0; i < P->m; i++)
    u[i] = 0.3 - 0.17 * i;
}

/* z = (x_k, x_{k+1}, u) of interval k; f(z) = sigma h L^d + y^T c_k and its gradient. */
typedef struct {
  HsDisc *d;
  int     k, dim, m;
  double  sigma, h, *y;
} Piece;

static int PieceValue(Piece *p, const double *z, double *f, double *grad)
{
  int    dim = p->dim, m = p->m, i, j;
  double L, c[MAXD], gk[MAXD], gk1[MAXD], gu[MAXM], Cxk[MAXD * MAXD], Cxk1[MAXD * MAXD], Cu[MAXD * MAXM];
  if (HsDiscRunningCostU(p->d, p->k, z, z + dim, z + 2 * dim, &L) ||
      HsDiscStateResidualU(p->d, z, z + dim, z + 2 * dim, c))
    return 1;
  *f = p->sigma * p->h * L;
  for (i = 0; i < dim; i++)
    *f += p->y[i] * c[i];
  if (!grad)
    return 0;
  if (HsNlpIntervalGradient(p->d, p->k, z, z + dim, z + 2 * dim, gk, gk1, gu) ||
      HsNlpIntervalJacobian(p->d, z, z + dim, z + 2 * dim, Cxk, Cxk1, Cu))
    return 1;
  for (j = 0; j < dim; j++) {
    grad[j] = p->sigma * gk[j], grad[dim + j] = p->sigma * gk1[j];
    for (i = 0; i < dim; i++)
      grad[j] += Cxk[i * dim + j] * p->y[i], grad[dim + j] += Cxk1[i * dim + j] * p->y[i];
  }
  for (j = 0; j < m; j++) {
    grad[2 * dim + j] = p->sigma * gu[j];
    for (i = 0; i < dim; i++)
      grad[2 * dim + j] += Cu[i * m + j] * p->y[i];
  }
  return 0;
}

/* Gradient against differences of the value, Hessian against differences of the gradient. */
static void CheckDerivatives(HsProblem *P, const char *label, const char *ss, int N)
{
  HsDisc *d;
  char    msg[256];
  int     dim = 2 * P->n, m = P->m, nz = 2 * dim + m, k = N / 2, i, j;
  double  x3[3 * MAXD], l2[2 * MAXD], u[MAXM], z[2 * MAXD + MAXM], zp[2 * MAXD + MAXM], g[2 * MAXD + MAXM];
  double  gp[2 * MAXD + MAXM], gm[2 * MAXD + MAXM], fp, fm, f, eg = 0, eh = 0, gmax, hmax = 0;
  double  Hkk[MAXD * MAXD], Hk1k[MAXD * MAXD], Hk1k1[MAXD * MAXD], Huu[MAXM * MAXM], Hxu[MAXD * MAXM];
  Piece   p;

  if (HsDiscCreate(P, ss, "kkt", N, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    CHECK(0, "%s %s: %s", label, ss, msg);
    return;
  }
  PointOf(P, x3, l2, u);
  memcpy(z, x3, sizeof(double) * 2 * dim);
  memcpy(z + 2 * dim, u, sizeof(double) * m);
  p = (Piece){d, k, dim, m, 0.7, HsDiscGetStep(d), l2};
  CHECK(PieceValue(&p, z, &f, g) == 0, "%s %s: evaluation failed", label, ss);
  CHECK(HsNlpIntervalHessian(d, k, z, z + dim, z + 2 * dim, p.sigma, p.y, Hkk, Hk1k, Hk1k1, Huu, Hxu) == 0,
        "%s: Hessian", label);
  gmax = MaxAbs(nz, g);
  for (j = 0; j < nz; j++) {
    double e = 1e-6 * (1 + fabs(z[j]));
    memcpy(zp, z, sizeof z), zp[j] = z[j] + e;
    PieceValue(&p, zp, &fp, gp);
    zp[j] = z[j] - e;
    PieceValue(&p, zp, &fm, gm);
    eg = fmax(eg, fabs((fp - fm) / (2 * e) - g[j]));
    for (i = 0; i < nz; i++) { /* column j of the Hessian from the blocks */
      double hij = 0, fd = (gp[i] - gm[i]) / (2 * e);
      if (i < dim && j < dim)
        hij = Hkk[i * dim + j];
      else if (i >= dim && i < 2 * dim && j < dim)
        hij = Hk1k[(i - dim) * dim + j];
      else if (i < dim && j >= dim && j < 2 * dim)
        hij = Hk1k[(j - dim) * dim + i];
      else if (i >= dim && i < 2 * dim && j >= dim && j < 2 * dim)
        hij = Hk1k1[(i - dim) * dim + j - dim];
      else if (i >= 2 * dim && j >= 2 * dim)
        hij = Huu[(i - 2 * dim) * m + j - 2 * dim];
      else if (i < 2 * dim && i % dim < P->n) /* (q, u): Hxu, the same for q_k and q_{k+1} */
        hij = Hxu[(i % dim) * m + j - 2 * dim];
      else if (j < 2 * dim && j % dim < P->n)
        hij = Hxu[(j % dim) * m + i - 2 * dim];
      hmax = fmax(hmax, fabs(hij));
      eh   = fmax(eh, fabs(fd - hij));
    }
  }
  printf("%-16s %-9s gradient error %.2e (|g| %.2e), Hessian error %.2e (|H| %.2e)\n", label, ss, eg, gmax, eh, hmax);
  CHECK(eg <= 1e-7 * (1 + gmax), "%s %s: gradient differs from differences by %.3e", label, ss, eg);
  CHECK(eh <= 1e-6 * (1 + hmax), "%s %s: Hessian differs from differences of the gradient by %.3e", label, ss, eh);
  HsDiscDestroy(&d);
}

/* KKT conditions of the NLP = the direct costate schemes, at a point with u = R^{-1} G^T lambda. */
static void CheckKKT(HsProblem *P, const char *label, const char *ss, const char *cs, int N)
{
  HsDisc *d;
  char    msg[256];
  int     dim = 2 * P->n, m = P->m, k = N / 2, i, j;
  double  x3[3 * MAXD], l2[2 * MAXD], u[MAXM], ua[MAXM], S[MAXD], C[MAXD], R[MAXD], gu[MAXM];
  double  ga[MAXD], gb[MAXD], Cxk[MAXD * MAXD], Cxk1[MAXD * MAXD], Cu[MAXD * MAXM], e_x, e_u = 0, e_T, cmax;

  if (HsDiscCreate(P, ss, cs, N, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    CHECK(0, "%s %s+%s: %s", label, ss, cs, msg);
    return;
  }
  PointOf(P, x3, l2, u);
  /* the controls of the two intervals, u = R^{-1} G^T lambda (with a B(q), G depends on the interval) */
  HsDiscControl(d, x3, x3 + dim, l2, ua);
  HsDiscControl(d, x3 + dim, x3 + 2 * dim, l2 + dim, u);
  /* interior node k: stationarity = interval k-1's x_{k+1} part + interval k's x_k part */
  HsNlpIntervalGradient(d, k - 1, x3, x3 + dim, ua, ga, S, gu);
  HsNlpIntervalJacobian(d, x3, x3 + dim, ua, Cxk, Cxk1, Cu);
  for (j = 0; j < dim; j++)
    for (i = 0; i < dim; i++)
      S[j] += Cxk1[i * dim + j] * l2[i];
  HsNlpIntervalGradient(d, k, x3 + dim, x3 + 2 * dim, u, ga, gb, gu);
  HsNlpIntervalJacobian(d, x3 + dim, x3 + 2 * dim, u, Cxk, Cxk1, Cu);
  for (j = 0; j < dim; j++) {
    S[j] += ga[j];
    for (i = 0; i < dim; i++)
      S[j] += Cxk[i * dim + j] * l2[dim + i];
  }
  HsDiscCostateResidual(d, k, x3, x3 + dim, x3 + 2 * dim, l2, l2 + dim, C);
  for (j = 0; j < dim; j++)
    S[j] += C[j];
  cmax = MaxAbs(dim, C), e_x = MaxAbs(dim, S);
  /* u: h R u + Cu^T lambda = 0 at u = R^{-1} G^T lambda */
  HsNlpIntervalGradient(d, k, x3 + dim, x3 + 2 * dim, u, ga, gb, gu);
  for (j = 0; j < m; j++) {
    double r = gu[j];
    for (i = 0; i < dim; i++)
      r += Cu[i * m + j] * l2[dim + i];
    e_u = fmax(e_u, fabs(r));
  }
  /* x_N: gradient of h L^d_{N-1} + phi + c_{N-1}^T lambda = the terminal residual */
  {
    double gphi[MAXD];
    HsDisc *dN;
    HsDiscCreate(P, ss, cs, k + 1, HS_DG_TOL_DEFAULT, &dN, msg, sizeof msg);
    HsNlpIntervalGradient(dN, k, x3 + dim, x3 + 2 * dim, u, ga, S, gu);
    HsNlpIntervalJacobian(dN, x3 + dim, x3 + 2 * dim, u, Cxk, Cxk1, Cu);
    HsNlpTerminal(dN, x3 + 2 * dim, NULL, gphi, NULL);
    HsDiscTerminalResidual(dN, x3 + dim, x3 + 2 * dim, l2 + dim, R);
    for (j = 0; j < dim; j++) {
      S[j] += gphi[j] - R[j];
      for (i = 0; i < dim; i++)
        S[j] += Cxk1[i * dim + j] * l2[dim + i];
    }
    e_T = MaxAbs(dim, S);
    HsDiscDestroy(&dN);
  }
  printf("%-16s %-9s+%-11s |S_x + C| %.2e (|C| %.2e), |S_u| %.2e, |S_xN - R| %.2e\n", label, ss, cs, e_x, cmax, e_u,
         e_T);
  CHECK(e_x <= 1e-14 * (1 + cmax) * 100 && cmax > 0, "%s %s+%s: stationarity in x_k is not -C (%.3e)", label, ss,
        cs, e_x);
  CHECK(e_u <= 1e-14, "%s: stationarity in u is not R u = G^T lambda (%.3e)", label, e_u);
  CHECK(e_T <= 1e-14 * (1 + cmax), "%s %s+%s: stationarity in x_N is not the terminal residual (%.3e)", label, ss, cs, e_T);
  HsDiscDestroy(&d);
}

int main(int argc, char **argv)
{
  HsProblem *P, *K, *E, *A, *C;

  if (HsProblemCreateByName("pendulum", &P) || HsProblemCreateByName("kepler", &K) ||
      HsProblemCreateByName("kepler", &E) || HsProblemCreateByName("manipulator3", &A) ||
      HsProblemCreateByName("ncar", &C))
    return 1;
  AttachEllAndWeights(E);
  AttachTimeDependentEll(E);
  for (int s = 0; s < 3; s++) {
    const char *ss[3] = {"midpoint", "greenspan", "gonzalez"};
    CheckDerivatives(P, "pendulum", ss[s], 20);
    if (s != 1) {
      CheckDerivatives(K, "kepler", ss[s], 20);
      CheckDerivatives(E, "kepler+ell(t),B,R", ss[s], 20);
      CheckDerivatives(A, "manipulator3", ss[s], 20);
      CheckDerivatives(C, "ncar (phi)", ss[s], 20);
    }
  }
  CheckKKT(P, "pendulum", "midpoint", "trapezoidal", 20);
  CheckKKT(P, "pendulum", "greenspan", "kkt", 20);
  CheckKKT(K, "kepler", "gonzalez", "kkt", 20);
  CheckKKT(E, "kepler+ell(t),B,R", "gonzalez", "kkt", 20);
  CheckKKT(E, "kepler+ell(t),B,R", "midpoint", "trapezoidal", 20);
  CheckKKT(A, "manipulator3", "gonzalez", "kkt", 20);
  CheckKKT(C, "ncar (phi)", "gonzalez", "kkt", 20);
  CheckKKT(C, "ncar (phi)", "midpoint", "trapezoidal", 20);
  {
    /* A configuration-dependent B(q): x-dependent constraint Jacobian, mixed x-u Hessian blocks, and the
     * kkt/trapezoidal schemes' and terminal residual's B(q) terms as the NLP's stationarity. */
    HsProblem *Q;
    char       path[512], msg[512];
    snprintf(path, sizeof path, "%s/bq2.ocp", argc > 1 ? argv[1] : "tests/data");
    CHECK(HsProblemCreateFromFile(path, &Q, msg, sizeof msg) == 0 && Q->Bq, "%s", msg);
    if (Q) {
      for (int s = 0; s < 2; s++)
        CheckDerivatives(Q, "bq2 (B(q))", s ? "gonzalez" : "midpoint", 20);
      CheckKKT(Q, "bq2 (B(q))", "gonzalez", "kkt", 20);
      CheckKKT(Q, "bq2 (B(q))", "midpoint", "trapezoidal", 20);
      HsProblemDestroy(&Q);
    }
  }
  HsProblemDestroy(&P), HsProblemDestroy(&K), HsProblemDestroy(&E), HsProblemDestroy(&A), HsProblemDestroy(&C);
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
