/* hamshoot: mechanical systems given by a mass matrix M(q) and a potential V(q). */
#ifndef HSMECHANICAL_H
#define HSMECHANICAL_H

#include "hsproblem.h"

/** M(q) (n x n), dM (n blocks n x n: dM[i] = dM/dq_i), d2M (n*n blocks:
 *  d2M[i*n+j] = d2M/dq_i dq_j), d3M (n*n*n blocks: d3M[(i*n+j)*n+k]). Any
 *  output may be NULL (not needed; e.g. only d2M when M and dM at this q are
 *  known already). d3M is requested only if HsMechanical.third is set. */
typedef int (*HsMassFn)(const double *q, double *M, double *dM, double *d2M, double *d3M, void *ctx);
/** V(q), gradient, Hessian and third derivatives d3V[(i*n+j)*n+k]; any output
 *  may be NULL. */
typedef int (*HsPotentialFn)(const double *q, double *V, double *dV, double *d2V, double *d3V, void *ctx);

/** The explicit derivatives in a free final time T of M and V at q (a problem file whose M or V uses T):
 *  MT = dM/dT (n x n), dMT (n blocks: dMT[i] = d(dM/dT)/dq_i), VT = dV/dT, dVT (n); any output may be NULL. */
typedef int (*HsMechanicalTFn)(const double *q, double *MT, double *dMT, double *VT, double *dVT, void *ctx);

/** Bounds on the round-off of V's gradient (edV, n) and of M's first derivatives (edM, n blocks n x n as dM; NULL for
 *  a constant mass) at q, as the potential and mass callbacks compute them (INFINITY: no bound). */
typedef int (*HsMechanicalBoundFn)(const double *q, double *edV, double *edM, void *ctx);

typedef struct {
  int             n;
  HsMassFn        mass;
  HsPotentialFn   potential;
  void           *ctx;
  int             third;         /* 1: mass and potential supply third derivatives (analytic D(Hess E)) */
  int             constant_mass; /* 1: M does not depend on q; mass is then asked for M only, once per parameter set */
  HsMechanicalTFn data_T;        /* NULL, or M and V depend on a free T: prob->E_T is installed */
  HsMechanicalBoundFn grad_bound; /* NULL, or the bounds of dV's and dM's round-off: prob->E.grad_bound is installed */
} HsMechanical;

/** Installs E = 1/2 p^T M(q)^{-1} p + V(q) and its derivatives as prob->E (problems/mechanical.c). */
int HsProblemSetMechanical(HsProblem *prob, const HsMechanical *mech, void (*destroy_user)(void *));

/** The context given in HsMechanical.ctx, from the problem's ctx pointer as the E and ell callbacks
 *  receive it. */
void *HsMechanicalUserContext(void *prob_ctx);

#endif
