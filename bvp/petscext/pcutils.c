/* hamshoot: what any code may ask any preconditioner, without naming its type (floor petscext/).
 *
 * PETSc's way: a PC type answers a question by a function it composes on itself in its constructor
 * (PetscObjectComposeFunction, removed in its destroy), and the asker calls PetscTryMethod /
 * PetscObjectQueryFunction, as PCBJacobiGetSubKSP does. The questions and who answers them:
 *
 *   HsPCGetInner          "HsPCGetInner_C"          the PC that factors instead (hsband outside its limits,
 *                                                   hsdrop always); NULL otherwise
 *   HsPCGetDeterminant    "HsPCGetDeterminant_C"    hsband (from its factors), hsdrop (its LU's); a plain
 *                                                   LU by MUMPS is answered here (INFOG(34), RINFOG(12))
 *   HsPCRequestDeterminant                          before a factorization: a plain LU by MUMPS is asked for
 *                                                   it here (ICNTL(33)); the others compute it anyway
 *   HsPCSetInPlace        "HsPCSetInPlace_C"        hsband (U into the matrix' values); others: no-op
 *   HsPCIsExact           "HsPCIsExact_C"           hsband; a plain LU by MUMPS is answered here
 *   HsPCGetDropped        "HsPCGetDropped_C"        hsdrop: what it keeps of the operator
 *   HsPCBorrowWork        "HsPCBorrowWork_C"        -hs_condense's PC: its workspace from a larger one's
 *
 * A new PC composes the functions it answers in its create routine; no other file changes. The KSP of a
 * Newton formulation is configured by HsKSPSetLinearSolver, which alone names the PC types. */
#include "hspetscext.h"

#include <petsc/private/kspimpl.h>

/*@ HsPCGetInner - the PC that factors the operator instead of pc (hsband's MUMPS LU outside its limits, hsdrop's
    LU of the dropped matrix), or NULL if pc factors itself or is of another type. Not collective.

.seealso: HsPCGetDeterminant(), HsPCIsExact()
@*/
PetscErrorCode HsPCGetInner(PC pc, PC *inner)
{
  PetscFunctionBeginUser;
  *inner = NULL;
  PetscTryMethod(pc, "HsPCGetInner_C", (PC, PC *), (pc, inner));
  PetscFunctionReturn(0);
}

/*@ HsPCRequestDeterminant - asks pc, before its factorization, to compute the determinant of its operator:
    ICNTL(33) for a plain LU by MUMPS (the PCs of petscext compute it anyway); no-op for other PCs.
    Not collective; pc needs its operators.

.seealso: HsPCGetDeterminant()
@*/
PetscErrorCode HsPCRequestDeterminant(PC pc)
{
  Mat F;

  PetscFunctionBeginUser;
  PetscCall(HsPCGetMumpsFactor(pc, &F));
#if defined(PETSC_HAVE_MUMPS)
  if (F)
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
#endif
  PetscFunctionReturn(0);
}

/*@ HsPCGetDeterminant - the determinant m 2^e of the operator factored by pc (after its factorization):
    from the PC's composed "HsPCGetDeterminant_C", else from MUMPS (a plain LU asked with
    HsPCRequestDeterminant). *known = PETSC_FALSE if pc cannot tell (another solver, a failed factorization).
    Collective on pc.

.seealso: HsPCRequestDeterminant(), HsMumpsDeterminant()
@*/
PetscErrorCode HsPCGetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PetscErrorCode (*f)(PC, PetscReal *, PetscInt *, PetscBool *) = NULL;
  Mat F;

  PetscFunctionBeginUser;
  *known = PETSC_FALSE;
  PetscCall(PetscObjectQueryFunction((PetscObject)pc, "HsPCGetDeterminant_C", &f));
  if (f) {
    PetscCall((*f)(pc, m, e, known));
    PetscFunctionReturn(0);
  }
  PetscCall(HsPCGetMumpsFactor(pc, &F));
  if (!F)
    PetscFunctionReturn(0);
  PetscCall(HsMumpsDeterminant(F, m, e, known));
  if (*known)
    PetscCall(PetscInfo(pc, "det J = %.15g 2^%" PetscInt_FMT " (MUMPS)\n", (double)*m, *e));
  PetscFunctionReturn(0);
}

/*@ HsPCHasInPlace - whether pc can store its factors in its operator's own values (HsPCSetInPlace). Not
    collective. @*/
PetscErrorCode HsPCHasInPlace(PC pc, PetscBool *has)
{
  PetscErrorCode (*f)(PC, PetscBool) = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQueryFunction((PetscObject)pc, "HsPCSetInPlace_C", &f));
  *has = (PetscBool)(f != NULL);
  PetscFunctionReturn(0);
}

/*@ HsPCSetInPlace - whether the factorizations of pc store their factors in the operator's own values (the
    matrix is then marked factored until its owner fills it again: HsPCBandSetInPlace); no-op for a PC that
    cannot (HsPCHasInPlace). Not collective. @*/
PetscErrorCode HsPCSetInPlace(PC pc, PetscBool flg)
{
  PetscFunctionBeginUser;
  PetscTryMethod(pc, "HsPCSetInPlace_C", (PC, PetscBool), (pc, flg));
  PetscFunctionReturn(0);
}

/* A plain LU by MUMPS solves to round-off with partial pivoting: no null-pivot detection (ICNTL(24)), static
   pivoting (CNTL(4) > 0) or low-rank compression (ICNTL(35)). */
static PetscErrorCode MumpsIsExact(PC pc, PetscBool *exact)
{
  PetscBool lu;
  Mat       F;

  PetscFunctionBeginUser;
  *exact = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCLU, &lu));
  if (!lu)
    PetscFunctionReturn(0);
  PetscCall(HsPCGetMumpsFactor(pc, &F));
#if defined(PETSC_HAVE_MUMPS)
  if (F) {
    PetscInt  nullpiv, blr;
    PetscReal statpiv;
    PetscCall(MatMumpsGetIcntl(F, 24, &nullpiv));
    PetscCall(MatMumpsGetIcntl(F, 35, &blr));
    PetscCall(MatMumpsGetCntl(F, 4, &statpiv));
    *exact = (PetscBool)(nullpiv == 0 && blr == 0 && statpiv <= 0);
  }
#endif
  PetscFunctionReturn(0);
}

/*@ HsPCIsExact - whether pc's factorization solves with its operator to round-off: partial pivoting, nothing
    dropped or perturbed. hsband answers for itself (and its inner LU); a plain LU by MUMPS without null-pivot
    detection, static pivoting or low-rank compression is exact; PETSc's own LU (no pivoting), Cholesky and
    other packages (SuperLU_dist pivots statically) are not. Not collective.

.seealso: HsSNESExactDirection()
@*/
PetscErrorCode HsPCIsExact(PC pc, PetscBool *exact)
{
  PetscErrorCode (*f)(PC, PetscBool *) = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQueryFunction((PetscObject)pc, "HsPCIsExact_C", &f));
  if (f)
    PetscCall((*f)(pc, exact));
  else
    PetscCall(MumpsIsExact(pc, exact));
  PetscFunctionReturn(0);
}

/*@ HsPCGetDropped - for a PC that factors its operator with entries dropped (hsdrop): the PC that factors it
    (inner) and *kept of the *stored entries of the operator (all ranks) in its *patterns-th pattern; inner = NULL
    and zeros for other PCs or before set-up. Not collective. @*/
PetscErrorCode HsPCGetDropped(PC pc, PC *inner, PetscInt *kept, PetscInt *stored, PetscInt *patterns)
{
  PetscFunctionBeginUser;
  *inner = NULL, *kept = *stored = *patterns = 0;
  PetscTryMethod(pc, "HsPCGetDropped_C", (PC, PC *, PetscInt *, PetscInt *, PetscInt *), (pc, inner, kept, stored, patterns));
  PetscFunctionReturn(0);
}

/*@ HsKSPSetLinearSolver - configures ksp as the linear solver ls of a Newton formulation (not AUTO: the caller
    resolves it, HsSolverSetDefaultPC): BAND, preonly with PC hsband; MUMPS, preonly with an LU by MUMPS; DROP,
    right-preconditioned GMRES with PC hsdrop; SLAB, DROP with hsdrop's inner PC hsslab. Logically collective. @*/
PetscErrorCode HsKSPSetLinearSolver(KSP ksp, HsLinearSolver ls)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  if (ls == HS_LINEAR_SOLVER_DROP || ls == HS_LINEAR_SOLVER_SLAB) { /* iterates on the exact operator: what is
                                                                        dropped costs iterations only */
    PetscCall(KSPSetType(ksp, KSPGMRES));
    /* right preconditioning: the test is on the true residual ||b - J x||, not on P^-1 times it, which a
       P made singular or ill-conditioned by what it drops makes small for a wrong x (measured: ncar with
       -pc_hsdrop_tol 1e-3 "converged" in 1 iteration to a step the line search rejected) */
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
    PetscCall(KSPSetTolerances(ksp, HS_DROP_KSP_RTOL, 1e-300, PETSC_DEFAULT, HS_DROP_KSP_MAXIT));
    PetscCall(PCSetType(pc, PCHSDROP));
    if (ls == HS_LINEAR_SOLVER_SLAB) { /* the dropped matrix factored slab by slab (pcslab.c) */
      PC inner;
      PetscCall(HsPCGetInner(pc, &inner));
      PetscCall(PCSetType(inner, PCHSSLAB));
    }
    PetscFunctionReturn(0);
  }
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  if (ls == HS_LINEAR_SOLVER_BAND) {
    PetscCall(PCSetType(pc, PCHSBAND));
    PetscFunctionReturn(0);
  }
  PetscCall(PCSetType(pc, PCLU));
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
#endif
  PetscFunctionReturn(0);
}

/*@ HsKSPReadsOperator - whether anything multiplies by ksp's operator or views it between its factorization and
    the next (a KSP monitor: KSPPREONLY multiplies for them; -ksp_view_mat, -ksp_view_pmat, their explicit forms,
    -ksp_view_final_residual), which a factorization in place forbids. Not collective. @*/
PetscErrorCode HsKSPReadsOperator(KSP ksp, PetscBool *reads)
{
  PetscFunctionBeginUser;
  *reads = (PetscBool)(ksp->numbermonitors || ksp->viewMat || ksp->viewPMat || ksp->viewMatExp || ksp->viewPOpExp ||
                       ksp->viewFinalRes);
  PetscFunctionReturn(0);
}

/*@ HsPCBorrowWork - pc works in lender's workspace instead of its own where both are of a type that can (conserving4's
    condensation, -hs_condense) and lender's is large enough; no-op otherwise. For solves in turn that never overlap:
    -hs_extrapolate's coarse grids, solved before the finest grid's solver (lender) has factored anything that is
    read later; a grid's workspace is then the pages the ones before it touched, not fresh memory (a page's first
    touch, a minor page fault, cost about 2 us on the machine of bench/README.md). lender must outlive pc. Not
    collective. @*/
PetscErrorCode HsPCBorrowWork(PC pc, PC lender)
{
  PetscFunctionBeginUser;
  PetscTryMethod(pc, "HsPCBorrowWork_C", (PC, PC), (pc, lender));
  PetscFunctionReturn(0);
}
