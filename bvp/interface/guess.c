/* hamshoot: initial guesses from a given trajectory (docs/theory.md section 3,
 * initial guesses: warm start from a saved solution, grid sequencing).
 *
 * A guess is a node array of Nsrc+1 rows (x_k, lambda_{k+1/2}), 4n values each
 * (the layout of HsSolverGetSolution and of trajectory.csv), on a uniform grid
 * of the same horizon. For the solver's N it is interpolated linearly in time:
 * x_k at t_k = k T / N from the nodes j T / Nsrc, lambda_{k+1/2} at the interval
 * midpoints (k + 1/2) T / N from (j + 1/2) T / Nsrc (constant beyond the first
 * and the last midpoint). With Nsrc = N that is the array itself.
 *
 * A guess whose costates are node values (guess_nodal: the solution of -hs_scheme conserving4, whose
 * grids -hs_extrapolate and -hs_study sequence) is interpolated at the nodes, states and costates alike,
 * by the cubic through the four nearest source nodes (Nsrc >= 3): an error O(h^4) where linear
 * interpolation leaves O(h^2), and no half-interval shift of the costates. HsSolverGuessRowAt
 * evaluates it between the nodes too (conserving4's stage nodes).
 */
#include "hsbvpimpl.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The cubic through source nodes j-1 .. j+2 (j clamped to [1, Nsrc-2], so it extrapolates a little beyond the
 * ends) at source position pos, every one of the w components into row. */
static void InterpCubic(const PetscReal *g, PetscInt Nsrc, PetscInt w, PetscReal pos, PetscReal *row)
{
  PetscInt  j = PetscMin(PetscMax((PetscInt)PetscFloorReal(pos), 1), Nsrc - 2);
  PetscReal a = pos - (PetscReal)j, c[4];

  c[0] = -a * (a - 1) * (a - 2) / 6, c[1] = (a + 1) * (a - 1) * (a - 2) / 2;
  c[2] = -(a + 1) * a * (a - 2) / 2, c[3] = (a + 1) * a * (a - 1) / 6;
  for (PetscInt i = 0; i < w; i++)
    row[i] = c[0] * g[(j - 1) * w + i] + c[1] * g[j * w + i] + c[2] * g[(j + 1) * w + i] + c[3] * g[(j + 2) * w + i];
}

/* Row k of the stored guess, interpolated to the solver's grid; the given boundary data win. */
static void InterpolatedRow(HsSolver s, PetscInt k, PetscReal *row)
{
  PetscInt  dim = 2 * s->prob->n, w = 2 * dim, Nsrc = s->guess_N;
  PetscReal r = (PetscReal)Nsrc / (PetscReal)s->N;
  if (s->guess_nodal && Nsrc >= 3)
    InterpCubic(s->guess, Nsrc, w, k * r, row);
  for (PetscInt i = 0; i < dim && !(s->guess_nodal && Nsrc >= 3); i++) {
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

/*@ HsSolverFrameGuessUsed - whether the default guess is the geodesic frame guess (bvp/ internal): no stored guess,
    a problem with frames (HsProblem.nframes), and HsProblemFrameGuess succeeded for this N and T (computed here once
    per N and T; where it fails, the straight blend of HsSolverGuessRow stays the guess). Not collective. @*/
PetscErrorCode HsSolverFrameGuessUsed(HsSolver s, PetscBool *used)
{
  PetscFunctionBeginUser;
  *used = PETSC_FALSE;
  if (s->guess || s->prob->nframes <= 0)
    PetscFunctionReturn(0);
  if (s->frame_guess_N != s->N || s->frame_guess_T != s->prob->T) {
    PetscCall(PetscFree(s->frame_guess));
    PetscCall(PetscMalloc1((s->N + 1) * 2 * s->prob->n, &s->frame_guess));
    s->frame_guess_N = s->N, s->frame_guess_T = s->prob->T;
    if (HsProblemFrameGuess(s->prob, (int)s->N, s->frame_guess))
      PetscCall(PetscFree(s->frame_guess));
  }
  *used = (PetscBool)(s->frame_guess != NULL);
  PetscFunctionReturn(0);
}

/*@ HsSolverGuessRow - row k (0 <= k <= N) of the initial guess in the node layout,
    (x_k, lambda_{k+1/2}), 4n values (bvp/ internal; the formulations' guess operations use it).

  Not collective. From the guess of HsSolverSetInitialGuess() if there is one, interpolated in time;
  otherwise the default guess of docs/theory.md section 3: the boundary states interpolated linearly,
  x_k = (1 - k/N) x0 + (k/N) xT (a free terminal component keeps its initial value), lambda = 0; for a problem with
  frames the geodesic frame guess's states (HsSolverFrameGuessUsed), lambda = 0.
@*/
PetscErrorCode HsSolverGuessRow(HsSolver s, PetscInt k, PetscReal *row)
{
  const HsProblem *P   = s->prob;
  PetscInt         dim = 2 * P->n;
  PetscReal        tau = (PetscReal)k / s->N;

  PetscBool frames;

  PetscFunctionBeginUser;
  PetscCall(HsSolverFrameGuessUsed(s, &frames));
  if (s->guess)
    InterpolatedRow(s, k, row);
  else if (frames)
    for (PetscInt i = 0; i < dim; i++) {
      row[i]       = s->frame_guess[k * dim + i];
      row[dim + i] = 0;
    }
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

/*@ HsSolverGuessRowAt - the stored guess (HsSolverSetInitialGuess(), costates at the nodes: guess_nodal) at the
    fractional grid position pos (time pos T / N), interpolated as HsSolverGuessRow does, without the boundary data
    (bvp/ internal; conserving4's stage nodes). Not collective. @*/
PetscErrorCode HsSolverGuessRowAt(HsSolver s, PetscReal pos, PetscReal *row)
{
  PetscInt  w = 4 * s->prob->n, Nsrc = s->guess_N;
  PetscReal p = pos * (PetscReal)Nsrc / (PetscReal)s->N;

  PetscFunctionBeginUser;
  PetscCheck(s->guess && s->guess_nodal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no guess with node costates");
  if (Nsrc >= 3)
    InterpCubic(s->guess, Nsrc, w, p, row);
  else
    for (PetscInt i = 0; i < w; i++)
      row[i] = Interp(s->guess, Nsrc, w, i, p, PETSC_FALSE);
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

/*@ HsSolverSetInitialGuess - makes the next solves start from a given trajectory instead of the default guess.

  Collective.

  Input Parameters:
+ s     - the solver
. Nsrc  - the number of intervals of the trajectory, Nsrc >= 1
- nodes - (Nsrc+1) rows (x_k, lambda_{k+1/2}), 4n values each (lambda_{Nsrc+1/2} is ignored)

  Notes:
  The trajectory is interpolated to the solver's N. Every rank passes the same array. The array is copied. With a
  warm start (continuation) only the first solve uses it.

.seealso: HsSolverGetInitialGuess(), HsSolverSetInitialGuessFromFile(), HsSolverSetInitialGuessType()
@*/
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
  s->guess_nodal = PETSC_FALSE; /* costates on the interval midpoints unless the caller says otherwise */
  s->guess_T = 0; /* a free final time starts from the problem's guess unless the caller says otherwise */
  PetscCall(PetscStrncpy(s->guess_source, "a trajectory given by HsSolverSetInitialGuess", sizeof s->guess_source));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInitialGuess - gets the stored initial guess.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameters:
+ Nsrc  - the number of intervals of the guess (0 if none)
- nodes - Nsrc+1 rows of 4n values, as given to HsSolverSetInitialGuess() (NULL if none)

.seealso: HsSolverSetInitialGuess(), HsSolverSetInitialGuessFromFile()
@*/
PetscErrorCode HsSolverGetInitialGuess(HsSolver s, PetscInt *Nsrc, const PetscReal **nodes)
{
  PetscFunctionBeginUser;
  *Nsrc  = s->guess ? s->guess_N : 0;
  *nodes = s->guess;
  PetscFunctionReturn(0);
}

/* Reads the 2n columns of kind 0 (states) or 1 (costates) of a CSV file written by -o into *a (rows x 2n), and
 * with t its column t (which must be there), on rank 0: a regular file (HsFileOpenRegular) read by
 * HsTrajectoryRead (problems/trajcsv.c). *a is NULL with msg empty when the header lacks them and optional is set;
 * errors name the file and line in msg. */
static PetscErrorCode ReadColumns(const char *path, const HsProblem *P, int kind, PetscBool optional, PetscReal **a,
                                  PetscReal **t, PetscInt *rows, char *msg, size_t msglen)
{
  FILE  *f;
  int    n = 0, st;
  double *A = NULL, *Tc = NULL;

  PetscFunctionBeginUser;
  msg[0] = 0, *a = NULL, *rows = 0;
  if (t)
    *t = NULL;
  if (!(f = HsFileOpenRegular(path, "-hs_init", HS_INIT_MAX_BYTES, msg, msglen)))
    PetscFunctionReturn(0);
  st = HsTrajectoryRead(f, path, P, kind, optional, &A, t ? &Tc : NULL, &n, msg, msglen);
  fclose(f);
  PetscCheck(st == HS_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_MEM, "-hs_init %s: out of memory reading it", path);
  if (A) { /* into PETSc's memory (PetscReal: double in every build hamshoot supports) */
    PetscCall(PetscMalloc1((size_t)n * 2 * P->n, a));
    for (size_t i = 0; i < (size_t)n * 2 * P->n; i++)
      (*a)[i] = A[i];
    if (t) {
      PetscCall(PetscMalloc1(n, t));
      for (int k = 0; k < n; k++)
        (*t)[k] = Tc[k];
    }
  }
  *rows = n;
  free(A), free(Tc);
  PetscFunctionReturn(0);
}

/* The path of the output file name in the directory of the file traj. */
static void Beside(const char *traj, const char *name, char *path, size_t len)
{
  const char *slash = strrchr(traj, '/');
  snprintf(path, len, "%.*s%s", slash ? (int)(slash - traj + 1) : 0, traj, name);
}

/* The "T" of summary.json's text at p (after the key; a free final time's solution): a positive finite decimal
 * number, else -1. */
static PetscReal SummaryT(const char *p)
{
  char   num[64];
  size_t n = HsDecimalLength(p += strspn(p, " "), 1);
  double T = n && n < sizeof num ? (memcpy(num, p, n), num[n] = 0, strtod(num, NULL)) : -1;

  return T > 0 && PetscIsNormalReal(T) ? T : -1;
}

/* The value of summary.json's "N" at p (after the key): a whole decimal number within int, followed by a delimiter;
 * -2 if it is none (round 19: atoi had read 4294967316 as 20, 1e400 as 1, 20.5 as 20 and "20" as 0). */
static int SummaryN(const char *p)
{
  long long v = 0;
  size_t    i = strspn(p, " \t"), d = i;

  while (p[i] >= '0' && p[i] <= '9' && v <= INT_MAX)
    v = 10 * v + (p[i++] - '0');
  return i > d && v <= INT_MAX && (!p[i] || strchr(",} \t\r\n", p[i])) ? (int)v : -2;
}

/* Whether the JSON string at q (summary.json's "problem" value, from its opening quote) is the problem name want as
 * hamshoot writes it (HsJsonString: escaped), compared whole; that string unescaped (\" and \\; other escapes as
 * they stand), cut to fit, in name for the warning. Round 24: sscanf of the raw text up to the first quote had read
 * o"brien's summary as 'o\' (a false warning for the same problem, and none for a problem named o\). */
static PetscBool SummaryNameIs(const char *q, const char *want, char *name, size_t len)
{
  char     *esc = NULL;
  size_t    n = 0, j = 1, k = 0;
  FILE     *m = open_memstream(&esc, &n);
  PetscBool same;

  for (; q[j] && q[j] != '"'; j++) { /* an escape is two characters: its second is never the closing quote */
    int two = q[j] == '\\' && q[j + 1];
    if (two && q[j + 1] != '"' && q[j + 1] != '\\' && k + 1 < len)
      name[k++] = '\\';
    j += (size_t)two;
    if (k + 1 < len)
      name[k++] = q[j];
  }
  name[k] = 0;
  if (!m) /* out of memory: compare the unescaped text instead */
    return (PetscBool)!strcmp(name, want);
  HsJsonString(m, want);
  fclose(m);
  same = (PetscBool)(q[j] == '"' && strlen(esc) == j + 1 && !strncmp(esc, q, j + 1));
  free(esc);
  return same;
}

/* The column t of a trajectory.csv (n rows) against this problem: t_0 = 0, strictly increasing, and, for a fixed
 * final time, t_N = T (to 1e-9 relative): a file of another problem, another T or a hand-edited one is an error
 * in msg (it would be interpolated onto the wrong times). A free T's file ends at its own T. The summary.json beside
 * it (if any) must name the number of intervals the file has ("N": one without is an error) and, for a free T, the T it
 * ends at; another problem's
 * name is said in a warning (a problem file and its built-in twin share their columns). */
static void CheckTime(const char *traj, const HsProblem *P, const PetscReal *t, PetscInt n, char *msg, size_t msglen)
{
  char        sum[PETSC_MAX_PATH_LEN], text[4096] = "", name[2 * HS_NAME_LEN + 2] = "";
  PetscBool   same = PETSC_TRUE;
  const char *p;
  FILE       *f;
  int         N = -1;
  struct stat st;

  if (HsTrajectoryCheckTime(traj, P, t, (int)n, msg, msglen))
    return;
  Beside(traj, "summary.json", sum, sizeof sum);
  if (stat(sum, &st) && errno == ENOENT) /* none beside it (a file of the user's) */
    return;
  if (!(f = HsFileOpenRegular(sum, "-hs_init", 1 << 20, text, sizeof text))) { /* round 19: a FIFO, a device, a
                                                                           huge file there had skipped the check */
    snprintf(msg, msglen, "%s (the summary.json beside the trajectory)", text);
    return;
  }
  text[fread(text, 1, sizeof text - 1, f)] = 0;
  fclose(f);
  p = strstr(text, "\"N\":");
  {
    const char *q = strstr(text, "\"problem\": \"");
    if (p)
      N = SummaryN(p + 4);
    if (q)
      same = SummaryNameIs(q + 11, P->name, name, sizeof name);
  }
  if (!p) /* round 22: a summary.json without "N" (not JSON, empty, another program's) had been taken without a word */
    snprintf(msg, msglen,
             "-hs_init %s: the summary.json beside it names no \"N\" (not hamshoot's, or damaged): remove it, or "
             "put the trajectory where no other run's files are",
             traj);
  else if (N == -2)
    snprintf(msg, msglen,
             "-hs_init %s: the summary.json beside it has an \"N\" that is not a whole number of intervals "
             "(not hamshoot's, or damaged)",
             traj);
  else if (P->free_T && (p = strstr(text, "\"T\":")) && SummaryT(p + 4) < 0)
    snprintf(msg, msglen,
             "-hs_init %s: the summary.json beside it has a \"T\" that is not a positive finite number "
             "(not hamshoot's, or damaged)",
             traj);
  else if (P->free_T && p && PetscAbsReal(SummaryT(p + 4) - t[n - 1]) > 1e-9 * t[n - 1])
    snprintf(msg, msglen, /* round 19: the summary's T had been the guess's, whatever the file's t (100 against 2.06) */
             "-hs_init %s: t ends at %.17g, but the summary.json beside it says T = %.17g (files of two runs mixed?)",
             traj, (double)t[n - 1], (double)SummaryT(p + 4));
  else if (N >= 0 && N != n - 1)
    snprintf(msg, msglen,
             "-hs_init %s: %d nodes, but the summary.json beside it says N = %d (files of two runs mixed?)", traj,
             (int)n, N);
  else if (!same)
    PetscPrintf(PETSC_COMM_SELF, "hamshoot: warning: -hs_init %s was written for problem '%s', this run solves '%s'\n",
                traj, HsPrintable(name), P->name);
}

/* The guess of -hs_init PATH on rank 0: PATH is an output directory or its trajectory.csv (the states
 * on the nodes); the costates come from intervals.csv beside it (or, in the single file that
 * hamshoot wrote before intervals.csv existed, from the trajectory's own lambda columns), a free
 * final time from its summary.json. */
static PetscErrorCode ReadTrajectory(const char *path, const HsProblem *P, PetscReal **nodes, PetscInt *Nsrc,
                                     PetscReal *T, char *msg, size_t msglen)
{
  char       traj[PETSC_MAX_PATH_LEN], ints[PETSC_MAX_PATH_LEN];
  PetscReal *X = NULL, *L = NULL, *tx = NULL;
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
  PetscCall(ReadColumns(traj, P, 0, PETSC_FALSE, &X, &tx, &nx, msg, msglen));
  if (!msg[0] && nx < 2)
    snprintf(msg, msglen, "-hs_init %s: %d rows of data, need at least 2 (nodes t_0..t_N)", traj, (int)nx);
  if (!msg[0])
    CheckTime(traj, P, tx, nx, msg, msglen);
  if (!msg[0]) /* the costates in the same file (older outputs)? */
    PetscCall(ReadColumns(traj, P, 1, PETSC_TRUE, &L, NULL, &nl, msg, msglen));
  if (!msg[0] && !L) {
    PetscCall(ReadColumns(ints, P, 1, PETSC_FALSE, &L, NULL, &nl, msg, msglen));
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
    *T    = P->free_T ? tx[nx - 1] : 0; /* the file's own final time (its summary's T, if any, checked equal) */
  }
  PetscCall(PetscFree(X));
  PetscCall(PetscFree(L));
  PetscCall(PetscFree(tx));
  PetscFunctionReturn(0);
}

/* Rank 0: whether -hs_init path names a trajectory.h5 (-hs_output_format hdf5), its path then in h5: a directory
 * with trajectory.h5 and no trajectory.csv, or a file named *.h5 or beginning with HDF5's signature. */
static int HDF5Path(const char *path, char *h5, size_t len)
{
  char        buf[8] = "", msg[8];
  size_t      l      = strlen(path);
  struct stat st;
  FILE       *f;

  if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
    snprintf(h5, len, "%s/trajectory.csv", path);
    if (!lstat(h5, &st))
      return 0;
    snprintf(h5, len, "%s/trajectory.h5", path);
    return !lstat(h5, &st);
  }
  snprintf(h5, len, "%s", path);
  if (l > 3 && !strcmp(path + l - 3, ".h5"))
    return 1;
  if (!(f = HsFileOpenRegular(path, "-hs_init", 0, msg, sizeof msg)))
    return 0; /* the CSV reader says why */
  l = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return l == sizeof buf && !memcmp(buf, "\x89HDF\r\n\x1a\n", sizeof buf);
}

/*@ HsSolverSetInitialGuessFromFile - HsSolverSetInitialGuess from a trajectory.csv written by hamshoot -o.

  Collective.

  Input Parameters:
+ s    - the solver
- path - the trajectory.csv (columns found by name; any N: the trajectory is interpolated), a trajectory.h5
         (-hs_output_format hdf5: each rank reads its part), or the output directory holding either

  Options Database Key:
. -hs_init <file> - the same

  Notes:
  Rank 0 reads a CSV file; every rank reads its part of an HDF5 one. Either way every rank then keeps the whole
  guess (HsSolverSetInitialGuess).

.seealso: HsSolverSetInitialGuess(), HsSolverGetInitialGuess(), HsSolverWriteOutput()
@*/
PetscErrorCode HsSolverSetInitialGuessFromFile(HsSolver s, const char *path)
{
  PetscMPIInt rank;
  PetscReal  *nodes                         = NULL, T = 0;
  PetscInt    Nsrc                          = 0, w;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "", h5path[PETSC_MAX_PATH_LEN + 16];
  int         h5                            = 0;

  PetscFunctionBeginUser;
  PetscCheck(s->prob, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER, "HsSolverSetInitialGuessFromFile() needs the problem first");
  w = 4 * s->prob->n;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank == 0)
    h5 = HDF5Path(path, h5path, sizeof h5path);
  PetscCallMPI(MPI_Bcast(&h5, 1, MPI_INT, 0, PetscObjectComm((PetscObject)s)));
  if (h5) { /* each rank reads its part (bvp/interface/outputh5.c) */
    PetscCallMPI(MPI_Bcast(h5path, sizeof h5path, MPI_CHAR, 0, PetscObjectComm((PetscObject)s)));
    PetscCall(HsSolverReadTrajectoryHDF5(s, h5path, &Nsrc, &nodes, &T));
    PetscCall(HsSolverSetInitialGuess(s, Nsrc, nodes));
    s->guess_T = s->prob->free_T ? T : 0;
    PetscCall(PetscSNPrintf(s->guess_source, sizeof s->guess_source, "-hs_init %s", path));
    PetscCall(PetscFree(nodes));
    PetscFunctionReturn(0);
  }
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
  PetscCall(PetscSNPrintf(s->guess_source, sizeof s->guess_source, "-hs_init %s", path));
  PetscCall(PetscFree(nodes));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetInitialGuessType - sets where the initial guess comes from.

  Collective.

  Input Parameters:
+ s    - the solver
- type - HS_GUESS_DEFAULT (the stored guess, or the boundary states interpolated with lambda = 0) or
         HS_GUESS_DIRECT (the direct solution on the same grid with the same state scheme, IPOPT unless
         HsSolverSetDirectSolver(s, HS_DIRECT_KKT); its options under the prefix -hs_direct_, e.g.
         -hs_direct_hs_ipopt_tol)

  Options Database Key:
. -hs_initial_guess <default|direct> - the same

.seealso: HsSolverGetInitialGuessType(), HsSolverSetInitialGuess(), HsSolverSetDirectSolver()
@*/
PetscErrorCode HsSolverSetInitialGuessType(HsSolver s, HsGuessType type)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->guess_type = type;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInitialGuessType - gets where the initial guess comes from.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. type - the setting of HsSolverSetInitialGuessType()

.seealso: HsSolverSetInitialGuessType()
@*/
PetscErrorCode HsSolverGetInitialGuessType(HsSolver s, HsGuessType *type)
{
  PetscFunctionBeginUser;
  *type = s->guess_type;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetGuessCostates - sets where the initial guess's costates come from.

  Logically collective.

  Input Parameters:
+ s  - the solver
- gc - HS_GUESS_COSTATES_GIVEN (the default): those of the guess, lambda = 0 in the default guess;
       HS_GUESS_COSTATES_IMPLIED: computed from the guess's states (the default guess or -hs_init's), per interval
       the least-squares control u and constraint force gamma of [-G^T B](gamma, u) = (p_{k+1} - p_k)/h + grad_q E
       at the midpoint, lambda^p the least-squares solution of B^T lambda^p = R u, G lambda^p = 0, and
       lambda^q = -M (lambda^p)' by differences (docs/constrained.md, "Costates implied by the states")

  Options Database Key:
. -hs_guess_costates <given|implied> - the same

  Notes:
  IMPLIED needs a constrained system (holonomic constraints) and the second-order scheme (not -hs_scheme
  conserving4), in any formulation (IPOPT takes the guess's states); a solve of any other
  problem with it stops with an error. The constraint forces gamma of the guess stay the rest forces (the
  implied gamma, measured, makes the satellite's guess worse: docs/constrained.md).

.seealso: HsSolverGetGuessCostates(), HsSolverSetInitialGuess(), HsSolverSetInitialGuessType()
@*/
PetscErrorCode HsSolverSetGuessCostates(HsSolver s, HsGuessCostates gc)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->guess_costates = gc;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetGuessCostates - gets where the initial guess's costates come from.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. gc - the setting of HsSolverSetGuessCostates()

.seealso: HsSolverSetGuessCostates()
@*/
PetscErrorCode HsSolverGetGuessCostates(HsSolver s, HsGuessCostates *gc)
{
  PetscFunctionBeginUser;
  *gc = s->guess_costates;
  PetscFunctionReturn(0);
}
