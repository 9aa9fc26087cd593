/* hamshoot: the private header of floor sys/ (bvp/sys: files, number formatting, option helpers).
 *
 * The lowest floor of bvp/: it knows PETSc's options and the problems of problems/, and nothing of
 * HsSolver, the PCs or the drivers (tests/check_sources.py enforces it). Every function here is bvp/
 * internal; the public option checks (HsOptionsCheck*, HsOptionsInt, HsOptionsReal) are in hsbvp.h. */
#ifndef HSSYS_H
#define HSSYS_H

#include <stdio.h>

#include "../../problems/hstrajcsv.h" /* HsColumnName, the -hs_init reader */
#include "../hsbvp.h"

/* format.c: x as printf's "%.17g" writes it, faster; returns the length. */
int HsFormatG17(double x, char *buf);
/* format.c: appends src to the string in dst[size], truncating, always terminated; 1 if truncated (PETSc 3.18's
   PetscStrlcat bounds the copy by size - strlen(src), not by the room left, and writes past dst) */
int HsStrAppend(char *dst, size_t size, const char *src);

/* files.c: the output directory HsLockDirectory locked was replaced during the run */
int  HsLockedDirectoryReplaced(const char *dir);
/* files.c: files and directories of an output, made through a directory's descriptor (the locked one's: HsDirOpen) */
int  HsDirOpen(const char *dir, int create, int *fd, char *err, size_t len);
int   HsDirInsideLocked(const char *dir);
int  HsCreateUniqueAt(int dfd, char *name, int dir);
int  HsWriteFileAtomicAt(int dfd, const char *dir, const char *name, int (*write)(FILE *, void *), void *ctx, char *err,
                         size_t errlen);
int  HsWriteFileTempAt(int dfd, const char *dir, const char *name, int (*write)(FILE *, void *), void *ctx, char *tmp,
                       char *err, size_t errlen);
int  HsCheckSubdir(const char *dir, const char *name, char *err, size_t len);
int  HsDirectoryInUse(const char *dir);
int  HsLockDirectory(const char *dir, char *err, size_t len);
/* The first line of gnuplot.log, written by hamshoot before gnuplot's messages (HsCheckOutputFiles knows it by it) */
#define HS_GNUPLOT_LOG_HEAD "# gnuplot's messages, run by hamshoot\n"
/* The first lines of a generated gnuplot script after its comments: its PNGs are set as `set output hs_png('NAME')`,
   NAME itself when a user runs the script, a temporary when HsRunGnuplot does (it renames each one once whole) */
#define HS_GNUPLOT_PNG_FN                                                                                            \
  "# hs_png: a PNG's name; hamshoot runs this script with gnuplot -e \"hs_tmp='.tmp.XXXXXX'\" and moves each PNG\n" \
  "# from its temporary .NAME.tmp.XXXXXX to NAME once it is whole (never a torn PNG under its name)\n"              \
  "hs_png(name) = exists('hs_tmp') ? '.'.name.hs_tmp : name\n"
int  HsGnuplotPid(void); /* the gnuplot HsRunGnuplot waits for (0: none): the watchdog kills it; async-signal-safe */
int  HsRunGnuplot(int dfd, const char *dir, const char *script, const char *const *pngs, int n, int (*stop)(void),
                  char *err, size_t len);
void  HsJsonString(FILE *f, const char *v);
char *HsPrintable(char *s);
char *HsGnuplotString(const char *in, char *out, size_t len);

/* options.c */
PetscErrorCode HsOptionsChoice(PetscOptionItems *PetscOptionsObject, MPI_Comm comm, const char *key, const char *help,
                               const char *man, const char *const *choices, PetscInt n, PetscInt *idx, PetscBool *set);
PetscErrorCode HsOptionsListLength(PetscOptions options, const char prefix[], const char key[], PetscInt *n);
PetscErrorCode HsOptionsCheckRealList(MPI_Comm comm, PetscOptions options, const char prefix[], const char key[]);
PetscErrorCode HsOptionsCheckIntList(MPI_Comm comm, PetscOptions options, const char prefix[], const char key[]);

#endif
