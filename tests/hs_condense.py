"""hamshoot system tests of -hs_condense (issue 43, sixth session; bvp/impls/order4cond.c): conserving4's transcription
on one rank solves its Newton steps by eliminating each interval's stage nodes before a band LU of the node unknowns,
instead of hsband's LU of the whole Jacobian. Both are LU factorizations with partial pivoting of the same matrix, so
the expected values are the other solver's: the same Newton iterations, J and every node value to round-off, against
-hs_condense false (hsband) and against MUMPS (-hs_linear_solver mumps, an independent LU), and the determinant that
the arclength continuation's branch-point test reads, against MUMPS' on the same matrices.
"""
import os
import re

from hs_util import check, info_determinants, run, same_determinant

QUIET = ["-hs_check_extremal", "no"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def node_diff(a, b):
    """The largest difference of the node values (states, costates, controls) of two summaries' rows."""
    return max(abs(float(r[k]) - float(q[k])) for r, q in zip(a["_rows"], b["_rows"]) for k in r
               if k not in ("k", "t", "t_mid") and r[k] != "")


def t_condense_equal():
    """The bench's pendulum (N = 224, four grids, Romberg; n = 1), a free end with a terminal cost
    (pendulum_free.ocp), a configuration-dependent B(q) with ell and a non-diagonal R (bq2.ocp, n = 2) and a
    time-dependent ell (ncar): condensed (summary: preonly+hscondense), hsband (-hs_condense false) and MUMPS give the
    same Newton iterations, J (and the extrapolated J) to 1e-13 relative and every node value to 1e-10 (relative to
    1 + the largest). Kepler (n = 3) keeps hsband (the condensation is for n <= 2)."""
    k, tk, _ = run(["-problem", "kepler", "-N", "40", "-hs_scheme", "conserving4"] + QUIET)
    check(k and k["linear_solver"] == "preonly+hsband", "kepler (n = 3): %s %s" % (k and k["linear_solver"], tk[-200:]))
    cases = [(["-problem", "pendulum", "-N", "224", "-hs_extrapolate", "-hs_extrapolate_romberg",
               "-hs_extrapolate_grids", "4"]),
             (["-problem", os.path.join(DATA, "pendulum_free.ocp"), "-N", "40"]),
             (["-problem", os.path.join(DATA, "bq2.ocp"), "-N", "40"]),
             (["-problem", "ncar", "-N", "80"])]
    for args in cases:
        base = args + ["-hs_scheme", "conserving4"] + QUIET
        c, tc, _ = run(base)
        b, tb, _ = run(base + ["-hs_condense", "false"])
        m, tm, _ = run(base + ["-hs_linear_solver", "mumps"])
        check(c and b and m and c["converged"] and b["converged"] and m["converged"],
              "%s: %s %s %s" % (args, tc[-200:], tb[-200:], tm[-200:]))
        if not (c and b and m):
            continue
        name = os.path.basename(args[1])
        check(c["linear_solver"] == "preonly+hscondense" and b["linear_solver"] == "preonly+hsband",
              "%s: linear solvers %s, %s" % (name, c["linear_solver"], b["linear_solver"]))
        for what, o in (("hsband", b), ("MUMPS", m)):
            dj, dx = abs(c["J"] - o["J"]), node_diff(c, o)
            big = max(abs(float(r[k])) for r in o["_rows"] for k in r if k not in ("k", "t", "t_mid") and r[k] != "")
            print("%-18s condensed vs %-6s: Newton %d / %d, |dJ| %.1e, node values %.1e (of %.1e)"
                  % (name, what, c["newton_iterations"], o["newton_iterations"], dj, dx, big))
            check(c["newton_iterations"] == o["newton_iterations"], "%s: Newton iterations against %s" % (name, what))
            check(dj <= 1e-13 * max(1, abs(o["J"])), "%s: J %r against %s's %r" % (name, c["J"], what, o["J"]))
            check(dx <= 1e-10 * (1 + big), "%s: node values %.1e off %s's" % (name, dx, what))
            ec, eo = c.get("extrapolation"), o.get("extrapolation")
            check(not eo or abs(ec["J"] - eo["J"]) <= 1e-13 * abs(eo["J"]), "%s: extrapolated J" % name)


def t_condense_ranks():
    """Only on one rank: on 2 ranks the pendulum's transcription keeps hsband (preonly+hsband), with the one-rank
    condensed solution's J to 1e-13 and node values to 1e-10; -pc_type mumps keeps MUMPS."""
    a = ["-problem", "pendulum", "-N", "80", "-hs_scheme", "conserving4"] + QUIET
    c, tc, _ = run(a)
    r, tr, _ = run(a, ranks=2)
    u, tu, _ = run(a + ["-pc_type", "lu", "-pc_factor_mat_solver_type", "mumps"])
    check(c and r and u and c["converged"] and r["converged"] and u["converged"], "%s %s %s" % (tc[-200:], tr[-200:],
                                                                                            tu[-200:]))
    if c and r and u:
        print("1 rank %s, 2 ranks %s, -pc_type lu: %s; |dJ| %.1e, node values %.1e"
              % (c["linear_solver"], r["linear_solver"], u["linear_solver"], abs(c["J"] - r["J"]), node_diff(c, r)))
        check(r["linear_solver"] == "preonly+hsband" and u["linear_solver"] == "preonly+lu(mumps)",
              "linear solvers: %s, %s" % (r["linear_solver"], u["linear_solver"]))
        check(abs(c["J"] - r["J"]) <= 1e-13 * abs(r["J"]) and node_diff(c, r) <= 1e-10 * 10, "1 against 2 ranks")


def t_condense_determinant():
    """The determinant that the arclength continuation's branch-point test reads by its sign (-info's 'det J = m 2^e'):
    along an arclength continuation of the pendulum's gravity g (conserving4, N = 40, 4 steps) every determinant of
    the condensed LU, det J = sign det B1 det B2 (all intervals) det(condensed band) det(dummies) with the sign of the
    row and column reordering (bvp/impls/order4cond.c), equals MUMPS' LU's of the same matrix to 1e-9 in log2 (sign and
    magnitude), and the continuation ends at the same J. A wrong reordering sign, or a block left out, would fail."""
    dets, sums = {}, {}
    for ls in ("mumps", "auto"):
        s, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_scheme", "conserving4", "-hs_continue", "g",
                         "-hs_continue_from", "9", "-hs_continue_steps", "4", "-hs_continue_type", "arclength",
                         "-hs_linear_solver", ls, "-info"] + QUIET)
        dets[ls] = info_determinants(out, "MUMPS|-hs_condense")
        sums[ls] = s
    print("determinants by MUMPS    %s\n              condensed %s" % (dets["mumps"][:3], dets["auto"][:3]))
    same = lambda a, b: same_determinant(a, b, 1e-9)
    check(len(dets["mumps"]) >= 4 and len(dets["auto"]) == len(dets["mumps"])
          and all(same(a, b) for a, b in zip(dets["auto"], dets["mumps"])), "condensed determinants against MUMPS'")
    m, c = sums["mumps"], sums["auto"]
    check(m and c and c["linear_solver"] == "preonly+hscondense" and abs(m["J"] - c["J"]) <= 1e-12 * abs(m["J"]),
          "continuation: J by the condensed LU and MUMPS")


def t_condense_fallback():
    """Far from a solution on a coarse grid the stage blocks B can be ill-conditioned, and the block elimination (no
    pivot crosses from a B into the band) loses accuracy: pendulum_free.ocp at N = 20 from the default guess (backward
    errors up to 3e-3 measured; Newton had diverged with the condensed steps taken) and double_pendulum_angles.ocp
    (n = 2) at N = 20. The check of every solve sees it (-info: 'backward error ... hsband's LU instead') and hsband solves from
    there: the same Newton iterations and J as -hs_condense false to 1e-12 (both converged)."""
    for args in (["-problem", os.path.join(DATA, "pendulum_free.ocp"), "-N", "20"],
                 ["-problem", os.path.join(DATA, "double_pendulum_angles.ocp"), "-N", "20"]):
        base = args + ["-hs_scheme", "conserving4"] + QUIET
        c, tc, _ = run(base + ["-info"])
        b, tb, _ = run(base + ["-hs_condense", "false"])
        name = os.path.basename(args[1])
        fired = len(re.findall(r"-hs_condense: backward error [0-9.e+-]+ of the condensed solve; hsband's LU instead", tc))
        check(c and b and c["converged"] and b["converged"], "%s: %s %s" % (name, tc[-300:], tb[-300:]))
        if not (c and b):
            continue
        print("%-18s condensed solves rejected %d; Newton %d / %d (hsband alone); J %r / %r"
              % (name, fired, c["newton_iterations"], b["newton_iterations"], c["J"], b["J"]))
        check(fired == 1, "%s: the check rejected %d solves (one, then hsband throughout)" % (name, fired))
        check(c["newton_iterations"] == b["newton_iterations"] and abs(c["J"] - b["J"]) <= 1e-12 * abs(b["J"]),
              "%s: against hsband alone" % name)
