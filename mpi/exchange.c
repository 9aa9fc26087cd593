/* hamshoot: boundary exchange between neighbouring ranks (mpi/ layer).
 * Segments are distributed in contiguous blocks (mpi/layout.c), so a rank
 * talks only to the owners of the segments just before and just after its own. */
#include "hsmpi.h"

/*@ HsExchangeNeighbors - pairwise exchange with the previous and the next rank.

  Not collective (pairwise; the neighbours must call it too, with matching counts).

  Input: prev, next - the neighbouring ranks (MPI_PROC_NULL where there is none);
         to_next (n_next values) - sent to next; to_prev (n_prev values) - sent to prev.
  Output: from_prev - n_next values received from prev; from_next - n_prev values received from next.
@*/
PetscErrorCode HsExchangeNeighbors(MPI_Comm comm, PetscMPIInt prev, PetscMPIInt next, const PetscReal *to_next,
                                   PetscInt n_next, PetscReal *from_prev, const PetscReal *to_prev, PetscInt n_prev,
                                   PetscReal *from_next)
{
  MPI_Request req[4];
  PetscMPIInt cn, cp;

  PetscFunctionBeginUser;
  PetscCall(PetscMPIIntCast(n_next, &cn));
  PetscCall(PetscMPIIntCast(n_prev, &cp));
  PetscCallMPI(MPI_Irecv(from_prev, cn, MPIU_REAL, prev, 81, comm, &req[0]));
  PetscCallMPI(MPI_Irecv(from_next, cp, MPIU_REAL, next, 82, comm, &req[1]));
  PetscCallMPI(MPI_Isend(to_next, cn, MPIU_REAL, next, 81, comm, &req[2]));
  PetscCallMPI(MPI_Isend(to_prev, cp, MPIU_REAL, prev, 82, comm, &req[3]));
  PetscCallMPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(0);
}
