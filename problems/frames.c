/* hamshoot: frames of a problem in natural coordinates and their geodesic guess (docs/problem-format.md, "Frames";
 * docs/constrained.md, "The geodesic frame guess").
 *
 * A frame is nine coordinates, the components of three orthonormal right-handed directors (HsProblem.frames). A
 * frame whose third director is a director of an earlier frame (the same three coordinates) is a rotor spinning
 * about that director; every other coordinate of a frame is its own. The guess of HsProblemFrameGuess moves each
 * frame along the geodesic between its end attitudes, R(s) = R0 exp(s [w]x) with w the rotation vector of R0^T RT,
 * and each rotor with its parent, turned about its axis by an angle theta(s); s(t) = 3 tau^2 - 2 tau^3 (tau = t/T, at
 * rest at both ends). A rotor whose final attitude is fixed turns by its final angle times s; one whose final
 * attitude is free turns so that the velocity carries none of the problem's conserved quantities ('conserved:',
 * HsProblem.cinv_grad; the total angular momentum of a satellite at rest): dtheta/ds the least-squares solution of
 * grad_p I(q) . M dq/ds = 0, integrated by the classical Runge-Kutta method. The other coordinates are blended with
 * the same s; the momenta are M dq/dt plus the blend of the end momenta.
 */
#include "hsproblem.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runge-Kutta steps per interval of the guess's grid for the free rotors' angles (exact for the satellite, whose
 * dtheta/ds is constant; more only refine a general system's guess). */
#define HS_FRAME_GUESS_SUBSTEPS 4

/* Frame f's structure: parent[f] the frame whose director its third director is (-1: none), axis[f] that director. */
typedef struct {
  const HsProblem *P;
  int     nf, *parent, *axis, *fk, nfree; /* fk: a rotor with a free final attitude: its index among them, else -1 */
  double *R0, *RT, *w, *C0, *thT;         /* per frame: 9, 9, 3, 9 (rotors: R_parent^T R), 1 */
  double *att, *Minv, *q, *dq, *V, *MV, *g, *A; /* scratch */
} Frames;

static void MatMul(const double *a, const double *b, double *c, int ta)
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      c[3 * i + j] = 0;
      for (int l = 0; l < 3; l++)
        c[3 * i + j] += (ta ? a[3 * l + i] : a[3 * i + l]) * b[3 * l + j];
    }
}

/* R = exp([w]x) (Rodrigues). */
static void Expm(const double *w, double *R)
{
  double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), a = th > 1e-8 ? sin(th) / th : 1 - th * th / 6;
  double b    = th > 1e-8 ? (1 - cos(th)) / (th * th) : 0.5 - th * th / 24;
  double K[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0}, KK[9];

  MatMul(K, K, KK, 0);
  for (int i = 0; i < 9; i++)
    R[i] = (i % 4 == 0) + a * K[i] + b * KK[i];
}

/* w: the rotation vector of the rotation Q (|w| <= pi). Near a half turn the axis comes from the symmetric part; at a
 * half turn exactly (both signs the same rotation) the sign that makes the axis' largest component positive. */
static void Logm(const double *Q, double *w)
{
  double a[3] = {0.5 * (Q[7] - Q[5]), 0.5 * (Q[2] - Q[6]), 0.5 * (Q[3] - Q[1])};
  double c = fmax(-1, fmin(1, 0.5 * (Q[0] + Q[4] + Q[8] - 1))), th = acos(c), s = sin(th), nrm, dot = 0;
  int    j = 0;

  if (th < M_PI / 2) {
    double f = th > 1e-8 ? th / s : 1;
    for (int i = 0; i < 3; i++)
      w[i] = f * a[i];
    return;
  }
  for (int i = 1; i < 3; i++) /* (Q + Q^T)/2 - c I = (1 - c) n n^T: its largest diagonal entry's column */
    if (Q[4 * i] > Q[4 * j])
      j = i;
  for (int i = 0; i < 3; i++)
    w[i] = 0.5 * (Q[3 * i + j] + Q[3 * j + i]) - c * (i == j);
  nrm = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  for (int i = 0; i < 3; i++)
    dot += (w[i] /= nrm) * a[i];
  if (fabs(dot) <= 1e-12) { /* a half turn: the largest component positive */
    int big = fabs(w[1]) > fabs(w[0]) ? 1 : 0;
    big     = fabs(w[2]) > fabs(w[big]) ? 2 : big;
    dot     = w[big];
  }
  for (int i = 0; i < 3; i++)
    w[i] *= dot < 0 ? -th : th;
}

/* Frame f's attitude in x (q first): R[3 r + j] = component r of director j. */
static void Attitude(const HsProblem *P, int f, const double *x, double *R)
{
  for (int j = 0; j < 3; j++)
    for (int r = 0; r < 3; r++)
      R[3 * r + j] = x[P->frames[9 * f + 3 * j + r]];
}

/* The frames' structure: parent and axis of each, -1 where none; HS_ERANGE (why) if a frame shares coordinates with
 * an earlier one other than as its third director, or names a coordinate twice or one out of range. */
static int Structure(const HsProblem *P, int *parent, int *axis, int *bad, char *why, size_t len)
{
  const int *F = P->frames;
  for (int f = 0; f < P->nframes; f++) {
    parent[f] = axis[f] = -1;
    if (bad)
      *bad = f;
    for (int i = 0; i < 9; i++) {
      if (F[9 * f + i] < 0 || F[9 * f + i] >= P->n)
        return snprintf(why, len, "frame %d: a coordinate index out of range", f + 1), HS_ERANGE;
      for (int l = 0; l < i; l++)
        if (F[9 * f + l] == F[9 * f + i])
          return snprintf(why, len, "frame %d: it names a coordinate twice", f + 1), HS_ERANGE;
    }
    for (int g = 0; g < f; g++)
      for (int j = 0; j < 3; j++)
        if (!memcmp(F + 9 * f + 6, F + 9 * g + 3 * j, 3 * sizeof(int)))
          parent[f] = g, axis[f] = j;
    for (int g = 0; g < f; g++)
      for (int i = 0; i < 9; i++)
        for (int l = 0; l < (parent[f] >= 0 ? 6 : 9); l++)
          if (F[9 * f + l] == F[9 * g + i])
            return snprintf(why, len,
                            "frame %d: it shares a coordinate with frame %d other than as its third director (a "
                            "rotor's axis: all three components of one of frame %d's directors)",
                            f + 1, g + 1, g + 1),
                   HS_ERANGE;
  }
  return HS_SUCCESS;
}

/* |R^T R - I| and det R - 1 within tol at the end `end`. */
static int CheckOrtho(const double *R, double tol, int f, const char *end, char *why, size_t len)
{
  double RtR[9], det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                       R[2] * (R[3] * R[7] - R[4] * R[6]);
  MatMul(R, R, RtR, 1);
  for (int i = 0; i < 9; i++)
    if (!(fabs(RtR[i] - (i % 4 == 0)) <= tol))
      return snprintf(why, len, "frame %d: its directors are not orthonormal at %s (d%d.d%d = %.3g)", f + 1, end,
                      i / 3 + 1, i % 3 + 1, RtR[i]),
             HS_ERANGE;
  if (!(fabs(det - 1) <= tol))
    return snprintf(why, len, "frame %d: its directors are not right-handed at %s (det = %.3g)", f + 1, end, det),
           HS_ERANGE;
  return HS_SUCCESS;
}

/* 1 if all of frame f's own coordinates (a rotor: its first two directors) are fixed at T, 0 if all are free, -1 if
 * some are. */
static int FixedAtT(const HsProblem *P, int f, int rotor)
{
  int fixed = 0, own = rotor ? 6 : 9;
  for (int l = 0; l < own; l++)
    fixed += P->xT_fixed[P->frames[9 * f + l]];
  return fixed == own ? 1 : fixed == 0 ? 0 : -1;
}

/*@ HsProblemCheckFrames - the frames of a problem (HsProblem.frames): each of nine distinct coordinates, sharing
    coordinates with an earlier frame only as its third director (a rotor about that director), orthonormal and
    right-handed at x0 and, where fixed, at xT (to tol), and each frame's own coordinates at T all fixed or all free.
    Returns HS_SUCCESS, or HS_ERANGE with why saying what fails; *bad (if not NULL) the failing frame (0-based). @*/
int HsProblemCheckFrames(const HsProblem *P, double tol, int *bad, char *why, size_t len)
{
  int   *parent = malloc(sizeof(int) * (size_t)(2 * P->nframes + 1)), st;
  double R[9];

  if (!parent)
    return HS_ENOMEM;
  st = Structure(P, parent, parent + P->nframes, bad, why, len);
  for (int f = 0; !st && f < P->nframes; f++) {
    int fx = FixedAtT(P, f, parent[f] >= 0);
    if (bad)
      *bad = f;
    Attitude(P, f, P->x0, R);
    st = CheckOrtho(R, tol, f, "x0", why, len);
    if (!st && fx < 0) {
      snprintf(why, len, "frame %d: some of its coordinates are fixed at T, others free (all or none)", f + 1);
      st = HS_ERANGE;
    }
    if (!st && fx > 0 && parent[f] >= 0 && FixedAtT(P, parent[f], parent[parent[f]] >= 0) <= 0) {
      snprintf(why, len, "frame %d: a rotor fixed at T on frame %d, which is free there", f + 1, parent[f] + 1);
      st = HS_ERANGE;
    }
    if (!st && fx > 0) {
      Attitude(P, f, P->xT, R);
      st = CheckOrtho(R, tol, f, "xT", why, len);
    }
  }
  if (!st && bad)
    *bad = -1;
  free(parent);
  return st;
}

/* Frame f's attitude R and dR/ds at s (9 each per frame; free rotors turned by theta[fk[f]], their dR/ds without
 * the turn's rate), and for free rotor k the derivative of its attitude in its angle (dth, 9 per free rotor). */
static void Attitudes(Frames *F, double s, const double *theta, double *R, double *dR, double *dth)
{
  for (int f = 0; f < F->nf; f++) {
    double *Rf = R + 9 * f, *dRf = dR + 9 * f, ws[3], E[9], EC[9], K[9] = {0}, KE[9], RK[9];
    int     a = F->axis[f], k = F->fk[f];
    if (F->parent[f] < 0) {
      const double *w    = F->w + 3 * f;
      double        W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
      for (int i = 0; i < 3; i++)
        ws[i] = s * w[i];
      Expm(ws, E);
      MatMul(F->R0 + 9 * f, E, Rf, 0);
      MatMul(Rf, W, dRf, 0);
      continue;
    }
    for (int i = 0; i < 3; i++)
      ws[i] = (k >= 0 ? theta[k] : s * F->thT[f]) * (i == a);
    Expm(ws, E);
    MatMul(E, F->C0 + 9 * f, EC, 0);
    MatMul(R + 9 * F->parent[f], EC, Rf, 0);
    MatMul(dR + 9 * F->parent[f], EC, dRf, 0);
    K[3 * ((a + 2) % 3) + (a + 1) % 3] = 1, K[3 * ((a + 1) % 3) + (a + 2) % 3] = -1; /* [e_a]x */
    MatMul(K, EC, KE, 0);
    MatMul(R + 9 * F->parent[f], KE, RK, 0); /* d Rf / d theta */
    for (int i = 0; i < 9; i++)
      if (k >= 0)
        dth[9 * k + i] = RK[i];
      else
        dRf[i] += F->thT[f] * RK[i];
  }
}

/* The configuration q at s (free rotors at theta), dq0 = dq/ds without the free rotors' rates, and V (nfree x n) the
 * derivative of q in each free rotor's angle. Coordinates outside the frames: the blend of x0 and their end values. */
static void Config(Frames *F, double s, const double *theta, double *q, double *dq0, double *V)
{
  const HsProblem *P = F->P;
  int              n = P->n;
  double          *R = F->att, *dR = R + 9 * F->nf, *dth = dR + 9 * F->nf;

  Attitudes(F, s, theta, R, dR, dth);
  for (int i = 0; i < n; i++) {
    double e = P->xT_fixed[i] ? P->xT[i] : P->x0[i];
    q[i] = (1 - s) * P->x0[i] + s * e, dq0[i] = e - P->x0[i];
  }
  memset(V, 0, sizeof(double) * (size_t)(F->nfree * n));
  for (int f = 0; f < F->nf; f++)
    for (int j = 0; j < (F->parent[f] >= 0 ? 2 : 3); j++)
      for (int r = 0; r < 3; r++) {
        int i = P->frames[9 * f + 3 * j + r];
        q[i] = R[9 * f + 3 * r + j], dq0[i] = dR[9 * f + 3 * r + j];
        if (F->fk[f] >= 0)
          V[F->fk[f] * n + i] = dth[9 * F->fk[f] + 3 * r + j];
      }
}

/* The Cholesky factor of M^{-1}(q) (the momentum block of E's Hessian at (q, 0)) into F->Minv. */
static int MassFactor(Frames *F, const double *q)
{
  const HsProblem *P = F->P;
  int              n = P->n, st;
  double          *x = F->g, *H = F->Minv + n * n; /* x: 2n, H: 4n^2 */

  memcpy(x, q, sizeof(double) * (size_t)n);
  memset(x + n, 0, sizeof(double) * (size_t)n);
  if (P->E.hess(x, H, P->ctx))
    return HS_EDOM;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      F->Minv[i * n + j] = H[(n + i) * 2 * n + n + j];
  {
    gsl_matrix_view      A   = gsl_matrix_view_array(F->Minv, (size_t)n, (size_t)n);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    st                       = gsl_linalg_cholesky_decomp1(&A.matrix);
    gsl_set_error_handler(old);
  }
  return st ? HS_ESINGULAR : HS_SUCCESS;
}

/* y = M v (M^{-1} factored by MassFactor), in place. */
static void MassTimes(Frames *F, double *y)
{
  gsl_matrix_view A = gsl_matrix_view_array(F->Minv, (size_t)F->P->n, (size_t)F->P->n);
  gsl_vector_view v = gsl_vector_view_array(y, (size_t)F->P->n);
  gsl_linalg_cholesky_svx(&A.matrix, &v.vector);
}

/* The free rotors' rates dtheta/ds at (s, theta): the least-squares solution of grad_p I_l(q) . M (dq0 + V rate) = 0
 * (the conserved quantities I_l; none: rate 0). Leaves q, dq0, V of Config and M's factor. */
static int Rates(Frames *F, double s, const double *theta, double *rate)
{
  const HsProblem *P = F->P;
  int              n = P->n, c = P->ncinv, K = F->nfree, rows = c > K ? c : K, st;
  double          *S = F->A + rows * K, *Vm = S + K, *W = Vm + K * K, *b = W + K;

  Config(F, s, theta, F->q, F->dq, F->V);
  if ((st = MassFactor(F, F->q)))
    return st;
  memset(rate, 0, sizeof(double) * (size_t)K);
  if (!K || !c)
    return HS_SUCCESS;
  if (P->cinv_grad(F->q, F->g, NULL, P->ctx))
    return HS_EDOM;
  memcpy(F->MV, F->dq, sizeof(double) * (size_t)n);
  memcpy(F->MV + n, F->V, sizeof(double) * (size_t)(K * n));
  for (int k = 0; k <= K; k++)
    MassTimes(F, F->MV + k * n);
  memset(F->A, 0, sizeof(double) * (size_t)(rows * K));
  memset(b, 0, sizeof(double) * (size_t)rows);
  for (int l = 0; l < c; l++)
    for (int i = 0; i < n; i++) {
      b[l] -= F->g[l * n + i] * F->MV[i];
      for (int k = 0; k < K; k++)
        F->A[l * K + k] += F->g[l * n + i] * F->MV[(k + 1) * n + i];
    }
  {
    gsl_matrix_view A       = gsl_matrix_view_array(F->A, (size_t)rows, (size_t)K),
                    V       = gsl_matrix_view_array(Vm, (size_t)K, (size_t)K);
    gsl_vector_view      Sv = gsl_vector_view_array(S, (size_t)K), Wv = gsl_vector_view_array(W, (size_t)K);
    gsl_vector_view      bv = gsl_vector_view_array(b, (size_t)rows), xv = gsl_vector_view_array(rate, (size_t)K);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    st                       = gsl_linalg_SV_decomp(&A.matrix, &V.matrix, &Sv.vector, &Wv.vector);
    for (int k = 0; !st && k < K; k++) /* the rates the conserved quantities do not see: 0 */
      if (!(S[k] > 1e-12 * S[0]))
        S[k] = 0;
    if (!st)
      st = gsl_linalg_SV_solve(&A.matrix, &V.matrix, &Sv.vector, &bv.vector, &xv.vector);
    gsl_set_error_handler(old);
  }
  for (int k = 0; k < K; k++)
    if (!isfinite(rate[k]))
      st = 1;
  return st ? HS_ESINGULAR : HS_SUCCESS;
}

/* theta from s0 to s1 by HS_FRAME_GUESS_SUBSTEPS classical Runge-Kutta steps (ks: 5 nfree scratch). */
static int Advance(Frames *F, double s0, double s1, double *theta, double *ks)
{
  int    K = F->nfree, st = 0;
  double h = (s1 - s0) / HS_FRAME_GUESS_SUBSTEPS, *k1 = ks, *k2 = k1 + K, *k3 = k2 + K, *k4 = k3 + K, *y = k4 + K;
  for (int j = 0; !st && j < HS_FRAME_GUESS_SUBSTEPS; j++) {
    double s = s0 + j * h;
    st       = Rates(F, s, theta, k1);
    for (int i = 0; i < K; i++)
      y[i] = theta[i] + 0.5 * h * k1[i];
    st = st ? st : Rates(F, s + 0.5 * h, y, k2);
    for (int i = 0; i < K; i++)
      y[i] = theta[i] + 0.5 * h * k2[i];
    st = st ? st : Rates(F, s + 0.5 * h, y, k3);
    for (int i = 0; i < K; i++)
      y[i] = theta[i] + h * k3[i];
    st = st ? st : Rates(F, s + h, y, k4);
    for (int i = 0; i < K; i++)
      theta[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return st;
}

/* The end attitudes, rotation vectors, rotors' relative attitudes and final angles; the scratch. */
static int Setup(Frames *F, const HsProblem *P)
{
  int  nf = P->nframes, n = P->n, K = 0, rows, st;
  char why[256];

  memset(F, 0, sizeof *F);
  F->P = P, F->nf = nf;
  if (!(F->parent = malloc(sizeof(int) * (size_t)(3 * nf))))
    return HS_ENOMEM;
  F->axis = F->parent + nf, F->fk = F->axis + nf;
  if ((st = Structure(P, F->parent, F->axis, NULL, why, sizeof why)))
    return st;
  for (int f = 0; f < nf; f++)
    F->fk[f] = F->parent[f] >= 0 && !FixedAtT(P, f, 1) ? K++ : -1;
  F->nfree = K, rows = P->ncinv > K ? P->ncinv : K;
  if (!(F->R0 = malloc(sizeof(double) * (size_t)(31 * nf + 18 * nf + 9 * K + 5 * n * n + 2 * n + K * n + (K + 1) * n +
                                                 (2 + P->ncinv) * n + rows * K + 3 * K + K * K + rows))))
    return HS_ENOMEM;
  F->RT = F->R0 + 9 * nf, F->w = F->RT + 9 * nf, F->C0 = F->w + 3 * nf, F->thT = F->C0 + 9 * nf;
  F->att = F->thT + nf, F->Minv = F->att + 18 * nf + 9 * K, F->q = F->Minv + 5 * n * n, F->dq = F->q + n;
  F->V = F->dq + n, F->MV = F->V + K * n, F->g = F->MV + (K + 1) * n, F->A = F->g + (2 + P->ncinv) * n;
  for (int f = 0; f < nf; f++) {
    double *R0 = F->R0 + 9 * f, *RT = F->RT + 9 * f, Q[9], CT[9], w[3];
    int     g = F->parent[f], fixed = FixedAtT(P, f, g >= 0) > 0;
    Attitude(P, f, P->x0, R0);
    if (fixed)
      Attitude(P, f, P->xT, RT);
    else
      memcpy(RT, R0, sizeof(double) * 9);
    F->thT[f] = 0;
    if (g < 0) {
      MatMul(R0, RT, Q, 1);
      Logm(Q, F->w + 3 * f);
      continue;
    }
    MatMul(F->R0 + 9 * g, R0, F->C0 + 9 * f, 1);
    if (!fixed)
      continue;
    MatMul(F->RT + 9 * g, RT, CT, 1);
    for (int i = 0; i < 3; i++) /* Q = C_T C0^T: a turn about e_a */
      for (int j = 0; j < 3; j++) {
        Q[3 * i + j] = 0;
        for (int l = 0; l < 3; l++)
          Q[3 * i + j] += CT[3 * i + l] * F->C0[9 * f + 3 * j + l];
      }
    Logm(Q, w);
    F->thT[f] = w[F->axis[f]];
  }
  return HS_SUCCESS;
}

/*@ HsProblemFrameGuess - the geodesic frame guess (the file's comment above; docs/constrained.md, "The geodesic frame
    guess") on N intervals of the problem's horizon: x ((N + 1) x 2n, node k's state (q, p) at t = k T / N), the fixed
    components of xT at node N. The problem has frames (HsProblem.nframes > 0) that HsProblemCheckFrames accepts and a
    mass matrix positive definite along the guess. Returns HS_SUCCESS, HS_EINVAL (no frames), HS_ERANGE (frames that
    HsProblemCheckFrames refuses), HS_EDOM, HS_ESINGULAR (the mass or
    the conserved quantities' system singular somewhere), HS_ENOMEM. @*/
int HsProblemFrameGuess(const HsProblem *P, int N, double *x)
{
  Frames  F;
  int     n     = P->n, st;
  double *theta = NULL;

  if (P->nframes <= 0 || N < 1)
    return HS_EINVAL;
  st = Setup(&F, P);
  if (!st && !(theta = calloc((size_t)(7 * (F.nfree + 1)), sizeof(double))))
    st = HS_ENOMEM;
  for (int k = 0; !st && k <= N; k++) {
    double  tau = (double)k / N, s = tau * tau * (3 - 2 * tau), sd = 6 * tau * (1 - tau) / P->T, *xk = x + 2 * k * n;
    double *rate = theta + F.nfree + 1;
    if (k)
      st = Advance(&F, (double)(k - 1) * (k - 1) * (3 - 2.0 * (k - 1) / N) / ((double)N * N), s, theta,
                   rate + F.nfree + 1);
    if (!st)
      st = Rates(&F, s, theta, rate);
    if (st)
      break;
    for (int l = 0; l < F.nfree; l++)
      for (int i = 0; i < n; i++)
        F.dq[i] += rate[l] * F.V[l * n + i];
    MassTimes(&F, F.dq);
    for (int i = 0; i < n; i++) {
      double pe = P->xT_fixed[n + i] ? P->xT[n + i] : P->x0[n + i];
      xk[i] = F.q[i], xk[n + i] = sd * F.dq[i] + (1 - tau) * P->x0[n + i] + tau * pe;
    }
    for (int i = 0; k == N && i < 2 * n; i++)
      if (P->xT_fixed[i])
        xk[i] = P->xT[i];
  }
  free(theta), free(F.parent), free(F.R0);
  return st;
}

/* The frames' structure for the plot functions below (at most HS_FRAME_MAX_PLOT frames); 1 if they take none. */
static int PlotStructure(const HsProblem *P, int *parent, int *axis)
{
  char why[8];
  return P->nframes <= 0 || P->nframes > HS_FRAME_MAX_PLOT || Structure(P, parent, axis, NULL, why, sizeof why);
}

/*@ HsProblemFrameColumns - how many values HsProblemFrameAttitude gives a node: 3 a frame without parent (its
    rotation vector), 1 a rotor (its angle about its axis relative to its parent). 0 without frames. @*/
int HsProblemFrameColumns(const HsProblem *P)
{
  int parent[HS_FRAME_MAX_PLOT], axis[HS_FRAME_MAX_PLOT], cols = 0;

  if (PlotStructure(P, parent, axis))
    return 0;
  for (int f = 0; f < P->nframes; f++)
    cols += parent[f] < 0 ? 3 : 1;
  return cols;
}

/*@ HsProblemFrameParent - frame f's parent (a rotor's: the frame whose director is its axis), -1 for a frame without
    parent or out of range, or for frames HsProblemFrameColumns does not take. @*/
int HsProblemFrameParent(const HsProblem *P, int f)
{
  int parent[HS_FRAME_MAX_PLOT], axis[HS_FRAME_MAX_PLOT];

  if (f < 0 || f >= P->nframes || PlotStructure(P, parent, axis))
    return -1;
  return parent[f];
}

/*@ HsProblemFrameAttitude - the frames' attitudes at one node, for plots (-hs_compare's attitude page): per frame in
    order, without parent the rotation vector w of R = [d1 d2 d3] (R = exp([w]x)), a rotor its angle about its axis
    relative to its parent, atan2 of its first director's components along the parent's two other directors (in the
    order a+1, a+2 after the axis a). q: the node's coordinates; prev: the previous node's values (NULL at the first),
    which make the sequence continuous: a rotor's angle unwrapped (the multiple of 2 pi nearest prev), a rotation
    vector past a half turn continued as w - 2 pi w/|w| where that is nearer prev. out: HsProblemFrameColumns values.
    Returns HS_SUCCESS, or HS_EINVAL if the problem has no frames this function takes. @*/
int HsProblemFrameAttitude(const HsProblem *P, const double *q, const double *prev, double *out)
{
  int parent[HS_FRAME_MAX_PLOT], axis[HS_FRAME_MAX_PLOT], c = 0;

  if (PlotStructure(P, parent, axis))
    return HS_EINVAL;
  for (int f = 0; f < P->nframes; f++) {
    double R[9], Rp[9], C[9], *o = out + c;
    Attitude(P, f, q, R);
    if (parent[f] >= 0) {
      int a = axis[f], b = (a + 1) % 3, e = (a + 2) % 3;
      Attitude(P, parent[f], q, Rp);
      MatMul(Rp, R, C, 1); /* C = Rp^T R: column j the rotor's director j in the parent's */
      o[0] = atan2(C[3 * e], C[3 * b]);
      if (prev)
        o[0] += 2 * M_PI * round((prev[c] - o[0]) / (2 * M_PI));
      c++;
      continue;
    }
    Logm(R, o);
    if (prev) {
      double th = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]), d0 = 0, d1 = 0, alt[3];
      for (int i = 0; i < 3 && th > 0; i++) {
        alt[i] = o[i] - 2 * M_PI * o[i] / th;
        d0 += (o[i] - prev[c + i]) * (o[i] - prev[c + i]), d1 += (alt[i] - prev[c + i]) * (alt[i] - prev[c + i]);
      }
      if (th > 0 && d1 < d0)
        memcpy(o, alt, sizeof alt);
    }
    c += 3;
  }
  return HS_SUCCESS;
}
