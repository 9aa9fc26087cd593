"""hamshoot system tests (tests/hstest.py), problem files and initial guesses: the .ocp format's
errors (file:line:column), derived parameters and T in expressions, a configuration-dependent B(q)
(docs/configuration-dependent-forces.md), -hs_init from a written trajectory.
"""
import csv
import os
import tempfile

from hs_util import PENDULUM_OCP, check, jacobian_ratios, order, run


def t_ocp_errors():
    """problem files: each defect gives exit 1 and a message 'file:line:column: ...' naming it;
    a good file solves like the built-in problem; -p_NAME works for file parameters."""
    good = PENDULUM_OCP % "pend"
    # (replace, by, where: ":line:column:" of the offending character, a word of the message)
    cases = [("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(qq)", ":8:23:", "unknown symbol 'qq'"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q", ":8:24:", "expected ',' or ')'"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sinn(q)", ":8:19:", "unknown function 'sinn'"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin q", ":8:23:", "expected '(' after the function"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q) 2", ":8:26:", "expected an operator"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*atan2(q)", ":8:19:", "takes 2 arguments"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)*t", ":8:26:", "only in running_cost"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)*p_q", ":8:26:", "momenta are not allowed"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)\npotential: 0", ":9:1:", "given twice"),
             ("potential: -m*g*l*sin(q)", "potential: 1/q", ":8:12:", "not finite at the initial state"),
             ("mass: m*l^2", "mass: m*l^2, 1", ":7:7:", "n*n = 1"),
             ("mass: m*l^2", "mass: -1", ":7:7:", "not positive definite"),
             ("mass: m*l^2", "kinetic_energy: 0.5*m*l^2*q_dot^3", ":7:17:", "not quadratic in the velocities"),
             ("mass: m*l^2", "kinetic_energy: 0.5*m*l^2*q_dot^2 + q_dot", ":7:17:", "degree 0 or 1"),
             ("mass: m*l^2", "kinetic_energy: -0.5*q_dot^2", ":7:17:", "not positive definite"),
             ("mass: m*l^2", "mass: m*l^2\nkinetic_energy: 0.5*q_dot^2", ":8:1:", "not both"),
             ("potential: -m*g*l*sin(q)", "potential: -m*g*l*sin(q)*q_dot", ":8:26:", "only in kinetic_energy"),
             ("param l: 1", "param l: 1\nparam m: 2", ":4:7:", "already used"),
             ("param l: 1", "param l: 1\nparam L: 2", ":4:7:", "differs from the parameter 'l' only in case"),
             ("param l: 1", "param pi: 1", ":3:7:", "reserved"),
             ("param l: 1", "param l: 1 +", ":3:13:", "param l: cannot parse"),
             ("x0: 0, 0", "x0: 0", ":13:5:", "expected 2 entries"),
             ("R: 1", "R: q", ":10:4:", "depends on the coordinate"),
             ("controls: 1", "controls: one", ":6:11:", "controls"),
             ("T: 3", "T: -3", ":11:4:", "positive"),
             ("N: 20", "N: 1", ":12:4:", "N:"),
             ("R: 1", "R: 1\nspeed: 3", ":11:1:", "unknown key 'speed'"),
             ("R: 1", "R 1", ":10:1:", "expected 'key: value'"),
             ("xT: pi/2, 0", "xT: pi/2, 0\nterminal_cost: q^2 + r", ":15:22:", "unknown symbol 'r'"),
             ("param l: 1", "param l: T", ":3:10:", "final time T is not allowed"),
             ("T: 3", "T: 3*T", ":11:6:", "final time T is not allowed"),
             ("T: 3", "T: free", ":11:4:", "needs an initial guess"),
             ("T: 3", "T: 3\nT_max: 4", ":12:1:", "only for a free final time"),
             ("T: 3", "T: free 3\nrunning_cost: t", ":12:15:", "needs an autonomous problem"),
             ("T: 3", "T: free 2\nT_min: 3", ":12:1:", "guess 2 is not in [T_min, T_max] = [3, inf]"),
             ("T: 3", "T: free 3\nu_max: 2*T", ":12:8:", "control bounds are bounds of the direct NLP"),
             ("T: 3", "T: free 2\nT_min: 1\nT_max: 1", ":12:1:", "[T_min, T_max] = [1, 1] is empty")]
    # two degrees of freedom: an asymmetric mass matrix
    two = good.replace("coordinates: q", "coordinates: q, r").replace("mass: m*l^2", "mass: 1, 0.5, 0.4, 1") \
        .replace("B: 1", "B: 1, 0").replace("x0: 0, 0", "x0: 0, 0, 0, 0").replace("xT: pi/2, 0", "xT: pi/2, 0, 0, 0")
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "good.ocp")
        open(f, "w").write(good)
        s, _, _ = run(["-problem", f])
        c, _, _ = run(["-problem", "pendulum"])
        check(s and c and abs(s["J"] - c["J"]) < 1e-10 * c["J"], "file pendulum differs from the built-in one")
        fk = os.path.join(d, "kinetic.ocp")
        open(fk, "w").write(good.replace("mass: m*l^2", "kinetic_energy: 0.5*m*(l*q_dot)^2"))
        sk, _, _ = run(["-problem", fk])
        check(sk and c and abs(sk["J"] - c["J"]) < 1e-10 * c["J"] and sk["state_scheme"] == "greenspan",
              "file pendulum from its kinetic energy differs from the built-in one")
        s2, _, _ = run(["-problem", f, "-p_g", "1.62"])
        c2, _, _ = run(["-problem", "pendulum", "-p_g", "1.62"])
        check(s2 and c2 and abs(s2["J"] - c2["J"]) < 1e-10 * c2["J"] and abs(s2["J"] - s["J"]) > 1, "-p_g on a file problem")
        for old, new, where, word in cases:
            bad = os.path.join(d, "bad.ocp")
            open(bad, "w").write(good.replace(old, new))
            _, out, rc = run(["-problem", bad], expect_rc=1)
            ok = ("bad.ocp" + where) in out and word in out
            print("%-42s -> %s" % (new.replace("\n", " | "), out.strip().splitlines()[-1] if out.strip() else ""))
            check(ok, "%r: message lacks %r / %r: %s" % (new, where, word, out[-300:]))
        bad = os.path.join(d, "bad.ocp")
        open(bad, "w").write(two)
        _, out, rc = run(["-problem", bad], expect_rc=1)
        print("%-42s -> %s" % ("mass: 1, 0.5, 0.4, 1", out.strip().splitlines()[-1] if out.strip() else ""))
        check(":7:7:" in out and "not symmetric" in out, "asymmetric mass: " + out[-300:])
        _, out, _ = run(["-problem", os.path.join(d, "missing.ocp")], expect_rc=1)
        check("cannot open" in out, "missing file: " + out[-200:])


def t_problem_format():
    """Problem files (issue 14): derived parameters follow -p_NAME (against the same file with the
    values written out), a derived parameter set explicitly keeps its value, T in expressions."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    f0 = os.path.join(data, "pendulum_derived.ocp")
    text = open(f0).read()
    base, _, _ = run(["-problem", f0])
    builtin, _, _ = run(["-problem", "pendulum"])
    check(base and builtin and abs(base["J"] - builtin["J"]) <= 1e-10 * builtin["J"],
          "derived-parameter pendulum (T in xT) differs from the built-in one")
    with tempfile.TemporaryDirectory() as d:
        def written(repl):
            f = os.path.join(d, "w.ocp")
            t = text
            for a, b in repl:
                check(a in t, "test file lacks %r" % a)
                t = t.replace(a, b)
            open(f, "w").write(t)
            s, out, _ = run(["-problem", f])
            return s
        for opts, repl in ((["-p_m", "2"], [("param m: 1", "param m: 2"), ("param I: m*l^2", "param I: 2"),
                                             ("param mgl: m*g*l", "param mgl: 2*9.81")]),
                           (["-p_l", "0.5", "-p_g", "3"], [("param I: m*l^2", "param I: 0.25"),
                                                          ("param mgl: m*g*l", "param mgl: 1.5"), ("param l: 1", "param l: 0.5")]),
                           (["-p_m", "2", "-p_I", "1"], [("param I: m*l^2", "param I: 1"), ("param mgl: m*g*l", "param mgl: 19.62")]),
                           (["-p_I", "1", "-p_m", "2"], [("param I: m*l^2", "param I: 1"), ("param mgl: m*g*l", "param mgl: 19.62")])):
            s, out, _ = run(["-problem", f0] + opts)
            w = written(repl)
            print("%-24s J = %.15g, written out: %.15g" % (" ".join(opts), s and s["J"], w and w["J"]))
            check(s and w and abs(s["J"] - w["J"]) <= 1e-12 * abs(w["J"]) and abs(s["J"] - base["J"]) > 1e-3,
                  "%s: J %s, the file with the values written out %s" % (opts, s and s["J"], w and w["J"]))
        # outputs: trajectory.csv (nodes) and intervals.csv (midpoints) with the file's coordinate names;
        # summary.json with every parameter and the command line
        o = os.path.join(d, "out")
        di = os.path.join(data, "..", "..", "problems", "double_integrator_free_T.ocp")
        s, _, _ = run(["-problem", di, "-N", "8", "-p_c", "2"], outdir=o)
        tr = list(csv.DictReader(open(os.path.join(o, "trajectory.csv"))))
        iv = list(csv.DictReader(open(os.path.join(o, "intervals.csv"))))
        print("trajectory.csv:", list(tr[0].keys()), " intervals.csv:", list(iv[0].keys()))
        check(list(tr[0].keys()) == ["t", "q_y", "p_y", "E_minus_W"] and len(tr) == 9, "trajectory.csv columns/rows")
        check(list(iv[0].keys()) == ["k", "t_mid", "u1", "lambda_q_y", "lambda_p_y", "H"] and len(iv) == 8,
              "intervals.csv columns/rows")
        h = s["T"] / 8
        check(all(abs(float(r["t_mid"]) - (k + 0.5) * h) <= 1e-14 and abs(float(tr[k]["t"]) - k * h) <= 1e-14
                  for k, r in enumerate(iv)) and abs(float(tr[8]["t"]) - s["T"]) <= 1e-14, "t_mid not the midpoints")
        u_exact = [float(r["lambda_p_y"]) for r in iv]  # u = R^{-1} B^T lambda^p, R = B = 1
        check(all(abs(float(r["u1"]) - u) <= 1e-15 for r, u in zip(iv, u_exact)), "u1 is not R^-1 B^T lambda_p")
        check(s["parameters"] == {"d": 1, "c": 2} and s["command_line"][1:] == ["-problem", di, "-N", "8", "-p_c", "2",
                                                                                 "-quiet", "-o", o] and s["free_T"],
              "summary parameters/command line: %s %s" % (s["parameters"], s["command_line"]))
        # a B that depends on q (a horizontal force at the tip) is solved with H^d conserved (test configuration_forces)
        bq = os.path.join(d, "bq.ocp")
        open(bq, "w").write(text.replace("B: 1", "B: l*cos(q/2)"))
        sb, _, _ = run(["-problem", bq, "-N", "20"])
        check(sb["converged"] and sb["H_spread"] <= 1e-10 and sb["state_scheme"] == "greenspan", "B(q) = l cos(q/2): %s" % sb)
        # a derived value outside its range is refused with the reason
        _, out, rc = run(["-problem", f0, "-p_l", "1e-200", "-p_m", "1e-200"], expect_rc=1)
        check(rc == 1 and "derived parameter I" in out, "derived out of range: " + out[-300:])


def t_configuration_forces():
    """A configuration-dependent B(q) (docs/configuration-dependent-forces.md, costate/gain.c).

    Independent check: the pendulum written in the coordinate s with q = s + c s^2
    (tests/data/pendulum_bq.ocp: mass m l^2 (1 + 2cs)^2, B(s) = 1 + 2cs) is the same continuous
    problem as the pendulum, so its J^d must converge at order 2 to the pendulum's J* = 6.43694443886
    (docs/theory.md section 4.1, crosscheck test) although every grid's J^d differs from the pendulum's.
    The conserving scheme keeps H^d constant to round-off only with its extra costate term kappa
    (without it the spread is O(1) here), the direct schemes' spread is O(h^2). A coupled 2-DOF
    problem (tests/data/bq2.ocp: matrix B(q), running and terminal costs, free terminal momenta):
    analytic Jacobians against -snes_test_jacobian, shooting = transcription, IPOPT (x-dependent
    constraint Jacobian, mixed x-u Hessian) = Newton on the same kkt equations; a free final time."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    pbq, bq2 = os.path.join(data, "pendulum_bq.ocp"), os.path.join(data, "bq2.ocp")
    jstar = 6.43694443886
    Ns, Js = (40, 80, 160, 320, 640), []
    for N in Ns:
        s, _, _ = run(["-problem", pbq, "-N", str(N)])
        rel = s["H_spread"] / max(1.0, abs(s["H_mean"]))
        print("pendulum_bq N=%3d  J^d %.12f  J^d - J* %.3e  H^d spread rel %.2e  E-W spread %.2e"
              % (N, s["J"], s["J"] - jstar, rel, s["energy_work_spread"]))
        check(s["converged"] and s["state_scheme"] == "gonzalez" and s["costate_scheme"] == "conserving",
              "pendulum_bq N=%d: %s %s/%s" % (N, s["converged"], s["state_scheme"], s["costate_scheme"]))
        check(rel <= 1e-10, "pendulum_bq N=%d: H^d spread %.2e is not round-off" % (N, rel))
        check(s["energy_work_spread"] <= 1e-12, "pendulum_bq N=%d: E - W spread %.2e" % (N, s["energy_work_spread"]))
        Js.append(s["J"])
    errs = [abs(J - jstar) for J in Js]
    ords = [order(errs[i], errs[i + 1]) for i in range(len(errs) - 1)]
    rich = (4 * Js[-1] - Js[-2]) / 3
    print("pendulum_bq: observed orders of J^d -> J*: %s; Richardson (N = 320, 640) - J* = %.2e"
          % (" ".join("%.3f" % o for o in ords), rich - jstar))
    check(all(1.9 <= o <= 2.1 for o in ords), "pendulum_bq: orders %s" % ords)
    check(abs(rich - jstar) <= 2e-7, "pendulum_bq: Richardson J %.12f vs J* %.12f" % (rich, jstar))
    sp, _, _ = run(["-problem", "pendulum", "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "conserving"])
    print("same N = 40 in the coordinate q: J^d %.12f (differs from pendulum_bq's by %.2e)" % (sp["J"], sp["J"] - Js[0]))
    check(abs(sp["J"] - Js[0]) > 1e-3, "pendulum_bq: J^d equals the pendulum's on the same grid: the test is vacuous")
    for ss, cs in (("gonzalez", "kkt"), ("midpoint", "trapezoidal")):
        sp = [run(["-problem", pbq, "-N", str(N), "-hs_state_scheme", ss, "-hs_costate_scheme", cs])[0]["H_spread"]
              for N in (80, 160)]
        print("pendulum_bq %s + %s: H^d spread %.3e, %.3e (ratio %.2f)" % (ss, cs, sp[0], sp[1], sp[0] / sp[1]))
        check(sp[1] > 1e-4 and 3 <= sp[0] / sp[1] <= 5.5, "pendulum_bq %s/%s: spread not O(h^2): %s" % (ss, cs, sp))
    # the coupled 2-DOF problem: every scheme's Jacobian, in transcription and in shooting
    for ss, cs, extra in (("gonzalez", "conserving", []), ("gonzalez", "kkt", []), ("midpoint", "trapezoidal", []),
                          ("gonzalez", "conserving", ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "3"])):
        _, out, _ = run(["-problem", bq2, "-N", "8", "-hs_state_scheme", ss, "-hs_costate_scheme", cs,
                         "-snes_test_jacobian"] + extra, expect_rc=None)
        ratios = jacobian_ratios(out)
        print("bq2 %s + %s %s: %d Jacobians, max ||J-Jfd||/||J|| = %.1e"
              % (ss, cs, " ".join(extra), len(ratios), max(ratios) if ratios else float("nan")))
        check(len(ratios) >= 2 and max(ratios) < (1e-5 if extra else 1e-6), "bq2 %s/%s %s: %s" % (ss, cs, extra, ratios))
    base, _, _ = run(["-problem", bq2, "-N", "40"])
    rel = base["H_spread"] / max(1.0, abs(base["H_mean"]))
    check(base["converged"] and rel <= 1e-12 and base["energy_work_spread"] <= 1e-12,
          "bq2: H^d spread %.2e, E - W spread %.2e" % (rel, base["energy_work_spread"]))
    sh, _, _ = run(["-problem", bq2, "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
    dx = max(abs(float(a[c]) - float(b[c])) for a, b in zip(sh["_rows"][:-1], base["_rows"][:-1]) for c in a if a[c])
    print("bq2 N=40: J^d %.15f, H^d spread %.1e; shooting (4 segments, 2 ranks) J^d - J^d = %.1e, max |row difference| %.1e"
          % (base["J"], base["H_spread"], sh["J"] - base["J"], dx))
    check(sh["converged"] and abs(sh["J"] - base["J"]) <= 1e-12 and dx <= 1e-10, "bq2: shooting differs: %.2e" % dx)
    # from rest (x0 = 0) the march's first steps have |x_{k+1} - x_k| just above -hs_dg_tol, where Gonzalez's
    # divided difference loses ~1e-10 to cancellation: the local Newton stops at that noise floor
    # (costate/march.c) instead of failing the step, and shooting still equals the transcription
    with tempfile.TemporaryDirectory() as d:
        rest = os.path.join(d, "bq2_rest.ocp")
        open(rest, "w").write(open(bq2).read().replace("x0: 0.1, -0.1, 0, 0", "x0: 0, 0, 0, 0"))
        tr, _, _ = run(["-problem", rest, "-N", "40"])
        sh, _, _ = run(["-problem", rest, "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"])
        print("bq2 from rest, N=40: transcription J^d %.15f, shooting (4 segments) %.15f" % (tr["J"], sh["J"]))
        check(sh["converged"] and abs(sh["J"] - tr["J"]) <= 1e-12, "bq2 from rest: shooting %s" % sh["diagnosis"])
    if not os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded under AddressSanitizer (tools/sanitize.sh)
        kk, _, _ = run(["-problem", bq2, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])
        ip, _, _ = run(["-problem", bq2, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt",
                        "-hs_bvp_type", "ipopt"])
        print("bq2 N=40 gonzalez + kkt: Newton J^d %.15f, IPOPT J^d %.15f (%d iterations), kkt residual at IPOPT's "
              "solution %.1e" % (kk["J"], ip["J"], ip["newton_iterations"], ip["residual_norm"]))
        check(ip["converged"] and abs(ip["J"] - kk["J"]) <= 1e-12 and ip["residual_norm"] <= 1e-10,
              "bq2: IPOPT %s vs Newton %s (residual %.2e)" % (ip["J"], kk["J"], ip["residual_norm"]))
        check(ip["newton_iterations"] <= 8, "bq2: IPOPT needed %d iterations (exact Hessian: few)" % ip["newton_iterations"])
    # a free final time with B(q): H^d = d phi/dT = 1 on every interval; the same T from shooting and, with kkt,
    # from IPOPT; Richardson T equals the pendulum's (the free-T pendulum file, in q) to the O(h^4) left
    with tempfile.TemporaryDirectory() as d:
        ft = os.path.join(d, "pendulum_bq_free_T.ocp")
        open(ft, "w").write(open(pbq).read().replace("T: 3", "T: free 3") + "terminal_cost: T\n")
        Ts, Tq = [], []
        for N in (80, 160):
            s, _, _ = run(["-problem", ft, "-N", str(N)])
            check(s["converged"] and s["free_T"] and abs(s["H_mean"] - 1) <= 1e-12 and s["H_spread"] <= 1e-11,
                  "pendulum_bq free T N=%d: H^d mean %.15f spread %.2e" % (N, s["H_mean"], s["H_spread"]))
            Ts.append(s["T"])
            Tq.append(run(["-problem", os.path.join(data, "pendulum_free_T.ocp"), "-N", str(N), "-hs_state_scheme",
                           "gonzalez", "-hs_costate_scheme", "conserving"])[0]["T"])
        rs, rq = (4 * Ts[1] - Ts[0]) / 3, (4 * Tq[1] - Tq[0]) / 3
        print("free T: in s %.10f %.10f, in q %.10f %.10f; Richardson %.10f vs %.10f (difference %.1e)"
              % (Ts[0], Ts[1], Tq[0], Tq[1], rs, rq, rs - rq))
        check(abs(rs - rq) <= 5e-6 and abs(Ts[1] - Tq[1]) > 1e-5, "free T: Richardson %.10f vs %.10f" % (rs, rq))
        sh, _, _ = run(["-problem", ft, "-N", "80", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], ranks=2)
        check(sh["converged"] and abs(sh["T"] - Ts[0]) <= 1e-12, "free T: shooting T %.15f vs %.15f" % (sh["T"], Ts[0]))
        print("free T: shooting T - T = %.1e" % (sh["T"] - Ts[0]))
        if not os.environ.get("HS_SANITIZED"):
            kk, _, _ = run(["-problem", ft, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt"])
            ip, _, _ = run(["-problem", ft, "-N", "40", "-hs_state_scheme", "gonzalez", "-hs_costate_scheme", "kkt",
                            "-hs_bvp_type", "ipopt"])
            print("free T: kkt Newton T %.15f, IPOPT T %.15f" % (kk["T"], ip["T"]))
            check(ip["converged"] and abs(ip["T"] - kk["T"]) <= 1e-10, "free T: IPOPT T %s vs Newton %s" % (ip["T"], kk["T"]))


def t_init():
    """-hs_init FILE: a trajectory.csv written by -o is the initial guess (pendulum, kepler):
    the same N and formulation restart at the solution (0 Newton iterations), another N is
    interpolated (grid sequencing: a few iterations, J of that N), shooting takes its segment
    starts from it, 2 ranks; a guess for another problem, a malformed or missing file are errors."""
    with tempfile.TemporaryDirectory() as d:
        a = os.path.join(d, "a")
        s0, _, _ = run(["-problem", "pendulum"], outdir=a)
        f = os.path.join(a, "trajectory.csv")
        s, _, _ = run(["-problem", "pendulum", "-hs_init", f], ranks=2)
        check(s and s["converged"] and s["newton_iterations"] == 0 and abs(s["J"] - s0["J"]) < 1e-12 * s0["J"],
              "-hs_init at the solution: %s" % (s and s["newton_iterations"]))
        for N in ("13", "40"):
            ref, _, _ = run(["-problem", "pendulum", "-N", N])
            s, _, _ = run(["-problem", "pendulum", "-N", N, "-hs_init", f], ranks=2)
            print("-hs_init N = 20 -> %s: %d Newton iterations (naive guess: %d), J rel diff %.1e"
                  % (N, s["newton_iterations"], ref["newton_iterations"], abs(s["J"] - ref["J"]) / ref["J"]))
            check(s["converged"] and s["newton_iterations"] < ref["newton_iterations"]
                  and abs(s["J"] - ref["J"]) < 1e-10 * ref["J"], "-hs_init interpolated to N = %s" % N)
        s, _, _ = run(["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "5", "-hs_init", f],
                      ranks=2)
        check(s and s["converged"] and s["newton_iterations"] <= 1 and abs(s["J"] - s0["J"]) < 1e-10 * s0["J"],
              "-hs_init with shooting")
        k = os.path.join(d, "k")
        k0, _, _ = run(["-problem", "kepler", "-N", "40"], outdir=k)
        s, _, _ = run(["-problem", "kepler", "-N", "80", "-hs_init", os.path.join(k, "trajectory.csv")])
        ref, _, _ = run(["-problem", "kepler", "-N", "80"])
        check(s and ref and s["converged"] and abs(s["J"] - ref["J"]) < 1e-10 * ref["J"]
              and s["newton_iterations"] < ref["newton_iterations"], "-hs_init kepler 40 -> 80")
        bad = os.path.join(d, "bad.csv")
        lines = open(f).read().splitlines()
        open(bad, "w").write("\n".join(lines[:5] + ["0.3,1,2"] + lines[6:]) + "\n")
        bad2 = os.path.join(d, "bad2.csv")
        open(bad2, "w").write("\n".join(lines[:3] + [lines[3].replace(",", ",x", 1)] + lines[4:]) + "\n")
        s, _, _ = run(["-problem", "pendulum", "-hs_init", a])
        check(s and s["converged"] and s["newton_iterations"] == 0, "-hs_init with an output directory")
        for args, word in ((["-problem", "kepler", "-hs_init", f], "lacks the columns q1..p3"),
                           (["-hs_init", bad], "bad.csv:6: expected"),
                           (["-hs_init", bad2], "bad2.csv:4: value 2"),
                           (["-hs_init", os.path.join(d, "none.csv")], "cannot open"),
                           (["-hs_init", os.path.join(d, "a", "summary.json")], "lacks the columns")):
            _, out, _ = run(args, expect_rc=1)
            print("%-40s -> %s" % (" ".join(args)[-40:], out.strip().splitlines()[-1] if out.strip() else ""))
            check("hamshoot: error:" in out and word in out, "%s: %s" % (args, out[-300:]))
