/* hamshoot: the fourth-order conserving scheme (docs/theory.md section 8): the Suzuki/Yoshida triple jump of the
 * Gonzalez discrete gradient method for the whole Pontryagin system z' = S grad H(z), z = (x, lambda) in R^{4n},
 * S = [[0, I], [-I, 0]], with u eliminated and H the maximized Hamiltonian
 *   H(x, lambda) = 1/2 lambda^T G R^{-1} G^T lambda - ell(x) + lambda^T JJ grad E(x).
 * Serial C on GSL (no PETSc/MPI). Every residual is times 1 (O(1) Jacobian blocks as h -> 0):
 *   substep j of interval k (fraction c_j of h: gamma1, gamma2, gamma1):
 *     F = b - a - c_j h S gbar(a, b),  gbar the Gonzalez discrete gradient of H, gbar.(b - a) = H(b) - H(a). */
#ifndef HSORDER4_H
#define HSORDER4_H

#include "hscostate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The triple jump's fractions: gamma1 = 1/(2 - 2^(1/3)) (twice), gamma2 = 1 - 2 gamma1 (< 0) between. */
#define HS_O4_GAMMA1 1.3512071919596576340476878
#define HS_O4_GAMMA2 (-1.7024143839193152680953756)

typedef struct HsO4_s HsO4;

/** The scheme on the discretization d (its problem, h, dg_tol, G R^{-1} G^T or R^{-1}); d must outlive it. Fails
 *  with a message for what it does not support: T in the problem's data with bounded or nonlinearly entering
 *  controls, constraints outside the closed-form class (HsO4ConsCount). */
int  HsO4Create(HsDisc *d, HsO4 **o4, char *msg, int msg_len);
void HsO4Destroy(HsO4 **o4);
/** The fraction of h of substep j (0, 1, 2). */
double HsO4Fraction(int j);
/** H(z, t), z = (x, lambda) (4n values), and (g not NULL) its gradient in z (4n). */
int HsO4Hamiltonian(HsO4 *o, double t, const double *z, double *H);
int HsO4HamiltonianGradient(HsO4 *o, double t, const double *z, double *H, double *g);
/** The residual of a substep of fraction c from a at time ta to b at ta + c h (4n each), and (if Fa, Fb are not NULL)
 *  its Jacobian blocks dF/da, dF/db (4n x 4n, row-major). A time-dependent ell enters gbar as the Gonzalez
 *  gradient of 1/2 (H(., ta) + H(., tb)). */
int HsO4Substep(HsO4 *o, double c, double ta, const double *a, const double *b, double *F, double *Fa, double *Fb);
/** A substep's part of J^d, c h L(zbar, tbar) with zbar = (a + b)/2, tbar = ta + c h/2, L = 1/2 u^T R u + ell(xbar,
 * tbar), u = R^{-1} G^T lambdabar; its part of the discrete work, (q_b - q_a)^T B u; and Dt, the exact change of H over
 * it: H(b, tb) - H(a, ta) = Dt = -1/2 [ell(x_a, tb) - ell(x_a, ta) + ell(x_b, tb) - ell(x_b, ta)] (0 if ell ignores t).
 */
int HsO4SubstepCost(HsO4 *o, double c, double ta, const double *a, const double *b, double *L, double *W, double *Dt);
/** The 2n terminal rows at z_N: a fixed component i, x_i - x_T,i; a free one, lambda_i + d phi/dx_i (the maximum
 *  principle's lambda(T) = -grad phi with H = -L + ...); with Rz (2n x 4n) their Jacobian. */
int HsO4Terminal(HsO4 *o, const double *zN, double *R, double *Rz);
/** The terminal cost of J^d: phi(x_N), with constraints phi at x_N's projection (q_N, P(q_N) p_N) onto the hidden
 *  constraint G M^{-1} p = 0 (docs/theory.md section 8.1; HsO4ConsTerminal's rows are its transversality). */
int HsO4TerminalCost(HsO4 *o, const double *zN, double *phi);
/** A free T in the problem's data (P->data_T; docs/theory.md section 8, "T in the data"): the explicit derivative of
 *  H in T at fixed z, dH/dT = -1/2 u^T R_T u - ell_T(x) + lambda^T JJ grad E_T(x) + lambda_p^T B_T(q) u at the
 *  maximizer u = R^{-1} B(q)^T lambda_p (the envelope theorem: u's own change drops out); with a force f(q, u)
 *  (P->ctrl) the terms in u vanish (f and c have no T), leaving -ell_T + lambda^T JJ grad E_T; 0 without data_T. */
int HsO4HamiltonianT(HsO4 *o, const double *z, double *HT);
/** The gradient of HsO4HamiltonianT in z (4n) by central differences, step HS_FT_FD_STEP (1 + |z_i|) (a Jacobian
 *  row only; the residual is exact). */
int HsO4HamiltonianTGradient(HsO4 *o, const double *z, double *g);
/** A free T and a terminal state that moves with it (P->xT_T): v = sum over the fixed components i of
 *  nu_i dx_T,i/dT, nu_i = lambda_N,i + d phi/dx_i(x_N) the multiplier of x_N,i = x_T,i(T), and (g not NULL, 4n) its
 *  gradient in z_N; 0 without xT_T. */
int HsO4TerminalT(HsO4 *o, const double *zN, double *v, double *g);
/** Holonomic constraints (docs/theory.md section 8.1; the closed-form class of docs/constrained.md): nc, 0 without. */
int HsO4ConsCount(const HsO4 *o);
/** g(z) = (Phi(q), G(q) lambda_p) (2nc; g may be NULL) and (gz not NULL) its gradient in z (2nc x 4n). */
int HsO4Cons(HsO4 *o, const double *z, double *g, double *gz);
/** A substep's constraint forces: adds -c h S grad g(zbar)^T kappa (zbar = (a + b)/2, kappa: 2nc) to the residual F
 *  of HsO4Substep and (Fa not NULL) 1/2 its derivative in zbar to Fa and Fb; Fk (not NULL: 4n x 2nc) its derivative
 *  in kappa. */
int HsO4SubstepConsTerms(HsO4 *o, double c, const double *a, const double *b, const double *kappa, double *F,
                         double *Fa, double *Fb, double *Fk);
/** The 2nc rows at z_0: G(q_0) lambda_p = 0 and the costates' hidden constraint d/dt (G lambda_p) =
 *  lambda_p^T Hphi_i M^{-1} p - G_i M^{-1} lambda_q = 0; rz (2nc x 4n) their Jacobian. */
int HsO4ConsStart(HsO4 *o, const double *z0, double *r, double *rz);
/** 1 where a constrained problem leaves some terminal coordinate free (the end's ext then holds beta1 and Phi(q_N) = 0
 *  is a row of the last substep), else 0. */
int HsO4ConsFreeCoordinates(const HsO4 *o);
/** With free coordinates: *implied = 1 where constraint j's gradient at q_N is 0 in every free coordinate (the
 *  wheel's body director |a| = 1 with a fixed): Phi_j(q_N) = 0 then follows from the fixed coordinates' rows and
 *  beta1_j enters no row, so the end takes beta1_j = 0 in the place of Phi_j(q_N) = 0 (docs/theory.md section 8.1). */
int HsO4ConsImpliedAtEnd(HsO4 *o, const double *zN, int j, int *implied);
/** The 2n terminal rows with constraints (docs/theory.md section 8.1), ext the 2nc extra unknowns of the end. All end
 *  states fixed: q_N - q_T, p_N - p_T - G(q_T)^T alpha (alpha = ext[0 .. nc), the free normal part of p_N; ext's rest
 *  unused). The momenta free: the transversality rows of ConsTerminalFree (order4.c; phi and p at the projected end
 *  state of HsO4TerminalCost), beta2 = ext[0 .. nc) and, with free coordinates (HsO4ConsFreeCoordinates; Phi(q_N) = 0
 *  is then the last substep's row), beta1 = ext[nc .. 2nc).
 *  Rz (2n x 4n) and Ra (2n x 2nc) their Jacobian. */
int HsO4ConsTerminal(HsO4 *o, const double *zN, const double *ext, double *R, double *Rz, double *Ra);
/** The rest end with conserved quantities ('conserved:', docs/theory.md section 8.1): after HsO4ConsTerminal, the
 *  momentum rows R[n ..] relaxed by -sum_l gam_l c_l(q_E) (c_l = grad_p I_l, q_E = q_N with free coordinates, else
 *  q_T), with Rz (2n x 4n) updated and Rg (2n x ncinv) their Jacobian in gam, and the ncinv rows Iv_l = c_l . lambda_p
 *  with Iz (ncinv x 4n). Rz NULL: values only. */
int HsO4ConsInvariantEnd(HsO4 *o, const double *zN, const double *gam, double *R, double *Rz, double *Rg, double *Iv,
                         double *Iz);
/** A start for a substep's multipliers from a to b: kappa_1 = 0 and kappa_2 the least-squares constraint force that
 *  balances the potential at rest at the midpoint, G G^T kappa_2 = G grad V (HS_EFAILED where G G^T is singular). */
int HsO4ConsRestGuess(HsO4 *o, const double *a, const double *b, double *kappa);
/** The control at the node z (m values into u): R^{-1} B(q)^T lambda_p with B at this node's q (or the bounded law
 *  there, or the maximizer u* of H where controls enter nonlinearly). */
int HsO4NodeControl(HsO4 *o, double t, const double *z, double *u);
/** Between HsO4CacheBegin and HsO4CacheEnd, H and its gradient at a substep's end point b are kept for the next
 *  substep whose start a is the same point (a transcription's pass over the substeps in order): bit for bit the values
 *  an evaluation gives. Call HsO4CacheEnd before anything changes H (the control regularization, the law's smoothing).
 */
void HsO4CacheBegin(HsO4 *o);
void HsO4CacheEnd(HsO4 *o);
/** Why the last evaluation failed where controls enter nonlinearly (no maximum of H in u, the Legendre-Clebsch
 *  condition; costate/hso4ctrl.h), "" otherwise. */
const char *HsO4Why(const HsO4 *o);
/** The maximizing control u* (m) of the last evaluation of H where controls enter nonlinearly (costate/hso4ctrl.h),
 *  NULL otherwise (u = R^{-1} G^T lambda). */
const double *HsO4Control(const HsO4 *o);
/** Adds eps/2 |u|^2 to a general control cost (controls that enter nonlinearly; no-op otherwise): the regularized
 *  problems of a cold start's continuation (docs/controls.md). */
void HsO4SetControlRegularization(HsO4 *o, double eps);

#ifdef __cplusplus
}
#endif
#endif
