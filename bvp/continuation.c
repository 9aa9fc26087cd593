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

#define HS_ARC_CORRECTOR_MAX_IT 8   /* corrector iterations of a pseudo-arclength step */
#define HS_ARC_MAX_GROWTH 16.0 /* the arclength step grows to at most this times the first one */
#define HS_ARC_CORRECTOR_TOL    1e-9 /* its ||F|| <= this max(1, ||X||_inf); the solver then polishes at fixed mu */
#define HS_ARC_MAX_BRANCHES     8    /* branch points whose location is kept (all are counted) */

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
  HsContinuationType type;            /* natural or pseudo-arclength (-hs_continue_type) */
  PetscInt   folds;                   /* folds passed by the last arclength continuation */
  PetscReal  fold;                    /* where the last one was (estimated) */
  PetscInt   branches;                /* branch points passed by it (sign changes of the bordered determinant) */
  PetscReal  branch[HS_ARC_MAX_BRANCHES]; /* where the first ones were (estimated) */
  PetscBool  branch_test;             /* it could test for them (the linear solver is LU by MUMPS) */
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

/*@ HsContinuationSetType - natural-parameter continuation (HS_CONTINUATION_NATURAL, default) or
    pseudo-arclength continuation (HS_CONTINUATION_ARCLENGTH, -hs_continue_type arclength), which
    follows the solution branch through folds where the parameter turns back (see RunStageArclength).
    Collective. @*/
PetscErrorCode HsContinuationSetType(HsContinuation c, HsContinuationType type)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  c->type = type;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetType - the setting of HsContinuationSetType(); folds: the folds the last
    arclength continuation passed, fold: the parameter value of the last one, estimated by the parabola
    through the three points around it (NULL: not wanted). Not collective. @*/
PetscErrorCode HsContinuationGetType(HsContinuation c, HsContinuationType *type, PetscInt *folds, PetscReal *fold)
{
  PetscFunctionBeginUser;
  if (fold)
    *fold = c->fold;
  if (type)
    *type = c->type;
  if (folds)
    *folds = c->folds;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetBranchPoints - the branch points the last arclength continuation passed: their
    number n, where the first min(n, max) of them were (the parameter values at which the determinant
    of the bordered Jacobian, interpolated linearly, changes sign; NULL: not wanted) and whether it
    could test for them (tested: the linear solver is LU by MUMPS, whose determinant it reads).
    Not collective. @*/
PetscErrorCode HsContinuationGetBranchPoints(HsContinuation c, PetscInt *n, PetscInt max, PetscReal where[],
                                             PetscBool *tested)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  if (n)
    *n = c->branches;
  for (PetscInt i = 0; where && i < PetscMin(max, PetscMin(c->branches, HS_ARC_MAX_BRANCHES)); i++)
    where[i] = c->branch[i];
  if (tested)
    *tested = c->branch_test;
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
  {
    static const char *const types[] = {"natural", "arclength"};
    PetscInt                 idx     = c->type;
    HsOptionsCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)c), "-hs_continue_type",
                                  "natural (the parameter moves in steps) or arclength (pseudo-arclength: the branch "
                                  "is followed through folds)",
                                  "HsContinuationSetType", types, 2, &idx, &set));
    if (set)
      HsOptionsCall(HsContinuationSetType(c, (HsContinuationType)idx));
  }
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
  const Stage *t    = &c->stage[k];
  char        *info = c->solver->cont_info, list[200] = "";
  size_t       len  = sizeof c->solver->cont_info, used;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(info, len,
                          "{\"parameter\": \"%s\", \"value\": %.17g, \"target\": %.17g, \"stage\": %" PetscInt_FMT
                          ", \"stages\": %" PetscInt_FMT ", \"reached\": %s, \"type\": \"%s\"",
                          t->name, (double)v, (double)t->target, k, c->nstages, reached ? "true" : "false",
                          c->type == HS_CONTINUATION_ARCLENGTH ? "arclength" : "natural"));
  if (c->type == HS_CONTINUATION_ARCLENGTH) { /* what the branch held so far: folds, branch points */
    for (PetscInt i = 0; i < PetscMin(c->branches, HS_ARC_MAX_BRANCHES); i++) {
      used = strlen(list);
      PetscCall(PetscSNPrintf(list + used, sizeof list - used, "%s%.10g", i ? ", " : "", (double)c->branch[i]));
    }
    used = strlen(info);
    PetscCall(PetscSNPrintf(info + used, len - used,
                            ", \"folds\": %" PetscInt_FMT ", \"branch_points\": %" PetscInt_FMT
                            ", \"branch_points_at\": [%s], \"branch_points_tested\": %s",
                            c->folds, c->branches, list, c->branch_test ? "true" : "false"));
  }
  used = strlen(info);
  PetscCall(PetscSNPrintf(info + used, len - used, "}"));
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

/* ---- pseudo-arclength continuation (-hs_continue_type arclength) ----
 *
 * Natural continuation fixes the parameter mu and solves F(X; mu) = 0; at a fold the branch turns
 * back in mu and there is no solution ahead (the pendulum's reach branch from x0 folds at reach
 * ~0.352). Keller's pseudo-arclength continuation makes mu an unknown and adds one equation,
 *
 *     <t, (X - X_c, mu - mu_c)> = ds,   <(a, alpha), (b, beta)> = a.b / n_X + alpha beta,
 *
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

/* The stage value v for a residual evaluation: the parameter (and the discretization built from it). */
static PetscErrorCode ArcSetValue(HsContinuation c, const Stage *t, PetscReal v)
{
  HsSolver s = c->solver;

  PetscFunctionBeginUser;
  PetscCall(SetStageValue(c, t, v));
  if (t->ip >= 0) { /* B, R, M, V may depend on the parameter: the discretization again */
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

/* The determinant of J from the factors: hsband's (bvp/pcband.c), or MUMPS' (hsdrop's, or ICNTL(33): before the
 * factorization, after = false, it is asked for); after it, *m 2^*e. *known = PETSC_FALSE if ksp's
 * preconditioner is neither (another solver: no determinant, no branch-point test). */
static PetscErrorCode ArcDeterminant(KSP ksp, PetscBool after, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PC  pc;
  Mat F;

  PetscFunctionBeginUser;
  *known = PETSC_FALSE;
  PetscCall(KSPGetPC(ksp, &pc));
  if (after)
    PetscCall(HsPCBandGetDeterminant(pc, m, e, known)); /* -pc_type hsband computes it anyway */
  if (*known) {
    PetscCall(PetscInfo(pc, "det J = %.15g 2^%" PetscInt_FMT " (hsband)\n", (double)*m, *e));
    PetscFunctionReturn(0);
  }
  {
    PC inner; /* -pc_type hsdrop: its LU's determinant, asked for always (that of J less its dropped entries) */
    PetscCall(HsPCDropGetInner(pc, &inner));
    if (inner && !after)
      PetscFunctionReturn(0);
    if (inner)
      pc = inner;
  }
  PetscCall(HsPCGetMumpsFactor(pc, &F));
  if (!F)
    PetscFunctionReturn(0);
  if (!after) {
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
#endif
    PetscFunctionReturn(0);
  }
  PetscCall(HsMumpsDeterminant(F, m, e, known));
  if (*known)
    PetscCall(PetscInfo(pc, "det J = %.15g 2^%" PetscInt_FMT " (MUMPS)\n", (double)*m, *e));
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
    PetscCall(HsPCBandSetInPlace(pc, PETSC_FALSE));
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
    if (PetscIsInfOrNanReal(dmu))
      break;
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
  PetscCall(SetStageValue(c, t, t->target));
  PetscCall(HsSolverSetIterate(s, Xs));
  PetscCall(StageSolve(c, k, t->target, ds, &r, &stop));
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

/* Whether the arclength stage must stop before a step to v from vc (too_many: its step budget is spent);
 * *ok = PETSC_FALSE with the diagnosis if so. */
static PetscErrorCode ArcOutOfBounds(HsContinuation c, const Stage *t, PetscReal vc, PetscReal v, PetscBool too_many,
                                     PetscBool *ok)
{
  PetscReal dir = t->target >= t->from ? 1 : -1;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE;
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
  nrm = PetscSqrtReal(nrm * nrm / A->nX + 1);
  PetscCall(VecScale(A->tX, dir / nrm));
  A->tmu         = dir / nrm;
  c->branch_test = A->det_known;
  A->tau_known = A->det_known, A->tau_m = dir * A->det_m, A->tau_e = A->det_e, A->tau_v = vc;
  PetscFunctionReturn(0);
}

/* Stage k by pseudo-arclength continuation from (Xc, vc) (converged); Xp, Xs scratch. As RunStage. */
static PetscErrorCode RunStageArclength(HsContinuation c, PetscInt k, PetscReal vc, Vec Xc, Vec Xp, Vec Xs, PetscBool *ok,
                                        PetscBool *stopped)
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
      PetscCall(StageSolve(c, k, v, ds, &r, &stop));
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
                                "arclength continuation in %s stopped at %g: no convergence with a step of 1/%" PetscInt_FMT
                                " of the first one (-hs_continue_max_halvings %" PetscInt_FMT "; %" PetscInt_FMT
                                " folds passed): a branch point or a singular Jacobian here?",
                                t->name, (double)vc, (PetscInt)(ds0 / ds / 2 + 0.5), c->max_halvings, c->folds));
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
  c->reached = PETSC_FALSE, c->diagnosis[0] = 0, c->last_stage = -1, c->folds = 0;
  c->branches = 0, c->branch_test = PETSC_FALSE;
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
    if (c->type == HS_CONTINUATION_ARCLENGTH)
      PetscCall(RunStageArclength(c, k, k == k0 ? v0 : c->stage[k].from, Xc, Xp, Xs, &c->reached, &stop));
    else
      PetscCall(RunStage(c, k, k == k0 ? v0 : c->stage[k].from,
                         k == k0 ? d0 : (c->stage[k].target - c->stage[k].from) / c->stage[k].steps, Xc, Xp, Xs,
                         &c->reached, &stop));
  if (c->reached)
    PetscCall(Mark(c, c->nstages - 1, c->stage[c->nstages - 1].target, PETSC_TRUE));
  else if (!stop) { /* back to the last converged step, so that the solver holds it (file head) */
    PetscInt k = c->last_stage;
    for (PetscInt j = 0; j < c->nstages; j++)
      PetscCall(SetStageValue(c, &c->stage[j], j < k ? c->stage[j].target : j > k ? c->stage[j].from : c->last_value));
    PetscCall(HsSolverSetIterate(s, Xc));
    PetscCall(StageSolve(c, k, c->last_value, 0, &r, &stop));
    if (!stop)
      PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "%s; %s (%s = %g)", c->diagnosis,
                                     r.converged ? "this is the last converged step"
                                                 : "the solve at the last converged step failed this time",
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
