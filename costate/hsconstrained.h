/* hamshoot: the conserving scheme for constrained systems in natural coordinates (docs/constrained.md;
 * serial C on GSL, no PETSc/MPI).
 *
 * A problem with holonomic constraints Phi(q) = 0 (prob->nc > 0; constant M, quadratic Phi, linear V, affine
 * B: problems/ocp.c checks the class) is discretized with the energy-consistent midpoint state scheme (BEM:
 * G(qbar) gamma in the momentum equation, Phi = 0 at the nodes) and the costate scheme of docs/constrained.md,
 * whose discrete Hamiltonian is exactly constant. Unknowns of time point k, in this order (D = 4n + 2nc):
 *
 *   z_k = [ q_k (n), p_k (n), nu_k (nc), lq (n), lp (n), gamma (nc) ]
 *
 * q_k, p_k and the node multiplier nu_k at node k; the costates lambda_{k+1/2} = (lq, lp) and the constraint
 * force gamma_{k+1/2} of interval k. Point N's nu slot holds alpha of the natural end condition, its interval
 * slots are dummies fixed to 0; point 0's nu slot is a dummy fixed to 0. Each point has two groups of
 * 2n + nc equations, all times h so that the Jacobian blocks are O(1):
 *
 *   first group:  k < N: interval k (HsConsInterval);        k = N: the end condition (HsConsTerminal)
 *   second group: 0 < k < N: node k (HsConsNode);            k = 0: x_0 = x0, nu_0 = 0; k = N: dummies = 0
 *
 * Every Jacobian block is (2n + nc) x D, row-major, with respect to one point's unknowns; a NULL block is not
 * formed. Status codes: problems/hsproblem.h. */
#ifndef HSCONSTRAINED_H
#define HSCONSTRAINED_H

#include "hscostate.h"

typedef struct HsCons_s HsCons;

/** The scheme for prob (prob->nc > 0) on N uniform intervals of its current T. msg says why not. */
int  HsConsCreate(const HsProblem *prob, int N, HsCons **cs, char *msg, int msglen);
void HsConsDestroy(HsCons **cs);
/** D = 4n + 2 nc, the unknowns of a time point; the rows of a group are D / 2. */
int  HsConsBlockSize(const HsCons *cs);

/** Interval k's equations (z0 = z_k, z1 = z_{k+1}): state, momentum with G(qbar)^T gamma, adjoint constraint
 *  G(qbar) lp = 0; blocks in z_k (J0) and z_{k+1} (J1). */
int HsConsInterval(HsCons *cs, const double *z0, const double *z1, double *F, double *J0, double *J1);
/** The discretization of the unconstrained part (state scheme bem = Gonzalez, costate scheme conserving) that the
 *  extended scheme builds on (problems outside the exact class: prob->cons_extended); not owned. Required before
 *  any equation of such a problem. */
void HsConsSetDisc(HsCons *cs, HsDisc *disc);
/** 1 if the problem lies in the exact class (the closed-form scheme), 0 for the extended scheme. */
int  HsConsIsExact(const HsCons *cs);
/** The KKT conditions of the direct BEM transcription (kkt = 1) instead of the conserving scheme (0, the default):
 *  the node's costate equation with plain products, each interval's control term and G(q_k)^T nu. */
void HsConsSetKKT(HsCons *cs, int kkt);
/** Node k's equations (zm, z0, zp = z_{k-1}, z_k, z_{k+1}): the costate equations and Phi(q_k) = 0. */
int HsConsNode(HsCons *cs, int k, const double *zm, const double *z0, const double *zp, double *C, double *Jm,
               double *J0, double *Jp);
/** The end condition at point N (zm = z_{N-1}): q_N = q_T, p_N = p_T + G(q_T)^T alpha, and the natural
 *  condition G(q_T)(lp_{N-1/2} - (h/2) M^{-1} lq_{N-1/2}) = 0. */
int HsConsTerminal(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm, double *JN);
/** Point 0's second group (q_0 - q0, p_0 - p0, nu_0) and point N's (its interval slots); J: the identity there. */
int HsConsInitial(HsCons *cs, const double *z0, double *F, double *J);
int HsConsEnd(HsCons *cs, const double *zN, double *F, double *J);
/** 1 if point N's two groups are the extended class's end at rest (conserved invariants, or free terminal coordinates
 *  with the momenta fixed at 0: docs/constrained.md): HsConsEndRest then gives both, with blocks in z_{N-1} and z_N
 *  of each group (Jm0, JN0, Jm1, JN1; NULL: none). */
int HsConsRestEnd(const HsCons *cs);
int HsConsEndRest(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm0, double *JN0, double *Jm1,
                  double *JN1);

/** Diagnostics of interval k: r[0] = max |G(qbar) M^{-1} pbar| (the interval's hidden constraint, exact at a
 *  solution), r[1] = max |G(qbar) lp| (the adjoint constraint). */
int HsConsIntervalResiduals(HsCons *cs, const double *z0, const double *z1, double r[2]);
/** ... of node k: r[0] = max |Phi(q_k)|, r[1] = max |G(q_k) M^{-1} p_k| (the nodal hidden constraint, O(h^2)),
 *  r[2] = max |Phi_i(q_k)| / |G_i(q_k)| (a distance from the constraints, whatever their scaling). */
int HsConsNodeResiduals(HsCons *cs, const double *z, double r[3]);
/* The direct BEM transcription as an NLP, interval by interval (consnlp.c; the closed-form class): interval k's 2n
 * constraints with u (m) and gamma (nc) as variables and their Jacobian blocks in x_k, x_{k+1}, gamma, u (2n rows
 * each; NULL blocks: not formed); the second derivatives of y^T c (gamma-q: nc x n, u-q: m x n, q-q: n x n for a B(q)
 * that is not affine, the extended class through B(q) alone); a node's Phi,
 * G and sum_i w_i Hess Phi_i; the least-squares gamma of an interval's momentum equation (a start). */
int HsConsNlpInterval(HsCons *cs, const double *x0, const double *x1, const double *u, const double *gamma, double *c,
                      double *Jx0, double *Jx1, double *Jg, double *Ju);
int HsConsNlpIntervalHessian(HsCons *cs, const double *x0, const double *x1, const double *y, const double *u,
                             double *Hgq, double *Huq, double *Hqq);
int HsConsNlpNode(HsCons *cs, const double *q, const double *w, double *Phi, double *G, double *Hw);
int HsConsNlpForce(HsCons *cs, const double *x0, const double *x1, const double *u, double *gamma);

/** gamma balancing gravity at rest at the midpoint of the states a, b (least squares): a guess. */
int HsConsRestForce(HsCons *cs, const double *a, const double *b, double *gamma);
/** Phi(q) (nc values) and its gradient G (nc x n, row-major) at q. */
int HsConsPhi(HsCons *cs, const double *q, double *Phi, double *G);
/** u of interval k: R^{-1} B(qbar)^T lp (m values). */
int HsConsControl(HsCons *cs, const double *z0, const double *z1, double *u);

/* Costates implied by a state guess (consguess.c; -hs_guess_costates implied): an interval's least-squares control
 * u, force gamma and costate lambda^p from its end states a, b; lambda^q = -M dlp from a difference quotient of
 * lambda^p. Singular values below HS_CONS_IMPLIED_RCOND times the largest count as zero in the least squares. */
#define HS_CONS_IMPLIED_RCOND 1e-12
int HsConsImpliedCostate(HsCons *cs, const double *a, const double *b, double *u, double *gamma, double *lp);
int HsConsImpliedLq(HsCons *cs, const double *dlp, double *lq);

#endif
