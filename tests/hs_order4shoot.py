"""hamshoot system tests of -hs_scheme conserving4 in multiple shooting (issue 43, docs/theory.md section 8, "Multiple
shooting"): the march of the triple jump substep by substep solves the transcription's discrete equations, so J and
the trajectory equal the transcription's to solver tolerance (1 and 2 ranks, single shooting, a few segments, one
interval each); the maximized Hamiltonian stays constant to round-off across the segments; Newton is quadratic; J
converges at order 4 to the pendulum's independent J_inf; the exact Jacobian passes -snes_test_jacobian; what it
does not do is refused or diagnosed.
"""
import math
import os
import re
import tempfile

from hs_reliability import stop_on
from hs_util import check, jacobian_ratios, run

PENDULUM_JINF = 6.436944438855  # docs/theory.md section 4.1 (independent: tests/crosscheck)
QUIET = ["-hs_check_extremal", "no"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
KEYS = ("q", "p", "lambda", "u")


def solve(prob, N, M=None, ranks=1, extra=()):
    """conserving4 on prob with N intervals: the transcription (M None) or shooting with M segments."""
    args = ["-problem", prob, "-N", str(N), "-hs_scheme", "conserving4"] + QUIET + list(extra)
    if M is not None:
        args += ["-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)]
    s, out, _ = run(args, ranks=ranks)
    check(s and s["converged"], "%s N=%d M=%s ranks=%d did not converge: %s" % (prob, N, M, ranks, out[-300:]))
    return s if s and s["converged"] else None


def traj_diff(a, b):
    """max over the nodes and the columns q*, p*, lambda*, u* of |a - b| / max(1, |b|)."""
    keys = [k for k in b["_rows"][0] if k.startswith(KEYS)]
    d = 0.0
    for ra, rb in zip(a["_rows"], b["_rows"]):
        for k in keys:
            if rb[k] != "":
                d = max(d, abs(float(ra[k]) - float(rb[k])) / max(1.0, abs(float(rb[k]))))
    return d, len(keys)


def rel_spread(s):
    return s["H_spread"] / max(1.0, abs(s["H_mean"]))


def t_order4shoot_equal():
    """shooting equals the transcription (the same discrete equations): the pendulum and kepler at N = 40, M = 1, 4
    and N segments, 1 and 2 ranks: |J - J_tr| <= 1e-12 |J|, every node's states, costates and controls within 1e-10
    (relative to max(1, |value|)), the same number of time points; H's spread at round-off (<= 1e-12 relative)."""
    for prob in ("pendulum", "kepler"):
        N = 40
        tr = solve(prob, N)
        if not tr:
            continue
        for M in (1, 4, N):
            for ranks in (1, 2):
                s = solve(prob, N, M, ranks)
                if not s:
                    continue
                dJ = abs(s["J"] - tr["J"])
                dx, nk = traj_diff(s, tr)
                print("%s N=%d M=%d ranks=%d: J %.13f (transcription %.13f, |dJ| %.1e), trajectory %.1e over %d columns, "
                      "H spread %.1e, Newton %d (transcription %d)"
                      % (prob, N, M, ranks, s["J"], tr["J"], dJ, dx, nk, rel_spread(s), s["newton_iterations"],
                         tr["newton_iterations"]))
                check(len(s["_rows"]) == len(tr["_rows"]) == N + 1 and nk >= 3, "%s M=%d: rows or columns" % (prob, M))
                check(dJ <= 1e-12 * abs(tr["J"]), "%s M=%d ranks=%d: J differs by %.2e" % (prob, M, ranks, dJ))
                check(dx <= 1e-10, "%s M=%d ranks=%d: trajectory differs by %.2e" % (prob, M, ranks, dx))
                check(rel_spread(s) <= 1e-12, "%s M=%d ranks=%d: H spread %.2e" % (prob, M, ranks, rel_spread(s)))
                check(s["segments"] == M and s["bvp_type"] == "shooting", "%s: summary %s" % (prob, s["segments"]))


def t_order4shoot_free_time():
    """a free final time (tests/data/pendulum_free_T.ocp, running cost 1/2 u^2 + c: T the last unknown, its row
    H(z_N) = d phi/dT = 0): shooting with 1, 4 and N segments on 1 and 2 ranks equals the transcription, J and T to
    1e-12 relative, the trajectory to 1e-10, H's spread at round-off; the Jacobian with T's column and row against
    finite differences (1 and 3 segments, while T is held and after) below 1e-5."""
    f = os.path.join(DATA, "pendulum_free_T.ocp")
    N = 40
    tr = solve(f, N)
    for M in (1, 4, N):
        for ranks in (1, 2):
            s = solve(f, N, M, ranks)
            if not (s and tr):
                continue
            dx, _ = traj_diff(s, tr)
            print("free T N=%d M=%d ranks=%d: J %.13f T %.13f (transcription %.13f, %.13f), trajectory %.1e, H spread %.1e"
                  % (N, M, ranks, s["J"], s["T"], tr["J"], tr["T"], dx, rel_spread(s)))
            check(abs(s["J"] - tr["J"]) <= 1e-12 * abs(tr["J"]) and abs(s["T"] - tr["T"]) <= 1e-12 * tr["T"],
                  "free T M=%d ranks=%d: J %.15g T %.15g" % (M, ranks, s["J"], s["T"]))
            check(dx <= 1e-10 and rel_spread(s) <= 1e-12, "free T M=%d: trajectory %.1e, spread %.1e" % (M, dx,
                                                                                                       rel_spread(s)))
    for M in (1, 3):
        _, out, _ = run(["-problem", f, "-N", "16", "-hs_scheme", "conserving4", "-hs_bvp_type", "shooting",
                         "-hs_shoot_segments", str(M), "-snes_test_jacobian", "-snes_max_it", "3", "-hs_strategy",
                         "newton"] + QUIET, expect_rc=None)
        ratios = jacobian_ratios(out)
        print("free T M=%d: ||J - Jfd||/||J|| %s" % (M, ["%.1e" % x for x in ratios]))
        check(len(ratios) >= 4 and max(ratios) < 1e-5, "free T M=%d Jacobian: %s" % (M, ratios))


def t_order4shoot_free_time_data():
    """a free T with T in the problem's data and a moving target (tests/data/pendulum_T_moving.ocp; bq2_T_data.ocp,
    2 DOF with B(q; T); di_T_data.ocp; docs/theory.md section 8, "T in the data"): shooting, whose T row integrates
    dH/dT over the marched substeps with its gradient chained through the sensitivities, equals the transcription
    (M = 1, 4, N on 1 and 2 ranks; J and T to 1e-12 relative, the trajectory to 1e-10, H's spread at round-off); the
    Jacobian with T's difference column and the chained row against finite differences (1 and 3 segments); Newton
    quadratic once T is released (M = 1, 4, N = 80)."""
    cases = [("pendulum_T_moving", 40, ((1, 1), (4, 1), (40, 1), (4, 2), (40, 2))),
             ("bq2_T_data", 20, ((1, 1), (4, 2))), ("di_T_data", 20, ((4, 2),))]
    sanitized = os.environ.get("HS_SANITIZED") == "1"  # AddressSanitizer's time: the code paths once each
    if sanitized:
        cases = [("pendulum_T_moving", 40, ((1, 1), (4, 2))), ("bq2_T_data", 20, ((4, 2),))]
    for name, N, runs in cases:
        f = os.path.join(DATA, name + ".ocp")
        tr = solve(f, N)
        for M, ranks in runs:
            s = solve(f, N, M, ranks)
            if not (s and tr):
                continue
            dx, _ = traj_diff(s, tr)
            print("%s N=%d M=%d ranks=%d: J %.13f T %.13f (transcription %.13f, %.13f), trajectory %.1e, H spread %.1e"
                  % (name, N, M, ranks, s["J"], s["T"], tr["J"], tr["T"], dx, rel_spread(s)))
            check(abs(s["J"] - tr["J"]) <= 1e-12 * abs(tr["J"]) and abs(s["T"] - tr["T"]) <= 1e-12 * tr["T"],
                  "%s M=%d ranks=%d: J %.15g T %.15g" % (name, M, ranks, s["J"], s["T"]))
            check(dx <= 1e-10 and rel_spread(s) <= 1e-12, "%s M=%d: trajectory %.1e, spread %.1e"
                  % (name, M, dx, rel_spread(s)))
    f = os.path.join(DATA, "pendulum_T_moving.ocp")
    for M in (1, 3):
        _, out, _ = run(["-problem", f, "-N", "12", "-hs_scheme", "conserving4", "-hs_bvp_type", "shooting",
                         "-hs_shoot_segments", str(M), "-snes_test_jacobian", "-snes_max_it", "8", "-hs_strategy",
                         "newton"] + QUIET, expect_rc=None)
        ratios = jacobian_ratios(out)
        print("T in the data M=%d: ||J - Jfd||/||J|| %s" % (M, ["%.1e" % x for x in ratios]))
        # measured <= 2.1e-7; without the chained integral's gradient (Tg) 0.004 - 0.036 in the free phase
        check(len(ratios) >= 6 and max(ratios) < 1e-5, "T in the data M=%d Jacobian: %s" % (M, ratios))
    for M in () if sanitized else (1, 4):  # Newton quadratic once T is released (order4shoot_newton's measure)
        _, out, _ = run(["-problem", f, "-N", "80", "-hs_scheme", "conserving4", "-hs_bvp_type", "shooting",
                         "-hs_shoot_segments", str(M), "-hs_monitor"] + QUIET)
        h = [(int(k), float(x)) for k, x in __import__("re").findall(r"Newton +(\d+) +\|F\| = ([0-9.eE+-]+)", out)]
        r = [x for _, x in h[max([i for i, (k, _) in enumerate(h) if k == 0] or [0]):]]
        rates = [math.log(r[i + 1]) / math.log(r[i]) for i in range(len(r) - 1) if 1e-6 < r[i] < 1e-1 and r[i + 1] > 1e-13]
        print("T in the data M=%d, T free: |F| %s, rates %s" % (M, ["%.1e" % x for x in r], ["%.2f" % x for x in rates]))
        check(rates and min(rates) >= 1.6, "T in the data M=%d: not quadratic: %s" % (M, rates))


def t_order4shoot_spread():
    """the maximized Hamiltonian is one constant at all 3N + 1 nodes and stage nodes in shooting too, across the
    segment boundaries (where only Newton's matching residual separates them): the pendulum at N = 1280 (3840
    substeps) with 1, 16 and 1280 segments and kepler at N = 320 with 1 and 32, spread <= 1e-12 relative; H's
    value the transcription's to 1e-12."""
    for prob, N, Ms in (("pendulum", 1280, (1, 16, 1280)), ("kepler", 320, (1, 32))):
        tr = solve(prob, N)
        for M in Ms:
            s = solve(prob, N, M)
            if not (s and tr):
                continue
            print("%s N=%d M=%d: H %.15f (transcription %.15f), spread %.1e relative, balance %.1e"
                  % (prob, N, M, s["H_mean"], tr["H_mean"], rel_spread(s), s["H_balance"]))
            check(rel_spread(s) <= 1e-12, "%s N=%d M=%d: H spread %.2e" % (prob, N, M, rel_spread(s)))
            check(abs(s["H_mean"] - tr["H_mean"]) <= 1e-12 * max(1, abs(tr["H_mean"])), "%s M=%d: H differs" % (prob, M))


def newton_norms(out):
    return [float(x) for x in __import__("re").findall(r"Newton +\d+ +\|F\| = ([0-9.eE+-]+)", out)]


def t_order4shoot_newton():
    """Newton is quadratic (the exact Jacobian): in the pendulum's and kepler's residual histories (N = 160) every
    step from |F| in (1e-6, 1e-1) (whose square is above round-off) to the next above 1e-13 has log|F_next| / log|F|
    >= 1.6 (2 for a quadratic rate; measured 2.0-3.1), and there is such a step; the iteration count equals the transcription's within 2 with 4 and N segments
    and is at most 10 in single shooting (its more nonlinear equations: measured 9-10 against 5-7)."""
    for prob in ("pendulum", "kepler"):
        N = 160
        tr = solve(prob, N)
        for M in (1, 4, N):
            args = ["-problem", prob, "-N", str(N), "-hs_scheme", "conserving4", "-hs_bvp_type", "shooting",
                    "-hs_shoot_segments", str(M), "-hs_monitor"] + QUIET
            s, out, _ = run(args)
            r = newton_norms(out)
            if not (s and s["converged"] and tr and len(r) >= 3):
                check(False, "%s M=%d: no converged run with a residual history: %s" % (prob, M, out[-300:]))
                continue
            rates = [math.log(r[i + 1]) / math.log(r[i]) for i in range(len(r) - 1)
                     if 1e-6 < r[i] < 1e-1 and r[i + 1] > 1e-13]
            its, its_tr = s["newton_iterations"], tr["newton_iterations"]
            print("%s N=%d M=%d: |F| %s, rates %s, Newton %d (transcription %d)"
                  % (prob, N, M, ["%.1e" % x for x in r], ["%.2f" % x for x in rates], its, its_tr))
            check(rates and min(rates) >= 1.6, "%s M=%d: not quadratic: %s" % (prob, M, rates))
            check(its <= 10 if M == 1 else abs(its - its_tr) <= 2, "%s M=%d: %d Newton iterations (transcription %d)"
                  % (prob, M, its, its_tr))


def t_order4shoot_order():
    """observed order 4 in J in shooting: the pendulum with 4 segments at N = 40, 80, 160, 320 against its
    independent J_inf (docs/theory.md section 4.1): orders 4.0 +- 0.2."""
    Ns = (40, 80, 160, 320)
    e = []
    for N in Ns:
        s = solve("pendulum", N, 4)
        if not s:
            return
        e.append(abs(s["J"] - PENDULUM_JINF))
    o = [math.log2(e[i] / e[i + 1]) for i in range(len(e) - 1)]
    print("pendulum shooting M=4: |J - J_inf| %s, orders %s" % (["%.2e" % x for x in e], ["%.2f" % x for x in o]))
    check(all(abs(x - 4) <= 0.2 for x in o), "orders of J %s" % o)


def t_order4shoot_jacobian():
    """the exact outer Jacobian (the march's sensitivities chained by the implicit function theorem, the terminal
    rows' derivatives) against PETSc's finite differences (-snes_test_jacobian): the pendulum with 1 and 3
    segments, kepler single shooting, the free end with a terminal cost (tests/data/pendulum_free.ocp) with 3
    segments on 2 ranks: ||J - Jfd|| / ||J|| < 1e-5 (measured 5e-8 to 2e-7, the differences' noise)."""
    cases = (("pendulum", 1, 1), ("pendulum", 3, 1), ("kepler", 1, 1), (os.path.join(DATA, "pendulum_free.ocp"), 3, 2))
    for prob, M, ranks in cases:
        _, out, _ = run(["-problem", prob, "-N", "16", "-hs_scheme", "conserving4", "-hs_bvp_type", "shooting",
                         "-hs_shoot_segments", str(M), "-snes_test_jacobian", "-snes_max_it", "2", "-hs_strategy",
                         "newton"] + QUIET, ranks=ranks, expect_rc=None)
        ratios = jacobian_ratios(out)
        print("%s M=%d ranks=%d: ||J - Jfd||/||J|| %s" % (os.path.basename(prob), M, ranks,
                                                          ["%.1e" % x for x in ratios]))
        check(ratios and max(ratios) < 1e-5, "%s M=%d Jacobian: %s" % (prob, M, ratios))


def t_order4shoot_failures():
    """what conserving4 shooting does not do is refused, and a failing march is named: -hs_shoot_mf; kepler on a grid too coarse for the substeps' Newton (N = 8, 3 segments) ends
    unconverged with the segment, interval and substep in the diagnosis; -hs_shoot_max_growth 1.5 below a segment's
    growth (the pendulum single shooting, about 3) stops with the growth diagnosis."""
    for args, want in ((["pendulum", "-hs_shoot_mf"], "no -hs_shoot_mf"),):
        _, out, rc = run(["-problem"] + args + ["-hs_scheme", "conserving4", "-hs_bvp_type", "shooting"] + QUIET,
                         expect_rc=None)
        print("%s: rc %d, message %s" % (" ".join(args), rc, want in out))
        check(rc != 0 and want in out, "%s: rc %d, %s" % (args, rc, out[-300:]))
    for args, want in ((["kepler", "-N", "8", "-hs_shoot_segments", "3"], "substep"),
                       (["pendulum", "-N", "40", "-hs_shoot_max_growth", "1.5"], "sensitivity growth")):
        s, out, _ = run(["-problem"] + args + ["-hs_scheme", "conserving4", "-hs_bvp_type", "shooting",
                                               "-hs_strategy", "newton"] + QUIET, expect_rc=None)
        diag = (s or {}).get("diagnosis", "")
        print("%s: converged %s, diagnosis '%s'" % (" ".join(args), s and s["converged"], diag[:160]))
        check(s and not s["converged"] and want in diag and "segment" in diag, "%s: %s" % (args, diag or out[-300:]))


def t_order4shoot_controls():
    """conserving4 shooting with controls beyond 1/2 u^T R u (docs/controls.md) equals the transcription: the bounded
    pendulum (problems/pendulum_bounded.ocp, the eps-continuation down to the exact projection: every step of it
    changes the equations at the same unknowns, so a march stored from the last step must not serve the next) on 2
    ranks, M = 4 and N; the particle transfer (a force nonlinear in the control, T free) on 2 ranks, M = 4: J (and T)
    within 1e-10 relative, H's spread at round-off."""
    root = os.path.dirname(DATA)
    bounded = os.path.join(os.path.dirname(root), "problems", "pendulum_bounded.ocp")
    tr = solve(bounded, 40)
    for M in (4, 40):
        s = solve(bounded, 40, M, 2) if tr else None
        if s:
            print("pendulum_bounded M=%d: J %.13f (transcription %.13f), H spread %.1e" % (M, s["J"], tr["J"],
                                                                                           rel_spread(s)))
            check(abs(s["J"] - tr["J"]) <= 1e-10 * abs(tr["J"]), "bounded M=%d: J %.15g vs transcription %.15g"
                  % (M, s["J"], tr["J"]))
            check(rel_spread(s) <= 1e-12, "bounded M=%d: H spread %.2e" % (M, rel_spread(s)))
    particle = os.path.join(os.path.dirname(root), "problems", "particle_transfer.ocp")
    tr = solve(particle, 40)
    s = solve(particle, 40, 4, 2) if tr else None
    if s:
        print("particle M=4: T %.13f (transcription %.13f)" % (s["T"], tr["T"]))
        check(abs(s["T"] - tr["T"]) <= 1e-10 * tr["T"] and abs(s["J"] - tr["J"]) <= 1e-10 * abs(tr["J"]),
              "particle M=4: T %.15g J %.15g vs transcription T %.15g J %.15g" % (s["T"], s["J"], tr["T"], tr["J"]))


def t_order4shoot_arm():
    """the 3-link arm (manipulator3: M(q) configuration-dependent, J ~ 4e6) by shooting equals the transcription: N =
    40, M = 4 and N segments on 1 and 2 ranks, each warm-started from the transcription at N = 20 (-hs_init, an
    O(h^4) guess: Newton takes 4 - 7 steps; from the default guess the release build converges through -hs_strategy
    auto's l2 line search, the sanitized Debug build on 2 ranks with M = 4 does not: that globalization is
    round-off sensitive here, not the scheme): |J - J_tr| <= 1e-12 |J|, every node value within 1e-9 relative (not
    order4shoot_equal's 1e-10: Newton's |F| stalls at its round-off floor, 4e-9 = 1e-14 of |F_0| = 4.7e5 with costates
    up to 1e5, and both solutions carry it; measured 2e-11 .. 8e-11), H's spread at round-off (<= 1e-12 relative,
    measured 1e-14 .. 4.7e-13). Under HS_SANITIZED M = 4 on 2 ranks only."""
    import tempfile
    N = 40
    runs = ((4, 2),) if os.environ.get("HS_SANITIZED") == "1" else ((4, 1), (4, 2), (N, 1), (N, 2))
    with tempfile.TemporaryDirectory() as d:
        guess = os.path.join(d, "tr20")
        s20, out, _ = run(["-problem", "manipulator3", "-N", "20", "-hs_scheme", "conserving4"] + QUIET, outdir=guess)
        check(s20 and s20["converged"], "manipulator3 N=20 transcription did not converge: %s" % out[-300:])
        tr = solve("manipulator3", N)
        for M, ranks in runs:
            s = solve("manipulator3", N, M, ranks, extra=["-hs_init", guess])
            if not (s and tr):
                continue
            dJ = abs(s["J"] - tr["J"])
            dx, nk = traj_diff(s, tr)
            print("manipulator3 N=%d M=%d ranks=%d: J %.9f (transcription %.9f, |dJ| %.1e), trajectory %.1e over %d "
                  "columns, H spread %.1e, Newton %d (transcription %d)"
                  % (N, M, ranks, s["J"], tr["J"], dJ, dx, nk, rel_spread(s), s["newton_iterations"],
                     tr["newton_iterations"]))
            check(len(s["_rows"]) == len(tr["_rows"]) == N + 1 and nk >= 9, "manipulator3 M=%d: rows or columns" % M)
            check(dJ <= 1e-12 * abs(tr["J"]), "manipulator3 M=%d ranks=%d: J differs by %.2e" % (M, ranks, dJ))
            check(dx <= 1e-9, "manipulator3 M=%d ranks=%d: trajectory differs by %.2e" % (M, ranks, dx))
            check(rel_spread(s) <= 1e-12, "manipulator3 M=%d ranks=%d: H spread %.2e" % (M, ranks, rel_spread(s)))


def t_order4shoot_second_order_start():
    """-hs_strategy auto's second-order start (bvp/drivers/strategy.c): single shooting (M = 1) with conserving4 from
    the default guess, where every other fallback failed before it (docs/theory.md section 8.1, "Audit": the crane
    in natural coordinates at N = 40, tests/data/satellite_euler_spin.ocp at N = 20). Newton alone fails there (it
    still must: else this test would not exercise the fallback); -hs_strategy auto converges by the attempt named
    "second-order start", and to conserving4's own discrete solution, checked against a solve that does not use that
    fallback: the transcription by Newton alone (-hs_strategy newton) from the default guess (the crane) or from the
    direct guess (the satellite, -hs_initial_guess direct: IPOPT's direct solution): J equal to 1e-12 relative, every
    node value within 1e-8 relative (measured 2.2e-11 on the crane, 1.5e-10 on the satellite, whose Newton stops at
    its noise floor: M = 4 and the transcription differ by 5.9e-10 there), H's spread at round-off (<= 1e-12
    relative); M = 4 shooting by -hs_strategy auto gives the same J (1e-12). The satellite's second-order solve itself
    converges only through its own direct guess (IPOPT): skipped under HS_SANITIZED (tools/sanitize.sh), where the
    crane runs."""
    cases = [(os.path.join(os.path.dirname(os.path.dirname(DATA)), "problems", "crane_natural.ocp"), 40, [])]
    if not os.environ.get("HS_SANITIZED"):
        cases.append((os.path.join(DATA, "satellite_euler_spin.ocp"), 20, ["-hs_initial_guess", "direct"]))
    for prob, N, start in cases:
        name = os.path.basename(prob)
        shoot = ["-hs_scheme", "conserving4", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"]
        s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_strategy", "newton"] + shoot + QUIET, expect_rc=None)
        check(s is not None and not s["converged"], "%s: Newton alone converged (the case no longer needs a fallback)"
              % name)
        s = solve(prob, N, 1)
        tr = solve(prob, N, extra=["-hs_strategy", "newton"] + start)
        m4 = solve(prob, N, 4)
        if not (s and tr and m4):
            continue
        names = [a["name"] for a in s["strategy"]["attempts"]]
        dx, nk = traj_diff(s, tr)
        print("%s N=%d M=1: J %.13g (transcription %.13g by %s, M=4 %.13g), trajectory %.1e over %d columns, H spread "
              "%.1e, attempts %s" % (name, N, s["J"], tr["J"], tr["strategy"]["used"], m4["J"], dx, nk, rel_spread(s),
                                     [(a["name"], a["status"], a["newton_iterations"])
                                      for a in s["strategy"]["attempts"]]))
        check(s["strategy"]["used"] == "second-order start" and "second-order start" in names,
              "%s: converged by %s, attempts %s (before: no fallback converged)" % (name, s["strategy"]["used"], names))
        check(len(tr["strategy"]["attempts"]) == 1, "%s: the reference used fallbacks" % name)
        check(abs(s["J"] - tr["J"]) <= 1e-12 * abs(tr["J"]) and abs(s["J"] - m4["J"]) <= 1e-12 * abs(tr["J"]),
              "%s: J %.15g, transcription %.15g, M=4 %.15g" % (name, s["J"], tr["J"], m4["J"]))
        check(len(s["_rows"]) == N + 1 and nk >= 3 and dx <= 1e-8, "%s: trajectory differs by %.2e" % (name, dx))
        check(rel_spread(s) <= 1e-12, "%s: H spread %.2e" % (name, rel_spread(s)))


def t_order4shoot_second_order_stopped():
    """SIGTERM during the second-order start's sub-solve (the second-order transcription of
    tests/data/satellite_euler_spin.ocp at N = 400, a few seconds; conserving4 single shooting, whose Newton and l2
    line search fail first), 1 and 2 ranks: the run ends interrupted with status 5 (nothing of the stop to resume), the
    message names the fallback, no output, and nothing is solved after it (no conserving4 Newton from its solution, no
    later fallback)."""
    trigger = "strategy: second-order start:"
    for ranks in (1, 2):
        with tempfile.TemporaryDirectory() as d:
            rc, out, sent = stop_on(["-problem", os.path.join(DATA, "satellite_euler_spin.ocp"), "-N", "400",
                                     "-hs_scheme", "conserving4", "-hs_bvp_type", "shooting", "-hs_shoot_segments",
                                     "1", "-hs_monitor", "-o", "o"] + QUIET, d, ranks, trigger)
            after = out[out.find(trigger):] if sent else ""
            files = os.listdir(os.path.join(d, "o")) if os.path.isdir(os.path.join(d, "o")) else []
            print("%d rank(s): exit %d, %s" % (ranks, rc, after.strip().replace("\n", " | ")[-400:]))
            check(sent, "%d rank(s): the fallback never started\n%s" % (ranks, out[-600:]))
            check(rc == 5 and "interrupted: signal received during the second-order start's sub-solve" in out
                  and "nothing of that sub-solve can be resumed" in out
                  and not files and "error" not in out, "%d rank(s): exit %d, files %s\n%s" % (ranks, rc, files,
                                                                                               out[-600:]))
            solved_on = re.search(r"Newton +\d+ +\|F\|", after) or "grid sequencing" in after
            check(not solved_on and "start converged" not in after,
                  "%d rank(s): solved on after the stop\n%s" % (ranks, after[-600:]))
