/* hamshoot: the MPI ground floor (docs/theory.md section 3, section 6): how the
 * shooting segments are distributed over the ranks, the exchange of boundary
 * data between neighbouring ranks, and the gather of a distributed vector to
 * rank 0. Built on PETSc's system and vector layers only; includes nothing
 * from bvp/. */
#ifndef HSMPI_H
#define HSMPI_H

#include <petscvec.h>

/** The distribution of M segments over the ranks of a communicator in
 *  contiguous blocks (as PetscSplitOwnership splits M): rank r owns segments
 *  range[r] .. range[r+1]-1; this rank owns [s0, s1). */
typedef struct {
  MPI_Comm    comm;
  PetscMPIInt size, rank;
  PetscInt    M;      /* number of segments */
  PetscInt   *range;  /* size + 1 entries */
  PetscInt    s0, s1; /* this rank's segments */
} HsSegmentLayout;

PetscErrorCode HsSegmentLayoutCreate(MPI_Comm comm, PetscInt M, HsSegmentLayout **layout);
PetscErrorCode HsSegmentLayoutDestroy(HsSegmentLayout **layout);
PetscErrorCode HsSegmentLayoutOwner(const HsSegmentLayout *layout, PetscInt seg, PetscMPIInt *owner);
PetscErrorCode HsSegmentLayoutNeighbors(const HsSegmentLayout *layout, PetscMPIInt *prev, PetscMPIInt *next);
PetscErrorCode HsExchangeNeighbors(MPI_Comm comm, PetscMPIInt prev, PetscMPIInt next, const PetscReal *to_next,
                                   PetscInt n_next, PetscReal *from_prev, const PetscReal *to_prev, PetscInt n_prev,
                                   PetscReal *from_next);
PetscErrorCode HsGatherToZero(Vec X, Vec *X0);
PetscErrorCode HsGatherToAll(Vec X, Vec *Xall);

#endif
