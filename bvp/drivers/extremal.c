/* hamshoot: the wrong-extremal guard (-hs_check_extremal; issue 12).
 *
 * The necessary conditions hold at every extremal: a converged Newton solve (above all single
 * shooting, whose basin is small and oddly shaped) may have found a saddle or a poor local minimum.
 * On the same grid the direct problem (same state scheme; kkt costates, the KKT conditions of the
 * discrete NLP) is solved by IPOPT from this solution and from HS_EXTREMAL_STARTS other starts (issue 42):
 *
 *   from this solution     IPOPT's steps are those of a minimizer: it converges to the direct problem's
 *                          local minimum next to this extremal (the conserving and kkt costate
 *                          equations differ by O(h^2), so "next to" means a distance of that order),
 *                          or, if this extremal is no minimum, descends away from it. Its last step
 *                          without Hessian regularization (IPOPT corrects the inertia of its KKT
 *                          matrix by delta_w I only when the reduced Hessian is not positive
 *                          definite) certifies a strict local minimum of the direct problem
 *   from the other starts  independent minimizations: the default guess (as a user of a direct method would
 *                          run it), the N/2 minimum refined, this solution mirrored about the default guess,
 *                          this solution perturbed four ways (StartRows); within a time budget (FromStarts)
 *
 * All are minima of the same NLP, so their costs compare exactly (to IPOPT's tolerance). The lowest
 * minimum lower than the one next to this extremal by more than HS_EXTREMAL_RTOL relative and more than
 * this extremal's own scheme offset |J^d - J^d_near| (the conserving and kkt costs of one extremal
 * differ by O(h^2); two extremals whose direct minima differ by less may be one continuous extremal
 * seen through two discretizations: the crane's 83248.91 and 83281.23 at N = 320 have direct minima
 * 0.11 apart) is another extremal of lower cost, and a warning says so. If IPOPT from this solution
 * does not converge (or descends far away), the lowest minimum is compared with this solution's own J^d: lower by more
 * than HS_EXTREMAL_OFFSET_RTOL (10 %, far beyond an O(h^2) scheme offset on any usable grid) is another extremal too
 * (Duffing's single shooting by backtracking: J^d = 8438 against 43.3). And if IPOPT from this solution reaches no
 * minimum but a cost below J^d by more than that, this extremal is no minimum either (descended: a cost unbounded
 * below, e.g. potential -q^4 with a free end, gets there from J^d = 0 to -3e4). Grid sequencing (Counterpart): Newton
 * on this scheme at N/2 from this solution restricted; converging far away flags a spurious discrete extremal. The
 * solves cost a few direct solves (docs/accuracy.md, "Cost"); -hs_check_extremal auto makes them when the NLP has at
 * most HS_EXTREMAL_MAX_VARIABLES variables.
 */
#include "hsdrivers.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* A direct solver of the problem of s by IPOPT whatever -hs_direct_solver says, quiet (asked for by name: a
 * constrained system's direct solver is Newton otherwise). */
static PetscErrorCode CreateIpopt(HsSolver s, HsSolver *t)
{
  HsDirectSolver ds = s->direct_solver;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  s->direct_solver = HS_DIRECT_IPOPT;
  ierr             = HsSolverCreateDirect(s, HS_DIRECT_IPOPT, t);
  s->direct_solver = ds; /* on an error too */
  PetscCall(ierr);
  PetscCall(HsSolverSetMonitor(*t, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* IPOPT's run found a minimum for the guard: converged as -hs_bvp_type ipopt says it (Solve_Succeeded, or its
 * acceptable level with the kkt residual at round-off), or stopped at its acceptable level above round-off (NLP
 * error below acceptable_tol for acceptable_iter iterations). The guard compares costs to HS_EXTREMAL_RTOL and
 * positions to HS_EXTREMAL_FAR, far coarser than that, and the second-order information is IPOPT's last step's
 * either way; asking for the round-off level had the verdict flip with a 1e-14 change of the start (duffing:
 * Solve_Succeeded from one, the acceptable level at NLP error 1e-9 and kkt residual 9e-11 from the other). */
static PetscBool Reached(const HsResults *r)
{
  return (PetscBool)(r->converged || !strcmp(r->status, "Solved_To_Acceptable_Level"));
}

/* IPOPT from the rows start (on every rank), quiet: t solved, its results r. */
static PetscErrorCode SolveFrom(HsSolver s, const PetscReal *start, HsSolver *t, HsResults *r)
{
  PetscFunctionBeginUser;
  PetscCall(CreateIpopt(s, t));
  PetscCall(HsSolverSetInitialGuess(*t, s->N, start));
  (*t)->guess_T = s->prob->free_T ? s->res.T : 0;
  PetscCall(HsSolverSolve(*t));
  PetscCall(HsSolverGetResults(*t, r));
  PetscFunctionReturn(0);
}

/* IPOPT from the solution of s (rows, on every rank): e's near_* fields. A solution that is already a
 * KKT point of the direct problem to IPOPT's tolerance (an exact one, e.g. a trivial extremal x = 0) gets
 * no step, hence no second-order information: IPOPT then starts again from the states perturbed by
 * HS_EXTREMAL_PERTURB (relative, a fixed pattern at the inner nodes); a minimum draws it back, a saddle
 * lets it descend away. */
static PetscErrorCode FromSolution(HsSolver s, const PetscReal *rows, HsExtremal *e)
{
  HsSolver   t;
  HsResults  r;
  PetscInt   w = 4 * s->prob->n, dim = 2 * s->prob->n;
  PetscReal *near, scale = 1, diff = 0;

  PetscFunctionBeginUser;
  for (PetscInt k = 0; k <= s->N; k++)
    for (PetscInt i = 0; i < dim; i++)
      scale = PetscMax(scale, PetscAbsReal(rows[k * w + i]));
  PetscCall(SolveFrom(s, rows, &t, &r));
  if (Reached(&r) && r.newton_iterations == 0) {
    PetscCall(HsSolverDestroy(&t));
    PetscCall(PetscMalloc1((s->N + 1) * w, &near));
    PetscCall(PetscArraycpy(near, rows, (s->N + 1) * w));
    for (PetscInt k = 1; k < s->N; k++)
      for (PetscInt i = 0; i < dim; i++)
        near[k * w + i] += HS_EXTREMAL_PERTURB * scale * PetscSinReal(0.7 * k + 1.3 * i + 0.5);
    PetscCall(SolveFrom(s, near, &t, &r));
    PetscCall(PetscFree(near));
    e->perturbed = PETSC_TRUE;
  }
  e->near_converged = Reached(&r), e->J_near = r.J, e->regularization = r.regularization;
  if (e->near_converged) {
    PetscCall(PetscMalloc1((s->N + 1) * w, &near));
    PetscCall(HsSolverShareSolutionRows(t, near));
    for (PetscInt k = 0; k <= s->N; k++)
      for (PetscInt i = 0; i < dim; i++)
        diff = PetscMax(diff, PetscAbsReal(near[k * w + i] - rows[k * w + i]));
    e->distance =
        diff / scale; /* against the largest state: measured per component, the crane's two discretizations
                         of one extremal (83281.23 and 83248.91 at N = 320) read 0.14 apart, "not a minimum" */
    PetscCall(PetscFree(near));
  }
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/* The start i of the wider search (HS_EXTREMAL_START_NAMES) for this solution's rows, in start (N + 1 rows), states
 * and costates; i = 0 (the default guess) and i = 1 (the coarse grid's minimum) have none: NULL.
 *   mirrored   (i = 2) the states reflected about the default guess (the boundary states interpolated linearly),
 *              2 g - x, the costates negated: the same boundary values, the swings the other way round
 *   perturbed  (i = 3..6) each position q_j plus +-HS_EXTREMAL_PERTURB_LARGE max(1, max_k |q_j,k|, max_k |p_j,k|)
 *              sin(f pi t/T), f = 1, 2 (the sign alternating over the coordinates), the momenta and costates kept: a
 *              large deformation (the swing-up's lower extremal is reached by the momenta's scale, 0.5 x 5.08 = 2.5 rad
 *              at N = 100; by the angle's, 0.5 pi, not at N = 100 nor 240) */
static PetscErrorCode StartRows(HsSolver s, PetscInt i, const PetscReal *rows, PetscReal **start)
{
  const HsProblem *P = s->prob;
  PetscInt         w = 4 * P->n, dim = 2 * P->n;
  PetscReal        sign = (i - 3) % 2 ? -1 : 1, freq = (PetscReal)((i - 3) / 2 + 1), *amp;

  PetscFunctionBeginUser;
  *start = NULL;
  if (i < 2)
    PetscFunctionReturn(0);
  PetscCall(PetscMalloc1((s->N + 1) * w, start));
  PetscCall(PetscArraycpy(*start, rows, (s->N + 1) * w));
  PetscCall(PetscMalloc1(P->n, &amp));
  for (PetscInt j = 0; j < P->n; j++) {
    amp[j] = 1;
    for (PetscInt k = 0; k <= s->N; k++)
      amp[j] = PetscMax(amp[j], PetscMax(PetscAbsReal(rows[k * w + j]), PetscAbsReal(rows[k * w + P->n + j])));
    amp[j] *= HS_EXTREMAL_PERTURB_LARGE * (j % 2 ? -sign : sign);
  }
  for (PetscInt k = 0; k <= s->N; k++) {
    PetscReal tau = (PetscReal)k / s->N, *x = *start + k * w;
    for (PetscInt j = 0; j < dim; j++) {
      PetscReal end = P->xT_fixed[j] ? P->xT[j] : P->x0[j], g = (1 - tau) * P->x0[j] + tau * end;
      if (i == 2) {
        x[j]       = 2 * g - x[j];
        x[dim + j] = -x[dim + j];
      } else if (j < P->n && k > 0 && k < s->N)
        x[j] += amp[j] * PetscSinReal(freq * PETSC_PI * tau);
    }
  }
  PetscCall(PetscFree(amp));
  PetscFunctionReturn(0);
}

/* IPOPT on the grid of Nc intervals from start (Nsrc + 1 rows, interpolated; NULL: the default guess), quiet, at most
 * cap iterations (0: IPOPT's limit) and, if deadline > 0, stopped at its first iteration after that time (rank 0's
 * MPI_Wtime): its results r and, with sol, its solution rows (Nc + 1 rows, allocated). */
static PetscErrorCode SolveOnGrid(HsSolver s, PetscInt Nc, PetscInt Nsrc, const PetscReal *start, PetscInt cap,
                                  double deadline, HsResults *r, PetscReal **sol)
{
  HsSolver t;
  PetscInt max_it;

  PetscFunctionBeginUser;
  PetscCall(CreateIpopt(s, &t));
  PetscCall(HsSolverIpoptGetTolerances(t, NULL, &max_it));
  if (cap > 0)
    PetscCall(HsSolverIpoptSetTolerances(t, PETSC_DEFAULT, PetscMin(max_it, cap)));
  PetscCall(HsSolverSetNumIntervals(t, Nc));
  t->deadline =
      deadline;     /* a start whose iterations are slow (IPOPT's MUMPS on a perturbed crane) ends with the budget */
  if (deadline > 0) /* and gives up a step that needs a huge regularization: such factorizations are all but dense */
    PetscCall(HsSolverIpoptSetMaxPerturbation(t, HS_EXTREMAL_MAX_PERTURBATION));
  PetscCall(PetscFree(t->guess));
  t->guess_T = 0;
  if (start) {
    PetscCall(HsSolverSetInitialGuess(t, Nsrc, start));
    t->guess_T = s->prob->free_T ? s->res.T : 0;
  }
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, r));
  if (sol) {
    PetscCall(PetscMalloc1((Nc + 1) * 4 * s->prob->n, sol));
    PetscCall(HsSolverShareSolutionRows(t, *sol));
  }
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/* The wider search: IPOPT on this grid from each of the HS_EXTREMAL_STARTS starts in order (the coarse grid's: IPOPT at
 * N/2 from the default guess, its minimum interpolated to N). The budget: HS_EXTREMAL_BUDGET times the default guess's
 * solve, at least HS_EXTREMAL_BUDGET_MIN_S s (rank 0's clock). The coarse grid has at least a point a rank (N/2 + 1
 * points fewer than the ranks: ranks - 1 intervals). Each start after the first gets at most
 * HS_EXTREMAL_IT_FACTOR times the default guess's IPOPT iterations, within [HS_EXTREMAL_START_MIN_IT,
 * HS_EXTREMAL_START_MAX_IT], and no more than the budget has left at the default guess's pace; the starts end when
 * that is below HS_EXTREMAL_START_MIN_IT. e's start fields, default_*, lowest (the first within HS_EXTREMAL_RTOL). */
static PetscErrorCode FromStarts(HsSolver s, const PetscReal *rows, HsExtremal *e)
{
  HsResults   r;
  PetscBool   req;
  PetscInt    cap = HS_EXTREMAL_START_MAX_IT;
  double      t0 = MPI_Wtime(), tdef = 0;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  e->lowest = -1;
  for (PetscInt i = 0; i < HS_EXTREMAL_STARTS; i++) {
    PetscReal *start = NULL, *sol = NULL;
    PetscInt   Nsrc  = s->N;
    double     spent = MPI_Wtime() - t0, left;
    PetscCall(HsSolverInterruptRequested(s, &req));
    PetscCallMPI(MPI_Bcast(&spent, 1, MPI_DOUBLE, 0, PetscObjectComm((PetscObject)s))); /* one decision on every rank */
    if (i == 1)
      tdef = PetscMax(spent, 1e-3);
    left = HS_EXTREMAL_BUDGET * PetscMax(tdef, HS_EXTREMAL_BUDGET_MIN_S) - spent;
    if (i > 1) /* the iterations the budget has left, at the default guess's pace */
      cap = PetscMin(cap, (PetscInt)(left / tdef * PetscMax(e->it_start[0], 1)));
    if (req || (i > 1 && cap < HS_EXTREMAL_START_MIN_IT))
      break;
    PetscCall(StartRows(s, i, rows, &start));
    if (i == 1) { /* the coarse grid's minimum, from the default guess (at least 2 intervals, and a point a rank) */
      Nsrc = PetscMin(s->N, PetscMax(PetscMax(2, s->N / 2), size - 1));
      PetscCall(SolveOnGrid(s, Nsrc, 0, NULL, cap, t0 + spent + left, &r, &start));
    }
    PetscCall(SolveOnGrid(s, s->N, Nsrc, start, i ? cap : 0, i ? t0 + spent + left : 0, &r, &sol));
    PetscCall(PetscFree(start));
    e->starts++;
    e->start_converged[i] = Reached(&r), e->J_start[i] = r.J, e->it_start[i] = r.newton_iterations;
    if (i == 0) /* the others: IPOPT iterations capped relative to the default guess's */
      cap = PetscMin(HS_EXTREMAL_START_MAX_IT,
                     PetscMax(HS_EXTREMAL_START_MIN_IT, HS_EXTREMAL_IT_FACTOR * r.newton_iterations));
    if (e->start_converged[i] &&
        (e->lowest < 0 || r.J < e->J_start[e->lowest] - HS_EXTREMAL_RTOL * PetscMax(1, PetscAbsReal(r.J)))) {
      e->lowest = i, e->T_lowest = r.T;
      PetscCall(PetscFree(s->lower_rows)); /* kept: the lowest minimum's rows (HsSolverWriteLowerExtremal) */
      s->lower_rows = sol, sol = NULL;
    }
    PetscCall(PetscFree(sol));
  }
  e->default_converged = e->start_converged[0], e->J_default = e->J_start[0];
  PetscFunctionReturn(0);
}

/* Grid sequencing: this solver's scheme (Newton, HsSolverCreateGrid) at N/2 from this solution restricted (N even,
 * N >= 4): a genuine extremal, minimum or not, has a counterpart there, O(h^2) away, to which Newton converges; from
 * a spurious discrete one (an artefact of the grid) Newton converges farther than HS_EXTREMAL_COARSE_FAR (relative,
 * states): flagged. Newton not converging is inconclusive (the crane's genuine 83281.23 at N = 320: not at 160, its
 * last iterate 0.04 away), not flagged. Not made when N/2 + 1 points are fewer than the ranks (the grid cannot be
 * distributed: the check is left out, not the run failed). e's coarse fields. */
static PetscErrorCode Counterpart(HsSolver s, const PetscReal *rows, PetscReal scale, HsExtremal *e)
{
  HsSolver    t;
  HsResults   r;
  PetscReal  *sol, diff = 0;
  PetscInt    w = 4 * s->prob->n, dim = 2 * s->prob->n;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  if (s->N % 2 || s->N < 4 || s->N / 2 + 1 < size)
    PetscFunctionReturn(0);
  e->N_coarse = s->N / 2;
  PetscCall(HsSolverCreateGrid(s, e->N_coarse, &t));
  PetscCall(HsSolverSetInitialGuess(t, s->N, rows));
  t->guess_T = s->prob->free_T ? s->res.T : 0;
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, &r));
  PetscCall(PetscMalloc1((e->N_coarse + 1) * w, &sol));
  PetscCall(HsSolverShareSolutionRows(t, sol));
  PetscCall(HsSolverDestroy(&t));
  e->coarse_converged = r.converged, e->J_coarse = r.J;
  for (PetscInt k = 0; k <= e->N_coarse; k++)
    for (PetscInt i = 0; i < dim; i++)
      diff = PetscMax(diff, PetscAbsReal(sol[k * w + i] - rows[2 * k * w + i]));
  PetscCall(PetscFree(sol));
  e->coarse_distance = diff / scale;
  e->spurious        = (PetscBool)(e->coarse_converged && e->coarse_distance > HS_EXTREMAL_COARSE_FAR);
  PetscFunctionReturn(0);
}

/* The verdicts of e from its solves (J^d of this solution J): docs/accuracy.md "Is it the right extremal?". */
static void Verdicts(HsExtremal *e, PetscReal J)
{
  PetscReal off = HS_EXTREMAL_OFFSET_RTOL * PetscMax(1, PetscAbsReal(J)),
            Jl  = e->lowest >= 0 ? e->J_start[e->lowest] : 0;

  if (e->near_converged)
    e->lower_elsewhere =
        (PetscBool)(e->lowest >= 0 && Jl < e->J_near - PetscMax(HS_EXTREMAL_RTOL * PetscMax(1, PetscAbsReal(e->J_near)),
                                                                PetscAbsReal(J - e->J_near)));
  else /* no minimum next to this extremal to compare with: its own J^d, with a scheme offset of up to
          HS_EXTREMAL_OFFSET_RTOL */
    e->lower_elsewhere = (PetscBool)(e->lowest >= 0 && Jl < J - off);
  /* far away, or close but much cheaper (a cost gap beyond any scheme offset: the minimum next to it is not this
     extremal's, the ninth review) */
  e->moved_away = (PetscBool)(e->near_converged && (e->distance > HS_EXTREMAL_FAR || e->J_near < J - off));
  e->descended  = (PetscBool)(!e->near_converged && !PetscIsInfOrNanReal(e->J_near) && e->J_near < J - off);
  if (e->moved_away) /* the minimum next to it is no counterpart of this extremal: compared with its own J^d too */
    e->lower_elsewhere = (PetscBool)(e->lower_elsewhere || (e->lowest >= 0 && Jl < J - off));
}

/* The warnings on screen of e's verdicts (J^d of this solution J). */
static PetscErrorCode Warn(MPI_Comm comm, const HsExtremal *e, PetscReal J)
{
  static const char *names[] = HS_EXTREMAL_START_NAMES;

  PetscFunctionBeginUser;
  if (e->descended)
    PetscCall(
        PetscPrintf(comm,
                    "hamshoot: warning: this extremal is not a minimum of the direct problem: IPOPT started at it "
                    "descended to J^d = %.10g without reaching a minimum (this solution's J^d = %.10g): the cost "
                    "may be unbounded below, or no minimum lies near this extremal\n",
                    (double)e->J_near, (double)J));
  if (e->lower_elsewhere)
    PetscCall(PetscPrintf(
        comm,
        "hamshoot: warning: another extremal has a lower cost: the direct problem on this grid has a "
        "minimum with J^d = %.10g (IPOPT from the %s start; %" PetscInt_FMT " starts tried) below this "
        "solution's J^d = %.10g (%s%.10g) by more than the scheme offset; %s\n",
        (double)e->J_start[e->lowest], names[e->lowest], e->starts, (double)J,
        e->near_converged ? "the direct minimum next to it: " : "IPOPT from this solution did not converge, at J^d = ",
        (double)e->J_near, "with -o DIR the minimum is written to DIR/lower_extremal.csv, from which -hs_init solves"));
  if (e->moved_away)
    PetscCall(
        PetscPrintf(comm,
                    "hamshoot: warning: this extremal is not a local minimum of the direct problem: IPOPT started "
                    "at it descends to a point %.2g away (relative, states) with J^d = %.10g\n",
                    (double)e->distance, (double)e->J_near));
  if (e->spurious)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: warning: this extremal has no counterpart at N/2 = %" PetscInt_FMT
                          ": Newton there "
                          "from it restricted converged %.2g away (relative, states; J^d = %.10g): a spurious extremal "
                          "of this grid? Solve on a finer grid\n",
                          e->N_coarse, (double)e->coarse_distance, (double)e->J_coarse));
  PetscFunctionReturn(0);
}

/* The solves of the check (rows: this solution's, on every rank): e's fields but the verdicts. */
static PetscErrorCode Solves(HsSolver s, HsExtremal *e)
{
  PetscReal *rows, scale = 1;
  PetscInt   w = 4 * s->prob->n;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((s->N + 1) * w, &rows));
  PetscCall(HsSolverShareSolutionRows(s, rows));
  for (PetscInt k = 0; k <= s->N; k++)
    for (PetscInt i = 0; i < 2 * s->prob->n; i++)
      scale = PetscMax(scale, PetscAbsReal(rows[k * w + i]));
  PetscCall(FromSolution(s, rows, e));
  PetscCall(FromStarts(s, rows, e));
  PetscCall(Counterpart(s, rows, scale, e));
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(0);
}

/*@ HsSolverCheckExtremal - after a converged solve: is its extremal a local minimum of the direct problem
    on the same grid, is there a lower one, and has it a counterpart on the grid of N/2? (bvp/drivers/extremal.c).

  Collective.

  Input Parameter:
. s - the solver

  Options Database Key:
. -hs_check_extremal <auto|yes|no> - the hamshoot executable checks (auto: when N (m + 2n) <= 10000)

  Notes:
  IPOPT on the direct problem from this solution and from HS_EXTREMAL_STARTS starts (the default guess, the minimum at
  N/2 refined, this solution mirrored about the default guess, this solution perturbed four ways; the last five only
  while the check has taken less than HS_EXTREMAL_BUDGET times the default guess's solve), and this solver's scheme
  (Newton) at N/2 from this solution restricted.
  The results (HsResults.extremal, also in HsSolverView and summary.json) and a warning on screen when a start finds
  a lower minimum, IPOPT started at this solution descends away from it, or the extremal has no counterpart at N/2.

  No-op for a solve that did not converge or was made by IPOPT itself. A constrained system's direct problem is its
  direct BEM transcription (docs/constrained.md); outside the exact class the check is recorded as not made. A free T
  of the shared problem is put back to this solution's.

.seealso: HsSolverSolve(), HsSolverGetResults(), HsSolverCompare()
@*/
PetscErrorCode HsSolverCheckExtremal(HsSolver s)
{
  HsExtremal  *e = &s->res.extremal;
  HsSolverType type;
  MPI_Comm     comm = PetscObjectComm((PetscObject)s);
  PetscBool    avail, req;
  double       t0;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(HsSolverGetType(s, &type));
  if (!s->res.converged || !strcmp(type, HSSOLVERIPOPT))
    PetscFunctionReturn(0);
  PetscCall(PetscMemzero(e, sizeof *e));
  PetscCall(PetscFree(s->lower_rows));
  e->regularization = -1, e->lowest = -1;
  PetscCall(HsIpoptAvailable(comm, &avail, e->not_made, sizeof e->not_made));
  if (!avail) { /* recorded as not made, so that the summary says why */
    e->done = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (s->prob->ctrl) { /* the direct NLP knows B u and 1/2 u^T R u only */
    PetscCall(PetscStrncpy(e->not_made,
                           "the direct NLP of a force f(q, u) or a control cost is not implemented yet "
                           "(docs/controls.md)",
                           sizeof e->not_made));
    e->done = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (s->prob->cons_extended) { /* the direct BEM transcription is the closed-form class's (docs/constrained.md) */
    PetscCall(PetscStrncpy(e->not_made,
                           "the direct NLP of a constrained system outside the exact class is not "
                           "implemented yet",
                           sizeof e->not_made));
    e->done = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (s->prob->nc) { /* ... with every terminal component fixed and no terminal cost (ipopt.c, SetUpConstrained) */
    PetscBool fixed = (PetscBool)!s->prob->phi.f;
    for (PetscInt i = 0; i < 2 * s->prob->n; i++)
      fixed = (PetscBool)(fixed && s->prob->xT_fixed[i]);
    if (!fixed) {
      PetscCall(PetscStrncpy(e->not_made,
                             "IPOPT's NLP of a constrained system has fixed end states and no terminal "
                             "cost",
                             sizeof e->not_made));
      e->done = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
  }
  e->not_made[0] = 0;
  t0             = MPI_Wtime();
  PetscCall(Solves(s, e));
  e->wall_time_s = (PetscReal)(MPI_Wtime() - t0);
  HsSolverRestoreFinalTime(s); /* the sub-solves moved a free T of the shared problem */
  PetscCall(HsSolverInterruptRequested(s, &req));
  if (req) { /* IPOPT stopped early on it: no verdict; the caller ends as interrupted */
    PetscCall(PetscMemzero(e, sizeof *e));
    PetscCall(PetscStrncpy(e->not_made, "interrupted by a signal", sizeof e->not_made));
    PetscCall(PetscFree(s->lower_rows));
    e->done = PETSC_TRUE, e->regularization = -1, e->lowest = -1;
    s->interrupted = PETSC_TRUE;
    PetscCall(
        PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                      "signal received during the extremal check (the solve had converged; its output is written)"));
    PetscFunctionReturn(0);
  }
  e->done = PETSC_TRUE;
  Verdicts(e, s->res.J);
  if (!e->lower_elsewhere)
    PetscCall(PetscFree(s->lower_rows));
  PetscCall(Warn(comm, e, s->res.J));
  PetscFunctionReturn(0);
}

/* lower_extremal.csv: the lower minimum's nodes, t_k, the states and the costates lambda_{k+1/2} (kkt multipliers) on
 * row k (the single-file layout -hs_init reads; the last row's costates repeat the last interval's). */
static int WriteLower(FILE *f, void *ctx)
{
  HsSolver s   = (HsSolver)ctx;
  PetscInt dim = 2 * s->prob->n, w = 2 * dim;
  char     name[HS_NAME_LEN + 16];

  fprintf(f, "t");
  for (int kind = 0; kind < 2; kind++)
    for (PetscInt i = 0; i < dim; i++) {
      HsColumnName(s->prob, kind, (int)i, 0, name, sizeof name);
      fprintf(f, ",%s", name);
    }
  fprintf(f, "\n");
  for (PetscInt k = 0; k <= s->N; k++) {
    const PetscReal *x = s->lower_rows + k * w, *l = s->lower_rows + PetscMin(k, s->N - 1) * w + dim;
    fprintf(f, "%.17g", (double)(s->res.extremal.T_lowest * k / s->N));
    for (PetscInt i = 0; i < dim; i++)
      fprintf(f, ",%.17g", (double)x[i]);
    for (PetscInt i = 0; i < dim; i++)
      fprintf(f, ",%.17g", (double)l[i]);
    fprintf(f, "\n");
  }
  return ferror(f);
}

/*@ HsSolverWriteLowerExtremal - writes dir/lower_extremal.csv: the lowest minimum of the direct problem the extremal
    check found, when it is lower than this solution's (HsExtremal.lower_elsewhere), as an initial guess for -hs_init.

  Collective.

  Input Parameters:
+ s   - the solver, after HsSolverCheckExtremal()
- dir - an existing output directory

  Output Parameter:
. written - whether the file was written

  Notes:
  The states at the nodes and the costates (the direct problem's multipliers) of the minimum, in the single-file
  layout -hs_init reads; written by rank 0 through HsWriteFileAtomicAt. Without a lower extremal, a lower_extremal.csv
  of an earlier run in dir is removed (it is not this solution's).

.seealso: HsSolverCheckExtremal(), HsSolverSetInitialGuessFromFile()
@*/
PetscErrorCode HsSolverWriteLowerExtremal(HsSolver s, const char *dir, PetscBool *written)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt rank;
  int         bad                           = 0;
  char        err[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  *written = (PetscBool)(s->lower_rows && s->res.extremal.lower_elsewhere);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    int dfd = -1;
    bad     = HsDirOpen(dir, 0, &dfd, err, sizeof err);
    if (!bad && *written)
      bad = HsWriteFileAtomicAt(dfd, dir, "lower_extremal.csv", WriteLower, s, err, sizeof err);
    else if (!bad && unlinkat(dfd, "lower_extremal.csv", 0) && errno != ENOENT) /* an earlier run's: not this one's */
      bad = 1, snprintf(err, sizeof err, "cannot remove %s/lower_extremal.csv: %s", dir, strerror(errno));
    if (dfd >= 0)
      close(dfd);
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "lower_extremal.csv: %s", err);
  PetscFunctionReturn(0);
}
