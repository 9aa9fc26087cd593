/* hamshoot: the direct transcription NLP's callbacks for IPOPT (layout: ipoptimpl.h). Each callback
 * assembles the interval pieces of costate/nlp.c; a piece outside the problem's domain makes the
 * callback return FALSE, which IPOPT answers by shortening its step.
 *
 * A free final time T (the last variable): every piece is linear in h = T/N, so
 *   df/dT = (1/N) sum_k L^d_k + d phi/dT,     dc_k/dT = (c_k - (x_{k+1} - x_k)) / T,
 * and the Hessian row of T in (u_k, x_k, T) follows from the interval gradient and Jacobian:
 *   d2/dT du_k = (sigma gu_k + Cu_k^T y_k) / T,
 *   d2/dT dx_k = (sigma gk_k + Cxk_k^T y_k + y_k) / T + (sigma gk1_{k-1} + Cxk1_{k-1}^T y_{k-1} - y_{k-1}) / T,
 *   plus sigma grad(d phi/dT) at x_N, and d2/dT2 = sigma d^2 phi/dT^2
 * (gk = h/2 grad ell, gu = h R u: HsNlpIntervalGradient; Cxk = -I - h JJ Da, Cxk1 = I - h JJ Db,
 * Cu = -h G: HsNlpIntervalJacobian). */
#include "ipoptimpl.h"

#include <string.h>

/* x_j in the variables z (x_0 is data). */
static const double *Node(const HsIpopt *ip, const Number *z, int j)
{
  return j == 0 ? ip->x0 : z + (size_t)(j - 1) * ip->nb + ip->m;
}

static Index NodeCol(const HsIpopt *ip, int j) { return (Index)((j - 1) * ip->nb + ip->m); }

/* A free T: the value in z to the problem and the discretization; FALSE if it is not positive. */
static Bool SetT(HsIpopt *ip, const Number *z)
{
  if (!ip->ft)
    return TRUE;
  if (!(z[ip->nv - 1] > 0))
    return FALSE;
  HsProblemSetFinalTime(ip->prob, z[ip->nv - 1]);
  if (ip->prob->x0_T) /* x0(T): x_0 is not a variable, the constraint c_0 takes it */
    memcpy(ip->x0, ip->prob->x0, sizeof(double) * (size_t)ip->dim);
  return HsDiscSetHorizon(ip->d) ? FALSE : TRUE; /* T in the data: R(T) not positive definite */
}

/*@ HsIpoptNlpSetUp - sizes, offsets and scratch of the NLP of disc d on N intervals with initial state x0 (rank 0;
    bvp/impls internal). @*/
PetscErrorCode HsIpoptNlpSetUp(HsIpopt *ip, HsProblem *P, HsDisc *d, int N, const double *x0)
{
  int dim = 2 * P->n, m = P->m, dd = dim * dim, ddl = dim * (dim + 1) / 2, mml = m * (m + 1) / 2;

  PetscFunctionBeginUser;
  HsIpoptNlpReset(ip);
  ip->d = d, ip->N = N, ip->prob = P, ip->cons = NULL;
  ip->n = P->n, ip->m = m, ip->dim = dim, ip->nb = m + dim;
  ip->ft = P->free_T ? 1 : 0, ip->nv = N * ip->nb + ip->ft, ip->bq = P->Bq ? 1 : 0;
  PetscCall(PetscMalloc5(ip->N + 3, &ip->joff, ip->N + 2, &ip->hoff, dim, &ip->x0, 3 * dd + m * m + P->n * m + 2 * dim,
                         &ip->Hd,
                         2 * dd + dim * m + 3 * dim, &ip->Jb));
  PetscCall(PetscMalloc1(dim, &ip->mti));
  ip->mt = 0;
  for (int i = 0; P->xT_T && i < dim; i++)
    if (P->xT_fixed[i])
      ip->mti[ip->mt++] = i;
  PetscCall(PetscArraycpy(ip->x0, x0, dim));
  ip->joff[0] = 0, ip->hoff[0] = 0;
  for (int k = 0; k < ip->N; k++) {
    ip->joff[k + 1] = ip->joff[k] + (k ? dd : 0) + dd + P->n * m;
    ip->hoff[k + 1] = ip->hoff[k] + mml + ddl + (k ? dd : 0) + (ip->bq ? (k ? 2 : 1) * P->n * m : 0);
  }
  /* a free T: its column of the Jacobian (every constraint), its row of the Hessian (every variable) */
  ip->joff[N + 1] = ip->joff[N] + (ip->ft ? N * dim : 0);
  ip->joff[N + 2] = ip->joff[N + 1] + 2 * ip->mt; /* the moving targets' rows: x_{N,i} and T */
  ip->hoff[N + 1] = ip->hoff[N] + (ip->ft ? ip->nv : 0);
  if (P->data_T)
    PetscCall(PetscMalloc2(3 * ip->nv + ip->joff[N + 2], &ip->fd, 2 * ip->joff[N + 2], &ip->fdrc));
  PetscFunctionReturn(0);
}

/*@ HsIpoptNlpReset - frees the NLP's offsets and scratch (bvp/impls internal). @*/
void HsIpoptNlpReset(HsIpopt *ip)
{
  PetscFree5(ip->joff, ip->hoff, ip->x0, ip->Hd, ip->Jb);
  PetscFree(ip->mti);
  PetscFree(ip->xw);
  PetscFree2(ip->fd, ip->fdrc);
  ip->d = NULL;
}

/*@ HsIpoptNlpNumJac - the number of Jacobian entries (bvp/impls internal). @*/
Index HsIpoptNlpNumJac(const HsIpopt *ip) { return ip->joff[ip->N + 2]; }

/*@ HsIpoptNlpNumHess - the number of entries of the Hessian's lower triangle (bvp/impls internal). @*/
Index HsIpoptNlpNumHess(const HsIpopt *ip) { return ip->hoff[ip->N + 1]; }

/*@ HsIpoptEvalF - the objective J^d = h sum_k L^d_k + phi(x_N) (IPOPT callback). @*/
Bool HsIpoptEvalF(Index nv, Number *z, Bool new_z, Number *f, UserDataPtr ctx)
{
  HsIpopt *ip = ctx;
  double   L, phi, h, sum = 0;
  (void)nv, (void)new_z;

  if (!SetT(ip, z))
    return FALSE;
  h = HsDiscGetStep(ip->d);
  for (int k = 0; k < ip->N; k++) {
    if (HsDiscRunningCostU(ip->d, k, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb, &L))
      return FALSE;
    sum += L;
  }
  if (HsNlpTerminal(ip->d, Node(ip, z, ip->N), &phi, NULL, NULL))
    return FALSE;
  *f = h * sum + phi;
  return TRUE;
}

/*@ HsIpoptEvalGradF - the gradient of J^d (IPOPT callback). @*/
Bool HsIpoptEvalGradF(Index nv, Number *z, Bool new_z, Number *g, UserDataPtr ctx)
{
  HsIpopt *ip  = ctx;
  int      dim = ip->dim, m = ip->m;
  double  *gk = ip->Hd, *gk1 = gk + dim, *gu = gk1 + dim, *gphi = gu + m, L, sumL = 0, sumLT = 0, gx0T = 0, fT;
  (void)new_z;

  if (!SetT(ip, z))
    return FALSE;
  memset(g, 0, sizeof(Number) * (size_t)nv);
  for (int k = 0; k < ip->N; k++) {
    Number *gx1 = g + NodeCol(ip, k + 1);
    if (HsNlpIntervalGradient(ip->d, k, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb, gk, gk1, gu))
      return FALSE;
    if (ip->ft) {
      if (HsDiscRunningCostU(ip->d, k, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb, &L))
        return FALSE;
      sumL += L;
    }
    if (ip->prob->data_T) { /* T in the data: h dL^d/dT, and x0(T) through interval 0's gradient in x_0 */
      double LT, *fT = ip->Jb;
      if (HsDiscDataTU(ip->d, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb, &LT, fT))
        return FALSE;
      sumLT += LT;
      for (int i = 0; !k && ip->prob->x0_T && i < dim; i++)
        gx0T += gk[i] * ip->prob->x0_T[i];
    }
    for (int i = 0; i < m; i++)
      g[(size_t)k * ip->nb + i] += gu[i];
    for (int i = 0; i < dim; i++) {
      gx1[i] += gk1[i];
      if (k)
        g[NodeCol(ip, k) + i] += gk[i];
    }
  }
  if (HsNlpTerminal(ip->d, Node(ip, z, ip->N), NULL, gphi, NULL))
    return FALSE;
  for (int i = 0; i < dim; i++)
    g[NodeCol(ip, ip->N) + i] += gphi[i];
  if (ip->ft) {
    if (HsDiscTerminalCostT(ip->d, Node(ip, z, ip->N), &fT, NULL, NULL))
      return FALSE;
    g[ip->nv - 1] = sumL / ip->N + fT + HsDiscGetStep(ip->d) * sumLT + gx0T;
  }
  return TRUE;
}

/*@ HsIpoptEvalG - the constraints c_k, 2n per interval (IPOPT callback). @*/
Bool HsIpoptEvalG(Index nv, Number *z, Bool new_z, Index nc, Number *c, UserDataPtr ctx)
{
  HsIpopt *ip = ctx;
  (void)nv, (void)new_z, (void)nc;

  if (!SetT(ip, z))
    return FALSE;
  for (int k = 0; k < ip->N; k++)
    if (HsDiscStateResidualU(ip->d, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb,
                             c + (size_t)k * ip->dim))
      return FALSE;
  for (int j = 0; j < ip->mt; j++) /* the targets at this T (SetT updated prob->xT) */
    c[ip->N * ip->dim + j] = Node(ip, z, ip->N)[ip->mti[j]] - ip->prob->xT[ip->mti[j]];
  return TRUE;
}

/* The Jacobian's positions: rows of c_k against x_k (k >= 1), x_{k+1}, and u_k (p-rows only). */
static void JacStructure(const HsIpopt *ip, Index *row, Index *col)
{
  int dim = ip->dim, n = ip->n, m = ip->m;
  for (int k = 0; k < ip->N; k++) {
    Index p = ip->joff[k], r0 = (Index)(k * dim);
    for (int b = k ? 0 : 1; b < 2; b++)
      for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++, p++)
          row[p] = r0 + i, col[p] = NodeCol(ip, k + b) + j;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < m; j++, p++)
        row[p] = r0 + n + i, col[p] = (Index)(k * ip->nb + j);
  }
  for (Index p = ip->joff[ip->N], r = 0; p < ip->joff[ip->N + 1]; p++, r++) /* T's column */
    row[p] = r, col[p] = ip->nv - 1;
  for (int j = 0; j < ip->mt; j++) { /* x_{N,i} - x_T,i(T) */
    Index p = ip->joff[ip->N + 1] + 2 * j, r = (Index)(ip->N * dim + j);
    row[p] = r, col[p] = NodeCol(ip, ip->N) + ip->mti[j];
    row[p + 1] = r, col[p + 1] = ip->nv - 1;
  }
}

/*@ HsIpoptEvalJacG - the constraint Jacobian, dense 2n x 2n blocks and the B block (IPOPT callback). @*/
Bool HsIpoptEvalJacG(Index nv, Number *z, Bool new_z, Index nc, Index nele, Index *row, Index *col, Number *val,
                     UserDataPtr ctx)
{
  HsIpopt *ip = ctx;
  int      dim = ip->dim, dd = dim * dim, n = ip->n, m = ip->m;
  double  *Cxk = ip->Jb, *Cxk1 = Cxk + dd, *Cu = Cxk1 + dd;
  (void)nv, (void)new_z, (void)nc, (void)nele;

  if (!val) {
    JacStructure(ip, row, col);
    return TRUE;
  }
  if (!SetT(ip, z))
    return FALSE;
  for (int k = 0; k < ip->N; k++) {
    Number *v = val + ip->joff[k];
    if (HsNlpIntervalJacobian(ip->d, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb, Cxk, Cxk1, Cu))
      return FALSE;
    if (ip->ft) { /* dc_k/dT = (c_k - (x_{k+1} - x_k)) / T */
      double       *c = Cu + dim * m, T = z[ip->nv - 1];
      const double *xk = Node(ip, z, k), *xk1 = Node(ip, z, k + 1);
      if (HsDiscStateResidualU(ip->d, xk, xk1, z + (size_t)k * ip->nb, c))
        return FALSE;
      for (int i = 0; i < dim; i++)
        val[ip->joff[ip->N] + k * dim + i] = (c[i] - (xk1[i] - xk[i])) / T;
      if (ip->prob->data_T) { /* T in the data: -h d(JJ gbar + G u)/dT, and x0(T) through c_0's x_0 block */
        double LT, h = HsDiscGetStep(ip->d);
        if (HsDiscDataTU(ip->d, xk, xk1, z + (size_t)k * ip->nb, &LT, c))
          return FALSE;
        for (int i = 0; i < dim; i++) {
          val[ip->joff[ip->N] + k * dim + i] -= h * c[i];
          for (int j = 0; !k && ip->prob->x0_T && j < dim; j++)
            val[ip->joff[ip->N] + i] += Cxk[i * dim + j] * ip->prob->x0_T[j];
        }
      }
    }
    if (k)
      memcpy(v, Cxk, sizeof(double) * (size_t)dd), v += dd;
    memcpy(v, Cxk1, sizeof(double) * (size_t)dd), v += dd;
    memcpy(v, Cu + (size_t)n * m, sizeof(double) * (size_t)(n * m)); /* rows n..2n-1 */
  }
  if (ip->mt) { /* x_{N,i} - x_T,i(T): 1 and -dx_T,i/dT */
    double *dxT = ip->Jb + 2 * dd + dim * m + dim;
    if (ip->prob->xT_T(dxT, NULL, ip->prob->ctx))
      return FALSE;
    for (int j = 0; j < ip->mt; j++)
      val[ip->joff[ip->N + 1] + 2 * j] = 1, val[ip->joff[ip->N + 1] + 2 * j + 1] = -dxT[ip->mti[j]];
  }
  return TRUE;
}

/* The Hessian's positions per interval k: u_k's lower triangle, node k+1's lower triangle, for
 * k >= 1 the block (x_{k+1}, x_k), and with a B(q) the q-parts of (x_{k+1}, u_k) and, for k >= 1, (u_k, x_k). */
static void HessStructure(const HsIpopt *ip, Index *row, Index *col)
{
  int dim = ip->dim, m = ip->m;
  for (int k = 0; k < ip->N; k++) {
    Index p = ip->hoff[k], u0 = (Index)(k * ip->nb), c1 = NodeCol(ip, k + 1);
    for (int i = 0; i < m; i++)
      for (int j = 0; j <= i; j++, p++)
        row[p] = u0 + i, col[p] = u0 + j;
    for (int i = 0; i < dim; i++)
      for (int j = 0; j <= i; j++, p++)
        row[p] = c1 + i, col[p] = c1 + j;
    if (k)
      for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++, p++)
          row[p] = c1 + i, col[p] = NodeCol(ip, k) + j;
    for (int i = 0; ip->bq && i < ip->n; i++)
      for (int c = 0; c < m; c++, p++)
        row[p] = c1 + i, col[p] = u0 + c;
    for (int c = 0; ip->bq && k && c < m; c++)
      for (int j = 0; j < ip->n; j++, p++)
        row[p] = u0 + c, col[p] = NodeCol(ip, k) + j;
  }
  for (Index p = ip->hoff[ip->N], c = 0; p < ip->hoff[ip->N + 1]; p++, c++) /* T's row, up to the diagonal */
    row[p] = ip->nv - 1, col[p] = c;
}

/* Adds the lower triangle of the symmetric block A (dim x dim) at v. */
static void AddLower(int dim, const double *A, Number *v)
{
  for (int i = 0, p = 0; i < dim; i++)
    for (int j = 0; j <= i; j++, p++)
      v[p] += A[i * dim + j];
}

/* Interval k's part of T's Hessian row (file head) into row (indexed by variable). */
static Bool TRow(HsIpopt *ip, const Number *z, int k, double sigma, const double *yk, Number *row)
{
  int           dim = ip->dim, dd = dim * dim, m = ip->m;
  double       *gk = ip->Hd, *gk1 = gk + dim, *gu = gk1 + dim, *Cxk = ip->Jb, *Cxk1 = Cxk + dd, *Cu = Cxk1 + dd;
  double        T   = z[ip->nv - 1];
  const double *xk = Node(ip, z, k), *xk1 = Node(ip, z, k + 1), *uk = z + (size_t)k * ip->nb;

  if (HsNlpIntervalGradient(ip->d, k, xk, xk1, uk, gk, gk1, gu) || HsNlpIntervalJacobian(ip->d, xk, xk1, uk, Cxk, Cxk1, Cu))
    return FALSE;
  for (int j = 0; j < m; j++) {
    double a = sigma * gu[j];
    for (int i = 0; i < dim; i++)
      a += Cu[i * m + j] * yk[i];
    row[(size_t)k * ip->nb + j] += a / T;
  }
  for (int j = 0; j < dim; j++) {
    double a = sigma * gk[j] + yk[j], b = sigma * gk1[j] - yk[j];
    for (int i = 0; i < dim; i++)
      a += Cxk[i * dim + j] * yk[i], b += Cxk1[i * dim + j] * yk[i];
    if (k)
      row[NodeCol(ip, k) + j] += a / T;
    row[NodeCol(ip, k + 1) + j] += b / T;
  }
  return TRUE;
}

/* T in the data: T's row of the Hessian of sigma J^d + y^T c, d/dT of the Lagrangian's gradient (every
 * variable, T's own entry included), by central differences in T (step HS_FT_FD_STEP (1 + T)) of that
 * gradient, which EvalGradF and EvalJacG give exactly; replaces TRow and the terminal cost's T terms. */
static Bool TRowDifference(HsIpopt *ip, const Number *z, double sigma, const Number *y, Number *row)
{
  Index   nv = ip->nv, nj = ip->joff[ip->N + 2], *jr = ip->fdrc, *jc = jr + nj;
  double *zz = ip->fd, *g = zz + nv, *gm = g + nv, *jv = gm + nv, T = z[nv - 1], dT = HS_FT_FD_STEP * (1 + T);

  memcpy(zz, z, sizeof(double) * (size_t)nv);
  HsIpoptEvalJacG(nv, zz, TRUE, 0, nj, jr, jc, NULL, ip);
  for (int side = 0; side < 2; side++) {
    double *out = side ? gm : g;
    zz[nv - 1]  = side ? T - dT : T + dT;
    if (!HsIpoptEvalGradF(nv, zz, TRUE, out, ip) || !HsIpoptEvalJacG(nv, zz, TRUE, 0, nj, jr, jc, jv, ip)) {
      SetT(ip, z); /* the problem back at z's T */
      return FALSE;
    }
    for (Index i = 0; i < nv; i++)
      out[i] *= sigma;
    for (Index p = 0; p < nj; p++)
      out[jc[p]] += jv[p] * y[jr[p]];
  }
  for (Index i = 0; i < nv; i++)
    row[i] += (g[i] - gm[i]) / (2 * dT);
  return SetT(ip, z);
}

/*@ HsIpoptEvalH - the Hessian of sigma J^d + sum_k y_k^T c_k, lower triangle (IPOPT callback). @*/
Bool HsIpoptEvalH(Index nv, Number *z, Bool new_z, Number sigma, Index nc, Number *y, Bool new_y, Index nele,
                  Index *row, Index *col, Number *val, UserDataPtr ctx)
{
  HsIpopt *ip = ctx;
  int      dim = ip->dim, dd = dim * dim, m = ip->m, mml = m * (m + 1) / 2, ddl = dim * (dim + 1) / 2;
  double  *Hkk = ip->Hd, *Hk1k = Hkk + dd, *Hk1k1 = Hk1k + dd, *Huu = Hk1k1 + dd, *Hxu = Huu + m * m;
  (void)nv, (void)new_z, (void)nc, (void)new_y;

  if (!val) {
    HessStructure(ip, row, col);
    return TRUE;
  }
  if (!SetT(ip, z))
    return FALSE;
  memset(val, 0, sizeof(Number) * (size_t)nele);
  for (int k = 0; k < ip->N; k++) {
    Number *v = val + ip->hoff[k];
    if (ip->ft && !ip->prob->data_T && !TRow(ip, z, k, sigma, y + (size_t)k * dim, val + ip->hoff[ip->N]))
      return FALSE;
    if (HsNlpIntervalHessian(ip->d, k, Node(ip, z, k), Node(ip, z, k + 1), z + (size_t)k * ip->nb, sigma,
                             y + (size_t)k * dim, Hkk, Hk1k, Hk1k1, Huu, Hxu))
      return FALSE;
    AddLower(m, Huu, v);
    AddLower(dim, Hk1k1, v + mml);
    if (k) {
      AddLower(dim, Hkk, val + ip->hoff[k - 1] + mml); /* node k's diagonal block */
      memcpy(v + mml + ddl, Hk1k, sizeof(double) * (size_t)dd);
    }
    if (ip->bq) { /* (x_{k+1}, u_k) = Hxu, (u_k, x_k) = Hxu^T */
      Number *w = v + mml + ddl + (k ? dd : 0);
      memcpy(w, Hxu, sizeof(double) * (size_t)(ip->n * m));
      for (int c = 0; k && c < m; c++)
        for (int j = 0; j < ip->n; j++)
          w[ip->n * m + c * ip->n + j] = Hxu[j * m + c];
    }
  }
  if (HsNlpTerminal(ip->d, Node(ip, z, ip->N), NULL, NULL, Hkk))
    return FALSE;
  for (int i = 0; i < dd; i++)
    Hkk[i] *= sigma;
  AddLower(dim, Hkk, val + ip->hoff[ip->N - 1] + mml);
  if (ip->ft && ip->prob->data_T)
    return TRowDifference(ip, z, sigma, y, val + ip->hoff[ip->N]);
  if (ip->ft) { /* sigma grad(d phi/dT) at x_N, sigma d^2 phi/dT^2 */
    double fT, fTT, *gT = ip->Jb + 2 * dd + dim * ip->m;
    if (HsDiscTerminalCostT(ip->d, Node(ip, z, ip->N), &fT, gT, &fTT))
      return FALSE;
    for (int i = 0; i < dim; i++)
      val[ip->hoff[ip->N] + NodeCol(ip, ip->N) + i] += sigma * gT[i];
    val[ip->hoff[ip->N] + ip->nv - 1] += sigma * fTT;
    if (ip->mt) { /* y_j (x_{N,i} - x_T,i(T)): -y_j d2x_T,i/dT2 */
      double *dxT = gT + dim, *d2xT = dxT + dim;
      if (ip->prob->xT_T(dxT, d2xT, ip->prob->ctx))
        return FALSE;
      for (int j = 0; j < ip->mt; j++)
        val[ip->hoff[ip->N] + ip->nv - 1] -= y[ip->N * dim + j] * d2xT[ip->mti[j]];
    }
  }
  return TRUE;
}
