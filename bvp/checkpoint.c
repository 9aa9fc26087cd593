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

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t hs_signal = 0;

static void OnSignal(int sig) { hs_signal = sig; }

/*@ HsInstallInterruptHandlers - the first SIGTERM or SIGINT asks every solve to stop after its
    current Newton iteration and write a checkpoint (HsSolverSetCheckpoint); a second one ends the
    process as usual. Call after PetscInitialize() (PETSc installs handlers of its own).
    Not collective.
@*/
PetscErrorCode HsInstallInterruptHandlers(void)
{
  struct sigaction sa;

  PetscFunctionBeginUser;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sa.sa_flags   = SA_RESETHAND | SA_RESTART; /* the second signal: default action */
  sigemptyset(&sa.sa_mask);
  PetscCheck(!sigaction(SIGTERM, &sa, NULL) && !sigaction(SIGINT, &sa, NULL), PETSC_COMM_SELF, PETSC_ERR_SYS,
             "cannot install the SIGTERM/SIGINT handlers: %s", strerror(errno));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetCheckpoint - where checkpoints go and how often they are written besides at an
    interruption.

  Collective. Input: dir - the checkpoint directory (NULL: keep); every_its - also every so many
  Newton iterations (0: never); every_s - also when this many seconds have passed since the last
  one (0: never). Options: -hs_checkpoint DIR, -hs_checkpoint_every K (iterations) or Ss (seconds).
@*/
PetscErrorCode HsSolverSetCheckpoint(HsSolver s, const char dir[], PetscInt every_its, PetscReal every_s)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(every_its >= 0 && every_s >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_checkpoint_every must be >= 0");
  if (dir) {
    PetscCheck(dir[0] && strlen(dir) < sizeof s->ckpt_dir - 16, comm, PETSC_ERR_ARG_WRONG,
               "-hs_checkpoint: a directory name of 1 to %d characters", (int)sizeof s->ckpt_dir - 17);
    PetscCall(PetscStrncpy(s->ckpt_dir, dir, sizeof s->ckpt_dir));
  }
  s->ckpt_every_its = every_its, s->ckpt_every_s = every_s;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetInterrupted - whether the last solve was stopped by SIGTERM/SIGINT, and a sentence
    saying where and where its checkpoint is. Not collective. @*/
PetscErrorCode HsSolverGetInterrupted(HsSolver s, PetscBool *interrupted, const char **why)
{
  PetscFunctionBeginUser;
  if (interrupted)
    *interrupted = s->interrupted;
  if (why)
    *why = s->interrupt_msg;
  PetscFunctionReturn(0);
}

/* rm of a checkpoint directory (its known files only; then rmdir fails if anything else is there). */
static void RemoveCheckpointDir(const char *dir)
{
  static const char *const files[] = {"iterate.bin", "iterate.bin.info", "checkpoint.json", NULL};
  char                     p[PETSC_MAX_PATH_LEN + 32]; /* dir (< PETSC_MAX_PATH_LEN) and a name */

  for (int i = 0; files[i]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    remove(p);
  }
  rmdir(dir);
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

  HsSolverGetType(s, &type);
  fprintf(f, "{\n  \"format\": \"hamshoot-checkpoint-1\",\n  \"problem\": \"%s\",\n  \"N\": %d,\n", s->prob->name,
          (int)s->N);
  fprintf(f, "  \"bvp_type\": \"%s\",\n  \"state_scheme\": \"%s\",\n  \"costate_scheme\": \"%s\",\n", type, s->ss, s->cs);
  fprintf(f, "  \"unknowns\": %d,\n  \"newton_iteration\": %d,\n  \"parameters\": {", (int)c->size, (int)c->it);
  for (int i = 0; i < s->prob->nparams; i++)
    fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", s->prob->params[i].name, *s->prob->params[i].value);
  fprintf(f, "},\n  \"continuation\": %s\n}\n", s->ckpt_extra[0] ? s->ckpt_extra : "null");
  return ferror(f);
}

/*@ HsSolverWriteCheckpoint - writes X (the formulation's unknowns) and what they belong to into the
    checkpoint directory, replacing the previous checkpoint only once the new one is complete
    (bvp/ internal). Collective. @*/
PetscErrorCode HsSolverWriteCheckpoint(HsSolver s, Vec X, PetscInt it)
{
  char        tmp[PETSC_MAX_PATH_LEN], old[PETSC_MAX_PATH_LEN], bin[PETSC_MAX_PATH_LEN], err[PETSC_MAX_PATH_LEN + 64] = "";
  int         bad = 0;
  PetscMPIInt rank;
  PetscViewer v;
  CkptCtx     c = {s, it, 0};
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecGetSize(X, &c.size));
  PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s.tmp", s->ckpt_dir));
  PetscCall(PetscSNPrintf(old, sizeof old, "%s.old", s->ckpt_dir));
  PetscCall(PetscSNPrintf(bin, sizeof bin, "%s/iterate.bin", tmp));
  if (!rank) {
    RemoveCheckpointDir(tmp);
    if ((bad = HsMakeDirs(tmp)))
      snprintf(err, sizeof err, "cannot create checkpoint directory '%s': %s", tmp, strerror(bad));
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "%s", err);
  PetscCall(PetscViewerBinaryOpen(comm, bin, FILE_MODE_WRITE, &v));
  PetscCall(VecView(X, v));
  PetscCall(PetscViewerDestroy(&v));
  if (!rank) {
    bad = HsWriteFileAtomic(tmp, "checkpoint.json", WriteJSON, &c, err, sizeof err);
    if (!bad) {
      RemoveCheckpointDir(old);
      if ((rename(s->ckpt_dir, old) && errno != ENOENT) || rename(tmp, s->ckpt_dir))
        snprintf(err, sizeof err, "cannot move the checkpoint into '%s': %s", s->ckpt_dir, strerror(errno)), bad = 1;
      else
        RemoveCheckpointDir(old);
    }
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "%s", err);
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
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  *stop = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    f[1] = (s->ckpt_every_its > 0 && it > 0 && it % s->ckpt_every_its == 0) ||
           (s->ckpt_every_s > 0 && MPI_Wtime() - s->ckpt_last_t >= s->ckpt_every_s);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, f, 2, MPI_INT, MPI_MAX, comm));
  if (!f[0] && !f[1])
    PetscFunctionReturn(0);
  if (s->ckpt_dir[0]) /* "": a sub-solver (the direct solve of -hs_initial_guess direct, ...) */
    PetscCall(HsSolverWriteCheckpoint(s, X, it));
  if (f[0]) {
    *stop          = PETSC_TRUE;
    s->interrupted = PETSC_TRUE;
    PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                            "signal received; stopped after Newton iteration %" PetscInt_FMT
                            ", checkpoint in %s (resume: the same command with -hs_restart %s)",
                            it, s->ckpt_dir[0] ? s->ckpt_dir : "(none: a sub-solve)", s->ckpt_dir));
  }
  PetscFunctionReturn(0);
}

/* The text after "key": in the JSON text j (NULL if absent). */
static const char *Member(const char *j, const char *key)
{
  char        k[80];
  const char *p;

  snprintf(k, sizeof k, "\"%s\":", key);
  p = strstr(j, k);
  return p ? p + strlen(k) + strspn(p + strlen(k), " ") : NULL;
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
    if (!(f = fopen(path, "r")))
      snprintf(err, sizeof err, "-hs_restart %s: cannot open %s: %s", dir, path, strerror(errno)), bad = 1;
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
  const char *p = Member(j, key);
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

/*@ HsSolverSetRestart - loads the iterate of a checkpoint directory (HsSolverWriteCheckpoint) as the
    start of the next solve; the continuation's state in it is kept for HsContinuationSetUp().

  Collective; after HsSolverSetUp(). The checkpoint must belong to the same problem, N, formulation
  and schemes (an error names what differs); the number of ranks may differ. Option: -hs_restart DIR.
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
  PetscCall(ReadJSON(comm, dir, j, sizeof j));
  PetscCall(HsSolverGetType(s, &type));
  PetscCall(VecGetSize(s->X, &size));
  PetscCall(Expect(comm, dir, j, "problem", s->prob->name));
  PetscCall(PetscSNPrintf(want, sizeof want, "%" PetscInt_FMT, s->N));
  PetscCall(Expect(comm, dir, j, "N", want));
  PetscCall(Expect(comm, dir, j, "bvp_type", type));
  PetscCall(Expect(comm, dir, j, "state_scheme", s->ss));
  PetscCall(Expect(comm, dir, j, "costate_scheme", s->cs));
  PetscCall(PetscSNPrintf(want, sizeof want, "%" PetscInt_FMT, size));
  PetscCall(Expect(comm, dir, j, "unknowns", want));
  PetscCall(PetscSNPrintf(bin, sizeof bin, "%s/iterate.bin", dir));
  PetscCall(PetscViewerBinaryOpen(comm, bin, FILE_MODE_READ, &v));
  PetscCall(VecLoad(s->X, v));
  PetscCall(PetscViewerDestroy(&v));
  if (s->ops->resetiterate)
    PetscCall((*s->ops->resetiterate)(s));
  s->restart_pending = PETSC_TRUE;
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
  *stage = (p = Member(s->restart_cont, "stage")) ? (PetscInt)strtol(p, NULL, 10) : 0;
  *value = (p = Member(s->restart_cont, "value")) ? (PetscReal)strtod(p, NULL) : 0;
  *step  = (p = Member(s->restart_cont, "step")) ? (PetscReal)strtod(p, NULL) : 0;
  PetscFunctionReturn(0);
}
