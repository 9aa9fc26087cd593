#!/usr/bin/python3
"""Strong and weak scaling over MPI ranks, with -log_view's per-phase times and flops (issue 44; bench/README.md).

Runs hamshoot under mpiexec on the rank counts given (any node: `--ranks 1,2,4,8,16`), one rank per core with
`--bind-to core` where the rank count fits the cores (checked once with a trivial mpiexec run; hardware threads,
then no binding, if Open MPI refuses) and `--oversubscribe` beyond (those rows show flops and that the distribution works, not
speed). Per run it keeps the solve time (`wall_time_s`: from summary.json with --summary json, or the same
number, to the millisecond, from hamshoot's "wall time" line with --summary stdout, which needs no -o and
so writes no CSV), the Newton iterations and, per -log_view event, the time on the slowest rank, the
max/min time ratio over ranks, the flops on the busiest rank and their max/min ratio, and the total flops
(the event's "Total Mflop/s" column times its max time, kept within what max and max/min allow: approximate;
0 where the event logs no flops, as the band solver's events do until they call PetscLogFlops).

Experiments: strong scaling of each --problems x --bvp at each --N over --ranks (shooting with M = N /
--segments-per segments, on --shoot-ranks); with --weak-per-rank W, weak scaling of --weak-problems
(transcription, N = W x ranks). --repeat R runs each configuration R times (the rank counts taking
turns); the fastest solve counts. --max-seconds (or --deadline, seconds since the epoch) is a budget for
the whole script: no run starts once it is spent or when its estimated time does not fit in what is left
(the estimate scales an earlier run of the same problem and formulation by N / P), and a run still going
at the budget's end is killed (its process group: no orphaned ranks) and recorded as such. The results
are written after every run, so an interrupted script leaves what it finished.

Output folder (--out): results.json (every run, its command and parsed events; --append adds to an
existing one, so several invocations can share a folder and a deadline), tables.md (the tables printed:
time, speed-up and efficiency per rank count; weak scaling; the per-phase times and flops), logs/
(each run's stdout with -log_view; --logs puts them elsewhere). bench/scaling_model.py fits the cost model
to results.json.

Inside the chroot bundle of ../shared/tools/chroot-bundle.sh (bench/device_scaling.sh does this):
  --mpiexec "sh /path/chroot-run.sh B.tar.xz -- mpirun" --hamshoot /hs/hamshoot
  --run-dir /tmp/hsbench --run-dir-outside $HS_ROOT/tmp/hsbench
(hamshoot writes its -o folders under --run-dir as it sees it, read back here through --run-dir-outside).

  python3 bench/strong_weak.py --ranks 1,2 --problems pendulum --N 100000 --out /tmp/sw
  python3 bench/strong_weak.py --ranks 1,2,4,8,16 --problems pendulum,kepler --N 1000000 \
      --bvp transcription,shooting --weak-per-rank 250000 --max-seconds 480 --out /tmp/sw
  python3 bench/strong_weak.py --tables /tmp/sw       # the tables again from results.json
"""
import argparse, json, math, os, re, shlex, shutil, signal, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
BINDINGS = {"core": ["--bind-to", "core"], "hwthread": ["--bind-to", "hwthread", "--use-hwthread-cpus"],
            "none": ["--bind-to", "none", "--oversubscribe"]}  # tried in this order by --bind core
PHASES = ("HsBandLayout", "HsBandElim", "HsBandReduced", "HsBandSolve", "SNESFunctionEval", "SNESJacobianEval")
START_MARGIN = 3.0  # seconds: no run starts with less budget left than this
ESTIMATE_SLACK = 1.25  # a run starts only if 1.25 x its estimate fits in what is left


def parse_events(text):
    """-log_view's event lines: {name: {count, time_max, time_ratio, flops_max, flops_ratio, flops_total}},
    summed over stages (ratios: the largest). A line is name, count, ratio, time, ratio, flops, ratio, 3
    message columns, 10 percentages, Total Mflop/s (PETSc 3.18's layout, 21 fields; a GPU build's further columns
    are ignored). A flops ratio of 0 with flops on the busiest rank means a rank with none (PETSc prints 0 where
    the least is 0)."""
    ev, inside = {}, False
    for line in text.splitlines():
        if line.startswith("Event ") and "Count" in line:
            inside = True
            continue
        f = line.split()
        if not inside or len(f) < 21 or not re.match(r"^[A-Za-z]\w*$", f[0]) or not f[1].isdigit():
            continue
        try:
            v = [float(x) for x in f[1:21]]
        except ValueError:
            continue
        e = ev.setdefault(f[0], dict(count=0, time_max=0.0, time_ratio=0.0, flops_max=0.0, flops_ratio=0.0,
                                     flops_total=0.0))
        e["count"] += int(v[0])
        e["time_max"] += v[2]
        e["time_ratio"] = max(e["time_ratio"], v[3])
        e["flops_max"] += v[4]
        e["flops_ratio"] = max(e["flops_ratio"], v[5])
        e["flops_total"] += v[19] * 1e6 * v[2]
    return ev


def bound_totals(ev, ranks):
    """The total flops from Mflop/s x time are rounded (Mflop/s is printed as an integer): keep them within
    what max and max/min allow, max + (P - 1) max / ratio <= total <= P max."""
    for e in ev.values():
        if e["flops_max"]:  # a ratio of 0: some rank logged none
            lo = e["flops_max"] * (1 + (ranks - 1) / e["flops_ratio"]) if e["flops_ratio"] else e["flops_max"]
            e["flops_total"] = min(max(e["flops_total"], lo), ranks * e["flops_max"])
    return ev


def parse_stdout(text):
    """hamshoot's own summary lines: wall time (s), Newton iterations, converged."""
    r = {}
    m = re.search(r"^\s*wall time\s+([\d.]+) s", text, re.M)
    if m:
        r["wall_time_s"] = float(m.group(1))
    m = re.search(r"^\s*converged\s+(yes|no)\b.*?after (\d+) Newton iterations", text, re.M)
    if m:
        r["converged"], r["newton_iterations"] = m.group(1) == "yes", int(m.group(2))
    return r


class Runner:
    """Launches runs under the budget and records them."""

    def __init__(self, a):
        self.a, self.mpiexec = a, shlex.split(a.mpiexec)
        self.cores = a.cores or len(os.sched_getaffinity(0))
        self.deadline = a.deadline or (time.time() + a.max_seconds if a.max_seconds else float("inf"))
        self.out = os.path.abspath(a.out)
        self.logs = os.path.abspath(a.logs or os.path.join(self.out, "logs"))
        os.makedirs(self.logs, exist_ok=True)
        self.results = os.path.join(self.out, "results.json")
        self.data = json.load(open(self.results)) if a.append and os.path.exists(self.results) else \
            dict(meta={}, runs=[])
        known = self.data["meta"].get("bind") if self.data["meta"].get("cores") == self.cores else None
        self.bind = known or self.check_binding() if a.bind == "core" else a.bind  # --append: checked once
        self.data["meta"].update(cores=self.cores, bind=self.bind, mpiexec=a.mpiexec, hamshoot=a.hamshoot,
                                 host=os.uname().nodename)

    def left(self):
        return self.deadline - time.time()

    def check_binding(self):
        """The first of BINDINGS with which mpiexec starts min(cores, max ranks) copies of `true` (Open MPI
        refuses to bind to cores where it counts fewer cores than ranks: hardware threads, a cpuset)."""
        n = min(self.cores, max(self.a.ranks_list))
        for bind in BINDINGS:
            try:
                p = subprocess.run(self.mpiexec + ["-n", str(n)] + BINDINGS[bind] + ["true"], env=ENV, timeout=60,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if p.returncode == 0:
                    break
            except subprocess.TimeoutExpired:
                pass
            print("strong_weak: mpiexec cannot start %d ranks with %s here" % (n, " ".join(BINDINGS[bind])), flush=True)
        return bind

    def launch_args(self, ranks):
        over = ranks > self.cores
        bind = "none" if over else self.bind
        return ["-n", str(ranks)] + BINDINGS[bind], over, bind

    def estimate(self, problem, bvp, N, ranks):
        """The run's process time scaled from the closest earlier run of the same problem and bvp by N / P, or 0."""
        same = [r for r in self.data["runs"] if r["problem"] == problem and r["bvp"] == bvp and r.get("process_s")]
        if not same:
            return 0.0
        r = min(same, key=lambda r: abs(math.log(r["N"] / r["ranks"] / (N / ranks))))
        return r["process_s"] * (N / ranks) / (r["N"] / r["ranks"])

    def command(self, problem, bvp, N, ranks, rundir):
        m, over, bind = self.launch_args(ranks)
        cmd = self.mpiexec + m + [self.a.hamshoot, "-problem", problem, "-N", str(N), "-quiet",
                                   "-hs_check_extremal", "no", "-log_view"]
        if bvp == "shooting":
            cmd += ["-hs_bvp_type", "shooting", "-hs_shoot_segments", str(max(1, N // self.a.segments_per))]
        if self.a.summary == "json":
            cmd += ["-o", rundir]
        return cmd + shlex.split(self.a.extra), over, bind

    def execute(self, cmd, timeout, over):
        """Runs cmd in its own process group; kills the group at the timeout. (stdout, rc, seconds, killed)."""
        t0 = time.time()
        env = dict(ENV, OMPI_MCA_mpi_yield_when_idle="1") if over else ENV  # oversubscribed: ranks take turns
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        try:
            text, killed = p.communicate(timeout=timeout)[0], False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            text, killed = p.communicate()[0], True
        return text, p.returncode, time.time() - t0, killed

    def run(self, exp, problem, bvp, N, ranks, rep):
        """One run, recorded (or skipped for the budget: returns None)."""
        left, est = self.left(), self.estimate(problem, bvp, N, ranks)
        name = "%s_%s_%s_N%d_P%d_r%d" % (exp, problem, bvp, N, ranks, rep)
        if left < START_MARGIN or est * ESTIMATE_SLACK > left:
            print("  skip %-50s (budget: %.0f s left, estimate %.0f s)" % (name, left, est), flush=True)
            self.data.setdefault("skipped", []).append(name)
            self.save()
            return None
        inside = os.path.join(self.a.run_dir, name)
        cmd, over, bind = self.command(problem, bvp, N, ranks, inside)
        text, rc, secs, killed = self.execute(cmd, min(self.a.timeout, left), over)
        open(os.path.join(self.logs, name + ".log"), "w").write(" ".join(cmd) + "\n" + text)
        r = dict(name=name, experiment=exp, problem=problem, bvp=bvp, N=N, ranks=ranks, repeat=rep,
                 segments=max(1, N // self.a.segments_per) if bvp == "shooting" else None, oversubscribed=over,
                 bind=bind, rc=rc, killed=killed, process_s=secs, command=cmd, events=bound_totals(parse_events(text), ranks))
        r.update(parse_stdout(text))
        summary = os.path.join(self.a.run_dir_outside or self.a.run_dir, name, "summary.json")
        if self.a.summary == "json" and os.path.exists(summary):
            s = json.load(open(summary))
            r.update({k: s.get(k) for k in ("wall_time_s", "newton_iterations", "converged", "linear_solver")})
        if self.a.summary == "json":  # the CSVs of a large N fill a disk (or a chroot's tmpfs)
            shutil.rmtree(os.path.dirname(summary), ignore_errors=True)
        self.data["runs"].append(r)
        self.save()
        print("  %-50s %s  solve %8s s  process %7.2f s" % (name, "killed" if killed else "rc %d" % rc,
              "%.3f" % r["wall_time_s"] if "wall_time_s" in r else "-", secs), flush=True)
        return r

    def save(self):
        tmp = self.results + ".tmp"
        json.dump(self.data, open(tmp, "w"), indent=1)
        os.replace(tmp, self.results)
        open(os.path.join(self.out, "tables.md"), "w").write(tables(self.data))


def best_runs(runs):
    """{(experiment, problem, bvp, N, ranks): the fastest converged run}."""
    best = {}
    for r in runs:
        if not r.get("converged") or "wall_time_s" not in r:
            continue
        k = (r["experiment"], r["problem"], r["bvp"], r["N"], r["ranks"])
        if k not in best or r["wall_time_s"] < best[k]["wall_time_s"]:
            best[k] = r
    return best


def fmt_flops(x):
    return "0" if not x else "%.3g" % x


def fmt_ratio(e):
    """An event's flops max/min: 'inf' where some rank logged none (PETSc prints 0)."""
    return "inf" if e["flops_max"] and not e["flops_ratio"] else "%.1f" % e["flops_ratio"]


def strong_tables(best):
    """Markdown: per (experiment, problem, bvp, N) the solve time, speed-up and efficiency per rank count."""
    out, groups = [], {}
    for (exp, prob, bvp, N, P), r in best.items():
        if exp != "weak":
            groups.setdefault((exp, prob, bvp, N), {})[P] = r
    for (exp, prob, bvp, N), rows in sorted(groups.items()):
        seg = " M = %d" % next(iter(rows.values()))["segments"] if bvp == "shooting" else ""
        out.append("### %s: %s, %s%s, N = %d\n" % (exp, prob, bvp, seg, N))
        out.append("| P | solve [s] | speed-up | efficiency | Newton | process [s] | binding |")
        out.append("|---|---|---|---|---|---|---|")
        t1 = rows[min(rows)]["wall_time_s"] * min(rows)  # speed-up against the smallest P measured, x that P
        for P in sorted(rows):
            r = rows[P]
            sp = t1 / r["wall_time_s"]
            out.append("| %d | %.3f | %.2f | %.0f %% | %d | %.2f | %s |" % (
                P, r["wall_time_s"], sp, 100 * sp / P, r["newton_iterations"], r["process_s"],
                "oversubscribed" if r["oversubscribed"] else r["bind"]))
        if min(rows) != 1:
            out.append("\n(speed-up against %d ranks' time x %d)" % (min(rows), min(rows)))
        out.append("")
    return out


def summary_table(best):
    """Markdown: one row per case, the solve time per rank count and the efficiency at the largest (as in
    ../shared/PERFORMANCE.md)."""
    groups = {}
    for (exp, prob, bvp, N, P), r in best.items():
        key = (exp, prob, bvp, N // P if exp == "weak" else N)
        groups.setdefault(key, {})[P] = r
    Ps = sorted({P for g in groups.values() for P in g})
    out = ["| case | " + " | ".join("P = %d" % P for P in Ps) + " | efficiency at the largest P |",
           "|---|" + "---|" * (len(Ps) + 1)]
    for (exp, prob, bvp, N), g in sorted(groups.items()):
        p0, p1 = min(g), max(g)
        t0, t1 = g[p0]["wall_time_s"], g[p1]["wall_time_s"]
        eff = t0 / t1 if exp == "weak" else t0 * p0 / (t1 * p1)
        name = "%s %s %s, N = %d%s" % (exp, prob, bvp, N, " per rank" if exp == "weak" else "")
        cells = ["%.3g s%s" % (g[P]["wall_time_s"], "*" if g[P]["oversubscribed"] else "") if P in g else "-"
                 for P in Ps]
        out.append("| %s | %s | %.0f %% |" % (name, " | ".join(cells), 100 * eff))
    return out + ["", "(solve times, wall_time_s; * oversubscribed)", ""]


def weak_tables(best):
    """Markdown: weak scaling, efficiency T(smallest P) / T(P)."""
    out, groups = [], {}
    for (exp, prob, bvp, N, P), r in best.items():
        if exp == "weak":
            groups.setdefault((prob, bvp, N // P), {})[P] = r
    for (prob, bvp, w), rows in sorted(groups.items()):
        out.append("### weak: %s, %s, N = %d per rank\n" % (prob, bvp, w))
        out.append("| P | N | solve [s] | efficiency | Newton | binding |")
        out.append("|---|---|---|---|---|---|")
        t1 = rows[min(rows)]["wall_time_s"]
        for P in sorted(rows):
            r = rows[P]
            out.append("| %d | %d | %.3f | %.0f %% | %d | %s |" % (P, r["N"], r["wall_time_s"],
                       100 * t1 / r["wall_time_s"], r["newton_iterations"],
                       "oversubscribed" if r["oversubscribed"] else r["bind"]))
        out.append("")
    return out


def phase_tables(best):
    """Markdown: per (experiment, problem, bvp, N) each event's max time [max/min] and flops on the busiest
    rank [max/min] and in total, one column per rank count."""
    out, groups = [], {}
    for (exp, prob, bvp, N, P), r in best.items():
        groups.setdefault((exp, prob, bvp, N), {})[P] = r
    for (exp, prob, bvp, N), rows in sorted(groups.items()):
        Ps = sorted(rows)
        names = [e for e in PHASES + ("SNESSolve",) if any(e in rows[P]["events"] for P in Ps)]
        names += sorted({e for P in Ps for e in rows[P]["events"] if e.startswith(("HsBand", "HsSlab")) and e not in names})
        if not names:
            continue
        out.append("### phases: %s %s, %s, N = %d\n" % (exp, prob, bvp, N))
        out.append("| event | " + " | ".join("P = %d" % P for P in Ps) + " |")
        out.append("|---|" + "---|" * len(Ps))
        for e in names:
            cell = lambda x: "%.3g s [%.1f]" % (x["time_max"], x["time_ratio"]) if x else "-"
            out.append("| %s | " % e + " | ".join(cell(rows[P]["events"].get(e)) for P in Ps) + " |")
        for e in [e for e in names if any(rows[P]["events"].get(e, {}).get("flops_max") for P in Ps)]:
            cell = lambda x: "%s [%s] / %s" % (fmt_flops(x["flops_max"]), fmt_ratio(x),
                                                fmt_flops(x["flops_total"])) if x else "-"
            out.append("| %s flops: busiest rank [max/min] / total | " % e + " | ".join(cell(rows[P]["events"].get(e))
                                                                           for P in Ps) + " |")
        out.append("")
    return out


def tables(data):
    """All tables, markdown, with the runs that failed, were killed or were skipped."""
    best = best_runs(data["runs"])
    out = ["# Scaling (bench/strong_weak.py)\n", "cores %s, binding %s, host %s\n" % (
        data["meta"].get("cores"), data["meta"].get("bind"), data["meta"].get("host")),
        "## Summary\n"] + summary_table(best) + ["## Strong scaling (solve = wall_time_s)\n"]
    out += strong_tables(best) + ["## Weak scaling\n"] + weak_tables(best) + ["## Phases (-log_view)\n"]
    out += phase_tables(best)
    bad = [r for r in data["runs"] if not r.get("converged")]
    if bad:
        out.append("## Runs without a converged solve\n")
        out += ["- %s: %s" % (r["name"], "killed at the budget" if r["killed"] else "rc %s" % r["rc"]) for r in bad]
    if data.get("skipped"):
        out.append("\nSkipped for the budget: " + ", ".join(data["skipped"]))
    return "\n".join(out) + "\n"


def reparse(d):
    """DIR/results.json from the logs alone (named EXP_PROBLEM_BVP_NN_PP_rR.log, the command on their first
    line: what bench/device_scaling.sh writes without python): no process times, binding from the command."""
    runs, cores = [], os.cpu_count()
    try:  # the node's cores: bench/device_scaling.sh's machine.txt has nproc on its third line
        cores = int(open(os.path.join(d, "machine.txt")).read().split("\n")[2])
    except (OSError, ValueError, IndexError):
        pass
    for f in sorted(os.listdir(os.path.join(d, "logs"))):
        m = re.match(r"^(\w+?)_(\w+?)_(transcription|shooting)_N(\d+)_P(\d+)_r(\d+)\.log$", f)
        if not m:
            continue
        text = open(os.path.join(d, "logs", f)).read()
        cmd, N, P = text.split("\n", 1)[0].split(), int(m.group(4)), int(m.group(5))
        seg = cmd[cmd.index("-hs_shoot_segments") + 1] if "-hs_shoot_segments" in cmd else None
        r = dict(name=f[:-4], experiment=m.group(1), problem=m.group(2), bvp=m.group(3), N=N, ranks=P,
                 repeat=int(m.group(6)), segments=int(seg) if seg else None, oversubscribed=P > cores,
                 bind=cmd[cmd.index("--bind-to") + 1] if "--bind-to" in cmd else "-", rc=None, killed=False,
                 process_s=0.0, command=cmd, events=bound_totals(parse_events(text), P))
        r.update(parse_stdout(text))
        runs.append(r)
    json.dump(dict(meta=dict(reparsed=True), runs=runs), open(os.path.join(d, "results.json"), "w"), indent=1)


def experiments(a):
    """[(experiment, problem, bvp, N, ranks)] in the order given: strong, then weak."""
    todo = []
    for prob in a.problems.split(","):
        for bvp in a.bvp.split(","):
            for N in [int(float(x)) for x in a.N.split(",") if x and float(x) > 0]:  # --N 0: none
                ranks = a.shoot_ranks_list if bvp == "shooting" and a.shoot_ranks_list else a.ranks_list
                todo.append([(a.tag, prob, bvp, N, P) for P in ranks])
    if a.weak_per_rank:
        for prob in (a.weak_problems or a.problems).split(","):
            todo.append([("weak", prob, "transcription", a.weak_per_rank * P, P) for P in a.ranks_list])
    return todo


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hamshoot", default=os.path.join(HERE, "..", "build", "hamshoot"))
    ap.add_argument("--mpiexec", default="mpiexec", help="the launcher, words split like a shell's")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--shoot-ranks", default="", help="rank counts for shooting (default --ranks)")
    ap.add_argument("--cores", type=int, default=0, help="cores to bind to (default: this process's CPU affinity)")
    ap.add_argument("--bind", default="core", choices=["core", "hwthread", "none"])
    ap.add_argument("--problems", default="pendulum,kepler")
    ap.add_argument("--N", default="100000")
    ap.add_argument("--bvp", default="transcription", help="transcription,shooting")
    ap.add_argument("--segments-per", type=int, default=10, help="shooting: M = N / this")
    ap.add_argument("--weak-per-rank", type=int, default=0, help="weak scaling: N = this x ranks (0: none)")
    ap.add_argument("--weak-problems", default="", help="default --problems")
    ap.add_argument("--tag", default="strong", help="the experiment's name for the strong runs")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=0, help="budget for the whole script (0: none)")
    ap.add_argument("--deadline", type=float, default=0, help="budget end, seconds since the epoch")
    ap.add_argument("--timeout", type=float, default=1800, help="per run")
    ap.add_argument("--summary", default="json", choices=["json", "stdout"],
                    help="json: -o and summary.json; stdout: hamshoot's wall time line, no output files")
    ap.add_argument("--extra", default="", help="more hamshoot options")
    ap.add_argument("--out", default="scaling-out")
    ap.add_argument("--logs", default="", help="folder of the runs' logs (default OUT/logs)")
    ap.add_argument("--append", action="store_true", help="add to --out's results.json")
    ap.add_argument("--run-dir", default="", help="where hamshoot writes -o (as it sees it; default a temp dir)")
    ap.add_argument("--run-dir-outside", default="", help="--run-dir as seen here (chroot)")
    ap.add_argument("--tables", metavar="DIR", help="only print DIR/results.json's tables")
    ap.add_argument("--reparse", metavar="DIR", help="rebuild DIR/results.json from DIR/logs/*.log, print the tables")
    ap.add_argument("--no-tables", action="store_true", help="print the runs only, not the tables at the end")
    a = ap.parse_args()
    if a.reparse:
        reparse(a.reparse)
    if a.tables or a.reparse:
        print(tables(json.load(open(os.path.join(a.tables or a.reparse, "results.json")))), end="")
        return
    a.ranks_list = [int(x) for x in a.ranks.split(",")]
    a.shoot_ranks_list = [int(x) for x in a.shoot_ranks.split(",")] if a.shoot_ranks else []
    tmp = None
    if not a.run_dir:
        tmp = tempfile.TemporaryDirectory()
        a.run_dir = tmp.name
    R = Runner(a)
    print("strong_weak: %d cores, binding %s, budget %s" % (R.cores, R.bind, "%.0f s" % R.left()
          if R.deadline < float("inf") else "none"), flush=True)
    for group in experiments(a):
        for rep in range(a.repeat):
            for e in group:
                R.run(*e, rep)
    if not a.no_tables:
        print(tables(R.data), end="")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
