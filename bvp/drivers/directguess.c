/* hamshoot: -hs_initial_guess direct (docs/theory.md section 3, initial guesses): the direct problem with
 * the same state scheme on the same grid, solved by IPOPT (a standard direct method, robust from a
 * naive guess), gives states and costates (its multipliers); the indirect solve starts there. Only
 * the costate equation differs between the two problems, so if Newton does not converge from the
 * direct costates in one go, a homotopy C = theta C_own + (1 - theta) C_kkt walks from the direct
 * solution (theta = 0, where it is a solution) to the solver's costate scheme (theta = 1). */
#include "hsdrivers.h"

#include <string.h>

static PetscErrorCode ConfigureDirect(HsSolver, HsDirectSolver, HsSolver *);

/*@ HsSolverCreateDirect - a solver of the direct problem of s (bvp/ internal): the same problem, N and
    state scheme (s must be set up), the kkt costates of that scheme, options under s's prefix plus
    "hs_direct_"; IPOPT unless the direct solver of s is HS_DIRECT_KKT (dflt: the choice for
    HS_DIRECT_DEFAULT). A constrained system's (docs/constrained.md): Newton on the KKT conditions unless the direct
    solver of s is HS_DIRECT_IPOPT. Collective. @*/
PetscErrorCode HsSolverCreateDirect(HsSolver s, HsDirectSolver dflt, HsSolver *t)
{
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(HsSolverCreate(PetscObjectComm((PetscObject)s), t));
  ierr = ConfigureDirect(s, dflt, t); /* an error (a -hs_direct_* value out of range) frees it: the caller gets none
                                          to free, and -hs_compare -hs_direct_hs_ipopt_tol nan had leaked it (issue
                                          38, round 21) */
  if (ierr)
    PetscCall(HsSolverDestroy(t));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* HsSolverCreateDirect's settings of the new solver t. */
static PetscErrorCode ConfigureDirect(HsSolver s, HsDirectSolver dflt, HsSolver *t)
{
  HsDirectSolver ds = s->direct_solver == HS_DIRECT_DEFAULT ? dflt : s->direct_solver;
  const char    *prefix, *cs = strcmp(s->ss, "midpoint") ? "kkt" : "trapezoidal";

  PetscFunctionBeginUser;
  PetscCall(HsSolverSetProblem(*t, s->prob));
  PetscCall(HsSolverSetNumIntervals(*t, s->N));
  if (s->prob->nc) { /* a constrained system: the KKT conditions of its direct BEM transcription, by Newton unless IPOPT
                        is asked for by name (-hs_direct_solver ipopt; the extremal check) */
    cs = "constrained_kkt";
    if (s->direct_solver != HS_DIRECT_IPOPT)
      ds = HS_DIRECT_KKT;
  }
  PetscCall(HsSolverSetSchemes(*t, s->ss, cs));
  PetscCall(HsSolverSetDGTolerance(*t, s->dg_tol));
  PetscCall(HsSolverSetMonitor(*t, s->monitor));
  PetscCall(HsSolverSetType(*t, ds == HS_DIRECT_KKT ? HSSOLVERTRANSCRIPTION : HSSOLVERIPOPT));
  PetscCall(HsSolverSetStrategy(*t, HS_STRATEGY_NEWTON)); /* its failure is the caller's to handle */
  if (s->guess)
    PetscCall(HsSolverSetInitialGuess(*t, s->guess_N, s->guess));
  (*t)->guess_T = s->guess_T;
  PetscCall(HsSolverGetOptionsPrefix(s, &prefix));
  PetscCall(HsSolverSetOptionsPrefix(*t, prefix));
  PetscCall(HsSolverAppendOptionsPrefix(*t, "hs_direct_"));
  PetscCall(HsSolverSetFromOptions(*t));
  (*t)->ckpt_dir[0]    = 0;                 /* a sub-solve stops on a signal but writes no checkpoint of its own */
  (*t)->check_boundary = s->check_boundary; /* -hs_check_boundary false holds for the sub-solves */
  (*t)->deadline       = s->deadline;       /* and IPOPT at the end of -hs_strategy_time */
  PetscFunctionReturn(0);
}

/*@ HsSolverGuessFromDirect - solves the direct problem of s and stores its solution (states and
    costates, on every rank) as the initial guess of s (bvp/ internal). Collective. A direct solve
    that does not converge, or IPOPT missing (HsIpoptAvailable), is an error naming its status, or with
    ok, *ok = PETSC_FALSE (the guess of s unchanged; the status "IPOPT not available" or "direct solve: ..."). @*/
PetscErrorCode HsSolverGuessFromDirect(HsSolver s, PetscBool *ok)
{
  HsSolver     t;
  HsResults    r;
  HsSolverType type;
  PetscInt     len = (s->N + 1) * 4 * s->prob->n;
  PetscReal   *rows;
  PetscBool    stop;

  PetscFunctionBeginUser;
  PetscCheck(ok || !s->prob->cons_extended, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "-hs_initial_guess direct: problem '%s' lies outside the exact class of constrained systems (%s): the "
             "direct guess is made in the exact class only (docs/direct.md, \"The extended class\")",
             s->prob->name, s->prob->cons_extended);
  if (ok && s->prob->cons_extended) { /* the strategy's attempt fails with this status */
    PetscCall(PetscStrncpy(s->res.status, "no direct guess (extended class)", sizeof s->res.status));
    s->res.converged = PETSC_FALSE, s->res.newton_iterations = 0, *ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  { /* without IPOPT, where the direct solve is IPOPT's (ConfigureDirect's choice: a constrained system's is Newton on
       its KKT conditions unless -hs_direct_solver ipopt, another's IPOPT unless -hs_direct_solver kkt): the caller's
       attempt fails with this status (ok), or the solve's error, before a direct solver exists that the error would
       leave unreleased. Newton's guess is made without IPOPT (issue 38, round 21: the constrained systems' and
       -hs_direct_solver kkt's had been refused where IPOPT could not be loaded) */
    PetscBool avail = PETSC_TRUE;
    char      why[512];
    if (s->prob->nc ? s->direct_solver == HS_DIRECT_IPOPT : s->direct_solver != HS_DIRECT_KKT)
      PetscCall(HsIpoptAvailable(PetscObjectComm((PetscObject)s), &avail, why, sizeof why));
    if (ok && !avail) {
      PetscCall(PetscStrncpy(s->res.status, "IPOPT not available", sizeof s->res.status));
      s->res.converged = PETSC_FALSE, s->res.newton_iterations = 0, *ok = PETSC_FALSE;
      PetscFunctionReturn(0);
    }
    PetscCheck(avail, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP, "-hs_initial_guess direct: %s%s", why,
               s->prob->nc ? "" : "; -hs_direct_solver kkt makes the direct guess by Newton, without IPOPT");
  }
  PetscCall(HsSolverCreateDirect(s, HS_DIRECT_IPOPT, &t));
  if (s->monitor)
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s), "  initial guess: the direct problem (%s + %s)\n", s->ss,
                          s->prob->nc                 ? "constrained_kkt"
                          : strcmp(s->ss, "midpoint") ? "kkt"
                                                      : "trapezoidal"));
  {
    PetscErrorCode ierr = HsSolverSolve(t);
    if (ierr) /* an error of the solve: the direct solver freed first */
      PetscCall(HsSolverDestroy(&t));
    PetscCall(ierr);
  }
  PetscCall(HsSolverGetResults(t, &r));
  PetscCall(HsSolverGetType(t, &type));
  if (ok)
    *ok = r.converged;
  if (ok && !r.converged) { /* the caller's attempt failed with the direct solve's status */
    PetscCall(PetscSNPrintf(s->res.status, sizeof s->res.status, "direct solve: %s", r.status));
    s->res.converged = PETSC_FALSE, s->res.newton_iterations = 0;
    if (s->monitor)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s), "  the direct solve (%s) did not converge (%s)\n", type,
                            r.status));
    PetscCall(HsSolverDestroy(&t));
    PetscFunctionReturn(0);
  }
  /* a signal stopped the direct solve (IPOPT's User_Requested_Stop, or a poll of Newton's on the KKT conditions): the
     run ends as interrupted, not with the error below (issue 38, round 27: "the direct solve (ipopt) did not converge
     (User_Requested_Stop)") */
  PetscCall(HsSolverSubSolveStopped(s, r.converged, "-hs_initial_guess direct's direct solve", &t, &stop));
  if (stop) /* HsSolverSolve solves nothing then */
    PetscFunctionReturn(0);
  if (!r.converged) { /* the error, with the direct solver released first */
    char msg[sizeof r.status + sizeof r.diagnosis + 128];
    PetscCall(PetscSNPrintf(msg, sizeof msg, "the direct solve (%s) did not converge (%s)%s%s", type, r.status,
                            r.diagnosis[0] ? ": " : "", r.diagnosis));
    PetscCall(HsSolverDestroy(&t));
    SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_NOT_CONVERGED, "-hs_initial_guess direct: %s", msg);
  }
  PetscCall(PetscMalloc1(len, &rows));
  PetscCall(HsSolverShareSolutionRows(t, rows));
  PetscCall(HsSolverSetInitialGuess(s, s->N, rows));
  s->guess_T = s->prob->free_T ? r.T : 0; /* a free final time: the direct solution's */
  PetscCall(PetscFree(rows));
  PetscCall(PetscSNPrintf(s->guess_info, sizeof s->guess_info,
                          "direct solution (%s, J^d = %.10g, %" PetscInt_FMT " iterations, %.2f s)", type, (double)r.J,
                          r.newton_iterations, (double)r.wall_time_s));
  PetscCall(HsSolverDestroy(&t));
  PetscFunctionReturn(0);
}

/* One homotopy step: Newton at theta from the current iterate. */
static PetscErrorCode HomotopyStep(HsSolver s, PetscReal theta)
{
  PetscFunctionBeginUser;
  s->hom_theta = theta;
  PetscCall(HsSolverSetUpDiscretization(s));
  if (s->ops->presolve)
    PetscCall((*s->ops->presolve)(s));
  if (s->ops->resetiterate)
    PetscCall((*s->ops->resetiterate)(s));
  PetscCall(HsSolverSolveNewton(s));
  PetscFunctionReturn(0);
}

/*@ HsSolverSolveHomotopy - after Newton failed from the direct solution: Newton along theta = 0 -> 1 in
    C = theta C_own + (1 - theta) C_kkt, from the direct solution, HS_HOMOTOPY_STEPS_DEFAULT equal steps
    at first, a failed step halved (at most HS_HOMOTOPY_MAX_HALVINGS times in a row, and never below
    HS_HOMOTOPY_MIN_STEP), a converged one followed by a doubled step, at most HS_HOMOTOPY_MAX_STEPS steps and
    within -hs_strategy_time (bvp/ internal). The results are those of the last Newton solve (theta = 1 if the
    homotopy arrived); if not, the diagnosis and s->reached say how far it came and why it stopped. Collective. @*/
PetscErrorCode HsSolverSolveHomotopy(HsSolver s)
{
  Vec       Xprev;
  PetscReal theta = 0, dtheta = 1.0 / HS_HOMOTOPY_STEPS_DEFAULT;
  PetscInt  halvings = 0, steps = 0, its = 0;
  char      buf[96];
  PetscBool own, spent = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(s->X, &Xprev));
  PetscCall((*s->ops->guess)(s, s->X)); /* back to the direct solution */
  PetscCall(HsSolverBudgetBegin(s, &own));
  while (theta < 1 && halvings <= HS_HOMOTOPY_MAX_HALVINGS && dtheta >= HS_HOMOTOPY_MIN_STEP &&
         steps < HS_HOMOTOPY_MAX_STEPS && !s->interrupted) {
    PetscReal next = PetscMin(1, theta + dtheta);
    PetscCall(HsSolverBudgetSpent(s, &spent));
    if (spent)
      break;
    PetscCall(VecCopy(s->X, Xprev));
    PetscCall(HomotopyStep(s, next));
    its += s->res.newton_iterations, steps++;
    if (s->monitor)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)s),
                            "  homotopy theta = %.4f: %s after %" PetscInt_FMT " Newton iterations\n", (double)next,
                            s->res.converged ? "converged" : "failed", s->res.newton_iterations));
    if (s->res.converged) {
      theta = next, halvings = 0, dtheta *= 2;
    } else {
      PetscCall(VecCopy(Xprev, s->X));
      dtheta /= 2, halvings++;
    }
  }
  PetscCall(HsSolverBudgetEnd(s, own));
  if (theta < 1) { /* the last attempt's results stand, with the reason; not converged even if its last step was (a
                      cap or the budget stopped it): the iterate solves a blend of the costate equations, not ours */
    s->res.converged = PETSC_FALSE;
    if (!strncmp(s->res.status, "CONVERGED", 9))
      PetscCall(PetscStrncpy(s->res.status, "HOMOTOPY_STOPPED", sizeof s->res.status));
    PetscCall(PetscSNPrintf(s->reached, sizeof s->reached, "homotopy reached theta = %.4g of 1 (%s)", (double)theta,
                            spent                            ? "-hs_strategy_time spent"
                            : steps >= HS_HOMOTOPY_MAX_STEPS ? "HS_HOMOTOPY_MAX_STEPS solves"
                                                             : "step below HS_HOMOTOPY_MIN_STEP"));
    PetscCall(HsSolverSetDiagnosis(
        s, PETSC_TRUE,
        "the homotopy from the direct costate equation stopped at theta = %.4g after %" PetscInt_FMT
        " steps (%s; the last step %.2e)",
        (double)theta, steps,
        spent                            ? "-hs_strategy_time spent"
        : steps >= HS_HOMOTOPY_MAX_STEPS ? "its step cap"
                                         : "steps down to its minimum failed",
        (double)dtheta * 2));
  }
  s->hom_theta = 1;
  PetscCall(HsSolverSetUpDiscretization(s)); /* the solver's own scheme for the diagnostics */
  if (s->ops->presolve)
    PetscCall((*s->ops->presolve)(s));
  PetscCall(PetscSNPrintf(buf, sizeof buf,
                          "; homotopy to the %s costates: %" PetscInt_FMT " steps, %" PetscInt_FMT " Newton iterations",
                          s->cs, steps, its));
  (void)HsStrAppend(s->guess_info, sizeof s->guess_info, buf);
  s->res.newton_iterations = its;
  PetscCall(VecDestroy(&Xprev));
  PetscFunctionReturn(0);
}
