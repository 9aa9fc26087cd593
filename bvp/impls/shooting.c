/* hamshoot: the multiple-shooting formulation (HSSOLVERSHOOTING; docs/theory.md
 * section 3, "Multiple shooting"): its settings and their options, set-up,
 * initial guess and view. The residual, the Jacobian and the matrix-free
 * operator are in shootingjac.c; the serial march in costate/march.c.
 *
 * Linear solvers of the outer system (-hs_shoot_ksp): direct, a MUMPS LU of
 * the whole block-banded matrix; rankblock, GMRES preconditioned by an exact
 * LU of each rank's contiguous block of segments: the blocks are coupled only
 * across the P-1 rank boundaries, through 2 dim unknowns each, so the
 * preconditioned operator is I + (rank <= 2 dim (P-1)) and GMRES converges in
 * at most 2 dim (P-1) + 1 iterations, whatever M and N. -hs_shoot_mf applies the
 * exact Jacobian matrix-free (no global matrix), with unpreconditioned GMRES.
 */
#include "constrainedimpl.h"
#include "order4impl.h"
#include "shootimpl.h"

static PetscBool hs_shoot_events = PETSC_FALSE;

static PetscErrorCode FinalizeEvents(void)
{
  PetscFunctionBeginUser;
  hs_shoot_events = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* -log_view: HsShootMarch (marches of residual evaluations), HsShootSens (marches with
 * sensitivities, for the Jacobian), HsShootAssembly (the outer Jacobian's blocks). */
static PetscErrorCode RegisterEvents(void)
{
  PetscFunctionBeginUser;
  if (hs_shoot_events)
    PetscFunctionReturn(0);
  PetscCall(PetscLogEventRegister("HsShootMarch", HS_SOLVER_CLASSID, &HS_SHOOT_MARCH));
  PetscCall(PetscLogEventRegister("HsShootSens", HS_SOLVER_CLASSID, &HS_SHOOT_SENS));
  PetscCall(PetscLogEventRegister("HsShootAssembly", HS_SOLVER_CLASSID, &HS_SHOOT_ASSEMBLY));
  PetscCall(PetscRegisterFinalize(FinalizeEvents));
  hs_shoot_events = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The shooting data of s, or an error naming the caller if s is not a shooting solver. */
static PetscErrorCode ShootData(HsSolver s, const char *caller, PetscBool before_setup, HsShoot **sh)
{
  PetscBool   match;
  const char *type = ((PetscObject)s)->type_name;

  PetscFunctionBeginUser;
  *sh = NULL;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERSHOOTING, &match));
  PetscCheck(match, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONGSTATE,
             "%s() needs a shooting solver (HsSolverSetType(s, HSSOLVERSHOOTING) or -hs_bvp_type shooting); this one "
             "is %s",
             caller, type ? type : "of no type yet");
  PetscCheck(!before_setup || !s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "%s() after HsSolverSetUp()", caller);
  *sh = s->data;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetNumSegments - sets the number M of shooting segments, an even split k_s = floor(s N/M).

  Collective.

  Input Parameters:
+ s - the solver, of type HSSOLVERSHOOTING
- M - the number of segments, M >= 1 (1: single shooting; M = N: one interval each)

  Options Database Key:
. -hs_shoot_segments <M> - the same (default 1: single shooting)

  Notes:
  M <= N is checked at set-up. Call it before HsSolverSetUp(). Clears knots set by HsSolverShootSetKnots().

.seealso: HsSolverShootGetNumSegments(), HsSolverShootSetKnots(), HsSolverSetNumIntervals(), HsSolverSetUp()
@*/
PetscErrorCode HsSolverShootSetNumSegments(HsSolver s, PetscInt M)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetNumSegments", PETSC_TRUE, &sh));
  PetscCheck(M >= 1, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %" PetscInt_FMT ": need at least 1 segment", HsKey(s, "-hs_shoot_segments"), M);
  sh->M     = M;
  sh->nuser = 0;
  PetscCall(PetscFree(sh->user_knots));
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetNumSegments - gets the number M of shooting segments.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameter:
. M - the number of segments: n + 1 with n interior knots (HsSolverShootSetKnots()), else the number of
      HsSolverShootSetNumSegments()

.seealso: HsSolverShootSetNumSegments(), HsSolverShootSetKnots()
@*/
PetscErrorCode HsSolverShootGetNumSegments(HsSolver s, PetscInt *M)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetNumSegments", PETSC_FALSE, &sh));
  *M = sh->nuser ? sh->nuser + 1 : sh->M;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetKnots - sets an uneven split into segments by its interior knots.

  Collective.

  Input Parameters:
+ s     - the solver, of type HSSOLVERSHOOTING
. n     - the number of interior knots, n + 1 segments; n = 0 returns to the even split
- knots - the interior knots 0 < k_1 < ... < k_n < N (node indices; copied)

  Options Database Key:
. -hs_shoot_knots <k1,k2,...> - the same (overrides -hs_shoot_segments)

  Notes:
  The order and the range are checked at set-up. Call it before HsSolverSetUp().

.seealso: HsSolverShootGetKnots(), HsSolverShootSetNumSegments(), HsSolverSetUp()
@*/
PetscErrorCode HsSolverShootSetKnots(HsSolver s, PetscInt n, const PetscInt knots[])
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetKnots", PETSC_TRUE, &sh));
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_shoot_knots: %" PetscInt_FMT " knots", n);
  PetscCall(PetscFree(sh->user_knots));
  sh->nuser = n;
  if (n) {
    PetscCall(PetscMalloc1(n, &sh->user_knots));
    PetscCall(PetscArraycpy(sh->user_knots, knots, n));
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetKnots - gets the interior knots given to HsSolverShootSetKnots().

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameters:
+ n     - the number of interior knots (0 if none)
- knots - the interior knots (NULL if none)

.seealso: HsSolverShootSetKnots(), HsSolverShootGetNumSegments()
@*/
PetscErrorCode HsSolverShootGetKnots(HsSolver s, PetscInt *n, const PetscInt *knots[])
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetKnots", PETSC_FALSE, &sh));
  *n     = sh->nuser;
  *knots = sh->user_knots;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetLinearSolver - sets the linear solver of the outer system.

  Collective.

  Input Parameters:
+ s    - the solver, of type HSSOLVERSHOOTING
- type - HS_SHOOT_KSP_DIRECT (MUMPS LU of the whole matrix) or HS_SHOOT_KSP_RANKBLOCK (GMRES with an exact LU
         of each rank's block; at most 4n(P-1)+1 iterations per Newton step)

  Options Database Key:
. -hs_shoot_ksp <direct|rankblock> - the same (default direct)

  Notes:
  -ksp_type/-pc_type override it. Call it before HsSolverSetUp().

.seealso: HsSolverShootGetLinearSolver(), HsSolverShootSetMatrixFree(), HsSolverSetUp()
@*/
PetscErrorCode HsSolverShootSetLinearSolver(HsSolver s, HsShootKSPType type)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetLinearSolver", PETSC_TRUE, &sh));
  PetscCheck(type == HS_SHOOT_KSP_DIRECT || type == HS_SHOOT_KSP_RANKBLOCK, PetscObjectComm((PetscObject)s),
             PETSC_ERR_ARG_OUTOFRANGE, "%s: unknown linear solver %d", HsKey(s, "-hs_shoot_ksp"), (int)type);
  sh->ksp = type;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetLinearSolver - gets the linear solver of the outer system.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameter:
. type - HS_SHOOT_KSP_DIRECT or HS_SHOOT_KSP_RANKBLOCK (-hs_shoot_ksp)

.seealso: HsSolverShootSetLinearSolver()
@*/
PetscErrorCode HsSolverShootGetLinearSolver(HsSolver s, HsShootKSPType *type)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetLinearSolver", PETSC_FALSE, &sh));
  *type = sh->ksp;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetInitialGuessType - sets where the segment starts z_s come from without a warm start.

  Collective.

  Input Parameters:
+ s    - the solver, of type HSSOLVERSHOOTING
- type - HS_SHOOT_INIT_LINEAR (the rows of the initial guess, HsSolverGuessRow()) or HS_SHOOT_INIT_TRANSCRIPTION
         (a transcription solve of the same discrete problem, from that guess)

  Options Database Key:
. -hs_shoot_init <linear|transcription> - the same (default linear)

  Notes:
  The transcription solve's SNES takes the options prefix hs_init_. Call it before HsSolverSetUp().

.seealso: HsSolverShootGetInitialGuessType(), HsSolverSetInitialGuess(), HsSolverSetUp()
@*/
PetscErrorCode HsSolverShootSetInitialGuessType(HsSolver s, HsShootInitType type)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetInitialGuessType", PETSC_TRUE, &sh));
  PetscCheck(type == HS_SHOOT_INIT_LINEAR || type == HS_SHOOT_INIT_TRANSCRIPTION, PetscObjectComm((PetscObject)s),
             PETSC_ERR_ARG_OUTOFRANGE, "%s: unknown initial guess type %d", HsKey(s, "-hs_shoot_init"), (int)type);
  sh->init = type;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetInitialGuessType - gets where the segment starts come from without a warm start.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameter:
. type - HS_SHOOT_INIT_LINEAR or HS_SHOOT_INIT_TRANSCRIPTION (the -hs_shoot_init choice)

.seealso: HsSolverShootSetInitialGuessType()
@*/
PetscErrorCode HsSolverShootGetInitialGuessType(HsSolver s, HsShootInitType *type)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetInitialGuessType", PETSC_FALSE, &sh));
  *type = sh->init;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetMatrixFree - sets whether the exact Jacobian is applied matrix-free from the per-segment blocks.

  Collective.

  Input Parameters:
+ s  - the solver, of type HSSOLVERSHOOTING
- mf - PETSC_TRUE: matrix-free, with no global matrix and unpreconditioned GMRES

  Options Database Key:
. -hs_shoot_mf <bool> - the same (default off)

  Notes:
  Call it before HsSolverSetUp().

.seealso: HsSolverShootGetMatrixFree(), HsSolverShootSetLinearSolver(), HsSolverSetUp()
@*/
PetscErrorCode HsSolverShootSetMatrixFree(HsSolver s, PetscBool mf)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetMatrixFree", PETSC_TRUE, &sh));
  sh->mf = mf;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetMatrixFree - gets whether the Jacobian is applied matrix-free.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameter:
. mf - whether the Jacobian is applied matrix-free (-hs_shoot_mf)

.seealso: HsSolverShootSetMatrixFree()
@*/
PetscErrorCode HsSolverShootGetMatrixFree(HsSolver s, PetscBool *mf)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetMatrixFree", PETSC_FALSE, &sh));
  *mf = sh->mf;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetMaxGrowth - sets the largest sensitivity growth within a segment before the solve stops.

  Collective.

  Input Parameters:
+ s      - the solver, of type HSSOLVERSHOOTING
- growth - the limit on a segment's sensitivity growth in the best scaling of the unknowns (the Perron root of
           |d(march)/dz|, docs/shooting.md), > 1

  Options Database Key:
. -hs_shoot_max_growth <growth> - the same (default HS_SHOOT_MAX_GROWTH_DEFAULT = 1e8)

  Notes:
  Beyond it the solve stops with a diagnosis saying how many segments to use (for single-interval segments: how
  fine a grid, or the transcription). The default 1e8 = 1/sqrt(eps): the end data would keep fewer than 8 digits.

.seealso: HsSolverShootGetMaxGrowth(), HsSolverShootSetNumSegments(), HsSolverShootSetKnots()
@*/
PetscErrorCode HsSolverShootSetMaxGrowth(HsSolver s, PetscReal growth)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetMaxGrowth", PETSC_FALSE, &sh));
  PetscCheck(growth > 1, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE, "%s %g must exceed 1",
             HsKey(s, "-hs_shoot_max_growth"), (double)growth);
  sh->max_growth = growth;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetMaxGrowth - gets the limit on the sensitivity growth within a segment.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameter:
. growth - the -hs_shoot_max_growth limit

.seealso: HsSolverShootSetMaxGrowth()
@*/
PetscErrorCode HsSolverShootGetMaxGrowth(HsSolver s, PetscReal *growth)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetMaxGrowth", PETSC_FALSE, &sh));
  *growth = sh->max_growth;
  PetscFunctionReturn(0);
}

/*@ HsSolverShootSetStepTolerances - sets the tolerances of the per-step (local) Newton of the march (costate/march.c).

  Collective.

  Input Parameters:
+ s      - the solver, of type HSSOLVERSHOOTING
. atol   - the residual tolerance, relative to 1+|y|, in (0, 1)
. stol   - the update tolerance, in (0, 1)
- max_it - the iteration limit, at least 1

  Options Database Keys:
+ -hs_step_atol <atol> - the residual tolerance (default HS_MARCH_ATOL_DEFAULT = 1e-14)
. -hs_step_stol <stol> - the update tolerance (default HS_MARCH_STOL_DEFAULT = 1e-12)
- -hs_step_max_it <max_it> - the iteration limit (default HS_MARCH_MAX_IT_DEFAULT = 25)

  Notes:
  PETSC_DEFAULT keeps a value. Call it before HsSolverSetUp().

.seealso: HsSolverShootGetStepTolerances(), HsSolverSetUp()
@*/
PetscErrorCode HsSolverShootSetStepTolerances(HsSolver s, PetscReal atol, PetscReal stol, PetscInt max_it)
{
  HsShoot *sh;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootSetStepTolerances", PETSC_TRUE, &sh));
  if (atol != (PetscReal)PETSC_DEFAULT) {
    PetscCheck(atol > 0 && atol < 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g must lie in (0, 1)",
               HsKey(s, "-hs_step_atol"), (double)atol);
    sh->step_atol = atol;
  }
  if (stol != (PetscReal)PETSC_DEFAULT) {
    PetscCheck(stol > 0 && stol < 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g must lie in (0, 1)",
               HsKey(s, "-hs_step_stol"), (double)stol);
    sh->step_stol = stol;
  }
  if (max_it != PETSC_DEFAULT) {
    PetscCheck(max_it >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %" PetscInt_FMT " must be at least 1",
               HsKey(s, "-hs_step_max_it"), max_it);
    sh->step_max_it = max_it;
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverShootGetStepTolerances - gets the tolerances of the per-step (local) Newton of the march.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERSHOOTING

  Output Parameters:
+ atol   - the residual tolerance (the argument may be NULL)
. stol   - the update tolerance (the argument may be NULL)
- max_it - the iteration limit (the argument may be NULL)

.seealso: HsSolverShootSetStepTolerances()
@*/
PetscErrorCode HsSolverShootGetStepTolerances(HsSolver s, PetscReal *atol, PetscReal *stol, PetscInt *max_it)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(ShootData(s, "HsSolverShootGetStepTolerances", PETSC_FALSE, &sh));
  if (atol)
    *atol = sh->step_atol;
  if (stol)
    *stol = sh->step_stol;
  if (max_it)
    *max_it = sh->step_max_it;
  PetscFunctionReturn(0);
}

/* -hs_shoot_knots k1,k2,...: the list is counted first, so any number of knots is read. */
static PetscErrorCode KnotsOption(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  HsShoot  *sh = s->data;
  PetscInt  n, *k;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsListLength(PetscOptionsObject->options, PetscOptionsObject->prefix, "-hs_shoot_knots", &n));
  n = PetscMax(n, sh->nuser);
  PetscCall(PetscCalloc1(n + 1, &k)); /* the current knots, for -help */
  if (sh->nuser)
    PetscCall(PetscArraycpy(k, sh->user_knots, sh->nuser));
  PetscCall(HsOptionsCheckIntList(PetscOptionsObject->comm, PetscOptionsObject->options, PetscOptionsObject->prefix,
                                  "-hs_shoot_knots"));
  PetscCall(PetscOptionsIntArray("-hs_shoot_knots",
                                 "interior segment knots k_1,...,k_{M-1} (uneven split; overrides -hs_shoot_segments)",
                                 "HsSolverShootSetKnots", k, &n, &flg));
  if (flg)
    PetscCall(HsSolverShootSetKnots(s, n, k));
  PetscCall(PetscFree(k));
  PetscFunctionReturn(0);
}

/* -hs_shoot_ksp, -hs_shoot_init, -hs_shoot_mf, -hs_shoot_max_growth */
static PetscErrorCode SolverOptions(PetscOptionItems *PetscOptionsObject, HsSolver s, HsShoot *sh)
{
  static const char *const ksps[] = {"direct", "rankblock"}, *const inits[] = {"linear", "transcription"};
  PetscInt                 k = sh->ksp, ini = sh->init;
  PetscReal                g;
  PetscBool                flg, b;
  MPI_Comm                 comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(HsOptionsChoice(
      PetscOptionsObject, comm, "-hs_shoot_ksp",
      "shooting linear solver: direct (MUMPS LU of the whole matrix) or rankblock (GMRES, exact LU per rank)",
      "HsSolverShootSetLinearSolver", ksps, 2, &k, &flg));
  if (flg)
    PetscCall(HsSolverShootSetLinearSolver(s, (HsShootKSPType)k));
  PetscCall(HsOptionsChoice(PetscOptionsObject, comm, "-hs_shoot_init",
                            "shooting initial guess: linear (the rows of the initial guess) or transcription",
                            "HsSolverShootSetInitialGuessType", inits, 2, &ini, &flg));
  if (flg)
    PetscCall(HsSolverShootSetInitialGuessType(s, (HsShootInitType)ini));
  PetscCall(HsOptionsBool(PetscOptionsObject, "-hs_shoot_mf",
                          "shooting: apply the exact Jacobian matrix-free (no global matrix; unpreconditioned GMRES)",
                          "HsSolverShootSetMatrixFree", sh->mf, &b, &flg));
  if (flg)
    PetscCall(HsSolverShootSetMatrixFree(s, b));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_shoot_max_growth",
                          "largest sensitivity growth of a segment (in the best scaling of the unknowns) before the "
                          "solve stops and asks for more segments",
                          "HsSolverShootSetMaxGrowth", sh->max_growth, &g, &flg));
  if (flg)
    PetscCall(HsSolverShootSetMaxGrowth(s, g));
  PetscFunctionReturn(0);
}

static PetscErrorCode SetFromOptions(HsSolver s, PetscOptionItems *PetscOptionsObject)
{
  HsShoot  *sh = s->data;
  PetscInt  M, it;
  PetscReal a;
  PetscBool flg;
  MPI_Comm  comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscOptionsHeadBegin(PetscOptionsObject, "Multiple shooting options (-hs_bvp_type shooting)");
  PetscCall(HsSolverShootGetNumSegments(s, &M));
  PetscCall(HsOptionsInt(PetscOptionsObject, "-hs_shoot_segments",
                            "number of shooting segments M (1 = single shooting, N = one interval each)",
                            "HsSolverShootSetNumSegments", M, &M, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
  if (flg)
    PetscCall(HsSolverShootSetNumSegments(s, M));
  PetscCall(KnotsOption(PetscOptionsObject, s));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_step_atol",
                             "local (per-step) Newton tolerance on the h-scaled step residual, relative to 1+|y|",
                             "HsSolverShootSetStepTolerances", sh->step_atol, &a, &flg));
  /* the setter takes PETSC_DEFAULT (-2) as "keep": a user's -2 must not read as that (issue 38, round 22: -hs_step_atol
     -2, -hs_step_stol -2 and -hs_step_max_it -2 were taken without a word) */
  PetscCheck(!flg || a > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g must lie in (0, 1)", HsKey(s, "-hs_step_atol"),
             (double)a);
  if (flg)
    PetscCall(HsSolverShootSetStepTolerances(s, a, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_step_stol",
                             "local Newton also stops when its update is below this, relative to 1+|y| (quadratic "
                             "convergence: the iterate is then at round-off)",
                             "HsSolverShootSetStepTolerances", sh->step_stol, &a, &flg));
  PetscCheck(!flg || a > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g must lie in (0, 1)", HsKey(s, "-hs_step_stol"),
             (double)a);
  if (flg)
    PetscCall(HsSolverShootSetStepTolerances(s, PETSC_DEFAULT, a, PETSC_DEFAULT));
  PetscCall(HsOptionsInt(PetscOptionsObject, "-hs_step_max_it", "local Newton iterations per step", "HsSolverShootSetStepTolerances",
                            sh->step_max_it, &it, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
  PetscCheck(!flg || it >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %" PetscInt_FMT " must be at least 1",
             HsKey(s, "-hs_step_max_it"), it);
  if (flg)
    PetscCall(HsSolverShootSetStepTolerances(s, PETSC_DEFAULT, PETSC_DEFAULT, it));
  PetscCall(SolverOptions(PetscOptionsObject, s, sh));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

/* Segment knots: the even split k_s = floor(s N / M), or the user's list (checked here, now that N is known). */
static PetscErrorCode SetUpKnots(HsSolver s, HsShoot *sh)
{
  PetscFunctionBeginUser;
  sh->Mset = sh->nuser ? sh->nuser + 1 : sh->M;
  PetscCheck(sh->Mset >= 1 && sh->Mset <= s->N, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %" PetscInt_FMT ": need 1 <= M <= N = %" PetscInt_FMT, HsKey(s, "-hs_shoot_segments"), sh->Mset, s->N);
  for (PetscInt i = 0; i < sh->nuser; i++)
    PetscCheck(sh->user_knots[i] > (i ? sh->user_knots[i - 1] : 0) && sh->user_knots[i] < s->N,
               PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
               "%s: interior knots must increase strictly within 1..N-1 = %" PetscInt_FMT "; entry %" PetscInt_FMT
               " is %" PetscInt_FMT,
               HsKey(s, "-hs_shoot_knots"), s->N - 1, i + 1, sh->user_knots[i]);
  PetscCall(PetscFree(sh->knots));
  PetscCall(PetscMalloc1(sh->Mset + 1, &sh->knots));
  sh->knots[0] = 0;
  for (PetscInt i = 0; i < sh->nuser; i++)
    sh->knots[i + 1] = sh->user_knots[i];
  if (!sh->nuser)
    for (PetscInt i = 1; i < sh->Mset; i++)
      sh->knots[i] = (PetscInt)((i * (long long)s->N) / sh->Mset);
  sh->knots[sh->Mset] = s->N;
  PetscFunctionReturn(0);
}

/* The march on the solver's current discretization (which a solve after a parameter change rebuilds). */
static PetscErrorCode CreateMarch(HsSolver s, HsShoot *sh)
{
  int st;

  PetscFunctionBeginUser;
  HsMarchDestroy(&sh->march);
  st = HsMarchCreate(s->disc, &sh->march);
  if (!st) /* the setter has checked them */
    st = HsMarchSetTolerances(sh->march, sh->step_atol, sh->step_stol, (int)sh->step_max_it);
  if (!st && sh->ft) /* a free T: d/dh columns and the summed Hamiltonian */
    HsMarchSetFreeTime(sh->march, 1), HsMarchSetHamiltonianSum(sh->march, 1);
  /* a march looser than its defaults makes the residual's evaluation error as large as the user allows: a noise
     floor then vouches for nothing (HsSolverVerifyConvergence; -hs_step_stol 0.9 had ended "converged" at |F| 0.55) */
  s->noise_vouch = (PetscBool)(sh->step_atol <= HS_MARCH_ATOL_DEFAULT && sh->step_stol <= HS_MARCH_STOL_DEFAULT &&
                               sh->step_max_it >= HS_MARCH_MAX_IT_DEFAULT);
  /* no chord updates (march.c, HsMarchSetChord) for controls that are not smooth in the costates, nor in a march
     looser than its defaults, whose few updates and loose -hs_step_stol are meant for Newton's */
  if (!st && (s->prob->u_min || s->prob->u_max || s->prob->ctrl || !s->noise_vouch))
    HsMarchSetChord(sh->march, 0);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &st, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)s)));
  PetscCheck(st == HS_SUCCESS, PetscObjectComm((PetscObject)s), PETSC_ERR_MEM,
             "cannot create the shooting march (%s)", HsStatusString(st));
  PetscFunctionReturn(0);
}

/* The per-segment storage of the local segments. */
static PetscErrorCode SetUpStorage(HsSolver s, HsShoot *sh)
{
  PetscInt dim = 2 * s->prob->n, w = 2 * dim, ws, nloc, e;

  PetscFunctionBeginUser;
  sh->ft = s->prob->free_T ? 1 : 0;
  ws = w + sh->ft, e = 3 * dim + 3 * dim * ws;
  PetscCall(HsSegLayoutCreate(PetscObjectComm((PetscObject)s), sh->Mset, sh->knots, &sh->seg));
  PetscCall(HsSegLayoutSetBlocks(sh->seg, w, w, sh->ft, 0, w)); /* points k_s .. k_{s+1}; a free T: the last unknown */
  nloc = sh->seg->s1 - sh->seg->s0;
  PetscCall(PetscCalloc2(sh->seg->toff[nloc] * w, &sh->traj, nloc * 4 * dim * ws + 1, &sh->sens));
  PetscCall(PetscCalloc3(nloc + 1, &sh->growth, nloc + 1, &sh->marched, nloc * w + 1, &sh->perron));
  PetscCall(PetscCalloc2(nloc * 3 * dim * w + 1, &sh->jblk, w, &sh->vprev));
  PetscCall(PetscMalloc4(e, &sh->end_send, e, &sh->end_recv, e, &sh->end_local, dim, &sh->znext));
  PetscCall(PetscMalloc3(8 * dim * dim, &sh->Bk, dim * ws, &sh->G, dim, &sh->R));
  PetscCall(PetscCalloc4(nloc + 1, &sh->hsum, nloc * ws + 1, &sh->hgrad, nloc * w + 1, &sh->jT, w, &sh->tlast));
  PetscFunctionReturn(0);
}

/* The default linear solver of the outer system (-hs_shoot_ksp, -hs_shoot_mf); -ksp_type, -pc_type
 * override them (HsSolverSetUp). */
static PetscErrorCode SetUpKSP(HsSolver s, HsShoot *sh)
{
  KSP         ksp;
  PC          pc;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  if (sh->mf) {
    PetscCall(KSPSetType(ksp, KSPGMRES));
    PetscCall(KSPGMRESSetRestart(ksp, HS_SHOOT_MF_RESTART));
    PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-300, PETSC_DEFAULT, 10000));
    PetscCall(PCSetType(pc, PCNONE));
  } else if (sh->ksp == HS_SHOOT_KSP_RANKBLOCK) { /* sub-blocks: SetUpSubKSP, once the options are in */
    PetscCall(KSPSetType(ksp, KSPGMRES));
    PetscCall(KSPGMRESSetRestart(ksp, 4 * s->prob->n * (size - 1) + 2));
    PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-300, PETSC_DEFAULT, PETSC_DEFAULT));
    PetscCall(PCSetType(pc, PCBJACOBI));
  } else {
    PetscCall(HsSolverSetDefaultPC(s, ksp, PETSC_FALSE));
    /* hsband's fallback where a rank has too few rows for the band (a small outer system) by PC hsgather, as the
       constrained and conserving4 shootings do (seglayout.c): MUMPS' parallel LU is not bit-reproducible, and its last
       bits had decided a verdict (docs/reliability.md, "Reproducibility"); -pc_hsband_fallback_gather false overrides */
    PetscCall(HsPCBandSetFallbackGather(pc, PETSC_TRUE));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode SetUp(HsSolver s)
{
  HsShoot *sh = s->data;
  PetscInt w = 4 * s->prob->n, nloc, nodes;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCheckLinearSolver(s, s->linear_solver)); /* before the solve, for every branch below */
  PetscCall(SetUpKnots(s, sh));
  if (s->scheme == HS_SCHEME_CONSERVING4) { /* conserving4: its own march and matching (order4shoot.c), constrained
                                               systems included (docs/theory.md section 8.1) */
    PetscCheck(!sh->mf && sh->ksp == HS_SHOOT_KSP_DIRECT && sh->init == HS_SHOOT_INIT_LINEAR,
               PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
               "-hs_scheme conserving4: its multiple shooting takes no -hs_shoot_mf, -hs_shoot_ksp or -hs_shoot_init "
               "(an assembled Jacobian, -hs_linear_solver band or mumps, the linear guess; docs/theory.md section 8)");
    PetscCall(HsO4ShootSetUp(s, sh->Mset, sh->knots, sh->step_atol, sh->step_stol, sh->step_max_it, sh->max_growth));
    PetscFunctionReturn(0);
  }
  if (s->prob->nc) { /* holonomic constraints: the constrained scheme's shooting takes over (consshoot.c) */
    PetscCheck(!sh->mf && sh->ksp == HS_SHOOT_KSP_DIRECT && sh->init == HS_SHOOT_INIT_LINEAR,
               PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
               "problem '%s' has constraints: its multiple shooting takes no -hs_shoot_mf, -hs_shoot_ksp or -hs_shoot_init "
               "(an assembled Jacobian, -hs_linear_solver band or mumps, the transcription's guess; docs/constrained.md)",
               s->prob->name);
    PetscCall(HsConsShootSetUp(s, sh->Mset, sh->knots));
    PetscFunctionReturn(0);
  }
  PetscCall(SetUpStorage(s, sh));
  PetscCheck(!sh->ft || !sh->mf, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "a free final time (T: free) needs the assembled outer Jacobian: -hs_shoot_mf is not supported with it");
  PetscCall(CreateMarch(s, sh)); /* made again by PreSolve, for the discretization of each solve */
  nloc = sh->seg->s1 - sh->seg->s0;
  /* a free T: the last unknown, on the owner of segment M-1 */
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)s), HsSegLayoutLocalSize(sh->seg), PETSC_DETERMINE, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  if (sh->ft) { /* the last unknown */
    PetscCall(VecGetSize(s->X, &s->iT));
    s->iT--;
  }
  if (sh->mf) /* the exact product from the stored blocks; no global matrix */
    PetscCall(HsShootCreateMFOperator(s, &s->Jac));
  else if (!sh->ft) { /* row block s has entries in column blocks s-1, s, s+1: that pattern, assembled once */
    PetscCall(MatCreateAIJ(PetscObjectComm((PetscObject)s), nloc * w, nloc * w, PETSC_DETERMINE, PETSC_DETERMINE,
                           3 * w, NULL, 2 * w, NULL, &s->Jac));
    PetscCall(HsShootAssemblePattern(s, s->Jac));
    PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  } else { /* the same bordered by T's column (every row) and the row of its condition (dense) */
    PetscInt nl, Nt, *dn, *on, c0;
    PetscCall(VecGetLocalSize(s->X, &nl));
    PetscCall(VecGetSize(s->X, &Nt));
    PetscCall(VecGetOwnershipRange(s->X, &c0, NULL));
    PetscCall(PetscMalloc2(nl + 1, &dn, nl + 1, &on));
    for (PetscInt i = 0; i < nl; i++)
      dn[i] = PetscMin(3 * w + 1, nl), on[i] = PetscMin(2 * w + 1, Nt - nl);
    if (nl > nloc * w) /* the T row */
      dn[nl - 1] = nl, on[nl - 1] = Nt - nl;
    PetscCall(MatCreateAIJ(PetscObjectComm((PetscObject)s), nl, nl, PETSC_DETERMINE, PETSC_DETERMINE, 0, dn, 0, on,
                           &s->Jac));
    PetscCall(PetscFree2(dn, on));
    (void)c0;
    PetscCall(HsShootAssemblePattern(s, s->Jac));
    PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  }
  PetscCall(SNESSetFunction(s->snes, s->F, HsSolverFormFunction, s));
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, HsShootFormJacobian, s));
  /* node-layout vector for diagnostics and output: local nodes k_{s0}..k_{s1}-1 (+ N on the last owner) */
  nodes = (nloc ? sh->knots[sh->seg->s1] - sh->knots[sh->seg->s0] : 0) + (nloc && sh->seg->s1 == sh->Mset ? 1 : 0);
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)s), nodes * w, (s->N + 1) * w, &s->Xnodes));
  s->res.segments = sh->Mset;
  PetscCall(HsSolverSetCheckpointLayout(s, sh->Mset + 1, sh->knots));
  PetscCall(SetUpKSP(s, sh));
  PetscFunctionReturn(0);
}

/* rankblock, after the options: each rank's block defaults to an exact LU with partial pivoting
 * (MUMPS; PETSc's own LU does not pivot), set on this solver's sub-KSPs, which exist once the PC has
 * been set up on the (pattern-assembled) Jacobian; -sub_ksp_type, -sub_pc_type override. */
static PetscErrorCode SetUpSubKSP(HsSolver s, KSP ksp)
{
  HsShoot  *sh = s->data;
  PC        pc, subpc;
  KSP      *sub;
  PetscInt  nsub;
  PetscBool bj;

  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &bj));
  if (!bj || sh->mf || sh->ksp != HS_SHOOT_KSP_RANKBLOCK) /* a block Jacobi the user chose keeps PETSc's defaults */
    PetscFunctionReturn(0);
  PetscCall(PCSetUp(pc));
  PetscCall(PCBJacobiGetSubKSP(pc, &nsub, NULL, &sub));
  for (PetscInt i = 0; i < nsub; i++) {
    PetscCall(KSPGetPC(sub[i], &subpc));
    PetscCall(PCSetType(subpc, PCLU));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(PCFactorSetMatSolverType(subpc, MATSOLVERMUMPS));
#endif
    PetscCall(KSPSetFromOptions(sub[i]));
    PetscCall(HsSolverConfigureFactorization(s, subpc));
  }
  PetscFunctionReturn(0);
}

/* -hs_shoot_init transcription: z_s = (x_{k_s}, lambda_{k_s+1/2}) taken from a transcription solve
 * of the same discrete problem (its M = N limit), started from the same initial guess. */
static PetscErrorCode InitFromTranscription(HsSolver s, HsShoot *sh)
{
  HsSolver    t;
  HsResults   r;
  Vec         Xt;
  IS          from;
  VecScatter  sc;
  SNES        snes;
  const char *prefix;
  PetscInt   *idx, w = 4 * s->prob->n, n = 0;
  PetscBool   stop;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PetscObjectComm((PetscObject)s), &t));
  PetscCall(HsSolverSetType(t, HSSOLVERTRANSCRIPTION));
  PetscCall(HsSolverSetProblem(t, s->prob));
  PetscCall(HsSolverSetNumIntervals(t, s->N));
  PetscCall(HsSolverSetSchemes(t, s->ss, s->cs));
  PetscCall(HsSolverSetDGTolerance(t, s->dg_tol));
  PetscCall(HsSolverGetOptionsPrefix(s, &prefix));
  PetscCall(HsSolverSetOptionsPrefix(t, prefix));
  PetscCall(HsSolverAppendOptionsPrefix(t, "hs_init_")); /* not the shooting solve's -snes_* options */
  t->ckpt_dir[0] = 0; /* a sub-solve stops on a signal but writes no checkpoint of its own */
  t->check_boundary = s->check_boundary; /* -hs_check_boundary false holds for the sub-solves */
  if (s->guess)
    PetscCall(HsSolverSetInitialGuess(t, s->guess_N, s->guess));
  t->guess_T = s->guess_T;
  PetscCall(HsSolverSetUp(t));
  PetscCall(HsSolverGetSNES(t, &snes));
  PetscCall(SNESSetFromOptions(snes)); /* -hs_init_snes_* */
  PetscCall(HsSNESCheckType(snes));
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, &r));
  /* a signal stopped the transcription solve: the run ends as interrupted, not with the error below (issue 38, round
     27: "did not converge (DIVERGED_FUNCTION_COUNT)") */
  PetscCall(HsSolverSubSolveStopped(s, r.converged, "-hs_shoot_init transcription's transcription solve", &t, &stop));
  if (stop)
    PetscFunctionReturn(0);
  if (!r.converged) { /* the sub-solver destroyed first: a library caller that handles the error leaks nothing */
    PetscCall(HsSolverDestroy(&t));
    SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_NOT_CONVERGED,
            "%s transcription: the transcription solve did not converge (%s)", HsKey(s, "-hs_shoot_init"),
            SNESConvergedReasons[r.reason]);
  }
  PetscCall(HsSolverGetSolution(t, &Xt));
  PetscCall(PetscMalloc1((sh->seg->s1 - sh->seg->s0) * w, &idx));
  for (PetscInt seg = sh->seg->s0; seg < sh->seg->s1; seg++)
    for (PetscInt c = 0; c < w; c++)
      idx[n++] = sh->knots[seg] * w + c;
  PetscCall(ISCreateGeneral(PetscObjectComm((PetscObject)s), n, idx, PETSC_OWN_POINTER, &from));
  {
    IS       to; /* the segments' entries of X (not a free T's) */
    PetscInt c0;
    PetscCall(VecGetOwnershipRange(s->X, &c0, NULL));
    PetscCall(ISCreateStride(PetscObjectComm((PetscObject)s), n, c0, 1, &to));
    PetscCall(VecScatterCreate(Xt, from, s->X, to, &sc));
    PetscCall(ISDestroy(&to));
  }
  PetscCall(VecScatterBegin(sc, Xt, s->X, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, Xt, s->X, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(ISDestroy(&from));
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/* z_s from the rows of the initial guess at the knots (or a transcription solve); the stored marches
 * no longer belong to these starts. */
static PetscErrorCode Guess(HsSolver s, Vec X)
{
  HsShoot     *sh = s->data;
  PetscInt     w  = 4 * s->prob->n;
  PetscScalar *z;

  PetscFunctionBeginUser;
  PetscCall(VecGetArray(X, &z));
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++)
    PetscCall(HsSolverGuessRow(s, sh->knots[t], z + (t - sh->seg->s0) * w));
  PetscCall(VecRestoreArray(X, &z));
  PetscCall((*s->ops->resetiterate)(s));
  if (sh->init == HS_SHOOT_INIT_TRANSCRIPTION)
    PetscCall(InitFromTranscription(s, sh));
  /* a free T: its start, or the T the transcription solve found */
  PetscCall(HsShootSetFinalTimeEntry(s, X, sh->init == HS_SHOOT_INIT_TRANSCRIPTION ? s->prob->T : HsSolverStartT(s)));
  PetscFunctionReturn(0);
}

static PetscErrorCode ResetIterate(HsSolver s)
{
  HsShoot *sh = s->data;

  PetscFunctionBeginUser;
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++)
    sh->marched[t - sh->seg->s0] = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode PreSolve(HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(CreateMarch(s, s->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode PostSolve(HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(HsShootPackNodes(s)); /* the trajectory of X itself */
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  HsShoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(buf, len, "multiple shooting with %d segment%s", (int)sh->Mset, sh->Mset > 1 ? "s" : ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode View(HsSolver s, PetscViewer viewer)
{
  HsResults *r = &s->res;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  linear iterations  %" PetscInt_FMT " (KSP, summed over Newton iterations)\n", r->ksp_iterations));
  if (r->sensitivity_growth > 0)
    PetscCall(
        PetscViewerASCIIPrintf(viewer,
                               "  sensitivity growth %.3e   (largest segment map d(march)/dz in the best scaling of "
                               "the unknowns; largest entry %.1e)\n",
                               (double)r->sensitivity_growth, (double)((HsShoot *)s->data)->egrowth));
  else /* no Jacobian evaluated: a root at the start, or the first march failed */
    PetscCall(PetscViewerASCIIPrintf(viewer, "  sensitivity growth not computed (no Jacobian was evaluated)\n"));
  PetscFunctionReturn(0);
}

/* summary.json: "segments", "sensitivity_growth" and "sensitivity_entry_max" (null: not computed) */
static PetscErrorCode WriteSummary(HsSolver s, FILE *f)
{
  PetscReal g = s->res.sensitivity_growth, e = ((HsShoot *)s->data)->egrowth;

  PetscFunctionBeginUser;
  fprintf(f, "  \"segments\": %d,\n", (int)((HsShoot *)s->data)->Mset);
  HsShootGrowthJSON(f, g, e);
  PetscFunctionReturn(0);
}

static PetscErrorCode Destroy(HsSolver s)
{
  HsShoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(sh->user_knots));
  PetscCall(PetscFree(sh->knots));
  PetscCall(HsSegLayoutDestroy(&sh->seg));
  HsMarchDestroy(&sh->march);
  PetscCall(PetscFree2(sh->traj, sh->sens));
  PetscCall(PetscFree3(sh->growth, sh->marched, sh->perron));
  PetscCall(PetscFree2(sh->jblk, sh->vprev));
  PetscCall(PetscFree4(sh->end_send, sh->end_recv, sh->end_local, sh->znext));
  PetscCall(PetscFree3(sh->Bk, sh->G, sh->R));
  PetscCall(PetscFree4(sh->hsum, sh->hgrad, sh->jT, sh->tlast));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/*@ HsSolverCreate_Shooting - the multiple-shooting formulation (HSSOLVERSHOOTING, docs/theory.md section 3):
    M segments marched in parallel (each rank its contiguous block), matched by continuity of x and
    the costate equation across each boundary; exact Jacobian from the march's sensitivities.

  Collective; called by HsSolverSetType(). Its keys (SetFromOptions): -hs_shoot_segments,
  -hs_shoot_knots, -hs_shoot_ksp, -hs_shoot_init, -hs_shoot_mf, -hs_shoot_max_growth, -hs_step_atol,
  -hs_step_stol, -hs_step_max_it (the HsSolverShoot* setters).
@*/
PetscErrorCode HsSolverCreate_Shooting(HsSolver s)
{
  HsShoot *sh;

  PetscFunctionBeginUser;
  PetscCall(RegisterEvents());
  PetscCall(PetscNew(&sh));
  sh->M                  = 1;
  sh->ksp                = HS_SHOOT_KSP_DIRECT;
  sh->init               = HS_SHOOT_INIT_LINEAR;
  sh->max_growth         = HS_SHOOT_MAX_GROWTH_DEFAULT;
  sh->step_atol          = HS_MARCH_ATOL_DEFAULT;
  sh->step_stol          = HS_MARCH_STOL_DEFAULT;
  sh->step_max_it        = HS_MARCH_MAX_IT_DEFAULT;
  s->data                = sh;
  s->ops->setfromoptions = SetFromOptions;
  s->ops->setup          = SetUp;
  s->ops->setupksp       = SetUpSubKSP;
  s->ops->guess          = Guess;
  s->ops->resetiterate   = ResetIterate;
  s->ops->presolve       = PreSolve;
  s->ops->postsolve      = PostSolve;
  s->ops->describe       = Describe;
  s->ops->view           = View;
  s->ops->writesummary   = WriteSummary;
  s->ops->destroy        = Destroy;
  s->ops->residual       = HsShootResidual;
  PetscFunctionReturn(0);
}
