/* hamshoot: the command-line driver (DESIGN.md section 5). It only composes
 * the library: problem from the options -> solver -> (continuation) -> solve
 * -> summary -> output. `hamshoot -help` lists every option from the options
 * calls themselves.
 *
 *   mpirun -n P hamshoot -problem pendulum -N 20 -hs_scheme conserving -o out/
 *
 * Exit status: 0 converged; 1 bad input or another error (one line
 * "hamshoot: error: ..." on rank 0); 2 the solve did not converge (outputs are
 * still written, with "converged": false). */
#include <stdio.h>

#include "hsbvp.h"

static const char help[] = "hamshoot: indirect optimal control of mechanical systems with Hamiltonian-conserving\n"
                           "discrete necessary conditions, solved as a distributed boundary-value problem.\n\n"
                           "Usage: mpirun -n P hamshoot -problem NAME|FILE.ocp [options]; all options below.\n\n";

/* Keeps the first error message of a failed PETSc call so that main can
 * report it in one clean line instead of a traceback. */
static char hs_errmsg[1024];

static PetscErrorCode CaptureError(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                                   PetscErrorType p, const char *mess, void *ctx)
{
  (void)comm, (void)line, (void)file, (void)ctx;
  if (p == PETSC_ERROR_INITIAL) {
    if (mess && mess[0])
      snprintf(hs_errmsg, sizeof hs_errmsg, "%s", mess);
    else
      snprintf(hs_errmsg, sizeof hs_errmsg, "PETSc error %d in %s", (int)n, fun);
  }
  return n;
}

/* The driver's own options: -N, -o, -quiet, -hs_compare. */
static PetscErrorCode DriverOptions(HsSolver s, char *out, size_t len, PetscBool *quiet, PetscBool *compare)
{
  PetscInt  N;
  PetscBool flg;

  PetscFunctionBeginUser;
  out[0] = 0, *quiet = PETSC_FALSE;
  PetscCall(HsSolverGetNumIntervals(s, &N));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "hamshoot executable", "");
  PetscCall(PetscOptionsInt("-N", "number of uniform time intervals (default: the problem's)", "HsSolverSetNumIntervals",
                            N, &N, &flg));
  if (flg)
    PetscCall(HsSolverSetNumIntervals(s, N));
  PetscCall(PetscOptionsString("-o", "write DIR/summary.json and DIR/trajectory.csv (atomically)",
                               "HsSolverWriteOutput", out, out, len, &flg));
  PetscCheck(!flg || out[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-o needs a directory name");
  PetscCall(PetscOptionsBool("-quiet", "no per-iteration progress lines (-hs_monitor false)", "HsSolverSetMonitor",
                             *quiet, quiet, NULL));
  *compare = PETSC_FALSE;
  PetscCall(PetscOptionsBool("-hs_compare",
                             "solve the indirect and the direct problem (same state scheme, same grid) and compare them: "
                             "DIR (-o, default 'compare')/compare.json, series.csv, compare.gp, PNG plots",
                             "HsSolverCompare", *compare, compare, NULL));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode Run(int *converged)
{
  char           out[PETSC_MAX_PATH_LEN];
  PetscBool      quiet, help_only, reached, compare;
  PetscInt       stages;
  const char    *why;
  HsProblem     *prob = NULL;
  HsSolver       solver;
  HsContinuation cont;
  HsResults      res;

  PetscFunctionBeginUser;
  PetscCall(HsProblemCreateFromOptions(PETSC_COMM_WORLD, NULL, &prob));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &solver));
  PetscCall(HsSolverSetProblem(solver, prob));
  PetscCall(DriverOptions(solver, out, sizeof out, &quiet, &compare));
  PetscCall(HsSolverSetMonitor(solver, (PetscBool)!quiet));
  PetscCall(HsSolverSetFromOptions(solver));
  PetscCall(HsContinuationCreate(solver, &cont));
  PetscCall(HsContinuationSetMonitor(cont, PETSC_TRUE));
  PetscCall(HsContinuationSetFromOptions(cont));
  PetscCall(HsSolverSetUp(solver));
  PetscCall(PetscOptionsHasHelp(NULL, &help_only));
  PetscCall(HsContinuationGetNumStages(cont, &stages));
  PetscCheck(!compare || !stages, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-hs_compare compares two solves on one grid: it cannot be combined with -hs_continue");
  if (compare && !help_only) {
    PetscCall(HsSolverCompare(solver, out[0] ? out : "compare", &res.converged));
  } else if (!help_only) { /* -help: the options have been listed; do not solve */
    PetscCall(HsContinuationSolve(cont));
    PetscCall(HsContinuationGetResult(cont, &reached, &why));
    PetscCheck(reached || !why[0], PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s", why);
    PetscCall(HsSolverGetResults(solver, &res));
    PetscCall(HsSolverView(solver, NULL));
    if (out[0]) {
      PetscCall(HsSolverWriteOutput(solver, out));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  output             %s/summary.json, %s/trajectory.csv\n", out, out));
    }
  }
  *converged = help_only || res.converged;
  PetscCall(HsContinuationDestroy(&cont));
  PetscCall(HsSolverDestroy(&solver));
  HsProblemDestroy(&prob);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscErrorCode ierr;
  int            converged = 0;
  PetscMPIInt    rank;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscPushErrorHandler(CaptureError, NULL));
  ierr = Run(&converged);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    if (rank == 0)
      fprintf(stderr, "hamshoot: error: %s\n", hs_errmsg);
    PetscCall(PetscFinalize());
    return 1;
  }
  PetscCall(PetscFinalize());
  return converged ? 0 : 2;
}
