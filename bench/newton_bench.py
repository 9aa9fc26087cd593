#!/usr/bin/env python3
"""hamshoot benchmark: time per Newton iteration against N and MPI ranks, for
transcription and multiple shooting (issue: distributed multiple shooting).

    python3 bench/newton_bench.py [--hamshoot build/hamshoot] [--problem pendulum]
                                  [--N 1000,10000,100000,1000000] [--ranks 1,2,4]
                                  [--interval-per-segment 10]

Each run solves the problem from the default initial guess with -quiet and
reads summary.json: time per Newton iteration = wall_time_s / newton_iterations
(the wall time covers the initial guess, all residual and Jacobian evaluations,
the linear solves and the diagnostics). Shooting uses M = N / (intervals per
segment) segments with the default direct (MUMPS) solve and, for comparison,
-hs_shoot_ksp rankblock. 4 ranks on a 2-core machine are oversubscribed: they
measure correctness of the distribution, not speed-up. Peak memory (max RSS of
the slowest rank, from /usr/bin/time if present) is printed too.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--hamshoot", default=os.path.join(os.path.dirname(__file__), "..", "build", "hamshoot"))
ap.add_argument("--problem", default="pendulum")
ap.add_argument("--N", default="1000,10000,100000,1000000")
ap.add_argument("--ranks", default="1,2,4")
ap.add_argument("--interval-per-segment", type=int, default=10)
ap.add_argument("--timeout", type=int, default=1800)
a = ap.parse_args()

# yield_when_idle: oversubscribed ranks must not spin on their shared cores
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")
timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)


def run(args, P):
    with tempfile.TemporaryDirectory() as d:
        cmd = [a.hamshoot, "-problem", a.problem, "-quiet", "-o", d] + args
        if P > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(P)] + cmd
        if timer:
            cmd = [timer, "-f", "MAXRSS %M"] + cmd
        try:
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        rss = [int(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("MAXRSS")]
        f = os.path.join(d, "summary.json")
        if not os.path.exists(f):
            return None, p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "failed"
        s = json.load(open(f))
        s["rss_mb"] = rss[0] / 1024 if rss else float("nan")
        return s, ""


print("problem %s; time per Newton iteration = wall_time_s / newton_iterations" % a.problem)
print("%-13s %9s %6s %9s %7s %8s %6s %10s %12s %9s" %
      ("bvp", "N", "ranks", "segments", "linsol", "Newton", "KSP", "wall [s]", "s / Newton", "RSS [MB]"))
for N in [int(x) for x in a.N.split(",")]:
    for P in [int(x) for x in a.ranks.split(",")]:
        M = max(1, N // a.interval_per_segment)
        for label, args in (("transcription", ["-N", str(N)]),
                            ("shooting", ["-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)]),
                            ("shooting", ["-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M),
                                          "-hs_shoot_ksp", "rankblock"])):
            s, err = run(args, P)
            lin = "gmres" if "rankblock" in args else "mumps"
            if not s or not s["converged"]:
                print("%-13s %9d %6d %9s %7s  failed: %s" % (label, N, P, M if label == "shooting" else "-", lin,
                                                            err or (s and s["snes_reason"])))
                continue
            print("%-13s %9d %6d %9s %7s %8d %6d %10.2f %12.4f %9.0f" %
                  (label, N, P, s["segments"] if label == "shooting" else "-", lin, s["newton_iterations"],
                   s["ksp_iterations"], s["wall_time_s"], s["wall_time_s"] / max(1, s["newton_iterations"]), s["rss_mb"]), flush=True)
