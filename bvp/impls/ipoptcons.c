/* hamshoot: the NLP of the direct BEM transcription of a constrained system for IPOPT (layout: ipoptimpl.h; the
 * pieces: costate/consnlp.c; docs/constrained.md, "The direct counterpart"). The closed-form class only (constant M,
 * quadratic Phi, linear V, affine B(q)): there the Lagrangian's second derivatives are the mixed (gamma, q) and
 * (u, q) ones of each interval and sum_i w_i Hess Phi_i of each inner node's Phi(q_k) = 0; the exact Hessian has
 * nothing else.
 *
 * Multipliers (IPOPT's Lagrangian sigma f + y^T c): y of interval k's equations is lambda_{k+1/2} (no sign change, no
 * factor h: stationarity in u_k is h R u_k - h B(qbar)^T y_p = 0), y of Phi(q_k) = 0 is h nu_k (the KKT conditions of
 * docs/constrained.md carry - h G(q_k)^T nu_k), and y of the end condition p_N - p_T - G(q_T)^T alpha is
 * -(lp - (h/2) M^{-1} lq)_{N-1/2}: stationarity in alpha is then the natural end condition
 * G(q_T)(lp - (h/2) M^{-1} lq) = 0 of the KKT form (HsConsTerminal).
 *
 * The extended class through B(q) alone (ip->ext; docs/direct.md, "The extended class"): the same NLP, B's curvature
 * in the (q, q) blocks, and its rest end (docs/constrained.md, "Rest ends and conserved quantities"): with q_E = q_N
 * (some coordinate free) or q_T, p_N - p_T - G(q_E)^T alpha - sum_l beta_l grad_p I_l(q_E) = 0 with beta free, and
 * Phi_j(q_N) = 0 for each constraint that moves a free coordinate (multiplier h nu_N). Stationarity in beta is
 * grad_p I_l . R_p = 0, in q_N the KKT form's free-coordinate rows (HsConsEndRest with the kkt residual). */
#include "ipoptimpl.h"

#include <string.h>

/* Column of u_k, of gamma_k, of node j's x_j (j >= 1), and of alpha. */
static Index UCol(const HsIpopt *ip, int k) { return (Index)k * ip->nb; }
static Index GCol(const HsIpopt *ip, int k) { return (Index)k * ip->nb + ip->m; }
static Index NodeCol(const HsIpopt *ip, int j) { return (Index)(j - 1) * ip->nb + ip->m + ip->nc; }
static Index ACol(const HsIpopt *ip) { return (Index)ip->N * ip->nb; }
static Index BCol(const HsIpopt *ip) { return ACol(ip) + ip->nc; }

/* x_j in the variables z (x_0 is data). */
static const double *Node(const HsIpopt *ip, const Number *z, int j) { return j == 0 ? ip->x0 : z + NodeCol(ip, j); }

/* The first row of Phi(q_k) = 0 (k = 1..N-1) and of the end condition. */
static Index PhiRow(const HsIpopt *ip, int k) { return (Index)ip->N * ip->dim + (Index)(k - 1) * ip->nc; }
static Index EndRow(const HsIpopt *ip) { return PhiRow(ip, ip->N); }

/* The row of the moving constraint j's Phi_j(q_N) = 0 (after the end condition), or -1: not a row. */
static Index MoveRow(const HsIpopt *ip, int j)
{
  const int *mv = ip->prob->cons_end_moves;
  Index      r  = EndRow(ip) + ip->n;
  if (!ip->qfree || (mv && !mv[j]))
    return -1;
  for (int i = 0; mv && i < j; i++)
    r += mv[i] != 0;
  return mv ? r : r + j;
}

/* q_E of the end condition: q_N with a free coordinate, else q_T. */
static const double *EndQ(const HsIpopt *ip, const Number *z) { return ip->qfree ? Node(ip, z, ip->N) : ip->prob->xT; }

/* The extended class's sizes (ip->ext, ni, qfree, nmv) and scratch. */
static PetscErrorCode SetUpExtended(HsIpopt *ip, HsProblem *P, HsCons *cons)
{
  int n = P->n, c = P->nc;

  PetscFunctionBeginUser;
  ip->ext = !HsConsIsExact(cons), ip->ni = ip->ext ? P->ncinv : 0, ip->qfree = 0, ip->nmv = 0;
  for (int i = 0; ip->ext && i < n; i++)
    ip->qfree |= !P->xT_fixed[i];
  for (int j = 0; ip->qfree && j < c; j++)
    ip->nmv += !P->cons_end_moves || P->cons_end_moves[j];
  if (ip->ext)
    PetscCall(PetscMalloc1(2 * n * n + c + c * n + c * n * n + ip->ni * n + ip->ni * n * n, &ip->xw));
  PetscFunctionReturn(0);
}

/*@ HsIpoptConsNlpSetUp - sizes, offsets and scratch of the NLP of a constrained system (cons: its scheme at this
    solve's T, not owned) on N intervals of step h with initial state x0 (rank 0; bvp/impls internal). Freed by
    HsIpoptNlpReset. @*/
PetscErrorCode HsIpoptConsNlpSetUp(HsIpopt *ip, HsProblem *P, HsCons *cons, int N, double h, const double *x0)
{
  int n = P->n, m = P->m, c = P->nc, dim = 2 * n, dd = dim * dim, mml = m * (m + 1) / 2, nnl = n * (n + 1) / 2;

  PetscFunctionBeginUser;
  HsIpoptNlpReset(ip);
  PetscCall(SetUpExtended(ip, P, cons));
  ip->cons = cons, ip->prob = P, ip->N = N, ip->h = h;
  ip->n = n, ip->m = m, ip->nc = c, ip->dim = dim, ip->nb = m + c + dim;
  ip->ft = 0, ip->mt = 0, ip->nv = N * ip->nb + c + ip->ni, ip->bq = P->Bq ? 1 : 0;
  PetscCall(PetscMalloc5(N + 3, &ip->joff, N + 2, &ip->hoff, dim, &ip->x0, c * n + m * n + n * n + c + c * n, &ip->Hd,
                         dim + 2 * dd + dim * c + dim * m + c + c * n, &ip->Jb));
  PetscCall(PetscArraycpy(ip->x0, x0, dim));
  ip->joff[0] = 0, ip->hoff[0] = 0;
  for (int k = 0; k < N; k++) {
    ip->joff[k + 1] = ip->joff[k] + (k ? dd : 0) + dd + n * c + n * m;
    ip->hoff[k + 1] = ip->hoff[k] + mml + (k ? c * n + ip->bq * m * n : 0) + n * c + ip->bq * n * m +
                      (k && ip->ext ? n * n : 0) + (k + 1 < N ? nnl : 0);
  }
  ip->joff[N + 1] = ip->joff[N] + (N - 1) * c * n; /* Phi(q_k), k = 1..N-1 */
  ip->joff[N + 2] = ip->joff[N + 1] + n + n * c + n * ip->ni + ip->qfree * n * n + ip->nmv * n; /* the end */
  ip->hoff[N + 1] = ip->hoff[N] + (ip->ext ? nnl : 0) + ip->qfree * (c + ip->ni) * n;
  PetscFunctionReturn(0);
}

/*@ HsIpoptConsNumConstraints - the number of constraints, N 2n + (N - 1) nc + n, and the rest end's moving rows
    (bvp/impls internal). @*/
Index HsIpoptConsNumConstraints(const HsIpopt *ip) { return EndRow(ip) + ip->n + ip->nmv; }

/*@ HsIpoptConsStart - the start z and the bounds zl, zu from the constrained transcription's points rows (its guess or
    iterate): the states, u_k = R^{-1} B(qbar)^T lp, gamma_k the least-squares balance of interval k's momentum
    equation for them (HsConsNlpForce: exact where the states satisfy the state equations, a conserving solution;
    rows' gamma where it fails), alpha from point N's nu slot; q_N fixed to q_T, everything else free (bvp/impls
    internal). @*/
void HsIpoptConsStart(HsIpopt *ip, const PetscScalar *rows, double *z, double *zl, double *zu)
{
  int n = ip->n, c = ip->nc, m = ip->m, D = 4 * n + 2 * c;

  for (Index i = 0; i < ip->nv; i++)
    zl[i] = -1e19, zu[i] = 1e19;
  for (int k = 1; k <= ip->N; k++)
    memcpy(z + NodeCol(ip, k), rows + (size_t)k * D, sizeof(double) * (size_t)(2 * n));
  for (int i = 0; i < n; i++) { /* q_N = q_T: IPOPT makes it a parameter (its fixed components, at a rest end) */
    Index j = NodeCol(ip, ip->N) + i;
    if (ip->prob->xT_fixed[i])
      z[j] = zl[j] = zu[j] = ip->prob->xT[i];
  }
  for (int k = 0; k < ip->N; k++) {
    double *u = z + UCol(ip, k), *g = z + GCol(ip, k);
    if (HsConsControl(ip->cons, rows + (size_t)k * D, rows + (size_t)(k + 1) * D, u))
      memset(u, 0, sizeof(double) * (size_t)m); /* B(q) not finite at the guess: IPOPT reports it */
    if (HsConsNlpForce(ip->cons, Node(ip, z, k), Node(ip, z, k + 1), u, g))
      memcpy(g, rows + (size_t)k * D + 4 * n + c, sizeof(double) * (size_t)c);
  }
  memcpy(z + ACol(ip), rows + (size_t)ip->N * D + 2 * n, sizeof(double) * (size_t)c);
  memcpy(z + BCol(ip), rows + (size_t)ip->N * D + 2 * n + c, sizeof(double) * (size_t)ip->ni); /* lq slot */
}

/*@ HsIpoptConsSolution - IPOPT's solution z and multipliers y as the constrained transcription's points rows (the
    KKT form's layout, costate/hsconstrained.h: lambda_{k+1/2} = y of interval k, nu_k = y of Phi(q_k) / h, alpha in
    point N's nu slot, at a rest end beta in its lq slot and nu_N in its gamma slot, the dummies 0) and the controls U
   (N x m) (bvp/impls internal). @*/
void HsIpoptConsSolution(HsIpopt *ip, const double *z, const double *y, PetscScalar *rows, PetscReal *U)
{
  int n = ip->n, c = ip->nc, m = ip->m, D = 4 * n + 2 * c;

  for (int k = 0; k <= ip->N; k++) {
    PetscScalar *r = rows + (size_t)k * D;
    memset(r, 0, sizeof(double) * (size_t)D);
    memcpy(r, Node(ip, z, k), sizeof(double) * (size_t)(2 * n));
    for (int j = 0; k > 0 && j < c; j++)
      r[2 * n + j] = k < ip->N ? y[PhiRow(ip, k) + j] / ip->h : z[ACol(ip) + j];
    if (k == ip->N) { /* the rest end: beta in the lq slot, nu_N in the gamma slot */
      memcpy(r + 2 * n + c, z + BCol(ip), sizeof(double) * (size_t)ip->ni);
      for (int j = 0; j < c; j++)
        r[4 * n + c + j] = MoveRow(ip, j) < 0 ? 0 : y[MoveRow(ip, j)] / ip->h;
      break;
    }
    memcpy(r + 2 * n + c, y + (size_t)k * ip->dim, sizeof(double) * (size_t)(2 * n));
    memcpy(r + 4 * n + c, z + GCol(ip, k), sizeof(double) * (size_t)c);
    memcpy(U + (size_t)k * m, z + UCol(ip, k), sizeof(double) * (size_t)m);
  }
}

/*@ HsIpoptConsEvalF - the objective J^d = h sum_k 1/2 u_k^T R u_k (IPOPT callback). @*/
Bool HsIpoptConsEvalF(Index nv, Number *z, Bool new_z, Number *f, UserDataPtr ctx)
{
  HsIpopt      *ip  = ctx;
  const double *R   = ip->prob->R;
  double        sum = 0;
  (void)nv, (void)new_z;

  for (int k = 0; k < ip->N; k++) {
    const double *u = z + UCol(ip, k);
    for (int a = 0; a < ip->m; a++)
      for (int b = 0; b < ip->m; b++)
        sum += 0.5 * u[a] * R[a * ip->m + b] * u[b];
  }
  *f = ip->h * sum;
  return TRUE;
}

/*@ HsIpoptConsEvalGradF - the gradient of J^d: h R u_k in u_k, zero elsewhere (IPOPT callback). @*/
Bool HsIpoptConsEvalGradF(Index nv, Number *z, Bool new_z, Number *g, UserDataPtr ctx)
{
  HsIpopt      *ip = ctx;
  const double *R  = ip->prob->R;
  (void)new_z;

  memset(g, 0, sizeof(Number) * (size_t)nv);
  for (int k = 0; k < ip->N; k++)
    for (int a = 0; a < ip->m; a++) {
      double v = 0;
      for (int b = 0; b < ip->m; b++)
        v += R[a * ip->m + b] * z[UCol(ip, k) + b];
      g[UCol(ip, k) + a] = ip->h * v;
    }
  return TRUE;
}

/* The end data at q_E (EndQ): Phi, G and, at a rest end, Hess Phi, grad_p I_l and its derivatives (ip->xw; the exact
 * class: Phi and G in ip->Jb). */
static int EndData(HsIpopt *ip, const Number *z, double **Phi, double **G, double **H, double **g, double **dg)
{
  const HsProblem *P = ip->prob;
  int              n = ip->n, c = ip->nc;
  double          *w = ip->xw ? ip->xw + 2 * n * n : ip->Jb;

  *Phi = w, *G = w + c, *H = *G + c * n, *g = *H + c * n * n, *dg = *g + ip->ni * n;
  if (P->Phi(EndQ(ip, z), *Phi, *G, ip->xw ? *H : NULL, P->ctx))
    return 1;
  return ip->ni && P->cinv_grad(EndQ(ip, z), *g, *dg, P->ctx);
}

/*@ HsIpoptConsEvalG - the constraints: the interval equations, Phi(q_k) at the inner nodes, the end condition and
    the moving Phi_j(q_N) (IPOPT callback). @*/
Bool HsIpoptConsEvalG(Index nv, Number *z, Bool new_z, Index nc, Number *c, UserDataPtr ctx)
{
  HsIpopt      *ip = ctx;
  int           n = ip->n, C = ip->nc;
  double       *Phi, *GT, *H, *g, *dg;
  const double *pN = Node(ip, z, ip->N) + n, *al = z + ACol(ip), *be = z + BCol(ip);
  (void)nv, (void)new_z, (void)nc;

  for (int k = 0; k < ip->N; k++)
    if (HsConsNlpInterval(ip->cons, Node(ip, z, k), Node(ip, z, k + 1), z + UCol(ip, k), z + GCol(ip, k),
                          c + (size_t)k * ip->dim, NULL, NULL, NULL, NULL))
      return FALSE;
  for (int k = 1; k < ip->N; k++)
    if (HsConsNlpNode(ip->cons, Node(ip, z, k), NULL, c + PhiRow(ip, k), NULL, NULL))
      return FALSE;
  if (EndData(ip, z, &Phi, &GT, &H, &g, &dg))
    return FALSE;
  for (int i = 0; i < n; i++) {
    double f = pN[i] - ip->prob->xT[n + i];
    for (int j = 0; j < C; j++)
      f -= GT[j * n + i] * al[j];
    for (int l = 0; l < ip->ni; l++)
      f -= g[l * n + i] * be[l];
    c[EndRow(ip) + i] = f;
  }
  for (int j = 0; j < C; j++)
    if (MoveRow(ip, j) >= 0)
      c[MoveRow(ip, j)] = Phi[j];
  return TRUE;
}

/* The Jacobian's positions (ipoptimpl.h): interval k's rows against x_k (k >= 1) and x_{k+1} (dense 2n x 2n), its
 * p-rows against gamma_k and u_k; Phi(q_k)'s rows against q_k; the end condition against p_N (its diagonal) and
 * alpha. */
static void JacStructure(const HsIpopt *ip, Index *row, Index *col)
{
  int dim = ip->dim, n = ip->n, m = ip->m, c = ip->nc;

  for (int k = 0; k < ip->N; k++) {
    Index p = ip->joff[k], r0 = (Index)k * dim;
    for (int b = k ? 0 : 1; b < 2; b++)
      for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++, p++)
          row[p] = r0 + i, col[p] = NodeCol(ip, k + b) + j;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < c; j++, p++)
        row[p] = r0 + n + i, col[p] = GCol(ip, k) + j;
    for (int i = 0; i < n; i++)
      for (int a = 0; a < m; a++, p++)
        row[p] = r0 + n + i, col[p] = UCol(ip, k) + a;
  }
  for (int k = 1; k < ip->N; k++) {
    Index p = ip->joff[ip->N] + (Index)(k - 1) * c * n;
    for (int j = 0; j < c; j++)
      for (int l = 0; l < n; l++, p++)
        row[p] = PhiRow(ip, k) + j, col[p] = NodeCol(ip, k) + l;
  }
  {
    Index p = ip->joff[ip->N + 1], qN = NodeCol(ip, ip->N);
    for (int i = 0; i < n; i++, p++)
      row[p] = EndRow(ip) + i, col[p] = qN + n + i;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < c; j++, p++)
        row[p] = EndRow(ip) + i, col[p] = ACol(ip) + j;
    for (int i = 0; i < n; i++)
      for (int l = 0; l < ip->ni; l++, p++)
        row[p] = EndRow(ip) + i, col[p] = BCol(ip) + l;
    for (int i = 0; ip->qfree && i < n; i++)
      for (int r = 0; r < n; r++, p++)
        row[p] = EndRow(ip) + i, col[p] = qN + r;
    for (int j = 0; j < c; j++)
      for (int r = 0; MoveRow(ip, j) >= 0 && r < n; r++, p++)
        row[p] = MoveRow(ip, j), col[p] = qN + r;
  }
}

/* The end condition's and the moving rows' Jacobian entries (JacStructure's order) into v. */
static Bool EndJacobian(HsIpopt *ip, const Number *z, Number *v)
{
  int           n = ip->n, c = ip->nc, ni = ip->ni;
  double       *Phi, *G, *H, *g, *dg;
  const double *al = z + ACol(ip), *be = z + BCol(ip);

  if (EndData(ip, z, &Phi, &G, &H, &g, &dg))
    return FALSE;
  for (int i = 0; i < n; i++)
    *v++ = 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < c; j++)
      *v++ = -G[j * n + i];
  for (int i = 0; i < n; i++)
    for (int l = 0; l < ni; l++)
      *v++ = -g[l * n + i];
  for (int i = 0; ip->qfree && i < n; i++)
    for (int r = 0; r < n; r++) { /* d/dq_N,r of -(G(q_N)^T alpha + sum_l beta_l grad_p I_l(q_N))_i */
      double d = 0;
      for (int j = 0; j < c; j++)
        d -= al[j] * H[(j * n + i) * n + r];
      for (int l = 0; l < ni; l++)
        d -= be[l] * dg[(l * n + i) * n + r];
      *v++ = d;
    }
  for (int j = 0; j < c; j++)
    for (int r = 0; MoveRow(ip, j) >= 0 && r < n; r++)
      *v++ = G[j * n + r];
  return TRUE;
}

/*@ HsIpoptConsEvalJacG - the constraint Jacobian (IPOPT callback). @*/
Bool HsIpoptConsEvalJacG(Index nv, Number *z, Bool new_z, Index nc, Index nele, Index *row, Index *col, Number *val,
                         UserDataPtr ctx)
{
  HsIpopt *ip  = ctx;
  int      dim = ip->dim, dd = dim * dim, n = ip->n, m = ip->m, c = ip->nc;
  double  *cr = ip->Jb, *Jx0 = cr + dim, *Jx1 = Jx0 + dd, *Jg = Jx1 + dd, *Ju = Jg + dim * c, *Phi = Ju + dim * m;
  (void)nv, (void)new_z, (void)nc, (void)nele;

  if (!val) {
    JacStructure(ip, row, col);
    return TRUE;
  }
  for (int k = 0; k < ip->N; k++) {
    Number *v = val + ip->joff[k];
    if (HsConsNlpInterval(ip->cons, Node(ip, z, k), Node(ip, z, k + 1), z + UCol(ip, k), z + GCol(ip, k), cr, Jx0, Jx1,
                          Jg, Ju))
      return FALSE;
    if (k)
      memcpy(v, Jx0, sizeof(double) * (size_t)dd), v += dd;
    memcpy(v, Jx1, sizeof(double) * (size_t)dd), v += dd;
    memcpy(v, Jg + (size_t)n * c, sizeof(double) * (size_t)(n * c)), v += n * c; /* the p-rows */
    memcpy(v, Ju + (size_t)n * m, sizeof(double) * (size_t)(n * m));
  }
  for (int k = 1; k < ip->N; k++)
    if (HsConsNlpNode(ip->cons, Node(ip, z, k), NULL, Phi, val + ip->joff[ip->N] + (size_t)(k - 1) * c * n, NULL))
      return FALSE;
  return EndJacobian(ip, z, val + ip->joff[ip->N + 1]);
}

/* The Hessian's positions per interval k (ipoptimpl.h): u_k's lower triangle; for k >= 1 (gamma_k, q_k) and with a
 * B(q) (u_k, q_k); (q_{k+1}, gamma_k) and with a B(q) (q_{k+1}, u_k); for k + 1 < N node k+1's (q, q) lower triangle.
 */
static void HessStructure(const HsIpopt *ip, Index *row, Index *col)
{
  int n = ip->n, m = ip->m, c = ip->nc;

  for (int k = 0; k < ip->N; k++) {
    Index p = ip->hoff[k], u0 = UCol(ip, k), g0 = GCol(ip, k), c1 = NodeCol(ip, k + 1);
    for (int a = 0; a < m; a++)
      for (int b = 0; b <= a; b++, p++)
        row[p] = u0 + a, col[p] = u0 + b;
    for (int j = 0; k && j < c; j++)
      for (int l = 0; l < n; l++, p++)
        row[p] = g0 + j, col[p] = NodeCol(ip, k) + l;
    for (int a = 0; k && ip->bq && a < m; a++)
      for (int l = 0; l < n; l++, p++)
        row[p] = u0 + a, col[p] = NodeCol(ip, k) + l;
    for (int l = 0; l < n; l++)
      for (int j = 0; j < c; j++, p++)
        row[p] = c1 + l, col[p] = g0 + j;
    for (int l = 0; ip->bq && l < n; l++)
      for (int a = 0; a < m; a++, p++)
        row[p] = c1 + l, col[p] = u0 + a;
    for (int l = 0; k && ip->ext && l < n; l++)
      for (int r = 0; r < n; r++, p++)
        row[p] = c1 + l, col[p] = NodeCol(ip, k) + r;
    for (int i = 0; k + 1 < ip->N && i < n; i++)
      for (int j = 0; j <= i; j++, p++)
        row[p] = c1 + i, col[p] = c1 + j;
  }
  {
    Index p = ip->hoff[ip->N], qN = NodeCol(ip, ip->N);
    for (int i = 0; ip->ext && i < n; i++)
      for (int j = 0; j <= i; j++, p++)
        row[p] = qN + i, col[p] = qN + j;
    for (int j = 0; ip->qfree && j < c + ip->ni; j++)
      for (int l = 0; l < n; l++, p++)
        row[p] = ACol(ip) + j, col[p] = qN + l;
  }
}

/* The end's Hessian entries (HessStructure's order) into v: q_N's block, B's curvature W of interval N - 1/2 and
 * sum_j w_j Hess Phi_j(q_N) of the moving rows; (alpha_j, q_N,l) = -(Hess Phi_j y_end)_l and (beta_l, q_N,r) =
 * -sum_i y_end,i d(grad_p I_l)_i/dq_r (G and grad_p I_l are linear in q: the quadratic Phi, L = sum q x p). */
static Bool EndHessian(HsIpopt *ip, const Number *z, const Number *y, const double *W, Number *v)
{
  int           n = ip->n, c = ip->nc, ni = ip->ni;
  double       *Phi, *G, *H, *g, *dg, *w = ip->xw + n * n, *Hw = ip->Hd + (c + ip->m) * n;
  const double *ye = y + EndRow(ip);

  if (!ip->ext)
    return TRUE;
  for (int j = 0; j < c; j++)
    w[j] = MoveRow(ip, j) < 0 ? 0 : y[MoveRow(ip, j)];
  if (HsConsNlpNode(ip->cons, Node(ip, z, ip->N), w, ip->Hd, NULL, Hw) || EndData(ip, z, &Phi, &G, &H, &g, &dg))
    return FALSE;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      *v++ = W[i * n + j] + Hw[i * n + j];
  for (int j = 0; ip->qfree && j < c + ni; j++)
    for (int l = 0; l < n; l++) {
      double d = 0;
      for (int i = 0; i < n; i++)
        d -= ye[i] * (j < c ? H[(j * n + i) * n + l] : dg[((j - c) * n + i) * n + l]);
      *v++ = d;
    }
  return TRUE;
}

/*@ HsIpoptConsEvalH - the Hessian of sigma J^d + y^T c, lower triangle, each position once (IPOPT callback; the file
    head and costate/consnlp.c say why nothing else is there). @*/
Bool HsIpoptConsEvalH(Index nv, Number *z, Bool new_z, Number sigma, Index nc, Number *y, Bool new_y, Index nele,
                      Index *row, Index *col, Number *val, UserDataPtr ctx)
{
  HsIpopt *ip = ctx;
  int      n = ip->n, m = ip->m, c = ip->nc;
  double  *Hgq = ip->Hd, *Huq = Hgq + c * n, *Hw = Huq + m * n, *Phi = Hw + n * n, *W = ip->ext ? ip->xw : NULL;
  (void)nv, (void)new_z, (void)nc, (void)new_y, (void)nele;

  if (!val) {
    HessStructure(ip, row, col);
    return TRUE;
  }
  for (int k = 0; k < ip->N; k++) {
    Number *v = val + ip->hoff[k];
    if (HsConsNlpIntervalHessian(ip->cons, Node(ip, z, k), Node(ip, z, k + 1), y + (size_t)k * ip->dim, z + UCol(ip, k),
                                 Hgq, Huq, W))
      return FALSE;
    for (int a = 0; a < m; a++)
      for (int b = 0; b <= a; b++)
        *v++ = sigma * ip->h * ip->prob->R[a * m + b];
    for (int j = 0; k && j < c; j++)
      for (int l = 0; l < n; l++)
        *v++ = Hgq[j * n + l];
    for (int a = 0; k && ip->bq && a < m; a++)
      for (int l = 0; l < n; l++)
        *v++ = Huq[a * n + l];
    for (int l = 0; l < n; l++)
      for (int j = 0; j < c; j++)
        *v++ = Hgq[j * n + l];
    for (int l = 0; ip->bq && l < n; l++)
      for (int a = 0; a < m; a++)
        *v++ = Huq[a * n + l];
    for (int l = 0; k && W && l < n * n; l++) /* (q_{k+1}, q_k), and W to node k's block (interval k-1's last) */
      *v++ = W[l];
    for (int i = 0, p = 0; k && W && i < n; i++)
      for (int j = 0; j <= i; j++, p++)
        val[ip->hoff[k] - n * (n + 1) / 2 + p] += W[i * n + j];
    if (k + 1 < ip->N) { /* node k+1: w^T Phi(q_{k+1}) */
      if (HsConsNlpNode(ip->cons, Node(ip, z, k + 1), y + PhiRow(ip, k + 1), Phi, NULL, Hw))
        return FALSE;
      for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
          *v++ = Hw[i * n + j] + (W ? W[i * n + j] : 0);
    }
  }
  return EndHessian(ip, z, y, W, val + ip->hoff[ip->N]);
}
