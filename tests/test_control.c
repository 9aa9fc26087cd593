/* Unit tests of the bounded control law (costate/control.c, serial): psi' = u and u' = du/ds against central
 * differences for the smoothed box law and the bang-bang law; eps = 0 is the exact projection and psi the exact
 * maximum of s u - r u^2/2 over the box (brute force); the smoothed law tends to it as eps -> 0; every refusal
 * (an indefinite non-diagonal R with bounds, R_jj = 0 without two finite bounds, eps = 0 for bang-bang) provoked. */
#include "../costate/hscontrol.h"

#include "hscheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* max over a fine grid of the box of s u - r u^2/2, refined around the best point */
static double BruteMax(double r, double lo, double hi, double s)
{
  double a = isfinite(lo) ? lo : -50, b = isfinite(hi) ? hi : 50, best = -INFINITY, ub = a;
  for (int pass = 0; pass < 3; pass++) {
    for (int i = 0; i <= 2000; i++) {
      double u = a + (b - a) * i / 2000, v = s * u - r * u * u / 2;
      if (v > best)
        best = v, ub = u;
    }
    double w = (b - a) / 1000;
    a = fmax(a, ub - w), b = fmin(b, ub + w);
  }
  return best;
}

static void CheckDerivatives(double r, double lo, double hi, double eps, double s)
{
  double u, psi, duds, up, um, pp, pm, d = 1e-5 * (1 + fabs(s));
  CHECK(HsControlScalar(r, lo, hi, eps, s, &u, &psi, &duds) == HS_SUCCESS, "r %g eps %g: refused", r, eps);
  HsControlScalar(r, lo, hi, eps, s + d, &up, &pp, NULL);
  HsControlScalar(r, lo, hi, eps, s - d, &um, &pm, NULL);
  CHECK(fabs((pp - pm) / (2 * d) - u) < 1e-8 * (1 + fabs(u)), "r %g [%g, %g] eps %g s %g: psi' %.12g vs u %.12g", r, lo,
        hi, eps, s, (pp - pm) / (2 * d), u);
  CHECK(fabs((up - um) / (2 * d) - duds) < 1e-6 * (1 + fabs(duds)), "r %g [%g, %g] eps %g s %g: u' %.12g vs %.12g", r,
        lo, hi, eps, s, (up - um) / (2 * d), duds);
  CHECK(duds > 0 && (r == 0 || duds <= 1 / r), "du/ds %g outside (0, 1/r]", duds);
  CHECK(u > lo && u < hi, "u %g outside (%g, %g)", u, lo, hi);
}

int main(void)
{
  const double r[]  = {1, 0.37, 2.5};
  const double lo[] = {-0.7183, -INFINITY, -3, 0.2}, hi[] = {1.3, 0.45, INFINITY, 0.9};
  const double ss[] = {-4.1, -0.9, -0.21, 0.0, 0.33, 0.8, 1.29, 1.31, 3.7};
  const double es[] = {0.5, 0.05, 1e-3};

  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 4; b++)
      for (int k = 0; k < 9; k++) {
        double s = ss[k] * r[i], u0, p0, d0, ue, pe;
        /* smoothed: derivatives */
        for (int e = 0; e < 3; e++)
          CheckDerivatives(r[i], lo[b], hi[b], es[e], s);
        /* exact: projection and maximum */
        HsControlScalar(r[i], lo[b], hi[b], 0, s, &u0, &p0, &d0);
        double w = s / r[i], uc = fmin(fmax(w, lo[b]), hi[b]);
        CHECK(u0 == uc, "eps 0: u %.17g vs clamp %.17g", u0, uc);
        CHECK(fabs(p0 - BruteMax(r[i], lo[b], hi[b], s)) < 1e-9 * (1 + fabs(p0)), "eps 0: psi %.15g vs max %.15g", p0,
              BruteMax(r[i], lo[b], hi[b], s));
        CHECK(d0 == ((w >= lo[b] && w <= hi[b]) ? 1 / r[i] : 0), "eps 0: du/ds %g", d0);
        /* the smoothed law tends to the exact one: |u - u0| <= eps/2, psi within O(eps^2 log) */
        HsControlScalar(r[i], lo[b], hi[b], 1e-6, s, &ue, &pe, NULL);
        CHECK(fabs(ue - u0) <= 0.5e-6 * 1.0001 && fabs(pe - p0) < 1e-10 * r[i] * 40,
              "eps 1e-6: u %g vs %g, psi %g vs %g", ue, u0, pe, p0);
      }
  /* bang-bang: derivatives, the limit sign law, psi -> mid s + half |s| */
  for (int k = 0; k < 9; k++) {
    double s = ss[k], u, psi;
    if (s == 0)
      continue;
    for (int e = 0; e < 3; e++)
      CheckDerivatives(0, -0.7183, 1.3, es[e], s);
    HsControlScalar(0, -0.7183, 1.3, 1e-9, s, &u, &psi, NULL);
    CHECK(fabs(u - (s > 0 ? 1.3 : -0.7183)) < 1e-7, "bang-bang s %g: u %g", s, u);
    CHECK(fabs(psi - (0.29085 * s + 1.00915 * fabs(s))) < 2e-9, "bang-bang s %g: psi %.12g", s, psi);
  }
  /* refusals of the scalar law */
  CHECK(HsControlScalar(0, -1, 1, 0, 0.3, NULL, NULL, NULL) == HS_EINVAL, "bang-bang eps 0 accepted");
  CHECK(HsControlScalar(0, -INFINITY, 1, 0.1, 0.3, NULL, NULL, NULL) == HS_EINVAL, "bang-bang half-bounded accepted");
  CHECK(HsControlScalar(-1, -1, 1, 0.1, 0.3, NULL, NULL, NULL) == HS_EINVAL, "r < 0 accepted");
  CHECK(HsControlScalar(1, 1, -1, 0.1, 0.3, NULL, NULL, NULL) == HS_EINVAL, "lo > hi accepted");
  CHECK(HsControlScalar(1, -1, 1, -0.1, 0.3, NULL, NULL, NULL) == HS_EINVAL, "eps < 0 accepted");

  /* the problem-level check and evaluation: two controls */
  {
    HsProblem *P        = NULL;
    char       msg[512] = "";
    double     s[2]     = {2.1, -0.4}, u[2], duds[2], psi, u0, p0, p1;
    CHECK(HsProblemAllocate("twoctl", 1, 2, &P) == HS_SUCCESS, "allocate");
    P->R[0] = 1, P->R[1] = 0.2, P->R[2] = 0.2, P->R[3] = 2;
    CHECK(!HsControlLawActive(P) && HsControlLawCheck(P, msg, sizeof msg) == HS_SUCCESS, "unbounded refused");
    P->u_min = (double[]){-1, -INFINITY}, P->u_max = (double[]){1, INFINITY};
    CHECK(HsControlLawActive(P), "bounded not active");
    CHECK(HsControlLawCheck(P, msg, sizeof msg) == HS_SUCCESS, "non-diagonal positive definite R refused: %s", msg);
    P->R[1] = P->R[2] = 2; /* indefinite: the coupled law needs a strictly concave maximum condition */
    CHECK(HsControlLawCheck(P, msg, sizeof msg) == HS_EINVAL && strstr(msg, "'twoctl'") &&
              strstr(msg, "not symmetric positive definite"),
          "indefinite R: %s", msg);
    P->R[1] = P->R[2] = 0;
    CHECK(HsControlLawCheck(P, msg, sizeof msg) == HS_SUCCESS, "diagonal R refused: %s", msg);
    CHECK(HsControlLawEval(P, 0, s, u, &psi, duds) == HS_SUCCESS, "eval");
    HsControlScalar(1, -1, 1, 0, 2.1, &u0, &p0, NULL);
    HsControlScalar(2, -INFINITY, INFINITY, 0, -0.4, NULL, &p1, NULL);
    CHECK(u[0] == 1 && u[1] == -0.2 && duds[0] == 0 && duds[1] == 0.5 && psi == p0 + p1, "eval: u %g %g psi %g", u[0],
          u[1], psi);
    P->R[3] = 0;
    CHECK(HsControlLawCheck(P, msg, sizeof msg) == HS_EINVAL && strstr(msg, "control 2"), "R_22 = 0 unbounded: %s",
          msg);
    P->u_min = P->u_max = NULL;
    HsProblemDestroy(&P);
  }
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
