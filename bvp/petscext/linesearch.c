/* hamshoot: the Newton line search "hsbt" (SNESLineSearch type, -snes_linesearch_type hsbt; the default of
 * the Newton formulations).
 *
 * It is backtracking on phi(lambda) = ||F(X - lambda Y)||^2 / 2 as PETSc's bt does it: the full step (the
 * damping) first, halved while F is not finite there; accepted if phi(lambda) <= phi(0) + alpha lambda s
 * (s = phi'(0) = -F . J Y, alpha = -snes_linesearch_alpha, 1e-4); else the minimum of the quadratic through
 * phi(0), s and phi(lambda), then of the cubic through the last two trials (-snes_linesearch_order), each
 * kept within [0.1, 0.5] lambda, until the test holds, lambda <= -snes_linesearch_minlambda or
 * -snes_linesearch_max_it steps (then it fails, where bt takes the last trial).
 *
 * What differs is the slope. bt computes F . J Y with a product by the Jacobian, whatever solved for Y.
 * Where Y is the Newton direction from a factorization of this Jacobian applied once (SNESNEWTONLS;
 * KSPPREONLY with hsband or an LU that pivots and drops nothing, HsSNESExactDirection; the operator
 * the preconditioner's matrix; neither lagged) and no pre-check changed it, J Y = F to the solve's
 * backward error and s = -||F||^2 (times the scaling to -snes_linesearch_maxstep, if any): the product
 * would read the whole Jacobian to return that to
 * round-off (kepler at N = 1e5: 2.9e7 nonzeros, 4-5 % of a Newton iteration, measured with -log_view).
 * hsbt takes -||F||^2 there and computes the product like bt elsewhere (a Krylov solve, hsdrop, a
 * lagged or matrix-free Jacobian). With damping 1 the two line searches try the same steps and accept
 * the same ones (up to the round-off in s); with other damping hsbt's first quadratic is that of the
 * trial made (bt's formula holds for lambda = 1 only).
 */
#include "hspetscext.h"

#include <petsc/private/linesearchimpl.h>
#include <petsc/private/matimpl.h>
#include <petsc/private/snesimpl.h>

typedef struct {
  PetscReal alpha; /* -snes_linesearch_alpha: the sufficient decrease */
} HsBT;

/*@ HsSNESExactDirection - whether the last Newton direction of snes solves J Y = F to round-off (file head):
    Newton (SNESNEWTONLS, no nonlinear preconditioner), KSPPREONLY with an exact factorization (ExactFactorization)
    of the operator itself, the Jacobian and the factorization of this iterate (bvp/ internal: also the condition of
    the in-place factorization, solversolve.c). The same on every rank. @*/
PetscErrorCode HsSNESExactDirection(SNES snes, PetscBool *exact)
{
  KSP       ksp;
  PC        pc;
  Mat       A, P;
  PetscInt  lagj, lagp;
  PetscBool newton, npc, pre;

  PetscFunctionBeginUser;
  *exact = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)snes, SNESNEWTONLS, &newton));
  PetscCall(SNESHasNPC(snes, &npc));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPPREONLY, &pre));
  PetscCall(SNESGetLagJacobian(snes, &lagj));
  PetscCall(SNESGetLagPreconditioner(snes, &lagp));
  PetscCall(KSPGetOperators(ksp, &A, &P));
  if (!newton || npc || !pre || lagj != 1 || lagp != 1 || A != P)
    PetscFunctionReturn(0);
  PetscCall(HsPCIsExact(pc, exact));
  PetscFunctionReturn(0);
}

/* The slope s = phi'(0) of the line search (file head): for an exact Newton direction scaled by r (the
   maximum step) and not changed by a pre-check, -r ||F||^2 (*exact); else -|F . J Y| (W as work), -1 if that
   is 0 (as bt). */
static PetscErrorCode Slope(SNESLineSearch ls, SNES snes, PetscReal fnorm, PetscReal r, PetscBool changed, PetscReal *s,
                            PetscBool *exact)
{
  Vec X, F, Y, W, G;
  Mat J;

  PetscFunctionBeginUser;
  PetscCall(HsSNESExactDirection(snes, exact));
  *exact = (PetscBool)(*exact && !changed);
  *s     = -r * fnorm * fnorm;
  if (*exact)
    PetscFunctionReturn(0);
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(SNESGetJacobian(snes, &J, NULL, NULL, NULL));
  PetscCheck(J, PetscObjectComm((PetscObject)ls), PETSC_ERR_USER, "line search hsbt needs the Jacobian matrix");
  PetscCall(MatMult(J, Y, W));
  PetscCall(VecDotRealPart(F, W, s));
  *s = *s == 0 ? -1 : -PetscAbsReal(*s);
  PetscFunctionReturn(0);
}

/* One trial: W = X - lambda Y, G = F(W), *g = ||G||^2 / 2. *stop (line search over, reason set) once SNES's
   function evaluations are spent. */
static PetscErrorCode Trial(SNESLineSearch ls, SNES snes, PetscReal lambda, PetscReal *gnorm, PetscReal *g,
                            PetscBool *stop)
{
  Vec      X, F, Y, W, G;
  PetscInt nf, maxf;

  PetscFunctionBeginUser;
  *stop = PETSC_FALSE;
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(SNESGetNumberFunctionEvals(snes, &nf));
  PetscCall(SNESGetTolerances(snes, NULL, NULL, NULL, NULL, &maxf));
  if (maxf >= 0 && nf >= maxf) {
    PetscCall(PetscInfo(snes, "Exceeded maximum function evaluations in the line search (lambda %g)\n", (double)lambda));
    snes->reason = SNES_DIVERGED_FUNCTION_COUNT;
    PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_FUNCTION));
    *stop = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  PetscCall(VecWAXPY(W, -lambda, Y, X));
  PetscCall((*ls->ops->snesfunc)(snes, W, G));
  PetscCall(VecNorm(G, NORM_2, gnorm));
  *g = 0.5 * PetscSqr(*gnorm);
  PetscCall(SNESLineSearchMonitor(ls));
  PetscFunctionReturn(0);
}

/* The next lambda after a trial that failed the test: the minimum of the quadratic through phi(0) = f, s and
   phi(lam) (the first time, or -snes_linesearch_order quadratic), else of the cubic through phi(0), s and the
   last two trials; within [0.1, 0.5] lam. */
static PetscReal Next(PetscInt order, PetscBool first, PetscReal f, PetscReal s, PetscReal lam, PetscReal g,
                      PetscReal lamp, PetscReal gp)
{
  PetscReal t = 0.5 * lam, t1 = g - f - lam * s, t2 = gp - f - lamp * s;

  if (first || order == SNES_LINESEARCH_ORDER_QUADRATIC)
    t = -s * lam * lam / (2 * t1);
  else {
    PetscReal a = (t1 / (lam * lam) - t2 / (lamp * lamp)) / (lam - lamp);
    PetscReal b = (-lamp * t1 / (lam * lam) + lam * t2 / (lamp * lamp)) / (lam - lamp);
    PetscReal d = PetscMax(b * b - 3 * a * s, 0);
    t           = a == 0 ? -s / (2 * b) : (-b + PetscSqrtReal(d)) / (3 * a);
  }
  if (!(t <= 0.5 * lam)) /* also a NaN */
    t = 0.5 * lam;
  return t <= 0.1 * lam ? 0.1 * lam : t;
}

/* The backtracking steps after a full step that failed the test (file head): *lambda the accepted one, or the
   reason set (FAILED_REDUCT, FAILED_NANORINF; *stop). */
static PetscErrorCode Backtrack(SNESLineSearch ls, SNES snes, HsBT *bt, PetscReal f, PetscReal s, PetscReal *lambda,
                                PetscReal *gnorm, PetscReal *g, PetscBool *stop)
{
  PetscReal   minlambda, lamp = 0, gp = 0;
  PetscInt    max_its;
  PetscViewer mon;

  PetscFunctionBeginUser;
  PetscCall(SNESLineSearchGetTolerances(ls, &minlambda, NULL, NULL, NULL, NULL, &max_its));
  PetscCall(SNESLineSearchGetDefaultMonitor(ls, &mon));
  for (PetscInt count = 0; count <= max_its; count++) {
    PetscReal lam = *lambda;
    if (count > 0 && lam <= minlambda) {
      if (mon)
        PetscCall(PetscViewerASCIIPrintf(mon, "    Line search: no step length found after %" PetscInt_FMT " tries\n", count));
      PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_REDUCT));
      *stop = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
    *lambda = Next(ls->order, (PetscBool)(count == 0), f, s, lam, *g, lamp, gp);
    lamp = lam, gp = *g;
    PetscCall(Trial(ls, snes, *lambda, gnorm, g, stop));
    if (*stop)
      PetscFunctionReturn(0);
    if (PetscIsInfOrNanReal(*g)) {
      PetscCall(PetscInfo(snes, "Aborted due to Nan or Inf in function evaluation\n"));
      PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_NANORINF));
      *stop = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
    if (mon)
      PetscCall(PetscViewerASCIIPrintf(mon, "    Line search: lambda %.16e gnorm %.12e%s\n", (double)*lambda, (double)*gnorm,
                                       *g < f + *lambda * bt->alpha * s ? "" : ", shrinking"));
    if (*g < f + *lambda * bt->alpha * s)
      PetscFunctionReturn(0);
  }
  PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_REDUCT));
  *stop = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The accepted step: Y = lambda Y, the post-check (recomputing G if it changed the step), X = W, F = G. */
static PetscErrorCode Accept(SNESLineSearch ls, SNES snes, PetscReal lambda, PetscReal gnorm, PetscReal ynorm)
{
  Vec       X, F, Y, W, G;
  PetscBool changed_y, changed_w;
  PetscReal xnorm;

  PetscFunctionBeginUser;
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(VecScale(Y, lambda));
  PetscCall(SNESLineSearchPostCheck(ls, X, Y, W, &changed_y, &changed_w));
  if (changed_y)
    PetscCall(VecWAXPY(W, -1.0, Y, X));
  if (changed_y || changed_w) {
    PetscCall((*ls->ops->snesfunc)(snes, W, G));
    PetscCall(VecNorm(G, NORM_2, &gnorm));
    PetscCall(VecNorm(Y, NORM_2, &ynorm));
    if (PetscIsInfOrNanReal(gnorm)) {
      PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_NANORINF));
      PetscFunctionReturn(0);
    }
  }
  PetscCall(VecCopy(W, X));
  PetscCall(VecCopy(G, F));
  PetscCall(VecNorm(X, NORM_2, &xnorm));
  PetscCall(SNESLineSearchSetLambda(ls, lambda));
  PetscCall(SNESLineSearchSetNorms(ls, xnorm, gnorm, ynorm));
  PetscFunctionReturn(0);
}

static PetscErrorCode ApplyHsBT(SNESLineSearch ls)
{
  HsBT       *bt = (HsBT *)ls->data;
  SNES        snes;
  Vec         X, F, Y, W, G;
  PetscReal   xnorm, fnorm, ynorm, gnorm = 0, lambda, minlambda, maxstep, stol, f, g = 0, s, r = 1;
  PetscBool   changed, stop, exact;
  PetscViewer mon;

  PetscFunctionBeginUser;
  PetscCheck(!ls->ops->viproject && !ls->ops->vinorm, PetscObjectComm((PetscObject)ls), PETSC_ERR_SUP,
             "line search hsbt does not handle variational inequalities; use -snes_linesearch_type bt");
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(SNESLineSearchGetNorms(ls, &xnorm, &fnorm, &ynorm));
  PetscCall(SNESLineSearchGetLambda(ls, &lambda));
  PetscCall(SNESLineSearchGetSNES(ls, &snes));
  PetscCall(SNESLineSearchGetDefaultMonitor(ls, &mon));
  PetscCall(SNESLineSearchGetTolerances(ls, &minlambda, &maxstep, NULL, NULL, NULL, NULL));
  /* the halving below ends at minlambda: a damping of NaN or inf never got there, nor did a SIGTERM end it (issue 38,
     round 22: -snes_linesearch_damping nan ran for ever; the options check refuses it, this any other way) */
  PetscCheck(lambda > 0 && lambda < PETSC_INFINITY && minlambda >= 0 && maxstep > 0, PetscObjectComm((PetscObject)ls),
             PETSC_ERR_ARG_OUTOFRANGE,
             "line search hsbt: the damping %g and the maximum step %g must be positive and finite, the minimum lambda %g "
             "not negative",
             (double)lambda, (double)maxstep, (double)minlambda);
  PetscCall(SNESGetTolerances(snes, NULL, NULL, &stol, NULL, NULL));
  PetscCall(SNESLineSearchPreCheck(ls, X, Y, &changed));
  PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_SUCCEEDED));
  PetscCall(VecNormBegin(Y, NORM_2, &ynorm));
  PetscCall(VecNormBegin(X, NORM_2, &xnorm));
  PetscCall(VecNormEnd(Y, NORM_2, &ynorm));
  PetscCall(VecNormEnd(X, NORM_2, &xnorm));
  if (ynorm == 0) { /* no direction */
    PetscCall(VecCopy(X, W));
    PetscCall(VecCopy(F, G));
    PetscCall(SNESLineSearchSetNorms(ls, xnorm, fnorm, ynorm));
    PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_REDUCT));
    PetscFunctionReturn(0);
  }
  if (ynorm > maxstep) {
    r = maxstep / ynorm;
    PetscCall(VecScale(Y, r));
    ynorm = maxstep;
  }
  f = 0.5 * fnorm * fnorm;
  PetscCall(Slope(ls, snes, fnorm, r, changed, &s, &exact));
  for (;;) { /* the full step, halved while F is not finite there */
    PetscCall(Trial(ls, snes, lambda, &gnorm, &g, &stop));
    if (stop)
      PetscFunctionReturn(0);
    if (!PetscIsInfOrNanReal(g))
      break;
    if (!(lambda > minlambda))
      SNESCheckFunctionNorm(snes, g);
    lambda *= 0.5;
  }
  PetscCall(PetscInfo(snes, "Initial fnorm %14.12e gnorm %14.12e\n", (double)fnorm, (double)gnorm));
  if (mon)
    PetscCall(PetscViewerASCIIPrintf(mon, "    Line search: fnorm %.12e gnorm %.12e at lambda %.3e (slope %s%s)\n", (double)fnorm,
                                     (double)gnorm, (double)lambda, exact ? "-fnorm^2" : "by J Y",
                                     r < 1 ? "; step scaled to the maximum step" : ""));
  if (!(g <= f + lambda * bt->alpha * s)) {
    if (stol * xnorm > ynorm) { /* a tiny step that failed: SNES ends on the step length (as bt) */
      PetscCall(SNESLineSearchSetNorms(ls, xnorm, fnorm, ynorm));
      PetscFunctionReturn(0);
    }
    PetscCall(Backtrack(ls, snes, bt, f, s, &lambda, &gnorm, &g, &stop));
    if (stop)
      PetscFunctionReturn(0);
  }
  PetscCall(Accept(ls, snes, lambda, gnorm, ynorm));
  PetscFunctionReturn(0);
}

/* A failed line search after a factorization in place (HsPCBandSetInPlace: the Jacobian marked factored, its
   values the factors): SNESNEWTONLS would test for a local minimum with a product by the Jacobian (J^T F), which
   is gone. The failure ends the solve here as it would there: on the step length (a tiny step, as SNES), or
   DIVERGED_LINE_SEARCH once -snes_max_fail failures are counted; never DIVERGED_LOCAL_MIN. */
static PetscErrorCode EndFailedSearch(SNESLineSearch ls, SNES snes)
{
  SNESLineSearchReason r;
  PetscReal            xnorm, fnorm, ynorm;

  PetscFunctionBeginUser;
  PetscCall(SNESLineSearchGetReason(ls, &r));
  if (r == SNES_LINESEARCH_SUCCEEDED || snes->reason || !snes->jacobian || snes->jacobian->factortype == MAT_FACTOR_NONE)
    PetscFunctionReturn(0);
  PetscCall(SNESLineSearchGetNorms(ls, &xnorm, &fnorm, &ynorm));
  if (PetscIsInfOrNanReal(fnorm)) /* SNES ends on that before it tests anything */
    PetscFunctionReturn(0);
  if (snes->stol * xnorm > ynorm)
    snes->reason = SNES_CONVERGED_SNORM_RELATIVE;
  else if (snes->numFailures + 1 >= snes->maxFailures)
    snes->numFailures++, snes->reason = SNES_DIVERGED_LINE_SEARCH;
  PetscFunctionReturn(0);
}

static PetscErrorCode SNESLineSearchApply_HsBT(SNESLineSearch ls)
{
  SNES snes;

  PetscFunctionBeginUser;
  PetscCall(ApplyHsBT(ls));
  PetscCall(SNESLineSearchGetSNES(ls, &snes));
  PetscCall(EndFailedSearch(ls, snes));
  PetscFunctionReturn(0);
}

static PetscErrorCode SNESLineSearchView_HsBT(SNESLineSearch ls, PetscViewer viewer)
{
  PetscBool ascii;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  backtracking (hamshoot): %s interpolation, alpha=%g; slope -||F||^2 after an "
                                     "exact direct solve, else from a product with the Jacobian\n",
                                     ls->order == SNES_LINESEARCH_ORDER_QUADRATIC ? "quadratic" : "cubic",
                                     (double)((HsBT *)ls->data)->alpha));
  PetscFunctionReturn(0);
}

static PetscErrorCode SNESLineSearchSetFromOptions_HsBT(SNESLineSearch ls, PetscOptionItems *PetscOptionsObject)
{
  HsBT *bt = (HsBT *)ls->data;

  PetscFunctionBeginUser;
  PetscOptionsHeadBegin(PetscOptionsObject, "SNESLineSearch hsbt options");
  PetscCall(PetscOptionsReal("-snes_linesearch_alpha", "sufficient decrease parameter", "hsbt", bt->alpha, &bt->alpha,
                             NULL));
  PetscOptionsHeadEnd();
  PetscCheck(ls->order == SNES_LINESEARCH_ORDER_QUADRATIC || ls->order == SNES_LINESEARCH_ORDER_CUBIC,
             PetscObjectComm((PetscObject)ls), PETSC_ERR_ARG_OUTOFRANGE,
             "-snes_linesearch_order %" PetscInt_FMT ": line search hsbt interpolates by order 2 or 3", ls->order);
  PetscFunctionReturn(0);
}

static PetscErrorCode SNESLineSearchDestroy_HsBT(SNESLineSearch ls)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(ls->data));
  PetscFunctionReturn(0);
}

/*@ SNESLineSearchCreate_HsBT - the constructor of line search "hsbt" (file head; SNESLineSearchRegister in
    HsInitializePackage). @*/
PetscErrorCode SNESLineSearchCreate_HsBT(SNESLineSearch ls)
{
  HsBT *bt;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&bt));
  bt->alpha                 = 1e-4;
  ls->data                  = bt;
  ls->order                 = SNES_LINESEARCH_ORDER_CUBIC;
  ls->max_its               = 40; /* bt's (PETSc's default for a line search is 1) */
  ls->ops->apply            = SNESLineSearchApply_HsBT;
  ls->ops->view             = SNESLineSearchView_HsBT;
  ls->ops->setfromoptions   = SNESLineSearchSetFromOptions_HsBT;
  ls->ops->destroy          = SNESLineSearchDestroy_HsBT;
  ls->ops->reset            = NULL; /* SNESLineSearchSetType keeps the previous type's */
  ls->ops->setup            = NULL;
  PetscFunctionReturn(0);
}
