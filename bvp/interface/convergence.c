/* hamshoot: when Newton stops (the SNES convergence test of every Newton formulation) and the
 * progress monitor.
 *
 * Besides SNES's tolerances (absolute 1e-12, relative 1e-14, step 1e-14), two rules end a solve
 * that cannot get further:
 *
 * Round-off level: ||F|| <= c eps max(1, ||X||_inf) sqrt(n) (c = -hs_snes_roundoff, 100). Unknowns
 * of 1e3 (costates) cannot give an absolute 1e-12.
 *
 * Noise floor: the residual is evaluated with an error of its own, far above eps ||F||'s terms
 * where it is computed through cancellations: divided differences of E below their limit step,
 * expressions of a problem file, a shooting march that amplifies round-off by its sensitivity
 * growth. It grows with N (more terms) and with the size of the costates: a 2-link arm with
 * costates of 1e3 at N = 5000 cannot get below ||F|| = 4e-8 (measured), where a fixed threshold
 * relative to ||F_0|| sat below it and Newton crawled for the rest of its budget. Newton reaches
 * the floor quadratically and then stirs it. So after a step that did not halve ||F||, the
 * evaluation error is measured at the iterate:
 *
 *     nu = ||F(X + dX) + F(X - dX) - 2 F(X)||_2 / sqrt(6),   dX_i = HS_NOISE_DELTA |X_i| r_i,
 *
 * r_i = +-1 a fixed pattern, a free T held. The second difference removes F's linear part; with
 * HS_NOISE_DELTA = 1e-10 its quadratic part is of order 1e-20 |X|^2 ||F''||, below any floor;
 * what is left is three independent samples of the evaluation error e (variance 1 + 1 + 4 times
 * that of one), so nu estimates ||e||_2 itself, and with N >> 1 components the estimate is sharp.
 * A Newton step cannot bring ||F|| below about ||e|| (F(X + dX) = F(X) + J dX + e' + O(dX^2),
 * with J dX = -F to round-off): at ||F|| <= c nu (c = -hs_snes_noise, 10) the solve has
 * converged, reason CONVERGED_NOISE_FLOOR, unless the step to it cut ||F|| tenfold or more from
 * above 100 nu (AtFloor: Newton's quadratic phase, whose smooth residual is not yet noise; one step
 * more). A solve above c nu keeps going: slow progress there is globalization (or an inexact
 * Jacobian), not the floor. nu is estimated (2 residual evaluations each time, the HsNoiseEstimate
 * event) and reported as noise_floor:
 *   - after a slow step (||F|| not halved) when there is no estimate for an iterate of this size
 *     (||X||_inf within a factor 2), unless ||F|| >= 1e4 c nu_last with ||X||_inf within a factor 10
 *     of the last estimate's, made in this Newton solve: an error that grows at most with the square
 *     of the terms' size is then below ||F|| / (100 c), and the estimate could only say "not at the
 *     floor";
 *   - after any step that brings ||F|| within 100 c nu of the last estimate,
 *   - except right after an estimate, across a step ||dX||_2 <= 1e-3 ||X||_2: the terms, and so
 *     their evaluation error, have not changed, and the last estimate is this iterate's, and the
 *     next's across another such step (kepler, N = 1e5: the last of Newton's quadratic steps lands
 *     at the floor across ||dX|| = 1.5e-4, ||X|| > 500).
 * A line search that fails to reduce ||F|| (Newton's quadratic
 * phase can land on the floor in one step, and the next step only stirs it) is the same symptom:
 * HsSolverAtNoiseFloor then decides whether the solve has converged, by c nu alone (with the
 * convergence test's estimate where it holds one for that iterate).
 *
 * "Converged" means converged (HsSolverVerifyConvergence): whatever stopped SNES (a user's -snes_atol 1e10,
 * -snes_rtol 0.9, -snes_stol 0.5, -snes_type ksponly), the solve is called converged only if its final ||F|| is
 * at most the default absolute tolerance 1e-12, its round-off level (row by row: RowwiseRoundoff), or
 * -hs_snes_noise times its evaluation error estimated there; above those levels (with HS_VOUCH_FACTOR) still if every
 * row is at its own round-off level without RowwiseRoundoff's slack (HS_ROWWISE_STRICT: a Jacobian of large entries,
 * whose residual cannot get below eps (|J| |X|)_i). Not by a level relative to ||F_0||: a crafted initial
 * guess (-hs_init, -hs_restart) makes ||F_0|| as large as it likes (p times 1e16 made ||F|| = 53 "converged": the sixth
 * security review), so SNES's own relative test (rtol 1e-14) ends a solve only where ||F|| is also at one of those
 * levels (HsSolverConvergenceTest goes on iterating otherwise). Otherwise the result says "converged to the requested
 * tolerance only" (tolerance_only, summary.json's "converged_to_tolerance") with the factor it is above that level
 * (with a margin of HS_VOUCH_FACTOR = 10 for the final evaluation's own round-off),
 * and converged is false. The noise floor vouches only where the residual is evaluated as accurately as by
 * default: a shooting march with tolerances looser than its defaults (-hs_step_atol, -hs_step_stol,
 * -hs_step_max_it) makes nu as large as the user allows (s->noise_vouch, set by the formulation).
 * The absolute tolerance vouches only where the Newton step from the final iterate is below HS_ATOL_STEP of the
 * unknowns (AtolStep): equations whose terms are all tiny (a problem in tiny units) meet 1e-12 long before they are
 * solved; Newton goes on there (the convergence test and RoundoffStop ask it too). The noise floor vouches only
 * where that step is within HS_VOUCH_FACTOR c of the noise's own Newton step (NoiseStep): equations whose terms are far
 * below the others' have a residual far below ||F|| = nu whether they are solved or not (issue 38). Nor where that
 * noise's step, J(X)^{-1} e, is above HS_NOISE_SINGULAR ||X||_2, or above that fraction of one field of X (one
 * component at every node, taken at least at the median nonzero field's size: FieldwiseStep): the evaluation error
 * alone then moves X by its own size, the Jacobian is numerically singular in the residual's direction, and no digit
 * of X is determined by the equations (SINGULAR_AT_NOISE_FLOOR, not converged; no Newton steps from the floor). p_y
 * fixed at both ends with a
 * rate of 1e-300 (p_y(T) fixed twice to the last bit) had ended exit 0 "converged" with ||F|| = 0.22 after the direct
 * guess: its multiplier lambda_p_y stood at 5.7e13, the round-off of its terms made nu = 0.12 (real noise, of terms
 * that should not be there), and d and z were both 5e14, of X's size, so d / z = 1.7 had vouched (issue 38). Measured
 * (bench/noise_singular.py, bench/README.md): r, the larger of the two ratios, at most 6e-10 at the floors of 115
 * well-posed runs that converge there (every problem file and built-in problem forced to its floor, large N, extreme
 * units, shooting, conserving4, 2 ranks), at least 2.1 where the floor refused a singular case (p_y or y(T) fixed where
 * a rate of 1e-16 .. 1e-300 leaves them determined by x0): the threshold lies 1e6 above the one, 2e3 below the other.
 */
#include "hsbvpimpl.h"

#define HS_ATOL_STEP 1e-6       /* AtolStep: the Newton step a residual below the absolute tolerance may leave */
#define HS_ATOL_SCREEN 1e-3     /* AtolScreen: the predicted step's margin below HS_ATOL_STEP */
#define HS_ROWWISE_SLACK 1e4    /* RowwiseRoundoff's margin for the divided differences' cancellation */
#define HS_NOISE_CURVATURE 10.0 /* NoiseIsNoise: nu at delta/10 below nu / this is curvature, not noise */
static PetscErrorCode EstimateNoiseDelta(HsSolver s, Vec X, Vec F, PetscReal delta, PetscReal *nu, Vec *w);
static PetscErrorCode AtolStep(HsSolver s, Vec X, Vec F, PetscReal fnorm, PetscInt it, PetscBool *ok, PetscReal *rel);
#define HS_NOISE_REESTIMATE 100.0 /* estimate again once ||F|| <= this times c nu_last */
#define HS_NOISE_FAR 1e4          /* no estimate after a slow step this far above c nu_last (file head) */
#define HS_NOISE_FAR_SIZE 10.0    /* ... of an iterate of a size within this factor of the last estimate's */
#define HS_NOISE_FRESH 1e-3       /* the last estimate is the next iterate's across ||dX|| <= this ||X|| */
#define HS_NOISE_QUADRATIC 10.0   /* a step that cut ||F|| by this factor was Newton's quadratic phase (AtFloor) */
#define HS_NOISE_FROM 100.0       /* ... and it ended the solve only from ||F|| <= this times nu (AtFloor) */
#define HS_NOISE_SINGULAR 1e-3    /* NoiseStep: the noise's Newton step above this times ||X||: singular */

/* Whether every residual component is at the round-off level of its own terms: |F_i| <= HS_ROWWISE_SLACK (c eps
 * (|J| |X|)_i + atol / sqrt(n)), with |J| |X| the sizes of the terms of equation i to first order (the Jacobian
 * evaluated at X, its values' magnitudes, times |X|). The slack: divided differences (Gonzalez, Greenspan) lose more
 * than eps of their terms to cancellation (the 3-link arm at N = 160: its worst row 11 times c eps (|J| |X|)_i, with
 * c = 1000), while a residual that is not solved stands 1e12 times above it (the reviews' reproducers). The global
 * level c eps max(1, ||X||_inf) sqrt(n) lets one unknown far larger than the others raise the level of every equation:
 * a coordinate parked at 1e14 had made |F| = 3.5 (the pendulum's equations not solved at all) "converged" (the seventh
 * and eighth security reviews). Only an assembled AIJ Jacobian can answer (*ok true otherwise: the global level
 * stands); one Jacobian evaluation at X, done only when the global level would end the solve. Collective. */
static PetscErrorCode RowwiseRoundoff(HsSolver s, Vec X, Vec F, PetscReal c, PetscReal slack, PetscBool *ok,
                                      PetscReal *lnorm);

/* RowwiseRoundoff with slack 1 (HS_ROWWISE_STRICT): |F_i| <= c eps (|J| |X|)_i + atol / sqrt(n) for every row (the absolute part for
 * the residual's terms that do not depend on X, the problem's data: a row of terms |J| |X| = 3e-5 stood at 4e-15
 * below), 1e4 times below what RowwiseRoundoff allows: the level a row cannot be brought below, whatever ||F||. It
 * vouches where ||F|| is above the global level because the Jacobian's entries are large, which that level (the
 * unknowns' size alone) does not see: conserving4 shooting of the particle transfer (N = 20 from N = 10, one segment,
 * 5 unknowns, sensitivities up to 2e4 over the whole trajectory, T = 20) stagnates at ||F|| = 6e-12 .. 1.4e-11, its
 * worst row 1.4e-11 where c eps (|J| |X|)_i = 9.6e-11, the others 0.03-0.17 of their levels (a Newton step of 1e-14
 * from there, 3 ulp of T); the global level is 1e-12 and 10 times the absolute tolerance 1e-11, so which side of 1e-11
 * the last bits landed on had decided between "converged" and "converged to the requested tolerance only" (a 1-ulp
 * change in hsband's back substitution flipped it). RowwiseRoundoff's *lnorm (NULL: not wanted): the 2-norm of the
 * rows' levels without the slack. */
#define HS_ROWWISE_STRICT 1.0

/*@ HsSolverRowwiseRoundoff - whether every component of F = F(X) is at the round-off level of its own terms, with the
    default factor (RowwiseRoundoff above): for a formulation that vouches by the round-off level outside SNES (ipopt at
    its acceptable level). bvp/ internal. Collective. @*/
PetscErrorCode HsSolverRowwiseRoundoff(HsSolver s, Vec X, Vec F, PetscBool *ok)
{
  PetscFunctionBeginUser;
  PetscCall(RowwiseRoundoff(s, X, F, HS_VOUCH_FACTOR * PetscMax(s->roundoff, HS_ROUNDOFF_FACTOR_DEFAULT),
                            HS_ROWWISE_SLACK, ok, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode RowwiseRoundoff(HsSolver s, Vec X, Vec F, PetscReal c, PetscReal slack, PetscBool *ok,
                                      PetscReal *lnorm)
{
  Mat                A;
  Vec                ax, S;
  HsAIJParts         P;
  const PetscScalar *f, *sv;
  PetscReal          worst = 0, floor_, l2 = 0;
  PetscInt           n, nl, lag;
  PetscBool          aij;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE;
  if (lnorm)
    *lnorm = 0;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)s->Jac, &aij, MATSEQAIJ, MATMPIAIJ, ""));
  if (!aij) { /* no rows to weigh (matrix-free shooting): the round-off level does not vouch (the ninth review) */
    *ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  /* at X whatever -snes_lag_jacobian says: lagged, SNESComputeJacobian returned at once, and the rows were weighed by
     the Jacobian of an iterate before (crane_natural, -snes_lag_jacobian 3 -hs_snes_roundoff 1e4: the one of two
     iterations back, which vouched for |F| = 9.9e-7; issue 38, round 21). The lag is put back after. */
  PetscCall(SNESGetLagJacobian(s->snes, &lag));
  if (lag != 1)
    PetscCall(SNESSetLagJacobian(s->snes, 1));
  PetscCall(SNESComputeJacobian(s->snes, X, s->Jac, s->Jac)); /* refills every value (a factorization in place) */
  if (lag != 1)
    PetscCall(SNESSetLagJacobian(s->snes, lag));
  PetscCall(MatDuplicate(s->Jac, MAT_COPY_VALUES, &A));
  PetscCall(HsAIJPartsGet(A, PETSC_TRUE, &P));
  for (int q = 0; q < 2 && P.ok; q++)
    if (P.part[q]) {
      PetscInt m;
      PetscCall(MatGetLocalSize(A, &m, NULL));
      for (PetscInt e = 0; e < P.ia[q][m]; e++)
        P.wa[q][e] = PetscAbsScalar(P.wa[q][e]);
    }
  PetscCall(HsAIJPartsRestore(&P));
  PetscCall(VecDuplicate(X, &ax));
  PetscCall(VecCopy(X, ax));
  PetscCall(VecAbs(ax));
  PetscCall(VecDuplicate(F, &S));
  PetscCall(MatMult(A, ax, S));
  PetscCall(VecGetSize(F, &n));
  PetscCall(VecGetLocalSize(F, &nl));
  floor_ = HS_SNES_ATOL_DEFAULT / PetscSqrtReal((PetscReal)n);
  PetscCall(VecGetArrayRead(F, &f));
  PetscCall(VecGetArrayRead(S, &sv));
  for (PetscInt i = 0; i < nl; i++) {
    PetscReal li = c * PETSC_MACHINE_EPSILON * PetscAbsScalar(sv[i]) + floor_, fi = PetscAbsScalar(f[i]);
    worst = PetscMax(worst, fi / li);
    l2 += li * li;
  }
  PetscCall(VecRestoreArrayRead(S, &sv));
  PetscCall(VecRestoreArrayRead(F, &f));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &l2, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  PetscCall(PetscInfo(s, "row-wise round-off: the worst row at %g times its level (allowed: %g)\n", (double)worst,
                      (double)slack));
  *ok = (PetscBool)(worst <= slack);
  if (lnorm)
    *lnorm = PetscSqrtReal(l2);
  PetscCall(VecDestroy(&ax));
  PetscCall(VecDestroy(&S));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* x[i] = J(X)^{-1} b[i], i < nb, with the Jacobian evaluated at X whatever -snes_lag_jacobian says (RowwiseRoundoff)
   and the solver's KSP. The Jacobian is evaluated again for each right-hand side: hsband factors as it solves, in
   place (the factors over the Jacobian's values: kepler N = 20000, 34 MB of a peak of 170), so one factorization
   serves one solve; keeping its multipliers for a second would raise the solve's peak memory by U's size.
   *solved: every solve converged to finite values; false also where SNES has no Jacobian. Collective. */
static PetscErrorCode SolveAt(HsSolver s, Vec X, PetscInt nb, Vec *b, Vec *x, PetscBool *solved)
{
  KSP                ksp;
  Mat                J, P;
  PetscInt           lag;
  PetscReal          nx;
  KSPConvergedReason kr;

  PetscFunctionBeginUser;
  *solved = PETSC_FALSE;
  PetscCall(SNESGetJacobian(s->snes, &J, &P, NULL, NULL));
  if (!J)
    PetscFunctionReturn(0);
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(SNESGetLagJacobian(s->snes, &lag));
  if (lag != 1)
    PetscCall(SNESSetLagJacobian(s->snes, 1));
  *solved = PETSC_TRUE;
  for (PetscInt i = 0; i < nb && *solved; i++) {
    PetscCall(SNESComputeJacobian(s->snes, X, J, P)); /* refills every value (factors made in place) */
    PetscCall(KSPSetOperators(ksp, J, P));
    PetscCall(KSPSolve(ksp, b[i], x[i]));
    PetscCall(KSPGetConvergedReason(ksp, &kr));
    PetscCall(VecNorm(x[i], NORM_2, &nx));
    *solved = (PetscBool)(kr > 0 && !PetscIsInfOrNanReal(nx));
  }
  if (lag != 1)
    PetscCall(SNESSetLagJacobian(s->snes, lag));
  PetscFunctionReturn(0);
}

/* The noise's step z against X field by field, where X is laid out by node (a block size, a DMDA's dof: the
   transcriptions' components of x and lambda at each node): *r = max over the fields f of ||z_f||_2 / max(||X_f||_2,
   m), m the (upper) median of the nonzero fields' ||X_g||_2; 0 where X has no blocks (shooting's segments).
   ||z|| / ||X|| alone is blind once Newton has driven X along the singular direction: y(T) fixed where a conserved
   p_y determines it (y free of the control) left a multiplier undetermined, Newton drove it to 3e17, ||z|| / ||X|| was
   1.8e-14, and the floor vouched for ||F|| = 147 (nu = 98, the round-off of terms of 1e17), while z moved lambda_p_x,
   a field of size 3.3, by 20: 6.1 of it (issue 38, bench/noise_singular.py). The median keeps a field that is zero but
   for round-off (an ignorable coordinate's costate, a free end's, a spatial body's out-of-plane components) from being
   measured against its own round-off (satellite_euler's reads 1.3 of itself); of the nonzero fields, as most of
   cart_pendulum_spatial's 140 are exactly zero (the median of all, 0, gave r = 2.8e-4; now 1e-14). Collective. */
static PetscErrorCode FieldwiseStep(Vec X, Vec z, PetscReal *r)
{
  PetscInt           bs, bz, n, nz = 0;
  PetscReal         *zf, *xf, *sorted, m;
  const PetscScalar *xa, *za;

  PetscFunctionBeginUser;
  *r = 0;
  PetscCall(VecGetBlockSize(X, &bs));
  PetscCall(VecGetBlockSize(z, &bz));
  if (bs < 2 || bz != bs)
    PetscFunctionReturn(0);
  PetscCall(PetscCalloc3(2 * bs, &zf, bs, &xf, bs, &sorted)); /* zf: both sums of squares, reduced at once */
  PetscCall(VecGetLocalSize(X, &n)); /* whole blocks on each rank (VecStrideNormAll: bs <= 128) */
  PetscCall(VecGetArrayRead(X, &xa));
  PetscCall(VecGetArrayRead(z, &za));
  for (PetscInt i = 0; i < n; i++)
    zf[i % bs] += PetscSqr(PetscAbsScalar(za[i])), zf[bs + i % bs] += PetscSqr(PetscAbsScalar(xa[i]));
  PetscCall(VecRestoreArrayRead(z, &za));
  PetscCall(VecRestoreArrayRead(X, &xa));
  PetscCallMPI(
      MPI_Allreduce(MPI_IN_PLACE, zf, (PetscMPIInt)(2 * bs), MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)X)));
  for (PetscInt f = 0; f < bs; f++)
    zf[f] = PetscSqrtReal(zf[f]), xf[f] = PetscSqrtReal(zf[bs + f]);
  for (PetscInt f = 0; f < bs; f++) /* the nonzero fields (above) */
    if (xf[f] > 0)
      sorted[nz++] = xf[f];
  if (!nz) {
    PetscCall(PetscFree3(zf, xf, sorted));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscSortReal(nz, sorted));
  m = sorted[nz / 2];
  for (PetscInt f = 0; f < bs; f++)
    if (PetscMax(xf[f], m) > 0)
      *r = PetscMax(*r, zf[f] / PetscMax(xf[f], m));
  PetscCall(PetscFree3(zf, xf, sorted));
  PetscFunctionReturn(0);
}

/* Whether X is solved as far as the evaluation error lets it be: the Newton step from X, d = J(X)^{-1} F, against the
   noise's own Newton step, z = J(X)^{-1} e, e = (F(X + dX) + F(X - dX) - 2 F(X)) / sqrt(6) a sample of the evaluation
   error (w[1], NoiseIsNoise's estimate; w[0] and w[2] free work vectors): ||d||_2 <= HS_VOUCH_FACTOR c ||z||_2, the
   margin the residual's own test allows (||F|| <= HS_VOUCH_FACTOR c nu; c = -hs_snes_noise, 10).
   At a noise-floor stop F = e' + J (X - X*), e' the error of this evaluation, so d = z' + (X - X*): d is of z's size
   where X is within the noise's reach of the solution X*, and far above it where it is not. ||F|| alone cannot tell:
   it is the norm of the largest equations, and equations whose terms are far smaller than theirs have a residual far
   below it whether solved or not (the pendulum in units of s = 1e-20, its momentum and q-costate equations 1e-20 the
   others': the line search could not reduce ||F|| = 9.8e-16, the floor 4.8e-16, and the solve had been "converged"
   with J^d 8.99e-20 against s J = 6.71e-20, ||d|| / ||z|| = 3.4e11, issue 38). A step is the same for rows scaled by
   any factors, so the comparison is each equation at its own scale; z is J^{-1} of noise, not a fixed fraction of X
   (the noise amplified by the problem's conditioning; a fixed fraction would be a guess of that conditioning).
   Measured on floor stops that had converged: 0.59 to 0.63 (kepler N = 2e4 and 1e5, duffing N = 400); 1e8 to 1e15
   on those that had not. Two Jacobians and two solves (SolveAt), where the floor ends a solve (HsSolverFloorNewton,
   whose answer HsSolverVerifyConvergence reuses). A failed linear solve does not object (as in AtolStep). Collective.
 */
static PetscErrorCode NoiseStep(HsSolver s, Vec X, Vec F, Vec *w, PetscBool *solved, PetscReal *ratio)
{
  Vec       b[2] = {F, w[1]}, x[2] = {w[0], w[2]};
  PetscReal dn, zn, xn, rf, r;
  PetscBool ok;

  PetscFunctionBeginUser;
  *solved = PETSC_TRUE, *ratio = 0; /* s->floor_singular: 0 from the caller, NoiseIsNoise */
  PetscCall(SolveAt(s, X, 2, b, x, &ok));
  if (!ok) {
    PetscCall(PetscInfo(s, "the Newton steps from the floor not computed (a linear solve failed): no objection\n"));
    PetscFunctionReturn(0);
  }
  PetscCall(VecNormBegin(x[0], NORM_2, &dn));
  PetscCall(VecNormBegin(x[1], NORM_2, &zn));
  PetscCall(VecNormBegin(X, NORM_2, &xn));
  PetscCall(VecNormEnd(x[0], NORM_2, &dn));
  PetscCall(VecNormEnd(x[1], NORM_2, &zn));
  PetscCall(VecNormEnd(X, NORM_2, &xn));
  zn /= PetscSqrtReal(6);
  PetscCall(FieldwiseStep(X, x[1], &rf));
  rf /= PetscSqrtReal(6);
  r       = PetscMax(zn / xn, rf);
  *ratio  = zn > 0 ? dn / zn : PETSC_INFINITY;
  *solved = (PetscBool)(*ratio <= HS_VOUCH_FACTOR * s->noise_factor);
  if (r > HS_NOISE_SINGULAR) /* the noise alone moves X, or a field of it, by its size: J is numerically singular */
    *solved = PETSC_FALSE, s->floor_singular = r;
  /* r at every floor decision, with its verdict: bench/noise_singular.py reads this line (-info :hs) */
  PetscCall(PetscInfo(s,
                      "the Newton step from the floor %g, the noise's %g: %g times it, the noise's %g of ||X||, %g of"
                      " its fields: r = %g (singular above %g): %s\n",
                      (double)dn, (double)zn, (double)*ratio, (double)(zn / xn), (double)rf, (double)r,
                      HS_NOISE_SINGULAR,
                      s->floor_singular > 0 ? "singular"
                      : *solved             ? "solved"
                                            : "not solved"));
  PetscFunctionReturn(0);
}

/* Whether the noise floor nu estimated at X is evaluation noise and not the residual's curvature: estimated again
 * with a perturbation ten times smaller, noise stays, a quadratic part falls a hundredfold (a coordinate parked at
 * 1e14 is perturbed by 1e4 at HS_NOISE_DELTA, and a cubic term in it then reads as a floor of 147 that vouched for
 * |F| = 3.5: the ninth security review). Two residual evaluations, at the end of a solve that the floor ends; the
 * formulation's data at X again after them. Then, if it is noise, whether X is solved to it (NoiseStep: *solved,
 * *ratio; true and 0 where not measured; *d, if not NULL: the vector holding that Newton step, NULL where none was
 * computed now). The answer is kept for X's id and state, F's state and nu (HsSolverFloorNewton, then
 * HsSolverVerifyConvergence, ask at the same iterate). Collective. */
static PetscErrorCode NoiseIsNoise(HsSolver s, Vec X, Vec F, PetscBool *ok, PetscBool *solved, PetscReal *ratio,
                                   Vec *d)
{
  PetscReal        nu2, nu = s->res.noise_floor;
  Vec              w[3];
  PetscObjectId    id;
  PetscObjectState state, fstate;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE, *solved = PETSC_TRUE, *ratio = 0;
  if (d)
    *d = NULL;
  if (!(nu > 0))
    PetscFunctionReturn(0);
  PetscCall(PetscObjectGetId((PetscObject)X, &id));
  PetscCall(PetscObjectStateGet((PetscObject)X, &state));
  PetscCall(PetscObjectStateGet((PetscObject)F, &fstate));
  if (id == s->floor_id && state == s->floor_state && fstate == s->floor_fstate && nu == s->floor_nu) {
    *ok = s->floor_noise, *solved = s->floor_solved, *ratio = s->floor_ratio;
    PetscFunctionReturn(0);
  }
  s->floor_singular = 0;
  PetscCall(EstimateNoiseDelta(s, X, F, HS_NOISE_DELTA / 10, &nu2, w));
  PetscCall(SNESComputeFunction(s->snes, X, F));
  *ok = (PetscBool)(nu2 >= nu / HS_NOISE_CURVATURE);
  PetscCall(PetscInfo(s, "noise floor %g at delta, %g at delta/10: %s\n", (double)nu, (double)nu2,
                      *ok ? "noise" : "curvature"));
  if (*ok && nu2 > 0) {
    PetscCall(NoiseStep(s, X, F, w, solved, ratio));
    if (d)
      *d = w[0];
  }
  PetscCall(PetscObjectStateGet((PetscObject)F, &fstate));
  s->floor_id = id, s->floor_state = state, s->floor_fstate = fstate, s->floor_nu = nu;
  s->floor_noise = *ok, s->floor_solved = *solved, s->floor_ratio = *ratio;
  PetscFunctionReturn(0);
}

/*@ HsSolverFloorNewton - after a Newton solve that ended at the noise floor (res.at_floor) at s->X, s->F = F(X):
    where the iterate is not solved to the noise (NoiseStep), Newton goes on without its line search: X <- X - d, the
    Newton step NoiseStep has just computed, while ||F(X)|| stays within HS_VOUCH_FACTOR -hs_snes_noise nu (the step
    leaves the large equations at their floor) and at most HS_FLOOR_STEPS times. The line search cannot do it: ||F||
    is the large equations' noise, and a step that solves the equations whose terms are far smaller than theirs does
    not reduce it (the bounded pendulum at s = 1e-12 with hsband's other summation order, issue 38: the
    epsilon-continuation's stages had stopped at steps of 1e-5 to 1e-3 of X, quadratic, that the line search
    rejected). *steps: the steps taken (counted as Newton iterations by the caller); res.residual_norm and s->F are the
    final iterate's, the formulation's data there. Where the iterate is solved (every solve that converges at the
    floor: the check that HsSolverVerifyConvergence asks for, here first and kept) it costs nothing more. bvp/
    internal. Collective. @*/
#define HS_FLOOR_STEPS 10
PetscErrorCode HsSolverFloorNewton(HsSolver s, PetscInt *steps)
{
  PetscBool noise, solved, dom;
  PetscReal ratio, fnorm, limit = HS_VOUCH_FACTOR * s->noise_factor * s->res.noise_floor;
  Vec       d, Xold = NULL;

  PetscFunctionBeginUser;
  *steps = 0;
  if (!s->res.at_floor || !s->noise_vouch || s->interrupted || !s->ops->residual)
    PetscFunctionReturn(0);
  for (;;) {
    PetscCall(NoiseIsNoise(s, s->X, s->F, &noise, &solved, &ratio, &d));
    if (!noise || solved || !d || *steps == HS_FLOOR_STEPS || s->floor_singular > 0) /* singular: no step helps */
      break;
    if (!Xold)
      PetscCall(VecDuplicate(s->X, &Xold));
    PetscCall(VecCopy(s->X, Xold));
    PetscCall(VecAXPY(s->X, -1, d));
    PetscCall((*s->ops->residual)(s, s->X, s->F, &dom));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dom, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
    if (!dom)
      PetscCall(VecNorm(s->F, NORM_2, &fnorm));
    PetscCall(PetscInfo(s, "at the floor, not solved: a full Newton step, ||F|| %g -> %g (at most %g)\n",
                        (double)s->res.residual_norm, dom ? -1.0 : (double)fnorm, (double)limit));
    if (dom || !(fnorm <= limit)) { /* the step leaves the floor: back, and the verdict stands */
      PetscCall(VecCopy(Xold, s->X));
      PetscCall(SNESComputeFunction(s->snes, s->X, s->F));
      break;
    }
    s->res.residual_norm = fnorm, (*steps)++;
  }
  PetscCall(VecDestroy(&Xold));
  PetscFunctionReturn(0);
}

/*@ HsSolverMonitor - one progress line per Newton iteration (bvp/ internal; SNES monitor): the
    residual norm, linear iterations, elapsed time (ms: bench/scaling_bench.py takes one iteration's time
    from two lines). @*/
PetscErrorCode HsSolverMonitor(SNES snes, PetscInt it, PetscReal fnorm, void *ctx)
{
  HsSolver s = ctx;
  PetscInt lits;

  PetscFunctionBeginUser;
  PetscCall(SNESGetLinearSolveIterations(snes, &lits));
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s),
                        "  Newton %2" PetscInt_FMT "  |F| = %.3e  linear its %" PetscInt_FMT "  %.3f s\n", it,
                        (double)fnorm, lits, MPI_Wtime() - s->t_start));
  PetscFunctionReturn(0);
}

/* +1 or -1, a fixed pattern in the global index (the same for any number of ranks). */
static PetscReal Sign(PetscInt i)
{
  unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ULL;
  return (h >> 40) & 1 ? 1.0 : -1.0;
}

/* The estimate's three work vectors (X + dX, F(X + dX), F(X - dX)): Newton's trial vectors (the line
   search's W and G) and its step, free between two iterations and after the solve, whose pages were touched
   by the iterations before: three new vectors would pay their first touch (3 x 96 MB for kepler at
   N = 1e6). Vectors of the solver's own (kept) where SNES has none of X's layout. */
static PetscErrorCode WorkVectors(HsSolver s, Vec X, Vec F, Vec *Xp, Vec *Fp, Vec *Fm)
{
  SNESLineSearch ls;
  Vec            v[3] = {NULL, NULL, NULL};
  PetscInt       n, m;
  PetscBool      ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(SNESGetLineSearch(s->snes, &ls));
  PetscCall(SNESLineSearchGetVecs(ls, NULL, NULL, NULL, &v[0], &v[1]));
  PetscCall(SNESGetSolutionUpdate(s->snes, &v[2]));
  for (int i = 0; i < 3 && ok; i++) {
    ok = (PetscBool)(v[i] && v[i] != X && v[i] != F);
    if (ok)
      PetscCall(VecGetLocalSize(v[i], &m));
    ok = (PetscBool)(ok && m == n);
  }
  for (int i = 0; i < 3 && !ok; i++) { /* kept from the last estimate when they have X's layout */
    m = -1;
    if (s->noise_work[i])
      PetscCall(VecGetLocalSize(s->noise_work[i], &m));
    if (m != n) {
      PetscCall(VecDestroy(&s->noise_work[i]));
      PetscCall(VecDuplicate(X, &s->noise_work[i]));
    }
    v[i] = s->noise_work[i];
  }
  *Xp = v[0], *Fp = v[1], *Fm = v[2];
  PetscFunctionReturn(0);
}

/*@ HsSolverEstimateNoise - the evaluation error of the formulation's residual at X (file head):
    nu = ||F(X + dX) + F(X - dX) - 2 F(X)||_2 / sqrt(6). F must hold F(X). bvp/ internal.

  Collective. *nu = 0 if the formulation has no residual operation or a perturbed evaluation left
  the domain (no estimate). The formulation's cached data may afterwards belong to X - dX (as after a
  line search's trial point); a free T (s->iT) is not perturbed, so the problem keeps X's T.
@*/
static PetscErrorCode HsSolverEstimateNoise(HsSolver s, Vec X, Vec F, PetscReal *nu)
{
  PetscFunctionBeginUser;
  PetscCall(EstimateNoiseDelta(s, X, F, HS_NOISE_DELTA, nu, NULL));
  PetscFunctionReturn(0);
}

/* The same with the relative perturbation delta; w (if not NULL): the three work vectors, w[1] holding the sample
   F(X + dX) + F(X - dX) - 2 F(X) where *nu > 0 (free between two Newton iterations and after the solve). */
static PetscErrorCode EstimateNoiseDelta(HsSolver s, Vec X, Vec F, PetscReal delta, PetscReal *nu, Vec *w)
{
  Vec                Xp = NULL, Fp = NULL, Fm = NULL;
  const PetscScalar *x;
  PetscScalar       *xp;
  PetscInt           lo, hi;
  PetscBool          dom1 = PETSC_FALSE, dom2 = PETSC_FALSE, keep;
  char               diag[sizeof s->res.diagnosis];

  PetscFunctionBeginUser;
  *nu = 0;
  if (!s->ops->residual)
    PetscFunctionReturn(0);
  PetscCall(PetscStrncpy(diag, s->res.diagnosis, sizeof diag)); /* a failure here is not the solve's */
  keep = s->diagnosis_keep;
  PetscCall(PetscLogEventBegin(HS_NOISE_ESTIMATE, s, X, F, 0));
  PetscCall(VecGetOwnershipRange(X, &lo, &hi));
  PetscCall(WorkVectors(s, X, F, &Xp, &Fp, &Fm));
  for (int side = 0; side < 2; side++) {
    PetscReal d = side ? -delta : delta;
    PetscCall(VecGetArrayRead(X, &x));
    PetscCall(VecGetArray(Xp, &xp));
    for (PetscInt i = lo; i < hi; i++)
      xp[i - lo] = i == s->iT ? x[i - lo] : x[i - lo] + d * PetscAbsScalar(x[i - lo]) * Sign(i);
    PetscCall(VecRestoreArray(Xp, &xp));
    PetscCall(VecRestoreArrayRead(X, &x));
    PetscCall((*s->ops->residual)(s, Xp, side ? Fm : Fp, side ? &dom2 : &dom1));
  }
  dom1 = (PetscBool)(dom1 || dom2);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dom1, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  if (!dom1) {
    PetscCall(VecAXPBYPCZ(Fp, -2, 1, 1, F, Fm)); /* Fp = Fp + Fm - 2 F */
    PetscCall(VecNorm(Fp, NORM_2, nu));
    *nu /= PetscSqrtReal(6);
    if (PetscIsInfOrNanReal(*nu))
      *nu = 0;
  }
  PetscCall(PetscStrncpy(s->res.diagnosis, diag, sizeof s->res.diagnosis));
  s->diagnosis_keep = keep;
  if (w)
    w[0] = Xp, w[1] = Fp, w[2] = Fm;
  PetscCall(PetscLogEventEnd(HS_NOISE_ESTIMATE, s, X, F, 0));
  PetscFunctionReturn(0);
}

/* Whether the last estimate of nu still describes an iterate of size xinf. */
static PetscBool Known(HsSolver s, PetscReal xinf)
{
  return (PetscBool)(s->res.noise_floor > 0 && xinf <= 2 * s->noise_xinf && 2 * xinf >= s->noise_xinf);
}

/* Whether ||F|| has come close enough to the known floor to look again. */
static PetscBool Near(HsSolver s, PetscReal fnorm, PetscReal xinf)
{
  return (PetscBool)(Known(s, xinf) && fnorm <= HS_NOISE_REESTIMATE * s->noise_factor * s->res.noise_floor);
}

/* Whether a slow step at ||F|| = fnorm, size xinf, is too far above the last estimate (of this Newton solve:
   a homotopy's earlier solves had other floors) to be at the floor. */
static PetscBool Far(HsSolver s, PetscReal fnorm, PetscReal xinf)
{
  PetscReal nu = s->res.noise_floor, x0 = s->noise_xinf;
  return (PetscBool)(nu > 0 && s->noise_it >= 0 && xinf <= HS_NOISE_FAR_SIZE * x0 && HS_NOISE_FAR_SIZE * xinf >= x0 &&
                     fnorm >= HS_NOISE_FAR * s->noise_factor * nu);
}

/* Whether the last estimate was made at the previous iterate, a step snorm <= HS_NOISE_FRESH xnorm away. */
static PetscBool Fresh(HsSolver s, PetscInt it, PetscReal xnorm, PetscReal snorm)
{
  return (PetscBool)(s->res.noise_floor > 0 && s->noise_it == it - 1 && snorm <= HS_NOISE_FRESH * xnorm);
}

/* Whether ||F|| = fnorm ends the solve at the floor nu: fnorm <= c nu, unless the step to it cut ||F|| by
   HS_NOISE_QUADRATIC or more from above HS_NOISE_FROM nu. Such a step was Newton's quadratic phase, and what it
   leaves of the residual before it is Newton's own error: smooth in time, it moves the solution far more than
   evaluation noise of the same norm (random from node to node), and ||F|| cannot tell the two apart. A step there
   cuts that error about 1000-fold (kepler below: landed at 3.3e-4 and 1.2e-3 of where it started, at most), so
   from within 100 nu it leaves about 0.1 nu; from farther, one step more. Measured, kepler, default guess:
     - N = 1e5, kkt costates: ||F|| 1.85e-5 = 21500 nu -> 6.2e-9 = 7.2 nu had ended the solve with J^d 3.8e-7
       (relative) off IPOPT's; the next step, to 1.2e-9, gives J^d 2e-14 from the conserving costates' (test
       robustness);
     - N = 1e6: 5.85e-6 = 830 nu -> 1.02e-8 = 1.44 nu had ended it with J^d 3.8e-7 off and H^d's spread 4.3e-7;
       the next step, to 1.00e-8 (no smaller: the floor), gives J^d within 5e-15 of a solve taken on to 7
       iterations (-hs_snes_noise 1) and the spread 1.3e-10 (8.8e-11 there);
     - N = 1e5: 6.1e-9 = 27 nu -> 3.2e-10 = 1.4 nu ends it (H^d's spread 1.1e-11), as before.
   After a line search that could not reduce ||F|| (HsSolverSolveNewton), fnorm is the last iterate's,
   s->fnorm_prev, and only c nu counts. */
static PetscBool AtFloor(HsSolver s, PetscReal fnorm, PetscReal nu)
{
  return (PetscBool)(fnorm <= s->noise_factor * nu &&
                     (HS_NOISE_QUADRATIC * fnorm > s->fnorm_prev || s->fnorm_prev <= HS_NOISE_FROM * nu));
}

/*@ HsSolverAtNoiseFloor - whether ||F|| = fnorm at X (F = F(X)), Newton's iterate it, is at the noise floor
    (file head): the evaluation error is estimated at X (s->res.noise_floor, the size of X and the iteration
    it describes: s->noise_xinf, s->noise_it; the estimate the convergence test holds for iterate it is used
    instead), and s->res.at_floor set if fnorm <= -hs_snes_noise times it (and not just after Newton's
    quadratic phase: AtFloor). *evaluated (if not NULL): a new estimate evaluated the residual near X, which leaves
    the formulation's data there.
    The convergence test calls it after a slow step, HsSolverSolveNewton after a line search that could not
    reduce ||F||. bvp/ internal. Collective. @*/
PetscErrorCode HsSolverAtNoiseFloor(HsSolver s, Vec X, Vec F, PetscReal fnorm, PetscInt it, PetscBool *at,
                                    PetscBool *evaluated)
{
  PetscReal nu = s->res.noise_floor;

  PetscFunctionBeginUser;
  *at = PETSC_FALSE;
  if (evaluated)
    *evaluated = PETSC_FALSE;
  if (!(s->noise_factor > 0))
    PetscFunctionReturn(0);
  if (s->noise_it == it && nu > 0) {
    *at = s->res.at_floor = AtFloor(s, fnorm, nu);
    PetscFunctionReturn(0);
  }
  if (evaluated)
    *evaluated = PETSC_TRUE;
  PetscCall(HsSolverEstimateNoise(s, X, F, &nu));
  if (nu > 0) {
    s->res.noise_floor = nu, s->noise_it = it;
    PetscCall(VecNorm(X, NORM_INFINITY, &s->noise_xinf));
    PetscCall(PetscInfo(s, "||F|| = %g, estimated evaluation error %g\n", (double)fnorm, (double)nu));
    *at = s->res.at_floor = AtFloor(s, fnorm, nu);
  }
  PetscFunctionReturn(0);
}

/* The polish after a stop at the round-off level or the noise floor (file head): the stop's iterate is kept, and Newton
   goes on while the conserved quantity's violation (HsSolverConservedMeasure) still falls: a step falls if it brings
   the violation below HS_POLISH_FALL times the smallest before it, with ||F|| at most the stop's; the polish ends after
   HS_POLISH_PATIENCE steps in a row that do not (the violation is noisy: arm2, N = 1280, from the stop on 4.0, 3.6,
   2.7, 3.1, 2.1, 1.4, 1.4, 1.5e-8, then 1.3e-8 for good) or after -hs_snes_polish steps (HS_POLISH_MAX_DEFAULT), at the
   iterate of the smallest violation. Only where the violation is above HS_POLISH_FROM eps of its terms' size, and for
   a stop below the absolute tolerance (conserving4) above HS_POLISH_FROM_ATOL eps: Newton's residual is at round-off
   there, and a substep's H difference at its own (5.8e-15 to 1.0e-14 after the polish on the pendulum, N = 159 to
   636, from 8.4e-15 to 8.1e-14 at the stop), which a polish step only stirs. */
#define HS_POLISH_FALL 0.9
#define HS_POLISH_PATIENCE 2
#define HS_POLISH_FROM 10.0
#define HS_POLISH_FROM_ATOL 100.0

/* At a stop (iteration it, ||F|| = fnorm) at the round-off level or the floor: the polish starts (*reason iterating)
   where the formulation's unknowns are the node layout (transcription) or it measures its own (conserving4, also
   below the absolute tolerance), with the problem's own costate scheme (not in a homotopy, not while a free T is
   held). */
static PetscErrorCode PolishStart(HsSolver s, Vec X, PetscInt it, PetscReal fnorm, SNESConvergedReason *reason)
{
  PetscReal m;

  PetscFunctionBeginUser;
  if (!s->polish_max || (X != s->Xnodes && !s->ops->conserved) || s->hom_theta < 1 || s->hold_T ||
      (fnorm <= HS_SNES_ATOL_DEFAULT && !s->ops->conserved)) /* conserving4: its H spread is Newton's residual's sum */
    PetscFunctionReturn(0);
  PetscCall(HsSolverConservedMeasure(s, X, &m));
  if (!(m > (fnorm <= HS_SNES_ATOL_DEFAULT ? HS_POLISH_FROM_ATOL : HS_POLISH_FROM) * PETSC_MACHINE_EPSILON))
    PetscFunctionReturn(0);
  if (!s->polish_X)
    PetscCall(VecDuplicate(X, &s->polish_X));
  PetscCall(VecCopy(X, s->polish_X));
  s->polish_best = m, s->polish_fstop = fnorm, s->polish_floor = s->res.at_floor;
  s->polish_it = it, s->polish_n = 0, s->polish_miss = 0, s->res.at_floor = PETSC_FALSE;
  *reason = SNES_CONVERGED_ITERATING;
  PetscCall(PetscInfo(s, "stop at ||F|| = %g with the conserved quantity's violation %g: polish\n", (double)fnorm,
                      (double)m));
  PetscFunctionReturn(0);
}

/*@ HsSolverPolishEnd - ends the polish (PolishStart) at its best iterate: X becomes it, and the stop's at_floor stands.
    Called by the convergence test and by HsSolverSolveNewton after a solve that SNES ended otherwise (a failed line
    search, the iteration limit) during a polish. bvp/ internal. Not collective beyond the vector copy. @*/
PetscErrorCode HsSolverPolishEnd(HsSolver s)
{
  Vec X;

  PetscFunctionBeginUser;
  if (s->polish_it < 0 || !s->polish_X)
    PetscFunctionReturn(0);
  PetscCall(SNESGetSolution(s->snes, &X));
  PetscCall(VecCopy(s->polish_X, X));
  s->res.at_floor = s->polish_floor, s->res.polish_iterations = s->polish_n, s->polish_it = -1;
  PetscCall(
      PetscInfo(s, "polish: %d steps, the smallest violation %g\n", (int)s->polish_n, (double)s->polish_best));
  PetscFunctionReturn(0);
}

/* A step of the polish at iteration it (||F|| = fnorm): keeps the best iterate, goes on while the violation falls. */
static PetscErrorCode PolishStep(HsSolver s, Vec X, PetscInt it, PetscReal fnorm, SNESConvergedReason *reason)
{
  PetscReal m;
  PetscBool fell;

  PetscFunctionBeginUser;
  PetscCall(HsSolverConservedMeasure(s, X, &m));
  PetscCall(
      PetscInfo(s, "polish: ||F|| = %g, the conserved quantity's violation %g\n", (double)fnorm, (double)m));
  fell = (PetscBool)(m >= 0 && m < HS_POLISH_FALL * s->polish_best && fnorm <= s->polish_fstop);
  if (m >= 0 && m < s->polish_best && fnorm <= s->polish_fstop) {
    PetscCall(VecCopy(X, s->polish_X));
    s->polish_best = m;
  }
  s->polish_miss = fell ? 0 : s->polish_miss + 1, s->polish_n++;
  if (*reason == SNES_CONVERGED_ITERATING && s->polish_miss < HS_POLISH_PATIENCE && s->polish_n < s->polish_max) {
    s->polish_it = it;
    PetscFunctionReturn(0);
  }
  PetscCall(HsSolverPolishEnd(s));
  *reason = SNES_CONVERGED_FNORM_ABS;
  PetscFunctionReturn(0);
}

/* At ||F|| below the global round-off level: the stop, unless Newton's quadratic phase has just landed there (a step
   that cut ||F|| by HS_NOISE_QUADRATIC or more) while some row is above its own level with the factor that
   HsSolverVerifyConvergence applies (RowwiseRoundoff, one Jacobian evaluation at X): then one step more, which
   reaches the row level or stagnates (and stops). Costates of 1e6 make the global level 2e-6 on the satellite,
   N = 80, where the quadratic phase ran 0.98, 2.8e-6 and had stopped one step short of 1.5e-9: "converged to the
   requested tolerance only" for a solve that a step more converged. Only with an assembled AIJ Jacobian. */
static PetscErrorCode RoundoffStop(HsSolver s, Vec X, PetscReal fnorm, SNESConvergedReason *reason)
{
  PetscBool ok = PETSC_TRUE, aij;
  Vec       F;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)s->Jac, &aij, MATSEQAIJ, MATMPIAIJ, ""));
  if (aij && fnorm > HS_VOUCH_FACTOR * HS_SNES_ATOL_DEFAULT && fnorm * HS_NOISE_QUADRATIC <= s->fnorm_prev) {
    PetscCall(SNESGetFunction(s->snes, &F, NULL, NULL));
    PetscCall(RowwiseRoundoff(s, X, F, HS_VOUCH_FACTOR * PetscMax(s->roundoff, HS_ROUNDOFF_FACTOR_DEFAULT),
                              HS_ROWWISE_SLACK, &ok, NULL));
    if (!ok)
      PetscCall(PetscInfo(s, "||F|| = %g below the global round-off level, a row above its own: a step more\n",
                          (double)fnorm));
  } else if (fnorm <= HS_VOUCH_FACTOR * HS_SNES_ATOL_DEFAULT) { /* what HsSolverVerifyConvergence asks there */
    PetscReal rel;
    PetscCall(SNESGetFunction(s->snes, &F, NULL, NULL));
    PetscCall(AtolStep(s, X, F, fnorm, 1, &ok, &rel));
  }
  if (ok)
    *reason = SNES_CONVERGED_FNORM_ABS;
  PetscFunctionReturn(0);
}

/* AtolStep's screen, from what the last iteration left (no Jacobian, no solve): after a full Newton step (lambda 1:
   Y = d_{k-1} = J(X_{k-1})^{-1} F(X_{k-1})), the step from X predicted two ways must be within HS_ATOL_SCREEN
   HS_ATOL_STEP of max(1, ||X||_inf):
     - from the residual, ||d_{k-1}|| ||F(X)|| / ||F(X_{k-1})|| (J(X_{k-1})'s action on F(X_{k-1}));
     - from the steps, ||d_{k-1}|| (||d_{k-2}|| / ||d_{k-1}||)^-2 (quadratic convergence, e_k / e_{k-1} =
       (e_{k-1} / e_{k-2})^2, with the 2-norms of the last two steps, which SNES hands the convergence test), or at
       iteration 1, with no step before, ||d_0|| (||d_0|| / max(1, ||X||_inf)) (a relative error that squares).
   The first alone is blind to equations whose terms are far smaller than the others': ||F|| is the large ones', and
   where those are linear one step leaves them at round-off whatever the small ones do. The pendulum in units of
   s = 1e-14 ... 1e-30 (mass, potential and 1/R times s) cut ||F|| from 0.35 to 1e-15 in one step of 5.3 from the
   default guess and had been "converged" there with J^d 2.8 times s J (issue 38). A Newton step is the same for
   rows scaled by any factors (J^{-1} F), so the second prediction sees those rows: it fails there (a step of 3.4
   times X), and AtolStep solves. Newton in its quadratic phase passes both: the pendulum's and kepler's conserving4
   and conserving runs of bench/order4_targets.py's configurations predict at most 8e-13 from the steps (2.6e-13
   from the first step of a grid started from another grid's solution: 8.4e-6 of X). A linear problem solved in one
   step from the default guess (ncar, an LQ problem: a step of X's size) now pays AtolStep's solve. Only newtonls,
   iteration k >= 1 with ||F|| falling. Measured: the pendulum's conserving4 Romberg of four grids (N = 224) had made
   22 Jacobians instead of 14 with the solve alone; the screen passes on each of its grids. Collective. */
static PetscErrorCode AtolScreen(HsSolver s, Vec X, PetscReal fnorm, PetscInt it, PetscBool *ok, PetscReal *rel)
{
  SNESLineSearch ls;
  Vec            Y;
  PetscReal      lambda, yinf, xinf, xs, rstep;
  PetscBool      newtonls;

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)s->snes, SNESNEWTONLS, &newtonls));
  if (!newtonls || it < 1 || !(fnorm < s->fnorm_prev))
    PetscFunctionReturn(0);
  PetscCall(SNESGetLineSearch(s->snes, &ls));
  PetscCall(SNESLineSearchGetLambda(ls, &lambda));
  PetscCall(SNESGetSolutionUpdate(s->snes, &Y));
  if (lambda != 1 || !Y)
    PetscFunctionReturn(0);
  PetscCall(VecNormBegin(Y, NORM_INFINITY, &yinf));
  PetscCall(VecNormBegin(X, NORM_INFINITY, &xinf));
  PetscCall(VecNormEnd(Y, NORM_INFINITY, &yinf));
  PetscCall(VecNormEnd(X, NORM_INFINITY, &xinf));
  xs    = PetscMax(1, xinf);
  *rel  = yinf * (fnorm / s->fnorm_prev) / xs;
  rstep = s->snorm_prev > 0 && s->snorm_last > 0
            ? (yinf / xs) * PetscSqr(s->snorm_last / s->snorm_prev)
            : PetscSqr(yinf / xs); /* iteration 1 of this solve, or a step of 0 before */
  *ok   = (PetscBool)(*rel <= HS_ATOL_SCREEN * HS_ATOL_STEP && rstep <= HS_ATOL_SCREEN * HS_ATOL_STEP);
  PetscCall(PetscInfo(s,
                      "||F|| below the absolute tolerance after a full step %g: the step predicted from it %g (from "
                      "||F||), %g (from the steps)%s\n",
                      (double)yinf, (double)(*rel * xs), (double)(rstep * xs), *ok ? "" : ": AtolStep solves"));
  *rel = PetscMax(*rel, rstep);
  PetscFunctionReturn(0);
}

/* Whether a residual below the absolute tolerance is a solution: the Newton step from X, d = J(X)^{-1} F (one Jacobian
   evaluation and linear solve: hsband factors as it solves, so no earlier factorization can be reused), must satisfy
   ||d||_inf <= HS_ATOL_STEP max(1, ||X||_inf); *rel is that ratio (0 where it cannot be measured). The absolute
   tolerance 1e-12 is no measure of a problem whose equations are all small: a pendulum with its mass, potential and
   1/R scaled by 1e-12 (the same optimal trajectory) had stopped at ||F|| = 1.3e-13, "converged", its J^d and q 0.3 %
   and 0.7 % off the scaled-back solution, and a free T without a running cost (no minimum) at T = 1e5 (issue 38,
   round 23); Newton now goes on (the pendulum to 1e-15, its solution right to 1e-14). Only for Newton's SNES types
   (newtonls, newtontr); a failed linear solve does not object. The answer is kept for X's id and state and F's state
   (HsSolverVerifyConvergence asks again; a stage of a continuation starts at the last one's X). AtolScreen first;
   a pass holds for the rest of the solve (s->atol_vouched: the equations' scale does not change). Collective. */
static PetscErrorCode AtolStep(HsSolver s, Vec X, Vec F, PetscReal fnorm, PetscInt it, PetscBool *ok, PetscReal *rel)
{
  Vec              d;
  Mat              J, P;
  PetscBool        newton, solved;
  PetscReal        dinf, xinf;
  PetscObjectId    id;
  PetscObjectState state, fstate;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE, *rel = 0;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)s->snes, &newton, SNESNEWTONLS, SNESNEWTONTR, ""));
  PetscCall(SNESGetJacobian(s->snes, &J, &P, NULL, NULL));
  if (!newton || !J || s->atol_vouched) /* the scale was vouched for earlier in this solve */
    PetscFunctionReturn(0);
  PetscCall(AtolScreen(s, X, fnorm, it, ok, rel));
  if (*ok) {
    s->atol_vouched = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  *ok = PETSC_TRUE, *rel = 0;
  PetscCall(PetscObjectGetId((PetscObject)X, &id));
  PetscCall(PetscObjectStateGet((PetscObject)X, &state));
  PetscCall(PetscObjectStateGet((PetscObject)F, &fstate));
  if (id == s->atol_id && state == s->atol_state && fstate == s->atol_fstate) { /* F: another stage's residual */
    *rel = s->atol_rel, *ok = (PetscBool)(*rel <= HS_ATOL_STEP);
    PetscFunctionReturn(0);
  }
  PetscCall(VecDuplicate(X, &d));
  PetscCall(SolveAt(s, X, 1, &F, &d, &solved));
  PetscCall(VecNorm(d, NORM_INFINITY, &dinf));
  PetscCall(VecNorm(X, NORM_INFINITY, &xinf));
  PetscCall(VecDestroy(&d));
  if (solved) {
    *rel = dinf / PetscMax(1, xinf);
    *ok  = (PetscBool)(*rel <= HS_ATOL_STEP);
  }
  s->atol_id = id, s->atol_state = state, s->atol_fstate = fstate, s->atol_rel = *rel, s->atol_vouched = *ok;
  PetscCall(PetscInfo(s, "||F|| below the absolute tolerance: the Newton step from it %g, relative %g\n",
                      (double)dinf, (double)*rel));
  PetscFunctionReturn(0);
}

/*@ HsSolverConvergenceTest - SNESConvergedDefault, then the round-off level and the noise floor
    (file head), and the checkpoint poll (SIGTERM/SIGINT, periodic checkpoints: bvp/interface/checkpoint.c).
    bvp/ internal; the SNES convergence test of every Newton formulation. @*/
PetscErrorCode HsSolverConvergenceTest(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                       SNESConvergedReason *reason, void *ctx)
{
  HsSolver  s = ctx;
  Vec       X, F;
  PetscReal xinf, level;
  PetscInt  n;

  PetscFunctionBeginUser;
  PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, fnorm, reason, NULL));
  if (it == 0)
    s->res.at_floor = PETSC_FALSE, s->noise_it = -1, s->fnorm0 = fnorm, s->polish_it = -1, s->res.polish_iterations = 0,
    s->atol_vouched = PETSC_FALSE;
  s->snorm_prev = it > 0 ? s->snorm_last : 0, s->snorm_last = it > 0 ? snorm : 0;
  if (*reason == SNES_CONVERGED_FNORM_ABS && !s->interrupted && fnorm <= HS_VOUCH_FACTOR * HS_SNES_ATOL_DEFAULT) {
    /* below the default absolute tolerance: a solution? (a user's looser -snes_atol stops where asked: HsSolverVerify-
       Convergence then says "to the requested tolerance only") */
    PetscBool ok;
    PetscReal rel;
    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(SNESGetFunction(snes, &F, NULL, NULL));
    PetscCall(AtolStep(s, X, F, fnorm, it, &ok, &rel));
    if (!ok)
      *reason = SNES_CONVERGED_ITERATING; /* Newton goes on: the equations' own scale is far below it */
  }
  if (*reason == SNES_CONVERGED_FNORM_RELATIVE) { /* only at a level that does not depend on the start (file head) */
    PetscReal rtol;
    PetscCall(SNESGetTolerances(snes, NULL, &rtol, NULL, NULL, NULL));
    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(VecNorm(X, NORM_INFINITY, &xinf));
    PetscCall(VecGetSize(X, &n));
    if (rtol <= HS_SNES_RTOL_DEFAULT && fnorm > HS_SNES_ATOL_DEFAULT &&
        fnorm > s->roundoff * PETSC_MACHINE_EPSILON * PetscMax(1, xinf) * PetscSqrtReal((PetscReal)n))
      *reason = SNES_CONVERGED_ITERATING;
  }
  if (*reason == SNES_CONVERGED_ITERATING) {
    PetscBool stop;
    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(HsSolverCheckpointPoll(s, X, it, &stop));
    if (stop) {
      *reason = SNES_DIVERGED_FUNCTION_COUNT; /* ends SNESSolve; s->interrupted says why */
      PetscFunctionReturn(0);
    }
  }
  if (s->polish_it >= 0 && it > 0 && !s->interrupted) { /* polishing: the conserved quantity decides */
    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(PolishStep(s, X, it, fnorm, reason));
    s->fnorm_prev = fnorm;
    PetscFunctionReturn(0);
  }
  if (*reason == SNES_CONVERGED_FNORM_ABS && s->ops->conserved && it > 0) { /* conserving4: also below atol */
    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(PolishStart(s, X, it, fnorm, reason));
  }
  if (*reason != SNES_CONVERGED_ITERATING || it == 0) {
    s->fnorm_prev = fnorm;
    PetscFunctionReturn(0);
  }
  PetscCall(SNESGetSolution(snes, &X));
  PetscCall(VecNorm(X, NORM_INFINITY, &xinf));
  PetscCall(VecGetSize(X, &n));
  level = s->roundoff * PETSC_MACHINE_EPSILON * PetscMax(1, xinf) * PetscSqrtReal((PetscReal)n);
  if (fnorm <= level) { /* ends Newton; HsSolverVerifyConvergence vouches for it only row by row (RowwiseRoundoff) */
    PetscCall(RoundoffStop(s, X, fnorm, reason));
  } else if (Fresh(s, it, xnorm, snorm)) { /* the last estimate is this iterate's (file head), and the next's too if
                                            the step from here is small again */
    s->noise_it = it;
    if (AtFloor(s, fnorm, s->res.noise_floor)) {
      PetscCall(PetscInfo(s, "||F|| = %g, at the evaluation error %g estimated at most a small step back\n",
                          (double)fnorm, (double)s->res.noise_floor));
      s->res.at_floor = PETSC_TRUE;
      *reason         = SNES_CONVERGED_FNORM_ABS;
    }
  } else if (Near(s, fnorm, xinf) ||
             (fnorm > HS_NOISE_SLOW * s->fnorm_prev && !Known(s, xinf) && !Far(s, fnorm, xinf))) {
    PetscBool at;
    PetscCall(SNESGetFunction(snes, &F, NULL, NULL));
    PetscCall(HsSolverAtNoiseFloor(s, X, F, fnorm, it, &at, NULL));
    if (at)
      *reason = SNES_CONVERGED_FNORM_ABS;
  }
  if (*reason == SNES_CONVERGED_FNORM_ABS) /* at the round-off level or the floor */
    PetscCall(PolishStart(s, X, it, fnorm, reason));
  s->fnorm_prev = fnorm;
  PetscFunctionReturn(0);
}

/* *user: the options set one of SNES's tolerances (then the diagnosis may blame them). Not collective. */
static PetscErrorCode UserTolerances(HsSolver s, PetscBool *user)
{
  const char *prefix, *keys[3] = {"-snes_atol", "-snes_rtol", "-snes_stol"};

  PetscFunctionBeginUser;
  *user = PETSC_FALSE;
  PetscCall(SNESGetOptionsPrefix(s->snes, &prefix));
  for (int i = 0; i < 3 && !*user; i++)
    PetscCall(PetscOptionsHasName(NULL, prefix, keys[i], user));
  PetscFunctionReturn(0);
}

/* The verdict "converged to the requested tolerance only" (not converged); the caller sets the diagnosis. */
static PetscErrorCode ToleranceOnly(HsSolver s)
{
  PetscFunctionBeginUser;
  s->res.converged = PETSC_FALSE, s->res.tolerance_only = PETSC_TRUE;
  PetscCall(PetscStrncpy(s->res.status, "CONVERGED_TO_TOLERANCE_ONLY", sizeof s->res.status));
  PetscFunctionReturn(0);
}

/* The verdict where ||F|| is at the noise floor but X is not solved to it (NoiseStep): not converged. */
static PetscErrorCode FloorNotSolved(HsSolver s, PetscReal fnorm, PetscReal ratio)
{
  PetscFunctionBeginUser;
  PetscCall(ToleranceOnly(s));
  if (s->floor_singular > 0) {    /* NoiseStep: the equations do not determine X */
    s->singular_end = PETSC_TRUE; /* no homotopy from the direct guess: its theta does not touch the end conditions */
    s->res.tolerance_only = PETSC_FALSE; /* no tolerance would do: the fallbacks may try another start */
    PetscCall(PetscStrncpy(s->res.status, "SINGULAR_AT_NOISE_FLOOR", sizeof s->res.status));
    PetscCall(HsSolverSetDiagnosis(
        s, PETSC_TRUE,
        "not converged: ||F|| = %.3e is within the residual's evaluation error (noise floor %.3e), but the Jacobian is "
        "numerically singular there: the noise's own Newton step J^-1 e is %.3g times ||X|| or one of its fields "
        "(more than %g), so the equations do not determine the solution (an end condition over-determined in effect, "
        "e.g. a costate fixed at both ends whose rate is nearly zero, or a terminal coordinate that the initial data "
        "already fix: leave its terminal value free)",
        (double)fnorm, (double)s->res.noise_floor, (double)s->floor_singular, HS_NOISE_SINGULAR));
    PetscFunctionReturn(0);
  }
  PetscCall(HsSolverSetDiagnosis(
      s, PETSC_TRUE,
      "converged to the requested tolerance only: ||F|| = %.3e is within the residual's evaluation error (noise floor "
      "%.3e), but the Newton step from there is %.3g times the noise's own Newton step (more than %g): equations whose "
      "terms are far smaller than the others' are not solved (a problem in tiny units?); rescale it (e.g. the mass, "
      "the potential and 1/R by one factor)",
      (double)fnorm, (double)s->res.noise_floor, (double)ratio, (double)(HS_VOUCH_FACTOR * s->noise_factor)));
  PetscFunctionReturn(0);
}

/*@ HsSolverVerifyConvergence - after a Newton solve that SNES ended as converged, at its final iterate s->X with
    ||F|| = res.residual_norm (F = s->F, the residual there; it it, Newton's iteration count): keeps res.converged
    only if ||F|| <= HS_VOUCH_FACTOR max(HS_SNES_ATOL_DEFAULT, the round-off level,
    -hs_snes_noise nu) (the factor: the final residual, evaluated again, may land a little above the level the
    convergence test saw: 1.12 times it, shooting in the sanitized build), or every row at its own level
    (HS_ROWWISE_STRICT; one Jacobian evaluation at s->X),
    nu the evaluation error at s->X (estimated here if the solve holds no estimate of this iterate: two residual
    evaluations, the formulation's data at s->X again after them); else sets res.tolerance_only (file head). bvp/
    internal. Collective. @*/
PetscErrorCode HsSolverVerifyConvergence(HsSolver s, PetscInt it)
{
  PetscReal xinf, level, fnorm = s->res.residual_norm;
  PetscInt  n;
  PetscReal ratio = 0;
  PetscBool at, evaluated, user, noise, solved, unsolved = PETSC_FALSE;

  PetscFunctionBeginUser;
  s->res.tolerance_only = PETSC_FALSE, s->singular_end = PETSC_FALSE;
  if (!s->res.converged)
    PetscFunctionReturn(0);
  PetscCall(VecNorm(s->X, NORM_INFINITY, &xinf));
  PetscCall(VecGetSize(s->X, &n));
  level = HS_VOUCH_FACTOR *
          PetscMax(HS_SNES_ATOL_DEFAULT, PetscMax(s->roundoff, HS_ROUNDOFF_FACTOR_DEFAULT) * PETSC_MACHINE_EPSILON *
                                             PetscMax(1, xinf) * PetscSqrtReal((PetscReal)n));
  s->res.vouch_level = level;
  if (s->res.at_floor && s->noise_vouch) {
    PetscCall(NoiseIsNoise(s, s->X, s->F, &noise, &solved, &ratio, NULL));
    if (noise && solved)
      PetscFunctionReturn(0);
    unsolved = (PetscBool)(noise && !solved); /* noise, but X is not solved to it (NoiseStep) */
    s->res.at_floor = PETSC_FALSE;
    if (!noise)
      s->res.noise_floor = 0; /* the estimate was curvature */
  }
  if (fnorm <= level) { /* by the absolute tolerance, or the round-off level if every row is at its own */
    PetscBool ok = PETSC_TRUE;
    PetscReal rel;
    if (fnorm > HS_VOUCH_FACTOR * HS_SNES_ATOL_DEFAULT)
      PetscCall(RowwiseRoundoff(s, s->X, s->F, HS_VOUCH_FACTOR * PetscMax(s->roundoff, HS_ROUNDOFF_FACTOR_DEFAULT),
                                HS_ROWWISE_SLACK, &ok, NULL));
    else { /* the absolute tolerance: only if the Newton step from here is small (AtolStep) */
      PetscCall(AtolStep(s, s->X, s->F, fnorm, -1, &ok, &rel));
      if (!ok) {
        PetscCall(ToleranceOnly(s));
        PetscCall(HsSolverSetDiagnosis(
            s, PETSC_TRUE,
            "converged to the requested tolerance only: ||F|| = %.3e is below the absolute tolerance, but the Newton "
            "step from there is %.3g of the unknowns' size (more than %g): the equations' own terms are that small "
            "(a problem in tiny units?); rescale it (e.g. the mass, the potential and 1/R by one factor)",
            (double)fnorm, (double)rel, HS_ATOL_STEP));
        PetscFunctionReturn(0);
      }
    }
    if (ok)
      PetscFunctionReturn(0);
    s->res.vouch_level = level = HS_VOUCH_FACTOR * HS_SNES_ATOL_DEFAULT; /* the round-off level does not vouch */
  } else { /* above the global level: every row at its own level without the slack (HS_ROWWISE_STRICT) */
    PetscBool ok;
    PetscReal lnorm;
    PetscCall(RowwiseRoundoff(s, s->X, s->F, HS_VOUCH_FACTOR * PetscMax(s->roundoff, HS_ROUNDOFF_FACTOR_DEFAULT),
                              HS_ROWWISE_STRICT, &ok, &lnorm));
    if (ok) {
      s->res.vouch_level = PetscMax(level, lnorm);
      PetscFunctionReturn(0);
    }
  }
  if (s->noise_factor > 0 && s->noise_vouch && !unsolved) { /* the evaluation error here: the floor it may end at */
    PetscBool keep = s->res.at_floor;
    PetscCall(HsSolverAtNoiseFloor(s, s->X, s->F, fnorm, it, &at, &evaluated));
    s->res.at_floor = keep;
    if (evaluated)
      PetscCall(SNESComputeFunction(s->snes, s->X, s->F));
    s->res.vouch_level = level = PetscMax(level, HS_VOUCH_FACTOR * s->noise_factor * s->res.noise_floor);
    if (fnorm <= level) {
      PetscCall(NoiseIsNoise(s, s->X, s->F, &noise, &solved, &ratio, NULL));
      if (noise && solved)
        PetscFunctionReturn(0);
      unsolved                 = (PetscBool)(noise && !solved);
      s->res.vouch_level = level = HS_VOUCH_FACTOR * HS_SNES_ATOL_DEFAULT;
    }
  }
  if (unsolved) {
    PetscCall(FloorNotSolved(s, fnorm, ratio));
    PetscFunctionReturn(0);
  }
  PetscCall(ToleranceOnly(s));
  PetscCall(UserTolerances(s, &user));
  PetscCall(
      HsSolverSetDiagnosis(s, PETSC_TRUE,
                           "converged to the requested tolerance only: SNES stopped (%s) at ||F|| = %.3e, %.3g times "
                           "the %.3e this solve can vouch for (the default tolerances, the round-off level or "
                           "-hs_snes_noise times the residual's evaluation error); %s",
                           SNESConvergedReasons[s->res.reason], (double)fnorm, (double)(fnorm / level), (double)level,
                           !s->noise_vouch ? "the shooting march's tolerances (-hs_step_atol, -hs_step_stol, "
                                             "-hs_step_max_it) are looser than their defaults: leave them there"
                           : user ? "tighten -snes_atol, -snes_rtol, -snes_stol or leave them at their defaults"
                                  : "Newton stalled there with the default tolerances: the residual is not at its "
                                    "own round-off (a badly scaled equation, e.g. a constraint multiplied by a tiny "
                                    "factor, or a singular Jacobian); rescale the problem or try -hs_strategy auto"));
  PetscFunctionReturn(0);
}
