/* hamshoot: private data of the conserving4 transcription (bvp/impls/order4.c), shared with its multiple shooting
 * (order4shoot.c, whose data begin with an HsOrder4): the layout of the solution (a DMDA of N+1 points, 12n each:
 * z_k, z_{k,1}, z_{k,2}), the scheme, and the diagnostics computed from that layout. */
#ifndef HSORDER4IMPL_H
#define HSORDER4IMPL_H

#include "../../costate/hsorder4.h"
#include "../interface/hsbvpimpl.h"

/* With holonomic constraints and 'conserved:' (docs/theory.md section 8.1, "The rest end with conserved
   quantities"): point N's first slot of the end's ncinv multipliers gamma, those of the dummy stage node z_{N,2}
   (4n slots, q = 4n; the file reader takes ncinv <= n). */
#define O4_GAM(q) (2 * (q))

typedef struct {
  DM       da;
  PetscInt D; /* 12n */
  HsO4    *o4;
  Vec      vals;  /* O4_VALS per point, the DMDA's points per rank */
  Vec      vals0; /* ... gathered on rank 0 by the postsolve */
  /* holonomic constraints (docs/theory.md section 8.1), over the nodes and stage nodes: max |Phi(q)|, max |G(q)
     lambda_p|, max |Phi_i| / |G_i| (a distance) and max |q| (the postsolve's ConsDiagnostics) */
  PetscReal cons[4];
  PetscBool cons_off; /* cons[2] > HS_O4_CONS_VOUCH (1 + cons[3]), or NaN: not on the constraints (the vouch) */
  /* a free T in the problem's data (prob->data_T): the T row's global part, sum over all substeps of c h dH/dT at
     the substep's midpoint plus lambda_0^T dx0/dT (docs/theory.md section 8, "T in the data"; TDataPass) */
  PetscReal Tsum;
} HsOrder4;

PetscReal      HsOrder4StageTime(HsSolver s, PetscInt k, int j);
PetscErrorCode HsOrder4CreateLayout(HsSolver s);
PetscErrorCode HsOrder4Guess(HsSolver s, Vec X);
PetscErrorCode HsOrder4PreSolve(HsSolver s);
PetscErrorCode HsOrder4PostSolveFrom(HsSolver s, Vec X);
PetscErrorCode HsOrder4Diagnostics(HsSolver s, const PetscScalar *x, PetscReal *out);
PetscErrorCode HsOrder4View(HsSolver s, PetscViewer v);
PetscErrorCode HsOrder4WriteSummary(HsSolver s, FILE *fp);
PetscErrorCode HsOrder4DestroyData(HsOrder4 *o);
PetscErrorCode HsOrder4CondSetUp(HsSolver s, KSP ksp);
/* The shooting formulation's set-up hands -hs_scheme conserving4 over to this (order4shoot.c): M segments between
 * knots (M + 1 nodes), the march's per-substep Newton tolerances and the growth limit. */
PetscErrorCode HsO4ShootSetUp(HsSolver s, PetscInt M, const PetscInt *knots, PetscReal atol, PetscReal stol,
                              PetscInt max_it, PetscReal max_growth);

#endif
