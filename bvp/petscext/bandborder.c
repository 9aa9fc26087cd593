/* hamshoot: PC hsband's bordered step (issue 44): a few dense rows and columns (a free final time's: the
 * column dF/dT touches every row, the row of its condition every column) make the band the whole matrix. With
 * the rows and columns permuted so that the border comes last,
 *
 *   A = [B C; R D],   B the band without the border (square), C, R^T its k border columns and rows,
 *
 * the PC factors B by the banded LU (an inner hsband on the submatrix B, its multipliers kept), makes
 * Z = B^{-1} C (one banded solve per border column), and the Schur complement S = D - R Z (k x k, dense, the same
 * on every rank, LU by LAPACK). A solve of A [x; y] = [f; g]: w = B^{-1} f, S y = g - R w, x = w - Z y;
 * det A = sign det B det S, the sign that of the permutations. -pc_hsband_border false turns it off.
 *
 * Detection (once per pattern): an entry is far if it lies more than min(HS_BAND_BORDER_REACH, N / 4) from the
 * diagonal. A row with more than HS_BAND_MAX_BORDER far entries is a border row; a column with a far entry in a
 * row that is not is a border column. Where there are fewer border rows than columns (a free T in conserving4's
 * multiple shooting: T's column dense, its row local), the diagonal rows of the border columns with far entries in
 * more than HS_BAND_MAX_BORDER rows join them (DiagonalRows).
 * The border is used if there are as many border rows as columns (B square), 1 to HS_BAND_MAX_BORDER of them; else
 * the plain band (HsBandLayout) as before. If B is outside the
 * band's limits, meets a zero pivot or gives a B^-1 C that is not finite (singular to working precision), the PC
 * factors A by MUMPS instead, saying why (pcband.c). An ill-conditioned B with a finite B^-1 C is not detected:
 * for a free T, B is the fixed-T Jacobian. */
#include "bandimpl.h"

struct _HsBandBorder {
  PetscInt      k, *row, *col; /* the border's rows and columns of A: global, sorted, on every rank */
  IS            isr, isc;      /* the rows and columns of A that B keeps (B's layout: row and column blocks equal) */
  Mat           B;             /* A without the border */
  PC            band;          /* hsband on B (multipliers kept, no refinement, no border) */
  Vec          *C, *Z, *R;     /* k each: the border columns without the border rows, B^{-1} C; the border rows */
  Vec           f, w;          /* B's right-hand side and solution */
  VecScatter    tob, toa;      /* A's non-border rows to f; w to A's non-border columns */
  PetscScalar  *D, *S, *g;     /* D (k x k), S's LU (column-major), a k-vector */
  PetscBLASInt *piv;
  PetscBool     bad; /* B is outside the band's limits (its pattern: until a new one) */
};

/* c into the sorted, unique cols (*nc of them), unless there or *nc > HS_BAND_MAX_BORDER already */
static inline void InsertColumn(PetscInt c, PetscInt *nc, PetscInt *cols)
{
  PetscInt j = 0;

  if (*nc > HS_BAND_MAX_BORDER)
    return;
  while (j < *nc && cols[j] < c)
    j++;
  if (j < *nc && cols[j] == c)
    return;
  for (PetscInt m = *nc; m > j; m--)
    cols[m] = cols[m - 1];
  cols[j] = c, (*nc)++;
}

/* Local row i's global columns, into cs (from the CSR parts read in place, else MatGetRow's, copied): *ncols of them,
 * cs of capacity *cap, grown as needed */
static PetscErrorCode RowColumns(Mat A, const HsAIJParts *p, PetscInt rs, PetscInt i, PetscInt *ncols, PetscInt **cs,
                                 PetscInt *cap)
{
  PetscInt        n    = 0;
  const PetscInt *cols = NULL;

  PetscFunctionBeginUser;
  if (p->ok)
    for (PetscInt q = 0; q < 2 && p->part[q]; q++)
      n += p->ia[q][i + 1] - p->ia[q][i];
  else
    PetscCall(MatGetRow(A, rs + i, &n, &cols, NULL));
  if (n > *cap) {
    PetscCall(PetscFree(*cs));
    *cap = PetscMax(n, 2 * *cap);
    PetscCall(PetscMalloc1(*cap, cs));
  }
  if (p->ok) {
    n = 0;
    for (PetscInt q = 0; q < 2 && p->part[q]; q++)
      for (PetscInt k = p->ia[q][i]; k < p->ia[q][i + 1]; k++)
        (*cs)[n++] = q ? p->colmap[p->ja[q][k]] : p->cstart + p->ja[q][k];
  } else {
    PetscCall(PetscArraycpy(*cs, cols, n));
    PetscCall(MatRestoreRow(A, rs + i, &n, &cols, NULL));
  }
  *ncols = n;
  PetscFunctionReturn(0);
}

/* The far entries of the local rows: the border rows (more than HS_BAND_MAX_BORDER far entries), the columns of
 * the far entries of the others (sorted, unique; *nc of them, at most HS_BAND_MAX_BORDER + 1 kept), and the
 * band kl, ku of the whole matrix (local). The rows from the CSR parts in place (HsAIJPartsGet): MatGetRow per row
 * was 4 % of a kepler conserving4 solve's instructions (N = 124; bench/README.md, issue 43's iteration work). */
static PetscErrorCode FarEntries(Mat A, PetscInt reach, PetscInt *nr, PetscInt *rows, PetscInt *nc, PetscInt *cols,
                                 PetscInt band[2])
{
  PetscInt   rs, re, ncols = 0, nfar, *cs = NULL, cap = 0;
  HsAIJParts p;

  PetscFunctionBeginUser;
  *nr = 0, *nc = 0;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(HsAIJPartsGet(A, PETSC_FALSE, &p));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt lo = PETSC_MAX_INT, hi = PETSC_MIN_INT, i = r - rs;
    if (p.ok && !p.part[1] && p.ia[0][i + 1] > p.ia[0][i]) { /* one part, its columns sorted: the ends bound the row */
      lo = p.cstart + p.ja[0][p.ia[0][i]], hi = p.cstart + p.ja[0][p.ia[0][i + 1] - 1];
      if (r - lo <= reach && hi - r <= reach) { /* no far entry (a band's row): kepler conserving4, N = 124, the
                                                   detection 2.2M -> 0.2M instructions */
        band[0] = PetscMax(band[0], r - lo), band[1] = PetscMax(band[1], hi - r);
        continue;
      }
      lo = PETSC_MAX_INT, hi = PETSC_MIN_INT;
    }
    PetscCall(RowColumns(A, &p, rs, i, &ncols, &cs, &cap));
    nfar = 0;
    for (PetscInt q = 0; q < ncols; q++) { /* in locals: band[] may alias cs to the compiler */
      PetscInt c = cs[q];
      lo = PetscMin(lo, c), hi = PetscMax(hi, c), nfar += PetscAbsInt(c - r) > reach;
    }
    if (ncols)
      band[0] = PetscMax(band[0], r - lo), band[1] = PetscMax(band[1], hi - r);
    if (nfar > HS_BAND_MAX_BORDER && *nr <= HS_BAND_MAX_BORDER)
      rows[(*nr)++] = r;
    else if (nfar > HS_BAND_MAX_BORDER)
      (*nr)++;
    else
      for (PetscInt q = 0; q < ncols && nfar; q++)
        if (PetscAbsInt(cs[q] - r) > reach)
          InsertColumn(cs[q], nc, cols);
  }
  PetscCall(HsAIJPartsRestore(&p));
  PetscCall(PetscFree(cs));
  PetscFunctionReturn(0);
}

/* Every rank's n entries of v (at most HS_BAND_MAX_BORDER + 1 of them kept) into all (sorted, unique); *nall
 * their count, HS_BAND_MAX_BORDER + 1 where there are more. */
static PetscErrorCode Union(MPI_Comm comm, PetscInt n, const PetscInt *v, PetscInt *nall, PetscInt *all)
{
  const PetscInt K = HS_BAND_MAX_BORDER + 1;
  PetscMPIInt    size;
  PetscInt      *buf, *u, nu = 0, mine[HS_BAND_MAX_BORDER + 2];
  PetscBool      many = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc2((K + 1) * size, &buf, K * size, &u));
  mine[0] = n;
  for (PetscInt i = 0; i < K; i++)
    mine[i + 1] = i < PetscMin(n, K) ? v[i] : -1;
  PetscCallMPI(MPI_Allgather(mine, (PetscMPIInt)(K + 1), MPIU_INT, buf, (PetscMPIInt)(K + 1), MPIU_INT, comm));
  for (PetscMPIInt p = 0; p < size; p++) {
    many = (PetscBool)(many || buf[p * (K + 1)] >= K);
    for (PetscInt i = 0; i < PetscMin(buf[p * (K + 1)], K); i++)
      u[nu++] = buf[p * (K + 1) + 1 + i];
  }
  PetscCall(PetscSortRemoveDupsInt(&nu, u));
  *nall = many ? K : PetscMin(nu, K);
  PetscCall(PetscArraycpy(all, u, *nall));
  PetscCall(PetscFree2(buf, u));
  PetscFunctionReturn(0);
}

/* Border columns acols (kc, sorted) without as many dense rows (a free T's column in conserving4's multiple shooting,
 * whose row, H(z_N) = d phi/dT, is local to the last segment, issue 44): each border column that is dense as a
 * border row is (far entries in more than HS_BAND_MAX_BORDER rows: not the few far entries of a matrix too small
 * for its reach) brings its diagonal row, if not a border row already, into the kr border rows arows (sorted
 * again), so that B stays square; for a free T, B is then the fixed-T Jacobian, as with a dense row. Collective. */
static PetscErrorCode DiagonalRows(Mat A, PetscInt reach, PetscInt kc, const PetscInt *acols, PetscInt *kr,
                                   PetscInt *arows)
{
  PetscInt rs, re, n = *kr, cnt[HS_BAND_MAX_BORDER + 1] = {0};

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt r = rs; r < re; r++) { /* the rows with a far entry in each border column */
    PetscInt        ncols;
    const PetscInt *cs;
    PetscCall(MatGetRow(A, r, &ncols, &cs, NULL));
    for (PetscInt q = 0; q < ncols; q++)
      for (PetscInt j = 0; j < kc; j++)
        cnt[j] += cs[q] == acols[j] && PetscAbsInt(cs[q] - r) > reach;
    PetscCall(MatRestoreRow(A, r, &ncols, &cs, NULL));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, cnt, (PetscMPIInt)kc, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  for (PetscInt j = 0; j < kc; j++) {
    PetscBool in = (PetscBool)(cnt[j] <= HS_BAND_MAX_BORDER);
    for (PetscInt i = 0; i < *kr; i++)
      in = (PetscBool)(in || arows[i] == acols[j]);
    if (!in && n <= HS_BAND_MAX_BORDER)
      arows[n++] = acols[j];
  }
  PetscCall(PetscSortInt(n, arows));
  *kr = n;
  PetscFunctionReturn(0);
}

/* The index sets of B: A's local rows without the border rows; as B's columns, the same number of A's
 * non-border columns (in order, from B's first local row on), so that B's row and column blocks are equal. */
static PetscErrorCode BorderIS(MPI_Comm comm, Mat A, HsBandBorder bd)
{
  PetscInt rs, re, m = 0, start = 0, *ri, *ci, c;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(PetscMalloc1(re - rs + 1, &ri));
  for (PetscInt r = rs, i = 0; r < re; r++) {
    while (i < bd->k && bd->row[i] < r)
      i++;
    if (!(i < bd->k && bd->row[i] == r))
      ri[m++] = r;
  }
  PetscCallMPI(MPI_Exscan(&m, &start, 1, MPIU_INT, MPI_SUM, comm));
  PetscCall(PetscMalloc1(m + 1, &ci));
  c = start;
  for (PetscInt i = 0; i < bd->k; i++) /* A's column of B's column start */
    if (bd->col[i] <= c)
      c++;
  for (PetscInt j = 0, i = 0; j < m; j++, c++) {
    while (i < bd->k && bd->col[i] < c)
      i++;
    for (; i < bd->k && bd->col[i] == c; i++)
      c++;
    ci[j] = c;
  }
  PetscCall(ISCreateGeneral(comm, m, ri, PETSC_OWN_POINTER, &bd->isr));
  PetscCall(ISCreateGeneral(comm, m, ci, PETSC_OWN_POINTER, &bd->isc));
  PetscFunctionReturn(0);
}

/* Finds A's border (the head); b->bd, or NULL where there is none to use. Sets b->kl, b->ku, b->nglob (the whole
 * matrix', for HsBandRefineSteps). Collective. */
PetscErrorCode HsBandBorderDetect(PC pc, PC_HsBand *b, Mat A)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)pc);
  const PetscInt K    = HS_BAND_MAX_BORDER + 1;
  PetscInt       N, nr, nc, rows[HS_BAND_MAX_BORDER + 1], cols[HS_BAND_MAX_BORDER + 1], band[2] = {0, 0};
  PetscInt       kr, kc, arows[HS_BAND_MAX_BORDER + 1], acols[HS_BAND_MAX_BORDER + 1];
  HsBandBorder   bd;

  PetscFunctionBeginUser;
  b->bd = NULL;
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(FarEntries(A, PetscMin(HS_BAND_BORDER_REACH, N / 4), &nr, rows, &nc, cols, band));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, band, 2, MPIU_INT, MPI_MAX, comm));
  PetscCall(Union(comm, nr, rows, &kr, arows));
  PetscCall(Union(comm, nc, cols, &kc, acols));
  if (kr < kc && kc < K) /* dense columns without as many dense rows: their diagonal rows join the border */
    PetscCall(DiagonalRows(A, PetscMin(HS_BAND_BORDER_REACH, N / 4), kc, acols, &kr, arows));
  if (!kr || kr != kc || kr >= K)
    PetscFunctionReturn(0);
  PetscCall(PetscNew(&bd));
  bd->k = kr;
  PetscCall(PetscMalloc2(kr, &bd->row, kr, &bd->col));
  PetscCall(PetscArraycpy(bd->row, arows, kr));
  PetscCall(PetscArraycpy(bd->col, acols, kr));
  PetscCall(BorderIS(comm, A, bd));
  b->bd = bd, b->kl = band[0], b->ku = band[1], b->nglob = N;
  PetscCall(PetscInfo(pc,
                      "hsband: a border of %" PetscInt_FMT " dense row(s) and column(s) (the last at row %" PetscInt_FMT
                      ", column %" PetscInt_FMT "): block elimination around the band\n",
                      kr, arows[kr - 1], acols[kr - 1]));
  PetscFunctionReturn(0);
}

/* The border's blocks from A: C (B's rows), R (B's columns), D (every rank). Collective. */
static PetscErrorCode Blocks(Mat A, HsBandBorder bd)
{
  PetscInt           rs, re, ncols, k = bd->k, lb = 0;
  const PetscInt    *cs;
  const PetscScalar *vs;
  PetscScalar       *c[HS_BAND_MAX_BORDER];

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(PetscArrayzero(bd->D, k * k));
  for (PetscInt j = 0; j < k; j++) {
    PetscCall(VecZeroEntries(bd->R[j]));
    PetscCall(VecZeroEntries(bd->C[j]));
    PetscCall(VecGetArray(bd->C[j], &c[j]));
  }
  for (PetscInt r = rs; r < re; r++) {
    PetscInt i = 0;
    while (i < k && bd->row[i] < r)
      i++;
    PetscCall(MatGetRow(A, r, &ncols, &cs, &vs));
    for (PetscInt q = 0, j = 0, before = 0; q < ncols; q++) { /* before: border columns left of cs[q] */
      for (; before < k && bd->col[before] < cs[q]; before++)
        ;
      j = before < k && bd->col[before] == cs[q] ? before : -1;
      if (i < k && bd->row[i] == r) {
        if (j >= 0)
          bd->D[i + k * j] = vs[q];
        else
          PetscCall(VecSetValue(bd->R[i], cs[q] - before, vs[q], INSERT_VALUES));
      } else if (j >= 0)
        c[j][lb] = vs[q];
    }
    if (!(i < k && bd->row[i] == r))
      lb++;
    PetscCall(MatRestoreRow(A, r, &ncols, &cs, &vs));
  }
  for (PetscInt j = 0; j < k; j++) {
    PetscCall(VecRestoreArray(bd->C[j], &c[j]));
    PetscCall(VecAssemblyBegin(bd->R[j]));
    PetscCall(VecAssemblyEnd(bd->R[j]));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, bd->D, k * k, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(0);
}

/* The inner hsband PC on B (created at the first set-up of a border): its multipliers kept (Z's solves and every
 * apply use them), no refinement (the outer solve refines), no border, the outer's choices otherwise. */
static PetscErrorCode InnerBand(PC pc, PC_HsBand *b)
{
  HsBandBorder bd = b->bd;
  PC_HsBand   *ib;

  PetscFunctionBeginUser;
  if (!bd->band) {
    PetscCall(PCCreate(PetscObjectComm((PetscObject)pc), &bd->band));
    PetscCall(PCSetType(bd->band, "hsband"));
    PetscCall(MatCreateVecs(bd->B, &bd->w, &bd->f));
    PetscCall(VecDuplicateVecs(bd->f, bd->k, &bd->C));
    PetscCall(VecDuplicateVecs(bd->w, bd->k, &bd->Z));
    PetscCall(VecDuplicateVecs(bd->w, bd->k, &bd->R));
    PetscCall(PetscMalloc4(bd->k * bd->k, &bd->D, bd->k * bd->k, &bd->S, bd->k, &bd->g, bd->k, &bd->piv));
  }
  ib        = (PC_HsBand *)bd->band->data;
  ib->defer = PETSC_FALSE, ib->refine = 0, ib->border = PETSC_FALSE, ib->fallback = PETSC_TRUE;
  ib->reverse = b->reverse, ib->avx2 = b->avx2, ib->avx2_set = b->avx2_set;
  PetscCall(PCSetOperators(bd->band, bd->B, bd->B));
  PetscFunctionReturn(0);
}

/* The factors of A = [B C; R D] (the head): B's banded LU, Z = B^{-1} C, S = D - R Z and its LU. *ok false where
 * B is outside the band's limits or singular (b->why says which; the caller falls back); b->failed where S is
 * singular (A is). Collective. */
PetscErrorCode HsBandBorderSetUp(PC pc, PC_HsBand *b, PetscBool *ok)
{
  HsBandBorder   bd = b->bd;
  PCFailedReason fr;
  PC_HsBand     *ib;
  PetscBLASInt   k, info;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  if (bd->bad)
    PetscFunctionReturn(0);
  PetscCall(MatCreateSubMatrix(pc->pmat, bd->isr, bd->isc, bd->B ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &bd->B));
  PetscCall(InnerBand(pc, b));
  PetscCall(PCSetUp(bd->band));
  ib = (PC_HsBand *)bd->band->data;
  if (ib->inner) {
    PetscCall(
        PetscSNPrintf(b->why, sizeof b->why, "the band without its border of %" PetscInt_FMT ": %s", bd->k, ib->why));
    bd->bad = PETSC_TRUE;
    PetscCall(PCReset(bd->band));
    PetscFunctionReturn(0);
  }
  PetscCall(PCGetFailedReason(bd->band, &fr));
  if (fr) {
    PetscCall(PetscSNPrintf(b->why, sizeof b->why,
                            "the band without its border of %" PetscInt_FMT " is singular (a zero pivot)", bd->k));
    PetscFunctionReturn(0);
  }
  PetscCall(Blocks(pc->pmat, bd));
  for (PetscInt j = 0; j < bd->k; j++) {
    PetscReal nz;
    PetscCall(PCApply(bd->band, bd->C[j], bd->Z[j]));
    PetscCall(VecNorm(bd->Z[j], NORM_INFINITY, &nz));
    if (!PetscIsNormalReal(nz) && nz != 0) { /* B singular to working precision (no exact zero pivot): A may not be */
      PetscCall(PetscSNPrintf(b->why, sizeof b->why,
                              "the band without its border of %" PetscInt_FMT " is singular to "
                              "working precision (B^-1 C is %g)",
                              bd->k, (double)nz));
      PetscFunctionReturn(0);
    }
  }
  for (PetscInt i = 0; i < bd->k; i++) { /* row i of S: D_i - R_i Z */
    PetscCall(VecMDot(bd->R[i], bd->k, bd->Z, bd->g));
    for (PetscInt j = 0; j < bd->k; j++)
      bd->S[i + bd->k * j] = bd->D[i + bd->k * j] - bd->g[j];
  }
  PetscCall(PetscLogFlops(2.0 * bd->k * bd->k * (PetscLogDouble)(ib->nrow)));
  PetscCall(PetscBLASIntCast(bd->k, &k));
  PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&k, &k, bd->S, &k, bd->piv, &info)); /* the same on every rank */
  b->failed = (PetscBool)(info != 0);
  if (b->failed)
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
  *ok = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* y = A^{-1} x by the bordered factors (the head). Collective. */
PetscErrorCode HsBandBorderSolve(PC pc, PC_HsBand *b, Vec xv, Vec yv)
{
  HsBandBorder       bd = b->bd;
  PetscInt           rs, re, k = bd->k;
  const PetscScalar *xa;
  PetscScalar       *ya, dots[HS_BAND_MAX_BORDER];
  PetscBLASInt       kk, one = 1, info;

  PetscFunctionBeginUser;
  if (!bd->tob) {
    PetscCall(VecScatterCreate(xv, bd->isr, bd->f, NULL, &bd->tob));
    PetscCall(VecScatterCreate(bd->w, NULL, yv, bd->isc, &bd->toa));
  }
  PetscCall(VecScatterBegin(bd->tob, xv, bd->f, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(bd->tob, xv, bd->f, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetOwnershipRange(xv, &rs, &re));
  PetscCall(VecGetArrayRead(xv, &xa));
  for (PetscInt i = 0; i < k; i++) /* g: x's border rows, on every rank */
    bd->g[i] = bd->row[i] >= rs && bd->row[i] < re ? xa[bd->row[i] - rs] : 0;
  PetscCall(VecRestoreArrayRead(xv, &xa));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, bd->g, k, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)pc)));
  PetscCall(PCApply(bd->band, bd->f, bd->w)); /* w = B^{-1} f */
  PetscCall(VecMDot(bd->w, k, bd->R, dots));
  for (PetscInt i = 0; i < k; i++) /* S y = g - R w */
    bd->g[i] -= dots[i];
  PetscCall(PetscBLASIntCast(k, &kk));
  PetscCallBLAS("LAPACKgetrs", LAPACKgetrs_("N", &kk, &one, bd->S, &kk, bd->piv, bd->g, &kk, &info));
  for (PetscInt i = 0; i < k; i++)
    dots[i] = -bd->g[i];
  PetscCall(VecMAXPY(bd->w, k, dots, bd->Z)); /* x = w - Z y */
  PetscCall(VecScatterBegin(bd->toa, bd->w, yv, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(bd->toa, bd->w, yv, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArray(yv, &ya));
  for (PetscInt j = 0; j < k; j++)
    if (bd->col[j] >= rs && bd->col[j] < re)
      ya[bd->col[j] - rs] = bd->g[j];
  PetscCall(VecRestoreArray(yv, &ya));
  PetscFunctionReturn(0);
}

/* det A = det_m 2^det_e (every rank): the permutations' sign (each border row and column moved behind the
 * others after it), det B (the inner band's, m 2^e) and det S (its LU's diagonal and row interchanges).
 * *known: whether it is known (after a set-up that factored by the border). Collective. */
PetscErrorCode HsBandBorderDeterminant(PC pc, PC_HsBand *b, PetscBool *known)
{
  HsBandBorder bd = b->bd;
  PC_HsBand   *ib = (PC_HsBand *)bd->band->data;
  PetscReal    m;
  PetscInt     e, odd = 0, n = b->nglob, k = bd->k;
  int          x;

  PetscFunctionBeginUser;
  (void)pc;
  *known = PETSC_TRUE;
  PetscCall(HsBandDeterminant(bd->band, ib)); /* det B, from the inner band's factors (quietly: not its -info line) */
  m = ib->det_m, e = ib->det_e;
  for (PetscInt i = 0; i < k; i++) {
    odd += (n - k + i - bd->row[i]) + (n - k + i - bd->col[i]); /* moves past the non-border lines after it */
    odd += bd->piv[i] != i + 1;
    m *= bd->S[i + k * i];
    m = frexp(m, &x), e += x;
  }
  b->det_m = odd & 1 ? -m : m, b->det_e = e;
  PetscFunctionReturn(0);
}

/* A line for -ksp_view: the border and the inner band's view. */
PetscErrorCode HsBandBorderView(PC_HsBand *b, PetscViewer viewer)
{
  HsBandBorder bd = b->bd;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerASCIIPrintf(
      viewer,
      "  banded LU with a border (hamshoot): %" PetscInt_FMT " dense row(s) and "
      "column(s) (the last at %" PetscInt_FMT ", %" PetscInt_FMT ") by block elimination (Schur "
      "complement %" PetscInt_FMT " x %" PetscInt_FMT "); %" PetscInt_FMT " refinement step(s)%s; the "
      "band without them:\n",
      bd->k, bd->row[bd->k - 1], bd->col[bd->k - 1], bd->k, bd->k, HsBandRefineSteps(b),
      b->refine < 0 ? " (by the band's width)" : ""));
  if (bd->band) {
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PCView(bd->band, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscFunctionReturn(0);
}

/* Frees a border (b->bd) and everything made for it. */
PetscErrorCode HsBandBorderDestroy(PC_HsBand *b)
{
  HsBandBorder bd = b->bd;

  PetscFunctionBeginUser;
  if (!bd)
    PetscFunctionReturn(0);
  PetscCall(PetscFree2(bd->row, bd->col));
  PetscCall(ISDestroy(&bd->isr));
  PetscCall(ISDestroy(&bd->isc));
  PetscCall(MatDestroy(&bd->B));
  PetscCall(PCDestroy(&bd->band));
  if (bd->C) {
    PetscCall(VecDestroyVecs(bd->k, &bd->C));
    PetscCall(VecDestroyVecs(bd->k, &bd->Z));
    PetscCall(VecDestroyVecs(bd->k, &bd->R));
  }
  PetscCall(VecDestroy(&bd->f));
  PetscCall(VecDestroy(&bd->w));
  PetscCall(VecScatterDestroy(&bd->tob));
  PetscCall(VecScatterDestroy(&bd->toa));
  PetscCall(PetscFree4(bd->D, bd->S, bd->g, bd->piv));
  PetscCall(PetscFree(b->bd));
  PetscFunctionReturn(0);
}
