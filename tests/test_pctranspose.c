/* hamshoot tests: the transposed solves of hamshoot's PCs (issue 38, rounds 21 and 22).
 *
 * A Krylov method such as BiCG applies the preconditioner's transpose. PCs hsdrop and hsgather solve with their LU
 * transposed: on a random unsymmetric chain matrix (nodes of w unknowns coupled to their neighbours; the first
 * unknown of every node without a diagonal entry, so that hsdrop's row-to-column matching permutes), distributed
 * over the ranks, y = PCApplyTranspose(x) must satisfy |A^T y - x| <= 1e-10 |x| (hsdrop with -pc_hsdrop_tol 0,
 * which keeps every entry, with and without -pc_hsdrop_match; hsgather). hsband and hsslab have no transposed solve:
 * PCApplyTranspose is an error of hamshoot's (PETSC_ERR_SUP; before: PETSc's "No method applytranspose"), and
 * HsKSPCheckTranspose refuses -ksp_type bicg and ibcgs with them before any solve, and takes them with gmres and
 * hsdrop with bicg. */
#include "../bvp/petscext/hspetscext.h"

#include <petscksp.h>

#define HS_CHECK_PRINT(...) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__))
#include "hscheck.h"
#include "pccheck.h"

/* the chain (file head): unknown a of node k touches a - 1 .. a + 1 of nodes k - 1 .. k + 1; a = 0 has no diagonal
   entry but a large one at (k, w - 1), a = w - 1 a large one at (k, 0); a dominant diagonal elsewhere */
static PetscErrorCode Build(MPI_Comm comm, PetscInt nodes, PetscInt w, Mat *A)
{
  PetscInt rs, re, n = nodes * w;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n, n, 12, NULL, 12, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt k = i / w, a = i % w;
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt da = -1; da <= 1; da++) {
        PetscInt kk = k + dk, aa = a + da, j = kk * w + aa;
        if (kk < 0 || kk >= nodes || aa < 0 || aa >= w || (a == 0 && j == i))
          continue;
        PetscCall(MatSetValue(*A, i, j, PcCheckRand(i, j, 5) + (i == j ? 8 : 0), ADD_VALUES));
      }
    if (a == 0 || a == w - 1)
      PetscCall(MatSetValue(*A, i, k * w + (a ? 0 : w - 1), 9 + PcCheckRand(i, -1, 5), ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* a PC of type on A with the options opts under prefix (its own, so the cases do not share keys) */
static PetscErrorCode MakePC(Mat A, const char *type, const char *prefix, const char *opts, PC *pc)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(PCCreate(PetscObjectComm((PetscObject)A), pc));
  PetscCall(PCSetOptionsPrefix(*pc, prefix));
  PetscCall(PCSetType(*pc, type));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCSetFromOptions(*pc));
  PetscCall(PCSetUp(*pc));
  PetscFunctionReturn(0);
}

/* |A^T y - x| / |x| for y = pc's transposed apply to a random x */
static PetscErrorCode TransposeError(Mat A, PC pc, PetscReal *err)
{
  Vec       x, y, r;
  PetscInt  rs, re;
  PetscReal nx;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &y, &x));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(VecGetOwnershipRange(x, &rs, &re));
  for (PetscInt i = rs; i < re; i++)
    PetscCall(VecSetValue(x, i, PcCheckRand(i, 3, 11), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(PCApplyTranspose(pc, x, y));
  PetscCall(MatMultTranspose(A, y, r));
  PetscCall(VecAXPY(r, -1, x));
  PetscCall(VecNorm(r, NORM_INFINITY, err));
  PetscCall(VecNorm(x, NORM_INFINITY, &nx));
  *err /= nx;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

/* whether KSP ktype with pc passes HsKSPCheckTranspose (its error code, 0 if it does) */
static PetscErrorCode KSPCheck(PC pc, const char *ktype, PetscErrorCode *code)
{
  KSP ksp;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)pc), &ksp));
  PetscCall(KSPSetType(ksp, ktype));
  PetscCall(KSPSetPC(ksp, pc));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *code = HsKSPCheckTranspose(ksp);
  PetscCall(PetscPopErrorHandler());
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  static const char *const lu[][3]   = {{PCHSDROP, "d_", "-d_pc_hsdrop_tol 0 -d_pc_hsdrop_match false"},
                                        {PCHSDROP, "m_", "-m_pc_hsdrop_tol 0 -m_pc_hsdrop_match true"},
                                        {PCHSGATHER, "g_", ""}};
  static const char *const none[][3] = {{PCHSBAND, "b_", ""}, {PCHSSLAB, "s_", ""}};
  PetscMPIInt              size;
  Mat                      A;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(HsInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  (void)PcCheckAgainstMumps; /* pccheck.h's, not needed here */
  PetscCall(Build(PETSC_COMM_WORLD, 20 * size, 4, &A));
  for (size_t c = 0; c < sizeof lu / sizeof lu[0]; c++) {
    PC             pc;
    PetscReal      err;
    PetscErrorCode code;
    PetscCall(MakePC(A, lu[c][0], lu[c][1], lu[c][2], &pc));
    PetscCall(TransposeError(A, pc, &err));
    CHECK(err <= 1e-10, "%s (%s) on %d ranks: |A^T y - x| / |x| = %.2e", lu[c][0], lu[c][2], (int)size, (double)err);
    PetscCall(KSPCheck(pc, KSPBICG, &code));
    CHECK(code == 0, "%s with bicg refused (%d)", lu[c][0], (int)code);
    PetscCall(PCDestroy(&pc));
  }
  for (size_t c = 0; c < sizeof none / sizeof none[0]; c++) {
    PC             pc;
    Vec            x, y;
    PetscErrorCode code;
    PetscCall(MakePC(A, none[c][0], none[c][1], none[c][2], &pc));
    PetscCall(MatCreateVecs(A, &y, &x));
    PetscCall(VecSet(x, 1));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    code = PCApplyTranspose(pc, x, y);
    PetscCall(PetscPopErrorHandler());
    CHECK(code == PETSC_ERR_SUP, "%s: PCApplyTranspose gave %d, not PETSC_ERR_SUP", none[c][0], (int)code);
    PetscCall(KSPCheck(pc, KSPBICG, &code));
    CHECK(code == PETSC_ERR_SUP, "%s with bicg: %d, not refused", none[c][0], (int)code);
    PetscCall(KSPCheck(pc, KSPIBCGS, &code));
    CHECK(code == PETSC_ERR_SUP, "%s with ibcgs: %d, not refused", none[c][0], (int)code);
    PetscCall(KSPCheck(pc, KSPGMRES, &code));
    CHECK(code == 0, "%s with gmres refused (%d)", none[c][0], (int)code);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(PCDestroy(&pc));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail != 0;
}
