"""Constrained systems in natural coordinates (docs/constrained.md): the conserving scheme of costate/constrained.c
through the executable. Expected values come from the mathematics (H^d and E - W constant, the constraints and the
adjoint constraint satisfied, to round-off; order 2), from docs/constrained.md's independent implementation (the
regression values) and from the same continuous problems in minimal coordinates (the pendulum's limit of
docs/theory.md section 4; the double pendulum in its angles, solved by the generalized-coordinate solver)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from hs_util import check, jacobian_ratios, order, rel, run, summary_of

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "..", "problems")
J_PENDULUM = 6.436944438855  # docs/theory.md section 4.1: the pendulum's J at h -> 0
H_PENDULUM = 1.368255669166
# Newton to the round-off level of |F| itself (not only below the default absolute 1e-12, where H^d's spread is
# |F| |lambda| / h, about 1e-12 relative and above), so that H^d shows the scheme's conservation
TIGHT = ["-hs_snes_roundoff", "1", "-snes_atol", "1e-16"]


def problem(name):
    return os.path.join(PROBLEMS, name + ".ocp")


def column_max(rows, prefix):
    vals = [abs(float(r[k])) for r in rows for k in r if k.startswith(prefix) and r[k] not in ("", None)]
    return max(vals) if vals else 0.0


def check_conserved(s, what):
    """H^d, E - W, the constraints, the interval hidden constraint and the adjoint constraint at round-off."""
    rows = s["_rows"]
    qmax, pmax, lmax = (max(1.0, column_max(rows, p)) for p in ("q_", "p_", "lambda_"))
    emax = max(1.0, column_max(rows, "E_minus_W"))
    c = s["constraints"]
    check(s["converged"], "%s: converged" % what)
    check(s["H_spread_relative"] <= 1e-12, "%s: H^d spread %.3g relative, not round-off" % (what, s["H_spread_relative"]))
    check(s["energy_work_spread"] <= 1e-12 * emax, "%s: E - W spread %.3g (E ~ %.3g)" % (what, s["energy_work_spread"], emax))
    check(c["max_phi"] <= 1e-13 * qmax * qmax, "%s: max |Phi(q_k)| = %.3g" % (what, c["max_phi"]))
    check(c["hidden_interval"] <= 1e-12 * qmax * pmax, "%s: hidden constraint %.3g" % (what, c["hidden_interval"]))
    check(c["adjoint"] <= 1e-12 * qmax * lmax, "%s: adjoint constraint %.3g" % (what, c["adjoint"]))


def check_pendulum_equations(s, what, g=9.81):
    """The Cartesian pendulum's scheme (docs/constrained.md) rebuilt here from the output files alone, with the
    multipliers gamma (intervals.csv) and nu (trajectory.csv): Phi = 1/2 (x^2 + y^2 - 1), M = I, grad V = (0, g),
    B(q) = (-y, x), R = 1. The momentum equation and the node costate equation hold to round-off."""
    rows, N = s["_rows"], s["N"]
    h = s["T"] / N
    f = lambda r, k: float(r[k])
    q = [(f(r, "q_x"), f(r, "q_y")) for r in rows]
    p = [(f(r, "p_x"), f(r, "p_y")) for r in rows[:N + 1]]
    lq = [(f(r, "lambda_q_x"), f(r, "lambda_q_y")) for r in rows[:N]]
    lp = [(f(r, "lambda_p_x"), f(r, "lambda_p_y")) for r in rows[:N]]
    gam = [f(r, "gamma1") for r in rows[:N]]
    nu = [f(r, "nu1") for r in rows]
    worst = 0.0
    for k in range(N):  # p_{k+1} - p_k + h (grad V + G(qbar)^T gamma - B(qbar) u), u = B^T lp
        xb, yb = (q[k][0] + q[k + 1][0]) / 2, (q[k][1] + q[k + 1][1]) / 2
        u = -yb * lp[k][0] + xb * lp[k][1]
        rp = (p[k + 1][0] - p[k][0] + h * (xb * gam[k] + yb * u), p[k + 1][1] - p[k][1] + h * (g + yb * gam[k] - xb * u))
        worst = max(worst, abs(rp[0]), abs(rp[1]))
    for k in range(1, N):  # lq+ - lq- - h/2 (gamma+ lp- + gamma- lp+) + h c_B - h G(chord)^T nu
        a, b = lp[k - 1], lp[k]
        cx, cy = (q[k - 1][0] + 2 * q[k][0] + q[k + 1][0]) / 4, (q[k - 1][1] + 2 * q[k][1] + q[k + 1][1]) / 4
        Bta, Btb = -cy * a[0] + cx * a[1], -cy * b[0] + cx * b[1]  # B(c)^T a, B(c)^T b
        dBa, dBb = (a[1], -a[0]), (b[1], -b[0])  # d_x B^T a = a_y, d_y B^T a = -a_x
        cB = [0.5 * (dBa[l] * Btb + Bta * dBb[l]) for l in range(2)]
        chord = ((q[k - 1][0] + q[k + 1][0]) / 2, (q[k - 1][1] + q[k + 1][1]) / 2)
        for l in range(2):
            r = lq[k][l] - lq[k - 1][l] - h / 2 * (gam[k] * a[l] + gam[k - 1] * b[l]) + h * cB[l] - h * chord[l] * nu[k]
            worst = max(worst, abs(r))
    scale = max(1.0, max(abs(v) for v in gam + nu))
    check(worst <= 1e-12 * scale, "%s: the scheme rebuilt from the output files (gamma, nu) has residual %.3g" % (what, worst))


def t_constrained():
    """docs/constrained.md's regression values to 1e-9 relative, with H^d, E - W, Phi and the adjoint constraint at
    round-off, from the default guess with no options, on 1 and 2 ranks (the same numbers)."""
    cases = (("pendulum_cartesian", 20, 7.052139757926), ("pendulum_cartesian", 40, 6.583080434430),
             ("crane_natural", 40, 83389.878170243), ("double_pendulum_cartesian", 20, 7.524348901241))
    for name, N, J in cases:
        res = {}
        for ranks in (1, 2):
            s, _, _ = run(["-problem", problem(name), "-N", str(N)] + TIGHT, ranks=ranks)
            what = "%s N = %d, %d rank%s" % (name, N, ranks, "s" if ranks > 1 else "")
            if not s:
                check(False, what + ": no summary")
                continue
            check(abs(s["J"] - J) <= 1e-9 * abs(J), "%s: J^d = %.15g, docs/constrained.md: %.15g" % (what, s["J"], J))
            check(s["state_scheme"] == "bem" and s["costate_scheme"] == "constrained", what + ": schemes named")
            check_conserved(s, what)
            if name == "pendulum_cartesian":
                check_pendulum_equations(s, what)
            res[ranks] = s
        if len(res) == 2:
            check(abs(res[1]["J"] - res[2]["J"]) <= 1e-12 * abs(J), "%s N = %d: J on 1 and 2 ranks %.17g, %.17g"
                  % (name, N, res[1]["J"], res[2]["J"]))


def t_constrained_order():
    """The Cartesian pendulum converges at order 2.0 +- 0.1 in J and H^d to the pendulum's limits (the same continuous
    problem in its angle), Richardson's limit within 1e-6; the double pendulum's Richardson limit equals the one of the
    same system in its angles (generalized coordinates) within 1e-6; H^d at round-off for every N."""
    J, H = {}, {}
    for N in (20, 40, 80, 160, 320):
        s, _, _ = run(["-problem", problem("pendulum_cartesian"), "-N", str(N)] + TIGHT)
        if not s:
            return check(False, "pendulum_cartesian N = %d: no summary" % N)
        check_conserved(s, "pendulum_cartesian N = %d" % N)
        J[N], H[N] = s["J"], s["H_mean"]
    for a, b in ((40, 80), (80, 160)):
        oJ, oH = order(J[a] - J_PENDULUM, J[b] - J_PENDULUM), order(H[a] - H_PENDULUM, H[b] - H_PENDULUM)
        check(abs(oJ - 2) <= 0.1, "pendulum_cartesian: order of J from N = %d to %d: %.3f" % (a, b, oJ))
        check(abs(oH - 2) <= 0.1, "pendulum_cartesian: order of H^d from N = %d to %d: %.3f" % (a, b, oH))
    rich = (4 * J[320] - J[160]) / 3
    check(rel(rich, J_PENDULUM) <= 1e-6, "pendulum_cartesian: Richardson J %.12g, the pendulum's %.12g" % (rich, J_PENDULUM))
    limits = {}
    for name, extra in (("double_pendulum_cartesian", TIGHT), (os.path.join(HERE, "data", "double_pendulum_angles.ocp"), [])):
        Js = {}
        for N in (80, 160):
            path = name if name.endswith(".ocp") else problem(name)
            s, _, _ = run(["-problem", path, "-N", str(N), "-hs_check_extremal", "no"] + extra)
            if not s:
                return check(False, "%s N = %d: no summary" % (name, N))
            if "constraints" in s:
                check_conserved(s, "%s N = %d" % (name, N))
            Js[N] = s["J"]
        limits[name] = (4 * Js[160] - Js[80]) / 3
    a, b = limits.values()
    check(rel(a, b) <= 1e-6, "double pendulum: Richardson limits %.12g (Cartesian) and %.12g (angles)" % (a, b))


def t_constrained_errors():
    """What the constrained formulations do not do (a matrix-free shooting; IPOPT with the conserving scheme's costates,
    which are not its multipliers), and end data a parameter makes inconsistent, are refused with a message naming the
    cause."""
    pc = problem("pendulum_cartesian")
    for args, want in ((["-hs_bvp_type", "shooting", "-hs_shoot_mf"], "its multiple shooting takes no -hs_shoot_mf"),
                       (["-hs_bvp_type", "ipopt", "-hs_costate_scheme", "constrained"], "schemes bem + constrained_kkt"),
                       (["-hs_state_scheme", "gonzalez"], "its schemes are bem + constrained")):
        _, out, rc = run(["-problem", pc] + args, expect_rc=None)
        check(rc != 0 and want in out, "pendulum_cartesian %s: exit %d, expected '%s' in: %s" % (" ".join(args), rc, want, out[-300:]))
    _, out, rc = run(["-problem", problem("crane_natural"), "-p_r", "0.2"], expect_rc=None)
    check(rc != 0 and "x0: constraint 1" in out, "crane_natural -p_r 0.2 (rope too long at x0): exit %d: %s" % (rc, out[-300:]))


def t_constrained_shooting():
    """Multiple shooting of the constrained scheme (bvp/impls/consshoot.c: each step a local Newton in the states and
    the multipliers) solves the transcription's equations: its Jacobian (chained step sensitivities) equals
    differences; on 1 and 2 ranks and several segment counts J^d equals the transcription's to 1e-10 and the states,
    costates and multipliers at every node to 1e-8 of their size; the constraints and the adjoint constraint at
    round-off, H^d constant to the march's round-off (1e-11 relative: each segment carries the steps' round-off,
    amplified by its sensitivities, into the matching residuals); the extended class (a spring) as well."""
    for name in ("pendulum_cartesian", "fourbar"):
        _, out, _ = run(["-problem", problem(name), "-N", "6", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "3",
                         "-snes_test_jacobian", "-snes_max_it", "1", "-hs_strategy", "newton"], expect_rc=None)
        r = jacobian_ratios(out)
        check(r and max(r) <= 1e-6, "%s shooting: ||J - Jfd|| / ||J|| = %s" % (name, r))
    # the spring pendulum has two mirror-image extremals (x -> -x) with the same J: started from the transcription's
    # solution (-hs_init), the shooting must stay on it; the others start from the default guess
    cases = (("pendulum_cartesian", problem("pendulum_cartesian"), 40, (1, 5), False),
             ("double_pendulum_cartesian", problem("double_pendulum_cartesian"), 20, (4,), False),
             ("fourbar", problem("fourbar"), 40, (4,), False),
             ("pendulum_spring_cartesian", os.path.join(HERE, "data", "pendulum_spring_cartesian.ocp"), 40, (4,), True))
    tmp = tempfile.TemporaryDirectory()
    # sanitized (HS_SANITIZED): 2 ranks for the first problem only; the segments' distribution over the ranks is the
    # same code for every problem (AddressSanitizer's time: 51 s of CI's sanitized run, against 15 s released)
    sanitized = bool(os.environ.get("HS_SANITIZED"))
    for name, path, N, segs, init in cases:
        refdir = os.path.join(tmp.name, name)
        ref, _, _ = run(["-problem", path, "-N", str(N)] + TIGHT, outdir=refdir)
        if not ref:
            return check(False, "%s: the transcription gave no summary" % name)
        start = ["-hs_init", os.path.join(refdir, "trajectory.csv")] if init else []
        cols = [k for k in ref["_rows"][0] if k.startswith(("q_", "p_", "lambda_", "nu", "gamma"))]
        for M in segs:
            for ranks in (1,) if sanitized and name != cases[0][0] else (1, 2):
                s, out, _ = run(["-problem", path, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)]
                                + start + TIGHT, ranks=ranks)
                what = "%s N = %d, %d segments, %d ranks" % (name, N, M, ranks)
                if not s:
                    check(False, "%s: no summary" % what)
                    continue
                c = s["constraints"]
                scale = {k: max(1.0, column_max(ref["_rows"], k)) for k in cols}
                dx = max(abs(float(a[k]) - float(b[k])) / scale[k] for a, b in zip(s["_rows"], ref["_rows"]) for k in cols
                         if a[k] not in ("", None) and b[k] not in ("", None))
                print("%s: J %.15g (transcription %.15g), nodes %.2e, H^d spread %.2e, max|Phi| %.1e, adjoint %.1e" %
                      (what, s["J"], ref["J"], dx, s["H_spread_relative"], c["max_phi"], c["adjoint"]))
                check(s["converged"] and rel(s["J"], ref["J"]) <= 1e-10 * abs(ref["J"]), "%s: J %.15g, transcription %.15g"
                      % (what, s["J"], ref["J"]))
                check(dx <= 1e-8, "%s: nodes differ from the transcription's by %.3g of their size" % (what, dx))
                check(s["H_spread_relative"] <= 1e-11 and c["max_phi"] <= 1e-13 and c["adjoint"] <= 1e-10,
                      "%s: H^d spread %.3g, max|Phi| %.3g, adjoint %.3g" % (what, s["H_spread_relative"], c["max_phi"],
                                                                          c["adjoint"]))
                check("multiple shooting with %d segment" % M in out, "%s: the summary names the formulation" % what)
    # q_N = q_T whole, not only along the tangent space at q_T (the tenth review: started from the mirror image's solution,
    # one segment had ended at (-1, 0) instead of (1, 0), and the four-bar on another point of its loop, "converged")
    left = os.path.join(tmp.name, "left.ocp")
    with open(problem("pendulum_cartesian")) as f, open(left, "w") as g:
        g.write(f.read().replace("xT: l, 0, 0, 0", "xT: -l, 0, 0, 0"))
    run(["-problem", left], outdir=os.path.join(tmp.name, "left"))
    for args in (["-problem", problem("pendulum_cartesian"), "-hs_init", os.path.join(tmp.name, "left", "trajectory.csv")],
                 ["-problem", problem("fourbar")]):
        s, _, rc = run(args + ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], ranks=2, expect_rc=None)
        last = s and s["_rows"][s["N"]]
        qT = {"pendulum_cartesian": (1.0, 0.0), "fourbar": (0.0, 1.0)}[s["problem"] if s else "fourbar"]
        end = last and (float(last[[k for k in last if k.startswith("q_")][0]]), float(last[[k for k in last if k.startswith("q_")][1]]))
        print("one segment from %s: exit %d, converged %s, ends at %s (q_T starts %s)" % (args[1], rc, s and s["converged"], end, qT))
        check(not (s and s["converged"]) or max(abs(a - b) for a, b in zip(end, qT)) <= 1e-8,
              "%s, one segment: converged at %s, not at q_T %s" % (args[1], end, qT))
    tmp.cleanup()


def t_constrained_free_end():
    """Free end states and terminal costs (docs/constrained.md): the Cartesian pendulum with all of x_N free and
    phi = w/2 ((x - 1)^2 + y^2 + p_theta^2), and reaching the horizontal with free momenta and phi = w/2 p_theta^2.
    H^d, E - W and the constraints at round-off; order 2.0 +- 0.1; the Richardson limits equal the same problems in
    the pendulum's angle (tests/data/pendulum_angle_*.ocp, generalized coordinates) within 1e-6; the direct
    scheme's J equals scipy SLSQP's optimum of the same NLP written independently
    (tests/crosscheck/constrained_direct.py --free) and is below the conserving J; multiple shooting equals the
    transcription on 1 and 2 ranks."""
    data = lambda f: os.path.join(HERE, "data", f + ".ocp")
    for cart, ang in (("pendulum_cartesian_free", "pendulum_angle_free"), ("pendulum_cartesian_reach", "pendulum_angle_reach")):
        J = {}
        for N in (80, 160, 320):
            s, _, _ = run(["-problem", data(cart), "-N", str(N), "-hs_check_extremal", "no"] + TIGHT)
            if not s:
                return check(False, "%s N = %d: no summary" % (cart, N))
            check_conserved(s, "%s N = %d" % (cart, N))
            J[cart, N] = s["J"]
        for N in (640, 1280):
            r, _, _ = run(["-problem", data(ang), "-N", str(N), "-hs_check_extremal", "no"])
            J[ang, N] = r["J"] if r else float("nan")
        o = order(J[cart, 80] - J[cart, 160], J[cart, 160] - J[cart, 320])
        lim = [(4 * J[cart, 320] - J[cart, 160]) / 3, (4 * J[ang, 1280] - J[ang, 640]) / 3]
        print("%s: order %.3f, Richardson limit %.10g (angle: %.10g)" % (cart, o, lim[0], lim[1]))
        check(abs(o - 2) <= 0.1, "%s: observed order %.3f" % (cart, o))
        check(rel(lim[0], lim[1]) <= 1e-6 * abs(lim[1]), "%s: limit %.10g, the angle form's %.10g" % (cart, lim[0], lim[1]))
        ref, _, _ = run(["-problem", data(cart), "-N", "40", "-hs_check_extremal", "no"] + TIGHT)
        for ranks in (1, 2):
            s, _, _ = run(["-problem", data(cart), "-N", "40", "-hs_check_extremal", "no", "-hs_bvp_type", "shooting",
                           "-hs_shoot_segments", "4"] + TIGHT, ranks=ranks)
            check(s and ref and s["converged"] and rel(s["J"], ref["J"]) <= 1e-10 * abs(ref["J"]),
                  "%s shooting on %d ranks: J %s, transcription %s" % (cart, ranks, s and s["J"], ref and ref["J"]))
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        for N in (20, 40):
            cons = os.path.join(tmp, "c%d" % N)
            c, _, _ = run(["-problem", data("pendulum_cartesian_free"), "-N", str(N)] + TIGHT, outdir=cons)
            d, _, _ = run(["-problem", data("pendulum_cartesian_free"), "-N", str(N), "-hs_scheme", "direct"] + TIGHT)
            p = subprocess.run([py, os.path.join(HERE, "crosscheck", "constrained_direct.py"), cons, "--free", "10"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            m = re.search(r"^J = (\S+)", p.stdout, re.M)
            print("free end N = %d: direct %s, SLSQP %s, conserving %s" % (N, d and d["J"], m and m.group(1), c and c["J"]))
            check(p.returncode == 0 and m and d and rel(float(m.group(1)), d["J"]) <= 1e-10 * d["J"],
                  "free end N = %d: SLSQP %s; Newton on the KKT %s" % (N, p.stdout.strip()[-300:], d and d["J"]))
            check(c and d and d["J"] <= c["J"], "free end N = %d: direct J %s above the conserving %s" % (N, d and d["J"],
                                                                                                   c and c["J"]))


def t_constrained_crane():
    """The crane in its redundant form converges at order 2.0 +- 0.1 and its Richardson limit equals the one of the same
    crane in generalized coordinates (problems/crane.ocp: trolley, rope length, angle; the generalized-coordinate
    solver) within 1e-6 relative: the same continuous problem on the same extremal."""
    J = {}
    sanitized = bool(os.environ.get("HS_SANITIZED"))  # the generalized crane converges only from IPOPT's direct guess
    for name in ("crane_natural",) + (() if sanitized else ("crane",)):
        for N in ((640, 1280, 2560) if name == "crane_natural" else (1280, 2560)):
            s, _, _ = run(["-problem", problem(name), "-N", str(N), "-hs_check_extremal", "no"] + TIGHT)
            if not s or not s["converged"]:
                return check(False, "%s N = %d: not converged" % (name, N))
            if name == "crane_natural":
                check_conserved(s, "crane_natural N = %d" % N)
            J[name, N] = s["J"]
    o = order(J["crane_natural", 640] - J["crane_natural", 1280], J["crane_natural", 1280] - J["crane_natural", 2560])
    check(abs(o - 2) <= 0.1, "crane_natural: observed order %.3f from N = 640, 1280, 2560" % o)
    if sanitized:
        return print("-- sanitized build: no IPOPT, so no generalized crane to compare with")
    lim = {name: (4 * J[name, 2560] - J[name, 1280]) / 3 for name in ("crane_natural", "crane")}
    check(rel(lim["crane_natural"], lim["crane"]) <= 1e-6 * abs(lim["crane"]),
          "crane: Richardson limits %.10g (natural) and %.10g (generalized)" % (lim["crane_natural"], lim["crane"]))


def t_constrained_direct():
    """-hs_scheme direct on a constrained system: the exact KKT conditions of the direct BEM transcription (plain
    products, each interval's own control term, G(q_k)^T nu), solved by Newton. Its H^d drifts, the drift shrinking at
    order 2.0 +- 0.2 (a negative test of the conserving scheme's crossed terms); E - W stays exact (the same state
    scheme); its J^d is at most the conserving solution's, which satisfies the same state equations and constraints
    and so is a feasible point of the same NLP; and it converges to the same limit."""
    spread, Jd = {}, {}
    for N in (20, 40, 80, 160, 320):
        s, _, _ = run(["-problem", problem("pendulum_cartesian"), "-N", str(N), "-hs_scheme", "direct"] + TIGHT)
        c, _, _ = run(["-problem", problem("pendulum_cartesian"), "-N", str(N)] + TIGHT)
        if not s or not c:
            return check(False, "pendulum_cartesian N = %d: no summary" % N)
        what = "pendulum_cartesian direct N = %d" % N
        check(s["converged"] and s["costate_scheme"] == "constrained_kkt", what + ": converged, scheme named")
        check(s["H_spread_relative"] > 1e-4, "%s: H^d spread %.3g, expected a drift" % (what, s["H_spread_relative"]))
        check(s["energy_work_spread"] <= 1e-12 * 30, "%s: E - W spread %.3g" % (what, s["energy_work_spread"]))
        check(s["J"] <= c["J"] * (1 + 1e-14), "%s: J^d %.15g above the conserving solution's %.15g, a feasible point"
              % (what, s["J"], c["J"]))
        spread[N], Jd[N] = s["H_spread"], s["J"]
    for a, b in ((40, 80), (80, 160), (160, 320)):
        o = order(spread[a], spread[b])
        check(abs(o - 2) <= 0.2, "pendulum_cartesian direct: order of the H^d drift from N = %d to %d: %.3f" % (a, b, o))
    rich = (4 * Jd[320] - Jd[160]) / 3
    check(rel(rich, J_PENDULUM) <= 1e-6, "pendulum_cartesian direct: Richardson J %.12g, the pendulum's %.12g" % (rich, J_PENDULUM))

    with tempfile.TemporaryDirectory() as tmp:  # an independent NLP solver (scipy's SLSQP) on the same NLP
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        for N in (20, 40):
            cons, direct = os.path.join(tmp, "c%d" % N), os.path.join(tmp, "d%d" % N)
            run(["-problem", problem("pendulum_cartesian"), "-N", str(N)] + TIGHT, outdir=cons)
            d, _, _ = run(["-problem", problem("pendulum_cartesian"), "-N", str(N), "-hs_scheme", "direct"] + TIGHT,
                          outdir=direct)
            p = subprocess.run([py, os.path.join(HERE, "crosscheck", "constrained_direct.py"), cons], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            m = re.search(r"^J = (\S+)", p.stdout, re.M)
            check(p.returncode == 0 and m and d and rel(float(m.group(1)), d["J"]) <= 1e-10,
                  "N = %d: SLSQP on the direct BEM NLP from the conserving solution: %s; Newton on its KKT: %s"
                  % (N, p.stdout.strip()[-300:], d and d["J"]))
    with tempfile.TemporaryDirectory() as tmp:  # -hs_compare: the two side by side, with plots
        out = os.path.join(tmp, "cmp")
        run(["-problem", problem("pendulum_cartesian"), "-N", "40", "-hs_compare"], ranks=2, outdir=out)
        ind, dire = summary_of(os.path.join(out, "indirect")), summary_of(os.path.join(out, "direct"))
        check(ind.get("converged") and dire.get("converged") and ind.get("costate_scheme") == "constrained" and
              dire.get("costate_scheme") == "constrained_kkt", "-hs_compare on pendulum_cartesian: both sides converged")
        check(ind.get("H_spread_relative", 1) <= 1e-10 and dire.get("H_spread_relative", 0) > 1e-2,
              "-hs_compare: H^d spreads %s (indirect), %s (direct)" % (ind.get("H_spread_relative"), dire.get("H_spread_relative")))
        if shutil.which("gnuplot"):
            check(all(os.path.exists(os.path.join(out, f)) for f in ("hamiltonian.png", "configurations.png", "controls.png")),
                  "-hs_compare: the plots")


def max_diff(a, b, prefixes):
    """max |a - b| over the columns of rows a and b starting with prefixes (both runs' trajectory.csv and
    intervals.csv), relative to max(1, max |a|) over them; inf if the columns differ."""
    cols = [k for k in a[0] if k.startswith(prefixes)]
    if not cols or cols != [k for k in b[0] if k.startswith(prefixes)] or len(a) != len(b):
        return float("inf")
    vals = [(float(x[k]), float(y[k])) for x, y in zip(a, b) for k in cols if x[k] not in ("", None)]
    return max(abs(u - v) for u, v in vals) / max(1.0, max(abs(u) for u, _ in vals))


def t_constrained_ipopt():
    """-hs_bvp_type ipopt on a constrained system: IPOPT on the direct BEM transcription (bvp/impls/ipoptcons.c) and
    Newton on its exact KKT conditions (-hs_scheme direct) are two independent solvers of the same NLP: from the
    default guess both converge, to the same J^d (1e-8 relative), states (1e-7) and multipliers (lambda, nu, gamma:
    1e-7, so IPOPT's multipliers are mapped with the right sign and scale), and IPOPT's solution satisfies the KKT
    form's equations (|F|). Its H^d drifts (not round-off), the drift shrinking at order 2.0 +- 0.2. IPOPT's derivative
    checker finds the NLP's gradient, Jacobian and Hessian exact on four systems; the wrong-extremal guard, now
    made for a constrained system, finds the conserving solution next to the direct minimum that Newton found; the
    extended class is refused with its reason."""
    pc = problem("pendulum_cartesian")
    if os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded in a sanitized build (bvp/impls/ipopt.c)
        _, out, rc = run(["-problem", pc, "-hs_bvp_type", "ipopt"], expect_rc=None)
        return check(rc != 0 and "not available in a sanitized build" in out, "sanitized: ipopt refused: %s" % out[-300:])
    spread, jd = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, N in (("pendulum_cartesian", 20), ("pendulum_cartesian", 40), ("double_pendulum_cartesian", 20)):
            what = "%s N = %d" % (name, N)
            d, _, _ = run(["-problem", problem(name), "-N", str(N), "-hs_scheme", "direct", "-hs_check_extremal", "no"]
                          + TIGHT, outdir=os.path.join(tmp, "d"))
            i, _, _ = run(["-problem", problem(name), "-N", str(N), "-hs_bvp_type", "ipopt"], outdir=os.path.join(tmp, "i"))
            if not d or not i:
                return check(False, what + ": no summary")
            check(d["converged"] and i["converged"] and i["solver_status"] == "Solve_Succeeded" and
                  i["bvp_type"] == "ipopt" and i["costate_scheme"] == "constrained_kkt",
                  "%s: both converged (%s, %s), IPOPT's named" % (what, d["converged"], i.get("solver_status")))
            check(rel(i["J"], d["J"]) <= 1e-8, "%s: J^d %.15g (IPOPT), %.15g (Newton on the KKT)" % (what, i["J"], d["J"]))
            jd[name, N] = d["J"]
            ds, dm = max_diff(d["_rows"], i["_rows"], ("q_", "p_")), max_diff(d["_rows"], i["_rows"], ("lambda", "nu", "gamma"))
            check(ds <= 1e-7, "%s: states differ by %.3g relative" % (what, ds))
            check(dm <= 1e-7, "%s: multipliers (lambda, nu, gamma) differ by %.3g relative" % (what, dm))
            check(i["residual_norm"] <= 1e-9, "%s: the KKT form's |F| at IPOPT's solution %.3g" % (what, i["residual_norm"]))
            check(i["H_spread_relative"] > 1e-4 and rel(i["H_spread"], d["H_spread"]) <= 1e-6,
                  "%s: IPOPT's H^d spread %.3g relative (Newton's %.3g), expected the direct scheme's drift"
                  % (what, i["H_spread_relative"], d["H_spread_relative"]))
            if name == "pendulum_cartesian":
                spread[N] = i["H_spread"]
        i, _, _ = run(["-problem", pc, "-N", "80", "-hs_bvp_type", "ipopt"])
        spread[80] = i and i["converged"] and i["H_spread"]
        o = order(spread[40], spread[80]) if spread[80] else float("nan")
        check(abs(o - 2) <= 0.2, "pendulum_cartesian ipopt: order of the H^d drift from N = 40 to 80: %.3f" % o)
        i2, _, _ = run(["-problem", problem("double_pendulum_cartesian"), "-N", "20", "-hs_scheme", "direct",
                        "-hs_direct_solver", "ipopt"], ranks=2)
        check(i2 and i2["bvp_type"] == "ipopt" and i2["converged"] and rel(i2["J"], jd["double_pendulum_cartesian", 20]) <= 1e-8,
              "double_pendulum_cartesian -hs_scheme direct -hs_direct_solver ipopt, 2 ranks: %s, J^d %s"
              % (i2 and i2["bvp_type"], i2 and i2["J"]))
    for name in ("pendulum_cartesian", "double_pendulum_cartesian", "fourbar", "crane_natural"):  # the 3-link arm: minutes
        _, out, _ = run(["-problem", problem(name), "-N", "6", "-hs_bvp_type", "ipopt", "-hs_ipopt_derivative_test",
                         "second-order", "-hs_ipopt_print_level", "5"], expect_rc=None)
        wrong = [ln for ln in out.splitlines() if ln.startswith("*")]
        check("Starting derivative checker for second derivatives" in out and
              "No errors detected by derivative checker." in out and not wrong,
              "%s: IPOPT's derivative checker: %s" % (name, "\n".join(wrong[:10]) or out[-500:]))
    _, out, rc = run(["-problem", pc, "-hs_bvp_type", "ipopt", "-hs_ipopt_derivative_test", "third"], expect_rc=None)
    check(rc != 0 and "unknown -hs_ipopt_derivative_test" in out, "-hs_ipopt_derivative_test third: exit %d: %s"
          % (rc, out[-300:]))
    s, _, _ = run(["-problem", pc, "-N", "40"] + TIGHT)
    e, J40 = (s or {}).get("extremal_check", {}), jd["pendulum_cartesian", 40]
    check(e.get("made") and e.get("near_converged") and e.get("local_minimum") and e.get("default_converged") and
          not e.get("lower_elsewhere") and not e.get("moved_away") and rel(e.get("J_near", 0), J40) <= 1e-8 and
          rel(e.get("J_default", 0), J40) <= 1e-8,
          "pendulum_cartesian N = 40: the extremal check %s, the direct minimum (Newton) %.15g" % (e, J40))
    _, out, rc = run(["-problem", os.path.join(HERE, "data", "pendulum_spring_cartesian.ocp"), "-hs_bvp_type", "ipopt"],
                     expect_rc=None)
    check(rc != 0 and "outside the exact class" in out, "the extended class with ipopt: exit %d: %s" % (rc, out[-300:]))


def t_constrained_fourbar():
    """The four-bar linkage (a closed loop, three constraints): from the default guess with no options on 1 and 2
    ranks (the same J^d), H^d and the constraints at round-off, order 2.0 +- 0.1, and its Richardson limit equal to
    the same linkage in its crank angle (tests/data/fourbar_crank.ocp, generalized coordinates, the closed-form loop
    closure) within 1e-6 relative."""
    res = {}
    for ranks in (1, 2):
        s, _, _ = run(["-problem", problem("fourbar")] + TIGHT, ranks=ranks)
        if not s:
            return check(False, "fourbar: no summary")
        check_conserved(s, "fourbar N = %d, %d ranks" % (s["N"], ranks))
        res[ranks] = s["J"]
    check(abs(res[1] - res[2]) <= 1e-12 * res[1], "fourbar: J on 1 and 2 ranks %.17g, %.17g" % (res[1], res[2]))
    J = {}
    for N in (80, 160, 320):
        s, _, _ = run(["-problem", problem("fourbar"), "-N", str(N)] + TIGHT)
        check_conserved(s, "fourbar N = %d" % N)
        J["natural", N] = s["J"]
    for N in (640, 1280):
        s, _, _ = run(["-problem", os.path.join(HERE, "data", "fourbar_crank.ocp"), "-N", str(N), "-hs_check_extremal", "no"]
                      + TIGHT)
        check(s and s["converged"], "fourbar_crank N = %d: converged" % N)
        J["crank", N] = s["J"]
    o = order(J["natural", 80] - J["natural", 160], J["natural", 160] - J["natural", 320])
    check(abs(o - 2) <= 0.1, "fourbar: observed order %.3f from N = 80, 160, 320" % o)
    nat, crank = (4 * J["natural", 320] - J["natural", 160]) / 3, (4 * J["crank", 1280] - J["crank", 640]) / 3
    check(rel(nat, crank) <= 1e-6 * abs(crank), "fourbar: Richardson limits %.10g (natural) and %.10g (crank angle)" % (nat, crank))


def t_constrained_drivers():
    """The drivers on a constrained system: continuation in reach (its targets moved onto the constraints) ends at the
    direct solve's J^d; -hs_extrapolate and -hs_study see order 2; -hs_init from another grid's output and a restart
    from a checkpoint converge to the same J^d. And the analytic Jacobian against PETSc's differences
    (-snes_test_jacobian) on 1 and 2 ranks, in and outside the exact class."""
    pc = problem("pendulum_cartesian")
    for path in (pc, problem("fourbar"), os.path.join(HERE, "data", "bead_catenary.ocp")):
        for ranks in (1, 2):
            _, out, _ = run(["-problem", path, "-N", "10", "-snes_test_jacobian", "-snes_max_it", "2", "-hs_strategy",
                             "newton"], ranks=ranks, expect_rc=None)
            ratios = jacobian_ratios(out)
            check(ratios and max(ratios) <= 1e-6, "%s, %d ranks: ||J - Jfd|| / ||J|| = %s" % (path, ranks, ratios))
    with tempfile.TemporaryDirectory() as tmp:
        base, _, _ = run(["-problem", pc, "-N", "40"] + TIGHT, outdir=os.path.join(tmp, "base"))
        if not base:
            return check(False, "pendulum_cartesian N = 40: no summary")
        J = base["J"]
        s, _, _ = run(["-problem", pc, "-N", "40", "-hs_continue", "reach", "-hs_continue_from", "0.1",
                       "-hs_continue_steps", "4"] + TIGHT, ranks=2)
        check(s and s["converged"] and rel(s["J"], J) <= 1e-10, "continuation in reach: J^d %s, the direct solve's %.15g"
              % (s and s["J"], J))
        # pseudo-arclength in reach on the crane (multipliers of 1e5): with X weighed by |dX/dmu|^2 at the start it
        # reaches the target (it had moved reach by 7e-4 a step and given up at 0.12) and ends at the direct solve's J^d
        cr, _, _ = run(["-problem", problem("crane_natural")] + TIGHT)
        s, _, _ = run(["-problem", problem("crane_natural"), "-hs_continue", "reach", "-hs_continue_from", "0",
                       "-hs_continue_type", "arclength", "-hs_continue_steps", "20"] + TIGHT)
        check(s and cr and s["converged"] and s["continuation"]["reached"] and rel(s["J"], cr["J"]) <= 1e-10 * cr["J"],
              "crane: arclength in reach: %s, J^d %s against %s" % (s and s.get("continuation"), s and s["J"], cr and cr["J"]))
        s, _, _ = run(["-problem", pc, "-N", "40", "-hs_extrapolate"] + TIGHT)
        e = (s or {}).get("extrapolation", {})
        check(abs(e.get("J_order", 0) - 2) <= 0.5 and rel(e.get("J", 0), J_PENDULUM) <= 1e-1,
              "-hs_extrapolate: %s" % e)
        out = os.path.join(tmp, "study")
        run(["-problem", pc, "-hs_study", "4"] + TIGHT, outdir=out)
        check(os.path.exists(os.path.join(out, "study.json")), "-hs_study: study.json written")
        s, _, _ = run(["-problem", pc, "-N", "40", "-hs_init", os.path.join(tmp, "base")] + TIGHT, ranks=2)
        check(s and s["converged"] and s["newton_iterations"] <= 2 and rel(s["J"], J) <= 1e-12,
              "-hs_init from the N = 40 output: %s iterations, J^d %s" % (s and s["newton_iterations"], s and s["J"]))
        ck = os.path.join(tmp, "ck")
        run(["-problem", pc, "-N", "40", "-hs_checkpoint", ck, "-hs_checkpoint_every", "1"] + TIGHT)
        s, _, _ = run(["-problem", pc, "-N", "40", "-hs_restart", ck] + TIGHT, ranks=2)
        check(s and s["converged"] and rel(s["J"], J) <= 1e-12, "-hs_restart: J^d %s" % (s and s["J"]))


def t_constrained_arm():
    """The 3-link arm in natural coordinates (18 coordinates, 15 constraints, torques through B(q) linear in the
    directors): from the default guess (its states moved onto the constraints) with no options,
    H^d and the constraints at round-off, order 2.0 +- 0.1, and its Richardson limit equal to the generalized-coordinate
    arm's (problems/manipulator3.ocp, relative joint angles) within 1e-6 relative."""
    J = {}
    for name in ("manipulator3_natural", "manipulator3"):
        for N in ((40, 80, 160) if name.endswith("natural") else (80, 160)):  # the angles' N = 40 needs IPOPT's guess
            s, _, _ = run(["-problem", problem(name), "-N", str(N), "-hs_check_extremal", "no"]
                          + (TIGHT if name.endswith("natural") else []))
            if not s or not s["converged"]:
                return check(False, "%s N = %d: not converged" % (name, N))
            if name.endswith("natural"):
                check_conserved(s, "%s N = %d" % (name, N))
            J[name, N] = s["J"]
    o = order(J["manipulator3_natural", 40] - J["manipulator3_natural", 80],
              J["manipulator3_natural", 80] - J["manipulator3_natural", 160])
    check(abs(o - 2) <= 0.1, "manipulator3_natural: observed order %.3f from N = 40, 80, 160" % o)
    lim = {name: (4 * J[name, 160] - J[name, 80]) / 3 for name in ("manipulator3_natural", "manipulator3")}
    check(rel(lim["manipulator3_natural"], lim["manipulator3"]) <= 1e-6 * abs(lim["manipulator3"]),
          "arm: Richardson limits %.10g (natural) and %.10g (angles)" % (lim["manipulator3_natural"], lim["manipulator3"]))


def t_constrained_extended():
    """Outside the exact class, the extended scheme (the discretization's conserving scheme plus discrete gradients and
    secant matrices of Phi): a nonlinear potential, a constraint that is not quadratic, a B(q) that is not affine, a
    mass matrix that depends on q. Each: H^d at round-off (<= 1e-11 relative: the divided differences' noise floor),
    E - W, Phi and the adjoint constraint at round-off, order 2.0 +- 0.1, and the Richardson limit equal to the same
    system in minimal coordinates (or the pendulum's) within 1e-6 relative."""
    data = lambda f: os.path.join(HERE, "data", f + ".ocp")
    cases = (("pendulum_spring_cartesian", "a potential", data("pendulum_spring_angle")),
             ("bead_catenary", "not quadratic", data("bead_catenary_x")),
             ("pendulum_cartesian_bq", "not affine", None), ("pendulum_cartesian_mq", "mass matrix", None))
    for name, why, ref in cases:
        J = {}
        for N in (80, 160, 320):
            s, out, _ = run(["-problem", data(name), "-N", str(N)] + TIGHT)
            if not s or not s["converged"]:
                check(False, "%s N = %d: not converged" % (name, N))
                break
            what = "%s N = %d" % (name, N)
            rows = s["_rows"]
            qmax, lmax = max(1.0, column_max(rows, "q_")), max(1.0, column_max(rows, "lambda_"))
            c = s["constraints"]
            check(c["class"] == "extended" and why in out, "%s: the extended scheme named (%s)" % (what, why))
            check(s["H_spread_relative"] <= 1e-11, "%s: H^d spread %.3g relative" % (what, s["H_spread_relative"]))
            check(s["energy_work_spread"] <= 1e-12 * max(1.0, column_max(rows, "E_minus_W")), "%s: E - W spread %.3g"
                  % (what, s["energy_work_spread"]))
            check(c["max_phi"] <= 1e-13 * qmax * qmax and c["adjoint"] <= 1e-12 * qmax * lmax and
                  c["hidden_interval"] <= 1e-12 * qmax * max(1.0, column_max(rows, "p_")), "%s: constraints %s" % (what, c))
            J[N] = s["J"]
        if len(J) < 3:
            continue
        o = order(J[80] - J[160], J[160] - J[320])
        check(abs(o - 2) <= 0.1, "%s: observed order %.3f" % (name, o))
        lim = (4 * J[320] - J[160]) / 3
        if ref:
            Jr = {}
            for N in (160, 320):
                s, _, _ = run(["-problem", ref, "-N", str(N), "-hs_check_extremal", "no"] + TIGHT)
                Jr[N] = s["J"] if s else float("nan")
            ref_lim = (4 * Jr[320] - Jr[160]) / 3
        else:
            ref_lim = J_PENDULUM
        check(rel(lim, ref_lim) <= 1e-6 * abs(ref_lim), "%s: Richardson %.10g, the reference's %.10g" % (name, lim, ref_lim))
