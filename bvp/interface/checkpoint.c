/* hamshoot: interruption, checkpoints and restart (docs/reliability.md).
 *
 * Cluster schedulers end a job at its time limit with SIGTERM (and SIGKILL some seconds later);
 * Ctrl-C sends SIGINT. HsInstallInterruptHandlers makes the first of these set a flag (a second one
 * has the default effect: the process ends). At the end of every Newton iteration the solver's
 * convergence test polls the flag on all ranks at once (one small MPI_Allreduce, which also carries
 * rank 0's clock for -hs_checkpoint_every Ss), so that every rank stops after the same iteration;
 * it then writes a checkpoint and the solve ends as interrupted.
 *
 * A checkpoint is a directory DIR (-hs_checkpoint, default OUT/checkpoint for -o OUT, else
 * hamshoot-checkpoint): iterate.bin (the formulation's unknowns, PETSc binary, in an order that
 * does not depend on the number of ranks), checkpoint.json (what the unknowns belong to: problem,
 * N, formulation, schemes, size, the Newton iteration, the continuation's state). It is written to
 * DIR.tmp and renamed into place, so DIR is always a complete checkpoint (at worst, after a SIGKILL
 * between the two renames, DIR.old is). -hs_restart DIR loads the iterate as the start of the next
 * solve, after checking that it fits.
 */
#include "hsbvpimpl.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t hs_signal = 0;

/* The watchdog (issue 38, after round 22): the flag above is read between Newton iterations, so a computation that
 * never returns inside one (a Krylov solve of 2e9 iterations, a line search that does not end, a blocked call) had
 * ignored SIGTERM until SIGKILL, or for ever under `timeout`, which sends none. The first stop signal (SIGTERM, SIGINT,
 * SIGHUP) therefore also arms alarm(hs_term_grace); if the signal has not been acted on when it rings (hs_acted: the
 * poll that stops the solve, or a driver that ends as interrupted, calls HsAcknowledgeInterrupt, which cancels the
 * alarm), OnWatchdog writes a message prepared beforehand (HsSetTermGrace: nothing is formatted in a handler), stops
 * gnuplot if it is running (HsGnuplotPid) and ends the process with _exit(HS_EXIT_WATCHDOG). Only async-signal-safe
 * calls (alarm, kill, write, _exit). The scheduler's warnings SIGUSR1, SIGUSR2, SIGXCPU ask for the same stop but arm
 * nothing: they come with time left before the real end (Slurm's --signal=USR1@T, T seconds before), which a Newton
 * iteration longer than the grace may use; the SIGTERM that follows them arms it. Any other SIGALRM (no stop signal
 * pending, a grace of 0, the signal already acted on) is ignored. Inside a critical section (the renames that put a
 * checkpoint in place: HsEnterCritical) the exit waits until the section ends. What that leaves is what SIGKILL
 * outside those renames leaves: at most temporary files (DIR/.NAME.tmp.XXXXXX, DIR.tmp.XXXXXX of a checkpoint) that the
 * next run on that -o or checkpoint removes, and a DIR.lock it takes over. */
static volatile sig_atomic_t hs_term_grace = 300;
static char                  hs_watchdog_msg[512];
static volatile sig_atomic_t hs_watchdog_len = 0;
static volatile sig_atomic_t hs_watch        = 0; /* a stop signal (TERM, INT, HUP) received */
static volatile sig_atomic_t hs_acted        = 0; /* the signal was acted on: the watchdog has nothing left to do */
static volatile sig_atomic_t hs_critical     = 0; /* inside HsEnterCritical/HsLeaveCritical */
static volatile sig_atomic_t hs_due          = 0; /* the watchdog rang inside the critical section */

static void OnWatchdog(int sig)
{
  (void)sig;
  if (!hs_watch || hs_acted || hs_term_grace <= 0) /* not ours, or nothing left to watch */
    return;
  if (hs_critical) { /* HsLeaveCritical ends the process right after the section */
    hs_due = 1;
    return;
  }
  if (HsGnuplotPid() > 0)
    (void)kill((pid_t)HsGnuplotPid(), SIGKILL); /* a gnuplot left running would outlive the run */
  if (hs_watchdog_len > 0 && write(STDERR_FILENO, hs_watchdog_msg, (size_t)hs_watchdog_len) < 0)
    _exit(HS_EXIT_WATCHDOG); /* nothing more to do about a stderr that cannot be written */
  _exit(HS_EXIT_WATCHDOG);
}

static void OnSignal(int sig)
{
  if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && !hs_watch && !hs_acted) {
    hs_watch = 1;
    if (hs_term_grace > 0)
      (void)alarm((unsigned)hs_term_grace);
  }
  hs_signal = sig;
}

/* HsAcknowledgeInterrupt: the signal is being acted on (the solve stops, its checkpoint
 * and the outputs are written next): the watchdog is cancelled, so that it never ends the very checkpoint the signal
 * asked for (a second signal still ends the process at once). HsEnterCritical/HsLeaveCritical: the watchdog's exit
 * is deferred to the section's end (not nested; async-signal-safe). */
static void HsAcknowledgeInterrupt(void)
{
  hs_acted = 1;
  (void)alarm(0);
}

static void HsEnterCritical(void) { hs_critical = 1; }

static void HsLeaveCritical(void)
{
  hs_critical = 0;
  if (hs_due)
    OnWatchdog(SIGALRM);
}

/*@ HsSetTermGrace - how long after the first SIGTERM (SIGINT, SIGHUP) the process may take to act on it (the end of
    its Newton iteration, or a driver's check between its solves: then it writes its checkpoint and outputs, status 3,
    however long that takes) before the watchdog ends it: a message on stderr and _exit(HS_EXIT_WATCHDOG), status 4,
    with no checkpoint of that iteration. SIGUSR1, SIGUSR2 and SIGXCPU, a scheduler's warnings with time left, arm no
    watchdog.

  Not collective (each process has its own; the executable gives every rank the same, -hs_term_grace).

  Input Parameters:
+ seconds - the grace period, in [0, 86400]; 0: no watchdog (the run waits for its Newton iteration however long)
- rank    - the MPI rank named in the message

  A stop signal received before the call and not yet acted on has its alarm re-armed with this grace (from now), or
  cancelled for 0.
@*/
PetscErrorCode HsSetTermGrace(PetscInt seconds, PetscMPIInt rank)
{
  int n;

  PetscFunctionBeginUser;
  PetscCheck(seconds >= 0 && seconds <= 86400, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_term_grace %" PetscInt_FMT " must lie in [0, 86400] seconds", seconds);
  hs_watchdog_len = 0; /* the handler writes nothing while the message is being replaced */
  n = snprintf(hs_watchdog_msg, sizeof hs_watchdog_msg,
               "hamshoot: error (rank %d): a signal to stop (SIGTERM, SIGINT, ...) was not acted on within "
               "-hs_term_grace %d s (a computation that does not return inside a Newton iteration): the watchdog ended "
               "the process, exit status %d, with no checkpoint of that iteration (the last one written, if any, "
               "stays)\n",
               (int)rank, (int)seconds, HS_EXIT_WATCHDOG);
  hs_term_grace   = (sig_atomic_t)seconds;
  hs_watchdog_len = n > 0 && (size_t)n < sizeof hs_watchdog_msg ? n : (int)sizeof hs_watchdog_msg - 1;
  if (hs_watch && !hs_acted) /* a signal before the option was read: its alarm re-armed with this grace, or cancelled */
    (void)alarm(seconds > 0 ? (unsigned)seconds : 0);
  PetscFunctionReturn(0);
}

/*@ HsInstallInterruptHandlers - the first SIGTERM or SIGINT (or SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU: a scheduler's
    warning) asks every solve to stop after its current Newton iteration and write a checkpoint
    (HsSolverSetCheckpoint); SIGTERM, SIGINT and SIGHUP also arm the watchdog (HsSetTermGrace: the process ends itself,
    status 4, if the signal has not been acted on within the grace period); a second SIGTERM, SIGINT or SIGHUP ends the
    process at once, as usual (the signal's default action), while a repeated warning (SIGUSR1, SIGUSR2, SIGXCPU,
    which the kernel sends every second of CPU time past a soft limit) changes nothing;
    SIGPIPE is ignored (a closed stdout does not end the run). Call after PetscInitialize() (PETSc installs handlers of
    its own). Not collective.
@*/
PetscErrorCode HsInstallInterruptHandlers(void)
{
  struct sigaction sa;

  PetscFunctionBeginUser;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sa.sa_flags   = SA_RESETHAND | SA_RESTART; /* the second signal: default action */
  sigemptyset(&sa.sa_mask);
  /* also the signals a scheduler or a session sends before it ends a job (Slurm's --signal=USR1@T, LSF's warning
     action, a CPU-time limit's SIGXCPU, the hang-up of a closed terminal): they had ended the run without a checkpoint
     (USR1, USR2, XCPU: their default action) or by PETSc's handler ('Caught signal number 1 Hang up', MPI_ABORT) */
  PetscCheck(!sigaction(SIGTERM, &sa, NULL) && !sigaction(SIGINT, &sa, NULL) && !sigaction(SIGHUP, &sa, NULL),
             PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot install the SIGTERM/SIGINT handlers: %s", strerror(errno));
  /* the warnings keep their handler: a second one is no request to end at once. The kernel repeats SIGXCPU every
     second of CPU time past a soft limit (ulimit -S -t), whose second one had ended the run with no checkpoint (status
     152) while its Newton iteration went on (round 24); the hard limit's SIGKILL, or a SIGTERM, ends it */
  sa.sa_flags = SA_RESTART;
  PetscCheck(!sigaction(SIGUSR1, &sa, NULL) && !sigaction(SIGUSR2, &sa, NULL) && !sigaction(SIGXCPU, &sa, NULL),
             PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot install the SIGUSR1/SIGUSR2/SIGXCPU handlers: %s",
             strerror(errno));
  /* the watchdog's alarm (over PETSc's handler of SIGALRM, which would print a stack and abort the job) */
  if (!hs_watchdog_len) {
    PetscMPIInt rank = 0;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCall(HsSetTermGrace(hs_term_grace, rank));
  }
  sa.sa_handler = OnWatchdog;
  sa.sa_flags   = SA_RESTART; /* it returns now and then (a SIGALRM not its own, inside the renames): no EINTR */
  PetscCheck(!sigaction(SIGALRM, &sa, NULL), PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot install the SIGALRM handler: %s",
             strerror(errno));
  /* a reader of stdout that went away ('hamshoot | head -1'): its writes fail (EPIPE), the run goes on to write -o
     (PETSc's handler had aborted the job on SIGPIPE, the results lost) */
  PetscCheck(signal(SIGPIPE, SIG_IGN) != SIG_ERR, PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot ignore SIGPIPE: %s",
             strerror(errno));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetCheckpoint - sets where checkpoints go and how often they are written besides at an interruption.

  Collective.

  Input Parameters:
+ s         - the solver
. dir       - the checkpoint directory (NULL: keep)
. every_its - also every so many Newton iterations (0: never)
- every_s   - also when this many seconds have passed since the last one (0: never)

  Options Database Keys:
+ -hs_checkpoint <DIR> - the directory
- -hs_checkpoint_every <K|Ss> - every K Newton iterations, or every S seconds

.seealso: HsSolverSetRestart(), HsSolverGetInterrupted(), HsInstallInterruptHandlers()
@*/
PetscErrorCode HsSolverSetCheckpoint(HsSolver s, const char dir[], PetscInt every_its, PetscReal every_s)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(every_its >= 0 && every_s >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_checkpoint_every must be >= 0");
  if (dir) {
    size_t n;
    PetscCheck(dir[0] && strlen(dir) < sizeof s->ckpt_dir - 16, comm, PETSC_ERR_ARG_WRONG,
               "-hs_checkpoint: a directory name of 1 to %d characters", (int)sizeof s->ckpt_dir - 17);
    for (const char *c = dir; *c; c++) /* as -o's (HsCheckOutputDirectory): a newline from a script's $(...) */
      PetscCheck((unsigned char)*c >= 0x20 && *c != 0x7f, comm, PETSC_ERR_ARG_WRONG,
                 "-hs_checkpoint: the directory's name holds a control character (byte %d at %d): give a plain name",
                 (int)(unsigned char)*c, (int)(c - dir) + 1);
    HsSolverCloseCheckpointDir(s); /* another directory: its parent opened (and DIR.lock taken) again at the set-up */
    PetscCall(PetscStrncpy(s->ckpt_dir, dir, sizeof s->ckpt_dir));
    /* 'ck/' and 'ck/.' name ck: without the tail, DIR.tmp and DIR.old are beside it, not inside it */
    while ((n = strlen(s->ckpt_dir)) > 1 &&
           (s->ckpt_dir[n - 1] == '/' || (n > 2 && !strcmp(s->ckpt_dir + n - 2, "/."))))
      s->ckpt_dir[n - (s->ckpt_dir[n - 1] == '/' ? 1 : 2)] = 0;
    n = strlen(s->ckpt_dir); /* 'x/..' names x's parent, which a checkpoint would replace as '..' does */
    PetscCheck(strcmp(s->ckpt_dir, ".") && strcmp(s->ckpt_dir, "/") && strcmp(s->ckpt_dir, "..") &&
                   !(n > 2 && !strcmp(s->ckpt_dir + n - 3, "/..")),
               comm, PETSC_ERR_ARG_WRONG, "-hs_checkpoint %s: a checkpoint replaces its directory; name one of its own",
               dir);
    s->ckpt_explicit = PETSC_FALSE; /* set by the -hs_checkpoint option */
  }
  s->ckpt_every_its = every_its, s->ckpt_every_s = every_s;
  PetscFunctionReturn(0);
}

/*@ HsInterruptPending - whether one of the signals of HsInstallInterruptHandlers arrived on this rank (a solver that
    runs on one rank without MPI between its steps, IPOPT's intermediate callback, asks this; so does the executable's
    wait of a failed rank for the others). Not collective; async-signal-safe. @*/
PetscBool HsInterruptPending(void) { return (PetscBool)(hs_signal != 0); }

/*@ HsSolverInterruptRequested - whether SIGTERM or SIGINT arrived on any rank (bvp/ internal: the drivers, whose
    sub-solvers stop on it without marking the solver they work for, ask this between their solves and end as
    interrupted). Collective. @*/
PetscErrorCode HsSolverInterruptRequested(HsSolver s, PetscBool *req)
{
  int f = hs_signal != 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)s)));
  *req = (PetscBool)(f != 0);
  if (*req) /* the caller ends as interrupted: the watchdog is done */
    HsAcknowledgeInterrupt();
  PetscFunctionReturn(0);
}

/*@ HsSolverStopIfInterrupted - a driver between its sub-solves (bvp/ internal: a continuation's failed step, which can
    end before any Newton iteration, and so before any poll, HsSolverCheckpointPoll): if SIGTERM or SIGINT arrived on
    any rank, marks s interrupted (unless a poll did) with the message "signal received during WHAT" and sets *stop.
    A failed step halved again and again had ignored the signal (the run went on until the second signal or SIGKILL).
    No poll wrote a checkpoint of this stop then: a solver that writes checkpoints (not a sub-solver) is marked unsaved,
    status 5 (round 26: it was 3, which promises a batch script that resubmits with -hs_restart a checkpoint of the
    stop, and a continuation stopped so had none at all). Collective. @*/
PetscErrorCode HsSolverStopIfInterrupted(HsSolver s, const char what[], PetscBool *stop)
{
  PetscFunctionBeginUser;
  PetscCall(HsSolverInterruptRequested(s, stop));
  if (*stop && !s->interrupted) {
    PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                            "signal received during %s (no checkpoint of it: the last one written, if any, stays)",
                            what));
    PetscCall(HsSolverMarkUnsaved(s));
  }
  if (*stop)
    s->interrupted = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsSolverMarkUnsaved - marks a stop of which no checkpoint exists (no poll took one) as unsaved, exit status 5, where
    s writes checkpoints (ckpt_dir[0]); a sub-solver, which writes none, is not marked: its parent decides (rounds 26,
    27: such a stop had exited 3, which promises a checkpoint of it to resume). bvp/ internal. Not collective. @*/
PetscErrorCode HsSolverMarkUnsaved(HsSolver s)
{
  PetscFunctionBeginUser;
  s->interrupt_unsaved = (PetscBool)(s->ckpt_dir[0] != 0);
  PetscFunctionReturn(0);
}

/*@ HsSolverGetCheckpoint - gets where checkpoints go and how often they are written.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameters:
+ dir       - the checkpoint directory ("" for a sub-solver, which writes none; may be NULL)
. every_its - every so many Newton iterations (0: never; may be NULL)
- every_s   - every so many seconds (0: never; may be NULL)

.seealso: HsSolverSetCheckpoint()
@*/
PetscErrorCode HsSolverGetCheckpoint(HsSolver s, const char **dir, PetscInt *every_its, PetscReal *every_s)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  if (dir)
    *dir = s->ckpt_dir;
  if (every_its)
    *every_its = s->ckpt_every_its;
  if (every_s)
    *every_s = s->ckpt_every_s;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInterrupted - gets whether the last solve was stopped by SIGTERM/SIGINT.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameters:
+ interrupted - whether the last solve was stopped by SIGTERM/SIGINT (the argument may be NULL)
- why         - a sentence saying where, and where its checkpoint is (the argument may be NULL)

.seealso: HsSolverSetCheckpoint(), HsSolverSetRestart(), HsInstallInterruptHandlers()
@*/
PetscErrorCode HsSolverGetInterrupted(HsSolver s, PetscBool *interrupted, const char **why)
{
  PetscFunctionBeginUser;
  if (interrupted)
    *interrupted = s->interrupted;
  if (why)
    *why = s->interrupt_msg;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInterruptUnsaved - gets whether the last solve, stopped by a signal, failed to write the checkpoint
    that signal asked for (a full disk, ...): the stop's iterate is lost, and the checkpoint directory holds at most an
    earlier one. hamshoot exits with HS_EXIT_UNSAVED (5) then, not 3, so that a batch script that resubmits with
    -hs_restart on 3 finds a checkpoint of the stop (round 25).

  Not collective (the same on every rank: the write's failure is agreed on).

  Input Parameter:
. s - the solver

  Output Parameter:
. unsaved - whether the interruption's checkpoint was not written

.seealso: HsSolverGetInterrupted()
@*/
PetscErrorCode HsSolverGetInterruptUnsaved(HsSolver s, PetscBool *unsaved)
{
  PetscFunctionBeginUser;
  *unsaved = (PetscBool)(s->interrupted && s->interrupt_unsaved);
  PetscFunctionReturn(0);
}

/* Whether the directory open as fd holds hamshoot's checkpoint.json: a regular file (not followed through a link,
 * opened without blocking) whose head names the format hamshoot-checkpoint-1. */
static int Marked(int fd)
{
  struct stat st;
  char        head[256];
  ssize_t     n  = -1;
  int         jf = openat(fd, "checkpoint.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

  if (jf >= 0 && !fstat(jf, &st) && S_ISREG(st.st_mode))
    n = read(jf, head, sizeof head - 1);
  if (jf >= 0)
    close(jf);
  head[n > 0 ? n : 0] = 0;
  return strstr(head, "\"format\": \"hamshoot-checkpoint-1\"") != NULL;
}

/* Whether name in the directory open as dfd (AT_FDCWD: a path) is a checkpoint directory of hamshoot's: a real
 * directory (not a symbolic link) holding a checkpoint.json of format hamshoot-checkpoint-1. 0: no, 1: yes, -1: nothing
 * there. */
static int IsCheckpointAt(int dfd, const char *name)
{
  struct stat st;
  int         fd, marked;

  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
    return errno == ENOENT || errno == ENOTDIR ? -1 : 0; /* ENOTDIR: its parent is no directory (-o a file) */
  if (!S_ISDIR(st.st_mode) || (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    return 0;
  marked = Marked(fd);
  close(fd);
  return marked;
}

/*@ HsIsCheckpointDir - whether path is a checkpoint directory of hamshoot's: a real directory (not a symbolic link)
    holding a checkpoint.json of format hamshoot-checkpoint-1 (bvp/ internal; one process). 0: no, 1: yes, -1:
    nothing there. @*/
int HsIsCheckpointDir(const char *path) { return IsCheckpointAt(AT_FDCWD, path); }

/* rm of a checkpoint directory name in the directory open as dfd, made by hamshoot (its known files only; its removal
 * then fails if anything else is there). A symbolic link, or a directory that is not a checkpoint (unless ours: the
 * fresh temporary one), is left alone: nothing outside a checkpoint is ever deleted (docs/reliability.md). The
 * directory is opened once (O_NOFOLLOW) and checked and emptied through that descriptor (openat, unlinkat), so that
 * swapping it for a link between the check and the removal changes nothing. */
static void RemoveCheckpointDir(int dfd, const char *name, PetscBool ours)
{
  static const char *const files[] = {"iterate.bin", "iterate.bin.info", "checkpoint.json", NULL};
  int                      fd      = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return;
  if (!ours && !Marked(fd)) { /* not a checkpoint: left alone */
    close(fd);
    return;
  }
  for (int i = 0; files[i]; i++)
    unlinkat(fd, files[i], 0);
  close(fd);
  unlinkat(dfd, name, AT_REMOVEDIR);
}

/*@ HsInsideTaken - whether an ancestor of dir (resolved: realpath; with self, dir itself too) is a directory another
    hamshoot run holds (its output, locked) or a checkpoint directory (which each checkpoint moves away): nothing of
    this run may go there (bvp/ internal; one process). dir need not exist: its nearest existing ancestor is where the
    walk starts. Returns 0, or 1 with the reason in err. @*/
int HsInsideTaken(const char *dir, PetscBool self, char *err, size_t len)
{
  char path[PETSC_MAX_PATH_LEN], real[PETSC_MAX_PATH_LEN], start[PETSC_MAX_PATH_LEN], *slash;
  int  missing = 0;

  snprintf(path, sizeof path, "%s", dir);
  while (!realpath(path, real)) { /* the part of dir that exists */
    if (!(slash = strrchr(path, '/')))
      snprintf(path, sizeof path, "."), missing = 1;
    else if (slash == path)
      path[1] = 0, missing = 1;
    else
      *slash = 0, missing = 1;
  }
  if (!self && !missing && (slash = strrchr(real, '/')) && slash != real) /* its ancestors only */
    *slash = 0;
  else if (!self && !missing)
    return 0;
  snprintf(start, sizeof start, "%s", self && !missing ? real : ""); /* dir itself: said so, not "X is inside X" */
  for (;;) {
    if (!strcmp(real, start) && HsIsCheckpointDir(real) == 1) {
      snprintf(err, len, "'%s' is a checkpoint directory, which each checkpoint moves away: use a place of its own",
               dir);
      return 1;
    }
    if (!strcmp(real, start) && HsDirectoryInUse(real)) {
      snprintf(err, len,
               "'%s' is in use by another hamshoot run (its output directory, locked): wait for that run to "
               "end, or use a place of its own",
               dir);
      return 1;
    }
    if (HsIsCheckpointDir(real) == 1) {
      snprintf(err, len,
               "'%s' is inside the checkpoint directory '%s', which each checkpoint moves away: use a "
               "place of its own",
               dir, real);
      return 1;
    }
    if (HsDirectoryInUse(real)) {
      snprintf(err, len,
               "'%s' is inside '%s', in use by another hamshoot run (its output directory, locked): use a "
               "place of its own",
               dir, real);
      return 1;
    }
    if (!(slash = strrchr(real, '/')) || slash == real)
      return 0;
    *slash = 0;
  }
}

/* The directory that holds the checkpoint directory ck (no trailing '/': HsSolverSetCheckpoint) into parent, and ck's
 * name in it, returned. */
static const char *SplitCheckpointDir(const char *ck, char *parent, size_t len)
{
  const char *slash = strrchr(ck, '/');

  if (!slash)
    snprintf(parent, len, ".");
  else
    snprintf(parent, len, "%.*s", (int)(slash == ck ? 1 : slash - ck), ck);
  return slash ? slash + 1 : ck;
}

#define HS_CKPT_LOCK_MARK "hamshoot checkpoint lock\n" /* the content of DIR.lock: a file of hamshoot's */
#define HS_CKPT_LOCKS_MAX 16                           /* DIR.lock files held by this process at once (its solvers') */

/* The DIR.lock files this process holds: several solvers of one program on one checkpoint directory (two solvers
 * without -o) share the flock of the first (dups of its open file description, which the lock belongs to), and the
 * last to close removes the file. refs = 0: a free entry. */
static struct {
  dev_t dev;
  ino_t ino;
  int   fd, refs;
} hs_ckpt_locks[HS_CKPT_LOCKS_MAX];

/* The entry of the lock file with the stat st among this process's, or -1. */
static int HeldHere(const struct stat *st)
{
  for (int i = 0; i < HS_CKPT_LOCKS_MAX; i++)
    if (hs_ckpt_locks[i].refs > 0 && hs_ckpt_locks[i].dev == st->st_dev && hs_ckpt_locks[i].ino == st->st_ino)
      return i;
  return -1;
}

/* Records fd (locked, with the stat st) as this process's: 0, or -1 if the table is full (the lock is then not
 * shared: a second solver of this process on it is refused as before). */
static int RecordHeld(int fd, const struct stat *st)
{
  for (int i = 0; i < HS_CKPT_LOCKS_MAX; i++)
    if (!hs_ckpt_locks[i].refs) {
      int d = dup(fd);
      if (d < 0)
        return -1;
      hs_ckpt_locks[i].dev = st->st_dev, hs_ckpt_locks[i].ino = st->st_ino, hs_ckpt_locks[i].fd = d;
      hs_ckpt_locks[i].refs = 1;
      return 0;
    }
  return -1;
}

/* The name of the lock file beside the checkpoint directory (DIR.lock) into name. */
static void LockName(HsSolver s, char *name, size_t len)
{
  char parent[PETSC_MAX_PATH_LEN];

  snprintf(name, len, "%s.lock", SplitCheckpointDir(s->ckpt_dir, parent, sizeof parent));
}

/*@ HsSolverCloseCheckpointDir - closes the checkpoint directory's parent and the lock on the last checkpoint that
    s holds, and removes the lock file DIR.lock that s took at the set-up (rank 0; bvp/ internal: HsSolverDestroy,
    HsSolverSetCheckpoint). Not collective. @*/
void HsSolverCloseCheckpointDir(HsSolver s)
{
  struct stat a, b;
  char        name[PETSC_MAX_PATH_LEN + 8];

  int e = -1;

  if (s->ckpt_lock >= 0 && !fstat(s->ckpt_lock, &a) && (e = HeldHere(&a)) >= 0 && --hs_ckpt_locks[e].refs > 0)
    e = -2; /* another solver of this process still holds it: neither removed nor released */
  if (s->ckpt_lock >= 0 && s->ckpt_pfd >= 0 && e != -2) { /* removed while held: a run that opened it meanwhile sees
                                                              it gone */
    LockName(s, name, sizeof name);
    if (!fstat(s->ckpt_lock, &a) && !fstatat(s->ckpt_pfd, name, &b, AT_SYMLINK_NOFOLLOW) && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
      unlinkat(s->ckpt_pfd, name, 0);
  }
  if (e >= 0) /* the last: the process's own descriptor too (the flock goes with the last one) */
    close(hs_ckpt_locks[e].fd), hs_ckpt_locks[e].refs = 0;
  if (s->ckpt_lock >= 0)
    close(s->ckpt_lock);
  if (s->ckpt_pfd >= 0)
    close(s->ckpt_pfd);
  if (s->ckpt_hold >= 0)
    close(s->ckpt_hold);
  s->ckpt_pfd = s->ckpt_hold = s->ckpt_lock = -1;
}

/* Rank 0, at the set-up: an exclusive flock on DIR.lock beside the checkpoint directory (in the parent open as
 * s->ckpt_pfd; made with hamshoot's mark if absent), held until the solver is destroyed, so that a second run on the
 * same checkpoint (two runs without -o in one working directory, or on one -hs_checkpoint) is refused before its solve
 * even while the first has no checkpoint yet (before, both ran and their checkpoints replaced or dropped each other's).
 * A link, a directory or a file of the user's at that name is refused, never followed, locked or removed. 0, or 1 with
 * err. */
static int LockCheckpointPlace(HsSolver s, char *err, size_t len)
{
  char        name[PETSC_MAX_PATH_LEN + 8], head[64];
  struct stat st, at;

  LockName(s, name, sizeof name);
  for (int tries = 0; tries < 10; tries++) {
    int     made = 1, fd = openat(s->ckpt_pfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    ssize_t n = 0;
    if (fd < 0 && errno == EEXIST)
      made = 0, fd = openat(s->ckpt_pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    else if (fd < 0 && !s->ckpt_explicit) /* the default's directory is read-only (or full): no checkpoint can be */
      return 0; /* written there either, nothing to guard (runs from such a directory go on) */
    else if (fd < 0) {
      snprintf(err, len,
               "-hs_checkpoint %s: cannot create its lock file '%s' beside it: %s (no checkpoint could be "
               "written there)",
               s->ckpt_dir, name, strerror(errno));
      return 1;
    }
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
      snprintf(err, len, "checkpoint directory '%s': cannot use its lock file '%s' beside it: %s", s->ckpt_dir, name,
               fd < 0 ? strerror(errno) : "not a regular file");
      if (fd >= 0)
        close(fd);
      return 1;
    }
    if (HeldHere(&st) >= 0) { /* another solver of this process holds it: shared (its open file description) */
      int i = HeldHere(&st), d = dup(hs_ckpt_locks[i].fd);
      close(fd);
      if (d < 0) {
        snprintf(err, len, "checkpoint directory '%s': cannot share its lock '%s': %s", s->ckpt_dir, name,
                 strerror(errno));
        return 1;
      }
      hs_ckpt_locks[i].refs++;
      s->ckpt_lock = d;
      return 0;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
      int e = errno;
      close(fd);
      if (e == EWOULDBLOCK)
        snprintf(err, len,
                 "checkpoint directory '%s' is in use by another hamshoot run (it holds a lock on '%s'): "
                 "wait for that run to end, or give this run its own -o or -hs_checkpoint",
                 s->ckpt_dir, name);
      else
        snprintf(err, len, "checkpoint directory '%s': cannot lock '%s': %s", s->ckpt_dir, name, strerror(e));
      return 1;
    }
    if (fstatat(s->ckpt_pfd, name, &at, AT_SYMLINK_NOFOLLOW) || at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
      close(fd); /* its holder removed it between our open and our lock: the next one is tried */
      continue;
    }
    if (!made && (n = pread(fd, head, sizeof head - 1, 0)) == 0)
      made = 1; /* empty: one that a run left between making and marking it (killed, a full disk): ours to mark */
    else if (!made && n > 0)
      head[n] = 0, n = strcmp(head, HS_CKPT_LOCK_MARK) ? -1 : 0;
    if (made && pwrite(fd, HS_CKPT_LOCK_MARK, strlen(HS_CKPT_LOCK_MARK), 0) != (ssize_t)strlen(HS_CKPT_LOCK_MARK)) {
      int e = errno; /* a full disk: no lock file is left behind (it had refused every later run as the user's) */
      unlinkat(s->ckpt_pfd, name, 0), close(fd);
      if (!s->ckpt_explicit) /* as in a read-only directory: no checkpoint can be written there either */
        return 0;
      snprintf(err, len, "-hs_checkpoint %s: cannot write its lock file '%s' beside it: %s", s->ckpt_dir, name,
               strerror(e));
      return 1;
    }
    if (n) {
      close(fd);
      snprintf(err, len,
               "checkpoint directory '%s': '%s' beside it is not hamshoot's lock file: move it away, or give "
               "another -hs_checkpoint",
               s->ckpt_dir, name);
      return 1;
    }
    s->ckpt_lock = fd;
    RecordHeld(fd, &st);
    return 0;
  }
  snprintf(err, len, "checkpoint directory '%s': its lock file '%s' kept being replaced", s->ckpt_dir, name);
  return 1;
}

/* The errno of looking at path (not following a link) when that is neither success nor "nothing there" (ENOENT, or
 * ENOTDIR: a parent that is a file), else 0: a loop of links or a name too long had read as "exists and is not a
 * checkpoint". */
static int Unreadable(const char *path)
{
  struct stat st;

  if (!fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) || errno == ENOENT || errno == ENOTDIR)
    return 0;
  return errno;
}

/* Whether the directory open as dfd holds only a checkpoint's files, as regular files (remove: and removes them); the
 * name of the first other entry in bad (if not NULL). */
static int OnlyCheckpointFiles(int dfd, int remove, char *bad, size_t blen)
{
  static const char *const files[] = {"iterate.bin", "iterate.bin.info", "checkpoint.json", NULL};
  int                      fd = dup(dfd), only = 1;
  DIR                     *t;
  struct dirent           *f;
  struct stat              st;

  if (fd < 0 || !(t = fdopendir(fd))) {
    if (fd >= 0)
      close(fd);
    return 0;
  }
  rewinddir(t); /* the offset is shared with dfd's other duplicates: a second pass starts at the end otherwise */
  while ((f = readdir(t))) {
    int ours = !strncmp(f->d_name, ".checkpoint.json.tmp.", 21) && strlen(f->d_name) == 27;
    if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
      continue;
    for (int i = 0; files[i]; i++)
      ours = ours || !strcmp(f->d_name, files[i]);
    if (!ours || fstatat(dfd, f->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
      if (only && bad)
        snprintf(bad, blen, "%s", f->d_name);
      only = 0;
    } else if (remove)
      unlinkat(dfd, f->d_name, 0);
  }
  closedir(t);
  return only;
}

/*@ HsRemoveStaleCheckpointTemps - rank 0, the checkpoint's place held by this run (DIR.lock, or the lock of -o, for
    the default OUT/checkpoint: HsCheckOutputDirectory calls it): the temporary checkpoints base.tmp.XXXXXX in the
    directory open as pfd that a process ended while it wrote them left there (SIGKILL, or the watchdog of
    HsSetTermGrace: issue 38, after round 22), each the size of the iterate, are removed (bvp/ internal). Only a real
    directory that no process holds (its writer holds its flock until it is in place) and that holds nothing but a
    checkpoint's regular files (iterate.bin, iterate.bin.info, checkpoint.json, its temporary
    .checkpoint.json.tmp.XXXXXX) is removed, with them; anything else is left as it is. One exception: while base itself
    is absent, a temporary that holds a complete checkpoint (its checkpoint.json, written last) is the newest complete
    checkpoint (a run ended between the two renames of MoveIntoPlace: base.old, then base) and is renamed to base
    instead (a second one found after that is removed as usual). @*/
void HsRemoveStaleCheckpointTemps(int pfd, const char *base)
{
  char           pre[PETSC_MAX_PATH_LEN];
  size_t         l = (size_t)snprintf(pre, sizeof pre, "%s.tmp.", base);
  int            fd, dfd, missing;
  DIR           *d;
  struct dirent *e;
  struct stat    st;

  if (l >= sizeof pre || (fd = dup(pfd)) < 0)
    return;
  if (!(d = fdopendir(fd))) {
    close(fd);
    return;
  }
  rewinddir(d); /* pfd's offset, shared by its duplicates, may be at the end of an earlier readdir */
  missing = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) && errno == ENOENT;
  while ((e = readdir(d))) {
    if (strlen(e->d_name) != l + 6 || strncmp(e->d_name, pre, l) ||
        fstatat(pfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
      continue;
    if ((dfd = openat(pfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
      continue;
    if (flock(dfd, LOCK_EX | LOCK_NB) || !OnlyCheckpointFiles(dfd, 0, NULL, 0))
      ; /* held: being written; or not only a checkpoint's files: left */
    else if (missing && !fstatat(dfd, "checkpoint.json", &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
      missing = renameat(pfd, e->d_name, pfd, base) != 0; /* complete (checkpoint.json is written last) and DIR
                                                             absent: a run ended between MoveIntoPlace's renames */
    else if (OnlyCheckpointFiles(dfd, 1, NULL, 0))
      unlinkat(pfd, e->d_name, AT_REMOVEDIR); /* its files first, then it */
    close(dfd);
  }
  closedir(d);
}

/* Rank 0, at the set-up: the checkpoint directory ck, whose parent is parent, is not another run's (a checkpoint that
 * a running hamshoot put in place last holds its flock: two runs on one -hs_checkpoint, or two runs without -o in one
 * working directory, had replaced each other's checkpoints); its parent opened and held in s->ckpt_pfd, so that every
 * checkpoint goes where the set-up found it (a parent moved away and replaced by a link during the run gets nothing).
 * A -hs_checkpoint given by the user has its parent made (mkdir -p) and a directory made and removed there now, so that
 * a place where no checkpoint can ever be written is an error before the solve, not a warning at each checkpoint; the
 * default's parent (-o, made later) that cannot be opened yet is looked up at each checkpoint. 0, or 1 with err. */
static int TakeCheckpointDir(HsSolver s, const char *parent, char *err, size_t len)
{
  char e2[PETSC_MAX_PATH_LEN + 128];

  if (s->ckpt_hold < 0 && HsIsCheckpointDir(s->ckpt_dir) == 1 && HsDirectoryInUse(s->ckpt_dir)) {
    snprintf(err, len,
             "checkpoint directory '%s' is in use by another hamshoot run (it holds a lock on it): wait for "
             "that run to end, or give another -hs_checkpoint",
             s->ckpt_dir);
    return 1;
  }
  if (s->ckpt_pfd < 0 && HsDirOpen(parent, s->ckpt_explicit, &s->ckpt_pfd, e2, sizeof e2)) {
    s->ckpt_pfd = -1;
    if (s->ckpt_explicit) {
      snprintf(err, len, "-hs_checkpoint %s: %s (no checkpoint could be written there)", s->ckpt_dir, e2);
      return 1;
    }
  }
  if (s->ckpt_explicit && s->ckpt_pfd >= 0 && s->ckpt_hold < 0) { /* a directory can be made there, now */
    char probe[64] = ".hamshoot-probe.XXXXXX";
    if (HsCreateUniqueAt(s->ckpt_pfd, probe, 1) < 0) {
      snprintf(err, len,
               "-hs_checkpoint %s: cannot create a directory in '%s': %s (no checkpoint could be written there)",
               s->ckpt_dir, parent, strerror(errno));
      return 1;
    }
    unlinkat(s->ckpt_pfd, probe, AT_REMOVEDIR);
  }
  if (s->ckpt_lock < 0 && s->ckpt_pfd >= 0 && (s->ckpt_explicit || !strcmp(s->ckpt_dir, HS_CHECKPOINT_DIR_DEFAULT)) &&
      LockCheckpointPlace(s, err, len)) /* the default OUT/checkpoint: -o's lock covers it */
    return 1;
  if (s->ckpt_pfd >= 0 && (s->ckpt_lock >= 0 || HsDirInsideLocked(parent))) /* this run's place now */
    HsRemoveStaleCheckpointTemps(s->ckpt_pfd, SplitCheckpointDir(s->ckpt_dir, NULL, 0));
  return 0;
}

/* Whether the existing checkpoint directory path holds an entry that is no checkpoint's file (its name in bad). */
static int ForeignEntry(const char *path, char *bad, size_t blen)
{
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), only;

  if (fd < 0)
    return 0;
  only = OnlyCheckpointFiles(fd, 0, bad, blen);
  close(fd);
  return !only;
}

/*@ HsSolverCheckCheckpointDir - before a solve (HsSolverSetUp; rank 0): the checkpoint directory and its DIR.old
    are each absent or a checkpoint of hamshoot's (IsCheckpointDir) holding nothing but a checkpoint's files, so that
    no directory or file of the user's is ever replaced, moved or emptied by a checkpoint (bvp/ internal). An error
    names the directory (and the file). Collective. @*/
PetscErrorCode HsSolverCheckCheckpointDir(HsSolver s)
{
  char        old[PETSC_MAX_PATH_LEN + 8], err[3 * PETSC_MAX_PATH_LEN + 256] = "", name[PETSC_MAX_PATH_LEN] = "";
  int         bad = 0, e;
  PetscMPIInt rank;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  if (!s->ckpt_dir[0])
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    char parent[PETSC_MAX_PATH_LEN];
    snprintf(old, sizeof old, "%s.old", s->ckpt_dir);
    (void)SplitCheckpointDir(s->ckpt_dir, parent, sizeof parent);
    size_t n = (size_t)snprintf(err, sizeof err, "checkpoint directory '%s': ", s->ckpt_dir); /* '.' said alone */
    if (HsInsideTaken(parent, PETSC_TRUE, err + n, sizeof err - n)) /* another run's output or a checkpoint holds it */
      bad = 1;
    else if ((e = Unreadable(s->ckpt_dir)) || (e = Unreadable(old)))
      bad = 1, snprintf(err, sizeof err, "checkpoint directory '%s': cannot look at '%s': %s", s->ckpt_dir,
                        Unreadable(s->ckpt_dir) ? s->ckpt_dir : old, strerror(e));
    else if (!HsIsCheckpointDir(s->ckpt_dir) || !HsIsCheckpointDir(old))
      bad = 1, snprintf(err, sizeof err,
                        "checkpoint directory '%s': '%s' exists and is not a checkpoint of hamshoot's "
                        "(a checkpoint never replaces other files): remove it, or give another "
                        "-hs_checkpoint",
                        s->ckpt_dir, HsIsCheckpointDir(s->ckpt_dir) ? old : s->ckpt_dir);
    else if (ForeignEntry(s->ckpt_dir, name, sizeof name) || ForeignEntry(old, name, sizeof name))
      /* round 24: a file of the user's in a checkpoint went with it to DIR.old at the next checkpoint and stayed
         there, so that DIR.old was no checkpoint and every later checkpoint was dropped (warnings, exit 0) */
      bad = 1, snprintf(err, sizeof err,
                        "checkpoint directory '%s': '%s' holds '%s', which is not a checkpoint's file (each checkpoint "
                        "moves the last one away and removes it): move it out, or give another -hs_checkpoint",
                        s->ckpt_dir, ForeignEntry(s->ckpt_dir, name, sizeof name) ? s->ckpt_dir : old, name);
    else
      bad = TakeCheckpointDir(s, parent, err, sizeof err);
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "%s", err);
  PetscFunctionReturn(0);
}

typedef struct {
  HsSolver s;
  PetscInt it, size;
} CkptCtx;

static int WriteJSON(FILE *f, void *ctx)
{
  CkptCtx    *c = ctx;
  HsSolver    s = c->s;
  const char *type;

  type = ((PetscObject)s)->type_name; /* not HsSolverGetType: solver.c calls this file (no cycle of files) */
  fprintf(f, "{\n  \"format\": \"hamshoot-checkpoint-1\",\n  \"problem\": ");
  HsJsonString(f, s->prob->name);
  fprintf(f, ",\n  \"N\": %d,\n", (int)s->N);
  fprintf(f, "  \"bvp_type\": \"%s\",\n  \"state_scheme\": \"%s\",\n  \"costate_scheme\": \"%s\",\n", type,
          HsSolverStateName(s), HsSolverCostateName(s));
  fprintf(f, "  \"unknowns\": %d,\n", (int)c->size);
  if (s->prob->text_hash) /* a problem file's text: another file of the same name, or an edited one, is refused */
    fprintf(f, "  \"problem_text\": \"FNV-1a %016llx\",\n", s->prob->text_hash);
  if (s->ckpt_layout[0])
    fprintf(f, "  \"layout\": \"%s\",\n", s->ckpt_layout);
  if (s->ckpt_coarse) /* -hs_extrapolate's coarse grid of this iterate: a restart solves the grids in order */
    fprintf(f, "  \"coarse_grid\": %d,\n", (int)s->ckpt_coarse);
  if (s->bnd_e_now >= 0) /* in the eps-continuation of bounded controls: a restart goes on from this smoothing */
    fprintf(f, "  \"bounds_smoothing\": %.17g,\n", (double)s->bnd_e_now);
  fprintf(f, "  \"newton_iteration\": %d,\n  \"parameters\": {", (int)c->it);
  for (int i = 0; i < s->prob->nparams; i++)
    fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", s->prob->params[i].name, *s->prob->params[i].value);
  fprintf(f, "},\n  \"continuation\": %s\n}\n", s->ckpt_extra[0] ? s->ckpt_extra : "null");
  return ferror(f);
}

/* The binary viewer of iterate.bin without its .info file: PETSc would write one and, reading, load it into the
 * options database, so that a planted iterate.bin.info ('-log_view ascii:FILE') would truncate any file the user can
 * write. A checkpoint is data: no .info is written or read. Errors as codes (the caller's error handler). */
static PetscErrorCode OpenIterate(MPI_Comm comm, const char *bin, PetscFileMode mode, PetscViewer *v)
{
  PetscErrorCode ierr;

  *v   = NULL;
  ierr = PetscViewerCreate(comm, v);
  if (!ierr)
    ierr = PetscViewerSetType(*v, PETSCVIEWERBINARY);
  if (!ierr)
    ierr = PetscViewerBinarySkipInfo(*v);
  if (!ierr)
    ierr = PetscViewerBinarySetSkipOptions(*v, PETSC_TRUE);
  if (!ierr)
    ierr = PetscViewerFileSetMode(*v, mode);
  if (!ierr)
    ierr = PetscViewerFileSetName(*v, bin);
  return ierr;
}

/* Whether the checkpoint base in the directory open as pfd is held (flock) by another process: a running hamshoot put
 * it in place; hold is the one this run holds (-1: none), which is not another's. */
static int HeldByOther(int pfd, const char *base, int hold)
{
  struct stat a, b;
  int         fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), busy = 0;

  if (fd < 0)
    return 0;
  if (hold >= 0 && !fstat(fd, &a) && !fstat(hold, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    busy = 0;
  else if (flock(fd, LOCK_SH | LOCK_NB)) /* shared: fails only against the holder's exclusive lock, not another
                                             run's probe (HsDirectoryInUse) */
    busy = errno == EWOULDBLOCK;
  else
    flock(fd, LOCK_UN);
  close(fd);
  return busy;
}

/* Rank 0: the new checkpoint (tmp, complete) into the checkpoint directory dir, named base in the directory open as
 * pfd, the previous one kept as base.old until then; only checkpoints of hamshoot's are moved or removed
 * (IsCheckpointAt), all through pfd, and none that another running hamshoot holds (HeldByOther; hold: this run's). 0,
 * or 1 with err (the caller removes tmp: a checkpoint that cannot be moved into place, because something else took
 * dir's place since the set-up's check, is dropped rather than left to pile up beside it). */
static int MoveIntoPlace(int pfd, const char *dir, const char *base, const char *tmp, int hold, char *err, size_t len)
{
  char old[PETSC_MAX_PATH_LEN + 8];

  snprintf(old, sizeof old, "%s.old", base);
  if (!IsCheckpointAt(pfd, base) || !IsCheckpointAt(pfd, old)) {
    snprintf(err, len,
             "'%s' or its '.old' is not a checkpoint of hamshoot's (something else took its place): this "
             "checkpoint is dropped",
             dir);
    return 1;
  }
  if (HeldByOther(pfd, base, hold)) {
    snprintf(err, len,
             "'%s' is the checkpoint of another hamshoot run, which holds a lock on it: this checkpoint is "
             "dropped (give each run its own -hs_checkpoint or -o)",
             dir);
    return 1;
  }
  RemoveCheckpointDir(pfd, old, PETSC_FALSE);
  HsEnterCritical(); /* the watchdog never ends the run between the two renames (no DIR then: only DIR.old and tmp) */
  if ((renameat(pfd, base, pfd, old) && errno != ENOENT) || renameat(pfd, tmp, pfd, base)) {
    int e = errno;
    HsLeaveCritical();
    snprintf(err, len, "cannot move the checkpoint into '%s': %s", dir, strerror(e));
    return 1;
  }
  HsLeaveCritical();
  RemoveCheckpointDir(pfd, old, PETSC_FALSE);
  return 0;
}

/* iterate.bin of the gathered iterate Z (rank 0, sequential) in the directory open as tfd: PETSc's binary format of a
 * Vec, as VecView writes it and VecLoad reads it (the class id and the size as PetscInt, then the values; big-endian,
 * PetscBinaryWrite), without the .info file; a new file (O_EXCL | O_NOFOLLOW), synced. Errors come back as codes (the
 * caller's error handler), the file closed. */
static PetscErrorCode WriteIterate(int tfd, Vec Z)
{
  PetscInt       tr[2] = {VEC_FILE_CLASSID, 0};
  PetscScalar   *z;
  PetscErrorCode ierr;
  int            fd;

  ierr = VecGetSize(Z, &tr[1]);
  if (ierr)
    return ierr;
  if ((fd = openat(tfd, "iterate.bin", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)) < 0)
    return PETSC_ERR_FILE_OPEN;
  ierr = PetscBinaryWrite(fd, tr, 2, PETSC_INT);
  if (!ierr && !(ierr = VecGetArray(Z, &z))) {
    ierr = PetscBinaryWrite(fd, z, tr[1], PETSC_SCALAR);
    ierr = VecRestoreArray(Z, &z) ? PETSC_ERR_LIB : ierr;
  }
  if (fsync(fd) && !ierr)
    ierr = PETSC_ERR_FILE_WRITE;
  if (close(fd) && !ierr)
    ierr = PETSC_ERR_FILE_WRITE;
  return ierr;
}

/* Rank 0: the parent of the checkpoint directory open as *pfd (HsDirOpen: for the locked -o, through the lock's
 * descriptor, never its path), and a new directory there, base.tmp.XXXXXX (HsCreateUniqueAt: never a directory or link
 * that was there), its name in tmp and open as *tfd. 0, or 1 with err. */
static int MakeTempCheckpoint(HsSolver s, int *pfd, char *tmp, size_t tlen, int *tfd, char *err, size_t len)
{
  char        parent[PETSC_MAX_PATH_LEN];
  const char *base = SplitCheckpointDir(s->ckpt_dir, parent, sizeof parent);
  size_t      n;

  *pfd = *tfd = -1, tmp[0] = 0;
  snprintf(err, len, "cannot create a checkpoint directory beside '%s': ", s->ckpt_dir);
  n = strlen(err);
  if (s->ckpt_pfd >= 0 && !HsDirInsideLocked(parent)) { /* held since the set-up (TakeCheckpointDir), not looked up
                                                            by its path again; inside -o: through the lock's */
    if ((*pfd = fcntl(s->ckpt_pfd, F_DUPFD_CLOEXEC, 0)) < 0) {
      snprintf(err + n, len - n, "%s", strerror(errno));
      return 1;
    }
  } else if (HsDirOpen(parent, 0, pfd, err + n, len - n)) /* the reason after the head */
    return 1;
  err[0] = 0;
  snprintf(tmp, tlen, "%s.tmp.XXXXXX", base);
  if (HsCreateUniqueAt(*pfd, tmp, 1) < 0) {
    snprintf(err, len, "cannot create a checkpoint directory beside '%s': %s", s->ckpt_dir, strerror(errno));
    tmp[0] = 0;
    return 1;
  }
  if ((*tfd = openat(*pfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
      flock(*tfd, LOCK_EX | LOCK_NB)) {
    snprintf(err, len, "cannot open and lock the new checkpoint directory beside '%s': %s", s->ckpt_dir,
             strerror(errno));
    return 1;
  }
  return 0;
}

/*@ HsSolverWriteCheckpoint - writes X (the formulation's unknowns) and what they belong to into the checkpoint
    directory, replacing the previous checkpoint only once the new one is complete (bvp/ internal). The new one is
    written into a fresh directory DIR.tmp.XXXXXX (never a directory or link planted there) and renamed into place, all
    through a descriptor of DIR's parent (for the default OUT/checkpoint, that of the locked -o: HsDirOpen), never its
    path. A write that fails (a full disk, a directory taken away) leaves the previous checkpoint as it was, removes the
    partial one and returns *failed with the reason in err: the caller warns and the solve goes on. Only rank 0 writes.
    Also a driver's, for an iterate of its own in X (HsSolverSolveExtrapolated's coarse grids). Collective. @*/
PetscErrorCode HsSolverWriteCheckpoint(HsSolver s, Vec X, PetscInt it, PetscBool *failed, char *err, size_t len)
{
  char           parent[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 16], tdir[2 * PETSC_MAX_PATH_LEN + 64] = "";
  const char    *base = SplitCheckpointDir(s->ckpt_dir, parent, sizeof parent);
  int            bad = 0, pfd = -1, tfd = -1;
  PetscMPIInt    rank;
  CkptCtx        c    = {s, it + s->ckpt_it0, 0}; /* a resumed solve counts on from its checkpoint's iteration */
  MPI_Comm       comm = PetscObjectComm((PetscObject)s);
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  err[0] = 0;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecGetSize(X, &c.size));
  if (!rank) {
    bad = MakeTempCheckpoint(s, &pfd, tmp, sizeof tmp, &tfd, err, len);
    snprintf(tdir, sizeof tdir, "%s/%s", parent, tmp); /* for messages */
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  if (!bad) { /* X gathered to rank 0 (collective, no I/O), written there alone: a write that fails (a full disk)
                 cannot leave the other ranks waiting inside a collective write (it had deadlocked the job); PETSc's
                 errors come back as codes, and the solve goes on without this checkpoint */
    Vec        Z;
    VecScatter sc;
    PetscCall(VecScatterCreateToZero(X, &sc, &Z));
    PetscCall(VecScatterBegin(sc, X, Z, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, X, Z, INSERT_VALUES, SCATTER_FORWARD));
    if (!rank) {
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = WriteIterate(tfd, Z);
      PetscCall(PetscPopErrorHandler());
      if (ierr)
        snprintf(err, len, "cannot write '%s/iterate.bin' (PETSc error %d; a full disk?)", tdir, (int)ierr);
      bad = ierr != 0;
    }
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(VecDestroy(&Z));
  }
  if (!rank && !bad && !(bad = HsWriteFileAtomicAt(tfd, tdir, "checkpoint.json", WriteJSON, &c, err, len)))
    bad = MoveIntoPlace(pfd, s->ckpt_dir, base, tmp, s->ckpt_hold, err, len);
  if (!rank && !bad) { /* this run holds its checkpoint (its flock) until the next one replaces it */
    if (s->ckpt_hold >= 0)
      close(s->ckpt_hold);
    s->ckpt_hold = tfd, tfd = -1;
  }
  if (!rank && bad && tmp[0]) /* a partial checkpoint: removed */
    RemoveCheckpointDir(pfd, tmp, PETSC_TRUE);
  if (tfd >= 0)
    close(tfd);
  if (pfd >= 0)
    close(pfd);
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, (PetscMPIInt)len, MPI_CHAR, 0, comm));
  *failed        = (PetscBool)(bad != 0);
  s->ckpt_last_t = MPI_Wtime();
  PetscFunctionReturn(0);
}

/*@ HsSolverCheckpointPoll - at the end of Newton iteration `it` (bvp/ internal; from the
    convergence test): on all ranks at once, whether a signal arrived or a periodic checkpoint is
    due; writes the checkpoint of X then, and on a signal sets *stop (the solve ends as interrupted).
    Collective. @*/
PetscErrorCode HsSolverCheckpointPoll(HsSolver s, Vec X, PetscInt it, PetscBool *stop)
{
  int         f[2] = {hs_signal != 0, 0};
  PetscMPIInt rank;
  MPI_Comm    comm   = PetscObjectComm((PetscObject)s);
  PetscBool   failed = PETSC_FALSE;
  char        err[2 * PETSC_MAX_PATH_LEN + 128];

  PetscFunctionBeginUser;
  *stop = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    f[1] = (s->ckpt_every_its > 0 && it > 0 && it % s->ckpt_every_its == 0) ||
           (s->ckpt_every_s > 0 && MPI_Wtime() - s->ckpt_last_t >= s->ckpt_every_s);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, f, 2, MPI_INT, MPI_MAX, comm));
  if (!f[0] && !f[1])
    PetscFunctionReturn(0);
  if (f[0]) /* acted on now: the watchdog must not end the checkpoint the signal asked for (nor the outputs after) */
    HsAcknowledgeInterrupt();
  if (s->ckpt_dir[0]) /* "": a sub-solver (the direct solve of -hs_initial_guess direct, ...) */
    PetscCall(HsSolverWriteCheckpoint(s, X, it, &failed, err, sizeof err));
  else if (f[1] && !f[0] && s->ckpt_parent) /* a coarse grid's periodic one: its parent's (a signal: the parent's) */
    PetscCall((*s->ckpt_parent_write)(s->ckpt_parent, s, &failed, err, sizeof err));
  if (failed) /* the previous checkpoint stays valid; the solve goes on (or stops, on a signal) */
    PetscCall(PetscPrintf(
        comm, "hamshoot: warning: the checkpoint after Newton iteration %" PetscInt_FMT " was not written: %s\n", it,
        err));
  if (f[0]) {
    *stop          = PETSC_TRUE;
    s->interrupted = PETSC_TRUE;
    s->interrupt_unsaved = failed; /* round 25: had exited 3 ("checkpoint written") with none written */
    if (failed)
      PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                              "signal received; stopped after Newton iteration %" PetscInt_FMT
                              ", but its checkpoint could not be written (%s)",
                              it, err));
    else
      PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                              "signal received; stopped after Newton iteration %" PetscInt_FMT
                              ", checkpoint in %s (resume: the same command with -hs_restart %s)",
                              it, s->ckpt_dir[0] ? s->ckpt_dir : "(none: a sub-solve)", s->ckpt_dir));
  }
  PetscFunctionReturn(0);
}

/* The text after "key": in the one-line JSON object j (the continuation's state; NULL if absent). */
static const char *Field(const char *j, const char *key)
{
  char        k[80];
  const char *p;

  snprintf(k, sizeof k, "\"%s\":", key);
  p = strstr(j, k);
  return p ? p + strlen(k) + strspn(p + strlen(k), " ") : NULL;
}

/* The text after the top-level member "key": of checkpoint.json's text j (NULL if absent): strings and nesting are
 * followed, so that only a key of the outer object counts, however the file is laid out. Round 24: the first "key":
 * anywhere had been taken, so that a parameter named continuation, layout, coarse_grid or bounds_smoothing (in
 * "parameters") was read as that member: the parameter check skipped, a run's own checkpoint refused, another
 * smoothing resumed. */
static const char *Member(const char *j, const char *key)
{
  size_t kl    = strlen(key);
  int    depth = 0;

  for (const char *p = j; *p; p++) {
    if (*p == '"') {
      const char *q = p + 1, *c;
      while (*q && *q != '"')
        q += *q == '\\' && q[1] ? 2 : 1;
      if (!*q)
        return NULL;
      c = q + 1 + strspn(q + 1, " \t\r\n");
      if (depth == 1 && (size_t)(q - p - 1) == kl && !strncmp(p + 1, key, kl) && *c == ':')
        return c + 1 + strspn(c + 1, " \t\r\n");
      p = q;
    } else if (*p == '{' || *p == '[')
      depth++;
    else if (*p == '}' || *p == ']')
      depth--;
  }
  return NULL;
}

/* checkpoint.json of dir, read on rank 0 and sent to all (at most 64 KiB). */
static PetscErrorCode ReadJSON(MPI_Comm comm, const char *dir, char *j, size_t len)
{
  char        path[PETSC_MAX_PATH_LEN], err[PETSC_MAX_PATH_LEN + 64] = "";
  PetscMPIInt rank;
  int         bad = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  j[0] = 0;
  if (!rank) {
    FILE  *f;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/checkpoint.json", dir);
    if (!(f = HsFileOpenRegular(path, "-hs_restart", 0, err, sizeof err)))
      bad = 1;
    else {
      n    = fread(j, 1, len - 1, f);
      j[n] = 0;
      fclose(f);
      if (!strstr(j, "\"format\": \"hamshoot-checkpoint-1\"") || n == len - 1)
        snprintf(err, sizeof err, "-hs_restart %s: %s is not a hamshoot checkpoint", dir, path), bad = 1;
    }
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_OPEN, "%s", err);
  PetscCallMPI(MPI_Bcast(j, (PetscMPIInt)len, MPI_CHAR, 0, comm));
  PetscFunctionReturn(0);
}

/* That member key of the checkpoint j is the string or integer want; else an error naming both. */
static PetscErrorCode Expect(MPI_Comm comm, const char *dir, const char *j, const char *key, const char *want)
{
  const char *p        = Member(j, key);
  char        got[128] = "?";
  size_t      n;

  PetscFunctionBeginUser;
  if (p) {
    if (*p == '"')
      p++;
    n = strcspn(p, "\",\n");
    PetscCall(PetscStrncpy(got, p, PetscMin(n + 1, sizeof got)));
  }
  PetscCheck(!strcmp(got, want), comm, PETSC_ERR_ARG_INCOMP,
             "-hs_restart %s: the checkpoint has %s = %s, this run %s (resume with the options of the interrupted run)",
             dir, key, got, want);
  PetscFunctionReturn(0);
}

/* A problem file's text is the checkpoint's (its hash, problem_text): another file of the problem's name, or the file
 * edited since, is another problem (round 28: a checkpoint of the built-in pendulum had resumed a file 'pendulum' of
 * another T, end state and potential, without a word); a built-in problem and a file are never the same. */
static PetscErrorCode CheckProblemText(HsSolver s, const char *dir, const char *j)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  const char *p    = Member(j, "problem_text");
  char        want[64];

  PetscFunctionBeginUser;
  if (!s->prob->text_hash && !p)
    PetscFunctionReturn(0);
  PetscCall(PetscSNPrintf(want, sizeof want, "\"FNV-1a %016llx\"", s->prob->text_hash));
  PetscCheck(s->prob->text_hash && p && !strncmp(p, want, strlen(want)), comm, PETSC_ERR_ARG_INCOMP,
             "-hs_restart %s: the checkpoint belongs to another text of the problem '%s' (%s): another problem file "
             "of that name, or the file edited since (resume with the problem file of the interrupted run)",
             dir, s->prob->name,
             !p                    ? "the checkpoint has no problem_text: the built-in problem's, or written by a "
                                     "hamshoot before problem texts were recorded"
             : !s->prob->text_hash ? "this run's is the built-in one"
                                   : "their texts' hashes differ");
  PetscFunctionReturn(0);
}

/* Rank 0: iterate.bin (open as f) is what WriteIterate writes for size unknowns, every value finite; 0, or 1 with err
 * (a truncated file had failed VecLoad on rank 0 alone, the other ranks then aborted after 10 s; a NaN was found only
 * as a domain error of the first residual). */
static int CheckIterate(FILE *f, PetscInt size, const char *dir, char *err, size_t len)
{
  struct stat st;
  PetscInt    tr[2];
  PetscScalar buf[1024];
  long long   want = (long long)(2 * sizeof(PetscInt)) + (long long)size * (long long)sizeof(PetscScalar);
  int         fd   = fileno(f);

  if (fstat(fd, &st) || (long long)st.st_size != want)
    return snprintf(err, len,
                    "-hs_restart %s: iterate.bin has %lld bytes, not the %lld of %" PetscInt_FMT " unknowns (a "
                    "truncated or foreign file)",
                    dir, (long long)st.st_size, want, size),
           1;
  if (PetscBinaryRead(fd, tr, 2, NULL, PETSC_INT) || tr[0] != VEC_FILE_CLASSID || tr[1] != size)
    return snprintf(err, len, "-hs_restart %s: iterate.bin does not hold a vector of %" PetscInt_FMT " values", dir,
                    size),
           1;
  for (PetscInt i = 0; i < size; i += 1024) {
    PetscInt n = PetscMin(1024, size - i);
    if (PetscBinaryRead(fd, buf, n, NULL, PETSC_SCALAR))
      return snprintf(err, len, "-hs_restart %s: cannot read iterate.bin", dir), 1;
    for (PetscInt k = 0; k < n; k++)
      if (!isfinite(PetscRealPart(buf[k])))
        return snprintf(err, len, "-hs_restart %s: value %" PetscInt_FMT " of iterate.bin is not a finite number", dir,
                        i + k + 1),
               1;
  }
  return 0;
}

/* Outside a continuation the checkpoint's parameters are this run's (%.17g, read back exactly): a restart with another
 * -p_NAME had been taken as the interrupted run's iterate (the tenth review). A continuation's checkpoint holds the
 * parameters of its step; the continuation itself checks its state. */
static PetscErrorCode CheckParameters(HsSolver s, const char *dir, const char *j)
{
  const char *obj = Member(j, "parameters"), *c = Member(j, "continuation");

  PetscFunctionBeginUser;
  if (!obj || !c || strncmp(c, "null", 4))
    PetscFunctionReturn(0);
  for (int i = 0; i < s->prob->nparams; i++) {
    char        key[HS_NAME_LEN + 8];
    const char *p, *end = strchr(obj, '}');
    double      v = NAN;
    snprintf(key, sizeof key, "\"%s\": ", s->prob->params[i].name);
    p = strstr(obj, key);
    if (p && end && p < end) { /* decimal only, as written: strtod also reads 0x1p3 */
      char *e;
      p += strlen(key);
      v = strtod(p, &e);
      if ((size_t)(e - p) != HsDecimalLength(p, 1))
        v = NAN;
    }
    PetscCheck(
        v == *s->prob->params[i].value, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_INCOMP,
        "-hs_restart %s: the checkpoint has parameter %s = %.15g, this run %.15g (resume with the options of the "
        "interrupted run)",
        dir, s->prob->params[i].name, v, *s->prob->params[i].value);
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverSetCheckpointLayout - records the knots of a segmented formulation (hashed, FNV-1a) in its checkpoints:
    a restart at other knots with the same number of unknowns is refused (the tenth review). bvp/ internal. Not
    collective. @*/
PetscErrorCode HsSolverSetCheckpointLayout(HsSolver s, PetscInt n, const PetscInt *knots)
{
  unsigned long long h = 1469598103934665603ULL;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < n; i++)
    h = (h ^ (unsigned long long)knots[i]) * 1099511628211ULL;
  PetscCall(PetscSNPrintf(s->ckpt_layout, sizeof s->ckpt_layout, "%" PetscInt_FMT " knots hashed %016llx", n, h));
  PetscFunctionReturn(0);
}

/* The checkpoint's bounds_smoothing (written inside the eps-continuation of bounded controls): the restart goes on
 * from that smoothing (s->restart_bnd_e; -1 without one). A decimal in [0, 1e6], else an error naming the file. */
static PetscErrorCode RestartSmoothing(HsSolver s, const char *dir, const char *j)
{
  const char *p   = Member(j, "bounds_smoothing");
  char       *end = NULL;
  double      e   = p ? strtod(p, &end) : -1;

  PetscFunctionBeginUser;
  s->restart_bnd_e = -1;
  if (!p)
    PetscFunctionReturn(0);
  PetscCheck(end != p && (size_t)(end - p) == HsDecimalLength(p, 1) && e >= 0 && e <= 1e6,
             PetscObjectComm((PetscObject)s), PETSC_ERR_FILE_UNEXPECTED,
             "-hs_restart %s: the checkpoint's bounds_smoothing is not one a run writes (a decimal in [0, 1e6])", dir);
  s->restart_bnd_e = e;
  PetscFunctionReturn(0);
}

/* The checkpoint's coarse_grid (s->restart_coarse; 0 if none): written by -hs_extrapolate's coarse grids, N/2^l for
 * some K of -hs_extrapolate_grids (1 <= l < HS_EXTRAP_GRIDS_MAX), a whole number; anything else is an error. */
static PetscErrorCode RestartCoarse(HsSolver s, const char *dir, const char *j)
{
  const char *c;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  s->restart_coarse = 0;
  if ((c = Member(j, "coarse_grid"))) { /* written by -hs_extrapolate's coarse grids: N/2^(K-1), ..., N/2 */
    char *e   = NULL;
    long  g   = strtol(c, &e, 10);
    int   any = 0;
    for (int l = 1; l < HS_EXTRAP_GRIDS_MAX; l++) /* any K: -hs_extrapolate_grids up to HS_EXTRAP_GRIDS_MAX */
      any |= s->N % ((PetscInt)1 << l) == 0 && g == s->N >> l;
    PetscCheck(any && e != c && (*e == ',' || *e == '\n' || *e == ' ' || *e == '}'), comm, PETSC_ERR_FILE_UNEXPECTED,
               "-hs_restart %s: the checkpoint's coarse_grid is not one a run writes (N/2, N/4, ..., N/%d of N = "
               "%" PetscInt_FMT ")",
               dir, 1 << (HS_EXTRAP_GRIDS_MAX - 1), s->N);
    s->restart_coarse = (PetscInt)g;
  }
  PetscFunctionReturn(0);
}

/* checkpoint.json's newton_iteration (in j) into s->restart_it: a whole number, else the file is not one hamshoot
 * wrote (round 25: strtol's reading had been taken, 1e3 as 1, -1 and 1e20 as 0). Collective. */
static PetscErrorCode RestartIteration(HsSolver s, const char *dir, const char *j)
{
  const char *c = Member(j, "newton_iteration");
  char       *end;
  long        v;

  PetscFunctionBeginUser;
  if (!c)
    PetscFunctionReturn(0);
  v = strtol(c, &end, 10);
  PetscCheck(end != c && v >= 0 && v < PETSC_MAX_INT / 2 &&
                 (*end == ',' || *end == '}' || isspace((unsigned char)*end)),
             PetscObjectComm((PetscObject)s), PETSC_ERR_FILE_UNEXPECTED,
             "-hs_restart %s: checkpoint.json's newton_iteration is not a whole number in [0, %d): not a checkpoint "
             "hamshoot wrote",
             dir, (int)(PETSC_MAX_INT / 2));
  s->restart_it = (PetscInt)v;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetRestart - loads the iterate of a checkpoint directory as the start of the next solve.

  Collective.

  Input Parameters:
+ s   - the solver
- dir - the checkpoint directory (written by HsSolverWriteCheckpoint)

  Options Database Key:
. -hs_restart <DIR> - the same; HsSolverSetUp() then loads it

  Notes:
  Call it after HsSolverSetUp(). The continuation's state in the checkpoint is kept for HsContinuationSetUp().
  The checkpoint must belong to the same problem, N, formulation and schemes (an error names what differs); the
  number of ranks may differ.

.seealso: HsSolverSetCheckpoint(), HsSolverGetInterrupted(), HsContinuationSetUp()
@*/
PetscErrorCode HsSolverSetRestart(HsSolver s, const char dir[])
{
  char        j[65536], want[128], bin[PETSC_MAX_PATH_LEN];
  const char *type, *c;
  PetscInt    size;
  PetscViewer v;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCheck(s->setupcalled, comm, PETSC_ERR_ORDER, "HsSolverSetRestart() needs HsSolverSetUp() first");
  { /* a checkpoint that a running hamshoot holds (its flock) is replaced by that run at any time: read while it is,
       checkpoint.json and iterate.bin could come from two different checkpoints */
    PetscMPIInt rank;
    int         busy = 0;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    if (!rank)
      busy = HeldByOther(AT_FDCWD, dir, s->ckpt_hold);
    PetscCallMPI(MPI_Bcast(&busy, 1, MPI_INT, 0, comm));
    PetscCheck(!busy, comm, PETSC_ERR_FILE_OPEN,
               "-hs_restart %s: the checkpoint of a hamshoot run that is still running (it holds a lock on it, and "
               "replaces it at its next checkpoint): wait for that run to end, or stop it (SIGTERM) first",
               dir);
  }
  PetscCall(ReadJSON(comm, dir, j, sizeof j));
  type = ((PetscObject)s)->type_name;
  PetscCall(VecGetSize(s->X, &size));
  { /* the name as checkpoint.json holds it: JSON-escaped (HsJsonString), compared whole */
    char  *esc = NULL, key[16 + 2 * HS_NAME_LEN + 16];
    size_t len = 0;
    FILE  *m   = open_memstream(&esc, &len);
    PetscCheck(m, comm, PETSC_ERR_MEM, "-hs_restart: out of memory");
    HsJsonString(m, s->prob->name);
    fclose(m);
    PetscCall(PetscSNPrintf(key, sizeof key, "\"problem\": %s,", esc));
    free(esc);
    PetscCheck(strstr(j, key), comm, PETSC_ERR_ARG_INCOMP,
               "-hs_restart %s: the checkpoint belongs to another problem than '%s' (resume with the options of the "
               "interrupted run)",
               dir, s->prob->name);
  }
  PetscCall(PetscSNPrintf(want, sizeof want, "%" PetscInt_FMT, s->N));
  PetscCall(Expect(comm, dir, j, "N", want));
  PetscCall(Expect(comm, dir, j, "bvp_type", type));
  PetscCall(Expect(comm, dir, j, "state_scheme", HsSolverStateName(s)));
  PetscCall(Expect(comm, dir, j, "costate_scheme", HsSolverCostateName(s)));
  PetscCall(PetscSNPrintf(want, sizeof want, "%" PetscInt_FMT, size));
  PetscCall(Expect(comm, dir, j, "unknowns", want));
  if (s->ckpt_layout[0] || Member(j, "layout")) /* the same count of unknowns at other knots: another meaning */
    PetscCall(Expect(comm, dir, j, "layout", s->ckpt_layout));
  PetscCall(CheckProblemText(s, dir, j));

  PetscCall(CheckParameters(s, dir, j));
  PetscCall(PetscSNPrintf(bin, sizeof bin, "%s/iterate.bin", dir));
  {
    char        err[PETSC_MAX_PATH_LEN + 128] = "";
    int         bad                           = 0;
    FILE       *f; /* a regular file (HsFileOpenRegular): PETSc's reader would block on a FIFO */
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    if (!rank && (f = HsFileOpenRegular(bin, "-hs_restart", 0, err, sizeof err))) {
      bad = CheckIterate(f, size, dir, err, sizeof err); /* before VecLoad: its read error was rank 0's alone */
      fclose(f);
    } else if (!rank)
      bad = 1;
    PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
    PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
    PetscCheck(!bad, comm, PETSC_ERR_FILE_OPEN, "%s", err);
  }
  { /* a corrupt or short iterate.bin: an error naming it, the viewer closed (PETSc's errors come back as codes) */
    PetscErrorCode ierr;
    v = NULL;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = OpenIterate(comm, bin, FILE_MODE_READ, &v);
    if (!ierr)
      ierr = VecLoad(s->X, v);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscViewerDestroy(&v));
    PetscCheck(!ierr, comm, PETSC_ERR_FILE_READ,
               "-hs_restart %s: cannot read the iterate from %s (PETSc error %d: a corrupt or truncated file?)", dir,
               bin, (int)ierr);
  }
  if (s->ops->resetiterate)
    PetscCall((*s->ops->resetiterate)(s));
  PetscCall(RestartSmoothing(s, dir, j));
  PetscCall(RestartCoarse(s, dir, j));
  s->restart_pending = PETSC_TRUE;
  s->restart_it      = 0; /* its iteration, counted on by the resumed solve's checkpoints (round 24: a restart stopped
                             during its load wrote the same iterate back as of Newton iteration 0) */
  PetscCall(RestartIteration(s, dir, j));
  s->restart_cont[0] = 0;
  if ((c = Member(j, "continuation")) && *c == '{')
    PetscCall(PetscStrncpy(s->restart_cont, c, PetscMin(strcspn(c, "}") + 2, sizeof s->restart_cont)));
  if (dir != s->restart_dir)
    PetscCall(PetscStrncpy(s->restart_dir, dir, sizeof s->restart_dir));
  PetscFunctionReturn(0);
}

/*@ HsSolverGetRestartContinuation - the continuation state of the checkpoint loaded by
    HsSolverSetRestart() ("" if none): stage index, value and step, as stored by the continuation
    (bvp/ internal). Not collective. @*/
PetscErrorCode HsSolverGetRestartContinuation(HsSolver s, PetscInt *stage, PetscReal *value, PetscReal *step,
                                              PetscBool *has)
{
  const char *p;

  PetscFunctionBeginUser;
  *has = (PetscBool)(s->restart_cont[0] != 0);
  if (!*has)
    PetscFunctionReturn(0);
  {
    char       *e1 = NULL, *e2 = NULL, *e3 = NULL;
    const char *ps = Field(s->restart_cont, "stage"), *pv = Field(s->restart_cont, "value"),
               *pd = Field(s->restart_cont, "step");
    long long k    = ps ? strtoll(ps, &e1, 10) : -1;
    *value         = pv ? (PetscReal)strtod(pv, &e2) : NAN;
    *step          = pd ? (PetscReal)strtod(pd, &e3) : NAN;
    *stage         = (PetscInt)k; /* numbers only, the stage in range (checked below) */
    if (!ps || e1 == ps || !pv || e2 == pv || !pd || e3 == pd || k > PETSC_MAX_INT ||
        (size_t)(e2 - pv) != HsDecimalLength(pv, 1) || (size_t)(e3 - pd) != HsDecimalLength(pd, 1)) /* decimal only */
      *stage = -1;
  }
  (void)p;
  PetscCheck(*stage >= 0 && !PetscIsInfOrNanReal(*value) && !PetscIsInfOrNanReal(*step) && *step != 0,
             PetscObjectComm((PetscObject)s), PETSC_ERR_FILE_UNEXPECTED,
             "-hs_restart %s: the checkpoint's continuation state %s is not one a continuation writes (stage >= 0, a "
             "finite value, a finite nonzero step)",
             s->restart_dir, s->restart_cont);
  PetscFunctionReturn(0);
}
