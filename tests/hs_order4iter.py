"""hamshoot system tests of issue 43's iteration work (bench/README.md, "Order four against solve_bvp and
Richardson", the cheaper iteration): conserving4's substep Jacobian formed row by row from the discrete gradient's
factors (costate/order4.c, JacobianRow), hsband's border detection from the CSR parts in place
(bvp/petscext/bandborder.c) and the conserved measure's one H per node: none changes a result. Expected values: the
bench configurations' J and Newton iterations as base50 (before the work) gave them, bit for bit on this machine
(checked within 1e-13, for another libm), and the midpoint gradient's Jacobian against finite differences.
"""
import os

from hs_util import check, jacobian_ratios, run

QUIET = ["-hs_check_extremal", "no"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def t_order4iter_pinned():
    """kepler N = 124 (1 and 2 ranks) and the pendulum with -hs_extrapolate at N = 308 (grids 77, 154, 308), the bench's
    configurations: J, the extrapolated J and Newton's iterations as before the work (base50: 5 iterations, J
    0.734302799214105; 2 at N = 308, J 6.436946325017695, J_R 6.436944445222364), H's spread at round-off."""
    cases = [(["-problem", "kepler", "-N", "124"], 1, 5, 0.734302799214105, None),
             (["-problem", "kepler", "-N", "124"], 2, 5, 0.734302799214105, None),
             (["-problem", "pendulum", "-N", "308", "-hs_extrapolate"], 1, 2, 6.436946325017695, 6.436944445222364)]
    for args, ranks, its, J, JR in cases:
        s, text, _ = run(args + ["-hs_scheme", "conserving4"] + QUIET, ranks=ranks)
        check(s and s["converged"], "%s on %d ranks: %s" % (args, ranks, text[-300:]))
        if not s:
            continue
        e = s.get("extrapolation") or {}
        print("%s, %d rank(s): %d Newton iterations, J %r (%.1e off), J_R %r, H spread %.1e"
              % (" ".join(args), ranks, s["newton_iterations"], s["J"], abs(s["J"] - J), e.get("J"), s["H_spread"]))
        check(s["newton_iterations"] == its, "%s: %d Newton iterations, %d before" % (args, s["newton_iterations"], its))
        check(abs(s["J"] - J) <= 1e-13 * abs(J), "%s: J %r, %r before" % (args, s["J"], J))
        check(JR is None or (abs(e["J"] - JR) <= 1e-13 * abs(JR) and e["grids"] == [77, 154, 308]),
              "%s: J_R %r grids %s, %r before" % (args, e.get("J"), e.get("grids"), JR))
        check(s["H_spread"] <= 1e-12 * max(1, abs(s["H_mean"])), "%s: H spread %r" % (args, s["H_spread"]))


def t_order4iter_midpoint():
    """the pendulum near rest (tests/data/pendulum_near_rest.ocp): every substep below the discrete gradient's
    threshold, so JacobianRow's midpoint branch (1/2 Hess H, no c, no rank one term) builds the Jacobian: against
    -snes_test_jacobian within 1e-6, and the solution the same as with the Gonzalez branch everywhere (-hs_dg_tol
    1e-30) to 1e-12 of J."""
    prob = os.path.join(DATA, "pendulum_near_rest.ocp")
    _, out, _ = run(["-problem", prob, "-hs_scheme", "conserving4", "-snes_test_jacobian", "-snes_max_it", "2"] + QUIET,
                    expect_rc=None)
    r = jacobian_ratios(out)
    print("near rest: %d Jacobians, ||J - Jfd||/||J|| %s" % (len(r), r))
    check(len(r) >= 1 and max(r) <= 1e-6, "midpoint-branch Jacobian: %s" % r)
    sm, text, _ = run(["-problem", prob, "-hs_scheme", "conserving4"] + QUIET)
    sg, text2, _ = run(["-problem", prob, "-hs_scheme", "conserving4", "-hs_dg_tol", "1e-30"] + QUIET)
    check(sm and sg and sm["converged"] and sg["converged"], "near rest: %s %s" % (text[-200:], text2[-200:]))
    if sm and sg:
        print("near rest: J %r (midpoint), %r (Gonzalez); %d, %d Newton iterations"
              % (sm["J"], sg["J"], sm["newton_iterations"], sg["newton_iterations"]))
        check(abs(sm["J"] - sg["J"]) <= 1e-12 * abs(sg["J"]), "near rest: J %r %r"
              % (sm["J"], sg["J"]))
