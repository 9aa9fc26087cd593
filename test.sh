#!/bin/sh
# hamshoot tests: set up, build, and run the whole ctest suite.
set -eu
cd "$(dirname "$0")"
. tools/setup.sh
cd build
ctest --output-on-failure -j 2
