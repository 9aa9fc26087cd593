static const char help[] = "The pendulum swing-up (docs/theory.md section 4.1) through hamshoot's C API:\n"
                           "the conserving scheme by transcription and by multiple shooting, the direct scheme,\n"
                           "and continuation in gravity from g = 0. Options: -N <20>, -p_g <9.81>, and every\n"
                           "-hs_* key of HsSolverSetFromOptions (each run takes its own options prefix).\n\n";

/* ex1_pendulum: an end-to-end use of the library, in the shape of PETSc's
 * tutorials. It prints rounded values only, so that its output can be
 * compared with examples/output/ex1_pendulum.out on any number of ranks
 * (ctest example_c_ex1). What it shows:
 *
 *   1. a problem from the registry, its parameters from the options (-p_NAME);
 *   2. a solver configured by setters, then HsSolverSetFromOptions;
 *   3. the same discrete problem by transcription and by multiple shooting:
 *      the same J^d (docs/theory.md section 3: the formulations must agree);
 *   4. the conserving scheme keeps H^d constant to round-off, the direct one
 *      does not (docs/theory.md section 2.3);
 *   5. a continuation in g from 0 reaches the direct solve's J^d.
 */
#include "../bvp/hsbvp.h"

/* A solver of prob with the options prefix `prefix`, N intervals and the named formulation. */
static PetscErrorCode MakeSolver(HsProblem *prob, const char *prefix, HsSolverType type, PetscInt N, HsSolver *s)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, s));
  PetscCall(HsSolverSetOptionsPrefix(*s, prefix));
  PetscCall(HsSolverSetProblem(*s, prob));
  PetscCall(HsSolverSetType(*s, type));
  PetscCall(HsSolverSetNumIntervals(*s, N));
  PetscFunctionReturn(0);
}

/* Solves and prints one line: converged, J^d to 9 digits, whether H^d is constant to round-off. */
static PetscErrorCode SolveAndReport(HsSolver s, const char *what, HsResults *r)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, r));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-32s %s  J^d = %.9g  H^d constant to round-off: %s\n", what,
                        r->converged ? "converged" : "NOT converged", (double)r->J,
                        r->H_spread <= 1e-10 * PetscMax(1, PetscAbsReal(r->H_mean)) ? "yes" : "no"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  HsProblem     *prob;
  HsSolver       s;
  HsContinuation cont;
  HsResults      tr, sh, di, co;
  PetscInt       N = 20;
  PetscBool      reached;
  const char    *why;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-N", &N, NULL));
  /* 1. the problem and its parameters (-p_m, -p_l, -p_g) */
  PetscCheck(HsProblemCreateByName("pendulum", &prob) == 0, PETSC_COMM_WORLD, PETSC_ERR_LIB, "pendulum");
  PetscCall(HsProblemSetFromOptions(PETSC_COMM_WORLD, NULL, prob));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pendulum, N = %d, g = %g\n", (int)N, *prob->params[2].value));

  /* 2.-3. conserving scheme: transcription, then multiple shooting with 4 segments */
  PetscCall(MakeSolver(prob, "tr_", HSSOLVERTRANSCRIPTION, N, &s));
  PetscCall(HsSolverSetScheme(s, "conserving"));
  PetscCall(SolveAndReport(s, "conserving, transcription", &tr));
  PetscCall(HsSolverDestroy(&s));
  PetscCall(MakeSolver(prob, "sh_", HSSOLVERSHOOTING, N, &s));
  PetscCall(HsSolverShootSetNumSegments(s, 4));
  PetscCall(SolveAndReport(s, "conserving, shooting (4 segm.)", &sh));
  PetscCall(HsSolverDestroy(&s));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "shooting equals transcription to 1e-10: %s\n",
                        PetscAbsReal(sh.J - tr.J) <= 1e-10 * tr.J ? "yes" : "no"));

  /* 4. the direct scheme: the KKT conditions of a direct transcription */
  PetscCall(MakeSolver(prob, "di_", HSSOLVERTRANSCRIPTION, N, &s));
  PetscCall(HsSolverSetScheme(s, "direct"));
  PetscCall(SolveAndReport(s, "direct, transcription", &di));
  PetscCall(HsSolverDestroy(&s));

  /* 5. continuation: g from 0 in 4 steps (secant predictor), the last solve at the problem's g */
  PetscCall(MakeSolver(prob, "co_", HSSOLVERTRANSCRIPTION, N, &s));
  PetscCall(HsContinuationCreate(s, &cont));
  PetscCall(HsContinuationAddStage(cont, "g", 0.0, 4));
  PetscCall(HsContinuationSetOptionsPrefix(cont, "co_"));
  PetscCall(HsContinuationSetFromOptions(cont));
  PetscCall(HsSolverSetFromOptions(s));
  PetscCall(HsContinuationSolve(cont));
  PetscCall(HsContinuationGetResult(cont, &reached, &why));
  PetscCall(HsSolverGetResults(s, &co));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "continuation in g from 0:        %s  J^d = %.9g  equals the transcription: %s\n",
                        reached ? "reached" : why, (double)co.J, PetscAbsReal(co.J - tr.J) <= 1e-10 * tr.J ? "yes" : "no"));
  PetscCall(HsContinuationDestroy(&cont));
  PetscCall(HsSolverDestroy(&s));
  HsProblemDestroy(&prob);
  PetscCall(PetscFinalize());
  return 0;
}
