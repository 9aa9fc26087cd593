/* hamshoot: HsSolverSetFromOptions. Every key maps to the typed setter of the
 * same meaning, and only when the key is given: a setting made through the C
 * API stands unless the options database overrides it. The formulation's own
 * keys are read by its setfromoptions (impls/). With -help the options of the
 * formulations not chosen are listed too, from their own option calls. */
#include "hsbvpimpl.h"

#include <stdlib.h>
#include <string.h>

/*@ HsOptionsChoice - a string option with a fixed set of values (bvp/ internal); between
    PetscOptionsBegin/End.

  Input: key, help, man - as PetscOptionsString; choices[0..n-1] - the admissible values;
         idx - the current choice (shown by -help).
  Output: idx - the chosen index if the key is given; set - whether it was (may be NULL).
  An unknown value is an error that names the key and lists the choices.
@*/
PetscErrorCode HsOptionsChoice(PetscOptionItems *PetscOptionsObject, MPI_Comm comm, const char *key, const char *help,
                               const char *man, const char *const *choices, PetscInt n, PetscInt *idx, PetscBool *set)
{
  char      val[256], list[256] = "";
  PetscBool flg, eq;

  PetscFunctionBeginUser;
  if (set)
    *set = PETSC_FALSE;
  PetscCall(PetscOptionsString(key, help, man, choices[*idx], val, sizeof val, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscStrcmp(val, choices[i], &eq));
    if (eq) {
      *idx = i;
      if (set)
        *set = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
    PetscCall(PetscStrlcat(list, i ? " or " : "", sizeof list));
    PetscCall(PetscStrlcat(list, choices[i], sizeof list));
  }
  SETERRQ(comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown %s '%s' (choose %s)", key, val, list);
}

/* The number of values an entry of a list option stands for: 1, or for an integer range "a-b[:inc]"
 * (PetscOptionsGetIntArray) the count PETSc reserves for it. */
static PetscInt EntryCount(const char *e, size_t len)
{
  char buf[64], *end;
  long a, b, inc = 1;

  if (len == 0 || len >= sizeof buf)
    return 1;
  memcpy(buf, e, len), buf[len] = 0;
  for (size_t i = buf[0] == '-' ? 2 : 1; i < len; i++)
    if (buf[i] == '-') {
      a = strtol(buf, &end, 10);
      if (end != buf + i)
        return 1;
      b = strtol(buf + i + 1, &end, 10);
      if (*end == ':')
        inc = strtol(end + 1, NULL, 10);
      return b > a && inc > 0 ? (PetscInt)((b - a) / inc + (b - a) % inc) : 1;
    }
  return 1;
}

/*@ HsOptionsListLength - the number of values of a list option (bvp/ internal), 0 if it is not
    given, counting an integer range "a-b" as PETSc expands it; so that PetscOptions*Array can be given
    an array that takes all of them (PETSc drops values beyond the array silently). @*/
PetscErrorCode HsOptionsListLength(PetscOptions options, const char prefix[], const char key[], PetscInt *n)
{
  const char *val = NULL;
  PetscBool   flg;

  PetscFunctionBeginUser;
  *n = 0;
  PetscCall(PetscOptionsFindPair(options, prefix, key, &val, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  if (!val)
    val = "";
  for (const char *e = val;;) {
    size_t len = strcspn(e, ",");
    *n += EntryCount(e, len);
    if (!e[len])
      break;
    e += len + 1;
  }
  PetscFunctionReturn(0);
}

/* -hs_scheme, -hs_state_scheme, -hs_costate_scheme */
static PetscErrorCode SchemeOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  char        buf[64];
  const char *ss, *cs, *kind;
  PetscBool   flg, flg2;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetScheme(s, &kind));
  PetscCall(PetscOptionsString(
      "-hs_scheme", "conserving (energy-consistent states + conserving costates) or direct (midpoint + trapezoidal)",
      "HsSolverSetScheme", kind, buf, sizeof buf, &flg));
  if (flg)
    PetscCall(HsSolverSetScheme(s, buf));
  PetscCall(HsSolverGetSchemes(s, &ss, &cs));
  PetscCall(PetscOptionsString("-hs_state_scheme", "state scheme: midpoint greenspan gonzalez (overrides -hs_scheme)",
                               "HsSolverSetSchemes", ss ? ss : "", buf, sizeof buf, &flg));
  if (flg)
    PetscCall(HsSolverSetSchemes(s, buf, NULL));
  PetscCall(PetscOptionsString("-hs_costate_scheme",
                               "costate scheme: conserving conserving_1dof trapezoidal kkt (overrides -hs_scheme)",
                               "HsSolverSetSchemes", cs ? cs : "", buf, sizeof buf, &flg2));
  if (flg2)
    PetscCall(HsSolverSetSchemes(s, NULL, buf));
  PetscFunctionReturn(0);
}

/* -hs_checkpoint DIR, -hs_checkpoint_every K|Ss, -hs_restart DIR */
static PetscErrorCode CheckpointOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  char      buf[PETSC_MAX_PATH_LEN], *end;
  PetscBool flg;
  MPI_Comm  comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString("-hs_checkpoint", "checkpoint directory (written on SIGTERM/SIGINT and by -hs_checkpoint_every)",
                               "HsSolverSetCheckpoint", s->ckpt_dir, buf, sizeof buf, &flg));
  if (flg)
    PetscCall(HsSolverSetCheckpoint(s, buf, s->ckpt_every_its, s->ckpt_every_s));
  PetscCall(PetscOptionsString("-hs_checkpoint_every", "also write a checkpoint every K Newton iterations, or every S seconds (Ss)",
                               "HsSolverSetCheckpoint", "0", buf, sizeof buf, &flg));
  if (flg) {
    double v = strtod(buf, &end);
    PetscCheck(end != buf && (!*end || !strcmp(end, "s")) && v >= 0 && v <= 1e9 && (*end || v == (PetscInt)v), comm,
               PETSC_ERR_ARG_WRONG, "-hs_checkpoint_every %s: expected K (Newton iterations) or Ss (seconds), e.g. 5 or 600s",
               buf);
    PetscCall(HsSolverSetCheckpoint(s, NULL, *end ? 0 : (PetscInt)v, *end ? v : 0));
  }
  PetscCall(PetscOptionsString("-hs_restart", "start from the checkpoint in DIR (written by an interrupted run)",
                               "HsSolverSetRestart", "", buf, sizeof buf, &flg));
  if (flg) {
    PetscCheck(buf[0], comm, PETSC_ERR_ARG_WRONG, "-hs_restart needs a checkpoint directory");
    PetscCall(PetscStrncpy(s->restart_dir, buf, sizeof s->restart_dir));
  }
  PetscFunctionReturn(0);
}

/* -help: the keys of every registered formulation other than s's, each in its own section. */
static PetscErrorCode HelpOtherTypes(HsSolver s)
{
  const char **names;
  const char  *prefix;
  int          n;
  PetscBool    help, same;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasHelp(((PetscObject)s)->options, &help));
  if (!help)
    PetscFunctionReturn(0);
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)s, &prefix));
  PetscCall(PetscFunctionListGet(HsSolverList, &names, &n)); /* NULL-terminated */
  for (int i = 0; names[i]; i++) {
    HsSolver t;
    char     title[128];
    PetscCall(PetscObjectTypeCompare((PetscObject)s, names[i], &same));
    if (same)
      continue;
    PetscCall(HsSolverCreate(PetscObjectComm((PetscObject)s), &t));
    PetscCall(HsSolverSetType(t, names[i]));
    if (t->ops->setfromoptions) { /* a formulation without keys of its own has nothing to list */
      PetscCall(PetscSNPrintf(title, sizeof title, "HsSolver options of -hs_bvp_type %s", names[i]));
      PetscOptionsBegin(PetscObjectComm((PetscObject)s), prefix, title, "HsSolver");
      HsOptionsCall((*t->ops->setfromoptions)(t, PetscOptionsObject));
      PetscOptionsEnd();
    }
    PetscCall(HsSolverDestroy(&t));
  }
  PetscCall(PetscFree(names));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetFromOptions - applies the options database to the solver.

  Collective.

  Keys (each calls the setter named in brackets, only when given):
+ -hs_bvp_type transcription|shooting|ipopt - the formulation [HsSolverSetType]; default transcription
. -hs_direct_solver kkt|ipopt - who solves a direct problem [HsSolverSetDirectSolver]
. -hs_initial_guess default|direct - [HsSolverSetInitialGuessType]
. -hs_num_intervals N - uniform intervals [HsSolverSetNumIntervals]
. -hs_scheme conserving|direct - [HsSolverSetScheme]
. -hs_state_scheme, -hs_costate_scheme - [HsSolverSetSchemes]
. -hs_dg_tol TOL - [HsSolverSetDGTolerance]
. -hs_snes_roundoff C - [HsSolverSetRoundoffFactor]
. -hs_snes_noise C - [HsSolverSetNoiseFactor]
. -hs_linear_solver auto|band|mumps|drop - [HsSolverSetLinearSolver]
. -hs_monitor - progress lines [HsSolverSetMonitor]
. -hs_strategy auto|newton, -hs_strategy_continue NAME=FROM,... - what a failed cold solve tries next [HsSolverSetStrategy]
. -hs_init FILE - initial guess from a trajectory.csv [HsSolverSetInitialGuessFromFile]
. -hs_checkpoint DIR, -hs_checkpoint_every K|Ss - [HsSolverSetCheckpoint]
. -hs_restart DIR - start from a checkpoint, loaded by HsSolverSetUp() [HsSolverSetRestart]
- the formulation's keys (shooting: -hs_shoot_*, -hs_step_*; see HsSolverCreate_Shooting)

  The SNES, KSP and PC options (-snes_*, -ksp_*, -pc_*, -mat_mumps_*) are applied by HsSolverSetUp(),
  after hamshoot's defaults for the formulation, so that they override them.
@*/
PetscErrorCode HsSolverSetFromOptions(HsSolver s)
{
  char      type[256], path[PETSC_MAX_PATH_LEN];
  PetscInt  N;
  PetscReal r;
  PetscBool flg, b;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(HsInitializePackage());
  PetscObjectOptionsBegin((PetscObject)s);
  HsOptionsCall(PetscOptionsFList("-hs_bvp_type",
                              "formulation: transcription (one sparse system), shooting (multiple shooting) or ipopt (the direct NLP)",
                              "HsSolverSetType", HsSolverList,
                              ((PetscObject)s)->type_name ? ((PetscObject)s)->type_name : HSSOLVERTRANSCRIPTION, type,
                              sizeof type, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetType(s, type));
  else if (!((PetscObject)s)->type_name)
    HsOptionsCall(HsSolverSetType(s, HSSOLVERTRANSCRIPTION));
  HsOptionsCall(HsSolverGetNumIntervals(s, &N));
  HsOptionsCall(HsOptionsInt(PetscOptionsObject, "-hs_num_intervals", "number of uniform time intervals N (the executable's -N)",
                            "HsSolverSetNumIntervals", N, &N, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
  if (flg)
    HsOptionsCall(HsSolverSetNumIntervals(s, N));
  HsOptionsCall(SchemeOptions(PetscOptionsObject, s));
  {
    static const char *const ds[] = {"default", "kkt", "ipopt"};
    PetscInt                 idx  = s->direct_solver;
    HsOptionsCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_direct_solver",
                              "who solves a direct problem: kkt (Newton on its KKT equations) or ipopt (the NLP by "
                              "IPOPT); default: kkt, but ipopt for -hs_compare and -hs_initial_guess direct",
                              "HsSolverSetDirectSolver", ds, 3, &idx, &flg));
    if (flg)
      HsOptionsCall(HsSolverSetDirectSolver(s, (HsDirectSolver)idx));
  }
  {
    static const char *const gt[] = {"default", "direct"};
    PetscInt                 idx  = s->guess_type;
    HsOptionsCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_initial_guess",
                              "default (-hs_init, or boundary states interpolated with lambda = 0) or direct (the direct "
                              "solution on the same grid, then a homotopy in the costate equation if needed)",
                              "HsSolverSetInitialGuessType", gt, 2, &idx, &flg));
    if (flg)
      HsOptionsCall(HsSolverSetInitialGuessType(s, (HsGuessType)idx));
  }
  HsOptionsCall(HsOptionsReal(PetscOptionsObject, "-hs_dg_tol", "relative step below which divided differences use their limit",
                             "HsSolverSetDGTolerance", s->dg_tol, &r, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetDGTolerance(s, r));
  HsOptionsCall(HsOptionsReal(PetscOptionsObject, 
      "-hs_snes_roundoff", "Newton also stops at ||F|| <= c eps max(1,|X|_inf) sqrt(n), the residual's round-off level",
      "HsSolverSetRoundoffFactor", s->roundoff, &r, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetRoundoffFactor(s, r));
  HsOptionsCall(HsOptionsReal(PetscOptionsObject, "-hs_snes_noise",
                              "Newton stops at its noise floor ||F|| <= c nu, nu the residual's estimated evaluation "
                              "error (0: never)",
                              "HsSolverSetNoiseFactor", s->noise_factor, &r, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetNoiseFactor(s, r));
  {
    static const char *const ls[] = {"auto", "band", "mumps", "drop"};
    PetscInt                 idx  = (PetscInt)s->linear_solver;
    HsOptionsCall(PetscOptionsEList("-hs_linear_solver",
                                    "linear solver of the Newton solves: auto (band when n <= 32 and T is fixed; drop "
                                    "for the transcription when n > 32; else mumps), band (-pc_type hsband, bvp/pcband.c), "
                                    "mumps (LU) or drop (GMRES + -pc_type hsdrop, bvp/pcdrop.c); -pc_type overrides",
                                    "HsSolverSetLinearSolver", ls, 4, ls[idx], &idx, &flg));
    if (flg)
      HsOptionsCall(HsSolverSetLinearSolver(s, (HsLinearSolver)idx));
  }
  HsOptionsCall(PetscOptionsBool("-hs_in_place",
                                 "the banded LU stores U in the Jacobian's values as it reads them (where nothing "
                                 "else reads the Jacobian: HsSolverSetInPlace)",
                                 "HsSolverSetInPlace", s->in_place, &b, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetInPlace(s, b));
  HsOptionsCall(PetscOptionsBool("-hs_monitor", "one progress line per Newton iteration", "HsSolverSetMonitor", s->monitor,
                             &b, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetMonitor(s, b));
  HsOptionsCall(PetscOptionsString("-hs_init",
                               "initial guess from a trajectory.csv written by -o (any N: interpolated in time; "
                               "default: boundary states interpolated, lambda = 0)",
                               "HsSolverSetInitialGuessFromFile", "", path, sizeof path, &flg));
  if (flg) {
    HsOptionsCheck(path[0], PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONG, "-hs_init needs a file name");
    HsOptionsCall(HsSolverSetInitialGuessFromFile(s, path));
  }
  HsOptionsCall(CheckpointOptions(PetscOptionsObject, s));
  HsOptionsCall(HsSolverStrategySetFromOptions(PetscOptionsObject, s));
  if (s->ops->setfromoptions)
    HsOptionsCall((*s->ops->setfromoptions)(s, PetscOptionsObject));
  HsOptionsCall(PetscObjectProcessOptionsHandlers((PetscObject)s, PetscOptionsObject));
  PetscOptionsEnd();
  PetscCall(HelpOtherTypes(s));
  s->setfromoptionscalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}
