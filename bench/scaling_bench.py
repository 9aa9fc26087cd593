#!/usr/bin/python3
"""Cost per Newton iteration against N, and against a lower bound (issue 11; bench/README.md).

Transcription with the default linear solver (hsband for n <= 8), from the default guess, -log_view
parsed: per Newton iteration the evaluations (SNESJacobianEval + SNESFunctionEval), the factorization
(hsband's events HsBandLayout + HsBandElim + HsBandReduced: by default it factors when it first solves, inside
PCApply), the solves (PCSetUp + PCApply less that, iterative refinement included) and the noise-floor estimates
of the convergence test (HsNoiseEstimate), each per node (microseconds). With --bvp shooting, multiple
shooting with M = N / --segments-per segments instead (the evaluations are the segments' marches with their
sensitivities, the factorization and solves the condensed system's): the speed-up, no bound.

The lower bound per node and Newton iteration (printed with how it is made):
  evaluation     one state residual + costate residual + both step Jacobians of the problem's C code
                 (bench/eval_bench, best of 9, the least of 3 runs before and 3 after the problem's solves;
                 a Newton iteration needs at least one such evaluation),
  factorization  max(flops / peak, bytes / bandwidth) of a block-tridiagonal LU with dense 4n x 4n
                 blocks: (14/3) (4n)^3 flops; bytes: the Jacobian's nonzeros (32 n^2 per node, exactly
                 its blocks) read once and the factors (as many) written once, 16 bytes each,
  solve          max(6 (4n)^2 flops / peak, the factors read once: 8 bytes x 32 n^2 / bandwidth),
with peak = one core's theoretical peak (clock from /proc/cpuinfo x 32 flops a cycle with AVX-512, 16
with AVX2 + FMA; numpy's matrix product if that is faster) and bandwidth = numpy's copy of a 400 MB
array (read + write). Both are generous (no code on 4n x 4n blocks reaches that peak), so the bound is
below what any implementation can reach.

"last" is the last Newton iteration alone, from -hs_monitor's elapsed times (N >= 1e5 only, and shown where
it took 50 ms or more: the times have milliseconds): an iteration's work (with the convergence test before
it, which may estimate the noise floor) without the solve's one-time costs, which the whole solve's average
("us/node/Nwt") carries once, spread over its few iterations: the initial residual, hsband's layout, and the
first touch of fresh memory (at N = 1e6 kepler's hsband factors are 3.5 GB, and on this project's virtual
machine fresh memory costs 1-3 s per GB: bench/README.md).

Each configuration runs --repeat times (default 3; below N = 1e5, whose runs take under a second, three
times as many), the rank counts taking turns, and the fastest SNESSolve counts (this shared 2-core
machine's own events vary by 1.5x from run to run; the minimum is the run least disturbed). "speed-up" is 1 rank's s/Newton over this row's, both such minima.
"halves" takes the 2-rank row's two halves (N / 2 each) as two independent 1-rank processes started
together, in the same turns: their s/Newton over the 2-rank run's says what MPI and the partition cost
beyond the machine's own price for running two processes at once (1: nothing).

  python3 bench/scaling_bench.py                          # pendulum, kepler; N = 1e3 .. 1e6; 1, 2 ranks
  python3 bench/scaling_bench.py --problems pendulum --N 1000,10000 --ranks 1 --repeat 1
  python3 bench/scaling_bench.py --bvp shooting --N 100000     # multiple shooting, M = N / 10: the speed-up
"""
import argparse, os, re, subprocess, tempfile, time, json

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
NDOF = {"pendulum": 1, "kepler": 3, "crane": 2, "manipulator3": 3}


def theoretical_peak():
    """One core's double-precision peak from /proc/cpuinfo: clock x flops per cycle (2 FMA units of
    8 doubles with AVX-512, of 4 with AVX2 and FMA, else 4 flops per cycle)."""
    mhz, flags = 0.0, ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("cpu MHz") and not mhz:
            mhz = float(line.split(":")[1])
        if line.startswith("flags") and not flags:
            flags = line
    per = 32 if " avx512f" in flags else 16 if (" avx2" in flags and " fma" in flags) else 4
    return mhz * 1e6 * per


def machine():
    import numpy as np
    a = np.ones(50_000_000)
    b = np.empty_like(a)
    bw = 0
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(b, a)
        bw = max(bw, 2 * a.nbytes / (time.perf_counter() - t))
    m = np.random.default_rng(1).standard_normal((1500, 1500))
    peak = 0
    for _ in range(3):
        t = time.perf_counter()
        m @ m
        peak = max(peak, 2 * 1500 ** 3 / (time.perf_counter() - t))
    return max(peak, theoretical_peak()), bw


def eval_us(exe_dir, problem, times=3):
    """The C problem's step evaluation (microseconds per node): the least of `times` runs of eval_bench (each
    its own best of 9). One run could come out 1.5x high on this shared machine (1.14 -> 1.71 us for kepler
    between two runs), and with it the bound: the script takes this minimum before and after a problem's
    solves."""
    best = None
    for _ in range(times):
        p = subprocess.run([os.path.join(exe_dir, "bench", "eval_bench"), os.path.join(HERE, "..", "problems"),
                            "3000"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in p.stdout.splitlines():
            f = line.split()
            if f and f[0] == problem:
                best = float(f[2]) if best is None else min(best, float(f[2]))
    return best


MONITOR_N = 100000  # -hs_monitor from this N on: its line per iteration stays out of the small runs' times


SEGMENTS = 0  # --bvp shooting: N / SEGMENTS segments (main); 0: transcription


def command(exe, problem, N, out):
    """One 1-rank solve with -log_view (and -hs_monitor for N >= MONITOR_N), its output to the directory out."""
    shoot = ["-hs_bvp_type", "shooting", "-hs_shoot_segments", str(N // SEGMENTS)] if SEGMENTS else []
    return [exe, "-problem", problem, "-N", str(N), "-quiet", "-hs_check_extremal", "no", "-o", out,
            "-log_view"] + shoot + (["-hs_monitor"] if N >= MONITOR_N else [])


def last_iteration(text):
    """The last Newton iteration's time (s) from -hs_monitor's elapsed times (its line and the one before: the
    convergence test before it, its Jacobian, factorization, solve and line search), or None (also where it took
    less than 50 ms: the times have milliseconds)."""
    t = [float(m.group(1)) for m in re.finditer(r"^\s*Newton\s+\d+\s+\|F\| = \S+\s+linear its \d+\s+([\d.]+) s",
                                                 text, re.M)]
    return t[-1] - t[-2] if len(t) >= 2 and t[-1] - t[-2] >= 0.05 else None


def events(text):
    """The -log_view events' times (seconds, max over ranks) by name."""
    ev = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+\d+\s+[\d.]+\s+([\d.e+-]+)", line)
        if m:
            ev[m.group(1)] = float(m.group(2))
    return ev


def solve_time(s):
    """A run's SNESSolve time (its wall time if -log_view gave none)."""
    return s["events"].get("SNESSolve", s["wall_time_s"])


def at_once(exe, problem, N, k):
    """k independent 1-rank solves of N started together (no MPI between them): the slowest one's SNESSolve
    per Newton iteration."""
    procs = []
    for _ in range(k):
        d = tempfile.TemporaryDirectory()
        procs.append((subprocess.Popen(command(exe, problem, N, d.name), env=ENV, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True), d))
    t = []
    for p, d in procs:
        e, f = events(p.communicate()[0]), os.path.join(d.name, "summary.json")
        it = json.load(open(f)).get("newton_iterations") if os.path.exists(f) else None
        t.append(e.get("SNESSolve", float("inf")) / it if it else float("inf"))
        d.cleanup()
    return max(t)


CAPACITY_N = 50000


def capacity(exe, problem, N=CAPACITY_N, repeat=3):
    """What this machine gives two processes at once: the same 1-rank solve alone and as two copies started
    together (no MPI between them), the fastest SNESSolve per Newton iteration of each over `repeat` turns.
    Returns (alone, together): a 2-rank run cannot be faster than 2 x alone / together times 1 rank's,
    whatever its communication."""
    alone, together = float("inf"), float("inf")
    for _ in range(repeat):
        alone = min(alone, at_once(exe, problem, N, 1))
        together = min(together, at_once(exe, problem, N, 2))
    return alone, together


def run(exe, problem, N, ranks, timeout):
    with tempfile.TemporaryDirectory() as d:
        cmd = command(exe, problem, N, d)
        if ranks > 1:
            cmd = ["mpirun", "-n", str(ranks)] + cmd
        try:
            p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        f = os.path.join(d, "summary.json")
        if not os.path.exists(f):
            return None
        s = json.load(open(f))
        s["events"], s["last"] = events(p.stdout), last_iteration(p.stdout)
        return s


def bound(n, ev, peak, bw):
    """The lower bound per node and Newton iteration (module docstring): (total, factorization, solve), us."""
    m, nnz = 4 * n, 32 * n * n
    fact = max(14.0 / 3 * m ** 3 / peak, 16.0 * nnz / bw) * 1e6
    solve = max(6.0 * m * m / peak, 8.0 * nnz / bw) * 1e6
    return ev + fact + solve, fact, solve


SMALL_N = 100000  # below it each configuration runs 3 x --repeat times


def measure(a, prob, ranks):
    """Each N's fastest converged run per rank count, and its halves: [(N, {ranks: summary}, halves)]."""
    rows = []
    for N in [int(x) for x in a.N.split(",")]:
        best, halves = {}, float("inf")
        for _ in range(a.repeat * (1 if N >= SMALL_N else 3)):  # the rank counts take turns: a slow spell of the
            # machine hits all alike; a small N's runs take under a second, and one disturbance is a larger share
            for r in ranks:
                s = run(a.hamshoot, prob, N, r, a.timeout)
                if s and s.get("converged") and (not best.get(r) or solve_time(s) < solve_time(best[r])):
                    best[r] = s
            if 2 in ranks:  # the 2-rank run's own work without MPI: its two halves as independent solves
                halves = min(halves, at_once(a.hamshoot, prob, N // 2, 2))
        rows.append((N, best, halves))
    return rows


def print_rows(N, best, halves, ranks, lb):
    """One N's table rows, per node and Newton iteration against the bound lb (None: shooting, no bound)."""
    t1 = None
    for r in ranks:
        s = best.get(r)
        if not s:
            print("%9d %5d  failed" % (N, r))
            continue
        it, e = s["newton_iterations"], s["events"]
        per = lambda t: t / it / N * 1e6 * r  # core-microseconds per node per iteration
        tot = solve_time(s)
        ev_t = e.get("SNESJacobianEval", 0) + e.get("SNESFunctionEval", 0)
        fa = sum(e.get(k, 0) for k in ("HsBandLayout", "HsBandElim", "HsBandReduced")) or e.get("PCSetUp", 0)
        so, no = e.get("PCSetUp", 0) + e.get("PCApply", 0) - fa, e.get("HsNoiseEstimate", 0)
        if r == 1:
            t1 = tot / it
        la = s.get("last")
        last = "%6.3f %5s" % (per(la) * it, "%.2f" % (per(la) * it / lb) if lb else "-") if la else "     -     -"
        print("%9d %5d %6d %11.4f %12.3f %9.3f %9.3f %9.3f %9.3f %9.3f %7s %s %8s %7s" % (
            N, r, it, tot / it, per(tot), per(ev_t), per(fa), per(so), per(no), per(tot - ev_t - fa - so - no),
            "%.2f" % (per(tot) / lb) if lb else "-", last, "%.2f" % (t1 / (tot / it)) if t1 and r > 1 else "",
            "%.2f" % (halves / (tot / it)) if r == 2 and halves < float("inf") else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hamshoot", default=os.path.join(HERE, "..", "build", "hamshoot"))
    ap.add_argument("--problems", default="pendulum,kepler")
    ap.add_argument("--N", default="1000,10000,100000,1000000")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each configuration, the fastest counts (N < 1e5: "
                    "3 x as many)")
    ap.add_argument("--bvp", default="transcription", choices=["transcription", "shooting"],
                    help="shooting: N / --segments-per nodes a segment, no lower bound")
    ap.add_argument("--segments-per", type=int, default=10, help="shooting: nodes per segment (M = N / this)")
    a = ap.parse_args()
    global SEGMENTS
    SEGMENTS = a.segments_per if a.bvp == "shooting" else 0
    peak, bw = machine()
    print("machine: peak %.1f Gflop/s (one core's theoretical, or numpy's matmul if higher), bandwidth %.1f GB/s "
          "(numpy copy)\n" % (peak / 1e9, bw / 1e9))
    exe_dir = os.path.dirname(os.path.abspath(a.hamshoot))
    ranks = [int(x) for x in a.ranks.split(",")]
    for prob in a.problems.split(","):
        n = NDOF[prob]
        ev = eval_us(exe_dir, prob)
        cap = capacity(a.hamshoot, prob) if 2 in ranks else None
        rows = measure(a, prob, ranks)
        ev = min(x for x in (ev, eval_us(exe_dir, prob)) if x is not None)  # the bound from the quieter moment
        lb, fact, solve = bound(n, ev, peak, bw)
        if SEGMENTS:
            print("%s (n = %d), shooting with M = N / %d segments: no lower bound (the bound is the transcription's; "
                  "a segment's march with its sensitivities costs more than a node's evaluation)" % (prob, n, SEGMENTS))
            lb = None
        else:
            print("%s (n = %d): lower bound per node and Newton iteration %.3f us = evaluation %.3f + factorization "
                  "%.3f + solve %.3f" % (prob, n, lb, ev, fact, solve))
        if cap:
            alone, together = cap
            print("two 1-rank solves at once (N = %d each, no MPI between them): SNESSolve %.4f s per Newton "
                  "iteration each against %.4f s alone: 2 cores give %.2fx one core's throughput on this work now, "
                  "the most 2 ranks can gain" % (CAPACITY_N, together, alone, 2 * alone / together))
        print("%9s %5s %6s %11s %12s %9s %9s %9s %9s %9s %7s %6s %5s %8s %7s" % ("N", "ranks", "Newton", "s/Newton",
              "us/node/Nwt", "eval", "factor", "solve", "noise", "other", "/ bound", "last", "/ bnd", "speed-up",
              "halves"))
        for N, best, halves in rows:
            print_rows(N, best, halves, ranks, lb)
        print()
    print("us/node/Nwt: SNESSolve's time x ranks / (Newton iterations x N), i.e. core-microseconds; the columns\n"
          "after it split it (noise: the noise-floor estimates of the convergence test, two residual evaluations\n"
          "each; other: the line search's Jacobian product and vector work, norms); / bound: the ratio to\n"
          "the lower bound (1 rank: time; 2 ranks: core time, so a perfect speed-up keeps it); last: the last Newton\n"
          "iteration alone (-hs_monitor's times, core-microseconds per node; N >= 1e5, 50 ms or more) and its ratio\n"
          "to the bound: no one-time costs of the solve (initial residual, layout, first touch of fresh memory);\n"
          "speed-up: 1 rank's s/Newton over this row's; halves (2 ranks): s/Newton of the row's two halves (N / 2\n"
          "each) run at once as independent 1-rank processes, over the 2-rank run's: 1 means MPI and the partition\n"
          "cost nothing beyond what two processes at once cost on this machine.\n"
          "Each row and the halves are the fastest of --repeat runs, the three taking turns.")


if __name__ == "__main__":
    main()
