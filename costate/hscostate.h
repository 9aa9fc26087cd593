/* hamshoot: discrete gradients, costate schemes, step residuals and their
 * Jacobians, and the discrete diagnostics (serial C on GSL; no PETSc/MPI).
 *
 * All residuals are the equations of docs/theory.md section 2 multiplied by h:
 *   state, interval k:  F = x_{k+1} - x_k - h (JJ gbar(x_k, x_{k+1}) + G u_{k+1/2}),
 *                       u_{k+1/2} = R^{-1} G^T lambda_{k+1/2}
 *   costate, node k:    C = lambda_+ - lambda_- - h (scheme right-hand side)
 * so that every Jacobian block is O(1) as h -> 0.
 */
#ifndef HSCOSTATE_H
#define HSCOSTATE_H

#include "../problems/hsproblem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: problems/hsproblem.h (HS_SUCCESS, HS_EDOM, ...), shared by both serial layers. */

/** Default relative threshold below which divided differences fall back to
 *  their limits (docs/theory.md section 2.1): |Delta| <= tol * (1 + |midpoint|).
 *  Chosen near eps^(1/3): the cancellation error of a first divided difference
 *  is eps |grad E| / |Delta| and the fallback error is O(|Delta|^2). */
#define HS_DG_TOL_DEFAULT 1e-6

typedef struct HsDisc_s HsDisc;

/** A state scheme: discrete gradient gbar(a, b) of E (docs/theory.md section 2.1). */
typedef struct {
  const char *name;
  int         order;             /* consistency order */
  int         energy_consistent; /* gbar . (b - a) = E(b) - E(a) exactly */
  /** g = gbar(a, b). */
  int (*grad)(HsDisc *d, const double *a, const double *b, double *g);
  /** Da = d gbar / da, Db = d gbar / db (dim x dim). */
  int (*jac)(HsDisc *d, const double *a, const double *b, double *Da, double *Db);
  /** Second derivatives of phi(a,b) = v^T gbar(a,b): Paa = d(Da^T v)/da,
   *  Pab[i][j] = d(Da^T v)_i / db_j, Pbb = d(Db^T v)/db. */
  int (*hessdir)(HsDisc *d, const double *a, const double *b, const double *v, double *Paa, double *Pab, double *Pbb);
} HsStateScheme;

/** A costate scheme: the node-k costate equation (docs/theory.md section 2.2). */
typedef struct {
  const char *name;
  int         order;
  int         conserving; /* H^d constant to round-off */
  /** C = costate residual of node k (time t_k = k h) from x_{k-1}, x_k, x_{k+1}, lambda_{k-1/2}, lambda_{k+1/2}. */
  int (*residual)(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                  const double *lp, double *C);
  /** Jacobian blocks of C with respect to xm, x0, xp, lm, lp (dim x dim each). */
  int (*jacobian)(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                  const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp);
} HsCostateScheme;

const HsStateScheme   *HsStateSchemeFind(const char *name);
const HsCostateScheme *HsCostateSchemeFind(const char *name);
const char            *HsStateSchemeListNames(void);
const char            *HsCostateSchemeListNames(void);

/** Creates a discretization of prob on N uniform intervals with the named schemes.
 *  Not collective (serial object). On failure returns < 0 and, if msg is not
 *  NULL, writes a message a user can act on (msg_len bytes). */
int  HsDiscCreate(const HsProblem *prob, const char *state_scheme, const char *costate_scheme, int N, double dg_tol,
                  HsDisc **disc, char *msg, int msg_len);
void HsDiscDestroy(HsDisc **disc);

int                    HsDiscGetDim(const HsDisc *d);
double                 HsDiscGetStep(const HsDisc *d);
const HsProblem       *HsDiscGetProblem(const HsDisc *d);
const HsStateScheme   *HsDiscGetStateScheme(const HsDisc *d);
const HsCostateScheme *HsDiscGetCostateScheme(const HsDisc *d);

/** State residual of one interval (docs/theory.md section 2.1, times h). */
int HsDiscStateResidual(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *F);
/** Its Jacobian blocks with respect to x_k, x_{k+1}, lambda_{k+1/2}. */
int HsDiscStateJacobian(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *Fxk, double *Fxk1,
                        double *Flam);
/** Costate residual of interior node k, 1 <= k <= N-1 (docs/theory.md section 2.2, times h);
 *  k fixes the times at which a time-dependent running cost is evaluated. */
int HsDiscCostateResidual(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                          const double *lp, double *C);
int HsDiscCostateJacobian(HsDisc *d, int k, const double *xm, const double *x0, const double *xp, const double *lm,
                          const double *lp, double *Jxm, double *Jx0, double *Jxp, double *Jlm, double *Jlp);

/** Blends the costate equation with another scheme's: C = theta C_own + (1 - theta) C_from. */
int HsDiscSetCostateHomotopy(HsDisc *d, const char *from, double theta);

/** Transversality residual at x_N (docs/transversality.md), for all 2n
 *  components (the caller uses those of the free terminal components):
 *    R = lambda_{N-1/2} + grad phi(x_N) + h [1/2 grad ell(x_N, T) + Db(x_{N-1}, x_N)^T JJ lambda_{N-1/2}],
 *  the stationarity of the direct transcription's Lagrangian in x_N; Db is the
 *  state scheme's (the midpoint's for the trapezoidal costate scheme). */
int HsDiscTerminalResidual(HsDisc *d, const double *xm, const double *xN, const double *lm, double *R);
/** Its Jacobian blocks with respect to x_{N-1}, x_N and lambda_{N-1/2}. */
int HsDiscTerminalJacobian(HsDisc *d, const double *xm, const double *xN, const double *lm, double *Rxm, double *RxN,
                           double *Rlm);
/** Free final time (docs/free-final-time.md): h = T / N again after HsProblemSetFinalTime (with T in the
 *  data also the control gain; HS_EDOM if R(T) is not positive definite). */
int HsDiscSetHorizon(HsDisc *d);
/** A free T in the data: dL^d/dT and d(JJ gbar + G u)/dT at fixed x_k, x_{k+1}, u (dim values). */
int HsDiscDataTU(HsDisc *d, const double *xk, const double *xk1, const double *u, double *LT, double *fT);
/** A free T in the data: dH^d/dT at fixed x_k, x_{k+1}, lambda. */
int HsDiscHamiltonianT(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *HT);
/** A free T in the data: interval k's term Q_k of the condition (1/N) sum (H^d_k + Q_k) = d phi/dT, and its
 *  gradient (central differences, HS_FT_FD_STEP) in x_k, x_{k+1}, lambda. */
int HsDiscFreeTimeTerm(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *Q);
int HsDiscFreeTimeTermGradient(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *gxk,
                               double *gxk1, double *glam);
#define HS_FT_FD_STEP 6e-6 /* about eps^(1/3) */
/** The gradient of H^d of interval k in x_k, x_{k+1}, lambda_{k+1/2} (the free-final-time row). */
int HsDiscHamiltonianGradient(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *gxk,
                              double *gxk1, double *glam);
/** d phi/dT, its gradient in x_N (may be NULL) and d^2 phi/dT^2 (may be NULL); 0 if phi ignores T. */
int HsDiscTerminalCostT(HsDisc *d, const double *xN, double *fT, double *gT, double *fTT);
/** The terminal residual R and its explicit derivative RT in a free final time T (2n each). */
int HsDiscTerminalResidualT(HsDisc *d, const double *xm, const double *xN, const double *lm, double *R, double *RT);
/** phi(x_N), 0 without a terminal cost. */
int HsDiscTerminalCost(HsDisc *d, const double *xN, double *phi);

/** u = R^{-1} Bbar^T lambda^p of the interval (x_k, x_{k+1}) (stationarity, docs/theory.md section 1;
 *  Bbar = B(qbar) for a configuration-dependent B, docs/configuration-dependent-forces.md). */
int HsDiscControl(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *u);
/** Discrete Hamiltonian of interval k, [t_k, t_{k+1}] (docs/theory.md section 2.3):
 *  H^d = -L^d + lambda^T (JJ gbar + G u), L^d = 1/2 u^T R u + 1/2 (ell(x_k, t_k) + ell(x_{k+1}, t_{k+1})). */
int HsDiscHamiltonian(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *H);
/** L^d of interval k; J^d = h sum_k L^d. */
int HsDiscRunningCost(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, double *L);
/** Dt_k, the part of ell(x_{k+1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) due to the
 *  change of time at node k (1 <= k <= N-1), docs/time-dependent-cost.md:
 *    Dt_k = 1/2 [ell(x_{k-1}, t_{k+1}) - ell(x_{k-1}, t_{k-1}) + ell(x_{k+1}, t_{k+1}) - ell(x_{k+1}, t_{k-1})],
 *  0 for an autonomous or absent running cost. With the conserving costate
 *  scheme H^d_{k+1/2} - H^d_{k-1/2} = -Dt_k / 2 exactly (the discrete
 *  dH/dt = -d ell/dt). */
int HsDiscEllTimeChange(HsDisc *d, int k, const double *xm, const double *xp, double *Dt);
/* Bounded controls (docs/controls.md): u_{k+1/2} = the law of costate/hscontrol.h at s = Bbar^T lambda^p, with
 * smoothing eps, wherever the discretization computes or differentiates u; H^d then holds psi(s) in place of
 * 1/2 u^T R u + lambda^T G u - u^T R u. */
/** The initial smoothing of a discretization with a bang-bang control (units of s; the solver's continuation
 *  sets its own, docs/controls.md). */
#define HS_BOUNDS_BANG_EPS_DEFAULT 1e-2
/** HS_SUCCESS if the indirect solvers take prob's bounded controls (or it has none); else HS_EINVAL and why. */
int HsDiscCheckBounded(const HsProblem *prob, char *msg, int msg_len);
/** 1 if d's controls follow the bounded law (bounds or R_jj = 0), 0 otherwise. */
int HsDiscIsBounded(const HsDisc *d);
/** Sets the smoothing eps >= 0 of the bounded law (eps = 0: the exact projection; > 0 needed with R_jj = 0);
 *  HS_EINVAL otherwise. */
int    HsDiscSetControlSmoothing(HsDisc *d, double eps);
double HsDiscGetControlSmoothing(const HsDisc *d);
/** The switching input s = Bbar^T lambda^p of interval (x_k, x_{k+1}) (m values). */
int HsDiscSwitchingInput(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *s);
/** E(x). */
int HsDiscEnergy(HsDisc *d, const double *x, double *E);
/** Discrete work of one interval: (q_{k+1} - q_k)^T Bbar u_{k+1/2}. */
int HsDiscWork(HsDisc *d, const double *xk, const double *xk1, const double *lam, double *W);

/* The same quantities with the control u_{k+1/2} given (m values) instead of u = R^{-1} G^T lambda:
 * the direct transcription NLP, whose controls may be bounded (costate/disc.c). */
int  HsDiscStateResidualU(HsDisc *d, const double *xk, const double *xk1, const double *u, double *F);
int  HsDiscRunningCostU(HsDisc *d, int k, const double *xk, const double *xk1, const double *u, double *L);
int  HsDiscHamiltonianU(HsDisc *d, int k, const double *xk, const double *xk1, const double *lam, const double *u,
                        double *H);
int  HsDiscWorkU(HsDisc *d, const double *xk, const double *xk1, const double *u, double *W);

/* The direct transcription NLP interval by interval (costate/nlp.c): variables x_1..x_N and
 * u_{k+1/2}; objective J^d = h sum L^d + phi(x_N); constraints c_k = HsDiscStateResidualU = 0.
 * The multiplier of c_k in the Lagrangian sigma J^d + sum y_k^T c_k is lambda_{k+1/2}. */
int HsNlpIntervalGradient(HsDisc *d, int k, const double *xk, const double *xk1, const double *u, double *gk,
                          double *gk1, double *gu);
int HsNlpIntervalJacobian(HsDisc *d, const double *xk, const double *xk1, const double *u, double *Cxk, double *Cxk1,
                          double *Cu);
int HsNlpIntervalHessian(HsDisc *d, int k, const double *xk, const double *xk1, const double *u, double sigma,
                         const double *y, double *Hkk, double *Hk1k, double *Hk1k1, double *Huu, double *Hxu);
int HsNlpTerminal(HsDisc *d, const double *xN, double *phi, double *g, double *Hm);

/* Gonzalez discrete gradient of an arbitrary smooth function (also used for
 * the running cost ell in the conserving scheme). Exposed for the tests. */
int HsGonzalezGrad(const HsFunction *F, int dim, void *ctx, double tol, const double *a, const double *b, double *g,
                   double *work);
/** Third-derivative action T = D(Hess f)(x)[v]; uses F->d3 or, if NULL, a
 *  central difference of the Hessian with step HS_D3_FD_STEP * (1 + |x|) / |v|. */
int HsFunctionD3(const HsFunction *F, int dim, void *ctx, const double *x, const double *v, double *T, double *work);
#define HS_D3_FD_STEP 1e-5

/* Scratch size (doubles) needed by HsGonzalezGrad for dimension dim. */
#define HS_GONZALEZ_WORK(dim) (4 * (dim))

#ifdef __cplusplus
}
#endif
#endif
