/* hamshoot: the wrong-extremal guard (-hs_check_extremal; issue 12).
 *
 * The necessary conditions hold at every extremal: a converged Newton solve (above all single
 * shooting, whose basin is small and oddly shaped) may have found a saddle or a poor local minimum.
 * On the same grid the direct problem (same state scheme; kkt costates, the KKT conditions of the
 * discrete NLP) is solved by IPOPT twice:
 *
 *   from this solution     IPOPT's steps are those of a minimizer: it converges to the direct problem's
 *                          local minimum next to this extremal (the conserving and kkt costate
 *                          equations differ by O(h^2), so "next to" means a distance of that order),
 *                          or, if this extremal is no minimum, descends away from it. Its last step
 *                          without Hessian regularization (IPOPT corrects the inertia of its KKT
 *                          matrix by delta_w I only when the reduced Hessian is not positive
 *                          definite) certifies a strict local minimum of the direct problem
 *   from the default guess an independent minimization, as a user of a direct method would run it
 *
 * Both are minima of the same NLP, so their costs compare exactly (to IPOPT's tolerance). A default
 * minimum lower than the one next to this extremal by more than HS_EXTREMAL_RTOL relative and more than
 * this extremal's own scheme offset |J^d - J^d_near| (the conserving and kkt costs of one extremal
 * differ by O(h^2); two extremals whose direct minima differ by less may be one continuous extremal
 * seen through two discretizations: the crane's 83248.91 and 83281.23 at N = 320 have direct minima
 * 0.11 apart) is another extremal of lower cost, and a warning says so. If IPOPT from this solution
 * does not converge, the default minimum is compared with this solution's own J^d: lower by more than
 * HS_EXTREMAL_OFFSET_RTOL (10 %, far beyond an O(h^2) scheme offset on any usable grid) is another
 * extremal too (Duffing's single shooting by backtracking: J^d = 8438 against 43.3). And if IPOPT from this
 * solution reaches no minimum but a cost below J^d by more than that, this extremal is no minimum either
 * (descended: a cost unbounded below, e.g. potential -q^4 with a free end, gets there from J^d = 0 to -3e4).
 * The two IPOPT solves cost about what one direct solve of the problem costs; -hs_check_extremal auto
 * makes them when the NLP has at most HS_EXTREMAL_MAX_VARIABLES variables.
 */
#include "hsdrivers.h"

#include <string.h>

/* A direct solver of the problem of s by IPOPT whatever -hs_direct_solver says, quiet (asked for by name: a
 * constrained system's direct solver is Newton otherwise). */
static PetscErrorCode CreateIpopt(HsSolver s, HsSolver *t)
{
  HsDirectSolver ds = s->direct_solver;

  PetscFunctionBeginUser;
  s->direct_solver = HS_DIRECT_IPOPT;
  PetscCall(HsSolverCreateDirect(s, HS_DIRECT_IPOPT, t));
  s->direct_solver = ds;
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
    e->distance = diff / scale; /* against the largest state: measured per component, the crane's two discretizations
                                   of one extremal (83281.23 and 83248.91 at N = 320) read 0.14 apart, "not a minimum" */
    PetscCall(PetscFree(near));
  }
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/* IPOPT from the default guess (no -hs_init guess either): e's default_* fields. */
static PetscErrorCode FromDefault(HsSolver s, HsExtremal *e)
{
  HsSolver  t;
  HsResults r;

  PetscFunctionBeginUser;
  PetscCall(CreateIpopt(s, &t));
  PetscCall(PetscFree(t->guess));
  t->guess_T = 0;
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, &r));
  e->default_converged = Reached(&r), e->J_default = r.J;
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/*@ HsSolverCheckExtremal - after a converged solve: is its extremal a local minimum of the direct problem
    on the same grid, and is there a lower one? (bvp/drivers/extremal.c).

  Collective.

  Input Parameter:
. s - the solver

  Options Database Key:
. -hs_check_extremal <auto|yes|no> - the hamshoot executable checks (auto: when N (m + 2n) <= 10000)

  Notes:
  The results (HsResults.extremal, also in HsSolverView and summary.json) and a warning on screen when IPOPT from
  the default guess finds a lower minimum, or IPOPT started at this solution descends away from it.

  No-op for a solve that did not converge or was made by IPOPT itself. A constrained system's direct problem is its
  direct BEM transcription (docs/constrained.md); outside the exact class the check is recorded as not made. A free T
  of the shared problem is put back to this solution's.

.seealso: HsSolverSolve(), HsSolverGetResults(), HsSolverCompare()
@*/
PetscErrorCode HsSolverCheckExtremal(HsSolver s)
{
  HsExtremal  *e = &s->res.extremal;
  PetscReal   *rows;
  HsSolverType type;
  MPI_Comm     comm = PetscObjectComm((PetscObject)s);
  PetscBool    avail;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(HsSolverGetType(s, &type));
  if (!s->res.converged || !strcmp(type, HSSOLVERIPOPT))
    PetscFunctionReturn(0);
  PetscCall(PetscMemzero(e, sizeof *e));
  e->regularization = -1;
  PetscCall(HsIpoptAvailable(comm, &avail, e->not_made, sizeof e->not_made));
  if (!avail) { /* recorded as not made, so that the summary says why */
    e->done = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (s->prob->cons_extended) { /* the direct BEM transcription is the closed-form class's (docs/constrained.md) */
    PetscCall(PetscStrncpy(e->not_made, "the direct NLP of a constrained system outside the exact class is not "
                           "implemented yet", sizeof e->not_made));
    e->done = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (s->prob->nc) { /* ... with every terminal component fixed and no terminal cost (ipopt.c, SetUpConstrained) */
    PetscBool fixed = (PetscBool)!s->prob->phi.f;
    for (PetscInt i = 0; i < 2 * s->prob->n; i++)
      fixed = (PetscBool)(fixed && s->prob->xT_fixed[i]);
    if (!fixed) {
      PetscCall(PetscStrncpy(e->not_made, "IPOPT's NLP of a constrained system has fixed end states and no terminal "
                             "cost", sizeof e->not_made));
      e->done = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
  }
  e->not_made[0] = 0;
  PetscCall(PetscMalloc1((s->N + 1) * 4 * s->prob->n, &rows));
  PetscCall(HsSolverShareSolutionRows(s, rows));
  PetscCall(FromSolution(s, rows, e));
  PetscCall(FromDefault(s, e));
  {
    PetscBool req;
    PetscCall(HsSolverInterruptRequested(s, &req));
    if (req) { /* IPOPT stopped early on it: no verdict; the caller ends as interrupted */
      PetscCall(PetscMemzero(e, sizeof *e));
      PetscCall(PetscStrncpy(e->not_made, "interrupted by a signal", sizeof e->not_made));
      e->done = PETSC_TRUE, e->regularization = -1;
      s->interrupted = PETSC_TRUE;
      PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                              "signal received during the extremal check (the solve had converged; its output is written)"));
    }
  }
  PetscCall(PetscFree(rows));
  HsSolverRestoreFinalTime(s); /* the sub-solves moved a free T of the shared problem */
  e->done            = PETSC_TRUE;
  if (e->near_converged)
    e->lower_elsewhere = (PetscBool)(e->default_converged &&
                                     e->J_default < e->J_near - PetscMax(HS_EXTREMAL_RTOL * PetscMax(1, PetscAbsReal(e->J_near)),
                                                                         PetscAbsReal(s->res.J - e->J_near)));
  else /* no minimum next to this extremal to compare with: its own J^d, with a scheme offset of up to HS_EXTREMAL_OFFSET_RTOL */
    e->lower_elsewhere = (PetscBool)(e->default_converged &&
                                     e->J_default < s->res.J - HS_EXTREMAL_OFFSET_RTOL * PetscMax(1, PetscAbsReal(s->res.J)));
  /* far away, or close but much cheaper (a cost gap beyond any scheme offset: the minimum next to it is not this
     extremal's, the ninth review) */
  e->moved_away = (PetscBool)(e->near_converged &&
                              (e->distance > HS_EXTREMAL_FAR ||
                               e->J_near < s->res.J - HS_EXTREMAL_OFFSET_RTOL * PetscMax(1, PetscAbsReal(s->res.J))));
  e->descended       = (PetscBool)(!e->near_converged && !PetscIsInfOrNanReal(e->J_near) &&
                             e->J_near < s->res.J - HS_EXTREMAL_OFFSET_RTOL * PetscMax(1, PetscAbsReal(s->res.J)));
  if (e->descended)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: warning: this extremal is not a minimum of the direct problem: IPOPT started at it "
                          "descended to J^d = %.10g without reaching a minimum (this solution's J^d = %.10g): the cost "
                          "may be unbounded below, or no minimum lies near this extremal\n",
                          (double)e->J_near, (double)s->res.J));
  if (e->lower_elsewhere && !e->near_converged)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: warning: another extremal has a lower cost: the direct problem on this grid has a "
                          "minimum with J^d = %.10g (IPOPT from the default guess), below this solution's J^d = %.10g by "
                          "more than any scheme offset (IPOPT from this solution did not converge); -hs_bvp_type ipopt "
                          "solves for that minimum\n",
                          (double)e->J_default, (double)s->res.J));
  else if (e->lower_elsewhere)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: warning: another extremal has a lower cost: the direct problem on this grid has a "
                          "minimum with J^d = %.10g (IPOPT from the default guess) below the one at this solution "
                          "(J^d = %.10g); -hs_bvp_type ipopt solves for that minimum\n",
                          (double)e->J_default, (double)e->J_near));
  if (e->moved_away)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: warning: this extremal is not a local minimum of the direct problem: IPOPT started "
                          "at it descends to a point %.2g away (relative, states) with J^d = %.10g\n",
                          (double)e->distance, (double)e->J_near));
  PetscFunctionReturn(0);
}
