/* hamshoot: the planar 3-link arm of thesis sections 6.2/8.2, docs/theory.md
 * section 4.3, in relative joint angles alpha, absolute angles
 * theta_i = alpha_1 + ... + alpha_i, joint torques u (B = I, R = I).
 *
 * Link i: mass m_i, length l_i, polar moment J_i = E1_i + E2_i, centre of mass
 * phi_i = sum_{j<i} l_j d_j + 1/2 l_i d_i, d_j = (cos theta_j, sin theta_j).
 * With c_ij = 1 (j < i), 1/2 (j = i) and dphi_i/dalpha_k = sum_{j=k..i} c_ij l_j d_j^perp:
 *
 *   M_kl = sum_i m_i sum_{j=k..i} sum_{j'=l..i} c_ij c_ij' l_j l_j' cos(theta_j - theta_j')
 *          + sum_{i >= max(k,l)} J_i,
 *   V = g sum_i m_i phi_i . e2 = sum_j w_j sin theta_j,  w_j = g l_j (m_j / 2 + sum_{i>j} m_i),
 *
 * and d/dalpha_a of cos(theta_j - theta_j') = -sin(theta_j - theta_j') ([a <= j] - [a <= j']);
 * M, V and their derivatives up to third order (analytic D(Hess E), problems/mechanical.c).
 * Data: m = (30, 25, 10), E1 = (1.225, 1.0208, 0.4083), E2 = (143.3027, 88.0208,
 * 60.2083), l = (7, 6, 8), g = 9.81 (not stated in the thesis);
 * alpha: (pi/2, -pi/2, pi/2) -> (pi/2, 0, 0), rest to rest, T = 3, N = 40.
 */
#include "hsmechanical.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double m[3], J[3], l[3], g;
  double G[3][3],
      Jsum[3][3]; /* G_jj' = sum_{i >= max(j,j')} m_i c_ij c_ij' l_j l_j', Jsum_kl = sum_{i >= max(k,l)} J_i */
} Arm;

static void Thetas(const double *q, double *th) { th[0] = q[0], th[1] = th[0] + q[1], th[2] = th[1] + q[2]; }

/* M_kl = Jsum_kl + sum_{j >= k, j' >= l} G_jj' cos(theta_j - theta_j'). The angle
 * difference depends on alpha_a with the sign sgn = +1 (j' < a <= j), -1 (j < a <= j'),
 * so each derivative order multiplies by sgn and turns cos -> -sin -> -cos -> sin. */
static int ArmMass(const double *q, double *M, double *dM, double *d2M, double *d3M, void *ctx)
{
  const Arm *A = ctx;
  double     th[3];

  Thetas(q, th);
  if (M)
    for (int k = 0; k < 3; k++)
      for (int l = 0; l < 3; l++)
        M[k * 3 + l] = A->Jsum[k][l];
  if (dM)
    memset(dM, 0, 27 * sizeof(double));
  if (d2M)
    memset(d2M, 0, 81 * sizeof(double));
  if (d3M)
    memset(d3M, 0, 243 * sizeof(double));
  for (int j = 0; j < 3; j++)
    for (int jp = 0; jp < 3; jp++) {
      double G = A->G[j][jp], c = 1, s = 0, sgn = j > jp ? 1 : -1;
      int    lo = (j < jp ? j : jp) + 1, hi = j > jp ? j : jp; /* alpha_a with lo <= a <= hi move the difference */
      if (j != jp)
        c = cos(th[j] - th[jp]), s = sin(th[j] - th[jp]);
      for (int k = 0; k <= j; k++)
        for (int l = 0; l <= jp; l++) {
          int kl = k * 3 + l;
          if (M)
            M[kl] += G * c;
          if (j == jp)
            continue;
          for (int a = lo; a <= hi; a++) {
            if (dM)
              dM[a * 9 + kl] -= G * s * sgn;
            for (int b = lo; b <= hi && (d2M || d3M); b++) {
              if (d2M)
                d2M[(a * 3 + b) * 9 + kl] -= G * c;
              for (int e = lo; e <= hi && d3M; e++)
                d3M[((a * 3 + b) * 3 + e) * 9 + kl] += G * s * sgn;
            }
          }
        }
    }
  return 0;
}

static int ArmPotential(const double *q, double *V, double *dV, double *d2V, double *d3V, void *ctx)
{
  const Arm *A = ctx;
  double     th[3], w[3];

  Thetas(q, th);
  for (int j = 0; j < 3; j++) {
    w[j] = 0.5 * A->m[j];
    for (int i = j + 1; i < 3; i++)
      w[j] += A->m[i];
    w[j] *= A->g * A->l[j];
  }
  if (V)
    *V = w[0] * sin(th[0]) + w[1] * sin(th[1]) + w[2] * sin(th[2]);
  for (int a = 0; a < 3; a++) {
    if (dV) {
      dV[a] = 0;
      for (int j = a; j < 3; j++)
        dV[a] += w[j] * cos(th[j]);
    }
    for (int b = 0; b < 3 && d2V; b++) {
      d2V[a * 3 + b] = 0;
      for (int j = (a > b ? a : b); j < 3; j++)
        d2V[a * 3 + b] -= w[j] * sin(th[j]);
    }
    for (int b = 0; b < 3 && d3V; b++)
      for (int e = 0; e < 3; e++) {
        int top                  = a > b ? a : b;
        top                      = top > e ? top : e;
        d3V[(a * 3 + b) * 3 + e] = 0;
        for (int j = top; j < 3; j++)
          d3V[(a * 3 + b) * 3 + e] -= w[j] * cos(th[j]);
      }
  }
  return 0;
}

/*@ HsProblemCreateManipulator3 - the planar 3-link arm (docs/theory.md section 4.3; file head), a mechanical
    system with analytic third derivatives; parameter g. Not collective. Returns HS_SUCCESS or
    HS_ENOMEM. @*/
int HsProblemCreateManipulator3(HsProblem **prob)
{
  static const double E1[3] = {1.225, 1.0208, 0.4083}, E2[3] = {143.3027, 88.0208, 60.2083};
  HsProblem          *p;
  Arm                *A;
  HsMechanical        mech = {0};
  int                 ierr = HsProblemAllocate("manipulator3", 3, 3, &p);

  if (ierr)
    return ierr;
  A = malloc(sizeof(*A));
  if (!A) {
    HsProblemDestroy(&p);
    return -1;
  }
  A->m[0] = 30, A->m[1] = 25, A->m[2] = 10;
  A->l[0] = 7, A->l[1] = 6, A->l[2] = 8;
  for (int i = 0; i < 3; i++)
    A->J[i] = E1[i] + E2[i];
  for (int j = 0; j < 3; j++)
    for (int jp = 0; jp < 3; jp++) {
      A->G[j][jp] = A->Jsum[j][jp] = 0;
      for (int i = (j > jp ? j : jp); i < 3; i++) {
        A->G[j][jp] += A->m[i] * (j < i ? 1 : 0.5) * (jp < i ? 1 : 0.5) * A->l[j] * A->l[jp];
        A->Jsum[j][jp] += A->J[i];
      }
    }
  A->g   = 9.81;
  mech.n = 3, mech.mass = ArmMass, mech.potential = ArmPotential, mech.ctx = A, mech.third = 1;
  if (HsProblemSetMechanical(p, &mech, free)) {
    free(A);
    HsProblemDestroy(&p);
    return -1;
  }
  p->T = 3;
  p->N = 40;
  for (int i = 0; i < 3; i++)
    p->B[i * 3 + i] = p->R[i * 3 + i] = 1;
  p->x0[0] = M_PI / 2, p->x0[1] = -M_PI / 2, p->x0[2] = M_PI / 2;
  p->xT[0] = M_PI / 2;
  for (int i = 0; i < 6; i++)
    p->xT_fixed[i] = 1;
  HsProblemAddParam(p, "g", "gravity (the thesis does not state it)", &A->g, 0, 1e12);
  p->default_state_scheme   = "gonzalez";
  p->default_costate_scheme = "conserving";
  *prob                     = p;
  return 0;
}
