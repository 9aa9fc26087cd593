#!/usr/bin/env python3
"""The evidence behind HS_NOISE_SINGULAR (bvp/interface/convergence.c, NoiseStep; issue 38).

At every noise-floor decision NoiseStep computes the noise's own Newton step z = J(X)^{-1} e (e a sample of the
residual's evaluation error) and refuses the floor's verdict (SINGULAR_AT_NOISE_FLOOR, exit 2) where
r > HS_NOISE_SINGULAR = 1e-3, r the larger of ||z||_2 / ||X||_2 and, where X is laid out by node (the
transcriptions), max over the fields f of ||z_f||_2 / max(||X_f||_2, the median nonzero field's size). This script runs
two classes of cases with -info :hs and reads r and the verdict from NoiseStep's -info line at each decision:

  well-posed  the repository's problems (problems/*.ocp, tests/data/*.ocp, the built-in C problems) where the solve
              ends at the noise floor: large N, the round-off stop off and tight SNES tolerances (so that every
              solve ends at the floor), extreme units (-p_...), conserving4, shooting, 1 and 2 ranks.
              The floor must not be refused as singular here.
  singular    end conditions over-determined in effect: p_y fixed at both ends where its rate is real but far below
              p_y's round-off (1e-16 .. 1e-300, in V or in M_yy), y(T) fixed where the (nearly) conserved p_y
              determines it, in several units, sizes, ranks and formulations. The floor must never vouch here.

It prints one row per run (case, class, exit status, solver_status, the decisions' r: smallest and largest, and
their verdicts), then the largest r among the well-posed floors, the smallest among the singular ones, and every
case on the wrong side of the threshold.

    python3 bench/noise_singular.py                      # build/hamshoot, mpiexec from PATH, all cases
    python3 bench/noise_singular.py --only singular      # one class; --quick: skip the large-N cases
    python3 bench/noise_singular.py --hamshoot build/hamshoot --mpiexec $(which mpiexec) --json out.json

stdlib only. Exit status 1 if a case is on the wrong side of the threshold (a false refusal or a singular floor
vouched), else 0.
"""
import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THRESHOLD = 1e-3  # HS_NOISE_SINGULAR
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1",
           OMPI_MCA_odls_base_sigkill_timeout="0")
# NoiseStep's -info line (one per decision; on 2 ranks each rank prints it, "[0] " keeps rank 0's)
DECISION = re.compile(r"^\[0\] <hs> NoiseStep\(\): the Newton step from the floor \S+, the noise's \S+: \S+ times it, "
                      r"the noise's (\S+) of \|\|X\|\|, (\S+) of its fields: r = (\S+) \(singular above \S+\): "
                      r"(solved|not solved|singular)$", re.M)
CURVATURE = re.compile(r"^\[0\] <hs> NoiseIsNoise\(\): noise floor \S+ at delta, \S+ at delta/10: curvature$", re.M)
UNSOLVED = re.compile(r"^\[0\] <hs> NoiseStep\(\): the Newton steps from the floor not computed", re.M)

# Force the solve to end at the noise floor: no round-off stop, no SNES tolerance that could end it first.
FLOOR = ["-hs_snes_roundoff", "0", "-snes_atol", "1e-300", "-snes_rtol", "0", "-snes_stol", "0"]
NOCHECK = ["-hs_check_extremal", "no"]

# tests/hs_security26.py's problem: x controlled, y free of the control, p_y's rate c*V_y(y) (or M_yy's y-part)
RO_OCP = ("problem: ro\nparam c: 1\nparam m: 1\ncoordinates: x, y\ncontrols: 1\nmass: m, 0, 0, m*(%s)\n"
          "potential: 0.5*x^2 + c*(%s)\nB: 1, 0\nR: 1\nT: 2\nN: 20\nx0: 0, 0, 0, 0.5\nxT: 1, %s, 0, %s\n")


def problem_files():
    """Every problem file of the repository (problems/, tests/data/; examples/ holds run files, not problems)."""
    return sorted(glob.glob(os.path.join(ROOT, "problems", "*.ocp")) + glob.glob(os.path.join(ROOT, "tests", "data",
                                                                                               "*.ocp")))


def well_posed(quick):
    """(name, ranks, args, ocp text or None): cases whose floors must vouch."""
    c = []
    for f in problem_files():  # every problem file at its own N, forced to end at its floor
        with open(f) as h:  # a force or a control cost: conserving4 alone solves it (docs/controls.md)
            c4 = ["-hs_scheme", "conserving4"] if re.search(r"^(force|control_cost):", h.read(), re.M) else []
        c.append(("%s.ocp floor" % os.path.basename(f)[:-4], 1, ["-problem", f] + c4 + FLOOR + NOCHECK, None))
    for p in ("pendulum", "kepler", "manipulator3", "saddle", "ncar", "crane"):  # the built-in C problems
        c.append(("%s (C) floor" % p, 1, ["-problem", p] + FLOOR + NOCHECK, None))
        c.append(("%s (C) floor 2 ranks" % p, 2, ["-problem", p] + FLOOR + NOCHECK, None))
        c.append(("%s (C) shooting floor" % p, 1, ["-problem", p, "-hs_bvp_type", "shooting"] + FLOOR + NOCHECK,
                  None))
        c.append(("%s (C) conserving4 floor" % p, 1, ["-problem", p, "-hs_scheme", "conserving4"] + FLOOR + NOCHECK,
                  None))
    arm = os.path.join(ROOT, "tests", "data", "arm2.ocp")
    duff = os.path.join(ROOT, "tests", "data", "duffing.ocp")
    pend = os.path.join(ROOT, "problems", "pendulum.ocp")
    c += [("kepler N=2000", 1, ["-problem", "kepler", "-N", "2000"] + NOCHECK, None),
          ("arm2 N=1280", 1, ["-problem", arm, "-N", "1280"] + NOCHECK, None),
          ("duffing N=400", 1, ["-problem", duff, "-N", "400"] + NOCHECK, None),
          ("duffing N=400 shooting", 1, ["-problem", duff, "-N", "400", "-hs_bvp_type", "shooting"] + NOCHECK, None),
          ("pendulum.ocp N=2000 floor", 1, ["-problem", pend, "-N", "2000"] + FLOOR + NOCHECK, None),
          ("pendulum.ocp m=1e20 floor", 1, ["-problem", pend, "-p_m", "1e20"] + FLOOR + NOCHECK, None),
          ("pendulum.ocp m=1e-20 floor", 1, ["-problem", pend, "-p_m", "1e-20"] + FLOOR + NOCHECK, None),
          ("pendulum.ocp g=1e8 floor", 1, ["-problem", pend, "-p_g", "1e8"] + FLOOR + NOCHECK, None),
          ("pendulum.ocp l=1e-6 floor", 1, ["-problem", pend, "-p_l", "1e-6"] + FLOOR + NOCHECK, None),
          ("pendulum.ocp conserving4 2 ranks", 2, ["-problem", pend, "-N", "400", "-hs_scheme", "conserving4"] +
           FLOOR + NOCHECK, None),
          ("arm2 shooting floor", 1, ["-problem", arm, "-N", "200", "-hs_bvp_type", "shooting"] + FLOOR + NOCHECK,
           None),
          ("arm2 conserving4 2 ranks", 2, ["-problem", arm, "-N", "400", "-hs_scheme", "conserving4"] + FLOOR +
           NOCHECK, None),
          ("ro: p_y(T) free, rate 1e-300", 1, ["-problem", "ro.ocp"] + FLOOR + NOCHECK,
           RO_OCP % ("1", "1e-300*sin(y)", "*", "*")),
          ("ro: p_y(T) free, c=1e20", 1, ["-problem", "ro.ocp", "-p_c", "1e20"] + FLOOR + NOCHECK,
           RO_OCP % ("1", "sin(y)", "*", "*")),
          ("ro: p_y(T) fixed, rate 1 (real)", 1, ["-problem", "ro.ocp"] + FLOOR + NOCHECK,
           RO_OCP % ("1", "sin(y)", "*", "0.5"))]
    if not quick:
        c += [("kepler N=20000", 1, ["-problem", "kepler", "-N", "20000"] + NOCHECK, None),
              ("kepler N=20000 2 ranks", 2, ["-problem", "kepler", "-N", "20000"] + NOCHECK, None),
              ("kepler N=1e5", 1, ["-problem", "kepler", "-N", "100000", "-hs_snes_polish", "0"] + NOCHECK, None),
              ("arm2 N=5000 2 ranks", 2, ["-problem", arm, "-N", "5000"] + NOCHECK, None),
              ("pendulum N=20000 floor", 1, ["-problem", "pendulum", "-N", "20000"] + FLOOR + NOCHECK, None),
              ("kepler N=20000 shooting floor", 1, ["-problem", "kepler", "-N", "20000", "-hs_bvp_type", "shooting"] +
               FLOOR + NOCHECK, None)]
    return c


def singular(quick):
    """(name, ranks, args, ocp text): end conditions over-determined in effect; their floors must never vouch."""
    c = []
    for rate in ("1e-16", "1e-18", "1e-20", "1e-50", "1e-100", "1e-200", "1e-300"):
        c.append(("ro V_y %s*sin(y), p_y(T) fixed" % rate, 1, ["-problem", "ro.ocp"] + NOCHECK,
                  RO_OCP % ("1", rate + "*sin(y)", "*", "0.5")))
        c.append(("ro M_yy 1+%s*sin(y), p_y(T) fixed" % rate, 1, ["-problem", "ro.ocp"] + NOCHECK,
                  RO_OCP % ("1 + %s*sin(y)" % rate, "0", "*", "0.5")))
        c.append(("ro V_y %s*sin(y), y(T) fixed" % rate, 1, ["-problem", "ro.ocp"] + NOCHECK,
                  RO_OCP % ("1", rate + "*sin(y)", "1", "*")))
    v300 = RO_OCP % ("1", "1e-300*sin(y)", "*", "0.5")
    v20 = RO_OCP % ("1", "1e-20*sin(y)", "*", "0.5")
    for name, ranks, extra, text in (
            ("1e-300, p_y(T)=0.5, x(T)=1 both fixed, y(T) fixed", 1, [], RO_OCP % ("1", "1e-300*sin(y)", "1", "0.5")),
            ("1e-300, the floor forced", 1, FLOOR, v300),
            ("1e-300, m=1e20", 1, ["-p_m", "1e20"], v300),
            ("1e-300, m=1e-20", 1, ["-p_m", "1e-20"], v300),
            ("1e-20, c=1e-20", 1, ["-p_c", "1e-20"], v20),
            ("1e-20, N=2000", 1, ["-N", "2000"], v20),
            ("1e-300, 2 ranks", 2, [], v300),
            ("1e-20, 2 ranks N=400", 2, ["-N", "400"], v20),
            ("1e-300, shooting", 1, ["-hs_bvp_type", "shooting"], v300),
            ("1e-20, shooting", 1, ["-hs_bvp_type", "shooting"], v20),
            ("1e-300, conserving4", 1, ["-hs_scheme", "conserving4"], v300),
            ("1e-300, direct guess", 1, ["-hs_strategy", "newton", "-hs_initial_guess", "direct"], v300),
            ("1e-20, direct guess", 1, ["-hs_strategy", "newton", "-hs_initial_guess", "direct"], v20),
            ("1e-300, direct guess 2 ranks", 2, ["-hs_strategy", "newton", "-hs_initial_guess", "direct"], v300)):
        c.append(("ro " + name, ranks, ["-problem", "ro.ocp"] + extra + NOCHECK, text))
    if not quick:
        c.append(("ro 1e-300, N=20000", 1, ["-problem", "ro.ocp", "-N", "20000"] + NOCHECK, v300))
    return c


def run(exe, mpiexec, ranks, args, text, tmp, timeout):
    """(exit status, summary dict, decisions [(r, verdict)], curvature rejections, seconds)."""
    d = tempfile.mkdtemp(dir=tmp)
    if text:
        with open(os.path.join(d, "ro.ocp"), "w") as f:
            f.write(text)
    cmd = ([mpiexec, "--oversubscribe", "-n", str(ranks)] if ranks > 1 else []) + [exe] + args + [
        "-o", "out", "-info", ":hs", "-quiet"]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=d, env=ENV, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        rc, out = "timeout", out.decode(errors="replace") if isinstance(out, bytes) else out
    secs = time.time() - t0
    s = {}
    if os.path.isfile(os.path.join(d, "out", "summary.json")):
        with open(os.path.join(d, "out", "summary.json")) as f:
            s = json.load(f)
    dec = [(float(m.group(3)), m.group(4)) for m in DECISION.finditer(out)]
    dec += [(math.nan, "no solve") for _ in UNSOLVED.finditer(out)]
    return rc, s, dec, len(CURVATURE.findall(out)), secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hamshoot", default=os.path.join(ROOT, "build", "hamshoot"))
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--only", choices=("well-posed", "singular"))
    ap.add_argument("--quick", action="store_true", help="skip the large-N cases")
    ap.add_argument("--match", default="", help="only the cases whose name contains this")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    exe = os.path.abspath(a.hamshoot)
    cases = [("well-posed",) + x for x in well_posed(a.quick) if a.only in (None, "well-posed")] + \
            [("singular",) + x for x in singular(a.quick) if a.only in (None, "singular")]
    cases = [x for x in cases if a.match in x[1]]
    rows, wrong, notes = [], [], []
    print("%-52s %-10s %4s %-28s %3s %9s %9s  %s" % ("case", "class", "exit", "solver_status", "dec", "r min", "r max",
                                                     "verdicts"))
    with tempfile.TemporaryDirectory() as tmp:
        for cls, name, ranks, args, text in cases:
            rc, s, dec, curv, secs = run(exe, a.mpiexec, ranks, args, text, tmp, a.timeout)
            rs = [r for r, _ in dec if not math.isnan(r)]
            verdicts = ",".join(sorted(set(v for _, v in dec))) + (" curvature x%d" % curv if curv else "")
            status = s.get("solver_status", "-")
            print("%-52s %-10s %4s %-28s %3d %9s %9s  %s" % (
                name[:52], cls, rc, status[:28], len(dec), "%.2e" % min(rs) if rs else "-",
                "%.2e" % max(rs) if rs else "-", verdicts), flush=True)
            row = dict(case=name, cls=cls, ranks=ranks, args=args, exit=rc, status=status,
                       converged=s.get("converged"), r=rs, verdicts=[v for _, v in dec], curvature=curv,
                       seconds=round(secs, 2))
            rows.append(row)
            # wrong side: a well-posed floor refused as singular; a singular case vouched at its floor or converged
            if cls == "well-posed" and any(v == "singular" for _, v in dec):
                wrong.append((name, "a well-posed floor refused as singular"))
            if cls == "singular" and (s.get("converged") or rc == 0 or "solved" in row["verdicts"]):
                wrong.append((name, "a singular case vouched for (exit %s, r %s, verdicts %s)" % (rc, rs, verdicts)))
            elif cls == "singular" and any(r <= THRESHOLD for r in rs):
                notes.append((name, "r %s at or below the threshold, refused by the other tests (%s)" % (rs, verdicts)))
    wp = [r for x in rows if x["cls"] == "well-posed" for r in x["r"]]
    sg = [r for x in rows if x["cls"] == "singular" for r in x["r"]]
    print("\nthreshold HS_NOISE_SINGULAR = %g" % THRESHOLD)
    if wp:
        print("well-posed: %d decisions in %d runs, r in [%.2e, %.2e]" % (
            len(wp), sum(1 for x in rows if x["cls"] == "well-posed" and x["r"]), min(wp), max(wp)))
    if sg:
        print("singular:   %d decisions in %d runs, r in [%.2e, %.2e]" % (
            len(sg), sum(1 for x in rows if x["cls"] == "singular" and x["r"]), min(sg), max(sg)))
    if wp and sg:
        print("margin: %.1e below the threshold (largest well-posed), %.1e above it (smallest singular)" % (
            THRESHOLD / max(wp), min(sg) / THRESHOLD))
    for name, why in wrong:
        print("WRONG SIDE: %s: %s" % (name, why))
    for name, why in notes:
        print("note: %s: %s" % (name, why))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
