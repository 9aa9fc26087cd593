/* hamshoot: the local rows of an AIJ matrix as they are stored, read or written in place (bvp/ internal).
 *
 * The CSR arrays of a SeqAIJ matrix, or of the diagonal and off-diagonal SeqAIJ parts of an MPIAIJ one: local
 * row i's entries are part q's ia[q][i] .. ia[q][i + 1] - 1, global column cstart + ja[0][k] (part 0) or
 * colmap[ja[1][k]] (part 1). hsband reads the Jacobian so (a MatGetRow call per row, with MPIAIJ's merge of the
 * two parts into global order, took as long as the elimination: pendulum, N = 1e5, 0.116 s on 1 rank, 0.10 s
 * on 2; measured), and the transcription writes its values so (no MatSetValuesRow per row).
 */
#include "hspetscext.h"

/*@ HsAIJPartsGet - p's arrays of A (file head), values writable if write (until HsAIJPartsRestore, which then
    invalidates the parts' cached diagonals and moves their states; the caller moves A's own). A matrix of another
    type, or whose parts do not give their row offsets, gives p->ok = PETSC_FALSE and nothing to restore. Not
    collective. @*/
PetscErrorCode HsAIJPartsGet(Mat A, PetscBool write, HsAIJParts *p)
{
  PetscBool mpi, seq, done;
  PetscInt  n;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(p, sizeof *p));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &seq));
  if (!mpi && !seq)
    PetscFunctionReturn(0);
  p->part[0] = A, p->write = write;
  if (mpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, &p->part[0], &p->part[1], &p->colmap));
    PetscCall(MatGetOwnershipRangeColumn(A, &p->cstart, NULL));
  }
  p->ok = PETSC_TRUE;
  for (PetscInt q = 0; q < 2 && p->part[q]; q++) {
    PetscCall(MatGetRowIJ(p->part[q], 0, PETSC_FALSE, PETSC_FALSE, &n, &p->ia[q], &p->ja[q], &done));
    if (write) {
      PetscCall(MatSeqAIJGetArray(p->part[q], &p->wa[q]));
      p->aa[q] = p->wa[q];
    } else
      PetscCall(MatSeqAIJGetArrayRead(p->part[q], &p->aa[q]));
    p->ok = (PetscBool)(p->ok && done);
  }
  PetscFunctionReturn(0);
}

/*@ HsAIJPartsRestore - gives back HsAIJPartsGet's arrays. Not collective. @*/
PetscErrorCode HsAIJPartsRestore(HsAIJParts *p)
{
  PetscBool done;
  PetscInt  n;

  PetscFunctionBeginUser;
  for (PetscInt q = 0; q < 2 && p->part[q]; q++) {
    PetscCall(MatRestoreRowIJ(p->part[q], 0, PETSC_FALSE, PETSC_FALSE, &n, &p->ia[q], &p->ja[q], &done));
    if (p->write)
      PetscCall(MatSeqAIJRestoreArray(p->part[q], &p->wa[q]));
    else
      PetscCall(MatSeqAIJRestoreArrayRead(p->part[q], &p->aa[q]));
  }
  PetscCall(PetscMemzero(p, sizeof *p));
  PetscFunctionReturn(0);
}

/* A composed container that frees p with A (PetscFree) */
static PetscErrorCode Own(Mat A, const char *name, void *p)
{
  PetscContainer c;

  PetscFunctionBeginUser;
  PetscCall(PetscContainerCreate(PetscObjectComm((PetscObject)A), &c));
  PetscCall(PetscContainerSetPointer(c, p));
  PetscCall(PetscContainerSetUserDestroy(c, PetscContainerUserDestroyDefault));
  PetscCall(PetscObjectCompose((PetscObject)A, name, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(0);
}

/*@ HsAIJCreateFromParts - a square AIJ matrix of m local rows on comm from CSR arrays in the file head's form: ia, ja
    (the owned columns' part, local indices) and oi, oj (the others', global indices; empty on one rank), all
    PetscMalloc'd; the values are allocated zeroed. *J takes the six arrays over and frees them when it
    is destroyed (the transcriptions' Jacobians: their patterns, laid out once, filled in place by HsAIJPartsGet).
    Collective. @*/
PetscErrorCode HsAIJCreateFromParts(MPI_Comm comm, PetscInt m, PetscInt *ia, PetscInt *ja, PetscInt *oi, PetscInt *oj,
                                    Mat *J)
{
  PetscMPIInt  size;
  PetscScalar *a, *oa;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscCalloc1(ia[m] + 1, &a));
  PetscCall(PetscCalloc1(oi[m] + 1, &oa));
  if (size == 1)
    PetscCall(MatCreateSeqAIJWithArrays(comm, m, m, ia, ja, a, J));
  else
    PetscCall(MatCreateMPIAIJWithSplitArrays(comm, m, m, PETSC_DETERMINE, PETSC_DETERMINE, ia, ja, a, oi, oj, oa, J));
  PetscCall(Own(*J, "hs_ia", ia));
  PetscCall(Own(*J, "hs_ja", ja));
  PetscCall(Own(*J, "hs_a", a));
  PetscCall(Own(*J, "hs_oi", oi));
  PetscCall(Own(*J, "hs_oj", oj));
  PetscCall(Own(*J, "hs_oa", oa));
  PetscFunctionReturn(0);
}
