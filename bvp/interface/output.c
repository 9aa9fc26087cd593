/* hamshoot: summary.json and trajectory.csv (docs/theory.md section 5).
 *
 * Rank 0 writes each file to a temporary name in the output directory and
 * renames it into place only when it is complete, so that a crash or an
 * interrupted run never leaves a half-written file. */
#include "hsbvpimpl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* JSON number: finite values with 17 significant digits, otherwise null. */
static void JsonNum(FILE *f, const char *key, double v, int last)
{
  if (isfinite(v))
    fprintf(f, "  \"%s\": %.17g%s\n", key, v, last ? "" : ",");
  else
    fprintf(f, "  \"%s\": null%s\n", key, last ? "" : ",");
}

/* An observed order as a member of an object on one line: null, and KEY_at_roundoff true, when its differences are
   at round-off (docs/accuracy.md). */
static void OrderMember(FILE *f, const char *key, double p, PetscBool roundoff)
{
  if (roundoff)
    fprintf(f, "\"%s\": null, \"%s_at_roundoff\": true,", key, key);
  else
    fprintf(f, "\"%s\": %.6g, \"%s_at_roundoff\": false,", key, p, key);
}

/* JSON string member (JsonString). */
static void JsonStr(FILE *f, const char *key, const char *v)
{
  fprintf(f, "  \"%s\": ", key);
  HsJsonString(f, v);
  fprintf(f, ",\n");
}

/* "strategy": the attempts of the solve strategy (bvp/drivers/strategy.c) and the one that converged (null: none). */
static void JsonStrategy(FILE *f, const HsResults *r)
{
  const HsAttempt *used =
      r->nattempts && r->attempts[r->nattempts - 1].converged ? &r->attempts[r->nattempts - 1] : NULL;

  fprintf(f, "  \"strategy\": {\"used\": ");
  if (used)
    HsJsonString(f, used->name);
  else
    fprintf(f, "null");
  fprintf(f, ", \"attempts\": [");
  for (PetscInt k = 0; k < r->nattempts; k++) {
    const HsAttempt *a = &r->attempts[k];
    fprintf(f, "%s{\"name\": ", k ? ", " : "");
    HsJsonString(f, a->name);
    fprintf(f, ", \"status\": ");
    HsJsonString(f, a->status);
    fprintf(f, ", \"converged\": %s, \"newton_iterations\": %d, \"seconds\": %.3f", a->converged ? "true" : "false",
            (int)a->newton_iterations, (double)a->seconds);
    if (a->reached[0]) { /* a bounded loop's furthest point */
      fprintf(f, ", \"reached\": ");
      HsJsonString(f, a->reached);
    }
    fprintf(f, "}");
  }
  fprintf(f, "]},\n");
}

/* A number, or null when not finite (JSON has no NaN). */
static void JsonFinite(FILE *f, PetscReal x)
{
  if (PetscIsInfOrNanReal(x))
    fprintf(f, "null");
  else
    fprintf(f, "%.17g", (double)x);
}

/* The rest of "extremal_check": the wider search's starts (bvp/drivers/extremal.c), the lowest, the counterpart at N/2.
 */
static void JsonExtremalStarts(FILE *f, const HsExtremal *e)
{
  static const char *names[] = HS_EXTREMAL_START_NAMES;

  fprintf(f, "    \"starts_tried\": %d, \"starts\": [", (int)e->starts);
  for (PetscInt i = 0; i < e->starts; i++) {
    fprintf(f, "%s{\"start\": \"%s\", \"converged\": %s, \"J\": ", i ? ", " : "", names[i],
            e->start_converged[i] ? "true" : "false");
    JsonFinite(f, e->J_start[i]);
    fprintf(f, ", \"iterations\": %d}", (int)e->it_start[i]);
  }
  fprintf(f, "], \"lowest_start\": ");
  if (e->lowest >= 0) {
    fprintf(f, "\"%s\", \"J_lowest\": ", names[e->lowest]);
    JsonFinite(f, e->J_start[e->lowest]);
  } else
    fprintf(f, "null, \"J_lowest\": null");
  if (e->N_coarse) {
    fprintf(f, ",\n    \"counterpart\": {\"N\": %d, \"converged\": %s, \"J\": ", (int)e->N_coarse,
            e->coarse_converged ? "true" : "false");
    JsonFinite(f, e->J_coarse);
    fprintf(f, ", \"distance\": ");
    JsonFinite(f, e->coarse_distance);
    fprintf(f, "}");
  } else
    fprintf(f, ",\n    \"counterpart\": null");
  fprintf(f, ", \"spurious\": %s, \"wall_time_s\": %.6g},\n", e->spurious ? "true" : "false", (double)e->wall_time_s);
}

/* "parameters": every parameter of the problem with the value the solve used; "command_line": the
 * arguments the program was started with (PetscGetArgs), one string each. */
static void JsonParamsAndArgs(FILE *f, const HsProblem *P)
{
  int    argc = 0;
  char **argv = NULL;

  fprintf(f, "  \"parameters\": {");
  for (int i = 0; i < P->nparams; i++) {
    fprintf(f, "%s", i ? ", " : "");
    HsJsonString(f, P->params[i].name);
    if (isfinite(*P->params[i].value))
      fprintf(f, ": %.17g", *P->params[i].value);
    else
      fprintf(f, ": null");
  }
  fprintf(f, "},\n  \"command_line\": [");
  if (!PetscGetArgs(&argc, &argv))
    for (int i = 0; i < argc; i++) {
      fprintf(f, "%s", i ? ", " : "");
      HsJsonString(f, argv[i]);
    }
  fprintf(f, "],\n");
}

/* "linear_solver": the Newton solves' KSP + PC (+ factorization package; a PCSHELL by its name: conserving4's
 * "hscondense", bvp/impls/order4cond.c); for a PC that factors with entries dropped, what it keeps (named by its type:
 * "hsdrop"). */
static void JsonLinearSolver(FILE *f, HsSolver s)
{
  KSP           ksp;
  PC            pc;
  KSPType       kt;
  PCType        pt;
  MatSolverType mt = NULL;
  PetscBool     lu = PETSC_FALSE;
  char          name[128];

  if (!SNESGetKSP(s->snes, &ksp) && !KSPGetType(ksp, &kt) && !KSPGetPC(ksp, &pc) && !PCGetType(pc, &pt) && kt && pt) {
    PC          inner; /* a PC that factors with entries dropped: the package of its LU, and what it keeps */
    PetscInt    kept = 0, stored = 0, patterns = 0;
    PetscBool   shell;
    const char *sname = NULL;
    if (!PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &shell) && shell && !PCShellGetName(pc, &sname) && sname)
      pt = sname;
    if (HsPCGetDropped(pc, &inner, &kept, &stored, &patterns) || !inner)
      inner = pc;
    if (!PetscObjectTypeCompare((PetscObject)inner, PCLU, &lu) && lu && PCFactorGetMatSolverType(inner, &mt))
      mt = NULL;
    if (inner != pc && !lu && PCGetType(inner, &mt)) /* not an LU: its type ("gmres+hsdrop(hsslab)") */
      mt = NULL;
    snprintf(name, sizeof name, "%s+%s%s%s%s", kt, pt, mt ? "(" : "", mt ? mt : "", mt ? ")" : "");
    JsonStr(f, "linear_solver", name);
    if (inner != pc && stored) /* named by the PC's type: "hsdrop" */
      fprintf(f,
              "  \"%s\": {\"kept\": %" PetscInt_FMT ", \"stored\": %" PetscInt_FMT ", \"patterns\": %" PetscInt_FMT
              "},\n",
              pt, kept, stored, patterns);
  }
}

/* "invariants": each monitored invariant's min, max and spread over the nodes (docs/output-format.md); none: absent.
 */
static void JsonInvariants(FILE *f, const HsProblem *P, const HsResults *r)
{
  if (!r->ninv)
    return;
  fprintf(f, "  \"invariants\": {");
  for (PetscInt i = 0; i < r->ninv; i++) {
    fprintf(f, "%s", i ? ", " : "");
    HsJsonString(f, P->inv_names[i]);
    fprintf(f, ": {\"min\": ");
    JsonFinite(f, r->inv_min[i]);
    fprintf(f, ", \"max\": ");
    JsonFinite(f, r->inv_max[i]);
    fprintf(f, ", \"spread\": ");
    JsonFinite(f, r->inv_max[i] - r->inv_min[i]);
    fprintf(f, "}");
  }
  fprintf(f, "},\n");
}

/* summary.json's extrapolation member (-hs_extrapolate, -hs_study): its grids, coarsest first; an order at round-off
 * is null (docs/accuracy.md). */
static void JsonExtrapolation(FILE *f, HsSolver s)
{
  const HsExtrap *e = &s->res.extrap;

  if (!e->done)
    return;
  fprintf(f, "  \"extrapolation\": {\"grids\": [");
  for (PetscInt i = 0; i < e->ngrids; i++) /* coarsest first */
    fprintf(f, "%s%d", i ? ", " : "", (int)e->N[i]);
  fprintf(f, "], \"J\": %.17g, \"J_error\": %.17g, ", (double)e->J, (double)e->J_error);
  OrderMember(f, "J_order", e->J_order, e->J_roundoff);
  fprintf(f, " \"H_mean\": %.17g, \"H_mean_error\": %.17g, ", (double)e->H_mean, (double)e->H_mean_error);
  OrderMember(f, "H_mean_order", e->H_mean_order, e->H_mean_roundoff);
  if (s->prob->free_T) {
    fprintf(f, " \"T\": %.17g, \"T_error\": %.17g, ", (double)e->T, (double)e->T_error);
    OrderMember(f, "T_order", e->T_order, e->T_roundoff);
  }
  fprintf(f, " \"romberg\": %s,", e->romberg ? "true" : "false");
  fprintf(f, " \"pre_asymptotic\": %s, \"reliable\": %s, ", e->pre_asymptotic ? "true" : "false",
          e->pre_asymptotic ? "false" : "true");
  fprintf(f, "\"states_error\": %.17g, \"states\": \"extrapolated.csv\", \"wall_time_s\": %.6g},\n",
          (double)e->states_error, (double)e->wall_time_s);
}

/*@ HsSolverWriteSummaryJSON - the summary of the last solve as one JSON object on f (bvp/ internal;
    rank 0, after the diagnostics). Returns nonzero if writing failed. @*/
int HsSolverWriteSummaryJSON(HsSolver s, FILE *f, int size)
{
  HsResults   *r = &s->res;
  HsSolverType type;

  HsSolverGetType(s, &type);
  fprintf(f, "{\n");
  JsonStr(f, "problem", s->prob->name);
  fprintf(f, "  \"N\": %" PetscInt_FMT ",\n", s->N);
  JsonNum(f, "T", s->res.T, 0);
  fprintf(f, "  \"free_T\": %s,\n", s->prob->free_T ? "true" : "false");
  JsonStr(f, "state_scheme", HsSolverStateName(s));
  JsonStr(f, "costate_scheme", HsSolverCostateName(s));
  JsonStr(f, "bvp_type", type);
  fprintf(f, "  \"segments\": %" PetscInt_FMT ",\n", r->segments);
  fprintf(f, "  \"ranks\": %d,\n", size);
  fprintf(f, "  \"converged\": %s,\n", r->converged ? "true" : "false");
  if (s->cont_info[0] && strstr(s->cont_info, "\"reached\": false")) /* a continuation's step, not its answer */
    fprintf(f,
            "  \"intermediate\": true,\n  \"note\": \"%s of a continuation short of its target (see continuation): "
            "not the solution of the problem as posed\",\n",
            r->converged ? "a converged step" : "a step, not converged,"); /* the last step may have failed */
  if (r->tolerance_only) /* SNES met a user's looser tolerance: not converged (HsSolverVerifyConvergence) */
    fprintf(f, "  \"converged_to_tolerance\": true,\n  \"tolerance_factor\": %.3g,\n",
            (double)(r->residual_norm / r->vouch_level));
  if (!s->ops->solve) /* solved by Newton */
    JsonStr(f, "snes_reason", SNESConvergedReasons[r->reason]);
  JsonStr(f, "solver_status", r->status);
  fprintf(f, "  \"newton_iterations\": %" PetscInt_FMT ",\n", r->newton_iterations);
  fprintf(f, "  \"ksp_iterations\": %" PetscInt_FMT ",\n", r->ksp_iterations);
  fprintf(f, "  \"mumps_retries\": %" PetscInt_FMT ",\n", r->mumps_retries);
  if (!s->ops->solve) /* the Newton solves' linear solver: KSP + PC (+ factorization package) */
    JsonLinearSolver(f, s);
  JsonNum(f, "residual_norm", r->residual_norm, 0);
  if (!s->ops->solve) /* Newton: the residual's estimated evaluation error (0: not estimated) */
    JsonNum(f, "noise_floor", r->noise_floor, 0);
  if (!s->ops->solve) /* Newton steps after a stop at the round-off level or the floor (convergence.c) */
    fprintf(f, "  \"polish_iterations\": %" PetscInt_FMT ",\n", r->polish_iterations);
  JsonNum(f, "J", r->J, 0);
  JsonNum(f, "H_mean", r->H_mean, 0);
  JsonNum(f, "H_min", r->H_min, 0);
  JsonNum(f, "H_max", r->H_max, 0);
  JsonNum(f, "H_spread", r->H_spread, 0);
  JsonNum(f, "H_spread_relative", r->H_spread / PetscMax(1, PetscAbsReal(r->H_mean)),
          0); /* the scale of the conservation tests */
  JsonNum(f, "H_balance", r->H_balance, 0);
  JsonNum(f, "energy_work_spread", r->energy_work_spread, 0);
  JsonInvariants(f, s->prob, r);
  HsSolverBoundsJSON(s, f);
  if (r->suspect_intervals) /* intervals that may cross a singularity of the data (diagnostics.c) */
    fprintf(f, "  \"suspect_intervals\": %d,\n  \"first_suspect_interval\": %d,\n", (int)r->suspect_intervals,
            (int)r->first_suspect);
  if (s->ops->writesummary)
    s->ops->writesummary(s, f);
  JsonExtrapolation(f, s);
  JsonStr(f, "initial_guess", r->initial_guess[0] ? r->initial_guess : "default");
  JsonStrategy(f, r);
  if (r->extremal.done && r->extremal.not_made[0]) {
    fprintf(f, "  \"extremal_check\": {\"made\": false, \"why\": ");
    HsJsonString(f, r->extremal.not_made);
    fprintf(f, "},\n");
  } else if (r->extremal.done) {
    const HsExtremal *e = &r->extremal;
    fprintf(f,
            "  \"extremal_check\": {\"made\": true, \"near_converged\": %s, \"J_near\": %.17g, \"distance\": %.6g, "
            "\"regularization\": "
            "%.6g, \"local_minimum\": %s, \"default_converged\": %s, \"J_default\": %.17g, \"lower_elsewhere\": %s, "
            "\"moved_away\": %s, \"descended\": %s, \"perturbed_start\": %s,\n",
            e->near_converged ? "true" : "false", (double)e->J_near, (double)e->distance, (double)e->regularization,
            e->near_converged && !e->moved_away && e->regularization == 0 ? "true" : "false",
            e->default_converged ? "true" : "false", (double)e->J_default, e->lower_elsewhere ? "true" : "false",
            e->moved_away ? "true" : "false", e->descended ? "true" : "false", e->perturbed ? "true" : "false");
    JsonExtremalStarts(f, e);
  }
  if (s->cont_info[0])
    fprintf(f, "  \"continuation\": %s,\n", s->cont_info);
  JsonParamsAndArgs(f, s->prob);
  JsonStr(f, "diagnosis", r->diagnosis);
  fprintf(f, "  \"peak_memory_mb\": {\"max\": %.1f, \"min\": %.1f, \"mean\": %.1f},\n", (double)r->peak_memory_mb[0],
          (double)r->peak_memory_mb[1], (double)r->peak_memory_mb[2]);
  JsonNum(f, "wall_time_s", r->wall_time_s, 1);
  fprintf(f, "}\n");
  return ferror(f);
}

/* Writes ",x" at p ("%.17g" by HsFormatG17: a line's numbers in a buffer of HS_NUMBER_LEN per number, written
   at once, instead of an fprintf per number: bvp/sys/format.c) and returns the end. */
#define HS_NUMBER_LEN 33
static char *Number(char *p, double x)
{
  *p++ = ',';
  return p + HsFormatG17(x, p);
}

/* The multipliers of a constrained system gathered on rank 0 ((nu_k, gamma_{k+1/2}) a node, nc each), or NULL. */
static const PetscScalar *Multipliers(HsSolver s)
{
  const PetscScalar *y = NULL;
  if (s->Xmult0 && VecGetArrayRead(s->Xmult0, &y))
    return NULL;
  return y;
}

static void RestoreMultipliers(HsSolver s, const PetscScalar **y)
{
  if (*y)
    VecRestoreArrayRead(s->Xmult0, y);
  *y = NULL;
}

/* trajectory.csv: the node quantities, one row per node k = 0..N: t_k, the states, E_k - W_k
 * (energy minus discrete work; constant for an energy-consistent state scheme), for a constrained system its
 * node multipliers nu_k (nu1..; 0 at the ends: nu_N is the end condition's alpha, docs/constrained.md), and the
 * problem's monitored invariants (inv_NAME; NaN where an evaluation failed). */
static int WriteTrajectory(HsSolver s, FILE *f, const PetscScalar *x)
{
  const HsProblem   *P   = s->prob;
  PetscInt           dim = 2 * P->n, nc = P->nc, ni = P->invariants ? P->ninv : 0;
  const PetscScalar *y = Multipliers(s);
  char               name[HS_NAME_LEN + 16], *line = malloc(HS_NUMBER_LEN * (size_t)(dim + 2 + nc + ni));
  double             v[HS_MAX_INVARIANTS];

  if (!line)
    return 1;
  fprintf(f, "t");
  for (PetscInt i = 0; i < dim; i++) {
    HsColumnName(s->prob, 0, (int)i, 0, name, sizeof name);
    fprintf(f, ",%s", name);
  }
  fprintf(f, ",E_minus_W");
  for (PetscInt i = 0; y && i < nc; i++)
    fprintf(f, ",nu%" PetscInt_FMT, i + 1);
  for (PetscInt i = 0; i < ni; i++)
    fprintf(f, ",inv_%s", P->inv_names[i]);
  fprintf(f, "\n");
  for (PetscInt k = 0; k <= s->N; k++) {
    char *p = line + HsFormatG17((double)(s->res.T * k / s->N), line);
    for (PetscInt i = 0; i < dim; i++)
      p = Number(p, (double)x[k * 2 * dim + i]);
    p = Number(p, (double)s->EW[k]);
    for (PetscInt i = 0; y && i < nc; i++)
      p = Number(p, (double)y[k * 2 * nc + i]);
    if (ni && P->invariants(x + k * 2 * dim, v, P->ctx))
      for (PetscInt i = 0; i < ni; i++)
        v[i] = NAN;
    for (PetscInt i = 0; i < ni; i++)
      p = Number(p, v[i]);
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), f);
  }
  RestoreMultipliers(s, &y);
  free(line);
  return ferror(f);
}

/* intervals.csv: the interval quantities, one row per interval k = 0..N-1: k, its midpoint time
 * t_{k+1/2} = (k + 1/2) h, the controls u_{k+1/2}, the costates lambda_{k+1/2}, H^d_{k+1/2}, and for a constrained
 * system its constraint forces gamma_{k+1/2} (gamma1..). */
static int WriteIntervals(HsSolver s, FILE *f, const PetscScalar *x)
{
  const HsProblem   *P = s->prob;
  PetscInt           m = P->m, dim = 2 * P->n, nc = P->nc;
  const PetscScalar *y    = Multipliers(s);
  double            *u    = malloc(sizeof(double) * (size_t)m);
  char              *line = malloc(HS_NUMBER_LEN * (size_t)(m + dim + 3 + nc)), name[HS_NAME_LEN + 16];
  int                bad;

  if (!u || !line) {
    free(u), free(line);
    RestoreMultipliers(s, &y);
    return 1;
  }
  fprintf(f, "k,t_mid");
  for (PetscInt i = 0; i < m; i++)
    fprintf(f, ",u%" PetscInt_FMT, i + 1);
  for (PetscInt i = 0; i < dim; i++) {
    HsColumnName(P, 1, (int)i, 0, name, sizeof name);
    fprintf(f, ",%s", name);
  }
  fprintf(f, ",H");
  for (PetscInt i = 0; y && i < nc; i++)
    fprintf(f, ",gamma%" PetscInt_FMT, i + 1);
  fprintf(f, "\n");
  for (PetscInt k = 0; k < s->N; k++) {
    const PetscScalar *xk = x + k * 2 * dim;
    char              *p  = line + snprintf(line, HS_NUMBER_LEN, "%" PetscInt_FMT, k);
    p = Number(p, (double)(s->res.T * (k + (s->scheme == HS_SCHEME_CONSERVING4 ? 0 : 0.5)) / s->N)); /* node costates */
    if (s->U0) /* the formulation's own controls (ipopt: possibly at their bounds) */
      memcpy(u, s->U0 + k * m, sizeof(double) * (size_t)m);
    else if (HsDiscControl(s->disc, xk, xk + 2 * dim, xk + dim, u)) /* outside the domain (a failed solve) */
      for (PetscInt i = 0; i < m; i++)
        u[i] = NAN;
    for (PetscInt i = 0; i < m; i++)
      p = Number(p, u[i]);
    for (PetscInt i = 0; i < dim; i++)
      p = Number(p, (double)xk[dim + i]);
    p = Number(p, (double)s->H[k]);
    for (PetscInt i = 0; y && i < nc; i++)
      p = Number(p, (double)y[k * 2 * nc + nc + i]);
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), f);
  }
  bad = ferror(f);
  RestoreMultipliers(s, &y);
  free(u), free(line);
  return bad;
}

typedef struct {
  HsSolver           s;
  const PetscScalar *x;
  int                size;
} OutCtx;

static int TrajectoryCB(FILE *f, void *c)
{
  OutCtx *o = c;
  return WriteTrajectory(o->s, f, o->x);
}

static int IntervalsCB(FILE *f, void *c)
{
  OutCtx *o = c;
  return WriteIntervals(o->s, f, o->x);
}

static int SummaryCB(FILE *f, void *c)
{
  OutCtx *o = c;
  return HsSolverWriteSummaryJSON(o->s, f, o->size);
}

/* The files an output replaces (HsCheckOutputFiles): name, how hamshoot begins it, and which output writes it. */
static const struct {
  const char *name, *head;
  int         which;
} OutputFiles[] = {
    {"summary.json", "{\n  \"problem\": ", HS_OUTPUT_SOLVE},
    {"trajectory.csv", "t,", HS_OUTPUT_SOLVE},
    {"trajectory.h5", "\x89HDF\r\n\x1a\n", HS_OUTPUT_SOLVE}, /* HDF5's signature (no user block) */
    {"intervals.csv", "k,t_mid,", HS_OUTPUT_SOLVE},
    {"extrapolated.csv", "t,", HS_OUTPUT_SOLVE},
    {"lower_extremal.csv", "t,", HS_OUTPUT_SOLVE},
    {"study.json", "{\n  \"problem\": ", HS_OUTPUT_STUDY},
    {"study.csv", "N,J,", HS_OUTPUT_STUDY},
    {"study.gp", "# hamshoot -hs_study: ", HS_OUTPUT_STUDY},
    {"study.png", "\x89PNG", HS_OUTPUT_STUDY},
    {"compare.json", "{\n\"indirect\": ", HS_OUTPUT_COMPARE},
    {"series.csv", "t,dEW_indirect,", HS_OUTPUT_COMPARE},
    {"compare.gp", "# hamshoot -hs_compare: ", HS_OUTPUT_COMPARE},
    {"controls.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"configurations.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"velocities.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"energy_work.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"hamiltonian.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"attitude.csv", "t,indirect_", HS_OUTPUT_COMPARE}, /* a problem with frames */
    {"attitude.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"rotor_rates.png", "\x89PNG", HS_OUTPUT_COMPARE},
    {"gnuplot.log", HS_GNUPLOT_LOG_HEAD, HS_OUTPUT_STUDY | HS_OUTPUT_COMPARE},
};

/* Whether the regular file open as fd begins with head (gnuplot.log: also an empty one, the log of a gnuplot that
 * said nothing, written before hamshoot put its first line there). */
static int BeginsWith(int fd, const char *name, const char *head)
{
  char    buf[64] = "";
  size_t  want    = strlen(head);
  ssize_t got     = read(fd, buf, want);

  if (got == 0 && !strcmp(name, "gnuplot.log"))
    return 1;
  return got == (ssize_t)want && !memcmp(buf, head, want);
}

/* Whether the HDF5 file open as fd, dir/trajectory.h5, is a trajectory.h5 of hamshoot's (HsIsTrajectoryH5: the file
 * HDF5 opens must be fd's). Read through fd's /proc entry (the file opened without following a link) where there is
 * one; without /proc (a container, a chroot), by its path: a file that is not fd's there (a link or another file put
 * there meanwhile) is not taken as hamshoot's, so it is refused rather than replaced (before, without /proc, every
 * trajectory.h5 of hamshoot's was refused as another program's). */
static int OwnH5(const char *dir, int fd)
{
  char path[PETSC_MAX_PATH_LEN + 32];

  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  if (access(path, R_OK))
    snprintf(path, sizeof path, "%s/trajectory.h5", dir);
  return HsIsTrajectoryH5(path, fd);
}

/*@ HsIsOutputFileName - whether name is the name of a file or directory that an output writes into its directory (the
    solve's files, -hs_study's and -hs_compare's, gnuplot.log, the sides indirect and direct): a -hs_checkpoint there
    would take its place. Not collective. @*/
PetscBool HsIsOutputFileName(const char name[])
{
  for (int i = 0; i < (int)(sizeof OutputFiles / sizeof OutputFiles[0]); i++)
    if (!strcmp(name, OutputFiles[i].name))
      return PETSC_TRUE;
  return (PetscBool)(!strcmp(name, "indirect") || !strcmp(name, "direct"));
}

/*@ HsCheckOutputFiles - before a solve (bvp/ internal; rank 0; dir the locked output directory or one inside it, such
    as a side of -hs_compare): each file that the outputs in which (HS_OUTPUT_SOLVE: the solve's; HS_OUTPUT_STUDY:
    -hs_study's study.*, its PNG and gnuplot.log; HS_OUTPUT_COMPARE: -hs_compare's compare.*, series.csv, PNGs,
    gnuplot.log) replace in dir is absent, a symbolic link or a FIFO (the rename, or the removal before gnuplot runs,
    replaces the entry, never its target), or begins as hamshoot writes it; a regular file that does not (results of
    the user's or of another program, an empty file) would be replaced without a word, and a directory there would stop
    the output after the solve: either is an error naming it. A dir that does not exist yet holds nothing. Returns 0,
    or 1 with err. @*/
int HsCheckOutputFiles(const char *dir, int which, char *err, size_t len)
{
  int dfd, bad = 0;

  if (HsDirOpen(dir, 0, &dfd, err, len)) /* not there (yet): nothing of the user's in it */
    return err[0] = 0, 0;
  for (int i = 0; i < (int)(sizeof OutputFiles / sizeof OutputFiles[0]) && !bad; i++) {
    struct stat st;
    int         fd;
    if (!(OutputFiles[i].which & which))
      continue;
    fd = openat(dfd, OutputFiles[i].name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) /* absent, or a link (ELOOP) */
      continue;
    if (!fstat(fd, &st) && S_ISDIR(st.st_mode))
      bad = 2;
    else if (!fstat(fd, &st) && S_ISREG(st.st_mode))
      bad = !BeginsWith(fd, OutputFiles[i].name, OutputFiles[i].head) ||
            (!strcmp(OutputFiles[i].name, "trajectory.h5") && !OwnH5(dir, fd)); /* any HDF5 file begins so */
    close(fd);
    if (bad)
      snprintf(err, len,
               bad == 2 ? "output directory '%s' holds a directory %s, where the output writes a file: remove it, or "
                          "give another -o"
                        : "output directory '%s' holds %s, which does not begin as hamshoot writes it (a file of yours "
                          "or of another program): hamshoot would replace it; move it away, or give another -o",
               dir, OutputFiles[i].name);
  }
  close(dfd);
  return bad != 0;
}

/*@ HsCheckDriverOutput - before a solve whose driver writes files of its own into dir (-hs_study, -hs_compare): the
    files of the user's at their names are refused as HsCheckOutputDirectory() refuses them at the solve's names.

  Collective; rank 0 checks.

  Input Parameters:
+ comm    - the communicator
. dir     - the output directory
. study   - check -hs_study's files (study.json, study.csv, study.gp, study.png, gnuplot.log)
- compare - check -hs_compare's files (compare.json, series.csv, compare.gp, its PNGs, attitude.csv, gnuplot.log)

.seealso: HsCheckOutputDirectory(), HsSolverConvergenceStudy(), HsSolverCompare()
@*/
PetscErrorCode HsCheckDriverOutput(MPI_Comm comm, const char dir[], PetscBool study, PetscBool compare)
{
  char        err[PETSC_MAX_PATH_LEN + 256] = "";
  int         bad                           = 0;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    bad = HsCheckOutputFiles(dir, (study ? HS_OUTPUT_STUDY : 0) | (compare ? HS_OUTPUT_COMPARE : 0), err, sizeof err);
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "%s%s", compare ? "-hs_compare: " : study ? "-hs_study: " : "", err);
  PetscFunctionReturn(0);
}

/*@ HsRemoveDriverOutput - just before the solve of a run that writes into dir (after every refusal of the run): the
    files of -hs_study and -hs_compare that an earlier run left in dir are removed before this run writes anything
    there (round 30). A run killed (SIGKILL, a node lost) after its solve's output and before its driver's files, or
    ended by an error or a solve not converged in between, had left an earlier run's study.json ("complete": true,
    other grids) or compare.json (other differences) beside its new summary.json or sides, their verdict taken for
    this run's; so had a run without the driver in an earlier study's directory. For this run's own driver (study,
    compare) every name HsCheckDriverOutput() has checked goes (hamshoot's files, or a link or a FIFO there: the entry,
    never a target); for the other driver's, and in a run without one, only a regular file that begins as hamshoot
    writes it, and no PNG or gnuplot.log (any PNG begins as hamshoot's do: it may be the user's own).

  Collective; rank 0 removes.

.seealso: HsCheckDriverOutput(), HsSolverConvergenceStudy(), HsSolverCompare()
@*/
PetscErrorCode HsRemoveDriverOutput(MPI_Comm comm, const char dir[], PetscBool study, PetscBool compare)
{
  char        err[64];
  int         dfd, own = (study ? HS_OUTPUT_STUDY : 0) | (compare ? HS_OUTPUT_COMPARE : 0);
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank || HsDirOpen(dir, 0, &dfd, err, sizeof err)) /* not there (yet): nothing to remove */
    PetscFunctionReturn(0);
  for (int i = 0; i < (int)(sizeof OutputFiles / sizeof OutputFiles[0]); i++) {
    const char *nm = OutputFiles[i].name;
    size_t      l  = strlen(nm);
    struct stat st;
    int         fd, ours = 0;
    if (!(OutputFiles[i].which & (HS_OUTPUT_STUDY | HS_OUTPUT_COMPARE)))
      continue;
    if (OutputFiles[i].which & own) { /* checked by HsCheckDriverOutput: absent, a link, a FIFO or hamshoot's */
      unlinkat(dfd, nm, 0);           /* absent: ENOENT, nothing to do */
      continue;
    }
    if (!strcmp(nm, "gnuplot.log") || (l > 4 && !strcmp(nm + l - 4, ".png")))
      continue;
    if ((fd = openat(dfd, nm, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) /* absent, or a link */
      continue;
    ours = !fstat(fd, &st) && S_ISREG(st.st_mode) && BeginsWith(fd, nm, OutputFiles[i].head);
    close(fd);
    if (ours)
      unlinkat(dfd, nm, 0);
  }
  close(dfd);
  PetscFunctionReturn(0);
}

/* Rank 0, dir locked by this run: the temporary files a killed run left there (.NAME.tmp.XXXXXX of an output's
 * NAME, .hamshoot-probe.XXXXXX; regular files only; the default checkpoint's checkpoint.tmp.XXXXXX) are removed: no running hamshoot writes them (it would hold the
 * lock), and a SIGKILL during each write of a large trajectory.h5 had left one of its size there every time. */
static void RemoveStaleTemps(const char *dir)
{
  char           err[64], pre[64];
  int            dfd, fd;
  DIR           *d;
  struct dirent *e;
  struct stat    st;

  if (HsDirOpen(dir, 0, &dfd, err, sizeof err))
    return;
  if ((fd = dup(dfd)) >= 0 && (d = fdopendir(fd))) {
    while ((e = readdir(d)))
      for (int i = -1; i < (int)(sizeof OutputFiles / sizeof OutputFiles[0]); i++) {
        size_t l = (size_t)snprintf(pre, sizeof pre, i < 0 ? ".hamshoot-probe.%s" : ".%s.tmp.",
                                    i < 0 ? "" : OutputFiles[i].name);
        if (strlen(e->d_name) == l + 6 && !strncmp(e->d_name, pre, l) &&
            !fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode)) {
          unlinkat(dfd, e->d_name, 0);
          break;
        }
      }
    closedir(d);
  } else if (fd >= 0)
    close(fd);
  HsRemoveStaleCheckpointTemps(dfd, "checkpoint"); /* the default OUT/checkpoint's temporaries of a killed run */
  close(dfd);
}

/*@ HsCheckOutputDirectory - creates dir (with its parents), takes it for this run and tries writing a file in it, so
    that an output directory that cannot be written, or that another hamshoot run is writing to, is an error before a
    solve rather than after it.

  Collective; rank 0 checks, and holds an exclusive lock on dir until the process ends (HsLockDirectory: a second
  run with the same -o refuses at once instead of tearing the first one's files), with the directory's descriptor,
  through which rank 0 then makes every file and subdirectory of the output (no path lookup of dir after the lock: a
  directory moved away and replaced by a link during the run cannot redirect the output). An existing file of that
  name, a symbolic link, a path that cannot be created, a directory without write permission and a directory in use
  are errors naming dir and the reason. Call it once per directory and process.

.seealso: HsSolverWriteOutput()
@*/
PetscErrorCode HsCheckOutputDirectory(MPI_Comm comm, const char dir[])
{
  char        err[PETSC_MAX_PATH_LEN + 256] = "", real[PETSC_MAX_PATH_LEN];
  int         bad                           = 0;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  for (const char *c = dir; *c; c++) /* a newline from a script's $(...), an escape sequence: printed, and made */
    PetscCheck((unsigned char)*c >= 0x20 && *c != 0x7f, comm, PETSC_ERR_ARG_WRONG,
               "output directory: its name holds a control character (byte %d at %d): give a plain name",
               (int)(unsigned char)*c, (int)(c - dir) + 1);
  if (!rank && realpath(dir, real) && !strcmp(real, "/")) /* '-o $OUT/' with OUT unset: files had gone into / */
    bad = 1, snprintf(err, sizeof err,
                      "output directory '%s' is the root directory (an empty variable in '$DIR/'?): "
                      "give a directory of its own",
                      dir);
  else if (!rank && (HsIsCheckpointDir(dir) == 1 || (realpath(dir, real) && HsIsCheckpointDir(real) == 1))) /* also
         through a link: a run's checkpoint is not an output directory */
    bad = 1,
    snprintf(err, sizeof err, "output directory '%s' is a checkpoint directory of hamshoot's: give another -o", dir);
  else if (!rank) /* inside a checkpoint or another run's output (its lock): refused before anything is made there */
    bad = HsInsideTaken(dir, PETSC_FALSE, err, sizeof err);
  if (!rank && !bad)
    bad = HsLockDirectory(dir, err, sizeof err);
  if (!rank && !bad) /* the user's own files at the output's names are not taken over */
    bad = HsCheckOutputFiles(dir, HS_OUTPUT_SOLVE, err, sizeof err);
  if (!rank && !bad)
    RemoveStaleTemps(dir);
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "%s", err);
  PetscFunctionReturn(0);
}

/* extrapolated.csv: t and the states of Richardson's extrapolation at the nodes of N/2. */
static int ExtrapolatedCB(FILE *f, void *ctx)
{
  HsSolver s   = ctx;
  PetscInt dim = 2 * s->prob->n, Nh = s->N / 2;
  char     name[96];

  fprintf(f, "t");
  for (PetscInt i = 0; i < dim; i++) {
    HsColumnName(s->prob, 0, (int)i, 0, name, sizeof name);
    fprintf(f, ",%s", name);
  }
  fprintf(f, "\n");
  for (PetscInt k = 0; k <= Nh; k++) {
    fprintf(f, "%.17g", (double)(s->res.extrap.T * k / Nh));
    for (PetscInt i = 0; i < dim; i++)
      fprintf(f, ",%.17g", (double)s->Xext[k * dim + i]);
    fprintf(f, "\n");
  }
  return ferror(f);
}

/* The temporary files made so far (names relative to dfd; "" for none) removed. */
static void RemoveTemps(int dfd, char (*t)[PETSC_MAX_PATH_LEN], int n)
{
  for (int i = 0; i < n; i++)
    if (t[i][0])
      unlinkat(dfd, t[i], 0);
}

/* All files complete under temporary names first (extrapolated.csv only after HsSolverExtrapolate); then
 * the old summary goes, the trajectory, the intervals, the extrapolated states (or an old file of them)
 * and the summary are renamed into place: the previous output stays intact until the new one is
 * complete, and a summary is never next to a trajectory that is not its own. Everything is made, renamed
 * and removed through one descriptor of dir (HsDirOpen: for the locked output directory and the
 * directories inside it, that of the lock), never through its path. */
static int WriteBoth(HsSolver s, const char *dir, int size, const char *h5tmp, char *err, size_t errlen)
{
  enum { TT, TI, TE, TS, NT };
  const char *names[NT] = {h5tmp ? "trajectory.h5" : "trajectory.csv", "intervals.csv", "extrapolated.csv",
                           "summary.json"};
  const char *other     = h5tmp ? "trajectory.csv" : "trajectory.h5"; /* the other format's, removed */
  int (*const cb[NT])(FILE *, void *)          = {TrajectoryCB, IntervalsCB, ExtrapolatedCB, SummaryCB};
  char               t[NT][PETSC_MAX_PATH_LEN] = {"", "", "", ""};
  const PetscScalar *x;
  OutCtx             o = {s, NULL, size};
  int                dfd, bad = 0, at = TS;

  if (h5tmp) /* written by every rank already (HsSolverWriteTrajectoryHDF5) */
    snprintf(t[TT], sizeof t[TT], "%s", h5tmp);
  if (HsDirOpen(dir, 1, &dfd, err, errlen))
    return 1;
  if (HsLockedDirectoryReplaced(dir)) {
    snprintf(err, errlen,
             "output directory '%s' was replaced during the run (moved away, something else put at its "
             "path): nothing written",
             dir);
    close(dfd);
    return 1;
  }
  if (!h5tmp && VecGetArrayRead(s->X0, &x)) { /* hdf5: no gathered solution (diagdist.c) */
    close(dfd);
    return snprintf(err, errlen, "cannot read the solution"), 1;
  }
  o.x = h5tmp ? NULL : x;
  for (int i = 0; i < NT && !bad; i++) {
    if (i == TE && o.x) /* the solution's array is given back after the two files that read it */
      VecRestoreArrayRead(s->X0, &x), o.x = NULL;
    if ((i == TE && !s->res.extrap.done) || (h5tmp && (i == TT || i == TI)))
      continue;
    bad = HsWriteFileTempAt(dfd, dir, names[i], cb[i], i == TE ? (void *)s : (void *)&o, t[i], err, errlen);
  }
  if (o.x)
    VecRestoreArrayRead(s->X0, &x);
  if (!bad && HsLockedDirectoryReplaced(dir)) { /* again, just before anything is moved into place */
    snprintf(err, errlen, "output directory '%s' was replaced during the run: nothing written", dir);
    bad = 1;
  }
  if (bad) {
    RemoveTemps(dfd, t, NT);
    close(dfd);
    return 1;
  }
  if (unlinkat(dfd, names[TS], 0) && errno != ENOENT)
    bad = 1, at = TS;
  if (!bad && renameat(dfd, t[TT], dfd, names[TT]))
    bad = 1, at = TT;
  if (!bad && (h5tmp ? unlinkat(dfd, names[TI], 0) && errno != ENOENT : renameat(dfd, t[TI], dfd, names[TI])))
    bad = 1, at = TI;
  if (!bad && unlinkat(dfd, other, 0) && errno != ENOENT) /* no trajectory of another run beside this summary */
    bad = 1, at = TT, names[TT] = other;
  if (!bad && (t[TE][0] ? renameat(dfd, t[TE], dfd, names[TE])
                        : unlinkat(dfd, names[TE], 0) && errno != ENOENT)) /* this run's, or none */
    bad = 1, at = TE;
  if (!bad && renameat(dfd, t[TS], dfd, names[TS]))
    bad = 1, at = TS;
  if (bad) { /* the file at fault named (a directory in its place: "Is a directory") */
    snprintf(err, errlen, "cannot replace %s/%s: %s", dir, names[at], strerror(errno));
    RemoveTemps(dfd, t, NT);
  }
  close(dfd);
  return bad;
}

/* Rank 0: a new temporary file for trajectory.h5 in dir (HsCreateUniqueAt: O_EXCL, no link followed), its name in
 * tmp (relative to dir). Returns 0, or 1 with err. */
static int MakeH5Temp(const char *dir, char *tmp, char *err, size_t errlen)
{
  int dfd, fd;

  if (HsDirOpen(dir, 1, &dfd, err, errlen))
    return 1;
  snprintf(tmp, PETSC_MAX_PATH_LEN, ".trajectory.h5.tmp.XXXXXX");
  if (HsLockedDirectoryReplaced(dir))
    snprintf(err, errlen, "output directory '%s' was replaced during the run: nothing written", dir);
  else if ((fd = HsCreateUniqueAt(dfd, tmp, 0)) < 0)
    snprintf(err, errlen, "cannot create a temporary file for %s/trajectory.h5: %s", dir, strerror(errno));
  else
    close(fd);
  close(dfd);
  if (err[0])
    tmp[0] = 0;
  return err[0] != 0;
}

/* Every rank: the output directory dir opened, rank 0 through HsDirOpen (the locked descriptor), the others by its path
 * (O_DIRECTORY | O_NOFOLLOW), and checked to be the one rank 0 holds with the temporary file tmp that rank 0 made in
 * it (inode numbers: a shared file system may give each client its own st_dev); then *path names the file through
 * that descriptor (/proc/self/fd/FD/tmp) where /proc is mounted, so that no rank looks the directory up by its path
 * again (issue 38: it had been opened by dir/tmp on every rank after rank 0's check), else dir/tmp. *dfd the
 * descriptor, for the caller to close. Collective. */
static PetscErrorCode PinH5Dir(MPI_Comm comm, const char *dir, const char *tmp, int *dfd, char *path, size_t len)
{
  PetscMPIInt rank;
  long long   id[2] = {-1, -1}, mine[2] = {-1, -2};
  int         bad;
  struct stat d, f;
  char        err[PETSC_MAX_PATH_LEN + 128];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    (void)HsDirOpen(dir, 0, dfd, err, sizeof err);
  else
    *dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*dfd >= 0 && !fstat(*dfd, &d) && !fstatat(*dfd, tmp, &f, AT_SYMLINK_NOFOLLOW) && S_ISREG(f.st_mode))
    mine[0] = (long long)d.st_ino, mine[1] = (long long)f.st_ino;
  if (!rank)
    id[0] = mine[0], id[1] = mine[1];
  PetscCallMPI(MPI_Bcast(id, 2, MPI_LONG_LONG, 0, comm));
  bad = mine[0] != id[0] || mine[1] != id[1];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  if (bad && *dfd >= 0)
    close(*dfd), *dfd = -1;
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE,
             "output directory '%s' was replaced while trajectory.h5 was being written: not written through it", dir);
  if (!access("/proc/self/fd", X_OK))
    PetscCall(PetscSNPrintf(path, len, "/proc/self/fd/%d/%s", *dfd, tmp));
  else
    PetscCall(PetscSNPrintf(path, len, "%s/%s", dir, tmp));
  PetscFunctionReturn(0);
}

/* trajectory.h5 written by every rank into a new temporary file of dir (MakeH5Temp on rank 0), flushed to disk; its
 * name (relative to dir) in tmp on rank 0, for WriteBoth to rename; removed again if the writing fails. Collective. */
static PetscErrorCode WriteHDF5Temp(HsSolver s, const char *dir, char *tmp)
{
  MPI_Comm       comm                          = PetscObjectComm((PetscObject)s);
  char           err[PETSC_MAX_PATH_LEN + 128] = "", path[2 * PETSC_MAX_PATH_LEN];
  PetscMPIInt    rank;
  PetscErrorCode ierr;
  int            dfd = -1, pfd = -1, fd;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    MakeH5Temp(dir, tmp, err, sizeof err);
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!err[0], comm, PETSC_ERR_FILE_WRITE, "%s", err);
  PetscCallMPI(MPI_Bcast(tmp, PETSC_MAX_PATH_LEN, MPI_CHAR, 0, comm));
  ierr = PinH5Dir(comm, dir, tmp, &pfd, path, sizeof path);
  if (!ierr)
    ierr = HsSolverWriteTrajectoryHDF5(s, path); /* collective; an error leaves no temporary file behind */
  if (pfd >= 0)
    close(pfd);
  if (!rank && !HsDirOpen(dir, 0, &dfd, err, sizeof err)) {
    if (!ierr && (fd = openat(dfd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
      ierr = fsync(fd) ? PETSC_ERR_FILE_WRITE : 0; /* on the disk before it is renamed into place */
      close(fd);
    }
    if (ierr)
      unlinkat(dfd, tmp, 0);
    close(dfd);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ierr, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(!ierr, comm, PETSC_ERR_FILE_WRITE, "cannot write %s/trajectory.h5 (error %d above)", dir, (int)ierr);
  PetscFunctionReturn(0);
}

/*@ HsSolverWriteOutput - writes summary.json, trajectory.csv and intervals.csv of the last solve into dir.

  Collective.

  Input Parameters:
+ s   - the solver
- dir - the directory (docs/theory.md §5; created with its parents if needed)

  Options Database Key:
. -o <DIR> - the hamshoot executable writes there

  Notes:
  Rank 0 writes. Both files are written completely under temporary names first (the previous output stays as it
  was until then); then the old summary.json is removed, and trajectory.csv, intervals.csv and summary.json are
  renamed into place, the summary last, so its presence means that the directory is complete. An unwritable dir
  is an error naming the path.

.seealso: HsSolverSolve(), HsSolverView(), HsContinuationSetOutput()
@*/
PetscErrorCode HsSolverWriteOutput(HsSolver s, const char *dir)
{
  PetscMPIInt    rank, size;
  char           err[PETSC_MAX_PATH_LEN + 128] = "", h5tmp[PETSC_MAX_PATH_LEN] = "";
  int            bad = 0;
  HsOutputFormat fmt;

  PetscFunctionBeginUser;
  PetscCheck(s->solved, PetscObjectComm((PetscObject)s), PETSC_ERR_ORDER,
             "HsSolverWriteOutput() before HsSolverSolve()");
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  PetscCall(HsSolverGetOutputFormat(s, &fmt));
  if (fmt == HS_OUTPUT_FORMAT_HDF5)
    PetscCall(WriteHDF5Temp(s, dir, h5tmp));
  if (rank == 0) /* the solution gathered by the diagnostics of the last solve */
    bad = WriteBoth(s, dir, size, h5tmp[0] ? h5tmp : NULL, err, sizeof err);
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, PetscObjectComm((PetscObject)s)));
  PetscCheck(!bad, PetscObjectComm((PetscObject)s), PETSC_ERR_FILE_WRITE, "%s", err);
  PetscFunctionReturn(0);
}
