#!/bin/sh
# hamshoot: build the libFuzzer target of the problem-file reader and the expression parser
# (fuzz/fuzz_ocp.c, clang 14, -DHS_FUZZ=ON) into ./build-fuzz and run it for SECONDS seconds
# (default 60) over a copy of the committed corpus fuzz/corpus with the dictionary fuzz/ocp.dict.
# Exit status non-zero if it finds a crash, a sanitizer report (ASan, UBSan, a leak), a hang (an
# input taking over 10 s) or an out-of-memory (over 2048 MB); the reproducer is then in
# build-fuzz/artifacts/ (rerun it: build-fuzz/fuzz_ocp FILE). The reproducers of earlier findings in
# fuzz/crashes/ run first and must pass.
# Installs nothing: needs clang-14, libclang-rt-14-dev and llvm-14 (HS_CI=1 . tools/setup.sh installs them).
set -eu
cd "$(dirname "$0")/.."
secs="${1:-60}"
case "$secs" in '' | *[!0-9]*) echo "usage: tools/fuzz.sh SECONDS" >&2; exit 2 ;; esac
command -v clang-14 >/dev/null || { echo "fuzz: clang-14 not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
CC=clang-14 cmake -S . -B build-fuzz -DHS_FUZZ=ON -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz_ocp -j "$(nproc)" >/dev/null
rm -rf build-fuzz/corpus build-fuzz/artifacts
mkdir -p build-fuzz/corpus build-fuzz/artifacts
cp fuzz/corpus/* build-fuzz/corpus/
seeds=$(ls build-fuzz/corpus | wc -l)
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
if ./fuzz_ocp -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -dict=../fuzz/ocp.dict \
     -artifact_prefix=artifacts/ -print_final_stats=1 corpus >fuzz.log 2>&1; then
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz.log)
  echo "fuzz: 0 findings in ${runs:-?} runs over $secs s (corpus: $seeds seeds, $(ls corpus | wc -l) after; log build-fuzz/fuzz.log)"
else
  rc=$?
  grep -n -m 1 -A 30 -E "ERROR: |runtime error|ALARM|out-of-memory|deadly signal" fuzz.log || tail -40 fuzz.log
  echo "fuzz: FAILED (libFuzzer exit $rc); reproducer: $(ls -d "$PWD"/artifacts/* 2>/dev/null | tr '\n' ' ')"
  exit 1
fi
