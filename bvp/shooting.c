/* hamshoot: distributed multiple shooting of the discrete necessary conditions
 * (DESIGN.md section 3, "Multiple shooting").
 *
 * Segments s = 0..M-1 span the nodes k_s..k_{s+1} (k_0 = 0, k_M = N). Segment s
 * owns z_s = (x_{k_s}, lambda_{k_s+1/2}) in R^{2 dim}, dim = 2n; for s = 0 the
 * x-part is pinned by the equation x_0 - x0 = 0, which keeps every block 2 dim wide.
 *
 * March (serial, per segment; costate/ residuals, GSL LU):
 *   step k_s:           solve F(x_{k_s}, x_{k_s+1}, lambda_{k_s+1/2}) = 0 for x_{k_s+1}
 *   step k > k_s:       solve [C_k(x_{k-1}, x_k, x_{k+1}, lambda_{k-1/2}, lambda_{k+1/2});
 *                              F_k(x_k, x_{k+1}, lambda_{k+1/2})] = 0 for (x_{k+1}, lambda_{k+1/2})
 * with a dense Newton started from the linear extrapolation of the previous step.
 * Sensitivities d(x_j, lambda_j)/dz_s follow by the implicit function theorem,
 * with the step Jacobian evaluated and factored at the converged step.
 *
 * Outer residual (HsShootFormFunction): per segment, continuity of x at its
 * end (or the terminal condition) and the costate equation at its start across
 * the boundary (or the initial condition); the costate stencil spans two
 * intervals, so costate continuity is not an equality. Only the end data of a
 * rank's last segment and the x-part of its first z cross ranks (mpi/exchange.c).
 */
#include "hsbvpimpl.h"

#include <gsl/gsl_linalg.h>
#include <stdio.h>

static PetscLogEvent HS_EVENT_MARCH, HS_EVENT_SENS, HS_EVENT_ASSEMBLY;

PetscErrorCode HsShootRegisterEvents(void)
{
  static PetscBool done = PETSC_FALSE;
  PetscClassId     cls;

  PetscFunctionBeginUser;
  if (done)
    PetscFunctionReturn(0);
  PetscCall(PetscClassIdRegister("hamshoot", &cls));
  PetscCall(PetscLogEventRegister("HsShootMarch", cls, &HS_EVENT_MARCH));
  PetscCall(PetscLogEventRegister("HsShootSens", cls, &HS_EVENT_SENS));
  PetscCall(PetscLogEventRegister("HsShootAssembly", cls, &HS_EVENT_ASSEMBLY));
  done = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Segment knots: even split k_s = floor(s N / M), or the user's list. */
static PetscErrorCode ShootKnots(HsSolver s)
{
  HsShoot *sh = &s->shoot;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(sh->M + 1, &sh->knots));
  if (sh->nuser) {
    sh->knots[0] = 0;
    for (PetscInt i = 0; i < sh->nuser; i++) {
      PetscCheck(sh->user_knots[i] > (i ? sh->user_knots[i - 1] : 0) && sh->user_knots[i] < s->N, s->comm,
                 PETSC_ERR_ARG_OUTOFRANGE,
                 "-hs_shoot_knots: interior knots must increase strictly within 1..N-1 = %" PetscInt_FMT
                 "; entry %" PetscInt_FMT " is %" PetscInt_FMT,
                 s->N - 1, i + 1, sh->user_knots[i]);
      sh->knots[i + 1] = sh->user_knots[i];
    }
  } else
    for (PetscInt i = 0; i < sh->M; i++)
      sh->knots[i] = (PetscInt)((i * (long long)s->N) / sh->M);
  sh->knots[sh->M] = s->N;
  PetscFunctionReturn(0);
}

PetscErrorCode HsShootSetUp(HsSolver s)
{
  HsShoot    *sh  = &s->shoot;
  PetscInt    dim = 2 * s->prob->n, w = 2 * dim, nloc, i, len = 0;
  PetscMPIInt rank, size;

  PetscFunctionBeginUser;
  PetscCall(HsShootRegisterEvents());
  PetscCallMPI(MPI_Comm_rank(s->comm, &rank));
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  if (sh->nuser)
    sh->M = sh->nuser + 1;
  if (sh->M == 0)
    sh->M = 1;
  PetscCheck(sh->M >= 1 && sh->M <= s->N, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-hs_shoot_segments %" PetscInt_FMT ": need 1 <= M <= N = %" PetscInt_FMT, sh->M, s->N);
  PetscCall(ShootKnots(s));
  /* contiguous blocks of segments per rank, as PetscSplitOwnership would give */
  PetscCall(PetscMalloc1(size + 1, &sh->seg_range));
  sh->seg_range[0] = 0;
  for (i = 0; i < size; i++)
    sh->seg_range[i + 1] = sh->seg_range[i] + sh->M / size + (i < sh->M % size ? 1 : 0);
  sh->s0 = sh->seg_range[rank], sh->s1 = sh->seg_range[rank + 1];
  nloc = sh->s1 - sh->s0;
  for (i = sh->s0; i < sh->s1; i++)
    len += sh->knots[i + 1] - sh->knots[i] + 1;
  /* per local segment: trajectory (x_k, lambda_{k+1/2}) for k = k_s..k_{s+1};
   * sensitivities of x_{k_s+1} and the end data (x_{b-1}, lambda_{b-1/2}, x_b) */
  PetscCall(PetscCalloc3(len * w, &sh->traj, nloc * 4 * dim * w, &sh->sens, nloc + 1, &sh->traj_off));
  PetscCall(PetscCalloc2(nloc + 1, &sh->growth, nloc + 1, &sh->marched));
  PetscCall(PetscCalloc2(nloc * 3 * dim * w + 1, &sh->jblk, w, &sh->vprev));
  sh->traj_off[0] = 0;
  for (i = 0; i < nloc; i++)
    sh->traj_off[i + 1] = sh->traj_off[i] + (sh->knots[sh->s0 + i + 1] - sh->knots[sh->s0 + i] + 1) * w;
  sh->A     = gsl_matrix_alloc((size_t)w, (size_t)w);
  sh->perm  = gsl_permutation_alloc((size_t)w);
  sh->A1    = gsl_matrix_alloc((size_t)dim, (size_t)dim);
  sh->perm1 = gsl_permutation_alloc((size_t)dim);
  sh->rhs   = gsl_vector_alloc((size_t)w);
  sh->sol   = gsl_vector_alloc((size_t)w);
  PetscCall(PetscMalloc3(9 * dim * dim, &sh->blk, 8 * dim * w, &sh->S, 4 * w, &sh->res));
  PetscCheck(sh->A && sh->perm && sh->A1 && sh->perm1 && sh->rhs && sh->sol, PETSC_COMM_SELF, PETSC_ERR_MEM,
             "GSL allocation");
  PetscCall(PetscMalloc4(3 * dim + 3 * dim * w, &sh->end_send, 3 * dim + 3 * dim * w, &sh->end_recv,
                         3 * dim + 3 * dim * w, &sh->end_local, dim, &sh->znext));

  PetscCall(VecCreateMPI(s->comm, nloc * w, PETSC_DETERMINE, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  /* row block s has entries in column blocks s-1, s, s+1 */
  PetscCall(
      MatCreateAIJ(s->comm, nloc * w, nloc * w, PETSC_DETERMINE, PETSC_DETERMINE, 3 * w, NULL, 2 * w, NULL, &s->Jac));
  PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(SNESSetFunction(s->snes, s->F, HsShootFormFunction, s));
  if (sh->mf) {
    /* matrix-free: the exact product from the stored blocks; no global matrix
     * (the outer Krylov method then runs unpreconditioned unless -pc_type says otherwise) */
    PetscCall(MatDestroy(&s->Jac));
    PetscCall(HsShootCreateMFOperator(s, &s->Jac));
  }
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, HsShootFormJacobian, s));
  /* node-layout vector for diagnostics and output: local nodes k_{s0}..k_{s1}-1 (+ N on the last owner) */
  {
    PetscInt nodes = (nloc ? sh->knots[sh->s1] - sh->knots[sh->s0] : 0) + (nloc && sh->s1 == sh->M ? 1 : 0);
    PetscCall(VecCreateMPI(s->comm, nodes * w, (s->N + 1) * w, &s->Xnodes));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HsShootDestroy(HsSolver s)
{
  HsShoot *sh = &s->shoot;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(sh->knots));
  PetscCall(PetscFree(sh->seg_range));
  PetscCall(PetscFree3(sh->traj, sh->sens, sh->traj_off));
  PetscCall(PetscFree2(sh->growth, sh->marched));
  PetscCall(PetscFree2(sh->jblk, sh->vprev));
  PetscCall(PetscFree3(sh->blk, sh->S, sh->res));
  PetscCall(PetscFree4(sh->end_send, sh->end_recv, sh->end_local, sh->znext));
  if (sh->A)
    gsl_matrix_free(sh->A);
  if (sh->A1)
    gsl_matrix_free(sh->A1);
  if (sh->perm)
    gsl_permutation_free(sh->perm);
  if (sh->perm1)
    gsl_permutation_free(sh->perm1);
  if (sh->rhs)
    gsl_vector_free(sh->rhs);
  if (sh->sol)
    gsl_vector_free(sh->sol);
  PetscFunctionReturn(0);
}

/* Records why a step failed (first failure wins), for View and summary.json. */
static void StepFailure(HsShoot *sh, PetscInt seg, PetscInt k, const char *why)
{
  if (!sh->fail_msg[0])
    snprintf(sh->fail_msg, sizeof sh->fail_msg, "segment %d, step %d: %s", (int)seg, (int)k, why);
}

static PetscReal NormInf(PetscInt n, const PetscReal *a)
{
  PetscReal m = 0;
  for (PetscInt i = 0; i < n; i++)
    m = PetscMax(m, PetscAbsReal(a[i]));
  return m;
}

/* Residual of one step (first: the state equation only). Returns the costate/ status. */
static int StepResidual(HsDisc *d, int dim, int k, PetscBool first, const PetscReal *xm, const PetscReal *x0,
                        const PetscReal *lm, const PetscReal *xp, const PetscReal *lp, PetscReal *R)
{
  int st;
  if (first)
    return HsDiscStateResidual(d, x0, xp, lp, R);
  st = HsDiscCostateResidual(d, k, xm, x0, xp, lm, lp, R);
  return st ? st : HsDiscStateResidual(d, x0, xp, lp, R + dim);
}

/* Local Newton of one step (a step that leaves the problem's domain is halved). first: only
 * x_{k+1} (dim unknowns) from the state equation; otherwise (x_{k+1},
 * lambda_{k+1/2}) from the node-k costate and interval-k state equations.
 * xm, lm may be NULL for the first step. On exit the LU of the step Jacobian
 * at the solution is in sh->A (sh->A1 for the first step) and its blocks in
 * sh->blk. Returns 0, or 1 if the step failed (message recorded). */
static int StepSolve(HsSolver s, PetscInt seg, PetscInt k, PetscBool first, const PetscReal *xm, const PetscReal *x0,
                     const PetscReal *lm, PetscReal *xp, PetscReal *lp)
{
  HsShoot         *sh  = &s->shoot;
  HsDisc          *d   = s->disc;
  int              dim = 2 * s->prob->n, nu = first ? dim : 2 * dim, it, st, signum, i, j, dd = dim * dim;
  PetscReal       *R = sh->res, *Rt = sh->res + 2 * dim, *B = sh->blk, rnorm = 0, ynorm, dynorm = 1;
  PetscReal        ysave[64];
  gsl_matrix      *A    = first ? sh->A1 : sh->A;
  gsl_permutation *perm = first ? sh->perm1 : sh->perm;
  char             why[200];

  st = StepResidual(d, dim, (int)k, first, xm, x0, lm, xp, lp, R);
  for (it = 0;; it++) {
    if (st) {
      StepFailure(sh, seg, k, st > 0 ? "the state left the problem's domain" : "a problem callback failed");
      return 1;
    }
    rnorm = NormInf(nu, R);
    if (!(rnorm < PETSC_MAX_REAL)) {
      StepFailure(sh, seg, k, "the step residual is not finite (the march overflowed; use more segments)");
      return 1;
    }
    /* Jacobian in (x_{k+1}[, lambda_{k+1/2}]) and its LU */
    if (first)
      st = HsDiscStateJacobian(d, x0, xp, lp, B, B + dd, B + 2 * dd);
    else {
      st = HsDiscCostateJacobian(d, (int)k, xm, x0, xp, lm, lp, B, B + dd, B + 2 * dd, B + 3 * dd, B + 4 * dd);
      if (!st)
        st = HsDiscStateJacobian(d, x0, xp, lp, B + 5 * dd, B + 6 * dd, B + 7 * dd);
    }
    if (st) {
      StepFailure(sh, seg, k, "a problem callback failed in the step Jacobian");
      return 1;
    }
    for (i = 0; i < dim; i++)
      for (j = 0; j < dim; j++) {
        if (first)
          gsl_matrix_set(A, (size_t)i, (size_t)j, B[dd + i * dim + j]); /* dF/dx_{k+1} */
        else {
          gsl_matrix_set(A, (size_t)i, (size_t)j, B[2 * dd + i * dim + j]);                 /* dC/dx_{k+1} */
          gsl_matrix_set(A, (size_t)i, (size_t)(dim + j), B[4 * dd + i * dim + j]);         /* dC/dlambda_{k+1/2} */
          gsl_matrix_set(A, (size_t)(dim + i), (size_t)j, B[6 * dd + i * dim + j]);         /* dF/dx_{k+1} */
          gsl_matrix_set(A, (size_t)(dim + i), (size_t)(dim + j), B[7 * dd + i * dim + j]); /* dF/dlambda */
        }
      }
    st    = gsl_linalg_LU_decomp(A, perm, &signum);
    ynorm = PetscMax(NormInf(dim, xp), first ? 0 : NormInf(dim, lp));
    /* converged: residual at tolerance, or the last (quadratically convergent)
     * update below step_stol relative: the iterate is then at round-off */
    if (rnorm <= sh->step_atol * (1 + ynorm) || (it > 0 && dynorm <= sh->step_stol * (1 + ynorm)))
      return 0;
    if (it == sh->step_max_it)
      break;
    for (i = 0; i < nu; i++)
      gsl_vector_set(sh->rhs, (size_t)i, R[i]);
    {
      gsl_vector_view r = gsl_vector_subvector(sh->rhs, 0, (size_t)nu),
                      x = gsl_vector_subvector(sh->sol, 0, (size_t)nu);
      if (!st)
        st = gsl_linalg_LU_solve(A, perm, &r.vector, &x.vector);
    }
    if (st) {
      StepFailure(sh, seg, k, "the step Jacobian is singular");
      return 1;
    }
    for (i = 0; i < dim; i++)
      ysave[i] = xp[i], ysave[dim + i] = first ? 0 : lp[i];
    /* full Newton step unless it leaves the domain or overflows: then halve it (at most 10 times) */
    for (PetscReal alpha = 1;; alpha *= 0.5) {
      dynorm = 0;
      for (i = 0; i < nu; i++) {
        PetscReal di = alpha * gsl_vector_get(sh->sol, (size_t)i);
        dynorm       = PetscMax(dynorm, PetscAbsReal(di));
        if (i < dim)
          xp[i] = ysave[i] - di;
        else
          lp[i - dim] = ysave[i] - di;
      }
      st = StepResidual(d, dim, (int)k, first, xm, x0, lm, xp, lp, Rt);
      if ((!st && NormInf(nu, Rt) < PETSC_MAX_REAL) || alpha < 1e-3)
        break;
    }
    PetscArraycpy(R, Rt, nu);
  }
  snprintf(why, sizeof why,
           "local Newton did not converge in %d iterations (|R| = %.2e; -hs_step_max_it, -hs_step_atol, -hs_step_stol)",
           (int)sh->step_max_it, (double)rnorm);
  StepFailure(sh, seg, k, why);
  return 1;
}

/* Solves the factored step system for the columns of RHS (nu x w, row-major), in place. */
static int StepSolveColumns(HsShoot *sh, PetscBool first, int nu, int w, PetscReal *RHS)
{
  gsl_matrix      *A    = first ? sh->A1 : sh->A;
  gsl_permutation *perm = first ? sh->perm1 : sh->perm;
  gsl_vector_view  r = gsl_vector_subvector(sh->rhs, 0, (size_t)nu), x = gsl_vector_subvector(sh->sol, 0, (size_t)nu);
  int              st = 0;

  for (int c = 0; c < w && !st; c++) {
    for (int i = 0; i < nu; i++)
      gsl_vector_set(&r.vector, (size_t)i, RHS[i * w + c]);
    st = gsl_linalg_LU_solve(A, perm, &r.vector, &x.vector);
    for (int i = 0; i < nu; i++)
      RHS[i * w + c] = -gsl_vector_get(&x.vector, (size_t)i);
  }
  return st;
}

/* C = A (dim x dim) * S (dim x w), accumulated: C += A S */
static void MatMulAdd(int dim, int w, const PetscReal *A, const PetscReal *S, PetscReal *C)
{
  for (int i = 0; i < dim; i++)
    for (int l = 0; l < dim; l++) {
      PetscReal a = A[i * dim + l];
      if (a != 0)
        for (int c = 0; c < w; c++)
          C[i * w + c] += a * S[l * w + c];
    }
}

/* Marches local segment seg (global index) from z (2 dim values). With sens,
 * propagates the sensitivities and stores, in sh->sens: d x_{k_s+1}/dz and the
 * end data sensitivities d(x_{b-1}, lambda_{b-1/2}, x_b)/dz. A step failure
 * sets *failed (message recorded); the previous march of the segment, if it
 * succeeded, is the warm start of every step. */
static PetscErrorCode MarchSegment(HsSolver s, PetscInt seg, const PetscReal *z, PetscBool sens, PetscBool *failed)
{
  HsShoot   *sh  = &s->shoot;
  int        dim = 2 * s->prob->n, w = 2 * dim, dd = dim * dim, L, j, i;
  PetscInt   li = seg - sh->s0, ks = sh->knots[seg];
  PetscReal *T   = sh->traj + sh->traj_off[li]; /* row j: x_{ks+j}, lambda_{ks+j+1/2} */
  PetscReal *Sxm = sh->S, *Sx0 = sh->S + dim * w, *Slm = sh->S + 2 * dim * w, *Sy = sh->S + 3 * dim * w;
  PetscReal *out = sh->sens + li * 4 * dim * w, growth = 1, *B = sh->blk;
  PetscBool  warm = sh->marched ? sh->marched[li] : PETSC_FALSE;

  PetscFunctionBeginUser;
  *failed = PETSC_FALSE;
  L       = (int)(sh->knots[seg + 1] - ks);
  for (i = 0; i < w; i++)
    T[i] = z[i];
  if (sens) {
    PetscCall(PetscArrayzero(Sx0, dim * w));
    PetscCall(PetscArrayzero(Slm, dim * w));
    for (i = 0; i < dim; i++)
      Sx0[i * w + i] = 1, Slm[i * w + dim + i] = 1; /* dx_ks/dz = [I 0], dlambda/dz = [0 I] */
  }
  sh->marched[li] = PETSC_FALSE;
  for (j = 0; j < L; j++) {
    PetscReal *xk = T + j * w, *lk = xk + dim, *xn = T + (j + 1) * w;
    PetscBool  first = (PetscBool)(j == 0);
    if (!warm) { /* linear extrapolation from the previous step */
      for (i = 0; i < dim; i++)
        xn[i] = first ? xk[i] : 2 * xk[i] - (xk - w)[i];
      if (!first)
        for (i = 0; i < dim; i++)
          lk[i] = (lk - w)[i];
    }
    if (first ? StepSolve(s, seg, ks, PETSC_TRUE, NULL, xk, NULL, xn, lk)
              : StepSolve(s, seg, ks + j, PETSC_FALSE, xk - w, xk, lk - w, xn, lk)) {
      *failed = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
    if (!sens)
      continue;
    PetscCall(PetscLogEventBegin(HS_EVENT_SENS, 0, 0, 0, 0));
    if (first) {
      /* dx_{k+1}/dz = -Fx1^{-1} (Fxk Sx0 + Flam Slm); blocks in B: Fxk, Fx1, Flam */
      PetscCall(PetscArrayzero(Sy, dim * w));
      MatMulAdd(dim, w, B, Sx0, Sy);
      MatMulAdd(dim, w, B + 2 * dd, Slm, Sy);
      if (StepSolveColumns(sh, PETSC_TRUE, dim, w, Sy)) {
        StepFailure(sh, seg, ks, "the step Jacobian is singular (sensitivities)");
        *failed = PETSC_TRUE;
      }
      PetscCall(PetscArraycpy(Sxm, Sx0, dim * w));
      PetscCall(PetscArraycpy(Sx0, Sy, dim * w));
      PetscCall(PetscArraycpy(out, Sy, dim * w)); /* d x_{ks+1} / dz */
    } else {
      /* rhs = [Cxm Sxm + Cx0 Sx0 + Clm Slm; Fxk Sx0]; blocks in B: Cxm Cx0 Cxp Clm Clp Fxk Fx1 Flam */
      PetscCall(PetscArrayzero(Sy, 2 * dim * w));
      MatMulAdd(dim, w, B, Sxm, Sy);
      MatMulAdd(dim, w, B + dd, Sx0, Sy);
      MatMulAdd(dim, w, B + 3 * dd, Slm, Sy);
      MatMulAdd(dim, w, B + 5 * dd, Sx0, Sy + dim * w);
      if (StepSolveColumns(sh, PETSC_FALSE, 2 * dim, w, Sy)) {
        StepFailure(sh, seg, ks + j, "the step Jacobian is singular (sensitivities)");
        *failed = PETSC_TRUE;
      }
      PetscCall(PetscArraycpy(Sxm, Sx0, dim * w));
      PetscCall(PetscArraycpy(Sx0, Sy, dim * w));           /* d x_{k+1} */
      PetscCall(PetscArraycpy(Slm, Sy + dim * w, dim * w)); /* d lambda_{k+1/2} */
    }
    growth = PetscMax(growth, PetscMax(NormInf(dim * w, Sx0), NormInf(dim * w, Slm)));
    PetscCall(PetscLogEventEnd(HS_EVENT_SENS, 0, 0, 0, 0));
    if (*failed)
      PetscFunctionReturn(0);
  }
  if (sens) { /* end data: x_{b-1}, lambda_{b-1/2}, x_b with b = k_{s+1} */
    PetscCall(PetscArraycpy(out + dim * w, Sxm, dim * w));
    PetscCall(PetscArraycpy(out + 2 * dim * w, Slm, dim * w));
    PetscCall(PetscArraycpy(out + 3 * dim * w, Sx0, dim * w));
    sh->growth[li] = growth;
  }
  sh->marched[li] = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* End data of segment t as a packed array [x_{b-1}, lambda_{b-1/2}, x_b, S(x_{b-1}), S(lambda_{b-1/2}), S(x_b)]. */
static PetscErrorCode PackEnd(HsSolver s, PetscInt t, PetscBool sens, PetscReal *buf)
{
  HsShoot   *sh  = &s->shoot;
  PetscInt   dim = 2 * s->prob->n, w = 2 * dim, li = t - sh->s0, L = sh->knots[t + 1] - sh->knots[t];
  PetscReal *T = sh->traj + sh->traj_off[li];

  PetscFunctionBeginUser;
  PetscCall(PetscArraycpy(buf, T + (L - 1) * w, dim));
  PetscCall(PetscArraycpy(buf + dim, T + (L - 1) * w + dim, dim));
  PetscCall(PetscArraycpy(buf + 2 * dim, T + L * w, dim));
  if (sens)
    PetscCall(PetscArraycpy(buf + 3 * dim, sh->sens + li * 4 * dim * w + dim * w, 3 * dim * w));
  PetscFunctionReturn(0);
}

static PetscMPIInt SegmentOwner(HsShoot *sh, PetscInt t, PetscMPIInt size)
{
  for (PetscMPIInt r = 0; r < size; r++)
    if (t >= sh->seg_range[r] && t < sh->seg_range[r + 1])
      return r;
  return MPI_PROC_NULL;
}

/* Boundary exchange with the neighbouring ranks (mpi/exchange.c): the end
 * data of this rank's last segment go to the owner of the next segment, the
 * x-part of this rank's first z goes to the owner of the previous segment.
 * Received: sh->end_recv (end data of segment s0-1) and sh->znext (x-part of
 * z_{s1}). Nothing else crosses ranks. */
static PetscErrorCode ExchangeNeighbors(HsSolver s, const PetscScalar *z, PetscBool sens)
{
  HsShoot    *sh  = &s->shoot;
  PetscInt    dim = 2 * s->prob->n, w = 2 * dim, cnt = 3 * dim + (sens ? 3 * dim * w : 0);
  PetscMPIInt size, prev, next;

  PetscFunctionBeginUser;
  if (sh->s1 == sh->s0)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  prev = sh->s0 > 0 ? SegmentOwner(sh, sh->s0 - 1, size) : MPI_PROC_NULL;
  next = sh->s1 < sh->M ? SegmentOwner(sh, sh->s1, size) : MPI_PROC_NULL;
  PetscCall(PackEnd(s, sh->s1 - 1, sens, sh->end_send));
  PetscCall(HsExchangeNeighbors(s->comm, prev, next, sh->end_send, cnt, sh->end_recv, z, dim, sh->znext));
  PetscFunctionReturn(0);
}

/* End data of segment t - 1 (t >= 1), local or received. */
static PetscErrorCode PrevEnd(HsSolver s, PetscInt t, PetscBool sens, PetscReal *local_buf, const PetscReal **e)
{
  HsShoot *sh = &s->shoot;

  PetscFunctionBeginUser;
  if (t == sh->s0)
    *e = sh->end_recv;
  else {
    PetscCall(PackEnd(s, t - 1, sens, local_buf));
    *e = local_buf;
  }
  PetscFunctionReturn(0);
}

/* Marches every local segment; a failure anywhere becomes a domain error on all ranks. */
static PetscErrorCode MarchAll(HsSolver s, const PetscReal *z, PetscBool sens, PetscBool *failed)
{
  HsShoot  *sh = &s->shoot;
  PetscInt  w  = 4 * s->prob->n;
  PetscBool f  = PETSC_FALSE, fi;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(HS_EVENT_MARCH, 0, 0, 0, 0));
  for (PetscInt t = sh->s0; t < sh->s1 && !f; t++) {
    PetscCall(MarchSegment(s, t, z + (t - sh->s0) * w, sens, &fi));
    f = (PetscBool)(f || fi);
  }
  PetscCall(PetscLogEventEnd(HS_EVENT_MARCH, 0, 0, 0, 0));
  PetscCallMPI(MPI_Allreduce(&f, failed, 1, MPIU_BOOL, MPI_LOR, s->comm));
  PetscFunctionReturn(0);
}

/* Outer residual, row block s (2 dim rows, owned with z_s):
 *   first half:  s < M-1: x_{k_{s+1}}(march of s) - x^{(s+1)}    (continuity)
 *                s = M-1: x_N(march of M-1) - x_T                 (terminal condition)
 *   second half: s = 0:   x^{(0)} - x0                            (initial condition)
 *                s >= 1:  C_{k_s}(x_{k_s-1}, x^{(s)}, x_{k_s+1}, lambda_{k_s-1/2}, lambda^{(s)})
 * Row block s couples z_{s-1}, z_s, z_{s+1}; its diagonal block is close to
 * [[I, O(h)], [O(h), I]], so a rank's diagonal block can be factored alone. */
PetscErrorCode HsShootFormFunction(SNES snes, Vec X, Vec F, void *ctx)
{
  HsSolver           s   = ctx;
  HsShoot           *sh  = &s->shoot;
  const HsProblem   *P   = s->prob;
  PetscInt           dim = 2 * P->n, w = 2 * dim, i;
  const PetscScalar *z;
  PetscScalar       *f;
  PetscBool          failed;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &z));
  PetscCall(MarchAll(s, z, PETSC_FALSE, &failed));
  if (failed) {
    PetscCall(VecRestoreArrayRead(X, &z));
    PetscCall(SNESSetFunctionDomainError(snes));
    PetscFunctionReturn(0);
  }
  PetscCall(ExchangeNeighbors(s, z, PETSC_FALSE));
  PetscCall(VecGetArray(F, &f));
  for (PetscInt t = sh->s0; t < sh->s1; t++) {
    const PetscScalar *zt = z + (t - sh->s0) * w, *xnext;
    PetscScalar       *ft = f + (t - sh->s0) * w;
    const PetscReal   *T  = sh->traj + sh->traj_off[t - sh->s0], *e;
    PetscInt           L  = sh->knots[t + 1] - sh->knots[t];
    xnext                 = t == sh->M - 1 ? P->xT : (t + 1 < sh->s1 ? zt + w : sh->znext);
    for (i = 0; i < dim; i++)
      ft[i] = T[L * w + i] - xnext[i];
    if (t == sh->M - 1 && s->has_free) { /* transversality rows of the free terminal components */
      PetscReal R[64];
      if (HsDiscTerminalResidual(s->disc, T + (L - 1) * w, T + L * w, T + (L - 1) * w + dim, R)) {
        failed = PETSC_TRUE;
        StepFailure(sh, t, sh->knots[t + 1], "terminal condition failed");
      } else
        for (i = 0; i < dim; i++)
          if (!P->xT_fixed[i])
            ft[i] = R[i];
    }
    if (t == 0)
      for (i = 0; i < dim; i++)
        ft[dim + i] = zt[i] - P->x0[i];
    else {
      PetscCall(PrevEnd(s, t, PETSC_FALSE, sh->end_local, &e));
      if (HsDiscCostateResidual(s->disc, (int)sh->knots[t], e, zt, T + w, e + dim, zt + dim, ft + dim)) {
        failed = PETSC_TRUE;
        StepFailure(sh, t, sh->knots[t], "costate equation across the boundary failed");
      }
    }
  }
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(X, &z));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPIU_BOOL, MPI_LOR, s->comm));
  if (failed)
    PetscCall(SNESSetFunctionDomainError(snes));
  PetscFunctionReturn(0);
}

/* Adds an nr x nc block at (global) rows r0.., columns c0.. */
static PetscErrorCode AddBlock(Mat J, PetscInt r0, PetscInt c0, PetscInt nr, PetscInt nc, const PetscReal *v,
                               PetscInt *ri, PetscInt *ci)
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < nr; i++)
    ri[i] = r0 + i;
  for (PetscInt i = 0; i < nc; i++)
    ci[i] = c0 + i;
  PetscCall(MatSetValues(J, nr, ri, nc, ci, v, ADD_VALUES));
  PetscFunctionReturn(0);
}

/* A Jacobian evaluation that fails still leaves assembled matrices behind. */
static PetscErrorCode AssembleEmpty(Mat Jm, Mat Pm)
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

PetscErrorCode HsShootFormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx)
{
  HsSolver           s   = ctx;
  HsShoot           *sh  = &s->shoot;
  PetscInt           dim = 2 * s->prob->n, w = 2 * dim, dd = dim * dim, i, c;
  const PetscScalar *z;
  PetscBool          failed;
  PetscReal         *V, *Bk;
  PetscInt          *ri, *ci;
  struct {
    double v;
    int    seg;
  } g = {1, -1}, gmax;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &z));
  PetscCall(MarchAll(s, z, PETSC_TRUE, &failed));
  if (failed) {
    PetscCall(VecRestoreArrayRead(X, &z));
    PetscCall(AssembleEmpty(Jm, Pm));
    PetscCall(SNESSetJacobianDomainError(snes));
    PetscFunctionReturn(0);
  }
  /* sensitivity growth: beyond max_growth the march cannot carry the digits Newton needs */
  for (PetscInt t = sh->s0; t < sh->s1; t++)
    if (sh->growth[t - sh->s0] > g.v)
      g.v = sh->growth[t - sh->s0], g.seg = (int)t;
  PetscCallMPI(MPI_Allreduce(&g, &gmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, s->comm));
  sh->max_growth_seen = gmax.v;
  if (gmax.v > sh->max_growth) {
    snprintf(sh->fail_msg, sizeof sh->fail_msg,
             "segment %d (nodes %d..%d): sensitivity growth %.1e exceeds -hs_shoot_max_growth %.0e; double precision "
             "carries "
             "about 16 digits, so the shooting residual cannot be resolved: use more segments (-hs_shoot_segments)",
             gmax.seg, (int)sh->knots[gmax.seg], (int)sh->knots[gmax.seg + 1], gmax.v, (double)sh->max_growth);
    sh->growth_failure = PETSC_TRUE;
    PetscCall(VecRestoreArrayRead(X, &z));
    PetscCall(AssembleEmpty(Jm, Pm));
    PetscCall(SNESSetJacobianDomainError(snes));
    PetscFunctionReturn(0);
  }
  PetscCall(ExchangeNeighbors(s, z, PETSC_TRUE));
  PetscCall(PetscLogEventBegin(HS_EVENT_ASSEMBLY, 0, 0, 0, 0));
  /* The Jacobian's blocks per local segment, kept in sh->jblk (row block s):
   *   B1  = d x_{k_{s+1}} / dz_s = S(x_b)          (and -[I 0] on z_{s+1}, implicit)
   *   B2p = d C_{k_s} / dz_{s-1}, B2c = d C_{k_s} / dz_s   ([I 0] and 0 for s = 0)
   * They are inserted into an assembled matrix, or applied by the matrix-free shell. */
  PetscCall(PetscMalloc1(8 * dd, &Bk));
  for (PetscInt t = sh->s0; t < sh->s1; t++) {
    const PetscScalar *zt = z + (t - sh->s0) * w;
    const PetscReal   *T = sh->traj + sh->traj_off[t - sh->s0], *Sown = sh->sens + (t - sh->s0) * 4 * dim * w;
    PetscReal         *B1 = sh->jblk + (t - sh->s0) * 3 * dim * w, *B2p = B1 + dim * w, *B2c = B1 + 2 * dim * w;
    PetscCall(PetscArraycpy(B1, Sown + 3 * dim * w, dim * w));
    if (t == sh->M - 1 && s->has_free) {
      /* free rows: d R / dz = Rxm S(x_{b-1}) + RxN S(x_b) + Rlm S(lambda_{b-1/2}) */
      const PetscReal *T = sh->traj + sh->traj_off[t - sh->s0];
      PetscInt         L = sh->knots[t + 1] - sh->knots[t];
      PetscReal        G[64 * 64];
      int              st =
          HsDiscTerminalJacobian(s->disc, T + (L - 1) * w, T + L * w, T + (L - 1) * w + dim, Bk, Bk + dd, Bk + 2 * dd);
      PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "terminal Jacobian failed");
      PetscCall(PetscArrayzero(G, dim * w));
      MatMulAdd((int)dim, (int)w, Bk, Sown + dim * w, G);
      MatMulAdd((int)dim, (int)w, Bk + dd, Sown + 3 * dim * w, G);
      MatMulAdd((int)dim, (int)w, Bk + 2 * dd, Sown + 2 * dim * w, G);
      for (i = 0; i < dim; i++)
        if (!s->prob->xT_fixed[i])
          for (c = 0; c < w; c++)
            B1[i * w + c] = G[i * w + c];
    }
    PetscCall(PetscArrayzero(B2p, 2 * dim * w));
    if (t == 0) { /* initial condition */
      for (i = 0; i < dim; i++)
        B2c[i * w + i] = 1;
    } else { /* costate equation at k_s across the boundary */
      const PetscReal *e, *Se;
      int              st;
      PetscCall(PrevEnd(s, t, PETSC_TRUE, sh->end_local, &e));
      Se = e + 3 * dim; /* S(x_{b-1}), S(lambda_{b-1/2}), S(x_b) of segment s-1 */
      st = HsDiscCostateJacobian(s->disc, (int)sh->knots[t], e, zt, T + w, e + dim, zt + dim, Bk, Bk + dd, Bk + 2 * dd,
                                 Bk + 3 * dd, Bk + 4 * dd);
      PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "costate Jacobian across boundary %" PetscInt_FMT " failed",
                 sh->knots[t]);
      MatMulAdd((int)dim, (int)w, Bk, Se, B2p); /* Cxm S(x_{b-1}) + Clm S(lambda_{b-1/2}) */
      MatMulAdd((int)dim, (int)w, Bk + 3 * dd, Se + dim * w, B2p);
      for (i = 0; i < dim; i++) /* [Cx0  Clp] + Cxp S(x_{k_s+1}) */
        for (c = 0; c < dim; c++)
          B2c[i * w + c] = Bk[dd + i * dim + c], B2c[i * w + dim + c] = Bk[4 * dd + i * dim + c];
      MatMulAdd((int)dim, (int)w, Bk + 2 * dd, Sown, B2c);
    }
  }
  PetscCall(PetscFree(Bk));
  PetscCall(VecRestoreArrayRead(X, &z));
  {
    PetscBool shell;
    PetscCall(PetscObjectTypeCompare((PetscObject)Pm, MATSHELL, &shell));
    if (!shell) {
      PetscCall(MatZeroEntries(Pm));
      PetscCall(PetscMalloc3(dim * w, &V, w, &ri, w, &ci));
      PetscCall(PetscArrayzero(V, dim * w));
      for (i = 0; i < dim; i++)
        V[i * w + i] = -1;
      for (PetscInt t = sh->s0; t < sh->s1; t++) {
        const PetscReal *B1 = sh->jblk + (t - sh->s0) * 3 * dim * w;
        PetscCall(AddBlock(Pm, t * w, t * w, dim, w, B1, ri, ci));
        if (t < sh->M - 1)
          PetscCall(AddBlock(Pm, t * w, (t + 1) * w, dim, w, V, ri, ci));
        if (t > 0)
          PetscCall(AddBlock(Pm, t * w + dim, (t - 1) * w, dim, w, B1 + dim * w, ri, ci));
        PetscCall(AddBlock(Pm, t * w + dim, t * w, dim, w, B1 + 2 * dim * w, ri, ci));
      }
      PetscCall(PetscFree3(V, ri, ci));
    }
  }
  PetscCall(MatAssemblyBegin(Pm, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Pm, MAT_FINAL_ASSEMBLY));
  if (Jm != Pm) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscLogEventEnd(HS_EVENT_ASSEMBLY, 0, 0, 0, 0));
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
  PetscMPIInt        size, prev, next;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(J, &s));
  sh = &s->shoot, dim = 2 * s->prob->n, w = 2 * dim;
  PetscCall(VecGetArrayRead(v, &va));
  PetscCall(VecGetArray(y, &ya));
  if (sh->s1 > sh->s0) {
    PetscCallMPI(MPI_Comm_size(s->comm, &size));
    prev = sh->s0 > 0 ? SegmentOwner(sh, sh->s0 - 1, size) : MPI_PROC_NULL;
    next = sh->s1 < sh->M ? SegmentOwner(sh, sh->s1, size) : MPI_PROC_NULL;
    PetscCall(
        HsExchangeNeighbors(s->comm, prev, next, va + (sh->s1 - sh->s0 - 1) * w, w, sh->vprev, va, dim, sh->znext));
  }
  for (PetscInt t = sh->s0; t < sh->s1; t++) {
    const PetscReal   *B1 = sh->jblk + (t - sh->s0) * 3 * dim * w, *B2p = B1 + dim * w, *B2c = B1 + 2 * dim * w;
    const PetscScalar *vt = va + (t - sh->s0) * w, *vp = t == sh->s0 ? sh->vprev : vt - w;
    const PetscScalar *vn = t + 1 < sh->s1 ? vt + w : sh->znext;
    PetscScalar       *yt = ya + (t - sh->s0) * w;
    for (PetscInt i = 0; i < dim; i++) {
      PetscScalar a = (t < sh->M - 1) ? -vn[i] : 0, b = 0;
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

/* The matrix-free Jacobian shell (-hs_shoot_mf); same layout as the assembled matrix. */
PetscErrorCode HsShootCreateMFOperator(HsSolver s, Mat *J)
{
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(s->X, &n));
  PetscCall(MatCreateShell(s->comm, n, n, PETSC_DETERMINE, PETSC_DETERMINE, s, J));
  PetscCall(MatShellSetOperation(*J, MATOP_MULT, (void (*)(void))ShootMatMult));
  PetscFunctionReturn(0);
}

/* z_s = (linear interpolation of the boundary states at k_s, lambda = 0). */
PetscErrorCode HsShootInitialGuess(HsSolver s, Vec X)
{
  HsShoot         *sh  = &s->shoot;
  const HsProblem *P   = s->prob;
  PetscInt         dim = 2 * P->n, w = 2 * dim;
  PetscScalar     *z;

  PetscFunctionBeginUser;
  PetscCall(VecGetArray(X, &z));
  for (PetscInt t = sh->s0; t < sh->s1; t++) {
    PetscReal tau = (PetscReal)sh->knots[t] / s->N;
    for (PetscInt i = 0; i < dim; i++) {
      PetscReal end                 = P->xT_fixed[i] ? P->xT[i] : P->x0[i];
      z[(t - sh->s0) * w + i]       = (1 - tau) * P->x0[i] + tau * end;
      z[(t - sh->s0) * w + dim + i] = 0;
    }
    sh->marched[t - sh->s0] = PETSC_FALSE;
  }
  PetscCall(VecRestoreArray(X, &z));
  PetscFunctionReturn(0);
}

/* Copies the marched trajectories of the local segments into s->Xnodes
 * (node layout of the transcription: x_k, lambda_{k+1/2}; lambda_{N+1/2} = 0). */
PetscErrorCode HsShootPackNodes(HsSolver s)
{
  HsShoot     *sh = &s->shoot;
  PetscInt     w = 4 * s->prob->n, off = 0;
  PetscScalar *x;

  PetscFunctionBeginUser;
  PetscCall(VecGetArray(s->Xnodes, &x));
  for (PetscInt t = sh->s0; t < sh->s1; t++) {
    PetscInt   L = sh->knots[t + 1] - sh->knots[t];
    PetscReal *T = sh->traj + sh->traj_off[t - sh->s0];
    PetscCall(PetscArraycpy(x + off, T, L * w));
    off += L * w;
    if (t == sh->M - 1) {
      PetscCall(PetscArraycpy(x + off, T + L * w, w / 2));
      PetscCall(PetscArrayzero(x + off + w / 2, w / 2));
      off += w;
    }
  }
  PetscCall(VecRestoreArray(s->Xnodes, &x));
  PetscFunctionReturn(0);
}
