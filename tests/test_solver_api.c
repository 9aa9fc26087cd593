/* The HsSolver C API in its documented order (create, problem, setters, then
 * HsSolverSetFromOptions, set-up, solve): every setter's value survives
 * SetFromOptions when no option overrides it, and shows in the getter and in
 * the solve; options (with a prefix) override setters; the global options
 * database is the same before and after solves of every formulation and
 * linear solver; the MUMPS settings sit on the solver's own factor matrix;
 * type-specific setters on another type, setters after set-up and bad values
 * are errors. Run on 1 and 2 ranks. */
#include <petscsnes.h>
#include <string.h>

#include "../bvp/hsbvp.h"

#define HS_CHECK_PRINT(...) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__))
#include "hscheck.h"

/* The iterate vector of a solver (after set-up). */
static Vec s_X(HsSolver s)
{
  Vec X = NULL;
  HsSolverGetIterate(s, &X);
  return X;
}

/* All options in the database as one string. */
static PetscErrorCode Snapshot(char **all)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetAll(NULL, all));
  PetscFunctionReturn(0);
}

/* Generic settings: set, SetFromOptions (no options given), get. */
static PetscErrorCode CheckGenericSetters(HsProblem *P)
{
  HsSolver     s;
  HsSolverType type;
  const char  *ss, *cs, *kind;
  PetscInt     N, Ng;
  PetscReal    tol, c, nodes[3 * 4];
  PetscBool    b, w;
  const PetscReal *g;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  PetscCall(HsSolverSetType(s, HSSOLVERSHOOTING));
  PetscCall(HsSolverSetNumIntervals(s, 37));
  PetscCall(HsSolverSetScheme(s, "direct"));
  PetscCall(HsSolverSetSchemes(s, "gonzalez", NULL));
  PetscCall(HsSolverSetDGTolerance(s, 3e-7));
  PetscCall(HsSolverSetRoundoffFactor(s, 250));
  PetscCall(HsSolverSetMonitor(s, PETSC_FALSE));
  PetscCall(HsSolverSetWarmStart(s, PETSC_TRUE));
  for (int i = 0; i < 12; i++)
    nodes[i] = 0.1 * i;
  PetscCall(HsSolverSetInitialGuess(s, 2, nodes));
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsSolverGetType(s, &type));
  CHECK(type && !strcmp(type, HSSOLVERSHOOTING), "SetType(shooting) then SetFromOptions gave %s", type);
  PetscCall(HsSolverGetNumIntervals(s, &N));
  CHECK(N == 37, "N = %d", (int)N);
  PetscCall(HsSolverGetSchemes(s, &ss, &cs));
  CHECK(!strcmp(ss, "gonzalez") && !strcmp(cs, "trapezoidal"), "schemes %s + %s", ss, cs);
  PetscCall(HsSolverGetScheme(s, &kind));
  CHECK(!strcmp(kind, "custom"), "scheme kind %s", kind);
  PetscCall(HsSolverGetDGTolerance(s, &tol));
  CHECK(tol == 3e-7, "dg_tol %g", (double)tol);
  PetscCall(HsSolverGetRoundoffFactor(s, &c));
  CHECK(c == 250, "roundoff %g", (double)c);
  PetscCall(HsSolverGetMonitor(s, &b));
  PetscCall(HsSolverGetWarmStart(s, &w));
  CHECK(!b && w, "monitor %d, warm %d", (int)b, (int)w);
  PetscCall(HsSolverGetInitialGuess(s, &Ng, &g));
  CHECK(Ng == 2 && g && g[11] == nodes[11], "initial guess not kept");
  PetscCall(HsSolverSetScheme(s, "conserving")); /* clears the explicit state scheme */
  PetscCall(HsSolverGetSchemes(s, &ss, &cs));
  CHECK(!strcmp(ss, "greenspan") && !strcmp(cs, "conserving_1dof"), "conserving for the pendulum: %s + %s", ss, cs);
  PetscCall(HsSolverDestroy(&s));
  CHECK(s == NULL, "HsSolverDestroy did not set NULL");
  PetscFunctionReturn(0);
}

/* Shooting settings: set, SetFromOptions, get; then the solve shows them. */
static PetscErrorCode CheckShootSetters(HsProblem *K)
{
  HsSolver         s;
  HsResults        r;
  HsShootKSPType   kt;
  HsShootInitType  it;
  PetscInt         M, n, maxit;
  const PetscInt   knots[3] = {4, 9, 13}, *kg;
  PetscReal        g, at, st;
  PetscBool        mf;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, K));
  PetscCall(HsSolverSetType(s, HSSOLVERSHOOTING));
  PetscCall(HsSolverShootSetNumSegments(s, 6));
  PetscCall(HsSolverShootSetKnots(s, 3, knots));
  PetscCall(HsSolverShootSetLinearSolver(s, HS_SHOOT_KSP_RANKBLOCK));
  PetscCall(HsSolverShootSetInitialGuessType(s, HS_SHOOT_INIT_TRANSCRIPTION));
  PetscCall(HsSolverShootSetMaxGrowth(s, 1e6));
  PetscCall(HsSolverShootSetStepTolerances(s, 1e-13, PETSC_DEFAULT, 30));
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsSolverShootGetNumSegments(s, &M));
  PetscCall(HsSolverShootGetKnots(s, &n, &kg));
  CHECK(M == 4 && n == 3 && kg[2] == 13, "knots: M = %d, n = %d", (int)M, (int)n);
  PetscCall(HsSolverShootGetLinearSolver(s, &kt));
  PetscCall(HsSolverShootGetInitialGuessType(s, &it));
  CHECK(kt == HS_SHOOT_KSP_RANKBLOCK && it == HS_SHOOT_INIT_TRANSCRIPTION, "ksp %d, init %d", (int)kt, (int)it);
  PetscCall(HsSolverShootGetMaxGrowth(s, &g));
  PetscCall(HsSolverShootGetStepTolerances(s, &at, &st, &maxit));
  CHECK(g == 1e6 && at == 1e-13 && st == HS_MARCH_STOL_DEFAULT && maxit == 30, "growth %g, step tolerances %g %g %d",
        (double)g, (double)at, (double)st, (int)maxit);
  PetscCall(HsSolverShootGetMatrixFree(s, &mf));
  CHECK(!mf, "matrix-free on by default");
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, &r));
  /* from the transcription solution the shooting residual is at round-off: at most one Newton step;
   * rankblock: GMRES iterations, not one preonly solve per step */
  CHECK(r.converged && r.segments == 4 && r.newton_iterations <= 1, "shooting with knots: converged %d, M %d, its %d",
        (int)r.converged, (int)r.segments, (int)r.newton_iterations);
  PetscCall(HsSolverDestroy(&s));
  /* matrix-free: GMRES without preconditioner on a shell */
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, K));
  PetscCall(HsSolverSetType(s, HSSOLVERSHOOTING));
  PetscCall(HsSolverShootSetNumSegments(s, 5));
  PetscCall(HsSolverShootSetMatrixFree(s, PETSC_TRUE));
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsSolverSetUp(s));
  {
    SNES      snes;
    KSP       ksp;
    PC        pc;
    PetscBool   gmres, none;
    KSPType     kt;
    PCType      pt;
    PetscCall(HsSolverGetSNES(s, &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPGMRES, &gmres));
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCNONE, &none));
    PetscCall(KSPGetType(ksp, &kt));
    PetscCall(PCGetType(pc, &pt));
    CHECK(gmres && none, "-hs_shoot_mf: KSP %s, PC %s", kt, pt);
  }
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, &r));
  CHECK(r.converged && r.ksp_iterations > r.newton_iterations, "matrix-free solve: %d linear its, %d Newton its",
        (int)r.ksp_iterations, (int)r.newton_iterations);
  PetscCall(HsSolverDestroy(&s));
  PetscFunctionReturn(0);
}

/* Options with a prefix override the setters; a solver without the prefix is not affected. */
static PetscErrorCode CheckPrefixedOptions(HsProblem *K)
{
  HsSolver     s, t;
  HsSolverType type;
  PetscInt     M, N;
  PetscReal    tol;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, "-api_hs_bvp_type", "shooting"));
  PetscCall(PetscOptionsSetValue(NULL, "-api_hs_shoot_segments", "3"));
  PetscCall(PetscOptionsSetValue(NULL, "-api_hs_num_intervals", "30"));
  PetscCall(PetscOptionsSetValue(NULL, "-api_hs_dg_tol", "1e-5"));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, K));
  PetscCall(HsSolverSetOptionsPrefix(s, "api_"));
  PetscCall(HsSolverSetNumIntervals(s, 24));
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsSolverGetType(s, &type));
  PetscCall(HsSolverShootGetNumSegments(s, &M));
  PetscCall(HsSolverGetNumIntervals(s, &N));
  PetscCall(HsSolverGetDGTolerance(s, &tol));
  CHECK(!strcmp(type, HSSOLVERSHOOTING) && M == 3 && N == 30 && tol == 1e-5,
        "prefixed options: type %s, M %d, N %d, dg_tol %g", type, (int)M, (int)N, (double)tol);
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &t));
  PetscCall(HsSolverSetProblem(t, K));
  PetscCall(HsSolverSetFromOptions(t));
  PetscCall(HsSolverGetType(t, &type));
  PetscCall(HsSolverGetNumIntervals(t, &N));
  CHECK(!strcmp(type, HSSOLVERTRANSCRIPTION) && N == K->N, "unprefixed solver took prefixed options: %s, N %d", type,
        (int)N);
  PetscCall(HsSolverDestroy(&s));
  PetscCall(HsSolverDestroy(&t));
  PetscCall(PetscOptionsClearValue(NULL, "-api_hs_bvp_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-api_hs_shoot_segments"));
  PetscCall(PetscOptionsClearValue(NULL, "-api_hs_num_intervals"));
  PetscCall(PetscOptionsClearValue(NULL, "-api_hs_dg_tol"));
  PetscFunctionReturn(0);
}

/* Solves of every formulation and linear solver leave the options database as it was; the MUMPS
 * settings are on the solver's own factor matrix. */
static PetscErrorCode CheckNoGlobalOptions(HsProblem *K)
{
  const char *types[4] = {HSSOLVERTRANSCRIPTION, HSSOLVERSHOOTING, HSSOLVERSHOOTING, HSSOLVERSHOOTING};
  char       *before, *after;

  PetscFunctionBeginUser;
  PetscCall(Snapshot(&before));
  for (int c = 0; c < 4; c++) {
    HsSolver  s;
    HsResults r;
    PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
    PetscCall(HsSolverSetProblem(s, K));
    PetscCall(HsSolverSetType(s, types[c]));
    if (c > 0)
      PetscCall(HsSolverShootSetNumSegments(s, 4));
    if (c < 2) /* MUMPS' own settings are checked below (the default for kepler, n = 2, is the banded LU) */
      PetscCall(HsSolverSetLinearSolver(s, HS_LINEAR_SOLVER_MUMPS));
    if (c == 2)
      PetscCall(HsSolverShootSetLinearSolver(s, HS_SHOOT_KSP_RANKBLOCK));
    if (c == 3)
      PetscCall(HsSolverShootSetMatrixFree(s, PETSC_TRUE));
    PetscCall(HsSolverSetFromOptions(s));
    PetscCall(HsSolverSolve(s));
    PetscCall(HsSolverGetResults(s, &r));
    CHECK(r.converged, "%s (case %d) did not converge", types[c], c);
#if defined(PETSC_HAVE_MUMPS)
    if (c < 2) {
      SNES      snes;
      KSP       ksp;
      PC        pc;
      Mat       F;
      PetscReal cntl;
      PetscInt  icntl;
      PetscCall(HsSolverGetSNES(s, &snes));
      PetscCall(SNESGetKSP(snes, &ksp));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCFactorGetMatrix(pc, &F));
      PetscCall(MatMumpsGetCntl(F, 1, &cntl));
      PetscCall(MatMumpsGetIcntl(F, 14, &icntl));
      CHECK(cntl == HS_MUMPS_CNTL1_DEFAULT && icntl == HS_MUMPS_ICNTL14_DEFAULT, "%s: MUMPS CNTL(1) %g, ICNTL(14) %d",
            types[c], (double)cntl, (int)icntl);
    }
#endif
    PetscCall(HsSolverDestroy(&s));
  }
  PetscCall(Snapshot(&after));
  CHECK(!strcmp(before, after), "the options database changed:\n  before: %s\n  after:  %s", before, after);
  PetscCall(PetscFree(before));
  PetscCall(PetscFree(after));
  PetscFunctionReturn(0);
}

/* A call that must fail; the error handler is switched off around it. */
#define EXPECT_ERROR(call, what)                                                                                       \
  do {                                                                                                                 \
    PetscErrorCode e_;                                                                                                 \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));                                                   \
    e_ = (call);                                                                                                       \
    PetscCall(PetscPopErrorHandler());                                                                                 \
    CHECK(e_ != 0, "%s was accepted", what);                                                                           \
  } while (0)

static PetscErrorCode CheckErrors(HsProblem *P)
{
  HsSolver       s;
  HsContinuation c;
  PetscInt       bad[2] = {5, 3};

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  EXPECT_ERROR(HsSolverShootSetNumSegments(s, 4), "a shooting setter without the shooting type");
  EXPECT_ERROR(HsSolverSetType(s, "bogus"), "type 'bogus'");
  EXPECT_ERROR(HsSolverSetNumIntervals(s, 1), "N = 1");
  EXPECT_ERROR(HsSolverSetScheme(s, "fancy"), "scheme 'fancy'");
  EXPECT_ERROR(HsSolverSetSchemes(s, "euler", NULL), "state scheme 'euler'");
  EXPECT_ERROR(HsSolverSetSchemes(s, NULL, "magic"), "costate scheme 'magic'");
  EXPECT_ERROR(HsSolverSetDGTolerance(s, 2.0), "dg_tol = 2");
  EXPECT_ERROR(HsSolverSetRoundoffFactor(s, -1), "roundoff factor -1");
  EXPECT_ERROR(HsSolverSetInitialGuessFromFile(s, "/nonexistent/trajectory.csv"), "a missing guess file");
  PetscCall(HsSolverSetType(s, HSSOLVERSHOOTING));
  EXPECT_ERROR(HsSolverShootSetNumSegments(s, 0), "M = 0");
  EXPECT_ERROR(HsSolverShootSetMaxGrowth(s, 0.5), "max growth 0.5");
  EXPECT_ERROR(HsSolverShootSetStepTolerances(s, 0, PETSC_DEFAULT, PETSC_DEFAULT), "step atol 0");
  EXPECT_ERROR(HsSolverShootSetStepTolerances(s, PETSC_DEFAULT, 2, PETSC_DEFAULT), "step stol 2");
  EXPECT_ERROR(HsSolverShootSetStepTolerances(s, PETSC_DEFAULT, PETSC_DEFAULT, 0), "step max_it 0");
  PetscCall(HsSolverShootSetKnots(s, 2, bad));
  EXPECT_ERROR(HsSolverSetUp(s), "knots 5,3 (not increasing)");
  PetscCall(HsSolverDestroy(&s));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  PetscCall(HsSolverSetUp(s));
  EXPECT_ERROR(HsSolverSetNumIntervals(s, 30), "SetNumIntervals after SetUp");
  EXPECT_ERROR(HsSolverSetType(s, HSSOLVERSHOOTING), "SetType after SetUp");
  PetscCall(HsContinuationCreate(s, &c));
  EXPECT_ERROR(HsContinuationAddStage(c, "gg", 0, 4), "continuation in an unknown parameter");
  EXPECT_ERROR(HsContinuationAddStage(c, "reach", 1.5, 4), "reach from 1.5");
  EXPECT_ERROR(HsContinuationAddStage(c, "g", 0, 0), "0 steps");
  EXPECT_ERROR(HsContinuationSetMaxHalvings(c, -1), "-1 halvings");
  PetscCall(HsContinuationDestroy(&c));
  PetscCall(HsSolverDestroy(&s));
  PetscFunctionReturn(0);
}

/* The direct NLP through the API: IPOPT's setters survive SetFromOptions and show in the getters; the
 * IPOPT solution equals Newton's on the kkt equations of the same state scheme; -hs_direct_solver and
 * -hs_initial_guess as setters. */
static PetscErrorCode CheckIpoptSetters(HsProblem *K)
{
  HsSolver       s, t;
  HsResults      r, rk;
  PetscReal      tol;
  PetscInt       maxit, lvl;
  const char    *ord, *cs;
  HsDirectSolver ds;
  HsGuessType    gt;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, K));
  PetscCall(HsSolverSetType(s, HSSOLVERIPOPT));
  PetscCall(HsSolverIpoptSetTolerances(s, 1e-11, 200));
  PetscCall(HsSolverIpoptSetOrdering(s, "amd"));
  PetscCall(HsSolverIpoptSetPrintLevel(s, 0));
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsSolverIpoptGetTolerances(s, &tol, &maxit));
  PetscCall(HsSolverIpoptGetOrdering(s, &ord));
  PetscCall(HsSolverIpoptGetPrintLevel(s, &lvl));
  CHECK(tol == 1e-11 && maxit == 200 && !strcmp(ord, "amd") && lvl == 0, "ipopt settings %g %d %s %d", (double)tol,
        (int)maxit, ord, (int)lvl);
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, &r));
  PetscCall(HsSolverGetSchemes(s, NULL, &cs));
  CHECK(r.converged && !strcmp(cs, "kkt") && !strcmp(r.status, "Solve_Succeeded"), "ipopt solve: %d %s %s",
        (int)r.converged, cs, r.status);
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &t)); /* Newton on the same kkt equations */
  PetscCall(HsSolverSetProblem(t, K));
  PetscCall(HsSolverSetSchemes(t, NULL, "kkt"));
  PetscCall(HsSolverSetDirectSolver(t, HS_DIRECT_KKT));
  PetscCall(HsSolverSetInitialGuessType(t, HS_GUESS_DIRECT));
  PetscCall(HsSolverSetFromOptions(t));
  PetscCall(HsSolverGetDirectSolver(t, &ds));
  PetscCall(HsSolverGetInitialGuessType(t, &gt));
  CHECK(ds == HS_DIRECT_KKT && gt == HS_GUESS_DIRECT, "direct solver %d, guess %d", (int)ds, (int)gt);
  PetscCall(HsSolverSolve(t));
  PetscCall(HsSolverGetResults(t, &rk));
  /* the guess is the kkt solution itself (by Newton): 0 or 1 iterations, the same J as IPOPT */
  CHECK(rk.converged && rk.newton_iterations <= 1 && PetscAbsReal(rk.J - r.J) <= 1e-10 * PetscAbsReal(r.J) &&
            strstr(rk.initial_guess, "direct solution (transcription"),
        "kkt from the direct guess: %d its, J %.15g vs %.15g, '%s'", (int)rk.newton_iterations, (double)rk.J,
        (double)r.J, rk.initial_guess);
  PetscCall(HsSolverDestroy(&t));
  PetscCall(HsSolverDestroy(&s));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  EXPECT_ERROR(HsSolverIpoptSetTolerances(s, 1e-8, 10), "an IPOPT setter on a solver of another type");
  PetscCall(HsSolverSetType(s, HSSOLVERIPOPT));
  EXPECT_ERROR(HsSolverIpoptSetTolerances(s, 2, PETSC_DEFAULT), "IPOPT tol 2");
  EXPECT_ERROR(HsSolverIpoptSetOrdering(s, "random"), "ordering 'random'");
  EXPECT_ERROR(HsSolverIpoptSetPrintLevel(s, 13), "print level 13");
  PetscCall(HsSolverDestroy(&s));
  PetscFunctionReturn(0);
}

/* The continuation API: stages set in C, then SetFromOptions without options, reaches the target
 * and equals the direct solve (pendulum: g from 0, then the mass from 0.5). */
static PetscErrorCode CheckContinuation(HsProblem *P)
{
  HsSolver       s;
  HsContinuation c;
  HsResults      r, ref;
  PetscInt       n, h;
  PetscBool      reached, mon;
  const char    *why;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, &ref));
  PetscCall(HsSolverDestroy(&s));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  PetscCall(HsContinuationCreate(s, &c));
  PetscCall(HsContinuationAddStage(c, "g", 0, 3));
  PetscCall(HsContinuationAddStage(c, "m", 0.5, 2));
  PetscCall(HsContinuationSetMaxHalvings(c, 3));
  PetscCall(HsContinuationSetMonitor(c, PETSC_FALSE));
  PetscCall(HsContinuationSetFromOptions(c));
  PetscCall(HsContinuationGetNumStages(c, &n));
  PetscCall(HsContinuationGetMaxHalvings(c, &h));
  PetscCall(HsContinuationGetMonitor(c, &mon));
  CHECK(n == 2 && h == 3 && !mon, "continuation settings: %d stages, %d halvings", (int)n, (int)h);
  PetscCall(HsContinuationSolve(c));
  PetscCall(HsContinuationGetResult(c, &reached, &why));
  PetscCall(HsSolverGetResults(s, &r));
  CHECK(reached && !why[0] && r.converged && PetscAbsReal(r.J - ref.J) <= 1e-10 * ref.J,
        "continuation g, m: reached %d (%s), J %.15g vs %.15g", (int)reached, why, (double)r.J, (double)ref.J);
  CHECK(P->params[0].value && *P->params[0].value == 1, "the continuation did not leave m at its target");
  PetscCall(HsContinuationDestroy(&c));
  PetscCall(HsSolverDestroy(&s));
  PetscFunctionReturn(0);
}

/* Parameters and set-up: a parameter changed after HsSolverSetUp reaches the first solve (ncar's beta
 * enters R, read by the discretization); a size change after set-up is refused; a shooting solver's
 * residual can be evaluated right after set-up (through its SNES); an integer parameter cannot be
 * continued. */
static PetscErrorCode CheckParametersAfterSetUp(void)
{
  HsProblem     *C;
  HsSolver       s;
  HsContinuation c;
  HsResults      before, after;
  SNES           snes;
  Vec            F;

  PetscFunctionBeginUser;
  PetscCheck(HsProblemCreateByName("ncar", &C) == 0, PETSC_COMM_WORLD, PETSC_ERR_LIB, "ncar");
  CHECK(HsProblemSetParam(C, "beta", 1e-2) == 0, "beta");
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, C));
  PetscCall(HsSolverSetNumIntervals(s, 40));
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, &before));
  PetscCall(HsSolverDestroy(&s));
  CHECK(HsProblemSetParam(C, "beta", 1e-5) == 0, "beta");
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, C));
  PetscCall(HsSolverSetNumIntervals(s, 40));
  PetscCall(HsSolverSetUp(s));
  CHECK(HsProblemSetParam(C, "beta", 1e-2) == 0, "beta");
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, &after));
  CHECK(before.converged && after.converged && PetscAbsReal(after.J - before.J) <= 1e-12 * before.J,
        "beta changed after set-up: J %.15g, set before set-up: %.15g", (double)after.J, (double)before.J);
  CHECK(HsProblemSetParam(C, "cars", 3) == 0, "cars");
  EXPECT_ERROR(HsSolverSolve(s), "a size change after set-up");
  CHECK(HsProblemSetParam(C, "cars", 2) == 0, "cars");
  PetscCall(HsContinuationCreate(s, &c));
  EXPECT_ERROR(HsContinuationAddStage(c, "cars", 3, 2), "continuation in an integer parameter");
  PetscCall(HsContinuationDestroy(&c));
  PetscCall(HsSolverDestroy(&s));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, C));
  PetscCall(HsSolverSetType(s, HSSOLVERSHOOTING));
  PetscCall(HsSolverShootSetNumSegments(s, 8));
  PetscCall(HsSolverSetNumIntervals(s, 40));
  PetscCall(HsSolverSetUp(s));
  PetscCall(HsSolverGetSNES(s, &snes));
  PetscCall(VecDuplicate(s_X(s), &F));
  PetscCall(SNESComputeFunction(snes, s_X(s), F));
  {
    PetscReal fn;
    PetscCall(VecNorm(F, NORM_2, &fn));
    /* at z = 0 the initial condition x_0 - x0 alone is nonzero (ncar's x0 is not 0) */
    CHECK(fn > 0 && !PetscIsInfOrNanReal(fn), "shooting residual right after set-up: |F| = %g", (double)fn);
  }
  PetscCall(VecDestroy(&F));
  PetscCall(HsSolverDestroy(&s));
  HsProblemDestroy(&C);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  HsProblem *P, *K;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(HsProblemCreateByName("pendulum", &P) == 0 && HsProblemCreateByName("kepler", &K) == 0,
             PETSC_COMM_WORLD, PETSC_ERR_LIB, "cannot create the test problems");
  PetscCall(CheckGenericSetters(P));
  PetscCall(CheckShootSetters(K));
  PetscCall(CheckPrefixedOptions(K));
  PetscCall(CheckNoGlobalOptions(K));
  PetscCall(CheckErrors(P));
  PetscCall(CheckIpoptSetters(K));
  PetscCall(CheckContinuation(P));
  PetscCall(CheckParametersAfterSetUp());
  HsProblemDestroy(&P);
  HsProblemDestroy(&K);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
