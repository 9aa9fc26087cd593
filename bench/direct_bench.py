#!/usr/bin/env python3
"""IPOPT against hamshoot on the same grid (issue 10; bench/README.md).

For each problem and N, three solves of the same discretization, one after the other on this
machine:
  ipopt     the direct transcription NLP by IPOPT (-hs_bvp_type ipopt: the problem's default
            energy-consistent state scheme, costates = IPOPT's multipliers, i.e. the kkt scheme)
  kkt       Newton (PETSc SNES, MUMPS) on the same KKT equations (-hs_costate_scheme kkt)
  indirect  Newton on the conserving necessary conditions (the default)
from the default initial guess; for the 3-link arm, which Newton cannot solve from it, kkt and
indirect start from IPOPT's solution (-hs_init; marked 'warm'). Printed: iterations, the solve time
reported in summary.json (wall_time_s), the whole process time (start-up included), J^d, and each
method's process time divided by IPOPT's. |J_ipopt - J_kkt| / |J| checks that the first two solve
the same discrete problem.

  python3 bench/direct_bench.py                      # N = 1e2 .. 1e5 (a few minutes)
  python3 bench/direct_bench.py --max-N 10000 --problems pendulum
  python3 bench/direct_bench.py --N 100000 --problems pendulum,kepler --ranks 2
  python3 bench/direct_bench.py --orderings          # IPOPT's MUMPS ordering (-hs_ipopt_ordering)
"""
import argparse, json, os, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
EXE = os.path.join(HERE, "..", "build", "hamshoot")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def solve(args, timeout, ranks=1):
    """One run: (summary or None, process seconds, note)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o")
        cmd = [EXE] + args + ["-quiet", "-o", out]
        if ranks > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(ranks)] + cmd
        t = time.perf_counter()
        try:
            p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.perf_counter() - t, "timeout"
        dt = time.perf_counter() - t
        if p.returncode not in (0, 2) or not os.path.exists(os.path.join(out, "summary.json")):
            return None, dt, "exit %d" % p.returncode
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        s["_traj"] = open(os.path.join(out, "trajectory.csv")).read()
        s["_ints"] = open(os.path.join(out, "intervals.csv")).read()
        return s, dt, ""


def best(args, repeat, timeout, ranks=1):
    runs = [solve(args, timeout, ranks) for _ in range(repeat)]
    ok = [r for r in runs if r[0] is not None]
    return min(ok, key=lambda r: r[1]) if ok else runs[0]


def compare(a):
    print("%-12s %7s  %-9s %-5s %5s %10s %10s %18s %8s" %
          ("problem", "N", "method", "conv", "its", "solve [s]", "proc [s]", "J^d", "/ IPOPT"))
    for prob in a.problems.split(","):
        for N in ([int(n) for n in a.N.split(",")] if a.N else [n for n in (100, 1000, 10000, 100000) if n <= a.max_N]):
            base = ["-problem", prob, "-N", str(N)]
            ip = best(base + ["-hs_bvp_type", "ipopt"], a.repeat, a.timeout)
            warm, note = [], ""
            if prob == "manipulator3" and ip[0] is not None:
                g = tempfile.mkdtemp()  # an output directory: trajectory.csv and intervals.csv
                open(os.path.join(g, "trajectory.csv"), "w").write(ip[0]["_traj"])
                open(os.path.join(g, "intervals.csv"), "w").write(ip[0]["_ints"])
                warm, note = ["-hs_init", g], " warm"
            kk = best(base + ["-hs_costate_scheme", "kkt"] + warm, a.repeat, a.timeout, a.ranks)
            ind = best(base + warm, a.repeat, a.timeout, a.ranks)
            for name, (s, dt, err) in (("ipopt", ip), ("kkt" + note, kk), ("indirect" + note, ind)):
                if s is None:
                    print("%-12s %7d  %-13s %s" % (prob, N, name, "FAILED: " + err))
                    continue
                print("%-12s %7d  %-9s %-5s %5d %10.3f %10.3f %18.10f %8.2f" %
                      (prob, N, name, "yes" if s["converged"] else "NO", s["newton_iterations"],
                       s["wall_time_s"], dt, s["J"], dt / ip[1] if ip[0] else float("nan")))
            if ip[0] and kk[0]:
                print("%-12s %7d  |J_ipopt - J_kkt| / |J| = %.1e" % (prob, N, abs(ip[0]["J"] - kk[0]["J"]) / abs(kk[0]["J"])))
            sys.stdout.flush()


def orderings(a):
    print("%-10s %7s %-8s %5s %10s %10s" % ("problem", "N", "ordering", "its", "IPOPT [s]", "proc [s]"))
    for prob, N in (("pendulum", 10000), ("pendulum", 100000), ("kepler", 100000)):
        for o in ("amd", "amf", "scotch", "pord", "metis", "qamd", "auto"):
            s, dt, err = best(["-problem", prob, "-N", str(N), "-hs_bvp_type", "ipopt", "-hs_ipopt_ordering", o],
                              a.repeat, a.timeout)
            print("%-10s %7d %-8s %5s %10s %10.3f %s" % (prob, N, o, s and s["newton_iterations"],
                                                         s and "%.3f" % s["ipopt_time_s"], dt, err))
            sys.stdout.flush()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default="pendulum,kepler,manipulator3")
    ap.add_argument("--max-N", type=int, default=100000)
    ap.add_argument("--N", default="", help="comma-separated grids instead (e.g. 100000)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per entry; the fastest counts")
    ap.add_argument("--ranks", type=int, default=1, help="ranks of the Newton solves (IPOPT runs on one)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--orderings", action="store_true", help="time IPOPT's MUMPS orderings instead")
    a = ap.parse_args()
    if not os.path.exists(EXE):
        sys.exit("build first: sh ./run.sh (or cmake -S . -B build && cmake --build build)")
    orderings(a) if a.orderings else compare(a)
