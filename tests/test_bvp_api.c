/* Tests of the PETSc layer through the library API (HsSolver), on a problem
 * with a running cost ell and non-trivial constant B and R (no CLI exists for
 * those yet): the conserving scheme conserves H^d to round-off, the direct
 * schemes' H^d spread shrinks at order 2, all converge, the setters reject
 * bad values. Run on 1 and 2 ranks. */
#include <petscsnes.h>

#include "../bvp/hsbvp.h"
#include "ell_test_problem.h"

#define HS_CHECK_PRINT(...) PetscCall(PetscPrintf(PETSC_COMM_WORLD, __VA_ARGS__))
#include "hscheck.h"

static PetscErrorCode Solve(HsProblem *P, const char *ss, const char *cs, PetscInt N, HsResults *res)
{
  HsSolver s;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  PetscCall(HsSolverSetNumIntervals(s, N));
  PetscCall(HsSolverSetSchemes(s, ss, cs));
  PetscCall(HsSolverSetMonitor(s, PETSC_FALSE));
  PetscCall(HsSolverSolve(s));
  PetscCall(HsSolverGetResults(s, res));
  PetscCall(HsSolverDestroy(&s));
  CHECK(s == NULL, "HsSolverDestroy did not set NULL");
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectError(PetscErrorCode (*fn)(HsSolver, HsProblem *), HsProblem *P, const char *what)
{
  HsSolver       s;
  PetscErrorCode e;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &s));
  PetscCall(HsSolverSetProblem(s, P));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  e = fn(s, P);
  PetscCall(PetscPopErrorHandler());
  CHECK(e != 0, "%s was accepted", what);
  PetscCall(HsSolverDestroy(&s));
  PetscFunctionReturn(0);
}

static PetscErrorCode BadN(HsSolver s, HsProblem *P)
{
  (void)P;
  return HsSolverSetNumIntervals(s, 1);
}
static PetscErrorCode BadScheme(HsSolver s, HsProblem *P)
{
  (void)P;
  return HsSolverSetSchemes(s, "euler", NULL);
}
static PetscErrorCode BadTol(HsSolver s, HsProblem *P)
{
  (void)P;
  return HsSolverSetDGTolerance(s, 2.0);
}

int main(int argc, char **argv)
{
  HsProblem  *K;
  HsResults   r;
  const char *direct[2][2] = {{"midpoint", "trapezoidal"}, {"gonzalez", "kkt"}};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCheck(HsProblemCreateByName("kepler", &K) == 0, PETSC_COMM_WORLD, PETSC_ERR_LIB, "kepler");
  AttachEllAndWeights(K);

  for (PetscInt N = 20; N <= 40; N *= 2) {
    PetscCall(Solve(K, "gonzalez", "conserving", N, &r));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "ell+B+R, gonzalez+conserving N=%3d: J %.10f  H_mean %.10f  H_spread %.2e  E-W %.2e\n",
                          (int)N, (double)r.J, (double)r.H_mean, (double)r.H_spread, (double)r.energy_work_spread));
    CHECK(r.converged, "conserving N=%d did not converge", (int)N);
    CHECK(r.H_spread <= 1e-10 * PetscMax(1, PetscAbsReal(r.H_mean)), "conserving N=%d: H spread %.3e", (int)N,
          (double)r.H_spread);
    CHECK(r.energy_work_spread <= 1e-10, "E-W spread %.3e", (double)r.energy_work_spread);
  }
  for (int c = 0; c < 2; c++) {
    PetscReal sp[3];
    for (int i = 0; i < 3; i++) {
      PetscCall(Solve(K, direct[c][0], direct[c][1], 20 << i, &r));
      CHECK(r.converged, "%s/%s did not converge", direct[c][0], direct[c][1]);
      sp[i] = r.H_spread;
    }
    for (int i = 0; i < 2; i++) {
      PetscReal o = PetscLog2Real(sp[i] / sp[i + 1]);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ell+B+R, %s+%s: H spread %.3e -> %.3e, order %.1f\n", direct[c][0],
                            direct[c][1], (double)sp[i], (double)sp[i + 1], (double)o));
      CHECK(PetscAbsReal(o - 2) <= 0.3, "%s/%s: H spread order %.2f", direct[c][0], direct[c][1], (double)o);
    }
  }
  PetscCall(ExpectError(BadN, K, "N = 1"));
  PetscCall(ExpectError(BadScheme, K, "state scheme 'euler'"));
  PetscCall(ExpectError(BadTol, K, "dg_tol = 2"));
  HsProblemDestroy(&K);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
