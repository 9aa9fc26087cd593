/* hamshoot: the inner MUMPS LU that PCs hsdrop and hsslab share (floor petscext/, issue 44): hsdrop factors its
 * dropped matrix by it, hsslab falls back to it outside its limits. One creation, one configuration of the factor
 * (hamshoot's MUMPS settings, the determinant, an ordering), one set-up that reports MUMPS' INFOG(1) on failure,
 * one view. */
#include "hspetscext.h"

/*@ HsPCCheckAIJ - pc's preconditioning matrix is an assembled AIJ matrix (seqaij, mpiaij or a type derived from
    them), which hsband, hsdrop, hsslab and hsgather read by their rows; otherwise an error naming the PC, the matrix
    type and the usual cause (bvp/ internal; at the top of their set-ups). -pc_type hsband or hsdrop with the
    matrix-free shooting (-hs_shoot_mf: a shell matrix) had read a shell's data as AIJ rows and crashed (SEGV; issue
    38, round 21), hsslab and hsgather ended in PETSc's "No method createsubmatrices for Mat of type shell".
    Collective. @*/
PetscErrorCode HsPCCheckAIJ(PC pc)
{
  PetscBool   seq, mpi;
  const char *mtype, *pctype;
  Mat         P;

  PetscFunctionBeginUser;
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)P, MATSEQAIJ, &seq));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)P, MATMPIAIJ, &mpi));
  if (seq || mpi)
    PetscFunctionReturn(0);
  PetscCall(MatGetType(P, &mtype));
  PetscCall(PCGetType(pc, &pctype));
  SETERRQ(PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
          "-pc_type %s factors an assembled AIJ matrix, and this solve's preconditioning matrix is of type %s (a "
          "matrix-free Jacobian: -hs_shoot_mf, -snes_mf): leave out one of them",
          pctype, mtype ? mtype : "unknown");
}

/*@ HsPCCreateMumpsLU - a new PC on comm: LU, by MUMPS where PETSc has it (bvp/ internal). Collective.
@*/
PetscErrorCode HsPCCreateMumpsLU(MPI_Comm comm, PC *inner)
{
  PetscFunctionBeginUser;
  PetscCall(PCCreate(comm, inner));
  PetscCall(PCSetType(*inner, PCLU));
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(PCFactorSetMatSolverType(*inner, MATSOLVERMUMPS));
#endif
  PetscFunctionReturn(0);
}

/*@ HsPCSetUpMumpsLU - sets up the inner PC (it needs its operators): its MUMPS factor, if it is one, with
    hamshoot's settings (HsMumpsConfigure: icntl14), the determinant asked for (ICNTL(33) = 1) and, for
    ordering >= 0, MUMPS' ICNTL(7) = ordering (-mat_mumps_icntl_7 overrides); *fr its failed reason and *info
    MUMPS' INFOG(1) where it failed (else 0) (bvp/ internal). Collective.
@*/
PetscErrorCode HsPCSetUpMumpsLU(PC inner, PetscInt icntl14, PetscInt ordering, PCFailedReason *fr, PetscInt *info)
{
  Mat F;

  PetscFunctionBeginUser;
  *info = 0;
  PetscCall(HsPCGetMumpsFactor(inner, &F));
  if (F) {
    PetscCall(HsMumpsConfigure(F, icntl14));
#if defined(PETSC_HAVE_MUMPS)
    PetscCall(MatMumpsSetIcntl(F, 33, 1));
    if (ordering >= 0)
      PetscCall(MatMumpsSetIcntl(F, 7, ordering));
#endif
  }
  PetscCall(PCSetUp(inner));
  PetscCall(PCGetFailedReason(inner, fr));
#if defined(PETSC_HAVE_MUMPS)
  if (F && *fr)
    PetscCall(MatMumpsGetInfog(F, 1, info));
#endif
  PetscFunctionReturn(0);
}

/*@ HsPCViewInner - the inner PC's view one tab further in (nothing for a NULL inner; bvp/ internal). Collective.
@*/
PetscErrorCode HsPCViewInner(PC inner, PetscViewer viewer)
{
  PetscFunctionBeginUser;
  if (!inner)
    PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PCView(inner, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/* What to use instead, in the messages of a transposed solve hamshoot's PC cannot make. */
#define HS_TRANSPOSE_ALTERNATIVES                                                                                      \
  "a Krylov method that applies the preconditioner only (-ksp_type gmres, fgmres, bcgs, tfqmr or preonly), or "        \
  "-pc_type hsdrop, hsgather or lu, whose LU solves transposed"

/*@ HsPCInnerApplyTranspose - y = inner^-T Q^T x for hsdrop and hsgather (bvp/ internal): their LU's transposed
    solve, after the reverse of the scatter perm (y[j] = z[colrow[j]]: Q) into w, if perm. An inner PC without a
    transposed solve (the user's -hsdrop_pc_type) is an error naming it and what works, not PETSc's "No method
    applytranspose" (issue 38, round 21). Collective. @*/
PetscErrorCode HsPCInnerApplyTranspose(PC pc, PC inner, VecScatter perm, Vec w, Vec x, Vec y)
{
  PetscBool   has;
  const char *type, *itype;

  PetscFunctionBeginUser;
  PetscCall(PCApplyTransposeExists(inner, &has));
  if (!has) {
    PetscCall(PCGetType(pc, &type));
    PetscCall(PCGetType(inner, &itype));
    SETERRQ(PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
            "this Krylov method applies the preconditioner's transpose, and -pc_type %s's inner PC, of type %s, has no "
            "transposed solve: use its default inner LU, or " HS_TRANSPOSE_ALTERNATIVES,
            type, itype ? itype : "none");
  }
  if (!perm) {
    PetscCall(PCApplyTranspose(inner, x, y));
    PetscFunctionReturn(0);
  }
  PetscCall(VecScatterBegin(perm, x, w, INSERT_VALUES, SCATTER_REVERSE)); /* w = Q^T x: w[colrow[j]] = x[j] */
  PetscCall(VecScatterEnd(perm, x, w, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(PCApplyTranspose(inner, w, y));
  PetscFunctionReturn(0);
}

/*@ HsPCNoTranspose - the transposed apply of hsband and hsslab, which have none (their eliminations and spikes run
    one way; a transposed one would be a second implementation): an error naming the PC and what works (bvp/
    internal). A KSP known to need it is refused before the solve (HsKSPCheckTranspose); this catches the other
    ways there (a nested KSP, KSPSolveTranspose). Before: PETSc's "No method applytranspose for PC of type hsband"
    (issue 38, round 21). Collective. @*/
PetscErrorCode HsPCNoTranspose(PC pc, Vec x, Vec y)
{
  const char *type;

  PetscFunctionBeginUser;
  (void)x, (void)y;
  PetscCall(PCGetType(pc, &type));
  SETERRQ(PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
          "this Krylov method applies the preconditioner's transpose, which -pc_type %s cannot (its elimination has no "
          "transposed solve): use " HS_TRANSPOSE_ALTERNATIVES,
          type);
}

/*@ HsKSPCheckTranspose - before the solve: a Krylov method that applies its preconditioner's transpose in every
    solve (PETSc 3.18: bicg and ibcgs, measured with each KSP type of PETSc on the pendulum) with hsband or hsslab
    (which have none) or with conserving4's condensed hsband (the PCSHELL hscondense, order4cond.c), or with hsdrop or
    hsgather whose inner PC has none, is an error naming the KSP type, the PC and what works (bvp/ internal).
    Collective. @*/
PetscErrorCode HsKSPCheckTranspose(KSP ksp)
{
  static const char *const transposing[] = {KSPBICG, KSPIBCGS};
  const char              *prefix, *ktype, *ptype;
  PetscBool                match = PETSC_FALSE, lu, none, has, shell;
  PC                       pc, inner;

  PetscFunctionBeginUser;
  for (size_t i = 0; i < sizeof transposing / sizeof transposing[0] && !match; i++)
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp, transposing[i], &match));
  if (!match)
    PetscFunctionReturn(0);
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &lu, PCHSDROP, PCHSGATHER, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &none, PCHSBAND, PCHSSLAB, ""));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &shell));
  if (shell) { /* conserving4's condensed LU (-hs_condense, order4cond.c): a shell with no transposed apply */
    const char *name = NULL;
    PetscCall(PCShellGetName(pc, &name));
    none = (PetscBool)(name && !strcmp(name, "hscondense"));
  }
  if (!lu && !none)
    PetscFunctionReturn(0);
  has = PETSC_FALSE;
  if (lu) { /* their transposed solve is their inner LU's */
    PetscCall(HsPCGetInner(pc, &inner));
    if (inner)
      PetscCall(PCApplyTransposeExists(inner, &has));
  }
  if (has)
    PetscFunctionReturn(0);
  PetscCall(PCGetType(pc, &ptype));
  if (shell) /* named as the user knows it: the default hsband, condensed (-hs_condense false takes hsband itself) */
    ptype = "hsband (condensed by -hs_condense)";
  PetscCall(KSPGetType(ksp, &ktype));
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
          "-%sksp_type %s applies the preconditioner's transpose, which -%spc_type %s cannot (%s has no transposed "
          "solve): use " HS_TRANSPOSE_ALTERNATIVES,
          prefix ? prefix : "", ktype, prefix ? prefix : "", ptype, lu ? "its inner PC" : "its elimination");
}
