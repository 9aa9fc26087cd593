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

/*@ HsControlLawCheck - checks that prob fits the bounded law (costate/hscontrol.h): with bounds or a
    control without cost, R must be diagonal (a non-diagonal R couples the controls: the maximum condition is
    then a small QP per interval, not supported), R_jj >= 0, and R_jj = 0 only with both bounds finite.

  Not collective. msg (msg_len bytes, may be NULL) receives a message naming the problem on failure.
  Returns HS_SUCCESS or HS_EINVAL.
@*/
int HsControlLawCheck(const HsProblem *prob, char *msg, int msg_len)
{
  int    i, j, m = prob->m;
  double lo, hi, r;

  if (!HsControlLawActive(prob))
    return HS_SUCCESS;
  for (i = 0; i < m; i++)
    for (j = 0; j < m; j++)
      if (i != j && prob->R[i * m + j] != 0) {
        if (msg)
          snprintf(msg, (size_t)msg_len,
                   "problem '%s' bounds its controls but R is not diagonal (R[%d][%d] = %g): the indirect solvers take "
                   "control bounds only with a diagonal R (docs/controls.md); use the direct solver "
                   "(-hs_scheme direct -hs_direct_solver ipopt) or make R diagonal",
                   prob->name, i + 1, j + 1, prob->R[i * m + j]);
        return HS_EINVAL;
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
  R must be diagonal (HsControlLawCheck). Returns HS_SUCCESS or HS_EINVAL.
@*/
int HsControlLawEval(const HsProblem *prob, double eps, const double *s, double *u, double *psi, double *duds)
{
  int    j, m    = prob->m, st;
  double pj, sum = 0;

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
