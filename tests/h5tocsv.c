/* h5tocsv FILE: a trajectory.h5 (-hs_output_format hdf5) as text, read by the HDF5 library alone (not by PETSc's
 * viewer, which wrote it): for tests/hs_hdf5.py, which has no h5py.
 *
 * Output: one line "@NAME=VALUE" per attribute of "/" (strings, integers, reals with %.17g), then for each dataset
 * of "/" (in the library's order) a line "#NAME ROWS COLS COLUMNS" (COLUMNS: its attribute "columns", "-" if none;
 * COLS 1 for a 1-D dataset) and its rows, values comma-separated with %.17g. Exit 1 (a message on stderr) if the file
 * cannot be read. h5tocsv --set-N FILE N rewrites the attribute N (SetN). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints attribute name of obj as "PREFIXname=value" (prefix "@"), or into buf when buf != NULL. */
static int Attribute(hid_t obj, const char *name, char *buf, size_t len)
{
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), ty = a < 0 ? -1 : H5Aget_type(a);
  int   bad     = a < 0 || ty < 0;
  char  s[4096] = "";

  if (!bad && H5Tget_class(ty) == H5T_STRING) {
    hid_t  mt                 = H5Tcopy(H5T_C_S1);
    size_t sz                 = H5Tget_size(ty);
    bad                       = sz >= sizeof s || H5Tset_size(mt, sz) < 0 || H5Aread(a, mt, s) < 0;
    s[sz < sizeof s ? sz : 0] = 0;
    H5Tclose(mt);
  } else if (!bad && H5Tget_class(ty) == H5T_INTEGER) {
    long long v = 0;
    bad         = H5Aread(a, H5T_NATIVE_LLONG, &v) < 0;
    snprintf(s, sizeof s, "%lld", v);
  } else if (!bad) {
    double v = 0;
    bad      = H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0;
    snprintf(s, sizeof s, "%.17g", v);
  }
  if (ty >= 0)
    H5Tclose(ty);
  if (a >= 0)
    H5Aclose(a);
  if (buf)
    snprintf(buf, len, "%s", bad ? "-" : s);
  else if (!bad)
    printf("@%s=%s\n", name, s);
  return bad;
}

static herr_t RootAttribute(hid_t obj, const char *name, const H5A_info_t *info, void *ctx)
{
  (void)info, (void)ctx;
  return Attribute(obj, name, NULL, 0) ? -1 : 0;
}

static herr_t Dataset(hid_t g, const char *name, const H5L_info_t *info, void *ctx)
{
  hid_t   d       = H5Dopen2(g, name, H5P_DEFAULT), sp;
  hsize_t dims[2] = {0, 1};
  int     nd;
  char    cols[4096];
  double *v;

  (void)info, (void)ctx;
  if (d < 0)
    return -1;
  sp = H5Dget_space(d);
  nd = H5Sget_simple_extent_ndims(sp);
  if (nd < 1 || nd > 2 || H5Sget_simple_extent_dims(sp, dims, NULL) < 0)
    return -1;
  if (H5Aexists(d, "columns") <= 0 || Attribute(d, "columns", cols, sizeof cols))
    snprintf(cols, sizeof cols, "-");
  printf("#%s %llu %llu %s\n", name, (unsigned long long)dims[0], (unsigned long long)dims[1], cols);
  v = malloc(sizeof *v * dims[0] * dims[1] + 1);
  if (!v || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
    return -1;
  for (hsize_t r = 0; r < dims[0]; r++)
    for (hsize_t c = 0; c < dims[1]; c++)
      printf("%.17g%c", v[r * dims[1] + c], c + 1 < dims[1] ? ',' : '\n');
  free(v);
  H5Sclose(sp);
  H5Dclose(d);
  return 0;
}

/* h5tocsv --set-N FILE N: the attribute N of "/" rewritten (a file whose datasets disagree with it, for the reader's
 * test of wrong dimensions). */
static int SetN(const char *path, const char *value)
{
  hid_t     f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), a;
  long long N = atoll(value);
  int       bad;

  if (f < 0)
    return fprintf(stderr, "h5tocsv: cannot open %s\n", path), 1;
  a   = H5Aopen(f, "N", H5P_DEFAULT);
  bad = a < 0 || H5Awrite(a, H5T_NATIVE_LLONG, &N) < 0;
  if (a >= 0)
    H5Aclose(a);
  H5Fclose(f);
  return bad;
}

int main(int argc, char **argv)
{
  hid_t f;
  int   bad;

  if (argc == 4 && !strcmp(argv[1], "--set-N"))
    return SetN(argv[2], argv[3]);
  if (argc != 2)
    return fprintf(stderr, "usage: h5tocsv FILE | h5tocsv --set-N FILE N\n"), 1;
  if ((f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
    return fprintf(stderr, "h5tocsv: cannot open %s\n", argv[1]), 1;
  bad = H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, RootAttribute, NULL) < 0 ||
        H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, NULL, Dataset, NULL) < 0;
  H5Fclose(f);
  if (bad)
    fprintf(stderr, "h5tocsv: cannot read %s\n", argv[1]);
  return bad;
}
