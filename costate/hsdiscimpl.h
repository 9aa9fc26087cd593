/* hamshoot: private definition of HsDisc (costate/ only). */
#ifndef HSDISCIMPL_H
#define HSDISCIMPL_H

#include "hscostate.h"
#include "hsdense.h"

#include <gsl/gsl_matrix.h>
#include <stdint.h>

/* Workspace levels: each level may call the levels below it, never above,
 * so that nested calls never share scratch memory. */
#define HS_WDG_VEC 12 /* discrete gradients (dgrad.c) */
#define HS_WDG_MAT 10 /* wdg_m[6..8]: scratch of HsFunctionD3 (dim + 2 dim^2) */
#define HS_WCS_VEC 16 /* costate schemes (costate.c) */
#define HS_WCS_MAT 16
#define HS_WTOP_VEC 6 /* HsDisc* entry points (disc.c) */
#define HS_WTOP_MAT 4
#define HS_WBQ_VEC 5 /* B(q) gain level (gain.c), below the costate schemes; vectors of max(dim, m) */
#define HS_WBQ_MAT 5 /* n x m */
#define HS_WK_VEC 8  /* B(q) terms of the costate schemes (gain.c), between costate and gain levels */
#define HS_WK_MAT 7  /* dim x dim */

/* ell(., t) as an HsFunction of x alone, for the discrete-gradient code
 * (HsGonzalezGrad, HsGonzalezJacOf); its callbacks take ctx = HsEllAt *. */
typedef struct {
  const HsProblem *prob;
  double           t;
} HsEllAt;
extern const HsFunction HsEllAtFunction;

#define HS_MEMO_DIM 16 /* HsDiscSetMemo keeps discrete gradients up to this dim = 2n */

struct HsDisc_s {
  const HsProblem       *prob;
  const HsStateScheme   *ss;
  const HsCostateScheme *cs;
  const HsStateScheme   *mid; /* midpoint, used by the trapezoidal costate scheme */
  int                    n, m, dim, N;
  double                 h, dg_tol;
  double                *K;  /* m x dim: u = K lambda, K = R^{-1} G^T */
  double                *GK; /* dim x dim: G K */
  double                *wu, *wRu; /* m each: u and R u of the entry points (disc.c) */
  const HsCostateScheme *hom;       /* HsDiscSetCostateHomotopy: the scheme blended in, or NULL */
  double                 theta;     /* C = theta C_cs + (1 - theta) C_hom */
  double                *whom;      /* dim + 5 dim^2: the blended scheme's residual and Jacobian blocks */
  double                *wdg_v[HS_WDG_VEC], *wdg_m[HS_WDG_MAT];
  double                *wcs_v[HS_WCS_VEC], *wcs_m[HS_WCS_MAT];
  double                *wtop_v[HS_WTOP_VEC], *wtop_m[HS_WTOP_MAT];
  double                *wcs_d3; /* dim + 2 dim^2: scratch of HsFunctionD3 at costate level */
  double                *pool;
  /* A configuration-dependent B(q) (gain.c; docs/configuration-dependent-forces.md). Bbar is the B of
     the interval HsDiscGainSet last set (prob->B itself when B is constant), and K, GK follow it. */
  const double *Bbar;
  double       *bq_pool;            /* NULL without prob->Bq; the rest points into it */
  double       *Rinv;               /* m x m */
  double       *bq_Bbar;            /* n x m: Bbar's storage */
  double       *bq_B, *bq_dB, *bq_d2B; /* the callback's outputs at one point */
  double       *bq_v[HS_WBQ_VEC], *bq_m[HS_WBQ_MAT]; /* gain level (gain.c): HsDiscGainForm's scratch */
  double       *wk_v[HS_WK_VEC], *wk_m[HS_WK_MAT];   /* kappa level (gain.c): the costate schemes' B(q) terms */
  HsEllAt                ell_at; /* the running cost at the time the costate code last set */
  /* A free T in the problem's data (prob->data_T; HsDiscDataTU): B_T (n x m), R_T (m x m), qbar (n),
     R_T u (m), gbar[E_T] (dim), and the interval's values for HsDiscFreeTimeTerm's differences (6 dim) */
  double *wT_B, *wT_R, *wT_q, *wT_u, *wT_g, *wT_z;
  gsl_matrix *wT_Rc; /* ... R's factor (DiscControlGain at every HsDiscSetHorizon: no allocation there) */
  gsl_vector *wT_col;
  /* Bounded controls (costate/hscontrol.h, docs/controls.md): bounded = 1 when the problem's controls need the
     bounded law, ueps its smoothing; ws (m), wdu: s = Bbar^T lambda^p and du/ds of the last evaluation, wdu the
     diagonal of du/ds (m) for a diagonal R, the full m x m du/ds (row-major) when coupled = 1 (a non-diagonal R: the
     box QP of HsControlLawEvalFull). */
  int     bounded, coupled;
  double  ueps;
  double *ws, *wdu;
  /* HsDiscSetMemo: the last two Greenspan quotients (all six values) and Gonzalez discrete gradients (dim <=
     HS_MEMO_DIM), by the bits of their arguments, kept while a march runs (costate/march.c): a step evaluates its
     interval's in the state residual and in the costate residual, and the previous interval's again in the latter */
  int      memo, qnext, qvalid[2], gnext, gvalid[2];
  uint64_t qkey[2][2];
  double   qval[2][6];
  double   gkey[2][2 * HS_MEMO_DIM], gval[2][HS_MEMO_DIM];
};

/* Node time t_k = k h (uniform grid). */
static inline double HsDiscTime(const HsDisc *d, int k) { return k == d->N ? d->prob->T : k * d->h; }

/* Map a callback status to HS_SUCCESS / HS_EDOM / HS_EFAILED. */
static inline int HsStatus(int s) { return s == 0 ? HS_SUCCESS : (s > 0 ? HS_EDOM : HS_EFAILED); }
#define HS_CHK(expr)                                                                                                   \
  do {                                                                                                                 \
    int hs_s_ = (expr);                                                                                                \
    if (hs_s_)                                                                                                         \
      return hs_s_;                                                                                                    \
  } while (0)
#define HS_CB(expr) HS_CHK(HsStatus(expr))

extern const HsStateScheme   HsStateMidpoint, HsStateGreenspan, HsStateGonzalez, HsStateBEM;
extern const HsCostateScheme HsCostateConserving, HsCostateConserving1, HsCostateTrapezoidal, HsCostateKKT,
    HsCostateConstrained, HsCostateConstrainedKKT;

/* Jacobians Da, Db of the Gonzalez discrete gradient of F (dgrad.c); uses the
 * discrete-gradient workspace level, so costate schemes may call it. */
int HsGonzalezJacOf(HsDisc *d, const HsFunction *F, void *ctx, const double *a, const double *b, double *Da,
                    double *Db);

/* A configuration-dependent B(q) (gain.c): no-ops / zero terms when B is constant. */
int  HsDiscGainSetup(HsDisc *d);
int  HsDiscGainSet(HsDisc *d, const double *xk, const double *xk1);
int  HsDiscGainForm(HsDisc *d, const double *q, const double *a, const double *b, double *K, double *P, double *gq,
                    double *Hqq, double *Ma, double *Mb);
int  HsDiscGainStateJacobian(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *Fxk,
                             double *Fxk1);
int  HsDiscGainControlJacobian(HsDisc *d, const double *xk, const double *xk1, const double *u, double *Cxk,
                               double *Cxk1);
int  HsDiscGainControlHessian(HsDisc *d, const double *xk, const double *xk1, const double *y, const double *u,
                              double *Hkk, double *Hk1k, double *Hk1k1, double *Hxu);
int  HsDiscGainHamiltonianGradient(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *gxk,
                                   double *gxk1);
int  HsDiscGainKKT(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *lm,
                   const double *lp, double *C, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp);
int  HsDiscGainTerminal(HsDisc *d, const double *xm, const double *xN, const double *lm, double *R, double *Rxm,
                        double *RxN, double *Rlm);
int  HsDiscGainKappa(HsDisc *d, const double *xm, const double *x0, const double *xp, const double *lm,
                     const double *lp, double *C, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp);
void HsDiscGainDestroy(HsDisc *d);

/* The state scheme's discrete gradient of E_T = dE/dT, a free T in the data (dgrad.c). */
int HsDiscGradT(HsDisc *d, const double *a, const double *b, double *g);

/* While on, the Greenspan quotient and the Gonzalez discrete gradient keep their last two results (dgrad.c); the
 * caller turns it off before the problem's data can change (a march: costate/march.c). */
void HsDiscSetMemo(HsDisc *d, int on);

/* Greenspan quotient Vbar(a,b) and derivatives, stable (dgrad.c). */
int HsGreenspanQuotient(HsDisc *d, double a, double b, double *Vbar, double *va, double *vb, double *vaa, double *vab,
                        double *vbb);

#endif
