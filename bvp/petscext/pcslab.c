/* hamshoot: PC "hsslab", an exact LU of a matrix whose rank partitions form a chain (rank r's rows touch only the
 * columns of ranks r - 1, r, r + 1), each rank's slab factored by a sequential sparse LU (issue 44, item 4).
 *
 * For many bodies (ncar: 4n = 256 unknowns a node, a car coupled to its neighbours) a node block is itself sparse
 * and hsband's dense elimination fills it; hsdrop's MUMPS LU of the whole matrix keeps the sparsity but its
 * analysis runs on rank 0 and its factorization scales poorly. This PC splits the work by ranks, as hsband does:
 *
 *   Rank r owns rows and columns [rs, re): its diagonal block K_r (the local part of an MPIAIJ matrix). Its
 *   interface Gamma_r: the local indices i whose row has an entry in a neighbour's columns or whose column is
 *   touched by a neighbour's rows, split into Gamma_r^L (coupled to rank r - 1) and Gamma_r^R (to r + 1). K_r is
 *   factored by MUMPS on PETSC_COMM_SELF (its own analysis and fill-reducing ordering: AMD, which MUMPS 5.5 uses
 *   with a Schur complement whatever ICNTL(7) says; -pc_hsslab_ordering applies without one, on one rank) with
 *   the Schur complement on Gamma_r (ICNTL(19)): S_r = K_GG - K_GI K_II^-1 K_IG, dense. The interface system on
 *   all Gamma is then a chain: rank r's rows Gamma_r touch the blocks J_r = [Gamma_{r-1}^R, Gamma_r^L] and J_{r+1}
 *   = [Gamma_r^R, Gamma_{r+1}^L] only (by S_r and the off-rank entries), which is the shape hsband's reduced
 *   system has: it is factored by the same block cyclic reduction over the ranks (bandreduce.c, log2 P levels of
 *   neighbour merges, GEPP on each merge's panel). A solve: MUMPS' condensation (ICNTL(26) = 1) gives the
 *   interface rows' right-hand side, the reduced system's sweeps give Gamma's values (and the neighbours'), and
 *   MUMPS' expansion (ICNTL(26) = 2) the interior. Nothing is gathered: each rank's analysis and factorization
 *   run on its slab alone; the reduced system's messages are those of hsband's.
 *
 * Stability: MUMPS pivots (threshold CNTL(1) = 1) within K_II only; the interface unknowns are the Schur
 * complement's. So K_II must be nonsingular: for the transcription that holds where the matrix' columns are
 * matched to its rows as the chain's (state equations of interval k on x_{k+1}, costate equations of node k on
 * lambda_{k-1/2}; hsdrop's -pc_hsdrop_match does it on more than one rank), K_II then being the Jacobian of a
 * sub-problem with x given at its left end and lambda at its right, like the whole problem's. A zero pivot in
 * K_II (MUMPS' INFO(1) = -10) or in the reduced system fails the PC (PC_FACTOR_NUMERIC_ZEROPIVOT; -info says
 * which rank), which SNES reports as a failed linear solve.
 *
 * Limits: a chain (no entries beyond the neighbour ranks), each rank's interface to the left disjoint from its
 * interface to the right, and an interior. Outside them (a rank with too few rows) the PC factors by MUMPS LU
 * of the whole matrix instead (an inner PC, said by -ksp_view), or with -pc_hsslab_fallback false stops.
 *
 * The determinant (the branch-point test): GetDeterminant below. Used as the inner PC of hsdrop (-hs_linear_solver
 * slab: GMRES on the Jacobian, hsdrop's dropped matrix factored by this PC). */
#include "bandimpl.h"

#include <dmumps_c.h>

#define ICNTL(I) icntl[(I)-1]
#define CNTL(I) cntl[(I)-1]
#define INFO(I) info[(I)-1]
#define RINFO(I) rinfo[(I)-1]
#define RINFOG(I) rinfog[(I)-1]
#define INFOG(I) infog[(I)-1]
#define HS_SLAB_TAG_N 4411   /* a neighbour's count of indices */
#define HS_SLAB_TAG_IDX 4412 /* ... and the indices */

typedef struct {
  DMUMPS_STRUC_C   id;             /* the slab's MUMPS instance (on PETSC_COMM_SELF) */
  PetscBool        live, analysed; /* id initialized; analysed for this layout */
  Mat              laid;           /* the matrix (and nonzero state) of the layout */
  PetscObjectState laid_state;
  PetscBool        ok;                 /* within the limits (else the inner MUMPS LU) */
  char             why[256];           /* why not */
  PC               inner;              /* the fallback */
  PetscInt         n, nG, nGL, nl, nr; /* local size, interface (left part), the neighbours' facing parts */
  PetscInt        *gam;                /* the interface's local indices, Gamma^L then Gamma^R (nG) */
  MUMPS_INT       *irn, *jcn, *lvs;    /* K_r's entries (1-based), the Schur list */
  PetscInt64       nnz;
  PetscScalar     *a, *schur, *rhs, *redrhs;
  PetscInt         no, *orow, *ocol, *oidx; /* off-rank entries: interface row, leaf column, index into Ao's values */
  PetscScalar     *leaf;                    /* the leaf group's rows, nG x (|J_r| + |J_{r+1}|), and their ids */
  PetscInt        *leafids;
  PC_HsBand        red;               /* the reduced system's data (bandreduce.c) */
  PetscInt         ordering, icntl14; /* -pc_hsslab_ordering (ICNTL(7)); MUMPS' workspace relaxation */
  PetscBool        fallback;          /* -pc_hsslab_fallback */
} PC_HsSlab;

static PetscLogEvent HS_SLAB_LAYOUT, HS_SLAB_FACTOR, HS_SLAB_REDUCED, HS_SLAB_SOLVE;
static PetscBool     hs_slab_events = PETSC_FALSE;

static PetscErrorCode FinalizeEvents(void)
{
  PetscFunctionBeginUser;
  hs_slab_events = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* -log_view: HsSlabLayout (the interfaces and MUMPS' analysis, once per pattern), HsSlabFactor (the slabs'
 * factorizations with their Schur complements; flops MUMPS' RINFO(3)), HsSlabReduced (the reduced system:
 * the wait for the slowest slab and bandreduce.c's HsBandRedFactor inside), HsSlabSolve (a solve: condensation,
 * HsBandRedSolve, expansion). */
static PetscErrorCode RegisterEvents(void)
{
  PetscFunctionBeginUser;
  if (hs_slab_events)
    PetscFunctionReturn(0);
  PetscCall(PetscLogEventRegister("HsSlabLayout", PC_CLASSID, &HS_SLAB_LAYOUT));
  PetscCall(PetscLogEventRegister("HsSlabFactor", PC_CLASSID, &HS_SLAB_FACTOR));
  PetscCall(PetscLogEventRegister("HsSlabReduced", PC_CLASSID, &HS_SLAB_REDUCED));
  PetscCall(PetscLogEventRegister("HsSlabSolve", PC_CLASSID, &HS_SLAB_SOLVE));
  PetscCall(HsBandReducedRegisterEvents());
  PetscCall(PetscRegisterFinalize(FinalizeEvents));
  hs_slab_events = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* MUMPS called on the slab's instance */
static PetscErrorCode Mumps(PC_HsSlab *s, MUMPS_INT job)
{
  PetscFunctionBeginUser;
  s->id.job = job;
  PetscStackCallExternalVoid("dmumps_c", dmumps_c(&s->id));
  PetscFunctionReturn(0);
}

/* The layout's arrays and MUMPS' instance freed */
static PetscErrorCode Forget(PC_HsSlab *s)
{
  PetscFunctionBeginUser;
  if (s->live)
    PetscCall(Mumps(s, -2));
  s->live = s->analysed = PETSC_FALSE;
  PetscCall(MatDestroy(&s->laid));
  PetscCall(PetscFree(s->gam));
  PetscCall(PetscFree3(s->irn, s->jcn, s->a));
  PetscCall(PetscFree(s->lvs));
  PetscCall(PetscFree3(s->schur, s->rhs, s->redrhs));
  PetscCall(PetscFree3(s->orow, s->ocol, s->oidx));
  PetscCall(PetscFree2(s->leaf, s->leafids));
  PetscCall(HsBandReducedFree(&s->red));
  PetscCall(PetscFree5(s->red.nleft_all, s->red.ifs, s->red.ife, s->red.ioff, s->red.leftover));
  s->nG = s->nGL = s->no = 0;
  PetscFunctionReturn(0);
}

/* The local part of A: its diagonal block Ad and off-rank block Ao (NULL on one rank) with Ao's global columns */
static PetscErrorCode Parts(Mat A, Mat *Ad, Mat *Ao, const PetscInt **garray)
{
  PetscBool mpi;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  *Ao = NULL, *garray = NULL, *Ad = A;
  if (mpi)
    PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray));
  PetscFunctionReturn(0);
}

/* Send to the neighbours (left: rank - 1, right: rank + 1) nl/nr indices and receive theirs (allocated) */
static PetscErrorCode Swap(MPI_Comm comm, PetscMPIInt rank, PetscMPIInt size, PetscInt nsl, const PetscInt *sl,
                           PetscInt nsr, const PetscInt *sr, PetscInt *nrl, PetscInt **rl, PetscInt *nrr, PetscInt **rr)
{
  PetscMPIInt left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;

  PetscFunctionBeginUser;
  *nrl = *nrr = 0;
  PetscCallMPI(MPI_Sendrecv(&nsl, 1, MPIU_INT, left, HS_SLAB_TAG_N, nrr, 1, MPIU_INT, right, HS_SLAB_TAG_N, comm,
                            MPI_STATUS_IGNORE));
  PetscCallMPI(MPI_Sendrecv(&nsr, 1, MPIU_INT, right, HS_SLAB_TAG_N, nrl, 1, MPIU_INT, left, HS_SLAB_TAG_N, comm,
                            MPI_STATUS_IGNORE));
  PetscCall(PetscMalloc1(*nrl + 1, rl));
  PetscCall(PetscMalloc1(*nrr + 1, rr));
  PetscCallMPI(MPI_Sendrecv(sl, (PetscMPIInt)nsl, MPIU_INT, left, HS_SLAB_TAG_IDX, *rr, (PetscMPIInt)*nrr, MPIU_INT,
                            right, HS_SLAB_TAG_IDX, comm, MPI_STATUS_IGNORE));
  PetscCallMPI(MPI_Sendrecv(sr, (PetscMPIInt)nsr, MPIU_INT, right, HS_SLAB_TAG_IDX, *rl, (PetscMPIInt)*nrl, MPIU_INT,
                            left, HS_SLAB_TAG_IDX, comm, MPI_STATUS_IGNORE));
  PetscFunctionReturn(0);
}

/* The interface marks: side[i] bit 1 (left) / 2 (right) for local index i, from the off-rank entries of the local
 * rows and the neighbours' off-rank columns that are ours; *chain: no entry beyond the neighbours. Collective. */
static PetscErrorCode Marks(Mat A, const PetscInt *ranges, char *side, PetscBool *chain)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt     rank, size;
  Mat             Ad, Ao;
  const PetscInt *garray, *ia, *ja;
  PetscInt        rs, nro, nco, nsl = 0, nsr = 0, *sl, *sr, nrl, nrr, *rl, *rr;
  PetscBool       done;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(Parts(A, &Ad, &Ao, &garray));
  rs     = ranges[rank];
  *chain = PETSC_TRUE;
  nco    = 0;
  if (Ao) {
    PetscCall(MatGetSize(Ao, NULL, &nco));
    PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nro, &ia, &ja, &done));
    for (PetscInt i = 0; i < nro; i++)
      for (PetscInt k = ia[i]; k < ia[i + 1]; k++) {
        PetscInt g = garray[ja[k]];
        if (g < ranges[rank] && g >= (rank ? ranges[rank - 1] : 0))
          side[i] |= 1;
        else if (g >= ranges[rank + 1] && rank + 1 < size && g < ranges[rank + 2])
          side[i] |= 2;
        else
          *chain = PETSC_FALSE;
      }
    PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nro, &ia, &ja, &done));
  }
  PetscCall(PetscMalloc2(nco + 1, &sl, nco + 1, &sr)); /* garray is sorted: the left neighbour's columns first */
  for (PetscInt c = 0; c < nco; c++) {
    if (garray[c] < rs && rank && garray[c] >= ranges[rank - 1])
      sl[nsl++] = garray[c];
    else if (rank + 1 < size && garray[c] >= ranges[rank + 1] && garray[c] < ranges[rank + 2])
      sr[nsr++] = garray[c];
  }
  PetscCall(Swap(comm, rank, size, nsl, sl, nsr, sr, &nrl, &rl, &nrr, &rr));
  for (PetscInt k = 0; k < nrl; k++) /* our columns the left neighbour's rows touch */
    side[rl[k] - rs] |= 1;
  for (PetscInt k = 0; k < nrr; k++)
    side[rr[k] - rs] |= 2;
  PetscCall(PetscFree2(sl, sr));
  PetscCall(PetscFree(rl));
  PetscCall(PetscFree(rr));
  PetscFunctionReturn(0);
}

/* The interface (s->gam, Gamma^L then Gamma^R) from the marks, and the neighbours' facing parts' global indices:
 * gl (Gamma_{r-1}^R) and gr (Gamma_{r+1}^L), both ascending. Collective. */
static PetscErrorCode Interface(PC_HsSlab *s, MPI_Comm comm, PetscInt rs, const char *side, PetscInt **gl,
                                PetscInt **gr)
{
  PetscMPIInt rank, size;
  PetscInt   *glob;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  s->nG = s->nGL = 0;
  for (PetscInt i = 0; i < s->n; i++)
    s->nG += side[i] != 0, s->nGL += side[i] == 1;
  PetscCall(PetscMalloc1(s->nG + 1, &s->gam));
  PetscCall(PetscMalloc1(s->nG + 1, &glob));
  for (PetscInt i = 0, l = 0, r = s->nGL; i < s->n; i++)
    if (side[i] == 1)
      s->gam[l] = i, glob[l++] = rs + i;
    else if (side[i] == 2)
      s->gam[r] = i, glob[r++] = rs + i;
  PetscCall(Swap(comm, rank, size, s->nGL, glob, s->nG - s->nGL, glob + s->nGL, &s->nl, gl, &s->nr, gr));
  PetscCall(PetscFree(glob));
  PetscFunctionReturn(0);
}

/* The off-rank entries as leaf entries: row (its place in Gamma), column in [J_r | J_{r+1}] (gl's place; or
 * nl + nG + gr's place), and its index in Ao's values. Not collective. */
static PetscErrorCode Couplings(PC_HsSlab *s, Mat A, const PetscInt *gl, const PetscInt *gr)
{
  Mat             Ad, Ao;
  const PetscInt *garray, *ia, *ja;
  PetscInt        nro, *gpos;
  PetscBool       done;

  PetscFunctionBeginUser;
  PetscCall(Parts(A, &Ad, &Ao, &garray));
  s->no = 0;
  if (!Ao)
    PetscFunctionReturn(0);
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nro, &ia, &ja, &done));
  PetscCall(PetscMalloc1(s->n + 1, &gpos));
  for (PetscInt j = 0; j < s->nG; j++)
    gpos[s->gam[j]] = j;
  PetscCall(PetscMalloc3(ia[nro] + 1, &s->orow, ia[nro] + 1, &s->ocol, ia[nro] + 1, &s->oidx));
  for (PetscInt i = 0; i < nro; i++)
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) {
      PetscInt g = garray[ja[k]], p;
      PetscCall(PetscFindInt(g, s->nl, gl, &p));
      if (p < 0) {
        PetscCall(PetscFindInt(g, s->nr, gr, &p));
        PetscCheck(p >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "hsslab: column %" PetscInt_FMT " in no interface", g);
        p += s->nl + s->nG;
      }
      s->orow[s->no] = gpos[i], s->ocol[s->no] = p, s->oidx[s->no++] = k;
    }
  PetscCall(PetscFree(gpos));
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nro, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* The reduced system's shape for bandreduce.c: every rank's interface rows and block sizes |J_r|. Collective. */
static PetscErrorCode ReducedShape(PC_HsSlab *s, MPI_Comm comm)
{
  PC_HsBand  *b = &s->red;
  PetscMPIInt size, rank;
  PetscInt    mine[2] = {s->nGL, s->nG - s->nGL}, *all;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  b->size = size, b->rank = rank, b->nleft = s->nG;
  PetscCall(PetscMalloc5(size + 1, &b->nleft_all, size + 2, &b->ifs, size + 2, &b->ife, size + 2, &b->ioff, s->nG + 1,
                         &b->leftover));
  PetscCall(PetscMalloc1(2 * size + 2, &all));
  PetscCallMPI(MPI_Allgather(mine, 2, MPIU_INT, all, 2, MPIU_INT, comm));
  b->nred = 0;
  for (PetscMPIInt r = 0; r <= size; r++) {
    b->ifs[r] = 0, b->ife[r] = (r ? all[2 * (r - 1) + 1] : 0) + (r < size ? all[2 * r] : 0);
    b->ioff[r] = r ? b->ioff[r - 1] + b->ife[r - 1] : 0; /* block r's first column (the determinant's ids) */
    if (r < size)
      b->nleft_all[r] = all[2 * r] + all[2 * r + 1], b->nred += b->nleft_all[r];
  }
  for (PetscInt i = 0; i < s->nG; i++)
    b->leftover[i] = i;
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* K_r's entries for MUMPS (1-based; values copied at each factorization), the instance created and the slab
 * analysed with the Schur complement on Gamma (if any). *bad: MUMPS' analysis failed. Not collective. */
static PetscErrorCode Analyse(PC_HsSlab *s, Mat A, PetscBool *bad)
{
  Mat             Ad, Ao;
  const PetscInt *garray, *ia, *ja;
  PetscInt        nr;
  PetscBool       done;

  PetscFunctionBeginUser;
  PetscCall(Parts(A, &Ad, &Ao, &garray));
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
  s->nnz = ia[nr];
  PetscCall(PetscMalloc3(s->nnz + 1, &s->irn, s->nnz + 1, &s->jcn, s->nnz + 1, &s->a));
  for (PetscInt i = 0; i < nr; i++)
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++)
      s->irn[k] = (MUMPS_INT)(i + 1), s->jcn[k] = (MUMPS_INT)(ja[k] + 1);
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
  PetscCall(PetscMalloc3(s->nG * s->nG + 1, &s->schur, s->n + 1, &s->rhs, s->nG + 1, &s->redrhs));
  PetscCall(PetscMalloc1(s->nG + 1, &s->lvs));
  for (PetscInt j = 0; j < s->nG; j++)
    s->lvs[j] = (MUMPS_INT)(s->gam[j] + 1);
  PetscCall(PetscMemzero(&s->id, sizeof s->id));
  s->id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(PETSC_COMM_SELF);
  s->id.par = 1, s->id.sym = 0;
  PetscCall(Mumps(s, -1));
  s->live        = PETSC_TRUE;
  s->id.ICNTL(1) = s->id.ICNTL(2) = s->id.ICNTL(3) = -1, s->id.ICNTL(4) = 0; /* no printing */
  s->id.ICNTL(7) = (MUMPS_INT)s->ordering, s->id.ICNTL(14) = (MUMPS_INT)s->icntl14;
  s->id.CNTL(1)   = HS_MUMPS_CNTL1_DEFAULT;
  s->id.ICNTL(33) = 1; /* the determinant (of K_II where a Schur complement is asked: MUMPS leaves it out) */
  s->id.n = (MUMPS_INT)s->n, s->id.nnz = s->nnz, s->id.irn = s->irn, s->id.jcn = s->jcn, s->id.a = s->a;
  if (s->nG) {
    s->id.ICNTL(19)  = 1; /* centralized, by rows */
    s->id.size_schur = (MUMPS_INT)s->nG, s->id.listvar_schur = s->lvs, s->id.schur = s->schur;
    s->id.schur_lld = (MUMPS_INT)s->nG;
  }
  PetscCall(Mumps(s, 1));
  PetscCall(PetscInfo(NULL,
                      "hsslab: slab of %" PetscInt_FMT " unknowns, interface %" PetscInt_FMT
                      ": MUMPS' ordering INFOG(7) = %d, estimated flops %g\n",
                      s->n, s->nG, (int)s->id.INFOG(7), (double)s->id.RINFO(1)));
  *bad        = (PetscBool)(s->id.INFO(1) < 0);
  s->analysed = (PetscBool) !*bad;
  PetscFunctionReturn(0);
}

/* A new pattern: the interfaces, the couplings, the reduced system's shape and the slabs' analyses; or, outside
 * the limits, s->ok false and s->why. Collective. */
static PetscErrorCode Layout(PC pc, PC_HsSlab *s, Mat A)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)pc);
  const PetscInt *ranges;
  PetscInt        rs, re, m, nn, *gl = NULL, *gr = NULL, code = 0, nG = 0, info = 0;
  PetscMPIInt     size, rank;
  PetscBool       chain, bad = PETSC_FALSE;
  char           *side;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(HS_SLAB_LAYOUT, pc, 0, 0, 0));
  PetscCall(Forget(s));
  s->ok = PETSC_FALSE, s->why[0] = 0;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetOwnershipRanges(A, &ranges));
  PetscCall(MatGetLocalSize(A, &m, &nn));
  s->n = re - rs;
  PetscCall(PetscCalloc1(s->n + 1, &side));
  PetscCall(Marks(A, ranges, side, &chain));
  for (PetscInt i = 0; i < s->n; i++)
    nG += side[i] != 0, code = PetscMax(code, side[i] == 3 ? 2 : 0);
  if (!chain || m != nn)
    code = 1;
  else if (size > 1 && nG >= s->n)
    code = PetscMax(code, 2);
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &code, 1, MPIU_INT, MPI_MAX, comm));
  if (code == 1)
    PetscCall(PetscSNPrintf(s->why, sizeof s->why, "a rank's rows touch columns beyond its neighbour ranks'"));
  else if (code == 2) {
    PetscInt fewest = s->n;
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &fewest, 1, MPIU_INT, MPI_MIN, comm));
    PetscCall(PetscSNPrintf(s->why, sizeof s->why,
                            "a rank's slab is too thin: an unknown couples to both neighbour ranks or no interior is "
                            "left (the fewest rows on a rank: %" PetscInt_FMT ")",
                            fewest));
  }
  if (!code) {
    PetscCall(Interface(s, comm, rs, side, &gl, &gr));
    PetscCall(Couplings(s, A, gl, gr));
    PetscCall(ReducedShape(s, comm));
    PetscCall(Analyse(s, A, &bad));
    info = bad ? s->id.INFO(1) : 0;
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &info, 1, MPIU_INT, MPI_MIN, comm));
    if (info)
      PetscCall(
          PetscSNPrintf(s->why, sizeof s->why, "MUMPS' analysis of a slab failed (INFO(1) = %" PetscInt_FMT ")", info));
    s->ok = (PetscBool)!info;
  }
  PetscCall(PetscFree(side));
  PetscCall(PetscFree(gl));
  PetscCall(PetscFree(gr));
  PetscCall(PetscObjectReference((PetscObject)A));
  s->laid = A;
  PetscCall(MatGetNonzeroState(A, &s->laid_state));
  PetscCall(PetscLogEventEnd(HS_SLAB_LAYOUT, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* The leaf group of the reduced system: the interface rows over [J_r | J_{r+1}] = [gl, Gamma^L | Gamma^R, gr]:
 * S_r (by rows from MUMPS) at columns nl .. nl + nG - 1, the off-rank entries at theirs. Not collective. */
static PetscErrorCode Leaf(PC_HsSlab *s, Mat A)
{
  PC_HsBand         *b  = &s->red;
  PetscInt           sA = s->nl + s->nGL, sB = s->nG - s->nGL + s->nr, m = s->nG, id0 = 0;
  Mat                Ad, Ao;
  const PetscInt    *garray;
  const PetscScalar *ov;

  PetscFunctionBeginUser;
  if (!s->leaf) /* not b->g0: bandreduce.c's first Levels frees that */
    PetscCall(PetscMalloc2(m * (sA + sB) + 1, &s->leaf, m + 1, &s->leafids));
  PetscCall(PetscArrayzero(s->leaf, m * (sA + sB)));
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt j = 0; j < m; j++)
      s->leaf[i + m * (s->nl + j)] = s->schur[i * m + j];
  PetscCall(Parts(A, &Ad, &Ao, &garray));
  if (Ao) {
    PetscCall(MatSeqAIJGetArrayRead(Ao, &ov));
    for (PetscInt k = 0; k < s->no; k++)
      s->leaf[s->orow[k] + m * s->ocol[k]] += ov[s->oidx[k]];
    PetscCall(MatSeqAIJRestoreArrayRead(Ao, &ov));
  }
  for (PetscMPIInt r = 0; r < b->rank; r++)
    id0 += b->nleft_all[r];
  for (PetscInt i = 0; i < m; i++)
    s->leafids[i] = id0 + i;
  b->cur.m = m, b->cur.sA = sA, b->cur.sB = sB, b->cur.g = s->leaf, b->cur.ld = PetscMax(m, 1), b->cur.ids = s->leafids;
  PetscFunctionReturn(0);
}

/* The slab's numeric factorization with its Schur complement: MUMPS' workspace retry (HsMumpsWorkspaceShort);
 * *info: MUMPS' INFO(1) at the end. Not collective. */
static PetscErrorCode FactorSlab(PC pc, PC_HsSlab *s, Mat A, PetscInt *info)
{
  Mat                Ad, Ao;
  const PetscInt    *garray;
  const PetscScalar *av;

  PetscFunctionBeginUser;
  PetscCall(Parts(A, &Ad, &Ao, &garray));
  PetscCall(MatSeqAIJGetArrayRead(Ad, &av));
  PetscCall(PetscArraycpy(s->a, av, s->nnz));
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &av));
  for (PetscInt attempt = 0;; attempt++) {
    PetscInt next;
    PetscCall(Mumps(s, 2));
    *info = s->id.INFO(1);
    if (!HsMumpsWorkspaceShort(*info, s->icntl14, &next) || attempt >= HS_MUMPS_RETRIES)
      break;
    PetscCall(PetscInfo(pc,
                        "hsslab: MUMPS INFO(1) = %" PetscInt_FMT ": ICNTL(14) %" PetscInt_FMT " -> %" PetscInt_FMT "\n",
                        *info, s->icntl14, next));
    s->icntl14 = next, s->id.ICNTL(14) = (MUMPS_INT)next;
  }
  if (*info >= 0)
    PetscCall(PetscLogFlops(s->id.RINFO(3)));
  PetscFunctionReturn(0);
}

/* The fallback: MUMPS LU of the whole matrix (an inner PC), set up on pc's operators. Collective. */
static PetscErrorCode SetUpInner(PC pc, PC_HsSlab *s)
{
  PCFailedReason fr;
  PetscInt       info;

  PetscFunctionBeginUser;
  PetscCheck(s->fallback, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
             "hsslab: %s (MUMPS LU of the whole matrix instead with -pc_hsslab_fallback true)", s->why);
  if (!s->inner) {
    PetscCall(PetscInfo(pc, "hsslab: %s: MUMPS LU of the whole matrix instead\n", s->why));
    PetscCall(HsPCCreateMumpsLU(PetscObjectComm((PetscObject)pc), &s->inner));
  }
  PetscCall(PCSetOperators(s->inner, pc->mat, pc->pmat));
  PetscCall(HsPCSetUpMumpsLU(s->inner, s->icntl14, -1, &fr, &info)); /* the determinant, as the slabs' */
  if (fr)
    PetscCall(PCSetFailedReason(pc, fr));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_HsSlab(PC pc)
{
  PC_HsSlab       *s = pc->data;
  PetscObjectState state;
  PetscInt         info = 0;
  PetscBool        fail = PETSC_FALSE;

  PetscFunctionBeginUser;
  pc->failedreason = PC_NOERROR;
  PetscCall(RegisterEvents());
  PetscCall(HsPCCheckAIJ(pc));
  PetscCall(MatGetNonzeroState(pc->pmat, &state));
  if (s->laid != pc->pmat || s->laid_state != state)
    PetscCall(Layout(pc, s, pc->pmat));
  if (!s->ok) {
    PetscCall(SetUpInner(pc, s));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscLogEventBegin(HS_SLAB_FACTOR, pc, 0, 0, 0));
  PetscCall(FactorSlab(pc, s, pc->pmat, &info));
  PetscCall(PetscLogEventEnd(HS_SLAB_FACTOR, pc, 0, 0, 0));
  PetscCall(PetscLogEventBegin(HS_SLAB_REDUCED, pc, 0, 0, 0));
  if (info < 0)
    PetscCall(PetscInfo(
        pc, "hsslab: rank %d: MUMPS' factorization of its slab's interior failed (INFO(1) = %" PetscInt_FMT "%s)\n",
        s->red.rank, info, info == -10 ? ": singular" : ""));
  fail = (PetscBool)(info < 0);
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &fail, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)pc)));
  if (!fail && s->red.nred) {
    PetscCall(Leaf(s, pc->pmat));
    PetscCall(HsBandFactorReducedLeaf(pc, &s->red, &fail));
    if (fail)
      PetscCall(PetscInfo(pc, "hsslab: the interface system is singular\n"));
  }
  PetscCall(PetscLogEventEnd(HS_SLAB_REDUCED, pc, 0, 0, 0));
  if (fail)
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCApply_HsSlab(PC pc, Vec xv, Vec yv)
{
  PC_HsSlab         *s = pc->data;
  const PetscScalar *x;
  PetscScalar       *y;
  PetscInt           info;

  PetscFunctionBeginUser;
  if (!s->ok) {
    PetscCall(PCApply(s->inner, xv, yv));
    PetscFunctionReturn(0);
  }
  if (pc->failedreason) { /* as PETSc's factorizations do after a failure: no solution */
    PetscCall(VecSetInf(yv));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscLogEventBegin(HS_SLAB_SOLVE, pc, 0, 0, 0));
  PetscCall(VecGetArrayRead(xv, &x));
  PetscCall(PetscArraycpy(s->rhs, x, s->n));
  PetscCall(VecRestoreArrayRead(xv, &x));
  s->id.nrhs = 1, s->id.lrhs = (MUMPS_INT)PetscMax(s->n, 1), s->id.rhs = s->rhs;
  s->id.ICNTL(26) = 0;
  if (s->nG) { /* condensation: the interface rows' right-hand side */
    s->id.ICNTL(26) = 1, s->id.redrhs = s->redrhs, s->id.lredrhs = (MUMPS_INT)s->nG;
  }
  PetscCall(Mumps(s, 3));
  info = s->id.INFO(1);
  if (s->red.nred) {
    PetscCall(HsBandReducedSweeps(pc, &s->red, s->redrhs));
    for (PetscInt j = 0; j < s->nG; j++)
      s->redrhs[j] = s->red.xab[s->nl + j];
  }
  if (s->nG) { /* expansion: the interior from the interface's values */
    s->id.ICNTL(26) = 2;
    PetscCall(Mumps(s, 3));
    info = PetscMin(info, s->id.INFO(1));
    for (PetscInt j = 0; j < s->nG; j++)
      s->rhs[s->gam[j]] = s->redrhs[j];
  }
  PetscCheck(info >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "hsslab: MUMPS' solve failed (INFO(1) = %" PetscInt_FMT ")",
             info);
  PetscCall(PetscLogFlops(4.0 * (PetscLogDouble)s->id.INFO(9) + 2.0 * s->no));
  PetscCall(VecGetArray(yv, &y));
  PetscCall(PetscArraycpy(y, s->rhs, s->n));
  PetscCall(VecRestoreArray(yv, &y));
  PetscCall(PetscLogEventEnd(HS_SLAB_SOLVE, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_HsSlab(PC pc, PetscOptionItems *PetscOptionsObject)
{
  PC_HsSlab *s = pc->data;

  PetscFunctionBeginUser;
  const char *pfx; /* the key as given (round 19: -hsdrop_pc_hsslab_ordering 1 was named -pc_hsslab_ordering); an
                      error ends PETSc's options block first (HsOptionsCheck: it had leaked, round 19) */

  PetscCall(PCGetOptionsPrefix(pc, &pfx));
  pfx = pfx ? pfx : "";
  PetscOptionsHeadBegin(PetscOptionsObject, "Slab Schur LU (hsslab, bvp/petscext/pcslab.c)");
  PetscCall(
      PetscOptionsInt("-pc_hsslab_ordering",
                      "MUMPS' ICNTL(7) for a slab without an interface (one rank); MUMPS 5.5 orders a slab with an "
                      "interface by AMD whatever is asked (INFOG(7) in -info)",
                      "PCHSSLAB", s->ordering, &s->ordering, NULL));
  PetscCall(PetscOptionsBool("-pc_hsslab_fallback",
                             "MUMPS LU of the whole matrix when the ranks' slabs do not form a chain or one is too "
                             "thin (else an error)",
                             "PCHSSLAB", s->fallback, &s->fallback, NULL));
  PetscOptionsHeadEnd();
  HsOptionsCheck(s->ordering >= 0 && s->ordering <= 7 && s->ordering != 1, PetscObjectComm((PetscObject)pc),
                 PETSC_ERR_ARG_OUTOFRANGE,
                 "-%spc_hsslab_ordering %" PetscInt_FMT ": one of 0, 2, 3, 4, 5, 6, 7 (MUMPS' ICNTL(7))", pfx,
                 s->ordering);
  PetscFunctionReturn(0);
}

static PetscErrorCode PCView_HsSlab(PC pc, PetscViewer viewer)
{
  PC_HsSlab *s = pc->data;
  PetscBool  ascii;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii)
    PetscFunctionReturn(0);
  if (s->laid && !s->ok) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  not used: %s; factored by MUMPS LU instead:\n", s->why));
    PetscCall(HsPCViewInner(s->inner, viewer));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  slabs factored by sequential MUMPS (ICNTL(7) = %" PetscInt_FMT
                                   "), interface system of %" PetscInt_FMT
                                   " unknowns by cyclic reduction over the ranks\n",
                                   s->ordering, s->red.nred));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCReset_HsSlab(PC pc)
{
  PC_HsSlab *s = pc->data;

  PetscFunctionBeginUser;
  PetscCall(Forget(s));
  PetscCall(PCDestroy(&s->inner));
  PetscFunctionReturn(0);
}

/* HsPCGetDeterminant for hsslab ("HsPCGetDeterminant_C"): with the interiors first and the interfaces after (a
 * symmetric permutation: the same determinant), det A = prod_r det K_II^r det R, R the interface system in its
 * natural order (rows and columns the ranks' interfaces in rank order, hsslab's leaf order): each slab's from MUMPS
 * (ICNTL(33); RINFOG(12) 2^INFOG(34)), R's from the cyclic reduction's pivots and their permutations' parity
 * (bandreduce.c); the fallback's from its MUMPS LU. Silent (hsdrop says "det J = ... (hsdrop)"). Collective. */
static PetscErrorCode GetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PC_HsSlab  *s = pc->data;
  PetscReal   mine[2], *all;
  PetscInt    odd = 0;
  PetscMPIInt size;
  int         x;

  PetscFunctionBeginUser;
  *known = PETSC_FALSE, *m = 0, *e = 0;
  if (!s->laid || pc->failedreason)
    PetscFunctionReturn(0);
  if (!s->ok) {
    Mat F;
    PetscCall(HsPCGetMumpsFactor(s->inner, &F));
    if (F)
      PetscCall(HsMumpsDeterminant(F, m, e, known));
    PetscFunctionReturn(0);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  *m = s->id.RINFOG(12), *e = s->id.INFOG(34);
  if (s->red.nred)
    PetscCall(HsBandReducedDeterminant(pc, &s->red, m, e, &odd));
  *m = frexp(*m, &x), mine[0] = *m, mine[1] = (PetscReal)(*e + x);
  PetscCall(PetscMalloc1(2 * size, &all));
  PetscCallMPI(MPI_Allgather(mine, 2, MPIU_REAL, all, 2, MPIU_REAL, PetscObjectComm((PetscObject)pc)));
  PetscCallMPI(MPI_Bcast(&odd, 1, MPIU_INT, 0, PetscObjectComm((PetscObject)pc)));
  *m = odd ? -1 : 1, *e = 0;
  for (PetscMPIInt r = 0; r < size; r++) {
    *m = frexp(*m * all[2 * r], &x);
    *e += x + (PetscInt)all[2 * r + 1];
  }
  PetscCall(PetscFree(all));
  *known = PETSC_TRUE;
  PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_HsSlab(PC pc)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", NULL));
  PetscCall(PCReset_HsSlab(pc));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

/*@ PCCreate_HsSlab - the constructor of PC type "hsslab" (registered by HsInitializePackage; bvp/ internal): an
    exact LU of a matrix whose rank partitions form a chain, each rank's slab by sequential MUMPS with its Schur
    complement on the interface, the interface system by bandreduce.c's cyclic reduction (this file's head).
@*/
PetscErrorCode PCCreate_HsSlab(PC pc)
{
  PC_HsSlab *s;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&s));
  s->ordering             = HS_SLAB_ORDERING_DEFAULT;
  s->icntl14              = HS_MUMPS_ICNTL14_DEFAULT;
  s->fallback             = PETSC_TRUE;
  pc->data                = s;
  pc->ops->setup          = PCSetUp_HsSlab;
  pc->ops->apply          = PCApply_HsSlab;
  pc->ops->applytranspose = HsPCNoTranspose;
  pc->ops->setfromoptions = PCSetFromOptions_HsSlab;
  pc->ops->view           = PCView_HsSlab;
  pc->ops->reset          = PCReset_HsSlab;
  pc->ops->destroy        = PCDestroy_HsSlab;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", GetDeterminant));
  PetscFunctionReturn(0);
}
