"""hamshoot system tests (tests/hstest.py), a free final time (issue 14, docs/free-final-time.md):
T against its analytic and independently computed values, at order 2, with the condition on T
satisfied, in every formulation (transcription, shooting, IPOPT), also where the problem's data
depend on T (tests/crosscheck/free_T_data.py).
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from hs_util import HAMSHOOT, ENV, check, run, jacobian_ratios, order


def t_free_time():
    """Free final time (issue 14, docs/free-final-time.md): the condition (1/N) sum_k H^d = d phi/dT.
    Double integrator, cost int 1/2 u^2 + c dt: T* = (18 d^2/c)^(1/4) analytically; the discrete T
    converges at order 2 with H^d = 0 to round-off on every interval, on 1 and 2 ranks. The same T
    with the time penalty as a terminal cost c T (or c t). The envelope theorem as an independent
    check: the fixed-T discrete optimum J^d(T) is stationary at the free T (the direct scheme's
    condition is the exact KKT condition of the NLP with T as a variable). Pendulum with a time
    penalty: conserving H^d constant to round-off, the direct scheme's spread O(h^2)."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    di = os.path.join(data, "..", "..", "problems", "double_integrator_free_T.ocp")
    pf = os.path.join(data, "pendulum_free_T.ocp")
    Ts = 18 ** 0.25
    errs, ref = [], {}
    for N in (20, 40, 80, 160):
        s, out, _ = run(["-problem", di, "-N", str(N)])
        ok = s and s["converged"]
        check(ok, "double integrator N = %d: %s" % (N, out[-300:]))
        if not ok:
            return
        ref[N] = s
        errs.append(abs(s["T"] - Ts))
        print("N = %4d  T = %.15f  T - T* = %.3e  H spread %.1e  H mean %.1e  Newton %d" %
              (N, s["T"], s["T"] - Ts, s["H_spread"], s["H_mean"], s["newton_iterations"]))
        check(s["H_spread"] <= 1e-12 and abs(s["H_mean"]) <= 1e-12, "H^d not 0 to round-off at N = %d" % N)
    orders = [math.log2(errs[i] / errs[i + 1]) for i in range(3)]
    print("observed orders of T:", ["%.3f" % o for o in orders])
    check(all(1.95 < o < 2.05 for o in orders), "order of T: %s" % orders)
    Js = 6 / Ts ** 3 + Ts  # the analytic optimal cost 6 d^2/T*^3 + c T*
    eJ = [abs(ref[N]["J"] - Js) for N in (20, 40, 80, 160)]
    oJ = [math.log2(eJ[i] / eJ[i + 1]) for i in range(3)]
    print("J^d - J* (J* = %.15f): %s, orders %s" % (Js, ["%.3e" % e for e in eJ], ["%.3f" % o for o in oJ]))
    check(all(1.95 < o < 2.05 for o in oJ), "order of J: %s" % oJ)
    s2, out, _ = run(["-problem", di, "-N", "80"], ranks=2)
    check(s2 and abs(s2["T"] - ref[80]["T"]) <= 1e-12, "2 ranks: T differs: %s" % (s2 and s2["T"]))
    text = open(di).read()
    with tempfile.TemporaryDirectory() as d:
        for phi in ("c*T", "c*t", "0.5*c*(T + t)"):
            f = os.path.join(d, "phi.ocp")
            open(f, "w").write(text.replace("running_cost: c", "terminal_cost: " + phi))
            s, out, _ = run(["-problem", f, "-N", "40"])
            check(s and abs(s["T"] - ref[40]["T"]) <= 1e-12 and abs(s["J"] - ref[40]["J"]) <= 1e-12,
                  "terminal cost %s: T %s, J %s, against %r, %r" % (phi, s and s["T"], s and s["J"], ref[40]["T"], ref[40]["J"]))
        # envelope theorem: d J^d(T)/dT = 0 at the free T, for the fixed-T problems
        for name, f0, N, scheme in (("double integrator", di, 40, []), ("pendulum", pf, 40, ["-hs_scheme", "direct"])):
            free, _, _ = run(["-problem", f0, "-N", str(N)] + scheme)
            if not (free and free["converged"]):
                check(False, "%s: free T did not converge" % name)
                continue
            f = os.path.join(d, "fixed.ocp")
            guess = re.search(r"T: free (\S+)", open(f0).read()).group(1)
            open(f, "w").write(open(f0).read().replace("T: free " + guess, "param Tf: %s\nT: Tf" % guess))
            T0, dl = free["T"], 1e-3
            J = {}
            for k in (-1, 0, 1):
                s, out, _ = run(["-problem", f, "-N", str(N), "-p_Tf", repr(T0 + k * dl)] + scheme)
                J[k] = s["J"] if s and s["converged"] else float("nan")
            dJ = (J[1] - J[-1]) / (2 * dl)
            d2J = (J[1] - 2 * J[0] + J[-1]) / dl ** 2
            print("%s: J^d(T* -+ 1e-3) - J^d(T*) = %.3e, %.3e; dJ/dT = %.2e, d2J/dT2 = %.3f; J(T*) = %.15g, free J = %.15g"
                  % (name, J[-1] - J[0], J[1] - J[0], dJ, d2J, J[0], free["J"]))
            check(abs(J[0] - free["J"]) <= 1e-12 * abs(free["J"]), "%s: fixed T* and free T give other J" % name)
            check(J[-1] > J[0] and J[1] > J[0] and abs(dJ) <= 1e-4 * d2J, "%s: J^d(T) not stationary at T*" % name)
    # pendulum: H^d constant (conserving) / O(h^2) spread with mean 0 (direct)
    sp, sp_T = {}, {}
    for N in (40, 80):
        c, out, _ = run(["-problem", pf, "-N", str(N)])
        check(c and c["converged"] and c["H_spread"] <= 1e-9 and abs(c["H_mean"]) <= 1e-9,
              "pendulum conserving N = %d: %s" % (N, c and (c["H_spread"], c["H_mean"])))
        dr, out, _ = run(["-problem", pf, "-N", str(N), "-hs_scheme", "direct"])
        check(dr and dr["converged"] and abs(dr["H_mean"]) <= 1e-12, "pendulum direct N = %d" % N)
        sp[N] = dr["H_spread"] if dr else float("nan")
        sp_T[N] = dr["T"] if dr else float("nan")
        print("pendulum N = %d: conserving T = %.12f, H spread %.1e; direct T = %.12f, H spread %.4e, H mean %.1e"
              % (N, c["T"], c["H_spread"], dr["T"], dr["H_spread"], dr["H_mean"]))
    check(3.5 < sp[40] / sp[80] < 4.5, "direct H^d spread not O(h^2): %s" % sp)
    # multiple shooting: the same discrete T (single shooting, 4 segments on 2 ranks, rankblock on 3 ranks
    # with fewer segments than... every segment its own rank; the pendulum with both schemes)
    # sanitized (HS_SANITIZED): N = 20 only, the same shooting paths as at 40 .. 160 (AddressSanitizer's time)
    for N in (20,) if os.environ.get("HS_SANITIZED") else (20, 40, 80, 160):
        for M, ranks, extra in ((1, 1, []), (4, 2, [])):
            sh, out, _ = run(["-problem", di, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)] + extra,
                             ranks=ranks)
            check(sh and sh["converged"] and abs(sh["T"] - ref[N]["T"]) <= 1e-12 and sh["H_spread"] <= 1e-12,
                  "double integrator shooting M = %d N = %d: T %s against %r" % (M, N, sh and sh["T"], ref[N]["T"]))
    for scheme in ([], ["-hs_scheme", "direct"]):
        tr, _, _ = run(["-problem", pf, "-N", "40"] + scheme)
        for M, ranks, extra in ((8, 2, []), (8, 3, ["-hs_shoot_ksp", "rankblock"]), (2, 3, [])):
            sh, out, _ = run(["-problem", pf, "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)]
                             + scheme + extra, ranks=ranks)
            ok = sh and tr and sh["converged"] and abs(sh["T"] - tr["T"]) <= 1e-10 and abs(sh["J"] - tr["J"]) <= 1e-10 * tr["J"]
            print("pendulum %s shooting M = %d on %d ranks %s: T = %.15f (transcription %.15f), %d Newton iterations"
                  % (" ".join(scheme) or "conserving", M, ranks, " ".join(extra), sh and sh["T"], tr and tr["T"],
                     sh and sh["newton_iterations"]))
            check(ok, "pendulum shooting %s M = %d ranks %d" % (scheme, M, ranks))
    # Jacobians with the column and the row of T against finite differences (-snes_test_jacobian)
    for bvp in (["-hs_bvp_type", "transcription"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"]):
        for scheme in ([], ["-hs_scheme", "direct"], ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]):
            p = subprocess.run([HAMSHOOT, "-problem", pf, "-N", "12", "-snes_test_jacobian", "-snes_max_it", "4"] + bvp + scheme,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            r = jacobian_ratios(p.stdout)
            print("-snes_test_jacobian %s %s: %s" % (" ".join(bvp), " ".join(scheme), ["%.1e" % x for x in r]))
            # at most 1e-4: the conserving_1dof scheme's Greenspan quotient switches to its limit near
            # turning points (|dq| <= 1e-6 (1 + |q|)), where the finite difference straddles the switch
            # (seen once: 1.4e-5, in interior costate rows, not in T's row or column, whose entries are
            # O(1): a wrong one gives >= 1e-2)
            check(len(r) >= 3 and max(r) <= 1e-4, "free-T Jacobian %s %s: %s" % (bvp, scheme, r))
    # a terminal target that moves with T (xT: d + v*T, 0): the condition gains -sum_fixed R_i dx_T,i/dT
    # (docs/free-final-time.md); the optimum minimizes J(T) = 6 (d + v T)^2 / T^3 + c T, found here by
    # bisection on dJ/dT; T converges to it at order 2; H^d stays constant (its value is no longer 0)
    with tempfile.TemporaryDirectory() as d:
        mv = os.path.join(d, "moving.ocp")
        open(mv, "w").write(open(di).read().replace("xT: d, 0", "xT: d + v*T, 0").replace("param d: 1", "param d: 1\nparam v: 0.2"))
        dJ = lambda T: 12 * (1 + 0.2 * T) * 0.2 / T ** 3 - 18 * (1 + 0.2 * T) ** 2 / T ** 4 + 1
        lo, hi = 1.0, 5.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if dJ(lo) * dJ(mid) <= 0 else (mid, hi)
        Tm, errs_m = 0.5 * (lo + hi), []
        for N in (20, 40, 80, 160):
            s, out, _ = run(["-problem", mv, "-N", str(N)], ranks=2 if N == 80 else 1)
            check(s and s["converged"] and s["H_spread"] <= 1e-11, "moving target N = %d: %s" % (N, out[-200:]))
            errs_m.append(abs(s["T"] - Tm) if s else float("nan"))
            for M, ranks in ((1, 1), (4, 2), (2, 3)):  # multiple shooting: the same discrete T
                sh, out, _ = run(["-problem", mv, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M)],
                                 ranks=ranks)
                check(sh and s and sh["converged"] and abs(sh["T"] - s["T"]) <= 1e-12,
                      "moving target, shooting M = %d on %d ranks, N = %d: %s" % (M, ranks, N, sh and sh["T"]))
        om = [math.log2(errs_m[i] / errs_m[i + 1]) for i in range(3)]
        print("moving target: T* = %.15f; T - T* = %s; orders %s" % (Tm, ["%.3e" % e for e in errs_m], ["%.3f" % o for o in om]))
        check(all(1.95 < o < 2.05 for o in om), "moving target: order of T %s" % om)
        for bvp in ([], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"]):
            p = subprocess.run([HAMSHOOT, "-problem", mv, "-N", "10", "-snes_test_jacobian", "-snes_max_it", "4"] + bvp,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            r = jacobian_ratios(p.stdout)
            check(len(r) >= 3 and max(r) <= 1e-6, "moving target Jacobian %s: %s" % (bvp, r))
        if not os.environ.get("HS_SANITIZED"):  # IPOPT (the targets as constraints) against Newton on the kkt equations
            ip, out, _ = run(["-problem", mv, "-N", "40", "-hs_bvp_type", "ipopt"], ranks=2)
            nw, _, _ = run(["-problem", mv, "-N", "40", "-hs_costate_scheme", "kkt"])
            print("moving target, IPOPT: T = %.15f, Newton on kkt: %.15f, kkt residual %.1e"
                  % (ip and ip["T"], nw and nw["T"], ip and ip["residual_norm"]))
            check(ip and nw and ip["converged"] and abs(ip["T"] - nw["T"]) <= 1e-10, "moving target with IPOPT: " + out[-300:])
    # kepler (3-D, gonzalez + conserving): with the time penalty c = H^d of the fixed-T (T = pi) solve, the
    # fixed-T discrete solution satisfies every equation of the free-T problem, so the free T is pi again,
    # from the guess 2.5, by transcription and by shooting
    kp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems", "kepler.ocp")
    k0, _, _ = run(["-problem", kp, "-N", "40"])
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "kepler_free.ocp")
        open(f, "w").write(open(kp).read().replace("T: pi", "T: free 2.5") + "running_cost: %r\n" % k0["H_mean"])
        for extra, ranks in (([], 1), (["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], 2)):
            s, out, _ = run(["-problem", f, "-N", "40"] + extra, ranks=ranks)
            ok = s and s["converged"] and abs(s["T"] - math.pi) <= 1e-12 and \
                abs(s["J"] - (k0["J"] + k0["H_mean"] * math.pi)) <= 1e-12 * s["J"]
            print("kepler, c = H^d(T = pi) = %.15g %s: T - pi = %.1e, %d Newton iterations"
                  % (k0["H_mean"], " ".join(extra), s["T"] - math.pi if s else float("nan"), s["newton_iterations"] if s else -1))
            check(ok, "kepler free T %s: %s" % (extra, s and s["T"]))
    # continuation in the time penalty (warm starts carry T) and a restart from a checkpoint (the iterate
    # holds T) reach the free-T solution of a single solve
    single, _, _ = run(["-problem", pf, "-N", "40"])
    cont, _, _ = run(["-problem", pf, "-N", "40", "-hs_continue", "c", "-hs_continue_from", "3", "-hs_continue_steps", "4"])
    check(single and cont and cont["converged"] and abs(cont["T"] - single["T"]) <= 1e-10,
          "continuation in c with a free T: %s" % (cont and cont["T"]))
    with tempfile.TemporaryDirectory() as d:
        ck = os.path.join(d, "ck")
        run(["-problem", pf, "-N", "40", "-hs_checkpoint", ck, "-hs_checkpoint_every", "3", "-snes_max_it", "6"],
            expect_rc=None)
        rs, _, _ = run(["-problem", pf, "-N", "40", "-hs_restart", ck], ranks=2)
        check(rs and rs["converged"] and abs(rs["T"] - single["T"]) <= 1e-10, "restart with a free T: %s" % (rs and rs["T"]))
    # -hs_init from a free-T output: its T too (0 Newton iterations at the same N; the direct scheme, whose
    # solution's residual is below the absolute tolerance)
    with tempfile.TemporaryDirectory() as d:
        s0, _, _ = run(["-problem", pf, "-N", "40", "-hs_scheme", "direct"], outdir=d)
        s1, _, _ = run(["-problem", pf, "-N", "40", "-hs_scheme", "direct", "-hs_init", d], ranks=2)
        check(s0 and s1 and s1["converged"] and s1["newton_iterations"] == 0 and abs(s1["T"] - s0["T"]) <= 1e-13,
              "-hs_init with a free T: %s iterations, T %s" % (s1 and s1["newton_iterations"], s1 and s1["T"]))
    # an optimum beyond T_max: Newton says why it fails; IPOPT stops on the bound and says so
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "tmax.ocp")
        open(f, "w").write(open(di).read() + "T_max: 2.03\n")
        s, out, rc = run(["-problem", f, "-N", "40"], expect_rc=2)
        check(s and not s["converged"] and "outside [T_min, T_max]" in s["diagnosis"], "T beyond T_max: %s" % (s and s["diagnosis"]))
        if not os.environ.get("HS_SANITIZED"):
            s, out, rc = run(["-problem", f, "-N", "40", "-hs_bvp_type", "ipopt"], expect_rc=None)
            check(s and abs(s["T"] - 2.03) <= 1e-6 and "at its bound" in s["diagnosis"], "IPOPT on T_max: %s" % (s and s["diagnosis"]))
    # the d/dh column does not count as sensitivity growth (single shooting, N = 640: as with T fixed)
    sg, _, _ = run(["-problem", di, "-N", "640", "-hs_bvp_type", "shooting"])
    check(sg and sg["converged"] and sg["sensitivity_growth"] < 10, "growth with a free T: %s" % (sg and sg["sensitivity_growth"]))
    if os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded under AddressSanitizer (tools/sanitize.sh)
        return
    # the direct NLP with T as a variable (IPOPT): the same discrete T as Newton on its KKT equations with
    # the condition on T (the condition is the NLP's exact KKT condition), and for the double integrator,
    # whose schemes all coincide, the conserving scheme's T to 1e-8
    for f0, N, scheme in ((di, 40, ["-hs_state_scheme", "greenspan", "-hs_costate_scheme", "kkt"]),
                          (pf, 40, ["-hs_scheme", "direct"]),
                          (pf, 40, ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])):
        ip, out, _ = run(["-problem", f0, "-N", str(N), "-hs_bvp_type", "ipopt"] + scheme, ranks=2)
        nw, _, _ = run(["-problem", f0, "-N", str(N)] + scheme)
        ok = ip and nw and ip["converged"] and abs(ip["T"] - nw["T"]) <= 1e-10 and abs(ip["J"] - nw["J"]) <= 1e-10 * nw["J"]
        print("IPOPT %s %s: T = %.15f (Newton on the KKT equations %.15f), %d iterations, kkt residual %.1e"
              % (os.path.basename(f0), " ".join(scheme), ip and ip["T"], nw and nw["T"], ip and ip["newton_iterations"],
                 ip and ip["residual_norm"]))
        check(ok, "IPOPT free T %s %s: %s" % (f0, scheme, out[-300:]))
        if f0 == di:
            check(ip and abs(ip["T"] - ref[40]["T"]) <= 1e-8, "IPOPT T against the conserving scheme's")
        kkt_T = nw["T"] if nw else float("nan")  # the last case: gonzalez + kkt
    # -hs_compare: each side reports its own T
    with tempfile.TemporaryDirectory() as d:
        c, out, rc = run(["-problem", pf, "-N", "40", "-hs_compare", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme",
                          "conserving"], outdir=d, expect_rc=None)
        a = json.load(open(os.path.join(d, "indirect", "summary.json")))
        b = json.load(open(os.path.join(d, "direct", "summary.json")))
        print("-hs_compare: indirect T = %.12f, direct T = %.12f" % (a["T"], b["T"]))
        check(a["converged"] and b["converged"] and abs(a["T"] - b["T"]) > 1e-5 and abs(b["T"] - kkt_T) <= 1e-10,
              "-hs_compare with a free T: %r %r" % (a["T"], b["T"]))
        alone, _, _ = run(["-problem", pf, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "conserving"])
        dg, _, _ = run(["-problem", pf, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "conserving",
                        "-hs_initial_guess", "direct"])
        check(dg and alone and dg["converged"] and dg["newton_iterations"] <= 5 and abs(dg["T"] - alone["T"]) <= 1e-10,
              "-hs_initial_guess direct with a free T: %r" % ((dg and (dg["newton_iterations"], dg["T"])),))
        check(alone and a["newton_iterations"] == alone["newton_iterations"] and abs(a["T"] - alone["T"]) <= 1e-12,
              "-hs_compare: the indirect side starts from the guess, not from the direct side's T")
    # what is not supported yet says so
    for opts, word in ((["-hs_bvp_type", "shooting", "-hs_shoot_mf"], "-hs_shoot_mf is not supported"),):
        _, out, rc = run(["-problem", di] + opts, expect_rc=1)
        check(rc == 1 and word in out, "free T with %s: %s" % (opts, out[-300:]))


def free_T_bisect(dJ, lo, hi):
    """The root of dJ in [lo, hi] by bisection (dJ(lo) < 0 < dJ(hi))."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dJ(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def t_free_time_data(script=None):
    """A free T on which the data depend (issue 14: T usable everywhere, also when free;
    docs/free-final-time.md): the condition (1/N) sum_k (H^d_k + Q_k) = d phi/dT with
    Q_k = T dH^d_k/dT + [k = 0] N (lambda + h dH^d_0/dx_0).dx0/dT.
    - di_T_data (mass, B, R, running cost and x0 depend on T): T converges at order 2 to the analytic
      minimizer of J(T) = 6 R M^2 D^2/(B^2 T^3) + (c + w T) T, Richardson within 1e-8;
    - the envelope theorem, independent of the formula: for the direct schemes (exact KKT) the
      fixed-T optimum J^d(T) is stationary at the free T^d (Richardson of central differences);
    - IPOPT (T an NLP variable, its derivatives separate code) gets Newton's T on the kkt equations,
      and its multipliers satisfy the T row to round-off;
    - multiple shooting = transcription; conserving H^d constant to round-off; -snes_test_jacobian;
    - the pendulum_T_data continuous T* from scipy (tests/crosscheck/free_T_data.py, independent
      derivation) against the Richardson-extrapolated conserving T."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    di, bq, pe = (os.path.join(data, f + ".ocp") for f in ("di_T_data", "bq2_T_data", "pendulum_T_data"))

    def Jan(T):
        R, M, B, D = 1 + 0.1 * T, 1 + 0.2 * T, 1 + 0.15 * T, 1 + 0.1 * T
        return 6 * R * M ** 2 * D ** 2 / (B ** 2 * T ** 3) + (1 + 0.05 * T) * T
    Ts = free_T_bisect(lambda T: (Jan(T + 1e-5) - Jan(T - 1e-5)) / 2e-5, 1.0, 4.0)
    for scheme in ([], ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]):
        Tn = []
        for N in (20, 40, 80, 160):
            s, out, _ = run(["-problem", di, "-N", str(N)] + scheme)
            ok = s and s["converged"]
            check(ok, "di_T_data N = %d %s: %s" % (N, scheme, out[-300:]))
            if not ok:
                return
            Tn.append(s["T"])
            if not scheme:
                check(s["H_spread"] <= 1e-12 * max(1, abs(s["H_mean"])), "di_T_data: H^d spread %.1e" % s["H_spread"])
        e = [abs(T - Ts) for T in Tn]
        o = [order(e[i], e[i + 1]) for i in range(3)]
        rich = (4 * Tn[3] - Tn[2]) / 3
        print("di_T_data %s: T - T* = %s (T* = %.12f), orders %s, Richardson - T* = %.1e"
              % (scheme or "conserving", ["%.3e" % x for x in e], Ts, ["%.3f" % x for x in o], rich - Ts))
        check(all(1.95 < x < 2.05 for x in o) and abs(rich - Ts) <= 1e-8, "di_T_data: orders %s, Richardson %.1e" % (o, rich - Ts))
    # the envelope theorem for the exact-KKT schemes: d J^d(T)/dT = 0 at the free T^d
    with tempfile.TemporaryDirectory() as d:
        for f0, N, scheme in ((di, 20, ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]),
                              (bq, 20, ["-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"]),
                              (pe, 40, ["-hs_state_scheme", "midpoint", "-hs_costate_scheme", "trapezoidal"])):
            name = os.path.basename(f0)
            free, out, _ = run(["-problem", f0, "-N", str(N)] + scheme)
            if not (free and free["converged"]):
                check(False, "%s: free T did not converge: %s" % (name, out[-300:]))
                continue
            f = os.path.join(d, "fixed.ocp")
            guess = re.search(r"T: free (\S+)", open(f0).read()).group(1)
            open(f, "w").write(open(f0).read().replace("T: free " + guess, "param Tf: %s\nT: Tf" % guess))
            J = {}
            for dl in (2e-3, 1e-3):
                for k in (-1, 1):
                    s, _, _ = run(["-problem", f, "-N", str(N), "-p_Tf", repr(free["T"] + k * dl)] + scheme)
                    J[(dl, k)] = s["J"] if s and s["converged"] else float("nan")
            D = {dl: (J[(dl, 1)] - J[(dl, -1)]) / (2 * dl) for dl in (2e-3, 1e-3)}
            dJ = (4 * D[1e-3] - D[2e-3]) / 3
            s0, _, _ = run(["-problem", f, "-N", str(N), "-p_Tf", repr(free["T"])] + scheme)
            print("%s: free T = %.12f, J = %.12f; fixed-T dJ^d/dT there %.1e (differences %.1e, %.1e); "
                  "mean H^d %.4f (without the terms Q the condition would ask mean H^d = 0)"
                  % (name, free["T"], free["J"], dJ, D[2e-3], D[1e-3], free["H_mean"]))
            check(abs(dJ) <= 1e-7 and abs(s0["J"] - free["J"]) <= 1e-12 * abs(free["J"]),
                  "%s: J^d(T) not stationary at the free T: %.2e" % (name, dJ))
            check(abs(D[1e-3]) < 1e-3 and abs(free["H_mean"]) > 1e-2, "%s: a vacuous check" % name)
    # conserving: H^d constant; multiple shooting = transcription
    for f0 in (bq, pe):
        tr, out, _ = run(["-problem", f0])
        check(tr and tr["converged"] and tr["H_spread"] <= 1e-10 * max(1, abs(tr["H_mean"])),
              "%s conserving: %s" % (f0, tr and (tr["converged"], tr["H_spread"])))
        sh, out, _ = run(["-problem", f0, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
        check(sh and tr and sh["converged"] and abs(sh["T"] - tr["T"]) <= 1e-10 and abs(sh["J"] - tr["J"]) <= 1e-10,
              "%s: shooting T %s vs transcription %s" % (f0, sh and sh["T"], tr and tr["T"]))
        print("%s conserving: T = %.12f, H^d spread %.1e; shooting (4 segments, 2 ranks) T - T = %.1e"
              % (os.path.basename(f0), tr["T"], tr["H_spread"], sh["T"] - tr["T"]))
    # the written trajectory is X's own march, not the last one marched: with T in the data the differences of T's
    # column march T - dT last, and a trust region or a line search at the floor ends on a rejected trial; before
    # the fix these ran to |F| ~ 1e-12 and were refused (H^d varying by 5e-4 across the junctions, exit 2)
    for extra in (["-snes_type", "newtontr"],
                  ["-snes_linesearch_type", "basic", "-snes_atol", "1e-30", "-snes_rtol", "0", "-snes_stol", "0"]):
        sh, out, _ = run(["-problem", pe, "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"] + extra,
                         expect_rc=None)
        check(sh and sh["converged"] and sh["H_spread"] <= 1e-10 * max(1, abs(sh["H_mean"]))
              and abs(sh["T"] - tr["T"]) <= 1e-10,
              "pendulum_T_data shooting %s: %s" % (extra, sh and (sh["converged"], sh["H_spread"], sh["diagnosis"])))
        print("pendulum_T_data shooting %s: %s, H^d spread %.1e, T - T(transcription) = %.1e"
              % (" ".join(extra), sh["solver_status"], sh["H_spread"], sh["T"] - tr["T"]))
    # the analytic Jacobian (T column and Q gradient by differences) against PETSc's
    for scheme, extra, tol in ((["gonzalez", "conserving"], [], 1e-6), (["gonzalez", "kkt"], [], 1e-6),
                               (["midpoint", "trapezoidal"], [], 1e-6),
                               (["gonzalez", "conserving"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], 1e-5)):
        s, out, _ = run(["-problem", bq, "-hs_state_scheme", scheme[0], "-hs_costate_scheme", scheme[1],
                         "-snes_test_jacobian", "-snes_max_it", "4"] + extra, expect_rc=None)
        r = jacobian_ratios(out)
        print("bq2_T_data %s/%s %s: -snes_test_jacobian %s" % (scheme[0], scheme[1], extra, ["%.1e" % x for x in r]))
        check(r and max(r) < tol, "bq2_T_data %s %s: Jacobian mismatch %s" % (scheme, extra, r))
    with tempfile.TemporaryDirectory() as d:
        # R(T) that is not positive definite at the guess: a clear error; at a trial T: a diagnosis naming it
        f = os.path.join(d, "badR.ocp")
        open(f, "w").write(open(pe).read().replace("R: 1 + 0.2*T", "R: 2 - T"))
        s, out, rc = run(["-problem", f], expect_rc=None)
        check(rc == 1 and "not symmetric positive definite" in out, "R(T) not positive definite: rc %s %s" % (rc, out[-200:]))
        open(f, "w").write(open(pe).read().replace("R: 1 + 0.2*T", "R: 3.2 - T"))
        s, out, rc = run(["-problem", f], expect_rc=None)
        check(s and not s["converged"] and "data are invalid" in s["diagnosis"], "R(T) at a trial T: %s" % (s and s["diagnosis"]))
        # more controls than 2n (R_T u has m entries): converges, Jacobian, IPOPT (midpoint states: Gonzalez's
        # fallback branch makes PETSc's differences noisy at far iterates, 5e-5 with or without a free T)
        f = os.path.join(d, "m3.ocp")
        open(f, "w").write(open(pe).read().replace("controls: 1", "controls: 3")
                           .replace("B: 1 + 0.1*T", "B: 1 + 0.1*T, 0.5, 0.2*T")
                           .replace("R: 1 + 0.2*T", "R: 1 + 0.2*T, 0, 0.1, 0, 2, 0, 0.1, 0, 1 + 0.1*T"))
        fixed = os.path.join(d, "m3fixed.ocp")  # the same with T fixed at the guess: PETSc's own difference error
        open(fixed, "w").write(open(f).read().replace("T: free 3", "param Tf: 3\nT: Tf"))
        for extra in ([], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"]):
            r = {}
            for g in (f, fixed):
                s, out, _ = run(["-problem", g, "-hs_state_scheme", "midpoint", "-hs_costate_scheme", "trapezoidal",
                                 "-snes_test_jacobian", "-snes_max_it", "3"] + extra, expect_rc=None)
                r[g] = jacobian_ratios(out)
            print("3 controls %s: -snes_test_jacobian %s (T fixed: %s)"
                  % (extra, ["%.1e" % x for x in r[f]], ["%.1e" % x for x in r[fixed]]))
            check(r[f] and r[fixed] and max(r[f]) < 3 * max(r[fixed]) + 1e-6,
                  "3 controls %s: Jacobian mismatch %s (T fixed: %s)" % (extra, r[f], r[fixed]))
        kk, out, _ = run(["-problem", f, "-hs_state_scheme", "midpoint", "-hs_costate_scheme", "trapezoidal"])
        check(kk and kk["converged"], "3 controls: %s" % out[-300:])
        if kk and not os.environ.get("HS_SANITIZED"):
            ip, out, _ = run(["-problem", f, "-hs_state_scheme", "midpoint", "-hs_bvp_type", "ipopt"])
            check(ip and ip["converged"] and abs(ip["T"] - kk["T"]) <= 1e-10, "3 controls: IPOPT T %s vs %s" % (ip and ip["T"], kk["T"]))
        # a continuation in reach keeps its blended target while T (and so the data) moves
        base, _, _ = run(["-problem", di])
        s, out, _ = run(["-problem", di, "-hs_continue", "reach", "-hs_continue_from", "0.5", "-hs_continue_steps", "2"])
        its = [int(x) for x in re.findall(r"continuation reach = \S+\s+converged after (\d+) Newton", out)]
        print("reach continuation: iterations per stage %s, final T %.15f (alone %.15f)" % (its, s["T"], base["T"]))
        check(s and s["converged"] and abs(s["T"] - base["T"]) <= 1e-12 and len(its) == 2 and min(its) >= 2,
              "reach continuation with T in the data: %s %s" % (its, s and s["T"]))
    if not os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded under AddressSanitizer (tools/sanitize.sh)
        for f0 in (di, bq, pe):
            kk, _, _ = run(["-problem", f0, "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])
            ip, out, _ = run(["-problem", f0, "-hs_state_scheme", "gonzalez", "-hs_bvp_type", "ipopt"], ranks=2)
            ok = kk and ip and kk["converged"] and ip["converged"]
            check(ok, "%s IPOPT: %s" % (f0, out[-300:]))
            if not ok:
                continue
            print("%s: IPOPT T %.15f, Newton kkt T %.15f (difference %.1e), J difference %.1e, kkt residual at IPOPT's "
                  "solution %.1e" % (os.path.basename(f0), ip["T"], kk["T"], ip["T"] - kk["T"], ip["J"] - kk["J"], ip["residual_norm"]))
            check(abs(ip["T"] - kk["T"]) <= 1e-10 and abs(ip["J"] - kk["J"]) <= 1e-10 * abs(kk["J"]) and ip["residual_norm"] <= 1e-10,
                  "%s: IPOPT T %r vs Newton %r, |F| %s" % (f0, ip["T"], kk["T"], ip["residual_norm"]))
    if script:  # the continuous optimum, computed independently with scipy
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        p = subprocess.run([py, script, "--quick"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        check(p.returncode == 0, "free_T_data.py failed: " + p.stdout[-2000:])
        if p.returncode:
            return
        cont = json.loads(p.stdout)
        Tc = cont["pendulum_T_data"]["T"]
        Tn = []
        for N in (160, 320):
            s, out, _ = run(["-problem", pe, "-N", str(N)])
            check(s and s["converged"], "pendulum_T_data N = %d: %s" % (N, out[-300:]))
            Tn.append(s["T"] if s else float("nan"))
        rich = (4 * Tn[1] - Tn[0]) / 3
        print("pendulum_T_data: T(160) = %.12f, T(320) = %.12f, Richardson %.12f, continuous (scipy) %.12f: %.1e"
              % (Tn[0], Tn[1], rich, Tc, rich - Tc))
        check(abs(rich - Tc) <= 2e-7 and abs(Tn[1] - Tc) > 10 * abs(rich - Tc), "pendulum_T_data: Richardson %.1e" % (rich - Tc))
        dic = cont["di_T_data"]["T"]
        check(abs(dic - Ts) <= 1e-9, "di_T_data: scipy T* %.12f vs analytic %.12f" % (dic, Ts))
