/* hamshoot: the discrete optimality boundary-value problem on PETSc
 * (DESIGN.md section 3): transcription over a 1-D DMDA, SNES/KSP set-up,
 * diagnostics and output. */
#ifndef HSBVP_H
#define HSBVP_H

#include <petscsnes.h>

#include "../costate/hscostate.h"

/** Results of a solve; identical on every rank after HsSolverSolve. */
typedef struct {
  PetscBool           converged;
  SNESConvergedReason reason;
  PetscInt            newton_iterations;
  PetscInt            ksp_iterations;                 /* summed over Newton iterations */
  PetscReal           residual_norm;                  /* ||F|| of the h-scaled residual */
  PetscReal           J;                              /* J^d = h sum L^d */
  PetscReal           H_mean, H_min, H_max, H_spread; /* H^d over the N intervals */
  PetscReal           H_balance; /* max_k |H^d_{k+1/2} - H^d_{k-1/2} + Dt_k/2| (HsDiscEllTimeChange): the discrete
                                    dH/dt = -d ell/dt; round-off for the conserving scheme */
  PetscInt  mumps_retries;       /* solves repeated with a larger MUMPS workspace (ICNTL(14)) */
  PetscBool autonomous;          /* no time-dependent running cost: H^d itself is conserved */
  PetscReal energy_work_spread;  /* max - min of E_k - W_k */
  PetscReal wall_time_s;
} HsResults;

typedef struct _p_HsSolver *HsSolver;

PetscErrorCode HsSolverCreate(MPI_Comm comm, HsSolver *solver);
/** Sets the problem (not copied; must outlive the solver). Collective. */
PetscErrorCode HsSolverSetProblem(HsSolver s, HsProblem *prob);
/** Number of uniform intervals N >= 2 (-N). Collective. */
PetscErrorCode HsSolverSetNumIntervals(HsSolver s, PetscInt N);
PetscErrorCode HsSolverGetNumIntervals(HsSolver s, PetscInt *N);
/** State and costate scheme names (-hs_state_scheme, -hs_costate_scheme). */
PetscErrorCode HsSolverSetSchemes(HsSolver s, const char *state_scheme, const char *costate_scheme);
PetscErrorCode HsSolverGetSchemes(HsSolver s, const char **state_scheme, const char **costate_scheme);
/** "conserving" or "direct" (-hs_scheme): sets both schemes (DESIGN.md section 5). */
PetscErrorCode HsSolverSetScheme(HsSolver s, const char *scheme);
/** Fallback threshold of divided differences (-hs_dg_tol), default HS_DG_TOL_DEFAULT. */
PetscErrorCode HsSolverSetDGTolerance(HsSolver s, PetscReal tol);
/** "transcription" or "shooting" (-hs_bvp_type). */
PetscErrorCode HsSolverSetBVPType(HsSolver s, const char *type);
/** Number of shooting segments M, 1 <= M <= N (-hs_shoot_segments). */
PetscErrorCode HsSolverSetNumSegments(HsSolver s, PetscInt M);
/** With warm, a solve after the first starts from the previous solution
 *  instead of the default initial guess (continuation). */
PetscErrorCode HsSolverSetWarmStart(HsSolver s, PetscBool warm);
/** Initial guess from a trajectory: Nsrc+1 rows (x_k, lambda_{k+1/2}), 4n values each, the same
 *  on every rank, interpolated to the solver's N (bvp/guess.c). Collective. */
PetscErrorCode HsSolverSetInitialGuess(HsSolver s, PetscInt Nsrc, const PetscReal *nodes);
/** The same from a trajectory.csv written by -o (-hs_init FILE). Collective. */
PetscErrorCode HsSolverSetInitialGuessFromFile(HsSolver s, const char *path);
/** Suppresses the per-iteration progress lines (-quiet). */
PetscErrorCode HsSolverSetQuiet(HsSolver s, PetscBool quiet);
PetscErrorCode HsSolverSetFromOptions(HsSolver s);
PetscErrorCode HsSolverSetUp(HsSolver s);
/** Solves; a diverged solve is a result (converged = false), not an error. */
PetscErrorCode HsSolverSolve(HsSolver s);
PetscErrorCode HsSolverGetResults(HsSolver s, HsResults *res);
/** The unknowns of the last solve (transcription: the node layout; shooting: the segment
 *  starts z_s); read-only: change them with HsSolverSetIterate. */
PetscErrorCode HsSolverGetIterate(HsSolver s, Vec *X);
/** Copies X (laid out as HsSolverGetIterate's) into the unknowns; with a warm start the
 *  next solve starts from it (continuation: predictor, retry after a failed step). Collective. */
PetscErrorCode HsSolverSetIterate(HsSolver s, Vec X);
/** Global solution vector (node-major: x_k then lambda_{k+1/2}, 4n per node). */
PetscErrorCode HsSolverGetSolution(HsSolver s, Vec *X);
/** Writes summary.json and trajectory.csv into dir, atomically. Collective. */
PetscErrorCode HsSolverWriteOutput(HsSolver s, const char *dir);
/** Prints the short result summary on rank 0. */
PetscErrorCode HsSolverView(HsSolver s, PetscViewer viewer);
PetscErrorCode HsSolverDestroy(HsSolver *s);

/* mpi/: gather of a distributed vector to rank 0 (all other ranks get length 0). */
PetscErrorCode HsGatherToZero(Vec X, Vec *X0);

#endif
