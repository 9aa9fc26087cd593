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
#include <stdlib.h>
#include <string.h>

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

/* Row k of the stored guess, interpolated to the solver's grid; the given boundary data win. */
static void InterpolatedRow(HsSolver s, PetscInt k, PetscReal *row)
{
  PetscInt  dim = 2 * s->prob->n, w = 2 * dim, Nsrc = s->guess_N;
  PetscReal r = (PetscReal)Nsrc / (PetscReal)s->N;
  for (PetscInt i = 0; i < dim; i++) {
    row[i]       = Interp(s->guess, Nsrc, w, i, k * r, PETSC_FALSE);
    row[dim + i] = k < s->N ? Interp(s->guess, Nsrc, w, dim + i, (k + 0.5) * r - 0.5, PETSC_TRUE) : 0;
  }
  if (k == 0)
    for (PetscInt i = 0; i < dim; i++)
      row[i] = s->prob->x0[i];
  if (k == s->N)
    for (PetscInt i = 0; i < dim; i++)
      if (s->prob->xT_fixed[i])
        row[i] = s->prob->xT[i];
}

/*@ HsSolverGuessRow - row k (0 <= k <= N) of the initial guess in the node layout,
    (x_k, lambda_{k+1/2}), 4n values (bvp/ internal; the formulations' guess operations use it).

  Not collective. From the guess of HsSolverSetInitialGuess() if there is one, interpolated in time;
  otherwise the default guess of DESIGN.md section 3: the boundary states interpolated linearly,
  x_k = (1 - k/N) x0 + (k/N) xT (a free terminal component keeps its initial value), lambda = 0.
@*/
PetscErrorCode HsSolverGuessRow(HsSolver s, PetscInt k, PetscReal *row)
{
  const HsProblem *P   = s->prob;
  PetscInt         dim = 2 * P->n;
  PetscReal        tau = (PetscReal)k / s->N;

  PetscFunctionBeginUser;
  if (s->guess)
    InterpolatedRow(s, k, row);
  else
    for (PetscInt i = 0; i < dim; i++) {
      PetscReal end = P->xT_fixed[i] ? P->xT[i] : P->x0[i];
      row[i]        = (1 - tau) * P->x0[i] + tau * end;
      row[dim + i]  = 0;
    }
  if (k == s->N && P->free_T) /* the slot of a free final time: where a cold start begins */
    row[dim] = HsSolverStartT(s);
  PetscFunctionReturn(0);
}

/*@ HsSolverStartT - the final time a cold start of a free-T problem begins with (bvp/ internal): the T
    of the -hs_init output, else the problem file's guess (the problem's T follows every solver that
    evaluates it, so it is not the guess). Not collective. @*/
PetscReal HsSolverStartT(HsSolver s)
{
  const HsProblem *P = s->prob;
  return s->guess_T > 0 ? s->guess_T : P->T_guess > 0 ? P->T_guess : P->T;
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
  PetscCheck(s->prob, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "HsSolverSetInitialGuess() needs the problem first");
  PetscCheck(Nsrc >= 1, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE, "initial guess: %" PetscInt_FMT " intervals, need >= 1",
             Nsrc);
  w = 4 * s->prob->n;
  for (PetscInt i = 0; i < (Nsrc + 1) * w; i++)
    PetscCheck(!PetscIsInfOrNanReal(nodes[i]) || (i / w == Nsrc && i % w >= w / 2), PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONG,
               "initial guess: value %" PetscInt_FMT " of node %" PetscInt_FMT " is not finite", i % w, i / w);
  PetscCall(PetscFree(s->guess));
  PetscCall(PetscMalloc1((Nsrc + 1) * w, &s->guess));
  PetscCall(PetscArraycpy(s->guess, nodes, (Nsrc + 1) * w));
  s->guess_N = Nsrc;
  s->guess_T = 0; /* a free final time starts from the problem's guess unless the caller says otherwise */
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInitialGuess - the stored initial guess (*nodes NULL and *Nsrc 0 if none): Nsrc+1 rows
    of 4n values, as given to HsSolverSetInitialGuess(). Not collective. @*/
PetscErrorCode HsSolverGetInitialGuess(HsSolver s, PetscInt *Nsrc, const PetscReal **nodes)
{
  PetscFunctionBeginUser;
  *Nsrc  = s->guess ? s->guess_N : 0;
  *nodes = s->guess;
  PetscFunctionReturn(0);
}

/* Finds in a header line (modified) the 2n columns of kind 0 (states) or 1 (costates), named as the
 * outputs name them (HsColumnName: the problem file's coordinate names, or the generic q1, p1,
 * lambda1 of every problem): col[i] is the column of component i (-1 if absent), *ncol the number
 * of columns. */
static void HeaderColumns(char *line, const HsProblem *P, int kind, PetscInt *col, PetscInt *ncol)
{
  char    *save = NULL, *tok = strtok_r(line, ",\n\r", &save), want[2][HS_NAME_LEN + 16];
  PetscInt dim  = 2 * P->n;

  for (PetscInt i = 0; i < dim; i++)
    col[i] = -1;
  *ncol = 0;
  for (PetscInt c = 0; tok; c++, tok = strtok_r(NULL, ",\n\r", &save)) {
    for (PetscInt i = 0; i < dim; i++) {
      HsColumnName(P, kind, (int)i, 0, want[0], sizeof want[0]);
      HsColumnName(P, kind, (int)i, 1, want[1], sizeof want[1]);
      if (!strcmp(tok, want[0]) || !strcmp(tok, want[1]))
        col[i] = c;
    }
    *ncol = c + 1;
  }
}

/* The comma-separated fields of a data line into v (at most ncol): a number, or empty (the last
 * row's interval quantities, read as 0). Returns the number of fields, or -(field + 1) for a
 * field that is not a finite number (its text at *bad, *badlen characters). */
static PetscInt ParseRow(char *line, PetscInt ncol, PetscReal *v, const char **bad, size_t *badlen)
{
  char    *p  = line;
  PetscInt nv = 0;

  while (nv < ncol) {
    char  *end;
    size_t len = strcspn(p, ",\n\r");
    v[nv]      = strtod(p, &end);
    if (end == p && len == 0)
      v[nv] = 0;
    else if (end != p + len || PetscIsInfOrNanReal(v[nv])) {
      *bad = p, *badlen = len;
      return -(nv + 1);
    }
    nv++;
    p += len;
    if (*p != ',')
      break;
    p++;
  }
  return nv;
}

/* Appends a row of w values to a (rows so far, capacity alloc, doubled when full). */
static PetscErrorCode AppendRow(PetscReal **a, PetscInt *rows, PetscInt *alloc, PetscInt w, const PetscReal *v,
                                const PetscInt *col)
{
  PetscFunctionBeginUser;
  if (*rows == *alloc) {
    PetscReal *b;
    *alloc = *alloc ? 2 * *alloc : 1024;
    PetscCall(PetscMalloc1(*alloc * w, &b));
    if (*a)
      PetscCall(PetscArraycpy(b, *a, *rows * w));
    PetscCall(PetscFree(*a));
    *a = b;
  }
  for (PetscInt i = 0; i < w; i++)
    (*a)[*rows * w + i] = v[col[i]];
  (*rows)++;
  PetscFunctionReturn(0);
}

/* Reads the 2n columns of kind 0 (states) or 1 (costates) of a CSV file written by -o into *a
 * (rows x 2n), on rank 0. *a is NULL with msg empty when the header lacks them and optional is
 * set; errors name the file and line in msg. */
static PetscErrorCode ReadColumns(const char *path, const HsProblem *P, int kind, PetscBool optional, PetscReal **a,
                                  PetscInt *rows, char *msg, size_t msglen)
{
  FILE      *f    = fopen(path, "r");
  char      *line = NULL, c0[HS_NAME_LEN + 16], c1[HS_NAME_LEN + 16];
  size_t     cap  = 0;
  PetscInt  *col, ncol = 0, alloc = 0, w = 2 * P->n, lineno = 1;
  PetscReal *v = NULL;
  PetscBool  have = PETSC_TRUE;

  PetscFunctionBeginUser;
  msg[0] = 0, *a = NULL, *rows = 0;
  if (!f) {
    snprintf(msg, msglen, "-hs_init %s: cannot open: %s", path, strerror(errno));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1(w, &col));
  for (PetscInt i = 0; i < w; i++)
    col[i] = -1;
  if (getline(&line, &cap, f) > 0) /* header: find the columns by name */
    HeaderColumns(line, P, kind, col, &ncol);
  for (PetscInt i = 0; i < w; i++)
    have = (PetscBool)(have && col[i] >= 0);
  if (!have && !optional) {
    HsColumnName(P, kind, 0, 0, c0, sizeof c0);
    HsColumnName(P, kind, (int)w - 1, 0, c1, sizeof c1);
    snprintf(msg, msglen,
             "-hs_init %s:1: the header lacks the columns %s..%s of this problem (%s written by hamshoot -o for a "
             "problem with n = %d)",
             path, c0, c1, kind ? "an intervals.csv" : "a trajectory.csv", (int)P->n);
  }
  if (have)
    PetscCall(PetscMalloc1(ncol, &v));
  while (have && !msg[0] && getline(&line, &cap, f) > 0) {
    const char *bad;
    size_t      badlen;
    PetscInt    nv;
    lineno++;
    if (line[0] == '\n' || line[0] == 0)
      continue;
    nv = ParseRow(line, ncol, v, &bad, &badlen);
    if (nv < 0)
      snprintf(msg, msglen, "-hs_init %s:%d: value %d ('%.*s') is not a finite number", path, (int)lineno, (int)-nv,
               (int)(badlen < 40 ? badlen : 40), bad);
    else if (nv != ncol)
      snprintf(msg, msglen, "-hs_init %s:%d: expected %d comma-separated values, found %d", path, (int)lineno,
               (int)ncol, (int)nv);
    else
      PetscCall(AppendRow(a, rows, &alloc, w, v, col));
  }
  if (msg[0])
    PetscCall(PetscFree(*a));
  PetscCall(PetscFree(v));
  PetscCall(PetscFree(col));
  free(line);
  fclose(f);
  PetscFunctionReturn(0);
}

/* The path of the output file name in the directory of the file traj. */
static void Beside(const char *traj, const char *name, char *path, size_t len)
{
  const char *slash = strrchr(traj, '/');
  snprintf(path, len, "%.*s%s", slash ? (int)(slash - traj + 1) : 0, traj, name);
}

/* The "T" of the summary.json in the directory of traj (a free final time's solution), or 0. */
static PetscReal ReadSummaryT(const char *traj)
{
  char      path[PETSC_MAX_PATH_LEN], line[512];
  PetscReal T = 0;
  FILE     *f;

  Beside(traj, "summary.json", path, sizeof path);
  if (!(f = fopen(path, "r")))
    return 0;
  while (fgets(line, sizeof line, f)) {
    char *e, *p = strstr(line, "\"T\":");
    if (p && (T = strtod(p + 4, &e)) > 0 && e != p + 4)
      break;
    T = 0;
  }
  fclose(f);
  return T > 0 && PetscIsNormalReal(T) ? T : 0;
}

/* The guess of -hs_init PATH on rank 0: PATH is an output directory or its trajectory.csv (the states
 * on the nodes); the costates come from intervals.csv beside it (or, in the single file that
 * hamshoot wrote before intervals.csv existed, from the trajectory's own lambda columns), a free
 * final time from its summary.json. */
static PetscErrorCode ReadTrajectory(const char *path, const HsProblem *P, PetscReal **nodes, PetscInt *Nsrc,
                                     PetscReal *T, char *msg, size_t msglen)
{
  char       traj[PETSC_MAX_PATH_LEN], ints[PETSC_MAX_PATH_LEN];
  PetscReal *X = NULL, *L = NULL;
  PetscInt   nx = 0, nl = 0, dim = 2 * P->n;
  PetscBool  isdir;

  PetscFunctionBeginUser;
  *nodes = NULL;
  PetscCall(PetscTestDirectory(path, 'r', &isdir));
  if (isdir)
    snprintf(traj, sizeof traj, "%s/trajectory.csv", path);
  else
    snprintf(traj, sizeof traj, "%s", path);
  Beside(traj, "intervals.csv", ints, sizeof ints);
  PetscCall(ReadColumns(traj, P, 0, PETSC_FALSE, &X, &nx, msg, msglen));
  if (!msg[0] && nx < 2)
    snprintf(msg, msglen, "-hs_init %s: %d rows of data, need at least 2 (nodes t_0..t_N)", traj, (int)nx);
  if (!msg[0]) /* the costates in the same file (older outputs)? */
    PetscCall(ReadColumns(traj, P, 1, PETSC_TRUE, &L, &nl, msg, msglen));
  if (!msg[0] && !L) {
    PetscCall(ReadColumns(ints, P, 1, PETSC_FALSE, &L, &nl, msg, msglen));
    if (!msg[0] && nl != nx - 1)
      snprintf(msg, msglen, "-hs_init %s: %d intervals, but the trajectory.csv beside it has %d nodes (expected %d)",
               ints, (int)nl, (int)nx, (int)(nx - 1));
  }
  if (!msg[0]) {
    PetscCall(PetscCalloc1(nx * 2 * dim, nodes));
    for (PetscInt k = 0; k < nx; k++)
      for (PetscInt i = 0; i < dim; i++) {
        (*nodes)[k * 2 * dim + i] = X[k * dim + i];
        if (k < nx - 1)
          (*nodes)[k * 2 * dim + dim + i] = L[k * dim + i];
      }
    *Nsrc = nx - 1;
    *T    = P->free_T ? ReadSummaryT(traj) : 0;
  }
  PetscCall(PetscFree(X));
  PetscCall(PetscFree(L));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetInitialGuessFromFile - HsSolverSetInitialGuess from a
 * trajectory.csv written by hamshoot -o (columns found by name; any N: the
 * trajectory is interpolated). Collective; rank 0 reads the file. @*/
PetscErrorCode HsSolverSetInitialGuessFromFile(HsSolver s, const char *path)
{
  PetscMPIInt rank;
  PetscReal  *nodes                         = NULL, T = 0;
  PetscInt    Nsrc                          = 0, w;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBeginUser;
  PetscCheck(s->prob, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "HsSolverSetInitialGuessFromFile() needs the problem first");
  w = 4 * s->prob->n;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank == 0)
    PetscCall(ReadTrajectory(path, s->prob, &nodes, &Nsrc, &T, msg, sizeof msg));
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, PetscObjectComm((PetscObject)s)));
  PetscCheck(!msg[0], PetscObjectComm((PetscObject)s), PETSC_ERR_FILE_READ, "%s", msg);
  PetscCallMPI(MPI_Bcast(&Nsrc, 1, MPIU_INT, 0, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Bcast(&T, 1, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
  if (rank)
    PetscCall(PetscMalloc1((Nsrc + 1) * w, &nodes));
  PetscCallMPI(MPI_Bcast(nodes, (PetscMPIInt)((Nsrc + 1) * w), MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
  PetscCall(HsSolverSetInitialGuess(s, Nsrc, nodes));
  s->guess_T = T; /* a free final time: the output's solved T (0: none) */
  PetscCall(PetscFree(nodes));
  PetscFunctionReturn(0);
}
