#!/usr/bin/env python3
"""hamshoot system tests: run the hamshoot executable and check what the
mathematics promises (DESIGN.md section 2.3) -- conservation to round-off,
convergence order, agreement across MPI ranks, analytic vs finite-difference
Jacobians, an independent continuous solution, error handling.

Usage: hstest.py HAMSHOOT MPIEXEC TEST [args]   (run by ctest; stdlib only,
except 'crosscheck', which runs tests/crosscheck/continuous_nco.py with scipy).
"""
import csv
import filecmp
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HAMSHOOT, MPIEXEC = sys.argv[1], sys.argv[2]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")
FAILS = []
PASSES = [0]


def check(cond, what):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(what)
        print("FAIL:", what)


def read_rows(outdir):
    """trajectory.csv (node rows) with the columns of intervals.csv (interval k on row k, empty on
    the last row), as one list of dicts."""
    with open(os.path.join(outdir, "trajectory.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(outdir, "intervals.csv")) as f:
        ints = list(csv.DictReader(f))
    keys = list(ints[0].keys()) if ints else []
    for k, r in enumerate(rows):
        for key in keys:
            r[key] = ints[k][key] if k < len(ints) else ""
    return rows


def run(args, ranks=1, expect_rc=0, outdir=None, env=None):
    """Runs hamshoot (with env added to the environment); returns (summary dict or None, stdout+stderr, rc)."""
    cmd = [HAMSHOOT] + args + ["-quiet"]
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    tmp = None
    if outdir is None:
        tmp = tempfile.TemporaryDirectory()
        outdir = os.path.join(tmp.name, "out")
    cmd += ["-o", outdir]
    p = subprocess.run(cmd, env=dict(ENV, **(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    summary = None
    sfile = os.path.join(outdir, "summary.json")
    if os.path.exists(sfile):
        with open(sfile) as f:
            summary = json.load(f)
        summary["_rows"] = read_rows(outdir)
    if expect_rc is not None and p.returncode != expect_rc:
        print(" ".join(cmd))
        print(p.stdout)
    check(expect_rc is None or p.returncode == expect_rc, "%s: exit %d, expected %s" % (" ".join(args), p.returncode, expect_rc))
    if tmp:
        tmp.cleanup()
    return summary, p.stdout, p.returncode


def jacobian_ratios(out):
    """The ||J - Jfd||_F/||J||_F values -snes_test_jacobian printed."""
    return [float(x) for x in re.findall(r"\|\|J - Jfd\|\|_F/\|\|J\|\|_F = ([0-9.eE+-]+)", out)]


def order(e1, e2):
    return math.log2(e1 / e2) if e1 > 0 and e2 > 0 else float("nan")


# ------------------------------------------------------------------ tests ---

def t_conservation():
    """conserving: H^d spread <= 1e-10 max(1,|H|) for N = 10, 20, 40; E - W constant;
    the constant itself changes with N (so the test is not vacuous)."""
    for prob in ("pendulum", "kepler"):
        means = []
        for N in (10, 20, 40):
            s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_scheme", "conserving"])
            if not s:
                check(False, "%s N=%d: no summary" % (prob, N))
                continue
            check(s["converged"], "%s N=%d converged" % (prob, N))
            rel = s["H_spread"] / max(1.0, abs(s["H_mean"]))
            print("%-9s N=%3d  H_mean %.12f  H_spread/max(1,|H|) %.2e  E-W spread %.2e"
                  % (prob, N, s["H_mean"], rel, s["energy_work_spread"]))
            check(rel <= 1e-10, "%s N=%d: relative H^d spread %.3e > 1e-10" % (prob, N, rel))
            check(s["energy_work_spread"] <= 1e-10, "%s N=%d: E-W spread %.3e" % (prob, N, s["energy_work_spread"]))
            # per-row H in the trajectory agrees with the summary
            hs = [float(r["H"]) for r in s["_rows"][:-1]]
            check(len(hs) == N and max(hs) - min(hs) <= 1e-10 * max(1, abs(s["H_mean"])), "%s: trajectory H column" % prob)
            means.append(s["H_mean"])
        if len(means) == 3:
            check(abs(means[0] - means[1]) > 1e-6 and abs(means[1] - means[2]) > 1e-7,
                  "%s: the conserved H^d value should depend on N: %s" % (prob, means))
    # The n-DOF conserving form conserves too on the pendulum (greenspan and gonzalez states).
    for ss in ("greenspan", "gonzalez"):
        s, _, _ = run(["-problem", "pendulum", "-N", "20", "-hs_state_scheme", ss, "-hs_costate_scheme", "conserving"])
        if s:
            rel = s["H_spread"] / max(1, abs(s["H_mean"]))
            print("pendulum  %s + conserving (n-DOF form): H_spread rel %.2e" % (ss, rel))
            check(s["converged"] and rel <= 1e-10, "pendulum %s+conserving: spread %.3e" % (ss, rel))


def t_direct_order():
    """direct schemes: H^d varies and its spread shrinks at order 2 (+-0.3) as N doubles."""
    cases = [("pendulum", "midpoint", "trapezoidal"), ("kepler", "midpoint", "trapezoidal"),
             ("pendulum", "greenspan", "kkt"), ("kepler", "gonzalez", "kkt")]
    for prob, ss, cs in cases:
        spreads = []
        for N in (20, 40, 80, 160):
            s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs])
            check(s and s["converged"], "%s %s/%s N=%d converged" % (prob, ss, cs, N))
            spreads.append(s["H_spread"] if s else float("nan"))
        orders = [order(spreads[i], spreads[i + 1]) for i in range(3)]
        print("%-9s %-9s + %-11s H^d spread %s  observed orders %s"
              % (prob, ss, cs, " ".join("%.2e" % x for x in spreads), " ".join("%.1f" % o for o in orders)))
        check(spreads[0] > 1e-6, "%s %s/%s: direct H^d spread %.2e should be visible" % (prob, ss, cs, spreads[0]))
        for o in orders:
            check(abs(o - 2) <= 0.3, "%s %s/%s: H^d spread order %.2f not 2 +- 0.3" % (prob, ss, cs, o))


def averaged_costates(rows_c, rows_f, dim):
    """max over coarse intervals and components of |lambda_c - mean of the fine lambdas inside|."""
    Nc, Nf = len(rows_c) - 1, len(rows_f) - 1
    r = Nf // Nc
    err = 0.0
    for k in range(Nc):
        for j in range(1, dim + 1):
            key = "lambda%d" % j
            fine = sum(float(rows_f[k * r + i][key]) for i in range(r)) / r
            err = max(err, abs(float(rows_c[k][key]) - fine))
    return err


def t_kepler_order():
    """kepler, conserving: J, mean H^d and averaged costates converge at order 2 (+-0.2);
    N = 10 * 2^i, i = 0..6, against N = 1280 (thesis Fig. 8.5 protocol). Orders are
    asserted for pairs whose finer grid is at most 1/4 of the reference (N <= 320):
    closer to the reference, its own O(h^2) error biases the observed order upward
    (for N = 640 against 1280 the expected ratio is 5, 'order' 2.3); all are printed."""
    sols = {}
    for N in [10 * 2 ** i for i in range(8)]:
        s, _, _ = run(["-problem", "kepler", "-N", str(N)])
        check(s and s["converged"], "kepler N=%d converged" % N)
        sols[N] = s
    ref = sols[1280]
    Ns = [10 * 2 ** i for i in range(7)]
    errs = {"J": [abs(sols[N]["J"] - ref["J"]) for N in Ns],
            "H_mean": [abs(sols[N]["H_mean"] - ref["H_mean"]) for N in Ns],
            "lambda": [averaged_costates(sols[N]["_rows"], ref["_rows"], 6) for N in Ns]}
    print("    N   err J      err H_mean err lambda   orders (J, H, lambda)")
    for i, N in enumerate(Ns):
        o = ["%.1f" % order(errs[q][i - 1], errs[q][i]) if i else "  -" for q in ("J", "H_mean", "lambda")]
        print("%5d  %.3e  %.3e  %.3e   %s" % (N, errs["J"][i], errs["H_mean"][i], errs["lambda"][i], " ".join(o)))
    for q in errs:
        # least-squares slope of log(err) against log(h) over N = 10..320
        xs = [math.log(1.0 / N) for N in Ns[:6]]
        ys = [math.log(e) for e in errs[q][:6]]
        xm, ym = sum(xs) / 6, sum(ys) / 6
        slope = sum((x - xm) * (y - ym) for x, y in zip(xs, ys)) / sum((x - xm) ** 2 for x in xs)
        print("kepler %-6s least-squares order over N = 10..320: %.1f" % (q, slope))
        check(abs(slope - 2) <= 0.2, "kepler %s: fitted order %.2f not 2 +- 0.2" % (q, slope))
        # each pair from N = 20 on (N = 10, h = 0.31, is pre-asymptotic for the costates: 1.8)
        for i in range(2, 6):  # pairs (20,40) ... (160,320)
            o = order(errs[q][i - 1], errs[q][i])
            check(abs(o - 2) <= 0.2, "kepler %s: order %.2f between N=%d and %d not 2 +- 0.2" % (q, o, Ns[i - 1], Ns[i]))
    # the direct pair (midpoint + trapezoidal) converges at order 2 as well (DESIGN.md 2.3, item 3)
    dsol = {N: run(["-problem", "kepler", "-N", str(N), "-hs_scheme", "direct"])[0] for N in (20, 40, 80, 160, 1280)}
    for q in ("J", "H_mean"):
        e = [abs(dsol[N][q] - dsol[1280][q]) for N in (20, 40, 80, 160)]
        o = [order(e[i], e[i + 1]) for i in range(3)]
        print("kepler direct %-6s errors %s, orders %s" % (q, " ".join("%.2e" % x for x in e), " ".join("%.1f" % x for x in o)))
        for x in o:
            check(abs(x - 2) <= 0.2, "kepler direct %s: order %.2f" % (q, x))


def t_ranks():
    """identical summaries (1e-12 relative) and trajectories on 1, 2 and 4 ranks."""
    for prob, N in (("pendulum", 20), ("kepler", 20), ("kepler", 41)):
        base = None
        for P in (1, 2, 4):
            s, _, _ = run(["-problem", prob, "-N", str(N)], ranks=P)
            if not s:
                check(False, "%s on %d ranks: no summary" % (prob, P))
                continue
            check(s["ranks"] == P, "summary ranks field %s != %d" % (s["ranks"], P))
            if base is None:
                base = s
                continue
            for key in ("J", "H_mean", "H_min", "H_max"):
                rel = abs(s[key] - base[key]) / max(1e-300, abs(base[key]))
                check(rel <= 1e-12, "%s %s on %d ranks differs by %.2e relative" % (prob, key, P, rel))
            for key in ("converged", "newton_iterations", "N", "state_scheme", "costate_scheme", "problem"):
                check(s[key] == base[key], "%s %s on %d ranks: %s vs %s" % (prob, key, P, s[key], base[key]))
            for key in ("H_spread", "energy_work_spread", "residual_norm"):
                check(s[key] <= 1e-10, "%s %s on %d ranks: %.2e" % (prob, key, P, s[key]))
            d = max(abs(float(a[c]) - float(b[c])) for a, b in zip(s["_rows"][:-1], base["_rows"][:-1]) for c in a)
            print("%-9s N=%d ranks=%d: max |trajectory difference| vs 1 rank %.2e" % (prob, N, P, d))
            check(d <= 1e-11, "%s trajectory on %d ranks differs by %.2e" % (prob, P, d))


def t_jacobian():
    """assembled analytic Jacobian against PETSc's -snes_test_jacobian at every Newton iterate."""
    cases = [("pendulum", "greenspan", "conserving_1dof"), ("pendulum", "gonzalez", "conserving"),
             ("pendulum", "midpoint", "trapezoidal"), ("pendulum", "greenspan", "kkt"),
             ("kepler", "gonzalez", "conserving"), ("kepler", "gonzalez", "kkt"), ("kepler", "midpoint", "kkt")]
    shoot = [[], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"],
             ["-hs_bvp_type", "shooting", "-hs_shoot_knots", "1,2,6"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "8"]]
    for ranks in (1, 2):
        for (prob, ss, cs), extra in [(c, []) for c in cases] + [(c, e) for c in cases[:1] + cases[4:5] for e in shoot[1:]]:
            # kepler: N = 20, where the naive march succeeds for these splits (see shooting_equivalence)
            N = "20" if prob == "kepler" and extra else "8"
            if N == "20" and "1,2,6" in extra:
                extra = ["-hs_bvp_type", "shooting", "-hs_shoot_knots", "2,7,12,16"]
            if N == "20" and extra[-1] == "3":
                extra = ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "5"]
            _, out, _ = run(["-problem", prob, "-N", N, "-hs_state_scheme", ss, "-hs_costate_scheme", cs,
                             "-snes_test_jacobian"] + extra, ranks=ranks, expect_rc=None)
            ratios = jacobian_ratios(out)
            print("%-9s %-9s + %-15s %-40s ranks=%d: %d Jacobians tested, max ||J-Jfd||/||J|| = %.1e"
                  % (prob, ss, cs, " ".join(extra[:4]), ranks, len(ratios), max(ratios) if ratios else float("nan")))
            check(len(ratios) >= 2, "%s %s/%s: -snes_test_jacobian reported nothing" % (prob, ss, cs))
            # shooting Jacobians pass through the march's sensitivities, which amplify the finite
            # difference's own O(sqrt(eps)) error: allow 1e-5 there (a wrong block gives >= 1e-3)
            check(ratios and max(ratios) < (1e-5 if extra else 1e-6), "%s %s/%s %s: Jacobian mismatch %s" % (prob, ss, cs, extra, ratios))


def t_crosscheck(script):
    """Richardson-extrapolated J and H^d (N = 640, 1280) against an independent scipy
    solve_bvp solution of the continuous necessary conditions (tests/crosscheck/).
    The extrapolation removes the O(h^2) term; what remains is O(h^4), measured
    here at <= 1e-8 relative for the pendulum (whose h^2 coefficient is large)."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    p = subprocess.run([py, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    check(p.returncode == 0, "crosscheck script failed: " + p.stdout[-2000:])
    if p.returncode:
        return
    cont = json.loads(p.stdout)
    for prob in ("pendulum", "kepler"):
        c = cont[prob]
        check(c["status"] == 0, "%s: scipy solve_bvp status %s" % (prob, c["status"]))
        for scheme in ("conserving", "direct"):
            s1, _, _ = run(["-problem", prob, "-N", "640", "-hs_scheme", scheme])
            s2, _, _ = run(["-problem", prob, "-N", "1280", "-hs_scheme", scheme])
            for key, ckey in (("J", "J"), ("H_mean", "H")):
                ext = (4 * s2[key] - s1[key]) / 3
                rel = abs(ext - c[ckey]) / abs(c[ckey])
                raw = abs(s2[key] - c[ckey]) / abs(c[ckey])
                print("%-9s %-10s %-6s N=1280 %.10f extrapolated %.10f continuous %.10f  rel diff %.1e (raw %.1e)"
                      % (prob, scheme, key, s2[key], ext, c[ckey], rel, raw))
                check(rel < 5e-8, "%s %s %s: extrapolated %.10g vs continuous %.10g" % (prob, scheme, key, ext, c[ckey]))


def t_errors():
    """bad input: clear message and exit 1; no crash, no hang, no output left behind."""
    cases = [(["-problem", "nonesuch"], "nonesuch"),
             (["-N", "1"], "at least 2"),
             (["-N", "abc"], "abc"),
             (["-hs_scheme", "fancy"], "fancy"),
             (["-hs_state_scheme", "rk4"], "rk4"),
             (["-hs_costate_scheme", "magic"], "magic"),
             (["-problem", "kepler", "-hs_state_scheme", "greenspan"], "greenspan"),
             (["-hs_state_scheme", "midpoint", "-hs_costate_scheme", "conserving_1dof"], "conserving_1dof"),
             (["-hs_bvp_type", "magic"], "magic"),
             (["-hs_bvp_type", "shooting", "-hs_shoot_segments", "0"], "hs_shoot_segments"),
             (["-hs_bvp_type", "shooting", "-hs_shoot_segments", "21"], "M <= N"),
             (["-hs_bvp_type", "shooting", "-hs_shoot_knots", "5,3"], "hs_shoot_knots"),
             (["-hs_bvp_type", "shooting", "-hs_shoot_knots", "5,20"], "hs_shoot_knots"),
             (["-hs_bvp_type", "shooting", "-hs_shoot_ksp", "cg"], "cg"),
             (["-hs_bvp_type", "shooting", "-hs_shoot_init", "guess"], "guess"),
             (["-hs_bvp_type", "shooting", "-hs_step_atol", "0"], "hs_step_atol"),
             (["-hs_dg_tol", "-1"], "hs_dg_tol"),
             (["-p_gg", "1"], "-p_gg"),
             (["-p_m", "-1"], "-p_m"),
             (["-problem", "kepler", "-p_g", "1"], "-p_g")]
    for args, word in cases:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            _, text, rc = run(args, expect_rc=1, outdir=out)
            check("hamshoot: error:" in text and word in text, "%s: message %r lacks %r" % (args, text[-300:], word))
            check("Segmentation" not in text and "signal" not in text.lower(), "%s crashed" % args)
            check(not os.path.exists(os.path.join(out, "summary.json")), "%s left a summary" % args)
    # more ranks than time points
    _, text, rc = run(["-N", "2"], ranks=4, expect_rc=1)
    check("ranks" in text, "N=2 on 4 ranks: " + text[-300:])
    # an output path that cannot be a directory
    with tempfile.NamedTemporaryFile() as f:
        _, text, rc = run([], expect_rc=1, outdir=os.path.join(f.name, "sub"))
        check("cannot create output directory" in text, "bad -o: " + text[-300:])
    # not converged: exit 2, summary says so, and replaces a stale one
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        s, _, _ = run(["-problem", "kepler"], outdir=out)
        check(s and s["converged"], "kepler converged")
        s, _, rc = run(["-problem", "kepler", "-snes_max_it", "1", "-hs_strategy", "newton"], expect_rc=2, outdir=out)
        check(s is not None and s["converged"] is False and s["snes_reason"].startswith("DIVERGED"),
              "non-converged run must write converged=false: %s" % (s and s["snes_reason"]))
        check(not [f for f in os.listdir(out) if f.startswith(".")], "temporary files left in %s" % out)
    # -help lists the options and exits 0 without solving
    p = subprocess.run([HAMSHOOT, "-help"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(p.returncode == 0 and "-hs_scheme" in p.stdout and "-hs_costate_scheme" in p.stdout and "J^d" not in p.stdout,
          "-help: rc %d" % p.returncode)


def t_example(name, expected_file):
    """an example run against its stored expected output (DIGITS significant digits)."""
    with open(expected_file) as f:
        exp = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.abspath(expected_file)))  # paths in args: from the project root
    args = [os.path.join(root, a) if a.endswith(".ocp") and not os.path.isabs(a) else a for a in exp["args"]]
    s, _, _ = run(args, ranks=exp.get("ranks", 1))
    if not s:
        check(False, "%s: no summary" % name)
        return
    for key, val in exp["values"].items():
        digits = exp.get("digits_for", {}).get(key, exp["digits"])
        rel = abs(s[key] - val) / max(abs(val), 1e-300)
        print("%-8s %-10s %.12g expected %.12g (rel %.1e)" % (name, key, s[key], val, rel))
        check(rel <= 0.5 * 10 ** (1 - digits), "%s: %s = %.12g, expected %.12g to %d digits" % (name, key, s[key], val, digits))
    for key, bound in exp.get("at_most", {}).items():
        check(s[key] <= bound, "%s: %s = %.3e > %.1e" % (name, key, s[key], bound))
    for key, val in exp.get("equal", {}).items():
        check(s[key] == val, "%s: %s = %s, expected %s" % (name, key, s[key], val))


def t_example_c(exe, expected_file):
    """a C example program: its output on 1 and 2 ranks equals the stored expected output
    (the program prints rounded values only)."""
    with open(expected_file) as f:
        expected = f.read()
    for ranks in (1, 2):
        cmd = [exe] if ranks == 1 else [MPIEXEC, "--oversubscribe", "-n", str(ranks), exe]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        print(p.stdout)
        check(p.returncode == 0 and p.stdout == expected,
              "%s on %d ranks: rc %d, output differs from %s" % (os.path.basename(exe), ranks, p.returncode, expected_file))


def t_shooting_equivalence():
    """shooting with M in {1, 2, 5, N/2, N} and an uneven split reproduces the transcription
    solution to 1e-10 relative, for every scheme pair, on 1, 2 and 4 ranks.

    With the default schemes and even splits, shooting must converge from the naive guess
    (boundary states interpolated, lambda = 0). Elsewhere the naive march may fail (kepler:
    with lambda = 0 a segment falls towards the singularity at q = 0); then the failure must
    be diagnosed (segment and step named, exit 2) and the run is repeated from the
    transcription solution (-hs_shoot_init transcription), which must be a root of the
    shooting residual: converged within 2 Newton iterations, same solution."""
    N = 20
    cases = (("pendulum", "greenspan", "conserving_1dof", True), ("pendulum", "midpoint", "trapezoidal", False),
             ("pendulum", "greenspan", "kkt", False), ("kepler", "gonzalez", "conserving", True),
             ("kepler", "gonzalez", "kkt", False), ("kepler", "midpoint", "trapezoidal", False))
    for prob, ss, cs, default in cases:
        base, _, _ = run(["-problem", prob, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs])
        scale = max(abs(float(v)) for r in base["_rows"][:-1] for v in r.values())
        splits = [["-hs_shoot_segments", str(M)] for M in (1, 2, 5, N // 2, N)] + [["-hs_shoot_knots", "3,4,11,17"]]
        for split in splits:
            uneven = split[0] == "-hs_shoot_knots"
            for P in ((1, 2, 4) if default or split[1] == "5" else (1,)):
                args = ["-problem", prob, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs,
                        "-hs_bvp_type", "shooting"] + split
                s, _, rc = run(args, ranks=P, expect_rc=None)
                how = "naive guess"
                if not (s and s["converged"]):
                    check(not (default and not uneven), "%s %s/%s %s on %d ranks must converge from the naive guess: %s"
                          % (prob, ss, cs, split, P, s and s["diagnosis"]))
                    check(rc == 2 and s and "segment" in s["diagnosis"] and "step" in s["diagnosis"],
                          "%s %s: undiagnosed failure (rc %d): %s" % (prob, split, rc, s and s["diagnosis"]))
                    s, _, rc = run(args + ["-hs_shoot_init", "transcription"], ranks=P)
                    how = "from transcription"
                    check(s and s["newton_iterations"] <= 2, "%s %s: the transcription solution is not a shooting root" % (prob, split))
                if not s or not s["converged"]:
                    check(False, "%s %s/%s %s on %d ranks: %s" % (prob, ss, cs, split, P, s and s["diagnosis"]))
                    continue
                check(s["bvp_type"] == "shooting" and s["segments"] == (5 if uneven else int(split[1])), "bvp_type/segments fields")
                d = max(abs(float(a[c]) - float(b[c])) for a, b in zip(s["_rows"][:-1], base["_rows"][:-1]) for c in a)
                dJ = abs(s["J"] - base["J"]) / abs(base["J"])
                print("%-9s %-9s + %-15s %-24s ranks=%d: %-18s Newton %2d, |traj - transcription|/max %.1e, J rel %.1e"
                      % (prob, ss, cs, " ".join(split), P, how, s["newton_iterations"], d / scale, dJ))
                check(d / scale <= 1e-10 and dJ <= 1e-10, "%s %s/%s %s on %d ranks: differs from transcription by %.2e"
                      % (prob, ss, cs, split, P, d / scale))


def t_instability():
    """single shooting on the unstable 'saddle' problem (growth e^{omega T} = e^40) is diagnosed --
    exit 2, the growth, the segment and 'use more segments' reported -- and 50 or 100 segments
    succeed, agreeing with the transcription solution. The problem is linear-quadratic, so Newton
    must converge in at most 2 iterations (1, plus one at round-off)."""
    s, out, rc = run(["-problem", "saddle", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], expect_rc=2)
    print(out.strip().splitlines()[-3] if out.strip() else "")
    check(s and not s["converged"], "single shooting on saddle must not converge")
    check(s and "segment 0" in s["diagnosis"] and "use more segments" in s["diagnosis"] and "growth" in s["diagnosis"],
          "diagnosis: %s" % (s and s["diagnosis"]))
    check(s and s["sensitivity_growth"] > 1e15, "growth %.2e should be ~e^40" % (s and s["sensitivity_growth"] or 0))
    base, _, _ = run(["-problem", "saddle"])
    check(base and base["newton_iterations"] <= 2, "transcription on a linear problem: %s Newton iterations" % (base and base["newton_iterations"]))
    for M, P in ((50, 1), (50, 2), (100, 4)):
        s, _, _ = run(["-problem", "saddle", "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)], ranks=P)
        ok = s and s["converged"]
        check(ok, "saddle with %d segments on %d ranks: %s" % (M, P, s and s["diagnosis"]))
        if ok:
            rel = abs(s["J"] - base["J"]) / base["J"]
            print("saddle M=%d ranks=%d: converged, growth %.1f, J %.12g (transcription %.12g, rel %.1e)"
                  % (M, P, s["sensitivity_growth"], s["J"], base["J"], rel))
            check(s["sensitivity_growth"] < 1e3 and rel < 1e-10 and s["newton_iterations"] <= 2,
                  "saddle M=%d: growth %.2e, J rel %.2e, %d Newton iterations" % (M, s["sensitivity_growth"], rel, s["newton_iterations"]))


def t_krylov():
    """-hs_shoot_ksp rankblock: GMRES iterations per Newton step stay bounded by 2 dim (P-1) + 1
    as the number of segments M grows (pendulum dim = 2, kepler dim = 6), and the answer equals
    the direct solve's."""
    for prob, N, Ms, dim in (("pendulum", 320, (20, 80, 320), 2), ("kepler", 160, (10, 40, 160), 6)):
        base, _, _ = run(["-problem", prob, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(Ms[-1])])
        for P in (1, 2, 4):
            per = []
            for M in Ms:
                s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M),
                               "-hs_shoot_ksp", "rankblock"], ranks=P)
                if not (s and s["converged"]):
                    check(False, "%s P=%d M=%d rankblock: %s" % (prob, P, M, s and s["diagnosis"]))
                    continue
                per.append(s["ksp_iterations"] / s["newton_iterations"])
                rel = abs(s["J"] - base["J"]) / abs(base["J"])
                check(rel < 1e-10, "%s P=%d M=%d: J differs from the direct solve by %.2e" % (prob, P, M, rel))
            bound = 2 * dim * (P - 1) + 1
            print("%-9s N=%d ranks=%d: GMRES iterations per Newton step for M = %s: %s (bound %d)"
                  % (prob, N, P, Ms, " ".join("%.1f" % x for x in per), bound))
            check(per and max(per) <= bound, "%s P=%d: %s iterations per Newton step exceed %d" % (prob, P, per, bound))
        # matrix-free operator (PETSc's -snes_mf_operator: J v by differencing the re-marched residual),
        # preconditioned by the assembled Jacobian
        s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(Ms[1]),
                       "-hs_shoot_ksp", "rankblock", "-snes_mf_operator"], ranks=2)
        ok = s and s["converged"] and abs(s["J"] - base["J"]) / abs(base["J"]) < 1e-10
        print("%-9s matrix-free operator, 2 ranks: converged %s, %s Newton, %s GMRES iterations"
              % (prob, s and s["converged"], s and s["newton_iterations"], s and s["ksp_iterations"]))
        check(ok, "%s -snes_mf_operator: %s" % (prob, s and (s["snes_reason"], s["J"], base["J"])))
    # exact matrix-free operator (-hs_shoot_mf): the stored Jacobian blocks applied without a global
    # matrix; Newton must take the same number of iterations as with the assembled Jacobian
    for P in (1, 2, 4):
        a, _, _ = run(["-problem", "kepler", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8"], ranks=P)
        s, _, _ = run(["-problem", "kepler", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8", "-hs_shoot_mf"], ranks=P)
        ok = a and s and s["converged"] and s["newton_iterations"] == a["newton_iterations"] and abs(s["J"] - a["J"]) < 1e-10 * abs(a["J"])
        print("kepler -hs_shoot_mf, %d ranks: %s Newton (assembled: %s), %s GMRES iterations, J rel %.1e"
              % (P, s and s["newton_iterations"], a and a["newton_iterations"], s and s["ksp_iterations"],
                 abs(s["J"] - a["J"]) / abs(a["J"]) if ok else float("nan")))
        check(ok, "-hs_shoot_mf on %d ranks" % P)
    # profiling: -log_view shows the shooting events next to PETSc's linear solve
    _, out, _ = run(["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4", "-log_view"], ranks=2)
    for ev in ("HsShootMarch", "HsShootSens", "HsShootAssembly", "KSPSolve", "SNESSolve"):
        check(re.search(r"^%s\s+\d+" % ev, out, re.M) is not None, "-log_view lacks the event %s" % ev)


def t_saddle_lq():
    """independent analytic value: for xdot = A x + b u, A = [[0,1],[w^2,0]], b = (0,1), the least
    control energy int 1/2 u^2 from x0 = (1,0) to 0 as T -> infinity is 1/2 x0^T P x0 with P the
    stabilizing solution of A^T P + P A - P b b^T P = 0: P = [[2w^3, 2w^2], [2w^2, 2w]], so J = w^3.
    With T = 10 the finite horizon changes this by O(e^{-wT}); the scheme's error is O((w h)^2)
    (observed: round-off). Also exercises -p_omega."""
    for w in (2.0, 4.0):
        for scheme in ("conserving", "direct"):
            s, _, _ = run(["-problem", "saddle", "-p_omega", str(w), "-N", "500", "-hs_scheme", scheme])
            h = 10.0 / 500
            rel = abs(s["J"] / w ** 3 - 1)
            print("saddle omega=%g %-10s J = %.15g, omega^3 = %g, rel %.1e (bound (omega h)^2 = %.1e)"
                  % (w, scheme, s["J"], w ** 3, rel, (w * h) ** 2))
            check(s["converged"] and rel <= (w * h) ** 2, "saddle omega=%g: J = %.12g vs %g" % (w, s["J"], w ** 3))


def t_continuation():
    """-hs_continue: continuation in a problem parameter from a warm start reaches the same solution
    as the direct solve (pendulum: g from 0 to 9.81; transcription and shooting, 2 ranks); several
    names in turn; a failed step is retried with half the step; a fold stops the continuation with
    a diagnosis; bad continuation options are errors."""
    base, _, _ = run(["-problem", "pendulum"])
    for extra in ([], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"]):
        s, out, _ = run(["-problem", "pendulum", "-hs_continue", "g", "-hs_continue_from", "0", "-hs_continue_steps", "4"] + extra,
                        ranks=2)
        steps = re.findall(r"continuation g = (\S+)\s+converged", out)
        rel = abs(s["J"] - base["J"]) / base["J"] if s else 1
        print("continuation %s: steps at g = %s, then 9.81: J rel diff %.1e" % (" ".join(extra) or "transcription", steps, rel))
        check(len(steps) == 4 and s and s["converged"] and rel < 1e-10, "continuation %s: %s" % (extra, out[-400:]))
    # two names in turn: g from 0 (m at 0.5), then m from 0.5 to 1
    s, out, _ = run(["-problem", "pendulum", "-hs_continue", "g,m", "-hs_continue_from", "0,0.5", "-hs_continue_steps", "2,2"])
    seq = re.findall(r"continuation (\w+) = (\S+)\s+converged", out)
    rel = abs(s["J"] - base["J"]) / base["J"] if s else 1
    print("continuation g,m: %s, then m = 1: J rel diff %.1e" % (seq, rel))
    names = [n for n, _ in seq]
    ig = names.index("m") if "m" in names else len(names)
    check(seq and seq[0] == ("g", "0") and seq[ig - 1] == ("g", "9.81") and names[ig:] == ["m"] * (len(names) - ig)
          and len(names) > ig and rel < 1e-10, "continuation g,m: %s" % out[-600:])
    # a step that fails (at most 4 Newton iterations) is retried with half the step
    s, out, _ = run(["-problem", "pendulum", "-hs_continue", "g", "-hs_continue_from", "0", "-hs_continue_steps", "1",
                     "-snes_max_it", "6"], expect_rc=None)
    retries = out.count("retrying with half the step")
    rel = abs(s["J"] - base["J"]) / base["J"] if s else 1
    print("continuation g in 1 step with -snes_max_it 6: %d retries with half the step, J rel diff %.1e" % (retries, rel))
    check(retries >= 1 and s and s["converged"] and rel < 1e-10, "continuation with retries: " + out[-600:])
    # reach: the terminal state from x0; a fold stops it with a diagnosis (pendulum: near reach 0.35)
    s, out, _ = run(["-problem", "pendulum", "-hs_continue", "reach", "-hs_continue_from", "0.9", "-hs_continue_steps", "2"])
    rel = abs(s["J"] - base["J"]) / base["J"] if s else 1
    check(s and s["converged"] and rel < 1e-10 and "continuation reach = 0.95" in out, "reach 0.9..1: " + out[-400:])
    _, out, _ = run(["-problem", "pendulum", "-hs_continue", "reach", "-hs_continue_from", "0", "-hs_continue_steps", "3"],
                    expect_rc=2)  # with the last converged step written (test robustness)
    print("reach from 0: " + ([l for l in out.splitlines() if "fold" in l] or [""])[0])
    check("fold" in out and "1/64" in out, "reach from 0 should stop at a fold: " + out[-400:])
    for args, word in ((["-hs_continue", "gg", "-hs_continue_from", "0"], "gg"), (["-hs_continue", "g"], "hs_continue_from"),
                       (["-hs_continue", "g", "-hs_continue_from", "0", "-hs_continue_steps", "0"], "hs_continue_steps"),
                       (["-hs_continue", "g,m", "-hs_continue_from", "0"], "1 values for 2 names"),
                       (["-hs_continue", "g,m", "-hs_continue_from", "0,1", "-hs_continue_steps", "1,2,3"], "one per name"),
                       (["-hs_continue", "reach", "-hs_continue_from", "1.5"], "[0, 1]"),
                       (["-hs_continue", "g", "-hs_continue_from", "-1"], "outside")):
        _, out, _ = run(args, expect_rc=1)
        check("hamshoot: error:" in out and word in out, "%s: %s" % (args, out[-300:]))


def t_init():
    """-hs_init FILE: a trajectory.csv written by -o is the initial guess (pendulum, kepler):
    the same N and formulation restart at the solution (0 Newton iterations), another N is
    interpolated (grid sequencing: a few iterations, J of that N), shooting takes its segment
    starts from it, 2 ranks; a guess for another problem, a malformed or missing file are errors."""
    with tempfile.TemporaryDirectory() as d:
        a = os.path.join(d, "a")
        s0, _, _ = run(["-problem", "pendulum"], outdir=a)
        f = os.path.join(a, "trajectory.csv")
        s, _, _ = run(["-problem", "pendulum", "-hs_init", f], ranks=2)
        check(s and s["converged"] and s["newton_iterations"] == 0 and abs(s["J"] - s0["J"]) < 1e-12 * s0["J"],
              "-hs_init at the solution: %s" % (s and s["newton_iterations"]))
        for N in ("13", "40"):
            ref, _, _ = run(["-problem", "pendulum", "-N", N])
            s, _, _ = run(["-problem", "pendulum", "-N", N, "-hs_init", f], ranks=2)
            print("-hs_init N = 20 -> %s: %d Newton iterations (naive guess: %d), J rel diff %.1e"
                  % (N, s["newton_iterations"], ref["newton_iterations"], abs(s["J"] - ref["J"]) / ref["J"]))
            check(s["converged"] and s["newton_iterations"] < ref["newton_iterations"]
                  and abs(s["J"] - ref["J"]) < 1e-10 * ref["J"], "-hs_init interpolated to N = %s" % N)
        s, _, _ = run(["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "5", "-hs_init", f],
                      ranks=2)
        check(s and s["converged"] and s["newton_iterations"] <= 1 and abs(s["J"] - s0["J"]) < 1e-10 * s0["J"],
              "-hs_init with shooting")
        k = os.path.join(d, "k")
        k0, _, _ = run(["-problem", "kepler", "-N", "40"], outdir=k)
        s, _, _ = run(["-problem", "kepler", "-N", "80", "-hs_init", os.path.join(k, "trajectory.csv")])
        ref, _, _ = run(["-problem", "kepler", "-N", "80"])
        check(s and ref and s["converged"] and abs(s["J"] - ref["J"]) < 1e-10 * ref["J"]
              and s["newton_iterations"] < ref["newton_iterations"], "-hs_init kepler 40 -> 80")
        bad = os.path.join(d, "bad.csv")
        lines = open(f).read().splitlines()
        open(bad, "w").write("\n".join(lines[:5] + ["0.3,1,2"] + lines[6:]) + "\n")
        bad2 = os.path.join(d, "bad2.csv")
        open(bad2, "w").write("\n".join(lines[:3] + [lines[3].replace(",", ",x", 1)] + lines[4:]) + "\n")
        s, _, _ = run(["-problem", "pendulum", "-hs_init", a])
        check(s and s["converged"] and s["newton_iterations"] == 0, "-hs_init with an output directory")
        for args, word in ((["-problem", "kepler", "-hs_init", f], "lacks the columns q1..p3"),
                           (["-hs_init", bad], "bad.csv:6: expected"),
                           (["-hs_init", bad2], "bad2.csv:4: value 2"),
                           (["-hs_init", os.path.join(d, "none.csv")], "cannot open"),
                           (["-hs_init", os.path.join(d, "a", "summary.json")], "lacks the columns")):
            _, out, _ = run(args, expect_rc=1)
            print("%-40s -> %s" % (" ".join(args)[-40:], out.strip().splitlines()[-1] if out.strip() else ""))
            check("hamshoot: error:" in out and word in out, "%s: %s" % (args, out[-300:]))


def t_ocp_errors():
    """problem files: each defect gives exit 1 and a message 'file:line:column: ...' naming it;
    a good file solves like the built-in problem; -p_NAME works for file parameters."""
    good = """problem: pend
param m: 1
param l: 1
param g: 9.81
coordinates: q
controls: 1
mass: m*l^2
potential: -m*g*l*sin(q)
B: 1
R: 1
T: 3
N: 20
x0: 0, 0
xT: pi/2, 0
"""
    # (replace, by, where: ":line:column:" of the offending character, a word of the message)
    cases = [("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(qq)", ":8:23:", "unknown symbol 'qq'"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q", ":8:24:", "expected ',' or ')'"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sinn(q)", ":8:19:", "unknown function 'sinn'"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin q", ":8:23:", "expected '(' after the function"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q) 2", ":8:26:", "expected an operator"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*atan2(q)", ":8:19:", "takes 2 arguments"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)*t", ":8:26:", "only in running_cost"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)*p_q", ":8:26:", "momenta are not allowed"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)\npotential: 0", ":9:1:", "given twice"),
             ("potential: -m*g*l*sin(q)", "potential: 1/q", ":8:12:", "not finite at the initial state"),
             ("mass: m*l^2", "mass: m*l^2, 1", ":7:7:", "n*n = 1"),
             ("mass: m*l^2", "mass: -1", ":7:7:", "not positive definite"),
             ("mass: m*l^2", "kinetic_energy: 0.5*m*l^2*q_dot^3", ":7:17:", "not quadratic in the velocities"),
             ("mass: m*l^2", "kinetic_energy: 0.5*m*l^2*q_dot^2 + q_dot", ":7:17:", "degree 0 or 1"),
             ("mass: m*l^2", "kinetic_energy: -0.5*q_dot^2", ":7:17:", "not positive definite"),
             ("mass: m*l^2", "mass: m*l^2\nkinetic_energy: 0.5*q_dot^2", ":8:1:", "not both"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)*q_dot", ":8:26:", "only in kinetic_energy"),
             ("param l: 1", "param l: 1\nparam m: 2", ":4:7:", "already used"),
             ("param l: 1", "param l: 1\nparam L: 2", ":4:7:", "differs from the parameter 'l' only in case"),
             ("param l: 1", "param pi: 1", ":3:7:", "reserved"),
             ("param l: 1", "param l: 1 +", ":3:13:", "param l: cannot parse"),
             ("x0: 0, 0", "x0: 0", ":13:5:", "expected 2 entries"),
             ("R: 1", "R: q", ":10:4:", "depends on the coordinate"),
             ("controls: 1", "controls: one", ":6:11:", "controls"),
             ("T: 3", "T: -3", ":11:4:", "positive"),
             ("N: 20", "N: 1", ":12:4:", "N:"),
             ("R: 1", "R: 1\nspeed: 3", ":11:1:", "unknown key 'speed'"),
             ("R: 1", "R 1", ":10:1:", "expected 'key: value'"),
             ("xT: pi/2, 0", "xT: pi/2, 0\nterminal_cost: q^2 + r", ":15:22:", "unknown symbol 'r'"),
             ("param l: 1", "param l: T", ":3:10:", "final time T is not allowed"),
             ("T: 3", "T: 3*T", ":11:6:", "final time T is not allowed"),
             ("T: 3", "T: free", ":11:4:", "needs an initial guess"),
             ("T: 3", "T: 3\nT_max: 4", ":12:1:", "only for a free final time"),
             ("T: 3", "T: free 3\nrunning_cost: t", ":12:15:", "needs an autonomous problem"),
             ("T: 3", "T: free 2\nT_min: 3", ":12:1:", "guess 2 is not in [T_min, T_max] = [3, inf]"),
             ("T: 3", "T: free 3\nu_max: 2*T", ":12:8:", "control bounds are bounds of the direct NLP"),
             ("T: 3", "T: free 2\nT_min: 1\nT_max: 1", ":12:1:", "[T_min, T_max] = [1, 1] is empty")]
    # two degrees of freedom: an asymmetric mass matrix
    two = good.replace("coordinates: q", "coordinates: q, r").replace("mass: m*l^2", "mass: 1, 0.5, 0.4, 1") \
        .replace("B: 1", "B: 1, 0").replace("x0: 0, 0", "x0: 0, 0, 0, 0").replace("xT: pi/2, 0", "xT: pi/2, 0, 0, 0")
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "good.ocp")
        open(f, "w").write(good)
        s, _, _ = run(["-problem", f])
        c, _, _ = run(["-problem", "pendulum"])
        check(s and c and abs(s["J"] - c["J"]) < 1e-10 * c["J"], "file pendulum differs from the built-in one")
        fk = os.path.join(d, "kinetic.ocp")
        open(fk, "w").write(good.replace("mass: m*l^2", "kinetic_energy: 0.5*m*(l*q_dot)^2"))
        sk, _, _ = run(["-problem", fk])
        check(sk and c and abs(sk["J"] - c["J"]) < 1e-10 * c["J"] and sk["state_scheme"] == "greenspan",
              "file pendulum from its kinetic energy differs from the built-in one")
        s2, _, _ = run(["-problem", f, "-p_g", "1.62"])
        c2, _, _ = run(["-problem", "pendulum", "-p_g", "1.62"])
        check(s2 and c2 and abs(s2["J"] - c2["J"]) < 1e-10 * c2["J"] and abs(s2["J"] - s["J"]) > 1, "-p_g on a file problem")
        for old, new, where, word in cases:
            bad = os.path.join(d, "bad.ocp")
            open(bad, "w").write(good.replace(old, new))
            _, out, rc = run(["-problem", bad], expect_rc=1)
            ok = ("bad.ocp" + where) in out and word in out
            print("%-42s -> %s" % (new.replace("\n", " | "), out.strip().splitlines()[-1] if out.strip() else ""))
            check(ok, "%r: message lacks %r / %r: %s" % (new, where, word, out[-300:]))
        bad = os.path.join(d, "bad.ocp")
        open(bad, "w").write(two)
        _, out, rc = run(["-problem", bad], expect_rc=1)
        print("%-42s -> %s" % ("mass: 1, 0.5, 0.4, 1", out.strip().splitlines()[-1] if out.strip() else ""))
        check(":7:7:" in out and "not symmetric" in out, "asymmetric mass: " + out[-300:])
        _, out, _ = run(["-problem", os.path.join(d, "missing.ocp")], expect_rc=1)
        check("cannot open" in out, "missing file: " + out[-200:])


def simulate_pendulum_midpoint(u, T=3.0, m=1.0, l=1.0, g=9.81):
    """independent forward simulation of the pendulum with the implicit midpoint rule
    (q' = p/(m l^2), p' = m g l cos q + u), Newton per step; returns x_N."""
    N = len(u)
    h = T / N
    q, p = 0.0, 0.0
    for k in range(N):
        qn, pn = q, p
        for _ in range(50):
            qm, pm = 0.5 * (q + qn), 0.5 * (p + pn)
            F1 = qn - q - h * pm / (m * l * l)
            F2 = pn - p - h * (m * g * l * math.cos(qm) + u[k])
            a12, a21 = -0.5 * h / (m * l * l), 0.5 * h * m * g * l * math.sin(qm)
            det = 1.0 - a12 * a21
            dq, dp = (F1 - a12 * F2) / det, (F2 - a21 * F1) / det
            qn, pn = qn - dq, pn - dp
            if abs(dq) + abs(dp) < 1e-15:
                break
        q, p = qn, pn
    return q, p


def t_terminal():
    """free terminal states with a terminal cost (tests/data/pendulum_free.ocp, phi = w/2 ((q-pi/2)^2 + p^2)).
    Independent check of the discrete transversality condition: with midpoint states and trapezoidal
    costates the discrete necessary conditions are exactly the KKT conditions of
    min_u J^d(u) = h sum u_k^2/2 + phi(x_N(u)); so J^d recomputed by an independent Python
    simulation must equal hamshoot's, and its finite-difference gradient in every u_k must vanish
    (measured ~1e-8; a terminal condition missing its O(h) terms gives ~1e-2). (The stationary point
    Newton finds from the naive guess is not the global minimum -- J(0) is lower -- which the
    necessary conditions allow.) The conserving scheme keeps H^d constant with the free end; the
    Jacobian including the transversality rows passes -snes_test_jacobian, in transcription and in
    multiple shooting."""
    f = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pendulum_free.ocp")
    s, _, _ = run(["-problem", f, "-hs_scheme", "direct"])
    check(s and s["converged"], "pendulum_free direct did not converge")
    if s and s["converged"]:
        u = [float(r["u1"]) for r in s["_rows"][:-1]]
        h, w = 3.0 / len(u), 10.0

        def J(v):
            q, p = simulate_pendulum_midpoint(v)
            return h * sum(0.5 * x * x for x in v) + 0.5 * w * ((q - math.pi / 2) ** 2 + p * p)
        eps = 1e-6
        grad = [(J(u[:k] + [u[k] + eps] + u[k + 1:]) - J(u[:k] + [u[k] - eps] + u[k + 1:])) / (2 * eps) for k in range(len(u))]
        Jp = J(u)
        print("pendulum_free direct: J hamshoot %.12g, J independent %.12g, max |dJ/du_k| = %.1e, J(u=0) = %.6g"
              % (s["J"], Jp, max(abs(x) for x in grad), J([0.0] * len(u))))
        check(abs(Jp - s["J"]) <= 1e-10 * abs(Jp), "J differs: %.12g vs %.12g" % (Jp, s["J"]))
        check(max(abs(x) for x in grad) <= 1e-6, "the solution is not stationary: max |dJ/du| = %.2e" % max(abs(x) for x in grad))
    c, _, _ = run(["-problem", f, "-hs_scheme", "conserving"])
    ok = c and c["converged"] and c["H_spread"] <= 1e-10 * max(1, abs(c["H_mean"]))
    print("pendulum_free conserving: converged %s, H_spread %.1e, J %.10g" % (c and c["converged"], c and c["H_spread"], c and c["J"]))
    check(ok, "pendulum_free conserving: %s" % str(c and (c["converged"], c["H_spread"])))
    for sch in (["-hs_scheme", "direct"], ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"], ["-hs_scheme", "conserving"]):
        _, out, _ = run(["-problem", f, "-N", "8", "-snes_test_jacobian"] + sch, expect_rc=None)
        ratios = jacobian_ratios(out)
        print("pendulum_free %s: max ||J-Jfd||/||J|| = %.1e over %d Jacobians" % (" ".join(sch), max(ratios) if ratios else float("nan"), len(ratios)))
        check(ratios and max(ratios) < 1e-5, "pendulum_free %s Jacobian: %s" % (sch, ratios))
    # multiple shooting with the free end: from the naive guess it finds another stationary point
    # (here the better one, J < J(u=0)), checked independently like the transcription's; from the
    # transcription solution it reproduces that one (2 ranks)
    h, w = 3.0 / 20, 10.0

    def Jind(v):
        q, p = simulate_pendulum_midpoint(v)
        return h * sum(0.5 * x * x for x in v) + 0.5 * w * ((q - math.pi / 2) ** 2 + p * p)
    m, _, _ = run(["-problem", f, "-hs_scheme", "direct", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
    if m and m["converged"]:
        u = [float(r["u1"]) for r in m["_rows"][:-1]]
        eps = 1e-6
        grad = [(Jind(u[:k] + [u[k] + eps] + u[k + 1:]) - Jind(u[:k] + [u[k] - eps] + u[k + 1:])) / (2 * eps) for k in range(20)]
        print("pendulum_free shooting M=4: J hamshoot %.12g, independent %.12g, max |dJ/du_k| = %.1e, J(u=0) = %.6g"
              % (m["J"], Jind(u), max(abs(x) for x in grad), Jind([0.0] * 20)))
        check(abs(Jind(u) - m["J"]) <= 1e-10 * abs(m["J"]) and max(abs(x) for x in grad) <= 1e-6, "shooting free end not stationary")
    else:
        check(False, "pendulum_free shooting did not converge")
    m, _, _ = run(["-problem", f, "-hs_scheme", "direct", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4",
                   "-hs_shoot_init", "transcription"], ranks=2)
    check(m and s and m["converged"] and abs(m["J"] - s["J"]) <= 1e-10 * abs(s["J"]) and m["newton_iterations"] <= 2,
          "shooting from the transcription solution: %s" % str(m and (m["J"], m["newton_iterations"])))
    _, out, _ = run(["-problem", f, "-N", "8", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "3", "-snes_test_jacobian"], expect_rc=None)
    ratios = jacobian_ratios(out)
    check(ratios and max(ratios) < 1e-5, "shooting free-end Jacobian: %s" % ratios)


def ncar_target(t):
    """y(t) of DESIGN.md section 4, problem 5 (an independent implementation:
    the polynomial in Horner form, which avoids the cancellation of its terms)."""
    if t < 1:
        return 0.5
    if t > 3:
        return 2.5
    s = 0.5 * (t - 1)
    P = 0.0
    for c in (924, -6006, 16380, -24024, 20020, -9009, 1716):
        P = P * s + c
    return 0.5 + 2 * P * s ** 7


def ncar_hamiltonian_checks(rows):
    """From trajectory.csv alone: the spread of H^d over the intervals inside
    [0,1] and inside [3,4], and max_k |H^d_{k+1/2} - H^d_{k-1/2} + Dt_k/2| with
    Dt_k = 1/2 [l(x_{k-1},t_{k+1}) - l(x_{k-1},t_{k-1}) + l(x_{k+1},t_{k+1}) - l(x_{k+1},t_{k-1})],
    l(x, t) = 1/2 (q1 - y(t))^2: the change of H^d that the conserving scheme's
    time-split discrete gradient of l predicts (docs/time-dependent-cost.md)."""
    t = [float(r["t"]) for r in rows]
    q1 = [float(r["q1"]) for r in rows]
    H = [float(r["H"]) for r in rows[:-1]]
    ell = lambda q, tt: 0.5 * (q - ncar_target(tt)) ** 2
    first = [H[k] for k in range(len(H)) if t[k + 1] <= 1 + 1e-12]
    last = [H[k] for k in range(len(H)) if t[k] >= 3 - 1e-12]
    bal = 0.0
    for k in range(1, len(H)):
        Dt = 0.5 * (ell(q1[k - 1], t[k + 1]) - ell(q1[k - 1], t[k - 1]) + ell(q1[k + 1], t[k + 1]) - ell(q1[k + 1], t[k - 1]))
        bal = max(bal, abs(H[k] - H[k - 1] + 0.5 * Dt))
    scale = max(1.0, max(abs(h) for h in H))
    return (max(first) - min(first)) / scale, (max(last) - min(last)) / scale, bal / scale, len(first), len(last)


def t_ncar():
    """ncar, a non-autonomous problem (DESIGN.md section 4.5; issue 4):
    1. conserving scheme, 2 and 3 cars (beta = 1e-5, gamma = 1, T = 4, h = 0.01): H^d
       constant to round-off on the intervals inside [0,1] and [3,4], where the target
       rests, and elsewhere the discrete balance dH/dt = -dl/dt recomputed from the
       trajectory (above) holds to round-off; the direct scheme misses that balance by
       far more than round-off (it is not built to keep it);
    2. J converges at order 2 (N = 100..1600, successive differences), both schemes;
    3. beta = 1e-9 (state-costate growth ~ e^{10t}): single shooting is diagnosed and
       fails, 40 segments on 2 ranks converge to the transcription's J;
    4. -p_cars must be a whole number >= 2."""
    for cars in ("2", "3"):
        s, _, _ = run(["-problem", "ncar", "-p_cars", cars], ranks=2)
        if not s:
            check(False, "ncar cars=%s: no summary" % cars)
            continue
        check(s["converged"], "ncar cars=%s converged" % cars)
        # trajectory.csv: t, q, p, E_minus_W; intervals.csv: k, t_mid, u, lambda, H
        check(len(s["_rows"][0]) == 6 + 4 * int(cars), "ncar cars=%s: csv columns t, q, p, E_minus_W, k, t_mid, u, lambda, H" % cars)
        a, b, bal, na, nb = ncar_hamiltonian_checks(s["_rows"])
        print("ncar %s cars conserving: H^d spread on [0,1] (%d intervals) %.1e, on [3,4] (%d) %.1e; "
              "balance residual %.1e (summary H_balance %.1e); H^d spread overall %.3f"
              % (cars, na, a, nb, b, bal, s["H_balance"], s["H_spread"]))
        check(na == 100 and nb == 100, "ncar: 100 intervals in each rest phase")
        check(a <= 1e-10 and b <= 1e-10, "ncar cars=%s: H^d not constant where the target rests (%.1e, %.1e)" % (cars, a, b))
        check(bal <= 1e-10, "ncar cars=%s: discrete balance dH/dt = -dl/dt violated (%.1e)" % (cars, bal))
        check(s["H_balance"] <= 1e-10 * max(1, abs(s["H_max"]), abs(s["H_min"])), "ncar: H_balance in the summary")
        check(s["H_spread"] > 1e-3, "ncar: H^d must change on [1,3] (spread %.1e)" % s["H_spread"])
        s, _, _ = run(["-problem", "ncar", "-p_cars", cars, "-hs_scheme", "direct"])
        if s:
            a, b, bal, _, _ = ncar_hamiltonian_checks(s["_rows"])
            print("ncar %s cars direct: balance residual %.1e" % (cars, bal))
            check(bal > 1e-8, "ncar direct: the balance residual should be O(h^3) per node, not round-off (%.1e)" % bal)

    for scheme in ("conserving", "direct"):
        J = []
        for N in (100, 200, 400, 800, 1600):
            s, _, _ = run(["-problem", "ncar", "-N", str(N), "-hs_scheme", scheme])
            J.append(s["J"] if s else float("nan"))
        d = [abs(J[i] - J[i + 1]) for i in range(len(J) - 1)]
        orders = [order(d[i], d[i + 1]) for i in range(len(d) - 1)]
        print("ncar %-10s J: %s  observed orders %s" % (scheme, " ".join("%.12f" % j for j in J),
                                                         " ".join("%.2f" % o for o in orders)))
        for o in orders:
            check(abs(o - 2) <= 0.2, "ncar %s: order of J %.2f, expected 2" % (scheme, o))

    s0, _, _ = run(["-problem", "ncar", "-p_beta", "1e-9"], ranks=2)
    s1, out, rc = run(["-problem", "ncar", "-p_beta", "1e-9", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"],
                      expect_rc=2)
    check(s1 is not None and "sensitivity growth" in s1.get("diagnosis", ""), "ncar beta=1e-9: single shooting diagnosis")
    s40, _, _ = run(["-problem", "ncar", "-p_beta", "1e-9", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "40"],
                    ranks=2)
    if s0 and s40:
        rel = abs(s40["J"] - s0["J"]) / abs(s0["J"])
        print("ncar beta=1e-9: transcription J %.12e (MUMPS workspace retries %d), 40 segments J %.12e, rel diff %.1e, "
              "growth per segment %.1e; single shooting: %s"
              % (s0["J"], s0["mumps_retries"], s40["J"], rel, s40["sensitivity_growth"], s1["diagnosis"][:60] if s1 else ""))
        check(s0["converged"] and s40["converged"], "ncar beta=1e-9 converged")
        check(rel < 1e-9, "ncar beta=1e-9: shooting and transcription J differ by %.1e" % rel)
    # the problem files problems/ncar2.ocp, ncar3.ocp (time-dependent running cost through 't',
    # the target through 'let' and min/max) solve like the built-in problem, also with -p_beta
    pdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems")
    for cars, extra in (("2", []), ("3", []), ("2", ["-p_beta", "1e-7"])):
        c, _, _ = run(["-problem", "ncar", "-p_cars", cars] + extra)
        f, _, _ = run(["-problem", os.path.join(pdir, "ncar%s.ocp" % cars)] + extra, ranks=2)
        if c and f:
            rel = abs(f["J"] - c["J"]) / abs(c["J"])
            print("ncar%s.ocp %s: J %.12e, built-in %.12e, rel diff %.1e; H^d balance %.1e"
                  % (cars, " ".join(extra), f["J"], c["J"], rel, f["H_balance"]))
            check(rel < 1e-10, "ncar%s.ocp %s: J differs from the built-in problem by %.1e" % (cars, extra, rel))
            check(f["H_balance"] <= 1e-10 * max(1, abs(f["H_max"]), abs(f["H_min"])), "ncar file: H_balance")
        else:
            check(False, "ncar%s.ocp: no summary" % cars)
    for bad, what in (("2.5", "whole number"), ("1", "outside")):  # any whole number >= 2 is a chain
        _, out, rc = run(["-problem", "ncar", "-p_cars", bad], expect_rc=1)
        check(what in out and "-p_cars" in out, "ncar -p_cars %s: message %r" % (bad, out.strip()[-200:]))


def xcheck_dynamics(prob, outdir, params=()):
    """tests/crosscheck/multibody_dynamics.py on a trajectory: the mechanics rebuilt independently."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crosscheck", "multibody_dynamics.py")
    p = subprocess.run([py, script, prob, os.path.join(outdir, "trajectory.csv"), os.path.join(outdir, "summary.json")]
                       + list(params), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        r = {"status": 1, "output": p.stdout[-500:]}
    keys = [k for k in ("midpoint_residual_q", "midpoint_residual_p", "energy_balance", "boundary", "J_rel_diff") if k in r]
    print("  independent %s check (%s, N = %s): %s" % (prob, r.get("scheme"), r.get("N"),
                                                        ", ".join("%s %.1e" % (k, r[k]) for k in keys)))
    check(p.returncode == 0 and r["status"] == 0, "independent dynamics check of %s failed: %s" % (prob, r))


def t_multibody():
    """The 3-link arm and the crane (DESIGN.md section 4.3, 4.4) solve from a good initial guess.
    Newton from the naive guess does not converge for either (a later issue); here:
    arm: a guess built by continuation (the terminal state moves from x0 at g = 0 -- 'reach' --
         then g to 9.81), then from that solution: the problem file, nearby parameters (g = 9 and
         back), multiple shooting on 2 ranks, grid sequencing N = 80..320 (order 2 of J for both
         schemes, the two extrapolated limits agree);
    crane: the guess is a converged solution at the nearby load mass m = 95 (tests/data/README.md),
         N = 320 (at N = 40 the controls are not resolved); the same checks.
    Each conserving solution keeps H^d and E - W to round-off; an independent rebuild of the
    mechanics (tests/crosscheck/multibody_dynamics.py) confirms the discrete energy balance
    (conserving) and the midpoint state equations (direct) with hamshoot's controls."""
    pdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems")
    ddir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    tmp = tempfile.TemporaryDirectory()
    d = lambda name: os.path.join(tmp.name, name)
    traj = lambda name: os.path.join(tmp.name, name, "trajectory.csv")

    def conserved(s, what):
        scale = max(1.0, abs(s["H_mean"]))
        print("  %s: J %.10g after %d Newton iterations; H^d spread %.1e (rel %.1e), E - W spread %.1e"
              % (what, s["J"], s["newton_iterations"], s["H_spread"], s["H_spread"] / scale, s["energy_work_spread"]))
        check(s["H_spread"] <= 1e-10 * scale, "%s: H^d spread %.2e" % (what, s["H_spread"]))
        check(s["energy_work_spread"] <= 1e-10 * scale, "%s: E - W spread %.2e" % (what, s["energy_work_spread"]))

    def same(a, b, tol, what):
        rel = abs(a["J"] - b["J"]) / abs(b["J"]) if a and b else 1.0
        print("  %s: J %.12g vs %.12g, rel diff %.1e" % (what, a["J"] if a else float("nan"), b["J"], rel))
        check(a is not None and a["converged"] and rel <= tol, "%s: J differs by %.2e" % (what, rel))

    def orders(name, base, Ns, first, scheme, extra=()):
        """J on the grids Ns, each solve started from the previous (interpolated) solution"""
        J, prev = [], first
        for N in Ns:
            s, _, _ = run(["-problem", name, "-N", str(N), "-hs_scheme", scheme, "-hs_init", prev] + list(extra),
                          outdir=d("%s_%s_%d" % (base, scheme, N)))
            J.append(s["J"] if s and s["converged"] else float("nan"))
            prev = traj("%s_%s_%d" % (base, scheme, N))
        dd = [J[i] - J[i + 1] for i in range(len(J) - 1)]
        o = [order(abs(dd[i]), abs(dd[i + 1])) if dd[i] * dd[i + 1] > 0 else float("nan") for i in range(len(dd) - 1)]
        ext = J[-1] - dd[-1] / 3
        print("  %s %-10s J(N = %s) = %s; observed orders %s; extrapolated %.10g"
              % (name, scheme, ",".join(map(str, Ns)), " ".join("%.10g" % j for j in J),
                 " ".join("%.2f" % x for x in o), ext))
        return J, o, ext

    # ---------------------------------------------------------------- arm
    print("manipulator3:")
    A, out, _ = run(["-problem", "manipulator3", "-hs_continue", "reach,g", "-hs_continue_from", "0.05,0",
                     "-hs_continue_steps", "5,1", "-snes_linesearch_type", "l2"], outdir=d("armA"))
    check(A is not None and A["converged"], "arm: continuation did not converge: " + out[-600:])
    if A and A["converged"]:
        conserved(A, "continuation reach (g = 0), then g")
        xcheck_dynamics("manipulator3", d("armA"))
        s, _, _ = run(["-problem", os.path.join(pdir, "manipulator3.ocp"), "-hs_init", traj("armA")])
        same(s, A, 1e-10, "problem file from that solution")
        check(s and s["newton_iterations"] <= 2, "arm file: a converged guess needs <= 2 Newton iterations")
        s9, _, _ = run(["-problem", "manipulator3", "-p_g", "9", "-hs_init", traj("armA")], outdir=d("arm9"))
        check(s9 and s9["converged"] and s9["newton_iterations"] <= 8, "arm g = 9 from the g = 9.81 solution")
        if s9:
            conserved(s9, "nearby parameters g = 9")
        s, _, _ = run(["-problem", "manipulator3", "-hs_init", traj("arm9")])
        same(s, A, 1e-10, "g = 9.81 from the g = 9 solution (the same extremal)")
        s, _, _ = run(["-problem", "manipulator3", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8",
                       "-hs_init", traj("armA")], ranks=2)
        same(s, A, 1e-9, "multiple shooting, 8 segments, 2 ranks")
        Jc, oc, ec = orders("manipulator3", "arm", [40, 80, 160, 320], traj("armA"), "conserving")
        Jd, od, ed = orders("manipulator3", "arm", [40, 80, 160, 320], traj("armA"), "direct")
        for o in oc + od:
            check(abs(o - 2) <= 0.2, "arm: observed order of J %.2f, expected 2" % o)
        rel = abs(ec - ed) / abs(ec)
        print("  extrapolated J: conserving %.10g, direct %.10g, rel diff %.1e" % (ec, ed, rel))
        check(rel < 1e-6, "arm: the schemes' extrapolated J differ by %.1e" % rel)
        xcheck_dynamics("manipulator3", d("arm_direct_80"))

    # -------------------------------------------------------------- crane
    print("crane:")
    C, out, _ = run(["-problem", "crane", "-N", "320", "-hs_init", os.path.join(ddir, "crane_m95_N320.csv")],
                    outdir=d("craneC"))
    check(C is not None and C["converged"] and C["newton_iterations"] <= 15,
          "crane from the m = 95 solution: " + out[-600:])
    if C and C["converged"]:
        conserved(C, "m = 100 from the m = 95 solution")
        xcheck_dynamics("crane", d("craneC"))
        s, _, _ = run(["-problem", os.path.join(pdir, "crane.ocp"), "-N", "320", "-hs_init", traj("craneC")])
        same(s, C, 1e-10, "problem file from that solution")
        s, _, _ = run(["-problem", "crane", "-N", "320", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "32",
                       "-hs_init", traj("craneC")], ranks=2)
        same(s, C, 1e-9, "multiple shooting, 32 segments, 2 ranks")
        Jd, od, ed = orders("crane", "crane", [320, 640, 1280], traj("craneC"), "direct")
        for o in od:
            check(abs(o - 2) <= 0.2, "crane direct: observed order of J %.2f, expected 2" % o)
        Jc, oc, ec = orders("crane", "crane", [640, 1280, 2560], traj("craneC"), "conserving")
        # the conserving J approaches the direct scheme's limit at O(h^2) from N = 640 on
        errs = [abs(j - ed) for j in Jc]
        print("  crane conserving: |J - direct limit| %s" % " ".join("%.2e" % e for e in errs))
        check(all(errs[i] > 2.5 * errs[i + 1] for i in range(len(errs) - 1)),
              "crane conserving: J does not approach the direct limit at order 2: %s" % errs)
        check(errs[-1] / abs(ed) < 1e-6, "crane: conserving at N = 2560 vs direct limit %.1e" % (errs[-1] / abs(ed)))
        xcheck_dynamics("crane", d("crane_direct_640"))
    tmp.cleanup()


def t_crosscheck_ncar(script):
    """ncar (2 and 3 cars, beta = 1e-5, gamma = 1, T = 4) against an independent continuous
    solution (tests/crosscheck/ncar_continuous.py: scipy solve_bvp on the Pontryagin
    conditions, and the Riccati value function of this linear-quadratic problem, which
    agree with each other to <= 1e-7). Richardson extrapolation of the discrete J at
    N = 800, 1600 (both schemes, order 2) must match the continuous J to 1e-7 relative
    (measured ~3e-9 for 2 cars)."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    for cars in ("2", "3"):
        p = subprocess.run([py, script, "--cars", cars], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
        check(p.returncode == 0, "ncar crosscheck script (%s cars) failed: %s" % (cars, p.stdout[-2000:]))
        if p.returncode:
            continue
        Jc = json.loads(p.stdout)["J_riccati"]
        for scheme in ("conserving", "direct"):
            s1, _, _ = run(["-problem", "ncar", "-p_cars", cars, "-N", "800", "-hs_scheme", scheme])
            s2, _, _ = run(["-problem", "ncar", "-p_cars", cars, "-N", "1600", "-hs_scheme", scheme])
            if not (s1 and s2):
                check(False, "ncar %s cars %s: no summary" % (cars, scheme))
                continue
            ext = (4 * s2["J"] - s1["J"]) / 3
            rel, raw = abs(ext - Jc) / abs(Jc), abs(s2["J"] - Jc) / abs(Jc)
            print("ncar %s cars %-10s N=1600 J %.12f extrapolated %.12f continuous %.12f  rel diff %.1e (raw %.1e)"
                  % (cars, scheme, s2["J"], ext, Jc, rel, raw))
            check(rel < 1e-7, "ncar %s cars %s: extrapolated J %.12g vs continuous %.12g" % (cars, scheme, ext, Jc))


def t_bigproblems(ncar_script, chain_file):
    """no size limit on n: ncar with 8 cars (16 state components) and the 20-coordinate planar chain
    (problems/chain2d.ocp, nonlinear springs). Both converge from the default guess; the conserving
    scheme keeps the discrete H^d balance (ncar) or H^d itself (chain) and E - W to round-off; 1 and
    2 ranks give the same J; ncar's Richardson-extrapolated J (N = 800, 1600) matches an independent
    continuous solution (scipy, Pontryagin + Riccati, ncar_continuous.py --cars 8); the chain's
    trajectory keeps E - W constant when E and W are recomputed here from the geometry (springs
    k/2 (|r_i+1 - r_i| - d)^2, unit masses, the force on the last mass), and multiple shooting
    reproduces the transcription's J."""
    res = {}
    for P in (1, 2):
        res[P], _, _ = run(["-problem", "ncar", "-p_cars", "8"], ranks=P)
    s = res[1]
    if not (s and res[2]):
        check(False, "ncar 8 cars: no summary")
    else:
        Hs = max(1, abs(s["H_max"]), abs(s["H_min"]))
        print("ncar 8 cars: J %.12f (2 ranks: rel diff %.1e), H balance %.1e, E-W spread %.1e, %d Newton its"
              % (s["J"], abs(res[2]["J"] - s["J"]) / s["J"], s["H_balance"], s["energy_work_spread"], s["newton_iterations"]))
        check(s["converged"] and res[2]["converged"], "ncar 8 cars converged")
        check(s["H_balance"] <= 1e-10 * Hs, "ncar 8 cars: H balance %.2e" % s["H_balance"])
        check(s["energy_work_spread"] <= 1e-9, "ncar 8 cars: E-W spread %.2e" % s["energy_work_spread"])
        check(abs(res[2]["J"] - s["J"]) <= 1e-12 * abs(s["J"]), "ncar 8 cars: J differs on 2 ranks")
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    p = subprocess.run([py, ncar_script, "--cars", "8", "--tol", "1e-8"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=900)
    check(p.returncode == 0, "ncar crosscheck script (8 cars) failed: %s" % p.stdout[-2000:])
    if p.returncode == 0:
        Jc = json.loads(p.stdout)["J_riccati"]
        s1, _, _ = run(["-problem", "ncar", "-p_cars", "8", "-N", "800"])
        s2, _, _ = run(["-problem", "ncar", "-p_cars", "8", "-N", "1600"], ranks=2)
        if s1 and s2:
            ext = (4 * s2["J"] - s1["J"]) / 3
            rel = abs(ext - Jc) / abs(Jc)
            print("ncar 8 cars: extrapolated J %.12f, continuous %.12f, rel diff %.1e" % (ext, Jc, rel))
            check(rel < 1e-7, "ncar 8 cars: extrapolated J %.12g vs continuous %.12g" % (ext, Jc))
        else:
            check(False, "ncar 8 cars N = 800/1600: no summary")
    # the 20-coordinate chain
    ch = {}
    for P in (1, 2):
        ch[P], _, _ = run(["-problem", chain_file], ranks=P)
    sh, _, _ = run(["-problem", chain_file, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
    s = ch[1]
    if not (s and ch[2] and sh):
        check(False, "chain2d: no summary")
        return
    rel = s["H_spread"] / max(1, abs(s["H_mean"]))
    print("chain2d (20 coordinates): J %.12f, H^d spread rel %.1e, E-W spread %.1e; 2 ranks rel diff %.1e; "
          "shooting (4 segments) rel diff %.1e" % (s["J"], rel, s["energy_work_spread"],
                                                    abs(ch[2]["J"] - s["J"]) / s["J"], abs(sh["J"] - s["J"]) / s["J"]))
    check(s["converged"] and ch[2]["converged"] and sh["converged"], "chain2d converged")
    check(rel <= 1e-10, "chain2d: H^d spread %.2e" % rel)
    check(s["energy_work_spread"] <= 1e-10 * max(1, abs(s["H_mean"])), "chain2d: E-W spread")
    check(abs(ch[2]["J"] - s["J"]) <= 1e-12 * s["J"], "chain2d: J differs on 2 ranks")
    check(abs(sh["J"] - s["J"]) <= 1e-10 * s["J"], "chain2d: shooting J differs from transcription")
    # independent E - W from the geometry (parameters of problems/chain2d.ocp: m = 1, k = 10, d = 1)
    K, k, d = 10, 10.0, 1.0
    rows = s["_rows"]
    def energy(r):  # the file's coordinate names x1..x10, y1..y10 (columns q_x1, p_x1, ...)
        x = [float(r["q_x%d" % (i + 1)]) for i in range(K)]
        y = [float(r["q_y%d" % (i + 1)]) for i in range(K)]
        E = 0.5 * sum(float(r["p_%s%d" % (c, i + 1)]) ** 2 for c in "xy" for i in range(K))
        px, py = 0.0, 0.0
        for i in range(K):
            E += 0.5 * k * (math.hypot(x[i] - px, y[i] - py) - d) ** 2
            px, py = x[i], y[i]
        return E
    W, ew = 0.0, []
    for j, r in enumerate(rows):
        ew.append(energy(r) - W)
        if j + 1 < len(rows):
            nx = rows[j + 1]
            W += (float(nx["q_x%d" % K]) - float(r["q_x%d" % K])) * float(r["u1"]) + \
                (float(nx["q_y%d" % K]) - float(r["q_y%d" % K])) * float(r["u2"])
    spread = max(ew) - min(ew)
    work = abs(W)
    print("chain2d: E - W recomputed from the geometry: spread %.1e (work done %.3g)" % (spread, work))
    check(work > 1e-2 and spread <= 1e-10 * (1 + work), "chain2d: independent E - W spread %.2e" % spread)


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def max_rel_rows(ra, rb, cols):
    """max over rows and the given columns of |a - b| / max(1, max |b|) (interval columns: skip empty)."""
    worst = 0.0
    for c in cols:
        scale = max([1.0] + [abs(float(r[c])) for r in rb if r[c] != ""])
        for a, b in zip(ra, rb):
            if a[c] != "" and b[c] != "":
                worst = max(worst, abs(float(a[c]) - float(b[c])) / scale)
    return worst


def t_ipopt():
    """The direct NLP solved by IPOPT equals Newton's solution of the kkt/trapezoidal equations of the
    same state scheme (J, states, controls, costates to 1e-8 relative) on pendulum, kepler and the
    3-link arm; the mapped multipliers satisfy the kkt costate equations (|F| of the transcription's
    residual at IPOPT's solution, at round-off); 2 ranks give the same answer (IPOPT runs on rank 0);
    a bounded pendulum is solved with the bound active on some intervals and refused by the indirect
    solver; -hs_direct_solver ipopt with shooting, bad IPOPT options are clear errors."""
    pdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems")
    cases = [("pendulum", ["-N", "40", "-hs_scheme", "direct"]),
             ("pendulum", ["-N", "40", "-hs_state_scheme", "greenspan", "-hs_costate_scheme", "kkt"]),
             ("kepler", ["-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]),
             ("kepler", ["-N", "40", "-hs_scheme", "direct"]),
             ("manipulator3", ["-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])]
    for prob, args in cases:
        ip, out, _ = run(["-problem", prob, "-hs_direct_solver", "ipopt"] + args)
        if ip is None:
            check(False, "%s %s: IPOPT wrote no summary: %s" % (prob, args, out[-400:]))
            continue
        # Newton on the kkt equations; the arm does not converge from the naive guess, so it starts from
        # IPOPT's states with lambda = 0 (the costates are then Newton's own)
        with tempfile.TemporaryDirectory() as tmp:
            guess = []
            if prob == "manipulator3":
                g = os.path.join(tmp, "g.csv")
                with open(g, "w") as f:
                    w = csv.DictWriter(f, fieldnames=list(ip["_rows"][0].keys()))
                    w.writeheader()
                    for r in ip["_rows"]:
                        w.writerow({k: (v if not k.startswith("lambda") or v == "" else "0") for k, v in r.items()})
                guess = ["-hs_init", g, "-snes_linesearch_type", "l2"]
            kk, out2, _ = run(["-problem", prob] + args + guess)
        n = sum(1 for k in ip["_rows"][0] if k.startswith("q"))
        cols_x = ["q%d" % (i + 1) for i in range(n)] + ["p%d" % (i + 1) for i in range(n)]
        cols_u = [k for k in ip["_rows"][0] if k.startswith("u")]
        cols_l = [k for k in ip["_rows"][0] if k.startswith("lambda")]
        dJ = rel(ip["J"], kk["J"]) if kk else 1
        dx = max_rel_rows(ip["_rows"], kk["_rows"], cols_x) if kk else 1
        du = max_rel_rows(ip["_rows"], kk["_rows"], cols_u) if kk else 1
        dl = max_rel_rows(ip["_rows"], kk["_rows"], cols_l) if kk else 1
        print("%-12s %-40s IPOPT %d its, |F_kkt| %.1e; vs Newton: J %.1e x %.1e u %.1e lambda %.1e"
              % (prob, " ".join(args), ip["newton_iterations"], ip["residual_norm"], dJ, dx, du, dl))
        check(ip["converged"] and ip["bvp_type"] == "ipopt" and ip["solver_status"].startswith("Solve"),
              "%s: IPOPT did not converge: %s" % (prob, ip["solver_status"]))
        check(kk is not None and kk["converged"], "%s: Newton on the kkt equations did not converge" % prob)
        check(max(dJ, dx, du, dl) <= 1e-8, "%s %s: IPOPT and kkt differ: %.2e %.2e %.2e %.2e" % (prob, args, dJ, dx, du, dl))
        # the multipliers satisfy the kkt costate equations: the transcription residual at round-off
        lmax = max(abs(float(r[c])) for r in ip["_rows"] for c in cols_l if r[c] != "")
        check(ip["residual_norm"] <= 1e-9 * max(1, lmax), "%s: kkt residual at IPOPT's solution %.2e" % (prob, ip["residual_norm"]))
    # 2 ranks: the same solution
    a, _, _ = run(["-problem", "kepler", "-N", "40", "-hs_bvp_type", "ipopt"])
    b, _, _ = run(["-problem", "kepler", "-N", "40", "-hs_bvp_type", "ipopt"], ranks=2)
    check(a and b and b["ranks"] == 2 and rel(a["J"], b["J"]) < 1e-13 and
          max_rel_rows(a["_rows"], b["_rows"], ["q1", "lambda1", "u1"]) < 1e-12, "ipopt on 2 ranks differs from 1 rank")
    # control bounds: active on some intervals, u within them, refused by the indirect solver
    bfile = os.path.join(pdir, "pendulum_bounded.ocp")
    for ranks in (1, 2):
        s, out, _ = run(["-problem", bfile, "-hs_scheme", "direct", "-hs_direct_solver", "ipopt"], ranks=ranks)
        us = [float(r["u1"]) for r in s["_rows"] if r["u1"] != ""] if s else []
        active = sum(1 for u in us if abs(abs(u) - 2.5) <= 1e-7)
        print("bounded pendulum (|u| <= 2.5), %d rank(s): %d of %d intervals at the bound, max |u| %.9f"
              % (ranks, active, len(us), max(abs(u) for u in us) if us else -1))
        check(s and s["converged"] and active >= 3 and max(abs(u) for u in us) <= 2.5 + 1e-7,
              "bounded pendulum: bound not active or violated: %s" % (out[-300:]))
    un, _, _ = run(["-problem", "pendulum", "-N", "40", "-hs_scheme", "direct"])
    check(un and max(abs(float(r["u1"])) for r in un["_rows"] if r["u1"] != "") > 2.6, "the unbounded optimum must exceed the bound")
    check(s and un and s["J"] > un["J"], "the bounded optimum must cost more than the unbounded one")
    for args, msg in [([ "-problem", bfile], "do not support control bounds"),
                      (["-problem", bfile, "-hs_scheme", "direct"], "do not support control bounds"),
                      (["-problem", "kepler", "-hs_scheme", "direct", "-hs_direct_solver", "ipopt", "-hs_bvp_type", "shooting"], "cannot be combined"),
                      (["-problem", "kepler", "-hs_bvp_type", "ipopt", "-hs_ipopt_ordering", "foo"], "unknown -hs_ipopt_ordering"),
                      (["-problem", "kepler", "-hs_bvp_type", "ipopt", "-hs_costate_scheme", "conserving"], "KKT conditions"),
                      (["-problem", bfile, "-hs_bvp_type", "ipopt", "-p_umax", "1"], None)]:
        s, out, rc = run(args, expect_rc=None)
        if msg:
            check(rc == 1 and msg in out, "%s: expected exit 1 with '%s', got %d: %s" % (" ".join(args), msg, rc, out[-300:]))
        else:  # too weak a bound: IPOPT says infeasible, exit 2 with converged false
            check(rc == 2 and s and not s["converged"] and "Infeasible" in s["solver_status"],
                  "umax = 1: expected an infeasible NLP, got %d %s" % (rc, s and s["solver_status"]))


def t_compare():
    """-hs_compare on the pendulum (1 and 2 ranks): the indirect H^d spread at round-off, the direct one
    >= 1e-2; compare.json complete and consistent with the two summaries; four non-empty PNGs and the
    gnuplot script; with -hs_scheme direct both sides solve the same discrete problem (IPOPT against
    Newton): differences at round-off."""
    for ranks in (1, 2):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "cmp")
            cmd = [HAMSHOOT, "-problem", "pendulum", "-N", "40", "-hs_compare", "-o", d, "-quiet"]
            if ranks > 1:
                cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
            p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            print(p.stdout)
            check(p.returncode == 0, "-hs_compare exit %d" % p.returncode)
            try:
                with open(os.path.join(d, "compare.json")) as f:
                    c = json.load(f)
            except (OSError, ValueError) as e:
                check(False, "compare.json: %s" % e)
                continue
            keys = ["indirect", "direct", "max_abs_dq", "max_abs_dp", "max_abs_du", "max_abs_dlambda",
                    "wall_time_indirect_s", "wall_time_direct_s", "plots"]
            check(all(k in c for k in keys), "compare.json lacks %s" % [k for k in keys if k not in c])
            i, di = c["indirect"], c["direct"]
            check(i["converged"] and di["converged"] and i["state_scheme"] == di["state_scheme"] and i["N"] == di["N"],
                  "both converged, same state scheme and grid")
            check(i["H_spread"] <= 1e-10 * max(1, abs(i["H_mean"])), "indirect H^d spread %.2e" % i["H_spread"])
            check(di["H_spread"] >= 1e-2, "direct H^d spread %.2e should be >= 1e-2" % di["H_spread"])
            check(di["bvp_type"] == "ipopt" and di["costate_scheme"] == "kkt", "direct side: IPOPT with kkt costates")
            check(0 < c["max_abs_dq"] < 0.05 and 0 < c["max_abs_du"] < 0.2, "differences O(h^2): %s" % c["max_abs_dq"])
            for sub in ("indirect", "direct"):
                with open(os.path.join(d, sub, "summary.json")) as f:
                    check(json.load(f)["J"] == c[sub]["J"], "%s/summary.json and compare.json agree" % sub)
            for png in c["plots"] + ["compare.gp", "series.csv"]:
                path = os.path.join(d, png)
                check(os.path.exists(path) and os.path.getsize(path) > 1000 or png == "series.csv" and os.path.exists(path),
                      "%s missing or empty" % png)
            check(len(c["plots"]) >= 3 and all(open(os.path.join(d, p_), "rb").read(8) == b"\x89PNG\r\n\x1a\n" for p_ in c["plots"]),
                  "plots are PNG files")
    s, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_scheme", "direct", "-hs_compare"])
    m = re.search(r"max \|dq\| (\S+)\s+\|dp\| (\S+)\s+\|du\| (\S+)\s+\|dlambda\| (\S+)", out)
    check(m is not None and max(float(x) for x in m.groups()) < 1e-9,
          "-hs_scheme direct -hs_compare: IPOPT and Newton should agree: %s" % str(m and m.groups()))


def t_direct_guess():
    """-hs_initial_guess direct: the 3-link arm (N = 40) and the crane (default N) converge from the default
    guess with no other option, by transcription (the arm also by shooting on 2 ranks), to the extremals
    known from continuation (arm J^d = 3988023.913, README) or one of the crane's known two
    (83248.91 / 83281.23 at N = 320); the homotopy is exercised by the arm with Newton cut to 2
    iterations (it needs 3 from the direct guess): it reaches the same extremal in smaller steps."""
    s, out, _ = run(["-problem", "manipulator3", "-N", "40", "-hs_initial_guess", "direct"])
    check(s and s["converged"] and rel(s["J"], 3988023.913) < 1e-9 and s["H_spread"] <= 1e-10 * abs(s["H_mean"]),
          "arm from the direct guess: %s" % str(s and (s["converged"], s["J"])))
    check(s and s["initial_guess"].startswith("direct solution (ipopt"), "summary records the guess: %s" % (s and s["initial_guess"]))
    s, out, _ = run(["-problem", "manipulator3", "-N", "40", "-hs_initial_guess", "direct", "-hs_bvp_type", "shooting",
                     "-hs_shoot_segments", "8"], ranks=2)
    check(s and s["converged"] and rel(s["J"], 3988023.913) < 1e-9, "arm by shooting from the direct guess")
    s, out, _ = run(["-problem", "crane", "-hs_initial_guess", "direct"])
    print("crane: N = %s, J^d = %s, %s" % (s and s["N"], s and s["J"], s and s["initial_guess"]))
    check(s and s["converged"] and s["N"] == 320 and min(rel(s["J"], 83248.91038), rel(s["J"], 83281.23389)) < 1e-8,
          "crane from the direct guess: %s" % str(s and (s["converged"], s["J"])))
    # homotopy: with Newton limited to 2 iterations the jump from the kkt to the conserving costates
    # fails; the homotopy in small steps succeeds (each step needs few iterations)
    s, out, _ = run(["-problem", "manipulator3", "-N", "40", "-hs_initial_guess", "direct", "-snes_max_it", "2"],
                    expect_rc=None)
    print("arm, Newton limited to 2 iterations (3 needed from the direct guess): %s" % (s and s["initial_guess"]))
    check(s and "homotopy" in s["initial_guess"] and s["converged"] and rel(s["J"], 3988023.913) < 1e-9,
          "homotopy from the direct costates: %s" % str(s and (s["converged"], s["initial_guess"])))


def rank_pids(parent):
    """PIDs of the processes whose parent is `parent` (the ranks that mpirun started)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                if int(st[st.rindex(")") + 2:].split()[1]) == parent:
                    pids.append(int(d))
            except (OSError, ValueError):
                pass
    return pids


def run_killed(args, ranks, wait_for, count=1, outdir=None):
    """Starts hamshoot on `ranks` ranks, sends SIGTERM to every rank (as a batch system does at its
    time limit) once `wait_for` has appeared `count` times in the output; returns (output, rc)."""
    import signal
    import time
    cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks), HAMSHOOT] + args + (["-o", outdir] if outdir else [])
    p = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, seen, t0 = [], 0, time.time()
    for line in p.stdout:
        out.append(line)
        seen += wait_for in line
        if seen == count:
            for pid in rank_pids(p.pid):
                os.kill(pid, signal.SIGTERM)
            seen += 1
        if time.time() - t0 > 300:
            p.kill()
    p.wait(timeout=300)
    return "".join(out), p.returncode


def t_checkpoint():
    """SIGTERM stops every rank after the same Newton iteration with a checkpoint (exit 3), the previous
    output stays byte for byte (a continuation's: replaced by its last converged step, marked as such),
    and -hs_restart reaches the uninterrupted run's answer: transcription,
    shooting (2 ranks, resumed on 1 rank and on 2) and a continuation; periodic checkpoints; bad restarts."""
    cases = [("transcription", ["-problem", "kepler", "-N", "20000"], "Newton  1", 1, [2]),
             ("shooting", ["-problem", "kepler", "-N", "20000", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "2000"],
              "Newton  1", 1, [2, 1]),
             ("continuation", ["-problem", "pendulum", "-N", "40000", "-hs_continue", "g", "-hs_continue_from", "5",
                               "-hs_continue_steps", "6"], "continuation g", 2, [2])]
    for name, args, wait_for, count, resume_ranks in cases:
        with tempfile.TemporaryDirectory() as d:
            ref, out = os.path.join(d, "ref"), os.path.join(d, "out")
            r, _, _ = run(args, ranks=2, outdir=ref)
            # a previous complete output in out: the interrupted run must leave it as it is
            run(["-problem", "pendulum", "-N", "20"], outdir=out)
            before = {f: open(os.path.join(out, f), "rb").read() for f in ("summary.json", "trajectory.csv", "intervals.csv")}
            text, rc = run_killed(args, 2, wait_for, count, outdir=out)
            print(name, [l for l in text.splitlines() if l.startswith("hamshoot: interrupted")])
            check(rc != 0 and "hamshoot: interrupted: signal received; stopped after Newton iteration" in text,
                  "%s: SIGTERM did not stop with a checkpoint (rc %d): %s" % (name, rc, text[-500:]))
            after = {f: open(os.path.join(out, f), "rb").read() for f in ("summary.json", "trajectory.csv", "intervals.csv")}
            if name != "continuation":
                check(before == after, "%s: the interrupted run changed the previous output" % name)
            else:  # every converged step was written as it converged: out holds the last one, marked as such
                last = json.loads(after["summary.json"])
                ci = last.get("continuation") or {}
                gs = [float(v) for v in re.findall(r"continuation g = +([0-9.eE+-]+) +converged", text)]
                print("continuation: out holds g = %s (converged steps printed: %s)" % (ci.get("value"), gs))
                check(last["converged"] and ci.get("reached") is False and gs and abs(ci["value"] - gs[-1]) <= 1e-5 * abs(gs[-1])
                      and last["N"] == 40000 and len(after["trajectory.csv"].splitlines()) == 40002,
                      "continuation: the interrupted run's output is not its last converged step: %s vs %s" % (ci, gs))
            check(not [f for f in os.listdir(out) if f.startswith(".")], "%s: temporary files left: %s" % (name, os.listdir(out)))
            ck = os.path.join(out, "checkpoint")
            meta = json.load(open(os.path.join(ck, "checkpoint.json")))
            check(meta["format"] == "hamshoot-checkpoint-1" and meta["newton_iteration"] >= (name != "continuation"),
                  "%s: checkpoint %s" % (name, meta))
            check((meta["continuation"] is not None) == (name == "continuation"), "%s: continuation state %s" % (name, meta))
            for nr in resume_ranks:
                s, text, rc = run(args + ["-hs_restart", ck], ranks=nr, outdir=os.path.join(d, "res%d" % nr))
                ok = s and r and s["converged"] and abs(s["J"] - r["J"]) <= 1e-10 * abs(r["J"])
                dx = max(abs(float(a[c]) - float(b[c])) for a, b in zip(s["_rows"], r["_rows"]) for c in ("q1", "p1")) if ok else 1
                print("%s resumed on %d ranks: J %.15g (uninterrupted %.15g), max |dq|,|dp| %.2e, %s" %
                      (name, nr, s and s["J"], r and r["J"], dx, s and s["initial_guess"]))
                check(ok and dx < 1e-8, "%s: resumed on %d ranks differs from the uninterrupted run" % (name, nr))
                check(s and s["initial_guess"] == "restarted from a checkpoint", "%s: initial_guess" % name)
            # a checkpoint of another configuration is refused with the reason
            _, text, _ = run(args[:2] + ["-N", "400", "-hs_restart", ck], expect_rc=1)
            check("-hs_restart" in text and "N = " in text, "%s: restart with another N: %s" % (name, text[-300:]))
    with tempfile.TemporaryDirectory() as d:
        ck = os.path.join(d, "ck")
        # periodic: every 2 Newton iterations (the last one written at iteration 2 of 3), every 1e-6 s (shorter
        # than any iteration, so one at every iteration but the last; 0.001 s was not, once kepler's
        # iterations at N = 200 took about 1 ms)
        s, _, _ = run(["-problem", "kepler", "-N", "200", "-snes_max_it", "3", "-hs_strategy", "newton", "-hs_checkpoint", ck,
                       "-hs_checkpoint_every", "2"], expect_rc=2)
        meta = json.load(open(os.path.join(ck, "checkpoint.json")))
        check(meta["newton_iteration"] == 2 and meta["N"] == 200, "-hs_checkpoint_every 2: %s" % meta)
        s, _, _ = run(["-problem", "kepler", "-N", "200", "-hs_checkpoint", ck, "-hs_checkpoint_every", "1e-6s"])
        meta = json.load(open(os.path.join(ck, "checkpoint.json")))
        check(s and meta["newton_iteration"] == s["newton_iterations"] - 1 and not os.path.exists(ck + ".tmp"),
              "-hs_checkpoint_every 1e-6s: %s" % meta)
        # resuming from the last periodic checkpoint takes the remaining iteration(s) only
        r, _, _ = run(["-problem", "kepler", "-N", "200", "-hs_restart", ck])
        check(r and s and r["newton_iterations"] <= 2 and abs(r["J"] - s["J"]) <= 1e-12 * abs(s["J"]),
              "resume after periodic checkpoint: %s iterations" % (r and r["newton_iterations"]))
        open(os.path.join(ck, "checkpoint.json"), "w").write("{}")
        _, text, _ = run(["-problem", "kepler", "-N", "200", "-hs_restart", ck], expect_rc=1)
        check("not a hamshoot checkpoint" in text, "corrupt checkpoint: " + text[-300:])


def t_reliability():
    """The defects of issue 13, each with the command that showed it: clear message and exit 1 (or the
    right answer), no hang, no crash, on 2 ranks where ranks matter."""
    P = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems")
    pend = open(os.path.join(P, "pendulum.ocp")).read()

    def err(args, words, ranks=1, what=None):
        _, text, rc = run(args, ranks=ranks, expect_rc=1)
        last = [l for l in text.splitlines() if l.startswith("hamshoot: error")]
        print("%-60s -> %s" % ((what or " ".join(args))[:60], last[0][:150] if last else text[-150:]))
        for w in words:
            check(w in text, "%s: message lacks %r: %s" % (what or args, w, text[-400:]))
        check("Segmentation" not in text and "signal" not in text.lower() and "Caught" not in text, "%s crashed" % args)
        return text

    with tempfile.TemporaryDirectory() as d:
        # 1. a problem file that only rank 0 can read (node-local path): rank 0 reads it for everybody
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        os.makedirs(a), os.makedirs(b)
        open(os.path.join(a, "x.ocp"), "w").write(pend)
        exe = os.path.abspath(HAMSHOOT)
        cmd = [MPIEXEC, "--oversubscribe", "-n", "1", "--wdir", a, exe, "-problem", "x.ocp", "-quiet", ":",
               "-n", "1", "--wdir", b, exe, "-problem", "x.ocp", "-quiet"]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        check(p.returncode == 0 and "converged          yes" in p.stdout and "2 ranks" in p.stdout,
              "file readable on rank 0 only: rc %d %s" % (p.returncode, p.stdout[-300:]))
        #    ranks started with different options (the issue's command): an error on all ranks, no hang
        cmd = [MPIEXEC, "--oversubscribe", "-n", "1", HAMSHOOT, "-problem", os.path.join(P, "pendulum.ocp"), ":",
               "-n", "1", HAMSHOOT, "-problem", "/nonexistent.ocp"]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        check(p.returncode != 0 and "rank 1 was started with other options" in p.stdout, "MPMD: " + p.stdout[-300:])
        #    a rank-local failure: the job ends after -hs_error_timeout with the failing rank's message
        cmd = [MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT, "-hs_inject_error", "1", "-hs_error_timeout", "2"]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        check(p.returncode != 0 and "error (rank 1): error injected on rank 1" in p.stdout and "aborting the job" in p.stdout,
              "rank-local error: " + p.stdout[-400:])
        #    an error on all ranks: exit 1, one message (from rank 0), no abort
        _, text, _ = run(["-problem", "nonesuch"], ranks=2, expect_rc=1)
        check(text.count("hamshoot: error") == 1 and "aborting the job" not in text, "collective error: " + text[-300:])
        # 2. DMDA options under hamshoot's prefix no longer reach the grid
        for o in (["-hs_da_grid_x", "40"], ["-hs_da_refine", "1"]):
            err(o, ["unknown option " + o[0]], ranks=2)
        # 3. the one-line power tower: no hang, an error (unknown g), and with g = 1 the exact value
        f = os.path.join(d, "pow.ocp")
        open(f, "w").write("param h: ((((((g^64)^64)^64)^64)^64)^64)\n")
        err(["-problem", f], ["pow.ocp:1:", "unknown symbol 'g'"])
        open(f, "w").write(pend.replace("param m: 1", "param g1: 1\nparam m: ((((((g1^64)^64)^64)^64)^64)^64)"))
        s, _, _ = run(["-problem", f])
        c, _, _ = run(["-problem", os.path.join(P, "pendulum.ocp")])
        check(s and c and s["J"] == c["J"], "(((1^64)^64)...) must be 1")
        open(f, "w").write(pend.replace("param m: 1", "param g1: 2\nparam m: ((((((g1^64)^64)^64)^64)^64)^64)"))
        err(["-problem", f], ["not a finite number"])
        # 4. a bad -o is an error before the solve, and a file in the way is named
        reg = os.path.join(d, "regular")
        open(reg, "w").write("x")
        _, text, _ = run(["-hs_monitor"], expect_rc=1, outdir=reg)
        check("cannot create output directory" in text and "Newton" not in text, "-o regular file: " + text[-300:])
        ro = os.path.join(d, "ro")
        os.makedirs(ro)
        os.chmod(ro, 0o500)
        if os.access(ro, os.W_OK):  # root ignores permissions: try /proc instead
            ro = "/proc/hamshoot-out"
        _, text, _ = run(["-hs_monitor"], expect_rc=1, outdir=os.path.join(ro, "sub") if ro.startswith("/proc") else ro)
        check(("cannot write in output directory" in text or "cannot create output directory" in text) and "Newton" not in text,
              "-o unwritable: " + text[-300:])
        # 5. names with '"', '\\' and non-UTF-8 bytes: summary.json stays valid JSON
        f = os.path.join(d, "name.ocp")
        open(f, "wb").write(pend.replace("problem: pendulum_file", 'problem: a"b\\c\xff').encode("latin-1"))
        with tempfile.TemporaryDirectory() as o:
            p = subprocess.run([HAMSHOOT, "-problem", f, "-quiet", "-o", o], env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=120)
            try:
                js = json.load(open(os.path.join(o, "summary.json"), encoding="utf-8"))
                check(js["problem"].startswith('a"b\\c'), "JSON name: %r" % js["problem"])
            except Exception as e:  # noqa: BLE001
                check(False, "summary.json with a strange name is not valid JSON: %s" % e)
        # 6. -N: no wrap-around, no negative counts, a named out-of-memory error
        err(["-N", "4294967316"], ["-N 4294967316 is out of range"])
        err(["-N", "2147483647"], ["more than this PETSc", "indices allow"])
        if not os.environ.get("HS_SANITIZED"):  # AddressSanitizer cannot start under a virtual-memory limit
            p = subprocess.run(["sh", "-c", "ulimit -v 1500000; exec %s -N 30000000 -quiet" % HAMSHOOT], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            check(p.returncode == 1 and "out of memory (in " in p.stdout,
                  "out of memory: rc %d %s" % (p.returncode, p.stdout[-300:]))
        # 7. parameter ranges: the file's physics is checked after -p_, and 'in (a, b)' ranges
        err(["-problem", os.path.join(P, "pendulum.ocp"), "-p_m", "-1"], ["-p_m", "not positive definite"], ranks=2)
        err(["-problem", os.path.join(P, "pendulum.ocp"), "-p_m", "0"], ["-p_m", "not positive definite"])
        f = os.path.join(d, "range.ocp")
        open(f, "w").write(pend.replace("param l: 1", "param l: 1 in (0, 10]"))
        err(["-problem", f, "-p_l", "0"], ["-p_l", "in (0, 10]"])
        err(["-problem", f, "-p_l", "11"], ["-p_l", "in (0, 10]"])
        s2, _, _ = run(["-problem", f, "-p_l", "10"])
        check(s2 is not None and s2["converged"], "-p_l 10 inside (0, 10]")
        open(f, "w").write(pend.replace("param l: 1", "param l: -1 in (0, inf)"))
        err(["-problem", f], ["range.ocp:", "the value -1 is not in (0, inf)"])
        open(f, "w").write(pend.replace("param l: 1", "param l: 3^640"))  # found by the fuzzer (a NULL range text)
        err(["-problem", f], ["range.ocp:", "outside [-1e300, 1e300]"])
        open(f, "w").write(pend.replace("param l: 1", "param l: 1 in (0 10)"))
        err(["-problem", f], ["range.ocp:", "expected 'in [low, high]'"])
        # 8. a 20000-byte line is one line; NUL bytes, /dev/zero and directories are refused
        f = os.path.join(d, "long.ocp")
        open(f, "w").write(pend.replace("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)" + " + 0*q" * 4000))
        check(len(max(open(f).read().splitlines(), key=len)) > 20000, "long line made")
        s3, _, _ = run(["-problem", f])
        check(s3 and c and abs(s3["J"] - c["J"]) <= 1e-12 * c["J"], "long line: J %s" % (s3 and s3["J"]))
        f = os.path.join(d, "nul.ocp")
        open(f, "wb").write(pend.encode().replace(b"param l: 1", b"param l: 1\x00 + 2"))
        err(["-problem", f], ["nul.ocp:", "a NUL byte"])
        err(["-problem", "/dev/zero"], ["larger than 16 MiB"])
        err(["-problem", d + "/"], ["Is a directory"])
        #    deep expressions: a sum of 100000 terms (was: stack overflow in the derivatives), towers and
        #    nesting beyond the limits are errors, not crashes
        f = os.path.join(d, "deep.ocp")
        open(f, "w").write(pend.replace("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)" + " + 1e-12*sin(q)" * 100000))
        s5, _, _ = run(["-problem", f])
        check(s5 is not None and s5["converged"] and abs(s5["J"] - c["J"]) < 1e-6 * c["J"], "sum of 100000 terms")
        for name, text in (("tower", "q" + "^1" * 5000), ("parens", "(" * 100000 + "q" + ")" * 100000),
                           ("minus", "-" * 100000 + "q"), ("funcs", "sin(" * 5000 + "q" + ")" * 5000)):
            open(f, "w").write(pend.replace("potential: -m*g*l*sin(q)", "potential: " + text))
            err(["-problem", f], ["deep.ocp:", "nested too deeply"], what="deep expression: " + name)
        #    sizes whose derivative tables would overflow (found by the fuzzer: 46341 and 65536 coordinates)
        names = ",".join("c%d" % i for i in range(1001))
        open(f, "w").write("coordinates: %s\ncontrols: 1\nmass: 1\npotential: 0\n" % names)
        err(["-problem", f], ["coordinates: 1001 names, at most 1000"])
        names = ["c%d" % i for i in range(61)]
        mass = ",".join(("1 + 0.1*cos(%s)" % names[i] if i == j else "0") for i in range(61) for j in range(61))
        open(f, "w").write("coordinates: %s\ncontrols: 1\nmass: %s\npotential: 0\nB: %s\nR: 1\nT: 1\nx0: %s\nxT: %s\n" %
                           (",".join(names), mass, ",".join(["1"] * 61), ",".join(["0"] * 122), ",".join(["0"] * 122)))
        err(["-problem", f], ["deep.ocp:3:", "at most 60 coordinates"])
        # 9. mistakes that were accepted silently
        err(["-hs_bvp_typ", "shooting"], ["unknown option -hs_bvp_typ"], ranks=2)
        for o in ("-N", "-hs_continue", "-p_m", "-hs_dg_tol", "-hs_init", "-hs_bvp_type", "-hs_checkpoint_every"):
            err([o], [o, "value"])
        f = os.path.join(d, "twice.ocp")
        open(f, "w").write(pend.replace("N: 20", "N: 20\nN: 30"))
        err(["-problem", f], ["twice.ocp:", "'N' is given twice"])
        knots = ",".join(str(k) for k in range(1, 5001))
        s4, _, _ = run(["-N", "6000", "-hs_bvp_type", "shooting", "-hs_shoot_knots", knots])
        check(s4 is not None and s4.get("segments") == 5001,
              "5000 knots: %s" % (s4 and {k: v for k, v in s4.items() if k != "_rows"}))
        names = ["m", "l", "g"] * 3
        _, text, _ = run(["-hs_continue", ",".join(names), "-hs_continue_from", ",".join(["1.05", "1.05", "9.7"] * 3),
                          "-hs_continue_steps", "1", "-hs_continue_monitor"])
        check(text.count("continuation g") >= 2, "9 continuation names: all stages run: " + text[-400:])
        # 10. messages that name their source; paths over the limit
        err(["-N", "1.5"], ["-N 1.5: expected a whole number"])
        with tempfile.TemporaryDirectory() as o:
            run([], outdir=o)
            rows = open(os.path.join(o, "trajectory.csv")).read().splitlines()
            cells = rows[4].split(",")
            rows[4] = ",".join(cells[:1] + ["nan"] + cells[2:])
            bad = os.path.join(d, "nan.csv")
            open(bad, "w").write("\n".join(rows) + "\n")
        err(["-hs_init", bad], ["nan.csv:5:", "not a finite number"])
        f = os.path.join(d, "scheme.ocp")
        open(f, "w").write(pend + "state_scheme: rk4\n")
        err(["-problem", f], ["scheme.ocp:", "state_scheme: unknown scheme 'rk4'"])
        #    error paths free what they made (PETSc's -malloc_dump lists what is left at PetscFinalize)
        for args in (["-N", "1"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "0"], ["-hs_continue", "m"],
                     ["-problem", os.path.join(P, "pendulum.ocp"), "-p_m", "-1"], ["-hs_init", bad], ["-hs_scheme", "x"],
                     ["-problem", "kepler", "-hs_state_scheme", "greenspan"], ["-hs_restart", d], ["-hs_bvp_typ", "x"]):
            _, text, _ = run(args + ["-malloc_dump"], expect_rc=1)
            check(" bytes " not in text, "%s leaks: %s" % (args, text[-300:]))
        _, text, _ = run([], expect_rc=1, outdir="/tmp/" + "x" * 5000)
        check("-o: the directory name has 5005 characters" in text, "long -o: " + text[-300:])


def t_free_time():
    """Free final time (issue 14, docs/free-final-time.md): the condition (1/N) sum_k H^d = d phi/dT.
    Double integrator, cost int 1/2 u^2 + c dt: T* = (18 d^2/c)^(1/4) analytically; the discrete T
    converges at order 2 with H^d = 0 to round-off on every interval, on 1 and 2 ranks. The same T
    with the time penalty as a terminal cost c T (or c t). The envelope theorem as an independent
    check: the fixed-T discrete optimum J^d(T) is stationary at the free T (the direct scheme's
    condition is the exact KKT condition of the NLP with T as a variable). Pendulum with a time
    penalty: conserving H^d constant to round-off, the direct scheme's spread O(h^2)."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    di = os.path.join(data, "..", "..", "problems", "double_integrator_free_T.ocp")
    pf = os.path.join(data, "pendulum_free_T.ocp")
    Ts = 18 ** 0.25
    errs, ref = [], {}
    for N in (20, 40, 80, 160):
        s, out, _ = run(["-problem", di, "-N", str(N)])
        ok = s and s["converged"]
        check(ok, "double integrator N = %d: %s" % (N, out[-300:]))
        if not ok:
            return
        ref[N] = s
        errs.append(abs(s["T"] - Ts))
        print("N = %4d  T = %.15f  T - T* = %.3e  H spread %.1e  H mean %.1e  Newton %d" %
              (N, s["T"], s["T"] - Ts, s["H_spread"], s["H_mean"], s["newton_iterations"]))
        check(s["H_spread"] <= 1e-12 and abs(s["H_mean"]) <= 1e-12, "H^d not 0 to round-off at N = %d" % N)
    orders = [math.log2(errs[i] / errs[i + 1]) for i in range(3)]
    print("observed orders of T:", ["%.3f" % o for o in orders])
    check(all(1.95 < o < 2.05 for o in orders), "order of T: %s" % orders)
    Js = 6 / Ts ** 3 + Ts  # the analytic optimal cost 6 d^2/T*^3 + c T*
    eJ = [abs(ref[N]["J"] - Js) for N in (20, 40, 80, 160)]
    oJ = [math.log2(eJ[i] / eJ[i + 1]) for i in range(3)]
    print("J^d - J* (J* = %.15f): %s, orders %s" % (Js, ["%.3e" % e for e in eJ], ["%.3f" % o for o in oJ]))
    check(all(1.95 < o < 2.05 for o in oJ), "order of J: %s" % oJ)
    s2, out, _ = run(["-problem", di, "-N", "80"], ranks=2)
    check(s2 and abs(s2["T"] - ref[80]["T"]) <= 1e-12, "2 ranks: T differs: %s" % (s2 and s2["T"]))
    text = open(di).read()
    with tempfile.TemporaryDirectory() as d:
        for phi in ("c*T", "c*t", "0.5*c*(T + t)"):
            f = os.path.join(d, "phi.ocp")
            open(f, "w").write(text.replace("running_cost: c", "terminal_cost: " + phi))
            s, out, _ = run(["-problem", f, "-N", "40"])
            check(s and abs(s["T"] - ref[40]["T"]) <= 1e-12 and abs(s["J"] - ref[40]["J"]) <= 1e-12,
                  "terminal cost %s: T %s, J %s, against %r, %r" % (phi, s and s["T"], s and s["J"], ref[40]["T"], ref[40]["J"]))
        # envelope theorem: d J^d(T)/dT = 0 at the free T, for the fixed-T problems
        for name, f0, N, scheme in (("double integrator", di, 40, []), ("pendulum", pf, 40, ["-hs_scheme", "direct"])):
            free, _, _ = run(["-problem", f0, "-N", str(N)] + scheme)
            if not (free and free["converged"]):
                check(False, "%s: free T did not converge" % name)
                continue
            f = os.path.join(d, "fixed.ocp")
            guess = re.search(r"T: free (\S+)", open(f0).read()).group(1)
            open(f, "w").write(open(f0).read().replace("T: free " + guess, "param Tf: %s\nT: Tf" % guess))
            T0, dl = free["T"], 1e-3
            J = {}
            for k in (-1, 0, 1):
                s, out, _ = run(["-problem", f, "-N", str(N), "-p_Tf", repr(T0 + k * dl)] + scheme)
                J[k] = s["J"] if s and s["converged"] else float("nan")
            dJ = (J[1] - J[-1]) / (2 * dl)
            d2J = (J[1] - 2 * J[0] + J[-1]) / dl ** 2
            print("%s: J^d(T* -+ 1e-3) - J^d(T*) = %.3e, %.3e; dJ/dT = %.2e, d2J/dT2 = %.3f; J(T*) = %.15g, free J = %.15g"
                  % (name, J[-1] - J[0], J[1] - J[0], dJ, d2J, J[0], free["J"]))
            check(abs(J[0] - free["J"]) <= 1e-12 * abs(free["J"]), "%s: fixed T* and free T give other J" % name)
            check(J[-1] > J[0] and J[1] > J[0] and abs(dJ) <= 1e-4 * d2J, "%s: J^d(T) not stationary at T*" % name)
    # pendulum: H^d constant (conserving) / O(h^2) spread with mean 0 (direct)
    sp, sp_T = {}, {}
    for N in (40, 80):
        c, out, _ = run(["-problem", pf, "-N", str(N)])
        check(c and c["converged"] and c["H_spread"] <= 1e-9 and abs(c["H_mean"]) <= 1e-9,
              "pendulum conserving N = %d: %s" % (N, c and (c["H_spread"], c["H_mean"])))
        dr, out, _ = run(["-problem", pf, "-N", str(N), "-hs_scheme", "direct"])
        check(dr and dr["converged"] and abs(dr["H_mean"]) <= 1e-12, "pendulum direct N = %d" % N)
        sp[N] = dr["H_spread"] if dr else float("nan")
        sp_T[N] = dr["T"] if dr else float("nan")
        print("pendulum N = %d: conserving T = %.12f, H spread %.1e; direct T = %.12f, H spread %.4e, H mean %.1e"
              % (N, c["T"], c["H_spread"], dr["T"], dr["H_spread"], dr["H_mean"]))
    check(3.5 < sp[40] / sp[80] < 4.5, "direct H^d spread not O(h^2): %s" % sp)
    # multiple shooting: the same discrete T (single shooting, 4 segments on 2 ranks, rankblock on 3 ranks
    # with fewer segments than... every segment its own rank; the pendulum with both schemes)
    for N in (20, 40, 80, 160):
        for M, ranks, extra in ((1, 1, []), (4, 2, [])):
            sh, out, _ = run(["-problem", di, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)] + extra,
                             ranks=ranks)
            check(sh and sh["converged"] and abs(sh["T"] - ref[N]["T"]) <= 1e-12 and sh["H_spread"] <= 1e-12,
                  "double integrator shooting M = %d N = %d: T %s against %r" % (M, N, sh and sh["T"], ref[N]["T"]))
    for scheme in ([], ["-hs_scheme", "direct"]):
        tr, _, _ = run(["-problem", pf, "-N", "40"] + scheme)
        for M, ranks, extra in ((8, 2, []), (8, 3, ["-hs_shoot_ksp", "rankblock"]), (2, 3, [])):
            sh, out, _ = run(["-problem", pf, "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)]
                             + scheme + extra, ranks=ranks)
            ok = sh and tr and sh["converged"] and abs(sh["T"] - tr["T"]) <= 1e-10 and abs(sh["J"] - tr["J"]) <= 1e-10 * tr["J"]
            print("pendulum %s shooting M = %d on %d ranks %s: T = %.15f (transcription %.15f), %d Newton iterations"
                  % (" ".join(scheme) or "conserving", M, ranks, " ".join(extra), sh and sh["T"], tr and tr["T"],
                     sh and sh["newton_iterations"]))
            check(ok, "pendulum shooting %s M = %d ranks %d" % (scheme, M, ranks))
    # Jacobians with the column and the row of T against finite differences (-snes_test_jacobian)
    for bvp in (["-hs_bvp_type", "transcription"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"]):
        for scheme in ([], ["-hs_scheme", "direct"], ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]):
            p = subprocess.run([HAMSHOOT, "-problem", pf, "-N", "12", "-snes_test_jacobian", "-snes_max_it", "4"] + bvp + scheme,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            r = jacobian_ratios(p.stdout)
            print("-snes_test_jacobian %s %s: %s" % (" ".join(bvp), " ".join(scheme), ["%.1e" % x for x in r]))
            # at most 1e-4: the conserving_1dof scheme's Greenspan quotient switches to its limit near
            # turning points (|dq| <= 1e-6 (1 + |q|)), where the finite difference straddles the switch
            # (seen once: 1.4e-5, in interior costate rows, not in T's row or column, whose entries are
            # O(1): a wrong one gives >= 1e-2)
            check(len(r) >= 3 and max(r) <= 1e-4, "free-T Jacobian %s %s: %s" % (bvp, scheme, r))
    # a terminal target that moves with T (xT: d + v*T, 0): the condition gains -sum_fixed R_i dx_T,i/dT
    # (docs/free-final-time.md); the optimum minimizes J(T) = 6 (d + v T)^2 / T^3 + c T, found here by
    # bisection on dJ/dT; T converges to it at order 2; H^d stays constant (its value is no longer 0)
    with tempfile.TemporaryDirectory() as d:
        mv = os.path.join(d, "moving.ocp")
        open(mv, "w").write(open(di).read().replace("xT: d, 0", "xT: d + v*T, 0").replace("param d: 1", "param d: 1\nparam v: 0.2"))
        dJ = lambda T: 12 * (1 + 0.2 * T) * 0.2 / T ** 3 - 18 * (1 + 0.2 * T) ** 2 / T ** 4 + 1
        lo, hi = 1.0, 5.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if dJ(lo) * dJ(mid) <= 0 else (mid, hi)
        Tm, errs_m = 0.5 * (lo + hi), []
        for N in (20, 40, 80, 160):
            s, out, _ = run(["-problem", mv, "-N", str(N)], ranks=2 if N == 80 else 1)
            check(s and s["converged"] and s["H_spread"] <= 1e-11, "moving target N = %d: %s" % (N, out[-200:]))
            errs_m.append(abs(s["T"] - Tm) if s else float("nan"))
            for M, ranks in ((1, 1), (4, 2), (2, 3)):  # multiple shooting: the same discrete T
                sh, out, _ = run(["-problem", mv, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)],
                                 ranks=ranks)
                check(sh and s and sh["converged"] and abs(sh["T"] - s["T"]) <= 1e-12,
                      "moving target, shooting M = %d on %d ranks, N = %d: %s" % (M, ranks, N, sh and sh["T"]))
        om = [math.log2(errs_m[i] / errs_m[i + 1]) for i in range(3)]
        print("moving target: T* = %.15f; T - T* = %s; orders %s" % (Tm, ["%.3e" % e for e in errs_m], ["%.3f" % o for o in om]))
        check(all(1.95 < o < 2.05 for o in om), "moving target: order of T %s" % om)
        for bvp in ([], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"]):
            p = subprocess.run([HAMSHOOT, "-problem", mv, "-N", "10", "-snes_test_jacobian", "-snes_max_it", "4"] + bvp,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            r = jacobian_ratios(p.stdout)
            check(len(r) >= 3 and max(r) <= 1e-6, "moving target Jacobian %s: %s" % (bvp, r))
        if not os.environ.get("HS_SANITIZED"):  # IPOPT (the targets as constraints) against Newton on the kkt equations
            ip, out, _ = run(["-problem", mv, "-N", "40", "-hs_bvp_type", "ipopt"], ranks=2)
            nw, _, _ = run(["-problem", mv, "-N", "40", "-hs_costate_scheme", "kkt"])
            print("moving target, IPOPT: T = %.15f, Newton on kkt: %.15f, kkt residual %.1e"
                  % (ip and ip["T"], nw and nw["T"], ip and ip["residual_norm"]))
            check(ip and nw and ip["converged"] and abs(ip["T"] - nw["T"]) <= 1e-10, "moving target with IPOPT: " + out[-300:])
    # kepler (3-D, gonzalez + conserving): with the time penalty c = H^d of the fixed-T (T = pi) solve, the
    # fixed-T discrete solution satisfies every equation of the free-T problem, so the free T is pi again,
    # from the guess 2.5, by transcription and by shooting
    kp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems", "kepler.ocp")
    k0, _, _ = run(["-problem", kp, "-N", "40"])
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "kepler_free.ocp")
        open(f, "w").write(open(kp).read().replace("T: pi", "T: free 2.5") + "running_cost: %r\n" % k0["H_mean"])
        for extra, ranks in (([], 1), (["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], 2)):
            s, out, _ = run(["-problem", f, "-N", "40"] + extra, ranks=ranks)
            ok = s and s["converged"] and abs(s["T"] - math.pi) <= 1e-12 and \
                abs(s["J"] - (k0["J"] + k0["H_mean"] * math.pi)) <= 1e-12 * s["J"]
            print("kepler, c = H^d(T = pi) = %.15g %s: T - pi = %.1e, %d Newton iterations"
                  % (k0["H_mean"], " ".join(extra), s["T"] - math.pi if s else float("nan"), s["newton_iterations"] if s else -1))
            check(ok, "kepler free T %s: %s" % (extra, s and s["T"]))
    # continuation in the time penalty (warm starts carry T) and a restart from a checkpoint (the iterate
    # holds T) reach the free-T solution of a single solve
    single, _, _ = run(["-problem", pf, "-N", "40"])
    cont, _, _ = run(["-problem", pf, "-N", "40", "-hs_continue", "c", "-hs_continue_from", "3", "-hs_continue_steps", "4"])
    check(single and cont and cont["converged"] and abs(cont["T"] - single["T"]) <= 1e-10,
          "continuation in c with a free T: %s" % (cont and cont["T"]))
    with tempfile.TemporaryDirectory() as d:
        ck = os.path.join(d, "ck")
        run(["-problem", pf, "-N", "40", "-hs_checkpoint", ck, "-hs_checkpoint_every", "3", "-snes_max_it", "6"],
            expect_rc=None)
        rs, _, _ = run(["-problem", pf, "-N", "40", "-hs_restart", ck], ranks=2)
        check(rs and rs["converged"] and abs(rs["T"] - single["T"]) <= 1e-10, "restart with a free T: %s" % (rs and rs["T"]))
    # -hs_init from a free-T output: its T too (0 Newton iterations at the same N; the direct scheme, whose
    # solution's residual is below the absolute tolerance)
    with tempfile.TemporaryDirectory() as d:
        s0, _, _ = run(["-problem", pf, "-N", "40", "-hs_scheme", "direct"], outdir=d)
        s1, _, _ = run(["-problem", pf, "-N", "40", "-hs_scheme", "direct", "-hs_init", d], ranks=2)
        check(s0 and s1 and s1["converged"] and s1["newton_iterations"] == 0 and abs(s1["T"] - s0["T"]) <= 1e-13,
              "-hs_init with a free T: %s iterations, T %s" % (s1 and s1["newton_iterations"], s1 and s1["T"]))
    # an optimum beyond T_max: Newton says why it fails; IPOPT stops on the bound and says so
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "tmax.ocp")
        open(f, "w").write(open(di).read() + "T_max: 2.03\n")
        s, out, rc = run(["-problem", f, "-N", "40"], expect_rc=2)
        check(s and not s["converged"] and "outside [T_min, T_max]" in s["diagnosis"], "T beyond T_max: %s" % (s and s["diagnosis"]))
        if not os.environ.get("HS_SANITIZED"):
            s, out, rc = run(["-problem", f, "-N", "40", "-hs_bvp_type", "ipopt"], expect_rc=None)
            check(s and abs(s["T"] - 2.03) <= 1e-6 and "at its bound" in s["diagnosis"], "IPOPT on T_max: %s" % (s and s["diagnosis"]))
    # the d/dh column does not count as sensitivity growth (single shooting, N = 640: as with T fixed)
    sg, _, _ = run(["-problem", di, "-N", "640", "-hs_bvp_type", "shooting"])
    check(sg and sg["converged"] and sg["sensitivity_growth"] < 10, "growth with a free T: %s" % (sg and sg["sensitivity_growth"]))
    if os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded under AddressSanitizer (tools/sanitize.sh)
        return
    # the direct NLP with T as a variable (IPOPT): the same discrete T as Newton on its KKT equations with
    # the condition on T (the condition is the NLP's exact KKT condition), and for the double integrator,
    # whose schemes all coincide, the conserving scheme's T to 1e-8
    for f0, N, scheme in ((di, 40, ["-hs_state_scheme", "greenspan", "-hs_costate_scheme", "kkt"]),
                          (pf, 40, ["-hs_scheme", "direct"]),
                          (pf, 40, ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])):
        ip, out, _ = run(["-problem", f0, "-N", str(N), "-hs_bvp_type", "ipopt"] + scheme, ranks=2)
        nw, _, _ = run(["-problem", f0, "-N", str(N)] + scheme)
        ok = ip and nw and ip["converged"] and abs(ip["T"] - nw["T"]) <= 1e-10 and abs(ip["J"] - nw["J"]) <= 1e-10 * nw["J"]
        print("IPOPT %s %s: T = %.15f (Newton on the KKT equations %.15f), %d iterations, kkt residual %.1e"
              % (os.path.basename(f0), " ".join(scheme), ip and ip["T"], nw and nw["T"], ip and ip["newton_iterations"],
                 ip and ip["residual_norm"]))
        check(ok, "IPOPT free T %s %s: %s" % (f0, scheme, out[-300:]))
        if f0 == di:
            check(ip and abs(ip["T"] - ref[40]["T"]) <= 1e-8, "IPOPT T against the conserving scheme's")
        kkt_T = nw["T"] if nw else float("nan")  # the last case: gonzalez + kkt
    # -hs_compare: each side reports its own T
    with tempfile.TemporaryDirectory() as d:
        c, out, rc = run(["-problem", pf, "-N", "40", "-hs_compare", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme",
                          "conserving"], outdir=d, expect_rc=None)
        a = json.load(open(os.path.join(d, "indirect", "summary.json")))
        b = json.load(open(os.path.join(d, "direct", "summary.json")))
        print("-hs_compare: indirect T = %.12f, direct T = %.12f" % (a["T"], b["T"]))
        check(a["converged"] and b["converged"] and abs(a["T"] - b["T"]) > 1e-5 and abs(b["T"] - kkt_T) <= 1e-10,
              "-hs_compare with a free T: %r %r" % (a["T"], b["T"]))
        alone, _, _ = run(["-problem", pf, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "conserving"])
        dg, _, _ = run(["-problem", pf, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "conserving",
                        "-hs_initial_guess", "direct"])
        check(dg and alone and dg["converged"] and dg["newton_iterations"] <= 5 and abs(dg["T"] - alone["T"]) <= 1e-10,
              "-hs_initial_guess direct with a free T: %r" % ((dg and (dg["newton_iterations"], dg["T"])),))
        check(alone and a["newton_iterations"] == alone["newton_iterations"] and abs(a["T"] - alone["T"]) <= 1e-12,
              "-hs_compare: the indirect side starts from the guess, not from the direct side's T")
    # what is not supported yet says so
    for opts, word in ((["-hs_bvp_type", "shooting", "-hs_shoot_mf"], "-hs_shoot_mf is not supported"),):
        _, out, rc = run(["-problem", di] + opts, expect_rc=1)
        check(rc == 1 and word in out, "free T with %s: %s" % (opts, out[-300:]))


def t_problem_format():
    """Problem files (issue 14): derived parameters follow -p_NAME (against the same file with the
    values written out), a derived parameter set explicitly keeps its value, T in expressions."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    f0 = os.path.join(data, "pendulum_derived.ocp")
    text = open(f0).read()
    base, _, _ = run(["-problem", f0])
    builtin, _, _ = run(["-problem", "pendulum"])
    check(base and builtin and abs(base["J"] - builtin["J"]) <= 1e-10 * builtin["J"],
          "derived-parameter pendulum (T in xT) differs from the built-in one")
    with tempfile.TemporaryDirectory() as d:
        def written(repl):
            f = os.path.join(d, "w.ocp")
            t = text
            for a, b in repl:
                check(a in t, "test file lacks %r" % a)
                t = t.replace(a, b)
            open(f, "w").write(t)
            s, out, _ = run(["-problem", f])
            return s
        for opts, repl in ((["-p_m", "2"], [("param m: 1", "param m: 2"), ("param I: m*l^2", "param I: 2"),
                                             ("param mgl: m*g*l", "param mgl: 2*9.81")]),
                           (["-p_l", "0.5", "-p_g", "3"], [("param I: m*l^2", "param I: 0.25"),
                                                          ("param mgl: m*g*l", "param mgl: 1.5"), ("param l: 1", "param l: 0.5")]),
                           (["-p_m", "2", "-p_I", "1"], [("param I: m*l^2", "param I: 1"), ("param mgl: m*g*l", "param mgl: 19.62")]),
                           (["-p_I", "1", "-p_m", "2"], [("param I: m*l^2", "param I: 1"), ("param mgl: m*g*l", "param mgl: 19.62")])):
            s, out, _ = run(["-problem", f0] + opts)
            w = written(repl)
            print("%-24s J = %.15g, written out: %.15g" % (" ".join(opts), s and s["J"], w and w["J"]))
            check(s and w and abs(s["J"] - w["J"]) <= 1e-12 * abs(w["J"]) and abs(s["J"] - base["J"]) > 1e-3,
                  "%s: J %s, the file with the values written out %s" % (opts, s and s["J"], w and w["J"]))
        # outputs: trajectory.csv (nodes) and intervals.csv (midpoints) with the file's coordinate names;
        # summary.json with every parameter and the command line
        o = os.path.join(d, "out")
        di = os.path.join(data, "..", "..", "problems", "double_integrator_free_T.ocp")
        s, _, _ = run(["-problem", di, "-N", "8", "-p_c", "2"], outdir=o)
        tr = list(csv.DictReader(open(os.path.join(o, "trajectory.csv"))))
        iv = list(csv.DictReader(open(os.path.join(o, "intervals.csv"))))
        print("trajectory.csv:", list(tr[0].keys()), " intervals.csv:", list(iv[0].keys()))
        check(list(tr[0].keys()) == ["t", "q_y", "p_y", "E_minus_W"] and len(tr) == 9, "trajectory.csv columns/rows")
        check(list(iv[0].keys()) == ["k", "t_mid", "u1", "lambda_q_y", "lambda_p_y", "H"] and len(iv) == 8,
              "intervals.csv columns/rows")
        h = s["T"] / 8
        check(all(abs(float(r["t_mid"]) - (k + 0.5) * h) <= 1e-14 and abs(float(tr[k]["t"]) - k * h) <= 1e-14
                  for k, r in enumerate(iv)) and abs(float(tr[8]["t"]) - s["T"]) <= 1e-14, "t_mid not the midpoints")
        u_exact = [float(r["lambda_p_y"]) for r in iv]  # u = R^{-1} B^T lambda^p, R = B = 1
        check(all(abs(float(r["u1"]) - u) <= 1e-15 for r, u in zip(iv, u_exact)), "u1 is not R^-1 B^T lambda_p")
        check(s["parameters"] == {"d": 1, "c": 2} and s["command_line"][1:] == ["-problem", di, "-N", "8", "-p_c", "2",
                                                                                 "-quiet", "-o", o] and s["free_T"],
              "summary parameters/command line: %s %s" % (s["parameters"], s["command_line"]))
        # a B that depends on q (a horizontal force at the tip) is solved with H^d conserved (test configuration_forces)
        bq = os.path.join(d, "bq.ocp")
        open(bq, "w").write(text.replace("B: 1", "B: l*cos(q/2)"))
        sb, _, _ = run(["-problem", bq, "-N", "20"])
        check(sb["converged"] and sb["H_spread"] <= 1e-10 and sb["state_scheme"] == "greenspan", "B(q) = l cos(q/2): %s" % sb)
        # a derived value outside its range is refused with the reason
        _, out, rc = run(["-problem", f0, "-p_l", "1e-200", "-p_m", "1e-200"], expect_rc=1)
        check(rc == 1 and "derived parameter I" in out, "derived out of range: " + out[-300:])


def t_configuration_forces():
    """A configuration-dependent B(q) (docs/configuration-dependent-forces.md, costate/gain.c).

    Independent check: the pendulum written in the coordinate s with q = s + c s^2
    (tests/data/pendulum_bq.ocp: mass m l^2 (1 + 2cs)^2, B(s) = 1 + 2cs) is the same continuous
    problem as the pendulum, so its J^d must converge at order 2 to the pendulum's J* = 6.43694443886
    (DESIGN.md section 4.1, crosscheck test) although every grid's J^d differs from the pendulum's.
    The conserving scheme keeps H^d constant to round-off only with its extra costate term kappa
    (without it the spread is O(1) here), the direct schemes' spread is O(h^2). A coupled 2-DOF
    problem (tests/data/bq2.ocp: matrix B(q), running and terminal costs, free terminal momenta):
    analytic Jacobians against -snes_test_jacobian, shooting = transcription, IPOPT (x-dependent
    constraint Jacobian, mixed x-u Hessian) = Newton on the same kkt equations; a free final time."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    pbq, bq2 = os.path.join(data, "pendulum_bq.ocp"), os.path.join(data, "bq2.ocp")
    jstar = 6.43694443886
    Ns, Js = (40, 80, 160, 320, 640), []
    for N in Ns:
        s, _, _ = run(["-problem", pbq, "-N", str(N)])
        rel = s["H_spread"] / max(1.0, abs(s["H_mean"]))
        print("pendulum_bq N=%3d  J^d %.12f  J^d - J* %.3e  H^d spread rel %.2e  E-W spread %.2e"
              % (N, s["J"], s["J"] - jstar, rel, s["energy_work_spread"]))
        check(s["converged"] and s["state_scheme"] == "gonzalez" and s["costate_scheme"] == "conserving",
              "pendulum_bq N=%d: %s %s/%s" % (N, s["converged"], s["state_scheme"], s["costate_scheme"]))
        check(rel <= 1e-10, "pendulum_bq N=%d: H^d spread %.2e is not round-off" % (N, rel))
        check(s["energy_work_spread"] <= 1e-12, "pendulum_bq N=%d: E - W spread %.2e" % (N, s["energy_work_spread"]))
        Js.append(s["J"])
    errs = [abs(J - jstar) for J in Js]
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    rich = (4 * Js[-1] - Js[-2]) / 3
    print("pendulum_bq: observed orders of J^d -> J*: %s; Richardson (N = 320, 640) - J* = %.2e"
          % (" ".join("%.3f" % o for o in ords), rich - jstar))
    check(all(1.9 <= o <= 2.1 for o in ords), "pendulum_bq: orders %s" % ords)
    check(abs(rich - jstar) <= 2e-7, "pendulum_bq: Richardson J %.12f vs J* %.12f" % (rich, jstar))
    sp, _, _ = run(["-problem", "pendulum", "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "conserving"])
    print("same N = 40 in the coordinate q: J^d %.12f (differs from pendulum_bq's by %.2e)" % (sp["J"], sp["J"] - Js[0]))
    check(abs(sp["J"] - Js[0]) > 1e-3, "pendulum_bq: J^d equals the pendulum's on the same grid: the test is vacuous")
    for ss, cs in (("gonzalez", "kkt"), ("midpoint", "trapezoidal")):
        sp = [run(["-problem", pbq, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs])[0]["H_spread"]
              for N in (80, 160)]
        print("pendulum_bq %s + %s: H^d spread %.3e, %.3e (ratio %.2f)" % (ss, cs, sp[0], sp[1], sp[0] / sp[1]))
        check(sp[1] > 1e-4 and 3 <= sp[0] / sp[1] <= 5.5, "pendulum_bq %s/%s: spread not O(h^2): %s" % (ss, cs, sp))
    # the coupled 2-DOF problem: every scheme's Jacobian, in transcription and in shooting
    for ss, cs, extra in (("gonzalez", "conserving", []), ("gonzalez", "kkt", []), ("midpoint", "trapezoidal", []),
                          ("gonzalez", "conserving", ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"])):
        _, out, _ = run(["-problem", bq2, "-N", "8", "-hs_state_scheme", ss, "-hs_costate_scheme", cs,
                         "-snes_test_jacobian"] + extra, expect_rc=None)
        ratios = jacobian_ratios(out)
        print("bq2 %s + %s %s: %d Jacobians, max ||J-Jfd||/||J|| = %.1e"
              % (ss, cs, " ".join(extra), len(ratios), max(ratios) if ratios else float("nan")))
        check(len(ratios) >= 2 and max(ratios) < (1e-5 if extra else 1e-6), "bq2 %s/%s %s: %s" % (ss, cs, extra, ratios))
    base, _, _ = run(["-problem", bq2, "-N", "40"])
    rel = base["H_spread"] / max(1.0, abs(base["H_mean"]))
    check(base["converged"] and rel <= 1e-12 and base["energy_work_spread"] <= 1e-12,
          "bq2: H^d spread %.2e, E - W spread %.2e" % (rel, base["energy_work_spread"]))
    sh, _, _ = run(["-problem", bq2, "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
    dx = max(abs(float(a[c]) - float(b[c])) for a, b in zip(sh["_rows"][:-1], base["_rows"][:-1]) for c in a if a[c])
    print("bq2 N=40: J^d %.15f, H^d spread %.1e; shooting (4 segments, 2 ranks) J^d - J^d = %.1e, max |row difference| %.1e"
          % (base["J"], base["H_spread"], sh["J"] - base["J"], dx))
    check(sh["converged"] and abs(sh["J"] - base["J"]) <= 1e-12 and dx <= 1e-10, "bq2: shooting differs: %.2e" % dx)
    # from rest (x0 = 0) the march's first steps have |x_{k+1} - x_k| just above -hs_dg_tol, where Gonzalez's
    # divided difference loses ~1e-10 to cancellation: the local Newton stops at that noise floor
    # (costate/march.c) instead of failing the step, and shooting still equals the transcription
    with tempfile.TemporaryDirectory() as d:
        rest = os.path.join(d, "bq2_rest.ocp")
        open(rest, "w").write(open(bq2).read().replace("x0: 0.1, -0.1, 0, 0", "x0: 0, 0, 0, 0"))
        tr, _, _ = run(["-problem", rest, "-N", "40"])
        sh, _, _ = run(["-problem", rest, "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"])
        print("bq2 from rest, N=40: transcription J^d %.15f, shooting (4 segments) %.15f" % (tr["J"], sh["J"]))
        check(sh["converged"] and abs(sh["J"] - tr["J"]) <= 1e-12, "bq2 from rest: shooting %s" % sh["diagnosis"])
    if not os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded under AddressSanitizer (tools/sanitize.sh)
        kk, _, _ = run(["-problem", bq2, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])
        ip, _, _ = run(["-problem", bq2, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt",
                        "-hs_bvp_type", "ipopt"])
        print("bq2 N=40 gonzalez + kkt: Newton J^d %.15f, IPOPT J^d %.15f (%d iterations), kkt residual at IPOPT's "
              "solution %.1e" % (kk["J"], ip["J"], ip["newton_iterations"], ip["residual_norm"]))
        check(ip["converged"] and abs(ip["J"] - kk["J"]) <= 1e-12 and ip["residual_norm"] <= 1e-10,
              "bq2: IPOPT %s vs Newton %s (residual %.2e)" % (ip["J"], kk["J"], ip["residual_norm"]))
        check(ip["newton_iterations"] <= 8, "bq2: IPOPT needed %d iterations (exact Hessian: few)" % ip["newton_iterations"])
    # a free final time with B(q): H^d = d phi/dT = 1 on every interval; the same T from shooting and, with kkt,
    # from IPOPT; Richardson T equals the pendulum's (the free-T pendulum file, in q) to the O(h^4) left
    with tempfile.TemporaryDirectory() as d:
        ft = os.path.join(d, "pendulum_bq_free_T.ocp")
        open(ft, "w").write(open(pbq).read().replace("T: 3", "T: free 3") + "terminal_cost: T\n")
        Ts, Tq = [], []
        for N in (80, 160):
            s, _, _ = run(["-problem", ft, "-N", str(N)])
            check(s["converged"] and s["free_T"] and abs(s["H_mean"] - 1) <= 1e-12 and s["H_spread"] <= 1e-11,
                  "pendulum_bq free T N=%d: H^d mean %.15f spread %.2e" % (N, s["H_mean"], s["H_spread"]))
            Ts.append(s["T"])
            Tq.append(run(["-problem", os.path.join(data, "pendulum_free_T.ocp"), "-N", str(N), "-hs_state_scheme",
                           "gonzalez", "-hs_costate_scheme", "conserving"])[0]["T"])
        rs, rq = (4 * Ts[1] - Ts[0]) / 3, (4 * Tq[1] - Tq[0]) / 3
        print("free T: in s %.10f %.10f, in q %.10f %.10f; Richardson %.10f vs %.10f (difference %.1e)"
              % (Ts[0], Ts[1], Tq[0], Tq[1], rs, rq, rs - rq))
        check(abs(rs - rq) <= 5e-6 and abs(Ts[1] - Tq[1]) > 1e-5, "free T: Richardson %.10f vs %.10f" % (rs, rq))
        sh, _, _ = run(["-problem", ft, "-N", "80", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
        check(sh["converged"] and abs(sh["T"] - Ts[0]) <= 1e-12, "free T: shooting T %.15f vs %.15f" % (sh["T"], Ts[0]))
        print("free T: shooting T - T = %.1e" % (sh["T"] - Ts[0]))
        if not os.environ.get("HS_SANITIZED"):
            kk, _, _ = run(["-problem", ft, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])
            ip, _, _ = run(["-problem", ft, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt",
                            "-hs_bvp_type", "ipopt"])
            print("free T: kkt Newton T %.15f, IPOPT T %.15f" % (kk["T"], ip["T"]))
            check(ip["converged"] and abs(ip["T"] - kk["T"]) <= 1e-10, "free T: IPOPT T %s vs Newton %s" % (ip["T"], kk["T"]))


def free_T_bisect(dJ, lo, hi):
    """The root of dJ in [lo, hi] by bisection (dJ(lo) < 0 < dJ(hi))."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dJ(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def t_free_time_data(script=None):
    """A free T on which the data depend (issue 14: T usable everywhere, also when free;
    docs/free-final-time.md): the condition (1/N) sum_k (H^d_k + Q_k) = d phi/dT with
    Q_k = T dH^d_k/dT + [k = 0] N (lambda + h dH^d_0/dx_0).dx0/dT.
    - di_T_data (mass, B, R, running cost and x0 depend on T): T converges at order 2 to the analytic
      minimizer of J(T) = 6 R M^2 D^2/(B^2 T^3) + (c + w T) T, Richardson within 1e-8;
    - the envelope theorem, independent of the formula: for the direct schemes (exact KKT) the
      fixed-T optimum J^d(T) is stationary at the free T^d (Richardson of central differences);
    - IPOPT (T an NLP variable, its derivatives separate code) gets Newton's T on the kkt equations,
      and its multipliers satisfy the T row to round-off;
    - multiple shooting = transcription; conserving H^d constant to round-off; -snes_test_jacobian;
    - the pendulum_T_data continuous T* from scipy (tests/crosscheck/free_T_data.py, independent
      derivation) against the Richardson-extrapolated conserving T."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    di, bq, pe = (os.path.join(data, f + ".ocp") for f in ("di_T_data", "bq2_T_data", "pendulum_T_data"))

    def Jan(T):
        R, M, B, D = 1 + 0.1 * T, 1 + 0.2 * T, 1 + 0.15 * T, 1 + 0.1 * T
        return 6 * R * M ** 2 * D ** 2 / (B ** 2 * T ** 3) + (1 + 0.05 * T) * T
    Ts = free_T_bisect(lambda T: (Jan(T + 1e-5) - Jan(T - 1e-5)) / 2e-5, 1.0, 4.0)
    for scheme in ([], ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]):
        Tn = []
        for N in (20, 40, 80, 160):
            s, out, _ = run(["-problem", di, "-N", str(N)] + scheme)
            ok = s and s["converged"]
            check(ok, "di_T_data N = %d %s: %s" % (N, scheme, out[-300:]))
            if not ok:
                return
            Tn.append(s["T"])
            if not scheme:
                check(s["H_spread"] <= 1e-12 * max(1, abs(s["H_mean"])), "di_T_data: H^d spread %.1e" % s["H_spread"])
        e = [abs(T - Ts) for T in Tn]
        o = [order(e[i], e[i + 1]) for i in range(3)]
        rich = (4 * Tn[3] - Tn[2]) / 3
        print("di_T_data %s: T - T* = %s (T* = %.12f), orders %s, Richardson - T* = %.1e"
              % (scheme or "conserving", ["%.3e" % x for x in e], Ts, ["%.3f" % x for x in o], rich - Ts))
        check(all(1.95 < x < 2.05 for x in o) and abs(rich - Ts) <= 1e-8, "di_T_data: orders %s, Richardson %.1e" % (o, rich - Ts))
    # the envelope theorem for the exact-KKT schemes: d J^d(T)/dT = 0 at the free T^d
    with tempfile.TemporaryDirectory() as d:
        for f0, N, scheme in ((di, 20, ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]),
                              (bq, 20, ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]),
                              (pe, 40, ["-hs_state_scheme", "midpoint", "-hs_costate_scheme", "trapezoidal"])):
            name = os.path.basename(f0)
            free, out, _ = run(["-problem", f0, "-N", str(N)] + scheme)
            if not (free and free["converged"]):
                check(False, "%s: free T did not converge: %s" % (name, out[-300:]))
                continue
            f = os.path.join(d, "fixed.ocp")
            guess = re.search(r"T: free (\S+)", open(f0).read()).group(1)
            open(f, "w").write(open(f0).read().replace("T: free " + guess, "param Tf: %s\nT: Tf" % guess))
            J = {}
            for dl in (2e-3, 1e-3):
                for k in (-1, 1):
                    s, _, _ = run(["-problem", f, "-N", str(N), "-p_Tf", repr(free["T"] + k * dl)] + scheme)
                    J[(dl, k)] = s["J"] if s and s["converged"] else float("nan")
            D = {dl: (J[(dl, 1)] - J[(dl, -1)]) / (2 * dl) for dl in (2e-3, 1e-3)}
            dJ = (4 * D[1e-3] - D[2e-3]) / 3
            s0, _, _ = run(["-problem", f, "-N", str(N), "-p_Tf", repr(free["T"])] + scheme)
            print("%s: free T = %.12f, J = %.12f; fixed-T dJ^d/dT there %.1e (differences %.1e, %.1e); "
                  "mean H^d %.4f (without the terms Q the condition would ask mean H^d = 0)"
                  % (name, free["T"], free["J"], dJ, D[2e-3], D[1e-3], free["H_mean"]))
            check(abs(dJ) <= 1e-7 and abs(s0["J"] - free["J"]) <= 1e-12 * abs(free["J"]),
                  "%s: J^d(T) not stationary at the free T: %.2e" % (name, dJ))
            check(abs(D[1e-3]) < 1e-3 and abs(free["H_mean"]) > 1e-2, "%s: a vacuous check" % name)
    # conserving: H^d constant; multiple shooting = transcription
    for f0 in (bq, pe):
        tr, out, _ = run(["-problem", f0])
        check(tr and tr["converged"] and tr["H_spread"] <= 1e-10 * max(1, abs(tr["H_mean"])),
              "%s conserving: %s" % (f0, tr and (tr["converged"], tr["H_spread"])))
        sh, out, _ = run(["-problem", f0, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
        check(sh and tr and sh["converged"] and abs(sh["T"] - tr["T"]) <= 1e-10 and abs(sh["J"] - tr["J"]) <= 1e-10,
              "%s: shooting T %s vs transcription %s" % (f0, sh and sh["T"], tr and tr["T"]))
        print("%s conserving: T = %.12f, H^d spread %.1e; shooting (4 segments, 2 ranks) T - T = %.1e"
              % (os.path.basename(f0), tr["T"], tr["H_spread"], sh["T"] - tr["T"]))
    # the analytic Jacobian (T column and Q gradient by differences) against PETSc's
    for scheme, extra, tol in ((["gonzalez", "conserving"], [], 1e-6), (["gonzalez", "kkt"], [], 1e-6),
                               (["midpoint", "trapezoidal"], [], 1e-6),
                               (["gonzalez", "conserving"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], 1e-5)):
        s, out, _ = run(["-problem", bq, "-hs_state_scheme", scheme[0], "-hs_costate_scheme", scheme[1],
                         "-snes_test_jacobian", "-snes_max_it", "4"] + extra, expect_rc=None)
        r = jacobian_ratios(out)
        print("bq2_T_data %s/%s %s: -snes_test_jacobian %s" % (scheme[0], scheme[1], extra, ["%.1e" % x for x in r]))
        check(r and max(r) < tol, "bq2_T_data %s %s: Jacobian mismatch %s" % (scheme, extra, r))
    with tempfile.TemporaryDirectory() as d:
        # R(T) that is not positive definite at the guess: a clear error; at a trial T: a diagnosis naming it
        f = os.path.join(d, "badR.ocp")
        open(f, "w").write(open(pe).read().replace("R: 1 + 0.2*T", "R: 2 - T"))
        s, out, rc = run(["-problem", f], expect_rc=None)
        check(rc == 1 and "not symmetric positive definite" in out, "R(T) not positive definite: rc %s %s" % (rc, out[-200:]))
        open(f, "w").write(open(pe).read().replace("R: 1 + 0.2*T", "R: 3.2 - T"))
        s, out, rc = run(["-problem", f], expect_rc=None)
        check(s and not s["converged"] and "data are invalid" in s["diagnosis"], "R(T) at a trial T: %s" % (s and s["diagnosis"]))
        # more controls than 2n (R_T u has m entries): converges, Jacobian, IPOPT (midpoint states: Gonzalez's
        # fallback branch makes PETSc's differences noisy at far iterates, 5e-5 with or without a free T)
        f = os.path.join(d, "m3.ocp")
        open(f, "w").write(open(pe).read().replace("controls: 1", "controls: 3")
                           .replace("B: 1 + 0.1*T", "B: 1 + 0.1*T, 0.5, 0.2*T")
                           .replace("R: 1 + 0.2*T", "R: 1 + 0.2*T, 0, 0.1, 0, 2, 0, 0.1, 0, 1 + 0.1*T"))
        fixed = os.path.join(d, "m3fixed.ocp")  # the same with T fixed at the guess: PETSc's own difference error
        open(fixed, "w").write(open(f).read().replace("T: free 3", "param Tf: 3\nT: Tf"))
        for extra in ([], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"]):
            r = {}
            for g in (f, fixed):
                s, out, _ = run(["-problem", g, "-hs_state_scheme", "midpoint", "-hs_costate_scheme", "trapezoidal",
                                 "-snes_test_jacobian", "-snes_max_it", "3"] + extra, expect_rc=None)
                r[g] = jacobian_ratios(out)
            print("3 controls %s: -snes_test_jacobian %s (T fixed: %s)"
                  % (extra, ["%.1e" % x for x in r[f]], ["%.1e" % x for x in r[fixed]]))
            check(r[f] and r[fixed] and max(r[f]) < 3 * max(r[fixed]) + 1e-6,
                  "3 controls %s: Jacobian mismatch %s (T fixed: %s)" % (extra, r[f], r[fixed]))
        kk, out, _ = run(["-problem", f, "-hs_state_scheme", "midpoint", "-hs_costate_scheme", "trapezoidal"])
        check(kk and kk["converged"], "3 controls: %s" % out[-300:])
        if kk and not os.environ.get("HS_SANITIZED"):
            ip, out, _ = run(["-problem", f, "-hs_state_scheme", "midpoint", "-hs_bvp_type", "ipopt"])
            check(ip and ip["converged"] and abs(ip["T"] - kk["T"]) <= 1e-10, "3 controls: IPOPT T %s vs %s" % (ip and ip["T"], kk["T"]))
        # a continuation in reach keeps its blended target while T (and so the data) moves
        base, _, _ = run(["-problem", di])
        s, out, _ = run(["-problem", di, "-hs_continue", "reach", "-hs_continue_from", "0.5", "-hs_continue_steps", "2"])
        its = [int(x) for x in re.findall(r"continuation reach = \S+\s+converged after (\d+) Newton", out)]
        print("reach continuation: iterations per stage %s, final T %.15f (alone %.15f)" % (its, s["T"], base["T"]))
        check(s and s["converged"] and abs(s["T"] - base["T"]) <= 1e-12 and len(its) == 2 and min(its) >= 2,
              "reach continuation with T in the data: %s %s" % (its, s and s["T"]))
    if not os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded under AddressSanitizer (tools/sanitize.sh)
        for f0 in (di, bq, pe):
            kk, _, _ = run(["-problem", f0, "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])
            ip, out, _ = run(["-problem", f0, "-hs_state_scheme", "gonzalez", "-hs_bvp_type", "ipopt"], ranks=2)
            ok = kk and ip and kk["converged"] and ip["converged"]
            check(ok, "%s IPOPT: %s" % (f0, out[-300:]))
            if not ok:
                continue
            print("%s: IPOPT T %.15f, Newton kkt T %.15f (difference %.1e), J difference %.1e, kkt residual at IPOPT's "
                  "solution %.1e" % (os.path.basename(f0), ip["T"], kk["T"], ip["T"] - kk["T"], ip["J"] - kk["J"], ip["residual_norm"]))
            check(abs(ip["T"] - kk["T"]) <= 1e-10 and abs(ip["J"] - kk["J"]) <= 1e-10 * abs(kk["J"]) and ip["residual_norm"] <= 1e-10,
                  "%s: IPOPT T %r vs Newton %r, |F| %s" % (f0, ip["T"], kk["T"], ip["residual_norm"]))
    if script:  # the continuous optimum, computed independently with scipy
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        p = subprocess.run([py, script, "--quick"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        check(p.returncode == 0, "free_T_data.py failed: " + p.stdout[-2000:])
        if p.returncode:
            return
        cont = json.loads(p.stdout)
        Tc = cont["pendulum_T_data"]["T"]
        Tn = []
        for N in (160, 320):
            s, out, _ = run(["-problem", pe, "-N", str(N)])
            check(s and s["converged"], "pendulum_T_data N = %d: %s" % (N, out[-300:]))
            Tn.append(s["T"] if s else float("nan"))
        rich = (4 * Tn[1] - Tn[0]) / 3
        print("pendulum_T_data: T(160) = %.12f, T(320) = %.12f, Richardson %.12f, continuous (scipy) %.12f: %.1e"
              % (Tn[0], Tn[1], rich, Tc, rich - Tc))
        check(abs(rich - Tc) <= 2e-7 and abs(Tn[1] - Tc) > 10 * abs(rich - Tc), "pendulum_T_data: Richardson %.1e" % (rich - Tc))
        dic = cont["di_T_data"]["T"]
        check(abs(dic - Ts) <= 1e-9, "di_T_data: scipy T* %.12f vs analytic %.12f" % (dic, Ts))


def monitor_norms(out):
    """The |F| of each 'Newton k' progress line, in order."""
    return [float(x) for x in re.findall(r"Newton +\d+  \|F\| = ([0-9.eE+-]+)", out)]


def t_strategy():
    """Issue 12: -hs_strategy auto (the default) converges where Newton from the default guess does not,
    with no option, and says how. The 3-link arm (N = 40), the crane (its default N = 320) and a double
    pendulum (tests/data/double_pendulum.ocp) fail by Newton alone (-hs_strategy newton: exit 2, one
    attempt); by default they converge, summary.json's "strategy" lists the attempts (the first,
    newton, failed; the last converged and is "used") and the screen names the one used. The answers
    are checked independently: the arm's J^d is the extremal known from continuation (3988023.913,
    test multibody), the crane's one of its two known extremals at N = 320, and the double pendulum's
    is conserved to round-off, reproduced by 8-segment shooting on 2 ranks from it, and within 1% of the
    direct problem's (IPOPT) on the same grid (the schemes differ by O(h^2)). The continuation fallback
    (in reach, then in g from 0 by -hs_strategy_continue) reaches the arm's extremal when the direct
    guess is made to fail; a bad -hs_strategy_continue is an error naming it."""
    dp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "double_pendulum.ocp")
    with tempfile.TemporaryDirectory() as tmp:
        s, out, _ = run(["-problem", "manipulator3", "-N", "40", "-hs_strategy", "newton"], ranks=2, expect_rc=2)
        check(s and not s["converged"] and len(s["strategy"]["attempts"]) == 1 and s["strategy"]["used"] is None,
              "arm, Newton only: %s" % str(s and s["strategy"]))
        cases = [("arm", ["-problem", "manipulator3", "-N", "40"]), ("crane", ["-problem", "crane"]),
                 ("double pendulum", ["-problem", dp])]
        for name, args in cases:
            t0 = time.time()
            s, out, _ = run(args, ranks=2, outdir=os.path.join(tmp, name.replace(" ", "_")))
            st = s and s["strategy"]
            print("%s: converged %s, J^d = %s, strategy %s (%.1f s)" % (name, s and s["converged"], s and s["J"],
                                                                      st and [(a["name"], a["status"]) for a in st["attempts"]],
                                                                      time.time() - t0))
            check(s and s["converged"] and st["used"] and st["attempts"][0]["name"] == "newton"
                  and not st["attempts"][0]["converged"] and st["attempts"][-1]["converged"]
                  and st["used"] == st["attempts"][-1]["name"], "%s: %s" % (name, str(st)))
            check(st and ("strategy           " + str(st["used"])) in out, "%s: the screen does not name the strategy" % name)
            if not (s and s["converged"]):
                continue
            hrel = s["H_spread"] / max(1.0, abs(s["H_mean"]))
            check(hrel <= 1e-10 and abs(s["H_spread_relative"] - hrel) <= 1e-3 * hrel and ("%.1e of max(1, |H^d|)" % hrel) in out,
                  "%s: H^d spread %.2e, relative %s" % (name, s["H_spread"], s.get("H_spread_relative")))
            if name == "arm":
                check(rel(s["J"], 3988023.913) < 1e-9, "arm: J^d %r, expected 3988023.913" % s["J"])
            elif name == "crane":
                check(s["N"] == 320 and min(rel(s["J"], 83248.91038), rel(s["J"], 83281.23389)) < 1e-8,
                      "crane: J^d %r is neither known extremal" % s["J"])
            else:
                m, _, _ = run(["-problem", dp, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8", "-hs_init",
                               os.path.join(tmp, "double_pendulum", "trajectory.csv")], ranks=2)
                check(m and m["converged"] and rel(m["J"], s["J"]) < 1e-9, "double pendulum by shooting: %s" % (m and m["J"]))
                d, _, _ = run(["-problem", dp, "-hs_bvp_type", "ipopt"])
                check(d and d["converged"] and abs(d["J"] - s["J"]) < 0.01 * abs(s["J"]),
                      "double pendulum: direct J^d %s vs %s" % (d and d["J"], s["J"]))
        # the continuation fallback: the direct guess made to fail (IPOPT cut to 3 iterations)
        s, out, _ = run(["-problem", "manipulator3", "-N", "40", "-hs_direct_hs_ipopt_max_it", "3",
                         "-hs_strategy_continue", "g=0", "-snes_linesearch_type", "l2"], ranks=2)
        st = s and s["strategy"]
        print("arm, direct guess cut short: %s" % (st and [(a["name"], a["status"]) for a in st["attempts"]]))
        check(s and s["converged"] and st["used"] == "continuation in reach, g=0" and rel(s["J"], 3988023.913) < 1e-9
              and any(a["name"] == "direct guess" and a["status"].startswith("direct solve:") for a in st["attempts"]),
              "arm by continuation: %s" % str(st))
        for bad, what in (("g", "NAME=FROM"), ("gg=0", "no parameter 'gg'"), ("g=x", "is not a number")):
            s, out, _ = run(["-problem", "manipulator3", "-N", "40", "-hs_strategy_continue", bad], expect_rc=1)
            check(what in out, "-hs_strategy_continue %s: %s" % (bad, out[-300:]))


def t_extremal():
    """Issue 12: the wrong-extremal guard (-hs_check_extremal, auto on small grids).
    - The crane at N = 320 has two extremals of the conserving scheme (J^d = 83248.91 and 83281.23,
      test direct_guess). IPOPT on the direct problem (same grid, a minimizer) started from the first
      converges to a strict local minimum (no Hessian regularization in its last step) next to it
      (distance < 0.1), about 1e-6 relative from IPOPT's own from the default guess, far less than the
      conserving extremal's offset from it (3.6): one continuous extremal seen through two
      discretizations, not a wrong one, and the run does not warn. From the second (36 above) IPOPT
      converges or stalls at its acceptable level depending on the extremal's last bits (MUMPS and the
      banded LU give it equal to 1e-9): a local minimum or "did not converge", never a warning.
    - The Duffing oscillator of tests/data/duffing.ocp: single shooting converges (N = 80) to an extremal
      with J^d over 100 times transcription's; it is a strict local minimum of the direct problem, but
      IPOPT from the default guess finds one of transcription's cost (within 1 %): the run warns, the
      transcription run does not. With a stiffer spring (c = 1, A = 2, om = 1) single shooting's
      extremal is not even a minimum: IPOPT started there descends far away, and the run says so. (Both
      with the l2 line search; by backtracking, shooting's default since issue 11, single shooting
      reaches J^d = 8438, from which IPOPT does not converge: the default minimum is compared with the
      extremal's own J^d, and the run warns.)
    - The pendulum's and kepler's extremals are local minima with no lower one; -hs_check_extremal no
      skips the guard."""
    ddir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    # IPOPT from the 83281.23 extremal stalls at Solved_To_Acceptable_Level (|F| ~ 5e-7, its dual
    # infeasibility wandering at 1e-5) or converges, depending on the extremal's last bits (by MUMPS or
    # the banded LU, equal to 1e-9; MUMPS' changed with the Jacobian's exact pattern): either a local
    # minimum or the honest "did not converge", never a warning
    lo, out_lo, _ = run(["-problem", "crane", "-N", "320", "-hs_init", os.path.join(ddir, "crane_m95_N320.csv"),
                         "-hs_linear_solver", "mumps"])
    for ls in ("mumps", "band"):
        hb, out_hb, _ = run(["-problem", "crane", "-hs_initial_guess", "direct", "-hs_linear_solver", ls])
        eb = hb and hb.get("extremal_check")
        print("crane 83281.23 (%s): J^d %s, guard %s" % (ls, hb and hb["J"], eb))
        check(hb and rel(hb["J"], 83281.23389) < 1e-8 and eb and ((eb["local_minimum"] and eb["distance"] < 0.1) or
              (not eb["near_converged"] and "did not converge: no second-order information" in out_hb))
              and not eb["lower_elsewhere"] and "warning" not in out_hb, "crane 83281.23 (%s): %s" % (ls, str(eb)))
    for name, s, out, J in (("crane 83248.91", lo, out_lo, 83248.91038),):
        e = s and s.get("extremal_check")
        print("%s: J^d %s, guard %s" % (name, s and s["J"], e))
        check(s and rel(s["J"], J) < 1e-8 and e and e["local_minimum"] and not e["lower_elsewhere"] and e["distance"] < 0.1
              and abs(e["J_near"] - e["J_default"]) < 1e-5 * abs(J) and "warning" not in out, "%s: %s" % (name, str(e)))
    duff = os.path.join(ddir, "duffing.ocp")
    tr, out_tr, _ = run(["-problem", duff])
    # the extremals below are those Newton reaches with the secant line search (shooting's default before
    # issue 11; with backtracking, single shooting reaches yet another one, J^d = 8436)
    ss, out_ss, _ = run(["-problem", duff, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1", "-snes_linesearch_type", "l2"])
    e, et = ss and ss.get("extremal_check"), tr and tr.get("extremal_check")
    print("duffing: transcription J^d %s, single shooting J^d %s, guard %s" % (tr and tr["J"], ss and ss["J"], e))
    check(tr and ss and ss["converged"] and ss["J"] > 100 * tr["J"] and e and e["local_minimum"] and e["lower_elsewhere"]
          and abs(e["J_default"] - tr["J"]) < 0.01 * tr["J"] and "another extremal has a lower cost" in out_ss,
          "duffing, single shooting: %s" % str(e))
    # (IPOPT from this solution stops at its acceptable level, NLP error 1e-9: a minimum for the guard, as
    # Solve_Succeeded was from a start 1e-14 away before the banded LU's reciprocal pivots)
    check(et and not et["lower_elsewhere"] and et["local_minimum"] and "warning" not in out_tr, "duffing, transcription: %s" % str(et))
    # backtracking: single shooting reaches J^d = 8438, from which IPOPT does not converge: the default minimum is
    # compared with the extremal's own J^d (lower by more than 10 %: a warning)
    s, out, _ = run(["-problem", duff, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"])
    e = s and s.get("extremal_check")
    print("duffing, single shooting by backtracking: J^d %s, guard %s" % (s and s["J"], e))
    check(s and e and s["converged"] and s["J"] > 100 * tr["J"] and e["lower_elsewhere"] and
          (e["near_converged"] or "IPOPT from this solution did not converge" in out) and
          "another extremal has a lower cost" in out, "duffing by backtracking: %s" % str(e))
    s, out, _ = run(["-problem", duff, "-p_c", "1", "-p_om", "1", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1",
                     "-snes_linesearch_type", "l2"])
    e = s and s.get("extremal_check")
    print("duffing c = 1, om = 1, single shooting: J^d %s, guard %s" % (s and s["J"], e))
    check(e and e["moved_away"] and not e["local_minimum"] and e["lower_elsewhere"] and "not a local minimum" in out,
          "duffing c = 1: %s" % str(e))
    for prob in ("pendulum", "kepler"):
        s, out, _ = run(["-problem", prob])
        e = s and s.get("extremal_check")
        check(e and e["local_minimum"] and not e["lower_elsewhere"] and not e["moved_away"] and "warning" not in out,
              "%s: %s" % (prob, str(e)))
    s, out, _ = run(["-problem", "pendulum", "-hs_check_extremal", "no"])
    check(s and "extremal_check" not in s and "extremal check" not in out, "-hs_check_extremal no")


def t_robustness():
    """Issue 12: stopping where the answer is, and failures that keep their work.
    - Noise floor: the 2-link arm (tests/data/arm2.ocp, costates ~1e3) at N = 5000 on 2 ranks reaches
      |F| ~ 5e-8, where the residual's own evaluation error lies. The solve stops as converged
      (CONVERGED_NOISE_FLOOR) at most 2 Newton iterations after the first iterate within 10 nu, and
      the stop is real: 10 more iterations with the floor test off (-hs_snes_noise 0) bring |F| down by
      less than a factor 5 and change J^d by less than 1e-11 relative. Small problems are not
      stopped early: the pendulum still reaches |F| <= 1e-12.
    - A failed shooting step is named: the double pendulum, N = 80, 8 segments stops with
      DIVERGED_FUNCTION_DOMAIN, and the diagnosis names the segment, the step and the reason.
    - A failed continuation keeps its work: reach on the pendulum stops at its fold near 0.35; the
      output holds the last converged step (converged, |F| tiny, "continuation": reached false with
      the value reached), exit 2; without halvings it is the last nominal step (0.3).
    - Pseudo-arclength continuation (-hs_continue_type arclength) on the same path passes the fold,
      reports it (between 0.3 and the natural continuation's last value), follows the branch back down
      (it does not come back to reach = 1: the optimum there lies on another branch) and says so; in g
      from 5 it reaches the direct solve's J.
    - The noise estimates are made where they can change the outcome only: one in the pendulum's solve at
      N = 20000, two in kepler's, which stops at its floor after 6 iterations (its fifth iterate lands
      at 1.4 nu from 670 nu: Newton's quadratic phase, below).
    - Newton's quadratic phase is not taken for the floor: a step that cut |F| tenfold or more from above 100 nu
      does not end the solve. Kepler at N = 1e5 with kkt costates reached |F| = 7 nu in a step that cut |F|
      3000-fold and had stopped there, J^d 3.8e-7 (relative) off the conserving costates' J^d at the same N
      (and IPOPT's, bench/README.md). The two schemes share the state scheme and differ in the costates by
      O(h^2) = 1e-9: they must now agree to 1e-8. Kepler at N = 1e6 (2 ranks, 3.4 GB each; not in the sanitized
      build) landed at 1.4 nu from 830 nu and had stopped there with H^d's spread 4.3e-7, E - W's 5e-8 and J^d
      2.8e-7 off N = 1e5's: the conserving scheme keeps both spreads to round-off (1e-9 and 1e-12 here), and
      J^d is within 1e-8 of N = 1e5's (O(h^2): 2e-10 measured)."""
    arm = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "arm2.ocp")
    dp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "double_pendulum.ocp")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT, "-problem", arm, "-N", "5000", "-o", tmp + "/a"]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        s = json.load(open(tmp + "/a/summary.json")) if os.path.exists(tmp + "/a/summary.json") else None
        norms = monitor_norms(p.stdout)
        ok = p.returncode == 0 and s and s["solver_status"] == "CONVERGED_NOISE_FLOOR" and s["noise_floor"] > 0
        check(ok, "arm2 N = 5000: %s" % p.stdout[-600:])
        if ok:
            nu = s["noise_floor"]
            first = next(i for i, f in enumerate(norms) if f <= 10 * nu)
            print("arm2 N = 5000: noise floor %.2e, first |F| <= 10 nu at iteration %d, stopped at %d with |F| = %.2e"
                  % (nu, first, s["newton_iterations"], s["residual_norm"]))
            check(s["newton_iterations"] - first <= 2 and nu >= 1e-9,
                  "arm2: %d iterations past the floor (nu %.1e)" % (s["newton_iterations"] - first, nu))
            its = s["newton_iterations"] + 10
            cmd2 = cmd[:-1] + [tmp + "/b", "-hs_snes_noise", "0", "-snes_max_it", str(its), "-snes_atol", "0",
                              "-snes_rtol", "0", "-snes_stol", "0", "-hs_snes_roundoff", "0", "-quiet"]
            p2 = subprocess.run(cmd2, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            s2 = json.load(open(tmp + "/b/summary.json")) if os.path.exists(tmp + "/b/summary.json") else None
            check(s2 is not None, "arm2 without the floor test: " + p2.stdout[-400:])
            if s2:
                best = s2["residual_norm"]
                print("arm2: 10 more iterations without the floor test: |F| = %.2e, J^d difference %.1e"
                      % (best, abs(s2["J"] - s["J"]) / abs(s["J"])))
                check(best >= s["residual_norm"] / 5 and abs(s2["J"] - s["J"]) <= 1e-11 * abs(s["J"]),
                      "arm2: the floor was not one: |F| %.2e -> %.2e, J %r vs %r" % (s["residual_norm"], best, s["J"], s2["J"]))
        pe, out, _ = run(["-problem", "pendulum", "-N", "80"])
        check(pe and pe["converged"] and pe["residual_norm"] <= 1e-12, "pendulum N = 80 stopped early: %s" % (pe and pe["residual_norm"]))
        # a failed shooting step is named
        d, out, _ = run(["-problem", dp, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8", "-hs_strategy", "newton",
                         "-hs_linear_solver", "mumps"], ranks=2, expect_rc=2) # with the banded LU Newton converges (28 its) to another extremal, J^d = 206.94
        print("double pendulum, 8 segments: %s: %s" % (d and d["solver_status"], d and d["diagnosis"]))
        check(d and not d["converged"] and re.search(r"segment \d+.*step \d+", d["diagnosis"]),
              "double pendulum shooting: no segment and step named: %s" % (d and d["diagnosis"]))
        # a failed continuation keeps its last converged step
        c, out, rc = run(["-problem", "pendulum", "-hs_continue", "reach", "-hs_continue_from", "0"], expect_rc=2)
        ci = c and c.get("continuation")
        print("reach continuation on the pendulum: %s" % ci)
        check(c and c["converged"] and c["residual_norm"] <= 1e-11 and ci and ci["reached"] is False
              and 0.3 < ci["value"] < 0.4 and "last converged step" in c["diagnosis"],
              "failed continuation: %s" % str(c and (ci, c["diagnosis"], c["converged"], c["residual_norm"])))
        # pseudo-arclength continuation passes the fold where natural continuation stops
        a, out, _ = run(["-problem", "pendulum", "-hs_continue", "reach", "-hs_continue_from", "0",
                         "-hs_continue_type", "arclength"], expect_rc=2)
        folds = [float(v) for v in re.findall(r"fold passed: the branch turns back at reach = ([0-9.eE+-]+)", out)]
        vals = [float(v) for v in re.findall(r"continuation reach = +([0-9.eE+-]+) +converged \(arclength", out)]
        top = vals.index(max(vals)) if vals else 0
        print("arclength on reach: folds at %s; farthest converged point %.6g, then %d points back down to %.3g"
              % (folds, max(vals or [0]), len(vals) - 1 - top, min(vals[top:] or [0])))
        check(len(folds) >= 1 and 0.3 < folds[0] < 0.3525 and vals and len(vals) - 1 - top >= 3 and min(vals[top:]) < 0.3
              and a and a["converged"] and "another branch" in a["diagnosis"],
              "arclength did not pass the fold near 0.35: %s" % out[-600:])
        ai = a and a.get("continuation")
        check(ai and ai["folds"] >= 1 and ai["branch_points"] == 0 and ai["branch_points_tested"] and "branch point" not in out,
              "the fold taken for a branch point: %s" % ai)
        g, out, _ = run(["-problem", "pendulum", "-hs_continue", "g", "-hs_continue_from", "5", "-hs_continue_type", "arclength"])
        base, _, _ = run(["-problem", "pendulum"])
        check(g and base and abs(g["J"] - base["J"]) <= 1e-10 * base["J"] and g["continuation"]["reached"] is True,
              "arclength in g 5 -> 9.81: %s" % str(g and (g["J"], g.get("continuation"))))
        # an interrupted or killed continuation: every converged step was written as it converged
        k, out, rc = run(["-problem", "pendulum", "-hs_continue", "reach", "-hs_continue_from", "0",
                          "-hs_continue_max_halvings", "0"], expect_rc=2)
        ki = k and k.get("continuation")
        check(k and k["converged"] and ki and ki["reached"] is False and abs(ki["value"] - 0.3) < 1e-12,
              "continuation without halvings: %s" % (k and ki))
    # the estimates' cost (bvp/convergence.c): none after a slow step 1e4 c nu above a known floor, none right
    # after one across a small step. At N = 20000 the pendulum makes one (its second slow step, |F| ~ 2e-2 with
    # nu ~ 1e-12, made another), kepler two (its last two steps, 1e-4 long, re-estimated what it had two steps
    # back) and stops at its floor after 6 iterations.
    kk, _, _ = run(["-problem", "kepler", "-N", "100000", "-hs_costate_scheme", "kkt", "-hs_check_extremal", "no"])
    kc, _, _ = run(["-problem", "kepler", "-N", "100000", "-hs_check_extremal", "no"])
    print("kepler N = 1e5: J^d kkt %r after %s iterations, conserving %r after %s: relative difference %.1e"
          % (kk and kk["J"], kk and kk["newton_iterations"], kc and kc["J"], kc and kc["newton_iterations"],
             abs(kk["J"] - kc["J"]) / abs(kc["J"]) if kk and kc else -1))
    check(kk and kc and kk["converged"] and kc["converged"] and abs(kk["J"] - kc["J"]) <= 1e-8 * abs(kc["J"]),
          "kepler N = 1e5: kkt stopped in Newton's quadratic phase")
    if os.environ.get("HS_SANITIZED") != "1" and kc:
        km, _, _ = run(["-problem", "kepler", "-N", "1000000", "-hs_check_extremal", "no"], ranks=2)
        print("kepler N = 1e6: %s after %s iterations, H^d spread %.1e, E - W spread %.1e, J^d %r (N = 1e5: %r)"
              % (km and km["solver_status"], km and km["newton_iterations"], km and km["H_spread"],
                 km and km["energy_work_spread"], km and km["J"], kc["J"]))
        check(km and km["converged"] and km["H_spread"] <= 1e-9 and km["energy_work_spread"] <= 1e-12
              and abs(km["J"] - kc["J"]) <= 1e-8 * abs(kc["J"]), "kepler N = 1e6: stopped in Newton's quadratic phase")
    for prob, want, status, its in (("pendulum", 1, "CONVERGED_FNORM_ABS", 6), ("kepler", 2, "CONVERGED_NOISE_FLOOR", 6)):
        s, out, _ = run(["-problem", prob, "-N", "20000", "-hs_check_extremal", "no", "-log_view"])
        m = re.search(r"^HsNoiseEstimate +(\d+)", out, re.M)
        n = int(m.group(1)) if m else 0
        print("%s N = 20000: %s after %s iterations, |F| %.2e, noise floor %.2e, %d estimates"
              % (prob, s and s["solver_status"], s and s["newton_iterations"], s and s["residual_norm"],
                 s and s["noise_floor"], n))
        check(s and s["solver_status"] == status and s["newton_iterations"] == its and n == want
              and s["residual_norm"] <= 10 * s["noise_floor"], "%s N = 20000: the noise estimates" % prob)


def t_accuracy():
    """Issue 12, accuracy: -hs_extrapolate at N = 1280 (grids 320, 640, 1280) gives J^d of the pendulum
    and kepler within 1e-8 of the known continuous values (DESIGN.md; the pendulum's is checked
    independently by crosscheck_continuous), with an error estimate that covers the true error (within
    a factor 3) and observed orders 2 +- 0.05; a free T too (double integrator, analytic T* = 2.2276,
    tests/data/di_T_data.ocp). -hs_study 4 from N = 80 writes study.json with orders 2 +- 0.1 for J,
    H^d, states, controls and costates, and a PNG. Bad N and bad levels are refused."""
    known = {"pendulum": 6.43694443886, "kepler": 0.734302799278}
    for prob, Jc in known.items():
        s, out, _ = run(["-problem", prob, "-N", "1280", "-hs_extrapolate"], ranks=2)
        e = s and s.get("extrapolation")
        ok = bool(e)
        check(ok, "%s -hs_extrapolate: no extrapolation in summary.json: %s" % (prob, out[-400:]))
        if not ok:
            continue
        err = e["J"] - Jc
        print("%s: J^d(1280) - J* = %.2e, extrapolated - J* = %.2e (estimate %.1e), order %.3f, states +- %.1e"
              % (prob, s["J"] - Jc, err, e["J_error"], e["J_order"], e["states_error"]))
        check(abs(err) <= 1e-8 and abs(err) <= 3 * e["J_error"] + 1e-11 and abs(e["J_order"] - 2) <= 0.05
              and abs(s["J"] - Jc) > 100 * abs(err), "%s: extrapolated J %r (J* %r), estimate %r, order %r"
              % (prob, e["J"], Jc, e["J_error"], e["J_order"]))
        check(e["grids"] == [320, 640, 1280] and "extrapolated J" in out, "%s: grids %s" % (prob, e["grids"]))
    di = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "di_T_data.ocp")
    s, out, _ = run(["-problem", di, "-N", "320", "-hs_extrapolate"])
    e = s and s.get("extrapolation")
    Ts = 2.227554616726
    check(e and abs(e["T"] - Ts) <= 1e-8 and abs(e["T"] - Ts) <= 3 * e["T_error"] + 1e-11,
          "di_T_data extrapolated T: %s" % str(e and (e["T"], e["T_error"], s["T"])))
    if e:
        print("di_T_data: T(320) - T* = %.2e, extrapolated - T* = %.2e (estimate %.1e)" % (s["T"] - Ts, e["T"] - Ts, e["T_error"]))
    with tempfile.TemporaryDirectory() as d:
        s, out, _ = run(["-problem", "pendulum", "-N", "80", "-hs_study", "4"], ranks=2, outdir=d)
        st = json.load(open(os.path.join(d, "study.json"))) if os.path.exists(os.path.join(d, "study.json")) else None
        check(st is not None and "convergence study" in out, "-hs_study: no study.json: " + out[-400:])
        if st:
            lv = st["levels"]
            print("study: N = %s, orders at N = %d: %s" % ([l["N"] for l in lv], lv[2]["N"],
                  {k: round(lv[2][k], 3) for k in lv[2] if k.startswith("order")}))
            check([l["N"] for l in lv] == [80, 160, 320, 640] and
                  all(abs(lv[i][k] - 2) <= 0.1 for i in (1, 2) for k in ("order_J", "order_H", "order_x", "order_u", "order_lambda")
                      if k in lv[i]) and all(k in lv[2] for k in ("order_x", "order_u", "order_lambda")),
                  "study orders: %s" % lv)
            png = os.path.join(d, "study.png")
            check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "study.png missing or not a PNG")
    for args, word in ((["-N", "30", "-hs_extrapolate"], "multiple of 4"), (["-hs_study", "2"], "hs_study"),
                       (["-hs_compare", "-hs_extrapolate"], "cannot be combined")):
        _, out, _ = run(["-problem", "pendulum"] + args, expect_rc=1)
        check("hamshoot: error:" in out and word in out, "%s: %s" % (args, out[-300:]))


def t_no_ipopt():
    """IPOPT missing (HAMSHOOT_IPOPT_LIBRARY names no library; in the sanitized build IPOPT is never
    loaded, bvp/impls/ipopt.c): what uses it only when it can says so and goes on, what asks for it is
    an error naming the cause.
    - -hs_check_extremal auto: the run converges, exit 0, the summary and summary.json say the check was
      not made and why; -hs_check_extremal yes: exit 1 before the solve, the message names IPOPT.
    - -hs_strategy auto on the 3-link arm (N = 40; Newton fails): the direct guess is recorded as
      "IPOPT not available" and the continuation fallback is still tried.
    - -hs_bvp_type ipopt: exit 1, "IPOPT is not available"."""
    env = {"HAMSHOOT_IPOPT_LIBRARY": "libhamshoot-no-such-ipopt.so"}
    s, out, _ = run(["-problem", "pendulum", "-N", "40"], ranks=2, env=env)
    e = s and s.get("extremal_check")
    print("pendulum without IPOPT: converged %s, extremal_check %s" % (s and s["converged"], e))
    check(s and s["converged"] and e and e["made"] is False and "IPOPT is not available" in e["why"]
          and "extremal check     not made: IPOPT is not available" in out, "extremal check without IPOPT: %s" % str(e))
    s, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_check_extremal", "yes"], ranks=2, expect_rc=1, env=env)
    check(s is None and "hamshoot: error: -hs_check_extremal yes: IPOPT is not available" in out,
          "-hs_check_extremal yes without IPOPT: %s" % out[-300:])
    s, out, _ = run(["-problem", "manipulator3", "-N", "40"], ranks=2, expect_rc=None, env=env)
    st = s and s.get("strategy")
    names = st and [(a["name"], a["status"]) for a in st["attempts"]]
    print("arm without IPOPT: %s" % names)
    check(names and ("direct guess", "IPOPT not available") in names
          and any(n.startswith("continuation") for n, _ in names), "strategy without IPOPT: %s" % names)
    _, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_bvp_type", "ipopt"], expect_rc=1, env=env)
    check("hamshoot: error:" in out and "IPOPT is not available" in out, "-hs_bvp_type ipopt without IPOPT: %s" % out[-300:])


def t_branch_point():
    """Issue 12: branch points of the arclength continuation (tests/data/pitchfork.ocp). The extremal q = 0
    of q'' = u with L = u^2/2 - c q^2/2 + q^4/4 loses uniqueness at c* = beta^4 (T = 1), cos(beta)
    cosh(beta) = 1 (the clamped beam's first eigenvalue, found here by Newton's method): two branches
    bifurcate there. Continuing q = 0 in c from 400 to 600:
    - exactly one branch point is reported and no fold (the test function, the sign of the bordered
      Jacobian's determinant, keeps its sign through folds and changes it here); its estimate converges
      to c* at order 2 in h (N = 50, 100, 200; 1000 nominal steps, so that the linear interpolation
      between the two points around it does not matter): orders 2 +- 0.25;
    - the estimate is the same on 2 ranks and by 10-segment shooting (to 1e-6) as on 1 rank, and with 100
      steps it lies in its bracket next to the 1000-step one;
    - the pendulum's reach fold (robustness) is a fold and no branch point; a Krylov linear solver (shooting
      with -hs_shoot_ksp rankblock) cannot test, and summary.json says so;
    - the wrong-extremal guard: IPOPT takes no step from q = 0 (an exact KKT point), so it starts again
      from a perturbed q; below c* that returns (a strict local minimum), above it IPOPT descends away
      (J^d < 0) and the run warns that q = 0 is not a local minimum."""
    pf = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pitchfork.ocp")
    b = 4.73
    for _ in range(30):
        b -= (math.cos(b) * math.cosh(b) - 1) / (-math.sin(b) * math.cosh(b) + math.cos(b) * math.sinh(b))
    cstar = b ** 4
    arc = ["-problem", pf, "-p_c", "600", "-hs_continue", "c", "-hs_continue_from", "400", "-hs_continue_type",
           "arclength", "-hs_check_extremal", "no"]

    def branch(extra, ranks=1):
        s, out, _ = run(arc + extra, ranks=ranks)
        ci = s and s.get("continuation")
        m = re.search(r"branch point passed near c = ([0-9.eE+-]+) \(between ([0-9.eE+-]+) and ([0-9.eE+-]+)", out)
        return ci, m and [float(m.group(i)) for i in (1, 2, 3)]

    est = []
    for N in (50, 100, 200):
        ci, m = branch(["-N", str(N), "-hs_continue_steps", "1000"])
        print("N = %d: continuation %s" % (N, ci))
        check(ci and ci["reached"] and ci["folds"] == 0 and ci["branch_points"] == 1 and ci["branch_points_tested"]
              and m and abs(ci["branch_points_at"][0] - m[0]) < 1e-5 * cstar, "N = %d: one branch point: %s" % (N, ci))
        est.append(ci and ci["branch_points_at"] and ci["branch_points_at"][0] or float("nan"))
    err = [abs(e - cstar) for e in est]
    orders = [math.log2(err[i] / err[i + 1]) if err[i + 1] > 0 else float("nan") for i in range(2)]
    print("c* = %.6f; estimates %s, errors %s, observed orders %s" % (cstar, est, err, orders))
    check(all(abs(o - 2) < 0.25 for o in orders) and err[2] < 2e-3 * cstar, "branch point order: %s" % orders)
    _, one = branch(["-hs_continue_steps", "100"])
    for extra, ranks in (([], 2), (["-hs_bvp_type", "shooting", "-hs_shoot_segments", "10"], 2)):
        _, m = branch(["-hs_continue_steps", "100"] + extra, ranks)
        check(m and one and abs(m[0] - one[0]) < 1e-6 * cstar, "%s on %d ranks: %s against %s" % (extra, ranks, m, one))
    check(one and one[1] < est[1] < one[2] and abs(one[0] - est[1]) < 0.01 * (one[2] - one[1]) + 0.2,
          "100 steps: %s, 1000 steps: %s" % (one, est[1]))
    ci, m = branch(["-hs_continue_steps", "100", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "10",
                    "-hs_shoot_ksp", "rankblock"], 2)
    check(ci and ci["branch_points_tested"] is False and ci["branch_points"] == 0 and not m, "Krylov: %s" % ci)
    for c, minimum in (("400", True), ("700", False)):
        if os.environ.get("HS_SANITIZED"): # the sanitized build has no IPOPT (tools/sanitize.sh)
            break
        s, out, _ = run(["-problem", pf, "-p_c", c])
        e = s and s.get("extremal_check")
        print("q = 0 at c = %s: guard %s" % (c, e))
        check(e and e["perturbed_start"] and e["local_minimum"] is minimum and e["moved_away"] is not minimum
              and (minimum or (e["J_near"] < 0 and "not a local minimum" in out)), "guard at c = %s: %s" % (c, e))


def t_drop():
    """Issue 11, the many-body regime: -pc_type hsdrop (bvp/pcdrop.c), GMRES on the exact Jacobian
    preconditioned by the LU (MUMPS) of its entries above 1e-14 of their row's largest. The node blocks
    are stored whole (4n x 4n); for ncar (quadratic E and ell) all but their few structural entries are
    zero or round-off (c_a of the Gonzalez terms), so the factored matrix is a few percent of the stored
    one. Against -hs_linear_solver mumps (LU of everything) on the same runs: the same Newton iterations,
    J^d to 1e-12 and every state, costate and control to 1e-10 of the largest; on ncar with 12 cars
    (beta = 1e-9 too: stiff, where GMRES must still converge in a few iterations) on 1 and 2 ranks, and
    on the nonlinear planar chain (problems/chain2d.ocp, whose Gonzalez terms vanish at the first iterate,
    lambda = 0, and then appear: the factored pattern must grow, 'pattern 2' or more in -ksp_view). What is
    dropped changes iterations, never the answer: with -pc_hsdrop_tol 1e-3 the chain's factored matrix
    keeps 5 % of the stored entries instead of 45 %, and the same solution is reached with more Krylov
    iterations. GMRES is right-preconditioned, so that its test is on the true residual (left-
    preconditioned, a P made nearly singular by what it drops "converged" to a wrong step: tried). In a
    stiff problem small entries matter: ncar with beta = 1e-9 and -pc_hsdrop_tol 1e-7 (which drops the
    1000 entries between 1e-14 and 1e-7 of their rows' largest) fails, and the run says so (exit 2, no
    converged claim). With beta = 1e-9 and 12 cars the LQ system is so ill-conditioned that any two
    exact solvers differ by cond(J) eps: measured, all with residuals 1.6e-14 .. 9.6e-14, hsdrop against
    MUMPS 4.9e-8, hsdrop against hsband 2.8e-8, MUMPS against hsband 2.1e-8 (of the largest value, 5):
    there 1e-7, and a residual within 10x MUMPS'; on 1 rank the first Newton step's true residual stays
    above 1e-12 though GMRES's own estimate is below 1e-12 relative (also with -ksp_rtol 1e-14), so Newton
    takes a second step (2 against MUMPS' 1; measured): there one more Newton iteration is allowed. The default
    (-hs_linear_solver auto) is hsdrop for the transcription when n > 32 and MUMPS for shooting there;
    -hs_linear_solver drop with shooting is an error naming the option. The branch-point test reads
    hsdrop's determinant (its LU's): along an arclength continuation with 33 cars it equals MUMPS' to 1e-9."""
    chain = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "problems", "chain2d.ocp")
    cases = [(["-problem", "ncar", "-p_cars", "12", "-N", "200"], (1, 2)),
             (["-problem", "ncar", "-p_cars", "12", "-N", "200", "-p_beta", "1e-9"], (1, 2)),
             (["-problem", chain, "-N", "100"], (1, 2)),
             (["-problem", chain, "-N", "100", "-pc_hsdrop_tol", "1e-3"], (2,))]
    its_chain = {}
    for args, ranks in cases:
        args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
        for r in ranks:
            m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
            d, out, _ = run(args + ["-hs_linear_solver", "drop", "-ksp_view"], ranks=r)
            if not (m and d):
                check(False, "%s on %d ranks: no output" % (args, r))
                continue
            check(m["linear_solver"] == "preonly+lu(mumps)" and d["linear_solver"] == "gmres+hsdrop(mumps)",
                  "linear solvers: %s, %s" % (m["linear_solver"], d["linear_solver"]))
            kept = re.findall(r"keeps (\d+) of (\d+) entries \(([0-9.e+-]+)%; pattern (\d+)\)", out)
            keys = [k for k in m["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
            vals = [(float(x[k]), float(y[k])) for x, y in zip(m["_rows"], d["_rows"]) for k in keys if x[k] != ""]
            scale = max([1.0] + [abs(a) for a, _ in vals])
            diff = max([0.0] + [abs(a - c) for a, c in vals]) / scale
            print("%-62s %d ranks: Newton %d / %d, Krylov its %d, J^d %.12g / %.12g, max diff %.1e, kept %s"
                  % (" ".join(args[:8]), r, m["newton_iterations"], d["newton_iterations"], d["ksp_iterations"], m["J"],
                     d["J"], diff, kept[-1] if kept else None))
            hd = d.get("hsdrop")
            check(kept and int(kept[-1][0]) < int(kept[-1][1]) and hd and
                  [hd["kept"], hd["stored"], hd["patterns"]] == [int(kept[-1][0]), int(kept[-1][1]), int(kept[-1][3])],
                  "%s: -ksp_view and summary.json say what hsdrop keeps: %s, %s" % (args, kept[-1:], hd))
            tol, its = (1e-7, 1) if "1e-9" in args else (1e-10, 0)
            check(m["converged"] and d["converged"] and abs(m["newton_iterations"] - d["newton_iterations"]) <= its
                  and abs(m["J"] - d["J"]) <= 1e-12 * max(1, abs(m["J"])) and diff <= tol and len(vals) > 100
                  and d["residual_norm"] <= 10 * m["residual_norm"] + 1e-13,
                  "%s on %d ranks: hsdrop against MUMPS" % (args, r))
            if "ncar" in args and "-pc_hsdrop_tol" not in args:
                check(kept and float(kept[-1][2]) < 10 and d["ksp_iterations"] <= 2 * d["newton_iterations"],
                      "ncar: hsdrop keeps few entries and GMRES needs 1-2 iterations: %s" % (kept,))
            if args[1] == chain and "-pc_hsdrop_tol" in args:
                check(kept and float(kept[-1][2]) < 10 and d["ksp_iterations"] > its_chain[r],
                      "chain2d, tol 1e-3: fewer entries kept, more Krylov iterations (%d, default %s)"
                      % (d["ksp_iterations"], its_chain.get(r)))
            elif args[1] == chain:
                its_chain[r] = d["ksp_iterations"]
                check(kept and int(kept[-1][3]) >= 2, "chain2d: hsdrop's pattern grows once the Gonzalez terms appear")
    # the branch-point test's determinant from hsdrop's LU (of J less its dropped, here exactly zero, entries)
    dets = {}
    for ls in ("drop", "mumps"):
        _, out, _ = run(["-problem", "ncar", "-p_cars", "33", "-N", "40", "-p_beta", "0.01", "-hs_continue", "beta",
                         "-hs_continue_from", "1", "-hs_continue_steps", "3", "-hs_continue_type", "arclength",
                         "-hs_check_extremal", "no", "-hs_linear_solver", ls, "-info"], ranks=2)
        dets[ls] = [(float(m) * 2.0 ** int(e), src) for m, e, src in re.findall(r"det J = ([0-9.e+-]+) 2\^(-?\d+) \((\w+)\)", out)]
    print("arclength, 33 cars: determinants by hsdrop %s, by MUMPS %s" % (dets["drop"][:2], dets["mumps"][:2]))
    check(dets["drop"] and len(dets["drop"]) == len(dets["mumps"])
          and all(abs(a - b) <= 1e-9 * abs(b) for (a, _), (b, _) in zip(dets["drop"], dets["mumps"])),
          "hsdrop's determinants equal MUMPS' LU of everything")
    # dropping entries that matter in a stiff problem: an honest failure
    s, out, rc = run(["-problem", "ncar", "-p_cars", "12", "-N", "200", "-p_beta", "1e-9", "-hs_linear_solver", "drop", "-pc_hsdrop_tol", "1e-7",
                      "-hs_check_extremal", "no", "-hs_strategy", "newton"], expect_rc=2)
    check(s and not s["converged"] and rc == 2, "beta 1e-9, tol 1e-7: not converged (rc %s)" % rc)
    # the defaults, and drop where it does not apply
    for args, want in ((["-problem", "ncar", "-p_cars", "33", "-N", "40"], "gmres+hsdrop(mumps)"),
                       (["-problem", "ncar", "-p_cars", "33", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"],
                        "preonly+lu(mumps)"),
                       (["-problem", "ncar", "-p_cars", "33", "-N", "40", "-hs_linear_solver", "mumps"], "preonly+lu(mumps)"),
                       (["-problem", "ncar", "-p_cars", "3", "-N", "40", "-hs_linear_solver", "drop"], "gmres+hsdrop(mumps)")):
        s, _, _ = run(args + ["-hs_check_extremal", "no"])
        check(s and s["linear_solver"] == want, "%s: %s, not %s" % (args, s and s["linear_solver"], want))
    _, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4",
                     "-hs_linear_solver", "drop"], expect_rc=1)
    check("-hs_linear_solver drop" in out and "transcription" in out, "drop with shooting: %r" % out.strip()[-200:])


def t_band():
    """Issue 11, step 1: -pc_type hsband (bvp/pcband.c), the banded LU with partial pivoting that
    eliminates each rank's interior and solves the interface system on rank 0, against MUMPS
    (-hs_linear_solver mumps) on the same runs: the same Newton iterations, J^d to 1e-12 and every state, costate and
    control to 1e-10 (relative to the largest), with a residual no larger than MUMPS' (x2); on the
    pendulum, kepler, the unstable saddle problem, ncar with beta = 1e-9 (state-costate growth ~
    e^{10 t}), shooting (10 segments) and a free final time at N = 40 (its dense row and column in
    the band); on 1, 2 and 4 ranks. ncar with beta = 1e-9 is solved by one Newton step (an LQ problem):
    there the two solutions differ by cond(J) eps, measured 9.9e-11 (1 rank) and 1.1e-10 (2 ranks)
    relative, while hsband's residual is the smaller (5.2e-14 and 5.4e-14 against MUMPS' 1.6e-12 and
    1.5e-12): 1e-9 there. (In the natural row order hsband needed a step of iterative refinement to get
    there: 1.1e-12 on 2 ranks without. In the staircase order it does not: 4.1e-14 and 4.2e-14 without.
    So the default, -pc_hsband_refine -1, refines only where the band is more than half the matrix, the
    free T at N = 40: without, Newton stops at the noise floor one iteration later with 2.4x MUMPS'
    residual; -ksp_view says which; one step asked for in a narrow band is tested on 2 ranks.) A free T at N = 2000 (a band 16005 wide) and 2
    shooting segments on 2 ranks (too few rows per rank) are outside hsband's limits: it factors by
    MUMPS instead (same iterations and J as MUMPS, -ksp_view says why), or with -pc_hsband_fallback
    false stops with an error naming the limit. (A solve that stops at the noise floor, the free T here, may stop one iteration
    earlier or later: measured 10 against 11, both at |F| ~ 1e-11.) The default (-hs_linear_solver
    auto) is hsband for n <= 32 and a fixed T, hsdrop for 33 cars (t_drop), MUMPS for a free T, or a
    -pc_factor_mat_solver_type given; the determinant hsband computes for the branch-point test gives the same branch point as
    MUMPS' (pitchfork.ocp, 1 to 3 ranks). The rows are factored in staircase order (by their first
    column) and the last rank eliminates bottom-up; kepler on 2 and 3 ranks is also solved with
    -pc_hsband_reverse_last false (every rank but the first with a left spike)."""
    ddir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    cases = [(["-problem", "pendulum", "-N", "400"], (1, 2, 4), 1e-10), (["-problem", "kepler", "-N", "200"], (1, 2, 3), 1e-10),
             (["-problem", "kepler", "-N", "200", "-pc_hsband_reverse_last", "false"], (2, 3), 1e-10),
             (["-problem", "saddle"], (1, 2), 1e-10), (["-problem", "ncar", "-p_beta", "1e-9"], (1, 2), 1e-9),
             (["-problem", "ncar", "-p_beta", "1e-9", "-pc_hsband_refine", "1"], (2,), 1e-9),
             (["-problem", "pendulum", "-N", "400", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "10"], (1, 2), 1e-10),
             (["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "40"], (1,), 1e-10)]
    for args, ranks, tol in cases:
        args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
        for r in ranks:
            m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
            b, out, _ = run(args + ["-pc_type", "hsband"], ranks=r)
            check(m and b and m["linear_solver"] == "preonly+lu(mumps)" and b["linear_solver"] == "preonly+hsband",
                  "linear solvers: %s, %s" % (m and m["linear_solver"], b and b["linear_solver"]))
            if not (m and b):
                check(False, "%s on %d ranks: no output" % (args, r))
                continue
            keys = [k for k in m["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
            vals = [(float(x[k]), float(y[k])) for x, y in zip(m["_rows"], b["_rows"]) for k in keys if x[k] != ""]
            scale = max([1.0] + [abs(a) for a, _ in vals])
            diff = max([0.0] + [abs(a - c) for a, c in vals]) / scale
            print("%-60s %d ranks: Newton %d / %d, J^d %.12g / %.12g, max diff %.1e (%d values)"
                  % (" ".join(args[:6]), r, m["newton_iterations"], b["newton_iterations"], m["J"], b["J"], diff, len(vals)))
            floor = "NOISE_FLOOR" in m["solver_status"] + b["solver_status"] # its last iteration is round-off's
            its_ok = abs(m["newton_iterations"] - b["newton_iterations"]) <= (1 if floor else 0)
            check(m["converged"] and b["converged"] and its_ok
                  and abs(m["J"] - b["J"]) <= 1e-12 * max(1, abs(m["J"])) and diff <= tol and len(vals) > 100
                  and b["residual_norm"] <= 2 * m["residual_norm"] + 1e-13,
                  "%s on %d ranks: hsband against MUMPS" % (args, r))
    # -hs_in_place (the default): U over the Jacobian's own values. The same output files to the byte as without,
    # with the peak memory lower by U's size (kepler, N = 20000: 34 MB of 170); off by itself where something
    # reads the Jacobian after its factorization (bt's slope; basic, whose failures SNES tests with J^T F; its views;
    # a KSP monitor, for which KSPPREONLY multiplies; -info; a Krylov solve) or the
    # Jacobian is not refilled whole (shooting); a Newton solve that ends on a failed line search
    # (manipulator3, -hs_strategy newton: SNES' local-minimum test would read the Jacobian) ends the same way.
    inplace_re = r"U: (\d+) entries on rank 0, (\d+) of them in place"
    same_files = lambda d1, d2: all(filecmp.cmp(os.path.join(d1, f), os.path.join(d2, f), shallow=False)
                                    for f in ("trajectory.csv", "intervals.csv")) # byte for byte
    for args, ranks in ((["-problem", "kepler", "-N", "20000"], (1, 2, 3)), (["-problem", "saddle"], (1, 2)),
                        (["-problem", "manipulator3", "-hs_strategy", "newton"], (1,))):
        for r in ranks:
            args2 = args + ["-hs_check_extremal", "no"]
            d_off, d_on = tempfile.mkdtemp(), tempfile.mkdtemp()
            rc = 2 if "manipulator3" in args else 0 # not converged
            off, _, _ = run(args2 + ["-hs_in_place", "false", "-ksp_view"], ranks=r, outdir=d_off, expect_rc=rc)
            on, out, _ = run(args2 + ["-ksp_view"], ranks=r, outdir=d_on, expect_rc=rc)
            m = re.findall(inplace_re, out)
            same = off and on and same_files(d_off, d_on)
            used = m and int(m[-1][1]) > 0.9 * int(m[-1][0])
            mem = on and off and (on["peak_memory_mb"]["max"], off["peak_memory_mb"]["max"])
            print("%-50s %d rank(s): in place %s of %s U entries; output files the same: %s; peak memory %s MB (%s without); %s"
                  % (" ".join(args), r, m and m[-1][1], m and m[-1][0], same, mem and mem[0], mem and mem[1],
                     on and on["solver_status"]))
            check(same and used and on["solver_status"] == off["solver_status"], "%s on %d ranks: in place" % (args, r))
            if "20000" in args: # U is 8 bytes an entry
                check(mem[0] <= mem[1] - 0.5 * 8e-6 * int(m[-1][0]), "%s on %d ranks: peak memory %s" % (args, r, mem))
            shutil.rmtree(d_off, ignore_errors=True)
            shutil.rmtree(d_on, ignore_errors=True)
    for extra in (["-snes_linesearch_type", "bt"], ["-snes_linesearch_type", "basic"], ["-ksp_view_mat", "ascii:/dev/null"],
                  ["-ksp_view_pmat", "ascii:/dev/null"], ["-ksp_monitor"], ["-info", ":pc"],
                  ["-ksp_type", "gmres", "-pc_type", "hsband"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "10"]):
        s, out, _ = run(["-problem", "kepler", "-N", "200", "-hs_check_extremal", "no", "-ksp_view"] + extra)
        m = re.findall(inplace_re, out)
        print("kepler N = 200 %s: in place %s of %s U entries" % (" ".join(extra), m and m[-1][1], m and m[-1][0]))
        check(s and s["converged"] and m and int(m[-1][1]) == 0, "%s: not in place" % extra)
    # -pc_hsband_avx2: the elimination's AVX2 version (the default where built and the processor has AVX2) and
    # the build's default one give the same output files to the byte (elementwise loops, no FMA)
    for r in (1, 2):
        dirs, versions = [], []
        for flag in ("true", "false"):
            d = tempfile.mkdtemp()
            _, out, _ = run(["-problem", "kepler", "-N", "20000", "-hs_check_extremal", "no", "-ksp_view", "-pc_hsband_avx2",
                             flag], ranks=r, outdir=d)
            dirs.append(d)
            versions.append(re.findall(r"the elimination's (\w+) version", out)[-1:])
        same = same_files(dirs[0], dirs[1])
        print("kepler N = 20000, %d rank(s): elimination versions %s, output files the same: %s" % (r, versions, same))
        check(same and versions[1] == ["default"] and versions[0] in (["AVX2"], ["default"]),
              "-pc_hsband_avx2 on %d ranks: %s, same %s" % (r, versions, same))
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    # the refinement steps by the band's width (-pc_hsband_refine -1), or as asked
    for args, steps in ((["-problem", "kepler", "-N", "200"], "0 refinement step(s) (by the band's width)"),
                        (["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "40"], "1 refinement step(s) (by the band's width)"),
                        (["-problem", "kepler", "-N", "200", "-pc_hsband_refine", "2"], "2 refinement step(s)\n")):
        _, out, _ = run(args + ["-pc_type", "hsband", "-hs_check_extremal", "no", "-ksp_view"])
        check(steps in out, "%s: %r not in -ksp_view" % (args, steps))
    # peak memory per rank in summary.json (its scaling is measured by bench/band_bench.py, not here)
    for r in (1, 2):
        s, out, _ = run(["-problem", "pendulum", "-N", "400", "-hs_check_extremal", "no"], ranks=r)
        pm = s and s.get("peak_memory_mb")
        check(pm and 5 < pm["min"] <= pm["mean"] <= pm["max"] < 1e5 and "peak memory" in out, "peak memory: %s" % pm)
    # the default (-hs_linear_solver auto): the band for n <= 32 and a fixed T
    for args, want in ((["-problem", "pendulum", "-N", "40"], "preonly+hsband"),
                       (["-problem", "pendulum", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], "preonly+hsband"),
                       (["-problem", "ncar", "-p_cars", "32", "-N", "40"], "preonly+hsband"),
                       (["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "40"], "preonly+lu(mumps)"),
                       (["-problem", "pendulum", "-N", "40", "-pc_factor_mat_solver_type", "mumps"], "preonly+lu(mumps)"),
                       (["-problem", "pendulum", "-N", "40", "-hs_linear_solver", "mumps"], "preonly+lu(mumps)")):
        s, _, _ = run(args + ["-hs_check_extremal", "no"])
        check(s and s["linear_solver"] == want, "%s: %s, not %s" % (args, s and s["linear_solver"], want))
    # the branch-point test reads hsband's determinant as it reads MUMPS'
    pf = os.path.join(ddir, "pitchfork.ocp")
    for r in (1, 2, 3):
        got = []
        for ls in ("mumps", "band"):
            s, _, _ = run(["-problem", pf, "-p_c", "600", "-hs_continue", "c", "-hs_continue_from", "400", "-hs_continue_steps",
                           "100", "-hs_continue_type", "arclength", "-hs_check_extremal", "no", "-hs_linear_solver", ls], ranks=r)
            got.append(s and s["continuation"]["branch_points_at"])
        print("pitchfork on %d ranks, branch points by MUMPS and by hsband: %s" % (r, got))
        check(got[0] and got[1] and len(got[0]) == len(got[1]) == 1 and abs(got[0][0] - got[1][0]) < 1e-8 * got[0][0],
              "branch points on %d ranks: %s" % (r, got))
    # outside its limits hsband factors by MUMPS (-pc_hsband_fallback, default), or stops with an error
    for args, word in ((["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "2000"], "wide"),
                       (["-problem", "pendulum", "-N", "400", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "2"], "too few")):
        for r in ((1, 2) if "shooting" in args else (1,)):
            if "shooting" in args and r == 1:
                continue
            m, _, _ = run(args + ["-hs_linear_solver", "mumps", "-hs_check_extremal", "no"], ranks=r)
            b, out, _ = run(args + ["-pc_type", "hsband", "-hs_check_extremal", "no", "-ksp_view"], ranks=r)
            check(m and b and b["converged"] and b["newton_iterations"] == m["newton_iterations"]
                  and abs(b["J"] - m["J"]) <= 1e-12 * abs(m["J"]) and "not used" in out and word in out,
                  "%s: the fallback: %s" % (args, out[-300:]))
            _, out, _ = run(args + ["-pc_type", "hsband", "-pc_hsband_fallback", "false"], ranks=r, expect_rc=1)
            check("hamshoot: error: -pc_type hsband:" in out and word in out, "%s without fallback: %s" % (args, out[-300:]))


def t_linesearch():
    """Issue 11: the line search hsbt (bvp/linesearch.c), the Newton formulations' default: PETSc's
    backtracking (bt) without its product by the Jacobian where the Newton direction comes from a direct
    factorization of this iterate's Jacobian (J Y = F to round-off, so the slope is -||F||^2).
    - Against bt on runs that backtrack (single shooting of the pendulum and kepler, kepler with 4
      segments on 2 ranks; hsbt's monitor lists the shortened steps): the same status, Newton iterations
      and J^d to 1e-12. The slopes differ by round-off only, so the steps are the same.
    - The product is gone: -log_view lists no MatMult for the pendulum (hsband, no refinement) with hsbt,
      and one per Newton iteration with bt.
    - The product is kept where J Y = F is not exact: a Krylov solve (-ksp_type gmres), a lagged Jacobian
      (-snes_lag_jacobian 2), hsdrop, MUMPS with null-pivot detection or static pivoting; the monitor says
      which slope it took. A step cut to -snes_linesearch_maxstep (single shooting of the pendulum, cut to
      10) keeps the exact slope, scaled: the same steps as bt.
    - -snes_linesearch_order 1 is refused with a message naming it.
    - The transcription writes the Jacobian's values in place and does not assemble it (bvp/impls/
      transcription.c); the linear solver must still see a new matrix at every Newton iteration: on 1 and 2
      ranks, hsband's elimination (HsBandElim) and MUMPS' numeric factorization (MatLUFactorNum) run once
      per Newton iteration, and the iterations are the same as on 1 rank with hsband (a stale factorization
      would cost Newton its quadratic convergence)."""
    cases = [(["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], 1),
             (["-problem", "kepler", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], 1),
             (["-problem", "kepler", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], 2),
             (["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1", "-snes_linesearch_maxstep",
               "10"], 1)]
    for args, ranks in cases:
        args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
        h, out, _ = run(args + ["-snes_linesearch_monitor"], ranks=ranks)
        b, _, _ = run(args + ["-snes_linesearch_type", "bt"], ranks=ranks)
        back = len(re.findall(r"Line search: lambda [0-9.e+-]+ gnorm", out))
        exact = len(re.findall(r"\(slope -fnorm\^2[;)]", out))
        ok = h and b and h["solver_status"] == b["solver_status"] and h["newton_iterations"] == b["newton_iterations"] \
            and abs(h["J"] - b["J"]) <= 1e-12 * abs(b["J"])
        print("%-60s %d rank(s): hsbt %s %s its J %.15g (%d backtracking steps, %d exact slopes); bt %s %s its J %.15g"
              % (" ".join(args[:6]), ranks, h and h["solver_status"], h and h["newton_iterations"], h and h["J"], back,
                 exact, b and b["solver_status"], b and b["newton_iterations"], b and b["J"]))
        scaled = "-snes_linesearch_maxstep" not in args or "step scaled to the maximum step" in out
        check(ok and h["converged"] and back >= 1 and exact == h["newton_iterations"] and scaled,
              "%s: hsbt against bt" % " ".join(args))
    pend = ["-problem", "pendulum", "-N", "400", "-hs_check_extremal", "no"]
    for ls, want in (("hsbt", 0), ("bt", None)):
        s, out, _ = run(pend + ["-snes_linesearch_type", ls, "-log_view"])
        m = re.search(r"^MatMult +(\d+)", out, re.M)
        n = int(m.group(1)) if m else 0
        print("pendulum N = 400, %s: %d MatMult in -log_view, %s Newton iterations" % (ls, n, s and s["newton_iterations"]))
        check(s and s["converged"] and n == (s["newton_iterations"] if want is None else want),
              "%s: %d products with the Jacobian" % (ls, n))
    for extra in (["-ksp_type", "gmres", "-pc_type", "hsband"], ["-snes_lag_jacobian", "2"], ["-hs_linear_solver", "drop"],
                  ["-hs_linear_solver", "mumps", "-mat_mumps_icntl_24", "1"],
                  ["-hs_linear_solver", "mumps", "-mat_mumps_cntl_4", "1e-12"], ["-hs_linear_solver", "mumps"]):
        s, out, _ = run(pend + extra + ["-snes_linesearch_monitor"])
        by_product = len(re.findall(r"\(slope by J Y[;)]", out))
        exact = len(re.findall(r"\(slope -fnorm\^2[;)]", out))
        want_exact = extra[-1] == "mumps"
        print("pendulum N = 400 %s: %d slopes by the product, %d exact" % (" ".join(extra), by_product, exact))
        check(s and s["converged"] and (exact > 0 and by_product == 0 if want_exact else by_product > 0 and exact == 0),
              "%s: the slope: %d by product, %d exact" % (extra, by_product, exact))
    ref = None
    for ranks, extra, event in ((1, [], "HsBandElim"), (2, [], "HsBandElim"), (2, ["-hs_linear_solver", "mumps"], "MatLUFactorNum")):
        s, out, _ = run(pend + extra + ["-log_view"], ranks=ranks)
        m = re.search(r"^%s +(\d+)" % event, out, re.M)
        n = int(m.group(1)) if m else -1
        ref = ref or (s and s["newton_iterations"])
        print("pendulum N = 400 %s, %d rank(s): %d %s for %s Newton iterations" % (" ".join(extra), ranks, n, event,
                                                                                 s and s["newton_iterations"]))
        check(s and s["converged"] and s["newton_iterations"] == ref and n == ref,
              "%s on %d ranks: %d factorizations for %s iterations (1 rank: %s)" % (extra, ranks, n, s and s["newton_iterations"], ref))
    _, out, _ = run(pend + ["-snes_linesearch_order", "1"], expect_rc=1)
    check("-snes_linesearch_order 1" in out and "hsbt" in out, "-snes_linesearch_order 1: %s" % out[-300:])


TESTS = {"drop": t_drop, "init": t_init, "multibody": t_multibody, "crosscheck_ncar": t_crosscheck_ncar, "ncar": t_ncar, "terminal": t_terminal, "ocp_errors": t_ocp_errors, "continuation": t_continuation, "saddle_lq": t_saddle_lq, "krylov": t_krylov, "instability": t_instability, "shooting_equivalence": t_shooting_equivalence, "conservation": t_conservation, "direct_order": t_direct_order, "kepler_order": t_kepler_order,
         "ranks": t_ranks, "jacobian": t_jacobian, "crosscheck": t_crosscheck, "errors": t_errors,
         "example": t_example, "example_c": t_example_c,
         "bigproblems": t_bigproblems, "ipopt": t_ipopt, "compare": t_compare, "direct_guess": t_direct_guess,
         "checkpoint": t_checkpoint, "reliability": t_reliability, "free_time": t_free_time,
         "problem_format": t_problem_format, "configuration_forces": t_configuration_forces,
         "free_time_data": t_free_time_data, "robustness": t_robustness, "accuracy": t_accuracy,
         "strategy": t_strategy, "extremal": t_extremal, "no_ipopt": t_no_ipopt,
         "branch_point": t_branch_point, "band": t_band, "linesearch": t_linesearch}

if __name__ == "__main__":
    TESTS[sys.argv[3]](*sys.argv[4:])
    print("%d passed, %d failed" % (PASSES[0], len(FAILS)))
    sys.exit(1 if FAILS else 0)
