/* hamshoot: the transcription of a constrained system (docs/constrained.md): the conserving scheme of
 * costate/constrained.c on a 1-D DMDA of N+1 time points with D = 4n + 2nc unknowns each
 * (z_k = [q_k, p_k, nu_k, lambda_{k+1/2}, gamma_{k+1/2}], costate/hsconstrained.h), stencil width 1, the
 * analytic Jacobian and a direct solve (the banded LU with partial pivoting: the saddle-point blocks have zeros
 * on their diagonals). The transcription formulation takes these operations at set-up when its problem has
 * constraints (HsTranscriptionSetUpConstrained). For the diagnostics and the output, Xnodes holds the node layout
 * of every formulation, (x_k, lambda_{k+1/2}): at a solution the adjoint constraint G(qbar) lp = 0 holds, so
 * the unconstrained formula of H^d (interface/diagnostics.c, with the Gonzalez gradient, which is the midpoint's
 * for the quadratic energy of this class) is the constrained scheme's H^d. */
#include "constrainedimpl.h"

/* The diagnostics of the constraints over the local points, reduced: max |Phi(q_k)|, the interval hidden
 * constraint, the adjoint constraint, the nodal hidden constraint (docs/constrained.md); and the vouch: a solve is
 * converged only with every node within HS_CONS_VOUCH (1 + max |q|) of the constraints as a distance |Phi_i| / |G_i|
 * (a constraint scaled by 1e-12 had made |F| = 2.9 "converged" with the rod 43 % too long: the seventh security
 * review); and, with an end at rest, with max |beta| (1 + max |q|) within HS_CONS_VOUCH (1 + max |p|) (round 18: a
 * 'conserved:' invariant the scheme does not conserve had ended "converged", exit 0, with the terminal momenta missed
 * by beta c_l(q_E); max |beta| 0.24 on the wheel with a potential). Collective. */
#define HS_CONS_VOUCH 1e-8
static PetscErrorCode ConstraintDiagnostics(HsSolver s, const PetscScalar **x, PetscInt xs, PetscInt xe)
{
  HsConstrained *cd = s->data;
  PetscReal      r[3], v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  PetscInt       o   = 2 * s->prob->n + s->prob->nc;
  PetscBool      dom = PETSC_FALSE;

  PetscFunctionBeginUser;
  for (PetscInt k = xs; k < xe && !dom; k++) {
    HsCallStep(HsConsNodeResiduals(cd->cons, x[k], r), &dom, "constraint residuals", k);
    v[0] = PetscMax(v[0], r[0]), v[3] = PetscMax(v[3], r[1]), v[4] = PetscMax(v[4], r[2]);
    for (PetscInt i = 0; i < s->prob->n; i++)
      v[5] = PetscMax(v[5], PetscAbsReal(x[k][i])), v[7] = PetscMax(v[7], PetscAbsReal(x[k][s->prob->n + i]));
    for (PetscInt l = 0; k == s->N && l < s->prob->ncinv; l++) /* beta of the end at rest: 0 if the invariants are */
      v[6] = PetscMax(v[6], PetscAbsReal(x[k][o + l]));        /* conserved (docs/constrained.md) */
    if (k < s->N && !dom) {
      HsCallStep(HsConsIntervalResiduals(cd->cons, x[k], x[k + 1], r), &dom, "constraint residuals", k);
      v[1] = PetscMax(v[1], r[0]), v[2] = PetscMax(v[2], r[1]);
    }
  }
  if (dom)
    v[0] = v[1] = v[2] = v[3] = v[4] = PETSC_INFINITY;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 8, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  PetscCall(PetscArraycpy(cd->diag, v, 4));
  cd->dist = v[4], cd->beta = v[6], cd->off = (PetscBool)!(v[4] <= HS_CONS_VOUCH * (1 + v[5]));
  if (s->res.converged && cd->off) { /* "converged" means on the constraints */
    s->res.converged = PETSC_FALSE;
    PetscCall(PetscStrncpy(s->res.status, "CONSTRAINTS_VIOLATED", sizeof s->res.status));
    PetscCall(
        HsSolverSetDiagnosis(s, PETSC_TRUE,
                             "the residual |F| = %.3e looked converged, but a node lies %.3g off the "
                             "constraints (|Phi_i| / |G_i|; the positions' size %.3g): the constraints' scaling "
                             "makes |F| a poor measure; rescale them (e.g. 1/2 (|r|^2 - L^2)) or tighten -snes_atol",
                             (double)s->res.residual_norm, (double)v[4], (double)v[5]));
  }
  if (s->res.converged && !(v[6] * (1 + v[5]) <= HS_CONS_VOUCH * (1 + v[7]))) { /* and at the end the file asked for */
    s->res.converged = PETSC_FALSE;
    PetscCall(PetscStrncpy(s->res.status, "END_CONDITION_VIOLATED", sizeof s->res.status));
    PetscCall(
        HsSolverSetDiagnosis(s, PETSC_TRUE,
                             "the residual |F| = %.3e looked converged, but the end at rest is "
                             "missed: max |beta| = %.3g (0 when the invariants named in 'conserved:' are conserved; "
                             "the momenta's size %.3g): an invariant named there is not conserved by the scheme "
                             "for every control, and the solution is that of another end condition; leave it out "
                             "of 'conserved:' (docs/constrained.md)",
                             (double)s->res.residual_norm, (double)v[6], (double)v[7]));
  }
  PetscFunctionReturn(0);
}

/* Point k's two groups of equations (hsconstrained.h), and with J (3 blocks: points k-1, k, k+1 of each group,
 * J[g][b], r x D) their Jacobian blocks (blocks of points outside 0..N left alone). */
static int PointEquations(HsSolver s, const PetscScalar **x, PetscInt k, PetscScalar *f, PetscScalar *J[2][3])
{
  HsCons  *cs = ((HsConstrained *)s->data)->cons;
  PetscInt N = s->N, r = HsConsBlockSize(cs) / 2;
  int      st;

  if (k == N && HsConsRestEnd(cs)) /* both groups (docs/constrained.md, "Rest ends and conserved quantities") */
    return HsConsEndRest(cs, x[k - 1], x[k], f, J ? J[0][0] : NULL, J ? J[0][1] : NULL, J ? J[1][0] : NULL,
                         J ? J[1][1] : NULL);
  if (k < N)
    st = HsConsInterval(cs, x[k], x[k + 1], f, J ? J[0][1] : NULL, J ? J[0][2] : NULL);
  else
    st = HsConsTerminal(cs, x[k - 1], x[k], f, J ? J[0][0] : NULL, J ? J[0][1] : NULL);
  if (st)
    return st;
  if (k == 0)
    return HsConsInitial(cs, x[k], f + r, J ? J[1][1] : NULL);
  if (k == N)
    return HsConsEnd(cs, x[k], f + r, J ? J[1][1] : NULL);
  return HsConsNode(cs, (int)k, x[k - 1], x[k], x[k + 1], f + r, J ? J[1][0] : NULL, J ? J[1][1] : NULL,
                    J ? J[1][2] : NULL);
}

/* F(X) (HsResidualFn). Collective. */
static PetscErrorCode Residual(HsSolver s, Vec X, Vec F, PetscBool *domp)
{
  DM                  da = ((HsConstrained *)s->data)->da;
  Vec                 Xl;
  const PetscScalar **x;
  PetscScalar       **f;
  PetscInt            xs, xm;
  PetscBool           dom = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (((HsConstrained *)s->data)->bad_ends) { /* the same on every rank (PreSolve) */
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "problem '%s': %s", s->prob->name, ((HsConstrained *)s->data)->why));
    *domp = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  PetscCall(HsDMGetGhosted(da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAVecGetArrayDOF(da, F, &f));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < xs + xm && !dom; k++)
    HsCallStep(PointEquations(s, x, k, f[k], NULL), &dom, "constrained equations", k);
  PetscCall(DMDAVecRestoreArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAVecRestoreArrayDOF(da, F, &f));
  PetscCall(HsDMRestoreGhosted(da, X, &Xl));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dom, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  *domp = dom;
  PetscFunctionReturn(0);
}

/* Point k's rows (group g, r of them) written in place into J's CSR parts (DMCreateMatrix's pattern: whole D x D
 * blocks of the points k-1..k+1 that exist, columns ascending; the owned points' columns in part 0, the others' in
 * part 1, each ascending): MatSetValues' column search had cost 45 % of a solve (double pendulum, N = 4000, perf). */
static PetscErrorCode WriteRows(HsAIJParts *P, PetscInt k, PetscInt xs, PetscInt xe, PetscInt N, PetscInt D, PetscInt g,
                                PetscScalar *const J[3])
{
  PetscInt r = D / 2, b0 = k > 0 ? 0 : 1, b1 = k < N ? 3 : 2;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < r; i++) {
    PetscInt     row = (k - xs) * D + g * r + i, nd = 0, no = 0;
    PetscScalar *d = P->wa[0] + P->ia[0][row], *o = P->part[1] ? P->wa[1] + P->ia[1][row] : NULL;
    for (PetscInt b = b0; b < b1; b++) {
      PetscInt  pt  = k - 1 + b;
      PetscBool own = (PetscBool)(pt >= xs && pt < xe);
      PetscCall(PetscArraycpy(own ? d + nd : o + no, J[b] + i * D, D));
      *(own ? &nd : &no) += D;
    }
    PetscCheck(nd == P->ia[0][row + 1] - P->ia[0][row] && no == (P->part[1] ? P->ia[1][row + 1] - P->ia[1][row] : 0),
               PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "row %" PetscInt_FMT " of point %" PetscInt_FMT " does not fit the "
               "Jacobian's pattern",
               g * r + i, k);
  }
  PetscFunctionReturn(0);
}

/* The Jacobian: each local point's two groups of rows, their blocks in points k-1, k, k+1 (those in 0..N), written in
 * place (WriteRows: every entry of the pattern, so no zeroing and no assembly; the state tells the PC to factor). */
static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx)
{
  HsSolver            s  = ctx;
  HsConstrained      *cd = s->data;
  DM                  da = cd->da;
  Vec                 Xl;
  const PetscScalar **x;
  PetscInt            xs, xm, D = cd->D, r = D / 2, N = s->N;
  PetscScalar        *blk, *J[2][3], *f;
  PetscBool           dom = PETSC_FALSE;
  HsAIJParts          P;

  PetscFunctionBeginUser;
  PetscCall(MatSetUnfactored(Pm)); /* a factorization in place (HsPCBandSetInPlace): every value is set below */
  PetscCall(PetscMalloc2(6 * r * D, &blk, D, &f));
  for (PetscInt g = 0; g < 2; g++)
    for (PetscInt b = 0; b < 3; b++)
      J[g][b] = blk + (3 * g + b) * r * D;
  PetscCall(HsDMGetGhosted(da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(HsAIJPartsGet(Pm, PETSC_TRUE, &P));
  PetscCheck(P.ok, PetscObjectComm((PetscObject)Pm), PETSC_ERR_PLIB, "the Jacobian's rows are not available in place");
  for (PetscInt k = xs; k < xs + xm && !dom; k++) {
    PetscCall(PetscArrayzero(blk, 6 * r * D));
    HsCallStep(PointEquations(s, x, k, f, J), &dom, "constrained Jacobian", k);
    for (PetscInt g = 0; g < 2 && !dom; g++)
      PetscCall(WriteRows(&P, k, xs, xs + xm, N, D, g, J[g]));
  }
  if (dom) /* rows left unset: zero rows, which every factorization finds singular */
    for (PetscInt q = 0; q < 2 && P.part[q]; q++)
      PetscCall(PetscArrayzero(P.wa[q], P.ia[q][xm * D]));
  PetscCall(HsAIJPartsRestore(&P));
  PetscCall(PetscObjectStateIncrease((PetscObject)Pm));
  PetscCall(DMDAVecRestoreArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(HsDMRestoreGhosted(da, X, &Xl));
  PetscCall(PetscFree2(blk, f));
  if (Jm != Pm) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dom, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  if (dom)
    PetscCall(SNESSetJacobianDomainError(snes));
  PetscFunctionReturn(0);
}

/* Row k of the guess (HsSolverGuessRow) with its states moved onto the constraints (HsProblemProjectConstraints: the
 * straight blend of the end states is not consistent; the 3-link arm in natural coordinates converges from the
 * projected guess, not from the blend); a failure of the projection keeps the row as it was. Not collective. */
static PetscErrorCode ProjectedRow(HsSolver s, PetscInt k, PetscReal *row)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverGuessRow(s, k, row));
  (void)HsProblemProjectConstraints(s->prob, row);
  PetscFunctionReturn(0);
}

/* -hs_guess_costates implied, interval j (0 <= j < N): u, gamma and lambda^p that the projected guess's states imply
 * (HsConsImpliedCostate); a failure (B or E not defined at the midpoint, a singular least-squares problem) leaves
 * them 0. row, nxt: scratch of 4n. Not collective. */
static PetscErrorCode ImpliedInterval(HsSolver s, PetscInt j, PetscReal *row, PetscReal *nxt, PetscReal *u,
                                      PetscReal *gam, PetscReal *lp)
{
  HsConstrained *cd = s->data;
  PetscInt       n = s->prob->n, c = s->prob->nc, m = s->prob->m;

  PetscFunctionBeginUser;
  PetscCall(ProjectedRow(s, j, row));
  PetscCall(ProjectedRow(s, j + 1, nxt));
  if (HsConsImpliedCostate(cd->cons, row, nxt, u, gam, lp)) {
    PetscCall(PetscArrayzero(u, m));
    PetscCall(PetscArrayzero(gam, c));
    PetscCall(PetscArrayzero(lp, n));
  }
  PetscFunctionReturn(0);
}

/* -hs_guess_costates implied at point k < N: lambda_{k+1/2} = (lambda^q, lambda^p) into lam (2n): lambda^p of
 * interval k, lambda^q = -M (lambda^p)' by the central difference of the neighbouring intervals' lambda^p (one-sided
 * at the first and the last interval, 0 with N = 1). The implied gamma is not used: gamma stays the rest force
 * (HsConstrainedGuess), from which the satellite's slerp guess converges and from the implied one not
 * (docs/constrained.md, "Costates implied by the states"). Not collective. */
static PetscErrorCode ImpliedPoint(HsSolver s, PetscInt k, PetscReal *lam)
{
  HsConstrained *cd = s->data;
  PetscInt       n = s->prob->n, c = s->prob->nc, m = s->prob->m, N = s->N, lo = PetscMax(k - 1, 0);
  PetscInt       hi = PetscMin(k + 1, N - 1);
  PetscReal     *row, *nxt, *u, *g, *lpl, *lph, h = s->prob->T / N;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc6(4 * n, &row, 4 * n, &nxt, m, &u, c, &g, n, &lpl, n, &lph));
  PetscCall(ImpliedInterval(s, k, row, nxt, u, g, lam + n));
  PetscCall(PetscArrayzero(lam, n));
  if (hi > lo) {
    PetscCall(ImpliedInterval(s, lo, row, nxt, u, g, lpl));
    PetscCall(ImpliedInterval(s, hi, row, nxt, u, g, lph));
    for (PetscInt i = 0; i < n; i++)
      row[i] = (lph[i] - lpl[i]) / ((hi - lo) * h);
    if (HsConsImpliedLq(cd->cons, row, lam))
      PetscCall(PetscArrayzero(lam, n));
  }
  PetscCall(PetscFree6(row, nxt, u, g, lpl, lph));
  PetscFunctionReturn(0);
}

/* The guess: the node rows of HsSolverGuessRow (states, costates) with their states projected (ProjectedRow), nu = 0,
 * and gamma of each interval the least-squares balance of gravity by the constraint forces at its midpoint
 * (HsConsRestForce): the rest solution where the states are at rest; with -hs_guess_costates implied, and from the
 * geodesic frame guess (HsSolverFrameGuessUsed), the costates that the states imply (ImpliedPoint) instead of the
 * guess's. X: a vector of the DMDA (the guess op of the
 * transcription; the constrained shooting takes its segment starts from it). Collective. */
PetscErrorCode HsConstrainedGuess(HsSolver s, Vec X)
{
  HsConstrained *cd = s->data;
  PetscScalar  **x;
  PetscInt       xs, xm, n = s->prob->n, c = s->prob->nc, N = s->N;
  PetscReal     *row, *nxt;
  PetscBool      implied = (PetscBool)(s->guess_costates == HS_GUESS_COSTATES_IMPLIED), frames;

  PetscFunctionBeginUser;
  PetscCall(HsSolverFrameGuessUsed(s, &frames)); /* the geodesic frame guess: its costates implied too */
  implied = (PetscBool)(implied || frames);
  PetscCall(PetscMalloc2(4 * n, &row, 4 * n, &nxt));
  PetscCall(DMDAVecGetArrayDOF(cd->da, X, &x));
  PetscCall(DMDAGetCorners(cd->da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < xs + xm; k++) {
    PetscCall(ProjectedRow(s, k, row));
    PetscCall(PetscArrayzero(x[k], cd->D));
    PetscCall(PetscArraycpy(x[k], row, 2 * n));
    if (k == N)
      continue;
    if (implied)
      PetscCall(ImpliedPoint(s, k, x[k] + 2 * n + c));
    else
      PetscCall(PetscArraycpy(x[k] + 2 * n + c, row + 2 * n, 2 * n));
    PetscCall(ProjectedRow(s, k + 1, nxt));
    if (HsConsRestForce(cd->cons, row, nxt, x[k] + 4 * n + c)) /* G G^T singular there (a cone's apex) or not finite: */
      PetscCall(PetscArrayzero(x[k] + 4 * n + c, c));          /* gamma = 0, no rank-local error (the review's hang) */
  }
  PetscCall(DMDAVecRestoreArrayDOF(cd->da, X, &x));
  PetscCall(PetscFree2(row, nxt));
  s->guess_implied_done = implied;
  PetscFunctionReturn(0);
}

/* 'conserved:' of a rest end: the directions grad_p I_l(q_E) join the constraint gradients G_j(q_E) as the end
 * condition's free normal momenta, so together they must be independent, or its Jacobian is singular (issue 38: L
 * and 2L had ended DIVERGED_LINEAR_SOLVE, exit 2, naming nothing). q_E = q_T, or with a free terminal coordinate the
 * guess's end projected onto the constraints. A direction whose part outside the span of those before it (the
 * constraint gradients, then the earlier names, by modified Gram-Schmidt twice) is at most
 * HS_CONSERVED_RANK_TOL of its norm is dependent: an error naming it. Not collective (the same on every rank). */
#define HS_CONSERVED_RANK_TOL 1e-10
static PetscErrorCode ConservedDependent(HsSolver s, char *msg, size_t len)
{
  const HsProblem *P = s->prob;
  PetscInt         n = P->n, c = P->nc, m = c + P->ncinv, qfree = 0, nb = 0;
  PetscReal       *row, *A, *Q, *Ph, *H, *dg;
  const PetscReal *qE = P->xT;

  PetscFunctionBeginUser;
  msg[0] = 0;
  PetscCall(PetscMalloc6(4 * n, &row, m * n, &A, m * n, &Q, c + 1, &Ph, c * n * n + 1, &H, P->ncinv * n * n, &dg));
  for (PetscInt i = 0; i < n; i++)
    qfree |= !P->xT_fixed[i];
  if (qfree) {
    PetscCall(ProjectedRow(s, s->N, row));
    qE = row;
  }
  if (!P->Phi(qE, Ph, A, H, P->ctx) && !P->cinv_grad(qE, A + c * n, dg, P->ctx)) /* not finite: the solve says */
    for (PetscInt i = 0; i < m && !msg[0]; i++) {
      PetscReal *a = Q + nb * n, n0 = 0, nr = 0;
      PetscCall(PetscArraycpy(a, A + i * n, n));
      for (PetscInt l = 0; l < n; l++)
        n0 += a[l] * a[l];
      for (int pass = 0; pass < 2; pass++)
        for (PetscInt b = 0; b < nb; b++) {
          PetscReal d = 0;
          for (PetscInt l = 0; l < n; l++)
            d += Q[b * n + l] * a[l];
          for (PetscInt l = 0; l < n; l++)
            a[l] -= d * Q[b * n + l];
        }
      for (PetscInt l = 0; l < n; l++)
        nr += a[l] * a[l];
      if (nr > PetscSqr(HS_CONSERVED_RANK_TOL) * n0 && n0 > 0) { /* independent: the next basis vector */
        for (PetscInt l = 0; l < n; l++)
          a[l] /= PetscSqrtReal(nr);
        nb++;
      } else if (i >= c) { /* a constraint gradient dependent on the others is not this check's to name */
        const char *name = P->cinv_names ? P->cinv_names[i - c] : "?";
        size_t      at   = 0;
        at += (size_t)snprintf(msg, len,
                               "conserved: the direction grad_p %s at the end state is %s the constraint gradients%s",
                               name, n0 > 0 ? "a combination of" : "zero, dependent on", i > c ? " and grad_p of" : "");
        for (PetscInt l = 0; l < i - c && at < len; l++)
          at += (size_t)snprintf(msg + at, len - at, "%s '%s'", l ? "," : "", P->cinv_names ? P->cinv_names[l] : "?");
        if (at < len)
          snprintf(msg + at, len - at,
                   " (relative part outside their span %.2g, at most %g: the end condition would be singular; name "
                   "only independent invariants)",
                   (double)(n0 > 0 ? PetscSqrtReal(nr / n0) : 0), HS_CONSERVED_RANK_TOL);
      }
    }
  PetscCall(PetscFree6(row, A, Q, Ph, H, dg));
  PetscFunctionReturn(0);
}

/* The scheme for this solve's parameters and T (the presolve op of the constrained transcription and shooting).
 * Collective. */
PetscErrorCode HsConstrainedPreSolve(HsSolver s)
{
  HsConstrained *cd = s->data;
  char           msg[512];
  int            st;

  PetscFunctionBeginUser;
  /* inconsistent end data (a parameter set them so, or a continuation's intermediate target): no solution, every
     residual evaluation a domain error that names them (Residual); not an error, so a driver may go on */
  cd->bad_ends = (PetscBool)(HsProblemCheckConstraints(s->prob, HS_CONSTRAINT_TOL, cd->why, sizeof cd->why) != 0);
  HsConsDestroy(&cd->cons);
  st = HsConsCreate(s->prob, (int)s->N, &cd->cons, msg, sizeof msg);
  PetscCheck(!st, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONG, "problem '%s': %s", s->prob->name, msg);
  HsConsSetKKT(cd->cons, !strcmp(s->cs, "constrained_kkt")); /* -hs_scheme direct: the direct transcription's KKT */
  HsConsSetDisc(cd->cons, s->disc);                          /* the extended scheme's unconstrained part */
  PetscCheck(!s->prob->cons_extended || s->prob->cons_ext_bq || strcmp(s->cs, "constrained_kkt"),
             PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "problem '%s' lies outside the exact class (%s): its direct transcription (-hs_scheme direct) is "
             "implemented where only B(q) lies outside it (docs/direct.md), here only the conserving scheme",
             s->prob->name, s->prob->cons_extended);
  if (s->prob->ncinv && s->check_boundary) { /* dependent 'conserved:' directions: named before the solve */
    PetscCall(ConservedDependent(s, msg, sizeof msg));
    PetscCheck(!msg[0], PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_INCOMP, "problem '%s': %s", s->prob->name, msg);
  }
  PetscFunctionReturn(0);
}

/* Xnodes and Xmult from X, a vector of the DMDA holding the solution (the node layout: x_k, lambda_{k+1/2};
 * lambda_{N+1/2} = 0), and the constraint diagnostics. Collective. */
PetscErrorCode HsConstrainedPostSolveFrom(HsSolver s, Vec X)
{
  HsConstrained      *cd = s->data;
  Vec                 Xl;
  const PetscScalar **x;
  PetscScalar        *y, *mu;
  PetscInt            xs, xm, n = s->prob->n, c = s->prob->nc;

  PetscFunctionBeginUser;
  PetscCall(HsDMGetGhosted(cd->da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(cd->da, Xl, (void *)&x));
  PetscCall(DMDAGetCorners(cd->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(VecGetArray(s->Xnodes, &y));
  PetscCall(VecGetArray(s->Xmult, &mu));
  for (PetscInt k = xs; k < xs + xm; k++) {
    PetscScalar *row = y + (k - xs) * 4 * n, *mrow = mu + (k - xs) * 2 * c;
    PetscCall(PetscArraycpy(row, x[k], 2 * n));
    PetscCall(PetscArraycpy(row + 2 * n, x[k] + 2 * n + c, 2 * n));
    PetscCall(PetscArraycpy(mrow, x[k] + 2 * n, c));         /* nu_k (point N: alpha; point 0: 0) */
    PetscCall(PetscArraycpy(mrow + c, x[k] + 4 * n + c, c)); /* gamma_{k+1/2} (point N: 0) */
  }
  PetscCall(VecRestoreArray(s->Xmult, &mu));
  PetscCall(VecRestoreArray(s->Xnodes, &y));
  PetscCall(ConstraintDiagnostics(s, x, xs, xs + xm));
  PetscCall(DMDAVecRestoreArrayDOFRead(cd->da, Xl, (void *)&x));
  PetscCall(HsDMRestoreGhosted(cd->da, X, &Xl));
  PetscFunctionReturn(0);
}

static PetscErrorCode PostSolve(HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(HsConstrainedPostSolveFrom(s, s->X));
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(buf, len, "transcription, %d holonomic constraint%s%s%s", s->prob->nc,
                          s->prob->nc > 1 ? "s" : "", s->prob->cons_extended ? ", extended scheme: " : "",
                          s->prob->cons_extended ? s->prob->cons_extended : ""));
  PetscFunctionReturn(0);
}

/* The constraints' line of the summary (the view op of the constrained formulations). "round-off" only where every
 * node is within the vouch's distance of the constraints (issue 38, round 27: it was printed whatever the values,
 * also for a solve not converged, or one whose constraint scaled by 1e-12 left |Phi| = 1.4e-13 with the rod 43 % too
 * long). Not collective. */
PetscErrorCode HsConstrainedView(HsSolver s, PetscViewer v)
{
  HsConstrained *cd = s->data;

  PetscFunctionBeginUser;
  if (cd->off) {
    PetscCall(PetscViewerASCIIPrintf(v,
                                     "  constraints        max|Phi(q_k)| %.2g, hidden %.2g, adjoint %.2g   (NOT "
                                     "round-off: a node lies %.3g off the constraints as |Phi_i| / |G_i|)\n",
                                     (double)cd->diag[0], (double)cd->diag[1], (double)cd->diag[2], (double)cd->dist));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscViewerASCIIPrintf(v,
                                   "  constraints        max|Phi(q_k)| %.2g, hidden %.2g, adjoint %.2g   (round-off; "
                                   "the nodal hidden constraint %.2g is O(h^2))\n",
                                   (double)cd->diag[0], (double)cd->diag[1], (double)cd->diag[2], (double)cd->diag[3]));
  PetscFunctionReturn(0);
}

/* summary.json's "constraints" member (the writesummary op of the constrained formulations; rank 0). */
PetscErrorCode HsConstrainedWriteSummary(HsSolver s, FILE *fp)
{
  HsConstrained *cd      = s->data;
  const char    *name[4] = {"max_phi", "hidden_interval", "adjoint", "hidden_nodal"};

  PetscFunctionBeginUser;
  fprintf(fp, "  \"constraints\": {\"count\": %d, \"class\": ", s->prob->nc);
  HsJsonString(fp, s->prob->cons_extended ? "extended" : "exact");
  for (int i = 0; i < 4; i++)
    if (isfinite(cd->diag[i]))
      fprintf(fp, ", \"%s\": %.17g", name[i], (double)cd->diag[i]);
    else
      fprintf(fp, ", \"%s\": null", name[i]);
  if (s->prob->ncinv)
    fprintf(fp, ", \"conserved_beta\": %.17g", (double)cd->beta);
  fprintf(fp, "},\n");
  PetscFunctionReturn(0);
}

static PetscErrorCode Destroy(HsSolver s)
{
  HsConstrained *cd = s->data;

  PetscFunctionBeginUser;
  HsConsDestroy(&cd->cons);
  PetscCall(DMDestroy(&cd->da));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* The DMDA (D unknowns a point, stencil 1), Xnodes and Xmult with the same points per rank (4n and 2nc a point),
 * after the checks of N and the schemes (the layout of the constrained transcription and shooting). Collective. */
PetscErrorCode HsConstrainedCreateLayout(HsSolver s)
{
  HsConstrained *cd = s->data;
  PetscInt       xs, xm, n = s->prob->n;
  PetscMPIInt    size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  PetscCheck(s->N + 1 >= size, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "N = %" PetscInt_FMT " intervals give %" PetscInt_FMT " time points, fewer than the %d MPI ranks", s->N,
             s->N + 1, size);
  PetscCheck(!strcmp(s->ss, "bem") && (!strcmp(s->cs, "constrained") || !strcmp(s->cs, "constrained_kkt")),
             PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "problem '%s' has constraints: its schemes are bem + constrained (conserving) or bem + constrained_kkt "
             "(direct), docs/constrained.md",
             s->prob->name);
  cd->D = 4 * n + 2 * s->prob->nc;
  PetscCall(DMDACreate1d(PetscObjectComm((PetscObject)s), DM_BOUNDARY_NONE, s->N + 1, cd->D, 1, NULL, &cd->da));
  PetscCall(DMSetUp(cd->da));
  PetscCall(DMSetMatType(cd->da, MATAIJ));
  PetscCall(DMDAGetCorners(cd->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)s), xm * 4 * n, (s->N + 1) * 4 * n, &s->Xnodes));
  PetscCall(
      VecCreateMPI(PetscObjectComm((PetscObject)s), xm * 2 * s->prob->nc, (s->N + 1) * 2 * s->prob->nc, &s->Xmult));
  PetscFunctionReturn(0);
}

/* The layout, X, F, the Jacobian (DMCreateMatrix's pattern: whole D x 3D blocks), the scheme, SNES and the default
 * linear solver. */
static PetscErrorCode SetUp(HsSolver s)
{
  HsConstrained *cd = s->data;
  KSP            ksp;

  PetscFunctionBeginUser;
  PetscCall(HsConstrainedCreateLayout(s));
  PetscCall(DMCreateGlobalVector(cd->da, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  PetscCall(DMCreateMatrix(cd->da, &s->Jac));
  PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(HsConstrainedPreSolve(s));
  s->res.segments = s->N;
  PetscCall(SNESSetDM(s->snes, cd->da));
  PetscCall(SNESSetFunction(s->snes, s->F, HsSolverFormFunction, s));
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, FormJacobian, s));
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(HsSolverSetDefaultPC(s, ksp, PETSC_FALSE));
  if (!s->prob->cons_extended) { /* the closed form: the secant (l2) line search by default: from the default guess it
       took 11, 7, 10, 14, 12 Newton iterations on the Cartesian pendulum, the double pendulum, the crane, the four-bar
       and the 3-link arm against hsbt's 19, 8, 27, 42 and no convergence in 50 (-snes_linesearch_type overrides it);
       the extended scheme keeps hsbt (the spring pendulum at N = 80: 26 iterations, l2 none in 50) */
    SNESLineSearch ls;
    PetscCall(SNESGetLineSearch(s->snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHL2));
  }
  PetscFunctionReturn(0);
}

/*@ HsConstrainedSetUp - makes s, a transcription whose problem has holonomic constraints, the transcription of the
    constrained scheme (docs/constrained.md) and sets it up (bvp/impls internal; the transcription's set-up calls it,
    and ipopt's for the direct NLP of such a system). Frees the formulation's data, takes its own of size bytes
    (zeroed; sizeof(HsConstrained), or a formulation's data that begins with an HsConstrained: HsIpoptCons), and fills
    the operations. Collective. @*/
PetscErrorCode HsConstrainedSetUp(HsSolver s, size_t size)
{
  HsConstrained *cd;

  PetscFunctionBeginUser;
  PetscCheck(size >= sizeof(HsConstrained), PETSC_COMM_SELF, PETSC_ERR_PLIB, "data of %zu bytes", size);
  PetscCall((*s->ops->destroy)(s));
  PetscCall(PetscCalloc(size, &cd));
  s->data              = cd;
  s->ops->setup        = SetUp;
  s->ops->guess        = HsConstrainedGuess;
  s->ops->presolve     = HsConstrainedPreSolve;
  s->ops->postsolve    = PostSolve;
  s->ops->describe     = Describe;
  s->ops->view         = HsConstrainedView;
  s->ops->writesummary = HsConstrainedWriteSummary;
  s->ops->destroy      = Destroy;
  s->ops->residual     = Residual;
  PetscCall(SetUp(s));
  PetscFunctionReturn(0);
}
