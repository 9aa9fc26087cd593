/* hamshoot: the package's registry, the top floor of bvp/ below the executable. HsInitializePackage
 * registers the classes, the formulations of impls/, the PCs and the line search of petscext/ and the
 * drivers' hooks (interface/hsbvpimpl.h), as PETSc's XXXInitializePackage / XXXRegisterAll do: the one
 * place that names them all. HsSolverCreate, HsSolverRegister and HsContinuationCreate call it, so users
 * need not; it is the one function of a higher floor that lower floors may call (tests/check_sources.py). */
#include "drivers/hsdrivers.h"
#include "impls/hsimpls.h"

static PetscBool hs_package_initialized = PETSC_FALSE;

static PetscErrorCode HsFinalizePackage(void)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFunctionListDestroy(&HsSolverList));
  PetscCall(PetscFunctionListDestroy(&HsSolverHookList));
  hs_package_initialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The built-in formulations (transcription, shooting, ipopt). */
static PetscErrorCode RegisterFormulations(void)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFunctionListAdd(&HsSolverList, HSSOLVERTRANSCRIPTION, HsSolverCreate_Transcription));
  PetscCall(PetscFunctionListAdd(&HsSolverList, HSSOLVERSHOOTING, HsSolverCreate_Shooting));
  PetscCall(PetscFunctionListAdd(&HsSolverList, HSSOLVERIPOPT, HsSolverCreate_Ipopt));
  PetscFunctionReturn(0);
}

/* The fallbacks HsSolverSolve reaches through hooks (bvp/drivers/). */
static PetscErrorCode RegisterHooks(void)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverRegisterHook(HS_HOOK_DIRECT_GUESS, (PetscVoidFunction)HsSolverGuessFromDirect));
  PetscCall(HsSolverRegisterHook(HS_HOOK_HOMOTOPY, (PetscVoidFunction)HsSolverSolveHomotopy));
  PetscCall(HsSolverRegisterHook(HS_HOOK_STRATEGY, (PetscVoidFunction)HsSolverSolveStrategy));
  PetscCall(HsContinuationRegisterStage(HS_CONTINUATION_ARCLENGTH, HsContinuationRunStageArclength));
  PetscFunctionReturn(0);
}

/*@ HsInitializePackage - registers hamshoot's classes, formulations, PCs, line search and driver hooks with PETSc.

  Not collective.

  Notes:
  Registers the classes (HsSolver, HsContinuation), the formulations, the PCs (hsband, hsdrop), the line search
  (hsbt) and the drivers' hooks; called by HsSolverCreate(), so users need not call it. Idempotent.

.seealso: HsSolverRegister(), HsSolverCreate()
@*/
PetscErrorCode HsInitializePackage(void)
{
  PetscFunctionBeginUser;
  if (hs_package_initialized)
    PetscFunctionReturn(0);
  hs_package_initialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("HsSolver", &HS_SOLVER_CLASSID));
  PetscCall(PetscClassIdRegister("HsContinuation", &HS_CONTINUATION_CLASSID));
  { /* -info's name for both ("<hs>"), so that -info :hs shows their lines alone and -info :~hs hides them; without
       it their lines read "<(null)>" and no class list selects them (PETSc's own packages do the same) */
    PetscClassId ids[2] = {HS_SOLVER_CLASSID, HS_CONTINUATION_CLASSID};
    PetscCall(PetscInfoProcessClass("hs", 2, ids));
  }
  PetscCall(PetscLogEventRegister("HsNoiseEstimate", HS_SOLVER_CLASSID, &HS_NOISE_ESTIMATE));
  PetscCall(PCRegister(PCHSBAND, PCCreate_HsBand));                                 /* petscext/pcband.c */
  PetscCall(PCRegister(PCHSDROP, PCCreate_HsDrop));                                 /* petscext/pcdrop.c */
  PetscCall(PCRegister(PCHSSLAB, PCCreate_HsSlab));                                 /* petscext/pcslab.c */
  PetscCall(PCRegister(PCHSGATHER, PCCreate_HsGather));                             /* petscext/pcgather.c */
  PetscCall(SNESLineSearchRegister(SNESLINESEARCHHSBT, SNESLineSearchCreate_HsBT)); /* petscext/linesearch.c */
  PetscCall(RegisterFormulations());
  PetscCall(RegisterHooks());
  PetscCall(PetscRegisterFinalize(HsFinalizePackage));
  PetscFunctionReturn(0);
}
