#!/bin/sh
# The scaling benchmark of issue 44 in ONE command on a many-core node (bench/README.md, "Scaling over
# ranks"): strong, weak, shooting, many bodies (slab and drop) and the reduced system's flops, under a total
# budget, results (markdown and JSON) into $OUT. Run from the repository root:
#
#   sh bench/device_scaling.sh --prepare     # here, once: bundle/hamshoot.tar.xz (chroot-bundle.sh) and
#                                            # bundle/chroot-run.sh from build/ (bundle/ is git-ignored)
#   sh bench/device_scaling.sh               # on the node (carry bundle/): ~200 s of runs, budget 480 s
#   QUICK=1 OUT=/tmp/q sh bench/device_scaling.sh   # the same pipeline at N = 1e4 on ranks 1, 2, 4
#
# It runs build/hamshoot directly where that runs (PETSc installed), else inside the chroot bundle through
# bundle/chroot-run.sh (as root). The bundle is unpacked to $HS_ROOT (default /tmp/hsroot-scaling) here,
# with /proc mounted (needed) and /dev, /sys and a tmpfs /tmp where the machine allows (a sandbox may
# refuse some: Open MPI then runs without hwloc's topology and binds to nothing, said in machine.txt).
# It needs python3 (standard library only) for bench/strong_weak.py; without one it runs the strong runs
# alone with their logs, and `python3 bench/strong_weak.py --reparse DIR` makes the tables later.
#
# $OUT gets at most 7 files (a device tool returns few): machine.txt (the machine, the launcher, the
# binding), progress.txt (a line a run), results.json and tables.md (rewritten after every run, so an
# interrupted script leaves what it finished), model.md (bench/scaling_model.py), logs.tar.gz (every run's
# stdout with -log_view) and, where the launcher failed, check.log. Work files go to $WORK.
#
# Environment: OUT (default ./scaling-out), WORK (default /tmp/hs-scaling-work), BUDGET (seconds from the
# start to the last run's end, default 480: no run starts that its estimate says would not fit, a run at
# the end is killed), QUICK=1 (small sizes), ONLY=ncar (the many-body runs alone), NCAR=0 (without them), STRONG_ONLY=1, RANKS (default 1,2,4,8,16), HS_ROOT, BUNDLE=1 (the bundle
# even where build/hamshoot runs). The order is by importance, with the process times estimated from
# ../shared/PERFORMANCE.md's 16-core node (solve + ~2 s of start-up and set-up a run):
#   1. strong, transcription, N = 1e6, P = 1..16: pendulum ~25 s (solves 6.1 + 3.8 + 2.7 + 1.7 + 1.0),
#      kepler ~105 s (40 + 23 + 17 + 9 + 5)
#   2. the reduced system's flops, pendulum N = 1e5, P = 4, 8, 16, 32 (32 oversubscribed): ~10 s
#   3. weak, pendulum 2.5e5 nodes a rank, P = 1..16 (N up to 4e6): ~25 s (1.9 + 1.6 + 2.4 + 2.9 + 3.7)
#   4. shooting, pendulum N = 1e6, M = N/10, P = 1 and 16: ~35 s (27 + 3)
#   5. many bodies, ncar 64 cars, N = 4000, the default (slab) and drop side by side, P = 2 and 16, then 1, 4,
#      8: ~110 s estimated (bench/results/node16_run2.md: drop 9.98-13.9 s a run on 2-16 ranks; slab and 1 rank not
#      measured there)
# ~310 s in all (estimated), then the model: inside the budget if the node is as fast as that one.
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=${OUT:-$TOP/scaling-out}
WORK=${WORK:-/tmp/hs-scaling-work}
BUDGET=${BUDGET:-480}
HS_ROOT=${HS_ROOT:-/tmp/hsroot-scaling}
export PATH="$PATH:/usr/sbin:/sbin" HS_ROOT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
# one node: shared memory only (no UCX or network probing), no single copy (CMA fails in many containers)
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
T0=$(date +%s)

if [ "${1:-}" = "--prepare" ]; then
  tools=${HS_TOOLS:-$TOP/../shared/tools}
  [ -x build/hamshoot ] || { echo "device_scaling: build first (build/hamshoot)" >&2; exit 1; }
  # HS_OLD=path/to/an/older/hamshoot: packed along as /hs/hamshoot_old, run beside this one (OLD_RANKS below)
  [ -n "${HS_OLD:-}" ] && { cp "$HS_OLD" build/bench/hamshoot_old || exit 1; }
  mkdir -p bundle && sh "$tools/chroot-bundle.sh" build bundle/hamshoot.tar.xz && cp "$tools/chroot-run.sh" bundle/
  rc=$?; rm -f build/bench/hamshoot_old
  exit $rc
fi

mkdir -p "$OUT" "$WORK/logs"
{ date -u; uname -a; nproc; lscpu 2>/dev/null | head -20; } > "$OUT/machine.txt"
PY=$(command -v python3 || command -v python || true)
[ -n "$PY" ] && ! "$PY" -c 'import json, shlex, subprocess' 2>/dev/null && PY=

unpack() {  # the bundle into $HS_ROOT, mounts as far as allowed (chroot-run.sh then only chroots)
  [ -x "$HS_ROOT/hs/hamshoot" ] && return 0
  mkdir -p "$HS_ROOT"
  tar -C "$HS_ROOT" -xJf bundle/hamshoot.tar.xz 2>>"$WORK/check.log" ||
    "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' bundle/hamshoot.tar.xz \
      "$HS_ROOT" 2>>"$WORK/check.log" || return 1
  mount -t proc proc "$HS_ROOT/proc" || return 1
  mount --rbind /dev "$HS_ROOT/dev" || mount --bind /dev "$HS_ROOT/dev" || echo "device_scaling: no /dev in the root"
  mount --rbind /sys "$HS_ROOT/sys" || echo "device_scaling: no /sys in the root (no hwloc topology)"
  mount -t tmpfs tmpfs "$HS_ROOT/tmp" || echo "device_scaling: /tmp in the root is the unpacked folder"
  [ -d "$HS_ROOT/dev/shm" ] || mkdir -p "$HS_ROOT/dev/shm" 2>/dev/null || true
}

if [ "${BUNDLE:-0}" != 1 ] && [ -x build/hamshoot ] && command -v mpiexec >/dev/null && mpiexec -n 1 build/hamshoot \
     -problem pendulum -N 100 -quiet -hs_check_extremal no >/dev/null 2>&1; then
  MPIEXEC=mpiexec HAMSHOOT=$TOP/build/hamshoot RUNDIR=$WORK/run OUTSIDE=$WORK/run MODE=direct
elif [ -f bundle/hamshoot.tar.xz ] && [ -f bundle/chroot-run.sh ]; then
  MPIEXEC="sh $TOP/bundle/chroot-run.sh $TOP/bundle/hamshoot.tar.xz -- mpirun" HAMSHOOT=/hs/hamshoot
  RUNDIR=/tmp/hsbench OUTSIDE=$HS_ROOT/tmp/hsbench MODE=chroot
  unpack >> "$OUT/machine.txt" 2>&1 && $MPIEXEC -n 2 $HAMSHOOT -problem pendulum -N 100 -quiet -hs_check_extremal no \
    >> "$WORK/check.log" 2>&1 || {
    echo "device_scaling: the bundle does not run here (root? mount? chroot?)" >> "$WORK/check.log"
    cp "$WORK/check.log" "$OUT/"; cat "$OUT/check.log" >&2; exit 1; }
else
  echo "device_scaling: neither build/hamshoot runs nor bundle/ is here (sh bench/device_scaling.sh --prepare)" >&2
  exit 1
fi
echo "device_scaling: $MODE, $(nproc) cores, python '${PY:-none}', set-up $(( $(date +%s) - T0 )) s" | tee -a "$OUT/machine.txt"
DEADLINE=$((T0 + BUDGET))

if [ "${QUICK:-0}" = 1 ]; then
  RANKS=${RANKS:-1,2,4} NS=10000 NF=10000 WEAK=5000 FLOPRANKS=2,4,8 SHOOTRANKS=1,4 SUMMARY=${SUMMARY:-json}
else
  RANKS=${RANKS:-1,2,4,8,16} NS=1000000 NF=100000 WEAK=250000 FLOPRANKS=4,8,16,32 SHOOTRANKS=1,16 SUMMARY=${SUMMARY:-stdout}
fi

if [ -z "$PY" ]; then  # no python: the strong runs and their logs only, named as strong_weak.py names them
  for prob in pendulum kepler; do
    for P in $(echo "$RANKS" | tr , ' '); do
      left=$((DEADLINE - $(date +%s))); [ "$left" -gt 3 ] || break 2
      name=strong_${prob}_transcription_N${NS}_P${P}_r0
      cmd="$MPIEXEC -n $P --bind-to none --oversubscribe $HAMSHOOT -problem $prob -N $NS -quiet -hs_check_extremal no -log_view"
      { echo "$cmd"; timeout -s KILL "$left" $cmd 2>&1; } > "$WORK/logs/$name.log"
      echo "$name $(grep 'wall time' "$WORK/logs/$name.log")" | tee -a "$OUT/progress.txt"
    done
  done
  tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs
  echo "device_scaling: no python3; logs in $OUT/logs.tar.gz (unpack into DIR, python3 bench/strong_weak.py --reparse DIR)"
  exit 0
fi

sw() {  # one strong_weak.py invocation sharing the results and the deadline
  "$PY" bench/strong_weak.py --mpiexec "$MPIEXEC" --hamshoot "$HAMSHOOT" --run-dir "$RUNDIR" --run-dir-outside \
    "$OUTSIDE" --summary "$SUMMARY" --out "$OUT" --logs "$WORK/logs" --append --deadline "$DEADLINE" --no-tables "$@" \
    2>&1 | tee -a "$OUT/progress.txt"
}
if [ "${ONLY:-}" != ncar ]; then  # ONLY=ncar: the many-body runs alone; NCAR=0: without them
sw --ranks "$RANKS" --problems pendulum,kepler --N "$NS"
# the memory bandwidth P ranks get together (bench/stream_bench.c): a bandwidth-bound phase cannot scale beyond it
if [ "$MODE" = chroot ]; then SB=/hs/stream_bench OLDEXE=/hs/hamshoot_old OLDOUT=$HS_ROOT/hs/hamshoot_old
else SB=$TOP/build/bench/stream_bench OLDEXE= OLDOUT=; fi
for P in $(echo "$RANKS" | tr , ' '); do
  [ $(( DEADLINE - $(date +%s) )) -gt 20 ] || break
  { timeout 20 $MPIEXEC -n "$P" --bind-to core $SB 200 2>/dev/null || timeout 20 $MPIEXEC -n "$P" --bind-to none $SB 200; } 2>&1 |
    grep stream_bench | tee -a "$OUT/machine.txt"
done
# the same runs by an older build (HS_OLD at --prepare), where the reduced system changed most: the comparison
if [ -n "$OLDEXE" ] && [ -x "$OLDOUT" ]; then
  "$PY" bench/strong_weak.py --mpiexec "$MPIEXEC" --hamshoot "$OLDEXE" --run-dir "$RUNDIR" --run-dir-outside "$OUTSIDE" \
    --summary "$SUMMARY" --out "$OUT" --logs "$WORK/logs" --append --deadline "$DEADLINE" --no-tables \
    --ranks "${OLD_RANKS:-4,8,16}" --problems kepler,pendulum --N "$NS" --tag old 2>&1 | tee -a "$OUT/progress.txt"
fi
if [ "${STRONG_ONLY:-0}" != 1 ]; then  # STRONG_ONLY=1: the strong runs (and the many-body ones) alone
sw --ranks "$FLOPRANKS" --problems pendulum --N "$NF" --tag flops
sw --ranks "$RANKS" --problems pendulum --N 0 --weak-per-rank "$WEAK" --weak-problems pendulum
sw --ranks "$SHOOTRANKS" --problems pendulum --N "$NS" --bvp shooting
fi
fi
if [ "${NCAR:-1}" = 1 ]; then
# many bodies: ncar with 64 cars (4n = 256 unknowns a node), N = 4000, the default linear solver (issue 44, item 4)
# (slab from 2 ranks) and drop beside it (GMRES + MUMPS' LU of the whole dropped matrix), the targets' pairs first
if [ "${QUICK:-0}" = 1 ]; then NCN=200 NCK=40 NCA=$RANKS NCB=; else NCN=4000 NCK=64 NCA=2,16 NCB=1,4,8; fi
for ranks in $NCA $NCB; do
  sw --ranks "$ranks" --problems ncar --N "$NCN" --extra "-p_cars $NCK" --tag ncar
  sw --ranks "$ranks" --problems ncar --N "$NCN" --extra "-p_cars $NCK -hs_linear_solver drop" --tag ncar_drop
done
fi
tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs
"$PY" bench/scaling_model.py "$OUT/results.json" > "$OUT/model.md" 2>&1
cat "$OUT/tables.md" "$OUT/model.md"
sed -n '/^## Summary/,/^(solve times/p' "$OUT/tables.md"
echo "device_scaling: done in $(( $(date +%s) - T0 )) s; $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
