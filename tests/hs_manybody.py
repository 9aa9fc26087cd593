"""hamshoot system tests (tests/hstest.py), issue 44 item 4, many bodies: PC hsdrop's row-to-column matching
(-pc_hsdrop_match, bvp/petscext/dropmatch.c; on by default on more than one rank, where MUMPS ignores its own
ICNTL(6)) gives the solutions of MUMPS' LU of the whole stored Jacobian (-hs_linear_solver mumps) and lets MUMPS
factor the dropped matrix with its pivots in place.
"""
import re

from hs_util import check, run


def _traj_diff(a, b):
    """The largest difference of the trajectories' q, p, lambda, u columns over the largest value (at least 1)."""
    keys = [k for k in a["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
    vals = [(float(x[k]), float(y[k])) for x, y in zip(a["_rows"], b["_rows"]) for k in keys if x[k] != ""]
    scale = max([1.0] + [abs(u) for u, _ in vals])
    return max([0.0] + [abs(u - v) for u, v in vals]) / scale, len(vals)


def t_manybody_match():
    """ncar with 12 and 16 cars, N = 200, on 1 and 2 ranks: -hs_linear_solver drop with the matching (the default
    on 2 ranks, -pc_hsdrop_match 1 on 1) against MUMPS' LU of the whole stored Jacobian: the same Newton iterations,
    J^d to 1e-12 and the trajectories to 1e-10 of their largest value (the problem is linear and well conditioned
    for beta = 1: the exact solvers agree to round-off). -ksp_view says when the matching is on."""
    for cars in (12, 16):
        args = ["-problem", "ncar", "-p_cars", str(cars), "-N", "200", "-hs_check_extremal", "no", "-hs_strategy", "newton"]
        for r in (1, 2):
            m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
            d, out, _ = run(args + ["-hs_linear_solver", "drop", "-ksp_view"] + (["-pc_hsdrop_match", "1"] if r == 1 else []),
                            ranks=r)
            if not (m and d):
                check(False, "%d cars on %d ranks: no output" % (cars, r))
                continue
            diff, nvals = _traj_diff(m, d)
            print("ncar %d cars, %d ranks: Newton %d / %d, Krylov its %d, J^d %.13g / %.13g, max diff %.1e"
                  % (cars, r, m["newton_iterations"], d["newton_iterations"], d["ksp_iterations"], m["J"], d["J"], diff))
            check("columns permuted by a row-to-column matching" in out, "%d ranks: -ksp_view names the matching" % r)
            check(m["converged"] and d["converged"] and m["newton_iterations"] == d["newton_iterations"]
                  and abs(m["J"] - d["J"]) <= 1e-12 * max(1, abs(m["J"])) and diff <= 1e-10 and nvals > 1000,
                  "%d cars on %d ranks: hsdrop with the matching against MUMPS" % (cars, r))
    # the default on one rank: no matching (MUMPS' own ICNTL(6) applies there)
    _, out, _ = run(["-problem", "ncar", "-p_cars", "12", "-N", "50", "-hs_check_extremal", "no", "-hs_linear_solver", "drop",
                     "-ksp_view"])
    check("keeps" in out and "columns permuted" not in out, "1 rank: no matching by default")


def t_manybody_pivots():
    """The reason for the matching, read from MUMPS' own statistics: ncar with 16 cars, N = 200, 2 ranks, MUMPS
    delays pivots by the thousand on the dropped matrix as it is (its diagonal has the initial conditions' zeros,
    and threshold pivoting CNTL(1) = 1 rejects the others) and hardly any once its columns are matched; its
    factorization's flops (RINFOG(3)) fall. The stiff case (beta = 1e-9) converges with the matching to the
    MUMPS solution within the conditioning bound of the test 'drop' (1e-7)."""
    args = ["-problem", "ncar", "-p_cars", "16", "-N", "200", "-hs_check_extremal", "no", "-hs_strategy", "newton",
            "-hs_linear_solver", "drop", "-ksp_view"]
    stats = {}
    for match in ("0", "1"):
        s, out, _ = run(args + ["-pc_hsdrop_match", match], ranks=2)
        delayed = re.findall(r"INFOG\(13\) \(number of delayed pivots after factorization\): (\d+)", out)
        flops = re.findall(r"RINFOG\(3\) \(global estimated flops for the elimination after factorization\): ([0-9.e+-]+)", out)
        stats[match] = (int(delayed[-1]) if delayed else None, float(flops[-1]) if flops else None, s and s["J"])
    print("16 cars, N = 200, 2 ranks: (delayed pivots, flops, J^d) without matching %s, with %s" % (stats["0"], stats["1"]))
    (d0, f0, j0), (d1, f1, j1) = stats["0"], stats["1"]
    check(None not in (d0, d1, f0, f1, j0, j1) and d0 >= 1000 and d1 * 10 < d0 and f1 < 0.8 * f0
          and abs(j0 - j1) <= 1e-12 * abs(j0), "the matching removes MUMPS' delayed pivots: %s" % (stats,))
    stiff = ["-problem", "ncar", "-p_cars", "12", "-N", "200", "-p_beta", "1e-9", "-hs_check_extremal", "no",
             "-hs_strategy", "newton"]
    m, _, _ = run(stiff + ["-hs_linear_solver", "mumps"], ranks=2)
    d, _, _ = run(stiff + ["-hs_linear_solver", "drop"], ranks=2)
    ok = m and d and m["converged"] and d["converged"]
    diff = _traj_diff(m, d)[0] if ok else float("nan")
    print("beta 1e-9, 2 ranks: Newton %s / %s, max diff %.1e" % (m and m["newton_iterations"], d and d["newton_iterations"], diff))
    check(ok and abs(m["newton_iterations"] - d["newton_iterations"]) <= 1 and diff <= 1e-7,
          "beta 1e-9 on 2 ranks: hsdrop with the matching against MUMPS")


def t_manybody_det():
    """The branch-point test's determinant through the matching: on 2 ranks hsdrop factors P Q (Q the matching's
    column permutation) and reports det P = det(P Q) sign(Q). For the pendulum (N = 41) that sign is -1 (the line
    says '(hsdrop)'; for ncar it is +1, the case of the test 'drop'). The determinants equal those of MUMPS' LU of
    the whole Jacobian to 1e-9 along an arclength continuation."""
    prob = ["-problem", "pendulum", "-p_g", "9", "-hs_continue", "g", "-hs_continue_from", "9.5"]
    dets = {}
    for ls in ("drop", "mumps"):
        _, out, _ = run(prob + ["-N", "41", "-hs_continue_steps", "2", "-hs_continue_type", "arclength",
                                "-hs_check_extremal", "no", "-hs_linear_solver", ls, "-info"], ranks=2)
        dets[ls] = [(float(m) * 2.0 ** int(e), src) for m, e, src in re.findall(r"det J = ([0-9.e+-]+) 2\^(-?\d+) \((\w+)\)", out)]
    print("pendulum: determinants by hsdrop %s, by MUMPS %s" % (dets["drop"][:2], dets["mumps"][:2]))
    check(dets["drop"] and len(dets["drop"]) == len(dets["mumps"])
          and all(abs(a - b) <= 1e-9 * abs(b) for (a, _), (b, _) in zip(dets["drop"], dets["mumps"]))
          and all(src == "hsdrop" for _, src in dets["drop"]),
          "pendulum: hsdrop's determinants (through the matching, sign -1) equal MUMPS'")
