"""hamshoot system tests of issue 40: the satellite with three rotors (Siebert's thesis sections 4.3, 6.3) in 3-1-3
Euler angles (problems/satellite_euler.ocp) and in directors (tests/data/satellite_penalty.ocp, a constrained system in the
closed-form class), docs/satellite.md. Standard library only: the map from the Euler form's solution to the natural
coordinates (the natural form's guess) is written out here, independently of tests/crosscheck/satellite_natural.py.
"""
import math
import os
import tempfile

from hs_satellite_ref import J_STAR
from hs_util import check, rel, run, order

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EULER = os.path.join(ROOT, "problems", "satellite_euler.ocp")
NATURAL = os.path.join(ROOT, "tests", "data", "satellite_penalty.ocp")
TWIN = os.path.join(HERE, "data", "satellite_euler_spin.ocp")
NO_EXTRA = ["-hs_check_extremal", "no"]
TIGHT = ["-hs_snes_roundoff", "1", "-snes_atol", "1e-16"]  # Newton to its round-off level (as hs_constrained.py)
# The satellite's data (thesis Table 4.1).
MB, EB, MR, ES, ET, LR = 1005.3096, (89.3609, 201.0619, 357.4434), 424.1150, 8.8357, 106.0288, (0.9167, 1.25, 1.5833)
CYC = ((1, 2), (2, 0), (0, 1))  # rotor k spins about d_k; (i, j): d_i x d_j = d_k


def _mm(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def _mv(a, v):
    return [sum(a[i][k] * v[k] for k in range(len(v))) for i in range(len(a))]


def _solve3(a, b):
    """a^-1 b for a 3 x 3 matrix (Cramer)."""
    det = lambda m: (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                     + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))  # noqa: E731
    d = det(a)
    return [det([[b[r] if c == i else a[r][c] for c in range(3)] for r in range(3)]) / d for i in range(3)]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _rot313(psi, th, ph):
    """C R313 with C = R313(0, pi/2, 0)^T = Rx(pi/2)^T (problems/satellite_euler.ocp's shift off th = 0)."""
    rz = lambda a: [[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]]  # noqa: E731
    rx = lambda a: [[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]]  # noqa: E731
    return _mm(rx(-math.pi / 2), _mm(rz(psi), _mm(rx(th), rz(ph))))


def _kmat(th, ph):
    """K with w = K (psi', th', ph'): the 3-1-3 body angular velocity."""
    return [[math.sin(th) * math.sin(ph), math.cos(ph), 0], [math.sin(th) * math.cos(ph), -math.sin(ph), 0],
            [math.cos(th), 0, 1]]


def _inertia():
    """(J_A - Js I, Js, S): the locked inertia about the system's centre of mass less the rotors' spin part, the
    rotors' spin inertia, and the natural form's 9 x 9 director mass S (M = S kron I3), from the data directly."""
    mtot, js, jt = MB + 3 * MR, 2 * ET, ES + ET
    c = [MR * l for l in LR]
    ja = [[(EB[0] + EB[1] + EB[2] - EB[i] if i == j else 0) + (2 * jt + js if i == j else 0)
           + sum(MR * LR[k] ** 2 * ((i == j) - (i == k) * (j == k)) for k in range(3))
           - (sum(x * x for x in c) * (i == j) - c[i] * c[j]) / mtot - js * (i == j) for j in range(3)] for i in range(3)]
    mu = MR / mtot
    S = [[0.0] * 9 for _ in range(9)]
    for a in range(3):
        for b in range(3):
            S[a][b] = MB * mu * mu * LR[a] * LR[b] + (EB[a] + ES) * (a == b)
            S[a][b] += sum(MR * (LR[k] * (a == k) - mu * LR[a]) * (LR[k] * (b == k) - mu * LR[b]) for k in range(3))
    for b in range(3, 9):
        S[b][b] = ET
    return ja, js, S


def _embed(eul, a, deul, da):
    """The natural coordinates at Euler angles eul, rotor angles a, and the tangent vector of (deul, da)."""
    R = _rot313(*eul)
    w = _mv(_kmat(eul[1], eul[2]), deul)
    d = [[R[r][b] for r in range(3)] for b in range(3)]
    dd = [_mv(R, _cross(w, [float(b == c) for c in range(3)])) for b in range(3)]
    q, v = sum(d, []), sum(dd, [])
    for k, (i, j) in enumerate(CYC):
        c, s = math.cos(a[k]), math.sin(a[k])
        q += [c * d[i][r] + s * d[j][r] for r in range(3)] + [-s * d[i][r] + c * d[j][r] for r in range(3)]
        v += [da[k] * (-s * d[i][r] + c * d[j][r]) + c * dd[i][r] + s * dd[j][r] for r in range(3)]
        v += [da[k] * (-c * d[i][r] - s * d[j][r]) - s * dd[i][r] + c * dd[j][r] for r in range(3)]
    return q, v


def _natural_guess(s, d):
    """An -hs_init directory for the directors (problems/satellite.ocp, tests/data/satellite_penalty.ocp) from a solution s of the Euler form: the states mapped
    (p = M qdot, the Euler velocities from the momenta through the locked inertia), lambda^p mapped as a tangent
    vector, lambda^q = -M (lambda^p)' by central differences."""
    ja, js, S = _inertia()
    names = ["d%d%s" % (b + 1, c) for b in range(3) for c in "xyz"]
    names += ["r%d%d%s" % (k + 1, b + 1, c) for k in range(3) for b in range(2) for c in "xyz"]
    Mv = lambda v: [sum(S[a][b] * v[3 * b + r] for b in range(9)) for a in range(9) for r in range(3)]  # noqa: E731
    rows = s["_rows"]
    ang = lambda r: [float(r["q_" + c]) for c in ("psi", "th", "ph", "a1", "a2", "a3")]  # noqa: E731
    os.makedirs(d)
    with open(os.path.join(d, "trajectory.csv"), "w") as f:
        f.write("t," + ",".join("q_" + n for n in names) + "," + ",".join("p_" + n for n in names) + "\n")
        for r in rows:
            e = ang(r)
            pb = [float(r["p_" + c]) for c in ("psi", "th", "ph")]
            pa = [float(r["p_a%d" % k]) for k in (1, 2, 3)]
            K = _kmat(e[1], e[2])
            lb = _solve3([[K[j][i] for j in range(3)] for i in range(3)], pb)  # body angular momentum K^-T p_body
            w = _solve3(ja, [lb[i] - pa[i] for i in range(3)])
            q, v = _embed(e[:3], e[3:], _solve3(K, w), [pa[i] / js - w[i] for i in range(3)])
            f.write(r["t"] + "," + ",".join("%.17g" % x for x in q + Mv(v)) + "\n")
    lp = []
    for k in range(len(rows) - 1):
        e = [0.5 * (x + y) for x, y in zip(ang(rows[k]), ang(rows[k + 1]))]
        l = [float(rows[k]["lambda_p_" + c]) for c in ("psi", "th", "ph", "a1", "a2", "a3")]
        lp.append(_embed(e[:3], e[3:], l[:3], l[3:])[1])
    h = s["T"] / s["N"]
    with open(os.path.join(d, "intervals.csv"), "w") as f:
        f.write("k,t_mid," + ",".join("lambda_q_" + n for n in names) + "," + ",".join("lambda_p_" + n for n in names)
                + "\n")
        for k in range(len(lp)):
            a, b = max(k - 1, 0), min(k + 1, len(lp) - 1)
            lq = [-x for x in Mv([(lp[b][i] - lp[a][i]) / ((b - a) * h) for i in range(27)])]
            f.write("%d,%.17g," % (k, (k + 0.5) * h) + ",".join("%.17g" % x for x in lq + lp[k]) + "\n")


def _angular_momentum(s):
    """max over the nodes of |L|, L = C R313 K^-T p_body the spatial angular momentum of the Euler form."""
    worst = 0.0
    for r in s["_rows"]:
        psi, th, ph = (float(r["q_" + c]) for c in ("psi", "th", "ph"))
        K = _kmat(th, ph)
        lb = _solve3([[K[j][i] for j in range(3)] for i in range(3)], [float(r["p_" + c]) for c in ("psi", "th", "ph")])
        worst = max(worst, math.sqrt(sum(x * x for x in _mv(_rot313(psi, th, ph), lb))))
    return worst


def _conserved(s, what, tol):
    check(s["H_spread_relative"] <= tol, "%s: H^d spread %.3g relative" % (what, s["H_spread_relative"]))
    check(abs(s["energy_work_spread"]) <= 1e-8,  # E up to 1e4 along these manoeuvres: 1e-12 relative
          "%s: E - W spread %.3g" % (what, s["energy_work_spread"]))


def t_satellite_euler():
    """The satellite in 3-1-3 Euler angles (rest to rest, final rotor angles free): converges on 1 and 2 ranks (from
    the default guess at N = 20, 40: Newton fails, -hs_strategy auto's direct guess converges),
    H^d and E - W at round-off, the spatial angular momentum (0 at rest) stays 0 to round-off along the discrete
    solution (computed here from the momenta: L = 0 <=> p_body = 0, and the zero-momentum set is invariant for the
    Gonzalez scheme because E does not depend on q there), order 2 +- 0.02 from N = 20, 40, 80, 160, and the
    Richardson limits of (40, 80) and (80, 160) agree to 1e-6 relative; the latter is the independent continuous
    optimum J* (tests/crosscheck/satellite_bvp.py, hs_satellite_ref.J_STAR) to 2e-8 (measured 8.4e-9)."""
    J = {}
    for N, ranks in ((20, 1), (40, 2), (80, 1), (160, 2)):
        direct = ["-hs_initial_guess", "direct"] if N > 40 else []  # saves the default's failed attempts (N <= 40)
        s, _, _ = run(["-problem", EULER, "-N", str(N)] + direct + NO_EXTRA, ranks=ranks)
        if not s or not s["converged"]:
            return check(False, "satellite_euler N = %d on %d ranks: not converged" % (N, ranks))
        _conserved(s, "satellite_euler N = %d" % N, 1e-12)
        Lmax = _angular_momentum(s)
        check(Lmax <= 1e-9, "satellite_euler N = %d: max |L| = %.3g, not 0 to round-off" % (N, Lmax))
        J[N] = s["J"]
    for a in (20, 40):
        o = order(J[a] - J[2 * a], J[2 * a] - J[4 * a])
        check(abs(o - 2) <= 0.02, "satellite_euler: order %.4f from N = %d, %d, %d" % (o, a, 2 * a, 4 * a))
    r1, r2 = (4 * J[80] - J[40]) / 3, (4 * J[160] - J[80]) / 3
    check(rel(r1, r2) <= 1e-6 * abs(r2), "satellite_euler: Richardson limits %.10g (40, 80), %.10g (80, 160)" % (r1, r2))
    check(rel(r2, J_STAR) <= 2e-8, "satellite_euler: Richardson limit %.10g, the continuous J* %.10g" % (r2, J_STAR))


def t_satellite_natural():
    """The satellite in directors (tests/data/satellite_penalty.ocp, 27 coordinates, 21 constraints; the penalty variant)
    from the Euler form's solution mapped to directors (here, stdlib): converges at N = 640 (2 ranks) and 1280
    (1 rank); H^d, E - W and max|Phi| at round-off; its J approaches the limit of the same continuous problem in
    Euler angles (tests/data/satellite_euler_spin.ocp, Richardson of N = 320, 640) at order >= 2 and within 3e-5
    relative at N = 1280 (docs/satellite.md: 1e-6 from N = 1280, 2560)."""
    with tempfile.TemporaryDirectory() as d:
        s, _, _ = run(["-problem", EULER, "-N", "40"] + NO_EXTRA)
        if not s or not s["converged"]:
            return check(False, "satellite_euler N = 40: not converged")
        _natural_guess(s, os.path.join(d, "guess"))
        Jt = {}
        for N in (320, 640):
            st, _, _ = run(["-problem", TWIN, "-N", str(N)] + NO_EXTRA)
            if not st or not st["converged"]:
                return check(False, "satellite_euler_spin N = %d: not converged" % N)
            Jt[N] = st["J"]
        lim = (4 * Jt[640] - Jt[320]) / 3
        J = {}
        for N, ranks, guess in ((640, 2, "guess"), (1280, 1, "o640")):
            s, _, _ = run(["-problem", NATURAL, "-N", str(N), "-hs_init", os.path.join(d, guess)] + NO_EXTRA + TIGHT,
                          ranks=ranks, outdir=os.path.join(d, "o%d" % N))
            if not s or not s["converged"]:
                return check(False, "satellite N = %d on %d ranks: not converged" % (N, ranks))
            _conserved(s, "satellite N = %d" % N, 1e-11)
            c = s["constraints"]
            check(c["max_phi"] <= 1e-12 and c["hidden_interval"] <= 1e-11,
                  "satellite N = %d: max|Phi| %.3g, hidden %.3g" % (N, c["max_phi"], c["hidden_interval"]))
            J[N] = s["J"]
        e1, e2 = J[640] - lim, J[1280] - lim
        check(e2 > 0 and e1 / e2 >= 4, "satellite: errors %.4g, %.4g against the twin's limit %.10g" % (e1, e2, lim))
        check(rel(J[1280], lim) <= 3e-5 * abs(lim), "satellite N = 1280: J^d %.10g, the twin's limit %.10g" % (J[1280], lim))
