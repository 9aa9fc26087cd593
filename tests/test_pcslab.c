/* hamshoot tests: PC hsslab (bvp/petscext/pcslab.c) on its own, against MUMPS' LU of the same matrices.
 *
 * Random nonsingular matrices distributed in row blocks over 1..8 ranks, of the shape hsslab is for: a chain of
 * "nodes" of w unknowns (40 nodes a rank), each coupled to its own node and the two neighbouring nodes by a sparse
 * pattern (a node block sparse as ncar's: unknown a of node k touches unknowns a - 1, a, a + 1 of the nodes k - 1 ..
 * k + 1, and unknown w - 1 - a of node k + 1), with a dominant diagonal, and the same with an unsymmetric pattern
 * (the coupling to node k + 1 only from even unknowns). For each:
 *   - the solution of A x = b agrees with MUMPS' to 1e-10 (relative), and |A x - b| is at round-off;
 *   - the determinant (m 2^e) agrees with MUMPS' (ICNTL(33)): the slabs' interiors, the interface system's
 *     cyclic reduction over the ranks and its permutations' parity (5 and 8 ranks: 3 levels) enter it;
 *   - a second solve with the same factors gives the same x to the bit.
 * On 1 rank hsslab is one MUMPS LU of the whole matrix (no interface). A matrix whose rows reach two ranks away
 * (run on 3 or more ranks) is refused with -pc_hsslab_fallback false and factored by the fallback otherwise. */
#include "../bvp/petscext/hspetscext.h"

#include <petscksp.h>
#include <string.h>

#define HS_CHECK_PRINT(...) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__))
#include "hscheck.h"
#include "pccheck.h"

/* nodes of w unknowns (file head); unsym: the coupling to node k + 1 from even unknowns only */
static PetscErrorCode Build(MPI_Comm comm, PetscInt nodes, PetscInt w, PetscBool unsym, PetscInt seed, Mat *A)
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
        if (kk < 0 || kk >= nodes || aa < 0 || aa >= w || (unsym && dk == 1 && a % 2))
          continue;
        PetscCall(MatSetValue(*A, i, j, PcCheckRand(i, j, seed) + (i == j ? 8 : 0), ADD_VALUES));
      }
    if (k + 1 < nodes)
      PetscCall(MatSetValue(*A, i, (k + 1) * w + w - 1 - a, PcCheckRand(i, -1, seed), ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* x = A^-1 b by KSP preonly with PC hsslab (slab) or MUMPS' LU; the determinant m 2^e; *same: a second solve with
 * the same factors gives x to the bit. */
static PetscErrorCode Solve(Mat A, Vec b, Vec x, PetscBool slab, PetscReal *m, PetscInt *e, PetscBool *known,
                            PetscBool *same)
{
  KSP ksp;
  PC  pc;
  Mat F = NULL;
  Vec y;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  if (slab) {
    PetscCall(PCSetType(pc, "hsslab"));
    PetscCall(PetscOptionsSetValue(NULL, "-pc_hsslab_fallback", "false"));
    PetscCall(PCSetFromOptions(pc));
    PetscCall(PetscOptionsClearValue(NULL, "-pc_hsslab_fallback"));
  } else {
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    PetscCall(PCFactorSetUpMatSolverType(pc));
    PetscCall(PCFactorGetMatrix(pc, &F));
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
  }
  PetscCall(KSPSolve(ksp, b, x));
  if (slab)
    PetscCall(HsPCGetDeterminant(pc, m, e, known));
  else
    PetscCall(HsMumpsDeterminant(F, m, e, known));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(KSPSolve(ksp, b, y));
  PetscCall(VecEqual(x, y, same));
  PetscCall(VecDestroy(&y));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* A matrix reaching two ranks away: refused without the fallback (an error naming the reason), solved with it */
static PetscErrorCode FarCase(MPI_Comm comm)
{
  Mat            A;
  Vec            b, x, r;
  KSP            ksp;
  PC             pc;
  PetscErrorCode ierr;
  PetscInt       n = 60, rs, re;
  PetscReal      res;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n, n, 4, NULL, 4, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscCall(MatSetValue(A, i, i, 4.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, (i + n / 2) % n, 1.0, INSERT_VALUES)); /* half the matrix away */
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, "hsslab"));
  PetscCall(PetscOptionsSetValue(NULL, "-pc_hsslab_fallback", "false"));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_hsslab_fallback"));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = KSPSetUp(ksp);
  PetscCall(PetscPopErrorHandler());
  CHECK(ierr == PETSC_ERR_SUP, "rows beyond the neighbour ranks: refused without the fallback (error %d)", (int)ierr);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, "hsslab"));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAXPY(r, -1, b));
  PetscCall(VecNorm(r, NORM_INFINITY, &res));
  CHECK(res <= 1e-13, "rows beyond the neighbour ranks: solved by the fallback, residual %.2e", (double)res);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(HsInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (PetscInt unsym = 0; unsym < 2; unsym++)
    for (PetscInt w = 3; w <= 12; w += 9) {
      Mat       A;
      Vec       b, x, y;
      PetscReal ms = 0, mm = 0;
      PetscInt  es = 0, em = 0;
      PetscBool ks, km, same, same2;
      char      what[128];
      PetscCall(Build(PETSC_COMM_WORLD, 40 * size, w, (PetscBool)unsym, 17 + w, &A));
      PetscCall(MatCreateVecs(A, &x, &b));
      PetscCall(VecDuplicate(x, &y));
      {
        PetscInt rs, re;
        PetscCall(VecGetOwnershipRange(b, &rs, &re));
        for (PetscInt r = rs; r < re; r++)
          PetscCall(VecSetValue(b, r, PcCheckRand(r, 7, 3), INSERT_VALUES));
      }
      PetscCall(VecAssemblyBegin(b));
      PetscCall(VecAssemblyEnd(b));
      PetscCall(Solve(A, b, x, PETSC_TRUE, &ms, &es, &ks, &same));
      PetscCall(Solve(A, b, y, PETSC_FALSE, &mm, &em, &km, &same2));
      PetscCall(
          PetscSNPrintf(what, sizeof what, "%d ranks, nodes of %d%s", (int)size, (int)w, unsym ? ", unsymmetric" : ""));
      CHECK(same, "%s: a second solve with the same factors gives x to the bit", what);
      PetscCall(PcCheckAgainstMumps(A, b, x, y, ms, es, ks, mm, em, km, what));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&y));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&A));
    }
  if (size >= 3)
    PetscCall(FarCase(PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail != 0;
}
