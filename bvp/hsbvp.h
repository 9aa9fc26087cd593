/* hamshoot: the discrete optimality boundary-value problem on PETSc (docs/theory.md
 * section 3). One solver object, HsSolver, with the formulations as types
 * registered by name (transcription, shooting); continuation in problem
 * parameters (HsContinuation); problems from the options database.
 *
 * Lifecycle (as PETSc's): HsSolverCreate -> HsSolverSetProblem -> typed
 * setters -> HsSolverSetFromOptions (maps each -hs_* key that is given to its
 * setter) -> HsSolverSetUp -> HsSolverSolve -> HsSolverGetResults /
 * HsSolverView / HsSolverWriteOutput -> HsSolverDestroy. Every function is
 * documented at its definition in the bvp/ sources.
 */
#ifndef HSBVP_H
#define HSBVP_H

#include <petscsnes.h>

#include "../costate/hsmarch.h" /* HsDisc, the schemes, the march defaults HS_MARCH_*_DEFAULT */

/* Defaults (HsSolverCreate). The SNES tolerances are Newton to round-off:
 * conservation is only as good as the solve. */
#define HS_SNES_ATOL_DEFAULT 1e-12
#define HS_SNES_RTOL_DEFAULT 1e-14
#define HS_SNES_STOL_DEFAULT 1e-14
#define HS_SNES_MAX_IT_DEFAULT 50
/* Newton also stops at ||F|| <= c eps max(1, ||X||_inf) sqrt(n) (HsSolverSetRoundoffFactor). */
#define HS_ROUNDOFF_FACTOR_DEFAULT 100.0
/* The noise floor (bvp/interface/convergence.c): after a Newton step that did not halve ||F|| (or one near an
 * earlier estimate), the residual's evaluation error nu is estimated from F(X + dX) + F(X - dX) - 2 F(X) (dX = HS_NOISE_DELTA |X|
 * with a fixed sign pattern); ||F|| <= c nu (c = -hs_snes_noise) is the floor: converged. */
#define HS_NOISE_FACTOR_DEFAULT 10.0
#define HS_ROUNDOFF_FACTOR_MAX 1e4 /* -hs_snes_roundoff at most: 1e4 eps = 2.2e-12 relative to the unknowns */
#define HS_VOUCH_FACTOR        10.0 /* a converged |F| may lie this far above the level the solve vouches for */
#define HS_DG_TOL_MAX          1e-3 /* -hs_dg_tol at most: its fallback breaks H^d's conservation by about tol^3 */
#define HS_NOISE_FACTOR_MAX    1e3 /* -hs_snes_noise at most: a residual 1000 times its evaluation error is not noise */
#define HS_POLISH_MAX_DEFAULT 10  /* -hs_snes_polish: polish steps after a stop at the round-off level or the floor */
#define HS_POLISH_MAX_LIMIT   100 /* -hs_snes_polish at most */
#define HS_NOISE_DELTA 1e-10
#define HS_NOISE_SLOW 0.5
/* Where checkpoints go without -hs_checkpoint or -o (bvp/interface/checkpoint.c). */
#define HS_CHECKPOINT_DIR_DEFAULT "hamshoot-checkpoint"
#define HS_INIT_MAX_BYTES (16LL << 30) /* -hs_init: a trajectory.csv larger than 16 GiB is refused (HsFileOpenRegular) */
/* MUMPS: pivot threshold CNTL(1) (1.0: partial pivoting), workspace relaxation ICNTL(14) in
 * percent, and how often a factorization that ran out of workspace is retried with twice that. */
#define HS_MUMPS_CNTL1_DEFAULT 1.0
#define HS_MUMPS_ICNTL14_DEFAULT 200
#define HS_MUMPS_RETRIES 4
/* Shooting: sensitivity growth beyond which a segment cannot carry the digits Newton needs
 * (1/sqrt(eps)), and the GMRES restart of the matrix-free operator. */
#define HS_SHOOT_MAX_GROWTH_DEFAULT 1e8
#define HS_SHOOT_MF_RESTART 200

/* IPOPT (type HSSOLVERIPOPT): tolerance on its scaled NLP error (residuals per unit time), iteration
 * limit, and the ordering of its MUMPS (measured: bench/README.md). */
#define HS_IPOPT_TOL_DEFAULT 1e-10
#define HS_IPOPT_BOUNDED_KKT_RTOL 1e-6 /* bounded u: acceptable exit ok if bounded kkt residual <= this max(1,|X|) */
#define HS_IPOPT_MAX_IT_DEFAULT 1000
#define HS_IPOPT_ORDERING_DEFAULT "amd"

/* -hs_extrapolate's number of grids N/2^(K-1), ..., N/2, N (HsSolverSetExtrapolateGrids): the default and the most. */
#define HS_EXTRAP_GRIDS_DEFAULT 3
#define HS_EXTRAP_GRIDS_MAX 5

/** Richardson's extrapolation of a solve from the grids N/4, N/2, N (HsSolverExtrapolate, bvp/drivers/study.c; K grids
    N/2^(K-1) .. N with HsSolverSetExtrapolateGrids): R = (4 Q_N - Q_{N/2})/3, error estimate |R(N) - R(N/2)|/15,
    observed order log2 of the ratio of successive differences (of the three finest grids). */
typedef struct {
  PetscBool done;
  PetscInt  ngrids;                 /* K */
  PetscInt  N[HS_EXTRAP_GRIDS_MAX]; /* the grids, coarsest first: N[0 .. ngrids - 1] */
  PetscReal J, J_error, J_order;
  PetscReal H_mean, H_mean_error, H_mean_order;
  PetscReal T, T_error, T_order; /* a free T (else T = the fixed one, no error) */
  PetscReal states_error;        /* largest estimate over the states at the nodes of N/4 */
  PetscReal wall_time_s;         /* the solves at N/2 and N/4 and the extrapolation (rank 0's clock) */
  PetscBool J_roundoff, H_mean_roundoff, T_roundoff; /* its differences at round-off: no order (order 0) */
  PetscBool pre_asymptotic; /* an order far from the schemes' 2 (docs/accuracy.md): the estimate is unreliable */
  PetscBool romberg;        /* J, H_mean, T: Romberg of all ngrids grids (HsSolverSetExtrapolateRomberg) */
} HsExtrap;

#define HS_EXTREMAL_STARTS 7 /* the wider search's starts (bvp/drivers/extremal.c, StartRows), named by: */
#define HS_EXTREMAL_START_NAMES                                                                                        \
  {                                                                                                                    \
    "default guess", "coarse grid refined", "mirrored", "perturbed +sin(pi t/T)", "perturbed -sin(pi t/T)",            \
        "perturbed +sin(2 pi t/T)", "perturbed -sin(2 pi t/T)"                                                         \
  }
#define HS_EXTREMAL_START_MAX_IT 100 /* IPOPT's iterations from each start but the default guess: at most this, */
#define HS_EXTREMAL_START_MIN_IT 30  /* ... at least this, else HS_EXTREMAL_IT_FACTOR times the default guess's */
#define HS_EXTREMAL_IT_FACTOR 3
#define HS_EXTREMAL_BUDGET 3          /* the starts after the first two stop once the check took this many times ... */
#define HS_EXTREMAL_MAX_PERTURBATION 1e8 /* the starts after the first: IPOPT's max_hessian_perturbation */
#define HS_EXTREMAL_BUDGET_MIN_S 1.0  /* ... the default guess's solve, or this many seconds if more */
#define HS_EXTREMAL_COARSE_FAR 0.5    /* spurious: Newton at N/2 from the restriction farther than this (relative) */
#define HS_EXTREMAL_PERTURB_LARGE 0.5 /* the perturbed starts: a smooth perturbation of each position, relative */
/** The wrong-extremal guard (HsSolverCheckExtremal, bvp/drivers/extremal.c): the direct problem on the same grid
    (same state scheme, kkt costates) solved by IPOPT from the solution ("near") and from the default
    guess ("default"). IPOPT's steps are those of a minimizer (inertia-corrected): its solution from
    this one is the direct problem's local minimum nearest to it, and a last step without Hessian
    regularization certifies it (the KKT matrix has the inertia of a strict local minimum). */
typedef struct {
  PetscBool done;
  char      not_made[192]; /* done but not made: why ("IPOPT is not available: ..."); "" when made */
  PetscBool near_converged, default_converged;
  PetscReal J_near, J_default; /* their J^d */
  PetscReal distance;          /* max over the nodes of |x_near - x| / max(1, max |x|) */
  PetscReal regularization;    /* of IPOPT's last step from this solution (0: none; -1: no step) */
  PetscBool perturbed;         /* IPOPT took no step from this solution (a KKT point to its tolerance) and
                                  started again from it perturbed by HS_EXTREMAL_PERTURB */
  PetscBool lower_elsewhere;   /* J_default < J_near - max(HS_EXTREMAL_RTOL max(1, |J_near|), |J - J_near|): a lower
                                  minimum exists, by more than the scheme offset at this extremal (near not
                                  converged: J_default < J - HS_EXTREMAL_OFFSET_RTOL max(1, |J|)) */
  PetscBool moved_away;        /* distance > HS_EXTREMAL_FAR: IPOPT from this solution descended elsewhere */
  PetscBool descended;         /* IPOPT from this solution reached no minimum but a cost J_near below J^d by more
                                  than HS_EXTREMAL_OFFSET_RTOL max(1, |J^d|): no minimum here (unbounded below?) */
  /* the wider search (issue 42): IPOPT from HS_EXTREMAL_STARTS starts, HS_EXTREMAL_START_NAMES names them (start 0
     is the default guess: default_converged and J_default are its); lower_elsewhere compares the lowest */
  PetscInt  starts;                              /* starts tried (HS_EXTREMAL_STARTS; 0: none) */
  PetscBool start_converged[HS_EXTREMAL_STARTS]; /* IPOPT reached a minimum from start i */
  PetscReal J_start[HS_EXTREMAL_STARTS];         /* its J^d */
  PetscInt  it_start[HS_EXTREMAL_STARTS];        /* its IPOPT iterations */
  PetscInt  lowest;                              /* the start of the lowest minimum reached; -1: none */
  PetscReal T_lowest;                            /* its final time */
  /* grid sequencing: Newton (this scheme) at N/2 from this solution restricted (N even, N >= 4) */
  PetscInt  N_coarse;                  /* N/2; 0: not made (N odd, < 4 or N/2 + 1 < ranks) */
  PetscBool coarse_converged;          /* Newton converged there */
  PetscReal J_coarse, coarse_distance; /* its J^d; max |x_coarse,k - x_2k| / max(1, max |x|) */
  PetscBool spurious;                  /* no counterpart at N/2: Newton converged there, coarse_distance >
                                          HS_EXTREMAL_COARSE_FAR */
  PetscReal wall_time_s;               /* the check's IPOPT solves (rank 0's clock) */
} HsExtremal;
#define HS_EXTREMAL_RTOL 1e-6
#define HS_EXTREMAL_FAR 0.1
#define HS_EXTREMAL_OFFSET_RTOL 0.1 /* without a minimum next to the extremal: J_default below J^d by this, relative */
#define HS_EXTREMAL_PERTURB 1e-2
#define HS_EXTREMAL_MAX_VARIABLES 10000 /* -hs_check_extremal auto: N (m + 2n) at most this */

/** One attempt of the solve strategy (HsSolverSetStrategy, bvp/drivers/strategy.c): what it was, how it ended. */
#define HS_STRATEGY_MAX_ATTEMPTS 7
typedef struct {
  char      name[96];   /* "newton", "l2 line search", "grid sequencing from N = 10", "direct guess", "continuation in reach" */
  char      status[64]; /* the stopping reason of its last Newton solve */
  PetscBool converged;
  PetscInt  newton_iterations;
  PetscReal seconds;
  char      reached[128]; /* a failed attempt's furthest point ("homotopy reached theta = 0.25 of 1"), or "" */
} HsAttempt;

/** Bounded controls in the indirect solvers (docs/controls.md): the eps-continuation (HsSolverSetBoundsSmoothing)
    and the solution's switching structure. */
#define HS_BOUNDS_EPS0 0.1       /* -hs_bounds_eps0: the first smoothing, relative to hi - lo */
#define HS_BOUNDS_EPS_FACTOR 0.1 /* -hs_bounds_eps_factor: its reduction per step */
#define HS_BOUNDS_EPS_MIN 1e-4   /* -hs_bounds_eps_min: the smallest before eps = 0 (bang-bang: the final eps) */
#define HS_BOUNDS_MAX_STEPS 100  /* at most this many smoothed solves from eps0 down to eps_min */
typedef struct {
  PetscBool active;      /* the problem's controls follow the bounded law (u_min/u_max, or R_jj = 0) */
  PetscReal eps;         /* the law's smoothing at the solution returned (0: the exact projection) */
  PetscBool exact;       /* converged with eps = 0 */
  PetscInt  steps;       /* Newton solves of the continuation */
  PetscInt  switches;    /* switching nodes: a control changes arc (free, lower, upper) between their intervals */
  PetscReal arc_balance; /* max |H^d_{k+1/2} - H^d_{k-1/2} + Dt_k/2| over the nodes inside arcs */
  PetscReal switch_jump; /* the same over the switching nodes */
} HsBounds;

/** Results of a solve; identical on every rank after HsSolverSolve. */
typedef struct {
  PetscBool           converged;
  SNESConvergedReason reason;                         /* Newton's (formulations solved by SNES) */
  char                status[64];                     /* the stopping reason in words: SNES's reason or IPOPT's status */
  PetscInt            newton_iterations;
  PetscInt            hold_iterations; /* of them, with a free T held at its guess first (cold start) */
  PetscInt            ksp_iterations;                 /* summed over Newton iterations */
  PetscReal           residual_norm;                  /* ||F|| of the h-scaled residual */
  PetscReal           noise_floor; /* the last estimate of ||F||'s evaluation error in this solve (0: none made) */
  PetscBool           at_floor;    /* Newton stopped at ||F|| <= -hs_snes_noise times noise_floor */
  PetscInt polish_iterations;      /* Newton steps after a stop at the round-off level or the floor (convergence.c) */
  PetscBool           tolerance_only; /* SNES stopped at a looser tolerance than the solve can vouch for: converged is
                                         false (HsSolverVerifyConvergence, docs/numerics.md) */
  PetscReal           vouch_level; /* the largest ||F|| a converged solve may end with (tolerance_only: what was missed) */
  PetscInt            suspect_intervals; /* intervals that may cross a singularity of the problem's data (diagnostics.c) */
  PetscInt            first_suspect;     /* the first of them (-1: none) */
  PetscReal           T;                              /* the final time (the solved one when it is free) */
  PetscReal           J;                              /* J^d = h sum L^d (+ phi(x_N)) */
  PetscReal           H_mean, H_min, H_max, H_spread; /* H^d over the N intervals */
  PetscReal           H_balance; /* max_k |H^d_{k+1/2} - H^d_{k-1/2} + Dt_k/2| (HsDiscEllTimeChange): the discrete
                                    dH/dt = -d ell/dt; round-off for the conserving scheme */
  PetscInt  mumps_retries;       /* solves repeated with a larger MUMPS workspace (ICNTL(14)) */
  PetscBool autonomous;          /* no time-dependent running cost: H^d itself is conserved */
  PetscReal energy_work_spread;  /* max - min of E_k - W_k */
  PetscInt  segments;            /* shooting segments M (transcription: N, one interval each) */
  PetscReal sensitivity_growth;  /* shooting: largest rho(|d(march)/dz|) of a segment; 0: not computed */
  PetscReal regularization;      /* ipopt: the Hessian regularization delta_w of IPOPT's last step (0: none, its KKT
                                    matrix had the inertia of a minimum); -1: not solved by IPOPT */
  char      diagnosis[512];      /* why the solve failed, where the formulation can tell; "" otherwise */
  char      initial_guess[256];  /* -hs_initial_guess direct: the direct solve and the homotopy steps; "" otherwise */
  PetscReal wall_time_s;
  PetscReal peak_memory_mb[3]; /* the processes' peak resident memory at the end of the solve (getrusage
                                  ru_maxrss): max, min and mean over the ranks, MB */
  HsExtrap  extrap; /* HsSolverExtrapolate after the solve; extrap.done = false otherwise */
  HsExtremal extremal; /* HsSolverCheckExtremal after the solve; extremal.done = false otherwise */
  PetscInt  nattempts; /* the solve strategy's attempts, in order; the last converged if any did */
  HsAttempt attempts[HS_STRATEGY_MAX_ATTEMPTS];
  HsBounds   bounds; /* bounded controls (docs/controls.md); bounds.active = false otherwise */
  PetscInt   ninv;   /* the problem's monitored invariants (HsProblem.ninv; docs/output-format.md) */
  PetscReal  inv_min[HS_MAX_INVARIANTS], inv_max[HS_MAX_INVARIANTS]; /* each one's min and max over the nodes
                                                                        (NaN: an evaluation failed) */
} HsResults;

typedef struct _p_HsSolver *HsSolver;
typedef const char         *HsSolverType;
#define HSSOLVERTRANSCRIPTION "transcription"
#define HSSOLVERSHOOTING "shooting"
#define HSSOLVERIPOPT "ipopt"

extern PetscClassId      HS_SOLVER_CLASSID;
extern PetscFunctionList HsSolverList;

PetscErrorCode HsInitializePackage(void);
PetscErrorCode HsSolverRegister(const char name[], PetscErrorCode (*create)(HsSolver));

PetscErrorCode HsSolverCreate(MPI_Comm comm, HsSolver *solver);
PetscErrorCode HsSolverDestroy(HsSolver *solver);
PetscErrorCode HsSolverSetType(HsSolver s, HsSolverType type);
PetscErrorCode HsSolverGetType(HsSolver s, HsSolverType *type);
PetscErrorCode HsSolverSetProblem(HsSolver s, HsProblem *prob);
PetscErrorCode HsSolverGetProblem(HsSolver s, HsProblem **prob);
PetscErrorCode HsSolverSetNumIntervals(HsSolver s, PetscInt N);
PetscErrorCode HsSolverGetNumIntervals(HsSolver s, PetscInt *N);
PetscErrorCode HsSolverSetScheme(HsSolver s, const char *scheme);
PetscErrorCode HsSolverGetScheme(HsSolver s, const char **scheme);
PetscErrorCode HsSolverSetSchemes(HsSolver s, const char *state_scheme, const char *costate_scheme);
PetscErrorCode HsSolverGetSchemes(HsSolver s, const char **state_scheme, const char **costate_scheme);
PetscErrorCode HsSolverSetDGTolerance(HsSolver s, PetscReal tol);
PetscErrorCode HsSolverGetDGTolerance(HsSolver s, PetscReal *tol);
PetscErrorCode HsSolverSetBoundsSmoothing(HsSolver s, PetscReal eps0, PetscReal factor, PetscReal eps_min);
PetscErrorCode HsSolverGetBoundsSmoothing(HsSolver s, PetscReal *eps0, PetscReal *factor, PetscReal *eps_min);
PetscErrorCode HsSolverSetRoundoffFactor(HsSolver s, PetscReal c);
PetscErrorCode HsSolverGetRoundoffFactor(HsSolver s, PetscReal *c);
PetscErrorCode HsSolverSetNoiseFactor(HsSolver s, PetscReal c);
PetscErrorCode HsSolverSetPolish(HsSolver s, PetscInt k);
PetscErrorCode HsSolverExtrapolate(HsSolver s);
PetscErrorCode HsSolverSolveExtrapolated(HsSolver s);
PetscErrorCode HsSolverSetExtrapolateRomberg(HsSolver s, PetscBool flg);
PetscErrorCode HsSolverSetExtrapolateGrids(HsSolver s, PetscInt K);
PetscErrorCode HsSolverGetExtrapolateGrids(HsSolver s, PetscInt *K);
PetscErrorCode HsSolverCheckExtremal(HsSolver s);
PetscErrorCode HsSolverWriteLowerExtremal(HsSolver s, const char *dir, PetscBool *written);
PetscErrorCode HsSolverConvergenceStudy(HsSolver s, PetscInt levels, const char dir[], PetscBool *complete);
PetscErrorCode HsSolverGetNoiseFactor(HsSolver s, PetscReal *c);
/** The linear solver of the Newton formulations (HsSolverSetLinearSolver, -hs_linear_solver): auto (the banded
    LU of bvp/petscext/pcband.c when at most HS_BAND_AUTO_MAX_UNKNOWNS unknowns per node, a free T by its bordered step; for larger node
    blocks GMRES on the transcription's Jacobian preconditioned by the LU of its non-negligible entries,
    bvp/petscext/pcdrop.c, slab by slab on more than one rank, bvp/petscext/pcslab.c; MUMPS LU otherwise), band,
    mumps, drop or slab; -pc_type overrides. */
typedef enum { HS_LINEAR_SOLVER_AUTO, HS_LINEAR_SOLVER_BAND, HS_LINEAR_SOLVER_MUMPS, HS_LINEAR_SOLVER_DROP, HS_LINEAR_SOLVER_SLAB } HsLinearSolver;
#define HS_BAND_AUTO_MAX_UNKNOWNS 128 /* n <= 32 */
#define HS_SLAB_AUTO_MIN_RANKS 2 /* auto: slab instead of drop from this many ranks (bench/README.md, issue 44) */
#define HS_DROP_TOL_DEFAULT 1e-14 /* -pc_hsdrop_tol: below the LU's own backward error (bvp/petscext/pcdrop.c) */
#define HS_DROP_KSP_RTOL 1e-12   /* GMRES around hsdrop: -ksp_rtol, -ksp_max_it */
#define HS_DROP_KSP_MAXIT 100
#define HS_DROP_REGROW_DEFAULT 5 /* -pc_hsdrop_regrow */
#define HS_DROP_MUMPS_ORDERING 2 /* MUMPS' ICNTL(7) for hsdrop: AMF (fewer flops than PORD for ncar; issue 44) */
PetscErrorCode HsSolverSetLinearSolver(HsSolver s, HsLinearSolver ls);
PetscErrorCode HsSolverGetLinearSolver(HsSolver s, HsLinearSolver *ls);
PetscErrorCode HsSolverSetInPlace(HsSolver s, PetscBool flg);
PetscErrorCode HsSolverGetInPlace(HsSolver s, PetscBool *flg);
PetscErrorCode HsSolverSetCondense(HsSolver s, PetscBool flg);
PetscErrorCode HsSolverGetCondense(HsSolver s, PetscBool *flg);
PetscErrorCode HsSolverSetCheckBoundary(HsSolver s, PetscBool flg);
PetscErrorCode HsProblemBoundaryDependencies(const HsProblem *P, PetscInt *d, PetscBool *bad, char *msg, size_t len);
PetscErrorCode HsSolverSetMonitor(HsSolver s, PetscBool monitor);
PetscErrorCode HsSolverGetMonitor(HsSolver s, PetscBool *monitor);
PetscErrorCode HsSolverSetWarmStart(HsSolver s, PetscBool warm);
PetscErrorCode HsSolverGetWarmStart(HsSolver s, PetscBool *warm);
PetscErrorCode HsSolverSetInitialGuess(HsSolver s, PetscInt Nsrc, const PetscReal *nodes);
PetscErrorCode HsSolverGetInitialGuess(HsSolver s, PetscInt *Nsrc, const PetscReal **nodes);
PetscErrorCode HsSolverSetInitialGuessFromFile(HsSolver s, const char *path);
PetscErrorCode HsSolverSetOptionsPrefix(HsSolver s, const char prefix[]);
PetscErrorCode HsSolverAppendOptionsPrefix(HsSolver s, const char prefix[]);
PetscErrorCode HsSolverGetOptionsPrefix(HsSolver s, const char *prefix[]);
PetscErrorCode HsSolverSetFromOptions(HsSolver s);
PetscErrorCode HsSolverGetSNES(HsSolver s, SNES *snes);
PetscErrorCode HsSolverSetUp(HsSolver s);
PetscErrorCode HsSolverSolve(HsSolver s);
PetscErrorCode HsSolverGetResults(HsSolver s, HsResults *res);
PetscErrorCode HsSolverGetIterate(HsSolver s, Vec *X);
PetscErrorCode HsSolverSetIterate(HsSolver s, Vec X);
PetscErrorCode HsSolverGetSolution(HsSolver s, Vec *X);
PetscErrorCode HsSolverView(HsSolver s, PetscViewer viewer);
PetscErrorCode HsSolverWriteOutput(HsSolver s, const char *dir);
/** The trajectory's format in the output (HsSolverSetOutputFormat, -hs_output_format): csv (rank 0), hdf5 (one
    trajectory.h5 written by every rank, bvp/interface/outputh5.c), auto (hdf5 from HS_OUTPUT_HDF5_AUTO_N on). */
typedef enum { HS_OUTPUT_FORMAT_CSV, HS_OUTPUT_FORMAT_HDF5, HS_OUTPUT_FORMAT_AUTO } HsOutputFormat;
#define HS_OUTPUT_HDF5_AUTO_N 1000000 /* -hs_output_format auto: hdf5 from this many intervals on */
PetscErrorCode HsSolverSetOutputFormat(HsSolver s, HsOutputFormat format);
PetscErrorCode HsSolverGetOutputFormat(HsSolver s, HsOutputFormat *format);
PetscErrorCode HsSolverCompare(HsSolver s, const char *dir, PetscBool *converged);

/* Multiple shooting (type HSSOLVERSHOOTING; errors for other types). */
typedef enum { HS_SHOOT_KSP_DIRECT, HS_SHOOT_KSP_RANKBLOCK } HsShootKSPType;
typedef enum { HS_SHOOT_INIT_LINEAR, HS_SHOOT_INIT_TRANSCRIPTION } HsShootInitType;
PetscErrorCode HsSolverShootSetNumSegments(HsSolver s, PetscInt M);
PetscErrorCode HsSolverShootGetNumSegments(HsSolver s, PetscInt *M);
PetscErrorCode HsSolverShootSetKnots(HsSolver s, PetscInt n, const PetscInt knots[]);
PetscErrorCode HsSolverShootGetKnots(HsSolver s, PetscInt *n, const PetscInt *knots[]);
PetscErrorCode HsSolverShootSetLinearSolver(HsSolver s, HsShootKSPType type);
PetscErrorCode HsSolverShootGetLinearSolver(HsSolver s, HsShootKSPType *type);
PetscErrorCode HsSolverShootSetInitialGuessType(HsSolver s, HsShootInitType type);
PetscErrorCode HsSolverShootGetInitialGuessType(HsSolver s, HsShootInitType *type);
PetscErrorCode HsSolverShootSetMatrixFree(HsSolver s, PetscBool mf);
PetscErrorCode HsSolverShootGetMatrixFree(HsSolver s, PetscBool *mf);
PetscErrorCode HsSolverShootSetMaxGrowth(HsSolver s, PetscReal growth);
PetscErrorCode HsSolverShootGetMaxGrowth(HsSolver s, PetscReal *growth);
PetscErrorCode HsSolverShootSetStepTolerances(HsSolver s, PetscReal atol, PetscReal stol, PetscInt max_it);
PetscErrorCode HsSolverShootGetStepTolerances(HsSolver s, PetscReal *atol, PetscReal *stol, PetscInt *max_it);

/* Who solves a direct problem (costate scheme trapezoidal or kkt): Newton on its KKT equations in the
 * chosen formulation, or the NLP by IPOPT (HsSolverSetDirectSolver, -hs_direct_solver). DEFAULT: kkt
 * for a solve of its own, IPOPT for the direct side of -hs_compare and -hs_initial_guess direct. */
typedef enum { HS_DIRECT_DEFAULT, HS_DIRECT_KKT, HS_DIRECT_IPOPT } HsDirectSolver;
PetscErrorCode HsSolverSetDirectSolver(HsSolver s, HsDirectSolver ds);
PetscErrorCode HsSolverGetDirectSolver(HsSolver s, HsDirectSolver *ds);

/* The initial guess (HsSolverSetInitialGuessType, -hs_initial_guess): DEFAULT, the stored guess
 * (HsSolverSetInitialGuess, -hs_init) or the boundary states interpolated with lambda = 0; DIRECT, the
 * solution of the direct problem with the same state scheme on the same grid (IPOPT unless
 * -hs_direct_solver kkt), states and multipliers, and if Newton fails from there a homotopy in the
 * costate equation from the direct (kkt) one to the solver's. */
typedef enum { HS_GUESS_DEFAULT, HS_GUESS_DIRECT } HsGuessType;
#define HS_HOMOTOPY_STEPS_DEFAULT 4
#define HS_HOMOTOPY_MAX_HALVINGS 8
#define HS_HOMOTOPY_MIN_STEP (1.0 / 1024) /* the homotopy stops when its step in theta falls below this */
#define HS_HOMOTOPY_MAX_STEPS 40          /* ... or after this many Newton solves */
PetscErrorCode HsSolverSetInitialGuessType(HsSolver s, HsGuessType type);
PetscErrorCode HsSolverGetInitialGuessType(HsSolver s, HsGuessType *type);

/* The costates of the initial guess (HsSolverSetGuessCostates, -hs_guess_costates): GIVEN, those of the guess
 * (0 in the default guess); IMPLIED, computed from the guess's states (constrained systems: the control, constraint
 * force and costates that the states' momentum equation implies, docs/constrained.md, "Costates implied by the
 * states"). */
typedef enum { HS_GUESS_COSTATES_GIVEN, HS_GUESS_COSTATES_IMPLIED } HsGuessCostates;
PetscErrorCode HsSolverSetGuessCostates(HsSolver s, HsGuessCostates gc);
PetscErrorCode HsSolverGetGuessCostates(HsSolver s, HsGuessCostates *gc);

/* What a cold solve does when Newton from its start fails (HsSolverSetStrategy, -hs_strategy;
 * bvp/drivers/strategy.c): AUTO tries an l2 line search, grid sequencing from a coarse grid, the direct guess
 * and continuation in reach (and the parameters of -hs_strategy_continue), for a small R in log_weight, until one
 * converges;
 * NEWTON stops after Newton. Grid sequencing starts at the coarsest N/2^L >= HS_STRATEGY_COARSEST_N. */
typedef enum { HS_STRATEGY_AUTO, HS_STRATEGY_NEWTON } HsStrategy;
#define HS_STRATEGY_COARSEST_N 8
PetscErrorCode HsSolverSetStrategy(HsSolver s, HsStrategy strategy);
PetscErrorCode HsSolverGetStrategy(HsSolver s, HsStrategy *strategy);
PetscErrorCode HsSolverSetStrategyTime(HsSolver s, PetscReal seconds);
PetscErrorCode HsSolverGetStrategyTime(HsSolver s, PetscReal *seconds);

/* The direct NLP by IPOPT (type HSSOLVERIPOPT; errors for other types). */
PetscErrorCode HsIpoptAvailable(MPI_Comm comm, PetscBool *avail, char msg[], size_t len);
PetscErrorCode HsSolverIpoptSetTolerances(HsSolver s, PetscReal tol, PetscInt max_it);
PetscErrorCode HsSolverIpoptGetTolerances(HsSolver s, PetscReal *tol, PetscInt *max_it);
PetscErrorCode HsSolverIpoptSetMaxPerturbation(HsSolver s, PetscReal m);
PetscErrorCode HsSolverIpoptSetOrdering(HsSolver s, const char *ordering);
PetscErrorCode HsSolverIpoptGetOrdering(HsSolver s, const char **ordering);
PetscErrorCode HsSolverIpoptSetPrintLevel(HsSolver s, PetscInt level);
PetscErrorCode HsSolverIpoptGetPrintLevel(HsSolver s, PetscInt *level);
PetscErrorCode HsSolverIpoptSetDerivativeTest(HsSolver s, const char *test);
PetscErrorCode HsSolverIpoptGetDerivativeTest(HsSolver s, const char **test);

/* Continuation in problem parameters (bvp/drivers/continuation.c). */
typedef struct _p_HsContinuation *HsContinuation;
extern PetscClassId               HS_CONTINUATION_CLASSID;
#define HS_CONTINUATION_MAX_HALVINGS_DEFAULT 6
#define HS_CONTINUATION_STEPS_DEFAULT 10
#define HS_CONTINUATION_MAX_SOLVES(steps) (8 * (steps) + 40) /* a natural stage stops after this many solves */
#define HS_CONTINUATION_STEPS_MAX 10000000 /* most -hs_continue_steps (8 and 20 solves a step fit an int) */
#define HS_LOG_WEIGHT_MAX 16 /* |-hs_continue_from| of the pseudo-parameter log_weight (R times 10^log_weight) */
PetscErrorCode HsContinuationCreate(HsSolver s, HsContinuation *c);
PetscErrorCode HsContinuationDestroy(HsContinuation *c);
PetscErrorCode HsContinuationAddStage(HsContinuation c, const char *name, PetscReal from, PetscInt steps);
PetscErrorCode HsContinuationGetNumStages(HsContinuation c, PetscInt *n);
PetscErrorCode HsContinuationGetBranchPoints(HsContinuation c, PetscInt *n, PetscInt max, PetscReal where[], PetscBool *tested);
PetscErrorCode HsContinuationSetMaxHalvings(HsContinuation c, PetscInt max);
PetscErrorCode HsContinuationGetMaxHalvings(HsContinuation c, PetscInt *max);
PetscErrorCode HsContinuationSetMonitor(HsContinuation c, PetscBool monitor);
PetscErrorCode HsContinuationGetMonitor(HsContinuation c, PetscBool *monitor);
PetscErrorCode HsContinuationSetOptionsPrefix(HsContinuation c, const char prefix[]);
PetscErrorCode HsContinuationSetFromOptions(HsContinuation c);
PetscErrorCode HsContinuationSetOutput(HsContinuation c, const char dir[]);
typedef enum { HS_CONTINUATION_NATURAL, HS_CONTINUATION_ARCLENGTH } HsContinuationType;
PetscErrorCode HsContinuationSetType(HsContinuation c, HsContinuationType type);
PetscErrorCode HsContinuationGetType(HsContinuation c, HsContinuationType *type, PetscInt *folds, PetscReal *fold);
PetscErrorCode HsContinuationSolve(HsContinuation c);
PetscErrorCode HsContinuationGetResult(HsContinuation c, PetscBool *reached, const char **diagnosis);

/* Problems from the options database (bvp/interface/problemopts.c). */
/* Inside PetscOptionsBegin/End: a failed call or check ends the block (PetscOptionsEnd_Private frees
   its strings) before the error returns, so that an error path leaks nothing (-malloc_dump, LSan). */
#define HsOptionsCall(call) \
  do { \
    PetscErrorCode ierr_hs_ = (call); \
    if (PetscUnlikely(ierr_hs_)) { \
      (void)PetscOptionsEnd_Private(PetscOptionsObject); \
      return PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, ierr_hs_, PETSC_ERROR_REPEAT, " "); \
    } \
  } while (0)
#define HsOptionsCheck(cond, comm, code, ...) \
  do { \
    if (PetscUnlikely(!(cond))) { \
      (void)PetscOptionsEnd_Private(PetscOptionsObject); \
      SETERRQ(comm, code, __VA_ARGS__); \
    } \
  } while (0)

/* Interruption (SIGTERM/SIGINT), checkpoints and restart (bvp/interface/checkpoint.c, docs/reliability.md) */
PetscErrorCode HsInstallInterruptHandlers(void);
PetscBool      HsInterruptPending(void);
#define HS_EXIT_WATCHDOG 4 /* the exit status of a process the watchdog ended (HsSetTermGrace) */
#define HS_EXIT_INTERRUPTED 3 /* stopped by a signal, its checkpoint (if the solve has one) written */
#define HS_EXIT_UNSAVED 5     /* stopped by a signal, its checkpoint not written (HsSolverGetInterruptUnsaved) */
PetscErrorCode HsSetTermGrace(PetscInt seconds, PetscMPIInt rank);
PetscErrorCode HsSolverSetCheckpoint(HsSolver s, const char dir[], PetscInt every_its, PetscReal every_s);
PetscErrorCode HsSolverGetCheckpoint(HsSolver s, const char **dir, PetscInt *every_its, PetscReal *every_s);
PetscErrorCode HsSolverSetRestart(HsSolver s, const char dir[]);
PetscErrorCode HsSolverGetInterrupted(HsSolver s, PetscBool *interrupted, const char **why);
PetscErrorCode HsSolverGetInterruptUnsaved(HsSolver s, PetscBool *unsaved);
PetscErrorCode HsContinuationSetUp(HsContinuation c);

/* Checks of the options database and the output (bvp/sys/options.c, bvp/interface/output.c) */
PetscErrorCode HsOptionsCheckConsistent(MPI_Comm comm);
PetscErrorCode HsOptionsCheckValues(MPI_Comm comm, const char prefix[]);
PetscErrorCode HsOptionsWarnUnused(MPI_Comm comm, const char prefix[]);
PetscErrorCode HsOptionsNameValueError(char msg[], size_t len);
PetscErrorCode HsOptionsCheckUsed(MPI_Comm comm, const char prefix[], const char defer[]);
PetscErrorCode HsOptionsString(PetscOptionItems *PetscOptionsObject, const char key[], const char help[],
                               const char man[], const char dflt[], char buf[], size_t len, PetscBool *set);
PetscErrorCode HsOptionsBool(PetscOptionItems *PetscOptionsObject, const char key[], const char help[],
                             const char man[], PetscBool cur, PetscBool *val, PetscBool *set);
PetscErrorCode HsOptionsInt(PetscOptionItems *PetscOptionsObject, const char key[], const char help[], const char man[],
                            PetscInt cur, PetscInt *val, PetscBool *set, PetscInt lo, PetscInt hi);
PetscErrorCode HsOptionsReal(PetscOptionItems *PetscOptionsObject, const char key[], const char help[], const char man[],
                             PetscReal cur, PetscReal *val, PetscBool *set);
const char    *HsOptionName(const char prefix[], const char key[], char buf[], size_t len);
/* the key as the user gives it to obj, an object with an options prefix (a sub-solver's): "-" prefix key+1 */
#define HS_KEY_LEN 256
#define HsKey(obj, key) HsOptionName(((PetscObject)(obj))->prefix, (key), (char[HS_KEY_LEN]){0}, HS_KEY_LEN)
PetscErrorCode HsCheckOutputDirectory(MPI_Comm comm, const char dir[]);
PetscBool      HsIsOutputFileName(const char name[]);
PetscErrorCode HsCheckDriverOutput(MPI_Comm comm, const char dir[], PetscBool study, PetscBool compare);
PetscErrorCode HsRemoveDriverOutput(MPI_Comm comm, const char dir[], PetscBool study, PetscBool compare);

PetscErrorCode HsProblemCreateFromOptions(MPI_Comm comm, const char prefix[], HsProblem **prob);
PetscErrorCode HsProblemSetFromOptions(MPI_Comm comm, const char prefix[], HsProblem *prob);

#endif
