/* A running cost and non-trivial B, R attached to the kepler problem, for tests
 * of the general cost path (docs/theory.md section 1: ell(x), constant B and R):
 *   ell(x) = 1/2 a |q - c|^2 + b sin(q_1) p_2,  a = 0.3, b = 0.05, c = (0.2, 0.4, 0.5). */
#ifndef ELL_TEST_PROBLEM_H
#define ELL_TEST_PROBLEM_H

#include <math.h>
#include <string.h>

#include "../problems/hsproblem.h"

static const double ell_a = 0.3, ell_b = 0.05, ell_c[3] = {0.2, 0.4, 0.5};

static int EllF(double t, const double *x, double *f, void *ctx)
{
  double s = 0;
  (void)t, (void)ctx;
  for (int i = 0; i < 3; i++)
    s += (x[i] - ell_c[i]) * (x[i] - ell_c[i]);
  *f = 0.5 * ell_a * s + ell_b * sin(x[0]) * x[4];
  return 0;
}

static int EllGrad(double t, const double *x, double *g, void *ctx)
{
  (void)t, (void)ctx;
  memset(g, 0, 6 * sizeof(double));
  for (int i = 0; i < 3; i++)
    g[i] = ell_a * (x[i] - ell_c[i]);
  g[0] += ell_b * cos(x[0]) * x[4];
  g[4] = ell_b * sin(x[0]);
  return 0;
}

static int EllHess(double t, const double *x, double *H, void *ctx)
{
  (void)t, (void)ctx;
  memset(H, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    H[i * 6 + i] = ell_a;
  H[0] -= ell_b * sin(x[0]) * x[4];
  H[0 * 6 + 4] = H[4 * 6 + 0] = ell_b * cos(x[0]);
  return 0;
}

/* Adds ell and replaces B, R by non-trivial constant matrices (R SPD). */
static void AttachEllAndWeights(HsProblem *K)
{
  const double B[9] = {1, 0.2, 0, 0, 1, 0, 0.1, 0, 0.8};
  const double R[9] = {2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 1.5};
  K->ell.f          = EllF;
  K->ell.grad       = EllGrad;
  K->ell.hess       = EllHess;
  memcpy(K->B, B, sizeof B);
  memcpy(K->R, R, sizeof R);
}

/* A time-dependent variant: ell(x, t) = (1 + 0.5 sin 2t) 1/2 a |q - c|^2 + b sin(q_1 + t) p_2. */
static int EllTF(double t, const double *x, double *f, void *ctx)
{
  double s = 0;
  (void)ctx;
  for (int i = 0; i < 3; i++)
    s += (x[i] - ell_c[i]) * (x[i] - ell_c[i]);
  *f = (1 + 0.5 * sin(2 * t)) * 0.5 * ell_a * s + ell_b * sin(x[0] + t) * x[4];
  return 0;
}

static int EllTGrad(double t, const double *x, double *g, void *ctx)
{
  double w = 1 + 0.5 * sin(2 * t);
  (void)ctx;
  memset(g, 0, 6 * sizeof(double));
  for (int i = 0; i < 3; i++)
    g[i] = w * ell_a * (x[i] - ell_c[i]);
  g[0] += ell_b * cos(x[0] + t) * x[4];
  g[4] = ell_b * sin(x[0] + t);
  return 0;
}

static int EllTHess(double t, const double *x, double *H, void *ctx)
{
  double w = 1 + 0.5 * sin(2 * t);
  (void)ctx;
  memset(H, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    H[i * 6 + i] = w * ell_a;
  H[0] -= ell_b * sin(x[0] + t) * x[4];
  H[0 * 6 + 4] = H[4 * 6 + 0] = ell_b * cos(x[0] + t);
  return 0;
}

static inline void AttachTimeDependentEll(HsProblem *K)
{
  K->ell.f              = EllTF;
  K->ell.grad           = EllTGrad;
  K->ell.hess           = EllTHess;
  K->ell.time_dependent = 1;
}

#endif
