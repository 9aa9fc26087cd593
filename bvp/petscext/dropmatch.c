/* hamshoot: the row-to-column matching of PC hsdrop (-pc_hsdrop_match; issue 44, item 4).
 *
 * MUMPS permutes the rows of a matrix so that large entries lie on its diagonal (ICNTL(6), a maximum
 * product matching) only when it is given the whole matrix on one rank: with a distributed matrix
 * (more than one rank) ICNTL(6) is ignored. The transcription's Jacobian has zeros on the diagonal
 * (the initial conditions' rows) and, taken as it is, leaves MUMPS' threshold pivoting (CNTL(1) = 1)
 * to delay thousands of pivots: for ncar with 64 cars, N = 400, 5,514 delayed pivots and 7.0e9 flops
 * against 44 and 3.4e9 once the matching is applied (measured, AMF ordering). The matching that
 * MUMPS finds there is the chain's own: each state equation of interval k on x_{k+1}, each costate
 * equation of node k on lambda_{k-1}, the initial conditions on x_0; an augmenting path started at an
 * initial condition's row runs forward along the state equations and back along the costate ones.
 *
 * HsDropMatch finds such a matching for the dropped matrix P: a maximum-cardinality matching that
 * starts from P's nonzero diagonal and augments from each unmatched row along a depth-first path
 * that tries a row's entries by decreasing magnitude (so that a tie is broken towards the large
 * entries, as a maximum-product matching would). It runs on rank 0 over P's kept entries gathered
 * there (MUMPS' sequential analysis gathers the same matrix there anyway), in O(nnz(P)) memory and,
 * for the chain, O(nnz(P)) time; a row left unmatched (P structurally singular) takes a free column.
 * The result, colrow[j] = the row matched to column j, is scattered back by columns: each rank keeps its own
 * columns' rows and, through a star forest, those of the neighbours' columns that its rows touch (nothing of size
 * M on any rank but 0; before, every rank received all M). P's columns are relabelled j -> colrow[j], so that P Q
 * (Q the permutation) has the matched entries on its diagonal, and hsdrop's apply is y[j] = z[colrow[j]] with
 * P Q z = x. det P = det(P Q) sign(colrow).
 *
 * Not done (issue 44): the matching itself distributed. Tried: each rank matching its own rows to its own columns
 * (as here: diagonal first, then augmenting paths) and the rows left at the rank boundaries matched to the columns
 * left, gathered (O(P n)). That gives a valid matching but not the chain's: the augmenting paths of the one-rank
 * matching run the whole length of the chain (forward from the initial conditions, back along the costate
 * equations) and shift every node's pairing, which a rank cannot see from its slab; MUMPS then delayed 29,734
 * pivots instead of 76 and took 2.5x the flops (ncar 64 cars, N = 400, 2 ranks; bench/README.md). */
#include "hspetscext.h"

#include <petscsf.h>

/* The entries of row i in decreasing magnitude: ord[rp[i] .. rp[i+1]) (insertion sort: rows are short). */
static void SortRows(PetscInt M, const PetscInt *rp, const PetscScalar *v, PetscInt *ord)
{
  for (PetscInt i = 0; i < M; i++)
    for (PetscInt e = rp[i]; e < rp[i + 1]; e++) {
      PetscInt k = e, x = e;
      while (k > rp[i] && PetscAbsScalar(v[ord[k - 1]]) < PetscAbsScalar(v[x]))
        ord[k] = ord[k - 1], k--;
      ord[k] = x;
    }
}

/* One augmenting path from the unmatched row r0 (iterative depth-first search; vis[j] == stamp: column
   j seen in this search); on success the path's rows take their new columns. */
static void Augment(PetscInt r0, PetscInt stamp, const PetscInt *rp, const PetscInt *ci, const PetscInt *ord,
                    PetscInt *rowcol, PetscInt *colrow, PetscInt *vis, PetscInt *stack, PetscInt *pos)
{
  PetscInt sp = 0, found = -1;

  stack[sp++] = r0, pos[r0] = rp[r0];
  while (sp > 0 && found < 0) {
    PetscInt i = stack[sp - 1], pushed = 0;
    while (pos[i] < rp[i + 1] && !pushed && found < 0) {
      PetscInt j = ci[ord[pos[i]++]];
      if (vis[j] == stamp)
        continue;
      vis[j] = stamp;
      if (colrow[j] < 0)
        found = j;
      else
        stack[sp++] = colrow[j], pos[colrow[j]] = rp[colrow[j]], pushed = 1;
    }
    if (!pushed && found < 0)
      sp--;
  }
  for (PetscInt k = sp - 1, j = found; k >= 0 && found >= 0; k--) {
    PetscInt row = stack[k], old = rowcol[row];
    rowcol[row] = j, colrow[j] = row, j = old;
  }
}

/* The matching of the M x M matrix (rp, ci, v) on one rank: colrow[j], and the permutation's sign. */
static PetscErrorCode MatchSeq(PetscInt M, const PetscInt *rp, const PetscInt *ci, const PetscScalar *v,
                               PetscInt *colrow, PetscInt *sign)
{
  PetscInt *rowcol, *ord, *vis, *stack, *pos, free = 0, cycles = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc5(M, &rowcol, rp[M], &ord, M, &vis, M, &stack, M, &pos));
  SortRows(M, rp, v, ord);
  for (PetscInt i = 0; i < M; i++)
    rowcol[i] = colrow[i] = vis[i] = -1;
  for (PetscInt i = 0; i < M; i++)
    for (PetscInt e = rp[i]; e < rp[i + 1]; e++)
      if (ci[e] == i && v[e] != 0.0)
        rowcol[i] = colrow[i] = i;
  for (PetscInt i = 0; i < M; i++)
    if (rowcol[i] < 0)
      Augment(i, i, rp, ci, ord, rowcol, colrow, vis, stack, pos);
  for (PetscInt i = 0; i < M; i++) /* structurally singular: a free column each */
    if (rowcol[i] < 0) {
      while (colrow[free] >= 0)
        free++;
      rowcol[i] = free, colrow[free] = i;
    }
  for (PetscInt i = 0; i < M; i++) /* the sign: (-1)^(M - cycles); vis marks the visited */
    vis[i] = 0;
  for (PetscInt i = 0; i < M; i++)
    if (!vis[i]) {
      cycles++;
      for (PetscInt j = i; !vis[j]; j = colrow[j])
        vis[j] = 1;
    }
  *sign = ((M - cycles) % 2) ? -1 : 1;
  PetscCall(PetscFree5(rowcol, ord, vis, stack, pos));
  PetscFunctionReturn(0);
}

/* The columns of other ranks that the local rows touch (mt->gcol, ascending) and their matched rows (mt->grow),
   through a star forest over the column layout from the owners' mt->colrow. Collective. */
static PetscErrorCode Ghosts(MPI_Comm comm, PetscInt m, const PetscInt *kstart, const PetscInt *kcol,
                             HsDropMatching *mt)
{
  PetscInt    n = 0;
  PetscLayout map;
  PetscSF     sf;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(kstart[m] + 1, &mt->gcol));
  for (PetscInt e = 0; e < kstart[m]; e++)
    if (kcol[e] < mt->rs || kcol[e] >= mt->rs + m)
      mt->gcol[n++] = kcol[e];
  PetscCall(PetscSortRemoveDupsInt(&n, mt->gcol));
  mt->ng = n;
  PetscCall(PetscMalloc1(n + 1, &mt->grow));
  PetscCall(PetscLayoutCreate(comm, &map));
  PetscCall(PetscLayoutSetLocalSize(map, m));
  PetscCall(PetscLayoutSetUp(map));
  PetscCall(PetscSFCreate(comm, &sf));
  PetscCall(PetscSFSetGraphLayout(sf, map, n, NULL, PETSC_COPY_VALUES, mt->gcol));
  PetscCall(PetscSFBcastBegin(sf, MPIU_INT, mt->colrow, mt->grow, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf, MPIU_INT, mt->colrow, mt->grow, MPI_REPLACE));
  PetscCall(PetscSFDestroy(&sf));
  PetscCall(PetscLayoutDestroy(&map));
  PetscFunctionReturn(0);
}

/*@ HsDropMatch - the row-to-column matching of hsdrop (bvp/ internal; see this file's head): from the local
    rows rs..rs+m-1 of a square matrix of M global rows (its columns laid out as its rows), kept entries in CSR
    (kstart, kcol global, kval): mt->colrow[j] the row matched to the local column rs + j, the same for the
    columns of other ranks that the local rows touch (mt->gcol, mt->grow), and mt->sign the sign of that
    permutation. Collective on comm.
@*/
PetscErrorCode HsDropMatch(MPI_Comm comm, PetscInt M, PetscInt m, const PetscInt *kstart, const PetscInt *kcol,
                           const PetscScalar *kval, HsDropMatching *mt)
{
  PetscMPIInt  size, rank, nloc, mloc, *counts = NULL, *displs = NULL, *rcounts = NULL, *rdispls = NULL;
  PetscInt    *len, *rp = NULL, *ci = NULL, *full = NULL, rs = 0;
  PetscScalar *v = NULL;

  PetscFunctionBeginUser;
  PetscCall(HsDropMatchingFree(mt));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Exscan(&m, &rs, 1, MPIU_INT, MPI_SUM, comm));
  mt->rs = rank ? rs : 0, mt->m = m; /* MPI_Exscan leaves rank 0's undefined */
  PetscCall(PetscMalloc1(m + 1, &len));
  for (PetscInt i = 0; i < m; i++)
    len[i] = kstart[i + 1] - kstart[i];
  PetscCall(PetscMPIIntCast(kstart[m], &nloc));
  PetscCall(PetscMPIIntCast(m, &mloc));
  if (!rank) {
    PetscCall(PetscMalloc4(size, &counts, size, &displs, size, &rcounts, size, &rdispls));
    PetscCall(PetscMalloc2(M + 1, &rp, M + 1, &full));
  }
  PetscCallMPI(MPI_Gather(&nloc, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Gather(&mloc, 1, MPI_INT, rcounts, 1, MPI_INT, 0, comm));
  if (!rank) {
    PetscInt nz = 0, r = 0;
    for (PetscMPIInt p = 0; p < size; p++) {
      PetscCall(PetscMPIIntCast(nz, &displs[p]));
      PetscCall(PetscMPIIntCast(r, &rdispls[p]));
      nz += counts[p], r += rcounts[p];
    }
    PetscCheck(r == M, comm, PETSC_ERR_PLIB, "hsdrop matching: %" PetscInt_FMT " rows of %" PetscInt_FMT, r, M);
    PetscCall(PetscMalloc2(nz, &ci, nz, &v));
  }
  PetscCallMPI(MPI_Gatherv(len, mloc, MPIU_INT, rp ? rp + 1 : NULL, rcounts, rdispls, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Gatherv(kcol, nloc, MPIU_INT, ci, counts, displs, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Gatherv(kval, nloc, MPIU_SCALAR, v, counts, displs, MPIU_SCALAR, 0, comm));
  if (!rank) {
    rp[0] = 0;
    for (PetscInt i = 0; i < M; i++)
      rp[i + 1] += rp[i];
    PetscCall(MatchSeq(M, rp, ci, v, full, &mt->sign));
    PetscCall(PetscFree2(ci, v));
  }
  PetscCall(PetscFree(len));
  PetscCall(PetscMalloc1(m + 1, &mt->colrow));
  PetscCallMPI(MPI_Scatterv(full, rcounts, rdispls, MPIU_INT, mt->colrow, mloc, MPIU_INT, 0, comm)); /* by columns */
  PetscCallMPI(MPI_Bcast(&mt->sign, 1, MPIU_INT, 0, comm));
  if (!rank) {
    PetscCall(PetscFree2(rp, full));
    PetscCall(PetscFree4(counts, displs, rcounts, rdispls));
  }
  PetscCall(Ghosts(comm, m, kstart, kcol, mt));
  PetscFunctionReturn(0);
}

/*@ HsDropMatchRelabel - the global columns kcol[0 .. nz) (local or among mt->gcol) relabelled j -> the row
    matched to column j (bvp/ internal). Not collective.
@*/
PetscErrorCode HsDropMatchRelabel(const HsDropMatching *mt, PetscInt nz, PetscInt *kcol)
{
  PetscFunctionBeginUser;
  for (PetscInt e = 0; e < nz; e++) {
    PetscInt c = kcol[e], p;
    if (c >= mt->rs && c < mt->rs + mt->m) {
      kcol[e] = mt->colrow[c - mt->rs];
      continue;
    }
    PetscCall(PetscFindInt(c, mt->ng, mt->gcol, &p));
    PetscCheck(p >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "hsdrop: column %" PetscInt_FMT " not matched", c);
    kcol[e] = mt->grow[p];
  }
  PetscFunctionReturn(0);
}

/*@ HsDropMatchingFree - frees a matching's arrays (bvp/ internal; a zeroed HsDropMatching is empty). Not
    collective.
@*/
PetscErrorCode HsDropMatchingFree(HsDropMatching *mt)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(mt->colrow));
  PetscCall(PetscFree(mt->gcol));
  PetscCall(PetscFree(mt->grow));
  mt->ng = mt->m = mt->rs = 0, mt->sign = 1;
  PetscFunctionReturn(0);
}
