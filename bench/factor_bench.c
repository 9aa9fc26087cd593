/* hamshoot benchmark: the banded LU (PC hsband) on a saved Jacobian, in one process, many times.
 *
 *   build/hamshoot -problem kepler -N 100000 -snes_max_it 3 -ksp_view_mat binary:J.bin -o /tmp/out
 *   build/bench/factor_bench -f J.bin [-skip k] [-reps 11] [-pc_type lu -pc_factor_mat_solver_type mumps]
 *
 * Loads the (k+1)-th matrix of the file (-ksp_view_mat appends one per linear solve), then factors it
 * -reps times and solves once after each factorization, and prints the first factorization's time (the
 * layout and the first touch of the factors' pages included) and the minimum and median of all: wall
 * clock, max over ranks. Successive factorizations are of A and -A by turns (MatScale by -1 is exact),
 * so that each is a new factorization of the same work. A whole hamshoot run mixes the factorization
 * with the evaluations and varies by 1.5x on this shared machine; this one varies by a few per cent, the
 * resolution the kernels' A/B comparisons need (bench/README.md). Runs on any number of ranks; any
 * KSP/PC options apply (-pc_type lu -pc_factor_mat_solver_type mumps: MUMPS on the same matrix). hsband factors
 * inside its first solve by default (-pc_hsband_defer), so "factorization" is then its set-up alone and "solve"
 * holds the elimination: compare sums, or separate them with -pc_hsband_defer false. */
#include "../bvp/hsbvp.h"

#include <stdlib.h>

static int Compare(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
  char        file[PETSC_MAX_PATH_LEN] = "";
  PetscInt    reps = 11, skip = 0;
  PetscBool   set;
  PetscViewer v;
  Mat         A = NULL;
  Vec         b, x;
  KSP         ksp;
  PC          pc;
  double     *tf, *ts, first = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(HsInitializePackage()); /* registers PC hsband */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof file, &set));
  PetscCheck(set, PETSC_COMM_WORLD, PETSC_ERR_USER,
             "give the matrix file: -f J.bin (saved by -ksp_view_mat binary:J.bin)");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-skip", &skip, NULL));
  PetscCheck(reps >= 1 && skip >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1 and -skip >= 0");
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &v));
  for (PetscInt k = 0; k <= skip; k++) {
    PetscCall(MatDestroy(&A));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(MatLoad(A, v));
  }
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSetRandom(b, NULL));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, "hsband"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscMalloc2(reps, &tf, reps, &ts));
  for (PetscInt i = 0; i < reps; i++) {
    double t0, t1, t2;
    PetscCall(MatScale(A, -1.0)); /* a new matrix state: PCSetUp factors again */
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    t0 = MPI_Wtime();
    PetscCall(PCSetUp(pc));
    t1 = MPI_Wtime();
    PetscCall(PCApply(pc, b, x));
    t2 = MPI_Wtime();
    tf[i] = t1 - t0, ts[i] = t2 - t1;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, tf, (PetscMPIInt)reps, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ts, (PetscMPIInt)reps, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  first = tf[0];
  qsort(tf, (size_t)reps, sizeof *tf, Compare);
  qsort(ts, (size_t)reps, sizeof *ts, Compare);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "factorization: first %.4f s, min %.4f s, median %.4f s; solve: min %.4f s, median %.4f s"
                        " (%" PetscInt_FMT " times)\n",
                        first, tf[0], tf[reps / 2], ts[0], ts[reps / 2], reps));
  PetscCall(PetscFree2(tf, ts));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(PetscFinalize());
  return 0;
}
