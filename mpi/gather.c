/* hamshoot: gather of a distributed PETSc vector to rank 0 (mpi/ layer).
 * The node vectors of hamshoot are laid out in time order across the ranks
 * (a 1-D DMDA, or contiguous shooting segments), so the gathered vector is in
 * time order too. */
#include "hsmpi.h"

/* On one rank the gathered vector is a sequential copy of X (*one): the same values as the scatter's, without
   building a scatter (its graph set-up and sort cost about 1.5M instructions per solve at N = 224, issue 43). */
static PetscErrorCode OneRankCopy(Vec X, Vec *Y, PetscBool *one)
{
  PetscMPIInt        size;
  PetscInt           n;
  const PetscScalar *x;
  PetscScalar       *y;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)X), &size));
  *one = (PetscBool)(size == 1);
  if (!*one)
    PetscFunctionReturn(0);
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, Y));
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(*Y, &y));
  PetscCall(PetscArraycpy(y, x, n));
  PetscCall(VecRestoreArray(*Y, &y));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscFunctionReturn(0);
}

/*@ HsGatherToZero - all of a distributed vector on rank 0.

  Collective on X.

  Input: X - the distributed vector.
  Output: X0 - a sequential vector holding all of X on rank 0 and nothing (length 0) elsewhere;
          destroy it with VecDestroy().
@*/
PetscErrorCode HsGatherToZero(Vec X, Vec *X0)
{
  VecScatter sc;
  PetscBool  one;

  PetscFunctionBeginUser;
  PetscCall(OneRankCopy(X, X0, &one));
  if (one)
    PetscFunctionReturn(0);
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
  PetscBool  one;

  PetscFunctionBeginUser;
  PetscCall(OneRankCopy(X, Xall, &one));
  if (one)
    PetscFunctionReturn(0);
  PetscCall(VecScatterCreateToAll(X, &sc, Xall));
  PetscCall(VecScatterBegin(sc, X, *Xall, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, X, *Xall, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscFunctionReturn(0);
}
