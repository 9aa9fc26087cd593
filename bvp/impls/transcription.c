/* hamshoot: the transcription formulation (DESIGN.md section 3).
 *
 * Unknowns on a 1-D DMDA with N+1 points and 4n degrees of freedom per point:
 * point k holds (x_k, lambda_{k+1/2}); lambda_{N+1/2} is a dummy fixed to 0.
 * Equations at point k (all residuals are DESIGN.md section 2 times h):
 *   components 0..2n-1:   k < N: state equation of interval k;   k = N: x_N - x_T
 *   components 2n..4n-1:  0 < k < N: costate equation of node k;
 *                         k = 0: x_0 - x0 (initial state);       k = N: lambda_{N+1/2}
 * Stencil width 1: interval k couples points k and k+1, node k couples k-1..k+1.
 */
#include "transcriptionimpl.h"

static PetscErrorCode FormFunction(SNES snes, Vec X, Vec F, void *ctx)
{
  HsSolver            s = ctx;
  const HsProblem    *P = s->prob;
  DM                  da;
  Vec                 Xl;
  const PetscScalar **x;
  PetscScalar       **f;
  PetscInt            xs, xm, k, i, dim = 2 * P->n, N = s->N;
  PetscBool           dom = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(SNESGetDM(snes, &da));
  PetscCall(DMGetLocalVector(da, &Xl));
  PetscCall(DMGlobalToLocalBegin(da, X, INSERT_VALUES, Xl));
  PetscCall(DMGlobalToLocalEnd(da, X, INSERT_VALUES, Xl));
  PetscCall(DMDAVecGetArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAVecGetArrayDOF(da, F, &f));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (k = xs; k < xs + xm && !dom; k++) {
    if (k < N)
      HsCallStep(HsDiscStateResidual(s->disc, x[k], x[k + 1], x[k] + dim, f[k]), &dom, "state residual", k);
    else { /* fixed terminal components, or the transversality condition of a free one */
      PetscScalar *R = ((HsTranscription *)s->data)->R;
      if (s->has_free)
        HsCallStep(HsDiscTerminalResidual(s->disc, x[k - 1], x[k], x[k - 1] + dim, R), &dom, "terminal", k);
      for (i = 0; i < dim; i++)
        f[k][i] = P->xT_fixed[i] ? x[k][i] - P->xT[i] : R[i];
    }
    if (k == 0)
      for (i = 0; i < dim; i++)
        f[k][dim + i] = x[k][i] - P->x0[i];
    else if (k == N)
      for (i = 0; i < dim; i++)
        f[k][dim + i] = x[k][dim + i];
    else
      HsCallStep(
          HsDiscCostateResidual(s->disc, (int)k, x[k - 1], x[k], x[k + 1], x[k - 1] + dim, x[k] + dim, f[k] + dim),
          &dom, "costate residual", k);
  }
  PetscCall(DMDAVecRestoreArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAVecRestoreArrayDOF(da, F, &f));
  PetscCall(DMRestoreLocalVector(da, &Xl));
  if (dom)
    PetscCall(SNESSetFunctionDomainError(snes));
  PetscFunctionReturn(0);
}

/* Inserts a dim x dim block at rows (row_pt, row_c0..) and columns (col_pt, col_c0..). */
static PetscErrorCode SetBlock(Mat J, PetscInt dim, PetscInt row_pt, PetscInt row_c0, PetscInt col_pt, PetscInt col_c0,
                               const PetscScalar *vals, MatStencil *rows, MatStencil *cols)
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < dim; i++) {
    rows[i].i = row_pt, rows[i].c = row_c0 + i;
    cols[i].i = col_pt, cols[i].c = col_c0 + i;
  }
  PetscCall(MatSetValuesStencil(J, dim, rows, dim, cols, vals, INSERT_VALUES));
  PetscFunctionReturn(0);
}

static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx)
{
  HsSolver            s = ctx;
  DM                  da;
  Vec                 Xl;
  const PetscScalar **x;
  PetscInt            xs, xm, k, dim = 2 * s->prob->n, N = s->N;
  PetscScalar        *B, *Id;
  MatStencil         *rows, *cols;
  PetscBool           dom = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(SNESGetDM(snes, &da));
  PetscCall(PetscMalloc4(5 * dim * dim, &B, dim * dim, &Id, dim, &rows, dim, &cols));
  PetscCall(PetscArrayzero(Id, dim * dim));
  for (k = 0; k < dim; k++)
    Id[k * dim + k] = 1;
  PetscCall(MatZeroEntries(Pm));
  PetscCall(DMGetLocalVector(da, &Xl));
  PetscCall(DMGlobalToLocalBegin(da, X, INSERT_VALUES, Xl));
  PetscCall(DMGlobalToLocalEnd(da, X, INSERT_VALUES, Xl));
  PetscCall(DMDAVecGetArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (k = xs; k < xs + xm && !dom; k++) {
    PetscScalar *B0 = B, *B1 = B + dim * dim, *B2 = B + 2 * dim * dim, *B3 = B + 3 * dim * dim, *B4 = B + 4 * dim * dim;
    if (k < N) {
      HsCallStep(HsDiscStateJacobian(s->disc, x[k], x[k + 1], x[k] + dim, B0, B1, B2), &dom, "state Jacobian", k);
      PetscCall(SetBlock(Pm, dim, k, 0, k, 0, B0, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, 0, k + 1, 0, B1, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, 0, k, dim, B2, rows, cols));
    } else if (!s->has_free)
      PetscCall(SetBlock(Pm, dim, k, 0, k, 0, Id, rows, cols));
    else { /* free rows: the terminal Jacobian; fixed rows: identity on x_N */
      HsCallStep(HsDiscTerminalJacobian(s->disc, x[k - 1], x[k], x[k - 1] + dim, B0, B1, B2), &dom, "terminal", k);
      for (PetscInt r = 0; r < dim; r++)
        if (s->prob->xT_fixed[r])
          for (PetscInt c = 0; c < dim; c++)
            B0[r * dim + c] = B2[r * dim + c] = 0, B1[r * dim + c] = (r == c);
      PetscCall(SetBlock(Pm, dim, k, 0, k - 1, 0, B0, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, 0, k, 0, B1, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, 0, k - 1, dim, B2, rows, cols));
    }
    if (k == 0)
      PetscCall(SetBlock(Pm, dim, k, dim, k, 0, Id, rows, cols));
    else if (k == N)
      PetscCall(SetBlock(Pm, dim, k, dim, k, dim, Id, rows, cols));
    else {
      HsCallStep(HsDiscCostateJacobian(s->disc, (int)k, x[k - 1], x[k], x[k + 1], x[k - 1] + dim, x[k] + dim, B0, B1,
                                       B2, B3, B4),
                 &dom, "costate Jacobian", k);
      PetscCall(SetBlock(Pm, dim, k, dim, k - 1, 0, B0, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, dim, k, 0, B1, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, dim, k + 1, 0, B2, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, dim, k - 1, dim, B3, rows, cols));
      PetscCall(SetBlock(Pm, dim, k, dim, k, dim, B4, rows, cols));
    }
  }
  PetscCall(DMDAVecRestoreArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMRestoreLocalVector(da, &Xl));
  PetscCall(PetscFree4(B, Id, rows, cols));
  PetscCall(MatAssemblyBegin(Pm, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Pm, MAT_FINAL_ASSEMBLY));
  if (Jm != Pm) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  if (dom)
    PetscCall(SNESSetJacobianDomainError(snes));
  PetscFunctionReturn(0);
}

/* The default initial guess, or the stored one: rows of HsSolverGuessRow at every local node. */
static PetscErrorCode Guess(HsSolver s, Vec X)
{
  PetscScalar **x;
  PetscInt      xs, xm;
  DM            da = ((HsTranscription *)s->data)->da;

  PetscFunctionBeginUser;
  PetscCall(DMDAVecGetArrayDOF(da, X, &x));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < xs + xm; k++)
    PetscCall(HsSolverGuessRow(s, k, x[k]));
  PetscCall(DMDAVecRestoreArrayDOF(da, X, &x));
  PetscFunctionReturn(0);
}

/* The DMDA over the N+1 time points (4n unknowns each, stencil width 1), its vectors and its
 * (preallocated, assembled) Jacobian; a MUMPS LU is the default linear solver. The grid is N's
 * alone: the DMDA takes no options (a -da_grid_x would change the grid behind N). */
static PetscErrorCode SetUp(HsSolver s)
{
  HsTranscription *tr  = s->data;
  PetscInt         dim = 2 * s->prob->n;
  PetscMPIInt      size;
  KSP              ksp;
  PC               pc;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  PetscCheck(s->N + 1 >= size, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "N = %" PetscInt_FMT " intervals give %" PetscInt_FMT
             " time points, fewer than the %d MPI ranks; use a larger -N or fewer ranks",
             s->N, s->N + 1, size);
  PetscCall(DMDACreate1d(PetscObjectComm((PetscObject)s), DM_BOUNDARY_NONE, s->N + 1, 2 * dim, 1, NULL, &tr->da));
  PetscCall(DMSetUp(tr->da));
  PetscCall(PetscMalloc1(dim, &tr->R));
  PetscCall(DMCreateGlobalVector(tr->da, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  PetscCall(DMCreateMatrix(tr->da, &s->Jac));
  PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscObjectReference((PetscObject)s->X));
  s->Xnodes       = s->X;
  s->res.segments = s->N; /* the M = N limit of shooting: one interval per segment */
  PetscCall(SNESSetDM(s->snes, tr->da));
  PetscCall(SNESSetFunction(s->snes, s->F, FormFunction, s));
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, FormJacobian, s));
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(PCSetType(pc, PCLU));
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  PetscFunctionBeginUser;
  (void)s;
  PetscCall(PetscStrncpy(buf, "transcription", len));
  PetscFunctionReturn(0);
}

/*@ HsTranscriptionDestroy - frees the transcription's data, s->data included (bvp/impls internal; a
    formulation built on it, such as ipopt, calls it last from its own destroy). @*/
PetscErrorCode HsTranscriptionDestroy(HsSolver s)
{
  HsTranscription *tr = s->data;

  PetscFunctionBeginUser;
  PetscCall(DMDestroy(&tr->da));
  PetscCall(PetscFree(tr->R));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/*@ HsSolverCreate_Transcription - the transcription formulation (HSSOLVERTRANSCRIPTION, DESIGN.md
    section 3): all discrete equations as one sparse system in all unknowns, block-banded in time,
    distributed over the ranks as a 1-D DMDA, with the analytic Jacobian and a parallel sparse direct
    solve (MUMPS) by default. No options of its own.

  Collective; called by HsSolverSetType().
@*/
PetscErrorCode HsSolverCreate_Transcription(HsSolver s)
{
  HsTranscription *tr;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&tr));
  s->data = tr;
  PetscCall(HsTranscriptionSetOps(s));
  PetscFunctionReturn(0);
}

/*@ HsTranscriptionSetOps - the transcription's operations on s, whose s->data begins with an
    HsTranscription (bvp/impls internal): a formulation built on the transcription (ipopt) sets these
    first and then replaces what it does differently. Not collective. @*/
PetscErrorCode HsTranscriptionSetOps(HsSolver s)
{
  PetscFunctionBeginUser;
  s->ops->setup    = SetUp;
  s->ops->guess    = Guess;
  s->ops->describe = Describe;
  s->ops->destroy  = HsTranscriptionDestroy;
  PetscFunctionReturn(0);
}
