/* hamshoot: the direct transcription solved by IPOPT (type "ipopt", docs/theory.md section 3;
 * the NLP: costate/nlp.c, its callbacks: ipoptnlp.c).
 *
 * A real direct method: IPOPT (interior point, filter line search) with the exact sparse Jacobian
 * and the exact Hessian of the Lagrangian, on the same grid and the same state scheme as the
 * indirect solve. Its constraint multipliers are the interval costates lambda_{k+1/2}
 * (costate/nlp.c: no sign change, no factor h), so the solution is stored in the transcription's node
 * layout and checked against the transcription's kkt (or trapezoidal) residual: |F| in the summary
 * is that residual at IPOPT's solution, the evidence that the mapped multipliers satisfy the kkt
 * costate equations.
 *
 * A constrained system of the closed-form class (docs/constrained.md, "The direct counterpart") has its own NLP, the
 * direct BEM transcription (ipoptcons.c): set-up hands over to the constrained transcription as the transcription's
 * does (SetUpConstrained; its data then begins with the HsConstrained, HsIpoptCons), whose KKT form
 * (constrained_kkt) checks IPOPT's solution in the same way. The extended class is refused.
 *
 * Scaling: the constraints c_k are the state equations times h and J^d's gradient is O(h); IPOPT
 * is given the scaling factors 1/h for both (nlp_scaling_method user-scaling), so that its primal
 * and dual infeasibilities are the residuals of the state and costate equations per unit time, and
 * -hs_ipopt_tol means the same at every N.
 *
 * IPOPT runs on rank 0 (it is a serial solver; Debian's is built on sequential MUMPS); the other ranks
 * wait and receive the solution. The library is opened with dlopen(RTLD_LOCAL | RTLD_DEEPBIND): its
 * sequential MUMPS (libdmumps_seq, and libmumps_common_seq with stub MPI_* symbols) defines the same
 * symbols as PETSc's parallel MUMPS and Open MPI; linked into one executable, one set would silently
 * replace the other. Loaded with its own symbol scope first, each library calls its own.
 */
#include "ipoptimpl.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#ifndef HS_IPOPT_LIBRARY
#define HS_IPOPT_LIBRARY "libipopt.so.1"
#endif

static HsIpoptLib ipopt_lib;
static void      *ipopt_handle;

/* dlopen IPOPT once per process (rank 0): the soname found at build time, or the environment's
   HAMSHOOT_IPOPT_LIBRARY; msg says why it failed. */
static int LoadIpopt(char *msg, size_t len)
{
  const char *names[] = {"CreateIpoptProblem", "FreeIpoptProblem",       "AddIpoptStrOption",       "AddIpoptNumOption",
                         "AddIpoptIntOption",  "SetIpoptProblemScaling", "SetIntermediateCallback", "IpoptSolve"};
  void      **slots[] = {(void **)&ipopt_lib.Create,       (void **)&ipopt_lib.Free,      (void **)&ipopt_lib.StrOption,
                         (void **)&ipopt_lib.NumOption,    (void **)&ipopt_lib.IntOption, (void **)&ipopt_lib.Scaling,
                         (void **)&ipopt_lib.Intermediate, (void **)&ipopt_lib.Solve};
  const char *lib;

  if (ipopt_handle)
    return 0;
#ifdef HS_SANITIZED
  /* the sanitizer runtime aborts the process on dlopen(RTLD_DEEPBIND) (google/sanitizers#611) */
  snprintf(msg, len,
           "IPOPT is not available in a sanitized build (-DHS_SANITIZE=ON): the sanitizer runtime refuses "
           "dlopen(RTLD_DEEPBIND), which keeps IPOPT's sequential MUMPS apart from PETSc's");
  return 1;
#endif
  lib          = getenv("HAMSHOOT_IPOPT_LIBRARY"); /* another IPOPT build (its path or soname) */
  lib          = lib && lib[0] ? lib : HS_IPOPT_LIBRARY;
  ipopt_handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!ipopt_handle) {
    snprintf(msg, len, "IPOPT is not available: %s (Debian: apt-get install coinor-libipopt-dev)", dlerror());
    return 1;
  }
  for (int i = 0; i < 8; i++)
    if (!(*slots[i] = dlsym(ipopt_handle, names[i]))) {
      snprintf(msg, len, "IPOPT library %s has no %s", lib, names[i]);
      dlclose(ipopt_handle), ipopt_handle = NULL;
      return 1;
    }
  return 0;
}

/*@ HsIpoptAvailable - whether IPOPT can be loaded (on rank 0 of comm; the answer on every rank), and
    if not, why (msg, len bytes). Collective. The direct guess of -hs_strategy auto and -hs_check_extremal
    auto skip IPOPT when it is not available; an explicit request of it is an error. @*/
PetscErrorCode HsIpoptAvailable(MPI_Comm comm, PetscBool *avail, char msg[], size_t len)
{
  PetscMPIInt rank;
  char        why[256] = "";
  int         no       = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0)
    no = LoadIpopt(why, sizeof why);
  PetscCallMPI(MPI_Bcast(&no, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(why, sizeof why, MPI_CHAR, 0, comm));
  *avail = (PetscBool)!no;
  if (msg && len)
    PetscCall(PetscStrncpy(msg, why, len));
  PetscFunctionReturn(0);
}

static const char *StatusName(int st)
{
  switch (st) {
  case Solve_Succeeded:
    return "Solve_Succeeded";
  case Solved_To_Acceptable_Level:
    return "Solved_To_Acceptable_Level";
  case Infeasible_Problem_Detected:
    return "Infeasible_Problem_Detected";
  case Search_Direction_Becomes_Too_Small:
    return "Search_Direction_Becomes_Too_Small";
  case Diverging_Iterates:
    return "Diverging_Iterates";
  case User_Requested_Stop:
    return "User_Requested_Stop";
  case Maximum_Iterations_Exceeded:
    return "Maximum_Iterations_Exceeded";
  case Restoration_Failed:
    return "Restoration_Failed";
  case Error_In_Step_Computation:
    return "Error_In_Step_Computation";
  case Invalid_Number_Detected:
    return "Invalid_Number_Detected";
  case Insufficient_Memory:
    return "Insufficient_Memory";
  default:
    return "IPOPT_Error";
  }
}

/* -hs_ipopt_ordering names and IPOPT's mumps_pivot_order codes */
static const char *const orderings[] = {"amd", "amf", "scotch", "pord", "metis", "qamd", "auto"};

/* The index of name in the n names (exact match), or -1: the keys of the setters by name. */
static PetscErrorCode NameIndex(const char *const names[], PetscInt n, const char *name, PetscInt *index)
{
  PetscBool eq = PETSC_FALSE;

  PetscFunctionBeginUser;
  *index = -1;
  for (PetscInt i = 0; i < n && !eq; i++) {
    PetscCall(PetscStrcmp(name, names[i], &eq));
    if (eq)
      *index = i;
  }
  PetscFunctionReturn(0);
}
static const int ordering_codes[] = {0, 2, 3, 4, 5, 6, 7};

static PetscErrorCode DestroyConstrained(HsSolver s);

/* The ipopt data of an ipopt solver: s->data, or its part of a constrained system's (HsIpoptCons, after set-up). */
static HsIpopt *IpoptOf(HsSolver s)
{
  return s->ops->destroy == DestroyConstrained ? &((HsIpoptCons *)s->data)->ip : (HsIpopt *)s->data;
}

/* The ipopt data of s, or an error naming the caller if s is not an ipopt solver. */
static PetscErrorCode IpoptData(HsSolver s, const char *caller, HsIpopt **ip)
{
  PetscBool match;

  PetscFunctionBeginUser;
  *ip = NULL;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERIPOPT, &match));
  PetscCheck(match, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_WRONGSTATE,
             "%s() needs an ipopt solver (HsSolverSetType(s, HSSOLVERIPOPT), -hs_bvp_type ipopt or "
             "-hs_direct_solver ipopt); this one is %s",
             caller, ((PetscObject)s)->type_name ? ((PetscObject)s)->type_name : "of no type yet");
  *ip = IpoptOf(s);
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptSetTolerances - sets IPOPT's tolerance on its scaled NLP error and its iteration limit.

  Collective.

  Input Parameters:
+ s      - the solver, of type HSSOLVERIPOPT
. tol    - the tolerance on the scaled NLP error (the residuals of the state and costate equations per unit time),
           in (0, 1)
- max_it - the iteration limit, >= 0

  Options Database Keys:
+ -hs_ipopt_tol <tol> - the tolerance (default HS_IPOPT_TOL_DEFAULT)
- -hs_ipopt_max_it <max_it> - the iteration limit (default HS_IPOPT_MAX_IT_DEFAULT)

  Notes:
  PETSC_DEFAULT keeps a value.

.seealso: HsSolverIpoptGetTolerances(), HsSolverIpoptSetPrintLevel()
@*/
PetscErrorCode HsSolverIpoptSetTolerances(HsSolver s, PetscReal tol, PetscInt max_it)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptSetTolerances", &ip));
  if (tol != (PetscReal)PETSC_DEFAULT) {
    PetscCheck(tol > 0 && tol < 1, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g must lie in (0, 1)", HsKey(s, "-hs_ipopt_tol"), (double)tol);
    ip->tol = tol;
  }
  if (max_it != PETSC_DEFAULT) {
    PetscCheck(max_it >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
               "%s %" PetscInt_FMT " must be >= 0", HsKey(s, "-hs_ipopt_max_it"), max_it);
    ip->max_it = max_it;
  }
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptSetMaxPerturbation - sets the largest regularization IPOPT may add to the Hessian of the Lagrangian
  (IPOPT's max_hessian_perturbation) before it gives up on a step.

  Collective.

  Input Parameters:
+ s - the solver, of type HSSOLVERIPOPT
- m - the largest perturbation, > 0; PETSC_DEFAULT: IPOPT's own (1e20)

  Options Database Key:
. -hs_ipopt_max_perturbation <m>

  Notes:
  An iterate that needs a huge regularization has left any neighbourhood of a minimum; near IPOPT's 1e20 each such step
  factors a KKT matrix whose delayed pivots make MUMPS all but dense (the crane at N = 640 from a mirrored start:
  45 s for one iteration). The extremal check's extra starts use HS_EXTREMAL_MAX_PERTURBATION.

.seealso: HsSolverIpoptSetTolerances()
@*/
PetscErrorCode HsSolverIpoptSetMaxPerturbation(HsSolver s, PetscReal m)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptSetMaxPerturbation", &ip));
  if (m == (PetscReal)PETSC_DEFAULT)
    m = 0;
  else
    PetscCheck(m > 0 && m < PETSC_INFINITY, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g must be positive and finite", HsKey(s, "-hs_ipopt_max_perturbation"), (double)m);
  ip->max_pert = m;
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptGetTolerances - gets the tolerance and iteration limit of HsSolverIpoptSetTolerances().

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERIPOPT

  Output Parameters:
+ tol    - the tolerance on the scaled NLP error (the argument may be NULL)
- max_it - the iteration limit (the argument may be NULL)

.seealso: HsSolverIpoptSetTolerances()
@*/
PetscErrorCode HsSolverIpoptGetTolerances(HsSolver s, PetscReal *tol, PetscInt *max_it)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptGetTolerances", &ip));
  if (tol)
    *tol = ip->tol;
  if (max_it)
    *max_it = ip->max_it;
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptSetOrdering - sets the fill-reducing ordering of IPOPT's MUMPS (IPOPT's mumps_pivot_order).

  Collective.

  Input Parameters:
+ s        - the solver, of type HSSOLVERIPOPT
- ordering - amd, amf, scotch, pord, metis, qamd or auto

  Options Database Key:
. -hs_ipopt_ordering <amd|amf|scotch|pord|metis|qamd|auto> - the same (default HS_IPOPT_ORDERING_DEFAULT)

  Notes:
  The default HS_IPOPT_ORDERING_DEFAULT was chosen by measurement (bench/README.md).

.seealso: HsSolverIpoptGetOrdering()
@*/
PetscErrorCode HsSolverIpoptSetOrdering(HsSolver s, const char *ordering)
{
  HsIpopt *ip;
  PetscInt i;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptSetOrdering", &ip));
  PetscCall(NameIndex(orderings, 7, ordering, &i));
  PetscCheck(i >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_UNKNOWN_TYPE,
             "unknown -hs_ipopt_ordering '%s' (choose amd, amf, scotch, pord, metis, qamd or auto)", ordering);
  ip->ordering = i;
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptGetOrdering - gets the fill-reducing ordering of IPOPT's MUMPS.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERIPOPT

  Output Parameter:
. ordering - the ordering name of HsSolverIpoptSetOrdering()

.seealso: HsSolverIpoptSetOrdering()
@*/
PetscErrorCode HsSolverIpoptGetOrdering(HsSolver s, const char **ordering)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptGetOrdering", &ip));
  *ordering = orderings[ip->ordering];
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptSetPrintLevel - sets the level of IPOPT's own output on rank 0.

  Collective.

  Input Parameters:
+ s     - the solver, of type HSSOLVERIPOPT
- level - IPOPT's print level, 0..12 (0: none)

  Options Database Key:
. -hs_ipopt_print_level <level> - the same (default 0: none)

  Notes:
  -hs_monitor prints hamshoot's one line per iteration instead.

.seealso: HsSolverIpoptGetPrintLevel(), HsSolverSetMonitor()
@*/
PetscErrorCode HsSolverIpoptSetPrintLevel(HsSolver s, PetscInt level)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptSetPrintLevel", &ip));
  PetscCheck(level >= 0 && level <= 12, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %" PetscInt_FMT " must lie in 0..12", HsKey(s, "-hs_ipopt_print_level"), level);
  ip->print_level = level;
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptGetPrintLevel - gets the level of IPOPT's own output.

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERIPOPT

  Output Parameter:
. level - IPOPT's print level

.seealso: HsSolverIpoptSetPrintLevel()
@*/
PetscErrorCode HsSolverIpoptGetPrintLevel(HsSolver s, PetscInt *level)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptGetPrintLevel", &ip));
  *level = ip->print_level;
  PetscFunctionReturn(0);
}

/* -hs_ipopt_derivative_test names, IPOPT's derivative_test values */
static const char *const deriv_tests[] = {"none", "first-order", "second-order"};

/*@ HsSolverIpoptSetDerivativeTest - makes IPOPT check the NLP's derivatives against differences at its start (IPOPT's
    derivative checker).

  Collective.

  Input Parameters:
+ s    - the solver, of type HSSOLVERIPOPT
- test - none, first-order (the gradient and the constraint Jacobian) or second-order (also the Hessian of the
         Lagrangian)

  Options Database Key:
. -hs_ipopt_derivative_test <none|first-order|second-order> - the same (default none)

  Notes:
  The checker (IPOPT's defaults: a start perturbed at random, forward differences of relative step 1e-8, entries
  flagged beyond 1e-4 relative) prints its findings on rank 0 with -hs_ipopt_print_level 4 or more ("No errors
  detected by derivative checker." already with 3); the solve goes on as without it. A check of the implementation
  (test constrained_ipopt), not of a problem: the NLP's derivatives are analytic.

.seealso: HsSolverIpoptGetDerivativeTest(), HsSolverIpoptSetPrintLevel()
@*/
PetscErrorCode HsSolverIpoptSetDerivativeTest(HsSolver s, const char *test)
{
  HsIpopt *ip;
  PetscInt i;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptSetDerivativeTest", &ip));
  PetscCall(NameIndex(deriv_tests, 3, test, &i));
  PetscCheck(i >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_UNKNOWN_TYPE,
             "unknown -hs_ipopt_derivative_test '%s' (choose none, first-order or second-order)", test);
  ip->deriv_test = i;
  PetscFunctionReturn(0);
}

/*@ HsSolverIpoptGetDerivativeTest - gets IPOPT's derivative check of HsSolverIpoptSetDerivativeTest().

  Not collective.

  Input Parameter:
. s - the solver, of type HSSOLVERIPOPT

  Output Parameter:
. test - none, first-order or second-order

.seealso: HsSolverIpoptSetDerivativeTest()
@*/
PetscErrorCode HsSolverIpoptGetDerivativeTest(HsSolver s, const char **test)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(IpoptData(s, "HsSolverIpoptGetDerivativeTest", &ip));
  *test = deriv_tests[ip->deriv_test];
  PetscFunctionReturn(0);
}

static PetscErrorCode SetFromOptions(HsSolver s, PetscOptionItems *PetscOptionsObject)
{
  HsIpopt  *ip = IpoptOf(s);
  PetscReal tol;
  PetscInt  it, idx = ip->ordering;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscOptionsHeadBegin(PetscOptionsObject, "Direct transcription by IPOPT (-hs_bvp_type ipopt)");
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_ipopt_tol",
                          "IPOPT's tolerance on the scaled NLP error (residuals per unit time)",
                          "HsSolverIpoptSetTolerances", ip->tol, &tol, &flg));
  /* the setters take PETSC_DEFAULT (-2) as "keep": a user's -2 must not read as that (issue 38, round 22:
     -hs_ipopt_tol -2, -hs_ipopt_max_it -2 and -hs_ipopt_max_perturbation -2 were taken without a word) */
  PetscCheck(!flg || tol > 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE, "%s %g must lie in (0, 1)",
             HsKey(s, "-hs_ipopt_tol"), (double)tol);
  if (flg)
    PetscCall(HsSolverIpoptSetTolerances(s, tol, PETSC_DEFAULT));
  PetscCall(HsOptionsInt(PetscOptionsObject, "-hs_ipopt_max_it", "IPOPT's iteration limit",
                         "HsSolverIpoptSetTolerances", ip->max_it, &it, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
  PetscCheck(!flg || it >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %" PetscInt_FMT " must be >= 0", HsKey(s, "-hs_ipopt_max_it"), it);
  if (flg)
    PetscCall(HsSolverIpoptSetTolerances(s, PETSC_DEFAULT, it));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_ipopt_max_perturbation",
                          "largest Hessian regularization of IPOPT before it gives up a step (0: IPOPT's 1e20)",
                          "HsSolverIpoptSetMaxPerturbation", ip->max_pert, &tol, &flg));
  PetscCheck(!flg || tol >= 0, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %g must be positive and finite (0: IPOPT's own, 1e20)", HsKey(s, "-hs_ipopt_max_perturbation"),
             (double)tol);
  if (flg)
    PetscCall(HsSolverIpoptSetMaxPerturbation(s, tol == 0 ? (PetscReal)PETSC_DEFAULT : tol));
  PetscCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_ipopt_ordering",
                            "ordering of IPOPT's MUMPS: amd amf scotch pord metis qamd auto",
                            "HsSolverIpoptSetOrdering", orderings, 7, &idx, &flg));
  if (flg)
    PetscCall(HsSolverIpoptSetOrdering(s, orderings[idx]));
  PetscCall(HsOptionsInt(PetscOptionsObject, "-hs_ipopt_print_level", "IPOPT's own output on rank 0 (0..12)",
                         "HsSolverIpoptSetPrintLevel", ip->print_level, &it, &flg, PETSC_MIN_INT, PETSC_MAX_INT));
  if (flg)
    PetscCall(HsSolverIpoptSetPrintLevel(s, it));
  idx = ip->deriv_test;
  PetscCall(HsOptionsChoice(PetscOptionsObject, PetscObjectComm((PetscObject)s), "-hs_ipopt_derivative_test",
                            "IPOPT's derivative checker at the start: none first-order second-order",
                            "HsSolverIpoptSetDerivativeTest", deriv_tests, 3, &idx, &flg));
  if (flg)
    PetscCall(HsSolverIpoptSetDerivativeTest(s, deriv_tests[idx]));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

/* One line per IPOPT iteration with -hs_monitor (rank 0); records the last infeasibilities. */
static Bool Intermediate(Index alg_mod, Index iter, Number obj, Number inf_pr, Number inf_du, Number mu, Number d_norm,
                         Number reg, Number alpha_du, Number alpha_pr, Index ls, UserDataPtr ctx)
{
  HsIpopt *ip = ctx;
  (void)alg_mod, (void)d_norm, (void)alpha_du, (void)alpha_pr, (void)ls;

  ip->iterations = iter, ip->inf_pr = inf_pr, ip->inf_du = inf_du, ip->reg = reg;
  if (ip->monitor)
    printf("  IPOPT %3d  J %.10g  inf_pr %.2e  inf_du %.2e  mu %.1e  %.2f s\n", (int)iter, obj, inf_pr, inf_du, mu,
           MPI_Wtime() - ip->t_start);
  if (ip->deadline > 0 && MPI_Wtime() >= ip->deadline) /* -hs_strategy_time spent: User_Requested_Stop as well */
    return FALSE;
  return HsInterruptPending() ? FALSE : TRUE; /* SIGTERM/SIGINT: IPOPT ends with User_Requested_Stop */
}

/* Bounds: x_N's fixed components equal x_T (IPOPT removes them), the controls' bounds if the problem
 * has them; everything else free (IPOPT's infinity is 1e19). The start: the guess rows, u = R^{-1} G^T
 * lambda projected into the bounds. */
static void BoundsAndStart(HsSolver s, HsIpopt *ip, const PetscScalar *rows, double *z, double *zl, double *zu)
{
  const HsProblem *P   = s->prob;
  int              dim = ip->dim, m = ip->m, w = 2 * dim;

  for (int k = 0; k < ip->N; k++) {
    double *u = z + (size_t)k * ip->nb, *ul = zl + (size_t)k * ip->nb, *uu = zu + (size_t)k * ip->nb;
    if (HsDiscControl(s->disc, rows + (size_t)k * w, rows + (size_t)(k + 1) * w, rows + (size_t)k * w + dim, u))
      memset(u, 0, sizeof(double) * (size_t)m); /* B(q) not finite at the guess: IPOPT reports it */
    for (int j = 0; j < m; j++) {
      ul[j] = P->u_min ? P->u_min[j] : -1e19, uu[j] = P->u_max ? P->u_max[j] : 1e19;
      u[j] = PetscMin(PetscMax(u[j], ul[j]), uu[j]);
    }
    for (int i = 0; i < dim; i++) {
      int last               = k == ip->N - 1 && P->xT_fixed[i] && !P->xT_T; /* a moving target: a constraint */
      z[k * ip->nb + m + i]  = last ? P->xT[i] : rows[(size_t)(k + 1) * w + i];
      zl[k * ip->nb + m + i] = last ? P->xT[i] : -1e19;
      zu[k * ip->nb + m + i] = last ? P->xT[i] : 1e19;
    }
  }
  if (ip->ft) {                                     /* a free final time: its guess, within [T_min, T_max] */
    z[ip->nv - 1]  = rows[(size_t)ip->N * w + dim]; /* T's slot: the start, or the last solution */
    zl[ip->nv - 1] = P->T_min, zu[ip->nv - 1] = PetscIsInfReal(P->T_max) ? 1e19 : P->T_max;
  }
}

/* One IPOPT solve of the NLP from z within [zl, zu] (rank 0): z and the multipliers y are replaced by
 * IPOPT's last iterate. */
static PetscErrorCode SolveNlp(HsIpopt *ip, int nv, int nc, double *z, double *zl, double *zu, double *gl, double *y,
                               double h, int *status)
{
  IpoptProblem nlp;
  double       obj;

  PetscFunctionBeginUser;
  PetscCall(PetscArrayzero(gl, nc));
  if (ip->cons) /* a constrained system's NLP (ipoptcons.c) */
    nlp = ipopt_lib.Create(nv, zl, zu, nc, gl, gl, HsIpoptNlpNumJac(ip), HsIpoptNlpNumHess(ip), 0, HsIpoptConsEvalF,
                           HsIpoptConsEvalG, HsIpoptConsEvalGradF, HsIpoptConsEvalJacG, HsIpoptConsEvalH);
  else
    nlp = ipopt_lib.Create(nv, zl, zu, nc, gl, gl, HsIpoptNlpNumJac(ip), HsIpoptNlpNumHess(ip), 0, HsIpoptEvalF,
                           HsIpoptEvalG, HsIpoptEvalGradF, HsIpoptEvalJacG, HsIpoptEvalH);
  PetscCheck(nlp, PETSC_COMM_SELF, PETSC_ERR_LIB, "IPOPT could not create the NLP (%d variables)", nv);
  ipopt_lib.StrOption(nlp, "sb", "yes");
  /* no options file: IPOPT would read ./ipopt.opt from the working directory, whose values override these (a
     planted 'output_file victim' overwrote any file, 'tol 0.99' made a bad answer "converged"; docs/reliability.md) */
  ipopt_lib.StrOption(nlp, "option_file_name", "");
  ipopt_lib.IntOption(nlp, "print_level", (Int)ip->print_level);
  ipopt_lib.NumOption(nlp, "tol", ip->tol);
  ipopt_lib.IntOption(nlp, "max_iter", (Int)ip->max_it);
  ipopt_lib.IntOption(nlp, "mumps_pivot_order", ordering_codes[ip->ordering]);
  if (ip->max_pert > 0) /* HsSolverIpoptSetMaxPerturbation */
    ipopt_lib.NumOption(nlp, "max_hessian_perturbation", ip->max_pert);
  if (ip->deriv_test) /* HsSolverIpoptSetDerivativeTest */
    ipopt_lib.StrOption(nlp, "derivative_test", (char *)deriv_tests[ip->deriv_test]); /* 3.11 takes char * */
  ipopt_lib.StrOption(nlp, "nlp_scaling_method", "user-scaling");
  /* at the noise floor of the dual infeasibility (costates of 1e5: the crane) IPOPT would spend 15
   * iterations before its acceptable-level exit; the caller checks the kkt residual then */
  ipopt_lib.IntOption(nlp, "acceptable_iter", 5);
  /* bounded controls: IPOPT relaxes the bounds by bound_relax_factor (default 1e-8) and at the end projects u back onto
     the original ones, which left the state equations violated by h G (u_relaxed - u) (1.5e-9 on the bounded
     swing-up at N = 100): no relaxation. (The constrained NLP's bounds are its own.) */
  if (!ip->cons)
    ipopt_lib.NumOption(nlp, "bound_relax_factor", 0);
  for (int i = 0; i < nc; i++) /* constraint scaling (the bounds were copied at creation): the interval equations */
    gl[i] = i < ip->N * ip->dim ? 1 / h : 1; /* 1/h, the others (targets, Phi(q_k), a constrained end) 1 */
  ipopt_lib.Scaling(nlp, 1 / h, NULL, gl);
  ipopt_lib.Intermediate(nlp, Intermediate);
  *status = (int)ipopt_lib.Solve(nlp, z, NULL, &obj, y, NULL, NULL, ip);
  ipopt_lib.Free(nlp);
  PetscFunctionReturn(0);
}

/* IPOPT on rank 0: rows (node layout, the start) are replaced by the solution (x_k, lambda_{k+1/2} =
 * multiplier of c_k); the controls go to s->U0. Returns IPOPT's status. A free final time from a
 * start with lambda = 0 (u = 0 and p = 0: nothing depends on T to first order, and the objective
 * alone drives T to 0) is first held at its guess (its bounds equal; IPOPT makes it a parameter), then
 * released from that solution (docs/free-final-time.md). */
static PetscErrorCode RunIpopt(HsSolver s, HsIpopt *ip, PetscScalar *rows, PetscBool hold, int *status)
{
  int      dim = 2 * s->prob->n, w = 2 * dim, nv, nc;
  double  *z, *zl, *zu, *gl, *y, h = HsDiscGetStep(s->disc);
  PetscInt held = 0;

  PetscFunctionBeginUser;
  PetscCall(HsIpoptNlpSetUp(ip, s->prob, s->disc, (int)s->N, s->prob->x0));
  nv = ip->nv, nc = ip->N * dim + ip->mt;
  PetscCall(PetscMalloc5(nv, &z, nv, &zl, nv, &zu, nc, &gl, nc, &y));
  BoundsAndStart(s, ip, rows, z, zl, zu);
  ip->iterations = 0, ip->inf_pr = ip->inf_du = NAN, ip->t_start = MPI_Wtime();
  if (ip->ft && hold) { /* a cold start (HsSolverSolve): T held first */
    double lo = zl[nv - 1], hi = zu[nv - 1];
    zl[nv - 1] = zu[nv - 1] = z[nv - 1];
    PetscCall(SolveNlp(ip, nv, nc, z, zl, zu, gl, y, h, status));
    zl[nv - 1] = lo, zu[nv - 1] = hi, held = ip->iterations;
    ip->iterations = 0;
  }
  PetscCall(SolveNlp(ip, nv, nc, z, zl, zu, gl, y, h, status));
  ip->iterations += held;
  ip->wall_ipopt = MPI_Wtime() - ip->t_start;
  PetscCall(PetscFree(s->U0));
  PetscCall(PetscMalloc1(ip->N * ip->m, &s->U0));
  for (int k = 0; k < ip->N; k++) {
    PetscCall(PetscArraycpy(s->U0 + k * ip->m, z + (size_t)k * ip->nb, ip->m));
    PetscCall(PetscArraycpy(rows + (size_t)(k + 1) * w, z + (size_t)k * ip->nb + ip->m, dim));
    PetscCall(PetscArraycpy(rows + (size_t)k * w + dim, y + (size_t)k * dim, dim));
  }
  if (ip->ft && s->prob->x0_T) { /* x0 at the returned T (the last callback may have been elsewhere) */
    HsProblemSetFinalTime(s->prob, z[nv - 1]);
    PetscCall(PetscArraycpy(ip->x0, s->prob->x0, dim));
  }
  PetscCall(PetscArraycpy(rows, ip->x0, dim)); /* x0 at the solution's T (T in x0) */
  PetscCall(PetscArrayzero(rows + (size_t)ip->N * w + dim, dim));
  if (ip->ft) /* the slot of a free T in the transcription's layout */
    rows[(size_t)ip->N * w + dim] = z[nv - 1];
  PetscCall(PetscFree5(z, zl, zu, gl, y));
  HsIpoptNlpReset(ip);
  PetscFunctionReturn(0);
}

/* IPOPT on rank 0 for a constrained system (ipoptcons.c): rows (the constrained transcription's points, the start)
 * are replaced by the solution in the KKT form's layout; the controls go to s->U0. Returns IPOPT's status. */
static PetscErrorCode RunIpoptCons(HsSolver s, HsIpopt *ip, PetscScalar *rows, int *status)
{
  HsConstrained *cd = s->data;
  double        *z, *zl, *zu, *gl, *y, h = HsDiscGetStep(s->disc);
  int            nv, nc;

  PetscFunctionBeginUser;
  PetscCall(HsIpoptConsNlpSetUp(ip, s->prob, cd->cons, (int)s->N, h, s->prob->x0));
  nv = ip->nv, nc = (int)HsIpoptConsNumConstraints(ip);
  PetscCall(PetscMalloc5(nv, &z, nv, &zl, nv, &zu, nc, &gl, nc, &y));
  HsIpoptConsStart(ip, rows, z, zl, zu);
  ip->iterations = 0, ip->inf_pr = ip->inf_du = NAN, ip->t_start = MPI_Wtime();
  PetscCall(SolveNlp(ip, nv, nc, z, zl, zu, gl, y, h, status));
  ip->wall_ipopt = MPI_Wtime() - ip->t_start;
  PetscCall(PetscFree(s->U0));
  PetscCall(PetscMalloc1(ip->N * ip->m, &s->U0));
  HsIpoptConsSolution(ip, z, y, rows, s->U0);
  PetscCall(PetscFree5(z, zl, zu, gl, y));
  HsIpoptNlpReset(ip);
  ip->cons = NULL;
  PetscFunctionReturn(0);
}

/* Newton's round-off level (solversolve.c) for the kkt residual at X: c eps max(1, |X|_inf) sqrt(n). */
static PetscErrorCode RoundoffLevel(HsSolver s, PetscReal *level)
{
  PetscReal xinf;
  PetscInt  n;

  PetscFunctionBeginUser;
  PetscCall(VecNorm(s->X, NORM_INFINITY, &xinf));
  PetscCall(VecGetSize(s->X, &n));
  *level = s->roundoff * PETSC_MACHINE_EPSILON * PetscMax(1, xinf) * PetscSqrtReal((PetscReal)n);
  PetscFunctionReturn(0);
}

/* Bounded controls (rank 0, after RunIpopt; rows in the node layout, the controls in s->U0): the residual of the
 * bounded problem's necessary conditions, which the kkt residual (u = R^{-1} G^T lambda) is not where a bound is
 * active. Its 2-norm over the state equations with IPOPT's u, the costate equations and the terminal rows (for a
 * constant B they do not involve u) and the control condition in its natural form u - P(u - D^{-1} (R u - G^T
 * lambda)), P the projection onto the box, D = diag(R): zero exactly where u minimizes the Hamiltonian over the
 * box. *res = -1 if it does not apply (a B(q), a free T). */
static PetscErrorCode BoundedKktResidual(HsSolver s, const PetscScalar *rows, PetscReal *res)
{
  const HsProblem *P = s->prob;
  HsDisc          *d = s->disc;
  int              n = P->n, m = P->m, dim = 2 * n, w = 2 * dim, N = (int)s->N, st = 0;
  double          *f, *uf, sum = 0;

  PetscFunctionBeginUser;
  *res = -1;
  if (P->Bq || P->free_T || !s->U0)
    PetscFunctionReturn(0);
  PetscCall(PetscMalloc2(dim, &f, m, &uf));
  for (int k = 0; k < N && !st; k++) {
    const double *xk = rows + (size_t)k * w, *xk1 = xk + w, *u = s->U0 + (size_t)k * m;
    st = HsDiscStateResidualU(d, xk, xk1, u, f) || HsDiscControl(d, xk, xk1, xk + dim, uf);
    for (int i = 0; i < dim && !st; i++)
      sum += f[i] * f[i];
    for (int j = 0; j < m && !st; j++) { /* g_j = (R (u - u_free))_j, the control condition's natural residual */
      double g = 0, v, lo = P->u_min ? P->u_min[j] : -PETSC_MAX_REAL, hi = P->u_max ? P->u_max[j] : PETSC_MAX_REAL;
      for (int l = 0; l < m; l++)
        g += P->R[j * m + l] * (u[l] - uf[l]);
      v = PetscMin(hi, PetscMax(lo, u[j] - g / P->R[j * m + j]));
      sum += (u[j] - v) * (u[j] - v);
    }
    if (k > 0 && !st) {
      st = HsDiscCostateResidual(d, k, xk - w, xk, xk1, xk - w + dim, xk + dim, f);
      for (int i = 0; i < dim && !st; i++)
        sum += f[i] * f[i];
    }
  }
  if (!st) { /* the terminal rows: fixed components, the transversality condition of the free ones */
    const double *xm = rows + (size_t)(N - 1) * w, *xN = xm + w;
    st = HsDiscTerminalResidual(d, xm, xN, xm + dim, f);
    for (int i = 0; i < dim && !st; i++) {
      double r = P->xT_fixed[i] ? xN[i] - P->xT[i] : f[i];
      sum += r * r;
    }
  }
  PetscCall(PetscFree2(f, uf));
  *res = st ? PETSC_INFINITY : PetscSqrtReal(sum);
  PetscFunctionReturn(0);
}

/* The end of Solve: a looser -hs_ipopt_tol's result demoted to CONVERGED_TO_TOLERANCE_ONLY, and the diagnosis (info:
 * Solve's; bkkt: BoundedKktResidual's, -1 where it does not apply; level: the kkt residual's round-off level). */
static PetscErrorCode Verdict(HsSolver s, HsIpopt *ip, const double info[], PetscReal bkkt, PetscReal level)
{
  PetscFunctionBeginUser;
  s->res.vouch_level = HS_VOUCH_FACTOR * PetscMax(HS_IPOPT_TOL_DEFAULT, level);
  if (s->res.converged && ip->tol > HS_IPOPT_TOL_DEFAULT && s->res.residual_norm > s->res.vouch_level) {
    /* "converged" means converged (bvp/interface/convergence.c): a -hs_ipopt_tol looser than the default met, the
       residual above what the default asks for */
    s->res.converged = PETSC_FALSE, s->res.tolerance_only = PETSC_TRUE;
    PetscCall(PetscStrncpy(s->res.status, "CONVERGED_TO_TOLERANCE_ONLY", sizeof s->res.status));
    PetscCall(HsSolverSetDiagnosis(
        s, PETSC_TRUE,
        "converged to the requested tolerance only: IPOPT met -hs_ipopt_tol %g at |F| = %.3e, "
        "%.3g times the %.3e this solve can vouch for; leave -hs_ipopt_tol at its default %g",
        (double)ip->tol, (double)s->res.residual_norm, (double)(s->res.residual_norm / s->res.vouch_level),
        (double)s->res.vouch_level, (double)HS_IPOPT_TOL_DEFAULT));
  } else if (s->prob->free_T &&
             (s->prob->T <= s->prob->T_min * (1 + 1e-8) || s->prob->T >= s->prob->T_max * (1 - 1e-8)))
    PetscCall(
        HsSolverSetDiagnosis(s, PETSC_TRUE,
                             "the final time T = %g is at its bound (T_min, T_max = %g, %g): the NLP's optimum has "
                             "an active bound on T, so the condition (1/N) sum H^d = dphi/dT does not hold (|F|)",
                             (double)s->prob->T, (double)s->prob->T_min, (double)s->prob->T_max));
  else if (s->res.converged && (int)info[1] == Solved_To_Acceptable_Level && bkkt >= 0)
    PetscCall(
        HsSolverSetDiagnosis(s, PETSC_TRUE,
                             "IPOPT stopped at its acceptable level (NLP error %.3e; an interior point resolves a "
                             "control's switch at a bound only to about sqrt(mu)), but the bounded problem's kkt "
                             "residual %.3e is below %g max(1, |X|)",
                             info[3], (double)bkkt, HS_IPOPT_BOUNDED_KKT_RTOL));
  else if (s->res.converged && (int)info[1] == Solved_To_Acceptable_Level)
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE,
                                   "IPOPT stopped at its acceptable level (its dual infeasibility %.3e did not reach "
                                   "-hs_ipopt_tol), but the kkt residual %.3e is at round-off (<= %.3e)",
                                   info[3], (double)s->res.residual_norm, (double)level));
  else if ((int)info[1] != Solve_Succeeded)
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "IPOPT stopped with %s after %d iterations (NLP error %.3e)",
                                   s->res.status, (int)info[2], info[3]));
  PetscFunctionReturn(0);
}

/* The solve: gather the start on rank 0, IPOPT there, the solution back into X, and the
 * transcription's kkt residual at it. */
static PetscErrorCode Solve(HsSolver s)
{
  HsIpopt    *ip = IpoptOf(s);
  Vec         X0;
  VecScatter  sc;
  PetscMPIInt rank;
  MPI_Comm    comm     = PetscObjectComm((PetscObject)s);
  char        msg[256] = "";
  double      info[6]  = {0};
  PetscReal   level = 0, bkkt = -1, xinf;
  PetscBool   hold = s->hold_T; /* a free T from a cold start: RunIpopt holds it first */

  PetscFunctionBeginUser;
  s->hold_T = PETSC_FALSE; /* the kkt residual below has T free */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecScatterCreateToZero(s->X, &sc, &X0));
  PetscCall(VecScatterBegin(sc, s->X, X0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, s->X, X0, INSERT_VALUES, SCATTER_FORWARD));
  if (rank == 0) {
    if (LoadIpopt(msg, sizeof msg))
      info[0] = 1;
    else {
      PetscScalar *rows;
      int          st = Internal_Error;
      ip->monitor = s->monitor, ip->deadline = s->deadline;
      PetscCall(VecGetArray(X0, &rows));
      if (s->prob->nc)
        PetscCall(RunIpoptCons(s, ip, rows, &st));
      else
        PetscCall(RunIpopt(s, ip, rows, hold, &st));
      if (!s->prob->nc && (s->prob->u_min || s->prob->u_max))
        PetscCall(BoundedKktResidual(s, rows, &bkkt));
      PetscCall(VecRestoreArray(X0, &rows));
      info[1] = st, info[2] = (double)ip->iterations, info[3] = PetscMax(ip->inf_pr, ip->inf_du),
      info[4] = ip->wall_ipopt;
      info[5] = ip->iterations > 0 ? ip->reg : -1;
    }
  }
  PetscCallMPI(MPI_Bcast(info, 6, MPI_DOUBLE, 0, comm));
  PetscCallMPI(MPI_Bcast(&bkkt, 1, MPIU_REAL, 0, comm));
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm));
  if (info[0] != 0) { /* IPOPT could not be loaded: the gather freed first (issue 38, round 21: it leaked) */
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(VecDestroy(&X0));
    SETERRQ(comm, PETSC_ERR_LIB, "%s", msg);
  }
  PetscCall(VecScatterBegin(sc, X0, s->X, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(sc, X0, s->X, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&X0));
  ip->wall_ipopt           = info[4];
  s->res.regularization    = info[5];
  s->res.newton_iterations = (PetscInt)info[2];
  s->res.ksp_iterations    = 0;
  s->res.reason            = SNES_CONVERGED_ITERATING; /* not Newton's */
  PetscCall(PetscStrncpy(s->res.status, StatusName((int)info[1]), sizeof s->res.status));
  PetscCall(SNESComputeFunction(s->snes, s->X, s->F));
  PetscCall(VecNorm(s->F, NORM_2, &s->res.residual_norm));
  if (s->prob->u_min || s->prob->u_max) /* u at a bound is not R^{-1} G^T lambda: the kkt residual does not apply; the
                                          bounded problem's (BoundedKktResidual) where it can be formed, else IPOPT's */
    s->res.residual_norm = bkkt >= 0 ? bkkt : info[3];
  PetscCall(RoundoffLevel(s, &level));
  PetscCall(VecNorm(s->X, NORM_INFINITY, &xinf));
  if ((int)info[1] == User_Requested_Stop) { /* a signal (Intermediate): the run ends as interrupted */
    PetscBool req;
    PetscCall(HsSolverInterruptRequested(s, &req));
    if (req) { /* nothing of the stop to resume: status 5 for a solver that would write checkpoints (not a sub-solve's
                  IPOPT, ckpt_dir ""), as for every stop without one (issue 38, round 27: it was 3, which promises a
                  batch script that resubmits with -hs_restart a checkpoint of the stop) */
      s->interrupted = PETSC_TRUE;
      PetscCall(HsSolverMarkUnsaved(s));
      PetscCall(PetscSNPrintf(s->interrupt_msg, sizeof s->interrupt_msg,
                              "signal received; IPOPT stopped after %d iterations (no checkpoint: an IPOPT iterate is "
                              "not resumable)",
                              (int)info[2]));
    }
  }
  s->res.converged = (PetscBool)(!PetscIsInfOrNanReal(s->res.residual_norm) &&
                                 ((int)info[1] == Solve_Succeeded ||
                                  ((int)info[1] == Solved_To_Acceptable_Level && !s->prob->u_min && !s->prob->u_max &&
                                   s->res.residual_norm <= level) ||
                                  ((int)info[1] == Solved_To_Acceptable_Level && bkkt >= 0 &&
                                   bkkt <= HS_IPOPT_BOUNDED_KKT_RTOL * PetscMax(1, xinf))));
  if (s->res.converged && (int)info[1] == Solved_To_Acceptable_Level &&
      bkkt < 0) { /* the global level, and every row at its own
(one unknown far larger than the others raises the global level of every equation: the ninth review) */
    PetscBool rows;
    PetscCall(HsSolverRowwiseRoundoff(s, s->X, s->F, &rows));
    s->res.converged = rows;
  }
  PetscCall(Verdict(s, ip, info, bkkt, level));
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len);
static PetscErrorCode View(HsSolver s, PetscViewer viewer);
static PetscErrorCode WriteSummary(HsSolver s, FILE *f);

/* A constrained system of the closed-form class: the constrained transcription takes over (its residual, the KKT
 * form of constrained_kkt, checks IPOPT's solution; its guess, diagnostics and output), with data that carries
 * IPOPT's settings along (HsIpoptCons) and IPOPT as the solver. */
static PetscErrorCode SetUpConstrained(HsSolver s)
{
  HsIpopt      keep = *(HsIpopt *)s->data; /* the settings (no NLP is set up before a solve) */
  HsIpoptCons *ic;
  MPI_Comm     comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCheck(!s->prob->cons_extended || s->prob->cons_ext_bq, comm, PETSC_ERR_SUP,
             "problem '%s' lies outside the exact class of constrained systems (%s): the direct NLP that IPOPT solves "
             "(-hs_bvp_type ipopt) is the direct BEM transcription of the closed-form class and of the extended class "
             "through B(q) alone (docs/direct.md)",
             s->prob->name, s->prob->cons_extended);
  for (PetscInt i = 0; i < 2 * s->prob->n; i++) /* the extended class's rest end: free coordinates, momenta fixed */
    PetscCheck(
        (s->prob->xT_fixed[i] || (s->prob->cons_extended && i < s->prob->n)) && !s->prob->phi.f, comm, PETSC_ERR_SUP,
        "problem '%s': the direct NLP of a constrained system that IPOPT solves fixes every terminal component "
        "and has no terminal cost; free end states and terminal costs are solved by Newton on its KKT conditions "
        "(-hs_scheme direct, docs/constrained.md)",
        s->prob->name);
  PetscCheck(!strcmp(s->ss, "bem") && !strcmp(s->cs, "constrained_kkt"), comm, PETSC_ERR_ARG_INCOMP,
             "the direct NLP of a constrained system (IPOPT) has the costates of its KKT conditions: schemes bem + "
             "constrained_kkt, not %s + %s",
             s->ss, s->cs);
  PetscCall(HsConstrainedSetUp(s, sizeof(HsIpoptCons)));
  ic                   = s->data;
  ic->ip               = keep;
  ic->destroy          = s->ops->destroy;
  ic->view             = s->ops->view;
  ic->writesummary     = s->ops->writesummary;
  s->ops->destroy      = DestroyConstrained;
  s->ops->describe     = Describe;
  s->ops->view         = View;
  s->ops->writesummary = WriteSummary;
  PetscFunctionReturn(0);
}

/* The transcription's set-up (its residual checks IPOPT's solution) after checking the schemes: the
 * NLP's multipliers satisfy the kkt costate equations of its state scheme and nothing else. */
static PetscErrorCode SetUp(HsSolver s)
{
  HsIpopt  *ip = s->data;
  PetscBool kkt, trap, mid;

  PetscFunctionBeginUser;
  if (s->prob->nc) {
    PetscCall(SetUpConstrained(s));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscStrcmp(s->cs, "kkt", &kkt));
  PetscCall(PetscStrcmp(s->cs, "trapezoidal", &trap));
  PetscCall(PetscStrcmp(s->ss, "midpoint", &mid));
  PetscCheck(kkt || (trap && mid), PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_INCOMP,
             "the direct NLP (IPOPT) has the costates of its KKT conditions: costate scheme kkt (or trapezoidal with "
             "midpoint states), not %s + %s",
             s->ss, s->cs);
  PetscCall((*ip->trsetup)(s));
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  HsIpopt *ip = IpoptOf(s);
  int      c  = s->prob->nc;

  PetscFunctionBeginUser;
  if (c)
    PetscCall(PetscSNPrintf(buf, len,
                            "direct NLP by IPOPT (exact Hessian, MUMPS %s ordering), %d holonomic constraint%s",
                            orderings[ip->ordering], c, c > 1 ? "s" : ""));
  else
    PetscCall(
        PetscSNPrintf(buf, len, "direct NLP by IPOPT (exact Hessian, MUMPS %s ordering)", orderings[ip->ordering]));
  PetscFunctionReturn(0);
}

static PetscErrorCode View(HsSolver s, PetscViewer viewer)
{
  HsIpopt *ip = IpoptOf(s);

  PetscFunctionBeginUser;
  if (s->ops->destroy == DestroyConstrained) /* the constraints' line */
    PetscCall((*((HsIpoptCons *)s->data)->view)(s, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  IPOPT time         %.3f s   (inside IpoptSolve, rank 0)\n",
                                   (double)ip->wall_ipopt));
  if ((s->prob->u_min || s->prob->u_max) && !s->prob->nc && !s->prob->Bq && !s->prob->free_T)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  |F| above          the bounded problem's kkt residual at IPOPT's solution "
                                     "(state equations at its u, costate equations, u's projection condition)\n"));
  else if (s->prob->u_min || s->prob->u_max)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  |F| above          IPOPT's final NLP error (bounded controls: the kkt "
                                             "residual does not apply)\n"));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  |F| above          the kkt residual at IPOPT's solution, costates = its "
                                     "multipliers\n"));
  PetscFunctionReturn(0);
}

static PetscErrorCode WriteSummary(HsSolver s, FILE *f)
{
  HsIpopt *ip = IpoptOf(s);

  PetscFunctionBeginUser;
  if (s->ops->destroy == DestroyConstrained) /* "constraints": {...} */
    PetscCall((*((HsIpoptCons *)s->data)->writesummary)(s, f));
  fprintf(f, "  \"ipopt_time_s\": %.6g,\n", (double)ip->wall_ipopt);
  fprintf(f, "  \"ipopt_ordering\": \"%s\",\n", orderings[ip->ordering]);
  PetscFunctionReturn(0);
}

static PetscErrorCode Destroy(HsSolver s)
{
  PetscFunctionBeginUser;
  HsIpoptNlpReset(s->data);
  PetscCall(HsTranscriptionDestroy(s));
  PetscFunctionReturn(0);
}

/* A constrained system's (SetUpConstrained): the NLP, then the constrained transcription's data (s->data with it). */
static PetscErrorCode DestroyConstrained(HsSolver s)
{
  HsIpoptCons *ic = s->data;

  PetscFunctionBeginUser;
  HsIpoptNlpReset(&ic->ip);
  PetscCall((*ic->destroy)(s));
  PetscFunctionReturn(0);
}

/*@ HsSolverCreate_Ipopt - the direct transcription NLP solved by IPOPT (HSSOLVERIPOPT): the transcription's
    unknowns and residual, IPOPT instead of Newton (on rank 0), its multipliers as the costates.
    Keys: -hs_ipopt_tol, -hs_ipopt_max_it, -hs_ipopt_ordering, -hs_ipopt_print_level, -hs_ipopt_derivative_test.

  Collective; called by HsSolverSetType().
@*/
PetscErrorCode HsSolverCreate_Ipopt(HsSolver s)
{
  HsIpopt *ip;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&ip));
  s->data = ip;
  PetscCall(HsTranscriptionSetOps(s));
  ip->trsetup = s->ops->setup;
  ip->tol     = HS_IPOPT_TOL_DEFAULT;
  ip->max_it  = HS_IPOPT_MAX_IT_DEFAULT;
  for (int i = 0; i < 7; i++)
    if (!strcmp(orderings[i], HS_IPOPT_ORDERING_DEFAULT))
      ip->ordering = i;
  s->ops->setup          = SetUp;
  s->ops->setfromoptions = SetFromOptions;
  s->ops->solve          = Solve;
  s->ops->describe       = Describe;
  s->ops->view           = View;
  s->ops->writesummary   = WriteSummary;
  s->ops->destroy        = Destroy;
  PetscFunctionReturn(0);
}
