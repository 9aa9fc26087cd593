/* hamshoot: HsSolverSetFromOptions. Every key maps to the typed setter of the
 * same meaning, and only when the key is given: a setting made through the C
 * API stands unless the options database overrides it. The formulation's own
 * keys are read by its setfromoptions (impls/). With -help the options of the
 * formulations not chosen are listed too, from their own option calls. */
#include "hsbvpimpl.h"

#include <stdlib.h>
#include <string.h>

/* -hs_scheme, -hs_state_scheme, -hs_costate_scheme */
static PetscErrorCode SchemeOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  char        buf[64];
  const char *ss, *cs, *kind;
  PetscBool   flg, flg2;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetScheme(s, &kind));
  PetscCall(
      HsOptionsString(PetscOptionsObject, "-hs_scheme",
                      "conserving (energy-consistent states + conserving costates), conserving4 (order 4, H conserved) or direct "
                      "(midpoint + trapezoidal)",
                      "HsSolverSetScheme", kind, buf, sizeof buf, &flg));
  if (flg)
    PetscCall(HsSolverSetScheme(s, buf));
  PetscCall(HsSolverGetSchemes(s, &ss, &cs));
  PetscCall(HsOptionsString(PetscOptionsObject, "-hs_state_scheme",
                            "state scheme: midpoint greenspan gonzalez (overrides -hs_scheme)", "HsSolverSetSchemes",
                            ss ? ss : "", buf, sizeof buf, &flg));
  if (flg)
    PetscCall(HsSolverSetSchemes(s, buf, NULL));
  PetscCall(HsOptionsString(PetscOptionsObject, "-hs_costate_scheme",
                            "costate scheme: conserving conserving_1dof trapezoidal kkt (overrides -hs_scheme)",
                            "HsSolverSetSchemes", cs ? cs : "", buf, sizeof buf, &flg2));
  if (flg2)
    PetscCall(HsSolverSetSchemes(s, NULL, buf));
  PetscFunctionReturn(0);
}

/* -hs_snes_roundoff, -hs_snes_noise, -hs_snes_polish: where Newton stops (bvp/interface/convergence.c) */
static PetscErrorCode NewtonStopOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  PetscReal r;
  PetscInt  N;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_snes_roundoff",
                          "Newton also stops at ||F|| <= c eps max(1,|X|_inf) sqrt(n), the residual's round-off level",
                          "HsSolverSetRoundoffFactor", s->roundoff, &r, &flg));
  if (flg)
    PetscCall(HsSolverSetRoundoffFactor(s, r));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_snes_noise",
                          "Newton stops at its noise floor ||F|| <= c nu, nu the residual's estimated evaluation "
                          "error (0: never)",
                          "HsSolverSetNoiseFactor", s->noise_factor, &r, &flg));
  if (flg)
    PetscCall(HsSolverSetNoiseFactor(s, r));
  PetscCall(HsOptionsInt(PetscOptionsObject, "-hs_snes_polish",
                         "most Newton steps after the stop while the conserved quantity's violation falls (0: none)",
                         "HsSolverSetPolish", s->polish_max, &N, &flg, 0, HS_POLISH_MAX_LIMIT));
  if (flg)
    PetscCall(HsSolverSetPolish(s, N));
  PetscFunctionReturn(0);
}

/* A logical key of the solver: read with its current value as the default and, if given, passed to its setter. */
static PetscErrorCode BoolOption(PetscOptionItems *PetscOptionsObject, HsSolver s, const char *key, const char *help,
                                 const char *setter_name, PetscBool current, PetscErrorCode (*setter)(HsSolver, PetscBool))
{
  PetscBool b, flg;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsBool(PetscOptionsObject, key, help, setter_name, current, &b, &flg));
  if (flg)
    PetscCall(setter(s, b));
  PetscFunctionReturn(0);
}

/* -hs_check_boundary (bvp/interface/singular.c), -hs_extrapolate_romberg (bvp/drivers/study.c), -hs_condense
   (bvp/impls/order4cond.c) */
static PetscErrorCode BoolOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(BoolOption(PetscOptionsObject, s, "-hs_check_boundary",
                       "refuse terminal conditions that a conserved quantity makes redundant or infeasible, "
                       "naming them (docs/problem-format.md)",
                       "HsSolverSetCheckBoundary", s->check_boundary, HsSolverSetCheckBoundary));
  PetscCall(BoolOption(PetscOptionsObject, s, "-hs_extrapolate_romberg",
                       "-hs_extrapolate's J, H mean and T by Romberg: h^p and h^(p+2) eliminated from the three grids "
                       "(symmetric schemes: error O(h^(p+4)))",
                       "HsSolverSetExtrapolateRomberg", s->romberg, HsSolverSetExtrapolateRomberg));
  PetscCall(BoolOption(PetscOptionsObject, s, "-hs_condense",
                       "conserving4's transcription on one rank (n <= 2, no constraints, T fixed): each interval's "
                       "stage nodes eliminated before the banded LU",
                       "HsSolverSetCondense", s->condense, HsSolverSetCondense));
  PetscFunctionReturn(0);
}

/* -hs_extrapolate_grids (bvp/drivers/study.c) */
static PetscErrorCode ExtrapGridsOption(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  PetscInt  K;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsInt(PetscOptionsObject, "-hs_extrapolate_grids",
                         "-hs_extrapolate's number K of grids N/2^(K-1) .. N, 3 to 5 (with -hs_extrapolate_romberg "
                         "the Romberg table over all of them)",
                         "HsSolverSetExtrapolateGrids", s->ext_grids, &K, &flg, 3, HS_EXTRAP_GRIDS_MAX));
  if (flg)
    PetscCall(HsSolverSetExtrapolateGrids(s, K));
  PetscFunctionReturn(0);
}

/* -hs_output_format <csv|hdf5|auto> [HsSolverSetOutputFormat]: without HDF5 in PETSc, hdf5 is an error here. */
static PetscErrorCode OutputFormatOption(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  static const char *const of[] = {"csv", "hdf5", "auto"};
  PetscInt                 idx  = (PetscInt)s->out_format;
  PetscBool                flg;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_output_format",
                            "the trajectory in -o: csv (trajectory.csv + intervals.csv, rank 0), hdf5 (trajectory.h5, "
                            "every rank its nodes) or auto (hdf5 from 1e6 intervals on, if PETSc has HDF5); needs -o",
                            "HsSolverSetOutputFormat", of, 3, &idx, &flg));
#if !defined(PETSC_HAVE_HDF5) || !defined(HS_HAVE_HDF5)
  PetscCheck(!flg || idx != HS_OUTPUT_FORMAT_HDF5, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "-hs_output_format hdf5: this PETSc was built without HDF5; use csv");
#endif
  if (flg)
    PetscCall(HsSolverSetOutputFormat(s, (HsOutputFormat)idx));
  PetscFunctionReturn(0);
}

/* -hs_checkpoint DIR, -hs_checkpoint_every K|Ss, -hs_restart DIR */
static PetscErrorCode CheckpointOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  char      buf[PETSC_MAX_PATH_LEN];
  PetscBool flg;
  MPI_Comm  comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(HsOptionsString(PetscOptionsObject, "-hs_checkpoint",
                            "checkpoint directory (written on SIGTERM/SIGINT and by -hs_checkpoint_every)",
                            "HsSolverSetCheckpoint", s->ckpt_dir, buf, sizeof buf, &flg));
  if (flg) {
    PetscCall(HsSolverSetCheckpoint(s, buf, s->ckpt_every_its, s->ckpt_every_s));
    s->ckpt_explicit = PETSC_TRUE; /* its parent made and tried at the set-up (TakeCheckpointDir) */
  }
  PetscCall(HsOptionsString(PetscOptionsObject, "-hs_checkpoint_every",
                            "also write a checkpoint every K Newton iterations, or every S seconds (Ss)",
                            "HsSolverSetCheckpoint", "0", buf, sizeof buf, &flg));
  if (flg) { /* K or Ss, blanks around allowed as around every number (HsParseInt, HsParseReal; issue 38: ' 5' was
                refused here and taken by -N), K a whole number as every integer ('5.0' and '1e1' had been taken) */
    char      num[64];
    size_t    a = strspn(buf, " \t"), z = strlen(buf);
    double    v = -1;
    long long k = -1;
    PetscBool secs;
    while (z > a && (buf[z - 1] == ' ' || buf[z - 1] == '\t'))
      z--;
    secs = (PetscBool)(z > a && buf[z - 1] == 's');
    z -= secs;
    if (z > a && z - a < sizeof num && buf[z - 1] != ' ' && buf[z - 1] != '\t') {
      memcpy(num, buf + a, z - a), num[z - a] = 0;
      if (secs ? HsParseReal(num, &v) || v > 1e9 : HsParseInt(num, 0, 1000000000, &k))
        v = k = -1;
    }
    PetscCheck(secs ? v >= 0 : k >= 0, comm, PETSC_ERR_ARG_WRONG,
               "%s %s: expected K (Newton iterations, a whole number) or Ss (seconds), e.g. 5 or 600s",
               HsKey(s, "-hs_checkpoint_every"), buf);
    PetscCall(HsSolverSetCheckpoint(s, NULL, secs ? 0 : (PetscInt)k, secs ? v : 0));
  }
  PetscCall(HsOptionsString(PetscOptionsObject, "-hs_restart",
                            "start from the checkpoint in DIR (written by an interrupted run)", "HsSolverSetRestart",
                            "", buf, sizeof buf, &flg));
  if (flg) {
    PetscCheck(buf[0], comm, PETSC_ERR_ARG_WRONG, "%s needs a checkpoint directory", HsKey(s, "-hs_restart"));
    PetscCall(PetscStrncpy(s->restart_dir, buf, sizeof s->restart_dir));
  }
  PetscFunctionReturn(0);
}

/* A formulation with a solve of its own (IPOPT) has no Newton solve: the keys only Newton reads do nothing there. The
 * main solver's (no prefix; a sub-solver's keys are deferred, HsOptionsWarnUnused) hamshoot keys among them are an
 * error, as any key the chosen formulation does not use (docs/reliability.md); PETSc's -snes_, -ksp_ and -pc_ keys (a
 * pseudo-arclength continuation solves its bordered systems with the KSP: -ksp_, -pc_ then count) get a warning. */
static PetscErrorCode CheckNewtonKeys(HsSolver s)
{
  /* the checkpoint keys too: a checkpoint is written at a Newton iteration, and IPOPT's solve is not interrupted
     (docs/reliability.md); -hs_checkpoint_every 1 with -hs_bvp_type ipopt had written none without a word (issue
     38, round 21) */
  static const char *const ours[] = {"-hs_snes_noise",       "-hs_snes_polish", "-hs_linear_solver",
                                     "-hs_in_place",         "-hs_strategy",    "-hs_strategy_continue",
                                     "-hs_checkpoint_every", "-hs_checkpoint",  "-hs_condense"};
  const char              *prefix, *type;
  char                    *all, *save = NULL, arclength[32] = "";
  PetscBool                has, help;
  MPI_Comm                 comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)s, &prefix));
  PetscCall(PetscOptionsHasHelp(((PetscObject)s)->options, &help));
  if (!s->ops->solve || (prefix && prefix[0]) || help)
    PetscFunctionReturn(0);
  type = ((PetscObject)s)->type_name;
  for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++) {
    PetscCall(PetscOptionsHasName(((PetscObject)s)->options, NULL, ours[i], &has));
    PetscCheck(!has, comm, PETSC_ERR_ARG_WRONG,
               "option %s does nothing with -hs_bvp_type %s: it has no Newton solve (its own keys are -hs_%s_*); leave "
               "it out",
               ours[i], type, type);
  }
  PetscCall(
      PetscOptionsGetString(((PetscObject)s)->options, NULL, "-hs_continue_type", arclength, sizeof arclength, NULL));
  PetscCall(PetscOptionsGetAll(((PetscObject)s)->options, &all));
  for (char *tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
    if (!strncmp(tok, "-snes_", 6) ||
        (strcmp(arclength, "arclength") && (!strncmp(tok, "-ksp_", 5) || !strncmp(tok, "-pc_", 4))))
      PetscCall(PetscPrintf(comm,
                            "hamshoot: warning: option %s does nothing with -hs_bvp_type %s (no Newton solve: its keys "
                            "are -hs_%s_*)\n",
                            tok, type, type));
  PetscCall(PetscFree(all));
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

/*@ HsSolverSetStrategy - sets what a cold solve does when Newton from its start does not converge.

  Logically collective.

  Input Parameters:
+ s        - the solver
- strategy - HS_STRATEGY_AUTO (the default) tries the fallbacks of bvp/drivers/strategy.c in turn;
             HS_STRATEGY_NEWTON stops there

  Options Database Keys:
+ -hs_strategy <auto|newton> - the same
- -hs_strategy_continue <NAME=FROM[,NAME=FROM...]> - parameters the strategy's continuation moves from FROM to
  their value, after reach

.seealso: HsSolverSetStrategyTime(), HsSolverGetStrategy(), HsSolverSolve(), HsSolverSetInitialGuessType()
@*/
PetscErrorCode HsSolverSetStrategy(HsSolver s, HsStrategy strategy)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->strategy = strategy;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetStrategy - gets what a cold solve does when Newton from its start does not converge.

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. strategy - the setting of HsSolverSetStrategy()

.seealso: HsSolverSetStrategy()
@*/
PetscErrorCode HsSolverGetStrategy(HsSolver s, HsStrategy *strategy)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  *strategy = s->strategy;
  PetscFunctionReturn(0);
}

/*@ HsSolverSetStrategyTime - sets a time budget for the work after a failed first attempt.

  Logically collective.

  Input Parameters:
+ s       - the solver
- seconds - the fallbacks of -hs_strategy auto, the costate homotopy of the direct guess and a continuation stop at
            their next step once this many seconds have passed since they began (0, the default: no budget; their
            steps are bounded in number anyway, docs/accuracy.md); the furthest point reached is reported

  Options Database Key:
. -hs_strategy_time <seconds> - the same

.seealso: HsSolverGetStrategyTime(), HsSolverSetStrategy(), HsContinuationSolve()
@*/
PetscErrorCode HsSolverSetStrategyTime(HsSolver s, PetscReal seconds)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(seconds >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %g must be >= 0 (seconds; 0: no budget)", HsKey(s, "-hs_strategy_time"), (double)seconds);
  s->strategy_time = seconds;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetStrategyTime - gets the time budget of HsSolverSetStrategyTime() (0: none). Not collective. @*/
PetscErrorCode HsSolverGetStrategyTime(HsSolver s, PetscReal *seconds)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  *seconds = s->strategy_time;
  PetscFunctionReturn(0);
}

static PetscErrorCode StrategyOptions(PetscOptionItems *PetscOptionsObject, HsSolver s);

/* -hs_strategy and -hs_strategy_continue (inside HsSolverSetFromOptions' options block). */
static PetscErrorCode StrategyOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  static const char *const names[] = {"auto", "newton"};
  PetscInt                 idx     = s->strategy;
  PetscBool                flg;
  char                     list[sizeof s->strategy_continue];
  PetscReal                t;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_strategy",
                            "auto (when Newton from a cold start fails: l2 line search, grid sequencing, the direct "
                            "guess, continuation in reach, for a small R in log_weight) or newton (Newton only)",
                            "HsSolverSetStrategy", names, 2, &idx, &flg));
  if (flg)
    PetscCall(HsSolverSetStrategy(s, (HsStrategy)idx));
  PetscCall(HsOptionsString(PetscOptionsObject, "-hs_strategy_continue",
                            "NAME=FROM[,NAME=FROM...]: parameters the strategy's continuation moves from FROM to "
                            "their value, after reach",
                            "HsSolverSetStrategy", s->strategy_continue, list, sizeof list, &flg));
  if (flg) {
    PetscCall(PetscStrncpy(s->strategy_continue, list, sizeof s->strategy_continue));
    PetscCall(HsSolverStrategyForEachContinue(s, NULL, NULL)); /* errors now, not after a failed solve */
    PetscCheck(s->strategy != HS_STRATEGY_NEWTON, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_INCOMP,
               "-hs_strategy_continue does nothing with -hs_strategy newton (only the fallbacks of auto continue): "
               "leave one of them out");
  }
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_strategy_time",
                          "seconds for the fallbacks, the direct guess's homotopy and a continuation (0: no budget)",
                          "HsSolverSetStrategyTime", s->strategy_time, &t, &flg));
  if (flg)
    PetscCall(HsSolverSetStrategyTime(s, t));
  PetscFunctionReturn(0);
}

/*@ HsSolverStrategyForEachContinue - checks -hs_strategy_continue NAME=FROM,... and, with fn, calls
    fn(ctx, NAME, FROM) for each entry in order (bvp/ internal: the strategy adds a continuation stage per
    entry). An error names an entry without '=', a value that is not a number, or a name that is not a
    parameter of the problem. Not collective. @*/
PetscErrorCode HsSolverStrategyForEachContinue(HsSolver s, PetscErrorCode (*fn)(void *, const char *, PetscReal),
                                               void    *ctx)
{
  char     buf[sizeof s->strategy_continue], *tok, *save = NULL;
  MPI_Comm comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(buf, s->strategy_continue, sizeof buf));
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char     *eq = strchr(tok, '=');
    double    d  = 0;
    int       why;
    PetscReal v;
    PetscBool known = PETSC_FALSE;
    PetscCheck(eq, comm, PETSC_ERR_ARG_WRONG, "%s: '%s' is not NAME=FROM", HsKey(s, "-hs_strategy_continue"), tok);
    *eq = 0;
    why = HsParseReal(eq + 1, &d); /* decimal only (no 0x1p3, nan, inf) */
    v   = (PetscReal)d;
    PetscCheck(!why, comm, PETSC_ERR_ARG_WRONG, "%s: the start of %s, '%s', %s", HsKey(s, "-hs_strategy_continue"), tok,
               eq + 1, HsParseRealWhy(why));
    for (int i = 0; s->prob && i < s->prob->nparams; i++)
      known = (PetscBool)(known || !strcmp(s->prob->params[i].name, tok));
    PetscCheck(known, comm, PETSC_ERR_ARG_WRONG, "%s: problem '%s' has no parameter '%s'",
               HsKey(s, "-hs_strategy_continue"), s->prob ? s->prob->name : "?", tok);
    for (const char *o = s->strategy_continue; (o = strstr(o, tok)) && o < s->strategy_continue + (tok - buf); o++)
      PetscCheck(!((o == s->strategy_continue || o[-1] == ',') && o[strlen(tok)] == '='), comm, PETSC_ERR_ARG_WRONG,
                 "%s: parameter '%s' is given twice", HsKey(s, "-hs_strategy_continue"), tok);
    if (fn)
      PetscCall((*fn)(ctx, tok, v));
  }
  PetscFunctionReturn(0);
}

/* -hs_initial_guess and -hs_guess_costates (HsSolverSetFromOptions). */
static PetscErrorCode GuessOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  PetscBool flg;

  PetscFunctionBeginUser;
  {
    static const char *const gt[] = {"default", "direct"};
    PetscInt                 idx  = s->guess_type;
    PetscCall(
        HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_initial_guess",
                        "default (-hs_init, or boundary states interpolated with lambda = 0) or direct (the direct "
                        "solution on the same grid, then a homotopy in the costate equation if needed)",
                        "HsSolverSetInitialGuessType", gt, 2, &idx, &flg));
    if (flg)
      PetscCall(HsSolverSetInitialGuessType(s, (HsGuessType)idx));
  }
  {
    static const char *const gc[] = {"given", "implied"};
    PetscInt                 idx  = s->guess_costates;
    PetscCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_guess_costates",
                              "the initial guess's costates: given (the guess's own, 0 in the default guess) or "
                              "implied (from its states; constrained systems)",
                              "HsSolverSetGuessCostates", gc, 2, &idx, &flg));
    if (flg)
      PetscCall(HsSolverSetGuessCostates(s, (HsGuessCostates)idx));
  }
  PetscFunctionReturn(0);
}

/* -hs_direct_solver ipopt on a direct costate scheme of a transcription: the type IPOPT now, as HsSolverSetUp would
 * make it, so that its keys (-hs_ipopt_tol, -hs_ipopt_max_it, ...) are read (issue 38, round 20: they had been
 * refused as unused, the type switched only after the options were read). */
static PetscErrorCode DirectIpoptType(HsSolver s)
{
  const char *cs;
  PetscBool   tr;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetSchemes(s, NULL, &cs));
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERTRANSCRIPTION, &tr));
  if (s->direct_solver == HS_DIRECT_IPOPT && tr && cs &&
      (!strcmp(cs, "kkt") || !strcmp(cs, "trapezoidal") || !strcmp(cs, "constrained_kkt")))
    PetscCall(HsSolverSetType(s, HSSOLVERIPOPT));
  PetscFunctionReturn(0);
}

/*@ HsSolverSetFromOptions - applies the options database to the solver.

  Collective.

  Input Parameter:
. s - the solver

  Options Database Keys (each calls the setter named in brackets, only when given):
+ -hs_bvp_type <transcription|shooting|ipopt> - the formulation [HsSolverSetType]; default transcription
. -hs_direct_solver <kkt|ipopt> - who solves a direct problem [HsSolverSetDirectSolver]
. -hs_initial_guess <default|direct> - [HsSolverSetInitialGuessType]
. -hs_guess_costates <given|implied> - [HsSolverSetGuessCostates]
. -hs_num_intervals <N> - uniform intervals [HsSolverSetNumIntervals]
. -hs_scheme <conserving|conserving4|direct> - [HsSolverSetScheme]
. -hs_state_scheme, -hs_costate_scheme - [HsSolverSetSchemes]
. -hs_dg_tol <tol> - [HsSolverSetDGTolerance]
. -hs_bounds_eps0, -hs_bounds_eps_factor, -hs_bounds_eps_min - bounded controls [HsSolverSetBoundsSmoothing]
. -hs_snes_roundoff <c> - [HsSolverSetRoundoffFactor]
. -hs_snes_noise <c> - [HsSolverSetNoiseFactor]
. -hs_snes_polish <k> - [HsSolverSetPolish]
. -hs_extrapolate_romberg <bool> - [HsSolverSetExtrapolateRomberg]
. -hs_extrapolate_grids <K> - [HsSolverSetExtrapolateGrids]
. -hs_linear_solver <auto|band|mumps|drop|slab> - [HsSolverSetLinearSolver]
. -hs_in_place <bool> - [HsSolverSetInPlace]
. -hs_condense <bool> - [HsSolverSetCondense]
. -hs_monitor - progress lines [HsSolverSetMonitor]
. -hs_strategy <auto|newton>, -hs_strategy_continue <NAME=FROM,...> - what a failed cold solve tries next
  [HsSolverSetStrategy]
. -hs_strategy_time <seconds> - a time budget for it [HsSolverSetStrategyTime]
. -hs_init <file> - initial guess from a trajectory.csv or trajectory.h5 [HsSolverSetInitialGuessFromFile]
. -hs_output_format <csv|hdf5|auto> - the trajectory's format in -o [HsSolverSetOutputFormat]
. -hs_checkpoint <dir>, -hs_checkpoint_every <K|Ss> - [HsSolverSetCheckpoint]
. -hs_restart <dir> - start from a checkpoint, loaded by HsSolverSetUp() [HsSolverSetRestart]
- the formulation's keys (shooting: -hs_shoot_*, -hs_step_*; see HsSolverCreate_Shooting)

  Notes:
  The SNES, KSP and PC options (-snes_*, -ksp_*, -pc_*, -mat_mumps_*) are applied by HsSolverSetUp(), after
  hamshoot's defaults for the formulation, so that they override them.

.seealso: HsSolverCreate(), HsSolverSetOptionsPrefix(), HsSolverSetUp(), HsContinuationSetFromOptions()
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
  HsOptionsCall(PetscOptionsFList(
      "-hs_bvp_type",
      "formulation: transcription (one sparse system), shooting (multiple shooting) or ipopt (the direct NLP)",
      "HsSolverSetType", HsSolverList,
      ((PetscObject)s)->type_name ? ((PetscObject)s)->type_name : HSSOLVERTRANSCRIPTION, type, sizeof type, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetType(s, type));
  else if (!((PetscObject)s)->type_name)
    HsOptionsCall(HsSolverSetType(s, HSSOLVERTRANSCRIPTION));
  HsOptionsCall(HsSolverGetNumIntervals(s, &N));
  HsOptionsCall(HsOptionsInt(PetscOptionsObject, "-hs_num_intervals",
                             "number of uniform time intervals N (the executable's -N)", "HsSolverSetNumIntervals", N,
                             &N, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
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
  HsOptionsCall(GuessOptions(PetscOptionsObject, s));
  HsOptionsCall(HsOptionsReal(PetscOptionsObject, "-hs_dg_tol",
                              "relative step below which divided differences use their limit", "HsSolverSetDGTolerance",
                              s->dg_tol, &r, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetDGTolerance(s, r));
  HsOptionsCall(NewtonStopOptions(PetscOptionsObject, s));
  HsOptionsCall(HsSolverBoundsOptions(PetscOptionsObject, s));
  {
    static const char *const ls[] = {"auto", "band", "mumps", "drop", "slab"};
    PetscInt                 idx  = (PetscInt)s->linear_solver;
    HsOptionsCall(PetscOptionsEList(
        "-hs_linear_solver",
        "linear solver of the Newton solves: auto (band when n <= 32 and T is fixed; drop "
        "for the transcription when n > 32, slab there from 2 ranks; else mumps), band (-pc_type hsband, "
        "bvp/petscext/pcband.c), "
        "mumps (LU), drop (GMRES + -pc_type hsdrop, bvp/petscext/pcdrop.c) or slab (drop, its matrix factored by "
        "-pc_type hsslab, bvp/petscext/pcslab.c); -pc_type overrides",
        "HsSolverSetLinearSolver", ls, 5, ls[idx], &idx, &flg));
    if (flg)
      HsOptionsCall(HsSolverSetLinearSolver(s, (HsLinearSolver)idx));
  }
  HsOptionsCall(HsOptionsBool(PetscOptionsObject, "-hs_in_place",
                              "the banded LU stores U in the Jacobian's values as it reads them (where nothing "
                              "else reads the Jacobian: HsSolverSetInPlace)",
                              "HsSolverSetInPlace", s->in_place, &b, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetInPlace(s, b));
  HsOptionsCall(BoolOptions(PetscOptionsObject, s));
  HsOptionsCall(ExtrapGridsOption(PetscOptionsObject, s));
  HsOptionsCall(HsOptionsBool(PetscOptionsObject, "-hs_monitor", "one progress line per Newton iteration",
                              "HsSolverSetMonitor", s->monitor, &b, &flg));
  if (flg)
    HsOptionsCall(HsSolverSetMonitor(s, b));
  HsOptionsCall(
      HsOptionsString(PetscOptionsObject, "-hs_init",
                      "initial guess from a trajectory.csv or .h5 written by -o (any N: interpolated in time; "
                      "default: boundary states interpolated, lambda = 0)",
                      "HsSolverSetInitialGuessFromFile", "", path, sizeof path, &flg));
  if (flg) {
    HsOptionsCheck(path[0], PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONG, "%s needs a file name",
                   HsKey(s, "-hs_init"));
    HsOptionsCall(HsSolverSetInitialGuessFromFile(s, path));
  }
  HsOptionsCall(CheckpointOptions(PetscOptionsObject, s));
  HsOptionsCall(OutputFormatOption(PetscOptionsObject, s));
  HsOptionsCall(StrategyOptions(PetscOptionsObject, s));
  HsOptionsCall(DirectIpoptType(s));
  if (s->ops->setfromoptions)
    HsOptionsCall((*s->ops->setfromoptions)(s, PetscOptionsObject));
  HsOptionsCall(PetscObjectProcessOptionsHandlers((PetscObject)s, PetscOptionsObject));
  PetscOptionsEnd();
  PetscCall(HelpOtherTypes(s));
  PetscCall(CheckNewtonKeys(s));
  s->setfromoptionscalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsSolverBudgetBegin - starts the time budget of -hs_strategy_time (HsSolverSetStrategyTime) for a bounded loop of
    s unless one is running (bvp/ internal); *own says this call started it (for HsSolverBudgetEnd). Rank 0's clock
    decides. Collective. @*/
PetscErrorCode HsSolverBudgetBegin(HsSolver s, PetscBool *own)
{
  PetscReal t = MPI_Wtime() + s->strategy_time;

  PetscFunctionBeginUser;
  *own = (PetscBool)(s->strategy_time > 0 && !s->deadline);
  if (*own) {
    PetscCallMPI(MPI_Bcast(&t, 1, MPIU_REAL, 0, PetscObjectComm((PetscObject)s)));
    s->deadline = t;
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverBudgetEnd - ends the time budget that HsSolverBudgetBegin started (own; bvp/ internal). Not collective. @*/
PetscErrorCode HsSolverBudgetEnd(HsSolver s, PetscBool own)
{
  PetscFunctionBeginUser;
  if (own)
    s->deadline = 0;
  PetscFunctionReturn(0);
}

/*@ HsSolverBudgetSpent - whether the running time budget is spent (rank 0's clock, the same answer on every rank;
    bvp/ internal). Collective. @*/
PetscErrorCode HsSolverBudgetSpent(HsSolver s, PetscBool *spent)
{
  int x = s->deadline > 0 && MPI_Wtime() >= s->deadline;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Bcast(&x, 1, MPI_INT, 0, PetscObjectComm((PetscObject)s)));
  *spent = (PetscBool)x;
  PetscFunctionReturn(0);
}
