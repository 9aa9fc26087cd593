/* hamshoot: the transcription formulation (docs/theory.md section 3).
 *
 * Unknowns on a 1-D DMDA with N+1 points and 4n degrees of freedom per point:
 * point k holds (x_k, lambda_{k+1/2}); lambda_{N+1/2} is a dummy fixed to 0.
 * Equations at point k (all residuals are docs/theory.md section 2 times h):
 *   components 0..2n-1:   k < N: state equation of interval k;   k = N: x_N - x_T
 *   components 2n..4n-1:  0 < k < N: costate equation of node k;
 *                         k = 0: x_0 - x0 (initial state);       k = N: lambda_{N+1/2}
 * Stencil width 1: interval k couples points k and k+1, node k couples k-1..k+1.
 *
 * A free final time T (docs/free-final-time.md) takes the first dummy slot,
 * component 2n of point N, with the condition (1/N) sum_k H^d_{k+1/2} = d phi/dT
 * there. T enters every equation (h = T/N), so its column is dense, and the sum
 * makes its row dense: the Jacobian is preallocated for both (a bordered
 * block-banded matrix; the direct solver orders the border last).
 */
#include "constrainedimpl.h"
#include "transcriptionimpl.h"

/* A free T: the value at point N (owned by the last rank), to every rank; the problem and the
 * discretization take it. *ok is false for a T outside [T_min, T_max] or not positive. */
static PetscErrorCode ShareFinalTime(HsSolver s, DM da, const PetscScalar **x, PetscBool *ok)
{
  PetscInt    xs, xm;
  PetscMPIInt size;
  PetscReal   T = 0;
  PetscBool   bad;
  MPI_Comm    comm = PetscObjectComm((PetscObject)da);

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE;
  if (!s->prob->free_T)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  if (xs + xm == s->N + 1)
    T = x[s->N][2 * s->prob->n];
  PetscCall(HsSolverShareFinalTime(s, size - 1, T, &bad));
  *ok = (PetscBool)!bad;
  PetscFunctionReturn(0);
}

/* The free-final-time residual at point N: (1/N) sum_k (H^d_{k+1/2} + Q_k) - d phi/dT (x_N), Q_k the
 * terms of T in the data (HsDiscFreeTimeTerm; 0 without). Collective. */
static PetscErrorCode FinalTimeResidual(HsSolver s, DM da, const PetscScalar **x, PetscScalar **f, PetscBool *dom)
{
  PetscInt  xs, xm, dim = 2 * s->prob->n, N = s->N;
  PetscReal sum = 0, H, Q = 0, fT;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < PetscMin(xs + xm, N) && !*dom; k++) {
    HsCallStep(HsDiscHamiltonian(s->disc, (int)k, x[k], x[k + 1], x[k] + dim, &H), dom, "Hamiltonian", k);
    if (s->prob->data_T && !*dom)
      HsCallStep(HsDiscFreeTimeTerm(s->disc, (int)k, x[k], x[k + 1], x[k] + dim, &Q), dom, "dH^d/dT", k);
    sum += H + Q;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)da)));
  if (xs + xm == N + 1 && !*dom) {
    HsCallStep(HsDiscTerminalCostT(s->disc, x[N], &fT, NULL, NULL), dom, "d phi/dT", N);
    f[N][dim] = s->hold_T ? x[N][dim] - s->T_hold : sum / N - fT;
    if (s->prob->xT_T && !s->hold_T && !*dom) { /* terminal values x_T(T): - sum_fixed R_i dx_T,i/dT */
      PetscReal *R = ((HsTranscription *)s->data)->R, *dxT = R + dim;
      HsCallStep(HsDiscTerminalResidual(s->disc, x[N - 1], x[N], x[N - 1] + dim, R), dom, "terminal", N);
      HsCallStep(s->prob->xT_T(dxT, NULL, s->prob->ctx) ? HS_EDOM : 0, dom, "dxT/dT", N);
      for (PetscInt i = 0; i < dim && !*dom; i++)
        if (s->prob->xT_fixed[i])
          f[N][dim] -= R[i] * dxT[i];
    }
  }
  PetscFunctionReturn(0);
}

/* The residual F(X) (HsResidualFn); *dom on a domain error (on this rank). Collective. */
static PetscErrorCode Residual(HsSolver s, Vec X, Vec F, PetscBool *domp)
{
  const HsProblem    *P  = s->prob;
  DM                  da = ((HsTranscription *)s->data)->da;
  Vec                 Xl;
  const PetscScalar **x;
  PetscScalar       **f;
  PetscInt            xs, xm, k, i, dim = 2 * P->n, N = s->N;
  PetscBool           dom = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(HsDMGetGhosted(da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAVecGetArrayDOF(da, F, &f));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  {
    PetscBool ok;
    PetscCall(ShareFinalTime(s, da, x, &ok));
    dom = (PetscBool)!ok;
  }
  for (k = xs; k < xs + xm && !dom; k++) {
    if (k < N)
      HsCallStep(HsDiscStateResidual(s->disc, x[k], x[k + 1], x[k] + dim, f[k]), &dom, "state residual", k);
    else { /* fixed terminal components, or the transversality condition of a free one */
      PetscScalar *R = ((HsTranscription *)s->data)->R;
      if (s->has_free)
        HsCallStep(HsDiscTerminalResidual(s->disc, x[k - 1], x[k], x[k - 1] + dim, R), &dom, "terminal", k);
      for (i = 0; i < dim; i++)
        f[k][i] = P->xT_fixed[i] ? x[k][i] - P->xT[i] : R[i];
    }
    if (k == 0)
      for (i = 0; i < dim; i++)
        f[k][dim + i] = x[k][i] - P->x0[i];
    else if (k == N)
      for (i = 0; i < dim; i++)
        f[k][dim + i] = x[k][dim + i];
    else
      HsCallStep(
          HsDiscCostateResidual(s->disc, (int)k, x[k - 1], x[k], x[k + 1], x[k - 1] + dim, x[k] + dim, f[k] + dim),
          &dom, "costate residual", k);
  }
  if (P->free_T) /* collective: also after a local domain error, which it passes over */
    PetscCall(FinalTimeResidual(s, da, x, f, &dom));
  PetscCall(DMDAVecRestoreArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(DMDAVecRestoreArrayDOF(da, F, &f));
  PetscCall(HsDMRestoreGhosted(da, X, &Xl));
  *domp = dom;
  PetscFunctionReturn(0);
}

/* The local rows' values of the Jacobian, written in place by SetRows (HsAIJParts: the owned columns' part 0 and
 * the others' part 1, none on one rank); the local points [xs, xe). */
typedef struct {
  HsAIJParts p;
  PetscInt   xs, xe;
} RowValues;

/* RowValues of J (Pm: an AIJ matrix of CreateJacobian's pattern), until HsAIJPartsRestore(&rv->p). */
static PetscErrorCode GetRowValues(DM da, Mat J, RowValues *rv)
{
  PetscInt xm;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &rv->xs, NULL, NULL, &xm, NULL, NULL));
  rv->xe = rv->xs + xm;
  PetscCall(HsAIJPartsGet(J, PETSC_TRUE, &rv->p));
  PetscCheck(rv->p.ok, PetscObjectComm((PetscObject)J), PETSC_ERR_PLIB,
             "the Jacobian's rows are not available in place");
  PetscFunctionReturn(0);
}

/* Rows c0 .. c0 + dim - 1 of point k, whole: row r is row r of the nb dim x dim blocks blk (in the
 * order of their columns), block b in the columns of point pt[b], then, with T free, 0 in T's column
 * (point N's; FinalTimeJacobian's). Written in place (the pattern is CreateJacobian's, its columns in
 * this order): a block of a local point to the owned columns' part, another to the others' part, each
 * part's columns ascending as the blocks'. */
static PetscErrorCode SetRows(HsSolver s, RowValues *rv, PetscInt k, PetscInt c0, PetscInt nb, const PetscScalar *const *blk,
                              const PetscInt *pt)
{
  PetscInt        dim = 2 * s->prob->n, i0 = (k - rv->xs) * 2 * dim + c0;
  const PetscInt *id = rv->p.ia[0], *io = rv->p.ia[1]; /* the parts' row offsets (io: NULL on one rank) */

  PetscFunctionBeginUser;
  for (PetscInt r = 0; r < dim; r++) {
    PetscInt     i = i0 + r, nd = 0, no = 0;
    PetscScalar *d = rv->p.wa[0] + id[i], *o = io ? rv->p.wa[1] + io[i] : NULL;
    for (PetscInt b = 0; b < nb; b++) {
      PetscBool    own = (PetscBool)(pt[b] >= rv->xs && pt[b] < rv->xe);
      PetscScalar *dst = own ? d + nd : o + no;
      for (PetscInt e = 0; e < dim; e++)
        dst[e] = blk[b][r * dim + e];
      *(own ? &nd : &no) += dim;
    }
    if (s->prob->free_T && s->N < rv->xe)
      d[nd++] = 0;
    else if (s->prob->free_T)
      o[no++] = 0;
    PetscCheck(nd == id[i + 1] - id[i] && no == (io ? io[i + 1] - io[i] : 0), PETSC_COMM_SELF,
               PETSC_ERR_PLIB, "row %" PetscInt_FMT " of point %" PetscInt_FMT " does not fit the Jacobian's pattern", c0 + r, k);
  }
  PetscFunctionReturn(0);
}

/* Terminal values x_T(T) (a free T): the part -sum_fixed dx_T,i/dT R_i of T's row in the columns of
 * point k (N-1: x_{N-1}, lambda_{N-1/2}; N: x_N and T), added to v (dof values); R and its Jacobian
 * blocks from HsDiscTerminalResidual/-Jacobian, dR/dT = (R - lambda - grad phi)/T + d grad phi/dT. */
static PetscErrorCode MovingTargetRow(HsSolver s, const PetscScalar **x, PetscInt k, PetscReal *v, PetscBool *dom)
{
  const HsProblem *P = s->prob;
  PetscInt         dim = 2 * P->n, dd = dim * dim, N = s->N;
  PetscReal       *B, *R, *RT, *dxT, *d2xT;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc5(3 * dd, &B, dim, &R, dim, &RT, dim, &dxT, dim, &d2xT));
  HsCallStep(HsDiscTerminalResidualT(s->disc, x[N - 1], x[N], x[N - 1] + dim, R, RT), dom, "terminal", N);
  HsCallStep(HsDiscTerminalJacobian(s->disc, x[N - 1], x[N], x[N - 1] + dim, B, B + dd, B + 2 * dd), dom, "terminal", N);
  HsCallStep(P->xT_T(dxT, d2xT, P->ctx) ? HS_EDOM : 0, dom, "dxT/dT", N);
  for (PetscInt i = 0; i < dim && !*dom; i++) {
    if (!P->xT_fixed[i])
      continue;
    for (PetscInt c = 0; c < dim; c++)
      if (k == N - 1)
        v[c] -= dxT[i] * B[i * dim + c], v[dim + c] -= dxT[i] * B[2 * dd + i * dim + c]; /* x_{N-1}, lambda */
      else
        v[c] -= dxT[i] * B[dd + i * dim + c]; /* x_N */
    if (k == N)
      v[dim] -= dxT[i] * RT[i] + R[i] * d2xT[i];
  }
  PetscCall(PetscFree5(B, R, RT, dxT, d2xT));
  PetscFunctionReturn(0);
}

/* Point k's entries (dof) of T's column when only h = T/N and the terminal data depend on T: every
 * residual is linear in h with the form (difference) - h (scheme terms) (FinalTimeJacobian's head);
 * g, w: dim scratch each. */
static PetscErrorCode LinearColumn(HsSolver s, const PetscScalar **x, PetscInt k, PetscReal *v, PetscReal *g,
                                   PetscReal *w, PetscBool *dom)
{
  const HsProblem *P   = s->prob;
  PetscInt         dim = 2 * P->n, N = s->N, i;
  PetscReal        T = P->T;

  PetscFunctionBeginUser;
  if (k < N) {
    HsCallStep(HsDiscStateResidual(s->disc, x[k], x[k + 1], x[k] + dim, g), dom, "state residual", k);
    for (i = 0; i < dim; i++)
      v[i] = (g[i] - (x[k + 1][i] - x[k][i])) / T;
  } else {
    PetscScalar *R = ((HsTranscription *)s->data)->R;
    for (i = 0; i < dim; i++)
      v[i] = 0;
    if (s->has_free) { /* dR/dT of the free rows */
      HsCallStep(HsDiscTerminalResidualT(s->disc, x[k - 1], x[k], x[k - 1] + dim, R, w), dom, "terminal", k);
      for (i = 0; i < dim; i++)
        if (!P->xT_fixed[i])
          v[i] = w[i];
    }
    if (P->xT_T) { /* fixed rows x_N - x_T(T): -dx_T/dT */
      HsCallStep(P->xT_T(w, NULL, P->ctx) ? HS_EDOM : 0, dom, "dxT/dT", k);
      for (i = 0; i < dim; i++)
        if (P->xT_fixed[i])
          v[i] = -w[i];
    }
  }
  if (k > 0 && k < N) {
    HsCallStep(HsDiscCostateResidual(s->disc, (int)k, x[k - 1], x[k], x[k + 1], x[k - 1] + dim, x[k] + dim, g), dom,
               "costate residual", k);
    for (i = 0; i < dim; i++)
      v[dim + i] = (g[i] - (x[k][dim + i] - x[k - 1][dim + i])) / T;
  } else
    for (i = 0; i < dim; i++)
      v[dim + i] = 0;
  PetscFunctionReturn(0);
}

/* A free T: its column, d(every residual)/dT, and its row, the gradient of the condition of
 * FinalTimeResidual, inserted with global indices (1-D DMDA: point k, component c is k dof + c).
 * Every residual is linear in h = T/N with the form (difference) - h (scheme terms), so
 *   d F_k/dT = (F_k - (x_{k+1} - x_k)) / T,   d C_k/dT = (C_k - (lambda_{k+1/2} - lambda_{k-1/2})) / T,
 *   d R/dT  = (R - lambda_{N-1/2} - grad phi) / T + d grad phi/dT      (free terminal rows).
 * Row: columns x_j get (dH_{j-1}/dx_j + dH_j/dx_j) / N (minus d grad phi/dT at j = N), lambda_j get
 * dH_j/dlambda / N, T gets -d^2 phi/dT^2; each rank fills the columns it owns (ghost points give the
 * neighbouring intervals), so no entry is set twice. */
static PetscErrorCode FinalTimeJacobian(HsSolver s, DM da, const PetscScalar **x, const PetscScalar **c, Mat Pm,
                                        PetscBool *dom)
{
  const HsProblem *P = s->prob;
  PetscInt         xs, xm, dim = 2 * P->n, dof = 2 * dim, N = s->N, Tcol = N * dof + dim, i;
  PetscReal       *v, *g, *ga, *gb, *gl, *w, fT, fTT, *vals;
  PetscInt        *rows, *cols;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(PetscMalloc6(dof, &v, dim, &g, dim, &ga, dim, &gb, dim, &gl, dim, &w));
  PetscCall(PetscMalloc3(dof, &rows, dof, &cols, dof, &vals));
  for (PetscInt k = xs; k < xs + xm && !*dom; k++) {
    PetscInt r0 = k * dof, nr = 0, nc = 0, rowT = Tcol;
    /* column T: T in the data, the difference column (HsSolverFinalTimeColumn); else the linear one */
    if (c)
      for (i = 0; i < dof; i++)
        v[i] = c[k][i];
    else
      PetscCall(LinearColumn(s, x, k, v, g, w, dom));
    for (i = 0; i < dof; i++)
      if (!(k == N && i == dim)) /* the T row itself: below */
        rows[nr] = r0 + i, v[nr++] = v[i];
    if (*dom)
      break;
    for (i = 0; i < nr; i++)
      PetscCall(MatSetValues(Pm, 1, &rows[i], 1, &Tcol, &v[i], INSERT_VALUES));
    /* row T: the columns of point k */
    for (i = 0; i < dof; i++)
      v[i] = 0;
    for (int q = 0; q < (c ? 2 : 1); q++) { /* H^d, then the terms Q of T in the data */
      if (k > 0) {
        HsCallStep(q ? HsDiscFreeTimeTermGradient(s->disc, (int)k - 1, x[k - 1], x[k], x[k - 1] + dim, ga, gb, gl)
                     : HsDiscHamiltonianGradient(s->disc, (int)k - 1, x[k - 1], x[k], x[k - 1] + dim, ga, gb, gl),
                   dom, "Hamiltonian gradient", k);
        for (i = 0; i < dim; i++)
          v[i] += gb[i] / N;
      }
      if (k < N) {
        HsCallStep(q ? HsDiscFreeTimeTermGradient(s->disc, (int)k, x[k], x[k + 1], x[k] + dim, ga, gb, gl)
                     : HsDiscHamiltonianGradient(s->disc, (int)k, x[k], x[k + 1], x[k] + dim, ga, gb, gl),
                   dom, "Hamiltonian gradient", k);
        for (i = 0; i < dim; i++)
          v[i] += ga[i] / N, v[dim + i] += gl[i] / N;
      }
    }
    if (k == N) {
      HsCallStep(HsDiscTerminalCostT(s->disc, x[N], &fT, gb, &fTT), dom, "d phi/dT", k);
      for (i = 0; i < dim; i++)
        v[i] -= gb[i];
      v[dim] = -fTT;
    }
    if (P->xT_T && k >= N - 1 && !*dom)
      PetscCall(MovingTargetRow(s, x, k, v, dom));
    if (c && k == N)
      v[dim] = c[N][dim]; /* T's own entry, from the difference */
    for (i = 0; i < dof; i++)
      if (k < N || i <= dim)
        cols[nc] = r0 + i, vals[nc++] = s->hold_T ? (k == N && i == dim) : v[i];
    if (!*dom)
      PetscCall(MatSetValues(Pm, 1, &rowT, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(PetscFree6(v, g, ga, gb, gl, w));
  PetscCall(PetscFree3(rows, cols, vals));
  PetscFunctionReturn(0);
}

/* Appends the columns of point pt's components [c0, c0 + nc) to cols. */
static void AddColumns(PetscInt *cols, PetscInt *n, PetscInt dof, PetscInt pt, PetscInt c0, PetscInt nc)
{
  for (PetscInt e = 0; e < nc; e++)
    cols[(*n)++] = pt * dof + c0 + e;
}

/* The columns of row (k, c) of the Jacobian, exactly the blocks FormJacobian sets: state rows of
 * interval k: x_k, lambda_{k+1/2}, x_{k+1}; costate rows of node k: x_{k-1..k+1}, lambda_{k-1/2},
 * lambda_{k+1/2}; the boundary rows their identities (a free terminal state: x_{N-1}, lambda_{N-1/2},
 * x_N); a free T's column last (T's own row, dense, is not among these). At most 3 dof + 1. */
static void RowPattern(HsSolver s, PetscInt k, PetscInt c, PetscInt *cols, PetscInt *nc)
{
  PetscInt dim = 2 * s->prob->n, dof = 2 * dim, N = s->N;

  *nc = 0;
  if (c < dim && k < N) /* state equation of interval k */
    AddColumns(cols, nc, dof, k, 0, dof), AddColumns(cols, nc, dof, k + 1, 0, dim);
  else if (c < dim && s->has_free) /* terminal rows */
    AddColumns(cols, nc, dof, k - 1, 0, dof), AddColumns(cols, nc, dof, k, 0, dim);
  else if (c < dim)
    AddColumns(cols, nc, dof, k, 0, dim);
  else if (k == 0) /* x_0 - x0 */
    AddColumns(cols, nc, dof, 0, 0, dim);
  else if (k == N) /* lambda_{N+1/2} = 0 */
    AddColumns(cols, nc, dof, N, dim, dim);
  else /* costate equation of node k */
    AddColumns(cols, nc, dof, k - 1, 0, dof), AddColumns(cols, nc, dof, k, 0, dof), AddColumns(cols, nc, dof, k + 1, 0, dim);
  if (s->prob->free_T && !(k == N && c >= dim)) /* T's column (point N's lambda slots have it) */
    cols[(*nc)++] = N * dof + dim;
}

/* Column col of a row: to the owned columns' part (local index) or the others' (global); counted, and
 * stored where jd, jo are given. */
static void Put(PetscInt col, PetscInt cs, PetscInt ce, PetscInt *jd, PetscInt *d, PetscInt *jo, PetscInt *o)
{
  if (col >= cs && col < ce) {
    if (jd)
      jd[*d] = col - cs;
    (*d)++;
  } else {
    if (jo)
      jo[*o] = col;
    (*o)++;
  }
}

/* The Jacobian J, an AIJ matrix of the DMDA's rows with exactly its blocks (an explicit zero block
 * would widen the band the banded LU factors, and the work of every factorization and product), zero:
 * made from its local rows' CSR arrays, split into the owned columns' part and the others' (no
 * insertion, no copy; J owns the arrays). A free T adds its column to every row and its dense row
 * (FinalTimeJacobian). Collective. */
static PetscErrorCode CreateJacobian(HsSolver s, DM da, Mat *J)
{
  PetscInt     xs, xm, dim = 2 * s->prob->n, dof = 2 * dim, N = s->N, nall = (N + 1) * dof, m, cs, ce, nc;
  PetscInt    *ia, *ja, *oi, *oj, *cols;
  MPI_Comm     comm = PetscObjectComm((PetscObject)da);

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  m = xm * dof, cs = xs * dof, ce = cs + m;
  PetscCall(PetscMalloc1(3 * dof + 1, &cols));
  PetscCall(PetscCalloc1(m + 1, &ia));
  PetscCall(PetscCalloc1(m + 1, &oi));
  for (PetscInt pass = 0; pass < 2; pass++) { /* the rows' lengths, then their columns */
    if (pass) {
      PetscCall(PetscMalloc1(ia[m] + 1, &ja));
      PetscCall(PetscMalloc1(oi[m] + 1, &oj));
    }
    for (PetscInt k = xs, i = 0; k < xs + xm; k++)
      for (PetscInt c = 0; c < dof; c++, i++) {
        PetscInt d = 0, o = 0, *jd = pass ? ja + ia[i] : NULL, *jo = pass ? oj + oi[i] : NULL;
        if (s->prob->free_T && k == N && c == dim) /* T's row */
          for (PetscInt col = 0; col < nall; col++)
            Put(col, cs, ce, jd, &d, jo, &o);
        else {
          RowPattern(s, k, c, cols, &nc);
          for (PetscInt e = 0; e < nc; e++)
            Put(cols[e], cs, ce, jd, &d, jo, &o);
        }
        if (!pass)
          ia[i + 1] = d, oi[i + 1] = o;
      }
    for (PetscInt i = 0; !pass && i < m; i++) /* lengths to offsets */
      ia[i + 1] += ia[i], oi[i + 1] += oi[i];
  }
  PetscCall(PetscFree(cols));
  PetscCall(HsAIJCreateFromParts(comm, m, ia, ja, oi, oj, J)); /* J owns the arrays */
  PetscFunctionReturn(0);
}

static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx)
{
  HsSolver            s = ctx;
  DM                  da;
  Vec                 Xl;
  const PetscScalar **x;
  PetscInt            k, dim = 2 * s->prob->n, N = s->N;
  PetscScalar        *B, *Id;
  PetscBool           dom = PETSC_FALSE;
  Vec                 C   = NULL; /* T in the data: T's column by differences */
  const PetscScalar **c   = NULL;
  RowValues           rv;

  PetscFunctionBeginUser;
  PetscCall(MatSetUnfactored(Pm)); /* the last factorization in place (HsPCBandSetInPlace): every value is set below */
  PetscCall(SNESGetDM(snes, &da));
  if (s->prob->data_T) { /* before T is shared below: the differences move it */
    PetscCall(VecDuplicate(X, &C));
    PetscCall(HsSolverFinalTimeColumn(s, X, N * 2 * dim + dim, Residual, C, &dom));
    PetscCall(DMDAVecGetArrayDOFRead(da, C, (void *)&c));
  }
  PetscCall(PetscMalloc2(5 * dim * dim, &B, dim * dim, &Id));
  PetscCall(PetscArrayzero(Id, dim * dim));
  for (k = 0; k < dim; k++)
    Id[k * dim + k] = 1;
  if (s->prob->free_T) /* T's row and column: FinalTimeJacobian's entries added to zero */
    PetscCall(MatZeroEntries(Pm));
  PetscCall(HsDMGetGhosted(da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(da, Xl, (void *)&x));
  {
    PetscBool ok;
    PetscCall(ShareFinalTime(s, da, x, &ok));
    dom = (PetscBool)(dom || !ok);
  }
  PetscCall(GetRowValues(da, Pm, &rv));
  for (k = rv.xs; k < rv.xe && !dom; k++) {
    PetscScalar *B0 = B, *B1 = B + dim * dim, *B2 = B + 2 * dim * dim, *B3 = B + 3 * dim * dim, *B4 = B + 4 * dim * dim;
    const PetscScalar *st[3] = {B0, B2, B1}, *co[5] = {B0, B3, B1, B4, B2}, *id[1] = {Id}; /* columns' order */
    const PetscInt     pst[3] = {k, k, k + 1}, pterm[3] = {k - 1, k - 1, k}, pco[5] = {k - 1, k - 1, k, k, k + 1};
    if (k < N) {
      HsCallStep(HsDiscStateJacobian(s->disc, x[k], x[k + 1], x[k] + dim, B0, B1, B2), &dom, "state Jacobian", k);
      PetscCall(SetRows(s, &rv, k, 0, 3, st, pst));
    } else if (!s->has_free)
      PetscCall(SetRows(s, &rv, k, 0, 1, id, &k));
    else { /* free rows: the terminal Jacobian; fixed rows: identity on x_N */
      HsCallStep(HsDiscTerminalJacobian(s->disc, x[k - 1], x[k], x[k - 1] + dim, B0, B1, B2), &dom, "terminal", k);
      for (PetscInt r = 0; r < dim; r++)
        if (s->prob->xT_fixed[r])
          for (PetscInt c = 0; c < dim; c++)
            B0[r * dim + c] = B2[r * dim + c] = 0, B1[r * dim + c] = (r == c);
      PetscCall(SetRows(s, &rv, k, 0, 3, st, pterm));
    }
    if (k == 0 || (k == N && !s->prob->free_T)) /* a free T's dense row: its identity after the loop */
      PetscCall(SetRows(s, &rv, k, dim, 1, id, &k));
    else if (k < N) {
      HsCallStep(HsDiscCostateJacobian(s->disc, (int)k, x[k - 1], x[k], x[k + 1], x[k - 1] + dim, x[k] + dim, B0, B1,
                                       B2, B3, B4),
                 &dom, "costate Jacobian", k);
      PetscCall(SetRows(s, &rv, k, dim, 5, co, pco));
    }
  }
  if (dom) /* rows left unset (SNES goes on to solve in a build without PETSc's debugging: its Jacobian domain check is
              off, and its flag is never reset): zero rows, which every factorization finds singular, instead of
              the last factorization's values (in place) or the last iterate's */
    for (PetscInt q = 0; q < 2 && rv.p.part[q]; q++)
      PetscCall(PetscArrayzero(rv.p.wa[q], rv.p.ia[q][(rv.xe - rv.xs) * 2 * dim]));
  PetscCall(HsAIJPartsRestore(&rv.p));
  if (s->prob->free_T && N < rv.xe && !dom) /* T's dense row among lambda_{N+1/2}'s: the identity by entries */
    for (PetscInt i = 0; i < dim; i++) {
      PetscInt r = N * 2 * dim + dim + i;
      PetscCall(MatSetValue(Pm, r, r, 1.0, INSERT_VALUES));
    }
  if (s->prob->free_T && !dom)
    PetscCall(FinalTimeJacobian(s, da, x, c, Pm, &dom));
  if (C) {
    PetscCall(DMDAVecRestoreArrayDOFRead(da, C, (void *)&c));
    PetscCall(VecDestroy(&C));
  }
  PetscCall(DMDAVecRestoreArrayDOFRead(da, Xl, (void *)&x));
  PetscCall(HsDMRestoreGhosted(da, X, &Xl));
  PetscCall(PetscFree2(B, Id));
  if (s->prob->free_T) { /* T's entries by MatSetValue */
    PetscCall(MatAssemblyBegin(Pm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Pm, MAT_FINAL_ASSEMBLY));
  } else /* only values written in place into CreateJacobian's assembled pattern: no assembly (it scanned every row
            for the diagonal, inodes and empty rows: 4 % of a pendulum solve at N = 1e3, 1 % at 1e4);
            HsAIJPartsRestore invalidated the parts' cached diagonals and moved their states, and Pm's own state
            tells PCSetUp to factor again (test linesearch) */
    PetscCall(PetscObjectStateIncrease((PetscObject)Pm));
  if (Jm != Pm) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  if (dom)
    PetscCall(SNESSetJacobianDomainError(snes));
  PetscFunctionReturn(0);
}

/* The default initial guess, or the stored one: rows of HsSolverGuessRow at every local node. */
static PetscErrorCode Guess(HsSolver s, Vec X)
{
  PetscScalar **x;
  PetscInt      xs, xm;
  DM            da = ((HsTranscription *)s->data)->da;

  PetscFunctionBeginUser;
  PetscCall(DMDAVecGetArrayDOF(da, X, &x));
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < xs + xm; k++)
    PetscCall(HsSolverGuessRow(s, k, x[k]));
  PetscCall(DMDAVecRestoreArrayDOF(da, X, &x));
  PetscFunctionReturn(0);
}

/* The DMDA over the N+1 time points (4n unknowns each, stencil width 1), its vectors and its
 * (preallocated, assembled) Jacobian; the default linear solver (HsSolverSetDefaultPC). The grid is N's
 * alone: the DMDA takes no options (a -da_grid_x would change the grid behind N). */
static PetscErrorCode SetUp(HsSolver s)
{
  HsTranscription *tr  = s->data;
  PetscInt         dim = 2 * s->prob->n;
  PetscMPIInt      size;
  KSP              ksp;

  PetscFunctionBeginUser;
  if (s->scheme == HS_SCHEME_CONSERVING4) { /* the fourth-order conserving scheme's transcription takes over */
    PetscCall(HsOrder4SetUp(s));
    PetscFunctionReturn(0);
  }
  if (s->prob->nc) { /* holonomic constraints: the constrained scheme's transcription takes over */
    PetscCall(HsConstrainedSetUp(s, sizeof(HsConstrained)));
    PetscFunctionReturn(0);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  PetscCheck(s->N + 1 >= size, PetscObjectComm((PetscObject)s), PETSC_ERR_ARG_OUTOFRANGE,
             "N = %" PetscInt_FMT " intervals give %" PetscInt_FMT
             " time points, fewer than the %d MPI ranks; use a larger -N or fewer ranks",
             s->N, s->N + 1, size);
  PetscCall(DMDACreate1d(PetscObjectComm((PetscObject)s), DM_BOUNDARY_NONE, s->N + 1, 2 * dim, 1, NULL, &tr->da));
  PetscCall(DMSetUp(tr->da));
  PetscCall(PetscMalloc1(2 * dim, &tr->R)); /* R, and dx_T/dT (FinalTimeResidual) */
  PetscCall(DMCreateGlobalVector(tr->da, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  if (s->prob->free_T) /* a bordered pattern: the column and the row of T (in lambda_{N+1/2}'s first slot) */
    s->iT = s->N * 2 * dim + dim;
  PetscCall(CreateJacobian(s, tr->da, &s->Jac)); /* its exact pattern (not DMCreateMatrix's stencil) */
  PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscObjectReference((PetscObject)s->X));
  s->Xnodes       = s->X;
  s->res.segments = s->N; /* the M = N limit of shooting: one interval per segment */
  PetscCall(SNESSetDM(s->snes, tr->da));
  PetscCall(SNESSetFunction(s->snes, s->F, HsSolverFormFunction, s));
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, FormJacobian, s));
  s->jac_refill = FormJacobian; /* it sets every value of the matrix: the banded LU may factor in place */
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(HsSolverSetDefaultPC(s, ksp, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  PetscFunctionBeginUser;
  (void)s;
  PetscCall(PetscStrncpy(buf, "transcription", len));
  PetscFunctionReturn(0);
}

/*@ HsTranscriptionDestroy - frees the transcription's data, s->data included (bvp/impls internal; a
    formulation built on it, such as ipopt, calls it last from its own destroy). @*/
PetscErrorCode HsTranscriptionDestroy(HsSolver s)
{
  HsTranscription *tr = s->data;

  PetscFunctionBeginUser;
  PetscCall(DMDestroy(&tr->da));
  PetscCall(PetscFree(tr->R));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/*@ HsSolverCreate_Transcription - the transcription formulation (HSSOLVERTRANSCRIPTION, docs/theory.md
    section 3): all discrete equations as one sparse system in all unknowns, block-banded in time,
    distributed over the ranks as a 1-D DMDA, with the analytic Jacobian (exactly its blocks, written
    row by row) and a direct solve: by default the banded LU hsband for small node blocks, MUMPS
    otherwise (-hs_linear_solver). No options of its own.

  Collective; called by HsSolverSetType().
@*/
PetscErrorCode HsSolverCreate_Transcription(HsSolver s)
{
  HsTranscription *tr;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&tr));
  s->data = tr;
  PetscCall(HsTranscriptionSetOps(s));
  PetscFunctionReturn(0);
}

/*@ HsTranscriptionSetOps - the transcription's operations on s, whose s->data begins with an
    HsTranscription (bvp/impls internal): a formulation built on the transcription (ipopt) sets these
    first and then replaces what it does differently. Not collective. @*/
PetscErrorCode HsTranscriptionSetOps(HsSolver s)
{
  PetscFunctionBeginUser;
  s->ops->setup    = SetUp;
  s->ops->guess    = Guess;
  s->ops->describe = Describe;
  s->ops->destroy  = HsTranscriptionDestroy;
  s->ops->residual = Residual;
  PetscFunctionReturn(0);
}
