/* hamshoot: the command-line driver (docs/theory.md section 5). It only composes
 * the library: problem from the options -> solver -> (continuation) -> solve
 * -> summary -> output. `hamshoot -help` lists every option from the options
 * calls themselves.
 *
 *   mpirun -n P hamshoot -problem pendulum -N 20 -hs_scheme conserving -o out/
 *
 * Exit status: 0 converged; 1 bad input or another error (one line
 * "hamshoot: error: ..." from the lowest failing rank; all ranks agree on it,
 * or the job is aborted: AgreeOnFailure); 2 the solve did not converge
 * (outputs are still written, with "converged": false); 3 interrupted by
 * SIGTERM/SIGINT (a checkpoint is written, the previous output is left
 * intact; resume with -hs_restart); 4 ended by the watchdog (HsSetTermGrace);
 * 5 interrupted, but the checkpoint could not be written (Interrupted). */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hsbvp.h"
#include "sys/hssys.h"

static const char help[] = "hamshoot: indirect optimal control of mechanical systems with Hamiltonian-conserving\n"
                           "discrete necessary conditions, solved as a distributed boundary-value problem.\n\n"
                           "Usage: mpirun -n P hamshoot -problem NAME|FILE.ocp [options]; all options below.\n\n";

/* Keeps the first error message of a failed PETSc call so that main can
 * report it in one clean line instead of a traceback. */
static char hs_errmsg[1024];
static int  hs_problem_read = 0; /* the problem has been read: an out-of-memory after it is the grid's */

static PetscErrorCode CaptureError(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                                   PetscErrorType p, const char *mess, void *ctx)
{
  (void)comm, (void)line, (void)file, (void)ctx;
  if (p == PETSC_ERROR_INITIAL) {
    if ((n == PETSC_ERR_MEM || !strncmp(fun, "PetscMalloc", 11)) && !hs_problem_read)
      snprintf(hs_errmsg, sizeof hs_errmsg,
               "out of memory reading the problem (in %s): its expressions and their symbolic derivatives (up to the "
               "third, whose number grows with the cube of the coordinates) need more memory than this rank can get; "
               "simplify the problem file, or run where a rank has more memory",
               mess && mess[0] ? mess : fun);
    else if (n == PETSC_ERR_MEM || !strncmp(fun, "PetscMalloc", 11)) /* PETSc's malloc names its caller in mess */
      snprintf(hs_errmsg, sizeof hs_errmsg,
               "out of memory (in %s): this problem at this N needs more memory than this rank can get; use fewer "
               "intervals (-N), more ranks or nodes, or -hs_bvp_type shooting",
               mess && mess[0] ? mess : fun);
    else if (mess && mess[0])
      snprintf(hs_errmsg, sizeof hs_errmsg, "%s", mess);
    else
      snprintf(hs_errmsg, sizeof hs_errmsg, "PETSc error %d in %s", (int)n, fun);
    HsPrintable(hs_errmsg); /* an argument's escape sequence or newline quoted in it must not reach the terminal */
  }
  return n;
}

/* What the driver does besides the solve (-hs_compare, -hs_extrapolate, -hs_study). */
typedef struct {
  PetscBool compare, extrapolate;
  PetscBool coarse_first; /* -hs_extrapolate_coarse_first: HsSolverSolveExtrapolated */
  PetscInt  study;        /* grids of a convergence study; 0: none */
  PetscInt  extremal;     /* -hs_check_extremal: 0 auto, 1 yes, 2 no */
} Extras;

/* The driver's own options: -N, -o, -quiet, -hs_compare, -hs_extrapolate, -hs_study. The -o directory
 * is created and tried now, so that a bad one is an error before the solve, not after it. */
static PetscErrorCode DriverOptions(HsSolver s, char *out, size_t len, PetscBool *quiet, Extras *x)
{
  PetscInt    N;
  PetscBool   flg;
  const char *raw;

  PetscFunctionBeginUser;
  out[0] = 0, *quiet = PETSC_FALSE;
  PetscCall(HsSolverGetNumIntervals(s, &N));
  PetscCall(PetscOptionsFindPair(NULL, NULL, "-o", &raw, &flg));
  PetscCheck(!flg || !raw || strlen(raw) < len - 32, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-o: the directory name has %zu characters, more than the %zu this system's paths allow",
             strlen(raw ? raw : ""), len - 32);
  for (const char *c = flg && raw ? raw : ""; *c; c += strcspn(c, "/"), c += *c == '/') {
    /* a part of -o longer than a file name may be was named as the checkpoint below it, which the set-up looks
       at first ("checkpoint directory 'DIR/checkpoint': cannot look at ...": issue 38, round 22) */
    size_t n = strcspn(c, "/");
    PetscCheck(n <= NAME_MAX, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "-o: a part of the directory name has %zu characters, more than the %d a file name may have", n,
               NAME_MAX);
  }
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "hamshoot executable", "");
  HsOptionsCall(HsOptionsInt(PetscOptionsObject, "-N", "number of uniform time intervals (default: the problem's)",
                             "HsSolverSetNumIntervals", N, &N, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
  if (flg)
    HsOptionsCall(HsSolverSetNumIntervals(s, N));
  HsOptionsCall(PetscOptionsString(
      "-o",
      "write DIR/summary.json, DIR/trajectory.csv (nodes) and DIR/intervals.csv (intervals) (atomically; "
      "-hs_output_format hdf5: DIR/trajectory.h5)",
      "HsSolverWriteOutput", out, out, len, &flg));
  HsOptionsCheck(!flg || out[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-o needs a directory name");
  HsOptionsCall(HsOptionsBool(PetscOptionsObject, "-quiet", "no per-iteration progress lines (-hs_monitor false)",
                              "HsSolverSetMonitor", *quiet, quiet, NULL));
  x->compare = x->extrapolate = PETSC_FALSE, x->study = 0;
  HsOptionsCall(
      HsOptionsBool(PetscOptionsObject, "-hs_compare",
                    "solve the indirect and the direct problem (same state scheme, same grid) and compare them: "
                    "DIR (-o, default 'compare')/compare.json, series.csv, compare.gp, PNG plots",
                    "HsSolverCompare", x->compare, &x->compare, NULL));
  HsOptionsCall(
      HsOptionsBool(PetscOptionsObject, "-hs_extrapolate",
                    "after the solve, also solve at N/2 and N/4: Richardson's extrapolation of the cost, the mean "
                    "Hamiltonian, T and the states, with error estimates (summary.json, extrapolated.csv)",
                    "HsSolverExtrapolate", x->extrapolate, &x->extrapolate, NULL));
  x->coarse_first = PETSC_TRUE;
  HsOptionsCall(HsOptionsBool(PetscOptionsObject, "-hs_extrapolate_coarse_first",
                              "-hs_extrapolate solves N/4 first (from the start), N/2 from it, N from N/2 (grid "
                              "sequencing; false: N first, then N/2 and N/4 from it)",
                              "HsSolverSolveExtrapolated", x->coarse_first, &x->coarse_first, NULL));
  HsOptionsCall(HsOptionsInt(PetscOptionsObject, "-hs_study",
                             "after the solve at N, a convergence study on the grids N 2^i, i < LEVELS: table, "
                             "DIR (-o, default 'study')/study.json, study.csv, study.png; a grid Newton fails is "
                             "retried by -hs_strategy auto, one that still fails ends it (exit 2, the grids before "
                             "it written); -hs_grid_snes_*: the SNES options of its grids",
                             "HsSolverConvergenceStudy", x->study, &x->study, &flg, 3, 20));
  {
    static const char *const ex[] = {"auto", "yes", "no"};
    x->extremal                   = 0;
    HsOptionsCall(
        PetscOptionsEList("-hs_check_extremal",
                          "after a converged solve, the direct problem by IPOPT from it and from 7 starts (the "
                          "default guess, the N/2 minimum refined, mirrored, 4 perturbed), and Newton at N/2: is "
                          "it a local minimum, is there a lower one, has it a counterpart at N/2 (auto: when "
                          "N (m + 2n) <= 10000)",
                          "HsSolverCheckExtremal", ex, 3, ex[0], &x->extremal, NULL));
  }
  PetscOptionsEnd();
  if (x->extremal == 1) { /* asked for: without IPOPT an error now, not a note after the solve */
    PetscBool avail;
    char      why[192];
    PetscCall(HsIpoptAvailable(PETSC_COMM_WORLD, &avail, why, sizeof why));
    PetscCheck(avail, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-hs_check_extremal yes: %s", why);
  }
  PetscFunctionReturn(0);
}

/* Whether -hs_check_extremal asks for the guard: yes, or auto and the NLP is small. */
static PetscBool CheckExtremal(HsSolver s, const Extras *x)
{
  HsProblem *P;
  PetscInt   N;

  if (x->extremal != 0)
    return (PetscBool)(x->extremal == 1);
  if (HsSolverGetProblem(s, &P) || HsSolverGetNumIntervals(s, &N))
    return PETSC_FALSE;
  return (PetscBool)((PetscReal)N * (P->m + 2 * P->n) <= HS_EXTREMAL_MAX_VARIABLES);
}

/* The exit status of a solve that a signal stopped, its message printed: 3 (HS_EXIT_INTERRUPTED) when the checkpoint
 * the signal asked for is written (or the driver writes none there), 5 (HS_EXIT_UNSAVED) when it could not be (round
 * 25: 3 had promised a batch script that resubmits with -hs_restart a checkpoint that was not there). */
static PetscErrorCode Interrupted(HsSolver solver, const char *why, int *code)
{
  PetscBool unsaved;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetInterruptUnsaved(solver, &unsaved));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hamshoot: interrupted: %s\n", why));
  *code = unsaved ? HS_EXIT_UNSAVED : HS_EXIT_INTERRUPTED;
  PetscFunctionReturn(0);
}

/* The solve (a continuation, or -hs_compare) and its report; *code: the exit status. */
static PetscErrorCode Solve(HsSolver solver, HsContinuation cont, const char *out, const Extras *x, int *code)
{
  PetscBool   reached, interrupted;
  const char *why;
  HsResults   res;
  PetscInt    stages;
  PetscBool   seq;

  PetscFunctionBeginUser;
  if (x->compare) {
    PetscCall(HsSolverCompare(solver, out[0] ? out : "compare", &res.converged));
    *code = res.converged ? 0 : 2;
    PetscCall(HsSolverGetInterrupted(solver, &interrupted, &why));
    if (interrupted) {
      PetscCall(Interrupted(solver, why, code));
    }
    PetscFunctionReturn(0);
  }
  PetscCall(HsContinuationGetNumStages(cont, &stages));
  seq = (PetscBool)(x->extrapolate && x->coarse_first && !stages);
  if (seq)
    PetscCall(HsSolverSolveExtrapolated(solver)); /* the grids N/4, N/2, N in this order, and Richardson */
  else
    PetscCall(HsContinuationSolve(cont));
  PetscCall(HsSolverGetInterrupted(solver, &interrupted, &why));
  if (interrupted) { /* SIGTERM/SIGINT: the checkpoint is written (or status 5), the previous output left as it was
                        (a continuation's: its last converged step, written when it converged) */
    PetscCall(Interrupted(solver, why, code));
    PetscFunctionReturn(0);
  }
  PetscCall(HsContinuationGetResult(cont, &reached, &why));
  if (seq) { /* no continuation ran */
    PetscCall(HsSolverGetResults(solver, &res));
    reached = res.converged, why = "";
  }
  if (!reached && why[0]) /* the solver holds the last converged step (or the failed first solve) */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hamshoot: %s\n", why));
  PetscCall(HsSolverGetResults(solver, &res));
  if (out[0] && res.converged && (reached || !why[0]) && (CheckExtremal(solver, x) || x->extrapolate))
    PetscCall(HsSolverWriteOutput(solver, out)); /* now, and again after: IPOPT's set-up in the extremal check does not
                                                    poll for a signal (98 s at kepler N = 40000), and a scheduler's
                                                    SIGKILL after its grace time had lost the converged solution */
  if (res.converged && (reached || !why[0]) && CheckExtremal(solver, x))
    PetscCall(HsSolverCheckExtremal(solver));
  if (x->extrapolate && !seq && res.converged && (reached || !why[0])) /* seq: HsSolverSolveExtrapolated did it */
    PetscCall(HsSolverExtrapolate(solver)); /* a grid that fails: a warning, and no extrapolation */
  PetscCall(HsSolverView(solver, NULL));
  if (out[0]) {
    PetscBool      lower;
    HsOutputFormat fmt;
    PetscCall(HsSolverWriteOutput(solver, out));
    PetscCall(HsSolverWriteLowerExtremal(solver, out, &lower)); /* the extremal check's lower minimum, if any */
    PetscCall(HsSolverGetOutputFormat(solver, &fmt));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  output             %s/summary.json, %s%s\n", out,
                          fmt == HS_OUTPUT_FORMAT_HDF5 ? "trajectory.h5" : "trajectory.csv, intervals.csv",
                          lower ? ", lower_extremal.csv" : ""));
  }
  *code = res.converged && (reached || !why[0]) ? 0 : 2;
  PetscCall(HsSolverGetInterrupted(solver, &interrupted, &why));
  if (interrupted) { /* during the extremal check or the extrapolation: the converged solution is written */
    PetscCall(Interrupted(solver, why, code));
    PetscFunctionReturn(0);
  }
  if (x->study && !*code) {
    PetscBool complete;
    PetscCall(HsSolverConvergenceStudy(solver, x->study, out[0] ? out : "study", &complete));
    *code = complete ? 0 : 2; /* a grid that did not converge: the grids before it are written */
    PetscCall(HsSolverGetInterrupted(solver, &interrupted, &why));
    if (interrupted) { /* the finished grids are written */
      PetscCall(Interrupted(solver, why, code));
    }
  }
  PetscFunctionReturn(0);
}

/* -hs_inject_error RANK: that rank alone fails before the solve (a rank-local fault, for testing
 * that the job ends instead of hanging; docs/reliability.md). */
static PetscErrorCode InjectError(void)
{
  PetscInt    r = -1;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-hs_inject_error", &r, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCheck(r != rank, PETSC_COMM_SELF, PETSC_ERR_LIB, "error injected on rank %d (-hs_inject_error)", (int)rank);
  PetscFunctionReturn(0);
}

static PetscReal hs_error_timeout = 10; /* -hs_error_timeout: see AgreeOnFailure */

/* -hs_error_timeout S: a finite number of seconds in (0, 86400] (a day). NaN, inf or 1e300 had made a rank-local fault
 * wait for ever (the job hung until the scheduler killed it), a negative value aborted jobs whose ranks all failed
 * together (a clean exit 1). Collective: every rank has the same options. */
static PetscErrorCode ErrorTimeoutOption(void)
{
  char        buf[64];
  const char *raw = NULL;
  PetscBool   set;
  double      v = 0;
  int         why;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-hs_error_timeout", buf, sizeof buf, &set));
  if (!set)
    PetscFunctionReturn(0);
  PetscCheck(buf[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "option -hs_error_timeout needs a value");
  PetscCall(PetscOptionsFindPair(NULL, NULL, "-hs_error_timeout", &raw, &set)); /* not cut to fit buf */
  PetscCheck(!raw || strlen(raw) < sizeof buf, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "option -hs_error_timeout: its value has %zu characters, more than the %zu it may have", strlen(raw),
             sizeof buf - 1);
  why = HsParseReal(buf, &v); /* decimal only (no 0x10); nan, inf: outside the range below */
  if (why == HS_NUMBER_NONFINITE)
    v = NAN, why = 0;
  PetscCheck(!why, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-hs_error_timeout %s %s", buf, HsParseRealWhy(why));
  PetscCheck(v > 0 && v <= 86400, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_error_timeout %s must lie in (0, 86400] seconds (a rank that failed alone waits that long for the "
             "others before it aborts the job)",
             buf);
  hs_error_timeout = (PetscReal)v;
  PetscFunctionReturn(0);
}

/* -hs_term_grace S (default 300): the watchdog's grace after the first SIGTERM (HsSetTermGrace); 0: none. Read by every
 * rank for itself (the handler is per process), after the options were found the same on all. */
static PetscErrorCode TermGraceOption(void)
{
  PetscInt    grace = 30;
  PetscBool   set;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "hamshoot process", "");
  HsOptionsCall(HsOptionsInt(PetscOptionsObject, "-hs_term_grace",
                             "seconds after the first SIGTERM (SIGINT, SIGHUP) before the watchdog ends a process "
                             "that has not acted on it (a computation that does not return inside a Newton "
                             "iteration): a message, exit status 4; 0: no watchdog",
                             "HsSetTermGrace", grace, &grace, &set, 0, 86400));
  PetscOptionsEnd();
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (set)
    PetscCall(HsSetTermGrace(grace, rank));
  PetscFunctionReturn(0);
}

/* What Run creates; destroyed by main whether Run succeeded or not (after the ranks agreed on it). */
typedef struct {
  HsProblem     *prob;
  HsSolver       solver;
  HsContinuation cont;
} Objects;

/* Whether the checkpoint directory ck (rank 0's view) is in the output directory out at the name of a file the output
 * writes there (-o OUT -hs_checkpoint OUT/trajectory.csv: its checkpoints had made the output fail after the solve). */
static int CheckpointAtOutputName(const char *out, const char *ck)
{
  char        c[PETSC_MAX_PATH_LEN], a[PETSC_MAX_PATH_LEN], b[PETSC_MAX_PATH_LEN], *base;
  const char *parent = ".";
  size_t      n;

  if (snprintf(c, sizeof c, "%s", ck) >= (int)sizeof c)
    return 0;
  for (n = strlen(c); n > 1 && (c[n - 1] == '/' || (c[n - 1] == '.' && c[n - 2] == '/')); n = strlen(c))
    c[n - 1] = 0; /* ck/ and ck/. name ck */
  if ((base = strrchr(c, '/'))) {
    *base++ = 0;
    parent  = c[0] ? c : "/";
  } else
    base = c;
  return HsIsOutputFileName(base) && realpath(out, a) && realpath(parent, b) && !strcmp(a, b);
}

/* -hs_extrapolate's and -hs_study's grids, refused before the solve rather than after it: N a multiple of 2^(K-1) and
 * at least 2^K (K: -hs_extrapolate_grids, 3 by default), N/2^(K-1) + 1 points at least the ranks (a grid that cannot be
 * distributed), the study's finest grid within 32-bit indices (it had been refused after the first solve, exit 1), not
 * IPOPT. */
static PetscErrorCode CheckExtras(HsSolver solver, const Extras *x)
{
  HsProblem   *P;
  PetscInt     N, K, f;
  PetscMPIInt  size;
  HsSolverType type;

  PetscFunctionBeginUser;
  if (!x->extrapolate && !x->study)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(HsSolverGetNumIntervals(solver, &N));
  PetscCall(HsSolverGetType(solver, &type));
  PetscCall(HsSolverGetExtrapolateGrids(solver, &K));
  f = (PetscInt)1 << (K - 1); /* the coarsest grid N/f */
  PetscCheck(!x->extrapolate || (N % f == 0 && N >= 2 * f), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_extrapolate solves at N/2 .. N/%" PetscInt_FMT ": N = %" PetscInt_FMT
             " must be a multiple of %" PetscInt_FMT " and at least %" PetscInt_FMT,
             f, N, f, 2 * f);
  PetscCheck(!x->extrapolate || N / f + 1 >= size, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_extrapolate solves at N/%" PetscInt_FMT " = %" PetscInt_FMT " intervals, %" PetscInt_FMT
             " time points, fewer than the %d MPI ranks: use N >= %" PetscInt_FMT " or fewer ranks",
             f, N / f, N / f + 1, size, f * (size - 1));
  PetscCall(HsSolverGetProblem(solver, &P)); /* as HsSolverConvergenceStudy checks it, but before the first solve */
  PetscCheck(!x->study || ((long long)N << (x->study - 1)) * 4 * P->n <= PETSC_MAX_INT, PETSC_COMM_WORLD,
             PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_study %" PetscInt_FMT " from N = %" PetscInt_FMT ": the finest grid, N = %lld, is too large for this "
             "PETSc's 32-bit indices: use fewer grids or a smaller N",
             x->study, N, (long long)N << (x->study - 1));
  PetscCheck(strcmp(type, HSSOLVERIPOPT), PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-hs_extrapolate and -hs_study solve the other grids by Newton on the transcription, which does not "
             "reach what only IPOPT solves (control bounds, T on a bound): use -hs_direct_solver kkt");
  PetscFunctionReturn(0);
}

/* Keys that matter only together with another, their parent, refused without it (issue 38, round 21): the options
 * blocks read every key whatever the run (so that -help lists it), so HsOptionsCheckUsed counted them as used, and
 * -hs_extrapolate_grids 4 without -hs_extrapolate, -hs_continue_steps without -hs_continue, -hs_bounds_eps0 on a
 * problem without bounds had been ignored without a word. Keys read only by their parent's code (-hs_shoot_*,
 * -hs_ipopt_*, -hs_step_*) are refused by HsOptionsCheckUsed; -hs_output_format and -hs_strategy_continue by checks
 * of their own. Not here: tuning keys of the Newton solve (-hs_dg_tol, -hs_snes_*, -hs_in_place, -hs_check_boundary),
 * which every Newton run reads. */
static PetscErrorCode CheckOrphanKeys(HsSolver s, const Extras *x)
{
  HsProblem   *P;
  HsStrategy   strategy;
  HsGuessType  guess;
  HsSolverType type;
  const char  *cs;
  PetscBool    cont, has, direct, bounded;
  const char  *ext = "-hs_extrapolate", *con = "-hs_continue NAME",
             *bnd = "bounded controls (u_min, u_max in the problem file)";
  const char *tim = "-hs_strategy auto or -hs_continue (it budgets their fallbacks and steps)";
  const char *dir = "a direct problem (-hs_scheme direct), -hs_compare, -hs_initial_guess direct or -hs_strategy auto";

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetProblem(s, &P));
  PetscCall(HsSolverGetStrategy(s, &strategy));
  PetscCall(HsSolverGetInitialGuessType(s, &guess));
  PetscCall(HsSolverGetType(s, &type));
  PetscCall(HsSolverGetSchemes(s, NULL, &cs));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-hs_continue", &cont));
  direct  = (PetscBool)(!strcmp(type, HSSOLVERIPOPT) ||
                       (cs && (!strcmp(cs, "kkt") || !strcmp(cs, "trapezoidal") || !strcmp(cs, "constrained_kkt"))));
  bounded = (PetscBool)(P->u_min || P->u_max);
  {
    const struct {
      const char *key, *needs;
      PetscBool   parent;
    } t[] = {
        {"-hs_extrapolate_grids", ext, x->extrapolate},
        {"-hs_extrapolate_romberg", ext, x->extrapolate},
        {"-hs_extrapolate_coarse_first", ext, x->extrapolate},
        {"-hs_continue_from", con, cont},
        {"-hs_continue_steps", con, cont},
        {"-hs_continue_type", con, cont},
        {"-hs_continue_max_halvings", con, cont},
        {"-hs_continue_monitor", con, cont},
        {"-hs_bounds_eps0", bnd, bounded},
        {"-hs_bounds_eps_factor", bnd, bounded},
        {"-hs_bounds_eps_min", bnd, bounded},
        {"-hs_strategy_time", tim, (PetscBool)(strategy == HS_STRATEGY_AUTO || cont)},
        {"-hs_direct_solver", dir,
         (PetscBool)(direct || x->compare || guess == HS_GUESS_DIRECT || strategy == HS_STRATEGY_AUTO)},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
      PetscCall(PetscOptionsHasName(NULL, NULL, t[i].key, &has));
      PetscCheck(!has || t[i].parent, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
                 "option %s does nothing without %s: leave it out, or give what it needs", t[i].key, t[i].needs);
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Run(Objects *o, int *code)
{
  char            out[PETSC_MAX_PATH_LEN];
  PetscBool       quiet, help_only, fmt_given;
  Extras          x;
  PetscInt        stages;
  HsGuessType     guess;
  HsStrategy      strategy;
  HsProblem     **prob   = &o->prob;
  HsSolver       *solver = &o->solver;
  HsContinuation *cont   = &o->cont;

  PetscFunctionBeginUser;
  *code = 1;
  PetscCall(ErrorTimeoutOption());
  PetscCall(HsOptionsCheckConsistent(PETSC_COMM_WORLD));
  PetscCall(HsOptionsCheckValues(PETSC_COMM_WORLD, NULL));
  PetscCall(TermGraceOption());
  PetscCall(HsProblemCreateFromOptions(PETSC_COMM_WORLD, NULL, prob));
  hs_problem_read = 1;
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, solver));
  PetscCall(HsSolverSetProblem(*solver, *prob));
  PetscCall(DriverOptions(*solver, out, sizeof out, &quiet, &x));
  PetscCall(HsSolverSetMonitor(*solver, (PetscBool)!quiet));
  for (const char *c = out; *c; c++) /* before the default checkpoint OUT/checkpoint is made of it */
    PetscCheck((unsigned char)*c >= 0x20 && *c != 0x7f, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "output directory: its name holds a control character (byte %d at %d): give a plain name",
               (int)(unsigned char)*c, (int)(c - out) + 1);
  PetscCall(PetscOptionsHasName(NULL, NULL, "-hs_output_format", &fmt_given));
  PetscCheck(
      !fmt_given || out[0] || x.compare, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
      "-hs_output_format chooses how the trajectory is written into -o DIR (or -hs_compare's sides), and this run "
      "writes none: give -o DIR, or leave the option out");
  if (out[0] || x.compare || x.study) { /* checkpoints next to the output they become (a driver's default too) */
    char dir[PETSC_MAX_PATH_LEN];
    PetscCall(PetscSNPrintf(dir, sizeof dir, "%s/checkpoint", out[0] ? out : x.compare ? "compare" : "study"));
    PetscCall(HsSolverSetCheckpoint(*solver, dir, 0, 0));
  }
  PetscCall(HsSolverSetFromOptions(*solver));
  PetscCall(HsContinuationCreate(*solver, cont));
  PetscCall(HsContinuationSetMonitor(*cont, PETSC_TRUE));
  PetscCall(HsContinuationSetFromOptions(*cont));
  if (out[0] && !x.compare) /* every converged step is written as it converges */
    PetscCall(HsContinuationSetOutput(*cont, out));
  PetscCall(HsSolverSetUp(*solver));
  PetscCall(HsContinuationSetUp(*cont)); /* -hs_restart: the continuation's state */
  PetscCall(PetscOptionsHasHelp(NULL, &help_only));
  PetscCall(HsContinuationGetNumStages(*cont, &stages));
  PetscCall(HsSolverGetInitialGuessType(*solver, &guess));
  PetscCheck(!x.compare || !stages, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-hs_compare compares two solves on one grid: it cannot be combined with -hs_continue");
  PetscCheck(!x.compare || (!x.extrapolate && !x.study), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-hs_compare cannot be combined with -hs_extrapolate or -hs_study");
  if (!help_only) {
    PetscCall(PetscOptionsHasName(NULL, NULL, "-hs_inject_error", &quiet)); /* marks it used */
    /* the direct sub-solver reads its -hs_direct_* keys only when the solve creates it */
    PetscCall(HsSolverGetStrategy(*solver, &strategy)); /* auto may solve the direct problem */
    PetscCall(HsOptionsCheckUsed(PETSC_COMM_WORLD, NULL,
                                 x.compare || guess == HS_GUESS_DIRECT || strategy == HS_STRATEGY_AUTO
                                     ? "hs_direct_,hs_init_,hs_grid_"
                                     : "hs_init_,hs_grid_"));
    if (out[0] || x.compare || x.study) { /* the directory this run writes to: taken now, checked and locked */
      const char *ck, *od = out[0] ? out : x.compare ? "compare" : "study";
      char        a[PETSC_MAX_PATH_LEN], b[PETSC_MAX_PATH_LEN];
      int         same = 0;
      PetscMPIInt rank;
      PetscCall(HsCheckOutputDirectory(PETSC_COMM_WORLD, od));
      PetscCall(HsCheckDriverOutput(PETSC_COMM_WORLD, od, (PetscBool)(x.study > 0), x.compare)); /* their names too */
      PetscCall(HsSolverGetCheckpoint(*solver, &ck, NULL, NULL));
      PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
      if (!rank && out[0] && ck[0] && realpath(out, a) && realpath(ck, b)) { /* rank 0 writes both: its view decides */
        size_t lb = strlen(b);
        same      = !strcmp(a, b) || (!strncmp(a, b, lb) && a[lb] == '/'); /* -o is -hs_checkpoint or inside it */
      }
      if (!rank && ck[0] && !same) /* the directory the output goes to, named by -o or not */
        same = 2 * CheckpointAtOutputName(od, ck);
      PetscCallMPI(MPI_Bcast(&same, 1, MPI_INT, 0, PETSC_COMM_WORLD));
      PetscCheck(same != 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
                 "-hs_checkpoint %s takes the place of a file the output writes in %s: give the checkpoints another "
                 "name (e.g. %s/checkpoint)",
                 ck, od, od);
      PetscCheck(
          !same, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
          "-hs_checkpoint %s is the output directory -o %s or "
          "holds it (each checkpoint replaces that directory): give the checkpoints a directory of their own (the "
          "default is %s/checkpoint)",
          ck, out, out);
    }
    PetscCall(CheckOrphanKeys(*solver, &x));
    PetscCall(CheckExtras(*solver, &x)); /* refused now rather than after the solve */
    PetscCall(InjectError());
    if (out[0] || x.compare || x.study) /* round 30: no earlier run's study.json, compare.json beside this one's */
      PetscCall(HsRemoveDriverOutput(PETSC_COMM_WORLD, out[0] ? out : (x.compare ? "compare" : "study"),
                                     (PetscBool)(x.study > 0), x.compare));
    PetscCall(Solve(*solver, *cont, out, &x, code));
    if (*code != 3) /* a deferred key (-hs_direct_*, -hs_grid_*) that nothing read: a typo */
      PetscCall(HsOptionsWarnUnused(PETSC_COMM_WORLD, NULL));
  } else
    *code = 0; /* -help: the options have been listed; do not solve */
  PetscFunctionReturn(0);
}

/* After Run on every rank: whether any rank failed, agreed on by all. A rank that failed waits up to
 * -hs_error_timeout seconds (default 10) for the others to arrive, or until a signal arrives; if they do not (they wait
 * in a collective call for it: a rank-local fault), it prints its message and aborts the job rather than let it hang.
 * The lowest failing rank prints its message. Returns whether any rank failed. */
static int AgreeOnFailure(MPI_Comm comm, int failed)
{
  struct {
    int ok, rank;
  } mine, all;
  MPI_Request req;
  PetscReal   timeout = hs_error_timeout;
  double      t0      = MPI_Wtime();
  int         done    = 0;

  MPI_Comm_rank(comm, &mine.rank);
  mine.ok = !failed;
  MPI_Iallreduce(&mine, &all, 1, MPI_2INT, MPI_MINLOC, comm, &req);
  while (!done) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    /* a signal (the scheduler's time limit) ends the wait too: waiting on, the failed rank lost its message to the
       watchdog's after -hs_term_grace, or to SIGKILL (round 24: -hs_error_timeout 60, SIGTERM, -hs_term_grace 3:
       status 4 and only the watchdog's words) */
    if (!done && failed && (MPI_Wtime() - t0 > timeout || HsInterruptPending())) {
      if (HsInterruptPending())
        fprintf(stderr,
                "hamshoot: error (rank %d): %s\nhamshoot: a signal arrived while the other ranks had not reached "
                "this error: aborting the job\n",
                mine.rank, hs_errmsg);
      else
        fprintf(stderr,
                "hamshoot: error (rank %d): %s\nhamshoot: the other ranks did not reach this error within %g s "
                "(-hs_error_timeout): aborting the job\n",
                mine.rank, hs_errmsg, (double)timeout);
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!done)
      usleep(1000);
  }
  if (!all.ok && all.rank == mine.rank)
    fprintf(stderr, "hamshoot: error: %s\n", hs_errmsg);
  return !all.ok;
}

#define HS_OPTIONS_FILE_MAX (1 << 20) /* an options file over 1 MiB is refused (PETSc reads it whole on rank 0) */
#define HS_OPTIONS_FILE_DEPTH 8       /* options files named inside options files, at most this deep */
#define HS_OPTIONS_MAX 511     /* distinct keys: PETSc 3.18's database holds 512 (MAXOPTIONS), one is -skip_petscrc */
#define HS_OPTIONS_NAME 512    /* PETSc 3.18's MAXOPTNAME: a prefixed key's and the prefix stack's length */
#define HS_OPTIONS_PREFIXES 25 /* PETSc 3.18's MAXPREFIXES: the depth of -prefix_push */
#define HS_OPTIONS_ALIASES 25  /* PETSc 3.18's MAXALIASES: alias lines in all options files */
#define HS_OPTIONS_PATH 4096   /* PETSC_MAX_PATH_LEN: PETSc cuts an options file's name to this */

/* The options seen before PetscInitialize (CheckOptionsFiles): the distinct keys so far (copies, with their prefix),
 * the prefix stack of -prefix_push, and the message. */
typedef struct {
  char  *key[HS_OPTIONS_MAX];
  int    n;
  char   prefix[HS_OPTIONS_NAME];
  size_t stack[HS_OPTIONS_PREFIXES];
  int    depth;
  int    aliases;
  char  *msg;
  size_t len;
} OptionsSeen;

/* The options are read here as PETSc 3.18 reads them inside PetscInitialize (src/sys/objects/options.c:
 * PetscOptionsInsertString, PetscOptionsInsertArgs, PetscOptionsInsertFilePetsc, PetscOptionsPrefixPush;
 * PetscTokenFind in src/sys/utils/str.c), so that every file PETSc will open is one checked here and every key it
 * will hold is counted: round 29 found a '#' in PETSC_OPTIONS (a comment here, none for PETSc), a quoted
 * "-options_file", a NUL byte in an options file (the lines after it unseen here) and keys under -prefix_push
 * (counted once here, once a prefix for PETSc) letting a FIFO or a 513th key through. What PETSc would refuse inside
 * PetscInitialize (its trace, exit 83, and on 2 ranks a wait of the others) is refused here with a message. */

/* PetscTokenFind: the next token of *cur, split at sep, one that begins with '"' running to the next '"' (quotes
 * dropped), separators after it skipped; NULL at the end. Modifies the text. */
static char *NextToken(char **cur, char sep)
{
  char *ptr = *cur, *result = ptr, tok = sep;

  if (!ptr || !*ptr)
    return NULL;
  if (*ptr == '"')
    tok = '"', result++, ptr++;
  for (;; ptr++) {
    if (*ptr == tok) {
      *ptr++ = 0;
      while (*ptr == sep)
        ptr++;
      *cur = ptr;
      break;
    }
    if (!*ptr) {
      *cur = NULL;
      break;
    }
  }
  return result;
}

/* PetscOptionsValidKey: '-' (or "--") then a letter, and not a number such as -inf or -e5. */
static int ValidKey(const char *key)
{
  char *end;

  if (!key || key[0] != '-')
    return 0;
  if (key[1] == '-')
    key++;
  if (!isalpha((unsigned char)key[1]))
    return 0;
  (void)strtod(key, &end);
  return !(end != key && !(*end == '_' || isalnum((unsigned char)*end)));
}

/* Counts the key tok under the current prefix (as PETSc names it: the prefix, then tok without its '-';
 * case-insensitive) if not seen before; 1 when that makes more than HS_OPTIONS_MAX (PETSc's database would be full:
 * its "Out of memory ... Number of options 512" trace inside PetscInitialize and MPI_Abort, round 28). */
static int CountKey(OptionsSeen *o, const char *tok)
{
  char full[HS_OPTIONS_NAME];

  if (o->depth)
    snprintf(full, sizeof full, "%s%s", o->prefix, tok + 1);
  for (int i = 0; i < o->n; i++)
    if (!strcasecmp(o->key[i], o->depth ? full : tok + 1))
      return 0;
  if (o->n == HS_OPTIONS_MAX || !(o->key[o->n] = strdup(o->depth ? full : tok + 1))) {
    snprintf(o->msg, o->len,
             "more than %d distinct options (on the command line, in PETSC_OPTIONS and in options files, under their "
             "prefixes; the %s one among them): PETSc's options database holds %d, one of them hamshoot's own",
             HS_OPTIONS_MAX, tok, HS_OPTIONS_MAX + 1);
    return 1;
  }
  o->n++;
  return 0;
}

/* -prefix_push p (PetscOptionsPrefixPush's checks) and -prefix_pop; 1 with a message where PETSc would fail. */
static int PushPrefix(OptionsSeen *o, const char *p)
{
  char   key[HS_OPTIONS_NAME + 1] = "-";
  size_t start                    = o->depth ? o->stack[o->depth - 1] : 0;

  if (!p)
    return snprintf(o->msg, o->len, "-prefix_push without a prefix"), 1;
  snprintf(key + 1, sizeof key - 1, "%s", p);
  if (o->depth == HS_OPTIONS_PREFIXES)
    return snprintf(o->msg, o->len, "-prefix_push %s: more than %d prefixes pushed", p, HS_OPTIONS_PREFIXES), 1;
  if (!ValidKey(key) && !(o->depth && isdigit((unsigned char)p[0])))
    return snprintf(o->msg, o->len, "-prefix_push %s: not a prefix (a letter first, no leading '-')", p), 1;
  if (strlen(p) + 1 > sizeof o->prefix - start)
    return snprintf(o->msg, o->len, "-prefix_push %s: the prefixes longer than %d", p, HS_OPTIONS_NAME - 1), 1;
  memcpy(o->prefix + start, p, strlen(p) + 1);
  o->stack[o->depth++] = start + strlen(p);
  return 0;
}

static int PopPrefix(OptionsSeen *o)
{
  if (!o->depth)
    return snprintf(o->msg, o->len, "-prefix_pop without a -prefix_push before it"), 1;
  o->depth--;
  o->prefix[o->depth ? o->stack[o->depth - 1] : 0] = 0;
  return 0;
}

static int YamlRefused(OptionsSeen *o, const char *what)
{
  snprintf(o->msg, o->len,
           "%s: YAML options are not taken (what a YAML text includes, !include, and the keys it holds cannot be "
           "checked before PETSc reads them): give the options on the command line, in PETSC_OPTIONS or in an options "
           "file of '-key value' lines",
           what);
  return 1;
}

static int CheckOptionsString(OptionsSeen *o, char *text, int depth);

static int EndsWith(const char *s, const char *tail)
{
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && !strcmp(s + a - b, tail);
}

/* One line of an options file made into options as PetscOptionsInsertFilePetsc makes it, appended to v at *vl: '#' to
 * the end a comment, tabs and line ends blanks, then "-key" or "-key value" (the value quoted) or "alias -a -b"
 * (aliases only rename keys: not followed, the keys counted as given, never fewer than PETSc holds). 1 with PETSc's
 * message where it would refuse the line. Modifies line. */
static int OptionsFileLine(OptionsSeen *o, const char *path, int nr, char *line, char *v, size_t *vl)
{
  char *cur = line, *t[4] = {NULL, NULL, NULL, NULL}, *c;
  int   alias = 0;

  if ((c = strchr(line, '#')))
    *c = 0;
  for (c = line; *c; c++)
    if (*c == '\t' || *c == '\r' || *c == '\n')
      *c = ' ';
  if (!(t[0] = NextToken(&cur, ' ')))
    return 0;
  if (!t[0][0] && !(t[0] = NextToken(&cur, ' ')))
    return 0;
  for (int i = 1; i < 4; i++)
    t[i] = NextToken(&cur, ' ');
  if (t[0][0] == '-') {
    if (!ValidKey(t[0]))
      return snprintf(o->msg, o->len, "options file %s line %d: invalid option %s", path, nr, t[0]), 1;
    *vl += (size_t)sprintf(v + *vl, "%s ", t[0]);
    if (t[1] && ValidKey(t[1]))
      return snprintf(o->msg, o->len, "options file %s line %d: two options on one line (%s %s)", path, nr, t[0], t[1]),
             1;
    if (t[1])
      *vl += (size_t)sprintf(v + *vl, "\"%s\" ", t[1]);
  } else if (!strcasecmp(t[0], "alias")) {
    alias = 1;
    if (++o->aliases > HS_OPTIONS_ALIASES)
      return snprintf(o->msg, o->len, "options file %s line %d: more than %d alias lines (PETSc's limit)", path, nr,
                      HS_OPTIONS_ALIASES),
             1;
    if (!ValidKey(t[1]) || !ValidKey(t[2]))
      return snprintf(o->msg, o->len, "options file %s line %d: alias of something not an option", path, nr), 1;
  } else
    return snprintf(o->msg, o->len, "options file %s line %d: unknown first token %s", path, nr, t[0]), 1;
  if (t[alias ? 3 : 2])
    return snprintf(o->msg, o->len, "options file %s line %d: extra token %s", path, nr, t[alias ? 3 : 2]), 1;
  return 0;
}

/* The options file path of key (-options_file, -options_file_yaml) before PETSc reads it: a name PETSc opens as given
 * (no "${", no '\\', which PETSc rewrites), a regular file of at most HS_OPTIONS_FILE_MAX bytes (HsFileOpenRegular)
 * without NUL bytes and not YAML (PetscOptionsFilename's tests), its lines made into an options string as PETSc makes
 * them (OptionsFileLine; the lines split where Petscgetline splits them: at '\n', or at a '\r' that ends one of its
 * 1023-byte reads), and that string checked as PETSc then reads it (CheckOptionsString: its keys counted, the options
 * files it names in turn). 1 with a message if not. */
static int CheckOptionsFile(OptionsSeen *o, const char *key, const char *path, int depth)
{
  FILE  *f;
  char  *text, *v, *line, name[HS_OPTIONS_PATH + 8];
  size_t n, pl = path ? strlen(path) : 0, pos = 0, vl = 0;
  int    bad = 0, yaml = !strcasecmp(key, "-options_file_yaml"), nr = 1;

  if (!path)
    return snprintf(o->msg, o->len, "%s without a file name", key), 1;
  if (strstr(path, "${") || strchr(path, '\\') || pl >= HS_OPTIONS_PATH)
    return snprintf(o->msg, o->len,
                    "%s %s: a name with \"${\" or '\\' or of %d bytes or more, which PETSc would rewrite before "
                    "opening it: give the file's name as it is",
                    key, path, HS_OPTIONS_PATH),
           1;
  snprintf(name, sizeof name, "%s", path);
  if (EndsWith(path, ":yaml")) /* PETSc opens the file without it, as YAML */
    name[pl - 5] = 0, yaml = 1;
  if (!(f = HsFileOpenRegular(name, key, HS_OPTIONS_FILE_MAX, o->msg, o->len)))
    return 1;
  if (depth >= HS_OPTIONS_FILE_DEPTH) {
    fclose(f);
    return snprintf(o->msg, o->len, "%s %s: options files named inside options files more than %d deep (a loop?)", key,
                    path, HS_OPTIONS_FILE_DEPTH),
           1;
  }
  /* the text, a line's copy and the options string (at most 2 bytes more than its line a line) */
  if (!(text = malloc(5 * (size_t)HS_OPTIONS_FILE_MAX + 16))) {
    fclose(f);
    return snprintf(o->msg, o->len, "%s %s: out of memory", key, path), 1;
  }
  line = text + HS_OPTIONS_FILE_MAX + 1, v = line + HS_OPTIONS_FILE_MAX + 1;
  n       = fread(text, 1, HS_OPTIONS_FILE_MAX, f);
  text[n] = 0;
  fclose(f);
  yaml = yaml || EndsWith(name, ".yaml") || EndsWith(name, ".yml") || EndsWith(name, ".json") ||
         !strncmp(text, "%YAML ", 6) || !strncmp(text, "---", 3);
  if (yaml) {
    char what[HS_OPTIONS_PATH + 64];
    snprintf(what, sizeof what, "%s %s", key, path);
    bad = YamlRefused(o, what);
  } else if (memchr(text, 0, n))
    bad = (snprintf(o->msg, o->len,
                    "%s %s: a NUL byte at byte %zu (PETSc would read the lines after it otherwise than they are "
                    "written): not an options file",
                    key, path, (size_t)((char *)memchr(text, 0, n) - text) + 1),
           1);
  while (!bad && pos < n) {
    size_t start = pos;
    for (;;) { /* Petscgetline: reads of at most 1023 bytes, each ending after a '\n' */
      for (size_t c = 0; pos < n && c < 1023; c++)
        if (text[pos++] == '\n')
          break;
      if (pos == n || text[pos - 1] == '\n' || text[pos - 1] == '\r')
        break;
    }
    memcpy(line, text + start, pos - start);
    line[pos - start] = 0;
    bad               = OptionsFileLine(o, path, nr++, line, v, &vl);
  }
  v[vl] = 0;
  if (!bad)
    bad = CheckOptionsString(o, v, depth + 1);
  free(text);
  return bad;
}

/* PETSC_OPTIONS or an options file's options string read as PetscOptionsInsertString reads it: tokens split at ' '
 * alone (a tab or a newline is part of a token; '#' is no comment), a token in double quotes one token; a key takes
 * the next token as its value unless that is a key; -options_file's file checked (CheckOptionsFile), its name the next
 * token whatever it is; -prefix_push and -prefix_pop followed; YAML refused. Modifies text. */
static int CheckOptionsString(OptionsSeen *o, char *text, int depth)
{
  char *cur = text, *first = NextToken(&cur, ' '), *second;

  while (first) {
    if (!ValidKey(first))
      first = NextToken(&cur, ' ');
    else if (!strcasecmp(first, "-options_file")) {
      if (CheckOptionsFile(o, "-options_file", NextToken(&cur, ' '), depth))
        return 1;
      first = NextToken(&cur, ' ');
    } else if (!strcasecmp(first, "-options_file_yaml") || !strcasecmp(first, "-options_string_yaml")) {
      second = NextToken(&cur, ' ');
      if (!strcasecmp(first, "-options_file_yaml") && CheckOptionsFile(o, first, second, depth))
        return 1;
      return YamlRefused(o, first);
    } else if (!strcasecmp(first, "-prefix_push")) {
      if (PushPrefix(o, NextToken(&cur, ' ')))
        return 1;
      first = NextToken(&cur, ' ');
    } else if (!strcasecmp(first, "-prefix_pop")) {
      if (PopPrefix(o))
        return 1;
      first = NextToken(&cur, ' ');
    } else {
      if (CountKey(o, first))
        return 1;
      second = NextToken(&cur, ' ');
      first  = ValidKey(second) ? second : NextToken(&cur, ' ');
    }
  }
  return 0;
}

/* Before PetscInitialize, the options read as PetscOptionsInsert reads them (PETSC_OPTIONS, then PETSC_OPTIONS_YAML,
 * then the command line as PetscOptionsInsertArgs reads it; one prefix stack through all): every options file named
 * is a regular file PETSc can read (round 28: -options_file of a FIFO or /dev/zero hung the run on rank 0 inside
 * PetscInitialize, a directory or a missing file ended in PETSc's trace and MPI_Abort), and the distinct keys of all
 * of them fit PETSc's database. 1 with a message if not. */
static int CheckOptionsFiles(int argc, char **argv, char *msg, size_t len)
{
  const char  *env = getenv("PETSC_OPTIONS"), *yenv = getenv("PETSC_OPTIONS_YAML");
  char        *text;
  int          bad = 0;
  OptionsSeen *o   = calloc(1, sizeof *o);

  if (!o)
    return snprintf(msg, len, "out of memory reading the options"), 1;
  o->msg = msg, o->len = len;
  /* -skip_petscrc false on the command line (PetscOptionsProcessPrecedentFlags' reading: the next argument its value
     unless it is empty or begins with '-') would have PETSc read ~/.petscrc, .petscrc and petscrc, which no check here
     sees (round 29: a FIFO petscrc hung the run in PetscInitialize) and which main() turns off (its comment) */
  for (int i = 1; i < argc && !bad; i++) {
    const char *v = i + 1 < argc && argv[i + 1][0] && argv[i + 1][0] != '-' ? argv[i + 1] : NULL;
    if (ValidKey(argv[i]) && !strcasecmp(argv[i], "-skip_petscrc") && v && strcasecmp(v, "1") &&
        strcasecmp(v, "true") && strcasecmp(v, "yes") && strcasecmp(v, "on"))
      bad = (snprintf(msg, len,
                      "-skip_petscrc %s: hamshoot reads no petscrc file (anyone who can write into the working "
                      "directory could choose its options); give them on the command line, in PETSC_OPTIONS or "
                      "with -options_file",
                      v),
             1);
  }
  if (!bad && env && env[0]) {
    if (!(text = strdup(env)))
      bad = (snprintf(msg, len, "out of memory reading the options"), 1);
    else
      bad = CheckOptionsString(o, text, 0);
    free(text);
  }
  if (!bad && yenv && yenv[0])
    bad = YamlRefused(o, "PETSC_OPTIONS_YAML");
  for (int i = 1; i < argc && !bad;) {
    const char *a = argv[i], *b = i + 1 < argc ? argv[i + 1] : NULL;
    int         named = b && b[0] != '-'; /* PetscOptionsInsertArgs: a file name or a prefix does not begin with '-' */
    if (!ValidKey(a))
      i++;
    else if (!strcasecmp(a, "-options_file") || !strcasecmp(a, "-options_file_yaml")) {
      if (!named)
        bad = (snprintf(msg, len, "%s without a file name", a), 1);
      else
        bad = CheckOptionsFile(o, a, b, 0) || (!strcasecmp(a, "-options_file_yaml") && YamlRefused(o, a));
      i += 2;
    } else if (!strcasecmp(a, "-options_string_yaml"))
      bad = YamlRefused(o, a);
    else if (!strcasecmp(a, "-prefix_push")) {
      bad = named ? PushPrefix(o, b) : (snprintf(msg, len, "-prefix_push without a prefix"), 1);
      i += 2;
    } else if (!strcasecmp(a, "-prefix_pop"))
      bad = PopPrefix(o), i++;
    else
      bad = CountKey(o, a), i += (b && !ValidKey(b)) ? 2 : 1;
  }
  for (int i = 0; i < o->n; i++)
    free(o->key[i]);
  free(o);
  return bad;
}

int main(int argc, char **argv)
{
  PetscErrorCode ierr;
  int            code = 1;
  MPI_Comm       agree;
  Objects        o = {NULL, NULL, NULL};

  /* Started without mpirun, Open MPI's singleton start-up spawns a runtime daemon (0.4 s of a small run);
     hamshoot never spawns processes, so the isolated singleton (0.25 s) does. Set only if the user has
     not; irrelevant under mpirun and to other MPIs. */
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  /* No options file: PETSc would read ./petscrc, ./.petscrc and ~/.petscrc, so that anyone who can write into the
     directory a user runs hamshoot from could choose its options (-log_view ascii:FILE overwrites a file,
     -start_in_debugger runs a program: the sixth security review). Options come from the command line and
     PETSC_OPTIONS only (docs/reliability.md). */
  PetscCall(PetscOptionsSetValue(NULL, "-skip_petscrc", NULL));
  /* MPI first, so that the options files are checked where PETSc reads them, on rank 0 alone (a file only rank 0's
     node has, in a node-local /tmp, is PETSc's to read: checked on every rank it failed on the others, which left
     rank 0 alone in PetscInitialize; the review of round 28), the verdict and its message broadcast; PETSc then
     leaves MPI_Finalize to us (below). The thread level PetscInitialize would ask for. */
  {
    PetscMPIInt rank = 0, provided, bad = 0;
    if (MPI_Init_thread(&argc, &argv, PETSC_MPI_THREAD_REQUIRED, &provided) != MPI_SUCCESS) {
      fprintf(stderr, "hamshoot: error: MPI could not be initialized\n");
      return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!rank)
      bad = CheckOptionsFiles(argc, argv, hs_errmsg, sizeof hs_errmsg);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) { /* one message, from rank 0 */
      if (!rank)
        fprintf(stderr, "hamshoot: error: %s\n", HsPrintable(hs_errmsg));
      MPI_Finalize();
      return 1;
    }
  }
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_dup(PETSC_COMM_WORLD, &agree)); /* apart from every collective of the solve */
  PetscCall(HsInstallInterruptHandlers());
  PetscCall(PetscPushErrorHandler(CaptureError, NULL));
  ierr = Run(&o, &code);
  PetscCall(PetscPopErrorHandler());
  /* PETSc's message for a value it could not read names the value, not the option: named here, on every rank (the
     lowest failing one prints it), for every key PETSc reads (a failure of that rewrite leaves PETSc's message) */
  if (ierr && HsOptionsNameValueError(hs_errmsg, sizeof hs_errmsg))
    code = 1;
  if (AgreeOnFailure(agree, ierr != 0))
    code = 1;
  /* all ranks are here in the same state (AgreeOnFailure aborts otherwise): collective clean-up */
  PetscCall(HsContinuationDestroy(&o.cont));
  PetscCall(HsSolverDestroy(&o.solver));
  HsProblemDestroy(&o.prob);
  PetscCallMPI(MPI_Comm_free(&agree));
  PetscCall(PetscFinalize());
  MPI_Finalize(); /* ours, as MPI_Init_thread above was */
  return code;
}
