"""hamshoot system tests of issue 40: rest to rest with conserved quantities in the extended class (docs/constrained.md,
"Rest ends and conserved quantities"; docs/satellite.md, "Rest to rest in directors"): the end condition
p_N = p_T + G^T alpha + sum_l beta_l grad_p I_l with free final coordinates, on a planar body with a reaction wheel
(an analytic optimum) and on the satellite with consistent torques. Standard library only.
"""
import math
import os
import tempfile

from hs_satellite import _natural_guess
from hs_util import check, order, rel, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WHEEL = os.path.join(HERE, "data", "wheel_rest_directors.ocp")
WHEEL_ANGLE = os.path.join(HERE, "data", "wheel_rest.ocp")
SATELLITE = os.path.join(ROOT, "problems", "satellite.ocp")
EULER = os.path.join(ROOT, "problems", "satellite_euler.ocp")
NO_EXTRA = ["-hs_check_extremal", "no"]
# The Euler form's final rotor angles (docs/satellite.md: Richardson of N = 320, 640, good to ~1e-7).
A_T = (-7.16721, -16.73654, -21.46497)
CYC = ((1, 2), (2, 0), (0, 1))


def _round_off(s, what, scale):
    """H^d, E - W, the invariants, the constraints and beta at round-off (scale: the size of the momenta)."""
    check(s["H_spread_relative"] <= 1e-12, "%s: H^d spread %.3g relative" % (what, s["H_spread_relative"]))
    check(abs(s["energy_work_spread"]) <= 1e-14 * scale ** 2, "%s: E - W spread %.3g" % (what, s["energy_work_spread"]))
    for name, v in s["invariants"].items():
        check(max(abs(v["min"]), abs(v["max"])) <= 1e-14 * scale, "%s: invariant %s in [%.3g, %.3g], not 0" %
              (what, name, v["min"], v["max"]))
    c = s["constraints"]
    check(c["class"] == "extended" and c["max_phi"] <= 1e-13 and c["conserved_beta"] <= 1e-14 * scale,
          "%s: class %s, max|Phi| %.3g, beta %.3g" % (what, c["class"], c["max_phi"], c["conserved_beta"]))


def _wheel_angle(s):
    """The wheel's final angle atan2(b2, b1) from the last node."""
    r = s["_rows"][-1]
    return math.atan2(float(r["q_b2"]), float(r["q_b1"]))


def t_rest_wheel():
    """tests/data/wheel_rest_directors.ocp (a planar body and a reaction wheel in directors, the internal torque at the
    contravariant directors, rest to rest turning the body by 1 rad, the wheel's angle free, 'conserved: L'): converges
    from the default guess on 1 and 2 ranks; H^d, E - W, L, max|Phi| and beta at round-off; order 2 +- 0.02 from
    N = 40, 80, 160 and Richardson (80, 160) equal to the continuous optimum J = 6 Ib^2 th^2 / T^3 = 3 (the body is a
    double integrator, Ib th'' = -u) to 1e-6, as is the twin's in generalized coordinates (tests/data/wheel_rest.ocp
    with the body's final momentum free, which L = 0 implies); the wheel's final angle is -Ib/Iw th = -4 (L = 0 is
    Ib th + Iw w = 0) to O(h^2). Without 'conserved: L' the end condition is redundant and Newton fails."""
    J, Jt = {}, {}
    for N, ranks in ((40, 1), (80, 2), (160, 1)):
        s, _, _ = run(["-problem", WHEEL, "-N", str(N)] + NO_EXTRA, ranks=ranks)
        if not s or not s["converged"]:
            return check(False, "wheel_rest_directors N = %d on %d ranks: not converged" % (N, ranks))
        _round_off(s, "wheel N = %d" % N, 10)
        J[N] = s["J"]
        w = (_wheel_angle(s) + 4 + math.pi) % (2 * math.pi) - math.pi
        check(abs(w) <= 60 / N ** 2, "wheel N = %d: final wheel angle %.6g off -4 (mod 2 pi) by %.3g" %
              (N, _wheel_angle(s), w))
    o = order(J[40] - J[80], J[80] - J[160])
    check(abs(o - 2) <= 0.02, "wheel: order %.4f from N = 40, 80, 160" % o)
    lim = (4 * J[160] - J[80]) / 3
    check(rel(lim, 3) <= 1e-6 * 3, "wheel: Richardson limit %.10g, the continuous optimum 3" % lim)
    with tempfile.TemporaryDirectory() as d:
        twin = os.path.join(d, "twin.ocp")
        with open(twin, "w") as f:
            f.write(open(WHEEL_ANGLE).read().replace("xT: 1, *, pT, wT", "xT: 1, *, *, wT"))
        for N in (80, 160):
            s, _, _ = run(["-problem", twin, "-N", str(N)] + NO_EXTRA)
            if not s or not s["converged"]:
                return check(False, "wheel_rest twin N = %d: not converged" % N)
            Jt[N] = s["J"]
        limt = (4 * Jt[160] - Jt[80]) / 3
        check(rel(limt, lim) <= 1e-6 * 3, "wheel: Richardson limits %.10g (directors), %.10g (angles)" % (lim, limt))
        plain = os.path.join(d, "plain.ocp")
        with open(plain, "w") as f:
            f.write(open(WHEEL).read().replace("conserved: L\n", ""))
        s, _, _ = run(["-problem", plain, "-N", "20", "-hs_strategy", "newton", "-snes_linesearch_type", "l2"] + NO_EXTRA,
                      expect_rc=None)
        check(s is not None and not s.get("converged", True), "wheel without 'conserved': converged %s" %
              (s.get("converged") if s else None))


def _rotor_angle_errors(s):
    """The final rotor angles (atan2 of e1 in the main body's (d_i, d_j)) minus the Euler form's limit, mod 2 pi."""
    r = s["_rows"][-1]
    v = lambda n: [float(r["q_" + n + c]) for c in "xyz"]  # noqa: E731
    d = [v("d%d" % (b + 1)) for b in range(3)]
    out = []
    for k, (i, j) in enumerate(CYC):
        e1 = v("r%d1" % (k + 1))
        a = math.atan2(sum(x * y for x, y in zip(e1, d[j])), sum(x * y for x, y in zip(e1, d[i])))
        out.append((a - A_T[k] + math.pi) % (2 * math.pi) - math.pi)
    return out


def t_rest_satellite():
    """problems/satellite.ocp (the satellite rest to rest in directors with the consistent torques, the final
    rotor angles free, 'conserved: L_x, L_y, L_z') from the Euler form's solution mapped to directors (stdlib, as
    test satellite_natural): converges at N = 40 on 2 ranks and N = 80 on 1 rank; H^d, E - W, L, max|Phi| and beta at
    round-off; J^d above the Euler form's limit 1434215.9608 and approaching it (within 1.7 % at N = 40, 0.4 % at
    N = 80); the free final rotor angles approach the Euler form's (a = -7.16721, -16.73654, -21.46497) as O(h^2):
    the errors of rotors 1 and 3 (the larger ones) shrink by a factor >= 3 from N = 40 to 80."""
    err = {}
    with tempfile.TemporaryDirectory() as d:
        for N, ranks, tol in ((40, 2, 0.017), (80, 1, 0.004)):
            s, _, _ = run(["-problem", EULER, "-N", str(N)] + NO_EXTRA)
            if not s or not s["converged"]:
                return check(False, "satellite_euler N = %d: not converged" % N)
            g = os.path.join(d, "g%d" % N)
            _natural_guess(s, g)
            s, _, _ = run(["-problem", SATELLITE, "-N", str(N), "-hs_init", g, "-hs_strategy", "newton"] + NO_EXTRA,
                          ranks=ranks)
            if not s or not s["converged"]:
                return check(False, "satellite_rest N = %d on %d ranks: not converged" % (N, ranks))
            _round_off(s, "satellite_rest N = %d" % N, 1e3)
            check(0 < s["J"] - 1434215.9608 <= tol * 1434215.9608, "satellite_rest N = %d: J^d %.10g" % (N, s["J"]))
            err[N] = _rotor_angle_errors(s)
    for k in (0, 2):
        check(abs(err[40][k]) >= 3 * abs(err[80][k]), "satellite_rest: rotor %d's final angle errors %.3g, %.3g" %
              (k + 1, err[40][k], err[80][k]))
