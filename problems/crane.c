/* hamshoot: the gantry crane of thesis section 7.2 in generalized coordinates
 * (7.8), docs/theory.md section 4.4: q = (s, l, alpha) -- trolley position, rope
 * length, rope angle from the vertical. Redundant positions (s, beta = l/r,
 * x = s + l sin alpha, z = l cos alpha), z downward, kinetic energy from
 * diag(m_t, J, m, m):
 *
 *   M(q) = [[m_t + m, m sin a, m l cos a], [m sin a, J/r^2 + m, 0], [m l cos a, 0, m l^2]],
 *   V = -m g l cos a,  B = [[1, 0], [0, 1/r], [0, 0]] (F on s, torque on the winch), R = I,
 *   (m_t, J, m) = (10, 0.1, 100), r = 0.1, g = 9.81; (s, l, a): (0, 4, 0) -> (5, 1, 0),
 *   rest to rest, T = 3. Underactuated. Default N = 320: the thesis' N = 40 is too coarse (the winch
 *   torque zigzags, its extremals do not continue to finer grids, and IPOPT does not converge there).
 * (R is not stated in the thesis; R = I is this file's choice.)
 */
#include "hsmechanical.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double mt, J, m, r, g;
} Crane;

static int CraneMass(const double *q, double *M, double *dM, double *d2M, double *d3M, void *ctx)
{
  const Crane *c = ctx;
  const double l = q[1], sa = sin(q[2]), ca = cos(q[2]), m = c->m;

  if (M) {
    memset(M, 0, 9 * sizeof(double));
    M[0] = c->mt + m;
    M[1] = M[3] = m * sa;
    M[2] = M[6] = m * l * ca;
    M[4]        = c->J / (c->r * c->r) + m;
    M[8]        = m * l * l;
  }
  if (dM) {
    double *Ml = dM + 9, *Ma = dM + 18;
    memset(dM, 0, 27 * sizeof(double)); /* dM/ds = 0 */
    Ml[2] = Ml[6] = m * ca;
    Ml[8]         = 2 * m * l;
    Ma[1] = Ma[3] = m * ca;
    Ma[2] = Ma[6] = -m * l * sa;
  }
  if (d2M) {
    double *Mll = d2M + 4 * 9, *Mla = d2M + 5 * 9, *Mal = d2M + 7 * 9, *Maa = d2M + 8 * 9;
    memset(d2M, 0, 81 * sizeof(double));
    Mll[8] = 2 * m;
    Mla[2] = Mla[6] = -m * sa;
    memcpy(Mal, Mla, 9 * sizeof(double));
    Maa[1] = Maa[3] = -m * sa;
    Maa[2] = Maa[6] = -m * l * ca;
  }
  if (d3M) { /* d3M[(i*3+j)*3+k]: only (l,a,a) in any order and (a,a,a) are nonzero */
    const int laa[3] = {(1 * 3 + 2) * 3 + 2, (2 * 3 + 1) * 3 + 2, (2 * 3 + 2) * 3 + 1};
    double   *Maaa   = d3M + ((2 * 3 + 2) * 3 + 2) * 9;
    memset(d3M, 0, 243 * sizeof(double));
    for (int t = 0; t < 3; t++) {
      double *B = d3M + laa[t] * 9;
      B[2] = B[6] = -m * ca;
    }
    Maaa[1] = Maaa[3] = -m * ca;
    Maaa[2] = Maaa[6] = m * l * sa;
  }
  return 0;
}

static int CranePotential(const double *q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  const Crane *c  = ctx;
  const double mg = c->m * c->g, l = q[1], sa = sin(q[2]), ca = cos(q[2]);

  if (V)
    *V = -mg * l * ca;
  if (dV)
    dV[0] = 0, dV[1] = -mg * ca, dV[2] = mg * l * sa;
  if (d2V) {
    memset(d2V, 0, 9 * sizeof(double));
    d2V[5] = d2V[7] = mg * sa;
    d2V[8]          = mg * l * ca;
  }
  if (d3V) {
    memset(d3V, 0, 27 * sizeof(double));
    d3V[(1 * 3 + 2) * 3 + 2] = d3V[(2 * 3 + 1) * 3 + 2] = d3V[(2 * 3 + 2) * 3 + 1] = mg * ca;
    d3V[(2 * 3 + 2) * 3 + 2]                                                       = -mg * l * sa;
  }
  return 0;
}

static int CraneUpdate(HsProblem *p)
{
  const Crane *c = HsProblemGetUserContext(p);
  p->B[3]        = 1 / c->r; /* the winch torque acts on l through beta = l / r */
  return HS_SUCCESS;
}

/*@ HsProblemCreateCrane - the gantry crane (docs/theory.md section 4.4; data in the file head), a mechanical
    system with analytic third derivatives; parameters mt, J, m, r, g. Not collective. Returns
    HS_SUCCESS or HS_ENOMEM. @*/
int HsProblemCreateCrane(HsProblem **prob)
{
  HsProblem   *p;
  Crane       *c;
  HsMechanical mech = {0};
  int          ierr = HsProblemAllocate("crane", 3, 2, &p);

  if (ierr)
    return ierr;
  c = malloc(sizeof(*c));
  if (!c) {
    HsProblemDestroy(&p);
    return -1;
  }
  c->mt = 10, c->J = 0.1, c->m = 100, c->r = 0.1, c->g = 9.81;
  mech.n = 3, mech.mass = CraneMass, mech.potential = CranePotential, mech.ctx = c, mech.third = 1;
  if (HsProblemSetMechanical(p, &mech, free)) {
    free(c);
    HsProblemDestroy(&p);
    return -1;
  }
  p->T    = 3;
  p->N    = 320; /* N = 40 (thesis) is too coarse: its extremals zigzag and do not continue (docs/direct.md) */
  p->B[0] = 1;        /* F acts on s */
  p->B[3] = 1 / c->r; /* the winch torque acts on l through beta = l / r */
  p->R[0] = p->R[3] = 1;
  p->x0[1]          = 4;
  p->xT[0] = 5, p->xT[1] = 1;
  for (int i = 0; i < 6; i++)
    p->xT_fixed[i] = 1;
  p->update = CraneUpdate;
  HsProblemAddParam(p, "mt", "trolley mass", &c->mt, 1e-12, 1e12);
  HsProblemAddParam(p, "J", "winch moment of inertia", &c->J, 1e-12, 1e12);
  HsProblemAddParam(p, "m", "load mass", &c->m, 1e-12, 1e12);
  HsProblemAddParam(p, "r", "winch radius", &c->r, 1e-12, 1e12);
  HsProblemAddParam(p, "g", "gravity", &c->g, 0, 1e12);
  p->default_state_scheme   = "gonzalez";
  p->default_costate_scheme = "conserving";
  *prob                     = p;
  return 0;
}
