/* hamshoot: the control law of bounded controls, costate/hscontrol.h (formulas) and docs/controls.md.
 *
 * Every piece is evaluated in a form free of cancellation: with sm(t) = sp(-|t|) (small, >= 0),
 *   sp(t) = max(t, 0) + sm(t),   sp'(t) = [t > 0] + sign(-t) q(|t|),   q(a) = sp'(-a) = eps^2 / (2 S (S + a)),
 *   Sp(t) = max(t, 0)^2 / 2 + sign(-t) D(|t|),  D(a) = Sp(-a) = -eps^2/4 (a / (a + S) + asinh(a / eps)),
 * S = sqrt(a^2 + eps^2) (from sp(t) - sp(-t) = t and, for t > 0, Sp(t) = t^2/2 - Sp(-t); the forms are checked
 * against central differences and the exact projection in tests/test_control.c), so that u = clamp(w) + sm(lo - w) -
 * sm(w - hi) and psi = s uc - r uc^2/2 - r [C(lo - w) + C(w - hi)], uc = clamp(w, lo, hi), C(t) = Sp(t) - max(t,
 * 0)^2/2.
 */
#include "hscontrol.h"

#include <math.h>
#include <stdio.h>

static int QPChol(int n, double *A);

/* sm(t) = sp(-|t|) = eps^2 / (2 (S + |t|)) */
static double SmoothPart(double t, double eps)
{
  double a = fabs(t);

  return eps == 0 ? 0 : eps * eps / (2 * (sqrt(a * a + eps * eps) + a));
}

/* sp'(t) = (1 + t / S) / 2; eps = 0: the step [t > 0] (the free side at t = 0) */
static double SmoothStep(double t, double eps)
{
  double a = fabs(t), S, q;

  if (eps == 0)
    return t > 0 ? 1 : 0;
  S = sqrt(a * a + eps * eps);
  q = eps * eps / (2 * S * (S + a));
  return t > 0 ? 1 - q : q;
}

/* C(t) = Sp(t) - max(t, 0)^2 / 2 = sign(-t) D(|t|) */
static double SmoothCorrection(double t, double eps)
{
  double a = fabs(t), S, D;

  if (eps == 0)
    return 0;
  S = sqrt(a * a + eps * eps);
  D = -eps * eps / 4 * (a / (a + S) + asinh(a / eps));
  return t > 0 ? -D : D;
}

/*@ HsControlScalar - the bounded control law of one control (costate/hscontrol.h; docs/controls.md):
    the box law for r > 0 (eps = 0: the exact projection u = clamp(s/r, lo, hi)), the bang-bang law for
    r = 0 (both bounds finite, eps > 0).

  Not collective. Inputs: r = R_jj, lo, hi (may be -INFINITY / INFINITY), eps >= 0, s = (B^T lambda^p)_j.
  Outputs (each may be NULL): u, psi (the maximized control term), duds = du/ds.
  Returns HS_SUCCESS or HS_EINVAL.
@*/
int HsControlScalar(double r, double lo, double hi, double eps, double s, double *u, double *psi, double *duds)
{
  double w, uc, d1, d2, t1, t2;

  if (!(r >= 0) || !(eps >= 0) || !(lo <= hi) || isnan(s))
    return HS_EINVAL;
  if (r == 0) {
    double mid = (hi + lo) / 2, half = (hi - lo) / 2, S = sqrt(s * s + eps * eps);

    if (!isfinite(lo) || !isfinite(hi) || eps == 0)
      return HS_EINVAL;
    if (u)
      *u = mid + half * s / S;
    if (psi)
      *psi = mid * s + half * s * s / (S + eps); /* half (S - eps) without cancellation */
    if (duds)
      *duds = half * eps * eps / (S * S * S);
    return HS_SUCCESS;
  }
  w  = s / r;
  uc = w < lo ? lo : (w > hi ? hi : w);
  t1 = lo - w, t2 = w - hi;
  if (u)
    *u = uc + (isfinite(lo) ? SmoothPart(t1, eps) : 0) - (isfinite(hi) ? SmoothPart(t2, eps) : 0);
  if (psi)
    *psi = s * uc - r * uc * uc / 2 -
           r * ((isfinite(lo) ? SmoothCorrection(t1, eps) : 0) + (isfinite(hi) ? SmoothCorrection(t2, eps) : 0));
  if (duds) {
    d1 = isfinite(lo) ? SmoothStep(t1, eps) : 0;
    d2 = isfinite(hi) ? SmoothStep(t2, eps) : 0;
    /* 1 - d1 - d2 formed without cancellation on the active side (1 - sp'(t) = sp'(-t)) */
    if (isfinite(lo) && t1 > 0)
      *duds = (SmoothStep(-t1, eps) - d2) / r;
    else if (isfinite(hi) && t2 > 0)
      *duds = (SmoothStep(-t2, eps) - d1) / r;
    else
      *duds = (1 - d1 - d2) / r;
  }
  return HS_SUCCESS;
}

/*@ HsControlLawActive - whether prob's controls need the bounded law of costate/hscontrol.h.

  Not collective. Returns 1 if a control has a finite bound or R_jj = 0, 0 otherwise.
@*/
int HsControlLawActive(const HsProblem *prob)
{
  int j, m = prob->m;

  for (j = 0; j < m; j++)
    if ((prob->u_min && isfinite(prob->u_min[j])) || (prob->u_max && isfinite(prob->u_max[j])) ||
        prob->R[j * m + j] == 0)
      return 1;
  return 0;
}

/*@ HsControlLawCheck - checks that prob fits the bounded law (costate/hscontrol.h): R_jj >= 0, R_jj = 0 only with
    both bounds finite, and a non-diagonal R (the coupled law, a box QP per evaluation) symmetric positive definite
    with at most HS_CONTROL_QP_MAX_M controls (so no R_jj = 0: bang-bang controls need a diagonal R).

  Not collective. msg (msg_len bytes, may be NULL) receives a message naming the problem on failure.
  Returns HS_SUCCESS or HS_EINVAL.
@*/
int HsControlLawCheck(const HsProblem *prob, char *msg, int msg_len)
{
  int    j, m = prob->m;
  double lo, hi, r;

  if (!HsControlLawActive(prob))
    return HS_SUCCESS;
  if (!HsControlLawDiagonal(prob)) {
    double L[HS_CONTROL_QP_MAX_M * HS_CONTROL_QP_MAX_M];
    int    bad = m > HS_CONTROL_QP_MAX_M;
    for (int i = 0; !bad && i < m * m; i++)
      L[i] = prob->R[i], bad = prob->R[i] != prob->R[(i % m) * m + i / m];
    if (bad || QPChol(m, L)) {
      if (msg)
        snprintf(msg, (size_t)msg_len,
                 m > HS_CONTROL_QP_MAX_M ? "problem '%s' bounds its %d controls with a non-diagonal R: the indirect "
                                           "solvers' coupled law takes at most %d (docs/controls.md); use the direct "
                                           "solver (-hs_scheme direct -hs_direct_solver ipopt)"
                                         : "problem '%s' bounds its controls with a non-diagonal R that is not "
                                           "symmetric positive definite: the coupled law needs a strictly concave "
                                           "maximum condition (docs/controls.md)",
                 prob->name, m, HS_CONTROL_QP_MAX_M);
      return HS_EINVAL;
    }
  }
  for (j = 0; j < m; j++) {
    r  = prob->R[j * m + j];
    lo = prob->u_min ? prob->u_min[j] : -INFINITY;
    hi = prob->u_max ? prob->u_max[j] : INFINITY;
    if (!(r >= 0) || (r == 0 && !(isfinite(lo) && isfinite(hi)))) {
      if (msg)
        snprintf(msg, (size_t)msg_len,
                 "problem '%s': control %d has R_jj = %g; a control without cost (R_jj = 0, bang-bang) needs both "
                 "bounds u_min and u_max finite, and R_jj must not be negative (docs/controls.md)",
                 prob->name, j + 1, r);
      return HS_EINVAL;
    }
  }
  return HS_SUCCESS;
}

/*@ HsControlLawEval - the bounded control law of all controls of prob (costate/hscontrol.h).

  Not collective. Inputs: eps >= 0 (> 0 if a control has R_jj = 0), s (m values, (B^T lambda^p)_j).
  Outputs (each may be NULL): u (m), psi (the sum of the controls' psi), duds (m, the diagonal of du/ds).
  R must be diagonal (else HS_EINVAL: HsControlLawEvalFull takes a coupled R). Returns HS_SUCCESS or HS_EINVAL.
@*/
int HsControlLawEval(const HsProblem *prob, double eps, const double *s, double *u, double *psi, double *duds)
{
  int    j, m    = prob->m, st;
  double pj, sum = 0;

  if (!HsControlLawDiagonal(prob)) /* a coupled R: HsControlLawEvalFull (never the decoupled law by mistake) */
    return HS_EINVAL;
  for (j = 0; j < m; j++) {
    st = HsControlScalar(prob->R[j * m + j], prob->u_min ? prob->u_min[j] : -INFINITY,
                         prob->u_max ? prob->u_max[j] : INFINITY, eps, s[j], u ? &u[j] : NULL, &pj,
                         duds ? &duds[j] : NULL);
    if (st)
      return st;
    sum += pj;
  }
  if (psi)
    *psi = sum;
  return HS_SUCCESS;
}

/* Cholesky of the symmetric n x n matrix A (row-major, lower triangle used) in place into L (A = L L^T); 1 if A is
   not positive definite. */
static int QPChol(int n, double *A)
{
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++)
      d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0))
      return 1;
    A[j * n + j] = sqrt(d);
    for (int i = j + 1; i < n; i++) {
      double v = A[i * n + j];
      for (int k = 0; k < j; k++)
        v -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = v / A[j * n + j];
    }
  }
  return 0;
}

/* Solves L L^T x = b (QPChol's factor) in place of b. */
static void QPCholSolve(int n, const double *L, double *b)
{
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++)
      b[i] -= L[i * n + k] * b[k];
    b[i] /= L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int k = i + 1; k < n; k++)
      b[i] -= L[k * n + i] * b[k];
    b[i] /= L[i * n + i];
  }
}

/* The box QP of one evaluation: R (m x m, symmetric positive definite), the bounds, s, and the barrier weights
   mu_j = R_jj eps^2 / 4 (eps > 0). */
typedef struct {
  int           m;
  const double *R, *lo, *hi, *s;
  double        mu[HS_CONTROL_QP_MAX_M];
} HsBoxQP;

/* Factors M_FF (the rows and columns of the free set F, nf of them, listed in f) of M = R + diag(dg) (dg NULL: 0)
   into L (nf x nf). 1 if not positive definite. */
static int QPFactorFree(const HsBoxQP *q, const double *dg, const int *f, int nf, double *L)
{
  for (int a = 0; a < nf; a++)
    for (int b = 0; b < nf; b++)
      L[a * nf + b] = q->R[f[a] * q->m + f[b]] + (a == b && dg ? dg[f[a]] : 0);
  return QPChol(nf, L);
}

/* du/ds = Z (M_FF)^{-1} Z^T (m x m) from the factor L of M_FF (QPFactorFree): zero rows and columns off F. */
static void QPJacobian(const HsBoxQP *q, const int *f, int nf, const double *L, double *duds)
{
  double e[HS_CONTROL_QP_MAX_M];

  for (int i = 0; i < q->m * q->m; i++)
    duds[i] = 0;
  for (int b = 0; b < nf; b++) {
    for (int a = 0; a < nf; a++)
      e[a] = a == b;
    QPCholSolve(nf, L, e);
    for (int a = 0; a < nf; a++)
      duds[f[a] * q->m + f[b]] = e[a];
  }
}

/* The objective's gradient g = s - R u (no barrier terms). */
static void QPGradient(const HsBoxQP *q, const double *u, double *g)
{
  for (int i = 0; i < q->m; i++) {
    g[i] = q->s[i];
    for (int j = 0; j < q->m; j++)
      g[i] -= q->R[i * q->m + j] * u[j];
  }
}

/* The equality QP on the free set of the working set w (0 free, -1 at lo, +1 at hi): the step p (m, 0 off F) from u
   to argmax s^T u - 1/2 u^T R u with u_W fixed. Returns the number of free controls, or -1 (not positive definite). */
static int QPFreeStep(const HsBoxQP *q, const int *w, const double *u, int *f, double *p)
{
  double L[HS_CONTROL_QP_MAX_M * HS_CONTROL_QP_MAX_M], g[HS_CONTROL_QP_MAX_M], b[HS_CONTROL_QP_MAX_M];
  int    nf = 0;

  for (int j = 0; j < q->m; j++)
    if (!w[j])
      f[nf++] = j;
  QPGradient(q, u, g);
  for (int a = 0; a < nf; a++)
    b[a] = g[f[a]];
  if (QPFactorFree(q, NULL, f, nf, L))
    return -1;
  QPCholSolve(nf, L, b);
  for (int j = 0; j < q->m; j++)
    p[j] = 0;
  for (int a = 0; a < nf; a++)
    p[f[a]] = b[a];
  return nf;
}

/* Releases the bound of the working set with the largest wrong-signed multiplier (g_j > 0 at lo, < 0 at hi; equal
   bounds stay fixed). Returns 1 if one was released, 0 if u is optimal. */
static int QPRelease(const HsBoxQP *q, const double *u, int *w)
{
  double g[HS_CONTROL_QP_MAX_M], worst = 0;
  int    jw = -1;

  QPGradient(q, u, g);
  for (int j = 0; j < q->m; j++)
    if (w[j] && q->lo[j] < q->hi[j] && w[j] * g[j] < -worst)
      worst = -w[j] * g[j], jw = j;
  if (jw < 0)
    return 0;
  w[jw] = 0;
  return 1;
}

/* The exact box QP, u = argmax_{lo <= u <= hi} s^T u - 1/2 u^T R u, by a primal active-set method from the clamped
   decoupled guess, and du/ds = Z (Z^T R Z)^{-1} Z^T on the free set (a bound with a zero multiplier counts as free,
   the free side of a kink as in the diagonal law). Returns HS_SUCCESS or HS_EDOM. */
static int QPExact(const HsBoxQP *q, double *u, double *duds)
{
  int    m = q->m, w[HS_CONTROL_QP_MAX_M], f[HS_CONTROL_QP_MAX_M], nf, it, jb, a;
  double p[HS_CONTROL_QP_MAX_M], L[HS_CONTROL_QP_MAX_M * HS_CONTROL_QP_MAX_M], g[HS_CONTROL_QP_MAX_M], alpha;

  for (int j = 0; j < m; j++) {
    double v = q->s[j] / q->R[j * m + j];
    u[j]     = v <= q->lo[j] ? q->lo[j] : (v >= q->hi[j] ? q->hi[j] : v);
    w[j]     = u[j] == q->lo[j] ? -1 : (u[j] == q->hi[j] ? 1 : 0);
  }
  for (it = 0; it < HS_CONTROL_QP_MAXIT; it++) {
    if ((nf = QPFreeStep(q, w, u, f, p)) < 0)
      return HS_EDOM;
    for (alpha = 1, jb = -1, a = 0; a < nf; a++) { /* the longest feasible step along p, at most 1 */
      int    j = f[a];
      double t = p[j] < 0 ? (q->lo[j] - u[j]) / p[j] : (p[j] > 0 ? (q->hi[j] - u[j]) / p[j] : INFINITY);
      if (t < alpha)
        alpha = t < 0 ? 0 : t, jb = j;
    }
    for (int j = 0; j < m; j++)
      u[j] += alpha * p[j];
    if (jb >= 0) { /* blocked: the bound joins the working set */
      w[jb] = p[jb] < 0 ? -1 : 1;
      u[jb] = w[jb] < 0 ? q->lo[jb] : q->hi[jb];
    } else if (!QPRelease(q, u, w))
      break;
  }
  if (it == HS_CONTROL_QP_MAXIT)
    return HS_EDOM;
  QPGradient(q, u, g);
  for (int j = 0; j < m; j++) /* the free side at a zero multiplier */
    if (w[j] && q->lo[j] < q->hi[j] && g[j] == 0)
      w[j] = 0;
  for (nf = 0, jb = 0; jb < m; jb++)
    if (!w[jb])
      f[nf++] = jb;
  if (duds) {
    if (QPFactorFree(q, NULL, f, nf, L))
      return HS_EDOM;
    QPJacobian(q, f, nf, L, duds);
  }
  return HS_SUCCESS;
}

/* The barrier objective f(u) = s^T u - 1/2 u^T R u + sum_j mu_j [log(u_j - lo_j) + log(hi_j - u_j)] (finite bounds
   only; equal bounds fixed, no term), and (g, dg not NULL) its gradient g and the diagonal dg of the barrier's
   curvature (-f'' = R + diag(dg)). -INFINITY outside the box. */
static double QPBarrier(const HsBoxQP *q, const double *u, double *g, double *dg)
{
  double f = 0;

  for (int i = 0; i < q->m; i++) {
    double a = u[i] - q->lo[i], b = q->hi[i] - u[i];
    int    fix = q->lo[i] == q->hi[i];

    f += q->s[i] * u[i];
    if (g)
      g[i] = q->s[i], dg[i] = 0;
    for (int j = 0; j < q->m; j++) {
      f -= 0.5 * u[i] * q->R[i * q->m + j] * u[j];
      if (g)
        g[i] -= q->R[i * q->m + j] * u[j];
    }
    if (fix)
      continue;
    if (!(a > 0) || !(b > 0))
      return -INFINITY;
    if (isfinite(q->lo[i])) {
      f += q->mu[i] * log(a);
      if (g)
        g[i] += q->mu[i] / a, dg[i] += q->mu[i] / (a * a);
    }
    if (isfinite(q->hi[i])) {
      f += q->mu[i] * log(b);
      if (g)
        g[i] -= q->mu[i] / b, dg[i] += q->mu[i] / (b * b);
    }
  }
  return f;
}

/* A strictly interior start: the decoupled smoothed law of each control (HsControlScalar with R_jj), moved inside
   where it rounds onto a bound. */
static void QPBarrierStart(const HsBoxQP *q, double eps, double *u)
{
  for (int j = 0; j < q->m; j++) {
    double lo = q->lo[j], hi = q->hi[j];

    HsControlScalar(q->R[j * q->m + j], lo, hi, eps, q->s[j], &u[j], NULL, NULL);
    if (lo == hi)
      u[j] = lo;
    else if (!(u[j] > lo && u[j] < hi))
      u[j] = isfinite(lo) && isfinite(hi) ? lo + (hi - lo) / 2 : (isfinite(lo) ? lo + eps : hi - eps);
  }
}

/* The smoothed law, u = argmax of QPBarrier, by Newton's method with the fraction-to-boundary rule (HS_CONTROL_QP_TAU)
   and an Armijo backtracking; psi = f(u) and du/ds = (R + diag(dg))^{-1} on the non-fixed controls. Returns
   HS_SUCCESS or HS_EFAILED. */
static int QPSmoothed(const HsBoxQP *q, double eps, double *u, double *psi, double *duds)
{
  int    m = q->m, f[HS_CONTROL_QP_MAX_M], nf = 0, it;
  double g[HS_CONTROL_QP_MAX_M], dg[HS_CONTROL_QP_MAX_M], p[HS_CONTROL_QP_MAX_M], ut[HS_CONTROL_QP_MAX_M];
  double L[HS_CONTROL_QP_MAX_M * HS_CONTROL_QP_MAX_M], fu, ft, alpha, dec, step;

  for (int j = 0; j < m; j++)
    if (q->lo[j] < q->hi[j])
      f[nf++] = j;
  QPBarrierStart(q, eps, u);
  fu = QPBarrier(q, u, g, dg);
  for (it = 0; it < HS_CONTROL_QP_MAXIT; it++) {
    if (QPFactorFree(q, dg, f, nf, L))
      return HS_EDOM;
    for (int a = 0; a < nf; a++)
      p[a] = g[f[a]];
    QPCholSolve(nf, L, p);
    alpha = 1, dec = 0;
    for (int a = 0; a < nf; a++) { /* the Newton decrement and the fraction-to-the-boundary step */
      int j = f[a];
      dec += g[j] * p[a];
      if (p[a] < 0 && isfinite(q->lo[j]))
        alpha = fmin(alpha, HS_CONTROL_QP_TAU * (u[j] - q->lo[j]) / -p[a]);
      if (p[a] > 0 && isfinite(q->hi[j]))
        alpha = fmin(alpha, HS_CONTROL_QP_TAU * (q->hi[j] - u[j]) / p[a]);
    }
    for (int bt = 0; bt < HS_CONTROL_QP_BACKTRACKS;
         bt++, alpha /= 2) { /* Armijo on the concave f; a full step whose expected gain f
          cannot resolve (the last, quadratic ones) is taken */
      for (int j = 0; j < m; j++)
        ut[j] = u[j];
      for (int a = 0; a < nf; a++)
        ut[f[a]] += alpha * p[a];
      ft = QPBarrier(q, ut, NULL, NULL);
      if (ft >= fu + HS_CONTROL_QP_ARMIJO * alpha * dec ||
          (bt == 0 && alpha == 1 && dec <= HS_CONTROL_QP_FLAT * (1 + fabs(fu))))
        break;
    }
    step = 0; /* the full Newton step's size: converged when it is at round-off and taken */
    for (int a = 0; a < nf; a++)
      step = fmax(step, fabs(p[a]) / (1 + fabs(u[f[a]])));
    step = alpha == 1 ? step : INFINITY;
    for (int j = 0; j < m; j++)
      u[j] = ut[j];
    fu = QPBarrier(q, u, g, dg);
    if (!isfinite(fu))
      return HS_EDOM;
    if (step <= HS_CONTROL_QP_TOL)
      break;
  }
  if (it == HS_CONTROL_QP_MAXIT || QPFactorFree(q, dg, f, nf, L))
    return HS_EDOM;
  if (psi)
    *psi = fu;
  if (duds)
    QPJacobian(q, f, nf, L, duds);
  return HS_SUCCESS;
}

/*@ HsControlLawDiagonal - 1 if prob's R is diagonal (the closed-form law of each control), 0 if the controls are
    coupled (the box QP of HsControlLawEvalFull).

  Not collective.
@*/
int HsControlLawDiagonal(const HsProblem *prob)
{
  for (int i = 0; i < prob->m; i++)
    for (int j = 0; j < prob->m; j++)
      if (i != j && prob->R[i * prob->m + j] != 0)
        return 0;
  return 1;
}

/*@ HsControlLawEvalFull - the bounded control law of prob with the full Jacobian (costate/hscontrol.h): for a
    diagonal R the closed forms of HsControlScalar (bit for bit HsControlLawEval, du/ds diagonal); for a coupled R
    the box QP u = argmax_{lo <= u <= hi} s^T u - 1/2 u^T R u: eps = 0 exactly (primal active set, du/ds =
    Z (Z^T R Z)^{-1} Z^T on the free set), eps > 0 the log-barrier law (weights R_jj eps^2 / 4, damped Newton,
    du/ds = (R + D)^{-1}).

  Not collective. Inputs: eps >= 0, s (m values). Outputs (each may be NULL): u (m), psi, duds (m x m, row-major,
  symmetric). Returns HS_SUCCESS, HS_EINVAL (bad input) or HS_EDOM (the QP iteration did not converge).
@*/
int HsControlLawEvalFull(const HsProblem *prob, double eps, const double *s, double *u, double *psi, double *duds)
{
  int     m = prob->m, st;
  double  lo[HS_CONTROL_QP_MAX_M], hi[HS_CONTROL_QP_MAX_M], uw[HS_CONTROL_QP_MAX_M], dd[HS_CONTROL_QP_MAX_M];
  HsBoxQP q;

  if (HsControlLawDiagonal(prob)) {
    if (m > HS_CONTROL_QP_MAX_M && duds)
      return HS_EINVAL;
    st = HsControlLawEval(prob, eps, s, u, psi, duds ? dd : NULL);
    for (int i = 0; !st && duds && i < m * m; i++)
      duds[i] = i % (m + 1) ? 0 : dd[i / (m + 1)];
    return st;
  }
  if (m > HS_CONTROL_QP_MAX_M || !(eps >= 0))
    return HS_EINVAL;
  q.m = m, q.R = prob->R, q.lo = lo, q.hi = hi, q.s = s;
  for (int j = 0; j < m; j++) {
    lo[j] = prob->u_min ? prob->u_min[j] : -INFINITY, hi[j] = prob->u_max ? prob->u_max[j] : INFINITY;
    q.mu[j] = prob->R[j * m + j] * eps * eps / 4;
    if (!(prob->R[j * m + j] > 0) || !(lo[j] <= hi[j]) || isnan(s[j]))
      return HS_EINVAL;
  }
  if (!u)
    u = uw;
  if (eps > 0)
    return QPSmoothed(&q, eps, u, psi, duds);
  if ((st = QPExact(&q, u, duds)))
    return st;
  if (psi) {
    double g[HS_CONTROL_QP_MAX_M]; /* s^T u - 1/2 u^T R u = 1/2 (s + g)^T u, g = s - R u */
    QPGradient(&q, u, g);
    *psi = 0;
    for (int j = 0; j < m; j++)
      *psi += 0.5 * (s[j] + g[j]) * u[j];
  }
  return HS_SUCCESS;
}

/*@ HsControlLawArcInput - the value w_j whose position against [lo_j, hi_j] classifies control j's arc under the
    exact law (eps = 0): s_j / R_jj for a diagonal R; for a coupled R the coordinate-wise maximizer w_j = u_j +
    (s - R u)_j / R_jj (u the exact QP solution, u_j = clamp(w_j, lo_j, hi_j)), continuous in s. Bang-bang controls
    (R_jj = 0) give s_j.

  Not collective. Returns HS_SUCCESS or as HsControlLawEvalFull.
@*/
int HsControlLawArcInput(const HsProblem *prob, const double *s, double *w)
{
  int    m = prob->m, st;
  double u[HS_CONTROL_QP_MAX_M];

  if (HsControlLawDiagonal(prob)) {
    for (int j = 0; j < m; j++)
      w[j] = prob->R[j * m + j] == 0 ? s[j] : s[j] / prob->R[j * m + j];
    return HS_SUCCESS;
  }
  if ((st = HsControlLawEvalFull(prob, 0, s, u, NULL, NULL)))
    return st;
  for (int j = 0; j < m; j++) {
    w[j] = s[j];
    for (int i = 0; i < m; i++)
      w[j] -= prob->R[j * m + i] * u[i];
    w[j] = u[j] + w[j] / prob->R[j * m + j];
  }
  return HS_SUCCESS;
}
