/* hamshoot: HsSolverView, the short result summary (README "A worked example"
 * explains every line). */
#include "hsbvpimpl.h"

/* The wrong-extremal guard's findings (bvp/drivers/extremal.c), two or three lines. */
static PetscErrorCode ViewExtremal(const HsExtremal *e, PetscViewer viewer)
{
  PetscFunctionBeginUser;
  if (e->not_made[0]) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  extremal check     not made: %s\n", e->not_made));
    PetscFunctionReturn(0);
  }
  if (e->descended)
    PetscCall(
        PetscViewerASCIIPrintf(viewer,
                               "  extremal check     NOT a minimum of the direct problem: IPOPT from this solution "
                               "descended to J^d = %.10g without converging (unbounded below?)\n",
                               (double)e->J_near));
  else if (!e->near_converged)
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  extremal check     the direct problem (IPOPT) from this solution did not converge: no "
                "second-order information\n"));
  else
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  extremal check     %s: IPOPT from this solution%s J^d = %.10g, %.1e away, %s\n",
        e->moved_away            ? "NOT a local minimum of the direct problem"
        : e->regularization == 0 ? "a strict local minimum of the direct problem"
        : e->regularization > 0  ? "near a minimum of the direct problem"
                                 : "a stationary point of the direct problem, of unknown kind",
        e->perturbed ? " (perturbed: no step from it)" : "", (double)e->J_near, (double)e->distance,
        e->regularization == 0  ? "no Hessian regularization in its last step"
        : e->regularization > 0 ? "its last step needed Hessian regularization"
                                : "no step taken"));
  if (e->lowest < 0)
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  lower extremal?    not known: IPOPT converged from none of %" PetscInt_FMT " starts\n", e->starts));
  else {
    static const char *names[] = HS_EXTREMAL_START_NAMES;
    PetscInt           nc      = 0;
    for (PetscInt i = 0; i < e->starts; i++)
      nc += e->start_converged[i];
    PetscCall(PetscViewerASCIIPrintf(
        viewer,
        "  lower extremal?    %s: lowest minimum J^d = %.10g from the %s start (%" PetscInt_FMT " of %" PetscInt_FMT
        " starts converged; default guess %s%.10g; the check %.2g s)\n",
        e->lower_elsewhere ? "YES, see the warning" : "none found", (double)e->J_start[e->lowest], names[e->lowest], nc,
        e->starts, e->default_converged ? "J^d = " : "not converged, ", (double)e->J_default, (double)e->wall_time_s));
  }
  if (e->N_coarse)
    PetscCall(PetscViewerASCIIPrintf(
        viewer,
        "  counterpart N/2    %s: Newton at N = %" PetscInt_FMT " from it restricted %s J^d = %.10g, %.1e away\n",
        e->spurious           ? "NONE (spurious on this grid?)"
        : e->coarse_converged ? "yes"
                              : "not known",
        e->N_coarse, e->coarse_converged ? "converged," : "did not converge (inconclusive), last iterate",
        (double)e->J_coarse, (double)e->coarse_distance));
  PetscFunctionReturn(0);
}

/* The -hs_extrapolate lines of HsSolverView: the Richardson values, their observed orders (differences at round-off
   have none, docs/accuracy.md) and the pre-asymptotic warning. */
static PetscErrorCode ViewExtrapolation(HsSolver s, PetscViewer viewer)
{
  const HsExtrap *e    = &s->res.extrap;
  const PetscReal p[3] = {e->J_order, e->H_mean_order, e->T_order};
  const PetscBool z[3] = {e->J_roundoff, e->H_mean_roundoff, e->T_roundoff};
  char            o[3][32], g[HS_EXTRAP_GRIDS_MAX * 24] = "";
  size_t          len = 0;

  PetscFunctionBeginUser;
  for (int i = 0; i < 3; i++) /* differences at round-off have no order (docs/accuracy.md) */
    PetscCall(z[i] ? PetscSNPrintf(o[i], sizeof o[i], "differences at round-off")
                   : PetscSNPrintf(o[i], sizeof o[i], "observed order %.2f", (double)p[i]));
  for (PetscInt i = 0; i < e->ngrids; i++, len = strlen(g)) /* the grids, coarsest first */
    PetscCall(PetscSNPrintf(g + len, sizeof g - len, "%s%" PetscInt_FMT, i ? ", " : "", e->N[i]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  extrapolated J     %.12g +- %.1e   (%s of N = %s; %s)\n", (double)e->J,
                                   (double)e->J_error, e->romberg ? "Romberg" : "Richardson", g, o[0]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  extrapolated H^d   %.12g +- %.1e   (mean; %s)\n", (double)e->H_mean,
                                   (double)e->H_mean_error, o[1]));
  if (s->prob->free_T)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  extrapolated T     %.12g +- %.1e   (%s)\n", (double)e->T,
                                     (double)e->T_error, o[2]));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  extrapolated x     +- %.1e   (states at the nodes of N/2: extrapolated.csv)\n",
                                   (double)e->states_error));
  if (e->pre_asymptotic)
    PetscCall(PetscViewerASCIIPrintf(
        viewer,
        "  warning            pre-asymptotic: an observed order is far from the scheme's %d "
        "(errors not falling %dx per doubling); the extrapolation and its error "
        "estimate are unreliable: use finer grids\n",
        s->scheme == HS_SCHEME_CONSERVING4 ? 4 : 2, s->scheme == HS_SCHEME_CONSERVING4 ? 16 : 4));
  PetscFunctionReturn(0);
}

/* The monitored invariants' spreads (max - min over the nodes), one line each (docs/output-format.md). */
static PetscErrorCode ViewInvariants(const HsProblem *P, const HsResults *r, PetscViewer viewer)
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < r->ninv; i++)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  invariant %-8s %.3e   (max - min over the nodes; in [%.10g, %.10g])\n",
                                     P->inv_names[i], (double)(r->inv_max[i] - r->inv_min[i]), (double)r->inv_min[i],
                                     (double)r->inv_max[i]));
  PetscFunctionReturn(0);
}

/*@ HsSolverView - prints the result summary of the last solve.

  Collective.

  Input Parameters:
+ s      - the solver
- viewer - an ASCII viewer, or NULL for PETSC_VIEWER_STDOUT_ of the solver's communicator

  Notes:
  The summary: the set-up in one line, the convergence, J^d, H^d mean and spread, the H^d balance for a
  time-dependent running cost, E - W, the formulation's own lines (shooting: linear iterations, sensitivity
  growth), a diagnosis if there is one, and the wall time.

.seealso: HsSolverGetResults(), HsSolverWriteOutput(), HsSolverSolve()
@*/
PetscErrorCode HsSolverView(HsSolver s, PetscViewer viewer)
{
  PetscMPIInt size;
  HsResults  *r = &s->res;
  char        T[32], form[128] = "";

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(s->solved, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "HsSolverView() before HsSolverSolve()");
  if (!viewer)
    viewer = PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)s));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  snprintf(T, sizeof T, "%.6g", (double)(s->solved ? s->res.T : s->prob->T)); /* PETSc's %g would print "3." */
  if (s->ops->describe)
    PetscCall((*s->ops->describe)(s, form, sizeof form));
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "hamshoot: %s, N = %" PetscInt_FMT ", T = %s, %s states + %s costates, %s, %d rank%s\n", s->prob->name,
      s->N, T, HsSolverStateName(s), HsSolverCostateName(s), form, size, size > 1 ? "s" : ""));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  converged          %s (%s) after %" PetscInt_FMT " %s iterations, |F| = %.3e\n",
                                   r->converged ? "yes" : "NO", r->status, r->newton_iterations,
                                   s->ops->solve ? "IPOPT" : "Newton", (double)r->residual_norm));
  if (r->at_floor)
    PetscCall(
        PetscViewerASCIIPrintf(viewer,
                               "  noise floor        %.3e   (the residual's own evaluation error, estimated; Newton "
                               "cannot get |F| below it: -hs_snes_noise)\n",
                               (double)r->noise_floor));
  if (r->polish_iterations > 0 && !s->ops->solve)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  polish             %" PetscInt_FMT
                                     " Newton iterations after the stop, while the "
                                     "conserved quantity's violation fell (the best iterate kept)\n",
                                     r->polish_iterations));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  J^d                %.10g   (discrete cost h sum L^d)\n", (double)r->J));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  H^d mean           %.10g   (discrete Hamiltonian, mean over intervals)\n",
                                   (double)r->H_mean));
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  H^d spread         %.3e   (%.1e of max(1, |H^d|); max - min over intervals; %s)\n",
      (double)r->H_spread, (double)(r->H_spread / PetscMax(1, PetscAbsReal(r->H_mean))),
      !r->autonomous     ? "the problem depends on t: see H^d balance"
      : r->bounds.active ? "bounded controls: conserving within the arcs, see H^d on the arcs"
      : r->at_floor      ? "conserving: as far as the noise floor lets Newton go"
                         : "round-off for conserving"));
  if (!r->autonomous)
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  H^d balance        %.3e   (max |H^d_{k+1/2} - H^d_{k-1/2} + Dt_k/2|; round-off for conserving)\n",
        (double)r->H_balance));
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  E - W spread       %.3e   (energy minus discrete work; round-off for greenspan/gonzalez)\n",
      (double)r->energy_work_spread));
  PetscCall(ViewInvariants(s->prob, r, viewer));
  PetscCall(HsSolverBoundsView(s, viewer));
  if (r->suspect_intervals)
    PetscCall(PetscViewerASCIIPrintf(
        viewer,
        "  WARNING            the trajectory may cross a singularity of the problem's data in %" PetscInt_FMT
        " interval%s (the first: k = %" PetscInt_FMT ", t in [%.6g, %.6g]): the increment of the "
        "energy, the running cost or B(q) there is not its midpoint derivative's; the nodes step over it "
        "(refine the grid, or check the problem's domain)\n",
        r->suspect_intervals, r->suspect_intervals > 1 ? "s" : "", r->first_suspect,
        (double)(r->T * r->first_suspect / s->N), (double)(r->T * (r->first_suspect + 1) / s->N)));
  if (r->extrap.done)
    PetscCall(ViewExtrapolation(s, viewer));
  if (r->extremal.done)
    PetscCall(ViewExtremal(&r->extremal, viewer));
  if (s->ops->view)
    PetscCall((*s->ops->view)(s, viewer));
  if (r->initial_guess[0])
    PetscCall(PetscViewerASCIIPrintf(viewer, "  initial guess      %s\n", r->initial_guess));
  if (r->nattempts > 1) { /* the solve strategy's fallbacks ran (bvp/drivers/strategy.c) */
    const HsAttempt *a = &r->attempts[r->nattempts - 1];
    PetscCall(PetscViewerASCIIPrintf(viewer, "  strategy           %s%s (%.2f s); before it:",
                                     a->converged ? "" : "none converged; last: ", a->name, (double)a->seconds));
    for (PetscInt k = 0; k < r->nattempts - 1; k++)
      PetscCall(PetscViewerASCIIPrintf(viewer, "%s %s %s%s%s%s", k ? ";" : "", r->attempts[k].name,
                                       r->attempts[k].status, r->attempts[k].reached[0] ? " (" : "",
                                       r->attempts[k].reached, r->attempts[k].reached[0] ? ")" : ""));
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  }
  if (r->diagnosis[0])
    PetscCall(PetscViewerASCIIPrintf(viewer, "  diagnosis          %s\n", r->diagnosis));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  wall time          %.3f s\n", (double)r->wall_time_s));
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  peak memory        %.0f MB per rank (the largest; smallest %.0f; the process peak)\n",
      (double)r->peak_memory_mb[0], (double)r->peak_memory_mb[1]));
  PetscFunctionReturn(0);
}
