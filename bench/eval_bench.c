/* hamshoot benchmark: cost of one step-residual + step-Jacobian evaluation for a
 * problem defined in C against the same problem read from its .ocp file.
 *
 *   build/bench/eval_bench [problems-dir] [repetitions]
 *
 * For each problem, times (wall clock, best of 5 runs of `repetitions`
 * evaluations) the state residual, the costate residual, and their Jacobians
 * with the problem's default conserving schemes at varying states, and prints
 * microseconds per evaluation and the file/C ratio. */
#include "../costate/hscostate.h"
#include "../problems/hsmechanical.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* microseconds per (state residual + costate residual + both Jacobians) */
static double Time(HsProblem *P, int reps)
{
  HsDisc *d;
  char    msg[256];
  double  x[3][16], l[2][16], F[16], J[5][256], best = 1e300, sink = 0;
  int     dim = 2 * P->n;

  if (HsDiscCreate(P, P->default_state_scheme, P->default_costate_scheme, 40, HS_DG_TOL_DEFAULT, &d, msg, sizeof msg)) {
    fprintf(stderr, "%s\n", msg);
    exit(1);
  }
  for (int k = 0; k < 5; k++) {
    double t0 = Now();
    for (int r = 0; r < reps; r++) {
      for (int i = 0; i < dim; i++)
        for (int b = 0; b < 3; b++)
          x[b][i] = P->x0[i] + 0.05 * b + 1e-3 * (r % 97) + 0.01 * i;
      for (int i = 0; i < dim; i++)
        l[0][i] = 0.3 - 0.01 * i, l[1][i] = 0.31 - 0.01 * i + 1e-4 * (r % 13);
      HsDiscStateResidual(d, x[1], x[2], l[1], F);
      HsDiscCostateResidual(d, 1, x[0], x[1], x[2], l[0], l[1], F);
      HsDiscStateJacobian(d, x[1], x[2], l[1], J[0], J[1], J[2]);
      HsDiscCostateJacobian(d, 1, x[0], x[1], x[2], l[0], l[1], J[0], J[1], J[2], J[3], J[4]);
      sink += F[0] + J[0][0];
    }
    double t = (Now() - t0) / reps * 1e6;
    if (t < best)
      best = t;
  }
  HsDiscDestroy(&d);
  if (sink == 12345.678)
    printf(" ");
  return best;
}

int main(int argc, char **argv)
{
  const char *dir     = argc > 1 ? argv[1] : "problems";
  int         reps    = argc > 2 ? atoi(argv[2]) : 2000;
  const char *names[] = {"pendulum", "kepler", "crane", "manipulator3"};

  printf("%-13s %-26s %12s %12s %8s\n", "problem", "schemes", "C [us]", "file [us]", "file/C");
  for (int i = 0; i < 4; i++) {
    HsProblem *C, *F;
    char       path[512], msg[1024];
    snprintf(path, sizeof path, "%s/%s.ocp", dir, names[i]);
    if (HsProblemCreateByName(names[i], &C) || HsProblemCreateFromFile(path, &F, msg, sizeof msg)) {
      fprintf(stderr, "cannot create %s: %s\n", names[i], msg);
      return 1;
    }
    double tc = Time(C, reps), tf = Time(F, reps);
    char   sch[64];
    snprintf(sch, sizeof sch, "%s+%s", C->default_state_scheme, C->default_costate_scheme);
    printf("%-13s %-26s %12.2f %12.2f %8.1f\n", names[i], sch, tc, tf, tf / tc);
    HsProblemDestroy(&C);
    HsProblemDestroy(&F);
  }
  return 0;
}
