/* hamshoot: the segment-to-rank layout of multiple shooting (mpi/ layer). */
#include "hsmpi.h"

/*@ HsSegmentLayoutCreate - distributes M segments over the ranks of comm in contiguous blocks.

  Collective on comm (every rank computes the same split; no communication).

  Input: comm - the communicator; M >= 1 - the number of segments.
  Output: layout - rank r owns segments range[r] .. range[r+1]-1, the first M mod size ranks one
          more than the others (the split of PetscSplitOwnership); ranks beyond M own none.
@*/
PetscErrorCode HsSegmentLayoutCreate(MPI_Comm comm, PetscInt M, HsSegmentLayout **layout)
{
  HsSegmentLayout *L;

  PetscFunctionBeginUser;
  PetscCheck(M >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "a segment layout needs M >= 1 segments, got %" PetscInt_FMT, M);
  PetscCall(PetscNew(&L));
  L->comm = comm;
  L->M    = M;
  PetscCallMPI(MPI_Comm_size(comm, &L->size));
  PetscCallMPI(MPI_Comm_rank(comm, &L->rank));
  PetscCall(PetscMalloc1(L->size + 1, &L->range));
  L->range[0] = 0;
  for (PetscMPIInt r = 0; r < L->size; r++)
    L->range[r + 1] = L->range[r] + M / L->size + (r < M % L->size ? 1 : 0);
  L->s0   = L->range[L->rank];
  L->s1   = L->range[L->rank + 1];
  *layout = L;
  PetscFunctionReturn(0);
}

/*@ HsSegmentLayoutDestroy - frees a layout and sets *layout = NULL; NULL-safe. Not collective. @*/
PetscErrorCode HsSegmentLayoutDestroy(HsSegmentLayout **layout)
{
  PetscFunctionBeginUser;
  if (!layout || !*layout)
    PetscFunctionReturn(0);
  PetscCall(PetscFree((*layout)->range));
  PetscCall(PetscFree(*layout));
  PetscFunctionReturn(0);
}

/*@ HsSegmentLayoutOwner - the rank that owns segment seg (0 <= seg < M), or MPI_PROC_NULL outside
    that range. Not collective. @*/
PetscErrorCode HsSegmentLayoutOwner(const HsSegmentLayout *layout, PetscInt seg, PetscMPIInt *owner)
{
  PetscFunctionBeginUser;
  *owner = MPI_PROC_NULL;
  if (seg < 0 || seg >= layout->M)
    PetscFunctionReturn(0);
  for (PetscMPIInt r = 0; r < layout->size; r++)
    if (seg < layout->range[r + 1]) {
      *owner = r;
      break;
    }
  PetscFunctionReturn(0);
}

/*@ HsSegmentLayoutNeighbors - the owners of the segment just before this rank's first and just
    after its last (MPI_PROC_NULL at the ends, and for a rank without segments). Not collective. @*/
PetscErrorCode HsSegmentLayoutNeighbors(const HsSegmentLayout *layout, PetscMPIInt *prev, PetscMPIInt *next)
{
  PetscFunctionBeginUser;
  *prev = *next = MPI_PROC_NULL;
  if (layout->s1 == layout->s0)
    PetscFunctionReturn(0);
  PetscCall(HsSegmentLayoutOwner(layout, layout->s0 - 1, prev));
  PetscCall(HsSegmentLayoutOwner(layout, layout->s1, next));
  PetscFunctionReturn(0);
}
