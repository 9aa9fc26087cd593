/* hamshoot: the diagnostics of a solution computed by every rank on its own nodes (-hs_output_format hdf5), without
 * the gather of the whole solution to rank 0 that diagnostics.c makes (docs/output-format.md: memory O(N/P) a rank).
 *
 * The same quantities as diagnostics.c's SumDiagnostics, reduced over the ranks: each rank evaluates the intervals
 * that begin at its nodes, with the last node of the rank before (its whole row: the balance of H^d and the suspect
 * test look one interval back) and the first states of the rank after as ghosts; W_k, the work before node k, is the
 * rank's own partial sum plus MPI_Exscan of the ranks before. The sums are taken in another order than rank 0's, so
 * the values differ from the gathered path's by round-off. */
#include "hsbvpimpl.h"

/* Whether the increment fb - fa of a function between the nodes and the midpoint rule lin = grad f(midpoint) . (b - a)
   differ as across a pole (HsIntervalSuspect): by more than half the larger and by more than 1e-2 (1 + |fa| + |fb|). */
static PetscBool Stepped(PetscReal fa, PetscReal fb, PetscReal lin)
{
  PetscReal df = fb - fa, diff = PetscAbsReal(df - lin);
  if (PetscIsInfOrNanReal(lin) || PetscIsInfOrNanReal(df))
    return PETSC_TRUE;
  return (PetscBool)(diff > 0.5 * PetscMax(PetscAbsReal(df), PetscAbsReal(lin)) &&
                     diff > 1e-2 * (1 + PetscAbsReal(fa) + PetscAbsReal(fb)));
}

/* The running cost's and a B(q)'s part of HsIntervalSuspect: each entry of B(q) and the running cost at the
   interval's midpoint time tm (its increment in x taken at tm, so that a cost depending on t is judged at one time). */
static PetscBool SuspectCostB(const HsProblem *P, const PetscScalar *a, const PetscScalar *b, PetscReal tm,
                              const PetscReal *xm, PetscReal *g, PetscReal *B)
{
  PetscInt  n = P->n, m = P->m, dim = 2 * n, nm = n * m;
  PetscReal fa, fb, lin = 0;
  PetscBool sus = PETSC_FALSE;

  if (P->ell.f && P->ell.grad) {
    if (P->ell.f(tm, a, &fa, P->ctx) || P->ell.f(tm, b, &fb, P->ctx) || P->ell.grad(tm, xm, g, P->ctx))
      return PETSC_TRUE;
    for (PetscInt i = 0; i < dim; i++)
      lin += g[i] * (b[i] - a[i]);
    if (Stepped(fa, fb, lin))
      return PETSC_TRUE;
  }
  if (!P->Bq)
    return PETSC_FALSE; /* constant B */
  if (P->Bq(a, B, NULL, NULL, P->ctx) || P->Bq(b, B + nm, NULL, NULL, P->ctx) ||
      P->Bq(xm, B + 2 * nm, B + 3 * nm, NULL, P->ctx))
    sus = PETSC_TRUE; /* not finite at a node or the midpoint */
  for (PetscInt e = 0; e < nm && !sus; e++) { /* B_e(b) - B_e(a) against dB_e/dq (midpoint) . (q_b - q_a) */
    lin = 0;
    for (PetscInt l = 0; l < n; l++)
      lin += B[3 * nm + e * n + l] * (b[l] - a[l]);
    sus = Stepped(B[e], B[nm + e], lin);
  }
  return sus;
}

/*@ HsIntervalSuspectWorkSize - the reals of HsIntervalSuspect's work array for problem P: the midpoint and a gradient
    (2n each) and, for a B(q), B at both nodes and the midpoint and its derivative (n m (3 + n)). bvp/ internal. @*/
PetscInt HsIntervalSuspectWorkSize(const HsProblem *P)
{
  return 4 * P->n + (P->Bq ? P->n * P->m * (3 + P->n) : 0);
}

/*@ HsIntervalSuspect - whether interval k (nodes a, b: 2n states each; tm its midpoint time) may cross a singularity of
 * the problem's data (a pole that the nodes step over; docs/reliability.md): the energy's increment E(b) - E(a) and the
 * midpoint rule grad E((a + b)/2) . (b - a) agree to O(h^3) for a smooth E, and a pole crossed between the nodes makes
 * them differ by more than either (the 1/q pendulum: 1.34 against -0.47). Flagged: an evaluation at the midpoint that
 * fails, or the two differing by more than half the larger and by more than 1e-2 (1 + |E(a)| + |E(b)|). The same test
 * for the running cost and each entry of a B(q) (SuspectCostB: a pole of either crossed inside an interval had
 * converged without a word, issue 38 round 23). work: HsIntervalSuspectWorkSize(P) reals, allocated once by the
 * caller for all intervals. bvp/ internal (diagnostics.c, diagdist.c); not collective. @*/
PetscBool HsIntervalSuspect(const HsProblem *P, const PetscScalar *a, const PetscScalar *b, PetscReal tm, PetscReal Ea,
                            PetscReal Eb, PetscReal *work)
{
  PetscInt  dim = 2 * P->n;
  PetscReal lin = 0, *xm = work, *g = work + dim;

  for (PetscInt i = 0; i < dim; i++)
    xm[i] = 0.5 * (a[i] + b[i]);
  if (P->E.grad) {
    if (P->E.grad(xm, g, P->ctx))
      return PETSC_TRUE;
    for (PetscInt i = 0; i < dim; i++)
      lin += g[i] * (b[i] - a[i]);
    if (Stepped(Ea, Eb, lin))
      return PETSC_TRUE;
  }
  return SuspectCostB(P, a, b, tm, xm, g, work + 2 * dim);
}

/* The ghosts of the nodes k0 .. k0 + nn - 1 of X (node layout, N + 1 nodes): the whole row of node k0 - 1 (4n values,
 * if k0 > 0) and the states of node k0 + nn (2n, if k0 + nn <= N), in this order, into the sequential *g. */
static PetscErrorCode Ghosts(HsSolver s, Vec X, PetscInt k0, PetscInt nn, Vec *g)
{
  PetscInt   dim = 2 * s->prob->n, np = nn && k0 > 0 ? 2 * dim : 0, nx = nn && k0 + nn <= s->N ? dim : 0, *idx;
  IS         is;
  VecScatter sc;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(np + nx + 1, &idx));
  for (PetscInt i = 0; i < np; i++)
    idx[i] = (k0 - 1) * 2 * dim + i;
  for (PetscInt i = 0; i < nx; i++)
    idx[np + i] = (k0 + nn) * 2 * dim + i;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, np + nx, idx, PETSC_OWN_POINTER, &is));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, np + nx, g));
  PetscCall(VecScatterCreate(X, is, *g, NULL, &sc));
  PetscCall(VecScatterBegin(sc, X, *g, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, X, *g, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(0);
}

/* What a rank gathers: sums (J^d, sum of H^d, the suspect count), minima and maxima (H^d, E_k - partial W_k, the
 * partial W_k, the balance, the scales of the terms), the first suspect interval, the domain flag. */
typedef struct {
  PetscReal J, Hsum, nsus;
  PetscReal Hmin, EWmin, Wmin, first;
  PetscReal Hmax, EWmax, Wmax, bal, Emax, hterms, bad;
} Acc;

/* Interval k (its nodes xk, xk1, costates lk) into a: H^d (*H), L^d, the work (*w), the size of H^d's terms. */
static int Interval(HsSolver s, PetscInt k, const PetscScalar *xk, const PetscScalar *xk1, const PetscScalar *lk,
                    PetscReal *H, PetscReal *w, Acc *a)
{
  PetscInt  dim = 2 * s->prob->n;
  PetscReal L = 0, lx = 0;
  int st = HsDiscHamiltonian(s->disc, (int)k, xk, xk1, lk, H) || HsDiscRunningCost(s->disc, (int)k, xk, xk1, lk, &L) ||
           HsDiscWork(s->disc, xk, xk1, lk, w);

  for (PetscInt i = 0; i < dim; i++) /* term by term, as SumDiagnostics */
    lx += PetscAbsReal(lk[i] * (xk1[i] - xk[i]));
  a->J += HsDiscGetStep(s->disc) * L;
  a->hterms = PetscMax(a->hterms, PetscAbsReal(L) + lx / HsDiscGetStep(s->disc));
  a->Hsum += *H;
  a->Hmin = PetscMin(a->Hmin, *H), a->Hmax = PetscMax(a->Hmax, *H);
  return st;
}

/* The rank's nodes k0 .. k0 + nn - 1 (rows x, ghosts g: Ghosts) into a, in the order of SumDiagnostics. */
static int Sweep(HsSolver s, const PetscScalar *x, const PetscScalar *g, PetscInt k0, PetscInt nn, PetscReal *work,
                 Acc *a, PetscReal *Wtot)
{
  PetscInt           dim = 2 * s->prob->n, N = s->N;
  const PetscScalar *prev = k0 > 0 && nn ? g : NULL, *next = g + (prev ? 2 * dim : 0);
  PetscReal          W = 0, E, Eprev = 0, Hprev = 0, H, w, Dt;
  int                st = 0;

  if (prev) { /* interval k0 - 1, for the balance and the suspect test at k0 */
    Acc dummy = *a;
    st        = HsDiscEnergy(s->disc, prev, &Eprev) || Interval(s, k0 - 1, prev, x, prev + dim, &Hprev, &w, &dummy);
  }
  for (PetscInt j = 0; j < nn && !st; j++) {
    const PetscScalar *xk = x + j * 2 * dim, *xk1 = j + 1 < nn ? xk + 2 * dim : next;
    const PetscScalar *xp = j ? xk - 2 * dim : prev;
    PetscInt           k  = k0 + j;
    st                    = HsDiscEnergy(s->disc, xk, &E);
    if (k > 0 && !st && /* interval k - 1 */
        HsIntervalSuspect(s->prob, xp, xk, (k - 0.5) * HsDiscGetStep(s->disc), Eprev, E, work)) {
      if (!a->nsus++)
        a->first = PetscMin(a->first, (PetscReal)(k - 1));
    }
    Eprev    = E;
    a->EWmin = PetscMin(a->EWmin, E - W), a->EWmax = PetscMax(a->EWmax, E - W);
    a->Wmin = PetscMin(a->Wmin, W), a->Wmax = PetscMax(a->Wmax, W), a->Emax = PetscMax(a->Emax, PetscAbsReal(E));
    if (k < N && !st) {
      st = Interval(s, k, xk, xk1, xk + dim, &H, &w, a);
      W += w;
      if (k > 0 && !st) {
        st     = HsDiscEllTimeChange(s->disc, (int)k, xp, xk1, &Dt);
        a->bal = PetscMax(a->bal, PetscAbsReal(H - Hprev + 0.5 * Dt));
      }
      Hprev = H;
    }
    if (k == N && !st) { /* J^d = h sum L^d + phi(x_N) */
      PetscReal phi;
      st = HsDiscTerminalCost(s->disc, xk, &phi);
      a->J += phi;
    }
  }
  *Wtot = W;
  return st;
}

/*@ HsSolverDiagnosticsDistributed - the diagnostics of diagnostics.c's SumDiagnostics (out[0..10]: J^d, mean, min
    and max H^d, the spread of E - W, the H^d balance, the suspect intervals' count, the domain flag, the first suspect
    interval or -1, the scales of E - W's and H^d's terms) for X in the node layout, each rank on its own nodes, reduced
    over the ranks: no rank holds more than its part of X and a few ghost rows (bvp/ internal; -hs_output_format
    hdf5). out[9] is max |E_k| + max |W_k| (the gathered path: max over k of |E_k| + |W_k|, at most that). Collective;
    the same out on every rank.
@*/
PetscErrorCode HsSolverDiagnosticsDistributed(HsSolver s, Vec X, PetscReal *out)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)s);
  PetscInt           w    = 4 * s->prob->n, lo, hi;
  PetscReal          Wloc = 0, W0 = 0, *work;
  PetscMPIInt        rank;
  Acc                a = {0,
                          0,
                          0,
                          PETSC_MAX_REAL,
                          PETSC_MAX_REAL,
                          PETSC_MAX_REAL,
                          PETSC_MAX_REAL,
                          -PETSC_MAX_REAL,
                          -PETSC_MAX_REAL,
                          -PETSC_MAX_REAL,
                          0,
                          0,
                          0,
                          0};
  Vec                g;
  const PetscScalar *x, *gh;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecGetOwnershipRange(X, &lo, &hi));
  PetscCall(Ghosts(s, X, lo / w, (hi - lo) / w, &g));
  PetscCall(PetscMalloc1(HsIntervalSuspectWorkSize(s->prob), &work));
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArrayRead(g, &gh));
  a.bad = Sweep(s, x, gh, lo / w, (hi - lo) / w, work, &a, &Wloc) ? 1 : 0;
  PetscCall(VecRestoreArrayRead(g, &gh));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(PetscFree(work));
  PetscCall(VecDestroy(&g));
  PetscCallMPI(MPI_Exscan(&Wloc, &W0, 1, MPIU_REAL, MPIU_SUM, comm)); /* the work before this rank's first node */
  if (rank && hi > lo) /* MPI_Exscan leaves rank 0's undefined; a rank without nodes keeps its sentinels */
    a.EWmin -= W0, a.EWmax -= W0, a.Wmin += W0, a.Wmax += W0;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &a.J, 3, MPIU_REAL, MPIU_SUM, comm));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &a.Hmin, 4, MPIU_REAL, MPIU_MIN, comm));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &a.Hmax, 7, MPIU_REAL, MPIU_MAX, comm));
  out[0] = a.J, out[1] = a.Hsum / s->N, out[2] = a.Hmin, out[3] = a.Hmax, out[4] = a.EWmax - a.EWmin, out[5] = a.bal;
  out[6] = a.nsus, out[7] = a.bad, out[8] = a.nsus > 0 ? a.first : -1;
  out[9] = a.Emax + PetscMax(PetscAbsReal(a.Wmin), PetscAbsReal(a.Wmax)), out[10] = a.hterms;
  if (a.bad)
    for (int i = 0; i < 6; i++)
      out[i] = NAN; /* undefined: reported as null */
  PetscFunctionReturn(0);
}
