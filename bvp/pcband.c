/* hamshoot: PC "hsband", an exact LU of a banded matrix distributed in contiguous row blocks
 * (issue 11, step 1: selectable with -pc_type hsband; MUMPS stays the default).
 *
 * The Jacobians of both formulations are banded in their natural order (transcription: 4n unknowns
 * per node, nodes k-1..k+1 coupled; shooting: the segments' boundary values). A general sparse LU
 * with a fill-reducing ordering is the wrong tool for them; this PC factors the band in its natural
 * order, with partial pivoting, and across ranks eliminates each rank's interior first:
 *
 *   Rank r owns rows [rs, re). Its rows touch the columns [lo, hi]; those also touched by the rows of
 *   a neighbour rank form the interfaces, the others are r's interior columns [is, ie). Because the
 *   interior columns are zero outside r's rows, the tall block A(rows of r, interior of r) has full
 *   column rank whenever A is nonsingular: Gaussian elimination with partial (row) pivoting on it
 *   cannot break down, and it is as stable as GEPP. It picks one pivot row per interior column; the
 *   re - rs - (ie - is) rows left over, reduced, hold only interface columns. Together, the ranks'
 *   left-over rows form the reduced system on the interface columns (square: as many rows as
 *   interface columns), assembled on rank 0 and factored by LAPACK's dense LU (getrf). A solve:
 *   forward elimination of b on every rank, the reduced solve on rank 0, the interface values to
 *   every rank, back substitution.
 *
 * Storage: each local row keeps its entries in interior and right-interface columns in a circular
 * buffer of width W = kl + ku + 1 (an active row's entries lie in [j, j + W) at elimination step j:
 * its own band, widened by the pivot rows' fill) and its left-interface entries (nL of them, filled
 * in by pivoting: the "spike") densely. Memory and work per rank are O((re - rs) (W + nL) W): linear in
 * N / P. The reduced system has about 2 (kl + ku) P unknowns: dense on rank 0 is right for few ranks
 * and moderate bands (measured in bench/).
 *
 * Limits (refused with an error, not a wrong answer): each rank needs more rows than the band is
 * wide (a rank's rows may touch only its two neighbours' columns); a free final time's dense row and
 * column make the band the whole matrix (use MUMPS there).
 */
#include "hsbvpimpl.h"

#include <petsc/private/pcimpl.h>
#include <petscblaslapack.h>

typedef struct {
  PetscInt     rs, re, is, ie, lo, hi; /* rows, interior columns, column span [lo, hi] of the local rows */
  PetscInt     kl, ku, W, nL, nrow, nI;
  PetscScalar *buf, *left;       /* nrow x W (circular, column c at c % W), nrow x nL (columns lo..is-1) */
  PetscInt    *piv;              /* step c (column is + c): its pivot row */
  PetscInt    *mstart, *mrow;    /* step c's multipliers: mrow/mval[mstart[c] .. mstart[c+1]) */
  PetscScalar *mval;
  PetscInt     mcap;
  PetscInt    *leftover, nleft;  /* rows not used as pivots: the local rows of the reduced system */
  PetscMPIInt  size, rank;
  PetscInt    *lo_all, *hi_all, *rs_all, *re_all; /* every rank's spans (size each) */
  PetscInt    *ifs, *ife, *ioff, nred;            /* interface block r (between r-1 and r): [ifs, ife), at ioff */
  PetscScalar *red;                               /* rank 0: the factored reduced matrix (nred^2) */
  PetscBLASInt *redpiv;
  PetscInt     *nleft_all;
  PetscScalar  *x;                                /* columns lo..hi of the solution (back substitution) */
  PetscInt      refine;                           /* -pc_hsband_refine */
} PC_HsBand;

static PetscErrorCode Free(PC_HsBand *b)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree2(b->buf, b->left));
  PetscCall(PetscFree4(b->piv, b->mstart, b->leftover, b->x));
  PetscCall(PetscFree2(b->mrow, b->mval));
  PetscCall(PetscFree4(b->lo_all, b->hi_all, b->rs_all, b->re_all));
  PetscCall(PetscFree4(b->ifs, b->ife, b->ioff, b->nleft_all));
  PetscCall(PetscFree(b->red));
  PetscCall(PetscFree(b->redpiv));
  b->mcap = 0;
  PetscFunctionReturn(0);
}

/* The band, the spans of every rank, the interior columns and the interface blocks of A. */
static PetscErrorCode Layout(PC pc, PC_HsBand *b, Mat A)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)pc);
  PetscInt N, band[2] = {0, 0}, ncols;
  const PetscInt *cols;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &b->size));
  PetscCallMPI(MPI_Comm_rank(comm, &b->rank));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetOwnershipRange(A, &b->rs, &b->re));
  b->lo = b->rs, b->hi = b->re - 1;
  for (PetscInt i = b->rs; i < b->re; i++) {
    PetscCall(MatGetRow(A, i, &ncols, &cols, NULL));
    for (PetscInt k = 0; k < ncols; k++) {
      band[0] = PetscMax(band[0], i - cols[k]), band[1] = PetscMax(band[1], cols[k] - i);
      b->lo = PetscMin(b->lo, cols[k]), b->hi = PetscMax(b->hi, cols[k]);
    }
    PetscCall(MatRestoreRow(A, i, &ncols, &cols, NULL));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, band, 2, MPIU_INT, MPI_MAX, comm));
  b->kl = band[0], b->ku = band[1], b->W = b->kl + b->ku + 1, b->nrow = b->re - b->rs;
  PetscCall(PetscMalloc4(b->size, &b->lo_all, b->size, &b->hi_all, b->size, &b->rs_all, b->size, &b->re_all));
  PetscCallMPI(MPI_Allgather(&b->lo, 1, MPIU_INT, b->lo_all, 1, MPIU_INT, comm));
  PetscCallMPI(MPI_Allgather(&b->hi, 1, MPIU_INT, b->hi_all, 1, MPIU_INT, comm));
  PetscCallMPI(MPI_Allgather(&b->rs, 1, MPIU_INT, b->rs_all, 1, MPIU_INT, comm));
  PetscCallMPI(MPI_Allgather(&b->re, 1, MPIU_INT, b->re_all, 1, MPIU_INT, comm));
  PetscCall(PetscMalloc4(b->size + 1, &b->ifs, b->size + 1, &b->ife, b->size + 2, &b->ioff, b->size, &b->nleft_all));
  b->ifs[0] = b->ife[0] = 0, b->ifs[b->size] = b->ife[b->size] = N, b->ioff[0] = b->ioff[1] = 0;
  for (PetscMPIInt r = 1; r < b->size; r++) { /* block r: the columns both r - 1 and r touch, around rs of r */
    b->ifs[r]      = PetscMin(b->lo_all[r], b->rs_all[r]);
    b->ife[r]      = PetscMax(b->hi_all[r - 1] + 1, b->rs_all[r]);
    b->ioff[r + 1] = b->ioff[r] + b->ife[r] - b->ifs[r];
  }
  b->nred = b->ioff[b->size];
  for (PetscMPIInt r = 0; r < b->size; r++) /* a rank's rows may reach only its neighbours' interfaces */
    PetscCheck(b->ife[r] < b->ifs[r + 1] && (r == 0 || b->lo_all[r] >= b->ifs[r]) &&
                 (r == b->size - 1 || b->hi_all[r] < b->ife[r + 1]),
               comm, PETSC_ERR_SUP,
               "-pc_type hsband: rank %d has %" PetscInt_FMT " rows, too few for the band (%" PetscInt_FMT " below, %" PetscInt_FMT
               " above the diagonal): use fewer ranks, a larger N, or MUMPS (-pc_factor_mat_solver_type mumps)",
               (int)r, b->re_all[r] - b->rs_all[r], b->kl, b->ku);
  b->is = b->ife[b->rank], b->ie = b->ifs[b->rank + 1], b->nI = b->ie - b->is, b->nL = b->is - b->lo;
  PetscCheck(b->W <= 4096 && b->nL <= 4096, comm, PETSC_ERR_SUP,
             "-pc_type hsband: the band is %" PetscInt_FMT " wide (a free final time makes it dense): use MUMPS", b->W);
  PetscFunctionReturn(0);
}

/* The local rows of A into the circular buffer and the left spike. */
static PetscErrorCode Load(PC_HsBand *b, Mat A)
{
  PetscInt           ncols;
  const PetscInt    *cols;
  const PetscScalar *vals;

  PetscFunctionBeginUser;
  PetscCall(PetscArrayzero(b->buf, b->nrow * b->W));
  PetscCall(PetscArrayzero(b->left, b->nrow * b->nL));
  for (PetscInt i = 0; i < b->nrow; i++) {
    PetscCall(MatGetRow(A, b->rs + i, &ncols, &cols, &vals));
    for (PetscInt k = 0; k < ncols; k++) {
      if (cols[k] < b->is)
        b->left[i * b->nL + cols[k] - b->lo] = vals[k];
      else
        b->buf[i * b->W + cols[k] % b->W] = vals[k];
    }
    PetscCall(MatRestoreRow(A, b->rs + i, &ncols, &cols, &vals));
  }
  PetscFunctionReturn(0);
}

/* Records multiplier l of row r at the current step. */
static PetscErrorCode PushMultiplier(PC_HsBand *b, PetscInt *nm, PetscInt r, PetscScalar l)
{
  PetscFunctionBeginUser;
  if (*nm == b->mcap) {
    PetscInt    *mr;
    PetscScalar *mv;
    PetscInt     cap = PetscMax(2 * b->mcap, 16 + b->nrow);
    PetscCall(PetscMalloc2(cap, &mr, cap, &mv));
    PetscCall(PetscArraycpy(mr, b->mrow, *nm));
    PetscCall(PetscArraycpy(mv, b->mval, *nm));
    PetscCall(PetscFree2(b->mrow, b->mval));
    b->mrow = mr, b->mval = mv, b->mcap = cap;
  }
  b->mrow[*nm] = r, b->mval[*nm] = l, (*nm)++;
  PetscFunctionReturn(0);
}

/* GEPP on the interior columns of the local rows; *zero: a column without a nonzero pivot. */
static PetscErrorCode Eliminate(PC_HsBand *b, PetscBool *zero)
{
  PetscInt *act, na = 0, next = 0, nm = 0, W = b->W;

  PetscFunctionBeginUser;
  *zero = PETSC_FALSE;
  PetscCall(PetscMalloc1(b->nrow, &act));
  for (PetscInt c = 0; c < b->nI; c++) {
    PetscInt     j = b->is + c, s = j % W, best = -1;
    PetscReal    amax = 0;
    PetscScalar *p, *pl;
    while (next < b->nrow && b->rs + next - b->kl <= j) /* rows whose band reaches column j */
      act[na++] = next++;
    for (PetscInt a = 0; a < na; a++)
      if (PetscAbsScalar(b->buf[act[a] * W + s]) > amax)
        amax = PetscAbsScalar(b->buf[act[a] * W + s]), best = a;
    b->mstart[c] = nm;
    if (best < 0) {
      *zero = PETSC_TRUE;
      break;
    }
    b->piv[c] = act[best], act[best] = act[--na];
    p = b->buf + b->piv[c] * W, pl = b->left + b->piv[c] * b->nL;
    for (PetscInt a = 0; a < na; a++) {
      PetscScalar *r = b->buf + act[a] * W, *rl = b->left + act[a] * b->nL, l;
      if (r[s] == 0)
        continue;
      l = r[s] / p[s], r[s] = 0;
      for (PetscInt q = 1; q < W; q++)
        r[(s + q) % W] -= l * p[(s + q) % W];
      for (PetscInt q = 0; q < b->nL; q++)
        rl[q] -= l * pl[q];
      PetscCall(PushMultiplier(b, &nm, act[a], l));
    }
  }
  b->mstart[b->nI] = nm;
  b->nleft = 0;
  if (!*zero) {
    for (PetscInt a = 0; a < na; a++)
      b->leftover[b->nleft++] = act[a];
    while (next < b->nrow)
      b->leftover[b->nleft++] = next++;
  }
  PetscCall(PetscFree(act));
  PetscFunctionReturn(0);
}

/* Reduced column of global interface column col (in block r or r + 1 of this rank). */
static PetscInt RedCol(PC_HsBand *b, PetscInt col)
{
  PetscInt r = col < b->is ? b->rank : b->rank + 1;
  return b->ioff[r] + col - b->ifs[r];
}

/* The left-over rows into the reduced matrix on rank 0, factored there; *fail on a singular one. */
static PetscErrorCode FactorReduced(PC pc, PC_HsBand *b, PetscBool *fail)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);
  PetscScalar *rows, *all = NULL;
  PetscMPIInt *cnt = NULL, *dsp = NULL, n;
  PetscBLASInt nr, info = 0;

  PetscFunctionBeginUser;
  *fail = PETSC_FALSE;
  PetscCallMPI(MPI_Allgather(&b->nleft, 1, MPIU_INT, b->nleft_all, 1, MPIU_INT, comm));
  if (!b->nred)
    PetscFunctionReturn(0);
  PetscCall(PetscCalloc1(b->nleft * b->nred, &rows)); /* dense rows over the reduced columns */
  for (PetscInt i = 0; i < b->nleft; i++) {
    PetscInt r = b->leftover[i];
    for (PetscInt q = 0; q < b->nL; q++)
      rows[i * b->nred + RedCol(b, b->lo + q)] = b->left[r * b->nL + q];
    for (PetscInt col = b->ie; col <= b->hi; col++)
      rows[i * b->nred + RedCol(b, col)] = b->buf[r * b->W + col % b->W];
  }
  if (!b->rank) {
    PetscCall(PetscMalloc2(b->size, &cnt, b->size, &dsp));
    for (PetscMPIInt r = 0, d = 0; r < b->size; r++)
      cnt[r] = (PetscMPIInt)(b->nleft_all[r] * b->nred), dsp[r] = d, d += cnt[r];
    PetscCall(PetscMalloc1(b->nred * b->nred, &all));
  }
  PetscCall(PetscMPIIntCast(b->nleft * b->nred, &n));
  PetscCallMPI(MPI_Gatherv(rows, n, MPIU_SCALAR, all, cnt, dsp, MPIU_SCALAR, 0, comm));
  PetscCall(PetscFree(rows));
  if (!b->rank) { /* row-major rows = column-major transpose: factor A^T, solve with "T" */
    PetscCall(PetscFree(b->red));
    PetscCall(PetscFree(b->redpiv));
    PetscCall(PetscMalloc1(b->nred, &b->redpiv));
    b->red = all;
    PetscCall(PetscBLASIntCast(b->nred, &nr));
    PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&nr, &nr, b->red, &nr, b->redpiv, &info));
    PetscCall(PetscFree2(cnt, dsp));
  }
  PetscCallMPI(MPI_Bcast(&info, 1, MPI_INT, 0, comm));
  *fail = (PetscBool)(info != 0);
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_HsBand(PC pc)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;
  PetscBool  zero, any;

  PetscFunctionBeginUser;
  PetscCall(Free(b));
  PetscCall(Layout(pc, b, pc->pmat));
  PetscCall(PetscMalloc2(b->nrow * b->W, &b->buf, b->nrow * b->nL + 1, &b->left));
  PetscCall(PetscMalloc4(b->nI + 1, &b->piv, b->nI + 1, &b->mstart, b->nrow + 1, &b->leftover, b->hi - b->lo + 1, &b->x));
  PetscCall(Load(b, pc->pmat));
  PetscCall(Eliminate(b, &zero));
  PetscCall(MPIU_Allreduce(&zero, &any, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)pc)));
  if (!any)
    PetscCall(FactorReduced(pc, b, &any));
  if (any)
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x by the factors */
static PetscErrorCode SolveFactored(PC pc, Vec xv, Vec yv)
{
  PC_HsBand         *b    = (PC_HsBand *)pc->data;
  MPI_Comm           comm = PetscObjectComm((PetscObject)pc);
  const PetscScalar *xa;
  PetscScalar       *ya, *t, *red = NULL, *xr;
  PetscInt           W = b->W;
  PetscMPIInt       *cnt = NULL, *dsp = NULL, n;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(xv, &xa));
  PetscCall(PetscMalloc2(b->nrow, &t, b->nred + 1, &xr));
  PetscCall(PetscArraycpy(t, xa, b->nrow));
  PetscCall(VecRestoreArrayRead(xv, &xa));
  for (PetscInt c = 0; c < b->nI; c++) /* forward: the row operations of the elimination */
    for (PetscInt m = b->mstart[c]; m < b->mstart[c + 1]; m++)
      t[b->mrow[m]] -= b->mval[m] * t[b->piv[c]];
  if (b->nred) { /* the reduced system on rank 0: its right-hand side is the left-over rows' */
    PetscScalar *rhs;
    PetscCall(PetscMalloc1(b->nleft + 1, &rhs));
    for (PetscInt i = 0; i < b->nleft; i++)
      rhs[i] = t[b->leftover[i]];
    if (!b->rank) {
      PetscCall(PetscMalloc2(b->size, &cnt, b->size, &dsp));
      for (PetscMPIInt r = 0, d = 0; r < b->size; r++)
        cnt[r] = (PetscMPIInt)b->nleft_all[r], dsp[r] = d, d += cnt[r];
      red = xr;
    }
    PetscCall(PetscMPIIntCast(b->nleft, &n));
    PetscCallMPI(MPI_Gatherv(rhs, n, MPIU_SCALAR, red, cnt, dsp, MPIU_SCALAR, 0, comm));
    PetscCall(PetscFree(rhs));
    if (!b->rank) {
      PetscBLASInt nr, one = 1, info;
      PetscCall(PetscBLASIntCast(b->nred, &nr));
      PetscCallBLAS("LAPACKgetrs", LAPACKgetrs_("T", &nr, &one, b->red, &nr, b->redpiv, xr, &nr, &info));
      PetscCall(PetscFree2(cnt, dsp));
    }
    PetscCallMPI(MPI_Bcast(xr, (PetscMPIInt)b->nred, MPIU_SCALAR, 0, comm));
    for (PetscInt col = b->lo; col < b->is; col++)
      b->x[col - b->lo] = xr[RedCol(b, col)];
    for (PetscInt col = b->ie; col <= b->hi; col++)
      b->x[col - b->lo] = xr[RedCol(b, col)];
  }
  for (PetscInt c = b->nI - 1; c >= 0; c--) { /* back substitution with the pivot rows */
    PetscInt     j = b->is + c, s = j % W;
    PetscScalar *p = b->buf + b->piv[c] * W, v = t[b->piv[c]];
    for (PetscInt q = 1; q < W && j + q <= b->hi; q++)
      v -= p[(s + q) % W] * b->x[j + q - b->lo];
    for (PetscInt q = 0; q < b->nL; q++)
      v -= b->left[b->piv[c] * b->nL + q] * b->x[q];
    b->x[j - b->lo] = v / p[s];
  }
  PetscCall(VecGetArray(yv, &ya));
  for (PetscInt i = 0; i < b->nrow; i++)
    ya[i] = b->x[b->rs + i - b->lo];
  PetscCall(VecRestoreArray(yv, &ya));
  PetscCall(PetscFree2(t, xr));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x, improved by -pc_hsband_refine steps of iterative refinement (y += A^{-1} (x - A y)) */
static PetscErrorCode PCApply_HsBand(PC pc, Vec xv, Vec yv)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;
  Vec        r, d;

  PetscFunctionBeginUser;
  PetscCall(SolveFactored(pc, xv, yv));
  if (!b->refine)
    PetscFunctionReturn(0);
  PetscCall(VecDuplicate(xv, &r));
  PetscCall(VecDuplicate(xv, &d));
  for (PetscInt i = 0; i < b->refine; i++) {
    PetscCall(MatMult(pc->pmat, yv, r));
    PetscCall(VecAYPX(r, -1, xv));
    PetscCall(SolveFactored(pc, r, d));
    PetscCall(VecAXPY(yv, 1, d));
  }
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_HsBand(PC pc, PetscOptionItems *PetscOptionsObject)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;

  PetscFunctionBeginUser;
  PetscOptionsHeadBegin(PetscOptionsObject, "Banded LU (hamshoot)");
  PetscCall(PetscOptionsInt("-pc_hsband_refine", "steps of iterative refinement after each solve (each: a product "
                            "with the matrix and a solve with the factors)", "PCHSBAND", b->refine, &b->refine, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode PCView_HsBand(PC pc, PetscViewer viewer)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;
  PetscBool  ascii;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  banded LU with partial pivoting (hamshoot): %" PetscInt_FMT " below, %" PetscInt_FMT
                                     " above the diagonal; reduced system of %" PetscInt_FMT " interface unknowns on rank 0; "
                                     "%" PetscInt_FMT " refinement step(s)\n",
                                     b->kl, b->ku, b->nred, b->refine));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_HsBand(PC pc)
{
  PetscFunctionBeginUser;
  PetscCall(Free((PC_HsBand *)pc->data));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

/* The PC's constructor (PCRegister in HsInitializePackage). */
PetscErrorCode PCCreate_HsBand(PC pc)
{
  PC_HsBand *b;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&b));
  b->refine               = 1;
  pc->data                = b;
  pc->ops->setfromoptions = PCSetFromOptions_HsBand;
  pc->ops->setup   = PCSetUp_HsBand;
  pc->ops->apply   = PCApply_HsBand;
  pc->ops->view    = PCView_HsBand;
  pc->ops->destroy = PCDestroy_HsBand;
  PetscFunctionReturn(0);
}
