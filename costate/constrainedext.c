/* hamshoot: the extended scheme for constrained systems outside the exact class (docs/constrained.md, "Beyond the
 * class"): a mass matrix that depends on q, a nonlinear potential, non-quadratic constraints, a B(q) that is not
 * affine. It is the unconstrained conserving scheme of the discretization (HsDisc: Gonzalez states, conserving
 * costates with their secant matrix and B(q) term, costate/costate.c, gain.c) plus the constraint terms, each a
 * discrete gradient or a secant matrix of Phi:
 *
 *   interval j:  F_disc(x_j, x_{j+1}, lambda_j) + h [0; Gbar_j^T gamma_j],   Gbar_j lp_j = 0,
 *                Gbar_j = the Gonzalez discrete gradient of Phi over (q_j, q_{j+1})  (Gbar_j dq = dPhi exactly)
 *   node k:      C_disc(k) - h/2 [sum_i A_i^T (gamma_+,i lp_- + gamma_-,i lp_+); 0] - h [Ghat_k^T nu_k; 0],  Phi(q_k),
 *                A_i = Hess Phi_i(q_k) + (Gbar_i,+ - Gbar_i,- - Hess Phi_i d) d^T / (d.d), d = (q_{k+1} - q_{k-1}) / 2
 *                (so A_i d = Gbar_i,+ - Gbar_i,-; Hess Phi_i alone below the threshold dg_tol on |d|),
 *                Ghat_k = the Gonzalez discrete gradient of Phi over (q_{k-1}, q_{k+1})  (Ghat_k d = dPhi / 2)
 *   end:         q_N = q_T, p_N = p_T + G(q_T)^T alpha, G(q_T) R_p = 0, R the discretization's terminal residual
 *                (its stationarity in x_N; for the exact class R_p = lp - (h/2) M^{-1} lq, the closed form's).
 *
 * Why H^d stays exactly constant: the discretization's own identity holds for its residuals; written with these,
 * the constraint terms leave -(h/2)(gamma_+ - gamma_-).(a_+ + a_-) + (h/2) nu.(Phi(q_{k+1}) - Phi(q_{k-1})) and the
 * products sum_i gamma_+-,i (Gbar_i,+ - Gbar_i,-).lp_-+, which the A_i terms cancel exactly (A_i d = that
 * difference): docs/constrained.md. E - W is exact: Gonzalez states and Gbar dq = dPhi = 0 at the nodes.
 *
 * Jacobians: the discretization's are analytic (its blocks); the constraint terms' (first and second derivatives
 * of Phi through the discrete gradients and the secants) are central differences of those terms alone, step
 * HS_CONS_FD_STEP (1 + |z|): their error, about 1e-10 relative, only slows Newton's last step. */
#include "hsconsimpl.h"
#include "hsdiscimpl.h"

#define HS_CONS_FD_STEP 1e-6

/* The extended scheme's scratch (cs->ext), laid out by Scratch. */
typedef struct {
  double *G1, *G2, *G3;     /* nc x n each: discrete gradients of Phi */
  double *Pa, *Pb, *Hphi;   /* nc, nc, nc n n */
  double *Pk;               /* nc: Phi(q_k) of the last node evaluated (kept for the differences' reuse) */
  double *dg, *hval;        /* nc n: Gbar_i,+ - Gbar_i,- - H_i d; nc n n: the Hessians' nonzeros by rows */
  int    *hoff, *hcol;      /* nc n + 1 row offsets into hval, and the column of each (NodeGeometry) */
  double *m, *dl, *w, *v;   /* n each */
  double *fp, *fm, *add;    /* r each: the constraint terms at z +- e, and at z */
  double *z[3];             /* D each: copies of the points (differences) */
  double *blk;              /* 5 (2n)^2 + 2n: the discretization's Jacobian blocks */
} Scratch;

static Scratch Layout(HsCons *cs)
{
  int     n = cs->n, c = cs->c, d = 2 * n, r = cs->r, D = cs->D;
  double *p = cs->ext;
  Scratch S;
  S.G1 = p, p += c * n;
  S.G2 = p, p += c * n;
  S.G3 = p, p += c * n;
  S.Pa = p, p += c;
  S.Pb = p, p += c;
  S.Hphi = p, p += c * n * n;
  S.Pk = p, p += c;
  S.dg = p, p += c * n;
  S.hval = p, p += c * n * n;
  S.m = p, p += n;
  S.dl = p, p += n;
  S.w = p, p += n;
  S.v = p, p += n;
  S.fp = p, p += r;
  S.fm = p, p += r;
  S.add = p, p += r;
  for (int i = 0; i < 3; i++)
    S.z[i] = p, p += D;
  S.blk = p, p += 5 * d * d + d;
  S.hoff = (int *)p;
  S.hcol = S.hoff + c * n + 1;
  return S;
}

/** The extended scheme's scratch; HS_SUCCESS or HS_ENOMEM. */
int HsConsExtSetup(HsCons *cs)
{
  int n = cs->n, c = cs->c, d = 2 * n, r = cs->r, D = cs->D;
  size_t ints = (size_t)(c * n + 1 + c * n * n), dbl = (ints * sizeof(int) + sizeof(double) - 1) / sizeof(double);
  cs->ext = calloc((size_t)(4 * c * n + 3 * c + 2 * c * n * n + 4 * n + 3 * r + 3 * D + 5 * d * d + d) + dbl,
                   sizeof(double));
  return cs->ext ? HS_SUCCESS : HS_ENOMEM;
}

/* |delta| <= tol (1 + |mid|): the divided differences' fallback (costate/dgrad.c's rule). */
static int Small(int n, const double *a, const double *b, double tol)
{
  double dd = 0, mm = 0;
  for (int i = 0; i < n; i++) {
    double del = b[i] - a[i], mid = 0.5 * (a[i] + b[i]);
    dd += del * del, mm += mid * mid;
  }
  return sqrt(dd) <= tol * (1 + sqrt(mm));
}

/*@ HsConsExtGbar - the Gonzalez discrete gradient of the constraints over (a, b) (nc x n, row i that of Phi_i):
    G(m) + [Phi(b) - Phi(a) - G(m)(b - a)] (b - a)^T / |b - a|^2, m the midpoint; G(m) below the threshold. So
    G (b - a) = Phi(b) - Phi(a) exactly (to round-off). Not collective. @*/
int HsConsExtGbar(HsCons *cs, const double *a, const double *b, double *G)
{
  Scratch S = Layout(cs);
  int     n = cs->n, c = cs->c;
  double  dd = 0;

  for (int l = 0; l < n; l++)
    S.m[l] = 0.5 * (a[l] + b[l]), S.dl[l] = b[l] - a[l], dd += S.dl[l] * S.dl[l];
  if (cs->prob->Phi(S.m, NULL, G, NULL, cs->prob->ctx))
    return HS_EDOM;
  if (Small(n, a, b, cs->disc->dg_tol))
    return HS_SUCCESS;
  if (cs->prob->Phi(a, S.Pa, NULL, NULL, cs->prob->ctx) || cs->prob->Phi(b, S.Pb, NULL, NULL, cs->prob->ctx))
    return HS_EDOM;
  for (int i = 0; i < c; i++) {
    double f = S.Pb[i] - S.Pa[i];
    for (int l = 0; l < n; l++)
      f -= G[i * n + l] * S.dl[l];
    for (int l = 0; l < n; l++)
      G[i * n + l] += f * S.dl[l] / dd;
  }
  return HS_SUCCESS;
}

/* The interval's constraint terms into out (r): h Gbar^T gamma in the momentum rows, Gbar lp (the adjoint). With
 * keep, Gbar is that of the previous call (the same q_j, q_{j+1}: AddedJacobian's columns off q). */
static int AddedInterval(HsCons *cs, const double *z0, const double *z1, double *out, int keep)
{
  Scratch       S = Layout(cs);
  int           n = cs->n, c = cs->c;
  const double *lp = z0 + 3 * n + c, *gam = z0 + 4 * n + c;

  if (!keep)
    HS_CHK(HsConsExtGbar(cs, z0, z1, S.G1));
  memset(out, 0, sizeof(double) * (size_t)cs->r);
  for (int j = 0; j < c; j++)
    for (int l = 0; l < n; l++)
      out[n + l] += cs->h * S.G1[j * n + l] * gam[j], out[2 * n + j] += S.G1[j * n + l] * lp[l];
  return HS_SUCCESS;
}

/* The node's q-dependent parts that AddedNode's multipliers meet: Phi's Hessians (S.Hphi, nc of n x n) by rows
 * without their zeros (S.hoff, S.hcol, S.hval: a constraint's Hessian has a few nonzeros, a director's products),
 * and S.dg = Gbar_i,+ - Gbar_i,- - H_i d (S.G2, S.G1, d = S.v). */
static void NodeGeometry(HsCons *cs, Scratch S)
{
  int n = cs->n, c = cs->c, k = 0;

  for (int i = 0; i < c; i++)
    for (int l = 0; l < n; l++) {
      const double *row = S.Hphi + (i * n + l) * n;
      double        Hd  = 0;
      S.hoff[i * n + l] = k;
      for (int r = 0; r < n; r++) {
        Hd += row[r] * S.v[r];
        if (row[r] != 0)
          S.hcol[k] = r, S.hval[k++] = row[r];
      }
      S.dg[i * n + l] = S.G2[i * n + l] - S.G1[i * n + l] - Hd;
    }
  S.hoff[c * n] = k;
}

/* Node k's constraint terms into out (r): -h/2 sum_i A_i^T (gamma_+,i lp_- + gamma_-,i lp_+) - h Ghat^T nu in the
 * rows of lambda^q (file head), Phi(q_k) in the last nc. With keep, the discrete gradients, Phi(q_k) and its
 * Hessians are those of the previous call (the same q_{k-1}, q_k, q_{k+1}: AddedJacobian's columns off q). */
static int AddedNode(HsCons *cs, const double *zm, const double *z0, const double *zp, double *out, int keep)
{
  Scratch       S = Layout(cs);
  int           n = cs->n, c = cs->c, small;
  double        h = cs->h, dd = 0;
  const double *a = zm + 3 * n + c, *gm = zm + 4 * n + c, *b = z0 + 3 * n + c, *gp = z0 + 4 * n + c, *nu = z0 + 2 * n;

  for (int l = 0; l < n; l++)
    S.v[l] = 0.5 * (zp[l] - zm[l]), dd += S.v[l] * S.v[l]; /* d */
  small = Small(n, zm, zp, cs->disc->dg_tol);
  if (!keep) {
    HS_CHK(HsConsExtGbar(cs, zm, z0, S.G1));
    HS_CHK(HsConsExtGbar(cs, z0, zp, S.G2));
    HS_CHK(HsConsExtGbar(cs, zm, zp, S.G3)); /* Ghat: over the chord */
    if (cs->prob->Phi(z0, S.Pk, NULL, S.Hphi, cs->prob->ctx))
      return HS_EDOM;
    NodeGeometry(cs, S);
  }
  memcpy(out + 2 * n, S.Pk, sizeof(double) * (size_t)c);
  memset(out, 0, sizeof(double) * (size_t)(2 * n));
  for (int i = 0; i < c; i++) {
    double corr = 0;
    for (int l = 0; l < n; l++)
      S.w[l] = gp[i] * a[l] + gm[i] * b[l];
    for (int l = 0; l < n; l++) { /* A_i^T w = H_i w + d ((dGbar_i - H_i d) . w) / (d.d) */
      double Hw = 0;
      for (int e = S.hoff[i * n + l]; e < S.hoff[i * n + l + 1]; e++)
        Hw += S.hval[e] * S.w[S.hcol[e]];
      out[l] -= 0.5 * h * Hw;
      corr += S.dg[i * n + l] * S.w[l];
    }
    for (int l = 0; l < n && !small; l++)
      out[l] -= 0.5 * h * S.v[l] * corr / dd;
    for (int l = 0; l < n; l++)
      out[l] -= h * S.G3[i * n + l] * nu[i];
  }
  return HS_SUCCESS;
}

/* Node k's constraint terms of the direct transcription's KKT conditions (cs->kkt; quadratic Phi, where Gbar of an
 * interval is G at its midpoint, so that d(lp . Gbar^T gamma)/dq_k = 1/2 Hess Phi^T lp gamma of each interval):
 * -h/2 sum_i H_i (gamma_-,i lp_- + gamma_+,i lp_+) - h G(q_k)^T nu in the rows of lambda^q, Phi(q_k) in the last nc
 * (docs/direct.md, "The extended class"); keep as in AddedNode. */
static int AddedNodeKKT(HsCons *cs, const double *zm, const double *z0, const double *zp, double *out, int keep)
{
  Scratch       S = Layout(cs);
  int           n = cs->n, c = cs->c;
  double        h = cs->h;
  const double *a = zm + 3 * n + c, *gm = zm + 4 * n + c, *b = z0 + 3 * n + c, *gp = z0 + 4 * n + c, *nu = z0 + 2 * n;
  (void)zp;

  if (!keep && cs->prob->Phi(z0, S.Pk, S.G3, S.Hphi, cs->prob->ctx))
    return HS_EDOM;
  memcpy(out + 2 * n, S.Pk, sizeof(double) * (size_t)c);
  memset(out, 0, sizeof(double) * (size_t)(2 * n));
  for (int i = 0; i < c; i++) {
    const double *Hi = S.Hphi + i * n * n;
    for (int l = 0; l < n; l++) {
      double Hw = 0;
      for (int r = 0; r < n; r++)
        Hw += Hi[l * n + r] * (gm[i] * a[r] + gp[i] * b[r]);
      out[l] -= 0.5 * h * Hw + h * S.G3[i * n + l] * nu[i];
    }
  }
  return HS_SUCCESS;
}

typedef int (*AddedFn)(HsCons *, const double *, const double *, const double *, double *, int);

static int AddedInt3(HsCons *cs, const double *z0, const double *z1, const double *unused, double *out, int keep)
{
  (void)unused;
  return AddedInterval(cs, z0, z1, out, keep);
}

/* The constraint terms' Jacobian blocks in np points (r x D each, added to J[b]) by central differences. The terms
 * depend on the points' q (their first n components) only through the discrete gradients and Phi's values and
 * Hessians, which the columns off q therefore take from one evaluation at z (keep): the same numbers as evaluating
 * them again, at a fraction of the cost (an n-coordinate q of D unknowns per point). The columns of q come last. */
static int AddedJacobian(HsCons *cs, AddedFn fn, int np, const double *const *z, double *const *J)
{
  Scratch S = Layout(cs);
  int     D = cs->D, r = cs->r, n = cs->n;

  for (int b = 0; b < np; b++)
    memcpy(S.z[b], z[b], sizeof(double) * (size_t)D);
  HS_CHK(fn(cs, S.z[0], S.z[1], S.z[2], S.fp, 0)); /* the q-dependent parts at z */
  for (int pass = 0; pass < 2; pass++)
    for (int b = 0; b < np; b++)
      for (int col = pass ? 0 : n; col < (pass ? n : D); col++) {
        double keep = S.z[b][col], e = HS_CONS_FD_STEP * (1 + fabs(keep));
        S.z[b][col] = keep + e;
        HS_CHK(fn(cs, S.z[0], S.z[1], S.z[2], S.fp, !pass));
        S.z[b][col] = keep - e;
        HS_CHK(fn(cs, S.z[0], S.z[1], S.z[2], S.fm, !pass));
        S.z[b][col] = keep;
        for (int i = 0; i < r; i++)
          J[b][i * D + col] += (S.fp[i] - S.fm[i]) / (2 * e);
      }
  return HS_SUCCESS;
}

/* A (2n x 2n) block of the discretization into rows 0..2n-1 of an r x D block at column c0. */
static void Place(const HsCons *cs, const double *B, double *J, int c0)
{
  int d = 2 * cs->n;
  for (int i = 0; i < d; i++)
    for (int j = 0; j < d; j++)
      J[i * cs->D + c0 + j] += B[i * d + j];
}

/*@ HsConsExtInterval - interval k of the extended scheme (file head), with its blocks. Not collective. @*/
int HsConsExtInterval(HsCons *cs, const double *z0, const double *z1, double *F, double *J0, double *J1)
{
  Scratch S = Layout(cs);
  int     n = cs->n, c = cs->c, d = 2 * n, r = cs->r, D = cs->D;
  double *B = S.blk;

  HS_CHK(HsDiscStateResidual(cs->disc, z0, z1, z0 + 2 * n + c, F));
  HS_CHK(AddedInterval(cs, z0, z1, S.add, 0));
  for (int i = 0; i < r; i++)
    F[i] = (i < d ? F[i] : 0) + S.add[i];
  if (!J0)
    return HS_SUCCESS;
  memset(J0, 0, sizeof(double) * (size_t)(r * D));
  memset(J1, 0, sizeof(double) * (size_t)(r * D));
  HS_CHK(HsDiscStateJacobian(cs->disc, z0, z1, z0 + 2 * n + c, B, B + d * d, B + 2 * d * d));
  Place(cs, B, J0, 0), Place(cs, B + d * d, J1, 0), Place(cs, B + 2 * d * d, J0, 2 * n + c);
  {
    const double *zz[3] = {z0, z1, z1};
    double       *JJ[2] = {J0, J1};
    return AddedJacobian(cs, AddedInt3, 2, zz, JJ);
  }
}

/*@ HsConsExtNode - node k of the extended scheme (file head), with its blocks. Not collective. @*/
int HsConsExtNode(HsCons *cs, int k, const double *zm, const double *z0, const double *zp, double *C, double *Jm,
                  double *J0, double *Jp)
{
  Scratch S = Layout(cs);
  int     n = cs->n, c = cs->c, d = 2 * n, r = cs->r, D = cs->D, o = 2 * n + c;
  double *B = S.blk;

  HS_CHK(HsDiscCostateResidual(cs->disc, k, zm, z0, zp, zm + o, z0 + o, C));
  HS_CHK((cs->kkt ? AddedNodeKKT : AddedNode)(cs, zm, z0, zp, S.add, 0));
  for (int i = 0; i < r; i++)
    C[i] = (i < d ? C[i] : 0) + S.add[i];
  if (!Jm)
    return HS_SUCCESS;
  memset(Jm, 0, sizeof(double) * (size_t)(r * D));
  memset(J0, 0, sizeof(double) * (size_t)(r * D));
  memset(Jp, 0, sizeof(double) * (size_t)(r * D));
  HS_CHK(HsDiscCostateJacobian(cs->disc, k, zm, z0, zp, zm + o, z0 + o, B, B + d * d, B + 2 * d * d, B + 3 * d * d,
                               B + 4 * d * d));
  Place(cs, B, Jm, 0), Place(cs, B + d * d, J0, 0), Place(cs, B + 2 * d * d, Jp, 0);
  Place(cs, B + 3 * d * d, Jm, o), Place(cs, B + 4 * d * d, J0, o);
  {
    const double *zz[3] = {zm, z0, zp};
    double       *JJ[3] = {Jm, J0, Jp};
    return AddedJacobian(cs, cs->kkt ? AddedNodeKKT : AddedNode, 3, zz, JJ);
  }
}

/*@ HsConsExtTerminal - the end condition of the extended scheme: q_N = q_T, p_N = p_T + G(q_T)^T alpha, and
    G(q_T) R_p = 0 with R the discretization's terminal residual (the stationarity of the direct transcription's
    Lagrangian in x_N: its components along the free normal momenta). Not collective. @*/
int HsConsExtTerminal(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm, double *JN)
{
  const HsProblem *P = cs->prob;
  Scratch          S = Layout(cs);
  int              n = cs->n, c = cs->c, d = 2 * n, D = cs->D, o = 2 * n + c;
  double          *R = S.blk + 3 * d * d, *B = S.blk, *G = S.G1;
  const double    *al = zN + 2 * n;

  if (P->Phi(P->xT, NULL, G, NULL, P->ctx))
    return HS_EDOM;
  HS_CHK(HsDiscTerminalResidual(cs->disc, zm, zN, zm + o, R));
  for (int i = 0; i < n; i++) {
    double f = zN[n + i] - P->xT[n + i];
    for (int j = 0; j < c; j++)
      f -= G[j * n + i] * al[j];
    F[i] = zN[i] - P->xT[i], F[n + i] = f;
  }
  for (int j = 0; j < c; j++) {
    double f = 0;
    for (int l = 0; l < n; l++)
      f += G[j * n + l] * R[n + l];
    F[2 * n + j] = f;
  }
  if (!Jm)
    return HS_SUCCESS;
  memset(Jm, 0, sizeof(double) * (size_t)(cs->r * D));
  memset(JN, 0, sizeof(double) * (size_t)(cs->r * D));
  HS_CHK(HsDiscTerminalJacobian(cs->disc, zm, zN, zm + o, B, B + d * d, B + 2 * d * d)); /* Rxm, RxN, Rlm */
  for (int i = 0; i < n; i++) {
    JN[i * D + i] = 1, JN[(n + i) * D + n + i] = 1;
    for (int j = 0; j < c; j++)
      JN[(n + i) * D + 2 * n + j] = -G[j * n + i];
  }
  for (int j = 0; j < c; j++)
    for (int col = 0; col < d; col++) {
      double xm = 0, xN = 0, lm = 0;
      for (int l = 0; l < n; l++) {
        double g = G[j * n + l];
        xm += g * B[(n + l) * d + col], xN += g * B[d * d + (n + l) * d + col], lm += g * B[2 * d * d + (n + l) * d + col];
      }
      Jm[(2 * n + j) * D + col] = xm, JN[(2 * n + j) * D + col] = xN, Jm[(2 * n + j) * D + o + col] = lm;
    }
  return HS_SUCCESS;
}

/*@ HsConsRestEnd - 1 if the problem's end condition is the extended class's rest end (HsConsEndRest): invariants
    declared conserved, or free terminal coordinates with every momentum fixed at 0. Not collective. @*/
int HsConsRestEnd(const HsCons *cs) { return !cs->exact && (cs->prob->ncinv > 0 || cs->prob->cons_end_moves); }

/* The rest end's 2r rows (HsConsEndRest) at (zm, zN); w: scratch of RestScratch doubles. */
static int RestRows(HsCons *cs, const double *zm, const double *zN, double *F, double *w)
{
  const HsProblem *P = cs->prob;
  int              n = cs->n, c = cs->c, r = cs->r, o = 2 * n + c, ni = P->ncinv, qfree = 0;
  const double    *lp = zm + o + n, *gam = zm + o + 2 * n, *al = zN + 2 * n, *be = zN + o, *nu = zN + o + 2 * n;
  double          *R = w, *Ph = R + 2 * n, *G = Ph + c, *H = G + c * n, *g = H + c * n * n, *dg = g + ni * n;
  const double    *qE;
  double           h = cs->h;

  for (int i = 0; i < n; i++)
    qfree |= !P->xT_fixed[i];
  qE = qfree ? zN : P->xT;
  HS_CHK(HsDiscTerminalResidual(cs->disc, zm, zN, zm + o, R));
  if (P->Phi(qE, Ph, G, H, P->ctx) || (ni && P->cinv_grad(qE, g, dg, P->ctx)))
    return HS_EDOM;
  for (int i = 0; i < n; i++) {
    double fq = R[i], fp = zN[n + i] - P->xT[n + i];
    for (int j = 0; j < c; j++) {
      double hl = 0, hr = 0;
      for (int l = 0; l < n; l++)
        hl += H[(j * n + i) * n + l] * lp[l], hr += H[(j * n + i) * n + l] * R[n + l];
      fq += 0.5 * h * gam[j] * hl + al[j] * hr + h * G[j * n + i] * nu[j];
      fp -= G[j * n + i] * al[j];
    }
    for (int l = 0; l < ni; l++) {
      double dr = 0;
      for (int k = 0; k < n; k++)
        dr += dg[(l * n + k) * n + i] * R[n + k];
      fq += be[l] * dr, fp -= be[l] * g[l * n + i];
    }
    F[i] = P->xT_fixed[i] ? zN[i] - P->xT[i] : fq, F[n + i] = fp;
  }
  for (int j = 0; j < c; j++) {
    double f = 0;
    for (int l = 0; l < n; l++)
      f += G[j * n + l] * R[n + l];
    F[2 * n + j] = f;
  }
  for (int i = 0; i < r; i++) /* the second group: point N's slots */
    F[r + i] = zN[o + i];
  for (int l = 0; l < ni; l++) {
    double f = 0;
    for (int k = 0; k < n; k++)
      f += g[l * n + k] * R[n + k];
    F[r + l] = f;
  }
  for (int j = 0; j < c && qfree; j++)
    if (!P->cons_end_moves || P->cons_end_moves[j])
      F[r + 2 * n + j] = Ph[j];
  return HS_SUCCESS;
}

#define RestScratch(n, c, ni) (2 * (n) + (c) + (c) * (n) + (c) * (n) * (n) + (ni) * (n) + (ni) * (n) * (n))

/*@ HsConsEndRest - the end condition at rest of the extended class (docs/constrained.md, "Rest ends and conserved
    quantities"), both groups of point N (2r rows F; r = 2n + nc). With q_E = q_N if some coordinate is free, else q_T,
    R the discretization's terminal residual (its stationarity in x_N) and lambda, gamma of interval N - 1/2:

      q rows:   q_N,i - q_T,i (fixed), or R_q,i + (h/2) sum_j gamma_j (H_j lp)_i + sum_j alpha_j (H_j R_p)_i
                + sum_l beta_l (d_i grad_p I_l) . R_p + h (G(q_N)^T nu_N)_i (free);
      p rows:   p_N - p_T - G(q_E)^T alpha - sum_l beta_l grad_p I_l(q_E);
      nc rows:  G(q_E) R_p;
      second group (point N's slots): beta (the first ncinv of the lq slot) by grad_p I_l(q_E) . R_p = 0, nu_N (the
                gamma slot) by Phi_j(q_N) = 0 for each constraint that moves a free coordinate, the rest 0.

    Blocks in z_{N-1} and z_N of each group (Jm0, JN0, Jm1, JN1; r x D; NULL: none) by central differences of these
    rows, step HS_CONS_FD_STEP (1 + |z|). Not collective. HS_SUCCESS, HS_EDOM, HS_ENOMEM. @*/
int HsConsEndRest(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm0, double *JN0, double *Jm1,
                  double *JN1)
{
  int     n = cs->n, c = cs->c, r = cs->r, D = cs->D, ni = cs->prob->ncinv, st;
  double *w = malloc(sizeof(double) * (size_t)(RestScratch(n, c, ni) + 4 * r + 2 * D)), *fp, *fm, *z[2];

  if (!w)
    return HS_ENOMEM;
  fp = w + RestScratch(n, c, ni), fm = fp + 2 * r, z[0] = fm + 2 * r, z[1] = z[0] + D;
  st = RestRows(cs, zm, zN, F, w);
  if (!st && Jm0) {
    double *J[2][2] = {{Jm0, JN0}, {Jm1, JN1}};
    memcpy(z[0], zm, sizeof(double) * (size_t)D), memcpy(z[1], zN, sizeof(double) * (size_t)D);
    for (int b = 0; b < 2 && !st; b++)
      for (int col = 0; col < D && !st; col++) {
        double keep = z[b][col], e = HS_CONS_FD_STEP * (1 + fabs(keep));
        z[b][col] = keep + e, st = RestRows(cs, z[0], z[1], fp, w);
        z[b][col] = keep - e, st = st ? st : RestRows(cs, z[0], z[1], fm, w);
        z[b][col] = keep;
        for (int i = 0; i < 2 * r && !st; i++)
          J[i / r][b][(i % r) * D + col] = (fp[i] - fm[i]) / (2 * e);
      }
  }
  free(w);
  return st;
}
