/* hamshoot: the inner MUMPS LU that PCs hsdrop and hsslab share (floor petscext/, issue 44): hsdrop factors its
 * dropped matrix by it, hsslab falls back to it outside its limits. One creation, one configuration of the factor
 * (hamshoot's MUMPS settings, the determinant, an ordering), one set-up that reports MUMPS' INFOG(1) on failure,
 * one view. */
#include "hspetscext.h"

/*@ HsPCCheckAIJ - pc's preconditioning matrix is an assembled AIJ matrix (seqaij, mpiaij or a type derived from
    them), which hsband, hsdrop, hsslab and hsgather read by their rows; otherwise an error naming the PC, the matrix
    type and the usual cause (bvp/ internal; at the top of their set-ups). -pc_type hsband or hsdrop with the
    matrix-free shooting (-hs_shoot_mf: a shell matrix) had read a shell's data as AIJ rows and crashed (SEGV; issue
    38, round 21), hsslab and hsgather ended in PETSc's "No method createsubmatrices for Mat of type shell".
    Collective. @*/
PetscErrorCode HsPCCheckAIJ(PC pc)
{
  PetscBool   seq, mpi;
  const char *mtype, *pctype;
  Mat         P;

  PetscFunctionBeginUser;
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)P, MATSEQAIJ, &seq));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)P, MATMPIAIJ, &mpi));
  if (seq || mpi)
    PetscFunctionReturn(0);
  PetscCall(MatGetType(P, &mtype));
  PetscCall(PCGetType(pc, &pctype));
  SETERRQ(PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
          "-pc_type %s factors an assembled AIJ matrix, and this solve's preconditioning matrix is of type %s (a "
          "matrix-free Jacobian: -hs_shoot_mf, -snes_mf): leave out one of them",
          pctype, mtype ? mtype : "unknown");
}

/*@ HsPCCreateMumpsLU - a new PC on comm: LU, by MUMPS where PETSc has it (bvp/ internal). Collective.
@*/
PetscErrorCode HsPCCreateMumpsLU(MPI_Comm comm, PC *inner)
{
  PetscFunctionBeginUser;
  PetscCall(PCCreate(comm, inner));
  PetscCall(PCSetType(*inner, PCLU));
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(PCFactorSetMatSolverType(*inner, MATSOLVERMUMPS));
#endif
  PetscFunctionReturn(0);
}

/*@ HsPCSetUpMumpsLU - sets up the inner PC (it needs its operators): its MUMPS factor, if it is one, with
    hamshoot's settings (HsMumpsConfigure: icntl14), the determinant asked for (ICNTL(33) = 1) and, for
    ordering >= 0, MUMPS' ICNTL(7) = ordering (-mat_mumps_icntl_7 overrides); *fr its failed reason and *info
    MUMPS' INFOG(1) where it failed (else 0) (bvp/ internal). Collective.
@*/
PetscErrorCode HsPCSetUpMumpsLU(PC inner, PetscInt icntl14, PetscInt ordering, PCFailedReason *fr, PetscInt *info)
{
  Mat F;

  PetscFunctionBeginUser;
  *info = 0;
  PetscCall(HsPCGetMumpsFactor(inner, &F));
  if (F) {
    PetscCall(HsMumpsConfigure(F, icntl14));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
    if (ordering >= 0)
      PetscCall(MatMumpsSetIcntl(F, 7, ordering));
#endif
  }
  PetscCall(PCSetUp(inner));
  PetscCall(PCGetFailedReason(inner, fr));
#if defined(PETSC_HAVE_MUMPS)
  if (F && *fr)
    PetscCall(MatMumpsGetInfog(F, 1, info));
#endif
  PetscFunctionReturn(0);
}

/*@ HsPCViewInner - the inner PC's view one tab further in (nothing for a NULL inner; bvp/ internal). Collective.
@*/
PetscErrorCode HsPCViewInner(PC inner, PetscViewer viewer)
{
  PetscFunctionBeginUser;
  if (!inner)
    PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PCView(inner, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}
