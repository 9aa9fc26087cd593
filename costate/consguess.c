/* hamshoot: costates implied by a state guess of a constrained system (hsconstrained.h; docs/constrained.md,
 * "Costates implied by the states").
 *
 * A state guess x_k = (q_k, p_k) implies, per interval, the control u and the constraint force gamma that its
 * momentum equation p_{k+1} - p_k = h (-grad_q E(qbar, pbar) - G(qbar)^T gamma + B(qbar) u) needs (least squares
 * where the guess is not a motion of the system), and from u the costate lambda^p: the least-squares solution of the
 * optimality condition B^T lambda^p = R u together with the adjoint constraint G lambda^p = 0. The costate equation's
 * leading term q' = M^{-1} p, lambda^p' = -M^{-1} lambda^q gives lambda^q = -M (lambda^p)' (by differences across
 * the intervals, bvp/impls/constrained.c). At a solution's states these are its costates up to O(h^2) (the midpoint
 * evaluations) and the differences' O(h). */
#include "hsconsimpl.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x (cols) = the minimum-norm least-squares solution of A x = b, A rows x cols row-major (not changed), by the SVD of
   A or of A^T (whichever is tall), singular values below HS_CONS_IMPLIED_RCOND times the largest dropped. */
static int LeastSquares(int rows, int cols, const double *A, const double *b, double *x)
{
  int     tall = rows >= cols, M = tall ? rows : cols, N = tall ? cols : rows, st;
  double *U = malloc(sizeof(double) * (size_t)(M * N + N * N + 3 * N));
  double *V = U + M * N, *S = V + N * N, *work = S + N, *y = work + N;

  if (!U)
    return HS_ENOMEM;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      U[tall ? i * N + j : j * N + i] = A[i * cols + j];
  {
    gsl_matrix_view Uv      = gsl_matrix_view_array(U, (size_t)M, (size_t)N),
                    Vv      = gsl_matrix_view_array(V, (size_t)N, (size_t)N);
    gsl_vector_view      Sv = gsl_vector_view_array(S, (size_t)N), Wv = gsl_vector_view_array(work, (size_t)N);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    st                       = gsl_linalg_SV_decomp(&Uv.matrix, &Vv.matrix, &Sv.vector, &Wv.vector);
    gsl_set_error_handler(old);
  }
  if (st) {
    free(U);
    return HS_ESINGULAR;
  }
  /* tall: A = U S V^T, x = V S^+ U^T b; wide: A^T = U S V^T, x = U S^+ V^T b */
  for (int l = 0; l < N; l++) {
    double t = 0;
    for (int i = 0; i < (tall ? M : N); i++)
      t += (tall ? U[i * N + l] : V[i * N + l]) * b[i];
    y[l] = S[l] > HS_CONS_IMPLIED_RCOND * S[0] ? t / S[l] : 0;
  }
  for (int i = 0; i < cols; i++) {
    double t = 0;
    for (int l = 0; l < N; l++)
      t += (tall ? V[i * N + l] : U[i * N + l]) * y[l];
    x[i] = t;
  }
  free(U);
  for (int i = 0; i < cols; i++)
    if (!isfinite(x[i]))
      return HS_ESINGULAR;
  return HS_SUCCESS;
}

/*@ HsConsImpliedCostate - the control u (m), the constraint force gamma (nc) and the costate lambda^p (n) that the
    interval between the states a and b (2n each) implies: (gamma, u) the least-squares solution of
    [-G^T B] (gamma, u) = (p_b - p_a)/h + grad_q E(qbar, pbar) (G, B at qbar), lambda^p the minimum-norm
    least-squares solution of B^T lambda^p = R u, G lambda^p = 0. Not collective (serial). HS_SUCCESS, HS_EDOM (B or
    E not defined at qbar), HS_ESINGULAR, HS_ENOMEM. @*/
int HsConsImpliedCostate(HsCons *cs, const double *a, const double *b, double *u, double *gamma, double *lp)
{
  int     n = cs->n, m = cs->m, c = cs->c, st;
  double *A = malloc(sizeof(double) * (size_t)(n * (c + m) + 2 * n + 2 * (c + m)));
  double *r = A + n * (c + m), *sol = r + n, *rhs = sol + c + m;

  if (!A)
    return HS_ENOMEM;
  HsConsMid(cs, a, b);
  if (!(st = HsConsPhi(cs, cs->qa, cs->Phi, cs->G)) && !(st = HsConsEvalB(cs, cs->qa, 0)) &&
      !(st = HsConsEvalGrad(cs, cs->qa, cs->qb))) {
    for (int i = 0; i < n; i++) {
      r[i] = (b[n + i] - a[n + i]) / cs->h + cs->g[i];
      for (int j = 0; j < c; j++)
        A[i * (c + m) + j] = -cs->G[j * n + i];
      for (int j = 0; j < m; j++)
        A[i * (c + m) + c + j] = cs->B[i * m + j];
    }
    st = LeastSquares(n, c + m, A, r, sol);
  }
  if (!st) {
    memcpy(gamma, sol, sizeof(double) * (size_t)c);
    memcpy(u, sol + c, sizeof(double) * (size_t)m);
    for (int j = 0; j < m; j++) { /* [B^T; G] lambda^p = [R u; 0] */
      rhs[j] = 0;
      for (int jj = 0; jj < m; jj++)
        rhs[j] += cs->prob->R[j * m + jj] * u[jj];
      for (int i = 0; i < n; i++)
        A[j * n + i] = cs->B[i * m + j];
    }
    for (int j = 0; j < c; j++) {
      rhs[m + j] = 0;
      memcpy(A + (m + j) * n, cs->G + j * n, sizeof(double) * (size_t)n);
    }
    st = LeastSquares(m + c, n, A, rhs, lp);
  }
  free(A);
  return st;
}

/*@ HsConsImpliedLq - lambda^q = -M dlp (n values) from a difference quotient dlp of lambda^p (the costate equation's
    leading term, lambda^p' = -M^{-1} lambda^q): M^{-1} lambda^q = -dlp solved by Cholesky. Not collective.
    HS_SUCCESS, HS_ESINGULAR, HS_ENOMEM. @*/
int HsConsImpliedLq(HsCons *cs, const double *dlp, double *lq)
{
  int     n = cs->n, st;
  double *A = malloc(sizeof(double) * (size_t)(n * n));

  if (!A)
    return HS_ENOMEM;
  memcpy(A, cs->Minv, sizeof(double) * (size_t)(n * n));
  for (int i = 0; i < n; i++)
    lq[i] = -dlp[i];
  {
    gsl_matrix_view      Av  = gsl_matrix_view_array(A, (size_t)n, (size_t)n);
    gsl_vector_view      xv  = gsl_vector_view_array(lq, (size_t)n);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    st = gsl_linalg_cholesky_decomp1(&Av.matrix) || gsl_linalg_cholesky_svx(&Av.matrix, &xv.vector);
    gsl_set_error_handler(old);
  }
  free(A);
  return st ? HS_ESINGULAR : HS_SUCCESS;
}
