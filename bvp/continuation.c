/* hamshoot: HsContinuation, natural-parameter continuation (DESIGN.md section 3, initial guesses).
 *
 *   -hs_continue NAME1[,NAME2,...] -hs_continue_from A1[,A2,...] [-hs_continue_steps K1[,K2,...]]
 *
 * Every NAME starts at its A; stage i then moves NAME_i from A_i to its target
 * B_i (the problem's value when the first solve starts, e.g. set by -p_NAME) in K_i
 * equal steps while the later names stay at their A, each solve warm-started
 * from the last converged one with a secant predictor (linear extrapolation of
 * the last two solutions). A step that does not converge is retried from the
 * last solution with half the step, down to 2^-(-hs_continue_max_halvings) of
 * the nominal step; after a success the step doubles again up to the nominal
 * one. NAME is a problem parameter or "reach": the fixed terminal components
 * move from x0 (reach = 0) to xT (reach = 1), x_T(reach) = x0 + reach (xT - x0).
 * The last solve, at the final targets, is the main solve: the solver then
 * holds its results.
 *
 * Work is kept: with HsContinuationSetOutput (the executable's -o) every converged step is written
 * there as it converges (summary.json's "continuation" says where: parameter, value, target,
 * "reached": false), so an interrupted or killed run leaves the last converged solution. A
 * continuation that stops (a step fails down to the halving limit) returns to its last converged
 * step and solves there once more, so that the solver holds that solution and its results; the
 * driver writes it and exits with status 2.
 */
#include "hsbvpimpl.h"

#include <string.h>

typedef struct {
  char      name[64];
  PetscInt  ip; /* parameter index, -1 for reach */
  PetscReal from, target;
  PetscInt  steps;
  PetscBool have_target; /* target recorded (at the first solve) */
} Stage;

struct _p_HsContinuation {
  PETSCHEADER(int);
  HsSolver   solver;
  Stage     *stage;
  PetscInt   nstages;
  PetscInt   max_halvings;
  PetscBool  monitor;
  PetscReal  reach;   /* current reach (1: the problem's own xT) */
  PetscReal *goal;    /* 2n: the problem's xT when the solve started (for reach) */
  PetscBool  reached; /* the last solve converged at the final targets */
  PetscBool  resume;  /* -hs_restart inside a continuation: start stage resume_stage at resume_value */
  PetscInt   resume_stage;
  PetscReal  resume_value, resume_step;
  char       diagnosis[512];
  char       out[PETSC_MAX_PATH_LEN]; /* HsContinuationSetOutput: every converged step is written here */
  PetscInt   last_stage;              /* where the last converged solve was (stage, value); -1: none yet */
  PetscReal  last_value;
};

/*@ HsContinuationCreate - a continuation driving the solves of a solver.

  Collective on the solver's communicator.

  Input: s - the solver; its problem must be set (the stages name its parameters).
  Output: c - no stages yet, at most HS_CONTINUATION_MAX_HALVINGS_DEFAULT = 6 halvings of a step,
          no monitor.
@*/
PetscErrorCode HsContinuationCreate(HsSolver s, HsContinuation *c)
{
  HsContinuation k;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(s->prob, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "HsContinuationCreate() needs the problem set");
  PetscCall(HsInitializePackage());
  PetscCall(PetscHeaderCreate(k, HS_CONTINUATION_CLASSID, "HsContinuation", "continuation", "HsContinuation",
                              PetscObjectComm((PetscObject)s), HsContinuationDestroy, NULL));
  k->solver       = s;
  k->max_halvings = HS_CONTINUATION_MAX_HALVINGS_DEFAULT;
  k->reach        = 1;
  PetscCall(PetscObjectReference((PetscObject)s));
  *c = k;
  PetscFunctionReturn(0);
}

/*@ HsContinuationDestroy - destroys a continuation and sets *c = NULL; NULL-safe. Collective. @*/
PetscErrorCode HsContinuationDestroy(HsContinuation *c)
{
  PetscFunctionBeginUser;
  if (!c || !*c)
    PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*c, HS_CONTINUATION_CLASSID, 1);
  if (--((PetscObject)(*c))->refct > 0) {
    *c = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(HsSolverDestroy(&(*c)->solver));
  PetscCall(PetscFree((*c)->stage));
  PetscCall(PetscFree((*c)->goal));
  PetscCall(PetscHeaderDestroy(c));
  PetscFunctionReturn(0);
}

/*@ HsContinuationAddStage - appends a stage: name moves from `from` to its target in `steps` equal steps.

  Collective. Every stage's name starts at its `from` value when the continuation starts; the
  target is the value the problem has then (a parameter), or 1 (reach).

  Input: name - a parameter of the problem, or "reach" (0 <= from <= 1: the fixed terminal states
         x0 + reach (xT - x0)); from - the start value; steps >= 1 (HS_CONTINUATION_STEPS_DEFAULT = 10
         in -hs_continue_steps).
@*/
PetscErrorCode HsContinuationAddStage(HsContinuation c, const char *name, PetscReal from, PetscInt steps)
{
  HsProblem *P = c->solver->prob;
  Stage     *t;
  MPI_Comm   comm = PetscObjectComm((PetscObject)c);

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  PetscCheck(steps >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_continue_steps %" PetscInt_FMT " must be >= 1", steps);
  PetscCall(PetscRealloc(sizeof(Stage) * (size_t)(c->nstages + 1), &c->stage));
  t = &c->stage[c->nstages];
  PetscCall(PetscMemzero(t, sizeof *t));
  PetscCall(PetscStrncpy(t->name, name, sizeof t->name));
  t->ip = -2, t->from = from, t->steps = steps;
  if (!strcmp(name, "reach")) {
    t->ip = -1;
    PetscCheck(from >= 0 && from <= 1, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_continue reach: -hs_continue_from %g must lie in [0, 1]", (double)from);
  }
  for (int i = 0; i < P->nparams; i++)
    if (!strcmp(P->params[i].name, name))
      t->ip = i;
  PetscCheck(t->ip > -2, comm, PETSC_ERR_ARG_WRONG, "-hs_continue %s: '%s' has no parameter of that name (nor is it 'reach')",
             name, P->name);
  PetscCheck(t->ip < 0 || !P->params[t->ip].integer, comm, PETSC_ERR_ARG_WRONG,
             "-hs_continue %s: an integer parameter cannot be continued (%s)", name, P->params[t->ip].help);
  c->nstages++;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetOutput - every converged step of HsContinuationSolve() but the final one is
    written to dir as it converges (HsSolverWriteOutput; summary.json's "continuation" names the
    parameter, its value and target, and "reached": false), so that a run that stops or is killed
    leaves its last converged solution there. NULL or "": nothing is written (default). The final
    solve is the caller's to write. Collective. @*/
PetscErrorCode HsContinuationSetOutput(HsContinuation c, const char dir[])
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  PetscCall(PetscStrncpy(c->out, dir ? dir : "", sizeof c->out));
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetNumStages - the number of stages. Not collective. @*/
PetscErrorCode HsContinuationGetNumStages(HsContinuation c, PetscInt *n)
{
  PetscFunctionBeginUser;
  *n = c->nstages;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetMaxHalvings - a failed step is retried with half the step down to 2^-max of the
    nominal one (-hs_continue_max_halvings, >= 0; default 6). Collective. @*/
PetscErrorCode HsContinuationSetMaxHalvings(HsContinuation c, PetscInt max)
{
  PetscFunctionBeginUser;
  PetscCheck(max >= 0, PetscObjectComm((PetscObject)c), PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_continue_max_halvings must be >= 0");
  c->max_halvings = max;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetMaxHalvings - the -hs_continue_max_halvings limit. Not collective. @*/
PetscErrorCode HsContinuationGetMaxHalvings(HsContinuation c, PetscInt *max)
{
  PetscFunctionBeginUser;
  *max = c->max_halvings;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetMonitor - one line per continuation step on rank 0 (-hs_continue_monitor;
    default off, on in the executable). Collective. @*/
PetscErrorCode HsContinuationSetMonitor(HsContinuation c, PetscBool monitor)
{
  PetscFunctionBeginUser;
  c->monitor = monitor;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetMonitor - whether the continuation monitor is on. Not collective. @*/
PetscErrorCode HsContinuationGetMonitor(HsContinuation c, PetscBool *monitor)
{
  PetscFunctionBeginUser;
  *monitor = c->monitor;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetOptionsPrefix - the prefix of the -hs_continue* keys. Collective. @*/
PetscErrorCode HsContinuationSetOptionsPrefix(HsContinuation c, const char prefix[])
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)c, prefix));
  PetscFunctionReturn(0);
}

/* -hs_continue_from and -hs_continue_steps (read, and listed by -help, whether or not -hs_continue
 * is given): *nf, *ns values into the arrays from, steps (allocated here). */
static PetscErrorCode StartsAndSteps(PetscOptionItems *PetscOptionsObject, PetscInt nn, PetscReal **from, PetscInt *nf,
                                     PetscBool *fset, PetscInt **steps, PetscInt *ns, PetscBool *sset)
{
  PetscFunctionBeginUser;
  PetscCall(HsOptionsListLength(PetscOptionsObject->options, PetscOptionsObject->prefix, "-hs_continue_from", nf));
  PetscCall(HsOptionsListLength(PetscOptionsObject->options, PetscOptionsObject->prefix, "-hs_continue_steps", ns));
  *nf = PetscMax(*nf, nn), *ns = PetscMax(*ns, nn);
  PetscCall(PetscCalloc1(*nf + 1, from));
  PetscCall(PetscMalloc1(*ns + 1, steps));
  for (PetscInt k = 0; k <= *ns; k++)
    (*steps)[k] = HS_CONTINUATION_STEPS_DEFAULT;
  PetscCall(PetscOptionsRealArray("-hs_continue_from", "start values of the -hs_continue names",
                                  "HsContinuationAddStage", *from, nf, fset));
  PetscCall(PetscOptionsIntArray("-hs_continue_steps", "steps per name (one value: the same for all; default 10)",
                                 "HsContinuationAddStage", *steps, ns, sset));
  PetscFunctionReturn(0);
}

/* The stages of -hs_continue names[0..nn-1] with their start values and steps. */
static PetscErrorCode AddStages(HsContinuation c, char **names, PetscInt nn, const PetscReal *from, PetscInt nf,
                                PetscBool fset, const PetscInt *steps, PetscInt ns, PetscBool sset)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)c);

  PetscFunctionBeginUser;
  PetscCheck(nn >= 1, comm, PETSC_ERR_ARG_WRONG, "-hs_continue needs a parameter name (or reach)");
  PetscCheck(fset, comm, PETSC_ERR_ARG_WRONG, "-hs_continue needs -hs_continue_from VALUE[,VALUE...]");
  PetscCheck(nf == nn, comm, PETSC_ERR_ARG_WRONG,
             "-hs_continue_from: %" PetscInt_FMT " values for %" PetscInt_FMT " names in -hs_continue", nf, nn);
  PetscCheck(!sset || ns == 1 || ns == nn, comm, PETSC_ERR_ARG_WRONG,
             "-hs_continue_steps: give one value or one per name (%" PetscInt_FMT " names)", nn);
  for (PetscInt k = 0; k < nn; k++)
    PetscCall(HsContinuationAddStage(c, names[k], from[k], steps[sset && ns == nn ? k : 0]));
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetFromOptions - stages from -hs_continue NAME[,NAME..] -hs_continue_from A[,A..]
    [-hs_continue_steps K[,K..]] (one K for all, or one per name; default 10), and
    -hs_continue_max_halvings, -hs_continue_monitor. Collective. @*/
PetscErrorCode HsContinuationSetFromOptions(HsContinuation c)
{
  char     **names = NULL;
  PetscReal *from  = NULL;
  PetscInt  *steps = NULL, nn, nf, ns, m;
  PetscBool  set, fset, sset, b;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)c);
  HsOptionsCall(HsOptionsListLength(PetscOptionsObject->options, PetscOptionsObject->prefix, "-hs_continue", &nn));
  HsOptionsCall(PetscCalloc1(nn + 1, &names));
  HsOptionsCall(PetscOptionsStringArray("-hs_continue",
                                    "continuation: problem parameters (or reach: the terminal state from x0 to xT), "
                                    "moved in turn from -hs_continue_from to their values",
                                    "HsContinuationAddStage", names, &nn, &set));
  HsOptionsCall(StartsAndSteps(PetscOptionsObject, nn, &from, &nf, &fset, &steps, &ns, &sset));
  ierr = set ? AddStages(c, names, nn, from, nf, fset, steps, ns, sset) : 0; /* the lists are freed first */
  for (PetscInt k = 0; k < nn; k++)
    HsOptionsCall(PetscFree(names[k]));
  HsOptionsCall(PetscFree(names));
  HsOptionsCall(PetscFree(from));
  HsOptionsCall(PetscFree(steps));
  HsOptionsCall(ierr);
  HsOptionsCall(HsOptionsInt(PetscOptionsObject, "-hs_continue_max_halvings", "a failed step is retried down to 2^-max of the nominal one",
                            "HsContinuationSetMaxHalvings", c->max_halvings, &m, &set, PETSC_MIN_INT, PETSC_MAX_INT));
  if (set)
    HsOptionsCall(HsContinuationSetMaxHalvings(c, m));
  HsOptionsCall(PetscOptionsBool("-hs_continue_monitor", "one line per continuation step", "HsContinuationSetMonitor",
                             c->monitor, &b, &set));
  if (set)
    HsOptionsCall(HsContinuationSetMonitor(c, b));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

/* Sets stage t's value v (a parameter, or the reach); after a parameter change the problem may
 * recompute xT (problem files), so the current reach is applied again. */
static PetscErrorCode SetStageValue(HsContinuation c, const Stage *t, PetscReal v)
{
  HsProblem *P = c->solver->prob;

  PetscFunctionBeginUser;
  if (t->ip >= 0)
    PetscCheck(HsProblemSetParam(P, t->name, (double)v) == 0, PetscObjectComm((PetscObject)c), PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_continue: %s = %g is outside [%g, %g] (%s)%s%s", t->name, (double)v, P->params[t->ip].min,
               P->params[t->ip].max, P->params[t->ip].help, P->why[0] ? ": " : "", P->why);
  else
    c->reach = v;
  if (c->goal)
    HsProblemBlendTerminal(P, c->goal, c->reach);
  PetscFunctionReturn(0);
}

/* Targets from the problem as it is at the first solve (a later solve, e.g. after a failed one that
 * left a parameter on its way, keeps them); the goal of reach; every name at its start value. */
static PetscErrorCode Start(HsContinuation c)
{
  HsProblem *P = c->solver->prob;

  PetscFunctionBeginUser;
  c->reach = 1;
  for (PetscInt k = 0; k < c->nstages; k++) {
    Stage *t = &c->stage[k];
    if (!t->have_target)
      t->target = t->ip >= 0 ? *P->params[t->ip].value : 1, t->have_target = PETSC_TRUE;
    if (t->ip == -1 && !c->goal) {
      PetscCall(PetscMalloc1(2 * P->n, &c->goal));
      PetscCall(PetscArraycpy(c->goal, P->xT, 2 * P->n));
    }
  }
  for (PetscInt k = 0; k < c->nstages; k++)
    PetscCall(SetStageValue(c, &c->stage[k], c->stage[k].from));
  PetscFunctionReturn(0);
}

/* What summary.json says of the solution the solver holds: stage k, its parameter at v, and whether
 * that is the continuation's end. */
static PetscErrorCode Mark(HsContinuation c, PetscInt k, PetscReal v, PetscBool reached)
{
  const Stage *t = &c->stage[k];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(c->solver->cont_info, sizeof c->solver->cont_info,
                          "{\"parameter\": \"%s\", \"value\": %.17g, \"target\": %.17g, \"stage\": %" PetscInt_FMT
                          ", \"stages\": %" PetscInt_FMT ", \"reached\": %s}",
                          t->name, (double)v, (double)t->target, k, c->nstages, reached ? "true" : "false"));
  PetscFunctionReturn(0);
}

/* One solve at stage k's value v (step d), with the continuation's state in any checkpoint it writes;
 * *stop if a signal stopped it. */
static PetscErrorCode StageSolve(HsContinuation c, PetscInt k, PetscReal v, PetscReal d, HsResults *r, PetscBool *stop)
{
  HsSolver s = c->solver;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(s->ckpt_extra, sizeof s->ckpt_extra, "{\"stage\": %" PetscInt_FMT ", \"value\": %.17g, \"step\": %.17g}",
                          k, (double)v, (double)d));
  PetscCall(HsSolverSolve(s));
  s->ckpt_extra[0] = 0;
  PetscCall(HsSolverGetResults(s, r));
  PetscCall(HsSolverGetInterrupted(s, stop, NULL));
  PetscCall(Mark(c, k, v, PETSC_FALSE));
  if (r->converged && !*stop) {
    c->last_stage = k, c->last_value = v;
    if (c->out[0] && !(k == c->nstages - 1 && v == c->stage[k].target)) /* the final one: the caller's */
      PetscCall(HsSolverWriteOutput(s, c->out));
  }
  PetscFunctionReturn(0);
}

/* Stage k from its start to its target. Xc: the last converged iterate (updated), Xp: the one before,
 * Xs: scratch. *ok = PETSC_FALSE (with the diagnosis) if the step fell below the halving limit. */
static PetscErrorCode RunStage(HsContinuation c, PetscInt k, PetscReal vc, PetscReal d, Vec Xc, Vec Xp, Vec Xs,
                               PetscBool *ok, PetscBool *stopped)
{
  HsSolver  s = c->solver;
  Stage    *t = &c->stage[k];
  PetscReal d0 = (t->target - t->from) / t->steps, vp = 0;
  PetscBool have_prev = PETSC_FALSE, final = (PetscBool)(k == c->nstages - 1), stop;
  HsResults r;
  Vec       X;
  MPI_Comm  comm = PetscObjectComm((PetscObject)c);

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE, *stopped = PETSC_FALSE;
  while (d0 != 0) {
    PetscBool last = (PetscBool)(d0 > 0 ? vc + d >= t->target - 1e-12 * PetscAbsReal(d0)
                                        : vc + d <= t->target + 1e-12 * PetscAbsReal(d0));
    PetscReal v    = last ? t->target : vc + d;
    PetscCall(SetStageValue(c, t, v));
    /* predictor: the secant through the last two solutions of this stage, else the last one */
    PetscCall(VecCopy(Xc, Xs));
    if (have_prev) {
      PetscCall(VecAXPY(Xs, (v - vc) / (vc - vp), Xc));
      PetscCall(VecAXPY(Xs, -(v - vc) / (vc - vp), Xp));
    }
    PetscCall(HsSolverSetIterate(s, Xs));
    PetscCall(StageSolve(c, k, v, d, &r, &stop));
    if (stop) { /* SIGTERM/SIGINT: the checkpoint holds this step */
      *ok = PETSC_FALSE, *stopped = PETSC_TRUE;
      break;
    }
    if (r.converged) {
      if (c->monitor && !(last && final)) /* the final solve is reported by the summary */
        PetscCall(PetscPrintf(comm, "continuation %s = %-10.6g converged after %" PetscInt_FMT " Newton iterations\n",
                              t->name, (double)v, r.newton_iterations));
      PetscCall(VecCopy(Xc, Xp));
      PetscCall(HsSolverGetIterate(s, &X));
      PetscCall(VecCopy(X, Xc));
      if (last)
        break;
      vp = vc, vc = v, have_prev = PETSC_TRUE;
      d = PetscAbsReal(2 * d) < PetscAbsReal(d0) ? 2 * d : d0; /* recover the nominal step */
      continue;
    }
    if (c->monitor)
      PetscCall(PetscPrintf(comm, "continuation %s = %-10.6g NOT converged (%s); retrying with half the step\n", t->name,
                            (double)v, r.status));
    if (PetscAbsReal(d) / 2 < PetscAbsReal(d0) * PetscPowRealInt(0.5, c->max_halvings)) {
      PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                              "continuation in %s stopped at %g: no convergence at %g with a step of 1/%" PetscInt_FMT
                              " of the nominal one (%s; -hs_continue_max_halvings %" PetscInt_FMT
                              "): the solution branch may turn back (a fold) here; use another path or start value",
                              t->name, (double)vc, (double)v, (PetscInt)(PetscAbsReal(d0) / PetscAbsReal(d) + 0.5),
                              r.status, c->max_halvings));
      *ok = PETSC_FALSE;
      break;
    }
    PetscCall(HsSolverSetIterate(s, Xc));
    d /= 2;
  }
  PetscFunctionReturn(0);
}

/*@ HsContinuationSolve - runs the continuation (file head); its last solve, at the final targets,
    is the solver's main solve (HsSolverGetResults, HsSolverView, HsSolverWriteOutput then report it).
    Without stages it is one HsSolverSolve().

  Collective. The solver is left with warm starts on. A first solve that does not converge, or a
  step that fails down to the halving limit (possibly a fold), ends the continuation: see
  HsContinuationGetResult().
@*/
PetscErrorCode HsContinuationSolve(HsContinuation c)
{
  HsSolver  s = c->solver;
  HsResults r;
  Vec       X, Xc, Xp, Xs;
  Stage    *t0 = c->stage;
  PetscInt  k0 = 0;
  PetscReal v0 = c->nstages ? c->stage[0].from : 0, d0;
  PetscBool stop;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  c->reached = PETSC_FALSE, c->diagnosis[0] = 0, c->last_stage = -1;
  s->cont_info[0] = 0;
  if (!c->nstages) {
    PetscCall(HsSolverSolve(s));
    PetscCall(HsSolverGetResults(s, &r));
    c->reached = r.converged;
    PetscFunctionReturn(0);
  }
  PetscCall(Start(c));
  PetscCall(HsSolverSetWarmStart(s, PETSC_TRUE));
  if (c->resume) { /* -hs_restart: the earlier stages are done, stage k0 resumes at its value */
    k0 = c->resume_stage, v0 = c->resume_value, d0 = c->resume_step, t0 = &c->stage[k0];
    for (PetscInt k = 0; k < k0; k++)
      PetscCall(SetStageValue(c, &c->stage[k], c->stage[k].target));
    PetscCall(SetStageValue(c, t0, v0));
    c->resume = PETSC_FALSE;
  } else
    d0 = (t0->target - t0->from) / t0->steps;
  PetscCall(StageSolve(c, k0, v0, d0, &r, &stop));
  if (stop)
    PetscFunctionReturn(0);
  if (c->monitor)
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)c),
                          "continuation %s = %-10.6g %s after %" PetscInt_FMT " Newton iterations\n", t0->name,
                          (double)v0, r.converged ? "converged" : "NOT converged", r.newton_iterations));
  if (!r.converged) {
    PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                            "continuation: the first solve (%s = %g) did not converge (%s); start closer to an easy "
                            "problem",
                            t0->name, (double)v0, r.status));
    PetscFunctionReturn(0);
  }
  PetscCall(HsSolverGetIterate(s, &X));
  PetscCall(VecDuplicate(X, &Xc));
  PetscCall(VecDuplicate(X, &Xp));
  PetscCall(VecDuplicate(X, &Xs));
  PetscCall(VecCopy(X, Xc));
  c->reached = PETSC_TRUE;
  for (PetscInt k = k0; k < c->nstages && c->reached; k++)
    PetscCall(RunStage(c, k, k == k0 ? v0 : c->stage[k].from, k == k0 ? d0 : (c->stage[k].target - c->stage[k].from) / c->stage[k].steps,
                       Xc, Xp, Xs, &c->reached, &stop));
  if (c->reached)
    PetscCall(Mark(c, c->nstages - 1, c->stage[c->nstages - 1].target, PETSC_TRUE));
  else if (!stop) { /* back to the last converged step, so that the solver holds it (file head) */
    PetscInt k = c->last_stage;
    for (PetscInt j = 0; j < c->nstages; j++)
      PetscCall(SetStageValue(c, &c->stage[j], j < k ? c->stage[j].target : j > k ? c->stage[j].from : c->last_value));
    PetscCall(HsSolverSetIterate(s, Xc));
    PetscCall(StageSolve(c, k, c->last_value, 0, &r, &stop));
    if (!stop)
      PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "%s; this is the last converged step (%s = %g)", c->diagnosis,
                                     c->stage[k].name, (double)c->last_value));
  }
  PetscCall(VecDestroy(&Xc));
  PetscCall(VecDestroy(&Xp));
  PetscCall(VecDestroy(&Xs));
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetUp - after HsSolverSetUp(): if the solver was given a checkpoint written inside
    a continuation (-hs_restart), the continuation resumes at that checkpoint's stage and value with
    its step (the earlier stages at their targets). Collective. A checkpoint whose stage does not
    exist in this continuation is an error.
@*/
PetscErrorCode HsContinuationSetUp(HsContinuation c)
{
  PetscBool has;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  PetscCall(HsSolverGetRestartContinuation(c->solver, &c->resume_stage, &c->resume_value, &c->resume_step, &has));
  c->resume = PETSC_FALSE;
  if (!has)
    PetscFunctionReturn(0);
  PetscCheck(c->resume_stage >= 0 && c->resume_stage < c->nstages, PetscObjectComm((PetscObject)c), PETSC_ERR_ARG_INCOMP,
             "-hs_restart: the checkpoint was written in stage %" PetscInt_FMT " of a continuation; this run has %" PetscInt_FMT
             " stages (resume with the same -hs_continue options)",
             c->resume_stage, c->nstages);
  c->resume = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetResult - whether the last HsContinuationSolve() reached the final targets with
    a converged solve, and if not why (diagnosis; "" if it reached them, or the final solve's own
    failure shows in HsSolverGetResults). Not collective. @*/
PetscErrorCode HsContinuationGetResult(HsContinuation c, PetscBool *reached, const char **diagnosis)
{
  PetscFunctionBeginUser;
  if (reached)
    *reached = c->reached;
  if (diagnosis)
    *diagnosis = c->diagnosis;
  PetscFunctionReturn(0);
}
