"""hamshoot system tests (tests/hstest.py), the formulations against each other: multiple shooting
against the transcription (every scheme pair, 1 to 4 ranks), single shooting's diagnosed
instability, the saddle's analytic LQ value, free terminal states (transversality against an
independent simulation), the direct NLP by IPOPT against Newton's kkt solution, what happens
without IPOPT.
"""
import csv
import math
import os
import tempfile

from hs_util import check, run, jacobian_ratios, rel


def t_shooting_equivalence():
    """shooting with M in {1, 2, 5, N/2, N} and an uneven split reproduces the transcription
    solution to 1e-10 relative, for every scheme pair, on 1, 2 and 4 ranks.

    With the default schemes and even splits, shooting must converge from the naive guess
    (boundary states interpolated, lambda = 0). Elsewhere the naive march may fail (kepler:
    with lambda = 0 a segment falls towards the singularity at q = 0); then the failure must
    be diagnosed (segment and step named, exit 2) and the run is repeated from the
    transcription solution (-hs_shoot_init transcription), which must be a root of the
    shooting residual: converged within 2 Newton iterations, same solution.

    Sanitized (HS_SANITIZED; AddressSanitizer's time: 94 s of CI's sanitized run, 74 runs) each path once: the first
    case every split on 1, 2 and 4 ranks (the segment distribution's paths); the other scheme pairs the splits whose
    paths differ (M = 1, 5, N, the uneven knots; M = 2 and N/2 are M = 5's path), M = 5 also on 4 ranks (5 segments
    over 4 ranks, one holding two)."""
    N = 20
    sanitized = bool(os.environ.get("HS_SANITIZED"))
    cases = (("pendulum", "greenspan", "conserving_1dof", True), ("pendulum", "midpoint", "trapezoidal", False),
             ("pendulum", "greenspan", "kkt", False), ("kepler", "gonzalez", "conserving", True),
             ("kepler", "gonzalez", "kkt", False), ("kepler", "midpoint", "trapezoidal", False))
    for i, (prob, ss, cs, default) in enumerate(cases):
        base, _, _ = run(["-problem", prob, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs])
        scale = max(abs(float(v)) for r in base["_rows"][:-1] for v in r.values())
        first = i == 0
        Ms = (1, 5, N) if sanitized and not first else (1, 2, 5, N // 2, N)
        splits = [["-hs_shoot_segments", str(M)] for M in Ms] + [["-hs_shoot_knots", "3,4,11,17"]]
        for split in splits:
            uneven = split[0] == "-hs_shoot_knots"
            Ps = (1, 2, 4) if default or split[1] == "5" else (1,)
            if sanitized and not first:
                Ps = (1, 4) if split[1] == "5" else (1,)
            for P in Ps:
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
    a bounded pendulum is solved with the bound active on some intervals (the indirect solvers take it too:
    tests/hs_bounds.py); -hs_direct_solver ipopt with shooting, bad IPOPT options are clear errors."""
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
    # control bounds: active on some intervals, u within them
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
    for args, msg in [(["-problem", "kepler", "-hs_scheme", "direct", "-hs_direct_solver", "ipopt", "-hs_bvp_type", "shooting"], "cannot be combined"),
                      (["-problem", "kepler", "-hs_bvp_type", "ipopt", "-hs_ipopt_ordering", "foo"], "unknown -hs_ipopt_ordering"),
                      (["-problem", "kepler", "-hs_bvp_type", "ipopt", "-hs_costate_scheme", "conserving"], "KKT conditions"),
                      (["-problem", bfile, "-hs_bvp_type", "ipopt", "-p_umax", "1"], None)]:
        s, out, rc = run(args, expect_rc=None)
        if msg:
            check(rc == 1 and msg in out, "%s: expected exit 1 with '%s', got %d: %s" % (" ".join(args), msg, rc, out[-300:]))
        else:  # too weak a bound: IPOPT says infeasible, exit 2 with converged false
            check(rc == 2 and s and not s["converged"] and "Infeasible" in s["solver_status"],
                  "umax = 1: expected an infeasible NLP, got %d %s" % (rc, s and s["solver_status"]))


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
