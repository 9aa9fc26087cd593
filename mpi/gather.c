/* hamshoot: gather of a distributed PETSc vector to rank 0 (mpi/ layer).
 * The transcription's DMDA is 1-D, so PETSc and natural orderings coincide. */
#include "../bvp/hsbvp.h"

/** Collective. X0 is a sequential vector holding all of X on rank 0 and
 *  nothing elsewhere; destroy with VecDestroy. */
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
