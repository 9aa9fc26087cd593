/* Problem files against the built-in C problems: E, grad E and Hess E at
 * non-trivial states agree to round-off (the file's derivatives are symbolic,
 * the C problems' hand-derived), and B, R, x0, xT, T agree exactly; a
 * parameter set by name updates the derived data (B of the crane). */
#include "../costate/hscostate.h"
#include "../problems/hsmechanical.h"
#include "../problems/hsocp.h"

#include "hscheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double RelDiff(int k, const double *a, const double *b)
{
  double d = 0, s = 1e-300;
  for (int i = 0; i < k; i++)
    d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(a[i]));
  return d / s;
}

/* Running cost (which = 0, at time t) or terminal cost (1): value, gradient, Hessian. */
static void Cost(HsProblem *P, int which, double t, const double *x, double *f, double *g, double *H)
{
  if (which)
    P->phi.f(x, f, P->ctx), P->phi.grad(x, g, P->ctx), P->phi.hess(x, H, P->ctx);
  else
    P->ell.f(t, x, f, P->ctx), P->ell.grad(t, x, g, P->ctx), P->ell.hess(t, x, H, P->ctx);
}

/* Running and terminal costs of the C and the file problem at a few states and times
 * (t on both sides of the target's switching times 1 and 3 for ncar). */
static double CompareCosts(HsProblem *C, HsProblem *F)
{
  int    d     = 2 * C->n;
  double worst = 0, ts[4] = {0.37, 1.6, 2.9, 3.5};
  CHECK(!C->ell.f == !F->ell.f && !C->phi.f == !F->phi.f && C->ell.time_dependent == F->ell.time_dependent,
        "%s: which costs exist, time dependence", C->name);
  for (int which = 0; which < 2; which++) {
    if (which ? !C->phi.f || !F->phi.f : !C->ell.f || !F->ell.f)
      continue;
    for (int w = 0; w < 4; w++) {
      double x[16], f1, f2, g1[16], g2[16], H1[256], H2[256];
      for (int i = 0; i < d; i++)
        x[i] = C->x0[i] + 0.3183 * (w + 1) * sin(1.7 * i + w);
      Cost(C, which, ts[w], x, &f1, g1, H1), Cost(F, which, ts[w], x, &f2, g2, H2);
      worst = fmax(worst, fmax(RelDiff(1, &f1, &f2), fmax(RelDiff(d, g1, g2), RelDiff(d * d, H1, H2))));
    }
  }
  return worst;
}

static void Compare(const char *name, const char *file, const char *param, double value)
{
  HsProblem *C, *F;
  char       msg[1024];
  int        st = HsProblemCreateFromFile(file, &F, msg, sizeof msg);

  CHECK(st == 0, "%s: %s", file, msg);
  if (st)
    return;
  HsProblemCreateByName(name, &C);
  if (param)
    CHECK(HsProblemSetParam(C, param, value) == 0, "%s: -p_%s", name, param);
  {
    int    n = C->n, m = C->m, d = 2 * n;
    double worst = 0, worst3 = 0, wcost = 0;
    CHECK(F->n == n && F->m == m, "%s: dimensions", name);
    CHECK(RelDiff(n * m, C->B, F->B) == 0 && RelDiff(m * m, C->R, F->R) == 0, "%s: B or R differ", name);
    CHECK(RelDiff(d, C->x0, F->x0) < 1e-15 && RelDiff(d, C->xT, F->xT) < 1e-15 && C->T == F->T && C->N == F->N,
          "%s: boundary data differ", name);
    for (int i = 0; i < d; i++)
      CHECK(C->xT_fixed[i] == F->xT_fixed[i], "%s: terminal component %d fixed/free differs", name, i);
    CHECK(F->E.d3 != NULL, "%s: the file problem has no analytic third derivative", name);
    for (int w = 0; w < 3; w++) {
      double x[16], v[16], e1, e2, g1[16], g2[16], H1[256], H2[256], T1[256], T2[256], work[16 + 512];
      for (int i = 0; i < d; i++)
        x[i] = C->x0[i] + 0.3183 * (w + 1) * sin(1.7 * i + w) + (i < n ? 0.1 : 0.7), v[i] = 0.3 - 0.17 * i + 0.1 * w;
      C->E.f(x, &e1, C->ctx), F->E.f(x, &e2, F->ctx);
      C->E.grad(x, g1, C->ctx), F->E.grad(x, g2, F->ctx);
      C->E.hess(x, H1, C->ctx), F->E.hess(x, H2, F->ctx);
      worst = fmax(worst, fmax(RelDiff(1, &e1, &e2), fmax(RelDiff(d, g1, g2), RelDiff(d * d, H1, H2))));
      /* D(Hess E)[v]: the file's symbolic third derivatives against the C problem's (analytic, or
       * differences of its Hessian when it has none: then only to the differences' accuracy) */
      HsFunctionD3(&C->E, d, C->ctx, x, v, T1, work);
      F->E.d3(x, v, T2, F->ctx);
      worst3 = fmax(worst3, RelDiff(d * d, T1, T2) / (C->E.d3 ? 1 : 1e4));
    }
    wcost = CompareCosts(C, F);
    printf("%-13s file vs C: max relative difference over 3 states of E, grad E, Hess E %.1e, D3 E %.1e; costs %.1e\n",
           name, worst, worst3, wcost);
    CHECK(worst < 1e-13, "%s: file and C energies differ by %.2e", name, worst);
    CHECK(worst3 < 1e-13, "%s: file and C third derivatives differ by %.2e (scaled)", name, worst3);
    CHECK(wcost < 1e-13, "%s: file and C costs differ by %.2e", name, wcost);
    CHECK(F->sep.available == C->sep.available && (!C->sep.available || F->sep.mass == C->sep.mass),
          "%s: 1-DOF structure", name);
  }
  HsProblemDestroy(&C);
  HsProblemDestroy(&F);
}

/* A file's running and terminal costs: gradients and Hessians derived
 * symbolically against central differences of the values. */

/* Value, gradient and Hessian (outputs may be NULL) of the running cost at
 * t = 0.37 (which = 0) or of the terminal cost (which = 1). */
static void CostEval(HsProblem *P, int which, const double *x, double *f, double *g, double *H)
{
  if (which) {
    if (f)
      P->phi.f(x, f, P->ctx);
    if (g)
      P->phi.grad(x, g, P->ctx);
    if (H)
      P->phi.hess(x, H, P->ctx);
  } else {
    if (f)
      P->ell.f(0.37, x, f, P->ctx);
    if (g)
      P->ell.grad(0.37, x, g, P->ctx);
    if (H)
      P->ell.hess(0.37, x, H, P->ctx);
  }
}

static void CheckFileCosts(void)
{
  const char *text = "problem: costs\nparam a: 0.3\ncoordinates: x, y\ncontrols: 1\nmass: 2, 0.1, 0.1, 1\n"
                     "potential: a*x^2 + cos(y)\nB: 0, 1\nR: 1\nT: 1\nx0: 0.1, 0.2, 0, 0\nxT: *, 0, *, 0\n"
                     "running_cost: a*(x - 1)^2 + sin(x)*p_y + p_x^2*y\n"
                     "terminal_cost: exp(x*y) + p_x^2\n";
  const char *path = "test_ocp_costs.ocp";
  FILE       *f    = fopen(path, "w");
  HsProblem  *P;
  char        msg[1024];

  fputs(text, f);
  fclose(f);
  CHECK(HsProblemCreateFromFile(path, &P, msg, sizeof msg) == 0, "%s", msg);
  remove(path);
  if (!P)
    return;
  CHECK(!P->xT_fixed[0] && P->xT_fixed[1] && !P->xT_fixed[2] && P->xT_fixed[3], "free terminal components");
  for (int which = 0; which < 2; which++) {
    double x[4] = {0.7183, -0.31, 0.42, 0.27}, g[4], H[16], xp[4], xm[4], fp, fm, gp[4], gm[4], err = 0, eps = 1e-6;
    int    have = which ? (P->phi.f && P->phi.grad && P->phi.hess) : (P->ell.f && P->ell.grad && P->ell.hess);
    CHECK(have, "cost %d missing", which);
    if (!have)
      continue;
    CostEval(P, which, x, NULL, g, H);
    for (int j = 0; j < 4; j++) {
      memcpy(xp, x, sizeof x), memcpy(xm, x, sizeof x);
      xp[j] += eps, xm[j] -= eps;
      CostEval(P, which, xp, &fp, gp, NULL), CostEval(P, which, xm, &fm, gm, NULL);
      err = fmax(err, fabs((fp - fm) / (2 * eps) - g[j]));
      for (int i = 0; i < 4; i++)
        err = fmax(err, fabs((gp[i] - gm[i]) / (2 * eps) - H[i * 4 + j]));
    }
    printf("file %s cost: symbolic gradient and Hessian vs differences: %.1e\n", which ? "terminal" : "running", err);
    CHECK(err < 1e-8, "file cost %d derivatives: %.2e", which, err);
  }
  HsProblemDestroy(&P);
}

/* A B that depends on q (problem file): B(q0) in prob->B, and the first and second derivatives of
 * the Bq callback against central differences of B and dB. */
static void CheckBq(void)
{
  static const char text[] = "coordinates: a, b\ncontrols: 2\nmass: 1, 0, 0, 2\npotential: a^2 + b^2\n"
                             "param l: 1.5\nB: l*cos(a), sin(a*b), a^2 - b, exp(b/3)\nR: 1, 0, 0, 1\nT: 2\n"
                             "x0: 0.3, -0.2, 0, 0\nxT: 1, 1, 0, 0\n";
  HsProblem        *P;
  char              msg[512];
  double            q[2] = {0.7, -0.4}, B[4], dB[8], d2B[16], Bp[4], Bm[4], dBp[8], dBm[8], e1 = 0, e2 = 0, eps = 1e-6;

  CHECK(HsProblemCreateFromText("bq.ocp", text, sizeof text - 1, &P, msg, sizeof msg) == 0, "B(q) file: %s", msg);
  if (!P)
    return;
  CHECK(P->Bq != NULL, "B(q): no callback");
  CHECK(fabs(P->B[0] - 1.5 * cos(0.3)) < 1e-15 && fabs(P->B[1] - sin(-0.06)) < 1e-15, "B(q0) in prob->B");
  P->Bq(q, B, dB, d2B, P->ctx);
  CHECK(fabs(B[2] - (0.49 + 0.4)) < 1e-15 && fabs(B[3] - exp(-0.4 / 3)) < 1e-15, "B(q) values");
  for (int l = 0; l < 2; l++) {
    double qp[2] = {q[0], q[1]}, qm[2] = {q[0], q[1]};
    qp[l] += eps, qm[l] -= eps;
    P->Bq(qp, Bp, dBp, NULL, P->ctx), P->Bq(qm, Bm, dBm, NULL, P->ctx);
    for (int e = 0; e < 4; e++) {
      e1 = fmax(e1, fabs((Bp[e] - Bm[e]) / (2 * eps) - dB[e * 2 + l]));
      for (int r = 0; r < 2; r++)
        e2 = fmax(e2, fabs((dBp[e * 2 + r] - dBm[e * 2 + r]) / (2 * eps) - d2B[(e * 2 + r) * 2 + l]));
    }
  }
  printf("B(q) file: dB and d2B against central differences: %.1e, %.1e\n", e1, e2);
  CHECK(e1 < 1e-9 && e2 < 1e-9, "B(q) derivatives: %.3e %.3e", e1, e2);
  CHECK(HsProblemSetParam(P, "l", 2) == 0 && fabs(P->B[0] - 2 * cos(0.3)) < 1e-15, "B(q0) after -p_l");
  HsProblemDestroy(&P);
}

/* A free T in the data (docs/free-final-time.md): the symbolic T-derivatives of a file's M, V (E_T and its
 * gradient through the mass-matrix formulas of problems/mechanical.c), running cost, B(q), R and x0 against
 * central differences of the same data at T +- eps (HsProblemSetFinalTime), and dH^d/dT of each state
 * scheme (HsDiscHamiltonianT: the discrete gradient of E_T, the control held) against differences of H^d. */
static void CheckDataT(void)
{
  static const char two[]    = "coordinates: a, b\ncontrols: 2\n"
                               "mass: 2 + 0.3*cos(b)*T, 0.1*T*sin(a), 0.1*T*sin(a), 1 + 0.05*T^2\n"
                               "potential: (a^2 + b^2)*T - cos(a + b*T)\nB: cos(b*T), 0.3*sin(a), 0.5 + 0.2*a*T, 1\n"
                               "R: 1 + 0.1*T, 0.2, 0.2, 2\nrunning_cost: (a - 0.4)^2*T + 0.1*p_b^2*T^2 + 0.5\n"
                               "T: free 1.7\nx0: 0.1*T, -0.1, 0.01*T^2, 0\nxT: 1, 0.5, *, *\n";
  static const char one[]    = "coordinates: q\ncontrols: 1\nmass: 1 + 0.1*T\npotential: -9.81*sin(q)*(1 + 0.05*T)\n"
                               "B: 1 + 0.1*T\nR: 1 + 0.2*T\nrunning_cost: 1 + 0.05*T*q^2\nT: free 3\nx0: -0.05*T, 0\n"
                               "xT: 1.5, 0\n";
  const char       *texts[2] = {two, one},
             *schemes[2][3]  = {{"gonzalez", "midpoint", NULL}, {"greenspan", "gonzalez", "midpoint"}};
  double eps = 1e-5, errE = 0, errH = 0;

  for (int f = 0; f < 2; f++) {
    HsProblem *P;
    char       msg[512];
    int        d, n, m;
    double T0, x[4] = {0.4, -0.3, 0.7, -0.2}, ET, gET[4], Ep, Em, gp[4], gm[4], lT, lp, lm, BT[4], RT[4], Bp[4], Bm[4];
    double x0p[4], x0m[4];
    CHECK(HsProblemCreateFromText("dataT.ocp", texts[f], strlen(texts[f]), &P, msg, sizeof msg) == 0,
          "T in the data: %s", msg);
    if (!P)
      return;
    d = 2 * P->n, n = P->n, m = P->m, T0 = P->T;
    CHECK(P->data_T && P->E_T.f && P->ell_T && P->BR_T && P->x0_T, "T in the data: callbacks missing");
    if (f == 1) /* 1 DOF: x = (q, p) */
      x[1] = 0.7;
    P->E_T.f(x, &ET, P->ctx), P->E_T.grad(x, gET, P->ctx), P->ell_T(x, &lT, P->ctx), P->BR_T(x, BT, RT, P->ctx);
    for (int side = 0; side < 2; side++) {
      HsProblemSetFinalTime(P, T0 + (side ? -eps : eps));
      P->E.f(x, side ? &Em : &Ep, P->ctx), P->E.grad(x, side ? gm : gp, P->ctx);
      P->ell.f(0, x, side ? &lm : &lp, P->ctx);
      if (P->Bq)
        P->Bq(x, side ? Bm : Bp, NULL, NULL, P->ctx);
      else
        memcpy(side ? Bm : Bp, P->B, sizeof(double) * (size_t)(n * m));
      memcpy(side ? x0m : x0p, P->x0, sizeof(double) * (size_t)d);
    }
    errE = fmax(errE, fabs((Ep - Em) / (2 * eps) - ET) / fmax(1, fabs(ET)));
    for (int i = 0; i < d; i++)
      errE = fmax(errE, fabs((gp[i] - gm[i]) / (2 * eps) - gET[i]) / fmax(1, fabs(gET[i])));
    errE = fmax(errE, fabs((lp - lm) / (2 * eps) - lT));
    for (int i = 0; i < n * m; i++)
      errE = fmax(errE, fabs((Bp[i] - Bm[i]) / (2 * eps) - BT[i]));
    HsProblemSetFinalTime(P, T0);
    for (int i = 0; i < d; i++)
      errE = fmax(errE, fabs((x0p[i] - x0m[i]) / (2 * eps) - P->x0_T[i]));
    for (int i = 0; i < m * m; i++) { /* R_T */
      double Rp, Rm;
      HsProblemSetFinalTime(P, T0 + eps), Rp = P->R[i];
      HsProblemSetFinalTime(P, T0 - eps), Rm = P->R[i];
      errE = fmax(errE, fabs((Rp - Rm) / (2 * eps) - RT[i]));
    }
    HsProblemSetFinalTime(P, T0);
    for (int sc = 0; sc < 3 && schemes[f][sc]; sc++) {
      HsDisc *D;
      double  xa[4], xb[4], lam[4], HT, Hp, Hm;
      for (int i = 0; i < d; i++)
        xa[i] = x[i], xb[i] = x[i] + 0.05 * (i + 1), lam[i] = 0.3 - 0.2 * i;
      CHECK(HsDiscCreate(P, schemes[f][sc], "kkt", 20, HS_DG_TOL_DEFAULT, &D, msg, sizeof msg) == 0, "disc: %s", msg);
      if (!D)
        continue;
      HsDiscHamiltonianT(D, 3, xa, xb, lam, &HT);
      HsProblemSetFinalTime(P, T0 + eps), HsDiscSetHorizon(D), HsDiscHamiltonian(D, 3, xa, xb, lam, &Hp);
      HsProblemSetFinalTime(P, T0 - eps), HsDiscSetHorizon(D), HsDiscHamiltonian(D, 3, xa, xb, lam, &Hm);
      HsProblemSetFinalTime(P, T0), HsDiscSetHorizon(D);
      errH = fmax(errH, fabs((Hp - Hm) / (2 * eps) - HT) / fmax(1, fabs(HT)));
      printf("T in the data, %s: dH^d/dT = %.12f, difference %.12f\n", schemes[f][sc], HT, (Hp - Hm) / (2 * eps));
      HsDiscDestroy(&D);
    }
    HsProblemDestroy(&P);
  }
  printf("T in the data: E_T, grad E_T, ell_T, B_T, R_T, x0_T vs differences %.1e; dH^d/dT %.1e\n", errE, errH);
  CHECK(errE < 1e-8, "T in the data: derivatives vs differences %.2e", errE);
  CHECK(errH < 1e-8, "T in the data: dH^d/dT vs differences %.2e", errH);
}

int main(int argc, char **argv)
{
  const char *dir     = argc > 1 ? argv[1] : "problems";
  const char *names[] = {"pendulum", "kepler", "crane", "manipulator3", "manipulator3", "ncar", "ncar"};
  const char *files[] = {"pendulum", "kepler", "crane", "manipulator3", "manipulator3_kinetic", "ncar2", "ncar3"};
  char        path[512];

  for (int i = 0; i < 7; i++) {
    snprintf(path, sizeof path, "%s/%s.ocp", dir, files[i]);
    Compare(names[i], path, i == 6 ? "cars" : NULL, 3);
  }
  {
    HsProblem *F;
    char       msg[1024];
    snprintf(path, sizeof path, "%s/crane.ocp", dir);
    if (HsProblemCreateFromFile(path, &F, msg, sizeof msg) == 0) {
      CHECK(HsProblemSetParam(F, "r", 0.2) == 0 && fabs(F->B[3] - 5) < 1e-15, "crane file: B did not follow r");
      CHECK(HsProblemSetParam(F, "nonesuch", 1) == HS_EUNKNOWN, "unknown parameter accepted");
      HsProblemDestroy(&F);
    }
  }
  CheckFileCosts();
  CheckBq();
  CheckDataT();
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
