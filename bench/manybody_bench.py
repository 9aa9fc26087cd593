#!/usr/bin/env python3
"""hamshoot benchmark: the many-body regime (issue 11): ncar with K cars (n = K degrees of freedom,
4n unknowns per node), the transcription's default linear solver for n > 32 (-hs_linear_solver drop:
GMRES + -pc_type hsdrop, bvp/petscext/pcdrop.c) against MUMPS' LU of the whole stored Jacobian (-hs_linear_solver
mumps) and the banded LU (-hs_linear_solver band, the default for n <= 32), side by side.

    python3 bench/manybody_bench.py [--hamshoot build/hamshoot] [--cars 16,32,64] [--N 400,4000]
                                    [--ranks 2] [--solvers drop,mumps,band] [--max-mumps-work 2e8]
                                    [--max-band-work 1.1e9]
                                    [--problem ncar] [--extra "-p_beta 1e-9"] [--blas DIR]

Each row solves from the default guess (-quiet -hs_check_extremal no) and reads summary.json: Newton and
Krylov iterations, wall_time_s (the whole solve), the process time (what `time mpirun ...` sees:
start-up and output too), the largest peak resident memory of a rank, and J^d (which the solvers must
agree on). MUMPS and the band factor the stored 4n x 4n node blocks whole: O(N n^3) work, about 8 s
for 64 cars at N = 400 on 2 ranks here (MUMPS), so rows where N n^3 exceeds --max-mumps-work
(--max-band-work for the band) are skipped for them ("-"). The issue's target: 64 cars, N = 4000, 2 ranks, in under a minute
(issue 11), under 10 s (issue 44). --blas DIR puts DIR first on LD_LIBRARY_PATH of every rank (e.g. an unpacked
libopenblas0-serial's lib/x86_64-linux-gnu/openblas-serial, to compare BLAS without update-alternatives).
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--hamshoot", default=os.path.join(os.path.dirname(__file__), "..", "build", "hamshoot"))
ap.add_argument("--problem", default="ncar")
ap.add_argument("--cars", default="16,32,64")
ap.add_argument("--N", default="400,4000")
ap.add_argument("--ranks", default="2")
ap.add_argument("--solvers", default="drop,mumps,band")
ap.add_argument("--max-mumps-work", type=float, default=2e8)
ap.add_argument("--max-band-work", type=float, default=1.1e9)
ap.add_argument("--extra", default="")
ap.add_argument("--blas", default="")
a = ap.parse_args()
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
if a.blas:
    env["LD_LIBRARY_PATH"] = a.blas + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")


def run(args, P):
    with tempfile.TemporaryDirectory() as d:
        cmd = [a.hamshoot, "-problem", a.problem, "-quiet", "-hs_check_extremal", "no", "-o", d] + args + a.extra.split()
        if P > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(P)] + (["-x", "LD_LIBRARY_PATH"] if a.blas else []) + cmd
        t0 = time.time()
        subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        t = time.time() - t0
        f = os.path.join(d, "summary.json")
        s = json.load(open(f)) if os.path.exists(f) else None
        if s:
            s["_process"] = t
        return s


print("BLAS: %s" % (a.blas or "the system's"))
print("problem %s %s; the whole solve per linear solver (drop: GMRES + hsdrop; mumps: LU of the stored blocks; "
      "band: hsband)" % (a.problem, a.extra))
print("%5s %6s %6s %-6s %7s %7s %10s %11s %9s %16s" % ("cars", "N", "ranks", "solver", "Newton", "Krylov", "solve [s]",
                                                     "process [s]", "peak MB", "J^d"))
for K in [int(x) for x in a.cars.split(",")]:
    for N in [int(x) for x in a.N.split(",")]:
        for P in [int(x) for x in a.ranks.split(",")]:
            for ls in a.solvers.split(","):
                if (ls == "mumps" and N * K ** 3 > a.max_mumps_work) or (ls == "band" and N * K ** 3 > a.max_band_work):
                    print("%5d %6d %6d %-6s %7s" % (K, N, P, ls, "-"))
                    continue
                s = run(["-p_cars", str(K), "-N", str(N), "-hs_linear_solver", ls], P)
                if not (s and s["converged"]):
                    print("%5d %6d %6d %-6s  failed" % (K, N, P, ls))
                    continue
                print("%5d %6d %6d %-6s %7d %7d %10.2f %11.2f %9.0f %16.12f" %
                      (K, N, P, ls, s["newton_iterations"], s["ksp_iterations"], s["wall_time_s"], s["_process"],
                       s["peak_memory_mb"]["max"], s["J"]))
