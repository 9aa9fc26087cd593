/* hamshoot: the one-step march of multiple shooting (docs/theory.md section 3),
 * serial C on costate/'s residuals and GSL; no PETSc/MPI.
 *
 * A march starts at node k_s from z = (x_{k_s}, lambda_{k_s+1/2}) and solves,
 * step by step, first the state equation of interval k_s for x_{k_s+1}, then
 * for every later node k the node-k costate and the interval-k state equation
 * together for (x_{k+1}, lambda_{k+1/2}); the sensitivities of the trajectory
 * to z follow by the implicit function theorem (costate/march.c).
 *
 * Status codes (problems/hsproblem.h): HS_SUCCESS; > 0 a step failed and may
 * succeed from elsewhere (HS_EDOM: the state left the problem's domain or the
 * march overflowed; HS_ENOCONV: the local Newton did not converge;
 * HS_ESINGULAR: a step Jacobian is singular); < 0 errors (HS_EFAILED: a
 * problem callback failed fatally; HS_EINVAL; HS_ENOMEM). After a failure,
 * HsMarchGetFailure() says which step and why.
 */
#ifndef HSMARCH_H
#define HSMARCH_H

#include "hscostate.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct HsMarch_s HsMarch;

/** Defaults of the local Newton (HsMarchSetTolerances). */
#define HS_MARCH_ATOL_DEFAULT 1e-14
#define HS_MARCH_STOL_DEFAULT 1e-12
#define HS_MARCH_MAX_IT_DEFAULT 25

int         HsMarchCreate(HsDisc *disc, HsMarch **march);
void        HsMarchDestroy(HsMarch **march);
int         HsMarchSetTolerances(HsMarch *march, double atol, double stol, int max_it);
void        HsMarchGetTolerances(const HsMarch *march, double *atol, double *stol, int *max_it);
int         HsMarchStep(HsMarch *march, int k, int first, const double *xm, const double *xk, const double *lm,
                        double *xp, double *lp);
int         HsMarchSegment(HsMarch *march, int ks, int len, const double *z, int warm, double *traj, double *sens,
                           double *growth);
const char *HsMarchGetFailure(const HsMarch *march);
void        HsMarchSetFreeTime(HsMarch *march, int on);
void        HsMarchSetChord(HsMarch *march, int on);
void        HsMarchSetHamiltonianSum(HsMarch *march, int on);
void        HsMarchGetHamiltonianSum(const HsMarch *march, double *sum, const double **grad);

#ifdef __cplusplus
}
#endif
#endif
