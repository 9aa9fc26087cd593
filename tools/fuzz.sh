#!/bin/sh
# hamshoot: build the libFuzzer targets (clang 14, -DHS_FUZZ=ON) into ./build-fuzz and run them for SECONDS
# seconds in all (default 60): two thirds for the problem-file reader and the expression parser (fuzz/fuzz_ocp.c,
# over a copy of fuzz/corpus with the dictionary fuzz/ocp.dict), one third for the -hs_init reader
# (fuzz/fuzz_init.c, over a copy of fuzz/corpus_init). Exit status non-zero if either finds a crash, a sanitizer
# report (ASan, UBSan, a leak), a hang (an input taking over 10 s) or an out-of-memory (over 2048 MB); the
# reproducer is then in build-fuzz/artifacts/ (rerun it: build-fuzz/fuzz_ocp FILE or build-fuzz/fuzz_init FILE).
# The reproducers of earlier findings in fuzz/crashes/ run first and must pass.
# Installs nothing: needs clang-14, libclang-rt-14-dev and llvm-14 (HS_CI=1 . tools/setup.sh installs them).
set -eu
cd "$(dirname "$0")/.."
secs="${1:-60}"
case "$secs" in '' | *[!0-9]*) echo "usage: tools/fuzz.sh SECONDS" >&2; exit 2 ;; esac
command -v clang-14 >/dev/null || { echo "fuzz: clang-14 not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
CC=clang-14 cmake -S . -B build-fuzz -DHS_FUZZ=ON -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz_ocp fuzz_init -j "$(nproc)" >/dev/null
rm -rf build-fuzz/corpus build-fuzz/corpus_init build-fuzz/artifacts
mkdir -p build-fuzz/corpus build-fuzz/corpus_init build-fuzz/artifacts
cp fuzz/corpus/* build-fuzz/corpus/
cp fuzz/corpus_init/* build-fuzz/corpus_init/
cd build-fuzz
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
# The reproducers of earlier findings (fuzz/crashes/*.bin, some larger than -max_len) first.
set -- ../fuzz/crashes/*.bin
if [ -e "$1" ] && ! ./fuzz_ocp -timeout=10 -rss_limit_mb=2048 -artifact_prefix=artifacts/ "$@" >crashes.log 2>&1; then
  grep -n -m 1 -B 1 -A 30 -E "ERROR: |runtime error|ALARM|out-of-memory|deadly signal" crashes.log || tail -40 crashes.log
  echo "fuzz: FAILED: a reproducer in fuzz/crashes fails again (log build-fuzz/crashes.log)"
  exit 1
fi

# fuzz TARGET CORPUS SECONDS [OPTIONS...]: one target; prints its runs (the global total) or fails.
total=0
fuzz() {
  target=$1 corpus=$2 t=$3
  shift 3
  seeds=$(ls "$corpus" | wc -l)
  if ./"$target" -max_total_time="$t" -timeout=10 -rss_limit_mb=2048 -artifact_prefix=artifacts/ -print_final_stats=1 \
       "$@" "$corpus" >"$target.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$target.log")
    echo "fuzz: $target: 0 findings in ${runs:-?} runs over $t s (corpus: $seeds seeds, $(ls "$corpus" | wc -l) after; log build-fuzz/$target.log)"
    total=$((total + ${runs:-0}))
  else
    rc=$?
    grep -n -m 1 -A 30 -E "ERROR: |runtime error|ALARM|out-of-memory|deadly signal" "$target.log" || tail -40 "$target.log"
    echo "fuzz: FAILED: $target (libFuzzer exit $rc); reproducer: $(ls -d "$PWD"/artifacts/* 2>/dev/null | tr '\n' ' ')"
    exit 1
  fi
}
fuzz fuzz_ocp corpus $((secs - secs / 3)) -max_len=65536 -dict=../fuzz/ocp.dict
fuzz fuzz_init corpus_init $((secs / 3)) -max_len=16384
echo "fuzz: 0 findings in $total runs over $secs s (problem files and expressions, -hs_init files)"
