#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 28 (issue 38; docs/reliability.md, "Round 28"). Each
assertion marked (before: ...) failed on the code before its fix:

  petsc values    a value PETSc cannot read for one of its own keys (-snes_atol 1e-10x, -ksp_rtol abc with a KSP that
                  reads it, -snes_max_it '5 0', -snes_lag_jacobian_persists maybe, a driver's sub-solver's
                  -hs_grid_snes_atol abc, two keys with one bad value) is an error naming the key and the value, exit
                  1, one message on 2 ranks (before: PETSc's "Input string 1e-10x has no numeric value", "Unknown
                  logical value: maybe", naming no key).

stdlib only; each case in a temporary directory of its own."""
import os
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, MPIEXEC, check

QUIET = ["-hs_check_extremal", "no", "-quiet"]


def hamshoot(args, d, ranks=1, timeout=120, env=None):
    """(exit status, stdout + stderr) of hamshoot args in directory d."""
    cmd = [HAMSHOOT] + args
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    p = subprocess.run(cmd, env=dict(ENV, **(env or {})), cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout


def case_petsc_values(d):
    """PETSc's keys with values it cannot read: the error names the key (every rank's message is the same; one
    printed)."""
    base = ["-problem", "pendulum", "-N", "10"] + QUIET
    cases = [(["-snes_atol", "1e-10x"], "option -snes_atol 1e-10x: not a number", 1),
             (["-snes_atol", "1e-10x"], "option -snes_atol 1e-10x: not a number", 2),
             (["-ksp_type", "gmres", "-ksp_rtol", "abc"], "option -ksp_rtol abc: not a number", 1),
             (["-snes_max_it", "5 0"], "option -snes_max_it 5 0: not a whole number", 2),
             (["-snes_lag_jacobian_persists", "maybe"], "option -snes_lag_jacobian_persists maybe: not a logical", 1),
             (["-snes_atol", "abc", "-snes_rtol", "abc"], "-snes_atol or -snes_rtol abc: not a number", 1),
             (["-hs_study", "3", "-hs_grid_snes_atol", "abc"], "option -hs_grid_snes_atol abc: not a number", 1)]
    for extra, want, ranks in cases:
        rc, out = hamshoot(base + extra, d, ranks)
        errors = [x for x in out.splitlines() if x.startswith("hamshoot: error")]
        print("%s on %d rank(s): exit %d, %s" % (" ".join(extra), ranks, rc, errors))
        if " or " in want:  # both keys named, in the database's order
            a, b = want.split(" or ")[0], want.split(" or ")[1].split()[0]
            want = want.replace("%s or %s" % (a, b), "%s or %s" % ((a, b) if errors and a + " or" in errors[0] else (b, a)))
        check(rc == 1 and len(errors) == 1 and want in errors[0],
              "%s on %d rank(s): exit %d, %s (want '%s'; before: PETSc's message naming no key)"
              % (" ".join(extra), ranks, rc, errors, want))


def t_security28():
    """round 28's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_petsc_values,):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
