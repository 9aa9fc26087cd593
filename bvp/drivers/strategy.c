/* hamshoot: the solve strategy (-hs_strategy auto|newton; issue 12, docs/theory.md section 3).
 *
 * The indirect method needs a guess inside Newton's basin. With -hs_strategy auto (the default), a
 * cold solve (not a warm start of a continuation step; a restart of a cold solve resumes its first attempt) that
 * does not converge from its start is tried again, from the same start, in turn by
 *
 *   l2 line search        Newton with SNES's l2 line search (a secant minimization of ||F||^2 along
 *                         the step), which copes with the large costates of the first iterations
 *                         better than backtracking on the manipulators
 *   second-order start    -hs_scheme conserving4 only (not for a force f(q, u), which the second-order scheme
 *                         refuses): the same problem at the same N by the transcription with the second-order
 *                         conserving scheme (by its own -hs_strategy auto, with what is left of -hs_strategy_time),
 *                         then conserving4's Newton in its own formulation from that solution, the costates
 *                         moved from the interval midpoints to the nodes (TrySecondOrder)
 *   grid sequencing       Newton at N/2^L (the coarsest level with at least HS_STRATEGY_COARSEST_N
 *                         intervals), then at each finer grid from the coarser solution interpolated
 *                         in time, then at N
 *   direct guess          the direct problem (same state scheme, same grid) solved by IPOPT, its states
 *                         and multipliers as the guess, and the costate homotopy if Newton fails
 *                         from there (bvp/drivers/directguess.c); without IPOPT (HsIpoptAvailable) it is
 *                         recorded as "IPOPT not available" and the next attempt follows
 *   continuation          natural continuation in reach from 0 (x_T moves from x0 to its value),
 *                         then in the parameters of -hs_strategy_continue NAME=FROM,..., each
 *                         in HS_CONTINUATION_STEPS_DEFAULT steps with halving
 *   continuation in R     with a small control weight (the smallest diagonal entry of R below
 *                         HS_STRATEGY_STIFF_WEIGHT): continuation in log_weight from
 *                         log10(HS_STRATEGY_STIFF_WEIGHT / R_min) to 0 (R from HS_STRATEGY_STIFF_WEIGHT
 *                         down to the problem's, geometrically), from the direct solution at that R (or,
 *                         where it fails, after reach from the default guess)
 *
 * and stops at the first that converges.
 *
 * The second-order start comes right after the l2 line search: that one is a single Newton solve of the same scheme
 * from the same start (the cheapest retry, and where it converges it lands where the user's start leads), while the
 * second-order start costs a second-order solve (a third of conserving4's unknowns per interval) and one conserving4
 * Newton from an O(h^2) start (4-9 iterations in the audit's cases), less than grid sequencing's several conserving4
 * solves, and it lands conserving4 on the extremal the second-order scheme finds from the same default guess.
 * Transcription for the sub-solve whatever the formulation of s: the second-order discrete solution is the same by
 * shooting and transcription (docs/shooting.md), and the transcription's basin is the larger (issue 43's audit: every
 * case where conserving4's single shooting failed, the second-order transcription converged by -hs_strategy auto from
 * the default guess; shooting's own start, -hs_shoot_init transcription, is such a solve too). The sub-solve starts
 * from the first attempt's start (the stored guess, else the default one). Where conserving4 fails on a problem and the
 * second-order Newton fails on it as well, the sub-solve's own fallbacks run (grid sequencing, the direct guess,
 * continuation of the second-order scheme): bounded like the rest, and by -hs_strategy_time. A signal during the
 * sub-solve stops it (a sub-solver writes no checkpoint) and ends the run interrupted as any fallback's (status 5).
 *
 * Bounded work: each attempt's loops are bounded in number (Newton by its -snes_max_it, the homotopy by
 * HS_HOMOTOPY_MAX_STEPS and HS_HOMOTOPY_MIN_STEP, a continuation stage by HS_CONTINUATION_MAX_SOLVES and its halvings),
 * and -hs_strategy_time S (HsSolverSetStrategyTime) stops the fallbacks, the homotopy and the continuation at their
 * next step once S seconds have passed; a failed attempt records the furthest point it reached. Every attempt is
 * recorded (name, status, Newton iterations, seconds) in the results, printed by HsSolverView and written to
 * summary.json ("strategy"). If none converges, the first attempt's iterate and results are restored (its diagnosis
 * names the first failure; the others are listed). -hs_strategy newton makes only the first attempt.
 *
 * An attempt that converges may have found another extremal than the one the user had in mind: the
 * guard of bvp/drivers/extremal.c compares it with the direct problem's minimum.
 */
#include "hsdrivers.h"

#include <string.h>

/* A stage of the strategy's continuation for an entry NAME=FROM of -hs_strategy_continue. */
static PetscErrorCode AddStage(void *c, const char *name, PetscReal from)
{
  PetscFunctionBeginUser;
  PetscCall(HsContinuationAddStage((HsContinuation)c, name, from, HS_CONTINUATION_STEPS_DEFAULT));
  PetscFunctionReturn(0);
}

/* The discretization of the problem's own costate scheme (an attempt may have left a homotopy's). */
static PetscErrorCode OwnScheme(HsSolver s)
{
  PetscFunctionBeginUser;
  s->hom_theta = 1;
  PetscCall(HsSolverSetUpDiscretization(s));
  if (s->ops->presolve)
    PetscCall((*s->ops->presolve)(s));
  PetscFunctionReturn(0);
}

/* What a cold attempt starts from: the stored guess (or the default one), a free T held as for the
   first solve, the problem's own costate scheme. */
static PetscErrorCode ColdStart(HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(OwnScheme(s));
  s->hold_T              = (PetscBool)(s->prob->free_T && !s->guess && s->guess_type != HS_GUESS_DIRECT);
  s->res.hold_iterations = 0, s->T_left = 0, s->T_baddata = 0;
  s->res.diagnosis[0] = 0, s->diagnosis_keep = PETSC_FALSE, s->res.noise_floor = 0, s->res.at_floor = PETSC_FALSE;
  PetscCall((*s->ops->guess)(s, s->X));
  PetscFunctionReturn(0);
}

/* A copy of the stored guess of s (rows NULL: none), for an attempt that replaces it. */
typedef struct {
  PetscReal *rows;
  PetscInt   N;
  PetscReal  T;
  PetscBool  nodal;                           /* its costates at the nodes (guess_nodal) */
  char       source[PETSC_MAX_PATH_LEN + 16]; /* where it came from (summary.json's initial_guess) */
} SavedGuess;

static PetscErrorCode SaveGuess(HsSolver s, SavedGuess *g)
{
  PetscInt len = s->guess ? (s->guess_N + 1) * 4 * s->prob->n : 0;

  PetscFunctionBeginUser;
  g->rows = NULL, g->N = s->guess_N, g->T = s->guess_T, g->nodal = s->guess_nodal;
  PetscCall(PetscStrncpy(g->source, s->guess_source, sizeof g->source));
  if (len) {
    PetscCall(PetscMalloc1(len, &g->rows));
    PetscCall(PetscArraycpy(g->rows, s->guess, len));
  }
  PetscFunctionReturn(0);
}

/* Puts the saved guess back into s (restore) or drops it; g is empty after. */
static PetscErrorCode EndGuess(HsSolver s, SavedGuess *g, PetscBool restore)
{
  PetscFunctionBeginUser;
  if (restore) {
    PetscCall(PetscFree(s->guess));
    s->guess = g->rows, s->guess_N = g->N, s->guess_T = g->T, s->guess_nodal = g->nodal, g->rows = NULL;
    PetscCall(PetscStrncpy(s->guess_source, g->source, sizeof s->guess_source));
  }
  PetscCall(PetscFree(g->rows));
  PetscFunctionReturn(0);
}

#define HS_STRATEGY_STIFF_WEIGHT 1e-5 /* R_min below this: the strategy's continuation also moves log_weight */
#define HS_STRATEGY_FALLBACKS 6       /* the attempts after the first (Attempt's cases) */

/* Appends to a[*na] the attempt that ended now (it began at t0), with the results it left. */
static PetscErrorCode Record(HsSolver s, HsAttempt *a, PetscInt *na, const char *name, PetscReal t0)
{
  PetscFunctionBeginUser;
  if (*na >= HS_STRATEGY_MAX_ATTEMPTS)
    PetscFunctionReturn(0);
  a += (*na)++;
  PetscCall(PetscStrncpy(a->name, name, sizeof a->name));
  PetscCall(PetscStrncpy(a->status, s->res.status, sizeof a->status));
  a->converged         = s->res.converged;
  a->newton_iterations = s->res.newton_iterations;
  a->seconds           = MPI_Wtime() - t0;
  PetscCall(PetscStrncpy(a->reached, a->converged ? "" : s->reached, sizeof a->reached));
  PetscCallMPI(MPI_Bcast(&a->seconds, 1, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
  if (s->monitor && *na > 1)
    PetscCall(PetscPrintf(
        PetscObjectComm((PetscObject)s), "  strategy: %s %s (%s, %" PetscInt_FMT " Newton iterations%s%s)\n", name,
        a->converged ? "converged" : "failed", a->status, a->newton_iterations, a->reached[0] ? "; " : "", a->reached));
  PetscFunctionReturn(0);
}

static PetscErrorCode TryLineSearchL2(HsSolver s, PetscBool *tried)
{
  SNESLineSearch ls;
  char           old[64];
  PetscBool      same;

  PetscFunctionBeginUser;
  PetscCall(SNESGetLineSearch(s->snes, &ls));
  PetscCall(
      PetscStrncpy(old, ((PetscObject)ls)->type_name ? ((PetscObject)ls)->type_name : SNESLINESEARCHBT, sizeof old));
  PetscCall(PetscStrcmp(old, SNESLINESEARCHL2, &same));
  *tried = (PetscBool)!same; /* else the first attempt was this one */
  if (same)
    PetscFunctionReturn(0);
  PetscCall(ColdStart(s));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHL2));
  PetscCall(s->res.bounds.active ? HsSolverSolveBounded(s, PETSC_FALSE) : HsSolverSolveNewton(s)); /* cold */
  PetscCall(SNESLineSearchSetType(ls, old));
  PetscFunctionReturn(0);
}

/* A cold solve of s from rows (N intervals, final time T, costates at the nodes if nodal) as its stored guess, put
   back after it: an attempt's last solve from a solution of another grid or scheme (grid sequencing, the second-order
   start); bounded: by the bounded law's solve (HsSolverSolveBounded), else Newton. */
static PetscErrorCode SolveFromRows(HsSolver s, PetscInt N, PetscReal *rows, PetscReal T, PetscBool nodal,
                                    PetscBool bounded)
{
  SavedGuess g;

  PetscFunctionBeginUser;
  PetscCall(SaveGuess(s, &g));
  PetscCall(HsSolverSetInitialGuess(s, N, rows));
  s->guess_T = T, s->guess_nodal = nodal;
  PetscCall(ColdStart(s));
  PetscCall(bounded ? HsSolverSolveBounded(s, PETSC_FALSE) : HsSolverSolveNewton(s));
  PetscCall(EndGuess(s, &g, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* The second-order solution's rows (x_k, lambda_{k+1/2}) of N intervals as node rows (x_k, lambda_k) in place, for
   conserving4's start (guess_nodal): lambda_k the mean of its two neighbouring midpoint values inside, linear
   extrapolation of the first (last) two at t_0 (t_N). The second-order costates are O(h^2) from lambda(t_{k+1/2}),
   so these are O(h^2) from lambda(t_k): without the shift, lambda_{k+1/2} taken as lambda_k is O(h) off. */
static void MidpointToNodeCostates(PetscReal *rows, PetscInt N, PetscInt n)
{
  PetscInt w = 4 * n, d = 2 * n;

  for (PetscInt i = d; i < w; i++) {
    PetscReal prev = rows[i], first = rows[i], second = N >= 2 ? rows[w + i] : rows[i];
    PetscReal last = rows[(N - 1) * w + i], before = N >= 2 ? rows[(N - 2) * w + i] : last;
    for (PetscInt k = 1; k < N; k++) { /* lambda_k = (lambda_{k-1/2} + lambda_{k+1/2}) / 2 */
      PetscReal here  = rows[k * w + i];
      rows[k * w + i] = (prev + here) / 2, prev = here;
    }
    rows[i]         = (3 * first - second) / 2;
    rows[N * w + i] = (3 * last - before) / 2;
  }
}

/* The second-order start (conserving4 only; *tried = PETSC_FALSE otherwise, and for a force f(q, u), which the
   second-order scheme refuses): the same problem at the same N by the transcription with the second-order conserving
   scheme (its own -hs_strategy auto, in what is left of -hs_strategy_time), then conserving4's Newton in s's own
   formulation from that solution (its costates moved to the nodes, MidpointToNodeCostates). The stored guess of s is
   replaced during that solve and put back after it. */
static PetscErrorCode TrySecondOrder(HsSolver s, PetscBool *tried)
{
  HsSolver   t;
  HsResults  r;
  PetscReal *rows, T0 = s->prob->T;
  PetscInt   N = s->N;

  PetscFunctionBeginUser;
  *tried = (PetscBool)(s->scheme == HS_SCHEME_CONSERVING4 && !s->prob->ctrl);
  if (!*tried)
    PetscFunctionReturn(0);
  if (s->monitor) /* the sub-solve prints nothing, and may take longer than the solve that follows it */
    PetscCall(
        PetscPrintf(PetscObjectComm((PetscObject)s),
                    "  strategy: second-order start: the second-order scheme by the transcription at N = %" PetscInt_FMT
                    ", then conserving4 from its solution\n",
                    N));
  PetscCall(HsSolverCreateGrid(s, N, &t));
  PetscCall(HsSolverSetScheme(t, "conserving")); /* the grid's scheme was s's */
  PetscCall(HsSolverSetStrategy(t, HS_STRATEGY_AUTO));
  if (s->guess) { /* from the same start as the first attempt: the stored guess (-hs_init, a caller's), else the default
                   */
    PetscCall(HsSolverSetInitialGuess(t, s->guess_N, s->guess));
    t->guess_T = s->guess_T, t->guess_nodal = s->guess_nodal;
  }
  if (s->deadline > 0) /* -hs_strategy_time: the sub-solve's fallbacks get what is left (at least a moment) */
    PetscCall(HsSolverSetStrategyTime(t, PetscMax(s->deadline - MPI_Wtime(), 1e-3)));
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, &r));
  { /* a signal stopped the sub-solve: s ends interrupted, naming it (round 29: the message had named the fallback
       alone, as if the stop could be resumed from the first attempt) */
    char      what[160];
    PetscBool stop;
    PetscCall(PetscSNPrintf(what, sizeof what,
                            "the second-order start's sub-solve (the second-order scheme by the transcription at N = "
                            "%" PetscInt_FMT ") of -hs_strategy auto: nothing of that sub-solve can be resumed",
                            N));
    PetscCall(HsSolverSubSolveStopped(s, r.converged, what, &t, &stop));
    if (stop) {
      if (s->prob->free_T) {
        HsProblemSetFinalTime(s->prob, T0);
        if (s->disc)
          (void)HsDiscSetHorizon(s->disc);
      }
      PetscCall(PetscStrncpy(s->res.status, r.status, sizeof s->res.status));
      PetscCall(PetscStrncpy(s->reached, "in the second-order solve", sizeof s->reached));
      s->res.converged = PETSC_FALSE, s->res.newton_iterations = r.newton_iterations;
      PetscFunctionReturn(0);
    }
  }
  PetscCall(PetscMalloc1((N + 1) * 4 * s->prob->n, &rows));
  if (r.converged)
    PetscCall(HsSolverShareSolutionRows(t, rows));
  PetscCall(HsSolverDestroy(&t));
  if (s->prob->free_T) { /* the sub-solve moved a free T of the shared problem */
    HsProblemSetFinalTime(s->prob, T0);
    if (s->disc)
      (void)HsDiscSetHorizon(s->disc);
  }
  if (!r.converged) { /* the attempt fails in the second-order solve: its status stands for the attempt */
    PetscCall(PetscStrncpy(s->res.status, r.status, sizeof s->res.status));
    PetscCall(PetscStrncpy(s->reached, "in the second-order solve", sizeof s->reached));
    s->res.converged = PETSC_FALSE, s->res.newton_iterations = r.newton_iterations;
    PetscCall(PetscFree(rows));
    PetscFunctionReturn(0);
  }
  MidpointToNodeCostates(rows, N, s->prob->n);
  PetscCall(SolveFromRows(s, N, rows, s->prob->free_T ? r.T : 0, PETSC_TRUE, s->res.bounds.active));
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(0);
}

/* Grid sequencing: *tried = PETSC_FALSE if N has no coarser level of at least HS_STRATEGY_COARSEST_N
   intervals. The stored guess of s is replaced by the N/2 solution during the last solve and put back
   after it. */
static PetscErrorCode TryGridSequencing(HsSolver s, char *name, size_t len, PetscBool *tried)
{
  PetscInt   L = 0, w = 4 * s->prob->n, Nprev = 0;
  PetscReal *rows = NULL, Tprev = 0;
  HsResults  r;

  PetscFunctionBeginUser;
  while (s->N % (2 << L) == 0 && s->N / (2 << L) >= HS_STRATEGY_COARSEST_N)
    L++;
  *tried = (PetscBool)(L > 0);
  if (!L)
    PetscFunctionReturn(0);
  PetscCall(PetscSNPrintf(name, len, "grid sequencing from N = %" PetscInt_FMT, s->N >> L));
  for (PetscInt l = L; l >= 1; l--) {
    HsSolver t;
    PetscCall(HsSolverCreateGrid(s, s->N >> l, &t));
    if (rows) {
      PetscCall(HsSolverSetInitialGuess(t, Nprev, rows));
      t->guess_T = Tprev, t->guess_nodal = (PetscBool)(s->scheme == HS_SCHEME_CONSERVING4); /* its node costates */
    }
    PetscCall(HsSolverSolve(t));
    PetscCall(HsSolverGetResults(t, &r));
    PetscCall(PetscFree(rows));
    if (r.converged) {
      Nprev = s->N >> l, Tprev = s->prob->free_T ? r.T : 0;
      PetscCall(PetscMalloc1((Nprev + 1) * w, &rows));
      PetscCall(HsSolverShareSolutionRows(t, rows));
    }
    PetscCall(HsSolverDestroy(&t));
    if (!r.converged) { /* the attempt fails at this level: its status stands for the attempt */
      PetscCall(PetscStrncpy(s->res.status, r.status, sizeof s->res.status));
      s->res.converged = PETSC_FALSE, s->res.newton_iterations = r.newton_iterations;
      PetscCall(PetscSNPrintf(name, len, "grid sequencing (failed at N = %" PetscInt_FMT ")", s->N >> l));
      PetscFunctionReturn(0);
    }
  }
  PetscCall(SolveFromRows(s, Nprev, rows, Tprev, (PetscBool)(s->scheme == HS_SCHEME_CONSERVING4), PETSC_FALSE));
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(0);
}

/* The direct guess (-hs_initial_guess direct's path). On success the direct solution stays the stored
   guess (a later warm start does not use it); on failure the old guess is put back. */
static PetscErrorCode TryDirect(HsSolver s)
{
  HsGuessType gt = s->guess_type;
  PetscBool   ok;
  SavedGuess  g;

  PetscFunctionBeginUser;
  PetscCall(SaveGuess(s, &g));
  PetscCall(HsSolverGuessFromDirect(s, &ok));
  if (ok) {
    s->guess_type = HS_GUESS_DIRECT;
    PetscCall(ColdStart(s));
    PetscCall(HsSolverSolveNewton(s));
    if (!s->res.converged && !s->interrupted && !s->singular_end) /* (not where J is singular: FloorNotSolved) */
      PetscCall(HsSolverSolveHomotopy(s));
    s->guess_type = gt;
  }
  PetscCall(EndGuess(s, &g, (PetscBool)!s->res.converged));
  PetscFunctionReturn(0);
}

/* Whether reach moves anything: a fixed terminal component that differs from the initial one. */
static PetscBool ReachMoves(const HsProblem *P)
{
  for (int i = 0; i < 2 * P->n; i++)
    if (P->xT_fixed[i] && P->xT[i] != P->x0[i])
      return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Where the strategy's continuation starts log_weight: log10(HS_STRATEGY_STIFF_WEIGHT / R_min), R_min the smallest
   diagonal entry of R; 0 (no such stage) when R_min >= HS_STRATEGY_STIFF_WEIGHT. */
static PetscReal StiffWeightFrom(const HsProblem *P)
{
  PetscReal rmin = PETSC_MAX_REAL;

  for (int i = 0; i < P->m; i++)
    rmin = PetscMin(rmin, P->R[i * P->m + i]);
  return rmin > 0 && rmin < HS_STRATEGY_STIFF_WEIGHT
             ? PetscMin(PetscLog10Real(HS_STRATEGY_STIFF_WEIGHT / rmin), HS_LOG_WEIGHT_MAX)
             : 0;
}

/* Continuation in reach (if it moves anything) and the parameters of -hs_strategy_continue; with weight (if R is
   small, StiffWeightFrom), in log_weight from the direct solution at that larger R, or where that fails after reach
   from the default guess. *tried = PETSC_FALSE if there is nothing to continue in. */
static PetscErrorCode TryContinuation(HsSolver s, PetscBool weight, char *name, size_t len, PetscBool *tried)
{
  HsContinuation c;
  PetscInt       n;
  PetscBool      warm = s->warm, reached;
  HsProblem     *P    = s->prob;
  double        *value, *xT;
  PetscReal      lw     = weight ? StiffWeightFrom(P) : 0;
  PetscBool      direct = PETSC_FALSE, reach;
  SavedGuess     g;

  PetscFunctionBeginUser;
  if (lw > 0) { /* the start: the direct solution at 10^lw R (else reach from the default guess) */
    PetscCall(SaveGuess(s, &g));
    HsProblemSetControlWeightScale(P, PetscPowReal(10, lw));
    PetscCall(HsSolverGuessFromDirect(s, &direct));
    HsProblemSetControlWeightScale(P, 1);
  }
  reach = (PetscBool)(ReachMoves(P) && !direct);
  PetscCall(PetscMalloc2(P->nparams + 1, &value, 2 * P->n, &xT));
  for (int i = 0; i < P->nparams; i++)
    value[i] = *P->params[i].value;
  PetscCall(PetscArraycpy(xT, P->xT, 2 * P->n));
  PetscCall(HsContinuationCreate(s, &c));
  if (reach)
    PetscCall(HsContinuationAddStage(c, "reach", 0, HS_CONTINUATION_STEPS_DEFAULT));
  if (lw > 0)
    PetscCall(HsContinuationAddStage(c, "log_weight", lw, HS_CONTINUATION_STEPS_DEFAULT));
  PetscCall(HsSolverStrategyForEachContinue(s, AddStage, c));
  PetscCall(HsContinuationGetNumStages(c, &n));
  *tried = (PetscBool)(weight ? lw > 0 : n > 0);
  if (*tried) {
    PetscCall(PetscSNPrintf(name, len, "continuation in %s%s%s%s%s%s", reach ? "reach" : "",
                            reach && lw > 0 ? ", " : "", lw > 0 ? "log_weight" : "",
                            (reach || lw > 0) && s->strategy_continue[0] ? ", " : "", s->strategy_continue,
                            direct ? " from the direct guess" : ""));
    PetscCall(HsContinuationSetMonitor(c, s->monitor));
    s->solved = PETSC_FALSE; /* its first solve is cold */
    PetscCall(HsContinuationSolve(c));
    PetscCall(HsContinuationGetResult(c, &reached, NULL));
    s->res.converged = (PetscBool)(s->res.converged && reached);
    if (!reached)
      PetscCall(PetscStrncpy(s->res.status, "CONTINUATION_STOPPED", sizeof s->res.status));
    s->cont_info[0] = 0;
    if (!reached) /* it stopped on its way: the problem as it was */
      for (int i = 0; i < P->nparams; i++)
        if (*P->params[i].value != value[i])
          PetscCheck(!HsProblemSetParam(P, P->params[i].name, value[i]), PetscObjectComm((PetscObject)s),
                     PETSC_ERR_PLIB, "the strategy's continuation could not restore %s = %g", P->params[i].name,
                     value[i]);
    PetscCall(PetscArraycpy(P->xT, xT, 2 * P->n));
    HsProblemSetControlWeightScale(P, 1); /* the problem's own R (a stop on the way left it scaled) */
  }
  PetscCall(PetscFree2(value, xT));
  PetscCall(HsContinuationDestroy(&c));
  if (lw > 0)
    PetscCall(EndGuess(s, &g, PETSC_TRUE));
  s->warm = warm;
  PetscFunctionReturn(0);
}

/* One fallback attempt by index; *tried = PETSC_FALSE if it does not apply. */
static PetscErrorCode Attempt(HsSolver s, int i, char *name, size_t len, PetscBool *tried)
{
  PetscFunctionBeginUser;
  *tried = PETSC_TRUE;
  switch (i) {
  case 0:
    PetscCall(PetscStrncpy(name, "l2 line search", len));
    PetscCall(TryLineSearchL2(s, tried));
    break;
  case 1:
    PetscCall(PetscStrncpy(name, "second-order start", len));
    PetscCall(TrySecondOrder(s, tried));
    break;
  case 2:
    PetscCall(TryGridSequencing(s, name, len, tried));
    break;
  case 3:
    PetscCall(PetscStrncpy(name, "direct guess", len));
    *tried =
        (PetscBool)(s->guess_type != HS_GUESS_DIRECT && !s->prob->ctrl); /* the first attempt was this one; the
                                                            direct problem has no force f(q, u) (docs/controls.md) */
    if (*tried)
      PetscCall(TryDirect(s));
    break;
  default:
    if (s->prob->ctrl) { /* the continuations start from the direct problem or scale R, which a force f(q, u) lacks */
      *tried = PETSC_FALSE;
      break;
    }
    PetscCall(TryContinuation(s, (PetscBool)(i == 5), name, len, tried));
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverSolveStrategy - after the first attempt of HsSolverSolve (it began at t0): records it and,
    for a cold solve (cold) that failed with -hs_strategy auto, tries the fallbacks of bvp/drivers/strategy.c
    until one converges (bvp/ internal). If none does, the first attempt's iterate and results are
    restored, with the attempts listed in its diagnosis. Collective. @*/
PetscErrorCode HsSolverSolveStrategy(HsSolver s, PetscBool cold, PetscReal t0)
{
  HsResults first;
  HsAttempt a[HS_STRATEGY_MAX_ATTEMPTS];
  PetscInt  na = 0;
  Vec       X1;
  char      name[sizeof a[0].name], list[768] = "", spent[96] = "", first_info[sizeof s->guess_info];
  PetscReal tc = s->t_start;
  PetscBool own;

  PetscFunctionBeginUser;
  if (s->in_strategy) /* a solve of the strategy's own continuation */
    PetscFunctionReturn(0);
  PetscCall(Record(s, a, &na, s->guess_type == HS_GUESS_DIRECT ? "direct guess" : "newton", t0));
  if (!s->res.converged && !s->interrupted && !s->res.tolerance_only && cold && s->strategy == HS_STRATEGY_AUTO &&
      !s->ops->solve && strcmp(s->res.status, "SMOOTHED_ONLY")) { /* tolerance_only: the user's tolerance stops every
                   fallback as well; SMOOTHED_ONLY: the bounded law's continuation came close, its solution is kept */
    first = s->res;
    PetscCall(PetscStrncpy(first_info, s->guess_info, sizeof first_info));
    if (s->monitor)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s),
                            "  strategy: %s failed (%s, %" PetscInt_FMT
                            " Newton iterations); the fallbacks of -hs_strategy auto follow\n",
                            a[0].name, a[0].status, a[0].newton_iterations));
    PetscCall(VecDuplicate(s->X, &X1));
    PetscCall(VecCopy(s->X, X1));
    s->in_strategy = PETSC_TRUE;
    PetscCall(HsSolverBudgetBegin(s, &own));
    for (int i = 0; i < HS_STRATEGY_FALLBACKS && !s->res.converged && !s->interrupted; i++) {
      PetscBool tried;
      PetscReal ta = MPI_Wtime();
      PetscBool stop;
      PetscCall(HsSolverBudgetSpent(s, &stop));
      if (stop) { /* -hs_strategy_time: the rest are not tried */
        PetscCall(PetscSNPrintf(spent, sizeof spent, "-hs_strategy_time %g s spent before the fallback %d of %d",
                                (double)s->strategy_time, i + 1, HS_STRATEGY_FALLBACKS));
        break;
      }
      s->reached[0] = 0;
      PetscCall(Attempt(s, i, name, sizeof name, &tried));
      s->t_start = tc; /* the continuation's solves restarted the clock */
      if (tried)
        PetscCall(Record(s, a, &na, name, ta));
      PetscCall(HsSolverInterruptRequested(s, &stop)); /* a sub-solve stopped by a signal: the run ends interrupted */
      if (stop && !s->interrupted && !s->res.converged) {
        s->interrupted = PETSC_TRUE;
        PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                                "signal received during the fallback '%s' of -hs_strategy auto (no checkpoint: the "
                                "first attempt's start is the problem's default guess again)",
                                name));
        PetscCall(HsSolverMarkUnsaved(s)); /* nothing to resume: status 5, not 3 (round 26) */
      }
    }
    s->in_strategy = PETSC_FALSE;
    PetscCall(HsSolverBudgetEnd(s, own));
    if (!s->res.converged && !s->interrupted) { /* back to the first attempt: its diagnosis is the root cause */
      for (PetscInt k = 1; k < na; k++) {
        (void)HsStrAppend(list, sizeof list, k > 1 ? "; " : "");
        (void)HsStrAppend(list, sizeof list, a[k].name);
        (void)HsStrAppend(list, sizeof list, ": ");
        (void)HsStrAppend(list, sizeof list, a[k].status);
        if (a[k].reached[0]) {
          (void)HsStrAppend(list, sizeof list, ", ");
          (void)HsStrAppend(list, sizeof list, a[k].reached);
        }
      }
      if (spent[0]) {
        (void)HsStrAppend(list, sizeof list, list[0] ? "; " : "");
        (void)HsStrAppend(list, sizeof list, spent);
      }
      PetscCall(OwnScheme(s));
      s->hold_T = PETSC_FALSE; /* the restored iterate's T is its own */
      PetscCall(VecCopy(X1, s->X));
      if (s->ops->resetiterate)
        PetscCall((*s->ops->resetiterate)(s));
      s->res = first;
      PetscCall(PetscStrncpy(s->guess_info, first_info, sizeof s->guess_info)); /* the restored attempt's start */
      PetscCall(SNESComputeFunction(s->snes, s->X, s->F)); /* the formulation's data at the restored iterate */
      if (list[0])
        PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "%s%sno fallback of -hs_strategy auto converged (%s)",
                                       first.diagnosis, first.diagnosis[0] ? "; " : "", list));
    }
    PetscCall(VecDestroy(&X1));
  }
  s->res.nattempts = na;
  PetscCall(PetscArraycpy(s->res.attempts, a, na));
  PetscFunctionReturn(0);
}
