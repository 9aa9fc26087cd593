#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 20 (issue 38; docs/reliability.md, "Round 20"). Each
assertion failed on the code before its fix:

  coarse K      SIGTERM in the coarsest grid N/16 of -hs_extrapolate_grids 5 (kepler N = 160000), then -hs_restart
                with the same options: the restart solves the grids in order to the uninterrupted run's J^d (it had
                refused its own checkpoint: "the checkpoint's coarse_grid is not one a run writes (N/4 or N/2 ...)",
                exit 1); a coarse_grid with trailing junk ("10000abc", read by strtol as 10000) or of no grid is
                refused
  ipopt keys    -hs_scheme direct -hs_direct_solver ipopt (tests/data/wheel_rest_directors.ocp, pendulum) reads
                IPOPT's keys: -hs_ipopt_tol nan, 0 and -hs_ipopt_max_it -3 are range errors naming the key, -hs_ipopt_tol
                0.9 is taken and the result demoted to "the requested tolerance only" (exit 2) (each had been refused as
                "unknown option -hs_ipopt_tol, or one this run does not use": the type became IPOPT only after the
                options were read)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import subprocess
import tempfile

from hs_reliability import run_killed
from hs_util import ENV, HAMSHOOT, MPIEXEC, check


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def case_coarse_k(d):
    """a checkpoint of the coarsest of five grids: the restart with the same options takes it; junk is refused.
    Sanitized (HS_SANITIZED, about ten times slower) on N = 32000: five runs on N = 160000 took over 120 s there."""
    n = 32000 if os.environ.get("HS_SANITIZED") else 160000
    coarse = n // 16
    args = ["-problem", "kepler", "-N", str(n), "-hs_extrapolate", "-hs_extrapolate_grids", "5",
            "-hs_check_extremal", "no", "-hs_monitor"]
    p = subprocess.run([HAMSHOOT] + args + ["-o", "ref"], env=ENV, cwd=d, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "the uninterrupted run: exit %d\n%s" % (p.returncode, (p.stdout + p.stderr)[-600:]))
    ref = summary(os.path.join(d, "ref"))
    od = os.path.join(d, "out")
    text, rc = run_killed(args + ["-hs_grid_snes_monitor", "ascii"], 1, "1 SNES Function norm", 1, outdir=od)
    ck = os.path.join(od, "checkpoint")
    with open(os.path.join(ck, "checkpoint.json")) as f:
        js = json.load(f)
    check(rc == 3 and js.get("coarse_grid") == coarse, "SIGTERM in grid N/16: exit %d, coarse_grid %r\n%s"
          % (rc, js.get("coarse_grid"), text[-600:]))
    with open(os.path.join(ck, "checkpoint.json")) as f:
        good = f.read()
    for junk in ('"coarse_grid": %dabc' % coarse, '"coarse_grid": %d' % (3 * coarse)):
        with open(os.path.join(ck, "checkpoint.json"), "w") as f:
            f.write(good.replace('"coarse_grid": %d' % coarse, junk))
        p = subprocess.run([HAMSHOOT] + args + ["-o", os.path.join(d, "junk"), "-hs_restart", ck], env=ENV, cwd=d,
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 1 and "coarse_grid is not one a run writes" in p.stdout + p.stderr,
              "%s: exit %d\n%s" % (junk, p.returncode, (p.stdout + p.stderr)[-300:]))
    with open(os.path.join(ck, "checkpoint.json"), "w") as f:
        f.write(good)
    p = subprocess.run([HAMSHOOT] + args + ["-o", od, "-hs_restart", ck], env=ENV, cwd=d, capture_output=True,
                       text=True, timeout=120)
    out = p.stdout + p.stderr
    check(p.returncode == 0 and "from N/16 = %d" % coarse in out, "the restart: exit %d\n%s" % (p.returncode, out[-600:]))
    if p.returncode == 0:
        s = summary(od)
        check(abs(s["J"] - ref["J"]) <= 1e-10 * abs(ref["J"]), "the restart's J^d %r against %r" % (s["J"], ref["J"]))


def case_ipopt_keys(d):
    """IPOPT's keys with -hs_direct_solver ipopt: read (range errors name them; a loose tolerance is taken)."""
    wheel = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wheel_rest_directors.ocp")
    for prob in (wheel, "pendulum"):
        base = ["-problem", prob, "-N", "10", "-hs_scheme", "direct", "-hs_direct_solver", "ipopt",
                "-hs_check_extremal", "no"]
        for extra, rc, want in ((["-hs_ipopt_tol", "nan"], 1, "-hs_ipopt_tol nan is not a finite number"),
                                (["-hs_ipopt_tol", "0"], 1, "-hs_ipopt_tol 0. must lie in (0, 1)"),
                                (["-hs_ipopt_max_it", "-3"], 1, "-hs_ipopt_max_it -3 must be >= 0"),
                                (["-hs_ipopt_tol", "0.9"], 2, "converged to the requested tolerance only"),
                                (["-hs_ipopt_tol", "1e-10", "-hs_ipopt_max_it", "200"], 0, "Solve_Succeeded")):
            p = subprocess.run([HAMSHOOT] + base + extra, env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
            out = p.stdout + p.stderr
            check(p.returncode == rc and want in out,
                  "%s %s: exit %d\n%s" % (os.path.basename(prob), " ".join(extra), p.returncode, out[-300:]))


def t_security20():
    """round 20's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        sanitized = bool(os.environ.get("HS_SANITIZED"))  # the sanitized build has no IPOPT (tools/sanitize.sh)
        for case in ((case_coarse_k,) if sanitized else (case_ipopt_keys, case_coarse_k)):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
