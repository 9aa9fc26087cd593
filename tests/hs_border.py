"""hamshoot system tests (tests/hstest.py), issue 44: PC hsband's bordered step (bvp/petscext/bandborder.c). A free
final time's dense column (dF/dT) and row (its condition) are taken out of the band and solved by block elimination
(B, the band without them, by the banded LU; a 1 x 1 Schur complement) instead of the MUMPS fallback that a band
wider than 4096 took before.
"""
import os
import re

from hs_util import check, info_determinants, run, same_determinant

HERE = os.path.dirname(os.path.abspath(__file__))
DI = os.path.join(HERE, "..", "problems", "double_integrator_free_T.ocp")
PF = os.path.join(HERE, "data", "pendulum_free_T.ocp")


def compare(args, r, tol, floor_ok):
    """hsband (bordered) against MUMPS on the same run: (ok, message). The same Newton iterations (two more or less
    where either stops at the noise floor and floor_ok: MUMPS itself took 15 and 16 in two runs of the same 2-rank
    case), J^d and T to 1e-12, every state, costate and control to tol
    relative to the largest; -ksp_view says the border was used, not the fallback."""
    args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
    m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
    b, out, _ = run(args + ["-pc_type", "hsband", "-ksp_view"], ranks=r)
    if not (m and b):
        return False, "%s on %d ranks: no output" % (args, r)
    keys = [k for k in m["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
    vals = [(float(x[k]), float(y[k])) for x, y in zip(m["_rows"], b["_rows"]) for k in keys if x[k] != ""]
    scale = max([1.0] + [abs(a) for a, _ in vals])
    diff = max([0.0] + [abs(a - c) for a, c in vals]) / scale
    floor = floor_ok and "NOISE_FLOOR" in m["solver_status"] + b["solver_status"]
    used = "banded LU with a border (hamshoot): 1 dense row(s) and column(s)" in out and "not used" not in out
    msg = ("%-50s %d rank(s): Newton %d / %d, J^d %.15g / %.15g, T %.15g / %.15g, max diff %.1e (%d values), border used %s"
           % (" ".join(args[2:8]), r, m["newton_iterations"], b["newton_iterations"], m["J"], b["J"], m["T"], b["T"], diff,
              len(vals), used))
    print(msg)
    ok = (m["converged"] and b["converged"] and b["linear_solver"] == "preonly+hsband" and used
          and abs(m["newton_iterations"] - b["newton_iterations"]) <= (2 if floor else 0)
          and abs(m["J"] - b["J"]) <= 1e-12 * abs(m["J"]) and abs(m["T"] - b["T"]) <= 1e-12 * abs(m["T"]) * (100 if floor else 1)
          and diff <= tol and len(vals) > 1000)
    return ok, msg


def t_border():
    """Issue 44: a free T's border by block elimination around the band (-pc_hsband_border, the default). The double
    integrator with a free T at N = 2000 (8005 unknowns: the band with its border was 8004 wide, beyond 4096, and fell
    back to MUMPS) by the transcription, and by shooting with 1200 segments (N = 12000, 4805 unknowns), on 1, 2 and 3
    ranks, against MUMPS: the same Newton iterations, J^d and T to 1e-12, every value to 1e-10 (measured: 1e-15, the
    problem converges to |F| ~ 1e-12). The pendulum with a free T (nonlinear; N = 2000) stops at its noise floor
    (|F| ~ 1e-8, -hs_snes_noise) where the two solvers' last iterations are round-off: two iterations more or less,
    J^d to 1e-12, T to 1e-10 and the values to 2e-8 (measured 1e-9 to 1e-8, as MUMPS on 1 against 2 ranks). With
    -pc_hsband_border false the band is too wide and MUMPS is used, as before (-ksp_view says why); where B, the band
    without its border, is outside the band's limits (too few rows per rank), MUMPS factors the whole matrix, with the
    same iterations and J^d as MUMPS, and -ksp_view says why."""
    for args, ranks, tol, floor_ok in (([ "-problem", DI, "-N", "2000"], (1, 2, 3), 1e-10, False),
                                       (["-problem", DI, "-N", "12000", "-hs_bvp_type", "shooting", "-hs_shoot_segments",
                                         "1200"], (1, 2, 3), 1e-10, False),
                                       (["-problem", PF, "-N", "2000"], (1, 2), 2e-8, True)):
        for r in ranks:
            ok, msg = compare(args, r, tol, floor_ok)
            check(ok, "bordered hsband against MUMPS: " + msg)
    # B outside the band's limits (10 shooting segments on 6 ranks: 8 rows of B on a rank, a band 15 wide): MUMPS
    # factors A, as before, and -ksp_view says why
    args = ["-problem", DI, "-N", "400", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "10", "-hs_check_extremal", "no"]
    m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=6)
    b, out, _ = run(args + ["-pc_type", "hsband", "-ksp_view"], ranks=6)
    why = re.search(r"not used: the band without its border of 1: rank \d+ has \d+ rows, too few for the band", out)
    check(m and b and why and b["converged"] and b["newton_iterations"] == m["newton_iterations"]
          and abs(b["J"] - m["J"]) <= 1e-12 * abs(m["J"]), "B outside the band's limits: %r" % out[-300:])
    _, out, _ = run(["-problem", DI, "-N", "2000", "-pc_type", "hsband", "-pc_hsband_border", "false", "-ksp_view",
                     "-hs_check_extremal", "no"])
    check(re.search(r"not used: the band is 800\d wide, more than 4096", out), "-pc_hsband_border false: %r" % out[-300:])


def t_border_determinant():
    """Issue 44: the determinant of the bordered factorization, det A = sign det B det S (bandborder.c), which the
    arclength continuation's branch-point test reads by its sign: along an arclength continuation in the time penalty c
    of the double integrator with a free T (N = 2000, 2 ranks), every determinant hsband prints (-info) equals MUMPS'
    LU's to 1e-10 (sign and magnitude), and the continuation ends at the same J^d and T. Here det S is about -6 (det B
    about +0.6, det A about -3.7): det S left out, or its sign, would fail. (The border's row and column are the same
    index here, so the permutations' parities cancel and are not tested by this problem.)"""
    dets, sums = {}, {}
    for ls in ("mumps", "band"):
        s, out, _ = run(["-problem", DI, "-N", "2000", "-p_c", "2", "-hs_continue", "c", "-hs_continue_from", "1",
                         "-hs_continue_steps", "4", "-hs_continue_type", "arclength", "-hs_check_extremal", "no",
                         "-hs_linear_solver", ls, "-info"], ranks=2)
        dets[ls] = info_determinants(out, "MUMPS|hsband")
        sums[ls] = s
    print("determinants by MUMPS %s\n              by hsband %s" % (dets["mumps"][:3], dets["band"][:3]))
    same = lambda a, b: same_determinant(a, b, 1.5e-10)
    check(len(dets["mumps"]) >= 4 and len(dets["band"]) == len(dets["mumps"])
          and all(same(a, b) for a, b in zip(dets["band"], dets["mumps"])), "bordered determinants against MUMPS'")
    m, b = sums["mumps"], sums["band"]
    check(m and b and b["linear_solver"] == "preonly+hsband" and abs(m["J"] - b["J"]) <= 1e-12 * abs(m["J"])
          and abs(m["T"] - b["T"]) <= 1e-12 * m["T"], "continuation: J^d, T by hsband and MUMPS")
