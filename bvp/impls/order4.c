/* hamshoot: the transcription of the fourth-order conserving scheme (-hs_scheme conserving4, docs/theory.md
 * section 8; costate/hsorder4.h): the triple jump of the Gonzalez discrete gradient method for the whole Pontryagin
 * system z' = S grad H(z), z = (x, lambda). A 1-D DMDA of N+1 time points with D = 12n unknowns each: point k holds
 * z_k (4n: x_k and the node costate lambda_k) and the stage nodes z_{k,1}, z_{k,2} of interval k (4n each; dummies,
 * fixed to 0, at point N). Interval k's three substeps z_k -> z_{k,1} -> z_{k,2} -> z_{k+1} (fractions gamma1,
 * gamma2, gamma1 of h) give 12n equations; with the 2n initial and 2n terminal conditions they are spread so that
 * every point has D rows and the Jacobian couples only neighbouring points (stencil width 1, banded per point):
 *   rows [0, 2n)    k = 0: x_0 - x0;  k > 0: the lambda-part of substep 3 of interval k-1 (z_{k-1,2}, z_k)
 *   rows [2n, 6n)   k < N: substep 1;  k = N: rows [2n, 4n) the terminal conditions, the rest 0 = z_{N,1}, z_{N,2}
 *   rows [6n, 10n)  k < N: substep 2
 *   rows [10n, 12n) k < N: the x-part of substep 3 (z_{k,2}, z_{k+1})
 * Xnodes holds (x_k, lambda_k): node costates, not the interval costates of the second-order schemes. The
 * diagnostics (Diagnostics) take J^d, H at every node and stage node and E - W from the per-point values that the
 * postsolve gathers. A free final time takes point N's first stage slot (component 4n) and its row (FinalTimeRows);
 * with T in the problem's data that row is dense (the integral of dH/dT over every substep, TDataPass) and, as with a
 * terminal state that moves with T, T's column is a difference of residuals (TFlags).
 * Holonomic constraints (nc of them, docs/theory.md section 8.1) add 6nc unknowns a point, the multipliers kappa of
 * interval k's three substeps (2nc each, from 12n; point N: the end's 2nc extra unknowns at 12n + 4nc, alpha, the
 * free normal part of p_N, and a dummy, or with free momenta beta2, beta1, HsO4ConsTerminal; the rest dummies), which
 * enter the substep rows above, and 6nc rows:
 *   rows [12n, 12n+4nc)      k < N: g(z_{k,1}), g(z_{k,2}), g(z) = (Phi(q), G(q) lambda_p);  k = N: 0 = dummies
 *   rows [12n+4nc, 12n+6nc)  0 < k < N: g(z_k);  k = 0: G lambda_p and the costates' hidden constraint at z_0;
 *                            k = N: G(q_N) lambda_p, then Phi(q_N) with free coordinates, else 0 = the dummy
 *                            (Phi(q_N) = 0 follows from q_N = q_T)
 * and point N's terminal rows become HsO4ConsTerminal's (fixed ends: q_N - q_T, p_N - p_T - G(q_T)^T alpha). With
 * 'conserved:' (docs/theory.md section 8.1, "The rest end with conserved quantities") the end's ncinv multipliers
 * gamma take point N's slots [8n, 8n + ncinv), those of the dummy stage node z_{N,2} (4n >= n >= ncinv, the file
 * reader's bound; clear of a free T's slot 4n), and the invariants' rows c_l . lambda_p the dummies' rows there.
 * HsO4Create says what it refuses. */
#include "order4impl.h"

/* Values per point: H at z_k, z_{k,1}, z_{k,2}; interval k's part of J^d and of the work; the exact changes Dt of H
   over its three substeps (HsO4SubstepCost; 0 for an autonomous ell). */
#define O4_VALS 8
#define O4_W1(q, c2) (2 * (q) * (q) + (q) + (q) * (c2)) /* a substep's Jacobian blocks, residual, kappa block */
#define O4_W(q, c2) (2 * O4_W1(q, c2) + 1)              /* PointEquations' scratch: those, a copy of them, its tag */

/** HsOrder4StageTime - the time of stage j (0: the node) of interval k: t_k, t_k + gamma1 h, t_k + (1 - gamma1) h
 *  (T/N exactly at N). */
PetscReal HsOrder4StageTime(HsSolver s, PetscInt k, int j)
{
  PetscReal off = j == 0 ? 0 : j == 1 ? HS_O4_GAMMA1 : 1 - HS_O4_GAMMA1;
  return s->prob->T * ((PetscReal)k + off) / (PetscReal)s->N;
}

#define StageTime HsOrder4StageTime

/* A cold start of controls that enter nonlinearly from the default guess (lambda = 0), where H has no strict maximum
   in u at a node (no control cost, or one not strictly convex), solves
   with eps/2 |u|^2 added to the control cost for eps = HS_O4_REG0, HS_O4_REG0 HS_O4_REG_FACTOR, ... down to
   HS_O4_REG_LAST (RegularizedStart), then with eps = 0 (docs/controls.md). */
#define HS_O4_REG0 1.0
#define HS_O4_REG_FACTOR 0.1
#define HS_O4_REG_LAST 1e-4

/* How a free T enters the Jacobian's pattern and values (TFlags): O4_FT its column and row; O4_FT_X0 x0(T), so the
   rows x_0 - x0(T) get T's column; O4_FT_DENSE T in the data, so T's row is dense (every node and stage node of
   the integral of dH/dT, lambda_0 of x0(T)); O4_FT_FDCOL T's column by central differences of the residual
   (HsSolverFinalTimeColumn): T in the data or a terminal state that moves with T. */
#define O4_FT 1
#define O4_FT_X0 2
#define O4_FT_DENSE 4
#define O4_FT_FDCOL 8
static int TFlags(HsSolver s)
{
  const HsProblem *P = s->prob;
  if (!P->free_T)
    return 0;
  return O4_FT | (P->data_T && P->x0_T ? O4_FT_X0 : 0) | (P->data_T ? O4_FT_DENSE : 0) |
         (P->data_T || P->xT_T ? O4_FT_FDCOL : 0);
}

/* A free T in the problem's data: the T row's part beyond z_N (docs/theory.md section 8, "T in the data"), over the
 * local intervals k in [xs, min(xe, N)): *sum += sum of the three substeps' c h dH/dT(zbar), zbar = (a + b)/2 (the
 * symmetric midpoint rule with which J^d is carried along: order 4 composed), and on the owner of point 0
 * lambda_0^T dx0/dT; with G (the global layout, (N + 1) D) their gradient added at the substeps' a and b (1/2 c h
 * grad dH/dT(zbar) each) and at lambda_0. w: 2 (4n) scratch. */
static int TDataPass(HsSolver s, const PetscScalar **x, PetscInt xs, PetscInt xe, PetscReal *sum, PetscReal *G,
                     PetscReal *w)
{
  HsOrder4 *o = s->data;
  PetscInt  n = s->prob->n, q = 4 * n, D = o->D, N = s->N;
  PetscReal h = s->prob->T / (PetscReal)N, HT, *zb = w, *g = w + q;
  int       st;

  for (PetscInt k = xs; k < PetscMin(xe, N); k++)
    for (int j = 0; j < 3; j++) {
      const PetscScalar *a = x[k] + j * q, *b = j < 2 ? x[k] + (j + 1) * q : x[k + 1];
      PetscInt           ia = k * D + j * q, ib = j < 2 ? ia + q : (k + 1) * D;
      PetscReal          c = HsO4Fraction(j) * h;
      for (PetscInt i = 0; i < q; i++)
        zb[i] = 0.5 * (a[i] + b[i]);
      if ((st = HsO4HamiltonianT(o->o4, zb, &HT)))
        return st;
      *sum += c * HT;
      if (!G)
        continue;
      if ((st = HsO4HamiltonianTGradient(o->o4, zb, g)))
        return st;
      for (PetscInt i = 0; i < q; i++)
        G[ia + i] += 0.5 * c * g[i], G[ib + i] += 0.5 * c * g[i];
    }
  for (PetscInt i = 0; xs == 0 && s->prob->x0_T && i < 2 * n; i++) { /* nu_0 = -lambda_0 */
    *sum += x[0][2 * n + i] * s->prob->x0_T[i];
    if (G)
      G[2 * n + i] += s->prob->x0_T[i];
  }
  return HS_SUCCESS;
}

/* A free final time's rows at point N (component 4n, the T slot; docs/free-final-time.md): H(z_N) = d phi/dT, H being
 * constant (the condition (1/N) sum H^d = d phi/dT of the second-order transcription, here at one node), or T = T_hold
 * while a cold start holds it; with J (block of point N) its gradient in z_N and T. Tc: d/dT of the free terminal
 * rows (d grad phi/dT). A terminal state that moves with T subtracts sum nu_i dx_T,i/dT (HsO4TerminalT), T in the
 * data adds o->Tsum (TDataPass; docs/theory.md section 8, "T in the data"); T's own entry and column then come from
 * differences (FormJacobian). g: 8n scratch. */
static int FinalTimeRows(HsSolver s, const PetscScalar *xN, PetscScalar *f, PetscScalar *J, PetscScalar *Tc,
                         PetscReal *g)
{
  HsOrder4 *o = s->data;
  PetscInt  n = s->prob->n, q = 4 * n, D = o->D;
  PetscReal H, fT, fTT, vT, *gT = g + 2 * n;
  int       st;

  if (s->hold_T) {
    f[q] = xN[q] - s->T_hold;
    if (J)
      J[q * D + q] = 1;
    return HS_SUCCESS;
  }
  if ((st = HsO4HamiltonianGradient(o->o4, s->prob->T, xN, &H, g)))
    return st;
  if ((st = HsDiscTerminalCostT(s->disc, xN, &fT, NULL, NULL)))
    return st;
  if ((st = HsO4TerminalT(o->o4, xN, &vT, J ? g + q : NULL)))
    return st;
  f[q] = H - fT - vT + (s->prob->data_T ? o->Tsum : 0);
  if (!J)
    return HS_SUCCESS;
  for (PetscInt c = 0; c < q; c++)
    J[q * D + c] = g[c];
  if ((st = HsDiscTerminalCostT(s->disc, xN, &fT, gT, &fTT))) /* after H's gradient: gT overlaps its lambda part */
    return st;
  for (PetscInt c = 0; c < 2 * n; c++)
    J[q * D + c] -= gT[c];
  for (PetscInt c = 0; c < q; c++)
    J[q * D + c] -= g[q + c];
  J[q * D + q] = -fTT;
  for (PetscInt r = 0; r < 2 * n && Tc; r++) /* free terminal rows lambda_i + d phi/dx_i: d/dT is d^2 phi/dx_i dT */
    Tc[2 * n + r] = s->prob->xT_fixed[r] ? 0 : gT[r];
  return HS_SUCCESS;
}

/* Holonomic constraints (docs/theory.md section 8.1): point k's 2nc x 3 constraint rows at 12n.. (the file head's
 * table) into f and (J not NULL) J1, the block of point k's columns: g(z_{k,1}), g(z_{k,2}), then g(z_k) (k = 0: the
 * start rows HsO4ConsStart; k = N: G(q_N) lambda_p only, Phi(q_N) = 0 following from q_N = q_T, and an identity row).
 * Point N's other stage slots are dummies (their identity rows are set by the caller). w: 2nc (1 + 4n) scratch. */
static int ConsRows(HsSolver s, const PetscScalar **x, PetscInt k, PetscScalar *f, PetscScalar *J1, PetscReal *w)
{
  HsOrder4  *o = s->data;
  PetscInt   n = s->prob->n, q = 4 * n, D = o->D, nc = s->prob->nc, c2 = 2 * nc, K0 = 3 * q, N = s->N;
  PetscReal *g = w, *gz = w + c2;
  int        fq = HsO4ConsFreeCoordinates(o->o4), st; /* free coordinates: Phi(q_N) = 0 is a row */

  for (int j = k < N ? 0 : 2; j < 3; j++) { /* j = 0, 1: stage j + 1; j = 2: the node */
    PetscInt zo = j < 2 ? (j + 1) * q : 0, r0 = K0 + j * c2;
    st = k == 0 && j == 2 ? HsO4ConsStart(o->o4, x[0], g, gz) : HsO4Cons(o->o4, x[k] + zo, g, gz);
    if (st)
      return st;
    for (PetscInt r = 0; r < c2; r++) {
      PetscInt from = k < N ? r : r < nc ? nc + r : fq ? r - nc : -1; /* point N: G lambda_p, then Phi or a dummy */
      int      implied = 0;
      if (k == N && from >= 0 && r >= nc && (st = HsO4ConsImpliedAtEnd(o->o4, x[N], (int)(r - nc), &implied)))
        return st;
      if (implied) /* Phi_j(q_N) = 0 from the fixed coordinates: beta1_j = 0 in its place (its own slot) */
        from = -1;
      f[r0 + r]     = from >= 0 ? g[from] : x[k][r0 + r];
      for (PetscInt c = 0; J1 && from >= 0 && c < q; c++)
        J1[(r0 + r) * D + zo + c] = gz[from * q + c];
      if (J1 && from < 0)
        J1[(r0 + r) * D + r0 + r] = 1;
    }
  }
  return HS_SUCCESS;
}

/* Point N's 2n terminal rows at 2n.. into f and (J1 not NULL) J1: HsO4Terminal, or with constraints HsO4ConsTerminal
 * with alpha in point N's slots 12n + 4nc.. (the free normal part of p_N), and with 'conserved:' gamma and the
 * invariants' rows at O4_GAM. w: O4_W1 scratch (Rz 2n x 4n and R 2n at w, w + 2 q^2; Ra 2n x 2nc, Rg 2n x ncinv, Iv
 * ncinv and Iz ncinv x 4n in the q^2 from w + q^2: 4n nc + 6n ncinv + ncinv <= 16 n^2 as nc, ncinv <= n). */
static int TerminalRows(HsSolver s, const PetscScalar *xN, PetscScalar *f, PetscScalar *J1, PetscReal *w)
{
  HsOrder4  *o = s->data;
  PetscInt   n = s->prob->n, q = 4 * n, D = o->D, nc = s->prob->nc, ka = 3 * q + 4 * nc;
  PetscReal *Rz = w, *Ra = w + q * q, *R = w + 2 * q * q;
  int        st =
      nc ? HsO4ConsTerminal(o->o4, xN, xN + ka, R, J1 ? Rz : NULL, Ra) : HsO4Terminal(o->o4, xN, R, J1 ? Rz : NULL);

  if (st)
    return st;
  if (nc && s->prob->ncinv) { /* 'conserved:': gamma at O4_GAM (z_{N,2}'s dummies) */
    PetscInt   ni = s->prob->ncinv, g0 = O4_GAM(q);
    PetscReal *Rg = Ra + 2 * n * 2 * nc, *Iv = Rg + 2 * n * ni, *Iz = Iv + ni;
    if ((st = HsO4ConsInvariantEnd(o->o4, xN, xN + g0, R, J1 ? Rz : NULL, Rg, Iv, Iz)))
      return st;
    for (PetscInt l = 0; l < ni; l++) { /* the invariants' rows replace the dummies' identities (PointEquations) */
      f[g0 + l] = Iv[l];
      for (PetscInt c = 0; J1 && c < q; c++)
        J1[(g0 + l) * D + c] = Iz[l * q + c];
      for (PetscInt r = 0; J1 && r < 2 * n; r++)
        J1[(2 * n + r) * D + g0 + l] = Rg[r * ni + l];
    }
  }
  for (PetscInt r = 0; r < 2 * n; r++) {
    f[2 * n + r] = R[r];
    for (PetscInt c = 0; J1 && c < q; c++)
      J1[(2 * n + r) * D + c] = Rz[r * q + c];
    for (PetscInt c = 0; J1 && c < 2 * nc; c++)
      J1[(2 * n + r) * D + ka + c] = Ra[r * 2 * nc + c];
  }
  return HS_SUCCESS;
}

/* Point k's D equations into f and (J not NULL: 3 blocks D x D, the columns of points k-1, k, k+1, zeroed by the
 * caller) their Jacobian, or (rows not NULL) the Jacobian's rows straight into the CSR values of J's owned part,
 * rows[i] the first of row i's 2q entries: only where every row is a substep's [a | b] in the columns' order (an
 * interior point 0 < k < N, no constraints, no free T, the points k - 1 .. k + 1 owned: DirectRows); with a free T (Tc not NULL) the rows' derivatives in T (Tc, D values): a substep
 * b - a - c (T/N) S gbar gives (F - (b - a)) / T. w: O4_W(4n, 2nc) scratch, the caller's for the points in ascending
 * order, its last value -1 at the first: a substep's Jacobian blocks (and with constraints those in its kappa) and
 * residual, and a copy of interval k's last substep, which point k + 1 needs (its first 2n rows) and so does not
 * evaluate again. */
static int PointEquations(HsSolver s, const PetscScalar **x, PetscInt k, PetscScalar *f, PetscScalar *J[3],
                          PetscScalar *const *rows, PetscScalar *Tc, PetscReal *w)
{
  HsOrder4  *o = s->data;
  PetscInt   n = s->prob->n, q = 4 * n, D = o->D, N = s->N, c2 = 2 * s->prob->nc, K0 = 3 * q, W1 = O4_W1(q, c2);
  PetscReal *Fa = w, *Fb, *F, *Fk, *C = w + W1, *tag = w + 2 * W1;

  if (Tc)
    PetscArrayzero(Tc, D);

  /* substeps: {rows of f, first row of the substep's residual, count, point and offset of a, of b, of kappa, fraction,
   * a's time} */
  struct {
    PetscInt r0, i0, nr, pa, oa, pb, ob, pk, ok;
    double   c, ta;
  } sub[4];
  int ns = 0;
  if (k > 0)
    sub[ns++] = (typeof(sub[0])){
        0, 2 * n, 2 * n, k - 1, 2 * q, k, 0, k - 1, K0 + 2 * c2, HsO4Fraction(2), StageTime(s, k - 1, 2)};
  if (k < N) {
    sub[ns++] = (typeof(sub[0])){2 * n, 0, q, k, 0, k, q, k, K0, HsO4Fraction(0), StageTime(s, k, 0)};
    sub[ns++] = (typeof(sub[0])){6 * n, 0, q, k, q, k, 2 * q, k, K0 + c2, HsO4Fraction(1), StageTime(s, k, 1)};
    sub[ns++] =
        (typeof(sub[0])){10 * n, 0, 2 * n, k, 2 * q, k + 1, 0, k, K0 + 2 * c2, HsO4Fraction(2), StageTime(s, k, 2)};
  }
  for (int j = 0; j < ns; j++) {
    PetscBool          cached = (PetscBool)(j == 0 && k > 0 && *tag == (PetscReal)k); /* point k - 1's last substep */
    const PetscScalar *a = x[sub[j].pa] + sub[j].oa, *b = x[sub[j].pb] + sub[j].ob;
    int                st = cached ? 0
                                   : HsO4Substep(o->o4, sub[j].c, sub[j].ta, a, b, w + 2 * q * q, J || rows ? w : NULL,
                                                 J || rows ? w + q * q : NULL);
    if (!st && !cached && c2)
      st = HsO4SubstepConsTerms(o->o4, sub[j].c, a, b, x[sub[j].pk] + sub[j].ok, w + 2 * q * q, J ? w : NULL,
                                J ? w + q * q : NULL, J ? w + 2 * q * q + q : NULL);
    if (st)
      return st;
    Fa = cached ? C : w, Fb = Fa + q * q, F = Fa + 2 * q * q, Fk = F + q;
    if (j == ns - 1 && k < N) { /* interval k's last substep: point k + 1's first (w is the caller's for all points) */
      PetscArraycpy(C, w, W1);
      *tag = (PetscReal)(k + 1);
    }
    for (PetscInt r = 0; r < sub[j].nr; r++) {
      PetscInt row = sub[j].r0 + r, i = sub[j].i0 + r;
      f[row] = F[i];
      if (Tc)
        Tc[row] = (F[i] - (b[i] - a[i])) / s->prob->T;
      if (rows) { /* [a | b]: a's columns come first (point k - 1's or k's stage before b's) */
        PetscScalar     *ja = rows[row], *jb = ja + q;
        const PetscReal *fa = Fa + i * q, *fb = Fb + i * q;
        for (PetscInt c = 0; c < q; c++)
          ja[c] = fa[c], jb[c] = fb[c];
      } else if (J) { /* the row's pointers once, not per entry (J's stores could alias sub to the compiler) */
        PetscScalar     *ja = J[sub[j].pa - k + 1] + row * D + sub[j].oa, *jb = J[sub[j].pb - k + 1] + row * D + sub[j].ob;
        const PetscReal *fa = Fa + i * q, *fb = Fb + i * q;
        for (PetscInt c = 0; c < q; c++)
          ja[c] += fa[c], jb[c] += fb[c];
      }
      for (PetscInt c = 0; J && c < c2; c++)
        J[sub[j].pk - k + 1][row * D + sub[j].ok + c] += Fk[i * c2 + c];
    }
  }
  if (k == 0)
    for (PetscInt i = 0; i < 2 * n; i++) {
      f[i] = x[0][i] - s->prob->x0[i];
      if (J)
        J[1][i * D + i] = 1;
    }
  if (c2) {
    int st = ConsRows(s, x, k, f, J ? J[1] : NULL, w);
    if (st)
      return st;
  }
  if (k == N) {
    int st;
    for (PetscInt i = q; i < K0 + 2 * c2; i++) { /* the dummies: point N's stage and kappa slots (alpha after them) */
      f[i] = x[N][i];
      if (J)
        J[1][i * D + i] = 1;
    }
    if ((st = TerminalRows(s, x[N], f, J ? J[1] : NULL, w))) /* after: 'conserved:' rows replace dummies' */
      return st;
    for (PetscInt l = 0; J && l < s->prob->ncinv; l++)
      J[1][(O4_GAM(q) + l) * D + O4_GAM(q) + l] = 0;
    if (s->prob->free_T) { /* the T slot's row replaces its identity */
      if (J)
        J[1][q * D + q] = 0;
      /* its 8n scratch from w's residual on: point N, the last, has already used the copy of a substep after it */
      st = FinalTimeRows(s, x[N], f, J ? J[1] : NULL, Tc, w + 2 * q * q);
      if (st)
        return st;
    }
  }
  return HS_SUCCESS;
}

/* A free T: the value in the T slot of point N (on the last rank) to every rank, the problem and the discretization
 * (HsSolverShareFinalTime); *dom for a T outside its range. Collective. */
static PetscErrorCode ShareT(HsSolver s, const PetscScalar **x, PetscInt xs, PetscInt xm, PetscBool *dom)
{
  PetscMPIInt size;
  PetscBool   bad;

  PetscFunctionBeginUser;
  if (!s->prob->free_T)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  PetscCall(HsSolverShareFinalTime(s, size - 1, xs + xm == s->N + 1 ? x[s->N][4 * s->prob->n] : 0, &bad));
  *dom = (PetscBool)(*dom || bad);
  PetscFunctionReturn(0);
}

/* T in the problem's data: o->Tsum, TDataPass over all ranks' intervals (not while a cold start holds T).
 * Collective. */
static PetscErrorCode TDataSum(HsSolver s, const PetscScalar **x, PetscInt xs, PetscInt xm, PetscReal *w,
                               PetscBool *dom)
{
  HsOrder4 *o   = s->data;
  PetscReal sum = 0;

  PetscFunctionBeginUser;
  if (!s->prob->free_T || !s->prob->data_T || s->hold_T)
    PetscFunctionReturn(0);
  if (!*dom)
    HsCallStep(TDataPass(s, x, xs, xs + xm, &sum, NULL, w), dom, "conserving4 free final time (T in the data)", xs);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  o->Tsum = sum;
  PetscFunctionReturn(0);
}

/* F(X) (HsResidualFn). Collective. */
static PetscErrorCode Residual(HsSolver s, Vec X, Vec F, PetscBool *domp)
{
  HsOrder4           *o = s->data;
  Vec                 Xl;
  const PetscScalar **x;
  PetscScalar       **f;
  PetscInt            xs, xm, q = 4 * s->prob->n;
  PetscReal          *w;
  PetscBool           dom = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(O4_W(q, 2 * s->prob->nc), &w));
  w[O4_W(q, 2 * s->prob->nc) - 1] = -1; /* PointEquations' copy of a substep: none yet */
  PetscCall(HsDMGetGhosted(o->da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(DMDAVecGetArrayDOF(o->da, F, &f));
  PetscCall(DMDAGetCorners(o->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(ShareT(s, x, xs, xm, &dom));
  PetscCall(TDataSum(s, x, xs, xm, w, &dom));
  HsO4CacheBegin(o->o4); /* a substep's end point is the next one's start */
  for (PetscInt k = xs; k < xs + xm && !dom; k++) {
    HsCallStep(PointEquations(s, x, k, f[k], NULL, NULL, NULL, w), &dom, "conserving4 equations", k);
    if (dom && HsO4Why(o->o4)[0]) /* controls that enter nonlinearly: no maximum of H in u (docs/controls.md) */
      PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE,
                                     "conserving4: near t = %g (interval %" PetscInt_FMT "): %s "
                                     "(docs/controls.md)",
                                     (double)StageTime(s, PetscMin(k, s->N), 0), k, HsO4Why(o->o4)));
  }
  HsO4CacheEnd(o->o4);
  PetscCall(DMDAVecRestoreArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(DMDAVecRestoreArrayDOF(o->da, F, &f));
  PetscCall(HsDMRestoreGhosted(o->da, X, &Xl));
  PetscCall(PetscFree(w));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dom, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  *domp = dom;
  PetscFunctionReturn(0);
}

/* The columns of row i of point k: at most 3 segments {point, first component, count}, ascending (the file head's
 * rows: a substep couples two 4n blocks and, with nc constraints, its 2nc multipliers; a constraint row its 4n block;
 * the boundary rows one block (point N's terminal rows also alpha), the dummies their own column). */
static PetscInt Segments0(PetscInt N, PetscInt n, PetscInt nc, PetscInt ni, PetscInt k, PetscInt i, PetscBool freeT,
                          PetscInt seg[4][3])
{
  PetscInt q = 4 * n, c2 = 2 * nc, K0 = 3 * q, ns = 0;
#define SEG(p, c, m) (seg[ns][0] = (p), seg[ns][1] = (c), seg[ns][2] = (m), ns++)
  if (i < 2 * n && k == 0)
    return SEG(0, 0, q), ns;
  if (i < 2 * n) {
    SEG(k - 1, 2 * q, q);
    if (nc)
      SEG(k - 1, K0 + 2 * c2, c2);
    return SEG(k, 0, q), ns;
  }
  if (k == N && freeT && i == q) /* T's row: z_N and T (the next column) */
    return SEG(N, 0, q + 1), ns;
  if (k == N && i < q) { /* the terminal rows (and alpha) */
    SEG(N, 0, q);
    if (ni) /* 'conserved:': gamma in z_{N,2}'s dummy slots */
      SEG(N, O4_GAM(q), ni);
    if (nc)
      SEG(N, K0 + 2 * c2, c2);
    return ns;
  }
  if (k == N && i >= O4_GAM(q) && i < O4_GAM(q) + ni) /* the invariants' rows c_l . lambda_p */
    return SEG(N, 0, q), ns;
  if (k == N && i >= K0 + 2 * c2 && i < K0 + 2 * c2 + nc) /* G(q_N) lambda_p */
    return SEG(N, 0, q), ns;
  if (k == N && i >= K0 + 2 * c2) /* Phi(q_N) with free coordinates, else the identity of a dummy: both */
    return SEG(N, 0, q), SEG(N, i, 1), ns;
  if (k == N)
    return SEG(N, i, 1), ns;
  if (i >= K0) /* the constraint rows: g(z_{k,1}), g(z_{k,2}), g(z_k) */
    return SEG(k, i < K0 + c2 ? q : i < K0 + 2 * c2 ? 2 * q : 0, q), ns;
  SEG(k, i < 6 * n ? 0 : i < 10 * n ? q : 2 * q, i < 10 * n ? 2 * q : q);
  if (nc)
    SEG(k, i < 6 * n ? K0 : i < 10 * n ? K0 + c2 : K0 + 2 * c2, c2);
  if (i >= 10 * n)
    SEG(k + 1, 0, q);
  return ns;
#undef SEG
}

/* ... and with a free T its column (point N, component 4n: after every other column of these rows) where the row
 * depends on T: the substeps' rows, the terminal rows and with x0(T) the initial ones (ft: TFlags). T's row with T in
 * the data is dense (DenseCount), not these segments. */
static PetscInt Segments(PetscInt N, PetscInt n, PetscInt nc, PetscInt ni, PetscInt k, PetscInt i, int ft,
                         PetscInt seg[4][3])
{
  PetscInt ns = Segments0(N, n, nc, ni, k, i, (PetscBool)(ft & O4_FT), seg);
  if ((ft & O4_FT) && !(k == 0 && i < 2 * n && !(ft & O4_FT_X0)) && !(k == N && i >= 4 * n))
    seg[ns][0] = N, seg[ns][1] = 4 * n, seg[ns][2] = 1, ns++;
  return ns;
}

/* Whether row i of point k is T's dense row (T in the data), whose columns are every point's nodes and stage nodes
 * (3 * 4n; point N: z_N and T, DenseCount). */
static PetscBool DenseRow(HsSolver s, PetscInt k, PetscInt i)
{
  return (PetscBool)((TFlags(s) & O4_FT_DENSE) && k == s->N && i == 4 * s->prob->n);
}
static PetscInt DenseCount(HsSolver s, PetscInt p) { return p < s->N ? 12 * s->prob->n : 4 * s->prob->n + 1; }

/* The Jacobian with exactly the rows' segments (Segments; the DMDA's whole D x 3D blocks would widen the band the
 * banded LU factors about fivefold each way), zero: the local rows' CSR arrays split into the owned columns' part
 * (local indices) and the others' (global), J owning them. Collective. */
static PetscErrorCode CreateJacobian(HsSolver s, DM da, PetscInt D, Mat *J)
{
  PetscInt xs, xm, m, cs, seg[4][3], ns, *ia, *ja, *oi, *oj;
  MPI_Comm comm = PetscObjectComm((PetscObject)da);

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, NULL, NULL, &xm, NULL, NULL));
  m = xm * D, cs = xs * D;
  PetscCall(PetscCalloc1(m + 1, &ia));
  PetscCall(PetscCalloc1(m + 1, &oi));
  for (PetscInt pass = 0; pass < 2; pass++) { /* the rows' lengths, then their columns */
    if (pass) {
      PetscCall(PetscMalloc1(ia[m] + 1, &ja));
      PetscCall(PetscMalloc1(oi[m] + 1, &oj));
    }
    for (PetscInt k = xs, r = 0; k < xs + xm; k++)
      for (PetscInt i = 0; i < D; i++, r++) {
        PetscInt  d = 0, o = 0;
        PetscBool dense = DenseRow(s, k, i);
        ns = dense ? s->N + 1 : Segments(s->N, s->prob->n, s->prob->nc, s->prob->ncinv, k, i, TFlags(s), seg);
        for (PetscInt g = 0; g < ns; g++)
          for (PetscInt e = 0, pt = dense ? g : seg[g][0]; e < (dense ? DenseCount(s, g) : seg[g][2]); e++) {
            PetscInt col = pt * D + (dense ? 0 : seg[g][1]) + e;
            if (pt >= xs && pt < xs + xm) {
              if (pass)
                ja[ia[r] + d] = col - cs;
              d++;
            } else {
              if (pass)
                oj[oi[r] + o] = col;
              o++;
            }
          }
        if (!pass)
          ia[r + 1] = d, oi[r + 1] = o;
      }
    for (PetscInt r = 0; !pass && r < m; r++) /* lengths to offsets */
      ia[r + 1] += ia[r], oi[r + 1] += oi[r];
  }
  PetscCall(HsAIJCreateFromParts(comm, m, ia, ja, oi, oj, J)); /* J owns the arrays */
  PetscFunctionReturn(0);
}

/* Point k's rows written in place into J's CSR parts (CreateJacobian's pattern), from the blocks J[3] (the columns of
 * points k-1, k, k+1) and a free T's column Tc; the entries read are zeroed (PointEquations writes only entries of the
 * pattern, so the blocks are zero again after). */
static PetscErrorCode WriteRows(HsSolver s, HsAIJParts *P, PetscInt k, PetscInt xs, PetscInt xe, PetscInt D,
                                PetscScalar *const J[3], const PetscScalar *Tc, const PetscScalar *Trow)
{
  PetscInt seg[4][3], ns;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < D; i++) {
    PetscInt     row = (k - xs) * D + i, nd = 0, no = 0;
    PetscScalar *d = P->wa[0] + P->ia[0][row], *o = P->part[1] ? P->wa[1] + P->ia[1][row] : NULL;
    ns = DenseRow(s, k, i) ? 0 : Segments(s->N, s->prob->n, s->prob->nc, s->prob->ncinv, k, i, TFlags(s), seg);
    for (PetscInt pt = 0; DenseRow(s, k, i) && pt <= s->N; pt++) { /* T's dense row, whole in Trow */
      PetscBool own = (PetscBool)(pt >= xs && pt < xe);
      PetscCall(PetscArraycpy(own ? d + nd : o + no, Trow + pt * D, DenseCount(s, pt)));
      *(own ? &nd : &no) += DenseCount(s, pt);
    }
    for (PetscInt g = 0; g < ns; g++) {
      PetscBool own = (PetscBool)(seg[g][0] >= xs && seg[g][0] < xe);
      if (s->prob->free_T && g == ns - 1 && seg[g][1] == 4 * s->prob->n && seg[g][2] == 1) /* T's column */
        (own ? d : o)[own ? nd : no] = Tc[i];
      else { /* and the block entries zero again for the next point (FormJacobian zeroes them once) */
        PetscCall(PetscArraycpy(own ? d + nd : o + no, J[seg[g][0] - k + 1] + i * D + seg[g][1], seg[g][2]));
        PetscCall(PetscArrayzero(J[seg[g][0] - k + 1] + i * D + seg[g][1], seg[g][2]));
      }
      *(own ? &nd : &no) += seg[g][2];
    }
    PetscCheck(nd == P->ia[0][row + 1] - P->ia[0][row] && no == (P->part[1] ? P->ia[1][row + 1] - P->ia[1][row] : 0),
               PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "row %" PetscInt_FMT " of point %" PetscInt_FMT " does not fit the Jacobian's pattern", i, k);
  }
  PetscFunctionReturn(0);
}

/* Whether point k's rows can be written straight into J's CSR values (*direct; their first entries into rows): an
 * interior point (0 < k < N) whose rows are all substeps' [a | b], 2q entries each in the owned part (no constraints,
 * no free T, points k - 1 .. k + 1 owned: CreateJacobian's pattern then holds a's q columns and b's q, in this order).
 * The block path (PointEquations into 3 D x D blocks, WriteRows copying each row's segments out and zeroing them)
 * cost kepler at N = 124 (n = 3) 5.8M of its 68M instructions a solve, for copies of 12 and 24 entries. Not
 * collective. */
static PetscErrorCode DirectRows(HsSolver s, HsAIJParts *P, PetscInt k, PetscInt xs, PetscInt xe, PetscInt D,
                                 PetscScalar **rows, PetscBool *direct)
{
  PetscInt q = 4 * s->prob->n;

  PetscFunctionBeginUser;
  *direct = (PetscBool)(!s->prob->nc && !s->prob->free_T && k > 0 && k < s->N && k - 1 >= xs && k + 1 < xe);
  for (PetscInt i = 0; i < D && *direct; i++) {
    PetscInt row = (k - xs) * D + i;
    PetscCheck(P->ia[0][row + 1] - P->ia[0][row] == 2 * q && (!P->part[1] || P->ia[1][row + 1] == P->ia[1][row]),
               PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "row %" PetscInt_FMT " of point %" PetscInt_FMT " does not fit the Jacobian's pattern", i, k);
    rows[i] = P->wa[0] + P->ia[0][row];
  }
  PetscFunctionReturn(0);
}

/* T in the data: T's dense row, Trow ((N + 1) D, the global layout, on the last rank): the gradient of o->Tsum
 * (TDataPass) summed from every rank's intervals; z_N's and T's entries are added by FDColumn. Collective. */
static PetscErrorCode TRowGlobal(HsSolver s, const PetscScalar **x, PetscInt xs, PetscInt xm, PetscScalar *Trow,
                                 PetscReal *w, PetscBool *dom)
{
  PetscInt    L   = (s->N + 1) * ((HsOrder4 *)s->data)->D;
  PetscReal   sum = 0, *G;
  PetscMPIInt size, rank;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  if (!(TFlags(s) & O4_FT_DENSE))
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscCalloc1(L, &G));
  if (!*dom && !s->hold_T) /* held: T's row is T - T_hold */
    HsCallStep(TDataPass(s, x, xs, xs + xm, &sum, G, w), dom, "conserving4 free final time (T in the data)", xs);
  PetscCallMPI(MPI_Reduce(G, rank == size - 1 ? Trow : NULL, (PetscMPIInt)L, MPIU_REAL, MPIU_SUM, size - 1, comm));
  PetscCall(PetscFree(G));
  PetscFunctionReturn(0);
}

/* T's column from the differences (HsSolverFinalTimeColumn; c: point k's part) into Tc, and at point N T's own entry:
 * into J1 (block of point N), or with T's dense row into Trow with z_N's entries, which it takes from J1 (zeroing
 * them, as WriteRows would). Not collective. */
static PetscErrorCode FDColumn(HsSolver s, PetscInt k, const PetscScalar *c, PetscScalar *Tc, PetscScalar *J1,
                               PetscScalar *Trow)
{
  PetscInt D = ((HsOrder4 *)s->data)->D, q = 4 * s->prob->n;

  PetscFunctionBeginUser;
  PetscCall(PetscArraycpy(Tc, c, D));
  if (k < s->N)
    PetscFunctionReturn(0);
  J1[q * D + q] = c[q];
  if (!DenseRow(s, k, q))
    PetscFunctionReturn(0);
  for (PetscInt j = 0; j <= q; j++)
    Trow[s->N * D + j] += J1[q * D + j], J1[q * D + j] = 0;
  PetscFunctionReturn(0);
}

/* The analytic Jacobian, point by point, written in place (every entry of the pattern: no assembly). */
static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx)
{
  HsSolver            s = ctx;
  HsOrder4           *o = s->data;
  Vec                 Xl;
  const PetscScalar **x;
  PetscInt            xs, xm, D = o->D, q = 4 * s->prob->n;
  PetscScalar        *blk, *J[3], *f, *w, *Tc, **rows, *Trow;
  const PetscScalar **c   = NULL;
  PetscBool           dom = PETSC_FALSE;
  HsAIJParts          P;
  Vec                 C  = NULL;
  int                 ft = TFlags(s);

  PetscFunctionBeginUser;
  PetscCall(MatSetUnfactored(Pm));
  if (ft & O4_FT_FDCOL) { /* before this evaluation's own arrays: the column evaluates the residual twice */
    PetscCall(VecDuplicate(X, &C));
    PetscCall(HsSolverFinalTimeColumn(s, X, s->iT, Residual, C, &dom));
    PetscCall(DMDAVecGetArrayDOFRead(o->da, C, (void *)&c));
  }
  PetscCall(PetscCalloc1(ft & O4_FT_DENSE ? (s->N + 1) * D : 1, &Trow));
  PetscCall(PetscMalloc5(3 * D * D, &blk, D, &f, O4_W(q, 2 * s->prob->nc), &w, D, &Tc, D, &rows));
  w[O4_W(q, 2 * s->prob->nc) - 1] = -1; /* PointEquations' copy of a substep: none yet */
  for (PetscInt b = 0; b < 3; b++)
    J[b] = blk + b * D * D;
  PetscCall(HsDMGetGhosted(o->da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(DMDAGetCorners(o->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(HsAIJPartsGet(Pm, PETSC_TRUE, &P));
  PetscCheck(P.ok, PetscObjectComm((PetscObject)Pm), PETSC_ERR_PLIB, "the Jacobian's rows are not available in place");
  PetscCall(ShareT(s, x, xs, xm, &dom));
  PetscCall(TDataSum(s, x, xs, xm, w, &dom));
  PetscCall(TRowGlobal(s, x, xs, xm, Trow, w, &dom));
  HsO4CacheBegin(o->o4);                     /* a substep's end point is the next one's start */
  PetscCall(PetscArrayzero(blk, 3 * D * D)); /* once: WriteRows zeroes what it read */
  for (PetscInt k = xs; k < xs + xm && !dom; k++) {
    PetscBool direct;
    PetscCall(DirectRows(s, &P, k, xs, xs + xm, D, rows, &direct));
    HsCallStep(PointEquations(s, x, k, f, direct ? NULL : J, direct ? rows : NULL, s->prob->free_T ? Tc : NULL, w),
               &dom, "conserving4 Jacobian", k);
    if (!dom && (ft & O4_FT_FDCOL)) /* T's column (and its own entry) from the differences */
      PetscCall(FDColumn(s, k, c[k], Tc, J[1], Trow));
    if (!dom && !direct)
      PetscCall(WriteRows(s, &P, k, xs, xs + xm, D, J, Tc, Trow));
  }
  HsO4CacheEnd(o->o4);
  if (dom) /* rows left unset: zero rows, which every factorization finds singular */
    for (PetscInt qq = 0; qq < 2 && P.part[qq]; qq++)
      PetscCall(PetscArrayzero(P.wa[qq], P.ia[qq][xm * D]));
  PetscCall(HsAIJPartsRestore(&P));
  PetscCall(PetscObjectStateIncrease((PetscObject)Pm));
  PetscCall(DMDAVecRestoreArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(HsDMRestoreGhosted(o->da, X, &Xl));
  PetscCall(PetscFree5(blk, f, w, Tc, rows));
  PetscCall(PetscFree(Trow));
  if (C) {
    PetscCall(DMDAVecRestoreArrayDOFRead(o->da, C, (void *)&c));
    PetscCall(VecDestroy(&C));
  }
  if (Jm != Pm) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dom, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  if (dom)
    PetscCall(SNESSetJacobianDomainError(snes));
  PetscFunctionReturn(0);
}

/* Node k's guess z_k = (x_k, lambda_k) from HsSolverGuessRow (lambda_{k+1/2} taken as lambda_k unless the guess has
 * node costates); with a free T row N's lambda slot holds T's start, so lambda_N is row N - 1's (the interpolated
 * lambda_N of a guess with node costates). */
static PetscErrorCode GuessNode(HsSolver s, PetscInt k, PetscReal *z)
{
  PetscInt   dim = 2 * s->prob->n;
  PetscReal *tmp;

  PetscFunctionBeginUser;
  PetscCall(HsSolverGuessRow(s, k, z));
  if (s->prob->free_T && k == s->N && k > 0) {
    PetscCall(PetscMalloc1(2 * dim, &tmp));
    if (s->guess && s->guess_nodal)
      PetscCall(HsSolverGuessRowAt(s, (PetscReal)k, tmp));
    else
      PetscCall(HsSolverGuessRow(s, k - 1, tmp));
    PetscCall(PetscArraycpy(z + dim, tmp + dim, dim));
    PetscCall(PetscFree(tmp));
  }
  PetscFunctionReturn(0);
}

/* A cold start of controls that enter nonlinearly from the default guess where H has no strict maximum in u at some
 * node (lambda = 0 with no control cost): X through the regularized problems (eps/2
 * |u|^2 added to the control cost; a free T held in the first of them, as HsSolverSolveNewton holds it), each from the
 * last; the solve at eps = 0 follows (without holding T), from the last eps that converged if a later one failed
 * (initial_guess in summary.json says so). Collective. */
static PetscErrorCode RegularizedStart(HsSolver s)
{
  HsOrder4 *o    = s->data;
  PetscInt  its  = 0;
  PetscReal last = 0, failed = 0;
  Vec       Xbest;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(s->X, &Xbest));
  PetscCall(VecCopy(s->X, Xbest));
  for (PetscReal eps = HS_O4_REG0; eps >= HS_O4_REG_LAST * (1 - 1e-9); eps *= HS_O4_REG_FACTOR) {
    HsO4SetControlRegularization(o->o4, eps);
    PetscCall(HsSolverSolveNewton(s));
    its += s->res.newton_iterations;
    PetscCall(PetscInfo(s->snes,
                        "conserving4: control regularization eps = %g: %s after %" PetscInt_FMT " Newton iterations\n",
                        (double)eps, SNESConvergedReasons[s->res.reason], s->res.newton_iterations));
    if (s->res.reason <= 0 || s->res.tolerance_only) { /* back to the last converged eps; the solve at eps = 0 goes on
                                                          from there and speaks for itself */
      failed = eps;
      PetscCall(VecCopy(Xbest, s->X));
      s->res.diagnosis[0] = 0, s->res.tolerance_only = PETSC_FALSE;
      break;
    }
    PetscCall(VecCopy(s->X, Xbest));
    last = eps;
  }
  PetscCall(VecDestroy(&Xbest));
  HsO4SetControlRegularization(o->o4, 0);
  s->hold_T = PETSC_FALSE; /* summary.json's initial_guess says how the start was made */
  if (failed > 0)
    PetscCall(
        PetscSNPrintf(s->guess_info, sizeof s->guess_info,
                      "the default guess, then the control regularization eps/2 |u|^2, eps = %g down to %g (Newton "
                      "failed at eps = %g; %" PetscInt_FMT " Newton iterations; docs/controls.md)",
                      HS_O4_REG0, (double)last, (double)failed, its));
  else
    PetscCall(PetscSNPrintf(s->guess_info, sizeof s->guess_info,
                            "the default guess, then the control regularization "
                            "eps/2 |u|^2, eps = %g down to %g (%" PetscInt_FMT " Newton iterations; docs/controls.md)",
                            HS_O4_REG0, HS_O4_REG_LAST, its));
  PetscFunctionReturn(0);
}

/** HsOrder4Guess - the guess on the DMDA layout: z_k from GuessNode, the stage nodes on the line through z_k and
 *  z_{k+1} at the substeps' times t_k + gamma1 h and t_k + (1 - gamma1) h (a guess with node costates, as grid
 *  sequencing passes on: its cubic interpolant at those times, HsSolverGuessRowAt); a free T's start in its slot.
 *  Collective. */
PetscErrorCode HsOrder4Guess(HsSolver s, Vec X)
{
  HsOrder4     *o = s->data;
  PetscScalar **x;
  PetscInt      xs, xm, q = 4 * s->prob->n, N = s->N;
  PetscReal    *row, *nxt, t1 = HS_O4_GAMMA1, t2 = 1 - HS_O4_GAMMA1, H;
  PetscBool     flat = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(q, &row, q, &nxt));
  PetscCall(DMDAVecGetArrayDOF(o->da, X, &x));
  PetscCall(DMDAGetCorners(o->da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < xs + xm; k++) {
    PetscCall(GuessNode(s, k, row));
    PetscCall(GuessNode(s, PetscMin(k + 1, N), nxt));
    PetscCall(PetscArrayzero(x[k], o->D));
    PetscCall(PetscArraycpy(x[k], row, q));
    for (PetscInt i = 0; i < q && k < N; i++) {
      x[k][q + i]     = row[i] + t1 * (nxt[i] - row[i]);
      x[k][2 * q + i] = row[i] + t2 * (nxt[i] - row[i]);
    }
    if (k < N && s->guess && s->guess_nodal) {
      PetscCall(HsSolverGuessRowAt(s, (PetscReal)k + t1, x[k] + q));
      PetscCall(HsSolverGuessRowAt(s, (PetscReal)k + t2, x[k] + 2 * q));
    }
    for (int j = 0; j < (k < N ? 3 : 1) && s->prob->nc; j++)    /* the states onto the constraints */
      (void)HsProblemProjectConstraints(s->prob, x[k] + j * q); /* a failure keeps them as they were */
    if (k == N && s->prob->free_T)
      x[N][q] = HsSolverStartT(s);
  }
  for (PetscInt k = xs; k < PetscMin(xs + xm, N) && s->prob->nc; k++) /* kappa: the rest force (0 where none) */
    for (int j = 0; j < 3; j++) {
      PetscScalar *kap = x[k] + 3 * q + 2 * j * s->prob->nc;
      if (HsO4ConsRestGuess(o->o4, x[k] + PetscMin(j, 1) * q, x[k] + PetscMin(j + 1, 2) * q, kap)) /* 3rd: its start */
        PetscCall(PetscArrayzero(kap, 2 * s->prob->nc));
    }

  for (PetscInt k = xs; k < xs + xm && s->prob->ctrl && !s->guess && !flat; k++) /* H at lambda = 0 may be flat in u */
    flat = (PetscBool)(HsO4Hamiltonian(o->o4, StageTime(s, k, 0), x[k], &H) != 0);
  PetscCall(DMDAVecRestoreArrayDOF(o->da, X, &x));
  PetscCall(PetscFree2(row, nxt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &flat, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  if (flat && X == s->X) /* no maximum of H in u at the default guess: a regularized start */
    PetscCall(RegularizedStart(s));
  PetscFunctionReturn(0);
}

/** HsOrder4PreSolve - the scheme on this solve's discretization. Collective. */
PetscErrorCode HsOrder4PreSolve(HsSolver s)
{
  HsOrder4 *o = s->data;
  char      msg[512];
  int       st;

  PetscFunctionBeginUser;
  HsO4Destroy(&o->o4);
  st = HsO4Create(s->disc, &o->o4, msg, sizeof msg);
  PetscCheck(!st, PetscObjectComm((PetscObject)s), st == HS_ENOMEM ? PETSC_ERR_MEM : PETSC_ERR_SUP, "%s", msg);
  PetscFunctionReturn(0);
}

/* Holonomic constraints: o->cons over the local points' nodes and stage nodes of x, reduced; a solve is converged only
 * with every one within HS_O4_CONS_VOUCH (1 + max |q|) of the constraints as a distance |Phi_i| / |G_i| (as the
 * second-order constrained transcription's, bvp/impls/constrained.c). Collective. */
#define HS_O4_CONS_VOUCH 1e-8
static PetscErrorCode ConsDiagnostics(HsSolver s, const PetscScalar **x, PetscInt xs, PetscInt xm)
{
  HsOrder4  *o = s->data;
  PetscInt   n = s->prob->n, nc = s->prob->nc, q = 4 * n;
  PetscReal *g, *gz, v[4]                        = {0, 0, 0, 0};

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(2 * nc, &g, 2 * nc * q, &gz));
  for (PetscInt k = xs; k < xs + xm && v[0] < PETSC_INFINITY; k++)
    for (int j = 0; j < (k < s->N ? 3 : 1); j++) {
      if (HsO4Cons(o->o4, x[k] + j * q, g, gz)) {
        v[0] = v[1] = v[2] = PETSC_INFINITY;
        break;
      }
      for (PetscInt i = 0; i < nc; i++) {
        PetscReal gn = 0;
        for (PetscInt c = 0; c < n; c++)
          gn += gz[i * q + c] * gz[i * q + c];
        v[0] = PetscMax(v[0], PetscAbsReal(g[i])), v[1] = PetscMax(v[1], PetscAbsReal(g[nc + i]));
        v[2] = PetscMax(v[2], gn > 0 ? PetscAbsReal(g[i]) / PetscSqrtReal(gn) : PETSC_INFINITY);
      }
      for (PetscInt c = 0; c < n; c++)
        v[3] = PetscMax(v[3], PetscAbsReal(x[k][j * q + c]));
    }
  PetscCall(PetscFree2(g, gz));
  PetscCallMPI(MPI_Allreduce(v, o->cons, 4, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  o->cons_off = (PetscBool)!(o->cons[2] <= HS_O4_CONS_VOUCH * (1 + o->cons[3]));
  if (s->res.converged && o->cons_off) {
    s->res.converged = PETSC_FALSE;
    PetscCall(PetscStrncpy(s->res.status, "CONSTRAINTS_VIOLATED", sizeof s->res.status));
    PetscCall(HsSolverSetDiagnosis(s, PETSC_TRUE,
                                   "the residual |F| = %.3e looked converged, but a node lies %.3g off the constraints "
                                   "(|Phi_i| / |G_i|; the positions' size %.3g): rescale the constraints or tighten "
                                   "-snes_atol",
                                   (double)s->res.residual_norm, (double)o->cons[2], (double)o->cons[3]));
  }
  PetscFunctionReturn(0);
}

/** HsOrder4PostSolveFrom - Xnodes (x_k, lambda_k) and the per-point values (O4_VALS) from a solution X on the DMDA
 *  layout, the latter gathered on rank 0 for the diagnostics. Collective. */
PetscErrorCode HsOrder4PostSolveFrom(HsSolver s, Vec X)
{
  HsOrder4           *o = s->data;
  Vec                 Xl;
  const PetscScalar **x;
  PetscScalar        *y, *v;
  PetscInt            xs, xm, q = 4 * s->prob->n, N = s->N;
  int                 st = 0;

  PetscFunctionBeginUser;
  PetscCall(HsDMGetGhosted(o->da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(DMDAGetCorners(o->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(VecGetArray(s->Xnodes, &y));
  PetscCall(VecGetArray(o->vals, &v));
  for (PetscInt k = xs; k < xs + xm; k++) {
    PetscScalar *vk = v + (k - xs) * O4_VALS;
    PetscCall(PetscArraycpy(y + (k - xs) * q, x[k], q));
    for (int j = 0; j < O4_VALS; j++)
      vk[j] = 0;
    for (int j = 0; j < (k < N ? 3 : 1) && !st; j++)
      st = HsO4Hamiltonian(o->o4, StageTime(s, k, j), x[k] + j * q, &vk[j]);
    for (int j = 0; j < 3 && k < N && !st; j++) {
      PetscReal L, W;
      st = HsO4SubstepCost(o->o4, HsO4Fraction(j), StageTime(s, k, j), x[k] + j * q,
                           j < 2 ? x[k] + (j + 1) * q : x[k + 1], &L, &W, &vk[5 + j]);
      vk[3] += L, vk[4] += W;
    }
    if (st)
      for (int j = 0; j < O4_VALS; j++)
        vk[j] = NAN;
  }
  PetscCall(VecRestoreArray(o->vals, &v));
  PetscCall(VecRestoreArray(s->Xnodes, &y));
  if (s->prob->nc)
    PetscCall(ConsDiagnostics(s, x, xs, xm));
  PetscCall(DMDAVecRestoreArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(HsDMRestoreGhosted(o->da, X, &Xl));
  PetscCall(VecDestroy(&o->vals0));
  PetscCall(HsGatherToZero(o->vals, &o->vals0));
  PetscFunctionReturn(0);
}

/* Controls that enter nonlinearly or a configuration-dependent B(q): s->U0 (rank 0, N x m) = the control at node k
 * (HsO4NodeControl: u*(z_k), or R^{-1} B(q_k)^T lambda_p,k: the output's interval formula would take B at the
 * interval's midpoint with the node costate, an O(h^2) error); *st a status. */
static PetscErrorCode NodeControls(HsSolver s, const PetscScalar *x, int *st)
{
  HsOrder4 *o = s->data;
  PetscInt  m = s->prob->m, q = 4 * s->prob->n;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->U0));
  PetscCall(PetscMalloc1(s->N * m, &s->U0));
  for (PetscInt i = 0; i < s->N * m; i++) /* nodes after a failed evaluation: undefined (NaN), not old heap bytes */
    s->U0[i] = NAN;
  for (PetscInt k = 0; k < s->N && !*st; k++)
    *st = HsO4NodeControl(o->o4, StageTime(s, k, 0), x + k * q, s->U0 + k * m);
  PetscFunctionReturn(0);
}

/** HsOrder4Diagnostics - the diagnostics op (rank 0; x: the gathered Xnodes): out[0..10] as SumDiagnostics
 * (bvp/interface/diagnostics.c) fills them: J^d = sum of the substeps' c h L(zbar) + phi(x_N); the mean, min and max of
 * H over the nodes and stage nodes (H_min, H_max: the conserved quantity's spread for an autonomous problem), out[5]
 * (H_balance) the largest defect |H(b, tb) - H(a, ta) - Dt| of a substep (as the second-order schemes' balance, step by
 * step: round-off for a time-dependent ell too); E - W with W the substeps' work; s->H[k] = H(z_k), s->EW[k] = E(x_k) -
 * W_k. */
PetscErrorCode HsOrder4Diagnostics(HsSolver s, const PetscScalar *x, PetscReal *out)
{
  HsOrder4          *o = s->data;
  const PetscScalar *v;
  PetscInt           N = s->N, q = 4 * s->prob->n, cnt = 0;
  PetscReal J = 0, Hs = 0, Hmin = PETSC_MAX_REAL, Hmax = -PETSC_MAX_REAL, W = 0, E, phi = 0, EWmin = PETSC_MAX_REAL,
            EWmax = -PETSC_MAX_REAL, big = 0, bal = 0;
  int st = 0;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(o->vals0, &v));
  for (PetscInt k = 0; k <= N && !st; k++) {
    const PetscScalar *vk = v + k * O4_VALS;
    for (int j = 0; j < (k < N ? 3 : 1); j++, cnt++) {
      Hs += vk[j], Hmin = PetscMin(Hmin, vk[j]), Hmax = PetscMax(Hmax, vk[j]);
      if (k < N) /* substep j: from stage j to the next stage (j < 2) or node */
        bal = PetscMax(bal, PetscAbsReal((j < 2 ? vk[j + 1] : vk[O4_VALS]) - vk[j] - vk[5 + j]));
    }
    st       = HsDiscEnergy(s->disc, x + k * q, &E);
    s->EW[k] = E - W;
    EWmin = PetscMin(EWmin, s->EW[k]), EWmax = PetscMax(EWmax, s->EW[k]);
    big = PetscMax(big, PetscAbsReal(E) + PetscAbsReal(W));
    if (k < N)
      s->H[k] = vk[0], J += vk[3], W += vk[4];
    if (PetscIsInfOrNanReal(vk[0]))
      st = 1;
  }
  PetscCall(VecRestoreArrayRead(o->vals0, &v));
  if (!st)
    st = HsO4TerminalCost(o->o4, x + N * q, &phi); /* with constraints at the projected end state */
  if (!st && (s->prob->ctrl || s->prob->Bq)) /* the node controls for intervals.csv (u*(z_k), or B at q_k) */
    PetscCall(NodeControls(s, x, &st));
  out[0] = J + phi, out[1] = Hs / cnt, out[2] = Hmin, out[3] = Hmax, out[4] = EWmax - EWmin, out[5] = bal;
  out[6] = 0, out[7] = st ? 1 : 0, out[9] = big, out[10] = PetscMax(PetscAbsReal(Hmin), PetscAbsReal(Hmax));
  if (st)
    for (int i = 0; i < 6; i++)
      out[i] = NAN;
  s->res.suspect_intervals = 0, s->res.first_suspect = -1;
  PetscFunctionReturn(0);
}

/* The conserved op: the largest defect |H(b, tb) - H(a, ta) - Dt| of a substep of X (0 at a solution, up to Newton's
 * residual) over max(1, max |H|); -1 outside the domain. Collective. */
static PetscErrorCode Conserved(HsSolver s, Vec X, PetscReal *m)
{
  HsOrder4           *o = s->data;
  Vec                 Xl;
  const PetscScalar **x;
  PetscInt            xs, xm, q = 4 * s->prob->n;
  PetscReal           v[3] = {0, 0, 0}, Ha, Hb = 0, L, W, Dt; /* max defect, max |H|, a domain error */
  PetscBool           fresh = (PetscBool)(HsO4Control(o->o4) != NULL);

  PetscFunctionBeginUser;
  PetscCall(HsDMGetGhosted(o->da, X, &Xl));
  PetscCall(DMDAVecGetArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(DMDAGetCorners(o->da, &xs, NULL, NULL, &xm, NULL, NULL));
  for (PetscInt k = xs; k < PetscMin(xs + xm, s->N) && !v[2]; k++)
    for (int j = 0; j < 3 && !v[2]; j++) {
      const PetscScalar *a = x[k] + j * q, *b = j < 2 ? x[k] + (j + 1) * q : x[k + 1];
      /* H at a: the last substep's Hb (the same call: the same point and time), except at the rank's first and for
         controls that enter nonlinearly (their inner Newton starts from the last call's u*) */
      if (((k == xs && j == 0) || fresh ? HsO4Hamiltonian(o->o4, StageTime(s, k, j), a, &Ha) : (Ha = Hb, 0)) ||
          HsO4Hamiltonian(o->o4, j < 2 ? StageTime(s, k, j + 1) : StageTime(s, k + 1, 0), b, &Hb) ||
          HsO4SubstepCost(o->o4, HsO4Fraction(j), StageTime(s, k, j), a, b, &L, &W, &Dt) ||
          PetscIsInfOrNanReal(Ha + Hb + Dt))
        v[2] = 1;
      else
        v[0] = PetscMax(v[0], PetscAbsReal(Hb - Ha - Dt)),
        v[1] = PetscMax(v[1], PetscMax(PetscAbsReal(Ha), PetscAbsReal(Hb)));
    }
  PetscCall(DMDAVecRestoreArrayDOFRead(o->da, Xl, (void *)&x));
  PetscCall(HsDMRestoreGhosted(o->da, X, &Xl));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  *m = v[2] ? -1 : v[0] / PetscMax(1, v[1]);
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  PetscFunctionBeginUser;
  (void)s;
  PetscCall(PetscStrncpy(buf, "transcription, conserving4 (triple jump of the Gonzalez discrete gradient of H)", len));
  PetscFunctionReturn(0);
}

/** HsOrder4View - what H^d and E - W mean for conserving4 (the view op). */
PetscErrorCode HsOrder4View(HsSolver s, PetscViewer v)
{
  HsOrder4 *o = s->data;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerASCIIPrintf(v,
                                   "  conserving4        H^d above is the maximized Hamiltonian H(x, lambda) at the "
                                   "%" PetscInt_FMT " nodes and stage nodes, its balance substep by substep; E - W is "
                                   "O(h^4), not exact\n",
                                   3 * s->N + 1));
  if (s->prob->nc && o->cons_off) /* round 27: "round-off" whatever the values */
    PetscCall(
        PetscViewerASCIIPrintf(v,
                               "  constraints        max|Phi| %.2g, max|G lambda_p| %.2g over the nodes and stage "
                               "nodes (NOT round-off: one lies %.3g off the constraints as |Phi_i| / |G_i|)\n",
                               (double)o->cons[0], (double)o->cons[1], (double)o->cons[2]));
  else if (s->prob->nc)
    PetscCall(
        PetscViewerASCIIPrintf(v,
                               "  constraints        max|Phi| %.2g, max|G lambda_p| %.2g over the nodes and stage "
                               "nodes (round-off)\n",
                               (double)o->cons[0], (double)o->cons[1]));
  PetscFunctionReturn(0);
}

/** HsOrder4WriteSummary - summary.json's "conserving4" member: what H_min, H_max, H_spread and H_balance measure
 *  (rank 0). */
PetscErrorCode HsOrder4WriteSummary(HsSolver s, FILE *fp)
{
  HsOrder4 *o = s->data;

  PetscFunctionBeginUser;
  fprintf(
      fp,
      "  \"conserving4\": {\"order\": 4, \"conserved\": \"the maximized Hamiltonian H(x, lambda) at the nodes "
      "and the stage nodes (H_min, H_max, H_spread)\", \"balance\": \"H_balance: the largest |H(b, t_b) - H(a, t_a) - "
      "Dt| of a substep (Dt: the exact change a time-dependent ell makes)\", \"points\": %lld, \"costates\": "
      "\"lambda_k at the nodes\", \"energy_work\": \"O(h^4), not exact (exact for a quadratic E)\"},\n",
      (long long)(3 * s->N + 1));
  if (s->prob->nc) { /* as the second-order constrained formulations' member (bvp/impls/constrained.c) */
    fprintf(fp, "  \"constraints\": {\"count\": %d, \"class\": \"%s\"", s->prob->nc,
            s->prob->cons_extended ? "extended" : "exact");
    for (int i = 0; i < 2; i++)
      if (isfinite(o->cons[i]))
        fprintf(fp, ", \"%s\": %.17g", i ? "adjoint" : "max_phi", (double)o->cons[i]);
      else
        fprintf(fp, ", \"%s\": null", i ? "adjoint" : "max_phi");
    fprintf(fp, ", \"points\": \"the nodes and stage nodes\"},\n");
  }
  PetscFunctionReturn(0);
}

/** HsOrder4DestroyData - frees what HsOrder4CreateLayout and HsOrder4PreSolve made (not o itself). */
PetscErrorCode HsOrder4DestroyData(HsOrder4 *o)
{
  PetscFunctionBeginUser;
  HsO4Destroy(&o->o4);
  PetscCall(DMDestroy(&o->da));
  PetscCall(VecDestroy(&o->vals));
  PetscCall(VecDestroy(&o->vals0));
  PetscFunctionReturn(0);
}

static PetscErrorCode Destroy(HsSolver s)
{
  PetscFunctionBeginUser;
  s->residual_pure = PETSC_FALSE;
  PetscCall(HsOrder4DestroyData(s->data));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode PostSolve(HsSolver s)
{
  PetscFunctionBeginUser;
  PetscCall(HsOrder4PostSolveFrom(s, s->X));
  PetscFunctionReturn(0);
}

/** HsOrder4CreateLayout - what the conserving4 formulations refuse, the DMDA of the solution (N+1 points, 12n
 *  each), Xnodes and the per-point values. Collective. */
PetscErrorCode HsOrder4CreateLayout(HsSolver s)
{
  HsOrder4   *o = s->data;
  PetscInt    xs, xm, n = s->prob->n;
  PetscMPIInt size;
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(s->N + 1 >= size, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "N = %" PetscInt_FMT " intervals give %" PetscInt_FMT " time points, fewer than the %d MPI ranks", s->N,
             s->N + 1, size);
  PetscCheck(!s->state_scheme[0] && !s->costate_scheme[0], comm, PETSC_ERR_SUP,
             "-hs_scheme conserving4 has its own scheme (no -hs_state_scheme, -hs_costate_scheme)");
  PetscCheck(s->out_format != HS_OUTPUT_FORMAT_HDF5, comm, PETSC_ERR_SUP,
             "-hs_scheme conserving4 writes trajectory.csv and intervals.csv only (-hs_output_format csv): "
             "trajectory.h5's H, E - W and controls are the second-order schemes' formulas");
  o->D = 12 * n + 6 * s->prob->nc; /* with constraints the three substeps' multipliers kappa (2nc each) */
  PetscCall(DMDACreate1d(comm, DM_BOUNDARY_NONE, s->N + 1, o->D, 1, NULL, &o->da));
  PetscCall(DMSetUp(o->da));
  PetscCall(DMSetMatType(o->da, MATAIJ));
  PetscCall(DMDAGetCorners(o->da, &xs, NULL, NULL, &xm, NULL, NULL));
  PetscCall(VecCreateMPI(comm, xm * 4 * n, (s->N + 1) * 4 * n, &s->Xnodes));
  PetscCall(VecCreateMPI(comm, xm * O4_VALS, (s->N + 1) * O4_VALS, &o->vals));
  PetscFunctionReturn(0);
}

/* -hs_condense: on one rank, without constraints and with a fixed T, for n <= HS_CONDENSE_MAX_N, the condensed LU
   (order4cond.c) in the place of the default PC hsband (not of a -pc_type the user chose or another linear solver).
   Measured (bench/README.md, "Fewer instructions"): n = 1 (the pendulum) -21 % instructions per solve and 1.14x in
   time, n = 2 (bq2.ocp, N = 400) -7.7 % and 3 % in time; n = 3 (kepler, N = 124, kernels unrolled for q = 12) -8.5 %
   instructions but no faster (6.69 against 6.54 ms best), so from n = 3 on hsband's vectorized elimination stays. */
#define HS_CONDENSE_MAX_N 2
static PetscErrorCode Condense(HsSolver s, KSP ksp)
{
  PetscMPIInt size;
  PetscBool   band;
  PC          pc;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)s), &size));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, "hsband", &band));
  if (s->condense && size == 1 && band && !s->prob->nc && !s->prob->free_T && s->prob->n <= HS_CONDENSE_MAX_N)
    PetscCall(HsOrder4CondSetUp(s, ksp));
  PetscFunctionReturn(0);
}

/* The DMDA, X, F, Xnodes, the Jacobian (its exact pattern), SNES and the default linear solver. */
static PetscErrorCode SetUp(HsSolver s)
{
  HsOrder4 *o = s->data;
  PetscInt  n = s->prob->n;
  KSP       ksp;

  PetscFunctionBeginUser;
  PetscCall(HsOrder4CreateLayout(s));
  PetscCall(DMCreateGlobalVector(o->da, &s->X));
  PetscCall(VecDuplicate(s->X, &s->F));
  PetscCall(CreateJacobian(s, o->da, o->D, &s->Jac)); /* its exact pattern */
  if (s->prob->free_T) /* T in point N's first stage slot (the noise estimate holds it) */
    s->iT = s->N * o->D + 4 * n;
  PetscCall(MatSetOption(s->Jac, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(HsOrder4PreSolve(s));
  /* the residual keeps nothing and depends on X alone, except with controls that enter nonlinearly, whose inner
     Newton starts from the last call's maximizer (HsSolverSolveNewton's final evaluation, solversolve.c) */
  s->residual_pure = (PetscBool)(HsO4Control(o->o4) == NULL);
  s->res.segments  = s->N;
  PetscCall(SNESSetDM(s->snes, o->da));
  PetscCall(SNESSetFunction(s->snes, s->F, HsSolverFormFunction, s));
  PetscCall(SNESSetJacobian(s->snes, s->Jac, s->Jac, FormJacobian, s));
  PetscCall(SNESGetKSP(s->snes, &ksp));
  PetscCall(HsSolverSetDefaultPC(s, ksp, PETSC_FALSE));
  PetscCall(Condense(s, ksp));
  if (s->prob->nc) { /* constraints: the secant (l2) line search by default, as the second-order constrained scheme's:
       from the default guess at N = 40 it took 12, 9, 15, 11, 15 Newton iterations on the Cartesian pendulum, the
       double pendulum, the four-bar, the crane and the 3-link arm against hsbt's 21, 11, 44, 25 and none in 50
       (-snes_linesearch_type overrides it) */
    SNESLineSearch ls;
    PetscCall(SNESGetLineSearch(s->snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHL2));
  }
  PetscFunctionReturn(0);
}

/*@ HsOrder4SetUp - makes s, a transcription with -hs_scheme conserving4, the transcription of the fourth-order
    conserving scheme (docs/theory.md section 8) and sets it up (bvp/impls internal; the transcription's set-up calls
    it). Frees the formulation's data, takes its own and fills the operations. Collective. @*/
PetscErrorCode HsOrder4SetUp(HsSolver s)
{
  HsOrder4 *o;

  PetscFunctionBeginUser;
  PetscCall((*s->ops->destroy)(s));
  PetscCall(PetscNew(&o));
  s->data              = o;
  s->ops->setup        = SetUp;
  s->ops->guess        = HsOrder4Guess;
  s->ops->presolve     = HsOrder4PreSolve;
  s->ops->postsolve    = PostSolve;
  s->ops->describe     = Describe;
  s->ops->view         = HsOrder4View;
  s->ops->writesummary = HsOrder4WriteSummary;
  s->ops->destroy      = Destroy;
  s->ops->residual     = Residual;
  s->ops->diagnostics  = HsOrder4Diagnostics;
  s->ops->conserved    = Conserved;
  PetscCall(SetUp(s));
  PetscFunctionReturn(0);
}
