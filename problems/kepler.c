/* hamshoot: the central force (Kepler) problem of thesis section 8.2, docs/theory.md section 4.2.
 *
 *   E(q,p) = |p|^2 / 2 - 1/|q| (unit mass, 3-D), B = I3, R = I3,
 *   q0 = (1,0,0), p0 = (0,1,0), qT = (0,0,1.5), pT = (0,-1,0), T = pi, N = 20.
 * |q| = 0 is outside the domain: the callbacks return 1 (recoverable).
 */
#include "hsproblem.h"

#include <math.h>
#include <string.h>

/* Radius below which the energy is treated as undefined (recoverable error). */
#define KEPLER_MIN_RADIUS 1e-12

static int KeplerRadius(const double *x, double *r)
{
  *r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  return (*r < KEPLER_MIN_RADIUS || !isfinite(*r)) ? 1 : 0;
}

static int KeplerE(const double *x, double *f, void *ctx)
{
  double r;
  (void)ctx;
  if (KeplerRadius(x, &r))
    return 1;
  *f = 0.5 * (x[3] * x[3] + x[4] * x[4] + x[5] * x[5]) - 1 / r;
  return 0;
}

static int KeplerGrad(const double *x, double *g, void *ctx)
{
  double r, r3;
  int    i;
  (void)ctx;
  if (KeplerRadius(x, &r))
    return 1;
  r3 = r * r * r;
  for (i = 0; i < 3; i++)
    g[i] = x[i] / r3, g[3 + i] = x[3 + i];
  return 0;
}

/* H_qq = I/r^3 - 3 q q^T / r^5, H_pp = I. */
static int KeplerHess(const double *x, double *H, void *ctx)
{
  double r, r3, r5;
  int    i, j;
  (void)ctx;
  if (KeplerRadius(x, &r))
    return 1;
  r3 = r * r * r, r5 = r3 * r * r;
  memset(H, 0, 36 * sizeof(double));
  for (i = 0; i < 3; i++) {
    for (j = 0; j < 3; j++)
      H[i * 6 + j] = (i == j ? 1 / r3 : 0) - 3 * x[i] * x[j] / r5;
    H[(3 + i) * 6 + 3 + i] = 1;
  }
  return 0;
}

/* T_il = sum_j E_ijl v_j = [-3 (v_i q_l + q_i v_l + delta_il q.v)] / r^5 + 15 q_i q_l (q.v) / r^7. */
static int KeplerD3(const double *x, const double *v, double *T, void *ctx)
{
  double r, r5, r7, qv;
  int    i, l;
  (void)ctx;
  if (KeplerRadius(x, &r))
    return 1;
  r5 = pow(r, 5), r7 = r5 * r * r;
  qv = x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
  memset(T, 0, 36 * sizeof(double));
  for (i = 0; i < 3; i++)
    for (l = 0; l < 3; l++)
      T[i * 6 + l] = -3 * (v[i] * x[l] + x[i] * v[l] + (i == l ? qv : 0)) / r5 + 15 * x[i] * x[l] * qv / r7;
  return 0;
}

/*@ HsProblemCreateKepler - the central force problem (docs/theory.md section 4.2; file head): E = |p|^2/2 - 1/|q|,
    |q| = 0 outside the domain; no parameters. Not collective. Returns HS_SUCCESS or HS_ENOMEM. @*/
int HsProblemCreateKepler(HsProblem **prob)
{
  HsProblem *p;
  int        i, ierr = HsProblemAllocate("kepler", 3, 3, &p);

  if (ierr)
    return ierr;
  p->T      = M_PI;
  p->N      = 20;
  p->E.f    = KeplerE;
  p->E.grad = KeplerGrad;
  p->E.hess = KeplerHess;
  p->E.d3   = KeplerD3;
  for (i = 0; i < 3; i++)
    p->B[i * 3 + i] = 1, p->R[i * 3 + i] = 1;
  p->x0[0] = 1, p->x0[4] = 1;    /* q0 = (1,0,0), p0 = (0,1,0) */
  p->xT[2] = 1.5, p->xT[4] = -1; /* qT = (0,0,1.5), pT = (0,-1,0) */
  for (i = 0; i < 6; i++)
    p->xT_fixed[i] = 1;
  p->default_state_scheme   = "gonzalez";
  p->default_costate_scheme = "conserving";
  *prob                     = p;
  return 0;
}
