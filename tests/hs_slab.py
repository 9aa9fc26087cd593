"""hamshoot system tests (tests/hstest.py), issue 44 item 4: PC hsslab (bvp/petscext/pcslab.c), each rank's slab
factored by sequential MUMPS with its Schur complement on the interface, the interface system by bandreduce.c's
cyclic reduction; -hs_linear_solver slab (GMRES + hsdrop, its dropped matrix factored by hsslab) against MUMPS'
LU of the whole stored Jacobian (-hs_linear_solver mumps), an independent factorization of the same matrix.
"""
from hs_util import check, run


def _traj_diff(a, b):
    """The largest difference of the trajectories' q, p, lambda, u columns over the largest value (at least 1)."""
    keys = [k for k in a["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
    vals = [(float(x[k]), float(y[k])) for x, y in zip(a["_rows"], b["_rows"]) for k in keys if x[k] != ""]
    scale = max([1.0] + [abs(u) for u, _ in vals])
    return max([0.0] + [abs(u - v) for u, v in vals]) / scale, len(vals)


def _against_mumps(args, ranks, tol, its=0):
    """args solved by slab and by MUMPS on each rank count: the same Newton iterations to the stop (within its; the
    polish after it is not counted: whether it runs depends on the conserved quantity's round-off, which differs
    with the linear solver's rounding: ncar with 8 cars on 3 ranks, MUMPS' step left |F| = 5.5e-12 and took one
    polish step, hsslab's 1.9e-13 and none), J^d to 1e-12, the trajectories to tol of their largest value;
    -ksp_view says the slabs were used (not the fallback)."""
    for r in ranks:
        m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
        s, out, _ = run(args + ["-hs_linear_solver", "slab", "-ksp_view"], ranks=r)
        if not (m and s):
            check(False, "%s on %d ranks: no output" % (args, r))
            continue
        diff, nvals = _traj_diff(m, s)
        mit, sit = (x["newton_iterations"] - x.get("polish_iterations", 0) for x in (m, s))
        print("%-44s %d ranks: Newton %d / %d (+ polish %d / %d), Krylov its %d, J^d %.13g / %.13g, max diff %.1e"
              % (" ".join(args[:6]), r, mit, sit, m.get("polish_iterations", 0), s.get("polish_iterations", 0),
                 s["ksp_iterations"], m["J"], s["J"], diff))
        check(s["linear_solver"] == "gmres+hsdrop(hsslab)", "%d ranks: linear solver %s" % (r, s["linear_solver"]))
        check("slabs factored by sequential MUMPS" in out and "not used" not in out,
              "%s, %d ranks: -ksp_view names hsslab's slabs" % (args[:6], r))
        check(m["converged"] and s["converged"] and abs(mit - sit) <= its
              and abs(m["J"] - s["J"]) <= 1e-12 * max(1, abs(m["J"])) and diff <= tol and nvals > 100,
              "%s on %d ranks: hsslab against MUMPS" % (args[:6], r))


def t_slab_mumps():
    """ncar with 16 cars, N = 100 (an LQ problem: one Newton step) on 1, 2 and 3 ranks, and chain2d (20 masses,
    nonlinear springs: several Newton steps, hsdrop's pattern growing once the Gonzalez terms appear, so hsslab
    analyses a second pattern) on 2 and 3: -hs_linear_solver slab against MUMPS' LU of the whole Jacobian, the same
    Newton iterations, J^d to 1e-12 and every state, costate and control to 1e-10 of the largest (the band test's). The
    default on 2 ranks for 33 cars (n > 32) is slab, on 1 rank drop."""
    import os
    chain = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "problems", "chain2d.ocp")
    common = ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
    _against_mumps(["-problem", "ncar", "-p_cars", "16", "-N", "100"] + common, (1, 2, 3), 1e-10)
    _against_mumps(["-problem", chain, "-N", "60"] + common, (2, 3), 1e-10)
    for r, want in ((2, "gmres+hsdrop(hsslab)"), (1, "gmres+hsdrop(mumps)")):
        s, _, _ = run(["-problem", "ncar", "-p_cars", "33", "-N", "40"] + common, ranks=r)
        check(s and s["linear_solver"] == want, "33 cars, %d ranks: default %s, not %s" % (r, want, s and s["linear_solver"]))


def t_slab_thin():
    """Ranks with few nodes (ncar, 8 cars, 3 ranks): at N = 8 (3 nodes a rank) the slabs hold and the answer is
    MUMPS'; at N = 4 (a rank of 2 nodes couples one unknown to both neighbours) hsslab factors by MUMPS instead and
    -ksp_view says why, and with -hsdrop_pc_hsslab_fallback false the run stops with that reason."""
    common = ["-problem", "ncar", "-p_cars", "8", "-hs_check_extremal", "no", "-hs_strategy", "newton"]
    _against_mumps(common + ["-N", "8"], (3,), 1e-10)
    m, _, _ = run(common + ["-N", "4", "-hs_linear_solver", "mumps"], ranks=3)
    s, out, _ = run(common + ["-N", "4", "-hs_linear_solver", "slab", "-ksp_view"], ranks=3)
    check(s and m and s["converged"] and abs(s["J"] - m["J"]) <= 1e-12 * abs(m["J"]) and "too thin" in out
          and "factored by MUMPS LU instead" in out, "N = 4, 3 ranks: the fallback, said by -ksp_view")
    _, out, rc = run(common + ["-N", "4", "-hs_linear_solver", "slab", "-hsdrop_pc_hsslab_fallback", "false"], ranks=3,
                     expect_rc=1)
    check(rc == 1 and "too thin" in out and "-pc_hsslab_fallback" in out, "fallback false: %r" % out.strip()[-300:])


def t_slab_stiff():
    """The stability cases of the band test: the unstable saddle problem (2 Newton steps) on 3 ranks, and ncar with
    12 cars, N = 100 and beta = 1e-9 (state-costate growth ~ e^{10 t}, condition ~1e11) on 2 ranks, against MUMPS:
    1e-10 and 1e-7 (the drop test's bound for that conditioning). A singular Jacobian (the wheel with its redundant
    terminal momentum made inconsistent, -hs_check_boundary false) fails the linear solve (round-off pivots, then
    GMRES without convergence: DIVERGED_LINEAR_SOLVE; MUMPS' LU of the whole matrix passes its step to the line
    search instead) and hamshoot's diagnosis names the singular Jacobian and its dependent equations."""
    import os
    _against_mumps(["-problem", "saddle", "-hs_check_extremal", "no", "-hs_strategy", "newton"], (3,), 1e-10)
    _against_mumps(["-problem", "ncar", "-p_cars", "12", "-N", "100", "-p_beta", "1e-9", "-hs_check_extremal", "no",
                    "-hs_strategy", "newton"], (2,), 1e-7, its=1)
    wheel = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wheel_rest.ocp")
    s, _, rc = run(["-problem", wheel, "-p_p0", "1", "-hs_check_boundary", "false", "-hs_linear_solver", "slab",
                    "-hs_check_extremal", "no", "-hs_strategy", "newton"], ranks=2, expect_rc=2)
    print("singular wheel, 2 ranks: rc %s, %s, %s" % (rc, s and s["snes_reason"], s and s["diagnosis"][:80]))
    check(s and not s["converged"] and s["snes_reason"] == "DIVERGED_LINEAR_SOLVE"
          and "the Jacobian is singular" in s["diagnosis"] and "dependent equations" in s["diagnosis"],
          "singular Jacobian: the failed linear solve and the diagnosis (%s)" % (s and s.get("diagnosis")))


def t_slab_det():
    """The branch-point test's determinant from hsslab: det A = prod_r det K_II^r det R (MUMPS' ICNTL(33) of each
    slab's interior, the interface system's from the cyclic reduction's pivots and permutations), times the sign of
    hsdrop's matching. Along arclength continuations (the pendulum, N = 41, whose matching is odd; ncar with 33 cars)
    on 2 and 3 ranks it equals MUMPS' LU of the whole Jacobian to 1e-9, on every step."""
    import re
    cases = ((["-problem", "pendulum", "-p_g", "9", "-hs_continue", "g", "-hs_continue_from", "9.5", "-N", "41",
               "-hs_continue_steps", "2"], (2, 3)),
             (["-problem", "ncar", "-p_cars", "33", "-N", "40", "-p_beta", "0.01", "-hs_continue", "beta",
               "-hs_continue_from", "1", "-hs_continue_steps", "3"], (2,)))
    for args, ranks in cases:
        for r in ranks:
            dets = {}
            for ls in ("slab", "mumps"):
                _, out, _ = run(args + ["-hs_continue_type", "arclength", "-hs_check_extremal", "no", "-hs_linear_solver",
                                        ls, "-info", ":pc"], ranks=r)
                dets[ls] = [float(m) * 2.0 ** int(e) for m, e in re.findall(r"det J = ([0-9.e+-]+) 2\^(-?\d+)", out)]
            print("%s, %d ranks: determinants by hsslab %s, by MUMPS %s" % (args[1], r, dets["slab"][:2], dets["mumps"][:2]))
            check(len(dets["slab"]) >= 2 and len(dets["slab"]) == len(dets["mumps"])
                  and all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(dets["slab"], dets["mumps"])),
                  "%s, %d ranks: hsslab's determinants equal MUMPS'" % (args[1], r))
