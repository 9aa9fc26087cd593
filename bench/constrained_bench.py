#!/usr/bin/python3
"""Constrained systems in natural coordinates against the same systems in minimal coordinates (docs/constrained.md;
bench/README.md): the error of J^d and the solve time at equal N, side by side in one run.

For each pair (the natural-coordinate file, its minimal-coordinate twin) the reference J* is the Richardson limit of
the natural form at the two finest grids of the run (the test constrained_* checks that both forms' limits agree to
1e-6 or better). Then for each N: J^d and |J^d - J*| / |J*| of each form, its Newton iterations and wall_time_s from
summary.json (the solve, from the default guess with the default strategy), best of --repeat.

  python3 bench/constrained_bench.py                       # N = 40, 80, 160, 320, 640
  python3 bench/constrained_bench.py --N 40,80,160 --repeat 1
"""
import argparse
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
EXE = os.path.join(ROOT, "build", "hamshoot")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
PAIRS = (("crane", "problems/crane_natural.ocp", "problems/crane.ocp"),
         ("four-bar", "problems/fourbar.ocp", "tests/data/fourbar_crank.ocp"),
         ("3-link arm", "problems/manipulator3_natural.ocp", "problems/manipulator3.ocp"),
         ("double pendulum", "problems/double_pendulum_cartesian.ocp", "tests/data/double_pendulum_angles.ocp"))


def solve(path, N, repeat):
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "o")
            p = subprocess.run([EXE, "-problem", os.path.join(ROOT, path), "-N", str(N), "-hs_check_extremal", "no",
                                "-quiet", "-o", out], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0 or not os.path.exists(os.path.join(out, "summary.json")):
                return None
            s = json.load(open(os.path.join(out, "summary.json")))
            if best is None or s["wall_time_s"] < best["wall_time_s"]:
                best = s
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--N", default="40,80,160,320,640")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    Ns = [int(x) for x in a.N.split(",")]
    print("%-16s %6s  %-8s %18s %10s %7s %9s" % ("system", "N", "form", "J^d", "rel.error", "Newton", "solve [s]"))
    for name, nat, gen in PAIRS:
        rows = {(form, N): solve(path, N, a.repeat) for N in Ns for form, path in (("natural", nat), ("minimal", gen))}
        n1, n2 = rows["natural", Ns[-2]], rows["natural", Ns[-1]]
        Jstar = (4 * n2["J"] - n1["J"]) / 3 if n1 and n2 else float("nan")
        for N in Ns:
            for form in ("natural", "minimal"):
                s = rows[form, N]
                if s is None or not s["converged"]:
                    print("%-16s %6d  %-8s %18s" % (name, N, form, "not converged"))
                    continue
                print("%-16s %6d  %-8s %18.10f %10.2e %7d %9.4f" % (name, N, form, s["J"], abs(s["J"] - Jstar) / abs(Jstar),
                                                                 s["newton_iterations"], s["wall_time_s"]))
        print("%-16s J* = %.10f (Richardson of the natural form, N = %d, %d)" % (name, Jstar, Ns[-2], Ns[-1]))


if __name__ == "__main__":
    main()
