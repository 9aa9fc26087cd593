/* hamshoot: the private header of floor drivers/ (bvp/drivers: everything that calls HsSolverSolve).
 *
 * The strategy (strategy.c), the direct guess and its costate homotopy (directguess.c), continuation
 * (continuation.c: the object and natural continuation; arclength.c: pseudo-arclength), studies (study.c),
 * the side-by-side comparison (compare.c) and the wrong-extremal check (extremal.c). The solve reaches the
 * fallbacks among them only through the hooks HsInitializePackage registers (bvp/register.c); nothing below
 * this floor calls a function declared here (tests/check_sources.py). */
#ifndef HSDRIVERS_H
#define HSDRIVERS_H

#include "../interface/hsbvpimpl.h"

PetscErrorCode HsSolverGuessFromDirect(HsSolver s, PetscBool *ok);
PetscErrorCode HsSolverSolveStrategy(HsSolver s, PetscBool cold, PetscReal t0);
PetscErrorCode HsSolverStrategySetFromOptions(PetscOptionItems *PetscOptionsObject, HsSolver s);
PetscErrorCode HsSolverStrategyParseContinue(HsSolver s, HsContinuation c);
PetscErrorCode HsSolverCreateGrid(HsSolver s, PetscInt N, HsSolver *t);
PetscErrorCode HsSolverCreateDirect(HsSolver s, HsDirectSolver dflt, HsSolver *t);
PetscErrorCode HsSolverSolveHomotopy(HsSolver s);

/* HsContinuation (continuation.c: the object and natural stages; arclength.c: pseudo-arclength stages) */
#define HS_STAGE_LOG_WEIGHT -3 /* Stage.ip of the pseudo-parameter log_weight: R times 10^log_weight */
#define HS_ARC_MAX_BRANCHES 8 /* branch points whose location is kept (all are counted) */
typedef struct {
  char      name[64];
  PetscInt  ip; /* parameter index, -1 for reach, HS_STAGE_LOG_WEIGHT for log_weight */
  PetscReal from, target;
  PetscInt  steps;
  PetscBool have_target; /* target recorded (at the first solve) */
} Stage;

struct _p_HsContinuation {
  PETSCHEADER(int);
  HsSolver   solver;
  Stage     *stage;
  PetscInt   nstages;
  PetscInt   max_halvings;
  PetscBool  monitor;
  PetscReal  reach;   /* current reach (1: the problem's own xT) */
  PetscReal *goal;    /* 2n: the problem's xT when the solve started (for reach) */
  PetscBool  reached; /* the last solve converged at the final targets */
  PetscBool  resume;  /* -hs_restart inside a continuation: start stage resume_stage at resume_value */
  PetscInt   resume_stage;
  PetscReal  resume_value, resume_step;
  char       diagnosis[512];
  char       out[PETSC_MAX_PATH_LEN]; /* HsContinuationSetOutput: every converged step is written here */
  PetscInt   last_stage;              /* where the last converged solve was (stage, value); -1: none yet */
  PetscReal  last_value;
  PetscReal  write_t, write_s;        /* rank 0: when the last step was written (MPI_Wtime), how long that took */
  HsContinuationType type;            /* natural or pseudo-arclength (-hs_continue_type) */
  PetscInt   folds;                   /* folds passed by the last arclength continuation */
  PetscReal  fold;                    /* where the last one was (estimated) */
  PetscInt   branches;                /* branch points passed by it (sign changes of the bordered determinant) */
  PetscReal  branch[HS_ARC_MAX_BRANCHES]; /* where the first ones were (estimated) */
  PetscBool  branch_test;             /* it could test for them (the linear solver is LU by MUMPS) */
};
PetscErrorCode HsContinuationSetStageValue(HsContinuation c, const Stage *t, PetscReal v);
PetscErrorCode HsContinuationStageSolve(HsContinuation c, PetscInt k, PetscReal v, PetscReal d, HsResults *r, PetscBool *stop);
/* A continuation type's stages: stage k from (Xc, vc) to its target (d: the natural step), as RunStage of
   continuation.c */
typedef PetscErrorCode (*HsContinuationStageFn)(HsContinuation c, PetscInt k, PetscReal vc, PetscReal d, Vec Xc, Vec Xp,
                                                Vec Xs, PetscBool *ok, PetscBool *stopped);
PetscErrorCode HsContinuationRegisterStage(HsContinuationType type, HsContinuationStageFn fn);
PetscErrorCode HsContinuationRunStageArclength(HsContinuation c, PetscInt k, PetscReal vc, PetscReal d, Vec Xc, Vec Xp, Vec Xs,
                                              PetscBool *ok, PetscBool *stopped);

#endif
