/* hamshoot: the end data of a constrained problem (docs/constrained.md): consistent positions and
 * velocities, independent constraint gradients. */
#include "hsproblem.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* At the state x (q then p) of the end `end`: Phi(q) = 0 and G M^{-1} p = 0 to tol, as a distance |Phi_i| / |G_i|
 * relative to 1 + |q| (a bound on |Phi_i| itself would depend on how the constraint is scaled, and let a linear one
 * at |q| = 1e5 be off by 20: the seventh security review) and an angle between G_i and M^{-1} p, and G of full row rank (its smallest singular value above 1e-10 of its largest). M^{-1} p is the
 * momentum part of grad E (constant M). w: room for nc (1 + n) + n (2 + nc) + nc^2 doubles. */
/* |v| without overflow or underflow in the squares. */
static double Norm2(int n, const double *v)
{
  double mx = 0, s = 0;
  for (int i = 0; i < n; i++)
    mx = fmax(mx, fabs(v[i]));
  if (!(mx > 0) || !isfinite(mx))
    return mx;
  for (int i = 0; i < n; i++)
    s += (v[i] / mx) * (v[i] / mx);
  return mx * sqrt(s);
}

static int CheckEnd(const HsProblem *P, const double *x, const char *end, int vel, double tol, double *w, char *why,
                    size_t len)
{
  int     n = P->n, c = P->nc;
  double *Phi = w, *G = Phi + c, *g = G + c * n, *sv = g + 2 * n, *V = sv + c, qq = 0, vv = 0;

  if (P->Phi(x, Phi, G, NULL, P->ctx) || P->E.grad(x, g, P->ctx))
    return snprintf(why, len, "the constraints or the energy are not finite at %s", end), HS_EDOM;
  qq = Norm2(n, x), vv = Norm2(n, g + n);
  for (int i = 0; i < c; i++) { /* with G_i / |G_i| (the norms scaled: a constraint times 1e160 had overflowed) */
    double gn = Norm2(n, G + i * n), gv = 0;
    for (int l = 0; l < n && gn > 0; l++)
      gv += G[i * n + l] / gn * g[n + l];
    if (!(fabs(Phi[i]) <= tol * gn * (1 + qq))) /* a distance: |Phi_i| / |G_i|, against tol (1 + |q|) */
      return snprintf(why, len, "%s: constraint %d is %.3g, not 0: the end positions must satisfy the constraints", end,
                      i + 1, Phi[i]), HS_ERANGE;
    if (vel && !(fabs(gv) <= tol * (1 / gn + vv)))
      return snprintf(why, len, "%s: the velocity M^-1 p violates constraint %d (its component along the constraint's "
                      "normal G_i / |G_i| is %.3g, not 0): the end velocities must be tangent to the constraints", end,
                      i + 1, gv), HS_ERANGE;
  }
  { /* rank of G: the singular values of G^T (n x nc, n > nc) */
    double         *Gt = malloc(sizeof(double) * (size_t)(n * c));
    gsl_matrix_view A, Vm;
    gsl_vector_view S, W;
    int             st;
    if (!Gt)
      return HS_ENOMEM;
    for (int i = 0; i < c; i++)
      for (int l = 0; l < n; l++)
        Gt[l * c + i] = G[i * n + l];
    A  = gsl_matrix_view_array(Gt, (size_t)n, (size_t)c);
    Vm = gsl_matrix_view_array(V, (size_t)c, (size_t)c);
    S  = gsl_vector_view_array(sv, (size_t)c);
    W  = gsl_vector_view_array(g, (size_t)c); /* c < n: fits in g */
    st = gsl_linalg_SV_decomp(&A.matrix, &Vm.matrix, &S.vector, &W.vector);
    free(Gt);
    if (st || !(sv[c - 1] > 1e-10 * sv[0]))
      return snprintf(why, len, "%s: the constraint gradients are dependent (singular values %.3g .. %.3g): remove a "
                      "redundant constraint", end, sv[0], sv[c - 1]), HS_ERANGE;
  }
  return HS_SUCCESS;
}

/*@ HsProblemCheckConstraints - the end data of a constrained problem: Phi(q) = 0 and G M^{-1} p = 0 at x0 and xT to
    tol (relative to |q|^2 and |G_i| |M^{-1} p|), full row rank of G at both ends; at the end only where fixed (free
    coordinates: none of it, free momenta: no velocity).

  Not collective. Input: prob (prob->nc > 0), tol (HS_CONSTRAINT_TOL by default); why, len - room for a message.
  Returns HS_SUCCESS; HS_ERANGE (why names the end, the constraint and what fails); HS_EDOM; HS_ENOMEM.
@*/
int HsProblemCheckConstraints(const HsProblem *prob, double tol, char *why, size_t len)
{
  int     n = prob->n, c = prob->nc, st;
  double *w;

  if (c <= 0)
    return HS_SUCCESS;
  int qfree = 0;
  for (int i = 0; i < n; i++)
    qfree |= !prob->xT_fixed[i];
  if (!(w = malloc(sizeof(double) * (size_t)(c * (1 + n) + n * (2 + c) + c + c * c))))
    return HS_ENOMEM;
  st = CheckEnd(prob, prob->x0, "x0", 1, tol, w, why, len);
  if (!st && !qfree) /* free coordinates: no terminal positions to check; free momenta: no velocity */
    st = CheckEnd(prob, prob->xT, "xT", prob->xT_fixed[n], tol, w, why, len);
  free(w);
  return st;
}

/* y = (A A^T)^{-1} r for A (c x n, row-major) weighted by W (n x n, NULL: identity), i.e. y solves (A W A^T) y = r;
 * w: room for c^2 + n c doubles. Returns 0 or HS_ESINGULAR. */
static int SolveGram(int c, int n, const double *A, const double *W, const double *r, double *y, double *w)
{
  double              *S = w, *AW = w + c * c;
  gsl_matrix_view      Sv = gsl_matrix_view_array(S, (size_t)c, (size_t)c);
  gsl_vector_view      yv = gsl_vector_view_array(y, (size_t)c);
  gsl_error_handler_t *old;
  int                  st;

  for (int i = 0; i < c; i++)
    for (int l = 0; l < n; l++) {
      double v = 0;
      for (int k = 0; k < n; k++)
        v += A[i * n + k] * (W ? W[k * n + l] : (k == l));
      AW[i * n + l] = v;
    }
  for (int i = 0; i < c; i++)
    for (int j = 0; j < c; j++) {
      double v = 0;
      for (int l = 0; l < n; l++)
        v += AW[i * n + l] * A[j * n + l];
      S[i * c + j] = v;
    }
  memcpy(y, r, sizeof(double) * (size_t)c);
  old = gsl_set_error_handler_off();
  st  = gsl_linalg_cholesky_decomp1(&Sv.matrix) || gsl_linalg_cholesky_svx(&Sv.matrix, &yv.vector);
  gsl_set_error_handler(old);
  return st ? HS_ESINGULAR : HS_SUCCESS;
}

/*@ HsProblemProjectConstraints - moves the state x (q then p) of a constrained problem onto its constraints: q by the
    least-norm Gauss-Newton iteration q <- q - G^T (G G^T)^{-1} Phi(q) until |Phi| <= 1e-14 (1 + |q|^2), then p onto
    the velocities the constraints allow, p <- p - G^T (G M^{-1} G^T)^{-1} G M^{-1} p. For continuation in reach of a
    constrained problem (HsProblemBlendTerminal): the straight blend of two consistent end states is not consistent.
    Not collective. Returns HS_SUCCESS, HS_ENOCONV (no convergence in 50 steps), HS_ESINGULAR, HS_EDOM, HS_ENOMEM.
@*/
int HsProblemProjectConstraints(const HsProblem *prob, double *x)
{
  int     n = prob->n, c = prob->nc, d = 2 * n, st = HS_ENOCONV;
  double *w = malloc(sizeof(double) * (size_t)(c + c * n + c + c * c + n * c + d * d + n * n + d));
  double *Phi = w, *G = Phi + c, *y = G + c * n, *ws = y + c, *H = ws + c * c + n * c, *Mi = H + d * d, *g = Mi + n * n;

  if (!w)
    return HS_ENOMEM;
  for (int it = 0; it < 50 && st == HS_ENOCONV; it++) {
    double qq = 0, worst = 0;
    if (prob->Phi(x, Phi, G, NULL, prob->ctx)) {
      st = HS_EDOM;
      break;
    }
    for (int l = 0; l < n; l++)
      qq += x[l] * x[l];
    for (int i = 0; i < c; i++)
      worst = fmax(worst, fabs(Phi[i]));
    if (worst <= 1e-14 * (1 + qq)) {
      st = HS_SUCCESS;
      break;
    }
    if ((st = SolveGram(c, n, G, NULL, Phi, y, ws)) == HS_SUCCESS) {
      for (int l = 0; l < n; l++)
        for (int i = 0; i < c; i++)
          x[l] -= G[i * n + l] * y[i];
      st = HS_ENOCONV;
    }
  }
  if (!st && (prob->E.hess(x, H, prob->ctx) || prob->Phi(x, Phi, G, NULL, prob->ctx)))
    st = HS_EDOM;
  if (!st) {
    for (int i = 0; i < n; i++) /* M^{-1}: the momentum block of E's Hessian (constant M) */
      for (int l = 0; l < n; l++)
        Mi[i * n + l] = H[(n + i) * d + n + l];
    for (int i = 0; i < c; i++) { /* G M^{-1} p */
      double v = 0;
      for (int l = 0; l < n; l++)
        for (int k = 0; k < n; k++)
          v += G[i * n + l] * Mi[l * n + k] * x[n + k];
      g[i] = v;
    }
    if ((st = SolveGram(c, n, G, Mi, g, y, ws)) == HS_SUCCESS)
      for (int l = 0; l < n; l++)
        for (int i = 0; i < c; i++)
          x[n + l] -= G[i * n + l] * y[i];
  }
  free(w);
  return st;
}
