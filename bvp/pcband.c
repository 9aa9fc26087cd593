/* hamshoot: PC "hsband", an exact LU of a banded matrix distributed in contiguous row blocks
 * (issue 11: -pc_type hsband, the default for small node blocks, -hs_linear_solver).
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
 * Staircase order: the local rows are taken in the order of their first column (the transcription's
 * costate rows of node k start a node left of its state rows), and a row joins the elimination at its
 * first column. An active row's entries then lie in [j, j + W) at step j, W the widest row span (its
 * own, widened by the pivot rows' fill, whose spans are as wide): 10n for the transcription against
 * kl + ku + 1 = 14n in the natural order, and about 4n active rows a step instead of 8n.
 *
 * Storage: a row joins a small window when the elimination reaches its first column: its entries in
 * interior and right-interface columns in a circular row of width W, its left-interface entries (nL of
 * them, filled in by pivoting: the "spike") densely. A pivot row leaves the window for the U store,
 * compactly (columns j .. its last nonzero, then the spike) in step order, and its window row is reused: the
 * elimination works in cache (a few rows of W), and the back substitution streams through U. The multipliers
 * (L) are kept only when a factorization serves more than one solve: by default it waits for its first solve
 * and eliminates that right-hand side along (-pc_hsband_defer; Factor). The U store can be the matrix' own
 * values (HsPCBandSetInPlace): a row's values are not read again once it has joined, and U's rows take less room
 * than the matrix' rows they come from (kepler: 21.3 million U entries against 28.8 million), so step c's U row
 * goes behind the values of the first row not yet joined (bottom-up: ahead of the last), where it fits, else to
 * the PC's own array (URow; the first steps, whose rows are short, may); the matrix is then marked factored.
 * The last
 * rank (of several) eliminates bottom-up, on its rows and columns reversed: its left interface becomes
 * a right one, so with 2 ranks neither has a spike, and with more only the middle ones
 * (-pc_hsband_reverse_last). Memory per rank is O((re - rs) (W + nL)), work O((re - rs) (W + nL) W):
 * linear in N / P. The reduced system has about 2 (kl + ku) P unknowns: dense on rank 0 is right for
 * few ranks and moderate bands (measured in bench/). The layout (spans, order, interfaces) is kept
 * while the matrix' nonzero pattern is.
 *
 * Limits: each rank needs more rows than the band is wide (a rank's rows may touch only its two
 * neighbours' columns), and the band at most HS_BAND_MAX_WIDTH wide (a free final time's dense row
 * and column make it the whole matrix). Outside them the PC factors by MUMPS LU instead (inner PC,
 * said by -ksp_view and -info), or with -pc_hsband_fallback false stops with an error naming the limit.
 */
#include "hsbvpimpl.h"

#include <petsc/private/matimpl.h>
#include <petsc/private/pcimpl.h>
#include <petscblaslapack.h>

#define HS_BAND_MAX_WIDTH 4096
#define HS_BAND_PREFETCH 8       /* LoadRow asks for the CSR row this many rows ahead (see there) */
#define HS_BAND_PREFETCH_NNZ 12  /* ... when the local rows have this many entries on average */
#define HS_BAND_MAX_REDUCED 8192 /* interface unknowns of all ranks (dense on rank 0: 0.5 GB) */

/* The elimination compiled twice (EliminateAVX2), where gcc targets x86-64: also for AVX2, used where the
 * processor has it and the rows are long enough (UseAVX2). Its loops are elementwise (r -= l p, copies), so 4
 * doubles a vector instead of SSE2's 2 give the same results to the bit: AVX2 alone brings no FMA instructions,
 * hence no contraction of l p into r (the build uses no -march either; CMakeLists.txt). Test band: the same
 * output files with and without; the speed in bench/README.md (ninth session). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HS_BAND_AVX2 1
#endif
#define HS_BAND_AVX2_MIN_WIDTH 24 /* UseAVX2's default: the window at least this wide */

typedef struct {
  PetscInt     rs, re, lo, hi;         /* rows, column span [lo, hi] of the local rows (global) */
  PetscInt     is, ie, olo, ohi;       /* interior columns [is, ie) and span [olo, ohi], oriented (Or) */
  PetscInt     nglob, isg, ieg;        /* the matrix' size; the interior columns, global */
  PetscBool    rev, reverse;           /* this rank eliminates bottom-up; -pc_hsband_reverse_last */
  PetscInt     kl, ku, W, nL, nrow, nI;
  PetscInt    *perm, *first, *last;    /* row i (staircase order) is local row perm[i], first column first[i];
                                          local row l's last column last[l] (oriented, Or) */
  Mat          laid;                   /* the matrix (and its nonzero state) the layout is of */
  PetscObjectState laid_state;
  PetscBool    ok;                     /* the layout is within the limits (else the MUMPS fallback) */
  PetscScalar *win, *wleft;      /* the window: R rows of W (circular, column c at c % W), R rows of nL (olo..is-1) */
  PetscInt     R;                /* its rows: the most active at once, or left over (Bounds) */
  PetscInt    *slotrow, *freeslot; /* the row (staircase order) in each window row; the free window rows (R) */
  PetscInt    *ulen;             /* step c's U row: ulen[c] entries (columns is + c ..), then its nL spike entries */
  PetscScalar *uval;             /* the U rows in step order, the pivot's reciprocal in the pivot's place */
  PetscCount   ucap, utot;       /* uval's capacity (Bounds') and use */
  PetscBool    inplace;          /* HsPCBandSetInPlace: U into the matrix' values as their rows join (URow) */
  PetscScalar *ua;               /* in place: the values of the matrix' owned columns (part 0), uan of them */
  PetscCount   uan, unin;        /* ... and U's entries there (URow) */
  char        *uin;              /* step c's U row is in place (else in uval) */
  char        *joined;           /* in place: local row l has joined the elimination (its values are read) */
  PetscInt    *piv;              /* step c (column is + c): its pivot row (staircase order) */
  PetscInt    *mstart, *mrow;    /* step c's multipliers: mrow/mval[mstart[c] .. mstart[c+1]) */
  PetscScalar *mval;
  PetscInt     mcap;             /* their capacity: Bounds' */
  PetscInt     alloc[7];         /* nrow, W, nL, nI, hi - lo, nred, R of the arrays here: kept while they fit */
  PetscInt    *leftover, nleft;  /* rows not used as pivots: the local rows of the reduced system */
  PetscInt    *leftslot;         /* their window rows */
  PetscMPIInt  size, rank;
  PetscInt    *lo_all, *hi_all, *rs_all, *re_all; /* every rank's spans (size each) */
  PetscInt    *ifs, *ife, *ioff, nred;            /* interface block r (between r-1 and r): [ifs, ife), at ioff */
  PetscScalar *red;                               /* rank 0: the factored reduced matrix (nred^2) */
  PetscBLASInt *redpiv;
  PetscInt     *nleft_all;
  PetscScalar  *x;                                /* columns lo..hi of the solution (back substitution) */
  PetscScalar  *t, *xr;                           /* a solve's right-hand side (nrow), the interface values */
  PetscInt     *act;                              /* the active window rows of an elimination (R) */
  PetscInt     *ext;                              /* each window row's last column that may be nonzero (R) */
  Vec           r, d;                             /* refinement's residual and correction */
  PetscInt      refine;                           /* -pc_hsband_refine (PETSC_DECIDE: by the band, RefineSteps) */
  PetscBool     fallback;                         /* -pc_hsband_fallback: MUMPS outside the limits */
  PetscBool     defer;                            /* -pc_hsband_defer: factor at the first solve, no multipliers */
  PetscBool     pending;                          /* the factorization waits for that solve (Factor's head) */
  PetscBool     keep;                             /* a second solve came: every factorization keeps them now */
  PetscBool     have_l;                           /* these factors have their multipliers (mrow, mval) */
  PetscObjectState fstate;                        /* the matrix' state at the setup that deferred */
  PetscBool     prefetch;                         /* LoadRow prefetches (long rows, CSR read in place) */
  PetscBool     failed;                           /* the last factorization met a zero pivot */
  PetscBool     avx2, avx2_set;                   /* -pc_hsband_avx2, and whether given (UseAVX2) */
  PC            inner;                            /* that MUMPS LU, when used (else NULL) */
  char          why[256];                         /* why it is used */
  PetscBool     det_done;                         /* det_m, det_e computed for these factors */
  PetscBool     det_none;                         /* no determinant (the fallback without MUMPS) */
  PetscReal     det_m;                            /* det A = det_m 2^det_e (every rank; 0 if singular) */
  PetscInt      det_e;
} PC_HsBand;

static PetscLogEvent HS_BAND_LAYOUT, HS_BAND_ELIM, HS_BAND_REDUCED, HS_BAND_SOLVE;
static PetscBool     hs_band_events = PETSC_FALSE;

static PetscErrorCode FinalizeEvents(void)
{
  PetscFunctionBeginUser;
  hs_band_events = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* -log_view: HsBandLayout (the pattern's layout, once per pattern), HsBandElim (the ranks' eliminations,
 * the rows loaded as they join), HsBandReduced (the interface system: gathered, factored),
 * HsBandSolve (the solves with the factors, refinement's included). */
static PetscErrorCode RegisterEvents(void)
{
  PetscFunctionBeginUser;
  if (hs_band_events)
    PetscFunctionReturn(0);
  PetscCall(PetscLogEventRegister("HsBandLayout", PC_CLASSID, &HS_BAND_LAYOUT));
  PetscCall(PetscLogEventRegister("HsBandElim", PC_CLASSID, &HS_BAND_ELIM));
  PetscCall(PetscLogEventRegister("HsBandReduced", PC_CLASSID, &HS_BAND_REDUCED));
  PetscCall(PetscLogEventRegister("HsBandSolve", PC_CLASSID, &HS_BAND_SOLVE));
  PetscCall(PetscRegisterFinalize(FinalizeEvents));
  hs_band_events = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The arrays of the layout (every setup), or with all, also the factors' (when the sizes change, and at
 * the end). */
static PetscErrorCode Free(PC_HsBand *b, PetscBool all)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree4(b->lo_all, b->hi_all, b->rs_all, b->re_all));
  PetscCall(PetscFree4(b->ifs, b->ife, b->ioff, b->nleft_all));
  PetscCall(PetscFree3(b->perm, b->first, b->last));
  PetscCall(MatDestroy(&b->laid));
  if (!all)
    PetscFunctionReturn(0);
  PetscCall(PetscFree2(b->win, b->wleft));
  PetscCall(PetscFree5(b->piv, b->mstart, b->leftover, b->x, b->joined));
  PetscCall(PetscFree2(b->mrow, b->mval));
  PetscCall(PetscFree(b->uval));
  PetscCall(PetscFree4(b->t, b->xr, b->act, b->ext));
  PetscCall(PetscFree5(b->slotrow, b->freeslot, b->leftslot, b->ulen, b->uin));
  PetscCall(VecDestroy(&b->r));
  PetscCall(VecDestroy(&b->d));
  PetscCall(PetscFree(b->red));
  PetscCall(PetscFree(b->redpiv));
  b->mcap = 0, b->ucap = 0;
  PetscCall(PetscArrayzero(b->alloc, 7));
  PetscFunctionReturn(0);
}

/* The sizes an elimination of this layout needs: *nm multipliers (at step c the active rows are those with
 * first column <= is + c less the c pivots taken, and all but the pivot may get one), *R window rows (the
 * most active rows at once, and the left-over rows at the end), *nu U entries (step c's pivot row has at
 * most min(W, ohi - (is + c) + 1) entries from column is + c on, and nL in the spike). Allocated once for
 * the layout (growing the multipliers by doubling during the first elimination had cost kepler, N = 1e5,
 * 5 % of its run in copies and first touches of pages). */
static void Bounds(const PC_HsBand *b, PetscInt *nm, PetscInt *R, PetscCount *nu)
{
  PetscInt next = 0;

  *nm = 0, *R = PetscMax(b->nrow - b->nI, 1), *nu = 0;
  for (PetscInt c = 0; c < b->nI; c++) {
    while (next < b->nrow && b->first[next] <= b->is + c)
      next++;
    *nm += PetscMax(next - c - 1, 0);
    *R = PetscMax(*R, next - c);
    *nu += PetscMin(b->W, b->ohi - (b->is + c) + 1) + b->nL;
  }
}

/* The factors' arrays for this layout: kept from the last setup when the sizes are the same (a Newton
 * solve factors matrices of one pattern; the multipliers and U keep their capacity). U is allocated at
 * its bound, and only the pages its rows reach are touched. */
static PetscErrorCode Allocate(PC_HsBand *b)
{
  PetscInt   nm, R, want[7];
  PetscCount nu;
  PetscBool  same;

  PetscFunctionBeginUser;
  Bounds(b, &nm, &R, &nu);
  want[0] = b->nrow, want[1] = b->W, want[2] = b->nL, want[3] = b->nI;
  want[4] = b->ohi - b->olo, want[5] = b->nred, want[6] = R;
  if (nm > b->mcap) {
    PetscCall(PetscFree2(b->mrow, b->mval));
    PetscCall(PetscMalloc2(nm, &b->mrow, nm, &b->mval));
    b->mcap = nm;
  }
  if (nu > b->ucap) {
    PetscCall(PetscFree(b->uval));
    PetscCall(PetscMalloc1(nu, &b->uval));
    b->ucap = nu;
  }
  PetscCall(PetscArraycmp(want, b->alloc, 7, &same));
  if (same)
    PetscFunctionReturn(0);
  b->R = R;
  PetscCall(PetscFree2(b->win, b->wleft));
  PetscCall(PetscFree5(b->piv, b->mstart, b->leftover, b->x, b->joined));
  PetscCall(PetscMalloc2(R * b->W, &b->win, R * b->nL + 1, &b->wleft));
  PetscCall(PetscMalloc5(b->nI + 1, &b->piv, b->nI + 1, &b->mstart, b->nrow + 1, &b->leftover, b->ohi - b->olo + 1, &b->x,
                         b->nrow + 1, &b->joined));
  PetscCall(PetscFree4(b->t, b->xr, b->act, b->ext));
  PetscCall(PetscMalloc4(b->nrow + 1, &b->t, b->nred + 1, &b->xr, R + 1, &b->act, R + 1, &b->ext));
  PetscCall(PetscFree5(b->slotrow, b->freeslot, b->leftslot, b->ulen, b->uin));
  PetscCall(PetscMalloc5(R + 1, &b->slotrow, R + 1, &b->freeslot, R + 1, &b->leftslot, b->nI + 1, &b->ulen, b->nI + 1, &b->uin));
  PetscCall(VecDestroy(&b->r));
  PetscCall(VecDestroy(&b->d));
  PetscCall(PetscArraycpy(b->alloc, want, 7));
  PetscFunctionReturn(0);
}

/* Column c in this rank's orientation: the last rank (of several) eliminates bottom-up, on the matrix
 * with its rows and columns reversed, so that no rank but the middle ones carries a spike. */
static inline PetscInt Or(const PC_HsBand *b, PetscInt c)
{
  return b->rev ? b->nglob - 1 - c : c;
}

/* The local rows' first (b->first) and last (b->last) columns, global and in row order (b->perm the identity;
 * Orient orients and sorts them); the kl, ku of the matrix (every rank) and this rank's column span
 * [lo, hi]. An empty row has last column -1. */
static PetscErrorCode Spans(PC pc, PC_HsBand *b, Mat A)
{
  PetscInt        band[2] = {0, 0}, ncols;
  const PetscInt *cols;
  HsAIJParts      rp;

  PetscFunctionBeginUser;
  PetscCall(HsAIJPartsGet(A, PETSC_FALSE, &rp)); /* MatGetRow per row: HsBandLayout 103 -> 70 us, pendulum N = 1e3 */
  b->lo = b->rs, b->hi = b->re - 1;
  for (PetscInt i = 0; i < b->nrow; i++) {
    PetscInt r = b->rs + i, f = PETSC_MAX_INT, l = -1;
    for (PetscInt q = 0; rp.ok && q < 2 && rp.part[q]; q++)
      for (PetscInt k = rp.ia[q][i]; k < rp.ia[q][i + 1]; k++) {
        PetscInt c = q ? rp.colmap[rp.ja[q][k]] : rp.cstart + rp.ja[q][k];
        f = PetscMin(f, c), l = PetscMax(l, c);
      }
    if (!rp.ok) {
      PetscCall(MatGetRow(A, r, &ncols, &cols, NULL));
      for (PetscInt k = 0; k < ncols; k++)
        f = PetscMin(f, cols[k]), l = PetscMax(l, cols[k]);
      PetscCall(MatRestoreRow(A, r, &ncols, &cols, NULL));
    }
    if (l >= 0) {
      band[0] = PetscMax(band[0], r - f), band[1] = PetscMax(band[1], l - r);
      b->lo = PetscMin(b->lo, f), b->hi = PetscMax(b->hi, l);
    }
    b->perm[i] = i, b->first[i] = f, b->last[i] = l;
  }
  PetscCall(HsAIJPartsRestore(&rp));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, band, 2, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)pc)));
  b->kl = band[0], b->ku = band[1];
  PetscFunctionReturn(0);
}

/* Orients the spans (after Spans and the interfaces), sorts the rows into staircase order (stably by
 * first column: insertion sort, the rows are nearly in order; b->last stays in local row order) and sets
 * the window's width W: an active row's entries stay in [j, j + W) at step j (its own span, widened by the
 * pivot rows' fill, which are active rows too), and the right interface fits in it. */
static PetscErrorCode Orient(PC_HsBand *b)
{
  PetscInt span = 0, *last = b->last;

  PetscFunctionBeginUser;
  b->is = b->rev ? Or(b, b->ieg - 1) : b->isg, b->ie = b->rev ? Or(b, b->isg) + 1 : b->ieg;
  b->olo = b->rev ? Or(b, b->hi) : b->lo, b->ohi = b->rev ? Or(b, b->lo) : b->hi;
  b->nI = b->ie - b->is, b->nL = b->is - b->olo;
  for (PetscInt i = 0; i < b->nrow; i++) {
    PetscInt f = b->first[i], l = last[i];
    if (l < 0) /* an empty row: never a pivot */
      b->first[i] = PETSC_MAX_INT, last[i] = 0;
    else if (b->rev)
      b->first[i] = Or(b, l), last[i] = Or(b, f);
    if (l >= 0)
      span = PetscMax(span, last[i] - PetscMax(b->first[i], b->is));
  }
  for (PetscInt i = 0; b->rev && i < b->nrow / 2; i++) { /* bottom-up: the rows last to first, nearly sorted */
    PetscInt k = b->nrow - 1 - i, t;
    t = b->perm[i], b->perm[i] = b->perm[k], b->perm[k] = t;
    t = b->first[i], b->first[i] = b->first[k], b->first[k] = t;
  }
  for (PetscInt i = 1; i < b->nrow; i++) { /* insertion sort by first column, perm along */
    PetscInt f = b->first[i], p = b->perm[i], j = i - 1;
    for (; j >= 0 && b->first[j] > f; j--)
      b->first[j + 1] = b->first[j], b->perm[j + 1] = b->perm[j];
    b->first[j + 1] = f, b->perm[j + 1] = p;
  }
  b->W = PetscMax(span + 1, b->ohi - b->ie + 2);
  PetscFunctionReturn(0);
}

/* The band, the spans of every rank, the interior columns and the interface blocks of A; b->why (and
 * b->ok = PETSC_FALSE) if A is outside the limits. */
static PetscErrorCode Layout(PC pc, PC_HsBand *b, Mat A)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)pc);
  PetscInt  N, mine[4], *all;
  PetscBool ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &b->size));
  PetscCallMPI(MPI_Comm_rank(comm, &b->rank));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetOwnershipRange(A, &b->rs, &b->re));
  b->nrow = b->re - b->rs, b->nglob = N, b->rev = PETSC_FALSE;
  PetscCall(PetscMalloc3(b->nrow + 1, &b->perm, b->nrow + 1, &b->first, b->nrow + 1, &b->last));
  PetscCall(Spans(pc, b, A));
  PetscCall(PetscMalloc4(b->size, &b->lo_all, b->size, &b->hi_all, b->size, &b->rs_all, b->size, &b->re_all));
  PetscCall(PetscMalloc1(4 * b->size, &all));
  mine[0] = b->lo, mine[1] = b->hi, mine[2] = b->rs, mine[3] = b->re;
  PetscCallMPI(MPI_Allgather(mine, 4, MPIU_INT, all, 4, MPIU_INT, comm));
  for (PetscMPIInt r = 0; r < b->size; r++)
    b->lo_all[r] = all[4 * r], b->hi_all[r] = all[4 * r + 1], b->rs_all[r] = all[4 * r + 2], b->re_all[r] = all[4 * r + 3];
  PetscCall(PetscFree(all));
  PetscCall(PetscMalloc4(b->size + 1, &b->ifs, b->size + 1, &b->ife, b->size + 2, &b->ioff, b->size, &b->nleft_all));
  b->ifs[0] = b->ife[0] = 0, b->ifs[b->size] = b->ife[b->size] = N, b->ioff[0] = b->ioff[1] = 0;
  for (PetscMPIInt r = 1; r < b->size; r++) { /* block r: the columns both r - 1 and r touch, around rs of r */
    b->ifs[r]      = PetscMin(b->lo_all[r], b->rs_all[r]);
    b->ife[r]      = PetscMax(b->hi_all[r - 1] + 1, b->rs_all[r]);
    b->ioff[r + 1] = b->ioff[r] + b->ife[r] - b->ifs[r];
  }
  b->nred = b->ioff[b->size];
  if (b->nred > HS_BAND_MAX_REDUCED) { /* its dense LU on rank 0: nred^2 doubles */
    PetscCall(PetscSNPrintf(b->why, sizeof b->why, "the interface system has %" PetscInt_FMT " unknowns, more than %d",
                            b->nred, HS_BAND_MAX_REDUCED));
    ok = PETSC_FALSE;
  }
  for (PetscMPIInt r = 0; r < b->size && ok; r++) /* a rank's rows may reach only its neighbours' interfaces */
    if (!(b->ife[r] < b->ifs[r + 1] && (r == 0 || b->lo_all[r] >= b->ifs[r]) &&
          (r == b->size - 1 || b->hi_all[r] < b->ife[r + 1]))) {
      PetscCall(PetscSNPrintf(b->why, sizeof b->why, "rank %d has %" PetscInt_FMT " rows, too few for the band (%" PetscInt_FMT
                              " below, %" PetscInt_FMT " above the diagonal)",
                              (int)r, b->re_all[r] - b->rs_all[r], b->kl, b->ku));
      ok = PETSC_FALSE;
    }
  b->isg = b->ife[b->rank], b->ieg = b->ifs[b->rank + 1];
  b->rev = (PetscBool)(b->reverse && b->size > 1 && b->rank == b->size - 1);
  if (ok)
    PetscCall(Orient(b));
  if (ok) {
    PetscInt W = b->W;
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &W, 1, MPIU_INT, MPI_MAX, comm));
    if (W > HS_BAND_MAX_WIDTH) {
      PetscCall(PetscSNPrintf(b->why, sizeof b->why, "the band is %" PetscInt_FMT " wide, more than %d (a free final time makes it dense)",
                              W, HS_BAND_MAX_WIDTH));
      ok = PETSC_FALSE;
    }
  }
  b->ok = ok;
  PetscFunctionReturn(0);
}

/* The refinement steps a solve takes: -pc_hsband_refine, or by default one only where the band is more than
 * half the matrix (a free T's dense row and column): there, without it, Newton stopped at the noise floor one
 * iteration later with 2.4x MUMPS' residual (test band). In a narrow band the staircase GEPP's residual is at
 * MUMPS' level without it (test band: pendulum, kepler, saddle, ncar with beta = 1e-9, shooting, 1 to 4
 * ranks), and the step costs a product and a second solve: kepler, N = 1e5, the same 5 Newton iterations and
 * J to 1e-14 in 3.8 s against 5.5 s. Derived from the option and the layout's kl, ku at each use, so an
 * option set after the layout counts. */
static PetscInt RefineSteps(const PC_HsBand *b)
{
  return b->refine >= 0 ? b->refine : (2 * (b->kl + b->ku + 1) > b->nglob ? 1 : 0);
}

/* The entries of a row piece have global columns map[cols[k]] (map given) or off + cols[k], oriented (Or)
 * as o0 + sg * global. Place loops over a piece with its branches on map and rev taken once
 * (HS_PIECE_LOOP), not per entry. */
#define HS_PIECE_LOOP(body) \
  do { \
    PetscInt o0 = b->rev ? b->nglob - 1 : 0, sg = b->rev ? -1 : 1, o1 = o0 + sg * off; \
    if (map) \
      for (PetscInt k = 0; k < n; k++) { \
        PetscInt c = o0 + sg * map[cols[k]]; \
        body; \
      } \
    else \
      for (PetscInt k = 0; k < n; k++) { \
        PetscInt c = o1 + sg * cols[k]; \
        body; \
      } \
  } while (0)

/* A row's values (n entries of a piece) into window row w, slot origin base: column c at slot c - base,
 * wrapped (the row's columns lie in [base, base + 2W)), or, left of is, in the left spike. */
static inline void Place(PC_HsBand *b, PetscInt w, PetscInt base, PetscInt n, const PetscInt *cols, PetscInt off,
                         const PetscInt *map, const PetscScalar *vals)
{
  PetscInt     W = b->W, is = b->is;
  PetscScalar *row = b->win + w * W, *left = b->wleft + w * b->nL;

  if (!b->nL) /* no left interface: every column is interior or right */
    HS_PIECE_LOOP(row[c - base < W ? c - base : c - base - W] = vals[k]);
  else
    HS_PIECE_LOOP(if (c < is) left[c - b->olo] = vals[k]; else row[c - base < W ? c - base : c - base - W] = vals[k]);
}
#undef HS_PIECE_LOOP

/* Row i (staircase order) of A, oriented, into window row w (zeroed first) and its spike, from its pieces
 * (the parts' CSR rows, or one MatGetRow); its extent from the layout: its interior-or-right columns lie
 * in [f, last] with f = max(first, is), and last - f < W (Orient), so in [base, base + 2W) for the
 * multiple of W base <= f (the caller's). The CSR rows come from memory (the matrix is far
 * larger than the caches) and the loads waited on them: with long rows (b->prefetch) it asks for row
 * i + HS_BAND_PREFETCH's first.
 * Measured (bench/README.md): kepler's elimination 12 % faster; the pendulum's rows (8 entries, a
 * cache line) were 4 % slower with it, hence the threshold. */
static PetscErrorCode LoadRow(PC_HsBand *b, Mat A, const HsAIJParts *p, PetscInt i, PetscInt w, PetscInt base)
{
  PetscInt           lr = b->perm[i], np = 0, n[2], off[2];
  const PetscInt    *cols[2], *map[2];
  const PetscScalar *vals[2];

  PetscFunctionBeginUser;
  PetscCall(PetscArrayzero(b->win + w * b->W, b->W));
  PetscCall(PetscArrayzero(b->wleft + w * b->nL, b->nL));
  b->slotrow[w] = i;
  b->ext[w]     = b->first[i] == PETSC_MAX_INT || b->last[lr] < b->is ? -1 : b->last[lr]; /* empty or all left: none */
  if (p->ok)
    for (; np < 2 && p->part[np]; np++) {
      PetscInt s0 = p->ia[np][lr];
      n[np] = p->ia[np][lr + 1] - s0, cols[np] = p->ja[np] + s0, vals[np] = p->aa[np] + s0;
      off[np] = p->cstart, map[np] = np ? p->colmap : NULL;
    }
  else {
    PetscCall(MatGetRow(A, b->rs + lr, &n[0], &cols[0], &vals[0]));
    off[0] = 0, map[0] = NULL, np = 1;
  }
  if (p->ok && b->prefetch && i + HS_BAND_PREFETCH < b->nrow) /* rows of several cache lines, read once */
    for (PetscInt q = 0; q < np; q++) {
      PetscInt l2 = b->perm[i + HS_BAND_PREFETCH], s2 = p->ia[q][l2], n2 = p->ia[q][l2 + 1] - s2;
      PetscPrefetchBlock(p->ja[q] + s2, n2, 0, PETSC_PREFETCH_HINT_NTA);
      PetscPrefetchBlock(p->aa[q] + s2, n2, 0, PETSC_PREFETCH_HINT_NTA);
    }
  for (PetscInt q = 0; q < np; q++)
    Place(b, w, base, n[q], cols[q], off[q], map[q], vals[q]);
  if (!p->ok)
    PetscCall(MatRestoreRow(A, b->rs + lr, &n[0], &cols[0], &vals[0]));
  PetscFunctionReturn(0);
}

/* r -= l p over n entries: distinct rows of the window (restrict: vectorized without a run-time overlap test) */
static inline void RowUpdate(PetscInt n, PetscScalar l, const PetscScalar *PETSC_RESTRICT p, PetscScalar *PETSC_RESTRICT r)
{
  for (PetscInt q = 0; q < n; q++)
    r[q] -= l * p[q];
}

/* Step c's U row, its n entries at off in its store: in place (uin[c]: the matrix' values, from their start, or
 * bottom-up from their end), else uval. */
static inline PetscScalar *URow(const PC_HsBand *b, PetscInt c, PetscCount off, PetscInt n)
{
  if (!b->uin[c])
    return b->uval + off;
  return b->rev ? b->ua + b->uan - off - n : b->ua + off;
}

/* Window row w's U row of step c (column j, slot s; length len) to the U store at *off, then its spike; in the
 * pivot's place its reciprocal pinv, which the elimination's multipliers and the back substitution multiply by (as
 * LAPACK's getf2 scales by it): one division per step instead of one per multiplier and per solved unknown, whose
 * latency the short rows waited on (factor_bench, 15 factorizations and solves: kepler N = 1e5 factorization
 * 0.182 -> 0.172 s, solve 0.0406 -> 0.0367 s; pendulum N = 2e5 solve 0.0160 -> 0.0145 s). */
static inline void StoreU(PC_HsBand *b, PetscInt c, PetscInt w, PetscInt s, PetscInt len, PetscScalar pinv,
                          PetscCount *off)
{
  PetscInt           W = b->W, n1 = PetscMin(len, W - s);
  const PetscScalar *p = b->win + w * W;
  PetscScalar       *u = URow(b, c, *off, len + b->nL);

  for (PetscInt q = 0; q < n1; q++) /* columns j ..: slots s .., then wrapped 0 .. */
    u[q] = p[s + q];
  for (PetscInt q = n1; q < len; q++)
    u[q] = p[q - n1];
  for (PetscInt q = 0; q < b->nL; q++)
    u[len + q] = b->wleft[w * b->nL + q];
  u[0] = pinv;
  b->ulen[c] = len, *off += len + b->nL;
}

/* Partial pivoting: the first of the active rows act[0 .. na) with the largest |col[act[a] W]| > 0, or -1. Two
 * running maxima (even and odd a), as the maximum's chain of compares was on each step's critical path; the
 * same row as one running maximum. */
static inline PetscInt Pivot(const PetscScalar *col, PetscInt W, const PetscInt *act, PetscInt na)
{
  PetscReal m0 = 0, m1 = 0;
  PetscInt  b0 = -1, b1 = -1, a = 0;

  for (; a + 1 < na; a += 2) {
    PetscReal v0 = PetscAbsScalar(col[act[a] * W]), v1 = PetscAbsScalar(col[act[a + 1] * W]);
    if (v0 > m0)
      m0 = v0, b0 = a;
    if (v1 > m1)
      m1 = v1, b1 = a + 1;
  }
  if (a < na && PetscAbsScalar(col[act[a] * W]) > m0)
    m0 = PetscAbsScalar(col[act[a] * W]), b0 = a;
  return m1 > m0 || (m1 == m0 && b1 < b0) ? b1 : b0; /* equal maxima: both found, or both -1 */
}

/* GEPP on the interior columns of the local rows of A, the rows loaded into the window as the elimination
 * reaches them; *zero: a column without a nonzero pivot. With t (a right-hand side in staircase order) its
 * row operations are done on t as they are found, in SolveFactored's order, and the multipliers are not
 * stored. */
static inline __attribute__((always_inline)) PetscErrorCode Eliminate(PC_HsBand *b, Mat A, PetscBool inplace,
                                                                         PetscScalar *t, PetscBool *zero)
{
  PetscInt  *act = b->act, na = 0, next = 0, nm = 0, nfree = b->R, W = b->W, nL = b->nL;
  PetscInt   lo = 0, hi = b->nrow - 1; /* in place: the first and last local rows not joined */
  PetscCount off[2] = {0, 0}; /* the U entries in uval, in place */
  HsAIJParts rp;

  PetscFunctionBeginUser;
  *zero = PETSC_FALSE;
  PetscCall(HsAIJPartsGet(A, PETSC_FALSE, &rp));
  b->ua = NULL, b->uan = 0;
  inplace = (PetscBool)(inplace && rp.ok);
  if (inplace) { /* the values are written in place (below), the matrix' state kept: Factor */
    b->ua = (PetscScalar *)rp.aa[0], b->uan = rp.ia[0][b->nrow];
    PetscCall(PetscArrayzero(b->joined, b->nrow));
  }
  b->prefetch = PETSC_FALSE;
  if (rp.ok) {
    PetscInt nnz = 0;
    for (PetscInt q = 0; q < 2 && rp.part[q]; q++)
      nnz += rp.ia[q][b->nrow] - rp.ia[q][0];
    b->prefetch = (PetscBool)(nnz >= HS_BAND_PREFETCH_NNZ * b->nrow);
  }
  for (PetscInt w = 0; w < b->R; w++)
    b->freeslot[w] = b->R - 1 - w;
  for (PetscInt c = 0, s = b->is % W; c < b->nI; c++, s = s + 1 < W ? s + 1 : 0) { /* s = j % W, no division */
    PetscInt     j = b->is + c, best, e, len, n1, pw;
    PetscScalar *p, *pl, pinv;
    for (; next < b->nrow && b->first[next] <= j; next++) { /* rows whose first column is j (or left of is) */
      PetscCall(LoadRow(b, A, &rp, next, b->freeslot[--nfree], j - s)); /* its first interior column is j */
      act[na++] = b->freeslot[nfree];
      b->joined[b->perm[next]] = 1;
    }
    for (; inplace && lo < b->nrow && b->joined[lo]; lo++)
      ;
    for (; inplace && hi >= 0 && b->joined[hi]; hi--)
      ;
    best = Pivot(b->win + s, W, act, na);
    b->mstart[c] = nm;
    if (best < 0) {
      *zero = PETSC_TRUE;
      break;
    }
    pw = act[best], act[best] = act[--na], b->piv[c] = b->slotrow[pw];
    p = b->win + pw * W, pl = b->wleft + pw * b->nL;
    e = b->ext[pw]; /* its last nonzero: ext (in [j, j + W)) bounds it, often a node too far */
    for (PetscInt se = s + e - j < W ? s + e - j : s + e - j - W; e > j && p[se] == 0; e--, se = se ? se - 1 : W - 1)
      ;
    len = PetscMin(e - j + 1, W), n1 = PetscMin(len, W - s), pinv = 1 / p[s];
    { /* the arrays in locals: an int store (ext, mrow) could otherwise alias b->nL and the pointers, reloaded per
         row (factor_bench, kepler N = 1e5, three alternating pairs of runs, minima: 0.172-0.174 s against
         0.177-0.187) */
      PetscScalar *PETSC_RESTRICT win = b->win, *PETSC_RESTRICT wleft = b->wleft, *PETSC_RESTRICT mval = b->mval;
      PetscInt *PETSC_RESTRICT    ext = b->ext, *PETSC_RESTRICT mrow = b->mrow;
      const PetscInt *PETSC_RESTRICT slotrow = b->slotrow;
      const PetscScalar              tp      = t ? t[b->piv[c]] : 0;
      for (PetscInt a = 0; a < na; a++) { /* (a branch-free list of the nonzero multipliers first, or whole
                                             circular rows, measured slower: kepler, N = 1e5) */
        PetscInt     w = act[a];
        PetscScalar *r = win + w * W, *rl = wleft + w * nL, l;
        if (r[s] == 0)
          continue;
        l = r[s] * pinv;
        RowUpdate(n1, l, p + s, r + s); /* the pivot row's columns j .. e: slots s .., then wrapped 0 .. */
        RowUpdate(len - n1, l, p, r);
        r[s]   = 0;
        ext[w] = PetscMax(ext[w], e);
        for (PetscInt q = 0; q < nL; q++)
          rl[q] -= l * pl[q];
        if (t)
          t[slotrow[w]] -= l * tp;
        else
          mrow[nm] = slotrow[w], mval[nm++] = l;
      }
    }
    { /* in place if it stays behind (bottom-up: ahead of) the values of the rows not joined */
      PetscCount end = off[1] + len + nL;
      b->uin[c]      = (char)(inplace && (b->rev ? b->uan - end >= rp.ia[0][hi + 1] : end <= rp.ia[0][lo]));
    }
    StoreU(b, c, pw, s, len, pinv, &off[(int)b->uin[c]]);
    b->freeslot[nfree++] = pw;
  }
  b->mstart[b->nI] = nm, b->utot = off[0] + off[1], b->unin = off[1];
  b->nleft = 0;
  if (!*zero) { /* the rows left active, and those that never joined (only interface columns) */
    for (PetscInt a = 0; a < na; a++)
      b->leftover[b->nleft] = b->slotrow[act[a]], b->leftslot[b->nleft++] = act[a];
    for (; next < b->nrow; next++) {
      PetscInt f = PetscMax(b->first[next], b->is);
      PetscCall(LoadRow(b, A, &rp, next, b->freeslot[--nfree], f - f % W));
      b->leftover[b->nleft] = next, b->leftslot[b->nleft++] = b->freeslot[nfree];
    }
  }
  PetscCall(HsAIJPartsRestore(&rp));
  PetscFunctionReturn(0);
}

/* Whether the elimination runs its AVX2 version (HS_BAND_AVX2): where built and the processor has AVX2, if
 * -pc_hsband_avx2 says so, by default where the window is at least HS_BAND_AVX2_MIN_WIDTH wide. Measured
 * (HsBandElim, N = 1e5, 1 rank, alternating runs): kepler (30 columns) 0.78-0.79 s against 0.84-1.00 s without;
 * the pendulum (10 columns) 0.14-0.15 s against 0.12-0.13 s, its short loops' peeling and remainders. */
static PetscBool UseAVX2(const PC_HsBand *b)
{
#if defined(HS_BAND_AVX2)
  if (!__builtin_cpu_supports("avx2"))
    return PETSC_FALSE;
  return b->avx2_set ? b->avx2 : (PetscBool)(b->W >= HS_BAND_AVX2_MIN_WIDTH);
#else
  (void)b;
  return PETSC_FALSE;
#endif
}

/* Eliminate for the build's target (the header's) and, inlined there, for AVX2 (HS_BAND_AVX2) */
static PetscErrorCode EliminateDefault(PC_HsBand *b, Mat A, PetscBool inplace, PetscScalar *t, PetscBool *zero)
{
  return Eliminate(b, A, inplace, t, zero);
}

#if defined(HS_BAND_AVX2)
__attribute__((target("avx2"))) static PetscErrorCode EliminateAVX2(PC_HsBand *b, Mat A, PetscBool inplace,
                                                                    PetscScalar *t, PetscBool *zero)
{
  return Eliminate(b, A, inplace, t, zero);
}
#endif

/* Reduced column of interface column c (oriented; in block r or r + 1 of this rank). */
static PetscInt RedCol(PC_HsBand *b, PetscInt c)
{
  PetscInt col = Or(b, c), r = col < b->isg ? b->rank : b->rank + 1;
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
    PetscInt w = b->leftslot[i];
    for (PetscInt q = 0; q < b->nL; q++)
      rows[i * b->nred + RedCol(b, b->olo + q)] = b->wleft[w * b->nL + q];
    for (PetscInt col = b->ie; col <= b->ohi; col++)
      rows[i * b->nred + RedCol(b, col)] = b->win[w * b->W + col % b->W];
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

/* The parity of the permutation [piv, leftover] of the local rows (1: odd), by its cycles. */
static PetscErrorCode LocalParity(PC_HsBand *b, PetscInt *parity)
{
  PetscInt *perm, odd = 0;
  char     *seen;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(b->nrow, &perm, b->nrow, &seen));
  for (PetscInt c = 0; c < b->nI; c++) /* the local rows in elimination order, through the staircase order */
    perm[c] = b->perm[b->piv[c]];
  for (PetscInt i = 0; i < b->nleft; i++)
    perm[b->nI + i] = b->perm[b->leftover[i]];
  for (PetscInt i = 0; i < b->nrow; i++)
    seen[i] = 0;
  for (PetscInt i = 0; i < b->nrow; i++) /* a cycle of length L is L - 1 transpositions */
    if (!seen[i]) {
      PetscInt L = 0;
      for (PetscInt j = i; !seen[j]; j = perm[j])
        seen[j] = 1, L++;
      odd ^= (L - 1) & 1;
    }
  PetscCall(PetscFree2(perm, seen));
  *parity = odd;
  PetscFunctionReturn(0);
}

/* m 2^e times f, m renormalized only when it leaves [2^-100, 2^100] (f's exponent is within +-1023). */
static void MulDet(PetscReal *m, PetscInt *e, PetscReal f)
{
  int x;

  *m *= f;
  if (PetscAbsReal(*m) > 0x1p100 || PetscAbsReal(*m) < 0x1p-100)
    *m = frexp(*m, &x), *e += x;
}

/* det A = det_m 2^det_e. With the rows reordered as [every rank's pivot rows, every rank's left-over rows]
 * and the columns as [every rank's interior, the interface blocks], the eliminated matrix is block upper
 * triangular: det A = sign(rows) sign(columns) prod U_cc det(reduced); the reduced matrix's LU (of its
 * transpose, on rank 0) gives its determinant. */
static PetscErrorCode Determinant(PC pc, PC_HsBand *b)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)pc);
  PetscReal  m = 1, mm, *all;
  PetscInt   e = 0, ee, odd = 0, *nI, inv = 0;
  PetscCount off[2] = {0, 0}; /* uval's, in place */
  int        x;

  PetscFunctionBeginUser;
  PetscCall(LocalParity(b, &odd));
  if (b->rev) /* its interior columns eliminated last to first: a reversal, nI (nI - 1) / 2 transpositions */
    odd ^= ((b->nI * (b->nI - 1)) / 2) & 1;
  for (PetscInt c = 0; c < b->nI; c++) { /* the pivots: U's diagonal */
    PetscInt n = b->ulen[c] + b->nL;
    MulDet(&m, &e, 1 / *URow(b, c, off[(int)b->uin[c]], n));
    off[(int)b->uin[c]] += n;
  }
  if (!b->rank && b->nred)
    for (PetscInt i = 0; i < b->nred; i++) {
      MulDet(&m, &e, b->red[i * b->nred + i]);
      odd ^= (PetscInt)(b->redpiv[i] != i + 1);
    }
  m = frexp(m, &x), e += x;
  PetscCall(PetscMalloc1(b->size, &nI));
  PetscCallMPI(MPI_Allgather(&b->nI, 1, MPIU_INT, nI, 1, MPIU_INT, comm));
  for (PetscMPIInt r = 0; r < b->size; r++) { /* the global moves: interfaces behind later interiors, left-over
                                                 rows behind later ranks' pivot rows */
    PetscInt later = 0;
    for (PetscMPIInt q = r + 1; q < b->size; q++)
      later += nI[q];
    inv ^= (((b->ife[r] - b->ifs[r]) & 1) & ((later + nI[r]) & 1)) ^ ((b->nleft_all[r] & 1) & (later & 1)); /* parity */
  }
  PetscCall(PetscFree(nI));
  if (!b->rank) /* the global moves, the same on every rank: counted once */
    odd += inv;
  if (odd & 1)
    m = -m;
  PetscCallMPI(MPI_Allreduce(&e, &ee, 1, MPIU_INT, MPI_SUM, comm));
  PetscCall(PetscMalloc1(b->size, &all));
  PetscCallMPI(MPI_Allgather(&m, 1, MPIU_REAL, all, 1, MPIU_REAL, comm));
  mm = 1;
  for (PetscMPIInt r = 0; r < b->size; r++) /* in rank order: the same product on every rank */
    mm = frexp(mm * all[r], &x), ee += x;
  PetscCall(PetscFree(all));
  b->det_m = mm, b->det_e = ee;
  PetscFunctionReturn(0);
}

/* Whether a factorization of pc stores U in place (HsPCBandSetInPlace): not with refinement or -info (their
 * products with the matrix: the refinement's residual, SNESNEWTONLS's check of the solve) or a reused
 * preconditioner (factors that outlive the values they would overwrite). */
static PetscBool InPlace(PC pc, const PC_HsBand *b)
{
  return (PetscBool)(b->inplace && !RefineSteps(b) && !pc->reusepreconditioner && !PetscLogPrintInfo);
}

/* The package a matrix factored in place was factored by (MatFactorGetSolverType; MatView says it) */
static PetscErrorCode FactoredBy(Mat A, MatSolverType *type)
{
  PetscFunctionBeginUser;
  (void)A;
  *type = "hsband";
  PetscFunctionReturn(0);
}

/* The factors of pc->pmat (its layout and arrays ready): the ranks' eliminations and the reduced system; with t
 * (deferred: a right-hand side in staircase order, loaded) its forward elimination along and no multipliers
 * kept. A zero pivot on any rank fails the PC. Collective.
 *
 * Why defer (-pc_hsband_defer, the default): a Newton step solves once with each factorization, and the
 * multipliers are half the factors (kepler, N = 1e5: 13.8 million of them, 12 bytes each, against 21.1 million
 * U entries of 8). Eliminating the right-hand side as the elimination goes neither stores them nor reads them
 * back, in the same operations and order as SolveFactored's forward pass (the same solution to the bit). A
 * second solve with the same factors (the continuation's tangent, or a caller's) factors again keeping them, and
 * from then on every factorization keeps them (b->keep): one extra elimination, once; not after a factorization
 * in place (InPlace), whose matrix is gone: an error (the continuation turns it off first). */
static PetscErrorCode Factor(PC pc, PC_HsBand *b, PetscScalar *t)
{
  PetscBool flags[2];

  PetscFunctionBeginUser;
  b->pending = PETSC_FALSE, b->have_l = (PetscBool)!t, b->det_done = PETSC_FALSE;
  PetscCall(PetscLogEventBegin(HS_BAND_ELIM, pc, 0, 0, 0));
#if defined(HS_BAND_AVX2)
  if (UseAVX2(b))
    PetscCall(EliminateAVX2(b, pc->pmat, InPlace(pc, b), t, &flags[0]));
  else
#endif
    PetscCall(EliminateDefault(b, pc->pmat, InPlace(pc, b), t, &flags[0]));
  PetscCall(PetscLogEventEnd(HS_BAND_ELIM, pc, 0, 0, 0));
  PetscCall(PetscLogEventBegin(HS_BAND_REDUCED, pc, 0, 0, 0));
  flags[1] = (PetscBool)(b->unin > 0); /* a zero pivot, U in place: on any rank */
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, flags, 2, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)pc)));
  if (flags[1]) { /* the matrix' values are (partly) the factors now, on some rank: PETSc's in-place mark (MatLUFactor's)
                        on every rank, which makes its products, views and value setting fail until its owner calls
                        MatSetUnfactored and fills it again; its state is kept, as these factors are still those of the
                        operator PCSetUp saw */
    pc->pmat->factortype = MAT_FACTOR_LU;
    PetscCall(PetscObjectComposeFunction((PetscObject)pc->pmat, "MatFactorGetSolverType_C", FactoredBy));
    PetscCall(PetscInfo(pc, "hsband: %" PetscCount_FMT " of %" PetscCount_FMT " U entries in place\n", b->unin, b->utot));
  }
  if (!flags[0])
    PetscCall(FactorReduced(pc, b, &flags[0]));
  PetscCall(PetscLogEventEnd(HS_BAND_REDUCED, pc, 0, 0, 0));
  b->failed = flags[0];
  if (b->failed)
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
  PetscFunctionReturn(0);
}

/*@ HsPCBandGetDeterminant - the determinant of the matrix factored by a PC of type hsband, m 2^e (as
    MUMPS' ICNTL(33)), computed from the factors on the first call after a factorization; known =
    PETSC_FALSE if pc is not hsband or not set up. Collective. @*/
PetscErrorCode HsPCBandGetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;
  PetscBool  band;

  PetscFunctionBeginUser;
  *known = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, "hsband", &band));
  if (!band || !pc->setupcalled || pc->failedreason || b->det_none)
    PetscFunctionReturn(0);
  if (b->pending) { /* asked before the deferred factorization's solve: factor now, keeping the multipliers for
                       that solve */
    PetscCall(Factor(pc, b, NULL));
    if (b->failed)
      PetscFunctionReturn(0);
  }
  if (!b->det_done && !b->inner)
    PetscCall(Determinant(pc, b));
  b->det_done = PETSC_TRUE;
  *m = b->det_m, *e = b->det_e, *known = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Outside the limits: MUMPS LU of the same matrix (pivot threshold 1, the determinant asked for: the
 * branch-point test reads it), b->inner. */
static PetscErrorCode SetUpInner(PC pc, PC_HsBand *b)
{
  Mat            F;
  PCFailedReason fr;
  PetscBool      known = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (!b->inner) {
    PetscCall(PetscInfo(pc, "hsband: %s; MUMPS LU instead\n", b->why));
    PetscCall(PCCreate(PetscObjectComm((PetscObject)pc), &b->inner));
    PetscCall(PCSetType(b->inner, PCLU));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(PCFactorSetMatSolverType(b->inner, MATSOLVERMUMPS));
#endif
  }
  PetscCall(PCSetOperators(b->inner, pc->mat, pc->pmat));
  PetscCall(HsPCGetMumpsFactor(b->inner, &F));
  if (F) {
    PetscCall(HsMumpsConfigure(F, HS_MUMPS_ICNTL14_DEFAULT));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
#endif
  }
  PetscCall(PCSetUp(b->inner));
  PetscCall(PCGetFailedReason(b->inner, &fr));
  if (fr)
    PetscCall(PCSetFailedReason(pc, fr));
  else if (F)
    PetscCall(HsMumpsDeterminant(F, &b->det_m, &b->det_e, &known));
  b->det_none = (PetscBool)!known;
  PetscFunctionReturn(0);
}

/* Whether a factorization of pc waits for its first solve (Factor's head): -pc_hsband_defer, no second solve seen,
 * no refinement (which solves again), and not a reused preconditioner (a later solve may come after the matrix
 * changed, and the multipliers could not be made again). */
static PetscBool Defers(PC pc, const PC_HsBand *b)
{
  return (PetscBool)(b->defer && !b->keep && !RefineSteps(b) && !pc->reusepreconditioner);
}

static PetscErrorCode PCSetUp_HsBand(PC pc)
{
  PC_HsBand       *b = (PC_HsBand *)pc->data;
  PetscObjectState state;

  PetscFunctionBeginUser;
  b->failed = PETSC_FALSE, b->det_done = PETSC_FALSE, b->det_none = PETSC_FALSE; /* the determinant: on demand */
  b->pending = PETSC_FALSE, b->have_l = PETSC_FALSE;
  pc->failedreason = PC_NOERROR; /* as PETSc's own factorizations do: a failure is this setup's, not forever */
  PetscCheck(pc->pmat->factortype == MAT_FACTOR_NONE, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE,
             "-pc_type hsband: the matrix holds the factors of an in-place factorization (HsPCBandSetInPlace): fill it "
             "again (MatSetUnfactored, then its values) before it is factored again");
  PetscCall(MatGetNonzeroState(pc->pmat, &state));
  if (b->laid != pc->pmat || b->laid_state != state) { /* a new pattern: a new layout (else the last one's) */
    PetscCall(Free(b, PETSC_FALSE));
    PetscCall(PetscLogEventBegin(HS_BAND_LAYOUT, pc, 0, 0, 0));
    PetscCall(Layout(pc, b, pc->pmat));
    PetscCall(PetscLogEventEnd(HS_BAND_LAYOUT, pc, 0, 0, 0));
    PetscCall(PetscObjectReference((PetscObject)pc->pmat));
    b->laid = pc->pmat, b->laid_state = state;
  }
  if (!b->ok) {
    PetscCheck(b->fallback, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
               "-pc_type hsband: %s: use fewer ranks, a larger N, or MUMPS (-hs_linear_solver mumps; or "
               "-pc_hsband_fallback true)", b->why);
    PetscCall(SetUpInner(pc, b));
    PetscFunctionReturn(0);
  }
  PetscCall(PCDestroy(&b->inner));
  PetscCall(Allocate(b));
  PetscCall(PetscObjectStateGet((PetscObject)pc->pmat, &b->fstate));
  b->pending = Defers(pc, b);
  if (!b->pending)
    PetscCall(Factor(pc, b, NULL));
  PetscFunctionReturn(0);
}

/* b->t = x in the staircase row order */
static PetscErrorCode LoadRHS(PC_HsBand *b, Vec xv)
{
  const PetscScalar *xa;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(xv, &xa));
  for (PetscInt i = 0; i < b->nrow; i++)
    b->t[i] = xa[b->perm[i]];
  PetscCall(VecRestoreArrayRead(xv, &xa));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x from b->t, forward-eliminated: the reduced system's solve on rank 0 (its right-hand side the
 * left-over rows'), the interface values to every rank, the back substitution. Collective. */
static PetscErrorCode Complete(PC pc, PC_HsBand *b, Vec yv)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);
  PetscScalar *ya, *t = b->t, *red = NULL, *xr = b->xr;
  PetscCount   off[2] = {b->utot - b->unin, b->unin}; /* uval's, in place */
  PetscMPIInt *cnt = NULL, *dsp = NULL, n;

  PetscFunctionBeginUser;
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
    for (PetscInt col = b->olo; col < b->is; col++)
      b->x[col - b->olo] = xr[RedCol(b, col)];
    for (PetscInt col = b->ie; col <= b->ohi; col++)
      b->x[col - b->olo] = xr[RedCol(b, col)];
  }
  for (PetscInt c = b->nI - 1; c >= 0; c--) { /* back substitution with U, streamed backwards */
    PetscInt           j = b->is + c, len = b->ulen[c], n = len + b->nL;
    const PetscScalar *u = URow(b, c, off[(int)b->uin[c]] -= n, n), *xj = b->x + j - b->olo;
    PetscScalar        v = t[b->piv[c]]; /* in column order, as one sum: four partial sums took 10 % off this loop
                                            but moved a free T's residual at the noise floor 7x (test band) */
    for (PetscInt q = 1; q < len; q++)
      v -= u[q] * xj[q];
    for (PetscInt q = 0; q < b->nL; q++)
      v -= u[len + q] * b->x[q];
    b->x[j - b->olo] = v * u[0];
  }
  PetscCall(VecGetArray(yv, &ya));
  for (PetscInt i = 0; i < b->nrow; i++)
    ya[i] = b->x[Or(b, b->rs + i) - b->olo];
  PetscCall(VecRestoreArray(yv, &ya));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x by the factors, multipliers included */
static PetscErrorCode SolveFactored(PC pc, Vec xv, Vec yv)
{
  PC_HsBand   *b = (PC_HsBand *)pc->data;
  PetscScalar *t = b->t;

  PetscFunctionBeginUser;
  PetscCall(LoadRHS(b, xv));
  for (PetscInt c = 0; c < b->nI; c++) { /* forward: the row operations of the elimination */
    const PetscScalar tp = t[b->piv[c]];   /* no row of step c is its pivot row: independent updates */
    for (PetscInt m = b->mstart[c]; m < b->mstart[c + 1]; m++)
      t[b->mrow[m]] -= b->mval[m] * tp;
  }
  PetscCall(Complete(pc, b, yv));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x, improved by -pc_hsband_refine steps of iterative refinement (y += A^{-1} (x - A y)) */
static PetscErrorCode PCApply_HsBand(PC pc, Vec xv, Vec yv)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;
  Vec        r, d;

  PetscFunctionBeginUser;
  if (b->inner) {
    PetscCall(PCApply(b->inner, xv, yv));
    PetscFunctionReturn(0);
  }
  if (b->pending) { /* the deferred factorization, this right-hand side eliminated along (Factor's head) */
    PetscCall(LoadRHS(b, xv));
    PetscCall(Factor(pc, b, b->t));
    if (!b->failed) {
      PetscCall(PetscLogEventBegin(HS_BAND_SOLVE, pc, 0, 0, 0));
      PetscCall(Complete(pc, b, yv)); /* no refinement when deferred (PCSetUp) */
      PetscCall(PetscLogEventEnd(HS_BAND_SOLVE, pc, 0, 0, 0));
      PetscFunctionReturn(0);
    }
  } else if (!b->failed && !b->have_l) { /* a second solve: factor again, keeping the multipliers from now on */
    PetscObjectState state;
    PetscCall(PetscObjectStateGet((PetscObject)pc->pmat, &state));
    PetscCheck(state == b->fstate, PetscObjectComm((PetscObject)pc), PETSC_ERR_ORDER,
               "-pc_type hsband: a second solve with factors whose matrix has changed since they were made (a reused "
               "preconditioner): the deferred factorization kept no multipliers; use -pc_hsband_defer false");
    PetscCheck(pc->pmat->factortype == MAT_FACTOR_NONE, PetscObjectComm((PetscObject)pc), PETSC_ERR_ORDER,
               "-pc_type hsband: a second solve with factors made in place (HsPCBandSetInPlace) without their "
               "multipliers: the matrix is gone; ask for the determinant before the first solve, or factor in place "
               "only where each factorization serves one solve (-hs_in_place false)");
    PetscCall(PetscInfo(pc, "hsband: a second solve with one factorization; the multipliers are kept from now on\n"));
    b->keep = PETSC_TRUE;
    PetscCall(Factor(pc, b, NULL));
  }
  if (b->failed) { /* as PETSc's factorizations do after a failure: no solution (Newton sees a failed solve) */
    PetscCall(VecSetInf(yv));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscLogEventBegin(HS_BAND_SOLVE, pc, 0, 0, 0));
  PetscCall(SolveFactored(pc, xv, yv));
  PetscCall(PetscLogEventEnd(HS_BAND_SOLVE, pc, 0, 0, 0));
  if (!RefineSteps(b))
    PetscFunctionReturn(0);
  if (!b->r)
    PetscCall(VecDuplicate(xv, &b->r));
  if (!b->d)
    PetscCall(VecDuplicate(xv, &b->d));
  r = b->r, d = b->d;
  for (PetscInt i = 0; i < RefineSteps(b); i++) {
    PetscCall(MatMult(pc->pmat, yv, r));
    PetscCall(VecAYPX(r, -1, xv));
    PetscCall(PetscLogEventBegin(HS_BAND_SOLVE, pc, 0, 0, 0));
    PetscCall(SolveFactored(pc, r, d));
    PetscCall(PetscLogEventEnd(HS_BAND_SOLVE, pc, 0, 0, 0));
    PetscCall(VecAXPY(yv, 1, d));
  }

  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_HsBand(PC pc, PetscOptionItems *PetscOptionsObject)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;

  PetscFunctionBeginUser;
  PetscOptionsHeadBegin(PetscOptionsObject, "Banded LU (hamshoot)");
  PetscCall(PetscOptionsInt("-pc_hsband_refine", "steps of iterative refinement after each solve (each: a product "
                            "with the matrix and a solve with the factors; -1: one where the band is more than half "
                            "the matrix, a free T's, none in a narrow band)", "PCHSBAND", b->refine, &b->refine, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_reverse_last", "the last rank eliminates bottom-up (no spike: with 2 ranks "
                             "neither rank has one)", "PCHSBAND", b->reverse, &b->reverse, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_defer", "factor at the first solve, its right-hand side eliminated along and "
                             "the multipliers (half the factors) not kept; a second solve with the same factors "
                             "factors again keeping them, as every factorization after it", "PCHSBAND", b->defer,
                             &b->defer, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_avx2", "the elimination's AVX2 version where built and the processor has "
                             "AVX2 (the same results to the bit; default: for rows at least 24 columns wide)", "PCHSBAND",
                             b->avx2, &b->avx2, &b->avx2_set));
  PetscCall(PetscOptionsBool("-pc_hsband_fallback", "MUMPS LU when a rank has too few rows for the band or the band is "
                             "too wide (else an error)", "PCHSBAND", b->fallback, &b->fallback, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode PCView_HsBand(PC pc, PetscViewer viewer)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;
  PetscBool  ascii;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii && b->inner) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  banded LU (hamshoot) not used: %s; MUMPS LU instead:\n", b->why));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PCView(b->inner, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  } else if (ascii) {
    const char *mult = Defers(pc, b) ? "factored at the first solve, its right-hand side along (multipliers not kept)"
                                     : "multipliers kept";
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  banded LU with partial pivoting (hamshoot): %" PetscInt_FMT " below, %" PetscInt_FMT
                                     " above the diagonal; rows in staircase order, %" PetscInt_FMT " columns wide "
                                     "(rank 0)%s; %s; reduced system of %" PetscInt_FMT
                                     " interface unknowns on rank 0; %" PetscInt_FMT " refinement step(s)%s\n",
                                     b->kl, b->ku, b->W, b->reverse && b->size > 1 ? "; the last rank bottom-up" : "",
                                     mult, b->nred, RefineSteps(b), b->refine < 0 ? " (by the band's width)" : ""));
    if (pc->setupcalled && !b->pending)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  U: %" PetscCount_FMT " entries on rank 0, %" PetscCount_FMT " of them in "
                                       "place (in the matrix' values); the elimination's %s version\n", b->utot, b->unin,
                                       UseAVX2(b) ? "AVX2" : "default"));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_HsBand(PC pc)
{
  PetscFunctionBeginUser;
  PetscCall(PCDestroy(&((PC_HsBand *)pc->data)->inner));
  PetscCall(Free((PC_HsBand *)pc->data, PETSC_TRUE));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

/*@ HsPCBandSetInPlace - whether the factorizations of pc (of type hsband; else nothing) store U in the
    matrix' own values, behind the rows the elimination has read (as long as it fits there; the rest goes to the
    PC's store): the first touch and the memory of U saved (kepler, N = 1e6: 1.7 GB of 5 GB per rank). The matrix
    (an AIJ one) is then marked factored (PETSc's MatLUFactor in-place mark): nothing may multiply by it, view it
    or set its values until its owner calls MatSetUnfactored and fills in every value again, as the
    transcription's Jacobian does. Not with refinement, -info or a reused preconditioner (InPlace). bvp/
    internal: HsSolverSolveNewton decides it (-hs_in_place). Not collective. @*/
PetscErrorCode HsPCBandSetInPlace(PC pc, PetscBool flg)
{
  PetscBool band;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, "hsband", &band));
  if (band)
    ((PC_HsBand *)pc->data)->inplace = flg;
  PetscFunctionReturn(0);
}

/*@ HsPCBandGetInner - the MUMPS LU hsband factors by instead, outside its limits (NULL when it factors
    itself; after PCSetUp). bvp/ internal. Not collective. @*/
PetscErrorCode HsPCBandGetInner(PC pc, PC *inner)
{
  PetscFunctionBeginUser;
  *inner = ((PC_HsBand *)pc->data)->inner;
  PetscFunctionReturn(0);
}

/* The PC's constructor (PCRegister in HsInitializePackage). */
PetscErrorCode PCCreate_HsBand(PC pc)
{
  PC_HsBand *b;

  PetscFunctionBeginUser;
  PetscCall(RegisterEvents());
  PetscCall(PetscNew(&b));
  b->refine               = PETSC_DECIDE; /* by the band's width (RefineSteps) */
  b->fallback             = PETSC_TRUE;
  b->reverse              = PETSC_TRUE;
  b->defer                = PETSC_TRUE;
  pc->data                = b;
  pc->ops->setfromoptions = PCSetFromOptions_HsBand;
  pc->ops->setup   = PCSetUp_HsBand;
  pc->ops->apply   = PCApply_HsBand;
  pc->ops->view    = PCView_HsBand;
  pc->ops->destroy = PCDestroy_HsBand;
  PetscFunctionReturn(0);
}
