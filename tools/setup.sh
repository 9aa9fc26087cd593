#!/bin/sh
# hamshoot: install the Debian packages that are missing, then configure and
# build into ./build. Sourced by run.sh and test.sh; safe to rerun.
set -eu
HS_PACKAGES="petsc-dev libgsl-dev libopenmpi-dev openmpi-bin cmake pkg-config make gcc binutils python3 python3-numpy python3-scipy python3-sympy coinor-libipopt-dev gnuplot-nox liblapack-dev"
# Issue 44: Debian's OpenBLAS, the serial build (one thread in each MPI rank), as the BLAS and LAPACK of PETSc
# and MUMPS: the many-body LU (hsdrop's MUMPS factorization) ran 1.8-2x faster than with the reference BLAS
# (bench/README.md, "Many bodies"). Selected below by update-alternatives.
HS_PACKAGES="$HS_PACKAGES libopenblas0-serial"
# CI only (.ci/run sets HS_CI=1): clang 14, its sanitizer/libFuzzer runtime and llvm-symbolizer
# (llvm-14) for tools/fuzz.sh.
# The README's commands (HS_CI unset) do not install them.
HS_CI_PACKAGES="clang-14 libclang-rt-14-dev llvm-14"
if [ "${HS_CI:-0}" = 1 ]; then
  HS_PACKAGES="$HS_PACKAGES $HS_CI_PACKAGES"
fi
missing=""
for p in $HS_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "hamshoot: installing missing Debian packages:$missing"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
fi
# The serial OpenBLAS as libblas.so.3 and liblapack.so.3 (a no-op when it is already the selected one).
HS_MA="$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
for lib in libblas.so.3 liblapack.so.3; do
  target="/usr/lib/$HS_MA/openblas-serial/$lib"
  if [ -e "$target" ] && [ "$(readlink -f "/usr/lib/$HS_MA/$lib")" != "$(readlink -f "$target")" ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO update-alternatives --set "$lib-$HS_MA" "$target" >/dev/null
  fi
done
# Open MPI refuses to run as root without these (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)"
