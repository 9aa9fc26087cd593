#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): the noise floor's singularity test (HS_NOISE_SINGULAR, NoiseStep in
bvp/interface/convergence.c; issue 38, bench/noise_singular.py for the measured ranges).

  singular     y(T) fixed where the (nearly) conserved p_y already determines it (y free of the control, its rate
               1e-300 or 1e-20): a multiplier the equations do not determine, driven by Newton to 1e17. With the l2
               line search alone the solve ends SINGULAR_AT_NOISE_FLOOR (exit 2, the diagnosis naming the singular
               Jacobian and the fields), on 1 and 2 ranks; with the default strategy not converged with that reason
               among its attempts. Before: the floor vouched for |F| = 147 (||J^-1 e|| / ||X|| = 1.8e-14 with ||X||
               = 4e17), and only the conservation check refused it (CONSERVATION_VIOLATED, "looked converged").
  well-posed   floors that converge, forced there (-hs_snes_roundoff 0, -snes_atol 1e-300, -snes_rtol 0,
               -snes_stol 0): kepler (1 and 2 ranks), the pendulum file, the crane (the largest r measured, 1.5e-10),
               satellite_euler (a field zero but for round-off: measured against its own size it read 1.3, against
               the median field 2e-15), cart_pendulum_spatial (most of its 140 fields exactly zero: against the
               median of all fields, 0, it read 2.8e-4; against the median nonzero field 1e-14) and the same
               y-problem with both ends of y and p_y free (its costate fields zero but for round-off). Each converges
               at its floor, and r at every decision (-info :hs) is below 1e-6, a thousandth of the threshold. (The
               crane and satellite_euler need the strategy's direct guess, IPOPT: not run sanitized.)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import re
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, MPIEXEC, check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RO_OCP = ("problem: ro\nparam c: 1\nparam m: 1\ncoordinates: x, y\ncontrols: 1\nmass: m, 0, 0, m\n"
          "potential: 0.5*x^2 + c*(%s)\nB: 1, 0\nR: 1\nT: 2\nN: 20\nx0: 0, 0, 0, 0.5\nxT: 1, %s, 0, %s\n")
FLOOR = ["-hs_snes_roundoff", "0", "-snes_atol", "1e-300", "-snes_rtol", "0", "-snes_stol", "0"]
R = re.compile(r"^\[0\] <hs> NoiseStep\(\): .* r = (\S+) \(singular above (\S+)\): (solved|not solved|singular)$",
               re.M)


def run(d, args, ranks=1, text=None):
    """(exit status, summary, output, [(r, threshold, verdict)] of every floor decision)."""
    if text:
        with open(os.path.join(d, "ro.ocp"), "w") as f:
            f.write(text)
    out = os.path.join(d, "out")
    cmd = ([MPIEXEC, "--oversubscribe", "-n", str(ranks)] if ranks > 1 else []) + [
        HAMSHOOT, "-hs_check_extremal", "no", "-quiet", "-info", ":hs", "-o", out] + args
    p = subprocess.run(cmd, env=ENV, cwd=d, capture_output=True, text=True, timeout=120)
    s = {}
    if os.path.isfile(os.path.join(out, "summary.json")):
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
    text = p.stdout + p.stderr
    return p.returncode, s, text, [(float(m.group(1)), float(m.group(2)), m.group(3)) for m in R.finditer(text)]


def t_noise_singular():
    """see the module's docstring."""
    with tempfile.TemporaryDirectory() as tmp:
        for rate, ranks in (("1e-300", 1), ("1e-20", 1), ("1e-300", 2)):
            d = tempfile.mkdtemp(dir=tmp)
            kind = "y(T) fixed, p_y's rate %s*sin(y), %d rank(s)" % (rate, ranks)
            rc, s, out, dec = run(d, ["-problem", "ro.ocp", "-hs_strategy", "newton", "-snes_linesearch_type", "l2"],
                                  ranks, RO_OCP % (rate + "*sin(y)", "1", "*"))
            print("%s: exit %d, %s, r %s" % (kind, rc, s.get("solver_status"), [r for r, _, _ in dec]))
            check(rc == 2 and s.get("solver_status") == "SINGULAR_AT_NOISE_FLOOR" and
                  "numerically singular" in s.get("diagnosis", "") and "fields" in s.get("diagnosis", ""),
                  "%s: exit %d, %s (before: CONSERVATION_VIOLATED, the floor vouched for |F| = 147)\n%s"
                  % (kind, rc, s.get("solver_status"), s.get("diagnosis")))
            check(dec and dec[0][2] == "singular" and dec[0][0] > dec[0][1],
                  "%s: the first floor decision %s" % (kind, dec[:1]))
        d = tempfile.mkdtemp(dir=tmp)
        rc, s, out, dec = run(d, ["-problem", "ro.ocp"], 1, RO_OCP % ("1e-300*sin(y)", "1", "*"))
        check(rc == 2 and "SINGULAR_AT_NOISE_FLOOR" in s.get("diagnosis", "") + s.get("solver_status", "") and
              "looked converged" not in s.get("diagnosis", "") and all(v != "solved" for _, _, v in dec),
              "default strategy, y(T) fixed: exit %d, %s, verdicts %s (before: CONSERVATION_VIOLATED)\n%s"
              % (rc, s.get("solver_status"), [v for _, _, v in dec], s.get("diagnosis")))
        # the crane and satellite_euler start from the strategy's direct guess (IPOPT): not in the sanitized build
        direct = os.environ.get("HS_SANITIZED") != "1"
        for name, args, ranks, text in (
                ("kepler N = 2000", ["-problem", "kepler", "-N", "2000"], 1, None),
                ("kepler N = 2000, 2 ranks", ["-problem", "kepler", "-N", "2000"], 2, None),
                ("pendulum.ocp", ["-problem", os.path.join(ROOT, "problems", "pendulum.ocp")], 1, None),
                ("cart_pendulum_spatial",
                 ["-problem", os.path.join(ROOT, "tests", "data", "cart_pendulum_spatial.ocp")], 1, None),
                ("y and p_y free at T", ["-problem", "ro.ocp"], 1, RO_OCP % ("1e-300*sin(y)", "*", "*"))) + ((
                ("crane", ["-problem", os.path.join(ROOT, "problems", "crane.ocp")], 1, None),
                ("satellite_euler", ["-problem", os.path.join(ROOT, "problems", "satellite_euler.ocp")], 1, None))
                if direct else ()):
            d = tempfile.mkdtemp(dir=tmp)
            rc, s, out, dec = run(d, args + FLOOR, ranks, text)
            print("%s: exit %d, %s, r %s" % (name, rc, s.get("solver_status"), [r for r, _, _ in dec]))
            check(rc == 0 and s.get("solver_status") == "CONVERGED_NOISE_FLOOR" and dec and
                  all(r < 1e-3 * t and v == "solved" for r, t, v in dec),
                  "%s, well-posed at its floor: exit %d, %s, decisions %s\n%s"
                  % (name, rc, s.get("solver_status"), dec, out[-400:]))
