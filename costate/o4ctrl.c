/* hamshoot: the maximized control term of -hs_scheme conserving4 for controls that enter nonlinearly and a general
 * control cost (costate/hso4ctrl.h, docs/controls.md). */
#include "hso4ctrl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The inner Newton's globalization (Step): Armijo's fraction of the predicted increase of h; the first shift of a
   Levenberg step, relative to 1 + max |h_uu| (multiplied by 10 until -h_uu + shift I is positive definite, at most up
   to HS_O4_CTRL_SHIFT_MAX); the line search's halvings; the Newton regime, |h_u| below this times the scale, where the
   full step is taken without the line search (round-off would stall Armijo's test); |h_u| within this factor of the
   stopping test counts as stationary in the failure message (Legendre-Clebsch rather than no maximum). */
#define HS_O4_CTRL_ARMIJO 1e-4
#define HS_O4_CTRL_SHIFT0 1e-6
#define HS_O4_CTRL_SHIFT_MAX 1e30
#define HS_O4_CTRL_HALVINGS 60
#define HS_O4_CTRL_NEWTON 1e-6
#define HS_O4_CTRL_STATIONARY 1e3

struct HsO4Ctrl_s {
  const HsProblem *P;
  int              n, m, w;
  double          *u, *ut, *out, *hu, *A, *L, *d, *Z, *X, *f; /* m, m, (n+1)(1+w+w^2), m, m^2, m^2, m, 2n m, 2n m, n */
  double           t;   /* the time at which f and c are evaluated (HsO4CtrlSetTime) */
  double           eps; /* the regularization eps/2 |u|^2 added to the control cost (HsO4CtrlSetRegularization) */
  char             why[256];
};

HsO4Ctrl *HsO4CtrlCreate(const HsProblem *P)
{
  int       n = P->n, m = P->m, w = n + m;
  HsO4Ctrl *c = calloc(1, sizeof *c);
  double   *p;

  if (!c)
    return NULL;
  c->P = P, c->n = n, c->m = m, c->w = w;
  p = malloc(sizeof(double) * (size_t)(2 * m + (n + 1) * (1 + w + w * w) + m + 2 * m * m + m + 4 * n * m + n));
  if (!p) {
    free(c);
    return NULL;
  }
  c->u = p, p += m; /* the warm start: 0 at first */
  memset(c->u, 0, sizeof(double) * (size_t)m);
  c->ut  = p, p += m;
  c->out = p, p += (n + 1) * (1 + w + w * w);
  c->hu  = p, p += m;
  c->A   = p, p += m * m;
  c->L   = p, p += m * m;
  c->d   = p, p += m;
  c->Z   = p, p += 2 * n * m;
  c->X   = p, p += 2 * n * m;
  c->f   = p;
  return c;
}

void HsO4CtrlDestroy(HsO4Ctrl **c)
{
  if (!*c)
    return;
  free((*c)->u);
  free(*c);
  *c = NULL;
}

const double *HsO4CtrlControl(const HsO4Ctrl *c) { return c->u; }
const double *HsO4CtrlForce(const HsO4Ctrl *c) { return c->f; }
const char   *HsO4CtrlWhy(const HsO4Ctrl *c) { return c->why; }
void          HsO4CtrlSetRegularization(HsO4Ctrl *c, double eps) { c->eps = eps; }
void          HsO4CtrlSetTime(HsO4Ctrl *c, double t) { c->t = t; }

/* The Cholesky factor L of A + mu I (m x m, lower, row-major); 0, or 1 if a pivot is not above tol. */
static int Chol(int m, const double *A, double mu, double tol, double *L)
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j <= i; j++) {
      double s = A[i * m + j] + (i == j ? mu : 0);
      for (int k = 0; k < j; k++)
        s -= L[i * m + k] * L[j * m + k];
      if (i == j) {
        if (!(s > tol))
          return 1;
        L[i * m + i] = sqrt(s);
      } else
        L[i * m + j] = s / L[j * m + j];
    }
  return 0;
}

/* x = (L L^T)^{-1} b in place (m). */
static void CholSolve(int m, const double *L, double *x)
{
  for (int i = 0; i < m; i++) {
    for (int k = 0; k < i; k++)
      x[i] -= L[i * m + k] * x[k];
    x[i] /= L[i * m + i];
  }
  for (int i = m - 1; i >= 0; i--) {
    for (int k = i + 1; k < m; k++)
      x[i] -= L[k * m + i] * x[k];
    x[i] /= L[i * m + i];
  }
}

/* h = -c + lp . f at (q, u) and (order 2) h_u, A = -h_uu and the stopping scale; 1 if not finite, < 0 on failure. */
static int Eval(HsO4Ctrl *c, const double *q, const double *lp, const double *u, int order, double *h, double *scale)
{
  int     n = c->n, m = c->m, w = c->w, nf = n + 1, st = c->P->ctrl(c->t, q, u, order, c->out, c->P->ctx);
  double *g = c->out + nf, *H = g + nf * w;

  if (st)
    return st;
  *h = -c->out[n];
  for (int i = 0; i < n; i++)
    *h += lp[i] * c->out[i];
  for (int j = 0; j < m && c->eps; j++)
    *h -= 0.5 * c->eps * u[j] * u[j];
  if (order < 2)
    return isfinite(*h) ? 0 : 1;
  *scale = 1;
  for (int j = 0; j < m; j++) {
    double s = fabs(g[n * w + n + j]);
    c->hu[j] = -g[n * w + n + j];
    for (int i = 0; i < n; i++)
      c->hu[j] += lp[i] * g[i * w + n + j], s += fabs(lp[i] * g[i * w + n + j]);
    *scale = fmax(*scale, s);
    for (int k = 0; k < m; k++) {
      double a = H[(n * w + n + j) * w + n + k];
      for (int i = 0; i < n; i++)
        a -= lp[i] * H[(i * w + n + j) * w + n + k];
      c->A[j * m + k] = a + (j == k ? c->eps : 0);
    }
    c->hu[j] -= c->eps * u[j];
  }
  return 0;
}

/* The largest |A_ij| (for the Legendre-Clebsch test's and the shift's scale). */
static double MaxAbs(int m, const double *A)
{
  double a = 0;
  for (int i = 0; i < m * m; i++)
    a = fmax(a, fabs(A[i]));
  return a;
}

/* One globalized Newton step from c->u: the Newton direction where -h_uu is positive definite, else a shifted
 * (Levenberg) one, both ascent directions; a backtracking line search for an increase of h (the full step once in
 * the Newton regime). 0: a step taken; 1: none found; < 0 on failure. */
static int Step(HsO4Ctrl *c, const double *q, const double *lp, double h, int newton)
{
  int    m  = c->m, st;
  double mu = 0, big = MaxAbs(m, c->A), slope, t = 1, ht;

  while (Chol(m, c->A, mu, HS_O4_LC_TOL * (1 + big), c->L)) {
    mu = mu ? 10 * mu : HS_O4_CTRL_SHIFT0 * (1 + big);
    if (mu > HS_O4_CTRL_SHIFT_MAX)
      return 1;
  }
  memcpy(c->d, c->hu, sizeof(double) * (size_t)m);
  CholSolve(m, c->L, c->d);
  slope = 0;
  for (int j = 0; j < m; j++)
    slope += c->hu[j] * c->d[j];
  for (int k = 0; k < HS_O4_CTRL_HALVINGS; k++, t *= 0.5) {
    for (int j = 0; j < m; j++)
      c->ut[j] = c->u[j] + t * c->d[j];
    st = Eval(c, q, lp, c->ut, 0, &ht, NULL);
    if (st < 0)
      return st;
    if (!st && (ht >= h + HS_O4_CTRL_ARMIJO * t * slope || (newton && mu == 0 && k == 0))) {
      memcpy(c->u, c->ut, sizeof(double) * (size_t)m);
      return 0;
    }
  }
  return 1;
}

/* The maximizer u* into c->u (warm start: c->u), A = -h_uu factored into c->L there. 0, HS_EDOM (with why), < 0. */
static int Maximize(HsO4Ctrl *c, const double *q, const double *lp, double *psi)
{
  int    m = c->m, st = 0, it;
  double h = 0, scale = 1, gn = 0;

  for (it = 0; it <= HS_O4_CTRL_MAXIT; it++) {
    int pd;
    if ((st = Eval(c, q, lp, c->u, 2, &h, &scale)))
      break;
    gn = 0;
    for (int j = 0; j < m; j++)
      gn = fmax(gn, fabs(c->hu[j]));
    pd = !Chol(m, c->A, 0, HS_O4_LC_TOL * (1 + MaxAbs(m, c->A)), c->L);
    if (pd && gn <= HS_O4_CTRL_TOL * scale) {
      *psi      = h;
      c->why[0] = 0;
      return 0;
    }
    if (it == HS_O4_CTRL_MAXIT || (st = Step(c, q, lp, h, pd && gn <= HS_O4_CTRL_NEWTON * scale)))
      break;
  }
  if (st < 0)
    return st;
  for (int j = 0; j < m; j++)
    c->u[j] = 0; /* the next evaluation starts afresh */
  snprintf(c->why, sizeof c->why,
           st == 1 && it == 0 ? "the control cost or the force is not finite there"
           : gn <= HS_O4_CTRL_STATIONARY * HS_O4_CTRL_TOL * scale
               ? "the Legendre-Clebsch condition fails: H is not strictly concave in u at its stationary point (-H_uu "
                 "not positive definite)"
               : "no maximum of H in u found (|H_u| = %.3g after %d Newton steps: H may be unbounded above in u, or "
                 "not concave)",
           gn, it);
  return HS_EDOM;
}

/* The Hessian blocks by implicit differentiation: h_zz + h_zu A^{-1} h_uz, z = (q, lp), at u* (c->out of order 2). */
static void Hessian(HsO4Ctrl *c, const double *lp, double *Hqq, double *Hql, double *Hll)
{
  int     n = c->n, m = c->m, w = c->w, nf = n + 1;
  double *g = c->out + nf, *H = g + nf * w;

  for (int l = 0; l < n; l++)
    for (int j = 0; j < m; j++) { /* Z: rows q_l then lp_i, columns u_j */
      double s = -H[(n * w + l) * w + n + j];
      for (int i = 0; i < n; i++)
        s += lp[i] * H[(i * w + l) * w + n + j];
      c->Z[l * m + j]       = s;
      c->Z[(n + l) * m + j] = g[l * w + n + j];
    }
  for (int r = 0; r < 2 * n; r++) { /* X row r = A^{-1} Z row r */
    memcpy(c->X + r * m, c->Z + r * m, sizeof(double) * (size_t)m);
    CholSolve(m, c->L, c->X + r * m);
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      double qq = -H[(n * w + a) * w + b], ql = g[b * w + a], ll = 0;
      for (int i = 0; i < n; i++)
        qq += lp[i] * H[(i * w + a) * w + b];
      for (int j = 0; j < m; j++) {
        qq += c->Z[a * m + j] * c->X[b * m + j];
        ql += c->Z[a * m + j] * c->X[(n + b) * m + j];
        ll += c->Z[(n + a) * m + j] * c->X[(n + b) * m + j];
      }
      Hqq[a * n + b] = qq, Hql[a * n + b] = ql, Hll[a * n + b] = ll;
    }
}

int HsO4CtrlEval(HsO4Ctrl *c, const double *q, const double *lp, int order, double *psi, double *gq, double *gl,
                 double *Hqq, double *Hql, double *Hll)
{
  int     n = c->n, w = c->w, nf = n + 1, st = Maximize(c, q, lp, psi);
  double *g = c->out + nf;

  if (st)
    return st > 0 ? HS_EDOM : st;
  memcpy(c->f, c->out, sizeof(double) * (size_t)n);
  if (order < 1)
    return 0;
  for (int l = 0; l < n; l++) { /* the envelope theorem: dPsi/dq = h_q, dPsi/dlp = f at u* */
    double s = -g[n * w + l];
    for (int i = 0; i < n; i++)
      s += lp[i] * g[i * w + l];
    gq[l] = s, gl[l] = c->out[l];
  }
  if (order > 1)
    Hessian(c, lp, Hqq, Hql, Hll);
  return 0;
}
