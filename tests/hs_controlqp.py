"""hamshoot system tests (tests/hstest.py), issue 41: bounded controls with a NON-diagonal R in the indirect solvers
(docs/controls.md section 1, the coupled law: a box QP per interval, HsControlLawEvalFull). The problem is
tests/data/arm2_bounded.ocp with -p_rc 0.3 (R = [1, 0.3; 0.3, 1], B = I, |u_j| <= 80). The law itself (against an
enumeration of the active sets, du/ds and psi' = u against differences) is tests/test_controlqp.c (ctest
controlqp_unit).
"""
import itertools
import os

from hs_util import check, jacobian_ratios, rel, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM = os.path.join(ROOT, "tests", "data", "arm2_bounded.ocp")
COUPLED = ["-problem", ARM, "-p_rc", "0.3", "-hs_check_extremal", "no"]
R = ((1.0, 0.3), (0.3, 1.0))
UMAX = 80.0


def box_qp(s):
    """argmax_{|u_j| <= UMAX} s^T u - 1/2 u^T R u (2 controls) by enumeration of the 9 active sets: the one whose
    equality solution is feasible and whose multipliers have the right signs (the KKT point of a strictly concave
    QP), independent of the C code's active-set and barrier methods."""
    for act in itertools.product((-1, 0, 1), repeat=2):
        u = [a * UMAX for a in act]
        free = [j for j in range(2) if act[j] == 0]
        if len(free) == 2:
            det = R[0][0] * R[1][1] - R[0][1] * R[1][0]
            u = [(R[1][1] * s[0] - R[0][1] * s[1]) / det, (R[0][0] * s[1] - R[1][0] * s[0]) / det]
        elif len(free) == 1:
            j, o = free[0], 1 - free[0]
            u[j] = (s[j] - R[j][o] * u[o]) / R[j][j]
        g = [s[i] - R[i][0] * u[0] - R[i][1] * u[1] for i in range(2)]
        tol = 1e-9 * (1 + max(abs(x) for x in s))
        if all((act[j] == 0 and abs(u[j]) <= UMAX + tol) or (act[j] < 0 and g[j] <= tol) or
               (act[j] > 0 and g[j] >= -tol) for j in range(2)):
            return u
    raise AssertionError("no KKT point for s = %s" % (s,))


def law_check(s, what):
    """The interval controls u1, u2 against box_qp(lambda_p) (B = I: s = lambda_p) to 1e-9 relative; returns the
    number of intervals where the coupling matters (a control at a bound and the other's decoupled clamp(s_j / R_jj)
    off the solution by more than 1)."""
    rows = [r for r in s["_rows"] if r.get("u1", "") != ""]
    worst, coupled = 0.0, 0
    for r in rows:
        lp = (float(r["lambda_p_a1"]), float(r["lambda_p_a2"]))
        u, ue = (float(r["u1"]), float(r["u2"])), box_qp(lp)
        worst = max(worst, max(abs(a - b) for a, b in zip(u, ue)) / UMAX)
        dec = [min(UMAX, max(-UMAX, lp[j] / R[j][j])) for j in range(2)]
        coupled += any(abs(x) == UMAX for x in u) and max(abs(a - b) for a, b in zip(dec, u)) > 1
    print("%s: %d intervals, u vs the box QP of lambda_p %.2e, %d intervals with the coupling at a bound" % (
        what, len(rows), worst, coupled))
    check(len(rows) == s["N"] and worst < 1e-9, "%s: u vs the box QP: %.2e" % (what, worst))
    return coupled


def compare(a, b, tol, what):
    """Every column of trajectory.csv and intervals.csv (but E - W and H) of two solutions, to tol (absolute)."""
    worst = 0.0
    for ra, rb in zip(a["_rows"], b["_rows"]):
        for key in ra:
            if key.startswith("_") or ra[key] == "" or key in ("E_minus_W", "H") or rb.get(key, "") == "":
                continue
            worst = max(worst, abs(float(ra[key]) - float(rb[key])))
    check(len(a["_rows"]) == len(b["_rows"]) and worst < tol, "%s: the solutions differ by %.2e" % (what, worst))
    return worst


def t_controlqp_direct_ipopt():
    """-hs_scheme direct (the KKT conditions of the direct NLP) with the coupled law equals IPOPT's bounded solution on
    the same grid (-hs_bvp_type ipopt, tolerance 1e-12, started from it: the arm has several local minima) to 1e-8 in
    every state, costate and control, and J^d to 1e-9; the controls are the box QP's maximizer of lambda_p (recomputed
    here by enumeration), with intervals where a bound is active and the coupling moves the other control (the
    decoupled clamp would be off by more than 1). Measured 4.1e-12 (N = 40). 2-rank shooting started from the
    transcription's solution stays on it (1.5e-9: the march amplifies the 17 digits of the start)."""
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hs_controlqp_%d" % os.getpid())
    s, _, _ = run(COUPLED + ["-hs_scheme", "direct"], outdir=d)
    check(s and s["converged"] and s["bounds"]["exact"], "coupled arm, direct: not converged to the exact law")
    if s and s["converged"]:
        check(law_check(s, "direct transcription") >= 3, "the coupling is not exercised at a bound")
        si, _, _ = run(COUPLED + ["-hs_scheme", "direct", "-hs_bvp_type", "ipopt", "-hs_ipopt_tol", "1e-12", "-hs_init",
                                  os.path.join(d, "trajectory.csv")])
        check(si and si["converged"], "IPOPT from the direct solution: not converged")
        if si:
            w = compare(s, si, 1e-8, "coupled arm direct vs IPOPT")
            print("coupled arm, direct vs IPOPT: %.2e, J^d %.12g vs %.12g" % (w, s["J"], si["J"]))
            check(rel(s["J"], si["J"]) < 1e-9, "J^d %r vs IPOPT %r" % (s["J"], si["J"]))
        ss, _, _ = run(COUPLED + ["-hs_scheme", "direct", "-hs_bvp_type", "shooting", "-hs_init",
                                  os.path.join(d, "trajectory.csv")], ranks=2)
        check(ss and ss["converged"] and ss["bounds"]["exact"], "2-rank shooting from the direct solution: not converged")
        if ss and ss["converged"]:
            print("coupled arm, 2-rank shooting vs transcription: %.2e" % compare(ss, s, 1e-7, "shooting"))
    for f in ("summary.json", "trajectory.csv", "intervals.csv"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    if os.path.isdir(d):
        os.rmdir(d)


def t_controlqp_conserving():
    """The conserving schemes with the coupled law. conserving4 from the default guess: converged to the exact law,
    calH constant to round-off (spread below 1e-13 relative), J^d within 2 % of the second-order direct scheme's on
    the same grid (the same extremal, O(h^2) apart). The second-order conserving scheme from the direct solution
    (its default-guess start does not converge on this problem): the exact law (u = the box QP of lambda_p), H^d
    constant inside the arcs to round-off (arc_balance below 1e-12 relative; psi is quadratic in s on an arc of a
    fixed active set), with switching nodes reported."""
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hs_controlqp_c_%d" % os.getpid())
    sd, _, _ = run(COUPLED + ["-hs_scheme", "direct"], outdir=d)
    s4, _, _ = run(COUPLED + ["-hs_scheme", "conserving4"])
    check(s4 and s4["converged"] and s4["bounds"]["exact"], "conserving4: not converged to the exact law")
    if s4 and sd and s4["converged"]:
        print("conserving4: J^d %.10g (direct %.10g), calH spread %.2e relative" % (s4["J"], sd["J"],
                                                                                  s4["H_spread_relative"]))
        check(s4["H_spread_relative"] < 1e-13 and rel(s4["J"], sd["J"]) < 0.02,
              "conserving4: spread %r, J %r vs %r" % (s4["H_spread_relative"], s4["J"], sd["J"]))
    if sd and sd["converged"]:
        s, _, _ = run(COUPLED + ["-hs_init", os.path.join(d, "trajectory.csv")])
        check(s and s["converged"] and s["bounds"]["exact"], "conserving from the direct solution: not converged")
        if s and s["converged"]:
            law_check(s, "conserving")
            b = s["bounds"]
            print("conserving: J^d %.10g, H^d %.6g, inside the arcs %.2e, across %d switching nodes %.3g" % (
                s["J"], s["H_mean"], b["arc_balance"], b["switching_nodes"], b["switch_jump"]))
            check(b["arc_balance"] < 1e-12 * abs(s["H_mean"]) and b["switching_nodes"] >= 1,
                  "conserving: arc balance %r (H %r), %r switching nodes" % (b["arc_balance"], s["H_mean"],
                                                                          b["switching_nodes"]))
    for f in ("summary.json", "trajectory.csv", "intervals.csv"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    if os.path.isdir(d):
        os.rmdir(d)


def t_controlqp_jacobian():
    """The analytic Jacobians with the coupled law (the full du/ds: -h G (du/ds) G^T in the second-order schemes, B U
    B^T in conserving4's Hessian) against -snes_test_jacobian at every Newton iterate of the continuation (eps from
    0.5 (hi - lo) down by 0.5 to the exact law): direct and conserving at N = 12, conserving4 at N = 8; the
    differences' own error stays near 2e-6."""
    for scheme, N in (("direct", 12), ("conserving", 12), ("conserving4", 8)):
        _, out, _ = run(COUPLED + ["-hs_scheme", scheme, "-N", str(N), "-snes_test_jacobian", "-hs_linear_solver",
                                   "mumps", "-hs_strategy", "newton", "-hs_bounds_eps0", "0.5", "-hs_bounds_eps_factor",
                                   "0.5"], expect_rc=None)
        ratios = jacobian_ratios(out)
        print("%s: %d Jacobians, max ratio %.1e" % (scheme, len(ratios), max(ratios) if ratios else -1))
        check(len(ratios) >= 5 and max(ratios) < 1e-4, "%s: Jacobian ratios %s" % (scheme, ratios[:20]))
