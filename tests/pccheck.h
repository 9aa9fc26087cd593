/* hamshoot tests: what the tests of the band preconditioners (test_pcband.c, test_pcborder.c) share: a
 * deterministic pseudo-random number, and the check of a solution and a determinant against MUMPS'. Include after
 * hscheck.h (CHECK). */
#ifndef PCCHECK_H
#define PCCHECK_H

#include <petscksp.h>

/* A deterministic pseudo-random number in [-1, 1] of (i, j, seed); unsigned arithmetic (in int, i * 1000003
 * overflows for i beyond 2147: UBSan). */
static PetscReal PcCheckRand(PetscInt i, PetscInt j, PetscInt seed)
{
  unsigned long long u = (unsigned long long)i, v = (unsigned long long)j, w = (unsigned long long)seed;
  unsigned long long z = u * 1000003ull + v * 7919ull + w * 104729ull + 0x9E3779B97F4A7C15ull;
  z                    = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z                    = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (PetscReal)(z % 2000001) / 1000000.0 - 1.0;
}

/* Checks x (the band solver's solution of A x = b, its determinant mb 2^eb, kb: known) against y (MUMPS', mm 2^em,
 * km): |x - y| <= 1e-10 |y|, |A x - b| <= 1e-12 |b|, the same determinant sign and log2 magnitude to 1e-9. what names
 * the case in a failure's message. Overwrites y. */
static PetscErrorCode PcCheckAgainstMumps(Mat A, Vec b, Vec x, Vec y, PetscReal mb, PetscInt eb, PetscBool kb,
                                          PetscReal mm, PetscInt em, PetscBool km, const char *what)
{
  Vec       r;
  PetscReal err, res, nx, nb, lb = PetscLog2Real(PetscAbsReal(mb)) + eb, lm = PetscLog2Real(PetscAbsReal(mm)) + em;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAXPY(r, -1, b));
  PetscCall(VecNorm(r, NORM_INFINITY, &res));
  PetscCall(VecNorm(b, NORM_INFINITY, &nb));
  PetscCall(VecNorm(y, NORM_INFINITY, &nx));
  PetscCall(VecAXPY(y, -1, x));
  PetscCall(VecNorm(y, NORM_INFINITY, &err));
  PetscCall(VecDestroy(&r));
  CHECK(err <= 1e-10 * nx && res <= 1e-12 * nb, "%s: |x - x_MUMPS| %.2e (|x| %.2e), |Ax - b| %.2e", what, (double)err,
        (double)nx, (double)res);
  CHECK(kb && km && mb * mm > 0 && PetscAbsReal(lb - lm) <= 1e-9 * PetscMax(1, PetscAbsReal(lm)),
        "%s: det %.15g 2^%d (hsband) against %.15g 2^%d (MUMPS)", what, (double)mb, (int)eb, (double)mm, (int)em);
  PetscFunctionReturn(0);
}

#endif
