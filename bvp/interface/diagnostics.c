/* hamshoot: the diagnostics of a solution (docs/theory.md section 2.3): J^d, H^d per
 * interval, E_k - W_k per node, the discrete dH/dt balance; computed on rank 0
 * from the gathered solution in a fixed order, so that they do not depend on
 * the number of ranks beyond the solution's own round-off. */
#include "hsbvpimpl.h"

/* Sums over the gathered node array x on rank 0 into out[0..6] = J^d, mean H^d, min H^d, max H^d,
 * E - W spread, H balance, and out[7] = 1 if an evaluation left the domain; out[9], out[10]: the sizes of the terms
 * of E - W (max |E_k| + max |W_k|) and of H^d (max over intervals of |L^d| + sum_i |lambda_i (x_{k+1} - x_k)_i| / h,
 * the size of the terms of lambda^T (JJ gbar + G u) at a solution): what round-off in them is relative to. Term by
 * term, not |lambda| |x_{k+1} - x_k|: that bound pairs each costate with every coordinate's change, and a huge
 * multiplier of a coordinate that does not move (lambda_p_y = 5.7e13 of a p_y fixed at both ends with a rate of
 * 1e-300, issue 38) then made H^d's terms 4e13 and its spread of 0.064 "round-off". Fills s->H, s->EW. */
static PetscErrorCode SumDiagnostics(HsSolver s, const PetscScalar *x, PetscReal *out)
{
  PetscInt  N = s->N, dim = 2 * s->prob->n;
  PetscReal W = 0, E, Jd = 0, Hmin = PETSC_MAX_REAL, Hmax = -PETSC_MAX_REAL, Hsum = 0, EWmin = PETSC_MAX_REAL,
            EWmax = -PETSC_MAX_REAL, bal = 0, phi, Eprev = 0, *work;
  int st = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(HsIntervalSuspectWorkSize(s->prob), &work));
  s->res.suspect_intervals = 0, s->res.first_suspect = -1;
  out[9] = out[10] = 0;
  for (PetscInt k = 0; k <= N && !st; k++) {
    const PetscScalar *xk = x + k * 2 * dim, *lk = xk + dim, *xk1 = xk + 2 * dim;
    const PetscReal   *uk = s->U0 ? s->U0 + k * s->prob->m : NULL; /* the formulation's controls, if it has them */
    st                    = HsDiscEnergy(s->disc, xk, &E);
    if (k > 0 && !st && /* interval k - 1 */
        HsIntervalSuspect(s->prob, xk - 2 * dim, xk, (k - 0.5) * HsDiscGetStep(s->disc), Eprev, E, work)) {
      if (!s->res.suspect_intervals++)
        s->res.first_suspect = k - 1;
    }
    Eprev    = E;
    s->EW[k] = E - W;
    out[9]   = PetscMax(out[9], PetscAbsReal(E) + PetscAbsReal(W));
    EWmin = PetscMin(EWmin, s->EW[k]), EWmax = PetscMax(EWmax, s->EW[k]);
    if (k < N && !st) {
      PetscReal L = 0, w = 0;
      if (uk) {
        st = HsDiscHamiltonianU(s->disc, (int)k, xk, xk1, lk, uk, &s->H[k]);
        if (!st)
          st = HsDiscRunningCostU(s->disc, (int)k, xk, xk1, uk, &L);
        if (!st)
          st = HsDiscWorkU(s->disc, xk, xk1, uk, &w);
      } else {
        st = HsDiscHamiltonian(s->disc, (int)k, xk, xk1, lk, &s->H[k]);
        if (!st)
          st = HsDiscRunningCost(s->disc, (int)k, xk, xk1, lk, &L);
        if (!st)
          st = HsDiscWork(s->disc, xk, xk1, lk, &w);
      }
      W += w;
      Jd += HsDiscGetStep(s->disc) * L;
      {
        PetscReal lx = 0; /* term by term (|lambda| |dx| paired lambda_p_y 6e13 with dx_q_y: file head) */
        for (PetscInt i = 0; i < dim; i++)
          lx += PetscAbsReal(lk[i] * (xk1[i] - xk[i]));
        out[10] = PetscMax(out[10], PetscAbsReal(L) + lx / HsDiscGetStep(s->disc));
      }
      Hsum += s->H[k];
      Hmin = PetscMin(Hmin, s->H[k]), Hmax = PetscMax(Hmax, s->H[k]);
      if (k > 0 && !st) {
        PetscReal Dt;
        st  = HsDiscEllTimeChange(s->disc, (int)k, xk - 2 * dim, xk1, &Dt);
        bal = PetscMax(bal, PetscAbsReal(s->H[k] - s->H[k - 1] + 0.5 * Dt));
      }
    }
  }
  if (!st) {
    st = HsDiscTerminalCost(s->disc, x + N * 2 * dim, &phi);
    Jd += phi; /* J^d = h sum L^d + phi(x_N) */
  }
  out[0] = Jd, out[1] = Hsum / N, out[2] = Hmin, out[3] = Hmax, out[4] = EWmax - EWmin, out[5] = bal;
  out[6] = 0, out[7] = st ? 1 : 0;
  if (st)
    for (int i = 0; i < 6; i++)
      out[i] = NAN; /* undefined: reported as null */
  PetscCall(PetscFree(work));
  PetscFunctionReturn(0);
}

/*@ HsSolverConservedMeasure - the violation of the conserved quantity at X, a vector of the node layout (the
    transcription's unknowns), relative to the size of its terms: the H^d balance for a conserving costate scheme,
    else E - W's spread for an energy-consistent state scheme (SumDiagnostics); *m = -1 where the schemes conserve
    neither, or X is outside the domain. The solution's diagnostics (s->H, s->EW, suspect intervals) are left as they
    were. bvp/ internal (the polish after a floor stop: convergence.c). Collective. @*/
PetscErrorCode HsSolverConservedMeasure(HsSolver s, Vec X, PetscReal *m)
{
  const HsCostateScheme *cs = HsDiscGetCostateScheme(s->disc);
  const HsStateScheme   *ss = HsDiscGetStateScheme(s->disc);
  PetscReal             *H = s->H, *EW = s->EW, buf[11] = {0};
  PetscInt               ns = s->res.suspect_intervals, fs = s->res.first_suspect, len;
  Vec                    X0;
  const PetscScalar     *x;
  HsOutputFormat         fmt;

  PetscFunctionBeginUser;
  *m = -1;
  if (s->ops->conserved) { /* the formulation's own (X is not the node layout there) */
    PetscCall((*s->ops->conserved)(s, X, m));
    PetscFunctionReturn(0);
  }
  if ((!cs->conserving && !ss->energy_consistent) || s->ops->diagnostics)
    PetscFunctionReturn(0);
  PetscCall(HsSolverGetOutputFormat(s, &fmt));
  if (fmt == HS_OUTPUT_FORMAT_HDF5) { /* no gather (diagdist.c); the Newton formulations only come here */
    PetscCall(HsSolverDiagnosticsDistributed(s, X, buf));
    *m = buf[7] != 0 ? -1 : cs->conserving ? buf[5] / PetscMax(1, buf[10]) : buf[4] / PetscMax(1, buf[9]);
    PetscFunctionReturn(0);
  }
  PetscCall(HsGatherToZero(X, &X0));
  PetscCall(VecGetLocalSize(X0, &len));
  if (len) {
    PetscCall(PetscMalloc2(s->N, &s->H, s->N + 1, &s->EW));
    PetscCall(VecGetArrayRead(X0, &x));
    PetscCall(SumDiagnostics(s, x, buf));
    PetscCall(VecRestoreArrayRead(X0, &x));
    PetscCall(PetscFree2(s->H, s->EW));
    s->H = H, s->EW = EW, s->res.suspect_intervals = ns, s->res.first_suspect = fs;
    *m = buf[7] != 0 ? -1 : cs->conserving ? buf[5] / PetscMax(1, buf[10]) : buf[4] / PetscMax(1, buf[9]);
  }
  PetscCallMPI(MPI_Bcast(m, 1, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
  PetscCall(VecDestroy(&X0));
  PetscFunctionReturn(0);
}

/* "Converged" also means conserved: for a conserving costate scheme the discrete dH/dt balance (H^d constant for an
 * autonomous problem), and for an energy-consistent state scheme E - W, must hold to HS_CONSERVATION_VOUCH relative
 * to the sizes of their terms at a solution (round-off is 1e-10 and below). A larger violation is a residual that
 * only looked small: one unknown far larger than the others raises the round-off level of every equation (a
 * coordinate held at 1e14 made |F| = 3.5 "converged" with H^d varying by 7 relative; the seventh security review).
 * ew: max |E_k| + max |W_k|, hterms: the size of H^d's terms (SumDiagnostics): relative to E - W itself a
 * double integrator at rest at both ends (E - W near 0, E and W near 1e9) had been refused (the eighth review). */
#define HS_CONSERVATION_VOUCH 1e-6
static PetscErrorCode VouchConservation(HsSolver s, PetscReal ew, PetscReal hterms)
{
  const HsCostateScheme *cs = HsDiscGetCostateScheme(s->disc);
  const HsStateScheme   *ss = HsDiscGetStateScheme(s->disc);
  PetscReal Hs = PetscMax(1, PetscMax(hterms, PetscMax(PetscAbsReal(s->res.H_min), PetscAbsReal(s->res.H_max))));
  PetscBool badH, badE, nlp;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERIPOPT, &nlp)); /* the same on every rank (s->U0 is not) */
  if (!s->res.converged || nlp || s->hom_theta < 1)
    PetscFunctionReturn(0);
  /* bounded controls (docs/controls.md section 3): H^d is exact inside the arcs of the exact projection only */
  badH = (PetscBool)(cs->conserving && !s->res.bounds.active && s->res.H_balance > HS_CONSERVATION_VOUCH * Hs);
  if (cs->conserving && s->res.bounds.active && s->res.bounds.exact)
    badH = (PetscBool)(s->res.bounds.arc_balance > HS_CONSERVATION_VOUCH * Hs);
  badE = (PetscBool)(ss->energy_consistent && !s->ops->diagnostics /* conserving4: E - W is O(h^4) */ &&
                     s->res.energy_work_spread > HS_CONSERVATION_VOUCH * PetscMax(1, ew));
  if (!badH && !badE)
    PetscFunctionReturn(0);
  s->res.converged = PETSC_FALSE;
  PetscCall(PetscStrncpy(s->res.status, "CONSERVATION_VIOLATED", sizeof s->res.status));
  PetscCall(
      HsSolverSetDiagnosis(s, PETSC_TRUE,
                           "the residual |F| = %.3e looked converged, but %s varies by %.3g (%.3g relative) where the "
                           "scheme keeps it constant to round-off: an unknown far larger than the others (a "
                           "badly scaled problem) makes |F| a poor measure; rescale, or tighten -snes_atol",
                           (double)s->res.residual_norm, badH ? "H^d" : "E - W",
                           (double)(badH ? PetscMax(s->res.H_balance * !s->res.bounds.active, s->res.bounds.arc_balance)
                                         : s->res.energy_work_spread),
                           (double)(badH ? s->res.H_balance / Hs : s->res.energy_work_spread / PetscMax(1, ew))));
  PetscFunctionReturn(0);
}

/* The switching structure of the gathered solution on rank 0 (HsSolverBoundsStructure) into out[0..2]: switching
   nodes, the H^d balance inside the arcs and across the switches. */
static PetscErrorCode BoundsStructure(HsSolver s, PetscReal *out)
{
  const PetscScalar *x;
  PetscInt           len;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(s->X0, &len));
  if (!len || !s->H)
    PetscFunctionReturn(0);
  PetscCall(VecGetArrayRead(s->X0, &x));
  PetscCall(HsSolverBoundsStructure(s, x));
  PetscCall(VecRestoreArrayRead(s->X0, &x));
  out[0] = (PetscReal)s->res.bounds.switches, out[1] = s->res.bounds.arc_balance, out[2] = s->res.bounds.switch_jump;
  PetscFunctionReturn(0);
}

/*@ HsSolverGatherSolution - the last solve's solution gathered on rank 0 into s->X0 (and s->Xmult0), with H^d and
    E_k - W_k in s->H, s->EW (SumDiagnostics; its sums into buf[0..10] on rank 0), unless they are there already: after
    diagnostics computed without the gather (-hs_output_format hdf5, diagdist.c) for the drivers that read them (the
    comparison, the rows shared with all ranks). bvp/ internal; collective. The results are left as they are when
    buf is NULL.
@*/
PetscErrorCode HsSolverGatherSolution(HsSolver s, PetscReal *buf)
{
  const PetscScalar *x;
  PetscInt           len, ns = s->res.suspect_intervals, fs = s->res.first_suspect;
  PetscReal          tmp[11];

  PetscFunctionBeginUser;
  if (s->X0)
    PetscFunctionReturn(0);
  PetscCall(HsGatherToZero(s->Xnodes, &s->X0));
  if (s->Xmult)
    PetscCall(HsGatherToZero(s->Xmult, &s->Xmult0));
  PetscCall(VecGetLocalSize(s->X0, &len));
  if (len) {
    PetscCall(PetscMalloc2(s->N, &s->H, s->N + 1, &s->EW));
    for (PetscInt k = 0; k <= s->N; k++) /* what an evaluation outside the domain leaves undone is undefined, not */
      s->EW[k] = NAN, s->H[k < s->N ? k : 0] = NAN; /* the heap's old bytes (trajectory.csv had shown them) */
    PetscCall(VecGetArrayRead(s->X0, &x));
    if (s->ops->diagnostics) /* the formulation's own (conserving4: H at the stage nodes, J^d of the substeps) */
      PetscCall((*s->ops->diagnostics)(s, x, buf ? buf : tmp));
    else
      PetscCall(SumDiagnostics(s, x, buf ? buf : tmp));
    PetscCall(VecRestoreArrayRead(s->X0, &x));
  }
  if (!buf)
    s->res.suspect_intervals = ns, s->res.first_suspect = fs;
  PetscFunctionReturn(0);
}

/* The problem's monitored invariants (HsProblem.invariants) at every node of X (node layout), each rank on its own
 * nodes, reduced over the ranks into res.inv_min, res.inv_max (NaN for both of an invariant whose evaluation failed
 * somewhere). Collective. */
static PetscErrorCode Invariants(HsSolver s, Vec X)
{
  const HsProblem   *P = s->prob;
  PetscInt           w = 4 * P->n, lo, hi, ni = P->invariants ? P->ninv : 0;
  PetscReal          mn[2 * HS_MAX_INVARIANTS + 1], mx[HS_MAX_INVARIANTS], v[HS_MAX_INVARIANTS];
  const PetscScalar *x;

  PetscFunctionBeginUser;
  s->res.ninv = ni;
  if (!ni)
    PetscFunctionReturn(0);
  for (PetscInt i = 0; i < ni; i++)
    mn[i] = PETSC_MAX_REAL, mx[i] = -PETSC_MAX_REAL;
  mn[ni] = 0; /* minus the number of failed evaluations (a minimum over the ranks) */
  PetscCall(VecGetOwnershipRange(X, &lo, &hi));
  PetscCall(VecGetArrayRead(X, &x));
  for (PetscInt k = 0; k < (hi - lo) / w; k++) {
    if (P->invariants(x + k * w, v, P->ctx)) {
      mn[ni] = -1;
      continue;
    }
    for (PetscInt i = 0; i < ni; i++) {
      if (PetscIsInfOrNanReal(v[i]))
        mn[ni] = -1;
      mn[i] = PetscMin(mn[i], v[i]), mx[i] = PetscMax(mx[i], v[i]);
    }
  }
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(
      MPIU_Allreduce(MPI_IN_PLACE, mn, (PetscMPIInt)ni + 1, MPIU_REAL, MPIU_MIN, PetscObjectComm((PetscObject)s)));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, mx, (PetscMPIInt)ni, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  for (PetscInt i = 0; i < ni; i++)
    s->res.inv_min[i] = mn[ni] < 0 ? NAN : mn[i], s->res.inv_max[i] = mn[ni] < 0 ? NAN : mx[i];
  PetscFunctionReturn(0);
}

/*@ HsSolverComputeDiagnostics - J^d, H^d, E - W and the H^d balance of the solution in Xnodes
    into the results (bvp/ internal); keeps the gathered solution in s->X0 for the output.

  Collective. A solution outside the problem's domain makes the diagnostics undefined (NaN, null in
  summary.json) and the solve not converged.
@*/
PetscErrorCode HsSolverComputeDiagnostics(HsSolver s)
{
  PetscReal      buf[14] = {0};
  HsOutputFormat fmt;
  PetscBool      nlp;

  PetscFunctionBeginUser;
  s->res.T = s->prob->T; /* a free T: this solve's (the problem may be shared with another solver) */
  PetscCall(VecDestroy(&s->X0));
  PetscCall(VecDestroy(&s->Xmult0));
  PetscCall(PetscFree2(s->H, s->EW));
  PetscCall(HsSolverGetOutputFormat(s, &fmt));
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERIPOPT, &nlp)); /* its controls: on rank 0 */
  if (fmt == HS_OUTPUT_FORMAT_HDF5 && !nlp && !s->ops->diagnostics && !s->res.bounds.active) /* no gather: each
                                                                        rank its own nodes (diagdist.c) */
    PetscCall(HsSolverDiagnosticsDistributed(s, s->Xnodes, buf));
  else { /* kept in s->X0 for HsSolverWriteOutput: one gather per solve */
    PetscCall(HsSolverGatherSolution(s, buf));
    if (s->res.bounds.active) /* the switching structure (bounds.c), rank 0's into buf[11..13] */
      PetscCall(BoundsStructure(s, buf + 11));
    buf[6] = (PetscReal)s->res.suspect_intervals, buf[8] = (PetscReal)s->res.first_suspect;
    PetscCallMPI(MPI_Bcast(buf, 14, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
    if (s->res.bounds.active)
      s->res.bounds.switches = (PetscInt)buf[11], s->res.bounds.arc_balance = buf[12],
      s->res.bounds.switch_jump = buf[13];
  }
  s->res.suspect_intervals = (PetscInt)buf[6], s->res.first_suspect = (PetscInt)buf[8];
  s->res.J = buf[0], s->res.H_mean = buf[1], s->res.H_min = buf[2], s->res.H_max = buf[3];
  s->res.H_spread = buf[3] - buf[2], s->res.energy_work_spread = buf[4], s->res.H_balance = buf[5];
  s->res.autonomous = (PetscBool) !((s->prob->ell.f && s->prob->ell.time_dependent) || s->prob->ctrl_time_dependent);
  if (buf[7] != 0)
    s->res.converged = PETSC_FALSE; /* diagnostics undefined: solution outside the domain */
  else
    PetscCall(VouchConservation(s, buf[9], buf[10]));
  PetscCall(Invariants(s, s->Xnodes));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetResults - gets the results of the last solve.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. res - the results (HsResults, hsbvp.h), identical on every rank

.seealso: HsSolverSolve(), HsSolverView(), HsSolverWriteOutput()
@*/
PetscErrorCode HsSolverGetResults(HsSolver s, HsResults *res)
{
  PetscFunctionBeginUser;
  *res = s->res;
  PetscFunctionReturn(0);
}

/*@ HsSolverShareSolutionRows - the last solve's solution on every rank: (N + 1) rows (x_k, lambda_{k+1/2})
    of 4n values into rows (gathered on rank 0 by HsSolverComputeDiagnostics, then broadcast). bvp/
    internal; collective. @*/
PetscErrorCode HsSolverShareSolutionRows(HsSolver s, PetscReal *rows)
{
  PetscInt           len = (s->N + 1) * 4 * s->prob->n;
  PetscMPIInt        rank;
  const PetscScalar *x0;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGatherSolution(s, NULL)); /* gathered now if the diagnostics did not (diagdist.c) */
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank == 0) {
    PetscCall(VecGetArrayRead(s->X0, &x0));
    PetscCall(PetscArraycpy(rows, x0, len));
    PetscCall(VecRestoreArrayRead(s->X0, &x0));
  }
  PetscCallMPI(MPI_Bcast(rows, (PetscMPIInt)len, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
  PetscFunctionReturn(0);
}
