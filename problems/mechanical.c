/* hamshoot: the energy of a mechanical system from its mass matrix and
 * potential, E(q,p) = 1/2 p^T M(q)^{-1} p + V(q) (docs/theory.md section 1), without
 * a symbolic inverse. With A = M^{-1}, v = A p (Cholesky factorization, below):
 *
 *   grad_p E = v,                 grad_q E_i = -1/2 v^T M_{,i} v + V_{,i}
 *   E_pp = A,                     E_{q_i p} = -A M_{,i} v
 *   E_{q_i q_j} = -1/2 v^T M_{,ij} v + v^T M_{,i} A M_{,j} v + V_{,ij}
 *
 * and, when the system supplies third derivatives of M and V, the action of
 * the third derivative along w = (w_q, w_p), T = D(Hess E)(x)[w] (needed by
 * Newton on the conserving costate scheme, docs/theory.md section 2.2). With
 * M_w = sum_k w_k M_{,k}, M_{,iw} = sum_k w_k M_{,ik}, M_{,ijw} = sum_k w_k M_{,ijk},
 * dv = Dv[w] = A (w_p - M_w v), b_i = M_{,i} v, a_i = A b_i (DA[w] = -A M_w A):
 *
 *   T_pp       = -A M_w A
 *   T_{q_i p}  = A (M_w a_i - M_{,iw} v - M_{,i} dv)
 *   T_{q_i q_j} = -1/2 v^T M_{,ijw} v - dv^T M_{,ij} v + (M_{,i} dv).a_j + a_i.(M_{,j} dv)
 *                 + (M_{,iw} v).a_j + a_i.(M_{,jw} v) - a_i^T M_w a_j + V_{,ijw}
 *
 * (differentiate the Hessian blocks above with the product rule). Without
 * third derivatives the problem's d3 stays NULL and Newton uses a central
 * difference of this Hessian (HsFunctionD3). A mass matrix that is not
 * positive definite at q is a recoverable domain error (return 1).
 *
 * The last evaluation (q, derivative order) is kept: the discrete gradients
 * ask for E, its gradient, Hessian and third derivatives at the same midpoint
 * in turn, and each later request of no higher order reuses it.
 *
 * A free final time T on which M and V depend (HsMechanical.data_T) adds E_T = dE/dT at fixed x:
 * with dv/dT = -A M_T v,
 *
 *   E_T = -1/2 v^T M_T v + V_T,     grad_p E_T = -A M_T v,
 *   grad_q E_T_i = -1/2 v^T M_{T,i} v + v^T M_{,i} A M_T v + V_{T,i}
 *
 * (differentiate grad E above in T).
 *
 * M^{-1} is formed explicitly once per evaluation by a Cholesky factorization
 * written out here (n <= 16): the formulas above then need only products with
 * it. GSL's gsl_linalg_cholesky_decomp1/_svx go through CBLAS for every solve,
 * whose call overhead dominated the 3x3 cases (about 15% of a step of the
 * 3-link arm in a profile, with 4n+1 solves per third-derivative action).
 */
#include "hsmechanical.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  HsMechanical mech;
  void (*destroy_user)(void *);
  double *M, *dM, *d2M, *d3M, *dV, *d2V, *d3V, *v, *w, *q, *A, *L, *t; /* w: 5 n^2, t: 4 n scratch */
  double *MT, *dMT, *dVT, *y; /* data_T: M_T n^2, its q-derivatives n^3, V_T's gradient n, scratch n */
  double  V;
  int     level;   /* derivative order held for q; -1: nothing held */
  int     mass_ok; /* constant mass: M and A are held */
} MechCtx;

/* A = M^{-1} for symmetric positive definite M (n x n) through M = L L^T, L in
 * the lower triangle of L (n x n scratch). Returns 1 if M is not positive
 * definite (or not finite). */
static int CholeskyInverse(int n, const double *M, double *L, double *A)
{
  for (int j = 0; j < n; j++) {
    double d = M[j * n + j];
    for (int k = 0; k < j; k++)
      d -= L[j * n + k] * L[j * n + k];
    if (!(d > 0) || !isfinite(d))
      return 1;
    L[j * n + j] = sqrt(d);
    for (int i = j + 1; i < n; i++) {
      double s = M[i * n + j];
      for (int k = 0; k < j; k++)
        s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / L[j * n + j];
    }
  }
  /* L^{-1} in place (lower triangular), then A = L^{-T} L^{-1} */
  for (int j = 0; j < n; j++) {
    L[j * n + j] = 1 / L[j * n + j];
    for (int i = j + 1; i < n; i++) {
      double s = 0;
      for (int k = j; k < i; k++)
        s -= L[i * n + k] * L[k * n + j];
      L[i * n + j] = s / L[i * n + i];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0;
      for (int k = i; k < n; k++)
        s += L[k * n + i] * L[k * n + j];
      A[i * n + j] = A[j * n + i] = s;
    }
  return 0;
}

/* y = A w for n x n A */
static void MatVec(int n, const double *A, const double *w, double *y)
{
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++)
      s += A[i * n + j] * w[j];
    y[i] = s;
  }
}

/* M(q), V(q) and their derivatives up to order need (0 = M, 1 = + dM, ...,
 * 3 = + d3M), M^{-1} and v = M^{-1} p. At the x of the last evaluation only the
 * missing orders are computed. */
static int MechEval(MechCtx *c, const double *x, int need, double *V)
{
  int     n = c->mech.n, st, from = 0;
  double *dm[4] = {c->M, c->dM, c->d2M, c->d3M}, *dv[4] = {&c->V, c->dV, c->d2V, c->d3V};

  if (c->level >= 0 && !memcmp(c->q, x, 2 * (size_t)n * sizeof(double))) {
    if (c->level >= need) {
      *V = c->V;
      return 0;
    }
    from = c->level + 1;
  }
  for (int k = 0; k < 4; k++)
    if (k < from || k > need)
      dm[k] = dv[k] = NULL;
  if (c->mech.constant_mass) { /* dM, d2M, d3M stay zero */
    dm[0] = c->mass_ok ? NULL : c->M;
    dm[1] = dm[2] = dm[3] = NULL;
  }
  c->level = -1;
  st       = dm[0] || dm[1] || dm[2] || dm[3] ? c->mech.mass(x, dm[0], dm[1], dm[2], dm[3], c->mech.ctx) : 0;
  if (!st)
    st = c->mech.potential(x, dv[0], dv[1], dv[2], dv[3], c->mech.ctx);
  if (st)
    return st;
  if (dm[0]) {
    c->mass_ok = 0;
    if (CholeskyInverse(n, c->M, c->L, c->A))
      return 1; /* not positive definite: outside the domain */
    c->mass_ok = c->mech.constant_mass;
  }
  if (from == 0) {
    MatVec(n, c->A, x + n, c->v);
    memcpy(c->q, x, 2 * (size_t)n * sizeof(double));
  }
  c->level = need;
  *V       = c->V;
  return 0;
}

/* y <- M^{-1} y */
static void Solve(MechCtx *c, double *y)
{
  double *t = c->t + 3 * c->mech.n;
  memcpy(t, y, (size_t)c->mech.n * sizeof(double));
  MatVec(c->mech.n, c->A, t, y);
}

static double Dot(int n, const double *a, const double *b)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

/* u^T A w for n x n A */
static double Quad(int n, const double *u, const double *A, const double *w)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      s += u[i] * A[i * n + j] * w[j];
  return s;
}

static int MechE(const double *x, double *f, void *ctx)
{
  MechCtx *c = ctx;
  double   V;
  int      n = c->mech.n, st = MechEval(c, x, 0, &V);
  if (st)
    return st;
  *f = V + 0.5 * Dot(n, x + n, c->v);
  return 0;
}

static int MechGrad(const double *x, double *g, void *ctx)
{
  MechCtx *c = ctx;
  double   V;
  int      n = c->mech.n, st = MechEval(c, x, 1, &V);
  if (st)
    return st;
  for (int i = 0; i < n; i++) {
    g[i]     = (c->mech.constant_mass ? 0 : -0.5 * Quad(n, c->v, c->dM + i * n * n, c->v)) + c->dV[i];
    g[n + i] = c->v[i];
  }
  return 0;
}

/* The gradient (MechGrad's) and a bound on each component's round-off (E.grad_bound; problems/hsproblem.h) from the
 * bounds on dV and dM (HsMechanical.grad_bound):
 *
 *   e(grad_q E_i) = 1/2 |v|^T e(M_{,i}) |v| + (n + 2) u |v|^T |M_{,i}| |v| + e(V_{,i}) + u |grad_q E_i|
 *
 * (the entries' round-off carried through the quadratic form, the form's own rounding, the sum's). The error of v
 * itself (up to cond(M) u relative) is left out: where M_{,i} is zero but for round-off its term is already at the
 * round-off of e(M_{,i}); where M_{,i} is not, the term is a real rate, and a bound too small only keeps a component
 * that might have been taken as zero. grad_p E = v = M^{-1} p gets 0 (no bound needed): M is positive definite, so
 * no component of v vanishes at every sampled p, and none is mistaken for zero. */
static int MechGradBound(const double *x, double *g, double *e, void *ctx)
{
  MechCtx     *c = ctx;
  const int    n = c->mech.n, cm = !c->mech.constant_mass;
  const double u = DBL_EPSILON / 2;
  double      *edM, *av = c->t + n; /* |v| (t: 4n scratch; MechGrad leaves it alone) */
  int          st;

  if ((st = MechGrad(x, g, ctx)))
    return st;
  if (!(edM = malloc(sizeof(double) * ((size_t)(cm ? n * n * n : 0) + 1))))
    return -1;
  st = c->mech.grad_bound(x, e, cm ? edM : NULL, c->mech.ctx); /* e(V_{,i}) into e[0..n-1] */
  for (int i = 0; i < n; i++)
    av[i] = fabs(c->v[i]);
  for (int i = 0; !st && i < n; i++) {
    double ek = 0, mk = 0;
    for (int r = 0; cm && r < n; r++)
      for (int s = 0; s < n; s++)
        ek += av[r] * edM[(i * n + r) * n + s] * av[s], mk += av[r] * fabs(c->dM[(i * n + r) * n + s]) * av[s];
    e[i]     = 0.5 * ek + (n + 2) * u * mk + e[i] + u * fabs(g[i]);
    e[n + i] = 0;
  }
  free(edM);
  return st;
}

/* b_i = M_{,i} v and a_i = M^{-1} b_i for i < n (rows of b, a: n x n each) */
static void MechAB(MechCtx *c, double *b, double *a)
{
  int n = c->mech.n;
  for (int i = 0; i < n; i++) {
    MatVec(n, c->dM + i * n * n, c->v, b + i * n);
    MatVec(n, c->A, b + i * n, a + i * n);
  }
}

static int MechHess(const double *x, double *H, void *ctx)
{
  MechCtx *c = ctx;
  int      n = c->mech.n, d = 2 * n, st;
  double   V, *b = c->w, *a = c->w + n * n;
  if ((st = MechEval(c, x, 2, &V)))
    return st;
  if (c->mech.constant_mass) /* M_{,i} = 0: b = a = 0 */
    memset(c->w, 0, 2 * (size_t)(n * n) * sizeof(double));
  else
    MechAB(c, b, a);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      H[i * d + j] = (c->mech.constant_mass ? 0 : -0.5 * Quad(n, c->v, c->d2M + (i * n + j) * n * n, c->v)) +
                     Dot(n, b + i * n, a + j * n) + c->d2V[i * n + j];
      H[i * d + n + j] = H[(n + j) * d + i] = -a[i * n + j];
    }
  for (int i = 0; i < n; i++) /* E_pp = M^{-1} */
    for (int j = 0; j < n; j++)
      H[(n + i) * d + n + j] = c->A[i * n + j];
  return 0;
}

static int MechD3(const double *x, const double *wv, double *T, void *ctx)
{
  MechCtx      *c = ctx;
  const int     n = c->mech.n, d = 2 * n, nn = n * n;
  const double *wq = wv, *wp = wv + n;
  double       *b = c->w, *a = b + nn, *Mw = a + nn, *Miwv = Mw + nn, *Midv = Miwv + nn;
  double        V, *dv = c->t, *y = c->t + n, *z = c->t + 2 * n;
  int           st = MechEval(c, x, 3, &V);

  if (st)
    return st;
  if (c->mech.constant_mass) { /* only V_{,ijw} */
    memset(T, 0, (size_t)(d * d) * sizeof(double));
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++)
          T[i * d + j] += wq[k] * c->d3V[(i * n + j) * n + k];
    return 0;
  }
  MechAB(c, b, a);
  /* M_w, dv = A (w_p - M_w v) */
  for (int k = 0; k < nn; k++) {
    double s = 0;
    for (int l = 0; l < n; l++)
      s += wq[l] * c->dM[l * nn + k];
    Mw[k] = s;
  }
  MatVec(n, Mw, c->v, y);
  for (int i = 0; i < n; i++)
    dv[i] = wp[i] - y[i];
  Solve(c, dv);
  /* Miwv[i] = M_{,iw} v, Midv[i] = M_{,i} dv */
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < n; k++) {
      double s = 0;
      for (int l = 0; l < n; l++) {
        double m = 0;
        for (int r = 0; r < n; r++)
          m += wq[r] * c->d2M[(i * n + r) * nn + k * n + l];
        s += m * c->v[l];
      }
      Miwv[i * n + k] = s;
    }
    MatVec(n, c->dM + i * nn, dv, Midv + i * n);
  }
  /* T_pp = -A M_w A, column by column (A symmetric: column j of A is its row j) */
  for (int j = 0; j < n; j++) {
    MatVec(n, Mw, c->A + j * n, y);
    Solve(c, y);
    for (int i = 0; i < n; i++)
      T[(n + i) * d + n + j] = -y[i];
  }
  /* T_{q_i p} = A (M_w a_i - M_{,iw} v - M_{,i} dv) */
  for (int i = 0; i < n; i++) {
    MatVec(n, Mw, a + i * n, y);
    for (int k = 0; k < n; k++)
      y[k] -= Miwv[i * n + k] + Midv[i * n + k];
    Solve(c, y);
    for (int j = 0; j < n; j++)
      T[i * d + n + j] = T[(n + j) * d + i] = y[j];
  }
  /* T_{q_i q_j} */
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0, t;
      for (int k = 0; k < n; k++)
        s += wq[k] * Quad(n, c->v, c->d3M + ((i * n + j) * n + k) * nn, c->v);
      t = -0.5 * s - Quad(n, dv, c->d2M + (i * n + j) * nn, c->v);
      t += Dot(n, Midv + i * n, a + j * n) + Dot(n, a + i * n, Midv + j * n);
      t += Dot(n, Miwv + i * n, a + j * n) + Dot(n, a + i * n, Miwv + j * n);
      MatVec(n, Mw, a + j * n, z);
      t -= Dot(n, a + i * n, z);
      for (int k = 0; k < n; k++)
        t += wq[k] * c->d3V[(i * n + j) * n + k];
      T[i * d + j] = T[j * d + i] = t;
    }
  return 0;
}

/* E_T (the file head) at x, and with g its gradient: M, A and v from MechEval, M_T and V_T from data_T. */
static int MechETEval(MechCtx *c, const double *x, double *f, double *g)
{
  int    n = c->mech.n, st;
  double V, VT;

  if ((st = MechEval(c, x, g ? 1 : 0, &V)) ||
      (st = c->mech.data_T(x, c->MT, g ? c->dMT : NULL, &VT, g ? c->dVT : NULL, c->mech.ctx)))
    return st;
  MatVec(n, c->MT, c->v, c->t); /* M_T v */
  MatVec(n, c->A, c->t, c->y);  /* A M_T v */
  if (f)
    *f = VT - 0.5 * Dot(n, c->v, c->t);
  for (int i = 0; g && i < n; i++) {
    g[i] = -0.5 * Quad(n, c->v, c->dMT + i * n * n, c->v) + c->dVT[i] +
           (c->mech.constant_mass ? 0 : Quad(n, c->v, c->dM + i * n * n, c->y));
    g[n + i] = -c->y[i];
  }
  return 0;
}

static int MechET(const double *x, double *f, void *ctx) { return MechETEval(ctx, x, f, NULL); }
static int MechETGrad(const double *x, double *g, void *ctx) { return MechETEval(ctx, x, NULL, g); }

static void MechDestroy(void *ctx)
{
  MechCtx *c = ctx;
  if (!c)
    return;
  if (c->destroy_user)
    c->destroy_user(c->mech.ctx);
  free(c->M);
  free(c->MT);
  free(c);
}

/* The cached evaluation belongs to the old parameters. */
static void MechInvalidate(HsProblem *prob)
{
  MechCtx *c = prob->ctx;
  c->level = -1, c->mass_ok = 0;
}

/*@ HsProblemSetMechanical - installs E = 1/2 p^T M(q)^{-1} p + V(q) (docs/theory.md section 1) with its
    gradient, Hessian and, if mech->third, the analytic third-derivative action D(Hess E)(x)[w], from
    the mass matrix and potential callbacks (formulas in this file's head).

  Not collective. Input: prob - a problem with n = mech->n (any n >= 1); mech - the system (copied);
  destroy_user - frees mech->ctx with the problem (may be NULL). prob->ctx becomes internal;
  HsProblemGetUserContext(prob) returns mech->ctx, and prob->invalidate forgets the cached
  evaluation after a parameter change. A constant mass matrix (mech->constant_mass) is factored once
  per parameter set, and its derivatives are neither stored nor asked for.

  Returns HS_SUCCESS, HS_EINVAL (n does not match, a callback missing) or HS_ENOMEM.
@*/
int HsProblemSetMechanical(HsProblem *prob, const HsMechanical *mech, void (*destroy_user)(void *))
{
  MechCtx *c;
  size_t   n = (size_t)mech->n, cm = mech->constant_mass ? 0 : 1, total;

  if (mech->n != prob->n || mech->n < 1 || !mech->mass || !mech->potential)
    return HS_EINVAL;
  c = calloc(1, sizeof(*c));
  if (!c)
    return HS_ENOMEM;
  /* one block: M n^2, dM n^3, d2M n^4, d3M n^5 (the last three only for a mass that depends on q, d3M
   * only with third derivatives), dV n, d2V n^2, d3V n^3, v n, q 2n, w 5 n^2, A n^2, L n^2, t 4n */
  total = n * n + cm * (n * n * n + n * n * n * n + (mech->third ? n * n * n * n * n : 0)) + n + n * n + n * n * n +
          n + 2 * n + 5 * n * n + 2 * n * n + 4 * n;
  c->M = calloc(total, sizeof(double));
  if (!c->M) {
    free(c);
    return HS_ENOMEM;
  }
  c->dM  = c->M + n * n;
  c->d2M = c->dM + cm * n * n * n;
  c->d3M = c->d2M + cm * n * n * n * n;
  c->dV  = c->d3M + (cm && mech->third ? n * n * n * n * n : 0);
  c->d2V = c->dV + n;
  c->d3V = c->d2V + n * n;
  c->v   = c->d3V + n * n * n;
  c->q   = c->v + n;
  c->w   = c->q + 2 * n;
  c->A   = c->w + 5 * n * n;
  c->L   = c->A + n * n;
  c->t   = c->L + n * n;
  if (!cm)
    c->dM = c->d2M = c->d3M = NULL;
  if (!mech->third)
    c->d3M = c->d3V = NULL;
  if (mech->data_T && !(c->MT = calloc(n * n + n * n * n + 2 * n, sizeof(double)))) {
    free(c->M), free(c);
    return HS_ENOMEM;
  }
  if (mech->data_T)
    c->dMT = c->MT + n * n, c->dVT = c->dMT + n * n * n, c->y = c->dVT + n;
  c->mech           = *mech;
  c->destroy_user   = destroy_user;
  c->level          = -1;
  prob->ctx         = c;
  prob->destroy_ctx = MechDestroy;
  prob->user_ctx    = mech->ctx;
  prob->invalidate  = MechInvalidate;
  prob->E.f         = MechE;
  prob->E.grad      = MechGrad;
  prob->E.hess      = MechHess;
  prob->E.d3        = mech->third ? MechD3 : NULL;
  prob->E.grad_bound = mech->grad_bound ? MechGradBound : NULL;
  if (mech->data_T)
    prob->E_T.f = MechET, prob->E_T.grad = MechETGrad;
  return HS_SUCCESS;
}

/*@ HsMechanicalUserContext - the context given in HsMechanical.ctx, from the ctx pointer that the
    problem's callbacks (E, ell, phi) receive. Not collective. @*/
void *HsMechanicalUserContext(void *prob_ctx) { return ((MechCtx *)prob_ctx)->mech.ctx; }
