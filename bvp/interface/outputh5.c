/* hamshoot: trajectory.h5, the solution written by every rank into one HDF5 file (-hs_output_format hdf5,
 * docs/output-format.md), and read back by -hs_init.
 *
 * Each rank computes the rows of the nodes it owns in Xnodes (the states, E_k - W_k, and for the intervals that
 * begin there the controls, the costates, H^d) from its own part and the first state of the next rank's part (one
 * row, a VecScatter), into distributed Vecs, one dataset at a time, written into the file of PETSc's HDF5 viewer by
 * hyperslab (WriteContiguous: collective; not VecView, whose one chunk of the whole dataset HDF5 allocates on every
 * rank): no rank holds more than its part of the trajectory. W_k, the discrete work before node k, is the rank's own
 * sum plus MPI_Exscan of the ranks before it. -hs_init: rank 0 reads the file once through one checked descriptor,
 * checks and reads it with the HDF5 library from that image in memory, and broadcasts the rows. */
#include "hsbvpimpl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(PETSC_HAVE_HDF5) && defined(HS_HAVE_HDF5)
#include <petscviewerhdf5.h>

#define HS_H5_FORMAT "hamshoot trajectory 1" /* the attribute "format" on "/": what -hs_init knows the file by */

/* The datasets of trajectory.h5 and their columns (the CSV's names): node quantities N + 1 rows, interval ones N. */
enum { DS_T, DS_STATES, DS_EW, DS_NU, DS_TMID, DS_CONTROLS, DS_COSTATES, DS_H, DS_GAMMA, DS_COUNT };
static const char *const DsName[DS_COUNT] = {"t",        "states",   "E_minus_W", "nu",   "t_mid",
                                             "controls", "costates", "H",         "gamma"};

/* The nodes this rank owns in Xnodes: k0 .. k0 + nn - 1; *ni the intervals that begin there (not node N). */
static PetscErrorCode OwnedNodes(HsSolver s, PetscInt *k0, PetscInt *nn, PetscInt *ni)
{
  PetscInt lo, hi, w = 4 * s->prob->n;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(s->Xnodes, &lo, &hi));
  *k0 = lo / w, *nn = (hi - lo) / w;
  *ni = *nn - (*nn && *k0 + *nn == s->N + 1 ? 1 : 0);
  PetscFunctionReturn(0);
}

/* The states of node k0 + nn (the next rank's first: x_{k+1} of this rank's last interval) into *next, a sequential
 * Vec of 2n values (empty on the rank that owns node N). Collective. */
static PetscErrorCode NextNodeStates(HsSolver s, PetscInt k0, PetscInt nn, Vec *next)
{
  PetscInt   dim = 2 * s->prob->n, want = k0 + nn <= s->N ? dim : 0;
  IS         is;
  VecScatter sc;

  PetscFunctionBeginUser;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, want, next));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, want, (k0 + nn) * 2 * dim, 1, &is));
  PetscCall(VecScatterCreate(s->Xnodes, is, *next, NULL, &sc));
  PetscCall(VecScatterBegin(sc, s->Xnodes, *next, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, s->Xnodes, *next, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(0);
}

/* The controls of the owned intervals into U (ni x m, a distributed Vec): from s->U0 where the formulation has its
 * own controls (ipopt: on rank 0, where they are; sent to their owners by VecSetValues), else nothing. */
static PetscErrorCode OwnControls(HsSolver s, Vec U, PetscBool *own)
{
  PetscMPIInt rank;
  PetscInt    m = s->prob->m, have = s->U0 ? 1 : 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)s), &rank));
  PetscCallMPI(MPI_Bcast(&have, 1, MPIU_INT, 0, PetscObjectComm((PetscObject)s)));
  *own = (PetscBool)(have != 0);
  if (!have || !U)
    PetscFunctionReturn(0);
  if (!rank)
    for (PetscInt k = 0; k < s->N; k++)
      PetscCall(VecSetValuesBlocked(U, 1, &k, s->U0 + k * m, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(U));
  PetscCall(VecAssemblyEnd(U));
  PetscFunctionReturn(0);
}

/* The quantities of interval k (nodes xk, xk1, costates lk; u: the formulation's controls, at uo, or NULL) into uo (m),
 * *H and *w (its work); NaN where an evaluation leaves the domain (the CSV's values are undefined there too). */
static void IntervalValues(HsSolver s, PetscInt k, const PetscScalar *xk, const PetscScalar *xk1, const PetscScalar *lk,
                           PetscBool own, PetscScalar *uo, PetscScalar *H, PetscReal *w)
{
  int st;

  if (own)
    st = HsDiscHamiltonianU(s->disc, (int)k, xk, xk1, lk, uo, H) || HsDiscWorkU(s->disc, xk, xk1, uo, w);
  else
    st = HsDiscControl(s->disc, xk, xk1, lk, uo) || HsDiscHamiltonian(s->disc, (int)k, xk, xk1, lk, H) ||
         HsDiscWork(s->disc, xk, xk1, lk, w);
  if (st) {
    *H = NAN, *w = NAN;
    for (PetscInt i = 0; i < s->prob->m && !own; i++)
      uo[i] = NAN;
  }
}

/* What every dataset is filled from: this rank's nodes k0 .. k0 + nn - 1 (ni intervals) in x (Xnodes) and y (Xmult,
 * or NULL), the next rank's first states nx, the formulation's controls U (or NULL: from the costates), and W0, the
 * discrete work before node k0. */
typedef struct {
  PetscInt           k0, nn, ni;
  const PetscScalar *x, *nx, *y;
  Vec                U;
  PetscReal          W0;
} Part;

/* Dataset d as a new distributed Vec *v (rows x bs: the owned nodes, or the intervals that begin there), named. */
static PetscErrorCode CreateDataset(HsSolver s, const Part *p, int d, Vec *v)
{
  PetscInt       dim = 2 * s->prob->n, nc = s->Xmult ? s->prob->nc : 0;
  const PetscInt bs[DS_COUNT] = {1, dim, 1, nc, 1, s->prob->m, dim, 1, nc};
  PetscInt       rows = d < DS_TMID ? p->nn : p->ni, all = d < DS_TMID ? s->N + 1 : s->N;

  PetscFunctionBeginUser;
  PetscCall(VecCreate(PetscObjectComm((PetscObject)s), v));
  PetscCall(VecSetSizes(*v, rows * bs[d], all * bs[d]));
  PetscCall(VecSetBlockSize(*v, bs[d]));
  PetscCall(VecSetType(*v, VECMPI));
  PetscCall(PetscObjectSetName((PetscObject)*v, DsName[d]));
  PetscFunctionReturn(0);
}

/* The work of this rank's intervals summed (*W), with the formulation's controls u (NULL: from the costates). */
static PetscErrorCode LocalWork(HsSolver s, const Part *p, const PetscScalar *u, PetscReal *W)
{
  PetscInt     dim = 2 * s->prob->n, m = s->prob->m;
  PetscScalar *uo, H;
  PetscReal    w;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(m, &uo));
  *W = 0;
  for (PetscInt j = 0; j < p->ni; j++) {
    const PetscScalar *xk = p->x + j * 2 * dim, *xk1 = j + 1 < p->nn ? xk + 2 * dim : p->nx;
    if (u)
      PetscCall(PetscArraycpy(uo, u + j * m, m));
    IntervalValues(s, p->k0 + j, xk, xk1, xk + dim, (PetscBool)(u != NULL), uo, &H, &w);
    *W += w;
  }
  PetscCall(PetscFree(uo));
  PetscFunctionReturn(0);
}

/* The rows of dataset d of this rank into a (CreateDataset's layout); u the formulation's controls or NULL. */
static PetscErrorCode FillDataset(HsSolver s, const Part *p, int d, const PetscScalar *u, PetscScalar *a)
{
  PetscInt     dim = 2 * s->prob->n, m = s->prob->m, nc = s->Xmult ? s->prob->nc : 0;
  PetscScalar *uo, H;
  PetscReal    W = p->W0, w, E;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(m, &uo));
  for (PetscInt j = 0; j < (d < DS_TMID ? p->nn : p->ni); j++) {
    const PetscScalar *xk = p->x + j * 2 * dim, *xk1 = j + 1 < p->nn ? xk + 2 * dim : p->nx;
    if (d == DS_T)
      a[j] = s->res.T * (PetscReal)(p->k0 + j) / s->N;
    else if (d == DS_STATES || d == DS_COSTATES)
      PetscCall(PetscArraycpy(a + j * dim, xk + (d == DS_COSTATES ? dim : 0), dim));
    else if (d == DS_NU || d == DS_GAMMA)
      for (PetscInt i = 0; i < nc; i++)
        a[j * nc + i] = p->y[j * 2 * nc + (d == DS_GAMMA ? nc : 0) + i];
    else if (d == DS_TMID)
      a[j] = s->res.T * (p->k0 + j + 0.5) / s->N;
    else if (d == DS_EW) /* E_k - W_k, W_k the work of the intervals before node k */
      a[j] = HsDiscEnergy(s->disc, xk, &E) ? NAN : E - W;
    if (d == DS_EW ? j < p->ni : d == DS_CONTROLS || d == DS_H) {
      if (u)
        PetscCall(PetscArraycpy(uo, u + j * m, m));
      IntervalValues(s, p->k0 + j, xk, xk1, xk + dim, (PetscBool)(u != NULL), uo, &H, &w);
      if (d == DS_CONTROLS)
        PetscCall(PetscArraycpy(a + j * m, uo, m));
      else if (d == DS_H)
        a[j] = H;
      W += w;
    }
  }
  PetscCall(PetscFree(uo));
  PetscFunctionReturn(0);
}

/* The column names of dataset d, comma-separated (the CSV's), into buf[len]. */
static void Columns(HsSolver s, int d, char *buf, size_t len)
{
  const HsProblem *P = s->prob;
  char             name[HS_NAME_LEN + 16];
  int              cols = d == DS_STATES || d == DS_COSTATES ? 2 * P->n : d == DS_CONTROLS ? P->m : P->nc;

  buf[0] = 0;
  if (d == DS_T || d == DS_EW || d == DS_TMID || d == DS_H) {
    snprintf(buf, len, "%s", DsName[d]);
    return;
  }
  for (int i = 0; i < cols; i++) {
    if (d == DS_STATES || d == DS_COSTATES)
      HsColumnName(P, d == DS_COSTATES, i, 0, name, sizeof name);
    else
      snprintf(name, sizeof name, "%s%d", d == DS_CONTROLS ? "u" : DsName[d], i + 1);
    if (i)
      HsStrAppend(buf, len, ",");
    HsStrAppend(buf, len, name);
  }
}

/* The file's own attributes on "/": what it is, the problem, N, T, n, m and the constraints' count. */
static PetscErrorCode WriteRootAttributes(HsSolver s, PetscViewer v)
{
  PetscInt  N = s->N, n = s->prob->n, m = s->prob->m, nc = s->Xmult ? s->prob->nc : 0;
  PetscReal T = s->res.T;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "format", PETSC_STRING, HS_H5_FORMAT));
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "problem", PETSC_STRING, s->prob->name));
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "N", PETSC_INT, &N));
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "n", PETSC_INT, &n));
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "m", PETSC_INT, &m));
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "nc", PETSC_INT, &nc));
  PetscCall(PetscViewerHDF5WriteAttribute(v, "/", "T", PETSC_REAL, &T));
  PetscFunctionReturn(0);
}

/* An HDF5 call that failed (a negative return) as a PETSc error naming it. */
#define HsCallH5(call)                                                                                                 \
  do {                                                                                                                 \
    if ((call) < 0)                                                                                                    \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "HDF5: %s failed", #call);                                               \
  } while (0)

/* The rows of D (this rank's, in the ownership of D: all x bs in all) as the dataset name of v's file, contiguous, not
 * filled, each rank writing its hyperslab, collectively. Not VecView: PETSc 3.18 makes the whole dataset one chunk (up
 * to 4 GiB), which HDF5 allocates and fills on every rank, O(N) a rank (+32 MB a rank for states at N = 2e6). 2-D
 * (all x bs) when dim2 or bs > 1, else 1-D. */
static PetscErrorCode WriteContiguous(PetscViewer v, Vec D, const char *name, PetscInt all, PetscInt bs, PetscBool dim2)
{
  hid_t              fid, fsp, msp, dset, dcpl, dxpl;
  int                nd = dim2 || bs > 1 ? 2 : 1;
  PetscInt           lo, hi;
  hsize_t            dims[2] = {(hsize_t)all, (hsize_t)bs}, start[2] = {0, 0}, count[2] = {0, (hsize_t)bs};
  const PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(D, &lo, &hi));
  start[0] = (hsize_t)(lo / bs), count[0] = (hsize_t)((hi - lo) / bs);
  PetscCall(PetscViewerHDF5GetFileId(v, &fid));
  HsCallH5(fsp = H5Screate_simple(nd, dims, NULL));
  HsCallH5(dcpl = H5Pcreate(H5P_DATASET_CREATE));
  HsCallH5(H5Pset_layout(dcpl, H5D_CONTIGUOUS));
  HsCallH5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER)); /* every value is written */
  /* no object times (HDF5 records each dataset's creation and modification time by default): two runs of one
     command write the same bytes (round 29: 7 bytes of the file differed between two runs a second apart) */
  HsCallH5(H5Pset_obj_track_times(dcpl, 0));
  HsCallH5(dset = H5Dcreate2(fid, name, H5T_IEEE_F64LE, fsp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  HsCallH5(count[0] ? H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL) : H5Sselect_none(fsp));
  HsCallH5(msp = H5Screate_simple(nd, count, NULL));
  HsCallH5(dxpl = H5Pcreate(H5P_DATASET_XFER));
  HsCallH5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  PetscCall(VecGetArrayRead(D, &a));
  HsCallH5(H5Dwrite(dset, H5T_NATIVE_DOUBLE, msp, fsp, dxpl, a));
  PetscCall(VecRestoreArrayRead(D, &a));
  HsCallH5(H5Pclose(dxpl));
  HsCallH5(H5Sclose(msp));
  HsCallH5(H5Dclose(dset));
  HsCallH5(H5Pclose(dcpl));
  HsCallH5(H5Sclose(fsp));
  PetscFunctionReturn(0);
}

/* Dataset d written through v (WriteContiguous: a distributed Vec, collective), with its attribute "columns" (cols,
 * len). */
static PetscErrorCode WriteDataset(HsSolver s, const Part *p, int d, PetscViewer v, char *cols, size_t len)
{
  Vec                D = NULL;
  PetscScalar       *a;
  const PetscScalar *u = NULL;
  char               dset[64];
  PetscInt           bs, all;

  PetscFunctionBeginUser;
  if (d == DS_CONTROLS && p->U) /* the formulation's own: written as they are */
    D = p->U;
  else {
    PetscCall(CreateDataset(s, p, d, &D));
    if (p->U)
      PetscCall(VecGetArrayRead(p->U, &u));
    PetscCall(VecGetArray(D, &a));
    PetscCall(FillDataset(s, p, d, u, a));
    PetscCall(VecRestoreArray(D, &a));
    if (p->U)
      PetscCall(VecRestoreArrayRead(p->U, &u));
  }
  PetscCall(VecGetBlockSize(D, &bs));
  PetscCall(VecGetSize(D, &all));
  PetscCall(PetscSNPrintf(dset, sizeof dset, "/%s", DsName[d]));
  PetscCall(WriteContiguous(
      v, D, dset, all / bs, bs,
      (PetscBool)(d == DS_STATES || d == DS_COSTATES || d == DS_CONTROLS || d == DS_NU || d == DS_GAMMA)));
  Columns(s, d, cols, len);
  PetscCall(PetscViewerHDF5WriteAttribute(v, dset, "columns", PETSC_STRING, cols));
  if (D != p->U)
    PetscCall(VecDestroy(&D));
  PetscFunctionReturn(0);
}

/*@ HsSolverWriteTrajectoryHDF5 - the last solve's trajectory into the HDF5 file at path (created or truncated), each
    rank writing the rows of the nodes it owns (bvp/ internal; output.c makes the temporary name and renames it).

  Collective. Datasets (docs/output-format.md): t, states ((N+1) x 2n), E_minus_W, nu ((N+1) x nc) per node; t_mid,
  controls (N x m), costates (N x 2n), H, gamma (N x nc) per interval; each with an attribute "columns" (the CSV's
  names, comma-separated); on "/" the attributes format, problem, N, n, m, nc, T. One dataset at a time: beside the
  solution, a rank holds one dataset's part of its rows (and the formulation's own controls, for ipopt).
@*/
PetscErrorCode HsSolverWriteTrajectoryHDF5(HsSolver s, const char path[])
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)s);
  Part               p    = {0, 0, 0, NULL, NULL, NULL, NULL, 0};
  PetscViewer        v;
  Vec                next;
  PetscBool          own = PETSC_FALSE;
  PetscMPIInt        rank;
  PetscReal          W;
  const PetscScalar *u = NULL;
  char              *cols;
  size_t             len = (size_t)(2 * s->prob->n + s->prob->m + s->prob->nc + 2) * (HS_NAME_LEN + 16);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMalloc1(len, &cols));
  PetscCall(OwnedNodes(s, &p.k0, &p.nn, &p.ni));
  if (s->prob->m) /* the formulation's own controls (ipopt), if it has them */
    PetscCall(CreateDataset(s, &p, DS_CONTROLS, &p.U));
  PetscCall(OwnControls(s, p.U, &own));
  if (!own)
    PetscCall(VecDestroy(&p.U));
  PetscCall(NextNodeStates(s, p.k0, p.nn, &next));
  PetscCall(VecGetArrayRead(s->Xnodes, &p.x));
  PetscCall(VecGetArrayRead(next, &p.nx));
  if (s->Xmult)
    PetscCall(VecGetArrayRead(s->Xmult, &p.y));
  if (p.U)
    PetscCall(VecGetArrayRead(p.U, &u));
  PetscCall(LocalWork(s, &p, u, &W));
  if (p.U)
    PetscCall(VecRestoreArrayRead(p.U, &u));
  PetscCallMPI(MPI_Exscan(&W, &p.W0, 1, MPIU_REAL, MPIU_SUM, comm)); /* the work before this rank's first node */
  if (!rank)
    p.W0 = 0; /* MPI_Exscan leaves rank 0's undefined */
  PetscCall(PetscViewerHDF5Open(comm, path, FILE_MODE_WRITE, &v));
  PetscCall(WriteRootAttributes(s, v));
  for (int d = 0; d < DS_COUNT; d++)
    if ((d != DS_NU && d != DS_GAMMA && d != DS_CONTROLS) || (d == DS_CONTROLS && s->prob->m) ||
        (s->Xmult && s->prob->nc))
      PetscCall(WriteDataset(s, &p, d, v, cols, len));
  PetscCall(PetscViewerDestroy(&v));
  if (s->Xmult)
    PetscCall(VecRestoreArrayRead(s->Xmult, &p.y));
  PetscCall(VecRestoreArrayRead(next, &p.nx));
  PetscCall(VecRestoreArrayRead(s->Xnodes, &p.x));
  PetscCall(VecDestroy(&next));
  PetscCall(VecDestroy(&p.U));
  PetscCall(PetscFree(cols));
  PetscFunctionReturn(0);
}

/* The string attribute name of the object obj into buf[len]; 1 if absent, not a fixed-length string, or too long. */
static int StringAttribute(hid_t obj, const char *name, char *buf, size_t len)
{
  hid_t  a, ft, mt;
  size_t sz;
  int    bad = 1;

  if (H5Aexists(obj, name) <= 0 || (a = H5Aopen(obj, name, H5P_DEFAULT)) < 0)
    return 1;
  if ((ft = H5Aget_type(a)) >= 0) {
    sz = H5Tget_size(ft);
    if (H5Tget_class(ft) == H5T_STRING && !H5Tis_variable_str(ft) && sz > 0 && sz < len &&
        (mt = H5Tcopy(H5T_C_S1)) >= 0) {
      bad     = H5Tset_size(mt, sz) < 0 || H5Aread(a, mt, buf) < 0;
      buf[sz] = 0;
      H5Tclose(mt);
    }
    H5Tclose(ft);
  }
  H5Aclose(a);
  return bad;
}

/* The numeric attribute name of obj (converted to double); 1 if absent or not a number. */
static int NumberAttribute(hid_t obj, const char *name, double *x)
{
  hid_t a, sp;
  int   bad = 1;

  if (H5Aexists(obj, name) <= 0 || (a = H5Aopen(obj, name, H5P_DEFAULT)) < 0)
    return 1;
  if ((sp = H5Aget_space(a)) >= 0) {
    hid_t ft = H5Aget_type(a);
    bad      = H5Sget_simple_extent_npoints(sp) != 1 || ft < 0 ||
          (H5Tget_class(ft) != H5T_INTEGER && H5Tget_class(ft) != H5T_FLOAT) || H5Aread(a, H5T_NATIVE_DOUBLE, x) < 0;
    if (ft >= 0)
      H5Tclose(ft);
    H5Sclose(sp);
  }
  H5Aclose(a);
  return bad || !isfinite(*x);
}

/* 0 if dataset d keeps its data in this file, as hamshoot writes it: no external storage, not virtual, and at least
 * count values' bytes allocated (not sparse, not compressed), so that reading it cannot open another file (a FIFO
 * there hangs) nor need more memory than the file's size. */
static int StoredHere(hid_t d, long long count)
{
  hid_t dcpl = H5Dget_create_plist(d), ty = H5Dget_type(d);
  int   bad = dcpl < 0 || ty < 0;

  if (!bad)
    bad = H5Pget_external_count(dcpl) != 0 || H5Pget_layout(dcpl) == H5D_VIRTUAL ||
          (long long)H5Dget_storage_size(d) < count * (long long)H5Tget_size(ty);
  if (ty >= 0)
    H5Tclose(ty);
  if (dcpl >= 0)
    H5Pclose(dcpl);
  return bad;
}

/* Dataset name of the file fid: a 2-D array rows x cols of floating-point numbers with the attribute "columns" naming
 * the columns of kind (0 states, 1 costates) of this problem (named or generic, as the CSV reader accepts them).
 * Returns 0, or 1 with a message. */
static int CheckDataset(hid_t fid, const char *path, const HsProblem *P, const char *name, int kind, long long rows,
                        char *msg, size_t len)
{
  hid_t      d, sp, ty;
  H5L_info_t li;
  hsize_t    dims[3] = {0, 0, 0};
  int        nd = -1, cls = -1, dim = 2 * P->n;
  char      *cols, want[2][HS_NAME_LEN + 16];

  if (H5Lexists(fid, name, H5P_DEFAULT) <= 0 || H5Lget_info(fid, name, &li, H5P_DEFAULT) < 0 ||
      li.type != H5L_TYPE_HARD || (d = H5Dopen2(fid, name, H5P_DEFAULT)) < 0)
    return snprintf(msg, len, "-hs_init %s: no dataset '%s' (not a trajectory.h5 written by hamshoot)", path, name), 1;
  if ((sp = H5Dget_space(d)) >= 0) {
    nd = H5Sget_simple_extent_ndims(sp);
    if (nd >= 1 && nd <= 3)
      H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
  }
  if ((ty = H5Dget_type(d)) >= 0)
    cls = H5Tget_class(ty), H5Tclose(ty);
  if (nd != 2 || cls != H5T_FLOAT || (long long)dims[0] != rows || (long long)dims[1] != dim) {
    snprintf(msg, len, "-hs_init %s: dataset '%s' is %s%d-D %llu x %llu, expected %lld x %d numbers (N = %lld, n = %d)",
             path, name, cls == H5T_FLOAT ? "" : "not floating point, ", nd, (unsigned long long)dims[0],
             (unsigned long long)dims[1], rows, dim, kind ? rows : rows - 1, P->n);
    H5Dclose(d);
    return 1;
  }
  if (StoredHere(d, rows * dim)) {
    H5Dclose(d);
    return snprintf(msg, len,
                    "-hs_init %s: dataset '%s' is not stored whole in the file (external, virtual, sparse or "
                    "compressed: hamshoot reads only what it writes)",
                    path, name),
           1;
  }
  cols = malloc((size_t)dim * (HS_NAME_LEN + 16) + 1);
  if (!cols || StringAttribute(d, "columns", cols, (size_t)dim * (HS_NAME_LEN + 16) + 1))
    snprintf(msg, len, "-hs_init %s: dataset '%s' has no attribute 'columns'", path, name);
  for (int i = 0, at = 0; i < dim && !msg[0]; i++) { /* the names, in order */
    size_t l = strcspn(cols + at, ",");
    HsColumnName(P, kind, i, 0, want[0], sizeof want[0]);
    HsColumnName(P, kind, i, 1, want[1], sizeof want[1]);
    if ((strlen(want[0]) != l || strncmp(cols + at, want[0], l)) &&
        (strlen(want[1]) != l || strncmp(cols + at, want[1], l)))
      snprintf(msg, len,
               "-hs_init %s: column %d of '%s' is '%.*s', this problem's is %s (a trajectory of another problem)", path,
               i + 1, name, (int)(l < 64 ? l : 64), cols + at, want[0]);
    at += (int)l + (cols[at + l] == ',');
  }
  free(cols);
  H5Dclose(d);
  HsPrintable(msg); /* the file's column name in it */
  return msg[0] != 0;
}

/* Rank 0: the whole file read into memory through the one descriptor HsFileOpenRegular opened and checked (a regular
 * file within the size cap, never a FIFO), then opened by HDF5 from that image (the core driver, no backing store):
 * nothing opens the path again, so a file swapped in after the check is never read. *fid the file, *img its image
 * (both to be released by the caller), or a message. */
/* The name HDF5's core driver is given for an image: it opens the name to refuse one that exists, so a name that can
 * never be opened (a component that is a device, not a directory): no path is looked up for the data. */
#define HS_H5_IMAGE_NAME "/dev/null/hs_init"

static void OpenImage(const char *path, hid_t *fid, void **img, char *msg, size_t len)
{
  FILE       *f;
  struct stat st;
  hid_t       fapl;

  *fid = -1, *img = NULL;
  if (!(f = HsFileOpenRegular(path, "-hs_init", HS_INIT_MAX_BYTES, msg, len))) /* no FIFO, device, directory */
    return;
  if (fstat(fileno(f), &st) || !(*img = malloc(st.st_size ? (size_t)st.st_size : 1)) ||
      fread(*img, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
    snprintf(msg, len, "-hs_init %s: cannot read %lld bytes: %s", path, (long long)st.st_size,
             *img ? "short read" : "out of memory");
  fclose(f);
  if (msg[0] || (fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0)
    return;
  if (H5Pset_fapl_core(fapl, 1 << 20, 0) < 0 || H5Pset_file_image(fapl, *img, (size_t)st.st_size) < 0 ||
      (*fid = H5Fopen(HS_H5_IMAGE_NAME, H5F_ACC_RDONLY, fapl)) < 0)
    snprintf(msg, len, "-hs_init %s: not a readable HDF5 file (not HDF5, or truncated or damaged)", path);
  H5Pclose(fapl);
}

/* Rank 0: dataset name (rows x dim, checked) into nodes (rows of 2 dim values, at offset off); 1 and a message if
 * unreadable or not finite. */
static int ReadDataset(hid_t fid, const char *path, const char *name, long long rows, int dim, int off,
                       PetscReal *nodes, char *msg, size_t len)
{
  hid_t   d   = H5Dopen2(fid, name, H5P_DEFAULT);
  double *a   = malloc((size_t)(rows * dim > 0 ? rows * dim : 1) * sizeof *a);
  int     bad = d < 0 || !a || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0;

  if (bad)
    snprintf(msg, len, "-hs_init %s: dataset '%s' cannot be read", path, name);
  for (long long k = 0; k < rows && !bad; k++)
    for (int i = 0; i < dim && !bad; i++)
      if (!isfinite(nodes[k * 2 * dim + off + i] = a[k * dim + i]))
        bad = 1, snprintf(msg, len, "-hs_init %s: dataset '%s', row %lld column %d: not a finite number", path, name,
                          k + 1, i + 1);
  free(a);
  if (d >= 0)
    H5Dclose(d);
  return bad;
}

/* Rank 0: the file's structure checked with the HDF5 library itself, its own error printing off (a message of ours
 * instead): an HDF5 file, the format attribute, N, n and T, the datasets' dimensions and columns; then its states and
 * costates into *nodes (PetscMalloc'd, NULL on an error). *Nsrc, *T the file's. */
static void CheckFile(const char *path, const HsProblem *P, PetscInt *Nsrc, PetscReal *T, PetscReal **nodes, char *msg,
                      size_t len)
{
  H5E_auto2_t fn;
  void       *data, *img;
  hid_t       fid;
  char        fmt[64] = "", prob[HS_NAME_LEN + 1] = "";
  double      N = -1, n = -1, t = 0;

  *nodes = NULL;
  H5Eget_auto2(H5E_DEFAULT, &fn, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  OpenImage(path, &fid, &img, msg, len);
  if (msg[0])
    ;
  else if (StringAttribute(fid, "format", fmt, sizeof fmt) || strcmp(fmt, HS_H5_FORMAT))
    snprintf(msg, len,
             "-hs_init %s: an HDF5 file, but not a trajectory.h5 written by hamshoot (no attribute format = '%s')",
             path, HS_H5_FORMAT);
  else if (NumberAttribute(fid, "N", &N) || NumberAttribute(fid, "n", &n) || NumberAttribute(fid, "T", &t) || N < 1 ||
           N != floor(N) || N > PETSC_MAX_INT / 8 || !(t > 0))
    snprintf(msg, len, "-hs_init %s: the attributes N, n, T are missing or wrong (N = %g, T = %g)", path, N, t);
  else if (n != P->n)
    snprintf(msg, len, "-hs_init %s: written for n = %g coordinates, this problem has n = %d", path, n, P->n);
  else if (!P->free_T && PetscAbsReal(t - P->T) > 1e-9 * PetscMax(1, PetscAbsReal(P->T)))
    snprintf(msg, len,
             "-hs_init %s: its final time is T = %.17g, but this problem's is T = %.17g (a trajectory of another T "
             "or another problem)",
             path, t, (double)P->T);
  else if (!CheckDataset(fid, path, P, "states", 0, (long long)N + 1, msg, len))
    CheckDataset(fid, path, P, "costates", 1, (long long)N, msg, len);
  if (!msg[0] && !StringAttribute(fid, "problem", prob, sizeof prob) && strcmp(prob, P->name))
    PetscPrintf(PETSC_COMM_SELF, "hamshoot: warning: -hs_init %s was written for problem '%s', this run solves '%s'\n",
                path, HsPrintable(prob), P->name);
  if (!msg[0] && (PetscCalloc1(((size_t)N + 1) * 4 * P->n, nodes) ||
                  ReadDataset(fid, path, "states", (long long)N + 1, 2 * P->n, 0, *nodes, msg, len) ||
                  ReadDataset(fid, path, "costates", (long long)N, 2 * P->n, 2 * P->n, *nodes, msg, len))) {
    if (!msg[0])
      snprintf(msg, len, "-hs_init %s: out of memory", path);
    PetscFree(*nodes);
  }
  if (fid >= 0)
    H5Fclose(fid);
  free(img);
  H5Eset_auto2(H5E_DEFAULT, fn, data);
  *Nsrc = msg[0] ? 0 : (PetscInt)N, *T = t;
}

/*@ HsIsTrajectoryH5 - whether the file at path is a trajectory.h5 that hamshoot wrote: an HDF5 file with the attribute
    format = HS_H5_FORMAT on "/" (HDF5's own error printing off); with fd >= 0, also the very file open as fd (the file
    HDF5 opened by the path, H5Fget_vfd_handle, has fd's device and inode: a path that another file or a link took
    since fd was opened is not). Another program's HDF5 file at that name is not, and an output does not replace it
    (HsCheckOutputFiles). Not collective; bvp/ internal. @*/
int HsIsTrajectoryH5(const char *path, int fd)
{
  H5E_auto2_t fn;
  void       *data, *handle = NULL;
  hid_t       fid;
  char        fmt[64] = "";
  int         ours    = 0;
  struct stat a, b;

  H5Eget_auto2(H5E_DEFAULT, &fn, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if ((fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0) {
    ours = !StringAttribute(fid, "format", fmt, sizeof fmt) && !strcmp(fmt, HS_H5_FORMAT);
    if (ours && fd >= 0) /* the default (sec2) driver's handle is its file descriptor */
      ours = H5Fget_vfd_handle(fid, H5P_DEFAULT, &handle) >= 0 && handle && !fstat(*(int *)handle, &a) &&
             !fstat(fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    H5Fclose(fid);
  }
  H5Eset_auto2(H5E_DEFAULT, fn, data);
  return ours;
}

/*@ HsSolverReadTrajectoryHDF5 - the initial guess of -hs_init from a trajectory.h5 (HsSolverWriteTrajectoryHDF5):
    *Nsrc intervals, nodes ((Nsrc + 1) rows (x_k, lambda_{k+1/2}) of 4n values, PetscMalloc'd, the same on every
    rank, as HsSolverSetInitialGuess keeps them) and the file's final time *T (bvp/ internal).

  Collective. Rank 0 alone opens the file, once (HsFileOpenRegular: a regular file, checked by fstat on the descriptor
  it reads), reads it whole through that descriptor and checks and reads it with the HDF5 library from memory
  (CheckFile: a file that is not HDF5, a truncated one, another problem's, other dimensions, a value not finite are
  errors naming it); the rows are then broadcast. No rank opens the path again, so a file or FIFO swapped in at the
  path after the check is never read.
@*/
PetscErrorCode HsSolverReadTrajectoryHDF5(HsSolver s, const char path[], PetscInt *Nsrc, PetscReal **nodes,
                                          PetscReal *T)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)s);
  PetscMPIInt rank;
  char        msg[PETSC_MAX_PATH_LEN + 256] = "";
  size_t      count;

  PetscFunctionBeginUser;
  *nodes = NULL;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank)
    CheckFile(path, s->prob, Nsrc, T, nodes, msg, sizeof msg);
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_FILE_READ, "%s", msg);
  PetscCallMPI(MPI_Bcast(Nsrc, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(T, 1, MPIU_REAL, 0, comm));
  count = ((size_t)*Nsrc + 1) * 4 * (size_t)s->prob->n;
  if (rank)
    PetscCall(PetscMalloc1(count, nodes));
  for (size_t at = 0; at < count; at += (size_t)1 << 28) /* in pieces an int can count */
    PetscCallMPI(MPI_Bcast(*nodes + at, (PetscMPIInt)PetscMin(count - at, (size_t)1 << 28), MPIU_REAL, 0, comm));
  PetscFunctionReturn(0);
}
#else
/*@ HsIsTrajectoryH5 - (this build: without HDF5) 0: no trajectory.h5 can be recognized as hamshoot's, none is replaced.
    Not collective. @*/
int HsIsTrajectoryH5(const char *path, int fd)
{
  (void)path, (void)fd;
  return 0;
}

/*@ HsSolverWriteTrajectoryHDF5 - (this build: PETSc without HDF5) an error. Collective. @*/
PetscErrorCode HsSolverWriteTrajectoryHDF5(HsSolver s, const char path[])
{
  PetscFunctionBeginUser;
  SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
          "-hs_output_format hdf5 (%s): this PETSc was built without HDF5; use -hs_output_format csv", path);
}

/*@ HsSolverReadTrajectoryHDF5 - (this build: PETSc without HDF5) an error. Collective. @*/
PetscErrorCode HsSolverReadTrajectoryHDF5(HsSolver s, const char path[], PetscInt *Nsrc, PetscReal **nodes,
                                          PetscReal *T)
{
  PetscFunctionBeginUser;
  *Nsrc = 0, *nodes = NULL, *T = 0;
  SETERRQ(PetscObjectComm((PetscObject)s), PETSC_ERR_SUP,
          "-hs_init %s: an HDF5 file, but this PETSc was built without HDF5", path);
}
#endif

/*@ HsSolverSetOutputFormat - sets the format of the trajectory that HsSolverWriteOutput() writes.

  Not collective.

  Input Parameters:
+ s      - the solver
- format - HS_OUTPUT_FORMAT_CSV (trajectory.csv and intervals.csv, written by rank 0 from the gathered solution;
           the default), HS_OUTPUT_FORMAT_HDF5 (trajectory.h5, each rank writing its own nodes; needs PETSc with
           HDF5) or HS_OUTPUT_FORMAT_AUTO (hdf5 from HS_OUTPUT_HDF5_AUTO_N intervals on where PETSc has HDF5, csv
           otherwise)

  Options Database Key:
. -hs_output_format <csv|hdf5|auto> - the same

.seealso: HsSolverGetOutputFormat(), HsSolverWriteOutput(), HsSolverSetInitialGuessFromFile()
@*/
PetscErrorCode HsSolverSetOutputFormat(HsSolver s, HsOutputFormat format)
{
  PetscFunctionBeginUser;
  PetscValidHeaderSpecific(s, HS_SOLVER_CLASSID, 1);
  s->out_format = format;
  PetscFunctionReturn(0);
}

/*@ HsSolverGetOutputFormat - gets the format of the trajectory that HsSolverWriteOutput() writes, with auto
    resolved for the solver's N (HS_OUTPUT_FORMAT_CSV or HS_OUTPUT_FORMAT_HDF5).

  Not collective.

  Input Parameter:
. s - the solver

  Output Parameter:
. format - the format the next output uses

.seealso: HsSolverSetOutputFormat()
@*/
PetscErrorCode HsSolverGetOutputFormat(HsSolver s, HsOutputFormat *format)
{
  PetscFunctionBeginUser;
  *format = s->out_format;
  if (*format == HS_OUTPUT_FORMAT_AUTO && s->scheme == HS_SCHEME_CONSERVING4) /* trajectory.h5's H, E - W, controls */
    *format = HS_OUTPUT_FORMAT_CSV; /* are the second-order schemes' formulas (bvp/impls/order4.c refuses hdf5) */
  else if (*format == HS_OUTPUT_FORMAT_AUTO)
#if defined(PETSC_HAVE_HDF5) && defined(HS_HAVE_HDF5)
    *format = s->N >= HS_OUTPUT_HDF5_AUTO_N ? HS_OUTPUT_FORMAT_HDF5 : HS_OUTPUT_FORMAT_CSV;
#else
    *format = HS_OUTPUT_FORMAT_CSV;
#endif
  PetscFunctionReturn(0);
}
