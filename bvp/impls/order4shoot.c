/* hamshoot: multiple shooting of the fourth-order conserving scheme (-hs_bvp_type shooting -hs_scheme conserving4,
 * docs/theory.md section 8, "Multiple shooting"): the transcription's equations (order4.c) marched substep by substep.
 *
 * Segment t (nodes k_t .. k_{t+1}) owns the outer unknowns w_t = z_{k_t} = (x, lambda) (4n); segment 0 only
 * lambda_0 (2n), x_0 being given. Its march applies, interval by interval, the three substeps z_k -> z_{k,1} ->
 * z_{k,2} -> z_{k+1} (fractions gamma1, gamma2 < 0, gamma1 of h), each a 4n nonlinear solve F(a, b) = b - a - c h S
 * gbar(a, b) = 0 for b by a small dense Newton (GSL LU), started from the last march's increment b - a (or from an
 * explicit Euler step), and chains the sensitivities db/da = -Fb^{-1} Fa (implicit function theorem, with the LU at
 * the converged b). Outer equations, in the unknowns' order (banded, for PC hsband; issue 44): block t >= 1's
 * continuity z_end(t - 1) - w_t (4n), then the terminal rows HsO4Terminal at z_N (2n). Both are the transcription's
 * rows, so shooting solves the same discrete equations. The Jacobian is exact. Segments are distributed over the
 * ranks in contiguous blocks, entries added by the rank that marches them; the outer matrix is factored by the
 * shootings' default (HsSegLayoutSetUpSolver: PC hsband). After the solve the marched trajectory (with its stage
 * nodes) is put on the transcription's layout, whose diagnostics (H at every node and stage node, J^d, E - W) it
 * shares. The growth of each segment's transition map is checked as in the second-order shooting (shootingjac.c).
 * A free final time T is the last unknown (on the owner of segment M - 1): the sensitivities get a column d/dT
 * (h = T/N in every substep), and T's row (the last) is the transcription's H(z_N) = d phi/dT; with T in the data
 * (TDataSum, ChainT) or a moving terminal state (sh->fd) the transcription's row again, T's column a difference of
 * the outer residual (TColumn). Holonomic constraints
 * (docs/theory.md section 8.1): each substep's march solves (b, kappa) with g(b) = 0 (ConsSubstep); the end's 2nc
 * unknowns of HsO4ConsTerminal are the last 2nc unknowns, on the owner of segment M - 1: alpha (p_N's free normal part)
 * or beta2 first, then the last substep's kappa_2 (q_N fixed: its Phi(q_N) = 0 is not in the march) or, with free
 * coordinates, beta1 (where the fixed coordinates imply Phi_l(q_N) = 0, ConsDrops, the last substep's kappa_2,l
 * instead, beta1_l = 0); with 'conserved:' (docs/theory.md section 8.1, "The rest end with conserved quantities")
 * gamma (ncinv) after them and the invariants' rows after the terminal rows (EndRows); the first 2nc rows (the head
 * rows) are the start rows at z_0. */
#include "order4impl.h"
#include "shootimpl.h"

#include <gsl/gsl_linalg.h>

#define HS_O4SHOOT_QUAD                                                                                                \
  1e-9 /* an update below this (relative to 1 + |b|) leaves a residual at round-off (Newton is                         \
          quadratic with a constant O(c h)): one more evaluation, then the substep is done */
#define HS_O4SHOOT_NOISE                                                                                               \
  1e-8 /* a substep's Newton also stops when its update stays above half the last for three                            \
          updates below this (relative to 1 + |b|): its noise floor */

typedef struct {
  HsOrder4         o; /* first: the transcription's layout, scheme and diagnostics (order4.c) */
  HsSegLayout     *seg;    /* the segments (shootimpl.h): blocks 2n, q; points k_t .. k_{t+1}, 3 q values each; extra
                              unknowns a free T, alpha, kappa_2 (on seg->last, the owner of segment M - 1) */
  PetscInt         n, q;   /* q = 4n */
  PetscInt         ft, ws; /* a free T: 1, and the sensitivities' columns ws = q + ft (the last: d/dT) */
  PetscReal        atol, stol, max_growth, egrowth;
  PetscInt         max_it;
  PetscReal       *traj;      /* per local segment: points k_t .. k_{t+1}, 12n each (z_k, z_{k,1}, z_{k,2}) */
  PetscBool       *have_traj; /* per local segment: traj holds its last march (warm starts) */
  PetscReal       *S, *S2;    /* the sensitivity dz/d(w, T) (q x ws), scratch */
  PetscReal       *Send;      /* per local segment: z_end (q), dz_end/d(w, T) (q x ws; segment 0: all 4n columns) */
  PetscReal       *perron;    /* per local segment: the scaling of its last growth check (q) */
  PetscReal       *F, *Fa, *Fb, *db, *aold, *bold, *tg, *tc; /* scratch; tg, tc: a free T's row (q + 1, 2n) */
  PetscObjectId    xid; /* the X whose march traj holds (cached: a residual's march serves the Jacobian) */
  PetscObjectState xstate;
  PetscBool        cached;
  PetscInt         its[3][3]; /* per substep j (1, 2, 3) of the marches: count, Newton updates summed, most (-info) */
  gsl_permutation *perm;
  Vec              Xfull; /* the whole trajectory on the transcription's DMDA (output, diagnostics) */
  /* holonomic constraints (docs/theory.md section 8.1): nc, c2 = 2nc; the substeps' multipliers kappa per local
     segment (3 c2 per point, as traj); the augmented substep system A (r x r, r = q + c2, or q + nc for the last
     substep, whose kappa_2 is an outer unknown beside alpha), its right side y, the kappa blocks Fk (q x c2), g(b) and
     its gradient gz (c2 x q), and A's permutations (sizes q + c2, q + nc) */
  PetscInt         nc, c2;
  PetscReal       *kap, *A, *y, *Fk, *g, *gz;
  gsl_permutation *permA;
  /* the very last substep (ConsDrops): drop[l] where its kappa_2,l is ext[nc + l], an outer unknown, and Phi_l(b) = 0
     not in its system (q_N fixed; with free coordinates where the fixed ones imply Phi_l(q_N) = 0, beta1_l then 0);
     the substep system's size r and (ConsLayout) the g index of each constraint row (gi) and the kappa index of each
     kappa column (ki); 'conserved:' the end's ni multipliers gamma (ext[c2 ..]) and rows; ex: ext's copy (EndRows) */
  int       *drop, *gi, *ki, r;
  PetscInt   ni;
  PetscReal *ex;
  /* a free T with T in the data or a terminal state that moves with it: fd, T's column by differences of the residual
     (HsSolverFinalTimeColumn); T in the data: Tg per local segment (ws), the gradient of its part of T's row (the
     integral of dH/dT over its substeps, TDataChain) in its start's sensitivities, tz (2q) scratch */
  PetscBool  fd;
  PetscReal *Tg, *tz;
} HsO4Shoot;

static PetscReal *Point(HsO4Shoot *sh, PetscInt i, PetscInt k) /* point k of local segment i */
{
  return HsSegLayoutPoint(sh->seg, sh->traj, i, k);
}

/* The substep of fraction c from a (time ta) to b: b solved by Newton from its value in b with at least one update (a
 * residual just below atol on each substep would add up in H's change). Converged: an update below max(stol,
 * HS_O4SHOOT_QUAD) (1 + |b|), then one more evaluation; or after an update a residual below atol (1 + |b|); or the
 * noise floor. F, Fa, Fb are left evaluated at b, Fb factored; *its the updates taken. HS_ENOCONV after max_it
 * updates, HS_EDOM for a non-finite iterate, HS_ESINGULAR for a zero pivot. */
static int SubstepSolve(HsO4Shoot *sh, double c, double ta, const double *a, double *b, int *its)
{
  int             q = (int)sh->q, st, last = 0, slow = 0, sgn;
  double          prev = INFINITY;
  gsl_matrix_view Fb   = gsl_matrix_view_array(sh->Fb, (size_t)q, (size_t)q);
  gsl_vector_view F = gsl_vector_view_array(sh->F, (size_t)q), d = gsl_vector_view_array(sh->db, (size_t)q);

  for (int it = 0;; it++) {
    double rn = 0, bn = 0, dn = 0;
    if ((st = HsO4Substep(sh->o.o4, c, ta, a, b, sh->F, sh->Fa, sh->Fb))) /* Fb needs Fa */
      return st;
    for (int i = 0; i < q; i++)
      rn = fmax(rn, fabs(sh->F[i])), bn = fmax(bn, fabs(b[i]));
    if (!isfinite(rn) || !isfinite(bn))
      return HS_EDOM;
    *its = it;
    gsl_linalg_LU_decomp(&Fb.matrix, sh->perm, &sgn);
    for (int i = 0; i < q; i++)
      if (!(fabs(sh->Fb[i * q + i]) > 1e-300))
        return HS_ESINGULAR;
    if (last || (it > 0 && rn <= sh->atol * (1 + bn)))
      return HS_SUCCESS;
    if (it >= sh->max_it)
      return HS_ENOCONV;
    gsl_linalg_LU_solve(&Fb.matrix, sh->perm, &F.vector, &d.vector);
    for (int i = 0; i < q; i++)
      b[i] -= sh->db[i], dn = fmax(dn, fabs(sh->db[i]));
    slow = dn <= HS_O4SHOOT_NOISE * (1 + bn) && dn > 0.5 * prev ? slow + 1 : 0;
    last = dn <= PetscMax(sh->stol, HS_O4SHOOT_QUAD) * (1 + bn) || slow >= 3;
    prev = dn;
  }
}

/* S <- db/da S = -Fb^{-1} Fa S (Fb factored, Fa and F at the converged b; S is q x ws); with a free T its last
 * column also takes b's own dependence on T through h = T/N, dF/dT = (F - (b - a))/T. */
static void ChainSubstep(HsO4Shoot *sh, const double *a, const double *b, double T)
{
  int             q = (int)sh->q, ws = (int)sh->ws;
  gsl_matrix_view Fb = gsl_matrix_view_array(sh->Fb, (size_t)q, (size_t)q);

  for (int col = 0; col < ws; col++) {
    gsl_vector_view v = gsl_vector_view_array(sh->db, (size_t)q);
    for (int i = 0; i < q; i++) {
      double s = col == q ? (sh->F[i] - (b[i] - a[i])) / T : 0;
      for (int j = 0; j < q; j++)
        s += sh->Fa[i * q + j] * sh->S[j * ws + col];
      sh->db[i] = -s;
    }
    gsl_linalg_LU_svx(&Fb.matrix, sh->perm, &v.vector);
    for (int i = 0; i < q; i++)
      sh->S2[i * ws + col] = sh->db[i];
  }
  memcpy(sh->S, sh->S2, sizeof(double) * (size_t)(q * ws));
}

/* ChainSubstep, and with T in the data (not held) local segment i's part of T's row chained as well: Tg += 1/2 c h
 * grad dH/dT(zbar) (da/dw + db/dw), zbar = (a + b)/2, the substep's share of TDataSum's integral (c: the fraction). */
static int ChainT(HsSolver s, HsO4Shoot *sh, PetscInt i, double c, const double *a, const double *b)
{
  int     q = (int)sh->q, ws = (int)sh->ws, st, td = s->prob->data_T && !s->hold_T;
  double *zb = sh->tz, *g = sh->tz + q, *acc = sh->Tg + i * ws, wgt = 0.5 * c * s->prob->T / (double)s->N;

  for (int l = 0; td && l < q; l++)
    zb[l] = 0.5 * (a[l] + b[l]);
  if (td && (st = HsO4HamiltonianTGradient(sh->o.o4, zb, g)))
    return st;
  for (int pass = 0; pass < 2; pass++) { /* da/dw before the chain, db/dw after it */
    if (pass)
      ChainSubstep(sh, a, b, s->prob->T);
    for (int col = 0; td && col < ws; col++)
      for (int l = 0; l < q; l++)
        acc[col] += wgt * g[l] * sh->S[l * ws + col];
  }
  return HS_SUCCESS;
}

/* b's start: a plus the increment of the last march's substep (aold -> bold) if there was one, else the explicit
 * Euler step a + c h S grad H(a, ta). */
static int SubstepStart(HsO4Shoot *sh, double c, double h, double ta, const double *a, double *b, int warm)
{
  int    n = (int)sh->n, q = (int)sh->q, st;
  double H;

  if (warm) {
    for (int i = 0; i < q; i++)
      b[i] = a[i] + sh->bold[i] - sh->aold[i];
    return HS_SUCCESS;
  }
  if ((st = HsO4HamiltonianGradient(sh->o.o4, ta, a, &H, sh->db)))
    return st;
  for (int i = 0; i < 2 * n; i++) /* S grad H = (dH/dlambda, -dH/dx) */
    b[i] = a[i] + c * h * sh->db[2 * n + i], b[2 * n + i] = a[2 * n + i] - c * h * sh->db[i];
  return HS_SUCCESS;
}

/* Fa, Fb of the substep at its solution (a, b), Fb factored (a march's trajectory reused for its sensitivities). */
static int SubstepFactor(HsO4Shoot *sh, double c, double ta, const double *a, const double *b)
{
  int             q  = (int)sh->q, st, sgn;
  gsl_matrix_view Fb = gsl_matrix_view_array(sh->Fb, (size_t)q, (size_t)q);

  if ((st = HsO4Substep(sh->o.o4, c, ta, a, b, sh->F, sh->Fa, sh->Fb)))
    return st;
  gsl_linalg_LU_decomp(&Fb.matrix, sh->perm, &sgn);
  for (int i = 0; i < q; i++)
    if (!(fabs(sh->Fb[i * q + i]) > 1e-300))
      return HS_ESINGULAR;
  return HS_SUCCESS;
}

static PetscReal *KapPoint(HsO4Shoot *sh, PetscInt i, PetscInt k) /* kappa of interval k of local segment i */
{
  return sh->kap + (sh->seg->toff[i] + k - sh->seg->knots[sh->seg->s0 + i]) * 3 * sh->c2;
}

/* Constraints: which of the very last substep's Phi_l(b) = 0 leave its system (drop[l], ConsLayout), from a, its
 * start: every one with q_N fixed (q_N = q_T is among the outer equations); with free coordinates those with no
 * component in any free one (HsO4ConsImpliedAtEnd: the fixed coordinates' rows imply Phi_l(q_N) = 0, and beta1_l,
 * which then multiplies nothing, is 0, the transcription's row; ext[nc + l] holds kappa_2,l in its place). */
static int ConsDrops(HsO4Shoot *sh, const double *a)
{
  int fq = HsO4ConsFreeCoordinates(sh->o.o4), st;

  for (PetscInt l = 0; l < sh->nc; l++) {
    sh->drop[l] = 1;
    if (fq && (st = HsO4ConsImpliedAtEnd(sh->o.o4, a, (int)l, &sh->drop[l])))
      return st;
  }
  return HS_SUCCESS;
}

/* Constraints: the substep system's rows and columns (drop NULL: all): the rows of g(b) = (Phi(b), G(b) lambda_p) but
 * Phi_l's with drop[l] (gi), the columns of kappa = (kappa_1, kappa_2) but kappa_2,l's (ki), r their number plus q.
 * Kappa_1, G lambda_p's partner, always stays (with kappa_2 instead the block is singular at lambda_p = 0). */
static void ConsLayout(HsO4Shoot *sh, const int *drop)
{
  int nc = (int)sh->nc, m = 0, mk = 0;

  for (int l = 0; l < nc; l++) {
    sh->ki[mk++] = l;
    if (!drop || !drop[l])
      sh->gi[m++] = l, sh->ki[mk++] = nc + l;
  }
  for (int l = 0; l < nc; l++)
    sh->gi[m++] = nc + l;
  sh->r = (int)sh->q + m;
}

/* Constraints: the augmented system of the substep from a to b with multipliers kap evaluated and factored:
 * A = [[Fb, Fk], [grad g(b), 0]], y = (F, g(b)), on ConsLayout's rows and columns (the very last substep's dropped
 * kappa_2,l are outer unknowns). *rn, *yn the largest |y| and |(b, kappa)|. HS_ESINGULAR for a zero pivot. */
static int ConsBuild(HsO4Shoot *sh, double c, double ta, const double *a, const double *b, const double *kap,
                     double *rn, double *yn)
{
  int             q = (int)sh->q, c2 = (int)sh->c2, r = sh->r, st, sgn;
  gsl_matrix_view A = gsl_matrix_view_array(sh->A, (size_t)r, (size_t)r);
  gsl_permutation pv = {(size_t)r, sh->permA->data}; /* permA has room for the largest system */

  if ((st = HsO4Substep(sh->o.o4, c, ta, a, b, sh->F, sh->Fa, sh->Fb)) ||
      (st = HsO4SubstepConsTerms(sh->o.o4, c, a, b, kap, sh->F, sh->Fa, sh->Fb, sh->Fk)) ||
      (st = HsO4Cons(sh->o.o4, b, sh->g, sh->gz)))
    return st;
  *rn = 0, *yn = 0;
  for (int i = 0; i < r; i++) {
    for (int j = 0; j < r; j++)
      sh->A[i * r + j] =
          i < q ? (j < q ? sh->Fb[i * q + j] : sh->Fk[i * c2 + sh->ki[j - q]]) : (j < q ? sh->gz[sh->gi[i - q] * q + j] : 0);
    sh->y[i] = i < q ? sh->F[i] : sh->g[sh->gi[i - q]];
    *rn = fmax(*rn, fabs(sh->y[i])), *yn = fmax(*yn, fabs(i < q ? b[i] : kap[sh->ki[i - q]]));
  }
  if (!isfinite(*rn) || !isfinite(*yn))
    return HS_EDOM;
  gsl_linalg_LU_decomp(&A.matrix, &pv, &sgn);
  for (int i = 0; i < r; i++)
    if (!(fabs(sh->A[i * r + i]) > 1e-300))
      return HS_ESINGULAR;
  return HS_SUCCESS;
}

/* Constraints: the substep's Newton for (b, kappa) (kappa_1 only for the last substep), SubstepSolve's stopping rules
 * on the augmented unknowns; ConsBuild's system left factored at the solution. */
static int SubstepSolveCons(HsO4Shoot *sh, double c, double ta, const double *a, double *b, double *kap, int *its)
{
  int             q = (int)sh->q, r = sh->r, st, done = 0, slow = 0;
  double          prev = INFINITY, rn, yn;
  gsl_matrix_view A    = gsl_matrix_view_array(sh->A, (size_t)r, (size_t)r);
  gsl_vector_view y    = gsl_vector_view_array(sh->y, (size_t)r);
  gsl_permutation pv   = {(size_t)r, sh->permA->data};

  for (int it = 0;; it++) {
    double dn = 0;
    if ((st = ConsBuild(sh, c, ta, a, b, kap, &rn, &yn)))
      return st;
    *its = it;
    if (done || (it > 0 && rn <= sh->atol * (1 + yn)))
      return HS_SUCCESS;
    if (it >= sh->max_it)
      return HS_ENOCONV;
    gsl_linalg_LU_svx(&A.matrix, &pv, &y.vector);
    for (int i = 0; i < r; i++) {
      *(i < q ? b + i : kap + sh->ki[i - q]) -= sh->y[i];
      dn = fmax(dn, fabs(sh->y[i]));
    }
    slow = dn <= HS_O4SHOOT_NOISE * (1 + yn) && dn > 0.5 * prev ? slow + 1 : 0;
    done = dn <= PetscMax(sh->stol, HS_O4SHOOT_QUAD) * (1 + yn) || slow >= 3;
    prev = dn;
  }
}

/* Constraints: S <- db/d(w, kappa_2) S by the factored augmented system: [db; dkappa] = -A^{-1} [Fa S (+ Fk_2 for the
 * very last substep's dropped kappa_2,l, ext[nc + l]'s column q + ft + l); 0]. */
static void ChainSubstepCons(HsO4Shoot *sh, const int *drop)
{
  int             q = (int)sh->q, ws = (int)sh->ws, c2 = (int)sh->c2, k1 = q + (int)sh->ft;
  int             r = sh->r;
  gsl_matrix_view A = gsl_matrix_view_array(sh->A, (size_t)r, (size_t)r);
  gsl_vector_view v = gsl_vector_view_array(sh->y, (size_t)r);
  gsl_permutation pv = {(size_t)r, sh->permA->data};

  for (int col = 0; col < ws; col++) {
    for (int i = 0; i < r; i++) { /* ws = q + ft + nc: the columns from k1 on are ext[nc ..]'s */
      double s = i < q && drop && col >= k1 && drop[col - k1] ? sh->Fk[i * c2 + (int)sh->nc + col - k1] : 0;
      for (int j = 0; i < q && j < q; j++)
        s += sh->Fa[i * q + j] * sh->S[j * ws + col];
      sh->y[i] = -s;
    }
    gsl_linalg_LU_svx(&A.matrix, &pv, &v.vector);
    for (int i = 0; i < q; i++)
      sh->S2[i * ws + col] = sh->y[i];
  }
  memcpy(sh->S, sh->S2, sizeof(double) * (size_t)(q * ws));
}

/* Constraints: substep j of interval k of local segment i from a to b with its kappa (KapPoint), solved (or, reuse,
 * only factored at the stored march) and chained (sens); the very last substep's dropped kappa_2,l (ConsDrops) are
 * ext[nc + l], outer unknowns. b and kappa start from the last march (warm; b from its increment, SubstepStart) or
 * from an explicit Euler step and the rest force (HsO4ConsRestGuess). */
static int ConsSubstep(HsSolver s, HsO4Shoot *sh, PetscInt i, PetscInt k, int j, const double *a, double *b,
                       const double *ext, int sens, int reuse, int warm, int *its)
{
  int     q = (int)sh->q, nc = (int)sh->nc, st = 0, *drop = k == s->N - 1 && j == 2 ? sh->drop : NULL;
  double *kap = KapPoint(sh, i, k) + j * sh->c2, c = HsO4Fraction(j), ta = HsOrder4StageTime(s, k, j), rn, yn;

  if (drop && (st = ConsDrops(sh, a)))
    return st;
  ConsLayout(sh, drop);
  for (int l = 0; drop && l < nc; l++) /* the dropped kappa_2,l of the last substep: outer unknowns */
    if (drop[l])
      kap[nc + l] = ext[nc + l];
  if (reuse)
    st = ConsBuild(sh, c, ta, a, b, kap, &rn, &yn);
  else {
    memcpy(sh->bold, b, sizeof(double) * (size_t)q);
    st = SubstepStart(sh, c, s->prob->T / (double)s->N, ta, a, b, warm);
    if (!st && !warm && HsO4ConsRestGuess(sh->o.o4, a, b, kap))
      memset(kap, 0, sizeof(double) * (size_t)sh->c2);
    for (int l = 0; !st && !warm && drop && l < nc; l++)
      if (drop[l])
        kap[nc + l] = ext[nc + l];
    st = st ? st : SubstepSolveCons(sh, c, ta, a, b, kap, its);
  }
  if (!st && sens)
    ChainSubstepCons(sh, drop);
  return st;
}

/* Marches local segment i from its outer unknowns w (reuse: its stored trajectory is already w's march, only the
 * sensitivities are wanted); the end z and (sens) dz_end/dz_start into Send. A failure sets *failed and is the
 * diagnosis (segment, interval, substep, why). */
static PetscErrorCode MarchSegment(HsSolver s, HsO4Shoot *sh, PetscInt i, const double *w, const double *ext, int sens,
                                   int reuse, PetscBool *failed)
{
  PetscInt t = sh->seg->s0 + i, k0 = sh->seg->knots[t], k1 = sh->seg->knots[t + 1];
  int      n = (int)sh->n, q = (int)sh->q, st = 0, its = 0, warm = sh->have_traj[i];
  double  *end = sh->Send + i * (q + q * sh->ws), h = s->prob->T / (double)s->N, *z0 = Point(sh, i, k0);

  PetscFunctionBeginUser;
  memcpy(sh->aold, z0, sizeof(double) * (size_t)q);
  if (!t) /* (x0, lambda_0) */
    memcpy(z0, s->prob->x0, sizeof(double) * (size_t)(2 * n)), memcpy(z0 + 2 * n, w, sizeof(double) * (size_t)(2 * n));
  else
    memcpy(z0, w, sizeof(double) * (size_t)q);
  if (sens) {
    memset(sh->Tg + i * sh->ws, 0, sizeof(double) * (size_t)sh->ws);
    memset(sh->S, 0, sizeof(double) * (size_t)(q * sh->ws));
    for (int j = 0; j < q; j++)
      sh->S[j * sh->ws + j] = 1;
  }
  for (PetscInt k = k0; k < k1 && !st; k++)
    for (int j = 0; j < 3 && !st; j++) {
      double *a = Point(sh, i, k) + j * q, *b = j < 2 ? a + q : Point(sh, i, k + 1), c = HsO4Fraction(j),
             ta = HsOrder4StageTime(s, k, j);
      if (sh->nc) { /* constraints: (b, kappa) together; the very last substep takes kappa_2 from ext */
        st = ConsSubstep(s, sh, i, k, j, a, b, ext, sens, reuse, warm, &its);
        if (reuse)
          continue;
      } else if (reuse) {
        if (!(st = SubstepFactor(sh, c, ta, a, b)))
          st = ChainT(s, sh, i, c, a, b);
        continue;
      } else {
        memcpy(sh->bold, b, sizeof(double) * (size_t)q);
        if (!(st = SubstepStart(sh, c, h, ta, a, b, warm)) && !(st = SubstepSolve(sh, c, ta, a, b, &its)) && sens)
          st = ChainT(s, sh, i, c, a, b);
      }
      sh->its[j][0]++, sh->its[j][1] += its, sh->its[j][2] = PetscMax(sh->its[j][2], its);
      memcpy(sh->aold, sh->bold, sizeof(double) * (size_t)q);
      if (st)
        PetscCall(HsSolverSetDiagnosis(s, PETSC_FALSE, "segment %d, interval %d, substep %d (fraction %.4f of h%s): %s",
                                       (int)t, (int)k, j + 1, c, c < 0 ? ", backwards" : "",
                                       st == HS_ENOCONV     ? "its Newton did not converge; see -hs_step_max_it, "
                                                              "-hs_step_atol, -hs_step_stol"
                                       : st == HS_ESINGULAR ? "its Newton matrix is singular"
                                                            : "it left the problem's domain"));
    }
  sh->have_traj[i] = (PetscBool)!st;
  *failed          = (PetscBool)(st != 0);
  if (!st)
    PetscCall(PetscArraycpy(end, Point(sh, i, k1), q));
  if (!st && sens)
    PetscCall(PetscArraycpy(end + q, sh->S, q * sh->ws));
  PetscFunctionReturn(0);
}

/* A free T: its value (X's last entry, on the owner of segment M - 1) to every rank, the problem and the
 * discretization (HsSolverShareFinalTime); *bad for a T outside its range. Collective. */
static PetscErrorCode ShareT(HsSolver s, HsO4Shoot *sh, Vec X, PetscBool *bad)
{
  PetscMPIInt        rank;
  PetscInt           nl;
  const PetscScalar *x;
  PetscReal          T = 0;

  PetscFunctionBeginUser;
  if (!sh->ft)
    PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  PetscCall(VecGetLocalSize(X, &nl));
  PetscCall(VecGetArrayRead(X, &x));
  if (rank == sh->seg->last)
    T = x[nl - 1];
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(HsSolverShareFinalTime(s, sh->seg->last, T, bad));
  PetscFunctionReturn(0);
}

/* A free T's row at z_N (the last segment's end) and its direct derivatives g (q + 1: in z_N, in T; 2q + 1 scratch),
 * Tc the terminal rows' direct derivatives in T (2n): H(z_N) = d phi/dT, the transcription's condition (order4.c), or
 * T = T_hold while a cold start holds it; a terminal state that moves with T subtracts sum nu_i dx_T,i/dT
 * (HsO4TerminalT), T in the data adds the integral sh->o.Tsum (TDataSum; its gradient is the segments' Tg). With
 * either, the direct d/dT (g[q], Tc) are left to the differences (sh->fd). gT: 2n + 1 scratch. */
static int FinalTimeRow(HsSolver s, HsO4Shoot *sh, const double *zN, double T, double *f, double *g, double *Tc)
{
  PetscInt n = sh->n, q = sh->q;
  double   H, fT, fTT, *gT = Tc;
  int      st;

  for (PetscInt j = 0; j <= q; j++)
    g[j] = 0;
  if (s->hold_T) {
    *f = T - s->T_hold, g[q] = 1;
    for (PetscInt r = 0; r < 2 * n; r++)
      Tc[r] = 0;
  } else {
    double vT, *gv = g + q + 1;
    if ((st = HsO4HamiltonianGradient(sh->o.o4, s->prob->T, zN, &H, g)) ||
        (st = HsDiscTerminalCostT(s->disc, zN, &fT, gT, &fTT)) || (st = HsO4TerminalT(sh->o.o4, zN, &vT, gv)))
      return st;
    *f = H - fT - vT + (s->prob->data_T ? sh->o.Tsum : 0), g[q] = -fTT;
    for (PetscInt r = 0; r < 2 * n; r++)
      g[r] -= gT[r];
    for (PetscInt r = 0; r < q; r++)
      g[r] -= gv[r];
  }
  for (PetscInt r = 0; r < 2 * n; r++) /* the free terminal rows lambda_r + d phi/dx_r: d^2 phi/dx_r dT */
    Tc[r] = s->prob->xT_fixed[r] || s->hold_T ? 0 : Tc[r];
  return HS_SUCCESS;
}

/* MarchAll's data for MarchLocal: the extra unknowns (alpha, kappa_2; the last segment's) and whether the stored
 * trajectories are X's march. */
typedef struct {
  const PetscScalar *ext;
  PetscBool          reuse;
} MarchCtx;

/* MarchSegment as an HsSegMarchFn. */
static PetscErrorCode MarchLocal(HsSolver s, PetscInt i, const PetscScalar *w, PetscBool sens, void *ctx,
                                 PetscBool *failed)
{
  HsO4Shoot *sh = s->data;
  MarchCtx  *mc = ctx;

  PetscFunctionBeginUser;
  PetscCall(
      MarchSegment(s, sh, i, w, sh->seg->s0 + i == sh->seg->M - 1 ? mc->ext : NULL, (int)sens, (int)mc->reuse, failed));
  PetscFunctionReturn(0);
}

/* The local segments marched from X (with their sensitivities if sens); *dom if a substep failed on some rank. The
 * march of the same X (its id and state) is not repeated: without sens nothing is done, with sens only the substeps'
 * Jacobians along the stored trajectory are evaluated and chained. Collective. */
static PetscErrorCode MarchAll(HsSolver s, Vec X, PetscBool sens, PetscBool *domp)
{
  HsO4Shoot         *sh = s->data;
  const PetscScalar *x;
  PetscBool          same;
  PetscObjectId      id;
  PetscObjectState   state;

  PetscFunctionBeginUser;
  *domp = PETSC_FALSE;
  PetscCall(ShareT(s, sh, X, domp));
  if (*domp) {
    sh->cached = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectGetId((PetscObject)X, &id));
  PetscCall(PetscObjectStateGet((PetscObject)X, &state));
  /* only a Jacobian reuses the march of the residual at the same X: a residual always marches, since the data may
     have changed at the same X (a bounded law's smoothing, a parameter of a continuation) */
  same = (PetscBool)(sens && sh->cached && id == sh->xid && state == sh->xstate);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)s)));
  PetscCall(VecGetArrayRead(X, &x));
  {
    MarchCtx mc = {x + HsSegLayoutLocalOffset(sh->seg, sh->seg->M), same};
    PetscCall(HsSegLayoutMarchAll(sh->seg, s, x, sens, MarchLocal, &mc, domp));
  }
  PetscCall(VecRestoreArrayRead(X, &x));
  sh->cached = (PetscBool) !*domp, sh->xid = id, sh->xstate = state;
  PetscFunctionReturn(0);
}

/* T in the data (not held): sh->o.Tsum, the integral part of T's row over every rank's marched segments, as the
 * transcription's (order4.c, TDataPass): the substeps' c h dH/dT at their midpoints and lambda_0^T dx0/dT. Collective.
 */
static PetscErrorCode TDataSum(HsSolver s, HsO4Shoot *sh, PetscBool *dom)
{
  PetscInt  q = sh->q, n = sh->n;
  PetscReal sum = 0, HT, h = s->prob->T / (PetscReal)s->N;

  PetscFunctionBeginUser;
  if (!s->prob->data_T || s->hold_T)
    PetscFunctionReturn(0);
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0 && !*dom; i++) {
    PetscInt t = sh->seg->s0 + i;
    for (PetscInt k = sh->seg->knots[t]; k < sh->seg->knots[t + 1] && !*dom; k++)
      for (int j = 0; j < 3 && !*dom; j++) {
        const double *a = Point(sh, i, k) + j * q, *b = j < 2 ? a + q : Point(sh, i, k + 1);
        for (PetscInt l = 0; l < q; l++)
          sh->tz[l] = 0.5 * (a[l] + b[l]);
        HsCallStep(HsO4HamiltonianT(sh->o.o4, sh->tz, &HT), dom, "conserving4 free final time (T in the data)", k);
        sum += HsO4Fraction(j) * h * HT;
      }
    for (PetscInt l = 0; !t && s->prob->x0_T && l < 2 * n; l++) /* nu_0 = -lambda_0 */
      sum += Point(sh, 0, 0)[2 * n + l] * s->prob->x0_T[l];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)s)));
  sh->o.Tsum = sum;
  PetscFunctionReturn(0);
}

/* F(X) (HsResidualFn): block t >= 1 the continuity z_end(t - 1) - w_t, block 0 the terminal rows at z_N, added by the
 * ranks that march the segments. Collective. */
/* Constraints: the end's 2n + ni rows at z_end into R: HsO4ConsTerminal with ext (alpha or beta2, then kappa_2 or
 * beta1; beta1_l = 0 where ext[nc + l] is the dropped kappa_2,l: ConsDrops), then with 'conserved:' the ni rows
 * c_l . lambda_p and the momentum rows relaxed by gamma = ext[c2 ..] (HsO4ConsInvariantEnd). Rz not NULL: their
 * gradients in z_end (Rz, (2n + ni) x q) and ext's direct ones (Rd, (2n + ni) x (c2 + ni)). */
static int EndRows(HsO4Shoot *sh, const double *end, const double *ext, double *R, double *Rz, double *Rd)
{
  int     n = (int)sh->n, q = (int)sh->q, nc = (int)sh->nc, c2 = (int)sh->c2, ni = (int)sh->ni, m = c2 + ni, st;
  int     fq = HsO4ConsFreeCoordinates(sh->o.o4);
  double *ex = sh->ex, *Ra = ex + m, *Rg = Ra + 2 * n * c2, *Iz = Rg + 2 * n * ni;

  memcpy(ex, ext, sizeof(double) * (size_t)m);
  for (int l = 0; fq && l < nc; l++)
    if (sh->drop[l])
      ex[nc + l] = 0;
  if ((st = HsO4ConsTerminal(sh->o.o4, end, ex, R, Rz, Ra)) ||
      (ni && (st = HsO4ConsInvariantEnd(sh->o.o4, end, ex + c2, R, Rz, Rg, R + 2 * n, Iz))))
    return st;
  for (int r = 0; Rz && r < 2 * n + ni; r++) {
    for (int c = 0; c < m; c++) /* a dropped kappa_2,l's column: none directly (beta1_l is 0) */
      Rd[r * m + c] = r >= 2 * n      ? 0
                      : c >= c2       ? Rg[r * ni + c - c2]
                      : fq && c >= nc && sh->drop[c - nc] ? 0
                                                          : Ra[r * c2 + c];
    for (int c = 0; r >= 2 * n && c < q; c++)
      Rz[r * q + c] = Iz[(r - 2 * n) * q + c];
  }
  return HS_SUCCESS;
}

static PetscErrorCode Residual(HsSolver s, Vec X, Vec F, PetscBool *domp)
{
  HsO4Shoot         *sh = s->data;
  PetscInt           q = sh->q, n = sh->n, *idx;
  PetscScalar       *v;
  const PetscScalar *x;

  PetscFunctionBeginUser;
  PetscCall(MarchAll(s, X, PETSC_FALSE, domp));
  if (*domp)
    PetscFunctionReturn(0);
  PetscCall(TDataSum(s, sh, domp));
  PetscCall(PetscMalloc2(q, &idx, q, &v));
  PetscCall(VecSet(F, 0));
  PetscCall(VecGetArrayRead(X, &x));
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++) {
    PetscInt      t   = sh->seg->s0 + i;
    const double *end = sh->Send + i * (q + q * sh->ws);
    PetscCall(HsSegLayoutAddMatching(sh->seg, F, t, x, end, idx, v)); /* - w_t, + z_end into block t + 1 */
    if (!t && sh->nc) { /* constraints: the start rows at z_0 (the first 2nc rows) */
      HsCallStep(HsO4ConsStart(sh->o.o4, Point(sh, 0, 0), v, NULL), domp, "conserving4 start rows", 0);
      for (PetscInt j = 0; j < sh->c2; j++)
        idx[j] = j;
      PetscCall(VecSetValues(F, sh->c2, idx, v, ADD_VALUES));
    }
    if (t == sh->seg->M - 1) {
      HsCallStep(sh->nc ? EndRows(sh, end, x + HsSegLayoutLocalOffset(sh->seg, sh->seg->M), v, NULL, NULL)
                        : HsO4Terminal(sh->o.o4, end, v, NULL),
                 domp, "conserving4 terminal rows", s->N);
      for (PetscInt j = 0; j < 2 * n + sh->ni; j++) /* 'conserved:' its ni rows after them */
        idx[j] = HsSegLayoutRowOffset(sh->seg, sh->seg->M) + j;
      PetscCall(VecSetValues(F, 2 * n + sh->ni, idx, v, ADD_VALUES));
      if (sh->ft) { /* T's row (the last row, as T is the last unknown; here) */
        PetscInt nl;
        PetscCall(VecGetLocalSize(X, &nl));
        HsCallStep(FinalTimeRow(s, sh, end, x[nl - 1], v, sh->tg, sh->tc), domp, "conserving4 free final time row",
                   s->N);
        PetscCall(VecSetValue(F, HsSegLayoutRowOffset(sh->seg, sh->seg->M) + 2 * n, v[0], ADD_VALUES));
      }
    }
  }
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecAssemblyBegin(F));
  PetscCall(VecAssemblyEnd(F));
  PetscCall(PetscFree2(idx, v));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, domp, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)s)));
  PetscFunctionReturn(0);
}

/* The largest growth rho(|dz_end/dz_start|) over the segments (HsShootPerronGrowth) into the results, the largest
 * entry into egrowth; beyond max_growth a diagnosis and *too_large (HsShootGrowthReduce). Collective. */
static PetscErrorCode GrowthCheck(HsSolver s, HsO4Shoot *sh, PetscBool *too_large)
{
  PetscInt   q = sh->q;
  PetscReal *P, *u, rho, emax = 1;
  double     g   = 1;
  int        seg = -1;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(q * q, &P, q, &u));
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++) {
    const PetscReal *S = sh->Send + i * (q + q * sh->ws) + q;
    rho                = PETSC_MAX_REAL;
    for (PetscInt j = 0; j < q * q; j++) /* the z columns (not a free T's) */
      P[j] = PetscAbsReal(S[(j / q) * sh->ws + j % q]), emax = PetscMax(emax, P[j]);
    if (!PetscIsInfOrNanReal(emax))
      PetscCall(HsShootPerronGrowth(q, P, sh->perron + i * q, u, sh->max_growth, &rho));
    if (rho > g || PetscIsInfOrNanReal(rho))
      g = PetscIsInfOrNanReal(rho) ? PETSC_MAX_REAL : rho, seg = (int)(sh->seg->s0 + i);
  }
  PetscCall(PetscFree2(P, u));
  PetscCall(HsShootGrowthReduce(s, sh->seg->knots, sh->seg->M, sh->max_growth, g, seg, emax, &sh->egrowth, too_large));
  PetscFunctionReturn(0);
}

/* Local segment i's entries of the outer Jacobian: -I on its own block (t >= 1); dz_end/dw_t (the columns of block
 * t: segment 0's lambda_0 only) and, with a free T, dz_end/dT in block t + 1's rows; for the last segment the
 * terminal rows' dR/dz_N dz_N/d(w_t, T) (plus their direct d/dT) and T's row, the last rows. idx, rows: q + 1
 * each; prod: 3 q (q + 1) scratch. */
static PetscErrorCode SegmentJacobian(HsSolver s, HsO4Shoot *sh, Mat P, PetscInt i, PetscInt *idx, PetscInt *rows,
                                      PetscReal *prod)
{
  PetscInt t = sh->seg->s0 + i, q = sh->q, n = sh->n, ws = sh->ws, wt = HsSegLayoutBlockSize(sh->seg, t),
           o = HsSegLayoutBlockOffset(sh->seg, t), c0 = q - wt, nc = wt + (sh->fd ? 0 : sh->ft); /* fd: TColumn's */
  const double *end = sh->Send + i * (q + q * ws), *S = end + q;
  double       *Rz = prod + q * (q + 1), *R = Rz + q * q, f; /* the terminal rows and their Jacobian (after prod's) */

  PetscFunctionBeginUser;
  for (PetscInt j = 0; j < nc; j++) /* w_t's columns, then T's */
    idx[j] = j < wt ? o + j : s->iT;
  for (PetscInt r = 0; t < sh->seg->M - 1 && r < q; r++)
    for (PetscInt j = 0; j < nc; j++)
      prod[r * nc + j] = S[r * ws + (j < wt ? c0 + j : q)];
  PetscCall(HsSegLayoutAddMatchingJacobian(sh->seg, P, t, nc, idx, prod, rows)); /* -I, dz_end/d(w_t, T) */
  if (t < sh->seg->M - 1)
    PetscFunctionReturn(0);
  if (sh->nc) /* constraints: their terminal rows (ConsJacobianRows) */
    PetscFunctionReturn(0);
  PetscCheck(!HsO4Terminal(sh->o.o4, end, R, Rz), PETSC_COMM_SELF, PETSC_ERR_LIB, "the terminal rows failed");
  PetscCheck(!sh->ft || !FinalTimeRow(s, sh, end, s->prob->T, &f, sh->tg, sh->tc), PETSC_COMM_SELF, PETSC_ERR_LIB,
             "the free final time's row failed");
  for (PetscInt r = 0; r < 2 * n + sh->ft; r++) { /* the terminal rows, then T's */
    const double *dz = r < 2 * n ? Rz + r * q : sh->tg;
    rows[r]          = HsSegLayoutRowOffset(sh->seg, sh->seg->M) + r; /* the terminal rows, T's */
    for (PetscInt j = 0; j < nc; j++) {
      double v = j < wt ? 0 : r < 2 * n ? sh->tc[r] : sh->tg[q]; /* the direct d/dT */
      for (PetscInt l = 0; l < q; l++)
        v += dz[l] * S[l * ws + (j < wt ? c0 + j : q)];
      prod[r * nc + j] = v;
    }
  }
  PetscCall(MatSetValues(P, 2 * n + sh->ft, rows, nc, idx, prod, ADD_VALUES));
  PetscFunctionReturn(0);
}

/* A free T with sh->fd: T's column from the differences C (every local row), and with T in the data (not held) each
 * local segment's part of T's row, Tg in the columns of its w_t (segment 0: lambda_0, which also takes dx0/dT).
 * Not collective (entries added from any rank). */
static PetscErrorCode TColumn(HsSolver s, HsO4Shoot *sh, Mat P, Vec C)
{
  PetscInt           lo, hi, rT = HsSegLayoutRowOffset(sh->seg, sh->seg->M) + 2 * sh->n, *idx;
  const PetscScalar *c;
  PetscReal         *v;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(C, &lo, &hi));
  PetscCall(VecGetArrayRead(C, &c));
  for (PetscInt r = lo; r < hi; r++)
    PetscCall(MatSetValue(P, r, s->iT, c[r - lo], ADD_VALUES));
  PetscCall(VecRestoreArrayRead(C, &c));
  if (!s->prob->data_T || s->hold_T)
    PetscFunctionReturn(0);
  PetscCall(PetscMalloc2(sh->q, &idx, sh->q, &v));
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++) {
    PetscInt t = sh->seg->s0 + i, wt = HsSegLayoutBlockSize(sh->seg, t), c0 = sh->q - wt;
    for (PetscInt j = 0; j < wt; j++)
      idx[j] = HsSegLayoutBlockOffset(sh->seg, t) + j,
      v[j]   = sh->Tg[i * sh->ws + c0 + j] + (!t && s->prob->x0_T ? s->prob->x0_T[j] : 0);
    PetscCall(MatSetValues(P, 1, &rT, wt, idx, v, ADD_VALUES));
  }
  PetscCall(PetscFree2(idx, v));
  PetscFunctionReturn(0);
}

/* Constraints: local segment i's rows of the outer Jacobian beyond SegmentJacobian's: segment 0 the start rows at z_0
 * (the first 2nc rows; columns lambda_0), the last segment the terminal rows q_N - q_T, p_N - p_T - G(q_T)^T alpha:
 * dR/dz_N dz_N/d(w_t, kappa_2) and their direct dR/dalpha (ext: alpha, kappa_2). */
static PetscErrorCode ConsJacobianRows(HsO4Shoot *sh, Mat P, PetscInt i, const PetscScalar *ext)
{
  PetscInt t = sh->seg->s0 + i, q = sh->q, n = sh->n, nc = sh->nc, ws = sh->ws, wt = HsSegLayoutBlockSize(sh->seg, t),
           c0      = q - wt;
  PetscInt      e0 = HsSegLayoutBlockOffset(sh->seg, sh->seg->M), m = 2 * nc + sh->ni, nco = wt + m, ne = 2 * n + sh->ni;
  PetscInt     *idx, *rows;
  PetscReal    *R, *Rz, *Ra, *prod;
  const double *end = sh->Send + i * (q + q * ws), *S = end + q;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc6(q, &R, q * q, &Rz, q * m + 1, &Ra, ne * nco + q * q, &prod, nco + q, &idx, q, &rows));
  if (!t) { /* the start rows: z_0 = (x0, lambda_0), lambda_0 the columns 0 .. 2n */
    PetscCheck(!HsO4ConsStart(sh->o.o4, Point(sh, 0, 0), R, Rz), PETSC_COMM_SELF, PETSC_ERR_LIB,
               "the start rows failed");
    for (PetscInt r = 0; r < sh->c2; r++) {
      rows[r] = r;
      for (PetscInt c = 0; c < 2 * n; c++)
        prod[r * 2 * n + c] = Rz[r * q + 2 * n + c], idx[c] = c;
    }
    PetscCall(MatSetValues(P, sh->c2, rows, 2 * n, idx, prod, ADD_VALUES));
  }
  if (t == sh->seg->M - 1) {
    PetscCheck(!EndRows(sh, end, ext, R, Rz, Ra), PETSC_COMM_SELF, PETSC_ERR_LIB, "the terminal rows failed");
    for (PetscInt j = 0; j < nco; j++) /* w_t's columns, then ext's (alpha, kappa_2 or beta1, gamma) */
      idx[j] = j < wt ? HsSegLayoutBlockOffset(sh->seg, t) + j : e0 + j - wt;
    for (PetscInt r = 0; r < ne; r++) {
      rows[r] = HsSegLayoutRowOffset(sh->seg, sh->seg->M) + r;
      for (PetscInt j = 0; j < nco; j++) {
        PetscInt e = j - wt, chain = j < wt || (e >= nc && e < 2 * nc); /* w_t and ext[nc .. 2nc) reach z_end */
        double   v = j < wt ? 0 : Ra[r * m + e];                            /* direct: ext's */
        for (PetscInt l = 0; chain && l < q; l++)
          v += Rz[r * q + l] * S[l * ws + (j < wt ? c0 + j : q + sh->ft + e - nc)];
        prod[r * nco + j] = v;
      }
    }
    PetscCall(MatSetValues(P, ne, rows, nco, idx, prod, ADD_VALUES));
  }
  PetscCall(PetscFree6(R, Rz, Ra, prod, idx, rows));
  PetscFunctionReturn(0);
}

/* The exact outer Jacobian from the segments' sensitivities; a failed march or a growth beyond -hs_shoot_max_growth
 * is a Jacobian domain error. Collective. */
static PetscErrorCode Jacobian(SNES snes, Vec X, Mat Jm, Mat P, void *ctx)
{
  HsSolver   s  = ctx;
  HsO4Shoot *sh = s->data;
  PetscInt   q  = sh->q, *idx, *rows;
  PetscReal *prod;
  PetscBool  dom = PETSC_FALSE, fdom = PETSC_FALSE;
  Vec        C = NULL;

  PetscFunctionBeginUser;
  if (sh->fd) { /* before the march with sensitivities: the column marches twice at T -+ dT */
    PetscCall(VecDuplicate(X, &C));
    PetscCall(HsSolverFinalTimeColumn(s, X, s->iT, Residual, C, &fdom));
  }
  PetscCall(MarchAll(s, X, PETSC_TRUE, &dom));
  dom = (PetscBool)(dom || fdom);
  if (!dom)
    PetscCall(GrowthCheck(s, sh, &dom));
  PetscCall(MatZeroEntries(P));
  if (!dom) {
    PetscCall(PetscLogEventBegin(HS_SHOOT_ASSEMBLY, 0, 0, 0, 0));
    PetscCall(PetscMalloc3(q + 1, &idx, q + 1, &rows, 3 * q * (q + 1), &prod));
    for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++)
      PetscCall(SegmentJacobian(s, sh, P, i, idx, rows, prod));
    PetscCall(PetscFree3(idx, rows, prod));
    if (sh->fd)
      PetscCall(TColumn(s, sh, P, C));
    if (sh->nc) { /* constraints: the start and terminal rows (alpha and kappa_2: X's last 2nc, on the last owner) */
      const PetscScalar *x;
      PetscCall(VecGetArrayRead(X, &x));
      for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0; i++)
        PetscCall(ConsJacobianRows(sh, P, i, x + HsSegLayoutLocalOffset(sh->seg, sh->seg->M)));
      PetscCall(VecRestoreArrayRead(X, &x));
    }
    PetscCall(PetscLogEventEnd(HS_SHOOT_ASSEMBLY, 0, 0, 0, 0));
  }
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  if (Jm != P) {
    PetscCall(MatAssemblyBegin(Jm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jm, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(VecDestroy(&C));
  if (dom)
    PetscCall(SNESSetJacobianDomainError(snes));
  PetscFunctionReturn(0);
}

/* Local segment i's largest substep defect |H(b, tb) - H(a, ta) - Dt| (v[0]) and |H| (v[1]) from its stored march,
 * H at its start and end into Hse (2 values per segment). */
static int SegmentDefects(HsSolver s, HsO4Shoot *sh, PetscInt i, PetscReal *v, PetscReal *Hse)
{
  PetscInt t = sh->seg->s0 + i, q = sh->q;
  double   Ha, Hb, L, W, Dt;
  int      st;

  for (PetscInt k = sh->seg->knots[t]; k < sh->seg->knots[t + 1]; k++)
    for (int j = 0; j < 3; j++) {
      const double *a = Point(sh, i, k) + j * q, *b = j < 2 ? a + q : Point(sh, i, k + 1);
      if ((st = HsO4Hamiltonian(sh->o.o4, HsOrder4StageTime(s, k, j), a, &Ha)) ||
          (st = HsO4Hamiltonian(sh->o.o4, j < 2 ? HsOrder4StageTime(s, k, j + 1) : HsOrder4StageTime(s, k + 1, 0), b,
                                &Hb)) ||
          (st = HsO4SubstepCost(sh->o.o4, HsO4Fraction(j), HsOrder4StageTime(s, k, j), a, b, &L, &W, &Dt)))
        return st;
      v[0] = PetscMax(v[0], PetscAbsReal(Hb - Ha - Dt)),
      v[1] = PetscMax(v[1], PetscMax(PetscAbsReal(Ha), PetscAbsReal(Hb)));
      if (k == sh->seg->knots[t] && !j)
        Hse[2 * t] = Ha;
      if (k == sh->seg->knots[t + 1] - 1 && j == 2)
        Hse[2 * t + 1] = Hb;
    }
  return PetscIsInfOrNanReal(v[0] + v[1]) ? HS_EDOM : HS_SUCCESS;
}

/* The conserved op: the largest defect of H over the substeps of the march from X and over the segment boundaries
 * (|H(z_end(t)) - H(w_{t+1})|: the matching residual's share), over max(1, max |H|); -1 if a march fails. Collective.
 */
static PetscErrorCode Conserved(HsSolver s, Vec X, PetscReal *m)
{
  HsO4Shoot *sh   = s->data;
  PetscReal  v[3] = {0, 0, 0}, *Hse;
  PetscBool  dom;

  PetscFunctionBeginUser;
  *m = -1;
  PetscCall(MarchAll(s, X, PETSC_FALSE, &dom));
  if (dom)
    PetscFunctionReturn(0);
  PetscCall(PetscCalloc1(2 * sh->seg->M, &Hse));
  for (PetscInt i = 0; i < sh->seg->s1 - sh->seg->s0 && !v[2]; i++)
    v[2] = SegmentDefects(s, sh, i, v, Hse) ? 1 : 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, Hse, (PetscMPIInt)(2 * sh->seg->M), MPIU_REAL, MPIU_SUM,
                             PetscObjectComm((PetscObject)s)));
  for (PetscInt t = 0; t + 1 < sh->seg->M; t++) /* the same on every rank */
    v[0] = PetscMax(v[0], PetscAbsReal(Hse[2 * t + 1] - Hse[2 * t + 2]));
  PetscCall(PetscFree(Hse));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)s)));
  if (!v[2])
    *m = v[0] / PetscMax(1, v[1]);
  PetscFunctionReturn(0);
}

/* Local segment i's part of the guess g (the whole transcription guess): its stored trajectory (the substeps' first
 * Newton iterates come from its increments) and its outer unknowns in x (this rank's part of X); with segment M - 1
 * also the extra unknowns (HsSegGuessFn). */
static PetscErrorCode GuessSegment(HsSolver s, PetscInt i, const PetscScalar *g, PetscScalar *x, void *ctx)
{
  HsO4Shoot *sh = s->data;
  PetscInt   n = sh->n, q = sh->q, t = sh->seg->s0 + i, k0 = sh->seg->knots[t], D = sh->o.D;
  PetscInt   o = HsSegLayoutLocalOffset(sh->seg, t), e = HsSegLayoutLocalOffset(sh->seg, sh->seg->M);

  PetscFunctionBeginUser;
  (void)ctx;
  for (PetscInt k = k0; k <= sh->seg->knots[t + 1];
       k++) { /* the stages (and with constraints the kappa) of each point */
    PetscCall(PetscArraycpy(Point(sh, i, k), g + k * D, 3 * q));
    if (sh->nc)
      PetscCall(PetscArraycpy(KapPoint(sh, i, k), g + k * D + 3 * q, 3 * sh->c2));
  }
  PetscCall(PetscArraycpy(x + o, g + k0 * D + (t ? 0 : 2 * n), HsSegLayoutBlockSize(sh->seg, t)));
  sh->have_traj[i] = PETSC_TRUE;
  if (sh->nc && t == sh->seg->M - 1) { /* alpha or beta2 (point N's slot), the last substep's kappa_2 or beta1 */
    PetscCheck(!ConsDrops(sh, g + (s->N - 1) * D + 2 * q), PETSC_COMM_SELF, PETSC_ERR_LIB,
               "the end's constraints failed at the guess");
    for (PetscInt j = 0; j < sh->nc; j++) {
      x[e + j]          = g[s->N * D + 3 * q + 2 * sh->c2 + j];
      x[e + sh->nc + j] = !sh->drop[j] ? g[s->N * D + 3 * q + 2 * sh->c2 + sh->nc + j]
                                       : g[(s->N - 1) * D + 3 * q + 2 * sh->c2 + sh->nc + j];
    }
    for (PetscInt l = 0; l < sh->ni; l++) /* gamma: point N's slots O4_GAM (z_{N,2}'s dummies) */
      x[e + sh->c2 + l] = g[s->N * D + O4_GAM(q) + l];
  }
  if (sh->ft && t == sh->seg->M - 1) /* a free T's start */
    x[e] = HsSolverStartT(s);
  PetscFunctionReturn(0);
}

/* The guess: the transcription's (order4.c, on its DMDA), spread over the local segments (GuessSegment).
 * Collective. */
static PetscErrorCode Guess(HsSolver s, Vec X)
{
  HsO4Shoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(HsOrder4Guess(s, sh->Xfull));
  PetscCall(HsSegLayoutScatterGuess(sh->seg, s, sh->Xfull, X, GuessSegment, NULL));
  sh->cached = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The whole trajectory of a march at the solution on the DMDA (point k_t: w_t; point N: the last segment's end, its
 * stage slots 0), then the transcription's node layout and per-point values. Collective. */
/* Point k of local segment i on the DMDA (HsSegPointFn; ctx: the extra unknowns of X, for alpha at point N). */
static PetscErrorCode PointValues(HsSolver s, PetscInt i, PetscInt k, PetscScalar *v, void *ctx)
{
  HsO4Shoot         *sh  = s->data;
  PetscInt           q   = sh->q;
  const PetscScalar *ext = ctx;

  PetscFunctionBeginUser;
  PetscCall(PetscArrayzero(v, sh->o.D));
  PetscCall(PetscArraycpy(v, Point(sh, i, k), k == s->N ? q : 3 * q));
  if (sh->nc && k < s->N) /* the substeps' kappa; point N: alpha */
    PetscCall(PetscArraycpy(v + 3 * q, KapPoint(sh, i, k), 3 * sh->c2));
  if (sh->nc && k == s->N) { /* with free coordinates also beta1 (0 where ext's is the dropped kappa_2: ConsDrops) */
    for (PetscInt l = 0; l < sh->nc; l++) {
      v[3 * q + 2 * sh->c2 + l] = ext[l];
      if (HsO4ConsFreeCoordinates(sh->o.o4) && !sh->drop[l])
        v[3 * q + 2 * sh->c2 + sh->nc + l] = ext[sh->nc + l];
    }
    PetscCall(PetscArraycpy(v + O4_GAM(q), ext + sh->c2, sh->ni)); /* gamma: point N's slots O4_GAM */
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode PostSolve(HsSolver s)
{
  HsO4Shoot         *sh = s->data;
  const PetscScalar *x;
  PetscBool          dom;

  PetscFunctionBeginUser;
  PetscCall(MarchAll(s, s->X, PETSC_FALSE, &dom)); /* the trajectory of X itself (not of a line search's trial; a
                                                      march that fails leaves what it reached) */
  PetscCall(VecGetArrayRead(s->X, &x));
  PetscCall(HsSegLayoutPutPoints(sh->seg, s, sh->Xfull, sh->o.D, PointValues,
                                 (void *)(x + HsSegLayoutLocalOffset(sh->seg, sh->seg->M))));
  PetscCall(VecRestoreArrayRead(s->X, &x));
  PetscCall(HsOrder4PostSolveFrom(s, sh->Xfull));
  for (int j = 0; j < 3; j++)
    PetscCall(PetscInfo(s,
                        "substep %d (fraction %.4f): %" PetscInt_FMT
                        " solves, %.2f Newton updates each, at most %" PetscInt_FMT "\n",
                        j + 1, (double)HsO4Fraction(j), sh->its[j][0],
                        sh->its[j][0] ? (double)sh->its[j][1] / (double)sh->its[j][0] : 0.0, sh->its[j][2]));
  PetscFunctionReturn(0);
}

/* The scheme on this solve's discretization (order4.c); the stored march no longer belongs to it. Collective. */
static PetscErrorCode PreSolve(HsSolver s)
{
  PetscFunctionBeginUser;
  ((HsO4Shoot *)s->data)->cached = PETSC_FALSE;
  PetscCall(HsOrder4PreSolve(s));
  PetscFunctionReturn(0);
}

static PetscErrorCode Describe(HsSolver s, char *buf, size_t len)
{
  HsO4Shoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(buf, len,
                          "multiple shooting with %" PetscInt_FMT
                          " segment%s, conserving4 (triple jump of the Gonzalez "
                          "discrete gradient of H)",
                          sh->seg->M, sh->seg->M > 1 ? "s" : ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode View(HsSolver s, PetscViewer v)
{
  HsO4Shoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(HsOrder4View(s, v));
  if (s->res.sensitivity_growth > 0)
    PetscCall(PetscViewerASCIIPrintf(v,
                                     "  sensitivity growth %.3e   (largest segment map dz_end/dz_start in the best "
                                     "scaling of the unknowns; largest entry %.1e)\n",
                                     (double)s->res.sensitivity_growth, (double)sh->egrowth));
  PetscFunctionReturn(0);
}

/* summary.json: the transcription's "conserving4" member, "sensitivity_growth", "sensitivity_entry_max" ("segments":
 * output.c's) */
static PetscErrorCode WriteSummary(HsSolver s, FILE *f)
{
  HsO4Shoot *sh = s->data;
  PetscReal  g = s->res.sensitivity_growth, e = sh->egrowth;

  PetscFunctionBeginUser;
  PetscCall(HsOrder4WriteSummary(s, f));
  HsShootGrowthJSON(f, g, e);
  PetscFunctionReturn(0);
}

static PetscErrorCode Destroy(HsSolver s)
{
  HsO4Shoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(HsOrder4DestroyData(&sh->o));
  PetscCall(VecDestroy(&sh->Xfull));
  PetscCall(HsSegLayoutDestroy(&sh->seg));
  PetscCall(PetscFree2(sh->traj, sh->have_traj));
  PetscCall(PetscFree4(sh->S, sh->S2, sh->Send, sh->perron));
  PetscCall(PetscFree6(sh->F, sh->Fa, sh->Fb, sh->db, sh->aold, sh->bold));
  PetscCall(PetscFree2(sh->tg, sh->tc));
  PetscCall(PetscFree2(sh->Tg, sh->tz));
  PetscCall(PetscFree6(sh->kap, sh->A, sh->y, sh->Fk, sh->g, sh->gz));
  PetscCall(PetscFree3(sh->drop, sh->gi, sh->ki));
  PetscCall(PetscFree(sh->ex));
  if (sh->permA)
    gsl_permutation_free(sh->permA);
  if (sh->perm)
    gsl_permutation_free(sh->perm);
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Storage of the local segments and the substeps' scratch. */
static PetscErrorCode Allocate(HsO4Shoot *sh)
{
  PetscInt q = sh->q, nloc = sh->seg->s1 - sh->seg->s0, pts;

  PetscFunctionBeginUser;
  /* blocks: lambda_0 (2n) for segment 0, z_{k_t} (q); a free T, alpha and kappa_2 after them; points k_t .. k_{t+1} */
  PetscCall(HsSegLayoutSetBlocks(sh->seg, 2 * sh->n, q, sh->ft + sh->c2 + sh->ni, 0, 3 * q));
  PetscCall(HsSegLayoutSetHeadRows(sh->seg, sh->c2)); /* the start rows of constraints, else none */
  pts = sh->seg->toff[nloc];
  PetscCall(PetscCalloc2(pts * 3 * q + 1, &sh->traj, nloc + 1, &sh->have_traj));
  PetscCall(PetscCalloc4(q * sh->ws, &sh->S, q * sh->ws, &sh->S2, nloc * (q + q * sh->ws) + 1, &sh->Send, nloc * q + 1,
                         &sh->perron));
  PetscCall(PetscCalloc6(q, &sh->F, q * q, &sh->Fa, q * q, &sh->Fb, q, &sh->db, q, &sh->aold, q, &sh->bold));
  PetscCall(PetscCalloc2(2 * q + 1, &sh->tg, q / 2 + 1, &sh->tc));
  PetscCall(PetscCalloc2(nloc * sh->ws + 1, &sh->Tg, 2 * q, &sh->tz));
  sh->perm = gsl_permutation_alloc((size_t)q);
  PetscCheck(sh->perm, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
  if (sh->nc) { /* constraints: the kappa of the stored marches and the augmented substep system */
    PetscInt r = q + sh->c2;
    PetscCall(PetscCalloc6(pts * 3 * sh->c2 + 1, &sh->kap, r * r, &sh->A, r, &sh->y, q * sh->c2, &sh->Fk, sh->c2,
                           &sh->g, sh->c2 * q, &sh->gz));
    PetscCall(PetscCalloc3(sh->nc, &sh->drop, sh->c2, &sh->gi, sh->c2, &sh->ki));
    PetscCall(PetscCalloc1(sh->c2 + sh->ni + 2 * sh->n * (sh->c2 + sh->ni) + sh->ni * q, &sh->ex));
    sh->permA = gsl_permutation_alloc((size_t)r); /* the largest substep system; views of it for smaller ones */
    PetscCheck(sh->permA, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
  }
  PetscFunctionReturn(0);
}

/* The transcription's layout (DMDA, Xnodes, per-point values) for the output, the segments over the ranks, X, F, the
 * outer Jacobian (entries added from any rank) and its linear solver (HsSegLayoutSetUpSolver). Collective. */
static PetscErrorCode SetUp(HsSolver s)
{
  HsO4Shoot *sh = s->data;

  PetscFunctionBeginUser;
  PetscCall(HsOrder4CreateLayout(s));
  sh->n = s->prob->n, sh->q = 4 * s->prob->n, sh->ft = s->prob->free_T ? 1 : 0, sh->nc = s->prob->nc;
  sh->fd = (PetscBool)(sh->ft && (s->prob->data_T || s->prob->xT_T));
  sh->c2 = 2 * sh->nc, sh->ws = sh->q + sh->ft + sh->nc, sh->ni = sh->nc ? s->prob->ncinv : 0; /* constraints: the columns of the last kappa_2 */
  PetscCall(DMCreateGlobalVector(sh->o.da, &sh->Xfull));
  PetscCall(Allocate(sh)); /* the layout: a free T, alpha, kappa_2 the last unknowns, with segment M - 1 */
  PetscCall(HsOrder4PreSolve(s));
  /* substeps looser than the defaults make the residual's evaluation error as large as the user allows: a noise floor
     then vouches for nothing (as for the second-order march, shooting.c) */
  s->noise_vouch = (PetscBool)(sh->atol <= HS_MARCH_ATOL_DEFAULT && sh->stol <= HS_MARCH_STOL_DEFAULT &&
                               sh->max_it >= HS_MARCH_MAX_IT_DEFAULT);
  if (sh->ft)
    s->iT = HsSegLayoutBlockOffset(sh->seg, sh->seg->M);
  PetscCall(HsSegLayoutSetUpSolver(sh->seg, s, 2 * sh->q + sh->ft + sh->c2 + sh->ni, Jacobian));
  PetscFunctionReturn(0);
}

/*@ HsO4ShootSetUp - makes s, a shooting solver with -hs_scheme conserving4, the multiple shooting of the fourth-order
    conserving scheme (this file's head; docs/theory.md section 8) on M segments between knots (M + 1 nodes, copied),
    its substeps' Newton stopping on atol, stol, max_it (-hs_step_*), a segment's growth limited by max_growth
    (-hs_shoot_max_growth), and sets it up (bvp/impls internal; the shooting formulation's set-up calls it). Frees the
    shooting's data, takes its own and fills the operations. Collective. @*/
PetscErrorCode HsO4ShootSetUp(HsSolver s, PetscInt M, const PetscInt *knots, PetscReal atol, PetscReal stol,
                              PetscInt max_it, PetscReal max_growth)
{
  HsO4Shoot   *sh;
  HsSegLayout *seg;

  PetscFunctionBeginUser;
  PetscCall(HsSegLayoutCreate(PetscObjectComm((PetscObject)s), M, knots, &seg)); /* knots: the shooting's */
  PetscCall((*s->ops->destroy)(s));
  PetscCall(PetscNew(&sh));
  sh->seg = seg, sh->atol = atol, sh->stol = stol, sh->max_it = max_it, sh->max_growth = max_growth;
  s->data                = sh;
  s->ops->setfromoptions = NULL; /* the shooting's keys were read; its data are gone */
  s->ops->setupksp       = NULL;
  s->ops->resetiterate   = NULL;
  s->ops->setup          = SetUp;
  s->ops->guess          = Guess;
  s->ops->presolve       = PreSolve;
  s->ops->postsolve      = PostSolve;
  s->ops->describe       = Describe;
  s->ops->view           = View;
  s->ops->writesummary   = WriteSummary;
  s->ops->destroy        = Destroy;
  s->ops->residual       = Residual;
  s->ops->diagnostics    = HsOrder4Diagnostics;
  s->ops->conserved      = Conserved;
  PetscCall(SetUp(s));
  PetscFunctionReturn(0);
}
