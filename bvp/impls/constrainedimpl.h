/* hamshoot: private data of the constrained transcription (bvp/impls/constrained.c). */
#ifndef HSCONSTRAINEDIMPL_H
#define HSCONSTRAINEDIMPL_H

#include "../../costate/hsconstrained.h"
#include "../interface/hsbvpimpl.h"

typedef struct {
  DM        da;      /* N+1 points, D unknowns each (costate/hsconstrained.h's layout) */
  PetscInt  D;       /* 4n + 2nc */
  HsCons   *cons;    /* the scheme at this solve's parameters and T */
  PetscReal diag[4]; /* max |Phi(q_k)|, hidden constraint (interval), adjoint constraint, hidden (nodal) */
  PetscReal dist;    /* max over nodes and constraints of |Phi_i(q_k)| / |G_i(q_k)|, a distance */
  PetscBool bad_ends; /* the end data are inconsistent (PreSolve): why says how */
  char      why[512];
} HsConstrained;

PetscErrorCode HsConstrainedSetUp(HsSolver s, size_t size);

#endif
