/* hamshoot: libFuzzer target of the -hs_init reader (problems/trajcsv.c; docs/reliability.md).
 *
 * The first byte of an input chooses what the rest is read as: bit 0 the kind (0: a trajectory.csv with its
 * column t, then checked against the problem's grid; 1: an intervals.csv of costates), bit 1 the problem (the
 * built-in pendulum, generic names q1, p1, lambda1..; or a problem file with the coordinates x and theta, named
 * columns q_x, p_theta, lambda_q_x, ..), bit 2 whether the columns are optional. The rest is the file's bytes,
 * read through fmemopen as the reader reads a file. Any crash, hang, leak or sanitizer report is a finding; error
 * messages are the expected outcome of most inputs. Build: cmake -DHS_FUZZ=ON with CC=clang-14; run: tools/fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsocp.h"
#include "hstrajcsv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The two problems, made once. */
static HsProblem *Problem(int named)
{
  static HsProblem *P[2];
  static const char text[] = "problem: cart\ncoordinates: x, theta\ncontrols: 1\nmass: 1, 0; 0, 2\n"
                             "potential: cos(theta)\nB: 1; 0\nR: 1\nT: 2\nN: 10\nx0: 0, 0, 0, 0\nxT: 1, 0, 0, 0\n";
  char msg[256];

  if (!P[named]) {
    if (named)
      HsProblemCreateFromText("fuzz.ocp", text, strlen(text), &P[1], msg, sizeof msg);
    else
      HsProblemCreateByName("pendulum", &P[0]);
  }
  return P[named];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  HsProblem *P;
  FILE      *f;
  double    *a = NULL, *t = NULL;
  int        rows = 0, kind, st;
  char       msg[512];

  if (size < 1)
    return 0;
  kind = data[0] & 1;
  if (!(P = Problem((data[0] >> 1) & 1)) || size == 1 || !(f = fmemopen((void *)(data + 1), size - 1, "r")))
    return 0;
  st = HsTrajectoryRead(f, "fuzz.csv", P, kind, (data[0] >> 2) & 1, &a, kind ? NULL : &t, &rows, msg, sizeof msg);
  fclose(f);
  if (st == HS_SUCCESS && !msg[0] && a && t && rows > 0)
    HsTrajectoryCheckTime("fuzz.csv", P, t, rows, msg, sizeof msg);
  free(a), free(t);
  return 0;
}
