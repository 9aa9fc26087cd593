/* hamshoot: -hs_compare, indirect against direct on the same grid (docs/theory.md section 5).
 *
 * One run solves the indirect problem as configured (conserving costates by default) and the direct
 * problem with the same state scheme on the same grid (the kkt costates of that scheme, IPOPT unless
 * -hs_direct_solver kkt), so that only the costate treatment differs. Rank 0 writes into DIR:
 *   indirect/, direct/   each solve's summary.json and trajectory.csv
 *   compare.json         {"indirect": {summary}, "direct": {summary}, max |dq|, |dp|, |du|, |dlambda|,
 *                        both wall times, the plots}
 *   series.csv           t_k, (E_k - W_k) - (E_0 - W_0) of both; t_{k+1/2}, H^d of both (interval k on row k)
 *   compare.gp           the gnuplot script (users may restyle it and rerun: gnuplot compare.gp)
 *   controls.png, configurations.png, velocities.png (the discrete velocities), energy_work.png, hamiltonian.png
 *   attitude.csv, attitude.png, rotor_rates.png  a problem with frames (HsProblem.frames): each frame's attitude
 *                        at the nodes of both solutions (HsProblemFrameAttitude: the rotation vector of a frame
 *                        without parent, a rotor's angle relative to its parent), their page, the rotors' rates
 * and prints a table. */
#include "hsdrivers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  HsSolver  ind, dir;
  PetscReal dq, dp, du, dl; /* max differences between the two solutions */
  int       size;
  int       natt, nrot; /* attitude.csv's values per side (HsProblemFrameColumns; 0: no frames), rotors among them */
  const char *pngs[8];  /* the pages gnuplot makes */
  int         npng;
  int         plotted; /* gnuplot made them all (compare.json lists them only then) */
} Cmp;

/* HsRunGnuplot asks it while gnuplot runs: a signal stops gnuplot too (a scheduler's SIGTERM had waited for it). */
static int Interrupted(void) { return HsInterruptPending() ? 1 : 0; }

/* The control of interval k of a solve (rank 0): the formulation's own, else R^{-1} G^T lambda. */
static void ControlOf(HsSolver s, const PetscScalar *x, PetscInt k, double *u)
{
  PetscInt dim = 2 * s->prob->n;
  if (s->U0)
    memcpy(u, s->U0 + k * s->prob->m, sizeof(double) * (size_t)s->prob->m);
  else
    HsDiscControl(s->disc, x + k * 2 * dim, x + (k + 1) * 2 * dim, x + k * 2 * dim + dim, u);
}

/* max |dq|, |dp| over nodes, |du|, |dlambda| over intervals (rank 0). */
static PetscErrorCode Differences(Cmp *c)
{
  const PetscScalar *a, *b;
  PetscInt           n = c->ind->prob->n, m = c->ind->prob->m, dim = 2 * n, N = c->ind->N;
  double            *ua, *ub;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(m, &ua, m, &ub));
  PetscCall(VecGetArrayRead(c->ind->X0, &a));
  PetscCall(VecGetArrayRead(c->dir->X0, &b));
  c->dq = c->dp = c->du = c->dl = 0;
  for (PetscInt k = 0; k <= N; k++) {
    const PetscScalar *xa = a + k * 2 * dim, *xb = b + k * 2 * dim;
    for (PetscInt i = 0; i < n; i++) {
      c->dq = PetscMax(c->dq, PetscAbsReal(xa[i] - xb[i]));
      c->dp = PetscMax(c->dp, PetscAbsReal(xa[n + i] - xb[n + i]));
    }
    if (k == N)
      break;
    for (PetscInt i = 0; i < dim; i++)
      c->dl = PetscMax(c->dl, PetscAbsReal(xa[dim + i] - xb[dim + i]));
    ControlOf(c->ind, a, k, ua);
    ControlOf(c->dir, b, k, ub);
    for (PetscInt j = 0; j < m; j++)
      c->du = PetscMax(c->du, PetscAbsReal(ua[j] - ub[j]));
  }
  PetscCall(VecRestoreArrayRead(c->ind->X0, &a));
  PetscCall(VecRestoreArrayRead(c->dir->X0, &b));
  PetscCall(PetscFree2(ua, ub));
  PetscFunctionReturn(0);
}

static int WriteCompareJSON(FILE *f, void *ctx)
{
  Cmp *c = ctx;
  fprintf(f, "{\n\"indirect\": ");
  if (HsSolverWriteSummaryJSON(c->ind, f, c->size))
    return 1;
  fprintf(f, ",\n\"direct\": ");
  if (HsSolverWriteSummaryJSON(c->dir, f, c->size))
    return 1;
  fprintf(f, ",\n\"max_abs_dq\": %.17g,\n\"max_abs_dp\": %.17g,\n\"max_abs_du\": %.17g,\n\"max_abs_dlambda\": %.17g,\n",
          c->dq, c->dp, c->du, c->dl);
  fprintf(f, "\"wall_time_indirect_s\": %.6g,\n\"wall_time_direct_s\": %.6g,\n", (double)c->ind->res.wall_time_s,
          (double)c->dir->res.wall_time_s);
  fprintf(f, "\"plots\": [");
  for (int i = 0; c->plotted && i < c->npng; i++)
    fprintf(f, "%s\"%s\"", i ? ", " : "", c->pngs[i]);
  fprintf(f, "]\n}\n");
  return ferror(f);
}

/* Frame fr's name (the file's; "frame K" without names), as given (raw: for attitude.csv's column names) or escaped for
   gnuplot's titles. */
static void FrameLabel(const HsProblem *P, int fr, int gnuplot, char *buf, size_t len)
{
  char nm[32];
  snprintf(nm, sizeof nm, "frame%d", fr + 1);
  if (gnuplot)
    HsGnuplotString(P->frame_names ? P->frame_names[fr] : nm, buf, len);
  else
    snprintf(buf, len, "%s", P->frame_names ? P->frame_names[fr] : nm);
}

/* attitude.csv (a problem with frames): t_k, then each side's frame values (HsProblemFrameAttitude), named
   indirect_FRAME_w1 .. _w3 (a frame without parent) or indirect_FRAME_angle (a rotor), then direct_ the same. */
static int WriteAttitude(FILE *f, void *ctx)
{
  Cmp               *c = ctx;
  const HsProblem   *P = c->ind->prob;
  PetscInt           N = c->ind->N, dim = 2 * P->n;
  PetscReal          T = c->ind->res.T;
  const PetscScalar *x[2];
  double             v[2][2 * 3 * HS_FRAME_MAX_PLOT];
  int                bad = 0;

  fprintf(f, "t");
  for (int side = 0; side < 2; side++)
    for (int fr = 0; fr < P->nframes; fr++) {
      const char *sd = side ? "direct" : "indirect";
      char        nm[256];
      FrameLabel(P, fr, 0, nm, sizeof nm);
      if (HsProblemFrameParent(P, fr) >= 0)
        fprintf(f, ",%s_%s_angle", sd, nm);
      else
        for (int i = 0; i < 3; i++)
          fprintf(f, ",%s_%s_w%d", sd, nm, i + 1);
    }
  fprintf(f, "\n");
  if (VecGetArrayRead(c->ind->X0, &x[0]) || VecGetArrayRead(c->dir->X0, &x[1]))
    return 1;
  for (PetscInt k = 0; k <= N && !bad; k++) {
    fprintf(f, "%.17g", (double)(T * k / N));
    for (int side = 0; side < 2 && !bad; side++) {
      bad = HsProblemFrameAttitude(P, x[side] + k * 2 * dim, k ? v[side] + c->natt : NULL, v[side]) != HS_SUCCESS;
      for (int i = 0; i < c->natt; i++)
        fprintf(f, ",%.17g", v[side][i]);
      memcpy(v[side] + c->natt, v[side], sizeof(double) * (size_t)c->natt);
    }
    fprintf(f, "\n");
  }
  if (VecRestoreArrayRead(c->ind->X0, &x[0]) || VecRestoreArrayRead(c->dir->X0, &x[1]))
    return 1;
  return bad || ferror(f);
}

/* t_k, the drift (E_k - W_k) - (E_0 - W_0) of both; t_{k+1/2}, H^d of both (empty on the last row). */
static int WriteSeries(FILE *f, void *ctx)
{
  Cmp      *c = ctx;
  PetscInt  N = c->ind->N;
  PetscReal T = c->ind->res.T;
  fprintf(f, "t,dEW_indirect,dEW_direct,t_mid,H_indirect,H_direct\n");
  for (PetscInt k = 0; k <= N; k++) {
    fprintf(f, "%.17g,%.17g,%.17g", (double)(T * k / N), (double)(c->ind->EW[k] - c->ind->EW[0]),
            (double)(c->dir->EW[k] - c->dir->EW[0]));
    if (k < N)
      fprintf(f, ",%.17g,%.17g,%.17g\n", (double)(T * (k + 0.5) / N), (double)c->ind->H[k], (double)c->dir->H[k]);
    else
      fprintf(f, ",,,\n");
  }
  return ferror(f);
}

/* Bounded controls (docs/controls.md): on the controls' page each finite bound as a thin horizontal line and the
   indirect solution's switching times as dotted vertical ones, in the control's colour (rank 0). */
static void BoundsMarks(FILE *f, HsSolver s)
{
  const HsProblem *P = s->prob;

  for (int j = 0; j < P->m && s->res.bounds.active; j++) {
    double lo = P->u_min ? P->u_min[j] : -INFINITY, hi = P->u_max ? P->u_max[j] : INFINITY;
    for (int b = 0; b < 2; b++)
      if (isfinite(b ? hi : lo))
        fprintf(f, "set arrow from graph 0, first %.17g to graph 1, first %.17g nohead lw 1 dt 2 lc %d\n", b ? hi : lo,
                b ? hi : lo, j + 1);
    for (PetscInt i = 0; s->bnd_sw && i < s->bnd_nsw; i++)
      if ((int)s->bnd_sw[3 * i] == j)
        fprintf(f, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lw 1 dt 3 lc %d\n",
                (double)s->bnd_sw[3 * i + 2], (double)s->bnd_sw[3 * i + 2], j + 1);
  }
}

/* Coordinate i's name in a plot's key (the problem file's, escaped for gnuplot; q1.. without names). */
static void CoordLabel(const HsProblem *P, PetscInt i, char *buf, size_t len)
{
  if (P->coord_names)
    HsGnuplotString(P->coord_names[i], buf, len);
  else
    snprintf(buf, len, "q%d", (int)i + 1);
}

/* The configurations' page and the velocities' page: q(t) at the nodes, and the discrete velocities
   (q_{k+1} - q_k)/h as steps on the intervals (differences of consecutive rows of trajectory.csv, in gnuplot). */
static void WriteCoordinatePages(FILE *f, Cmp *c, const char *name)
{
  const HsProblem *P = c->ind->prob;
  PetscInt         n = P->n;
  char             lab[256]; /* a coordinate's name, as data (HsGnuplotString) */

  fprintf(f,
          "unset arrow\nset output hs_png('configurations.png')\nset title '%s: configuration q(t)'\nset ylabel 'q'\nplot \\\n",
          name);
  for (PetscInt i = 0; i < n; i++) {
    CoordLabel(P, i, lab, sizeof lab);
    fprintf(f,
            "  I using 1:%d with lines lw 4 lc %d title '%s indirect', \\\n"
            "  D using 1:%d with lines lw 1.5 dt (6,4) lc 'black' title '%s'%s\n",
            (int)i + 2, (int)i + 1, lab, (int)i + 2, i ? "" : "direct (black, dashed)", i + 1 < n ? ", \\" : "");
  }
  fprintf(f,
          "set output hs_png('velocities.png')\nset title '%s: discrete velocities (q_{k+1} - q_k)/h on the intervals'\n"
          "set ylabel 'dq/dt'\nset xrange [0:%.17g]\nplot \\\n",
          name, (double)c->ind->res.T);
  for (PetscInt i = 0; i < n; i++) {
    CoordLabel(P, i, lab, sizeof lab);
    fprintf(f,
            "  x0 = NaN, I using ($1-h):(d = (column(%d)-x0)/h, x0 = column(%d), d):(h):(0) with vectors nohead lw 4 "
            "lc %d title '%s indirect', \\\n"
            "  x0 = NaN, D using ($1-h):(d = (column(%d)-x0)/h, x0 = column(%d), d):(h):(0) with vectors nohead lw 1.5 "
            "dt (6,4) lc 'black' title '%s'%s\n",
            (int)i + 2, (int)i + 2, (int)i + 1, lab, (int)i + 2, (int)i + 2, i ? "" : "direct (black, dashed)",
            i + 1 < n ? ", \\" : "");
  }
  fprintf(f, "set autoscale x\n");
}

/* A problem with frames: the attitude page (each frame's rotation vector at the nodes) and the rotors' page (each
   rotor's rate relative to its parent, differences of attitude.csv's unwrapped angles on the intervals). */
static void WriteAttitudePages(FILE *f, Cmp *c, const char *name)
{
  const HsProblem *P = c->ind->prob;
  char             lab[128];
  int              col = 2, first = 1, last = 0;

  fprintf(f, "unset arrow\nset output hs_png('attitude.png')\nset title '%s: attitude, the rotation vector w of each frame, "
             "[d1 d2 d3] = exp([w]x)'\nset ylabel 'w'\nplot \\\n", name);
  for (int fr = 0; fr < P->nframes; fr++)
    last = HsProblemFrameParent(P, fr) < 0 ? fr : last;
  for (int fr = 0; fr < P->nframes; fr++) {
    if (HsProblemFrameParent(P, fr) >= 0) {
      col++;
      continue;
    }
    FrameLabel(P, fr, 1, lab, sizeof lab);
    for (int i = 0; i < 3; i++, col++, first = 0)
      fprintf(f, "  'attitude.csv' using 1:%d with lines lw 4 lc %d title '%s w%d indirect', \\\n"
                 "  '' using 1:%d with lines lw 1.5 dt (6,4) lc 'black' title '%s'%s\n",
              col, col - 1, lab, i + 1, col + c->natt, first ? "direct (black, dashed)" : "",
              fr == last && i == 2 ? "" : ", \\");
  }
  if (!c->nrot)
    return;
  fprintf(f, "set output hs_png('rotor_rates.png')\nset title '%s: rotor rates relative to their parents on the intervals'\n"
             "set ylabel 'rate'\nset xrange [0:%.17g]\nplot \\\n", name, (double)c->ind->res.T);
  col = 2, first = 1;
  for (int fr = 0, r = 0; fr < P->nframes; fr++) {
    if (HsProblemFrameParent(P, fr) < 0) {
      col += 3;
      continue;
    }
    FrameLabel(P, fr, 1, lab, sizeof lab);
    fprintf(f,
            "  x0 = NaN, 'attitude.csv' using ($1-h):(d = (column(%d)-x0)/h, x0 = column(%d), d):(h):(0) with vectors "
            "nohead lw 4 lc %d title '%s indirect', \\\n"
            "  x0 = NaN, '' using ($1-h):(d = (column(%d)-x0)/h, x0 = column(%d), d):(h):(0) with vectors nohead lw 1.5 "
            "dt (6,4) lc 'black' title '%s'%s\n",
            col, col, r + 1, lab, col + c->natt, col + c->natt, first ? "direct (black, dashed)" : "",
            r + 1 < c->nrot ? ", \\" : "");
    col++, r++, first = 0;
  }
  fprintf(f, "set autoscale x\n");
}

/* One page per quantity: indirect solid, direct dashed, one colour per coordinate or control. */
static int WriteScript(FILE *f, void *ctx)
{
  Cmp     *c = ctx;
  char     name[2 * sizeof c->ind->prob->name]; /* the problem's name, as data (HsGnuplotString) */
  PetscInt m = c->ind->prob->m;

  HsGnuplotString(c->ind->prob->name, name, sizeof name);

  fprintf(f, "# hamshoot -hs_compare: indirect (%s states, %s costates) against direct (%s states, %s costates), N = %d.\n"
             "# Rerun with: gnuplot compare.gp (in this directory). Controls are interval values (steps, from\n"
             "# intervals.csv: t_mid is column 2, u1.. from column 3); q_i is column i+1 of trajectory.csv.\n",
          HsSolverStateName(c->ind), HsSolverCostateName(c->ind), c->dir->ss, c->dir->cs, (int)c->ind->N);
  fprintf(f, HS_GNUPLOT_PNG_FN "set datafile separator ','\nset terminal pngcairo size 1000,650 font ',11'\n"
             "set key outside right\n"
             "set grid\nset xlabel 't'\nI = 'indirect/trajectory.csv'\nD = 'direct/trajectory.csv'\n"
             "IU = 'indirect/intervals.csv'\nDU = 'direct/intervals.csv'\nh = %.17g\n",
          (double)(c->ind->res.T / c->ind->N));
  fprintf(f, "set output hs_png('controls.png')\nset title '%s: controls u(t) on the intervals%s'\nset ylabel 'u'\n", name,
          c->ind->res.bounds.active ? " (bounds dashed, switching times dotted)" : "");
  BoundsMarks(f, c->ind);
  fprintf(f, "plot \\\n");
  for (PetscInt j = 0; j < m; j++)
    fprintf(f, "  IU using ($2-h/2):%d:(h):(0) with vectors nohead lw 4 lc %d title 'u%d indirect', \\\n"
               "  DU using ($2-h/2):%d:(h):(0) with vectors nohead lw 1.5 dt (6,4) lc 'black' title '%s'%s\n",
            (int)j + 3, (int)j + 1, (int)j + 1, (int)j + 3, j ? "" : "direct (black, dashed)", j + 1 < m ? ", \\" : "");
  WriteCoordinatePages(f, c, name);
  if (c->natt)
    WriteAttitudePages(f, c, name);
  fprintf(f, "set output hs_png('energy_work.png')\nset title '%s: drift of E_k - W_k (energy minus discrete work)'\n"
             "set format y '%%.1e'\nset ylabel '(E - W) - (E_0 - W_0)'\nplot 'series.csv' using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'indirect', \\\n"
             "  '' using 1:3 with linespoints lw 2 dt 2 pt 6 ps 0.5 title 'direct'\n",
          name);
  fprintf(f, "set output hs_png('hamiltonian.png')\nset title '%s: discrete Hamiltonian H^d on the intervals'\n"
             "set format y '%%g'\nset ylabel 'H^d'\nplot 'series.csv' using 4:5 with linespoints lw 2 pt 7 ps 0.5 title 'indirect', \\\n"
             "  '' using 4:6 with linespoints lw 2 dt 2 pt 6 ps 0.5 title 'direct'\n",
          name);
  return ferror(f);
}

/* The pages: five, and with frames the attitude page and (with rotors) the rotors' rates. */
static void PagesOf(Cmp *c)
{
  static const char *const base[] = {"controls.png", "configurations.png", "velocities.png", "energy_work.png",
                                     "hamiltonian.png"};
  const HsProblem         *P      = c->ind->prob;

  c->npng = 0;
  for (int i = 0; i < 5; i++)
    c->pngs[c->npng++] = base[i];
  c->natt = HsProblemFrameColumns(P), c->nrot = 0;
  for (int fr = 0; c->natt && fr < P->nframes; fr++)
    c->nrot += HsProblemFrameParent(P, fr) >= 0;
  if (c->natt)
    c->pngs[c->npng++] = "attitude.png";
  if (c->nrot)
    c->pngs[c->npng++] = "rotor_rates.png";
}

/* The table on stdout. */
static PetscErrorCode PrintTable(MPI_Comm comm, Cmp *c, const char *dir, int plots)
{
  HsResults  *a = &c->ind->res, *b = &c->dir->res;
  HsSolverType td;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGetType(c->dir, &td));
  PetscCall(PetscPrintf(comm, "hamshoot compare: %s, N = %" PetscInt_FMT "\n", c->ind->prob->name, c->ind->N));
  PetscCall(PetscPrintf(comm, "                     %-24s %-24s\n", "indirect", "direct"));
  PetscCall(PetscPrintf(comm, "  states             %-24s %-24s\n", HsSolverStateName(c->ind), c->dir->ss));
  PetscCall(PetscPrintf(comm, "  costates           %-24s %-24s\n", HsSolverCostateName(c->ind), c->dir->cs));
  PetscCall(PetscPrintf(comm, "  solved by          %-24s %-24s\n", ((PetscObject)c->ind)->type_name, td));
  PetscCall(PetscPrintf(comm, "  converged          %-24s %-24s\n", a->converged ? "yes" : "NO", b->converged ? "yes" : "NO"));
  PetscCall(PetscPrintf(comm, "  iterations         %-24d %-24d\n", (int)a->newton_iterations, (int)b->newton_iterations));
  PetscCall(PetscPrintf(comm, "  J^d                %-24.12g %-24.12g\n", (double)a->J, (double)b->J));
  PetscCall(PetscPrintf(comm, "  H^d spread         %-24.3e %-24.3e\n", (double)a->H_spread, (double)b->H_spread));
  PetscCall(PetscPrintf(comm, "  E - W spread       %-24.3e %-24.3e\n", (double)a->energy_work_spread,
                        (double)b->energy_work_spread));
  PetscCall(PetscPrintf(comm, "  wall time          %-24.3f %-24.3f\n", (double)a->wall_time_s, (double)b->wall_time_s));
  PetscCall(PetscPrintf(comm, "  max |dq| %.3e  |dp| %.3e  |du| %.3e  |dlambda| %.3e  (indirect - direct)\n",
                        c->dq, c->dp, c->du, c->dl));
  PetscCall(PetscPrintf(comm, "  written            %s/compare.json, series.csv, compare.gp%s", dir,
                        c->natt ? ", attitude.csv" : ""));
  for (int i = 0; plots && i < c->npng; i++)
    PetscCall(PetscPrintf(comm, ", %s", c->pngs[i]));
  PetscCall(PetscPrintf(comm, ", indirect/, direct/\n"));
  PetscFunctionReturn(0);
}

/* Rank 0: the differences, series.csv, compare.gp, the plots, compare.json (last: its presence means
 * the directory is complete). *plots: whether gnuplot made them (a warning in err otherwise). */
static int WriteFiles(Cmp *c, const char *dir, int *plots, char *err, size_t len, char *warn, size_t wlen)
{
  int dfd, bad;

  if (Differences(c))
    return snprintf(err, len, "comparing the solutions failed"), 1;
  if (HsDirOpen(dir, 1, &dfd, err, len)) /* one descriptor of dir (the lock's: HsDirOpen), never its path */
    return 1;
  bad = HsWriteFileAtomicAt(dfd, dir, "series.csv", WriteSeries, c, err, len) ||
        (c->natt && HsWriteFileAtomicAt(dfd, dir, "attitude.csv", WriteAttitude, c, err, len)) ||
        HsWriteFileAtomicAt(dfd, dir, "compare.gp", WriteScript, c, err, len);
  if (!bad) {
    *plots = c->plotted = !HsRunGnuplot(dfd, dir, "compare.gp", c->pngs, c->npng, Interrupted, warn, wlen);
    bad    = HsWriteFileAtomicAt(dfd, dir, "compare.json", WriteCompareJSON, c, err, len);
  }
  close(dfd);
  return bad;
}

/* HsSolverCompare after the direct solver c->dir is made: both solves, their outputs, the comparison's files and
   table (c->ind the indirect solver). The caller frees c->dir. */
static PetscErrorCode CompareSolved(Cmp *c, const char *dir, PetscBool *converged)
{
  HsSolver    s    = c->ind;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt rank;
  char        path[PETSC_MAX_PATH_LEN], err[PETSC_MAX_PATH_LEN + 128] = "", warn[PETSC_MAX_PATH_LEN + 128] = "";
  int         bad = 0, plots = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(HsSolverSolve(c->dir)); /* first: from the same initial guess as the indirect solve */
  PetscCall(HsSolverSolve(s));
  {
    PetscBool stop;
    /* a poll of the indirect solve wrote the stop's checkpoint; else (it ended before its first poll) none: status 5 */
    PetscCall(HsSolverStopIfInterrupted(s, "-hs_compare", &stop));
    if (stop) { /* nothing compared; the caller exits as interrupted */
      *converged = PETSC_FALSE;
      PetscFunctionReturn(0);
    }
  }
  PagesOf(c);
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/indirect", dir));
  PetscCall(HsSolverWriteOutput(s, path));
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/direct", dir));
  PetscCall(HsSolverWriteOutput(c->dir, path));
  PetscCall(HsSolverGatherSolution(s, NULL)); /* -hs_output_format hdf5 did not gather them */
  PetscCall(HsSolverGatherSolution(c->dir, NULL));
  if (rank == 0)
    bad = WriteFiles(c, dir, &plots, err, sizeof err, warn, sizeof warn);
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "%s", err);
  PetscCallMPI(MPI_Bcast(&plots, 1, MPI_INT, 0, comm));
  { PetscReal d[4] = {c->dq, c->dp, c->du, c->dl};
    PetscCallMPI(MPI_Bcast(d, 4, MPIU_REAL, 0, comm));
    c->dq = d[0], c->dp = d[1], c->du = d[2], c->dl = d[3]; }
  PetscCall(PrintTable(comm, c, dir, plots));
  if (!plots)
    PetscCall(PetscPrintf(comm, "  warning            no plots: %s\n", warn));
  if (converged)
    *converged = (PetscBool)(s->res.converged && c->dir->res.converged);
  PetscFunctionReturn(0);
}

/*@ HsSolverCompare - compares the indirect against the direct solution on the same grid.

  Collective.

  Input Parameters:
+ s   - the solver, as configured
- dir - the output directory

  Output Parameter:
. converged - whether both solves converged (may be NULL)

  Options Database Key:
. -hs_compare - the hamshoot executable compares (into DIR of -o, default 'compare')

  Notes:
  Solves with s as configured, then the direct problem with s's state scheme on the same grid (its kkt costates;
  IPOPT unless HsSolverSetDirectSolver(s, HS_DIRECT_KKT); its options under -hs_direct_), writes dir/indirect/,
  dir/direct/, dir/compare.json (both summaries, max |dq|, |dp|, |du|, |dlambda|, both wall times),
  dir/series.csv, the gnuplot script dir/compare.gp and its five PNGs (with frames: dir/attitude.csv, attitude.png
  and rotor_rates.png), and prints a table.

  Rank 0 writes and runs gnuplot (Debian gnuplot-nox). Without gnuplot the script and data are written and a
  warning says so. Output errors are errors naming the path.

.seealso: HsSolverSetDirectSolver(), HsSolverWriteOutput(), HsSolverCheckExtremal()
@*/
PetscErrorCode HsSolverCompare(HsSolver s, const char *dir, PetscBool *converged)
{
  Cmp            c = {0};
  MPI_Comm       comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt    rank, size;
  char           path[PETSC_MAX_PATH_LEN], err[PETSC_MAX_PATH_LEN + 128] = "";
  int            bad = 0;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (rank == 0) /* the two sides' directories: absent or real directories, never written through a link */
    bad = HsCheckSubdir(dir, "indirect", err, sizeof err) || HsCheckSubdir(dir, "direct", err, sizeof err);
  for (int i = 0; rank == 0 && i < 2 && !bad; i++) { /* and no file of the user's in them is taken over */
    PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s", dir, i ? "direct" : "indirect"));
    bad = HsCheckOutputFiles(path, HS_OUTPUT_SOLVE, err, sizeof err);
  }
  if (rank == 0 && !bad) /* nor in dir at the comparison's own names */
    bad = HsCheckOutputFiles(dir, HS_OUTPUT_COMPARE, err, sizeof err);
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(err, sizeof err, MPI_CHAR, 0, comm));
  PetscCheck(!bad, comm, PETSC_ERR_FILE_WRITE, "-hs_compare: %s", err);
  PetscCall(HsSolverSetUp(s)); /* the schemes, N */
  PetscCall(HsSolverCreateDirect(s, HS_DIRECT_IPOPT, &c.dir));
  c.ind = s, c.size = size;
  ierr = CompareSolved(&c, dir, converged); /* the direct solver freed whatever its outcome: an error there (IPOPT
                                               not loadable, a file not written) had left it, and its objects, behind
                                               (issue 38, round 21) */
  PetscCall(HsSolverDestroy(&c.dir));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
