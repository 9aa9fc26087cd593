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
  PetscBool off;     /* dist > HS_CONS_VOUCH (1 + max |q_k|), or NaN: off the constraints (ConstraintDiagnostics) */
  PetscReal beta;    /* max |beta_l| of the end at rest ('conserved:'; 0 at a solution if the invariants are conserved) */
  PetscBool bad_ends; /* the end data are inconsistent (PreSolve): why says how */
  char      why[512];
} HsConstrained;

PetscErrorCode HsConstrainedSetUp(HsSolver s, size_t size);
/* What the constrained shooting (consshoot.c, whose data begin with an HsConstrained) shares with the transcription. */
PetscErrorCode HsConstrainedCreateLayout(HsSolver s);
PetscErrorCode HsConstrainedGuess(HsSolver s, Vec X);
PetscErrorCode HsConstrainedPreSolve(HsSolver s);
PetscErrorCode HsConstrainedPostSolveFrom(HsSolver s, Vec X);
PetscErrorCode HsConstrainedView(HsSolver s, PetscViewer v);
PetscErrorCode HsConstrainedWriteSummary(HsSolver s, FILE *fp);
/* The shooting formulation's set-up hands a problem with constraints over to this (consshoot.c); knots: M + 1 nodes. */
PetscErrorCode HsConsShootSetUp(HsSolver s, PetscInt M, const PetscInt *knots);

#endif
