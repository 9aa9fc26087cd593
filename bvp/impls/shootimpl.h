/* hamshoot: private data of the multiple-shooting formulation (bvp/impls/shooting*.c only).
 *
 * Segments s = 0..M-1 span the nodes k_s..k_{s+1} (k_0 = 0, k_M = N). Segment s
 * owns z_s = (x_{k_s}, lambda_{k_s+1/2}) in R^{2 dim}, dim = 2n; for s = 0 the
 * x-part is pinned by the equation x_0 - x0 = 0, which keeps every block 2 dim
 * wide. Segments are distributed over the ranks in contiguous blocks
 * (mpi/hsmpi.h); each rank marches its own (costate/hsmarch.h).
 */
#ifndef SHOOTIMPL_H
#define SHOOTIMPL_H

#include "../../costate/hsmarch.h"
#include "../interface/hsbvpimpl.h"

/* The segment layout shared by the three multiple-shooting formulations (shooting.c, consshoot.c, order4shoot.c;
 * seglayout.c): M segments between the knots k_0 = 0 < ... < k_M = N, distributed over the ranks (this rank's
 * [s0, s1)); segment t's block of outer unknowns, w0 wide for t = 0 and w for t >= 1, at BlockOffset(t), and, on the
 * owner of segment M - 1, `extra` unknowns after the last block (a free T, multipliers); the outer equations in the
 * same banded order (issue 44: PC hsband factors them without gathering): `head` rows first (those of segment 0's
 * unknowns alone), then block t's matching rows (w each) at RowOffset(t), t = 1..M-1, then the rows of the end
 * (RowOffset(M): the end conditions, a free T's); the stored trajectory of local segment i, points k_t - pre ..
 * k_{t+1} of `stride` values each, from point toff[i]. */
typedef struct {
  PetscInt         M, *knots; /* M segments, M + 1 knots */
  HsSegmentLayout *ranks;     /* the segments over the ranks */
  PetscInt         s0, s1;    /* this rank's segments */
  PetscMPIInt      last;      /* the owner of segment M - 1 */
  PetscBool        owns_last; /* this rank owns segment M - 1 */
  PetscInt         w0, w, extra, pre, stride;
  PetscInt         head; /* the rows before block 1's matching rows (w0 unless HsSegLayoutSetHeadRows) */
  PetscInt        *toff; /* first point of local segment i in the trajectory (in points); nloc + 1 entries */
} HsSegLayout;

/* One local segment's march from its block w (HsSegLayoutMarchAll); *failed on a failure (the diagnosis set). */
typedef PetscErrorCode (*HsSegMarchFn)(HsSolver s, PetscInt i, const PetscScalar *w, PetscBool sens, void *ctx,
                                       PetscBool *failed);
/* Local segment i's part of the whole guess g: its stored trajectory, its block of x (HsSegLayoutScatterGuess). */
typedef PetscErrorCode (*HsSegGuessFn)(HsSolver s, PetscInt i, const PetscScalar *g, PetscScalar *x, void *ctx);
/* The values of point k of local segment i on the transcription's layout (HsSegLayoutPutPoints). */
typedef PetscErrorCode (*HsSegPointFn)(HsSolver s, PetscInt i, PetscInt k, PetscScalar *v, void *ctx);

PetscErrorCode HsSegLayoutCreate(MPI_Comm comm, PetscInt M, const PetscInt *knots, HsSegLayout **L);
PetscErrorCode HsSegLayoutSetBlocks(HsSegLayout *L, PetscInt w0, PetscInt w, PetscInt extra, PetscInt pre,
                                    PetscInt stride);
PetscErrorCode HsSegLayoutSetHeadRows(HsSegLayout *L, PetscInt head);
PetscErrorCode HsSegLayoutDestroy(HsSegLayout **L);
PetscInt       HsSegLayoutBlockSize(const HsSegLayout *L, PetscInt t);
PetscInt       HsSegLayoutBlockOffset(const HsSegLayout *L, PetscInt t);
PetscInt       HsSegLayoutRowOffset(const HsSegLayout *L, PetscInt t);
PetscInt       HsSegLayoutLocalOffset(const HsSegLayout *L, PetscInt t);
PetscInt       HsSegLayoutLocalSize(const HsSegLayout *L);
PetscReal     *HsSegLayoutPoint(const HsSegLayout *L, PetscReal *traj, PetscInt i, PetscInt k);
PetscErrorCode HsSegLayoutMarchAll(const HsSegLayout *L, HsSolver s, const PetscScalar *x, PetscBool sens,
                                   HsSegMarchFn march, void *ctx, PetscBool *failed);
PetscErrorCode HsSegLayoutAddMatching(const HsSegLayout *L, Vec F, PetscInt t, const PetscScalar *x,
                                      const PetscScalar *end, PetscInt *idx, PetscScalar *v);
PetscErrorCode HsSegLayoutAddMatchingJacobian(const HsSegLayout *L, Mat P, PetscInt t, PetscInt nc,
                                              const PetscInt *cols, const PetscScalar *blk, PetscInt *rows);
PetscErrorCode HsSegLayoutScatterGuess(const HsSegLayout *L, HsSolver s, Vec Xfull, Vec X, HsSegGuessFn guess,
                                       void *ctx);
PetscErrorCode HsSegLayoutSetUpSolver(const HsSegLayout *L, HsSolver s, PetscInt nz,
                                      PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *));
PetscErrorCode HsSegLayoutPutPoints(const HsSegLayout *L, HsSolver s, Vec Xfull, PetscInt D, HsSegPointFn point,
                                    void *ctx);

typedef struct {
  /* settings */
  PetscInt        M;           /* -hs_shoot_segments (default 1) */
  PetscInt        nuser;       /* -hs_shoot_knots: number of interior knots (0: even split) */
  PetscInt       *user_knots;  /* nuser interior knots */
  HsShootKSPType  ksp;         /* -hs_shoot_ksp */
  HsShootInitType init;        /* -hs_shoot_init */
  PetscBool       mf;          /* -hs_shoot_mf */
  PetscReal       max_growth;  /* -hs_shoot_max_growth */
  PetscReal       step_atol;   /* -hs_step_atol */
  PetscReal       step_stol;   /* -hs_step_stol */
  PetscInt        step_max_it; /* -hs_step_max_it */
  /* set up */
  PetscInt         Mset;      /* the number of segments in use */
  PetscInt        *knots;     /* Mset+1 node indices */
  HsSegLayout     *seg;       /* the segments: blocks 2 dim; points k_s .. k_{s+1}, 2 dim values each; a free T */
  HsMarch         *march;
  PetscReal       *traj;      /* marched trajectories of the local segments: rows (x_k, lambda_{k+1/2}) */
  PetscReal       *sens;      /* per local segment: S(x_{k_s+1}), S(x_{b-1}), S(lambda_{b-1/2}), S(x_b) */
  PetscReal       *growth;    /* per local segment: max |sensitivity| of its last march with sensitivities */
  PetscBool       *marched;   /* per local segment: its last march succeeded (a warm start for the next) */
  PetscReal       *perron;    /* per local segment: the scaling of its last growth check (2 dim; 0: none yet) */
  PetscReal       *jblk;      /* per local segment: Jacobian blocks B1, B2p, B2c (dim x 2 dim each) */
  PetscReal       *end_send, *end_recv, *end_local; /* end data of a segment (+ sensitivities) */
  PetscReal       *znext;     /* x-part of z_{s1} from the next rank */
  PetscReal       *vprev;     /* matrix-free product: v_{s0-1} from the previous rank */
  PetscReal       *Bk, *G, *R; /* scratch: 8 blocks dim x dim; dim x (2 dim + 1); dim */
  /* a free final time (docs/free-final-time.md): T is the last unknown, on the owner of segment M-1 */
  PetscInt         ft;        /* 1 with a free T (the sensitivities then have ws = 2 dim + 1 columns), else 0 */
  PetscReal       *hsum;      /* per local segment: sum of H^d over its intervals */
  PetscReal       *hgrad;     /* per local segment: its gradient in z (2 dim) and h (1) */
  PetscReal       *jT;        /* per local segment: d(row block)/dT (2 dim) */
  PetscReal        egrowth;   /* the largest |sensitivity| over all segments (unscaled; reported only) */
  PetscReal       *tlast, tt; /* owner of T: -grad(d phi/dT) S(x_N) in z_{M-1} (2 dim), and d(T row)/dT */
} HsShoot;

extern PetscLogEvent HS_SHOOT_MARCH, HS_SHOOT_SENS, HS_SHOOT_ASSEMBLY;

PetscErrorCode HsShootResidual(HsSolver s, Vec X, Vec F, PetscBool *dom);
PetscErrorCode HsShootFormJacobian(SNES snes, Vec X, Mat Jm, Mat Pm, void *ctx);
PetscErrorCode HsShootAssemblePattern(HsSolver s, Mat J);
PetscErrorCode HsShootCreateMFOperator(HsSolver s, Mat *J);
PetscErrorCode HsShootPackNodes(HsSolver s);
PetscErrorCode HsShootSetFinalTimeEntry(HsSolver s, Vec X, PetscReal T);
/* the growth check, shared with conserving4's shooting (order4shoot.c) */
PetscErrorCode HsShootPerronGrowth(PetscInt m, PetscReal *P, PetscReal *v, PetscReal *u, PetscReal max_growth,
                                   PetscReal *g);
/* summary.json's "sensitivity_growth" and "sensitivity_entry_max" members (null unless g > 0 and both finite). */
void HsShootGrowthJSON(FILE *f, PetscReal g, PetscReal e);
PetscErrorCode HsShootGrowthReduce(HsSolver s, const PetscInt *knots, PetscInt M, PetscReal max_growth, double g,
                                   int seg, PetscReal emax, PetscReal *egrowth, PetscBool *too_large);

#endif
