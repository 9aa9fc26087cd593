#!/usr/bin/env python3
"""Issue 44: a free T solved with hsband's bordered step against the MUMPS fallback it replaces.

    python3 bench/border_bench.py BUILD/hamshoot MPIEXEC [N [RANKS...]]

Runs tests/data/pendulum_free_T.ocp (transcription, default scheme) at N (default 1e5) on each rank count (default
1 2), alternating: -pc_type hsband -pc_hsband_border false (the band is too wide: MUMPS LU, as before issue 44),
-pc_type hsband (the border by block elimination), and -hs_linear_solver mumps (what -hs_linear_solver auto picks for
a free T); REPEAT (env, default 2) times each. Prints wall_time_s from summary.json (the minimum over the repeats),
the Newton iterations, and J^d, T of each."""
import json
import os
import subprocess
import sys
import tempfile

ham, mpiexec = sys.argv[1], sys.argv[2]
N = sys.argv[3] if len(sys.argv) > 3 else "100000"
ranks = [int(r) for r in sys.argv[4:]] or [1, 2]
repeat = int(os.environ.get("REPEAT", "2"))
prob = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "pendulum_free_T.ocp")
configs = [("MUMPS fallback (before)", ["-pc_type", "hsband", "-pc_hsband_border", "false"]),
           ("hsband, bordered (after)", ["-pc_type", "hsband"]),
           ("-hs_linear_solver mumps", ["-hs_linear_solver", "mumps"])]
for r in ranks:
    best = {}
    for _ in range(repeat):
        for name, extra in configs:
            with tempfile.TemporaryDirectory() as d:
                cmd = ([mpiexec, "--bind-to", "core", "-n", str(r)] if r > 1 else []) + [ham, "-problem", prob, "-N", N,
                       "-hs_check_extremal", "no", "-quiet", "-o", d] + extra
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True)
                s = json.load(open(os.path.join(d, "summary.json")))
            t = s["wall_time_s"]
            if name not in best or t < best[name][0]:
                best[name] = (t, s["newton_iterations"], s["linear_solver"], s["J"], s["T"])
    for name, _ in configs:
        t, its, ls, J, T = best[name]
        print("N = %s, %d rank(s), %-26s %8.2f s  %2d Newton its  %-20s J^d %.12f  T %.12f" % (N, r, name, t, its, ls, J, T),
              flush=True)
