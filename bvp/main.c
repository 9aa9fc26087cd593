/* hamshoot: command-line driver (DESIGN.md section 5).
 *
 *   mpirun -n P hamshoot -problem pendulum -N 20 -hs_scheme conserving -o out/
 *
 * Exit status: 0 converged; 1 bad input or another error (message on stderr
 * of rank 0); 2 the solve did not converge (outputs are still written, with
 * "converged": false). */
#include <petscsnes.h>
#include <stdio.h>
#include <string.h>

#include "../problems/hsmechanical.h"
#include "hsbvp.h"

static const char help[] =
    "hamshoot: indirect optimal control of mechanical systems with Hamiltonian-conserving\n"
    "discrete necessary conditions, solved as a distributed boundary-value problem.\n\n"
    "Usage: mpirun -n P hamshoot -problem NAME [options]\n\n"
    "  -problem NAME|FILE     built-in problem: pendulum kepler saddle crane manipulator3 ncar (default\n"
    "                           pendulum), or a problem file FILE.ocp (docs/problem-format.md)\n"
    "  -p_NAME VALUE          set a problem parameter: pendulum m l g; saddle omega; crane mt J m r g;\n"
    "                           manipulator3 g; ncar cars beta gamma k d; a file's 'param' names\n"
    "  -N N                   number of uniform time intervals (default: the problem's)\n"
    "  -hs_scheme S           conserving (default) | direct\n"
    "                           conserving: greenspan + conserving_1dof (1-DOF), gonzalez + conserving (others)\n"
    "                           direct:     midpoint + trapezoidal (the KKT conditions of a direct transcription)\n"
    "  -hs_state_scheme S     midpoint | greenspan | gonzalez (overrides -hs_scheme)\n"
    "  -hs_costate_scheme S   conserving | conserving_1dof | trapezoidal | kkt (overrides -hs_scheme)\n"
    "  -hs_dg_tol TOL         relative step below which divided differences use their limit (default 1e-6)\n"
    "  -hs_bvp_type T         transcription (default) | shooting\n"
    "  -hs_shoot_segments M   shooting segments, 1 <= M <= N (default 1: single shooting)\n"
    "  -hs_shoot_knots k1,..  interior segment knots for an uneven split (overrides -hs_shoot_segments)\n"
    "  -hs_shoot_ksp K        direct (default: MUMPS LU) | rankblock (GMRES + exact LU per rank;\n"
    "                           at most 4n(P-1)+1 iterations per Newton step, independent of M and N)\n"
    "  -hs_shoot_mf           shooting: exact Jacobian applied matrix-free, unpreconditioned GMRES\n"
    "  -hs_shoot_init I       linear (default: boundary states interpolated, lambda = 0) | transcription\n"
    "  -hs_shoot_max_growth G largest sensitivity growth in a segment before asking for more segments (1e8)\n"
    "  -hs_step_atol A        per-step (local) Newton tolerance, relative to 1+|y| (1e-14)\n"
    "  -hs_step_stol S        per-step Newton stops when its update is below S (1+|y|) (1e-12)\n"
    "  -hs_step_max_it K      per-step Newton iterations (25)\n"
    "  -hs_snes_roundoff C    Newton also stops at |F| <= C eps max(1,|X|) sqrt(n), the round-off level (100)\n"
    "  -hs_init FILE          initial guess from a trajectory.csv written by -o (any N: interpolated)\n"
    "  -hs_continue NAME[,NAME2..] -hs_continue_from A[,A2..] [-hs_continue_steps K[,K2..]]\n"
    "                         continuation: all NAMEs start at their A; then each in turn moves to its value B\n"
    "                           (the problem's or -p_NAME) in K steps (default 10), each solve from the last\n"
    "                           solutions (secant predictor); a failed step is retried with half the step\n"
    "                           (down to 2^-6 of the nominal step, -hs_continue_max_halvings 6). NAME: a\n"
    "                           problem parameter, or reach: the fixed terminal states move from x0\n"
    "                           (reach 0) to xT (reach 1)\n"
    "  -o DIR                 write DIR/summary.json and DIR/trajectory.csv (atomically)\n"
    "  -quiet                 no per-iteration progress lines\n"
    "  PETSc options pass through: -snes_monitor -snes_rtol -snes_test_jacobian -snes_mf_operator -ksp_type\n"
    "  -pc_type -pc_factor_mat_solver_type -log_view ... Defaults: Newton (-snes_atol 1e-12 -snes_rtol 1e-14\n"
    "  -snes_stol 1e-14 -snes_max_it 50; line search bt, l2 for shooting) with a MUMPS LU solve\n"
    "  (-ksp_type preonly -pc_type lu -mat_mumps_cntl_1 1.0 -mat_mumps_icntl_14 200).\n";

/* Keeps the first error message of a failed PETSc call so that main can
 * report it in one clean line instead of a traceback. */
static char hs_errmsg[1024];

static PetscErrorCode CaptureError(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                                   PetscErrorType p, const char *mess, void *ctx)
{
  (void)comm, (void)line, (void)fun, (void)file, (void)ctx;
  if (p == PETSC_ERROR_INITIAL) {
    if (mess && mess[0])
      snprintf(hs_errmsg, sizeof hs_errmsg, "%s", mess);
    else
      snprintf(hs_errmsg, sizeof hs_errmsg, "PETSc error %d in %s", (int)n, fun);
  }
  return n;
}

/* -p_NAME VALUE overrides a problem parameter; an unknown -p_ key is an error
 * that lists the problem's parameters (a typo must not be silently ignored). */
static PetscErrorCode ApplyProblemParams(HsProblem *prob)
{
  char  *all, *tok, *save = NULL, names[512] = "";
  size_t len = 0;

  PetscFunctionBeginUser;
  for (int i = 0; i < prob->nparams; i++) {
    char      key[80];
    PetscReal v;
    PetscBool set;
    snprintf(key, sizeof key, "-p_%s", prob->params[i].name);
    PetscCall(PetscOptionsGetReal(NULL, NULL, key, &v, &set));
    if (set) {
      int st = HsProblemSetParam(prob, prob->params[i].name, (double)v);
      PetscCheck(st != 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s %g must be a whole number (%s)", key,
                 (double)v, prob->params[i].help);
      PetscCheck(st == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s %g is outside [%g, %g] (%s)", key, (double)v,
                 prob->params[i].min, prob->params[i].max, prob->params[i].help);
    }
    len += (size_t)snprintf(names + len, sizeof names - len, "%s-p_%s", i ? " " : "", prob->params[i].name);
  }
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    int known = 0;
    if (strncmp(tok, "-p_", 3))
      continue;
    for (int i = 0; i < prob->nparams; i++)
      known |= !strcmp(tok + 3, prob->params[i].name);
    if (!known) {
      char bad[128];
      snprintf(bad, sizeof bad, "%s", tok);
      PetscCall(PetscFree(all));
      SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "unknown problem parameter %s for '%s' (parameters: %s)", bad,
              prob->name, names[0] ? names : "none");
    }
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Continuation (DESIGN.md section 3, initial guesses):
 *
 *   -hs_continue NAME1[,NAME2,...] -hs_continue_from A1[,A2,...] [-hs_continue_steps K1[,K2,...]]
 *
 * Every NAME starts at its A; stage i then moves NAME_i from A_i to its target
 * B_i (the problem's value, or -p_NAME) in K_i equal steps while the later
 * names stay at their A, each solve warm-started from the last converged one
 * with a secant predictor (linear extrapolation of the last two solutions). A
 * step that does not converge is retried from the last solution with half the
 * step, down to 2^-(-hs_continue_max_halvings) of the nominal step; after a
 * success the step doubles again up to the nominal one. NAME is a problem
 * parameter or "reach": the fixed terminal components move from x0 (reach = 0)
 * to xT (reach = 1), x_T(reach) = x0 + reach (xT - x0). The last solve, at the
 * final targets, is the main solve: *solved tells Run not to solve again. */
#define HS_MAX_STAGES 8
typedef struct {
  char      name[64];
  PetscInt  ip; /* parameter index, -1 for reach */
  PetscReal from, target, steps;
} Stage;

/* Sets stage value v: a parameter, or the reach of the terminal state. After a
 * parameter change the problem may recompute xT (problem files), so the
 * current reach is applied again. */
static PetscErrorCode SetStageValue(HsProblem *prob, const Stage *st, PetscReal v, PetscReal *reach,
                                    const PetscReal *goal)
{
  PetscFunctionBeginUser;
  if (st->ip >= 0) {
    PetscCheck(HsProblemSetParam(prob, st->name, (double)v) == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_continue: %s = %g is outside [%g, %g] (%s)", st->name, (double)v, prob->params[st->ip].min,
               prob->params[st->ip].max, prob->params[st->ip].help);
  } else
    *reach = v;
  if (goal)
    for (int i = 0; i < 2 * prob->n; i++)
      if (prob->xT_fixed[i])
        prob->xT[i] = prob->x0[i] + *reach * (goal[i] - prob->x0[i]);
  PetscFunctionReturn(0);
}

static PetscErrorCode Continuation(HsProblem *prob, HsSolver solver, PetscBool *solved)
{
  char     *names[HS_MAX_STAGES] = {0};
  PetscReal from[HS_MAX_STAGES], reach = 1, goal[64], *g = NULL;
  PetscInt  nn = HS_MAX_STAGES, nf = HS_MAX_STAGES, ns = HS_MAX_STAGES, steps[HS_MAX_STAGES], maxhalf = 6;
  PetscBool set, fset;
  Stage     st[HS_MAX_STAGES];
  HsResults r;
  Vec       X, Xc = NULL, Xp = NULL, Xs = NULL;

  PetscFunctionBeginUser;
  *solved = PETSC_FALSE;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-hs_continue", names, &nn, &set));
  if (!set)
    PetscFunctionReturn(0);
  PetscCheck(nn >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-hs_continue needs a parameter name (or reach)");
  PetscCall(PetscOptionsGetRealArray(NULL, NULL, "-hs_continue_from", from, &nf, &fset));
  PetscCheck(fset, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-hs_continue needs -hs_continue_from VALUE[,VALUE...]");
  PetscCheck(nf == nn, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "-hs_continue_from: %" PetscInt_FMT " values for %" PetscInt_FMT " names in -hs_continue", nf, nn);
  steps[0] = 10;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-hs_continue_steps", steps, &ns, &set));
  if (!set)
    ns = 1;
  PetscCheck(ns == 1 || ns == nn, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "-hs_continue_steps: give one value or one per name (%" PetscInt_FMT " names)", nn);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-hs_continue_max_halvings", &maxhalf, NULL));
  PetscCheck(maxhalf >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-hs_continue_max_halvings must be >= 0");
  for (PetscInt k = 0; k < nn; k++) {
    Stage *t = &st[k];
    snprintf(t->name, sizeof t->name, "%s", names[k]);
    t->ip    = -2;
    t->from  = from[k];
    t->steps = (PetscReal)steps[ns == 1 ? 0 : k];
    PetscCheck(t->steps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-hs_continue_steps %g must be >= 1",
               (double)t->steps);
    if (!strcmp(t->name, "reach")) {
      t->ip = -1, t->target = 1;
      PetscCheck(t->from >= 0 && t->from <= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
                 "-hs_continue reach: -hs_continue_from %g must lie in [0, 1]", (double)t->from);
      PetscCheck(2 * prob->n <= 64, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-hs_continue reach: n too large");
      for (int i = 0; i < 2 * prob->n; i++)
        goal[i] = prob->xT[i];
      g = goal;
    }
    for (int i = 0; i < prob->nparams; i++)
      if (!strcmp(prob->params[i].name, t->name))
        t->ip = i, t->target = *prob->params[i].value;
    PetscCheck(t->ip > -2, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "-hs_continue %s: '%s' has no parameter of that name (nor is it 'reach')", t->name, prob->name);
    PetscCall(PetscFree(names[k]));
  }
  /* every name at its start value */
  for (PetscInt k = 0; k < nn; k++)
    PetscCall(SetStageValue(prob, &st[k], st[k].from, &reach, g));
  PetscCall(HsSolverSetWarmStart(solver, PETSC_TRUE));
  PetscCall(HsSolverSolve(solver));
  PetscCall(HsSolverGetResults(solver, &r));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "continuation %s = %-10.6g %s after %" PetscInt_FMT " Newton iterations\n",
                        st[0].name, (double)st[0].from, r.converged ? "converged" : "NOT converged",
                        r.newton_iterations));
  PetscCheck(r.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
             "continuation: the first solve (%s = %g) did not converge (%s); start closer to an easy problem",
             st[0].name, (double)st[0].from, SNESConvergedReasons[r.reason]);
  PetscCall(HsSolverGetIterate(solver, &X));
  PetscCall(VecDuplicate(X, &Xc));
  PetscCall(VecDuplicate(X, &Xp));
  PetscCall(VecDuplicate(X, &Xs));
  PetscCall(VecCopy(X, Xc));
  for (PetscInt k = 0; k < nn; k++) {
    Stage    *t  = &st[k];
    PetscReal d0 = (t->target - t->from) / t->steps, d = d0, vc = t->from, vp = 0;
    PetscBool have_prev = PETSC_FALSE, final = (PetscBool)(k == nn - 1);
    while (d0 != 0) {
      PetscBool last = (PetscBool)(d0 > 0 ? vc + d >= t->target - 1e-12 * PetscAbsReal(d0)
                                          : vc + d <= t->target + 1e-12 * PetscAbsReal(d0));
      PetscReal v    = last ? t->target : vc + d;
      PetscCall(SetStageValue(prob, t, v, &reach, g));
      /* predictor: the secant through the last two solutions of this stage, else the last one */
      PetscCall(VecCopy(Xc, Xs));
      if (have_prev) {
        PetscCall(VecAXPY(Xs, (v - vc) / (vc - vp), Xc));
        PetscCall(VecAXPY(Xs, -(v - vc) / (vc - vp), Xp));
      }
      PetscCall(HsSolverSetIterate(solver, Xs));
      PetscCall(HsSolverSolve(solver));
      PetscCall(HsSolverGetResults(solver, &r));
      if (r.converged) {
        if (!(last && final)) /* the final solve is reported by the summary */
          PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                                "continuation %s = %-10.6g converged after %" PetscInt_FMT " Newton iterations\n",
                                t->name, (double)v, r.newton_iterations));
        PetscCall(VecCopy(Xc, Xp));
        PetscCall(HsSolverGetIterate(solver, &X));
        PetscCall(VecCopy(X, Xc));
        if (last)
          break;
        vp = vc, vc = v, have_prev = PETSC_TRUE;
        d = PetscAbsReal(2 * d) < PetscAbsReal(d0) ? 2 * d : d0; /* recover the nominal step */
      } else {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                              "continuation %s = %-10.6g NOT converged (%s); retrying with half the step\n", t->name,
                              (double)v, SNESConvergedReasons[r.reason]));
        PetscCheck(PetscAbsReal(d) / 2 >= PetscAbsReal(d0) * PetscPowRealInt(0.5, maxhalf), PETSC_COMM_WORLD,
                   PETSC_ERR_NOT_CONVERGED,
                   "continuation in %s stopped at %g: no convergence at %g with a step of 1/%" PetscInt_FMT
                   " of the nominal one "
                   "(%s; -hs_continue_max_halvings %" PetscInt_FMT "): the solution branch may turn back (a fold) "
                   "here; use another path or start value",
                   t->name, (double)vc, (double)v, (PetscInt)(PetscAbsReal(d0) / PetscAbsReal(d) + 0.5),
                   SNESConvergedReasons[r.reason], maxhalf);
        PetscCall(HsSolverSetIterate(solver, Xc));
        d /= 2;
      }
    }
  }
  PetscCall(VecDestroy(&Xc));
  PetscCall(VecDestroy(&Xp));
  PetscCall(VecDestroy(&Xs));
  *solved = PETSC_TRUE; /* the last solve was at the final targets and converged */
  PetscFunctionReturn(0);
}

static PetscErrorCode Run(int *converged)
{
  char       name[PETSC_MAX_PATH_LEN] = "pendulum", out[PETSC_MAX_PATH_LEN] = "";
  PetscBool  has_out, help_only, solved;
  HsProblem *prob   = NULL;
  HsSolver   solver = NULL;
  HsResults  res;
  int        st;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", name, sizeof name, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", out, sizeof out, &has_out));
  PetscCheck(!has_out || out[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-o needs a directory name");
  if (strstr(name, ".ocp") || strchr(name, '/')) { /* a problem file */
    char msg[1024];
    st = HsProblemCreateFromFile(name, &prob, msg, sizeof msg);
    PetscCheck(st == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s", msg);
  } else {
    st = HsProblemCreateByName(name, &prob);
    PetscCheck(st != 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown problem '%s' (-problem: %s, or a problem file NAME.ocp)", name, HsProblemListNames());
    PetscCheck(st == 0, PETSC_COMM_WORLD, PETSC_ERR_MEM, "cannot create problem '%s'", name);
  }
  PetscCall(ApplyProblemParams(prob));
  PetscCall(HsSolverCreate(PETSC_COMM_WORLD, &solver));
  PetscCall(HsSolverSetProblem(solver, prob));
  PetscCall(HsSolverSetFromOptions(solver));
  PetscCall(HsSolverSetUp(solver));
  PetscCall(PetscOptionsHasHelp(NULL, &help_only));
  if (help_only) { /* -help: the options have been listed; do not solve */
    *converged = 1;
    PetscCall(HsSolverDestroy(&solver));
    HsProblemDestroy(&prob);
    PetscFunctionReturn(0);
  }
  PetscCall(Continuation(prob, solver, &solved));
  if (!solved)
    PetscCall(HsSolverSolve(solver));
  PetscCall(HsSolverGetResults(solver, &res));
  PetscCall(HsSolverView(solver, NULL));
  if (out[0]) {
    PetscCall(HsSolverWriteOutput(solver, out));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  output             %s/summary.json, %s/trajectory.csv\n", out, out));
  }
  *converged = res.converged;
  PetscCall(HsSolverDestroy(&solver));
  HsProblemDestroy(&prob);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscErrorCode ierr;
  int            converged = 0;
  PetscMPIInt    rank;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscPushErrorHandler(CaptureError, NULL));
  ierr = Run(&converged);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    if (rank == 0)
      fprintf(stderr, "hamshoot: error: %s\n", hs_errmsg);
    PetscCall(PetscFinalize());
    return 1;
  }
  PetscCall(PetscFinalize());
  return converged ? 0 : 2;
}
