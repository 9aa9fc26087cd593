/* hamshoot tests: PC hsband's bordered step (bvp/petscext/bandborder.c, issue 44) on its own, against MUMPS' LU of
 * the same matrices.
 *
 * Random nonsingular matrices of 3000 rows: a band (kl = 3, ku = 4, dominant diagonal) with k = 1, 2 or 3 dense rows
 * (every column) and as many dense columns (every row), at places where the rows and columns differ (so that the
 * permutations that move the border last have parities of their own: the first case's is odd), distributed in row
 * blocks over 1..4 ranks. For each:
 *   - -ksp_view's text names the border (k dense rows and columns): the bordered step was used, not the fallback;
 *     in one more case (k = 3) B, the band without the border, is singular to working precision while A is not:
 *     MUMPS' LU of A is used instead, and -ksp_view says why;
 *   - the solution of A x = b agrees with MUMPS' to 1e-10 (relative), and |A x - b| is at round-off;
 *   - the determinant (m 2^e) agrees with MUMPS' (ICNTL(33)): same sign, |log2 |det| - log2 |det_M|| below 1e-9
 *     relative (the sign of the permutations, det B and det S enter it).
 * And k = 1 or 2 dense columns without dense rows (a free T in conserving4's multiple shooting: T's row is local):
 * their diagonal rows join the border (bandborder.c's DiagonalRows), the same checks.
 * The expected values are MUMPS', an independent LU (its own ordering and pivoting).
 */
#include "../bvp/petscext/hspetscext.h"

#include <petscksp.h>
#include <string.h>

#define HS_CHECK_PRINT(...) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__))
#include "hscheck.h"
#include "pccheck.h"

#define NB 3000

static PetscBool In(PetscInt i, PetscInt k, const PetscInt *v)
{
  for (PetscInt q = 0; q < k; q++)
    if (v[q] == i)
      return PETSC_TRUE;
  return PETSC_FALSE;
}

/* The band with the border rows (every column) and columns (every row) of rows[k] (NULL: none, the columns
 * alone), cols[k]. */
static PetscErrorCode Build(PetscInt k, const PetscInt *rows, const PetscInt *cols, PetscInt seed, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, NB, NB, NB, NULL, NB, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (rows && In(i, k, rows))
      for (PetscInt j = 0; j < NB; j++)
        PetscCall(MatSetValue(*A, i, j, PcCheckRand(i, j, seed) + (i == j ? 4 : 0), INSERT_VALUES));
    else {
      for (PetscInt j = PetscMax(i - 3, 0); j <= PetscMin(i + 4, NB - 1); j++)
        PetscCall(MatSetValue(*A, i, j, PcCheckRand(i, j, seed) + (i == j ? 4 : 0), INSERT_VALUES));
      for (PetscInt q = 0; q < k; q++)
        PetscCall(MatSetValue(*A, i, cols[q], PcCheckRand(i, cols[q], seed + 7), INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* x = A^{-1} b by KSP preonly with hsband (band) or MUMPS' LU; the determinant m 2^e; with band, whether the PC's
 * view names the border of k. */
static PetscErrorCode Solve(Mat A, Vec b, Vec x, PetscBool band, PetscInt k, PetscReal *m, PetscInt *e,
                            PetscBool *known, PetscInt *how)
{
  KSP ksp;
  PC  pc;
  Mat F = NULL;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  if (band)
    PetscCall(PCSetType(pc, "hsband"));
  else {
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    PetscCall(PCFactorSetUpMatSolverType(pc));
    PetscCall(PCFactorGetMatrix(pc, &F));
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
  }
  PetscCall(KSPSetUp(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  if (band)
    PetscCall(HsPCGetDeterminant(pc, m, e, known));
  else
    PetscCall(HsMumpsDeterminant(F, m, e, known));
  *how = 0;
  if (band) { /* -ksp_view's text (an ASCII viewer: the PC prints only to those), through a file */
    char        text[8192] = "", want[128], name[64];
    PetscViewer v;
    PetscMPIInt rank, size;
    FILE       *f;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PetscSNPrintf(name, sizeof name, "pcborder_view_%d.txt", (int)size)); /* one per rank count (ctest -j) */
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, name, &v));
    PetscCall(PCView(pc, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(PetscSNPrintf(want, sizeof want, "banded LU with a border (hamshoot): %d dense row(s)", (int)k));
    if (!rank && (f = fopen(name, "r"))) {
      size_t n = fread(text, 1, sizeof text - 1, f);
      text[n]  = 0;
      fclose(f);
      remove(name);
    }
    if (strstr(text, want) && !strstr(text, "not used"))
      *how = 1; /* bordered */
    else if (strstr(text, "not used: the band without its border of 3 is singular to working precision"))
      *how = 2; /* the fallback, saying why */
    PetscCallMPI(MPI_Bcast(how, 1, MPIU_INT, 0, PETSC_COMM_WORLD));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* The case of border rows[k], cols[k]: hsband against MUMPS (the file's head); the bordered step used (border) or,
 * where B is singular to working precision, MUMPS' LU instead with -ksp_view saying why. */
static PetscErrorCode Case(PetscInt k, const PetscInt *rows, const PetscInt *cols, PetscInt seed, PetscBool border)
{
  Mat         A;
  Vec         b, x, y;
  PetscReal   mb, mm;
  PetscInt    eb, em;
  PetscBool   kb, km;
  PetscInt    how, dummy;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Build(k, rows, cols, seed, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecSetRandom(b, NULL));
  PetscCall(Solve(A, b, x, PETSC_TRUE, k, &mb, &eb, &kb, &how));
  PetscCall(Solve(A, b, y, PETSC_FALSE, k, &mm, &em, &km, &dummy));
  CHECK(how == (border ? 1 : 2), "k %d, seed %d, %d ranks: the bordered step %s", (int)k, (int)seed, size,
        border ? "used" : "not used (B singular): MUMPS instead, saying why");
  {
    char what[64];
    PetscCall(PetscSNPrintf(what, sizeof what, "k %d, seed %d, %d ranks", (int)k, (int)seed, size));
    PetscCall(PcCheckAgainstMumps(A, b, x, y, mb, eb, kb, mm, em, km, what));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  /* k = 1: row 2999 and column 2996 (the permutations' parity 0 + 3: odd); k = 2 (even), k = 3 (odd) elsewhere */
  const PetscInt r1[] = {2999}, c1[] = {2996}, r2[] = {0, 2999}, c2[] = {3, 2990}, r3[] = {10, 1500, 2999},
                 c3[] = {13, 1497, 2996};
  /* B singular to working precision, A not: row 10 and column 1499 out shift the band's dominant diagonal off B's
     over 1489 rows (det B / det A ~ 2^-2000; MUMPS' LU of B is not finite either) */
  const PetscInt cs[] = {1499, 1502, 2000};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(HsInitializePackage());
  for (PetscInt seed = 1; seed <= 2; seed++) {
    PetscCall(Case(1, r1, c1, seed, PETSC_TRUE));
    PetscCall(Case(2, r2, c2, seed, PETSC_TRUE));
    PetscCall(Case(3, r3, c3, seed, PETSC_TRUE));
    PetscCall(Case(3, r3, cs, seed, PETSC_FALSE));
    PetscCall(Case(1, NULL, c1, seed, PETSC_TRUE)); /* dense columns alone: their diagonal rows join them */
    PetscCall(Case(2, NULL, c2, seed, PETSC_TRUE));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail != 0;
}
