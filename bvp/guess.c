/* hamshoot: initial guesses from a given trajectory (DESIGN.md section 3,
 * initial guesses: warm start from a saved solution, grid sequencing).
 *
 * A guess is a node array of Nsrc+1 rows (x_k, lambda_{k+1/2}), 4n values each
 * (the layout of HsSolverGetSolution and of trajectory.csv), on a uniform grid
 * of the same horizon. For the solver's N it is interpolated linearly in time:
 * x_k at t_k = k T / N from the nodes j T / Nsrc, lambda_{k+1/2} at the interval
 * midpoints (k + 1/2) T / N from (j + 1/2) T / Nsrc (constant beyond the first
 * and the last midpoint). With Nsrc = N that is the array itself.
 */
#include "hsbvpimpl.h"

#include <errno.h>
#include <string.h>

/* t, q, p, u, lambda, H of a trajectory.csv: 1 + 2n + m + 2n + 1 <= 82 for n, m <= 16 */
#define HS_CSV_MAXCOL 128

/* Value of component c of the guess at (source) grid position pos in [0, Nsrc]
 * for states (lam = 0: rows 0..Nsrc) or at midpoint position pos for costates
 * (lam = 1: rows 0..Nsrc-1, clamped). */
static PetscReal Interp(const PetscReal *g, PetscInt Nsrc, PetscInt w, PetscInt c, PetscReal pos, PetscBool lam)
{
  PetscInt  last = lam ? Nsrc - 1 : Nsrc, j;
  PetscReal a;
  if (pos <= 0)
    return g[c];
  if (pos >= last)
    return g[last * w + c];
  j = (PetscInt)pos;
  a = pos - (PetscReal)j;
  return (1 - a) * g[j * w + c] + a * g[(j + 1) * w + c];
}

/* Fills row (x_k, lambda_{k+1/2}) of the solver's grid from the guess. */
static void GuessRow(HsSolver s, PetscInt k, PetscReal *row)
{
  PetscInt  dim = 2 * s->prob->n, w = 2 * dim, Nsrc = s->guess_N;
  PetscReal r = (PetscReal)Nsrc / (PetscReal)s->N;
  for (PetscInt i = 0; i < dim; i++) {
    row[i]       = Interp(s->guess, Nsrc, w, i, k * r, PETSC_FALSE);
    row[dim + i] = k < s->N ? Interp(s->guess, Nsrc, w, dim + i, (k + 0.5) * r - 0.5, PETSC_TRUE) : 0;
  }
  /* the given boundary data win over the guess */
  if (k == 0)
    for (PetscInt i = 0; i < dim; i++)
      row[i] = s->prob->x0[i];
  if (k == s->N)
    for (PetscInt i = 0; i < dim; i++)
      if (s->prob->xT_fixed[i])
        row[i] = s->prob->xT[i];
}

/*@ HsSolverSetInitialGuess - the next solves start from a given trajectory
 * (interpolated to the solver's N), instead of the default guess. Collective;
 * every rank passes the same array of (Nsrc+1) rows (x_k, lambda_{k+1/2}),
 * 4n values each (lambda_{Nsrc+1/2} is ignored); Nsrc >= 1. The array is copied.
 * With a warm start (continuation) only the first solve uses it. @*/
PetscErrorCode HsSolverSetInitialGuess(HsSolver s, PetscInt Nsrc, const PetscReal *nodes)
{
  PetscInt w;

  PetscFunctionBeginUser;
  PetscCheck(s->prob, s->comm, PETSC_ERR_ORDER, "HsSolverSetInitialGuess() needs the problem first");
  PetscCheck(Nsrc >= 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "initial guess: %" PetscInt_FMT " intervals, need >= 1",
             Nsrc);
  w = 4 * s->prob->n;
  for (PetscInt i = 0; i < (Nsrc + 1) * w; i++)
    PetscCheck(!PetscIsInfOrNanReal(nodes[i]) || (i / w == Nsrc && i % w >= w / 2), s->comm, PETSC_ERR_ARG_WRONG,
               "initial guess: value %" PetscInt_FMT " of node %" PetscInt_FMT " is not finite", i % w, i / w);
  PetscCall(PetscFree(s->guess));
  PetscCall(PetscMalloc1((Nsrc + 1) * w, &s->guess));
  PetscCall(PetscArraycpy(s->guess, nodes, (Nsrc + 1) * w));
  s->guess_N = Nsrc;
  PetscFunctionReturn(0);
}

/* Reads the columns q1..qn, p1..pn, lambda1..lambda2n of a trajectory.csv on
 * rank 0. Errors name the file and line; *msg empty means success. */
static PetscErrorCode ReadTrajectory(const char *path, PetscInt n, PetscReal **nodes, PetscInt *Nsrc, char *msg,
                                     size_t msglen)
{
  FILE      *f    = fopen(path, "r");
  char      *line = NULL;
  size_t     cap  = 0;
  PetscInt   col[64], ncol = 0, rows = 0, alloc = 0, w = 4 * n, lineno = 1;
  PetscReal *a = NULL;

  PetscFunctionBeginUser;
  msg[0] = 0;
  *nodes = NULL;
  if (!f) {
    snprintf(msg, msglen, "-hs_init %s: cannot open: %s", path, strerror(errno));
    PetscFunctionReturn(0);
  }
  for (PetscInt c = 0; c < w; c++)
    col[c] = -1;
  if (getline(&line, &cap, f) > 0) { /* header: find the columns by name */
    char *save = NULL, *tok = strtok_r(line, ",\n\r", &save);
    for (PetscInt c = 0; tok; c++, tok = strtok_r(NULL, ",\n\r", &save)) {
      char want[32];
      for (PetscInt i = 0; i < w; i++) {
        if (i < n)
          snprintf(want, sizeof want, "q%d", (int)(i + 1));
        else if (i < 2 * n)
          snprintf(want, sizeof want, "p%d", (int)(i - n + 1));
        else
          snprintf(want, sizeof want, "lambda%d", (int)(i - 2 * n + 1));
        if (!strcmp(tok, want))
          col[i] = c;
      }
      ncol = c + 1;
    }
  }
  for (PetscInt i = 0; i < w; i++)
    if (col[i] < 0) {
      snprintf(msg, msglen,
               "-hs_init %s:1: the header lacks the columns q1..q%d, p1..p%d, lambda1..lambda%d of this problem (a "
               "trajectory.csv written by hamshoot -o for a problem with n = %d)",
               path, (int)n, (int)n, (int)(2 * n), (int)n);
      goto done;
    }
  while (getline(&line, &cap, f) > 0) {
    char     *p = line;
    PetscReal v[HS_CSV_MAXCOL];
    PetscInt  nv = 0;
    lineno++;
    if (line[0] == '\n' || line[0] == 0)
      continue;
    while (nv < ncol && nv < HS_CSV_MAXCOL) { /* one field: a number, or empty (the last row's interval quantities) */
      char  *end;
      size_t len = strcspn(p, ",\n\r");
      v[nv]      = strtod(p, &end);
      if (end == p && len == 0)
        v[nv] = 0;
      else if (end != p + len) {
        snprintf(msg, msglen, "-hs_init %s:%d: value %d ('%.*s') is not a number", path, (int)lineno, (int)(nv + 1),
                 (int)(len < 40 ? len : 40), p);
        goto done;
      }
      nv++;
      p += len;
      if (*p != ',')
        break;
      p++;
    }
    if (nv != ncol) {
      snprintf(msg, msglen, "-hs_init %s:%d: expected %d comma-separated values, found %d", path, (int)lineno,
               (int)ncol, (int)nv);
      goto done;
    }
    if (rows == alloc) {
      PetscReal *b;
      alloc = alloc ? 2 * alloc : 1024;
      PetscCall(PetscMalloc1(alloc * w, &b));
      if (a)
        PetscCall(PetscArraycpy(b, a, rows * w));
      PetscCall(PetscFree(a));
      a = b;
    }
    for (PetscInt i = 0; i < w; i++)
      a[rows * w + i] = v[col[i]];
    rows++;
  }
  if (rows < 2) {
    snprintf(msg, msglen, "-hs_init %s: %d rows of data, need at least 2 (nodes t_0..t_N)", path, (int)rows);
    goto done;
  }
  *nodes = a, a = NULL;
  *Nsrc = rows - 1;
done:
  PetscCall(PetscFree(a));
  free(line);
  fclose(f);
  PetscFunctionReturn(0);
}

/*@ HsSolverSetInitialGuessFromFile - HsSolverSetInitialGuess from a
 * trajectory.csv written by hamshoot -o (columns found by name; any N: the
 * trajectory is interpolated). Collective; rank 0 reads the file. @*/
PetscErrorCode HsSolverSetInitialGuessFromFile(HsSolver s, const char *path)
{
  PetscMPIInt rank;
  PetscReal  *nodes                         = NULL;
  PetscInt    Nsrc                          = 0, w;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBeginUser;
  PetscCheck(s->prob, s->comm, PETSC_ERR_ORDER, "HsSolverSetInitialGuessFromFile() needs the problem first");
  w = 4 * s->prob->n;
  PetscCallMPI(MPI_Comm_rank(s->comm, &rank));
  if (rank == 0)
    PetscCall(ReadTrajectory(path, s->prob->n, &nodes, &Nsrc, msg, sizeof msg));
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, s->comm));
  PetscCheck(!msg[0], s->comm, PETSC_ERR_FILE_READ, "%s", msg);
  PetscCallMPI(MPI_Bcast(&Nsrc, 1, MPIU_INT, 0, s->comm));
  if (rank)
    PetscCall(PetscMalloc1((Nsrc + 1) * w, &nodes));
  PetscCallMPI(MPI_Bcast(nodes, (PetscMPIInt)((Nsrc + 1) * w), MPIU_REAL, 0, s->comm));
  PetscCall(HsSolverSetInitialGuess(s, Nsrc, nodes));
  PetscCall(PetscFree(nodes));
  PetscFunctionReturn(0);
}

/* Writes the guess into X (transcription: the DMDA node layout; shooting: the
 * segment starts z_s = (x_{k_s}, lambda_{k_s+1/2})). Collective. */
PetscErrorCode HsGuessFill(HsSolver s, Vec X)
{
  PetscInt  dim = 2 * s->prob->n, w = 2 * dim;
  PetscReal row[64];

  PetscFunctionBeginUser;
  if (s->bvp_type == HS_BVP_TRANSCRIPTION) {
    PetscScalar **x;
    PetscInt      xs, xm;
    PetscCall(DMDAVecGetArrayDOF(s->da, X, &x));
    PetscCall(DMDAGetCorners(s->da, &xs, NULL, NULL, &xm, NULL, NULL));
    for (PetscInt k = xs; k < xs + xm; k++) {
      GuessRow(s, k, row);
      for (PetscInt i = 0; i < w; i++)
        x[k][i] = row[i];
    }
    PetscCall(DMDAVecRestoreArrayDOF(s->da, X, &x));
  } else {
    HsShoot     *sh = &s->shoot;
    PetscScalar *z;
    PetscCall(VecGetArray(X, &z));
    for (PetscInt t = sh->s0; t < sh->s1; t++) {
      GuessRow(s, sh->knots[t], row);
      for (PetscInt i = 0; i < w; i++)
        z[(t - sh->s0) * w + i] = row[i];
      sh->marched[t - sh->s0] = PETSC_FALSE;
    }
    PetscCall(VecRestoreArray(X, &z));
  }
  PetscFunctionReturn(0);
}
