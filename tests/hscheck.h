/* hamshoot tests: the assertion counter shared by the serial C tests. Each
 * failed CHECK prints its location and message; main prints the closing
 * "N passed, N failed" line that ctest logs show. */
#ifndef HSCHECK_H
#define HSCHECK_H

#include <stdio.h>

/* How a failure is printed; an MPI test defines it as PetscCall(PetscPrintf(PETSC_COMM_WORLD, ...))
 * before including this header, so that only rank 0 prints. */
#ifndef HS_CHECK_PRINT
#define HS_CHECK_PRINT(...) printf(__VA_ARGS__)
#endif

static int npass, nfail;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (cond)                                                                                                          \
      npass++;                                                                                                         \
    else {                                                                                                             \
      nfail++;                                                                                                         \
      HS_CHECK_PRINT("FAIL %s:%d: ", __FILE__, __LINE__);                                                              \
      HS_CHECK_PRINT(__VA_ARGS__);                                                                                     \
      HS_CHECK_PRINT("\n");                                                                                            \
    }                                                                                                                  \
  } while (0)

#endif
