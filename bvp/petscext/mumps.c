/* hamshoot: MUMPS helpers (floor petscext/, knows no HsSolver): the factor of an LU or Cholesky PC,
 * hamshoot's MUMPS settings, the workspace-retry rule and the determinant from INFOG(34)/RINFOG(12). */
#include "hspetscext.h"

/*@ HsPCGetMumpsFactor - the factor matrix of pc when pc is an LU or Cholesky by MUMPS (created if the
    PC was not set up yet; pc needs its operators), else *F = NULL (bvp/ internal). Not collective. @*/
PetscErrorCode HsPCGetMumpsFactor(PC pc, Mat *F)
{
  PetscFunctionBeginUser;
  *F = NULL;
#if defined(PETSC_HAVE_MUMPS)
  {
    PetscBool     factor;
    MatSolverType type;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &factor, PCLU, PCCHOLESKY, ""));
    if (!factor)
      PetscFunctionReturn(0);
    PetscCall(PCFactorGetMatSolverType(pc, &type));
    if (!type || strcmp(type, MATSOLVERMUMPS))
      PetscFunctionReturn(0);
    PetscCall(PCFactorSetUpMatSolverType(pc));
    PetscCall(PCFactorGetMatrix(pc, F));
  }
#endif
  PetscFunctionReturn(0);
}

/*@ HsMumpsConfigure - hamshoot's MUMPS settings on a factor matrix F of HsPCGetMumpsFactor (bvp/
    internal): pivot threshold CNTL(1) = HS_MUMPS_CNTL1_DEFAULT, workspace ICNTL(14) = icntl14. @*/
PetscErrorCode HsMumpsConfigure(Mat F, PetscInt icntl14)
{
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(MatMumpsSetCntl(F, 1, HS_MUMPS_CNTL1_DEFAULT));
  PetscCall(MatMumpsSetIcntl(F, 14, icntl14));
#else
  (void)F, (void)icntl14;
#endif
  PetscFunctionReturn(0);
}

/*@ HsMumpsDeterminant - the determinant m 2^e of the matrix factored into F (HsPCGetMumpsFactor), if
    ICNTL(33) = 1 was set before the factorization (*known; bvp/ internal). Not collective. @*/
PetscErrorCode HsMumpsDeterminant(Mat F, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PetscFunctionBeginUser;
  *known = PETSC_FALSE;
#if defined(PETSC_HAVE_MUMPS)
  {
    PetscInt asked;
    PetscCall(MatMumpsGetIcntl(F, 33, &asked));
    if (asked != 1)
      PetscFunctionReturn(0);
    PetscCall(MatMumpsGetRinfog(F, 12, m));
    PetscCall(MatMumpsGetInfog(F, 34, e));
    *known = PETSC_TRUE;
  }
#else
  (void)F, (void)m, (void)e;
#endif
  PetscFunctionReturn(0);
}

/*@ HsMumpsWorkspaceShort - whether MUMPS' INFOG(1) = info says its workspace was too small (-8, -9,
    -11, -12, -14: see MumpsWorkspaceRetry), and *next, the relaxation ICNTL(14) to try after icntl14
    (bvp/ internal: the Newton solve's retry and hsdrop's). Not collective. @*/
PetscBool HsMumpsWorkspaceShort(PetscInt info, PetscInt icntl14, PetscInt *next)
{
  *next = 2 * icntl14 + 100;
  return (PetscBool)(info == -8 || info == -9 || info == -11 || info == -12 || info == -14);
}
