/* hamshoot: the inner MUMPS LU that PCs hsdrop and hsslab share (floor petscext/, issue 44): hsdrop factors its
 * dropped matrix by it, hsslab falls back to it outside its limits. One creation, one configuration of the factor
 * (hamshoot's MUMPS settings, the determinant, an ordering), one set-up that reports MUMPS' INFOG(1) on failure,
 * one view. */
#include "hspetscext.h"

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
