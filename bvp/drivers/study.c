/* hamshoot: accuracy from a sequence of grids (issue 12).
 *
 *   HsSolverExtrapolate (-hs_extrapolate)        after a converged solve at N (N divisible by 4): the
 *                                                same problem at N/2 and N/4 (-hs_extrapolate_grids K:
 *                                                down to N/2^(K-1)), and Richardson's extrapolation
 *                                                (-hs_extrapolate_romberg: Romberg's) with an error estimate
 *   HsSolverConvergenceStudy (-hs_study L)        after a converged solve at N0: the grids N0 2^i,
 *                                                i = 1..L-1; differences, observed orders, a table,
 *                                                study.json, study.csv and a log-log plot study.png
 *
 * Both schemes of hamshoot are second order and symmetric (midpoint-type states, costates at the
 * interval midpoints), so a quantity Q computed at step h = T/N expands as
 * Q_N = Q + c2 h^2 + c4 h^4 + ...: measured on the pendulum and kepler, the two-grid errors fall by
 * 16 per doubling (docs/accuracy.md). Hence
 *
 *   R(N) = (4 Q_N - Q_{N/2}) / 3             = Q + O(h^4)     (two grids)
 *   err  = |R(N) - R(N/2)| / 15                                (three grids: the h^4 term of R(N))
 * and for the fourth-order -hs_scheme conserving4 (Q + c4 h^4 + c6 h^6 + ...) the same with 16 and 63, its
 * observed orders compared with 4 (SchemeOrder); its costates and controls are node values, compared at shared nodes.
 *   p    = log2(|Q_{N/4} - Q_{N/2}| / |Q_{N/2} - Q_N|)          (observed order; 2 in the asymptotic range)
 *
 * for J^d, the mean of H^d, a free T, and the states at the nodes shared by N and N/2 (t = k T/(N/2);
 * with a free T, at the same fraction k/(N/2) of each grid's own T). Controls and costates live on
 * interval midpoints, which a grid and its half do not share: the study compares them through the
 * mean of the two fine intervals inside a coarse one, an O(h^2)-consistent restriction, so their
 * differences give orders but are not extrapolated.
 *
 * The extra grids are solved by Newton on the transcription with the same schemes (the discrete
 * solution does not depend on the formulation that solves it), each from the solution of the
 * previous grid interpolated in time (grid sequencing: from the solution at N the coarser ones
 * converge in a few iterations, and a study's finer ones too). HsSolverSolveExtrapolated (the
 * executable's -hs_extrapolate) goes coarse first: N/4 from the start, N/2 and then the solve at N
 * itself from the coarser solution, so that only the cheapest grid starts from the default guess
 * (a conserving4 solution is passed on with its node costates, interpolated by cubics: guess.c).
 */
#include "hsdrivers.h"

#include <string.h>
#include <unistd.h>

/* One solved grid: results and, on every rank, its node rows (x_k, lambda_{k+1/2}) and controls. */
typedef struct {
  PetscInt   N;
  HsResults  r;
  PetscReal *x;       /* (N + 1) x 4n */
  PetscReal *u;       /* N x m */
  PetscBool  retried; /* Newton from the coarser grid failed; the strategy solved it again (r: the retry's) */
  PetscBool  nodal;   /* x's costates are node values (conserving4's; guess.c interpolates them by cubics) */
  PetscReal  bnd_e;   /* the eps-continuation's smoothing of an interrupted solve (-1: outside it; bnd_e_now) */
} Level;

/* HsRunGnuplot asks it while gnuplot runs: a signal stops gnuplot too (a scheduler's SIGTERM had waited for it). */
static int Interrupted(void) { return HsInterruptPending() ? 1 : 0; }

/* The solution of a solved solver t on every rank (its diagnostics gathered it on rank 0). */
static PetscErrorCode TakeLevel(HsSolver t, Level *L)
{
  PetscInt    w = 4 * t->prob->n, dim = 2 * t->prob->n, m = t->prob->m, len = (t->N + 1) * w;
  PetscMPIInt rank;
  MPI_Comm    comm = PetscObjectComm((PetscObject)t);

  PetscFunctionBeginUser;
  L->N = t->N, L->nodal = (PetscBool)(t->scheme == HS_SCHEME_CONSERVING4), L->bnd_e = t->bnd_e_now;
  PetscCall(HsSolverGetResults(t, &L->r));
  PetscCall(PetscMalloc2(len, &L->x, t->N * m, &L->u));
  PetscCall(HsSolverShareSolutionRows(t, L->x));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    for (PetscInt k = 0; k < t->N; k++) {
      const PetscReal *xk = L->x + k * w;
      if (t->U0)
        PetscCall(PetscArraycpy(L->u + k * m, t->U0 + k * m, m));
      else /* a converged solution: no domain error */
        HsDiscControl(t->disc, xk, xk + w, xk + dim, L->u + k * m);
    }
  }
  PetscCallMPI(MPI_Bcast(L->u, (PetscMPIInt)(t->N * m), MPIU_REAL, 0, comm));
  PetscFunctionReturn(0);
}

static PetscErrorCode FreeLevel(Level *L)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree2(L->x, L->u));
  PetscFunctionReturn(0);
}

/*@ HsSolverCreateGrid - a solver of the problem of s at N intervals (bvp/ internal): transcription,
    the schemes and tolerances of s, Newton only (HS_STRATEGY_NEWTON), no checkpoints of its own (it
    stops on a signal), no monitor; the caller sets its guess. The sub-solves move a free T of the
    shared problem: the caller restores it. Collective. @*/
PetscErrorCode HsSolverCreateGrid(HsSolver s, PetscInt N, HsSolver *t)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PetscObjectComm((PetscObject)s), t));
  PetscCall(HsSolverSetProblem(*t, s->prob));
  PetscCall(HsSolverSetNumIntervals(*t, N));
  if (s->scheme == HS_SCHEME_CONSERVING4) /* its own scheme, not a pair */
    PetscCall(HsSolverSetScheme(*t, "conserving4"));
  else
    PetscCall(HsSolverSetSchemes(*t, s->ss, s->cs));
  PetscCall(HsSolverSetDGTolerance(*t, s->dg_tol));
  PetscCall(HsSolverSetRoundoffFactor(*t, s->roundoff));
  PetscCall(HsSolverSetNoiseFactor(*t, s->noise_factor));
  PetscCall(HsSolverSetPolish(*t, s->polish_max));
  PetscCall(HsSolverSetLinearSolver(*t, s->linear_solver));
  PetscCall(HsSolverSetCondense(*t, s->condense));
  PetscCall(HsSolverSetType(*t, HSSOLVERTRANSCRIPTION));
  PetscCall(HsSolverSetStrategy(*t, HS_STRATEGY_NEWTON));
  (*t)->ckpt_dir[0]    = 0;
  (*t)->check_boundary = s->check_boundary; /* -hs_check_boundary false holds for the sub-solves */
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckpointCoarsePeriodic(HsSolver, HsSolver, PetscBool *, char *, size_t);

/* The coarse grid's linear solver (of snes) in the workspace of s's, where their types can (HsPCBorrowWork): the grids
 * N/2^(K-1) .. N/2 then touch the pages of N's workspace that the grid before touched, not fresh memory (pendulum,
 * conserving4 + Romberg, K = 4, N = 224: 222 page faults in the timed solve, 150 of them the condensation's). */
static PetscErrorCode BorrowWork(HsSolver s, SNES snes)
{
  KSP ks, kt;
  PC  ps, pt;

  PetscFunctionBeginUser;
  if (!s->snes)
    PetscFunctionReturn(0);
  PetscCall(SNESGetKSP(s->snes, &ks));
  PetscCall(SNESGetKSP(snes, &kt));
  PetscCall(KSPGetPC(ks, &ps));
  PetscCall(KSPGetPC(kt, &pt));
  PetscCall(HsPCBorrowWork(pt, ps));
  PetscFunctionReturn(0);
}

/* The grid solver t (of SolveGrid) set up and run from the solution `from` interpolated in time (NULL: the default
 * guess) with strategy, its SNES options with the prefix hs_grid_; *L its solution. coarse: a coarse grid of
 * HsSolverSolveExtrapolated, whose -hs_checkpoint_every writes s's checkpoint at N (issue 38). */
static PetscErrorCode RunGrid(HsSolver s, HsSolver t, const Level *from, HsStrategy strategy, PetscBool coarse,
                              Level *L)
{
  SNES        snes;
  const char *prefix;

  PetscFunctionBeginUser;
  PetscCall(HsSolverSetStrategy(t, strategy));
  PetscCall(HsSolverGetOptionsPrefix(s, &prefix));
  PetscCall(HsSolverSetOptionsPrefix(t, prefix));
  PetscCall(HsSolverAppendOptionsPrefix(t, "hs_grid_"));
  if (from) {
    PetscCall(HsSolverSetInitialGuess(t, from->N, from->x));
    t->guess_T = s->prob->free_T ? from->r.T : 0, t->guess_nodal = from->nodal; /* node costates: cubics (guess.c) */
  }
  if (coarse) /* its problem's boundary rows were tested once for all the grids (HsSolverSolveExtrapolated) */
    t->check_boundary = PETSC_FALSE;
  PetscCall(HsSolverSetUp(t));
  if (coarse && s->ckpt_dir[0]) { /* -hs_checkpoint_every in a coarse grid: s's checkpoint at N (issue 38) */
    t->ckpt_parent = s, t->ckpt_parent_write = CheckpointCoarsePeriodic;
    t->ckpt_every_its = s->ckpt_every_its, t->ckpt_every_s = s->ckpt_every_s, t->ckpt_last_t = s->ckpt_last_t;
  }
  PetscCall(HsSolverGetSNES(t, &snes));
  PetscCall(SNESSetFromOptions(snes)); /* -hs_grid_snes_* */
  PetscCall(HsSNESCheckType(snes));
  if (coarse) /* coarse first: s (N) has factored nothing yet that is read later, and solves after t (HsPCBorrowWork) */
    PetscCall(BorrowWork(s, snes));
  PetscCall(HsSolverSolve(t));
  PetscCall(TakeLevel(t, L));
  PetscFunctionReturn(0);
}

/* The problem of s at N intervals by Newton from the solution `from` interpolated in time (NULL: the default guess;
 * strategy: newton, or auto for the retry), its SNES options with the prefix hs_grid_ (-hs_grid_snes_max_it); *L its
 * solution. The grid's solver is destroyed on an error too (round 19: -hs_grid_pc_hsband_refine -5 had leaked it). */
static PetscErrorCode SolveGrid(HsSolver s, PetscInt N, const Level *from, HsStrategy strategy, PetscBool coarse,
                                Level *L)
{
  HsSolver       t;
  PetscReal      T0 = s->prob->T;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreateGrid(s, N, &t));
  ierr = RunGrid(s, t, from, strategy, coarse, L);
  PetscCall(HsSolverDestroy(&t));
  PetscCall(ierr);
  if (s->solved)
    HsSolverRestoreFinalTime(s); /* the sub-solves moved a free T of the shared problem */
  else if (s->prob->free_T) {
    /* coarse first (HsSolverSolveExtrapolated): the problem's T as it was */
    HsProblemSetFinalTime(s->prob, T0);
    if (s->disc)
      (void)HsDiscSetHorizon(s->disc);
  }
  PetscFunctionReturn(0);
}

/* The problem of s at N intervals, from the solution `from` interpolated in time; *L its solution. A grid that
 * Newton does not converge is solved again from the same start by -hs_strategy auto (unless s has the strategy
 * newton, or a signal stopped it); one that still does not converge is a warning, L->r says why. */
static PetscErrorCode SolveLevel(HsSolver s, PetscInt N, const Level *from, const char *why, Level *L)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(SolveGrid(s, N, from, HS_STRATEGY_NEWTON, PETSC_FALSE, L));
  L->retried = PETSC_FALSE;
  if (!L->r.converged && s->strategy == HS_STRATEGY_AUTO && strcmp(L->r.status, "INTERRUPTED")) {
    PetscCall(PetscPrintf(comm,
                          "  %s: N = %" PetscInt_FMT ": Newton from N = %" PetscInt_FMT " failed (%s); again by "
                          "-hs_strategy auto\n",
                          why, N, from->N, L->r.status));
    PetscCall(FreeLevel(L));
    PetscCall(SolveGrid(s, N, from, HS_STRATEGY_AUTO, PETSC_FALSE, L));
    L->retried = PETSC_TRUE;
  }
  if (!L->r.converged) {
    PetscCall(PetscPrintf(
        comm, "hamshoot: warning: %s: the solve at N = %" PetscInt_FMT " did not converge (%s)%s%s%s\n", why, N,
        L->r.status, L->retried ? ", nor by -hs_strategy auto" : "", L->r.diagnosis[0] ? ": " : "", L->r.diagnosis));
    PetscFunctionReturn(0);
  }
  if (s->monitor || L->retried)
    PetscCall(PetscPrintf(comm, "  %s: N = %-7" PetscInt_FMT " J^d = %.12g  (%" PetscInt_FMT " Newton iterations%s)\n",
                          why, N, (double)L->r.J, L->r.newton_iterations, L->retried ? ", by -hs_strategy auto" : ""));
  PetscFunctionReturn(0);
}

/* Observed orders (docs/accuracy.md): differences of a quantity Q between grids at most HS_ORDER_ROUNDOFF eps
 * max(1, |Q|) are its round-off (a quantity the grids do not change, or a solve's own residual), and their ratio is
 * no order; an order farther than HS_ORDER_TOLERANCE from the schemes' HS_ORDER_SCHEME says that the grids are not
 * yet in the asymptotic range (pre-asymptotic), where Richardson's value and its error estimate are unreliable. */
#define HS_ORDER_ROUNDOFF 1e4
#define HS_ORDER_SCHEME 2.0
#define HS_ORDER_TOLERANCE 0.5

/* The scheme's order p (HS_ORDER_SCHEME; 4 for -hs_scheme conserving4, docs/theory.md section 8): Richardson weighs
   with W = 2^p, R = (W Q_N - Q_{N/2}) / (W - 1), and its error estimate divides by 4 W - 1 (symmetric schemes:
   the next term is h^{p+2}). */
static PetscReal SchemeOrder(HsSolver s) { return s->scheme == HS_SCHEME_CONSERVING4 ? 4.0 : HS_ORDER_SCHEME; }
#define HS_RICH_W(s) PetscPowReal(2.0, SchemeOrder(s))

/* Whether a difference d of a quantity of size q is at its round-off. */
static PetscBool AtRoundoff(PetscReal d, PetscReal q)
{
  return (PetscBool)(PetscAbsReal(d) <= HS_ORDER_ROUNDOFF * PETSC_MACHINE_EPSILON * PetscMax(1, PetscAbsReal(q)));
}

/* Whether an order p (not at round-off) is far from the schemes'. */
static PetscBool Far(PetscReal p, PetscReal ps) { return (PetscBool)(PetscAbsReal(p - ps) > HS_ORDER_TOLERANCE); }

/* The observed order of three grids Q[0] (N/4), Q[1] (N/2), Q[2] (N): 0 and *rnd when a difference is at
   round-off. */
static void Order3(const PetscReal Q[3], PetscReal *p, PetscBool *rnd)
{
  PetscReal d0 = Q[0] - Q[1], d1 = Q[1] - Q[2];
  PetscReal q = PetscMax(PetscAbsReal(Q[0]), PetscMax(PetscAbsReal(Q[1]), PetscAbsReal(Q[2])));

  *rnd = (PetscBool)(AtRoundoff(d0, q) || AtRoundoff(d1, q));
  *p   = !*rnd ? PetscLog2Real(PetscAbsReal(d0 / d1)) : 0;
}

/* Richardson on K grids Q[0] (N/2^(K-1)) .. Q[K-1] (N): value, error estimate, observed order of the three finest
   (0 and *rnd when a difference is at round-off). Column 1 of the table, R1 = (W Q_N - Q_{N/2})/(W - 1) with
   W = 2^p; column j > 1 eliminates h^(p+2j-2): R + (R - R')/(4^(j-1) W - 1) (an expansion in even powers: symmetric
   schemes). Not romberg: R1, its error estimate |R1 - R0|/(4W - 1), the h^(p+2) term. romberg: the table's last
   column (K = 3: R2 = R1 + (R1 - R0)/(4W - 1)), its estimate the size of that last correction, an upper bound once
   asymptotic (the grids give no estimate of the value's own error). *far: romberg and the order of a coarser triple
   (not at round-off) far from ps, all grids entering the value. */
static void RichardsonK(const PetscReal *Q, PetscInt K, PetscReal W, PetscBool romberg, PetscReal ps, PetscReal *R,
                        PetscReal *err, PetscReal *p, PetscBool *rnd, PetscBool *far)
{
  PetscReal T[HS_EXTRAP_GRIDS_MAX] = {0}, c = W, pi;
  PetscInt  last = romberg ? K - 2 : 1; /* the columns before the error estimate */
  PetscBool ri;

  for (PetscInt i = 0; i < K; i++)
    T[i] = Q[i];
  for (PetscInt j = 1; j <= last; j++, c *= 4) /* c = 4^(j-1) W; T[i], i >= j: column j (row i from rows i, i-1) */
    for (PetscInt i = K - 1; i >= j; i--)
      T[i] = j == 1 ? (W * T[i] - T[i - 1]) / (W - 1) : T[i] + (T[i] - T[i - 1]) / (c - 1);
  *err = PetscAbsReal(T[K - 1] - T[K - 2]) / (c - 1);
  *R   = romberg ? T[K - 1] + (T[K - 1] - T[K - 2]) / (c - 1) : T[K - 1];
  Order3(Q + K - 3, p, rnd);
  *far = PETSC_FALSE;
  for (PetscInt i = 0; romberg && i < K - 3; i++) {
    Order3(Q + i, &pi, &ri);
    *far = (PetscBool)(*far || (!ri && Far(pi, ps)));
  }
}

static PetscErrorCode ExtrapolateLevels(HsSolver s, Level *L, PetscReal t0);

/*@ HsSolverExtrapolate - Richardson's extrapolation of the last solve (file head).

  Collective.

  Input Parameter:
. s - the solver

  Options Database Key:
. -hs_extrapolate - the hamshoot executable extrapolates after the solve

  Notes:
  Solves the problem at N/2 and N/4 (transcription, the same schemes, from this solution), then
  R = (4 Q_N - Q_{N/2})/3 (conserving4: (16 Q_N - Q_{N/2})/15) with the error estimate |R(N) - R(N/2)|/15 (/63)
  and the observed order for J^d, the mean of
  H^d and a free T, and the states at the nodes of N/2 (with their largest error estimate over the nodes of N/4).
  With HsSolverSetExtrapolateRomberg() J^d, H^d and T are Romberg's R + (R(N) - R(N/2))/15 (/63), the states not.
  HsSolverSetExtrapolateGrids() K > 3 adds the grids N/8 .. N/2^(K-1): Romberg's table then runs over all K (its
  observed orders those of the three finest, every coarser triple's in the pre-asymptotic check); Richardson's value,
  estimate and order stay those of the three finest grids. The results are in HsResults.extrap; HsSolverView
  prints them, HsSolverWriteOutput adds them to summary.json and writes extrapolated.csv (the states).

  Call it after a converged HsSolverSolve(); N must be divisible by 2^(K-1) (and N/2^(K-1) >= 2). A coarse grid
  that does not converge is a warning, and extrap.done stays false.

.seealso: HsSolverConvergenceStudy(), HsSolverGetResults(), HsSolverWriteOutput()
@*/
PetscErrorCode HsSolverExtrapolate(HsSolver s)
{
  Level     L[HS_EXTRAP_GRIDS_MAX];
  PetscInt  N = s->N, K = s->ext_grids, f = (PetscInt)1 << (K - 1), i;
  PetscReal t0;
  HsExtrap *e    = &s->res.extrap;
  MPI_Comm  comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(s->solved && s->res.converged, comm, PETSC_ERR_ORDER,
             "-hs_extrapolate: the solve at N = %" PetscInt_FMT " did not converge; nothing to extrapolate", N);
  PetscCheck(N % f == 0 && N >= 2 * f, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_extrapolate solves at N/2 .. N/%" PetscInt_FMT ": N = %" PetscInt_FMT
             " must be a multiple of %" PetscInt_FMT " and at least %" PetscInt_FMT,
             f, N, f, 2 * f);
  PetscCall(PetscMemzero(e, sizeof *e));
  t0 = MPI_Wtime();
  PetscCall(TakeLevel(s, &L[K - 1]));
  for (i = K - 2; i >= 0; i--) { /* finest first, each from the one above */
    PetscCall(SolveLevel(s, L[i + 1].N / 2, &L[i + 1], "-hs_extrapolate (no extrapolation)", &L[i]));
    if (!L[i].r.converged)
      break;
  }
  if (i >= 0) {                                  /* L[i] did not converge */
    if (!strcmp(L[i].r.status, "INTERRUPTED")) { /* the caller exits with status 3 */
      s->interrupted = PETSC_TRUE;
      PetscCall(
          PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                        "signal received during -hs_extrapolate (the solve had converged; its output is written)"));
    }
    for (; i < K; i++)
      PetscCall(FreeLevel(&L[i]));
    PetscFunctionReturn(0);
  }
  PetscCall(ExtrapolateLevels(s, L, t0));
  PetscFunctionReturn(0);
}

/* Richardson of the K solved grids L (N/2^(K-1) .. N/2, N) into s->res.extrap and s->Xext (HsSolverExtrapolate's
 * notes); frees the levels; the extrapolation's wall time counts from t0 on. */
static PetscErrorCode ExtrapolateLevels(HsSolver s, Level *L, PetscReal t0)
{
  PetscInt  N = s->N, n = s->prob->n, w = 4 * n, dim = 2 * n, Nh = N / 2, K = s->ext_grids;
  PetscReal Q[HS_EXTRAP_GRIDS_MAX] = {0}, xerr = 0, W = HS_RICH_W(s), ps = SchemeOrder(s);
  PetscBool far[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE}; /* a coarser triple's order far (Romberg) */
  HsExtrap *e    = &s->res.extrap;
  MPI_Comm  comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  e->done = PETSC_TRUE, e->romberg = s->romberg, e->ngrids = K;
  for (PetscInt i = 0; i < K; i++)
    e->N[i] = L[i].N, Q[i] = L[i].r.J;
  RichardsonK(Q, K, W, e->romberg, ps, &e->J, &e->J_error, &e->J_order, &e->J_roundoff, &far[0]);
  for (PetscInt i = 0; i < K; i++)
    Q[i] = L[i].r.H_mean;
  RichardsonK(Q, K, W, e->romberg, ps, &e->H_mean, &e->H_mean_error, &e->H_mean_order, &e->H_mean_roundoff, &far[1]);
  for (PetscInt i = 0; i < K; i++)
    Q[i] = L[i].r.T;
  if (s->prob->free_T)
    RichardsonK(Q, K, W, e->romberg, ps, &e->T, &e->T_error, &e->T_order, &e->T_roundoff, &far[2]);
  else
    e->T = s->res.T;
  e->pre_asymptotic =
      (PetscBool)((!e->J_roundoff && Far(e->J_order, ps)) || (!e->H_mean_roundoff && Far(e->H_mean_order, ps)) ||
                  (s->prob->free_T && !e->T_roundoff && Far(e->T_order, ps)) || far[0] || far[1] || far[2]);
  /* the states at the nodes of N/2; the error estimate at those of N/4 */
  PetscCall(PetscFree(s->Xext));
  PetscCall(PetscMalloc1((Nh + 1) * dim, &s->Xext));
  for (PetscInt k = 0; k <= Nh; k++)
    for (PetscInt i = 0; i < dim; i++)
      s->Xext[k * dim + i] = (W * L[K - 1].x[2 * k * w + i] - L[K - 2].x[k * w + i]) / (W - 1);
  for (PetscInt k = 0; k <= N / 4; k++)
    for (PetscInt i = 0; i < dim; i++) {
      PetscReal R0 = (W * L[K - 2].x[2 * k * w + i] - L[K - 3].x[k * w + i]) / (W - 1);
      xerr         = PetscMax(xerr, PetscAbsReal(s->Xext[2 * k * dim + i] - R0) / (4 * W - 1));
    }
  e->states_error = xerr;
  for (PetscInt i = 0; i < K; i++)
    PetscCall(FreeLevel(&L[i]));
  e->wall_time_s = MPI_Wtime() - t0;
  PetscCallMPI(MPI_Bcast(&e->wall_time_s, 1, MPIU_REAL, 0, comm));
  PetscFunctionReturn(0);
}

/* The stored guess of s as a level to start from (NULL: none, the default guess), or s's own after a coarse-first
 * sequence swapped it (SolveExtrapolated). */
typedef struct {
  Level      L;
  PetscBool  has;
  char       source[PETSC_MAX_PATH_LEN + 16];
  PetscReal *rows;
} Stored;

static void TakeStored(HsSolver s, Stored *g)
{
  g->has = (PetscBool)(s->guess != NULL), g->rows = s->guess, s->guess = NULL;
  g->L.N = s->guess_N, g->L.x = g->rows, g->L.r.T = s->guess_T, g->L.nodal = s->guess_nodal;
  (void)PetscStrncpy(g->source, s->guess_source, sizeof g->source);
}

static PetscErrorCode PutStored(HsSolver s, Stored *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->guess));
  s->guess = g->rows, s->guess_N = g->L.N, s->guess_T = g->L.r.T, s->guess_nodal = g->L.nodal, g->rows = NULL;
  PetscCall(PetscStrncpy(s->guess_source, g->source, sizeof s->guess_source));
  PetscFunctionReturn(0);
}

/* The iterate of t (its X, in a solve or restored by -hs_restart) as a level *L: its node rows on every rank, from
 * Xnodes that t's postsolve fills (the transcription's are X itself), gathered here (not HsSolverShareSolutionRows,
 * whose gathered copy is kept for the solution's diagnostics); T the problem's. Collective. */
static PetscErrorCode IterateLevel(HsSolver t, Level *L)
{
  Vec                all;
  const PetscScalar *a;
  PetscInt           len = (t->N + 1) * 4 * t->prob->n;

  PetscFunctionBeginUser;
  if (t->ops->postsolve)
    PetscCall((*t->ops->postsolve)(t));
  PetscCall(HsGatherToAll(t->Xnodes, &all));
  PetscCall(PetscMalloc2(len, &L->x, 1, &L->u));
  PetscCall(VecGetArrayRead(all, &a));
  PetscCall(PetscArraycpy(L->x, a, len));
  PetscCall(VecRestoreArrayRead(all, &a));
  PetscCall(VecDestroy(&all));
  L->N = t->N, L->nodal = (PetscBool)(t->scheme == HS_SCHEME_CONSERVING4), L->bnd_e = t->bnd_e_now;
  L->r.T = t->prob->T, L->retried = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The checkpoint of s at N from a coarse grid's level L (its iterate interpolated to N, as the solve at N starts from
 * N/2's solution, at L's smoothing of bounded controls); s's own guess kept. Collective. */
static PetscErrorCode WriteCoarse(HsSolver s, const Level *L, PetscBool *failed, char *err, size_t len)
{
  Stored    g;
  PetscReal e = s->bnd_e_now;

  PetscFunctionBeginUser;
  TakeStored(s, &g); /* s's own guess back after */
  PetscCall(HsSolverSetInitialGuess(s, L->N, L->x));
  s->guess_T = s->prob->free_T ? L->r.T : 0, s->guess_nodal = L->nodal;
  PetscCall((*s->ops->guess)(s, s->X));
  PetscCall(PutStored(s, &g));
  s->bnd_e_now   = L->bnd_e; /* checkpoint.json's bounds_smoothing: the restart goes on from it */
  s->ckpt_coarse = L->N;     /* and its coarse_grid: the restart solves the grids in order */
  PetscCall(HsSolverWriteCheckpoint(s, s->X, 0, failed, err, len));
  s->bnd_e_now = e, s->ckpt_coarse = 0;
  PetscFunctionReturn(0);
}

/* -hs_checkpoint_every during a coarse grid of HsSolverSolveExtrapolated (HsSolverCheckpointPoll of the grid's
 * sub-solver t, at the end of a Newton iteration): s's checkpoint at N from t's iterate, as a signal's
 * (CheckpointCoarse), so that -hs_restart resumes from the coarse grid's work (issue 38: the coarse grids had no
 * periodic checkpoint). t's postsolve fills its node rows from the iterate. Collective. */
static PetscErrorCode CheckpointCoarsePeriodic(HsSolver s, HsSolver t, PetscBool *failed, char *err, size_t len)
{
  Level L;

  PetscFunctionBeginUser;
  PetscCall(IterateLevel(t, &L));
  PetscCall(WriteCoarse(s, &L, failed, err, len));
  PetscCall(FreeLevel(&L));
  t->ckpt_last_t = s->ckpt_last_t;
  PetscFunctionReturn(0);
}

/* SIGTERM during HsSolverSolveExtrapolated's coarse grid L (done: the grid before it, converged, or 0): the checkpoint
 * of s at N is L's iterate at the signal interpolated to N (as the solve at N starts from N/2's solution), at L's
 * smoothing of bounded controls, so that -hs_restart resumes at N with that work kept (round 18: it had exited 3 with
 * no checkpoint, the coarse grids lost). Marks s interrupted. Collective. */
static PetscErrorCode CheckpointCoarse(HsSolver s, const Level *L, PetscInt done)
{
  PetscBool failed                            = PETSC_TRUE;
  char      err[2 * PETSC_MAX_PATH_LEN + 128] = "", fin[64] = "";

  PetscFunctionBeginUser;
  if (done)
    PetscCall(PetscSNPrintf(fin, sizeof fin, "N = %" PetscInt_FMT " converged, ", done));
  if (s->ckpt_dir[0])
    PetscCall(WriteCoarse(s, L, &failed, err, sizeof err));
  s->interrupted       = PETSC_TRUE;
  s->interrupt_unsaved = (PetscBool)(failed && s->ckpt_dir[0]); /* a sub-solve writes none: not a failure */
  if (failed)
    PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                            "signal received during -hs_extrapolate's coarse grids (%sN = %" PetscInt_FMT
                            " stopped; nothing solved at N = %" PetscInt_FMT "), no checkpoint%s%s",
                            fin, L->N, s->N, err[0] ? ": " : " (none is written: a sub-solve)", err));
  else
    PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                            "signal received during -hs_extrapolate's coarse grids (%sN = %" PetscInt_FMT
                            " stopped), checkpoint in %s: its iterate interpolated to N = %" PetscInt_FMT
                            " (resume: the same command with -hs_restart %s)",
                            fin, L->N, s->ckpt_dir, s->N, s->ckpt_dir));
  PetscFunctionReturn(0);
}

/*@ HsSolverSolveExtrapolated - the solve and Richardson's extrapolation of HsSolverExtrapolate(), its grids solved
    from the coarsest up (grid sequencing): N/4 (N/2^(K-1), HsSolverSetExtrapolateGrids()) from the solver's start,
    each finer one from the one below, then HsSolverSolve() at N from N/2's.

  Collective.

  Input Parameter:
. s - the solver (N a multiple of 2^(K-1), at least 2^K; K = 3 by default)

  Options Database Key:
. -hs_extrapolate_coarse_first <true> - the hamshoot executable's -hs_extrapolate does this (false: the solve at N
  first, then HsSolverExtrapolate())

  Notes:
  The solutions are those of HsSolverSolve() and HsSolverExtrapolate() to Newton's tolerance (the discrete solution
  does not depend on its start); only the Newton iterations differ: from the interpolated coarser solution (cubics for
  conserving4's node costates, guess.c) the finer grids need few. Where that cannot apply (a restart from a checkpoint
  not of the coarse grids, a warm start, -hs_initial_guess direct, N not a multiple of 4) or a coarse grid does not
  converge, it is HsSolverSolve() followed by HsSolverExtrapolate(). A restart from a checkpoint of the coarse grids
  (its coarse_grid; not with a free T) solves N/4 from its iterate, then N/2 and N in order, as the run it resumes. The
coarse grids' time counts in extrap.wall_time_s, not in the solve's. The stored guess of s is its own again after the
solve. A signal during the coarse grids writes a checkpoint of s at N, the stopped grid's iterate interpolated
(HsSolverGetInterrupted() says so), which HsSolverSetRestart() resumes; so does -hs_checkpoint_every there
(HsSolverSetCheckpoint()), after the grid's Newton iterations.

.seealso: HsSolverExtrapolate(), HsSolverSolve(), HsSolverSetInitialGuess()
@*/
PetscErrorCode HsSolverSolveExtrapolated(HsSolver s)
{
  Level     L[HS_EXTRAP_GRIDS_MAX], R;
  Stored    g;
  PetscInt  N, K = s->ext_grids, f = (PetscInt)1 << (K - 1), nl;
  PetscBool coarse_re;
  PetscReal t0, tc;
  HsResults r;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(HsSolverSetUp(s));
  N         = s->N;
  coarse_re = (PetscBool)(s->restart_pending && s->restart_coarse && !s->prob->free_T && N % f == 0 && N >= 2 * f);
  if (N % f || N < 2 * f || (s->restart_pending && !coarse_re) || (s->warm && s->solved) ||
      s->guess_type == HS_GUESS_DIRECT) {
    PetscCall(HsSolverSolve(s));
    PetscCall(HsSolverGetResults(s, &r));
    if (r.converged)
      PetscCall(HsSolverExtrapolate(s));
    PetscFunctionReturn(0);
  }
  t0 = MPI_Wtime();
  /* the test of the boundary rows depends on the problem alone: s's set-up above made it, the coarse grids skip it */
  g.has = (PetscBool)(s->guess != NULL);
  g.L.N = s->guess_N, g.L.x = s->guess, g.L.r.T = s->guess_T, g.L.nodal = s->guess_nodal;
  if (coarse_re) { /* a checkpoint of the coarse grids: N/2^(K-1) from its iterate, then in order (issue 38: N first
                      had given another N/2 solution, within its noise floor, and another order) */
    PetscCall(IterateLevel(s, &R));
    s->restart_pending = PETSC_FALSE, s->restart_coarse = 0;
  }
  PetscCall(SolveGrid(s, N / f, coarse_re ? &R : g.has ? &g.L : NULL, s->strategy, PETSC_TRUE, &L[0]));
  if (coarse_re)
    PetscCall(FreeLevel(&R));
  for (nl = 1; nl < K - 1 && L[nl - 1].r.converged; nl++) /* L[0 .. nl-1] solved, the last converged or not */
    PetscCall(SolveGrid(s, 2 * L[nl - 1].N, &L[nl - 1], s->strategy, PETSC_TRUE, &L[nl]));
  if (!strcmp(L[nl - 1].r.status, "INTERRUPTED")) {
    PetscCall(CheckpointCoarse(s, &L[nl - 1], nl > 1 ? L[nl - 2].N : 0)); /* the caller exits with status 3 */
    for (PetscInt i = nl - 1; i >= 0; i--)
      PetscCall(FreeLevel(&L[i]));
    PetscFunctionReturn(0);
  }
  if (!L[nl - 1].r.converged) { /* the solve at N first, then the coarse grids from it */
    PetscCall(PetscInfo(s, "-hs_extrapolate: N = %" PetscInt_FMT " did not converge from the coarse start; N first\n",
                        L[nl - 1].N));
    for (PetscInt i = nl - 1; i >= 0; i--)
      PetscCall(FreeLevel(&L[i]));
    PetscCall(HsSolverSolve(s));
    PetscCall(HsSolverGetResults(s, &r));
    if (r.converged && !s->interrupted)
      PetscCall(HsSolverExtrapolate(s));
    PetscFunctionReturn(0);
  }
  if (s->monitor)
    for (PetscInt i = 0; i < K - 1; i++)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s),
                            "  -hs_extrapolate (coarse first): N = %-7" PetscInt_FMT " J^d = %.12g  (%" PetscInt_FMT
                            " Newton iterations)\n",
                            L[i].N, (double)L[i].r.J, L[i].r.newton_iterations));
  TakeStored(s, &g); /* s starts from N/2's solution; its own guess back after */
  PetscCall(HsSolverSetInitialGuess(s, N / 2, L[K - 2].x));
  s->guess_T = s->prob->free_T ? L[K - 2].r.T : 0, s->guess_nodal = L[K - 2].nodal;
  PetscCall(PetscSNPrintf(s->guess_source, sizeof s->guess_source,
                          "%sgrid sequencing (-hs_extrapolate): the solution at N/2 = %" PetscInt_FMT
                          ", from N/%" PetscInt_FMT " = %" PetscInt_FMT,
                          coarse_re ? "restarted from a checkpoint of a coarse grid, then " : "", N / 2, f, N / f));
  tc = MPI_Wtime() - t0;
  PetscCall(HsSolverSolve(s));
  PetscCall(PutStored(s, &g));
  PetscCall(HsSolverGetResults(s, &r));
  if (!r.converged || s->interrupted) {
    for (PetscInt i = K - 2; i >= 0; i--)
      PetscCall(FreeLevel(&L[i]));
    PetscFunctionReturn(0);
  }
  PetscCall(TakeLevel(s, &L[K - 1]));
  PetscCall(ExtrapolateLevels(s, L, MPI_Wtime() - tc));
  PetscFunctionReturn(0);
}

/* ---- the convergence study ---- */

typedef struct {
  HsSolver   s;
  PetscInt   nl;
  Level     *L;
  PetscReal *dx, *du, *dl;  /* level i against i+1 (i < nl - 1) */
  PetscReal (*ord)[5];      /* observed orders at level i (0 < i < nl - 1) of J, H^d, dx, du, dlambda */
  PetscBool (*rnd)[5];      /* ... whose differences are at round-off (no order) */
  PetscBool pre_asymptotic; /* an order of J or H^d at the finest level far from the schemes' (HS_ORDER_TOLERANCE) */
  PetscReal JR, HR, TR;     /* Richardson of the two finest grids */
  PetscInt  failed_N;       /* the grid that did not converge (0: none; the study has the nl grids before it) */
  char      failed[384];    /* why */
  PetscBool interrupted;    /* it was stopped by a signal */
  int       plotted;        /* gnuplot made study.png (study.json names it only then) */
  PetscBool failed_retried; /* the grid failed_N was solved again by -hs_strategy auto, and failed again */
  PetscErrorCode
      error; /* the error that stopped it (its grid failed_N), returned after the finished grids are written */
} Study;

/* Largest differences between grid i and grid i+1 (twice as fine): states at the shared nodes, and
 * controls and costates of a coarse interval against the mean of the two fine ones inside it. */
static void Differences(Study *st, PetscInt i)
{
  const Level *a = &st->L[i], *b = &st->L[i + 1];
  PetscInt     n = st->s->prob->n, m = st->s->prob->m, w = 4 * n, dim = 2 * n;
  PetscReal    dx = 0, du = 0, dl = 0, c = st->s->scheme == HS_SCHEME_CONSERVING4 ? 0 : 0.5; /* conserving4: nodes */

  for (PetscInt k = 0; k <= a->N; k++)
    for (PetscInt j = 0; j < dim; j++)
      dx = PetscMax(dx, PetscAbsReal(a->x[k * w + j] - b->x[2 * k * w + j]));
  for (PetscInt k = 0; k < a->N; k++) {
    for (PetscInt j = 0; j < dim; j++)
      dl = PetscMax(dl, PetscAbsReal(a->x[k * w + dim + j] -
                                     ((1 - c) * b->x[2 * k * w + dim + j] + c * b->x[(2 * k + 1) * w + dim + j])));
    for (PetscInt j = 0; j < m; j++)
      du =
          PetscMax(du, PetscAbsReal(a->u[k * m + j] - ((1 - c) * b->u[2 * k * m + j] + c * b->u[(2 * k + 1) * m + j])));
  }
  st->dx[i] = dx, st->du[i] = du, st->dl[i] = dl;
}

/* The observed order from the differences a (coarser) and b of a quantity of size q; *rnd when one is at round-off. */
static PetscReal Order(PetscReal a, PetscReal b, PetscReal q, PetscBool *rnd)
{
  *rnd = (PetscBool)(AtRoundoff(a, q) || AtRoundoff(b, q));
  return !*rnd ? PetscLog2Real(a / b) : 0;
}

/* The largest |value| of grid L's states (j0 = 0) or costates (j0 = 2n) at its nodes, or of its controls (u). */
static PetscReal Size(const Level *L, PetscInt n, PetscInt m, PetscInt j0, PetscBool u)
{
  PetscReal q = 0;
  if (u)
    for (PetscInt k = 0; k < L->N * m; k++)
      q = PetscMax(q, PetscAbsReal(L->u[k]));
  else
    for (PetscInt k = 0; k <= L->N; k++)
      for (PetscInt j = 0; j < 2 * n; j++)
        q = PetscMax(q, PetscAbsReal(L->x[k * 4 * n + j0 + j]));
  return q;
}

/* The observed orders at level i (0 < i < nl - 1), from the grids i - 1, i, i + 1. */
static void Orders(Study *st, PetscInt i)
{
  const Level     *l = &st->L[i];
  const HsResults *a = &st->L[i - 1].r, *b = &l->r, *c = &st->L[i + 1].r;
  PetscInt         n = st->s->prob->n, m = st->s->prob->m;
  PetscReal        qJ = PetscMax(PetscAbsReal(a->J), PetscAbsReal(b->J)),
            qH        = PetscMax(PetscAbsReal(a->H_mean), PetscAbsReal(b->H_mean));

  st->ord[i][0] = Order(PetscAbsReal(a->J - b->J), PetscAbsReal(b->J - c->J), qJ, &st->rnd[i][0]);
  st->ord[i][1] = Order(PetscAbsReal(a->H_mean - b->H_mean), PetscAbsReal(b->H_mean - c->H_mean), qH, &st->rnd[i][1]);
  st->ord[i][2] = Order(st->dx[i - 1], st->dx[i], Size(l, n, m, 0, PETSC_FALSE), &st->rnd[i][2]);
  st->ord[i][3] = Order(st->du[i - 1], st->du[i], Size(l, n, m, 0, PETSC_TRUE), &st->rnd[i][3]);
  st->ord[i][4] = Order(st->dl[i - 1], st->dl[i], Size(l, n, m, 2 * n, PETSC_FALSE), &st->rnd[i][4]);
}

/* The study's differences, observed orders, pre-asymptotic flag and Richardson's values of its st->nl grids. */
static void Analyse(Study *st)
{
  PetscInt levels = st->nl;

  for (PetscInt i = 0; i + 1 < levels; i++)
    Differences(st, i);
  for (PetscInt i = 1; i + 1 < levels; i++)
    Orders(st, i);
  if (levels >= 3) { /* the orders of the three finest grids, those of Richardson's value */
    PetscInt i = levels - 2;
    for (int j = 0; j < 2; j++)
      st->pre_asymptotic =
          (PetscBool)(st->pre_asymptotic || (!st->rnd[i][j] && Far(st->ord[i][j], SchemeOrder(st->s))));
  }
  if (levels >= 2) {
    PetscReal W = HS_RICH_W(st->s);
    st->JR      = (W * st->L[levels - 1].r.J - st->L[levels - 2].r.J) / (W - 1);
    st->HR      = (W * st->L[levels - 1].r.H_mean - st->L[levels - 2].r.H_mean) / (W - 1);
    st->TR      = (W * st->L[levels - 1].r.T - st->L[levels - 2].r.T) / (W - 1);
  } else /* one grid: no extrapolation */
    st->JR = st->L[0].r.J, st->HR = st->L[0].r.H_mean, st->TR = st->L[0].r.T;
}

/* study.csv: one row per grid; the differences on the row of the coarser grid (empty on the finest). */
static int WriteCSV(FILE *f, void *ctx)
{
  Study *st = ctx;

  fprintf(f, "N,J,J_minus_JR,H_mean,H_minus_HR,T,dx,du,dlambda,status\n");
  for (PetscInt i = 0; i < st->nl; i++) {
    const HsResults *r = &st->L[i].r;
    fprintf(f, "%d,%.17g,%.17g,%.17g,%.17g,%.17g", (int)st->L[i].N, (double)r->J, (double)(r->J - st->JR),
            (double)r->H_mean, (double)(r->H_mean - st->HR), (double)r->T);
    if (i + 1 < st->nl)
      fprintf(f, ",%.17g,%.17g,%.17g", (double)st->dx[i], (double)st->du[i], (double)st->dl[i]);
    else
      fprintf(f, ",,,");
    fprintf(f, ",%s\n", st->L[i].retried ? "converged by -hs_strategy auto" : "converged");
  }
  if (st->failed_N) /* the grid the study ended at, marked */
    fprintf(f, "%d,,,,,,,,,NOT converged\n", (int)st->failed_N);
  return ferror(f);
}

static int WriteJSON(FILE *f, void *ctx)
{
  Study   *st = ctx;
  HsSolver s  = st->s;

  fprintf(f, "{\n  \"problem\": ");
  HsJsonString(f, s->prob->name);
  fprintf(f, ",\n  \"state_scheme\": \"%s\",\n  \"costate_scheme\": \"%s\",\n", HsSolverStateName(s),
          HsSolverCostateName(s));
  fprintf(f, "  \"J_extrapolated\": %.17g,\n  \"H_mean_extrapolated\": %.17g,\n", (double)st->JR, (double)st->HR);
  if (s->prob->free_T)
    fprintf(f, "  \"T_extrapolated\": %.17g,\n", (double)st->TR);
  fprintf(f, "  \"scheme_order\": %g,\n", (double)SchemeOrder(s));
  fprintf(f,
          "  \"note\": \"J_error, H_error: against the Richardson extrapolation (2^p Q_N - Q_N/2)/(2^p - 1) of the two "
          "finest grids, p = scheme_order; dx, du, dlambda: largest difference to the next finer grid (states at "
          "shared nodes; controls and costates against the mean of the two fine intervals, at shared nodes for "
          "conserving4); order_*: log2 of successive ratios\",\n");
  fprintf(f, "  \"levels\": [\n");
  for (PetscInt i = 0; i < st->nl; i++) {
    const HsResults *r = &st->L[i].r;
    fprintf(f,
            "    {\"N\": %d, \"J\": %.17g, \"J_error\": %.17g, \"H_mean\": %.17g, \"H_error\": %.17g, \"T\": %.17g, "
            "\"newton_iterations\": %d",
            (int)st->L[i].N, (double)r->J, (double)(r->J - st->JR), (double)r->H_mean, (double)(r->H_mean - st->HR),
            (double)r->T, (int)r->newton_iterations);
    if (i + 1 < st->nl)
      fprintf(f, ", \"dx\": %.17g, \"du\": %.17g, \"dlambda\": %.17g", (double)st->dx[i], (double)st->du[i],
              (double)st->dl[i]);
    if (i > 0 && i + 1 < st->nl) { /* an order at round-off: null, and its name in "roundoff_orders" */
      static const char *const key[5] = {"order_J", "order_H", "order_x", "order_u", "order_lambda"};
      int                      any    = 0;
      for (int j = 0; j < 5; j++)
        st->rnd[i][j] ? fprintf(f, ", \"%s\": null", key[j])
                      : fprintf(f, ", \"%s\": %.6g", key[j], (double)st->ord[i][j]);
      fprintf(f, ", \"roundoff_orders\": [");
      for (int j = 0; j < 5; j++)
        if (st->rnd[i][j])
          fprintf(f, "%s\"%s\"", any++ ? ", " : "", key[j]);
      fprintf(f, "]");
    }
    fprintf(f, ", \"retried_by_strategy\": %s}%s\n", st->L[i].retried ? "true" : "false", i + 1 < st->nl ? "," : "");
  }
  fprintf(f, "  ],\n  \"complete\": %s,\n", st->failed_N ? "false" : "true");
  if (st->failed_N) { /* the grid that did not converge: the study ends before it */
    fprintf(f, "  \"failed\": {\"N\": %d, \"retried_by_strategy\": %s, \"why\": ", (int)st->failed_N,
            st->failed_retried ? "true" : "false");
    HsJsonString(f, st->failed);
    fprintf(f, "},\n");
  }
  fprintf(f, "  \"pre_asymptotic\": %s,\n  \"extrapolation_reliable\": %s,\n", st->pre_asymptotic ? "true" : "false",
          st->pre_asymptotic || st->nl < 3 ? "false" : "true");
  fprintf(f, "  \"plot\": %s\n}\n", st->plotted ? "\"study.png\"" : "null");
  return ferror(f);
}

static int WriteScript(FILE *f, void *ctx)
{
  Study *st = ctx;
  char   name[2 * sizeof st->s->prob->name]; /* the problem's name, as data (HsGnuplotString) */

  HsGnuplotString(st->s->prob->name, name, sizeof name);

  fprintf(f,
          "# hamshoot -hs_study: %s, %s states + %s costates. Rerun with: gnuplot study.gp (in this directory).\n"
          "# Rows of study.csv: 0 is the header, 1.. the grids; the finest grid has no difference to a next one.\n"
          HS_GNUPLOT_PNG_FN "set datafile separator ','\nset terminal pngcairo size 900,650 font ',11'\n"
          "set output hs_png('study.png')\n"
          "set logscale xy\nset format y '%%.0e'\nset grid\nset key outside right\nset xlabel 'N'\n"
          "set ylabel 'error / difference'\nset title '%s: convergence (slope -2: order 2)'\n"
          "c = %.17g\n"
          "plot 'study.csv' every ::1::%d using 1:(abs($3)) with linespoints lw 2 pt 7 title '|J - J_R|', \\\n"
          "  '' every ::1::%d using 1:(abs($5)) with linespoints lw 2 pt 5 title '|H - H_R|', \\\n"
          "  '' every ::1::%d using 1:7 with linespoints lw 2 pt 9 title 'max |dx|', \\\n"
          "  '' every ::1::%d using 1:8 with linespoints lw 2 pt 11 title 'max |du|', \\\n"
          "  '' every ::1::%d using 1:9 with linespoints lw 2 pt 13 title 'max |dlambda|', \\\n"
          "  c / x**2 with lines dt 2 lc 'black' title 'N^{-2}'\n",
          name, HsSolverStateName(st->s), HsSolverCostateName(st->s), name,
          (double)(st->dx[0] > 0 ? st->dx[0] * (double)st->L[0].N * (double)st->L[0].N : 1), (int)st->nl - 1,
          (int)st->nl - 1, (int)st->nl - 1, (int)st->nl - 1, (int)st->nl - 1);
  return ferror(f);
}

static PetscErrorCode PrintTable(Study *st, const char *dir, PetscBool plot)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)st->s);

  PetscFunctionBeginUser;
  if (st->s->scheme == HS_SCHEME_CONSERVING4)
    PetscCall(PetscPrintf(comm, "hamshoot convergence study: %s, conserving4 (order 4)\n", st->s->prob->name));
  else
    PetscCall(PetscPrintf(comm, "hamshoot convergence study: %s, %s states + %s costates\n", st->s->prob->name,
                          HsSolverStateName(st->s), HsSolverCostateName(st->s)));
  PetscCall(PetscPrintf(comm, "  %7s  %19s  %9s %5s  %9s %5s  %9s %5s  %9s %5s  %9s %5s\n", "N", "J^d", "J - J_R",
                        "order", "H - H_R", "order", "max|dx|", "order", "max|du|", "order", "max|dlam|", "order"));
  for (PetscInt i = 0; i < st->nl; i++) {
    const HsResults *r  = &st->L[i].r;
    PetscBool        up = (PetscBool)(i > 0 && i + 1 < st->nl), dn = (PetscBool)(i + 1 < st->nl);
    char             ord[5][16], dif[3][16];
    const PetscReal *o = st->ord[i];
    for (int j = 0; j < 5; j++) {
      if (up && st->rnd[i][j]) /* differences at round-off: no order */
        snprintf(ord[j], sizeof ord[j], "%5s", "r-off");
      else if (up)
        snprintf(ord[j], sizeof ord[j], "%5.2f", (double)o[j]);
      else
        snprintf(ord[j], sizeof ord[j], "%5s", "");
    }
    for (int j = 0; j < 3; j++) {
      const PetscReal *d = j == 0 ? st->dx : j == 1 ? st->du : st->dl;
      if (dn)
        snprintf(dif[j], sizeof dif[j], "%9.2e", (double)d[i]);
      else
        snprintf(dif[j], sizeof dif[j], "%9s", "");
    }
    PetscCall(PetscPrintf(comm, "  %7" PetscInt_FMT "  %19.13g  %9.2e %s  %9.2e %s  %s %s  %s %s  %s %s\n", st->L[i].N,
                          (double)r->J, (double)(r->J - st->JR), ord[0], (double)(r->H_mean - st->HR), ord[1], dif[0],
                          ord[2], dif[1], ord[3], dif[2], ord[4]));
  }
  PetscCall(PetscPrintf(comm,
                        "  J_R = %.13g, H_R = %.13g: Richardson (%.0f Q_N - Q_N/2)/%.0f of the two finest grids\n",
                        (double)st->JR, (double)st->HR, (double)HS_RICH_W(st->s), (double)(HS_RICH_W(st->s) - 1)));
  PetscCall(PetscPrintf(comm, "  max|d*|: largest difference to the next grid (states at shared nodes; controls and "
                              "costates against the mean of the two fine intervals)\n"));
  for (PetscInt i = 1; i + 1 < st->nl; i++) {
    PetscBool any = PETSC_FALSE;
    for (int j = 0; j < 5; j++)
      any = (PetscBool)(any || st->rnd[i][j]);
    if (any) {
      PetscCall(PetscPrintf(comm, "  r-off: the differences are at round-off (at most %g eps max(1, |Q|)): no order\n",
                            HS_ORDER_ROUNDOFF));
      break;
    }
  }
  for (PetscInt i = 0; i < st->nl; i++)
    if (st->L[i].retried)
      PetscCall(PetscPrintf(comm,
                            "  N = %-7" PetscInt_FMT
                            " converged by -hs_strategy auto after Newton from the coarser grid "
                            "failed\n",
                            st->L[i].N));
  if (st->pre_asymptotic)
    PetscCall(PetscPrintf(comm,
                          "  warning: pre-asymptotic: the observed order of J^d or H^d on the finest grids is far from "
                          "the scheme's %g (errors not falling %gx per doubling); J_R, H_R and the errors against "
                          "them are unreliable: refine further\n",
                          (double)SchemeOrder(st->s), (double)HS_RICH_W(st->s)));
  if (st->failed_N)
    PetscCall(PetscPrintf(comm,
                          "  N = %-7" PetscInt_FMT " NOT converged%s (%s): the study ends before it; the table has "
                          "the grids before it\n",
                          st->failed_N, st->failed_retried ? ", nor by -hs_strategy auto" : "", st->failed));
  PetscCall(
      PetscPrintf(comm, "  written            %s/study.json, study.csv, study.gp%s\n", dir, plot ? ", study.png" : ""));
  PetscFunctionReturn(0);
}

/* why a grid of the study ended with the error ierr: its own message (round 25: "its message above", which came after
 * the table, printed as the run's error, and was not in study.json at all). */
static PetscErrorCode ErrorWhy(PetscErrorCode ierr, char *why, size_t len)
{
  const char *text = NULL;
  char       *spec = NULL;

  PetscFunctionBeginUser;
  if (PetscErrorMessage(ierr, &text, &spec) || !spec || !spec[0])
    spec = (char *)(text ? text : "");
  PetscCall(PetscSNPrintf(why, len, "an error (PETSc error %d): %s", (int)ierr, spec));
  PetscFunctionReturn(0);
}

/*@ HsSolverConvergenceStudy - a convergence study from the last solve (file head).

  Collective.

  Input Parameters:
+ s      - the solver
. levels - the number of grids, levels >= 3 (orders need three grids)
- dir    - the output directory

  Output Parameter:
. complete - (may be NULL) whether every grid converged

  Options Database Key:
. -hs_study <LEVELS> - the hamshoot executable runs the study (N0 = -N; dir: -o, default 'study')

  Notes:
  Solves on the grids N 2^i, i = 1..levels-1, each from the previous one; prints a table of J^d and the mean of
  H^d with their differences to Richardson's value of the two finest grids, the largest differences of states,
  controls and costates between successive grids, and the observed orders; writes dir/study.json, dir/study.csv,
  dir/study.gp and (gnuplot) dir/study.png.

  Call it after a converged HsSolverSolve(). A grid that Newton does not converge from the coarser solution is solved
  again from there by -hs_strategy auto (unless s has -hs_strategy newton); one that still does not converge ends the
  study: the grids before it are written (study.json: "complete": false and "failed" with its N and why; study.csv:
  its row marked NOT converged) and *complete is false (the hamshoot executable exits 2); stopped by a
  signal (SIGTERM, SIGINT), the grids before it are written and the solver is marked interrupted
  (HsSolverGetInterrupted) instead. Without gnuplot the data and the script are still written, with a warning.

.seealso: HsSolverExtrapolate(), HsSolverSetNumIntervals(), HsSolverSolve()
@*/
PetscErrorCode HsSolverConvergenceStudy(HsSolver s, PetscInt levels, const char dir[], PetscBool *complete)
{
  Study       st;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt rank;
  int         bad = 0, plot = 0;
  char        err[PETSC_MAX_PATH_LEN + 128] = "", warn[PETSC_MAX_PATH_LEN + 128] = "";

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(levels >= 3 && levels <= 20, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_study %" PetscInt_FMT ": the number of grids must lie in [3, 20] (orders need three)", levels);
  PetscCheck(s->solved && s->res.converged, comm, PETSC_ERR_ORDER,
             "-hs_study: the solve at N = %" PetscInt_FMT " did not converge; no study from it", s->N);
  PetscCheck(((long long)s->N << (levels - 1)) * 4 * s->prob->n <= PETSC_MAX_INT, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_study %" PetscInt_FMT " from N = %" PetscInt_FMT ": the finest grid is too large", levels, s->N);
  PetscCall(HsCheckDriverOutput(comm, dir, PETSC_TRUE, PETSC_FALSE)); /* the user's files, before the grids */
  PetscCall(PetscMemzero(&st, sizeof st));
  st.s = s, st.nl = levels;
  PetscCall(PetscCalloc1(levels, &st.L));
  PetscCall(PetscCalloc5(levels, &st.dx, levels, &st.du, levels, &st.dl, levels, &st.ord, levels, &st.rnd));
  PetscCall(TakeLevel(s, &st.L[0]));
  for (PetscInt i = 1; i < levels; i++) {
    PetscErrorCode ierr = SolveLevel(s, st.L[i - 1].N * 2, &st.L[i - 1], "-hs_study", &st.L[i]);
    if (ierr) { /* an error on a finer grid (out of memory, an option refused in the sub-solver): the grids so far are
                   written first, then the error is the study's */
      st.failed_N = st.L[i - 1].N * 2, st.nl = i, st.error = ierr;
      PetscCall(ErrorWhy(ierr, st.failed, sizeof st.failed));
      break;
    }
    if (!st.L[i].r.converged) { /* the grids so far are kept and written; the failure is marked */
      st.failed_N       = st.L[i].N;
      st.failed_retried = st.L[i].retried;
      st.interrupted    = (PetscBool)!strcmp(st.L[i].r.status, "INTERRUPTED");
      PetscCall(PetscSNPrintf(
          st.failed, sizeof st.failed, "%s%s%s", st.interrupted ? "interrupted by a signal" : st.L[i].r.status,
          st.L[i].r.diagnosis[0] && !st.interrupted ? ": " : "", st.interrupted ? "" : st.L[i].r.diagnosis));
      PetscCall(FreeLevel(&st.L[i]));
      st.nl = i;
      break;
    }
  }
  levels = st.nl;
  Analyse(&st);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) { /* through one descriptor of dir (for the locked -o, the lock's: HsDirOpen), never its path */
    int dfd = -1;
    bad     = HsDirOpen(dir, 1, &dfd, err, sizeof err);
    if (!bad)
      bad = HsWriteFileAtomicAt(dfd, dir, "study.csv", WriteCSV, &st, err, sizeof err) ||
            HsWriteFileAtomicAt(dfd, dir, "study.gp", WriteScript, &st, err, sizeof err);
    if (!bad) {
      static const char *const pngs[] = {"study.png"};

      if (st.nl >= 2)
        plot = st.plotted = !HsRunGnuplot(dfd, dir, "study.gp", pngs, 1, Interrupted, warn, sizeof warn);
      else /* one grid: no difference to plot */
        PetscCall(PetscSNPrintf(warn, sizeof warn, "one converged grid, no difference to plot"));
      bad = HsWriteFileAtomicAt(dfd, dir, "study.json", WriteJSON, &st, err, sizeof err);
    }
    if (dfd >= 0)
      close(dfd);
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&plot, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "-hs_study: %s", err);
  PetscCall(PrintTable(&st, dir, (PetscBool)plot));
  if (!plot)
    PetscCall(PetscPrintf(comm, "hamshoot: warning: %s: no study.png\n", warn));
  for (PetscInt i = 0; i < levels; i++)
    PetscCall(FreeLevel(&st.L[i]));
  PetscCall(PetscFree(st.L));
  PetscCall(PetscFree5(st.dx, st.du, st.dl, st.ord, st.rnd));
  if (st.interrupted) { /* the caller exits as interrupted (status 3), the finished grids written */
    s->interrupted = PETSC_TRUE;
    PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                            "signal received during -hs_study at N = %" PetscInt_FMT "; the %" PetscInt_FMT
                            " finished grids are in %s/study.json and study.csv",
                            st.failed_N, levels, dir));
  }
  if (st.error) {
    PetscCall(PetscPrintf(comm,
                          "hamshoot: -hs_study: the grid N = %" PetscInt_FMT " ended with an error; the %" PetscInt_FMT
                          " finished grids are in %s/study.json and study.csv\n",
                          st.failed_N, levels, dir));
    PetscCall(st.error);
  }
  if (complete)
    *complete = (PetscBool)!st.failed_N;
  if (st.failed_N && !st.interrupted)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: -hs_study: the grid N = %" PetscInt_FMT
                          " did not converge (%s); the %" PetscInt_FMT
                          " finished grids are in %s/study.json and study.csv\n",
                          st.failed_N, st.failed, levels, dir));
  PetscFunctionReturn(0);
}
