/* hamshoot: PC hsband's reduced (interface) system, distributed over the ranks by block cyclic reduction of the
 * chain of rank partitions (issue 44).
 *
 * After the ranks' eliminations (bandelim.c) rank r holds nleft_r rows over two interface blocks only: block r
 * (the columns it shares with rank r - 1; empty for r = 0) and block r + 1 (shared with r + 1; empty for the last
 * rank). The reduced system is a chain: rows of group r touch blocks r and r + 1. It is solved in L = ceil(log2 P)
 * levels. At level l the ranks form groups of 2^l consecutive ranks, each held by its first rank (its leader) as
 * dense rows over the group's two boundary blocks A (left) and B (right). Pairs of neighbouring groups merge: the
 * right group's leader sends its rows to the left's (one message of m x (sM + sB) values), which stacks them under
 * its own (columns [M | A | B], M the block between the two groups, interior to the merged group) and eliminates
 * M: LAPACK's getrf with partial pivoting on the tall panel (all stacked rows), the row swaps on [A | B], a
 * triangular solve for the pivot rows' U12 and a BLAS-3 update of the other rows (their Schur complement over
 * [A | B]: the merged group's rows). After L levels rank 0 holds no rows and no boundary.
 *
 * Stability: only the rows of the two groups touch M, so each merge's partial pivoting chooses among all rows
 * of the reduced system that could pivot: the whole is Gaussian elimination with partial pivoting of the reduced
 * matrix with its columns taken in the tree's order (a column permutation), which cannot break down on a
 * nonsingular matrix and is as stable as GEPP; the former dense LU on rank 0 was GEPP in the natural column order.
 *
 * Cost: per merge O(s^3) flops for blocks of s columns (s about the band's width), log2 P merges on the busiest
 * rank (rank 0), and 2 log2 P messages of O(s^2) values per factorization; a solve is an up-sweep (the right-hand
 * side's reduction, one message of O(s) values per level) and a down-sweep (each leader computes M's values from
 * its boundaries' and sends the right group's boundaries down), 2 log2 P messages of O(s) values. Nothing of size
 * P s is gathered: the former dense LU on rank 0 cost O((P s)^3) flops and P s^2 values of messages.
 *
 * The determinant's sign (on demand only: arclength continuation, branch tests) needs the pivot order of all
 * merges: their row and column ids, O(P s) integers, gathered to rank 0 there (HsBandReducedDeterminant). */
#include "bandimpl.h"

#define HS_BAND_TAG_HEAD 4401 /* a merge's sizes and failure flag */
#define HS_BAND_TAG_ROWS 4402 /* ... its rows' values */
#define HS_BAND_TAG_IDS 4403  /* ... their ids (rows of the reduced system, natural order) */
#define HS_BAND_TAG_RHS 4404  /* a solve's up-sweep */
#define HS_BAND_TAG_X 4405    /* its down-sweep */

static PetscLogEvent HS_BAND_RED_FACTOR, HS_BAND_RED_SOLVE;

/* -log_view, beside pcband.c's events: HsBandRedFactor (the merges of a factorization, inside HsBandReduced; the
 * rest of HsBandReduced is the wait for the slowest rank's elimination and the counts' exchange), HsBandRedSolve (a
 * solve's up- and down-sweeps, inside HsBandSolve). Called once, by pcband.c's RegisterEvents. */
PetscErrorCode HsBandReducedRegisterEvents(void)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventRegister("HsBandRedFactor", PC_CLASSID, &HS_BAND_RED_FACTOR));
  PetscCall(PetscLogEventRegister("HsBandRedSolve", PC_CLASSID, &HS_BAND_RED_SOLVE));
  PetscFunctionReturn(0);
}

/* Size of interface block r (0 for r = 0 and r = P) */
static inline PetscInt BlockSize(const PC_HsBand *b, PetscInt r) { return b->ife[r] - b->ifs[r]; }

/* The levels' arrays, and the leaf's, freed */
PetscErrorCode HsBandReducedFree(PC_HsBand *b)
{
  PetscFunctionBeginUser;
  for (PetscInt l = 0; l < b->nlev; l++) {
    HsBandMerge *g = &b->lev[l];
    PetscCall(PetscFree3(g->f, g->ipiv, g->ids));
    PetscCall(PetscFree(g->r));
  }
  PetscCall(PetscFree(b->lev));
  PetscCall(PetscFree2(b->g0, b->g0ids));
  PetscCall(PetscFree2(b->xab, b->xtmp));
  b->nlev = 0, b->g0cap = 0;
  PetscFunctionReturn(0);
}

/* This rank's left-over rows as the leaf group: nleft rows over [block rank | block rank + 1], column-major, and
 * their ids (rows of the reduced system in its natural order: the ranks' left-over rows in rank order). */
static PetscErrorCode Leaf(PC_HsBand *b)
{
  PetscInt sA = BlockSize(b, b->rank), sB = BlockSize(b, b->rank + 1), m = b->nleft, k = sA + sB, id0 = 0;

  PetscFunctionBeginUser;
  if (m * k + 1 > b->g0cap) {
    PetscCall(PetscFree2(b->g0, b->g0ids));
    PetscCall(PetscMalloc2(m * k + 1, &b->g0, m + 1, &b->g0ids));
    b->g0cap = m * k + 1;
  }
  PetscCall(PetscArrayzero(b->g0, m * k));
  for (PetscMPIInt r = 0; r < b->rank; r++)
    id0 += b->nleft_all[r];
  for (PetscInt i = 0; i < m; i++) {
    PetscInt w  = b->leftslot[i];
    b->g0ids[i] = id0 + i;
    for (PetscInt q = 0; q < b->nL; q++) { /* the spike: oriented columns olo .. is - 1 */
      PetscInt g = b->rev ? b->nglob - 1 - (b->olo + q) : b->olo + q;
      b->g0[i + m * (g < b->isg ? g - b->ifs[b->rank] : sA + g - b->ifs[b->rank + 1])] = b->wleft[w * b->nL + q];
    }
    for (PetscInt col = b->ie; col <= b->ohi; col++) { /* the right interface, oriented */
      PetscInt g = b->rev ? b->nglob - 1 - col : col;
      b->g0[i + m * (g < b->isg ? g - b->ifs[b->rank] : sA + g - b->ifs[b->rank + 1])] = b->win[w * b->S + col - b->wbase];
    }
  }
  b->cur.m = m, b->cur.sA = sA, b->cur.sB = sB, b->cur.g = b->g0, b->cur.ld = PetscMax(m, 1), b->cur.ids = b->g0ids;
  PetscFunctionReturn(0);
}

/* The rows' swaps of a panel's getrf applied to the columns after it (and to the ids): rows i and ipiv[i] - 1 */
static void Swaps(PetscInt m, PetscInt sM, PetscInt k, PetscScalar *f, const PetscBLASInt *ipiv, PetscInt *ids)
{
  for (PetscInt i = 0; i < sM; i++) {
    PetscInt p = ipiv[i] - 1, t;
    if (p == i)
      continue;
    for (PetscInt c = sM; c < sM + k; c++) {
      PetscScalar v = f[i + m * c];
      f[i + m * c] = f[p + m * c], f[p + m * c] = v;
    }
    t = ids[i], ids[i] = ids[p], ids[p] = t;
  }
}

/* Level l's merge (this rank leads it): the rows of its own group (b->cur, over [A | M]) and the right group's (mr
 * rows, gr column-major over [M | B], ids idr) stacked over [M | A | B], M eliminated; b->cur becomes the merged
 * group's rows (over [A | B]). *bad: a zero pivot or fewer rows than M's columns (a singular system). */
static PetscErrorCode Merge(PC_HsBand *b, PetscInt l, PetscInt mr, PetscInt sB, const PetscScalar *gr,
                            const PetscInt *idr, PetscBool *bad)
{
  HsBandMerge   *g  = &b->lev[l];
  HsBandGroup   *cu = &b->cur;
  PetscInt       ml = cu->m, sA = cu->sA, sM = cu->sB, m = ml + mr, k = sA + sB, ncol = sM + k;
  PetscBLASInt   bm, bsM, bk, bmr, info = 0;
  PetscScalar    one = 1, mone = -1;
  PetscLogDouble flops;

  PetscFunctionBeginUser;
  if (m * ncol + 1 > g->cap || m + 1 > g->rcap) {
    PetscCall(PetscFree3(g->f, g->ipiv, g->ids));
    PetscCall(PetscFree(g->r));
    g->cap = m * ncol + 1, g->rcap = m + 1;
    PetscCall(PetscMalloc3(g->cap, &g->f, sM + 1, &g->ipiv, m + 1, &g->ids));
    PetscCall(PetscMalloc1(g->rcap, &g->r));
  }
  PetscCall(PetscArrayzero(g->f, m * ncol));
  for (PetscInt c = 0; c < sA + sM; c++) /* the left group's columns A, M */
    for (PetscInt i = 0; i < ml; i++)
      g->f[i + m * (c < sA ? sM + c : c - sA)] = cu->g[i + cu->ld * c];
  for (PetscInt c = 0; c < sM + sB; c++) /* the right group's M, B */
    for (PetscInt i = 0; i < mr; i++)
      g->f[ml + i + m * (c < sM ? c : sA + c)] = gr[i + mr * c];
  PetscCall(PetscArraycpy(g->ids, cu->ids, ml));
  PetscCall(PetscArraycpy(g->ids + ml, idr, mr));
  g->ml = ml, g->m = m, g->sA = sA, g->sM = sM, g->sB = sB;
  if (m < sM) { /* more columns than rows to pivot them: singular (the shapes go on, for the other ranks) */
    *bad  = PETSC_TRUE;
    cu->m = 0, cu->sB = sB, cu->g = g->f, cu->ld = 1, cu->ids = g->ids;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscBLASIntCast(m, &bm));
  PetscCall(PetscBLASIntCast(sM, &bsM));
  PetscCall(PetscBLASIntCast(k, &bk));
  PetscCall(PetscBLASIntCast(m - sM, &bmr));
  if (sM) {
    PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&bm, &bsM, g->f, &bm, g->ipiv, &info));
    if (info)
      *bad = PETSC_TRUE;
    Swaps(m, sM, k, g->f, g->ipiv, g->ids);
  }
  if (sM && k) { /* U12 = L11^{-1} (pivot rows' A, B); the others' Schur complement -= L21 U12 */
    PetscCallBLAS("BLAStrsm", BLAStrsm_("L", "L", "N", "U", &bsM, &bk, &one, g->f, &bm, g->f + m * sM, &bm));
    if (m > sM)
      PetscCallBLAS("BLASgemm", BLASgemm_("N", "N", &bmr, &bk, &bsM, &mone, g->f + sM, &bm, g->f + m * sM, &bm, &one,
                                          g->f + sM + m * sM, &bm));
  }
  flops = (PetscLogDouble)m * sM * sM - (PetscLogDouble)sM * sM * sM / 3 + (PetscLogDouble)sM * sM * k +
          2.0 * (m - sM) * sM * k;
  PetscCall(PetscLogFlops(flops));
  cu->m = m - sM, cu->sB = sB, cu->g = g->f + sM + m * sM, cu->ld = m, cu->ids = g->ids + sM;
  PetscFunctionReturn(0);
}

/* The group's rows (b->cur) packed column-major (m x (sA + sB)) into buf */
static void Pack(const HsBandGroup *cu, PetscScalar *buf)
{
  for (PetscInt c = 0; c < cu->sA + cu->sB; c++)
    for (PetscInt i = 0; i < cu->m; i++)
      buf[i + cu->m * c] = cu->g[i + cu->ld * c];
}

/* The levels' structure for this rank: nlev levels, and at each whether it leads a merge (partner: the right
 * group's leader) or sends (to its left group's leader, then idle until the down-sweep). */
static PetscErrorCode Levels(PC_HsBand *b)
{
  PetscInt L = 0;

  PetscFunctionBeginUser;
  while ((1 << L) < b->size)
    L++;
  if (b->lev && b->nlev == L)
    PetscFunctionReturn(0);
  PetscCall(HsBandReducedFree(b));
  PetscCall(PetscCalloc1(L + 1, &b->lev));
  b->nlev = L;
  for (PetscInt l = 0; l < L; l++) {
    PetscMPIInt step  = 1 << l;
    b->lev[l].partner = -1, b->lev[l].sendto = -1;
    if (b->rank % (2 * step) == 0 && b->rank + step < b->size)
      b->lev[l].partner = b->rank + step;
    else if (b->rank % (2 * step) == step)
      b->lev[l].sendto = b->rank - step;
  }
  PetscFunctionReturn(0);
}

/* The left-over rows' reduced system factored by cyclic reduction over the ranks (the head); *fail on a
 * singular one (every rank). Collective. */
PetscErrorCode HsBandFactorReduced(PC pc, PC_HsBand *b, PetscBool *fail)
{
  PetscFunctionBeginUser;
  *fail = PETSC_FALSE;
  PetscCallMPI(MPI_Allgather(&b->nleft, 1, MPIU_INT, b->nleft_all, 1, MPIU_INT, PetscObjectComm((PetscObject)pc)));
  if (!b->nred)
    PetscFunctionReturn(0);
  PetscCall(Levels(b));
  PetscCall(Leaf(b));
  PetscCall(HsBandFactorReducedLeaf(pc, b, fail));
  PetscFunctionReturn(0);
}

/* The merges of a factorization from the leaf group in b->cur (Leaf's for hsband; PC hsslab, pcslab.c, builds its
 * own: its interface rows over [block rank | block rank + 1], ids, and b->nleft_all, b->nred, the blocks' sizes
 * b->ife - b->ifs set); *fail on a singular reduced system (every rank). Collective. */
PetscErrorCode HsBandFactorReducedLeaf(PC pc, PC_HsBand *b, PetscBool *fail)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)pc);
  PetscBool bad  = PETSC_FALSE;

  PetscFunctionBeginUser;
  *fail = PETSC_FALSE;
  PetscCall(Levels(b));
  PetscCall(PetscLogEventBegin(HS_BAND_RED_FACTOR, pc, 0, 0, 0));
  b->sendlev = b->nlev;
  for (PetscInt l = 0; l < b->nlev; l++) {
    HsBandMerge *g = &b->lev[l];
    PetscInt     head[3];
    if (g->sendto >= 0) { /* the right group of a merge: its rows to the leader */
      PetscScalar *buf;
      PetscInt     n = b->cur.m * (b->cur.sA + b->cur.sB);
      head[0] = b->cur.m, head[1] = b->cur.sB, head[2] = bad;
      PetscCall(PetscMalloc1(n + 1, &buf));
      Pack(&b->cur, buf);
      PetscCallMPI(MPI_Send(head, 3, MPIU_INT, g->sendto, HS_BAND_TAG_HEAD, comm));
      PetscCallMPI(MPI_Send(buf, (PetscMPIInt)n, MPIU_SCALAR, g->sendto, HS_BAND_TAG_ROWS, comm));
      PetscCallMPI(MPI_Send(b->cur.ids, (PetscMPIInt)b->cur.m, MPIU_INT, g->sendto, HS_BAND_TAG_IDS, comm));
      PetscCall(PetscFree(buf));
      b->sendlev = l;
      break;
    }
    if (g->partner >= 0) {
      PetscScalar *gr;
      PetscInt    *idr, n;
      PetscCallMPI(MPI_Recv(head, 3, MPIU_INT, g->partner, HS_BAND_TAG_HEAD, comm, MPI_STATUS_IGNORE));
      n = head[0] * (b->cur.sB + head[1]);
      PetscCall(PetscMalloc2(n + 1, &gr, head[0] + 1, &idr));
      PetscCallMPI(MPI_Recv(gr, (PetscMPIInt)n, MPIU_SCALAR, g->partner, HS_BAND_TAG_ROWS, comm, MPI_STATUS_IGNORE));
      PetscCallMPI(MPI_Recv(idr, (PetscMPIInt)head[0], MPIU_INT, g->partner, HS_BAND_TAG_IDS, comm, MPI_STATUS_IGNORE));
      if (head[2])
        bad = PETSC_TRUE;
      PetscCall(Merge(b, l, head[0], head[1], gr, idr, &bad));
      PetscCall(PetscFree2(gr, idr));
    }
  }
  PetscCall(PetscLogEventEnd(HS_BAND_RED_FACTOR, pc, 0, 0, 0));
  b->send = b->cur; /* the sender's group (its boundaries' sizes for the down-sweep); rank 0: the whole */
  if (!b->rank && (b->cur.m || b->cur.sA || b->cur.sB))
    bad = PETSC_TRUE; /* rows left over or columns not eliminated: not square (cannot happen for a valid layout) */
  PetscCallMPI(MPIU_Allreduce(&bad, fail, 1, MPIU_BOOL, MPI_LOR, comm));
  {
    PetscInt mx = 0;
    for (PetscInt r = 0; r <= b->size; r++)
      mx = PetscMax(mx, BlockSize(b, r));
    PetscCall(PetscFree2(b->xab, b->xtmp));
    PetscCall(PetscMalloc2(3 * mx + 1, &b->xab, 3 * mx + 1, &b->xtmp));
  }
  PetscFunctionReturn(0);
}

/* A solve's up-sweep: the left-over rows' right-hand side (t) reduced level by level as the factorization's
 * merges reduced their rows. Rank 0 ends with nothing left; the others stop at the level where they send. */
static PetscErrorCode UpSweep(PC_HsBand *b, MPI_Comm comm, const PetscScalar *t)
{
  PetscScalar *r, *leaf, one = 1, mone = -1; /* r: the current group's right-hand side, first the leaf's */
  PetscInt     m = b->nleft;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(m + 1, &leaf));
  for (PetscInt i = 0; i < m; i++)
    leaf[i] = t[b->leftover[i]];
  r = leaf;
  for (PetscInt l = 0; l < b->nlev; l++) {
    HsBandMerge *g = &b->lev[l];
    if (g->sendto >= 0) {
      PetscCallMPI(MPI_Send(r, (PetscMPIInt)m, MPIU_SCALAR, g->sendto, HS_BAND_TAG_RHS, comm));
      break;
    }
    if (g->partner >= 0) { /* [own; received], the merge's swaps, L11's solve, the others' update */
      PetscBLASInt bm, bsM, bmr, bone = 1;
      PetscCall(PetscArraycpy(g->r, r, g->ml));
      PetscCallMPI(MPI_Recv(g->r + g->ml, (PetscMPIInt)(g->m - g->ml), MPIU_SCALAR, g->partner, HS_BAND_TAG_RHS, comm,
                            MPI_STATUS_IGNORE));
      for (PetscInt i = 0; i < g->sM; i++) {
        PetscInt    p = g->ipiv[i] - 1;
        PetscScalar v = g->r[i];
        g->r[i] = g->r[p], g->r[p] = v;
      }
      PetscCall(PetscBLASIntCast(g->m, &bm));
      PetscCall(PetscBLASIntCast(g->sM, &bsM));
      PetscCall(PetscBLASIntCast(g->m - g->sM, &bmr));
      if (g->sM) {
        PetscCallBLAS("BLAStrsm", BLAStrsm_("L", "L", "N", "U", &bsM, &bone, &one, g->f, &bm, g->r, &bm));
        if (bmr)
          PetscCallBLAS("BLASgemv",
                        BLASgemv_("N", &bmr, &bsM, &mone, g->f + g->sM, &bm, g->r, &bone, &one, g->r + g->sM, &bone));
      }
      PetscCall(PetscLogFlops((PetscLogDouble)g->sM * g->sM + 2.0 * (g->m - g->sM) * g->sM));
      r = g->r + g->sM, m = g->m - g->sM;
    }
  }
  PetscCall(PetscFree(leaf));
  PetscFunctionReturn(0);
}

/* A solve's down-sweep: each merge's leader, knowing its group's boundaries [x_A; x_B] (b->xab: rank 0 none),
 * solves the pivot rows for x_M = U11^{-1} (r1 - U12 [x_A; x_B]) and sends [x_M; x_B] (the right group's
 * boundaries) to its partner; its own group's right boundary becomes M. At the end b->xab holds this rank's
 * [block rank; block rank + 1]. */
static PetscErrorCode DownSweep(PC_HsBand *b, MPI_Comm comm)
{
  PetscScalar *x = b->xab, *xm = b->xtmp, one = 1, mone = -1;
  PetscInt     sA = b->send.sA, sB = b->send.sB, top = b->sendlev;

  PetscFunctionBeginUser;
  if (top < b->nlev) /* this rank's group was the right one at level top: its boundaries from the leader */
    PetscCallMPI(
        MPI_Recv(x, (PetscMPIInt)(sA + sB), MPIU_SCALAR, b->lev[top].sendto, HS_BAND_TAG_X, comm, MPI_STATUS_IGNORE));
  for (PetscInt l = top - 1; l >= 0; l--) {
    HsBandMerge *g = &b->lev[l];
    PetscBLASInt bm, bsM, bk, bone = 1;
    if (g->partner < 0)
      continue;
    PetscCall(PetscBLASIntCast(g->m, &bm));
    PetscCall(PetscBLASIntCast(g->sM, &bsM));
    PetscCall(PetscBLASIntCast(g->sA + g->sB, &bk));
    PetscCall(PetscArraycpy(xm, g->r, g->sM));
    if (g->sM && bk) /* x (= [x_A; x_B], sA = g->sA, sB = g->sB) */
      PetscCallBLAS("BLASgemv", BLASgemv_("N", &bsM, &bk, &mone, g->f + g->m * g->sM, &bm, x, &bone, &one, xm, &bone));
    if (g->sM)
      PetscCallBLAS("BLAStrsm", BLAStrsm_("L", "U", "N", "N", &bsM, &bone, &one, g->f, &bm, xm, &bm));
    PetscCall(PetscLogFlops((PetscLogDouble)g->sM * g->sM + 2.0 * g->sM * (g->sA + g->sB)));
    PetscCall(PetscArraycpy(xm + g->sM, x + g->sA, g->sB)); /* [x_M; x_B] for the partner */
    PetscCallMPI(MPI_Send(xm, (PetscMPIInt)(g->sM + g->sB), MPIU_SCALAR, g->partner, HS_BAND_TAG_X, comm));
    PetscCall(PetscArraycpy(x + g->sA, xm, g->sM)); /* this group: [x_A; x_M] */
  }
  PetscFunctionReturn(0);
}

/* A solve's up- and down-sweeps: t[b->leftover[i]] the leaf rows' right-hand side; b->xab ends with this rank's
 * boundaries' values [block rank; block rank + 1] (used directly by PC hsslab). Collective. */
PetscErrorCode HsBandReducedSweeps(PC pc, PC_HsBand *b, const PetscScalar *t)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)pc);

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(HS_BAND_RED_SOLVE, pc, 0, 0, 0));
  PetscCall(UpSweep(b, comm, t));
  PetscCall(DownSweep(b, comm));
  PetscCall(PetscLogEventEnd(HS_BAND_RED_SOLVE, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* The interface values of this rank's spike and right columns (b->x) from the reduced system, the right-hand
 * side t of the left-over rows forward-eliminated. Collective. */
PetscErrorCode HsBandReducedSolve(PC pc, PC_HsBand *b, const PetscScalar *t)
{
  PetscInt sA = BlockSize(b, b->rank);

  PetscFunctionBeginUser;
  PetscCall(HsBandReducedSweeps(pc, b, t));
  for (PetscInt part = 0; part < 2; part++) /* the spike's columns olo .. is - 1, the right interface's ie .. ohi */
    for (PetscInt col = part ? b->ie : b->olo; col <= (part ? b->ohi : b->is - 1); col++) {
      PetscInt g         = b->rev ? b->nglob - 1 - col : col;
      b->x[col - b->olo] = g < b->isg ? b->xab[g - b->ifs[b->rank]] : b->xab[sA + g - b->ifs[b->rank + 1]];
    }
  PetscFunctionReturn(0);
}

/* The parity of the permutation k -> p[k] of 0 .. n - 1 (1: odd), by its cycles; seen: n bytes of work */
static PetscInt Parity(const PetscInt *p, PetscInt n, char *seen)
{
  PetscInt odd = 0;

  for (PetscInt i = 0; i < n; i++)
    seen[i] = 0;
  for (PetscInt i = 0; i < n; i++)
    if (!seen[i]) {
      PetscInt L = 0;
      for (PetscInt j = i; !seen[j]; j = p[j])
        seen[j] = 1, L++;
      odd ^= (L - 1) & 1;
    }
  return odd;
}

/* det of the reduced matrix (natural order: rows the ranks' left-over rows in rank order, columns the interface
 * blocks): with pivots (row id, column id) taken in any order consistent with the merges (independent merges
 * commute: moving one's k1 steps past another's k2 changes both permutations' parities by k1 k2), det = sign(rows)
 * sign(columns) prod U_kk. Each rank multiplies its merges' pivots into m 2^e; rank 0 gathers the ids (O(P s)
 * integers, only when a determinant is asked for) and returns the permutations' parity in *odd (others: 0).
 * Collective. */
PetscErrorCode HsBandReducedDeterminant(PC pc, PC_HsBand *b, PetscReal *m, PetscInt *e, PetscInt *odd)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);
  PetscInt     n = 0, *ids, *all = NULL;
  PetscMPIInt *cnt = NULL, *dsp = NULL, nn;

  PetscFunctionBeginUser;
  *odd = 0;
  if (!b->nred)
    PetscFunctionReturn(0);
  for (PetscInt l = 0; l < b->sendlev && l < b->nlev; l++)
    if (b->lev[l].partner >= 0)
      n += b->lev[l].sM;
  PetscCall(PetscMalloc1(2 * n + 1, &ids));
  n = 0;
  for (PetscInt l = 0; l < b->sendlev && l < b->nlev; l++) {
    HsBandMerge *g = &b->lev[l];
    PetscInt     bM;
    if (g->partner < 0)
      continue;
    bM = g->partner; /* M: the block between rank partner - 1 and partner */
    for (PetscInt i = 0; i < g->sM; i++) {
      int x;
      *m *= g->f[i + g->m * i];
      if (PetscAbsReal(*m) > 0x1p100 || PetscAbsReal(*m) < 0x1p-100)
        *m = frexp(*m, &x), *e += x;
      ids[2 * n] = g->ids[i], ids[2 * n + 1] = b->ioff[bM] + i, n++;
    }
  }
  PetscCall(PetscMPIIntCast(2 * n, &nn));
  if (!b->rank) {
    PetscCall(PetscMalloc2(b->size, &cnt, b->size, &dsp));
    PetscCall(PetscMalloc1(2 * b->nred + 1, &all));
  }
  PetscCallMPI(MPI_Gather(&nn, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm));
  if (!b->rank)
    for (PetscMPIInt r = 0, d = 0; r < b->size; r++)
      dsp[r] = d, d += cnt[r];
  PetscCallMPI(MPI_Gatherv(ids, nn, MPIU_INT, all, cnt, dsp, MPIU_INT, 0, comm));
  PetscCall(PetscFree(ids));
  if (!b->rank) {
    PetscInt *pr, *pc2;
    char     *seen;
    PetscCall(PetscMalloc3(b->nred, &pr, b->nred, &pc2, b->nred, &seen));
    for (PetscInt k = 0; k < b->nred; k++)
      pr[k] = all[2 * k], pc2[k] = all[2 * k + 1];
    *odd = Parity(pr, b->nred, seen) ^ Parity(pc2, b->nred, seen);
    PetscCall(PetscFree3(pr, pc2, seen));
    PetscCall(PetscFree2(cnt, dsp));
    PetscCall(PetscFree(all));
  }
  PetscFunctionReturn(0);
}
