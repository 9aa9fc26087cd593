"""hamshoot system tests (tests/hstest.py), issue 41: bounded controls and minimum time in the second-order indirect
schemes (docs/controls.md). The bounded law u = clamp(B^T lambda^p / r, lo, hi) checked from the output columns, the
state equations recomputed here, H^d constant within each arc and its jumps at the switches shrinking with h, the
direct scheme's bounded solution equal to IPOPT's, the minimum-time double integrator against T = 2 and the switch at
t = 1, the bounded swing-up on 1 and 2 ranks in transcription and shooting, and the refusals and the infeasible case.
The law itself (psi' = u, u' = du/ds, the exact projection) is tests/test_control.c (ctest control_unit).
"""
import math
import os

from hs_util import check, rel, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
PENDULUM = os.path.join(ROOT, "problems", "pendulum_bounded.ocp")  # |u| <= 2.5, V = -g sin q, T = 3
SWINGUP = os.path.join(ROOT, "problems", "swingup_bounded.ocp")  # |u| <= 3, V = -g sin q, T = 5
MINTIME = os.path.join(ROOT, "problems", "mintime_double_integrator.ocp")
G = 9.81
NOEXT = ["-hs_check_extremal", "no"]


def col(s, name, rows=None):
    rows = s["_rows"] if rows is None else rows
    return [float(r[name]) for r in rows if r[name] != ""]


def law_checks(s, umax, what):
    """u = clamp(lambda_p, -umax, umax) (B = R = 1) to 1e-12 relative; |u| <= umax; the greenspan state equations
    of V = -g sin q (mass 1) recomputed here; returns (the per-interval arcs -1/0/+1, the interval H^d)."""
    rows, N = s["_rows"], len(s["_rows"]) - 1
    h = s["T"] / N
    u, lp, H = col(s, "u1"), col(s, "lambda_p_q"), col(s, "H")
    mis = max(abs(u[k] - min(umax, max(-umax, lp[k]))) for k in range(N))
    over = max(abs(x) for x in u) - umax
    res = 0.0
    for k in range(N):
        q0, p0, q1, p1 = (float(rows[k]["q_q"]), float(rows[k]["p_q"]), float(rows[k + 1]["q_q"]),
                          float(rows[k + 1]["p_q"]))
        dv = -G * (math.sin(q1) - math.sin(q0)) / (q1 - q0) if abs(q1 - q0) > 1e-7 else -G * math.cos(0.5 * (q0 + q1))
        res = max(res, abs(q1 - q0 - h * 0.5 * (p0 + p1)), abs(p1 - p0 + h * dv - h * u[k]))
    check(mis < 1e-12 * umax and over <= 1e-14 * umax and res < 1e-10,
          "%s: u vs clamp(lambda_p) %.1e, max|u| - umax %.1e, state residual %.1e" % (what, mis, over, res))
    arcs = [-1 if lp[k] <= -umax else (1 if lp[k] >= umax else 0) for k in range(N)]
    return arcs, H, h, lp


def arc_spreads(arcs, H):
    """The largest |H_k - H_{k-1}| over nodes inside an arc, and over the switching nodes."""
    inside = [abs(H[k] - H[k - 1]) for k in range(1, len(H)) if arcs[k] == arcs[k - 1]]
    across = [abs(H[k] - H[k - 1]) for k in range(1, len(H)) if arcs[k] != arcs[k - 1]]
    return max(inside), max(across) if across else 0.0, len(across)


def switch_times(arcs, lp, h, umax):
    """The switching times: lambda_p's crossing of the bound, interpolated between the interval midpoints."""
    out = []
    for k in range(1, len(arcs)):
        if arcs[k] != arcs[k - 1]:
            c = umax if 1 in (arcs[k], arcs[k - 1]) else -umax
            th = min(1.0, max(0.0, (c - lp[k - 1]) / (lp[k] - lp[k - 1])))
            out.append((k - 0.5 + th) * h)
    return out


def t_bounds_arcs():
    """pendulum_bounded (|u| <= 2.5, the conserving greenspan pair): at N = 40 and 80 (transcription, 1 rank) and
    N = 40 (shooting, 2 ranks) converged with the exact projection (summary: eps 0, exact); u = clamp(lambda_p) and
    the state equations recomputed; H^d constant within every arc to 1e-11 (the proof of docs/controls.md section 3:
    psi quadratic or linear on an arc) while it jumps at the switching nodes, the jumps shrinking as h^2 (ratio > 3
    from N = 40 to 80: ab/2r with a, b = O(h)); the arcs and switching times of summary.json equal those recomputed
    from lambda_p here; shooting on 2 ranks gives the transcription's J^d and H^d."""
    jumps, J40 = [], None
    for N, bvp, ranks in ((40, "transcription", 1), (80, "transcription", 1), (40, "shooting", 2)):
        what = "N = %d, %s, %d rank(s)" % (N, bvp, ranks)
        s, out, _ = run(["-problem", PENDULUM, "-N", str(N), "-hs_bvp_type", bvp] + NOEXT, ranks=ranks)
        check(s and s["converged"] and s["bounds"]["exact"] and s["bounds"]["eps"] == 0, "%s: not converged exactly" % what)
        if not s or not s["converged"]:
            continue
        arcs, H, h, lp = law_checks(s, 2.5, what)
        inside, across, nsw = arc_spreads(arcs, H)
        Hs = max(1.0, max(abs(x) for x in H))
        print("%s: J^d %.12g, %d switches, H^d inside arcs %.1e, across switches %.3e" % (what, s["J"], nsw, inside, across))
        check(inside < 1e-11 * Hs and across > 1e-4 and nsw >= 2,
              "%s: H^d inside the arcs %.1e, across %.1e (%d switches)" % (what, inside, across, nsw))
        sw = s["switching"][0]
        times = switch_times(arcs, lp, h, 2.5)
        check(sw["at_lower"] == arcs.count(-1) and sw["at_upper"] == arcs.count(1) and len(sw["times"]) == len(times)
              and max(abs(a - b) for a, b in zip(sw["times"], times)) < 1e-9 and s["bounds"]["switching_nodes"] == nsw
              and abs(s["bounds"]["arc_balance"] - inside) < 1e-12 * Hs,
              "%s: summary's switching %r vs recomputed %r" % (what, sw, times))
        if bvp == "transcription":
            jumps.append(across)
            if N == 40:
                J40, H40 = s["J"], s["H_mean"]
        else:
            check(J40 is not None and rel(s["J"], J40) < 1e-10 and rel(s["H_mean"], H40) < 1e-9,
                  "%s: J^d %r, H^d %r vs the transcription's %r, %r" % (what, s["J"], s["H_mean"], J40, H40))
    if len(jumps) == 2:
        check(jumps[0] / jumps[1] > 3, "H^d jumps at the switches %.3e (N = 40), %.3e (N = 80): not O(h^2)" % tuple(jumps))


def compare_runs(a, b, tol, what):
    """Every column of trajectory.csv and intervals.csv of two solutions on the same grid, to tol (absolute)."""
    worst = 0.0
    for ra, rb in zip(a["_rows"], b["_rows"]):
        for key in ra:
            if key.startswith("_") or ra[key] == "" or key in ("E_minus_W", "H"):
                continue
            worst = max(worst, abs(float(ra[key]) - float(rb[key])))
    check(len(a["_rows"]) == len(b["_rows"]) and worst < tol, "%s: the solutions differ by %.2e" % (what, worst))
    return worst


def t_bounds_direct_ipopt():
    """-hs_scheme direct (midpoint + trapezoidal costates: the KKT conditions of the direct NLP) with bounds is the
    bounded direct NLP IPOPT solves: pendulum_bounded from the default guess by transcription (1 rank) and shooting
    (2 ranks) equal IPOPT's solution (-hs_scheme direct -hs_bvp_type ipopt, its tolerance 1e-12) to 1e-8 in every
    state, costate and control; swingup_bounded (several local minima) by transcription equals IPOPT's solution
    from it (-hs_init) to 1e-8."""
    ip = ["-hs_scheme", "direct", "-hs_bvp_type", "ipopt", "-hs_ipopt_tol", "1e-12"] + NOEXT
    si, _, _ = run(["-problem", PENDULUM] + ip)
    check(si and si["converged"], "IPOPT on pendulum_bounded: not converged")
    for bvp, ranks in (("transcription", 1), ("shooting", 2)):
        s, _, _ = run(["-problem", PENDULUM, "-hs_scheme", "direct", "-hs_bvp_type", bvp] + NOEXT, ranks=ranks)
        check(s and s["converged"] and s["bounds"]["exact"], "pendulum_bounded direct %s: not converged" % bvp)
        if s and si and s["converged"]:
            w = compare_runs(s, si, 1e-8, "pendulum_bounded direct %s vs IPOPT" % bvp)
            print("pendulum_bounded, direct %s (%d ranks) vs IPOPT: %.2e, J^d %.12g vs %.12g" % (bvp, ranks, w, s["J"],
                                                                                               si["J"]))
            check(rel(s["J"], si["J"]) < 1e-9, "J^d %r vs IPOPT %r" % (s["J"], si["J"]))
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hs_bounds_direct_%d" % os.getpid())
    s, _, _ = run(["-problem", SWINGUP, "-hs_scheme", "direct"] + NOEXT, outdir=d)
    check(s and s["converged"], "swingup_bounded direct: not converged")
    if s and s["converged"]:
        si, _, _ = run(["-problem", SWINGUP, "-hs_init", os.path.join(d, "trajectory.csv")] + ip)
        check(si and si["converged"], "IPOPT from the direct swing-up: not converged")
        if si:
            w = compare_runs(s, si, 1e-8, "swingup_bounded direct vs IPOPT")
            print("swingup_bounded direct vs IPOPT from it: %.2e, J^d %.12g vs %.12g" % (w, s["J"], si["J"]))
    for f in ("summary.json", "trajectory.csv", "intervals.csv"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    if os.path.isdir(d):
        os.rmdir(d)


def t_bounds_mintime():
    """problems/mintime_double_integrator.ocp (q'' = u, |u| <= 1, (1, 0) -> (0, 0), min T; R: 0, the bang-bang law
    ending at eps = 1e-4): exact T = 2, one switch at t = 1, u = -1 then +1. At N = 25 and 51 (the switch inside an
    interval) by transcription on 1 rank and shooting on 2: T and the switch within h of 2 and 1, u within 1e-3 of -1
    before and +1 after (but the switching interval), the mean H^d equal to d phi/dT = 1 (the free-T condition) to
    1e-10, eps reported; T's error falls faster than h (ratio > 3 from N = 25 to 51: second order, measured 4.2).
    -p_umax 4: T = 2/sqrt(umax) = 1, the switch at 0.5."""
    err = {}
    for N, bvp, ranks, extra, T0, ts0 in ((25, "transcription", 1, [], 2.0, 1.0), (51, "transcription", 1, [], 2.0, 1.0),
                                          (51, "shooting", 2, [], 2.0, 1.0),
                                          (51, "transcription", 1, ["-p_umax", "4"], 1.0, 0.5)):
        what = "N = %d, %s, %d rank(s) %s" % (N, bvp, ranks, " ".join(extra))
        s, _, _ = run(["-problem", MINTIME, "-N", str(N), "-hs_bvp_type", bvp] + NOEXT + extra, ranks=ranks)
        check(s and s["converged"] and abs(s["bounds"]["eps"] - 1e-4) < 1e-12 and not s["bounds"]["exact"],
              "%s: not converged at eps 1e-4" % what)
        if not s or not s["converged"]:
            continue
        h, umax = s["T"] / N, 4.0 / T0 ** 2  # T = 2 / sqrt(umax)
        sw = s["switching"][0]["times"]
        u = col(s, "u1")
        far = [x for k, x in enumerate(u) if abs((k + 0.5) * h - ts0) > 1.5 * h]
        first = [x for k, x in enumerate(u) if (k + 0.5) * h < ts0 - 1.5 * h]
        dev = max(abs(abs(x) - umax) for x in far)
        print("%s: T %.10f, switch %s, H^d mean %.15g, u off the bound by %.1e" % (what, s["T"], sw, s["H_mean"], dev))
        check(abs(s["T"] - T0) < h and len(sw) == 1 and abs(sw[0] - ts0) < h and abs(s["H_mean"] - 1) < 1e-10,
              "%s: T %r, switches %r, H^d mean %r" % (what, s["T"], sw, s["H_mean"]))
        check(dev < 1e-3 * umax and all(x < 0 for x in first), "%s: u not bang-bang (%.1e)" % (what, dev))
        if bvp == "transcription" and not extra:
            err[N] = abs(s["T"] - 2)
    if len(err) == 2:
        check(err[25] / err[51] > 3, "T errors %.2e (N = 25), %.2e (N = 51): not second order" % (err[25], err[51]))


def t_bounds_swingup():
    """problems/swingup_bounded.ocp (|u| <= 3, T = 5, the conserving pair) from the default guess with no options:
    transcription and shooting, each on 1 and 2 ranks, converged with the exact projection; the law and the state
    equations recomputed; the bound active on 35-65% of the intervals (measured: 53 of 100); H^d constant within
    each arc to 1e-10; 1 and 2 ranks give the same J^d (the swing-up has several local minima: transcription and
    shooting may reach different ones, each checked). Against IPOPT on the same grid: the extremal check's IPOPT
    solve of the direct NLP (greenspan + kkt) from the transcription's solution ends at a strict local minimum
    0.012 away (measured) with J^d within 1e-4 relative (the O(h^2) offset of the two schemes)."""
    s, _, _ = run(["-problem", SWINGUP])
    e = (s or {}).get("extremal_check", {})
    print("extremal check: J^d %.10g, IPOPT from it %.10g, %s away, local minimum %s" % (
        s["J"] if s else -1, e.get("J_near", -1), e.get("distance"), e.get("local_minimum")))
    check(s and s["converged"] and e.get("near_converged") and e.get("local_minimum") and e.get("distance", 1) < 0.05 and
          rel(e.get("J_near", 0), s["J"]) < 1e-4, "the conserving swing-up against IPOPT: %s" % e)
    for bvp in ("transcription", "shooting"):
        J1 = None
        for ranks in (1, 2):
            what = "%s, %d rank(s)" % (bvp, ranks)
            s, _, _ = run(["-problem", SWINGUP, "-hs_bvp_type", bvp] + NOEXT, ranks=ranks)
            check(s and s["converged"] and s["bounds"]["exact"], "%s: not converged exactly" % what)
            if not s or not s["converged"]:
                continue
            arcs, H, h, lp = law_checks(s, 3.0, what)
            inside, across, nsw = arc_spreads(arcs, H)
            at = sum(1 for a in arcs if a)
            print("%s: J^d %.12g, %d of %d intervals at the bound, %d switches, H^d inside arcs %.1e, across %.2e, %s" % (
                what, s["J"], at, len(arcs), nsw, inside, across, s["initial_guess"]))
            check(0.35 < at / len(arcs) < 0.65 and inside < 1e-10 * max(1, max(abs(x) for x in H)),
                  "%s: %d intervals at the bound, H^d inside the arcs %.1e" % (what, at, inside))
            if ranks == 1:
                J1 = s["J"]
            else:
                check(J1 is not None and rel(s["J"], J1) < 1e-9, "%s: J^d %r vs 1 rank %r" % (what, s["J"], J1))


def t_bounds_infeasible():
    """swingup_bounded with -p_umax 1.5 has no solution (the torque cannot bring the pendulum up in T = 5; IPOPT:
    Infeasible_Problem_Detected): transcription and shooting (-hs_strategy newton) and the default strategy end not
    converged (exit 2) with a diagnosis that says the bounds may make the terminal state unreachable."""
    for extra in (["-hs_strategy", "newton"], ["-hs_strategy", "newton", "-hs_bvp_type", "shooting"], []):
        s, out, _ = run(["-problem", SWINGUP, "-p_umax", "1.5"] + NOEXT + extra, expect_rc=2)
        check(s and not s["converged"] and "unreachable" in s["diagnosis"] and "u_min/u_max" in s["diagnosis"],
              "%s: %s" % (" ".join(extra), s and s["diagnosis"]))


def t_bounds_refusals():
    """What the indirect solvers do not take is refused with a message naming the problem: bounds with a non-diagonal
    R that is not positive definite (tests/data/arm2_bounded.ocp -p_rc 2; a positive definite one, -p_rc 0.3, is
    solved since branch i41-qp: tests/hs_controlqp.py), R: 0 without bounds (tests/data/bang_unbounded.ocp); bad
    -hs_bounds_* values."""
    arm = os.path.join(DATA, "arm2_bounded.ocp")
    s, out, _ = run(["-problem", arm, "-p_rc", "2"] + NOEXT, expect_rc=1)
    check("'arm2_bounded'" in out and "not symmetric positive definite" in out, "indefinite R: %s" % out[-400:])
    s, out, _ = run(["-problem", os.path.join(DATA, "bang_unbounded.ocp")], expect_rc=1)
    check("'bang_unbounded'" in out and "needs both bounds" in out, "R: 0 unbounded: %s" % out[-400:])
    # bounds with -hs_scheme conserving4: solved since branch i41-nonlinear (tests/hs_controls.py, controls_bounded)
    for bad in (["-hs_bounds_eps_factor", "1"], ["-hs_bounds_eps0", "-1"], ["-hs_bounds_eps_min", "0"]):
        s, out, _ = run(["-problem", PENDULUM] + bad, expect_rc=1)
        check("-hs_bounds_eps_factor" in out and "must lie" in out, "%s: %s" % (" ".join(bad), out[-300:]))


def t_bounds_compare():
    """-hs_compare on pendulum_bounded (indirect conserving against IPOPT): compare.gp draws both bounds (+-2.5) and a
    dotted line at each switching time of the indirect solution (the times of indirect/summary.json, which equal
    those recomputed from lambda_p in bounds_arcs), and compare.json reports the two solutions close (max |du| below
    0.1: the same bounded extremal, O(h^2) apart)."""
    import json
    import re
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "cmp")
        _, out, _ = run(["-problem", PENDULUM, "-hs_compare"], outdir=d)
        gp = open(os.path.join(d, "compare.gp")).read() if os.path.exists(os.path.join(d, "compare.gp")) else ""
        ind = json.load(open(os.path.join(d, "indirect", "summary.json"))) if gp else {}
        cmpj = json.load(open(os.path.join(d, "compare.json"))) if gp else {}
    levels = [float(x) for x in re.findall(r"set arrow from graph 0, first ([-0-9.eE+]+) to graph 1", gp)]
    times = [float(x) for x in re.findall(r"set arrow from ([-0-9.eE+]+), graph 0 to", gp)]
    sw = ind.get("switching", [{}])[0].get("times", [])
    print("compare.gp: bounds %s, switching times %s; indirect summary %s; max |du| %s" % (
        levels, times, sw, cmpj.get("max_abs_du")))
    check(sorted(levels) == [-2.5, 2.5] and len(times) == len(sw) >= 2 and
          max(abs(a - b) for a, b in zip(times, sw)) < 1e-9 and cmpj.get("max_abs_du", 1) < 0.1,
          "compare: bounds %s, times %s vs %s, |du| %s" % (levels, times, sw, cmpj.get("max_abs_du")))


def t_bounds_jacobian():
    """The analytic Jacobians with the bounded law against -snes_test_jacobian at every Newton iterate of the
    continuation: the state blocks -h G diag(du/ds) G^T (swingup_bounded, N = 20, eps from 0.5 down by 0.8 to the
    exact projection), the free-T row dH^d/dlambda = JJ gbar + G u with the bang-bang law (mintime, N = 8, eps down to
    0.01), transcription on 1 rank and 3-segment shooting on 2 (the march's sensitivities). A wrong block gives
    ratios >= 1e-3; the finite difference's own error stays below 1e-4 (measured 3e-5 at worst, far from the
    solution; 2e-7 near it, 2e-6 through the march)."""
    for extra, ranks in (([], 1), (["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"], 2)):
        for prob, args in ((SWINGUP, ["-N", "20", "-hs_bounds_eps0", "0.5", "-hs_bounds_eps_factor", "0.8",
                                      "-hs_bounds_eps_min", "0.3"]),
                           (MINTIME, ["-N", "8", "-hs_bounds_eps_min", "0.01"])):
            _, out, _ = run(["-problem", prob, "-snes_test_jacobian", "-hs_linear_solver", "mumps", "-hs_strategy",
                             "newton"] + NOEXT + args + extra, ranks=ranks, expect_rc=None)
            ratios = [float(x) for x in __import__("re").findall(r"\|\|J - Jfd\|\|_F/\|\|J\|\|_F = ([0-9.eE+-]+)", out)]
            print("%s %s, %d rank(s): %d Jacobians, max ratio %.1e, last %.1e" % (
                os.path.basename(prob), " ".join(extra), ranks, len(ratios), max(ratios) if ratios else -1,
                ratios[-1] if ratios else -1))
            # the march's sensitivities amplify the difference's own error (hs_orders' jacobian: 1e-5 for shooting)
            check(len(ratios) >= 5 and max(ratios) < 1e-4 and ratios[-1] < (1e-5 if extra else 1e-6),
                  "%s %s: Jacobian ratios %s" % (os.path.basename(prob), " ".join(extra), ratios))


def t_bounds_smoothed_only():
    """A continuation whose last step fails keeps its last converged smoothing and says so, never "converged":
    swingup_bounded by 1-segment shooting with -hs_bounds_eps_factor 0.001 (eps = eps0 (hi - lo) = 6 eps0, then at once
    the exact projection). Whether the exact projection's Newton from the smoothed solution fails turns on round-off
    (from eps = 3 it failed its line search at its second step, or converged to a neighbouring extremal, J^d 13.65193,
    in 18 iterations on one machine and in 12 on another, where this test's old -snes_max_it 15 no longer stopped it);
    the farther the jump the likelier the failure. So the test tries eps0 = 0.5, 5, 10 and 20 in turn: a run whose
    exact step converged must say converged, exact, eps = 0 (exit 0); the first whose exact step fails must end exit 2,
    converged false, status SMOOTHED_ONLY, bounds.eps = 6 eps0, exact false, the diagnosis names both eps, no fallback
    tried (the strategy's one attempt), and the solution kept satisfies the smoothed law u = sigma_eps(lambda_p)
    (recomputed here). One of the four must fail (measured: eps0 = 5, 10 and 20 all fail, DIVERGED_LINE_SEARCH)."""
    s = None
    for eps0 in (0.5, 5, 10, 20):
        s, out, rc = run(["-problem", SWINGUP, "-hs_bvp_type", "shooting", "-hs_bounds_eps0", str(eps0),
                          "-hs_bounds_eps_factor", "0.001", "-hs_bounds_eps_min", "0.05"] + NOEXT, expect_rc=None)
        e = 6.0 * eps0
        if s and s["converged"]:
            print("eps0 = %g: the exact step converged, J^d %.10g" % (eps0, s["J"]))
            check(rc == 0 and s["bounds"]["exact"] and s["bounds"]["eps"] == 0,
                  "eps0 = %g converged: exit %d, bounds %s" % (eps0, rc, s["bounds"]))
            s = None
            continue
        check(rc == 2 and s and s["solver_status"] == "SMOOTHED_ONLY" and s["bounds"]["eps"] == e and
              not s["bounds"]["exact"] and "eps = %g" % e in s["diagnosis"] and "not at eps = 0" in s["diagnosis"] and
              len(s["strategy"]["attempts"]) == 1, "eps0 = %g, smoothed only: exit %d, %s" %
              (eps0, rc, s and {k: s[k] for k in ("solver_status", "bounds", "diagnosis")}))
        break
    check(s is not None, "no eps0 of 0.5, 5, 10, 20 made the exact step fail")
    if not s:
        return
    lo, hi, worst = -3.0, 3.0, 0.0
    sp = lambda t: 0.5 * (t + math.sqrt(t * t + e * e))
    for u, lp in zip(col(s, "u1"), col(s, "lambda_p_q")):
        worst = max(worst, abs(u - (lp + sp(lo - lp) - sp(lp - hi))))
    print("SMOOTHED_ONLY kept (eps0 = %g, eps = %g): J^d %.10g, u vs sigma_eps(lambda_p) %.1e" % (eps0, e, s["J"], worst))
    check(worst < 1e-10, "the kept solution does not satisfy the smoothed law: %.1e" % worst)
