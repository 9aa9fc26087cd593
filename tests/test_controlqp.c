/* Unit tests of the coupled bounded control law (a non-diagonal R, costate/control.c HsControlLawEvalFull, serial):
 * eps = 0 against an independent exact solution of the box QP (every assignment of the controls to lower bound /
 * upper bound / free, its KKT conditions checked: the one KKT point of the strictly concave problem) and its maximum
 * against a grid search; du/ds at eps = 0 and for eps > 0 against central differences of u, u against central
 * differences of psi; the smoothed law tends to the exact one as eps -> 0 (order eps^2 where no multiplier vanishes);
 * with a one-sided bound and a nearly diagonal R the barrier law is the diagonal law's smoothing (weights R_jj
 * eps^2/4). */
#include "../costate/hscontrol.h"

#include "hscheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The box QP by enumeration of the 3^m active sets (m <= 3): the assignment whose equality solution is feasible and
   whose multipliers have the right signs. Returns 0 if found. */
static int EnumQP(int m, const double *R, const double *lo, const double *hi, const double *s, double *u)
{
  int total = 1;
  for (int j = 0; j < m; j++)
    total *= 3;
  for (int c = 0; c < total; c++) {
    int    a[3], cc = c, f[3], nf = 0, ok = 1;
    double M[9], b[3], g;
    for (int j = 0; j < m; j++, cc /= 3) {
      a[j] = cc % 3 - 1; /* -1 lo, 0 free, +1 hi */
      if ((a[j] < 0 && !isfinite(lo[j])) || (a[j] > 0 && !isfinite(hi[j])))
        ok = 0;
      u[j] = a[j] < 0 ? lo[j] : hi[j];
      if (!a[j])
        f[nf++] = j;
    }
    if (!ok)
      continue;
    for (int x = 0; x < nf; x++) { /* R_FF u_F = s_F - R_FW u_W, Gauss-Jordan */
      b[x] = s[f[x]];
      for (int j = 0; j < m; j++)
        if (a[j])
          b[x] -= R[f[x] * m + j] * u[j];
      for (int y = 0; y < nf; y++)
        M[x * nf + y] = R[f[x] * m + f[y]];
    }
    for (int x = 0; x < nf; x++)
      for (int y = 0; y < nf; y++)
        if (y != x) {
          double t = M[y * nf + x] / M[x * nf + x];
          for (int z = 0; z < nf; z++)
            M[y * nf + z] -= t * M[x * nf + z];
          b[y] -= t * b[x];
        }
    for (int x = 0; x < nf; x++)
      u[f[x]] = b[x] / M[x * nf + x];
    for (int j = 0; j < m; j++) {
      g = s[j];
      for (int i = 0; i < m; i++)
        g -= R[j * m + i] * u[i];
      if ((!a[j] && (u[j] < lo[j] - 1e-13 || u[j] > hi[j] + 1e-13)) || (a[j] < 0 && g > 1e-13) ||
          (a[j] > 0 && g < -1e-13))
        ok = 0;
    }
    if (ok)
      return 0;
  }
  return 1;
}

static double Objective(int m, const double *R, const double *s, const double *u)
{
  double v = 0;
  for (int i = 0; i < m; i++) {
    v += s[i] * u[i];
    for (int j = 0; j < m; j++)
      v -= 0.5 * u[i] * R[i * m + j] * u[j];
  }
  return v;
}

/* psi' = u and u' = du/ds by central differences at s, and du/ds symmetric; returns the largest deviation found
   relative to 1 + |du/ds|. */
static double FDCheck(HsProblem *P, double eps, const double *s0)
{
  int    m = P->m;
  double u[3], J[9], up[3], um[3], pp, pm, psi, s[3], dev = 0, h = 1e-6;
  CHECK(HsControlLawEvalFull(P, eps, s0, u, &psi, J) == HS_SUCCESS, "eval eps %g", eps);
  for (int c = 0; c < m; c++) {
    memcpy(s, s0, sizeof s);
    s[c] = s0[c] + h;
    HsControlLawEvalFull(P, eps, s, up, &pp, NULL);
    s[c] = s0[c] - h;
    HsControlLawEvalFull(P, eps, s, um, &pm, NULL);
    dev = fmax(dev, fabs((pp - pm) / (2 * h) - u[c]) / (1 + fabs(u[c])));
    for (int r = 0; r < m; r++)
      dev = fmax(dev, fmax(fabs((up[r] - um[r]) / (2 * h) - J[r * m + c]), fabs(J[r * m + c] - J[c * m + r])) /
                          (1 + fabs(J[r * m + c])));
  }
  return dev;
}

int main(void)
{
  HsProblem *P     = NULL;
  double     lo[3] = {-1, -0.5, -INFINITY}, hi[3] = {1, INFINITY, 0.8}, u[3], ue[3], J[9], psi, worst = 0;
  double     R3[9]    = {2, 0.9, -0.4, 0.9, 1.5, 0.6, -0.4, 0.6, 1.2};
  char       msg[256] = "";
  int        nact     = 0;

  CHECK(HsProblemAllocate("qp3", 1, 3, &P) == HS_SUCCESS, "allocate");
  memcpy(P->R, R3, sizeof R3);
  P->u_min = lo, P->u_max = hi;
  CHECK(HsControlLawCheck(P, msg, sizeof msg) == HS_SUCCESS && !HsControlLawDiagonal(P), "coupled R refused: %s", msg);
  /* eps = 0: the exact QP against enumeration and a grid; du/ds by differences away from kinks */
  for (int t = 0; t < 400; t++) {
    double s[3] = {4 * sin(1.3 * t + 0.2), 3 * cos(0.7 * t), 2.5 * sin(2.1 * t + 1)}, best = -INFINITY;
    CHECK(HsControlLawEvalFull(P, 0, s, u, &psi, J) == HS_SUCCESS, "exact eval %d", t);
    CHECK(!EnumQP(3, R3, lo, hi, s, ue), "enumeration found no KKT point at %d", t);
    for (int j = 0; j < 3; j++) {
      worst = fmax(worst, fabs(u[j] - ue[j]));
      nact += u[j] == lo[j] || u[j] == hi[j];
    }
    CHECK(fabs(psi - Objective(3, R3, s, ue)) < 1e-13 * (1 + fabs(psi)), "psi %g vs %g", psi, Objective(3, R3, s, ue));
    for (int i = 0; i <= 80 && t % 40 == 0; i++) /* grid of the box [-1,1] x [-0.5,7.5] x [-7.2,0.8] */
      for (int k = 0; k <= 80; k++)
        for (int l = 0; l <= 80; l++) {
          double v[3] = {-1 + 2.0 * i / 80, -0.5 + 8.0 * k / 80, -7.2 + 8.0 * l / 80};
          best        = fmax(best, Objective(3, R3, s, v));
        }
    CHECK(t % 40 || (psi >= best - 1e-12 && psi - best < 0.05), "psi %g below the grid's %g", psi, best);
    CHECK(FDCheck(P, 0, s) < 1e-6 || t % 7, "exact du/ds vs differences at %d", t);
  }
  CHECK(worst < 1e-12 && nact > 200, "exact QP vs enumeration: %.2e (%d active bounds)", worst, nact);
  printf("exact QP vs enumeration over 400 s: max |du| %.2e, %d active bounds\n", worst, nact);
  /* eps > 0: derivatives by differences, and u_eps -> u_0 at order eps */
  {
    double s[3] = {3.1, -1.7, 2.2}, e1, e2, dev = 0;
    for (double eps = 1; eps >= 1e-3; eps /= 10)
      dev = fmax(dev, FDCheck(P, eps, s));
    CHECK(dev < 1e-6, "smoothed law vs differences: %.2e", dev);
    HsControlLawEvalFull(P, 0, s, ue, NULL, NULL);
    HsControlLawEvalFull(P, 1e-3, s, u, NULL, NULL);
    e1 = fabs(u[0] - ue[0]) + fabs(u[1] - ue[1]) + fabs(u[2] - ue[2]);
    HsControlLawEvalFull(P, 1e-4, s, u, NULL, NULL);
    e2 = fabs(u[0] - ue[0]) + fabs(u[1] - ue[1]) + fabs(u[2] - ue[2]);
    printf("smoothed law: differences %.2e; |u_eps - u_0| %.2e (eps 1e-3), %.2e (1e-4)\n", dev, e1, e2);
    CHECK(e1 < 1e-5 && e1 / e2 > 50, "u_eps -> u_0: %.2e, %.2e", e1, e2); /* O(eps^2) off the kinks */
  }
  /* a nearly diagonal R, one finite bound per control: the barrier law is the diagonal sp-law */
  {
    double lo1[3] = {-1, -INFINITY, 0.2}, hi1[3] = {INFINITY, 0.5, INFINITY}, dev = 0, ud;
    double Rd[9] = {2, 1e-14, 0, 1e-14, 0.5, 0, 0, 0, 1.5};
    memcpy(P->R, Rd, sizeof Rd);
    P->u_min = lo1, P->u_max = hi1;
    for (int t = 0; t < 50; t++) {
      double s[3] = {3 * sin(t), 2 * cos(1.7 * t), sin(0.3 * t)}, eps = 0.3 / (1 + t % 5);
      CHECK(HsControlLawEvalFull(P, eps, s, u, NULL, NULL) == HS_SUCCESS, "nearly diagonal eval");
      for (int j = 0; j < 3; j++) {
        HsControlScalar(Rd[j * 4], lo1[j], hi1[j], eps, s[j], &ud, NULL, NULL);
        dev = fmax(dev, fabs(u[j] - ud));
      }
    }
    printf("barrier law vs the diagonal sp-law (one bound each): %.2e\n", dev);
    CHECK(dev < 1e-12, "barrier vs diagonal law: %.2e", dev);
  }
  /* refusals: a zero diagonal entry in a coupled R (bounds of this scope: the block's are gone) */
  double lo9[3] = {-1, -1, -1}, hi9[3] = {1, 1, 1};
  P->u_min = lo9, P->u_max = hi9;
  P->R[0] = 0, P->R[1] = P->R[3] = 0.1;
  CHECK(HsControlLawCheck(P, msg, sizeof msg) == HS_EINVAL && strstr(msg, "positive definite"), "R_11 = 0: %s", msg);
  P->u_min = P->u_max = NULL;
  HsProblemDestroy(&P);
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
