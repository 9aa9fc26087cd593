/* hamshoot: ncar, a chain of cars on a line whose first car must follow a
 * target (docs/theory.md section 4, problem 5; servo-constraint chain of Multibody
 * Syst. Dyn. 40 (2017) 75-98).
 *
 *   E = sum_i p_i^2 / (2 m_i) + sum_{j<n} k/2 (q_j - q_{j+1} - d)^2,
 *   force u on the last car (B = e_n), R = beta,
 *   ell(x, t) = 1/2 (q_1 - y(t))^2,  phi(x) = gamma/2 (q_1 - y(T))^2,  x(T) free,
 *   y = 0.5 on [0,1),  0.5 + 2 P((t-1)/2) on [1,3],  2.5 on (3,4],
 *   P(s) = 1716 s^7 - 9009 s^8 + 20020 s^9 - 24024 s^10 + 16380 s^11 - 6006 s^12 + 924 s^13.
 * 2 cars: m = (2, 1), q0 = (0.5, 0); 3 cars: m = (1, 1, 2), q0 = (0.5, 0, -0.5);
 * k = 1, d = 0.5, p0 = 0, T = 4, N = 400 (h = 0.01).
 *
 * P is the degree-13 smoothstep: P(0) = 0, P(1) = 1 and its derivatives of
 * orders 1..6 vanish at both ends, so y is C^6 and the discrete solution keeps
 * its second order. The problem is linear but stiff for small beta: the
 * state-costate system grows like e^{beta^{-1/4} t / sqrt 2} roughly (e^{10 t}
 * for beta = 1e-9), so single shooting fails there and multiple shooting works.
 *
 * The number of cars K is a parameter (-p_cars K, any K >= 2). For K >= 4 (a
 * chain for scaling studies): all masses 1, q0_i = 0.5 - i d (i = 0..K-1: the
 * chain at rest, the first car where it is for 2 and 3 cars), p0 = 0, springs k
 * and rest lengths d, the force on the last car, the first car following the
 * same target. Changing K resizes the problem (HsProblemResize) and update()
 * sets the data.
 */
#include "hsproblem.h"

#include <math.h>
#include <stdlib.h>

#define NCAR_MAX_CARS 10000

typedef struct {
  double  cars, beta, gamma, k, d;
  int     n;
  double *mass; /* n */
} Ncar;

/* The target y(t) of the first car. */
static double NcarTarget(double t)
{
  static const double c[7] = {1716, -9009, 20020, -24024, 16380, -6006, 924};
  double              s, P = 0;
  if (t < 1)
    return 0.5;
  if (t > 3)
    return 2.5;
  s = 0.5 * (t - 1);
  for (int i = 6; i >= 0; i--) /* Horner in s, then times s^7 */
    P = P * s + c[i];
  return 0.5 + 2 * P * pow(s, 7);
}

static int NcarE(const double *x, double *f, void *ctx)
{
  const Ncar *C = ctx;
  int         n = C->n;
  double      e = 0;
  for (int i = 0; i < n; i++)
    e += x[n + i] * x[n + i] / (2 * C->mass[i]);
  for (int j = 0; j + 1 < n; j++) {
    double s = x[j] - x[j + 1] - C->d;
    e += 0.5 * C->k * s * s;
  }
  *f = e;
  return 0;
}

static int NcarGrad(const double *x, double *g, void *ctx)
{
  const Ncar *C = ctx;
  int         n = C->n;
  for (int i = 0; i < n; i++)
    g[i] = 0, g[n + i] = x[n + i] / C->mass[i];
  for (int j = 0; j + 1 < n; j++) {
    double s = C->k * (x[j] - x[j + 1] - C->d);
    g[j] += s, g[j + 1] -= s;
  }
  return 0;
}

static int NcarHess(const double *x, double *H, void *ctx)
{
  const Ncar *C = ctx;
  int         n = C->n, dim = 2 * n;
  (void)x;
  for (int i = 0; i < dim * dim; i++)
    H[i] = 0;
  for (int i = 0; i < n; i++)
    H[(n + i) * dim + n + i] = 1 / C->mass[i];
  for (int j = 0; j + 1 < n; j++) {
    H[j * dim + j] += C->k, H[(j + 1) * dim + j + 1] += C->k;
    H[j * dim + j + 1] -= C->k, H[(j + 1) * dim + j] -= C->k;
  }
  return 0;
}

static int NcarD3(const double *x, const double *v, double *T, void *ctx)
{
  const Ncar *C = ctx;
  (void)x, (void)v;
  for (size_t i = 0; i < 4 * (size_t)C->n * (size_t)C->n; i++)
    T[i] = 0;
  return 0;
}

/* ell(x, t) = 1/2 (q_1 - y(t))^2 */
static int NcarEll(double t, const double *x, double *f, void *ctx)
{
  double e = x[0] - NcarTarget(t);
  (void)ctx;
  *f = 0.5 * e * e;
  return 0;
}
static int NcarEllGrad(double t, const double *x, double *g, void *ctx)
{
  const Ncar *C = ctx;
  for (int i = 0; i < 2 * C->n; i++)
    g[i] = 0;
  g[0] = x[0] - NcarTarget(t);
  return 0;
}
static int NcarEllHess(double t, const double *x, double *H, void *ctx)
{
  const Ncar *C = ctx;
  (void)t, (void)x;
  for (size_t i = 0; i < 4 * (size_t)C->n * (size_t)C->n; i++)
    H[i] = 0;
  H[0] = 1;
  return 0;
}

/* phi(x) = gamma/2 (q_1 - y(T))^2 with T = 4 fixed: y(T) = 2.5. */
static int NcarPhi(const double *x, double *f, void *ctx)
{
  const Ncar *C = ctx;
  double      e = x[0] - NcarTarget(4);
  *f            = 0.5 * C->gamma * e * e;
  return 0;
}
static int NcarPhiGrad(const double *x, double *g, void *ctx)
{
  const Ncar *C = ctx;
  for (int i = 0; i < 2 * C->n; i++)
    g[i] = 0;
  g[0] = C->gamma * (x[0] - NcarTarget(4));
  return 0;
}
static int NcarPhiHess(const double *x, double *H, void *ctx)
{
  const Ncar *C = ctx;
  (void)x;
  for (size_t i = 0; i < 4 * (size_t)C->n * (size_t)C->n; i++)
    H[i] = 0;
  H[0] = C->gamma;
  return 0;
}

/* The data of K = cars cars (file head): resizes the problem when K changed; out of memory, nothing
 * changes and HS_ENOMEM is returned (HsProblemSetParam then restores the old K). */
static int NcarUpdate(HsProblem *p)
{
  static const double m2[2] = {2, 1}, q2[2] = {0.5, 0}, m3[3] = {1, 1, 2}, q3[3] = {0.5, 0, -0.5};
  Ncar               *C = p->ctx;
  int                 n = (int)C->cars;

  if (n != C->n) {
    double *mass = malloc(sizeof(double) * (size_t)n);
    if (!mass || HsProblemResize(p, n, 1)) {
      free(mass);
      return HS_ENOMEM;
    }
    free(C->mass);
    C->mass = mass, C->n = n;
  }
  for (int i = 0; i < n; i++) {
    C->mass[i]   = n == 2 ? m2[i] : n == 3 ? m3[i] : 1;
    p->B[i]      = i == n - 1; /* force on the last car */
    p->x0[i]     = n == 2 ? q2[i] : n == 3 ? q3[i] : 0.5 - i * C->d;
    p->x0[n + i] = 0;
  }
  for (int i = 0; i < 2 * n; i++)
    p->xT[i] = 0, p->xT_fixed[i] = 0; /* x(T) free */
  p->R[0] = C->beta * p->R_scale; /* a continuation in the control weight */
  return HS_SUCCESS;
}

static void NcarDestroy(void *ctx)
{
  Ncar *C = ctx;
  if (C)
    free(C->mass);
  free(C);
}

/*@ HsProblemCreateNcar - the chain of cars following a target (docs/theory.md section 4.5; file head):
    2 cars, beta = 1e-5 by default; parameters cars (any integer >= 2), beta, gamma, k, d.
    Not collective. Returns HS_SUCCESS or HS_ENOMEM. @*/
int HsProblemCreateNcar(HsProblem **prob)
{
  HsProblem *p;
  Ncar      *C;
  int        ierr = HsProblemAllocate("ncar", 2, 1, &p);

  if (ierr)
    return ierr;
  C = calloc(1, sizeof(*C));
  if (!C || !(C->mass = calloc(2, sizeof(double)))) {
    free(C);
    HsProblemDestroy(&p);
    return HS_ENOMEM;
  }
  C->cars = 2, C->n = 2, C->beta = 1e-5, C->gamma = 1, C->k = 1, C->d = 0.5;
  p->ctx                = C;
  p->destroy_ctx        = NcarDestroy;
  p->T                  = 4;
  p->N                  = 400;
  p->E.f                = NcarE;
  p->E.grad             = NcarGrad;
  p->E.hess             = NcarHess;
  p->E.d3               = NcarD3;
  p->ell.f              = NcarEll;
  p->ell.grad           = NcarEllGrad;
  p->ell.hess           = NcarEllHess;
  p->ell.time_dependent = 1;
  p->phi.f              = NcarPhi;
  p->phi.grad           = NcarPhiGrad;
  p->phi.hess           = NcarPhiHess;
  p->update             = NcarUpdate;
  if (HsProblemAddParam(p, "cars", "number of cars, an integer >= 2 (2, 3: docs/theory.md data; >= 4: unit masses)",
                        &C->cars, 2, NCAR_MAX_CARS) ||
      (HsProblemParamSetInteger(p), 0) || HsProblemAddParam(p, "beta", "control weight R", &C->beta, 1e-300, 1e300) ||
      HsProblemAddParam(p, "gamma", "terminal weight: phi = gamma/2 (q_1(T) - y(T))^2", &C->gamma, 0, 1e300) ||
      HsProblemAddParam(p, "k", "spring stiffness", &C->k, 0, 1e300) ||
      HsProblemAddParam(p, "d", "spring rest length", &C->d, -1e300, 1e300)) {
    HsProblemDestroy(&p);
    return HS_ENOMEM;
  }
  p->default_state_scheme   = "gonzalez";
  p->default_costate_scheme = "conserving";
  NcarUpdate(p);
  *prob = p;
  return HS_SUCCESS;
}
