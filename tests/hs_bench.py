"""Issue 44 item 6: the scaling benchmark's scripts (bench/strong_weak.py, bench/scaling_model.py), a smoke test
with small runs and synthetic data whose answers are known."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import hs_util
from hs_util import check, rel

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
sys.path.insert(0, BENCH)
import strong_weak  # noqa: E402  (bench/ is not a package)

# Two -log_view event lines in PETSc 3.18's layout: name, count, ratio, time max, ratio, flops max, ratio, messages,
# length, reductions, 10 percentages, Total Mflop/s. HsBandReduceLevel: 2.4e6 flops on the busiest of 4 ranks, max/min
# 2, 4000 Mflop/s over 0.002 s (8e6 flops in total, between the 6e6 and 9.6e6 that max and max/min allow).
LOG_VIEW = """Event                Count      Time (sec)     Flop                              --- Global ---  --- Stage ----  Total
                   Max Ratio  Max     Ratio   Max  Ratio  Mess   AvgLen  Reduct  %T %F %M %L %R  %T %F %M %L %R Mflop/s
------------------------------------------------------------------------------------------------------------------------

--- Event Stage 0: Main Stage

HsBandElim             9 1.0 1.4974e-01 4.7 0.00e+00 0.0 0.0e+00 0.0e+00 0.0e+00 16  0  0  0  0  16  0  0  0  0     0
HsBandReduceLevel     18 1.0 2.0000e-03 1.5 2.40e+06 2.0 3.6e+01 9.6e+01 0.0e+00  1 50  0  0  0   1 50  0  0  0  4000
"""


def synthetic(path, a, b, c, reduced=None):
    """results.json of transcription runs on P = 1..16 at N = 1e5 whose phases are exactly a N / P (interior, split
    over two events), b log2 P (or reduced(P)) and c (the rest of the wall time), 5 Newton iterations."""
    runs = []
    for P in (1, 2, 4, 8, 16):
        k, N = 5, 100000
        red = reduced(P) if reduced else b * math.log2(P)
        ev = dict(HsBandElim=dict(time_max=k * a * N / P / 2, flops_max=0), SNESJacobianEval=dict(
            time_max=k * a * N / P / 2, flops_max=0), HsBandReduced=dict(time_max=k * red, flops_max=1e6 * math.log2(P)
                                                                         if P > 1 else 0, flops_ratio=1, time_ratio=1))
        runs.append(dict(name="s%d" % P, experiment="strong", problem="pendulum", bvp="transcription", N=N, ranks=P,
                         oversubscribed=False, converged=True, newton_iterations=k,
                         wall_time_s=k * (a * N / P + red + c), events=ev))
    json.dump(dict(meta={}, runs=runs), open(path, "w"))


def model_output(path):
    p = subprocess.run([sys.executable, os.path.join(BENCH, "scaling_model.py"), path, "--N", "1e8"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(p.returncode == 0, "scaling_model.py: exit %d\n%s" % (p.returncode, p.stdout))
    return p.stdout


def check_model(d):
    """The model's fit recovers a, b, c from exact data, with zero residuals, and predicts the efficiency the formula
    gives; a reduced phase growing as P^3 gives k = 3."""
    a, b, c = 2e-6, 3e-3, 1e-2
    synthetic(os.path.join(d, "r.json"), a, b, c)
    out = model_output(os.path.join(d, "r.json"))
    m = re.search(r"a = (\S+) s per node .*?, b = (\S+) s per level, c = (\S+) s", out)
    check(m and rel(float(m.group(1)), a) < 1e-3 and rel(float(m.group(2)), b) < 1e-3 and
          rel(float(m.group(3)), c) < 1e-3, "model: a, b, c recovered: %s" % str(m.groups() if m else out))
    res = re.findall(r"\| ([+-]\d+) % \|$", out, re.M)
    check(len(res) == 5 and all(abs(int(r)) == 0 for r in res), "model: zero residuals on exact data: %s" % res)
    N, P = 1e8, 1024
    eff = 100 * (a * N + c) / (P * (a * N / P + b * 10 + c))
    m = re.search(r"^\| 1e\+08 \| 1024 \| \S+ s \| (\d+) % \|", out, re.M)
    check(m and abs(int(m.group(1)) - eff) <= 0.5, "model: efficiency at P = 1024, N = 1e8: %s against %.2f %%" % (
        m.group(1) if m else out, eff))
    synthetic(os.path.join(d, "r3.json"), a, b, c, reduced=lambda P: 1e-5 * P ** 3)
    m = re.search(r"r = (\S+) s, k = (\S+)", model_output(os.path.join(d, "r3.json")))
    check(m and abs(float(m.group(2)) - 3) < 0.01 and rel(float(m.group(1)), 1e-5) < 1e-3,
          "model: reduced = 1e-5 P^3 fitted as %s" % str(m.groups() if m else None))


def check_runs(d):
    """Two small solves (1 and 2 ranks) through strong_weak.py: converged with the same Newton iterations, the band
    events parsed, the solve time read from summary.json equal to the stdout's to its millisecond; --reparse
    rebuilds the same from the logs; a spent budget starts nothing."""
    out = os.path.join(d, "sw")
    p = subprocess.run([sys.executable, os.path.join(BENCH, "strong_weak.py"), "--hamshoot", hs_util.HAMSHOOT,
                        "--mpiexec", hs_util.MPIEXEC, "--ranks", "1,2", "--problems", "pendulum", "--N", "4000",
                        "--out", out, "--max-seconds", "120"], env=hs_util.ENV, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=180)
    check(p.returncode == 0, "strong_weak.py: exit %d\n%s" % (p.returncode, p.stdout))
    runs = json.load(open(os.path.join(out, "results.json")))["runs"]
    check(len(runs) == 2 and all(r.get("converged") for r in runs), "two converged runs: %s" % runs)
    if len(runs) != 2:
        return
    check(runs[0]["newton_iterations"] == runs[1]["newton_iterations"], "same Newton iterations on 1 and 2 ranks")
    for r in runs:
        e = r["events"]
        check(all(k in e for k in ("HsBandElim", "HsBandReduced", "HsBandSolve", "SNESJacobianEval")),
              "band events parsed: %s" % sorted(e))
        check(e.get("SNESJacobianEval", {}).get("count", 0) >= r["newton_iterations"], "a Jacobian an iteration")
        log = open(os.path.join(out, "logs", r["name"] + ".log")).read()
        m = re.search(r"wall time\s+([\d.]+) s", log)
        check(m and abs(float(m.group(1)) - r["wall_time_s"]) <= 0.0005 + 1e-9, "wall time: stdout %s, summary.json "
              "%s" % (m.group(1) if m else None, r["wall_time_s"]))
    check("| strong pendulum transcription, N = 4000 |" in open(os.path.join(out, "tables.md")).read(), "tables.md")
    p = subprocess.run([sys.executable, os.path.join(BENCH, "strong_weak.py"), "--reparse", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    again = {r["name"]: r for r in json.load(open(os.path.join(out, "results.json")))["runs"]}
    check(p.returncode == 0 and all(abs(again[r["name"]]["wall_time_s"] - r["wall_time_s"]) <= 0.0005 and
                                    again[r["name"]]["events"] == r["events"] for r in runs), "--reparse")
    none = os.path.join(d, "none")
    subprocess.run([sys.executable, os.path.join(BENCH, "strong_weak.py"), "--hamshoot", hs_util.HAMSHOOT, "--mpiexec",
                    hs_util.MPIEXEC, "--ranks", "1", "--problems", "pendulum", "--N", "4000", "--out", none,
                    "--max-seconds", "1", "--bind", "none"], env=hs_util.ENV, stdout=subprocess.PIPE, timeout=60)
    data = json.load(open(os.path.join(none, "results.json")))
    check(not data["runs"] and len(data.get("skipped", [])) == 1, "a spent budget starts no run: %s" % data)


def t_bench_scaling():
    """bench/strong_weak.py parses -log_view's columns (a finer HsBandReduce* event and its flops included), runs
    and records small solves; bench/scaling_model.py fits T = a N/P + b log2 P + c exactly to exact data."""
    ev = strong_weak.bound_totals(strong_weak.parse_events(LOG_VIEW), 4)
    lv = ev.get("HsBandReduceLevel", {})
    check(lv.get("count") == 18 and lv.get("time_max") == 2e-3 and lv.get("time_ratio") == 1.5 and
          lv.get("flops_max") == 2.4e6 and lv.get("flops_ratio") == 2.0 and rel(lv.get("flops_total", 0), 8e6) < 1e-12,
          "parse HsBandReduceLevel: %s" % lv)
    el = ev.get("HsBandElim", {})
    check(el.get("time_ratio") == 4.7 and el.get("flops_max") == 0 and el.get("flops_total") == 0, "0 flops: %s" % el)
    with tempfile.TemporaryDirectory() as d:
        check_model(d)
        check_runs(d)
