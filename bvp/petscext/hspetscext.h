/* hamshoot: the private header of floor petscext/ (bvp/petscext: PETSc extensions).
 *
 * The PCs hsband (pcband.c, its elimination kernel in bandelim.c) and hsdrop (pcdrop.c), the line search
 * hsbt (linesearch.c), MUMPS helpers (mumps.c), the rows of an AIJ matrix as stored (aijparts.c) and the
 * questions any code may ask any PC (pcutils.c). It sits on sys/ and knows nothing of HsSolver
 * (tests/check_sources.py enforces it). */
#ifndef HSPETSCEXT_H
#define HSPETSCEXT_H

#include <petscksp.h>
#include <petscsnes.h>

#include "../sys/hssys.h"

/* The local rows of a SeqAIJ or MPIAIJ matrix as stored (aijparts.c): part[0] the matrix or its diagonal part,
   part[1] NULL or the off-diagonal part; CSR offsets ia, local columns ja (global: cstart + ja in part 0, colmap[ja] in
   part 1), values aa (wa: the same, writable, when got for writing); ok: another type, nothing got. */
typedef struct {
  Mat                part[2];
  const PetscInt    *ia[2], *ja[2], *colmap;
  const PetscScalar *aa[2];
  PetscScalar       *wa[2];
  PetscInt           cstart;
  PetscBool          ok, write;
} HsAIJParts;
PetscErrorCode HsAIJPartsGet(Mat A, PetscBool write, HsAIJParts *p);
/* dmutils.c: a vector with its ghost points, to read (X itself on one rank) */
PetscErrorCode HsDMGetGhosted(DM da, Vec X, Vec *Xl);
PetscErrorCode HsDMRestoreGhosted(DM da, Vec X, Vec *Xl);
PetscErrorCode HsAIJPartsRestore(HsAIJParts *p);
PetscErrorCode HsAIJCreateFromParts(MPI_Comm comm, PetscInt m, PetscInt *ia, PetscInt *ja, PetscInt *oi, PetscInt *oj,
                                    Mat *J);

/* mumps.c */
PetscErrorCode HsPCGetMumpsFactor(PC pc, Mat *F);
PetscErrorCode HsMumpsConfigure(Mat F, PetscInt icntl14);
PetscBool      HsMumpsWorkspaceShort(PetscInt info, PetscInt icntl14, PetscInt *next);
PetscErrorCode HsMumpsDeterminant(Mat F, PetscReal *m, PetscInt *e, PetscBool *known);

/* pcinner.c: the inner MUMPS LU of hsdrop and hsslab; the operator check of hamshoot's four PCs */
PetscErrorCode HsPCCheckAIJ(PC pc);
PetscErrorCode HsPCCreateMumpsLU(MPI_Comm comm, PC *inner);
PetscErrorCode HsPCSetUpMumpsLU(PC inner, PetscInt icntl14, PetscInt ordering, PCFailedReason *fr, PetscInt *info);
PetscErrorCode HsPCViewInner(PC inner, PetscViewer viewer);
PetscErrorCode HsPCInnerApplyTranspose(PC pc, PC inner, VecScatter perm, Vec w, Vec x, Vec y);
PetscErrorCode HsPCNoTranspose(PC pc, Vec x, Vec y);
PetscErrorCode HsKSPCheckTranspose(KSP ksp);

/* pcband.c, pcdrop.c, linesearch.c: the constructors (registered by HsInitializePackage, bvp/register.c) */
#define PCHSBAND "hsband" /* -pc_type hsband: the banded LU (pcband.c) */
#define PCHSDROP "hsdrop" /* -pc_type hsdrop: LU of the dropped matrix (pcdrop.c) */
PetscErrorCode PCCreate_HsBand(PC pc);
PetscErrorCode HsPCBandSetFallbackGather(PC pc, PetscBool flg);
PetscErrorCode PCCreate_HsDrop(PC pc);
#define PCHSSLAB                                                                                                       \
  "hsslab" /* -pc_type hsslab: slabs by sequential MUMPS, their interface by cyclic reduction (pcslab.c) */
#define HS_SLAB_ORDERING_DEFAULT 2 /* -pc_hsslab_ordering: MUMPS ICNTL(7) of a slab without interface (AMF) */
PetscErrorCode PCCreate_HsSlab(PC pc);
typedef struct {             /* dropmatch.c: the matching of hsdrop, the local columns' and the touched ghosts' */
  PetscInt rs, m, *colrow;   /* colrow[j]: the global row matched to column rs + j */
  PetscInt ng, *gcol, *grow; /* other ranks' columns touched by the local rows (ascending), and their rows */
  PetscInt sign;             /* the permutation's */
} HsDropMatching;
#define PCHSGATHER                                                                                                     \
  "hsgather" /* -pc_type hsgather: the whole operator's LU by sequential MUMPS on every rank (pcgather.c) */
PetscErrorCode PCCreate_HsGather(PC pc);
PetscErrorCode HsDropMatch(MPI_Comm comm, PetscInt M, PetscInt m, const PetscInt *kstart, const PetscInt *kcol,
                           const PetscScalar *kval, HsDropMatching *mt);
PetscErrorCode HsDropMatchRelabel(const HsDropMatching *mt, PetscInt nz, PetscInt *kcol);
PetscErrorCode HsDropMatchingFree(HsDropMatching *mt);
#define SNESLINESEARCHHSBT "hsbt" /* the Newton formulations' line search */
PetscErrorCode SNESLineSearchCreate_HsBT(SNESLineSearch ls);
PetscErrorCode HsSNESExactDirection(SNES snes, PetscBool *exact);

/* pcutils.c: what any code may ask any PC (composed functions), and the Newton formulations' KSP */
PetscErrorCode HsPCGetInner(PC pc, PC *inner);
PetscErrorCode HsPCRequestDeterminant(PC pc);
PetscErrorCode HsPCGetDeterminant(PC pc, PetscReal *m, PetscInt *e, PetscBool *known);
PetscErrorCode HsPCHasInPlace(PC pc, PetscBool *has);
PetscErrorCode HsPCSetInPlace(PC pc, PetscBool flg);
PetscErrorCode HsPCIsExact(PC pc, PetscBool *exact);
PetscErrorCode HsPCBorrowWork(PC pc, PC lender);
PetscErrorCode HsPCGetDropped(PC pc, PC *inner, PetscInt *kept, PetscInt *stored, PetscInt *patterns);
PetscErrorCode HsKSPSetLinearSolver(KSP ksp, HsLinearSolver ls);
PetscErrorCode HsKSPReadsOperator(KSP ksp, PetscBool *reads);

#endif
