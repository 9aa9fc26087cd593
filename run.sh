#!/bin/sh
# hamshoot main job: set up, build, and solve the pendulum (thesis section 8.1)
# with the Hamiltonian-conserving scheme on 2 MPI ranks; output in out/pendulum.
set -eu
cd "$(dirname "$0")"
. tools/setup.sh
mpirun --oversubscribe -n 2 build/hamshoot -problem pendulum -N 20 -hs_scheme conserving -o out/pendulum "$@"
