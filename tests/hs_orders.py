"""hamshoot system tests (tests/hstest.py), what the mathematics promises (docs/theory.md section
2.3): conservation of H^d to round-off by the conserving schemes, convergence order 2 of the direct
schemes and of kepler's J, H^d and costates, identical answers on 1, 2 and 4 ranks, the analytic
Jacobian against -snes_test_jacobian, Richardson-extrapolated J against independent continuous
solutions (tests/crosscheck/: the pendulum, ncar), -hs_extrapolate's accuracy.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from hs_util import check, run, jacobian_ratios, order


def t_conservation():
    """conserving: H^d spread <= 1e-10 max(1,|H|) for N = 10, 20, 40; E - W constant;
    the constant itself changes with N (so the test is not vacuous)."""
    for prob in ("pendulum", "kepler"):
        means = []
        for N in (10, 20, 40):
            s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_scheme", "conserving"])
            if not s:
                check(False, "%s N=%d: no summary" % (prob, N))
                continue
            check(s["converged"], "%s N=%d converged" % (prob, N))
            rel = s["H_spread"] / max(1.0, abs(s["H_mean"]))
            print("%-9s N=%3d  H_mean %.12f  H_spread/max(1,|H|) %.2e  E-W spread %.2e"
                  % (prob, N, s["H_mean"], rel, s["energy_work_spread"]))
            check(rel <= 1e-10, "%s N=%d: relative H^d spread %.3e > 1e-10" % (prob, N, rel))
            check(s["energy_work_spread"] <= 1e-10, "%s N=%d: E-W spread %.3e" % (prob, N, s["energy_work_spread"]))
            # per-row H in the trajectory agrees with the summary
            hs = [float(r["H"]) for r in s["_rows"][:-1]]
            check(len(hs) == N and max(hs) - min(hs) <= 1e-10 * max(1, abs(s["H_mean"])), "%s: trajectory H column" % prob)
            means.append(s["H_mean"])
        if len(means) == 3:
            check(abs(means[0] - means[1]) > 1e-6 and abs(means[1] - means[2]) > 1e-7,
                  "%s: the conserved H^d value should depend on N: %s" % (prob, means))
    # The n-DOF conserving form conserves too on the pendulum (greenspan and gonzalez states).
    for ss in ("greenspan", "gonzalez"):
        s, _, _ = run(["-problem", "pendulum", "-N", "20", "-hs_state_scheme", ss, "-hs_costate_scheme", "conserving"])
        if s:
            rel = s["H_spread"] / max(1, abs(s["H_mean"]))
            print("pendulum  %s + conserving (n-DOF form): H_spread rel %.2e" % (ss, rel))
            check(s["converged"] and rel <= 1e-10, "pendulum %s+conserving: spread %.3e" % (ss, rel))


def t_direct_order():
    """direct schemes: H^d varies and its spread shrinks at order 2 (+-0.3) as N doubles."""
    cases = [("pendulum", "midpoint", "trapezoidal"), ("kepler", "midpoint", "trapezoidal"),
             ("pendulum", "greenspan", "kkt"), ("kepler", "gonzalez", "kkt")]
    for prob, ss, cs in cases:
        spreads = []
        for N in (20, 40, 80, 160):
            s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs])
            check(s and s["converged"], "%s %s/%s N=%d converged" % (prob, ss, cs, N))
            spreads.append(s["H_spread"] if s else float("nan"))
        orders = [order(spreads[i], spreads[i + 1]) for i in range(3)]
        print("%-9s %-9s + %-11s H^d spread %s  observed orders %s"
              % (prob, ss, cs, " ".join("%.2e" % x for x in spreads), " ".join("%.1f" % o for o in orders)))
        check(spreads[0] > 1e-6, "%s %s/%s: direct H^d spread %.2e should be visible" % (prob, ss, cs, spreads[0]))
        for o in orders:
            check(abs(o - 2) <= 0.3, "%s %s/%s: H^d spread order %.2f not 2 +- 0.3" % (prob, ss, cs, o))


def averaged_costates(rows_c, rows_f, dim):
    """max over coarse intervals and components of |lambda_c - mean of the fine lambdas inside|."""
    Nc, Nf = len(rows_c) - 1, len(rows_f) - 1
    r = Nf // Nc
    err = 0.0
    for k in range(Nc):
        for j in range(1, dim + 1):
            key = "lambda%d" % j
            fine = sum(float(rows_f[k * r + i][key]) for i in range(r)) / r
            err = max(err, abs(float(rows_c[k][key]) - fine))
    return err


def t_kepler_order():
    """kepler, conserving: J, mean H^d and averaged costates converge at order 2 (+-0.2);
    N = 10 * 2^i, i = 0..6, against N = 1280 (thesis Fig. 8.5 protocol). Orders are
    asserted for pairs whose finer grid is at most 1/4 of the reference (N <= 320):
    closer to the reference, its own O(h^2) error biases the observed order upward
    (for N = 640 against 1280 the expected ratio is 5, 'order' 2.3); all are printed."""
    sols = {}
    for N in [10 * 2 ** i for i in range(8)]:
        s, _, _ = run(["-problem", "kepler", "-N", str(N)])
        check(s and s["converged"], "kepler N=%d converged" % N)
        sols[N] = s
    ref = sols[1280]
    Ns = [10 * 2 ** i for i in range(7)]
    errs = {"J": [abs(sols[N]["J"] - ref["J"]) for N in Ns],
            "H_mean": [abs(sols[N]["H_mean"] - ref["H_mean"]) for N in Ns],
            "lambda": [averaged_costates(sols[N]["_rows"], ref["_rows"], 6) for N in Ns]}
    print("    N   err J      err H_mean err lambda   orders (J, H, lambda)")
    for i, N in enumerate(Ns):
        o = ["%.1f" % order(errs[q][i - 1], errs[q][i]) if i else "  -" for q in ("J", "H_mean", "lambda")]
        print("%5d  %.3e  %.3e  %.3e   %s" % (N, errs["J"][i], errs["H_mean"][i], errs["lambda"][i], " ".join(o)))
    for q in errs:
        # least-squares slope of log(err) against log(h) over N = 10..320
        xs = [math.log(1.0 / N) for N in Ns[:6]]
        ys = [math.log(e) for e in errs[q][:6]]
        xm, ym = sum(xs) / 6, sum(ys) / 6
        slope = sum((x - xm) * (y - ym) for x, y in zip(xs, ys)) / sum((x - xm) ** 2 for x in xs)
        print("kepler %-6s least-squares order over N = 10..320: %.1f" % (q, slope))
        check(abs(slope - 2) <= 0.2, "kepler %s: fitted order %.2f not 2 +- 0.2" % (q, slope))
        # each pair from N = 20 on (N = 10, h = 0.31, is pre-asymptotic for the costates: 1.8)
        for i in range(2, 6):  # pairs (20,40) ... (160,320)
            o = order(errs[q][i - 1], errs[q][i])
            check(abs(o - 2) <= 0.2, "kepler %s: order %.2f between N=%d and %d not 2 +- 0.2" % (q, o, Ns[i - 1], Ns[i]))
    # the direct pair (midpoint + trapezoidal) converges at order 2 as well (docs/theory.md 2.3, item 3)
    dsol = {N: run(["-problem", "kepler", "-N", str(N), "-hs_scheme", "direct"])[0] for N in (20, 40, 80, 160, 1280)}
    for q in ("J", "H_mean"):
        e = [abs(dsol[N][q] - dsol[1280][q]) for N in (20, 40, 80, 160)]
        o = [order(e[i], e[i + 1]) for i in range(3)]
        print("kepler direct %-6s errors %s, orders %s" % (q, " ".join("%.2e" % x for x in e), " ".join("%.1f" % x for x in o)))
        for x in o:
            check(abs(x - 2) <= 0.2, "kepler direct %s: order %.2f" % (q, x))


def t_ranks():
    """identical summaries (1e-12 relative) and trajectories on 1, 2 and 4 ranks."""
    for prob, N in (("pendulum", 20), ("kepler", 20), ("kepler", 41)):
        base = None
        for P in (1, 2, 4):
            s, _, _ = run(["-problem", prob, "-N", str(N)], ranks=P)
            if not s:
                check(False, "%s on %d ranks: no summary" % (prob, P))
                continue
            check(s["ranks"] == P, "summary ranks field %s != %d" % (s["ranks"], P))
            if base is None:
                base = s
                continue
            for key in ("J", "H_mean", "H_min", "H_max"):
                rel = abs(s[key] - base[key]) / max(1e-300, abs(base[key]))
                check(rel <= 1e-12, "%s %s on %d ranks differs by %.2e relative" % (prob, key, P, rel))
            for key in ("converged", "newton_iterations", "N", "state_scheme", "costate_scheme", "problem"):
                check(s[key] == base[key], "%s %s on %d ranks: %s vs %s" % (prob, key, P, s[key], base[key]))
            for key in ("H_spread", "energy_work_spread", "residual_norm"):
                check(s[key] <= 1e-10, "%s %s on %d ranks: %.2e" % (prob, key, P, s[key]))
            d = max(abs(float(a[c]) - float(b[c])) for a, b in zip(s["_rows"][:-1], base["_rows"][:-1]) for c in a)
            print("%-9s N=%d ranks=%d: max |trajectory difference| vs 1 rank %.2e" % (prob, N, P, d))
            check(d <= 1e-11, "%s trajectory on %d ranks differs by %.2e" % (prob, P, d))


def t_jacobian():
    """assembled analytic Jacobian against PETSc's -snes_test_jacobian at every Newton iterate."""
    cases = [("pendulum", "greenspan", "conserving_1dof"), ("pendulum", "gonzalez", "conserving"),
             ("pendulum", "midpoint", "trapezoidal"), ("pendulum", "greenspan", "kkt"),
             ("kepler", "gonzalez", "conserving"), ("kepler", "gonzalez", "kkt"), ("kepler", "midpoint", "kkt")]
    shoot = [[], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"],
             ["-hs_bvp_type", "shooting", "-hs_shoot_knots", "1,2,6"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "8"]]
    for ranks in (1, 2):
        for (prob, ss, cs), extra in [(c, []) for c in cases] + [(c, e) for c in cases[:1] + cases[4:5] for e in shoot[1:]]:
            # kepler: N = 20, where the naive march succeeds for these splits (see shooting_equivalence)
            N = "20" if prob == "kepler" and extra else "8"
            if N == "20" and "1,2,6" in extra:
                extra = ["-hs_bvp_type", "shooting", "-hs_shoot_knots", "2,7,12,16"]
            if N == "20" and extra[-1] == "3":
                extra = ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "5"]
            _, out, _ = run(["-problem", prob, "-N", N, "-hs_state_scheme", ss, "-hs_costate_scheme", cs,
                             "-snes_test_jacobian"] + extra, ranks=ranks, expect_rc=None)
            ratios = jacobian_ratios(out)
            print("%-9s %-9s + %-15s %-40s ranks=%d: %d Jacobians tested, max ||J-Jfd||/||J|| = %.1e"
                  % (prob, ss, cs, " ".join(extra[:4]), ranks, len(ratios), max(ratios) if ratios else float("nan")))
            check(len(ratios) >= 2, "%s %s/%s: -snes_test_jacobian reported nothing" % (prob, ss, cs))
            # shooting Jacobians pass through the march's sensitivities, which amplify the finite
            # difference's own O(sqrt(eps)) error: allow 1e-5 there (a wrong block gives >= 1e-3)
            check(ratios and max(ratios) < (1e-5 if extra else 1e-6), "%s %s/%s %s: Jacobian mismatch %s" % (prob, ss, cs, extra, ratios))


def t_crosscheck(script):
    """Richardson-extrapolated J and H^d (N = 640, 1280) against an independent scipy
    solve_bvp solution of the continuous necessary conditions (tests/crosscheck/).
    The extrapolation removes the O(h^2) term; what remains is O(h^4), measured
    here at <= 1e-8 relative for the pendulum (whose h^2 coefficient is large)."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    p = subprocess.run([py, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    check(p.returncode == 0, "crosscheck script failed: " + p.stdout[-2000:])
    if p.returncode:
        return
    cont = json.loads(p.stdout)
    for prob in ("pendulum", "kepler"):
        c = cont[prob]
        check(c["status"] == 0, "%s: scipy solve_bvp status %s" % (prob, c["status"]))
        for scheme in ("conserving", "direct"):
            s1, _, _ = run(["-problem", prob, "-N", "640", "-hs_scheme", scheme])
            s2, _, _ = run(["-problem", prob, "-N", "1280", "-hs_scheme", scheme])
            for key, ckey in (("J", "J"), ("H_mean", "H")):
                ext = (4 * s2[key] - s1[key]) / 3
                rel = abs(ext - c[ckey]) / abs(c[ckey])
                raw = abs(s2[key] - c[ckey]) / abs(c[ckey])
                print("%-9s %-10s %-6s N=1280 %.10f extrapolated %.10f continuous %.10f  rel diff %.1e (raw %.1e)"
                      % (prob, scheme, key, s2[key], ext, c[ckey], rel, raw))
                check(rel < 5e-8, "%s %s %s: extrapolated %.10g vs continuous %.10g" % (prob, scheme, key, ext, c[ckey]))


def t_crosscheck_ncar(script):
    """ncar (2 and 3 cars, beta = 1e-5, gamma = 1, T = 4) against an independent continuous
    solution (tests/crosscheck/ncar_continuous.py: scipy solve_bvp on the Pontryagin
    conditions, and the Riccati value function of this linear-quadratic problem, which
    agree with each other to <= 1e-7). Richardson extrapolation of the discrete J at
    N = 800, 1600 (both schemes, order 2) must match the continuous J to 1e-7 relative
    (measured ~3e-9 for 2 cars)."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    for cars in ("2", "3"):
        p = subprocess.run([py, script, "--cars", cars], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
        check(p.returncode == 0, "ncar crosscheck script (%s cars) failed: %s" % (cars, p.stdout[-2000:]))
        if p.returncode:
            continue
        Jc = json.loads(p.stdout)["J_riccati"]
        for scheme in ("conserving", "direct"):
            s1, _, _ = run(["-problem", "ncar", "-p_cars", cars, "-N", "800", "-hs_scheme", scheme])
            s2, _, _ = run(["-problem", "ncar", "-p_cars", cars, "-N", "1600", "-hs_scheme", scheme])
            if not (s1 and s2):
                check(False, "ncar %s cars %s: no summary" % (cars, scheme))
                continue
            ext = (4 * s2["J"] - s1["J"]) / 3
            rel, raw = abs(ext - Jc) / abs(Jc), abs(s2["J"] - Jc) / abs(Jc)
            print("ncar %s cars %-10s N=1600 J %.12f extrapolated %.12f continuous %.12f  rel diff %.1e (raw %.1e)"
                  % (cars, scheme, s2["J"], ext, Jc, rel, raw))
            check(rel < 1e-7, "ncar %s cars %s: extrapolated J %.12g vs continuous %.12g" % (cars, scheme, ext, Jc))


def t_accuracy():
    """Issue 12, accuracy: -hs_extrapolate at N = 1280 (grids 320, 640, 1280) gives J^d of the pendulum
    and kepler within 1e-8 of the known continuous values (docs/theory.md; the pendulum's is checked
    independently by crosscheck_continuous), with an error estimate that covers the true error (within
    a factor 3) and observed orders 2 +- 0.05; a free T too (double integrator, analytic T* = 2.2276,
    tests/data/di_T_data.ocp). -hs_study 4 from N = 80 writes study.json with orders 2 +- 0.1 for J,
    H^d, states, controls and costates, and a PNG. Bad N and bad levels are refused."""
    known = {"pendulum": 6.43694443886, "kepler": 0.734302799278}
    for prob, Jc in known.items():
        s, out, _ = run(["-problem", prob, "-N", "1280", "-hs_extrapolate"], ranks=2)
        e = s and s.get("extrapolation")
        ok = bool(e)
        check(ok, "%s -hs_extrapolate: no extrapolation in summary.json: %s" % (prob, out[-400:]))
        if not ok:
            continue
        err = e["J"] - Jc
        print("%s: J^d(1280) - J* = %.2e, extrapolated - J* = %.2e (estimate %.1e), order %.3f, states +- %.1e"
              % (prob, s["J"] - Jc, err, e["J_error"], e["J_order"], e["states_error"]))
        check(abs(err) <= 1e-8 and abs(err) <= 3 * e["J_error"] + 1e-11 and abs(e["J_order"] - 2) <= 0.05
              and abs(s["J"] - Jc) > 100 * abs(err), "%s: extrapolated J %r (J* %r), estimate %r, order %r"
              % (prob, e["J"], Jc, e["J_error"], e["J_order"]))
        check(e["grids"] == [320, 640, 1280] and "extrapolated J" in out, "%s: grids %s" % (prob, e["grids"]))
    di = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "di_T_data.ocp")
    s, out, _ = run(["-problem", di, "-N", "320", "-hs_extrapolate"])
    e = s and s.get("extrapolation")
    Ts = 2.227554616726
    check(e and abs(e["T"] - Ts) <= 1e-8 and abs(e["T"] - Ts) <= 3 * e["T_error"] + 1e-11,
          "di_T_data extrapolated T: %s" % str(e and (e["T"], e["T_error"], s["T"])))
    if e:
        print("di_T_data: T(320) - T* = %.2e, extrapolated - T* = %.2e (estimate %.1e)" % (s["T"] - Ts, e["T"] - Ts, e["T_error"]))
    with tempfile.TemporaryDirectory() as d:
        s, out, _ = run(["-problem", "pendulum", "-N", "80", "-hs_study", "4"], ranks=2, outdir=d)
        st = json.load(open(os.path.join(d, "study.json"))) if os.path.exists(os.path.join(d, "study.json")) else None
        check(st is not None and "convergence study" in out, "-hs_study: no study.json: " + out[-400:])
        if st:
            lv = st["levels"]
            print("study: N = %s, orders at N = %d: %s" % ([l["N"] for l in lv], lv[2]["N"],
                  {k: round(lv[2][k], 3) for k in lv[2] if k.startswith("order")}))
            check([l["N"] for l in lv] == [80, 160, 320, 640] and
                  all(abs(lv[i][k] - 2) <= 0.1 for i in (1, 2) for k in ("order_J", "order_H", "order_x", "order_u", "order_lambda")
                      if k in lv[i]) and all(k in lv[2] for k in ("order_x", "order_u", "order_lambda")),
                  "study orders: %s" % lv)
            png = os.path.join(d, "study.png")
            check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "study.png missing or not a PNG")
    for args, word in ((["-N", "30", "-hs_extrapolate"], "multiple of 4"), (["-hs_study", "2"], "hs_study"),
                       (["-hs_compare", "-hs_extrapolate"], "cannot be combined")):
        _, out, _ = run(["-problem", "pendulum"] + args, expect_rc=1)
        check("hamshoot: error:" in out and word in out, "%s: %s" % (args, out[-300:]))
