#!/usr/bin/env python3
"""Issue 43's audit: does -hs_scheme conserving4 take every problem the second-order scheme accepts?

Runs every shipped problem (the built-in ones, problems/*.ocp, tests/data/*.ocp) with the default scheme and with
conserving4, each by the transcription and by multiple shooting (-hs_shoot_segments 1 and 4), all
with the same options (the file's N, at most NMAX, a built-in problem's own; -hs_check_extremal no; the default -hs_strategy auto), on RANKS
ranks, and prints one line per problem: each run's outcome (J, or the status, or the first line of the error).
Not a test (about 570 runs); docs/theory.md section 8.1 ("Audit") has the table it gave.

    python3 bench/conserving4_audit.py build/hamshoot [RANKS] [NMAX] [PROBLEM ...] > audit.txt
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILTIN = ["pendulum", "kepler", "manipulator3", "crane", "ncar", "saddle"]
CONFIGS = [("default", []), ("default M=1", ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"]),
           ("default M=4", ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"]),
           ("c4 tr", ["-hs_scheme", "conserving4"]),
           ("c4 M=1", ["-hs_scheme", "conserving4", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"]),
           ("c4 M=4", ["-hs_scheme", "conserving4", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"])]
TIMEOUT = int(os.environ.get("AUDIT_TIMEOUT", "60"))  # seconds a run
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def file_N(path):
    if not os.path.exists(path):
        return None  # a built-in problem: its own N
    with open(path) as f:
        m = re.search(r"^N:\s*(\d+)", f.read(), re.M)
    return int(m.group(1)) if m else 20


def outcome(exe, ranks, prob, N, extra):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ([] if ranks == 1 else ["mpiexec", "--oversubscribe", "-n", str(ranks)]) + \
              [exe, "-problem", prob] + (["-N", str(N)] if N else []) + ["-hs_check_extremal", "no", "-quiet", "-o", tmp + "/o"] + extra
        try:
            p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return "timeout (%d s)" % TIMEOUT
        sf = tmp + "/o/summary.json"
        if os.path.exists(sf):
            with open(sf) as f:
                s = json.load(f)
            if s.get("converged"):
                return "J=%.10g" % s["J"]
            return "NO %s" % s.get("snes_reason") or s.get("solver_status")
        err = [l for l in p.stdout.splitlines() if "error" in l.lower()]
        return "ERR " + (err[0] if err else p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "rc %d" % p.returncode)


def main():
    exe = sys.argv[1]
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    nmax = int(sys.argv[3]) if len(sys.argv) > 3 else 80
    probs = sys.argv[4:] or (BUILTIN + sorted(glob.glob(os.path.join(ROOT, "problems", "*.ocp"))) +
                             sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*.ocp"))))
    for prob in probs:
        N = file_N(prob) and max(4, min(nmax, file_N(prob)))
        res = [outcome(exe, ranks, prob, N, extra) for _, extra in CONFIGS]
        print("%s N=%s | %s" % (os.path.relpath(prob, ROOT) if os.sep in prob else prob, N or "own",
                                " | ".join("%s: %s" % (c[0], r[:200]) for c, r in zip(CONFIGS, res))), flush=True)


if __name__ == "__main__":
    main()
