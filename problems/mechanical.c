/* hamshoot: the energy of a mechanical system from its mass matrix and
 * potential, E(q,p) = 1/2 p^T M(q)^{-1} p + V(q) (DESIGN.md section 1), without
 * a symbolic inverse. With v = M^{-1} p (Cholesky factorization, GSL):
 *
 *   grad_p E = v,                 grad_q E_i = -1/2 v^T M_{,i} v + V_{,i}
 *   E_pp = M^{-1},                E_{q_i p} = -M^{-1} M_{,i} v
 *   E_{q_i q_j} = -1/2 v^T M_{,ij} v + v^T M_{,i} M^{-1} M_{,j} v + V_{,ij}
 *
 * Third derivatives are not formed: the problem's d3 stays NULL and Newton on
 * the conserving scheme uses the central difference of this Hessian
 * (HsFunctionD3). A mass matrix that is not positive definite at q is a
 * recoverable domain error (return 1).
 */
#include "hsmechanical.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <stdlib.h>
#include <string.h>

#define HS_MECH_MAXN 16

typedef struct {
  HsMechanical mech;
  void (*destroy_user)(void *);
  double      M[HS_MECH_MAXN * HS_MECH_MAXN], dM[HS_MECH_MAXN * HS_MECH_MAXN * HS_MECH_MAXN];
  double      d2M[HS_MECH_MAXN * HS_MECH_MAXN * HS_MECH_MAXN * HS_MECH_MAXN];
  double      dV[HS_MECH_MAXN], d2V[HS_MECH_MAXN * HS_MECH_MAXN], v[HS_MECH_MAXN], w[HS_MECH_MAXN * HS_MECH_MAXN];
  gsl_matrix *L;
} MechCtx;

/* Factor M(q) and solve v = M^{-1} p; need: 0 = M only, 1 = + dM, 2 = + d2M. */
static int MechEval(MechCtx *c, const double *x, int need, double *V)
{
  int             n = c->mech.n, st;
  gsl_vector_view vv;

  st = c->mech.mass(x, c->M, need >= 1 ? c->dM : NULL, need >= 2 ? c->d2M : NULL, c->mech.ctx);
  if (st)
    return st;
  st = c->mech.potential(x, V, need >= 1 ? c->dV : NULL, need >= 2 ? c->d2V : NULL, c->mech.ctx);
  if (st)
    return st;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      gsl_matrix_set(c->L, (size_t)i, (size_t)j, c->M[i * n + j]);
  if (gsl_linalg_cholesky_decomp1(c->L))
    return 1; /* not positive definite: outside the domain */
  memcpy(c->v, x + n, (size_t)n * sizeof(double));
  vv = gsl_vector_view_array(c->v, (size_t)n);
  return gsl_linalg_cholesky_svx(c->L, &vv.vector) ? 1 : 0;
}

/* u^T A w for n x n A */
static double Quad(int n, const double *u, const double *A, const double *w)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      s += u[i] * A[i * n + j] * w[j];
  return s;
}

static int MechE(const double *x, double *f, void *ctx)
{
  MechCtx *c = ctx;
  double   V;
  int      n = c->mech.n, st = MechEval(c, x, 0, &V);
  if (st)
    return st;
  *f = V;
  for (int i = 0; i < n; i++)
    *f += 0.5 * x[n + i] * c->v[i];
  return 0;
}

static int MechGrad(const double *x, double *g, void *ctx)
{
  MechCtx *c = ctx;
  double   V;
  int      n = c->mech.n, st = MechEval(c, x, 1, &V);
  if (st)
    return st;
  for (int i = 0; i < n; i++) {
    g[i]     = -0.5 * Quad(n, c->v, c->dM + i * n * n, c->v) + c->dV[i];
    g[n + i] = c->v[i];
  }
  return 0;
}

static int MechHess(const double *x, double *H, void *ctx)
{
  MechCtx *c = ctx;
  double   V, *Mv = c->w; /* Mv[i*n + :] = M^{-1} M_{,i} v */
  int      n = c->mech.n, d = 2 * n, st = MechEval(c, x, 2, &V);
  if (st)
    return st;
  for (int i = 0; i < n; i++) {
    gsl_vector_view col = gsl_vector_view_array(Mv + i * n, (size_t)n);
    for (int k = 0; k < n; k++) {
      double s = 0;
      for (int l = 0; l < n; l++)
        s += c->dM[i * n * n + k * n + l] * c->v[l];
      Mv[i * n + k] = s;
    }
    gsl_linalg_cholesky_svx(c->L, &col.vector);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0; /* v^T M_{,i} M^{-1} M_{,j} v = (M_{,i} v) . (M^{-1} M_{,j} v) */
      for (int k = 0; k < n; k++)
        for (int l = 0; l < n; l++)
          s += c->dM[i * n * n + k * n + l] * c->v[l] * Mv[j * n + k];
      H[i * d + j]     = -0.5 * Quad(n, c->v, c->d2M + (i * n + j) * n * n, c->v) + s + c->d2V[i * n + j];
      H[i * d + n + j] = H[(n + j) * d + i] = -Mv[i * n + j];
    }
  /* E_pp = M^{-1}: columns by Cholesky solves */
  for (int j = 0; j < n; j++) {
    double          e[HS_MECH_MAXN] = {0};
    gsl_vector_view ev              = gsl_vector_view_array(e, (size_t)n);
    e[j]                            = 1;
    gsl_linalg_cholesky_svx(c->L, &ev.vector);
    for (int i = 0; i < n; i++)
      H[(n + i) * d + n + j] = e[i];
  }
  return 0;
}

static void MechDestroy(void *ctx)
{
  MechCtx *c = ctx;
  if (!c)
    return;
  if (c->destroy_user)
    c->destroy_user(c->mech.ctx);
  gsl_matrix_free(c->L);
  free(c);
}

int HsProblemSetMechanical(HsProblem *prob, const HsMechanical *mech, void (*destroy_user)(void *))
{
  MechCtx *c;

  if (mech->n != prob->n || mech->n > HS_MECH_MAXN || !mech->mass || !mech->potential)
    return -1;
  c = calloc(1, sizeof(*c));
  if (!c)
    return -1;
  c->mech         = *mech;
  c->destroy_user = destroy_user;
  c->L            = gsl_matrix_alloc((size_t)mech->n, (size_t)mech->n);
  if (!c->L) {
    free(c);
    return -1;
  }
  gsl_set_error_handler_off();
  prob->ctx         = c;
  prob->destroy_ctx = MechDestroy;
  prob->E.f         = MechE;
  prob->E.grad      = MechGrad;
  prob->E.hess      = MechHess;
  prob->E.d3        = NULL;
  return 0;
}

void *HsProblemGetMechanicalContext(const HsProblem *prob)
{
  return prob->destroy_ctx == MechDestroy ? ((MechCtx *)prob->ctx)->mech.ctx : NULL;
}

void *HsMechanicalUserContext(void *prob_ctx) { return ((MechCtx *)prob_ctx)->mech.ctx; }
