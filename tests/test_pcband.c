/* hamshoot tests: PC hsband (bvp/petscext/pcband.c) on its own, against MUMPS' LU of the same matrices.
 *
 * Random nonsingular matrices of the shapes hsband is for, distributed in row blocks over 1..8
 * ranks: a plain band; the transcription's staircase (blocks of rows whose first columns are out of
 * order within the block, so that the staircase sort matters); and a band whose diagonal is zero
 * (every step must pivot). For each, with the last rank eliminating bottom-up and without:
 *   - the solution of A x = b agrees with MUMPS' to 1e-10 (relative), and |A x - b| is at round-off;
 *   - the determinant (m 2^e) agrees with MUMPS' (ICNTL(33)): same sign, |log2 |det| - log2 |det_M||
 *     below 1e-9 (relative to the log): every pivot, the row and column permutations' parities and the
 *     reduced system's cyclic reduction over the ranks (bandreduce.c; 5 and 8 ranks: 3 levels, a rank without a
 *     partner at a level) enter it; asked for after the solve that factored (the default deferral), or
 *     before it (which then factors);
 *   - a second solve with the same factors (factored again, keeping the multipliers) and a factorization
 *     kept whole (-pc_hsband_defer false) give the deferred solve's x to the bit;
 *   - factored in place (HsPCSetInPlace, U over the matrix' own values), a copy of A gives x and the
 *     determinant to the bit and is marked factored, its values changed; with the multipliers kept (the
 *     determinant asked first) a second solve gives x again, without them it is refused with an error.
 * The questions any code asks any PC (bvp/petscext/pcutils.c), asked of hsband, hsdrop with nothing dropped and a
 * plain MUMPS LU on one matrix: the three determinants agree (one branch-point test for every linear solver);
 * hsband and the MUMPS LU are exact, hsdrop is not; hsdrop has an inner LU, the others none; only hsband
 * factors in place.
 * The expected values are MUMPS', an independent LU (its own ordering and pivoting).
 */
#include "../bvp/petscext/hspetscext.h"

#include <petscksp.h>
#include <string.h>

#define HS_CHECK_PRINT(...) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__))
#include "hscheck.h"
#include "pccheck.h"

/* Shape 0: band kl = 3, ku = 4 with a dominant diagonal; 1: the staircase of blocks of 4 rows (the
 * transcription's with n = 1: two rows starting a block left, two at the block, all 10 columns wide,
 * listed the "wrong" way round) and one boundary row each end; 2: kl = ku = 2, zero diagonal. */
static PetscErrorCode Build(MPI_Comm comm, PetscInt shape, PetscInt n, PetscInt seed, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n, n, 12, NULL, 12, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt lo, hi, blk = i / 4, r = i % 4;
    if (shape == 0)
      lo = i - 3, hi = i + 4;
    else if (shape == 2)
      lo = i - 2, hi = i + 2;
    else if (r < 2) /* state-like rows: from their own block */
      lo = 4 * blk, hi = 4 * blk + 5;
    else /* costate-like rows: from the block before */
      lo = 4 * blk - 4, hi = 4 * blk + 5;
    lo = PetscMax(lo, 0), hi = PetscMin(hi, n - 1);
    for (PetscInt j = lo; j <= hi; j++) {
      PetscReal v = PcCheckRand(i, j, seed);
      if (shape == 0 && i == j)
        v += 4;
      if (shape == 2 && i == j)
        v = 0;
      PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* A KSPPREONLY on A and its PC; with band, of type hsband (the last rank bottom-up if reverse, no fallback). */
static PetscErrorCode PreOnly(Mat A, PetscBool band, PetscBool reverse, KSP *ksp, PC *pc)
{
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, KSPPREONLY));
  PetscCall(KSPGetPC(*ksp, pc));
  if (band) {
    PetscCall(PCSetType(*pc, "hsband"));
    PetscCall(PetscOptionsSetValue(NULL, "-pc_hsband_reverse_last", reverse ? "true" : "false"));
    PetscCall(PetscOptionsSetValue(NULL, "-pc_hsband_fallback", "false"));
    PetscCall(PCSetFromOptions(*pc));
    PetscCall(PetscOptionsClearValue(NULL, "-pc_hsband_reverse_last"));
    PetscCall(PetscOptionsClearValue(NULL, "-pc_hsband_fallback"));
  }
  PetscFunctionReturn(0);
}

/* x = A^{-1} b by KSP preonly with PC type; the determinant m 2^e if known. hsband factors when it solves
 * (-pc_hsband_defer, the default): solved a second time with the same factors (which factors again, keeping
 * the multipliers) and with -pc_hsband_defer false, the solutions must equal x to the bit (the same row
 * operations in the same order); *same says whether they do. Its determinant is asked for after the solve,
 * or with reverse before it. */
static PetscErrorCode Solve(Mat A, Vec b, Vec x, PetscBool band, PetscBool reverse, PetscReal *m, PetscInt *e,
                            PetscBool *known, PetscBool *same)
{
  KSP ksp;
  PC  pc;
  Mat F;

  PetscFunctionBeginUser;
  PetscCall(PreOnly(A, band, reverse, &ksp, &pc));
  if (!band) {
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    PetscCall(PCFactorSetUpMatSolverType(pc));
    PetscCall(PCFactorGetMatrix(pc, &F));
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
  }
  PetscCall(KSPSetUp(ksp));
  if (band && reverse) /* asked before the solve (the factorization deferred to it is done there) */
    PetscCall(HsPCGetDeterminant(pc, m, e, known));
  PetscCall(KSPSolve(ksp, b, x));
  if (band && !reverse) /* after it (the factors made by the solve) */
    PetscCall(HsPCGetDeterminant(pc, m, e, known));
  else if (!band)
    PetscCall(HsMumpsDeterminant(F, m, e, known));
  *same = PETSC_TRUE;
  if (band) {
    Vec       y;
    PetscBool eq;
    PetscCall(VecDuplicate(x, &y));
    PetscCall(KSPSolve(ksp, b, y)); /* the second solve with these factors */
    PetscCall(VecEqual(x, y, &eq));
    *same = eq;
    PetscCall(PetscOptionsSetValue(NULL, "-pc_hsband_defer", "false"));
    PetscCall(PCSetFromOptions(pc));
    PetscCall(PetscOptionsClearValue(NULL, "-pc_hsband_defer"));
    PetscCall(MatScale(A, 1.0)); /* a new state, the same matrix: factored again */
    PetscCall(KSPSolve(ksp, b, y));
    PetscCall(VecEqual(x, y, &eq));
    *same = (PetscBool)(*same && eq);
    PetscCall(VecDestroy(&y));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* The in-place factorization of a copy C of A (file head): *ok if it gives x (hsband's deferred solution) and the
 * determinant m0 2^e0 to the bit, C is marked factored and its values differ from A's afterwards, and a second solve
 * gives x again (the determinant asked before the first: the multipliers kept) or fails (not asked). */
static PetscErrorCode InPlaceCase(Mat A, Vec b, Vec x, PetscBool reverse, PetscReal m0, PetscInt e0, PetscBool *ok)
{
  PetscFunctionBeginUser;
  *ok = PETSC_TRUE;
  for (PetscInt first = 0; first < 2; first++) {
    Mat            C;
    KSP            ksp;
    PC             pc;
    Vec            y;
    PetscReal      m     = 0;
    PetscInt       e     = 0;
    PetscBool      known = PETSC_FALSE, eq, same;
    MatFactorType  ft;
    PetscErrorCode ierr;

    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
    PetscCall(VecDuplicate(x, &y));
    PetscCall(PreOnly(C, PETSC_TRUE, reverse, &ksp, &pc));
    PetscCall(HsPCSetInPlace(pc, PETSC_TRUE));
    PetscCall(KSPSetUp(ksp));
    if (first)
      PetscCall(HsPCGetDeterminant(pc, &m, &e, &known));
    PetscCall(KSPSolve(ksp, b, y));
    if (!first)
      PetscCall(HsPCGetDeterminant(pc, &m, &e, &known));
    PetscCall(VecEqual(x, y, &eq));
    PetscCall(MatGetFactorType(C, &ft));
    *ok = (PetscBool)(*ok && eq && known && m == m0 && e == e0 && ft == MAT_FACTOR_LU);
    if (first) { /* the factors with their multipliers: a second solve */
      PetscCall(VecSet(y, 0));
      PetscCall(KSPSolve(ksp, b, y));
      PetscCall(VecEqual(x, y, &eq));
      *ok = (PetscBool)(*ok && eq);
    } else { /* none: refused, the matrix is gone */
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = KSPSolve(ksp, b, y);
      PetscCall(PetscPopErrorHandler());
      *ok = (PetscBool)(*ok && ierr != 0);
    }
    PetscCall(MatSetUnfactored(C));
    PetscCall(MatEqual(A, C, &same));
    *ok = (PetscBool)(*ok && !same);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&C));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Case(PetscInt shape, PetscInt n, PetscInt seed, PetscBool reverse)
{
  Mat         A;
  Vec         b, x, y;
  PetscReal   mb, mm;
  PetscInt    eb, em;
  PetscBool   kb, km, same, dummy, inplace;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Build(PETSC_COMM_WORLD, shape, n, seed, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecSetRandom(b, NULL));
  PetscCall(Solve(A, b, x, PETSC_TRUE, reverse, &mb, &eb, &kb, &same));
  PetscCall(Solve(A, b, y, PETSC_FALSE, reverse, &mm, &em, &km, &dummy));
  PetscCall(InPlaceCase(A, b, x, reverse, mb, eb, &inplace));
  CHECK(inplace,
        "shape %d, n %d, %d ranks, reverse %d: factored in place, the same solution and determinant to the "
        "bit, the matrix marked factored and changed; a second solve with the multipliers, an error without",
        (int)shape, (int)n, size, (int)reverse);
  CHECK(same,
        "shape %d, n %d, %d ranks, reverse %d: a second solve with the same factors, and the factorization kept "
        "whole (-pc_hsband_defer false), give the deferred one's solution to the bit",
        (int)shape, (int)n, size, (int)reverse);
  {
    char what[96];
    PetscCall(PetscSNPrintf(what, sizeof what, "shape %d, n %d, %d ranks, reverse %d", (int)shape, (int)n, size,
                            (int)reverse));
    PetscCall(PcCheckAgainstMumps(A, b, x, y, mb, eb, kb, mm, em, km, what));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* One PC of the given type (hsdrop: with nothing dropped) on A, solved once with b; its answers to pcutils.c. */
static PetscErrorCode Ask(Mat A, Vec b, const char *type, PetscReal *m, PetscInt *e, PetscBool *known, PetscBool *exact,
                          PetscBool *has_inner, PetscBool *in_place)
{
  KSP ksp;
  PC  pc, inner = NULL;
  Vec x;

  PetscFunctionBeginUser;
  PetscCall(PreOnly(A, PETSC_FALSE, PETSC_FALSE, &ksp, &pc));
  PetscCall(PCSetType(pc, type));
  if (!strcmp(type, PCLU))
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscCall(PetscOptionsSetValue(NULL, "-pc_hsdrop_tol", "0"));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_hsdrop_tol"));
  PetscCall(HsPCRequestDeterminant(pc)); /* before the factorization (KSPSetUp) */
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(HsPCGetDeterminant(pc, m, e, known));
  PetscCall(HsPCIsExact(pc, exact));
  PetscCall(HsPCGetInner(pc, &inner));
  PetscCall(HsPCHasInPlace(pc, in_place));
  *has_inner = (PetscBool)(inner != NULL);
  PetscCall(VecDestroy(&x));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* The composed-function interface (pcutils.c) on one staircase matrix: hsband, hsdrop and MUMPS' LU. */
static PetscErrorCode Interfaces(PetscInt seed)
{
  static const char *const types[]            = {"hsband", "hsdrop", PCLU};
  const PetscBool          exact_expected[]   = {PETSC_TRUE, PETSC_FALSE, PETSC_TRUE};
  const PetscBool          inner_expected[]   = {PETSC_FALSE, PETSC_TRUE, PETSC_FALSE};
  const PetscBool          inplace_expected[] = {PETSC_TRUE, PETSC_FALSE, PETSC_FALSE};
  Mat                      A;
  Vec                      b;
  PetscReal                m[3], l[3];
  PetscInt                 e[3];

  PetscFunctionBeginUser;
  PetscCall(Build(PETSC_COMM_WORLD, 1, 4 * (41 + seed) + 2, seed, &A));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(VecSet(b, 0.7183));
  for (int i = 0; i < 3; i++) {
    PetscBool known = PETSC_FALSE, exact = PETSC_FALSE, inner = PETSC_FALSE, inplace = PETSC_FALSE;
    PetscCall(Ask(A, b, types[i], &m[i], &e[i], &known, &exact, &inner, &inplace));
    CHECK(known, "%s: determinant known", types[i]);
    CHECK(exact == exact_expected[i] && inner == inner_expected[i] && inplace == inplace_expected[i],
          "%s: exact %d (expected %d), inner %d (%d), in place %d (%d)", types[i], (int)exact, (int)exact_expected[i],
          (int)inner, (int)inner_expected[i], (int)inplace, (int)inplace_expected[i]);
    l[i] = PetscLog2Real(PetscAbsReal(m[i])) + e[i];
  }
  for (int i = 0; i < 2; i++)
    CHECK(m[i] * m[2] > 0 && PetscAbsReal(l[i] - l[2]) <= 1e-9 * PetscMax(1, PetscAbsReal(l[2])),
          "seed %d: det %.15g 2^%d (%s) against %.15g 2^%d (MUMPS LU)", (int)seed, (double)m[i], (int)e[i], types[i],
          (double)m[2], (int)e[2]);
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(HsInitializePackage());
  for (PetscInt shape = 0; shape < 3; shape++)
    for (PetscInt seed = 1; seed <= 3; seed++)
      for (PetscInt rev = 0; rev < 2; rev++)
        PetscCall(Case(shape, shape == 1 ? 4 * (37 + seed) + 2 : 151 + seed, seed, (PetscBool)rev));
  for (PetscInt seed = 1; seed <= 2; seed++)
    PetscCall(Interfaces(seed));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail != 0;
}
