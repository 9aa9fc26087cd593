/* hamshoot: command-line driver (DESIGN.md section 5).
 *
 *   mpirun -n P hamshoot -problem pendulum -N 20 -hs_scheme conserving -o out/
 *
 * Exit status: 0 converged; 1 bad input or another error (message on stderr
 * of rank 0); 2 the solve did not converge (outputs are still written, with
 * "converged": false). */
#include <petscsnes.h>
#include <stdio.h>
#include <string.h>

#include "../problems/hsmechanical.h"
#include "hsbvp.h"

static const char help[] =
    "hamshoot: indirect optimal control of mechanical systems with Hamiltonian-conserving\n"
    "discrete necessary conditions, solved as a distributed boundary-value problem.\n\n"
    "Usage: mpirun -n P hamshoot -problem NAME [options]\n\n"
    "  -problem NAME          built-in problem: pendulum kepler saddle crane manipulator3 (default pendulum)\n"
    "  -p_NAME VALUE          set a problem parameter: pendulum m l g; saddle omega; crane mt J m r g;\n"
    "                           manipulator3 g\n"
    "  -N N                   number of uniform time intervals (default: the problem's)\n"
    "  -hs_scheme S           conserving (default) | direct\n"
    "                           conserving: greenspan + conserving_1dof (1-DOF), gonzalez + conserving (others)\n"
    "                           direct:     midpoint + trapezoidal (the KKT conditions of a direct transcription)\n"
    "  -hs_state_scheme S     midpoint | greenspan | gonzalez (overrides -hs_scheme)\n"
    "  -hs_costate_scheme S   conserving | conserving_1dof | trapezoidal | kkt (overrides -hs_scheme)\n"
    "  -hs_dg_tol TOL         relative step below which divided differences use their limit (default 1e-6)\n"
    "  -hs_bvp_type T         transcription (default) | shooting\n"
    "  -hs_shoot_segments M   shooting segments, 1 <= M <= N (default 1: single shooting)\n"
    "  -hs_shoot_knots k1,..  interior segment knots for an uneven split (overrides -hs_shoot_segments)\n"
    "  -hs_shoot_ksp K        direct (default: MUMPS LU) | rankblock (GMRES + exact LU per rank;\n"
    "                           at most 4n(P-1)+1 iterations per Newton step, independent of M and N)\n"
    "  -hs_shoot_mf           shooting: exact Jacobian applied matrix-free, unpreconditioned GMRES\n"
    "  -hs_shoot_init I       linear (default: boundary states interpolated, lambda = 0) | transcription\n"
    "  -hs_shoot_max_growth G largest sensitivity growth in a segment before asking for more segments (1e8)\n"
    "  -hs_step_atol A        per-step (local) Newton tolerance, relative to 1+|y| (1e-14)\n"
    "  -hs_step_stol S        per-step Newton stops when its update is below S (1+|y|) (1e-12)\n"
    "  -hs_step_max_it K      per-step Newton iterations (25)\n"
    "  -hs_snes_roundoff C    Newton also stops at |F| <= C eps max(1,|X|) sqrt(n), the round-off level (100)\n"
    "  -hs_continue NAME -hs_continue_from A [-hs_continue_steps K]\n"
    "                         continuation: solve at NAME = A + (B-A) j/K, j < K, each from the last solution,\n"
    "                           then at the problem's value B (default K = 10)\n"
    "  -o DIR                 write DIR/summary.json and DIR/trajectory.csv (atomically)\n"
    "  -quiet                 no per-iteration progress lines\n"
    "  PETSc options pass through: -snes_monitor -snes_rtol -snes_test_jacobian -snes_mf_operator -ksp_type\n"
    "  -pc_type -pc_factor_mat_solver_type -log_view ... Defaults: Newton (-snes_atol 1e-12 -snes_rtol 1e-14\n"
    "  -snes_stol 1e-14 -snes_max_it 50; line search bt, l2 for shooting) with a MUMPS LU solve\n"
    "  (-ksp_type preonly -pc_type lu -mat_mumps_cntl_1 1.0 -mat_mumps_icntl_14 200).\n";

/* Keeps the first error message of a failed PETSc call so that main can
 * report it in one clean line instead of a traceback. */
static char hs_errmsg[1024];

static PetscErrorCode CaptureError(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                                   PetscErrorType p, const char *mess, void *ctx)
{
  (void)comm, (void)line, (void)fun, (void)file, (void)ctx;
  if (p == PETSC_ERROR_INITIAL) {
    if (mess && mess[0])
      snprintf(hs_errmsg, sizeof hs_errmsg, "%s", mess);
    else
      snprintf(hs_errmsg, sizeof hs_errmsg, "PETSc error %d in %s", (int)n, fun);
  }
  return n;
}

/* -p_NAME VALUE overrides a problem parameter; an unknown -p_ key is an error
 * that lists the problem's parameters (a typo must not be silently ignored). */
static PetscErrorCode ApplyProblemParams(HsProblem *prob)
{
  char  *all, *tok, *save = NULL, names[512] = "";
  size_t len = 0;

  PetscFunctionBeginUser;
  for (int i = 0; i < prob->nparams; i++) {
    char      key[80];
    PetscReal v;
    PetscBool set;
    snprintf(key, sizeof key, "-p_%s", prob->params[i].name);
    PetscCall(PetscOptionsGetReal(NULL, NULL, key, &v, &set));
    if (set) {
      int st = HsProblemSetParam(prob, prob->params[i].name, (double)v);
      PetscCheck(st != 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s %g must be a whole number (%s)", key,
                 (double)v, prob->params[i].help);
      PetscCheck(st == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s %g is outside [%g, %g] (%s)", key, (double)v,
                 prob->params[i].min, prob->params[i].max, prob->params[i].help);
    }
    len += (size_t)snprintf(names + len, sizeof names - len, "%s-p_%s", i ? " " : "", prob->params[i].name);
  }
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    int known = 0;
    if (strncmp(tok, "-p_", 3))
      continue;
    for (int i = 0; i < prob->nparams; i++)
      known |= !strcmp(tok + 3, prob->params[i].name);
    if (!known) {
      char bad[128];
      snprintf(bad, sizeof bad, "%s", tok);
      PetscCall(PetscFree(all));
      SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "unknown problem parameter %s for '%s' (parameters: %s)", bad,
              prob->name, names[0] ? names : "none");
    }
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* -hs_continue NAME -hs_continue_from A -hs_continue_steps K: solve at the
 * problem parameter values A + (B - A) j / K, j = 0..K-1 (B its value from the
 * problem or -p_NAME), each from the previous solution; the solve at B that
 * follows is then warm-started too (DESIGN.md section 3, initial guesses). */
static PetscErrorCode Continuation(HsProblem *prob, HsSolver solver)
{
  char      name[64];
  PetscBool set, fset;
  PetscReal from = 0, target = 0;
  PetscInt  steps = 10, ip = -1;
  HsResults r;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-hs_continue", name, sizeof name, &set));
  if (!set)
    PetscFunctionReturn(0);
  for (int i = 0; i < prob->nparams; i++)
    if (!strcmp(prob->params[i].name, name))
      ip = i;
  PetscCheck(ip >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-hs_continue %s: '%s' has no parameter of that name",
             name, prob->name);
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-hs_continue_from", &from, &fset));
  PetscCheck(fset, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-hs_continue needs -hs_continue_from VALUE");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-hs_continue_steps", &steps, NULL));
  PetscCheck(steps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_continue_steps %" PetscInt_FMT " must be >= 1", steps);
  target = *prob->params[ip].value;
  PetscCall(HsSolverSetWarmStart(solver, PETSC_TRUE));
  for (PetscInt j = 0; j < steps; j++) {
    PetscReal v = from + (target - from) * (PetscReal)j / (PetscReal)steps;
    PetscCheck(HsProblemSetParam(prob, name, (double)v) == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_continue: %s = %g is outside [%g, %g]", name, (double)v, prob->params[ip].min,
               prob->params[ip].max);
    PetscCall(HsSolverSolve(solver));
    PetscCall(HsSolverGetResults(solver, &r));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "continuation %s = %-10.6g %s after %" PetscInt_FMT " Newton iterations\n",
                          name, (double)v, r.converged ? "converged" : "NOT converged", r.newton_iterations));
    PetscCheck(r.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
               "continuation in %s stopped at %g (%s): use more -hs_continue_steps", name, (double)v,
               SNESConvergedReasons[r.reason]);
  }
  PetscCheck(HsProblemSetParam(prob, name, (double)target) == 0, PETSC_COMM_WORLD, PETSC_ERR_LIB, "restore %s", name);
  PetscFunctionReturn(0);
}

static PetscErrorCode Run(int *converged)
{
  char       name[PETSC_MAX_PATH_LEN] = "pendulum", out[PETSC_MAX_PATH_LEN] = "";
  PetscBool  has_out, help_only;
  HsProblem *prob   = NULL;
  HsSolver   solver = NULL;
  HsResults  res;
  int        st;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", name, sizeof name, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", out, sizeof out, &has_out));
  PetscCheck(!has_out || out[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-o needs a directory name");
  if (strstr(name, ".ocp") || strchr(name, '/')) { /* a problem file */
    char msg[1024];
    st = HsProblemCreateFromFile(name, &prob, msg, sizeof msg);
    PetscCheck(st == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s", msg);
  } else {
    st = HsProblemCreateByName(name, &prob);
    PetscCheck(st != 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown problem '%s' (-problem: %s, or a problem file NAME.ocp)", name, HsProblemListNames());
    PetscCheck(st == 0, PETSC_COMM_WORLD, PETSC_ERR_MEM, "cannot create problem '%s'", name);
  }
  PetscCall(ApplyProblemParams(prob));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &solver));
  PetscCall(HsSolverSetProblem(solver, prob));
  PetscCall(HsSolverSetFromOptions(solver));
  PetscCall(HsSolverSetUp(solver));
  PetscCall(PetscOptionsHasHelp(NULL, &help_only));
  if (help_only) { /* -help: the options have been listed; do not solve */
    *converged = 1;
    PetscCall(HsSolverDestroy(&solver));
    HsProblemDestroy(&prob);
    PetscFunctionReturn(0);
  }
  PetscCall(Continuation(prob, solver));
  PetscCall(HsSolverSolve(solver));
  PetscCall(HsSolverGetResults(solver, &res));
  PetscCall(HsSolverView(solver, NULL));
  if (out[0]) {
    PetscCall(HsSolverWriteOutput(solver, out));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  output             %s/summary.json, %s/trajectory.csv\n", out, out));
  }
  *converged = res.converged;
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
