/* hamshoot tests: the assertion counter shared by the serial C tests. Each
 * failed CHECK prints its location and message; main prints the closing
 * "N passed, N failed" line that ctest logs show. */
#ifndef HSCHECK_H
#define HSCHECK_H

#include <stdio.h>

static int npass, nfail;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (cond)                                                                                                          \
      npass++;                                                                                                         \
    else {                                                                                                             \
      nfail++;                                                                                                         \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                      \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
    }                                                                                                                  \
  } while (0)

#endif
