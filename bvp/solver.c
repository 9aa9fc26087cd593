/* hamshoot: HsSolver lifecycle, options, solve and diagnostics (DESIGN.md sections 3 and 5). */
#include "hsbvpimpl.h"

#include <stdio.h>
#include <string.h>

PetscErrorCode HsSolverCreate(MPI_Comm comm, HsSolver *solver)
{
  HsSolver s;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&s));
  s->comm              = comm;
  s->dg_tol            = HS_DG_TOL_DEFAULT;
  s->shoot.step_atol   = 1e-14;
  s->shoot.step_max_it = 25;
  s->shoot.step_stol   = 1e-12;
  s->roundoff          = 100;
  s->shoot.max_growth  = 1e8; /* 1/sqrt(eps): beyond it the end data keep fewer than 8 digits */
  PetscCall(SNESCreate(comm, &s->snes));
  *solver = s;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetProblem(HsSolver s, HsProblem *prob)
{
  PetscFunctionBeginUser;
  PetscCheck(!s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverSetProblem() after HsSolverSetUp()");
  s->prob = prob;
  if (s->N == 0)
    s->N = prob->N;
  if (!s->state_scheme[0])
    PetscCall(HsSolverSetScheme(s, "conserving"));
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetNumIntervals(HsSolver s, PetscInt N)
{
  PetscFunctionBeginUser;
  PetscCheck(!s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverSetNumIntervals() after HsSolverSetUp()");
  PetscCheck(N >= 2, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-N %" PetscInt_FMT ": the number of intervals must be at least 2", N);
  s->N = N;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverGetNumIntervals(HsSolver s, PetscInt *N)
{
  PetscFunctionBeginUser;
  *N = s->N;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetSchemes(HsSolver s, const char *state_scheme, const char *costate_scheme)
{
  PetscFunctionBeginUser;
  PetscCheck(!s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverSetSchemes() after HsSolverSetUp()");
  if (state_scheme) {
    PetscCheck(HsStateSchemeFind(state_scheme), s->comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown state scheme '%s' (-hs_state_scheme: %s)", state_scheme, HsStateSchemeListNames());
    PetscCall(PetscStrncpy(s->state_scheme, state_scheme, sizeof(s->state_scheme)));
  }
  if (costate_scheme) {
    PetscCheck(HsCostateSchemeFind(costate_scheme), s->comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown costate scheme '%s' (-hs_costate_scheme: %s)", costate_scheme, HsCostateSchemeListNames());
    PetscCall(PetscStrncpy(s->costate_scheme, costate_scheme, sizeof(s->costate_scheme)));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverGetSchemes(HsSolver s, const char **state_scheme, const char **costate_scheme)
{
  PetscFunctionBeginUser;
  if (state_scheme)
    *state_scheme = s->state_scheme;
  if (costate_scheme)
    *costate_scheme = s->costate_scheme;
  PetscFunctionReturn(0);
}

/* conserving: the problem's energy-consistent pair (greenspan + conserving_1dof
 * for the pendulum, gonzalez + conserving otherwise); direct: midpoint + trapezoidal. */
PetscErrorCode HsSolverSetScheme(HsSolver s, const char *scheme)
{
  PetscBool cons, direct;

  PetscFunctionBeginUser;
  PetscCheck(s->prob, s->comm, PETSC_ERR_ORDER, "HsSolverSetScheme() needs the problem first");
  PetscCall(PetscStrcmp(scheme, "conserving", &cons));
  PetscCall(PetscStrcmp(scheme, "direct", &direct));
  PetscCheck(cons || direct, s->comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "unknown -hs_scheme '%s' (choose conserving or direct)", scheme);
  if (cons)
    PetscCall(HsSolverSetSchemes(s, s->prob->default_state_scheme, s->prob->default_costate_scheme));
  else
    PetscCall(HsSolverSetSchemes(s, "midpoint", "trapezoidal"));
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetDGTolerance(HsSolver s, PetscReal tol)
{
  PetscFunctionBeginUser;
  PetscCheck(tol >= 0 && tol < 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_dg_tol %g must lie in [0, 1)", (double)tol);
  s->dg_tol = tol;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetBVPType(HsSolver s, const char *type)
{
  PetscBool tr, sh;

  PetscFunctionBeginUser;
  PetscCheck(!s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverSetBVPType() after HsSolverSetUp()");
  PetscCall(PetscStrcmp(type, "transcription", &tr));
  PetscCall(PetscStrcmp(type, "shooting", &sh));
  PetscCheck(tr || sh, s->comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "unknown -hs_bvp_type '%s' (choose transcription or shooting)", type);
  s->bvp_type = tr ? HS_BVP_TRANSCRIPTION : HS_BVP_SHOOTING;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetNumSegments(HsSolver s, PetscInt M)
{
  PetscFunctionBeginUser;
  PetscCheck(!s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverSetNumSegments() after HsSolverSetUp()");
  PetscCheck(M >= 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_shoot_segments %" PetscInt_FMT ": need at least 1 segment",
             M);
  s->shoot.M = M;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetWarmStart(HsSolver s, PetscBool warm)
{
  PetscFunctionBeginUser;
  s->keep_guess = warm;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetQuiet(HsSolver s, PetscBool quiet)
{
  PetscFunctionBeginUser;
  s->quiet = quiet;
  PetscFunctionReturn(0);
}

/* A string option with a fixed set of values; *idx is the default on entry and
 * the chosen index on exit; an unknown value is an error that lists the choices.
 * Must be called between PetscOptionsBegin/End. */
static PetscErrorCode OptionsChoice(PetscOptionItems *PetscOptionsObject, HsSolver s, const char *key, const char *help,
                                    const char *const *choices, PetscInt n, PetscInt *idx)
{
  char      val[64], list[256] = "";
  PetscBool flg, eq;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString(key, help, "", choices[*idx], val, sizeof val, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscStrcmp(val, choices[i], &eq));
    if (eq) {
      *idx = i;
      PetscFunctionReturn(0);
    }
    PetscCall(PetscStrlcat(list, i ? " or " : "", sizeof list));
    PetscCall(PetscStrlcat(list, choices[i], sizeof list));
  }
  SETERRQ(s->comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown %s '%s' (choose %s)", key, val, list);
}

PetscErrorCode HsSolverSetFromOptions(HsSolver s)
{
  char      buf[64], ss[64], cs[64], bvp[64] = "transcription";
  PetscInt  N   = s->N;
  PetscReal tol = s->dg_tol;
  PetscBool flg, flg2, quiet = s->quiet;

  PetscFunctionBeginUser;
  PetscCheck(s->prob, s->comm, PETSC_ERR_ORDER, "HsSolverSetFromOptions() needs the problem first");
  PetscOptionsBegin(s->comm, NULL, "hamshoot solver options", "HsSolver");
  PetscCall(PetscOptionsInt("-N", "number of uniform time intervals", "HsSolverSetNumIntervals", N, &N, &flg));
  if (flg)
    PetscCall(HsSolverSetNumIntervals(s, N));
  PetscCall(PetscOptionsString(
      "-hs_scheme", "conserving (energy-consistent states + conserving costates) or direct (midpoint + trapezoidal)",
      "HsSolverSetScheme", "conserving", buf, sizeof buf, &flg));
  if (flg)
    PetscCall(HsSolverSetScheme(s, buf));
  PetscCall(PetscOptionsString("-hs_state_scheme", "state scheme: midpoint greenspan gonzalez (overrides -hs_scheme)",
                               "HsSolverSetSchemes", s->state_scheme, ss, sizeof ss, &flg));
  PetscCall(PetscOptionsString("-hs_costate_scheme",
                               "costate scheme: conserving conserving_1dof trapezoidal kkt (overrides -hs_scheme)",
                               "HsSolverSetSchemes", s->costate_scheme, cs, sizeof cs, &flg2));
  PetscCall(HsSolverSetSchemes(s, flg ? ss : NULL, flg2 ? cs : NULL));
  PetscCall(PetscOptionsString("-hs_bvp_type", "transcription or shooting", "HsSolverSetBVPType", bvp, bvp, sizeof bvp,
                               NULL));
  {
    PetscInt M = s->shoot.M, nk = (PetscInt)(sizeof(s->shoot.user_knots) / sizeof(PetscInt)), it = s->shoot.step_max_it;
    PetscReal at = s->shoot.step_atol, mg = s->shoot.max_growth;
    PetscCall(PetscOptionsInt("-hs_shoot_segments",
                              "number of shooting segments M (1 = single shooting, N = one interval each)",
                              "HsSolverSetNumSegments", M, &M, &flg));
    if (flg)
      PetscCall(HsSolverSetNumSegments(s, M));
    PetscCall(PetscOptionsIntArray(
        "-hs_shoot_knots", "interior segment knots k_1,...,k_{M-1} (uneven split; overrides -hs_shoot_segments)", "",
        s->shoot.user_knots, &nk, &flg));
    if (flg)
      s->shoot.nuser = nk;
    PetscCall(PetscOptionsReal("-hs_step_atol",
                               "local (per-step) Newton tolerance on the h-scaled step residual, relative to 1+|y|", "",
                               at, &at, &flg));
    PetscCheck(at > 0 && at < 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_step_atol %g must lie in (0, 1)", (double)at);
    s->shoot.step_atol = at;
    at                 = s->shoot.step_stol;
    PetscCall(PetscOptionsReal("-hs_step_stol",
                               "local Newton also stops when its update is below this, relative to 1+|y| (quadratic "
                               "convergence: the iterate is then at round-off)",
                               "", at, &at, &flg));
    PetscCheck(at > 0 && at < 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_step_stol %g must lie in (0, 1)", (double)at);
    s->shoot.step_stol = at;
    PetscCall(PetscOptionsInt("-hs_step_max_it", "local Newton iterations per step", "", it, &it, &flg));
    PetscCheck(it >= 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_step_max_it %" PetscInt_FMT " must be at least 1", it);
    s->shoot.step_max_it = it;
    {
      static const char *const ksps[] = {"direct", "rankblock"}, *const inits[] = {"linear", "transcription"};
      PetscInt k = s->shoot.rankblock, ini = s->shoot.init_transcription;
      PetscCall(OptionsChoice(
          PetscOptionsObject, s, "-hs_shoot_ksp",
          "shooting linear solver: direct (MUMPS LU of the whole matrix) or rankblock (GMRES, exact LU per rank)", ksps,
          2, &k));
      PetscCall(
          OptionsChoice(PetscOptionsObject, s, "-hs_shoot_init",
                        "shooting initial guess: linear (boundary states interpolated, lambda = 0) or transcription",
                        inits, 2, &ini));
      s->shoot.rankblock = (PetscBool)k, s->shoot.init_transcription = (PetscBool)ini;
    }
    PetscCall(PetscOptionsBool(
        "-hs_shoot_mf", "shooting: apply the exact Jacobian matrix-free (no global matrix; unpreconditioned GMRES)", "",
        s->shoot.mf, &s->shoot.mf, NULL));
    PetscCall(PetscOptionsReal(
        "-hs_shoot_max_growth",
        "largest sensitivity growth within a segment before the solve stops and asks for more segments", "", mg, &mg,
        &flg));
    PetscCheck(mg > 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_shoot_max_growth %g must exceed 1", (double)mg);
    s->shoot.max_growth = mg;
  }
  PetscCall(PetscOptionsReal("-hs_dg_tol", "relative step below which divided differences use their limit",
                             "HsSolverSetDGTolerance", tol, &tol, &flg));
  if (flg)
    PetscCall(HsSolverSetDGTolerance(s, tol));
  PetscCall(PetscOptionsReal(
      "-hs_snes_roundoff", "Newton also stops at ||F|| <= c eps max(1,|X|_inf) sqrt(n), the residual's round-off level",
      "", s->roundoff, &s->roundoff, NULL));
  PetscCheck(s->roundoff >= 0, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_snes_roundoff %g must be >= 0",
             (double)s->roundoff);
  PetscCall(PetscOptionsBool("-quiet", "no per-iteration progress lines", "HsSolverSetQuiet", quiet, &quiet, NULL));
  PetscCall(HsSolverSetQuiet(s, quiet));
  {
    char path[PETSC_MAX_PATH_LEN];
    PetscCall(PetscOptionsString("-hs_init",
                                 "initial guess from a trajectory.csv written by -o (any N: interpolated in time; "
                                 "default: boundary states interpolated, lambda = 0)",
                                 "HsSolverSetInitialGuessFromFile", "", path, sizeof path, &flg));
    if (flg) {
      PetscCheck(path[0], s->comm, PETSC_ERR_ARG_WRONG, "-hs_init needs a file name");
      PetscCall(HsSolverSetInitialGuessFromFile(s, path));
    }
  }
  PetscOptionsEnd();
  PetscCall(HsSolverSetBVPType(s, bvp));
  PetscFunctionReturn(0);
}

/* One progress line per Newton iteration: residual norm, linear iterations, elapsed time. */
static PetscErrorCode Monitor(SNES snes, PetscInt it, PetscReal fnorm, void *ctx)
{
  HsSolver s = ctx;
  PetscInt lits;

  PetscFunctionBeginUser;
  PetscCall(SNESGetLinearSolveIterations(snes, &lits));
  PetscCall(PetscPrintf(s->comm, "  Newton %2" PetscInt_FMT "  |F| = %.3e  linear its %" PetscInt_FMT "  %.2f s\n", it,
                        (double)fnorm, lits, MPI_Wtime() - s->t_start));
  PetscFunctionReturn(0);
}

/* SNESConvergedDefault, plus convergence once ||F|| reaches its round-off
 * level c eps max(1, ||X||_inf) sqrt(n) (c = -hs_snes_roundoff, default 100):
 * problems whose unknowns are large (costates of 1e3, say) cannot reach an
 * absolute 1e-12, and further Newton steps would only stir round-off. */
static PetscErrorCode Converged(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                SNESConvergedReason *reason, void *ctx)
{
  HsSolver  s = ctx;
  Vec       X;
  PetscReal xinf, level, floor;
  PetscInt  n;

  PetscFunctionBeginUser;
  PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, fnorm, reason, NULL));
  if (it == 0)
    s->fnorm0 = fnorm, s->stalls = 0;
  if (*reason != SNES_CONVERGED_ITERATING || it == 0) {
    s->fnorm_prev = fnorm;
    PetscFunctionReturn(0);
  }
  PetscCall(SNESGetSolution(snes, &X));
  PetscCall(VecNorm(X, NORM_INFINITY, &xinf));
  PetscCall(VecGetSize(X, &n));
  level = s->roundoff * PETSC_MACHINE_EPSILON * PetscMax(1, xinf) * PetscSqrtReal((PetscReal)n);
  if (fnorm <= level)
    *reason = SNES_CONVERGED_FNORM_ABS;
  /* Noise floor: Newton converges quadratically until the residual's own
   * evaluation error (divided differences, problem-file expressions) is
   * reached; once ||F|| <= 1e-8 ||F_0|| decreases by less than 10% twice in a row, further
   * steps only stir round-off. A shooting residual is the end of a march that
   * amplifies round-off by up to its sensitivity growth G (the largest
   * |d(march)/dz|): below G times the round-off level the same stagnation test
   * applies (from a good initial guess ||F_0|| itself can be that small: the
   * crane at N = 320 with 32 segments, G = 6e4, stays at |F| = 5e-7). */
  floor = 1e-8 * PetscMax(1, s->fnorm0);
  if (s->bvp_type == HS_BVP_SHOOTING)
    floor = PetscMax(floor, level * PetscMax(1, s->shoot.max_growth_seen));
  s->stalls = (fnorm <= floor && fnorm > 0.9 * s->fnorm_prev) ? s->stalls + 1 : 0;
  if (s->stalls >= 2)
    *reason = SNES_CONVERGED_FNORM_ABS;
  s->fnorm_prev = fnorm;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetUp(HsSolver s)
{
  char msg[256];
  int  st;
  KSP  ksp;
  PC   pc;

  PetscFunctionBeginUser;
  if (s->setup)
    PetscFunctionReturn(0);
  PetscCheck(s->prob, s->comm, PETSC_ERR_ORDER, "HsSolverSetUp() needs a problem");
  for (int i = 0; i < 2 * s->prob->n; i++)
    if (!s->prob->xT_fixed[i])
      s->has_free = PETSC_TRUE;
  st = HsDiscCreate(s->prob, s->state_scheme, s->costate_scheme, (int)s->N, s->dg_tol, &s->disc, msg, sizeof msg);
  PetscCheck(st == 0, s->comm, PETSC_ERR_ARG_WRONG, "%s", msg);
  if (s->bvp_type == HS_BVP_TRANSCRIPTION) {
    PetscCall(HsTranscriptionSetUp(s));
    PetscCall(PetscObjectReference((PetscObject)s->X));
    s->Xnodes = s->X;
  } else
    PetscCall(HsShootSetUp(s));
  /* Defaults a user overrides with -snes_* / -ksp_* / -pc_*: Newton to
   * round-off (conservation is only as good as the solve) and a parallel
   * sparse direct solve (MUMPS) of the block-banded Jacobian. */
  PetscCall(SNESSetTolerances(s->snes, 1e-12, 1e-14, 1e-14, 50, 10000));
  PetscCall(SNESSetConvergenceTest(s->snes, Converged, s, NULL));
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  if (s->bvp_type == HS_BVP_SHOOTING && s->shoot.mf) {
    PetscCall(KSPSetType(ksp, KSPGMRES));
    PetscCall(KSPGMRESSetRestart(ksp, 200));
    PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-300, PETSC_DEFAULT, 10000));
    PetscCall(PCSetType(pc, PCNONE));
  } else if (s->bvp_type == HS_BVP_SHOOTING && s->shoot.rankblock) {
    /* Krylov with the rank-block preconditioner: an exact (MUMPS) LU of each
     * rank's contiguous block of segments. The blocks are coupled only across
     * the P-1 rank boundaries, through 2 dim unknowns each, so the
     * preconditioned operator is I + (rank <= 2 dim (P-1)) and GMRES converges
     * in at most 2 dim (P-1) + 1 iterations, whatever M and N. */
    PetscMPIInt size;
    PetscBool   set;
    PetscCallMPI(MPI_Comm_size(s->comm, &size));
    PetscCall(KSPSetType(ksp, KSPGMRES));
    PetscCall(KSPGMRESSetRestart(ksp, 4 * s->prob->n * (size - 1) + 2));
    PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-300, PETSC_DEFAULT, PETSC_DEFAULT));
    PetscCall(PCSetType(pc, PCBJACOBI));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-sub_pc_type", &set));
    if (!set)
      PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_type", "lu"));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(PetscOptionsHasName(NULL, NULL, "-sub_pc_factor_mat_solver_type", &set));
    if (!set)
      PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_factor_mat_solver_type", "mumps")); /* pivoting LU */
#endif
  } else {
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(PCSetType(pc, PCLU));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
#endif
  }
#if defined(PETSC_HAVE_MUMPS)
  {
    /* MUMPS' default relative pivot threshold CNTL(1) = 0.01 accepted pivots on
     * the shooting matrices of unstable problems (saddle) that left a solve
     * with residual O(1) (measured); 1.0 is LAPACK-style partial pivoting. */
    PetscBool set;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_mumps_cntl_1", &set));
    if (!set)
      PetscCall(PetscOptionsSetValue(NULL, "-mat_mumps_cntl_1", "1.0"));
    /* pivoting adds fill beyond MUMPS' estimate (INFOG(1) = -9 seen on kepler, M = N = 160) */
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_mumps_icntl_14", &set));
    if (!set)
      PetscCall(PetscOptionsSetValue(NULL, "-mat_mumps_icntl_14", "200"));
  }
#endif
  if (s->bvp_type == HS_BVP_SHOOTING) {
    /* The secant (l2) line search copes with marches that fail at a trial
     * point (a domain error) better than backtracking does. */
    SNESLineSearch ls;
    PetscCall(SNESGetLineSearch(s->snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHL2));
  }
  PetscCall(SNESSetFromOptions(s->snes));
  if (!s->quiet)
    PetscCall(SNESMonitorSet(s->snes, Monitor, s, NULL));
  s->setup = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* -hs_shoot_init transcription: z_s = (x_{k_s}, lambda_{k_s+1/2}) taken from
 * a transcription solve of the same discrete problem (its M = N limit). */
static PetscErrorCode ShootInitFromTranscription(HsSolver s)
{
  HsSolver   t;
  HsResults  r;
  Vec        Xt;
  IS         from;
  VecScatter sc;
  PetscInt  *idx, w = 4 * s->prob->n, n = 0;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(s->comm, &t));
  PetscCall(HsSolverSetProblem(t, s->prob));
  PetscCall(HsSolverSetNumIntervals(t, s->N));
  PetscCall(HsSolverSetSchemes(t, s->state_scheme, s->costate_scheme));
  PetscCall(HsSolverSetDGTolerance(t, s->dg_tol));
  PetscCall(HsSolverSetQuiet(t, PETSC_TRUE));
  PetscCall(SNESSetOptionsPrefix(t->snes, "hs_init_")); /* not the shooting solve's -snes_* options */
  if (s->guess)
    PetscCall(HsSolverSetInitialGuess(t, s->guess_N, s->guess));
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, &r));
  PetscCheck(r.converged, s->comm, PETSC_ERR_NOT_CONVERGED,
             "-hs_shoot_init transcription: the transcription solve did not converge (%s)",
             SNESConvergedReasons[r.reason]);
  PetscCall(HsSolverGetSolution(t, &Xt));
  PetscCall(PetscMalloc1((s->shoot.s1 - s->shoot.s0) * w, &idx));
  for (PetscInt seg = s->shoot.s0; seg < s->shoot.s1; seg++)
    for (PetscInt c = 0; c < w; c++)
      idx[n++] = s->shoot.knots[seg] * w + c;
  PetscCall(ISCreateGeneral(s->comm, n, idx, PETSC_OWN_POINTER, &from));
  PetscCall(VecScatterCreate(Xt, from, s->X, NULL, &sc));
  PetscCall(VecScatterBegin(sc, Xt, s->X, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, Xt, s->X, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(ISDestroy(&from));
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/* MUMPS sizes its workspace from an estimate made before pivoting; delayed
 * pivots (threshold CNTL(1) = 1.0, and badly scaled problems such as ncar with
 * beta = 1e-9) can exceed it, and the factorization then stops with INFOG(1) =
 * -8, -9, -11, -12 or -14 ("work array too small"). That is not a property of
 * the problem: double ICNTL(14), the percentage by which the estimate is
 * relaxed (the option -mat_mumps_icntl_14), and solve again (at most
 * HS_MUMPS_RETRIES times). *retry says
 * whether the caller should solve again. Collective. */
#define HS_MUMPS_RETRIES 4
static PetscErrorCode MumpsWorkspaceRetry(HsSolver s, PetscBool *retry)
{
#if defined(PETSC_HAVE_MUMPS)
  KSP           ksp;
  PC            pc;
  Mat           F;
  PetscBool     lu;
  MatSolverType type;
  PetscInt      info, icntl;
#endif

  PetscFunctionBeginUser;
  *retry = PETSC_FALSE;
#if defined(PETSC_HAVE_MUMPS)
  if (s->res.reason != SNES_DIVERGED_LINEAR_SOLVE)
    PetscFunctionReturn(0);
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &lu, PCLU, PCCHOLESKY, ""));
  if (!lu)
    PetscFunctionReturn(0);
  PetscCall(PCFactorGetMatSolverType(pc, &type));
  if (!type || strcmp(type, MATSOLVERMUMPS))
    PetscFunctionReturn(0);
  PetscCall(PCFactorGetMatrix(pc, &F));
  PetscCall(MatMumpsGetInfog(F, 1, &info));
  if (info != -8 && info != -9 && info != -11 && info != -12 && info != -14)
    PetscFunctionReturn(0);
  PetscCall(MatMumpsGetIcntl(F, 14, &icntl));
  PetscCall(PetscInfo(s->snes,
                      "MUMPS INFOG(1) = %" PetscInt_FMT ": raising ICNTL(14) from %" PetscInt_FMT " to %" PetscInt_FMT
                      " and solving again\n",
                      info, icntl, 2 * icntl + 100));
  { /* ICNTL(14) is read at the analysis: set the option and redo the factorization from scratch */
    char v[32];
    snprintf(v, sizeof v, "%d", (int)(2 * icntl + 100));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_mumps_icntl_14", v));
    PetscCall(PCReset(pc));
  }
  s->res.mumps_retries++;
  *retry = PETSC_TRUE;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSolve(HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverSetUp(s));
  s->t_start               = MPI_Wtime();
  s->shoot.fail_msg[0]     = 0;
  s->shoot.growth_failure  = PETSC_FALSE;
  s->shoot.max_growth_seen = 0;
  if (s->solved) {
    /* the problem's parameters may have changed since the last solve (continuation):
     * rebuild the serial discretization, whose set-up reads B and R */
    char msg[256];
    int  st;
    HsDiscDestroy(&s->disc);
    st = HsDiscCreate(s->prob, s->state_scheme, s->costate_scheme, (int)s->N, s->dg_tol, &s->disc, msg, sizeof msg);
    PetscCheck(st == 0, s->comm, PETSC_ERR_ARG_WRONG, "%s", msg);
  }
  if (s->keep_guess && s->solved) {
    /* warm start: the previous solution is the initial guess (continuation) */
  } else if (s->guess && !(s->bvp_type == HS_BVP_SHOOTING && s->shoot.init_transcription))
    PetscCall(HsGuessFill(s, s->X));
  else if (s->bvp_type == HS_BVP_TRANSCRIPTION)
    PetscCall(HsTranscriptionInitialGuess(s, s->X));
  else {
    PetscCall(HsShootInitialGuess(s, s->X));
    if (s->shoot.init_transcription)
      PetscCall(ShootInitFromTranscription(s));
  }
  s->res.mumps_retries = 0;
  for (;;) {
    PetscBool retry;
    PetscCall(SNESSolve(s->snes, NULL, s->X));
    PetscCall(SNESGetConvergedReason(s->snes, &s->res.reason));
    if (s->res.mumps_retries >= HS_MUMPS_RETRIES)
      break;
    PetscCall(MumpsWorkspaceRetry(s, &retry));
    if (!retry)
      break;
  }
  PetscCall(SNESGetIterationNumber(s->snes, &s->res.newton_iterations));
  PetscCall(SNESGetLinearSolveIterations(s->snes, &s->res.ksp_iterations));
  if (!s->shoot.growth_failure)
    s->shoot.fail_msg[0] = 0; /* keep only failures of the final evaluation */
  PetscCall(SNESComputeFunction(s->snes, s->X, s->F));
  PetscCall(VecNorm(s->F, NORM_2, &s->res.residual_norm));
  s->res.converged = (PetscBool)(s->res.reason > 0 && !PetscIsInfOrNanReal(s->res.residual_norm));
  if (s->bvp_type == HS_BVP_SHOOTING) {
    PetscMPIInt rank, who;
    PetscCall(HsShootPackNodes(s)); /* the last function evaluation marched the final z */
    /* a step failure message lives on the rank where it happened: share the lowest rank's */
    PetscCallMPI(MPI_Comm_rank(s->comm, &rank));
    who = s->shoot.fail_msg[0] ? rank : PETSC_MPI_INT_MAX;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, s->comm));
    if (who != PETSC_MPI_INT_MAX)
      PetscCallMPI(MPI_Bcast(s->shoot.fail_msg, sizeof s->shoot.fail_msg, MPI_CHAR, who, s->comm));
  }
  PetscCall(HsSolverComputeDiagnostics(s));
  s->res.wall_time_s = MPI_Wtime() - s->t_start;
  PetscCallMPI(MPI_Bcast(&s->res.wall_time_s, 1, MPIU_REAL, 0, s->comm));
  s->solved = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* H^d per interval, J^d and E_k - W_k per node, computed on rank 0 from the
 * gathered solution in a fixed order, so that the diagnostics do not depend
 * on the number of ranks beyond the solution's own round-off. */
PetscErrorCode HsSolverComputeDiagnostics(HsSolver s)
{
  Vec                X0;
  const PetscScalar *x;
  PetscInt           len, k, N = s->N, dim = 2 * s->prob->n;
  PetscReal          buf[8] = {0};
  int                st     = 0;

  PetscFunctionBeginUser;
  /* kept in s->X0 for HsSolverWriteOutput: one gather per solve */
  PetscCall(VecDestroy(&s->X0));
  PetscCall(HsGatherToZero(s->Xnodes, &s->X0));
  X0 = s->X0;
  PetscCall(VecGetLocalSize(X0, &len));
  if (len) {
    PetscReal W = 0, E, Jd = 0, Hmin = PETSC_MAX_REAL, Hmax = -PETSC_MAX_REAL, Hsum = 0, EWmin = PETSC_MAX_REAL,
              EWmax = -PETSC_MAX_REAL, bal = 0;
    PetscCall(PetscFree2(s->H, s->EW));
    PetscCall(PetscMalloc2(N, &s->H, N + 1, &s->EW));
    PetscCall(VecGetArrayRead(X0, &x));
    for (k = 0; k <= N && !st; k++) {
      const PetscScalar *xk = x + k * 2 * dim, *lk = xk + dim, *xk1 = xk + 2 * dim;
      st       = HsDiscEnergy(s->disc, xk, &E);
      s->EW[k] = E - W;
      EWmin = PetscMin(EWmin, s->EW[k]), EWmax = PetscMax(EWmax, s->EW[k]);
      if (k < N && !st) {
        PetscReal L, w;
        st = HsDiscHamiltonian(s->disc, (int)k, xk, xk1, lk, &s->H[k]);
        if (!st)
          st = HsDiscRunningCost(s->disc, (int)k, xk, xk1, lk, &L);
        HsDiscWork(s->disc, xk, xk1, lk, &w);
        W += w;
        Jd += HsDiscGetStep(s->disc) * L;
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
      PetscReal phi;
      st = HsDiscTerminalCost(s->disc, x + N * 2 * dim, &phi);
      Jd += phi; /* J^d = h sum L^d + phi(x_N) */
    }
    PetscCall(VecRestoreArrayRead(X0, &x));
    buf[0] = Jd, buf[1] = Hsum / N, buf[2] = Hmin, buf[3] = Hmax, buf[4] = EWmax - EWmin, buf[5] = st ? 1 : 0;
    buf[6] = bal;
    if (st)
      buf[0] = buf[1] = buf[2] = buf[3] = buf[4] = buf[6] = NAN; /* undefined: reported as null */
  }
  PetscCallMPI(MPI_Bcast(buf, 8, MPIU_REAL, 0, s->comm));
  s->res.J = buf[0], s->res.H_mean = buf[1], s->res.H_min = buf[2], s->res.H_max = buf[3];
  s->res.H_spread = buf[3] - buf[2], s->res.energy_work_spread = buf[4], s->res.H_balance = buf[6];
  s->res.autonomous = (PetscBool) !(s->prob->ell.f && s->prob->ell.time_dependent);
  if (buf[5] != 0)
    s->res.converged = PETSC_FALSE; /* diagnostics undefined: solution outside the domain */
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverGetResults(HsSolver s, HsResults *res)
{
  PetscFunctionBeginUser;
  *res = s->res;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverGetIterate(HsSolver s, Vec *X)
{
  PetscFunctionBeginUser;
  PetscCheck(s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverGetIterate() needs HsSolverSetUp() first");
  *X = s->X;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverSetIterate(HsSolver s, Vec X)
{
  PetscFunctionBeginUser;
  PetscCheck(s->setup, s->comm, PETSC_ERR_ORDER, "HsSolverSetIterate() needs HsSolverSetUp() first");
  PetscCall(VecCopy(X, s->X));
  if (s->bvp_type == HS_BVP_SHOOTING) /* the stored marches no longer belong to these starts */
    for (PetscInt t = s->shoot.s0; t < s->shoot.s1; t++)
      s->shoot.marched[t - s->shoot.s0] = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverGetSolution(HsSolver s, Vec *X)
{
  PetscFunctionBeginUser;
  *X = s->Xnodes;
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverView(HsSolver s, PetscViewer viewer)
{
  PetscMPIInt size;
  HsResults  *r = &s->res;

  PetscFunctionBeginUser;
  if (!viewer)
    viewer = PETSC_VIEWER_STDOUT_(s->comm);
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  char T[32];

  char bvp[64];

  snprintf(T, sizeof T, "%.6g", (double)s->prob->T); /* PETSc's %g would print "3." */
  if (s->bvp_type == HS_BVP_SHOOTING)
    snprintf(bvp, sizeof bvp, "multiple shooting with %d segment%s", (int)s->shoot.M, s->shoot.M > 1 ? "s" : "");
  else
    snprintf(bvp, sizeof bvp, "transcription");
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "hamshoot: %s, N = %" PetscInt_FMT ", T = %s, %s states + %s costates, %s, %d rank%s\n", s->prob->name,
      s->N, T, s->state_scheme, s->costate_scheme, bvp, size, size > 1 ? "s" : ""));
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  converged          %s (%s) after %" PetscInt_FMT " Newton iterations, |F| = %.3e\n",
      r->converged ? "yes" : "NO", SNESConvergedReasons[r->reason], r->newton_iterations, (double)r->residual_norm));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  J^d                %.10g   (discrete cost h sum L^d)\n", (double)r->J));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  H^d mean           %.10g   (discrete Hamiltonian, mean over intervals)\n",
                                   (double)r->H_mean));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  H^d spread         %.3e   (max - min over intervals; %s)\n",
                                   (double)r->H_spread,
                                   r->autonomous ? "round-off for conserving" : "ell depends on t: see H^d balance"));
  if (!r->autonomous)
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  H^d balance        %.3e   (max |H^d_{k+1/2} - H^d_{k-1/2} + Dt_k/2|; round-off for conserving)\n",
        (double)r->H_balance));
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  E - W spread       %.3e   (energy minus discrete work; round-off for greenspan/gonzalez)\n",
      (double)r->energy_work_spread));
  if (s->bvp_type == HS_BVP_SHOOTING) {
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  linear iterations  %" PetscInt_FMT " (KSP, summed over Newton iterations)\n", r->ksp_iterations));
    if (s->shoot.max_growth_seen > 0)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  sensitivity growth %.3e   (largest |d(march)/dz| within a segment)\n",
                                       (double)s->shoot.max_growth_seen));
    else /* no Jacobian evaluated: a root at the start, or the first march failed */
      PetscCall(PetscViewerASCIIPrintf(viewer, "  sensitivity growth not computed (no Jacobian was evaluated)\n"));
  }
  if (s->shoot.fail_msg[0])
    PetscCall(PetscViewerASCIIPrintf(viewer, "  diagnosis          %s\n", s->shoot.fail_msg));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  wall time          %.3f s\n", (double)r->wall_time_s));
  PetscFunctionReturn(0);
}

PetscErrorCode HsSolverDestroy(HsSolver *solver)
{
  HsSolver s;

  PetscFunctionBeginUser;
  if (!solver || !*solver)
    PetscFunctionReturn(0);
  s = *solver;
  PetscCall(SNESDestroy(&s->snes));
  PetscCall(VecDestroy(&s->X));
  PetscCall(VecDestroy(&s->Xnodes));
  PetscCall(VecDestroy(&s->X0));
  PetscCall(HsShootDestroy(s));
  PetscCall(VecDestroy(&s->F));
  PetscCall(MatDestroy(&s->Jac));
  PetscCall(DMDestroy(&s->da));
  HsDiscDestroy(&s->disc);
  PetscCall(PetscFree2(s->H, s->EW));
  PetscCall(PetscFree(s->guess));
  PetscCall(PetscFree(s));
  *solver = NULL;
  PetscFunctionReturn(0);
}
