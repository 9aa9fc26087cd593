"""hamshoot system tests of -hs_scheme conserving4 (issue 43, docs/theory.md section 8): the triple jump of the
Gonzalez discrete gradient method for the whole Pontryagin system. Order 4 of J against independent limits (the
pendulum's J_inf of docs/theory.md section 4.1, kepler's and the free end's from the second-order scheme's Richardson
extrapolation), order 4 of the node states and costates, the maximized Hamiltonian constant to round-off for every N,
E - W at O(h^4) (not exact), 1 and 2 ranks and the band solver and MUMPS alike, the analytic Jacobian against finite
differences, quadratic Newton, and what it refuses.
"""
import math
import os
import tempfile
from fractions import Fraction

from hs_util import check, run, jacobian_ratios, order

PENDULUM_JINF = 6.436944438855  # docs/theory.md section 4.1 (independent: tests/crosscheck)
QUIET = ["-hs_check_extremal", "no"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def solve4(prob, N, extra=(), ranks=1):
    s, out, _ = run(["-problem", prob, "-N", str(N), "-hs_scheme", "conserving4"] + QUIET + list(extra), ranks=ranks)
    check(s and s["converged"], "%s N=%d conserving4 did not converge: %s" % (prob, N, out[-300:]))
    return s


def richardson2(J):
    """The limit of three second-order values at N, 2N, 4N: Richardson with h^2, then with h^4."""
    r = [(4 * J[i + 1] - J[i]) / 3 for i in range(2)]
    return (16 * r[1] - r[0]) / 15


def spread_ok(prob, N, s):
    rel = s["H_spread"] / max(1.0, abs(s["H_mean"]))
    check(rel < 1e-12, "%s N=%d: H spread %.2e relative, not round-off" % (prob, N, rel))
    return rel


def node_errors(rows, ref, key):
    """max over the nodes of rows of |key - ref's value at the same time| (ref on a finer grid, N a divisor)."""
    step = (len(ref) - 1) // (len(rows) - 1)
    return max(abs(float(r[key]) - float(ref[k * step][key])) for k, r in enumerate(rows) if r[key] != "")


def check_node_orders(name, sols, ref, tol=0.2):
    """The states and costates at the nodes of each summary in sols (coarse to fine, N doubling) against ref's rows
    at the same times: orders within 4 +- tol for every column q*, p*, lambda*."""
    keys = [k for k in ref[0] if k.startswith(("q", "p", "lambda"))]
    check(keys, "%s: no state or costate columns" % name)
    for key in keys:
        e = [node_errors(s["_rows"], ref, key) for s in sols]
        o = [order(e[i], e[i + 1]) for i in range(len(e) - 1)]
        print("%s node %-8s errors %s, orders %s" % (name, key, ["%.2e" % x for x in e], ["%.2f" % x for x in o]))
        check(all(abs(x - 4) <= tol for x in o), "%s: order of %s at the nodes %s" % (name, key, o))


def richardson3(v):
    """The limit of three second-order values at N, 3N, 9N: Richardson with h^2 (ratio 3), then with h^4."""
    r = [(9 * v[i + 1] - v[i]) / 8 for i in range(2)]
    return (81 * r[1] - r[0]) / 80


def timed_values(s, N, key, mid):
    """{t/T as a Fraction: float} of the column key of summary s on N intervals, at the nodes k/N, or (mid) at the
    interval midpoints (k + 1/2)/N, where the second-order scheme's costates live (docs/output-format.md)."""
    return {Fraction(2 * k + 1, 2 * N) if mid else Fraction(k, N): float(r[key])
            for k, r in enumerate(s["_rows"]) if r.get(key, "") != ""}


def check_orders_independent(name, sols4, sols2, tol=0.2):
    """The states and costates of conserving4 (sols4: (N, summary) pairs, N doubling) against a reference conserving4
    did not produce: the second-order scheme's values at N2, 3N2, 9N2 (sols2; tripling keeps the midpoints of the N2
    grid midpoints, where its costates live) extrapolated by Richardson (h^2, h^4; the scheme is symmetric, its
    expansion even). Compared at the times where all have values: the states at common nodes, the costates at
    conserving4's nodes that are midpoints of the N2 grid. Orders within 4 +- tol for every column q*, p*, lambda*."""
    keys = [k for k in sols2[0][1]["_rows"][0] if k.startswith(("q", "p", "lambda"))]
    check(keys, "%s: no state or costate columns" % name)
    for key in keys:
        mid = key.startswith("lambda")
        refs = [timed_values(s, N, key, mid) for N, s in sols2]
        mine = [timed_values(s, N, key, False) for N, s in sols4]
        times = set(refs[0]).intersection(*refs[1:], *mine)
        if not mid:
            times.discard(Fraction(0))  # the fixed ends: exact in both
            times.discard(Fraction(1))
        check(len(times) >= 8, "%s %s: only %d common times" % (name, key, len(times)))
        if not times:
            continue
        ref = {t: richardson3([r[t] for r in refs]) for t in times}
        e = [max(abs(m[t] - ref[t]) for t in times) for m in mine]
        o = [order(e[i], e[i + 1]) for i in range(len(e) - 1)]
        print("%s %-8s vs second-order Richardson at %d times: errors %s, orders %s"
              % (name, key, len(times), ["%.2e" % x for x in e], ["%.2f" % x for x in o]))
        check(all(abs(x - 4) <= tol for x in o), "%s: order of %s against the second-order limit %s" % (name, key, o))


def second_order3(prob, N2, extra=()):
    """The second-order scheme on prob at N2, 3 N2, 9 N2 (check_orders_independent's reference) as (N, summary)."""
    out = []
    for N in (N2, 3 * N2, 9 * N2):
        s, txt, _ = run(["-problem", prob, "-N", str(N)] + QUIET + list(extra))
        check(s and s["converged"], "%s second order N=%d: %s" % (prob, N, txt[-300:]))
        out.append((N, s))
    return out if all(s for _, s in out) else None


def t_order4_pendulum():
    """the pendulum: J at order 4.0 +- 0.2 against J_inf for N = 40..320, the node states and costates at order
    4 +- 0.3 against N = 1280 and at order 4.0 +- 0.2 against the second-order scheme's Richardson limit (N = 180,
    540, 1620: an independent reference; N = 40, 80, 160), H's spread < 1e-12 relative for every N, E - W at order 4
    (not conserved)."""
    Ns = (20, 40, 80, 160, 320)
    sols = {N: solve4("pendulum", N) for N in Ns + (1280,)}
    if not all(sols.values()):
        return
    errs = [abs(sols[N]["J"] - PENDULUM_JINF) for N in Ns]
    ords = [order(errs[i], errs[i + 1]) for i in range(len(Ns) - 1)]
    ew = [sols[N]["energy_work_spread"] for N in Ns]
    for N, e in zip(Ns, errs):
        print("pendulum conserving4 N=%4d  J %.13f  |J - J_inf| %.3e  H spread rel %.1e  E-W spread %.2e"
              % (N, sols[N]["J"], e, spread_ok("pendulum", N, sols[N]), sols[N]["energy_work_spread"]))
    print("observed orders of J: %s" % ["%.3f" % o for o in ords])
    for o in ords[1:]:
        check(abs(o - 4) <= 0.2, "pendulum: order of J %.3f, not 4 +- 0.2 (%s)" % (o, ords))
    eo = [order(ew[i], ew[i + 1]) for i in range(len(ew) - 1)]
    print("E - W spread orders %s" % ["%.2f" % o for o in eo])
    check(ew[0] > 1e-3 and abs(eo[-1] - 4) <= 0.3, "pendulum: E - W spread %s, orders %s (O(h^4) expected)" % (ew, eo))
    ref = sols[1280]["_rows"]
    for key in ("q1", "p1", "lambda1", "lambda2"):
        if key not in ref[0]:
            check(False, "no column %s in trajectory.csv: %s" % (key, list(ref[0])))
            continue
        e = [node_errors(sols[N]["_rows"], ref, key) for N in (40, 80, 160)]
        o = [order(e[i], e[i + 1]) for i in range(2)]
        print("node %-8s max error vs N=1280: %s, orders %s" % (key, ["%.2e" % x for x in e], ["%.2f" % x for x in o]))
        check(all(abs(x - 4) <= 0.3 for x in o), "pendulum: order of %s at the nodes %s" % (key, o))
    s2 = second_order3("pendulum", 180)
    if s2:
        check_orders_independent("pendulum", [(N, sols[N]) for N in (40, 80, 160)], s2)


def t_order4_kepler():
    """kepler: J converges to the second-order scheme's Richardson limit (N = 1280, 2560, 5120; it agrees with the
    continuous J* = 0.734302799278 of docs/theory.md 4.2) at order >= 3.8 for every doubling from N = 20 to 320 (the
    observed orders fall from ~6 towards 4: 5.9, 5.5, 4.9, 4.3; the errors reach 1e-12 at N = 320, so the asymptotic
    4 is not resolved above round-off: t_order4_kepler_long shows it over T = 2 pi), the node states and costates at
    order 4 +- 0.2 (N = 20..160 against N = 640; N = 40..160 against the second-order scheme's Richardson limit from
    N = 180, 540, 1620, not under HS_SANITIZED), and H's spread is < 1e-12 relative for every N."""
    J2 = []
    for N in (1280, 2560, 5120):
        s, _, _ = run(["-problem", "kepler", "-N", str(N)] + QUIET)
        check(s and s["converged"], "kepler second order N=%d" % N)
        J2.append(s["J"] if s else float("nan"))
    jinf = richardson2(J2)
    print("kepler: second-order Richardson limit %.15f (J* %.12f)" % (jinf, 0.734302799278))
    check(abs(jinf - 0.734302799278) < 2e-12, "kepler: Richardson limit %.15f vs J*" % jinf)
    Ns = (20, 40, 80, 160, 320)
    errs = []
    for N in Ns:
        s = solve4("kepler", N)
        if not s:
            return
        errs.append(abs(s["J"] - jinf))
        print("kepler conserving4 N=%4d  J %.15f  |J - J_inf| %.3e  H spread rel %.1e"
              % (N, s["J"], errs[-1], spread_ok("kepler", N, s)))
    ords = [order(errs[i], errs[i + 1]) for i in range(len(Ns) - 1)]
    print("observed orders of J: %s" % ["%.3f" % o for o in ords])
    check(all(3.8 <= o <= 6.5 for o in ords) and errs[-1] < 3e-12, "kepler: orders %s, errors %s" % (ords, errs))
    ref = solve4("kepler", 640)  # the node states and costates: order 4 from N = 20 on (J's orders are higher there)
    sols = [solve4("kepler", N) for N in (20, 40, 80, 160)]
    if ref and all(sols):
        check_node_orders("kepler", sols, ref["_rows"])
    s2 = None if os.environ.get("HS_SANITIZED") else second_order3("kepler", 180)
    if s2 and all(sols):
        check_orders_independent("kepler", list(zip((40, 80, 160), sols[1:])), s2)


def t_order4_kepler_long():
    """kepler over twice the horizon (problems/kepler.ocp with T = 2 pi, the same target): J at order 4.0 +- 0.2 for
    N = 40..320 against the second-order scheme's Richardson limit (N = 640, 1280, 2560). Over T = pi the errors reach
    round-off before the order settles (t_order4_kepler); here they are 5e-5 .. 1.3e-8 (measured orders 4.04, 4.01,
    4.00), far above it. Under HS_SANITIZED, N = 40 and 80 and the second-order N = 640 only (no order check)."""
    sanitized = bool(os.environ.get("HS_SANITIZED"))
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "kepler_2pi.ocp")
        with open(os.path.join(os.path.dirname(DATA), "..", "problems", "kepler.ocp")) as g:
            text = g.read()
        check("\nT: pi\n" in text, "problems/kepler.ocp: no line 'T: pi'")
        open(f, "w").write(text.replace("\nT: pi\n", "\nT: 2*pi\n"))
        J2 = []
        for N in (640,) if sanitized else (640, 1280, 2560):
            s, _, _ = run(["-problem", f, "-N", str(N)] + QUIET)
            check(s and s["converged"], "kepler T = 2 pi second order N=%d" % N)
            J2.append(s["J"] if s else float("nan"))
        Ns = (40, 80) if sanitized else (40, 80, 160, 320)
        sols = [solve4(f, N) for N in Ns]
    if sanitized or not all(sols):
        return
    jinf = richardson2(J2)
    errs = [abs(s["J"] - jinf) for s in sols]
    for N, s, e in zip(Ns, sols, errs):
        print("kepler T=2pi conserving4 N=%4d  J %.15f  |J - J_inf| %.3e  H spread rel %.1e"
              % (N, s["J"], e, spread_ok("kepler_2pi", N, s)))
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    print("kepler T=2pi: J_inf %.15f (second order, Richardson); orders %s" % (jinf, ["%.3f" % o for o in ords]))
    check(all(abs(o - 4) <= 0.2 for o in ords) and errs[-1] > 1e-10, "kepler T=2pi: orders %s, errors %s"
          % (ords, errs))


def warm_chain(prob, Ns, scheme4=True, start=None, d=None):
    """Solves prob at each N of Ns, each from the last solution (-hs_init; start: the first one's); returns the
    summaries and the last output directory."""
    out, prev, sols = None, start, []
    for N in Ns:
        out = os.path.join(d, "%s_%d_%d" % (os.path.basename(prob), N, scheme4))
        s, txt, _ = run(["-problem", prob, "-N", str(N)] + (["-hs_scheme", "conserving4"] if scheme4 else []) + QUIET +
                        (["-hs_init", prev] if prev else []), outdir=out)
        check(s and s["converged"], "%s N=%d (conserving4 %s): %s" % (prob, N, scheme4, txt[-300:]))
        sols.append(s)
        prev = out
    return sols, prev


def t_order4_arm():
    """the 3-link arm (manipulator3, M(q) configuration-dependent, J ~ 4e6): J at order 4.0 +- 0.2 for N = 80..320
    against the second-order scheme's Richardson limit (N = 1280, 2560, 5120, warm-started from conserving4's N = 320),
    the node states and costates at order 4 +- 0.2 (N = 80, 160, 320 against conserving4's N = 1280, and against the
    second-order scheme's Richardson limit from N = 360, 1080, 3240, warm-started likewise; not under HS_SANITIZED),
    H's spread < 1e-12 relative for every N (N = 40 from the default guess: -hs_strategy auto's l2 line search)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        s4, last = warm_chain("manipulator3", (40, 80, 160, 320), d=d)
        s2, _ = warm_chain("manipulator3", (1280, 2560, 5120), scheme4=False, start=last, d=d)
        ref, _ = warm_chain("manipulator3", (1280,), start=last, d=d)
        s3 = None if os.environ.get("HS_SANITIZED") else warm_chain("manipulator3", (360, 1080, 3240), scheme4=False,
                                                                     start=last, d=d)[0]
    if not all(s4) or not all(s2):
        return
    if ref[0]:
        check_node_orders("manipulator3", s4[1:], ref[0]["_rows"])
    if s3 and all(s3):
        check_orders_independent("manipulator3", list(zip((80, 160, 320), s4[1:])), list(zip((360, 1080, 3240), s3)))
    jinf = richardson2([s["J"] for s in s2])
    errs = [abs(s["J"] - jinf) for s in s4]
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    for N, s, e in zip((40, 80, 160, 320), s4, errs):
        print("manipulator3 conserving4 N=%4d  J %.6f  |J - J_inf| %.3e  H spread rel %.1e"
              % (N, s["J"], e, spread_ok("manipulator3", N, s)))
    print("J_inf %.6f (second order, Richardson); orders %s" % (jinf, ["%.3f" % o for o in ords]))
    check(all(abs(o - 4) <= 0.2 for o in ords[1:]), "manipulator3: orders %s" % ords)


def t_order4_free_end():
    """a free end with a terminal cost (tests/data/pendulum_free.ocp; lambda(T) = -grad phi): J at order 4 +- 0.2
    against the second-order scheme's Richardson limit on the same branch (each grid warm-started from the coarser
    solution: the problem has several stationary points), H conserved to round-off."""
    f = os.path.join(DATA, "pendulum_free.ocp")
    prev, J4 = None, []
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for N in (20, 40, 80, 160, 320):
            out = os.path.join(d, "c4_%d" % N)
            s, txt, _ = run(["-problem", f, "-N", str(N), "-hs_scheme", "conserving4"] + QUIET +
                            (["-hs_init", prev] if prev else []), outdir=out)
            check(s and s["converged"], "pendulum_free conserving4 N=%d: %s" % (N, txt[-300:]))
            if not s:
                return
            spread_ok("pendulum_free", N, s)
            J4.append(s["J"])
            prev = out
        J2 = []
        for N in (1280, 2560, 5120):
            s, _, _ = run(["-problem", f, "-N", str(N), "-hs_init", prev] + QUIET)
            check(s and s["converged"], "pendulum_free second order N=%d" % N)
            J2.append(s["J"] if s else float("nan"))
    jinf = richardson2(J2)
    errs = [abs(j - jinf) for j in J4]
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    print("pendulum_free: J_inf %.12f (second order, Richardson), conserving4 errors %s, orders %s"
          % (jinf, ["%.2e" % e for e in errs], ["%.3f" % o for o in ords]))
    check(all(abs(o - 4) <= 0.2 for o in ords[1:]), "pendulum_free: orders %s" % ords)


def t_order4_solvers():
    """1 and 2 ranks, the band solver and MUMPS give the same solution to round-off (J and every node value)."""
    for prob, N in (("pendulum", 80), ("kepler", 40)):
        a = solve4(prob, N, ["-hs_linear_solver", "band"])
        b = solve4(prob, N, ["-hs_linear_solver", "mumps"])
        c = solve4(prob, N, [], ranks=2)
        if not (a and b and c):
            continue
        for name, o in (("mumps", b), ("2 ranks", c)):
            dj = abs(o["J"] - a["J"])
            dx = max(abs(float(r[k]) - float(q[k])) for r, q in zip(a["_rows"], o["_rows"]) for k in r
                     if k not in ("k", "t", "t_mid") and r[k] != "")
            print("%s N=%d: band vs %s: |dJ| %.1e, max node difference %.1e" % (prob, N, name, dj, dx))
            check(dj <= 1e-12 * max(1, abs(a["J"])) and dx <= 1e-9, "%s: band vs %s: %.1e %.1e" % (prob, name, dj, dx))


def t_order4_jacobian():
    """the analytic Jacobian against -snes_test_jacobian (pendulum, kepler, the free end with a terminal cost, ncar's
    time-dependent ell), and
    Newton's quadratic convergence (|F_{k+1}| <= 10 |F_k|^2 once |F_k| < 0.1, above the round-off level)."""
    for prob in ("pendulum", "kepler", os.path.join(DATA, "pendulum_free.ocp"), "ncar"):
        _, out, _ = run(["-problem", prob, "-N", "6", "-hs_scheme", "conserving4", "-snes_test_jacobian",
                         "-snes_max_it", "4"] + QUIET, expect_rc=None)
        r = jacobian_ratios(out)
        print("%s: %d Jacobians, max ||J - Jfd||/||J|| %.1e" % (os.path.basename(prob), len(r), max(r) if r else -1))
        # ncar is linear: one Newton step; the second was a polish, which a stop whose violation is at round-off no
        # longer takes (HS_POLISH_FROM_ATOL, issue 43)
        check(len(r) >= (1 if prob == "ncar" else 2) and max(r) <= 1e-6, "%s conserving4 Jacobian: %s" % (prob, r))
    import re
    _, out, _ = run(["-problem", "pendulum", "-N", "80", "-hs_scheme", "conserving4", "-hs_monitor"] + QUIET)
    f = [float(x) for x in re.findall(r"Newton +\d+ +\|F\| = ([0-9.eE+-]+)", out)]
    q = [f[i + 1] / f[i] ** 2 for i in range(len(f) - 1) if f[i] < 0.1 and f[i + 1] > 1e-13]
    print("pendulum N=80 Newton |F|: %s; |F_k+1|/|F_k|^2 %s" % (["%.1e" % x for x in f], ["%.2g" % x for x in q]))
    check(len(f) >= 4 and q and max(q) <= 10, "pendulum conserving4 Newton not quadratic: %s" % f)


def t_order4_errors():
    """what conserving4 does not support yet is refused with a message, not solved wrongly: IPOPT, explicit
    state/costate schemes, a free T in the data with bounded controls. (The constrained systems it does not serve are
    refused by ConsRefusal, costate/order4.c: the spring pendulum this test had refused is solved since the extended
    class, order4cons_extended.)"""
    cases = [(["-problem", "pendulum", "-hs_bvp_type", "ipopt"], "transcription and shooting only"),
             (["-problem", "pendulum", "-hs_state_scheme", "midpoint"], "its own scheme"),
             ]
    with tempfile.TemporaryDirectory() as d:  # T in the data with bounded controls (refused before conserving4's check)
        bounded = os.path.join(d, "pendulum_bq_T_data_bounded.ocp")
        with open(os.path.join(DATA, "pendulum_bq_T_data.ocp")) as f:
            open(bounded, "w").write(f.read().replace("B: 1 + 2*c*s", "B: 1") + "u_min: -20\nu_max: 20\n")
        cases.append((["-problem", bounded], "depending on a free T"))  # every indirect solver's check (disc.c)
        for args, want in cases:
            _, out, rc = run(args + ["-hs_scheme", "conserving4"] + QUIET, expect_rc=None)
            print("%s: rc %d, %s" % (" ".join(args[1:]), rc, want in out))
            check(rc != 0 and want in out, "%s: rc %d, message %s" % (args, rc, out[-300:]))


def t_order4_extrapolate():
    """-hs_extrapolate and -hs_study know the order: Richardson with 16 (the pendulum, N = 80, 160, 320: the
    extrapolated J within 2e-8 of J_inf, observed order 4 +- 0.1, an error estimate within 10x of the true error);
    the study's orders of J, H, states, controls and costates (node values, at shared nodes) at 4 +- 0.2, its
    scheme_order 4; its grids solved by conserving4 itself (J at N = 40 as a plain solve's)."""
    import json
    import tempfile
    s, out, _ = run(["-problem", "pendulum", "-N", "320", "-hs_scheme", "conserving4", "-hs_extrapolate"] + QUIET)
    e = s and s.get("extrapolation")
    check(e, "no extrapolation in summary.json: " + out[-300:])
    if e:
        err = abs(e["J"] - PENDULUM_JINF)
        print("extrapolated J %.13f (+- %.1e), |J - J_inf| %.1e, order %s" % (e["J"], e["J_error"], err, e["J_order"]))
        check(err < 2e-8 and abs(e["J_order"] - 4) <= 0.1 and err / 10 <= e["J_error"] <= 10 * err and e["reliable"],
              "extrapolation: %s" % e)
    p40 = solve4("pendulum", 40)
    with tempfile.TemporaryDirectory() as d:
        s, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_scheme", "conserving4", "-hs_study", "4"] + QUIET,
                        outdir=d)
        path = os.path.join(d, "study.json")
        st = json.load(open(path)) if os.path.exists(path) else None
    check(st and st.get("scheme_order") == 4, "study.json: %s" % (st and st.get("scheme_order")))
    names = [(x.get("state_scheme"), x.get("costate_scheme")) for x in (s, st, p40) if x]  # not its helpers' names
    check(len(names) == 3 and all(n == ("conserving4", "conserving4") for n in names), "scheme names: %s" % names)
    if not st or not p40:
        return
    lv = st["levels"]
    check(abs(lv[0]["J"] - p40["J"]) <= 1e-12, "study N=40 J %.15g, plain %.15g" % (lv[0]["J"], p40["J"]))
    for key in ("order_J", "order_H", "order_x", "order_u", "order_lambda"):
        o = [l[key] for l in lv if l.get(key) is not None]
        print("study %-13s %s" % (key, ["%.3f" % x for x in o]))
        check(o and all(abs(x - 4) <= 0.2 for x in o), "study %s: %s" % (key, o))
    check(not st["pre_asymptotic"], "study pre-asymptotic")


def t_order4_bq():
    """a configuration-dependent B(q) (docs/configuration-dependent-forces.md; H gains 1/2 lambda_p^T B R^-1 B^T
    lambda_p): tests/data/pendulum_bq.ocp is the pendulum in the coordinate s with theta = s + c s^2, so its J_inf is
    the pendulum's: order 4 +- 0.2 for N = 40..320; tests/data/bq2.ocp (2 DOF, B(q) 2 x 2, R not diagonal, ell with
    p, a terminal cost, free end momenta): the Jacobian against finite differences, order 4 +- 0.3 against the
    second-order scheme's Richardson limit; H's spread < 1e-12 relative throughout."""
    import tempfile
    f = os.path.join(DATA, "pendulum_bq.ocp")
    errs = []
    for N in (20, 40, 80, 160, 320):
        s = solve4(f, N)
        if not s:
            return
        spread_ok("pendulum_bq", N, s)
        errs.append(abs(s["J"] - PENDULUM_JINF))
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    print("pendulum_bq: |J - J_inf| %s, orders %s" % (["%.2e" % e for e in errs], ["%.3f" % o for o in ords]))
    check(all(abs(o - 4) <= 0.2 for o in ords[1:]), "pendulum_bq orders %s" % ords)
    b2 = os.path.join(DATA, "bq2.ocp")
    _, out, _ = run(["-problem", b2, "-N", "6", "-hs_scheme", "conserving4", "-snes_test_jacobian", "-snes_max_it", "3"]
                    + QUIET, expect_rc=None)
    r = jacobian_ratios(out)
    print("bq2: %d Jacobians, max ||J - Jfd||/||J|| %.1e" % (len(r), max(r) if r else -1))
    check(len(r) >= 2 and max(r) <= 1e-6, "bq2 Jacobian %s" % r)
    with tempfile.TemporaryDirectory() as d:
        s4, last = warm_chain(b2, (20, 40, 80, 160), d=d)
        s2, _ = warm_chain(b2, (1280, 2560, 5120), scheme4=False, start=last, d=d)
    if not all(s4) or not all(s2):
        return
    jinf = richardson2([s["J"] for s in s2])
    errs = [abs(s["J"] - jinf) for s in s4]
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    for N, s in zip((20, 40, 80, 160), s4):
        spread_ok("bq2", N, s)
    print("bq2: J_inf %.13f (second order, Richardson), errors %s, orders %s"
          % (jinf, ["%.2e" % e for e in errs], ["%.3f" % o for o in ords]))
    check(all(abs(o - 4) <= 0.3 for o in ords[1:]), "bq2 orders %s" % ords)


def t_order4_time():
    """a time-dependent running cost (ncar, docs/theory.md 4.5: ell = 1/2 (q_1 - y(t))^2): H is not constant (spread
    0.11), but its exact discrete balance holds substep by substep, |H(b, t_b) - H(a, t_a) - Dt| <= 1e-11 (Dt =
    -1/2 [ell(x_a, t_b) - ell(x_a, t_a) + ell(x_b, t_b) - ell(x_b, t_a)]); J at order 4 +- 0.2 against the
    second-order scheme's Richardson limit (N = 3200, 6400, 12800); E - W exact (E is quadratic here)."""
    J2 = []
    for N in (3200, 6400, 12800):
        s, _, _ = run(["-problem", "ncar", "-N", str(N)] + QUIET)
        check(s and s["converged"], "ncar second order N=%d" % N)
        J2.append(s["J"] if s else float("nan"))
    jinf = richardson2(J2)
    errs = []
    for N in (50, 100, 200, 400):
        s = solve4("ncar", N)
        if not s:
            return
        errs.append(abs(s["J"] - jinf))
        print("ncar conserving4 N=%4d  J %.15f  |J - J_inf| %.2e  H spread %.3f  balance %.1e  E-W spread %.1e"
              % (N, s["J"], errs[-1], s["H_spread"], s["H_balance"], s["energy_work_spread"]))
        check(s["H_balance"] <= 1e-11 and s["H_spread"] > 0.1 and s["energy_work_spread"] <= 1e-10,
              "ncar N=%d: balance %.2e, spread %.2e, E-W %.2e" % (N, s["H_balance"], s["H_spread"],
                                                                   s["energy_work_spread"]))
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    print("ncar: J_inf %.15f (second order, Richardson), orders %s" % (jinf, ["%.3f" % o for o in ords]))
    check(all(abs(o - 4) <= 0.2 for o in ords), "ncar orders %s" % ords)


def t_order4_free_time():
    """a free final time (tests/data/pendulum_free_T.ocp: cost int 1/2 u^2 + c, T free; docs/free-final-time.md):
    the condition H(z_N) = d phi/dT (= 0 here) at the last node, H constant to round-off at its value 0; J and T at
    order 4 +- 0.2 against the second-order scheme's Richardson limits (N = 1280, 2560, 5120); the Jacobian with T's
    column and row against finite differences; 2 ranks (MUMPS) as 1."""
    f = os.path.join(DATA, "pendulum_free_T.ocp")
    s2 = []
    for N in (1280, 2560, 5120):
        s, _, _ = run(["-problem", f, "-N", str(N)] + QUIET)
        check(s and s["converged"], "pendulum_free_T second order N=%d" % N)
        s2.append(s)
    if not all(s2):
        return
    jinf, tinf = richardson2([s["J"] for s in s2]), richardson2([s["T"] for s in s2])
    eJ, eT = [], []
    for N in (20, 40, 80, 160):
        s = solve4(f, N)
        if not s:
            return
        spread_ok("pendulum_free_T", N, s)
        check(abs(s["H_mean"]) <= 1e-12, "pendulum_free_T N=%d: H = %.2e, not d phi/dT = 0" % (N, s["H_mean"]))
        eJ.append(abs(s["J"] - jinf)), eT.append(abs(s["T"] - tinf))
    oJ = [order(eJ[i], eJ[i + 1]) for i in range(3)]
    oT = [order(eT[i], eT[i + 1]) for i in range(3)]
    print("pendulum_free_T: J_inf %.12f, T_inf %.12f; orders of J %s, of T %s"
          % (jinf, tinf, ["%.3f" % o for o in oJ], ["%.3f" % o for o in oT]))
    check(all(abs(o - 4) <= 0.2 for o in oJ[1:] + oT[1:]), "pendulum_free_T orders %s %s" % (oJ, oT))
    _, out, _ = run(["-problem", f, "-N", "6", "-hs_scheme", "conserving4", "-snes_test_jacobian", "-snes_max_it", "4",
                     "-hs_strategy", "newton"] + QUIET, expect_rc=None)
    r = jacobian_ratios(out)
    print("pendulum_free_T: %d Jacobians, max ||J - Jfd||/||J|| %.1e" % (len(r), max(r) if r else -1))
    check(len(r) >= 3 and max(r) <= 1e-6, "pendulum_free_T Jacobian %s" % r)
    a, b = solve4(f, 40), solve4(f, 40, ranks=2)
    if a and b:
        print("pendulum_free_T N=40: 1 rank T %.15f, 2 ranks %.15f" % (a["T"], b["T"]))
        check(abs(a["T"] - b["T"]) <= 1e-12 and abs(a["J"] - b["J"]) <= 1e-12, "free T: 1 vs 2 ranks")


def di_T_data_optimum():
    """The analytic optimum of tests/data/di_T_data.ocp, J(T) = 6 R M^2 D^2 / (B^2 T^3) + (c + w T) T with R = 1 + 0.1 T,
    M = 1 + 0.2 T, B = 1 + 0.15 T, D = d + s T (x0 = -s T): (T*, J(T*)), dJ/dT by the complex step (round-off
    exact), its root by bisection."""
    def J(T):
        R, M, B, D = 1 + 0.1 * T, 1 + 0.2 * T, 1 + 0.15 * T, 1 + 0.1 * T
        return 6 * R * M ** 2 * D ** 2 / (B ** 2 * T ** 3) + (1 + 0.05 * T) * T
    return bisect_min(J, 1.0, 4.0)


def bisect_min(J, lo, hi):
    """The minimizer of J on [lo, hi] (one sign change of J'), J' by the complex step; (T, J(T))."""
    dJ = lambda T: J(complex(T, 1e-30)).imag / 1e-30
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if dJ(lo) * dJ(mid) <= 0 else (mid, hi)
    T = 0.5 * (lo + hi)
    return T, J(T).real


def last_phase_quadratic(out):
    """Newton's |F| of the last phase of -hs_monitor's output (a free T's cold start holds T first, then counts from 0
    again) and the ratios |F_k+1| / |F_k|^2 once |F_k| < 0.1, above round-off."""
    import re
    f = [(int(k), float(x)) for k, x in re.findall(r"Newton +(\d+) +\|F\| = ([0-9.eE+-]+)", out)]
    start = max(i for i, (k, _) in enumerate(f) if k == 0) if f else 0
    f = [x for _, x in f[start:]]
    return f, [f[i + 1] / f[i] ** 2 for i in range(len(f) - 1) if f[i] < 0.1 and f[i + 1] > 1e-13]


def t_order4_free_time_data():
    """a free T with T in the problem's data and a terminal state that moves with T (docs/theory.md section 8, "T in the
    data"): the condition H(z_N) + sum over the substeps of c h dH/dT(zbar) + lambda_0.dx0/dT = d phi/dT + sum_fixed
    nu_i dx_T,i/dT.
    - di_T_data (M, B, R, ell, x0 depend on T) and the double integrator with a moving target: T and J the analytic
      optimum's to 1e-11 at N = 10 and 40 (the triple jump is exact on these linear problems: docs/theory.md);
    - pendulum_T_data: T at order 4 +- 0.2 against the continuous T* of tests/crosscheck/free_T_data.py (scipy);
    - pendulum_T_moving (both): T and J at order 4 +- 0.2 against the second-order scheme's Richardson limits;
    - H constant to 1e-12 relative (not 0: the integral and the target's terms hold the balance); the Jacobian with
      T's dense row and its difference column against -snes_test_jacobian; Newton quadratic; 2 ranks as 1.
    The order checks are skipped when HS_SANITIZED is set."""
    sanitized = bool(os.environ.get("HS_SANITIZED"))
    di, pe, pm, bq = (os.path.join(DATA, f + ".ocp") for f in ("di_T_data", "pendulum_T_data", "pendulum_T_moving",
                                                                "bq2_T_data"))
    Ts, Js = di_T_data_optimum()
    Tm, Jm = bisect_min(lambda T: 6 * (1 + 0.2 * T) ** 2 / T ** 3 + T, 1.0, 5.0)
    with tempfile.TemporaryDirectory() as d:
        mv = os.path.join(d, "moving.ocp")
        with open(os.path.join(os.path.dirname(DATA), "..", "problems", "double_integrator_free_T.ocp")) as f:
            open(mv, "w").write(f.read().replace("xT: d, 0", "xT: d + v*T, 0")
                                .replace("param d: 1", "param d: 1\nparam v: 0.2"))
        for prob, T0, J0 in ((di, Ts, Js), (mv, Tm, Jm)):
            for N, ranks in ((10, 1), (40, 1), (40, 2)):
                s = solve4(prob, N, ranks=ranks)
                if not s:
                    continue
                spread_ok(prob, N, s)
                print("%s N=%d ranks=%d: T - T* %.1e, J - J* %.1e (T* %.15f), H %.6f"
                      % (os.path.basename(prob), N, ranks, s["T"] - T0, s["J"] - J0, T0, s["H_mean"]))
                check(abs(s["T"] - T0) <= 1e-11 * T0 and abs(s["J"] - J0) <= 1e-11 * J0,
                      "%s N=%d: T %.15f J %.15f, analytic %.15f %.15f" % (prob, N, s["T"], s["J"], T0, J0))
    Ns = (40,) if sanitized else (40, 80, 160)
    sols = {N: solve4(pe, N) for N in Ns}
    for N, s in sols.items():
        if s:
            spread_ok("pendulum_T_data", N, s)
    if not sanitized and all(sols.values()):
        e = [abs(sols[N]["T"] - 3.171534469717) for N in Ns]  # tests/crosscheck/free_T_data.py
        o = [order(e[i], e[i + 1]) for i in range(2)]
        print("pendulum_T_data: T - T* %s, orders %s" % (["%.3e" % x for x in e], ["%.2f" % x for x in o]))
        check(all(abs(x - 4) <= 0.2 for x in o), "pendulum_T_data: orders of T %s" % o)
    if not sanitized:
        s2 = [run(["-problem", pm, "-N", str(N)] + QUIET)[0] for N in (640, 1280, 2560)]
        s4 = [solve4(pm, N) for N in (40, 80, 160)]
        if all(s2) and all(s4):
            for key in ("T", "J"):
                lim = richardson2([s[key] for s in s2])
                e = [abs(s[key] - lim) for s in s4]
                o = [order(e[i], e[i + 1]) for i in range(2)]
                print("pendulum_T_moving: %s_inf %.12f (second order, Richardson), errors %s, orders %s"
                      % (key, lim, ["%.3e" % x for x in e], ["%.2f" % x for x in o]))
                check(all(abs(x - 4) <= 0.2 for x in o), "pendulum_T_moving: orders of %s %s" % (key, o))
            for s in s4:
                spread_ok("pendulum_T_moving", 0, s)
    for prob, N in ((pm, 12), (bq, 6)):
        _, out, _ = run(["-problem", prob, "-N", str(N), "-hs_scheme", "conserving4", "-snes_test_jacobian",
                         "-snes_max_it", "8", "-hs_strategy", "newton"] + QUIET, expect_rc=None)
        r = jacobian_ratios(out)
        print("%s N=%d: %d Jacobians, max ||J - Jfd||/||J|| %.1e" % (os.path.basename(prob), N, len(r),
                                                                      max(r) if r else -1))
        # measured <= 3.4e-8; without the dense row's gradient 0.024 - 0.036 in the free phase
        check(len(r) >= 6 and max(r) <= 1e-5, "%s Jacobian %s" % (prob, r))
    _, out, _ = run(["-problem", pm, "-N", "80", "-hs_scheme", "conserving4", "-hs_monitor"] + QUIET)
    f, q = last_phase_quadratic(out)
    print("pendulum_T_moving N=80, T free: Newton |F| %s; |F_k+1|/|F_k|^2 %s" % (["%.1e" % x for x in f],
                                                                               ["%.2g" % x for x in q]))
    check(len(f) >= 3 and q and max(q) <= 10, "pendulum_T_moving Newton not quadratic: %s" % f)
    a, b = solve4(pm, 40), solve4(pm, 40, ranks=2)
    if a and b:
        print("pendulum_T_moving N=40: 1 rank T %.15f J %.15f, 2 ranks %.15f %.15f" % (a["T"], a["J"], b["T"], b["J"]))
        check(abs(a["T"] - b["T"]) <= 1e-12 and abs(a["J"] - b["J"]) <= 1e-12 * abs(a["J"]), "T in the data: 1 vs 2 ranks")


def t_order4_free_time_data_force():
    """a free T in the data (mass, potential, running cost, x0) with a control that enters nonlinearly
    (tests/data/pendulum_sinh_T_data.ocp: force (1 + 2cs) sinh(v), cost 1/2 sinh(v)^2; with w = sinh(v) the problem of
    tests/data/pendulum_bq_T_data.ocp, torque B(s) w, and the same maximized Hamiltonian): dH/dT at the maximizer is
    E_T's and ell_T's (the envelope theorem; f and c have no T).
    - the two formulations, solved by conserving4 (the force through the inner maximizer, B(q) in closed form): T, J
      equal to 1e-10 relative at N = 10 and 40;
    - T and J at order 4 +- 0.2 against the second-order scheme's Richardson limits of the B(q) twin (N = 640 .. 2560;
      skipped when HS_SANITIZED is set);
    - H constant to 1e-12 relative; the Jacobian against -snes_test_jacobian (also tests/data/nonlinear2.ocp with T in
      its mass: 2 controls, a non-quadratic cost); 2 ranks as 1 to 1e-12; shooting (4 segments) = transcription to
      1e-10."""
    sanitized = bool(os.environ.get("HS_SANITIZED"))
    ps, pb = (os.path.join(DATA, f + ".ocp") for f in ("pendulum_sinh_T_data", "pendulum_bq_T_data"))
    sols = {}
    for N in (10, 40) if sanitized else (10, 40, 80, 160):
        a = sols[N] = solve4(ps, N)
        b = solve4(pb, N) if N in (10, 40) else None
        if a:
            spread_ok("pendulum_sinh_T_data", N, a)
        if a and b:
            print("N=%d: force T %.15f J %.15f, B(q) T %.15f J %.15f" % (N, a["T"], a["J"], b["T"], b["J"]))
            check(abs(a["T"] - b["T"]) <= 1e-10 * b["T"] and abs(a["J"] - b["J"]) <= 1e-10 * abs(b["J"]),
                  "N=%d: the force's T, J %.15f %.15f, the B(q) twin's %.15f %.15f" % (N, a["T"], a["J"], b["T"], b["J"]))
    if not sanitized and all(sols.values()):
        s2 = [run(["-problem", pb, "-N", str(N)] + QUIET)[0] for N in (640, 1280, 2560)]
        if all(s2):
            for key in ("T", "J"):
                lim = richardson2([s[key] for s in s2])
                e = [abs(sols[N][key] - lim) for N in (40, 80, 160)]
                o = [order(e[i], e[i + 1]) for i in range(2)]
                print("pendulum_sinh_T_data: %s_inf %.12f (second order, B(q) twin, Richardson), errors %s, orders %s"
                      % (key, lim, ["%.3e" % x for x in e], ["%.2f" % x for x in o]))
                check(all(abs(x - 4) <= 0.2 for x in o), "pendulum_sinh_T_data: orders of %s %s" % (key, o))
        else:
            check(False, "the second-order scheme failed on pendulum_bq_T_data")
    with tempfile.TemporaryDirectory() as d:  # and nonlinear2 (2 DOF, c with u^4, cos(a) u1 u2) with T in the mass
        nl = os.path.join(d, "nonlinear2_T.ocp")
        with open(os.path.join(DATA, "nonlinear2.ocp")) as f:
            open(nl, "w").write(f.read().replace("mass: 1 + 0.2*cos(b)", "mass: 1 + 0.1*T + 0.2*cos(b)")
                                .replace("T: 2", "T: free 2"))
        for prob in (ps, nl):
            _, out, _ = run(["-problem", prob, "-N", "6", "-hs_scheme", "conserving4", "-snes_test_jacobian",
                             "-snes_max_it", "8", "-hs_strategy", "newton"] + QUIET, expect_rc=None)
            r = jacobian_ratios(out)
            print("%s N=6: %d Jacobians, max ||J - Jfd||/||J|| %.1e" % (os.path.basename(prob), len(r),
                                                                         max(r) if r else -1))
            check(len(r) >= 3 and max(r) <= 1e-5, "%s Jacobian %s" % (prob, r))  # measured <= 6e-8
        s = solve4(nl, 20)
        if s:
            spread_ok("nonlinear2_T", 20, s)
    t = sols.get(40)
    r2 = solve4(ps, 40, ranks=2)
    if t and r2:
        print("N=40 2 ranks T %.15f J %.15f" % (r2["T"], r2["J"]))
        check(abs(r2["T"] - t["T"]) <= 1e-12 * t["T"] and abs(r2["J"] - t["J"]) <= 1e-12 * abs(t["J"]),
              "2 ranks T, J %.15f %.15f, 1 rank %.15f %.15f" % (r2["T"], r2["J"], t["T"], t["J"]))
    sh = solve4(ps, 40, extra=["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"])
    if t and sh:
        print("N=40 shooting T %.15f J %.15f, transcription %.15f %.15f" % (sh["T"], sh["J"], t["T"], t["J"]))
        check(abs(sh["T"] - t["T"]) <= 1e-10 * t["T"] and abs(sh["J"] - t["J"]) <= 1e-10 * abs(t["J"]),
              "shooting T, J %.15f %.15f, transcription %.15f %.15f" % (sh["T"], sh["J"], t["T"], t["J"]))
