#!/usr/bin/env python3
"""hamshoot benchmark: the banded LU (-pc_type hsband, bvp/petscext/pcband.c) against MUMPS (the default) on
the same runs, side by side (issue 11).

    python3 bench/band_bench.py [--hamshoot build/hamshoot] [--problem pendulum]
                                [--N 10000,100000] [--ranks 1,2] [--bvp transcription,shooting]

Each row solves the problem from the default guess with -quiet -hs_check_extremal no, once with MUMPS
and once with hsband, and reads summary.json: Newton iterations (they must agree), wall_time_s, the
time per Newton iteration, the ratio MUMPS / hsband of the wall times (> 1: hsband is faster), and
the largest peak resident memory of a rank (peak_memory_mb.max: O(N/P) is what to look for).
Shooting uses N / 10 segments. The time includes everything the solve does (residuals, Jacobians,
factorizations, solves); the linear solver's own share is in -log_view (PCSetUp, PCApply).
"""
import argparse
import json
import os
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--hamshoot", default=os.path.join(os.path.dirname(__file__), "..", "build", "hamshoot"))
ap.add_argument("--problem", default="pendulum")
ap.add_argument("--N", default="10000,100000")
ap.add_argument("--ranks", default="1,2")
ap.add_argument("--bvp", default="transcription,shooting")
a = ap.parse_args()
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")


def run(args, P):
    with tempfile.TemporaryDirectory() as d:
        cmd = [a.hamshoot, "-problem", a.problem, "-quiet", "-hs_check_extremal", "no", "-o", d] + args
        if P > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(P)] + cmd
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        f = os.path.join(d, "summary.json")
        return json.load(open(f)) if os.path.exists(f) else None


print("problem %s; wall time of the whole solve, MUMPS against -pc_type hsband" % a.problem)
print("%-13s %8s %6s %7s %10s %10s %12s %12s %8s %9s %9s" % ("bvp", "N", "ranks", "Newton", "mumps [s]", "hsband [s]",
                                                     "mumps s/Nwt", "hsband s/Nwt", "ratio", "mumps MB", "band MB"))
for bvp in a.bvp.split(","):
    for N in [int(x) for x in a.N.split(",")]:
        for P in [int(x) for x in a.ranks.split(",")]:
            args = ["-N", str(N)]
            if bvp == "shooting":
                args += ["-hs_bvp_type", "shooting", "-hs_shoot_segments", str(N // 10)]
            m, b = run(args + ["-hs_linear_solver", "mumps"], P), run(args + ["-hs_linear_solver", "band"], P)
            if not (m and b and m["converged"] and b["converged"]):
                print("%-13s %8d %6d  failed" % (bvp, N, P))
                continue
            its = "%d" % m["newton_iterations"] if m["newton_iterations"] == b["newton_iterations"] else \
                "%d/%d" % (m["newton_iterations"], b["newton_iterations"])
            print("%-13s %8d %6d %7s %10.3f %10.3f %12.4f %12.4f %8.2f %9.0f %9.0f" %
                  (bvp, N, P, its, m["wall_time_s"], b["wall_time_s"], m["wall_time_s"] / m["newton_iterations"],
                   b["wall_time_s"] / b["newton_iterations"], m["wall_time_s"] / b["wall_time_s"],
                   m["peak_memory_mb"]["max"], b["peak_memory_mb"]["max"]))
