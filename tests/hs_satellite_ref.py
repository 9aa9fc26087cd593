"""hamshoot system tests of issue 40: the satellite in Euler angles (problems/satellite_euler.ocp) against an
independent continuous reference, and -hs_compare (conserving indirect against IPOPT's direct NLP) on it
(docs/satellite.md, "The continuous optimum" and "Indirect and direct").

J_STAR is the continuous optimum of the same problem, computed by tests/crosscheck/satellite_bvp.py: scipy's
solve_bvp (4th-order collocation, adaptive mesh) on the continuous Pontryagin boundary-value problem (states,
costates, u = B^T lambda_p, the file's end conditions with their transversality conditions), independent of
hamshoot's discretization. Its values at tol 1e-8, 1e-10, 1e-11 (631, 2561, 5121 nodes) are 1434215.9608820,
1434215.9608785, 1434215.96087846: J_STAR is good to about 1e-8 absolute (1e-14 relative), far below what is
checked here.
"""
import json
import math
import os
import shutil
import tempfile

from hs_util import check, order, rel, run

HERE = os.path.dirname(os.path.abspath(__file__))
EULER = os.path.join(os.path.dirname(HERE), "problems", "satellite_euler.ocp")
J_STAR = 1434215.96087846  # tests/crosscheck/satellite_bvp.py, solve_bvp at tol 1e-11
QUICK = ["-hs_initial_guess", "direct", "-hs_check_extremal", "no"]  # the direct guess: skips Newton's failed cold start


def _richardson(J, a):
    """The order-2 Richardson value of grids a, 2a."""
    return (4 * J[2 * a] - J[a]) / 3


def _limits(J, what, tol1, tol2):
    """Checks the order 2 of J (grids 20 or 40 and up) and its extrapolations against J_STAR: the order-2
    Richardson value of the finest two grids to tol1 relative, and the order-2-and-4 value of the finest three
    (the h^4 term, which the measured error ratios of 16 show, eliminated too) to tol2."""
    Ns = sorted(J)
    o = order(J[Ns[0]] - J[Ns[1]], J[Ns[1]] - J[Ns[2]])
    check(abs(o - 2) <= 0.01, "%s: order %.4f from N = %s" % (what, o, Ns))
    r1, r0 = _richardson(J, Ns[1]), _richardson(J, Ns[0])
    r2 = (16 * r1 - r0) / 15
    print("%s: J^d %s; Richardson %.9f (%.2e relative from J*), with h^4 %.9f (%.2e)" % (
        what, ", ".join("%.6f" % J[N] for N in Ns), r1, (r1 - J_STAR) / J_STAR, r2, (r2 - J_STAR) / J_STAR))
    check(rel(r1, J_STAR) <= tol1, "%s: Richardson %.10g, the continuous J* %.10g" % (what, r1, J_STAR))
    check(rel(r2, J_STAR) <= tol2, "%s: Richardson (h^2, h^4) %.10g, J* %.10g" % (what, r2, J_STAR))


def t_satellite_reference():
    """The conserving scheme's J^d at N = 40, 80, 160 (1 and 2 ranks) converges at order 2 to the independent
    continuous optimum J* (solve_bvp): its Richardson value of (80, 160) within 2e-8 relative (measured 8.4e-9: the
    next term is h^4, the errors of the Richardson values of (40, 80) and (80, 160) fall by 16), and with the h^4
    term eliminated as well (40, 80, 160) within 1e-9 (measured 8e-12)."""
    J = {}
    for N, ranks in ((40, 1), (80, 2), (160, 1)):
        s, _, _ = run(["-problem", EULER, "-N", str(N)] + QUICK, ranks=ranks)
        if not s or not s["converged"]:
            return check(False, "satellite_euler N = %d on %d ranks: not converged" % (N, ranks))
        J[N] = s["J"]
        check(J[N] > J_STAR, "satellite_euler N = %d: J^d %.10g below J* %.10g" % (N, J[N], J_STAR))
    _limits(J, "satellite_euler (conserving)", 2e-8, 1e-9)


def t_satellite_compare():
    """-hs_compare on the satellite at N = 20, 40, 80 (conserving indirect against IPOPT's direct NLP, Gonzalez
    states on both sides): both converge; H^d constant to round-off on the indirect side and drifting on the direct
    side; E - W at round-off on both; the direct J^d at most the indirect one (the indirect solution satisfies the
    same state equations, a feasible point of the NLP whose minimum IPOPT finds) and above it by an offset of order 4
    (the controls differ by O(h^2) and J^d is stationary at the NLP's minimum, so the offset is quadratic in that
    difference: 2.7, 0.17, 0.011 measured, 1.2e-7 relative at N = 40); IPOPT's J^d converges at order 2 to the
    independent J* (Richardson of (40, 80) within 2e-7 relative, measured 1.0e-7; with h^4 within 1e-9); the pages,
    with the coordinates' names and the discrete velocities (the rotor rates)."""
    Ji, Jd, off = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for N in (20, 40, 80):
            out = os.path.join(tmp, "cmp%d" % N)
            _, text, rc = run(["-problem", EULER, "-N", str(N), "-hs_compare", "-hs_initial_guess", "direct"], outdir=out)
            cj = os.path.join(out, "compare.json")
            if rc or not os.path.exists(cj):
                return check(False, "-hs_compare N = %d: exit %d\n%s" % (N, rc, text[-1500:]))
            c = json.load(open(cj))
            a, b = c["indirect"], c["direct"]
            check(a["converged"] and b["converged"] and b["bvp_type"] == "ipopt" and b["costate_scheme"] == "kkt",
                  "-hs_compare N = %d: converged %s, %s (direct: %s, %s)" % (N, a["converged"], b["converged"],
                                                                          b["bvp_type"], b["costate_scheme"]))
            check(a["H_spread_relative"] <= 1e-12 and b["H_spread_relative"] >= 1e-6,
                  "-hs_compare N = %d: H^d spreads %.3g (indirect), %.3g (direct)" % (
                      N, a["H_spread_relative"], b["H_spread_relative"]))
            check(max(a["energy_work_spread"], b["energy_work_spread"]) <= 1e-8,  # E up to 1e4: 1e-12 relative
                  "-hs_compare N = %d: E - W spreads %.3g, %.3g" % (N, a["energy_work_spread"], b["energy_work_spread"]))
            Ji[N], Jd[N] = a["J"], b["J"]
            off[N] = Ji[N] - Jd[N]
            check(off[N] >= -1e-9 * Ji[N], "-hs_compare N = %d: direct J^d %.12g above the indirect %.12g" % (
                N, Jd[N], Ji[N]))
        print("indirect - direct J^d: %s" % ", ".join("%.4e" % off[N] for N in (20, 40, 80)))
        o = math.log2(off[20] / off[40]), math.log2(off[40] / off[80])
        check(all(abs(x - 4) <= 0.05 for x in o), "-hs_compare: order of the offset J^d indirect - direct %s" % (o,))
        _limits(Jd, "satellite_euler (IPOPT, direct)", 2e-7, 1e-9)
        gp = open(os.path.join(tmp, "cmp40", "compare.gp")).read()
        check(all("title '%s indirect'" % n in gp for n in ("psi", "th", "ph", "a1", "a2", "a3")) and
              "set output hs_png('velocities.png')" in gp, "-hs_compare: compare.gp's pages with the coordinates' names")
        if shutil.which("gnuplot"):
            pngs = ("controls.png", "configurations.png", "velocities.png", "energy_work.png", "hamiltonian.png")
            check(all(os.path.exists(os.path.join(tmp, "cmp40", f)) for f in pngs), "-hs_compare: the five pages")
