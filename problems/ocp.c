/* hamshoot: problem files (.ocp), docs/problem-format.md.
 *
 * A file defines a mechanical system by its mass matrix M(q) and potential
 * V(q) as expressions (problems/expr.c); the derivatives that the energy's
 * structure formulas need (M_{,i}, M_{,ij}, M_{,ijk}, V_{,i}, V_{,ij}, V_{,ijk};
 * problems/mechanical.c) and the costs' gradients and Hessians are derived
 * symbolically once, when the file is read, into one shared expression graph,
 * and compiled into register programs (one per derivative order), so that an
 * evaluation of order k runs exactly the instructions it needs. A mass matrix
 * that does not depend on q gets no derivative programs at all.
 *
 * Variables of the graph, for n coordinates: q_i at i, p_i at n + i, t at 2n,
 * the velocities of kinetic_energy at 2n + 1 + i (these are fast: set on every
 * evaluation), the final time T at 3n + 1, then the parameters from 3n + 2 on
 * (T and the parameters are slow: their programs' parameter-only parts run
 * again when one is set with -p_NAME, or when a free T changes). n and the
 * number of parameters are counted in a first scan of the file, so that there
 * is no limit on either.
 *
 * Reading: OcpPrescan (sizes), OcpReadKeys (every line: parameters and 'let's
 * are parsed in order, the other keys kept as text), then the problem in steps
 * (OcpBuildMass, OcpBuildConstants, OcpCheckAtX0, OcpBuildPrograms,
 * OcpBuildCosts, OcpInstall); every error is "file:line:column: what".
 */
#include "hsbodies.h"
#include "hsexpr.h"
#include "hsmechanical.h"
#include "hsocp.h"
#include "hstext.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Programs of a problem: mass and potential, one per derivative order
 * k = 0..3 (the order-k derivatives only: an evaluation that adds orders at
 * the same q) and for the orders 0..k, k = 1..3 (P_*_UPTO + k - 1: a new q,
 * sharing sin, cos, ... between the orders), the running and terminal cost
 * (value, gradient, Hessian), the constant lists. */
enum {
  P_MASS      = 0,
  P_POT       = 4,
  P_ELL       = 8,
  P_PHI       = 11,
  P_CST       = 14,
  P_MASS_UPTO = 15,
  P_POT_UPTO  = 18,
  P_T         = 21, /* T's own value (or a free T's guess) */
  P_PHIT      = 22, /* the terminal cost's derivatives in T and t (free T), OcpPhiT */
  P_BQ        = 23, /* a B that depends on q: B, dB, d2B (OcpBq) */
  P_XTT       = 26, /* a free T and xT(T): dxT/dT, d2xT/dT2 (OcpXTT) */
  P_DTM       = 27, /* a free T in M or V: M_T, its q-derivatives, V_T, its gradient (OcpMechT) */
  P_DTELL     = 28, /* ... in the running cost: ell_T (OcpEllT) */
  P_DTBR      = 29, /* ... in B or R: B_T, R_T (OcpBRT) */
  P_DTX0      = 30, /* ... in x0: x0_T (OcpSetFinalTime) */
  P_CONS      = 31, /* holonomic constraints: Phi, G = dPhi/dq, the Hessians (OcpConstraints) */
  P_CTRL      = 32, /* force(q, u) and control_cost(u, q): orders 0, 0..1, 0..2 (OcpCtrl) */
  P_INV       = 35, /* the monitored invariants' values ('invariant NAME: expr', OcpInvariants) */
  P_CINV      = 36, /* 'conserved:': grad_p of those invariants and its q-derivatives (OcpConservedGrad) */
  P_CONS3     = 37, /* the constraints' third derivatives, when one is not quadratic (OcpConstraints3) */
  P_COUNT     = 38
};

typedef struct {
  int            n, npar, maxpar, nvars, tvar, vel, Tvar, par; /* tvar = 2n, vel = 2n + 1, Tvar = 3n + 1 + mu, par = Tvar + 1 */
  int            uvar, mu; /* the controls of force/control_cost at uvar = 3n + 1 (mu of them; 0: neither key) */
  char           ss[32], cs[32];
  char         **names; /* nvars: the variables' names (NULL: none yet) */
  double        *vars;  /* nvars: the variables' values (parameters: their current values) */
  HsExpr        *ex;
  HsExprProgram *prog[P_COUNT];
  int            nB, nR;
  double        *cst_val; /* B, R, x0, xT, T_min, T_max, then u_min and u_max (m each) if the file bounds u */
  int            T_free;  /* 'T: free GUESS' */
  int            T_moved; /* a free T was set by the solver (HsProblemSetFinalTime): OcpUpdate keeps it */
  int           *Bnode;   /* n x m: B's entries; Bq: some depend on q (P_BQ) */
  int           *xTnode;  /* 2n: xT's entries (a constant 0 for free components) */
  int           *cstnode; /* the nodes of the constant lists (B, R, x0, xT, ...; OcpBuildConstants) */
  int            ellnode; /* the running cost's node, or -1 */
  int            data_T;  /* a free T in M, V, B, R, the running cost or x0 (OcpBuildDataT) */
  int            mech_T;  /* ... in M or V */
  double        *dtbuf;   /* data_T: room for P_DTM's values, then x0_T (2n) */
  int            Bq;
  int           *pnode;   /* maxpar: each parameter's defining expression */
  char          *pderived, *ppinned; /* maxpar: defined from other parameters; set with -p_NAME since */
  HsExprProgram **pprog;  /* maxpar: the programs of the derived parameters (NULL for the others) */
  int            bounded; /* 1: the file gave u_min or u_max (entries '*' are unbounded) */
  int            nc;      /* 'constraints': their number (0: none) */
  char         **let_name; /* named subexpressions ('let NAME: expr') */
  int           *let_node, nlet;
  double        *pmin, *pmax; /* maxpar: each parameter's admissible range (closed; see OcpRange) */
  char         **phelp;       /* maxpar: "file parameter in [a, b]" (NULL: no range given) */
  char         **texts; /* owned copies of names */
  int            ntexts;
  char         **inv_name, **inv_text; /* 'invariant NAME: expr' lines (in texts), their nodes, lines, columns */
  int           *inv_node, *inv_line, *inv_col, ninv;
  int           *cons_moves, ncinv; /* nc flags: the constraint moves a free terminal coordinate; 'conserved:' count */
  char          **frame_name, **frame_text; /* 'frame NAME: nine coordinates' lines (in texts), lines, columns */
  int            *frame_line, *frame_col, nframe, *frame_idx; /* frame_idx: 9 per frame (HsProblem.frames) */
  const char   **cinv_name;         /* 'conserved:' names, in order (the invariants' own strings) */
} Ocp;

/* q into variables 0..n-1 and (with_p) p into n..2n-1 */
static void OcpSetState(Ocp *o, const double *x, int with_p)
{
  memcpy(o->vars, x, (size_t)(with_p ? 2 : 1) * (size_t)o->n * sizeof(double));
}

/* Fills the non-NULL outputs dst[k] (k = 0..3) of the function whose per-order
 * programs start at base and cumulative ones at upto: orders 0..k together
 * when order 0 is asked for, else each order on its own. */
static int EvalOrders(Ocp *o, int base, int upto, const int *sz, double *const *dst)
{
  int st = 0, hi = dst[3] ? 3 : dst[2] ? 2 : dst[1] ? 1 : 0;
  if (dst[0] && hi > 0)
    st = HsExprProgramEvalParts(o->prog[upto + hi - 1], o->vars, hi + 1, sz, dst);
  else
    for (int k = 0; k < 4; k++)
      if (dst[k])
        st |= HsExprProgramEval(o->prog[base + k], o->vars, dst[k]);
  return st ? 1 : 0; /* not finite: outside the domain */
}

static int OcpMass(const double *q, double *M, double *dM, double *d2M, double *d3M, void *ctx)
{
  Ocp    *o = ctx;
  int     n = o->n, sz[4] = {n * n, n * n * n, n * n * n * n, n * n * n * n * n};
  double *dst[4] = {M, dM, d2M, d3M};
  OcpSetState(o, q, 0);
  return EvalOrders(o, P_MASS, P_MASS_UPTO, sz, dst);
}

static int OcpPotential(const double *q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  Ocp    *o = ctx;
  int     n = o->n, sz[4] = {1, n, n * n, n * n * n};
  double *dst[4] = {V, dV, d2V, d3V};
  OcpSetState(o, q, 0);
  return EvalOrders(o, P_POT, P_POT_UPTO, sz, dst);
}

/* Bounds on the round-off of V's gradient and (edM not NULL: a mass that depends on q) of M's first derivatives at q,
 * by the programs of those orders alone (HsExprProgramEvalBound; the same bits as OcpPotential's and OcpMass's
 * values): HsMechanical.grad_bound. 1 if a value is not finite, -1 without memory. */
static int OcpGradBound(const double *q, double *edV, double *edM, void *ctx)
{
  Ocp    *o   = ctx;
  int     n   = o->n, st;
  double *val = malloc(sizeof(double) * ((size_t)n * n * n + n));

  if (!val)
    return -1;
  OcpSetState(o, q, 0);
  st = HsExprProgramEvalBound(o->prog[P_POT + 1], o->vars, val, edV);
  if (!st && edM)
    st = HsExprProgramEvalBound(o->prog[P_MASS + 1], o->vars, val, edM);
  free(val);
  return st;
}

/* 1-DOF potential for the Greenspan scheme (problems whose mass is constant). */
static int OcpPotential1(double q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  return OcpPotential(&q, V, dV, d2V, d3V, HsMechanicalUserContext(ctx));
}

/* Value (k = 0), gradient (1) or Hessian (2) of the cost whose programs start at base, at (t, x). */
static int CostEval(void *ctx, int base, int k, double t, const double *x, double *out)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  OcpSetState(o, x, 1);
  o->vars[o->tvar] = t;
  return HsExprProgramEval(o->prog[base + k], o->vars, out) ? 1 : 0;
}

/* The monitored invariants at the state x (HsProblem.invariants). */
static int OcpInvariants(const double *x, double *val, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  OcpSetState(o, x, 1);
  return HsExprProgramEval(o->prog[P_INV], o->vars, val) ? 1 : 0;
}

static int OcpEll(double t, const double *x, double *f, void *ctx) { return CostEval(ctx, P_ELL, 0, t, x, f); }
static int OcpEllGrad(double t, const double *x, double *g, void *ctx) { return CostEval(ctx, P_ELL, 1, t, x, g); }
static int OcpEllHess(double t, const double *x, double *H, void *ctx) { return CostEval(ctx, P_ELL, 2, t, x, H); }
/* The terminal cost: t is the final time T there. */
static double OcpFinalTime(void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  return o->vars[o->Tvar];
}
static int OcpPhi(const double *x, double *f, void *ctx) { return CostEval(ctx, P_PHI, 0, OcpFinalTime(ctx), x, f); }
static int OcpPhiGrad(const double *x, double *g, void *ctx)
{
  return CostEval(ctx, P_PHI, 1, OcpFinalTime(ctx), x, g);
}
static int OcpPhiHess(const double *x, double *H, void *ctx)
{
  return CostEval(ctx, P_PHI, 2, OcpFinalTime(ctx), x, H);
}

/* d phi/dT = phi_T + phi_t (T appears as itself and as t), its gradient in x and
 * d^2 phi/dT^2 = phi_TT + 2 phi_Tt + phi_tt, from the program P_PHIT over
 * [phi_T, phi_t, grad phi_T (2n), grad phi_t (2n), phi_TT, phi_Tt, phi_tt]. */
static int OcpPhiT(const double *x, double *fT, double *gT, double *fTT, void *ctx)
{
  Ocp    *o = HsMechanicalUserContext(ctx);
  int     d = 2 * o->n;
  double *v = o->vars + o->par + o->maxpar; /* scratch after the variables (OcpNew) */

  OcpSetState(o, x, 1);
  o->vars[o->tvar] = o->vars[o->Tvar];
  if (HsExprProgramEval(o->prog[P_PHIT], o->vars, v))
    return 1;
  *fT = v[0] + v[1];
  for (int i = 0; gT && i < d; i++)
    gT[i] = v[2 + i] + v[2 + d + i];
  if (fTT)
    *fTT = v[2 + 2 * d] + 2 * v[3 + 2 * d] + v[4 + 2 * d];
  return 0;
}

/* B(q) and its first and second derivatives (hsproblem.h's layout); 1 if a value is not finite. */
static int OcpBq(const double *q, double *B, double *dB, double *d2B, void *ctx)
{
  Ocp    *o      = HsMechanicalUserContext(ctx);
  double *out[3] = {B, dB, d2B};
  int     st     = 0;

  OcpSetState(o, q, 0);
  for (int k = 0; k < 3; k++)
    if (out[k])
      st |= HsExprProgramEval(o->prog[P_BQ + k], o->vars, out[k]);
  return st ? 1 : 0;
}

/* grad_p of the 'conserved:' invariants at q and its q-derivatives (HsProblem.cinv_grad); 1 if not finite. */
static int OcpConservedGrad(const double *q, double *g, double *dg, void *ctx)
{
  Ocp    *o      = HsMechanicalUserContext(ctx);
  int     sz[2]  = {o->ncinv * o->n, o->ncinv * o->n * o->n};
  double *dst[2] = {g, dg};

  OcpSetState(o, q, 0);
  return HsExprProgramEvalParts(o->prog[P_CINV], o->vars, dg ? 2 : 1, sz, dst) ? 1 : 0;
}

/* Holonomic constraints (hsproblem.h's layout): Phi, G, the Hessians; 1 if a value is not finite. */
static int OcpConstraints(const double *q, double *Phi, double *G, double *Hphi, void *ctx)
{
  Ocp    *o      = HsMechanicalUserContext(ctx);
  int     sz[3]  = {o->nc, o->nc * o->n, o->nc * o->n * o->n};
  double *dst[3] = {Phi, G, Hphi};

  OcpSetState(o, q, 0);
  return HsExprProgramEvalParts(o->prog[P_CONS], o->vars, 3, sz, dst) ? 1 : 0;
}

/* The constraints' third derivatives (hsproblem.h's Phi3 layout); 1 if a value is not finite. */
static int OcpConstraints3(const double *q, double *Phi3, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);

  OcpSetState(o, q, 0);
  return HsExprProgramEval(o->prog[P_CONS3], o->vars, Phi3) ? 1 : 0;
}

/* force(q, u) (n) and control_cost(u, q): values, (order >= 1) gradients in (q, u), (order >= 2) Hessians
 * (hsproblem.h's ctrl layout); 1 if a value is not finite. */
static int OcpCtrl(double t, const double *q, const double *u, int order, double *out, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);

  OcpSetState(o, q, 0);
  o->vars[o->tvar] = t;
  memcpy(o->vars + o->uvar, u, sizeof(double) * (size_t)o->mu);
  return HsExprProgramEval(o->prog[P_CTRL + order], o->vars, out) ? 1 : 0;
}

/* The constants B, R, x0, xT, ... into cst_val at the current parameters and T (their program's
 * parameter-only part set by the caller); a B that depends on q is taken at the initial configuration
 * (x0 is constant), and the caller's q is kept. */
static void OcpEvalConstants(Ocp *o)
{
  double q[HS_OCP_MAX_COORDINATES];

  HsExprProgramEval(o->prog[P_CST], o->vars, o->cst_val);
  if (!o->Bq)
    return;
  memcpy(q, o->vars, sizeof(double) * (size_t)o->n); /* a callback may be mid-evaluation */
  OcpSetState(o, o->cst_val + o->nB + o->nR, 0);
  HsExprProgramEval(o->prog[P_CST], o->vars, o->cst_val);
  memcpy(o->vars, q, sizeof(double) * (size_t)o->n);
}

/* dxT/dT and d2xT/dT2 of terminal values that depend on a free T (2n each). */
static int OcpXTT(double *dxT, double *d2xT, void *ctx)
{
  Ocp    *o = HsMechanicalUserContext(ctx);
  int     d = 2 * o->n;
  double *v = o->vars + o->par + o->maxpar; /* scratch after the variables (OcpNew) */

  if (HsExprProgramEval(o->prog[P_XTT], o->vars, v))
    return 1;
  memcpy(dxT, v, sizeof(double) * (size_t)d);
  if (d2xT)
    memcpy(d2xT, v + d, sizeof(double) * (size_t)d);
  return 0;
}

/* A free T in M or V (HsMechanicalTFn): M_T (n x n), dMT (n blocks), V_T, dVT (n) from P_DTM. */
static int OcpMechT(const double *q, double *MT, double *dMT, double *VT, double *dVT, void *ctx)
{
  Ocp    *o = ctx;
  int     n = o->n, nn = n * n;
  double *v = o->dtbuf;

  OcpSetState(o, q, 0);
  if (HsExprProgramEval(o->prog[P_DTM], o->vars, v))
    return 1;
  if (MT)
    memcpy(MT, v, sizeof(double) * (size_t)nn);
  if (dMT)
    memcpy(dMT, v + nn, sizeof(double) * (size_t)(nn * n));
  if (VT)
    *VT = v[nn + nn * n];
  if (dVT)
    memcpy(dVT, v + nn + nn * n + 1, sizeof(double) * (size_t)n);
  return 0;
}

/* A free T in the running cost: d ell/dT at x. */
static int OcpEllT(const double *x, double *f, void *ctx)
{
  Ocp *o = HsMechanicalUserContext(ctx);
  OcpSetState(o, x, 1);
  return HsExprProgramEval(o->prog[P_DTELL], o->vars, f) ? 1 : 0;
}

/* A free T in B or R: B_T at q (n x m) and R_T (m x m) from P_DTBR. */
static int OcpBRT(const double *q, double *BT, double *RT, void *ctx)
{
  Ocp    *o = HsMechanicalUserContext(ctx);
  double *v = o->dtbuf;

  OcpSetState(o, q, 0);
  if (HsExprProgramEval(o->prog[P_DTBR], o->vars, v))
    return 1;
  if (BT)
    memcpy(BT, v, sizeof(double) * (size_t)o->nB);
  if (RT)
    memcpy(RT, v + o->nB, sizeof(double) * (size_t)o->nR);
  return 0;
}

/* B, R, x0 and (with_xT) the fixed components of xT from the constants (OcpEvalConstants), a 1-DOF
 * problem's constant mass and (T in x0) dx0/dT; returns the index after xT in cst_val. */
static int OcpApplyConstants(HsProblem *p, Ocp *o, int with_xT)
{
  int n = o->n, k = 0;
  for (int i = 0; i < o->nB; i++)
    p->B[i] = o->cst_val[k++];
  for (int i = 0; i < o->nR; i++)
    p->R[i] = o->cst_val[k++] * p->R_scale; /* a continuation in the control weight */
  for (int i = 0; i < 2 * n; i++)
    p->x0[i] = o->cst_val[k++];
  for (int i = 0; i < 2 * n; i++, k++)
    if (with_xT)
      p->xT[i] = p->xT_fixed[i] ? o->cst_val[k] : 0;
  if (p->sep.available && p->E.f) {
    double M0;
    OcpMass(p->x0, &M0, NULL, NULL, NULL, o);
    p->sep.mass = M0;
  }
  if (p->x0_T && HsExprProgramEval(o->prog[P_DTX0], o->vars, p->x0_T))
    for (int i = 0; i < 2 * n; i++)
      p->x0_T[i] = NAN; /* not finite: OcpUpdateBody says so */
  return k;
}

/* A free T set by the solver: the terminal cost's programs see it, and terminal values that depend
 * on it are evaluated again; with T in the data (o->data_T) every program and constant follows it. */
static void OcpSetFinalTime(HsProblem *p, double T)
{
  Ocp *o     = HsProblemGetUserContext(p);
  o->T_moved = 1, o->vars[o->Tvar] = T;
  if (o->data_T) {
    for (int i = 0; i < P_COUNT; i++)
      if (o->prog[i])
        HsExprProgramSetSlow(o->prog[i], o->vars);
    OcpEvalConstants(o);
    if (p->invalidate)
      p->invalidate(p);
    OcpApplyConstants(p, o, o->prog[P_XTT] != NULL); /* a fixed xT keeps a continuation's blend */
    return;
  }
  for (int i = P_PHI; i < P_PHI + 3; i++)
    if (o->prog[i])
      HsExprProgramSetSlow(o->prog[i], o->vars);
  if (o->prog[P_PHIT])
    HsExprProgramSetSlow(o->prog[P_PHIT], o->vars);
  if (o->prog[P_XTT]) { /* xT(T) again */
    HsExprProgramSetSlow(o->prog[P_XTT], o->vars);
    HsExprProgramSetSlow(o->prog[P_CST], o->vars);
    OcpEvalConstants(o);
    for (int i = 0; i < 2 * o->n; i++)
      if (p->xT_fixed[i])
        p->xT[i] = o->cst_val[o->nB + o->nR + 2 * o->n + i];
  }
}

/* The derived parameters (defined from others) that were not set with -p_NAME since: their values
 * again, in the order of the file (a derived one may use an earlier derived one). */
static int OcpDerived(HsProblem *p, Ocp *o)
{
  if (p->last_set >= 0 && p->last_set < o->npar && o->pderived[p->last_set])
    o->ppinned[p->last_set] = 1; /* set explicitly: it keeps that value */
  for (int i = 0; i < o->npar; i++) {
    double v;
    if (!o->pderived[i] || o->ppinned[i] || !o->pprog[i])
      continue;
    HsExprProgramSetSlow(o->pprog[i], o->vars);
    HsExprProgramEval(o->pprog[i], o->vars, &v);
    if (!(v >= o->pmin[i] && v <= o->pmax[i])) {
      snprintf(p->why, sizeof p->why, "the derived parameter %s = %g is not %s", o->names[o->par + i], v,
               o->phelp[i] ? o->phelp[i] + 15 : "finite");
      return HS_ERANGE;
    }
    o->vars[o->par + i] = v;
  }
  return HS_SUCCESS;
}

/* After a parameter change: the derived parameters, T (a free T keeps the solver's value once it
 * has one), the programs' parameter-only parts, then B, R, x0, xT, T_min, T_max and (1 DOF) the
 * constant mass again. */
static int OcpUpdateBody(HsProblem *p)
{
  Ocp   *o = HsProblemGetUserContext(p);
  int    n = o->n, k = 0, st;
  double T;
  if ((st = OcpDerived(p, o)))
    return st;
  HsExprProgramSetSlow(o->prog[P_T], o->vars);
  HsExprProgramEval(o->prog[P_T], o->vars, &T);
  if (!(o->T_free && o->T_moved))
    o->vars[o->Tvar] = p->T = T;
  p->T_guess = T;
  for (int i = 0; i < P_COUNT; i++)
    if (o->prog[i])
      HsExprProgramSetSlow(o->prog[i], o->vars);
  OcpEvalConstants(o);
  k        = OcpApplyConstants(p, o, 1);
  p->T_min = o->cst_val[k++], p->T_max = o->cst_val[k++];
  for (int j = 0; o->bounded && j < p->m; j++) {
    p->u_min[j] = o->cst_val[k + j], p->u_max[j] = o->cst_val[k + p->m + j];
    if (!(p->u_min[j] <= p->u_max[j])) {
      snprintf(p->why, sizeof p->why, "u_min %g exceeds u_max %g (control %d)", p->u_min[j], p->u_max[j], j + 1);
      return HS_ERANGE; /* a parameter set u_min above u_max: HsProblemSetParam restores it */
    }
    if (p->R[j * p->m + j] == 0 && !isfinite(p->u_max[j] - p->u_min[j]) && isfinite(p->u_min[j]) &&
        isfinite(p->u_max[j])) { /* a bang-bang control: its law's half-width would overflow (|F| had been NaN) */
      snprintf(p->why, sizeof p->why,
               "u_min %g and u_max %g of control %d (R_jj = 0, bang-bang) lie further apart "
               "than the largest number",
               p->u_min[j], p->u_max[j], j + 1);
      return HS_ERANGE;
    }
  }
  for (int i = 0; i < k - 1; i++) /* T_max may be inf */
    if (!isfinite(o->cst_val[i])) {
      snprintf(p->why, sizeof p->why, "%s is not finite",
               i < o->nB                   ? "B"
               : i < o->nB + o->nR         ? "R"
               : i < o->nB + o->nR + 2 * n ? "x0"
               : i < k - 2                 ? "xT"
                                           : "T_min");
      return HS_ERANGE;
    }
  if (!(isfinite(T) && T > 0)) {
    snprintf(p->why, sizeof p->why, "the horizon T = %g is not positive", T);
    return HS_ERANGE;
  }
  if (o->T_free && !(p->T_min >= 0 && p->T_min < p->T_max)) {
    snprintf(p->why, sizeof p->why, "the free final time's range [T_min, T_max] = [%g, %g] is empty or negative",
             p->T_min, p->T_max);
    return HS_ERANGE;
  }
  if (o->T_free && !(T >= p->T_min && T <= p->T_max)) {
    snprintf(p->why, sizeof p->why, "the free final time's guess %g is not in [T_min, T_max] = [%g, %g]", T, p->T_min,
             p->T_max);
    return HS_ERANGE;
  }
  if (p->E.f) { /* once installed (OcpInstall): M(q) positive definite at x0 */
    double E;
    if (p->E.f(p->x0, &E, p->ctx)) {
      snprintf(p->why, sizeof p->why, "the mass matrix M(q) is not positive definite at the initial state x0");
      return HS_ERANGE;
    }
  }
  for (int i = 0; p->x0_T && i < 2 * n; i++)
    if (!isfinite(p->x0_T[i])) {
      snprintf(p->why, sizeof p->why, "dx0/dT is not finite");
      return HS_ERANGE;
    }
  return HS_SUCCESS;
}

/* OcpUpdateBody; a derived parameter that this update pinned (set with -p_NAME) is unpinned again if
 * the update fails (HsProblemSetParam then restores the old value). */
static int OcpUpdate(HsProblem *p)
{
  Ocp *o = HsProblemGetUserContext(p);
  int  i = p->last_set, was = i >= 0 && i < o->npar ? o->ppinned[i] : 1;
  int  ret = OcpUpdateBody(p);
  if (ret && !was)
    o->ppinned[i] = 0;
  return ret;
}

static void OcpDestroy(void *ctx)
{
  Ocp *o = ctx;
  if (!o)
    return;
  for (int i = 0; i < P_COUNT; i++)
    HsExprProgramDestroy(&o->prog[i]);
  HsExprDestroy(&o->ex);
  for (int i = 0; i < o->ntexts; i++)
    free(o->texts[i]);
  for (int i = 0; o->phelp && i < o->npar; i++)
    free(o->phelp[i]);
  for (int i = 0; o->pprog && i < o->maxpar; i++)
    HsExprProgramDestroy(&o->pprog[i]);
  free(o->phelp), free(o->pmin), free(o->pmax), free(o->pnode), free(o->pderived), free(o->ppinned), free(o->pprog);
  free(o->texts), free(o->names), free(o->vars), free(o->cst_val), free(o->let_name), free(o->let_node), free(o->Bnode),
      free(o->xTnode);
  free(o->cstnode), free(o->dtbuf), free(o->inv_name), free(o->inv_text), free(o->inv_node), free(o->cons_moves);
  free(o->frame_name), free(o->frame_text), free(o->frame_line), free(o->frame_col), free(o->frame_idx);
  free(o->cinv_name);
  free(o->inv_line), free(o->inv_col);
  free(o);
}

/* ---------------------------------------------------------------- parser ---- */

typedef struct {
  const char *path;
  int         line;
  char       *msg;
  int         msglen;
} Src;

static int Fail(Src *s, int col, const char *fmt, ...)
{
  va_list ap;
  int     ret;

  va_start(ap, fmt);
  ret = HsTextFailV(s->msg, s->msglen, s->path, s->line, col, fmt, ap);
  va_end(ap);
  return ret;
}

/* Which variables an expression may use. */
enum {
  ALLOW_Q    = 1,
  ALLOW_P    = 2,
  ALLOW_T    = 4,  /* the time t */
  ALLOW_V    = 8,  /* the velocities of kinetic_energy */
  ALLOW_BIGT = 16, /* the final time T (fixed or free) */
  ALLOW_U    = 32  /* the controls (force, control_cost) */
};

typedef struct {
  Ocp *o;
  int  allow;
  char why[160];
} Lookup;

/* The first variable of a kind (ALLOW_Q, ALLOW_P, ALLOW_T, ALLOW_V) that node depends on, or -1. */
static int UsesKind(const Ocp *o, int node, int kind)
{
  for (int i = 0; i < (kind == ALLOW_U ? o->mu : o->n) || ((kind == ALLOW_T || kind == ALLOW_BIGT) && i == 0); i++) {
    int v = kind == ALLOW_U   ? o->uvar + i
            : kind == ALLOW_Q ? i
            : kind == ALLOW_P ? o->n + i
            : kind == ALLOW_V ? o->vel + i
            : kind == ALLOW_T ? o->tvar
                              : o->Tvar;
    if (HsExprDependsOn(o->ex, node, v))
      return v;
  }
  return -1;
}

static int LookupName(const char *name, int len, void *ctx, int *node)
{
  Lookup *L = ctx;
  Ocp    *o = L->o;
  for (int j = 0; j < o->nvars; j++)
    if (o->names[j] && (int)strlen(o->names[j]) == len && !strncmp(o->names[j], name, (size_t)len)) {
      int kind = j < o->n                      ? ALLOW_Q
                 : j < 2 * o->n                ? ALLOW_P
                 : j == o->tvar                ? ALLOW_T
                 : j >= o->uvar && j < o->Tvar ? ALLOW_U
                 : j < o->Tvar                 ? ALLOW_V
                 : j == o->Tvar                ? ALLOW_BIGT
                                               : 0;
      if (kind && !(L->allow & kind)) {
        if (kind == ALLOW_U)
          snprintf(L->why, sizeof L->why, "the control '%.*s' is allowed only in force and control_cost", len, name);
        else if (kind == ALLOW_V)
          snprintf(L->why, sizeof L->why, "the velocity '%.*s' is allowed only in kinetic_energy", len, name);
        else if (kind == ALLOW_P)
          snprintf(L->why, sizeof L->why, "momenta are not allowed here ('%.*s'; M and V depend on q only)", len, name);
        else if (kind == ALLOW_T)
          snprintf(L->why, sizeof L->why,
                   "the time t is allowed only in running_cost, terminal_cost, force and control_cost");
        else if (kind == ALLOW_BIGT)
          snprintf(L->why, sizeof L->why,
                   "the final time T is not allowed here (not in T itself, T_min, T_max or a parameter's value; "
                   "a 'let' may use it)");
        else
          snprintf(L->why, sizeof L->why, "must be constant, but depends on the coordinate '%.*s'", len, name);
        return -2;
      }
      return (*node = HsExprVariable(o->ex, j)) < 0 ? -3 : 0;
    }
  for (int j = 0; j < o->nlet; j++)
    if ((int)strlen(o->let_name[j]) == len && !strncmp(o->let_name[j], name, (size_t)len)) {
      static const int   kinds[5] = {ALLOW_Q, ALLOW_P, ALLOW_T, ALLOW_V, ALLOW_BIGT};
      static const char *what[5]  = {"the coordinate", "the momentum", "the time", "the velocity", "the final time"};
      for (int k = 0; k < 5; k++) {
        int v = UsesKind(o, o->let_node[j], kinds[k]);
        if (v >= 0 && !(L->allow & kinds[k])) {
          snprintf(L->why, sizeof L->why, "'%.*s' uses %s %s, which is not allowed here", len, name, what[k],
                   o->names[v]);
          return -2;
        }
      }
      *node = o->let_node[j];
      return 0;
    }
  return -1;
}

/* Parses text (at column col of the current line) into *node; checks that every
 * symbol is known and allowed. */
static int MakeExpr(Src *s, Ocp *o, const char *text, int col, const char *what, int allow, int *node)
{
  Lookup      L = {o, allow, ""};
  char        m[256];
  int         pos = 0, st, tl;
  const char *dots;

  if (!text[0])
    return Fail(s, col, "%s: expected an expression", what);
  st   = HsExprParse(o->ex, text, LookupName, &L, node, &pos, m, sizeof m);
  tl   = strlen(text) > 80 ? 72 : (int)strlen(text); /* a long text is quoted by its start */
  dots = tl < (int)strlen(text) ? " ..." : "";
  switch (st) {
  case HS_SUCCESS:
    return 0;
  case HS_EPARSE:
    return Fail(s, col + pos, "%s: cannot parse '%.*s%s': %s", what, tl, text, dots, m);
  case HS_EUNKNOWN:
    return Fail(s, col + pos, "%s: %s in '%.*s%s'", what, m, tl, text, dots);
  case HS_EINVAL:
    return Fail(s, col + pos, "%s: %s, in '%.*s%s'%s", what, L.why, tl, text, dots,
                !strncmp(what, "B (", 3) && !strncmp(L.why, "must be constant", 16)
                    ? " (a configuration-dependent B(q) is not supported yet: docs/configuration-dependent-forces.md)"
                    : "");
  default:
    return Fail(s, col, "%s: out of memory", what);
  }
}

/* Splits a comma-separated list in place into *items (the trimmed entries) and *cols (their
 * columns), allocated here for all of them; returns the count, or -1 without memory. */
static int SplitList(char *t, int base_col, char ***items, int **cols)
{
  int k = 0, n = 1;
  for (const char *c = t; *c; c++)
    n += *c == ',';
  *items = malloc(sizeof(char *) * (size_t)n);
  *cols  = malloc(sizeof(int) * (size_t)n);
  if (!*items || !*cols) {
    free(*items), free(*cols);
    *items = NULL, *cols = NULL;
    return -1;
  }
  for (char *p = t;;) {
    char *c = strchr(p, ',');
    if (c)
      *c = 0;
    (*items)[k] = HsTextTrim(p);
    (*cols)[k]  = base_col + (int)((*items)[k] - t);
    k++;
    if (!c)
      break;
    p = c + 1;
  }
  return k;
}

/* A list of names split by SplitList (k items at columns c; the key's value at col): an empty list or an empty entry
 * is an error saying so and what the list needs (need), before any other check: 'frame main:' had been refused as
 * "1 names, not 9", 'conserved: L_x,, L_y' as "'' is not an invariant". what: the key as the message names it. */
static int EmptyEntry(Src *s, int col, const char *what, const char *need, int k, char **items, const int *c)
{
  if (k == 1 && !items[0][0])
    return Fail(s, col, "%s: nothing named (it needs %s)", what, need);
  for (int l = 0; l < k; l++)
    if (!items[l][0])
      return Fail(s, c[l], "%s: entry %d of %d is empty (a comma too many? it needs %s)", what, l + 1, k, need);
  return 0;
}

/* Value of nodes that depend on the parameters only. */
static int EvalSlow(Ocp *o, int cnt, const int *nodes, double *v)
{
  HsExprProgram *prog;
  if (HsExprProgramCreate(o->ex, cnt, nodes, &prog))
    return -1;
  HsExprProgramSetSlow(prog, o->vars);
  HsExprProgramEval(prog, o->vars, v);
  HsExprProgramDestroy(&prog);
  return 0;
}

/* A constant expression (parameters only): its node and value. */
static int Number(Src *s, Ocp *o, const char *text, int col, const char *what, int allow, double *v, int *node)
{
  int nd, r = MakeExpr(s, o, text, col, what, allow, &nd);
  if (r)
    return r;
  if (EvalSlow(o, 1, &nd, v))
    return Fail(s, col, "%s: out of memory", what);
  if (!isfinite(*v))
    return Fail(s, col, "%s: '%s' is not a finite number", what, text);
  if (node)
    *node = nd;
  return 0;
}

/* A program over cnt nodes; its parameter-only part runs in OcpUpdate. */
static int Program(Ocp *o, int cnt, const int *nodes, HsExprProgram **prog)
{
  return HsExprProgramCreate(o->ex, cnt, nodes, prog);
}

/* Derivatives up to order 3 of the entries f[0..cnt-1] in the n coordinates, laid
 * out as [f, df (n blocks of cnt), d2f (n^2 blocks), d3f (n^3 blocks)] in out; each
 * mixed derivative is formed once (sorted indices) and shared by its permutations. */
static int Derive3(Ocp *o, int n, int cnt, int *out)
{
  int *d1 = out + cnt, *d2 = d1 + n * cnt, *d3 = d2 + n * n * cnt;
  for (int i = 0; i < n; i++)
    for (int e = 0; e < cnt; e++)
      if ((d1[i * cnt + e] = HsExprDiff(o->ex, out[e], i)) < 0)
        return -1;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++)
      for (int e = 0; e < cnt; e++)
        if ((d2[(i * n + j) * cnt + e] = d2[(j * n + i) * cnt + e] = HsExprDiff(o->ex, d1[i * cnt + e], j)) < 0)
          return -1;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++)
      for (int l = j; l < n; l++)
        for (int e = 0; e < cnt; e++) {
          int v          = HsExprDiff(o->ex, d2[(i * n + j) * cnt + e], l),
              perm[6][3] = {{i, j, l}, {i, l, j}, {j, i, l}, {j, l, i}, {l, i, j}, {l, j, i}};
          if (v < 0)
            return -1;
          for (int q = 0; q < 6; q++)
            d3[((perm[q][0] * n + perm[q][1]) * n + perm[q][2]) * cnt + e] = v;
        }
  return 0;
}

/* Gradient and Hessian of a cost in the 2n state variables (x = (q, p) are variables 0..2n-1);
 * programs prog[0..2]. */
static int DeriveCost(Ocp *o, int node, HsExprProgram **prog)
{
  int d = 2 * o->n, *g = malloc(sizeof(int) * (size_t)(d + d * d)), *H = g + d, st = -1;
  if (!g)
    return -1;
  for (int i = 0; i < d; i++)
    if ((g[i] = HsExprDiff(o->ex, node, i)) < 0)
      goto done;
  for (int i = 0; i < d; i++)
    for (int j = i; j < d; j++)
      if ((H[i * d + j] = H[j * d + i] = HsExprDiff(o->ex, g[i], j)) < 0)
        goto done;
  st = Program(o, 1, &node, &prog[0]) || Program(o, d, g, &prog[1]) || Program(o, d * d, H, &prog[2]) ? -1 : 0;
done:
  free(g);
  return st;
}

/* Room for one more element in an array of count elements, allocated in blocks of 16 (the
 * capacity is count rounded up to a multiple of 16); returns 0 or -1. */
static int Grow(void **a, size_t size, int count)
{
  if (count % 16 == 0) {
    void *b = realloc(*a, size * (size_t)(count + 16));
    if (!b)
      return -1;
    *a = b;
  }
  return 0;
}

/* Adds a name to the variable table at index j (j < 0: to the named
 * subexpressions); returns 0 or a Fail code. */
static int Name(Src *s, Ocp *o, const char *text, int col, int j, const char *what)
{
  if (!isalpha((unsigned char)text[0]) && text[0] != '_')
    return Fail(s, col, "%s: '%s' is not a name", what, text);
  for (const char *c = text; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      return Fail(s, col, "%s: '%s' is not a name (letters, digits and '_')", what, text);
  if (!strcmp(text, "t") || !strcmp(text, "T") || HsExprIsReservedName(text))
    return Fail(s, col, "%s: the name '%s' is reserved (time, constants and functions)", what, text);
  for (int k = 0; k < o->nvars; k++)
    if (o->names[k] && !strcmp(o->names[k], text))
      return Fail(s, col, "%s: the name '%s' is already used", what, text);
  for (int k = 0; k < o->nlet; k++)
    if (!strcmp(o->let_name[k], text))
      return Fail(s, col, "%s: the name '%s' is already used", what, text);
  if (Grow((void **)&o->texts, sizeof(char *), o->ntexts) ||
      (j < 0 &&
       (Grow((void **)&o->let_name, sizeof(char *), o->nlet) || Grow((void **)&o->let_node, sizeof(int), o->nlet))) ||
      !(o->texts[o->ntexts] = strdup(text)))
    return Fail(s, col, "%s: out of memory", what);
  if (j >= 0)
    o->names[j] = o->texts[o->ntexts++];
  else
    o->let_name[o->nlet++] = o->texts[o->ntexts++];
  return 0;
}

/* ------------------------------------------------------------ the reader ---- */

enum {
  K_MASS,
  K_V,
  K_B,
  K_R,
  K_X0,
  K_XT,
  K_ELL,
  K_T,
  K_PHI,
  K_KIN,
  K_UMIN,
  K_UMAX,
  K_TMIN,
  K_TMAX,
  K_CONS,
  K_FORCE,
  K_CCOST,
  K_CNAMES,
  K_CINV,
  K_COUNT
};
static const char *const keys[K_COUNT] = {
    "mass",          "potential",      "B",        "R",     "x0",    "xT",    "running_cost", "T",
    "terminal_cost", "kinetic_energy", "u_min",    "u_max", "T_min", "T_max", "constraints",  "force",
    "control_cost",  "control_names",  "conserved"};

/* What the line-by-line pass collected: the texts of the keys built later, where they are, and the
 * scalar keys. */
typedef struct {
  char *text[K_COUNT];
  int   cols[K_COUNT], lines[K_COUNT];
  char  name[HS_NAME_LEN], ss[32], cs[32];
  int   n, m, N;
} Keys;

/* The sizes the expression graph needs: n from the first 'coordinates' line, and the number of
 * 'param' lines. The file is rewound. */
static void OcpPrescan(FILE *fp, int *n, int *npar, int *nlet, int *mu)
{
  char  *line = NULL;
  size_t cap  = 0;
  int    m = 0, ctrl = 0;

  *n = 0, *npar = 0, *nlet = 0;
  while (getline(&line, &cap, fp) > 0) {
    char *hash = strchr(line, '#'), *colon, *key;
    if (hash)
      *hash = 0;
    if (!(colon = strchr(line, ':')))
      continue;
    *colon = 0;
    key    = HsTextTrim(line);
    if (!strncmp(key, "param ", 6))
      (*npar)++;
    else if (!strncmp(key, "let ", 4))
      (*nlet)++;
    else if (!strcmp(key, "controls") && !m) /* the controls' variables (only with force or control_cost) */
      m = (int)strtol(colon + 1, NULL, 10);
    else if (!strcmp(key, "force") || !strcmp(key, "control_cost"))
      ctrl = 1;
    else if (!strcmp(key, "coordinates") && !*n) {
      *n = 1;
      for (const char *c = colon + 1; *c; c++)
        *n += *c == ',';
    }
  }
  free(line);
  rewind(fp);
  *mu = ctrl && m > 0 && m <= HS_OCP_MAX_CONTROLS ? m : 0;
}

/* A new Ocp for n coordinates and up to npar parameters, with its expression graph. */
static int OcpNew(int n, int npar, int mu, Ocp **op)
{
  Ocp *o = calloc(1, sizeof(*o));

  *op = NULL;
  if (!o)
    return HS_ENOMEM;
  o->n = n, o->maxpar = npar, o->tvar = 2 * n, o->vel = 2 * n + 1, o->uvar = 3 * n + 1, o->mu = mu;
  o->Tvar = 3 * n + 1 + mu, o->par = o->Tvar + 1;
  o->nvars    = o->par;
  o->names    = calloc((size_t)(o->par + npar), sizeof(char *));
  o->vars     = calloc((size_t)(o->par + npar + 5 + 4 * n + mu), sizeof(double)); /* + scratch of OcpPhiT */
  o->pmin     = calloc((size_t)npar + 1, sizeof(double));
  o->pmax     = calloc((size_t)npar + 1, sizeof(double));
  o->phelp    = calloc((size_t)npar + 1, sizeof(char *));
  o->pnode    = calloc((size_t)npar + 1, sizeof(int));
  o->pderived = calloc((size_t)npar + 1, 1);
  o->ppinned  = calloc((size_t)npar + 1, 1);
  o->pprog    = calloc((size_t)npar + 1, sizeof(HsExprProgram *));
  if (!o->names || !o->vars || !o->pmin || !o->pmax || !o->phelp || !o->pnode || !o->pderived || !o->ppinned ||
      !o->pprog || HsExprCreate(o->par + npar, o->Tvar, &o->ex)) {
    OcpDestroy(o);
    return HS_ENOMEM;
  }
  o->names[o->tvar] = "t", o->names[o->Tvar] = "T";
  o->ellnode = -1;
  *op        = o;
  return HS_SUCCESS;
}

/* One end of a parameter's range at b (spaces first): a decimal number, inf, +inf or -inf, into *v; the text after it,
 * or NULL (strtod had also taken hexadecimal, nan, infinity). */
static char *RangeEnd(char *b, double *v)
{
  size_t n;
  char   num[64];

  b += strspn(b, " \t");
  n = strcspn(b, " \t,])");
  if ((n == 3 && !strncmp(b, "inf", 3)) || (n == 4 && (!strncmp(b, "+inf", 4) || !strncmp(b, "-inf", 4)))) {
    *v = b[0] == '-' ? -INFINITY : INFINITY;
    return b + n;
  }
  if (HsDecimalLength(b, 1) != n || n >= sizeof num)
    return NULL;
  memcpy(num, b, n), num[n] = 0;
  *v = strtod(num, NULL);
  return isfinite(*v) ? b + n : NULL;
}

/* The range of 'param NAME: expr in [a, b]' (or '(a, b)', '[a, b)', '(a, b]'; a, b numbers, inf or
 * -inf): cut off the value text at " in " (*val ends there), the closed range in *lo, *hi (an open
 * end is the next double inside), and its text. No range: [-1e300, 1e300], help NULL. */
static int OcpRange(Src *s, char *val, int vcol, double *lo, double *hi, char **help)
{
  char *r = NULL, *end, *end2;

  *lo = -1e300, *hi = 1e300, *help = NULL;
  for (char *c = strstr(val, "in"); c; c = strstr(c + 1, "in")) {
    const char *b = c + 2;
    while (isspace((unsigned char)*b))
      b++;
    if (c > val && isspace((unsigned char)c[-1]) && isspace((unsigned char)c[2]) && (*b == '[' || *b == '('))
      r = c;
  }
  if (!r)
    return 0;
  {
    char *b = r + 2, *bad = "expected 'in [low, high]' with low <= high (decimal numbers, inf or -inf), got '%s'";
    int   col = vcol + (int)(r - val);
    char  close;
    while (isspace((unsigned char)*b))
      b++;
    if (!(end = RangeEnd(b + 1, lo)) || *(end += strspn(end, " \t")) != ',')
      return Fail(s, col, bad, r);
    if (!(end2 = RangeEnd(end + 1, hi)))
      return Fail(s, col, bad, r);
    end2 += strspn(end2, " \t");
    close = *end2;
    if ((close != ']' && close != ')') || *HsTextTrim(end2 + 1) || !(*lo <= *hi))
      return Fail(s, col, bad, r);
    if (*b == '(')
      *lo = nextafter(*lo, INFINITY);
    if (close == ')')
      *hi = nextafter(*hi, -INFINITY);
    if (!(*help = malloc(strlen(r) + 32)))
      return HS_ENOMEM;
    snprintf(*help, strlen(r) + 32, "file parameter %s", HsTextTrim(r));
  }
  *r = 0;
  return 0;
}

/* 'param NAME: expr [in RANGE]': a constant, in the earlier parameters; its own name is known only
 * afterwards; its value must lie in its range (OcpRange), also when set with -p_NAME. */
static int OcpParam(Src *s, Ocp *o, const char *line, char *key, char *val, int vcol)
{
  char *pn = HsTextTrim(key + 6), what[96];
  int   j  = o->par + o->npar, ret;

  snprintf(what, sizeof what, "param %s", pn);
  if (o->npar >= o->maxpar)
    return Fail(s, 1, "param %s: more parameters than the file's first reading counted", pn);
  ret = OcpRange(s, val, vcol, &o->pmin[o->npar], &o->pmax[o->npar], &o->phelp[o->npar]);
  if (!ret)
    ret = Number(s, o, HsTextTrim(val), vcol, what, 0, &o->vars[j], &o->pnode[o->npar]);
  if (!ret)
    for (int i = 0; i < o->npar && !o->pderived[o->npar]; i++)
      o->pderived[o->npar] = (char)HsExprDependsOn(o->ex, o->pnode[o->npar], o->par + i);
  if (!ret && !(o->vars[j] >= o->pmin[o->npar] && o->vars[j] <= o->pmax[o->npar]))
    ret = o->phelp[o->npar] ? Fail(s, vcol, "param %s: the value %g is not %s", pn, o->vars[j], o->phelp[o->npar] + 15)
                            : Fail(s, vcol, "param %s: the value %g is outside [-1e300, 1e300]", pn, o->vars[j]);
  for (int i = 0; !ret && i < o->npar; i++) /* -p_NAME options ignore case: W and w would be one option */
    if (o->names[o->par + i] && !strcasecmp(o->names[o->par + i], pn) && strcmp(o->names[o->par + i], pn))
      ret = Fail(s, (int)(pn - line) + 1,
                 "param %s: differs from the parameter '%s' only in case, and -p_%s would set both (option names "
                 "ignore case); rename one",
                 pn, o->names[o->par + i], pn);
  if (!ret)
    ret = Name(s, o, pn, (int)(pn - line) + 1, j, "param");
  if (!ret)
    o->npar++, o->nvars = j + 1;
  else
    free(o->phelp[o->npar]), o->phelp[o->npar] = NULL;
  return ret;
}

/* 'let NAME: expr': a named subexpression in coordinates, momenta, t, parameters and earlier names. */
static int OcpLet(Src *s, Ocp *o, const char *line, char *key, const char *val, int vcol)
{
  char *ln = HsTextTrim(key + 4), what[96];
  int   nd, ret;

  snprintf(what, sizeof what, "let %s", ln);
  ret = MakeExpr(s, o, val, vcol, what, ALLOW_Q | ALLOW_P | ALLOW_T | ALLOW_V | ALLOW_BIGT, &nd);
  if (!ret)
    ret = Name(s, o, ln, (int)(ln - line) + 1, -1, "let");
  if (!ret)
    o->let_node[o->nlet - 1] = nd;
  return ret;
}

/* 'invariant NAME: expr': a quantity in q, p and the parameters evaluated at every node of a solution and reported
 * (docs/output-format.md); at most HS_MAX_INVARIANTS, names distinct among them (their own namespace). The name is
 * checked here, the expression kept as text and parsed by OcpBuildInvariants (after every line: it may come before
 * 'coordinates', as in a file of bodies, whose coordinates are generated at its end). */
static int OcpInvariant(Src *s, Ocp *o, const char *line, char *key, const char *val, int vcol)
{
  char *ln  = HsTextTrim(key + 10);
  int   col = (int)(ln - line) + 1;

  if (o->ninv >= HS_MAX_INVARIANTS)
    return Fail(s, col, "invariant %s: at most %d invariants", ln, HS_MAX_INVARIANTS);
  if (!isalpha((unsigned char)ln[0]) && ln[0] != '_')
    return Fail(s, col, "invariant: '%s' is not a name", ln);
  for (const char *c = ln; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      return Fail(s, col, "invariant: '%s' is not a name (letters, digits and '_')", ln);
  for (int k = 0; k < o->ninv; k++)
    if (!strcmp(o->inv_name[k], ln))
      return Fail(s, col, "invariant: the name '%s' is given twice", ln);
  if (Grow((void **)&o->texts, sizeof(char *), o->ntexts) || Grow((void **)&o->texts, sizeof(char *), o->ntexts + 1) ||
      Grow((void **)&o->inv_name, sizeof(char *), o->ninv) || Grow((void **)&o->inv_text, sizeof(char *), o->ninv) ||
      Grow((void **)&o->inv_node, sizeof(int), o->ninv) || Grow((void **)&o->inv_line, sizeof(int), o->ninv) ||
      Grow((void **)&o->inv_col, sizeof(int), o->ninv) || !(o->texts[o->ntexts] = strdup(ln)))
    return Fail(s, col, "invariant %s: out of memory", ln);
  o->inv_name[o->ninv] = o->texts[o->ntexts++];
  if (!(o->texts[o->ntexts] = strdup(val)))
    return Fail(s, col, "invariant %s: out of memory", ln);
  o->inv_text[o->ninv] = o->texts[o->ntexts++];
  o->inv_line[o->ninv] = s->line, o->inv_col[o->ninv++] = vcol;
  return 0;
}

/* 'frame NAME: c1, ..., c9' (docs/problem-format.md, "Frames"): kept as text until the coordinates are known. */
static int OcpFrame(Src *s, Ocp *o, const char *line, char *key, const char *val, int vcol)
{
  char *ln  = HsTextTrim(key + 6);
  int   col = (int)(ln - line) + 1;

  if (!isalpha((unsigned char)ln[0]) && ln[0] != '_')
    return Fail(s, col, "frame: '%s' is not a name", ln);
  for (const char *c = ln; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      return Fail(s, col, "frame: '%s' is not a name (letters, digits and '_')", ln);
  for (int k = 0; k < o->nframe; k++)
    if (!strcmp(o->frame_name[k], ln))
      return Fail(s, col, "frame: the name '%s' is given twice", ln);
  if (Grow((void **)&o->texts, sizeof(char *), o->ntexts) || Grow((void **)&o->texts, sizeof(char *), o->ntexts + 1) ||
      Grow((void **)&o->frame_name, sizeof(char *), o->nframe) ||
      Grow((void **)&o->frame_text, sizeof(char *), o->nframe) ||
      Grow((void **)&o->frame_line, sizeof(int), o->nframe) || Grow((void **)&o->frame_col, sizeof(int), o->nframe) ||
      !(o->texts[o->ntexts] = strdup(ln)))
    return Fail(s, col, "frame %s: out of memory", ln);
  o->frame_name[o->nframe] = o->texts[o->ntexts++];
  if (!(o->texts[o->ntexts] = strdup(val)))
    return Fail(s, col, "frame %s: out of memory", ln);
  o->frame_text[o->nframe] = o->texts[o->ntexts++];
  o->frame_line[o->nframe] = s->line, o->frame_col[o->nframe++] = vcol;
  return 0;
}

/* Frame f's k names (items at columns c) resolved to coordinates in o->frame_idx. Checked in this order, so that
 * the message names what is wrong rather than a count: an empty line or name (EmptyEntry), a name that is no
 * coordinate (names separated by spaces: the one entry 'd1x d1y ...'; a momentum p_q or a velocity q_dot), then the
 * count. */
static int FrameNames(Src *s, Ocp *o, int f, int k, char **items, const int *c)
{
  const char *fn   = o->frame_name[f];
  const char *need = "nine coordinates separated by commas, the x, y, z components of d1, d2, d3";
  char        what[320];
  int         ret;

  snprintf(what, sizeof what, "frame %s", fn);
  if ((ret = EmptyEntry(s, o->frame_col[f], what, need, k, items, c)))
    return ret;
  for (int l = 0; l < k; l++) {
    int i = 0;
    while (i < o->n && strcmp(o->names[i], items[l]))
      i++;
    if (i == o->n && strpbrk(items[l], " \t"))
      return Fail(s, c[l], "frame %s: '%s' is not a coordinate (%s)", fn, items[l], need);
    if (i == o->n)
      return Fail(s, c[l], "frame %s: '%s' is not a coordinate (a frame names coordinates, not momenta, velocities "
                           "or other names)", fn, items[l]);
    if (l < 9)
      o->frame_idx[9 * f + l] = i;
  }
  if (k != 9)
    return Fail(s, o->frame_col[f], "frame %s: %d names, not 9 (%s)", fn, k, need);
  return 0;
}

/* why (HsProblemCheckFrames' text, which numbers the frames) with each "frame K" written as the file names it, "frame
 * main": "it shares a coordinate with frame 1" had left the reader to count the file's frame lines. */
static void FrameNamesIn(const Ocp *o, const char *why, char *out, size_t len)
{
  size_t w = 0;

  for (const char *c = why; *c && w + 1 < len;) {
    char *end;
    long  K = !strncmp(c, "frame ", 6) && isdigit((unsigned char)c[6]) ? strtol(c + 6, &end, 10) : 0;
    if (K >= 1 && K <= o->nframe) {
      w += (size_t)snprintf(out + w, len - w, "frame %s", o->frame_name[K - 1]);
      c = end;
    } else
      out[w++] = *c++;
  }
  out[w < len ? w : len - 1] = 0;
}

/* The frames: their names resolved to coordinates (HsProblem.frames) and checked (HsProblemCheckFrames). */
static int OcpBuildFrames(Src *s, Ocp *o, HsProblem *p)
{
  int ret = 0, bad = -1;

  if (!o->nframe)
    return 0;
  if (!(o->frame_idx = malloc(sizeof(int) * (size_t)(9 * o->nframe))))
    return HS_ENOMEM;
  for (int f = 0; !ret && f < o->nframe; f++) {
    char **items, *t = strdup(o->frame_text[f]);
    int   *c, k      = t ? SplitList(t, o->frame_col[f], &items, &c) : -1;
    if (k < 0) {
      free(t);
      return HS_ENOMEM;
    }
    s->line = o->frame_line[f];
    ret     = FrameNames(s, o, f, k, items, c);
    free(t), free(items), free(c);
  }
  if (ret)
    return ret;
  p->nframes = o->nframe, p->frames = o->frame_idx, p->frame_names = (const char *const *)o->frame_name;
  if (HsProblemCheckFrames(p, HS_FRAME_TOL, &bad, p->why, sizeof p->why)) {
    const char *w = strchr(p->why, ':'); /* "frame K: why" */
    char        named[sizeof p->why];
    s->line    = o->frame_line[bad >= 0 ? bad : 0];
    p->nframes = 0;
    FrameNamesIn(o, w ? w + 2 : p->why, named, sizeof named);
    return Fail(s, o->frame_col[bad >= 0 ? bad : 0], "frame %s: %s", o->frame_name[bad >= 0 ? bad : 0], named);
  }
  return 0;
}

/* 'coordinates: q1, q2, ...': the names q_i, p_<q_i> and <q_i>_dot. */
static int OcpCoordinates(Src *s, Ocp *o, Keys *K, const char *line, const char *key, char *val, int vcol)
{
  char **items;
  int   *c, n, ret = 0;

  if (K->n)
    return Fail(s, (int)(key - line) + 1, "'coordinates' is given twice");
  n = SplitList(val, vcol, &items, &c);
  if (n < 0)
    return HS_ENOMEM;
  ret = EmptyEntry(s, vcol, "coordinates", "names separated by commas", n, items, c);
  if (!ret && n != o->n)
    ret = Fail(s, vcol, "coordinates: %d names, but the file's first reading counted %d", n, o->n);
  for (int i = 0; !ret && i < n; i++) {
    char pn[256];
    ret = Name(s, o, items[i], c[i], i, "coordinates");
    snprintf(pn, sizeof pn, "p_%s", items[i]);
    if (!ret)
      ret = Name(s, o, pn, c[i], n + i, "coordinates");
    snprintf(pn, sizeof pn, "%s_dot", items[i]);
    if (!ret)
      ret = Name(s, o, pn, c[i], o->vel + i, "coordinates");
  }
  free(items), free(c);
  K->n = ret ? 0 : n;
  return ret;
}

/* An integer key in [lo, hi] (controls, N). */
static int OcpInteger(Src *s, const char *what, const char *val, int vcol, long lo, long hi, int *v)
{
  char *end;
  long  x = strtol(val, &end, 10);

  if (end == val || *HsTextTrim(end) || x < lo || x > hi)
    return Fail(s, vcol, "%s: expected an integer from %ld to %ld, got '%s'", what, lo, hi, val);
  *v = (int)x;
  return 0;
}

/* 'state_scheme: NAME', 'costate_scheme: NAME': one of the schemes (whether the two go together is
 * checked by the solver, which names the file's choice as the problem's default). */
static int OcpSchemeKey(Src *s, Keys *K, const char *key, const char *val, int vcol)
{
  static const char *const ss[] = {"midpoint", "greenspan", "gonzalez", NULL}, *const cs[] = {
                                                                                   "conserving", "conserving_1dof",
                                                                                   "trapezoidal", "kkt", NULL};
  int                state = !strcmp(key, "state_scheme");
  const char *const *list  = state ? ss : cs;

  for (int i = 0; list[i]; i++)
    if (!strcmp(val, list[i])) {
      snprintf(state ? K->ss : K->cs, sizeof K->ss, "%s", val);
      return 0;
    }
  return Fail(s, vcol, "%s: unknown scheme '%s' (%s)", key, val,
              state ? "midpoint, greenspan or gonzalez" : "conserving, conserving_1dof, trapezoidal or kkt");
}

/* One 'key: value' line. */
static int OcpKeyLine(Src *s, Ocp *o, Keys *K, const char *line, char *key, char *val, int vcol)
{
  int k;

  for (k = 0; k < K_COUNT; k++)
    if (!strcmp(key, keys[k]))
      break;
  if (k < K_COUNT) {
    if (K->text[k])
      return Fail(s, (int)(key - line) + 1, "'%s' is given twice", key);
    K->lines[k] = s->line, K->cols[k] = vcol;
    return (K->text[k] = strdup(val)) ? 0 : HS_ENOMEM;
  }
  if ((!strcmp(key, "problem") && K->name[0]) || (!strcmp(key, "controls") && K->m) || (!strcmp(key, "N") && K->N) ||
      (!strcmp(key, "state_scheme") && K->ss[0]) || (!strcmp(key, "costate_scheme") && K->cs[0]))
    return Fail(s, (int)(key - line) + 1, "'%s' is given twice", key);
  if (!strcmp(key, "problem")) {
    if (!*val || strlen(val) >= sizeof K->name)
      return Fail(s, vcol, "problem: a name of 1 to %d characters", (int)sizeof K->name - 1);
    int n;
    for (const char *c = val; *c; c += n) /* the name is printed: no terminal controls (C1 ones included), and no
                                             invisible characters, which make two names that look the same differ */
      if (HsTextControl(c, &n) && !HsTextUtf8Length(c)) /* no code point to name: the byte */
        return Fail(s, vcol + (int)(c - val),
                    "problem: a control character or invalid UTF-8 (a byte 0x%02X that starts no valid UTF-8 "
                    "character: an 8-bit control, an overlong form, a surrogate, Latin-1 text?) in the name",
                    (unsigned char)*c);
      else if (HsTextControl(c, &n))
        return Fail(s, vcol + (int)(c - val),
                    "problem: a control character, a text-direction override or an invisible character (zero-width, "
                    "format, line separator: U+%04X) in the name",
                    HsTextCodePoint(c, n));
    snprintf(K->name, sizeof K->name, "%s", val);
  } else if (!strcmp(key, "state_scheme") || !strcmp(key, "costate_scheme"))
    return OcpSchemeKey(s, K, key, val, vcol);
  else if (!strncmp(key, "param ", 6))
    return OcpParam(s, o, line, key, val, vcol);
  else if (!strncmp(key, "let ", 4))
    return OcpLet(s, o, line, key, val, vcol);
  else if (!strncmp(key, "invariant ", 10))
    return OcpInvariant(s, o, line, key, val, vcol);
  else if (!strncmp(key, "frame ", 6))
    return OcpFrame(s, o, line, key, val, vcol);
  else if (!strcmp(key, "coordinates"))
    return OcpCoordinates(s, o, K, line, key, val, vcol);
  else if (!strcmp(key, "controls"))
    return OcpInteger(s, "controls", val, vcol, 1, HS_OCP_MAX_CONTROLS, &K->m); /* R has m^2 entries (int sizes) */
  else if (!strcmp(key, "N"))
    return OcpInteger(s, "N", val, vcol, 2, HS_OCP_MAX_FILE_N, &K->N); /* larger grids: -N */
  else
    return Fail(s, (int)(key - line) + 1,
                "unknown key '%s' (expected problem, param NAME, let NAME, coordinates, controls, mass, potential, B, "
                "R, T, T_min, T_max, N, x0, xT, running_cost, terminal_cost, u_min, u_max, constraints, state_scheme, "
                "costate_scheme, force, control_cost, control_names, invariant NAME, conserved, frame NAME)",
                key);
  return 0;
}

/* Pass 1: every line; parameters and 'let's are parsed in order, the other keys kept as text. */
static int OcpReadKeys(FILE *fp, Src *s, Ocp *o, Keys *K)
{
  char  *line = NULL;
  size_t cap  = 0;
  int    ret  = 0;

  while (!ret && getline(&line, &cap, fp) > 0) {
    char *t, *colon, *key, *val, *hash = strchr(line, '#');
    s->line++;
    if (hash)
      *hash = 0;
    t = HsTextTrim(line);
    if (!*t)
      continue;
    colon = strchr(t, ':');
    if (!colon) {
      ret = Fail(s, (int)(t - line) + 1, "expected 'key: value'");
      break;
    }
    *colon = 0;
    key    = HsTextTrim(t);
    val    = HsTextTrim(colon + 1);
    ret    = OcpKeyLine(s, o, K, line, key, val, (int)(val - line) + 1);
  }
  free(line);
  return ret;
}

/* The keys every file must have. */
static int OcpCheckMissing(Src *s, const Keys *K)
{
  const char *missing = !K->n                                 ? "coordinates"
                        : !K->m                               ? "controls"
                        : !K->text[K_MASS] && !K->text[K_KIN] ? "mass (or kinetic_energy)"
                        : !K->text[K_V]                       ? "potential"
                        : !K->text[K_B]                       ? "B"
                        : !K->text[K_R]                       ? "R"
                        : !K->text[K_X0]                      ? "x0"
                        : !K->text[K_XT]                      ? "xT"
                        : !K->text[K_T]                       ? "T"
                                                              : NULL;
  s->line             = 0;
  return missing ? Fail(s, 0, "missing '%s'", missing) : 0;
}

/* M(q) from 'mass' (n*n entries, row-major) or from 'kinetic_energy' T(q, qdot): M_ij = d^2 T /
 * dqdot_i dqdot_j, which must not depend on the velocities (that T has no terms of degree 0 or 1
 * is checked at x0, OcpCheckAtX0). node[0..n*n-1]: the entries; *kin: T's node (-1 without). */
static int OcpBuildMass(Src *s, Ocp *o, const Keys *K, int *node, int *kin)
{
  int n = o->n, ret = 0;

  if (K->text[K_MASS] && K->text[K_KIN]) {
    s->line = K->lines[K_KIN];
    return Fail(s, 1, "give either 'mass' or 'kinetic_energy', not both");
  }
  if (K->text[K_MASS]) {
    char **items;
    int   *c, k;
    s->line = K->lines[K_MASS];
    if ((k = SplitList(K->text[K_MASS], K->cols[K_MASS], &items, &c)) < 0)
      return HS_ENOMEM;
    if (k != n * n)
      ret = Fail(s, K->cols[K_MASS], "mass: expected n*n = %d entries (row-major), found %d", n * n, k);
    for (int e = 0; !ret && e < n * n; e++)
      ret = MakeExpr(s, o, items[e], c[e], "mass", ALLOW_Q | ALLOW_BIGT, &node[e]);
    free(items), free(c);
    return ret;
  }
  s->line = K->lines[K_KIN];
  ret     = MakeExpr(s, o, K->text[K_KIN], K->cols[K_KIN], "kinetic_energy", ALLOW_Q | ALLOW_V | ALLOW_BIGT, kin);
  for (int i = 0; !ret && i < n; i++) {
    int di = HsExprDiff(o->ex, *kin, o->vel + i);
    for (int j = i; !ret && j < n; j++) {
      int v;
      if (di < 0 || (node[i * n + j] = node[j * n + i] = HsExprDiff(o->ex, di, o->vel + j)) < 0)
        ret = HS_ENOMEM;
      else if ((v = UsesKind(o, node[i * n + j], ALLOW_V)) >= 0)
        ret = Fail(s, K->cols[K_KIN],
                   "kinetic_energy: not quadratic in the velocities: d2T/d%s d%s depends on %s (T must be "
                   "1/2 qdot^T M(q) qdot)",
                   o->names[o->vel + i], o->names[o->vel + j], o->names[v]);
    }
  }
  return ret;
}

/* 'T: EXPR' or 'T: free GUESS': T's own program P_T (parameters only), its value in the variable T
 * (which the other keys may use), and o->T_free. */
static int OcpBuildT(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  char  *t   = K->text[K_T];
  int    col = K->cols[K_T], nd, ret;
  double v;

  s->line = K->lines[K_T];
  if (!strncmp(t, "free", 4) && (!t[4] || isspace((unsigned char)t[4]))) {
    const char *g = t + 4;
    while (isspace((unsigned char)*g))
      g++;
    if (!*g)
      return Fail(s, col, "T: 'free' needs an initial guess of the final time, e.g. 'T: free 2.5'");
    o->T_free = p->free_T = 1, col += (int)(g - t), t = (char *)g;
  } else if (K->text[K_TMIN] || K->text[K_TMAX]) {
    s->line = K->lines[K->text[K_TMIN] ? K_TMIN : K_TMAX];
    return Fail(s, 1, "%s: only for a free final time ('T: free GUESS')", K->text[K_TMIN] ? "T_min" : "T_max");
  }
  if (strchr(t, ','))
    return Fail(s, col, "T: expected one expression");
  ret = Number(s, o, t, col, o->T_free ? "T (the free final time's guess)" : "T", 0, &v, &nd);
  if (!ret && !(v > 0))
    ret = Fail(s, col, "T: the horizon must be positive, got %g", v);
  if (!ret && Program(o, 1, &nd, &o->prog[P_T]))
    ret = HS_ENOMEM;
  if (!ret)
    o->vars[o->Tvar] = p->T = v;
  return ret;
}

/* The constant lists B (n x m), R (m x m), x0, xT (2n; '*' or 'free': a free terminal component),
 * T_min, T_max (a free T's range; 0 and inf by default) and the control bounds, as one program of
 * constants (evaluated again after every -p_NAME, OcpUpdate; with T in the data also after every change of a
 * free T, OcpSetFinalTime). They may use T; the control bounds only if T is fixed. */
static int OcpBuildConstants(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  static const char *const what[]  = {"",
                                      "",
                                      "B (n x m, row-major)",
                                      "R (m x m, row-major)",
                                      "x0 (q then p)",
                                      "xT (q then p)",
                                      "",
                                      "T",
                                      "",
                                      "",
                                      "u_min (m entries, '*' for none)",
                                      "u_max (m entries, '*' for none)",
                                      "T_min",
                                      "T_max"};
  static const int         order[] = {K_B, K_R, K_X0, K_XT, K_TMIN, K_TMAX, K_UMIN, K_UMAX};
  int n = o->n, m = K->m, count[] = {0, 0, n * m, m * m, 2 * n, 2 * n, 0, 1, 0, 0, m, m, 1, 1}, ncst = 0, ret = 0;
  int total = n * m + m * m + 4 * n + 2 + 2 * m, *cst = malloc(sizeof(int) * (size_t)total);

  o->cst_val = malloc(sizeof(double) * (size_t)total);
  o->Bnode   = malloc(sizeof(int) * (size_t)(n * m));
  o->xTnode  = malloc(sizeof(int) * (size_t)(2 * n));
  if (!cst || !o->cst_val || !o->Bnode || !o->xTnode) {
    free(cst);
    return HS_ENOMEM;
  }
  o->bounded = K->text[K_UMIN] || K->text[K_UMAX];
  for (int oi = 0; !ret && oi < 8; oi++) {
    char **items;
    int    a = order[oi], *c, k;
    if (a >= K_UMIN && !K->text[a]) { /* no bound on this side; T in [0, inf] */
      if (a == K_TMIN || a == K_TMAX)
        cst[ncst++] = HsExprConstant(o->ex, a == K_TMIN ? 0 : INFINITY);
      for (int j = 0; o->bounded && a <= K_UMAX && j < m; j++)
        cst[ncst++] = HsExprConstant(o->ex, a == K_UMIN ? -INFINITY : INFINITY);
      continue;
    }
    s->line = K->lines[a];
    if ((k = SplitList(K->text[a], K->cols[a], &items, &c)) < 0) {
      ret = HS_ENOMEM;
      break;
    }
    if (k != count[a])
      ret = count[a] == 1 ? Fail(s, K->cols[a], "%s: expected one expression, found %d", what[a], k)
                          : Fail(s, K->cols[a], "%s: expected %d entries, found %d", what[a], count[a], k);
    for (int i = 0; !ret && i < k; i++) {
      double v;
      if (a == K_XT && !(p->xT_fixed[i] = !(!strcmp(items[i], "*") || !strcmp(items[i], "free")))) {
        o->xTnode[i] = cst[ncst++] = HsExprConstant(o->ex, 0);
        continue;
      }
      if (a == K_XT) { /* may depend on a free T (OcpXTT) */
        ret          = Number(s, o, items[i], c[i], what[a], ALLOW_BIGT, &v, &cst[ncst]);
        o->xTnode[i] = cst[ncst++];
        continue;
      }
      if (a >= K_UMIN && a <= K_UMAX && !strcmp(items[i], "*")) {
        cst[ncst++] = HsExprConstant(o->ex, a == K_UMIN ? -INFINITY : INFINITY);
        continue;
      }
      if (a == K_TMAX && !strcmp(items[i], "inf")) {
        cst[ncst++] = HsExprConstant(o->ex, INFINITY);
        continue;
      }
      if (a == K_B) { /* B may depend on q (OcpBq): its value is checked at x0 (OcpUpdate) */
        ret = MakeExpr(s, o, items[i], c[i], what[a], ALLOW_Q | ALLOW_BIGT, &cst[ncst]);
        if (!ret && UsesKind(o, cst[ncst], ALLOW_Q) >= 0)
          o->Bq = 1;
        else if (!ret)
          ret = Number(s, o, items[i], c[i], what[a], ALLOW_BIGT, &v, NULL);
        if (!ret)
          o->Bnode[i] = cst[ncst];
        ncst++;
        continue;
      }
      ret = Number(s, o, items[i], c[i], what[a], a == K_TMIN || a == K_TMAX ? 0 : ALLOW_BIGT, &v, &cst[ncst++]);
      if (!ret && o->T_free && a >= K_UMIN && a <= K_UMAX && HsExprDependsOn(o->ex, cst[ncst - 1], o->Tvar))
        ret = Fail(s, c[i],
                   "%s: the final time T is free, and the control bounds are bounds of the direct NLP's "
                   "variables, fixed during a solve: they may not depend on T",
                   what[a]);
    }
    free(items), free(c);
  }
  o->nB = n * m, o->nR = m * m;
  if (!ret && Program(o, ncst, cst, &o->prog[P_CST]))
    ret = HS_ENOMEM;
  o->cstnode = cst; /* OcpBuildDataT */
  return ret;
}

/* T(q0, w) = 1/2 w^T M(q0) w for two velocity vectors w: T has no terms of degree 0 or 1. */
static int OcpCheckKinetic(Src *s, Ocp *o, const Keys *K, int kin, const double *Mx)
{
  int     n = o->n, ret = 0;
  double *w = malloc(sizeof(double) * (size_t)n);

  if (!w)
    return HS_ENOMEM;
  for (int trial = 0; !ret && trial < 2; trial++) {
    double T0, quad = 0;
    for (int i = 0; i < n; i++)
      o->vars[o->vel + i] = w[i] = trial ? 0.37 * (i + 1) : 1.0 - 0.3 * i;
    if (EvalSlow(o, 1, &kin, &T0)) {
      ret = HS_ENOMEM;
      break;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        quad += 0.5 * w[i] * Mx[i * n + j] * w[j];
    if (!(fabs(T0 - quad) <= 1e-12 * (fabs(T0) + fabs(quad)) + 1e-300))
      ret = Fail(s, K->cols[K_KIN],
                 "kinetic_energy: T = %.17g at x0 and qdot = (%g, ...), but 1/2 qdot^T M qdot = %.17g: T has "
                 "terms of degree 0 or 1 in the velocities",
                 T0, w[0], quad);
  }
  free(w);
  return ret;
}

/* At the initial state x0: M finite and symmetric (then exactly symmetric: the upper triangle for
 * both), T quadratic in the velocities; then V, which must be finite there. node[n*n]: V's node. */
static int OcpCheckAtX0(Src *s, Ocp *o, const Keys *K, int *node, int kin)
{
  int     n = o->n, mkey = K->text[K_MASS] ? K_MASS : K_KIN, ret = 0;
  double *Mx = malloc(sizeof(double) * (size_t)(n * n)), V0;

  if (!Mx)
    return HS_ENOMEM;
  s->line = K->lines[mkey];
  HsExprProgramSetSlow(o->prog[P_CST], o->vars);
  HsExprProgramEval(o->prog[P_CST], o->vars, o->cst_val);
  OcpSetState(o, o->cst_val + o->nB + o->nR, 0);
  if (EvalSlow(o, n * n, node, Mx))
    ret = HS_ENOMEM;
  for (int e = 0; !ret && e < n * n; e++) {
    int i = e / n, j = e % n;
    if (!isfinite(Mx[e]))
      ret =
          Fail(s, K->cols[mkey], "%s: M entry (%d,%d) is not finite at the initial state x0", keys[mkey], i + 1, j + 1);
    else if (fabs(Mx[e] - Mx[j * n + i]) > 1e-12 * (fabs(Mx[e]) + fabs(Mx[j * n + i])) + 1e-300)
      ret = Fail(s, K->cols[mkey], "mass: M(q) is not symmetric at x0: entry (%d,%d) = %.17g, (%d,%d) = %.17g", i + 1,
                 j + 1, Mx[e], j + 1, i + 1, Mx[j * n + i]);
  }
  if (!ret && kin >= 0)
    ret = OcpCheckKinetic(s, o, K, kin, Mx);
  free(Mx);
  for (int e = 0; !ret && e < n * n; e++)
    if (e % n < e / n)
      node[e] = node[(e % n) * n + e / n];
  if (!ret) {
    s->line = K->lines[K_V];
    ret     = MakeExpr(s, o, K->text[K_V], K->cols[K_V], "potential", ALLOW_Q | ALLOW_BIGT, &node[n * n]);
  }
  if (!ret && (EvalSlow(o, 1, &node[n * n], &V0) || !isfinite(V0)))
    ret = Fail(s, K->cols[K_V], "potential: V is not finite at the initial state x0");
  return ret;
}

/* Derivatives of M and V up to third order, one program per order and cumulative ones (P_*_UPTO);
 * a mass matrix that does not depend on q (*const_mass) gets its values' program only. */
static int OcpBuildPrograms(Ocp *o, const int *node, int *const_mass)
{
  int  n = o->n, nn = n * n, szM[4] = {nn, 0, 0, 0}, szV[4] = {1, n, nn, nn * n}, ret = 0; /* n <= 1000 */
  int *Mn, *Vn;

  *const_mass = 1;
  for (int e = 0; e < nn; e++)
    *const_mass &= !HsExprDependsOnFast(o->ex, node[e]);
  if (!*const_mass && n > HS_OCP_MAX_COORDINATES_MASS) /* before n^5 is formed */
    return HS_ERANGE;
  if (!*const_mass)
    szM[1] = nn * n, szM[2] = nn * nn, szM[3] = nn * nn * n;
  Mn = malloc(sizeof(int) * (size_t)(*const_mass ? nn : szM[0] + szM[1] + szM[2] + szM[3]));
  Vn = malloc(sizeof(int) * (size_t)(szV[0] + szV[1] + szV[2] + szV[3]));
  if (!Mn || !Vn) {
    free(Mn), free(Vn);
    return HS_ENOMEM;
  }
  memcpy(Mn, node, sizeof(int) * (size_t)nn);
  Vn[0] = node[nn];
  if ((!*const_mass && Derive3(o, n, nn, Mn)) || Derive3(o, n, 1, Vn))
    ret = HS_ENOMEM;
  for (int k = 0, om = 0, ov = 0; !ret && k < 4; om += szM[k], ov += szV[k], k++) {
    int mass = k == 0 || !*const_mass;
    if ((mass && Program(o, szM[k], Mn + om, &o->prog[P_MASS + k])) || Program(o, szV[k], Vn + ov, &o->prog[P_POT + k]))
      ret = HS_ENOMEM;
    if (!ret && k > 0 &&
        ((mass && Program(o, om + szM[k], Mn, &o->prog[P_MASS_UPTO + k - 1])) ||
         Program(o, ov + szV[k], Vn, &o->prog[P_POT_UPTO + k - 1])))
      ret = HS_ENOMEM;
  }
  free(Mn), free(Vn);
  return ret;
}

/* With a free T: the program P_PHIT of OcpPhiT, the derivatives of phi in T and in t (both are the
 * final time in the terminal cost) and their gradients in x. */
static int OcpBuildPhiT(Ocp *o, int phi)
{
  int d = 2 * o->n, cnt = 5 + 2 * d, *nd = malloc(sizeof(int) * (size_t)cnt), ret = 0;

  if (!nd)
    return HS_ENOMEM;
  nd[0] = HsExprDiff(o->ex, phi, o->Tvar);
  nd[1] = HsExprDiff(o->ex, phi, o->tvar);
  for (int i = 0; i < d; i++)
    nd[2 + i] = HsExprDiff(o->ex, nd[0], i), nd[2 + d + i] = HsExprDiff(o->ex, nd[1], i);
  nd[2 + 2 * d] = HsExprDiff(o->ex, nd[0], o->Tvar);
  nd[3 + 2 * d] = HsExprDiff(o->ex, nd[0], o->tvar);
  nd[4 + 2 * d] = HsExprDiff(o->ex, nd[1], o->tvar);
  for (int i = 0; i < cnt; i++)
    if (nd[i] < 0)
      ret = HS_ENOMEM;
  if (!ret && Program(o, cnt, nd, &o->prog[P_PHIT]))
    ret = HS_ENOMEM;
  free(nd);
  return ret;
}

/* The monitored invariants ('invariant' lines, OcpInvariant): expressions in q, p and the parameters, one program. */
static int OcpBuildInvariants(Src *s, Ocp *o, HsProblem *p)
{
  char what[96];
  int  ret;

  for (int i = 0; i < o->ninv; i++) {
    s->line = o->inv_line[i];
    snprintf(what, sizeof what, "invariant %s", o->inv_name[i]);
    if ((ret = MakeExpr(s, o, o->inv_text[i], o->inv_col[i], what, ALLOW_Q | ALLOW_P, &o->inv_node[i])))
      return ret;
  }
  if (o->ninv) {
    if (Program(o, o->ninv, o->inv_node, &o->prog[P_INV]))
      return HS_ENOMEM;
    p->ninv = o->ninv, p->inv_names = (const char *const *)o->inv_name, p->invariants = OcpInvariants;
  }
  return 0;
}

/* The running cost ell(q, p, t) and the terminal cost phi(q, p, t = T) with their gradients and
 * Hessians; with a free T, d phi/dT (OcpPhiT) and the check that ell does not depend on t. */
static int OcpBuildCosts(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  int e, ret = 0;

  if (K->text[K_ELL]) {
    s->line = K->lines[K_ELL];
    ret = MakeExpr(s, o, K->text[K_ELL], K->cols[K_ELL], "running_cost", ALLOW_Q | ALLOW_P | ALLOW_T | ALLOW_BIGT, &e);
    if (!ret && DeriveCost(o, e, &o->prog[P_ELL]))
      ret = HS_ENOMEM;
    if (!ret)
      o->ellnode = e, p->ell.f = OcpEll, p->ell.grad = OcpEllGrad, p->ell.hess = OcpEllHess,
      p->ell.time_dependent = HsExprDependsOn(o->ex, e, o->tvar);
    if (!ret && o->T_free && p->ell.time_dependent)
      ret = Fail(s, K->cols[K_ELL],
                 "running_cost: depends on the time t, but the final time is free: a free T "
                 "needs an autonomous problem (docs/free-final-time.md)");
  }
  if (!ret && K->text[K_PHI]) {
    s->line = K->lines[K_PHI];
    ret = MakeExpr(s, o, K->text[K_PHI], K->cols[K_PHI], "terminal_cost", ALLOW_Q | ALLOW_P | ALLOW_T | ALLOW_BIGT, &e);
    if (!ret && DeriveCost(o, e, &o->prog[P_PHI]))
      ret = HS_ENOMEM;
    if (!ret)
      p->phi.f = OcpPhi, p->phi.grad = OcpPhiGrad, p->phi.hess = OcpPhiHess;
    if (!ret && o->T_free && (HsExprDependsOn(o->ex, e, o->tvar) || HsExprDependsOn(o->ex, e, o->Tvar))) {
      ret = OcpBuildPhiT(o, e);
      if (!ret)
        p->phi_T = OcpPhiT;
    }
  }
  if (!ret && o->T_free)
    p->set_final_time = OcpSetFinalTime;
  return ret ? ret : OcpBuildInvariants(s, o, p);
}

/* A B that depends on q: programs of B, dB (n blocks of n m) and d2B (n^2 blocks), OcpBq. At most
 * HS_OCP_MAX_COORDINATES_MASS coordinates then (d2B has n^3 m entries). */
static int OcpBuildBq(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  int n = o->n, m = K->m, nm = n * m, *d1, *d2, ret = 0;

  if (!o->Bq)
    return 0;
  if (n > HS_OCP_MAX_COORDINATES_MASS || (double)n * n * n * m > HS_OCP_MAX_BQ_ENTRIES) {
    s->line = K->lines[K_B];
    return Fail(s, K->cols[K_B],
                "B depends on q: its second derivatives have n^3 m = %.0f entries, at most %.0f (and "
                "at most %d coordinates)",
                (double)n * n * n * m, (double)HS_OCP_MAX_BQ_ENTRIES, HS_OCP_MAX_COORDINATES_MASS);
  }
  d1 = malloc(sizeof(int) * (size_t)(nm * n + nm * n * n));
  if (!d1)
    return HS_ENOMEM;
  d2 = d1 + nm * n;
  for (int e = 0; e < nm && !ret; e++)
    for (int l = 0; l < n && !ret; l++) {
      if ((d1[e * n + l] = HsExprDiff(o->ex, o->Bnode[e], l)) < 0)
        ret = HS_ENOMEM;
      for (int r = 0; r < n && !ret; r++)
        if ((d2[(e * n + l) * n + r] = HsExprDiff(o->ex, d1[e * n + l], r)) < 0)
          ret = HS_ENOMEM;
    }
  if (!ret && (Program(o, nm, o->Bnode, &o->prog[P_BQ]) || Program(o, nm * n, d1, &o->prog[P_BQ + 1]) ||
               Program(o, nm * n * n, d2, &o->prog[P_BQ + 2])))
    ret = HS_ENOMEM;
  free(d1);
  if (!ret)
    p->Bq = OcpBq;
  return ret;
}

/* The nodes of f (n) and c (0 without 'control_cost') into nd[0..n]. */
static int OcpControlNodes(Src *s, Ocp *o, const Keys *K, int *nd)
{
  int    n = o->n, ret = 0, k, *c;
  char **items;

  {
    s->line = K->lines[K_FORCE];
    if ((k = SplitList(K->text[K_FORCE], K->cols[K_FORCE], &items, &c)) < 0)
      return HS_ENOMEM;
    if (k != n)
      ret = Fail(s, K->cols[K_FORCE], "force: expected %d expressions (one per coordinate), found %d", n, k);
    for (int i = 0; !ret && i < n; i++)
      ret = MakeExpr(s, o, items[i], c[i], "force", ALLOW_Q | ALLOW_T | ALLOW_U, &nd[i]);
    free(items), free(c);
  }
  if (!ret && K->text[K_CCOST]) {
    s->line = K->lines[K_CCOST];
    ret     = MakeExpr(s, o, K->text[K_CCOST], K->cols[K_CCOST], "control_cost", ALLOW_Q | ALLOW_T | ALLOW_U, &nd[n]);
  } else if (!ret && (nd[n] = HsExprConstant(o->ex, 0)) < 0)
    ret = HS_ENOMEM;
  return ret;
}
/* force and control_cost (docs/controls.md): with force, B and R do not apply (B = 0 and R = I stand in for them);
 * control_cost needs force. */
static int OcpControlKeys(Src *s, Keys *K)
{
  int   m = K->m, ctrl = K->text[K_FORCE] || K->text[K_CCOST];
  char *t;

  if (K->text[K_CNAMES] && !ctrl) {
    s->line = K->lines[K_CNAMES];
    return Fail(s, K->cols[K_CNAMES], "control_names: names the controls of force and control_cost, given neither");
  }
  if (!ctrl || m < 1)
    return 0;
  if (!K->text[K_FORCE]) {
    s->line = K->lines[K_CCOST];
    return Fail(s, K->cols[K_CCOST], "control_cost: needs force (write B u as force: one expression per coordinate)");
  }
  for (int k = K_B; k <= K_R; k++)
    if (K->text[k]) {
      s->line = K->lines[k];
      return Fail(s, K->cols[k],
                  "%s: does not apply with force (the force replaces B u, control_cost replaces "
                  "1/2 u^T R u; docs/controls.md)",
                  keys[k]);
    }
  if ((double)(K->n + 1) * (K->n + m) * (K->n + m) > HS_OCP_MAX_CTRL_ENTRIES) { /* before the m^2 of R's stand-in */
    s->line = K->lines[K_FORCE];
    return Fail(s, K->cols[K_FORCE],
                "force and control_cost: their second derivatives in (q, u) have (n + 1)(n + m)^2 "
                "= %.0f entries, at most %.0f (HS_OCP_MAX_CTRL_ENTRIES)",
                (double)(K->n + 1) * (K->n + m) * (K->n + m), (double)HS_OCP_MAX_CTRL_ENTRIES);
  }
  for (int k = K_B; k <= K_R; k++) {
    int cnt = k == K_B ? K->n * m : m * m;
    if (K->text[k])
      continue;
    if (!(t = K->text[k] = malloc((size_t)cnt * 3 + 1)))
      return HS_ENOMEM;
    for (int i = 0; i < cnt; i++)
      t += sprintf(t, "%s%d", i ? ", " : "", k == K_R && i / m == i % m);
    K->lines[k] = s->line, K->cols[k] = 1;
  }
  return 0;
}

/* The names of the controls of force and control_cost (variables uvar ...): control_names, default u (m = 1) or
 * u1 ... um. Before the other expressions, so that a control where it is not allowed is named as such. */
static int OcpControlNames(Src *s, Ocp *o, const Keys *K)
{
  int    m = o->mu, ret = 0, k, *c = NULL;
  char **items = NULL, name[32];

  if (!m || (!K->text[K_FORCE] && !K->text[K_CCOST]))
    return 0;
  if (K->text[K_CNAMES]) {
    s->line = K->lines[K_CNAMES];
    if ((k = SplitList(K->text[K_CNAMES], K->cols[K_CNAMES], &items, &c)) < 0)
      return HS_ENOMEM;
    ret = EmptyEntry(s, K->cols[K_CNAMES], "control_names", "one name per control, separated by commas", k, items, c);
    if (!ret && k != m)
      ret = Fail(s, K->cols[K_CNAMES], "control_names: expected %d names, found %d", m, k);
    for (int j = 0; !ret && j < m; j++)
      ret = Name(s, o, items[j], c[j], o->uvar + j, "control_names");
    free(items), free(c);
  } else
    for (int j = 0; !ret && j < m; j++) {
      snprintf(name, sizeof name, m == 1 ? "u" : "u%d", j + 1);
      s->line = K->lines[K->text[K_FORCE] ? K_FORCE : K_CCOST];
      ret     = Name(s, o, name, 1, o->uvar + j, "the control names (control_names: to choose others)");
    }
  return ret;
}

/* The force f(q, u) (n entries) and the control cost c(u, q) (0 without 'control_cost') and
 * their derivatives to order 2 in (q, u): programs P_CTRL + k of [f, c], [grad f, grad c], [Hess f, Hess c]
 * (cumulative), p->ctrl. */
static int OcpBuildControls(Src *s, Ocp *o, const Keys *K, HsProblem *p)
{
  int n = o->n, m = o->mu, w = n + m, nf = n + 1, *nd, ret = 0;

  if (!m || (!K->text[K_FORCE] && !K->text[K_CCOST]))
    return 0;
  if (!(nd = malloc(sizeof(int) * (size_t)(nf * (1 + w + w * w)))))
    return HS_ENOMEM;
  ret = OcpControlNodes(s, o, K, nd);
  for (int f = 0; !ret && f < nf; f++)
    p->ctrl_time_dependent |= HsExprDependsOn(o->ex, nd[f], o->tvar);
  if (!ret && o->T_free && p->ctrl_time_dependent) {
    s->line = K->lines[K_FORCE];
    ret     = Fail(s, K->cols[K_FORCE],
                   "force or control_cost: depends on the time t, but the final time is free: a "
                       "free T needs an autonomous problem (docs/free-final-time.md)");
  }
  for (int f = 0; !ret && f < nf; f++)
    for (int i = 0; !ret && i < w; i++) {
      int *g = nd + nf + f * w, *H = nd + nf * (1 + w) + f * w * w, vi = i < n ? i : o->uvar + i - n;
      if ((g[i] = HsExprDiff(o->ex, nd[f], vi)) < 0)
        ret = HS_ENOMEM;
      for (int j = 0; !ret && j <= i; j++)
        if ((H[i * w + j] = H[j * w + i] = HsExprDiff(o->ex, g[j], vi)) < 0)
          ret = HS_ENOMEM;
    }
  for (int r = 0; !ret && r < 3; r++)
    if (Program(o, r == 0 ? nf : r == 1 ? nf * (1 + w) : nf * (1 + w + w * w), nd, &o->prog[P_CTRL + r]))
      ret = HS_ENOMEM;
  free(nd);
  if (!ret)
    p->ctrl = OcpCtrl;
  return ret;
}

/* 1 if every second derivative of node in the coordinates is constant (node is at most quadratic in q); -1 without
 * memory. */
static int Quadratic(Ocp *o, int node)
{
  for (int l = 0; l < o->n; l++) {
    int d = HsExprDiff(o->ex, node, l);
    if (d < 0)
      return -1;
    for (int r = l; r < o->n; r++) {
      int e = HsExprDiff(o->ex, d, r);
      if (e < 0)
        return -1;
      if (HsExprDependsOnFast(o->ex, e))
        return 0;
    }
  }
  return 1;
}

/* The extended class's end at rest (docs/constrained.md, "Rest ends and conserved quantities"): every terminal
 * momentum fixed at 0 and some coordinate free. */
static int OcpRestEnd(const Ocp *o, const HsProblem *p, const char *ext)
{
  int rest = ext != NULL, qfree = 0;
  for (int i = 0; i < o->n; i++)
    rest &= p->xT_fixed[o->n + i] && p->xT[o->n + i] == 0, qfree |= !p->xT_fixed[i];
  return rest && qfree;
}

/* What of a constrained problem lies outside the class the conserving scheme covers exactly
 * (docs/constrained.md): a mass matrix that depends on q, a potential that is not linear in q, a B(q) that
 * is not affine, a running cost, a free T, a pattern of free terminal components the end conditions do not cover, or
 * free components or a terminal cost in the extended class; NULL if none. */
/* The extended class's reason when B(q) alone lies outside the exact class (HsProblem.cons_ext_bq). */
static const char OcpExtBq[] = "a B(q) that is not affine in q";

static const char *OcpConstrainedClass(Ocp *o, const Keys *K, const HsProblem *p, int nc, int vnode, int *key,
                                       const char **ext)
{
  int lin = 1;
  for (int l = 0; l < o->n && lin > 0; l++) {
    int d = HsExprDiff(o->ex, vnode, l);
    lin   = d < 0 ? -1 : !HsExprDependsOnFast(o->ex, d);
  }
  if (lin < 0)
    return *key = K_V, "out of memory";
  if (!lin && !*ext)
    *ext = "a potential that is not linear in q";
  for (int e = 0; o->Bq && e < o->n * p->m; e++)
    for (int l = 0; l < o->n; l++) {
      int d = HsExprDiff(o->ex, o->Bnode[e], l);
      if (d < 0)
        return *key = K_B, "out of memory";
      if (HsExprDependsOnFast(o->ex, d) && !*ext)
        *ext = OcpExtBq;
    }
  int qfix = 0, pfix = 0, n = o->n;
  for (int i = 0; i < n; i++)
    qfix += p->xT_fixed[i], pfix += p->xT_fixed[n + i];
  if (pfix && pfix < n)
    return *key = K_XT,
           "momenta fixed in part (fix all terminal momenta, their normal part then free by the natural end "
           "condition, or none)";
  int rest = OcpRestEnd(o, p, *ext); /* its count: OcpBuildConstraints */
  if (pfix && qfix < n && !rest)
    return *key = K_XT, "free terminal coordinates with fixed momenta (the momenta's fixed tangential part would move "
                        "with the coordinates: free the momenta too; in the extended class, momenta fixed at 0 are "
                        "taken)";
  if (qfix < n && qfix + nc > n && !rest)
    return *key = K_XT, "more fixed terminal coordinates and constraints than coordinates";
  if ((pfix < n || K->text[K_PHI]) && *ext)
    return *key = pfix < n ? K_XT : K_PHI, "free terminal components or a terminal cost outside the exact class (the "
                                           "extended scheme's end condition fixes every momentum, and every "
                                           "coordinate unless the momenta are 0)";
  return K->text[K_ELL]                       ? (*key = K_ELL, "a running cost (the cost is 1/2 u^T R u)")
         : o->T_free                          ? (*key = K_T, "a free final time")
         : K->text[K_UMIN] || K->text[K_UMAX] ? (*key = K->text[K_UMIN] ? K_UMIN : K_UMAX, "control bounds")
                                              : NULL;
}

/* 'constraints': nc expressions in the coordinates and parameters, each quadratic in q, with G and the
 * Hessians derived (program P_CONS, OcpConstraints); the problem must lie in the exact class
 * (OcpConstrainedClass). At most HS_OCP_MAX_COORDINATES_MASS coordinates (the Hessians: nc n^2 entries). */
/* The first of M's entries, V, B's entries and the constraints that uses abs, sign, step, min or max of the
 * coordinates (HsExprNonsmooth): its key (*key) and the constraint's index (*which, -1 for the others); 0 if none,
 * -1 without memory. The derivatives of these are piecewise (sign's and step's 0), so the class tests on the
 * derivatives cannot see their kinks, and the conserving schemes need smooth data. */
static int OcpNonsmooth(Ocp *o, const Keys *K, int m, const int *node, const int *cons, int nc, int *key, int *which)
{
  int r = 0, n = o->n;
  *which = -1;
  for (int e = 0; e < n * n && !r; e++)
    if ((r = HsExprNonsmooth(o->ex, node[e])))
      *key = K->text[K_MASS] ? K_MASS : K_KIN;
  if (!r && (r = HsExprNonsmooth(o->ex, node[n * n])))
    *key = K_V;
  for (int e = 0; e < n * m && !r; e++)
    if ((r = HsExprNonsmooth(o->ex, o->Bnode[e])))
      *key = K_B;
  for (int i = 0; i < nc && !r; i++)
    if ((r = HsExprNonsmooth(o->ex, cons[i])))
      *key = K_CONS, *which = i;
  return r;
}

/* Some terminal coordinates free: each constraint must move one (one of only fixed ones is implied by xT or violated,
 * and its end rows dependent: a singular Jacobian) — except at the extended class's rest end (OcpRestEnd), whose end
 * rows leave such constraints out (o->cons_moves, HsProblem.cons_end_moves); there the constraints must be quadratic
 * (the end rows' Hessian terms) and the fixed coordinates and the moving constraints at most n. */
static int OcpEndMoves(Src *s, Ocp *o, const Keys *K, HsProblem *p, const int *nd, int nc, const char *ext)
{
  int n = o->n, rest = OcpRestEnd(o, p, ext), count = 0, quad = 1;

  if (rest && !(o->cons_moves = calloc((size_t)nc, sizeof(int))))
    return HS_ENOMEM;
  for (int l = 0; l < n; l++)
    count += p->xT_fixed[l];
  for (int i = 0, free_q = 0; i < nc; i++) {
    int moves = 0;
    for (int l = 0; l < n; l++)
      free_q |= !p->xT_fixed[l], moves |= !p->xT_fixed[l] && HsExprDependsOn(o->ex, nd[i], l);
    if (rest) {
      int qd = Quadratic(o, nd[i]);
      if (qd < 0)
        return HS_ENOMEM;
      o->cons_moves[i] = moves, count += moves, quad &= qd;
    } else if (free_q && !moves) {
      s->line = K->lines[K_XT];
      return Fail(s, K->cols[K_XT],
                  "xT: constraint %d involves only fixed terminal coordinates: it is implied by them "
                  "or violated, and the end conditions are dependent; leave one of its coordinates free or fix all "
                  "coordinates",
                  i + 1);
    }
  }
  s->line = K->lines[K_XT];
  if (rest && !quad)
    return Fail(s, K->cols[K_XT],
                "xT: free terminal coordinates at rest in the extended class need quadratic "
                "constraints (docs/constrained.md)");
  if (rest && count > n)
    return Fail(s, K->cols[K_XT],
                "xT: %d fixed terminal coordinates and constraints that move a free one, more than "
                "the %d coordinates",
                count, n);
  if (rest)
    p->cons_end_moves = o->cons_moves;
  return 0;
}

/* 'conserved: NAME, ...': invariants ('invariant' lines) linear in p that the extended scheme conserves exactly; the
 * end condition at rest leaves their directions grad_p I(q_N) free (docs/constrained.md, "Rest ends and conserved
 * quantities"). Program P_CINV: grad_p I_l (n each), then its q-derivatives (n^2 each). */
static int OcpBuildConserved(Src *s, Ocp *o, const Keys *K, HsProblem *p, const char *ext)
{
  char **items = NULL, *t = NULL;
  int   *c = NULL, *nd = NULL, n = o->n, k, ret = 0, pfix = 0;

  if (!K->text[K_CINV])
    return 0;
  s->line = K->lines[K_CINV];
  for (int i = 0; i < n; i++)
    pfix += p->xT_fixed[n + i];
  if (!ext || pfix < n)
    return Fail(s, K->cols[K_CINV],
                "conserved: only for a constrained problem in the extended class with every "
                "terminal momentum fixed (docs/constrained.md)");
  if (!(t = strdup(K->text[K_CINV])) || (k = SplitList(t, K->cols[K_CINV], &items, &c)) < 0 ||
      !(nd = malloc(sizeof(int) * (size_t)(k * n + k * n * n))) ||
      !(o->cinv_name = malloc(sizeof(char *) * (size_t)(k ? k : 1)))) {
    free(t), free(items), free(c);
    return HS_ENOMEM;
  }
  ret = EmptyEntry(s, K->cols[K_CINV], "conserved", "names of the file's invariants separated by commas", k, items, c);
  for (int l = 0; !ret && l < k; l++) {
    int v = 0;
    while (v < o->ninv && strcmp(o->inv_name[v], items[l]))
      v++;
    if (v == o->ninv) {
      ret = Fail(s, c[l], "conserved: '%s' is not an invariant of the file ('invariant NAME: expr')", items[l]);
      break;
    }
    for (int j = 0; j < l && !ret; j++) /* round 18: a name given twice made the end condition singular (its
                                          direction counted twice), and Newton failed with DIVERGED_LINEAR_SOLVE */
      if (!strcmp(items[j], items[l]))
        ret = Fail(s, c[l], "conserved: '%s' is named twice (the directions grad_p I must be independent)", items[l]);
    if (!ret && l == n)
      ret = Fail(s, c[l], "conserved: %d names, more than the %d momenta (the directions grad_p I must be independent)",
                 k, n);
    if (ret)
      break;
    o->cinv_name[l] = o->inv_name[v];
    for (int r = 0; !ret && r < n; r++) {
      int g = nd[l * n + r] = HsExprDiff(o->ex, o->inv_node[v], n + r);
      for (int i = 0; g >= 0 && i < n; i++)
        if ((nd[k * n + (l * n + r) * n + i] = HsExprDiff(o->ex, g, i)) < 0 || HsExprDependsOn(o->ex, g, n + i))
          ret = nd[k * n + (l * n + r) * n + i] < 0
                    ? HS_ENOMEM
                    : Fail(s, c[l], "conserved: '%s' is not linear in the momenta", items[l]);
      if (g < 0)
        ret = HS_ENOMEM;
    }
  }
  if (!ret && Program(o, k * n + k * n * n, nd, &o->prog[P_CINV]))
    ret = HS_ENOMEM;
  if (!ret)
    o->ncinv = p->ncinv = k, p->cinv_grad = OcpConservedGrad, p->cinv_names = o->cinv_name;
  free(t), free(items), free(c), free(nd);
  return ret;
}

/* Program P_CONS3 and p->Phi3 from the constraints' Hessian nodes hn[(i n + l) n + r]: the nc n^3 third derivatives,
 * each formed once for sorted (l, r, s) and shared by its permutations. Only for constraints that are not all
 * quadratic (Phi3 NULL means zero); 0, or HS_ENOMEM. */
static int OcpBuildCons3(Ocp *o, int nc, const int *hn, HsProblem *p)
{
  int n = o->n, *nd = malloc(sizeof(int) * ((size_t)nc * n * n * n)), ret = 0;

  if (!nd)
    return HS_ENOMEM;
  for (int i = 0; !ret && i < nc; i++)
    for (int l = 0; !ret && l < n; l++)
      for (int r = l; !ret && r < n; r++)
        for (int t = r; t < n; t++) {
          int v = HsExprDiff(o->ex, hn[(i * n + l) * n + r], t), pm[6][3] = {{l, r, t}, {l, t, r}, {r, l, t},
                                                                              {r, t, l}, {t, l, r}, {t, r, l}};
          if (v < 0) {
            ret = HS_ENOMEM;
            break;
          }
          for (int k = 0; k < 6; k++)
            nd[((i * n + pm[k][0]) * n + pm[k][1]) * n + pm[k][2]] = v;
        }
  if (!ret && Program(o, nc * n * n * n, nd, &o->prog[P_CONS3]))
    ret = HS_ENOMEM;
  if (!ret)
    HsExprProgramSetSlow(o->prog[P_CONS3], o->vars), p->Phi3 = OcpConstraints3;
  free(nd);
  return ret;
}

static int OcpBuildConstraints(Src *s, Ocp *o, const Keys *K, HsProblem *p, int const_mass, const int *node)
{
  int         vnode = node[o->n * o->n], ns, which;
  char      **items = NULL, *t;
  int        *c = NULL, n = o->n, nc, *nd = NULL, ret = 0, key, cubic = 0;
  const char *why, *ext = NULL; /* what lies outside the exact class: the extended scheme then applies */

  if (!K->text[K_CONS])
    return OcpBuildConserved(s, o, K, p, NULL); /* refused without constraints */
  s->line = K->lines[K_CONS];
  if (n > HS_OCP_MAX_COORDINATES_MASS)
    return Fail(s, K->cols[K_CONS], "constraints: at most %d coordinates (here %d)", HS_OCP_MAX_COORDINATES_MASS, n);
  if (!(t = strdup(K->text[K_CONS])) || (nc = SplitList(t, K->cols[K_CONS], &items, &c)) < 0) {
    free(t);
    return HS_ENOMEM;
  }
  if (nc >= n) { /* before the n^2 nc Hessians are sized */
    ret = Fail(s, K->cols[K_CONS], "constraints: %d constraints on %d coordinates leave no motion", nc, n);
    free(t), free(items), free(c);
    return ret;
  }
  if (!(nd = malloc(sizeof(int) * ((size_t)nc + (size_t)nc * n + (size_t)nc * n * n)))) {
    free(t), free(items), free(c);
    return HS_ENOMEM;
  }
  for (int i = 0; !ret && i < nc; i++) {
    char what[64];
    snprintf(what, sizeof what, "constraint %d", i + 1);
    ret = MakeExpr(s, o, items[i], c[i], what, ALLOW_Q, &nd[i]);
    if (!ret && !HsExprDependsOnFast(o->ex, nd[i]))
      ret = Fail(s, c[i], "constraint %d: '%s' does not depend on the coordinates", i + 1, items[i]);
    if (!ret && Quadratic(o, nd[i]) == 0 && (cubic = 1) && !ext)
      ext = "constraints that are not quadratic in q";
    for (int l = 0; !ret && l < n; l++)
      for (int r = 0; r < n; r++)
        nd[nc + nc * n + (i * n + l) * n + r] = HsExprDiff(o->ex, nd[nc + i * n + l] = HsExprDiff(o->ex, nd[i], l), r);
  }
  if (!ret && (ns = OcpNonsmooth(o, K, p->m, node, nd, nc, &key, &which))) {
    s->line = K->lines[key];
    ret     = ns < 0 ? HS_ENOMEM
                     : Fail(s, which >= 0 ? c[which] : K->cols[key],
                            "%s%.0d: uses abs, sign, step, min or max of the "
                                "coordinates: a constrained problem's mass, potential, B and constraints must be smooth (their "
                                "derivatives are taken piecewise, so the schemes' conservation would not hold)",
                        which >= 0 ? "constraint " : keys[key], which >= 0 ? which + 1 : 0);
  }
  if (!ret && !const_mass)
    ext = "a mass matrix that depends on q";
  if (!ret && (why = OcpConstrainedClass(o, K, p, nc, vnode, &key, &ext))) {
    s->line = K->lines[key];
    ret     = Fail(s, K->cols[key],
                   "%s: a constrained problem (constraints, line %d) cannot have %s yet "
                       "(docs/constrained.md)",
                   keys[key], K->lines[K_CONS], why);
  }
  if (!ret)
    ret = OcpEndMoves(s, o, K, p, nd, nc, ext);
  if (!ret && Program(o, nc + nc * n + nc * n * n, nd, &o->prog[P_CONS]))
    ret = HS_ENOMEM;
  if (!ret)
    HsExprProgramSetSlow(o->prog[P_CONS], o->vars);
  if (!ret && cubic)
    ret = OcpBuildCons3(o, nc, nd + nc + nc * n, p);
  if (!ret)
    ret = OcpBuildConserved(s, o, K, p, ext);
  if (!ret) {
    o->nc = p->nc = nc, p->Phi = OcpConstraints, p->cons_extended = ext, p->cons_ext_bq = ext == OcpExtBq;
    snprintf(o->ss, sizeof o->ss, "%s", K->ss[0] ? K->ss : "bem");
    snprintf(o->cs, sizeof o->cs, "%s", K->cs[0] ? K->cs : "constrained");
  }
  free(t), free(items), free(c), free(nd);
  return ret;
}

/* A free T and terminal values that depend on it: the program of dxT/dT and d2xT/dT2 (OcpXTT). */
static int OcpBuildXTT(Ocp *o, HsProblem *p)
{
  int d = 2 * o->n, *nd, dep = 0, ret = 0;

  for (int i = 0; i < d; i++)
    dep |= HsExprDependsOn(o->ex, o->xTnode[i], o->Tvar);
  if (!o->T_free || !dep)
    return 0;
  if (!(nd = malloc(sizeof(int) * (size_t)(2 * d))))
    return HS_ENOMEM;
  for (int i = 0; i < d && !ret; i++)
    if ((nd[i] = HsExprDiff(o->ex, o->xTnode[i], o->Tvar)) < 0 || (nd[d + i] = HsExprDiff(o->ex, nd[i], o->Tvar)) < 0)
      ret = HS_ENOMEM;
  if (!ret && Program(o, 2 * d, nd, &o->prog[P_XTT]))
    ret = HS_ENOMEM;
  free(nd);
  if (!ret)
    p->xT_T = OcpXTT;
  return ret;
}

/* A free T in M, V (node: M's n^2 entries, then V), B, R, the running cost or x0
 * (docs/free-final-time.md): the programs of their explicit T-derivatives, P_DTM (M_T, its
 * q-derivatives, V_T, its gradient; OcpMechT), P_DTELL (OcpEllT), P_DTBR (OcpBRT), P_DTX0 (x0_T). */
static int OcpBuildDataT(Ocp *o, HsProblem *p, const int *node)
{
  int  n = o->n, nn = n * n, nBR = o->nB + o->nR, nm = nn + nn * n + 1 + n, dep[4] = {0, 0, 0, 0}, ret = 0, k = 0;
  int *nd, *x0n = o->cstnode + nBR;

  if (!o->T_free)
    return 0;
  for (int e = 0; e <= nn; e++)
    dep[0] |= HsExprDependsOn(o->ex, node[e], o->Tvar);
  dep[1] = o->ellnode >= 0 && HsExprDependsOn(o->ex, o->ellnode, o->Tvar);
  for (int e = 0; e < nBR; e++)
    dep[2] |= HsExprDependsOn(o->ex, o->cstnode[e], o->Tvar);
  for (int i = 0; i < 2 * n; i++)
    dep[3] |= HsExprDependsOn(o->ex, x0n[i], o->Tvar);
  if (!(dep[0] || dep[1] || dep[2] || dep[3]))
    return 0;
  nd       = malloc(sizeof(int) * (size_t)(nm + 1 + nBR + 2 * n));
  o->dtbuf = malloc(sizeof(double) * (size_t)(nm + nBR + 2 * n));
  if (!nd || !o->dtbuf) {
    free(nd);
    return HS_ENOMEM;
  }
  for (int e = 0; e < nn; e++) /* M_T, then d(M_T)/dq_i */
    nd[k++] = HsExprDiff(o->ex, node[e], o->Tvar);
  for (int i = 0; i < n; i++)
    for (int e = 0; e < nn; e++)
      nd[k++] = nd[e] < 0 ? -1 : HsExprDiff(o->ex, nd[e], i);
  nd[k++] = HsExprDiff(o->ex, node[nn], o->Tvar); /* V_T and its gradient */
  for (int i = 0; i < n; i++)
    nd[k++] = nd[nm - n - 1] < 0 ? -1 : HsExprDiff(o->ex, nd[nm - n - 1], i);
  nd[k++] = o->ellnode >= 0 ? HsExprDiff(o->ex, o->ellnode, o->Tvar) : HsExprConstant(o->ex, 0);
  for (int e = 0; e < nBR + 2 * n; e++)
    nd[k++] = HsExprDiff(o->ex, o->cstnode[e], o->Tvar);
  for (int e = 0; e < k; e++)
    if (nd[e] < 0)
      ret = HS_ENOMEM;
  if (!ret &&
      (Program(o, nm, nd, &o->prog[P_DTM]) || Program(o, 1, nd + nm, &o->prog[P_DTELL]) ||
       Program(o, nBR, nd + nm + 1, &o->prog[P_DTBR]) || Program(o, 2 * n, nd + nm + 1 + nBR, &o->prog[P_DTX0])))
    ret = HS_ENOMEM;
  free(nd);
  if (ret)
    return ret;
  o->data_T = p->data_T = 1, o->mech_T = dep[0];
  if (dep[1])
    p->ell_T = OcpEllT;
  if (dep[2])
    p->BR_T = OcpBRT;
  if (dep[3])
    p->x0_T = o->dtbuf + nm + nBR;
  return 0;
}

/* Programs of the derived parameters (OcpDerived). */
static int OcpBuildDerived(Ocp *o)
{
  for (int i = 0; i < o->npar; i++)
    if (o->pderived[i] && Program(o, 1, &o->pnode[i], &o->pprog[i]))
      return HS_ENOMEM;
  return 0;
}

/* The mechanical system into the problem (which then owns *op), its parameters, the constants at
 * the current parameters, the default schemes; M must be positive definite at x0. */
static int OcpInstall(Src *s, Ocp **op, const Keys *K, HsProblem *p, int const_mass)
{
  Ocp         *o    = *op;
  HsMechanical mech = {o->n, OcpMass, OcpPotential, o, 1, const_mass, o->mech_T ? OcpMechT : NULL, OcpGradBound};
  int          mkey = K->text[K_MASS] ? K_MASS : K_KIN;

  if (HsProblemSetMechanical(p, &mech, OcpDestroy))
    return HS_ENOMEM;
  *op            = NULL; /* owned by the problem now */
  p->N           = K->N > 0 ? K->N : 20;
  p->update      = OcpUpdate;
  p->coord_names = (const char *const *)o->names; /* q_1..q_n come first */
  if (o->bounded &&
      (!(p->u_min = malloc(sizeof(double) * (size_t)p->m)) || !(p->u_max = malloc(sizeof(double) * (size_t)p->m))))
    return HS_ENOMEM;
  for (int i = 0; i < o->npar; i++)
    if (HsProblemAddParam(p, o->names[o->par + i], o->phelp[i] ? o->phelp[i] : "file parameter", &o->vars[o->par + i],
                          o->pmin[i], o->pmax[i]))
      return HS_ENOMEM;
  if (o->n == 1 && const_mass) /* 1 DOF with a constant mass: the Greenspan scheme applies */
    p->sep.available = 1, p->sep.V = OcpPotential1;
  if (OcpUpdate(p)) { /* B, R, x0, xT, T, the bounds, M(x0) positive definite, the Greenspan mass */
    if (!strncmp(p->why, "u_min", 5)) {
      s->line = K->lines[K->text[K_UMIN] ? K_UMIN : K_UMAX];
      return Fail(s, 1, "%s", p->why);
    }
    if (strstr(p->why, "final time") || strstr(p->why, "T_min") || strstr(p->why, "horizon")) {
      s->line = K->lines[K->text[K_TMIN] ? K_TMIN : K->text[K_TMAX] ? K_TMAX : K_T];
      return Fail(s, 1, "%s", p->why);
    }
    if (!strstr(p->why, "positive definite")) { /* a constant that is not finite, a derived parameter */
      s->line = 0;
      return Fail(s, 0, "%s", p->why);
    }
    s->line = K->lines[mkey];
    return Fail(s, K->cols[mkey], "%s: M(q) is not positive definite at the initial state x0", keys[mkey]);
  }
  snprintf(o->ss, sizeof o->ss, "%s", K->ss[0] ? K->ss : (p->sep.available ? "greenspan" : "gonzalez"));
  snprintf(o->cs, sizeof o->cs, "%s", K->cs[0] ? K->cs : (p->sep.available ? "conserving_1dof" : "conserving"));
  p->default_state_scheme   = o->ss;
  p->default_costate_scheme = o->cs;
  return 0;
}

/*@ HsProblemReadFile - the bytes of a problem file, for HsProblemCreateFromText (so that one MPI
    rank can read the file and send the bytes to the others).

  Not collective. A problem file is text in a regular file (HsFileOpenRegular: a directory, a FIFO, a device such as
  /dev/zero are refused before anything is read), at most HS_OCP_MAX_BYTES (16 MiB); a NUL byte (at
  "file:line:column") is an error.

  Input: path; msg, msglen - room for a message.
  Output: text - the bytes with a NUL appended (free() it); len - their number.

  Returns HS_SUCCESS, HS_EPARSE (see msg) or HS_ENOMEM.
@*/
int HsProblemReadFile(const char *path, char **text, size_t *len, char *msg, int msglen)
{
  FILE  *fp = HsFileOpenRegular(path, "problem file", HS_OCP_MAX_BYTES, msg, (size_t)msglen);
  char  *buf;
  size_t n = 0, cap = 4096;

  *text = NULL, *len = 0;
  if (!fp)
    return HS_EPARSE;
  if (!(buf = malloc(cap + 1))) {
    fclose(fp);
    return HS_ENOMEM;
  }
  for (size_t r; (r = fread(buf + n, 1, cap - n, fp)) > 0;) {
    n += r;
    if (n == cap) {
      char *b = cap >= HS_OCP_MAX_BYTES ? NULL : realloc(buf, 2 * cap + 1);
      if (!b) {
        snprintf(msg, (size_t)msglen,
                 cap >= HS_OCP_MAX_BYTES ? "%s: larger than %d MiB: not a problem file"
                                         : "%s: out of memory reading the file",
                 path, HS_OCP_MAX_BYTES >> 20);
        free(buf), fclose(fp);
        return cap >= HS_OCP_MAX_BYTES ? HS_EPARSE : HS_ENOMEM;
      }
      buf = b, cap *= 2;
    }
  }
  if (ferror(fp)) {
    snprintf(msg, (size_t)msglen, "%s: cannot read problem file: %s", path, strerror(errno));
    free(buf), fclose(fp);
    return HS_EPARSE;
  }
  fclose(fp);
  buf[n] = 0;
  for (size_t i = 0, line = 1, col = 1; i < n; i++, col++) {
    if (!buf[i]) {
      snprintf(msg, (size_t)msglen, "%s:%zu:%zu: a NUL byte: a problem file is text", path, line, col);
      free(buf);
      return HS_EPARSE;
    }
    if (buf[i] == '\n')
      line++, col = 0;
  }
  *text = buf, *len = n;
  return HS_SUCCESS;
}

/* The bytes of a problem file before they are read: a NUL byte, or a CR that ends no CRLF (old Mac line ends read as
 * one line, or text overprinted on a terminal), is an error; a UTF-8 byte-order mark (Windows editors) is skipped. */
static int CheckText(Src *s, const char **text, size_t *len)
{
  const char *t = *text, *nul = memchr(t, 0, *len);

  if (nul) {
    s->line = 1;
    for (const char *c = t; c < nul; c++)
      s->line += *c == '\n';
    return Fail(s, 1, "a NUL byte: a problem file is text");
  }
  if (*len >= 3 && !memcmp(t, "\xef\xbb\xbf", 3))
    *text += 3, *len -= 3, t += 3;
  for (size_t i = 0; i < *len; i++)
    if (t[i] == '\r' && (i + 1 == *len || t[i + 1] != '\n')) {
      s->line = 1;
      for (size_t j = 0; j < i; j++)
        s->line += t[j] == '\n';
      return Fail(s, 1, "a carriage return that ends no CRLF line: lines end in LF or CRLF");
    }
  return 0;
}

/* The prescan of fp (OcpPrescan: n, the parameters, mu) and its limits: HS_EPARSE with a message in msg if a count is
 * beyond them (n: the potential's third derivatives have n^3 entries; each name is checked against the earlier ones,
 * and every parameter widens every node's dependency set). */
static int OcpPrescanLimits(FILE *fp, const char *path, int *n, int *npar, int *mu, char *msg, int msglen)
{
  int nlet;

  OcpPrescan(fp, n, npar, &nlet, mu);
  if (*n > HS_OCP_MAX_COORDINATES)
    snprintf(msg, (size_t)msglen,
             "%s: coordinates: %d names, at most %d (the potential's third derivatives have n^3 "
             "entries)",
             path, *n, HS_OCP_MAX_COORDINATES);
  else if (*npar > HS_OCP_MAX_NAMES || nlet > HS_OCP_MAX_NAMES)
    snprintf(msg, (size_t)msglen, "%s: %d '%s' lines, at most %d", path, *npar > HS_OCP_MAX_NAMES ? *npar : nlet,
             *npar > HS_OCP_MAX_NAMES ? "param" : "let", HS_OCP_MAX_NAMES);
  else
    return HS_SUCCESS;
  return HS_EPARSE;
}

/* FNV-1a of a problem file's text as given (the same bytes on every rank): HsProblem.text_hash, never 0. */
static unsigned long long TextHash(const char *text, size_t len)
{
  unsigned long long h = 1469598103934665603ULL;

  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
  return h ? h : 1;
}

/*@ HsProblemCreateFromText - a problem from the bytes of a problem file (docs/problem-format.md),
    as HsProblemCreateFromFile does.

  Not collective. Input: path - the file's name, for messages and as the problem's name if the file
  has no 'problem:' key; text, len - the bytes (need not end in NUL; a NUL byte is an error);
  msg, msglen - room for a message.
  Output: prob - the problem; on failure NULL and msg says "file:line:column: what is wrong".

  Returns HS_SUCCESS, HS_EPARSE or HS_ENOMEM.
@*/
int HsProblemCreateFromText(const char *path, const char *text, size_t len, HsProblem **prob, char *msg, int msglen)
{
  FILE      *fp;
  Src        s = {path, 0, msg, msglen};
  Keys       K;
  Ocp       *o    = NULL;
  HsProblem *p    = NULL;
  int       *node = NULL, kin = -1, n, npar, mu, const_mass = 0, ret, over;

  *prob = NULL;
  memset(&K, 0, sizeof K);
  if ((ret = CheckText(&s, &text, &len)))
    return ret;
  if (!len) {
    snprintf(msg, (size_t)msglen, "%s: the problem file is empty", path);
    return HS_EPARSE;
  }
  if (HsBodiesPresent(text, len)) /* rigid bodies and joints: expanded into the keys below (problems/bodies.c) */
    return HsBodiesCreate(path, text, len, prob, msg, msglen);
  if (!(fp = fmemopen((void *)text, len, "r")))
    return HS_ENOMEM;
  if ((ret = OcpPrescanLimits(fp, path, &n, &npar, &mu, msg, msglen))) {
    fclose(fp);
    return ret;
  }
  ret = OcpNew(n, npar, mu, &o);
  if (!ret)
    ret = OcpReadKeys(fp, &s, o, &K);
  fclose(fp);
  if (!ret)
    ret = OcpControlKeys(&s, &K);
  if (!ret)
    ret = OcpCheckMissing(&s, &K);
  if (!ret)
    ret = OcpControlNames(&s, o, &K);
  if (!ret &&
      (!(node = calloc((size_t)(n * n + 1), sizeof(int))) || HsProblemAllocate(K.name[0] ? K.name : path, n, K.m, &p)))
    ret = HS_ENOMEM;
  if (!ret)
    ret = OcpBuildT(&s, o, &K, p);
  if (!ret)
    ret = OcpBuildMass(&s, o, &K, node, &kin);
  if (!ret)
    ret = OcpBuildConstants(&s, o, &K, p);
  if (!ret)
    ret = OcpCheckAtX0(&s, o, &K, node, kin);
  if (!ret)
    ret = OcpBuildPrograms(o, node, &const_mass);
  if (ret == HS_ERANGE) {
    s.line = K.lines[K.text[K_MASS] ? K_MASS : K_KIN];
    ret = Fail(&s, 1, "M(q) depends on q: its third derivatives have n^5 entries, so at most %d coordinates (here %d)",
               HS_OCP_MAX_COORDINATES_MASS, n);
  }
  if (!ret)
    ret = OcpBuildCosts(&s, o, &K, p);
  if (!ret)
    ret = OcpBuildDerived(o);
  if (!ret)
    ret = OcpBuildBq(&s, o, &K, p);
  if (!ret)
    ret = OcpBuildControls(&s, o, &K, p);
  if (!ret)
    ret = OcpBuildXTT(o, p);
  if (!ret)
    ret = OcpBuildDataT(o, p, node);
  if (!ret)
    ret = OcpInstall(&s, &o, &K, p, const_mass);
  if (!ret)
    p->const_mass = const_mass;
  if (!ret) /* the problem owns the Ocp now */
    ret = OcpBuildConstraints(&s, HsProblemGetUserContext(p), &K, p, const_mass, node);
  if (!ret && p->nc && HsProblemCheckConstraints(p, HS_CONSTRAINT_TOL, p->why, sizeof p->why)) {
    s.line = K.lines[strstr(p->why, "x0") ? K_X0 : K_XT];
    ret    = Fail(&s, 1, "%s", p->why);
  }
  if (!ret)
    ret = OcpBuildFrames(&s, HsProblemGetUserContext(p), p);
  for (int k = 0; k < K_COUNT; k++)
    free(K.text[k]);
  free(node);
  {
    Ocp *oo = o ? o : p && p->E.f ? HsProblemGetUserContext(p) : NULL;
    over    = ret == HS_ENOMEM && oo && HsExprOverBudget(oo->ex);
  }
  OcpDestroy(o); /* NULL once the problem owns it */
  if (ret) {
    if (ret == HS_ENOMEM && !over)
      snprintf(msg, (size_t)msglen, "%s: out of memory", path);
    else if (over)
      snprintf(msg, (size_t)msglen,
               "%s: the expressions and their derivatives need more than %llu GiB of expression "
               "graph (HS_EXPR_MAX_BYTES): too large a problem file (many coordinates with distinct third derivatives)",
               path, (unsigned long long)(HS_EXPR_MAX_BYTES >> 30));
    HsProblemDestroy(&p);
    return ret == HS_ENOMEM && !over ? HS_ENOMEM : HS_EPARSE;
  }
  p->text_hash = TextHash(text, len);
  *prob = p;
  return HS_SUCCESS;
}

/*@ HsProblemCreateFromFile - reads a problem file (.ocp, docs/problem-format.md): a mechanical
    system by its mass matrix (or kinetic energy) and potential, the costs, the boundary data, the
    horizon and named parameters (-p_NAME), with every derivative the schemes need derived
    symbolically (file head). HsProblemReadFile, then HsProblemCreateFromText.

  Not collective (the driver reads the file on one rank and sends the bytes to the others).

  Input: path; msg, msglen - room for a message.
  Output: prob - the problem (HsProblemDestroy frees it); on failure NULL, and msg says
          "file:line:column: what is wrong".

  Returns HS_SUCCESS, HS_EPARSE (the file cannot be opened or read as a problem; see msg) or HS_ENOMEM.
@*/
int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen)
{
  char  *text;
  size_t len;
  int    ret = HsProblemReadFile(path, &text, &len, msg, msglen);

  *prob = NULL;
  if (ret)
    return ret;
  ret = HsProblemCreateFromText(path, text, len, prob, msg, msglen);
  free(text);
  return ret;
}
