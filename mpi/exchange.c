/* hamshoot: boundary exchange between neighbouring ranks (mpi/ layer).
 * Segments are distributed in contiguous blocks, so a rank talks only to the
 * owners of the segments just before and just after its own. */
#include "../bvp/hsbvpimpl.h"

/** Not collective (pairwise). Sends to_next (n_next values) to rank next and
 *  receives as many into from_prev from rank prev; sends to_prev (n_prev) to
 *  prev and receives as many into from_next from next. A missing neighbour is
 *  MPI_PROC_NULL. */
PetscErrorCode HsExchangeNeighbors(MPI_Comm comm, PetscMPIInt prev, PetscMPIInt next, const PetscReal *to_next,
                                   PetscInt n_next, PetscReal *from_prev, const PetscReal *to_prev, PetscInt n_prev,
                                   PetscReal *from_next)
{
  MPI_Request req[4];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Irecv(from_prev, (PetscMPIInt)n_next, MPIU_REAL, prev, 81, comm, &req[0]));
  PetscCallMPI(MPI_Irecv(from_next, (PetscMPIInt)n_prev, MPIU_REAL, next, 82, comm, &req[1]));
  PetscCallMPI(MPI_Isend(to_next, (PetscMPIInt)n_next, MPIU_REAL, next, 81, comm, &req[2]));
  PetscCallMPI(MPI_Isend(to_prev, (PetscMPIInt)n_prev, MPIU_REAL, prev, 82, comm, &req[3]));
  PetscCallMPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(0);
}
