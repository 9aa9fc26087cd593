/* hamshoot: private definition of HsSolver (bvp/ only). */
#ifndef HSBVPIMPL_H
#define HSBVPIMPL_H

#include <petscdmda.h>

#include "hsbvp.h"

struct _p_HsSolver {
  MPI_Comm   comm;
  HsProblem *prob;
  PetscInt   N;
  char       state_scheme[64], costate_scheme[64];
  PetscReal  dg_tol;
  PetscBool  quiet, setup, solved;
  HsDisc    *disc; /* one per rank: serial step residuals of costate/ */
  DM         da;
  SNES       snes;
  Vec        X, F;
  Mat        Jac;
  HsResults  res;
  PetscReal  t_start;
  /* Diagnostics gathered on rank 0 (NULL elsewhere): per node E_k - W_k, per interval H^d. */
  PetscReal *H, *EW;
};

PetscErrorCode HsTranscriptionSetUp(HsSolver s);
PetscErrorCode HsTranscriptionInitialGuess(HsSolver s, Vec X);
PetscErrorCode HsSolverComputeDiagnostics(HsSolver s);

/* Convert a costate/ status to PETSc: HS_EDOM becomes a domain error flag
 * (*dom = PETSC_TRUE), anything negative a PETSc error naming the step. */
#define HsCallStep(status, dom, what, k) \
  do { \
    int hs_st_ = (status); \
    if (hs_st_ > 0) *(dom) = PETSC_TRUE; \
    else PetscCheck(hs_st_ == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s at step %" PetscInt_FMT " failed (status %d)", what, \
                    (PetscInt)(k), hs_st_); \
  } while (0)

#endif
