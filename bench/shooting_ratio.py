#!/usr/bin/python3
"""Multiple shooting's time against transcription's (issue 44: "shooting M = N/10 within 1.5x of transcription's
time on 16 ranks"; bench/README.md, "The march's per-step work").

For each problem, N and rank count: one transcription solve and one multiple shooting solve with M = N / --segments-per
segments, both from the default initial guess with -log_view; prints SNESSolve's time (the slowest rank), the Newton
iterations, the marches' share (HsShootMarch: residual marches, HsShootSens: marches with sensitivities), the ratio
shooting / transcription, and how far shooting's J is from transcription's (they solve the same discrete equations).
--repeat R takes the fastest of R runs of each (the runs of all builds and both formulations take turns). --base BIN runs a second hamshoot (e.g. a build of an earlier commit)
on the same cases, its rows beside this one's ("before" and "after"). --callgrind N2 also counts the instructions
of SNESSolve (valgrind --tool=callgrind --toggle-collect=SNESSolve, 1 rank, N = N2): a measure that does not depend
on what else runs on the machine. The ratio is per-rank work: the marches are independent across segments, so on P
ranks each marches M/P segments.

  python3 bench/shooting_ratio.py                                   # pendulum, kepler; N = 10^5; 1 and 2 ranks
  python3 bench/shooting_ratio.py --base /tmp/old/build/hamshoot --callgrind 10000 --repeat 3
  python3 bench/shooting_ratio.py --N 1000000 --ranks 1,2 --problems pendulum
"""
import argparse, json, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def events(text):
    """-log_view's event times (max over ranks, seconds) by name, summed over stages."""
    ev = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+\d+\s+[\d.]+\s+([\d.e+-]+)\s", line)
        if m:
            ev[m.group(1)] = ev.get(m.group(1), 0.0) + float(m.group(2))
    return ev


def args_of(problem, N, bvp, segments_per):
    a = ["-problem", problem, "-N", str(N), "-quiet", "-hs_check_extremal", "no"]
    if bvp == "shooting":
        a += ["-hs_bvp_type", "shooting", "-hs_shoot_segments", str(N // segments_per)]
    return a


def solve(exe, mpiexec, problem, N, bvp, ranks, segments_per, timeout):
    """One solve: {time (SNESSolve, s), newton, J, march, sens} or None (failed or timed out)."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [exe] + args_of(problem, N, bvp, segments_per) + ["-o", d, "-log_view"]
        if ranks > 1:
            cmd = mpiexec + ["-n", str(ranks)] + cmd
        try:
            p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        f = os.path.join(d, "summary.json")
        if p.returncode != 0 or not os.path.exists(f):
            return None
        s, ev = json.load(open(f)), events(p.stdout)
        return dict(time=ev.get("SNESSolve", s["wall_time_s"]), newton=s["newton_iterations"], J=s["J"],
                    march=ev.get("HsShootMarch", 0.0), sens=ev.get("HsShootSens", 0.0))


def best_of(bins, mpiexec, problem, N, ranks, a):
    """{(label, bvp): fastest run} over --repeat rounds; each round runs every build's transcription and shooting in
    turn, so that a shared machine's load falls alike on the solves compared."""
    runs = {}
    for _ in range(a.repeat):
        for label, exe in bins:
            for bvp in ("transcription", "shooting"):
                r = solve(exe, mpiexec, problem, N, bvp, ranks, a.segments_per, a.timeout)
                if r and ((label, bvp) not in runs or r["time"] < runs[(label, bvp)]["time"]):
                    runs[(label, bvp)] = r
    return runs


def instructions(exe, problem, N, bvp, segments_per):
    """SNESSolve's instruction count (callgrind, 1 rank), or None."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=SNESSolve", "--callgrind-out-file=" + out, exe] + \
            args_of(problem, N, bvp, segments_per) + ["-o", os.path.join(d, "o")]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if p.returncode != 0 or not os.path.exists(out):
            return None
        for line in open(out):
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hamshoot", default=os.path.join(HERE, "..", "build", "hamshoot"))
    ap.add_argument("--base", help="a second hamshoot to compare (its rows first, labelled 'before')")
    ap.add_argument("--problems", default="pendulum,kepler")
    ap.add_argument("--N", default="100000", help="comma-separated")
    ap.add_argument("--ranks", default="1,2", help="comma-separated")
    ap.add_argument("--segments-per", type=int, default=10, help="nodes per segment: M = N / this")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--mpiexec", default="mpiexec --bind-to core", help="launcher for more than one rank")
    ap.add_argument("--callgrind", type=int, default=0, help="also count SNESSolve's instructions at this N (1 rank)")
    ap.add_argument("--no-times", action="store_true", help="only the instruction counts (--callgrind)")
    a = ap.parse_args()
    mpiexec = a.mpiexec.split()
    bins = ([("before", a.base)] if a.base else []) + [("after" if a.base else "this", a.hamshoot)]
    if not a.no_times:
        print("SNESSolve time (slowest rank, best of %d); shooting M = N/%d; ratio = shooting / transcription"
              % (a.repeat, a.segments_per))
        print("%-7s %-9s %8s %5s %10s %4s %10s %4s %7s %9s %9s %10s" % ("build", "problem", "N", "ranks",
              "transcr [s]", "Nwt", "shoot [s]", "Nwt", "ratio", "march [s]", "sens [s]", "|dJ|/|J|"))
    sys.stdout.flush()
    for prob in ([] if a.no_times else a.problems.split(",")):
        for N in (int(x) for x in a.N.split(",")):
            for P in (int(x) for x in a.ranks.split(",")):
                runs = best_of(bins, mpiexec, prob, N, P, a)
                for label, exe in bins:
                    t, s = runs.get((label, "transcription")), runs.get((label, "shooting"))
                    if not t or not s:
                        print("%-7s %-9s %8d %5d  failed (transcription %s, shooting %s)" % (label, prob, N, P,
                              "ok" if t else "failed", "ok" if s else "failed"))
                        continue
                    print("%-7s %-9s %8d %5d %11.3f %4d %10.3f %4d %7.2f %9.3f %9.3f %10.1e" % (
                        label, prob, N, P, t["time"], t["newton"], s["time"], s["newton"], s["time"] / t["time"],
                        s["march"], s["sens"], abs(s["J"] - t["J"]) / abs(t["J"])))
                    sys.stdout.flush()
    if a.callgrind:
        print("\nSNESSolve instructions (callgrind, 1 rank, N = %d, M = N/%d)" % (a.callgrind, a.segments_per))
        print("%-7s %-9s %16s %16s %7s" % ("build", "problem", "transcription", "shooting", "ratio"))
        for prob in a.problems.split(","):
            for label, exe in bins:
                it = instructions(exe, prob, a.callgrind, "transcription", a.segments_per)
                ish = instructions(exe, prob, a.callgrind, "shooting", a.segments_per)
                if it and ish:
                    print("%-7s %-9s %16d %16d %7.2f" % (label, prob, it, ish, ish / it))
                else:
                    print("%-7s %-9s  failed" % (label, prob))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
