#!/usr/bin/python3
"""Issue 43's speed targets, side by side (bench/README.md, "Order four against solve_bvp and Richardson").

scipy_bench.py finds, per target |J - J*|, the loosest solve_bvp tol and the smallest hamshoot N; on a shared
machine its best of 3 at each of many grids is noisy. This script times only those choices, interleaved round by
round (solve_bvp in-process, each hamshoot run a process whose summary.json gives the solve's wall_time_s, plus the
extrapolation's), so that every configuration sees the same load; it prints the best and the median of --rounds
and each one's error. A configuration is LABEL=EXE:ARGS, e.g.

  /usr/bin/python3 bench/order4_targets.py --problem pendulum --tol 1e-8 \\
      'c4x=build/hamshoot:-N 636 -hs_scheme conserving4 -hs_extrapolate' \\
      'c2x=build/hamshoot:-N 3280 -hs_extrapolate'
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "crosscheck"))
import numpy as np  # noqa: E402
import continuous_nco as cn  # noqa: E402

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
JSTAR = {"pendulum": 6.436944438855, "kepler": 0.73430279927822}  # docs/theory.md section 4; bench/README.md


def scipy_run(problem, tol):
    prob = cn.KEP if problem == "kepler" else cn.PEND
    t = np.linspace(0.0, prob["T"], 11)
    guess = cn.kepler_path_guess(prob, t) if problem == "kepler" else cn.linear_guess(prob, t)
    t0 = time.perf_counter()
    s = cn.solve(prob, t, guess, tol)
    return time.perf_counter() - t0, float(s.y[-1, -1])


def hamshoot_run(problem, exe, args):
    with tempfile.TemporaryDirectory() as d:
        cmd = [exe, "-problem", problem] + args + ["-hs_check_extremal", "no", "-quiet", "-o", d]
        subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        s = json.load(open(os.path.join(d, "summary.json")))
        e = s.get("extrapolation")
        return s["wall_time_s"] + (e["wall_time_s"] if e else 0), (e["J"] if e else s["J"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", default="pendulum", choices=("pendulum", "kepler"))
    ap.add_argument("--tol", type=float, required=True, help="solve_bvp's tol")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("configs", nargs="+", help="LABEL=EXE:ARGS")
    a = ap.parse_args()
    confs = []
    for c in a.configs:
        label, rest = c.split("=", 1)
        exe, args = rest.split(":", 1)
        confs.append((label, exe, args.split()))
    times = {"solve_bvp": []}
    J = {}
    times.update({c[0]: [] for c in confs})
    for _ in range(a.rounds):
        t, J["solve_bvp"] = scipy_run(a.problem, a.tol)
        times["solve_bvp"].append(t)
        for label, exe, args in confs:
            t, J[label] = hamshoot_run(a.problem, exe, args)
            times[label].append(t)
    ref = min(times["solve_bvp"])
    print("%s, solve_bvp tol %g; %d rounds interleaved; load average %s" % (a.problem, a.tol, a.rounds,
                                                                          open("/proc/loadavg").read().split()[:3]))
    for label in times:
        ts = sorted(times[label])
        print("%-12s best %7.2f ms  median %7.2f ms  |J - J*| %.2e  solve_bvp's best / this best %.2f"
              % (label, ts[0] * 1e3, ts[len(ts) // 2] * 1e3, abs(J[label] - JSTAR[a.problem]), ref / ts[0]))


if __name__ == "__main__":
    main()
