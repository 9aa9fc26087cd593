/* hamshoot: the fourth-order conserving scheme's substeps (costate/hsorder4.h, docs/theory.md section 8). */
#include "hscontrol.h"
#include "hsdiscimpl.h"
#include "hso4ctrl.h"
#include "hsorder4.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct HsO4_s {
  HsDisc *d;
  int     n, dim, D; /* D = 4n = 2 dim */
  double *v[11];     /* D each */
  double *M[2];      /* D x D each: H's Hessian (GonzalezH), a substep's g (D of M[1]) */
  double *w2[4];     /* dim x dim each */
  double *wd3;       /* dim + 2 dim^2: HsFunctionD3's scratch */
  double *pool;
  /* a configuration-dependent B(q) (GainAt): B (n x m), dB, d2B (the callback's layout), v = B^T lambda_p,
     y = R^{-1} v (the control), W (n x m: row l = dB_l^T lambda_p), RW (row l = R^{-1} W_l) */
  double   *B, *dB, *d2B, *v_, *y, *W, *RW, *bq;
  double    ta, tb;  /* a time-dependent ell enters H as the mean of ell(., ta) and ell(., tb) (EllMean) */
  double   *eg, *eH; /* dim, dim x dim: EllMean's scratch */
  HsO4Ctrl *ctrl; /* controls that enter nonlinearly or a general control cost (P->ctrl; costate/hso4ctrl.h), or NULL */
  double   *cq;   /* 2 (2n + 3n^2): dPsi/dq, the Hessian blocks Hqq, Hql, Hll and f(q, u*), twice (CtrlMean) */
  int       law;  /* bounded controls (HsDisc's bounded): y = u of the law of costate/hscontrol.h at d->ueps, RW_l =
                     U W_l with U = du/ds instead of R^{-1}, the control term psi (docs/controls.md); coupled = 1 (a
                     non-diagonal R, HsControlLawEvalFull): U the full m x m du/ds, else its diagonal (m) */
  int    coupled;
  int    gen;      /* the gain path (GainAt): a B(q) or the law */
  double psi, *du; /* the law's psi and du/ds (m, or m x m if coupled) at the last GainAt */
  /* holonomic constraints (nc > 0; ConsAt): Phi (nc), G (nc x n), Hphi (nc n n), gz (2nc x D: the gradient of
     g(z) = (Phi(q), G(q) lambda_p)), w = gz^T kappa (D), Hw = sum kappa_i Hess g_i (D x D), zbar (D), Mi (dim x dim:
     Hess E, whose p p block is M^{-1}) */
  int     nc;
  double *cpool, *Phi, *Gc, *Hphi, *gz, *cw, *Hw, *zb, *Mi;
  /* the extended class (cx: Phi not quadratic, V or B(q) general; ExtGbar): Phi, G, Hphi at q_a, q_b and qbar, Phi3
     at qbar, psi's gradients there (n each), Hpsi and K at the three points (n x n), c at q_a, q_b, Wb (D x D) */
  int     cx;
  double *xpool;
  /* HsO4CacheBegin .. HsO4CacheEnd: H (and its gradient, cache == 2) at the end point b of the last substep, which is
     the next substep's a (CachedHValGrad); ct: its times (ta, tb), part of the key where H depends on them */
  int     cache, cache_on, tdep;
  double *cz, *cg, cH, ct[2];
  /* a free T in the problem's data (P->data_T; HsO4HamiltonianT): grad E_T (dim), B_T (n m), R_T (m m), u (m),
     R_T u (m), a copy of z (D) */
  double *tp;
};

/* The running cost in H: the mean of ell(x, ta) and ell(x, tb) (one evaluation if ell ignores t), its gradient (g not
 * NULL) and Hessian (Hm not NULL); 0 without ell. */
static int EllMean(HsO4 *o, const double *x, double *e, double *g, double *Hm)
{
  const HsProblem *P   = o->d->prob;
  int              dim = o->dim, two = P->ell.time_dependent && o->ta != o->tb;
  double           t[2] = {o->ta, o->tb}, w = two ? 0.5 : 1, v;

  *e = 0;
  if (g)
    HsZero(dim, g);
  if (Hm)
    HsZero(dim * dim, Hm);
  for (int s = 0; P->ell.f && s < 1 + two; s++) {
    HS_CB(P->ell.f(t[s], x, &v, P->ctx));
    *e += w * v;
    if (g) {
      HS_CB(P->ell.grad(t[s], x, o->eg, P->ctx));
      HsAXPBY(dim, w, o->eg, 1, g);
    }
    if (Hm) {
      HS_CB(P->ell.hess(t[s], x, o->eH, P->ctx));
      HsAXPBY(dim * dim, w, o->eH, 1, Hm);
    }
  }
  return HS_SUCCESS;
}

/* The control term Psi of a force f(q, u) (costate/hso4ctrl.h) at (q, lp) into psi and o->cq: dPsi/dq (n), (order 2)
 * the Hessian blocks Hqq, Hql, Hll (n^2 each), then f(q, u*) (n); for a time-dependent force or control cost the mean
 * of Psi(., ta) and Psi(., tb) (two maximizations; as EllMean, docs/controls.md). */
static int CtrlMean(HsO4 *o, const double *q, const double *lp, int order, double *psi)
{
  int    n = o->n, sz = 2 * n + 3 * n * n, two = o->d->prob->ctrl_time_dependent && o->ta != o->tb;
  double t[2] = {o->ta, o->tb}, p[2];

  for (int s = 0; s < 1 + two; s++) {
    double *c = o->cq + s * sz, *Hqq = c + n;
    HsO4CtrlSetTime(o->ctrl, t[s]);
    HS_CHK(HsO4CtrlEval(o->ctrl, q, lp, order, &p[s], c, Hqq + 3 * n * n, Hqq, Hqq + n * n, Hqq + 2 * n * n));
    HsCopy(n, HsO4CtrlForce(o->ctrl), Hqq + 3 * n * n);
  }
  *psi = two ? 0.5 * (p[0] + p[1]) : p[0];
  for (int i = 0; two && i < sz; i++)
    o->cq[i] = 0.5 * (o->cq[i] + o->cq[sz + i]);
  return HS_SUCCESS;
}

/* B(q) and the vectors of a configuration-dependent B at (q, lambda_p) (order 0: B, v, y; 1: also W, RW; 2: also
 * d2B). Uses R^{-1} of the discretization (costate/gain.c). */
static int GainAt(HsO4 *o, const double *q, const double *lp, int order)
{
  const HsProblem *P = o->d->prob;
  int              n = o->n, m = P->m;

  if (P->Bq)
    HS_CB(P->Bq(q, o->B, order > 0 ? o->dB : NULL, order > 1 ? o->d2B : NULL, P->ctx));
  HsMatTVec(n, m, o->B, lp, o->v_);
  if (o->law && o->coupled) /* bounded: u = the law at s = B^T lambda_p, psi, U = du/ds */
    HS_CHK(HsControlLawEvalFull(P, o->d->ueps, o->v_, o->y, &o->psi, o->du));
  else if (o->law)
    HS_CHK(HsControlLawEval(P, o->d->ueps, o->v_, o->y, &o->psi, o->du));
  else
    HsMatVec(m, m, o->d->Rinv, o->v_, o->y);
  for (int l = 0; l < n && order > 0; l++) {
    for (int j = 0; j < m; j++) {
      double s = 0;
      for (int i = 0; i < n; i++)
        s += o->dB[(i * m + j) * n + l] * lp[i];
      o->W[l * m + j] = s;
    }
    if (o->law && o->coupled)
      HsMatVec(m, m, o->du, o->W + l * m, o->RW + l * m);
    else if (o->law)
      for (int j = 0; j < m; j++)
        o->RW[l * m + j] = o->du[j] * o->W[l * m + j];
    else
      HsMatVec(m, m, o->d->Rinv, o->W + l * m, o->RW + l * m);
  }
  return HS_SUCCESS;
}

/* Why conserving4 refuses a constrained problem (docs/theory.md section 8.1), or NULL: it serves the closed-form class
 * of docs/constrained.md (constant M, quadratic Phi, linear V, affine B: g(z) = (Phi(q), G(q) lambda_p) is quadratic,
 * so its midpoint gradient is a discrete gradient) and, with ExtGbar's discrete gradient of g, the extended class (any
 * M(q), V, Phi, B(q)), with 1/2 u^T R u and a fixed T. The closed-form class takes a terminal cost phi and the end
 * states the second-order scheme takes (all fixed, or all momenta free with any coordinates: HsO4ConsTerminal); the
 * extended class no phi (the file reader refuses it there) and all end states fixed, or the end at rest with free
 * coordinates (HsO4ConsTerminal), with conserved quantities ('conserved:') relaxed as the second-order scheme does
 * (HsO4ConsInvariantEnd; the transcription and multiple shooting, order4shoot.c's EndRows), as many as the file reader
 * takes (ncinv <= n: their multipliers in point N's dummy stage node, order4impl.h's O4_GAM), at rest or, with every
 * coordinate fixed, not (p_N - p_T - G^T alpha - sum gamma_l c_l holds for any p_T: docs/constrained.md, "A fixed end
 * not at rest"). */
static const char *ConsRefusal(const HsProblem *P, const HsDisc *d)
{
  int n = P->n, qfix = 0, pfix = 0, rest = 1, ncm = 0;

  for (int i = 0; i < n; i++)
    qfix += P->xT_fixed[i], pfix += P->xT_fixed[n + i];
  for (int j = 0; j < P->nc; j++) /* at the extended class's rest end only the constraints that move a free coordinate
                                     count: the others are implied by the fixed ones (HsO4ConsImpliedAtEnd) */
    ncm += !P->cons_end_moves || P->cons_end_moves[j];
  for (int i = 0; i < n && pfix == n; i++)
    rest = rest && P->xT[n + i] == 0;
  return (P->cons_extended || !P->const_mass) && (pfix < n || P->phi.f || (qfix < n && !rest))
             ? "holonomic constraints of the extended class (docs/constrained.md: M(q), Phi not quadratic, V not "
               "linear or B not affine) with free terminal momenta, a terminal cost, or free coordinates not at rest"
         : P->ncinv > n ? "more conserved quantities ('conserved:') than coordinates (their directions grad_p I cannot "
                          "be independent; the file reader refuses this first, a problem built in C is checked here)"
         : P->ncinv && !(pfix == n && (rest || qfix == n))
             ? "holonomic constraints with conserved quantities ('conserved:') and free terminal momenta, or free "
               "coordinates at an end not at rest"
         : (pfix && pfix < n) || (pfix && qfix < n && !(rest && (P->cons_extended || !P->const_mass)))
             ? "holonomic constraints with terminal momenta fixed in part or free coordinates with fixed momenta"
         : qfix < n && qfix + ncm > n ? "holonomic constraints and more fixed terminal coordinates and constraints "
                                        "than coordinates"
         : P->ell.f                   ? "holonomic constraints and a running cost ell"
         : P->free_T                  ? "holonomic constraints and a free final time"
         : P->ctrl || d->bounded      ? "holonomic constraints and bounded or nonlinearly entering controls"
                                      : NULL;
}

/* The constraints' scratch (o->cpool). */
static int ConsCreate(HsO4 *o)
{
  int     nc = o->d->prob->nc, n = o->n, D = o->D, dim = o->dim;
  double *p = o->cpool =
      calloc((size_t)(nc + nc * n + nc * n * n + 2 * nc * D + D + D * D + D + dim * dim), sizeof(double));

  if (!p)
    return HS_ENOMEM;
  o->nc   = nc;
  o->Phi  = p, p += nc;
  o->Gc   = p, p += nc * n;
  o->Hphi = p, p += nc * n * n;
  o->gz   = p, p += 2 * nc * D;
  o->cw   = p, p += D;
  o->Hw   = p, p += D * D;
  o->zb   = p, p += D;
  o->Mi   = p;
  o->cx   = o->d->prob->cons_extended != NULL;
  if (o->cx &&
      !(o->xpool = calloc((size_t)(3 * (nc + nc * n + nc * n * n) + nc * n * n * n + 16 * n + 4 * n * n + D * D),
                          sizeof(double))))
    return HS_ENOMEM;
  return HS_SUCCESS;
}

/* Phi, G and Hphi at q, and (gz not NULL) the gradient of g(z) = (Phi(q), G(q) lambda_p) at z (2nc x D, row-major):
 * row i: G_i in q; row nc + i: Hphi_i lambda_p in q, G_i in lambda_p. Returns g (2nc) in g if not NULL. */
static int ConsAt(HsO4 *o, const double *z, double *g, double *gz)
{
  const HsProblem *P  = o->d->prob;
  int              nc = o->nc, n = o->n, D = o->D;
  const double    *lp = z + o->dim + n;

  HS_CB(P->Phi(z, o->Phi, o->Gc, o->Hphi, P->ctx));
  for (int i = 0; g && i < nc; i++)
    g[i] = o->Phi[i], g[nc + i] = HsDot(n, o->Gc + i * n, lp);
  if (!gz)
    return HS_SUCCESS;
  HsZero(2 * nc * D, gz);
  for (int i = 0; i < nc; i++) {
    HsCopy(n, o->Gc + i * n, gz + i * D);
    HsMatVec(n, n, o->Hphi + i * n * n, lp, gz + (nc + i) * D);
    HsCopy(n, o->Gc + i * n, gz + (nc + i) * D + o->dim + n);
  }
  return HS_SUCCESS;
}

double HsO4Fraction(int j) { return j == 1 ? HS_O4_GAMMA2 : HS_O4_GAMMA1; }

int HsO4Create(HsDisc *d, HsO4 **o4, char *msg, int msg_len)
{
  const HsProblem *P = d->prob;
  HsO4            *o;
  int              dim = d->dim, D = 2 * dim;
  /* T in the data with a force f(q, u): f and c never depend on T (refused when the file is read, docs/controls.md),
     so the control term Psi has no explicit T and HsO4HamiltonianT is E_T's and ell_T's; B, R are not used there */
  const char      *why = P->data_T && d->bounded ? "T in the problem's data with bounded controls"
                         : P->data_T && P->ctrl && P->BR_T
                             ? "T in the problem's data in B or R together with a force f(q, u)"
                         : P->ctrl && d->bounded ? "both a force f(q, u) and control bounds"
                         : P->nc                 ? ConsRefusal(P, d)
                                                 : NULL;

  *o4 = NULL;
  if (why) {
    if (msg)
      snprintf(msg, (size_t)msg_len,
               "problem '%s' has %s: -hs_scheme conserving4 does not support it%s (docs/theory.md "
               "section 8%s)",
               P->name, why, P->nc ? "" : " yet", P->nc ? ".1" : "");
    return HS_EFAILED;
  }
  o = calloc(1, sizeof *o);
  if (!o)
    return HS_ENOMEM;
  o->d = d, o->n = P->n, o->dim = dim, o->D = D;
  o->pool = malloc(sizeof(double) *
                   (size_t)(11 * D + 2 * D * D + 4 * dim * dim + dim + 2 * dim * dim + dim + dim * dim + 2 * D));
  if (!o->pool) {
    free(o);
    return HS_ENOMEM;
  }
  {
    double *p = o->pool;
    for (int i = 0; i < 11; i++)
      o->v[i] = p, p += D;
    for (int i = 0; i < 2; i++)
      o->M[i] = p, p += D * D;
    for (int i = 0; i < 4; i++)
      o->w2[i] = p, p += dim * dim;
    o->wd3 = p, p += dim + 2 * dim * dim;
    o->eg  = p, p += dim;
    o->eH  = p, p += dim * dim;
    o->cz  = p, p += D;
    o->cg  = p;
  }
  o->tdep = (P->ell.f && P->ell.time_dependent) || (P->ctrl && P->ctrl_time_dependent);
  o->law = d->bounded, o->gen = P->Bq || o->law, o->coupled = o->law && !HsControlLawDiagonal(P);
  if (o->gen) {
    int     n = P->n, m = P->m;
    double *p = o->bq = calloc((size_t)(n * m * (2 + n + n * n) + 4 * m + m * m + 2 * n * m), sizeof(double));
    if (!p) {
      HsO4Destroy(&o);
      return HS_ENOMEM;
    }
    o->B   = p, p += n * m;
    o->dB  = p, p += n * m * n;
    o->d2B = p, p += n * m * n * n;
    o->v_  = p, p += 2 * m;
    o->y   = p, p += 2 * m;
    o->W   = p, p += n * m;
    o->RW  = p, p += n * m;
    o->du  = p;
    if (!P->Bq) /* a constant B: dB, d2B stay 0 */
      HsCopy(n * m, P->B, o->B);
  }
  if ((P->data_T && !(o->tp = calloc((size_t)(o->dim + P->n * P->m + P->m * P->m + 2 * P->m + D), sizeof(double)))) ||
      (P->ctrl &&
       (!(o->ctrl = HsO4CtrlCreate(P)) || !(o->cq = calloc((size_t)(4 * P->n + 6 * P->n * P->n), sizeof(double))))) ||
      (P->nc && ConsCreate(o))) {
    HsO4Destroy(&o);
    return HS_ENOMEM;
  }
  *o4 = o;
  return HS_SUCCESS;
}

const char   *HsO4Why(const HsO4 *o) { return o->ctrl ? HsO4CtrlWhy(o->ctrl) : ""; }
const double *HsO4Control(const HsO4 *o) { return o->ctrl ? HsO4CtrlControl(o->ctrl) : NULL; }
void          HsO4SetControlRegularization(HsO4 *o, double eps)
{
  if (o->ctrl)
    HsO4CtrlSetRegularization(o->ctrl, eps);
}

void HsO4Destroy(HsO4 **o4)
{
  if (!*o4)
    return;
  free((*o4)->pool);
  free((*o4)->bq);
  HsO4CtrlDestroy(&(*o4)->ctrl);
  free((*o4)->cq);
  free((*o4)->cpool);
  free((*o4)->tp);
  free((*o4)->xpool);
  free(*o4);
  *o4 = NULL;
}

/* The bodies of HValGrad, HHess, CachedHValGrad, GonzalezH, JacobianRow and HsO4Substep take dim = 2n (D = 4n) as an
 * argument and are inlined into instances for n = 1, 2, 3 (HS_O4_DISPATCH) and one for any n, so that the compiler
 * unrolls their loops over 2n and 4n (HsDot, HsMatVec, ... of hsdense.h): the same operations in the same order, so
 * the same bits (no -ffast-math: nothing is reassociated); issue 43: these short loops were about a tenth of the
 * pendulum's conserving4 solve's time. */
#if defined(__GNUC__)
#define HS_O4_INLINE static inline __attribute__((always_inline))
#else
#define HS_O4_INLINE static inline
#endif
#define HS_O4_DISPATCH(dim, CALL) \
  ((dim) == 2 ? CALL(2) : (dim) == 4 ? CALL(4) : (dim) == 6 ? CALL(6) : CALL(dim))

/* H(z), and (g not NULL) its gradient: grad_x H = -grad ell - Hess E JJ lambda, grad_lambda H = P lambda + JJ grad E
 * (P = G R^{-1} G^T, the discretization's GK). Uses v[0..2], w2[0]. dim = o->dim. */
HS_O4_INLINE int HValGradBody(HsO4 *o, const double *z, double *H, double *g, const int dim)
{
  const HsProblem *P = o->d->prob;
  const double    *x = z, *l = z + dim;
  double          *gE = o->v[0], *Pl = o->v[1], *Jl = o->v[2], *HE = o->w2[0], e = 0, Jg, psi = 0;

  HS_CB(P->E.grad(x, gE, P->ctx));
  if (o->ctrl) { /* G u becomes (0, f(q, u*)); the control term Psi (costate/hso4ctrl.h) */
    HS_CHK(CtrlMean(o, x, l + o->n, g ? 1 : 0, &psi));
    HsZero(o->n, Pl);
    HsCopy(o->n, o->cq + o->n + 3 * o->n * o->n, Pl + o->n);
  } else if (o->gen) { /* G(q) u = (0, B(q) y) */
    HS_CHK(GainAt(o, x, l + o->n, g ? 1 : 0));
    HsZero(o->n, Pl);
    HsMatVec(o->n, P->m, o->B, o->y, Pl + o->n);
  } else
    HsMatVec(dim, dim, o->d->GK, l, Pl);
  HsApplyJ(dim, gE, Jl);
  Jg = HsDot(dim, l, Jl);
  if (P->ell.f) /* (EllMean is 0 without ell) */
    HS_CHK(EllMean(o, x, &e, g ? o->v[10] : NULL, NULL)); /* v[10]: its gradient (read only with ell) */
  if (H)
    *H = (o->ctrl ? psi : o->law ? o->psi : 0.5 * HsDot(dim, l, Pl)) - e + Jg;
  if (!g)
    return HS_SUCCESS;
  for (int i = 0; i < dim; i++)
    g[dim + i] = Pl[i] + Jl[i];
  HS_CB(P->E.hess(x, HE, P->ctx));
  HsApplyJ(dim, l, Jl); /* JJ lambda */
  HsMatVec(dim, dim, HE, Jl, g);
  for (int i = 0; i < dim; i++)
    g[i] = -g[i];
  for (int i = 0; P->ell.f && i < dim; i++)
    g[i] -= o->v[10][i];
  for (int q = 0; P->Bq && !o->ctrl && q < o->n; q++) /* d/dq_l of 1/2 lambda_p^T B R^{-1} B^T lambda_p = W_l . y */
    g[q] += HsDot(P->m, o->W + q * P->m, o->y);
  for (int q = 0; o->ctrl && q < o->n; q++) /* the envelope theorem: dPsi/dq at u* */
    g[q] += o->cq[q];
  return HS_SUCCESS;
}

static int HValGrad(HsO4 *o, const double *z, double *H, double *g)
{
#define HS_CALL(d) HValGradBody(o, z, H, g, d)
  return HS_O4_DISPATCH(o->dim, HS_CALL);
#undef HS_CALL
}

/* A configuration-dependent B(q): the terms of 1/2 lambda_p^T K(q) lambda_p, K = B R^{-1} B^T, in the Hessian Hm
 * (D x D; its lambda_p lambda_p block set here, the others added): lambda_p lambda_p: K; q_l lambda_p,i:
 * (dB_l y)_i + (B R^{-1} W_l)_i; q_l q_r: (d2B_lr^T lambda_p) . y + W_l . R^{-1} W_r. Bounded controls (o->law):
 * the same for psi(B^T lambda_p) with U = du/ds for R^{-1} and y = u (a constant B: dB = d2B = 0). */
static int GainHess(HsO4 *o, const double *z, double *Hm)
{
  int           n = o->n, m = o->d->prob->m, dim = o->dim, D = o->D;
  const double *lp = z + dim + n;

  HS_CHK(GainAt(o, z, lp, 2));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int c = 0; c < m; c++)
        for (int e = 0; e < m; e++)
          s += o->B[i * m + c] *
               (o->coupled ? o->du[c * m + e]
                : o->law   ? (c == e) * o->du[c]
                           : o->d->Rinv[c * m + e]) *
               o->B[j * m + e];
      Hm[(dim + n + i) * D + dim + n + j] = s;
    }
  for (int l = 0; l < n; l++)
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < m; j++)
        s += o->dB[(i * m + j) * n + l] * o->y[j] + o->B[i * m + j] * o->RW[l * m + j];
      Hm[l * D + dim + n + i] += s, Hm[(dim + n + i) * D + l] += s;
    }
  for (int l = 0; l < n; l++)
    for (int r = 0; r < n; r++) {
      double s = HsDot(m, o->W + l * m, o->RW + r * m);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
          s += o->d2B[((i * m + j) * n + l) * n + r] * lp[i] * o->y[j];
      Hm[l * D + r] += s;
    }
  return HS_SUCCESS;
}

/* The control term Psi(q, lambda_p) of controls that enter nonlinearly in the Hessian Hm (D x D; added to the q q,
 * q lambda_p, lambda_p q and lambda_p lambda_p blocks; costate/hso4ctrl.h: implicit differentiation at u*). */
static int CtrlHess(HsO4 *o, const double *z, double *Hm)
{
  int     n = o->n, dim = o->dim, D = o->D;
  double *Hqq = o->cq + n, *Hql = Hqq + n * n, *Hll = Hql + n * n, psi;

  HS_CHK(CtrlMean(o, z, z + dim + n, 2, &psi));
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      Hm[a * D + b] += Hqq[a * n + b];
      Hm[a * D + dim + n + b] += Hql[a * n + b];
      Hm[(dim + n + b) * D + a] += Hql[a * n + b];
      Hm[(dim + n + a) * D + dim + n + b] += Hll[a * n + b];
    }
  return HS_SUCCESS;
}

/* The Hessian of H at z (D x D): xx: -Hess ell + D(Hess E)(x)[JJ^T lambda]; x lambda: -Hess E JJ; lambda x: JJ Hess E;
 * lambda lambda: P. Uses v[2], w2[0..2], wd3. he: w2[0] holds Hess E at z already (HValGrad's with a gradient, at
 * the same point just before: the same callback of the same argument, so the same bits; issue 43). */
HS_O4_INLINE int HHessBody(HsO4 *o, const double *z, int he, double *Hm, const int dim)
{
  const HsProblem *P = o->d->prob;
  const int        D = 2 * dim, n = dim / 2; /* o->n: JJ's blocks (a constant in the instances: loops unrolled) */
  const double    *x = z, *l = z + dim;
  double          *w = o->v[2], *HE = o->w2[0], *T = o->w2[1], *Hl = o->w2[2];

  HsApplyJ(dim, l, w);
  for (int i = 0; i < dim; i++)
    w[i] = -w[i]; /* JJ^T lambda */
  if (!he)
    HS_CB(P->E.hess(x, HE, P->ctx));
  HS_CHK(HsFunctionD3(&P->E, dim, P->ctx, x, w, T, o->wd3));
  if (P->ell.f) {
    double e;
    HS_CHK(EllMean(o, x, &e, NULL, Hl));
  }
  /* the branches on i, j, ell and the block P taken out of the entries' loops (they had been tested per entry, kepler's
     n = 3: 4.4M instructions a solve); each entry the same value: a copy or a negation, T - 0 is T */
  const double *GK = o->gen || o->ctrl ? NULL : o->d->GK, *Hlf = P->ell.f ? Hl : NULL;
  for (int i = 0; i < dim; i++) {
    double       *r0 = Hm + i * D, *r1 = Hm + (dim + i) * D;
    const double *HEi = HE + i * dim, *Ti = T + i * dim;
    /* (JJ HE)_{ij}: row i of JJ picks row i + n (i < n) or minus row i - n */
    const double *HEr = HE + (i < n ? i + n : i - n) * dim;
    for (int j = 0; j < dim; j++)
      r0[j] = Hlf ? Ti[j] - Hlf[i * dim + j] : Ti[j];
    /* -(HE JJ)_{ij}, (HE JJ)_{ij} = sum_k HE_ik JJ_kj: JJ_kj = 1 for j = k + n, -1 for j = k - n */
    for (int j = 0; j < n; j++)
      r0[dim + j] = HEi[j + n];
    for (int j = n; j < dim; j++)
      r0[dim + j] = -HEi[j - n];
    if (i < n)
      for (int j = 0; j < dim; j++)
        r1[j] = HEr[j];
    else
      for (int j = 0; j < dim; j++)
        r1[j] = -HEr[j];
    for (int j = 0; j < dim; j++)
      r1[dim + j] = GK ? GK[i * dim + j] : 0;
  }
  if (o->ctrl)
    HS_CHK(CtrlHess(o, z, Hm));
  else if (o->gen)
    HS_CHK(GainHess(o, z, Hm));
  return HS_SUCCESS;
}

void HsO4CacheBegin(HsO4 *o) { o->cache_on = 1, o->cache = 0; }
void HsO4CacheEnd(HsO4 *o) { o->cache_on = 0, o->cache = 0; }

/* HValGrad at a substep's end point z (GonzalezH's a and b): from the cache where z (and, for an H that depends on
 * them, the substep's times) is the last call's with what it asks for (g: the gradient too), else evaluated and kept.
 * The same function of the same arguments, so the same bits. */
HS_O4_INLINE int CachedHValGrad(HsO4 *o, const double *z, double *H, double *g, const int D)
{
  if (o->cache_on && o->cache >= (g ? 2 : 1) && !memcmp(z, o->cz, sizeof(double) * (size_t)D) &&
      (!o->tdep || (o->ct[0] == o->ta && o->ct[1] == o->tb))) {
    *H = o->cH;
    if (g)
      HsCopy(D, o->cg, g);
    return HS_SUCCESS;
  }
  o->cache = 0;
  HS_CHK(HValGradBody(o, z, H, g, D / 2));
  if (o->cache_on) {
    HsCopy(D, z, o->cz);
    if (g)
      HsCopy(D, g, o->cg);
    o->cH = *H, o->ct[0] = o->ta, o->ct[1] = o->tb, o->cache = g ? 2 : 1;
  }
  return HS_SUCCESS;
}

int HsO4Hamiltonian(HsO4 *o, double t, const double *z, double *H)
{
  o->ta = o->tb = t;
  return HValGrad(o, z, H, NULL);
}

int HsO4HamiltonianGradient(HsO4 *o, double t, const double *z, double *H, double *g)
{
  o->ta = o->tb = t;
  return HValGrad(o, z, H, g);
}

/* The Gonzalez discrete gradient g of H (D) and, with jac, the factors of its Jacobian (docs/theory.md section 2.1's
 * formulas in dimension 4n): Da = 1/2 Hm - c I + Delta c_a^T, Db = 1/2 Hm + c I + Delta c_b^T, left as Hm (M[0]),
 * *cp = c, Delta (v[4]), c_a (v[7]), c_b (v[8]) for HsO4Substep to form S Da and S Db in one pass (the midpoint
 * gradient, *midpt: Da = Db = 1/2 Hm). Uses v[3..9], M[0]. */
HS_O4_INLINE int GonzalezH(HsO4 *o, const double *a, const double *b, double *g, int jac, double *cp, int *midpt,
                           const int D)
{
  double *mid = o->v[3], *del = o->v[4], *ga = o->v[5], *gb = o->v[6], *ca = o->v[7], *cb = o->v[8], *Hd = o->v[9];
  double *Hm = o->M[0], Ha, Hb, Hmid, c, DD;

  for (int i = 0; i < D; i++)
    mid[i] = 0.5 * (a[i] + b[i]), del[i] = b[i] - a[i];
  HS_CHK(HValGradBody(o, mid, &Hmid, g, D / 2));
  if (jac)
    HS_CHK(HHessBody(o, mid, 1, Hm, D / 2)); /* HValGrad left Hess E at mid in w2[0] */
  *midpt = HsNorm(D, del) <= o->d->dg_tol * (1 + HsNorm(D, mid)); /* the midpoint gradient (O(|Delta|^3) defect) */
  if (*midpt)
    return HS_SUCCESS;
  HS_CHK(CachedHValGrad(o, a, &Ha, jac ? ga : NULL, D));
  HS_CHK(CachedHValGrad(o, b, &Hb, jac ? gb : NULL, D));
  DD  = HsDot(D, del, del);
  c   = (Hb - Ha - HsDot(D, g, del)) / DD;
  *cp = c;
  if (jac) {
    HsMatVec(D, D, Hm, del, Hd);
    for (int i = 0; i < D; i++) {
      ca[i] = (-ga[i] + g[i] - 0.5 * Hd[i] + 2 * c * del[i]) / DD;
      cb[i] = (gb[i] - g[i] - 0.5 * Hd[i] - 2 * c * del[i]) / DD;
    }
  }
  for (int i = 0; i < D; i++)
    g[i] += c * del[i];
  return HS_SUCCESS;
}

/* Row i of the substep's Fa = -I - ch S Da and Fb = I - ch S Db, from GonzalezH's factors (Da = 1/2 Hm - c I + Delta
 * c_a^T, Db = 1/2 Hm + c I + Delta c_b^T; only 1/2 Hm for the midpoint gradient, mid): S's row i is row r of D_a, D_b,
 * negated (neg) for the costate rows. In one pass, each entry's operations in the order of forming Da (1/2 Hm, then
 * the diagonal, then the rank one term) and then Fa (0.0 - ch sa, -1.0 or 1.0 on the diagonal; r != i): the same
 * bits as forming Da, Db whole first (before issue 43's iteration work), 2 instead of 6 passes over D x D values. */
HS_O4_INLINE void JacobianRow(const int D, int i, int r, int neg, int mid, double ch, double c, const double *restrict Hm,
                        const double *restrict del, const double *restrict ca, const double *restrict cb,
                        double *restrict fa, double *restrict fb)
{
  const double *h = Hm + r * D, dr = del[r];
  double        da, db;

  /* the four cases' loops apart (mid and neg tested per entry had kept them from vectorizing) */
#define HS_O4_ROW(MID, NEG)                                                                                            \
  for (int j = 0; j < D; j++) {                                                                                        \
    double ea = 0.5 * h[j], eb = ea;                                                                                   \
    if (!(MID))                                                                                                        \
      ea += dr * ca[j], eb += dr * cb[j];                                                                              \
    if (NEG)                                                                                                           \
      ea = -ea, eb = -eb;                                                                                              \
    fa[j] = 0.0 - ch * ea, fb[j] = 0.0 - ch * eb;                                                                      \
  }
  if (mid && neg)
    HS_O4_ROW(1, 1)
  else if (mid)
    HS_O4_ROW(1, 0)
  else if (neg)
    HS_O4_ROW(0, 1)
  else
    HS_O4_ROW(0, 0)
#undef HS_O4_ROW
  da = db = 0.5 * h[r]; /* the diagonal of Da, Db: c before the rank one term */
  if (!mid)
    da = (da + -c) + dr * ca[r], db = (db + c) + dr * cb[r];
  if (neg)
    da = -da, db = -db;
  fa[r] = 0.0 - ch * da, fb[r] = 0.0 - ch * db;
  fa[i] += -1.0, fb[i] += 1.0; /* = -1.0 - ch sa, 1.0 - ch sb exactly: 0.0 - x is -x but for zero's sign */
}

HS_O4_INLINE int SubstepBody(HsO4 *o, double c, double ta, const double *a, const double *b, double *F, double *Fa,
                             double *Fb, const int D)
{
  const int     dim = D / 2;
  int           mid = 0;
  double       *g = o->M[1], ch = c * o->d->h, cg = 0; /* g: D values of M[1] */
  const double *Hm = o->M[0], *del = o->v[4], *ca = o->v[7], *cb = o->v[8];

  o->ta = ta, o->tb = ta + ch; /* H's running cost: the mean of ell at the substep's two times */

  HS_CHK(GonzalezH(o, a, b, g, Fa != NULL, &cg, &mid, D));
  for (int i = 0; i < D; i++) /* S g = (g_lambda, -g_x) */
    F[i] = b[i] - a[i] - ch * (i < dim ? g[dim + i] : -g[i - dim]);
  if (!Fa)
    return HS_SUCCESS;
  for (int i = 0; i < D; i++) /* S Da and S Db: row i from GonzalezH's factors' row r = i +- dim */
    JacobianRow(D, i, i < dim ? dim + i : i - dim, i >= dim, mid, ch, cg, Hm, del, ca, cb, Fa + i * D, Fb + i * D);
  return HS_SUCCESS;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HS_O4_AVX2 1
/* The n = 3 instance (kepler) compiled also for AVX2, used where the processor has it: its elementwise loops over 4n = 12
 * (JacobianRow's, GonzalezH's) in 4 doubles instead of SSE2's 2. No FMA (AVX2 alone brings none) and no reassociation
 * (no -ffast-math: the sums stay sequential), so the same operations and the same bits (bench/README.md, issue 43's
 * eighth session). */
__attribute__((target("avx2"))) static int SubstepAVX2n3(HsO4 *o, double c, double ta, const double *a, const double *b,
                                                         double *F, double *Fa, double *Fb)
{
  return SubstepBody(o, c, ta, a, b, F, Fa, Fb, 12);
}
#endif

int HsO4Substep(HsO4 *o, double c, double ta, const double *a, const double *b, double *F, double *Fa, double *Fb)
{
#if defined(HS_O4_AVX2)
  static int avx2 = -1;
  if (avx2 < 0)
    avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
  if (o->dim == 6 && avx2)
    return SubstepAVX2n3(o, c, ta, a, b, F, Fa, Fb);
#endif
#define HS_CALL(d) SubstepBody(o, c, ta, a, b, F, Fa, Fb, 2 * (d))
  return HS_O4_DISPATCH(o->dim, HS_CALL);
#undef HS_CALL
}

/* A time-dependent force or control cost: the control term's part of the exact change of H over a substep,
 * Dt += 1/2 [Psi(a, tb) - Psi(a, ta) + Psi(b, tb) - Psi(b, ta)] (docs/controls.md). */
static int CtrlDt(HsO4 *o, double ta, double tb, const double *a, const double *b, double *Dt)
{
  int           n = o->n, dim = o->dim;
  double        t[2] = {ta, tb}, psi;
  const double *z[2] = {a, b};

  for (int k = 0; k < 2; k++)
    for (int s = 0; s < 2; s++) {
      HsO4CtrlSetTime(o->ctrl, t[s]);
      HS_CHK(HsO4CtrlEval(o->ctrl, z[k], z[k] + dim + n, 0, &psi, NULL, NULL, NULL, NULL, NULL));
      *Dt += (s ? 0.5 : -0.5) * psi;
    }
  return HS_SUCCESS;
}

int HsO4SubstepCost(HsO4 *o, double c, double ta, const double *a, const double *b, double *L, double *W, double *Dt)
{
  const HsProblem *P   = o->d->prob;
  int              dim = o->dim, n = o->n;
  double          *m = o->v[0], *Pl = o->v[1], e = 0, tb = ta + c * o->d->h, f[4];

  *Dt = 0;
  if (P->ell.f && P->ell.time_dependent) { /* -1/2 [ell(x_a, tb) - ell(x_a, ta) + ell(x_b, tb) - ell(x_b, ta)] */
    HS_CB(P->ell.f(tb, a, &f[0], P->ctx));
    HS_CB(P->ell.f(ta, a, &f[1], P->ctx));
    HS_CB(P->ell.f(tb, b, &f[2], P->ctx));
    HS_CB(P->ell.f(ta, b, &f[3], P->ctx));
    *Dt = -0.5 * (f[0] - f[1] + f[2] - f[3]);
  }
  if (o->ctrl && P->ctrl_time_dependent) /* + 1/2 [Psi(a, tb) - Psi(a, ta) + Psi(b, tb) - Psi(b, ta)] */
    HS_CHK(CtrlDt(o, ta, tb, a, b, Dt));

  for (int i = 0; i < 2 * dim; i++)
    m[i] = 0.5 * (a[i] + b[i]);
  /* G u, u = R^{-1} G^T lambdabar: 1/2 u^T R u = 1/2 lambdabar^T G R^{-1} G^T lambdabar; B at qbar for a B(q) */
  if (o->ctrl) { /* u* at the midpoint: L = c(u*, qbar) + ell = lambda_p . f - Psi + ell, G u = (0, f(qbar, u*)) */
    double psi;
    HsO4CtrlSetTime(o->ctrl, ta + 0.5 * c * o->d->h); /* at the substep's midpoint time */
    HS_CHK(HsO4CtrlEval(o->ctrl, m, m + dim + n, 0, &psi, NULL, NULL, NULL, NULL, NULL));
    HsZero(n, Pl);
    HsCopy(n, HsO4CtrlForce(o->ctrl), Pl + n);
    e = HsDot(n, m + dim + n, Pl + n) - psi;
  } else if (o->gen) { /* the law: the problem's cost 1/2 u^T R u of the bounded u */
    HS_CHK(GainAt(o, m, m + dim + n, 0));
    HsZero(n, Pl);
    HsMatVec(n, P->m, o->B, o->y, Pl + n);
    for (int j = 0; o->law && j < P->m; j++)
      e += 0.5 * P->R[j * P->m + j] * o->y[j] * o->y[j];
    for (int i = 0; o->coupled && i < P->m; i++) /* the off-diagonal part of 1/2 u^T R u */
      for (int j = 0; j < P->m; j++)
        e += i != j ? 0.5 * o->y[i] * P->R[i * P->m + j] * o->y[j] : 0;
  } else
    HsMatVec(dim, dim, o->d->GK, m + dim, Pl);
  if (P->ell.f) {
    double el;
    HS_CB(P->ell.f(ta + 0.5 * c * o->d->h, m, &el, P->ctx)); /* at the substep's midpoint time */
    e += el;
  }
  *L = c * o->d->h * ((o->ctrl || o->law ? 0 : 0.5 * HsDot(dim, m + dim, Pl)) + e);
  *W = 0;
  for (int i = 0; i < n; i++) /* (q_b - q_a)^T B u: B u is the p-part of G u */
    *W += (b[i] - a[i]) * Pl[n + i];
  return HS_SUCCESS;
}

int HsO4HamiltonianT(HsO4 *o, const double *z, double *HT)
{
  const HsProblem *P = o->d->prob;
  int              n = o->n, m = P->m, dim = o->dim;
  const double    *lam = z + dim, *lp = lam + n;
  double          *gE = o->tp, *BT = gE + dim, *RT = BT + n * m, *u = RT + m * m, *Ru = u + m, v;

  *HT = 0;
  if (!P->data_T)
    return HS_SUCCESS;
  if (P->E_T.f) { /* lambda^T JJ grad E_T */
    HS_CB(P->E_T.grad(z, gE, P->ctx));
    HsApplyJ(dim, gE, o->v[9]);
    *HT += HsDot(dim, lam, o->v[9]);
  }
  if (P->ell_T) {
    HS_CB(P->ell_T(z, &v, P->ctx));
    *HT -= v;
  }
  /* a force f(q, u) (o->ctrl): by the envelope theorem d(max_u h)/dT = dh/dT at u = u*, and h = -c(u, q) +
     lambda_p . f(q, u) has no explicit T (HsO4Create), so only E_T and ell_T above contribute */
  if (P->BR_T && !o->ctrl) { /* u = R^{-1} B(q)^T lambda_p (the maximizer; its own change in T drops out) */
    if (o->gen) {
      HS_CHK(GainAt(o, z, lp, 0));
      HsCopy(m, o->y, u);
    } else
      HsMatVec(m, dim, o->d->K, lam, u);
    HsZero(n * m + m * m, BT);
    HS_CB(P->BR_T(z, BT, RT, P->ctx));
    HsMatVec(m, m, RT, u, Ru);
    *HT -= 0.5 * P->R_scale * HsDot(m, u, Ru); /* dR/dT of the scaled R, as HsDiscDataTU */
    for (int i = 0; i < n; i++)
      *HT += lp[i] * HsDot(m, BT + i * m, u);
  }
  return HS_SUCCESS;
}

int HsO4HamiltonianTGradient(HsO4 *o, const double *z, double *g)
{
  int     D = o->D;
  double *y = o->tp + o->dim + o->n * o->d->prob->m + 2 * o->d->prob->m + o->d->prob->m * o->d->prob->m;

  HsCopy(D, z, y);
  for (int j = 0; j < D; j++) {
    double yj = y[j], e = HS_FT_FD_STEP * (1 + fabs(yj)), hp, hm;
    y[j] = yj + e;
    HS_CHK(HsO4HamiltonianT(o, y, &hp));
    y[j] = yj - e;
    HS_CHK(HsO4HamiltonianT(o, y, &hm));
    y[j] = yj;
    g[j] = (hp - hm) / (2 * e);
  }
  return HS_SUCCESS;
}

int HsO4TerminalT(HsO4 *o, const double *zN, double *v, double *g)
{
  const HsProblem *P   = o->d->prob;
  int              dim = o->dim, D = o->D;
  double          *gp = o->v[0], *Hp = o->w2[0], *dxT = o->v[1], *d2 = o->v[2];

  *v = 0;
  if (g)
    HsZero(D, g);
  if (!P->xT_T)
    return HS_SUCCESS;
  HS_CB(P->xT_T(dxT, d2, P->ctx));
  if (P->phi.f) {
    HS_CB(P->phi.grad(zN, gp, P->ctx));
    if (g)
      HS_CB(P->phi.hess(zN, Hp, P->ctx));
  } else
    HsZero(dim, gp);
  for (int i = 0; i < dim; i++) {
    if (!P->xT_fixed[i] || dxT[i] == 0)
      continue;
    *v += (zN[dim + i] + gp[i]) * dxT[i]; /* nu_i = lambda_N,i + d phi/dx_i, the fixed component's multiplier */
    if (!g)
      continue;
    g[dim + i] += dxT[i];
    for (int j = 0; j < dim && P->phi.f; j++)
      g[j] += Hp[i * dim + j] * dxT[i];
  }
  return HS_SUCCESS;
}

int HsO4Terminal(HsO4 *o, const double *zN, double *R, double *Rz)
{
  const HsProblem *P   = o->d->prob;
  int              dim = o->dim, D = o->D;
  double          *gp = o->v[0], *Hp = o->w2[0];

  if (P->phi.f) {
    HS_CB(P->phi.grad(zN, gp, P->ctx));
    if (Rz)
      HS_CB(P->phi.hess(zN, Hp, P->ctx));
  } else {
    HsZero(dim, gp);
    HsZero(dim * dim, Hp);
  }
  if (Rz)
    HsZero(dim * D, Rz);
  for (int i = 0; i < dim; i++) {
    if (P->xT_fixed[i]) {
      R[i] = zN[i] - P->xT[i];
      if (Rz)
        Rz[i * D + i] = 1;
      continue;
    }
    R[i] = zN[dim + i] + gp[i];
    if (!Rz)
      continue;
    Rz[i * D + dim + i] = 1;
    for (int j = 0; j < dim && P->phi.f; j++)
      Rz[i * D + j] = Hp[i * dim + j];
  }
  return HS_SUCCESS;
}

int HsO4ConsCount(const HsO4 *o) { return o->nc; }

int HsO4Cons(HsO4 *o, const double *z, double *g, double *gz) { return ConsAt(o, z, g, gz); }

/* psi(q) = kappa_1 . Phi(q) + sum_i kappa_2,i lbar . G_i(q) at x = q_a, q_b (value, gradient) and qbar (gradient,
 * Hessian with Phi3), K(x) = sum_i kappa_2,i Hphi_i(x), c(x) = sum_i kappa_2,i G_i(x): ExtGbar's pieces. */
typedef struct {
  double *P[3], *G[3], *H[3], *P3, *lb, *dq, *mq, *g[3], *cv[2], *Hp, *K[3], *Wb, psi[2];
} ExtWork;

static int ExtPieces(HsO4 *o, const double *a, const double *b, const double *kap, ExtWork *x)
{
  const HsProblem *P = o->d->prob;
  int              n = o->n, nc = o->nc, lo = o->dim + n;
  double          *p = o->xpool;

  for (int k = 0; k < 3; k++)
    x->P[k] = p, p += nc, x->G[k] = p, p += nc * n, x->H[k] = p, p += nc * n * n;
  x->P3 = p, p += nc * n * n * n;
  x->lb = p, p += n, x->dq = p, p += n, x->mq = p, p += n;
  for (int k = 0; k < 3; k++)
    x->g[k] = p, p += n, x->K[k] = p, p += n * n;
  x->cv[0] = p, p += n, x->cv[1] = p, p += n, x->Hp = p, p += n * n, x->Wb = p;
  for (int l = 0; l < n; l++)
    x->lb[l] = 0.5 * (a[lo + l] + b[lo + l]), x->dq[l] = b[l] - a[l], x->mq[l] = 0.5 * (a[l] + b[l]);
  HS_CB(P->Phi(a, x->P[0], x->G[0], x->H[0], P->ctx));
  HS_CB(P->Phi(b, x->P[1], x->G[1], x->H[1], P->ctx));
  HS_CB(P->Phi(x->mq, x->P[2], x->G[2], x->H[2], P->ctx));
  if (P->Phi3)
    HS_CB(P->Phi3(x->mq, x->P3, P->ctx));
  HsZero(n * n, x->Hp);
  for (int k = 0; k < 3; k++) {
    HsZero(n, x->g[k]), HsZero(n * n, x->K[k]);
    if (k < 2)
      HsZero(n, x->cv[k]), x->psi[k] = 0;
    for (int i = 0; i < nc; i++) {
      const double *Gi = x->G[k] + i * n, *Hi = x->H[k] + i * n * n, k1 = kap[i], k2 = kap[nc + i];
      if (k < 2)
        x->psi[k] += k1 * x->P[k][i] + k2 * HsDot(n, Gi, x->lb);
      for (int l = 0; l < n; l++) {
        x->g[k][l] += k1 * Gi[l] + k2 * HsDot(n, Hi + l * n, x->lb);
        if (k < 2)
          x->cv[k][l] += k2 * Gi[l];
        for (int r = 0; r < n; r++) {
          x->K[k][l * n + r] += k2 * Hi[l * n + r];
          if (k == 2) /* Hpsi at qbar: Phi3 contracted with lbar */
            x->Hp[l * n + r] +=
                k1 * Hi[l * n + r] + (P->Phi3 ? k2 * HsDot(n, x->P3 + ((i * n + l) * n + r) * n, x->lb) : 0);
        }
      }
    }
  }
  return HS_SUCCESS;
}

/* The extended class's discrete gradient of g (docs/theory.md section 8.1, "The extended class") into o->gz
 * (2nc x D), w = Gbar^T kappa into o->cw, and (jac) dw/da, dw/db into o->Hw and x->Wb: row Phi_i the Gonzalez gradient
 * of Phi_i in q; row G_i lambda_p the Gonzalez gradient in q of lbar . G_i(q) and (G_i(q_a) + G_i(q_b))/2 in lambda_p.
 * w's q-part is the Gonzalez gradient of psi (linear in the function), whose derivatives need Phi3 at qbar. */
static int ExtGbar(HsO4 *o, const double *a, const double *b, const double *kap, int jac, ExtWork *x)
{
  int     n = o->n, nc = o->nc, D = o->D, lo = o->dim + n, mid;
  double *gz = o->gz, *w = o->cw, dd, beta = 0;

  HS_CHK(ExtPieces(o, a, b, kap, x));
  dd  = HsDot(n, x->dq, x->dq);
  mid = sqrt(dd) <= o->d->dg_tol * (1 + HsNorm(n, x->mq)); /* the midpoint gradients (as GonzalezH) */
  HsZero(2 * nc * D, gz);
  for (int i = 0; i < nc; i++) {
    double *r1 = gz + i * D, *r2 = gz + (nc + i) * D, e1, e2;
    HsCopy(n, x->G[2] + i * n, r1);
    HsMatVec(n, n, x->H[2] + i * n * n, x->lb, r2);
    e1 = mid ? 0 : (x->P[1][i] - x->P[0][i] - HsDot(n, r1, x->dq)) / dd;
    e2 = mid ? 0 : (HsDot(n, x->G[1] + i * n, x->lb) - HsDot(n, x->G[0] + i * n, x->lb) - HsDot(n, r2, x->dq)) / dd;
    for (int l = 0; l < n; l++)
      r1[l] += e1 * x->dq[l], r2[l] += e2 * x->dq[l], r2[lo + l] = 0.5 * (x->G[0][i * n + l] + x->G[1][i * n + l]);
  }
  HsMatTVec(2 * nc, D, gz, kap, w);
  if (!mid)
    beta = x->psi[1] - x->psi[0] - HsDot(n, x->g[2], x->dq);
  if (!jac)
    return HS_SUCCESS;
  HsZero(D * D, o->Hw), HsZero(D * D, x->Wb);
  for (int l = 0; l < n; l++) { /* column l; w_q,r = grad psi(qbar)_r + beta dq_r / dd */
    double hd = HsDot(n, x->Hp + l * n, x->dq), kd = HsDot(n, x->K[2] + l * n, x->dq);
    double dba = mid ? 0 : (-x->g[0][l] + x->g[2][l] - 0.5 * hd) / dd; /* d beta/dq_a,l over dd */
    double dbb = mid ? 0 : (x->g[1][l] - x->g[2][l] - 0.5 * hd) / dd;  /* d beta/dq_b,l over dd */
    double dbl = mid ? 0 : (x->cv[1][l] - x->cv[0][l] - kd) / dd;      /* d beta/dlbar_l over dd */
    for (int r = 0; r < n; r++) {
      double pr = mid ? 0 : beta / dd * ((r == l) - 2 * x->dq[r] * x->dq[l] / dd); /* beta d(dq/dd)/dq_b */
      o->Hw[r * D + l] += 0.5 * x->Hp[r * n + l] + x->dq[r] * dba - pr;
      x->Wb[r * D + l] += 0.5 * x->Hp[r * n + l] + x->dq[r] * dbb + pr;
      o->Hw[r * D + lo + l] += 0.5 * (x->K[2][r * n + l] + x->dq[r] * dbl);
      x->Wb[r * D + lo + l] += 0.5 * (x->K[2][r * n + l] + x->dq[r] * dbl);
      o->Hw[(lo + r) * D + l] += 0.5 * x->K[0][r * n + l]; /* w_lambda_p = (c(q_a) + c(q_b))/2 */
      x->Wb[(lo + r) * D + l] += 0.5 * x->K[1][r * n + l];
    }
  }
  return HS_SUCCESS;
}

int HsO4SubstepConsTerms(HsO4 *o, double c, const double *a, const double *b, const double *kap, double *F, double *Fa,
                         double *Fb, double *Fk)
{
  int     nc = o->nc, n = o->n, dim = o->dim, D = o->D, c2 = 2 * nc;
  double *w = o->cw, *Hw = o->Hw, ch = c * o->d->h;

  ExtWork x;

  if (o->cx) { /* the extended class: Gbar(a, b) in place of grad g(zbar), its own Jacobians */
    HS_CHK(ExtGbar(o, a, b, kap, Fa != NULL, &x));
    for (int i = 0; i < D; i++) {
      int    src = i < dim ? dim + i : i - dim;
      double sg  = i < dim ? -ch : ch;
      F[i] += sg * w[src];
      for (int j = 0; Fa && j < D; j++)
        Fa[i * D + j] += sg * Hw[src * D + j], Fb[i * D + j] += sg * x.Wb[src * D + j];
      for (int j = 0; Fk && j < c2; j++)
        Fk[i * c2 + j] = sg * o->gz[j * D + src];
    }
    return HS_SUCCESS;
  }
  for (int i = 0; i < D; i++)
    o->zb[i] = 0.5 * (a[i] + b[i]);
  HS_CHK(ConsAt(o, o->zb, NULL, o->gz));
  HsMatTVec(c2, D, o->gz, kap, w); /* w = grad g(zbar)^T kappa */
  if (Fa) { /* Hw = sum_i kappa_i Hess g_i: q q from Phi_i, q lambda_p (both ways) from G_i(q) lambda_p */
    HsZero(D * D, Hw);
    for (int i = 0; i < nc; i++)
      for (int l = 0; l < n; l++)
        for (int r = 0; r < n; r++) {
          double hp = o->Hphi[(i * n + l) * n + r];
          Hw[l * D + r] += kap[i] * hp;
          Hw[l * D + dim + n + r] += kap[nc + i] * hp;
          Hw[(dim + n + r) * D + l] += kap[nc + i] * hp;
        }
  }
  for (int i = 0; i < D; i++) { /* F -= c h S w, S w = (w_lambda, -w_x); the Jacobians likewise, 1/2 Hw each side */
    int    src = i < dim ? dim + i : i - dim;
    double sg  = i < dim ? -ch : ch;
    F[i] += sg * w[src];
    for (int j = 0; Fa && j < D; j++)
      Fa[i * D + j] += 0.5 * sg * Hw[src * D + j], Fb[i * D + j] += 0.5 * sg * Hw[src * D + j];
    for (int j = 0; Fk && j < c2; j++)
      Fk[i * c2 + j] = sg * o->gz[j * D + src];
  }
  return HS_SUCCESS;
}

/* HsO4ConsStart's rows from g = grad H and (rz) Hm = its Hessian at z0, of which the dH/dp and dH/dlambda_q parts
 * are read: G_i lambda_p and the hidden constraint d/dt (G_i lambda_p) = grad g_i S grad H, (Hphi_i lambda_p) .
 * dH/dlambda_q - G_i . dH/dp (kappa drops out: grad g S grad g^T = 0); rz from Hm and Phi3. The general M(q) and the
 * constant M differ only in how g and Hm are had (HsO4ConsStart). */
static int ConsStartRows(HsO4 *o, const double *z0, const double *g, const double *Hm, double *r, double *rz)
{
  const HsProblem *P  = o->d->prob;
  int              nc = o->nc, n = o->n, dim = o->dim, D = o->D;
  const double    *lp = z0 + dim + n, *gl = g + dim, *gp = g + n;
  double          *hl = o->cw, *hg = o->cw + n, *hp = o->cw + 2 * n;
  double          *P3 = rz && P->Phi3 ? o->xpool + 3 * (nc + nc * n + nc * n * n) : NULL;

  HS_CHK(ConsAt(o, z0, NULL, NULL));
  if (P3)
    HS_CB(P->Phi3(z0, P3, P->ctx));
  if (rz)
    HsZero(2 * nc * D, rz);
  for (int i = 0; i < nc; i++) {
    const double *Gi = o->Gc + i * n, *Hi = o->Hphi + i * n * n;
    HsMatVec(n, n, Hi, lp, hl); /* Hphi_i lambda_p */
    r[i]      = HsDot(n, Gi, lp);
    r[nc + i] = HsDot(n, hl, gl) - HsDot(n, Gi, gp);
    if (!rz)
      continue;
    double *r1 = rz + i * D, *r2 = rz + (nc + i) * D;
    HsCopy(n, hl, r1);
    HsCopy(n, Gi, r1 + dim + n);
    for (int j = 0; j < D; j++)
      for (int l = 0; l < n; l++)
        r2[j] += hl[l] * Hm[(dim + l) * D + j] - Gi[l] * Hm[(n + l) * D + j];
    HsMatVec(n, n, Hi, gl, hg); /* d/dlambda_p of (Hphi_i lambda_p) . dH/dlambda_q (explicit part) */
    HsMatVec(n, n, Hi, gp, hp); /* d/dq of -G_i . dH/dp (explicit part) */
    for (int j = 0; j < n; j++) {
      r2[dim + n + j] += hg[j];
      r2[j] -= hp[j];
      for (int l = 0; P3 && l < n; l++)
        for (int k = 0; k < n; k++)
          r2[j] += P3[((i * n + l) * n + k) * n + j] * lp[k] * gl[l];
    }
  }
  return HS_SUCCESS;
}

/* The start rows. A configuration-dependent M: g and Hm are H's own, dH/dp = M^{-1} lambda_q - d/dp (lambda_p .
 * dE/dq). A constant M lacks that second term: dH/dlambda_q = M^{-1} p and dH/dp = M^{-1} lambda_q, from E's Hessian
 * alone, with Hm their two constant M^{-1} blocks (the same rows bit for bit as H's derivatives where Phi3 is NULL:
 * the other entries of Hm are zero; round-off in rz's Phi3 sum otherwise). */
int HsO4ConsStart(HsO4 *o, const double *z0, double *r, double *rz)
{
  const HsProblem *P = o->d->prob;
  int              n = o->n, dim = o->dim, D = o->D;
  const double    *p = z0 + n, *lq = z0 + dim, *Mi = o->Mi;
  double          *g = o->zb, *Hm = o->Hw, H;

  if (!P->const_mass) {
    HS_CHK(HValGrad(o, z0, &H, g));
    if (rz)
      HS_CHK(HHessBody(o, z0, 0, Hm, dim));
    return ConsStartRows(o, z0, g, Hm, r, rz);
  }
  HS_CB(P->E.hess(z0, o->Mi, P->ctx)); /* its p p block: M^{-1} */
  HsZero(D, g);
  if (rz)
    HsZero(D * D, Hm);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double mij = Mi[(n + i) * dim + n + j];
      g[dim + i] += mij * p[j], g[n + i] += mij * lq[j];
      if (rz)
        Hm[(dim + i) * D + n + j] = Hm[(n + i) * D + dim + j] = mij;
    }
  return ConsStartRows(o, z0, g, Hm, r, rz);
}

/* The end state projected onto the hidden constraint, zh = (q, P(q) p, lambda) with P p = p - G^T c, c = A^{-1} G
 * M^{-1} p, A = G M^{-1} G^T (the M-orthogonal projection: G M^{-1} P p = 0, P G^T = 0), and (dP not NULL: n x 2n) the
 * Jacobian of P(q) p in (q, p): I - G^T A^{-1} G M^{-1} in p, -(d_l G)^T c - G^T A^{-1} [(d_l G) M^{-1} P p
 * - G M^{-1} (d_l G)^T c] in q_l, (d_l G)_jm = Hphi_j,ml. After ConsAt and Mi at z (docs/theory.md section 8.1: the
 * nodal momenta's normal part is O(h^2), a terminal cost at the projected state keeps order 4). */
static int ConsProject(HsO4 *o, const double *z, double *zh, double *dP)
{
  int                  nc = o->nc, n = o->n, dim = o->dim, st = HS_SUCCESS;
  const double        *Mi = o->Mi, *Gc = o->Gc, *Hp = o->Hphi;
  double              *A = o->Hw, *c = A + nc * nc, *Bm = c + nc, *mp = Bm + nc * n, *dl = mp + n, *w = dl + nc;
  gsl_matrix_view      Av  = gsl_matrix_view_array(A, (size_t)nc, (size_t)nc);
  gsl_error_handler_t *old = gsl_set_error_handler_off();

#define MI(i, j) Mi[(n + (i)) * dim + n + (j)]
  for (int j = 0; j < nc; j++) /* Bm = G M^{-1} (nc x n), A = Bm G^T, c = G M^{-1} p */
    for (int l = 0; l < n; l++) {
      Bm[j * n + l] = 0;
      for (int m = 0; m < n; m++)
        Bm[j * n + l] += Gc[j * n + m] * MI(m, l);
    }
  for (int j = 0; j < nc; j++) {
    c[j] = HsDot(n, Bm + j * n, z + n);
    for (int i = 0; i < nc; i++)
      A[j * nc + i] = HsDot(n, Bm + j * n, Gc + i * n);
  }
  if (gsl_linalg_cholesky_decomp1(&Av.matrix))
    st = HS_EFAILED;
  for (int l = -1; l < n && !st; l++) { /* c, then Bm's columns: A^{-1} G M^{-1} */
    double         *v  = l < 0 ? c : w;
    gsl_vector_view vv = gsl_vector_view_array(v, (size_t)nc);
    for (int j = 0; j < nc && l >= 0; j++)
      w[j] = Bm[j * n + l];
    st = gsl_linalg_cholesky_svx(&Av.matrix, &vv.vector) ? HS_EFAILED : st;
    for (int j = 0; j < nc && l >= 0; j++)
      Bm[j * n + l] = w[j];
  }
  HsCopy(o->D, z, zh);
  for (int m = 0; m < n && !st; m++)
    for (int j = 0; j < nc; j++)
      zh[n + m] -= Gc[j * n + m] * c[j];
  for (int m = 0; m < n && !st; m++) /* M^{-1} P p */
    for (int l = 0; l < n; l++)
      mp[m] = (l ? mp[m] : 0) + MI(m, l) * zh[n + l];
  for (int l = 0; l < n && dP && !st; l++) { /* d/dq_l: dl = A^{-1} [(d_l G) M^{-1} P p - G M^{-1} (d_l G)^T c] */
    gsl_vector_view dv = gsl_vector_view_array(dl, (size_t)nc);
    for (int j = 0; j < nc; j++) { /* (d_l G) M^{-1} P p */
      dl[j] = 0;
      for (int m = 0; m < n; m++)
        dl[j] += Hp[(j * n + m) * n + l] * mp[m];
    }
    for (int j = 0; j < nc; j++) /* - G M^{-1} (d_l G)^T c */
      for (int m = 0; m < n; m++) {
        double gtc = 0, gm = 0;
        for (int i = 0; i < nc; i++)
          gtc += Hp[(i * n + m) * n + l] * c[i];
        for (int r = 0; r < n; r++)
          gm += Gc[j * n + r] * MI(r, m);
        dl[j] -= gm * gtc;
      }
    st = gsl_linalg_cholesky_svx(&Av.matrix, &dv.vector) ? HS_EFAILED : st;
    for (int m = 0; m < n; m++) {
      double v = 0;
      for (int j = 0; j < nc; j++)
        v += Hp[(j * n + m) * n + l] * c[j] + Gc[j * n + m] * dl[j];
      dP[m * dim + l] = -v;
    }
  }
  for (int m = 0; m < n && dP && !st; m++) /* d/dp_r: I - G^T A^{-1} G M^{-1} */
    for (int r = 0; r < n; r++) {
      double v = m == r;
      for (int j = 0; j < nc; j++)
        v -= Gc[j * n + m] * Bm[j * n + r];
      dP[m * dim + n + r] = v;
    }
#undef MI
  gsl_set_error_handler(old);
  return st;
}

/* The free-momenta terminal rows of HsO4ConsTerminal (docs/theory.md section 8.1, "Free end states"): at z_N, with
 * beta2 = ext[0 .. nc), beta1 = ext[nc .. 2nc), G and Hphi at q_N, Mi the p p block of Hess E (M^{-1}):
 *   fixed coordinate i: q_i - q_T,i;  free coordinate i: lambda_q,i + d_i phi - sum_j beta2_j (Hphi_j M^{-1} p)_i
 *   - sum_j beta1_j G_ji;  momentum l: lambda_p,l + d phi/dp_l - sum_j beta2_j (M^{-1} G_j^T)_l. */
static int ConsTerminalFree(HsO4 *o, const double *zN, const double *ext, double *R, double *Rz, double *Ra)
{
  const HsProblem *P  = o->d->prob;
  int              nc = o->nc, n = o->n, dim = o->dim, D = o->D, c2 = 2 * nc;
  const double    *Mi = o->Mi, *b2 = ext, *b1 = ext + nc;
  double *gp = o->v[0], *Hp = o->w2[0], *mp = o->cw, *mg = o->cw + n, *zh = o->v[1], *dP = o->w2[1], *p = zh + n;

#define MI(i, j) Mi[(n + (i)) * dim + n + (j)]
  HS_CHK(ConsAt(o, zN, NULL, NULL));
  HS_CB(P->E.hess(zN, o->Mi, P->ctx));
  HS_CHK(ConsProject(o, zN, zh, Rz ? dP : NULL)); /* phi and p at the projected end state (zh), chained below */
  if (P->phi.f) {
    HS_CB(P->phi.grad(zh, gp, P->ctx));
    if (Rz)
      HS_CB(P->phi.hess(zh, Hp, P->ctx));
  } else
    HsZero(dim, gp), HsZero(dim * dim, Hp);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      mp[i] = (j ? mp[i] : 0) + MI(i, j) * p[j];
  if (Rz)
    HsZero(dim * D, Rz), HsZero(dim * c2, Ra);
  for (int i = 0; i < n; i++) { /* the coordinates' rows */
    if (P->xT_fixed[i]) {
      R[i] = zN[i] - P->xT[i];
      if (Rz)
        Rz[i * D + i] = 1;
      continue;
    }
    R[i] = zN[dim + i] + gp[i];
    for (int j = 0; j < nc; j++) {
      const double *Hj = o->Hphi + j * n * n;
      double        hm = HsDot(n, Hj + i * n, mp); /* (Hphi_j M^{-1} p)_i */
      R[i] -= b2[j] * hm + b1[j] * o->Gc[j * n + i];
      if (!Rz)
        continue;
      Ra[i * c2 + j] = -hm, Ra[i * c2 + nc + j] = -o->Gc[j * n + i];
      for (int l = 0; l < n; l++) {
        double hmi = 0; /* (Hphi_j M^{-1})_il */
        for (int m = 0; m < n; m++)
          hmi += Hj[i * n + m] * MI(m, l);
        Rz[i * D + l] -= b1[j] * Hj[i * n + l], Rz[i * D + n + l] -= b2[j] * hmi;
      }
    }
    for (int l = 0; Rz && l < dim; l++)
      Rz[i * D + l] += Hp[i * dim + l];
    if (Rz)
      Rz[i * D + dim + i] = 1;
  }
  for (int l = 0; l < n; l++) { /* the momenta's rows */
    R[n + l] = zN[dim + n + l] + gp[n + l];
    for (int j = 0; j < nc; j++) {
      double mgl = 0;
      for (int m = 0; m < n; m++)
        mgl += MI(l, m) * o->Gc[j * n + m];
      R[n + l] -= b2[j] * mgl;
      if (!Rz)
        continue;
      Ra[(n + l) * c2 + j] = -mgl;
      for (int r = 0; r < n; r++) { /* d/dq_r of (M^{-1} G_j^T)_l: (M^{-1} Hphi_j)_lr */
        mg[r] = 0;
        for (int m = 0; m < n; m++)
          mg[r] += MI(l, m) * o->Hphi[(j * n + m) * n + r];
        Rz[(n + l) * D + r] -= b2[j] * mg[r];
      }
    }
    for (int r = 0; Rz && r < dim; r++)
      Rz[(n + l) * D + r] += Hp[(n + l) * dim + r];
    if (Rz)
      Rz[(n + l) * D + dim + n + l] = 1;
  }
  for (int r = 0; Rz && r < dim; r++) { /* the columns in P p to those in (q, p): d(P p)/d(q, p) = dP */
    double *Rr = Rz + r * D, *t = mg;
    HsCopy(n, Rr + n, t);
    for (int c = 0; c < dim; c++) {
      double v = c < n ? Rr[c] : 0;
      for (int m = 0; m < n; m++)
        v += t[m] * dP[m * dim + c];
      Rr[c] = v;
    }
  }
#undef MI
  return HS_SUCCESS;
}

int HsO4TerminalCost(HsO4 *o, const double *zN, double *phi)
{
  const HsProblem *P  = o->d->prob;
  double          *zh = o->v[1];

  *phi = 0;
  if (!P->phi.f)
    return HS_SUCCESS;
  if (o->nc) {
    HS_CHK(ConsAt(o, zN, NULL, NULL));
    HS_CB(P->E.hess(zN, o->Mi, P->ctx));
    HS_CHK(ConsProject(o, zN, zh, NULL));
  }
  HS_CB(P->phi.f(o->nc ? zh : zN, phi, P->ctx));
  return HS_SUCCESS;
}

int HsO4ConsFreeCoordinates(const HsO4 *o)
{
  const HsProblem *P = o->d->prob;
  int              f = 0;

  for (int i = 0; i < P->n && o->nc; i++)
    f |= !P->xT_fixed[i];
  return f;
}

int HsO4ConsImpliedAtEnd(HsO4 *o, const double *zN, int j, int *implied)
{
  const HsProblem *P = o->d->prob;
  int              n = o->n, z = 1;

  HS_CHK(ConsAt(o, zN, NULL, NULL));
  for (int i = 0; i < n; i++)
    z = z && (P->xT_fixed[i] || o->Gc[j * n + i] == 0);
  *implied = z;
  return HS_SUCCESS;
}

/* The rest end with free coordinates of HsO4ConsTerminal (the extended class: docs/theory.md section 8.1, "The rest end
 * with free coordinates"): p_T = 0 and no phi (ConsRefusal), so the end set is {Phi(q) = 0, q_i = q_T,i (i fixed),
 * p = 0} and the transversality condition leaves lambda_p free and asks lambda_q = G^T beta1 in the free coordinates.
 * With alpha = ext[0 .. nc) (p_N's free normal part, O(h^2)) and beta1 = ext[nc .. 2nc), G at q_N:
 *   fixed coordinate i: q_i - q_T,i;  free coordinate i: lambda_q,i - (G^T beta1)_i;  momentum l: p_l - (G^T alpha)_l.
 * M and the second derivatives of E do not enter (p = 0 at the continuous end); d/dq of G^T beta is sum beta_j Hphi_j,
 * Hphi at q_N (no Phi3). Phi(q_N) = 0 is the last substep's row (HsO4ConsFreeCoordinates). */
static int ConsTerminalRest(HsO4 *o, const double *zN, const double *ext, double *R, double *Rz, double *Ra)
{
  const HsProblem *P  = o->d->prob;
  int              nc = o->nc, n = o->n, dim = o->dim, D = o->D, c2 = 2 * nc;
  const double    *al = ext, *b1 = ext + nc;

  HS_CHK(ConsAt(o, zN, NULL, NULL));
  if (Rz)
    HsZero(dim * D, Rz), HsZero(dim * c2, Ra);
  for (int i = 0; i < n; i++) {
    int fixed = P->xT_fixed[i];

    R[i]     = fixed ? zN[i] - P->xT[i] : zN[dim + i];
    R[n + i] = zN[n + i] - P->xT[n + i];
    for (int j = 0; j < nc; j++) {
      double gji = o->Gc[j * n + i];
      R[i] -= fixed ? 0 : b1[j] * gji;
      R[n + i] -= al[j] * gji;
      if (!Rz)
        continue;
      Ra[(n + i) * c2 + j] = -gji;
      if (!fixed)
        Ra[i * c2 + nc + j] = -gji;
      for (int l = 0; l < n; l++) {
        Rz[(n + i) * D + l] -= al[j] * o->Hphi[(j * n + i) * n + l];
        if (!fixed)
          Rz[i * D + l] -= b1[j] * o->Hphi[(j * n + i) * n + l];
      }
    }
    if (Rz)
      Rz[i * D + (fixed ? i : dim + i)] += 1, Rz[(n + i) * D + n + i] = 1;
  }
  return HS_SUCCESS;
}

int HsO4ConsTerminal(HsO4 *o, const double *zN, const double *ext, double *R, double *Rz, double *Ra)
{
  const HsProblem *P  = o->d->prob;
  int              nc = o->nc, n = o->n, dim = o->dim, D = o->D, c2 = 2 * nc;

  if (!P->xT_fixed[n]) /* the momenta free (all of them: ConsRefusal) */
    return ConsTerminalFree(o, zN, ext, R, Rz, Ra);
  if (HsO4ConsFreeCoordinates(o)) /* the momenta fixed at 0 with free coordinates (the extended class: ConsRefusal) */
    return ConsTerminalRest(o, zN, ext, R, Rz, Ra);
  HS_CB(P->Phi(P->xT, o->Phi, o->Gc, NULL, P->ctx));
  for (int i = 0; i < dim; i++)
    R[i] = zN[i] - P->xT[i];
  for (int l = 0; l < n; l++) /* p_N - p_T - G(q_T)^T alpha */
    for (int i = 0; i < nc; i++)
      R[n + l] -= o->Gc[i * n + l] * ext[i];
  if (!Rz)
    return HS_SUCCESS;
  HsZero(dim * D, Rz);
  HsZero(dim * c2, Ra);
  for (int i = 0; i < dim; i++)
    Rz[i * D + i] = 1;
  for (int l = 0; l < n; l++)
    for (int i = 0; i < nc; i++)
      Ra[(n + l) * c2 + i] = -o->Gc[i * n + l];
  return HS_SUCCESS;
}

/* The rest end with conserved quantities (docs/theory.md section 8.1, "The rest end with conserved quantities"): the
 * momentum rows of HsO4ConsTerminal relaxed along c_l = grad_p I_l(q_E) by gam (ncinv), q_E = q_N with free
 * coordinates, else q_T: R[n + r] -= sum_l gam_l c_l,r, their Jacobian in q (Rz, dim x D, free coordinates only) and in
 * gam (Rg, dim x ncinv), and the ncinv rows c_l(q_E) . lambda_p (Iv) with their gradient (Iz, ncinv x D). */
int HsO4ConsInvariantEnd(HsO4 *o, const double *zN, const double *gam, double *R, double *Rz, double *Rg, double *Iv,
                         double *Iz)
{
  const HsProblem *P = o->d->prob;
  int              n = o->n, dim = o->dim, D = o->D, ni = P->ncinv, fq = HsO4ConsFreeCoordinates(o), st;
  const double    *lp = zN + dim + n;
  double          *c  = malloc((size_t)(ni * n + ni * n * n) * sizeof(double)), *dc = c ? c + ni * n : NULL;

  if (!c)
    return HS_ENOMEM;
  if ((st = P->cinv_grad(fq ? zN : P->xT, c, dc, P->ctx))) {
    free(c);
    return HS_EFAILED;
  }
  if (Rz)
    HsZero(dim * ni, Rg), HsZero(ni * D, Iz);
  for (int l = 0; l < ni; l++) {
    Iv[l] = HsDot(n, c + l * n, lp);
    for (int r = 0; r < n; r++) {
      R[n + r] -= gam[l] * c[l * n + r];
      if (!Rz)
        continue;
      Rg[(n + r) * ni + l] = -c[l * n + r];
      Iz[l * D + dim + n + r] = c[l * n + r];
      for (int i = 0; i < n && fq; i++) { /* d c_l,r / dq_i */
        Rz[(n + r) * D + i] -= gam[l] * dc[(l * n + r) * n + i];
        Iz[l * D + i] += lp[r] * dc[(l * n + r) * n + i];
      }
    }
  }
  free(c);
  return HS_SUCCESS;
}

int HsO4ConsRestGuess(HsO4 *o, const double *a, const double *b, double *kappa)
{
  const HsProblem *P  = o->d->prob;
  int              nc = o->nc, n = o->n, dim = o->dim, st = HS_SUCCESS;
  double          *xb = o->zb, *gE = o->cw, *A = o->Hw;

  for (int i = 0; i < dim; i++)
    xb[i] = i < n ? 0.5 * (a[i] + b[i]) : 0; /* at rest: grad_q E = grad V */
  HS_CHK(ConsAt(o, xb, NULL, NULL));
  HS_CB(P->E.grad(xb, gE, P->ctx));
  for (int i = 0; i < nc; i++) { /* G G^T kappa_2 = G grad V, kappa_1 = 0 */
    kappa[i] = 0, kappa[nc + i] = HsDot(n, o->Gc + i * n, gE);
    for (int j = 0; j < nc; j++)
      A[i * nc + j] = HsDot(n, o->Gc + i * n, o->Gc + j * n);
  }
  {
    gsl_matrix_view      Av  = gsl_matrix_view_array(A, (size_t)nc, (size_t)nc);
    gsl_vector_view      kv  = gsl_vector_view_array(kappa + nc, (size_t)nc);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    if (gsl_linalg_cholesky_decomp1(&Av.matrix) || gsl_linalg_cholesky_svx(&Av.matrix, &kv.vector))
      st = HS_EFAILED;
    gsl_set_error_handler(old);
  }
  return st;
}

int HsO4NodeControl(HsO4 *o, double t, const double *z, double *u)
{
  const HsProblem *P = o->d->prob;
  double           H;

  if (o->ctrl) { /* the maximizer of H in u */
    HS_CHK(HsO4Hamiltonian(o, t, z, &H));
    HsCopy(P->m, HsO4CtrlControl(o->ctrl), u);
  } else if (o->gen) { /* R^{-1} B(q)^T lambda_p, or the bounded law at B(q)^T lambda_p */
    HS_CHK(GainAt(o, z, z + o->dim + o->n, 0));
    HsCopy(P->m, o->y, u);
  } else
    HsMatVec(P->m, o->dim, o->d->K, z + o->dim, u);
  return HS_SUCCESS;
}
