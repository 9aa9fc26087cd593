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
 *   interface columns), a chain over the ranks, factored by block cyclic reduction in ceil(log2 P)
 *   levels of pairwise merges with LAPACK/BLAS-3 on small dense blocks (bandreduce.c, issue 44). A
 *   solve: forward elimination of b on every rank, the reduced system's up- and down-sweeps, which
 *   leave each rank its interface values, back substitution.
 *
 * Staircase order: the local rows are taken in the order of their first column (the transcription's
 * costate rows of node k start a node left of its state rows), and a row joins the elimination at its
 * first column. An active row's entries then lie in [j, j + W) at step j, W the widest row span (its
 * own, widened by the pivot rows' fill, whose spans are as wide): 10n for the transcription against
 * kl + ku + 1 = 14n in the natural order, and about 4n active rows a step instead of 8n.
 *
 * Storage: a row joins a small window when the elimination reaches its first column: its entries in
 * interior and right-interface columns in a row of 2W (column c at slot c - wbase; every W steps the active rows
 * move back by W and wbase on by W, so that an update is one contiguous loop), its left-interface entries (nL of
 * them, filled in by pivoting: the "spike") densely. A pivot row leaves the window for the U store,
 * compactly (columns j .. its last nonzero, then the spike) in step order, and its window row is reused: the
 * elimination works in cache (a few rows of W), and the back substitution streams through U. The multipliers
 * (L) are kept only when a factorization serves more than one solve: by default it waits for its first solve
 * and eliminates that right-hand side along (-pc_hsband_defer; Factor). The U store can be the matrix' own
 * values (HsPCSetInPlace): a row's values are not read again once it has joined, and U's rows take less room
 * than the matrix' rows they come from (kepler: 21.3 million U entries against 28.8 million), so step c's U row
 * goes behind the values of the first row not yet joined (bottom-up: ahead of the last), where it fits, else to
 * the PC's own array (URow; the first steps, whose rows are short, may); the matrix is then marked factored.
 * The last
 * rank (of several) eliminates bottom-up, on its rows and columns reversed: its left interface becomes
 * a right one, so with 2 ranks neither has a spike, and with more only the middle ones
 * (-pc_hsband_reverse_last). A middle rank pivots on rows without spike where their entry is at least
 * -pc_hsband_spike_threshold (0.1) times the column's largest (threshold pivoting, bandelim.c's PivotSpike):
 * the spike's fill then stays in the rows that touch the left interface and the updates skip it (a middle rank
 * of kepler did 2.9x rank 0's flops with partial pivoting). Memory per rank is O((re - rs) (W + nL)), work
 * O((re - rs) (W + nL) W): linear in N / P. The reduced system has about 2 (kl + ku) P unknowns; its cyclic
 * reduction costs O((kl + ku)^3 log2 P) flops on the busiest rank and 2 log2 P messages of O((kl + ku)^2)
 * values (measured in bench/). The layout (spans, order, interfaces) is kept while the matrix' nonzero pattern is.
 *
 * Limits: each rank needs more rows than the band is wide (a rank's rows may touch only its two
 * neighbours' columns), and the band at most HS_BAND_MAX_WIDTH wide (a free final time's dense row
 * and column make it the whole matrix: by default taken out of the band as a border and solved by block
 * elimination around it, bandborder.c). Outside them the PC factors by MUMPS LU instead (inner PC,
 * said by -ksp_view and -info), or with -pc_hsband_fallback false stops with an error naming the limit. With
 * -pc_hsband_fallback_gather (HsPCBandSetFallbackGather; the multiple shootings' small outer systems) that inner PC is
 * hsgather on more than one rank: the whole matrix factored on every rank by sequential MUMPS, reproducible bit for
 * bit where MUMPS' parallel LU is not (pcgather.c).
 */
#include "bandimpl.h"


static PetscLogEvent HS_BAND_LAYOUT, HS_BAND_ELIM, HS_BAND_REDUCED, HS_BAND_SOLVE;
static PetscBool     hs_band_events = PETSC_FALSE;

static PetscErrorCode FinalizeEvents(void)
{
  PetscFunctionBeginUser;
  hs_band_events = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* -log_view: HsBandLayout (the pattern's layout, once per pattern), HsBandElim (the ranks' eliminations,
 * the rows loaded as they join), HsBandReduced (the interface system's whole stage of a factorization: the wait for
 * every rank's elimination, the cyclic reduction's merges), HsBandSolve (the solves with the factors, refinement's
 * included), and bandreduce.c's finer HsBandRedFactor and HsBandRedSolve. Each logs its flops. */
static PetscErrorCode RegisterEvents(void)
{
  PetscFunctionBeginUser;
  if (hs_band_events)
    PetscFunctionReturn(0);
  PetscCall(PetscLogEventRegister("HsBandLayout", PC_CLASSID, &HS_BAND_LAYOUT));
  PetscCall(PetscLogEventRegister("HsBandElim", PC_CLASSID, &HS_BAND_ELIM));
  PetscCall(PetscLogEventRegister("HsBandReduced", PC_CLASSID, &HS_BAND_REDUCED));
  PetscCall(PetscLogEventRegister("HsBandSolve", PC_CLASSID, &HS_BAND_SOLVE));
  PetscCall(HsBandReducedRegisterEvents());
  PetscCall(PetscRegisterFinalize(FinalizeEvents));
  hs_band_events = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Whether a factorization of pc stores U in place (HsPCSetInPlace): not with refinement or -info (their
 * products with the matrix: the refinement's residual, SNESNEWTONLS's check of the solve) or a reused
 * preconditioner (factors that outlive the values they would overwrite). */
static PetscBool InPlace(PC pc, const PC_HsBand *b)
{
  return (PetscBool)(b->inplace && !HsBandRefineSteps(b) && !pc->reusepreconditioner && !PetscLogPrintInfo);
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
  if (HsBandUseAVX2(b))
    PetscCall(HsBandEliminateAVX2(b, pc->pmat, InPlace(pc, b), t, &flags[0]));
  else
#endif
    PetscCall(HsBandEliminateDefault(b, pc->pmat, InPlace(pc, b), t, &flags[0]));
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
    PetscCall(HsBandFactorReduced(pc, b, &flags[0]));
  PetscCall(PetscLogEventEnd(HS_BAND_REDUCED, pc, 0, 0, 0));
  b->failed = flags[0];
  if (b->failed)
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
  PetscFunctionReturn(0);
}

/* HsPCGetDeterminant for hsband ("HsPCGetDeterminant_C"): the determinant of the factored matrix, m 2^e (as
   MUMPS' ICNTL(33)), computed from the factors on the first call after a factorization; known = PETSC_FALSE if
   pc is not set up or factors by its inner LU. Collective. */
static PetscErrorCode GetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
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
  if (!b->det_done && !b->inner && b->bd) { /* bordered: det B det S */
    PetscCall(HsBandBorderDeterminant(pc, b, known));
    if (!*known)
      PetscFunctionReturn(0);
  } else if (!b->det_done && !b->inner)
    PetscCall(HsBandDeterminant(pc, b));
  b->det_done = PETSC_TRUE;
  *m = b->det_m, *e = b->det_e, *known = PETSC_TRUE;
  PetscCall(PetscInfo(pc, "det J = %.15g 2^%" PetscInt_FMT " (hsband)\n", (double)*m, *e));
  PetscFunctionReturn(0);
}

/* The inner PC's name for -ksp_view and -info */
static const char *InnerName(const PC_HsBand *b)
{
  return b->gather && b->size > 1 ? "the whole matrix on every rank, LU by sequential MUMPS (PC hsgather, reproducible)"
                                  : "MUMPS LU";
}

/* Outside the limits: MUMPS LU of the same matrix (pivot threshold 1, the determinant asked for: the
 * branch-point test reads it), b->inner; with b->gather on more than one rank PC hsgather (its own MUMPS settings,
 * the determinant asked for). */
static PetscErrorCode SetUpInner(PC pc, PC_HsBand *b)
{
  Mat            F;
  PCFailedReason fr;
  PetscBool      known = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &b->size));
  if (!b->inner) {
    PetscCall(PetscInfo(pc, "hsband: %s; %s instead\n", b->why, InnerName(b)));
    PetscCall(PCCreate(PetscObjectComm((PetscObject)pc), &b->inner));
    if (b->gather && b->size > 1)
      PetscCall(PCSetType(b->inner, PCHSGATHER));
    else {
      PetscCall(PCSetType(b->inner, PCLU));
#if defined(PETSC_HAVE_MUMPS)
      PetscCall(PCFactorSetMatSolverType(b->inner, MATSOLVERMUMPS));
#endif
    }
  } else { /* its last factorization failed (a singular or non-finite matrix): from scratch. PETSc's MUMPS interface
              would skip the numeric factorization of a matrix of the same pattern after a failed one and leave the
              factor marked sound, and its solve then stops the run with MUMPS' INFOG(1) = -3 (saddle, shooting on 2
              ranks, in the fallbacks of -hs_strategy auto) instead of failing as a linear solve */
    PetscCall(PCGetFailedReason(b->inner, &fr));
    if (fr)
      PetscCall(PCReset(b->inner));
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
  else /* hsgather: its sequential MUMPS' (every rank the same) */
    PetscCall(HsPCGetDeterminant(b->inner, &b->det_m, &b->det_e, &known));
  b->det_none = (PetscBool)!known;
  PetscFunctionReturn(0);
}

/* Whether a factorization of pc waits for its first solve (Factor's head): -pc_hsband_defer, no second solve seen,
 * no refinement (which solves again), and not a reused preconditioner (a later solve may come after the matrix
 * changed, and the multipliers could not be made again). */
static PetscBool Defers(PC pc, const PC_HsBand *b)
{
  return (PetscBool)(b->defer && !b->keep && !HsBandRefineSteps(b) && !pc->reusepreconditioner);
}

static PetscErrorCode PCSetUp_HsBand(PC pc)
{
  PC_HsBand       *b = (PC_HsBand *)pc->data;
  PetscObjectState state;

  PetscFunctionBeginUser;
  b->failed = PETSC_FALSE, b->det_done = PETSC_FALSE, b->det_none = PETSC_FALSE; /* the determinant: on demand */
  b->pending = PETSC_FALSE, b->have_l = PETSC_FALSE;
  pc->failedreason = PC_NOERROR; /* as PETSc's own factorizations do: a failure is this setup's, not forever */
  PetscCall(HsPCCheckAIJ(pc));
  PetscCheck(pc->pmat->factortype == MAT_FACTOR_NONE, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE,
             "-pc_type hsband: the matrix holds the factors of an in-place factorization (HsPCSetInPlace): fill it "
             "again (MatSetUnfactored, then its values) before it is factored again");
  PetscCall(MatGetNonzeroState(pc->pmat, &state));
  if (b->laid != pc->pmat || b->laid_state != state) { /* a new pattern: a new layout (else the last one's) */
    PetscCall(HsBandFree(b, PETSC_FALSE));
    PetscCall(HsBandBorderDestroy(b));
    PetscCall(PetscLogEventBegin(HS_BAND_LAYOUT, pc, 0, 0, 0));
    if (b->border) /* a dense border (bandborder.c): B, the band without it, is laid out by its own hsband */
      PetscCall(HsBandBorderDetect(pc, b, pc->pmat));
    b->ok = PETSC_TRUE;
    if (!b->bd)
      PetscCall(HsBandLayout(pc, b, pc->pmat));
    PetscCall(PetscLogEventEnd(HS_BAND_LAYOUT, pc, 0, 0, 0));
    PetscCall(PetscObjectReference((PetscObject)pc->pmat));
    b->laid = pc->pmat, b->laid_state = state;
  }
  if (b->bd) {
    PetscCall(HsBandBorderSetUp(pc, b, &b->ok));
    b->have_l = PETSC_TRUE; /* nothing deferred: B's factors keep their multipliers */
  }
  if (!b->ok) {
    PetscCheck(b->fallback, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
               "-pc_type hsband: %s: use fewer ranks, a larger N, or MUMPS (-hs_linear_solver mumps; or "
               "-pc_hsband_fallback true)", b->why);
    PetscCall(SetUpInner(pc, b));
    PetscFunctionReturn(0);
  }
  PetscCall(PCDestroy(&b->inner));
  if (b->bd)
    PetscFunctionReturn(0);
  PetscCall(HsBandAllocate(b));
  PetscCall(PetscObjectStateGet((PetscObject)pc->pmat, &b->fstate));
  b->pending = Defers(pc, b);
  if (!b->pending)
    PetscCall(Factor(pc, b, NULL));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x by the factors, multipliers included */
static PetscErrorCode SolveFactored(PC pc, Vec xv, Vec yv)
{
  PC_HsBand   *b = (PC_HsBand *)pc->data;
  PetscScalar *t = b->t;

  PetscFunctionBeginUser;
  PetscCall(HsBandLoadRHS(b, xv));
  for (PetscInt c = 0; c < b->nI; c++) { /* forward: the row operations of the elimination */
    const PetscScalar tp = t[b->piv[c]];   /* no row of step c is its pivot row: independent updates */
    for (PetscInt m = b->mstart[c]; m < b->mstart[c + 1]; m++)
      t[b->mrow[m]] -= b->mval[m] * tp;
  }
  PetscCall(PetscLogFlops(2.0 * b->mstart[b->nI]));
  PetscCall(HsBandComplete(pc, b, yv));
  PetscFunctionReturn(0);
}

/* y = A^{-1} x by the factors: the band's, or the bordered step's (bandborder.c) */
static PetscErrorCode Solve(PC pc, Vec xv, Vec yv)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;

  PetscFunctionBeginUser;
  if (b->bd)
    PetscCall(HsBandBorderSolve(pc, b, xv, yv));
  else
    PetscCall(SolveFactored(pc, xv, yv));
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
    PetscCall(HsBandLoadRHS(b, xv));
    PetscCall(Factor(pc, b, b->t));
    if (!b->failed) {
      PetscCall(PetscLogEventBegin(HS_BAND_SOLVE, pc, 0, 0, 0));
      PetscCall(HsBandComplete(pc, b, yv)); /* no refinement when deferred (PCSetUp) */
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
               "-pc_type hsband: a second solve with factors made in place (HsPCSetInPlace) without their "
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
  PetscCall(Solve(pc, xv, yv));
  PetscCall(PetscLogEventEnd(HS_BAND_SOLVE, pc, 0, 0, 0));
  if (!HsBandRefineSteps(b))
    PetscFunctionReturn(0);
  if (!b->r)
    PetscCall(VecDuplicate(xv, &b->r));
  if (!b->d)
    PetscCall(VecDuplicate(xv, &b->d));
  r = b->r, d = b->d;
  for (PetscInt i = 0; i < HsBandRefineSteps(b); i++) {
    PetscCall(MatMult(pc->pmat, yv, r));
    PetscCall(VecAYPX(r, -1, xv));
    PetscCall(PetscLogEventBegin(HS_BAND_SOLVE, pc, 0, 0, 0));
    PetscCall(Solve(pc, r, d));
    PetscCall(PetscLogEventEnd(HS_BAND_SOLVE, pc, 0, 0, 0));
    PetscCall(VecAXPY(yv, 1, d));
  }

  PetscFunctionReturn(0);
}

/* The most steps of iterative refinement -pc_hsband_refine takes: one step reaches MUMPS' residual where any is
 * needed (HsBandRefineSteps); 10**6 had made each solve a million products and solves (a run that looked hung). */
#define HS_BAND_REFINE_MAX 10

static PetscErrorCode PCSetFromOptions_HsBand(PC pc, PetscOptionItems *PetscOptionsObject)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;

  PetscFunctionBeginUser;
  const char *pfx; /* the key as given (round 19: -hsdrop_pc_hsslab_ordering 1 was named -pc_hsslab_ordering); an
                      error ends PETSc's options block first (HsOptionsCheck: it had leaked, round 19) */

  PetscCall(PCGetOptionsPrefix(pc, &pfx));
  pfx = pfx ? pfx : "";
  PetscOptionsHeadBegin(PetscOptionsObject, "Banded LU (hamshoot)");
  PetscCall(PetscOptionsInt("-pc_hsband_refine", "steps of iterative refinement after each solve (each: a product "
                            "with the matrix and a solve with the factors; -1: one where the band is more than half "
                            "the matrix, a free T's, none in a narrow band)", "PCHSBAND", b->refine, &b->refine, NULL));
  HsOptionsCheck(b->refine >= -1 && b->refine <= HS_BAND_REFINE_MAX, PetscObjectComm((PetscObject)pc),
                 PETSC_ERR_ARG_OUTOFRANGE, "-%spc_hsband_refine %" PetscInt_FMT ": must be in [-1, %d]", pfx, b->refine,
                 HS_BAND_REFINE_MAX);
  PetscCall(PetscOptionsReal("-pc_hsband_spike_threshold", "a rank with a left interface pivots on a row without "
                             "spike if its entry is at least this times the column's largest (1: partial pivoting)",
                             "PCHSBAND", b->spike_tol, &b->spike_tol, NULL));
  HsOptionsCheck(b->spike_tol > 0 && b->spike_tol <= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE,
                 "-%spc_hsband_spike_threshold %g: must be in (0, 1]", pfx, (double)b->spike_tol);
  PetscCall(PetscOptionsBool("-pc_hsband_reverse_last", "the last rank eliminates bottom-up (no spike: with 2 ranks "
                             "neither rank has one)", "PCHSBAND", b->reverse, &b->reverse, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_defer", "factor at the first solve, its right-hand side eliminated along and "
                             "the multipliers (half the factors) not kept; a second solve with the same factors "
                             "factors again keeping them, as every factorization after it", "PCHSBAND", b->defer,
                             &b->defer, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_avx2", "the elimination's AVX2 version where built and the processor has "
                             "AVX2 (the same results to the bit; default: for rows at least 24 columns wide)", "PCHSBAND",
                             b->avx2, &b->avx2, &b->avx2_set));
  PetscCall(PetscOptionsBool("-pc_hsband_border", "take up to 8 dense rows and columns (a free T's) out of the band "
                             "and solve by block elimination around it (a Schur complement)", "PCHSBAND", b->border,
                             &b->border, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_fallback", "MUMPS LU when a rank has too few rows for the band or the band is "
                             "too wide (else an error)", "PCHSBAND", b->fallback, &b->fallback, NULL));
  PetscCall(PetscOptionsBool("-pc_hsband_fallback_gather", "that fallback on more than one rank: the whole matrix on "
                             "every rank, LU by sequential MUMPS (PC hsgather, reproducible bit for bit)", "PCHSBAND",
                             b->gather, &b->gather, NULL));
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
    PetscCall(PetscViewerASCIIPrintf(viewer, "  banded LU (hamshoot) not used: %s; %s instead:\n", b->why,
                                     InnerName(b)));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PCView(b->inner, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  } else if (ascii && b->bd) {
    PetscCall(HsBandBorderView(b, viewer));
  } else if (ascii) {
    const char *mult = Defers(pc, b) ? "factored at the first solve, its right-hand side along (multipliers not kept)"
                                     : "multipliers kept";
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  banded LU with partial pivoting (hamshoot): %" PetscInt_FMT " below, %" PetscInt_FMT
                                     " above the diagonal; rows in staircase order, %" PetscInt_FMT " columns wide "
                                     "(rank 0)%s; %s; reduced system of %" PetscInt_FMT
                                     " interface unknowns on rank 0; %" PetscInt_FMT " refinement step(s)%s\n",
                                     b->kl, b->ku, b->W, b->reverse && b->size > 1 ? "; the last rank bottom-up" : "",
                                     mult, b->nred, HsBandRefineSteps(b), b->refine < 0 ? " (by the band's width)" : ""));
    if (pc->setupcalled && !b->pending)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  U: %" PetscCount_FMT " entries on rank 0, %" PetscCount_FMT " of them in "
                                       "place (in the matrix' values); the elimination's %s version\n", b->utot, b->unin,
                                       HsBandUseAVX2(b) ? "AVX2" : "default"));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Compose(PC pc, PetscBool set);

/* PCReset: the inner MUMPS LU and the layout go, so that the next setup factors from scratch
 * (HsSolverResetFactorization after a failed factorization: the inner LU had survived it with its failed factor) */
static PetscErrorCode PCReset_HsBand(PC pc)
{
  PC_HsBand *b = (PC_HsBand *)pc->data;

  PetscFunctionBeginUser;
  PetscCall(PCDestroy(&b->inner));
  PetscCall(HsBandBorderDestroy(b));
  PetscCall(HsBandFree(b, PETSC_FALSE)); /* the layout: made again from the matrix */
  PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_HsBand(PC pc)
{
  PetscFunctionBeginUser;
  PetscCall(Compose(pc, PETSC_FALSE));
  PetscCall(PCDestroy(&((PC_HsBand *)pc->data)->inner));
  PetscCall(HsBandBorderDestroy((PC_HsBand *)pc->data));
  PetscCall(HsBandFree((PC_HsBand *)pc->data, PETSC_TRUE));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

/* HsPCSetInPlace for hsband ("HsPCSetInPlace_C"): whether the factorizations of pc store U in the
    matrix' own values, behind the rows the elimination has read (as long as it fits there; the rest goes to the
    PC's store): the first touch and the memory of U saved (kepler, N = 1e6: 1.7 GB of 5 GB per rank). The matrix
    (an AIJ one) is then marked factored (PETSc's MatLUFactor in-place mark): nothing may multiply by it, view it
    or set its values until its owner calls MatSetUnfactored and fills in every value again, as the
    transcription's Jacobian does. Not with refinement, -info or a reused preconditioner (InPlace). bvp/
    internal: HsSolverSolveNewton decides it (-hs_in_place). Not collective. */
static PetscErrorCode SetInPlace(PC pc, PetscBool flg)
{
  PetscBool band;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, "hsband", &band));
  if (band)
    ((PC_HsBand *)pc->data)->inplace = flg;
  PetscFunctionReturn(0);
}

/* HsPCGetInner for hsband ("HsPCGetInner_C"): the MUMPS LU it factors by instead, outside its limits (NULL when
   it factors itself; after PCSetUp). Not collective. */
static PetscErrorCode GetInner(PC pc, PC *inner)
{
  PetscFunctionBeginUser;
  *inner = ((PC_HsBand *)pc->data)->inner;
  PetscFunctionReturn(0);
}

/* HsPCIsExact for hsband ("HsPCIsExact_C"): partial pivoting, nothing dropped; its inner LU's answer outside
   its limits. Not collective. */
static PetscErrorCode IsExact(PC pc, PetscBool *exact)
{
  PC inner = ((PC_HsBand *)pc->data)->inner;

  PetscFunctionBeginUser;
  *exact = PETSC_TRUE;
  if (inner)
    PetscCall(HsPCIsExact(inner, exact));
  PetscFunctionReturn(0);
}

/* HsPCBandSetFallbackGather for hsband ("HsPCBandSetFallbackGather_C"). Not collective. */
static PetscErrorCode SetFallbackGather(PC pc, PetscBool flg)
{
  PetscFunctionBeginUser;
  ((PC_HsBand *)pc->data)->gather = flg;
  PetscFunctionReturn(0);
}

/*@ HsPCBandSetFallbackGather - whether PC hsband, outside its limits on more than one rank, factors by PC hsgather
    (the whole matrix on every rank, sequential MUMPS: reproducible bit for bit) instead of MUMPS' parallel LU
    (-pc_hsband_fallback_gather; default false: the transcription's large matrices must not be gathered). For small
    systems: the multiple shootings' outer ones (HsSegLayoutSetUpSolver). A no-op on other PCs. Logically
    collective. @*/
PetscErrorCode HsPCBandSetFallbackGather(PC pc, PetscBool flg)
{
  PetscFunctionBeginUser;
  PetscTryMethod(pc, "HsPCBandSetFallbackGather_C", (PC, PetscBool), (pc, flg));
  PetscFunctionReturn(0);
}

/* The functions hsband answers (pcutils.c), composed on pc (set) or removed (destroy). */
static PetscErrorCode Compose(PC pc, PetscBool set)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCBandSetFallbackGather_C", set ? SetFallbackGather : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetInner_C", set ? GetInner : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", set ? GetDeterminant : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCSetInPlace_C", set ? SetInPlace : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCIsExact_C", set ? IsExact : NULL));
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
  b->spike_tol            = HS_BAND_SPIKE_THRESHOLD;
  b->defer                = PETSC_TRUE;
  b->border               = PETSC_TRUE;
  pc->data                = b;
  pc->ops->setfromoptions = PCSetFromOptions_HsBand;
  pc->ops->setup   = PCSetUp_HsBand;
  pc->ops->apply   = PCApply_HsBand;
  pc->ops->applytranspose = HsPCNoTranspose;
  pc->ops->view    = PCView_HsBand;
  pc->ops->reset   = PCReset_HsBand;
  pc->ops->destroy = PCDestroy_HsBand;
  PetscCall(Compose(pc, PETSC_TRUE));
  PetscFunctionReturn(0);
}
