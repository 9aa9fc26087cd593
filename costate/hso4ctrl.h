/* hamshoot: the control term of the maximized Hamiltonian for controls that enter nonlinearly and a general control
 * cost (docs/controls.md, "Controls in the full-Pontryagin scheme"; costate/o4ctrl.c): with the force f(q, u) and the
 * control cost c(u, q) of the problem's ctrl callback,
 *   Psi(q, lambda_p) = max_u h(q, lambda_p, u),   h = -c(u, q) + lambda_p . f(q, u),
 * u*(q, lambda_p) from a small globalized Newton on h_u = 0 (warm-started from the last maximizer), the
 * Legendre-Clebsch condition -h_uu positive definite checked at every evaluation; the gradient of Psi by the envelope
 * theorem (h_q, f at u*), its Hessian by implicit differentiation, h_zz + h_zu (-h_uu)^{-1} h_uz, z = (q, lambda_p).
 * Serial C (no PETSc/MPI). */
#ifndef HSO4CTRL_H
#define HSO4CTRL_H

#include "../problems/hsproblem.h"

/** The inner Newton's stopping test: |h_u|_inf <= HS_O4_CTRL_TOL (1 + |c_u|_inf + sum_i |lambda_p,i| |f_i,u|_inf). */
#define HS_O4_CTRL_TOL 1e-13
/** At most this many inner Newton iterations per evaluation point. */
#define HS_O4_CTRL_MAXIT 60
/** The Legendre-Clebsch condition holds where every Cholesky pivot of -h_uu exceeds HS_O4_LC_TOL (1 + max |h_uu|). */
#define HS_O4_LC_TOL 1e-10

typedef struct HsO4Ctrl_s HsO4Ctrl;

/** The control term of problem P (P->ctrl not NULL); NULL without memory. */
HsO4Ctrl *HsO4CtrlCreate(const HsProblem *P);
void      HsO4CtrlDestroy(HsO4Ctrl **c);
/** Psi at (q, lp) and u* (HsO4CtrlControl); order >= 1: gq = dPsi/dq, gl = dPsi/dlambda_p (= f(q, u*)) (n each);
 *  order 2: Hqq, Hql (row l: d/dq_l of dPsi/dlambda_p), Hll (n x n each). Returns 0; HS_EDOM outside the domain or
 *  where the maximizer fails (no maximum, the Legendre-Clebsch condition fails: HsO4CtrlWhy says where);
 *  HS_EFAILED if the callback fails. */
int HsO4CtrlEval(HsO4Ctrl *c, const double *q, const double *lp, int order, double *psi, double *gq, double *gl,
                 double *Hqq, double *Hql, double *Hll);
/** The maximizer u* (m) of the last successful HsO4CtrlEval, and the force f(q, u*) there (n). */
const double *HsO4CtrlControl(const HsO4Ctrl *c);
const double *HsO4CtrlForce(const HsO4Ctrl *c);
/** Adds eps/2 |u|^2 to the control cost (0: none; the continuation of a cold start, bvp/impls/order4.c). */
void HsO4CtrlSetRegularization(HsO4Ctrl *c, double eps);
/** The time t of the force and the control cost in the next evaluations (a time-dependent f or c; 0 at first). */
void HsO4CtrlSetTime(HsO4Ctrl *c, double t);
/** Why the last HsO4CtrlEval failed ("" if it did not). */
const char *HsO4CtrlWhy(const HsO4Ctrl *c);

#endif
