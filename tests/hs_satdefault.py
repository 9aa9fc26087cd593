"""hamshoot system tests of the geodesic frame guess (issue 40; docs/constrained.md, "The geodesic frame guess";
docs/problem-format.md, "Frames"): the satellite rest to rest in directors (problems/satellite.ocp, whose
'frame' lines name the main body's frame and the rotors') converges from hamshoot's default guess. Standard library
only.
"""
import math
import os
import tempfile

from hs_satellite import _natural_guess
from hs_satellite_rest import EULER, NO_EXTRA, SATELLITE, _round_off
from hs_util import check, read_rows, rel, run

N_TARGET = (1.0 / math.sqrt(14), 2.0 / math.sqrt(14), 3.0 / math.sqrt(14))


def _frame(row, prefix, cols):
    """The 3 x 3 matrix whose columns are the directors named prefix + cols[j] + x, y, z (R[r][j])."""
    return [[float(row[prefix + c + a]) for c in cols] for a in "xyz"]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def t_satdefault_guess():
    """The guess itself (-snes_max_it 0, N = 20): at every node the main body's frame is the rotation by s pi about
    n = (1, 2, 3)/sqrt(14) (the geodesic to the target, a half turn), s = 3 tau^2 - 2 tau^3, to 1e-12, each frame
    orthonormal to 1e-12, each rotor's third director its axis d_k; the angular momentum sum q x p of the guess's
    momenta 0 to 1e-9 of sum |q||p| (the rotors' rates chosen to keep it) and p = 0 at both ends; summary.json's
    initial_guess says where it came from. A 'frame' line with directors that are not orthonormal, or with 8 names, is
    refused with a clear message."""
    names = ["d1", "d2", "d3"]
    with tempfile.TemporaryDirectory() as d:
        s, _, _ = run(["-problem", SATELLITE, "-N", "20", "-snes_max_it", "0", "-hs_strategy", "newton"] + NO_EXTRA,
                      outdir=os.path.join(d, "g"), expect_rc=None)
        rows = read_rows(os.path.join(d, "g"))
        check(s.get("initial_guess") == "frame geodesic, implied costates", "initial_guess %r" % s.get("initial_guess"))
        worst = {"geodesic": 0, "ortho": 0, "L": 0, "ends": 0}
        K = [[0, -N_TARGET[2], N_TARGET[1]], [N_TARGET[2], 0, -N_TARGET[0]], [-N_TARGET[1], N_TARGET[0], 0]]
        KK = [[sum(K[i][l] * K[l][j] for l in range(3)) for j in range(3)] for i in range(3)]
        for k, r in enumerate(rows):
            tau = k / 20.0
            a = math.pi * tau * tau * (3 - 2 * tau)
            R = _frame(r, "q_", names)
            Rx = [[(i == j) + math.sin(a) * K[i][j] + (1 - math.cos(a)) * KK[i][j] for j in range(3)] for i in range(3)]
            worst["geodesic"] = max(worst["geodesic"], max(abs(R[i][j] - Rx[i][j]) for i in range(3) for j in range(3)))
            for kk in range(3):
                F = _frame(r, "q_", ["r%d1" % (kk + 1), "r%d2" % (kk + 1), "d%d" % (kk + 1)])
                for M in (R, F):
                    for i in range(3):
                        for j in range(3):
                            dot = sum(M[c][i] * M[c][j] for c in range(3))
                            worst["ortho"] = max(worst["ortho"], abs(dot - (i == j)))
                    c = _cross([M[x][0] for x in range(3)], [M[x][1] for x in range(3)])
                    worst["ortho"] = max(worst["ortho"], max(abs(c[x] - M[x][2]) for x in range(3)))
            coords = [k2[2:-1] for k2 in r if k2.startswith("q_") and k2.endswith("x")]
            L, size = [0, 0, 0], 0
            for c in coords:
                q = [float(r["q_" + c + a]) for a in "xyz"]
                p = [float(r["p_" + c + a]) for a in "xyz"]
                L = [x + y for x, y in zip(L, _cross(q, p))]
                size += math.sqrt(sum(x * x for x in q)) * math.sqrt(sum(x * x for x in p))
            worst["L"] = max(worst["L"], max(abs(x) for x in L) / max(size, 1e-300) if size else 0)
            if k in (0, 20):
                worst["ends"] = max(worst["ends"], max(abs(float(r[c])) for c in r if c.startswith("p_")))
        print("frame guess, N = 20: %s" % worst)
        check(worst["geodesic"] <= 1e-12, "the main body's guess is off the geodesic by %.3g" % worst["geodesic"])
        check(worst["ortho"] <= 1e-12, "a frame of the guess is off orthonormal by %.3g" % worst["ortho"])
        check(worst["L"] <= 1e-9, "the guess's angular momentum: %.3g relative" % worst["L"])
        check(worst["ends"] == 0, "the guess's end momenta: %.3g" % worst["ends"])
        text = open(SATELLITE).read()
        bad = os.path.join(d, "bad.ocp")
        with open(bad, "w") as f:
            f.write(text.replace("frame main: d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z",
                                 "frame main: d1x, d1y, d1z, d3x, d3y, d3z, d2x, d2y, d2z"))
        _, out, rc = run(["-problem", bad, "-N", "4"], expect_rc=None)
        check(rc != 0 and "frame main" in out and "right-handed" in out, "a left-handed frame: rc %d, %s" % (rc, out[-300:]))
        with open(bad, "w") as f:
            f.write(text.replace("frame rotor1: r11x, r11y, r11z, r12x, r12y, r12z, d1x, d1y, d1z",
                                 "frame rotor1: r11x, r11y, r11z, r12x, r12y, r12z, d1x, d1y"))
        _, out, rc = run(["-problem", bad, "-N", "4"], expect_rc=None)
        check(rc != 0 and "frame rotor1: 8 names, not 9" in out, "8 names: rc %d, %s" % (rc, out[-300:]))


def t_satdefault_rest():
    """problems/satellite.ocp at N = 20 from the default guess (the geodesic frame guess with implied costates,
    default options) on 2 ranks: converges; H^d, E - W, L, max|Phi| and beta at round-off; J^d equal to the run from
    the Euler form's solution mapped to directors (tests/hs_satellite.py's _natural_guess, 1 rank) to 1e-9 relative
    (the same discrete solution reached from an independent start)."""
    with tempfile.TemporaryDirectory() as d:
        s, _, _ = run(["-problem", SATELLITE, "-N", "20"] + NO_EXTRA, ranks=2)
        if not s or not s["converged"]:
            return check(False, "satellite_rest N = 20 from the default guess on 2 ranks: not converged")
        check(s.get("initial_guess") == "frame geodesic, implied costates", "initial_guess %r" % s.get("initial_guess"))
        _round_off(s, "satellite_rest N = 20 (default guess, 2 ranks)", 1e3)
        e, _, _ = run(["-problem", EULER, "-N", "20"] + NO_EXTRA)
        if not e or not e["converged"]:
            return check(False, "satellite_euler N = 20: not converged")
        m = os.path.join(d, "mapped")
        _natural_guess(e, m)
        r, _, _ = run(["-problem", SATELLITE, "-N", "20", "-hs_init", m, "-hs_strategy", "newton"] + NO_EXTRA)
        if not r or not r["converged"]:
            return check(False, "satellite_rest N = 20 from the mapped Euler solution: not converged")
        print("satellite_rest N = 20: J^d %.13g (default guess, 2 ranks, %d Newton its), %.13g (mapped Euler), %.2g rel."
              % (s["J"], s.get("newton_iterations", -1), r["J"], rel(s["J"], r["J"])))
        check(rel(s["J"], r["J"]) <= 1e-9, "satellite_rest N = 20: J^d %.12g and %.12g" % (s["J"], r["J"]))
