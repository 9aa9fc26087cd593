/* Unit tests of the shooting march (costate/march.c, serial): the marched
 * trajectory solves the discrete equations; the sensitivities equal central
 * differences of the march itself; a warm start from a march reproduces it;
 * every failure status is provoked and named; bad arguments are refused; the march's
 * shortcuts (chord updates, shifted warm starts, the memo of discrete gradients, the
 * small dense LU) give what Newton at every step and the plain evaluations give. */
#include "../costate/hsdiscimpl.h" /* HsDiscSetMemo, HsGreenspanQuotient */
#include "../costate/hsmarch.h"
#include "ell_test_problem.h"

#include "hscheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double MaxAbs(int n, const double *a)
{
  double m = 0;
  for (int i = 0; i < n; i++)
    m = fmax(m, fabs(a[i]));
  return m;
}

/* A start z = (x_ks, lambda_{ks+1/2}) near the problem's data with non-trivial costates. */
static void StartOf(const HsProblem *P, double *z)
{
  int dim = 2 * P->n;
  for (int i = 0; i < dim; i++) {
    z[i]       = P->x0[i] + 0.1 * (i + 1);
    z[dim + i] = 0.37 - 0.21 * i;
  }
}

/* The marched rows satisfy the state equations of every interval and the
 * costate equations of every interior node to the march's tolerance. */
static void CheckResiduals(HsDisc *d, const char *what, int ks, int len, const double *traj)
{
  int    dim = HsDiscGetDim(d), w = 2 * dim;
  double R[64], worst = 0, ymax = MaxAbs((len + 1) * w - dim, traj);
  for (int j = 0; j < len; j++) {
    const double *xk = traj + j * w, *xn = xk + w;
    HsDiscStateResidual(d, xk, xn, xk + dim, R);
    worst = fmax(worst, MaxAbs(dim, R));
    if (j > 0) {
      HsDiscCostateResidual(d, ks + j, xk - w, xk, xn, xk - w + dim, xk + dim, R);
      worst = fmax(worst, MaxAbs(dim, R));
    }
  }
  printf("%-34s march residual %.2e (|y| %.2e)\n", what, worst, ymax);
  CHECK(worst <= 1e-13 * (1 + ymax), "%s: marched trajectory leaves residual %.3e", what, worst);
}

/* Sensitivities of HsMarchSegment against central differences of the march:
 * S(x_{ks+1}), S(x_{b-1}), S(lambda_{b-1/2}), S(x_b) column by column. */
static double CheckSensitivities(HsProblem *P, const char *label, const char *ss, const char *cs, int N, int ks,
                                 int len)
{
  HsDisc  *d;
  HsMarch *m;
  char     msg[256], what[96];
  int      dim = 2 * P->n, w = 2 * dim, st;
  double  *traj = calloc((size_t)((len + 1) * w), sizeof(double)), *tp = calloc((size_t)((len + 1) * w), sizeof(double));
  double  *tm = calloc((size_t)((len + 1) * w), sizeof(double)), *S = calloc((size_t)(4 * dim * w), sizeof(double));
  double   z[64], zp[64], growth = 0, err = 0, smax;

  snprintf(what, sizeof what, "%s %s+%s k=%d..%d", label, ss, cs, ks, ks + len);
  if (HsDiscCreate(P, ss, cs, N, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg) || HsMarchCreate(d, &m)) {
    CHECK(0, "%s: %s", what, msg);
    return 0;
  }
  StartOf(P, z);
  st = HsMarchSegment(m, ks, len, z, 0, traj, S, &growth);
  CHECK(st == HS_SUCCESS, "%s: march failed: %s", what, HsMarchGetFailure(m));
  CheckResiduals(d, what, ks, len, traj);
  smax = MaxAbs(4 * dim * w, S);
  for (int c = 0; c < w && st == HS_SUCCESS; c++) {
    /* end data y(z): x_{ks+1}, x_{b-1}, lambda_{b-1/2}, x_b at rows 1, len-1 (x and lambda), len */
    const int row[4] = {1, len - 1, len - 1, len}, off[4] = {0, 0, dim, 0};
    double    eps    = 1e-6 * (1 + fabs(z[c]));
    memcpy(zp, z, sizeof z);
    zp[c] = z[c] + eps;
    st    = HsMarchSegment(m, ks, len, zp, 0, tp, NULL, NULL);
    zp[c] = z[c] - eps;
    st    = st ? st : HsMarchSegment(m, ks, len, zp, 0, tm, NULL, NULL);
    for (int b = 0; b < 4 && !st; b++)
      for (int i = 0; i < dim; i++) {
        int    at = row[b] * w + off[b] + i;
        double fd = (tp[at] - tm[at]) / (2 * eps);
        err       = fmax(err, fabs(fd - S[b * dim * w + i * w + c]));
      }
  }
  printf("%-34s sensitivities vs FD %.2e (|S| %.2e, growth %.3g)\n", what, err, smax, growth);
  CHECK(st == HS_SUCCESS && err <= 1e-6 * (1 + smax), "%s: sensitivity error %.3e", what, err);
  CHECK(growth >= 1 && growth >= MaxAbs(dim * w, S + 3 * dim * w),
        "%s: growth %.3e below |S(x_b)|", what, growth);
  /* a warm start from this march reproduces it (one Newton check per step, no update) */
  memcpy(tp, traj, sizeof(double) * (size_t)((len + 1) * w));
  err = 0;
  st  = HsMarchSegment(m, ks, len, z, 1, tp, NULL, NULL);
  CHECK(st == HS_SUCCESS && MaxAbs((len + 1) * w - dim, tp) > 0, "%s: warm march failed", what);
  for (int i = 0; i < (len + 1) * w - dim; i++)
    err = fmax(err, fabs(tp[i] - traj[i]));
  CHECK(err <= 1e-12 * (1 + MaxAbs((len + 1) * w, traj)), "%s: warm march differs by %.3e", what, err);
  HsMarchDestroy(&m);
  CHECK(m == NULL, "HsMarchDestroy did not set NULL");
  HsDiscDestroy(&d);
  free(traj), free(tp), free(tm), free(S);
  return growth;
}

/* Free final time (HsMarchSetFreeTime, HsMarchSetHamiltonianSum): the d/dh column of the
 * sensitivities and the gradient of the summed H^d against central differences of the march in
 * h (T moved, HsDiscSetHorizon) and in z. */
static void CheckFreeTime(HsProblem *P, const char *label, const char *ss, const char *cs, int N, int ks, int len)
{
  HsDisc       *d;
  HsMarch      *m;
  char          msg[256], what[96];
  int           dim = 2 * P->n, w = 2 * dim, ws = w + 1, st;
  double       *traj = calloc((size_t)((len + 1) * w), sizeof(double)), *tp = calloc((size_t)((len + 1) * w), sizeof(double));
  double       *tm = calloc((size_t)((len + 1) * w), sizeof(double)), *S = calloc((size_t)(4 * dim * ws), sizeof(double));
  double        z[64], zp[64], g[65], hsp, hsm, hs, err = 0, errH = 0, T0 = P->T, smax;
  const double *grad;

  snprintf(what, sizeof what, "free T: %s %s+%s k=%d..%d", label, ss, cs, ks, ks + len);
  if (HsDiscCreate(P, ss, cs, N, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg) || HsMarchCreate(d, &m)) {
    CHECK(0, "%s: %s", what, msg);
    return;
  }
  HsMarchSetFreeTime(m, 1);
  HsMarchSetHamiltonianSum(m, 1);
  StartOf(P, z);
  st = HsMarchSegment(m, ks, len, z, 0, traj, S, NULL);
  HsMarchGetHamiltonianSum(m, &hs, &grad);
  memcpy(g, grad, sizeof(double) * (size_t)ws);
  CHECK(st == HS_SUCCESS, "%s: march failed: %s", what, HsMarchGetFailure(m));
  smax = MaxAbs(4 * dim * ws, S);
  for (int c = 0; c < ws && st == HS_SUCCESS; c++) {
    const int row[4] = {1, len - 1, len - 1, len}, off[4] = {0, 0, dim, 0};
    double    eps    = c < w ? 1e-6 * (1 + fabs(z[c])) : 1e-6 * HsDiscGetStep(d);
    memcpy(zp, z, sizeof z);
    if (c < w)
      zp[c] = z[c] + eps;
    else
      P->T = (HsDiscGetStep(d) + eps) * N, HsDiscSetHorizon(d);
    st = HsMarchSegment(m, ks, len, zp, 0, tp, NULL, NULL);
    HsMarchGetHamiltonianSum(m, &hsp, NULL);
    if (c < w)
      zp[c] = z[c] - eps;
    else
      P->T = (T0 / N - eps) * N, HsDiscSetHorizon(d);
    st = st ? st : HsMarchSegment(m, ks, len, zp, 0, tm, NULL, NULL);
    HsMarchGetHamiltonianSum(m, &hsm, NULL);
    P->T = T0, HsDiscSetHorizon(d);
    for (int b = 0; b < 4 && !st; b++)
      for (int i = 0; i < dim; i++) {
        int    at = row[b] * w + off[b] + i;
        double fd = (tp[at] - tm[at]) / (2 * eps);
        err       = fmax(err, fabs(fd - S[b * dim * ws + i * ws + c]));
      }
    errH = fmax(errH, fabs((hsp - hsm) / (2 * eps) - g[c]));
  }
  printf("%-46s dy/dh and d(sum H)/d(z, h) vs FD %.2e, %.2e (|S| %.2e, sum H %.4g)\n", what, err, errH, smax, hs);
  CHECK(st == HS_SUCCESS && err <= 1e-6 * (1 + smax), "%s: h-sensitivity error %.3e", what, err);
  CHECK(errH <= 1e-6 * (1 + MaxAbs(ws, g)), "%s: H-sum gradient error %.3e", what, errH);
  HsMarchDestroy(&m);
  HsDiscDestroy(&d);
  free(traj), free(tp), free(tm), free(S);
}

/* A pendulum whose energy callbacks fail fatally (-1) once q exceeds 0.5. */
static HsFunction pend_E;
static int        FatalE(const double *x, double *f, void *ctx) { return x[0] > 0.5 ? -1 : pend_E.f(x, f, ctx); }
static int FatalGrad(const double *x, double *g, void *ctx) { return x[0] > 0.5 ? -1 : pend_E.grad(x, g, ctx); }
static int FatalHess(const double *x, double *H, void *ctx) { return x[0] > 0.5 ? -1 : pend_E.hess(x, H, ctx); }

/* Each failure status of the march, provoked on purpose, with its message. */
static void CheckFailures(void)
{
  HsProblem *P, *K, *S;
  HsDisc    *d;
  HsMarch   *m;
  char       msg[256];
  double     z[12], traj[41 * 12], xp[6], lp[6];
  int        st;

  if (HsProblemCreateByName("pendulum", &P) || HsProblemCreateByName("kepler", &K) ||
      HsProblemCreateByName("saddle", &S)) {
    CHECK(0, "cannot create the test problems");
    return;
  }
  CHECK(HsMarchCreate(NULL, &m) == HS_EINVAL && m == NULL, "march without a discretization accepted");
  /* HS_ENOCONV: one Newton update allowed, from the linear extrapolation */
  HsDiscCreate(P, "greenspan", "conserving_1dof", 20, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg);
  HsMarchCreate(d, &m);
  CHECK(HsMarchSetTolerances(m, 0, 1e-12, 5) == HS_ERANGE && HsMarchSetTolerances(m, 1e-14, 1.5, 5) == HS_ERANGE &&
            HsMarchSetTolerances(m, 1e-14, 1e-12, 0) == HS_ERANGE,
        "bad tolerances accepted");
  {
    double a, s;
    int    it;
    HsMarchGetTolerances(m, &a, &s, &it);
    CHECK(a == HS_MARCH_ATOL_DEFAULT && s == HS_MARCH_STOL_DEFAULT && it == HS_MARCH_MAX_IT_DEFAULT,
          "a refused setting changed the tolerances");
  }
  CHECK(HsMarchSetTolerances(m, 1e-15, 1e-15, 1) == HS_SUCCESS, "tolerances refused");
  StartOf(P, z);
  z[2] = 3, z[3] = -2; /* large costates: a strongly nonlinear first step */
  st = HsMarchSegment(m, 0, 10, z, 0, traj, NULL, NULL);
  printf("max_it 1:            status %d: %s\n", st, HsMarchGetFailure(m));
  CHECK(st == HS_ENOCONV && strstr(HsMarchGetFailure(m), "did not converge in 1 iterations"),
        "expected HS_ENOCONV, got %d (%s)", st, HsMarchGetFailure(m));
  CHECK(HsMarchSegment(m, 0, 0, z, 0, traj, NULL, NULL) == HS_EINVAL, "an empty segment accepted");
  /* HS_EDOM from a residual that is not finite */
  HsMarchSetTolerances(m, HS_MARCH_ATOL_DEFAULT, HS_MARCH_STOL_DEFAULT, HS_MARCH_MAX_IT_DEFAULT);
  z[0] = 1e308, z[1] = -1e308;
  st   = HsMarchSegment(m, 0, 10, z, 0, traj, NULL, NULL);
  printf("overflow:            status %d: %s\n", st, HsMarchGetFailure(m));
  CHECK(st == HS_EDOM && strstr(HsMarchGetFailure(m), "not finite"), "expected HS_EDOM (overflow), got %d (%s)", st,
        HsMarchGetFailure(m));
  HsMarchDestroy(&m), HsDiscDestroy(&d);
  /* HS_EFAILED: a callback that fails fatally once the march reaches q > 0.5 */
  pend_E = P->E;
  P->E.f = FatalE, P->E.grad = FatalGrad, P->E.hess = FatalHess;
  HsDiscCreate(P, "midpoint", "trapezoidal", 20, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg);
  HsMarchCreate(d, &m);
  StartOf(P, z);
  z[0] = 0.1, z[1] = 1; /* q grows by about h p = 0.15 per step: the guess of step 2 has q > 0.5 */
  st = HsMarchSegment(m, 0, 10, z, 0, traj, NULL, NULL);
  printf("fatal callback:      status %d: %s\n", st, HsMarchGetFailure(m));
  CHECK(st == HS_EFAILED && strstr(HsMarchGetFailure(m), "callback failed"), "expected HS_EFAILED, got %d (%s)", st,
        HsMarchGetFailure(m));
  HsMarchDestroy(&m), HsDiscDestroy(&d);
  P->E = pend_E;
  /* HS_EDOM from the problem: kepler at q = 0 */
  HsDiscCreate(K, "gonzalez", "conserving", 20, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg);
  HsMarchCreate(d, &m);
  memset(z, 0, sizeof z);
  z[4] = 1;
  st = HsMarchSegment(m, 3, 5, z, 0, traj, NULL, NULL);
  printf("kepler at q = 0:     status %d: %s\n", st, HsMarchGetFailure(m));
  CHECK(st == HS_EDOM && strstr(HsMarchGetFailure(m), "step 3: the state left the problem's domain"),
        "expected HS_EDOM at step 3, got %d (%s)", st, HsMarchGetFailure(m));
  HsMarchDestroy(&m), HsDiscDestroy(&d);
  /* HS_ESINGULAR: saddle (E = p^2/2 - omega^2 q^2/2), midpoint states with h omega = 2: the
   * first step's Jacobian I - (h/2) JJ Hess E has the eigenvalue 1 - h omega / 2 = 0 exactly */
  HsProblemSetParam(S, "omega", 4); /* T = 10, N = 20: h = 0.5 */
  HsDiscCreate(S, "midpoint", "trapezoidal", 20, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg);
  HsMarchCreate(d, &m);
  z[0] = 1, z[1] = 0, z[2] = 0.3, z[3] = 0.2;
  st = HsMarchSegment(m, 0, 4, z, 0, traj, NULL, NULL);
  printf("singular step:       status %d: %s\n", st, HsMarchGetFailure(m));
  CHECK(st == HS_ESINGULAR && strstr(HsMarchGetFailure(m), "step 0: the step Jacobian is singular"),
        "expected HS_ESINGULAR at step 0, got %d (%s)", st, HsMarchGetFailure(m));
  /* one step alone: the same */
  xp[0] = 1, xp[1] = 0, lp[0] = 0.3, lp[1] = 0.2;
  CHECK(HsMarchStep(m, 0, 1, NULL, z, NULL, xp, lp) == HS_ESINGULAR, "HsMarchStep: singular not reported");
  HsMarchDestroy(&m), HsDiscDestroy(&d);
  HsProblemDestroy(&P), HsProblemDestroy(&K), HsProblemDestroy(&S);
}

/* HsLUFactor/HsLUSolve (costate/hsdense.h) on an 8 x 8 system whose diagonal is zero in places (pivoting needed),
 * against a known solution X (8 x 3); a matrix with two equal rows is reported singular. */
static void CheckDenseLU(void)
{
  double A[64], LU[64], X[24], B[24], err = 0;
  int    piv[8];

  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) /* rows of 4 I + 0.3 cos(i + 2j), cyclically shifted by 3: A_jj small or 0 */
      A[i * 8 + j] = ((i + 3) % 8 == j ? 4.0 : 0.0) + 0.3 * cos(0.7183 * (i + 2 * j));
  for (int i = 0; i < 8; i++)
    A[i * 8 + i] = 0;
  for (int i = 0; i < 24; i++)
    X[i] = sin(1.3 * i + 0.2);
  for (int i = 0; i < 8; i++)
    for (int c = 0; c < 3; c++) {
      B[i * 3 + c] = 0;
      for (int l = 0; l < 8; l++)
        B[i * 3 + c] += A[i * 8 + l] * X[l * 3 + c];
    }
  memcpy(LU, A, sizeof A);
  CHECK(HsLUFactor(8, LU, piv) == 0, "HsLUFactor: a regular matrix reported singular");
  CHECK(HsLUSolve(8, LU, piv, 3, B) == 0, "HsLUSolve: a regular matrix reported singular");
  for (int i = 0; i < 24; i++)
    err = fmax(err, fabs(B[i] - X[i]));
  printf("%-34s |X - A^{-1} (A X)| %.2e\n", "dense LU 8x8, 3 columns", err);
  CHECK(err <= 1e-13, "HsLUSolve: error %.3e", err);
  memcpy(LU, A, sizeof A);
  memcpy(LU + 5 * 8, LU + 2 * 8, 8 * sizeof(double)); /* row 5 = row 2 */
  CHECK(HsLUFactor(8, LU, piv) == 1 && HsLUSolve(8, LU, piv, 3, B) == 1, "dense LU: equal rows not singular");
}

/* The residual march (chord updates, no sensitivities) against the march with sensitivities (the step Jacobian
 * factored at every iterate), cold and warm: a warm march at z + dz started from the march at z (the shifted warm
 * start) against a cold one at z + dz. All must solve the same step equations to the march's tolerance. */
static void CheckChord(HsProblem *P, const char *label, const char *ss, const char *cs, int N, int ks, int len,
                       double dz)
{
  HsDisc  *d;
  HsMarch *m;
  char     msg[256], what[96];
  int      dim = 2 * P->n, w = 2 * dim, rows = (len + 1) * w - dim, st;
  double  *tc = calloc((size_t)((len + 1) * w), sizeof(double)), *tn = calloc((size_t)((len + 1) * w), sizeof(double));
  double  *S = calloc((size_t)(4 * dim * w), sizeof(double)), z[64], e_cold = 0, e_warm = 0, ymax;

  snprintf(what, sizeof what, "chord %s %s+%s N=%d k=%d..%d", label, ss, cs, N, ks, ks + len);
  if (HsDiscCreate(P, ss, cs, N, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg) || HsMarchCreate(d, &m)) {
    CHECK(0, "%s: %s", what, msg);
    return;
  }
  StartOf(P, z);
  st = HsMarchSegment(m, ks, len, z, 0, tc, NULL, NULL);
  st = st ? st : HsMarchSegment(m, ks, len, z, 0, tn, S, NULL);
  CHECK(st == HS_SUCCESS, "%s: march failed: %s", what, HsMarchGetFailure(m));
  ymax = MaxAbs(rows, tn);
  for (int i = 0; i < rows; i++)
    e_cold = fmax(e_cold, fabs(tc[i] - tn[i]));
  CheckResiduals(d, what, ks, len, tc);
  CHECK(!memcmp(tc, z, sizeof(double) * (size_t)w), "%s: the march changed its start z (row 0)", what);
  for (int i = 0; i < w; i++) /* z + dz (1e-4: an outer Newton update late in a solve) */
    z[i] += dz * cos(1.7 * i);
  st = st ? st : HsMarchSegment(m, ks, len, z, 1, tc, NULL, NULL); /* warm from the march at z */
  st = st ? st : HsMarchSegment(m, ks, len, z, 0, tn, S, NULL);
  CHECK(st == HS_SUCCESS, "%s: march at z + dz failed: %s", what, HsMarchGetFailure(m));
  for (int i = 0; i < rows; i++)
    e_warm = fmax(e_warm, fabs(tc[i] - tn[i]));
  CHECK(!memcmp(tc, z, sizeof(double) * (size_t)w), "%s: the warm march changed its start z (row 0)", what);
  printf("%-34s vs Newton: cold %.1e, warm %.1e (|y| %.2e)\n", what, e_cold, e_warm, ymax);
  CHECK(e_cold <= 1e-12 * (1 + ymax) && e_warm <= 1e-12 * (1 + ymax), "%s: differs from Newton by %.3e, %.3e", what,
        e_cold, e_warm);
  HsMarchDestroy(&m), HsDiscDestroy(&d);
  free(tc), free(tn), free(S);
}

/* HsDiscSetMemo: a quotient or discrete gradient answered from the memo is the computed one to the bit, whichever
 * outputs the first call asked for; off, nothing is kept. */
static void CheckMemo(HsProblem *P, HsProblem *K)
{
  HsDisc *d, *e;
  char    msg[256];
  double  v[6], u[6], vb, x[6] = {0.7183, -0.31, 0.05, 0.2, 1.1, -0.4}, y[6], g0[6], g1[6], g2[6];
  int     same = 1;

  if (HsDiscCreate(P, "greenspan", "conserving_1dof", 20, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg) ||
      HsDiscCreate(K, "gonzalez", "conserving", 20, HS_DG_TOL_DEFAULT, &e, msg, sizeof msg)) {
    CHECK(0, "memo: %s", msg);
    return;
  }
  HsGreenspanQuotient(d, 0.7183, 0.75, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]); /* memo off */
  HsDiscSetMemo(d, 1);
  HsGreenspanQuotient(d, 0.7183, 0.75, &vb, NULL, NULL, NULL, NULL, NULL); /* kept: all six values */
  HsGreenspanQuotient(d, 0.7183, 0.75, &u[0], &u[1], &u[2], &u[3], &u[4], &u[5]);
  same = same && !memcmp(&vb, v, sizeof vb) && !memcmp(u, v, sizeof v);
  HsGreenspanQuotient(d, 0.75, 0.7183, &u[0], &u[1], &u[2], &u[3], &u[4], &u[5]); /* another key */
  same = same && memcmp(u, v, sizeof v);
  HsDiscSetMemo(d, 0);
  for (int i = 0; i < 6; i++)
    y[i] = x[i] + 0.01 * (i + 1);
  HsDiscGetStateScheme(e)->grad(e, x, y, g0);
  HsDiscSetMemo(e, 1);
  HsDiscGetStateScheme(e)->grad(e, x, y, g1);
  HsDiscGetStateScheme(e)->grad(e, x, y, g2); /* from the memo */
  HsDiscSetMemo(e, 0);
  same = same && !memcmp(g0, g1, sizeof g0) && !memcmp(g0, g2, sizeof g0);
  printf("%-34s %s\n", "memo of quotients, gradients", same ? "the same to the bit" : "DIFFERENT");
  CHECK(same, "HsDiscSetMemo: a kept value differs from the computed one");
  HsDiscDestroy(&d), HsDiscDestroy(&e);
}

int main(void)
{
  HsProblem *P, *K, *E, *S;

  if (HsProblemCreateByName("pendulum", &P) || HsProblemCreateByName("kepler", &K) ||
      HsProblemCreateByName("kepler", &E) || HsProblemCreateByName("saddle", &S))
    return 1;
  AttachEllAndWeights(E);
  AttachTimeDependentEll(E);
  CheckSensitivities(P, "pendulum", "greenspan", "conserving_1dof", 20, 0, 7);
  CheckSensitivities(P, "pendulum", "midpoint", "trapezoidal", 20, 5, 1);
  CheckSensitivities(K, "kepler", "gonzalez", "conserving", 20, 3, 6);
  CheckSensitivities(K, "kepler", "gonzalez", "kkt", 20, 0, 9);
  CheckSensitivities(E, "kepler+ell(t)", "gonzalez", "conserving", 20, 4, 5);
  CheckSensitivities(E, "kepler+ell(t)", "midpoint", "trapezoidal", 20, 2, 5);
  {
    /* saddle, omega = 4, h = 0.02: the midpoint map amplifies the unstable mode by
     * r = ((1 + h omega/2) / (1 - h omega/2))^40 = e^3.2 per 40 steps; the propagator's
     * largest entry is at least r / 4 (spectral radius <= infinity norm <= 4 max |entry|) */
    double g = CheckSensitivities(S, "saddle", "midpoint", "trapezoidal", 500, 0, 40), r = pow(1.04 / 0.96, 40);
    CHECK(g >= r / 4 && g < 1e3, "saddle: growth %.3e, expected >= %.3e", g, r / 4);
  }
  CheckFreeTime(P, "pendulum", "greenspan", "conserving_1dof", 20, 0, 7);
  CheckFreeTime(P, "pendulum", "midpoint", "trapezoidal", 20, 5, 6);
  CheckFreeTime(K, "kepler", "gonzalez", "conserving", 20, 3, 6);
  CheckFreeTime(K, "kepler", "gonzalez", "kkt", 20, 0, 9);
  CheckFailures();
  CheckDenseLU();
  CheckChord(P, "pendulum", "greenspan", "conserving_1dof", 2000, 37, 60, 1e-4);
  CheckChord(P, "pendulum", "greenspan", "conserving_1dof", 12, 0, 11, 0.3); /* h = 0.25: chord updates refused too */
  CheckChord(K, "kepler", "gonzalez", "conserving", 2000, 411, 60, 1e-4);
  CheckChord(K, "kepler", "gonzalez", "conserving", 40, 3, 20, 0.05);
  CheckChord(E, "kepler+ell(t)", "gonzalez", "conserving", 200, 20, 30, 1e-4);
  CheckMemo(P, K);
  HsProblemDestroy(&P), HsProblemDestroy(&K), HsProblemDestroy(&E), HsProblemDestroy(&S);
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
