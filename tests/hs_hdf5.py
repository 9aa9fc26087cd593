"""Issue 44, item 5: -hs_output_format hdf5, trajectory.h5 written by every rank (bvp/interface/outputh5.c).

The file is read by tests/h5tocsv (the HDF5 library alone, not PETSc's viewer that wrote it) and compared with the
trajectory.csv and intervals.csv of the same run written by rank 0 from the gathered solution (bvp/interface/output.c,
an independent code path): equal to round-off, on 1 and 2 ranks. A restart from the .h5 on another rank count
converges in at most 1 Newton iteration to the same J^d, and at another N exactly as a restart from the CSV does (the
same interpolation). Bad files are refused with a message. Without HDF5 (h5tocsv 'none') the option is an error.
"""
import math
import os
import shutil
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, MPIEXEC, PENDULUM_OCP, check


def hs(args, ranks=1):
    """hamshoot args (-quiet added) on ranks; returns (rc, stdout + stderr)."""
    cmd = [HAMSHOOT] + args + ["-quiet", "-hs_check_extremal", "no"]
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return p.returncode, p.stdout


def read_h5(h5tocsv, path):
    """({attribute: text}, {dataset: (columns, rows as lists of floats)}) of a trajectory.h5 (tests/h5tocsv)."""
    p = subprocess.run([h5tocsv, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "h5tocsv %s: exit %d (%s)" % (path, p.returncode, p.stderr.strip()))
    attrs, sets, cur = {}, {}, None
    for line in p.stdout.splitlines():
        if line.startswith("@"):
            k, v = line[1:].split("=", 1)
            attrs[k] = v
        elif line.startswith("#"):
            name, rows, cols, names = line[1:].split(" ", 3)
            cur = sets[name] = (names.split(","), [])
        else:
            cur[1].append([float(x) for x in line.split(",")])
    return attrs, sets


def read_csv(path):
    """(header, rows as lists of floats) of a CSV file hamshoot wrote."""
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[0].split(","), [[float(x) for x in l.split(",")] for l in lines[1:]]


def column(header, rows, name):
    j = header.index(name)
    return [r[j] for r in rows]


def max_rel(a, b):
    """max |a - b| / max(1, max |b|) over two equally long lists (inf if the lengths differ)."""
    if len(a) != len(b) or not a:
        return math.inf
    scale = max(1.0, max(abs(x) for x in b))
    return max(abs(x - y) for x, y in zip(a, b)) / scale


def compare(h5tocsv, h5dir, csvdir, what, tol=1e-12, conserving=True):
    """Every column of trajectory.h5 against the same-named column of trajectory.csv / intervals.csv."""
    attrs, sets = read_h5(h5tocsv, os.path.join(h5dir, "trajectory.h5"))
    th, tr = read_csv(os.path.join(csvdir, "trajectory.csv"))
    ih, ir = read_csv(os.path.join(csvdir, "intervals.csv"))
    check(attrs.get("format") == "hamshoot trajectory 1" and attrs.get("N") == str(len(tr) - 1),
          "%s: the root attributes %s (N = %d expected)" % (what, attrs, len(tr) - 1))
    node = {"t": ["t"], "states": th[1:th.index("E_minus_W")], "E_minus_W": ["E_minus_W"]}
    inter = {"t_mid": ["t_mid"], "controls": [c for c in ih if c.startswith("u")],
             "costates": [c for c in ih if c.startswith("lambda")], "H": ["H"]}
    if any(c.startswith("nu") for c in th):  # a constrained system's multipliers
        node["nu"] = [c for c in th if c.startswith("nu")]
        inter["gamma"] = [c for c in ih if c.startswith("gamma")]
    check(sorted(sets) == sorted(list(node) + list(inter)), "%s: datasets %s" % (what, sorted(sets)))
    for table, (hdr, rows) in ((node, (th, tr)), (inter, (ih, ir))):
        for ds, names in table.items():
            cols, data = sets.get(ds, ([], []))
            check(cols == names, "%s: dataset %s has the columns %s, the CSV %s" % (what, ds, cols, names))
            for j, name in enumerate(names):
                h5col = [r[j] for r in data] if j < len(cols) else []
                d = max_rel(h5col, column(hdr, rows, name))
                # E - W: the ranks' partial sums of the work (MPI_Exscan) against rank 0's running sum
                check(d <= (1e-13 if ds == "E_minus_W" else tol), "%s: %s.%s differs from the CSV by %.3g" % (what, ds, name, d))
    H = [r[0] for r in sets.get("H", ([], []))[1]]
    check(not conserving or H and max(H) - min(H) <= 1e-10 * max(1.0, abs(H[0])),
          "%s: H^d of the conserving scheme in the .h5 varies by %.3g" % (what, max(H) - min(H) if H else math.nan))
    return sets


def t_hdf5_equals_csv(h5tocsv):
    """The same solve written both ways (the solution is the same: each written from one run's Newton iterate), on
    1 and 2 ranks, for the built-in pendulum and a problem file with named coordinates (double pendulum); no
    temporary files left; a later CSV output replaces trajectory.h5 and vice versa (no stale trajectory beside a
    summary)."""
    with tempfile.TemporaryDirectory() as tmp:
        if h5tocsv == "none":
            rc, out = hs(["-problem", "pendulum", "-N", "20", "-hs_output_format", "hdf5", "-o", tmp + "/o"])
            check(rc != 0 and "without HDF5" in out, "no HDF5: -hs_output_format hdf5 exit %d: %s" % (rc, out[-300:]))
            return
        ocp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems", "double_pendulum_cartesian.ocp")
        for ranks in (1, 2):
            for prob in (["-problem", "pendulum", "-N", "40"], ["-problem", ocp, "-N", "24"]):
                d = os.path.join(tmp, "r%d%s" % (ranks, len(prob[1])))
                # the same solve twice (deterministic: the same iterates), written as CSV and as HDF5
                rc, out = hs(prob + ["-o", d + "csv"], ranks)
                check(rc == 0, "%s on %d ranks: exit %d\n%s" % (prob, ranks, rc, out[-500:]))
                rc, out = hs(prob + ["-hs_output_format", "hdf5", "-o", d + "h5"], ranks)
                check(rc == 0, "%s hdf5 on %d ranks: exit %d\n%s" % (prob, ranks, rc, out[-500:]))
                if rc == 0:
                    compare(h5tocsv, d + "h5", d + "csv", "%s, %d ranks" % (prob[1], ranks))
                    left = sorted(os.listdir(d + "h5"))
                    check(left == ["summary.json", "trajectory.h5"], "hdf5 output holds %s" % left)
        if not os.environ.get("HS_SANITIZED"):  # the formulation's own controls (ipopt: rank 0's, sent to their owners)
            ip = ["-problem", "pendulum", "-N", "30", "-hs_bvp_type", "ipopt"]
            rc1, _ = hs(ip + ["-o", tmp + "/ipcsv"], 2)
            rc2, out = hs(ip + ["-hs_output_format", "hdf5", "-o", tmp + "/iph5"], 2)
            check(rc1 == 0 and rc2 == 0, "ipopt: exit %d, %d\n%s" % (rc1, rc2, out[-400:]))
            if rc1 == 0 and rc2 == 0:
                compare(h5tocsv, tmp + "/iph5", tmp + "/ipcsv", "ipopt, 2 ranks", conserving=False)
        rc, _ = hs(["-problem", "pendulum", "-N", "20", "-hs_output_format", "auto", "-o", tmp + "/auto"])
        check(rc == 0 and sorted(os.listdir(tmp + "/auto")) == ["intervals.csv", "summary.json", "trajectory.csv"],
              "auto at N = 20 (below 1e6): CSV")
        d = os.path.join(tmp, "switch")
        hs(["-problem", "pendulum", "-N", "20", "-o", d])
        hs(["-problem", "pendulum", "-N", "20", "-hs_output_format", "hdf5", "-o", d], 2)
        check(sorted(os.listdir(d)) == ["summary.json", "trajectory.h5"], "csv then hdf5: %s" % sorted(os.listdir(d)))
        hs(["-problem", "pendulum", "-N", "20", "-o", d], 2)
        check(sorted(os.listdir(d)) == ["intervals.csv", "summary.json", "trajectory.csv"],
              "hdf5 then csv: %s" % sorted(os.listdir(d)))


def t_hdf5_restart(h5tocsv):
    """-hs_init from trajectory.h5 written on 2 ranks: on 1 and 3 ranks at the same N in at most 1 Newton iteration
    to the same J^d; at N = 2 x 60 with the same iterations and J^d as from the CSV of the same solution."""
    import json
    if h5tocsv == "none":
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = ["-problem", "pendulum", "-hs_scheme", "conserving"]
        rc, out = hs(base + ["-N", "60", "-hs_output_format", "hdf5", "-o", tmp + "/h5"], 2)
        check(rc == 0, "hdf5 solve: exit %d\n%s" % (rc, out[-400:]))
        rc, out = hs(base + ["-N", "60", "-o", tmp + "/csv"], 2)
        J = json.load(open(tmp + "/h5/summary.json"))["J"]
        for ranks, src in ((1, tmp + "/h5/trajectory.h5"), (3, tmp + "/h5")):
            rc, out = hs(base + ["-N", "60", "-hs_init", src, "-o", tmp + "/r%d" % ranks], ranks)
            s = json.load(open(tmp + "/r%d/summary.json" % ranks)) if rc == 0 else {}
            check(rc == 0 and s.get("newton_iterations", 9) <= 1 and abs(s["J"] - J) <= 1e-10 * max(1, abs(J)),
                  "restart from %s on %d ranks: exit %d, %s iterations, J %s vs %s" %
                  (src, ranks, rc, s.get("newton_iterations"), s.get("J"), J))
        res = {}
        for name, src in (("h5", tmp + "/h5/trajectory.h5"), ("csv", tmp + "/csv/trajectory.csv")):
            rc, out = hs(base + ["-N", "120", "-hs_init", src, "-o", tmp + "/n" + name], 2)
            res[name] = json.load(open(tmp + "/n%s/summary.json" % name)) if rc == 0 else {}
        a, b = res["h5"], res["csv"]
        check(a.get("converged") and a.get("newton_iterations") == b.get("newton_iterations") and
              abs(a["J"] - b["J"]) <= 1e-10 * max(1, abs(b["J"])),
              "N = 120 from the .h5 (%s its., J %s) and from the CSV (%s its., J %s)" %
              (a.get("newton_iterations"), a.get("J"), b.get("newton_iterations"), b.get("J")))
        # a free final time: the .h5's T attribute starts the restart, as the summary.json beside a CSV does
        ft = ["-problem", os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pendulum_free_T.ocp")]
        for f in ("csv", "hdf5"):
            hs(ft + ["-hs_output_format", f, "-o", tmp + "/ft" + f], 2)
            rc, out = hs(ft + ["-hs_init", tmp + "/ft" + f, "-o", tmp + "/ftr" + f], 1)
            res[f] = json.load(open(tmp + "/ftr%s/summary.json" % f)) if rc == 0 else {}
        a, b = res["hdf5"], res["csv"]
        check(a.get("converged") and a.get("newton_iterations") == b.get("newton_iterations") and
              abs(a["T"] - b["T"]) <= 1e-10 * b["T"],
              "free T restarted from the .h5 (%s its., T %s) and from the CSV (%s its., T %s)" %
              (a.get("newton_iterations"), a.get("T"), b.get("newton_iterations"), b.get("T")))


def t_hdf5_errors(h5tocsv):
    """Bad -hs_init files exit non-zero with a message naming the file and the fault: text named .h5, a FIFO, a truncated
    .h5, one whose datasets disagree with its N, the .h5 of a problem of another n, of another T; the user's file at trajectory.h5 in -o is refused before
    the solve (HsCheckOutputFiles) and left as it was."""
    if h5tocsv == "none":
        return
    with tempfile.TemporaryDirectory() as tmp:
        pend = ["-problem", "pendulum", "-N", "20"]
        rc, _ = hs(pend + ["-hs_output_format", "hdf5", "-o", tmp + "/good"], 2)
        good = tmp + "/good/trajectory.h5"
        check(rc == 0 and os.path.exists(good), "the good file: exit %d" % rc)
        with open(tmp + "/text.h5", "w") as f:
            f.write("t,q1,p1\n0,0,0\n")
        data = open(good, "rb").read()
        with open(tmp + "/trunc.h5", "wb") as f:
            f.write(data[: len(data) // 2])
        rc, _ = hs(["-problem", "kepler", "-N", "20", "-hs_output_format", "hdf5", "-o", tmp + "/kep"])
        with open(tmp + "/t4.ocp", "w") as f:
            f.write((PENDULUM_OCP % "t4").replace("T: 3", "T: 4"))
        shutil.copy(good, tmp + "/bigN.h5")
        subprocess.run([h5tocsv, "--set-N", tmp + "/bigN.h5", "21"], check=True)  # the datasets have 20 intervals
        os.mkfifo(tmp + "/fifo.h5")  # would block the HDF5 library's open for ever
        cases = [(tmp + "/text.h5", pend, "not a readable HDF5 file"), (tmp + "/fifo.h5", pend, "not a regular file"),
                 (tmp + "/bigN.h5", pend, "dataset 'states' is 2-D 21 x 2, expected 22 x 2"),
                 (tmp + "/trunc.h5", pend, "not a readable HDF5 file"),
                 (tmp + "/kep/trajectory.h5", pend, "n = 3 coordinates"),
                 (good, ["-problem", tmp + "/t4.ocp"], "its final time is T = 3")]
        for path, args, msg in cases:
            for ranks in (1, 2):
                rc, out = hs(args + ["-hs_init", path, "-o", tmp + "/x"], ranks)
                check(rc != 0 and msg in out and path in out,
                      "-hs_init %s on %d ranks: exit %d, expected '%s' in:\n%s" % (path, ranks, rc, msg, out[-600:]))
        os.makedirs(tmp + "/mine")
        with open(tmp + "/mine/trajectory.h5", "w") as f:
            f.write("my results\n")
        rc, out = hs(pend + ["-hs_output_format", "hdf5", "-o", tmp + "/mine"], 2)
        check(rc != 0 and "trajectory.h5" in out and open(tmp + "/mine/trajectory.h5").read() == "my results\n",
              "the user's trajectory.h5 in -o: exit %d\n%s" % (rc, out[-400:]))
        shutil.rmtree(tmp + "/x", ignore_errors=True)


def t_hdf5_diagnostics(h5tocsv):
    """With -hs_output_format hdf5 the diagnostics are computed by every rank on its own nodes (no gather,
    bvp/interface/diagdist.c): summary.json's J^d, H^d mean/min/max, the H^d balance (a running cost that depends on t:
    pendulum_tracking.ocp, H^d not constant), E - W and the suspect intervals as rank 0 computes them from the gathered
    solution (the CSV run), to round-off, on 1 to 3 ranks, for a constrained system too."""
    import json
    if h5tocsv == "none":
        return
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    probs = [["-problem", os.path.join(data, "pendulum_tracking.ocp"), "-N", "60"],
             ["-problem", os.path.join(data, "..", "..", "problems", "double_pendulum_cartesian.ocp"), "-N", "24"]]
    with tempfile.TemporaryDirectory() as tmp:
        for pi, prob in enumerate(probs):
            for ranks in (1, 2, 3):
                s = {}
                for f in ("csv", "hdf5"):
                    d = "%s/p%d_%d_%s" % (tmp, pi, ranks, f)
                    rc, out = hs(prob + ["-hs_output_format", f, "-o", d], ranks)
                    s[f] = json.load(open(d + "/summary.json")) if rc == 0 else {}
                    check(rc == 0, "%s %s on %d ranks: exit %d\n%s" % (prob[1], f, ranks, rc, out[-400:]))
                a, b = s["hdf5"], s["csv"]
                what = "%s on %d ranks" % (os.path.basename(prob[1]), ranks)
                for key in ("J", "H_mean", "H_min", "H_max"):
                    check(key in a and abs(a[key] - b[key]) <= 1e-12 * max(1, abs(b[key])),
                          "%s: %s %s (hdf5) vs %s (csv)" % (what, key, a.get(key), b.get(key)))
                for key in ("H_balance", "energy_work_spread"):  # round-off in both (conserving, energy-consistent)
                    check(key in a and a[key] <= 1e-10 and b[key] <= 1e-10,
                          "%s: %s %s (hdf5) vs %s (csv)" % (what, key, a.get(key), b.get(key)))
                check(a.get("suspect_intervals", 0) == b.get("suspect_intervals", 0) and
                      a.get("converged") is True and a.get("newton_iterations") == b.get("newton_iterations"),
                      "%s: hdf5 %s, csv %s" % (what, {k: a.get(k) for k in ("converged", "newton_iterations")},
                                                {k: b.get(k) for k in ("converged", "newton_iterations")}))
