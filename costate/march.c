/* hamshoot: HsMarch, the serial one-step march of multiple shooting
 * (docs/theory.md section 3, "Multiple shooting"); a small dense LU (hsdense.h) for the step systems.
 *
 * A segment starting at node ks owns z = (x_{ks}, lambda_{ks+1/2}) in R^{2 dim},
 * dim = 2n. Its march solves
 *   step ks:       F_{ks}(x_{ks}, x_{ks+1}, lambda_{ks+1/2}) = 0                 for x_{ks+1}
 *   step k > ks:   [C_k(x_{k-1}, x_k, x_{k+1}, lambda_{k-1/2}, lambda_{k+1/2});
 *                   F_k(x_k, x_{k+1}, lambda_{k+1/2})] = 0                          for (x_{k+1}, lambda_{k+1/2})
 * (F: state residual of interval k, C: costate residual of node k, both times h;
 * costate/hscostate.h) with a dense Newton (LU with partial pivoting, HsLUFactor: hsdense.h) started from the linear
 * extrapolation of the previous step, or from a previous march (warm start), shifted by as much as the march
 * moved the step before from that march's values (the change of z moves the trajectory smoothly). During a march
 * the discretization keeps its last two discrete gradients (HsDiscSetMemo: the state residual and the costate
 * residuals of both nodes of an interval evaluate the same one).
 * A Newton update that leaves the problem's domain (or overflows) is halved,
 * down to 1e-3 of the full step.
 *
 * Sensitivities. Write S(y) = dy/dz (dim x 2 dim). With the step Jacobian
 * A = d(C, F)/d(x_{k+1}, lambda_{k+1/2}) factored at the converged step, the
 * implicit function theorem gives
 *   first step:  S(x_{ks+1}) = -F_{x1}^{-1} (F_{xk} S(x_{ks}) + F_lam S(lambda_{ks+1/2})),
 *                S(x_{ks}) = [I 0], S(lambda_{ks+1/2}) = [0 I];
 *   later steps: [S(x_{k+1}); S(lambda_{k+1/2})] = -A^{-1} [C_{xm} S(x_{k-1}) + C_{x0} S(x_k) + C_{lm} S(lambda_{k-1/2});
 *                                                           F_{xk} S(x_k)].
 * With a free final time (HsMarchSetFreeTime) S has one more column, d/dh: every
 * step residual is (difference) - h (scheme terms), so its explicit h-derivative
 * (R - difference)/h joins the right-hand side of that column.
 * HsMarchSetHamiltonianSum: the march also sums H^d (+ Q_k with T in the data,
 * HsDiscFreeTimeTerm) over its intervals and (with sensitivities) the gradient of the sum, sum_k dH^d_k/dx_k S(x_k) +
 * dH^d_k/dx_{k+1} S(x_{k+1}) + dH^d_k/dlambda S(lambda_{k+1/2}) (the free-final-time condition). The largest entry of
 * these over the march is its growth: the factor by which the end data amplify a perturbation of z (for an unstable
 * problem e^{rate * length}; multiple shooting needs it below 1/sqrt(eps)).
 *
 * Stopping rule of the local Newton: |R|_inf <= atol (1 + |y|_inf), or (after
 * the first update) the last update below stol (1 + |y|_inf): Newton converges
 * quadratically, so the iterate is then at round-off. A residual whose evaluation is noisier than atol
 * (a Gonzalez divided difference just above its threshold -hs_dg_tol loses ~eps |E| / |Delta| to
 * cancellation, 1e-10 at |Delta| = 1e-6) stops decreasing instead: HS_MARCH_FLAT_IT iterations
 * without halving it, at a level below HS_MARCH_FLOOR (1 + |y|_inf), also end the step, since
 * further updates only move the iterate within that noise.
 *
 * Chord updates. A march without sensitivities (the outer residual, its line search and noise estimate) solves
 * each later step first with the LU kept from the segment's previous step (factored at a point O(h) and one
 * Newton update away), and after a Newton update goes on with that update's LU: an update is kept while it cuts
 * |R|_inf by HS_MARCH_CHORD_RATE; the first one that does not (or leaves the domain) is undone and the step takes
 * a Newton update from there (the Jacobian factored at the iterate). A warm start that meets the tolerance ends the
 * step at once, as does a Newton update that meets it. Once chord updates meet it (atol, or the noise floor test),
 * one more chord update is taken whatever it does to |R| (undone only outside the domain), and ends the step: chord updates approach the
 * solution from one side (their error shrinks by a nearly constant factor in a nearly constant direction) and
 * would stop at the edge of the residual's noise, in the direction of the warm start, i.e. of the outer Newton's
 * last update; that lag biased the outer solution (kepler, N = 10^4: J 3e-12 and the trajectory 1e-11 from
 * transcription's, ten times Newton's), the last update moves the iterate into the noise, as Newton's last
 * quadratic update does. The size of a chord update says less about the error left than a Newton update's, so
 * the stol test is used only after Newton updates. The step's solution is the same to its tolerance; it saves the
 * step Jacobian (the conserving scheme's third derivatives) and its LU for most steps (bench/README.md, "The
 * march's per-step work"). Only the segment's own LUs are used, so a segment's march depends on its data alone (not on
 * which segment the rank marched before: the same answers on any number of ranks).
 */
#include "hsmarch.h"

#include <gsl/gsl_errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "hsdense.h"
#include "hsdiscimpl.h"

#define HS_MARCH_FLAT_IT 3   /* updates without halving |R| that end a step at its noise floor */
#define HS_MARCH_FLOOR   1e-8 /* ... if |R| <= HS_MARCH_FLOOR (1 + |y|_inf), about sqrt(eps) */
#define HS_MARCH_CHORD_RATE 0.1 /* a chord update must cut |R|_inf by this factor, else Newton takes over */

struct HsMarch_s {
  HsDisc          *disc;
  int              dim;
  double           atol, stol;
  int              max_it;
  double          *A, *A1;     /* LU of the step Jacobians (HsLUFactor): 2 dim (later steps), dim (first step) */
  int             *piv, *piv1; /* their row swaps */
  double          *sol;        /* the Newton update, 2 dim */
  double          *shift, *yold; /* a warm march: how much the last step moved the unknowns from the previous march's */
  double          *blk;        /* 8 blocks dim x dim: Cxm Cx0 Cxp Clm Clp Fxk Fx1 Flam (first step: Fxk Fx1 Flam) */
  double          *R, *Rt, *ysave;
  double          *S;          /* Sxm, Sx0, Slm (dim x ws each), Sy (2 dim x ws); ws = w + free_h */
  int              lu_kept;    /* m->A holds the nonsingular LU of an earlier step of this segment (chord updates) */
  int              chord_on;   /* HsMarchSetChord: chord updates in marches without sensitivities (default 1) */
  int              free_h;     /* HsMarchSetFreeTime: a column d/dh in S */
  int              hacc;       /* HsMarchSetHamiltonianSum */
  double           hsum, *hgrad, *gH; /* the sum of H^d, its gradient (ws), scratch 3 dim */
  char             failure[256];
};

/* Records why step k failed and returns status. */
static int Fail(HsMarch *m, int status, int k, const char *fmt, ...)
{
  va_list ap;
  int     len = snprintf(m->failure, sizeof m->failure, "step %d: ", k);
  va_start(ap, fmt);
  vsnprintf(m->failure + len, sizeof m->failure - (size_t)len, fmt, ap);
  va_end(ap);
  return status;
}

/*@ HsMarchCreate - creates the march workspace for a discretization.

  Not collective (serial). All workspace is allocated here; a march allocates nothing.

  Input: disc - the discretization (costate/hscostate.h); must outlive the march.
  Output: march - the new object, with the default tolerances HS_MARCH_ATOL_DEFAULT,
  HS_MARCH_STOL_DEFAULT and HS_MARCH_MAX_IT_DEFAULT.

  Returns HS_SUCCESS, HS_EINVAL (no disc) or HS_ENOMEM.
@*/
int HsMarchCreate(HsDisc *disc, HsMarch **march)
{
  HsMarch *m;
  int      dim, w;

  *march = NULL;
  if (!disc)
    return HS_EINVAL;
  gsl_set_error_handler_off(); /* GSL's default handler aborts (the problem callbacks may call GSL) */
  m = calloc(1, sizeof(*m));
  if (!m)
    return HS_ENOMEM;
  m->disc = disc;
  m->dim = dim = HsDiscGetDim(disc);
  w            = 2 * dim;
  m->atol      = HS_MARCH_ATOL_DEFAULT;
  m->chord_on = 1;
  m->stol      = HS_MARCH_STOL_DEFAULT;
  m->max_it    = HS_MARCH_MAX_IT_DEFAULT;
  m->piv       = malloc(sizeof(int) * (size_t)(w + dim));
  m->blk       = malloc(sizeof(double) * (8 * (size_t)dim * dim + 3 * (size_t)w + 5 * (size_t)dim * (w + 1) +
                                          (size_t)(w + 1) + 3 * (size_t)dim + (size_t)w * w + (size_t)dim * dim +
                                          3 * (size_t)w));
  if (!m->piv || !m->blk) {
    HsMarchDestroy(&m);
    return HS_ENOMEM;
  }
  m->R     = m->blk + 8 * dim * dim;
  m->Rt    = m->R + w;
  m->ysave = m->Rt + w;
  m->S     = m->ysave + w;
  m->hgrad = m->S + 5 * dim * (w + 1);
  m->gH    = m->hgrad + w + 1;
  m->A     = m->gH + 3 * dim;
  m->A1    = m->A + w * w;
  m->sol   = m->A1 + dim * dim;
  m->shift = m->sol + w;
  m->yold  = m->shift + w;
  m->piv1  = m->piv + w;
  *march   = m;
  return HS_SUCCESS;
}

/*@ HsMarchDestroy - frees a march and sets *march = NULL; NULL-safe. Not collective. @*/
void HsMarchDestroy(HsMarch **march)
{
  HsMarch *m;

  if (!march || !*march)
    return;
  m = *march;
  free(m->piv);
  free(m->blk);
  free(m);
  *march = NULL;
}

/*@ HsMarchSetTolerances - tolerances of the local (per-step) Newton.

  Not collective.

  Input: atol - residual tolerance: stop at |R|_inf <= atol (1 + |y|_inf), 0 < atol < 1
         (default HS_MARCH_ATOL_DEFAULT = 1e-14; the residuals are scaled by h, docs/theory.md section 2);
         stol - also stop when the last update is below stol (1 + |y|_inf), 0 < stol < 1 (default 1e-12);
         max_it - at most this many Newton updates per step, >= 1 (default 25).

  Returns HS_SUCCESS or HS_ERANGE (nothing changed).
@*/
int HsMarchSetTolerances(HsMarch *march, double atol, double stol, int max_it)
{
  if (!(atol > 0 && atol < 1) || !(stol > 0 && stol < 1) || max_it < 1)
    return HS_ERANGE;
  march->atol = atol, march->stol = stol, march->max_it = max_it;
  return HS_SUCCESS;
}

/*@ HsMarchGetTolerances - the local Newton's tolerances (any output may be NULL). Not collective. @*/
void HsMarchGetTolerances(const HsMarch *march, double *atol, double *stol, int *max_it)
{
  if (atol)
    *atol = march->atol;
  if (stol)
    *stol = march->stol;
  if (max_it)
    *max_it = march->max_it;
}

/*@ HsMarchGetFailure - why the last failed step failed ("step 37: local Newton did not converge ..."),
    or the text of an earlier failure if the last call succeeded. Not collective. @*/
const char *HsMarchGetFailure(const HsMarch *march) { return march->failure; }

/* Residual of one step (first: the state equation only). */
static int StepResidual(HsMarch *m, int k, int first, const double *xm, const double *xk, const double *lm,
                        const double *xp, const double *lp, double *R)
{
  int st;
  if (first)
    return HsDiscStateResidual(m->disc, xk, xp, lp, R);
  st = HsDiscCostateResidual(m->disc, k, xm, xk, xp, lm, lp, R);
  return st ? st : HsDiscStateResidual(m->disc, xk, xp, lp, R + m->dim);
}

/* The step Jacobian in the unknowns, A = d(C, F)/d(x_{k+1}, lambda_{k+1/2}) (first: dF/dx_{k+1}),
 * its blocks in m->blk and its LU in m->A (m->A1). */
static int StepJacobian(HsMarch *m, int k, int first, const double *xm, const double *xk, const double *lm,
                        const double *xp, const double *lp)
{
  int     dim = m->dim, dd = dim * dim, w = 2 * dim, st;
  double *B = m->blk, *A = first ? m->A1 : m->A;

  if (first)
    st = HsDiscStateJacobian(m->disc, xk, xp, lp, B, B + dd, B + 2 * dd);
  else {
    st = HsDiscCostateJacobian(m->disc, k, xm, xk, xp, lm, lp, B, B + dd, B + 2 * dd, B + 3 * dd, B + 4 * dd);
    if (!st)
      st = HsDiscStateJacobian(m->disc, xk, xp, lp, B + 5 * dd, B + 6 * dd, B + 7 * dd);
  }
  if (st)
    return st > 0 ? HS_EDOM : HS_EFAILED;
  if (first)
    HsCopy(dd, B + dd, A); /* dF/dx_{k+1} */
  else
    for (int i = 0; i < dim; i++) {
      HsCopy(dim, B + 2 * dd + i * dim, A + i * w);               /* dC/dx_{k+1} */
      HsCopy(dim, B + 4 * dd + i * dim, A + i * w + dim);         /* dC/dlambda_{k+1/2} */
      HsCopy(dim, B + 6 * dd + i * dim, A + (dim + i) * w);       /* dF/dx_{k+1} */
      HsCopy(dim, B + 7 * dd + i * dim, A + (dim + i) * w + dim); /* dF/dlambda */
    }
  if (HsLUFactor(first ? dim : w, A, first ? m->piv1 : m->piv)) {
    m->lu_kept = first && m->lu_kept;
    return HS_ESINGULAR;
  }
  m->lu_kept = m->lu_kept || !first;
  return HS_SUCCESS;
}

/* The Newton update: y <- y - alpha A^{-1} R, alpha halved from 1 while the
 * trial residual (into m->R) is outside the domain or not finite, down to
 * 1e-3. *dynorm is the size of the update taken, *rst the status of the
 * residual at the new y (checked by the caller). rcap > 0: a chord update (A an
 * earlier step's LU), taken only if its full step is in the domain with |R| <= rcap;
 * otherwise y is restored, *rejected set, and the caller factors A at y. Returns
 * HS_ESINGULAR (failure recorded) or HS_SUCCESS. */
static int StepUpdate(HsMarch *m, int k, int first, const double *xm, const double *xk, const double *lm, double *xp,
                      double *lp, double rcap, double *dynorm, int *rst, int *rejected)
{
  int dim = m->dim, nu = first ? dim : 2 * dim, st = 0;

  HsCopy(nu, m->R, m->sol);
  if (HsLUSolve(nu, first ? m->A1 : m->A, first ? m->piv1 : m->piv, 1, m->sol))
    return Fail(m, HS_ESINGULAR, k, "the step Jacobian is singular");
  for (int i = 0; i < dim; i++)
    m->ysave[i] = xp[i], m->ysave[dim + i] = first ? 0 : lp[i];
  for (double alpha = 1;; alpha *= 0.5) {
    *dynorm = 0;
    for (int i = 0; i < nu; i++) {
      double di = alpha * m->sol[i];
      *dynorm   = fmax(*dynorm, fabs(di));
      if (i < dim)
        xp[i] = m->ysave[i] - di;
      else
        lp[i - dim] = m->ysave[i] - di;
    }
    st = StepResidual(m, k, first, xm, xk, lm, xp, lp, m->Rt);
    if (rcap > 0 && (st || !(HsNormInf(nu, m->Rt) <= rcap))) { /* the chord does not contract: undone */
      for (int i = 0; i < dim; i++) {
        xp[i] = m->ysave[i];
        if (!first) /* (a first step's lambda is given, not an unknown) */
          lp[i] = m->ysave[dim + i];
      }
      *rejected = 1;
      return HS_SUCCESS;
    }
    if ((!st && HsNormInf(nu, m->Rt) < HUGE_VAL) || alpha < 1e-3)
      break;
  }
  HsCopy(nu, m->Rt, m->R);
  *rst = st;
  return HS_SUCCESS;
}

static int Step(HsMarch *m, int k, int first, const double *xm, const double *xk, const double *lm, double *xp,
                double *lp, int lu_at_end);

/*@ HsMarchStep - solves one step of the march by a dense Newton.

  Not collective (serial).

  Input: k - the node (0 <= k < N): first - nonzero for a segment's first step, which solves the
         state equation of interval k for x_{k+1} (xm, lm unused, may be NULL; lp = lambda_{k+1/2} is
         given); otherwise the node-k costate and interval-k state equations are solved together for
         (x_{k+1}, lambda_{k+1/2}); xm, xk, lm - x_{k-1}, x_k, lambda_{k-1/2}.
  Input/output: xp (and lp unless first) - the initial guess on entry, the solution on exit.

  On success the LU factors of the step Jacobian at the solution are kept for the sensitivities
  (HsMarchSegment). Returns HS_SUCCESS, HS_EDOM (outside the domain, or the residual is not finite),
  HS_ENOCONV, HS_ESINGULAR or HS_EFAILED (a problem callback failed fatally); HsMarchGetFailure() says why.
@*/
int HsMarchStep(HsMarch *march, int k, int first, const double *xm, const double *xk, const double *lm, double *xp,
                double *lp)
{
  return Step(march, k, first, xm, xk, lm, xp, lp, 1);
}

/* HsMarchStep's Newton; lu_at_end = 0 (a march without sensitivities) skips the step Jacobian and its
 * LU at the solution, which only the sensitivities use, and starts with chord updates by the LU kept from
 * the segment's previous step while they contract (file head). */
static int Step(HsMarch *m, int k, int first, const double *xm, const double *xk, const double *lm, double *xp,
                double *lp, int lu_at_end)
{
  int    nu = first ? m->dim : 2 * m->dim, st, it, flat = 0, done, rejected = 0;
  int    chord  = !first && !lu_at_end && m->lu_kept && m->chord_on;
  int    newton = 0; /* the last update was Newton's */
  double rnorm = 0, rprev = HUGE_VAL, ynorm, dynorm = 1;

  st = StepResidual(m, k, first, xm, xk, lm, xp, lp, m->R);
  for (it = 0;; it++) {
    if (st)
      return st > 0 ? Fail(m, HS_EDOM, k, "the state left the problem's domain")
                    : Fail(m, HS_EFAILED, k, "a problem callback failed");
    rnorm = HsNormInf(nu, m->R);
    if (!(rnorm < HUGE_VAL))
      return Fail(m, HS_EDOM, k, "the step residual is not finite (the march overflowed; use more segments)");
    ynorm = fmax(HsNormInf(m->dim, xp), first ? 0 : HsNormInf(m->dim, lp));
    flat  = rnorm > 0.5 * rprev ? flat + 1 : 0, rprev = rnorm;
    done  = rnorm <= m->atol * (1 + ynorm) || (newton && dynorm <= m->stol * (1 + ynorm)) ||
           (flat >= HS_MARCH_FLAT_IT && rnorm <= HS_MARCH_FLOOR * (1 + ynorm)); /* the last: the noise floor (file head) */
    if (chord && it < m->max_it && !(done && (it == 0 || newton))) { /* (a warm start or a Newton update that meets
                                                                        the tolerance stays: file head) */
      if (StepUpdate(m, k, first, xm, xk, lm, xp, lp, done ? HUGE_VAL : HS_MARCH_CHORD_RATE * rnorm, &dynorm, &st,
                     &rejected))
        return HS_ESINGULAR;
      if (done) /* the last update, taken once the tolerance is met (undone only if outside the domain: file head) */
        return HS_SUCCESS;
      if (!rejected) {
        newton = 0;
        continue;
      }
      chord = 0; /* Newton from here on, from the same y (done already if it met the tolerances) */
    }
    if (done && !lu_at_end)
      return HS_SUCCESS;
    st = StepJacobian(m, k, first, xm, xk, lm, xp, lp);
    if (st == HS_EDOM || st == HS_EFAILED)
      return Fail(m, st, k, "a problem callback failed in the step Jacobian");
    if (done)
      return HS_SUCCESS;
    if (it == m->max_it)
      break;
    if (st == HS_ESINGULAR)
      return Fail(m, HS_ESINGULAR, k, "the step Jacobian is singular");
    if (StepUpdate(m, k, first, xm, xk, lm, xp, lp, 0, &dynorm, &st, &rejected))
      return HS_ESINGULAR;
    newton = 1, chord = !lu_at_end && m->chord_on; /* this LU for the next updates while they contract */
  }
  return Fail(m, HS_ENOCONV, k, "local Newton did not converge in %d iterations (|R| = %.2e)", m->max_it, rnorm);
}

/* Solves the factored step system for the w columns of RHS (nu x w, row-major)
 * and negates: RHS <- -A^{-1} RHS. */
static int SolveColumns(HsMarch *m, int first, int nu, int w, double *RHS)
{
  if (HsLUSolve(nu, first ? m->A1 : m->A, first ? m->piv1 : m->piv, w, RHS))
    return HS_ESINGULAR;
  for (int i = 0; i < nu * w; i++)
    RHS[i] = -RHS[i];
  return HS_SUCCESS;
}

/* One step of the sensitivity recursion (file head), with the blocks and the
 * LU of the converged step at (x_k, x_{k+1}, lambda_{k-1/2}, lambda_{k+1/2});
 * *growth takes the largest entry seen. */
static int PropagateSensitivities(HsMarch *m, int k, int first, const double *xk, const double *xp, const double *lm,
                                  const double *lp, double *growth)
{
  int     dim = m->dim, w = 2 * dim + m->free_h, dd = dim * dim;
  double *B = m->blk, *Sxm = m->S, *Sx0 = Sxm + dim * w, *Slm = Sx0 + dim * w, *Sy = Slm + dim * w;

  HsZero((first ? 1 : 2) * dim * w, Sy);
  if (first) { /* blocks Fxk Fx1 Flam */
    HsMatMatAdd(dim, dim, w, B, Sx0, Sy);
    HsMatMatAdd(dim, dim, w, B + 2 * dd, Slm, Sy);
  } else { /* blocks Cxm Cx0 Cxp Clm Clp Fxk Fx1 Flam */
    HsMatMatAdd(dim, dim, w, B, Sxm, Sy);
    HsMatMatAdd(dim, dim, w, B + dd, Sx0, Sy);
    HsMatMatAdd(dim, dim, w, B + 3 * dd, Slm, Sy);
    HsMatMatAdd(dim, dim, w, B + 5 * dd, Sx0, Sy + dim * w);
  }
  if (m->free_h) { /* the explicit h-derivative of the step residual (file head) */
    double h = HsDiscGetStep(m->disc);
    for (int i = 0; i < dim; i++) {
      if (first)
        Sy[i * w + w - 1] += (m->R[i] - (xp[i] - xk[i])) / h;
      else {
        Sy[i * w + w - 1] += (m->R[i] - (lp[i] - lm[i])) / h;
        Sy[(dim + i) * w + w - 1] += (m->R[dim + i] - (xp[i] - xk[i])) / h;
      }
    }
  }
  if (SolveColumns(m, first, (first ? 1 : 2) * dim, w, Sy))
    return Fail(m, HS_ESINGULAR, k, "the step Jacobian is singular (sensitivities)");
  HsCopy(dim * w, Sx0, Sxm);
  HsCopy(dim * w, Sy, Sx0); /* S(x_{k+1}) */
  if (!first)
    HsCopy(dim * w, Sy + dim * w, Slm); /* S(lambda_{k+1/2}) */
  for (int i = 0; i < dim; i++) /* the z columns only: d/dh grows with the segment's length */
    *growth = fmax(*growth, fmax(HsNormInf(2 * dim, Sx0 + i * w), HsNormInf(2 * dim, Slm + i * w)));
  return HS_SUCCESS;
}

/*@ HsMarchSetFreeTime - with on, the sensitivities of HsMarchSegment get a last column, the
    derivative with respect to the step h (a free final time): blocks dim x (2 dim + 1). Not collective. @*/
void HsMarchSetFreeTime(HsMarch *march, int on) { march->free_h = on ? 1 : 0; }

/*@ HsMarchSetChord - with on (the default), a march without sensitivities takes chord updates (file head): each
    step starts with the LU of the segment's previous step, and goes on with a Newton update's LU while the updates
    contract; off, every update is Newton's (the march before chord updates). Off (bvp/impls/shooting.c) for controls
    that are not smooth functions of the costates (bounded controls, a nonlinear control law): where the control
    saturates between two steps the previous step's LU describes another branch of the step equations, and its chord
    iterates had ended on another solution of a step than Newton's (swingup_bounded: 1 and 2 ranks at different
    extremals, J 13.839 and 13.813; tests bounds_smoothed_only, controls_done); and for a march looser than its
    defaults, whose few updates and loose -hs_step_stol are meant for Newton's (chord updates count against
    -hs_step_max_it and are not ended by stol: -hs_step_stol 0.9 -hs_step_max_it 2 had failed, test security).
    Not collective. @*/
void HsMarchSetChord(HsMarch *march, int on) { march->chord_on = on ? 1 : 0; }

/*@ HsMarchSetHamiltonianSum - with on, HsMarchSegment also sums H^d over the segment's intervals and,
    when it computes sensitivities, the gradient of that sum with respect to z (and h):
    HsMarchGetHamiltonianSum. Not collective. @*/
void HsMarchSetHamiltonianSum(HsMarch *march, int on) { march->hacc = on ? 1 : 0; }

/*@ HsMarchGetHamiltonianSum - the sum of H^d over the intervals of the last march and (grad not
    NULL; after a march with sensitivities) its gradient, 2 dim (+ 1 with a free time) values. @*/
void HsMarchGetHamiltonianSum(const HsMarch *march, double *sum, const double **grad)
{
  *sum = march->hsum;
  if (grad)
    *grad = march->hgrad;
}

/* The Hamiltonian of interval k into the sum and (with sensitivities: S of x_k, x_{k+1} and
 * lambda_{k+1/2} in Sxm, Sx0, Slm after the step's propagation) its gradient; with T in the problem's
 * data also the interval's term Q_k of the free-final-time condition (HsDiscFreeTimeTerm). */
static int AccumulateHamiltonian(HsMarch *m, int k, const double *xk, const double *xp, const double *lp, int sens)
{
  int    dim = m->dim, w = 2 * dim + m->free_h, st, nq = HsDiscGetProblem(m->disc)->data_T ? 2 : 1;
  double H, Q = 0, *ga = m->gH, *gb = ga + dim, *gl = gb + dim, *Sxm = m->S, *Sx0 = Sxm + dim * w, *Slm = Sx0 + dim * w;

  if ((st = HsDiscHamiltonian(m->disc, k, xk, xp, lp, &H)) || (st = HsDiscFreeTimeTerm(m->disc, k, xk, xp, lp, &Q)))
    return Fail(m, st > 0 ? HS_EDOM : HS_EFAILED, k, "the Hamiltonian cannot be evaluated");
  m->hsum += H + Q;
  for (int q = 0; q < nq && sens; q++) {
    st = q ? HsDiscFreeTimeTermGradient(m->disc, k, xk, xp, lp, ga, gb, gl)
           : HsDiscHamiltonianGradient(m->disc, k, xk, xp, lp, ga, gb, gl);
    if (st)
      return Fail(m, st > 0 ? HS_EDOM : HS_EFAILED, k, "the Hamiltonian's gradient cannot be evaluated");
    for (int i = 0; i < dim; i++)
      for (int c = 0; c < w; c++)
        m->hgrad[c] += ga[i] * Sxm[i * w + c] + gb[i] * Sx0[i * w + c] + gl[i] * Slm[i * w + c];
  }
  return HS_SUCCESS;
}

static int MarchSegment(HsMarch *m, int ks, int len, const double *z, int warm, double *traj, double *sens,
                        double *growth);

/*@ HsMarchSegment - marches one shooting segment (docs/theory.md section 3).

  Not collective (serial).

  Input: ks - the segment's first node; len >= 1 - its number of intervals (nodes ks..ks+len);
         z - (x_{ks}, lambda_{ks+1/2}), 2 dim values (dim = 2n);
         warm - nonzero: traj holds a previous march of this segment, whose rows are the initial
         guesses of the steps; zero: each step starts from the linear extrapolation of the last two.
  Output: traj - (len+1) rows of 2 dim values, row j = (x_{ks+j}, lambda_{ks+j+1/2}) (row 0 is z;
          the lambda part of row len is not touched: it belongs to the next segment);
          sens - NULL, or 4 blocks dim x 2 dim (row-major): S(x_{ks+1}), S(x_{b-1}),
          S(lambda_{b-1/2}), S(x_b) with b = ks + len and S(y) = dy/dz (dim x (2 dim + 1) with
          HsMarchSetFreeTime: the last column is dy/dh);
          growth - NULL, or (with sens) the largest |entry| of S(x_k), S(lambda_{k+1/2}) over the
          march, at least 1.

  Returns HS_SUCCESS or the failing step's status (HsMarchStep); HsMarchGetFailure() says which step.
@*/
int HsMarchSegment(HsMarch *march, int ks, int len, const double *z, int warm, double *traj, double *sens,
                   double *growth)
{
  int st;

  HsDiscSetMemo(march->disc, 1); /* the problem's data stay fixed during a march */
  st = MarchSegment(march, ks, len, z, warm, traj, sens, growth);
  HsDiscSetMemo(march->disc, 0);
  return st;
}

static int MarchSegment(HsMarch *m, int ks, int len, const double *z, int warm, double *traj, double *sens,
                        double *growth)
{
  int      dim = m->dim, w = 2 * dim, ws = w + m->free_h, st;
  double  *Sxm = m->S, *Sx0 = Sxm + dim * ws, *Slm = Sx0 + dim * ws, g = 1;

  if (len < 1)
    return Fail(m, HS_EINVAL, ks, "a segment needs at least one interval (len = %d)", len);
  for (int i = 0; i < w && warm; i++)
    m->shift[i] = z[i] - traj[i];
  HsCopy(w, z, traj);
  m->lu_kept = 0; /* chord updates only by this segment's own LUs: a march does not depend on the one before */
  m->hsum = 0;
  HsZero(ws, m->hgrad);
  if (sens) { /* S(x_ks) = [I 0 (0)], S(lambda_{ks+1/2}) = [0 I (0)] */
    HsZero(2 * dim * ws, Sx0);
    for (int i = 0; i < dim; i++)
      Sx0[i * ws + i] = 1, Slm[i * ws + dim + i] = 1;
  }
  for (int j = 0; j < len; j++) {
    double *xk = traj + j * w, *lk = xk + dim, *xn = xk + w;
    int     first = j == 0;
    if (!warm) { /* linear extrapolation from the previous step */
      for (int i = 0; i < dim; i++)
        xn[i] = first ? xk[i] : 2 * xk[i] - (xk - w)[i];
      if (!first)
        HsCopy(dim, lk - w, lk);
    } else /* the previous march moved as the step before moved it (a smooth change of the trajectory) */
      for (int i = 0; i < dim; i++) {
        m->yold[i] = xn[i], xn[i] += m->shift[i];
        if (!first)
          m->yold[dim + i] = lk[i], lk[i] += m->shift[dim + i];
      }
    st = first ? Step(m, ks, 1, NULL, xk, NULL, xn, lk, sens != NULL) /* the step's LU only for the sensitivities */
               : Step(m, ks + j, 0, xk - w, xk, lk - w, xn, lk, sens != NULL);
    for (int i = 0; i < dim && warm && !st; i++) {
      m->shift[i] = xn[i] - m->yold[i];
      if (!first)
        m->shift[dim + i] = lk[i] - m->yold[dim + i];
    }
    if (!st && sens)
      st = PropagateSensitivities(m, ks + j, first, xk, xn, first ? NULL : lk - w, lk, &g);
    if (!st && m->hacc)
      st = AccumulateHamiltonian(m, ks + j, xk, xn, lk, sens != NULL);
    if (st)
      return st;
    if (sens && first)
      HsCopy(dim * ws, Sx0, sens); /* S(x_{ks+1}) */
  }
  if (sens) { /* end data: x_{b-1}, lambda_{b-1/2}, x_b */
    HsCopy(dim * ws, Sxm, sens + dim * ws);
    HsCopy(dim * ws, Slm, sens + 2 * dim * ws);
    HsCopy(dim * ws, Sx0, sens + 3 * dim * ws);
    if (growth)
      *growth = g;
  }
  return HS_SUCCESS;
}
