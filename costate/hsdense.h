/* hamshoot: tiny dense kernels on row-major arrays (costate/, and the shooting Jacobian of bvp/).
 * The blocks are 2n x 2n with n of order 1..10; plain loops beat BLAS call
 * overhead at that size. */
#ifndef HSDENSE_H
#define HSDENSE_H

#include <math.h>
#include <string.h>

/* The short kernels inlined even into large callers (conserving4's substep, instantiated for n = 1, 2, 3: GCC had
   left HsDot and HsMatVec calls there, 23k a solve), so that a constant n unrolls them. */
#if defined(__GNUC__)
#define HS_DENSE_INLINE static inline __attribute__((always_inline))
#else
#define HS_DENSE_INLINE static inline
#endif

HS_DENSE_INLINE double HsDot(int n, const double *a, const double *b)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

HS_DENSE_INLINE double HsNorm(int n, const double *a) { return sqrt(HsDot(n, a, a)); }

static inline void HsZero(int n, double *a) { memset(a, 0, (size_t)n * sizeof(double)); }

static inline void HsCopy(int n, const double *a, double *b) { memcpy(b, a, (size_t)n * sizeof(double)); }

/* y = A x (A: r x c) */
HS_DENSE_INLINE void HsMatVec(int r, int c, const double *A, const double *x, double *y)
{
  for (int i = 0; i < r; i++) {
    double s = 0;
    for (int j = 0; j < c; j++)
      s += A[i * c + j] * x[j];
    y[i] = s;
  }
}

/* y = A^T x (A: r x c, y: c) */
static inline void HsMatTVec(int r, int c, const double *A, const double *x, double *y)
{
  for (int j = 0; j < c; j++)
    y[j] = 0;
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++)
      y[j] += A[i * c + j] * x[i];
}

/* A += alpha * u v^T (n x n) */
static inline void HsRank1(int n, double alpha, const double *u, const double *v, double *A)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i * n + j] += alpha * u[i] * v[j];
}

/* B = A^T (n x n), B != A */
static inline void HsTranspose(int n, const double *A, double *B)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[j * n + i] = A[i * n + j];
}

/* A += alpha I */
static inline void HsAddDiag(int n, double alpha, double *A)
{
  for (int i = 0; i < n; i++)
    A[i * n + i] += alpha;
}

/* Y = alpha * Y + beta * X */
static inline void HsAXPBY(int len, double beta, const double *X, double alpha, double *Y)
{
  for (int i = 0; i < len; i++)
    Y[i] = alpha * Y[i] + beta * X[i];
}

/* y = JJ x with JJ = [[0, I], [-I, 0]] (dim = 2n): y = (x_p, -x_q) */
HS_DENSE_INLINE void HsApplyJ(int dim, const double *x, double *y)
{
  int n = dim / 2;
  for (int i = 0; i < n; i++) {
    y[i]     = x[n + i];
    y[n + i] = -x[i];
  }
}

/* C = A^T JJ (dim x dim). (A^T JJ)_{ij} = sum_k A_{ki} JJ_{kj};
 * JJ_{kj} = 1 if j = k + n (k < n), -1 if j = k - n (k >= n). */
static inline void HsMatTJ(int dim, const double *A, double *C)
{
  int n = dim / 2;
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < dim; j++)
      C[i * dim + j] = (j >= n) ? A[(j - n) * dim + i] : -A[(j + n) * dim + i];
}

/* C += A S with A: r x c, S: c x w, C: r x w (row-major); zero entries of A are skipped
 * (the step Jacobian blocks are sparse for mechanical systems). */
static inline void HsMatMatAdd(int r, int c, int w, const double *A, const double *S, double *C)
{
  for (int i = 0; i < r; i++)
    for (int l = 0; l < c; l++) {
      double a = A[i * c + l];
      if (a != 0)
        for (int j = 0; j < w; j++)
          C[i * w + j] += a * S[l * w + j];
    }
}

/* max_i |a_i|; NaN if some a_i is NaN (so that a test "norm < limit" fails) */
static inline double HsNormInf(int n, const double *a)
{
  double m = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(a[i]))
      return NAN;
    m = fmax(m, fabs(a[i]));
  }
  return m;
}

#endif
