/* hamshoot: HsSolverSetUp and HsSolverSolve: the discretization, the
 * formulation's set-up, the SNES/KSP defaults and their options, the MUMPS
 * settings and workspace retry (docs/theory.md section 3). The convergence test:
 * bvp/interface/convergence.c. */
#include "../../costate/hscontrol.h"
#include "hsbvpimpl.h"

#include <sys/resource.h>

#include <string.h>

/*@ HsSolverConfigureFactorization - hamshoot's settings of a MUMPS LU (bvp/ internal): the pivot
    threshold CNTL(1) = 1.0 and the workspace relaxation ICNTL(14) in use, set on this PC's own
    factor matrix (not in the options database), so that -mat_mumps_cntl_1 and -mat_mumps_icntl_14
    still override them. No-op for other preconditioners and solver packages.

  Collective on pc; pc must have its operators.

  MUMPS' default threshold 0.01 accepted pivots on the shooting matrices of unstable problems
  (saddle) that left a solve with residual O(1) (measured); 1.0 is LAPACK-style partial pivoting.
  Pivoting adds fill beyond MUMPS' estimate (INFOG(1) = -9 seen on kepler, M = N = 160): hence
  ICNTL(14) = 200 rather than MUMPS' 20.
@*/
PetscErrorCode HsSolverConfigureFactorization(HsSolver s, PC pc)
{
  Mat F;

  PetscFunctionBeginUser;
  PetscCall(HsPCGetMumpsFactor(pc, &F));
  if (F)
    PetscCall(HsMumpsConfigure(F, s->mumps_icntl14));
  PetscFunctionReturn(0);
}

/*@ HsSolverCheckLinearSolver - an error, naming the run's formulation, if ls is drop or slab, which only the
    transcription of a problem without constraints by a scheme pair has (bvp/ internal; the other formulations' set-up
    calls it before anything is solved: conserving4's and the constrained scheme's multiple shooting, which keep their
    own LU, had run on and failed in a sub-solve after the solve, the extremal check's, with exit 1; round 18).
    Collective. @*/
PetscErrorCode HsSolverCheckLinearSolver(HsSolver s, HsLinearSolver ls)
{
  PetscBool sh;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERSHOOTING, &sh));
  PetscCheck(ls != HS_LINEAR_SOLVER_DROP && ls != HS_LINEAR_SOLVER_SLAB, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "-hs_linear_solver %s: only the transcription of a problem without constraints by a scheme pair has it "
             "(this run: %s); use band or mumps",
             ls == HS_LINEAR_SOLVER_DROP ? "drop" : "slab",
             sh            ? "multiple shooting"
             : s->prob->nc ? "the transcription of a constrained problem"
                           : "the transcription by -hs_scheme conserving4");
  PetscFunctionReturn(0);
}

/*@ HsSolverSetDefaultPC - the default linear solver of a Newton formulation on ksp (bvp/ internal; see
    HsSolverSetLinearSolver): preonly with PC hsband or LU by MUMPS, or (drop_ok: the transcription, whose
    node blocks are stored whole) GMRES with PC hsdrop, its matrix factored by PC hsslab on more than one rank.
    With auto, a -pc_type or -pc_factor_mat_solver_type in the options (the solver's prefix) keeps the LU base they
    refine. @*/
PetscErrorCode HsSolverSetDefaultPC(HsSolver s, KSP ksp, PetscBool drop_ok)
{
  HsLinearSolver ls = s->linear_solver;
  PetscBool      user1, user2;
  const char    *prefix;
  PC             pc;

  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  if (ls == HS_LINEAR_SOLVER_AUTO) {
    PetscBool small = (PetscBool)(4 * s->prob->n <= HS_BAND_AUTO_MAX_UNKNOWNS);
    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PetscOptionsHasName(NULL, prefix, "-pc_type", &user1));
    PetscCall(PetscOptionsHasName(NULL, prefix, "-pc_factor_mat_solver_type", &user2));
    ls = HS_LINEAR_SOLVER_MUMPS;
    if (!user1 && !user2 && small) /* a free T's dense row and column: hsband's bordered step (bandborder.c) */
      ls = HS_LINEAR_SOLVER_BAND;
    else if (!user1 && !user2 && !small && drop_ok) {
      PetscMPIInt size;
      PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
      ls = size >= HS_SLAB_AUTO_MIN_RANKS ? HS_LINEAR_SOLVER_SLAB : HS_LINEAR_SOLVER_DROP; /* bench/README.md */
    }
  }
  if (!drop_ok)
    PetscCall(HsSolverCheckLinearSolver(s, ls));
  PetscCall(HsKSPSetLinearSolver(ksp, ls));
  PetscFunctionReturn(0);
}

/*@ HsSolverFormFunction - the SNES function of every Newton formulation (bvp/ internal): the formulation's residual
    (s->ops->residual, ctx = s), and a domain error of it reported to SNES. Collective. @*/
PetscErrorCode HsSolverFormFunction(SNES snes, Vec X, Vec F, void *ctx)
{
  HsSolver  s = ctx;
  PetscBool dom;

  PetscFunctionBeginUser;
  PetscCall(VecDestroy(&s->eval_X)); /* references: a finite-difference Jacobian's work vectors may be freed after */
  PetscCall(VecDestroy(&s->eval_F));
  PetscCall((*s->ops->residual)(s, X, F, &dom));
  if (dom)
    PetscCall(SNESSetFunctionDomainError(snes));
  else if (s->residual_pure) { /* HsSolverSolveNewton's final evaluation may be this one (FinalResidual) */
    PetscCall(PetscObjectReference((PetscObject)X));
    PetscCall(PetscObjectReference((PetscObject)F));
    s->eval_X = X, s->eval_F = F;
    PetscCall(PetscObjectStateGet((PetscObject)X, &s->eval_Xstate));
    PetscCall(PetscObjectStateGet((PetscObject)F, &s->eval_Fstate));
  }
  PetscFunctionReturn(0);
}

/* F = F(X) at the final iterate X of a Newton solve into s->F (whose evaluation also leaves the formulation's data at
   X). Where the formulation's residual is a function of X alone (s->residual_pure) and the last evaluation of this
   solve was at these same values of X with s->F equal to its result (the line search's accepted trial point, copied
   into X and F), that is F(X) already, bit for bit: not evaluated again. On the pendulum's conserving4 with Romberg
   on four grids this was one residual of 24, 5.5 % of the solve's instructions. */
static PetscErrorCode FinalResidual(HsSolver s)
{
  PetscObjectState xs, fs;
  PetscBool        same = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (s->residual_pure && s->eval_X && s->res.reason > 0 && !s->interrupted) {
    PetscCall(PetscObjectStateGet((PetscObject)s->eval_X, &xs));
    PetscCall(PetscObjectStateGet((PetscObject)s->eval_F, &fs));
    same = (PetscBool)(xs == s->eval_Xstate && fs == s->eval_Fstate);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)s)));
  if (same)
    PetscCall(VecEqual(s->eval_X, s->X, &same));
  if (same)
    PetscCall(VecEqual(s->eval_F, s->F, &same));
  PetscCall(VecDestroy(&s->eval_X));
  PetscCall(VecDestroy(&s->eval_F));
  if (!same)
    PetscCall(SNESComputeFunction(s->snes, s->X, s->F));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetUpDiscretization - the scheme pair and N of this solve, and the serial discretization
    (bvp/ internal), with the costate homotopy of -hs_initial_guess direct if one is in progress. @*/
PetscErrorCode HsSolverSetUpDiscretization(HsSolver s)
{
  const char *ss, *cs;
  char        msg[512];
  int         st;
  HsDisc     *disc;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetSchemes(s, &ss, &cs));
  PetscCheck(ss && cs, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONG,
             "problem '%s' names no default schemes: choose -hs_state_scheme and -hs_costate_scheme", s->prob->name);
  PetscCall(PetscStrncpy(s->ss, ss, sizeof s->ss));
  PetscCall(PetscStrncpy(s->cs, cs, sizeof s->cs));
  if (!s->N)
    PetscCall(HsSolverSetNumIntervals(s, s->prob->N));
  PetscCheck(((long long)s->N + 1) * 4 * s->prob->n <= PETSC_MAX_INT, PetscObjectComm((PetscObject)s),
             PETSC_ERR_ARG_OUTOFRANGE,
             "N = %" PetscInt_FMT
             " intervals with 4n = %d unknowns per node make %lld unknowns, more than this PETSc's "
             "%d-bit indices allow (%lld)",
             s->N, 4 * s->prob->n, ((long long)s->N + 1) * 4 * s->prob->n, (int)(8 * sizeof(PetscInt)),
             (long long)PETSC_MAX_INT);
  st = HsDiscCreate(s->prob, s->ss, s->cs, (int)s->N, s->dg_tol, &disc, msg, sizeof msg);
  PetscCheck(st == 0, PetscObjectComm((PetscObject)s), st == HS_ENOMEM ? PETSC_ERR_MEM : PETSC_ERR_ARG_WRONG, "%s",
             msg);
  if (HsDiscIsBounded(disc)) /* the law as posed (docs/controls.md); HsSolverSolveBounded smooths it on the way */
    PetscCheck(HsDiscSetControlSmoothing(disc, HsSolverBoundsFinalEps(s)) == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "eps");
  if (s->hom_theta < 1) /* -hs_initial_guess direct: from the direct costate equation (theta = 0) to ours */
    PetscCheck(HsDiscSetCostateHomotopy(disc, strcmp(s->ss, "midpoint") ? "kkt" : "trapezoidal", s->hom_theta) == 0,
               PETSC_COMM_SELF, PETSC_ERR_PLIB, "costate homotopy at theta = %g", (double)s->hom_theta);
  HsDiscDestroy(&s->disc); /* only now: the formulation's objects may refer to the old one until rebuilt */
  s->disc = disc;
  PetscFunctionReturn(0);
}

/* -hs_direct_solver ipopt on a direct problem makes the solver an IPOPT one; bounded controls need it. */
static PetscErrorCode ChooseDirectSolver(HsSolver s)
{
  const char *cs;
  PetscBool   direct = PETSC_FALSE, nlp, tr, sh;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetSchemes(s, NULL, &cs));
  if (cs)
    direct = (PetscBool)(!strcmp(cs, "kkt") || !strcmp(cs, "trapezoidal") || !strcmp(cs, "constrained_kkt"));
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERIPOPT, &nlp));
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERTRANSCRIPTION, &tr));
  if (s->direct_solver == HS_DIRECT_IPOPT && direct && !nlp) {
    PetscCheck(tr, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_INCOMP,
               "-hs_direct_solver ipopt solves the direct NLP itself: it cannot be combined with -hs_bvp_type %s",
               ((PetscObject)s)->type_name);
    PetscCall(HsSolverSetType(s, HSSOLVERIPOPT));
    nlp = PETSC_TRUE;
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERSHOOTING, &sh));
  PetscCheck(!s->prob->nc || tr || sh || nlp, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "problem '%s' has constraints: it is solved by the transcription or the multiple shooting of its schemes "
             "(-hs_bvp_type transcription or shooting, docs/constrained.md), or as the direct NLP by IPOPT "
             "(-hs_bvp_type ipopt); -hs_bvp_type %s does not support constraints yet",
             s->prob->name, ((PetscObject)s)->type_name);
  if (!nlp && HsControlLawActive(s->prob)) { /* bounds in the indirect solvers (docs/controls.md) */
    char msg[512];
    PetscCheck(!HsDiscCheckBounded(s->prob, msg, sizeof msg), PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "%s",
               msg);
  }
  PetscFunctionReturn(0);
}

/* The type names of a driver's sub-solvers (-hs_grid_snes_type, ..., read by each grid's solver at its set-up, after
 * the main solve: -hs_study, -hs_extrapolate): checked here, at the main solver's set-up, against the registered types,
 * naming the option. Round 26: an unknown one was refused only on -hs_study's second grid, after the main solve, with
 * PETSc's "Unable to find requested SNES type nonesuch". */
static PetscErrorCode CheckGridTypes(MPI_Comm comm)
{
  static const char *key[] = {"-snes_type", "-npc_snes_type", "-ksp_type", "-pc_type", "-npc_ksp_type", "-npc_pc_type"};
  char               type[256];
  PetscBool          set;
  PetscErrorCode (*f)(void);

  PetscFunctionBeginUser;
  for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
    PetscCall(PetscOptionsGetString(NULL, "hs_grid_", key[i], type, sizeof type, &set));
    if (!set || !type[0]) /* a missing value is refused where the option is read, as for any option */
      continue;
    PetscFunctionList list = strstr(key[i], "snes") ? SNESList : strstr(key[i], "ksp") ? KSPList : PCList;
    PetscCall(PetscFunctionListFind(list, type, &f));
    PetscCheck(f, comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "-hs_grid_%s %s: not a %s type (PETSc's or hamshoot's)", key[i] + 1,
               type, strstr(key[i], "snes") ? "SNES" : strstr(key[i], "ksp") ? "KSP" : "PC");
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverSetUp - prepares a solve.

  Collective.

  Input Parameter:
. s - the solver

  Notes:
  Sets up the schemes and N (defaults from the problem), the serial discretization, the formulation's vectors and
  Jacobian, the Newton solver with hamshoot's defaults (Newton with the line search hsbt, a banded or MUMPS LU of
  the Jacobian or the formulation's own choice) and then, if HsSolverSetFromOptions() was called, the -snes_*,
  -ksp_*, -pc_* options. Called by HsSolverSolve() if needed; settings cannot change afterwards.

.seealso: HsSolverSetFromOptions(), HsSolverSolve(), HsSolverGetSNES()
@*/
PetscErrorCode HsSolverSetUp(HsSolver s)
{
  KSP            ksp;
  PC             pc;
  SNESLineSearch ls;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  if (s->setupcalled)
    PetscFunctionReturn(0);
  PetscCheck(s->prob, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "HsSolverSetUp() needs a problem");
  if (!((PetscObject)s)->type_name)
    PetscCall(HsSolverSetType(s, HSSOLVERTRANSCRIPTION));
  PetscCall(ChooseDirectSolver(s));
  if (s->scheme == HS_SCHEME_CONSERVING4) { /* docs/theory.md section 8: the transcription and multiple shooting */
    PetscBool tr;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)s, &tr, HSSOLVERTRANSCRIPTION, HSSOLVERSHOOTING, ""));
    PetscCheck(tr, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
               "-hs_scheme conserving4 is implemented for -hs_bvp_type transcription and shooting only, not %s",
               ((PetscObject)s)->type_name);
  }
  PetscCheck(
      s->scheme == HS_SCHEME_CONSERVING4 || !s->prob->ctrl, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
      "problem '%s' has a force or a control cost (force:, control_cost:): only -hs_scheme conserving4 solves it%s "
      "(docs/controls.md)",
      s->prob->name,
      ((PetscObject)s)->prefix && strstr(((PetscObject)s)->prefix, "hs_direct_")
          ? ", not the direct solve that -hs_compare (its direct side) and -hs_initial_guess direct need, with "
            "-hs_scheme conserving4 too"
          : "");
  PetscCall(HsSolverCheckBoundaryRank(s)); /* dependent terminal conditions (singular.c) */
  if (s->prob->free_T) {                   /* docs/free-final-time.md */
    PetscBool ok;
    PetscCall(
        PetscObjectTypeCompareAny((PetscObject)s, &ok, HSSOLVERTRANSCRIPTION, HSSOLVERSHOOTING, HSSOLVERIPOPT, ""));
    PetscCheck(ok, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
               "problem '%s' has a free final time (T: free): -hs_bvp_type %s does not solve it", s->prob->name,
               ((PetscObject)s)->type_name);
    PetscCheck(!s->prob->ell.f || !s->prob->ell.time_dependent, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
               "problem '%s': a free final time needs an autonomous problem, but its running cost depends on t",
               s->prob->name);
  }
  PetscCall(HsSolverSetUpDiscretization(s));
  s->n = s->prob->n, s->m = s->prob->m;
  s->has_free = PETSC_FALSE;
  for (int i = 0; i < 2 * s->prob->n; i++)
    if (!s->prob->xT_fixed[i])
      s->has_free = PETSC_TRUE;
  /* Backtracking without bt's Jacobian product after a direct solve (hsbt, bvp/petscext/linesearch.c), for every
   * Newton formulation. Shooting: one march per Newton step where the full step is accepted, against
   * three for the secant (l2) line search (pendulum and kepler, N = 1e5, 1e4 segments: 1.5-1.7x faster
   * solves, measured). l2 copes better with marches that fail at a trial point (a domain error, which
   * ends backtracking): -hs_strategy auto tries it when Newton fails (bvp/drivers/strategy.c), and
   * -snes_linesearch_type l2 selects it. A formulation's setup may choose another. */
  PetscCall(SNESGetLineSearch(s->snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHHSBT));
  PetscCall((*s->ops->setup)(s));
  PetscCall(SNESSetConvergenceTest(s->snes, HsSolverConvergenceTest, s, NULL));
  if (s->setfromoptionscalled)
    PetscCall(SNESSetFromOptions(s->snes));
  if (s->monitor)
    PetscCall(SNESMonitorSet(s->snes, HsSolverMonitor, s, NULL));
  /* the factorization's settings go to this solver's own factor matrix */
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPSetOperators(ksp, s->Jac, s->Jac));
  PetscCall(HsSolverConfigureFactorization(s, pc));
  if (s->ops->setupksp)
    PetscCall((*s->ops->setupksp)(s, ksp));
  PetscCall(HsSNESCheckType(s->snes)); /* before the solve, not PETSc's messages in it ("No method applytranspose") */
  PetscCall(CheckGridTypes(PetscObjectComm((PetscObject)s)));
  s->setupcalled = PETSC_TRUE;
  PetscCall(HsSolverCheckCheckpointDir(s)); /* no directory of the user's is taken for a checkpoint */
  if (s->restart_dir[0])
    PetscCall(HsSolverSetRestart(s, s->restart_dir));
  PetscFunctionReturn(0);
}

/* A nonlinear preconditioner (-npc_snes_type, -snes_npc_side) of snes, if any: only types that solve no linear system
 * with the Jacobian and need nothing else hamshoot does not set up (ngs: a coloring; fas, ...: HsSNESCheckType). The
 * NPC's own KSP gets PETSc's defaults (GMRES and ILU), not hamshoot's factorization, and ILU fails on the saddle-point
 * Jacobian (a zero diagonal): -npc_snes_type newtonls, newtontr or ksponly, left or right, had ended in PETSc's "Matrix
 * is missing diagonal entry 2", exit 1 (round 24). QN's Jacobian scaling solves with it too. */
static PetscErrorCode CheckNPC(SNES snes)
{
  PetscBool   has, ok, jac = PETSC_FALSE;
  SNES        npc;
  const char *type, *prefix;
  char        scale[32] = "";

  PetscFunctionBeginUser;
  PetscCall(SNESHasNPC(snes, &has));
  if (!has)
    PetscFunctionReturn(0);
  PetscCall(SNESGetNPC(snes, &npc));
  PetscCall(SNESGetOptionsPrefix(npc, &prefix));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)npc, &ok, SNESNRICHARDSON, SNESQN, SNESNCG, SNESANDERSON, SNESNGMRES,
                                      SNESMS, ""));
  if (ok && PetscObjectTypeCompare((PetscObject)npc, SNESQN, &jac) == 0 && jac)
    PetscCall(PetscOptionsGetString(NULL, prefix, "-snes_qn_scale_type", scale, sizeof scale, NULL));
  jac = (PetscBool)(jac && !strcmp(scale, "jacobian"));
  PetscCall(SNESGetType(npc, &type));
  PetscCheck(ok && !jac, PetscObjectComm((PetscObject)snes), PETSC_ERR_SUP,
             "-%ssnes_type %s%s%s%s: not supported as a nonlinear preconditioner (hamshoot sets up the linear solves "
             "of its outer solver only: one in the preconditioner gets PETSc's default ILU, which fails on the "
             "saddle-point Jacobian; ngs needs a coloring): use nrichardson, qn (without -%ssnes_qn_scale_type "
             "jacobian), ncg, anderson, "
             "ngmres or ms as -%ssnes_type, or no nonlinear preconditioner",
             prefix ? prefix : "", type, jac ? " with -" : "", jac ? prefix : "",
             jac ? "snes_qn_scale_type jacobian" : "", prefix ? prefix : "", prefix ? prefix : "");
  PetscCall(HsSNESCheckType(npc)); /* its own type (fas, ...) and NPC */
  PetscFunctionReturn(0);
}

/*@ HsSNESCheckType - after SNESSetFromOptions: a -snes_type that needs parts hamshoot does not give it (fas: a
    hierarchy of grids, composite and nasm and aspin: sub-solvers and subdomains, patch: a DMPlex, shell and python:
    the user's own code) is an error naming the key and what works, before the solve instead of PETSc's message
    inside it ("row 0 of point 0 does not fit the Jacobian's pattern", "m must be > 0"; issue 38, round 22)
    (bvp/ internal). Its KSP too: no Krylov method that applies the transpose of a PC that has none
    (HsKSPCheckTranspose; a driver's sub-solver reads -hs_grid_ksp_type and the like after its set-up). Collective.
    @*/
PetscErrorCode HsSNESCheckType(SNES snes)
{
  PetscBool   bad;
  const char *type, *prefix;
  KSP         ksp;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)snes, &bad, SNESFAS, SNESCOMPOSITE, SNESNASM, SNESASPIN, SNESPATCH,
                                      SNESSHELL, SNESPYTHON, ""));
  if (!bad) {
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(HsKSPCheckTranspose(ksp));
    PetscCall(CheckNPC(snes));
    PetscFunctionReturn(0);
  }
  PetscCall(SNESGetType(snes, &type));
  PetscCall(SNESGetOptionsPrefix(snes, &prefix));
  SETERRQ(PetscObjectComm((PetscObject)snes), PETSC_ERR_SUP,
          "-%ssnes_type %s needs parts hamshoot does not set up (a grid hierarchy, sub-solvers or code of its own): "
          "use newtonls (the default), newtontr, qn, ngmres, anderson, ncg, nrichardson, ngs, ms, vinewtonrsls or ksponly",
          prefix ? prefix : "", type);
}

/*@ HsSolverResetFactorization - the next Newton step factors its Jacobian from scratch (bvp/ internal):
    the preconditioner is reset with the same operators and hamshoot's factorization settings. After a
    factorization that failed (a singular or non-finite Jacobian), whose state PETSc would otherwise
    keep for an unchanged matrix (MUMPS then reports INFOG(1) = -3 in its solve phase). Collective. @*/
static PetscErrorCode HsSolverResetFactorization(HsSolver s)
{
  KSP ksp;
  PC  pc;
  Mat A, P;

  PetscFunctionBeginUser;
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPGetOperators(ksp, &A, &P));
  PetscCall(PetscObjectReference((PetscObject)A));
  PetscCall(PetscObjectReference((PetscObject)P));
  PetscCall(PCReset(pc));
  PetscCall(KSPSetOperators(ksp, A, P));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&P));
  PetscCall(HsSolverConfigureFactorization(s, pc));
  PetscFunctionReturn(0);
}

/* MUMPS sizes its workspace from an estimate made before pivoting; delayed
 * pivots (threshold CNTL(1) = 1.0, and badly scaled problems such as ncar with
 * beta = 1e-9) can exceed it, and the factorization then stops with INFOG(1) =
 * -8, -9, -11, -12 or -14 ("work array too small"). That is not a property of
 * the problem: double ICNTL(14), the percentage by which the estimate is
 * relaxed, and solve again (at most HS_MUMPS_RETRIES times; not when the user
 * fixed -mat_mumps_icntl_14). The larger value stays with this solver.
 * *retry says whether the caller should solve again. Collective. */
static PetscErrorCode MumpsWorkspaceRetry(HsSolver s, PetscBool *retry)
{
  PetscFunctionBeginUser;
  *retry = PETSC_FALSE;
#if defined(PETSC_HAVE_MUMPS)
  {
    KSP       ksp;
    PC        pc;
    Mat       F;
    PetscBool user;
    PetscInt  info, next;

    if (s->res.reason != SNES_DIVERGED_LINEAR_SOLVE || s->res.mumps_retries >= HS_MUMPS_RETRIES)
      PetscFunctionReturn(0);
    PetscCall(SNESGetKSP(s->snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(HsPCGetMumpsFactor(pc, &F));
    PetscCall(PetscOptionsHasName(((PetscObject)pc)->options, ((PetscObject)pc)->prefix, "-mat_mumps_icntl_14", &user));
    if (!F || user)
      PetscFunctionReturn(0);
    PetscCall(MatMumpsGetInfog(F, 1, &info));
    if (!HsMumpsWorkspaceShort(info, s->mumps_icntl14, &next))
      PetscFunctionReturn(0);
    PetscCall(PetscInfo(s,
                        "MUMPS INFOG(1) = %" PetscInt_FMT ": raising ICNTL(14) from %" PetscInt_FMT " to %" PetscInt_FMT
                        " and solving again\n",
                        info, s->mumps_icntl14, next));
    s->mumps_icntl14 = next;
    /* ICNTL(14) is read at the analysis: a new factorization from scratch */
    PetscCall(HsSolverResetFactorization(s));
    s->res.mumps_retries++;
    *retry = PETSC_TRUE;
  }
#endif
  PetscFunctionReturn(0);
}

/* The message of the lowest rank that has one, on every rank. */
static PetscErrorCode ShareDiagnosis(HsSolver s)
{
  PetscMPIInt rank, who;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  who = s->res.diagnosis[0] ? rank : PETSC_MPI_INT_MAX;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, comm));
  if (who != PETSC_MPI_INT_MAX)
    PetscCallMPI(MPI_Bcast(s->res.diagnosis, sizeof s->res.diagnosis, MPI_CHAR, who, comm));
  PetscFunctionReturn(0);
}

/* Whether the Newton solve's banded LU factors in place (HsSolverSetInPlace, HsPCSetInPlace): the formulation
 * fills its whole Jacobian again at each evaluation (s->jac_refill, still SNES' Jacobian function: not -snes_fd)
 * and nothing reads the matrix between a factorization and the next evaluation: an exact direct solve
 * (HsSNESExactDirection: Newton, KSPPREONLY, nothing lagged; a reused preconditioner the PC declines itself,
 * InPlace in bvp/petscext/pcband.c), the line search hsbt
 * (no product: the slope -||F||^2 of that direction; a failed search ends the solve without SNES' local-minimum test,
 * J^T F) without a pre-check, and no KSP monitor (KSPPREONLY multiplies for them) or view of the operator
 * (-ksp_view_mat, -ksp_view_pmat, their explicit forms, -ksp_view_final_residual). Set before each SNESSolve: the
 * strategy changes the line search between them. Collective. */
static PetscErrorCode SetInPlace(HsSolver s)
{
  KSP            ksp;
  PC             pc;
  SNESLineSearch ls;
  PetscBool      on                                                    = s->in_place, band, has, reads;
  PetscErrorCode (*fn)(SNES, Vec, Mat, Mat, void *)                    = NULL;
  PetscErrorCode (*pre)(SNESLineSearch, Vec, Vec, PetscBool *, void *) = NULL;

  PetscFunctionBeginUser;
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(HsPCHasInPlace(pc, &band));
  PetscCall(SNESGetJacobian(s->snes, NULL, NULL, &fn, NULL));
  on = (PetscBool)(on && band && s->jac_refill && fn == s->jac_refill);
  if (on) {
    PetscCall(HsSNESExactDirection(s->snes, &on));
    PetscCall(SNESGetLineSearch(s->snes, &ls));
    PetscCall(SNESLineSearchGetPreCheck(ls, &pre, NULL));
    PetscCall(PetscObjectTypeCompare((PetscObject)ls, SNESLINESEARCHHSBT, &has));
    PetscCall(HsKSPReadsOperator(ksp, &reads));
    on = (PetscBool)(on && !pre && has && !reads);
  }
  PetscCall(HsPCSetInPlace(pc, on));
  PetscFunctionReturn(0);
}

/*@ HsSolverSolveNewton - Newton, repeated while MUMPS runs out of workspace; then the residual at the
    final iterate (whose evaluation also leaves the formulation's data there). bvp/ internal. @*/
PetscErrorCode HsSolverSolveNewton(HsSolver s)
{
  char                trial[sizeof s->res.diagnosis] = "";
  PetscBool           retry                          = PETSC_TRUE, final;
  SNESConvergedReason last;
  PetscInt            held = 0;

  PetscFunctionBeginUser;
  s->res.mumps_retries = 0;
  PetscCall(VecDestroy(&s->eval_X)); /* FinalResidual: this solve's evaluations only */
  PetscCall(VecDestroy(&s->eval_F));
  PetscCall(SNESGetConvergedReason(s->snes, &last));
  if (last == SNES_DIVERGED_LINEAR_SOLVE) /* the last solve's factorization failed: not to be reused */
    PetscCall(HsSolverResetFactorization(s));
  if (s->hold_T) { /* a free T from a cold start: at lambda = 0 nothing depends on T to first order (the
                      Jacobian is singular); solve with T held at its start first, then release it */
    s->T_hold = HsSolverStartT(s);
    PetscCall(SetInPlace(s));
    PetscCall(SNESSolve(s->snes, NULL, s->X));
    PetscCall(SNESGetIterationNumber(s->snes, &held));
    s->hold_T = PETSC_FALSE;
    PetscCall(
        PetscInfo(s, "free T: %" PetscInt_FMT " Newton iterations with T held at %g\n", held, (double)s->T_hold));
    s->res.hold_iterations = held;
  }
  while (retry) {
    PetscCall(SetInPlace(s));
    PetscCall(SNESSolve(s->snes, NULL, s->X));
    PetscCall(SNESGetConvergedReason(s->snes, &s->res.reason));
    PetscCall(MumpsWorkspaceRetry(s, &retry));
  }
  if (s->res.reason <= 0 && !s->interrupted && s->polish_it >= 0) { /* ended during the polish: its best iterate */
    PetscCall(HsSolverPolishEnd(s));
    s->res.reason = SNES_CONVERGED_FNORM_ABS;
  }
  s->polish_it = -1;
  PetscCall(SNESGetIterationNumber(s->snes, &s->res.newton_iterations));
  s->res.newton_iterations += held; /* this call's (a homotopy calls it again) */
  PetscCall(SNESGetLinearSolveIterations(s->snes, &s->res.ksp_iterations));
  if (!s->diagnosis_keep) { /* the final evaluation's failure, else the latest trial point's */
    PetscCall(PetscStrncpy(trial, s->res.diagnosis, sizeof trial));
    s->res.diagnosis[0] = 0;
  }
  PetscCall(FinalResidual(s));
  PetscCall(VecNorm(s->F, NORM_2, &s->res.residual_norm));
  if (s->res.reason == SNES_DIVERGED_LINE_SEARCH && !s->interrupted) { /* at the noise floor? (convergence.c) */
    PetscBool at, evaluated;
    PetscInt  it;
    PetscCall(SNESGetIterationNumber(s->snes, &it));
    PetscCall(HsSolverAtNoiseFloor(s, s->X, s->F, s->res.residual_norm, it, &at, &evaluated));
    if (at)
      s->res.reason = SNES_CONVERGED_FNORM_ABS;
    if (evaluated)
      PetscCall(SNESComputeFunction(s->snes, s->X, s->F)); /* the formulation's data at X again */
  }
  PetscCall(PetscStrncpy(s->res.status,
                         s->interrupted    ? "INTERRUPTED"
                         : s->res.at_floor ? "CONVERGED_NOISE_FLOOR"
                                           : SNESConvergedReasons[s->res.reason],
                         sizeof s->res.status));
  s->res.converged = (PetscBool)(s->res.reason > 0 && !PetscIsInfOrNanReal(s->res.residual_norm) && !s->interrupted);
  {
    PetscInt it, steps = 0;
    PetscCall(SNESGetIterationNumber(s->snes, &it));
    if (s->res.converged) /* at a floor the iterate is not solved to: Newton goes on without its line search */
      PetscCall(HsSolverFloorNewton(s, &steps));
    s->res.newton_iterations += steps;
    PetscCall(HsSolverVerifyConvergence(s, it + steps)); /* "converged" means converged (convergence.c) */
  }
  if (s->res.reason == SNES_DIVERGED_LINEAR_SOLVE && !s->interrupted)
    PetscCall(HsSolverJacobianRankTest(s)); /* names the null space (singular.c) */
  final =
      (PetscBool)(s->res.diagnosis[0] != 0); /* on some rank: that one is the diagnosis, whatever the others tried */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &final, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  if (!s->res.converged && !s->interrupted && !final && trial[0])
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE,
                                   "Newton stopped after a failed evaluation (a line-search trial point, or the "
                                   "sensitivities at the iterate): %s",
                                   trial));
  if (!s->res.converged && s->T_baddata != 0 && !s->res.diagnosis[0])
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE,
                                   "Newton tried the final time T = %g, where the problem's data are invalid (R(T) not "
                                   "positive definite, or B, R or x0 not finite there)",
                                   (double)s->T_baddata));
  if (!s->res.converged && s->T_left != 0 && !s->res.diagnosis[0])
    PetscCall(
        HsSolverSetDiagnosis(s, PETSC_TRUE,
                             "Newton tried the final time T = %g outside [T_min, T_max] = [%g, %g]; an optimum on "
                             "a bound of T satisfies no condition on H^d: only the direct NLP (-hs_bvp_type "
                             "ipopt) reaches it",
                             (double)s->T_left, (double)s->prob->T_min, (double)s->prob->T_max));
  PetscFunctionReturn(0);
}

/*@ HsSolverShareFinalTime - a free final time: T from the rank that holds it (owner) to every rank,
    where the problem (HsProblemSetFinalTime) and the discretization (HsDiscSetHorizon) take it; *bad
    (the same on every rank) for a T outside [T_min, T_max] or not positive, remembered for the
    diagnosis of a failed solve (bvp/ internal: the formulations' residuals). Collective. @*/
PetscErrorCode HsSolverShareFinalTime(HsSolver s, PetscMPIInt owner, PetscReal T, PetscBool *bad)
{
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Bcast(&T, 1, MPIU_REAL, owner, PetscObjectComm((PetscObject)s)));
  *bad = (PetscBool) !(T > 0 && T >= s->prob->T_min && T <= s->prob->T_max);
  if (*bad) {
    s->T_left = T; /* HsSolverSolveNewton says so if the solve fails */
    PetscFunctionReturn(0);
  }
  HsProblemSetFinalTime(s->prob, T);
  if (HsDiscSetHorizon(s->disc)) { /* T in the data: R(T) not positive definite, or not finite data */
    *bad         = PETSC_TRUE;
    s->T_baddata = T;
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverRestoreFinalTime - a free final time of the shared problem back to the last solve's, in the
    problem and the discretization, after sub-solves of the same problem moved it (bvp/ internal: the
    grids of -hs_extrapolate and -hs_study, the IPOPT solves of -hs_check_extremal). No-op for a fixed
    T. Not collective. @*/
void HsSolverRestoreFinalTime(HsSolver s)
{
  if (!s->prob->free_T)
    return;
  HsProblemSetFinalTime(s->prob, s->res.T);
  (void)HsDiscSetHorizon(s->disc); /* the solution's T passed these checks */
}

/*@ HsSolverFinalTimeColumn - a free T on which the problem's data depend (prob->data_T;
    docs/free-final-time.md): the Jacobian's column of T as the central difference
    (F(X + dT e_T) - F(X - dT e_T)) / (2 dT) of the formulation's residual res, every other unknown
    held, dT = HS_FT_FD_STEP (1 + T) at X's T (one-sided where T + dT or T - dT leaves [T_min, T_max]);
    iT is T's global index in X. The residual itself is exact, so this changes Newton's path, not its
    answer (error about 1e-10 relative, below what Newton needs). Afterwards the problem and the
    discretization hold X's T. Collective (bvp/ internal).
  Output: C - the column (a vector like X); *dom - an evaluation left the domain.
@*/
PetscErrorCode HsSolverFinalTimeColumn(HsSolver s, Vec X, PetscInt iT, HsResidualFn res, Vec C, PetscBool *dom)
{
  PetscReal T = 0, dT, Tp, Tm;
  PetscInt  lo, hi;
  PetscBool d1 = PETSC_FALSE, d2 = PETSC_FALSE;
  Vec       Xp, Fm;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(X, &lo, &hi));
  if (iT >= lo && iT < hi) { /* X's T, from its owner */
    const PetscScalar *x;
    PetscCall(VecGetArrayRead(X, &x));
    T = x[iT - lo];
    PetscCall(VecRestoreArrayRead(X, &x));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &T, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  dT = HS_FT_FD_STEP * (1 + T), Tp = T + dT, Tm = T - dT;
  if (Tp > s->prob->T_max)
    Tp = T;
  if (!(Tm >= s->prob->T_min && Tm > 0))
    Tm = T;
  PetscCall(VecDuplicate(X, &Xp));
  PetscCall(VecDuplicate(X, &Fm));
  for (int side = 0; side < 2; side++) {
    PetscCall(VecCopy(X, Xp));
    if (iT >= lo && iT < hi)
      PetscCall(VecSetValue(Xp, iT, side ? Tm : Tp, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(Xp));
    PetscCall(VecAssemblyEnd(Xp));
    PetscCall(res(s, Xp, side ? Fm : C, side ? &d2 : &d1));
  }
  PetscCall(VecAXPY(C, -1, Fm));
  PetscCall(VecScale(C, Tp > Tm ? 1 / (Tp - Tm) : 0)); /* [T_min, T_max] narrower than dT: no column */
  PetscCall(VecDestroy(&Xp));
  PetscCall(VecDestroy(&Fm));
  HsProblemSetFinalTime(s->prob, T);
  *dom = (PetscBool)(d1 || d2 || HsDiscSetHorizon(s->disc));
  PetscFunctionReturn(0);
}

/* The ranks' peak resident memory (getrusage ru_maxrss, KB on Linux) into s->res.peak_memory_mb. */
static PetscErrorCode PeakMemory(HsSolver s)
{
  struct rusage ru;
  PetscReal     mb = 0, mx, mn, sum;
  PetscMPIInt   size;
  MPI_Comm      comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  if (!getrusage(RUSAGE_SELF, &ru))
    mb = (PetscReal)ru.ru_maxrss / 1024;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Allreduce(&mb, &mx, 1, MPIU_REAL, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&mb, &mn, 1, MPIU_REAL, MPI_MIN, comm));
  PetscCallMPI(MPI_Allreduce(&mb, &sum, 1, MPIU_REAL, MPI_SUM, comm));
  s->res.peak_memory_mb[0] = mx, s->res.peak_memory_mb[1] = mn, s->res.peak_memory_mb[2] = sum / size;
  PetscFunctionReturn(0);
}

/* A signal stopped a sub-solve that makes the start (the direct solve of -hs_initial_guess direct, the transcription
   solve of -hs_shoot_init transcription; HsSolverStopIfInterrupted marked s, status 5): the solve ends before its
   Newton, not converged, with the start as its iterate (issue 38, round 27: these sub-solves' failures had been errors,
   exit 1). */
static PetscErrorCode StoppedAtStart(HsSolver s)
{
  PetscFunctionBeginUser;
  s->res.converged = PETSC_FALSE, s->res.newton_iterations = 0, s->res.reason = SNES_CONVERGED_ITERATING;
  PetscCall(PetscStrncpy(s->res.status, "INTERRUPTED", sizeof s->res.status));
  PetscFunctionReturn(0);
}

/* -hs_initial_guess direct: the direct solution (HS_HOOK_DIRECT_GUESS) becomes the stored initial guess; without
   the hook the guess stays the default one. */
static PetscErrorCode DirectGuess(HsSolver s)
{
  HsSolverDirectGuessFn guess;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetHook(HS_HOOK_DIRECT_GUESS, (PetscVoidFunction *)&guess));
  if (guess)
    PetscCall((*guess)(s, NULL));
  PetscFunctionReturn(0);
}

#define HS_BOUNDS_EPS_SLACK 1e-6 /* a smoothing within this (relative) of eps_min is eps_min */

/* After a failed step of the continuation: back to the last converged smoothing e (X from Xbest), re-evaluated
   there, reported not converged for the problem as posed. */
static PetscErrorCode KeepSmoothed(HsSolver s, Vec Xbest, PetscReal e, PetscReal scale, PetscReal enext)
{
  char     why[sizeof s->res.status];
  PetscInt its = s->res.newton_iterations;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(why, s->res.status, sizeof why));
  PetscCall(VecCopy(Xbest, s->X));
  PetscCheck(HsDiscSetControlSmoothing(s->disc, e * scale) == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "smoothing");
  PetscCall(HsSolverSolveNewton(s));
  s->res.newton_iterations += its;
  s->res.bounds.eps = e * scale;
  if (!s->res.converged)
    PetscFunctionReturn(0);
  s->res.converged = PETSC_FALSE;
  PetscCall(PetscStrncpy(s->res.status, "SMOOTHED_ONLY", sizeof s->res.status));
  PetscCall(
      HsSolverSetDiagnosis(s, PETSC_TRUE,
                           "bounded controls: Newton converged with the control law smoothed by eps = %.3g but "
                           "not at eps = %.3g (%s); the solution kept is the smoothed problem's (eps = %.3g), not "
                           "the exact bounded one (docs/controls.md: -hs_bounds_eps_factor closer to 1)",
                           (double)(e * scale), (double)(enext * scale), why, (double)(e * scale)));
  PetscFunctionReturn(0);
}

/*@ HsSolverSolveBounded - Newton for a problem with bounded controls (docs/controls.md): the eps-continuation of
    HsSolverSetBoundsSmoothing, each step warm from the last, then the exact projection (eps = 0, a semismooth
    Newton: the law's generalized derivative); from_solution (a warm start, the direct guess): the law as posed at
    once. A failed first step says that the bounds may make the terminal state
    unreachable; a failed later step keeps the last converged smoothing, reported not converged (SMOOTHED_ONLY).
    bvp/ internal; collective. @*/
PetscErrorCode HsSolverSolveBounded(HsSolver s, PetscBool from_solution)
{
  PetscReal scale = HsProblemBoundsScale(s->prob), e = s->bnd_eps0, best = -1;
  PetscBool bang = HsProblemBangBang(s->prob);
  PetscInt  its = 0, steps = 0;
  Vec       Xbest;

  PetscFunctionBeginUser;
  if (from_solution)
    e = bang ? s->bnd_eps_min : 0;
  if (s->restart_bnd_e >= 0) /* -hs_restart from a checkpoint of the continuation: on from its smoothing */
    e = s->restart_bnd_e, s->restart_bnd_e = -1;
  if (bang)
    e = PetscMax(e, s->bnd_eps_min);
  else if (e > 0 && e < s->bnd_eps_min)
    e = 0;
  PetscCall(VecDuplicate(s->X, &Xbest));
  for (;;) {
    PetscCheck(HsDiscSetControlSmoothing(s->disc, e * scale) == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "smoothing %g",
               (double)(e * scale));
    s->bnd_e_now = e; /* the checkpoints' bounds_smoothing */
    PetscCall(HsSolverSolveNewton(s));
    its += s->res.newton_iterations, steps++;
    PetscCall(PetscInfo(s, "bounded controls: eps = %g, %s after %" PetscInt_FMT " Newton iterations\n",
                        (double)(e * scale), s->res.status, s->res.newton_iterations));
    /* an intermediate smoothing needs no vouching: a start for the next one (converged to the tolerance will do) */
    if ((!s->res.converged && !(e > 0 && s->res.tolerance_only && !(bang && e <= s->bnd_eps_min))) || s->interrupted)
      break;
    PetscCall(VecCopy(s->X, Xbest));
    best                = e;
    s->res.diagnosis[0] = 0, s->diagnosis_keep = PETSC_FALSE; /* an accepted step's remarks are not the solve's */
    if (e == 0 || (bang && e <= s->bnd_eps_min))
      break;
    e *= s->bnd_factor;
    if (e < s->bnd_eps_min * (1 + HS_BOUNDS_EPS_SLACK)) /* eps0 factor^k may miss eps_min by round-off */
      e = bang ? s->bnd_eps_min : 0;
  }
  s->bnd_e_now             = s->interrupted ? e : -1;
  s->res.bounds.eps        = e * scale;
  s->res.newton_iterations = its;
  if (!s->res.converged && !s->interrupted && best >= 0) {
    s->res.newton_iterations = 0;
    PetscCall(KeepSmoothed(s, Xbest, best, scale, e));
    s->res.newton_iterations += its;
  } else if (!s->res.converged && !s->interrupted && !from_solution) {
    char prev[sizeof s->res.diagnosis];
    PetscCall(PetscStrncpy(prev, s->res.diagnosis, sizeof prev));
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE,
                                   "bounded controls: Newton did not converge even with the control law smoothed "
                                   "(eps = %.3g): the bounds u_min/u_max may make the terminal state unreachable in "
                                   "time T (the bounded control cannot do the work needed), or the start is too far "
                                   "(-hs_strategy auto tries others); check the bounds and T, or compare the direct "
                                   "solver (-hs_scheme direct -hs_direct_solver ipopt)%s%s",
                                   (double)(e * scale), prev[0] ? "; Newton: " : "", prev));
  }
  s->res.bounds.steps = steps + (best >= 0 && !s->res.converged ? 1 : 0);
  s->res.bounds.exact = (PetscBool)(s->res.converged && e == 0);
  PetscCall(VecDestroy(&Xbest));
  PetscFunctionReturn(0);
}

/*@ HsSolverSolve - solves the discrete necessary conditions by Newton's method (the formulation's own
  solver for ipopt), then, for a cold start that failed, the fallbacks reached through the drivers' hooks.

  Collective.

  Input Parameter:
. s - the solver

  Options Database Keys:
+ -hs_initial_guess <default|direct> - where the start comes from [HsSolverSetInitialGuessType]
. -hs_strategy <auto|newton>, -hs_strategy_continue <NAME=FROM,...> - the fallbacks [HsSolverSetStrategy]
- every key of HsSolverSetFromOptions()

  Notes:
  A diverged solve is a result (HsResults.converged = false, with the SNES reason and, where the formulation can
  tell, a diagnosis), not an error.

  The start: the previous solution if HsSolverSetWarmStart() and a solve happened (or the iterate of
  HsSolverSetIterate()), else the initial guess (HsSolverSetInitialGuess(), or the boundary states
  interpolated with lambda = 0). The problem's parameters may have changed since set-up or the last
  solve (continuation): the discretization is rebuilt from them. Parameters that change the problem's
  size must not change after set-up (an error says so).

  What it may call beyond the formulation (hooks registered by HsInitializePackage, bvp/register.c):
  HS_HOOK_DIRECT_GUESS (-hs_initial_guess direct: the direct problem solved first), HS_HOOK_HOMOTOPY (Newton
  from the direct solution failed: the costate homotopy) and HS_HOOK_STRATEGY (-hs_strategy auto: l2 line
  search, grid sequencing, the direct guess, continuation). These create solvers of their own and solve
  them with HsSolverSolve; the strategy does nothing for a solve it started itself (interface/hsbvpimpl.h).

.seealso: HsSolverSetUp(), HsSolverGetResults(), HsSolverView(), HsSolverSetStrategy(), HsSolverSetInitialGuessType()
@*/
PetscErrorCode HsSolverSolve(HsSolver s)
{
  PetscBool          cold, resumed;
  HsSolverStrategyFn strategy;

  PetscFunctionBeginUser;
  PetscCall(HsSolverSetUp(s));
  s->t_start                = MPI_Wtime();
  s->res.diagnosis[0]       = 0;
  s->diagnosis_keep         = PETSC_FALSE;
  s->res.noise_floor        = 0;
  s->res.extrap.done        = PETSC_FALSE;
  s->res.at_floor           = PETSC_FALSE;
  s->res.tolerance_only     = PETSC_FALSE;
  s->res.sensitivity_growth = 0;
  s->res.regularization     = -1;
  s->res.extremal.done      = PETSC_FALSE;
  if (!(s->warm && s->solved))
    s->guess_info[0] = 0;
  PetscCheck(s->prob->n == s->n && s->prob->m == s->m, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONGSTATE,
             "problem '%s' has n = %d, m = %d, but the solver was set up for n = %d, m = %d: a parameter that changes "
             "the size (ncar's cars) must be set before HsSolverSetUp()",
             s->prob->name, s->prob->n, s->prob->m, (int)s->n, (int)s->m);
  /* the problem's parameters may have changed since set-up or the last solve (B, R, T are read by the
   * discretization): rebuild it */
  PetscCall(HsSolverSetUpDiscretization(s));
  if (s->ops->presolve)
    PetscCall((*s->ops->presolve)(s));
  s->interrupted = PETSC_FALSE, s->interrupt_unsaved = PETSC_FALSE, s->interrupt_msg[0] = 0;
  if (!s->ckpt_last_t)
    s->ckpt_last_t = s->t_start;
  s->res.hold_iterations = 0, s->T_left = 0, s->T_baddata = 0;
  /* a free T is held first only from the default guess (lambda = 0, where the Jacobian is singular) */
  s->hold_T = (PetscBool)(s->prob->free_T && !s->restart_pending && !(s->warm && s->solved) && !s->guess &&
                          s->guess_type != HS_GUESS_DIRECT);
  cold      = (PetscBool)(!(s->warm && s->solved) && !s->restart_pending);
  /* a restart of a cold solve (not of a continuation's step) resumes its first attempt: if that fails, the fallbacks
     of -hs_strategy auto follow from the stored guess, as in the run it resumes (round 19: a checkpoint taken in a
     first Newton that was to fail ended the restart not converged, exit 2, where the uninterrupted run converged) */
  resumed = (PetscBool)(s->restart_pending && !s->restart_cont[0] && !(s->warm && s->solved));
  s->ckpt_it0 = s->restart_pending ? s->restart_it : 0;
  if (s->restart_pending) /* -hs_restart: X holds the checkpoint's iterate */
    PetscCall(PetscStrncpy(s->guess_info, "restarted from a checkpoint", sizeof s->guess_info));
  else if (s->guess_type == HS_GUESS_DIRECT && !(s->warm && s->solved))
    PetscCall(DirectGuess(s)); /* the direct solution becomes the stored initial guess */
  if (!(s->warm && s->solved) && !s->restart_pending) {
    s->guess_implied_done = PETSC_FALSE;
    PetscCall((*s->ops->guess)(s, s->X));
    PetscCheck(s->guess_costates != HS_GUESS_COSTATES_IMPLIED || s->guess_implied_done, PetscObjectComm((PetscObject)s),
               PETSC_ERR_SUP,
               "-hs_guess_costates implied: only for a constrained system (holonomic constraints) with the "
               "second-order scheme (not -hs_scheme conserving4); problem '%s' with this scheme is not one",
               s->prob->name);
    if (!s->guess_info[0] && s->guess) /* summary.json's initial_guess: where the stored guess came from */
      PetscCall(PetscStrncpy(s->guess_info, s->guess_source, sizeof s->guess_info));
    else if (!s->guess_info[0] && s->frame_guess && !s->guess)
      PetscCall(PetscStrncpy(s->guess_info,
                             s->guess_implied_done ? "frame geodesic, implied costates" : "frame geodesic",
                             sizeof s->guess_info));
  }
  s->restart_pending   = PETSC_FALSE;
  s->res.bounds.active = (PetscBool)(!s->ops->solve && HsDiscIsBounded(s->disc)); /* docs/controls.md */
  if (s->interrupted) /* a signal stopped a sub-solve of the start: nothing is solved */
    PetscCall(StoppedAtStart(s));
  else if (s->ops->solve)
    PetscCall((*s->ops->solve)(s));
  else if (s->res.bounds.active) /* from a solution of the bounded problem (warm, direct guess): no smoothing */
    PetscCall(HsSolverSolveBounded(s, (PetscBool)(!cold || s->guess_type == HS_GUESS_DIRECT)));
  else
    PetscCall(HsSolverSolveNewton(s));
  if (s->guess_type == HS_GUESS_DIRECT && !s->res.converged && !s->interrupted && cold &&
      !s->singular_end) { /* (a Jacobian singular at the floor: the homotopy cannot help, FloorNotSolved) */
    HsSolverHomotopyFn homotopy;
    PetscCall(HsSolverGetHook(HS_HOOK_HOMOTOPY, (PetscVoidFunction *)&homotopy));
    if (homotopy)
      PetscCall((*homotopy)(s)); /* from the direct costate equation to ours */
  }
  PetscCall(HsSolverGetHook(HS_HOOK_STRATEGY, (PetscVoidFunction *)&strategy));
  if (strategy)
    PetscCall((*strategy)(s, (PetscBool)(cold || resumed), s->t_start)); /* -hs_strategy auto: the fallbacks */
  if (s->res.bounds.active) { /* the law the solution satisfies (a fallback solves the law as posed) */
    s->res.bounds.eps   = HsDiscGetControlSmoothing(s->disc);
    s->res.bounds.exact = (PetscBool)(s->res.converged && s->res.bounds.eps == 0);
  }
  if (s->ops->postsolve)
    PetscCall((*s->ops->postsolve)(s));
  PetscCall(PetscStrncpy(s->res.initial_guess, s->guess_info, sizeof s->res.initial_guess));
  PetscCall(ShareDiagnosis(s));
  PetscCall(HsSolverComputeDiagnostics(s));
  s->res.wall_time_s = MPI_Wtime() - s->t_start;
  PetscCallMPI(MPI_Bcast(&s->res.wall_time_s, 1, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
  PetscCall(PeakMemory(s));
  s->solved = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsSolverSubSolveStopped - after a driver's sub-solve t (bvp/ internal: -hs_initial_guess direct's direct solve,
    -hs_shoot_init transcription's transcription solve): if it did not converge because a signal stopped it, s ends as
    interrupted (HsSolverStopIfInterrupted, WHAT naming the sub-solve; unsaved, status 5: nothing of it to resume),
    *t is destroyed and *stop set, and the caller returns; otherwise *stop is false and t is kept (for the caller's
    error on a sub-solve not converged: issue 38, round 27, it had been that error, exit 1, for a stop). Collective. @*/
PetscErrorCode HsSolverSubSolveStopped(HsSolver s, PetscBool converged, const char what[], HsSolver *t, PetscBool *stop)
{
  PetscFunctionBeginUser;
  *stop = PETSC_FALSE;
  if (!converged)
    PetscCall(HsSolverStopIfInterrupted(s, what, stop));
  if (*stop)
    PetscCall(HsSolverDestroy(t));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetIterate - gets the unknowns of the formulation.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. X - the unknowns (transcription: the node layout; shooting: the segment starts z_s); read-only: change them with
      HsSolverSetIterate()

  Notes:
  Call it after HsSolverSetUp().

.seealso: HsSolverSetIterate(), HsSolverGetSolution()
@*/
PetscErrorCode HsSolverGetIterate(HsSolver s, Vec *X)
{
  PetscFunctionBeginUser;
  PetscCheck(s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverGetIterate() needs HsSolverSetUp() first");
  *X = s->X;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetIterate - copies X into the unknowns of the formulation.

  Collective.

  Input Parameters:
+ s - the solver
- X - the unknowns, laid out as HsSolverGetIterate's

  Notes:
  With a warm start the next solve starts from it (continuation: predictor, retry after a failed step). Call it
  after HsSolverSetUp().

.seealso: HsSolverGetIterate(), HsSolverSetWarmStart(), HsSolverSolve()
@*/
PetscErrorCode HsSolverSetIterate(HsSolver s, Vec X)
{
  PetscFunctionBeginUser;
  PetscCheck(s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverSetIterate() needs HsSolverSetUp() first");
  PetscCall(VecCopy(X, s->X));
  if (s->ops->resetiterate)
    PetscCall((*s->ops->resetiterate)(s));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetSolution - gets the solution of the last solve in the node layout.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. X - the solution (x_k, lambda_{k+1/2}), 4n values per node k = 0..N (lambda_{N+1/2} = 0), distributed in time
      order

.seealso: HsSolverGetIterate(), HsSolverGetResults(), HsSolverWriteOutput()
@*/
PetscErrorCode HsSolverGetSolution(HsSolver s, Vec *X)
{
  PetscFunctionBeginUser;
  PetscCheck(s->setupcalled, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverGetSolution() needs HsSolverSetUp() first");
  *X = s->Xnodes;
  PetscFunctionReturn(0);
}
