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

/* max_i |a_i|; NaN if some a_i is NaN (so that a test "norm < limit" fails). A comparison, not fmax(): gcc calls
 * libm's fmax for its NaN rules, which the test before it makes moot (1 % of a kepler shooting solve). */
static inline double HsNormInf(int n, const double *a)
{
  double m = 0;
  for (int i = 0; i < n; i++) {
    double v = fabs(a[i]);
    if (isnan(a[i]))
      return NAN;
    if (v > m)
      m = v;
  }
  return m;
}

/* LU factorization with partial pivoting of the n x n row-major A, in place (L unit lower, U upper), as
 * LAPACK's dgetf2 does it: in column j the row of the first largest |a_ij|, i >= j, is swapped into row j
 * and recorded in piv[j]. For the march's step systems (n <= 2 dim, a few to a few tens): GSL's
 * gsl_linalg_LU_decomp spent ~2,300 instructions on a 4 x 4 and ~13,600 on an 8 x 8 in BLAS calls and
 * their workspace allocation (callgrind, bench/README.md "The march's step kernels"); these loops take a
 * tenth. Returns 1 if a pivot is exactly zero (A singular; factoring goes on), else 0 (NaN entries are
 * not detected here: they propagate into the solution, where the caller's finiteness test sees them). */
static inline int HsLUFactor(int n, double *A, int *piv)
{
  int singular = 0;
  for (int j = 0; j < n; j++) {
    int    p    = j;
    double amax = fabs(A[j * n + j]);
    for (int i = j + 1; i < n; i++)
      if (fabs(A[i * n + j]) > amax)
        amax = fabs(A[i * n + j]), p = i;
    piv[j] = p;
    if (p != j)
      for (int c = 0; c < n; c++) {
        double t = A[j * n + c];
        A[j * n + c] = A[p * n + c], A[p * n + c] = t;
      }
    if (A[j * n + j] == 0) {
      singular = 1;
      continue;
    }
    for (int i = j + 1; i < n; i++) {
      double l = A[i * n + j] /= A[j * n + j];
      if (l != 0)
        for (int c = j + 1; c < n; c++)
          A[i * n + c] -= l * A[j * n + c];
    }
  }
  return singular;
}

/* Solves A X = B in place for the w columns of B (n x w, row-major) with the factors of HsLUFactor.
 * Returns 1 (B untouched) if a pivot is zero, else 0. */
static inline int HsLUSolve(int n, const double *LU, const int *piv, int w, double *B)
{
  for (int j = 0; j < n; j++)
    if (LU[j * n + j] == 0)
      return 1;
  for (int j = 0; j < n; j++) /* the row swaps in the order of the factorization, */
    if (piv[j] != j)
      for (int c = 0; c < w; c++) {
        double t = B[j * w + c];
        B[j * w + c] = B[piv[j] * w + c], B[piv[j] * w + c] = t;
      }
  for (int j = 0; j < n; j++) { /* then L^{-1} (rows swapped with the full rows of L: dgetrs' order) */
    for (int i = j + 1; i < n; i++) {
      double l = LU[i * n + j];
      if (l != 0)
        for (int c = 0; c < w; c++)
          B[i * w + c] -= l * B[j * w + c];
    }
  }
  for (int j = n - 1; j >= 0; j--) { /* U^{-1} */
    for (int c = 0; c < w; c++)
      B[j * w + c] /= LU[j * n + j];
    for (int i = 0; i < j; i++) {
      double u = LU[i * n + j];
      if (u != 0)
        for (int c = 0; c < w; c++)
          B[i * w + c] -= u * B[j * w + c];
    }
  }
  return 0;
}

#endif
