#!/usr/bin/env python3
"""hamshoot benchmark: PC hsslab (bvp/petscext/pcslab.c, issue 44 item 4) against hsdrop with MUMPS' LU of the
whole dropped matrix, on the many-body problem ncar, side by side in one run.

    python3 bench/slab_bench.py [--hamshoot build/hamshoot] [--cars 64] [--N 4000] [--ranks 1,2]
                                [--solvers drop,slab] [--flops-ranks 2,4,8] [--flops-N 1000] [--repeat 1]

Part 1 (--ranks, --solvers): each solve from the default guess (-quiet -hs_check_extremal no), solvers and rank
counts interleaved; from summary.json the Newton and Krylov iterations, wall_time_s (the solve), the process time
(start-up and output too), the CPU time of all ranks (user + system, getrusage of the children: less sensitive than
wall time to a shared machine), the largest rank's peak memory and J^d (the solvers must agree). "drop" is
-hs_linear_solver drop (the default before hsslab: GMRES + hsdrop, MUMPS LU of the dropped matrix on all ranks,
its analysis on rank 0), "slab" -hs_linear_solver slab (the same GMRES and hsdrop, the dropped matrix factored slab
by slab). Part 2 (--flops-ranks, oversubscribed with --oversubscribe): slab's -log_view at --flops-N, the largest
rank's flops of its phases (and HsSlabFactor's total over the ranks, from -log_view's Mflop/s times its time), beside
drop's MUMPS factorization flops (RINFOG(3) of -ksp_view, all ranks): HsSlabFactor (each rank's sequential MUMPS factorization with its Schur
complement: O(N/P) per rank), HsBandRedFactor (the interface system's cyclic reduction: its busiest rank does
log2 P merges of blocks whose size does not depend on N or P), HsSlabSolve. Flops, not times: the ranks share
the cores.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--hamshoot", default=os.path.join(os.path.dirname(__file__), "..", "build", "hamshoot"))
ap.add_argument("--cars", type=int, default=64)
ap.add_argument("--N", type=int, default=4000)
ap.add_argument("--ranks", default="1,2")
ap.add_argument("--solvers", default="drop,slab")
ap.add_argument("--flops-ranks", default="2,4,8")
ap.add_argument("--flops-N", type=int, default=1000)
ap.add_argument("--repeat", type=int, default=1)
a = ap.parse_args()
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
BASE = ["-problem", "ncar", "-p_cars", str(a.cars), "-quiet", "-hs_check_extremal", "no"]


def run(args, P):
    """summary.json (with the process time and the output) of one run, or None"""
    with tempfile.TemporaryDirectory() as d:
        cmd = [a.hamshoot] + BASE + ["-o", d] + args
        if P > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(P)] + cmd
        t0, r0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        t, r1 = time.time() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        f = os.path.join(d, "summary.json")
        s = json.load(open(f)) if os.path.exists(f) else None
        if s:
            s["_process"], s["_out"] = t, p.stdout
            s["_cpu"] = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        return s


def event(out, name):
    """-log_view's line of event name: (max time, max flops, flops ratio max/min, total flops over the ranks)"""
    m = re.search(r"^%s\s+(\d+)\s+[\d.]+\s+([\d.e+-]+)\s+([\d.]+)\s+([\d.e+-]+)\s+([\d.]+)\s.*\s(\d+)$" % name, out, re.M)
    return (float(m.group(2)), float(m.group(4)), float(m.group(5)), float(m.group(6)) * 1e6 * float(m.group(2))) if m else None


print("ncar, %d cars, N = %d (4n = %d unknowns a node); part 1: solve times" % (a.cars, a.N, 4 * a.cars))
print("| solver | ranks | Newton | Krylov | solve [s] | process [s] | CPU [s] | peak MB | J^d |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for rep in range(a.repeat):
    for P in [int(x) for x in a.ranks.split(",") if x]:
        for sol in a.solvers.split(","):
            s = run(["-N", str(a.N), "-hs_linear_solver", sol], P)
            if not s:
                print("| %s | %d | failed |" % (sol, P))
                continue
            print("| %s | %d | %d | %d | %.2f | %.2f | %.1f | %.0f | %.12g |"
                  % (sol, P, s["newton_iterations"], s["ksp_iterations"], s["wall_time_s"], s["_process"], s["_cpu"],
                     s["peak_memory_mb"]["max"], s["J"]), flush=True)

if a.flops_ranks:
    print("\npart 2: flops per rank, N = %d: slab's from -log_view (the largest rank's; the ranks' total), drop's MUMPS "
          "factorization from -ksp_view (RINFOG(3), all ranks)" % a.flops_N)
    print("| ranks | slab HsSlabFactor max | total | HsBandRedFactor max | HsSlabSolve max | drop MUMPS RINFOG(3) | J^d slab / drop |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for P in [int(x) for x in a.flops_ranks.split(",") if x]:
        s = run(["-N", str(a.flops_N), "-hs_linear_solver", "slab", "-log_view"], P)
        d = run(["-N", str(a.flops_N), "-hs_linear_solver", "drop", "-ksp_view"], P)
        if not (s and d):
            print("| %d | failed |" % P)
            continue
        f, r, v = (event(s["_out"], e) for e in ("HsSlabFactor", "HsBandRedFactor", "HsSlabSolve"))
        g = re.findall(r"RINFOG\(3\) \(global estimated flops for the elimination after factorization\): ([0-9.e+-]+)", d["_out"])
        print("| %d | %.3g | %.3g | %.3g | %.3g | %s | %.12g / %.12g |"
              % (P, f[1], f[3], r[1] if r else 0, v[1], g[-1] if g else "-", s["J"], d["J"]), flush=True)
