"""hamshoot system tests of controls beyond 1/2 u^T R u in the full-Pontryagin scheme -hs_scheme conserving4 (issue
41, docs/controls.md "Controls in the full-Pontryagin scheme"): a force f(q, u) that is nonlinear in u and a general
control cost (problem-file keys force, control_cost, control_names), the maximizer u*(q, lambda_p) by an inner Newton,
the Legendre-Clebsch condition checked, the maximized Hamiltonian conserved to round-off, and the minimum-time
particle transfer (problems/particle_transfer.ocp) against its exact linear-tangent solution.
"""
import math
import os

from hs_util import check, jacobian_ratios, order, run

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
PROBLEMS = os.path.join(os.path.dirname(DATA), "..", "problems")
C4 = ["-hs_scheme", "conserving4", "-hs_check_extremal", "no"]

# problems/particle_transfer.ocp: Bryson & Ho's linear-tangent law (Bottasso & Croce 2004, section 5.1)
PT_T, PT_XT, PT_VH = 20.0588756142, 122.4594356245, 8.5963002053
PT_BETA0, PT_C = math.radians(74.9441813765), 0.3706648592


def solve(prob, N, extra=(), ranks=1):
    s, out, _ = run(["-problem", prob, "-N", str(N)] + C4 + list(extra), ranks=ranks)
    check(s and s["converged"], "%s N=%d conserving4 did not converge: %s" % (prob, N, out[-400:]))
    return s


def spread(s):
    return s["H_spread"] / max(1.0, abs(s["H_mean"]))


def t_controls_equivalent():
    """a force nonlinear in u with a closed-form maximizer: tests/data/pendulum_sinh.ocp ((1 + 2cs) sinh(v), cost
    1/2 sinh(v)^2) is tests/data/pendulum_bq.ocp (B(s) = 1 + 2cs, R = 1) written in w = sinh(v), so the maximized
    Hamiltonians are the same function and the discrete solutions agree to solver tolerance (J, T-free nothing, node
    states and costates, the control with sinh(v) = B(s) lambda_p); H constant to round-off; the Jacobian against
    finite differences on that and on a 2-DOF problem with q-dependent force and cost (tests/data/nonlinear2.ocp)."""
    for N in (20, 80):
        a = solve(os.path.join(DATA, "pendulum_sinh.ocp"), N)
        b = solve(os.path.join(DATA, "pendulum_bq.ocp"), N)
        if not (a and b):
            return
        dJ = abs(a["J"] - b["J"])
        dz = max(abs(float(ra[k]) - float(rb[k])) for ra, rb in zip(a["_rows"], b["_rows"])
                 for k in ra if k.startswith(("q_", "p_", "lambda")) and ra[k] != "")
        du = max(abs(math.sinh(float(r["u1"])) - (1 + 0.2 * float(r["q_s"])) * float(r["lambda_p_s"]))
                 for r in a["_rows"] if r.get("u1", "") != "")
        print("N=%d: J %.12f vs %.12f (diff %.1e), max node diff %.1e, control law %.1e, H spread %.1e"
              % (N, a["J"], b["J"], dJ, dz, du, spread(a)))
        check(dJ < 1e-11 and dz < 1e-9, "pendulum_sinh vs pendulum_bq N=%d: J diff %.1e, node diff %.1e" % (N, dJ, dz))
        check(du < 1e-10, "pendulum_sinh N=%d: sinh(u) != B(s) lambda_p (%.1e)" % (N, du))
        check(spread(a) < 1e-12, "pendulum_sinh N=%d: H spread %.1e relative" % (N, spread(a)))
    for prob in ("pendulum_sinh.ocp", "nonlinear2.ocp"):
        _, out, _ = run(["-problem", os.path.join(DATA, prob), "-N", "6", "-snes_test_jacobian", "-snes_max_it", "3"]
                        + C4, expect_rc=None)
        r = jacobian_ratios(out)
        print("%s: Jacobians %s" % (prob, ["%.1e" % x for x in r]))
        check(len(r) >= 2 and max(r) <= 1e-6, "%s conserving4 Jacobian: %s" % (prob, r))


def t_controls_order():
    """tests/data/nonlinear2.ocp (2 DOF, force nonlinear in u and q, control cost with u^4 and cos(a) u1 u2, ell,
    phi, a free end): H constant to 1e-12 relative for each N, and J at order 4 (ratios of successive differences
    of J for N = 10 ... 80 give orders 4 +- 0.3); 1 and 2 ranks agree."""
    Js = []
    for N in (10, 20, 40, 80):
        s = solve(os.path.join(DATA, "nonlinear2.ocp"), N)
        if not s:
            return
        Js.append(s["J"])
        check(spread(s) < 1e-12, "nonlinear2 N=%d: H spread %.1e relative" % (N, spread(s)))
    o = [order(abs(Js[i] - Js[i + 1]), abs(Js[i + 1] - Js[i + 2])) for i in range(len(Js) - 2)]
    print("nonlinear2 J %s, orders %s" % (["%.12f" % x for x in Js], ["%.2f" % x for x in o]))
    check(all(abs(x - 4) <= 0.3 for x in o), "nonlinear2: orders of J %s" % o)
    s2 = solve(os.path.join(DATA, "nonlinear2.ocp"), 40, ranks=2)
    check(s2 and abs(s2["J"] - Js[2]) < 1e-12, "nonlinear2 N=40: 2 ranks J %s vs %s" % (s2 and s2["J"], Js[2]))


def t_controls_legendre():
    """a control cost that is not convex in u gets a clear message naming the Legendre-Clebsch condition or the
    missing maximum and a time, and no converged solution: -1/2 v^2 (H convex in v) and 1/2 v^2 - 1/4 v^4 (H unbounded
    above in v); control_cost without force, B with force and a control in the potential are file errors."""
    src = open(os.path.join(DATA, "pendulum_sinh.ocp")).read()
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for cost, want in (("-0.5*v^2", "Legendre-Clebsch"), ("0.5*v^2 - 0.25*v^4", "no maximum of H in u")):
            path = os.path.join(d, "lc.ocp")
            with open(path, "w") as f:
                f.write(src.replace("control_cost: 0.5*sinh(v)^2", "control_cost: " + cost)
                        .replace("force: (1 + 2*c*s)*sinh(v)", "force: (1 + 2*c*s)*v"))
            s, out, rc = run(["-problem", path, "-N", "20"] + C4, expect_rc=None)
            print("cost %s: rc %d, diagnosis: %s" % (cost, rc, s and s["diagnosis"][:200]))
            check(s and not s["converged"] and want in s["diagnosis"] and "near t = " in s["diagnosis"],
                  "control_cost %s: no clear Legendre-Clebsch message: %s" % (cost, s and s["diagnosis"]))
        for old, new, want in (("force: (1 + 2*c*s)*sinh(v)\n", "", "control_cost: needs force"),
                               ("force:", "B: 1\nforce:", "B: does not apply with force"),
                               ("potential: -m*g*l*sin(s + c*s^2)", "potential: v", "the control 'v' is allowed only in force")):
            path = os.path.join(d, "bad.ocp")
            with open(path, "w") as f:
                f.write(src.replace(old, new))
            _, out, rc = run(["-problem", path] + C4, expect_rc=None)
            check(rc != 0 and want in out, "file error '%s' not reported: %s" % (want, out[-300:]))
        _, out, rc = run(["-problem", os.path.join(DATA, "pendulum_sinh.ocp")], expect_rc=None)
        check(rc != 0 and "only -hs_scheme conserving4" in out, "second-order scheme did not refuse a force: %s" % out[-300:])


def t_controls_particle():
    """the minimum-time particle transfer (problems/particle_transfer.ocp: thrust direction beta entering the force
    nonlinearly, no control cost, T free) from the default guess (the automatic regularized start): T, x(T), v(T/2)
    at order 4 +- 0.3 against the exact linear-tangent solution (T for N = 20, 40, 80: at 160 its error reaches the
    exact value's 10 digits; the others for N = 40, 80, 160: N = 20 is pre-asymptotic), the Richardson limit of T (h^4) within 1e-9 relative of the exact T (target 1e-6), the control
    beta(t_k) against arctan(tan beta0 - c t) (mod 2 pi) at order 4 +- 0.3, H = d phi/dT = 1 to round-off at every
    node and stage node, and 2 ranks equal to 1 rank."""
    prob = os.path.join(PROBLEMS, "particle_transfer.ocp")
    errs, Ts = [], []
    for N in (20, 40, 80, 160):
        s = solve(prob, N)
        if not s:
            return
        rows = s["_rows"]
        T, xT, vh = s["T"], float(rows[-1]["q_x"]), float(rows[N // 2]["p_y"])
        be = max(abs(math.remainder(float(r["u1"]) - math.atan(math.tan(PT_BETA0) - PT_C * float(r["t_mid"])),
                                    2 * math.pi)) for r in rows if r.get("u1", "") != "")
        errs.append((abs(T - PT_T), abs(xT - PT_XT), abs(vh - PT_VH), be / PT_BETA0))
        Ts.append(T)
        print("N=%d: T %.12f x(T) %.10f v(T/2) %.10f; errors %s; H in [%.16f, %.16f]" % (
            N, T, xT, vh, ["%.2e" % e for e in errs[-1]], s["H_min"], s["H_max"]))
        check(abs(s["H_min"] - 1) < 1e-13 and abs(s["H_max"] - 1) < 1e-13, "particle N=%d: H not 1: %s %s"
              % (N, s["H_min"], s["H_max"]))
    for i, name in enumerate(("T", "x(T)", "v(T/2)", "beta")):
        e = errs[:3] if i == 0 else errs[1:]  # T at N = 160 is within 4e-12 relative: the exact value's 10 digits
        o = [order(e[j][i], e[j + 1][i]) for j in range(len(e) - 1)]
        print("particle: orders of %s %s" % (name, ["%.2f" % x for x in o]))
        check(all(abs(x - 4) <= 0.3 for x in o), "particle: orders of %s %s" % (name, o))
    rich = Ts[2] + (Ts[2] - Ts[1]) / 15  # N = 40, 80
    print("particle: Richardson T %.12f, relative error %.1e" % (rich, abs(rich - PT_T) / PT_T))
    check(abs(rich - PT_T) / PT_T < 1e-9, "particle: Richardson T %.12f vs %.10f" % (rich, PT_T))
    s2 = solve(prob, 40, ranks=2)
    check(s2 and abs(s2["T"] - Ts[1]) < 1e-12, "particle N=40 on 2 ranks: T %s vs %s" % (s2 and s2["T"], Ts[1]))


def t_controls_bounded():
    """bounded controls in conserving4 (the control term psi(B^T lambda_p) of costate/hscontrol.h): the pendulum with
    |u| <= 2.5 (problems/pendulum_bounded.ocp) from the default guess through the eps-continuation to the exact
    projection (semismooth Newton at eps = 0), H constant to 1e-12 relative at eps = 0 for every N, J converging to the
    limit of IPOPT's solutions of the same continuous problem (Richardson of N = 640, 1280, 2560, order 2 checked):
    |J - J*| <= 40/N^2 for N = 640 ... 2560 (second order with a coefficient that depends on where the kinks of u fall
    on the grid: N^2 |J - J*| measured between 0.3 and 23 for N = 640 ... 20480, of changing sign; docs/controls.md),
    2 ranks equal to 1; the bang-bang minimum-time double integrator (R: 0, problems/mintime_double_integrator.ocp)
    ends at eps = eps_min > 0: H = d phi/dT = 1 to round-off for eps_min = 0.1, 0.01, 0.001, T within 0.05 of 2 and
    one switch within 0.05 of t = 1."""
    prob = os.path.join(PROBLEMS, "pendulum_bounded.ocp")
    JI = []
    for N in (640, 1280, 2560):
        s, out, _ = run(["-problem", prob, "-N", str(N), "-hs_scheme", "direct", "-hs_direct_solver", "ipopt",
                         "-hs_check_extremal", "no"])
        check(s and s["converged"], "pendulum_bounded IPOPT N=%d: %s" % (N, out[-300:]))
        if not s:
            return
        JI.append(s["J"])
    o = order(JI[0] - JI[1], JI[1] - JI[2])
    Jstar = JI[2] + (JI[2] - JI[1]) / 3
    print("IPOPT J %s, order %.2f, Richardson J* %.12f" % (["%.12f" % x for x in JI], o, Jstar))
    check(abs(o - 2) < 0.1, "pendulum_bounded IPOPT: order %.2f" % o)
    for N in (40, 640, 1280, 2560):
        s = solve(prob, N)
        if not s:
            return
        b = s.get("bounds") or {}
        print("conserving4 N=%d: J %.12f, J - J* %.2e (N^2 |J - J*| %.1f), H spread %.1e, eps %s, exact %s, switches %s"
              % (N, s["J"], s["J"] - Jstar, N * N * abs(s["J"] - Jstar), spread(s), b.get("eps"), b.get("exact"),
                 [sw["times"] for sw in s.get("switching", [])]))
        check(b.get("exact") and b.get("eps") == 0, "pendulum_bounded N=%d: not the exact projection: %s" % (N, b))
        check(spread(s) < 1e-12, "pendulum_bounded N=%d: H spread %.1e" % (N, spread(s)))
        check(N < 640 or abs(s["J"] - Jstar) <= 40.0 / N**2, "pendulum_bounded N=%d: J %.12f vs J* %.12f" % (
            N, s["J"], Jstar))
        if N == 640:
            s2 = solve(prob, N, ranks=2)
            check(s2 and abs(s2["J"] - s["J"]) < 1e-12, "pendulum_bounded on 2 ranks: %s" % (s2 and s2["J"]))
    for e in ("0.1", "0.01", "0.001"):
        s = solve(os.path.join(PROBLEMS, "mintime_double_integrator.ocp"), 40, ["-hs_bounds_eps_min", e])
        if not s:
            return
        sw = s.get("switching", [{}])[0].get("times", [])
        print("mintime eps_min %s: T %.6f, H in [%.16f, %.16f], switches %s" % (e, s["T"], s["H_min"], s["H_max"], sw))
        check(abs(s["H_min"] - 1) < 1e-13 and abs(s["H_max"] - 1) < 1e-13, "mintime eps %s: H not 1" % e)
        check(abs(s["T"] - 2) < 0.05 and len(sw) == 1 and abs(sw[0] - 1) < 0.05, "mintime eps %s: T %s switches %s"
              % (e, s["T"], sw))
