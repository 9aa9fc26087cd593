#!/bin/sh
# The scaling benchmark of issue 44 in ONE command on a many-core node (bench/README.md, "Scaling over
# ranks"): strong, weak, shooting and the reduced system's flops, under a total budget, results (markdown
# and JSON) into $OUT. Run from the repository root:
#
#   sh bench/device_scaling.sh --prepare     # here, once: bundle/hamshoot.tar.xz (chroot-bundle.sh) and
#                                            # bundle/chroot-run.sh, beside build/ (bundle/ is git-ignored)
#   sh bench/device_scaling.sh               # on the node (carry bundle/): ~200 s of runs, budget 480 s
#   QUICK=1 OUT=/tmp/q sh bench/device_scaling.sh   # the same pipeline at N = 1e4 on ranks 1, 2, 4
#
# On the node it runs build/hamshoot directly where that runs (PETSc installed), else inside the chroot
# bundle through bundle/chroot-run.sh (root needed: it mounts /proc, /dev, /sys and a tmpfs /tmp into
# $HS_ROOT, default /tmp/hsroot-scaling). It needs python3 (standard library only) for bench/strong_weak.py;
# without it, it runs the strong-scaling runs alone with their logs, and `python3 bench/strong_weak.py
# --reparse OUT` makes the tables later.
#
# Environment: OUT (results; default ./scaling-out), BUDGET (seconds for all runs, default 480; no run
# starts that its estimate says would not fit, a run at the end is killed), QUICK=1 (small sizes), RANKS
# (default 1,2,4,8,16), HS_ROOT. The order is by importance, with the estimated process times from
# ../shared/PERFORMANCE.md's 16-core node (solve + ~2 s start-up and set-up a run):
#   1. strong, transcription, N = 1e6, P = 1..16: pendulum ~25 s (solves 6.1 + 3.8 + 2.7 + 1.7 + 1.0),
#      kepler ~105 s (40 + 23 + 17 + 9 + 5)
#   2. the reduced system's flops, pendulum N = 1e5, P = 4, 8, 16, 32 (32 oversubscribed): ~10 s
#   3. weak, pendulum 2.5e5 nodes a rank, P = 1..16 (N up to 4e6): ~25 s (1.9 + 1.6 + 2.4 + 2.9 + 3.7)
#   4. shooting, pendulum N = 1e6, M = N/10, P = 1 and 16: ~35 s (27 + 3)
# ~200 s in all, then the model (bench/scaling_model.py): well inside the budget if the node is as fast.
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=${OUT:-$TOP/scaling-out}
BUDGET=${BUDGET:-480}
HS_ROOT=${HS_ROOT:-/tmp/hsroot-scaling}
export HS_ROOT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one node: shared memory only (no UCX or network probing), no single-copy (CMA fails in many containers)
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
T0=$(date +%s)

if [ "${1:-}" = "--prepare" ]; then
  tools=${HS_TOOLS:-$TOP/../shared/tools}
  [ -x build/hamshoot ] || { echo "device_scaling: build first (build/hamshoot)" >&2; exit 1; }
  mkdir -p bundle && sh "$tools/chroot-bundle.sh" build bundle/hamshoot.tar.xz && cp "$tools/chroot-run.sh" bundle/
  exit $?
fi

mkdir -p "$OUT"
{ date -u; uname -a; nproc; lscpu 2>/dev/null | head -20; } > "$OUT/machine.txt"
PY=$(command -v python3 || command -v python || true)
[ -n "$PY" ] && ! "$PY" -c 'import json, shlex, subprocess' 2>/dev/null && PY=

# The launcher: build/hamshoot directly, or the chroot bundle.
if [ "${BUNDLE:-0}" != 1 ] && [ -x build/hamshoot ] && command -v mpiexec >/dev/null && mpiexec -n 1 build/hamshoot -problem pendulum -N 100 \
     -quiet -hs_check_extremal no >/dev/null 2>&1; then
  MPIEXEC=mpiexec HAMSHOOT=$TOP/build/hamshoot RUNDIR=$OUT/run OUTSIDE=$OUT/run MODE=direct
elif [ -f bundle/hamshoot.tar.xz ] && [ -f bundle/chroot-run.sh ]; then
  MPIEXEC="sh $TOP/bundle/chroot-run.sh $TOP/bundle/hamshoot.tar.xz -- mpirun" HAMSHOOT=/hs/hamshoot
  RUNDIR=/tmp/hsbench OUTSIDE=$HS_ROOT/tmp/hsbench MODE=chroot
  $MPIEXEC -n 1 $HAMSHOOT -problem pendulum -N 100 -quiet -hs_check_extremal no > "$OUT/check.log" 2>&1 || {
    echo "device_scaling: the bundle does not run here (root? mount?): $OUT/check.log" | tee -a "$OUT/check.log" >&2
    exit 1; }
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
  mkdir -p "$OUT/logs"
  for prob in pendulum kepler; do
    for P in $(echo "$RANKS" | tr , ' '); do
      left=$((DEADLINE - $(date +%s))); [ "$left" -gt 3 ] || break 2
      name=strong_${prob}_transcription_N${NS}_P${P}_r0
      cmd="$MPIEXEC -n $P --bind-to none --oversubscribe $HAMSHOOT -problem $prob -N $NS -quiet -hs_check_extremal no -log_view"
      { echo "$cmd"; timeout -s KILL "$left" $cmd 2>&1; } > "$OUT/logs/$name.log"
    done
  done
  echo "device_scaling: no python3; logs in $OUT/logs (python3 bench/strong_weak.py --reparse $OUT)"
  exit 0
fi

sw() {  # one strong_weak.py invocation sharing the folder and the deadline
  "$PY" bench/strong_weak.py --mpiexec "$MPIEXEC" --hamshoot "$HAMSHOOT" --run-dir "$RUNDIR" \
    --run-dir-outside "$OUTSIDE" --summary "$SUMMARY" --out "$OUT" --append --deadline "$DEADLINE" --no-tables "$@"
}
sw --ranks "$RANKS" --problems pendulum,kepler --N "$NS"
sw --ranks "$FLOPRANKS" --problems pendulum --N "$NF" --tag flops
sw --ranks "$RANKS" --problems pendulum --N 0 --weak-per-rank "$WEAK" --weak-problems pendulum
sw --ranks "$SHOOTRANKS" --problems pendulum --N "$NS" --bvp shooting
"$PY" bench/strong_weak.py --tables "$OUT" > "$OUT/tables.md"
"$PY" bench/scaling_model.py "$OUT/results.json" > "$OUT/model.md" 2>&1
cat "$OUT/tables.md" "$OUT/model.md"
echo "device_scaling: done in $(( $(date +%s) - T0 )) s; $OUT: tables.md model.md results.json logs/"
