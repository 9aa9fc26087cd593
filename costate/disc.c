/* hamshoot: HsDisc, the discretization object of costate/ (docs/theory.md section 2):
 * scheme selection, state residual and Jacobian, control, diagnostics. */
#include "hscontrol.h"
#include "hsdiscimpl.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int StateResidualAtGain(HsDisc *d, const double *xk, const double *xk1, const double *u, double *F);
static int HamiltonianAtGain(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, const double *u,
                             double *H);
static int BoundedLaw(HsDisc *d, const double *lam, double *u, double *psi);

static const HsStateScheme   *state_schemes[]   = {&HsStateMidpoint, &HsStateGreenspan, &HsStateGonzalez, &HsStateBEM};
static const HsCostateScheme *costate_schemes[] = {&HsCostateConserving, &HsCostateConserving1, &HsCostateTrapezoidal,
                                                   &HsCostateKKT, &HsCostateConstrained, &HsCostateConstrainedKKT};

static int EllAtF(const double *x, double *f, void *ctx)
{
  const HsEllAt *e = ctx;
  return e->prob->ell.f(e->t, x, f, e->prob->ctx);
}
static int EllAtGrad(const double *x, double *g, void *ctx)
{
  const HsEllAt *e = ctx;
  return e->prob->ell.grad(e->t, x, g, e->prob->ctx);
}
static int EllAtHess(const double *x, double *Hm, void *ctx)
{
  const HsEllAt *e = ctx;
  return e->prob->ell.hess(e->t, x, Hm, e->prob->ctx);
}
const HsFunction HsEllAtFunction = {EllAtF, EllAtGrad, EllAtHess, NULL, NULL};

/*@ HsStateSchemeFind - the state scheme (discrete gradient, docs/theory.md section 2.1) of this name:
    midpoint, greenspan or gonzalez; NULL if there is none. Not collective. @*/
const HsStateScheme *HsStateSchemeFind(const char *name)
{
  for (size_t i = 0; i < sizeof(state_schemes) / sizeof(state_schemes[0]); i++)
    if (!strcmp(name, state_schemes[i]->name))
      return state_schemes[i];
  return NULL;
}

/*@ HsCostateSchemeFind - the costate scheme (docs/theory.md section 2.2) of this name: conserving,
    conserving_1dof, trapezoidal or kkt; NULL if there is none. Not collective. @*/
const HsCostateScheme *HsCostateSchemeFind(const char *name)
{
  for (size_t i = 0; i < sizeof(costate_schemes) / sizeof(costate_schemes[0]); i++)
    if (!strcmp(name, costate_schemes[i]->name))
      return costate_schemes[i];
  return NULL;
}

/* "a b c" from the names of a scheme table, built once. */
#define HS_LIST_NAMES(table, buf)                                                                                      \
  do {                                                                                                                 \
    if (!buf[0])                                                                                                       \
      for (size_t i_ = 0; i_ < sizeof(table) / sizeof(table[0]); i_++) {                                               \
        if (i_)                                                                                                        \
          strcat(buf, " ");                                                                                            \
        strcat(buf, table[i_]->name);                                                                                  \
      }                                                                                                                \
  } while (0)

/*@ HsStateSchemeListNames - the state schemes' names, space-separated (from the scheme table). @*/
const char *HsStateSchemeListNames(void)
{
  static char names[128];
  HS_LIST_NAMES(state_schemes, names);
  return names;
}

/*@ HsCostateSchemeListNames - the costate schemes' names, space-separated (from the scheme table). @*/
const char *HsCostateSchemeListNames(void)
{
  static char names[128];
  HS_LIST_NAMES(costate_schemes, names);
  return names;
}

/* Whether the problem and the scheme pair fit; a message if not. */
static int DiscCheck(const HsProblem *prob, const HsStateScheme *ss, const HsCostateScheme *cs, const char *sname,
                     const char *cname, int N, double dg_tol, char *msg, int msg_len)
{
#define CHECK_OR(cond, ...)                                                                                            \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      if (msg)                                                                                                         \
        snprintf(msg, (size_t)msg_len, __VA_ARGS__);                                                                   \
      return HS_EINVAL;                                                                                                \
    }                                                                                                                  \
  } while (0)
  CHECK_OR(prob && prob->E.f && prob->E.grad && prob->E.hess, "problem must supply E, grad E and Hess E");
  CHECK_OR(N >= 2, "N = %d: need at least 2 intervals", N);
  CHECK_OR(prob->T > 0, "horizon T = %g must be positive", prob->T);
  CHECK_OR(dg_tol >= 0 && dg_tol < 1, "dg_tol = %g must lie in [0, 1)", dg_tol);
  CHECK_OR(ss, "unknown state scheme '%s' (choose from: %s)", sname, HsStateSchemeListNames());
  CHECK_OR(cs, "unknown costate scheme '%s' (choose from: %s)", cname, HsCostateSchemeListNames());
  CHECK_OR(ss != &HsStateGreenspan || (prob->sep.available && prob->n == 1),
           "state scheme greenspan needs a 1-DOF problem E = p^2/(2m) + V(q); '%s' is not one (use gonzalez)",
           prob->name);
  CHECK_OR(cs != &HsCostateConserving1 || ss == &HsStateGreenspan,
           "costate scheme conserving_1dof is the 1-DOF form for greenspan states; use conserving with %s", ss->name);
  CHECK_OR((ss == &HsStateBEM) == (prob->nc > 0) &&
               (cs == &HsCostateConstrained || cs == &HsCostateConstrainedKKT) == (prob->nc > 0),
           prob->nc > 0 ? "problem '%s' has constraints: its schemes are bem + constrained or, direct, bem + "
                          "constrained_kkt (docs/constrained.md), not %s + %s"
                        : "problem '%s' has no constraints: bem and constrained are the schemes of constrained systems "
                          "(docs/constrained.md), not of %s + %s",
           prob->name, ss->name, cs->name);
  CHECK_OR(!prob->phi.f || (prob->phi.grad && prob->phi.hess),
           "problem '%s' has a terminal cost without gradient and Hessian", prob->name);
  CHECK_OR(!prob->ell.f || (prob->ell.grad && prob->ell.hess),
           "problem '%s' has a running cost without gradient and Hessian", prob->name);
#undef CHECK_OR
  return HS_SUCCESS;
}

/*@ HsDiscCheckBounded - whether the indirect solvers take prob's bounded controls (docs/controls.md): the law's
    conditions (HsControlLawCheck: R_jj = 0 only with both bounds finite, a non-diagonal R positive definite) and none
of what the bounded discretization does not cover yet (a B(q), data depending on a free T, holonomic constraints).
HS_SUCCESS also for a problem without bounds. Not collective. Returns HS_SUCCESS or HS_EINVAL with a message in msg (may
be NULL).
@*/
int HsDiscCheckBounded(const HsProblem *prob, char *msg, int msg_len)
{
  const char *what = prob->Bq       ? "a configuration-dependent B(q)"
                     : prob->data_T ? "dynamics, costs or B, R depending on a free T"
                     : prob->nc     ? "holonomic constraints"
                                    : NULL;
  int         st;

  if (!HsControlLawActive(prob))
    return HS_SUCCESS;
  /* the law's own conditions first: an R_jj = 0 without bounds is active too, and had been called "bounds its
     controls and has a configuration-dependent B(q)" (the satellite with R: 0; issue 38, round 21) */
  if ((st = HsControlLawCheck(prob, msg, msg_len)))
    return st;
  if (what) {
    if (msg)
      snprintf(msg, (size_t)msg_len,
               "problem '%s' bounds its controls and has %s: the indirect solvers do not support that combination yet "
               "(docs/controls.md); solve it as a direct NLP with -hs_scheme direct -hs_direct_solver ipopt",
               prob->name, what);
    return HS_EINVAL;
  }
  return HS_SUCCESS;
}

/* All workspace of d in one pool: the per-level scratch vectors and matrices (hsdiscimpl.h), the
 * scratch of the third-derivative differences, K (m x dim) and GK (dim x dim). */
static int DiscAllocate(HsDisc *d)
{
  int     dim = d->dim, nvec = HS_WDG_VEC + HS_WCS_VEC + HS_WTOP_VEC, nmat = HS_WDG_MAT + HS_WCS_MAT + HS_WTOP_MAT, i;
  double *p;

  d->pool = calloc((size_t)nvec * dim + (size_t)nmat * dim * dim + dim + 2 * (size_t)dim * dim + (size_t)d->m * dim +
                       (size_t)dim * dim + 2 * (size_t)d->m + dim + 5 * (size_t)dim * dim,
                   sizeof(double));
  if (!d->pool)
    return HS_ENOMEM;
  p = d->pool;
  for (i = 0; i < HS_WDG_VEC; i++, p += dim)
    d->wdg_v[i] = p;
  for (i = 0; i < HS_WCS_VEC; i++, p += dim)
    d->wcs_v[i] = p;
  for (i = 0; i < HS_WTOP_VEC; i++, p += dim)
    d->wtop_v[i] = p;
  for (i = 0; i < HS_WDG_MAT; i++, p += dim * dim)
    d->wdg_m[i] = p;
  for (i = 0; i < HS_WCS_MAT; i++, p += dim * dim)
    d->wcs_m[i] = p;
  for (i = 0; i < HS_WTOP_MAT; i++, p += dim * dim)
    d->wtop_m[i] = p;
  d->wcs_d3 = p, p += dim + 2 * dim * dim;
  d->K      = p, p += d->m * dim;
  d->GK     = p, p += dim * dim;
  d->wu     = p, p += d->m;
  d->wRu    = p, p += d->m;
  d->whom   = p;
  return HS_SUCCESS;
}

/* K = R^{-1} G^T, G^T = [0, B^T] (m x dim), by a Cholesky factorization of R (GSL), and GK = G K
 * (rows n..2n-1 are B K): u = K lambda (docs/theory.md section 1); with a B(q) also R^{-1} itself (d->Rinv,
 * gain.c) from the same factor. Returns the GSL status. */
static int DiscControlGain(HsDisc *d)
{
  const HsProblem *prob = d->prob;
  int              dim  = d->dim, i, j, st;
  gsl_matrix      *Rc   = d->wT_Rc ? d->wT_Rc : gsl_matrix_alloc((size_t)d->m, (size_t)d->m);
  gsl_vector      *col  = d->wT_col ? d->wT_col : gsl_vector_alloc((size_t)d->m);

  if (!Rc || !col) {
    gsl_matrix_free(Rc), gsl_vector_free(col);
    return GSL_ENOMEM;
  }
  if (d->bounded) { /* K = diag(R)^{-1} G^T where R_jj > 0, else 0: unused by the bounded law (HsDiscControl) */
    for (i = 0; i < d->m; i++)
      for (j = 0; j < d->n; j++) {
        double r                 = prob->R[i * d->m + i];
        d->K[i * dim + d->n + j] = r > 0 ? prob->B[j * d->m + i] / r : 0;
      }
    st = 0;
    if (!d->wT_Rc)
      gsl_matrix_free(Rc), gsl_vector_free(col);
    goto gk;
  }
  for (i = 0; i < d->m; i++)
    for (j = 0; j < d->m; j++)
      gsl_matrix_set(Rc, (size_t)i, (size_t)j, prob->R[i * d->m + j]);
  st = gsl_linalg_cholesky_decomp1(Rc);
  for (j = 0; !st && j < d->n; j++) {
    for (i = 0; i < d->m; i++)
      gsl_vector_set(col, (size_t)i, prob->B[j * d->m + i]); /* column of B^T */
    st = gsl_linalg_cholesky_svx(Rc, col);
    for (i = 0; i < d->m; i++)
      d->K[i * dim + d->n + j] = gsl_vector_get(col, (size_t)i);
  }
  if (!st && d->Rinv && !(st = gsl_linalg_cholesky_invert(Rc)))
    for (i = 0; i < d->m; i++) /* symmetric to the last bit */
      for (j = 0; j < d->m; j++)
        d->Rinv[i * d->m + j] =
            0.5 * (gsl_matrix_get(Rc, (size_t)i, (size_t)j) + gsl_matrix_get(Rc, (size_t)j, (size_t)i));
  if (!d->wT_Rc) /* T in the data keeps them for the next HsDiscSetHorizon */
    gsl_matrix_free(Rc), gsl_vector_free(col);
gk:
  for (i = 0; !st && i < d->n; i++)
    for (j = 0; j < dim; j++) {
      double s = 0;
      for (int l = 0; l < d->m; l++)
        s += prob->B[i * d->m + l] * d->K[l * dim + j];
      d->GK[(d->n + i) * dim + j] = s;
    }
  return st;
}

/*@ HsDiscCreate - a discretization of prob on N uniform intervals with the named schemes (docs/theory.md
    section 2): the step residuals, their Jacobians and the diagnostics of costate/.

  Not collective (serial object); no allocation after this call.

  Input: prob - the problem (not copied; R and a constant B are read now: create a new discretization
         after changing them; a B(q) is evaluated on each interval, docs/configuration-dependent-forces.md);
         state_scheme, costate_scheme - names (HsStateSchemeFind, HsCostateSchemeFind);
         N >= 2; dg_tol - relative threshold of the divided-difference fallbacks, 0 <= dg_tol < 1
         (HS_DG_TOL_DEFAULT).
  Output: disc; on failure, if msg is not NULL, a message a user can act on (msg_len bytes).

  Returns HS_SUCCESS, HS_EINVAL (a bad argument, a scheme that does not fit the problem, an R that
  is not symmetric positive definite) or HS_ENOMEM.
@*/
int HsDiscCreate(const HsProblem *prob, const char *state_scheme, const char *costate_scheme, int N, double dg_tol,
                 HsDisc **disc, char *msg, int msg_len)
{
  const HsStateScheme   *ss = state_scheme ? HsStateSchemeFind(state_scheme) : NULL;
  const HsCostateScheme *cs = costate_scheme ? HsCostateSchemeFind(costate_scheme) : NULL;
  HsDisc                *d;
  int                    st;

  *disc = NULL;
  gsl_set_error_handler_off();
  st = DiscCheck(prob, ss, cs, state_scheme, costate_scheme, N, dg_tol, msg, msg_len);
  if (st)
    return st;
  d = calloc(1, sizeof(*d));
  if (!d || (d->prob = prob, d->n = prob->n, d->m = prob->m, d->dim = 2 * prob->n, DiscAllocate(d)) ||
      HsDiscGainSetup(d)) {
    if (msg)
      snprintf(msg, (size_t)msg_len, "out of memory");
    HsDiscDestroy(&d);
    return HS_ENOMEM;
  }
  d->ss = ss, d->cs = cs, d->mid = &HsStateMidpoint;
  if (HsControlLawActive(prob) && !HsDiscCheckBounded(prob, NULL, 0)) { /* bounded controls (docs/controls.md); else
                                the direct NLP's own u only (the indirect solvers refuse it: HsDiscCheckBounded) */
    d->bounded = 1, d->coupled = !HsControlLawDiagonal(prob);
    if (!(d->ws = calloc((size_t)d->m * (1 + (size_t)d->m), sizeof(double)))) {
      if (msg)
        snprintf(msg, (size_t)msg_len, "out of memory");
      HsDiscDestroy(&d);
      return HS_ENOMEM;
    }
    d->wdu = d->ws + d->m;
    for (int j = 0; j < d->m; j++)
      if (prob->R[j * d->m + j] == 0)
        d->ueps = HS_BOUNDS_BANG_EPS_DEFAULT; /* bang-bang needs eps > 0 (HsDiscSetControlSmoothing) */
  }
  d->ell_at.prob = prob;
  d->N = N, d->h = prob->T / N, d->dg_tol = dg_tol;
  if (prob->data_T) { /* HsDiscDataTU, HsDiscFreeTimeTerm */
    int nm = d->n * d->m, mm = d->m * d->m;
    if (!(d->wT_B = calloc((size_t)(nm + mm + d->n + d->m + 7 * d->dim), sizeof(double))) ||
        !(d->wT_Rc = gsl_matrix_alloc((size_t)d->m, (size_t)d->m)) || !(d->wT_col = gsl_vector_alloc((size_t)d->m))) {
      if (msg)
        snprintf(msg, (size_t)msg_len, "out of memory");
      HsDiscDestroy(&d);
      return HS_ENOMEM;
    }
    d->wT_R = d->wT_B + nm, d->wT_q = d->wT_R + mm, d->wT_u = d->wT_q + d->n, d->wT_g = d->wT_u + d->m;
    d->wT_z = d->wT_g + d->dim;
  }
  st = DiscControlGain(d);
  if (st) {
    if (msg)
      snprintf(msg, (size_t)msg_len, "control weight R of problem '%s' is not symmetric positive definite (%s)",
               prob->name, gsl_strerror(st));
    HsDiscDestroy(&d);
    return st == GSL_ENOMEM ? HS_ENOMEM : HS_EINVAL;
  }
  *disc = d;
  return HS_SUCCESS;
}

/*@ HsDiscDestroy - frees a discretization and sets *disc = NULL; NULL-safe. Not collective. @*/
void HsDiscDestroy(HsDisc **disc)
{
  if (!disc || !*disc)
    return;
  free((*disc)->pool);
  free((*disc)->wT_B);
  free((*disc)->ws);
  if ((*disc)->wT_Rc)
    gsl_matrix_free((*disc)->wT_Rc);
  if ((*disc)->wT_col)
    gsl_vector_free((*disc)->wT_col);
  HsDiscGainDestroy(*disc);
  free(*disc);
  *disc = NULL;
}

/*@ HsDiscGetDim - the state dimension 2n. Not collective. @*/
int HsDiscGetDim(const HsDisc *d) { return d->dim; }

/*@ HsDiscGetStep - the step h = T/N. Not collective. @*/
double HsDiscGetStep(const HsDisc *d) { return d->h; }

/*@ HsDiscGetProblem - the problem being discretized. Not collective. @*/
const HsProblem *HsDiscGetProblem(const HsDisc *d) { return d->prob; }

/*@ HsDiscGetStateScheme - the state scheme in use. Not collective. @*/
const HsStateScheme *HsDiscGetStateScheme(const HsDisc *d) { return d->ss; }

/*@ HsDiscGetCostateScheme - the costate scheme in use. Not collective. @*/
const HsCostateScheme *HsDiscGetCostateScheme(const HsDisc *d) { return d->cs; }

/*@ HsDiscStateResidual - the state equation of one interval (docs/theory.md section 2.1) times h,
    F = x_{k+1} - x_k - h (JJ gbar(x_k, x_{k+1}) + G u_{k+1/2}), u = R^{-1} G^T lambda_{k+1/2}.

  Not collective. Input: xk, xk1 - x_k, x_{k+1} (2n each); lam - lambda_{k+1/2}. Output: F (2n).
  Returns HS_SUCCESS, HS_EDOM (a state outside the problem's domain) or HS_EFAILED.
@*/
int HsDiscStateResidual(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *F)
{
  double *u = d->wu;
  HS_CHK(HsDiscControl(d, xk, xk1, lam, u));
  return StateResidualAtGain(d, xk, xk1, u, F);
}

/*@ HsDiscStateResidualU - HsDiscStateResidual with the control u_{k+1/2} given (m values) instead of
    taken from the costate: the constraint c_k of the direct transcription NLP (hsnlp.c), also where
    u is bounded and so not R^{-1} G^T lambda. Not collective. Returns as HsDiscStateResidual. @*/
int HsDiscStateResidualU(HsDisc *d, const double *xk, const double *xk1, const double *u, double *F)
{
  HS_CHK(HsDiscGainSet(d, xk, xk1));
  return StateResidualAtGain(d, xk, xk1, u, F);
}

/* The state residual with Bbar already set for (x_k, x_{k+1}) (HsDiscGainSet or HsDiscControl). */
static int StateResidualAtGain(HsDisc *d, const double *xk, const double *xk1, const double *u, double *F)
{
  int     dim = d->dim, n = d->n, i;
  double *g = d->wtop_v[0], *Jg = d->wtop_v[1];

  HS_CHK(d->ss->grad(d, xk, xk1, g));
  HsApplyJ(dim, g, Jg);
  for (i = 0; i < dim; i++)
    F[i] = xk1[i] - xk[i] - d->h * Jg[i];
  for (i = 0; i < n; i++) /* G u = (0, Bbar u) */
    F[n + i] -= d->h * HsDot(d->m, d->Bbar + i * d->m, u);
  return HS_SUCCESS;
}

/*@ HsDiscStateJacobian - the Jacobian blocks of HsDiscStateResidual (2n x 2n each, row-major):
    dF/dx_k = -I - h JJ Da, dF/dx_{k+1} = I - h JJ Db, dF/dlambda = -h G K (Da, Db: the state
    scheme's Jacobians). With a B(q) the x-blocks gain the derivative of -h G(qbar) u(lambda); lam NULL
    leaves it out (the blocks at a fixed control, HsNlpIntervalJacobian). Not collective. Returns as
    HsDiscStateResidual. @*/
int HsDiscStateJacobian(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *Fxk, double *Fxk1,
                        double *Flam)
{
  int     dim = d->dim, n = d->n, i, j;
  double *Da = d->wtop_m[0], *Db = d->wtop_m[1];

  HS_CHK(HsDiscGainSet(d, xk, xk1));
  HS_CHK(d->ss->jac(d, xk, xk1, Da, Db));
  if (d->bounded && lam)
    HS_CHK(BoundedLaw(d, lam, d->wu, NULL));
  /* (JJ A) rows: first n rows = rows n..2n-1 of A, last n rows = -(rows 0..n-1). */
  for (i = 0; i < dim; i++)
    for (j = 0; j < dim; j++) {
      double ja         = i < n ? Da[(i + n) * dim + j] : -Da[(i - n) * dim + j];
      double jb         = i < n ? Db[(i + n) * dim + j] : -Db[(i - n) * dim + j];
      Fxk[i * dim + j]  = -d->h * ja - (i == j);
      Fxk1[i * dim + j] = -d->h * jb + (i == j);
      Flam[i * dim + j] = -d->h * d->GK[i * dim + j];
      if (d->bounded && lam && i >= n && j >= n) { /* -h G (du/ds) G^T (docs/controls.md) */
        double a = 0;
        for (int c = 0; c < d->m && !d->coupled; c++)
          a += d->Bbar[(i - n) * d->m + c] * d->wdu[c] * d->Bbar[(j - n) * d->m + c];
        for (int c = 0; c < d->m && d->coupled; c++)
          for (int e = 0; e < d->m; e++)
            a += d->Bbar[(i - n) * d->m + c] * d->wdu[c * d->m + e] * d->Bbar[(j - n) * d->m + e];
        Flam[i * dim + j] = -d->h * a;
      }
    }
  return lam ? HsDiscGainStateJacobian(d, xk, xk1, lam, Fxk, Fxk1) : HS_SUCCESS;
}

/*@ HsDiscCostateResidual - the costate equation of interior node k, 1 <= k <= N-1 (docs/theory.md section
    2.2), times h, of the discretization's costate scheme; k fixes the times t_{k-1}, t_{k+1} at which
    a time-dependent running cost is evaluated.

  Not collective. Input: xm, x0, xp - x_{k-1}, x_k, x_{k+1}; lm, lp - lambda_{k-1/2}, lambda_{k+1/2}.
  Output: C (2n). Returns HS_SUCCESS, HS_EDOM or HS_EFAILED.
@*/
int HsDiscCostateResidual(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                          const double *lp, double *C)
{
  double *Ch = d->whom;

  HS_CHK(d->cs->residual(d, k, xm, x0, xp, lm, lp, C));
  if (!d->hom)
    return HS_SUCCESS;
  HS_CHK(d->hom->residual(d, k, xm, x0, xp, lm, lp, Ch));
  HsAXPBY(d->dim, 1 - d->theta, Ch, d->theta, C);
  return HS_SUCCESS;
}

/*@ HsDiscSetCostateHomotopy - blends the costate equation of the discretization's scheme with that of
    the scheme named from: C = theta C_own + (1 - theta) C_from, 0 <= theta <= 1 (theta = 1, or from
    NULL: the own scheme alone). A path from a direct solution (from = "kkt", whose costate equations
    it satisfies) to the conserving one (docs/theory.md section 3, initial guesses).

  Not collective. Returns HS_SUCCESS, or HS_EUNKNOWN / HS_EINVAL for an unknown scheme or theta outside [0, 1].
@*/
int HsDiscSetCostateHomotopy(HsDisc *d, const char *from, double theta)
{
  const HsCostateScheme *cs = from ? HsCostateSchemeFind(from) : NULL;

  if (from && !cs)
    return HS_EUNKNOWN;
  if (!(theta >= 0 && theta <= 1))
    return HS_EINVAL;
  d->hom   = theta < 1 ? cs : NULL;
  d->theta = theta;
  return HS_SUCCESS;
}

/*@ HsDiscCostateJacobian - the Jacobian blocks of HsDiscCostateResidual with respect to x_{k-1}, x_k,
    x_{k+1}, lambda_{k-1/2}, lambda_{k+1/2} (2n x 2n each). The conserving scheme's blocks involve
    third derivatives of E (HsFunctionD3). Not collective. Returns as HsDiscCostateResidual. @*/
int HsDiscCostateJacobian(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                          const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp)
{
  int     dd = d->dim * d->dim;
  double *B = d->whom + d->dim, *J[5] = {Jxm, Jx0, Jxp, Jlm, Jlp};

  HS_CHK(d->cs->jacobian(d, k, xm, x0, xp, lm, lp, Jxm, Jx0, Jxp, Jlm, Jlp));
  if (!d->hom)
    return HS_SUCCESS;
  HS_CHK(d->hom->jacobian(d, k, xm, x0, xp, lm, lp, B, B + dd, B + 2 * dd, B + 3 * dd, B + 4 * dd));
  for (int b = 0; b < 5; b++)
    HsAXPBY(dd, 1 - d->theta, B + b * dd, d->theta, J[b]);
  return HS_SUCCESS;
}

/* The bounded law at lambda with Bbar set: u (m), psi (may be NULL), and s, du/ds kept in d->ws, d->wdu (the full
   m x m du/ds for a coupled R). */
static int BoundedLaw(HsDisc *d, const double *lam, double *u, double *psi)
{
  for (int j = 0; j < d->m; j++) {
    d->ws[j] = 0;
    for (int i = 0; i < d->n; i++)
      d->ws[j] += d->Bbar[i * d->m + j] * lam[d->n + i];
  }
  if (d->coupled)
    return HsControlLawEvalFull(d->prob, d->ueps, d->ws, u, psi, d->wdu) ? HS_EDOM : HS_SUCCESS;
  return HsControlLawEval(d->prob, d->ueps, d->ws, u, psi, d->wdu) ? HS_EDOM : HS_SUCCESS;
}

/*@ HsDiscControl - the control of interval (x_k, x_{k+1}) from the stationarity condition (docs/theory.md
    section 1), u = R^{-1} Bbar^T lambda^p (m values), Bbar = B((q_k + q_{k+1})/2) for a B(q)
    (docs/configuration-dependent-forces.md). Not collective. Returns HS_SUCCESS or HS_EDOM. @*/
int HsDiscControl(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *u)
{
  HS_CHK(HsDiscGainSet(d, xk, xk1));
  if (d->bounded)
    return BoundedLaw(d, lam, u, NULL);
  HsMatVec(d->m, d->dim, d->K, lam, u);
  return HS_SUCCESS;
}

/*@ HsDiscIsBounded - 1 if d's controls follow the bounded law of costate/hscontrol.h (a finite bound or a
    control with R_jj = 0; docs/controls.md), 0 otherwise. Not collective. @*/
int HsDiscIsBounded(const HsDisc *d) { return d->bounded; }

/*@ HsDiscSetControlSmoothing - the smoothing eps of the bounded control law (costate/hscontrol.h): eps = 0 the
    exact projection (refused, HS_EINVAL, if a control has R_jj = 0: the bang-bang law needs eps > 0), eps > 0 the
    smoothed law; units of u for the box law, of s = B^T lambda^p for the bang-bang law. No effect on an
    unbounded problem. Not collective. Returns HS_SUCCESS or HS_EINVAL. @*/
int HsDiscSetControlSmoothing(HsDisc *d, double eps)
{
  if (!(eps >= 0) || !isfinite(eps))
    return HS_EINVAL;
  for (int j = 0; d->bounded && eps == 0 && j < d->m; j++)
    if (d->prob->R[j * d->m + j] == 0)
      return HS_EINVAL;
  d->ueps = eps;
  return HS_SUCCESS;
}

/*@ HsDiscGetControlSmoothing - the smoothing eps of the bounded control law (0 without bounds). Not collective. @*/
double HsDiscGetControlSmoothing(const HsDisc *d) { return d->ueps; }

/*@ HsDiscSwitchingInput - the switching input s = Bbar^T lambda^p of interval (x_k, x_{k+1}) (m values): the
    argument of the bounded control law, u_j = clamp(s_j / R_jj, lo_j, hi_j) exactly (docs/controls.md).
    Not collective. Returns HS_SUCCESS or HS_EDOM. @*/
int HsDiscSwitchingInput(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *s)
{
  HS_CHK(HsDiscGainSet(d, xk, xk1));
  for (int j = 0; j < d->m; j++) {
    s[j] = 0;
    for (int i = 0; i < d->n; i++)
      s[j] += d->Bbar[i * d->m + j] * lam[d->n + i];
  }
  return HS_SUCCESS;
}

/*@ HsDiscRunningCost - L^d of interval k (docs/theory.md section 2.3): L^d = 1/2 u^T R u + 1/2 (ell(x_k, t_k) +
    ell(x_{k+1}, t_{k+1})) with u = R^{-1} G^T lambda; J^d = h sum_k L^d (+ phi(x_N)).
    Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsDiscRunningCost(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *L)
{
  double *u = d->wu;
  HS_CHK(HsDiscControl(d, xk, xk1, lam, u));
  return HsDiscRunningCostU(d, k, xk, xk1, u, L);
}

/*@ HsDiscRunningCostU - HsDiscRunningCost with the control u given (m values). Not collective. @*/
int HsDiscRunningCostU(HsDisc *d, int k, const double *xk, const double *xk1, const double *u, double *L)
{
  double *Ru = d->wRu, la = 0, lb = 0;

  HsMatVec(d->m, d->m, d->prob->R, u, Ru);
  if (d->prob->ell.f) {
    HS_CB(d->prob->ell.f(HsDiscTime(d, k), xk, &la, d->prob->ctx));
    HS_CB(d->prob->ell.f(HsDiscTime(d, k + 1), xk1, &lb, d->prob->ctx));
  }
  *L = 0.5 * HsDot(d->m, u, Ru) + 0.5 * (la + lb);
  return HS_SUCCESS;
}

/*@ HsDiscHamiltonian - the discrete Hamiltonian of interval k (docs/theory.md section 2.3):
    H^d = -L^d + lambda^T (JJ gbar + G u) = 1/2 u^T R u - 1/2 (ell_k + ell_{k+1}) + lambda^T JJ gbar
    with u = R^{-1} G^T lambda; constant in k to round-off for the conserving costate scheme on an
    autonomous problem. Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsDiscHamiltonian(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *H)
{
  double *u = d->wu, psi, su = 0;

  HS_CHK(HsDiscControl(d, xk, xk1, lam, u));
  HS_CHK(HamiltonianAtGain(d, k, xk, xk1, lam, u, H));
  if (!d->bounded)
    return HS_SUCCESS;
  /* bounded (docs/controls.md): the control part s^T u - 1/2 u^T R u becomes psi(s), the maximized control term
     (equal at eps = 0; for eps > 0 the smoothed problem's, whose running cost in u is the Legendre transform of psi) */
  HS_CHK(BoundedLaw(d, lam, u, &psi));
  for (int j = 0; j < d->m; j++)
    su += d->ws[j] * u[j] - 0.5 * d->prob->R[j * d->m + j] * u[j] * u[j];
  for (int i = 0; d->coupled && i < d->m; i++) /* the off-diagonal part of 1/2 u^T R u */
    for (int j = 0; j < d->m; j++)
      su -= i != j ? 0.5 * u[i] * d->prob->R[i * d->m + j] * u[j] : 0;
  *H += psi - su;
  return HS_SUCCESS;
}

/*@ HsDiscHamiltonianU - H^d = -L^d + lambda^T (JJ gbar + G u) with the control u given (m values):
    the Hamiltonian of a direct solution whose controls are bounded. Not collective. @*/
int HsDiscHamiltonianU(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, const double *u,
                       double *H)
{
  HS_CHK(HsDiscGainSet(d, xk, xk1));
  return HamiltonianAtGain(d, k, xk, xk1, lam, u, H);
}

/* H^d with Bbar already set for (x_k, x_{k+1}). */
static int HamiltonianAtGain(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, const double *u,
                             double *H)
{
  int     n = d->n;
  double *g = d->wtop_v[0], *Jg = d->wtop_v[1], L, lGu = 0;

  HS_CHK(HsDiscRunningCostU(d, k, xk, xk1, u, &L));
  HS_CHK(d->ss->grad(d, xk, xk1, g));
  HsApplyJ(d->dim, g, Jg);
  for (int i = 0; i < n; i++)
    lGu += lam[n + i] * HsDot(d->m, d->Bbar + i * d->m, u);
  *H = -L + HsDot(d->dim, lam, Jg) + lGu;
  return HS_SUCCESS;
}

/*@ HsDiscEllTimeChange - Dt_k, the part of ell(x_{k+1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) due to the change
    of time at node k (docs/time-dependent-cost.md):
      Dt_k = 1/2 [ell(x_{k-1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) + ell(x_{k+1}, t_{k+1}) - ell(x_{k+1}, t_{k-1})];
    0 for an autonomous or absent running cost. The conserving scheme keeps
    H^d_{k+1/2} - H^d_{k-1/2} = -Dt_k / 2 exactly. Not collective. @*/
int HsDiscEllTimeChange(HsDisc *d, int k, const double *xm, const double *xp, double *Dt)
{
  const HsProblem *P  = d->prob;
  double           t1 = HsDiscTime(d, k + 1), t0 = HsDiscTime(d, k - 1), a1, a0, b1, b0;

  *Dt = 0;
  if (!P->ell.f || !P->ell.time_dependent)
    return HS_SUCCESS;
  HS_CB(P->ell.f(t1, xm, &a1, P->ctx));
  HS_CB(P->ell.f(t0, xm, &a0, P->ctx));
  HS_CB(P->ell.f(t1, xp, &b1, P->ctx));
  HS_CB(P->ell.f(t0, xp, &b0, P->ctx));
  *Dt = 0.5 * ((a1 - a0) + (b1 - b0));
  return HS_SUCCESS;
}

/* (q_{k+1} - q_k)^T Bbar u with Bbar already set for (x_k, x_{k+1}). */
static double WorkAtGain(const HsDisc *d, const double *xk, const double *xk1, const double *u)
{
  double W = 0;
  for (int i = 0; i < d->n; i++)
    W += (xk1[i] - xk[i]) * HsDot(d->m, d->Bbar + i * d->m, u);
  return W;
}

/*@ HsDiscEnergy - the mechanical energy E(x). Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsDiscEnergy(HsDisc *d, const double *x, double *E) { return HsStatus(d->prob->E.f(x, E, d->prob->ctx)); }

/*@ HsDiscWork - the discrete work of the controls on one interval, (q_{k+1} - q_k)^T Bbar u_{k+1/2}
    with u = R^{-1} G^T lambda (docs/theory.md section 2.1): E_{k+1} - E_k equals it exactly for an
    energy-consistent state scheme, also for a B(q). Not collective. Returns HS_SUCCESS or HS_EDOM. @*/
int HsDiscWork(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *W)
{
  double *u = d->wu;
  HS_CHK(HsDiscControl(d, xk, xk1, lam, u));
  *W = WorkAtGain(d, xk, xk1, u);
  return HS_SUCCESS;
}

/*@ HsDiscWorkU - HsDiscWork with the control u given (m values). Not collective. @*/
int HsDiscWorkU(HsDisc *d, const double *xk, const double *xk1, const double *u, double *W)
{
  *W = 0;
  HS_CHK(HsDiscGainSet(d, xk, xk1));
  *W = WorkAtGain(d, xk, xk1, u);
  return HS_SUCCESS;
}

/*@ HsDiscSetHorizon - the step h = T / N again after the problem's final time changed (a free final
    time, HsProblemSetFinalTime; docs/free-final-time.md), and with T in the data (prob->data_T) the
    control gain R^{-1} B^T again. Not collective. Returns HS_SUCCESS, or HS_EDOM if R(T) is not
    positive definite or B, R, x0 or dx0/dT is not finite at this T. @*/
int HsDiscSetHorizon(HsDisc *d)
{
  const HsProblem *P = d->prob;

  d->h = P->T / d->N;
  if (!P->data_T)
    return HS_SUCCESS;
  for (int i = 0; i < d->dim; i++) /* B, R and x0 at this T: not finite is outside the domain */
    if (!isfinite(P->x0[i]) || (P->x0_T && !isfinite(P->x0_T[i])))
      return HS_EDOM;
  for (int i = 0; i < d->n * d->m; i++)
    if (!isfinite(P->B[i]))
      return HS_EDOM;
  for (int i = 0; i < d->m * d->m; i++)
    if (!isfinite(P->R[i]))
      return HS_EDOM;
  return DiscControlGain(d) ? HS_EDOM : HS_SUCCESS;
}

/*@ HsDiscDataTU - a free T in the data (prob->data_T; docs/free-final-time.md): the explicit
    T-derivatives of interval (x_k, x_{k+1})'s pieces at fixed x_k, x_{k+1} and control u (m values):
      LT = dL^d/dT = 1/2 u^T R_T u + 1/2 (ell_T(x_k) + ell_T(x_{k+1})),
      fT = d(JJ gbar + G u)/dT = JJ gbar[E_T] + [0; B_T(qbar) u]                     (dim values),
    gbar[E_T] the state scheme's discrete gradient of E_T (HsDiscGradT: every scheme is linear in E).
    Both 0 without data_T. Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsDiscDataTU(HsDisc *d, const double *xk, const double *xk1, const double *u, double *LT, double *fT)
{
  const HsProblem *P = d->prob;
  int              n = d->n, m = d->m, dim = d->dim;
  double           a, b;

  *LT = 0;
  HsZero(dim, fT);
  if (!P->data_T)
    return HS_SUCCESS;
  if (P->E_T.f) {
    HS_CHK(HsDiscGradT(d, xk, xk1, d->wT_g));
    HsApplyJ(dim, d->wT_g, fT);
  }
  if (P->BR_T) {
    for (int i = 0; i < n; i++)
      d->wT_q[i] = 0.5 * (xk[i] + xk1[i]);
    HS_CB(P->BR_T(d->wT_q, d->wT_B, d->wT_R, P->ctx));
    HsMatVec(m, m, d->wT_R, u, d->wT_u);
    *LT += 0.5 * P->R_scale * HsDot(m, u, d->wT_u); /* dR/dT of the scaled R */
    for (int i = 0; i < n; i++)
      fT[n + i] += HsDot(m, d->wT_B + i * m, u);
  }
  if (P->ell_T) {
    HS_CB(P->ell_T(xk, &a, P->ctx));
    HS_CB(P->ell_T(xk1, &b, P->ctx));
    *LT += 0.5 * (a + b);
  }
  return HS_SUCCESS;
}

/*@ HsDiscHamiltonianT - the explicit derivative of H^d (HsDiscHamiltonian) in a free T on which the data
    depend, at fixed x_k, x_{k+1}, lambda: dH^d/dT = -LT + lambda^T fT (HsDiscDataTU) at u = R^{-1} Bbar^T
    lambda_p (the change of u itself drops out, dH^d/du = 0 there). 0 without data_T. Not collective. @*/
int HsDiscHamiltonianT(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *HT)
{
  double *u = d->wu, *fT = d->wtop_v[5], LT;

  (void)k; /* autonomous: a free T needs an ell without t */
  *HT = 0;
  if (!d->prob->data_T)
    return HS_SUCCESS;
  HS_CHK(HsDiscControl(d, xk, xk1, lam, u));
  HS_CHK(HsDiscDataTU(d, xk, xk1, u, &LT, fT));
  *HT = -LT + HsDot(d->dim, lam, fT);
  return HS_SUCCESS;
}

/*@ HsDiscFreeTimeTerm - interval k's term Q_k of the free-final-time condition beyond H^d when the data
    depend on T (docs/free-final-time.md): the condition is (1/N) sum_k (H^d_k + Q_k) = d phi/dT (+ the
    moving target's terms), with
      Q_k = T dH^d_k/dT                          (HsDiscHamiltonianT; N h sum_k = T sum_k)
          + [k = 0] N (lambda_{1/2} + h dH^d_0/dx_0)^T dx0/dT,
    the second line -N nu0^T dx0/dT with nu0 = -(lambda_{1/2} + h dH^d_0/dx_0) the multiplier of
    x_0 = x0(T), the stationarity of the transcription's Lagrangian in x_0. 0 without data_T.
    Not collective. Returns HS_SUCCESS, HS_EDOM or HS_EFAILED. @*/
int HsDiscFreeTimeTerm(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *Q)
{
  const HsProblem *P   = d->prob;
  int              dim = d->dim;
  double           HT, T = d->h * d->N, *g = d->wT_z + 3 * dim;

  *Q = 0;
  if (!P->data_T)
    return HS_SUCCESS;
  HS_CHK(HsDiscHamiltonianT(d, k, xk, xk1, lam, &HT));
  *Q = T * HT;
  if (k == 0 && P->x0_T) {
    HS_CHK(HsDiscHamiltonianGradient(d, 0, xk, xk1, lam, g, g + dim, g + 2 * dim));
    for (int i = 0; i < dim; i++)
      *Q += (d->N * lam[i] + T * g[i]) * P->x0_T[i];
  }
  return HS_SUCCESS;
}

/*@ HsDiscFreeTimeTermGradient - the gradient of HsDiscFreeTimeTerm in x_k, x_{k+1} and lambda_{k+1/2}
    (dim each) by central differences, step HS_FT_FD_STEP (1 + |z_i|) per entry (error O(step^2), about
    1e-10 relative): a Jacobian row only (the residual itself is exact), checked against
    -snes_test_jacobian in the test free_time_data. Not collective. @*/
int HsDiscFreeTimeTermGradient(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *gxk,
                               double *gxk1, double *glam)
{
  int     dim = d->dim;
  double *z = d->wT_z, *out[3] = {gxk, gxk1, glam};

  HsCopy(dim, xk, z), HsCopy(dim, xk1, z + dim), HsCopy(dim, lam, z + 2 * dim);
  for (int j = 0; j < 3 * dim; j++) {
    double zj = z[j], e = HS_FT_FD_STEP * (1 + fabs(zj)), qp, qm;
    z[j] = zj + e;
    HS_CHK(HsDiscFreeTimeTerm(d, k, z, z + dim, z + 2 * dim, &qp));
    z[j] = zj - e;
    HS_CHK(HsDiscFreeTimeTerm(d, k, z, z + dim, z + 2 * dim, &qm));
    z[j]                  = zj;
    out[j / dim][j % dim] = (qp - qm) / (2 * e);
  }
  return HS_SUCCESS;
}

/*@ HsDiscHamiltonianGradient - the gradient of H^d of interval k (HsDiscHamiltonian, with
    u = R^{-1} G^T lambda) in x_k, x_{k+1} and lambda_{k+1/2} (dim each):
      d/dlambda = JJ gbar + G R^{-1} G^T lambda,
      d/dx_k    = -Da^T JJ lambda - 1/2 grad ell(x_k, t_k),   d/dx_{k+1} = -Db^T JJ lambda - 1/2 grad ell(x_{k+1},
   t_{k+1}) with Da, Db the state scheme's Jacobians. The row of the free-final-time condition. Not collective. @*/
int HsDiscHamiltonianGradient(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *gxk,
                              double *gxk1, double *glam)
{
  int     dim = d->dim;
  double *g = d->wtop_v[0], *Jl = d->wtop_v[1], *w = d->wtop_v[2], *Da = d->wtop_m[0], *Db = d->wtop_m[1];

  HS_CHK(HsDiscGainSet(d, xk, xk1));
  HS_CHK(d->ss->grad(d, xk, xk1, g));
  HsApplyJ(dim, g, glam);
  if (d->bounded) { /* d psi(s)/dlambda = G u (docs/controls.md) */
    HS_CHK(BoundedLaw(d, lam, d->wu, NULL));
    for (int i = 0; i < d->n; i++)
      glam[d->n + i] += HsDot(d->m, d->Bbar + i * d->m, d->wu);
  } else
    for (int i = 0; i < dim; i++)
      glam[i] += HsDot(dim, d->GK + i * dim, lam);
  HS_CHK(d->ss->jac(d, xk, xk1, Da, Db));
  HsApplyJ(dim, lam, Jl);
  HsMatTVec(dim, dim, Da, Jl, gxk);
  HsMatTVec(dim, dim, Db, Jl, gxk1);
  for (int i = 0; i < dim; i++)
    gxk[i] = -gxk[i], gxk1[i] = -gxk1[i];
  if (d->prob->ell.f) {
    HS_CB(d->prob->ell.grad(HsDiscTime(d, k), xk, w, d->prob->ctx));
    HsAXPBY(dim, -0.5, w, 1, gxk);
    HS_CB(d->prob->ell.grad(HsDiscTime(d, k + 1), xk1, w, d->prob->ctx));
    HsAXPBY(dim, -0.5, w, 1, gxk1);
  }
  return HsDiscGainHamiltonianGradient(d, xk, xk1, lam, gxk, gxk1);
}

/*@ HsDiscTerminalCostT - d phi/dT at x_N and the current final time, its gradient in x_N (gT, dim;
    may be NULL) and d^2 phi/dT^2 (fTT; may be NULL); all 0 if phi does not depend on T. Not collective. @*/
int HsDiscTerminalCostT(HsDisc *d, const double *xN, double *fT, double *gT, double *fTT)
{
  *fT = 0;
  if (gT)
    HsZero(d->dim, gT);
  if (fTT)
    *fTT = 0;
  return d->prob->phi_T ? HsStatus(d->prob->phi_T(xN, fT, gT, fTT, d->prob->ctx)) : HS_SUCCESS;
}

/*@ HsDiscTerminalResidualT - HsDiscTerminalResidual R and its explicit derivative RT with respect to
    a free final time T (x_{N-1}, x_N, lambda_{N-1/2} held; 2n values each). R = lambda + grad phi +
    h (...) is linear in h = T/N apart from phi, so RT = (R - lambda - grad phi) / T + d grad phi/dT.
    Not collective. @*/
int HsDiscTerminalResidualT(HsDisc *d, const double *xm, const double *xN, const double *lm, double *R, double *RT)
{
  double *gp = d->wtop_v[3], *gT = d->wtop_v[4], fT, T = d->h * d->N;

  HS_CHK(HsDiscTerminalResidual(d, xm, xN, lm, R));
  HS_CHK(HsDiscTerminalCostT(d, xN, &fT, gT, NULL));
  HsZero(d->dim, gp);
  if (d->prob->phi.f)
    HS_CB(d->prob->phi.grad(xN, gp, d->prob->ctx));
  for (int i = 0; i < d->dim; i++)
    RT[i] = (R[i] - lm[i] - gp[i]) / T + gT[i];
  return HS_SUCCESS;
}
