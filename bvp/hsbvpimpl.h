/* hamshoot: private definition of HsSolver (bvp/ only). */
#ifndef HSBVPIMPL_H
#define HSBVPIMPL_H

#include <gsl/gsl_linalg.h>
#include <petscdmda.h>

#include "hsbvp.h"

typedef enum { HS_BVP_TRANSCRIPTION, HS_BVP_SHOOTING } HsBVPType;

/* Multiple shooting state (bvp/shooting.c). */
typedef struct {
  PetscInt         M;                       /* number of segments */
  PetscInt         nuser, user_knots[4096]; /* -hs_shoot_knots: interior knots */
  PetscInt        *knots;                   /* M+1 node indices */
  PetscInt        *seg_range;               /* size+1: segments of each rank */
  PetscInt         s0, s1;                  /* local segments [s0, s1) */
  PetscReal       *traj;                    /* marched trajectories of the local segments */
  PetscInt        *traj_off;
  PetscReal       *sens;    /* per local segment: S(x_{k_s+1}), S(x_{b-1}), S(lambda_{b-1/2}), S(x_b) */
  PetscReal       *growth;  /* per local segment: max |sensitivity| */
  PetscBool       *marched; /* per local segment: last march succeeded (warm start) */
  PetscReal       *blk, *S, *res, *end_send, *end_recv, *end_local, *znext;
  PetscReal       *jblk;  /* per local segment: Jacobian blocks B1, B2p, B2c (dim x 2dim each) */
  PetscReal       *vprev; /* matrix-free product: v_{s0-1} from the previous rank */
  PetscBool        mf;    /* -hs_shoot_mf */
  gsl_matrix      *A, *A1;
  gsl_permutation *perm, *perm1;
  gsl_vector      *rhs, *sol;
  PetscReal        step_atol;   /* -hs_step_atol */
  PetscReal        step_stol;   /* -hs_step_stol */
  PetscInt         step_max_it; /* -hs_step_max_it */
  PetscReal        max_growth;  /* -hs_shoot_max_growth */
  PetscReal        max_growth_seen;
  PetscBool        growth_failure;
  PetscBool        init_transcription; /* -hs_shoot_init transcription */
  PetscBool        rankblock;          /* -hs_shoot_ksp rankblock */
  char             fail_msg[512];
} HsShoot;

struct _p_HsSolver {
  HsBVPType  bvp_type;
  HsShoot    shoot;
  Vec        Xnodes; /* node layout (x_k, lambda_{k+1/2}) for diagnostics and output */
  Vec        X0;     /* Xnodes gathered on rank 0 by the last solve's diagnostics (empty elsewhere) */
  MPI_Comm   comm;
  HsProblem *prob;
  PetscInt   N;
  char       state_scheme[64], costate_scheme[64];
  PetscReal  dg_tol;
  PetscReal  roundoff;           /* -hs_snes_roundoff */
  PetscReal  fnorm0, fnorm_prev; /* Newton history for the noise-floor test */
  PetscInt   stalls;
  PetscBool  quiet, setup, solved, keep_guess;
  PetscBool  has_free; /* some terminal components are free (transversality rows) */
  HsDisc    *disc;     /* one per rank: serial step residuals of costate/ */
  DM         da;
  SNES       snes;
  Vec        X, F;
  Mat        Jac;
  HsResults  res;
  PetscReal  t_start;
  PetscReal *guess;   /* initial guess (HsSolverSetInitialGuess): guess_N+1 rows of 4n, on every rank */
  PetscInt   guess_N; /* its number of intervals */
  /* Diagnostics gathered on rank 0 (NULL elsewhere): per node E_k - W_k, per interval H^d. */
  PetscReal *H, *EW;
};

PetscErrorCode HsTranscriptionSetUp(HsSolver s);
PetscErrorCode HsTranscriptionInitialGuess(HsSolver s, Vec X);
PetscErrorCode HsSolverComputeDiagnostics(HsSolver s);
PetscErrorCode HsShootSetUp(HsSolver s);
PetscErrorCode HsGuessFill(HsSolver s, Vec X);
PetscErrorCode HsExchangeNeighbors(MPI_Comm comm, PetscMPIInt prev, PetscMPIInt next, const PetscReal *to_next,
                                   PetscInt n_next, PetscReal *from_prev, const PetscReal *to_prev, PetscInt n_prev,
                                   PetscReal *from_next);
PetscErrorCode HsShootDestroy(HsSolver s);
PetscErrorCode HsShootCreateMFOperator(HsSolver s, Mat *J);
PetscErrorCode HsShootInitialGuess(HsSolver s, Vec X);
PetscErrorCode HsShootPackNodes(HsSolver s);
PetscErrorCode HsShootFormFunction(SNES snes, Vec X, Vec F, void *ctx);
PetscErrorCode HsShootFormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx);

/* Convert a costate/ status to PETSc: HS_EDOM becomes a domain error flag
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

#endif
