/* hamshoot: bounded controls in the indirect solvers (docs/controls.md): the eps-continuation of the control law
 * (costate/hscontrol.h): its settings and options, and the switching structure of a solution (the intervals at a bound,
 * the switching times, H^d within the arcs and across the switches). */
#include "../../costate/hscontrol.h"
#include "hsbvpimpl.h"

#include <math.h>

/*@ HsProblemBangBang - whether a control of P has R_jj = 0 (the bang-bang law: its eps stays > 0). bvp/ internal. @*/
PetscBool HsProblemBangBang(const HsProblem *P)
{
  for (int j = 0; j < P->m; j++)
    if (P->R[j * P->m + j] == 0)
      return PETSC_TRUE;
  return PETSC_FALSE;
}

/*@ HsProblemBoundsScale - the unit of the continuation's eps: the smallest hi - lo of a control bounded on both sides
    (or max(1, |bound|) of one bounded on one side); 1 (units of s = B^T lambda^p) with a bang-bang control. bvp/
    internal. @*/
PetscReal HsProblemBoundsScale(const HsProblem *P)
{
  PetscReal sc = PETSC_MAX_REAL;

  if (HsProblemBangBang(P))
    return 1;
  for (int j = 0; j < P->m; j++) {
    PetscReal lo = P->u_min ? P->u_min[j] : -INFINITY, hi = P->u_max ? P->u_max[j] : INFINITY;
    if (isfinite(lo) && isfinite(hi) && hi > lo)
      sc = PetscMin(sc, hi - lo);
    else if (isfinite(lo) || isfinite(hi))
      sc = PetscMin(sc, PetscMax(1, PetscAbsReal(isfinite(lo) ? lo : hi)));
  }
  return sc < PETSC_MAX_REAL ? sc : 1;
}

/*@ HsSolverSetBoundsSmoothing - the eps-continuation of bounded controls (docs/controls.md): the control law of
    costate/hscontrol.h is smoothed by eps = e * scale, e = eps0, eps0 * factor, ... while e >= eps_min, then
    e = 0 (the exact projection, by semismooth Newton); a bang-bang control (R_jj = 0) ends at e = eps_min instead.
    scale: the smallest hi - lo of the controls (max(1, |bound|) for a one-sided bound); 1, in units of
    s = B^T lambda^p, with a bang-bang control.

  Logically collective.

  Input Parameters:
+ s       - the solver
. eps0    - the first smoothing, >= 0 (0: the exact projection at once); default HS_BOUNDS_EPS0 = 0.1
. factor  - the reduction per step, in (0, 1); default HS_BOUNDS_EPS_FACTOR = 0.1
- eps_min - the smallest smoothing, > 0; default HS_BOUNDS_EPS_MIN = 1e-4
  The three make at most HS_BOUNDS_MAX_STEPS = 100 smoothed solves (floor(log(eps0/eps_min)/log(1/factor)) + 1).

  Options Database Keys:
+ -hs_bounds_eps0 <e> - eps0
. -hs_bounds_eps_factor <f> - factor
- -hs_bounds_eps_min <e> - eps_min

.seealso: HsSolverGetBoundsSmoothing(), HsSolverSolve()
@*/
PetscErrorCode HsSolverSetBoundsSmoothing(HsSolver s, PetscReal eps0, PetscReal factor, PetscReal eps_min)
{
  PetscReal steps;

  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  PetscCheck(eps0 >= 0 && eps0 <= 1e6 && factor > 0 && factor < 1 && eps_min > 0 && eps_min <= 1,
             PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %g must lie in [0, 1e6], %s %g in (0, 1), %s %g in (0, 1]", HsKey(s, "-hs_bounds_eps0"), (double)eps0,
             HsKey(s, "-hs_bounds_eps_factor"), (double)factor, HsKey(s, "-hs_bounds_eps_min"), (double)eps_min);
  steps = eps0 > eps_min ? PetscFloorReal((PetscLogReal(eps0) - PetscLogReal(eps_min)) / -PetscLogReal(factor)) + 1 : 1;
  PetscCheck(steps <= HS_BOUNDS_MAX_STEPS, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "%s %.12g, %s %.12g and %s %.12g make %.0f smoothed solves, at most %d (HS_BOUNDS_MAX_STEPS)",
             HsKey(s, "-hs_bounds_eps0"), (double)eps0, HsKey(s, "-hs_bounds_eps_factor"), (double)factor,
             HsKey(s, "-hs_bounds_eps_min"), (double)eps_min, (double)steps, HS_BOUNDS_MAX_STEPS);
  s->bnd_eps0 = eps0, s->bnd_factor = factor, s->bnd_eps_min = eps_min;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetBoundsSmoothing - the eps-continuation's settings (HsSolverSetBoundsSmoothing); any output may be
    NULL. Not collective. @*/
PetscErrorCode HsSolverGetBoundsSmoothing(HsSolver s, PetscReal *eps0, PetscReal *factor, PetscReal *eps_min)
{
  PetscFunctionBeginUser;
  if (eps0)
    *eps0 = s->bnd_eps0;
  if (factor)
    *factor = s->bnd_factor;
  if (eps_min)
    *eps_min = s->bnd_eps_min;
  PetscFunctionReturn(0);
}

/*@ HsSolverBoundsOptions - -hs_bounds_eps0, -hs_bounds_eps_factor, -hs_bounds_eps_min (HsSolverSetBoundsSmoothing);
    bvp/ internal, called by HsSolverSetFromOptions. @*/
PetscErrorCode HsSolverBoundsOptions(PetscOptionItems *PetscOptionsObject, HsSolver s)
{
  PetscReal e0 = s->bnd_eps0, f = s->bnd_factor, em = s->bnd_eps_min;
  PetscBool a, b, c;

  PetscFunctionBeginUser;
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_bounds_eps0",
                          "bounded controls: the first smoothing of the control law, relative to hi - lo (0: the exact "
                          "projection at once; docs/controls.md)",
                          "HsSolverSetBoundsSmoothing", e0, &e0, &a));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_bounds_eps_factor",
                          "bounded controls: the smoothing's reduction per continuation step",
                          "HsSolverSetBoundsSmoothing", f, &f, &b));
  PetscCall(HsOptionsReal(PetscOptionsObject, "-hs_bounds_eps_min",
                          "bounded controls: the smallest smoothing before the exact projection (bang-bang: the final "
                          "one)",
                          "HsSolverSetBoundsSmoothing", em, &em, &c));
  if (a || b || c)
    PetscCall(HsSolverSetBoundsSmoothing(s, e0, f, em));
  PetscFunctionReturn(0);
}

/*@ HsSolverBoundsFinalEps - the smoothing of the bounded law as posed: 0 (the exact projection), or eps_min (times
    the scale, HsSolverSetBoundsSmoothing) with a bang-bang control. bvp/ internal. @*/
PetscReal HsSolverBoundsFinalEps(HsSolver s)
{
  return HsProblemBangBang(s->prob) ? s->bnd_eps_min * HsProblemBoundsScale(s->prob) : 0;
}

/* The arc of control j on one interval: -1 at the lower bound, +1 at the upper, 0 free (the exact law's
   classification by w = s/r; bang-bang: the sign of s; a coupled R: s is already HsControlLawArcInput's w); *w the
   value compared (w, or s for bang-bang). */
static int ArcOf(const HsProblem *P, int j, PetscBool coupled, PetscReal s, PetscReal *w)
{
  PetscReal r = P->R[j * P->m + j], lo = P->u_min ? P->u_min[j] : -INFINITY, hi = P->u_max ? P->u_max[j] : INFINITY;

  if (r == 0) {
    *w = s;
    return s < 0 ? -1 : 1;
  }
  *w = coupled ? s : s / r;
  return *w <= lo ? -1 : (*w >= hi ? 1 : 0);
}

/* The switch of control j between rows k-1 and k (arcs a -> b, values wa -> wb): the crossing of the bound
   (bang-bang: of s = 0) by linear interpolation between the rows' times, t = (k - off + theta) h: off = 1/2 for the
   interval costates of the second-order schemes (at the interval midpoints), 1 for conserving4's node costates. */
static PetscReal SwitchTime(const HsProblem *P, int j, PetscInt k, PetscReal h, PetscReal off, int a, int b,
                            PetscReal wa, PetscReal wb)
{
  PetscReal c, th;

  if (P->R[j * P->m + j] == 0)
    c = 0;
  else
    c = (a == 1 || b == 1) ? P->u_max[j] : P->u_min[j];
  th = wb != wa ? (c - wa) / (wb - wa) : 0.5;
  th = PetscMin(1, PetscMax(0, th));
  return (k - off + th) * h;
}

/*@ HsSolverBoundsStructure - the switching structure of the gathered solution x (rank 0, N + 1 rows of 4n, H^d in
    s->H): per control the intervals at each bound (conserving4: by its node costates) and the switching times
    (SwitchTime), and the largest H^d
    balance inside the arcs and across the switching nodes (docs/controls.md section 3), into s->res.bounds and
    s->bnd_sw / s->bnd_at (rank 0). bvp/ internal; not collective. @*/
PetscErrorCode HsSolverBoundsStructure(HsSolver s, const PetscScalar *x)
{
  const HsProblem *P = s->prob;
  PetscInt         N = s->N, dim = 2 * P->n, m = P->m;
  PetscReal        h   = HsDiscGetStep(s->disc), *sv, *wprev, w, Dt, d;
  PetscReal        off = s->scheme == HS_SCHEME_CONSERVING4 ? 1 : 0.5; /* node or interval costates (SwitchTime) */
  int             *aprev, a, sw, diag = HsControlLawDiagonal(P);

  PetscFunctionBeginUser;
  PetscCall(PetscFree2(s->bnd_sw, s->bnd_at));
  PetscCall(PetscMalloc2(3 * (2 * N * m + 1), &s->bnd_sw, 2 * m, &s->bnd_at));
  PetscCall(PetscCalloc3(m, &sv, m, &wprev, m, &aprev));
  PetscCall(PetscArrayzero(s->bnd_at, 2 * m));
  s->bnd_nsw = 0, s->res.bounds.switches = 0, s->res.bounds.arc_balance = 0, s->res.bounds.switch_jump = 0;
  for (PetscInt k = 0; k < N; k++) {
    const PetscScalar *xk = x + k * 2 * dim;
    PetscCheck(HsDiscSwitchingInput(s->disc, xk, xk + 2 * dim, xk + dim, sv) == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "switching input");
    PetscCheck(diag || HsControlLawArcInput(P, sv, sv) == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "coupled law");
    sw = 0;
    for (int j = 0; j < m; j++) {
      a = ArcOf(P, j, (PetscBool)!diag, sv[j], &w);
      if (a)
        s->bnd_at[2 * j + (a > 0)]++;
      if (k > 0 && a != aprev[j]) {
        PetscReal *e = s->bnd_sw + 3 * s->bnd_nsw++;
        e[0] = j, e[1] = (a == 1 || aprev[j] == 1) ? 1 : -1,
        e[2] = SwitchTime(P, j, k, h, off, aprev[j], a, wprev[j], w);
        sw   = 1;
      }
      aprev[j] = a, wprev[j] = w;
    }
    if (k > 0 && s->H) { /* node k between intervals k-1 and k */
      PetscCheck(HsDiscEllTimeChange(s->disc, (int)k, xk - 2 * dim, xk + 2 * dim, &Dt) == 0, PETSC_COMM_SELF,
                 PETSC_ERR_PLIB, "ell");
      d = PetscAbsReal(s->H[k] - s->H[k - 1] + 0.5 * Dt);
      if (sw)
        s->res.bounds.switches++, s->res.bounds.switch_jump = PetscMax(s->res.bounds.switch_jump, d);
      else
        s->res.bounds.arc_balance = PetscMax(s->res.bounds.arc_balance, d);
    }
  }
  PetscCall(PetscFree3(sv, wprev, aprev));
  PetscFunctionReturn(0);
}

/*@ HsSolverBoundsJSON - summary.json's "bounds" and "switching" members (docs/output-format.md; rank 0, after
    HsSolverBoundsStructure). bvp/ internal. @*/
void HsSolverBoundsJSON(HsSolver s, FILE *f)
{
  const HsBounds *b = &s->res.bounds;

  if (!b->active)
    return;
  fprintf(f,
          "  \"bounds\": {\"eps\": %.6g, \"exact\": %s, \"steps\": %d, \"switching_nodes\": %d, \"arc_balance\": %.6g, "
          "\"switch_jump\": %.6g},\n",
          (double)b->eps, b->exact ? "true" : "false", (int)b->steps, (int)b->switches, (double)b->arc_balance,
          (double)b->switch_jump);
  fprintf(f, "  \"switching\": [");
  for (int j = 0; j < s->prob->m && s->bnd_at; j++) {
    int first = 1;
    fprintf(f, "%s{\"control\": %d, \"at_lower\": %d, \"at_upper\": %d, \"times\": [", j ? ", " : "", j + 1,
            (int)s->bnd_at[2 * j], (int)s->bnd_at[2 * j + 1]);
    for (PetscInt i = 0; i < s->bnd_nsw; i++)
      if ((int)s->bnd_sw[3 * i] == j)
        fprintf(f, "%s%.10g", first ? "" : ", ", (double)s->bnd_sw[3 * i + 2]), first = 0;
    fprintf(f, "], \"bound\": [");
    first = 1;
    for (PetscInt i = 0; i < s->bnd_nsw; i++)
      if ((int)s->bnd_sw[3 * i] == j)
        fprintf(f, "%s\"%s\"", first ? "" : ", ", s->bnd_sw[3 * i + 1] > 0 ? "upper" : "lower"), first = 0;
    fprintf(f, "]}");
  }
  fprintf(f, "],\n");
}

/*@ HsSolverBoundsView - the switching structure on screen (after the solve's summary). bvp/ internal; collective
    on the viewer (rank 0 prints). @*/
PetscErrorCode HsSolverBoundsView(HsSolver s, PetscViewer v)
{
  const HsBounds *b = &s->res.bounds;

  PetscFunctionBeginUser;
  if (!b->active)
    PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(v, "  control law        %s, eps = %.3g after %d continuation step(s)%s\n",
                                   b->exact ? "exact projection" : "smoothed", (double)b->eps, (int)b->steps,
                                   b->exact ? " (semismooth Newton)" : ""));
  PetscCall(PetscViewerASCIIPrintf(v,
                                   "  H^d on the arcs    balance %.3e inside the arcs, %.3e across %d switching "
                                   "node(s)\n",
                                   (double)b->arc_balance, (double)b->switch_jump, (int)b->switches));
  for (int j = 0; j < s->prob->m && s->bnd_at; j++) {
    char     line[256] = "";
    size_t   len       = 0;
    PetscInt c         = 0;
    for (PetscInt i = 0; i < s->bnd_nsw && len < sizeof line - 40; i++)
      if ((int)s->bnd_sw[3 * i] == j && c++ < 8)
        len += (size_t)snprintf(line + len, sizeof line - len, " %.4g (%s)", (double)s->bnd_sw[3 * i + 2],
                                s->bnd_sw[3 * i + 1] > 0 ? "upper" : "lower");
    PetscCall(PetscViewerASCIIPrintf(v,
                                     "  control %d          %d intervals at the lower bound, %d at the upper; %d "
                                     "switch(es)%s%s%s\n",
                                     j + 1, (int)s->bnd_at[2 * j], (int)s->bnd_at[2 * j + 1], (int)c,
                                     c ? " at t =" : "", line, c > 8 ? " ..." : ""));
  }
  PetscFunctionReturn(0);
}
