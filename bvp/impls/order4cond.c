/* hamshoot: the condensed LU of conserving4's transcription Jacobian (-hs_condense, issue 43), a PCSHELL that the
 * transcription's set-up puts in hsband's place on one rank (bvp/impls/order4.c's file head has the layout).
 *
 * Interval k's stage nodes s1 = z_{k,1}, s2 = z_{k,2} enter only its own three substeps:
 *   substep 1 (point k rows [2n, 6n)):               A1 z_k + B1 s1 = b1
 *   substep 2 (point k rows [6n, 10n)):              A2 s1  + B2 s2 = b2
 *   substep 3 (point k rows [10n, 12n), then point k+1 rows [0, 2n)):  A3 s2 + B3 z_{k+1} = b3
 * with B1, B2 = I - ch S D_b (near I for small h). Eliminating them interval by interval,
 *   y1 = B1^-1 b1, y2 = B2^-1 (b2 - A2 y1), M1 = B1^-1 A1, M2 = B2^-1 A2 M1:  s1 = y1 - M1 z_k, s2 = y2 + M2 z_k,
 *   and substep 3 becomes (A3 M2) z_k + B3 z_{k+1} = b3 - A3 y2,
 * leaves 4n unknowns a point instead of 12n: the rows x_0 = x0 (2n), the N condensed substeps (4n each) and the
 * terminal rows (2n), a band of 6n - 1 below and above the diagonal, factored by LU with partial pivoting (the fill
 * of pivoting 6n - 1 more above). Point N's dummy rows are the identity. Each B is factored with partial pivoting
 * too, but no pivot crosses from a B into the band: where the Bs are well-conditioned (near I: a fine enough grid, near
 * a solution) the solve is as accurate as an LU of the whole matrix and the Newton steps hsband's to round-off; where
 * not, its backward error can be large (1e-3 on pendulum_free.ocp at N = 20 far from the solution, 1e-6 on
 * manipulator3 at N = 40, whose Newton had diverged or failed so). So every solve is checked (Checked): one whose
 * normwise backward error exceeds HS_CONDENSE_BACKWARD is solved again by an inner hsband, which factors this PC's
 * matrices from then on; so is a zero pivot in a B or the band (a singular B need not make J singular).
 * det J = sign det B1 det B2 (all intervals) det(condensed) det(dummies), the sign that of the row and column orders
 * (Determinant). */
#include "order4impl.h"

#include <math.h>
#include <petsc/private/pcimpl.h>

typedef struct {
  PetscInt     n, q, N, D, m, kl, ku, w; /* q = 4n, D = 12n; the condensed size m = q (N + 1), its band */
  PetscScalar *blk;                      /* per interval 7 q x q: LU(B1), LU(B2), A2, A3, M1, M2, scratch */
  PetscInt    *piv;                      /* per interval 2q: B1's and B2's row swaps */
  PetscScalar *band;                     /* m x w, row R's columns R - kl .. R + kl + ku */
  PetscInt    *bpiv;                     /* the band's row swaps */
  PetscInt    *blast;                    /* the band's rows' last nonzero column (fill included) */
  PetscScalar *dum;                      /* point N's 8n dummy rows' diagonal */
  PetscScalar *z, *y;                    /* m; per interval 2q (y1, y2) */
  PC           inner;                    /* hsband of the whole matrix after a zero pivot, else NULL */
  PetscBool    use_inner;
  PetscBool    rejected; /* a condensed solve was not accurate: hsband factors this PC's matrices from then on */
  Vec          r;        /* a solve's residual b - J x (Solved) */
  PetscReal    Anorm;    /* ||J||_inf of the factored matrix */
  PetscBool    borrowed; /* blk .. y are another PC's (HsPCBorrowWork): not freed here */
} HsO4Cond;

/* The largest normwise backward error ||b - J x|| / (||J|| ||x|| + ||b||) (infinity norms) of a condensed solve that
   is taken: above it the solve is done again by hsband's LU of the whole matrix. Block elimination pivots only within
   each interval's B1, B2 and the band, not across them, so where a B is ill-conditioned (far from a solution on a
   coarse grid: pendulum_free.ocp at N = 20, manipulator3 at N = 40 from the default guess) its steps can lose the
   backward stability of an LU of the whole matrix, and Newton had diverged there; hsband's and MUMPS' backward errors
   are ~1e-16. */
#define HS_CONDENSE_BACKWARD 1e-13

/* The kernels below are inlined into CondenseInterval, ForwardInterval and BackInterval, which are instantiated for
   q = 4 and 8 (n = 1, 2: the sizes order4.c condenses) so that the compiler unrolls and vectorizes their short loops
   (issue 43: a third fewer instructions than the loops over a variable q), and for any q. */
#if defined(__GNUC__)
#define HS_COND_INLINE static inline __attribute__((always_inline))
#else
#define HS_COND_INLINE static inline
#endif

/* LU with partial pivoting of the q x q row-major a in place (piv: the row swapped with row c at step c); 1 at an
   exact zero pivot. */
HS_COND_INLINE int DenseLU(const int q, PetscScalar *restrict a, PetscInt *restrict piv)
{
  for (int c = 0; c < q; c++) {
    int       p  = c;
    PetscReal mx = PetscAbsScalar(a[c * q + c]);
    for (int r = c + 1; r < q; r++)
      if (PetscAbsScalar(a[r * q + c]) > mx)
        mx = PetscAbsScalar(a[r * q + c]), p = r;
    if (mx == 0)
      return 1;
    piv[c] = p;
    if (p != c)
      for (int j = 0; j < q; j++) {
        PetscScalar t = a[c * q + j];
        a[c * q + j] = a[p * q + j], a[p * q + j] = t;
      }
    for (int r = c + 1; r < q; r++) {
      PetscScalar l = a[r * q + c] / a[c * q + c];
      a[r * q + c]  = l;
      for (int j = c + 1; j < q; j++)
        a[r * q + j] -= l * a[c * q + j];
    }
  }
  return 0;
}

/* x = A^-1 x for DenseLU's factors (x: nr columns of a row-major q x nr block, or a vector with nr = 1). */
HS_COND_INLINE void DenseSolve(const int q, const PetscScalar *restrict a, const PetscInt *restrict piv, const int nr,
                               PetscScalar *restrict x)
{
  for (int c = 0; c < q; c++) {
    if (piv[c] != c)
      for (int j = 0; j < nr; j++) {
        PetscScalar t = x[c * nr + j];
        x[c * nr + j] = x[piv[c] * nr + j], x[piv[c] * nr + j] = t;
      }
    for (int r = c + 1; r < q; r++)
      for (int j = 0; j < nr; j++)
        x[r * nr + j] -= a[r * q + c] * x[c * nr + j];
  }
  for (int c = q - 1; c >= 0; c--)
    for (int j = 0; j < nr; j++) {
      PetscScalar v = x[c * nr + j];
      for (int k = c + 1; k < q; k++)
        v -= a[c * q + k] * x[k * nr + j];
      x[c * nr + j] = v / a[c * q + c];
    }
}

/* C = A B (q x q, row-major) */
HS_COND_INLINE void DenseMul(const int q, const PetscScalar *restrict A, const PetscScalar *restrict B,
                             PetscScalar *restrict C)
{
  for (int i = 0; i < q; i++)
    for (int j = 0; j < q; j++) {
      PetscScalar v = 0;
      for (int l = 0; l < q; l++)
        v += A[i * q + l] * B[l * q + j];
      C[i * q + j] = v;
    }
}

/* The condensed band's LU with partial pivoting in place (LAPACK's gbtf2 order; the multipliers stay in their rows,
   later swaps move only columns right of them); 1 at an exact zero pivot. */
static int BandLU(HsO4Cond *c)
{
  PetscInt     m = c->m, kl = c->kl, w = c->w, *last = c->blast;
  PetscScalar *b = c->band;
#define BA(R, C) b[(R)*w + (C) - (R) + kl]
  for (PetscInt k = 0; k < m; k++) {
    PetscInt  p = k, rl = PetscMin(m - 1, k + kl), cl;
    PetscReal mx = PetscAbsScalar(BA(k, k));
    for (PetscInt r = k + 1; r <= rl; r++)
      if (PetscAbsScalar(BA(r, k)) > mx)
        mx = PetscAbsScalar(BA(r, k)), p = r;
    if (mx == 0)
      return 1;
    c->bpiv[k] = p;
    if (p != k) { /* the rows' entries up to the longer one's last column (the band holds zeros beyond each) */
      PetscInt lk = last[k];
      cl = PetscMax(last[k], last[p]), last[k] = last[p], last[p] = lk;
      for (PetscInt j = k; j <= cl; j++) {
        PetscScalar t = BA(k, j);
        BA(k, j) = BA(p, j), BA(p, j) = t;
      }
    }
    cl = last[k];
    for (PetscInt r = k + 1; r <= rl; r++) {
      PetscScalar l = BA(r, k) / BA(k, k);
      BA(r, k)      = l;
      if (l == 0)
        continue;
      for (PetscInt j = k + 1; j <= cl; j++)
        BA(r, j) -= l * BA(k, j);
      last[r] = PetscMax(last[r], cl);
    }
  }
  return 0;
}

/* x = (condensed)^-1 x by BandLU's factors. */
static void BandSolve(const HsO4Cond *c, PetscScalar *x)
{
  PetscInt           m = c->m, kl = c->kl, w = c->w;
  const PetscScalar *b = c->band;

  for (PetscInt k = 0; k < m; k++) {
    PetscInt p = c->bpiv[k];
    if (p != k) {
      PetscScalar t = x[k];
      x[k] = x[p], x[p] = t;
    }
    for (PetscInt r = k + 1; r <= PetscMin(m - 1, k + kl); r++)
      x[r] -= BA(r, k) * x[k];
  }
  for (PetscInt k = m - 1; k >= 0; k--) {
    PetscScalar v = x[k];
    for (PetscInt j = k + 1; j <= c->blast[k]; j++)
      v -= BA(k, j) * x[j];
    x[k] = v / BA(k, k);
  }
#undef BA
}

/* Row `row` of the CSR parts P into the dense rows d0 (columns c0 .. c0 + q - 1) and d1 (c1 ..; d1 NULL: none),
   zeroed first; *bad if the row has an entry elsewhere (not conserving4's pattern); *an = max(*an, the row's sum of
   |entries|) (||J||_inf for Checked). Its exact pattern (order4.c, Segments: the two blocks whole, ascending) is read
   without a search. */
HS_COND_INLINE void ReadRow(const HsAIJParts *P, const int q, PetscInt row, PetscInt c0, PetscScalar *d0, PetscInt c1,
                            PetscScalar *d1, PetscBool *bad, PetscReal *an)
{
  PetscInt           e0 = P->ia[0][row], len = P->ia[0][row + 1] - e0;
  const PetscInt    *ja  = P->ja[0] + e0;
  const PetscScalar *aa  = P->aa[0] + e0;
  PetscReal          sum = 0;

  if (len == (d1 ? 2 * q : q) && ja[0] == c0 && ja[q - 1] == c0 + q - 1 &&
      (!d1 || (ja[q] == c1 && ja[2 * q - 1] == c1 + q - 1))) {
    for (PetscInt j = 0; j < q; j++)
      d0[j] = aa[j], sum += PetscAbsScalar(aa[j]);
    for (PetscInt j = 0; d1 && j < q; j++)
      d1[j] = aa[q + j], sum += PetscAbsScalar(aa[q + j]);
    *an = PetscMax(*an, sum);
    return;
  }
  PetscArrayzero(d0, q);
  if (d1)
    PetscArrayzero(d1, q);
  for (PetscInt e = 0; e < len; e++) {
    PetscInt col = ja[e];
    sum += PetscAbsScalar(aa[e]);
    if (col >= c0 && col < c0 + q)
      d0[col - c0] = aa[e];
    else if (d1 && col >= c1 && col < c1 + q)
      d1[col - c1] = aa[e];
    else if (aa[e] != 0)
      *bad = PETSC_TRUE;
  }
  *an = PetscMax(*an, sum);
}

/* Interval k: its blocks read from P, B1 and B2 factored, M1, M2 and the condensed rows (A3 M2 | B3) into the band;
   1 at a zero pivot. A1, B3: q x q scratch. */
HS_COND_INLINE int CondenseBody(HsO4Cond *c, const HsAIJParts *P, PetscInt k, PetscScalar *A1, PetscScalar *B3,
                                PetscBool *bad, const int q)
{
  PetscInt     n = c->n, D = c->D, qq = q * q, kD = k * D, w = c->w, kl = c->kl;
  PetscScalar *B1 = c->blk + 7 * qq * k, *B2 = B1 + qq, *A2 = B2 + qq, *A3 = A2 + qq, *M1 = A3 + qq, *M2 = M1 + qq,
              *Cm = M2 + qq;
  PetscInt *p1 = c->piv + 2 * q * k, *p2 = p1 + q;

  for (int i = 0; i < q; i++) {
    PetscInt r3 = i < 2 * n ? kD + 10 * n + i : kD + D + i - 2 * n; /* substep 3: point k's x-part, k+1's lambda */
    ReadRow(P, q, kD + 2 * n + i, kD, A1 + i * q, kD + q, B1 + i * q, bad, &c->Anorm);
    ReadRow(P, q, kD + 6 * n + i, kD + q, A2 + i * q, kD + 2 * q, B2 + i * q, bad, &c->Anorm);
    ReadRow(P, q, r3, kD + 2 * q, A3 + i * q, kD + D, B3 + i * q, bad, &c->Anorm);
  }
  if (DenseLU(q, B1, p1) || DenseLU(q, B2, p2))
    return 1;
  for (int i = 0; i < qq; i++)
    M1[i] = A1[i];
  DenseSolve(q, B1, p1, q, M1); /* M1 = B1^-1 A1 */
  DenseMul(q, A2, M1, M2);
  DenseSolve(q, B2, p2, q, M2); /* M2 = B2^-1 A2 M1 */
  DenseMul(q, A3, M2, Cm);
  for (int i = 0; i < q; i++) { /* row R: columns k q + j and (k + 1) q + j */
    PetscInt     R  = 2 * n + k * q + i;
    PetscScalar *br = c->band + R * w - R + kl;
    for (int j = 0; j < q; j++)
      br[k * q + j] = Cm[i * q + j], br[(k + 1) * q + j] = B3[i * q + j];
  }
  return 0;
}

static int CondenseInterval(HsO4Cond *c, const HsAIJParts *P, PetscInt k, PetscScalar *A1, PetscScalar *B3,
                            PetscBool *bad)
{
  return c->q == 4   ? CondenseBody(c, P, k, A1, B3, bad, 4)
         : c->q == 8 ? CondenseBody(c, P, k, A1, B3, bad, 8)
                     : CondenseBody(c, P, k, A1, B3, bad, (int)c->q);
}

/* Interval k's part of a solve: its stage nodes' right-hand sides eliminated (y1, y2 kept; its condensed right-hand
   side into z). */
HS_COND_INLINE void ForwardBody(HsO4Cond *c, const PetscScalar *b, PetscInt k, PetscScalar *z, const int q)
{
  PetscInt           n = c->n, D = c->D, qq = q * q;
  const PetscScalar *B1 = c->blk + 7 * qq * k, *B2 = B1 + qq, *A2 = B2 + qq, *A3 = A2 + qq;
  PetscScalar       *y1 = c->y + 2 * q * k, *y2 = y1 + q;

  for (int i = 0; i < q; i++)
    y1[i] = b[k * D + 2 * n + i];
  DenseSolve(q, B1, c->piv + 2 * q * k, 1, y1);
  for (int i = 0; i < q; i++) {
    PetscScalar v = b[k * D + 6 * n + i];
    for (int l = 0; l < q; l++)
      v -= A2[i * q + l] * y1[l];
    y2[i] = v;
  }
  DenseSolve(q, B2, c->piv + 2 * q * k + q, 1, y2);
  for (int i = 0; i < q; i++) {
    PetscScalar v = i < 2 * n ? b[k * D + 10 * n + i] : b[(k + 1) * D + i - 2 * n];
    for (int l = 0; l < q; l++)
      v -= A3[i * q + l] * y2[l];
    z[2 * n + k * q + i] = v;
  }
}

/* ... and after the condensed solve its stage nodes: s1 = y1 - M1 z_k, s2 = y2 + M2 z_k. */
HS_COND_INLINE void BackBody(HsO4Cond *c, PetscScalar *x, PetscInt k, const PetscScalar *z, const int q)
{
  PetscInt           D = c->D, qq = q * q;
  const PetscScalar *M1 = c->blk + 7 * qq * k + 4 * qq, *M2 = M1 + qq, *y1 = c->y + 2 * q * k, *y2 = y1 + q;

  for (int i = 0; i < q; i++) {
    PetscScalar v1 = y1[i], v2 = y2[i];
    for (int l = 0; l < q; l++)
      v1 -= M1[i * q + l] * z[k * q + l], v2 += M2[i * q + l] * z[k * q + l];
    x[k * D + q + i] = v1, x[k * D + 2 * q + i] = v2;
  }
}

static void ForwardInterval(HsO4Cond *c, const PetscScalar *b, PetscInt k, PetscScalar *z)
{
  if (c->q == 4)
    ForwardBody(c, b, k, z, 4);
  else if (c->q == 8)
    ForwardBody(c, b, k, z, 8);
  else
    ForwardBody(c, b, k, z, (int)c->q);
}

static void BackInterval(HsO4Cond *c, PetscScalar *x, PetscInt k, const PetscScalar *z)
{
  if (c->q == 4)
    BackBody(c, x, k, z, 4);
  else if (c->q == 8)
    BackBody(c, x, k, z, 8);
  else
    BackBody(c, x, k, z, (int)c->q);
}

/* The whole matrix by the inner hsband (after a zero pivot of the condensation); its failure is pc's. */
static PetscErrorCode SetUpInner(PC pc, HsO4Cond *c, Mat A)
{
  PCFailedReason r;

  PetscFunctionBeginUser;
  if (!c->inner) {
    PetscCall(PCCreate(PetscObjectComm((PetscObject)pc), &c->inner));
    PetscCall(PCSetType(c->inner, "hsband"));
  }
  PetscCall(PCSetOperators(c->inner, A, A));
  PetscCall(PCSetUp(c->inner));
  PetscCall(PCGetFailedReason(c->inner, &r));
  PetscCall(PCSetFailedReason(pc, r));
  PetscCall(
      PetscInfo(pc, "-hs_condense: the whole matrix by hsband (a zero pivot, or a condensed solve not accurate)\n"));
  PetscFunctionReturn(0);
}

/* The condensation and the band's LU of the operator (PCShellSetSetUp); the inner hsband after a zero pivot. */
static PetscErrorCode SetUpCond(PC pc)
{
  HsO4Cond    *c;
  Mat          A;
  HsAIJParts   P;
  PetscInt     n, q, D, N, ND, kl, w;
  PetscScalar *A1, *B3;
  PetscBool    bad  = PETSC_FALSE;
  int          fail = 0;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  n = c->n, q = c->q, D = c->D, N = c->N, ND = N * D, kl = c->kl, w = c->w;
  PetscCall(PCGetOperators(pc, NULL, &A));
  if (c->rejected) { /* a condensed solve of this problem was not accurate (Checked): the next ones likely neither */
    PetscCall(SetUpInner(pc, c, A));
    PetscFunctionReturn(0);
  }
  PetscCall(HsAIJPartsGet(A, PETSC_FALSE, &P));
  PetscCheck(P.ok && !P.part[1], PetscObjectComm((PetscObject)pc), PETSC_ERR_PLIB,
             "-hs_condense: the Jacobian's rows are not available in place on one rank");
  PetscCall(PetscMalloc2(q * q, &A1, q * q, &B3));
  PetscCall(PetscArrayzero(c->band, c->m * w));
  c->Anorm = 0;
  for (PetscInt R = 0; R < c->m; R++) /* the rows' last columns: z_0's, z_{k+1}'s, z_N's */
    c->blast[R] = R < 2 * n ? q - 1 : PetscMin(c->m - 1, ((R - 2 * n) / q + 2) * q - 1);
  for (PetscInt i = 0; i < 2 * n; i++) { /* x_0 = x0 */
    ReadRow(&P, q, i, 0, A1, 0, NULL, &bad, &c->Anorm);
    for (PetscInt j = 0; j < q; j++)
      c->band[i * w + j - i + kl] = A1[j];
  }
  for (PetscInt k = 0; k < N && !fail; k++)
    fail = CondenseInterval(c, &P, k, A1, B3, &bad);
  for (PetscInt i = 0; i < 2 * n; i++) { /* the terminal rows */
    PetscInt R = 2 * n + N * q + i;
    ReadRow(&P, q, ND + 2 * n + i, ND, A1, 0, NULL, &bad, &c->Anorm);
    for (PetscInt j = 0; j < q; j++)
      c->band[R * w + N * q + j - R + kl] = A1[j];
  }
  for (PetscInt i = 0; i < 2 * q; i++) { /* point N's dummies: their diagonal */
    PetscInt row = ND + q + i;
    c->dum[i]    = 0;
    for (PetscInt e = P.ia[0][row]; e < P.ia[0][row + 1]; e++) {
      c->Anorm = PetscMax(c->Anorm, PetscAbsScalar(P.aa[0][e]));
      if (P.ja[0][e] == row)
        c->dum[i] = P.aa[0][e];
      else if (P.aa[0][e] != 0)
        bad = PETSC_TRUE;
    }
    fail = fail || c->dum[i] == 0;
  }
  PetscCall(HsAIJPartsRestore(&P));
  PetscCall(PetscFree2(A1, B3));
  PetscCheck(!bad, PetscObjectComm((PetscObject)pc), PETSC_ERR_PLIB,
             "-hs_condense: the Jacobian is not conserving4's pattern (constraints or a free T)");
  c->use_inner = (PetscBool)(fail || BandLU(c));
  if (c->use_inner)
    PetscCall(SetUpInner(pc, c, A));
  else
    PetscCall(PCSetFailedReason(pc, PC_NOERROR));
  PetscFunctionReturn(0);
}

/* The condensed solve x of J x = b checked (HS_CONDENSE_BACKWARD): above it, this factorization and its solves are
   hsband's from here on, x solved again by it. */
static PetscErrorCode Checked(PC pc, HsO4Cond *c, Vec bv, Vec xv)
{
  Mat                A;
  PetscReal          rn = 0, xn = 0, bn = 0, eta;
  PetscInt           len;
  const PetscScalar *r, *x, *b;

  PetscFunctionBeginUser;
  PetscCall(PCGetOperators(pc, NULL, &A));
  if (!c->r)
    PetscCall(VecDuplicate(bv, &c->r));
  PetscCall(MatMult(A, xv, c->r));
  PetscCall(VecGetLocalSize(bv, &len));
  PetscCall(VecGetArrayRead(c->r, &r));
  PetscCall(VecGetArrayRead(xv, &x));
  PetscCall(VecGetArrayRead(bv, &b));
  for (PetscInt i = 0; i < len; i++) /* r = J x: the infinity norms of b - J x, x and b in one pass */
    rn = PetscMax(rn, PetscAbsScalar(b[i] - r[i])), xn = PetscMax(xn, PetscAbsScalar(x[i])),
    bn = PetscMax(bn, PetscAbsScalar(b[i]));
  PetscCall(VecRestoreArrayRead(bv, &b));
  PetscCall(VecRestoreArrayRead(xv, &x));
  PetscCall(VecRestoreArrayRead(c->r, &r));
  eta = rn / (c->Anorm * xn + bn);
  if (eta <= HS_CONDENSE_BACKWARD) /* also false for a NaN */
    PetscFunctionReturn(0);
  PetscCall(
      PetscInfo(pc, "-hs_condense: backward error %g of the condensed solve; hsband's LU instead\n", (double)eta));
  c->use_inner = c->rejected = PETSC_TRUE;
  PetscCall(SetUpInner(pc, c, A));
  PetscCall(PCApply(c->inner, bv, xv));
  PetscFunctionReturn(0);
}

/* x = J^-1 b (PCShellSetApply): the stage nodes' right-hand sides eliminated, the condensed solve, the stage nodes
   recovered (the file head). */
static PetscErrorCode ApplyCond(PC pc, Vec bv, Vec xv)
{
  HsO4Cond          *c;
  const PetscScalar *b;
  PetscScalar       *x, *z;
  PetscInt           n, q, D, N;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  if (c->use_inner) {
    PetscCall(PCApply(c->inner, bv, xv));
    PetscFunctionReturn(0);
  }
  n = c->n, q = c->q, D = c->D, N = c->N, z = c->z;
  PetscCall(VecGetArrayRead(bv, &b));
  PetscCall(VecGetArray(xv, &x));
  for (PetscInt i = 0; i < 2 * n; i++)
    z[i] = b[i], z[2 * n + N * q + i] = b[N * D + 2 * n + i];
  for (PetscInt k = 0; k < N; k++)
    ForwardInterval(c, b, k, z);
  BandSolve(c, z);
  for (PetscInt k = 0; k <= N; k++)
    PetscCall(PetscArraycpy(x + k * D, z + k * q, q));
  for (PetscInt k = 0; k < N; k++)
    BackInterval(c, x, k, z);
  for (PetscInt i = 0; i < 2 * q; i++)
    x[N * D + q + i] = b[N * D + q + i] / c->dum[i];
  PetscCall(VecRestoreArray(xv, &x));
  PetscCall(VecRestoreArrayRead(bv, &b));
  PetscCall(Checked(pc, c, bv, xv));
  PetscFunctionReturn(0);
}

/* m 2^e *= d */
static void MulDet(PetscReal *m, PetscInt *e, PetscReal d)
{
  int ex;

  *m = frexp(*m * d, &ex), *e += ex;
}

/* The sign of the permutation perm (perm[new] = old) of len: (-1)^(len - cycles). seen: len scratch. */
static PetscReal Sign(PetscInt len, const PetscInt *perm, char *seen)
{
  PetscInt cycles = 0;

  PetscArrayzero(seen, len);
  for (PetscInt i = 0; i < len; i++)
    if (!seen[i]) {
      cycles++;
      for (PetscInt j = i; !seen[j]; j = perm[j])
        seen[j] = 1;
    }
  return (len - cycles) % 2 ? -1 : 1;
}

/* The sign of the reordering of the file head: rows (substeps 1 and 2 interval by interval; x_0 = x0; substep 3
   interval by interval; the terminal rows; the dummies) and columns (s1, s2 interval by interval; z_0 .. z_N; the
   dummies), under which J is [[blockdiag([B1 0; A2 B2]), .], [., .]] with the condensed band as Schur complement. */
static PetscErrorCode ReorderSign(const HsO4Cond *c, PetscReal *sg)
{
  PetscInt n = c->n, q = c->q, D = c->D, N = c->N, len = (N + 1) * D, r = 0, k0 = 0, *rows, *cols;
  char    *seen;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(len, &rows, len, &cols, len, &seen));
  for (PetscInt k = 0; k < N; k++)
    for (PetscInt i = 2 * n; i < 10 * n; i++)
      rows[r++] = k * D + i;
  for (PetscInt i = 0; i < 2 * n; i++)
    rows[r++] = i;
  for (PetscInt k = 0; k < N; k++)
    for (PetscInt i = 0; i < q; i++)
      rows[r++] = i < 2 * n ? k * D + 10 * n + i : (k + 1) * D + i - 2 * n;
  for (PetscInt i = 2 * n; i < D; i++) /* the terminal rows, then the dummies */
    rows[r++] = N * D + i;
  for (PetscInt k = 0; k < N; k++)
    for (PetscInt j = q; j < 3 * q; j++)
      cols[k0++] = k * D + j;
  for (PetscInt k = 0; k <= N; k++)
    for (PetscInt j = 0; j < q; j++)
      cols[k0++] = k * D + j;
  for (PetscInt j = q; j < 3 * q; j++)
    cols[k0++] = N * D + j;
  PetscCheck(r == len && k0 == len, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-hs_condense: reordering of %" PetscInt_FMT, len);
  *sg = Sign(len, rows, seen) * Sign(len, cols, seen);
  PetscCall(PetscFree3(rows, cols, seen));
  PetscFunctionReturn(0);
}

/* HsPCGetDeterminant ("HsPCGetDeterminant_C"): det J = sign det B1 det B2 (every interval) det(band) det(dummies)
   (the file head), m 2^e; the inner hsband's after a zero pivot. */
static PetscErrorCode Determinant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known)
{
  HsO4Cond *c;
  PetscReal sg = 1;
  PetscInt  q, qq;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  *known = PETSC_FALSE;
  if (!pc->setupcalled || pc->failedreason)
    PetscFunctionReturn(0);
  if (c->use_inner) {
    PetscCall(HsPCGetDeterminant(c->inner, m, e, known));
    PetscFunctionReturn(0);
  }
  q = c->q, qq = q * q;
  PetscCall(ReorderSign(c, &sg));
  *m = sg, *e = 0;
  for (PetscInt k = 0; k < c->N; k++)
    for (PetscInt b = 0; b < 2; b++) {
      const PetscScalar *B = c->blk + 7 * qq * k + b * qq;
      const PetscInt    *p = c->piv + 2 * q * k + b * q;
      for (PetscInt i = 0; i < q; i++)
        MulDet(m, e, (p[i] != i ? -1 : 1) * B[i * q + i]);
    }
  for (PetscInt i = 0; i < c->m; i++)
    MulDet(m, e, (c->bpiv[i] != i ? -1 : 1) * c->band[i * c->w + c->kl]);
  for (PetscInt i = 0; i < 2 * q; i++)
    MulDet(m, e, c->dum[i]);
  *known = PETSC_TRUE;
  PetscCall(PetscInfo(pc, "det J = %.15g 2^%" PetscInt_FMT " (-hs_condense)\n", (double)*m, *e));
  PetscFunctionReturn(0);
}

/* HsPCIsExact ("HsPCIsExact_C"): partial pivoting in every block and in the band, nothing dropped. */
static PetscErrorCode IsExact(PC pc, PetscBool *exact)
{
  HsO4Cond *c;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  *exact = PETSC_TRUE;
  if (c->use_inner)
    PetscCall(HsPCIsExact(c->inner, exact));
  PetscFunctionReturn(0);
}

static PetscErrorCode ViewCond(PC pc, PetscViewer v)
{
  HsO4Cond *c;
  PetscBool ascii;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &ascii));
  if (!ascii)
    PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(
      v,
      "  conserving4's stage nodes condensed (-hs_condense): %" PetscInt_FMT
      " unknowns a point, a band of %" PetscInt_FMT " below and %" PetscInt_FMT " above the diagonal%s\n",
      c->q, c->kl, c->ku, c->use_inner ? "; this matrix by (a zero pivot, or a solve not accurate):" : ""));
  if (c->use_inner)
    PetscCall(PCView(c->inner, v));
  PetscFunctionReturn(0);
}

static PetscErrorCode DestroyCond(PC pc)
{
  HsO4Cond *c;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCIsExact_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCBorrowWork_C", NULL));
  PetscCall(PCDestroy(&c->inner));
  PetscCall(VecDestroy(&c->r));
  if (!c->borrowed) {
    PetscCall(PetscFree5(c->blk, c->piv, c->band, c->bpiv, c->blast));
    PetscCall(PetscFree3(c->dum, c->z, c->y));
  }
  PetscCall(PetscFree(c));
  PetscFunctionReturn(0);
}

/* HsPCBorrowWork ("HsPCBorrowWork_C"): pc's arrays those of lender, a condensation of the same n and at least as many
   intervals (each array is indexed by interval or condensed row from 0, its length growing with N), its own freed
   (never touched: SetUpCond writes them first). */
static PetscErrorCode BorrowWork(PC pc, PC lender)
{
  PetscErrorCode (*f)(PC, PC) = NULL;
  HsO4Cond *c, *l;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQueryFunction((PetscObject)lender, "HsPCBorrowWork_C", &f));
  if (f != BorrowWork || pc == lender)
    PetscFunctionReturn(0);
  PetscCall(PCShellGetContext(pc, &c));
  PetscCall(PCShellGetContext(lender, &l));
  if (c->borrowed || l->borrowed || l->n != c->n || l->N < c->N)
    PetscFunctionReturn(0);
  PetscCall(PetscFree5(c->blk, c->piv, c->band, c->bpiv, c->blast));
  PetscCall(PetscFree3(c->dum, c->z, c->y));
  c->blk = l->blk, c->piv = l->piv, c->band = l->band, c->bpiv = l->bpiv, c->blast = l->blast;
  c->dum = l->dum, c->z = l->z, c->y = l->y, c->borrowed = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsOrder4CondSetUp - conserving4's transcription on one rank, without constraints and with a fixed T: ksp's PC
    hsband (the default linear solver) replaced by the condensed LU of the file head (-hs_condense; bvp/impls
    internal). Not collective (one rank). @*/
PetscErrorCode HsOrder4CondSetUp(HsSolver s, KSP ksp)
{
  HsOrder4 *o = s->data;
  HsO4Cond *c;
  PC        pc;

  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscNew(&c));
  c->n = s->prob->n, c->q = 4 * c->n, c->N = s->N, c->D = o->D, c->m = c->q * (c->N + 1);
  PetscCheck(c->D == 12 * c->n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-hs_condense: %" PetscInt_FMT " unknowns a point",
             c->D);
  c->kl = c->ku = 6 * c->n - 1, c->w = 2 * c->kl + c->ku + 1;
  PetscCall(PetscMalloc5(7 * c->q * c->q * c->N, &c->blk, 2 * c->q * c->N, &c->piv, c->m * c->w, &c->band, c->m,
                         &c->bpiv, c->m, &c->blast));
  PetscCall(PetscMalloc3(2 * c->q, &c->dum, c->m, &c->z, 2 * c->q * c->N, &c->y));
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetContext(pc, c));
  PetscCall(PCShellSetName(pc, "hscondense"));
  PetscCall(PCShellSetSetUp(pc, SetUpCond));
  PetscCall(PCShellSetApply(pc, ApplyCond));
  PetscCall(PCShellSetView(pc, ViewCond));
  PetscCall(PCShellSetDestroy(pc, DestroyCond));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCIsExact_C", IsExact));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCGetDeterminant_C", Determinant));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "HsPCBorrowWork_C", BorrowWork));
  PetscFunctionReturn(0);
}
