/* hamshoot: private data of the ipopt formulation (bvp/impls only).
 *
 * The direct transcription NLP (costate/nlp.c) solved by IPOPT on rank 0. Variables per interval k,
 * in time order, nb = m + 2n of them: (u_{k+1/2}, x_{k+1}); x_0 is not a variable. Constraints: the
 * 2n state equations c_k of each interval (h-form, HsDiscStateResidualU). The Hessian's lower
 * triangle per interval k: u_k's block, node k+1's diagonal block, and for k >= 1 the block
 * (x_{k+1}, x_k); each position appears once (contributions of two intervals to a node are summed
 * here, not left to IPOPT). A free final time T is one more variable, the last; h = T/N, so it
 * adds a dense column to the constraint Jacobian and a dense row to the Hessian
 * (docs/free-final-time.md; ipoptnlp.c derives both from the interval pieces).
 *
 * A constrained system of the closed-form class (docs/constrained.md, "The direct counterpart"; ipoptcons.c): the
 * direct BEM transcription (costate/consnlp.c). Variables per interval k, nb = m + nc + 2n of them:
 * (u_{k+1/2}, gamma_{k+1/2}, q_{k+1}, p_{k+1}), then alpha (nc) of the end condition; x_0 is not a variable, q_N is
 * fixed by its bounds (q_N = q_T). Constraints: the 2n interval equations c_k of each interval (h-form, rows
 * k 2n..), Phi(q_k) = 0 at the inner nodes k = 1..N-1 (rows N 2n + (k-1) nc..; q_N = q_T lies on the constraints,
 * HsProblemCheckConstraints), and the end condition p_N - p_T - G(q_T)^T alpha = 0 (n rows, last): only p_N's
 * tangential part is prescribed. The Hessian's lower triangle per interval k: u_k's block sigma h R, the mixed
 * blocks (gamma_k, q_k) for k >= 1 and (q_{k+1}, gamma_k), with a B(q) (u_k, q_k) for k >= 1 and (q_{k+1}, u_k),
 * and node k+1's block sum_i w_i Hess Phi_i for k + 1 <= N - 1; each position once. The transcription's data is
 * the constrained one (HsIpoptCons), its residual the KKT conditions of this NLP (constrained_kkt).
 * The extended class through B(q) alone (ext) adds per interval k >= 1 the block (q_{k+1}, q_k) and q_N's lower
 * triangle (after the intervals), B's curvature; with the rest end the variables beta (ni) after alpha, q_N's free
 * components, and the rows Phi_j(q_N) = 0 of the moving constraints after the end condition, whose G(q_N)^T alpha
 * + sum_l beta_l grad_p I_l(q_N) then adds its Jacobian block in q_N and the Hessian's (alpha, q_N), (beta, q_N).
 */
#ifndef HSIPOPTIMPL_H
#define HSIPOPTIMPL_H

#include "constrainedimpl.h"
#include "transcriptionimpl.h"

#include <IpStdCInterface.h>

/* IPOPT's C interface, resolved by dlopen (ipopt.c explains why). */
typedef struct {
  __typeof__(CreateIpoptProblem)      *Create;
  __typeof__(FreeIpoptProblem)        *Free;
  __typeof__(AddIpoptStrOption)       *StrOption;
  __typeof__(AddIpoptNumOption)       *NumOption;
  __typeof__(AddIpoptIntOption)       *IntOption;
  __typeof__(SetIpoptProblemScaling)  *Scaling;
  __typeof__(SetIntermediateCallback) *Intermediate;
  __typeof__(IpoptSolve)              *Solve;
} HsIpoptLib;

typedef struct {
  HsTranscription tr; /* first: the transcription this formulation is built on */
  /* settings */
  PetscReal tol;
  PetscInt  max_it, print_level;
  PetscReal max_pert; /* IPOPT's max_hessian_perturbation (HsSolverIpoptSetMaxPerturbation); 0: IPOPT's 1e20 */
  PetscInt  ordering; /* index into ipopt.c's ordering names (IPOPT's mumps_pivot_order) */
  PetscInt  deriv_test; /* index into ipopt.c's derivative test names (IPOPT's derivative_test) */
  PetscErrorCode (*trsetup)(HsSolver); /* the transcription's set-up */
  /* the NLP of the current solve (rank 0) */
  HsDisc    *d;
  HsProblem *prob;        /* the problem (a free final time is set on it) */
  int        N, n, m, dim, nb;
  int        ft, nv;      /* ft = 1 with a free final time T, the last variable; nv variables */
  int        bq;          /* 1 with a B(q): the Hessian has the mixed blocks (x_{k+1}, u_k) and (u_k, x_k), q-parts */
  int        mt, *mti;    /* terminal values x_T(T) (a free T): their mt fixed components mti[] are constraints
                             x_{N,i} - x_T,i(T) = 0, rows N dim.. (not bounds, which cannot move with T) */
  Index     *joff, *hoff; /* offsets of interval k's entries in the Jacobian and Hessian arrays */
  double    *x0;          /* the initial state */
  double    *Hd;          /* scratch: the Hessian blocks of one interval (3 dim^2 + m^2 + n m) */
  double    *Jb;          /* scratch: the Jacobian blocks of one interval (2 dim^2 + dim m) */
  double    *fd;          /* T in the data: scratch of TRowDifference (3 nv + the Jacobian's entries), or NULL */
  Index     *fdrc;        /* ... the Jacobian's rows and columns */
  HsCons    *cons;        /* a constrained system: its scheme at this solve's T (not owned; ipoptcons.c), else NULL */
  int        nc;          /* ... and its number of constraints */
  double     h;           /* ... and the step */
  int        ext, ni, qfree, nmv; /* the extended class through B(q) alone (ipoptcons.c): its (q, q) blocks; the rest
                                     end's ni conserved directions (beta), free q_N, nmv moving Phi(q_N) rows */
  double    *xw;                  /* ... its scratch (2 n^2 + nc + nc n + nc n^2 + ni n + ni n^2), or NULL */
  int        failed;      /* a callback left the problem's domain */
  PetscInt   iterations;
  PetscReal  inf_pr, inf_du; /* of the last iteration (IPOPT's scaled measures) */
  PetscReal  reg;            /* the Hessian regularization delta_w of the last iteration's step (0: none) */
  PetscBool  monitor;
  PetscReal  t_start;
  PetscReal  wall_ipopt; /* seconds inside IpoptSolve */
  PetscReal  deadline;   /* the solver's -hs_strategy_time deadline (rank 0's MPI_Wtime; 0: none): IPOPT stops there */
} HsIpopt;

/* The ipopt formulation on a constrained system: the constrained transcription's data first (its operations read
 * s->data as an HsConstrained), then IPOPT's settings and NLP, and the constrained transcription's operations that
 * ipopt.c's wrap. */
typedef struct {
  HsConstrained cd;
  HsIpopt       ip;
  PetscErrorCode (*destroy)(HsSolver);
  PetscErrorCode (*view)(HsSolver, PetscViewer);
  PetscErrorCode (*writesummary)(HsSolver, FILE *);
} HsIpoptCons;

/* The NLP's callbacks and sizes (ipoptnlp.c). */
PetscErrorCode HsIpoptNlpSetUp(HsIpopt *ip, HsProblem *P, HsDisc *d, int N, const double *x0);
void           HsIpoptNlpReset(HsIpopt *ip);
Index          HsIpoptNlpNumJac(const HsIpopt *ip);
Index          HsIpoptNlpNumHess(const HsIpopt *ip);
Bool HsIpoptEvalF(Index nv, Number *z, Bool new_z, Number *f, UserDataPtr ctx);
Bool HsIpoptEvalGradF(Index nv, Number *z, Bool new_z, Number *g, UserDataPtr ctx);
Bool HsIpoptEvalG(Index nv, Number *z, Bool new_z, Index nc, Number *c, UserDataPtr ctx);
Bool HsIpoptEvalJacG(Index nv, Number *z, Bool new_z, Index nc, Index nele, Index *row, Index *col, Number *val,
                     UserDataPtr ctx);
Bool HsIpoptEvalH(Index nv, Number *z, Bool new_z, Number sigma, Index nc, Number *y, Bool new_y, Index nele,
                  Index *row, Index *col, Number *val, UserDataPtr ctx);

/* The NLP of a constrained system (ipoptcons.c): sizes, start, solution, callbacks. rows: the constrained
 * transcription's points (D = 4n + 2nc each, costate/hsconstrained.h). */
PetscErrorCode HsIpoptConsNlpSetUp(HsIpopt *ip, HsProblem *P, HsCons *cons, int N, double h, const double *x0);
Index          HsIpoptConsNumConstraints(const HsIpopt *ip);
void           HsIpoptConsStart(HsIpopt *ip, const PetscScalar *rows, double *z, double *zl, double *zu);
void           HsIpoptConsSolution(HsIpopt *ip, const double *z, const double *y, PetscScalar *rows, PetscReal *U);
Bool HsIpoptConsEvalF(Index nv, Number *z, Bool new_z, Number *f, UserDataPtr ctx);
Bool HsIpoptConsEvalGradF(Index nv, Number *z, Bool new_z, Number *g, UserDataPtr ctx);
Bool HsIpoptConsEvalG(Index nv, Number *z, Bool new_z, Index nc, Number *c, UserDataPtr ctx);
Bool HsIpoptConsEvalJacG(Index nv, Number *z, Bool new_z, Index nc, Index nele, Index *row, Index *col, Number *val,
                         UserDataPtr ctx);
Bool HsIpoptConsEvalH(Index nv, Number *z, Bool new_z, Number sigma, Index nc, Number *y, Bool new_y, Index nele,
                      Index *row, Index *col, Number *val, UserDataPtr ctx);

#endif
