/* hamshoot: residual, Jacobian and matrix-free operator of multiple shooting
 * (docs/theory.md section 3, "Multiple shooting"; the layout in shootimpl.h).
 *
 * Outer residual (HsShootResidual, the SNES function through HsSolverFormFunction): per segment, continuity of x at its
 * end (or the terminal condition) and the costate equation at its start across
 * the boundary (or the initial condition); the costate stencil spans two
 * intervals, so costate continuity is not an equality. Only the end data of a
 * rank's last segment and the x-part of its first z cross ranks (mpi/).
 *
 * Jacobian: the march's sensitivities (costate/march.c) give, per segment s,
 *   B1  = d x_{k_{s+1}} / dz_s = S(x_b)           (and -[I 0] on z_{s+1})
 *   B2p = d C_{k_s} / dz_{s-1},  B2c = d C_{k_s} / dz_s   ([I 0] and 0 for s = 0)
 * kept per segment and inserted into an assembled matrix or applied by the
 * matrix-free shell.
 *
 * A free final time T (docs/free-final-time.md) is the last unknown, on the owner
 * of segment M-1, with the row (1/N) sum_k H^d_{k+1/2} - d phi/dT(x_N) = 0: the
 * march sums H^d and its gradient and carries a d/dh column in the sensitivities
 * (HsMarchSetFreeTime), so that every block gets a column for T (jT) and every
 * segment's z entries in T's row (hgrad / N).
 */
#include "shootimpl.h"

#include "../../costate/hsdense.h"

#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_eigen.h>

#define HS_SHOOT_GROWTH_IT 10     /* power iterations of a segment's growth per Jacobian (warm-started from the last) */
#define HS_SHOOT_GROWTH_RTOL 1e-2 /* ... or until its Collatz-Wielandt bounds agree to 1% */
#define HS_SHOOT_GROWTH_LOOSE 1.25 /* bounds further apart than this: the eigenvalues (GSL) instead */

/* The stored trajectory of local segment li: its rows (x_k, lambda_{k+1/2}), k = k_t .. k_{t+1}. */
static PetscReal *Traj(const HsShoot *sh, PetscInt li)
{
  return HsSegLayoutPoint(sh->seg, sh->traj, li, sh->knots[sh->seg->s0 + li]);
}

/* Marches local segment li from z (HsSegMarchFn); a failure is recorded as the diagnosis and sets *failed. */
static PetscErrorCode MarchSegment(HsSolver s, PetscInt li, const PetscScalar *z, PetscBool sens, void *ctx,
                                   PetscBool *failed)
{
  HsShoot *sh = s->data;
  PetscInt t = sh->seg->s0 + li, dim = 2 * s->prob->n, ws = 2 * dim + sh->ft;
  int      st;

  PetscFunctionBeginUser;
  (void)ctx;
  st = HsMarchSegment(sh->march, (int)sh->knots[t], (int)(sh->knots[t + 1] - sh->knots[t]), z, sh->marched[li],
                      Traj(sh, li), sens ? sh->sens + li * 4 * dim * ws : NULL, sens ? &sh->growth[li] : NULL);
  sh->marched[li] = (PetscBool)(st == HS_SUCCESS);
  if (!st && sh->ft) { /* the segment's sum of H^d (and its gradient) */
    const double *g;
    HsMarchGetHamiltonianSum(sh->march, &sh->hsum[li], &g);
    if (sens)
      PetscCall(PetscArraycpy(sh->hgrad + li * ws, g, ws));
  }
  if (st) {
    *failed = PETSC_TRUE;
    PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE, "segment %d, %s%s", (int)t, HsMarchGetFailure(sh->march),
                                   st == HS_ENOCONV ? "; see -hs_step_max_it, -hs_step_atol, -hs_step_stol" : ""));
  }
  PetscFunctionReturn(0);
}

/* End data of segment t as a packed array [x_{b-1}, lambda_{b-1/2}, x_b, S(x_{b-1}), S(lambda_{b-1/2}), S(x_b)]. */
static PetscErrorCode PackEnd(HsSolver s, HsShoot *sh, PetscInt t, PetscBool sens, PetscReal *buf)
{
  PetscInt dim = 2 * s->prob->n, w = 2 * dim, ws = w + sh->ft, li = t - sh->seg->s0,
           L   = sh->knots[t + 1] - sh->knots[t];
  PetscReal *T = Traj(sh, li);

  PetscFunctionBeginUser;
  PetscCall(PetscArraycpy(buf, T + (L - 1) * w, dim));
  PetscCall(PetscArraycpy(buf + dim, T + (L - 1) * w + dim, dim));
  PetscCall(PetscArraycpy(buf + 2 * dim, T + L * w, dim));
  if (sens)
    PetscCall(PetscArraycpy(buf + 3 * dim, sh->sens + li * 4 * dim * ws + dim * ws, 3 * dim * ws));
  PetscFunctionReturn(0);
}

/* Boundary exchange with the neighbouring ranks: the end data of this rank's last segment go to the
 * owner of the next segment, the x-part of this rank's first z to the owner of the previous one.
 * Received: sh->end_recv (end data of segment s0-1) and sh->znext (x-part of z_{s1}). */
static PetscErrorCode ExchangeNeighbors(HsSolver s, HsShoot *sh, const PetscScalar *z, PetscBool sens)
{
  PetscInt    dim = 2 * s->prob->n, cnt = 3 * dim + (sens ? 3 * dim * (2 * dim + sh->ft) : 0);
  PetscMPIInt prev, next;

  PetscFunctionBeginUser;
  if (sh->seg->s1 == sh->seg->s0)
    PetscFunctionReturn(0);
  PetscCall(HsSegmentLayoutNeighbors(sh->seg->ranks, &prev, &next));
  PetscCall(PackEnd(s, sh, sh->seg->s1 - 1, sens, sh->end_send));
  PetscCall(HsExchangeNeighbors(PetscObjectComm((PetscObject)s), prev, next, sh->end_send, cnt, sh->end_recv, z, dim,
                                sh->znext));
  PetscFunctionReturn(0);
}

/* End data of segment t - 1 (t >= 1), local or received. */
static PetscErrorCode PrevEnd(HsSolver s, HsShoot *sh, PetscInt t, PetscBool sens, const PetscReal **e)
{
  PetscFunctionBeginUser;
  *e = NULL;
  if (t == sh->seg->s0)
    *e = sh->end_recv;
  else {
    PetscCall(PackEnd(s, sh, t - 1, sens, sh->end_local));
    *e = sh->end_local;
  }
  PetscFunctionReturn(0);
}

/* Row block t of the residual (2 dim rows, owned with z_t):
 *   first half:  t < M-1: x_{k_{t+1}}(march of t) - x^{(t+1)}    (continuity)
 *                t = M-1: x_N(march of M-1) - x_T, or the transversality rows of free components
 *   second half: t = 0:   x^{(0)} - x0                            (initial condition)
 *                t >= 1:  C_{k_t}(x_{k_t-1}, x^{(t)}, x_{k_t+1}, lambda_{k_t-1/2}, lambda^{(t)})
 * *failed is set if an evaluation leaves the domain. */
static PetscErrorCode RowBlock(HsSolver s, HsShoot *sh, PetscInt t, const PetscScalar *zt, PetscScalar *ft,
                               PetscBool *failed)
{
  const HsProblem *P   = s->prob;
  PetscInt         dim = 2 * P->n, w = 2 * dim, L = sh->knots[t + 1] - sh->knots[t];
  const PetscReal *T = Traj(sh, t - sh->seg->s0), *xnext, *e;

  PetscFunctionBeginUser;
  xnext = t == sh->Mset - 1 ? P->xT : (t + 1 < sh->seg->s1 ? zt + w : sh->znext);
  for (PetscInt i = 0; i < dim; i++)
    ft[i] = T[L * w + i] - xnext[i];
  if (t == sh->Mset - 1 && s->has_free) {
    if (HsDiscTerminalResidual(s->disc, T + (L - 1) * w, T + L * w, T + (L - 1) * w + dim, sh->R)) {
      *failed = PETSC_TRUE;
      PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE, "segment %d, step %d: terminal condition failed", (int)t,
                                     (int)sh->knots[t + 1]));
    } else
      for (PetscInt i = 0; i < dim; i++)
        if (!P->xT_fixed[i])
          ft[i] = sh->R[i];
  }
  if (t == 0) {
    for (PetscInt i = 0; i < dim; i++)
      ft[dim + i] = zt[i] - P->x0[i];
    PetscFunctionReturn(0);
  }
  PetscCall(PrevEnd(s, sh, t, PETSC_FALSE, &e));
  if (HsDiscCostateResidual(s->disc, (int)sh->knots[t], e, zt, T + w, e + dim, zt + dim, ft + dim)) {
    *failed = PETSC_TRUE;
    PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE, "segment %d, step %d: costate equation across the boundary failed",
                                   (int)t, (int)sh->knots[t]));
  }
  PetscFunctionReturn(0);
}

/* A free T: its value from the owner (the last unknown there) to every rank; the problem and the
 * discretization (which the march uses) take it. *bad for a T outside [T_min, T_max] or not positive
 * (the same on every rank). Collective. */
static PetscErrorCode ShareFinalTime(HsSolver s, HsShoot *sh, const PetscScalar *z, PetscBool *bad)
{
  PetscMPIInt rank;
  PetscReal   T = 0;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  *bad = PETSC_FALSE;
  if (!sh->ft)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == sh->seg->last)
    T = z[(sh->seg->s1 - sh->seg->s0) * 4 * s->prob->n];
  PetscCall(HsSolverShareFinalTime(s, sh->seg->last, T, bad));
  PetscFunctionReturn(0);
}

/* A free T: the row of its condition, (1/N) sum_k H^d_{k+1/2} - d phi/dT (x_N) (or T - T_hold while
 * it is held), on the owner. Collective. */
static PetscErrorCode FinalTimeRow(HsSolver s, HsShoot *sh, const PetscScalar *z, PetscScalar *f, PetscBool *failed)
{
  PetscMPIInt rank;
  PetscReal   sum = 0, fT = 0;
  PetscInt    w = 4 * s->prob->n, nloc = sh->seg->s1 - sh->seg->s0;

  PetscFunctionBeginUser;
  if (!sh->ft)
    PetscFunctionReturn(0);
  for (PetscInt li = 0; li < nloc; li++)
    sum += sh->hsum[li];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank != sh->seg->last)
    PetscFunctionReturn(0);
  {
    PetscInt         t = sh->Mset - 1, L = sh->knots[t + 1] - sh->knots[t];
    const PetscReal *T = Traj(sh, t - sh->seg->s0);
    if (HsDiscTerminalCostT(s->disc, T + L * w, &fT, NULL, NULL)) {
      *failed = PETSC_TRUE;
      PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE, "d phi/dT cannot be evaluated at x_N"));
    }
  }
  f[nloc * w] = s->hold_T ? z[nloc * w] - s->T_hold : sum / s->N - fT;
  if (s->prob->xT_T && !s->hold_T && !*failed) { /* terminal values x_T(T): - sum_fixed R_i dx_T,i/dT */
    PetscInt         t = sh->Mset - 1, L = sh->knots[t + 1] - sh->knots[t];
    const PetscReal *T = Traj(sh, t - sh->seg->s0);
    PetscReal       *R = sh->Bk, *dxT = R + 2 * w;
    if (HsDiscTerminalResidual(s->disc, T + (L - 1) * w, T + L * w, T + (L - 1) * w + w / 2, R) ||
        s->prob->xT_T(dxT, NULL, s->prob->ctx)) {
      *failed = PETSC_TRUE;
      PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE, "the terminal residual cannot be evaluated at x_N"));
    } else
      for (PetscInt i = 0; i < w / 2; i++)
        if (s->prob->xT_fixed[i])
          f[nloc * w] -= R[i] * dxT[i];
  }
  PetscFunctionReturn(0);
}

/*@ HsShootResidual - the outer residual of multiple shooting (HsResidualFn; HsSolverFormFunction is
    the SNES function around it; bvp/ internal):
    marches every local segment from its z, exchanges boundary data, evaluates RowBlock for each
    local segment. A march or evaluation outside the domain is a SNES domain error (on every rank).
    Collective. @*/
PetscErrorCode HsShootResidual(HsSolver s, Vec X, Vec F, PetscBool *dom)
{
  HsShoot           *sh = s->data;
  PetscInt           w  = 4 * s->prob->n;
  const PetscScalar *z;
  PetscScalar       *f;
  PetscBool          failed;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &z));
  PetscCall(ShareFinalTime(s, sh, z, &failed));
  if (!failed)
    PetscCall(HsSegLayoutMarchAll(sh->seg, s, z, PETSC_FALSE, MarchSegment, NULL, &failed));
  if (failed) {
    PetscCall(VecRestoreArrayRead(X, &z));
    *dom = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  PetscCall(ExchangeNeighbors(s, sh, z, PETSC_FALSE));
  PetscCall(VecGetArray(F, &f));
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++)
    PetscCall(RowBlock(s, sh, t, z + (t - sh->seg->s0) * w, f + (t - sh->seg->s0) * w, &failed));
  PetscCall(FinalTimeRow(s, sh, z, f, &failed));
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(X, &z));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  *dom = failed;
  PetscFunctionReturn(0);
}

/* T in the problem's data: T's column of the outer Jacobian by differences of the outer residual
 * (HsSolverFinalTimeColumn) in place of jT and tt. The differences march every segment again
 * (without sensitivities), after the blocks have been taken from the sensitivity march. Collective. */
static PetscErrorCode FinalTimeColumn(HsSolver s, HsShoot *sh, Vec X, PetscBool *failed)
{
  PetscInt           w = 4 * s->prob->n, nloc = sh->seg->s1 - sh->seg->s0, N;
  PetscMPIInt        rank;
  Vec                C;
  const PetscScalar *c;

  PetscFunctionBeginUser;
  PetscCall(VecGetSize(X, &N));
  PetscCall(VecDuplicate(X, &C));
  PetscCall(HsSolverFinalTimeColumn(s, X, N - 1, HsShootResidual, C, failed));
  PetscCall(VecGetArrayRead(C, &c));
  PetscCall(PetscArraycpy(sh->jT, c, nloc * w));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank == sh->seg->last)
    sh->tt = c[nloc * w];
  PetscCall(VecRestoreArrayRead(C, &c));
  PetscCall(VecDestroy(&C));
  PetscFunctionReturn(0);
}

/* The terminal residual R of the last segment t through its march: G = dR/dz = Rxm S(x_{b-1}) +
 * RxN S(x_b) + Rlm S(lambda_{b-1/2}) (dim x ws, with a free T its last column dR/dh) into sh->G, and
 * with a free T R and its explicit derivative RT in T (HsDiscTerminalResidualT) into sh->Bk (2 dim). */
static PetscErrorCode TerminalSensitivities(HsSolver s, HsShoot *sh, PetscInt t, const PetscReal **R, const PetscReal **RT)
{
  PetscInt         dim = 2 * s->prob->n, w = 2 * dim, ws = w + sh->ft, dd = dim * dim, L = sh->knots[t + 1] - sh->knots[t];
  const PetscReal *T = Traj(sh, t - sh->seg->s0), *xm = T + (L - 1) * w, *xN = T + L * w, *lm = xm + dim;
  const PetscReal *Sown = sh->sens + (t - sh->seg->s0) * 4 * dim * ws;
  PetscReal       *Bk = sh->Bk, *G = sh->G, *Jb = Bk + 2 * dim; /* R, RT first; then Rxm, RxN, Rlm */
  int              st;

  PetscFunctionBeginUser;
  st = HsDiscTerminalJacobian(s->disc, xm, xN, lm, Jb, Jb + dd, Jb + 2 * dd);
  PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "terminal Jacobian failed");
  PetscCall(PetscArrayzero(G, dim * ws));
  HsMatMatAdd((int)dim, (int)dim, (int)ws, Jb, Sown + dim * ws, G);
  HsMatMatAdd((int)dim, (int)dim, (int)ws, Jb + dd, Sown + 3 * dim * ws, G);
  HsMatMatAdd((int)dim, (int)dim, (int)ws, Jb + 2 * dd, Sown + 2 * dim * ws, G);
  if (sh->ft) {
    st = HsDiscTerminalResidualT(s->disc, xm, xN, lm, Bk, Bk + dim);
    PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "terminal residual failed");
  }
  *R = Bk, *RT = Bk + dim;
  PetscFunctionReturn(0);
}

/* The free rows of B1 of the last segment, dR/dz (TerminalSensitivities), and with a free T their
 * column jT: dR/dh / N plus the explicit dR/dT. */
static PetscErrorCode TransversalityRows(HsSolver s, HsShoot *sh, PetscInt t, PetscReal *B1, PetscReal *jT)
{
  PetscInt         dim = 2 * s->prob->n, w = 2 * dim, ws = w + sh->ft;
  const PetscReal *R, *RT, *G = sh->G;

  PetscFunctionBeginUser;
  PetscCall(TerminalSensitivities(s, sh, t, &R, &RT));
  for (PetscInt i = 0; i < dim; i++)
    if (!s->prob->xT_fixed[i]) {
      for (PetscInt c = 0; c < w; c++)
        B1[i * w + c] = G[i * ws + c];
      if (sh->ft)
        jT[i] = G[i * ws + w] / s->N + RT[i];
    }
  PetscFunctionReturn(0);
}

/* The Jacobian blocks B1, B2p, B2c of local segment t into sh->jblk (file head); with a free T also
 * its column jT (2 dim) from the d/dh columns of the sensitivities and the explicit h-dependence. */
static PetscErrorCode SegmentBlocks(HsSolver s, HsShoot *sh, PetscInt t, const PetscScalar *zt)
{
  PetscInt         dim = 2 * s->prob->n, w = 2 * dim, ws = w + sh->ft, dd = dim * dim, N = s->N;
  const PetscReal *T = Traj(sh, t - sh->seg->s0), *Sown = sh->sens + (t - sh->seg->s0) * 4 * dim * ws, *e, *Se;
  PetscReal       *B1 = sh->jblk + (t - sh->seg->s0) * 3 * dim * w, *B2p = B1 + dim * w, *B2c = B1 + 2 * dim * w,
            *Bk       = sh->Bk;
  PetscReal       *jT = sh->jT + (t - sh->seg->s0) * w, *G = sh->G;
  int              st;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < dim; i++) { /* S(x_b), and its d/dh column / N */
    PetscCall(PetscArraycpy(B1 + i * w, Sown + 3 * dim * ws + i * ws, w));
    jT[i] = sh->ft ? Sown[3 * dim * ws + i * ws + w] / N : 0;
  }
  if (t == sh->Mset - 1 && s->has_free)
    PetscCall(TransversalityRows(s, sh, t, B1, jT));
  if (t == sh->Mset - 1 && s->prob->xT_T) { /* fixed rows x_b - x_T(T): also -dx_T/dT */
    PetscReal *dxT = sh->R;
    PetscCheck(s->prob->xT_T(dxT, NULL, s->prob->ctx) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "dxT/dT failed");
    for (PetscInt i = 0; i < dim; i++)
      if (s->prob->xT_fixed[i])
        jT[i] -= dxT[i];
  }
  PetscCall(PetscArrayzero(B2p, 2 * dim * w));
  PetscCall(PetscArrayzero(jT + dim, dim));
  if (t == 0) { /* initial condition */
    for (PetscInt i = 0; i < dim; i++)
      B2c[i * w + i] = 1;
    PetscFunctionReturn(0);
  }
  /* costate equation at k_t across the boundary */
  PetscCall(PrevEnd(s, sh, t, PETSC_TRUE, &e));
  Se = e + 3 * dim; /* S(x_{b-1}), S(lambda_{b-1/2}), S(x_b) of segment t-1 (dim x ws each) */
  st = HsDiscCostateJacobian(s->disc, (int)sh->knots[t], e, zt, T + w, e + dim, zt + dim, Bk, Bk + dd, Bk + 2 * dd,
                             Bk + 3 * dd, Bk + 4 * dd);
  PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "costate Jacobian across boundary %" PetscInt_FMT " failed",
             sh->knots[t]);
  PetscCall(PetscArrayzero(G, dim * ws)); /* Cxm S(x_{b-1}) + Clm S(lambda_{b-1/2}) */
  HsMatMatAdd((int)dim, (int)dim, (int)ws, Bk, Se, G);
  HsMatMatAdd((int)dim, (int)dim, (int)ws, Bk + 3 * dd, Se + dim * ws, G);
  for (PetscInt i = 0; i < dim; i++) {
    PetscCall(PetscArraycpy(B2p + i * w, G + i * ws, w));
    if (sh->ft)
      jT[dim + i] = G[i * ws + w] / N;
  }
  PetscCall(PetscArrayzero(G, dim * ws)); /* [Cx0  Clp] + Cxp S(x_{k_t+1}) */
  HsMatMatAdd((int)dim, (int)dim, (int)ws, Bk + 2 * dd, Sown, G);
  for (PetscInt i = 0; i < dim; i++) {
    for (PetscInt c = 0; c < dim; c++)
      B2c[i * w + c] = Bk[dd + i * dim + c] + G[i * ws + c], B2c[i * w + dim + c] = Bk[4 * dd + i * dim + c] + G[i * ws + dim + c];
    if (sh->ft)
      jT[dim + i] += G[i * ws + w] / N;
  }
  if (sh->ft && !s->prob->data_T) { /* the explicit h-dependence: dC/dT = (C - (lambda^{(t)} - lambda_{k-1/2})) / T
                                        (T in the data: FinalTimeColumn replaces jT) */
    st = HsDiscCostateResidual(s->disc, (int)sh->knots[t], e, zt, T + w, e + dim, zt + dim, sh->R);
    PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "costate residual across boundary failed");
    for (PetscInt i = 0; i < dim; i++)
      jT[dim + i] += (sh->R[i] - (zt[dim + i] - e[dim + i])) / s->prob->T;
  }
  PetscFunctionReturn(0);
}

/* Terminal values x_T(T), on the owner of T: T's row gains -sum_fixed dx_T,i/dT R_i (R_i the terminal
 * residual of the fixed component, its multiplier; docs/free-final-time.md): -sum dx_T,i dR_i/dz in
 * z_{M-1} (sh->tlast) and -sum [dx_T,i dR_i/dT + R_i d2x_T,i/dT2] (sh->tt), with dR/dz, dR/dh from the
 * march's sensitivities as in TransversalityRows and the explicit dR/dT. */
static PetscErrorCode MovingTargetRow(HsSolver s, HsShoot *sh, PetscInt t)
{
  const HsProblem *P   = s->prob;
  PetscInt         dim = 2 * P->n, w = 2 * dim, ws = w + 1, dd = dim * dim;
  const PetscReal *R, *RT, *G = sh->G;
  PetscReal       *dxT = sh->Bk + 2 * dim + 3 * dd, *d2xT = dxT + dim; /* after TerminalSensitivities' */

  PetscFunctionBeginUser;
  PetscCall(TerminalSensitivities(s, sh, t, &R, &RT));
  PetscCheck(P->xT_T(dxT, d2xT, P->ctx) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "dxT/dT failed");
  for (PetscInt i = 0; i < dim; i++) {
    if (!P->xT_fixed[i])
      continue;
    for (PetscInt c = 0; c < w; c++)
      sh->tlast[c] -= dxT[i] * G[i * ws + c];
    sh->tt -= dxT[i] * (G[i * ws + w] / s->N + RT[i]) + R[i] * d2xT[i];
  }
  PetscFunctionReturn(0);
}

/* A free T on its owner: the last segment's part of T's row beyond hgrad, -grad(d phi/dT)(x_N) S(x_N)
 * (sh->tlast), and d(T row)/dT = (1/N^2) sum_s dH_s/dh - d^2 phi/dT^2 - grad(d phi/dT) S_h(x_N) / N
 * (sh->tt). Collective (the sum). */
static PetscErrorCode FinalTimeRowJacobian(HsSolver s, HsShoot *sh)
{
  PetscInt    dim = 2 * s->prob->n, w = 2 * dim, ws = w + 1, N = s->N, nloc = sh->seg->s1 - sh->seg->s0;
  PetscReal   sum = 0, fT, fTT, *gT = sh->R;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  for (PetscInt li = 0; li < nloc; li++)
    sum += sh->hgrad[li * ws + w];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank != sh->seg->last)
    PetscFunctionReturn(0);
  {
    PetscInt         t = sh->Mset - 1, L = sh->knots[t + 1] - sh->knots[t];
    const PetscReal *T = Traj(sh, t - sh->seg->s0), *SxN = sh->sens + (t - sh->seg->s0) * 4 * dim * ws + 3 * dim * ws;
    int              st = HsDiscTerminalCostT(s->disc, T + L * w, &fT, gT, &fTT);
    PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "d phi/dT failed");
    sh->tt = sum / ((PetscReal)N * N) - fTT;
    for (PetscInt c = 0; c < w; c++)
      sh->tlast[c] = 0;
    for (PetscInt i = 0; i < dim; i++) {
      for (PetscInt c = 0; c < w; c++)
        sh->tlast[c] -= gT[i] * SxN[i * ws + c];
      sh->tt -= gT[i] * SxN[i * ws + w] / N;
    }
    if (s->prob->xT_T)
      PetscCall(MovingTargetRow(s, sh, t));
  }
  PetscFunctionReturn(0);
}

/* Adds an nr x nc block at (global) rows r0.., columns c0... */
static PetscErrorCode AddBlock(Mat J, PetscInt r0, PetscInt c0, PetscInt nr, PetscInt nc, const PetscReal *v)
{
  PetscInt ri[nr], ci[nc];

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < nr; i++)
    ri[i] = r0 + i;
  for (PetscInt i = 0; i < nc; i++)
    ci[i] = c0 + i;
  PetscCall(MatSetValues(J, nr, ri, nc, ci, v, ADD_VALUES));
  PetscFunctionReturn(0);
}

/* Inserts the blocks of the local segments (or, with pattern, zeros in their places) and assembles. */
static PetscErrorCode InsertBlocks(HsSolver s, HsShoot *sh, Mat Pm, PetscBool pattern)
{
  PetscInt   dim = 2 * s->prob->n, w = 2 * dim, rowT = 0;
  PetscReal *V, *Z;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc2(dim * w, &V, 3 * dim * w + w + 1, &Z));
  if (sh->ft) {
    PetscCall(VecGetSize(s->X, &rowT));
    rowT--; /* T is the last unknown */
  }
  for (PetscInt i = 0; i < dim && !pattern; i++)
    V[i * w + i] = -1;
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++) {
    const PetscReal *B1 = pattern ? Z : sh->jblk + (t - sh->seg->s0) * 3 * dim * w;
    PetscCall(AddBlock(Pm, t * w, t * w, dim, w, B1));
    if (t < sh->Mset - 1)
      PetscCall(AddBlock(Pm, t * w, (t + 1) * w, dim, w, V));
    if (t > 0)
      PetscCall(AddBlock(Pm, t * w + dim, (t - 1) * w, dim, w, B1 + dim * w));
    PetscCall(AddBlock(Pm, t * w + dim, t * w, dim, w, B1 + 2 * dim * w));
    if (sh->ft) { /* T's column in this block row, T's row in this block's columns */
      const PetscReal *jT = pattern ? Z : sh->jT + (t - sh->seg->s0) * w, *hg = sh->hgrad + (t - sh->seg->s0) * (w + 1);
      PetscReal       *row = Z + 3 * dim * w;
      PetscCall(AddBlock(Pm, t * w, rowT, w, 1, jT));
      for (PetscInt c = 0; c < w; c++)
        row[c] = pattern || s->hold_T ? 0 : hg[c] / s->N + (t == sh->Mset - 1 ? sh->tlast[c] : 0);
      PetscCall(AddBlock(Pm, rowT, t * w, 1, w, row));
      if (t == sh->Mset - 1) {
        PetscReal tt = pattern ? 0 : s->hold_T ? 1 : sh->tt;
        PetscCall(AddBlock(Pm, rowT, rowT, 1, 1, &tt));
      }
      if (pattern)
        PetscCall(PetscArrayzero(row, w));
    }
  }
  PetscCall(PetscFree2(V, Z));
  PetscCall(MatAssemblyBegin(Pm, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Pm, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/*@ HsShootAssemblePattern - assembles the block pattern of the outer Jacobian with zero values, so that
    the matrix is assembled (and its structure fixed) before the first Newton step. Collective. @*/
PetscErrorCode HsShootAssemblePattern(HsSolver s, Mat J)
{
  PetscFunctionBeginUser;
  PetscCall(InsertBlocks(s, s->data, J, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* A Jacobian evaluation that fails still leaves assembled matrices behind. */
static PetscErrorCode AssembleOnly(Mat Jm, Mat Pm)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(Pm, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Pm, MAT_FINAL_ASSEMBLY));
  if (Jm != Pm) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

/* Collatz-Wielandt bounds lo <= rho(A) <= hi of a nonnegative m x m matrix A, from v (positive; overwritten by the
 * last iterate, the scaling in which |D^{-1} A D|_inf = hi): at most HS_SHOOT_GROWTH_IT power iterations, until
 * hi <= (1 + HS_SHOOT_GROWTH_RTOL) lo. They iterate B = A - d I, d = the smallest diagonal entry (same Perron vector,
 * rho(B) = rho(A) - d: a map near the identity converges at the rate of its deviation from it), averaging each
 * iterate with the last (B + rho I: no oscillation between eigenvalues +-rho). u: scratch, m. */
static void PerronBounds(PetscInt m, const PetscReal *A, PetscReal *v, PetscReal *u, PetscReal *lo, PetscReal *hi)
{
  PetscReal d = PETSC_MAX_REAL;

  for (PetscInt i = 0; i < m; i++)
    d = PetscMin(d, A[i * m + i]);
  for (PetscInt it = 0; it < HS_SHOOT_GROWTH_IT; it++) {
    PetscReal top = 0;
    *lo = PETSC_MAX_REAL, *hi = 0;
    for (PetscInt i = 0; i < m; i++) {
      u[i] = -d * v[i];
      for (PetscInt j = 0; j < m; j++)
        u[i] += A[i * m + j] * v[j];
      *lo = PetscMin(*lo, u[i] / v[i]), *hi = PetscMax(*hi, u[i] / v[i]), top = PetscMax(top, u[i]);
    }
    *lo += d, *hi += d;
    if (*hi <= (1 + HS_SHOOT_GROWTH_RTOL) * *lo || !(*hi < PETSC_MAX_REAL) || !(top > 0))
      return;
    for (PetscInt i = 0; i < m; i++) /* v has max 1 */
      v[i] = PetscMax(0.5 * (u[i] / top + v[i]), 1e-200);
  }
}

/* The scale-invariant growth of local segment li (docs/shooting.md, "What the growth measures"): the Perron root
 * rho(|Phi|) of the entrywise modulus of its transition map Phi = d(x_b, lambda_{b-1/2})/dz (2 dim x 2 dim, the z
 * columns of the sensitivities). rho(|Phi|) = inf over positive diagonal D of |D^{-1} Phi D|_inf (Collatz-Wielandt):
 * the growth in the best scaling of the unknowns, >= every |eigenvalue| of Phi. *g: the upper bound of PerronBounds
 * (warm-started from the segment's last scaling) if it has converged (to HS_SHOOT_GROWTH_RTOL), or if it is within
 * HS_SHOOT_GROWTH_LOOSE of the lower one and both are on the same side of the limit; otherwise rho itself from the
 * eigenvalues (GSL, balanced). So the decision is exact and the value within 25% (mostly 1%) of rho.
 * PETSC_MAX_REAL if Phi is not finite. P: scratch 2 dim x 2 dim, u: 2 dim. */
static PetscErrorCode SegmentGrowth(HsShoot *sh, PetscInt dim, PetscInt li, PetscReal *P, PetscReal *u, PetscReal *g)
{
  PetscInt         ws = 2 * dim + sh->ft, m = 2 * dim;
  const PetscReal *S = sh->sens + li * 4 * dim * ws, *Sl = S + 2 * dim * ws, *Sx = S + 3 * dim * ws;
  PetscReal       *v = sh->perron + li * m;

  PetscFunctionBeginUser;
  *g = PETSC_MAX_REAL; /* an entry that overflowed: no digits left */
  for (PetscInt i = 0; i < dim; i++)
    for (PetscInt j = 0; j < m; j++) {
      if (PetscIsInfOrNanReal(Sx[i * ws + j]) || PetscIsInfOrNanReal(Sl[i * ws + j]))
        PetscFunctionReturn(0);
      P[i * m + j] = PetscAbsReal(Sx[i * ws + j]), P[(dim + i) * m + j] = PetscAbsReal(Sl[i * ws + j]);
    }
  PetscCall(HsShootPerronGrowth(m, P, v, u, sh->max_growth, g));
  PetscFunctionReturn(0);
}

/*@ HsShootPerronGrowth - the growth rho(|Phi|) of a transition map (docs/shooting.md, "What the growth measures";
    bvp/impls internal, also conserving4's shooting): from P = |Phi| (m x m, overwritten), the upper bound of
    PerronBounds warm-started from the scaling v (m; 0 in v[0]: none yet; updated), if converged or within
    HS_SHOOT_GROWTH_LOOSE of the lower bound and on the same side of max_growth; else rho from the eigenvalues (GSL,
    balanced). u: scratch, m. Not collective. @*/
PetscErrorCode HsShootPerronGrowth(PetscInt m, PetscReal *P, PetscReal *v, PetscReal *u, PetscReal max_growth,
                                   PetscReal *g)
{
  PetscReal                    lo, hi;
  gsl_matrix_view              Pv = gsl_matrix_view_array(P, (size_t)m, (size_t)m);
  gsl_vector_complex          *ev;
  gsl_eigen_nonsymm_workspace *wk;

  PetscFunctionBeginUser;
  if (!(v[0] > 0))
    for (PetscInt i = 0; i < m; i++)
      v[i] = 1;
  PerronBounds(m, P, v, u, &lo, &hi);
  *g = hi; /* converged, or within HS_SHOOT_GROWTH_LOOSE and the decision the same for every value in [lo, hi] */
  if (hi <= (1 + HS_SHOOT_GROWTH_RTOL) * lo ||
      (hi <= HS_SHOOT_GROWTH_LOOSE * lo && (hi <= max_growth || lo > max_growth)))
    PetscFunctionReturn(0);
  ev = gsl_vector_complex_alloc((size_t)m), wk = gsl_eigen_nonsymm_alloc((size_t)m);
  PetscCheck(ev && wk, PETSC_COMM_SELF, PETSC_ERR_MEM, "GSL workspace of the growth check");
  gsl_eigen_nonsymm_params(0, 1, wk); /* eigenvalues only, balanced */
  if (!gsl_eigen_nonsymm(&Pv.matrix, ev, wk)) {
    *g = 0;
    for (PetscInt i = 0; i < m; i++)
      *g = PetscMax(*g, gsl_complex_abs(gsl_vector_complex_get(ev, (size_t)i)));
  }
  gsl_vector_complex_free(ev), gsl_eigen_nonsymm_free(wk);
  PetscFunctionReturn(0);
}

/* The diagnosis of a growth g beyond max_growth (-hs_shoot_max_growth) in segment seg of M (knots: M + 1 nodes): advice
 * that can be followed. A segment of several intervals grows like e^{rate length}: segments short enough for a growth
 * of sqrt(max_growth) each. A single interval's growth is the scheme's own step (h rate), which more segments cannot
 * split: a finer grid or the transcription. */
static PetscErrorCode GrowthDiagnosis(HsSolver s, const PetscInt *knots, PetscInt M, PetscReal max_growth, int seg,
                                      double g)
{
  PetscInt  L = knots[seg + 1] - knots[seg], N = s->prob->N, Lmax, Msug;
  PetscReal r = 2 * PetscLogReal(g) / PetscLogReal(max_growth); /* > 2: length factor to a growth sqrt(max) */
  char      advice[320];

  PetscFunctionBeginUser;
  if (L > 1) {
    Lmax = PetscMax(1, (PetscInt)(L / r));
    Msug = PetscMin(N, PetscMax(M + 1, (N + Lmax - 1) / Lmax));
    PetscCall(PetscSNPrintf(advice, sizeof advice,
                            "use more segments (-hs_shoot_segments %d or more: segments of at most %d intervals)",
                            (int)Msug, (int)Lmax));
  } else
    PetscCall(PetscSNPrintf(advice, sizeof advice,
                            "the segment is a single interval, so more segments cannot help: this is the growth of one "
                            "step of the scheme (h times the problem's fastest rate); refine the grid (-N %d or more), "
                            "or use the transcription (-hs_bvp_type transcription), which marches nothing",
                            (int)PetscCeilReal(N * r)));
  PetscCall(HsSolverSetDiagnosis(
      s, PETSC_TRUE,
      "segment %d (nodes %d..%d): sensitivity growth %.1e (in the best scaling of the unknowns) exceeds "
      "-hs_shoot_max_growth %.3g; double precision carries about 16 digits, so the shooting residual cannot be "
      "resolved: %s",
      seg, (int)knots[seg], (int)knots[seg + 1], g, (double)max_growth, advice));
  PetscFunctionReturn(0);
}

/*@ HsShootGrowthReduce - the largest growth over all segments of M (knots: M + 1 nodes) from this rank's largest g
    (in its segment seg; -1: none) into the results, the largest sensitivity entry over the ranks from this rank's emax
    into *egrowth; beyond max_growth a diagnosis (more segments, or for a single interval a finer grid or the
    transcription) and *too_large (bvp/impls internal: both growth checks, the second-order and conserving4's).
    Collective. @*/
PetscErrorCode HsShootGrowthReduce(HsSolver s, const PetscInt *knots, PetscInt M, PetscReal max_growth, double g,
                                   int seg, PetscReal emax, PetscReal *egrowth, PetscBool *too_large)
{
  struct {
    double v;
    int    seg;
  } gl = {g, seg}, gmax;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&gl, &gmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, PetscObjectComm((PetscObject)s)));
  PetscCallMPI(MPI_Allreduce(&emax, egrowth, 1, MPIU_REAL, MPI_MAX, PetscObjectComm((PetscObject)s)));
  s->res.sensitivity_growth = gmax.v;
  *too_large                = (PetscBool)(gmax.v > max_growth);
  if (*too_large)
    PetscCall(GrowthDiagnosis(s, knots, M, max_growth, gmax.seg, gmax.v));
  PetscFunctionReturn(0);
}

/* The largest scale-invariant growth over all segments (SegmentGrowth), and the largest raw entry of the
 * sensitivities (sh->egrowth, reported only); beyond max_growth the march cannot carry the digits Newton needs:
 * a diagnosis, and *too_large. */
static PetscErrorCode GrowthCheck(HsSolver s, HsShoot *sh, PetscBool *too_large)
{
  PetscInt   dim = 2 * s->prob->n;
  PetscReal *P, *u, rho, emax = 1;
  double     g   = 1;
  int        seg = -1;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(4 * dim * dim, &P, 2 * dim, &u));
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++) {
    PetscCall(SegmentGrowth(sh, dim, t - sh->seg->s0, P, u, &rho));
    emax = PetscMax(emax, sh->growth[t - sh->seg->s0]);
    if (rho > g || PetscIsInfOrNanReal(rho))
      g = PetscIsInfOrNanReal(rho) ? PETSC_MAX_REAL : rho, seg = (int)t;
  }
  PetscCall(PetscFree2(P, u));
  PetscCall(HsShootGrowthReduce(s, sh->knots, sh->Mset, sh->max_growth, g, seg, emax, &sh->egrowth, too_large));
  PetscFunctionReturn(0);
}

/*@ HsShootFormJacobian - the exact outer Jacobian (SNES Jacobian; bvp/ internal): marches with
    sensitivities, checks their growth, computes each local segment's blocks and inserts them into
    Pm (nothing to insert for the matrix-free shell). A failed march, or a growth beyond
    -hs_shoot_max_growth, is a SNES Jacobian domain error. Collective. @*/
PetscErrorCode HsShootFormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx)
{
  HsSolver           s  = ctx;
  HsShoot           *sh = s->data;
  PetscInt           w  = 4 * s->prob->n;
  const PetscScalar *z;
  PetscBool          failed, shell;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &z));
  PetscCall(ShareFinalTime(s, sh, z, &failed));
  if (!failed)
    PetscCall(HsSegLayoutMarchAll(sh->seg, s, z, PETSC_TRUE, MarchSegment, NULL, &failed));
  if (!failed)
    PetscCall(GrowthCheck(s, sh, &failed));
  if (failed) {
    PetscCall(VecRestoreArrayRead(X, &z));
    PetscCall(AssembleOnly(Jm, Pm));
    PetscCall(SNESSetJacobianDomainError(snes));
    PetscFunctionReturn(0);
  }
  PetscCall(ExchangeNeighbors(s, sh, z, PETSC_TRUE));
  PetscCall(PetscLogEventBegin(HS_SHOOT_ASSEMBLY, 0, 0, 0, 0));
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++)
    PetscCall(SegmentBlocks(s, sh, t, z + (t - sh->seg->s0) * w));
  if (sh->ft)
    PetscCall(FinalTimeRowJacobian(s, sh));
  PetscCall(VecRestoreArrayRead(X, &z));
  if (sh->ft && s->prob->data_T) {
    PetscCall(FinalTimeColumn(s, sh, X, &failed));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
    if (failed) {
      PetscCall(PetscLogEventEnd(HS_SHOOT_ASSEMBLY, 0, 0, 0, 0));
      PetscCall(AssembleOnly(Jm, Pm));
      PetscCall(SNESSetJacobianDomainError(snes));
      PetscFunctionReturn(0);
    }
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)Pm, MATSHELL, &shell));
  if (!shell) {
    PetscCall(MatZeroEntries(Pm));
    PetscCall(InsertBlocks(s, sh, Pm, PETSC_FALSE));
  }
  PetscCall(AssembleOnly(Jm, Pm));
  PetscCall(PetscLogEventEnd(HS_SHOOT_ASSEMBLY, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* Matrix-free product y = J v with the blocks of the last Jacobian evaluation
 * (-hs_shoot_mf): exact, no global matrix. Needs v_{s0-1} from the previous
 * rank and the x-part of v_{s1} from the next one. */
static PetscErrorCode ShootMatMult(Mat J, Vec v, Vec y)
{
  HsSolver           s;
  HsShoot           *sh;
  PetscInt           dim, w;
  const PetscScalar *va;
  PetscScalar       *ya;
  PetscMPIInt        prev, next;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &s));
  sh = s->data, dim = 2 * s->prob->n, w = 2 * dim;
  PetscCall(VecGetArrayRead(v, &va));
  PetscCall(VecGetArray(y, &ya));
  if (sh->seg->s1 > sh->seg->s0) {
    PetscCall(HsSegmentLayoutNeighbors(sh->seg->ranks, &prev, &next));
    PetscCall(HsExchangeNeighbors(PetscObjectComm((PetscObject)s), prev, next, va + (sh->seg->s1 - sh->seg->s0 - 1) * w,
                                  w, sh->vprev, va, dim, sh->znext));
  }
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++) {
    const PetscReal   *B1 = sh->jblk + (t - sh->seg->s0) * 3 * dim * w, *B2p = B1 + dim * w, *B2c = B1 + 2 * dim * w;
    const PetscScalar *vt = va + (t - sh->seg->s0) * w, *vp = t == sh->seg->s0 ? sh->vprev : vt - w;
    const PetscScalar *vn = t + 1 < sh->seg->s1 ? vt + w : sh->znext;
    PetscScalar       *yt = ya + (t - sh->seg->s0) * w;
    for (PetscInt i = 0; i < dim; i++) {
      PetscScalar a = (t < sh->Mset - 1) ? -vn[i] : 0, b = 0;
      for (PetscInt c = 0; c < w; c++) {
        a += B1[i * w + c] * vt[c];
        b += B2c[i * w + c] * vt[c] + (t > 0 ? B2p[i * w + c] * vp[c] : 0);
      }
      yt[i] = a, yt[dim + i] = b;
    }
  }
  PetscCall(VecRestoreArrayRead(v, &va));
  PetscCall(VecRestoreArray(y, &ya));
  PetscFunctionReturn(0);
}

/*@ HsShootCreateMFOperator - the matrix-free Jacobian shell of -hs_shoot_mf (same layout as the
    assembled matrix; bvp/ internal). Collective. @*/
PetscErrorCode HsShootCreateMFOperator(HsSolver s, Mat *J)
{
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(s->X, &n));
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)s), n, n, PETSC_DETERMINE, PETSC_DETERMINE, s, J));
  PetscCall(MatShellSetOperation(*J, MATOP_MULT, (void (*)(void))ShootMatMult));
  PetscFunctionReturn(0);
}

/*@ HsShootPackNodes - marches the local segments from s->X itself, then copies their trajectories into s->Xnodes
    (node layout of the transcription: x_k, lambda_{k+1/2}; lambda_{N+1/2} = 0; bvp/ internal). The march is of X,
    not whatever was marched last: that was a rejected trial of a line search or a trust region, or T - dT of the
    differences of T's column (T in the data), and a solution written with it had junctions that do not match (H^d
    varying by 5e-4 on pendulum_T_data with -snes_type newtontr, a converged solve refused as not conserved; CI's
    sanitized run hit it by round-off). A march that fails on a converged solve is tried once more from a cold start
    (the warm one is the last marched trajectory); failing again, the solve is not converged (MARCH_FAILED) and the
    trajectory is what the march reached. Collective. @*/
PetscErrorCode HsShootPackNodes(HsSolver s)
{
  HsShoot           *sh = s->data;
  PetscInt           w = 4 * s->prob->n, off = 0;
  PetscScalar       *x;
  const PetscScalar *z;
  PetscBool          failed;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(s->X, &z));
  PetscCall(ShareFinalTime(s, sh, z, &failed)); /* a free T: X's, into the problem and the discretization */
  if (!failed)
    PetscCall(HsSegLayoutMarchAll(sh->seg, s, z, PETSC_FALSE, MarchSegment, NULL, &failed));
  if (failed && s->res.converged) { /* warm-started from a rejected trial's trajectory: once more from a cold start */
    PetscCall((*s->ops->resetiterate)(s)); /* shooting.c's ResetIterate: no stored march to start from */
    PetscCall(HsSegLayoutMarchAll(sh->seg, s, z, PETSC_FALSE, MarchSegment, NULL, &failed));
    if (failed) { /* the same on every rank: the solution written would not be X's */
      s->res.converged = PETSC_FALSE;
      PetscCall(PetscStrncpy(s->res.status, "MARCH_FAILED", sizeof s->res.status));
      PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "the march of the final iterate failed (%s)",
                                     HsMarchGetFailure(sh->march)));
    }
  }
  PetscCall(VecRestoreArrayRead(s->X, &z));
  PetscCall(VecGetArray(s->Xnodes, &x));
  for (PetscInt t = sh->seg->s0; t < sh->seg->s1; t++) {
    PetscInt   L = sh->knots[t + 1] - sh->knots[t];
    PetscReal *T = Traj(sh, t - sh->seg->s0);
    PetscCall(PetscArraycpy(x + off, T, L * w));
    off += L * w;
    if (t == sh->Mset - 1) {
      PetscCall(PetscArraycpy(x + off, T + L * w, w / 2));
      PetscCall(PetscArrayzero(x + off + w / 2, w / 2));
      if (sh->ft) /* the slot of a free T, as in the transcription */
        x[off + w / 2] = s->prob->T;
      off += w;
    }
  }
  PetscCall(VecRestoreArray(s->Xnodes, &x));
  PetscFunctionReturn(0);
}

/*@ HsShootSetFinalTimeEntry - a free T: its entry of X (the last unknown, on the owner of segment
    M-1) set to T. Not collective. @*/
PetscErrorCode HsShootSetFinalTimeEntry(HsSolver s, Vec X, PetscReal T)
{
  HsShoot    *sh = s->data;
  PetscMPIInt rank;
  PetscInt    n;
  PetscScalar *z;

  PetscFunctionBeginUser;
  if (!sh->ft)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (rank != sh->seg->last)
    PetscFunctionReturn(0);
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(VecGetArray(X, &z));
  z[n - 1] = T;
  PetscCall(VecRestoreArray(X, &z));
  PetscFunctionReturn(0);
}

/*@ HsShootGrowthJSON - summary.json's "sensitivity_growth" (the largest segment map's growth) and
    "sensitivity_entry_max" (its largest entry) members, null unless g > 0 and both are finite; both shooting
    formulations write them (bvp/ internal). @*/
void HsShootGrowthJSON(FILE *f, PetscReal g, PetscReal e)
{
  if (g > 0 && isfinite(g) && isfinite(e))
    fprintf(f, "  \"sensitivity_growth\": %.17g,\n  \"sensitivity_entry_max\": %.17g,\n", (double)g, (double)e);
  else
    fprintf(f, "  \"sensitivity_growth\": null,\n  \"sensitivity_entry_max\": null,\n");
}
