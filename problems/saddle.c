/* hamshoot: an unstable linear test problem (not from the thesis) for the
 * instability diagnosis of multiple shooting (issue: "instability is
 * diagnosed, not suffered").
 *
 *   E(q,p) = p^2/2 - omega^2 q^2/2 (a saddle: q grows like e^{omega t}), omega = 4,
 *   B = 1, R = 1, q: 1 -> 0, p: 0 -> 0, T = 10, N = 500.
 * The state-costate system grows like e^{omega t}: e^{40} ~ 2e17 over the
 * horizon, beyond what double precision carries, so single shooting must fail
 * (and say so) while 50 segments (growth e^0.8 each) succeed.
 */
#include "hsproblem.h"

#include <stdlib.h>

typedef struct {
  double omega;
} Saddle;

static int SaddleE(const double *x, double *f, void *ctx)
{
  const Saddle *S = ctx;
  *f              = 0.5 * x[1] * x[1] - 0.5 * S->omega * S->omega * x[0] * x[0];
  return 0;
}

static int SaddleGrad(const double *x, double *g, void *ctx)
{
  const Saddle *S = ctx;
  g[0]            = -S->omega * S->omega * x[0];
  g[1]            = x[1];
  return 0;
}

static int SaddleHess(const double *x, double *H, void *ctx)
{
  const Saddle *S = ctx;
  (void)x;
  H[0] = -S->omega * S->omega, H[1] = H[2] = 0, H[3] = 1;
  return 0;
}

static int SaddleD3(const double *x, const double *v, double *T, void *ctx)
{
  (void)x, (void)v, (void)ctx;
  T[0] = T[1] = T[2] = T[3] = 0;
  return 0;
}

static int SaddleV(double q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  const Saddle *S  = ctx;
  const double  w2 = S->omega * S->omega;
  if (V)
    *V = -0.5 * w2 * q * q;
  if (dV)
    *dV = -w2 * q;
  if (d2V)
    *d2V = -w2;
  if (d3V)
    *d3V = 0;
  return 0;
}

/*@ HsProblemCreateSaddle - the unstable linear test problem (file head): E = p^2/2 - omega^2 q^2/2, optimal
    J = omega^3 in closed form for long horizons; parameter omega. Not collective. Returns HS_SUCCESS
    or HS_ENOMEM. @*/
int HsProblemCreateSaddle(HsProblem **prob)
{
  HsProblem *p;
  Saddle    *S;
  int        ierr = HsProblemAllocate("saddle", 1, 1, &p);

  if (ierr)
    return ierr;
  S = malloc(sizeof(*S));
  if (!S) {
    HsProblemDestroy(&p);
    return -1;
  }
  S->omega         = 4;
  p->ctx           = S;
  p->destroy_ctx   = free;
  p->T             = 10;
  p->N             = 500;
  p->E.f           = SaddleE;
  p->E.grad        = SaddleGrad;
  p->E.hess        = SaddleHess;
  p->E.d3          = SaddleD3;
  p->sep.available = 1;
  p->sep.mass      = 1;
  p->sep.V         = SaddleV;
  p->B[0] = 1, p->R[0] = 1;
  p->x0[0] = 1, p->x0[1] = 0;
  p->xT[0] = 0, p->xT[1] = 0;
  p->xT_fixed[0] = p->xT_fixed[1] = 1;
  HsProblemAddParam(p, "omega", "growth rate of the saddle (e^{omega t})", &S->omega, 0, 1e6);
  p->default_state_scheme   = "greenspan";
  p->default_costate_scheme = "conserving_1dof";
  *prob                     = p;
  return 0;
}
