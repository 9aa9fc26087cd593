#!/usr/bin/env python3
"""hamshoot benchmark (issue 44): the outer (condensed) system of the constrained scheme's and conserving4's multiple
shooting solved by PC hsband across the ranks against PC hsgather (the whole matrix factored on every rank by
sequential MUMPS, their solver on more than one rank before issue 44).

    python3 bench/shootband_bench.py [--hamshoot build/hamshoot] [--ranks 1,2,4] [--cases crane,pendulum4]

Each case (crane: crane_natural.ocp, N = 4000, 400 segments; pendulum4: the pendulum with -hs_scheme conserving4,
N = 4000, 400 segments) runs Newton alone (-hs_strategy newton) from the solution at N = 2000 with the same segments
(-hs_init; solved once first, on 1 rank), so that every outer solve logged is one of the 400-segment system (from the
default guess, -hs_strategy auto's fallbacks solve coarse grids first, whose solves -log_view would count along),
with -log_view, once with the default linear solver (hsband) and once with -pc_type hsgather, on each rank count
(oversubscribed beyond the cores: then flops and memory only, the times are the shared cores'). From -log_view:
KSPSolve's count and the largest times over the ranks of PCSetUp and KSPSolve, added (the outer solves with their
factorizations: hsband factors at the first solve, inside KSPSolve; hsgather in PCSetUp, which hamshoot calls before
KSPSolve: its copy of the matrix to every rank and MUMPS' factorization), and the largest rank's flops of KSPSolve
(hsband logs its elimination's, the interface system's and the solves' flops: PetscLogFlops). MUMPS'
flops are not logged by PETSc: hsgather's are given as RINFOG(3) of -ksp_view (the flops of one elimination,
MUMPS' estimate after the factorization) of the same matrix by sequential MUMPS with ICNTL(6) = 0 on 1 rank (what hsgather does
on every rank) times the number of factorizations (MatLUFactorNum's count; its solves' flops left out). From summary.json: Newton iterations, J^d (the two must agree),
the largest rank's peak memory. --repeat runs of each (PCs and rank counts interleaved): the smallest KSPSolve time of
them (the least disturbed by the shared machine) and the largest.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--hamshoot", default=os.path.join(HERE, "..", "build", "hamshoot"))
ap.add_argument("--ranks", default="1,2,4")
ap.add_argument("--cases", default="crane,pendulum4")
ap.add_argument("--repeat", type=int, default=3)
a = ap.parse_args()
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
CASES = {"crane": ["-problem", os.path.join(HERE, "..", "problems", "crane_natural.ocp"), "-N", "4000"],
         "pendulum4": ["-problem", "pendulum", "-N", "4000", "-hs_scheme", "conserving4"]}
SHOOT = ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "400", "-hs_check_extremal", "no", "-quiet"]
WORK = tempfile.mkdtemp()


def run(args, P, keep=None):
    """(summary.json or None, the output) of one run; its output directory kept as keep"""
    with tempfile.TemporaryDirectory() as d:
        d = keep or d
        cmd = [a.hamshoot] + args + SHOOT + ["-o", d]
        if P > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(P)] + cmd
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        f = os.path.join(d, "summary.json")
        return (json.load(open(f)) if os.path.exists(f) else None), p.stdout


def event(out, name):
    """-log_view's line of event name: (count, max time, max flops) or None"""
    m = re.search(r"^%s\s+(\d+)\s+[\d.]+\s+([\d.e+-]+)\s+[\d.]+\s+([\d.e+-]+)\s" % name, out, re.M)
    return (int(m.group(1)), float(m.group(2)), float(m.group(3))) if m else None


for case in a.cases.split(","):
    init = os.path.join(WORK, case)
    run(CASES[case][:2] + ["-N", "2000"] + CASES[case][4:], 1, keep=init)
    base = CASES[case] + ["-hs_init", os.path.join(init, "trajectory.csv"), "-hs_strategy", "newton"]
    _, out = run(base + ["-pc_type", "lu", "-pc_factor_mat_solver_type", "mumps", "-mat_mumps_icntl_6", "0",
                         "-ksp_view"], 1)
    rf = [float(x) for x in re.findall(r"RINFOG\(3\) \(global estimated flops for the elimination after "
                                       r"factorization\):\s*([\d.e+-]+)", out)]
    mumps = max(rf) if rf else float("nan")
    print("%s (%s), 400 segments; sequential MUMPS (ICNTL(6) = 0): %.3g flops a factorization (RINFOG(3))"
          % (case, " ".join(CASES[case][1:]), mumps))
    print("| PC | ranks | Newton | KSPSolve count | PCSetUp + KSPSolve max time [s] (largest) | busiest rank's flops | "
          "flops a solve | peak MB (max rank) | J^d |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    times = {}
    for rep in range(a.repeat):
        for P in [int(x) for x in a.ranks.split(",") if x]:
            for pc in ("hsband", "hsgather"):
                s, out = run(base + ["-log_view"] + (["-pc_type", "hsgather"] if pc == "hsgather" else []), P)
                e, su = event(out, "KSPSolve"), event(out, "PCSetUp")
                times.setdefault((P, pc), []).append((e[1] + su[1] if s and e and su else float("nan"), s, out))
    for P in [int(x) for x in a.ranks.split(",") if x]:
        for pc in ("hsband", "hsgather"):
            runs = times[(P, pc)]
            t = sorted(r[0] for r in runs)
            _, s, out = runs[-1]
            e = event(out, "KSPSolve")
            if not s or not e:
                print("| %s | %d | failed |" % (pc, P), flush=True)
                continue
            if pc == "hsband":
                fl = e[2]
            else:  # MUMPS' numeric factorizations (on every rank the same), its solves not counted
                su = event(out, "MatLUFactorNum")
                fl = mumps * (su[0] if su else float("nan"))
            print("| %s | %d | %d | %d | %.3f (%.3f) | %.3g | %.3g | %.0f | %.16g |" %
                  (pc, P, s["newton_iterations"], e[0], t[0], t[-1], fl, fl / e[0], s["peak_memory_mb"]["max"], s["J"]),
                  flush=True)
