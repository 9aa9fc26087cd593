/* hamshoot: private definition of HsCons (costate/constrained.c, the closed-form scheme of the exact class, and
 * costate/constrainedext.c, the extended scheme). */
#ifndef HSCONSIMPL_H
#define HSCONSIMPL_H

#include "hsconstrained.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct HsCons_s {
  const HsProblem *prob;
  int              n, c, m, D, r; /* r = 2n + c, the rows of a group */
  double           h;
  double          *Minv, *Rinv;  /* n x n, m x m */
  double          *Phi, *G, *H;  /* nc, nc x n, nc x n x n at one point */
  double          *Phi0, *G0;    /* at a second point (the node's own q_k) */
  double          *B, *dB, *d2B; /* n x m, n m n, n m n n: B(q) and its derivatives at one point */
  double          *x, *g;        /* 2n each: a state and grad E there */
  double          *ua, *ub, *wa, *wb, *cB; /* m, m, n m, n m, n: the control-curvature term's pieces */
  double          *dcda, *dcdb, *dcdc;     /* n x n each: c_B's derivatives in a = lp_-, b = lp_+, the point c */
  double          *qa, *qb;                /* n each */
  double          *Ta, *Tb;                /* n x m each: row l = dB_l^T a, dB_l^T b */
  int              kkt;                     /* the direct transcription's KKT conditions instead (HsConsSetKKT) */
  double          *kmu[2];                  /* n x n each: NodeKKT's derivatives in the two intervals' lp */
  int              exact;                   /* the problem lies in the exact class (prob->cons_extended NULL) */
  HsDisc          *disc;                    /* the extended scheme's unconstrained part (HsConsSetDisc) */
  double          *ext;                     /* the extended scheme's scratch (constrainedext.c) */
  double          *w1;                      /* n: the node's control term (NodeResidualBase) */
  double          *tw;                      /* the free end's scratch (FreeEnd) */
  double          *pool;
};

/* dB_l (n x m) entry (i, j): dB[(i m + j) n + l]. */
static inline double HsConsDB(const HsCons *cs, const double *dB, int i, int j, int l)
{
  return dB[(i * cs->m + j) * cs->n + l];
}

/* What constrained.c's closed form shares with the direct NLP's pieces (consnlp.c): B and its derivatives at q, the
 * products dB_l^T v, grad E, an interval's midpoint. */
int  HsConsEvalB(HsCons *cs, const double *q, int second);
void HsConsDBt(const HsCons *cs, const double *v, double *T);
int  HsConsEvalGrad(HsCons *cs, const double *q, const double *p);
void HsConsMid(HsCons *cs, const double *z0, const double *z1);

/* The extended scheme (constrainedext.c): the equations of a problem outside the exact class. */
int  HsConsExtSetup(HsCons *cs);
int  HsConsExtInterval(HsCons *cs, const double *z0, const double *z1, double *F, double *J0, double *J1);
int  HsConsExtNode(HsCons *cs, int k, const double *zm, const double *z0, const double *zp, double *C, double *Jm,
                   double *J0, double *Jp);
int  HsConsExtTerminal(HsCons *cs, const double *zm, const double *zN, double *F, double *Jm, double *JN);
int  HsConsExtGbar(HsCons *cs, const double *a, const double *b, double *G);
/* gamma with G^T gamma nearest r (least squares; G = cs->G): constrained.c, for the guesses of both formulations. */
int  HsConsLeastSquaresForce(HsCons *cs, const double *r, double *gamma);

#endif
