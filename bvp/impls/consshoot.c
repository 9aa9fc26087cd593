/* hamshoot: multiple shooting of a constrained system (docs/constrained.md, "Multiple shooting"): the equations of
 * the constrained transcription (costate/hsconstrained.h) marched point by point, each step a local Newton in the
 * multipliers as well as the states.
 *
 * Step k >= 1 takes the carried data C_k = (z_{k-1}, q_k, p_k) (W = D + 2n values) and solves the D equations
 *
 *   interval k (state, momentum, adjoint constraint; 2n + nc),  node k's costate equations (2n),  Phi(q_{k+1}) (nc)
 *
 * for Y_k = (nu_k, lambda_{k+1/2}, gamma_{k+1/2}, q_{k+1}, p_{k+1}) (D values); C_{k+1} = (z_k, q_{k+1}, p_{k+1}).
 * The multipliers enter these equations at O(h^2) (gamma through q_{k+1} in Phi, nu through lp in the adjoint
 * constraint): each step's rows are equilibrated before its LU with partial pivoting. Step 0 has no node equations:
 * lambda_{1/2} is an unknown of the outer system, the step solves interval 0's state rows and Phi(q_1) for
 * (gamma_{1/2}, q_1, p_1), and interval 0's adjoint constraint is an outer equation.
 *
 * Outer unknowns: block 0 = lambda_{1/2} (2n); block t = 1..M-1 the carried data w_t = C_{k_t} at knot k_t; then
 * (the extra unknowns, on the owner of segment M - 1) alpha (nc) and gamma_{N-1/2} (nc, with fixed terminal
 * coordinates). Outer equations, in the same order (banded, for PC hsband; issue 44): interval 0's adjoint constraint
 * (nc, the head rows), block t's match C_{k_t}(w_{t-1}) - w_t, then the end condition. With fixed terminal coordinates
 * the last step takes gamma_{N-1/2} from the extra unknowns and leaves out Phi(q_N) = 0, and the end condition is the
 * transcription's (HsConsTerminal, 2n + nc rows, q_N = q_T whole: a tangential q_N - q_T with Phi(q_N) = 0 had let
 * the four-bar end on another point of the constraints with the same projection, "converged"); with free terminal
 * coordinates the last step imposes Phi(q_N) = 0 and the end condition is HsConsTerminal's q and p rows (2n). The
 * Jacobian is exact: each step's sensitivities dY/dC = -A^{-1} E_C, chained over the segment. Segments are distributed
 * over the ranks in contiguous blocks; the outer matrix is assembled with off-process entries and factored by the
 * shootings' default (HsSegLayoutSetUpSolver: PC hsband). */
#include "constrainedimpl.h"
#include "shootimpl.h"

#include <gsl/gsl_linalg.h>

#define HS_CSHOOT_MAX_IT 50 /* a step's Newton iterations */

typedef struct {
  HsConstrained    cd; /* first: the transcription's layout, scheme and diagnostics (constrained.c) */
  HsSegLayout     *seg; /* the segments (shootimpl.h): blocks W0, W, extra unknowns alpha, gamma_{N-1/2} (gl); points
                            k_t - 1 .. k_{t+1}, D values each */
  PetscInt         n, c, D, W, W0;         /* W = D + 2n (carried data), W0 = 2n (block 0: lambda_{1/2}) */
  const PetscReal *x0;                     /* the initial state */
  PetscReal       *traj;      /* per local segment: points k_t - 1 .. k_{t+1} (D each; the first unused for t = 0) */
  PetscBool        have_traj; /* traj holds a guess or an earlier march (else: a restart; steps extrapolate) */
  PetscReal       *S, *S2;    /* the carried data's sensitivity (W x W), scratch */
  PetscReal       *Send;      /* per local segment: C_end (W), dC_end/dw_t (W x W), dC_end/dgamma_{N-1/2} (W x nc) */
  PetscReal       *a0, *da0;  /* segment 0: its adjoint constraint (nc), the derivative in lambda_{1/2} (nc x 2n) */
  PetscReal       *alpha;     /* alpha of the end condition and gamma_{N-1/2} (gl) (the extra unknowns, every rank) */
  PetscBool        gl;        /* every terminal coordinate fixed: gamma_{N-1/2} an outer unknown */
  PetscReal       *Fi, *Fn, *Phi, *Gp, *J; /* scratch: equations and 5 blocks r x D, Phi, G at q_{k+1} */
  PetscReal       *E, *A, *EC, *dY, *Ysave;
  gsl_permutation *perm;
  Vec              Xfull; /* the whole trajectory on the transcription's DMDA (output, diagnostics) */
} HsConsShoot;

static PetscReal *Point(HsConsShoot *sh, PetscInt i, PetscInt k) /* point k of local segment i */
{
  return HsSegLayoutPoint(sh->seg, sh->traj, i, k);
}

/* A step's kind: the first (k = 0: gamma_{1/2}, q_1, p_1), an interior one (nu_k, lambda, gamma, q_{k+1}, p_{k+1}), or
 * the last with gamma_{N-1/2} given (gl: nu, lambda, q_N, p_N; no Phi(q_N) row). */
enum { STEP_FIRST, STEP_INTERIOR, STEP_LAST };

static int StepRows(const HsConsShoot *sh, int mode)
{
  return mode == STEP_FIRST ? (int)(2 * sh->n + sh->c) : mode == STEP_INTERIOR ? (int)sh->D : (int)(sh->D - sh->c);
}
static int StepCols(const HsConsShoot *sh, int mode)
{
  return mode == STEP_FIRST ? (int)(2 * sh->n) : mode == STEP_INTERIOR ? (int)sh->W : (int)(sh->W + sh->c);
}

/* Where Y's entry j lives: point 0 (z_k) or 1 (z_{k+1}) and its column there. */
static void YPlace(int n, int c, int mode, int j, int *pt, int *col)
{
  int nz    = mode == STEP_FIRST      ? c
              : mode == STEP_INTERIOR ? 2 * n + 2 * c
                                      : 2 * n + c,
      first = mode == STEP_FIRST ? 4 * n + c : 2 * n;
  *pt = j >= nz, *col = j < nz ? first + j : j - nz;
}

/* The equations of step k (E, ny of them) and, with jac, their derivatives in Y (A, ny x ny) and in the carried data
 * (EC: ny x W for k >= 1, C = (z_{k-1}, q_k, p_k), and for the last step gamma_{N-1/2} as nc more columns; ny x 2n
 * for k = 0, C = lambda_{1/2}). */
static int StepEquations(HsConsShoot *sh, int k, int mode, const double *zm, const double *z0, const double *zp,
                         int jac)
{
  HsCons *cs = sh->cd.cons;
  int n = (int)sh->n, c = (int)sh->c, D = sh->D, r = 2 * n + c, ny = StepRows(sh, mode), nC = StepCols(sh, mode), st;
  double *J0i = sh->J, *J1i = J0i + r * D, *Jmn = J1i + r * D, *J0n = Jmn + r * D, *Jpn = J0n + r * D;

  if ((st = HsConsInterval(cs, z0, zp, sh->Fi, jac ? J0i : NULL, jac ? J1i : NULL)) ||
      (k && (st = HsConsNode(cs, k, zm, z0, zp, sh->Fn, jac ? Jmn : NULL, jac ? J0n : NULL, jac ? Jpn : NULL))) ||
      (st = HsConsPhi(cs, zp, sh->Phi, sh->Gp)))
    return st;
  for (int i = 0; i < ny; i++) { /* rows: interval (all of it at k >= 1, its state rows at k = 0), node, Phi */
    int ki           = k ? (i < r           ? 0
                            : i < r + 2 * n ? 1
                                            : 2)
                         : (i < 2 * n ? 0 : 2),
        ri           = ki == 0   ? i
                       : ki == 1 ? i - r
                                 : i - ny + c;
    const double *Ja = ki == 0 ? J0i + ri * D : J0n + ri * D, *Jb = ki == 0 ? J1i + ri * D : Jpn + ri * D;
    sh->E[i] = ki == 0 ? sh->Fi[ri] : ki == 1 ? sh->Fn[ri] : sh->Phi[ri];
    if (!jac)
      continue;
    for (int j = 0; j < ny; j++) {
      int pt, col;
      YPlace(n, c, mode, j, &pt, &col);
      sh->A[i * ny + j] = ki == 2 ? (pt && col < n ? sh->Gp[ri * n + col] : 0) : pt ? Jb[col] : Ja[col];
    }
    for (int j = 0; j < nC; j++) /* (z_{k-1}, q_k, p_k), then gamma_{N-1/2} (STEP_LAST) */
      sh->EC[i * nC + j] = ki == 2 ? 0
                           : k     ? (j < D       ? (ki == 1 ? Jmn[ri * D + j] : 0)
                                      : j < sh->W ? Ja[j - D]
                                                  : Ja[4 * n + c + j - sh->W])
                                   : Ja[2 * n + c + j];
  }
  return HS_SUCCESS;
}

static void GetY(int n, int c, int mode, int ny, const double *z0, const double *zp, double *Y)
{
  for (int j = 0; j < ny; j++) {
    int pt, col;
    YPlace(n, c, mode, j, &pt, &col);
    Y[j] = (pt ? zp : z0)[col];
  }
}

static void SetY(int n, int c, int mode, int ny, const double *Y, double *z0, double *zp)
{
  for (int j = 0; j < ny; j++) {
    int pt, col;
    YPlace(n, c, mode, j, &pt, &col);
    (pt ? zp : z0)[col] = Y[j];
  }
}

/* A's rows equilibrated (E's and EC's with them) and A factored in place. HS_ESINGULAR: a zero row or pivot. */
static int Factor(HsConsShoot *sh, int ny, int nC)
{
  gsl_matrix_view  Am = gsl_matrix_view_array(sh->A, (size_t)ny, (size_t)ny);
  gsl_permutation *p  = sh->perm;
  int              sgn;

  for (int i = 0; i < ny; i++) {
    double mx = 0;
    for (int j = 0; j < ny; j++)
      mx = fmax(mx, fabs(sh->A[i * ny + j]));
    if (!(mx > 0) || !isfinite(mx))
      return HS_ESINGULAR;
    sh->E[i] /= mx;
    for (int j = 0; j < ny; j++)
      sh->A[i * ny + j] /= mx;
    for (int j = 0; j < nC; j++)
      sh->EC[i * nC + j] /= mx;
  }
  p->size = (size_t)ny;
  gsl_linalg_LU_decomp(&Am.matrix, p, &sgn);
  for (int i = 0; i < ny; i++)
    if (!(fabs(sh->A[i * ny + i]) > 1e-300))
      return HS_ESINGULAR;
  return HS_SUCCESS;
}

/* Step k by Newton from the Y in z0, zp (converged: |dY| <= 1e-13 (1 + |Y|), or the steps have stopped shrinking
 * below 1e-8 (1 + |Y|), round-off), then one more step, whose factors serve the sensitivities: the residual of the
 * march is then at its round-off (without it the outer noise floor was 1e-10 on the four-bar); A, EC are left factored
 * and scaled there. */
static int StepSolve(HsConsShoot *sh, int k, int mode, const double *zm, double *z0, double *zp)
{
  int    n = (int)sh->n, c = (int)sh->c, ny = StepRows(sh, mode), nC = StepCols(sh, mode), st, last = 0;
  double prev = INFINITY;

  for (int it = 0; it < HS_CSHOOT_MAX_IT || last; it++) {
    double          dmax = 0, ymax = 0;
    gsl_matrix_view Am = gsl_matrix_view_array(sh->A, (size_t)ny, (size_t)ny);
    gsl_vector_view ev = gsl_vector_view_array(sh->E, (size_t)ny), dv = gsl_vector_view_array(sh->dY, (size_t)ny);
    if ((st = StepEquations(sh, k, mode, zm, z0, zp, 1)) || (st = Factor(sh, ny, nC)))
      return st;
    gsl_linalg_LU_solve(&Am.matrix, sh->perm, &ev.vector, &dv.vector);
    GetY(n, c, mode, ny, z0, zp, sh->Ysave);
    for (int j = 0; j < ny; j++) {
      sh->Ysave[j] -= sh->dY[j];
      dmax = fmax(dmax, fabs(sh->dY[j])), ymax = fmax(ymax, fabs(sh->Ysave[j]));
    }
    if (!isfinite(dmax) || !isfinite(ymax))
      return HS_EDOM;
    SetY(n, c, mode, ny, sh->Ysave, z0, zp);
    if (last)
      return HS_SUCCESS;
    last = dmax <= 1e-13 * (1 + ymax) || (dmax <= 1e-8 * (1 + ymax) && dmax > 0.25 * prev);
    prev = dmax;
  }
  return HS_ENOCONV;
}

/* S <- the sensitivity of C_{k+1} from that of C_k (k >= 1; S is W x wt) with A, EC of step k (factored); after the
 * last step with gamma_{N-1/2} given (STEP_LAST) also Sg = dC_N/dgamma_{N-1/2} (W x nc). */
static void ChainStep(HsConsShoot *sh, int mode, int wt, double *Sg)
{
  int n = (int)sh->n, c = (int)sh->c, D = (int)sh->D, W = sh->W, ny = StepRows(sh, mode), nC = StepCols(sh, mode);
  int nz             = mode == STEP_LAST ? 2 * n + c : 2 * n + 2 * c; /* Y's entries that are z_k's */
  gsl_matrix_view Am = gsl_matrix_view_array(sh->A, (size_t)ny, (size_t)ny);

  for (int col = 0; col < wt + (Sg ? c : 0); col++) {
    gsl_vector_view v  = gsl_vector_view_array(sh->dY, (size_t)ny);
    double         *S2 = col < wt ? sh->S2 + col : Sg + col - wt;
    int             ld = col < wt ? wt : c;
    for (int i = 0; i < ny; i++) {
      double s = 0;
      for (int j = 0; j < W && col < wt; j++)
        s += sh->EC[i * nC + j] * sh->S[j * wt + col];
      sh->dY[i] = col < wt ? -s : -sh->EC[i * nC + W + col - wt];
    }
    gsl_linalg_LU_svx(&Am.matrix, sh->perm, &v.vector);
    for (int i = 0; i < 2 * n; i++) /* z_k's q, p: C_k's last 2n */
      S2[i * ld] = col < wt ? sh->S[(D + i) * wt + col] : 0;
    for (int i = 0; i < ny; i++) /* z_k's nu, lambda (, gamma), then q_{k+1}, p_{k+1} */
      S2[(i < nz ? 2 * n + i : D + i - nz) * ld] = sh->dY[i];
    for (int g = 0; mode == STEP_LAST && g < c; g++) /* gamma_{N-1/2}: 0 in w_t, the identity in itself */
      S2[(4 * n + c + g) * ld] = col - wt == g;
  }
  memcpy(sh->S, sh->S2, sizeof(double) * (size_t)(W * wt));
}

/* Step 0 of segment 0 (z_0 = (x0, 0, lambda_{1/2}, gamma), z_1's q, p solved): S (W x W0) the sensitivity of C_1 in
 * block 0, a0 and da0 interval 0's adjoint constraint and its derivative in lambda_{1/2}. */
static int FirstStep(HsConsShoot *sh, double *z0, double *z1, int sens)
{
  int     n = (int)sh->n, c = (int)sh->c, D = sh->D, r = 2 * n + c, ny = 2 * n + c, W0 = sh->W0, st;
  double *J0i = sh->J, *J1i = J0i + r * D;

  if ((st = StepSolve(sh, 0, STEP_FIRST, NULL, z0, z1)))
    return st;
  for (int j = 0; j < c; j++)
    sh->a0[j] = sh->Fi[2 * n + j];
  if (!sens)
    return HS_SUCCESS;
  {
    gsl_matrix_view Am = gsl_matrix_view_array(sh->A, (size_t)ny, (size_t)ny);
    memset(sh->S, 0, sizeof(double) * (size_t)(sh->W * W0));
    memset(sh->da0, 0, sizeof(double) * (size_t)(c * 2 * n));
    for (int col = 0; col < 2 * n; col++) {
      gsl_vector_view v = gsl_vector_view_array(sh->dY, (size_t)ny);
      for (int i = 0; i < ny; i++)
        sh->dY[i] = -sh->EC[i * 2 * n + col];
      gsl_linalg_LU_svx(&Am.matrix, sh->perm, &v.vector);
      sh->S[(2 * n + c + col) * W0 + col] = 1; /* lambda_{1/2} */
      for (int i = 0; i < ny; i++)             /* gamma_{1/2}, then q_1, p_1 */
        sh->S[(i < c ? 4 * n + c + i : D + i - c) * W0 + col] = sh->dY[i];
      for (int j = 0; j < c; j++) {
        double d = J0i[(2 * n + j) * D + 2 * n + c + col];
        for (int i = 0; i < ny; i++)
          d += (i < c ? J0i[(2 * n + j) * D + 4 * n + c + i] : J1i[(2 * n + j) * D + i - c]) * sh->dY[i];
        sh->da0[j * 2 * n + col] = d;
      }
    }
  }
  return HS_SUCCESS;
}

/* Marches local segment i from its outer unknowns w (block t's); the end data C_end and, with sens, dC_end/dw
 * into Send. A step that fails from the stored trajectory is tried again from the previous point's values. */
static int MarchSegment(HsConsShoot *sh, PetscInt i, const double *w, int sens)
{
  PetscInt t = sh->seg->s0 + i, k0 = sh->seg->knots[t], k1 = sh->seg->knots[t + 1];
  int      n = (int)sh->n, c = (int)sh->c, D = sh->D, W = sh->W, wt = (int)HsSegLayoutBlockSize(sh->seg, t), st;
  double  *end = sh->Send + i * (W + W * W + W * c);

  if (!t) {
    double *z0 = Point(sh, i, 0);
    memcpy(z0, sh->x0, sizeof(double) * (size_t)(2 * n));
    memset(z0 + 2 * n, 0, sizeof(double) * (size_t)c);
    memcpy(z0 + 2 * n + c, w, sizeof(double) * (size_t)(2 * n));
    if (!sh->have_traj) { /* gamma = 0, x_1 = x_0 */
      memset(z0 + 4 * n + c, 0, sizeof(double) * (size_t)c);
      memcpy(Point(sh, i, 1), z0, sizeof(double) * (size_t)(2 * n));
    }
    if ((st = FirstStep(sh, z0, Point(sh, i, 1), sens)))
      return st;
  } else {
    memcpy(Point(sh, i, k0 - 1), w, sizeof(double) * (size_t)D);
    memcpy(Point(sh, i, k0), w + D, sizeof(double) * (size_t)(2 * n));
    if (sens) {
      memset(sh->S, 0, sizeof(double) * (size_t)(W * W));
      for (int j = 0; j < W; j++)
        sh->S[j * W + j] = 1;
    }
  }
  for (PetscInt k = t ? k0 : 1; k < k1; k++) {
    double *zm = Point(sh, i, k - 1), *z0 = Point(sh, i, k), *zp = Point(sh, i, k + 1);
    int     mode = sh->gl && k == sh->seg->knots[sh->seg->M] - 1 ? STEP_LAST : STEP_INTERIOR;
    if (mode == STEP_LAST) /* gamma_{N-1/2}: an extra unknown */
      memcpy(z0 + 4 * n + c, sh->alpha + c, sizeof(double) * (size_t)c);
    if (!sh->have_traj || (st = StepSolve(sh, (int)k, mode, zm, z0, zp))) { /* (again) from the previous point's
                                                                                multipliers, q extrapolated */
      memcpy(z0 + 2 * n, zm + 2 * n, sizeof(double) * (size_t)(D - 2 * n - (mode == STEP_LAST ? c : 0)));
      for (int j = 0; j < 2 * n; j++)
        zp[j] = j < n ? 2 * z0[j] - zm[j] : z0[j];
      if ((st = StepSolve(sh, (int)k, mode, zm, z0, zp)))
        return st;
    }
    if (sens)
      ChainStep(sh, mode, wt, mode == STEP_LAST ? end + W + W * W : NULL);
  }
  memcpy(end, Point(sh, i, k1 - 1), sizeof(double) * (size_t)D);
  memcpy(end + D, Point(sh, i, k1), sizeof(double) * (size_t)(2 * n));
  if (sens)
    memcpy(end + W, sh->S, sizeof(double) * (size_t)(W * wt));
  return HS_SUCCESS;
}

/* The end condition's rows (EndCount of them) from a last segment's end data C_end = (z_{N-1}, q_N, p_N) and alpha:
 * HsConsTerminal's, all of them with gl, its q and p rows with free coordinates (Phi(q_N) = 0 is the last step's);
 * with dC (rows x W) and da (rows x nc) their derivatives. */
static int EndCount(const HsConsShoot *sh) { return (int)(2 * sh->n + (sh->gl ? sh->c : 0)); }
static int EndRows(HsConsShoot *sh, const double *end, const double *alpha, double *Fe, double *dC, double *da)
{
  HsCons *cs = sh->cd.cons;
  int     n = (int)sh->n, c = (int)sh->c, D = sh->D, W = sh->W, st;
  double *zN = sh->Ysave, *Jm = sh->J, *JN = sh->J + (2 * n + c) * D;

  memset(zN, 0, sizeof(double) * (size_t)D);
  memcpy(zN, end + D, sizeof(double) * (size_t)(2 * n));
  memcpy(zN + 2 * n, alpha, sizeof(double) * (size_t)c);
  if ((st = HsConsTerminal(cs, end, zN, Fe, dC ? Jm : NULL, dC ? JN : NULL)))
    return st;
  for (int i = 0; dC && i < EndCount(sh); i++)
    for (int j = 0; j < W + c; j++) {
      double v = j < D ? Jm[i * D + j] : j < W ? JN[i * D + j - D] : JN[i * D + 2 * n + j - W];
      if (j < W)
        dC[i * W + j] = v;
      else
        da[i * c + j - W] = v;
    }
  return HS_SUCCESS;
}

/* MarchSegment as an HsSegMarchFn: a failed step (status > 0) sets *failed. */
static PetscErrorCode MarchLocal(HsSolver s, PetscInt i, const PetscScalar *w, PetscBool sens, void *ctx,
                                 PetscBool *failed)
{
  HsConsShoot *sh = s->data;

  PetscFunctionBeginUser;
  (void)ctx;
  HsCallStep(MarchSegment(sh, i, w, (int)sens), failed, "constrained shooting march", sh->seg->knots[sh->seg->s0 + i]);
  PetscFunctionReturn(0);
}

/* The local segments marched from X (with their sensitivities if sens); *dom if a step failed on some rank. alpha
 * and gamma_{N-1/2} (the extra unknowns, on segment M - 1's owner) are sent to every rank. Collective. */
static PetscErrorCode MarchAll(HsSolver s, Vec X, PetscBool sens, PetscBool *domp)
{
  HsConsShoot       *sh = s->data;
  const PetscScalar *x;
  PetscInt           ne = sh->seg->extra;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &x));
  if (sh->seg->owns_last) /* alpha (and gamma_{N-1/2}) */
    PetscCall(PetscArraycpy(sh->alpha, x + HsSegLayoutLocalOffset(sh->seg, sh->seg->M), ne));
  PetscCallMPI(MPI_Bcast(sh->alpha, (PetscMPIInt)ne, MPIU_REAL, sh->seg->last, PetscObjectComm((PetscObject)s)));
  PetscCall(HsSegLayoutMarchAll(sh->seg, s, x, sens, MarchLocal, NULL, domp));
  PetscCall(VecRestoreArrayRead(X, &x));
  sh->have_traj = (PetscBool)(sh->have_traj || !*domp);
  PetscFunctionReturn(0);
}

/* F(X) (HsResidualFn): the adjoint constraint of interval 0 (the head rows), block t >= 1's match C_end(w_{t-1}) - w_t,
 * the end condition (the last rows), added by the ranks that march the segments. Collective. */
static PetscErrorCode Residual(HsSolver s, Vec X, Vec F, PetscBool *domp)
{
  HsConsShoot       *sh = s->data;
  PetscInt           c = s->prob->nc, W = sh->W, *idx;
  PetscScalar       *v;
  const PetscScalar *x;

  PetscFunctionBeginUser;
  if (sh->cd.bad_ends) { /* the same on every rank (PreSolve) */
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "problem '%s': %s", s->prob->name, sh->cd.why));
    *domp = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  PetscCall(MarchAll(s, X, PETSC_FALSE, domp));
  if (*domp)
    PetscFunctionReturn(0);
  PetscCall(PetscMalloc2(W, &idx, W, &v));
  PetscCall(VecSet(F, 0));
  PetscCall(VecGetArrayRead(X, &x));
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++) {
    PetscInt      t   = sh->seg->s0 + i;
    const double *end = sh->Send + i * (W + W * W + W * c);
    PetscCall(HsSegLayoutAddMatching(sh->seg, F, t, x, end, idx, v)); /* - w_t, + C_end into block t + 1 */
    if (t == sh->seg->M - 1) {                                        /* the end condition */
      PetscCheck(!EndRows(sh, end, sh->alpha, v, NULL, NULL), PETSC_COMM_SELF, PETSC_ERR_LIB,
                 "the end condition failed");
      for (PetscInt j = 0; j < EndCount(sh); j++)
        idx[j] = HsSegLayoutRowOffset(sh->seg, sh->seg->M) + j;
      PetscCall(VecSetValues(F, EndCount(sh), idx, v, ADD_VALUES));
    }
    if (!t) {
      for (PetscInt j = 0; j < c; j++)
        idx[j] = j;
      PetscCall(VecSetValues(F, c, idx, sh->a0, ADD_VALUES));
    }
  }
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecAssemblyBegin(F));
  PetscCall(VecAssemblyEnd(F));
  PetscCall(PetscFree2(idx, v));
  PetscFunctionReturn(0);
}

/* The last segment's rows of the end condition in the outer Jacobian (the last rows): d/dw_{M-1} = dE/dC_end S_end,
 * d/dalpha, and (gl) d/dgamma_{N-1/2} = dE/dC_end Sg, both extra unknowns (the last columns). */
static PetscErrorCode EndJacobian(HsConsShoot *sh, Mat P, const double *end, PetscInt wt, PetscInt o, PetscInt *idx)
{
  PetscInt c = sh->c, W = sh->W, ne = EndCount(sh), *r, nb = wt + (sh->gl ? c : 0);
  PetscInt e0 = HsSegLayoutBlockOffset(sh->seg, sh->seg->M), r0 = HsSegLayoutRowOffset(sh->seg, sh->seg->M);
  double  *Fe, *dC, *da, *prod;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc5(2 * sh->n + c, &Fe, ne * W, &dC, ne * c + 1, &da, ne * nb, &prod, ne, &r));
  PetscCheck(!EndRows(sh, end, sh->alpha, Fe, dC, da), PETSC_COMM_SELF, PETSC_ERR_LIB, "the end condition failed");
  for (PetscInt i = 0; i < ne; i++) {
    r[i] = r0 + i;
    for (PetscInt j = 0; j < nb; j++) { /* w_{M-1}'s columns, then gamma_{N-1/2}'s (Sg: end + W + W^2, W x nc) */
      double s = 0;
      for (PetscInt l = 0; l < W; l++)
        s += dC[i * W + l] * (j < wt ? end[W + l * wt + j] : end[W + W * W + l * c + j - wt]);
      prod[i * nb + j] = s;
    }
  }
  for (PetscInt j = 0; j < nb; j++)
    idx[j] = j < wt ? o + j : e0 + c + j - wt;
  PetscCall(MatSetValues(P, ne, r, nb, idx, prod, ADD_VALUES));
  for (PetscInt j = 0; j < c; j++)
    idx[j] = e0 + j; /* alpha */
  PetscCall(MatSetValues(P, ne, r, c, idx, da, ADD_VALUES));
  PetscCall(PetscFree5(Fe, dC, da, prod, r));
  PetscFunctionReturn(0);
}

/* The outer Jacobian from the segments' sensitivities (exact), added by the ranks that march them. Collective. */
static PetscErrorCode Jacobian(SNES snes, Vec X, Mat Jm, Mat P, void *ctx)
{
  HsSolver     s  = ctx;
  HsConsShoot *sh = s->data;
  PetscInt     c = s->prob->nc, n = s->prob->n, W = sh->W, *idx, *rows;
  PetscBool    dom;

  PetscFunctionBeginUser;
  PetscCall(MarchAll(s, X, PETSC_TRUE, &dom));
  if (dom) {
    PetscCall(SNESSetJacobianDomainError(snes));
    PetscFunctionReturn(0);
  }
  PetscCall(MatZeroEntries(P));
  PetscCall(PetscMalloc2(W + c, &idx, W, &rows));
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++) {
    PetscInt      t = sh->seg->s0 + i, wt = HsSegLayoutBlockSize(sh->seg, t), o = HsSegLayoutBlockOffset(sh->seg, t);
    const double *end = sh->Send + i * (W + W * W + W * c);
    for (PetscInt j = 0; j < wt; j++)
      idx[j] = o + j;
    PetscCall(HsSegLayoutAddMatchingJacobian(sh->seg, P, t, wt, idx, end + W, rows)); /* -I, dC_end/dw_t */
    if (t == sh->seg->M - 1)
      PetscCall(EndJacobian(sh, P, end, wt, o, idx));
    if (!t) {
      for (PetscInt j = 0; j < c; j++)
        rows[j] = j;
      for (PetscInt j = 0; j < 2 * n; j++)
        idx[j] = j;
      PetscCall(MatSetValues(P, c, rows, 2 * n, idx, sh->da0, ADD_VALUES));
    }
  }
  PetscCall(PetscFree2(idx, rows));
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  if (Jm != P) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

/* Local segment i's part of the guess g (the whole transcription guess): its stored trajectory (the steps' first
 * Newton iterates) and its outer unknowns in x (this rank's part of X), alpha = 0 (HsSegGuessFn). */
static PetscErrorCode GuessSegment(HsSolver s, PetscInt i, const PetscScalar *g, PetscScalar *x, void *ctx)
{
  HsConsShoot *sh = s->data;
  PetscInt     n = s->prob->n, c = s->prob->nc, D = sh->D, t = sh->seg->s0 + i, k0 = sh->seg->knots[t];
  PetscInt     o = HsSegLayoutLocalOffset(sh->seg, t);

  PetscFunctionBeginUser;
  (void)ctx;
  for (PetscInt k = PetscMax(k0 - 1, 0); k <= sh->seg->knots[t + 1]; k++)
    PetscCall(PetscArraycpy(Point(sh, i, k), g + k * D, D));
  if (t == sh->seg->M - 1) { /* the extra unknowns: alpha = 0, gamma_{N-1/2} */
    PetscInt e = HsSegLayoutLocalOffset(sh->seg, sh->seg->M);
    PetscCall(PetscArrayzero(x + e, c));
    if (sh->gl)
      PetscCall(PetscArraycpy(x + e + c, g + (s->N - 1) * D + 4 * n + c, c));
  }
  if (!t) /* lambda_{1/2} */
    PetscCall(PetscArraycpy(x, g + 2 * n + c, 2 * n));
  else {
    PetscCall(PetscArraycpy(x + o, g + (k0 - 1) * D, D));
    PetscCall(PetscArraycpy(x + o + D, g + k0 * D, 2 * n));
  }
  PetscFunctionReturn(0);
}

/* The guess: the constrained transcription's (on its DMDA), spread over the local segments (GuessSegment).
 * Collective. */
static PetscErrorCode Guess(HsSolver s, Vec X)
{
  HsConsShoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(HsConstrainedGuess(s, sh->Xfull));
  PetscCall(HsSegLayoutScatterGuess(sh->seg, s, sh->Xfull, X, GuessSegment, NULL));
  sh->have_traj = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The scheme for this solve (constrained.c). */
static PetscErrorCode PreSolve(HsSolver s)
{
  HsConsShoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(HsConstrainedPreSolve(s));
  sh->x0 = s->prob->x0;
  PetscFunctionReturn(0);
}

/* Point k of local segment i on the DMDA (HsSegPointFn); point N takes alpha in its nu slot and zeros in the
 * dummies. */
static PetscErrorCode PointValues(HsSolver s, PetscInt i, PetscInt k, PetscScalar *v, void *ctx)
{
  HsConsShoot *sh = s->data;
  PetscInt     n = s->prob->n, c = s->prob->nc;
  PetscScalar *z = Point(sh, i, k);

  PetscFunctionBeginUser;
  (void)ctx;
  if (k == s->N) { /* alpha and the dummies of point N */
    PetscCall(PetscArraycpy(z + 2 * n, sh->alpha, c));
    PetscCall(PetscArrayzero(z + 2 * n + c, 2 * n + c));
  }
  PetscCall(PetscArraycpy(v, z, sh->D));
  PetscFunctionReturn(0);
}

/* The whole trajectory of X (marched again) on the DMDA, then the constrained transcription's node layout and
 * diagnostics. Collective. */
static PetscErrorCode PostSolve(HsSolver s)
{
  HsConsShoot *sh = s->data;
  PetscBool    dom;

  PetscFunctionBeginUser;
  PetscCall(MarchAll(s, s->X, PETSC_FALSE, &dom)); /* the trajectory of X itself, not of the last trial marched (a
                                                      rejected line-search or trust-region step); a march that fails
                                                      leaves what it reached */
  if (dom && s->res.converged) { /* the same on every rank: the solution written would not be X's (a guard) */
    s->res.converged = PETSC_FALSE;
    PetscCall(PetscStrncpy(s->res.status, "MARCH_FAILED", sizeof s->res.status));
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "the march of the final iterate failed"));
  }
  PetscCall(HsSegLayoutPutPoints(sh->seg, s, sh->Xfull, sh->D, PointValues, NULL));
  PetscCall(HsConstrainedPostSolveFrom(s, sh->Xfull));
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  HsConsShoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(buf, len, "multiple shooting with %" PetscInt_FMT " segment%s, %d holonomic constraint%s%s%s",
                          sh->seg->M, sh->seg->M > 1 ? "s" : "", s->prob->nc, s->prob->nc > 1 ? "s" : "",
                          s->prob->cons_extended ? ", extended scheme: " : "",
                          s->prob->cons_extended ? s->prob->cons_extended : ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode Destroy(HsSolver s)
{
  HsConsShoot *sh = s->data;

  PetscFunctionBeginUser;
  HsConsDestroy(&sh->cd.cons);
  PetscCall(DMDestroy(&sh->cd.da));
  PetscCall(VecDestroy(&sh->Xfull));
  PetscCall(HsSegLayoutDestroy(&sh->seg));
  PetscCall(PetscFree(sh->traj));
  PetscCall(PetscFree5(sh->S, sh->S2, sh->Send, sh->a0, sh->da0));
  PetscCall(PetscFree4(sh->alpha, sh->Fi, sh->Fn, sh->Phi));
  PetscCall(PetscFree5(sh->Gp, sh->J, sh->E, sh->A, sh->EC));
  PetscCall(PetscFree2(sh->dY, sh->Ysave));
  if (sh->perm)
    gsl_permutation_free(sh->perm);
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Storage of the local segments and the steps' scratch. */
static PetscErrorCode Allocate(HsSolver s, HsConsShoot *sh)
{
  PetscInt n = s->prob->n, c = s->prob->nc, D = sh->D, W = sh->W, r = 2 * n + c, nloc = sh->seg->s1 - sh->seg->s0;

  PetscFunctionBeginUser;
  PetscCall(HsSegLayoutSetBlocks(sh->seg, sh->W0, W, c + (sh->gl ? c : 0), 1, D)); /* points k_t - 1 .. k_{t+1} */
  PetscCall(HsSegLayoutSetHeadRows(sh->seg, c)); /* interval 0's adjoint constraint */
  PetscCall(PetscMalloc1(sh->seg->toff[nloc] * D + 1, &sh->traj));
  PetscCall(PetscCalloc5(W * W, &sh->S, W * W, &sh->S2, nloc * (W + W * W + W * c) + 1, &sh->Send, c, &sh->a0,
                         c * 2 * n, &sh->da0));
  PetscCall(PetscCalloc4(2 * c, &sh->alpha, r, &sh->Fi, r, &sh->Fn, c, &sh->Phi));
  PetscCall(PetscCalloc5(c * n, &sh->Gp, 5 * r * D, &sh->J, D, &sh->E, D * D, &sh->A, D * (W + c), &sh->EC));
  PetscCall(PetscCalloc2(D, &sh->dY, D, &sh->Ysave));
  sh->perm = gsl_permutation_alloc((size_t)D);
  PetscCheck(sh->perm, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
  PetscFunctionReturn(0);
}

/* The transcription's layout (DMDA, Xnodes, Xmult) for the output, the segments over the ranks, X, F, the outer
 * Jacobian (entries added from any rank) and its linear solver (HsSegLayoutSetUpSolver). Collective. */
static PetscErrorCode SetUp(HsSolver s)
{
  HsConsShoot *sh = s->data;
  PetscInt     c  = s->prob->nc;

  PetscFunctionBeginUser;
  PetscCheck(!s->prob->ncinv && !s->prob->cons_end_moves, PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
             "problem '%s': the extended class's end with conserved invariants ('conserved:', at rest or not) or "
             "free coordinates with the momenta fixed at 0 (docs/constrained.md) is not implemented in the "
             "second-order multiple shooting; use the transcription or -hs_scheme conserving4",
             s->prob->name);
  PetscCall(HsConstrainedCreateLayout(s));
  sh->n = s->prob->n, sh->c = c, sh->x0 = s->prob->x0, sh->gl = PETSC_TRUE;
  for (PetscInt i = 0; i < s->prob->n; i++) /* the terminal coordinates' pattern is the problem's, fixed */
    sh->gl = (PetscBool)(sh->gl && s->prob->xT_fixed[i]);
  sh->D = 4 * s->prob->n + 2 * c, sh->W = sh->D + 2 * s->prob->n, sh->W0 = 2 * s->prob->n;
  PetscCall(DMCreateGlobalVector(sh->cd.da, &sh->Xfull));
  PetscCall(Allocate(s, sh));
  PetscCall(PreSolve(s));
  PetscCall(HsSegLayoutSetUpSolver(sh->seg, s, sh->W + c + 1, Jacobian));
  if (!s->prob->cons_extended) { /* the closed form: the secant line search, as the transcription's (from the default
       guess of the Cartesian pendulum, 4 segments: 15 Newton iterations; hsbt failed after 18) */
    SNESLineSearch ls;
    PetscCall(SNESGetLineSearch(s->snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHL2));
  }
  PetscFunctionReturn(0);
}

/*@ HsConsShootSetUp - makes s, a shooting solver whose problem has holonomic constraints, the multiple shooting of the
    constrained scheme (this file's head; docs/constrained.md) on M segments between knots (M + 1 nodes, copied) and
    sets it up (bvp/impls internal; the shooting formulation's set-up calls it). Frees the shooting's data, takes its
    own and fills the operations. Collective. @*/
PetscErrorCode HsConsShootSetUp(HsSolver s, PetscInt M, const PetscInt *knots)
{
  HsConsShoot *sh;
  HsSegLayout *seg;

  PetscFunctionBeginUser;
  PetscCall(HsSegLayoutCreate(PetscObjectComm((PetscObject)s), M, knots, &seg)); /* knots: the shooting's */
  PetscCall((*s->ops->destroy)(s));
  PetscCall(PetscNew(&sh));
  sh->seg                = seg;
  s->data                = sh;
  s->ops->setfromoptions = NULL; /* the shooting's keys were read; its data are gone */
  s->ops->setupksp       = NULL;
  s->ops->resetiterate   = NULL;
  s->ops->setup          = SetUp;
  s->ops->guess          = Guess;
  s->ops->presolve       = PreSolve;
  s->ops->postsolve      = PostSolve;
  s->ops->describe       = Describe;
  s->ops->view           = HsConstrainedView;
  s->ops->writesummary   = HsConstrainedWriteSummary;
  s->ops->destroy        = Destroy;
  s->ops->residual       = Residual;
  PetscCall(SetUp(s));
  PetscFunctionReturn(0);
}
