"""hamshoot system tests of issue 43's speed work (bench/README.md, "Order four against solve_bvp and Richardson"):
-hs_extrapolate solving its grids coarse first (HsSolverSolveExtrapolated: N/4 from the start, N/2 from it, N from
N/2) gives the solutions of the fine-first order (-hs_extrapolate_coarse_first false) to Newton's tolerance, with
fewer Newton iterations at N; a conserving4 solution passed on as a guess is interpolated at the nodes by cubics
(guess_nodal), which starts the finer grid 1e4 times closer than the midpoint-costate interpolation of -hs_init.
Expected values: the discrete solution does not depend on Newton's start (so the two orders must agree to round-off),
and the pendulum's J_inf of docs/theory.md section 4.1 (independent: tests/crosscheck).
"""
import csv
import os
import re
import tempfile

from hs_util import check, run

PENDULUM_JINF = 6.436944438855  # docs/theory.md section 4.1 (independent: tests/crosscheck)
QUIET = ["-hs_check_extremal", "no"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def solve_both(args, ranks=1):
    """The problem of args with -hs_extrapolate in both orders: (fine-first summary, coarse-first summary), each with
    its extrapolated.csv rows under "_ext"."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for cf in ("false", "true"):
            d = os.path.join(tmp, cf)
            s, text, _ = run(args + QUIET + ["-hs_extrapolate", "-hs_extrapolate_coarse_first", cf], ranks=ranks,
                             outdir=d)
            check(s and s["converged"] and s.get("extrapolation"), "%s coarse first %s: %s" % (args, cf, text[-300:]))
            if not s:
                return None, None
            with open(os.path.join(d, "extrapolated.csv")) as f:
                s["_ext"] = list(csv.DictReader(f))
            out.append(s)
    return out


def max_diff(ra, rb, prefix=("q", "p", "lambda")):
    keys = [k for k in ra[0] if k.startswith(prefix)]
    return max(abs(float(a[k]) - float(b[k])) for a, b in zip(ra, rb) for k in keys if a[k] != "" and b[k] != "")


def compare(name, fine, coarse, tol_x=1e-10):
    """The two orders' results agree to Newton's tolerance; the coarse-first solve at N took fewer iterations."""
    e0, e1 = fine["extrapolation"], coarse["extrapolation"]
    dJ, dR = abs(fine["J"] - coarse["J"]), abs(e0["J"] - e1["J"])
    dx, de = max_diff(fine["_rows"], coarse["_rows"]), max_diff(fine["_ext"], coarse["_ext"], ("q", "p"))
    print("%s: |dJ| %.1e, |dJ_R| %.1e, states/costates %.1e, extrapolated states %.1e; Newton at N %d -> %d; %s"
          % (name, dJ, dR, dx, de, fine["newton_iterations"], coarse["newton_iterations"], coarse["initial_guess"]))
    check(dJ <= 1e-13 * abs(fine["J"]) and dR <= 1e-12 * abs(e0["J"]), "%s: J %r %r, J_R %r %r"
          % (name, fine["J"], coarse["J"], e0["J"], e1["J"]))
    check(dx <= tol_x and de <= tol_x, "%s: the trajectories differ by %.1e, the extrapolated states by %.1e"
          % (name, dx, de))
    check(e0["grids"] == e1["grids"] and abs(e0["J_order"] - e1["J_order"]) < 1e-3, "%s: grids %s %s, orders %s %s"
          % (name, e0["grids"], e1["grids"], e0["J_order"], e1["J_order"]))
    check(coarse["newton_iterations"] < fine["newton_iterations"] and "grid sequencing" in coarse["initial_guess"],
          "%s: %d Newton iterations at N coarse first, %d fine first (%s)" % (name, coarse["newton_iterations"],
                                                                             fine["newton_iterations"],
                                                                             coarse["initial_guess"]))


def t_order4speed_sequence():
    """-hs_extrapolate coarse first against fine first: J, the extrapolated J, the states and costates at every node
    and the extrapolated states equal to Newton's tolerance; fewer Newton iterations at N (conserving4: at most 2);
    the pendulum's extrapolated J within 2e-8 of J_inf (order 4 +- 0.1) and H constant to round-off either way;
    the same for the second-order scheme, for kepler on 2 ranks, and for a free final time (T and its extrapolation)."""
    fine, coarse = solve_both(["-problem", "pendulum", "-N", "320", "-hs_scheme", "conserving4"])
    if not fine:
        return
    compare("pendulum conserving4 N = 320", fine, coarse)
    e = coarse["extrapolation"]
    print("  extrapolated J %.12f, |J_R - J_inf| %.1e, order %.3f; H spread %.1e" %
          (e["J"], abs(e["J"] - PENDULUM_JINF), e["J_order"], coarse["H_spread"]))
    check(abs(e["J"] - PENDULUM_JINF) <= 2e-8 and abs(e["J_order"] - 4) <= 0.1, "pendulum: J_R %r order %r"
          % (e["J"], e["J_order"]))
    check(coarse["newton_iterations"] <= 2, "conserving4 from N/2: %d Newton iterations" % coarse["newton_iterations"])
    check(coarse["H_spread"] / max(1, abs(coarse["H_mean"])) < 1e-12, "H spread %.1e" % coarse["H_spread"])
    fine, coarse = solve_both(["-problem", "pendulum", "-N", "320"])
    if fine:
        compare("pendulum conserving (order 2) N = 320", fine, coarse)
    fine, coarse = solve_both(["-problem", "kepler", "-N", "80", "-hs_scheme", "conserving4"], ranks=2)
    if fine:
        compare("kepler conserving4 N = 80, 2 ranks", fine, coarse)
    fine, coarse = solve_both(["-problem", os.path.join(DATA, "pendulum_free_T.ocp"), "-N", "80", "-hs_scheme",
                               "conserving4"])
    if fine:
        compare("pendulum_free_T conserving4 N = 80", fine, coarse)
        dT = abs(fine["T"] - coarse["T"])
        dTR = abs(fine["extrapolation"]["T"] - coarse["extrapolation"]["T"])
        print("  free T: |dT| %.1e, |dT_R| %.1e" % (dT, dTR))
        check(dT <= 1e-12 * fine["T"] and dTR <= 1e-11 * fine["T"], "free T: %r %r, T_R %r %r"
              % (fine["T"], coarse["T"], fine["extrapolation"]["T"], coarse["extrapolation"]["T"]))


def first_residual(out):
    m = re.search(r"Newton +0 +\|F\| = ([0-9.eE+-]+)", out)
    return float(m.group(1)) if m else float("nan")


def t_order4speed_nodal():
    """a conserving4 solution at N/2 as the start at N: interpolated at the nodes by cubics (coarse first), Newton's
    first residual is below 1e-2 of the -hs_init start from the same N/2 solution's trajectory.csv (costates taken as
    midpoint values, linear), and it needs fewer iterations; both reach the same J (the N solve without any guess)."""
    with tempfile.TemporaryDirectory() as tmp:
        half = os.path.join(tmp, "half")
        base = ["-problem", "pendulum", "-hs_scheme", "conserving4"] + QUIET
        s0, _, _ = run(base + ["-N", "160"], outdir=half)
        ref, _, _ = run(base + ["-N", "320"])
        si, oi, _ = run(base + ["-N", "320", "-hs_init", os.path.join(half, "trajectory.csv"), "-hs_monitor"])
        sc, oc, _ = run(base + ["-N", "320", "-hs_extrapolate", "-hs_monitor"])
    if not (s0 and ref and si and sc):
        check(False, "a solve failed")
        return
    fi, fc = first_residual(oi), first_residual(oc)
    print("N = 320 from N = 160: -hs_init |F_0| %.2e, %d Newton iterations; cubic node interpolation |F_0| %.2e, %d"
          % (fi, si["newton_iterations"], fc, sc["newton_iterations"]))
    check(fc <= 1e-2 * fi and sc["newton_iterations"] < si["newton_iterations"],
          "the nodal start: |F_0| %.2e against %.2e, %d against %d iterations" % (fc, fi, sc["newton_iterations"],
                                                                                 si["newton_iterations"]))
    for name, s in (("-hs_init", si), ("coarse first", sc)):
        check(abs(s["J"] - ref["J"]) <= 1e-13 * ref["J"], "%s: J %r, from the default guess %r" % (name, s["J"],
                                                                                                 ref["J"]))
