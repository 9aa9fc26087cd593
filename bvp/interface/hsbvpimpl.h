/* hamshoot: private definition of HsSolver (bvp/ only).
 *
 * HsSolver is a PETSc object: a header (options prefix, type name, composed
 * functions, reference count), the common state of every formulation, and a
 * table of operations that each formulation (bvp/impls/) fills in its
 * constructor, registered by name with HsSolverRegister():
 *
 *   setfromoptions  its own -hs_* keys, each mapped to its typed setter
 *   setup           X, F, the Jacobian (or a matrix-free operator), the node-layout vector
 *                   Xnodes, the SNES callbacks, and the default KSP/PC/line search
 *                   (applied before SNESSetFromOptions, so that -ksp_* etc. override them)
 *   setupksp        after the options: settings of sub-solvers that exist only once the KSP has
 *                   its operators (shooting: the exact LU blocks of rankblock)
 *   guess           writes the initial guess into X from HsSolverGuessRow() (node rows)
 *   resetiterate    X was changed from outside (HsSolverSetIterate): forget cached work
 *   presolve        at the start of every solve, after the discretization s->disc was (re)built
 *   solve           replaces Newton (SNESSolve) by the formulation's own solver (ipopt); fills
 *                   s->res.{converged, reason, status, newton_iterations, residual_norm}
 *   postsolve       after the final residual evaluation: fill Xnodes from the solution
 *   describe        the formulation in a few words for View ("multiple shooting with 4 segments")
 *   view            extra lines of the summary (View)
 *   writesummary    extra members of summary.json (rank 0, FILE already open)
 *   destroy         frees data and un-composes the type's functions
 *   residual        F(X) without SNES (Newton formulations; the noise-floor estimate calls it)
 *   diagnostics     rank 0: J^d, H, E - W from the gathered Xnodes and the formulation's own data, instead of
 *                   the node formulas (diagnostics.c's SumDiagnostics; -hs_scheme conserving4), or NULL
 *   conserved       the conserved quantity's violation at X, relative (HsSolverConservedMeasure), where X is not
 *                   the node layout (conserving4), or NULL
 */
#ifndef HSBVPIMPL_H
#define HSBVPIMPL_H

#include <petsc/private/petscimpl.h>
#include <petscdmda.h>
#include <stdio.h>

#include "../../mpi/hsmpi.h"
#include "../petscext/hspetscext.h"
#include "../sys/hssys.h"

typedef struct _HsSolverOps *HsSolverOps;
/* A formulation's residual F(X) (its SNES function without the domain-error flag): *dom on a domain error
   (the same on every rank). Collective. */
typedef PetscErrorCode (*HsResidualFn)(HsSolver s, Vec X, Vec F, PetscBool *dom);
struct _HsSolverOps {
  PetscErrorCode (*setfromoptions)(HsSolver, PetscOptionItems *);
  PetscErrorCode (*setup)(HsSolver);
  PetscErrorCode (*setupksp)(HsSolver, KSP);
  PetscErrorCode (*guess)(HsSolver, Vec);
  PetscErrorCode (*resetiterate)(HsSolver);
  PetscErrorCode (*presolve)(HsSolver);
  PetscErrorCode (*solve)(HsSolver);
  PetscErrorCode (*postsolve)(HsSolver);
  PetscErrorCode (*describe)(HsSolver, char *, size_t);
  PetscErrorCode (*view)(HsSolver, PetscViewer);
  PetscErrorCode (*writesummary)(HsSolver, FILE *);
  PetscErrorCode (*destroy)(HsSolver);
  HsResidualFn residual; /* the SNES function's residual (Newton formulations), for the noise estimate */
  PetscErrorCode (*diagnostics)(HsSolver, const PetscScalar *, PetscReal *);
  PetscErrorCode (*conserved)(HsSolver, Vec, PetscReal *);
};

typedef enum { HS_SCHEME_CONSERVING, HS_SCHEME_DIRECT, HS_SCHEME_CONSERVING4 } HsSchemeKind;

struct _p_HsSolver {
  PETSCHEADER(struct _HsSolverOps);
  /* settings (setters) */
  HsProblem   *prob;
  PetscInt     N;                              /* 0: the problem's default */
  HsSchemeKind scheme;                         /* -hs_scheme */
  char         state_scheme[64];               /* explicit -hs_state_scheme ("" = from scheme) */
  char         costate_scheme[64];             /* explicit -hs_costate_scheme */
  char         ss[64], cs[64];                 /* the resolved pair (HsSolverGetSchemes, SetUp) */
  PetscReal    dg_tol;                         /* -hs_dg_tol */
  PetscReal bnd_eps0, bnd_factor, bnd_eps_min; /* bounded controls: -hs_bounds_eps0, _eps_factor, _eps_min (bounds.c) */
  PetscReal bnd_e_now;     /* the eps-continuation's smoothing now, relative (-1: outside it): bounds_smoothing */
  PetscReal restart_bnd_e; /* -hs_restart: the smoothing its checkpoint was taken at, to go on from there (-1: none) */
  PetscReal     *bnd_sw; /* rank 0: bnd_nsw switches (control, bound -1/+1, time) of the last solution (bounds.c) */
  PetscInt      *bnd_at; /* rank 0: per control the intervals at the lower and at the upper bound */
  PetscInt       bnd_nsw;
  PetscReal      roundoff;      /* -hs_snes_roundoff */
  PetscReal      noise_factor;  /* -hs_snes_noise */
  PetscInt       polish_max;    /* -hs_snes_polish: at most this many polish steps (0: none) */
  PetscBool      romberg;       /* -hs_extrapolate_romberg: HsSolverExtrapolate eliminates h^p and h^(p+2) */
  PetscInt       ext_grids;     /* -hs_extrapolate_grids: HsSolverExtrapolate's K grids N/2^(K-1) .. N */
  HsLinearSolver linear_solver; /* -hs_linear_solver */
  PetscBool      monitor;       /* -hs_monitor */
  PetscBool      warm;          /* HsSolverSetWarmStart */
  PetscReal     *guess;         /* initial guess: guess_N+1 rows of 4n, on every rank */
  PetscInt       guess_N;
  PetscBool      guess_nodal;          /* its costates at the nodes (conserving4's): cubic interpolation, guess.c */
  PetscReal      guess_T;              /* a free final time read with -hs_init (summary.json beside it); 0: none */
  PetscBool      setfromoptionscalled; /* then SetUp applies SNESSetFromOptions */
  PetscInt       mumps_icntl14;        /* MUMPS workspace relaxation in use (doubled by a retry) */
  HsDirectSolver direct_solver;        /* -hs_direct_solver */
  HsGuessType    guess_type;           /* -hs_initial_guess */
  HsGuessCostates guess_costates;       /* -hs_guess_costates */
  PetscBool       guess_implied_done;   /* the formulation's guess op computed the implied costates */
  PetscReal      *frame_guess;          /* the geodesic frame guess's states for frame_guess_N, _T (guess.c; NULL: */
  PetscInt        frame_guess_N;        /* none: no frames, or it failed there) */
  PetscReal       frame_guess_T;
  PetscReal      hom_theta;            /* costate homotopy in progress (< 1; HsDiscSetCostateHomotopy), else 1 */
  char           guess_info[256];      /* how the initial guess was made (-hs_initial_guess direct) */
  char           guess_source[PETSC_MAX_PATH_LEN + 16]; /* where the stored guess came from (-hs_init FILE) */
  HsStrategy     strategy;                              /* -hs_strategy (bvp/drivers/strategy.c) */
  char           strategy_continue[256];                /* -hs_strategy_continue NAME=FROM,... */
  PetscBool      in_strategy;   /* a fallback of the strategy is running (its solves make no attempts of their own) */
  PetscReal      strategy_time; /* -hs_strategy_time: seconds for the fallbacks, homotopy, continuation (0: none) */
  PetscReal      deadline;      /* when the running bounded loop stops (MPI_Wtime of rank 0; 0: none) */
  char           reached[128];  /* the furthest point the last bounded loop reached, or "" */
  PetscReal     *lower_rows; /* the extremal check's lower minimum (N+1 rows of 4n, every rank; extremal.c) or NULL */
  /* checkpoints and restart (bvp/interface/checkpoint.c) */
  char      ckpt_dir[PETSC_MAX_PATH_LEN]; /* -hs_checkpoint */
  PetscInt  ckpt_every_its;               /* -hs_checkpoint_every K */
  PetscReal ckpt_every_s, ckpt_last_t;    /* -hs_checkpoint_every Ss; rank 0's time of the last one */
  /* a sub-solve whose periodic checkpoints are its parent's (-hs_extrapolate's coarse grids: study.c) */
  HsSolver ckpt_parent;
  PetscInt ckpt_coarse, restart_coarse; /* the coarse grid whose iterate a checkpoint holds, written / read; 0: none */
  PetscErrorCode (*ckpt_parent_write)(HsSolver parent, HsSolver sub, PetscBool *failed, char *err, size_t len);
  char      ckpt_extra[256]; /* the continuation's state, a JSON object ("" outside one) */
  char      ckpt_layout[64]; /* what else fixes the meaning of X (the shooting's knots, hashed), or "" */
  int       ckpt_pfd;        /* rank 0: the checkpoint's parent, opened at the set-up and held, or -1 */
  int       ckpt_hold;       /* rank 0: the checkpoint put in place last, held with a flock, or -1 */
  int       ckpt_lock;       /* rank 0: DIR.lock beside it, held (flock) from the set-up, or -1 */
  PetscBool ckpt_explicit;   /* -hs_checkpoint given: its place is made and tried at the set-up */
  char      cont_info[512];  /* summary.json's "continuation": where this solution is ("" outside one) */
  PetscBool interrupted;     /* the last solve was stopped by a signal */
  PetscBool interrupt_unsaved; /* ... and no checkpoint of the stop exists (status 5): its write failed, or the stop
                                came where no poll takes one (HsSolverStopIfInterrupted, a strategy fallback, IPOPT);
                                set for a solver that writes checkpoints, not a sub-solver (HsSolverMarkUnsaved) */
  char      interrupt_msg[512];
  char      restart_dir[PETSC_MAX_PATH_LEN]; /* -hs_restart: loaded at set-up */
  PetscBool restart_pending;                 /* X holds a checkpoint's iterate for the next solve */
  PetscInt  restart_it;                      /* its Newton iteration (checkpoint.json's newton_iteration) */
  PetscInt  ckpt_it0; /* added to this solve's iteration in its checkpoints: restart_it when it resumes one */
  char      restart_cont[256];               /* its continuation state ("" if none) */
  /* set up */
  PetscBool setupcalled, solved;
  PetscBool has_free; /* some terminal components are free (transversality rows) */
  PetscBool hold_T;   /* a free final time held at T_hold (the first phase of a cold start) */
  PetscReal T_hold;
  PetscReal T_left;    /* a trial final time outside [T_min, T_max] in this solve (0: none) */
  PetscReal T_baddata; /* T in the data: a trial T where R is not positive definite or B, R, x0 not finite (0: none) */
  PetscInt  n, m;      /* the problem's dimensions at set-up */
  HsDisc   *disc;      /* one per rank: serial step residuals of costate/ */
  SNES      snes;
  Vec       X, F;
  Mat       Jac;
  PetscErrorCode (*jac_refill)(SNES, Vec, Mat, Mat, void *); /* the formulation's Jacobian evaluation if it fills
                                                             every value again after MatSetUnfactored (in place) */
  PetscBool in_place;                                        /* -hs_in_place */
  PetscBool condense; /* -hs_condense: conserving4's stage nodes eliminated before the LU (bvp/impls/order4cond.c) */
  PetscBool check_boundary;                                  /* -hs_check_boundary (singular.c) */
  Vec       Xnodes;  /* node layout (x_k, lambda_{k+1/2}) for diagnostics and output */
  Vec       X0;      /* Xnodes gathered on rank 0 by the last solve's diagnostics (empty elsewhere) */
  Vec       Xmult;   /* a constrained system's multipliers in the node layout, (nu_k, gamma_{k+1/2}) of nc each (the
                        formulation's postsolve fills it; NULL without constraints) */
  Vec        Xmult0; /* ... gathered on rank 0 with X0 */
  PetscReal *H, *EW; /* rank 0: H^d per interval, E_k - W_k per node */
  PetscReal *Xext;   /* every rank: the extrapolated states at the nodes of N/2 ((N/2 + 1) x 2n; HsSolverExtrapolate) */
  HsOutputFormat out_format; /* -hs_output_format (outputh5.c) */
  PetscReal     *U0;         /* rank 0: the controls of the last solve (N x m) where the formulation has them as
                                unknowns (ipopt; bounded controls are not R^{-1} G^T lambda); NULL: from lambda */
  /* the current solve */
  HsResults res;
  PetscReal t_start;
  PetscReal fnorm_prev;     /* Newton history for the noise-floor test (bvp/interface/convergence.c) */
  PetscReal snorm_last;     /* ... ||step||_2 of the iteration that led to the current iterate (0 at iteration 0) */
  PetscReal snorm_prev;     /* ... and of the one before it (0: none; AtolScreen) */
  PetscReal fnorm0;         /* ||F|| at the start of the last SNESSolve (HsSolverVerifyConvergence) */
  PetscBool noise_vouch;    /* the noise floor may vouch for convergence (not with a march looser than its defaults) */
  PetscReal noise_xinf;     /* ||X||_inf where res.noise_floor was estimated */
  PetscInt  noise_it;       /* the Newton iteration it was estimated at by the convergence test (-1: none) */
  PetscInt  iT;             /* a free T's global index in X (the noise estimate holds it); -1: none */
  Vec       noise_work[3];  /* the noise estimate's X + dX, F(X + dX), F(X - dX) where SNES has no free
                               vectors of X's layout (convergence.c, WorkVectors): kept, as fresh vectors at
                               each estimate cost their pages' first touch again */
  PetscObjectId    atol_id;    /* the iterate (id, state) whose Newton step AtolStep measured last (convergence.c), */
  PetscObjectState atol_state; /* ... and F's state, so that HsSolverVerifyConvergence does not solve again there */
  PetscObjectState atol_fstate;
  PetscReal        atol_rel;   /* ... that step relative to max(1, ||X||_inf); 0 where it could not be measured */
  PetscBool        atol_vouched; /* AtolStep passed in this SNESSolve (reset at iteration 0): the equations' scale */
  PetscObjectId    floor_id;     /* the iterate (id, state), F's state and the floor nu whose noise check and */
  PetscObjectState floor_state;  /* ... Newton step NoiseIsNoise measured last (convergence.c): its answer below */
  PetscObjectState floor_fstate;
  PetscReal        floor_nu, floor_ratio;
  PetscReal        floor_singular; /* ... the noise's step / ||X|| (or a field's) where J is singular there (else 0) */
  PetscBool        singular_end; /* the last solve ended at a floor where J is numerically singular (FloorNotSolved) */
  PetscBool        floor_noise, floor_solved;
  PetscInt  polish_it;      /* the polish after a floor stop (convergence.c): the iteration last measured (-1: off) */
  PetscInt  polish_n;       /* ... its steps */
  PetscInt  polish_miss;    /* ... the steps since the conserved quantity's violation last fell */
  PetscReal polish_best;    /* ... the smallest violation */
  PetscReal polish_fstop;   /* ... ||F|| at the stop */
  PetscBool polish_floor;   /* ... the stop was at the noise floor (res.at_floor), restored at the end */
  Vec       polish_X;       /* ... the best iterate */
  PetscBool diagnosis_keep; /* the diagnosis stands even if the final evaluation succeeds */
  PetscBool residual_pure;  /* the formulation's residual is a function of X alone and keeps nothing (its set-up says
                               so): HsSolverSolveNewton then takes the final iterate's F from the last evaluation
                               where that was at the same X (eval_X) instead of evaluating it again */
  Vec              eval_X, eval_F; /* HsSolverFormFunction's last successful evaluation in this Newton solve (a
                                      reference each; NULL: none) and the states its X and F had then */
  PetscObjectState eval_Xstate, eval_Fstate;
  void     *data;           /* the formulation's */
};

/* The scheme names a run reports (summary.json, checkpoint.json, study.json, the view's header): conserving4's own
   name for both parts where -hs_scheme conserving4 runs (s->ss and s->cs are then its second-order helpers'). */
static inline const char *HsSolverStateName(HsSolver s)
{
  return s->scheme == HS_SCHEME_CONSERVING4 ? "conserving4" : s->ss;
}
static inline const char *HsSolverCostateName(HsSolver s)
{
  return s->scheme == HS_SCHEME_CONSERVING4 ? "conserving4" : s->cs;
}

/* The drivers' hooks. HsSolverSolve reaches the fallbacks built on it (bvp/drivers/) only through these,
 * registered by name in HsInitializePackage (bvp/register.c) and looked up by HsSolverGetHook; a missing
 * hook is a fallback not taken. Each hook may create solvers and call HsSolverSolve on them; the re-entry
 * guard is the solver's own state: a solve made by the strategy runs with in_strategy set on the solver
 * the strategy works on, and a sub-solver created by a driver is cold-started with -hs_strategy newton
 * or warm, so the strategy hook returns at once there (PETSc's SNESSolve -> PetscConvEst -> SNESSolve
 * guards itself the same way). */
typedef PetscErrorCode (*HsSolverDirectGuessFn)(HsSolver s, PetscBool *ok); /* the direct solution as the guess */
typedef PetscErrorCode (*HsSolverHomotopyFn)(HsSolver s);                   /* direct -> own costate scheme */
typedef PetscErrorCode (*HsSolverStrategyFn)(HsSolver s, PetscBool cold, PetscReal t0); /* -hs_strategy auto */
#define HS_HOOK_DIRECT_GUESS "direct_guess"
#define HS_HOOK_HOMOTOPY "homotopy"
#define HS_HOOK_STRATEGY "strategy"
extern PetscFunctionList HsSolverHookList; /* the drivers' hooks by name (HsSolverRegisterHook) */
PetscErrorCode           HsSolverRegisterHook(const char name[], PetscVoidFunction fn);
PetscErrorCode           HsSolverGetHook(const char name[], PetscVoidFunction *fn);
PetscErrorCode HsSolverStrategyForEachContinue(HsSolver s, PetscErrorCode (*fn)(void *, const char *, PetscReal),
                                               void    *ctx);

/* bvp/ internal */
PetscErrorCode HsSolverGuessRow(HsSolver s, PetscInt k, PetscReal *row);
PetscErrorCode HsSolverFrameGuessUsed(HsSolver s, PetscBool *used);
PetscErrorCode HsSolverGuessRowAt(HsSolver s, PetscReal pos, PetscReal *row);
PetscReal      HsSolverStartT(HsSolver s);
PetscErrorCode HsSolverShareFinalTime(HsSolver s, PetscMPIInt owner, PetscReal T, PetscBool *bad);
void           HsSolverRestoreFinalTime(HsSolver s);
PetscErrorCode HsSolverFinalTimeColumn(HsSolver s, Vec X, PetscInt iT, HsResidualFn res, Vec C, PetscBool *dom);
PetscErrorCode HsSolverSetDiagnosis(HsSolver s, PetscBool keep, const char *fmt, ...);
/* singular.c: the rank tests of the boundary rows (before a solve) and of a failed solve's Jacobian */
PetscErrorCode       HsSolverCheckBoundaryRank(HsSolver s);
PetscErrorCode       HsSolverJacobianRankTest(HsSolver s);
PetscErrorCode       HsSolverComputeDiagnostics(HsSolver s);
PetscErrorCode       HsSolverShareSolutionRows(HsSolver s, PetscReal *rows);
PetscErrorCode       HsSolverConfigureFactorization(HsSolver s, PC pc);
PetscErrorCode       HsSolverSetDefaultPC(HsSolver s, KSP ksp, PetscBool drop_ok);
PetscErrorCode       HsSolverConvergenceTest(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                             SNESConvergedReason *reason, void *ctx);
PetscErrorCode       HsSolverMonitor(SNES snes, PetscInt it, PetscReal fnorm, void *ctx);
extern PetscLogEvent HS_NOISE_ESTIMATE; /* -log_view: HsNoiseEstimate (bvp/interface/convergence.c) */
PetscErrorCode       HsSolverVerifyConvergence(HsSolver s, PetscInt it);
PetscErrorCode       HsSolverRowwiseRoundoff(HsSolver s, Vec X, Vec F, PetscBool *ok);
PetscErrorCode       HsSolverSetCheckpointLayout(HsSolver s, PetscInt n, const PetscInt *knots);
PetscErrorCode       HsSolverConservedMeasure(HsSolver s, Vec X, PetscReal *m);
PetscErrorCode       HsSolverPolishEnd(HsSolver s);
PetscErrorCode       HsSolverFloorNewton(HsSolver s, PetscInt *steps);
PetscErrorCode       HsSolverAtNoiseFloor(HsSolver s, Vec X, Vec F, PetscReal fnorm, PetscInt it, PetscBool *at,
                                          PetscBool *evaluated);
PetscErrorCode       HsSolverSetUpDiscretization(HsSolver s);
int                  HsSolverWriteSummaryJSON(HsSolver s, FILE *f, int size);
/* outputh5.c: trajectory.h5 (-hs_output_format hdf5) written and read back (-hs_init) by every rank */
PetscErrorCode HsSolverWriteTrajectoryHDF5(HsSolver s, const char path[]);
PetscErrorCode HsSolverReadTrajectoryHDF5(HsSolver s, const char path[], PetscInt *Nsrc, PetscReal **nodes,
                                          PetscReal *T);
int            HsIsTrajectoryH5(const char *path, int fd);
PetscErrorCode HsSolverDiagnosticsDistributed(HsSolver s, Vec X, PetscReal *out); /* diagdist.c */
PetscErrorCode HsSolverGatherSolution(HsSolver s, PetscReal *buf);
PetscBool HsIntervalSuspect(const HsProblem *P, const PetscScalar *a, const PetscScalar *b, PetscReal tm, PetscReal Ea,
                            PetscReal Eb, PetscReal *work);
PetscInt  HsIntervalSuspectWorkSize(const HsProblem *P);
PetscErrorCode HsSolverSolveNewton(HsSolver s);
/* bounded controls (docs/controls.md): bounds.c; HsSolverSolveBounded, the eps-continuation, in solversolve.c */
PetscErrorCode HsSolverSolveBounded(HsSolver s, PetscBool from_solution);
PetscReal      HsSolverBoundsFinalEps(HsSolver s);
PetscBool      HsProblemBangBang(const HsProblem *P);
PetscReal      HsProblemBoundsScale(const HsProblem *P);
PetscErrorCode HsSolverBoundsOptions(PetscOptionItems *PetscOptionsObject, HsSolver s);
PetscErrorCode HsSolverBoundsStructure(HsSolver s, const PetscScalar *x);
PetscErrorCode HsSolverBoundsView(HsSolver s, PetscViewer v);
void           HsSolverBoundsJSON(HsSolver s, FILE *f);
PetscErrorCode HsSolverFormFunction(SNES snes, Vec X, Vec F, void *ctx);
PetscErrorCode HsSNESCheckType(SNES snes);
PetscErrorCode HsSolverCheckCheckpointDir(HsSolver s);
void           HsSolverCloseCheckpointDir(HsSolver s);
#define HS_OUTPUT_SOLVE 1   /* HsCheckOutputFiles: the solve's files */
#define HS_OUTPUT_STUDY 2   /* -hs_study's */
#define HS_OUTPUT_COMPARE 4 /* -hs_compare's */
int            HsCheckOutputFiles(const char *dir, int which, char *err, size_t len);
int            HsIsCheckpointDir(const char *path);
int            HsInsideTaken(const char *dir, PetscBool self, char *err, size_t len);
PetscErrorCode HsSolverInterruptRequested(HsSolver s, PetscBool *req);
PetscErrorCode HsSolverStopIfInterrupted(HsSolver s, const char what[], PetscBool *stop);
PetscErrorCode HsSolverSubSolveStopped(HsSolver s, PetscBool converged, const char what[], HsSolver *t,
                                       PetscBool *stop);
/* a stop of which no checkpoint exists (no poll took one: HsSolverStopIfInterrupted, a strategy fallback, IPOPT) is
   unsaved, status 5, where this solver writes checkpoints (ckpt_dir[0]); a sub-solver's (ckpt_dir "") is not */
PetscErrorCode HsSolverMarkUnsaved(HsSolver s);
void           HsRemoveStaleCheckpointTemps(int pfd, const char *base);
PetscErrorCode HsSolverCheckpointPoll(HsSolver s, Vec X, PetscInt it, PetscBool *stop);
PetscErrorCode HsSolverCheckLinearSolver(HsSolver s, HsLinearSolver ls);
PetscErrorCode HsSolverWriteCheckpoint(HsSolver s, Vec X, PetscInt it, PetscBool *failed, char *err, size_t len);
PetscErrorCode HsSolverGetRestartContinuation(HsSolver s, PetscInt *stage, PetscReal *value, PetscReal *step,
                                              PetscBool *has);

/* Convert a costate/ status to PETSc: > 0 (recoverable) becomes a domain error flag
 * (*dom = PETSC_TRUE), anything negative a PETSc error naming the step. */
#define HsCallStep(status, dom, what, k)                                                                               \
  do {                                                                                                                 \
    int hs_st_ = (status);                                                                                             \
    if (hs_st_ > 0)                                                                                                    \
      *(dom) = PETSC_TRUE;                                                                                             \
    else                                                                                                               \
      PetscCheck(hs_st_ == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s at step %" PetscInt_FMT " failed (status %d)", what, \
                 (PetscInt)(k), hs_st_);                                                                               \
  } while (0)

/* solveropts.c: the time budget of -hs_strategy_time over a bounded loop of the drivers */
PetscErrorCode HsSolverBudgetBegin(HsSolver s, PetscBool *own);
PetscErrorCode HsSolverBudgetEnd(HsSolver s, PetscBool own);
PetscErrorCode HsSolverBudgetSpent(HsSolver s, PetscBool *spent);

#endif
