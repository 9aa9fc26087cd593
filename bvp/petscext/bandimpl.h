/* hamshoot: PC hsband's data, shared by its PC glue (pcband.c) and its elimination kernel (bandelim.c); the
 * method is described at the head of pcband.c. Private to petscext/. */
#ifndef HSBANDIMPL_H
#define HSBANDIMPL_H

#include "hspetscext.h"

#include <petsc/private/matimpl.h>
#include <petsc/private/pcimpl.h>
#include <petscblaslapack.h>

#define HS_BAND_MAX_WIDTH 4096
#define HS_BAND_PREFETCH 8       /* LoadRow asks for the CSR row this many rows ahead (see there) */
#define HS_BAND_PREFETCH_NNZ 12  /* ... when the local rows have this many entries on average */
#define HS_BAND_PREFETCH_BYTES (4 << 20) /* ... and their columns and values are at least this large (beyond L2) */
#define HS_BAND_MAX_BORDER 8      /* dense border rows (and columns) taken out of the band (bandborder.c) */
#define HS_BAND_BORDER_REACH 1024 /* ... an entry farther than this (or N / 4) from the diagonal is far */
typedef struct _HsBandBorder *HsBandBorder;

/* The elimination compiled twice (EliminateAVX2), where gcc targets x86-64: also for AVX2, used where the
 * processor has it and the rows are long enough (UseAVX2). Its loops are elementwise (r -= l p, copies), so 4
 * doubles a vector instead of SSE2's 2 give the same results to the bit: AVX2 alone brings no FMA instructions,
 * hence no contraction of l p into r (the build uses no -march either; CMakeLists.txt). Test band: the same
 * output files with and without; the speed in bench/README.md (ninth session). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HS_BAND_AVX2 1
#if defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX)
#define HS_BAND_AVX2_INTRIN 1 /* RowUpdateAVX2's intrinsics (bandelim.c) */
#include <immintrin.h>
#endif
#endif
#define HS_BAND_AVX2_MIN_WIDTH 24 /* UseAVX2's default: the window at least this wide */
#define HS_BAND_SPIKE_THRESHOLD 0.1 /* -pc_hsband_spike_threshold's default (bandelim.c, PivotSpike) */

/* The reduced system's cyclic reduction (bandreduce.c): a group's rows, over its boundary blocks [A | B] */
typedef struct {
  PetscInt     m, sA, sB, ld; /* rows, the blocks' sizes, the leading dimension of g */
  PetscScalar *g;             /* m x (sA + sB), column-major (leading dimension ld) */
  PetscInt    *ids;           /* the rows' ids in the reduced system (natural order) */
} HsBandGroup;

/* ... and one level's merge (this rank leads it: partner >= 0; or sends to sendto; or neither) */
typedef struct {
  PetscMPIInt   partner, sendto;
  PetscInt      ml, m, sA, sM, sB; /* rows from the left group, all rows; the blocks' sizes (M eliminated) */
  PetscScalar  *f;                 /* m x (sM + sA + sB), column-major: the panel's LU, U12, the Schur complement */
  PetscBLASInt *ipiv;              /* the panel's row swaps (getrf's) */
  PetscInt     *ids;               /* the rows' ids, swapped: the first sM the pivot rows, in step order */
  PetscScalar  *r;                 /* a solve's right-hand side of the merge (m) */
  PetscInt      cap, rcap;         /* f's and r's capacities */
} HsBandMerge;

typedef struct {
  PetscInt     rs, re, lo, hi;         /* rows, column span [lo, hi] of the local rows (global) */
  PetscInt     is, ie, olo, ohi;       /* interior columns [is, ie) and span [olo, ohi], oriented (Or) */
  PetscInt     nglob, isg, ieg;        /* the matrix' size; the interior columns, global */
  PetscBool    rev, reverse;           /* this rank eliminates bottom-up; -pc_hsband_reverse_last */
  PetscInt     kl, ku, W, nL, nrow, nI;
  PetscInt    *perm, *first, *last;    /* row i (staircase order) is local row perm[i], first column first[i];
                                          local row l's last column last[l] (oriented, Or) */
  Mat          laid;                   /* the matrix (and its nonzero state) the layout is of */
  PetscObjectState laid_state;
  PetscBool    ok;                     /* the layout is within the limits (else the MUMPS fallback) */
  PetscScalar *win, *wleft;      /* the window: R rows of S = 2W, column c at slot c - wbase (Eliminate moves wbase on
                                    by W when step j reaches wbase + W); R rows of nL (olo..is-1) */
  PetscInt     S, wbase;         /* the window's row length (2W rounded up to 4) and its first column (after an
                                    elimination: its last) */
  PetscInt     bnm, bR;          /* Bounds' results for this layout (bdone): computed once a layout, not a setup */
  PetscCount   bnu;
  PetscBool    bdone;
  PetscInt     R;                /* its rows: the most active at once, or left over (Bounds) */
  PetscInt    *slotrow, *freeslot; /* the row (staircase order) in each window row; the free window rows (R) */
  PetscInt    *ulen;             /* step c's U row: ulen[c] entries (columns is + c ..), then its nL spike entries */
  PetscScalar *uval;             /* the U rows in step order, the pivot's reciprocal in the pivot's place */
  PetscCount   ucap, utot;       /* uval's capacity (Bounds') and use */
  PetscBool    inplace;          /* HsPCSetInPlace: U into the matrix' values as their rows join (URow) */
  PetscScalar *ua;               /* in place: the values of the matrix' owned columns (part 0), uan of them */
  PetscCount   uan, unin;        /* ... and U's entries there (URow) */
  char        *uin;              /* step c's U row is in place (else in uval) */
  char        *joined;           /* in place: local row l has joined the elimination (its values are read) */
  PetscInt    *piv;              /* step c (column is + c): its pivot row (staircase order) */
  PetscInt    *mstart, *mrow;    /* step c's multipliers: mrow/mval[mstart[c] .. mstart[c+1]) */
  PetscScalar *mval;
  PetscInt     mcap;             /* their capacity: Bounds' */
  PetscInt     alloc[7];         /* nrow, W, nL, nI, hi - lo, nred, R of the arrays here: kept while they fit */
  PetscInt    *leftover, nleft;  /* rows not used as pivots: the local rows of the reduced system */
  PetscInt    *leftslot;         /* their window rows */
  PetscMPIInt  size, rank;
  PetscInt    *lo_all, *hi_all, *rs_all, *re_all; /* every rank's spans (size each) */
  PetscInt    *ifs, *ife, *ioff, nred;            /* interface block r (between r-1 and r): [ifs, ife), at ioff */
  PetscInt     *nleft_all;
  HsBandMerge  *lev;                              /* the reduced system's levels (bandreduce.c), nlev of them */
  PetscInt      nlev, sendlev;                    /* ... and the level where this rank sends (nlev: rank 0) */
  HsBandGroup   cur, send;                        /* the current group; the group sent (its sizes) */
  PetscScalar  *g0;                               /* the leaf group's rows (this rank's left-over rows) */
  PetscInt     *g0ids, g0cap;
  PetscScalar  *xab, *xtmp;                       /* a solve's boundary values [x_A; x_B], and work */
  PetscScalar  *x;                                /* columns lo..hi of the solution (back substitution) */
  PetscScalar  *t;                                /* a solve's right-hand side (nrow) */
  PetscInt     *act;                              /* the active window rows of an elimination (R) */
  char         *spk;                              /* each window row's spike has a nonzero (R) */
  char         *uspk;                             /* step c's U row has a nonzero spike (nI) */
  PetscReal     spike_tol;                        /* -pc_hsband_spike_threshold (PivotSpike) */
  Vec           r, d;                             /* refinement's residual and correction */
  PetscInt      refine;                           /* -pc_hsband_refine (PETSC_DECIDE: by the band, RefineSteps) */
  PetscBool     fallback;                         /* -pc_hsband_fallback: MUMPS outside the limits */
  PetscBool     gather;                           /* -pc_hsband_fallback_gather: by PC hsgather (on > 1 rank) */
  PetscBool     defer;                            /* -pc_hsband_defer: factor at the first solve, no multipliers */
  PetscBool     pending;                          /* the factorization waits for that solve (Factor's head) */
  PetscBool     keep;                             /* a second solve came: every factorization keeps them now */
  PetscBool     have_l;                           /* these factors have their multipliers (mrow, mval) */
  PetscObjectState fstate;                        /* the matrix' state at the setup that deferred */
  PetscBool     prefetch;                         /* LoadRow prefetches (long rows, CSR read in place) */
  PetscBool     failed;                           /* the last factorization met a zero pivot */
  PetscBool     avx2, avx2_set;                   /* -pc_hsband_avx2, and whether given (UseAVX2) */
  PC            inner;                            /* that MUMPS LU, when used (else NULL) */
  char          why[256];                         /* why it is used */
  PetscBool     det_done;                         /* det_m, det_e computed for these factors */
  PetscBool     det_none;                         /* no determinant (the fallback without MUMPS) */
  PetscReal     det_m;                            /* det A = det_m 2^det_e (every rank; 0 if singular) */
  PetscInt      det_e;
  PetscBool     border;                           /* -pc_hsband_border: look for a dense border (bandborder.c) */
  HsBandBorder  bd;                               /* the border found in this pattern (NULL: none) */
} PC_HsBand;

/* bandelim.c: the kernel, called by the PC glue of pcband.c */
PetscErrorCode HsBandFree(PC_HsBand *b, PetscBool all);
PetscErrorCode HsBandAllocate(PC_HsBand *b);
PetscErrorCode HsBandLayout(PC pc, PC_HsBand *b, Mat A);
PetscInt       HsBandRefineSteps(const PC_HsBand *b);
PetscBool      HsBandUseAVX2(const PC_HsBand *b);
PetscErrorCode HsBandEliminateDefault(PC_HsBand *b, Mat A, PetscBool inplace, PetscScalar *t, PetscBool *zero);
#if defined(HS_BAND_AVX2)
PetscErrorCode HsBandEliminateAVX2(PC_HsBand *b, Mat A, PetscBool inplace, PetscScalar *t, PetscBool *zero);
#endif
PetscErrorCode HsBandDeterminant(PC pc, PC_HsBand *b);
PetscErrorCode HsBandLoadRHS(PC_HsBand *b, Vec xv);
PetscErrorCode HsBandComplete(PC pc, PC_HsBand *b, Vec yv);

/* bandreduce.c: the reduced system, by cyclic reduction over the ranks */
PetscErrorCode HsBandFactorReduced(PC pc, PC_HsBand *b, PetscBool *fail);
PetscErrorCode HsBandReducedSolve(PC pc, PC_HsBand *b, const PetscScalar *t);
PetscErrorCode HsBandFactorReducedLeaf(PC pc, PC_HsBand *b, PetscBool *fail); /* hsslab: a leaf of its own */
PetscErrorCode HsBandReducedSweeps(PC pc, PC_HsBand *b, const PetscScalar *t);
PetscErrorCode HsBandReducedDeterminant(PC pc, PC_HsBand *b, PetscReal *m, PetscInt *e, PetscInt *odd);
PetscErrorCode HsBandReducedFree(PC_HsBand *b);
PetscErrorCode HsBandReducedRegisterEvents(void);
/* bandborder.c: the bordered step (a free T's dense row and column) */
PetscErrorCode HsBandBorderDetect(PC pc, PC_HsBand *b, Mat A);
PetscErrorCode HsBandBorderSetUp(PC pc, PC_HsBand *b, PetscBool *ok);
PetscErrorCode HsBandBorderSolve(PC pc, PC_HsBand *b, Vec xv, Vec yv);
PetscErrorCode HsBandBorderDeterminant(PC pc, PC_HsBand *b, PetscBool *known);
PetscErrorCode HsBandBorderView(PC_HsBand *b, PetscViewer viewer);
PetscErrorCode HsBandBorderDestroy(PC_HsBand *b);

#endif
