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

typedef struct {
  int           n;
  HsMassFn      mass;
  HsPotentialFn potential;
  void         *ctx;
  int           third;         /* 1: mass and potential supply third derivatives (analytic D(Hess E)) */
  int           constant_mass; /* 1: M does not depend on q; mass is then asked for M only, once per parameter set */
} HsMechanical;

/** Installs E = 1/2 p^T M(q)^{-1} p + V(q) with its gradient and Hessian
 *  (problems/mechanical.c) as prob->E, and the third-derivative action
 *  D(Hess E)(x)[w] if mech->third; prob->ctx becomes internal, and
 *  destroy_user (may be NULL) frees mech->ctx with the problem. n <= 16. */
int HsProblemSetMechanical(HsProblem *prob, const HsMechanical *mech, void (*destroy_user)(void *));

/** Forgets the cached evaluation (after a parameter changed); no-op for other problems. */
void HsProblemMechanicalInvalidate(HsProblem *prob);

/** The context given in HsMechanical.ctx, or NULL if prob is not mechanical. */
void *HsProblemGetMechanicalContext(const HsProblem *prob);

/** The same, from the problem's ctx pointer as the E/ell callbacks receive it. */
void *HsMechanicalUserContext(void *prob_ctx);

/** Reads a problem file (.ocp, docs/problem-format.md). Returns 0; 2 with a
 *  message "file:line:column: what is wrong" in msg; < 0 on allocation failure. */
int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen);

int HsProblemCreateCrane(HsProblem **prob);
int HsProblemCreateManipulator3(HsProblem **prob);

#endif
