/* hamshoot: PC hsgather (floor petscext/): the LU by sequential MUMPS of the whole operator, gathered on every rank.
 *
 * MUMPS' parallel factorization is not reproducible: its processes assemble the children's contributions into a
 * front in the order their messages arrive and choose the helpers of a large front by their load at the time, so
 * the rounding differs between runs of the same binary on the same matrix (a fixed 88 x 88 outer matrix of
 * crane_natural's multiple shooting factored 199 times in each of six 2-ranks runs: 0 to 2 solutions differed from the
 * first in their last bits; issue 38). A sequential MUMPS is deterministic. hsgather copies the operator whole to every
 * rank (MatCreateSubMatrices), factors it there (each rank the same factorization, so the same bits everywhere), and
 * applies it to the gathered right-hand side (VecScatterCreateToAll), each rank keeping its part. It is for small
 * outer systems whose factorization costs little beside the work that made them (multiple shooting's matching
 * system: M blocks of the states' size, against the segments' marches); every rank holds the whole factor. */
#include "hspetscext.h"

#include <petsc/private/pcimpl.h>

typedef struct {
  Mat       *A;       /* the operator whole on this rank (one sequential AIJ, MatCreateSubMatrices) */
  PC         inner;   /* its LU by sequential MUMPS */
  VecScatter sc;      /* a distributed vector whole on every rank */
  Vec        xs, ys;  /* the gathered right-hand side and solution */
  PetscInt   icntl14; /* MUMPS' workspace relaxation in use */
} PC_HsGather;

/* Factors the gathered operator with hamshoot's MUMPS settings and the determinant asked for; a factorization that
 * ran out of MUMPS' workspace is done again with ICNTL(14) doubled (as hsdrop's Factor). A failure is the PC's. Not
 * collective: every rank factors the same matrix to the same outcome. */
static PetscErrorCode Factor(PC pc, PC_HsGather *g)
{
  PCFailedReason fr = PC_NOERROR;

  PetscFunctionBeginUser;
  for (PetscInt attempt = 0;; attempt++) {
    Mat      F;
    PetscInt info = 0, next;
    PetscCall(PCSetOperators(g->inner, g->A[0], g->A[0]));
    PetscCall(HsPCGetMumpsFactor(g->inner, &F));
    if (F) {
      PetscCall(HsMumpsConfigure(F, g->icntl14));
#if defined(PETSC_HAVE_MUMPS)
      PetscCall(MatMumpsSetIcntl(F, 33, 1));
      PetscCall(MatMumpsSetIcntl(F, 6, 0)); /* no max-transversal (MC64), as the parallel LU it replaces, whose
                                               distributed input has none: with it the sequential LU of
                                               crane_natural's outer matrix (N = 4000, 400 segments) left a relative
                                               residual 7e-3 (1.3e-10 without); -mat_mumps_icntl_6 overrides */
#endif
    }
    PetscCall(PCSetUp(g->inner));
    PetscCall(PCGetFailedReason(g->inner, &fr));
#if defined(PETSC_HAVE_MUMPS)
    if (F && fr)
      PetscCall(MatMumpsGetInfog(F, 1, &info));
#endif
    if (!HsMumpsWorkspaceShort(info, g->icntl14, &next) || attempt >= HS_MUMPS_RETRIES)
      break;
    g->icntl14 = next;
    PetscCall(PCReset(g->inner));
  }
  if (fr)
    PetscCall(PCSetFailedReason(pc, fr));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_HsGather(PC pc)
{
  PC_HsGather *g = pc->data;
  PetscInt     M, N;
  IS           rows, cols;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(pc->pmat, &M, &N));
  PetscCall(HsPCCheckAIJ(pc));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, M, 0, 1, &rows));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, N, 0, 1, &cols));
  if (g->A && pc->flag == SAME_NONZERO_PATTERN) { /* new values: the inner LU must see a changed matrix */
    PetscCall(MatCreateSubMatrices(pc->pmat, 1, &rows, &cols, MAT_REUSE_MATRIX, &g->A));
    PetscCall(PetscObjectStateIncrease((PetscObject)g->A[0]));
  } else {
    if (g->A)
      PetscCall(MatDestroySubMatrices(1, &g->A));
    PetscCall(MatCreateSubMatrices(pc->pmat, 1, &rows, &cols, MAT_INITIAL_MATRIX, &g->A));
    PetscCall(PCReset(g->inner)); /* a new pattern: a new analysis */
  }
  PetscCall(ISDestroy(&rows));
  PetscCall(ISDestroy(&cols));
  if (!g->sc) {
    Vec x;
    PetscCall(MatCreateVecs(pc->pmat, &x, NULL));
    PetscCall(VecScatterCreateToAll(x, &g->sc, &g->xs));
    PetscCall(VecDuplicate(g->xs, &g->ys));
    PetscCall(VecDestroy(&x));
  }
  PetscCall(Factor(pc, g));
  PetscFunctionReturn(0);
}

/* y = A^-1 x (or A^-T x: transpose): x gathered whole on every rank, the inner LU's solve (or its transposed one:
 * -ksp_type bicg, ibcgs; issue 38, round 21), this rank's part copied out. */
static PetscErrorCode GatherSolve(PC pc, Vec x, Vec y, PetscBool transpose)
{
  PC_HsGather       *g = pc->data;
  const PetscScalar *a;
  PetscScalar       *b;
  PetscInt           lo, hi;

  PetscFunctionBeginUser;
  PetscCall(VecScatterBegin(g->sc, x, g->xs, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(g->sc, x, g->xs, INSERT_VALUES, SCATTER_FORWARD));
  if (transpose)
    PetscCall(HsPCInnerApplyTranspose(pc, g->inner, NULL, NULL, g->xs, g->ys));
  else
    PetscCall(PCApply(g->inner, g->xs, g->ys));
  PetscCall(VecGetOwnershipRange(y, &lo, &hi));
  PetscCall(VecGetArrayRead(g->ys, &a));
  PetscCall(VecGetArray(y, &b));
  PetscCall(PetscArraycpy(b, a + lo, hi - lo));
  PetscCall(VecRestoreArray(y, &b));
  PetscCall(VecRestoreArrayRead(g->ys, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCApply_HsGather(PC pc, Vec x, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(GatherSolve(pc, x, y, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCApplyTranspose_HsGather(PC pc, Vec x, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(GatherSolve(pc, x, y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCReset_HsGather(PC pc)
{
  PC_HsGather *g = pc->data;

  PetscFunctionBeginUser;
  if (g->A)
    PetscCall(MatDestroySubMatrices(1, &g->A));
  PetscCall(VecScatterDestroy(&g->sc));
  PetscCall(VecDestroy(&g->xs));
  PetscCall(VecDestroy(&g->ys));
  PetscCall(PCReset(g->inner));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCView_HsGather(PC pc, PetscViewer v)
{
  PetscBool ascii;

  PetscFunctionBeginUser;
  (void)pc;
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &ascii));
  if (ascii)
    PetscCall(PetscViewerASCIIPrintf(v, "  the whole operator on every rank, LU by sequential MUMPS (reproducible)\n"));
  PetscFunctionReturn(0);
}

/* HsPCGetInner, HsPCGetDeterminant and HsPCIsExact for hsgather: its inner LU's answers (the same on every rank). */
static PetscErrorCode GetInner(PC pc, PC *inner)
{
  PetscFunctionBeginUser;
  *inner = ((PC_HsGather *)pc->data)->inner;
  PetscFunctionReturn(0);
}

static PetscErrorCode GetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PetscFunctionBeginUser;
  PetscCall(HsPCGetDeterminant(((PC_HsGather *)pc->data)->inner, m, e, known));
  PetscFunctionReturn(0);
}

static PetscErrorCode IsExact(PC pc, PetscBool *exact)
{
  PetscFunctionBeginUser;
  PetscCall(HsPCIsExact(((PC_HsGather *)pc->data)->inner, exact));
  PetscFunctionReturn(0);
}

/* The functions hsgather answers (pcutils.c), composed on pc (set) or removed (destroy). */
static PetscErrorCode Compose(PC pc, PetscBool set)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetInner_C", set ? GetInner : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", set ? GetDeterminant : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCIsExact_C", set ? IsExact : NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_HsGather(PC pc)
{
  PC_HsGather *g = pc->data;

  PetscFunctionBeginUser;
  PetscCall(PCReset_HsGather(pc));
  PetscCall(PCDestroy(&g->inner));
  PetscCall(Compose(pc, PETSC_FALSE));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

/*@ PCCreate_HsGather - the constructor of PC type "hsgather" (registered by HsInitializePackage; bvp/ internal):
    the LU by sequential MUMPS of the whole operator on every rank, reproducible bit for bit where MUMPS' parallel
    factorization is not (the file's head).
@*/
PetscErrorCode PCCreate_HsGather(PC pc)
{
  PC_HsGather *g;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&g));
  g->icntl14 = HS_MUMPS_ICNTL14_DEFAULT;
  pc->data   = g;
  PetscCall(PCCreate(PETSC_COMM_SELF, &g->inner));
  PetscCall(PCSetType(g->inner, PCLU));
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(PCFactorSetMatSolverType(g->inner, MATSOLVERMUMPS));
#endif
  pc->ops->setup   = PCSetUp_HsGather;
  pc->ops->apply   = PCApply_HsGather;
  pc->ops->applytranspose = PCApplyTranspose_HsGather;
  pc->ops->view    = PCView_HsGather;
  pc->ops->reset   = PCReset_HsGather;
  pc->ops->destroy = PCDestroy_HsGather;
  PetscCall(Compose(pc, PETSC_TRUE));
  PetscFunctionReturn(0);
}
