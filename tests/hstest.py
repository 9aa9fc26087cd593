#!/usr/bin/env python3
"""hamshoot system tests: run the hamshoot executable and check what the
mathematics promises (docs/theory.md section 2.3) -- conservation to round-off,
convergence order, agreement across MPI ranks, analytic vs finite-difference
Jacobians, an independent continuous solution, error handling.

Usage: hstest.py HAMSHOOT MPIEXEC TEST [args]   (run by ctest; stdlib only,
except 'crosscheck', which runs tests/crosscheck/continuous_nco.py with scipy).
       hstest.py --list            the tests, one a line
       hstest.py --check NAME...   exit 1 unless NAME... are exactly the tests (the ctest
                                   hstest_names passes those tests/CMakeLists.txt runs)

This file only dispatches: TEST runs the function t_TEST of one of the modules below, which
share hs_util.py. Which tests run, with which arguments, is said in one place,
tests/CMakeLists.txt.
"""
import os
import sys

# paths given relative to where hstest.py was started stay valid in the test's own working directory (below)
sys.argv[1:] = [os.path.abspath(a) if i != 3 and a[:2] != "--" and os.path.exists(a) else a
                for i, a in enumerate(sys.argv[1:], 1)]

import hs_bench
import hs_bodies
import hs_border
import hs_bounded
import hs_bounds
import hs_constrained
import hs_controlqp
import hs_controls
import hs_controls2
import hs_drivers
import hs_examples
import hs_extremal2
import hs_formulations
import hs_free_time
import hs_guard
import hs_hdf5
import hs_manybody
import hs_models
import hs_momentum
import hs_order4
import hs_order4cons
import hs_order4shoot
import hs_shootband
import hs_order4speed
import hs_order4iter
import hs_order4fast
import hs_condense
import hs_satellite
import hs_satellite_ref
import hs_satellite_rest
import hs_satdirect
import hs_satellite_guess
import hs_satdefault
import hs_slab
import hs_slab2
import hs_orders
import hs_problems
import hs_reliability
import hs_security
import hs_security17
import hs_security18
import hs_security19
import hs_security20
import hs_security21
import hs_security22
import hs_security23
import hs_security24
import hs_security26
import hs_security27
import hs_noise_singular
import hs_security28
import hs_security29
import hs_security30
import hs_security31
import hs_plots
import hs_reliability19
import hs_singular
import hs_solvers
import hs_study_report
from hs_util import FAILS, PASSES

MODULES = (hs_constrained, hs_orders, hs_formulations, hs_free_time, hs_problems, hs_models, hs_reliability, hs_security, hs_solvers,
           hs_drivers, hs_examples, hs_singular)

MODULES += (hs_guard,)  # issue 42: the shooting growth guard
MODULES += (hs_study_report,)  # issue 42: studies and extrapolations that keep what they finished

MODULES += (hs_bounded,)  # issue 42: bounded work, continuation in the control weight, bounded controls by IPOPT
MODULES += (hs_extremal2,)  # issue 42: the wider extremal check
MODULES += (hs_order4,)  # issue 43: -hs_scheme conserving4
MODULES += (hs_order4shoot,)  # issue 43: conserving4 in multiple shooting
MODULES += (hs_shootband,)  # issue 44: the constrained and conserving4 shootings' outer system by PC hsband
MODULES += (hs_order4cons,)  # issue 43: conserving4 for constrained systems
MODULES += (hs_order4speed,)  # issue 43: -hs_extrapolate coarse first, conserving4's node-costate guesses
MODULES += (hs_order4iter,)  # issue 43: conserving4's cheaper Newton iteration (results unchanged)
MODULES += (hs_order4fast,)  # issue 43: -hs_extrapolate_romberg
MODULES += (hs_condense,)  # issue 43: -hs_condense, conserving4's stage nodes condensed before the LU
MODULES += (hs_bench,)  # issue 44: the scaling benchmark's scripts
MODULES += (hs_border,)  # issue 44: hsband's bordered step (a free T)
MODULES += (hs_hdf5,)  # issue 44, item 5: -hs_output_format hdf5
MODULES += (hs_manybody,)  # issue 44: many bodies (hsdrop's matching)
MODULES += (hs_slab,)  # issue 44, item 4: PC hsslab (slabs by sequential MUMPS, the interface by cyclic reduction)
MODULES += (hs_slab2,)  # issue 44: hsdrop's matching held by columns, on 3, 4, 8 ranks
MODULES += (hs_satellite,)  # issue 40: the satellite with three rotors, Euler angles and directors
MODULES += (hs_bounds,)  # issue 41: bounded controls and minimum time in the indirect solvers
MODULES += (hs_controls,)  # issue 41: controls beyond 1/2 u^T R u in conserving4
MODULES += (hs_controls2,)  # issue 41: time in the controls, conserving4's switches, the Done-when matrix
MODULES += (hs_controlqp,)  # issue 41: bounded controls with a non-diagonal R (the coupled law)
MODULES += (hs_bodies,)  # issue 40, item 1: rigid bodies and joints in problem files
MODULES += (hs_momentum,)  # issue 40, item 4: momentum and other monitored invariants in the outputs
MODULES += (hs_satellite_ref,)  # issue 40: the satellite against an independent continuous reference; -hs_compare
MODULES += (hs_satellite_rest,)  # issue 40: rest to rest with conserved quantities (the satellite in directors)
MODULES += (hs_satellite_guess,)  # issue 40: -hs_guess_costates implied (the satellite from a state guess)
MODULES += (hs_satdirect,)  # issue 40: the direct side (IPOPT, -hs_compare) of the extended class through B(q) alone
MODULES += (hs_security17,)  # issue 38: security round 17
MODULES += (hs_security18,)  # issue 38: security round 18
MODULES += (hs_satdefault,)  # issue 40: the geodesic frame guess, the satellite from the default guess
MODULES += (hs_security19,)  # issue 38: security round 19
MODULES += (hs_security20,)  # issue 38: security round 20
MODULES += (hs_security21,)  # issue 38: security round 21
MODULES += (hs_security22,)  # issue 38: security round 22
MODULES += (hs_security23,)  # issue 38: security round 23
MODULES += (hs_security24,)  # issue 38: security round 24
MODULES += (hs_security26,)  # issue 38: security round 26
MODULES += (hs_security27,)  # issue 38: security round 27
MODULES += (hs_security28,)  # issue 38: security round 28
MODULES += (hs_security29,)  # issue 38: security round 29
MODULES += (hs_security30,)  # issue 38: security round 30
MODULES += (hs_security31,)  # issue 38: security round 31
MODULES += (hs_plots,)  # issue 38: the drivers' PNGs whole or absent
MODULES += (hs_reliability19,)  # issue 38: the open items of rounds 17 and 18, 2-rank reproducibility
MODULES += (hs_noise_singular,)  # issue 38: HS_NOISE_SINGULAR's evidence, the noise's step field by field


def tests():
    """{TEST: t_TEST} over the functions MODULES define (not import); a name defined twice is an error."""
    table = {}
    for mod in MODULES:
        for key, f in vars(mod).items():
            if key.startswith("t_") and callable(f) and f.__module__ == mod.__name__:
                if key[2:] in table:
                    sys.exit("hstest.py: %s is defined in %s and in %s" % (key, table[key[2:]].__module__, mod.__name__))
                table[key[2:]] = f
    return table


def check_names(names):
    """0 if names (those tests/CMakeLists.txt runs) are exactly the tests defined, else 1, saying which differ."""
    defined, listed = set(tests()), set(names)
    for name in sorted(listed - defined):
        print("FAIL: tests/CMakeLists.txt runs the test %s, which no tests/hs_*.py module defines (t_%s)" % (name, name))
    for name in sorted(defined - listed):
        print("FAIL: %s.t_%s is not run by tests/CMakeLists.txt" % (tests()[name].__module__, name))
    print("%d tests defined, %d run by tests/CMakeLists.txt, %d differ"
          % (len(defined), len(listed), len(defined ^ listed)))
    return 1 if defined ^ listed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--list"]:
        print("\n".join(sorted(tests())))
        sys.exit(0)
    if sys.argv[1:2] == ["--check"]:
        sys.exit(check_names(sys.argv[2:]))
    TESTS = tests()
    if len(sys.argv) < 4 or sys.argv[3] not in TESTS:
        sys.exit("hstest.py: no test %s; the tests: %s\nusage: hstest.py HAMSHOOT MPIEXEC TEST [args]"
                 % (repr(sys.argv[3]) if len(sys.argv) > 3 else "given", " ".join(sorted(TESTS))))
    # each test in a working directory of its own: runs without -o share ./hamshoot-checkpoint, which one run holds
    # (a second one in the same directory is refused), and ctest runs tests side by side
    import shutil
    import tempfile
    WORK = tempfile.mkdtemp(prefix="hstest-")
    os.chdir(WORK)
    # and Open MPI's session directories there too: singletons of tests run side by side shared /tmp/ompi.*, and one
    # ending removed what another was creating (MPI_Init: "session_dir.c ... No such file or directory")
    import hs_util
    hs_util.ENV["OMPI_MCA_orte_tmpdir_base"] = os.environ["OMPI_MCA_orte_tmpdir_base"] = WORK
    TESTS[sys.argv[3]](*sys.argv[4:])
    os.chdir("/")
    shutil.rmtree(WORK, ignore_errors=True)
    print("%d passed, %d failed" % (PASSES[0], len(FAILS)))
    sys.exit(1 if FAILS else 0)
