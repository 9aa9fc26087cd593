/* hamshoot: PC hsband's kernel (the method: pcband.c's head): the layout of a pattern (spans, staircase order,
 * interfaces), the elimination of each rank's interior (compiled twice: the default and an AVX2 version), the
 * reduced system on rank 0, the determinant, and the solve's forward and back passes. pcband.c is the PC glue
 * (set-up, apply, options, view, the composed functions) around it. */
#include "bandimpl.h"

/* The arrays of the layout (every setup), or with all, also the factors' (when the sizes change, and at
 * the end). */
PetscErrorCode HsBandFree(PC_HsBand *b, PetscBool all)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree4(b->lo_all, b->hi_all, b->rs_all, b->re_all));
  PetscCall(PetscFree4(b->ifs, b->ife, b->ioff, b->nleft_all));
  PetscCall(PetscFree3(b->perm, b->first, b->last));
  PetscCall(MatDestroy(&b->laid));
  b->bdone = PETSC_FALSE;
  if (!all)
    PetscFunctionReturn(0);
  PetscCall(PetscFree2(b->win, b->wleft));
  PetscCall(PetscFree5(b->piv, b->mstart, b->leftover, b->x, b->joined));
  PetscCall(PetscFree2(b->mrow, b->mval));
  PetscCall(PetscFree(b->uval));
  PetscCall(PetscFree2(b->t, b->act));
  PetscCall(PetscFree5(b->slotrow, b->freeslot, b->leftslot, b->ulen, b->uin));
  PetscCall(PetscFree2(b->spk, b->uspk));
  PetscCall(VecDestroy(&b->r));
  PetscCall(VecDestroy(&b->d));
  PetscCall(HsBandReducedFree(b));
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
PetscErrorCode HsBandAllocate(PC_HsBand *b)
{
  PetscInt   nm, R, want[7];
  PetscCount nu;
  PetscBool  same;

  PetscFunctionBeginUser;
  if (!b->bdone) /* once a layout: kepler conserving4, N = 124, 0.86M instructions of 87M in five setups */
    Bounds(b, &b->bnm, &b->bR, &b->bnu);
  b->bdone = PETSC_TRUE, nm = b->bnm, R = b->bR, nu = b->bnu;
  b->S = (2 * b->W + 3) / 4 * 4; /* whole AVX2 vectors (ZeroRow) */
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
  PetscCall(PetscMalloc2(R * b->S, &b->win, R * b->nL + 1, &b->wleft));
  PetscCall(PetscMalloc5(b->nI + 1, &b->piv, b->nI + 1, &b->mstart, b->nrow + 1, &b->leftover, b->ohi - b->olo + 1, &b->x,
                         b->nrow + 1, &b->joined));
  PetscCall(PetscFree2(b->t, b->act));
  PetscCall(PetscMalloc2(b->nrow + 1, &b->t, R + 1, &b->act));
  PetscCall(PetscFree5(b->slotrow, b->freeslot, b->leftslot, b->ulen, b->uin));
  PetscCall(PetscMalloc5(R + 1, &b->slotrow, R + 1, &b->freeslot, R + 1, &b->leftslot, b->nI + 1, &b->ulen, b->nI + 1, &b->uin));
  PetscCall(PetscFree2(b->spk, b->uspk));
  PetscCall(PetscMalloc2(R + 1, &b->spk, b->nI + 1, &b->uspk));
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
    if (rp.ok && !rp.part[1] && rp.ia[0][i + 1] > rp.ia[0][i]) /* one part, its columns sorted: the row's ends */
      f = rp.cstart + rp.ja[0][rp.ia[0][i]], l = rp.cstart + rp.ja[0][rp.ia[0][i + 1] - 1];
    else
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
PetscErrorCode HsBandLayout(PC pc, PC_HsBand *b, Mat A)
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
PetscInt HsBandRefineSteps(const PC_HsBand *b)
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

/* A row's values (n entries of a piece) into window row w: column c at slot c - base (the row's columns lie in
 * [base, base + S)), or, left of is, in the left spike. One rank's rows (no column map, not reversed, no spike)
 * have a loop of their own, without HS_PIECE_LOOP's orientation: kepler's row loads had taken 13 instructions an
 * entry (bench/README.md, issue 43's eighth session). */
static inline void Place(PC_HsBand *b, PetscInt w, PetscInt base, PetscInt n, const PetscInt *cols, PetscInt off,
                         const PetscInt *map, const PetscScalar *vals)
{
  PetscInt     is = b->is;
  PetscScalar *row = b->win + w * b->S, *left = b->wleft + w * b->nL;

  if (!b->nL && !map && !b->rev) {
    PetscInt o = off - base;
    if (n && cols[n - 1] - cols[0] == n - 1) /* consecutive columns (kepler's rows): a copy */
      memcpy(row + o + cols[0], vals, (size_t)n * sizeof(PetscScalar));
    else
      for (PetscInt k = 0; k < n; k++)
        row[o + cols[k]] = vals[k];
  } else if (!b->nL) /* no left interface: every column is interior or right */
    HS_PIECE_LOOP(row[c - base] = vals[k]);
  else
    HS_PIECE_LOOP(if (c < is) left[c - b->olo] = vals[k]; else row[c - base] = vals[k]);
}
#undef HS_PIECE_LOOP

#if defined(HS_BAND_AVX2_INTRIN)
/* n (a multiple of 4) zeros at r in AVX2 stores, inline: a memset call took 94 instructions for a kepler row (1.5W = 36
 * doubles on average) */
static inline __attribute__((target("avx2"))) void ZeroRowAVX2(PetscScalar *r, PetscInt n)
{
  for (PetscInt q = 0; q < n; q += 4)
    _mm256_storeu_pd(r + q, _mm256_setzero_pd());
}
#endif

/* Row i (staircase order) of A, oriented, into window row w (its slots from z0 on zeroed first: those before
 * z0 are never read again) and its spike, from its pieces (the parts' CSR rows, or one MatGetRow); its
 * extent from the layout: its interior-or-right columns lie in [f, last] with f = max(first, is), and
 * last - f < W (Orient), so in [base, base + S) for the window's base (the caller's: f - base < W, or at the
 * end of the elimination the right interface). The CSR rows come from memory (the matrix is far
 * larger than the caches) and the loads waited on them: with long rows (b->prefetch) it asks for row
 * i + HS_BAND_PREFETCH's first.
 * Measured (bench/README.md): kepler's elimination 12 % faster; the pendulum's rows (8 entries, a
 * cache line) were 4 % slower with it, hence the threshold. */
static inline __attribute__((always_inline)) PetscErrorCode LoadRow(PC_HsBand *b, Mat A, const HsAIJParts *p, PetscInt i,
                                                                       PetscInt w, PetscInt base, PetscInt z0, const int vec)
{
  PetscInt           lr = b->perm[i], np = 0, n[2], off[2];
  const PetscInt    *cols[2], *map[2];
  const PetscScalar *vals[2];

  PetscFunctionBeginUser;
#if defined(HS_BAND_AVX2_INTRIN)
  if (vec)
    ZeroRowAVX2(b->win + w * b->S + z0 / 4 * 4, b->S - z0 / 4 * 4); /* (slots before z0: free to overwrite) */
  else
#endif
    PetscCall(PetscArrayzero(b->win + w * b->S + z0, b->S - z0));
  PetscCall(PetscArrayzero(b->wleft + w * b->nL, b->nL));
  b->slotrow[w] = i;
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
  b->spk[w] = 0;
  for (PetscInt q = 0; q < b->nL && !b->spk[w]; q++)
    b->spk[w] = (char)(b->wleft[w * b->nL + q] != 0);
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

#if defined(HS_BAND_AVX2_INTRIN)
/* RowUpdate in AVX2's 4 doubles, the last 1 to 3 entries by SSE2's 2 and a scalar instead of gcc's remainder and
 * peeling (kepler's updates are 20 entries long on average; AVX2's masked stores, tried, are slow on AMD): the
 * same multiplication and subtraction per entry (no FMA), so the same bits. */
static inline __attribute__((target("avx2"))) void RowUpdateAVX2(PetscInt n, PetscScalar l, const PetscScalar *PETSC_RESTRICT p,
                                                                 PetscScalar *PETSC_RESTRICT r)
{
  const __m256d vl = _mm256_set1_pd(l);
  PetscInt      q  = 0;

  for (; q + 4 <= n; q += 4)
    _mm256_storeu_pd(r + q, _mm256_sub_pd(_mm256_loadu_pd(r + q), _mm256_mul_pd(vl, _mm256_loadu_pd(p + q))));
  if (q + 2 <= n) {
    _mm_storeu_pd(r + q, _mm_sub_pd(_mm_loadu_pd(r + q), _mm_mul_pd(_mm256_castpd256_pd128(vl), _mm_loadu_pd(p + q))));
    q += 2;
  }
  if (q < n)
    r[q] -= l * p[q];
}
#endif

/* Step c's U row, its n entries at off in its store: in place (uin[c]: the matrix' values, from their start, or
 * bottom-up from their end), else uval. */
static inline PetscScalar *URow(const PC_HsBand *b, PetscInt c, PetscCount off, PetscInt n)
{
  if (!b->uin[c])
    return b->uval + off;
  return b->rev ? b->ua + b->uan - off - n : b->ua + off;
}

/* Step c's U row's entries in the U store: its len, and the spike's nL if it has a nonzero spike (else none: a
 * middle rank's U rows are then as long as an end rank's, and the solve streams no zeros; kepler, 16 ranks on a
 * 16-core node: the middle ranks' elimination had taken 2.1x an end rank's time for 1.5x its flops) */
static inline PetscInt ULen(const PC_HsBand *b, PetscInt c)
{
  return b->ulen[c] + (b->uspk[c] ? b->nL : 0);
}

/* Window row w's U row of step c (column j, slot s; length len) to the U store at *off, then its spike if nonzero; in the
 * pivot's place its reciprocal pinv, which the elimination's multipliers and the back substitution multiply by (as
 * LAPACK's getf2 scales by it): one division per step instead of one per multiplier and per solved unknown, whose
 * latency the short rows waited on (factor_bench, 15 factorizations and solves: kepler N = 1e5 factorization
 * 0.182 -> 0.172 s, solve 0.0406 -> 0.0367 s; pendulum N = 2e5 solve 0.0160 -> 0.0145 s). */
static inline void StoreU(PC_HsBand *b, PetscInt c, PetscInt w, PetscInt s, PetscInt len, PetscScalar pinv,
                          PetscCount *off)
{
  const PetscScalar *p  = b->win + w * b->S + s;
  PetscInt           nL = b->spk[w] ? b->nL : 0;
  PetscScalar       *u  = URow(b, c, *off, len + nL);

  for (PetscInt q = 0; q < len; q++) /* columns j .. j + len - 1 */
    u[q] = p[q];
  for (PetscInt q = 0; q < nL; q++)
    u[len + q] = b->wleft[w * b->nL + q];
  u[0] = pinv;
  b->ulen[c] = len, b->uspk[c] = b->spk[w], *off += len + nL;
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

/* Threshold partial pivoting that keeps the spike narrow in use (a rank with a left interface): the largest
 * |col[act[a] W]| among the rows whose spike is zero (spk) if it is at least tol times the largest of all,
 * else the largest of all; -1 if none is nonzero. A pivot row with a zero spike leaves the spikes of the rows it
 * updates as they are: the spike's fill then stays in the rows that touch the left interface (most become the
 * left-over rows) instead of spreading to every later row, and the updates skip it. Measured (kepler, N = 20000,
 * 4 ranks, -info): a middle rank's elimination did 1.05e6 row updates, each also over the spike (18 entries),
 * against rank 0's 0.69e6 without one: 2.9x its flops (-log_view's max/min). Growth per step is bounded by
 * 1 + 1/tol instead of 2 (MUMPS' default threshold is 0.01; LAPACK's is 1); tol = 1 is partial pivoting among
 * the largest (ties to the rows without spike). */
static inline PetscInt PivotSpike(const PetscScalar *col, PetscInt W, const PetscInt *act, const char *spk, PetscInt na,
                                  PetscReal tol)
{
  PetscReal mall = 0, mpure = 0;
  PetscInt  ball = -1, bpure = -1;

  for (PetscInt a = 0; a < na; a++) {
    PetscReal v = PetscAbsScalar(col[act[a] * W]);
    if (v > mall)
      mall = v, ball = a;
    if (!spk[act[a]] && v > mpure)
      mpure = v, bpure = a;
  }
  return bpure >= 0 && mpure >= tol * mall ? bpure : ball;
}

/* Whether LoadRow prefetches: the rows' parts read in place, HS_BAND_PREFETCH_NNZ entries a row on average, and
 * large enough not to stay in the caches from the Jacobian's assembly (kepler conserving4, N = 124: 1 MB, whose
 * prefetches were 1 % of the solve's instructions for nothing) */
static PetscBool Prefetches(const HsAIJParts *rp, PetscInt nrow)
{
  PetscInt nnz = 0;

  for (PetscInt q = 0; rp->ok && q < 2 && rp->part[q]; q++)
    nnz += rp->ia[q][nrow] - rp->ia[q][0];
  return (PetscBool)(rp->ok && nnz >= HS_BAND_PREFETCH_NNZ * nrow &&
                     (double)nnz * (sizeof(PetscScalar) + sizeof(PetscInt)) >= HS_BAND_PREFETCH_BYTES);
}

/* An elimination's flops (nupd row updates of lupd entries in all, nspk of them also over the spike; with t, its
 * right-hand side along) to -log_view, and what it did to -info */
static PetscErrorCode LogElimination(const PC_HsBand *b, PetscCount nupd, PetscCount lupd, PetscCount nspk, PetscBool t)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogFlops(2.0 * lupd + 2.0 * b->nL * nspk + (1 + (t ? 2 : 0)) * nupd + b->nI)); /* and reciprocals */
  PetscCall(PetscInfo(NULL,
                      "hsband: rank %d eliminated %" PetscInt_FMT " columns of %" PetscInt_FMT " rows: %" PetscCount_FMT
                      " row updates of %.1f entries on average, %" PetscCount_FMT " with the spike (%" PetscInt_FMT
                      " wide), window %" PetscInt_FMT "\n",
                      b->rank, b->nI, b->nrow, nupd, nupd ? (double)lupd / nupd : 0.0, nspk, b->nL, b->W));
  PetscFunctionReturn(0);
}

/* The window moves on by W: the active rows' slots W .. S - 1 to 0 .. W - 1 (those before are columns already
 * eliminated, zero), and the rest zeroed. Once every W steps: an update is then one loop over contiguous slots,
 * where a circular window of W had split it in two (bench/README.md, issue 43's eighth session). */
static void Shift(PC_HsBand *b, const PetscInt *act, PetscInt na)
{
  PetscInt W = b->W, S = b->S;

  for (PetscInt a = 0; a < na; a++) {
    PetscScalar *r = b->win + act[a] * S;
    for (PetscInt q = 0; q < W; q++)
      r[q] = r[q + W];
    for (PetscInt q = W; q < S; q++)
      r[q] = 0;
  }
  b->wbase += W;
}

/* Step j's row updates (Eliminate's): the active rows act[0 .. na) with a nonzero in column j (slot s) less l
 * times the pivot row pw (its columns j .. j + len - 1), the multipliers l = r_j pinv to t (its value tp at the
 * pivot row) or, without t, stored (*nm). The number of rows updated. Always inlined into each call with t and
 * without, so that the test of t leaves the loop. */
static inline __attribute__((always_inline)) PetscInt UpdateRows(PC_HsBand *b, const PetscInt *act, PetscInt na, PetscInt s,
                                                                 PetscInt len, PetscInt pw, PetscScalar pinv,
                                                                 PetscScalar *t, PetscScalar tp, PetscInt *nm, const int vec)
{
  /* the arrays in locals: an int store (mrow) could otherwise alias b->nL and the pointers, reloaded per
     row (factor_bench, kepler N = 1e5, three alternating pairs of runs, minima: 0.172-0.174 s against
     0.177-0.187) */
  PetscScalar *PETSC_RESTRICT    win = b->win, *PETSC_RESTRICT wleft = b->wleft, *PETSC_RESTRICT mval = b->mval;
  PetscInt *PETSC_RESTRICT       mrow = b->mrow;
  const PetscInt *PETSC_RESTRICT slotrow = b->slotrow;
  char *PETSC_RESTRICT           spk     = b->spk;
  const char                     pspk    = spk[pw];
  const PetscScalar             *p = win + pw * b->S + s, *pl = wleft + pw * b->nL;
  PetscInt                       S = b->S, nL = b->nL, m = *nm, nu = 0;

  for (PetscInt a = 0; a < na; a++) { /* (a branch-free list of the nonzero multipliers first, or whole
                                         circular rows, measured slower: kepler, N = 1e5) */
    PetscInt     w = act[a];
    PetscScalar *r = win + w * S + s, *rl = wleft + w * nL, l;
    if (r[0] == 0)
      continue;
    l = r[0] * pinv;
    nu++;
#if defined(HS_BAND_AVX2_INTRIN)
    if (vec)
      RowUpdateAVX2(len, l, p, r); /* the pivot row's columns j .. e: slots s .. */
    else
#endif
      RowUpdate(len, l, p, r);
    r[0]   = 0;
    if (pspk) { /* a pivot row with a spike: its fill (PivotSpike) */
      spk[w] = 1;
      for (PetscInt q = 0; q < nL; q++)
        rl[q] -= l * pl[q];
    }
    if (t)
      t[slotrow[w]] -= l * tp;
    else
      mrow[m] = slotrow[w], mval[m++] = l;
  }
  *nm = m;
  return nu;
}

/* GEPP on the interior columns of the local rows of A, the rows loaded into the window as the elimination
 * reaches them; *zero: a column without a nonzero pivot. With t (a right-hand side in staircase order) its
 * row operations are done on t as they are found, in SolveFactored's order, and the multipliers are not
 * stored. vec: the row updates by RowUpdateAVX2 (the AVX2 instance only). */
static inline __attribute__((always_inline)) PetscErrorCode Eliminate(PC_HsBand *b, Mat A, PetscBool inplace,
                                                                         PetscScalar *t, PetscBool *zero, const int vec)
{
  PetscInt  *act = b->act, na = 0, next = 0, nm = 0, nfree = b->R, W = b->W, S = b->S, nL = b->nL;
  PetscInt   lo = 0, hi = b->nrow - 1; /* in place: the first and last local rows not joined */
  PetscCount off[2] = {0, 0}; /* the U entries in uval, in place */
  PetscCount nupd = 0, lupd = 0, nspk = 0; /* row updates, their entries, those with the spike: the flops logged */
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
  b->prefetch = Prefetches(&rp, b->nrow);
  for (PetscInt w = 0; w < b->R; w++)
    b->freeslot[w] = b->R - 1 - w;
  b->wbase = b->is;
  for (PetscInt c = 0; c < b->nI; c++) {
    PetscInt     j = b->is + c, best, e, len, s, pw, nu;
    PetscScalar *p, pinv;
    if (j - b->wbase >= W)
      Shift(b, act, na);
    s = j - b->wbase; /* column j's slot, < W */
    for (; next < b->nrow && b->first[next] <= j; next++) { /* rows whose first column is j (or left of is) */
      PetscCall(LoadRow(b, A, &rp, next, b->freeslot[--nfree], b->wbase, s, vec)); /* its first interior column is j */
      act[na++] = b->freeslot[nfree];
      b->joined[b->perm[next]] = 1;
    }
    for (; inplace && lo < b->nrow && b->joined[lo]; lo++)
      ;
    for (; inplace && hi >= 0 && b->joined[hi]; hi--)
      ;
    best = nL ? PivotSpike(b->win + s, S, act, b->spk, na, b->spike_tol) : Pivot(b->win + s, S, act, na);
    b->mstart[c] = nm;
    if (best < 0) {
      *zero = PETSC_TRUE;
      break;
    }
    pw = act[best], act[best] = act[--na], b->piv[c] = b->slotrow[pw];
    p = b->win + pw * S;
    e = j + W - 1; /* its last nonzero, in [j, j + W): the slots beyond are zero (a per-row bound kept up to date in
                      the updates had cost more than this scan: kepler conserving4, N = 124, 73.6M -> 72.7M instructions) */
    for (; e > j && p[s + e - j] == 0; e--)
      ;
    len = PetscMin(e - j + 1, W), pinv = 1 / p[s];
    if (t)
      nu = UpdateRows(b, act, na, s, len, pw, pinv, t, t[b->piv[c]], &nm, vec);
    else
      nu = UpdateRows(b, act, na, s, len, pw, pinv, NULL, 0, &nm, vec);
    nupd += nu, lupd += nu * len, nspk += b->spk[pw] ? nu : 0;
    { /* in place if it stays behind (bottom-up: ahead of) the values of the rows not joined */
      PetscCount end = off[1] + len + (b->spk[pw] ? nL : 0);
      b->uin[c]      = (char)(inplace && (b->rev ? b->uan - end >= rp.ia[0][hi + 1] : end <= rp.ia[0][lo]));
    }
    StoreU(b, c, pw, s, len, pinv, &off[(int)b->uin[c]]);
    b->freeslot[nfree++] = pw;
  }
  b->mstart[b->nI] = nm, b->utot = off[0] + off[1], b->unin = off[1];
  PetscCall(LogElimination(b, nupd, lupd, nspk, (PetscBool)!!t));
  b->nleft = 0;
  if (!*zero) { /* the rows left active, and those that never joined (only interface columns) */
    for (PetscInt a = 0; a < na; a++)
      b->leftover[b->nleft] = b->slotrow[act[a]], b->leftslot[b->nleft++] = act[a];
    for (; next < b->nrow; next++) {
      PetscCall(LoadRow(b, A, &rp, next, b->freeslot[--nfree], b->wbase, 0, vec)); /* the right interface: < wbase + S */
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
PetscBool HsBandUseAVX2(const PC_HsBand *b)
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
PetscErrorCode HsBandEliminateDefault(PC_HsBand *b, Mat A, PetscBool inplace, PetscScalar *t, PetscBool *zero)
{
  return Eliminate(b, A, inplace, t, zero, 0);
}

#if defined(HS_BAND_AVX2)
__attribute__((target("avx2"))) PetscErrorCode HsBandEliminateAVX2(PC_HsBand *b, Mat A, PetscBool inplace,
                                                                    PetscScalar *t, PetscBool *zero)
{
#if defined(HS_BAND_AVX2_INTRIN)
  return Eliminate(b, A, inplace, t, zero, 1);
#else
  return Eliminate(b, A, inplace, t, zero, 0);
#endif
}
#endif

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
 * triangular: det A = sign(rows) sign(columns) prod U_cc det(reduced); the reduced matrix's cyclic reduction gives
 * its determinant (HsBandReducedDeterminant). */
PetscErrorCode HsBandDeterminant(PC pc, PC_HsBand *b)
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
    PetscInt n = ULen(b, c);
    MulDet(&m, &e, 1 / *URow(b, c, off[(int)b->uin[c]], n));
    off[(int)b->uin[c]] += n;
  }
  { /* the reduced matrix's: its merges' pivots here, the permutations' parity on rank 0 (bandreduce.c) */
    PetscInt rodd;
    PetscCall(HsBandReducedDeterminant(pc, b, &m, &e, &rodd));
    odd ^= rodd;
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


/* b->t = x in the staircase row order */
PetscErrorCode HsBandLoadRHS(PC_HsBand *b, Vec xv)
{
  const PetscScalar *xa;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(xv, &xa));
  for (PetscInt i = 0; i < b->nrow; i++)
    b->t[i] = xa[b->perm[i]];
  PetscCall(VecRestoreArrayRead(xv, &xa));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x from b->t, forward-eliminated: the reduced system's solve (its right-hand side the left-over rows'),
 * which gives every rank its interface values, the back substitution. Collective. */
PetscErrorCode HsBandComplete(PC pc, PC_HsBand *b, Vec yv)
{
  PetscScalar *ya, *t = b->t;
  PetscCount   off[2] = {b->utot - b->unin, b->unin}; /* uval's, in place */

  PetscFunctionBeginUser;
  if (b->nred) /* the interface values, by the reduced system's cyclic reduction (bandreduce.c) */
    PetscCall(HsBandReducedSolve(pc, b, t));
  for (PetscInt c = b->nI - 1; c >= 0; c--) { /* back substitution with U, streamed backwards */
    PetscInt           j = b->is + c, len = b->ulen[c], n = ULen(b, c);
    const PetscScalar *u = URow(b, c, off[(int)b->uin[c]] -= n, n), *xj = b->x + j - b->olo;
    PetscScalar        v = t[b->piv[c]]; /* as one sum (four partial sums took 10 % off this loop but moved a free
                                            T's residual at the noise floor 7x, test band), the spike's terms first and
                                            the columns from the last to j + 1: x_{j+1}, the last value found, comes
                                            last, so that the sum's other terms need not wait for it (in column order
                                            the chain of subtractions ran through every row: kepler conserving4,
                                            N = 124, the back substitution 10 % of the solve's samples) */
    for (PetscInt q = 0; b->uspk[c] && q < b->nL; q++) /* (a zero spike is not stored: PivotSpike, ULen) */
      v -= u[len + q] * b->x[q];
    for (PetscInt q = len - 1; q >= 1; q--)
      v -= u[q] * xj[q];
    b->x[j - b->olo] = v * u[0];
  }
  PetscCall(PetscLogFlops(2.0 * b->utot - b->nI)); /* 2 per U entry (a zero spike is not stored), the pivot's 1 */
  PetscCall(VecGetArray(yv, &ya));
  for (PetscInt i = 0; i < b->nrow; i++)
    ya[i] = b->x[Or(b, b->rs + i) - b->olo];
  PetscCall(VecRestoreArray(yv, &ya));
  PetscFunctionReturn(0);
}

