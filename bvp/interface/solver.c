/* hamshoot: HsSolver lifecycle, type registry, setters and getters (docs/theory.md sections 3 and 5).
 * The options (solveropts.c), set-up and solve (solversolve.c), diagnostics
 * (diagnostics.c), viewing and output (solverview.c, output.c) live beside it;
 * the formulations in impls/. */
#include "hsbvpimpl.h"

#include <stdarg.h>
#include <string.h>

PetscClassId      HS_SOLVER_CLASSID;
PetscLogEvent     HS_NOISE_ESTIMATE;
PetscFunctionList HsSolverList = NULL, HsSolverHookList = NULL;

/*@ HsSolverRegisterHook - registers fn as the driver hook name (HS_HOOK_*, interface/hsbvpimpl.h;
    bvp/ internal: HsInitializePackage registers the drivers' hooks). Not collective. @*/
PetscErrorCode HsSolverRegisterHook(const char name[], PetscVoidFunction fn)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFunctionListAdd(&HsSolverHookList, name, fn));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetHook - the driver hook registered as name, or NULL (bvp/ internal). Not collective. @*/
PetscErrorCode HsSolverGetHook(const char name[], PetscVoidFunction *fn)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFunctionListFind(HsSolverHookList, name, fn));
  PetscFunctionReturn(0);
}

/*@ HsSolverRegister - adds a formulation of the boundary-value problem to the registry.

  Not collective.

  Input Parameters:
+ name   - the type name
- create - the constructor

  Notes:
  HsSolverSetType(s, name) and -hs_bvp_type name then call create(s), which fills s->ops and s->data
  (bvp/interface/hsbvpimpl.h).

.seealso: HsSolverSetType(), HsSolverCreate(), HsInitializePackage()
@*/
PetscErrorCode HsSolverRegister(const char name[], PetscErrorCode (*create)(HsSolver))
{
  PetscFunctionBeginUser;
  PetscCall(HsInitializePackage());
  PetscCall(PetscFunctionListAdd(&HsSolverList, name, create));
  PetscFunctionReturn(0);
}

/*@ HsSolverCreate - creates a solver of the discrete optimality boundary-value problem.

  Collective.

  Input Parameter:
. comm - the MPI communicator

  Output Parameter:
. solver - the new solver

  Notes:
  The new solver has no type yet (transcription unless HsSolverSetType or -hs_bvp_type says otherwise) and the
  documented defaults (hsbvp.h): -hs_scheme conserving, -hs_dg_tol HS_DG_TOL_DEFAULT, -hs_snes_roundoff
  HS_ROUNDOFF_FACTOR_DEFAULT, no monitor, and a SNES with tolerances atol 1e-12, rtol 1e-14, stol 1e-14 and
  50 iterations (HS_SNES_*_DEFAULT; HsSolverSetUp adds hamshoot's convergence test).

.seealso: HsSolverDestroy(), HsSolverSetType(), HsSolverSetProblem(), HsSolverSetFromOptions()
@*/
PetscErrorCode HsSolverCreate(MPI_Comm comm, HsSolver *solver)
{
  HsSolver s;

  PetscFunctionBeginUser;
  PetscValidPointer(solver, 2);
  *solver = NULL;
  PetscCall(HsInitializePackage());
  PetscCall(PetscHeaderCreate(s, HS_SOLVER_CLASSID, "HsSolver", "hamshoot solver", "HsSolver", comm, HsSolverDestroy,
                              HsSolverView));
  s->scheme   = HS_SCHEME_CONSERVING;
  s->dg_tol   = HS_DG_TOL_DEFAULT;
  s->bnd_eps0 = HS_BOUNDS_EPS0, s->bnd_factor = HS_BOUNDS_EPS_FACTOR, s->bnd_eps_min = HS_BOUNDS_EPS_MIN;
  s->bnd_e_now = -1, s->restart_bnd_e = -1;
  s->roundoff       = HS_ROUNDOFF_FACTOR_DEFAULT;
  s->hom_theta      = 1;
  s->mumps_icntl14  = HS_MUMPS_ICNTL14_DEFAULT;
  s->noise_factor   = HS_NOISE_FACTOR_DEFAULT;
  s->polish_max     = HS_POLISH_MAX_DEFAULT;
  s->ext_grids      = HS_EXTRAP_GRIDS_DEFAULT;
  s->iT             = -1;
  s->polish_it      = -1;
  s->in_place       = PETSC_TRUE;
  s->condense       = PETSC_TRUE;
  s->check_boundary = PETSC_TRUE;
  s->noise_vouch    = PETSC_TRUE;
  PetscCall(PetscStrncpy(s->ckpt_dir, HS_CHECKPOINT_DIR_DEFAULT, sizeof s->ckpt_dir));
  s->ckpt_pfd = s->ckpt_hold = s->ckpt_lock = -1;
  PetscCall(SNESCreate(comm, &s->snes));
  PetscCall(SNESSetTolerances(s->snes, HS_SNES_ATOL_DEFAULT, HS_SNES_RTOL_DEFAULT, HS_SNES_STOL_DEFAULT,
                              HS_SNES_MAX_IT_DEFAULT, 10000));
  *solver = s;
  PetscFunctionReturn(0);
}

/*@ HsSolverDestroy - destroys a solver.

  Collective.

  Input Parameter:
. solver - the solver

  Notes:
  Sets *solver = NULL; NULL-safe.

.seealso: HsSolverCreate()
@*/
PetscErrorCode HsSolverDestroy(HsSolver *solver)
{
  HsSolver s;

  PetscFunctionBeginUser;
  if (!solver || !*solver)
    PetscFunctionReturn(0);
  s = *solver;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  if (--((PetscObject)s)->refct > 0) {
    *solver = NULL;
    PetscFunctionReturn(0);
  }
  if (s->ops->destroy)
    PetscCall((*s->ops->destroy)(s));
  HsSolverCloseCheckpointDir(s);
  PetscCall(SNESDestroy(&s->snes));
  PetscCall(VecDestroy(&s->X));
  PetscCall(VecDestroy(&s->F));
  PetscCall(VecDestroy(&s->eval_X)); /* FinalResidual's references (solversolve.c) */
  PetscCall(VecDestroy(&s->eval_F));
  for (int i = 0; i < 3; i++)
    PetscCall(VecDestroy(&s->noise_work[i]));
  PetscCall(VecDestroy(&s->polish_X));
  PetscCall(PetscFree2(s->bnd_sw, s->bnd_at));
  PetscCall(VecDestroy(&s->Xnodes));
  PetscCall(VecDestroy(&s->X0));
  PetscCall(VecDestroy(&s->Xmult));
  PetscCall(VecDestroy(&s->Xmult0));
  PetscCall(MatDestroy(&s->Jac));
  HsDiscDestroy(&s->disc);
  PetscCall(PetscFree2(s->H, s->EW));
  PetscCall(PetscFree(s->U0));
  PetscCall(PetscFree(s->Xext));
  PetscCall(PetscFree(s->guess));
  PetscCall(PetscFree(s->frame_guess));
  PetscCall(PetscFree(s->lower_rows));
  PetscCall(PetscHeaderDestroy(solver));
  PetscFunctionReturn(0);
}

/* "transcription or shooting": the registered names, for messages. */
static PetscErrorCode TypeNames(char *buf, size_t len)
{
  const char **names;
  int          n;

  PetscFunctionBeginUser;
  buf[0] = 0;
  PetscCall(PetscFunctionListGet(HsSolverList, &names, &n)); /* NULL-terminated; n counts the NULL */
  for (int i = 0; names[i]; i++) {
    (void)HsStrAppend(buf, len, i == 0 ? "" : names[i + 1] ? ", " : " or ");
    (void)HsStrAppend(buf, len, names[i]);
  }
  PetscCall(PetscFree(names));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetType - chooses the formulation of the boundary-value problem.

  Collective.

  Input Parameters:
+ s    - the solver
- type - HSSOLVERTRANSCRIPTION ("transcription": one sparse system in all unknowns, docs/theory.md §3) or
         HSSOLVERSHOOTING ("shooting": multiple shooting), or a type added with HsSolverRegister()

  Options Database Key:
. -hs_bvp_type <type> - the same: transcription, shooting, ipopt or a registered type (default transcription)

  Notes:
  Call it before HsSolverSetUp(). Changing the type drops the previous type's settings.

.seealso: HsSolverGetType(), HsSolverRegister(), HsSolverSetFromOptions()
@*/
PetscErrorCode HsSolverSetType(HsSolver s, HsSolverType type)
{
  PetscErrorCode (*create)(HsSolver);
  PetscBool match;
  char      names[256];

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)s, type, &match));
  if (match)
    PetscFunctionReturn(0);
  PetscCheck(!s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetType() after HsSolverSetUp()");
  PetscCall(PetscFunctionListFind(HsSolverList, type, &create));
  if (!create) {
    PetscCall(TypeNames(names, sizeof names));
    SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown -hs_bvp_type '%s' (choose %s)", type,
            names);
  }
  if (s->ops->destroy)
    PetscCall((*s->ops->destroy)(s));
  PetscCall(PetscMemzero(s->ops, sizeof(struct _HsSolverOps)));
  s->data = NULL;
  PetscCall(PetscObjectChangeTypeName((PetscObject)s, type));
  PetscCall((*create)(s));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetType - gets the formulation's name.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. type - the type name (NULL before HsSolverSetType/SetFromOptions/SetUp)

.seealso: HsSolverSetType(), HsSolverRegister()
@*/
PetscErrorCode HsSolverGetType(HsSolver s, HsSolverType *type)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  *type = ((PetscObject)s)->type_name;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetProblem - sets the problem to solve.

  Collective.

  Input Parameters:
+ s    - the solver
- prob - the problem (not copied)

  Notes:
  The problem must outlive the solver, and its parameters may change between solves, as continuation does.
  Call it before HsSolverSetUp().

.seealso: HsSolverGetProblem(), HsSolverSetUp(), HsContinuationCreate()
@*/
PetscErrorCode HsSolverSetProblem(HsSolver s, HsProblem *prob)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(!s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetProblem() after HsSolverSetUp()");
  PetscCheck(prob, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_NULL, "HsSolverSetProblem(): no problem");
  s->prob = prob;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetProblem - gets the problem.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. prob - the problem (NULL if none was set)

.seealso: HsSolverSetProblem()
@*/
PetscErrorCode HsSolverGetProblem(HsSolver s, HsProblem **prob)
{
  PetscFunctionBeginUser;
  *prob = s->prob;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetNumIntervals - sets the number N of uniform time intervals, h = T/N.

  Collective.

  Input Parameters:
+ s - the solver
- N - the number of intervals, N >= 2

  Options Database Keys:
+ -hs_num_intervals <N> - the same
- -N <N> - the same, in the hamshoot executable

  Notes:
  Default: the problem's. Call it before HsSolverSetUp().

.seealso: HsSolverGetNumIntervals(), HsSolverSetUp(), HsSolverConvergenceStudy()
@*/
PetscErrorCode HsSolverSetNumIntervals(HsSolver s, PetscInt N)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(!s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetNumIntervals() after HsSolverSetUp()");
  PetscCheck(N >= 2, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "-N %" PetscInt_FMT ": the number of intervals must be at least 2 (-N, -hs_num_intervals)", N);
  s->N = N;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetNumIntervals - gets the number N of time intervals.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. N - the value set, else the problem's default, else 0

.seealso: HsSolverSetNumIntervals()
@*/
PetscErrorCode HsSolverGetNumIntervals(HsSolver s, PetscInt *N)
{
  PetscFunctionBeginUser;
  *N = s->N ? s->N : (s->prob ? s->prob->N : 0);
  PetscFunctionReturn(0);
}

/*@ HsSolverSetScheme - sets the scheme pair by its kind, docs/theory.md §5.

  Collective.

  Input Parameters:
+ s      - the solver
- scheme - "conserving": the problem's energy-consistent pair (greenspan + conserving_1dof for a 1-DOF
           E = p^2/2m + V(q), gonzalez + conserving otherwise); "direct": midpoint + trapezoidal, the exact KKT
           conditions of a direct transcription; "conserving4": the fourth-order scheme that conserves the maximized
           Hamiltonian (docs/theory.md section 8; the transcription and multiple shooting)

  Options Database Key:
. -hs_scheme <conserving|conserving4|direct> - the same

  Notes:
  Call it before HsSolverSetUp(). Clears state and costate schemes set by HsSolverSetSchemes().

.seealso: HsSolverGetScheme(), HsSolverSetSchemes(), HsSolverGetSchemes()
@*/
PetscErrorCode HsSolverSetScheme(HsSolver s, const char *scheme)
{
  PetscBool cons, direct, cons4;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(!s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetScheme() after HsSolverSetUp()");
  PetscCall(PetscStrcmp(scheme, "conserving", &cons));
  PetscCall(PetscStrcmp(scheme, "direct", &direct));
  PetscCall(PetscStrcmp(scheme, "conserving4", &cons4));
  PetscCheck(cons || direct || cons4, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_UNKNOWN_TYPE,
             "unknown -hs_scheme '%s' (choose conserving, conserving4 or direct)", scheme);
  s->scheme            = cons ? HS_SCHEME_CONSERVING : cons4 ? HS_SCHEME_CONSERVING4 : HS_SCHEME_DIRECT;
  s->state_scheme[0]   = 0;
  s->costate_scheme[0] = 0;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetScheme - gets the kind of the scheme pair.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. scheme - "conserving" or "direct" (the kind set by HsSolverSetScheme); "custom" once HsSolverSetSchemes() chose
           a state or costate scheme explicitly

.seealso: HsSolverSetScheme(), HsSolverGetSchemes()
@*/
PetscErrorCode HsSolverGetScheme(HsSolver s, const char **scheme)
{
  PetscFunctionBeginUser;
  *scheme = (s->state_scheme[0] || s->costate_scheme[0]) ? "custom"
            : s->scheme == HS_SCHEME_CONSERVING          ? "conserving"
            : s->scheme == HS_SCHEME_CONSERVING4         ? "conserving4"
                                                         : "direct";
  PetscFunctionReturn(0);
}

/*@ HsSolverSetSchemes - sets the state scheme and the costate scheme by name, docs/theory.md §2.

  Collective.

  Input Parameters:
+ s              - the solver
. state_scheme   - the state scheme (discrete gradient): midpoint, greenspan or gonzalez; NULL: it keeps
                   following -hs_scheme
- costate_scheme - the costate scheme: conserving, conserving_1dof, trapezoidal or kkt; NULL: it keeps following
                   -hs_scheme

  Options Database Keys:
+ -hs_state_scheme <midpoint|greenspan|gonzalez> - the state scheme (overrides -hs_scheme)
- -hs_costate_scheme <conserving|conserving_1dof|trapezoidal|kkt> - the costate scheme (overrides -hs_scheme)

  Notes:
  Call it before HsSolverSetUp(). Whether the pair suits the problem is checked at set-up.

.seealso: HsSolverGetSchemes(), HsSolverSetScheme(), HsSolverSetDGTolerance()
@*/
PetscErrorCode HsSolverSetSchemes(HsSolver s, const char *state_scheme, const char *costate_scheme)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(!s->setupcalled, comm, PETSC_ERR_ORDER, "HsSolverSetSchemes() after HsSolverSetUp()");
  if (state_scheme) {
    PetscCheck(HsStateSchemeFind(state_scheme), comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown state scheme '%s' (-hs_state_scheme: %s)", state_scheme, HsStateSchemeListNames());
    PetscCall(PetscStrncpy(s->state_scheme, state_scheme, sizeof(s->state_scheme)));
  }
  if (costate_scheme) {
    PetscCheck(HsCostateSchemeFind(costate_scheme), comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown costate scheme '%s' (-hs_costate_scheme: %s)", costate_scheme, HsCostateSchemeListNames());
    PetscCall(PetscStrncpy(s->costate_scheme, costate_scheme, sizeof(s->costate_scheme)));
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverGetSchemes - gets the state and costate scheme names that a solve uses.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameters:
+ state_scheme   - the state scheme (the argument may be NULL)
- costate_scheme - the costate scheme (the argument may be NULL)

  Notes:
  The explicit choices of HsSolverSetSchemes(), else those of -hs_scheme for the problem (NULL if that needs the
  problem and none is set).

.seealso: HsSolverSetSchemes(), HsSolverGetScheme()
@*/
PetscErrorCode HsSolverGetSchemes(HsSolver s, const char **state_scheme, const char **costate_scheme)
{
  const char *ss = NULL, *cs = NULL;
  PetscBool   nlp;

  PetscFunctionBeginUser;
  if (s->scheme == HS_SCHEME_DIRECT && s->prob && s->prob->nc) /* a constrained system: docs/constrained.md */
    ss = "bem", cs = "constrained_kkt";
  else if (s->scheme == HS_SCHEME_DIRECT)
    ss = "midpoint", cs = "trapezoidal";
  else if (s->scheme == HS_SCHEME_CONSERVING4) /* its discretization's helpers (h, G R^{-1} G^T, E, phi) */
    ss = s->prob && s->prob->nc ? "bem" : "gonzalez", cs = s->prob && s->prob->nc ? "constrained" : "conserving";
  else if (s->prob)
    ss = s->prob->default_state_scheme, cs = s->prob->default_costate_scheme;
  if (s->state_scheme[0])
    ss = s->state_scheme;
  /* the direct NLP's costates are its multipliers: the KKT conditions of its state scheme (a constrained system's:
     those of the direct BEM transcription, docs/constrained.md) */
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERIPOPT, &nlp));
  if (nlp && ss)
    cs = s->prob && s->prob->nc ? "constrained_kkt" : strcmp(ss, "midpoint") ? "kkt" : "trapezoidal";
  if (s->costate_scheme[0])
    cs = s->costate_scheme;
  if (state_scheme)
    *state_scheme = ss;
  if (costate_scheme)
    *costate_scheme = cs;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetDirectSolver - chooses who solves a direct problem.

  Collective.

  Input Parameters:
+ s  - the solver
- ds - HS_DIRECT_KKT: Newton on the KKT equations (costate scheme trapezoidal or kkt) in the chosen formulation;
       HS_DIRECT_IPOPT: the direct transcription NLP by IPOPT (the solver becomes of type HSSOLVERIPOPT at set-up if
       its costate scheme is a direct one); HS_DIRECT_DEFAULT, the default: kkt for a solve of its own, IPOPT for
       the direct side of -hs_compare and of -hs_initial_guess direct (kkt there too for a constrained system,
       docs/constrained.md: IPOPT only when asked for)

  Options Database Key:
. -hs_direct_solver <default|kkt|ipopt> - the same

  Notes:
  Call it before set-up.

.seealso: HsSolverGetDirectSolver(), HsSolverSetInitialGuessType(), HsSolverCompare()
@*/
PetscErrorCode HsSolverSetDirectSolver(HsSolver s, HsDirectSolver ds)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(!s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetDirectSolver() after HsSolverSetUp()");
  s->direct_solver = ds;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetDirectSolver - gets who solves a direct problem.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. ds - the setting of HsSolverSetDirectSolver()

.seealso: HsSolverSetDirectSolver()
@*/
PetscErrorCode HsSolverGetDirectSolver(HsSolver s, HsDirectSolver *ds)
{
  PetscFunctionBeginUser;
  *ds = s->direct_solver;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetDGTolerance - sets the relative step below which divided differences use their limit.

  Collective.

  Input Parameters:
+ s   - the solver
- tol - the threshold, 0 <= tol <= HS_DG_TOL_MAX = 1e-3; default HS_DG_TOL_DEFAULT = 1e-6 (costate/hscostate.h)

  Options Database Key:
. -hs_dg_tol <tol> - the same

.seealso: HsSolverGetDGTolerance(), HsSolverSetSchemes()
@*/
PetscErrorCode HsSolverSetDGTolerance(HsSolver s, PetscReal tol)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(tol >= 0 && tol <= HS_DG_TOL_MAX, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %g must lie in [0, %g]: the discrete gradient's fallback below it breaks the conservation of "
             "H^d by about tol^3 (0.9 gave an H^d spread of 0.95 on the pendulum)",
             HsKey(s, "-hs_dg_tol"), (double)tol, (double)HS_DG_TOL_MAX);
  s->dg_tol = tol;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetDGTolerance - gets the divided-difference threshold.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. tol - the divided-difference threshold (-hs_dg_tol)

.seealso: HsSolverSetDGTolerance()
@*/
PetscErrorCode HsSolverGetDGTolerance(HsSolver s, PetscReal *tol)
{
  PetscFunctionBeginUser;
  *tol = s->dg_tol;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetRoundoffFactor - sets the factor c of Newton's stop at the round-off level of the residual.

  Collective.

  Input Parameters:
+ s - the solver
- c - the factor, 0 <= c <= HS_ROUNDOFF_FACTOR_MAX = 1e4; 0 disables; default HS_ROUNDOFF_FACTOR_DEFAULT = 100

  Options Database Key:
. -hs_snes_roundoff <c> - the same

  Notes:
  Newton also stops once ||F|| <= c eps max(1, ||X||_inf) sqrt(n), the round-off level of the residual.

.seealso: HsSolverGetRoundoffFactor(), HsSolverSetNoiseFactor(), HsSolverGetSNES()
@*/
PetscErrorCode HsSolverSetRoundoffFactor(HsSolver s, PetscReal c)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(c >= 0 && c <= HS_ROUNDOFF_FACTOR_MAX, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %g must be in [0, %g]: a larger factor would call a residual far above round-off converged",
             HsKey(s, "-hs_snes_roundoff"), (double)c, (double)HS_ROUNDOFF_FACTOR_MAX);
  s->roundoff = c;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetRoundoffFactor - gets the factor c of Newton's round-off stop.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. c - the factor c of -hs_snes_roundoff

.seealso: HsSolverSetRoundoffFactor()
@*/
PetscErrorCode HsSolverGetRoundoffFactor(HsSolver s, PetscReal *c)
{
  PetscFunctionBeginUser;
  *c = s->roundoff;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetNoiseFactor - sets the factor c of Newton's stop at its noise floor.

  Collective.

  Input Parameters:
+ s - the solver
- c - the factor, 0 <= c <= HS_NOISE_FACTOR_MAX = 1e3; 0 disables the estimate; default HS_NOISE_FACTOR_DEFAULT = 10

  Options Database Key:
. -hs_snes_noise <c> - the same

  Notes:
  Newton stops as converged at its noise floor: once ||F|| <= c nu after a step that did not halve ||F|| or came
  near an earlier estimate, nu the estimated evaluation error of the residual at the iterate
  (bvp/interface/convergence.c).

.seealso: HsSolverGetNoiseFactor(), HsSolverSetRoundoffFactor(), HsSolverGetResults()
@*/
PetscErrorCode HsSolverSetNoiseFactor(HsSolver s, PetscReal c)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(c >= 0 && c <= HS_NOISE_FACTOR_MAX, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %g must be in [0, %g]: a larger factor would call a residual far above its evaluation error "
             "converged",
             HsKey(s, "-hs_snes_noise"), (double)c, (double)HS_NOISE_FACTOR_MAX);
  s->noise_factor = c;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetPolish - sets the largest number of Newton steps of the polish after a stop at the round-off level or
  the noise floor (docs/accuracy.md): Newton goes on while the conserved quantity's violation (H^d balance, or E - W
  for kkt costates) still falls by 10 % a step, and ends at the best iterate.

  Logically collective.

  Input Parameters:
+ s - the solver
- k - the most polish steps, 0 (none) .. HS_POLISH_MAX_LIMIT; default HS_POLISH_MAX_DEFAULT (10)

  Options Database Key:
. -hs_snes_polish <k>

.seealso: HsSolverSetNoiseFactor(), HsSolverGetResults()
@*/
PetscErrorCode HsSolverSetPolish(HsSolver s, PetscInt k)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(k >= 0 && k <= HS_POLISH_MAX_LIMIT, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %" PetscInt_FMT " must be in [0, %d]", HsKey(s, "-hs_snes_polish"), k, HS_POLISH_MAX_LIMIT);
  s->polish_max = k;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetExtrapolateRomberg - whether HsSolverExtrapolate() gives J, the mean of H^d and a free T by Romberg's
    second step: R2 = R1 + (R1 - R0)/(4W - 1), W = 2^p, the h^p and h^(p+2) terms both eliminated from the three
    grids.

  Logically collective.

  Input Parameters:
+ s - the solver
- flg - PETSC_TRUE: Romberg; PETSC_FALSE (default): Richardson's R1 = (W Q_N - Q_{N/2})/(W - 1)

  Options Database Key:
. -hs_extrapolate_romberg <bool>

  Notes:
  Right where the discrete values expand in even powers of h, as for the symmetric conserving schemes (conserving,
  conserving4; docs/accuracy.md measures it): the error is then O(h^(p+4)) instead of O(h^(p+2)), so a much coarser
  N meets a tolerance. The error estimate stays |R1 - R0|/(4W - 1) = |R2 - R1|, the size of the last correction: an
  upper bound of R2's error once asymptotic, not an estimate of it. The states (extrapolated.csv) stay Richardson's.

.seealso: HsSolverExtrapolate(), HsSolverSolveExtrapolated()
@*/
PetscErrorCode HsSolverSetExtrapolateRomberg(HsSolver s, PetscBool flg)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->romberg = flg;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetExtrapolateGrids - the number K of grids of HsSolverExtrapolate() and HsSolverSolveExtrapolated():
    N/2^(K-1), ..., N/2, N.

  Logically collective.

  Input Parameters:
+ s - the solver
- K - 3 (HS_EXTRAP_GRIDS_DEFAULT) to HS_EXTRAP_GRIDS_MAX (5)

  Options Database Key:
. -hs_extrapolate_grids <K>

  Notes:
  With HsSolverSetExtrapolateRomberg() J^d, the mean of H^d and a free T are the Romberg table over all K grids:
  h^p, h^(p+2), ..., h^(p+2K-4) eliminated (symmetric schemes: error O(h^(p+2K-2))), its error estimate the size
  of the table's last correction. Without it the value is Richardson's of the two finest grids whatever K, and its
  error estimate and observed order those of the three finest (K = 3 gives today's results bit for bit); the coarser
  grids then only add observed orders. N must be a multiple of 2^(K-1), with N/2^(K-1) >= 2.

.seealso: HsSolverExtrapolate(), HsSolverSetExtrapolateRomberg()
@*/
PetscErrorCode HsSolverSetExtrapolateGrids(HsSolver s, PetscInt K)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(K >= 3 && K <= HS_EXTRAP_GRIDS_MAX, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %" PetscInt_FMT " must be in [3, %d]", HsKey(s, "-hs_extrapolate_grids"), K, HS_EXTRAP_GRIDS_MAX);
  s->ext_grids = K;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetExtrapolateGrids - the number K of grids of HsSolverExtrapolate() (HsSolverSetExtrapolateGrids()).

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. K - the number of grids

.seealso: HsSolverSetExtrapolateGrids()
@*/
PetscErrorCode HsSolverGetExtrapolateGrids(HsSolver s, PetscInt *K)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  *K = s->ext_grids;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetLinearSolver - chooses the linear solver of the transcription and shooting Newton solves.

  Collective.

  Input Parameters:
+ s  - the solver
- ls - HS_LINEAR_SOLVER_AUTO, HS_LINEAR_SOLVER_BAND, HS_LINEAR_SOLVER_MUMPS, HS_LINEAR_SOLVER_DROP or
       HS_LINEAR_SOLVER_SLAB (HsLinearSolver)

  Options Database Key:
. -hs_linear_solver <auto|band|mumps|drop|slab> - the same

  Notes:
  auto, the default: the banded LU (-pc_type hsband, bvp/petscext/pcband.c) when a node has at most
  HS_BAND_AUTO_MAX_UNKNOWNS = 128 unknowns (n <= 32), a free T's dense row and column by its bordered step
  (bvp/petscext/bandborder.c; before, MUMPS: pendulum N = 1e5, 1 rank, 20.8 s against 7.9 s, bench/README.md); for
  larger nodes (the many-body regime, where the band is wide and the stored blocks mostly negligible) the
  transcription's drop (slab from HS_SLAB_AUTO_MIN_RANKS = 2 ranks), shooting's MUMPS LU; MUMPS LU otherwise. drop
  (transcription only): GMRES on the Jacobian, preconditioned by the LU of its entries above -pc_hsdrop_tol of their
  row's largest (-pc_type hsdrop, bvp/petscext/pcdrop.c). slab (transcription only): drop with that LU done slab
  by slab, each rank's by sequential MUMPS, the interface by cyclic reduction over the ranks (-pc_type hsslab,
  bvp/petscext/pcslab.c). -pc_type and -pc_factor_mat_solver_type override it. Call it before HsSolverSetUp().

.seealso: HsSolverGetLinearSolver(), HsSolverSetInPlace(), HsSolverGetSNES()
@*/
PetscErrorCode HsSolverSetLinearSolver(HsSolver s, HsLinearSolver ls)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->linear_solver = ls;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetInPlace - sets whether the banded LU stores its U factor in the Jacobian's own values.

  Not collective.

  Input Parameters:
+ s   - the solver
- flg - whether the banded LU (-hs_linear_solver band) stores its U factor in the Jacobian's own values as it
        reads them (default on)

  Options Database Key:
. -hs_in_place <bool> - the same

  Notes:
  U's memory (kepler, N = 1e6: 6.7 -> 5.0 GB peak) and its first touch saved, the same factors and solutions to
  the bit. It applies where the formulation fills every value of its Jacobian again at each evaluation (the
  transcription) and nothing reads the Jacobian between its factorization and the next evaluation: Newton with a
  direct solve (-ksp_type preonly), line search hsbt without a pre-check, nothing lagged, no -info, no KSP
  monitor, no -ksp_view_mat, -ksp_view_pmat (or their explicit forms) or -ksp_view_final_residual
  (solversolve.c, SetInPlace). Elsewhere it is off by itself.

.seealso: HsSolverGetInPlace(), HsSolverSetLinearSolver()
@*/
PetscErrorCode HsSolverSetInPlace(HsSolver s, PetscBool flg)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->in_place = flg;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetCondense - sets whether conserving4's transcription eliminates each interval's stage nodes before the
    banded LU.

  Not collective.

  Input Parameters:
+ s   - the solver
- flg - whether -hs_scheme conserving4's transcription on one rank, without constraints, with a fixed T and n <= 2
        (the sizes measured faster than hsband), solves its
        Newton steps by the condensed LU (default on): each interval's two stage nodes (8n unknowns) eliminated by
        the LU of its substeps' 4n x 4n blocks, the band LU of the 4n node unknowns a point that is left, the stage
        nodes recovered after (bvp/impls/order4cond.c)

  Options Database Key:
. -hs_condense <bool> - the same

  Notes:
  Partial pivoting in every block and in the band, but none across them: each solve is checked, and one whose normwise
  backward error exceeds 1e-13 (ill-conditioned blocks, far from a solution on a coarse grid) is solved again by
  hsband, which factors that solver's Jacobians from then on (so is a zero pivot). Where the check holds, the Newton
  steps are hsband's to round-off; its determinant is reported (HsPCGetDeterminant). It replaces hsband where the linear solver is band (-hs_linear_solver auto or band, no -pc_type); false
  keeps hsband and its -pc_hsband_* options. Pendulum, K = 4 grids up to N = 224: 48.4M -> 38.5M instructions
  (bench/README.md, "Fewer instructions"). Call it before HsSolverSetUp().

.seealso: HsSolverGetCondense(), HsSolverSetLinearSolver()
@*/
PetscErrorCode HsSolverSetCondense(HsSolver s, PetscBool flg)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->condense = flg;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetCondense - gets whether conserving4's transcription condenses its stage nodes (HsSolverSetCondense()).

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. flg - the setting

.seealso: HsSolverSetCondense()
@*/
PetscErrorCode HsSolverGetCondense(HsSolver s, PetscBool *flg)
{
  PetscFunctionBeginUser;
  *flg = s->condense;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInPlace - gets whether the banded LU stores its U factor in the Jacobian's own values.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. flg - the setting of HsSolverSetInPlace()

.seealso: HsSolverSetInPlace()
@*/
PetscErrorCode HsSolverGetInPlace(HsSolver s, PetscBool *flg)
{
  PetscFunctionBeginUser;
  *flg = s->in_place;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetLinearSolver - gets the linear solver of the Newton solves.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. ls - the setting of HsSolverSetLinearSolver()

.seealso: HsSolverSetLinearSolver()
@*/
PetscErrorCode HsSolverGetLinearSolver(HsSolver s, HsLinearSolver *ls)
{
  PetscFunctionBeginUser;
  *ls = s->linear_solver;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetNoiseFactor - gets the factor c of Newton's noise-floor stop.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. c - the factor c of -hs_snes_noise

.seealso: HsSolverSetNoiseFactor()
@*/
PetscErrorCode HsSolverGetNoiseFactor(HsSolver s, PetscReal *c)
{
  PetscFunctionBeginUser;
  *c = s->noise_factor;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetMonitor - turns on or off one progress line per Newton iteration on rank 0.

  Collective.

  Input Parameters:
+ s       - the solver
- monitor - whether to print the line: |F|, linear iterations, elapsed time (default off; the hamshoot
            executable turns it on unless -quiet)

  Options Database Keys:
+ -hs_monitor <bool> - the same
- -quiet - the hamshoot executable: no per-iteration progress lines (-hs_monitor false)

  Notes:
  Call it before HsSolverSetUp().

.seealso: HsSolverGetMonitor(), HsContinuationSetMonitor()
@*/
PetscErrorCode HsSolverSetMonitor(HsSolver s, PetscBool monitor)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(!s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetMonitor() after HsSolverSetUp()");
  s->monitor = monitor;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetMonitor - gets whether the progress monitor is on.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. monitor - whether the progress monitor is on

.seealso: HsSolverSetMonitor()
@*/
PetscErrorCode HsSolverGetMonitor(HsSolver s, PetscBool *monitor)
{
  PetscFunctionBeginUser;
  *monitor = s->monitor;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetWarmStart - sets whether later solves start from the previous solution.

  Collective.

  Input Parameters:
+ s    - the solver
- warm - with warm, every solve after the first starts from the previous solution (or from HsSolverSetIterate)
         instead of the initial guess (continuation)

.seealso: HsSolverGetWarmStart(), HsSolverSetIterate(), HsContinuationSolve()
@*/
PetscErrorCode HsSolverSetWarmStart(HsSolver s, PetscBool warm)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->warm = warm;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetWarmStart - gets whether later solves start from the last solution.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. warm - whether later solves start from the last solution

.seealso: HsSolverSetWarmStart()
@*/
PetscErrorCode HsSolverGetWarmStart(HsSolver s, PetscBool *warm)
{
  PetscFunctionBeginUser;
  *warm = s->warm;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetOptionsPrefix - sets the prefix of all options of this solver and its SNES.

  Collective.

  Input Parameters:
+ s      - the solver
- prefix - the prefix: the keys become -<prefix>hs_*, -<prefix>snes_*, ...

  Notes:
  Call it before HsSolverSetFromOptions().

.seealso: HsSolverAppendOptionsPrefix(), HsSolverGetOptionsPrefix(), HsSolverSetFromOptions()
@*/
PetscErrorCode HsSolverSetOptionsPrefix(HsSolver s, const char prefix[])
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)s, prefix));
  PetscCall(SNESSetOptionsPrefix(s->snes, prefix));
  PetscFunctionReturn(0);
}

/*@ HsSolverAppendOptionsPrefix - appends to the options prefix of the solver and its SNES.

  Collective.

  Input Parameters:
+ s      - the solver
- prefix - the text to append

.seealso: HsSolverSetOptionsPrefix(), HsSolverGetOptionsPrefix()
@*/
PetscErrorCode HsSolverAppendOptionsPrefix(HsSolver s, const char prefix[])
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)s, prefix));
  PetscCall(SNESAppendOptionsPrefix(s->snes, prefix));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetOptionsPrefix - gets the options prefix.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. prefix - the options prefix (NULL if none)

.seealso: HsSolverSetOptionsPrefix(), HsSolverAppendOptionsPrefix()
@*/
PetscErrorCode HsSolverGetOptionsPrefix(HsSolver s, const char *prefix[])
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)s, prefix));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetSNES - gets the Newton solver.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. snes - the Newton solver

  Notes:
  After HsSolverSetUp() it carries hamshoot's defaults and the command-line options; change it there (before
  HsSolverSolve) to override both.

.seealso: HsSolverSetUp(), HsSolverSolve(), HsSolverSetLinearSolver()
@*/
PetscErrorCode HsSolverGetSNES(HsSolver s, SNES *snes)
{
  PetscFunctionBeginUser;
  *snes = s->snes;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetDiagnosis - records why the solve fails (bvp/ internal): a message to keep replaces
    any earlier one and stays; otherwise the latest message replaces an earlier one that is not kept.

  Not collective: any rank may call it; HsSolverSolve shares the message of the lowest rank.

  Input: keep - the message stands even if the final residual evaluation succeeds (e.g. a
         sensitivity-growth stop); otherwise the message of the final evaluation is reported, or,
         if that succeeds and the solve failed, the latest failure of a trial point (line search)
         as such.
@*/
PetscErrorCode HsSolverSetDiagnosis(HsSolver s, PetscBool keep, const char *fmt, ...)
{
  va_list ap;

  PetscFunctionBeginUser;
  if (s->res.diagnosis[0] && s->diagnosis_keep && !keep)
    PetscFunctionReturn(0);
  va_start(ap, fmt);
  vsnprintf(s->res.diagnosis, sizeof s->res.diagnosis, fmt, ap);
  va_end(ap);
  s->diagnosis_keep = keep;
  PetscFunctionReturn(0);
}
