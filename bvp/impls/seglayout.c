/* hamshoot: the segment layout of multiple shooting (HsSegLayout, shootimpl.h), shared by the second-order shooting
 * (shooting.c, shootingjac.c), the constrained one (consshoot.c) and conserving4's (order4shoot.c): the segments
 * over the ranks, the blocks of outer unknowns, the stored trajectories' points, the march of all local segments, the
 * matching rows "-w_t, + end of segment t - 1" of the outer residual and Jacobian, and the trajectory on the
 * transcription's layout. */
#include "shootimpl.h"

PetscLogEvent HS_SHOOT_MARCH, HS_SHOOT_SENS, HS_SHOOT_ASSEMBLY; /* registered by HsSolverCreate_Shooting */

/*@ HsSegLayoutCreate - the layout of M segments between knots (M + 1 node indices, copied) over the ranks of comm in
    contiguous blocks (HsSegmentLayoutCreate); the blocks and points follow with HsSegLayoutSetBlocks(). Collective on
    comm (no communication). @*/
PetscErrorCode HsSegLayoutCreate(MPI_Comm comm, PetscInt M, const PetscInt *knots, HsSegLayout **L)
{
  HsSegLayout *l;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&l));
  PetscCall(PetscMalloc1(M + 1, &l->knots));
  PetscCall(PetscArraycpy(l->knots, knots, M + 1));
  PetscCall(HsSegmentLayoutCreate(comm, M, &l->ranks));
  PetscCall(HsSegmentLayoutOwner(l->ranks, M - 1, &l->last));
  l->M = M, l->s0 = l->ranks->s0, l->s1 = l->ranks->s1;
  l->owns_last = (PetscBool)(l->s0 < M && l->s1 == M);
  *L           = l;
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutSetBlocks - block 0 of the outer unknowns w0 wide, every other block w, extra unknowns after the last
    block (on the owner of segment M - 1); local segment t's stored points k_t - pre .. k_{t+1}, stride values each
    (their offsets toff). Not collective. @*/
PetscErrorCode HsSegLayoutSetBlocks(HsSegLayout *L, PetscInt w0, PetscInt w, PetscInt extra, PetscInt pre,
                                    PetscInt stride)
{
  PetscInt nloc = L->s1 - L->s0;

  PetscFunctionBeginUser;
  L->w0 = w0, L->w = w, L->extra = extra, L->pre = pre, L->stride = stride, L->head = w0;
  PetscCall(PetscFree(L->toff));
  PetscCall(PetscCalloc1(nloc + 1, &L->toff));
  for (PetscInt i = 0; i < nloc; i++)
    L->toff[i + 1] = L->toff[i] + L->knots[L->s0 + i + 1] - L->knots[L->s0 + i] + 1 + pre;
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutSetHeadRows - the outer equations' rows before block 1's matching rows: head of them (after
    HsSegLayoutSetBlocks, whose default is w0). The rows are ordered as the unknowns are, shifted by head - w0, so
    that the matrix is banded: the rows of segment 0's unknowns alone first, the end's last (shootimpl.h). Not
    collective. @*/
PetscErrorCode HsSegLayoutSetHeadRows(HsSegLayout *L, PetscInt head)
{
  PetscFunctionBeginUser;
  L->head = head;
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutDestroy - frees a layout and sets *L = NULL; NULL-safe. Not collective. @*/
PetscErrorCode HsSegLayoutDestroy(HsSegLayout **L)
{
  PetscFunctionBeginUser;
  if (!L || !*L)
    PetscFunctionReturn(0);
  PetscCall(HsSegmentLayoutDestroy(&(*L)->ranks));
  PetscCall(PetscFree((*L)->knots));
  PetscCall(PetscFree((*L)->toff));
  PetscCall(PetscFree(*L));
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutBlockSize - the number of outer unknowns of segment t (w0 for t = 0, else w). Not collective. @*/
PetscInt HsSegLayoutBlockSize(const HsSegLayout *L, PetscInt t) { return t ? L->w : L->w0; }

/*@ HsSegLayoutBlockOffset - the global offset of segment t's block (t = M: that of the extra unknowns). Not
    collective. @*/
PetscInt HsSegLayoutBlockOffset(const HsSegLayout *L, PetscInt t) { return t ? L->w0 + (t - 1) * L->w : 0; }

/*@ HsSegLayoutRowOffset - the global row of block t's first matching row (t >= 1; t = M: the first row of the
    end's, after every matching row; t = 0: the head rows'). Not collective. @*/
PetscInt HsSegLayoutRowOffset(const HsSegLayout *L, PetscInt t) { return t ? L->head + (t - 1) * L->w : 0; }

/*@ HsSegLayoutLocalOffset - the offset of segment t's block (t = M: the extra unknowns) in this rank's part of the
    outer vector. Not collective. @*/
PetscInt HsSegLayoutLocalOffset(const HsSegLayout *L, PetscInt t)
{
  return HsSegLayoutBlockOffset(L, t) - HsSegLayoutBlockOffset(L, L->s0);
}

/*@ HsSegLayoutLocalSize - the number of outer unknowns on this rank: its blocks and, on the owner of segment M - 1,
    the extra ones. Not collective. @*/
PetscInt HsSegLayoutLocalSize(const HsSegLayout *L)
{
  PetscInt nl = L->owns_last ? L->extra : 0;

  for (PetscInt t = L->s0; t < L->s1; t++)
    nl += HsSegLayoutBlockSize(L, t);
  return nl;
}

/*@ HsSegLayoutPoint - point k (k_t - pre <= k <= k_{t+1}) of local segment i (t = s0 + i) in the trajectory traj
    (HsSegLayoutSetBlocks' points, stride values each). Not collective. @*/
PetscReal *HsSegLayoutPoint(const HsSegLayout *L, PetscReal *traj, PetscInt i, PetscInt k)
{
  return traj + (L->toff[i] + k - L->knots[L->s0 + i] + L->pre) * L->stride;
}

/*@ HsSegLayoutMarchAll - marches every local segment (march, from its block of x, the local part of the outer
    vector) until one fails (-log_view: HsShootSens with sens, else HsShootMarch); *failed if one failed on some
    rank. Collective. @*/
PetscErrorCode HsSegLayoutMarchAll(const HsSegLayout *L, HsSolver s, const PetscScalar *x, PetscBool sens,
                                   HsSegMarchFn march, void *ctx, PetscBool *failed)
{
  PetscBool f = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(sens ? HS_SHOOT_SENS : HS_SHOOT_MARCH, 0, 0, 0, 0));
  for (PetscInt t = L->s0; t < L->s1 && !f; t++)
    PetscCall(march(s, t - L->s0, x + HsSegLayoutLocalOffset(L, t), sens, ctx, &f));
  PetscCall(PetscLogEventEnd(sens ? HS_SHOOT_SENS : HS_SHOOT_MARCH, 0, 0, 0, 0));
  PetscCallMPI(MPI_Allreduce(&f, failed, 1, MPIU_BOOL, MPI_LOR, L->ranks->comm));
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutAddMatching - segment t's share of the matching rows of the outer residual F (blocks t >= 1: the end of
    segment t - 1 minus w_t, at HsSegLayoutRowOffset): -w_t (from x, this rank's part of the outer vector) into block
    t's rows for t >= 1, and its end (w values) into block t + 1's for t < M - 1; added. idx, v: scratch, w each. Not
    collective. @*/
PetscErrorCode HsSegLayoutAddMatching(const HsSegLayout *L, Vec F, PetscInt t, const PetscScalar *x,
                                      const PetscScalar *end, PetscInt *idx, PetscScalar *v)
{
  PetscInt wt = HsSegLayoutBlockSize(L, t), o = HsSegLayoutRowOffset(L, t), ol = HsSegLayoutLocalOffset(L, t);

  PetscFunctionBeginUser;
  if (t) { /* - w_t */
    for (PetscInt j = 0; j < wt; j++)
      idx[j] = o + j, v[j] = -x[ol + j];
    PetscCall(VecSetValues(F, wt, idx, v, ADD_VALUES));
  }
  if (t < L->M - 1) { /* + the end into block t + 1 */
    for (PetscInt j = 0; j < L->w; j++)
      idx[j] = HsSegLayoutRowOffset(L, t + 1) + j;
    PetscCall(VecSetValues(F, L->w, idx, end, ADD_VALUES));
  }
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutAddMatchingJacobian - segment t's share of the matching rows of the outer Jacobian P: -I on block t
    (t >= 1) and, for t < M - 1, blk (w x nc, by rows: the end's derivatives in the columns cols) in block t + 1's
    rows; added. rows: scratch, w. Not collective. @*/
PetscErrorCode HsSegLayoutAddMatchingJacobian(const HsSegLayout *L, Mat P, PetscInt t, PetscInt nc,
                                              const PetscInt *cols, const PetscScalar *blk, PetscInt *rows)
{
  PetscInt o = HsSegLayoutBlockOffset(L, t), ro = HsSegLayoutRowOffset(L, t);

  PetscFunctionBeginUser;
  for (PetscInt j = 0; t && j < HsSegLayoutBlockSize(L, t); j++)
    PetscCall(MatSetValue(P, ro + j, o + j, -1.0, ADD_VALUES));
  if (t < L->M - 1) {
    for (PetscInt r = 0; r < L->w; r++)
      rows[r] = HsSegLayoutRowOffset(L, t + 1) + r;
    PetscCall(MatSetValues(P, L->w, rows, nc, cols, blk, ADD_VALUES));
  }
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutPutPoints - the local segments' trajectories on the transcription's layout Xfull (D values a node):
    nodes k_t .. k_{t+1} - 1 of each (k_M as well for segment M - 1), their values from point; assembled.
    Collective. @*/
PetscErrorCode HsSegLayoutPutPoints(const HsSegLayout *L, HsSolver s, Vec Xfull, PetscInt D, HsSegPointFn point,
                                    void *ctx)
{
  PetscInt    *idx;
  PetscScalar *v;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(D, &idx, D, &v));
  for (PetscInt t = L->s0; t < L->s1; t++) {
    PetscInt last = t == L->M - 1 ? L->knots[t + 1] : L->knots[t + 1] - 1;
    for (PetscInt k = L->knots[t]; k <= last; k++) {
      PetscCall(point(s, t - L->s0, k, v, ctx));
      for (PetscInt j = 0; j < D; j++)
        idx[j] = k * D + j;
      PetscCall(VecSetValues(Xfull, D, idx, v, INSERT_VALUES));
    }
  }
  PetscCall(PetscFree2(idx, v));
  PetscCall(VecAssemblyBegin(Xfull));
  PetscCall(VecAssemblyEnd(Xfull));
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutScatterGuess - a guess on the transcription's layout (Xfull) gathered on every rank and handed, with
    this rank's part of X, to guess for each local segment (its stored trajectory and its outer unknowns).
    Collective. @*/
PetscErrorCode HsSegLayoutScatterGuess(const HsSegLayout *L, HsSolver s, Vec Xfull, Vec X, HsSegGuessFn guess,
                                       void *ctx)
{
  Vec                All;
  const PetscScalar *g;
  PetscScalar       *x;

  PetscFunctionBeginUser;
  PetscCall(HsGatherToAll(Xfull, &All));
  PetscCall(VecGetArrayRead(All, &g));
  PetscCall(VecGetArray(X, &x));
  for (PetscInt i = 0; i < L->s1 - L->s0; i++)
    PetscCall(guess(s, i, g, x, ctx));
  PetscCall(VecRestoreArray(X, &x));
  PetscCall(VecRestoreArrayRead(All, &g));
  PetscCall(VecDestroy(&All));
  PetscFunctionReturn(0);
}

/*@ HsSegLayoutSetUpSolver - the outer system of an assembled multiple shooting on this layout: X and F
    (HsSegLayoutLocalSize() entries a rank), the Jacobian (AIJ, nz entries a row preallocated in the diagonal and in the
    off-diagonal part; entries added from any rank; its rows in the banded order of shootimpl.h) with jacobian as the
    SNES Jacobian, the segments in the results and the checkpoints at the knots. The linear solver is the Newton
    formulations' default (HsSolverSetDefaultPC, -hs_linear_solver): PC hsband, which factors the band across the
    ranks without gathering it (issue 44), for small node blocks, else LU by MUMPS. Both stay reproducible bit for
    bit on more than one rank, which MUMPS' parallel LU is not (issue 38; docs/reliability.md): hsband where it cannot
    take the matrix (too few rows a rank, a band too wide) falls back to PC hsgather (the whole matrix factored on
    every rank by sequential MUMPS) rather than to the parallel LU, and -hs_linear_solver mumps is hsgather. A
    -pc_type or -pc_factor_mat_solver_type in the options takes precedence over both. Collective. @*/
PetscErrorCode HsSegLayoutSetUpSolver(const HsSegLayout *L, HsSolver s, PetscInt nz,
                                      PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *))
{
  PetscInt    nl = HsSegLayoutLocalSize(L);
  KSP         ksp;
  PC          pc;
  PetscBool   lu;

  PetscFunctionBeginUser;
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)s), nl, PETSC_DETERMINE, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  PetscCall(MatCreateAIJ(PetscObjectComm((PetscObject)s), nl, nl, PETSC_DETERMINE, PETSC_DETERMINE, nz, NULL, nz, NULL,
                         &s->Jac));
  PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  s->res.segments = L->M;
  PetscCall(HsSolverSetCheckpointLayout(s, L->M + 1, L->knots));
  PetscCall(SNESSetFunction(s->snes, s->F, HsSolverFormFunction, s));
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, jacobian, s));
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(HsSolverSetDefaultPC(s, ksp, PETSC_FALSE));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(HsPCBandSetFallbackGather(pc, PETSC_TRUE)); /* -pc_hsband_fallback_gather false overrides */
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCLU, &lu));
  if (lu) { /* MUMPS (-hs_linear_solver mumps, or auto): the small outer system whole on every rank, on one rank too:
                hsgather's sequential LU has no max-transversal (MC64), with which PC lu's MUMPS left pendulum_cartesian's
                4-segment outer systems inexact on 1 rank (Newton diverged to |F| = 440, exit 2, where 2 ranks converged) */
    PetscBool   user;
    const char *prefix;
    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PetscOptionsHasName(NULL, prefix, "-pc_factor_mat_solver_type", &user));
    if (!user) /* a solver package named: the user's LU as asked */
      PetscCall(PCSetType(pc, PCHSGATHER));
  }
  PetscFunctionReturn(0);
}
