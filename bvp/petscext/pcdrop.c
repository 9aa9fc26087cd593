/* hamshoot: PC "hsdrop", an LU (by default MUMPS') of the operator with its negligible entries
 * dropped (issue 11: the default of the Newton solves with large node blocks, -hs_linear_solver).
 *
 * The transcription stores each node block of the Jacobian whole (4n x 4n, docs/theory.md section 3):
 * the schemes' formulas are dense matrix expressions, and a Gonzalez divided difference adds a
 * rank-one term Delta c_a^T that couples every unknown of a node to every other. For many problems
 * most of those entries are zero, or round-off: the chain of cars (ncar) has quadratic E and ell,
 * for which c and c_a vanish identically and the node blocks are tridiagonal in the car index, but
 * their evaluated c_a is round-off divided by |Delta|^2. Factoring the stored blocks costs O((4n)^3)
 * per node; factoring the sparse matrix by a fill-reducing (nested dissection) LU costs far less.
 *
 * This PC keeps the entries a_ij with |a_ij| > tol max_j |a_ij| (-pc_hsdrop_tol; the diagonal
 * always), in a matrix P of its own, and factors P (inner PC, options prefix -hsdrop_: LU by MUMPS
 * unless set). The default tol = 1e-14 (about 45 eps) drops only what lies below the backward error of
 * an LU of the whole matrix (of order eps |L| |U|, with pivot growth): P's factors are then as good
 * as J's. Larger values are for experiments: in a stiff problem entries of 1e-8 of their row's
 * largest are not negligible (ncar, 12 cars, beta = 1e-9: dropping the 800 entries between 1e-10
 * and 1e-8 of their rows' largest took GMRES from 1 to 24 iterations per Newton step, and those up
 * to 1e-7 made it fail; measured). The Krylov method around it (GMRES, set by HsSolverSetDefaultPC) iterates on the
 * exact operator, so what is dropped changes the number of iterations, never the solution: the
 * iteration stops at -ksp_rtol, and a dropped entry that matters shows as iterations (-ksp_monitor,
 * the "linear its" of -hs_monitor), or as a linear solve that fails, which SNES reports.
 *
 * The first set-up chooses P's pattern. Later ones copy the values into the same P (the symbolic
 * factorization is reused), unless a Krylov solve since the last set-up took more than
 * -pc_hsdrop_regrow iterations: then the entries now above the threshold join the pattern (a new
 * analysis), and stay in it, so that it cannot flip between iterates. (At the transcription's usual
 * first iterate, lambda = 0, the Gonzalez terms of a nonlinear problem vanish; chain2d's pattern grows
 * from 3 % to 27 % of the stored entries once they appear.) Each set-up scans the stored entries once.
 * Memory: one byte per stored entry, and P (with a copy of its CSR arrays).
 *
 * On more than one rank (-pc_hsdrop_match) P's columns are permuted by a row-to-column matching
 * (dropmatch.c) for each new pattern: MUMPS applies its own (ICNTL(6)) only to a matrix held on one
 * rank, and without it its threshold pivoting delayed thousands of pivots on the chain (issue 44).
 * The inner MUMPS LU is asked for the AMF ordering (HS_DROP_MUMPS_ORDERING).
 */
#include "hspetscext.h"

#include <petsc/private/pcimpl.h>

typedef struct {
  PC               inner;  /* the factorization of P */
  Mat              P, src; /* P, and the operator (and its nonzero state) P is of */
  PetscObjectState src_state;
  char            *keep;           /* keep[e]: the e-th stored entry of the local rows (MatGetRow's order) is in P */
  PetscInt         nstored, nkeep; /* local entries stored, and kept (the ones in keep) */
  PetscInt        *kstart;         /* local row i's kept entries: kcol/kval[kstart[i] .. kstart[i+1]) */
  PetscInt        *kcol, kcap;     /* kcol and kval have room for kcap entries */
  PetscScalar     *kval;
  PetscReal        tol;              /* -pc_hsdrop_tol */
  PetscInt         icntl14;          /* MUMPS' workspace relaxation in use */
  PetscInt         kept, total;      /* entries kept and stored, all ranks (at the last new pattern) */
  PetscInt         patterns;         /* P's patterns so far */
  PetscInt         regrow, maxits;   /* -pc_hsdrop_regrow; the most Krylov iterations of a solve since the set-up */
  PetscBool        match, match_set; /* -pc_hsdrop_match (unset: on for more than one rank) */
  HsDropMatching   mt;               /* the matching (dropmatch.c); none while mt.colrow is NULL */
  VecScatter       unperm;           /* y[j] = z[colrow[j]] */
  Vec              z;
} PC_HsDrop;

static PetscErrorCode Forget(PC_HsDrop *d)
{
  PetscFunctionBeginUser;
  PetscCall(MatDestroy(&d->P));
  PetscCall(MatDestroy(&d->src));
  PetscCall(PetscFree2(d->keep, d->kstart));
  PetscCall(PetscFree2(d->kcol, d->kval));
  PetscCall(HsDropMatchingFree(&d->mt));
  PetscCall(VecScatterDestroy(&d->unperm));
  PetscCall(VecDestroy(&d->z));
  d->nstored = d->nkeep = 0, d->patterns = 0, d->kcap = 0, d->maxits = 0;
  PetscFunctionReturn(0);
}

/* A new operator pattern: the mask of its local rows' entries, nothing kept yet. Collective. */
static PetscErrorCode Layout(PC_HsDrop *d, Mat A)
{
  PetscInt rs, re, ncols;

  PetscFunctionBeginUser;
  PetscCall(Forget(d));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    PetscCall(MatGetRow(A, r, &ncols, NULL, NULL));
    d->nstored += ncols;
    PetscCall(MatRestoreRow(A, r, &ncols, NULL, NULL));
  }
  PetscCall(PetscCalloc2(d->nstored + 1, &d->keep, re - rs + 1, &d->kstart));
  PetscCall(PetscObjectReference((PetscObject)A));
  d->src = A;
  PetscCall(MatGetNonzeroState(A, &d->src_state));
  PetscFunctionReturn(0);
}

/* Room in kcol and kval for need entries, the first nz kept. */
static PetscErrorCode Grow(PC_HsDrop *d, PetscInt nz, PetscInt need)
{
  PetscInt    *c;
  PetscScalar *v;

  PetscFunctionBeginUser;
  if (need <= d->kcap)
    PetscFunctionReturn(0);
  need = PetscMax(need, 2 * d->kcap);
  PetscCall(PetscMalloc2(need, &c, need, &v));
  PetscCall(PetscArraycpy(c, d->kcol, nz));
  PetscCall(PetscArraycpy(v, d->kval, nz));
  PetscCall(PetscFree2(d->kcol, d->kval));
  d->kcol = c, d->kval = v, d->kcap = need;
  PetscFunctionReturn(0);
}

/* One pass over A's local rows: if allowed, an entry above tol times its row's largest (or on the diagonal)
 * joins the kept ones (which stay kept: P's pattern only grows, so it cannot flip between two); then the row's
 * kept entries are copied, as CSR of the local rows (kstart, kcol, kval; global columns). *grew: on some rank an
 * entry joined. Collective. */
static PetscErrorCode MarkGather(PC_HsDrop *d, Mat A, PetscBool allow, PetscBool *grew)
{
  PetscInt           rs, re, ncols, e = 0, nz = 0;
  const PetscInt    *cols;
  const PetscScalar *vals;
  PetscBool          g = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    PetscReal big = 0;
    PetscCall(MatGetRow(A, r, &ncols, &cols, &vals));
    for (PetscInt j = 0; j < ncols && allow; j++)
      big = PetscMax(big, PetscAbsScalar(vals[j]));
    for (PetscInt j = 0; j < ncols && allow; j++)
      if (!d->keep[e + j] && (cols[j] == r || PetscAbsScalar(vals[j]) > d->tol * big))
        d->keep[e + j] = 1, d->nkeep++, g = PETSC_TRUE;
    PetscCall(Grow(d, nz, nz + ncols));
    for (PetscInt j = 0; j < ncols; j++, e++)
      if (d->keep[e])
        d->kcol[nz] = cols[j], d->kval[nz++] = vals[j];
    PetscCall(MatRestoreRow(A, r, &ncols, &cols, &vals));
    d->kstart[r - rs + 1] = nz;
  }
  PetscCallMPI(MPIU_Allreduce(&g, grew, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(0);
}

/* P's columns relabelled by the matching (if any): j -> colrow[j], each row sorted again. */
static PetscErrorCode Relabel(PC_HsDrop *d, PetscInt m)
{
  PetscFunctionBeginUser;
  if (!d->mt.colrow)
    PetscFunctionReturn(0);
  PetscCall(HsDropMatchRelabel(&d->mt, d->kstart[m], d->kcol));
  for (PetscInt i = 0; i < m; i++)
    PetscCall(
        PetscSortIntWithScalarArray(d->kstart[i + 1] - d->kstart[i], d->kcol + d->kstart[i], d->kval + d->kstart[i]));
  PetscFunctionReturn(0);
}

/* A new pattern: the matching of its kept entries (dropmatch.c) and the scatter y[j] = z[colrow[j]] of the apply,
   if -pc_hsdrop_match (by default: on more than one rank). Collective. */
static PetscErrorCode Match(PC pc, PC_HsDrop *d, Mat A)
{
  PetscInt    rs, re, M;
  PetscMPIInt size;
  IS          from, to;
  Vec         y;

  PetscFunctionBeginUser;
  PetscCall(HsDropMatchingFree(&d->mt));
  PetscCall(VecScatterDestroy(&d->unperm));
  PetscCall(VecDestroy(&d->z));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (!(d->match_set ? d->match : size > 1))
    PetscFunctionReturn(0);
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetSize(A, &M, NULL));
  PetscCall(HsDropMatch(PetscObjectComm((PetscObject)A), M, re - rs, d->kstart, d->kcol, d->kval, &d->mt));
  PetscCall(MatCreateVecs(A, &d->z, &y));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, re - rs, d->mt.colrow, PETSC_COPY_VALUES, &from));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, re - rs, rs, 1, &to));
  PetscCall(VecScatterCreate(d->z, from, y, to, &d->unperm));
  PetscCall(ISDestroy(&from));
  PetscCall(ISDestroy(&to));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscInfo(pc, "hsdrop: rows matched to columns (-pc_hsdrop_match)\n"));
  PetscFunctionReturn(0);
}

/* P from the gathered CSR: a new matrix when the pattern grew (the inner PC starts over: a new
 * analysis), else the values into the same one. Collective. */
static PetscErrorCode Fill(PC_HsDrop *d, Mat A, PetscBool grew)
{
  PetscInt rs, re, m, n;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  if (!grew) {
    for (PetscInt r = rs; r < re; r++) {
      PetscInt a = d->kstart[r - rs], b = d->kstart[r - rs + 1];
      PetscCall(MatSetValues(d->P, 1, &r, b - a, d->kcol + a, d->kval + a, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(d->P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(d->P, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
  }
  PetscCall(MatDestroy(&d->P));
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &d->P));
  PetscCall(MatSetSizes(d->P, m, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(d->P, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocationCSR(d->P, d->kstart, d->kcol, d->kval)); /* copied; global columns */
  PetscCall(MatMPIAIJSetPreallocationCSR(d->P, d->kstart, d->kcol, d->kval));
  PetscCallMPI(MPIU_Allreduce(&d->nkeep, &d->kept, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCallMPI(MPIU_Allreduce(&d->nstored, &d->total, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  d->patterns++;
  PetscFunctionReturn(0);
}

/* Factors P (the inner PC) with hamshoot's MUMPS settings and the determinant asked for (the branch-point
 * test reads it: HsPCGetInner); a factorization that ran out of MUMPS' workspace (INFOG(1) = -8,
 * -9, -11, -12, -14, see MumpsWorkspaceRetry of bvp/interface/solversolve.c) is done again with ICNTL(14) doubled,
 * at most HS_MUMPS_RETRIES times. A failure is reported as the PC's. Collective. */
static PetscErrorCode Factor(PC pc, PC_HsDrop *d)
{
  PCFailedReason fr = PC_NOERROR;

  PetscFunctionBeginUser;
  for (PetscInt attempt = 0;; attempt++) {
    PetscInt info, next;
    PetscCall(HsPCSetUpMumpsLU(d->inner, d->icntl14, HS_DROP_MUMPS_ORDERING, &fr, &info));
    if (!HsMumpsWorkspaceShort(info, d->icntl14, &next) || attempt >= HS_MUMPS_RETRIES)
      break;
    PetscCall(
        PetscInfo(pc, "hsdrop: MUMPS INFOG(1) = %" PetscInt_FMT ": ICNTL(14) %" PetscInt_FMT " -> %" PetscInt_FMT "\n",
                  info, d->icntl14, next));
    d->icntl14 = next;
    PetscCall(PCReset(d->inner));
    PetscCall(PCSetOperators(d->inner, d->P, d->P));
  }
  if (fr)
    PetscCall(PCSetFailedReason(pc, fr));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_HsDrop(PC pc)
{
  PC_HsDrop       *d = pc->data;
  PetscObjectState state;
  PetscBool        grew;
  PetscInt         mloc;

  PetscFunctionBeginUser;
  pc->failedreason = PC_NOERROR;
  PetscCall(HsPCCheckAIJ(pc));
  PetscCall(MatGetNonzeroState(pc->pmat, &state));
  if (d->src != pc->pmat || d->src_state != state)
    PetscCall(Layout(d, pc->pmat));
  PetscCall(MarkGather(d, pc->pmat, (PetscBool)(!d->P || d->maxits > d->regrow), &grew));
  grew      = (PetscBool)(grew || !d->P);
  d->maxits = 0;
  if (grew)
    PetscCall(Match(pc, d, pc->pmat));
  PetscCall(MatGetLocalSize(pc->pmat, &mloc, NULL));
  PetscCall(Relabel(d, mloc));
  PetscCall(Fill(d, pc->pmat, grew));
  if (grew) {
    PetscCall(PetscInfo(
        pc, "hsdrop: pattern %" PetscInt_FMT ": keeps %" PetscInt_FMT " of %" PetscInt_FMT " entries (tol %g)\n",
        d->patterns, d->kept, d->total, (double)d->tol));
    PetscCall(PCReset(d->inner)); /* a new P: a new analysis */
    PetscCall(PCSetOperators(d->inner, d->P, d->P));
  }
  PetscCall(Factor(pc, d));
  PetscFunctionReturn(0);
}

/* After each Krylov solve: its iteration count (a pattern that leaves out entries that matter shows as
 * iterations; more than -pc_hsdrop_regrow lets the next set-up grow the pattern). */
static PetscErrorCode PCPostSolve_HsDrop(PC pc, KSP ksp, Vec b, Vec x)
{
  PC_HsDrop *d = pc->data;
  PetscInt   its;

  PetscFunctionBeginUser;
  (void)b, (void)x;
  PetscCall(KSPGetIterationNumber(ksp, &its));
  d->maxits = PetscMax(d->maxits, its);
  PetscFunctionReturn(0);
}

static PetscErrorCode PCApply_HsDrop(PC pc, Vec x, Vec y)
{
  PC_HsDrop *d = pc->data;

  PetscFunctionBeginUser;
  if (!d->mt.colrow) {
    PetscCall(PCApply(d->inner, x, y));
    PetscFunctionReturn(0);
  }
  PetscCall(PCApply(d->inner, x, d->z)); /* P Q z = x, y = Q z */
  PetscCall(VecScatterBegin(d->unperm, d->z, y, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(d->unperm, d->z, y, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

/* y = P^-T x, for Krylov methods that apply the preconditioner's transpose (-ksp_type bicg, ibcgs; issue 38, round
   21: PETSc's "No method applytranspose for PC of type hsdrop"). The apply is y = Q (P Q)^-1 x = P^-1 x with the
   matching's permutation Q (y[j] = z[colrow[j]]); so P^-T x = (P Q)^-T Q^T x, Q^T x the scatter's reverse. */
static PetscErrorCode PCApplyTranspose_HsDrop(PC pc, Vec x, Vec y)
{
  PC_HsDrop *d = pc->data;

  PetscFunctionBeginUser;
  PetscCall(HsPCInnerApplyTranspose(pc, d->inner, d->mt.colrow ? d->unperm : NULL, d->z, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_HsDrop(PC pc, PetscOptionItems *PetscOptionsObject)
{
  PC_HsDrop  *d = pc->data;
  const char *prefix;

  PetscFunctionBeginUser;
  const char *pfx; /* the key as given (round 19: -hsdrop_pc_hsslab_ordering 1 was named -pc_hsslab_ordering); an
                      error ends PETSc's options block first (HsOptionsCheck: it had leaked, round 19) */

  PetscCall(PCGetOptionsPrefix(pc, &pfx));
  pfx = pfx ? pfx : "";
  PetscOptionsHeadBegin(PetscOptionsObject, "Dropped-entry LU (hsdrop, bvp/petscext/pcdrop.c)");
  PetscCall(PetscOptionsReal("-pc_hsdrop_tol",
                             "entries |a_ij| <= tol max_j |a_ij| are left out of the factored "
                             "matrix (the Krylov method iterates on the whole operator)",
                             "PCHsDrop", d->tol, &d->tol, NULL));
  PetscCall(PetscOptionsInt("-pc_hsdrop_regrow",
                            "after a Krylov solve of more iterations, the next set-up adds the "
                            "entries now above tol to the factored matrix (a new analysis)",
                            "PCHsDrop", d->regrow, &d->regrow, NULL));
  PetscCall(PetscOptionsBool("-pc_hsdrop_match",
                             "permute the factored matrix' columns by a row-to-column matching "
                             "(dropmatch.c; default: on more than one rank, where MUMPS' ICNTL(6) is not applied)",
                             "PCHsDrop", d->match, &d->match, &d->match_set));
  PetscOptionsHeadEnd();
  HsOptionsCheck(d->tol >= 0 && d->tol < 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE,
                 "-%spc_hsdrop_tol %g: must be in [0, 1)", pfx, (double)d->tol);
  HsOptionsCheck(d->regrow >= 0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE,
                 "-%spc_hsdrop_regrow %" PetscInt_FMT ": must be at least 0 (Krylov iterations)", pfx, d->regrow);
  PetscCall(
      PCGetOptionsPrefix(pc, &prefix)); /* the inner PC's options: -[prefix]hsdrop_pc_..., -[prefix]hsdrop_mat_... */
  PetscCall(PCSetOptionsPrefix(d->inner, prefix));
  PetscCall(PCAppendOptionsPrefix(d->inner, "hsdrop_"));
  HsOptionsCall(PCSetFromOptions(d->inner)); /* an error in the inner PC's options ends this block too (round 19) */
  PetscFunctionReturn(0);
}

static PetscErrorCode PCView_HsDrop(PC pc, PetscViewer viewer)
{
  PC_HsDrop *d = pc->data;
  PetscBool  ascii;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii)
    PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  drops |a_ij| <= %g max_j |a_ij|", (double)d->tol));
  if (d->P)
    PetscCall(PetscViewerASCIIPrintf(
        viewer, ": keeps %" PetscInt_FMT " of %" PetscInt_FMT " entries (%.3g%%; pattern %" PetscInt_FMT ")", d->kept,
        d->total, 100.0 * (double)d->kept / (double)d->total, d->patterns));
  PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  if (d->mt.colrow)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  columns permuted by a row-to-column matching (-pc_hsdrop_match)\n"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  factored by:\n"));
  PetscCall(HsPCViewInner(d->inner, viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCReset_HsDrop(PC pc)
{
  PC_HsDrop *d = pc->data;

  PetscFunctionBeginUser;
  PetscCall(Forget(d));
  PetscCall(PCReset(d->inner));
  PetscFunctionReturn(0);
}

static PetscErrorCode Compose(PC pc, PetscBool set);

static PetscErrorCode PCDestroy_HsDrop(PC pc)
{
  PC_HsDrop *d = pc->data;

  PetscFunctionBeginUser;
  PetscCall(Compose(pc, PETSC_FALSE));
  PetscCall(Forget(d));
  PetscCall(PCDestroy(&d->inner));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

/* HsPCGetInner for hsdrop ("HsPCGetInner_C"): the PC that factors its dropped matrix. Not collective. */
static PetscErrorCode GetInner(PC pc, PC *inner)
{
  PetscFunctionBeginUser;
  *inner = ((PC_HsDrop *)pc->data)->inner;
  PetscFunctionReturn(0);
}

/* HsPCGetDropped for hsdrop ("HsPCGetDropped_C"): its inner LU and, once set up, *kept of the *stored entries of
   the operator (all ranks) in its *patterns-th pattern. Not collective. */
static PetscErrorCode GetDropped(PC pc, PC *inner, PetscInt *kept, PetscInt *stored, PetscInt *patterns)
{
  PC_HsDrop *d = pc->data;

  PetscFunctionBeginUser;
  *inner = d->inner;
  *kept = *stored = *patterns = 0;
  if (d->P)
    *kept = d->kept, *stored = d->total, *patterns = d->patterns;
  PetscFunctionReturn(0);
}

/* HsPCGetDeterminant for hsdrop ("HsPCGetDeterminant_C"): its LU's (that of J less its dropped entries, asked for
   always), times the sign of the matching's column permutation (-pc_hsdrop_match). Collective. */
static PetscErrorCode GetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
{
  PC_HsDrop *d = pc->data;
  Mat        F;

  PetscFunctionBeginUser;
  PetscCall(HsPCGetMumpsFactor(d->inner, &F));
  if (F && d->mt.sign == 1) {
    PetscCall(HsPCGetDeterminant(d->inner, m, e, known));
    PetscFunctionReturn(0);
  }
  if (F)
    PetscCall(HsMumpsDeterminant(F, m, e, known)); /* of P Q: det P = det(P Q) sign(Q) */
  else
    PetscCall(HsPCGetDeterminant(d->inner, m, e, known)); /* another inner PC (hsslab: pcslab.c) */
  if (d->mt.sign != 1)
    *m = -*m;
  if (*known)
    PetscCall(PetscInfo(pc, "det J = %.15g 2^%" PetscInt_FMT " (hsdrop)\n", (double)*m, *e));
  PetscFunctionReturn(0);
}

/* The functions hsdrop answers (pcutils.c), composed on pc (set) or removed (destroy). */
static PetscErrorCode Compose(PC pc, PetscBool set)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetInner_C", set ? GetInner : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDropped_C", set ? GetDropped : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", set ? GetDeterminant : NULL));
  PetscFunctionReturn(0);
}

/*@ PCCreate_HsDrop - the constructor of PC type "hsdrop" (registered by HsInitialize; bvp/ internal):
    LU by MUMPS of the operator without its entries |a_ij| <= tol max_j |a_ij| (tol HS_DROP_TOL_DEFAULT).
@*/
PetscErrorCode PCCreate_HsDrop(PC pc)
{
  PC_HsDrop *d;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&d));
  d->tol     = HS_DROP_TOL_DEFAULT;
  d->icntl14 = HS_MUMPS_ICNTL14_DEFAULT;
  d->regrow  = HS_DROP_REGROW_DEFAULT;
  d->mt.sign = 1;
  pc->data   = d;
  PetscCall(HsPCCreateMumpsLU(PetscObjectComm((PetscObject)pc), &d->inner));
  pc->ops->setup          = PCSetUp_HsDrop;
  pc->ops->apply          = PCApply_HsDrop;
  pc->ops->applytranspose = PCApplyTranspose_HsDrop;
  pc->ops->postsolve      = PCPostSolve_HsDrop;
  pc->ops->setfromoptions = PCSetFromOptions_HsDrop;
  pc->ops->view           = PCView_HsDrop;
  pc->ops->reset          = PCReset_HsDrop;
  pc->ops->destroy        = PCDestroy_HsDrop;
  PetscCall(Compose(pc, PETSC_TRUE));
  PetscFunctionReturn(0);
}
