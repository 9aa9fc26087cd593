/* hamshoot: pseudo-arclength continuation (-hs_continue_type arclength), the stages of an HsContinuation
 * (continuation.c) that pass folds.
 *
 * Natural continuation fixes the parameter mu and solves F(X; mu) = 0; at a fold the branch turns
 * back in mu and there is no solution ahead (the pendulum's reach branch from x0 folds at reach
 * ~0.352). Keller's pseudo-arclength continuation makes mu an unknown and adds one equation,
 *
 *     <t, (X - X_c, mu - mu_c)> = ds,   <(a, alpha), (b, beta)> = a.b / n_X + alpha beta,
 *
 * n_X the larger of X's length and |dX/dmu|^2 at the start (then mu has at least half of the first tangent);
 * t the unit tangent of the branch at the last solution (X_c, mu_c) (at the start: J t_X = -F_mu,
 * t_mu = 1 towards the target; afterwards the unit secant of the last step). The predictor is
 * (X_c, mu_c) + ds t; the corrector is Newton on [F; arclength] by bordering: with J = F_X,
 * J a = -F and J b = -F_mu (one factorization, two solves),
 *     d_mu = -(g + <t_X, a>/n_X) / (<t_X, b>/n_X + t_mu),   d_X = a + d_mu b,
 * g the arclength residual; F_mu is the central difference of the formulation's residual in mu.
 * A fold is passed when t_mu changes sign (reported; HsContinuationGetType counts them). Each
 * accepted point is polished by the solver at fixed mu (a solve like any other: results, output,
 * checkpoint); the stage ends once mu passes its target, with a natural solve at the target from the
 * secant through the last two points. ds starts at |target - from|/steps, doubles after an easy
 * corrector (<= 3 iterations, up to HS_ARC_MAX_GROWTH times the start) and halves after a failure,
 * down to 2^-max_halvings of the start. The stage stops (with the last converged point as the
 * solver's) when a parameter would leave its range, when the branch runs away from the target
 * beyond the start by the whole range (the target's solution is on another branch), or after
 * 20 steps + 100 per nominal step. */
#include "hsdrivers.h"

#define HS_ARC_CORRECTOR_MAX_IT 8   /* corrector iterations of a pseudo-arclength step */
#define HS_ARC_MAX_GROWTH 16.0 /* the arclength step grows to at most this times the first one */
#define HS_ARC_CORRECTOR_TOL    1e-9 /* its ||F|| <= this max(1, ||X||_inf); the solver then polishes at fixed mu */


/* The stage value v for a residual evaluation: the parameter (and the discretization built from it). */
static PetscErrorCode ArcSetValue(HsContinuation c, const Stage *t, PetscReal v)
{
  HsSolver s = c->solver;

  PetscFunctionBeginUser;
  PetscCall(HsContinuationSetStageValue(c, t, v));
  if (t->ip != -1) { /* B, R, M, V may depend on the parameter (R on log_weight): the discretization again */
    PetscCall(HsSolverSetUpDiscretization(s));
    if (s->ops->presolve)
      PetscCall((*s->ops->presolve)(s));
  }
  PetscFunctionReturn(0);
}

typedef struct {
  Vec      *v; /* the six below */
  Vec       F, Fp, a, b, dX, tX;
  PetscReal tmu, nX;
  PetscBool det_known;  /* the last ArcSolves' det J = det_m 2^det_e is known (LU by MUMPS) */
  PetscReal det_m;
  PetscInt  det_e;
  PetscBool tau_known;  /* the branch-point test function at the last accepted point: */
  PetscReal tau_m, tau_v; /* sign(t_mu) det J = tau_m 2^tau_e, at mu = tau_v */
  PetscInt  tau_e;
} Arc;

static PetscReal ArcDot(Arc *A, PetscReal xx, PetscReal ab) { return xx / A->nX + ab; }

/* F(X; v) into F; *dom on a domain error. */
static PetscErrorCode ArcResidual(HsContinuation c, const Stage *t, Vec X, PetscReal v, Vec F, PetscBool *dom)
{
  HsSolver s = c->solver;

  PetscFunctionBeginUser;
  PetscCall(ArcSetValue(c, t, v));
  PetscCall((*s->ops->residual)(s, X, F, dom));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, dom, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)c)));
  PetscFunctionReturn(0);
}

/* The determinant of J from ksp's factorization (HsPCGetDeterminant: hsband's, hsdrop's LU's or a plain MUMPS
 * LU's, asked for before the factorization, after = false, by HsPCRequestDeterminant); after it, *m 2^*e.
 * *known = PETSC_FALSE if the preconditioner cannot tell (no branch-point test then). */
static PetscErrorCode ArcDeterminant(KSP ksp, PetscBool after, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PC pc;

  PetscFunctionBeginUser;
  *known = PETSC_FALSE;
  PetscCall(KSPGetPC(ksp, &pc));
  if (after)
    PetscCall(HsPCGetDeterminant(pc, m, e, known));
  else
    PetscCall(HsPCRequestDeterminant(pc));
  PetscFunctionReturn(0);
}

/* At (X, v): J = F_X factored (A->det_*: its determinant, if known), a = -J^{-1} F (if F != NULL),
 * b = -J^{-1} F_mu. *fail on a domain error or a failed linear solve. */
static PetscErrorCode ArcSolves(HsContinuation c, const Stage *t, Arc *A, Vec X, PetscReal v, Vec F, PetscBool *fail)
{
  HsSolver           s = c->solver;
  KSP                ksp;
  PetscReal          eps = 1e-6 * (1 + PetscAbsReal(v));
  PetscBool          d1, d2;
  KSPConvergedReason kr;

  PetscFunctionBeginUser;
  *fail = PETSC_FALSE;
  PetscCall(ArcResidual(c, t, X, v + eps, A->Fp, &d1));
  PetscCall(ArcResidual(c, t, X, v - eps, A->b, &d2));
  if (d1 || d2) {
    *fail = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  PetscCall(VecAXPY(A->Fp, -1, A->b));
  PetscCall(VecScale(A->Fp, -1 / (2 * eps))); /* -F_mu */
  PetscCall(ArcSetValue(c, t, v));
  PetscCall(SNESComputeJacobian(s->snes, X, s->Jac, s->Jac));
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPSetOperators(ksp, s->Jac, s->Jac));
  {
    PC pc; /* two solves with one factorization: not in place (the Newton solves decide it again, SetInPlace) */
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(HsPCSetInPlace(pc, PETSC_FALSE));
  }
  PetscCall(ArcDeterminant(ksp, PETSC_FALSE, &A->det_m, &A->det_e, &A->det_known));
  PetscCall(KSPSolve(ksp, A->Fp, A->b));
  PetscCall(KSPGetConvergedReason(ksp, &kr));
  A->det_known = PETSC_FALSE;
  if (kr >= 0)
    PetscCall(ArcDeterminant(ksp, PETSC_TRUE, &A->det_m, &A->det_e, &A->det_known));
  if (F && kr >= 0) {
    PetscCall(VecCopy(F, A->Fp));
    PetscCall(VecScale(A->Fp, -1));
    PetscCall(KSPSolve(ksp, A->Fp, A->a));
    PetscCall(KSPGetConvergedReason(ksp, &kr));
  }
  *fail = (PetscBool)(kr < 0);
  PetscFunctionReturn(0);
}

/* Corrector from the predictor (X, *v) on the arclength ds from (Xc, vc): Newton on [F; g] by
 * bordering. *its its iterations; *ok if ||F|| reached tol. */
static PetscErrorCode ArcCorrect(HsContinuation c, const Stage *t, Arc *A, Vec Xc, PetscReal vc, PetscReal ds, Vec X,
                                 PetscReal *v, PetscInt *its, PetscBool *ok)
{
  PetscReal fnorm, xinf, tol;
  PetscBool dom, fail;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE, *its = 0;
  for (PetscInt it = 0; it <= HS_ARC_CORRECTOR_MAX_IT; it++) {
    PetscReal g, ta, tb, dmu;
    PetscCall(ArcResidual(c, t, X, *v, A->F, &dom));
    if (dom)
      break;
    PetscCall(VecNorm(A->F, NORM_2, &fnorm));
    PetscCall(VecNorm(X, NORM_INFINITY, &xinf));
    tol = HS_ARC_CORRECTOR_TOL * PetscMax(1, xinf);
    if (PetscIsInfOrNanReal(fnorm))
      break;
    if (fnorm <= tol) {
      *ok = PETSC_TRUE;
      break;
    }
    if (it == HS_ARC_CORRECTOR_MAX_IT)
      break;
    PetscCall(ArcSolves(c, t, A, X, *v, A->F, &fail));
    if (fail)
      break;
    PetscCall(VecWAXPY(A->dX, -1, Xc, X));
    PetscCall(VecDot(A->tX, A->dX, &g));
    g = ArcDot(A, g, A->tmu * (*v - vc)) - ds;
    PetscCall(VecDot(A->tX, A->a, &ta));
    PetscCall(VecDot(A->tX, A->b, &tb));
    dmu = -(g + ta / A->nX) / (tb / A->nX + A->tmu);
    if (PetscIsInfOrNanReal(dmu) || (t->ip == HS_STAGE_LOG_WEIGHT && PetscAbsReal(*v + dmu) > HS_LOG_WEIGHT_MAX))
      break; /* log_weight: beyond it R would overflow or vanish */
    PetscCall(VecAXPY(X, 1, A->a));
    PetscCall(VecAXPY(X, dmu, A->b));
    *v += dmu, (*its)++;
  }
  PetscFunctionReturn(0);
}

/* The branch-point test at the accepted point (X, v), reached from vc (A->dX = X - Xc): tau =
 * sign(t_mu) det J, with the branch's tangent t along (b, 1) (J b = -F_mu, at X) oriented by the secant.
 * tau is the sign of the bordered Jacobian's determinant det [J, F_mu; t^T]: through a fold it keeps
 * its sign (t_mu and det J change sign together), at a simple branch point it changes (det J alone
 * does). A change is reported, its place interpolated linearly in mu between the two points. */
static PetscErrorCode ArcBranchTest(HsContinuation c, const Stage *t, Arc *A, Vec X, PetscReal vc, PetscReal v)
{
  PetscBool fail;
  PetscReal bd, m, r, at;

  PetscFunctionBeginUser;
  PetscCall(ArcSolves(c, t, A, X, v, NULL, &fail));
  if (fail || !A->det_known) /* the next point is compared with the last known one */
    PetscFunctionReturn(0);
  PetscCall(VecDot(A->b, A->dX, &bd));
  m = (bd / A->nX + (v - vc) >= 0 ? 1 : -1) * A->det_m;
  if (A->tau_known && m * A->tau_m < 0) {
    r  = m / A->tau_m * PetscPowReal(2, (PetscReal)(A->det_e - A->tau_e)); /* < 0: tau_new / tau_old */
    at = A->tau_v + (v - A->tau_v) / (1 - r);
    if (c->branches < HS_ARC_MAX_BRANCHES)
      c->branch[c->branches] = at;
    c->branches++;
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)c),
                          "continuation %s: branch point passed near %s = %.6g (between %.6g and %.6g the determinant "
                          "of the bordered Jacobian changed sign): another branch of solutions crosses this one there\n",
                          t->name, t->name, (double)at, (double)A->tau_v, (double)v));
  }
  A->tau_known = PETSC_TRUE, A->tau_m = m, A->tau_e = A->det_e, A->tau_v = v;
  PetscFunctionReturn(0);
}

/* The arclength stage passed its target between (Xc, *vc) and (X, v) (A->dX = X - Xc): a natural solve at
 * the target from the secant. Xc, *vc: the last converged point afterwards. */
static PetscErrorCode ArcFinish(HsContinuation c, PetscInt k, Arc *A, Vec Xc, PetscReal *vc, PetscReal v, Vec X, Vec Xs,
                                PetscReal ds, PetscBool *ok, PetscBool *stopped)
{
  HsSolver  s = c->solver;
  Stage    *t = &c->stage[k];
  HsResults r;
  PetscBool stop;
  Vec       Y;

  PetscFunctionBeginUser;
  PetscCall(VecCopy(Xc, Xs));
  PetscCall(VecAXPY(Xs, (t->target - *vc) / (v - *vc), A->dX));
  PetscCall(VecCopy(X, Xc));
  *vc = v;
  PetscCall(HsContinuationSetStageValue(c, t, t->target));
  PetscCall(HsSolverSetIterate(s, Xs));
  PetscCall(HsContinuationStageSolve(c, k, t->target, ds, &r, &stop));
  if (stop) {
    *ok = PETSC_FALSE, *stopped = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (r.converged) {
    PetscCall(HsSolverGetIterate(s, &Y));
    PetscCall(VecCopy(Y, Xc));
    if (c->monitor && k < c->nstages - 1)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)c), "continuation %s = %-10.6g converged after %" PetscInt_FMT
                            " Newton iterations\n", t->name, (double)t->target, r.newton_iterations));
  } else {
    PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                            "arclength continuation in %s passed its target %g (at %g) but the solve at the target "
                            "did not converge (%s)",
                            t->name, (double)t->target, (double)*vc, r.status));
    PetscCall(ArcSetValue(c, t, *vc)); /* the last converged point stays the solver's */
    *ok = PETSC_FALSE;
  }
  PetscFunctionReturn(0);
}

/* Whether the arclength stage must stop before a step to v from vc (too_many: its step budget is spent; or the time
 * budget of -hs_strategy_time is);
 * *ok = PETSC_FALSE with the diagnosis if so. */
static PetscErrorCode ArcOutOfBounds(HsContinuation c, const Stage *t, PetscReal vc, PetscReal v, PetscBool too_many,
                                     PetscBool *ok)
{
  PetscReal dir = t->target >= t->from ? 1 : -1;
  PetscBool spent;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE;
  PetscCall(HsSolverBudgetSpent(c->solver, &spent));
  if (spent) {
    PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                            "arclength continuation in %s stopped at %g on its way to %g: -hs_strategy_time spent",
                            t->name, (double)vc, (double)t->target));
    *ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  if (too_many) {
    PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                            "arclength continuation in %s stopped at %g after %" PetscInt_FMT " steps without reaching %g "
                            "(%" PetscInt_FMT " folds passed): the branch may not come back to the target",
                            t->name, (double)vc, (PetscInt)(20 * t->steps + 100), (double)t->target, c->folds));
    *ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  if (t->ip >= 0 && !(v >= c->solver->prob->params[t->ip].min && v <= c->solver->prob->params[t->ip].max)) {
    PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                            "arclength continuation in %s stopped at %g: the branch leaves the parameter's range [%g, %g] "
                            "(%" PetscInt_FMT " folds passed)",
                            t->name, (double)vc, c->solver->prob->params[t->ip].min, c->solver->prob->params[t->ip].max,
                            c->folds));
    *ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  if ((v - t->from) * dir < -PetscAbsReal(t->target - t->from)) {
    PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                            "arclength continuation in %s stopped at %g: after %" PetscInt_FMT " fold%s the branch runs "
                            "away from the target %g, beyond the start %g by the whole range: the solution at the target "
                            "is on another branch (start elsewhere, or continue in another parameter)",
                            t->name, (double)vc, c->folds, c->folds == 1 ? "" : "s", (double)t->target, (double)t->from));
    *ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  PetscFunctionReturn(0);
}

/* The unit tangent at the start (Xc, vc), towards the target (dir): J t_X = -F_mu, t_mu = 1, scaled;
 * the branch-point test function there (t_mu has the sign of dir). */
static PetscErrorCode ArcStart(HsContinuation c, const Stage *t, Arc *A, Vec Xc, PetscReal vc, PetscReal dir)
{
  PetscBool fail;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(ArcSolves(c, t, A, Xc, vc, NULL, &fail));
  PetscCheck(!fail, PetscObjectComm((PetscObject)c), PETSC_ERR_NOT_CONVERGED,
             "-hs_continue_type arclength: no tangent at %s = %g", t->name, (double)vc);
  PetscCall(VecCopy(A->b, A->tX));
  PetscCall(VecNorm(A->tX, NORM_2, &nrm));
  /* the metric's weight of X: at least |dX/dmu|^2, so that mu keeps at least half of the first tangent (the crane in
     natural coordinates, whose multipliers are 1e5: with n_X alone, mu moved 7e-4 per step of 4 and the stage gave up
     after 180 steps at reach 0.12) */
  A->nX = PetscMax(A->nX, nrm * nrm);
  nrm   = PetscSqrtReal(nrm * nrm / A->nX + 1);
  PetscCall(VecScale(A->tX, dir / nrm));
  A->tmu         = dir / nrm;
  c->branch_test = A->det_known;
  A->tau_known = A->det_known, A->tau_m = dir * A->det_m, A->tau_e = A->det_e, A->tau_v = vc;
  PetscFunctionReturn(0);
}

/*@ HsContinuationRunStageArclength - stage k by pseudo-arclength continuation from (Xc, vc) (converged); Xp, Xs
    scratch; as RunStage of continuation.c, whose natural step d it does not use (ds: the head above). bvp/ internal,
    registered by HsInitializePackage (HsContinuationRegisterStage). Collective. @*/
PetscErrorCode HsContinuationRunStageArclength(HsContinuation c, PetscInt k, PetscReal vc, PetscReal d, Vec Xc, Vec Xp, Vec Xs,
                                              PetscBool *ok, PetscBool *stopped)
{
  HsSolver  s = c->solver;
  Stage    *t = &c->stage[k];
  Arc       A;
  PetscReal dir = t->target >= t->from ? 1 : -1, ds0 = PetscAbsReal(t->target - t->from) / t->steps, ds = ds0, nrm;
  PetscReal vprev = vc, hprev = 0; /* the point before (Xc, vc) and the arclength between them */
  PetscInt  steps = 0, max_steps = 20 * t->steps + 100, its;
  PetscBool conv, stop;
  HsResults r;
  Vec       X;
  MPI_Comm  comm = PetscObjectComm((PetscObject)c);

  PetscFunctionBeginUser;
  (void)d;
  *ok = PETSC_TRUE, *stopped = PETSC_FALSE;
  PetscCheck(s->ops->residual, comm, PETSC_ERR_SUP, "-hs_continue_type arclength needs a Newton formulation (transcription or shooting)");
  if (ds0 == 0)
    PetscFunctionReturn(0);
  PetscCall(PetscMemzero(&A, sizeof A));
  PetscCall(VecGetSize(Xc, &its));
  A.nX = (PetscReal)its;
  PetscCall(VecDuplicateVecs(Xc, 6, &A.v));
  A.F = A.v[0], A.Fp = A.v[1], A.a = A.v[2], A.b = A.v[3], A.dX = A.v[4], A.tX = A.v[5];
  PetscCall(ArcStart(c, t, &A, Xc, vc, dir));
  while (PETSC_TRUE) {
    PetscReal v = vc + ds * A.tmu;
    PetscCall(ArcOutOfBounds(c, t, vc, v, ++steps > max_steps, ok));
    if (!*ok)
      break;
    PetscCall(VecWAXPY(Xs, ds, A.tX, Xc)); /* predictor */
    PetscCall(ArcCorrect(c, t, &A, Xc, vc, ds, Xs, &v, &its, &conv));
    if (conv) { /* polish at fixed v: the solver's own solve (results, output, checkpoint) */
      PetscCall(ArcSetValue(c, t, v));
      PetscCall(HsSolverSetIterate(s, Xs));
      PetscCall(HsContinuationStageSolve(c, k, v, ds, &r, &stop));
      if (stop) {
        *ok = PETSC_FALSE, *stopped = PETSC_TRUE;
        break;
      }
      conv = r.converged;
    }
    if (!conv) {
      if (c->monitor)
        PetscCall(PetscPrintf(comm, "continuation %s: arclength step %.3g from %g failed; retrying with half the step\n",
                              t->name, (double)ds, (double)vc));
      ds /= 2;
      if (ds < ds0 * PetscPowRealInt(0.5, c->max_halvings)) {
        PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                                "arclength continuation in %s stopped at %g: no convergence with a step of 1/%.3g"
                                " of the first one (-hs_continue_max_halvings %" PetscInt_FMT "; %" PetscInt_FMT
                                " folds passed): a branch point or a singular Jacobian here?",
                                t->name, (double)vc, (double)(ds0 / ds / 2), c->max_halvings, c->folds));
        *ok = PETSC_FALSE;
        break;
      }
      continue;
    }
    PetscCall(HsSolverGetIterate(s, &X));
    /* the new tangent: the unit secant of this step; a fold if mu turned back */
    PetscCall(VecWAXPY(A.dX, -1, Xc, X));
    PetscCall(VecNorm(A.dX, NORM_2, &nrm));
    nrm = PetscSqrtReal(nrm * nrm / A.nX + (v - vc) * (v - vc));
    if (c->monitor)
      PetscCall(PetscPrintf(comm, "continuation %s = %-10.6g converged (arclength step %.3g, %" PetscInt_FMT
                            " corrector + %" PetscInt_FMT " Newton iterations)\n",
                            t->name, (double)v, (double)ds, its, r.newton_iterations));
    if ((v - vc) * A.tmu < 0) { /* mu turned back: the fold from the parabola through the last three points */
      PetscReal h1 = hprev, h2 = nrm, f01 = h1 > 0 ? (vc - vprev) / h1 : 0, f12 = (v - vc) / h2, a2 = (f12 - f01) / (h1 + h2);
      PetscReal sf = a2 != 0 ? (h1 - f01 / a2) / 2 : 0, fold = a2 != 0 && h1 > 0 ? vprev + f01 * sf + a2 * sf * (sf - h1) : vc;
      fold = A.tmu > 0 ? PetscMax(fold, PetscMax(vc, v)) : PetscMin(fold, PetscMin(vc, v)); /* at least as far as seen */
      c->folds++, c->fold = fold;
      PetscCall(PetscPrintf(comm, "continuation %s: fold passed: the branch turns back at %s = %.6g (parabola through the "
                            "last three points, at least the farthest point seen)\n",
                            t->name, t->name, (double)fold));
    }
    if (c->branch_test)
      PetscCall(ArcBranchTest(c, t, &A, X, vc, v));
    PetscCall(VecCopy(A.dX, A.tX));
    PetscCall(VecScale(A.tX, 1 / nrm));
    A.tmu  = (v - vc) / nrm;
    hprev  = nrm;
    if ((v - t->target) * dir >= 0) { /* passed the target: a natural solve there from the secant */
      PetscCall(ArcFinish(c, k, &A, Xc, &vc, v, X, Xs, ds, ok, stopped));
      break;
    }
    PetscCall(VecCopy(Xc, Xp));
    PetscCall(VecCopy(X, Xc));
    vprev = vc, vc = v;
    if (its <= 3)
      ds = PetscMin(2 * ds, HS_ARC_MAX_GROWTH * ds0);
  }
  PetscCall(VecDestroyVecs(6, &A.v));
  PetscFunctionReturn(0);
}

