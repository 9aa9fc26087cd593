/* hamshoot benchmark: cost of one step-residual + step-Jacobian evaluation for a
 * problem defined in C against the same problem read from its .ocp file.
 *
 *   build/bench/eval_bench [problems-dir] [repetitions] [problem]
 *
 * For each problem, times the state residual, the costate residual, and their
 * Jacobians with the problem's default conserving schemes at varying states
 * (wall clock per evaluation, best of 9 runs of `repetitions` evaluations, the
 * C and the file problem taking turns so that a load on the machine hits both
 * alike), and prints microseconds per evaluation, the file/C ratio, and the
 * largest relative difference of the two problems' residuals and Jacobians. */
#include "../costate/hscostate.h"
#include "../problems/hsmechanical.h"
#include "../problems/hsocp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* One evaluation of the state and costate residuals and Jacobians at the
 * inputs of repetition r; returns the number of failed calls. */
static int Step(HsDisc *d, HsProblem *P, int r, double *F, double J[5][256])
{
  double x[3][16], l[2][16];
  int    dim = 2 * P->n, bad = 0;
  for (int i = 0; i < dim; i++)
    for (int b = 0; b < 3; b++)
      x[b][i] = P->x0[i] + 0.05 * b + 1e-3 * (r % 97) + 0.01 * i;
  for (int i = 0; i < dim; i++)
    l[0][i] = 0.3 - 0.01 * i, l[1][i] = 0.31 - 0.01 * i + 1e-4 * (r % 13);
  bad += HsDiscStateResidual(d, x[1], x[2], l[1], F) != 0;
  bad += HsDiscCostateResidual(d, 1, x[0], x[1], x[2], l[0], l[1], F + dim) != 0;
  bad += HsDiscStateJacobian(d, x[1], x[2], l[1], J[0], J[1], J[2]) != 0;
  bad += HsDiscCostateJacobian(d, 1, x[0], x[1], x[2], l[0], l[1], J[0], J[1], J[2], J[3], J[4]) != 0;
  return bad;
}

/* Largest relative difference between the C and the file problem's residuals
 * and Jacobians over a few inputs (-1 if an evaluation failed). */
static double Agree(HsProblem *C, HsProblem *Fp)
{
  HsDisc *dc, *df;
  char    msg[256];
  double  worst = 0;
  int     dim   = 2 * C->n;
  if (HsDiscCreate(C, C->default_state_scheme, C->default_costate_scheme, 40, HS_DG_TOL_DEFAULT, &dc, msg,
                   sizeof msg) ||
      HsDiscCreate(Fp, C->default_state_scheme, C->default_costate_scheme, 40, HS_DG_TOL_DEFAULT, &df, msg,
                   sizeof msg)) {
    fprintf(stderr, "%s\n", msg);
    exit(1);
  }
  for (int r = 0; r < 5; r++) {
    double F1[32], F2[32], J1[5][256], J2[5][256], s = 1e-300, dmax = 0;
    if (Step(dc, C, 17 * r, F1, J1) || Step(df, Fp, 17 * r, F2, J2))
      return -1;
    for (int i = 0; i < 2 * dim; i++)
      dmax = fmax(dmax, fabs(F1[i] - F2[i])), s = fmax(s, fabs(F1[i]));
    for (int b = 0; b < 5; b++)
      for (int i = 0; i < dim * dim; i++)
        dmax = fmax(dmax, fabs(J1[b][i] - J2[b][i])), s = fmax(s, fabs(J1[b][i]));
    worst = fmax(worst, dmax / s);
  }
  HsDiscDestroy(&dc);
  HsDiscDestroy(&df);
  return worst;
}

/* microseconds per (state residual + costate residual + both Jacobians), one run of reps */
static double Time(HsProblem *P, int reps)
{
  HsDisc *d;
  char    msg[256];
  double  F[32], J[5][256], sink = 0, t0, t;

  if (HsDiscCreate(P, P->default_state_scheme, P->default_costate_scheme, 40, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    fprintf(stderr, "%s\n", msg);
    exit(1);
  }
  t0 = Now();
  for (int r = 0; r < reps; r++) {
    if (Step(d, P, r, F, J)) {
      fprintf(stderr, "%s: an evaluation failed\n", P->name);
      exit(1);
    }
    sink += F[0] + J[0][0];
  }
  t = (Now() - t0) / reps * 1e6;
  HsDiscDestroy(&d);
  if (sink == 12345.678)
    printf(" ");
  return t;
}

int main(int argc, char **argv)
{
  const char *dir     = argc > 1 ? argv[1] : "problems";
  int         reps    = argc > 2 ? atoi(argv[2]) : 2000;
  const char *names[] = {"pendulum", "kepler", "crane", "manipulator3", "manipulator3"};
  const char *files[] = {"pendulum", "kepler", "crane", "manipulator3", "manipulator3_kinetic"};

  printf("%-21s %-26s %12s %12s %8s %12s\n", "problem file", "schemes", "C [us]", "file [us]", "file/C",
         "max rel diff");
  for (int i = 0; i < 5; i++) {
    HsProblem *C, *F;
    if (argc > 3 && strcmp(argv[3], files[i]))
      continue;
    char path[512], msg[1024];
    snprintf(path, sizeof path, "%s/%s.ocp", dir, files[i]);
    if (HsProblemCreateByName(names[i], &C) || HsProblemCreateFromFile(path, &F, msg, sizeof msg)) {
      fprintf(stderr, "cannot create %s: %s\n", names[i], msg);
      return 1;
    }
    double tc = 1e300, tf = 1e300;
    for (int k = 0; k < 9; k++)
      tc = fmin(tc, Time(C, reps)), tf = fmin(tf, Time(F, reps));
    char sch[64];
    snprintf(sch, sizeof sch, "%s+%s", C->default_state_scheme, C->default_costate_scheme);
    printf("%-21s %-26s %12.2f %12.2f %8.2f %12.1e\n", files[i], sch, tc, tf, tf / tc, Agree(C, F));
    HsProblemDestroy(&C);
    HsProblemDestroy(&F);
  }
  return 0;
}
