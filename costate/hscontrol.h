/* hamshoot: the control law of bounded controls (docs/controls.md); serial C, no PETSc/MPI.
 *
 * The maximum condition of the Hamiltonian H = -L + lambda^T (JJ grad E + G u), L = 1/2 u^T R u + ell,
 * (a non-diagonal R: the box QP of HsControlLawEvalFull below), for a DIAGONAL R and box bounds lo_j <= u_j <= hi_j,
 * decouples by control. With the switching input s = (B^T lambda^p)_j (= (G^T lambda)_j) of control j, r = R_jj:
 *
 *   r > 0 (box law):   w = s / r,  u = w + sp(lo - w) - sp(w - hi),  sp(t) = (t + sqrt(t^2 + eps^2)) / 2
 *                      psi(s) = r [w^2/2 - Sp(lo - w) - Sp(w - hi)],
 *                      Sp(t) = t^2/4 + (t sqrt(t^2 + eps^2) + eps^2 asinh(t/eps)) / 4
 *                      eps = 0: u = clamp(s/r, lo, hi) and psi = max_{lo<=u<=hi} (s u - r u^2/2) exactly.
 *   r = 0 (bang-bang, both bounds finite, eps > 0 only):
 *                      u = mid + half s / sqrt(s^2 + eps^2),  psi = mid s + half (sqrt(s^2 + eps^2) - eps),
 *                      mid = (hi + lo)/2, half = (hi - lo)/2.
 *
 * psi is convex, psi'(s) = u and psi''(s) = du/ds >= 0, so psi(s) is the maximized control part of H
 * (of the smoothed problem for eps > 0). An infinite bound (-INFINITY / INFINITY, '*' in a problem file)
 * contributes no term. eps has the units of u for the box law and of s for the bang-bang law. At a kink
 * of the exact projection (s/r exactly at a bound) du/ds takes the free side, 1/r: the generalized
 * derivative the semismooth Newton uses.
 */
#ifndef HSCONTROL_H
#define HSCONTROL_H

#include "../problems/hsproblem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The coupled law (a non-diagonal R: the box QP of HsControlLawEvalFull, docs/controls.md section 1):
   HS_CONTROL_QP_MAX_M the most controls it takes; HS_CONTROL_QP_TOL the relative size of the last Newton step of the
   smoothed (barrier) law; HS_CONTROL_QP_MAXIT the most iterations of either method; HS_CONTROL_QP_TAU the
   fraction-to-the-boundary factor of the barrier Newton; HS_CONTROL_QP_ARMIJO its sufficient-increase factor,
   HS_CONTROL_QP_BACKTRACKS its most step halvings, HS_CONTROL_QP_FLAT the Newton decrement (relative to 1 + |f|)
   below which a full step is taken without the line search (f cannot resolve the increase: the last steps). */
#define HS_CONTROL_QP_MAX_M 16
#define HS_CONTROL_QP_TOL 1e-14
#define HS_CONTROL_QP_MAXIT 200
#define HS_CONTROL_QP_TAU 0.995
#define HS_CONTROL_QP_ARMIJO 1e-4
#define HS_CONTROL_QP_BACKTRACKS 60
#define HS_CONTROL_QP_FLAT 1e-12

/** The law of one control: u, psi and du/ds at s (any output may be NULL). HS_EINVAL for r < 0, for r = 0
 *  without two finite bounds or with eps = 0, for eps < 0 or lo > hi. */
int HsControlScalar(double r, double lo, double hi, double eps, double s, double *u, double *psi, double *duds);

/** 1 if prob's R is diagonal (the closed-form law), 0 if it couples the controls (the box QP). */
int HsControlLawDiagonal(const HsProblem *prob);

/** The law with the full m x m Jacobian duds (row-major; each output may be NULL): a diagonal R as HsControlLawEval
 *  (du/ds diagonal, bit for bit); a coupled R the box QP u = argmax_{lo<=u<=hi} s^T u - 1/2 u^T R u, exactly for
 *  eps = 0 (active set; du/ds = Z (Z^T R Z)^{-1} Z^T on the free set), for eps > 0 the log-barrier law with weights
 *  R_jj eps^2/4 (the diagonal law's sp-smoothing at one bound exactly): psi the barrier problem's maximum,
 *  u = grad psi, du/ds = (R + D)^{-1}. HS_EINVAL for bad input, HS_EDOM if the QP iteration fails. */
int HsControlLawEvalFull(const HsProblem *prob, double eps, const double *s, double *u, double *psi, double *duds);

/** The value w (m) classifying each control's arc under the exact law: s_j/R_jj (diagonal R; s_j for R_jj = 0), or
 *  for a coupled R w_j = u_j + (s - R u)_j / R_jj with u_j = clamp(w_j, lo_j, hi_j). */
int HsControlLawArcInput(const HsProblem *prob, const double *s, double *w);

/** 1 if prob's controls need the bounded law (a finite bound, or a control with R_jj = 0), 0 otherwise. */
int HsControlLawActive(const HsProblem *prob);

/** Checks that prob fits the bounded law: R_jj >= 0, R_jj = 0 only with both bounds of control j finite, and a
 *  non-diagonal R symmetric positive definite (no R_jj = 0) with at most HS_CONTROL_QP_MAX_M controls. Returns
 * HS_SUCCESS or HS_EINVAL with a message naming the problem in msg (msg_len bytes; msg may be NULL). */
int HsControlLawCheck(const HsProblem *prob, char *msg, int msg_len);

/** The law of all m controls of prob at s (m values, s_j = (B^T lambda^p)_j) for a DIAGONAL R: u (m), psi (the sum
 *  over the controls) and du/ds (m, the diagonal of the Jacobian), each output may be NULL. R, u_min and u_max
 *  are read from prob at each call (parameters may change them). A coupled R: HsControlLawEvalFull. */
int HsControlLawEval(const HsProblem *prob, double eps, const double *s, double *u, double *psi, double *duds);

#ifdef __cplusplus
}
#endif
#endif
