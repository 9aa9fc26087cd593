/* hamshoot: diagnosis of singular systems (issue 42; docs/problem-format.md, "Conserved quantities and terminal
 * conditions"). Before a solve, the rank test of the boundary rows (HsSolverCheckBoundaryRank): a linear invariant
 * c^T x of the dynamics whose support lies in components fixed at both ends makes the terminal condition c^T x_T
 * follow from x0 (redundant if consistent, infeasible if not). After a Newton solve that failed in its linear solve,
 * the rank test of the Jacobian (HsSolverJacobianRankTest) names its null space in the problem's terms. */
#include "hsbvpimpl.h"

#include <petscblaslapack.h>
#include <string.h>

#define HS_BOUNDARY_MAX_DIM 200  /* 2n above which the boundary rank test is skipped (its SVD is (4n + m) x 2n) */
#define HS_BOUNDARY_SAMPLES 4    /* sampled states beyond 2n + 2 */
#define HS_INVARIANT_TOL 1e-10   /* singular value / largest below which a direction is an exact invariant */
#define HS_CONSISTENT_TOL 1e-10  /* |c^T (xT - x0)| / (1 + |c| (|x0| + |xT|)) below which a redundancy is consistent */
#define HS_JACOBIAN_RANK_MAX 600 /* unknowns above which the Jacobian's rank test is skipped (dense SVD: 0.4 s) */
#define HS_JACOBIAN_RANK_TOL 1e-12 /* singular value / largest below which a direction is in the null space */
#define HS_ROUNDOFF_SAFETY 4       /* a rate within this many times its round-off bound is zero (RoundoffToZero) */

/* The name of state component i (q_i or p_i) of P into buf. */
static void StateName(const HsProblem *P, PetscInt i, char *buf, size_t len)
{
  PetscInt j = i % P->n;

  if (P->coord_names)
    snprintf(buf, len, "%s%s", i < P->n ? "" : "p_", P->coord_names[j]);
  else
    snprintf(buf, len, "%s%d", i < P->n ? "q" : "p", (int)j + 1);
}

/* A dense SVD of the m x n column-major A (destroyed; m >= n): S (n), VT (n x n, rows the right singular vectors)
 * and, if U is not NULL, U (m x m). */
static PetscErrorCode DenseSVD(PetscInt m, PetscInt n, PetscReal *A, PetscReal *S, PetscReal *U, PetscReal *VT)
{
  PetscBLASInt bm, bn, lwork, info, ldu;
  PetscReal   *work, wq;

  PetscFunctionBeginUser;
  PetscCall(PetscBLASIntCast(m, &bm));
  PetscCall(PetscBLASIntCast(n, &bn));
  ldu   = U ? bm : 1;
  lwork = -1;
  PetscCallBLAS("LAPACKgesvd",
                LAPACKgesvd_(U ? "A" : "N", "A", &bm, &bn, A, &bm, S, U, &ldu, VT, &bn, &wq, &lwork, &info));
  PetscCall(PetscBLASIntCast((PetscInt)wq + 1, &lwork));
  PetscCall(PetscMalloc1(lwork, &work));
  PetscCallBLAS("LAPACKgesvd",
                LAPACKgesvd_(U ? "A" : "N", "A", &bm, &bn, A, &bm, S, U, &ldu, VT, &bn, work, &lwork, &info));
  PetscCall(PetscFree(work));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK gesvd: info = %d", (int)info);
  PetscFunctionReturn(0);
}

/* Appends row r (dim values), normalized, as row *rows of the column-major A (ld rows); a zero row is skipped. */
static void AddRow(PetscReal *A, PetscInt ld, PetscInt dim, const PetscReal *r, PetscInt *rows)
{
  PetscReal nr = 0;

  for (PetscInt i = 0; i < dim; i++)
    nr += r[i] * r[i];
  if (!(nr > 0) || PetscIsInfOrNanReal(nr))
    return;
  nr = PetscSqrtReal(nr);
  for (PetscInt i = 0; i < dim; i++)
    A[i * ld + *rows] = r[i] / nr;
  (*rows)++;
}

/* Scales each of the dim columns of A (ld rows, column-major) to norm 1 and puts its norm into cn (1 for a zero
 * column, which stays zero): a null vector y of the scaled A is c = y / cn of A. Without it the test depended on the
 * units: the rows are normalized whole, so a component whose rate is small against another's (q's against p's at
 * -p_g 1e10 or -p_m 1e12 on the pendulum: 1e-10 of the row) read as zero, and the check refused with "q is conserved
 * by the dynamics for any control", which was false (round 24). A column that is not exactly zero is a real rate,
 * whatever its size: the entries that are zero but for round-off were set to 0 before (RoundoffToZero), since this
 * scaling would blow a column of round-off up to look like a rate. */
static void Equilibrate(PetscReal *A, PetscInt ld, PetscInt dim, PetscReal *cn)
{
  for (PetscInt i = 0; i < dim; i++) {
    PetscReal s = 0, big = 0;
    for (PetscInt r = 0; r < ld; r++) /* scaled by the largest first: entries of 1e-200 must not underflow */
      big = PetscMax(big, PetscAbsReal(A[i * ld + r]));
    for (PetscInt r = 0; big > 0 && r < ld; r++)
      s += (A[i * ld + r] / big) * (A[i * ld + r] / big);
    cn[i] = big > 0 ? big * PetscSqrtReal(s) : 1;
    for (PetscInt r = 0; r < ld; r++)
      A[i * ld + r] /= cn[i];
  }
}

/* Sets to 0 the components of g within HS_ROUNDOFF_SAFETY times their round-off bound e (E.grad_bound): a rate that
 * is zero but for round-off, such as V = (y + 0.1)^2 - y^2 - 0.2 y's V_y = 2 (y + 0.1) - 2 y - 0.2 (a few 1e-17 at
 * most states), is zero for the test; otherwise Equilibrate scaled its column to norm 1 like a real rate and the
 * invariant p_y was missed (round 26: the solve then ended "NOT converged (CONSERVATION_VIOLATED)" instead of the
 * refusal naming p_y(T)). The bound comes from the operations that computed g (running error analysis,
 * HsExprProgramEvalBound), so it scales with the units as g does: the test stays independent of them (round 24), and
 * a real rate however small (1e-300 sin y: its bound is a few ulps of itself) is kept. An infinite bound (none known)
 * keeps the component. */
static void RoundoffToZero(PetscInt dim, PetscReal *g, const PetscReal *e)
{
  for (PetscInt i = 0; i < dim; i++)
    if (PetscAbsReal(g[i]) <= HS_ROUNDOFF_SAFETY * e[i] && !PetscIsInfOrNanReal(e[i]))
      g[i] = 0;
}

/* grad E at x into g (E.grad's values), its components that are zero but for round-off set to 0 where E has a
 * bound (a bound that fails, e.g. without memory: the values alone). Returns E.grad's status. */
static int GradientAt(const HsProblem *P, const PetscReal *x, PetscReal *g, PetscReal *e)
{
  if (P->E.grad_bound && !P->E.grad_bound(x, g, e, P->ctx)) {
    RoundoffToZero(2 * P->n, g, e);
    return 0;
  }
  return P->E.grad(x, g, P->ctx);
}

/* The rows whose common null space is the linear invariants c of xdot = JJ grad E(x) + G u (c^T JJ grad E(x) = 0 at
 * every sampled state x, c^T G = 0 at every sampled q) restricted to the components fixed at T (a unit row for each
 * free one). Samples: x0, xT (free components from x0) and states around them, deterministic. With E.grad_bound, the
 * gradient's components that are zero but for round-off are 0 (RoundoffToZero; e: dim workspace). Returns the rows. */
static PetscInt InvariantRows(const HsProblem *P, PetscInt cols, PetscReal *A, PetscInt ld, PetscReal *x, PetscReal *g,
                              PetscReal *B, PetscReal *e)
{
  PetscInt     dim = 2 * P->n, n = P->n, m = P->m, rows = 0, K = dim + 2 + HS_BOUNDARY_SAMPLES;
  unsigned int seed = 12345u;

  for (PetscInt j = 0; j < K; j++) {
    for (PetscInt i = 0; i < dim; i++) {
      PetscReal base = (j % 2 && P->xT_fixed[i]) ? P->xT[i] : P->x0[i], r;
      seed           = seed * 1103515245u + 12345u;
      r              = ((seed >> 8) & 0xffff) / 32768.0 - 1; /* in [-1, 1) */
      x[i]           = base + (j < 2 ? 0 : 0.5 * r * (1 + PetscAbsReal(base)));
    }
    if (!GradientAt(P, x, g, e)) { /* the row JJ grad E = (grad_p E, -grad_q E) */
      for (PetscInt i = 0; i < n; i++) {
        PetscReal t = g[i];
        g[i] = g[n + i], g[n + i] = -t;
      }
      if (cols > dim) /* the column of t: c^T JJ grad E(x) + k = 0 */
        g[dim] = 1;
      AddRow(A, ld, cols, g, &rows);
    }
    if (j == 0 || P->Bq) { /* the columns of G = [0; B(q)] */
      if (P->Bq && P->Bq(x, B, NULL, NULL, P->ctx))
        continue;
      for (PetscInt k = 0; k < m; k++) {
        for (PetscInt i = 0; i < cols; i++)
          g[i] = i < n || i == dim ? 0 : (P->Bq ? B : P->B)[(i - n) * m + k];
        AddRow(A, ld, cols, g, &rows);
      }
    }
  }
  for (PetscInt i = 0; i < dim; i++)
    if (!P->xT_fixed[i]) {
      for (PetscInt l = 0; l < cols; l++)
        g[l] = l == i;
      AddRow(A, ld, cols, g, &rows);
    }
  return rows;
}

/* Gauss-Jordan on the d columns of Z (dim x d, column j at Z + j dim): each gets a pivot component piv[j] where it
 * is 1 and the others 0, the largest first; of components equal in magnitude to 1e-8 relative the first (p_th + p_w's
 * null vector has two components of 1/sqrt(2) whose last bits come from LAPACK's SVD: the choice had depended on the
 * machine's BLAS, naming p_w(T) on one and p_th(T) on another). */
static void Echelon(PetscInt dim, PetscInt np, PetscInt d, PetscReal *Z, PetscInt *piv)
{
  for (PetscInt j = 0; j < d; j++) {
    PetscReal *c = Z + j * dim, best = -1;
    for (PetscInt i = 0; i < np; i++) {
      PetscBool used = PETSC_FALSE;
      for (PetscInt l = 0; l < j; l++)
        used = (PetscBool)(used || piv[l] == i);
      if (!used && PetscAbsReal(c[i]) > (best < 0 ? -1 : best * (1 + 1e-8)))
        best = PetscAbsReal(c[i]), piv[j] = i;
    }
    best = c[piv[j]];
    for (PetscInt i = 0; i < dim; i++)
      c[i] /= best;
    for (PetscInt l = 0; l < d; l++)
      if (l != j) {
        PetscReal *o = Z + l * dim, f = o[piv[j]];
        for (PetscInt i = 0; i < dim; i++)
          o[i] -= f * c[i];
      }
  }
  for (PetscInt j = 0; j < d; j++) /* round-off entries to zero (of the state's: t's is a rate, of any size) */
    for (PetscInt i = 0; i < np; i++)
      if (PetscAbsReal(Z[j * dim + i]) < 1e-12)
        Z[j * dim + i] = 0;
}

/* The message of the dependencies in Z (dim x d, in echelon form with pivots piv) into msg. */
static void DependencyMessage(const HsProblem *P, PetscInt cols, PetscInt d, const PetscReal *Z, const PetscInt *piv,
                              PetscBool bad, char *msg, size_t len)
{
  PetscInt dim = 2 * P->n;
  size_t   at;
  char     nm[80];

  snprintf(msg, len, "problem '%s': %s terminal condition%s: ", P->name, bad ? "infeasible" : "redundant",
           d > 1 ? "s" : "");
  for (PetscInt j = 0; j < d; j++) {
    const PetscReal *c  = Z + j * cols;
    PetscReal        v0 = 0, vT = 0;
    PetscBool        first = PETSC_TRUE;
    at                     = strlen(msg);
    snprintf(msg + at, len - at, "%s", j ? "; " : "");
    for (PetscInt i = 0; i < dim; i++)
      if (c[i] != 0) {
        StateName(P, i, nm, sizeof nm);
        at = strlen(msg);
        if (PetscAbsReal(PetscAbsReal(c[i]) - 1) < 1e-9)
          snprintf(msg + at, len - at, "%s%s", c[i] > 0 ? (first ? "" : " + ") : (first ? "-" : " - "), nm);
        else
          snprintf(msg + at, len - at, "%s%.6g %s", first ? (c[i] < 0 ? "-" : "") : (c[i] < 0 ? " - " : " + "),
                   (double)PetscAbsReal(c[i]), nm);
        first = PETSC_FALSE;
        v0 += c[i] * P->x0[i], vT += P->xT_fixed[i] ? c[i] * P->xT[i] : 0;
      }
    at = strlen(msg);
    if (cols > dim && c[dim] != 0) { /* affine: c^T x + k t (its value at T from the fixed terminal values) */
      snprintf(msg + at, len - at, " %s %.6g t", c[dim] < 0 ? "-" : "+", (double)PetscAbsReal(c[dim]));
      vT += c[dim] * P->T;
      at = strlen(msg);
    }
    snprintf(msg + at, len - at,
             " is conserved by the dynamics for any control (%.6g at t = 0, %.6g from the fixed "
             "terminal values)",
             (double)v0, (double)vT);
  }
  at = strlen(msg);
  if (bad) {
    snprintf(msg + at, len - at, ": no control reaches the terminal state; change x0 or xT");
    return;
  }
  snprintf(msg + at, len - at, ", so the fixed value%s of ", d > 1 ? "s" : "");
  for (PetscInt j = 0; j < d; j++) {
    StateName(P, piv[j], nm, sizeof nm);
    at = strlen(msg);
    snprintf(msg + at, len - at, "%s%s(T)", j ? ", " : "", nm);
  }
  at = strlen(msg);
  snprintf(msg + at, len - at,
           " follow%s from x0 and the other terminal values and make%s the Jacobian singular: "
           "leave %s free (conservation then fixes %s): xT: ",
           d > 1 ? "" : "s", d > 1 ? "" : "s", d > 1 ? "them" : "it", d > 1 ? "them" : "it");
  for (PetscInt i = 0; i < dim; i++) {
    PetscBool fr = (PetscBool)!P->xT_fixed[i];
    for (PetscInt j = 0; j < d; j++)
      fr = (PetscBool)(fr || piv[j] == i);
    at = strlen(msg);
    if (fr)
      snprintf(msg + at, len - at, "%s*", i ? ", " : "");
    else
      snprintf(msg + at, len - at, "%s%.6g", i ? ", " : "", (double)P->xT[i]);
  }
  at = strlen(msg);
  snprintf(msg + at, len - at, " (or -hs_check_boundary false to solve as given)");
}

/* HsProblemBoundaryDependencies' test with cols = 2n (linear invariants) or 2n + 1 (a column of t: affine ones). */
static PetscErrorCode Dependencies(const HsProblem *P, PetscInt cols, PetscInt *d, PetscBool *bad, char *msg,
                                   size_t len)
{
  PetscInt   dim = 2 * P->n, ld = 3 * dim + 2 + HS_BOUNDARY_SAMPLES + (dim + 2 + HS_BOUNDARY_SAMPLES) * P->m, rows;
  PetscReal *A, *S, *VT, *x, *g, *B, *e, *Z;
  PetscInt  *piv;

  PetscFunctionBeginUser;
  *d = 0, *bad = PETSC_FALSE, msg[0] = 0;
  if (P->nc || dim > HS_BOUNDARY_MAX_DIM || !P->E.grad)
    PetscFunctionReturn(0);
  PetscCall(PetscCalloc4(ld * cols, &A, cols, &S, cols * cols, &VT, cols * (3 + P->m), &x));
  g = x + cols, e = g + cols, B = e + cols;
  rows = InvariantRows(P, cols, A, ld, x, g, B, e);
  Equilibrate(A, ld, cols, x); /* x: the columns' norms from here on */
  if (rows >= cols) {
    PetscCall(DenseSVD(ld, cols, A, S, NULL, VT));
    for (PetscInt i = 0; i < cols; i++)
      if (S[i] <= HS_INVARIANT_TOL * S[0])
        (*d)++;
  }
  if (*d) {
    PetscCall(PetscMalloc2(cols * *d, &Z, *d, &piv));
    for (PetscInt j = 0; j < *d; j++) /* the last d rows of VT (column-major: VT[i * cols + r]), unscaled */
      for (PetscInt i = 0; i < cols; i++)
        Z[j * cols + i] = VT[i * cols + cols - *d + j] / x[i];
    Echelon(cols, dim, *d, Z, piv);
    for (PetscInt j = 0; cols > dim && j < *d; j++) { /* t's coefficient, scaled as the SVD saw it, against the state's:
                                                        below HS_INVARIANT_TOL of them, SVD round-off (a linear
                                                        invariant's k of 4e-17 on wheel_rest), else a real rate */
      PetscReal big = 0;
      for (PetscInt i = 0; i < dim; i++)
        big = PetscMax(big, PetscAbsReal(Z[j * cols + i] * x[i]));
      if (PetscAbsReal(Z[j * cols + dim] * x[dim]) <= HS_INVARIANT_TOL * big)
        Z[j * cols + dim] = 0;
    }
    for (PetscInt j = 0; j < *d; j++) {
      PetscReal r = cols > dim ? Z[j * cols + dim] * P->T : 0, sc = 1 + PetscAbsReal(r);
      for (PetscInt i = 0; i < dim; i++)
        if (P->xT_fixed[i] && Z[j * cols + i] != 0) /* a free component's xT may be anything */
          r += Z[j * cols + i] * (P->xT[i] - P->x0[i]),
              sc += PetscAbsReal(Z[j * cols + i]) * (PetscAbsReal(P->x0[i]) + PetscAbsReal(P->xT[i]));
      /* end values that move with a free T: their values at its guess do not decide consistency */
      if (PetscAbsReal(r) > HS_CONSISTENT_TOL * sc && !P->xT_T && !P->x0_T)
        *bad = PETSC_TRUE;
    }
    DependencyMessage(P, cols, *d, Z, piv, *bad, msg, len);
    PetscCall(PetscFree2(Z, piv));
  }
  PetscCall(PetscFree4(A, S, VT, x));
  PetscFunctionReturn(0);
}

/*@ HsProblemBoundaryDependencies - the rank test of the boundary rows: the terminal conditions that the dynamics'
    linear invariants make dependent (docs/problem-format.md, "Conserved quantities and terminal conditions").

  Not collective (the same result on every rank: the problem's data are).

  Input Parameter:
. P - the problem

  Output Parameters:
+ d   - the number of dependent terminal conditions (0: none, or the test does not apply: constraints, 2n >
        HS_BOUNDARY_MAX_DIM, or fewer than 2n sampled states where E's gradient is defined)
. bad - some dependency is inconsistent (the problem is infeasible)
- msg - the diagnosis (which components at which end, what to leave free), "" if d = 0

  Notes:
  c^T x is conserved for any control if c^T (JJ grad E(x) + G u) = 0 for all x, u. The rows JJ grad E(x) at 2n + 6
  sampled states and the columns of G (normalized), with a unit row for each component free at T, have a null space
  of dimension d (singular values below HS_INVARIANT_TOL of the largest, each column of the matrix scaled to norm 1,
  so that the result does not depend on the units; before that, with E.grad_bound, the gradient's entries within
  HS_ROUNDOFF_SAFETY times their round-off bound set to 0): the invariants supported on components fixed at T, whose
  terminal values c^T x_T then follow from c^T x0.
@*/
PetscErrorCode HsProblemBoundaryDependencies(const HsProblem *P, PetscInt *d, PetscBool *bad, char *msg, size_t len)
{
  PetscFunctionBeginUser;
  PetscCall(Dependencies(P, 2 * P->n, d, bad, msg, len));
  /* then, where no linear invariant makes a terminal condition dependent, the affine ones c^T x + k t (not with a
     free T, which c^T x(T) = c^T x0 - k T does not fix): a second test, so that every verdict of the linear test
     stands as it was (one test with the column of t had named "y + 0.010035 p_y" instead of security26's p_y, its
     mass's y-part 1.01 + round-off at -p_m 1e20, as infeasible) */
  if (!*d && !P->free_T)
    PetscCall(Dependencies(P, 2 * P->n + 1, d, bad, msg, len));
  PetscFunctionReturn(0);
}

/*@ HsSolverCheckBoundaryRank - before a solve: an error that names the terminal conditions made dependent by a
    conserved quantity (HsProblemBoundaryDependencies), unless HsSolverSetCheckBoundary(s, PETSC_FALSE). bvp/
    internal (HsSolverSetUp); collective (the same outcome on every rank). @*/
PetscErrorCode HsSolverCheckBoundaryRank(HsSolver s)
{
  PetscInt  d;
  PetscBool bad;
  char      msg[sizeof s->res.diagnosis];

  PetscFunctionBeginUser;
  if (!s->check_boundary || s->prob->ctrl) /* a force f(q, u): G = [0; B] does not describe it (docs/controls.md) */
    PetscFunctionReturn(0);
  PetscCall(HsProblemBoundaryDependencies(s->prob, &d, &bad, msg, sizeof msg));
  PetscCheck(!d, PetscObjectComm((PetscObject)s), bad ? PETSC_ERR_ARG_OUTOFRANGE : PETSC_ERR_ARG_INCOMP, "%s", msg);
  PetscFunctionReturn(0);
}

/*@ HsSolverSetCheckBoundary - sets whether HsSolverSetUp() first tests the boundary conditions for dependent
    terminal conditions (a conserved quantity fixed at both ends) and refuses them with a diagnosis.

  Logically collective.

  Input Parameters:
+ s   - the solver
- flg - PETSC_TRUE (default): refuse a problem whose terminal conditions are redundant or infeasible by
        conservation; PETSC_FALSE: solve it as given (its Jacobian is then singular)

  Options Database Key:
. -hs_check_boundary <bool> - the same

.seealso: HsSolverSetUp(), docs/problem-format.md
@*/
PetscErrorCode HsSolverSetCheckBoundary(HsSolver s, PetscBool flg)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->check_boundary = flg;
  PetscFunctionReturn(0);
}

/* What row or unknown g (of Ng; block size w = 4n) of the formulation is, into *key (kind * 2n + component, kinds
 * below) and *blk (transcription: the node; shooting: the segment). A free T is the last unknown and row. */
enum { KX, KLAMBDA, KSTATE, KTERM, KINIT, KCOSTATE, KCONT, KDUMMY, KT, NKINDS };
static const char *const kind_names[NKINDS] = {"",
                                               "lambda_",
                                               "state equation ",
                                               "terminal condition ",
                                               "initial condition ",
                                               "costate equation ",
                                               "continuity ",
                                               "lambda_{N+1/2} ",
                                               "the condition on T"};
static void Classify(HsSolver s, PetscBool shoot, PetscBool row, PetscInt g, PetscInt Ng, PetscInt nblk, PetscInt *key,
                     PetscInt *blk)
{
  PetscInt dim = 2 * s->prob->n, w = 2 * dim, b = g / w, c = g % w, kind;

  *blk = b;
  if (s->prob->free_T && g == Ng - 1) {
    *key = KT * dim;
    return;
  }
  if (!row)
    kind = c < dim ? KX : KLAMBDA;
  else if (c < dim)
    kind = b == nblk - 1 ? KTERM : (shoot ? KCONT : KSTATE);
  else
    kind = b == 0 ? KINIT : (!shoot && b == nblk - 1 ? KDUMMY : KCOSTATE);
  *key = kind * dim + c % dim;
}

/* The keys of weight wt (Ng values: the squared null-space components of the unknowns or rows) that carry at least
 * 2% of it, largest first (at most 6), with the blocks they span, appended to msg. */
static void NameWeights(HsSolver s, PetscBool shoot, PetscBool row, const PetscReal *wt, PetscInt Ng, PetscInt nblk,
                        PetscReal *agg, PetscInt *lo, PetscInt *hi, char *msg, size_t len)
{
  PetscInt  dim = 2 * s->prob->n, nk = NKINDS * dim, key, blk;
  PetscReal tot = 0;
  char      nm[80];

  for (PetscInt k = 0; k < nk; k++)
    agg[k] = 0, lo[k] = PETSC_MAX_INT, hi[k] = -1;
  for (PetscInt g = 0; g < Ng; g++) {
    Classify(s, shoot, row, g, Ng, nblk, &key, &blk);
    agg[key] += wt[g], tot += wt[g];
    if (wt[g] > 1e-6)
      lo[key] = PetscMin(lo[key], blk), hi[key] = PetscMax(hi[key], blk);
  }
  for (int shown = 0; shown < 6; shown++) {
    PetscInt best = -1;
    size_t   at   = strlen(msg);
    for (PetscInt k = 0; k < nk; k++)
      if (agg[k] >= 0.02 * tot && (best < 0 || agg[k] > agg[best]))
        best = k;
    if (best < 0)
      break;
    agg[best] = -1;
    StateName(s->prob, best % dim, nm, sizeof nm);
    if (best / dim == KT)
      snprintf(msg + at, len - at, "%s%s", shown ? ", " : "", kind_names[KT]);
    else if (best / dim == KTERM || best / dim == KINIT)
      snprintf(msg + at, len - at, "%s%s%s(%s)", shown ? ", " : "", kind_names[best / dim], nm,
               best / dim == KTERM ? "T" : "0");
    else
      snprintf(msg + at, len - at, "%s%s%s (%s %d..%d)", shown ? ", " : "", kind_names[best / dim], nm,
               shoot ? "segments" : "nodes", (int)lo[best], (int)hi[best]);
  }
}

/* Whether the null-space weights wv of the unknowns lie (to 99%) on costates. */
static PetscBool CostatesOnly(HsSolver s, const PetscReal *wv, PetscInt Ng)
{
  PetscInt  dim = 2 * s->prob->n, w = 2 * dim;
  PetscReal lam = 0, tot = 0;

  for (PetscInt g = 0; g < Ng; g++) {
    tot += wv[g];
    if (g % w >= dim && !(s->prob->free_T && g == Ng - 1))
      lam += wv[g];
  }
  return (PetscBool)(tot > 0 && lam >= 0.99 * tot);
}

/* The Jacobian at s->X, gathered dense (column-major, Ng x Ng) on rank 0 (NULL elsewhere). Collective. */
static PetscErrorCode GatherJacobian(HsSolver s, PetscInt Ng, PetscReal **D, PetscBool *ok)
{
  Mat         A, P;
  PetscInt    r0, r1, nc;
  PetscMPIInt size, rank, *cnt, *off;
  PetscReal  *loc;
  PetscBool   has;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  *D = NULL;
  PetscCall(SNESGetJacobian(s->snes, &A, &P, NULL, NULL));
  PetscCall(SNESComputeJacobian(s->snes, s->X, A, P));
  PetscCall(MatHasOperation(P, MATOP_GET_ROW, &has));
  *ok = has;
  if (!has)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MatGetOwnershipRange(P, &r0, &r1));
  PetscCall(PetscCalloc1((r1 - r0) * Ng + 1, &loc)); /* row-major: the local rows */
  for (PetscInt r = r0; r < r1; r++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(P, r, &nc, &cols, &vals));
    for (PetscInt j = 0; j < nc; j++)
      loc[(r - r0) * Ng + cols[j]] = vals[j];
    PetscCall(MatRestoreRow(P, r, &nc, &cols, &vals));
  }
  PetscCall(PetscMalloc2(size, &cnt, size, &off));
  {
    PetscMPIInt mine;
    PetscCall(PetscMPIIntCast((r1 - r0) * Ng, &mine));
    PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm));
  }
  off[0] = 0;
  for (PetscMPIInt i = 1; i < size && rank == 0; i++)
    off[i] = off[i - 1] + cnt[i - 1];
  if (rank == 0)
    PetscCall(PetscMalloc1(Ng * Ng, D));
  PetscCallMPI(
      MPI_Gatherv(loc, (PetscMPIInt)((r1 - r0) * Ng), MPIU_REAL, rank == 0 ? *D : NULL, cnt, off, MPIU_REAL, 0, comm));
  PetscCall(PetscFree2(cnt, off));
  PetscCall(PetscFree(loc));
  if (rank == 0) { /* row-major to column-major */
    for (PetscInt i = 0; i < Ng; i++)
      for (PetscInt j = i + 1; j < Ng; j++) {
        PetscReal t      = (*D)[i * Ng + j];
        (*D)[i * Ng + j] = (*D)[j * Ng + i], (*D)[j * Ng + i] = t;
      }
  }
  PetscFunctionReturn(0);
}

/* The diagnosis of the SVD S, U, VT (Ng x Ng, column-major; S[0] > 0) into msg: the rank deficiency, the unknowns
 * and equations of the null space (at least the weakest direction) by name. */
static PetscErrorCode NameNullSpace(HsSolver s, PetscBool shoot, PetscInt Ng, PetscInt nblk, const PetscReal *S,
                                    const PetscReal *U, const PetscReal *VT, char *msg, size_t len)
{
  PetscInt   dim = 2 * s->prob->n, d = 0, *lo, *hi;
  PetscReal *wv, *wu, *agg;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc5(Ng, &wv, Ng, &wu, NKINDS * dim, &agg, NKINDS * dim, &lo, NKINDS * dim, &hi));
  for (PetscInt i = 0; i < Ng; i++)
    if (!(S[i] > HS_JACOBIAN_RANK_TOL * S[0]))
      d++;
  for (PetscInt g = 0; g < Ng; g++) { /* the weights in the null space (at least the smallest direction) */
    wv[g] = wu[g] = 0;
    for (PetscInt i = Ng - PetscMax(d, 1); i < Ng; i++)
      wv[g] += VT[g * Ng + i] * VT[g * Ng + i], wu[g] += U[i * Ng + g] * U[i * Ng + g];
  }
  if (d)
    snprintf(msg, len,
             "the Jacobian is singular (%d of %d singular values below %g of the largest): its null "
             "space spans the unknowns ",
             (int)d, (int)Ng, HS_JACOBIAN_RANK_TOL);
  else
    snprintf(msg, len,
             "the Jacobian is nearly singular (smallest singular value %.2e of the largest): its weakest "
             "direction spans the unknowns ",
             (double)(S[Ng - 1] / S[0]));
  NameWeights(s, shoot, PETSC_FALSE, wv, Ng, nblk, agg, lo, hi, msg, len);
  (void)HsStrAppend(msg, len, "; dependent equations: ");
  NameWeights(s, shoot, PETSC_TRUE, wu, Ng, nblk, agg, lo, hi, msg, len);
  if (CostatesOnly(s, wv, Ng)) /* lambda + c for every interval: a conserved quantity */
    (void)HsStrAppend(msg, len,
                      " (costates alone: a quantity conserved for any control, whose terminal conditions "
                      "are then dependent: leave them free, docs/problem-format.md)");
  PetscCall(PetscFree5(wv, wu, agg, lo, hi));
  PetscFunctionReturn(0);
}

/*@ HsSolverJacobianRankTest - after a Newton solve that failed in its linear solve (a zero pivot, a singular
    Jacobian): the Jacobian at the final iterate, gathered dense on rank 0 (at most HS_JACOBIAN_RANK_MAX unknowns),
    its SVD, and a diagnosis that names the unknowns spanning its (numerical) null space and the equations its left
    null space weighs (dependent or unmet), by kind, component and the nodes (transcription) or segments (shooting)
    they span. bvp/ internal (HsSolverSolveNewton); collective. Transcription and shooting without constraints
    only. @*/
PetscErrorCode HsSolverJacobianRankTest(HsSolver s)
{
  PetscInt    Ng, nblk, dim = 2 * s->prob->n;
  PetscBool   shoot, tr, ok = PETSC_FALSE;
  PetscReal  *D, *S, *U, *VT;
  PetscMPIInt rank;
  char        msg[sizeof s->res.diagnosis];

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERSHOOTING, &shoot));
  PetscCall(PetscObjectTypeCompare((PetscObject)s, HSSOLVERTRANSCRIPTION, &tr));
  if (!(shoot || tr) || s->prob->nc || s->interrupted || s->in_strategy) /* not in the fallbacks' own solves */
    PetscFunctionReturn(0);
  ok = (PetscBool)(s->res.diagnosis[0] != 0); /* a diagnosis on any rank (sensitivity growth, ...) stands */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  if (ok)
    PetscFunctionReturn(0);
  PetscCall(VecGetSize(s->X, &Ng));
  if (Ng > HS_JACOBIAN_RANK_MAX) {
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE,
                                   "the linear solve failed (a singular Jacobian?); its rank test is skipped above %d "
                                   "unknowns (here %d): rerun on a coarser grid (-N) to name its null space",
                                   HS_JACOBIAN_RANK_MAX, (int)Ng));
    PetscFunctionReturn(0);
  }
  nblk = (Ng - (s->prob->free_T && shoot ? 1 : 0)) / (2 * dim);
  PetscCall(GatherJacobian(s, Ng, &D, &ok));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  if (!ok || rank)
    PetscFunctionReturn(0);
  for (PetscInt g = 0; g < Ng * Ng && ok; g++)
    ok = (PetscBool)!PetscIsInfOrNanReal(D[g]);
  if (!ok) { /* not a rank question */
    PetscCall(PetscFree(D));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc3(Ng, &S, Ng * Ng, &U, Ng * Ng, &VT));
  PetscCall(DenseSVD(Ng, Ng, D, S, U, VT));
  if (S[0] > 0)
    PetscCall(NameNullSpace(s, shoot, Ng, nblk, S, U, VT, msg, sizeof msg));
  else
    PetscCall(PetscStrncpy(msg, "the Jacobian is zero at the final iterate", sizeof msg));
  PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE, "%s", msg));
  PetscCall(PetscFree3(S, U, VT));
  PetscCall(PetscFree(D));
  PetscFunctionReturn(0);
}
