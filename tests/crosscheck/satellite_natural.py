#!/usr/bin/env python3
"""The satellite of tests/crosscheck/satellite_euler.py in natural coordinates (directors), docs/satellite.md:

    satellite_natural.py --write FILE       writes tests/data/satellite_penalty.ocp (the penalty variant)
    satellite_natural.py --momentum DIR     the total angular momentum along a solution (max |L| over the nodes)

Coordinates (27): the main body's directors d1, d2, d3 and, for rotor k with spin axis d_k ((i, j, k) cyclic), its
two transverse directors e1 = rk1, e2 = rk2 (its third director is d_k itself). The joints are linear and are
eliminated: the system's centre of mass is the origin (no external force, at rest), so the main body's centre is
phi = -(m_r/m_tot) sum_k l_k d_k and rotor k's centre phi + l_k d_k. Constant mass matrix; 21 quadratic constraints
(6 for the main body, 5 per rotor: |e1| = |e2| = 1, e1.e2 = e1.d_k = e2.d_k = 0); B(q) linear in the directors:
the torque u_k does the virtual work u_k (dtheta_rotor - dtheta_body).d_k with
dtheta_rotor.d_k = 1/2 (e2.de1 - e1.de2) and dtheta_body.d_k = 1/2 (d_j.dd_i - d_i.dd_j) on the constraints.
"""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from satellite_euler import EB, ES, ET, L, MB, MR, T, target  # noqa: E402

# The rotor angles at T of the Euler form's solution: Richardson extrapolation of N = 320 and 640, whose
# differences (5.8e-4, 1.5e-4, ...) shrink at order 2; the limit is good to ~1e-7 (docs/satellite.md).
A_T = (-7.1672100, -16.7365358, -21.4649729)
W = 1e6  # the weight of the rotors' terminal spin momenta (docs/satellite.md)
CYC = ((1, 2), (2, 0), (0, 1))  # (i, j) for k = 0, 1, 2: d_i x d_j = d_k


def names():
    q = ["d%d%s" % (a + 1, c) for a in range(3) for c in "xyz"]
    q += ["r%d%d%s" % (k + 1, b + 1, c) for k in range(3) for b in range(2) for c in "xyz"]
    return q


def mass():
    """M = blocks (scalar x I3) over the 9 directors: main body's d1..d3 then rotors' (e1, e2)."""
    mtot = MB + 3 * MR
    mu = MR / mtot
    W = MB * np.outer(mu * np.array(L), mu * np.array(L))
    for k in range(3):
        c = -mu * np.array(L)
        c[k] += L[k]
        W += MR * np.outer(c, c)
    W += np.diag([EB[a] + ES for a in range(3)])
    S = np.zeros((9, 9))
    S[:3, :3] = W
    for b in range(3, 9):
        S[b, b] = ET
    return np.kron(S, np.eye(3))


def vec(prefix):
    return ["%s%s" % (prefix, c) for c in "xyz"]


def dot(a, b):
    return " + ".join("%s*%s" % (x, y) for x, y in zip(a, b))


def constraints():
    d = [vec("d%d" % (a + 1)) for a in range(3)]
    c = ["0.5*(%s - 1)" % dot(d[a], d[a]).replace("*", "^2", 1).replace("*" + d[a][0], "") for a in range(3)]
    c = ["0.5*(%s^2 + %s^2 + %s^2 - 1)" % tuple(d[a]) for a in range(3)]
    c += [dot(d[0], d[1]), dot(d[0], d[2]), dot(d[1], d[2])]
    for k in range(3):
        e1, e2 = vec("r%d1" % (k + 1)), vec("r%d2" % (k + 1))
        c += ["0.5*(%s^2 + %s^2 + %s^2 - 1)" % tuple(e1), "0.5*(%s^2 + %s^2 + %s^2 - 1)" % tuple(e2), dot(e1, e2),
              dot(e1, d[k]), dot(e2, d[k])]
    return c


def control_matrix():
    """B as a 27 x 3 table of strings."""
    q = names()
    B = [["0"] * 3 for _ in q]
    idx = {n: r for r, n in enumerate(q)}

    def put(target, source, sign, k):
        for t, s in zip(vec(target), vec(source)):
            B[idx[t]][k] = "%s0.5*%s" % ("" if sign > 0 else "-", s)
    for k, (i, j) in enumerate(CYC):
        put("r%d1" % (k + 1), "r%d2" % (k + 1), 1, k)
        put("r%d2" % (k + 1), "r%d1" % (k + 1), -1, k)
        put("d%d" % (i + 1), "d%d" % (j + 1), -1, k)
        put("d%d" % (j + 1), "d%d" % (i + 1), 1, k)
    return B


def end_configuration(R, a):
    """q for the main body at orientation R (directors its columns) and rotor angles a."""
    d = [R[:, b] for b in range(3)]
    q = list(np.concatenate(d))
    for k, (i, j) in enumerate(CYC):
        q += list(np.cos(a[k]) * d[i] + np.sin(a[k]) * d[j]) + list(-np.sin(a[k]) * d[i] + np.cos(a[k]) * d[j])
    return q


HEADER = """# The satellite of Siebert's thesis sections 4.3 and 6.3 (Leyendecker et al., DMOCC) in natural coordinates
# (directors), docs/satellite.md; the same system as problems/satellite_euler.ocp. 27 coordinates: the main body's
# directors d1, d2, d3 and each rotor's transverse directors rk1, rk2 (rotor k spins about d_k, its third director).
# The joints (rotor centre = main body's centre + l_k d_k, rotor axis = d_k) and the centre of mass (at the origin:
# no external force, rest) are linear and eliminated, so the centres are linear in the directors and M is constant.
# 21 quadratic constraints: the main body's 6 orthonormality conditions, 5 per rotor (|e1| = |e2| = 1, e1.e2 = 0,
# e1.d_k = e2.d_k = 0). The motor torque u_k does the work u_k (dtheta_rotor - dtheta_body).d_k, written on the
# constraints as 1/2 (e2.de1 - e1.de2) - 1/2 (d_j.dd_i - d_i.dd_j): B linear in the directors.
# VARIANT (docs/satellite.md): the closed-form class takes free final coordinates only with all momenta free, and
# fixing all momenta at T fixes the angular momentum, which these torques conserve only to O(h^2): no solution near
# the Euler form's. So: all coordinates fixed at T (the final rotor angles those of the Euler form's solution), all
# momenta free, and rest imposed by the terminal penalty w/2 sum_k s_k^2 on the rotors' spin momenta
# s_k = p_rk1.rk2 - p_rk2.rk1. Its Euler-angle twin is tests/data/satellite_euler_spin.ocp (the same continuous
# problem); as w grows both tend to the rest-to-rest optimum (J(w) = J - 0.86e6/w, measured). Newton needs a guess
# off rest (at rest the linearization loses three directions: the nonholonomic reorientation), e.g. the Euler
# solution mapped by tests/crosscheck/satellite_natural.py --guess, and N >= 160 (the rotors turn up to 6.4 rad/s).
# Generated by tests/crosscheck/satellite_natural.py --write; do not edit by hand.
"""


def terminal_cost():
    """w/2 sum_k s_k^2, s_k = p_e1.e2 - p_e2.e1 the momentum conjugate to rotor k's angle (its spin momentum: the
    Euler form's p_a_k; e1 = cos a d_i + sin a d_j, e2 = -sin a d_i + cos a d_j, so de1/da = e2, de2/da = -e1)."""
    s = []
    for k in range(3):
        e1, e2 = vec("r%d1" % (k + 1)), vec("r%d2" % (k + 1))
        s.append("(%s - (%s))^2" % (dot(["p_" + x for x in e1], e2), dot(["p_" + x for x in e2], e1)))
    return "0.5*w*(" + " + ".join(s) + ")"


def invariants(q):
    """The spatial angular momentum L = sum_a q_a x p_a over the nine director vectors (docs/satellite.md: the kinetic
    energy is 1/2 sum S_ab q_a'.q_b', invariant under a rotation of all of them, and L is its Noether momentum; it equals
    sum_bodies m r x r' + sum E d x d' since every material point is linear in the directors)."""
    vecs = [q[3 * a:3 * a + 3] for a in range(len(q) // 3)]
    out = []
    for l in range(3):
        i, j = (l + 1) % 3, (l + 2) % 3
        out.append("invariant L_%s: " % "xyz"[l] +
                   " + ".join("%s*p_%s - %s*p_%s" % (v[i], v[j], v[j], v[i]) for v in vecs))
    return out


def write(path):
    q = names()
    M = mass()
    B = control_matrix()
    x0 = end_configuration(np.eye(3), (0, 0, 0)) + [0] * 27
    xT = end_configuration(target(), A_T) + [0] * 27
    g = lambda v: "%.17g" % v  # noqa: E731
    lines = [HEADER + "problem: satellite", "param w: %g in (0, inf)" % W, "coordinates: " + ", ".join(q), "controls: 3",
             "mass: " + ", ".join(g(x) for x in M.flatten()), "potential: 0",
             "constraints: " + ", ".join(constraints()), "B: " + ", ".join(x for row in B for x in row),
             "R: 1, 0, 0,  0, 1, 0,  0, 0, 1", "T: %g" % T, "N: 20", "x0: " + ", ".join(g(x) for x in x0),
             "xT: " + ", ".join(g(x) for x in xT[:27]) + ", " + ", ".join(["*"] * 27),
             "terminal_cost: " + terminal_cost()] + invariants(q)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def momentum(outdir):
    """max |L| over the nodes, L = sum over the 9 directors of d x p_d (the centres' terms are in M's coupling:
    L = sum_a q_a x p_a holds for any constant M = S kron I3, since the velocities are M^-1 p)."""
    import csv
    rows = list(csv.DictReader(open(outdir + "/trajectory.csv")))
    q = names()
    worst = 0.0
    for r in rows:
        Lv = np.zeros(3)
        for b in range(9):
            x = np.array([float(r["q_" + n]) for n in q[3 * b:3 * b + 3]])
            p = np.array([float(r["p_" + n]) for n in q[3 * b:3 * b + 3]])
            Lv += np.cross(x, p)
        worst = max(worst, np.linalg.norm(Lv))
    print("max |L| over %d nodes: %.3g" % (len(rows), worst))
    return worst


def embed(eul, a, deul=None, da=None):
    """q of the natural form at Euler angles eul and rotor angles a; with (deul, da), also the tangent vector
    J (deul, da), J = dq/d(eul, a): the velocities, or the costates lambda^p (which map as tangent vectors)."""
    from satellite_euler import C, rot313
    R = C @ rot313(*eul)
    q = np.array(end_configuration(R, a))
    if deul is None:
        return q
    psi, th, ph = eul
    w = np.array([deul[0] * np.sin(th) * np.sin(ph) + deul[1] * np.cos(ph),
                  deul[0] * np.sin(th) * np.cos(ph) - deul[1] * np.sin(ph), deul[0] * np.cos(th) + deul[2]])
    dd = [R @ np.cross(w, np.eye(3)[b]) for b in range(3)]
    d = [R[:, b] for b in range(3)]
    v = list(np.concatenate(dd))
    for k, (i, j) in enumerate(CYC):
        c, s_ = np.cos(a[k]), np.sin(a[k])
        v += list(da[k] * (-s_ * d[i] + c * d[j]) + c * dd[i] + s_ * dd[j])
        v += list(da[k] * (-c * d[i] - s_ * d[j]) - s_ * dd[i] + c * dd[j])
    return q, np.array(v)


def guess(euler_dir, out):
    """An -hs_init guess (out/trajectory.csv, out/intervals.csv) from a solution of the Euler form: states mapped
    (p = M J qdot_Euler, qdot_Euler = M_Euler^-1 p_Euler through the locked inertia), lambda^p = J lambda^p_Euler,
    lambda^q = -M (lambda^p)' by differences in time."""
    import csv
    import os
    from satellite_euler import locked_inertia
    JA, Js = locked_inertia()
    rows = list(csv.DictReader(open(euler_dir + "/trajectory.csv")))
    ints = list(csv.DictReader(open(euler_dir + "/intervals.csv")))
    M = mass()
    q = names()
    os.makedirs(out, exist_ok=True)
    with open(out + "/trajectory.csv", "w") as f:
        f.write("t," + ",".join("q_" + n for n in q) + "," + ",".join("p_" + n for n in q) + "\n")
        for r in rows:
            eul = [float(r["q_" + k]) for k in ("psi", "th", "ph")]
            a = [float(r["q_a%d" % k]) for k in (1, 2, 3)]
            pb = np.array([float(r["p_" + k]) for k in ("psi", "th", "ph")])
            pa = np.array([float(r["p_a%d" % k]) for k in (1, 2, 3)])
            psi, th, ph = eul
            K = np.array([[np.sin(th) * np.sin(ph), np.cos(ph), 0], [np.sin(th) * np.cos(ph), -np.sin(ph), 0],
                          [np.cos(th), 0, 1]])
            w = np.linalg.solve(JA - Js * np.eye(3), np.linalg.solve(K.T, pb) - pa)
            deul = np.linalg.solve(K, w)
            qn, v = embed(eul, a, deul, pa / Js - w)
            f.write(r["t"] + "," + ",".join("%.17g" % x for x in np.concatenate([qn, M @ v])) + "\n")
    lp_nat = []
    for k, r in enumerate(ints):
        e = [0.5 * (float(rows[k]["q_" + c]) + float(rows[k + 1]["q_" + c])) for c in
             ("psi", "th", "ph", "a1", "a2", "a3")]
        lp = [float(r["lambda_p_" + c]) for c in ("psi", "th", "ph", "a1", "a2", "a3")]
        lp_nat.append(embed(e[:3], e[3:], lp[:3], lp[3:])[1])
    lp_nat = np.array(lp_nat)
    h = float(ints[1]["t_mid"]) - float(ints[0]["t_mid"])
    lq_nat = -(M @ np.gradient(lp_nat, h, axis=0).T).T  # lambda^p' = -M^-1 lambda^q
    with open(out + "/intervals.csv", "w") as f:
        f.write("k,t_mid," + ",".join("lambda_q_" + n for n in q) + "," + ",".join("lambda_p_" + n for n in q) + "\n")
        for k, r in enumerate(ints):
            f.write("%d,%s," % (k, r["t_mid"]) + ",".join("%.17g" % x for x in np.concatenate([lq_nat[k], lp_nat[k]]))
                    + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2])
    elif sys.argv[1] == "--guess":
        guess(sys.argv[2], sys.argv[3])
    else:
        momentum(sys.argv[2])
