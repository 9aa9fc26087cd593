/* hamshoot: DM helpers of the formulations (bvp/petscext). */
#include "hspetscext.h"

#include <petscdm.h>

/*@ HsDMGetGhosted - X with its ghost points, to read: DMGlobalToLocal into a local vector of da, or X itself on one
    rank (its points are all the DMDA's, and DM_BOUNDARY_NONE adds no ghosts: there the scatter only copied X, and its
    first use set up a star forest inside the solve; pendulum, N = 1e3: 25 us a call and 260 us once, 5 % of the
    solve, -log_view). Give it back with HsDMRestoreGhosted. Collective. @*/
PetscErrorCode HsDMGetGhosted(DM da, Vec X, Vec *Xl)
{
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  if (size == 1) {
    *Xl = X;
    PetscFunctionReturn(0);
  }
  PetscCall(DMGetLocalVector(da, Xl));
  PetscCall(DMGlobalToLocalBegin(da, X, INSERT_VALUES, *Xl));
  PetscCall(DMGlobalToLocalEnd(da, X, INSERT_VALUES, *Xl));
  PetscFunctionReturn(0);
}

/*@ HsDMRestoreGhosted - gives back what HsDMGetGhosted gave (the local vector, or nothing when it was X itself); *Xl
    becomes NULL. Not collective. @*/
PetscErrorCode HsDMRestoreGhosted(DM da, Vec X, Vec *Xl)
{
  PetscFunctionBeginUser;
  if (*Xl != X)
    PetscCall(DMRestoreLocalVector(da, Xl));
  *Xl = NULL;
  PetscFunctionReturn(0);
}
