/* hamshoot: mechanical optimal-control problems (serial C, no PETSc/MPI).
 *
 * A problem is a table of callbacks plus a context pointer, in the shape of
 * gsl_odeiv2_system: x = (q, p) in R^{2n}, E(x) the mechanical energy,
 * xdot = JJ grad E(x) + G u with G = [0; B], cost int 1/2 u^T R u + ell(x) dt.
 * See docs/theory.md section 1.
 *
 * Callback return codes (STYLE.md): 0 ok, > 0 recoverable (x outside the
 * domain, e.g. |q| = 0 for kepler), < 0 fatal.
 */
#ifndef HSPROBLEM_H
#define HSPROBLEM_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dense matrices are row-major double arrays; dim x dim unless stated. */

/** Status codes of both serial layers (problems/, costate/; STYLE.md): 0 success; > 0 recoverable
 *  (the caller may try elsewhere: another point, a smaller step, more segments); < 0 errors. */
enum {
  HS_SUCCESS   = 0,
  HS_EDOM      = 1,  /* a state outside the problem's domain (a callback said so, or a value is not finite) */
  HS_ENOCONV   = 2,  /* a local Newton did not converge (costate/march.c) */
  HS_ESINGULAR = 3,  /* a local Jacobian is singular (costate/march.c) */
  HS_EINVAL    = -1, /* an invalid argument or an incompatible scheme choice */
  HS_ENOMEM    = -2,
  HS_EFAILED   = -3, /* a problem callback failed fatally */
  HS_EUNKNOWN  = -4, /* an unknown name (problem, parameter, function) */
  HS_ERANGE    = -5, /* a value outside its admissible range */
  HS_ENOTINT   = -6, /* an integer parameter given a value that is not a whole number */
  HS_EPARSE    = -7  /* a problem file or an expression that cannot be read (the message says where) */
};

/** A short English description of a status code. */
const char *HsStatusString(int status);
/* A regular file of at most max_bytes (0: any) opened for reading, never blocking; NULL with a message otherwise. */
FILE *HsFileOpenRegular(const char *path, const char *what, long long max_bytes, char *msg, size_t msglen);
/* Numbers in inputs (options, problem files, -hs_init): decimal only (docs/reliability.md). HsDecimalLength: the length
   of the decimal number at s ([sign] digits [. digits] [e|E [sign] digits]; with sign 0 no leading sign), 0 if none;
   HsParseReal: the whole text (spaces and tabs around it allowed) as a finite decimal number into *v: 0, or
   HS_NUMBER_SYNTAX (not a decimal number: hexadecimal, "1e", trailing junk, empty), HS_NUMBER_NONFINITE (nan, inf, a
   value beyond the doubles); HsParseRealWhy: that code in words, for a message "VALUE: WHY". */
#define HS_NUMBER_SYNTAX 1
#define HS_NUMBER_NONFINITE 2
#define HS_NUMBER_RANGE 3
size_t      HsDecimalLength(const char *s, int sign);
int         HsParseReal(const char *s, double *v);
/* HsParseInt: the whole text (spaces and tabs around it allowed, as HsParseReal) as a whole decimal number ([sign]
   digits) in [lo, hi] into *v: 0, HS_NUMBER_SYNTAX ("1.5", "1e5", "0x10", "12abc", empty) or HS_NUMBER_RANGE (outside
   [lo, hi], however many digits: no wrap-around). Every integer of hamshoot's options is read by it. */
int HsParseInt(const char *s, long long lo, long long hi, long long *v);
const char *HsParseRealWhy(int code);

/** f(x): value of a smooth scalar function of x in R^dim. */
typedef int (*HsValueFn)(const double *x, double *f, void *ctx);
/** g = grad f(x), g in R^dim. */
typedef int (*HsGradFn)(const double *x, double *g, void *ctx);
/** Hm = Hessian of f at x (dim x dim, symmetric). */
typedef int (*HsHessFn)(const double *x, double *Hm, void *ctx);
/** T = D(Hess f)(x)[v], i.e. T_il = sum_j f_{,ijl}(x) v_j (dim x dim, symmetric).
 *  Needed by Newton on the conserving costate scheme (docs/theory.md section 2.2). */
typedef int (*HsHessDirFn)(const double *x, const double *v, double *T, void *ctx);

/** g = grad f(x), as grad computes it, and e[i] >= 0, a bound on the round-off of g[i] (INFINITY: none known),
 *  g in R^dim. */
typedef int (*HsGradBoundFn)(const double *x, double *g, double *e, void *ctx);

/** A smooth scalar function of the state with derivatives up to order 3.
 *  d3 may be NULL: it is then replaced by a central directional difference of
 *  hess with step HS_D3_FD_STEP (documented at HsFunctionD3 in costate/dgrad.c).
 *  grad_bound may be NULL (no bound known: every computed gradient component that is not exactly 0 is taken as
 *  real); the terminal-condition test uses it to tell a rate that is zero but for round-off from a small one
 *  (bvp/interface/singular.c). */
typedef struct {
  HsValueFn     f;
  HsGradFn      grad;
  HsHessFn      hess;
  HsHessDirFn   d3;
  HsGradBoundFn grad_bound;
} HsFunction;

/** Potential of a one-degree-of-freedom system with constant mass,
 *  E = p^2 / (2 mass) + V(q); needed by the Greenspan state scheme.
 *  V returns V(q) and its derivatives up to order 3 (any output may be NULL). */
typedef int (*HsPotential1Fn)(double q, double *V, double *dV, double *d2V, double *d3V, void *ctx);
/** Optional stable closed form of the Greenspan quotient
 *  Vbar(a,b) = (V(b) - V(a)) / (b - a), valid also for a == b, with its first
 *  derivatives (va, vb) and second derivatives (vaa, vab, vbb); outputs may be NULL. */
typedef int (*HsPotentialQuotientFn)(double a, double b, double *Vbar, double *va, double *vb, double *vaa, double *vab,
                                     double *vbb, void *ctx);

/** Stores v = (Vbar, va, vb, vaa, vab, vbb) into the non-NULL outputs of an
 *  HsPotentialQuotientFn. */
static inline void HsQuotientStore(const double v[6], double *Vbar, double *va, double *vb, double *vaa, double *vab,
                                   double *vbb)
{
  double *out[6] = {Vbar, va, vb, vaa, vab, vbb};
  for (int i = 0; i < 6; i++)
    if (out[i])
      *out[i] = v[i];
}

/** Running cost ell(x, t) and its derivatives in x at time t (docs/theory.md section 1;
 *  issue 4: time-dependent running costs). f gives the value, grad the gradient
 *  (dim), hess the Hessian (dim x dim, symmetric). time_dependent = 0 promises
 *  that t is ignored: the conserving costate scheme then evaluates the
 *  discrete gradient of ell once per node instead of twice (costate/costate.c). */
typedef int (*HsCostValueFn)(double t, const double *x, double *f, void *ctx);
typedef int (*HsCostGradFn)(double t, const double *x, double *g, void *ctx);
typedef int (*HsCostHessFn)(double t, const double *x, double *Hm, void *ctx);
typedef struct {
  HsCostValueFn f;
  HsCostGradFn  grad;
  HsCostHessFn  hess;
  int           time_dependent;
} HsRunningCost;

typedef struct {
  int                   available; /* 1 if E = p^2/(2 mass) + V(q) with n = 1 */
  double                mass;
  HsPotential1Fn        V;
  HsPotentialQuotientFn quotient; /* may be NULL: then the generic quotient with midpoint fallback */
} HsSeparable1;

#define HS_NAME_LEN 64

/** A named scalar parameter of a problem, overridable as -p_NAME VALUE. */
typedef struct {
  const char *name;
  const char *help;
  double     *value; /* points into the problem's context */
  double      min;   /* admissible range (inclusive) */
  double      max;
  int         integer; /* 1: only whole numbers are admissible (e.g. the number of cars) */
} HsParam;

/** A mechanical optimal-control problem (docs/theory.md section 4). */
typedef struct HsProblem_s {
  char          name[HS_NAME_LEN];
  unsigned long long text_hash;       /* a problem file's text, hashed (FNV-1a; HsProblemCreateFromText): another
                                         file of the same name is another problem to -hs_restart; 0 built in */
  int           n;                    /* degrees of freedom; state dimension 2n (any n >= 1) */
  int           m;                    /* controls */
  double        T;                    /* horizon */
  int           N;                    /* default number of intervals */
  HsFunction    E;                    /* mechanical energy and derivatives (required) */
  HsRunningCost ell;                  /* running state cost ell(x, t); f NULL means ell = 0 */
  HsFunction    phi;                  /* terminal cost phi(x_N) (f, grad, hess); f NULL means phi = 0 */
  HsSeparable1  sep;                  /* optional 1-DOF structure for the greenspan state scheme */
  double       *B;                    /* n x m, row-major */
  double       *R;                    /* m x m, symmetric positive definite (times R_scale) */
  double        R_scale;              /* the factor of R of a continuation in the control weight (1: the
                                         problem's own R; HsProblemSetControlWeightScale) */
  double *x0;                         /* 2n: initial state (always fixed) */
  double *xT;                         /* 2n: terminal state values for fixed components */
  int    *xT_fixed;                   /* 2n: 1 fixed, 0 free */
  double *u_min, *u_max;              /* m each: control bounds, or NULL (unbounded); the direct NLP (IPOPT)
                                         and the second-order indirect schemes (docs/controls.md) solve them */
  const char *default_state_scheme;   /* for -hs_scheme conserving */
  const char *default_costate_scheme; /* for -hs_scheme conserving */
  void       *ctx;                    /* passed to the callbacks */
  void (*destroy_ctx)(void *ctx);
  void    *user_ctx; /* the context a structured problem's user gave (HsProblemSetMechanical), or ctx */
  HsParam *params;   /* nparams parameters (HsProblemAddParam) */
  int      nparams, aparams;
  /** Forgets cached evaluations after a parameter changed (HsProblemSetMechanical sets it); may be NULL. */
  void (*invalidate)(struct HsProblem_s *prob);
  /** Recomputes derived data (e.g. the Greenspan mass m l^2) after parameters changed; may be NULL.
   *  Returns HS_SUCCESS, HS_ENOMEM or HS_ERANGE (the parameters make the problem invalid; then `why`
   *  says how); HsProblemSetParam then restores the old value. */
  int (*update)(struct HsProblem_s *prob);
  char               why[256];    /* why the last HsProblemSetParam failed ("" if it did not say) */
  int                last_set;    /* the parameter HsProblemSetParam is setting (for update), -1 otherwise */
  const char *const *coord_names; /* n names of the coordinates (a problem file's), or NULL: q1..qn in outputs */
  /** A configuration-dependent control matrix B(q) (docs/configuration-dependent-forces.md), or NULL (B above is
   *  constant; with Bq it is B(q0)). Outputs (any may be NULL): B (n x m), dB[(i m + j) n + l] = dB_ij/dq_l,
   *  d2B[((i m + j) n + l) n + r] = d2B_ij/dq_l dq_r. The discretization evaluates it at
   *  each interval's midpoint configuration (costate/gain.c). Returns 0, or 1 if a value is not finite. */
  int (*Bq)(const double *q, double *B, double *dB, double *d2B, void *ctx);
  /** Controls that enter nonlinearly and a general control cost (docs/controls.md; a problem file's force and
   *  control_cost), or NULL (B u and 1/2 u^T R u). At (q, u), w = n + m: out[0..n] the values of the force f(q, u)
   *  (n, replacing B u) and of the control cost c(u, q) (replacing 1/2 u^T R u); order >= 1: then their gradients in
   *  (q, u) ((n + 1) w, function by function); order 2: then their Hessians ((n + 1) w^2). B and R are then 0 and I,
   *  unused. Only -hs_scheme conserving4 solves such a problem. f and c may depend on the time t (ctrl_time_dependent;
   *  derivatives are in (q, u) only). Returns 0, or 1 if a value is not finite. */
  int (*ctrl)(double t, const double *q, const double *u, int order, double *out, void *ctx);
  int ctrl_time_dependent; /* 1 if the force or the control cost depends on t (ctrl) */
  /* Free final time (docs/free-final-time.md): T is an unknown of the boundary-value problem, T above
     its initial guess and, during and after a solve, its current value (HsProblemSetFinalTime). Only
     for autonomous problems (ell does not depend on t); the terminal cost may depend on T. */
  int    free_T;
  double T_guess;      /* the file's guess of a free T (T itself follows the solver) */
  double T_min, T_max; /* admissible range of a free T (default (0, inf)) */
  /** d phi/dT at the current T (HsProblemSetFinalTime) and x: the value (fT), its gradient in x
   *  (gT, dim; may be NULL) and d^2 phi/dT^2 (fTT; may be NULL). NULL: phi does not depend on T. */
  int (*phi_T)(const double *x, double *fT, double *gT, double *fTT, void *ctx);
  /** A free T and terminal values that depend on it: dxT/dT and d2xT/dT2 (2n each, 0 for free components)
   *  at the current T (HsProblemSetFinalTime, which also updates xT). NULL: xT does not depend on T. */
  int (*xT_T)(double *dxT, double *d2xT, void *ctx);
  /** Makes T the final time that phi, phi_T and xT see (NULL: they do not depend on it), and with data_T
   *  also E, ell, B, R and x0 (the latter three are then evaluated again). */
  void (*set_final_time)(struct HsProblem_s *prob, double T);
  /* A free T on which the dynamics, the running cost or the initial state depend (T in M, V, B, R, the
     running cost or x0 of a problem file; docs/free-final-time.md): their explicit derivatives in T at the
     current T, with x, q and p held. Only with free_T; data_T = 0 means none of them depends on T. */
  int        data_T;
  HsFunction E_T; /* dE/dT: f and grad (hess, d3 NULL); f NULL: E does not depend on T */
  /** dell/dT at x (the running cost is autonomous with a free T); NULL: ell does not depend on T. */
  int (*ell_T)(const double *x, double *f, void *ctx);
  /** dB/dT at q (n x m; for a B(q) at that q) and dR/dT (m x m); either may be NULL. NULL: B and R do not
   *  depend on T. */
  int (*BR_T)(const double *q, double *BT, double *RT, void *ctx);
  double *x0_T; /* 2n: dx0/dT at the current T (set_final_time), or NULL: x0 does not depend on T */
  /* Holonomic constraints Phi(q) = 0 in redundant (natural) coordinates (docs/constrained.md); nc = 0: none.
     Phi gives Phi (nc values), G = dPhi/dq (nc x n, row-major) and Hphi[(i n + l) n + r] = d2 Phi_i/dq_l dq_r
     at q (any output may be NULL); returns 0, or 1 if a value is not finite. A constrained problem has a
     constant mass matrix (const_mass), and its energy's gradient gives grad V(q) and M^{-1} p. */
  int nc;
  int (*Phi)(const double *q, double *Phi, double *G, double *Hphi, void *ctx);
  /* The third derivatives of Phi at q: Phi3[((i n + l) n + r) n + s] = d3 Phi_i/dq_l dq_r dq_s; returns 0, or 1 if a
     value is not finite. NULL: they vanish (every Phi_i quadratic in q). For conserving4's substep in the extended
     class (docs/theory.md section 8.1, "The extended class"): the exact Jacobian of its discrete gradient of G lambda_p. */
  int (*Phi3)(const double *q, double *Phi3, void *ctx);
  int const_mass; /* 1: M does not depend on q */
  /* NULL: the constrained problem lies in the class its conserving scheme covers in closed form (constant M,
     quadratic Phi, linear V, affine B); otherwise what lies outside it (the extended scheme then applies,
     docs/constrained.md) */
  const char *cons_extended;
  /* 1: outside the class through a B(q) that is not affine alone (constant M, quadratic Phi, linear V): the extended
     class's direct transcription (constrained_kkt, IPOPT) is then available (docs/direct.md) */
  int cons_ext_bq;
  /* Monitored invariants (docs/output-format.md; a problem file's 'invariant NAME: expr' lines, the momenta that
     problems/bodies.c generates): ninv (at most HS_MAX_INVARIANTS) named scalar functions of the state x = (q, p),
     evaluated at every node of a solution; their spread is reported. invariants writes the ninv values at x into
     val; returns 0, or 1 if a value is not finite. ninv = 0: none. */
  int                ninv;
  const char *const *inv_names;
  int (*invariants)(const double *x, double *val, void *ctx);
  /* A constrained problem's end condition at rest in the extended class (docs/constrained.md, "Rest ends and
     conserved quantities"): ncinv invariants linear in p that the scheme conserves exactly ('conserved:' of a file),
     whose directions grad_p I_l(q_N) join the end condition's free normal momenta, and which constraints move a free
     terminal coordinate. cinv_grad gives
     at q g (ncinv x n, grad_p I_l) and, if dg is not NULL, dg[(l n + r) n + i] = d(grad_p I_l)_r / dq_i; returns 0,
     or 1 if a value is not finite. cons_end_moves: nc flags (NULL: every constraint moves one). */
  int ncinv;
  int (*cinv_grad)(const double *q, double *g, double *dg, void *ctx);
  const char *const *cinv_names; /* their names, in order (NULL: unnamed) */
  const int *cons_end_moves;
  /* Frames (docs/problem-format.md, "Frames"; a file's 'frame NAME:' lines, the bodies' directors): nframes frames of
     nine coordinates, frames[9 f + 3 j + r] the coordinate of component r of director j of frame f; a frame whose
     third director is an earlier frame's director is a rotor about it. They make the geodesic frame guess the
     default guess (HsProblemFrameGuess). nframes = 0: none. */
  int                nframes;
  const int         *frames;
  const char *const *frame_names; /* their names, in order (NULL: unnamed) */
} HsProblem;

/** At most this many monitored invariants a problem (HsProblem.ninv; fixed arrays in the solver's results). */
#define HS_MAX_INVARIANTS 16

int         HsProblemCreateByName(const char *name, HsProblem **prob);
void        HsProblemDestroy(HsProblem **prob);
const char *HsProblemListNames(void);
int         HsProblemAllocate(const char *name, int n, int m, HsProblem **prob);
int         HsProblemResize(HsProblem *prob, int n, int m);
int   HsProblemAddParam(HsProblem *prob, const char *name, const char *help, double *value, double min, double max);
void  HsProblemParamSetInteger(HsProblem *prob);
int   HsProblemSetParam(HsProblem *prob, const char *name, double value);
void  HsProblemSetFinalTime(HsProblem *prob, double T);
int   HsProblemHasEll(const HsProblem *prob);
void *HsProblemGetUserContext(const HsProblem *prob);
void  HsProblemBlendTerminal(HsProblem *prob, const double *goal, double reach);
void  HsProblemSetControlWeightScale(HsProblem *prob, double scale);
/** The end data of a constrained problem (docs/constrained.md): Phi(q) = 0 and G M^{-1} p = 0 at x0 and at
 *  xT to tol (relative), independent constraint gradients at both ends, at the end only what is fixed.
 *  Returns HS_SUCCESS, HS_ERANGE with why saying what fails, or HS_EDOM/HS_ENOMEM. */
int HsProblemCheckConstraints(const HsProblem *prob, double tol, char *why, size_t len);
#define HS_CONSTRAINT_TOL 1e-9 /* the default tol of HsProblemCheckConstraints */
/** x (q then p) moved onto the constraints: q onto Phi = 0 (least-norm Gauss-Newton), p onto G M^{-1} p = 0. */
int HsProblemProjectConstraints(const HsProblem *prob, double *x);

/** Frames: checked (HsProblemCheckFrames: orthonormal and right-handed to tol at x0 and a fixed xT, shared
 *  coordinates only as a rotor's axis) and the geodesic frame guess's states on N intervals ((N + 1) x 2n). */
int HsProblemCheckFrames(const HsProblem *prob, double tol, int *bad, char *why, size_t len);
int HsProblemFrameGuess(const HsProblem *prob, int N, double *x);
#define HS_FRAME_TOL 1e-9 /* the default tol of HsProblemCheckFrames */
/** The frames' attitudes at a node for plots: rotation vectors of the frames without parent, rotors' angles relative
 *  to their parent (HsProblemFrameColumns values; prev, the previous node's, makes them continuous). At most
 *  HS_FRAME_MAX_PLOT frames (more: 0 columns, no attitude page). */
int HsProblemFrameColumns(const HsProblem *prob);
int HsProblemFrameParent(const HsProblem *prob, int f);
int HsProblemFrameAttitude(const HsProblem *prob, const double *q, const double *prev, double *out);
#define HS_FRAME_MAX_PLOT 64

/* The built-in problems (docs/theory.md section 4), also by name through HsProblemCreateByName. */
int HsProblemCreatePendulum(HsProblem **prob);
int HsProblemCreateKepler(HsProblem **prob);
int HsProblemCreateSaddle(HsProblem **prob);
int HsProblemCreateCrane(HsProblem **prob);
int HsProblemCreateManipulator3(HsProblem **prob);
int HsProblemCreateNcar(HsProblem **prob);

#ifdef __cplusplus
}
#endif
#endif
