"""hamshoot system tests of issue 40's guess for constrained systems (docs/constrained.md, "Costates implied by the
states"; docs/satellite.md, "Rest to rest in directors"): -hs_guess_costates implied computes the costates that a
state guess implies. Checked against converged solutions' costates (pendulum in Cartesian coordinates, the planar
wheel in directors) and on the satellite in directors from a state guess without costates. Standard library only.
"""
import math
import os
import tempfile

from hs_satellite import CYC, _inertia, _natural_guess
from hs_satellite_rest import SATELLITE, EULER, NO_EXTRA, _round_off
from hs_util import check, rel, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PENDULUM = os.path.join(ROOT, "problems", "pendulum_cartesian.ocp")
WHEEL = os.path.join(HERE, "data", "wheel_rest_directors.ocp")


def _columns(rows, prefix, names):
    """The columns prefix + name of a list of csv rows, as a list of rows of floats."""
    return [[float(r[prefix + n]) for n in names] for r in rows]


def _read_csv(path):
    import csv
    with open(path) as f:
        return list(csv.DictReader(f))


def _implied(problem, N, d, ranks=1):
    """(solution's intervals, implied guess's intervals, solution's nodes) at N: the problem solved, then its states
    given back with -hs_init and -hs_guess_costates implied and no Newton step (-snes_max_it 0)."""
    sol, g = os.path.join(d, "sol%d" % N), os.path.join(d, "g%d" % N)
    s, _, _ = run(["-problem", problem, "-N", str(N)] + NO_EXTRA, outdir=sol)
    check(s is not None and s["converged"], "%s N = %d: not converged" % (problem, N))
    run(["-problem", problem, "-N", str(N), "-hs_init", sol, "-hs_guess_costates", "implied", "-snes_max_it", "0",
         "-hs_strategy", "newton"] + NO_EXTRA, outdir=g, expect_rc=None, ranks=ranks)
    return (_read_csv(os.path.join(sol, "intervals.csv")), _read_csv(os.path.join(g, "intervals.csv")),
            _read_csv(os.path.join(sol, "trajectory.csv")))


def t_satguess_implied_pendulum():
    """Implied costates from a solution's states (problems/pendulum_cartesian.ocp: n = 2, one constraint, one control,
    so [B^T; G] is square and lambda^p is determined by u): the differences to the solution's lambda^p shrink as
    O(h^2) (by >= 3.2 per halving of h, N = 20, 40, 80; measured 3.44, 3.89) and lambda^q's (a difference quotient)
    as O(h) or better (>= 1.8; measured 3.4, 2.7); the implied guess on 2 ranks equals 1 rank's to round-off; and a
    problem without constraints, and -hs_scheme conserving4, refuse the option."""
    names = ("x", "y")
    dp, dq = {}, {}
    with tempfile.TemporaryDirectory() as d:
        for N in (20, 40, 80):
            a, g, _ = _implied(PENDULUM, N, d, ranks=2 if N == 40 else 1)
            for key, out in (("lambda_p_", dp), ("lambda_q_", dq)):
                A, G = _columns(a, key, names), _columns(g, key, names)
                out[N] = max(abs(x - y) for ra, rg in zip(A, G) for x, y in zip(ra, rg))
            if N == 40:
                g1 = os.path.join(d, "g40_1rank")
                run(["-problem", PENDULUM, "-N", "40", "-hs_init", os.path.join(d, "sol40"), "-hs_guess_costates",
                     "implied", "-snes_max_it", "0", "-hs_strategy", "newton"] + NO_EXTRA, outdir=g1, expect_rc=None)
                G1 = _columns(_read_csv(os.path.join(g1, "intervals.csv")), "lambda_q_", names)
                G2 = _columns(g, "lambda_q_", names)
                dev = max(abs(x - y) for r1, r2 in zip(G1, G2) for x, y in zip(r1, r2))
                check(dev <= 1e-10, "pendulum N = 40: implied lambda^q on 1 and 2 ranks differ by %.3g" % dev)
    print("pendulum_cartesian: max |lambda^p - implied| %s, lambda^q %s" % (dp, dq))
    check(dp[20] >= 3.2 * dp[40] and dp[40] >= 3.2 * dp[80], "pendulum: lambda^p differences %s" % dp)
    check(dq[20] >= 1.8 * dq[40] and dq[40] >= 1.8 * dq[80], "pendulum: lambda^q differences %s" % dq)
    _, out, rc = run(["-problem", "pendulum", "-N", "10", "-hs_guess_costates", "implied"], expect_rc=None)
    check(rc != 0 and "only for a constrained system" in out, "pendulum (no constraints) took the option: rc %d" % rc)
    _, out, rc = run(["-problem", PENDULUM, "-N", "20", "-hs_scheme", "conserving4", "-hs_guess_costates", "implied"],
                     expect_rc=None)
    check(rc != 0 and "conserving4" in out, "pendulum_cartesian with conserving4 took the option: rc %d" % rc)


def t_satguess_implied_wheel():
    """Implied costates on tests/data/wheel_rest_directors.ocp (n = 4, two constraints, one control: [B^T; G] has a
    null space, the joint rotation v = (a_perp, b_perp) that the conserved L generates, where u says nothing about
    lambda^p). From the solution's states, the difference to the solution's lambda^p is, per interval, a multiple of
    v plus a remainder that shrinks as O(h^2) (>= 3.5 per halving, N = 20, 40, 80; measured 4.0, 4.0); the
    multiple itself does not shrink (the implied guess lacks it: max >= 1 at every N, measured 4.2 to 4.3)."""
    rest, null = {}, {}
    with tempfile.TemporaryDirectory() as d:
        for N in (20, 40, 80):
            a, g, nodes = _implied(WHEEL, N, d)
            q = _columns(nodes, "q_", ("a1", "a2", "b1", "b2"))
            cols = ("a1", "a2", "b1", "b2")
            A, G = _columns(a, "lambda_p_", cols), _columns(g, "lambda_p_", cols)
            rest[N] = null[N] = 0
            for k in range(N):
                qb = [0.5 * (x + y) for x, y in zip(q[k], q[k + 1])]
                v = [-qb[1], qb[0], -qb[3], qb[2]]
                nv = math.sqrt(sum(x * x for x in v))
                v = [x / nv for x in v]
                diff = [x - y for x, y in zip(A[k], G[k])]
                c = sum(x * y for x, y in zip(diff, v))
                null[N] = max(null[N], abs(c))
                rest[N] = max(rest[N], max(abs(x - c * y) for x, y in zip(diff, v)))
    print("wheel_rest_directors: remainder %s, null-space component %s" % (rest, null))
    check(rest[20] >= 3.5 * rest[40] and rest[40] >= 3.5 * rest[80], "wheel: remainders %s" % rest)
    check(min(null.values()) >= 1, "wheel: null-space components %s" % null)


def _slerp_guess(N, d):
    """An -hs_init directory for problems/satellite.ocp with states only (costates 0): the main body turned about
    n = (1, 2, 3)/sqrt(14) by s(t) pi, s = 3 tau^2 - 2 tau^3 (rest at both ends), the rotors' angles a = -J_A pi n s/J_s
    (the body-frame angular momentum J_A w + J_s a' is then 0), p = M q' (tests/crosscheck/satellite_rest.py's slerp
    states, in the standard library)."""
    ja, js, S = _inertia()
    JA = [[ja[i][j] + js * (i == j) for j in range(3)] for i in range(3)]
    n = [x / math.sqrt(14) for x in (1.0, 2.0, 3.0)]
    K = [[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]]
    KK = [[sum(K[i][l] * K[l][j] for l in range(3)) for j in range(3)] for i in range(3)]
    names = ["d%d%s" % (b + 1, c) for b in range(3) for c in "xyz"]
    names += ["r%d%d%s" % (k + 1, b + 1, c) for k in range(3) for b in range(2) for c in "xyz"]
    T = 5.0
    os.makedirs(d)
    with open(os.path.join(d, "trajectory.csv"), "w") as f:
        f.write("t," + ",".join("q_" + x for x in names) + "," + ",".join("p_" + x for x in names) + "\n")
        for k in range(N + 1):
            tau = k / N
            s, sd = 3 * tau ** 2 - 2 * tau ** 3, (6 * tau - 6 * tau ** 2) / T
            R = [[(i == j) + math.sin(s * math.pi) * K[i][j] + (1 - math.cos(s * math.pi)) * KK[i][j] for j in range(3)]
                 for i in range(3)]
            w = [sd * math.pi * x for x in n]
            a = [-sum(JA[i][j] * math.pi * n[j] * s for j in range(3)) / js for i in range(3)]
            ad = [-sum(JA[i][j] * w[j] for j in range(3)) / js for i in range(3)]
            d_ = [[R[r][b] for r in range(3)] for b in range(3)]
            # d_b' = R (w x e_b) (w in the body frame, = n s' pi: R n = n)
            we = [[w[1] * (b == 2) - w[2] * (b == 1), w[2] * (b == 0) - w[0] * (b == 2),
                   w[0] * (b == 1) - w[1] * (b == 0)] for b in range(3)]
            dd = [[sum(R[r][l] * we[b][l] for l in range(3)) for r in range(3)] for b in range(3)]
            q, v = sum(d_, []), sum(dd, [])
            for kk, (i, j) in enumerate(CYC):
                c, sn = math.cos(a[kk]), math.sin(a[kk])
                q += [c * d_[i][r] + sn * d_[j][r] for r in range(3)]
                q += [-sn * d_[i][r] + c * d_[j][r] for r in range(3)]
                v += [ad[kk] * (-sn * d_[i][r] + c * d_[j][r]) + c * dd[i][r] + sn * dd[j][r] for r in range(3)]
                v += [ad[kk] * (-c * d_[i][r] - sn * d_[j][r]) - sn * dd[i][r] + c * dd[j][r] for r in range(3)]
            p = [sum(S[aa][b] * v[3 * b + r] for b in range(9)) for aa in range(9) for r in range(3)]
            f.write("%.17g," % (k * T / N) + ",".join("%.17g" % x for x in q + p) + "\n")
    with open(os.path.join(d, "intervals.csv"), "w") as f:
        f.write("k,t_mid," + ",".join("lambda_q_" + x for x in names) + "," + ",".join("lambda_p_" + x for x in names)
                + "\n")
        for k in range(N):
            f.write("%d,%.17g," % (k, (k + 0.5) * T / N) + ",".join("0" for _ in range(54)) + "\n")


def t_satguess_satellite():
    """problems/satellite.ocp at N = 40 from a state guess without costates (the main body's rotation about the
    target's axis with the smooth rest-to-rest profile, the rotors' rates keeping L = 0: _slerp_guess) with
    -hs_guess_costates implied, on 2 ranks: converges (measured 40 Newton iterations), to the J^d of the run from the
    Euler form's solution mapped to directors (test rest_satellite's path, 1 rank) to 1e-9 relative; H^d, E - W, L,
    max|Phi| and beta at round-off. The same guess with its zero costates does not converge (docs/satellite.md)."""
    with tempfile.TemporaryDirectory() as d:
        g = os.path.join(d, "slerp")
        _slerp_guess(40, g)
        s, _, _ = run(["-problem", SATELLITE, "-N", "40", "-hs_init", g, "-hs_guess_costates", "implied",
                       "-hs_strategy", "newton"] + NO_EXTRA, ranks=2)
        if not s or not s["converged"]:
            return check(False, "satellite_rest N = 40 from the slerp states with implied costates: not converged")
        _round_off(s, "satellite_rest N = 40 (implied costates)", 1e3)
        e, _, _ = run(["-problem", EULER, "-N", "40"] + NO_EXTRA)
        if not e or not e["converged"]:
            return check(False, "satellite_euler N = 40: not converged")
        m = os.path.join(d, "mapped")
        _natural_guess(e, m)
        r, _, _ = run(["-problem", SATELLITE, "-N", "40", "-hs_init", m, "-hs_strategy", "newton"] + NO_EXTRA)
        if not r or not r["converged"]:
            return check(False, "satellite_rest N = 40 from the mapped Euler solution: not converged")
        print("satellite_rest N = 40: J^d %.13g (implied costates, %d Newton its), %.13g (mapped Euler), %.2g rel." %
              (s["J"], s.get("newton_iterations", -1), r["J"], rel(s["J"], r["J"])))
        check(rel(s["J"], r["J"]) <= 1e-9, "satellite_rest: J^d %.12g and %.12g" % (s["J"], r["J"]))
