/* hamshoot: the pendulum of thesis section 8.1 (data from Gerdts), docs/theory.md section 4.1.
 *
 *   E(q,p) = p^2 / (2 m l^2) - m g l sin q,  m = 1, l = 1, g = 9.81, B = 1, R = 1,
 *   q: 0 -> pi/2, p: 0 -> 0, T = 3, N = 20.
 */
#include "hsproblem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double m, l, g;
  double q, s, c; /* SinCos: the last angle and its sine and cosine */
  int    have;
} Pendulum;

/* sin q and cos q, kept for the next call at the same q (bit for bit): conserving4's substeps evaluate the gradient,
   the Hessian and E_qqq at the same midpoint in turn, and each sin or cos of glibc also saves and restores the
   rounding mode (issue 43: the pendulum's trigonometry was about 9 % of its conserving4 solve's time). Computed
   together (GCC makes the pair one sincos, the same bits as sin and cos apart). */
static void SinCos(Pendulum *P, double q, double *s, double *c)
{
  if (!P->have || memcmp(&q, &P->q, sizeof q)) {
    P->s = sin(q), P->c = cos(q);
    P->q = q, P->have = 1;
  }
  *s = P->s, *c = P->c;
}

static int PendulumE(const double *x, double *f, void *ctx)
{
  Pendulum *P = ctx;
  double    s, c;
  SinCos(P, x[0], &s, &c);
  *f = x[1] * x[1] / (2 * P->m * P->l * P->l) - P->m * P->g * P->l * s;
  return 0;
}

static int PendulumGrad(const double *x, double *g, void *ctx)
{
  Pendulum *P = ctx;
  double    s, c;
  SinCos(P, x[0], &s, &c);
  g[0] = -P->m * P->g * P->l * c;
  g[1] = x[1] / (P->m * P->l * P->l);
  return 0;
}

static int PendulumHess(const double *x, double *H, void *ctx)
{
  Pendulum *P = ctx;
  double    s, c;
  SinCos(P, x[0], &s, &c);
  H[0] = P->m * P->g * P->l * s;
  H[1] = H[2] = 0;
  H[3]        = 1 / (P->m * P->l * P->l);
  return 0;
}

static int PendulumD3(const double *x, const double *v, double *T, void *ctx)
{
  Pendulum *P = ctx;
  double    s, c;
  SinCos(P, x[0], &s, &c);
  T[0] = P->m * P->g * P->l * c * v[0]; /* only E_qqq is nonzero */
  T[1] = T[2] = T[3] = 0;
  return 0;
}

static int PendulumV(double q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  const Pendulum *P   = ctx;
  const double    mgl = P->m * P->g * P->l;
  if (V)
    *V = -mgl * sin(q);
  if (dV)
    *dV = -mgl * cos(q);
  if (d2V)
    *d2V = mgl * sin(q);
  if (d3V)
    *d3V = mgl * cos(q);
  return 0;
}

/* sinc(x) = sin(x)/x and its first two derivatives; Taylor series for |x| < 0.5
 * (13 terms, truncation below 1e-25) where the closed forms cancel. */
static void Sinc(double x, double *S, double *S1, double *S2)
{
  if (fabs(x) < 0.5) { /* the series sum_k c_k x^2k, c_k = (-1)^k / (2k+1)!, while its terms matter: 13 terms
                          at |x| = 0.5, 2 to 4 at the x = h q'/2 ~ 1e-5 of fine grids (perf: this kernel took
                          23 % of a pendulum solve at N = 1e5 with all 13 always) */
    double x2 = x * x, u = -1.0 / 6, s = 1, s1 = 0, s2 = 0; /* u = c_k x^(2k-2) */
    for (int k = 1; k <= 12; k++) {
      s += u * x2, s1 += 2 * k * u * x, s2 += 2 * k * (2 * k - 1) * u;
      if (fabs(u) * (4.0 * k * k + 1) <= 1e-18)
        break;
      u *= -x2 / ((2.0 * k + 2) * (2.0 * k + 3));
    }
    *S = s, *S1 = s1, *S2 = s2;
  } else {
    *S  = sin(x) / x;
    *S1 = (x * cos(x) - sin(x)) / (x * x);
    *S2 = ((2 - x * x) * sin(x) - 2 * x * cos(x)) / (x * x * x);
  }
}

/* Stable Greenspan quotient (docs/theory.md section 2.1):
 * (V(b) - V(a)) / (b - a) = -m g l cos(mid) sinc(D/2), mid = (a+b)/2, D = b - a.
 * Derivatives with d/db = 1/2 d/dmid + d/dD and d/da = 1/2 d/dmid - d/dD. */
static int PendulumQuotient(double a, double b, double *Vbar, double *va, double *vb, double *vaa, double *vab,
                            double *vbb, void *ctx)
{
  const Pendulum *P = ctx;
  const double    k = -P->m * P->g * P->l, mid = 0.5 * (a + b), D = b - a;
  double          S, S1, S2, f, fm, fD, fmm, fmD, fDD;

  Sinc(0.5 * D, &S, &S1, &S2);
  f   = k * cos(mid) * S;
  fm  = -k * sin(mid) * S;
  fD  = 0.5 * k * cos(mid) * S1;
  fmm = -k * cos(mid) * S;
  fmD = -0.5 * k * sin(mid) * S1;
  fDD = 0.25 * k * cos(mid) * S2;
  HsQuotientStore((const double[6]){f, 0.5 * fm - fD, 0.5 * fm + fD, 0.25 * fmm - fmD + fDD, 0.25 * fmm - fDD,
                                    0.25 * fmm + fmD + fDD},
                  Vbar, va, vb, vaa, vab, vbb);
  return 0;
}

static int PendulumUpdate(HsProblem *p)
{
  const Pendulum *P = p->ctx;
  p->sep.mass       = P->m * P->l * P->l;
  return HS_SUCCESS;
}

/*@ HsProblemCreatePendulum - the pendulum (docs/theory.md section 4.1; file head) with its 1-DOF structure
    for the greenspan scheme and a stable closed-form Greenspan quotient; parameters m, l, g.
    Not collective. Returns HS_SUCCESS or HS_ENOMEM. @*/
int HsProblemCreatePendulum(HsProblem **prob)
{
  HsProblem *p;
  Pendulum  *P;
  int        ierr = HsProblemAllocate("pendulum", 1, 1, &p);

  if (ierr)
    return ierr;
  P = malloc(sizeof(*P));
  if (!P) {
    HsProblemDestroy(&p);
    return -1;
  }
  P->m = 1, P->l = 1, P->g = 9.81, P->have = 0;
  p->ctx           = P;
  p->destroy_ctx   = free;
  p->T             = 3;
  p->N             = 20;
  p->E.f           = PendulumE;
  p->E.grad        = PendulumGrad;
  p->E.hess        = PendulumHess;
  p->E.d3          = PendulumD3;
  p->sep.available = 1;
  p->sep.mass      = P->m * P->l * P->l;
  p->sep.V         = PendulumV;
  p->sep.quotient  = PendulumQuotient;
  p->B[0]          = 1;
  p->R[0]          = 1;
  p->x0[0] = 0, p->x0[1] = 0;
  p->xT[0] = M_PI / 2, p->xT[1] = 0;
  p->xT_fixed[0] = p->xT_fixed[1] = 1;
  p->update                       = PendulumUpdate;
  HsProblemAddParam(p, "m", "pendulum mass", &P->m, 1e-12, 1e12);
  HsProblemAddParam(p, "l", "pendulum length", &P->l, 1e-12, 1e12);
  HsProblemAddParam(p, "g", "gravity", &P->g, 0, 1e12);
  p->default_state_scheme   = "greenspan";
  p->default_costate_scheme = "conserving_1dof";
  *prob                     = p;
  return 0;
}
