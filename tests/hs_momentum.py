"""hamshoot system tests of issue 40, item 4: conserved quantities monitored in the outputs ('invariant NAME: expr'
lines of a problem file, the momenta that problems/bodies.c generates for a free system; docs/output-format.md,
docs/multibody.md "Momentum"). Standard library only."""
import math
import os
import tempfile

import hs_satellite
from hs_util import check, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PLANAR = os.path.join(HERE, "data", "momentum_planar.ocp")
EULER = os.path.join(ROOT, "problems", "satellite_euler.ocp")
NATURAL = os.path.join(ROOT, "problems", "satellite.ocp")
NO_EXTRA = ["-hs_check_extremal", "no"]
TIGHT = ["-hs_snes_roundoff", "1", "-snes_atol", "1e-16"]  # Newton to its round-off level (as hs_satellite.py)


def _col(rows, key):
    return [float(r[key]) for r in rows]


def _vec(r, prefix, name, dim):
    return [float(r[prefix + name + c]) for c in "xyz"[:dim]]


def _cross(a, b):
    if len(a) == 2:
        return [a[0] * b[1] - a[1] * b[0]]
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _sum_qxp(r, vecs, dim):
    """sum_a q_a x p_a over the vector coordinates vecs (names without the component letter): L, independently."""
    out = [0.0] * (3 if dim == 3 else 1)
    for v in vecs:
        c = _cross(_vec(r, "q_", v, dim), _vec(r, "p_", v, dim))
        out = [x + y for x, y in zip(out, c)]
    return out


def _invariants(s, names):
    inv = s.get("invariants", {})
    check(sorted(inv) == sorted(names), "invariants in summary.json: %s, expected %s" % (sorted(inv), sorted(names)))
    return inv


def _planar(N, ranks=1):
    """momentum_planar at N: (summary, the invariant columns, the discrete balance's largest defect, the spread of L)."""
    s, _, _ = run(["-problem", PLANAR, "-N", str(N)] + NO_EXTRA + TIGHT, ranks=ranks)
    check(s is not None and s["converged"], "momentum_planar N = %d on %d ranks: not converged" % (N, ranks))
    if not s or not s["converged"]:
        return None, 0, 0
    inv = _invariants(s, ["P_x", "P_y", "L"])
    rows, h = s["_rows"], s["T"] / N
    # the generated columns against sum q x p recomputed here (centres and directors of both bodies)
    vecs = ["a_", "a_1", "a_2", "b_", "b_1", "b_2"]
    gen = max(abs(float(r["inv_L"]) - _sum_qxp(r, vecs, 2)[0]) for r in rows)
    check(gen <= 1e-13, "momentum_planar N = %d: inv_L differs from sum q x p by %.3g" % (N, gen))
    px = max(abs(float(r["inv_P_x"]) - (float(r["p_a_x"]) + float(r["p_b_x"]))) for r in rows)
    check(px <= 1e-14, "momentum_planar N = %d: inv_P_x differs from p_a_x + p_b_x by %.3g" % (N, px))
    # mathematics: x0 turns rigidly at omega = 1, so L0 = sum m |phi|^2 + E |d|^2 = 1.76, P0 = (-0.9, 0); the elbow
    # torque has no component on the centres and the joint is translation invariant: P exactly conserved
    check(abs(float(rows[0]["inv_L"]) - 1.76) <= 1e-14, "momentum_planar: L(0) = %s, not 1.76" % rows[0]["inv_L"])
    for k, want in (("P_x", -0.9), ("P_y", 0.0)):
        check(abs(inv[k]["min"] - want) <= 1e-13 and abs(inv[k]["max"] - want) <= 1e-13,
              "momentum_planar N = %d: %s in [%.17g, %.17g], not %g" % (N, k, inv[k]["min"], inv[k]["max"], want))
    # the discrete balance: L_{k+1} - L_k = h sum_a qbar_a x (B(qbar) u)_a = h u/2 (|b1|^2 + |b2|^2 - |a1|^2 - |a2|^2)
    # at the midpoints (the constraint forces G(qbar)^T gamma have no moment: Phi is rotation invariant)
    worst = 0.0
    for k in range(N):
        mid = lambda v: [0.5 * (x + y) for x, y in zip(_vec(rows[k], "q_", v, 2), _vec(rows[k + 1], "q_", v, 2))]  # noqa
        sq = lambda v: sum(x * x for x in mid(v))  # noqa: E731
        dL = h * float(rows[k]["u1"]) * 0.5 * (sq("b_1") + sq("b_2") - sq("a_1") - sq("a_2"))
        worst = max(worst, abs(float(rows[k + 1]["inv_L"]) - float(rows[k]["inv_L"]) - dL))
    check(worst <= 1e-13, "momentum_planar N = %d: the discrete angular momentum balance off by %.3g" % (N, worst))
    return s, worst, inv["L"]["spread"]


def t_momentum_planar():
    """A free planar system of two hinged bodies (tests/data/momentum_planar.ocp): problems/bodies.c generates P_x, P_y
    and L; each generated column equals its formula recomputed here; L(0) = 1.76 and P = (-0.9, 0) (mathematics);
    P is constant to round-off; L drifts only by the affine torque's moment at the midpoint directors (the discrete
    balance, predicted here from the controls, holds to 1e-13), which is O(h^2): the spread falls 3.5 to 4.5 times
    from N = 20 to 40; the same spreads on 2 ranks (the reduction over the ranks)."""
    s20, _, l20 = _planar(20)
    s40, _, l40 = _planar(40)
    s2, _, l2 = _planar(20, ranks=2)
    if not (s20 and s40 and s2):
        return
    check(l20 > 0 and 3.5 <= l20 / l40 <= 4.5, "momentum_planar: L spread %.3g, %.3g (N = 20, 40), not O(h^2)" % (l20, l40))
    check(abs(l2 - l20) <= 1e-12 * l20, "momentum_planar: L spread %.17g on 2 ranks, %.17g on 1" % (l2, l20))


def t_momentum_satellite():
    """The satellite's angular momentum as the files' invariants (docs/satellite.md). Euler form, N = 40: L_x, L_y,
    L_z (C R313 K^-T p_body by hand) at round-off, as hs_satellite's independent stdlib L. Directors
    (problems/satellite.ocp, L = sum q x p over the nine directors) at N = 160 and 320 from the Euler solution mapped:
    L(0) = 0 (rest), every column equals sum q x p recomputed, the discrete balance L_{k+1} - L_k = h sum_k u_k
    (e1 x e2 - d_i x d_j) at the midpoints holds to round-off, and the drift is O(h^2) (max |L| ratio 3.5 to 4.5)."""
    s, _, _ = run(["-problem", EULER, "-N", "40", "-hs_initial_guess", "direct"] + NO_EXTRA)
    if not (s and s["converged"]):
        return check(False, "satellite_euler N = 40: not converged")
    inv = _invariants(s, ["L_x", "L_y", "L_z"])
    worst = max(max(abs(v["min"]), abs(v["max"])) for v in inv.values())
    check(worst <= 1e-9, "satellite_euler N = 40: |L| up to %.3g from the invariants" % worst)
    ind = hs_satellite._angular_momentum(s)
    check(ind <= 1e-9, "satellite_euler N = 40: |L| up to %.3g (stdlib)" % ind)
    lmax = {}
    with tempfile.TemporaryDirectory() as d:
        hs_satellite._natural_guess(s, os.path.join(d, "g"))
        for N in (160, 320):
            sn, _, _ = run(["-problem", NATURAL, "-N", str(N), "-hs_init", os.path.join(d, "g", "trajectory.csv")]
                           + NO_EXTRA + TIGHT)
            if not (sn and sn["converged"]):
                return check(False, "satellite N = %d: not converged" % N)
            lmax[N] = _satellite_balance(sn, N)
    check(3.5 <= lmax[160] / lmax[320] <= 4.5, "satellite: max |L| %.3g, %.3g at N = 160, 320: not O(h^2)"
          % (lmax[160], lmax[320]))


def _satellite_balance(s, N):
    """Checks one directors solution's L columns and discrete balance; returns max |L|."""
    _invariants(s, ["L_x", "L_y", "L_z"])
    rows, h = s["_rows"], s["T"] / N
    vecs = ["d1", "d2", "d3"] + ["r%d%d" % (k, b) for k in (1, 2, 3) for b in (1, 2)]
    L = [[float(r["inv_L_" + c]) for c in "xyz"] for r in rows]
    gen = max(max(abs(x - y) for x, y in zip(L[k], _sum_qxp(r, vecs, 3))) for k, r in enumerate(rows))
    check(gen <= 1e-10, "satellite N = %d: inv_L differs from sum q x p by %.3g" % (N, gen))
    check(max(abs(x) for x in L[0]) <= 1e-12, "satellite N = %d: L(0) = %s, not 0 (rest)" % (N, L[0]))
    worst, cyc = 0.0, ((2, 3), (3, 1), (1, 2))
    for k in range(N):
        mid = lambda v: [0.5 * (x + y) for x, y in zip(_vec(rows[k], "q_", v, 3), _vec(rows[k + 1], "q_", v, 3))]  # noqa
        dL = [0.0, 0.0, 0.0]
        for r, (i, j) in enumerate(cyc):
            u = float(rows[k]["u%d" % (r + 1)])
            m = [a - b for a, b in zip(_cross(mid("r%d1" % (r + 1)), mid("r%d2" % (r + 1))),
                                       _cross(mid("d%d" % i), mid("d%d" % j)))]
            dL = [x + h * u * y for x, y in zip(dL, m)]
        worst = max(worst, max(abs(L[k + 1][c] - L[k][c] - dL[c]) for c in range(3)))
    check(worst <= 1e-9, "satellite N = %d: the discrete angular momentum balance off by %.3g" % (N, worst))
    print("satellite N = %d: max |L| %.4g, balance defect %.3g, columns vs sum q x p %.3g"
          % (N, max(math.sqrt(sum(x * x for x in l)) for l in L), worst, gen))
    return max(math.sqrt(sum(x * x for x in l)) for l in L)


def t_momentum_errors():
    """'invariant' lines that are wrong are refused at their line and column: the time t in one, an unknown name, a
    name given twice, more than HS_MAX_INVARIANTS (16)."""
    base = open(os.path.join(ROOT, "problems", "kepler.ocp")).read()
    cases = [("invariant A: x*p_y + t\n", ":14:22: invariant A: the time t is allowed only"),
             ("invariant A: x*p_q\n", ":14:16: invariant A: unknown symbol 'p_q'"),
             ("invariant A: x\ninvariant A: y\n", ":15:11: invariant: the name 'A' is given twice"),
             ("".join("invariant A%d: x\n" % i for i in range(17)), ":30:11: invariant A16: at most 16 invariants")]
    with tempfile.TemporaryDirectory() as d:
        for i, (extra, want) in enumerate(cases):
            path = os.path.join(d, "bad%d.ocp" % i)
            with open(path, "w") as f:
                f.write(base + extra)
            _, out, _ = run(["-problem", path], expect_rc=1)
            check(want in out, "invariant error %d: expected '%s' in: %s" % (i, want, out.strip()[:300]))
