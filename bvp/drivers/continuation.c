/* hamshoot: HsContinuation, natural-parameter continuation (docs/theory.md section 3, initial guesses); the
 * pseudo-arclength stages (-hs_continue_type arclength) are in arclength.c.
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
 * one. A stage stops after HS_CONTINUATION_MAX_SOLVES(K) solves, and every stage once the
 * budget of -hs_strategy_time (HsSolverSetStrategyTime) is spent; the furthest point is reported. NAME is a problem
 * parameter, "reach": the fixed terminal components move from x0 (reach = 0) to xT (reach = 1), x_T(reach) = x0 + reach
 * (xT - x0), or "log_weight": the control weight R is 10^log_weight times the problem's
 * (HsProblemSetControlWeightScale), from A to 0, so that equal steps are geometric in R (a stiff problem with a small R
 * from a larger one). The last solve, at the final targets, is the main solve: the solver then holds its results.
 *
 * Work is kept: with HsContinuationSetOutput (the executable's -o) every converged step is written
 * there as it converges (summary.json's "continuation" says where: parameter, value, target,
 * "reached": false), so an interrupted or killed run leaves the last converged solution. A
 * continuation that stops (a step fails down to the halving limit) returns to its last converged
 * step and solves there once more, so that the solver holds that solution and its results; the
 * driver writes it and exits with status 2.
 */
#include "hsdrivers.h"

#include <string.h>

PetscClassId HS_CONTINUATION_CLASSID;

/*@ HsContinuationCreate - creates a continuation driving the solves of a solver.

  Collective on the solver's communicator.

  Input Parameter:
. s - the solver; its problem must be set (the stages name its parameters)

  Output Parameter:
. c - the continuation: no stages yet, at most HS_CONTINUATION_MAX_HALVINGS_DEFAULT = 6 halvings of a step, no
      monitor

.seealso: HsContinuationDestroy(), HsContinuationAddStage(), HsContinuationSetFromOptions(), HsContinuationSolve()
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

/*@ HsContinuationDestroy - destroys a continuation.

  Collective.

  Input Parameter:
. c - the continuation

  Notes:
  Sets *c = NULL; NULL-safe.

.seealso: HsContinuationCreate()
@*/
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

  Collective.

  Input Parameters:
+ c     - the continuation
. name  - a parameter of the problem, "reach" (0 <= from <= 1: the fixed terminal states x0 + reach (xT - x0)) or
          "log_weight" (R is 10^log_weight times the problem's, target 0; |from| <= HS_LOG_WEIGHT_MAX)
. from  - the start value
- steps - the number of steps, 1 <= steps <= HS_CONTINUATION_STEPS_MAX (1e7; HS_CONTINUATION_STEPS_DEFAULT = 10 in
          -hs_continue_steps)

  Options Database Keys:
+ -hs_continue <NAME[,NAME...]> - the stages' names
. -hs_continue_from <A[,A...]> - their start values
- -hs_continue_steps <K[,K...]> - their steps (one value: the same for all; default 10)

  Notes:
  Every stage's name starts at its `from` value when the continuation starts; the target is the value the problem
  has then (a parameter), 1 (reach) or 0 (log_weight).

.seealso: HsContinuationGetNumStages(), HsContinuationSetFromOptions(), HsContinuationSolve()
@*/
PetscErrorCode HsContinuationAddStage(HsContinuation c, const char *name, PetscReal from, PetscInt steps)
{
  HsProblem *P = c->solver->prob;
  Stage     *t;
  MPI_Comm   comm = PetscObjectComm((PetscObject)c);

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  PetscCheck(steps >= 1 && steps <= HS_CONTINUATION_STEPS_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_continue_steps %" PetscInt_FMT " must lie in [1, %d]", steps, HS_CONTINUATION_STEPS_MAX);
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
  if (!strcmp(name, "log_weight")) {
    t->ip = HS_STAGE_LOG_WEIGHT;
    PetscCheck(PetscAbsReal(from) <= HS_LOG_WEIGHT_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_continue log_weight: -hs_continue_from %g must lie in [-%g, %g] (R times 10^log_weight)",
               (double)from, (double)HS_LOG_WEIGHT_MAX, (double)HS_LOG_WEIGHT_MAX);
  }
  for (int i = 0; i < P->nparams; i++)
    if (!strcmp(P->params[i].name, name))
      t->ip = i;
  PetscCheck(t->ip != -2, comm, PETSC_ERR_ARG_WRONG,
             "-hs_continue %s: '%s' has no parameter of that name (nor is it 'reach' or 'log_weight')", name, P->name);
  PetscCheck(t->ip < 0 || !P->params[t->ip].integer, comm, PETSC_ERR_ARG_WRONG,
             "-hs_continue %s: an integer parameter cannot be continued (%s)", name, P->params[t->ip].help);
  c->nstages++;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetOutput - sets where every converged step of HsContinuationSolve() but the final one is written.

  Collective.

  Input Parameters:
+ c   - the continuation
- dir - the directory; NULL or "": nothing is written (default)

  Notes:
  Converged steps but the final one are written to dir as they converge (HsSolverWriteOutput; summary.json's
  "continuation" names the parameter, its value and target, and "reached": false), so that a run that stops or is
  killed leaves a converged solution there. The rate is bounded: a step is written when at least as long as the
  last write took has passed since it (every step of a continuation whose steps take longer than a write; about
  every other one where writes dominate), so a killed run's output is at most one write interval behind. The final
  solve, and the last converged step of a continuation that stops short, are the caller's to write, always.

.seealso: HsContinuationSolve(), HsSolverWriteOutput()
@*/
PetscErrorCode HsContinuationSetOutput(HsContinuation c, const char dir[])
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  PetscCall(PetscStrncpy(c->out, dir ? dir : "", sizeof c->out));
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetType - chooses natural-parameter or pseudo-arclength continuation.

  Collective.

  Input Parameters:
+ c    - the continuation
- type - HS_CONTINUATION_NATURAL (default) or HS_CONTINUATION_ARCLENGTH, which follows the solution branch through
         folds where the parameter turns back (see RunStageArclength)

  Options Database Key:
. -hs_continue_type <natural|arclength> - the same

.seealso: HsContinuationGetType(), HsContinuationGetBranchPoints(), HsContinuationSolve()
@*/
PetscErrorCode HsContinuationSetType(HsContinuation c, HsContinuationType type)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(c, HS_CONTINUATION_CLASSID, 1);
  c->type = type;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetType - gets the type, and the folds the last arclength continuation passed.

  Not collective.

  Input Parameter:
. c - the continuation

  Output Parameters:
+ type  - the setting of HsContinuationSetType() (NULL: not wanted)
. folds - the folds the last arclength continuation passed (NULL: not wanted)
- fold  - the parameter value of the last one, estimated by the parabola through the three points around it
          (NULL: not wanted)

.seealso: HsContinuationSetType(), HsContinuationGetBranchPoints()
@*/
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

/*@ HsContinuationGetBranchPoints - gets the branch points the last arclength continuation passed.

  Not collective.

  Input Parameters:
+ c   - the continuation
- max - the length of where[]

  Output Parameters:
+ n      - their number (NULL: not wanted)
. where  - where the first min(n, max) of them were: the parameter values at which the determinant of the bordered
           Jacobian, interpolated linearly, changes sign (NULL: not wanted)
- tested - whether it could test for them: the linear solver is LU by MUMPS, whose determinant it reads (NULL: not
           wanted)

.seealso: HsContinuationGetType(), HsContinuationSetType()
@*/
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

/*@ HsContinuationGetNumStages - gets the number of stages.

  Not collective.

  Input Parameter:
. c - the continuation

  Output Parameter:
. n - the number of stages

.seealso: HsContinuationAddStage()
@*/
PetscErrorCode HsContinuationGetNumStages(HsContinuation c, PetscInt *n)
{
  PetscFunctionBeginUser;
  *n = c->nstages;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetMaxHalvings - sets how often a failed step may be halved.

  Collective.

  Input Parameters:
+ c   - the continuation
- max - a failed step is retried with half the step down to 2^-max of the nominal one; max >= 0, default 6

  Options Database Key:
. -hs_continue_max_halvings <max> - the same

.seealso: HsContinuationGetMaxHalvings(), HsContinuationSolve(), HsContinuationGetResult()
@*/
PetscErrorCode HsContinuationSetMaxHalvings(HsContinuation c, PetscInt max)
{
  PetscFunctionBeginUser;
  PetscCheck(max >= 0, PetscObjectComm((PetscObject)c), PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_continue_max_halvings must be >= 0");
  c->max_halvings = max;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetMaxHalvings - gets how often a failed step may be halved.

  Not collective.

  Input Parameter:
. c - the continuation

  Output Parameter:
. max - the -hs_continue_max_halvings limit

.seealso: HsContinuationSetMaxHalvings()
@*/
PetscErrorCode HsContinuationGetMaxHalvings(HsContinuation c, PetscInt *max)
{
  PetscFunctionBeginUser;
  *max = c->max_halvings;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetMonitor - turns on or off one line per continuation step on rank 0.

  Collective.

  Input Parameters:
+ c       - the continuation
- monitor - whether to print the line (default off, on in the executable)

  Options Database Key:
. -hs_continue_monitor <bool> - the same

.seealso: HsContinuationGetMonitor(), HsSolverSetMonitor()
@*/
PetscErrorCode HsContinuationSetMonitor(HsContinuation c, PetscBool monitor)
{
  PetscFunctionBeginUser;
  c->monitor = monitor;
  PetscFunctionReturn(0);
}

/*@ HsContinuationGetMonitor - gets whether the continuation monitor is on.

  Not collective.

  Input Parameter:
. c - the continuation

  Output Parameter:
. monitor - whether the continuation monitor is on

.seealso: HsContinuationSetMonitor()
@*/
PetscErrorCode HsContinuationGetMonitor(HsContinuation c, PetscBool *monitor)
{
  PetscFunctionBeginUser;
  *monitor = c->monitor;
  PetscFunctionReturn(0);
}

/*@ HsContinuationSetOptionsPrefix - sets the prefix of the -hs_continue* keys.

  Collective.

  Input Parameters:
+ c      - the continuation
- prefix - the prefix

.seealso: HsContinuationSetFromOptions(), HsSolverSetOptionsPrefix()
@*/
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
  PetscCall(HsOptionsCheckRealList(PetscOptionsObject->comm, PetscOptionsObject->options, PetscOptionsObject->prefix,
                                   "-hs_continue_from"));
  PetscCall(PetscOptionsRealArray("-hs_continue_from", "start values of the -hs_continue names",
                                  "HsContinuationAddStage", *from, nf, fset));
  PetscCall(HsOptionsCheckIntList(PetscOptionsObject->comm, PetscOptionsObject->options, PetscOptionsObject->prefix,
                                  "-hs_continue_steps"));
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

/*@ HsContinuationSetFromOptions - applies the options database to the continuation.

  Collective.

  Input Parameter:
. c - the continuation

  Options Database Keys:
+ -hs_continue <NAME[,NAME..]> - the stages [HsContinuationAddStage]
. -hs_continue_from <A[,A..]> - their start values [HsContinuationAddStage]
. -hs_continue_steps <K[,K..]> - one K for all, or one per name; default 10 [HsContinuationAddStage]
. -hs_continue_max_halvings <max> - [HsContinuationSetMaxHalvings]
. -hs_continue_type <natural|arclength> - [HsContinuationSetType]
- -hs_continue_monitor <bool> - [HsContinuationSetMonitor]

.seealso: HsContinuationCreate(), HsContinuationSetOptionsPrefix(), HsSolverSetFromOptions()
@*/
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
  HsOptionsCall(PetscOptionsStringArray(
      "-hs_continue",
      "continuation: problem parameters (or reach: the terminal state from x0 to xT; log_weight: "
      "R times 10^log_weight, to 0), moved in turn from -hs_continue_from to their values",
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
  HsOptionsCall(HsOptionsBool(PetscOptionsObject, "-hs_continue_monitor", "one line per continuation step",
                              "HsContinuationSetMonitor", c->monitor, &b, &set));
  if (set)
    HsOptionsCall(HsContinuationSetMonitor(c, b));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

/* Sets stage t's value v (a parameter, or the reach); after a parameter change the problem may
 * recompute xT (problem files), so the current reach is applied again. */
PetscErrorCode HsContinuationSetStageValue(HsContinuation c, const Stage *t, PetscReal v)
{
  HsProblem *P = c->solver->prob;

  PetscFunctionBeginUser;
  if (t->ip >= 0)
    PetscCheck(HsProblemSetParam(P, t->name, (double)v) == 0, PetscObjectComm((PetscObject)c), PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_continue: %s = %g is outside [%g, %g] (%s)%s%s", t->name, (double)v, P->params[t->ip].min,
               P->params[t->ip].max, P->params[t->ip].help, P->why[0] ? ": " : "", P->why);
  else if (t->ip == HS_STAGE_LOG_WEIGHT)
    HsProblemSetControlWeightScale(P, PetscPowReal(10, v));
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
      t->target      = t->ip >= 0                     ? *P->params[t->ip].value
                       : t->ip == HS_STAGE_LOG_WEIGHT ? 0
                                                      : 1,
      t->have_target = PETSC_TRUE;
    if (t->ip == -1 && !c->goal) {
      PetscCall(PetscMalloc1(2 * P->n, &c->goal));
      PetscCall(PetscArraycpy(c->goal, P->xT, 2 * P->n));
    }
  }
  for (PetscInt k = 0; k < c->nstages; k++)
    PetscCall(HsContinuationSetStageValue(c, &c->stage[k], c->stage[k].from));
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

/* A converged step's output (HsContinuationSetOutput), at a bounded rate: written when at least as much time as
 * the last write took has passed since it (rank 0's clock, its decision sent to all), so that writing costs at most
 * about half of a continuation of fast steps (10000 steps of 1 ms had taken minutes with an fsync'd write each) and
 * every step of slow ones is kept. The final step is written by the caller, always. */
static PetscErrorCode WriteStep(HsContinuation c)
{
  PetscMPIInt rank;
  int         now = 0;
  PetscReal   t0  = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)c), &rank));
  if (!rank)
    now = t0 - c->write_t >= c->write_s;
  PetscCallMPI(MPI_Bcast(&now, 1, MPI_INT, 0, PetscObjectComm((PetscObject)c)));
  if (!now)
    PetscFunctionReturn(0);
  PetscCall(HsSolverWriteOutput(c->solver, c->out));
  c->write_t = MPI_Wtime(), c->write_s = c->write_t - t0;
  PetscFunctionReturn(0);
}

/* One solve at stage k's value v (step d), with the continuation's state in any checkpoint it writes;
 * *stop if a signal stopped it. */
PetscErrorCode HsContinuationStageSolve(HsContinuation c, PetscInt k, PetscReal v, PetscReal d, HsResults *r, PetscBool *stop)
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
      PetscCall(WriteStep(c));
  }
  PetscFunctionReturn(0);
}

/* Stage k from its start to its target. Xc: the last converged iterate (updated), Xp: the one before,
 * Xs: scratch. *ok = PETSC_FALSE (with the diagnosis) if the step fell below the halving limit. */
static PetscErrorCode RunStage(HsContinuation c, PetscInt k, PetscReal vc, PetscReal d, Vec Xc, Vec Xp, Vec Xs,
                               PetscBool *ok, PetscBool *stopped);

/* The stages of each HsContinuationType: natural here, the others registered by HsInitializePackage
 * (HsContinuationRegisterStage; arclength.c). */
static HsContinuationStageFn hs_stage[] = {RunStage, NULL};

/*@ HsContinuationRegisterStage - fn runs the stages of continuation type type (bvp/ internal: HsInitializePackage
    registers the pseudo-arclength stage of arclength.c). Not collective. @*/
PetscErrorCode HsContinuationRegisterStage(HsContinuationType type, HsContinuationStageFn fn)
{
  PetscFunctionBeginUser;
  PetscCheck(type >= 0 && type < (PetscInt)(sizeof hs_stage / sizeof hs_stage[0]), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "HsContinuationRegisterStage: no continuation type %d", (int)type);
  hs_stage[type] = fn;
  PetscFunctionReturn(0);
}

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
  PetscInt  solves = 0;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE, *stopped = PETSC_FALSE;
  while (d0 != 0) {
    PetscBool last = (PetscBool)(d0 > 0 ? vc + d >= t->target - 1e-12 * PetscAbsReal(d0)
                                        : vc + d <= t->target + 1e-12 * PetscAbsReal(d0));
    PetscReal v    = last ? t->target : vc + d;
    PetscCall(HsSolverBudgetSpent(s, &stop));
    if (stop || solves++ >= HS_CONTINUATION_MAX_SOLVES(t->steps)) { /* bounded work */
      PetscCall(PetscSNPrintf(
          c->diagnosis, sizeof c->diagnosis, "continuation in %s stopped at %g on its way to %g: %s", t->name,
          (double)vc, (double)t->target, stop ? "-hs_strategy_time spent" : "HS_CONTINUATION_MAX_SOLVES solves made"));
      *ok = PETSC_FALSE;
      break;
    }
    PetscCall(HsContinuationSetStageValue(c, t, v));
    /* predictor: the secant through the last two solutions of this stage, else the last one */
    PetscCall(VecCopy(Xc, Xs));
    if (have_prev) {
      PetscCall(VecAXPY(Xs, (v - vc) / (vc - vp), Xc));
      PetscCall(VecAXPY(Xs, -(v - vc) / (vc - vp), Xp));
    }
    PetscCall(HsSolverSetIterate(s, Xs));
    PetscCall(HsContinuationStageSolve(c, k, v, d, &r, &stop));
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
    PetscCall(HsSolverStopIfInterrupted(s, "a failed step of the continuation", &stop));
    if (stop) {
      *ok = PETSC_FALSE, *stopped = PETSC_TRUE;
      break;
    }
    /* also when half the step no longer changes the value (vc + d/2 == vc, d/2 == 0): with a large
       -hs_continue_max_halvings the step had reached 0 and been retried for ever */
    if (vc + d / 2 == vc || PetscAbsReal(d) / 2 < PetscAbsReal(d0) * PetscPowRealInt(0.5, c->max_halvings)) {
      PetscCall(PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                              "continuation in %s stopped at %g: no convergence at %g with a step of 1/%.3g"
                              " of the nominal one (%s; -hs_continue_max_halvings %" PetscInt_FMT
                              "): the solution branch may turn back (a fold) here; use another path or start value",
                              t->name, (double)vc, (double)v, (double)(PetscAbsReal(d0) / PetscAbsReal(d)), r.status,
                              c->max_halvings));
      *ok = PETSC_FALSE;
      break;
    }
    PetscCall(HsSolverSetIterate(s, Xc));
    d /= 2;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode RunStages(HsContinuation c);

/*@ HsContinuationSolve - runs the continuation (file head).

  Collective.

  Input Parameter:
. c - the continuation

  Notes:
  Its last solve, at the final targets, is the solver's main solve (HsSolverGetResults, HsSolverView,
  HsSolverWriteOutput then report it). Without stages it is one HsSolverSolve().

  The solver is left with warm starts on. A first solve that does not converge, or a step that fails down to the
  halving limit (possibly a fold), ends the continuation: see HsContinuationGetResult().

.seealso: HsContinuationSetUp(), HsContinuationGetResult(), HsContinuationAddStage(), HsSolverSolve()
@*/
PetscErrorCode HsContinuationSolve(HsContinuation c)
{
  HsSolver  s = c->solver;
  HsResults r;
  PetscBool own;

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
  PetscCall(HsSolverBudgetBegin(s, &own));
  PetscCall(RunStages(c));
  PetscCall(HsSolverBudgetEnd(s, own));
  PetscFunctionReturn(0);
}

/* HsContinuationSolve's stages (from the first, or where a checkpoint says); on a stop, s->reached says where. */
static PetscErrorCode RunStages(HsContinuation c)
{
  HsSolver  s = c->solver;
  HsResults r;
  Vec       X, Xc, Xp, Xs;
  Stage    *t0 = c->stage;
  PetscInt  k0 = 0;
  PetscReal v0 = c->stage[0].from, d0;
  PetscBool stop;

  PetscFunctionBeginUser;
  if (c->resume) { /* -hs_restart: the earlier stages are done, stage k0 resumes at its value */
    k0 = c->resume_stage, v0 = c->resume_value, d0 = c->resume_step, t0 = &c->stage[k0];
    for (PetscInt k = 0; k < k0; k++)
      PetscCall(HsContinuationSetStageValue(c, &c->stage[k], c->stage[k].target));
    PetscCall(HsContinuationSetStageValue(c, t0, v0));
    c->resume = PETSC_FALSE;
  } else
    d0 = (t0->target - t0->from) / t0->steps;
  PetscCall(HsContinuationStageSolve(c, k0, v0, d0, &r, &stop));
  if (stop)
    PetscFunctionReturn(0);
  if (c->monitor)
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)c),
                          "continuation %s = %-10.6g %s after %" PetscInt_FMT " Newton iterations\n", t0->name,
                          (double)v0, r.converged ? "converged" : "NOT converged", r.newton_iterations));
  if (!r.converged) {
    PetscCall(HsSolverBudgetSpent(s, &stop)); /* its fallbacks cut short by the budget: not a hard start */
    stop = (PetscBool)(stop && s->strategy == HS_STRATEGY_AUTO);
    PetscCall(
        PetscSNPrintf(c->diagnosis, sizeof c->diagnosis,
                      stop ? "continuation: the first solve (%s = %g) did not converge (%s) before -hs_strategy_time "
                             "(%g s) was spent in its fallbacks; give it more time (or 0: no budget)"
                           : "continuation: the first solve (%s = %g) did not converge (%s); start closer to an easy "
                             "problem",
                      t0->name, (double)v0, r.status, (double)s->strategy_time));
    PetscCall(PetscSNPrintf(s->reached, sizeof s->reached, "continuation: its first solve (%s = %g) failed", t0->name,
                            (double)v0));
    PetscFunctionReturn(0);
  }
  PetscCall(HsSolverGetIterate(s, &X));
  PetscCall(VecDuplicate(X, &Xc));
  PetscCall(VecDuplicate(X, &Xp));
  PetscCall(VecDuplicate(X, &Xs));
  PetscCall(VecCopy(X, Xc));
  c->reached = PETSC_TRUE;
  for (PetscInt k = k0; k < c->nstages && c->reached; k++)
    PetscCall((*hs_stage[c->type])(c, k, k == k0 ? v0 : c->stage[k].from,
                                   k == k0 ? d0 : (c->stage[k].target - c->stage[k].from) / c->stage[k].steps, Xc, Xp,
                                   Xs, &c->reached, &stop));
  if (c->reached)
    PetscCall(Mark(c, c->nstages - 1, c->stage[c->nstages - 1].target, PETSC_TRUE));
  else if (!stop) { /* back to the last converged step, so that the solver holds it (file head) */
    PetscInt k = c->last_stage;
    PetscCall(PetscSNPrintf(s->reached, sizeof s->reached,
                            "continuation reached %s = %g on its way to %g (stage %" PetscInt_FMT " of %" PetscInt_FMT
                            ")",
                            c->stage[k].name, (double)c->last_value, (double)c->stage[k].target, k + 1, c->nstages));
    for (PetscInt j = 0; j < c->nstages; j++)
      PetscCall(HsContinuationSetStageValue(c, &c->stage[j], j < k ? c->stage[j].target : j > k ? c->stage[j].from : c->last_value));
    PetscCall(HsSolverSetIterate(s, Xc));
    PetscCall(HsContinuationStageSolve(c, k, c->last_value, 0, &r, &stop));
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

/*@ HsContinuationSetUp - resumes a continuation from the solver's checkpoint, if it has one.

  Collective.

  Input Parameter:
. c - the continuation

  Notes:
  Call it after HsSolverSetUp(): if the solver was given a checkpoint written inside a continuation (-hs_restart),
  the continuation resumes at that checkpoint's stage and value with its step (the earlier stages at their
  targets). A checkpoint whose stage does not exist in this continuation is an error.

.seealso: HsSolverSetRestart(), HsContinuationSolve()
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

/*@ HsContinuationGetResult - gets whether the last HsContinuationSolve() reached the final targets.

  Not collective.

  Input Parameter:
. c - the continuation

  Output Parameters:
+ reached   - whether it reached the final targets with a converged solve (the argument may be NULL)
- diagnosis - if not, why; "" if it reached them, or the final solve's own failure shows in HsSolverGetResults
              (the argument may be NULL)

.seealso: HsContinuationSolve(), HsSolverGetResults()
@*/
PetscErrorCode HsContinuationGetResult(HsContinuation c, PetscBool *reached, const char **diagnosis)
{
  PetscFunctionBeginUser;
  if (reached)
    *reached = c->reached;
  if (diagnosis)
    *diagnosis = c->diagnosis;
  PetscFunctionReturn(0);
}
