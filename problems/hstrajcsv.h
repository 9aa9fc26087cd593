/* hamshoot: the output files' columns and the -hs_init reader (problems/trajcsv.c): serial, no PETSc. */
#ifndef HSTRAJCSV_H
#define HSTRAJCSV_H

#include <stdio.h>

#include "hsproblem.h"

#define HS_TRAJ_MAX_HEADER (1 << 20) /* -hs_init: a header line longer than this is refused (a 2 GB line had taken 2 GB) */
#define HS_TRAJ_MAX_FIELD  64        /* ... and a data line longer than this a column (%.17g takes at most 24) */

void HsColumnName(const HsProblem *P, int kind, int i, int generic, char *buf, size_t len);
int  HsTrajectoryRead(FILE *f, const char *path, const HsProblem *P, int kind, int optional, double **a, double **t,
                      int *rows, char *msg, size_t msglen);
int  HsTrajectoryCheckTime(const char *path, const HsProblem *P, const double *t, int n, char *msg, size_t msglen);

#endif
