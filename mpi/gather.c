/* hamshoot: gather of a distributed PETSc vector to rank 0 (mpi/ layer).
 * The node vectors of hamshoot are laid out in time order across the ranks
 * (a 1-D DMDA, or contiguous shooting segments), so the gathered vector is in
 * time order too. */
#include "hsmpi.h"

/*@ HsGatherToZero - all of a distributed vector on rank 0.

  Collective on X.

  Input: X - the distributed vector.
  Output: X0 - a sequential vector holding all of X on rank 0 and nothing (length 0) elsewhere;
          destroy it with VecDestroy().
@*/
PetscErrorCode HsGatherToZero(Vec X, Vec *X0)
{
  VecScatter sc;

  PetscFunctionBeginUser;
  PetscCall(VecScatterCreateToZero(X, &sc, X0));
  PetscCall(VecScatterBegin(sc, X, *X0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, X, *X0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscFunctionReturn(0);
}

/*@ HsGatherToAll - all of a distributed vector on every rank.

  Collective on X.

  Input: X - the distributed vector.
  Output: Xall - a sequential vector holding all of X on every rank; destroy it with VecDestroy().
@*/
PetscErrorCode HsGatherToAll(Vec X, Vec *Xall)
{
  VecScatter sc;

  PetscFunctionBeginUser;
  PetscCall(VecScatterCreateToAll(X, &sc, Xall));
  PetscCall(VecScatterBegin(sc, X, *Xall, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, X, *Xall, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscFunctionReturn(0);
}
